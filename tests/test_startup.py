"""Start-up: `import irqlab`, a run and the quick commands load no library they do not use.

pandas, scipy and matplotlib (and pyarrow, dask, plotly, jinja2) take about a second to import;
sweeps, statistics, tuning, plots and reports need them, a single run does not. Each test runs
in a fresh interpreter and reads its ``sys.modules``, so that a top-level import of one of them
on the run path fails here rather than quietly slowing every command.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHORT = ["--set", "run.duration_ms=2", "--set", "run.warmup_ms=0"]
HEAVY = ("pandas", "scipy", "matplotlib", "pyarrow", "dask", "plotly", "jinja2")


def loaded_after(code: str) -> list[str]:
    """The libraries of ``HEAVY`` that a fresh interpreter has imported after running ``code``."""
    probe = textwrap.dedent(code) + textwrap.dedent(f"""
        import json as _json, sys as _sys
        _heavy = {HEAVY!r}
        print(_json.dumps(sorted(m for m in _heavy if m in _sys.modules)))
    """)
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_importing_irqlab_loads_no_heavy_library():
    assert loaded_after("import irqlab") == []


def test_a_run_through_the_python_api_loads_no_heavy_library():
    code = """
        import irqlab
        report = irqlab.run({"scheme": "napi", "traffic": {"rate_pps": 50_000}},
                            {"run.duration_ms": 2.0})
        assert report["packets"]["offered"] > 0
        irqlab.run_traced({"scheme": "irq"}, {"run.duration_ms": 1.0})
        irqlab.resolve({"scheme": "poll"})
    """
    assert loaded_after(code) == []


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["--version"],
        ["keys"],
        ["keys", "app"],
        ["run", "--help"],
        ["sweep", "--help"],
        ["check", "examples/napi.toml"],
        ["run", "examples/napi.toml", *SHORT],
        ["run", "examples/napi.toml", "--format", "json", *SHORT],
        ["run", "examples/rss_4core.toml", *SHORT],
        ["run", "examples/app_socket.toml", *SHORT],
    ],
    ids=" ".join,
)
def test_the_quick_commands_load_no_heavy_library(args):
    # The command line's own entry point, in this process: what `irqlab ARGS` imports.
    code = f"""
        from irqlab.cli import main
        try:
            main({args!r})
        except SystemExit as e:
            assert e.code in (0, None), e.code
    """
    assert loaded_after(code) == []


@pytest.mark.parametrize(
    "args", [["--help"], ["sweep", "--help"], ["check", "examples/napi.toml"]], ids=" ".join
)
def test_help_and_check_do_not_load_rich(args):
    # they print with click alone; rich's console and tables load for the commands that use them
    code = f"""
        import sys
        from irqlab.cli import main
        try:
            main({args!r})
        except SystemExit as e:
            assert e.code in (0, None), e.code
        assert "rich.console" not in sys.modules, "rich.console"
    """
    loaded_after(code)


def test_a_failing_command_loads_no_heavy_library():
    code = """
        from irqlab.cli import main
        try:
            main(["run", "examples/napi.toml", "--set", "traffic.rate_pps=-1"])
        except SystemExit as e:
            assert e.code == 2, e.code
    """
    assert loaded_after(code) == []


def test_sweep_and_tune_load_their_libraries_when_first_asked_for():
    code = """
        import sys
        import irqlab
        assert "pandas" not in sys.modules and "scipy" not in sys.modules
        import irqlab.experiments, irqlab.tuning
        assert irqlab.sweep is irqlab.experiments.sweep
        assert irqlab.load_results is irqlab.experiments.load_results
        assert irqlab.tune is irqlab.tuning.tune
    """
    assert "pandas" in loaded_after(code)


def test_the_lazy_names_are_the_modules_objects():
    import irqlab
    import irqlab.experiments
    import irqlab.tuning

    assert irqlab.sweep is irqlab.experiments.sweep
    assert irqlab.load_results is irqlab.experiments.load_results
    assert irqlab.tune is irqlab.tuning.tune
    assert set(irqlab.__all__) <= set(dir(irqlab))


def test_every_public_name_imports_from_the_package():
    code = """
        import irqlab
        from irqlab import *  # noqa: F403
        for name in irqlab.__all__:
            assert getattr(irqlab, name) is not None, name
        from irqlab import sweep, tune, load_results, summarize, plot
    """
    loaded_after(code)


def test_a_submodule_is_an_attribute_after_import_irqlab():
    # as before: `import irqlab` then `irqlab.experiments.…` works without importing it
    code = """
        import irqlab
        assert callable(irqlab.experiments.row_scenario)
        assert callable(irqlab.report.flatten_report)
    """
    assert "pandas" in loaded_after(code)


def test_an_unknown_attribute_is_an_attribute_error():
    import irqlab

    with pytest.raises(AttributeError, match="module 'irqlab' has no attribute 'no_such_thing'"):
        irqlab.no_such_thing  # noqa: B018
    assert not hasattr(irqlab, "__no_such_dunder__")
    assert not hasattr(irqlab, "no_such_thing")


def test_a_submodule_missing_a_library_says_which_library():
    # not "irqlab has no attribute experiments": the missing library is what to install
    code = """
        import sys
        sys.modules["pandas"] = None  # as if pandas were not installed
        import irqlab
        for name in ("sweep", "experiments"):
            try:
                getattr(irqlab, name)
            except ModuleNotFoundError as e:
                assert e.name == "pandas", (name, e.name)
            else:
                raise AssertionError(f"irqlab.{name} imported without pandas")
    """
    loaded_after(code)
