"""`irqlab measure`'s tracepoints: bpftrace's JSON output as recorded on a 2-vCPU VM
(tests/data/measure) read into distributions, its log2 histograms turned into buckets,
counts, means and percentiles computed by hand, the probes' cost from the programs'
statistics, the session's start and stop against stand-ins for bpftrace (one that fails, one
that hangs, one that answers), the bundle's new files read back or refused in one line — and,
as root, a real session over UDP sent inside a network namespace of its own, and a measuring
process killed with SIGKILL leaving no bpftrace and no program behind."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from irqlab.cli import main
from irqlab.errors import ConfigError
from irqlab.ops.measure import (
    TRACED,
    BundleError,
    TraceError,
    TraceSession,
    distributions,
    histogram,
    load_bundle,
    parse_output,
    summarize_trace,
    write_bundle,
)
from irqlab.ops.measure import tracing as tracing_mod
from irqlab.ops.measure.tracing import PROBES, overhead, read_prog_stats, script

DATA = Path(__file__).parent / "data" / "measure"
#: bpftrace v0.17's output for tracing.script(app_comm="python3") over ~2 s while 20,000 UDP
#: datagrams went over loopback inside a network namespace (and a disk write).
SAMPLE = DATA / "bpftrace-loopback.jsonl"
#: `irqlab measure --seconds 3 --app-comm python3` as root while 100,000 datagrams went over
#: loopback inside a namespace (another namespace's veth traffic in it too).
BUNDLE = DATA / "loopback-bundle"

ROOT = os.geteuid() == 0
as_root = pytest.mark.skipif(not ROOT, reason="tracepoints need root (CI runs as root)")


# -- bpftrace's output -----------------------------------------------------------------------


def test_the_recorded_output_gives_every_distribution():
    maps = parse_output(SAMPLE.read_text())
    d = distributions(maps, app_comm="python3", irq_names={"36": "virtio1-req.0"})
    lo = d["napi_poll"]["(no_device)"]  # loopback's packets go through the backlog's NAPI
    assert (lo["polls"], lo["packets"], lo["full_budget"]) == (20000, 20000, 0)
    assert lo["packets_per_poll"]["buckets"] == {"1": 20000}
    assert lo["packets_per_poll"]["mean"] == 1.0
    veth = d["napi_poll"]["veth1"]
    assert (veth["polls"], veth["packets"]) == (29651, 29668)
    assert veth["packets_per_poll"]["buckets"] == {"1": 29650, "16": 1}  # empty ones left out
    assert veth["packets_per_poll"]["mean"] == 29668 / 29651  # exact: from the sum
    cpu1 = d["net_rx"]["1"]
    assert cpu1["runs"] == {"inline": 20001, "ksoftirqd": 0}
    duration = cpu1["duration_ns"]
    assert duration["count"] == 19261 + 498 + 13 + 207 + 15 + 7
    assert duration["sum"] == 40365320 and duration["mean"] == 40365320 / 20001
    assert duration["p50"] == pytest.approx(1024 + 1024 * (0.5 * 20001) / 19261)
    assert cpu1["raise_to_run_ns"]["count"] == 20001  # each run was raised
    assert d["hardirq_ns"]["36"]["name"] == "virtio1-req.0"
    assert d["hardirq_ns"]["41"]["name"] is None
    assert list(d["hardirq_ns"]) == ["36", "41", "42"]  # by IRQ number
    assert d["app_wakeup_us"]["count"] == 1
    assert d["app_comm"] == "python3"


def test_lines_that_are_not_maps_are_skipped():
    text = (
        '{"type": "attached_probes", "data": {"probes": 9}}\n\n'
        "Attaching 9 probes...\n"
        '{"type": "map", "data": {"@net_rx_ksoftirqd": {"0": 7}}}\n'
        '{"type": "hist", "data": {"@net_rx_ns": '
        '{"0": [{"min": 1024, "max": 2047, "count": 12}]}}}\n'
        '{"type": "map", "data": \n'
    )
    maps = parse_output(text)
    assert maps == {
        "@net_rx_ksoftirqd": {"0": 7},
        "@net_rx_ns": {"0": [{"min": 1024, "max": 2047, "count": 12}]},
    }
    d = distributions(maps)
    assert d["net_rx"]["0"]["runs"] == {"inline": 5, "ksoftirqd": 7}
    assert d["net_rx"]["0"]["raise_to_run_ns"]["count"] == 0
    assert d["app_wakeup_us"] is None  # no app named


BUCKETS = [
    {"min": 0, "max": 0, "count": 2},
    {"min": 1, "max": 1, "count": 3},
    {"min": 2, "max": 3, "count": 4},
    {"min": 4, "max": 7, "count": 0},
    {"min": 8, "max": 15, "count": 1},
]


def test_a_log2_histogram_by_hand():
    h = histogram(BUCKETS, "packets")
    assert h["unit"] == "packets"
    assert h["buckets"] == {"0": 2, "1": 3, "2": 4, "8": 1}  # empty buckets left out
    assert h["count"] == 10
    assert h["mean"] == pytest.approx((0 * 2 + 1 * 3 + 2.5 * 4 + 11.5 * 1) / 10)  # middles
    assert h["p50"] == 1.0  # the 5th of 10 values is in the bucket of exactly 1
    assert h["p99"] == pytest.approx(8 + 8 * 0.9)  # 9.9th: 0.9 into [8, 16)
    assert "sum" not in h


def test_an_exact_sum_gives_the_exact_mean():
    h = histogram(BUCKETS, "packets", total=30)
    assert h["sum"] == 30 and h["mean"] == 3.0


def test_an_empty_histogram_has_no_estimates():
    h = histogram([], "ns")
    assert h == {"unit": "ns", "buckets": {}, "count": 0, "mean": None, "p50": None, "p99": None}
    assert histogram(None, "ns")["count"] == 0


def test_values_below_zero_are_counted_apart():
    h = histogram([{"max": -1, "count": 3}, {"min": 4, "max": 7, "count": 1}], "ns")
    assert h["negative"] == 3 and h["count"] == 1 and h["buckets"] == {"4": 1}


# -- the script ------------------------------------------------------------------------------


def test_the_script_attaches_the_probes_in_the_order_the_costs_are_named():
    text = script()
    assert re.findall(r"^tracepoint:(\S+)", text, re.MULTILINE) == list(PROBES)
    assert "hist(" in text and "printf" not in text  # maps only: no event leaves the kernel


def test_the_script_names_the_app_and_the_cpus():
    text = script(cpus=[0, 1], app_comm="sockperf")
    assert 'args->comm == "sockperf"' in text and 'args->next_comm == "sockperf"' in text
    assert "(cpu == 0 || cpu == 1)" in text


@pytest.mark.parametrize("name", ['a"b', "x\\y", "", "sixteen-chars-xx", "a\nb"])
def test_an_app_name_that_cannot_be_a_task_name_is_one_line(name):
    with pytest.raises(ConfigError, match="1 to 15 characters") as e:
        TraceSession(app_comm=name)
    assert "\n" not in str(e.value)


def test_cpus_must_be_cpu_numbers():
    with pytest.raises(ConfigError, match="CPU numbers"):
        TraceSession(cpus=[-1])
    assert TraceSession(cpus=[1, 0, 1]).cpus == [0, 1]


# -- the probes' cost ------------------------------------------------------------------------


def test_each_probe_costs_its_run_time_over_its_events():
    before = [{"prog_id": 10 + i, "run_time_ns": 100, "run_cnt": 1} for i in range(len(PROBES))]
    after = [
        {"prog_id": 10 + i, "run_time_ns": 100 + 500 * i, "run_cnt": 1 + i}
        for i in range(len(PROBES))
    ]
    o = overhead(before, after, 2.0, 2, stats="test")
    assert o["probes"]["irq:irq_handler_entry"]["ns_per_event"] is None  # no event
    assert o["probes"]["irq:softirq_entry"] == {
        "events": 3,
        "run_time_ns": 1500,
        "ns_per_event": 500.0,
    }
    assert o["run_time_ns"] == 500 * sum(range(len(PROBES)))
    assert o["cpu_share"] == o["run_time_ns"] / 4e9


def test_programs_that_do_not_match_the_probes_are_named_by_id():
    o = overhead([], [{"prog_id": 7, "run_time_ns": 50, "run_cnt": 2}], 1.0, 1, stats="test")
    assert o["probes"] == {"program 7": {"events": 2, "run_time_ns": 50, "ns_per_event": 25.0}}


def test_a_process_without_bpf_programs_has_no_statistics():
    assert read_prog_stats(os.getpid()) == []
    assert read_prog_stats(2**22 + 1) == []  # no such process


# -- the session against stand-ins for bpftrace ----------------------------------------------


def _stand_in(tmp_path: Path, body: str) -> str:
    path = tmp_path / "bpftrace"
    path.write_text(f"#!{sys.executable}\nimport signal, sys, time\n{body}")
    path.chmod(0o755)
    return str(path)


ANSWERS = f"""
if sys.argv[1:2] == ["--version"]:
    print("bpftrace v0.17.0"); sys.exit(0)
def stop(signum, frame):
    sys.stdout.write(open({str(SAMPLE)!r}).read().split("\\n", 1)[1]); sys.exit(0)
signal.signal(signal.SIGINT, stop)
print('{{"type": "attached_probes", "data": {{"probes": 9}}}}', flush=True)
print("__BPFTRACE_NOTIFY_PROBES_ATTACHED", file=sys.stderr, flush=True)
while True: time.sleep(1)
"""


@pytest.fixture
def as_if_root(monkeypatch):
    """The session's root-only steps left out: euid 0, tracefs and statistics untouched."""
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(TraceSession, "_mount", lambda self: None)
    monkeypatch.setattr(TraceSession, "_enable_stats", lambda self: None)


def _gone(pid: int, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_a_session_returns_the_maps_it_printed_at_the_end(tmp_path, as_if_root):
    with TraceSession(app_comm="python3", bpftrace=_stand_in(tmp_path, ANSWERS)) as t:
        t.start()
        d = t.stop()
    assert d["napi_poll"]["(no_device)"]["polls"] == 20000
    assert d["tool"] == "bpftrace v0.17.0"
    assert d["overhead"]["probes"] == {}  # a stand-in loads no program
    assert d["window_s"] > 0 and json.loads(json.dumps(d)) == d  # JSON-ready


def test_leaving_the_context_by_an_exception_kills_bpftrace(tmp_path, as_if_root):
    t = TraceSession(bpftrace=_stand_in(tmp_path, ANSWERS))
    with pytest.raises(KeyboardInterrupt), t:
        t.start()
        pid = t.pid
        raise KeyboardInterrupt
    assert pid is not None and _gone(pid)


def test_a_missed_sigint_is_sent_again(tmp_path, as_if_root):
    misses_one = ANSWERS.replace(
        "signal.signal(signal.SIGINT, stop)",
        "signal.signal(signal.SIGINT, lambda s, f: signal.signal(signal.SIGINT, stop))",
    )
    with TraceSession(bpftrace=_stand_in(tmp_path, misses_one)) as t:
        t.start()
        started = time.monotonic()
        d = t.stop()
    assert d["napi_poll"]["(no_device)"]["polls"] == 20000
    assert time.monotonic() - started < 5


def test_bpftrace_that_never_stops_is_killed_with_one_line(tmp_path, as_if_root, monkeypatch):
    monkeypatch.setattr(tracing_mod, "STOP_TIMEOUT_S", 2.0)
    deaf = ANSWERS.replace(
        "signal.signal(signal.SIGINT, stop)", "signal.signal(signal.SIGINT, signal.SIG_IGN)"
    )
    with TraceSession(bpftrace=_stand_in(tmp_path, deaf)) as t:
        t.start()
        with pytest.raises(TraceError, match=r"did not print its maps within 2 s"):
            t.stop()
        assert t.proc is not None and t.proc.returncode is not None


def test_bpftrace_that_fails_is_one_line_with_its_error(tmp_path, as_if_root):
    fails = _stand_in(
        tmp_path,
        'print("ERROR: Unknown error -1: couldn\'t set RLIMIT_MEMLOCK", file=sys.stderr)\n'
        "print('stdin:3:1-20: ERROR: tracepoint not found: napi:napi_poll', file=sys.stderr)\n"
        "sys.exit(1)\n",
    )
    with pytest.raises(TraceError) as e, TraceSession(bpftrace=fails) as t:
        t.start()
    assert str(e.value) == (
        "bpftrace failed (exit 1): stdin:3:1-20: ERROR: tracepoint not found: napi:napi_poll"
    )


def test_bpftrace_that_does_not_attach_in_time_is_killed(tmp_path, as_if_root):
    hangs = _stand_in(tmp_path, "print(sys.argv, file=sys.stderr, flush=True)\ntime.sleep(60)\n")
    t = TraceSession(bpftrace=hangs, start_timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(TraceError, match=r"did not attach its probes within 0\.5 s"), t:
        t.start()
    assert time.monotonic() - started < 10
    assert t.proc is not None and t.proc.returncode is not None  # reaped: killed


def test_without_root_or_bpftrace_start_says_why(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(TraceError, match=r"^not root \(tracepoints need root\)$"):
        TraceSession().start()
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(TraceError, match="bpftrace not found"):
        TraceSession().start()


# -- the bundle ------------------------------------------------------------------------------


def test_the_recorded_bundle_reads_back_with_its_distributions_and_settings():
    b = load_bundle(BUNDLE)
    assert b.manifest["tracing"] == TRACED
    assert b.distributions is not None and b.settings is not None
    assert b.manifest["driver"] == b.settings["driver"]
    assert b.settings["scenario"].startswith("#") or "[" in b.settings["scenario"]
    napi = b.distributions["napi_poll"]["(no_device)"]
    assert napi["polls"] > 0 and napi["packets_per_poll"]["mean"] >= 1
    t = summarize_trace(b.distributions)
    assert t == b.summary["traced"]
    entry = b.distributions["overhead"]["probes"]["irq:softirq_entry"]
    assert entry["events"] > 0 and entry["ns_per_event"] > 0


def test_a_bundle_without_the_new_files_still_reads(tmp_path):
    shutil.copytree(BUNDLE, tmp_path / "b")
    (tmp_path / "b" / "distributions.json").unlink()
    (tmp_path / "b" / "settings.json").unlink()
    b = load_bundle(tmp_path / "b")
    assert b.distributions is None and b.settings is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"format": ', "distributions.json: not JSON"),
        ('{"format": "other", "format_version": 1, "net_rx": {}, "napi_poll": {}, '
         '"overhead": {}}', "distributions.json: format 'other'"),
        ('{"format": "irqlab-distributions", "format_version": 1}',
         "distributions.json: no net_rx, napi_poll, overhead"),
        ('{"format": "irqlab-distributions", "format_version": 9, "net_rx": {}, '
         '"napi_poll": {}, "overhead": {}}', "distributions.json: format version 9"),
        ('{"format": "irqlab-distributions", "format_version": 1, "net_rx": [], '
         '"napi_poll": {}, "overhead": {}}', "distributions.json: net_rx is not an object"),
    ],
)  # fmt: skip
def test_a_damaged_distributions_file_is_one_line_naming_it(tmp_path, text, expected):
    shutil.copytree(BUNDLE, tmp_path / "b")
    (tmp_path / "b" / "distributions.json").write_text(text)
    with pytest.raises(BundleError) as e:
        load_bundle(tmp_path / "b")
    assert expected in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{", "settings.json: not JSON"),
        ('{"iface": "eth0"}', "settings.json: no driver, settings, scenario"),
    ],
)
def test_a_damaged_settings_file_is_one_line_naming_it(tmp_path, text, expected):
    shutil.copytree(BUNDLE, tmp_path / "b")
    (tmp_path / "b" / "settings.json").write_text(text)
    with pytest.raises(BundleError) as e:
        load_bundle(tmp_path / "b")
    assert expected in str(e.value) and "\n" not in str(e.value)


def test_the_bundle_is_written_and_read_back_with_its_new_files(tmp_path):
    b = load_bundle(BUNDLE)
    write_bundle(b, tmp_path / "b")
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == sorted(
        p.name for p in BUNDLE.iterdir()
    )
    assert load_bundle(tmp_path / "b") == b


# -- the command -----------------------------------------------------------------------------


def test_no_trace_records_the_counters_and_the_settings(tmp_path):
    out = tmp_path / "b"
    r = CliRunner().invoke(main, ["measure", "--seconds", "0.1", "--no-trace", "-o", str(out)])
    assert r.exit_code == 0, r.output
    lines = [line for line in r.output.splitlines() if "counters" in line]
    if ROOT:
        assert lines == ["only the counters are recorded: --no-trace"]
    else:
        assert lines == ["only the counters are recorded: not root (tracepoints need root)"]
    b = load_bundle(out)
    assert b.distributions is None and not (out / "distributions.json").exists()
    assert (b.settings is None) == (b.manifest["settings"] is None)


def test_a_bad_app_name_on_the_command_line_is_one_line(tmp_path):
    r = CliRunner().invoke(main, ["measure", "--seconds", "0.1", "--app-comm", 'a"b'])
    assert r.exit_code == 2
    assert len(r.output.strip().splitlines()) == 1 and "--app-comm" in r.output


@as_root
def test_without_bpftrace_the_counters_are_recorded_and_one_line_says_why(tmp_path, monkeypatch):
    monkeypatch.setattr(tracing_mod.shutil, "which", lambda name: None)
    out = tmp_path / "b"
    r = CliRunner().invoke(main, ["measure", "--seconds", "0.1", "-o", str(out)])
    assert r.exit_code == 0, r.output
    lines = [line for line in r.output.splitlines() if "counters" in line]
    assert lines == [
        "only the counters are recorded: bpftrace not found (install it: apt-get install bpftrace)"
    ]
    assert load_bundle(out).manifest["tracing_reason"].startswith("bpftrace not found")


# -- as root, on this kernel -----------------------------------------------------------------


@as_root
def test_the_statistics_switch_is_put_back(monkeypatch):
    sysctl = Path("/proc/sys/kernel/bpf_stats_enabled")
    old = sysctl.read_text()
    t = TraceSession()
    t._enable_stats()  # the BPF_ENABLE_STATS descriptor: the switch is left alone
    assert "BPF_ENABLE_STATS" in t._stats and sysctl.read_text() == old
    t.close()
    monkeypatch.setattr(tracing_mod, "_enable_stats_fd", lambda: None)  # an older kernel
    t = TraceSession()
    t._enable_stats()
    assert "kernel.bpf_stats_enabled" in t._stats and sysctl.read_text().strip() == "1"
    t.close()
    assert sysctl.read_text() == old


def _tracefs_mounted() -> bool:
    return any(
        line.split()[1:3] == ["/sys/kernel/tracing", "tracefs"]
        for line in Path("/proc/self/mounts").read_text().splitlines()
    )


SEND = """
import socket, sys, time
n, until = int(sys.argv[1]), time.monotonic() + float(sys.argv[2])
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); r.bind(("127.0.0.1", 0))
r.setblocking(False)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sent = 0
while sent < n and time.monotonic() < until:
    s.sendto(b"x" * 64, r.getsockname()); sent += 1
    try:
        while True: r.recv(2048)
    except BlockingIOError: pass
print(sent)
"""


@pytest.fixture
def netns():
    """A network namespace of the test's own with its loopback up, deleted afterwards."""
    name = f"irqlab-test-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


def _bpftrace_pids() -> set[int]:
    pids = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if (d / "comm").read_text().strip() == "bpftrace":
                    pids.add(int(d.name))
            except OSError:
                pass
    return pids


@pytest.mark.slow
@as_root
def test_a_real_session_over_udp_in_a_namespace(netns):
    mounted_before = _tracefs_mounted()
    with TraceSession() as t:
        t.start()
        pid = t.pid
        sent = subprocess.run(
            ["ip", "netns", "exec", netns, sys.executable, "-c", SEND, "20000", "1"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        d = t.stop()
    assert int(sent.stdout) > 0
    assert sum(e["polls"] for e in d["napi_poll"].values()) > 0
    assert d["napi_poll"]["(no_device)"]["packets"] > 0  # loopback's backlog
    runs = [e["runs"]["inline"] + e["runs"]["ksoftirqd"] for e in d["net_rx"].values()]
    assert sum(runs) > 0
    probes = d["overhead"]["probes"]
    assert list(probes) == list(PROBES)
    assert probes["irq:softirq_entry"]["events"] > 0
    assert 0 < probes["irq:softirq_entry"]["ns_per_event"] < 1e6
    assert 0 < d["overhead"]["cpu_share"] < 1
    # each program's statistics are its probe's: loopback's datagrams are polled one by one
    polls = sum(e["polls"] for e in d["napi_poll"].values())
    assert int(sent.stdout) / 2 <= probes["napi:napi_poll"]["events"] <= polls
    assert probes["irq:softirq_entry"]["events"] >= sum(runs) / 2  # every softirq, not only NET_RX
    assert _tracefs_mounted() == mounted_before
    assert pid is not None and _gone(pid)


CHILD = """
import sys, time
from irqlab.ops.measure.tracing import TraceSession, read_prog_stats
t = TraceSession()
t.start()
ids = [p["prog_id"] for p in read_prog_stats(t.pid)]
print(t.pid, *ids, flush=True)
time.sleep(60)
"""


def _programs_held(prog_ids: set[int]) -> set[int]:
    """Those of ``prog_ids`` that a process on this host still holds a descriptor of (an
    attached tracepoint holds its program through bpftrace's descriptors)."""
    held = set()
    for fdinfo in Path("/proc").glob("[0-9]*/fdinfo/*"):
        try:
            text = fdinfo.read_text()
        except OSError:
            continue
        m = re.search(r"^prog_id:\s+(\d+)$", text, re.MULTILINE)
        if m and int(m[1]) in prog_ids:
            held.add(int(m[1]))
    return held


@pytest.mark.slow
@as_root
def test_killing_the_measuring_process_leaves_no_bpftrace_and_no_program():
    mounted_before = _tracefs_mounted()
    import irqlab

    # the child imports the irqlab these tests import (the work tree's, or the installed one)
    env = {**os.environ, "PYTHONPATH": str(Path(irqlab.__file__).parents[1])}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert child.stdout is not None
        pid, *prog_ids = (int(w) for w in child.stdout.readline().split())
        child.stdout.close()
        assert len(prog_ids) == len(PROBES)
        assert pid in _bpftrace_pids()
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=5)
        assert _gone(pid)  # PR_SET_PDEATHSIG
        held = _programs_held(set(prog_ids))
        assert held == set()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    # tracefs as it was: mounted, where it had to be, through a watchdog that unmounts it
    assert _wait_for(lambda: _tracefs_mounted() == mounted_before, 10.0), "tracefs left mounted"


@pytest.mark.slow
@as_root
def test_the_command_records_the_tracepoints_by_default_as_root(tmp_path):
    mounted_before = _tracefs_mounted()
    before = _bpftrace_pids()
    out = tmp_path / "b"
    r = CliRunner().invoke(
        main, ["measure", "--seconds", "0.5", "--app-comm", "python3", "-o", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert "only the counters" not in r.output
    assert "probes' cost:" in r.output
    b = load_bundle(out)
    assert b.manifest["tracing"] == TRACED
    assert b.manifest["tracing_reason"].startswith("root and bpftrace")
    assert b.distributions is not None and b.distributions["app_comm"] == "python3"
    assert list(b.distributions["overhead"]["probes"]) == list(PROBES)
    assert b.summary["traced"] == summarize_trace(b.distributions)
    assert _tracefs_mounted() == mounted_before
    assert not [p for p in _bpftrace_pids() - before if _parent(p) == os.getpid()]


def _parent(pid: int) -> int | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    m = re.search(r"^PPid:\s+(\d+)$", status, re.MULTILINE)
    return int(m[1]) if m else None


# -- `irqlab measure` stopped at any moment puts the host back -------------------------------


def _wait_for(ok: Callable[[], Any], within_s: float) -> Any:
    """``ok()`` once it is true, polled until ``within_s`` has passed (then its last value)."""
    deadline = time.monotonic() + within_s
    while not (found := ok()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def _running(pid: int) -> bool:
    """``pid`` exists and has not ended (a zombie, ended and not yet reaped, has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def _children(pid: int) -> dict[int, str]:
    """The processes whose parent is ``pid``: each one's command line."""
    found = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and _parent(int(d.name)) == pid:
            with contextlib.suppress(OSError):
                found[int(d.name)] = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    return found


def _perf_events(pid: int) -> int:
    """How many perf events ``pid`` holds: bpftrace holds one per attached tracepoint."""
    try:
        links = [os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()]
    except OSError:
        return 0
    return links.count("anon_inode:[perf_event]")


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


@pytest.fixture
def tracefs_unmounted():
    """No tracing directory mounted, as on a host that does not mount tracefs at boot (the
    case where ``measure`` mounts it); the mounts as they were put back afterwards."""
    dirs = ("/sys/kernel/tracing", "/sys/kernel/debug/tracing")
    was = [d for d in dirs if tracing_mod.mounted(d)]
    for d in reversed(was):
        subprocess.run(["umount", d], check=True, timeout=10)
    try:
        assert not any(tracing_mod.mounted(d) for d in dirs)
        yield
    finally:
        for d in dirs:
            if d in was and not tracing_mod.mounted(d):
                subprocess.run(["mount", "-t", "tracefs", "nodev", d], check=False, timeout=10)
            elif d not in was and tracing_mod.mounted(d):
                subprocess.run(["umount", d], check=False, timeout=10)


def _start_measure(out: Path, path: str | None = None) -> subprocess.Popen[str]:
    import irqlab

    # the irqlab these tests import (the work tree's, or the installed one)
    env = {**os.environ, "PYTHONPATH": str(Path(irqlab.__file__).parents[1])}
    if path is not None:
        env["PATH"] = f"{path}:{env.get('PATH', '')}"
    return subprocess.Popen(
        [sys.executable, "-m", "irqlab", "measure", "--seconds", "5", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _stop_measure(measure: subprocess.Popen[str], how: int, attached: bool) -> tuple[str, set[int]]:
    """Waits until ``measure``'s bpftrace runs (and, if ``attached``, has attached its probes
    and the window is under way) with tracefs mounted through its watchdog, sends ``how``,
    and returns its stderr once it has ended and the processes it had started."""
    try:

        def started() -> dict[int, str]:
            children = _children(measure.pid)
            tracer = [p for p in children if _comm(p) == "bpftrace"]
            if not tracer or (attached and _perf_events(tracer[0]) < len(PROBES)):
                return {}
            return children

        children = _wait_for(started, 30.0)
        assert children, "bpftrace did not start"
        watchdogs = [p for p, cmd in children.items() if "watchdog.py" in cmd]
        assert len(watchdogs) == 1, "tracefs not mounted through a watchdog"
        assert _tracefs_mounted(), "measure did not mount tracefs"
        if attached:
            time.sleep(1.0)  # in the 5 s window
        measure.send_signal(how)
        _, stderr = measure.communicate(timeout=30)
    finally:
        if measure.poll() is None:
            measure.kill()
            measure.communicate()
    return stderr, set(children)


def _assert_put_back(started: set[int]) -> None:
    # bpftrace died with irqlab (PR_SET_PDEATHSIG); the watchdog unmounted tracefs and ended
    assert _wait_for(lambda: not any(map(_running, started)), 10.0), "a process left running"
    assert _wait_for(lambda: not _tracefs_mounted(), 10.0), "tracefs left mounted"


@pytest.mark.slow
@as_root
def test_a_measure_killed_while_tracing_puts_tracefs_back(tmp_path, tracefs_unmounted):
    # SIGKILL, which irqlab cannot see: bpftrace dies with it, and the watchdog that tracefs
    # was mounted through unmounts it
    measure = _start_measure(tmp_path / "m")
    _, started = _stop_measure(measure, signal.SIGKILL, attached=False)
    assert measure.returncode == -signal.SIGKILL
    _assert_put_back(started)


@pytest.mark.slow
@as_root
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM])
def test_a_measure_stopped_in_its_window_writes_its_bundle_and_puts_tracefs_back(
    tmp_path, tracefs_unmounted, how
):
    measure = _start_measure(tmp_path / "m")
    stderr, started = _stop_measure(measure, how, attached=True)
    assert measure.returncode == 0, stderr
    assert "Traceback" not in stderr
    assert re.fullmatch(r"window ended early by Ctrl-C: [0-9.]+ s", stderr.splitlines()[-1])
    b = load_bundle(tmp_path / "m")
    assert b.manifest["interrupted"] is True and b.manifest["tracing"] == TRACED
    _assert_put_back(started)


@pytest.mark.slow
@as_root
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_a_measure_stopped_while_bpftrace_attaches_says_one_line_and_puts_tracefs_back(
    tmp_path, tracefs_unmounted, how
):
    # a bpftrace that never says its probes are attached: the signal comes while irqlab
    # waits for it
    (tmp_path / "bin").mkdir()
    _stand_in(tmp_path / "bin", "time.sleep(60)\n")
    measure = _start_measure(tmp_path / "m", path=str(tmp_path / "bin"))
    stderr, started = _stop_measure(measure, how, attached=False)
    if how == signal.SIGKILL:
        assert measure.returncode == -signal.SIGKILL
    else:
        word = "interrupted" if how == signal.SIGINT else "terminated"
        assert measure.returncode == 128 + how
        assert stderr.splitlines() == [f"irqlab: {word}"], stderr
    assert not (tmp_path / "m").exists()
    _assert_put_back(started)
