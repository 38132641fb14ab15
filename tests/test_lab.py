"""`irqlab lab`: its plan checked before anything is made (each bad option one line naming it
and the allowed range), a point's figures computed from recorded readings as by hand, the
sender's pacing, the stale namespaces told apart from a running lab's — and, as root, a real
sweep between two namespaces whose output is checked, and the lab killed (SIGKILL, SIGTERM,
Ctrl-C) during its setup and during a point, after which no namespace, process or changed
sysctl is left."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from irqlab.cli import main
from irqlab.errors import ConfigError
from irqlab.ops.lab import LabError, Plan, check, measured, parse_rates, parse_threaded
from irqlab.ops.lab.load import pacing, parse_sender
from irqlab.ops.lab.measured import counted_packets_per_poll, counts, from_trace, thread_shares
from irqlab.ops.lab.netns import (
    STATE_DIR,
    netns_names,
    other_labs,
    parse_features,
    remove_stale,
    restore_stale,
    stale_netns,
)
from irqlab.ops.lab.plan import MAX_RATE_PPS, SETUP_S
from irqlab.ops.lab.sweep import preflight, run_lab, trace_session

ROOT = os.geteuid() == 0
as_root = pytest.mark.skipif(not ROOT, reason="the lab needs root (CI runs as root)")


# -- the plan ------------------------------------------------------------------------------


def test_rates_take_k_and_m_suffixes():
    assert parse_rates("20k, 50000,1.5e5,0.2M") == (20e3, 50e3, 150e3, 200e3)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("fast", "--rates 'fast': not a rate"),
        ("0", f"--rates 0: each rate is 1 to {MAX_RATE_PPS:,.0f} messages/s"),
        ("-5k", "--rates -5k: each rate is 1 to"),
        ("9M", "--rates 9M: each rate is 1 to"),
        ("nan", "--rates nan: each rate is 1 to"),
        ("10k,10000", "a rate is given twice"),
        ("10k,", "--rates '': not a rate"),
    ],
)
def test_a_bad_rate_is_one_line_naming_the_option(text: str, said: str):
    with pytest.raises(ConfigError) as e:
        parse_rates(text)
    assert said in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("text", ["yes", "on,on", "", "off,maybe"])
def test_threaded_is_off_on_or_both(text: str):
    with pytest.raises(ConfigError, match=r"--threaded .*: off, on or off,on"):
        parse_threaded(text)
    assert parse_threaded("on, off") == (True, False)


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"app_core": 5}, "--app-core 5: this host runs irqlab on CPUs 0 to 1"),
        ({"sender_core": -1}, "--sender-core -1: this host runs irqlab on CPUs 0 to 1"),
        ({"napi_core": 2}, "--napi-core 2: this host runs irqlab on CPUs 0 to 1"),
        ({"seconds": 0.1}, "--seconds 0.1: 0.5 to 60 s"),
        ({"size_bytes": 9000}, "--size 9000: 14 to 1472 bytes of UDP payload"),
        ({"repeats": 0}, "--repeats 0: 1 to 10"),
        ({"netdev_budget": 0}, "--budget 0: 1 to"),
        ({"rcvbuf_bytes": 10}, "--rcvbuf 10: 1024 to"),
        ({"busy_read_us": -1}, "--busy-read -1: 0 to"),
        ({"rates_pps": ()}, "--rates: give at least one rate"),
    ],
)
def test_a_bad_option_is_one_line_naming_it_and_its_range(changes: dict[str, Any], said: str):
    with pytest.raises(ConfigError) as e:
        check(Plan(cpus=(0, 1), **changes))
    assert str(e.value) == said or str(e.value).startswith(said)


def test_cpus_not_in_one_range_are_listed():
    with pytest.raises(ConfigError, match=r"--app-core 1: this host runs irqlab on CPUs 0, 2$"):
        check(Plan(cpus=(0, 2)))


def test_the_default_sweep_fits_in_five_minutes_and_a_longer_one_is_refused():
    plan = check(Plan(cpus=(0, 1)))
    assert len(plan.points()) == 16 and plan.estimate_s() < 300
    assert [p.name for p in plan.points()][:2] == ["off-r20000-0", "off-r50000-0"]
    assert plan.points()[-1].name == "on-r400000-0"
    with pytest.raises(ConfigError, match=r"more than --max-minutes 5: fewer rates"):
        check(Plan(cpus=(0, 1), repeats=3, seconds=10))
    long = check(Plan(cpus=(0, 1), repeats=3, seconds=10, max_minutes=30))
    assert long.estimate_s() > 300
    # traced, each point runs twice (untraced, then traced)
    traced = check(Plan(cpus=(0, 1), trace=True, max_minutes=30))
    assert traced.estimate_s() - SETUP_S == pytest.approx(2 * (plan.estimate_s() - SETUP_S))


def test_the_napi_thread_goes_with_the_app_unless_told():
    assert Plan(cpus=(0, 1)).napi_thread_core == 1
    assert Plan(cpus=(0, 1), napi_core=0).napi_thread_core == 0


def test_without_root_the_lab_says_so_in_one_line():
    with pytest.raises(LabError, match=r"^irqlab lab needs root: it creates network namespaces"):
        preflight(Plan(cpus=(0, 1)), euid=1000)


def test_without_sockperf_the_lab_names_the_package_to_install(monkeypatch: pytest.MonkeyPatch):
    import shutil

    real = shutil.which
    monkeypatch.setattr(shutil, "which", lambda p: None if p == "sockperf" else real(p))
    with pytest.raises(LabError, match=r"^sockperf: not found; install the package sockperf$"):
        preflight(Plan(cpus=(0, 1)), euid=0)


def test_without_root_the_command_says_so_in_one_line(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    r = CliRunner().invoke(main, ["lab", "--rates", "20k", "--seconds", "1"])
    assert r.exit_code == 2
    assert r.output.strip().splitlines()[-1] == (
        "irqlab: error: irqlab lab needs root: it creates network namespaces, a veth pair and "
        "sets sysctls"
    )


def test_bad_options_on_the_command_line_are_one_line_and_status_2():
    r = CliRunner().invoke(main, ["lab", "--rates", "10k,abc"])
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [
        "irqlab: error: --rates 'abc': not a rate (messages/s, e.g. 20k,50k,100000)"
    ]
    r = CliRunner().invoke(main, ["lab", "--app-core", "4096"])
    assert r.exit_code == 2 and "--app-core 4096: this host runs irqlab on CPUs" in r.output


# -- a point's figures ---------------------------------------------------------------------


def _reading(out: int, ind: int, rcvbuf_err: int, ksd: tuple[int, int], napi: int | None) -> dict:
    ns: dict[str, int | None] = {"ksoftirqd/0": ksd[0], "ksoftirqd/1": ksd[1]}
    if napi is not None:
        ns["napi/veth1-259"] = napi
    return {
        "tx_udp": {"OutDatagrams": out, "InDatagrams": 0},
        "rx_udp": {"InDatagrams": ind, "RcvbufErrors": rcvbuf_err},
        "tx_dev": {"tx_dropped": 3},
        "rx_dev": {"rx_dropped": 0},
        "schedstat_ns": ns,
    }


SUMMARY = {
    "cpus": [
        {"cpu": 0, "softirq_share": 0.35, "packets_per_s": 150_000.0, "net_rx_per_s": 100_000.0},
        {"cpu": 1, "softirq_share": 0.01, "packets_per_s": 0.0, "net_rx_per_s": 20_000.0},
    ]
}


def test_a_points_figures_from_its_readings_as_by_hand():
    before = _reading(1_000, 900, 5, (10_000_000, 20_000_000), None)
    after = _reading(301_000, 280_900, 20_005, (40_000_000, 20_000_000), None)
    m = measured(SUMMARY, before, after, 2.0, threaded=False)
    assert m == {
        "sent_pps": 150_000.0,
        "app_pps": 140_000.0,
        "socket_drop_ratio": 20_000 / 300_000,
        "ring_drop_ratio": 0.0,
        "net_rx_share": {"0": 0.35, "1": 0.01},
        "ksoftirqd_share": {"0": 0.015, "1": 0.0},
        "napi_thread_share": None,
        "packets_per_poll": 150_000 / 120_000,
        "packets_per_poll_hist": None,
        "app_wakeup_us": None,
        "app_wakeups_per_packet": None,
    }
    assert counts(before, after) == {
        "sent": 300_000,
        "received": 280_000,
        "socket_drops": 20_000,
        "veth_tx_dropped": 0,
        "veth_rx_dropped": 0,
    }


def test_threaded_the_napi_threads_time_counts_and_no_poll_count_without_tracing():
    before = _reading(0, 0, 0, (0, 0), 1_000_000_000)
    after = _reading(100, 100, 0, (0, 0), 1_600_000_000)
    m = measured(SUMMARY, before, after, 1.0, threaded=True)
    assert m["napi_thread_share"] == pytest.approx(0.6)
    assert m["packets_per_poll"] is None and m["socket_drop_ratio"] == 0.0


def test_with_tracing_packets_per_poll_and_wakeups_come_from_the_distributions():
    dist = {
        "napi_poll": {
            "veth1": {
                "polls": 33,
                "packets": 70,
                "full_budget": 0,
                "packets_per_poll": {
                    "unit": "packets",
                    "buckets": {"0": 10, "1": 10, "2": 5, "4": 8},
                },
            },
            "lo": {"polls": 5, "packets": 5},
        },
        "app_wakeup_us": {
            "unit": "us",
            "buckets": {"8": 35},
            "count": 35,
            "mean": 12.0,
            "p50": 8.0,
            "p99": 60.0,
        },
        "overhead": {},
    }
    before = _reading(0, 0, 0, (0, 0), 0)
    after = _reading(10, 10, 0, (0, 0), 0)
    m = measured(SUMMARY, before, after, 1.0, threaded=True, distributions=dist)
    # the receiving veth's polls that found work: 70 packets in 23 of the 33
    assert m["packets_per_poll"] == pytest.approx(70 / 23)
    assert m["packets_per_poll_hist"] == {"0": 10, "1": 10, "2": 5, "4": 8}
    # 35 wake-ups for the veth's 70 packets: every second packet found the app asleep
    assert m["app_wakeup_us"] == {"mean": 12.0, "p50": 8.0, "p99": 60.0, "per_packet": 0.5}
    assert m["app_wakeups_per_packet"] == 0.5
    assert from_trace({}) == (None, None, None)


def test_datagrams_the_veth_dropped_were_sent_all_the_same():
    # veth's ring full: udp_send_skb counts the drop in SndbufErrors, not OutDatagrams
    before = _reading(1_000, 1_000, 0, (0, 0), None)
    after = _reading(61_000, 61_000, 0, (0, 0), None)
    before["tx_udp"]["SndbufErrors"], after["tx_udp"]["SndbufErrors"] = 7, 40_007
    before["tx_dev"]["tx_dropped"], after["tx_dev"]["tx_dropped"] = 7, 40_007
    m = measured(SUMMARY, before, after, 1.0, threaded=True)
    assert m["sent_pps"] == 100_000 and m["app_pps"] == 60_000 and m["socket_drop_ratio"] == 0
    assert m["ring_drop_ratio"] == pytest.approx(0.4)
    c = counts(before, after)
    assert c["sent"] == 100_000 and c["veth_tx_dropped"] == 40_000


def test_each_tasks_time_on_a_cpu_and_waiting_for_one():
    before = {"schedstat_ns": {"receiver": 100, "gone": 5}, "schedwait_ns": {"receiver": 0}}
    after = {
        "schedstat_ns": {"receiver": 500_000_100, "gone": None},
        "schedwait_ns": {"receiver": 250_000_000},
    }
    assert thread_shares(before, after, 2.0) == {"receiver": 0.25}
    assert thread_shares(before, after, 2.0, "schedwait_ns") == {"receiver": 0.125}


def test_counters_that_went_backwards_or_are_missing_count_nothing():
    before = _reading(500, 500, 10, (5, 5), None)
    after = _reading(100, 100, 0, (1, 1), None)  # reset between the readings
    m = measured({"cpus": []}, before, after, 1.0, threaded=False)
    assert m["sent_pps"] == 0 and m["app_pps"] == 0 and m["socket_drop_ratio"] == 0
    assert m["ksoftirqd_share"] == {} and m["packets_per_poll"] is None
    assert counted_packets_per_poll({"cpus": [{"packets_per_s": 5.0, "net_rx_per_s": 0}]}) is None


def test_pacing_from_the_senders_counts():
    samples = [(0.0, 0), (0.05, 5_000), (0.10, 10_000), (0.15, 15_000), (0.20, 20_000)]
    p = pacing(samples, 100_000)
    assert p["achieved_pps"] == pytest.approx(100_000)
    assert p["error"] == pytest.approx(0, abs=1e-9)
    assert p["interval_cv"] == pytest.approx(0, abs=1e-9) and p["intervals"] == 4
    uneven = pacing([(0.0, 0), (0.05, 4_000), (0.10, 10_000)], 100_000)
    assert uneven["interval_cv"] == pytest.approx(0.282843, rel=1e-5)
    assert pacing([(0.0, 0)], 1.0)["achieved_pps"] is None


def test_sockperfs_totals_are_read():
    text = (
        "sockperf: Total of 300112 messages sent in 2.000 sec\n\n"
        "sockperf: Summary: Message Rate is 150021 [msg/sec]\n"
    )
    assert parse_sender(text) == {"messages": 300112.0, "seconds": 2.0, "rate_pps": 150021.0}
    assert parse_sender("nothing") == {}


def test_trace_without_tracing_in_this_irqlab_is_one_line(monkeypatch: pytest.MonkeyPatch):
    import irqlab.ops.measure

    monkeypatch.delattr(irqlab.ops.measure, "tracing", raising=False)
    monkeypatch.setitem(sys.modules, "irqlab.ops.measure.tracing", None)  # cannot be imported
    with pytest.raises(ConfigError, match=r"^--trace: this irqlab records no tracepoints yet"):
        trace_session()


def test_only_the_namespaces_of_a_gone_lab_are_stale():
    names = ["irqlab-10-tx", "irqlab-10-rx", "irqlab-11-rx", "other", "irqlab-x-tx"]
    assert stale_netns(names, alive=lambda pid: pid == 11) == ["irqlab-10-tx", "irqlab-10-rx"]
    assert netns_names(42) == ("irqlab-42-tx", "irqlab-42-rx")
    # a lab that runs is not stale: it is another lab, and this one will not start beside it
    assert other_labs(names, alive=lambda pid: pid in (11, 12), me=12) == [11]
    assert other_labs(names, alive=lambda pid: pid in (11, 12), me=11) == []


def test_a_gone_labs_state_file_is_put_back_and_removed(tmp_path: Path):
    (tmp_path / "lab-10.json").write_text(
        json.dumps({"netns": [], "sysctls": [["net.core.somaxconn", "4096"]]})
    )  # a name the restoring does not write: only the lab's own knobs are
    (tmp_path / "lab-11.json").write_text("{}")  # the running lab's
    (tmp_path / "lab-12.json").write_text("not json")  # damaged: dropped
    (tmp_path / "other.json").write_text("{}")
    said: list[str] = []
    assert restore_stale(said.append, tmp_path, alive=lambda pid: pid == 11) == [10]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lab-11.json", "other.json"]
    assert said == [
        "restored what a lab that is gone (irqlab pid 10) had set: net.core.somaxconn = 4096"
    ]
    assert restore_stale(said.append, tmp_path / "absent") == []


def test_ethtools_features_are_read():
    text = "Features for veth1:\ngeneric-receive-offload: on\ntx-lockless: on [fixed]\n"
    assert parse_features(text) == {"generic-receive-offload": "on", "tx-lockless": "on"}


# -- as root: a real sweep, and the lab killed ----------------------------------------------

KNOBS = ("net.core.netdev_budget", "net.core.busy_read", "net.core.rmem_max")


def _sysctls() -> dict[str, str]:
    return {k: Path("/proc/sys/" + k.replace(".", "/")).read_text().strip() for k in KNOBS}


def _lab_netns(pid: int) -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=10)
    return [line.split()[0] for line in out.stdout.splitlines() if f"irqlab-{pid}-" in line]


def _netns_pids(name: str) -> set[int]:
    out = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True, timeout=10)
    return {int(p) for p in out.stdout.split() if p.isdigit()}


def _sockperfs(netns: str) -> set[int]:
    """The sockperf processes in ``netns`` (not a setup command passing through it)."""
    found = set()
    for pid in _netns_pids(netns):
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == "sockperf":
                found.add(pid)
        except OSError:
            pass
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in _state(pid)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def _start_lab(out: Path, *extra: str) -> subprocess.Popen[str]:
    budget, busy, _ = _sysctls().values()
    argv = [
        sys.executable, "-m", "irqlab", "lab", "--out", str(out),
        # knobs away from the host's, so that their restoring shows
        "--budget", str(int(budget) + 17), "--busy-read", str(int(busy) + 3),
        *extra,
    ]  # fmt: skip
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(what: Any, timeout_s: float) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if found := what():
            return found
        time.sleep(0.01)
    return None


def _assert_host_put_back(pid: int, sysctls: dict[str, str], processes: set[int]) -> None:
    assert _wait_for(lambda: not _lab_netns(pid), 10.0), f"left {_lab_netns(pid)}"
    assert _wait_for(lambda: not any(_alive(p) for p in processes), 10.0), "left processes"
    assert _wait_for(lambda: _sysctls() == sysctls, 10.0), f"{_sysctls()} != {sysctls}"
    state = STATE_DIR / f"lab-{pid}.json"
    assert _wait_for(lambda: not state.exists(), 10.0), f"left {state}"


@as_root
@pytest.mark.slow
def test_a_small_sweep_writes_its_points_and_puts_the_host_back(tmp_path: Path):
    before = _sysctls()
    out = tmp_path / "lab"
    # a receive buffer over rmem_max: rmem_max is raised for the lab, and written back
    rcvbuf = min(2 * int(before["net.core.rmem_max"]), 1 << 30)
    lab = _start_lab(out, "--rates", "30k,120k", "--seconds", "1", "--rcvbuf", str(rcvbuf))
    stdout, stderr = lab.communicate(timeout=120)
    assert lab.returncode == 0, stderr
    # the rates moved off the tick's multiples, and said so
    from irqlab.ops.lab.plan import off_tick
    from irqlab.ops.measure.bundle import host_hz

    hz = host_hz()
    low, high = (off_tick(r, hz) if hz else r for r in (30_000, 120_000))
    if hz:
        assert stderr.splitlines()[0] == (
            "lab: rates moved off the tick's multiples (--exact-rates: not): "
            f"30000→{low}, 120000→{high}"
        )
    assert stderr.splitlines()[-1].startswith("lab: 4 points, about ")
    names = [f"off-r{low}-0", f"off-r{high}-0", f"on-r{low}-0", f"on-r{high}-0"]
    lines = stdout.splitlines()
    assert [line.split(":")[0].strip() for line in lines[:4]] == names
    assert "socket drops" in lines[0] and "softirq CPU0" in lines[0]
    assert any(line.startswith("sender pacing: sockperf's rate") for line in lines)
    data = json.loads((out / "lab.json").read_text())
    assert data["format"] == "irqlab-lab" and data["format_version"] == 1
    for key, kind in [
        ("kernel", str), ("cpus", int), ("sender_core", int), ("app_core", int),
        ("napi_thread_core", int), ("size_bytes", int), ("seconds", float), ("settings", dict),
        ("pacing", dict), ("points", list), ("repeats", int),
    ]:  # fmt: skip
        assert isinstance(data[key], kind), key
    assert data["settings"]["netdev_budget"] == int(before["net.core.netdev_budget"]) + 17
    assert data["settings"]["rcvbuf_bytes"] == rcvbuf and data["settings"]["gro"] is True
    assert data["settings"]["rcvbuf_kernel_bytes"] == 2 * rcvbuf
    assert data["settings"]["sender_tso"] is False and data["settings"]["sender_gso"] is False
    assert [p["name"] for p in data["points"]] == names
    cpus = {str(c) for c in range(data["cpus"])}
    for p in data["points"]:
        m = p["measured"]
        assert set(m) == {
            "sent_pps", "app_pps", "socket_drop_ratio", "ring_drop_ratio", "net_rx_share",
            "ksoftirqd_share", "napi_thread_share", "packets_per_poll", "packets_per_poll_hist",
            "app_wakeup_us", "app_wakeups_per_packet",
        }  # fmt: skip
        assert set(m["net_rx_share"]) == cpus and set(m["ksoftirqd_share"]) == cpus
        shares = [*m["net_rx_share"].values(), *m["ksoftirqd_share"].values()]
        assert all(0 <= s <= 1 for s in shares)
        assert 0 <= m["socket_drop_ratio"] <= 1
        # light load: the sender near its rate (sockperf's own count over its run), and the
        # receiver keeps up (bounds wide enough for a VM whose cores are shared)
        if p["rate_pps"] == low:
            assert p["sender"]["rate_pps"] == pytest.approx(low, rel=0.05)
            assert m["sent_pps"] == pytest.approx(low, rel=0.2)
            assert m["app_pps"] == pytest.approx(m["sent_pps"], rel=0.1)
        # nothing is received that was not sent: the namespaces' counters since they were made
        after = json.loads((out / p["bundle"] / "lab_window.json").read_text())["after"]
        # (sent: OutDatagrams and SndbufErrors, a veth ring's drop being counted as the latter)
        sent = after["tx_udp"]["OutDatagrams"] + after["tx_udp"].get("SndbufErrors", 0)
        assert after["rx_udp"]["InDatagrams"] <= sent
        assert m["app_pps"] <= m["sent_pps"] * 1.02  # in-flight packets aside
        if p["threaded"]:
            assert m["napi_thread_share"] is not None and m["napi_thread_share"] > 0
            assert m["packets_per_poll"] is None
        else:
            assert m["napi_thread_share"] is None
            assert m["packets_per_poll"] is not None and m["packets_per_poll"] >= 1
        bundle = out / p["bundle"]
        for name in ("manifest.json", "counters_before.json", "counters_after.json"):
            assert (bundle / name).is_file(), name
        assert json.loads((bundle / "summary.json").read_text())["window_s"] > 0
    _assert_host_put_back(lab.pid, before, set())


@as_root
@pytest.mark.slow
@pytest.mark.parametrize("moment", ["setup", "point"])
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_the_lab_killed_leaves_nothing_behind(tmp_path: Path, moment: str, how: int):
    before = _sysctls()
    lab = _start_lab(tmp_path / "lab", "--rates", "100k", "--threaded", "on", "--seconds", "3")
    try:
        if moment == "setup":  # the first namespace made, the rest of the setup to come
            assert _wait_for(lambda: _lab_netns(lab.pid), 20.0), "no namespace made"
            processes: set[int] = set()
        else:  # the sender and the receiver both running

            def sockperfs() -> set[int]:
                tx, rx = (_sockperfs(f"irqlab-{lab.pid}-{end}") for end in ("tx", "rx"))
                return tx | rx if tx and rx else set()

            processes = _wait_for(sockperfs, 20.0)
            assert processes, "no sender started"
        lab.send_signal(how)
        _, stderr = lab.communicate(timeout=30)
    finally:
        if lab.poll() is None:
            lab.kill()
            lab.wait()
    if how == signal.SIGKILL:
        assert lab.returncode == -signal.SIGKILL
    else:
        word = "interrupted" if how == signal.SIGINT else "terminated"
        assert lab.returncode == 128 + how
        assert stderr.splitlines()[-1] == f"irqlab: {word}", stderr
    _assert_host_put_back(lab.pid, before, processes)


@as_root
@pytest.mark.slow
def test_a_traced_lab_killed_leaves_no_tracing_behind(tmp_path: Path):
    # SIGKILL while bpftrace traces a point: bpftrace dies with the lab (its programs and
    # their attachments go with its file descriptors), and the watchdog removes the rest
    before = _sysctls()
    mounted = _tracefs_mounted()
    lab = _start_lab(
        tmp_path / "lab", "--rates", "50k", "--threaded", "off", "--seconds", "3", "--trace"
    )
    try:

        def tracing() -> set[int]:
            return _pids_of("bpftrace") if _sockperfs(f"irqlab-{lab.pid}-tx") else set()

        traced = _wait_for(tracing, 40.0)
        assert traced, "no bpftrace tracing a point"
        lab.send_signal(signal.SIGKILL)
        lab.communicate(timeout=30)
    finally:
        if lab.poll() is None:
            lab.kill()
            lab.wait()
    _assert_host_put_back(lab.pid, before, traced)
    assert _wait_for(lambda: not _pids_of("bpftrace"), 10.0), "bpftrace left running"
    # tracefs as it was: the lab mounted it through its watchdog, which unmounts it
    assert _wait_for(lambda: _tracefs_mounted() == mounted, 10.0), "tracefs left mounted"


def _pids_of(comm: str) -> set[int]:
    out = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if (d / "comm").read_text().strip() == comm:
                    out.add(int(d.name))
            except OSError:
                continue
    return out


@as_root
@pytest.mark.slow
def test_namespaces_of_a_gone_lab_are_removed_in_one_line(tmp_path: Path):
    gone = subprocess.Popen(["true"])
    gone.wait()
    names = [f"irqlab-{gone.pid}-tx", f"irqlab-{gone.pid}-rx"]
    for name in names:
        subprocess.run(["ip", "netns", "add", name], check=True, timeout=10)
    try:
        from irqlab.ops.lab.netns import remove_stale

        said: list[str] = []
        removed = remove_stale(said.append)
        assert set(names) <= set(removed)
        assert not _lab_netns(gone.pid)
        assert len(said) == 1 and said[0].startswith("removed ") and names[0] in said[0]
    finally:
        for name in names:
            subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=10)


@as_root
@pytest.mark.slow
def test_a_traced_lab_measures_each_point_untraced_and_then_traced(tmp_path: Path):
    # the real tracing (bpftrace): each point's untraced window (what the calibration fits),
    # then its traced twin with the receiving veth's polls and sockperf's wake-ups; afterwards
    # no bpftrace left and tracefs as it was
    mounted = _tracefs_mounted()
    before = _sysctls()
    plan = check(Plan(rates_pps=(20_000.0,), threaded=(True,), seconds=1.0, trace=True))
    lab = run_lab(plan, tmp_path / "lab", lambda line: None)
    (point,) = lab["points"]
    untraced = json.loads((tmp_path / "lab" / point["bundle"] / "manifest.json").read_text())
    assert untraced["tracing"].startswith("not recorded")
    assert point["measured"]["packets_per_poll_hist"] is None  # threaded, untraced: no polls
    m = point["traced"]["measured"]
    assert m["packets_per_poll"] is not None and m["packets_per_poll"] >= 1.0
    hist = m["packets_per_poll_hist"]
    assert hist and sum(hist.values()) > 0
    assert m["app_wakeup_us"] is not None and m["app_wakeup_us"]["mean"] > 0
    traced = tmp_path / "lab" / point["traced"]["bundle"]
    written = json.loads((traced / "distributions.json").read_text())
    assert written["napi_poll"]["veth1"]["packets"] > 0
    assert "overhead" in written
    # what tracing costs the load: the top rate's untraced run beside its traced twin
    (cost,) = lab["tracing_overhead"]
    assert cost["threaded"] is True and cost["rate_pps"] == 20_000.0
    assert cost["untraced"]["sent_pps"] > 0 and cost["traced"]["sent_pps"] > 0
    assert cost["untraced_bundle"] == point["bundle"]
    assert cost["traced_bundle"] == point["traced"]["bundle"]
    # the calibration finds the twin's distributions
    from irqlab.calibration.distributions import traced_points
    from irqlab.calibration.lab import load_lab

    (tp,) = traced_points(load_lab(tmp_path / "lab"))
    assert sum(tp.hist.values()) == sum(hist.values()) and len(tp.wakeup) == 1
    _assert_host_put_back(os.getpid(), before, set())
    assert _tracefs_mounted() == mounted
    assert subprocess.run(["pgrep", "-x", "bpftrace"], capture_output=True).returncode == 1


def _tracefs_mounted() -> bool:
    return any(
        line.split()[1] == "/sys/kernel/tracing"
        for line in Path("/proc/mounts").read_text().splitlines()
        if len(line.split()) > 2
    )


@as_root
@pytest.mark.slow
def test_a_second_lab_does_not_start_beside_a_running_one(tmp_path: Path):
    before = _sysctls()
    first = _start_lab(tmp_path / "a", "--rates", "20k", "--threaded", "off", "--seconds", "3")
    try:
        assert _wait_for(lambda: _sockperfs(f"irqlab-{first.pid}-rx"), 20.0), "no receiver"
        second = subprocess.run(
            [sys.executable, "-m", "irqlab", "lab", "--out", str(tmp_path / "b")],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 2
        assert second.stderr.splitlines()[-1] == (
            f"irqlab: error: another irqlab lab is running (pid {first.pid}): one at a time, "
            "as the sysctls a lab sets are the host's"
        )
        assert _lab_netns(first.pid), "the running lab's namespaces were touched"
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    _assert_host_put_back(first.pid, before, set())


@as_root
@pytest.mark.slow
def test_when_the_lab_and_its_watchdog_die_together_the_next_lab_puts_the_host_back(
    tmp_path: Path,
):
    before = _sysctls()
    lab = _start_lab(tmp_path / "lab", "--rates", "20k", "--threaded", "off", "--seconds", "3")
    try:
        assert _wait_for(lambda: _sockperfs(f"irqlab-{lab.pid}-rx"), 20.0), "no receiver"
        state = STATE_DIR / f"lab-{lab.pid}.json"
        (watchdog,) = [
            int(p.name)
            for p in Path("/proc").iterdir()
            if p.name.isdigit() and str(state) in _cmdline(p)
        ]
        os.kill(watchdog, signal.SIGKILL)
        lab.kill()
    finally:
        if lab.poll() is None:
            lab.kill()
        lab.communicate(timeout=10)
    assert _lab_netns(lab.pid) and state.exists() and _sysctls() != before
    said: list[str] = []
    restore_stale(said.append)
    remove_stale(said.append)
    assert said[0].startswith(f"restored what a lab that is gone (irqlab pid {lab.pid}) had set: ")
    _assert_host_put_back(lab.pid, before, set())


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@pytest.mark.parametrize("hz", [100, 250, 300, 1000])
@pytest.mark.parametrize("rate", [20_000, 50_000, 100_000, 333_333])
def test_a_rate_off_the_ticks_multiples_is_sampled_at_every_phase_of_its_sends(rate, hz):
    from irqlab.ops.lab.plan import off_tick

    moved = off_tick(rate, hz)
    assert abs(moved - rate) < hz  # less than one tick rate away
    # 3 s of ticks: the send's phase at each spreads over the cycle, no gap wider than 2 %
    phases = sorted((k * moved / hz) % 1.0 for k in range(3 * hz))
    gaps = [b - a for a, b in itertools.pairwise(phases)]
    assert max([*gaps, 1 - phases[-1] + phases[0]]) < 0.02
    # as given, a multiple of the tick rate is sampled at one phase only
    if rate % hz == 0:
        assert len({round((k * rate / hz) % 1.0, 9) for k in range(3 * hz)}) == 1


def test_tracing_cost_is_the_top_rates_first_run_beside_its_traced_twin():
    from irqlab.ops.lab.sweep import tracing_cost

    def entry(threaded: bool, rate: float, repeat: int, sent: float) -> dict[str, Any]:
        return {
            "threaded": threaded, "rate_pps": rate, "repeat": repeat,
            "bundle": f"points/{rate:g}-{repeat}",
            "measured": {"sent_pps": sent, "app_pps": sent},
            "traced": {"bundle": f"points/traced-{rate:g}-{repeat}",
                       "measured": {"sent_pps": sent / 2, "app_pps": sent / 2}},
        }  # fmt: skip

    points = [entry(False, 1e5, 0, 1e5), entry(False, 4e5, 0, 2e5), entry(False, 4e5, 1, 3e5)]
    cost = tracing_cost(points, False)
    assert cost is not None
    assert cost["rate_pps"] == 4e5 and cost["untraced"]["sent_pps"] == 2e5
    assert cost["traced"]["sent_pps"] == 1e5 and cost["traced_bundle"] == "points/traced-400000-0"
    assert tracing_cost(points, True) is None  # no threaded point
    del points[1]["traced"], points[2]["traced"]
    assert tracing_cost(points, False)["rate_pps"] == 1e5  # type: ignore[index]
