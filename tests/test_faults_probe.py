"""`irqlab probe` on a hostile host tree: huge ranges, looping symbolic links, FIFOs, binary
garbage, unreadable files, directories and enormous files where a value should be. Each probe
runs in a process of its own with a time limit, so a read that blocks fails the test instead
of hanging it, and reports its peak memory: every one ends with a scenario that passes the
loader, its notes naming what was wrong, in bounded time and memory — never a traceback."""

from __future__ import annotations

import gzip
import json
import os
import random
import shutil
import socket
import stat
import struct
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import irqlab
from irqlab.ops.probe import (
    MAX_CPUS,
    limits,
    napi_get,
    parse_napis,
    parse_rss_table,
    probe,
)

pytestmark = [
    pytest.mark.skipif(
        os.name != "posix" or not sys.platform.startswith("linux"),
        reason="FIFOs, sockets, /proc/self/mem and peak RSS in kB: a Linux host",
    ),
    # real processes, each test seconds long: outside the quick check (-m 'not slow')
    pytest.mark.slow,
]

TREES = Path(__file__).resolve().parent / "data" / "probe"
IFACE = "enp3s0f0"  # the ixgbe tree's interface: every case damages a copy of it
DEV = f"sys/class/net/{IFACE}"

#: A probe of a damaged tree takes about what one of a sound tree does (well under a second
#: here): these bounds leave room for a loaded machine, not for a read that grows with the
#: damage (10^8 CPUs took 18 s and 3.8 GB).
SECONDS = 20.0
PEAK_MB = 400.0
#: Each child's address space: a regression that expands a range again fails with a
#: MemoryError instead of taking the machine's memory (a probe needs about 30 MB of it).
ADDRESS_SPACE = 2 << 30


def child(code: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``code`` run by a Python of its own with ``args``, its memory capped and its time
    limited (a read that blocks runs into the timeout and fails the test)."""

    import resource  # POSIX only: the module is skipped elsewhere

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        preexec_fn=cap,
    )


def in_child(code: str, *args: str) -> object:
    """What ``code`` (its last line an expression) gives, computed by :func:`child`."""
    *body, last = code.strip().splitlines()
    script = "\n".join(["import json, sys", *body, f"print(json.dumps({last}))"])
    r = child(script, *args)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout)


CHILD = """
import io, json, re, sys, time, tomllib
start = time.monotonic()
from rich.console import Console
from irqlab.ops.probe import probe, summary
from irqlab.scenario import resolve
p = probe(
    sys.argv[2] or None,
    root=sys.argv[1],
    interval_s=float(sys.argv[3]),
    ethtool=sys.argv[4] or None,
)
text = p.toml()
tomllib.loads(text)
resolve(p.scenario())
shown = io.StringIO()
Console(file=shown, width=100, force_terminal=False).print(*summary(p))
print(json.dumps({
    "seconds": time.monotonic() - start,
    # this process's own peak (ru_maxrss would count the parent it was forked from)
    "peak_mb": int(re.search(r"VmHWM:\\s*(\\d+)", open("/proc/self/status").read())[1]) / 1024,
    "notes": p.notes,
    "scenario": p.scenario(),
    "toml": text,
    "summary": shown.getvalue(),
}))
"""


def probed(tree: Path, iface: str = IFACE, interval: float = 0.0, ethtool: str = "") -> dict:
    """The probe of ``tree`` in a :func:`child`: its notes, scenario, file, summary, time and
    peak memory. ``iface`` "": the default route's."""
    r = child(CHILD, str(tree), iface, str(interval), ethtool)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    out = json.loads(r.stdout)
    assert out["seconds"] < SECONDS, out["seconds"]
    assert out["peak_mb"] < PEAK_MB, out["peak_mb"]
    return out


def noted(out: dict, *fragments: str) -> str:
    """The note holding every fragment (the test fails listing the notes if none does)."""
    for note in out["notes"]:
        if all(f in note for f in fragments):
            return note
    raise AssertionError(f"no note with {fragments}: {out['notes']}")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    target = tmp_path / "host"
    shutil.copytree(TREES / "ixgbe", target, symlinks=True)
    return target


def read_first(tree: Path, path: str) -> None:
    """Removes what the probe reads before ``path``, so that it reads ``path``: the CPU list
    before /proc/cpuinfo, the kernel's config before /proc/config.gz."""
    if path == "proc/cpuinfo":
        (tree / "sys/devices/system/cpu/online").unlink()
        shutil.rmtree(tree / "sys/devices/system/cpu/cpu0/cpufreq")
    if path == "proc/config.gz":
        (tree / "boot/config-5.4.0-150-generic").unlink()


def replace(path: Path) -> Path:
    """``path`` removed (a file, a symbolic link or a directory), ready to be made anew."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


# --- huge ranges ----------------------------------------------------------------------------


def test_a_cpu_list_of_a_hundred_million_cpus_is_a_note_not_18_s_and_4_gb(tree):
    (tree / "sys/devices/system/cpu/online").write_text("0-99999999\n")
    out = probed(tree)
    noted(out, "/sys/devices/system/cpu/online: cannot parse '0-99999999'", f"{MAX_CPUS} CPUs")
    assert out["scenario"]["host.cores"] == 8  # from /proc/cpuinfo instead


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("'0-4294967295'", True),
        ("'0-8191,0-8191,8192'", True),  # 8193 CPUs
        ("'5-3'", True),
        ("'-1'", True),
        ("'0-'", True),
        ("'1' * 5000", True),
        ("',,' * 100000", False),  # a million empty parts: no CPU, at once
        ("'0-3:1/2'", True),
        ("'\\u0663'", True),  # an Arabic-Indic digit: str.isdigit() says yes, a CPU list no
    ],
)
def test_cpu_lists_that_are_not_are_refused_in_bounded_time(text, refused):
    result, seconds = in_child(
        f"""
import time
from irqlab.ops.probe import parse_cpulist
start = time.monotonic()
try:
    said = len(parse_cpulist({text}))
except ValueError as e:
    said = str(e)
[said, time.monotonic() - start]
"""
    )
    assert isinstance(result, str) if refused else result == 0, result
    assert seconds < 2


def test_huge_affinity_lists_leave_the_vectors_unpinned_with_a_note(tree):
    for irq in range(125, 134):
        for name in ("smp_affinity_list", "effective_affinity_list"):
            (tree / f"proc/irq/{irq}/{name}").write_text("0-4294967295\n")
    out = probed(tree)
    noted(out, "an IRQ's affinity is unreadable: nic.irq_affinity left empty")
    assert "nic.irq_affinity" not in out["scenario"]


def test_more_irqs_vectors_napis_and_rss_entries_than_the_limits_are_cut_with_a_note(
    tree, monkeypatch
):
    # the limits, made small so that a tree can pass them; the notes name them
    for name, value in (
        ("MAX_IRQS", 20),
        ("MAX_VECTORS", 4),
        ("MAX_NAPIS", 3),
        ("MAX_RSS_ENTRIES", 64),
        ("MAX_DIR_ENTRIES", 5),
    ):
        monkeypatch.setattr(limits, name, value)
    ints = (tree / "proc/interrupts").read_text()
    extra = "".join(
        f" {900 + k}:  1  2  3  4  5  6  7  8  PCI-MSI 9-edge  x{k}\n" for k in range(30)
    )
    (tree / "proc/interrupts").write_text(ints + extra)
    (tree / "proc/sys/kernel/osrelease").write_text("6.13.7\n")
    (tree / "netlink" / IFACE).mkdir(parents=True)
    napis = [{"id": k, "irq-suspend-timeout": 0} for k in range(4)]
    (tree / "netlink" / IFACE / "napi-get").write_text(json.dumps(napis))
    p = probe(IFACE, root=tree, interval_s=0)
    assert any("more than 20 IRQs (MAX_IRQS)" in n for n in p.notes), p.notes
    assert len(p.vectors) == 4
    assert any("(MAX_VECTORS) not read" in n for n in p.notes), p.notes
    assert any("napi-get: more than 3 NAPIs (MAX_NAPIS)" in n for n in p.notes), p.notes
    assert any("more than 64 entries (MAX_RSS_ENTRIES)" in n for n in p.notes), p.notes
    assert "nic.rss_table_size" not in p.scenario()
    assert any("msi_irqs: more than 5 entries (MAX_DIR_ENTRIES)" in n for n in p.notes), p.notes


def test_parsers_bound_what_they_expand():
    with pytest.raises(ValueError, match="MAX_RSS_ENTRIES"):
        parse_rss_table("RX flow hash indirection table for x:\n" + "0: 1\n" * 70000)
    with pytest.raises(ValueError, match="more than 4096 NAPIs"):
        parse_napis(json.dumps([{}] * 4097))
    for bad in ("[" * 100000, "{}", "[1]", '[{"id": "7"}]', '[{"id": -1}]', "[{" + "9" * 5000):
        with pytest.raises(ValueError):
            parse_napis(bad)
    # a header of a million CPUs and a line as long as the file: bounded, the line skipped
    ints = in_child(
        """
from irqlab.ops.probe import parse_interrupts
header = "CPU0 " * 1_000_000 + "\\n"
ints = parse_interrupts(header + " 5: " + "1 " * 3_000_000 + "x-edge eth0\\n 6: 1 x\\n")
[len(ints.cpus), sorted(ints.names.items()), ints.problems]
"""
    )
    assert ints == [
        MAX_CPUS,
        [[6, "x"]],
        [f"1 lines longer than {24 * MAX_CPUS + 4096} characters skipped"],
    ]


# --- symbolic links that loop ---------------------------------------------------------------


def test_a_device_link_that_points_at_itself_is_a_note(tree):
    link = replace(tree / f"{DEV}/device")
    link.symlink_to("device")
    out = probed(tree)
    noted(out, f"/{DEV}/device: a symbolic link loop")
    # the files under it are not noted one by one
    assert not [n for n in out["notes"] if f"/{DEV}/device/" in n]
    assert out["scenario"]["driver.moderation"] == "ixgbe"  # ethtool -i still names it


@pytest.mark.parametrize(
    "path",
    [
        "proc/interrupts",
        "sys/devices/system/cpu/online",
        f"{DEV}/speed",
        f"ethtool/{IFACE}/show-coalesce",
        "proc/sys/net/core/busy_read",
        "proc/config.gz",
    ],
)
def test_looping_links_where_files_should_be_are_notes(tree, path):
    read_first(tree, path)
    a = replace(tree / path)
    b = a.with_name(a.name + ".loop")
    a.symlink_to(b.name)
    b.symlink_to(a.name)
    out = probed(tree)
    noted(out, f"/{path}", "a symbolic link loop")


def test_a_link_that_leads_nowhere_is_a_note(tree):
    replace(tree / f"{DEV}/device").symlink_to("../../../devices/nowhere")
    out = probed(tree)
    noted(out, f"/{DEV}/device: a symbolic link to nothing")


def test_a_root_that_loops_is_one_clear_error(tmp_path):
    root = tmp_path / "root"
    root.symlink_to("root")
    with pytest.raises(irqlab.ConfigError, match="cannot be resolved"):
        probe("eth0", root=root)


# --- FIFOs, sockets, unreadable files, directories ----------------------------------------------


FILES = [
    "proc/interrupts",
    "proc/cpuinfo",
    "proc/sys/kernel/osrelease",
    "sys/devices/system/cpu/online",
    f"{DEV}/speed",
    f"{DEV}/gro_flush_timeout",
    "proc/sys/net/core/netdev_budget",
    f"ethtool/{IFACE}/show-coalesce",
    f"ethtool/{IFACE}/show-rxfh-indir",
    f"netlink/{IFACE}/napi-get",
    "proc/config.gz",
]


@pytest.mark.parametrize("path", FILES)
def test_a_fifo_where_a_file_should_be_is_a_note_and_never_blocks(tree, path):
    read_first(tree, path)
    os.mkfifo(replace(tree / path))  # no writer: opening it to read would block for ever
    out = probed(tree)
    noted(out, f"/{path}", "a FIFO, not a file")


@pytest.mark.parametrize("path", FILES)
def test_a_directory_where_a_file_should_be_is_a_note(tree, path):
    read_first(tree, path)
    replace(tree / path).mkdir()
    out = probed(tree)
    noted(out, f"/{path}", "a directory, not a file")


@pytest.mark.parametrize("path", ["proc/interrupts", f"{DEV}/speed", "proc/net/route"])
def test_a_socket_where_a_file_should_be_is_a_note(tree, path, tmp_path):
    # a UNIX socket cannot be opened as a file (ENXIO); its path must be short
    short = Path(os.environ.get("TMPDIR", "/tmp")) / f"irqlab-probe-{os.getpid()}.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(short))
        try:
            os.symlink(short, replace(tree / path))
            out = probed(tree, iface="" if path == "proc/net/route" else IFACE)
        finally:
            short.unlink()
    noted(out, f"/{path}", "a socket, not a file")


@pytest.mark.parametrize("path", ["proc/interrupts", f"{DEV}/speed"])
def test_a_device_where_a_file_should_be_is_never_opened(tree, path):
    # /dev/zero reads for ever; another device could act on being opened (a watchdog)
    os.symlink("/dev/zero", replace(tree / path))
    out = probed(tree)
    noted(out, f"/{path}", "a character device, not a file: not read")


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="no /proc/self/mem")
@pytest.mark.parametrize("path", ["proc/interrupts", f"{DEV}/speed", "proc/cpuinfo"])
def test_a_file_whose_read_fails_is_a_note(tree, path):
    read_first(tree, path)
    # the tests run as root, for whom no permission bits forbid a read: a file whose read
    # itself fails (EIO at offset 0) stands in for one that cannot be read
    os.symlink("/proc/self/mem", replace(tree / path))
    out = probed(tree)
    noted(out, f"/{path}", "not readable (input/output error)")


# --- garbage and enormous files ---------------------------------------------------------------


def regular_files(tree: Path) -> list[Path]:
    return sorted(p for p in tree.rglob("*") if p.is_file() and not p.is_symlink())


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_binary_garbage_in_every_file_gives_a_scenario_that_loads(tree, seed):
    rng = random.Random(seed)
    for path in regular_files(tree):
        path.write_bytes(rng.randbytes(rng.choice([0, 1, 7, 64, 4096])))
    out = probed(tree)
    assert out["scenario"]["scheme"] == "napi"
    assert out["notes"]


def test_garbage_shaped_like_values_gives_notes_naming_the_files(tree):
    (tree / f"{DEV}/speed").write_text("fast\n")
    (tree / "proc/sys/net/core/netdev_budget").write_text("9" * 5000 + "\n")
    (tree / "proc/sys/net/core/busy_read").write_text("-\x00\x01\n")
    (tree / f"{DEV}/gro_flush_timeout").write_text("1e9\n")
    (tree / "proc/cpuinfo").write_text("processor\t: 0\ncpu MHz\t\t: .\ncpu MHz : 1e999\n")
    (tree / "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq").write_text("9" * 400)
    read_first(tree, "proc/config.gz")
    gz = tree / "proc/config.gz"
    gz.write_bytes(b"\x1f\x8b\x08\x00" + bytes(range(256)))
    out = probed(tree)
    noted(out, f"/{DEV}/speed: 'fast'")
    noted(out, "/proc/sys/net/core/netdev_budget:", "is not an integer")
    noted(out, "/proc/sys/net/core/busy_read:", "is not an integer")
    noted(out, f"/{DEV}/gro_flush_timeout: '1e9' is not an integer")
    noted(out, "/proc/config.gz: not a gzip file")
    assert "kernel.netdev_budget" not in out["scenario"]


def test_what_a_host_wrote_is_text_never_markup_nor_control_characters(tree):
    # a driver, a hostname and a vector that name themselves with rich markup, terminal
    # escapes and a line break
    ints = (tree / "proc/interrupts").read_text()
    ints = ints.replace(" enp3s0f0\n", " [/x][bold]\x1b[2Jevil\u2028x\n")
    (tree / "proc/interrupts").write_text(ints)
    (tree / "proc/sys/kernel/hostname").write_text("fw1\x1b]0;owned\x07[/link]\n")
    driver = tree / "sys/devices/pci0000:00/0000:00:03.0/0000:03:00.0/driver"
    replace(driver).symlink_to("../../../../bus/pci/drivers/[red]ix\x1bgbe")
    out = probed(tree)
    for text in (out["toml"], out["summary"], *out["notes"]):
        assert "\x1b" not in text and "\x07" not in text and "\u2028" not in text
    assert "[/x][bold]" in out["summary"]  # shown as it was written, not as markup
    tomllib.loads(out["toml"])


def sparse(path: Path, size: int) -> None:
    with replace(path).open("wb") as f:
        f.truncate(size)


@pytest.mark.parametrize(
    "path",
    ["proc/interrupts", "proc/cpuinfo", f"{DEV}/speed", "proc/sys/kernel/osrelease"],
)
def test_an_enormous_file_is_read_to_a_bounded_prefix(tree, path):
    read_first(tree, path)
    sparse(tree / path, 8 << 30)  # 8 GiB of NULs, taking no disk
    out = probed(tree)
    noted(out, f"/{path}: larger than", "_BYTES): only its first")


def test_an_enormous_interrupts_table_is_cut_at_its_limits(tree):
    # 8 CPUs and 200,000 IRQs: 11 MB of lines shaped like a host's
    lines = ["           CPU0 CPU1 CPU2 CPU3 CPU4 CPU5 CPU6 CPU7"]
    lines += [f"{k:>6}: 1 2 3 4 5 6 7 8 PCI-MSI {k}-edge dev{k}" for k in range(200_000)]
    (tree / "proc/interrupts").write_text("\n".join(lines) + "\n")
    out = probed(tree)
    noted(out, "/proc/interrupts: more than 65536 IRQs (MAX_IRQS)")


def test_a_gzip_bomb_in_config_gz_is_decompressed_to_a_bounded_prefix(tree):
    (tree / "boot" / "config-5.4.0-150-generic").unlink()
    with gzip.open(tree / "proc/config.gz", "wb", compresslevel=9) as f:
        zeros = bytes(1 << 20)
        for _ in range(1024):  # 1 GiB of zeros in about 1 MB
            f.write(zeros)
    out = probed(tree)
    assert out["scenario"]["kernel.hz"] == 250  # from netdev_budget_usecs, as without one


def test_a_kernel_release_cannot_lead_the_probe_out_of_its_tree(tmp_path, tree):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "cfg").write_text("CONFIG_HZ=300\n")
    (tree / "boot/config-x").mkdir()
    # /boot/config-x/../../../outside/cfg is outside the tree
    (tree / "proc/sys/kernel/osrelease").write_text("x/../../../outside/cfg\n")
    out = probed(tree)
    assert out["scenario"]["kernel.hz"] == 250  # from netdev_budget_usecs, not from outside


# --- ethtool, netlink and the command line ----------------------------------------------------


def script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "bin" / "ethtool"
    path.parent.mkdir()
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_an_ethtool_that_floods_its_output_is_killed_and_noted(tree, tmp_path):
    out = probed(tree, ethtool=script(tmp_path, "exec yes 'rx-usecs: 1'\n"))
    noted(out, f"`ethtool -c {IFACE}` printed more than 4 MiB: ignored")


def test_an_ethtool_that_prints_garbage_is_read_as_text(tree, tmp_path):
    garbage = script(tmp_path, "head -c 100000 /dev/urandom\n")
    p = probe(IFACE, root=tree, interval_s=0, ethtool=garbage)
    tomllib.loads(p.toml())
    assert p.get("driver.moderation") is None


def test_netlink_answers_are_parsed_within_bounds():
    # napi_get against this kernel: an answer, or a clean OSError (no family, no netlink)
    try:
        napis = napi_get(1, timeout_s=2.0)  # lo
    except OSError:
        napis = []
    assert isinstance(napis, list) and len(napis) <= limits.MAX_NAPIS
    # an answer as pyroute2 parses it: only counts come out, under the spec's names — a uint
    # of 8 bytes (a timeout past 4.29 s) whole, an attribute the spec does not name left out
    from irqlab.ops.probe import netdev_genl

    def attr(kind: int, payload: bytes) -> bytes:
        size = 4 + len(payload)
        return struct.pack("=HH", size, kind) + payload + b"\0" * (-size % 4)

    def answer(attrs: bytes) -> dict[str, int]:
        body = struct.pack("=BBH", netdev_genl.CMD_NAPI_GET, 1, 0) + attrs
        msg = netdev_genl.napi_msg(struct.pack("=IHHII", 16 + len(body), 20, 2, 1, 0) + body)
        msg.decode()
        return netdev_genl.attributes(msg, netdev_genl.NAPI_NAMES)

    assert answer(
        attr(2, struct.pack("=I", 8193))
        + attr(6, struct.pack("=Q", 5_000_000_000))
        + attr(7, struct.pack("=I", 20_000))
        + attr(99, b"\x01\x02\x03\x04")
    ) == {"id": 8193, "gro-flush-timeout": 5_000_000_000, "irq-suspend-timeout": 20_000}
    assert answer(attr(6, b"\x01\x02")) == {}  # a uint of neither 4 nor 8 bytes
    for garbage in (b"", b"\x08\x00\x05\x00\x01", os.urandom(999)):
        try:
            got = answer(garbage)
        except Exception:  # pyroute2 refuses it: napi_get turns that into an OSError
            continue
        assert all(isinstance(v, int) for v in got.values())


def test_a_netlink_library_that_fails_or_floods_is_an_oserror(monkeypatch):
    from irqlab.ops.probe import netdev_genl

    def broken(ifindex: int, timeout_s: float, most: int) -> list[dict[str, int]]:
        raise RuntimeError("event loop closed")

    monkeypatch.setattr(netdev_genl, "napi_get", broken)
    with pytest.raises(OSError, match=r"pyroute2 failed \(RuntimeError: event loop closed\)"):
        napi_get(1)
    monkeypatch.undo()
    # more NAPIs than MAX_NAPIS in a live answer: cut at the bound, named
    lo = Path("/sys/class/net/lo/ifindex")
    if not lo.exists():
        return
    busy = [
        name
        for name in os.listdir("/sys/class/net")
        if (Path("/sys/class/net") / name / "device").exists()
    ]
    for name in busy:
        ifindex = int((Path("/sys/class/net") / name / "ifindex").read_text())
        try:
            found = napi_get(ifindex)
        except OSError:
            return  # no netdev family here
        if found:
            monkeypatch.setattr(limits, "MAX_NAPIS", len(found) - 1)
            with pytest.raises(OSError, match=rf"more than {len(found) - 1} NAPIs \(MAX_NAPIS\)"):
                napi_get(ifindex)
            return


def test_the_command_line_on_a_hostile_tree_prints_a_scenario_and_its_notes(tree):
    replace(tree / f"{DEV}/device").symlink_to("device")
    os.mkfifo(replace(tree / "proc/interrupts"))
    (tree / "sys/devices/system/cpu/online").write_text("0-99999999\n")
    r = subprocess.run(
        [sys.executable, "-m", "irqlab.cli", "probe", "--root", str(tree), "--interval", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    data = tomllib.loads(r.stdout)
    assert data["scheme"] == "napi"
    assert f"note: /{DEV}/device: a symbolic link loop" in r.stderr
    assert "note: /proc/interrupts: a FIFO, not a file: not read" in r.stderr


def test_a_host_reads_only_regular_files(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    said = in_child(
        """
from irqlab.ops.probe import Host
host = Host(sys.argv[1])
read = [host.read(name) for name in ("/fifo", "/dir", "/absent")]
[read, host.problems]
""",
        str(tmp_path),
    )
    assert said == [
        [None, None, None],
        {"/fifo": "a FIFO, not a file: not read", "/dir": "a directory, not a file: not read"},
    ]
