"""The command line: help on every subcommand, output formats, and one clear line per user error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from irqlab.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "napi.toml"
SHORT = ["--set", "run.duration_ms=5", "--set", "run.warmup_ms=1"]


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.mark.parametrize(
    "sub",
    [[], ["run"], ["keys"], ["check"], ["sweep"], ["plot"], ["rerun"], ["analytic"], ["reproduce"]],
)
def test_every_subcommand_has_help(sub):
    r = invoke(*sub, "--help")
    assert r.exit_code == 0
    assert "Usage:" in r.output
    assert len(r.output.splitlines()) > 5


def test_json_output_holds_every_metric_the_issue_names():
    r = invoke("run", str(EXAMPLE), "--format", "json", *SHORT)
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    for k in ("offered", "delivered", "dropped_nic", "dropped_socket", "in_flight"):
        assert isinstance(rep["packets"][k], int)
    for k in ("mean", "p50", "p90", "p99", "p999", "max"):
        assert rep["latency_us"][k] > 0
    for k in ("busy", "irq", "softirq", "ksoftirqd", "app", "idle"):
        assert 0 <= rep["cpu"][k] <= 1
    for k in (
        "offered_pps",
        "throughput_pps",
        "irq_per_s",
        "polls_per_s",
        "packets_per_poll",
        "cycles_per_packet",
        "load_latency_product",
    ):
        assert rep[k] > 0, k


def test_set_and_seed_override_the_file(tmp_path):
    out = tmp_path / "r.json"
    r = invoke(
        "run",
        str(EXAMPLE),
        "--format",
        "json",
        "--out",
        str(out),
        "--seed",
        "7",
        "--set",
        "scheme=irq",
        "--set",
        "traffic.rate_pps=2e4",
        *SHORT,
    )
    assert r.exit_code == 0, r.output
    rep = json.loads(out.read_text())
    assert rep["scheme"] == "irq"
    assert rep["seed"] == 7
    assert 1e4 < rep["offered_pps"] < 3e4


def test_table_output_names_the_groups(tmp_path):
    out = tmp_path / "t.txt"
    r = invoke("run", str(EXAMPLE), "--out", str(out), *SHORT)
    assert r.exit_code == 0
    text = out.read_text()
    for word in ("throughput", "p99", "ksoftirqd", "IRQs", "load-latency product"):
        assert word in text


def test_check_prints_every_resolved_key():
    r = invoke("check", str(EXAMPLE), "--set", "nic.itr_us=20")
    assert r.exit_code == 0
    assert "nic.itr_us = 20" in r.output
    assert "kernel.netdev_budget = 300" in r.output


BAD = [
    (
        ["--set", "nic.ring_descritors=8"],
        "unknown key 'nic.ring_descritors' (did you mean 'nic.ring_descriptors'?)",
    ),
    (["--set", "bogus.anything_at_all=1"], "unknown key 'bogus.anything_at_all'"),
    (["--set", "traffic.rate_pps=fast"], 'traffic.rate_pps = "fast": expected a number'),
    (["--set", "traffic.rate_pps=0"], "traffic.rate_pps = 0: must be a number in [0.001, 1e9]"),
    (
        ["--set", "nic.ring_descriptors=0"],
        "nic.ring_descriptors = 0: must be an integer in 1 … 1048576",
    ),
    (["--set", "nic.ring_descriptors=2.5"], "nic.ring_descriptors = 2.5: expected an integer"),
    (
        ["--set", "scheme=nappi"],
        'scheme = "nappi": must be one of "ideal", "irq", "disable-enable", "poll"',
    ),
    (["--set", "platform.irq_dist=gamma"], 'platform.irq_dist = "gamma": must be one of'),
    (["--set", "kernel.hz=999"], "kernel.hz = 999: must be one of 100, 250, 300, 1000"),
    (["--set", "run.duration_ms=-5"], "run.duration_ms = -5: must be a number in (0, 3.6e6]"),
    (["--set", "traffic=5"], "unknown key 'traffic'"),
    (["--set", "noequals"], "expected dotted.key=value"),
    (
        ["--set", "kernel.hz=250", "--set", "kernel.netdev_budget_usecs=2000"],
        "kernel.netdev_budget_usecs = 2000: below the kernel's minimum of 2 jiffies",
    ),
]


@pytest.mark.parametrize(("args", "message"), BAD)
def test_bad_input_gives_one_clear_line_and_exit_2(args, message):
    r = CliRunner().invoke(main, ["run", str(EXAMPLE), *args])
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    assert lines[0].startswith("irqlab: error: ")
    assert message in lines[0]


def test_bad_files(tmp_path):
    missing = CliRunner().invoke(main, ["run", str(tmp_path / "nope.toml")])
    assert missing.exit_code == 2
    assert "no such file" in missing.output
    broken = tmp_path / "broken.toml"
    broken.write_text("[traffic\nrate_pps = 1\n")
    r = CliRunner().invoke(main, ["run", str(broken)])
    assert r.exit_code == 2
    assert "not valid TOML" in r.output
    nested = tmp_path / "nested.toml"
    nested.write_text("[traffic]\nrate_pps = [1, 2]\n")
    r = CliRunner().invoke(main, ["run", str(nested)])
    assert r.exit_code == 2
    assert "traffic.rate_pps: expected a single value" in r.output


def test_a_real_process_prints_no_traceback_for_a_user_error():
    p = subprocess.run(
        [sys.executable, "-m", "irqlab.cli", "run", str(EXAMPLE), "--set", "nic.itr_us=-1"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert p.stderr.strip() == "irqlab: error: nic.itr_us = -1: must be a number in [0, 1e6]"


SWEEP = """
[sweep]
replications = 2
[base]
scheme = "napi"
run.duration_ms = 5
run.warmup_ms = 1
[axes]
scheme = ["irq", "napi"]
"traffic.rate_pps" = [50_000, 150_000]
"""


def test_sweep_then_plot(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(SWEEP)
    out = tmp_path / "out"
    r = invoke("sweep", str(f), "--out", str(out), "--executor", "inline", "--seed", "4")
    assert r.exit_code == 0, r.output
    assert "runs.parquet" in r.output and "confidence half-width" in r.output
    for name in ("runs.parquet", "summary.parquet", "summary.csv", "sweep.json"):
        assert (out / name).exists(), name
    assert json.loads((out / "sweep.json").read_text())["seed"] == 4
    png = tmp_path / "fig.png"
    r = invoke(
        "plot", str(out), "--x", "traffic.rate_pps", "--y", "latency_us.p99",
        "--y", "cpu.busy", "--hue", "scheme", "-o", str(png),
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert png.read_bytes()[:4] == b"\x89PNG"
    r = invoke("plot", str(tmp_path), "--x", "traffic.rate_pps", "--y", "cpu.busy")
    assert r.exit_code == 2 and "no summary.parquet or summary.csv" in r.output
    r = invoke("plot", str(out), "--x", "traffic.rate_pps", "--y", "latency_us.p100")
    assert r.exit_code == 2 and "latency_us.p100" in r.output and "latency_us.p99" in r.output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[sweep]\nreplicas = 2\n", "sweep.replicas: unknown key (did you mean 'replications'?)"),
        ("[axes]\nshceme = ['irq']\n", "unknown key 'shceme' (did you mean 'scheme'?)"),
        ("[axes]\nscheme = ['irq', 'polling']\n", 'scheme = "polling": must be one of'),
    ],
)
def test_bad_sweep_file_gives_one_line_and_exit_2(tmp_path, text, message):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    r = invoke("sweep", str(f), "--out", str(tmp_path / "o"))
    assert r.exit_code == 2
    assert message in r.output
    assert "Traceback" not in r.output


def test_sweep_options_are_checked_like_the_file(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(SWEEP)
    r = invoke("sweep", str(f), "--out", str(tmp_path / "o"), "-n", "70000")
    assert r.exit_code == 2 and "replications = 70000: must be an integer in [1, 65536]" in r.output
    r = invoke("sweep", str(f), "--out", str(tmp_path / "o"), "--warmup", "soon")
    assert r.exit_code == 2 and "sweep.warmup" in r.output


def test_analytic_prints_the_model_over_a_load_range():
    r = CliRunner().invoke(
        main,
        ["analytic", "irq", "--set", "platform.preset=salah2007", "--rates", "5e4,3e5"],
    )
    assert r.exit_code == 0, r.output
    assert "CPU availability" in r.output and "50.0k pps" in r.output
    r = CliRunner().invoke(
        main, ["analytic", "disable-enable", "--rates", "1e4:2e5:5", "--format", "csv"]
    )
    assert r.exit_code == 0, r.output
    lines = r.output.strip().splitlines()
    assert lines[0].startswith("scheme,rate_pps,throughput_pps,cpu_availability,latency_us")
    assert len(lines) == 6
    # the printed equations and the chain differ in latency, not in throughput
    chain, printed = (
        json.loads(
            CliRunner()
            .invoke(main, ["analytic", "irq", "--rates", "1e5", "--format", "json", *x])
            .output
        )[0]
        for x in ([], ["--printed"])
    )
    assert chain["throughput_pps"] == pytest.approx(printed["throughput_pps"], rel=1e-3)
    assert chain["latency_us"] > 1.2 * printed["latency_us"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["analytic", "napi"], "scheme 'napi' has no analytic model; models exist for ideal"),
        (["analytic", "poll", "--rates", "5:1:3"], "--rates '5:1:3': expected FROM:TO:NUM"),
        (["analytic", "irq", "--set", "nic.ring_descriptors=0"], "nic.ring_descriptors = 0"),
        (["reproduce", "salah2008"], "unknown study 'salah2008'; known studies: salah2007"),
    ],
)
def test_analytic_and_reproduce_errors(args, message):
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, r.output
    assert message in r.output
