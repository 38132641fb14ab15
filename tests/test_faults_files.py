"""Hostile files and the user's own code: a named pipe where a file is read, a policy file that
does not parse or ends the program, a metric that is not a number, hand-edited results. Each
ends in a valid answer or one ``irqlab: error:`` line naming the file, the key or the field:
never a traceback, a hang, or a silent exit."""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irqlab
from irqlab.errors import PolicyError
from test_faults_inputs import IRQLAB, irqlab_cmd, one_line_failure

#: Real processes and files, each test seconds long: outside the quick check (-m 'not slow').
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]

# --- Python moderation policies: the user's code fails or tries to end the program -----------

POLICY_SCENARIO = """
[platform]
preset = "emmerich2015"
[traffic]
rate_pps = 2e5
[run]
duration_ms = 5
[driver]
moderation = "python"
policy = "mine.py:Fixed"
"""


def policy_scenario(tmp_path, module: str):
    """A scenario running the class ``Fixed`` of ``mine.py`` (``module``, dedented)."""
    (tmp_path / "mine.py").write_text(textwrap.dedent(module))
    scenario = tmp_path / "scenario.toml"
    scenario.write_text(POLICY_SCENARIO)
    return scenario


FIXED = """
class Fixed:
    def on_complete(self, s):
        return None
"""


@pytest.mark.parametrize(
    ("top", "raised"),
    [
        ("def broken(:", "SyntaxError: invalid syntax"),
        ("raise SystemExit(0)", "SystemExit(0)"),
        ("raise SystemExit(3)", "SystemExit(3)"),
        ("1 / 0", "ZeroDivisionError: division by zero"),
        ("raise type('Odd', (BaseException,), {})('odd')", "Odd: odd"),
    ],
    ids=["syntax-error", "exit-0", "exit-3", "exception", "base-exception"],
)
@pytest.mark.parametrize("command", ["run", "check"])
def test_a_policy_module_that_fails_to_import_is_one_line_naming_file_and_line(
    tmp_path, command, top, raised
):
    scenario = policy_scenario(tmp_path, f"import math\n{top}\n{FIXED}")
    line = one_line_failure(irqlab_cmd(command, scenario), 'driver.policy = "', raised)
    assert f"{tmp_path / 'mine.py'}, line 2" in line


def test_a_policy_module_that_fails_to_import_is_a_config_error_in_python(tmp_path):
    scenario = policy_scenario(tmp_path, f"raise SystemExit(0)\n{FIXED}")
    with pytest.raises(irqlab.ConfigError, match=r"SystemExit\(0\) \(.*mine\.py, line 1\)") as e:
        irqlab.run(scenario)
    assert e.value.key == "driver.policy"


EXITING_HOOKS = [
    ("raise SystemExit(0)", "SystemExit(0)"),
    ("raise SystemExit(3)", "SystemExit(3)"),
    ("import sys; sys.exit('bye')", "SystemExit('bye')"),
    ("raise GeneratorExit", "GeneratorExit"),
]


@pytest.mark.parametrize(("body", "raised"), EXITING_HOOKS, ids=["0", "3", "text", "generator"])
def test_a_hook_that_ends_the_program_is_one_line_not_a_silent_exit(tmp_path, body, raised):
    scenario = policy_scenario(
        tmp_path,
        f"""
        class Fixed:
            def on_complete(self, s):
                {body}
        """,
    )
    line = one_line_failure(
        irqlab_cmd("run", scenario), "the moderation policy's on_complete() raised " + raised
    )
    assert f"{tmp_path / 'mine.py'}, line 4; at " in line and "µs of simulated time" in line


def test_a_constructor_that_ends_the_program_is_one_line(tmp_path):
    scenario = policy_scenario(
        tmp_path,
        """
        class Fixed:
            def __init__(self):
                raise SystemExit(0)
            def on_complete(self, s):
                return None
        """,
    )
    one_line_failure(
        irqlab_cmd("run", scenario),
        "the moderation policy's constructor raised SystemExit(0)",
        "mine.py, line 4",
    )


def test_a_hook_that_ends_the_program_in_a_sweep_worker_fails_the_sweep(tmp_path):
    policy_scenario(tmp_path, "class Fixed:\n    def on_complete(self, s):\n        exit(0)\n")
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(
        '[sweep]\nbase = "scenario.toml"\nreplications = 1\n'
        '[axes]\n"traffic.rate_pps" = [1e5, 2e5]\n'
    )
    p = irqlab_cmd("sweep", sweep, "--out", tmp_path / "out", "-j", "2")
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    last = p.stderr.splitlines()[-1]
    assert last.startswith("irqlab: error: the moderation policy's on_complete() raised SystemExit")


@pytest.mark.parametrize(("body", "raised"), EXITING_HOOKS, ids=["0", "3", "text", "generator"])
def test_a_hook_that_ends_the_program_raises_a_policy_error_from_run(body, raised):
    namespace: dict = {}
    exec(f"def hook(self, s):\n    {body}", namespace)
    policy = type("Exits", (), {"on_complete": namespace["hook"]})
    with pytest.raises(PolicyError, match=re.escape(f"on_complete() raised {raised} (")) as e:
        irqlab.run({"run.duration_ms": 2}, policy=policy)
    assert isinstance(e.value.__cause__, SystemExit | GeneratorExit)


def test_ctrl_c_in_a_hook_stops_the_run_as_ctrl_c(tmp_path):
    scenario = policy_scenario(
        tmp_path, "class Fixed:\n    def on_complete(self, s):\n        raise KeyboardInterrupt\n"
    )
    p = irqlab_cmd("run", scenario)
    assert (p.returncode, p.stdout, p.stderr) == (130, "", "irqlab: interrupted\n")


# --- metrics that are not numbers: tune's SLOs and objective, sweep precision, plot's y -------

EMMERICH = "examples/emmerich2015.toml"


@pytest.mark.parametrize(
    ("args", "phrases"),
    [
        (["--slo", "scheme <= 5"], ["--slo 'scheme <= 5': metric 'scheme' is not a number"]),
        (
            ["--slo", "latency_us.p99 <= 50", "--minimize", "scheme"],
            ["--minimize scheme: metric 'scheme' is not a number", "latency_us.p99"],
        ),
        (["--slo", "per_core.0.vectors <= 1"], ["the name of an entry", "did you mean per_core"]),
        (["--slo", "scenario.nic.itr_us <= 5"], ["a setting of the scenario", "cpu.busy"]),
        (["--slo", "seed <= 5"], ["'seed' is which run it is"]),
    ],
    ids=["slo-text", "minimize-text", "slo-list", "slo-setting", "slo-seed"],
)
def test_tune_refuses_a_metric_that_is_not_a_number_before_racing(tmp_path, args, phrases):
    p = irqlab_cmd("tune", ROOT / EMMERICH, *args, "--out", tmp_path / "t")
    one_line_failure(p, "an SLO or objective takes a numeric field", *phrases)
    assert not (tmp_path / "t").exists()  # nothing raced, nothing written


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"slos": ["scheme <= 5"]}, r"slos: 'scheme <= 5': metric 'scheme' is not a number"),
        (
            {"slos": ["latency_us.p99 <= 50"], "minimize": "traffic.kind"},
            r"minimize='traffic.kind': metric 'traffic.kind' is not in",
        ),
        ({"slos": ["latency_us.p99 <= 50"], "minimize": 5}, r"minimize=5: expected a metric name"),
    ],
)
def test_the_python_tune_refuses_a_metric_that_is_not_a_number(kwargs, match):
    with pytest.raises(irqlab.ConfigError, match=match):
        irqlab.tune(ROOT / EMMERICH, executor="inline", **kwargs)


@pytest.mark.parametrize(
    ("metric", "needle"),
    [
        ("scheme", "'scheme' is not a metric: it is a setting of the scenario"),
        ("per_class.0.class", "'per_class.0.class' is not a metric: it names an entry (did you"),
    ],
)
def test_sweep_precision_refuses_a_metric_that_is_not_a_number(tmp_path, metric, needle):
    with pytest.raises(irqlab.ConfigError, match=re.escape(needle)) as e:
        irqlab.sweep(
            base={"run.duration_ms": 1},
            axes={"traffic.rate_pps": [60_000]},
            precision={"metrics": [metric]},
            executor="inline",
            out=tmp_path,
        )
    assert f"(did you mean '{metric}'?)" not in str(e.value)


@pytest.fixture(scope="module")
def small_sweep(tmp_path_factory):
    """A sweep's folder: 2 schemes × 2 rates × 2 replications of 2 ms."""
    out = tmp_path_factory.mktemp("sweep") / "out"
    irqlab.sweep(
        base={"run.duration_ms": 2},
        axes={"scheme": ["irq", "napi"], "traffic.rate_pps": [50_000, 100_000]},
        replications=2,
        warmup=0,
        executor="inline",
        out=out,
    )
    return out


PLOT_Y = [
    ("scheme", "is a setting of the scenario"),
    ("per_core.0.vectors", "names an entry"),
    ("point", "identifies the rows"),
]


@pytest.mark.parametrize(
    ("table", "y", "phrase"),
    [("", y, phrase) for y, phrase in PLOT_Y]
    + [("runs.parquet", y, phrase) for y, phrase in PLOT_Y]
    + [("", "throughput_pps.ci95", "is the spread of throughput_pps")],
)
def test_plot_refuses_a_y_that_is_not_a_measured_number(small_sweep, tmp_path, table, y, phrase):
    results = small_sweep / table if table else small_sweep
    p = irqlab_cmd("plot", results, "--x", "traffic.rate_pps", "--y", y, "-o", tmp_path / "p.png")
    one_line_failure(p, f"y={y!r} {phrase}", "y takes a metric such as throughput_pps")


# --- pipes and devices where a file is read -----------------------------------------------------


def irqlab_within(seconds: float, *args) -> subprocess.CompletedProcess[str]:
    """``irqlab ARGS``, which must end within ``seconds``: a command waiting on a pipe fails
    the test instead of hanging it."""
    command = [str(IRQLAB)] if IRQLAB.exists() else [sys.executable, "-m", "irqlab.cli"]
    return subprocess.run(
        [*command, *map(str, args)], capture_output=True, text=True, timeout=seconds
    )


def fifo(path: Path) -> Path:
    """A named pipe at ``path`` (replacing the file there) that no process writes to."""
    if path.exists():
        path.unlink()
    os.mkfifo(path)
    return path


def copy_with_fifo(folder: Path, member: str, tmp_path: Path) -> Path:
    """A copy of ``folder`` whose ``member`` is a named pipe."""
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    fifo(copy / member)
    return copy


@pytest.mark.parametrize("member", ["summary.parquet", "sweep.json", "runs.parquet"])
def test_report_on_a_sweep_folder_with_a_pipe_is_refused_at_once(small_sweep, tmp_path, member):
    folder = copy_with_fifo(small_sweep, member, tmp_path)
    p = irqlab_within(60, "report", folder, "-o", tmp_path / "r.html")
    one_line_failure(p, f"{folder / member}: is a named pipe (FIFO), not a regular file")


@pytest.mark.parametrize(
    ("args", "member"),
    [
        (["plot", "{folder}", "--x", "traffic.rate_pps", "--y", "loss_ratio"], "summary.parquet"),
        (["plot", "{folder}/summary.parquet", "--x", "traffic.rate_pps", "--y", "loss_ratio"],
         "summary.parquet"),
        (["rerun", "{folder}", "--point", "0"], "runs.parquet"),
    ],
    ids=["plot-folder", "plot-table", "rerun"],
)  # fmt: skip
def test_plot_and_rerun_refuse_a_pipe_at_once(small_sweep, tmp_path, args, member):
    folder = copy_with_fifo(small_sweep, member, tmp_path)
    args = [a.format(folder=folder) for a in args]
    if args[0] == "plot":
        args += ["-o", str(tmp_path / "p.png")]
    p = irqlab_within(60, *args)
    one_line_failure(p, f"{folder / member}: is a named pipe (FIFO), not a regular file")


def test_the_python_readers_refuse_a_pipe_at_once(small_sweep, tmp_path):
    from irqlab.report import write_report
    from irqlab.trace import trace_info

    folder = copy_with_fifo(small_sweep, "summary.parquet", tmp_path)
    table = fifo(tmp_path / "t.parquet")
    for read in (
        lambda: irqlab.load_results(folder),
        lambda: irqlab.load_results(table),
        lambda: irqlab.summarize(fifo(tmp_path / "runs.parquet")),
        lambda: trace_info(fifo(tmp_path / "capture.pcap")),
        lambda: write_report(folder, tmp_path / "r.html"),
    ):
        with pytest.raises(irqlab.ConfigError, match=r"is a named pipe \(FIFO\)"):
            read()


def test_trace_info_refuses_a_pipe_or_a_device_at_once(tmp_path):
    p = irqlab_within(60, "trace-info", fifo(tmp_path / "web.pcap"))
    one_line_failure(p, "capture ", "web.pcap: is a named pipe (FIFO), not a regular file", "save")
    p = irqlab_within(60, "trace-info", "/dev/zero")
    one_line_failure(p, "capture /dev/zero: is a device, not a regular file")


def test_report_refuses_a_pipe_a_device_or_an_endless_json_at_once(tmp_path):
    one_line_failure(
        irqlab_within(60, "report", fifo(tmp_path / "r.json"), "-o", tmp_path / "r.html"),
        "r.json: is a named pipe (FIFO)",
    )
    one_line_failure(
        irqlab_within(60, "report", "/dev/zero", "-o", tmp_path / "r.html"), "is a device"
    )
    huge = tmp_path / "huge.json"
    with huge.open("wb") as f:  # sparse: no disk used
        f.truncate((64 << 20) + 1)
    one_line_failure(
        irqlab_within(60, "report", huge, "-o", tmp_path / "r.html"), "longer than 64 MiB"
    )


def fake_folder(tmp_path: Path, files: dict[str, str], pipe: str) -> Path:
    folder = tmp_path / "results"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    fifo(folder / pipe)
    return folder


@pytest.fixture(scope="module")
def small_tune(tmp_path_factory):
    """A tune's folder: two interrupt intervals raced against one SLO."""
    out = tmp_path_factory.mktemp("tune") / "out"
    irqlab.tune(
        ROOT / EMMERICH,
        ["latency_us.p99 <= 50"],
        knobs=["nic.itr_us=10,20"],
        overrides={"run.duration_ms": 5},
        max_replications=3,
        executor="inline",
        out=out,
    )
    return out


@pytest.mark.parametrize(
    "member", ["tune.json", "recommendation.json", "candidates.csv", "pareto.csv"]
)
def test_report_on_a_tune_folder_with_a_pipe_is_refused_at_once(small_tune, tmp_path, member):
    folder = copy_with_fifo(small_tune, member, tmp_path)
    p = irqlab_within(60, "report", folder, "-o", tmp_path / "r.html")
    one_line_failure(p, f"{folder / member}: is a named pipe (FIFO)")


def test_report_on_a_reproduction_with_a_pipe_is_refused_at_once(tmp_path):
    readme = "# x\n\nA reproduction by `irqlab reproduce salah2007`.\n"
    folder = fake_folder(tmp_path, {"README.md": readme}, "fig.png")  # found by its suffix
    p = irqlab_within(60, "report", folder, "-o", tmp_path / "r.html")
    one_line_failure(p, f"{folder / 'fig.png'}: is a named pipe (FIFO)")
    (folder / "fig.png").unlink()
    fifo(folder / "README.md")
    p = irqlab_within(60, "report", folder, "-o", tmp_path / "r.html")
    one_line_failure(p, f"{folder / 'README.md'}: is a named pipe (FIFO)")


def test_a_pipe_in_a_sweeps_out_folder_is_refused_at_once(tmp_path):
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('[base]\nrun.duration_ms = 1\n[axes]\n"traffic.rate_pps" = [1e5]\n')
    out = tmp_path / "out"
    out.mkdir()
    fifo(out / "journal.sqlite")
    p = irqlab_within(60, "sweep", sweep, "--out", out)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.splitlines()[-1] == (
        f"irqlab: error: journal {out / 'journal.sqlite'}: is a named pipe (FIFO), not a "
        "regular file; use another --out, or --fresh to replace it"
    )
    p = irqlab_within(60, "sweep", sweep, "--out", out, "--fresh")
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("pipe", ["tune.json", "journal.sqlite", "runs.jsonl"])
def test_a_pipe_in_a_tunes_out_folder_is_refused_at_once(tmp_path, pipe):
    out = tmp_path / "out"
    out.mkdir()
    fifo(out / pipe)
    p = irqlab_within(
        120, "tune", ROOT / EMMERICH, "--slo", "latency_us.p99 <= 50", "--knob",
        "nic.itr_us=10,20", "--out", out,
    )  # fmt: skip
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert str(out / pipe) in p.stderr.splitlines()[-1]


def test_a_policy_file_that_is_a_pipe_is_refused_at_once(tmp_path):
    scenario = policy_scenario(tmp_path, FIXED)
    fifo(tmp_path / "mine.py")
    one_line_failure(
        irqlab_within(60, "check", scenario), 'driver.policy = "', "mine.py: is a named pipe"
    )


@pytest.mark.parametrize(
    "args",
    [["run", "{f}"], ["check", "{f}"], ["sweep", "{f}"], ["analytic", "irq", "{f}"],
     ["tune", "{f}", "--slo", "latency_us.p99 <= 5", "--out", "{f}.tune"]],
    ids=["run", "check", "sweep", "analytic", "tune"],
)  # fmt: skip
def test_a_scenario_or_sweep_read_from_a_pipe_stops_at_ctrl_c(tmp_path, args):
    """A TOML file may come from a pipe (``irqlab run <(…)``): one that nobody writes to is
    waited for, as a shell's ``cat`` does, and Ctrl-C stops the wait."""
    path = fifo(tmp_path / "scenario.toml")
    command = [str(IRQLAB)] if IRQLAB.exists() else [sys.executable, "-m", "irqlab.cli"]
    proc = subprocess.Popen(
        [*command, *(a.format(f=path) for a in args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(2)  # the command is waiting in open()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert (proc.returncode, out, err) == (130, "", "irqlab: interrupted\n")


# --- results edited by hand: a page, or one line naming the file and the field -----------------

FOUR_CORES = {
    "host.cores": 2,
    "nic.queues": 2,
    "traffic.flows": 16,
    "traffic.rate_pps": 2e5,
    "run.duration_ms": 2,
}


@pytest.fixture(scope="module")
def run_report() -> dict:
    """A real run's report, as ``irqlab run --format json`` writes it (two cores)."""
    return json.loads(json.dumps(irqlab.run(FOUR_CORES)))


def report_file(tmp_path: Path, report: Any, name: str = "r.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(report))
    return path


@pytest.mark.parametrize(
    ("field", "value", "phrase"),
    [
        ("latency_us", "fast", "field latency_us: expected an object {...}, got text 'fast'"),
        ("scenario", "napi", "field scenario: expected a scenario (an object {key: value})"),
        ("cpu", [0.5, 0.5], "field cpu: expected an object {...}, got a list of 2"),
        ("per_core", [None], "field per_core[0]: expected an object {...}, got null"),
        ("measured_s", None, "field measured_s: expected a number, got null"),
        ("seed", "one", "field seed: expected an integer, got text 'one'"),
    ],
)
def test_report_on_a_hand_edited_run_names_the_field(tmp_path, run_report, field, value, phrase):
    path = report_file(tmp_path, {**run_report, field: value})
    p = irqlab_cmd("report", path, "-o", tmp_path / "r.html")
    one_line_failure(p, f"{path}: {phrase}", "(changed by hand, or damaged?)")
    assert not (tmp_path / "r.html").exists()


def json_paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path into a JSON value: keys and list indices."""
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += json_paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += json_paths(v, (*prefix, i))
    return out


DELETE = object()
#: What a hand edit puts in a field: another type, null, NaN, an empty container, or nothing.
EDITS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.lists(st.integers(0, 3), max_size=2),
    st.lists(st.none(), min_size=1, max_size=1),
    st.dictionaries(st.sampled_from(["a", "p99", "busy"]), st.integers(), max_size=2),
    st.just(DELETE),
)


def edited(value: Any, path: tuple, new: Any) -> Any:
    """A deep copy of ``value`` with the field at ``path`` set to ``new`` (or deleted)."""
    value = copy.deepcopy(value)
    node = value
    for k in path[:-1]:
        node = node[k]
    if new is DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = new
    return value


def page_or_one_line(make: Any, source: Path) -> None:
    """``make()`` makes a page, or fails with one line naming ``source`` (the file edited or
    the folder holding it): never another exception."""
    try:
        make()
    except irqlab.ConfigError as e:
        text = str(e)
        assert "\n" not in text and str(source) in text, text


HYPOTHESIS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@HYPOTHESIS
@given(data=st.data())
def test_a_run_report_with_any_field_edited_is_a_page_or_one_line(run_report, data):
    from irqlab.report import render_report

    field = data.draw(st.sampled_from(json_paths(run_report)))
    report = edited(run_report, field, data.draw(EDITS))
    with tempfile.TemporaryDirectory() as tmp:
        path = report_file(Path(tmp), report)
        page_or_one_line(lambda: render_report(path), path)


@HYPOTHESIS
@given(data=st.data())
def test_a_run_reports_scenario_with_any_key_edited_is_a_page_or_one_line(run_report, data):
    from irqlab.report import render_report

    scenario = dict(run_report["scenario"])
    key = data.draw(st.sampled_from(sorted(scenario)))
    new_key = data.draw(st.sampled_from([key, f"{key}.x", key.rpartition(".")[0] or "x", ""]))
    value = scenario.pop(key)
    scenario[new_key] = data.draw(
        st.one_of(st.just(value), EDITS.filter(lambda v: v is not DELETE))
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = report_file(Path(tmp), {**run_report, "scenario": scenario})
        page_or_one_line(lambda: render_report(path), path)


def test_report_on_a_summary_with_a_row_of_nan_names_the_row(small_sweep, tmp_path):
    folder = tmp_path / "sweep"
    shutil.copytree(small_sweep, folder)
    summary = pd.read_parquet(folder / "summary.parquet").astype(object)
    (folder / "summary.parquet").unlink()
    summary.loc[len(summary)] = [np.nan] * len(summary.columns)
    summary.to_csv(folder / "summary.csv", index=False)
    row = f"{folder / 'summary.csv'}: row {len(summary)}, column 'point': expected an integer"
    one_line_failure(irqlab_cmd("report", folder, "-o", tmp_path / "r.html"), row)
    one_line_failure(
        irqlab_cmd("plot", folder, "--x", "traffic.rate_pps", "--y", "loss_ratio", "-o",
                   tmp_path / "p.png"),
        row,
    )  # fmt: skip
    with pytest.raises(irqlab.ConfigError, match=re.escape(row)):
        irqlab.load_results(folder)


@pytest.mark.parametrize(
    ("column", "value", "expected"),
    [
        ("nic.itr_us", "fast", "expected a number"),
        ("nic.ring_descriptors", None, "expected an integer"),
        ("nic.irq_affinity", "[0", "expected a list of integers"),
    ],
)
def test_rerun_of_a_hand_edited_row_names_its_column(
    small_sweep, tmp_path, column, value, expected
):
    folder = tmp_path / "sweep"
    shutil.copytree(small_sweep, folder)
    runs = pd.read_parquet(folder / "runs.parquet")
    runs[column] = runs[column].astype(object)
    runs.at[0, column] = value
    if value is not None:
        runs[column] = runs[column].astype(str)
    runs.to_parquet(folder / "runs.parquet")
    point, replication = (int(runs.at[0, c]) for c in ("point", "replication"))
    p = irqlab_cmd("rerun", folder, "--point", point, "--replication", replication)
    one_line_failure(
        p, f"{folder}: point {point}, replication {replication}: column {column!r}", expected
    )


#: A table cell edited by hand.
CELL_EDITS = st.one_of(
    st.none(),
    st.sampled_from(["", "fast", "[0", "1e999", "-1", "0.5", "true"]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-5, 10**20),
)


def edit_table(table: pd.DataFrame, data: Any) -> tuple[pd.DataFrame, str]:
    """``table`` with one edit a hand makes: a cell changed, a row of NaN added, a column
    removed or turned into text."""
    table = table.copy()
    how = data.draw(st.sampled_from(["cell", "nan-row", "drop", "text"]))
    column = data.draw(st.sampled_from(list(table.columns)))
    if how == "cell":
        row = data.draw(st.integers(0, len(table) - 1))
        table[column] = table[column].astype(object)
        table.at[row, column] = data.draw(CELL_EDITS)
    elif how == "nan-row":
        table = table.astype(object)
        table.loc[len(table)] = [np.nan] * len(table.columns)
    elif how == "drop":
        table = table.drop(columns=[column])
    else:
        table[column] = "x"
    return table, how


@HYPOTHESIS
@given(data=st.data())
def test_a_sweep_with_any_cell_or_field_edited_is_a_page_a_figure_or_one_line(small_sweep, data):
    from irqlab.figures import plot
    from irqlab.report import render_report

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "sweep"
        shutil.copytree(small_sweep, folder)
        what = data.draw(st.sampled_from(["sweep.json", "summary", "runs"]))
        if what == "sweep.json":
            spec = json.loads((folder / "sweep.json").read_text())
            field = data.draw(st.sampled_from(json_paths(spec)))
            (folder / what).write_text(json.dumps(edited(spec, field, data.draw(EDITS))))
        else:
            name = f"{what}.parquet"
            table, _ = edit_table(pd.read_parquet(folder / name), data)
            (folder / name).unlink()
            if what == "summary":
                table.to_csv(folder / "summary.csv", index=False)
            else:  # parquet holds a column of one type: text for a mixed one
                for c in [c for c in table.columns if pd.api.types.is_object_dtype(table[c])]:
                    table[c] = table[c].map(lambda v: v if v is None else str(v))
                table.to_parquet(folder / name)
        page_or_one_line(lambda: render_report(folder), folder)
        try:
            plot(folder, "traffic.rate_pps", "throughput_pps", "scheme")
        except ValueError as e:  # plot's own errors name the column; ConfigError is one
            assert "\n" not in str(e), str(e)
        page_or_one_line(lambda: irqlab.summarize(irqlab.load_results(folder, "runs")), folder)


@HYPOTHESIS
@given(data=st.data())
def test_a_tune_with_any_cell_or_field_edited_is_a_page_or_one_line(small_tune, data):
    from irqlab.report import render_report

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "tune"
        shutil.copytree(small_tune, folder)
        name = data.draw(
            st.sampled_from(["tune.json", "recommendation.json", "candidates.csv", "pareto.csv"])
        )
        if name.endswith(".json"):
            value = json.loads((folder / name).read_text())
            field = data.draw(st.sampled_from(json_paths(value)))
            (folder / name).write_text(json.dumps(edited(value, field, data.draw(EDITS))))
        else:
            table, _ = edit_table(pd.read_csv(folder / name), data)
            table.to_csv(folder / name, index=False)
        page_or_one_line(lambda: render_report(folder), folder)


# --- where results are written: a folder of its own kind, a full disk --------------------------


def test_a_tune_into_a_sweeps_folder_and_a_sweep_into_a_tunes_are_refused(
    small_sweep, small_tune, tmp_path
):
    sweep_folder = tmp_path / "sweep"
    shutil.copytree(small_sweep, sweep_folder)
    p = irqlab_cmd("tune", ROOT / EMMERICH, "--slo", "latency_us.p99 <= 50", "--out", sweep_folder)
    one_line_failure(p, f"--out {sweep_folder}: holds a sweep's results (sweep.json", "another")
    assert not (sweep_folder / "tune.json").exists()
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('[base]\nrun.duration_ms = 1\n[axes]\n"traffic.rate_pps" = [1e5]\n')
    for fresh in ([], ["--fresh"]):
        p = irqlab_cmd("sweep", sweep, "--out", small_tune, *fresh)
        one_line_failure(p, f"--out {small_tune}: holds a tune's results (tune.json")
    assert not (small_tune / "sweep.json").exists()
    with pytest.raises(irqlab.ConfigError, match=r"out= .*: holds a tune's results"):
        irqlab.sweep(sweep, out=small_tune, executor="inline")


@pytest.fixture
def small_disk(tmp_path):
    """A folder on a file system of 8 MiB of its own (a tmpfs), unmounted afterwards; the
    test is skipped where mounting is not allowed."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(disk)], capture_output=True
    )
    if mount.returncode != 0:
        pytest.skip("mounting a small file system needs root")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def fill(disk: Path, leave: int = 0) -> None:
    """Fills the file system of ``disk``, then frees ``leave`` bytes of it."""
    filler = disk / "filler"
    with filler.open("wb") as f, contextlib.suppress(OSError):
        while True:
            f.write(bytes(1 << 16))
            f.flush()
    if leave:
        with filler.open("r+b") as f:
            f.truncate(max(filler.stat().st_size - leave, 0))


def test_report_onto_a_full_disk_leaves_no_partial_page(small_sweep, small_disk):
    page = small_disk / "report.html"
    fill(small_disk, leave=1 << 20)  # a page takes about 5 MB
    p = irqlab_cmd("report", small_sweep, "-o", page)
    assert sorted(f.name for f in small_disk.iterdir()) == ["filler"]  # no page, no temporary
    one_line_failure(p, f"--out {page}: cannot write it (No space left on device)")


def test_report_onto_a_full_disk_keeps_the_previous_page_whole(small_sweep, small_disk):
    page = small_disk / "report.html"
    p = irqlab_cmd("report", small_sweep, "-o", page)
    assert p.returncode == 0, p.stderr
    before = page.read_bytes()
    fill(small_disk)
    p = irqlab_cmd("report", small_sweep, "-o", page, "--title", "another")
    one_line_failure(p, f"--out {page}: cannot write it (No space left on device)")
    assert page.read_bytes() == before
    assert sorted(f.name for f in small_disk.iterdir()) == ["filler", "report.html"]


def test_a_sweep_onto_a_full_disk_says_so_before_it_starts(small_disk):
    fill(small_disk)
    sweep = small_disk.parent / "sweep.toml"
    sweep.write_text('[base]\nrun.duration_ms = 1\n[axes]\n"traffic.rate_pps" = [1e5]\n')
    p = irqlab_cmd("sweep", sweep, "--out", small_disk / "out")
    one_line_failure(p, f"--out {small_disk / 'out'}: cannot write a file in it (No space left")
