"""Hostile files and the user's own code: a named pipe where a file is read, a policy file that
does not parse or ends the program, a metric that is not a number, hand-edited results. Each
ends in a valid answer or one ``irqlab: error:`` line naming the file, the key or the field:
never a traceback, a hang, or a silent exit."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

import irqlab
from irqlab.errors import PolicyError
from test_faults_inputs import irqlab_cmd, one_line_failure

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
