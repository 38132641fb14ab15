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
    [
        [],
        ["run"],
        ["keys"],
        ["check"],
        ["sweep"],
        ["plot"],
        ["rerun"],
        ["analytic"],
        ["reproduce"],
        ["report"],
        ["probe"],
        ["measure"],
        ["calibrate"],
    ],
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
    # the host topology: numbered entries, lists and booleans
    (
        ["--set", "host.cores=2", "--set", "nic.queues=2", "--set", "nic.irq_affinity=[0,9]"],
        "nic.irq_affinity = [0, 9]: vector 1 is pinned to core 9, but host.cores = 2 has cores",
    ),
    (
        ["--set", "host.cores=2", "--set", "nic.irq_affinity=[0,9]"],
        "nic.irq_affinity = [0, 9]: needs one core per vector: 2 entries for nic.queues = 1",
    ),
    (["--set", "nic.irq_affinity=5"], "nic.irq_affinity = 5: expected a list of integers"),
    (
        ["--set", "host.cores=2", "--set", "app.0.core=5"],
        "app.0.core = 5: host.cores = 2 has cores 0 … 1",
    ),
    (
        ["--set", "traffic.classes.0.share=0.5"],
        "traffic.classes.0.share = 0.5: the class shares sum to 0.5; they must sum to 1",
    ),
    (["--set", "app.0.cots_ns=1"], "unknown key 'app.0.cots_ns' (did you mean 'app.0.cost_ns'?)"),
    (["--set", "app.300.core=0"], "app.300.core: at most 256 entries of app"),
    (["--set", "app.1.core=0"], "app.0 = missing: app entries are numbered from 0 without gaps"),
    (["--set", "host.forward=maybe"], 'host.forward = "maybe": expected true or false'),
    (["--set", "host.forward=1"], "host.forward = 1: expected true or false"),
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


# --- the host topology ----------------------------------------------------------------------

TOPOLOGY = [
    "--set", "host.cores=2", "--set", "nic.queues=2", "--set", "traffic.flows=64",
    "--set", "nic.irq_affinity=[1,0]", "--set", "app.0.core=1",
]  # fmt: skip


def wide(*args: str):
    """The command on a terminal wide enough for the keys' table (160 columns); at 80 they
    are a list (test_piped_output)."""
    return CliRunner(env={"COLUMNS": "160"}).invoke(main, list(args), catch_exceptions=False)


def _row(output: str, key: str) -> str:
    """The first line of the keys table that starts with ``key``."""
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip("│┃ ").split("│")]
        if cells and cells[0] == key:
            return line
    raise AssertionError(f"no row for {key}")


def test_keys_lists_plain_keys_then_each_table_field_by_field():
    r = wide("keys")
    assert r.exit_code == 0, r.output
    out = r.output
    # plain keys first, then [[traffic.classes]] and [[app]] with their fields
    assert out.index("hybrid.hysteresis") < out.index("[[traffic.classes]]")
    assert out.index("[[traffic.classes]]") < out.index("traffic.classes.N.share")
    assert out.index("traffic.classes.N.share") < out.index("[[app]]") < out.index("app.N.core")
    assert "at most 256" in _row(out, "[[app]]")
    # defaults as a scenario file writes them
    assert " false " in _row(out, "host.forward") and " true " in _row(out, "nic.tx_irq")
    assert " [] " in _row(out, "nic.irq_affinity") and " [] " in _row(out, "app.N.flows")
    assert ' "" ' in _row(out, "traffic.classes.N.name")
    assert "False" not in out and "True" not in out


@pytest.mark.parametrize("prefix", ["app", "app.0", "app.N"])
def test_keys_of_one_table(prefix):
    r = wide("keys", prefix)
    assert r.exit_code == 0, r.output
    keys = [line.split("│")[1].strip() for line in r.output.splitlines() if line.startswith("│")]
    keys = [k for k in keys if k]
    assert keys == ["[[app]]", *(f"app.N.{f}" for f in (
        "core", "cost_ns", "cost_dist", "cost_ns_per_byte", "flows", "rcvbuf_bytes",
        "io", "xsk_ring", "need_wakeup", "xsk_poll_core"))]  # fmt: skip


def test_keys_of_a_plain_section_and_an_unknown_prefix():
    r = invoke("keys", "host")
    assert r.exit_code == 0
    assert "host.cores" in r.output and "host.forward" in r.output and "app.N" not in r.output
    r = CliRunner().invoke(main, ["keys", "nosuch"])
    assert r.exit_code == 2
    assert r.output.strip() == "irqlab: error: no scenario key starts with 'nosuch'"


def test_check_prints_lists_booleans_and_numbered_entries_readably():
    r = invoke("check", str(EXAMPLE), *TOPOLOGY, "--set", "host.forward=true")
    assert r.exit_code == 0, r.output
    lines = set(r.output.splitlines())
    for line in (
        "nic.irq_affinity = [1, 0]",
        "host.forward = true",
        "nic.tx_irq = true",
        "app.0.core = 1",
        "app.0.flows = []",
        'app.0.cost_dist = "exponential"',
        "host.cores = 2",
    ):
        assert line in lines, line


def test_run_shows_cores_classes_apps_and_forwarding(tmp_path):
    out = tmp_path / "t.txt"
    classes = ["--set", 'traffic.classes.0.name="rt"', "--set", "traffic.classes.0.share=0.25",
               "--set", "traffic.classes.1.share=0.75"]  # fmt: skip
    r = invoke("run", str(EXAMPLE), *SHORT, *TOPOLOGY, *classes, "--set", "host.forward=true",
               "--out", str(out))  # fmt: skip
    assert r.exit_code == 0, r.output
    text = out.read_text()
    words = ("forwarding", "transmitted", "dropped at Tx ring", "apps", "goodput", "MB/s")
    words += ("app latency p99", "per core", "per traffic class", "2 cores, 2 queues")
    for word in words:
        assert word in text, word
    classes_part = text.split("per traffic class", 1)[1]
    assert "│ rt " in classes_part and "│ c1 " in classes_part
    j = invoke("run", str(EXAMPLE), *SHORT, *TOPOLOGY, *classes, "--format", "json")
    report = json.loads(j.output)
    assert [c["vectors"] for c in report["per_core"]] == [[1], [0]]
    assert [c["class"] for c in report["per_class"]] == ["rt", "c1"]
    assert report["scenario"]["nic.irq_affinity"] == [1, 0]
    assert report["scenario"]["app.0.core"] == 1


def test_run_of_a_one_core_host_has_no_topology_tables(tmp_path):
    out = tmp_path / "t.txt"
    r = invoke("run", str(EXAMPLE), *SHORT, "--out", str(out))
    assert r.exit_code == 0
    text = out.read_text()
    for word in ("forwarding", "apps", "per core", "per traffic class", "queues"):
        assert word not in text, word


def test_headers_count_one_in_the_singular(tmp_path):
    r = invoke("run", str(EXAMPLE), *SHORT, "--set", "host.cores=2")
    assert r.exit_code == 0, r.output
    assert ", 2 cores, 1 queue\n" in r.output or ", 2 cores, 1 queue " in r.output, r.output
    assert "1 queues" not in r.output
    f = tmp_path / "s.toml"
    f.write_text(
        '[sweep]\nreplications = 1\n[base]\nrun.duration_ms = 2\n[axes]\nscheme = ["irq"]\n'
    )
    r = invoke("sweep", str(f), "--out", str(tmp_path / "o"), "--executor", "inline")
    assert r.exit_code == 0, r.output
    assert "sweep: 1 point × 1 replication →" in r.output, r.output


def test_sweep_over_a_boolean_and_a_list_prints_them_readably(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(
        "[sweep]\nreplications = 2\n"
        "[base]\nrun.duration_ms = 3\nrun.warmup_ms = 1\nhost.cores = 2\nnic.queues = 2\n"
        "traffic.flows = 64\n"
        "[axes]\n'host.forward' = [false, true]\n'nic.irq_affinity' = [[0, 1], [1, 1]]\n"
    )
    r = invoke("sweep", str(f), "--out", str(tmp_path / "o"), "--executor", "inline")
    assert r.exit_code == 0, r.output
    first = r.output.split("└", 1)[0]  # at 80 columns the table is split, the axes in each part
    rows = [line for line in first.splitlines() if line.startswith("│")]
    rows = [line for line in rows if line.split("│")[1].strip()]  # not a wrapped cell's rest
    assert len(rows) == 4
    assert rows[0].split("│")[1].strip() == "false" and "[0, 1]" in rows[0]
    assert rows[-1].split("│")[1].strip() == "true" and "[1, 1]" in rows[-1]


# --- a file of the wrong kind ----------------------------------------------------------------

SWEEP_FILE = ROOT / "examples" / "livelock_sweep.toml"


def _one_line(r) -> str:
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and "Usage:" not in r.output, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("irqlab: error: "), r.output
    return lines[0]


@pytest.mark.parametrize(
    "args",
    [
        ["run", str(SWEEP_FILE)],
        ["check", str(SWEEP_FILE)],
        ["analytic", "irq", str(SWEEP_FILE)],
        ["tune", str(SWEEP_FILE), "--slo", "latency_us.p99 <= 50", "--out", "never"],
    ],
    ids=["run", "check", "analytic", "tune"],
)
def test_a_sweep_file_given_for_a_scenario_says_to_use_irqlab_sweep(args):
    line = _one_line(CliRunner().invoke(main, args))
    assert f"{SWEEP_FILE} is a sweep file" in line
    assert f"irqlab sweep {SWEEP_FILE} runs it" in line


def test_results_reports_and_captures_given_for_a_scenario_say_what_they_are(tmp_path):
    report = tmp_path / "r.json"
    r = invoke("run", str(EXAMPLE), *SHORT, "--format", "json", "--out", str(report))
    assert r.exit_code == 0, r.output
    line = _one_line(CliRunner().invoke(main, ["run", str(report)]))
    assert "is a run's JSON report, not a TOML scenario" in line
    assert f"irqlab report {report} makes a page of it" in line
    other = tmp_path / "x.json"
    other.write_text('{"a": 1}')
    assert "is JSON, not TOML" in _one_line(CliRunner().invoke(main, ["run", str(other)]))

    folder = tmp_path / "sweep"
    folder.mkdir()
    (folder / "sweep.json").write_text("{}")
    line = _one_line(CliRunner().invoke(main, ["sweep", str(folder)]))
    assert "is a directory, not a TOML file (it holds a sweep's results" in line

    capture = tmp_path / "c.pcap"
    capture.write_bytes(bytes.fromhex("d4c3b2a1") + bytes(20))
    line = _one_line(CliRunner().invoke(main, ["run", str(capture)]))
    assert "is a packet capture" in line and f'traffic.pcap = "{capture}"' in line

    line = _one_line(CliRunner().invoke(main, ["plot", str(SWEEP_FILE), "--x", "a", "--y", "b"]))
    assert "a TOML file is a sweep or scenario, not its results" in line


def test_a_sweep_file_given_to_the_python_api_names_irqlab_sweep():
    import irqlab

    with pytest.raises(irqlab.ConfigError, match=r"irqlab\.sweep\('.*livelock_sweep\.toml'\)"):
        irqlab.run(SWEEP_FILE)


# --- Click's own usage errors ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "phrases"),
    [
        (["plot", "{tmp}/nosuch", "--x", "a", "--y", "b"], ["'RESULTS'", "does not exist"]),
        (["rerun", "{tmp}/nosuch", "--point", "0"], ["'RESULTS'", "does not exist"]),
        (["reproduce", "chang2007", "--out", "{tmp}/file"], ["'--out'", "is a file"]),
        (["tune", str(EXAMPLE), "--slo", "a <= 1", "--out", "{tmp}/file"], ["'--out'", "file"]),
        (["probe", "--root", "{tmp}/file"], ["'--root'", "is a file"]),
        (["run", str(EXAMPLE), "--seed", "abc"], ["'--seed'", "'abc' is not a valid integer"]),
        (["run", str(EXAMPLE), "--format", "xml"], ["'--format'", "'table', 'json'"]),
        (["trace-info", "x", "--top", "-1"], ["'--top'", "x>=0"]),
        (["run"], ["Missing argument 'SCENARIO'", "usage: irqlab run [OPTIONS] SCENARIO"]),
        (["tune", str(EXAMPLE), "--out", "x"], ["Missing option '--slo'", "irqlab tune --help"]),
        (["tune", str(EXAMPLE), "--slo", "a <= 1"], ["Missing option '-o' / '--out'"]),
        (["run", str(EXAMPLE), "--bogus"], ["No such option '--bogus'", "irqlab run --help"]),
        (["run", "a", "b"], ["unexpected extra argument (b)"]),
        (["nosuchcommand"], ["No such command 'nosuchcommand'", "irqlab --help"]),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) and v and "{" not in str(v[:1]) else None,
)
def test_clicks_usage_errors_are_one_line(tmp_path, args, phrases):
    (tmp_path / "file").write_text("")
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    line = _one_line(CliRunner().invoke(main, args, prog_name="irqlab"))
    for phrase in phrases:
        assert phrase in line, line


def test_irqlab_alone_still_prints_its_help():
    r = CliRunner().invoke(main, [], prog_name="irqlab")
    assert "Usage: irqlab [OPTIONS] COMMAND" in r.output and "Commands:" in r.output


def test_every_out_option_has_its_short_o(tmp_path):
    outs = {
        name: param.opts
        for name, command in main.commands.items()
        for param in command.params
        if "--out" in param.opts
    }
    assert {"run", "sweep", "tune", "reproduce", "report", "plot", "probe"} <= set(outs)
    assert all("-o" in opts for opts in outs.values()), outs
    out = tmp_path / "t.txt"
    r = invoke("run", str(EXAMPLE), *SHORT, "-o", str(out))
    assert r.exit_code == 0, r.output
    assert "irqlab run — scheme napi" in out.read_text()
