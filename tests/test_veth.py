"""The veth lab's host from Python and the command line: examples/veth_lab.toml runs, its keys
are listed by ``irqlab keys``, the new report fields appear only when used, and bad input is
one line naming the key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

import irqlab
from irqlab.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "veth_lab.toml"
SHORT = ["--set", "run.duration_ms=5", "--set", "run.warmup_ms=1"]


def run_cli(*args: str) -> dict[str, Any]:
    r = CliRunner().invoke(main, ["run", str(EXAMPLE), *SHORT, *args, "--format", "json"])
    assert r.exit_code == 0, r.output
    report: dict[str, Any] = json.loads(r.output)
    return report


def test_the_lab_runs_from_the_command_line_with_its_softirq_on_the_senders_core() -> None:
    r = run_cli()
    assert r["counts"]["irqs"] == 0
    assert r["packets_per_poll"] == 1.0
    assert r["cpu"]["sender"] > 0
    assert "napi_thread" not in r["cpu"]
    core0, core1 = r["per_core"]
    assert core0["cpu"]["softirq"] > 0 and core1["cpu"]["softirq"] == 0
    assert core0["cpu"]["sender"] == 0.3  # 3 µs a send at 100 kpps
    assert r["packets"]["in_sender"] == 0


def test_threaded_napi_moves_the_polls_to_the_thread_on_its_core() -> None:
    r = run_cli("--set", "kernel.threaded_napi=true", "--set", "kernel.napi_thread_core=1")
    assert r["cpu"]["softirq"] == 0
    assert r["per_core"][1]["cpu"]["napi_thread"] > 0
    assert r["per_core"][0]["cpu"]["napi_thread"] == 0


def test_the_keys_are_listed() -> None:
    out = CliRunner().invoke(main, ["keys"]).output
    for key in [
        "nic.device",
        "sender.core",
        "sender.cost_ns",
        "sender.cost_dist",
        "kernel.threaded_napi",
        "kernel.napi_thread_core",
    ]:
        assert key in out, key


def test_a_scenario_without_them_has_no_new_fields() -> None:
    r = irqlab.run({"run": {"duration_ms": 2.0}})
    assert "sender" not in r["cpu"] and "napi_thread" not in r["cpu"]
    assert "in_sender" not in r["packets"]


def test_bad_input_is_one_line_naming_the_key() -> None:
    for args, key in [
        (["--set", "sender.core=7"], "sender.core"),
        (["--set", "nic.ring_descriptors=1024"], "nic.ring_descriptors"),
        (
            ["--set", "kernel.threaded_napi=true", "--set", "kernel.napi_thread_core=9"],
            "kernel.napi_thread_core",
        ),
    ]:
        r = CliRunner().invoke(main, ["run", str(EXAMPLE), *SHORT, *args])
        assert r.exit_code == 2, r.output
        assert key in r.output and "Traceback" not in r.output
        assert len(r.output.strip().splitlines()) == 1, r.output


def test_the_report_predicts_the_two_distributions_the_lab_traces() -> None:
    # packets per poll in bpftrace's log2 buckets, keyed by their smallest count as the lab's
    # measured packets_per_poll_hist; and the app's wake-up delay (sched_wakeup → sched_switch)
    r = run_cli()
    assert r["packets_per_poll_hist"] == {"1": r["counts"]["polls"]}  # a packet a send
    assert r["per_queue"][0]["packets_per_poll_hist"] == r["packets_per_poll_hist"]
    app = r["per_app"][0]
    assert app["wakeup_delay_us"]["max"] == 0.0  # alone on core 1: switched in at once
    assert app["wakeups"] == app["consumed"]  # each packet woke it
    # the NAPI thread beside the app on core 1: the app's switch waits for the thread, which
    # pays the wake-up (platform.task_wakeup_ns = 500) and sleeps
    r = run_cli("--set", "kernel.threaded_napi=true", "--set", "kernel.napi_thread_core=1")
    assert r["per_app"][0]["wakeup_delay_us"]["p50"] == 0.5
    # past what the thread keeps up with, polls of several packets
    r = run_cli(
        "--set",
        "kernel.threaded_napi=true",
        "--set",
        "kernel.napi_thread_core=1",
        "--set",
        "traffic.rate_pps=250000",
    )
    hist = r["packets_per_poll_hist"]
    lows = [int(k) for k in hist]
    assert lows == sorted(lows) and all(k == 0 or k & (k - 1) == 0 for k in lows)
    assert max(lows) >= 2, hist
    assert abs(sum(hist.values()) - r["counts"]["polls"]) <= 1
    # a sweep's row leaves the histograms out and keeps the delays
    flat = irqlab.report.flatten_report(r)
    assert not any("packets_per_poll_hist" in k for k in flat)
    assert flat["per_app.0.wakeup_delay_us.p99"] == r["per_app"][0]["wakeup_delay_us"]["p99"]
