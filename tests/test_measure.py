"""`irqlab measure`: each counter file parsed as the kernel writes it, a window's deltas and
rates as computed by hand, counters that went backwards left out with a warning, the bundle
written and read back equal, a damaged or newer bundle one line naming the file, the command's
exit codes and files, Ctrl-C ending the window early — and a real window on this host."""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from irqlab.cli import main
from irqlab.ops.measure import (
    FORMAT_VERSION,
    TRACING,
    BundleError,
    load_bundle,
    parse_snmp,
    parse_softirqs,
    parse_softnet_stat,
    parse_stat,
    record,
    summarize,
    write_bundle,
)
from irqlab.ops.probe import Host

USER_HZ = os.sysconf("SC_CLK_TCK")


def _softnet(rows: list[tuple[int, int, int, int]]) -> str:
    """softnet_seq_show's 15 hexadecimal columns (Linux 6.x): processed, dropped,
    time_squeeze, six zeros, received_rps, flow_limit_count, backlog, CPU, input and process
    queue lengths."""
    return "".join(
        " ".join(f"{v:08x}" for v in (p, d, s, 0, 0, 0, 0, 0, 0, 0, 0, 0, cpu, 0, 0)) + "\n"
        for cpu, p, d, s in rows
    )


def _softirqs(net_tx: tuple[int, int], net_rx: tuple[int, int]) -> str:
    return (
        "                    CPU0       CPU1       \n"
        "          HI:          0          0\n"
        "       TIMER:     887211     829404\n"
        f"      NET_TX: {net_tx[0]:10d} {net_tx[1]:10d}\n"
        f"      NET_RX: {net_rx[0]:10d} {net_rx[1]:10d}\n"
        "       BLOCK:          0          0\n"
        "     HRTIMER:          0          0\n"
    )


def _interrupts(rx: tuple[int, int], tx: tuple[int, int]) -> str:
    return (
        "           CPU0       CPU1       \n"
        "  0:         44          0   IO-APIC   2-edge      timer\n"
        f" 41: {rx[0]:10d} {rx[1]:10d} PCI-MSIX-0000:00:04.0   1-edge      virtio3-rx\n"
        f" 42: {tx[0]:10d} {tx[1]:10d} PCI-MSIX-0000:00:04.0   2-edge      virtio3-tx\n"
        "NMI:          0          0   Non-maskable interrupts\n"
        "LOC:     834032     880349   Local timer interrupts\n"
    )


def _snmp(in_dg: int, in_err: int, rcvbuf: int) -> str:
    return (
        "Ip: Forwarding DefaultTTL InReceives\n"
        "Ip: 1 64 12345\n"
        "Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors "
        "InCsumErrors IgnoredMulti MemErrors\n"
        f"Udp: {in_dg} 0 {in_err} 10 {rcvbuf} 0 0 0 0\n"
        "UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors "
        "InCsumErrors IgnoredMulti MemErrors\n"
        "UdpLite: 7 0 0 0 0 0 0 0 0\n"
    )


def _stat(cpu0: tuple[int, int, int], cpu1: tuple[int, int, int]) -> str:
    """cpu lines with (idle, irq, softirq) jiffies set; the rest fixed."""

    def line(name: str, idle: int, irq: int, softirq: int) -> str:
        return f"{name} 100 0 50 {idle} 0 {irq} {softirq} 0 0 0\n"

    return (
        "cpu  200 0 100 2000 0 20 40 0 0 0\n"
        + line("cpu0", *cpu0)
        + line("cpu1", *cpu1)
        + "intr 12345 0 0\nctxt 999\nbtime 1700000000\nsoftirq 1 2 3\n"
    )


BEFORE = {
    "proc/net/softnet_stat": _softnet([(0, 0x100, 0, 1), (1, 0x10, 2, 0)]),
    "proc/softirqs": _softirqs((4, 0), (98144, 87030)),
    "proc/interrupts": _interrupts((1000, 20), (5, 7)),
    "proc/net/snmp": _snmp(1000, 5, 3),
    "proc/stat": _stat((1000, 10, 20), (1000, 0, 0)),
    "proc/sys/kernel/osrelease": "6.18.0-test\n",
}
#: Two seconds later: CPU 1's softnet_stat `processed` went backwards (a reset).
AFTER = {
    "proc/net/softnet_stat": _softnet([(0, 0x300, 4, 3), (1, 0x8, 2, 0)]),
    "proc/softirqs": _softirqs((6, 0), (98344, 87030)),
    "proc/interrupts": _interrupts((1400, 20), (5, 7)),
    "proc/net/snmp": _snmp(3000, 9, 7),
    "proc/stat": _stat(
        (1000 + USER_HZ, 10 + USER_HZ // 2, 20 + USER_HZ), (1000 + 2 * USER_HZ, 0, 0)
    ),
    "proc/sys/kernel/osrelease": "6.18.0-test\n",
}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "host"
    _write(root, BEFORE)
    return root


def _clock(*values: float) -> Iterator[float]:
    return iter(values)


def _window(tree: Path, *, interrupt: bool = False, end: float = 102.0):  # type: ignore[no-untyped-def]
    """A two-second window on the fake host: the sleep turns the files into their later state
    (and raises KeyboardInterrupt, as Ctrl-C, if asked)."""

    def sleep(s: float) -> None:
        _write(tree, AFTER)
        if interrupt:
            raise KeyboardInterrupt

    ticks = _clock(100.0, end)
    return record(Host(tree), 2.0, sleep=sleep, clock=lambda: next(ticks))


# -- parsers ---------------------------------------------------------------------------------


def test_softnet_stat_columns_are_hex_and_the_cpu_column_names_the_cpu():
    # an offline CPU 1: the kernel prints lines for online CPUs only, CPU 2 in column 13
    rows = parse_softnet_stat(_softnet([(0, 0x1C331, 0xA, 0x1B), (2, 255, 0, 0)]))
    assert rows == {
        0: {"processed": 0x1C331, "dropped": 10, "time_squeeze": 27},
        2: {"processed": 255, "dropped": 0, "time_squeeze": 0},
    }


def test_softnet_stat_of_an_old_kernel_numbers_the_lines():
    # Linux 4.x: eleven columns, no CPU
    old = "0000ffff 00000001 00000002" + " 00000000" * 8 + "\n"
    rows = parse_softnet_stat(old + old.replace("0000ffff", "00000010") + "garbage line\n")
    assert rows == {
        0: {"processed": 65535, "dropped": 1, "time_squeeze": 2},
        1: {"processed": 16, "dropped": 1, "time_squeeze": 2},
    }


def test_softirqs_keeps_net_rx_and_net_tx_per_cpu():
    assert parse_softirqs(_softirqs((4, 0), (98144, 87030))) == {
        "NET_TX": {0: 4, 1: 0},
        "NET_RX": {0: 98144, 1: 87030},
    }
    assert parse_softirqs("") == {}


def test_snmp_reads_udp_and_not_udplite():
    udp = parse_snmp(_snmp(1816, 2, 3))
    assert udp["InDatagrams"] == 1816
    assert udp["InErrors"] == 2
    assert udp["RcvbufErrors"] == 3
    assert len(udp) == 9
    assert parse_snmp("Ip: a\nIp: 1\n") == {}


def test_stat_reads_each_cpu_line_and_not_the_total():
    cpus = parse_stat(_stat((1000, 10, 20), (7, 0, 3)))
    assert set(cpus) == {0, 1}
    assert cpus[0]["idle"] == 1000 and cpus[0]["irq"] == 10 and cpus[0]["softirq"] == 20
    assert cpus[1]["user"] == 100 and cpus[1]["softirq"] == 3


# -- deltas and rates ------------------------------------------------------------------------


def test_a_window_gives_the_rates_computed_by_hand(tree: Path):
    bundle = _window(tree)
    s = bundle.summary
    assert s["window_s"] == 2.0
    cpu0, cpu1 = s["cpus"]
    assert cpu0["cpu"] == 0 and cpu1["cpu"] == 1
    assert cpu0["net_rx_per_s"] == 100.0  # (98344 - 98144) / 2
    assert cpu0["net_tx_per_s"] == 1.0
    assert cpu0["packets_per_s"] == 256.0  # (0x300 - 0x100) / 2
    assert cpu0["dropped"] == 4 and cpu0["time_squeeze"] == 2
    assert cpu0["softirq_share"] == pytest.approx(0.5)  # USER_HZ jiffies in 2 s
    assert cpu0["irq_share"] == pytest.approx((USER_HZ // 2) / USER_HZ / 2)
    assert cpu0["idle_share"] == pytest.approx(0.5)
    assert cpu1["net_rx_per_s"] == 0.0 and cpu1["idle_share"] == pytest.approx(1.0)
    # IRQ 41 took 400 on CPU 0; IRQ 0 and 42 did not move
    assert s["irqs"] == [
        {"irq": 41, "name": "virtio3-rx", "per_s": 200.0, "per_cpu": {"0": 200.0, "1": 0.0}}
    ]
    assert s["udp"]["InDatagrams_per_s"] == 1000.0
    assert s["udp"]["InErrors_per_s"] == 2.0
    assert s["udp"]["RcvbufErrors_per_s"] == 2.0


def test_a_counter_that_went_backwards_is_missing_with_a_warning(tree: Path):
    s = _window(tree).summary
    assert s["cpus"][1]["packets_per_s"] is None
    assert s["cpus"][1]["dropped"] == 0  # its other counters stand
    assert s["warnings"] == [
        "softnet_stat processed on CPU 1 went backwards (16 → 8): treated as missing"
    ]


def test_summarize_on_its_own():
    before = {"softirqs": {"NET_RX": {"0": 10}}, "udp": {"RcvbufErrors": 5}}
    after = {"softirqs": {"NET_RX": {"0": 40}}, "udp": {"RcvbufErrors": 2}}
    s = summarize(before, after, 3.0, 100)
    assert s["cpus"][0]["net_rx_per_s"] == 10.0
    assert s["cpus"][0]["packets_per_s"] is None
    assert s["udp"] == {"RcvbufErrors_per_s": None}
    assert len(s["warnings"]) == 1 and "Udp RcvbufErrors went backwards" in s["warnings"][0]


# -- the bundle ------------------------------------------------------------------------------


def test_the_manifest_says_what_was_recorded(tree: Path):
    m = _window(tree).manifest
    assert m["format_version"] == FORMAT_VERSION
    assert m["kernel"] == "6.18.0-test"
    assert m["hz"] is None  # the fake host has no kernel configuration
    assert m["cpus"] == 2
    assert m["window_s"] == 2.0 and m["requested_s"] == 2.0 and not m["interrupted"]
    assert m["tracing"] == TRACING
    assert m["tracing_reason"]
    assert "/proc/net/softnet_stat" in m["recorded"] and m["missing"] == {}


def test_a_missing_file_is_named_and_the_rest_recorded(tree: Path):
    (tree / "proc/net/snmp").unlink()
    bundle = record(Host(tree), 0.1, sleep=lambda s: None)
    assert bundle.manifest["missing"] == {"/proc/net/snmp": "not present"}
    assert "/proc/net/snmp" not in bundle.manifest["recorded"]
    assert bundle.summary["udp"] == {}


def test_ctrl_c_ends_the_window_and_the_bundle_covers_it(tree: Path):
    bundle = _window(tree, interrupt=True, end=100.5)
    assert bundle.manifest["interrupted"] is True
    assert bundle.manifest["window_s"] == 0.5
    assert bundle.summary["cpus"][0]["net_rx_per_s"] == 400.0  # 200 in 0.5 s


def test_the_bundle_is_written_and_read_back_equal(tree: Path, tmp_path: Path):
    bundle = _window(tree)
    write_bundle(bundle, tmp_path / "b")
    assert load_bundle(tmp_path / "b") == bundle


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda d: (d / "summary.json").unlink(), "summary.json: missing (a partial bundle)"),
        (
            lambda d: (d / "counters_after.json").write_text('{"missing": '),
            "counters_after.json: not JSON",
        ),
        (
            lambda d: (d / "manifest.json").write_text("[1, 2]"),
            "manifest.json: expected a JSON object",
        ),
        (
            lambda d: (d / "summary.json").write_text('{"cpus": []}'),
            "summary.json: no window_s, irqs, udp, warnings",
        ),
        (
            lambda d: _edit(d / "manifest.json", format_version=FORMAT_VERSION + 1),
            f"format version {FORMAT_VERSION + 1} is newer than this irqlab reads",
        ),
        (lambda d: _edit(d / "manifest.json", format="other"), "manifest.json: format 'other'"),
        (lambda d: _edit(d / "summary.json", cpus={}), "summary.json: cpus is not a list"),
    ],
)
def test_a_damaged_bundle_is_one_line_naming_the_file(tree, tmp_path, damage, expected):
    write_bundle(_window(tree), tmp_path / "b")
    damage(tmp_path / "b")
    with pytest.raises(BundleError) as e:
        load_bundle(tmp_path / "b")
    assert expected in str(e.value)
    assert "\n" not in str(e.value)


def test_a_bundle_that_is_not_a_directory(tmp_path: Path):
    with pytest.raises(BundleError, match="not a directory"):
        load_bundle(tmp_path / "nothing")


def _edit(path: Path, **changes: object) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


# -- the command -----------------------------------------------------------------------------


def test_the_command_writes_the_bundle(tree: Path, tmp_path: Path):
    out = tmp_path / "bundle"
    r = CliRunner().invoke(
        main, ["measure", "--seconds", "0.1", "--root", str(tree), "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.iterdir()) == [
        "counters_after.json",
        "counters_before.json",
        "manifest.json",
        "summary.json",
    ]
    assert "only the counters are recorded" in r.output
    assert "NET_RX/s" in r.output
    assert load_bundle(out).manifest["cpus"] == 2


@pytest.mark.parametrize("seconds", ["0.05", "3601", "nan", "-1"])
def test_a_window_out_of_range_is_one_line_with_the_range(tree, tmp_path, seconds):
    r = CliRunner().invoke(
        main, ["measure", "--seconds", seconds, "--root", str(tree), "--out", str(tmp_path / "b")]
    )
    assert r.exit_code == 2
    assert "0.1 to 3600 s" in r.output
    assert len(r.output.strip().splitlines()) == 1
    assert not (tmp_path / "b").exists()


def test_ctrl_c_in_the_command_writes_the_shorter_window(tree, tmp_path, monkeypatch):
    def interrupted(s: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(time, "sleep", interrupted)
    out = tmp_path / "b"
    r = CliRunner().invoke(
        main, ["measure", "--seconds", "60", "--root", str(tree), "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert "ended early by Ctrl-C" in r.output
    m = load_bundle(out).manifest
    assert m["interrupted"] is True and m["window_s"] < 60


def test_a_missing_root_is_one_line(tmp_path: Path):
    r = CliRunner().invoke(main, ["measure", "--root", str(tmp_path / "none"), "--seconds", "0.1"])
    assert r.exit_code == 2
    assert len(r.output.strip().splitlines()) == 1


# -- this host -------------------------------------------------------------------------------


def test_a_real_window_on_this_host_has_one_entry_per_cpu():
    online = [
        line
        for line in Path("/proc/stat").read_text().splitlines()
        if line[:3] == "cpu" and line[3].isdigit()
    ]
    bundle = record(Host("/"), 0.2)
    s = bundle.summary
    assert [row["cpu"] for row in s["cpus"]] == sorted(int(line.split()[0][3:]) for line in online)
    assert 0.15 < s["window_s"] < 5
    for row in s["cpus"]:
        assert row["net_rx_per_s"] is not None and row["net_rx_per_s"] >= 0
        assert row["softirq_share"] is not None and 0 <= row["softirq_share"] <= 1.5
        assert math.isfinite(row["idle_share"])
    assert bundle.manifest["missing"] == {}


def test_hz_is_read_as_probe_reads_it(tree: Path):
    import gzip

    (tree / "proc/config.gz").write_bytes(gzip.compress(b"CONFIG_HZ_250=y\nCONFIG_HZ=250\n"))
    m = record(Host(tree), 0.1, sleep=lambda s: None).manifest
    assert m["hz"] == 250
    assert m["hz_source"] == "/proc/config.gz: CONFIG_HZ=250"


def test_without_root_one_line_says_only_the_counters_are_recorded(tree, tmp_path, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    out = tmp_path / "b"
    r = CliRunner().invoke(
        main, ["measure", "--seconds", "0.1", "--root", str(tree), "-o", str(out)]
    )
    assert r.exit_code == 0, r.output
    lines = [line for line in r.output.splitlines() if "counters" in line]
    assert lines == ["only the counters are recorded: not root (tracepoints need root)"]
    assert load_bundle(out).manifest["tracing_reason"] == "not root (tracepoints need root)"


# -- the host's settings ---------------------------------------------------------------------

PROBE_TREE = Path(__file__).parent / "data" / "probe" / "virtio_net"


def test_the_bundle_keeps_the_settings_as_probe_reads_them(tmp_path: Path):
    bundle = record(Host(PROBE_TREE), 0.1, sleep=lambda s: None)
    settings = bundle.settings
    assert settings is not None and settings["driver"] == "virtio_net"
    assert bundle.manifest["driver"] == "virtio_net"
    assert bundle.manifest["iface"] == settings["iface"]
    assert bundle.manifest["settings"] == "settings.json"
    assert settings["settings"]["nic.queues"]["value"] >= 1
    assert settings["settings"]["nic.queues"]["source"]  # where it was read
    assert "[nic]" in settings["scenario"]  # the file irqlab probe writes
    write_bundle(bundle, tmp_path / "b")
    assert (tmp_path / "b" / "settings.json").exists()
    assert load_bundle(tmp_path / "b") == bundle


def test_a_host_without_interfaces_has_no_settings_and_says_why(tree: Path):
    bundle = _window(tree)
    assert bundle.settings is None and bundle.manifest["settings"] is None
    assert "no network interfaces" in bundle.manifest["settings_reason"]


def test_an_unknown_interface_is_one_line_before_the_window(tmp_path: Path):
    r = CliRunner().invoke(
        main,
        ["measure", "--root", str(PROBE_TREE), "--iface", "nope0", "--seconds", "0.1",
         "-o", str(tmp_path / "b")],
    )  # fmt: skip
    assert r.exit_code == 2
    assert len(r.output.strip().splitlines()) == 1
    assert "--iface nope0: no such interface" in r.output
    assert not (tmp_path / "b").exists()


def test_a_bundle_written_over_a_traced_one_leaves_none_of_its_files(tmp_path: Path):
    traced = load_bundle(Path(__file__).parent / "data" / "measure" / "loopback-bundle")
    write_bundle(traced, tmp_path / "b")
    untraced = record(Host(PROBE_TREE), 0.1, sleep=lambda s: None, settings=False)
    write_bundle(untraced, tmp_path / "b")
    again = load_bundle(tmp_path / "b")
    assert again.distributions is None and again.settings is None
    assert again == untraced
