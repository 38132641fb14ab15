"""Errors at the Python/Rust boundary: the core validates again and never lets a panic out."""

from __future__ import annotations

import pytest

import irqlab
from irqlab import _irqlab


def test_core_rejects_what_python_would_have_caught():
    # bypass the Python validation: the core's own check names the key
    with pytest.raises(irqlab.ConfigError) as e:
        _irqlab.run({"nic.ring_descriptors": 0})
    assert e.value.key == "nic.ring_descriptors"
    assert str(e.value) == "nic.ring_descriptors = 0: must be an integer in 1 … 1048576"
    with pytest.raises(irqlab.ConfigError) as e:
        _irqlab.run({"no.such_key": 1})
    assert e.value.key == "no.such_key"
    with pytest.raises(irqlab.ConfigError, match="expected a number"):
        _irqlab.run({"traffic.rate_pps": [1, 2]})
    with pytest.raises(irqlab.ConfigError, match="integer too large"):
        _irqlab.run({"run.seed": 2**200})
    with pytest.raises(irqlab.ConfigError, match=r"run\.seed = -1"):
        _irqlab.run({"run.seed": -1})


def test_a_panic_in_the_core_becomes_an_internal_error_not_a_crash():
    with pytest.raises(irqlab.InternalError, match="deliberate test panic") as e:
        _irqlab._panic_for_test()
    assert "this is a bug" in str(e.value)
    # the interpreter and the module are fine afterwards
    assert irqlab.run({"run.duration_ms": 1})["packets"]["offered"] > 0


def test_python_api_errors_name_the_key():
    with pytest.raises(irqlab.ConfigError) as e:
        irqlab.run({"traffic": {"rate_pps": "fast"}})
    assert e.value.key == "traffic.rate_pps"
    with pytest.raises(irqlab.ConfigError) as e:
        irqlab.run({"traffic": {"rate_ps": 5}})
    assert "did you mean 'traffic.rate_pps'" in str(e.value)


TUNE_SHORT = {"run.duration_ms": 2, "run.warmup_ms": 0}


def _tune(out, seed):
    return irqlab.tune(
        {"scheme": "napi", **TUNE_SHORT},
        ["latency_us.p99 <= 1000"],
        knobs=["nic.itr_us=0,20"],
        seed=seed,
        min_replications=2,
        max_replications=2,
        executor="inline",
        out=out,
    )


def test_errors_name_the_python_arguments_to_a_python_caller(tmp_path):
    """A Python caller reads ``out=`` and ``fresh=True`` (or ``resume=False``), never the
    command line's ``--out`` and ``--fresh``."""
    _tune(tmp_path / "t", seed=1)
    with pytest.raises(irqlab.ConfigError) as e:
        _tune(tmp_path / "t", seed=2)
    assert "choose another out=, or fresh=True to replace it" in str(e.value)
    assert "--" not in str(e.value)
    with pytest.raises(irqlab.ConfigError) as e:
        irqlab.tune({"scheme": "napi"}, ["p99 < fast"])
    assert str(e.value).startswith("slos: 'p99 < fast'"), str(e.value)
    with pytest.raises(irqlab.ConfigError) as e:
        irqlab.tune({"scheme": "napi"}, [])
    assert "slos=['latency_us.p99 <= 50']" in str(e.value)
    with pytest.raises(irqlab.ConfigError) as e:
        irqlab.tune({"scheme": "napi"}, ["latency_us.p99 <= 50"], knobs=["nic.itr_us=9..1"])
    assert str(e.value).startswith("knobs: nic.itr_us=9..1"), str(e.value)
    sweep = {"base": {"scheme": "irq", **_nested(TUNE_SHORT)}, "axes": {"traffic.rate_pps": [1e4]}}
    irqlab.sweep(sweep, replications=1, executor="inline", out=tmp_path / "s")
    sweep["base"]["scheme"] = "napi"  # another sweep
    with pytest.raises(irqlab.ConfigError) as e:
        irqlab.sweep(sweep, replications=1, executor="inline", out=tmp_path / "s")
    assert "use another out=, or resume=False to discard them" in str(e.value)


def test_errors_name_the_options_on_the_command_line(tmp_path):
    from click.testing import CliRunner

    from irqlab.cli import main

    scenario = tmp_path / "s.toml"
    scenario.write_text('scheme = "napi"\n[run]\nduration_ms = 2\nwarmup_ms = 0\n')
    base = ["tune", str(scenario), "--slo", "latency_us.p99 <= 1000", "--knob"]
    base += ["nic.itr_us=0,20", "--replications", "2..2", "--executor", "inline"]
    base += ["--out", str(tmp_path / "t"), "--no-progress"]
    first = CliRunner().invoke(main, [*base, "--seed", "1"])
    assert first.exit_code == 0, first.output
    second = CliRunner().invoke(main, [*base, "--seed", "2"])
    assert second.exit_code == 2
    assert "choose another --out, or --fresh to replace it" in second.output
    bad = CliRunner().invoke(main, [*base[:2], "--slo", "p99 < fast", *base[4:]])
    assert "--slo 'p99 < fast'" in bad.output


def _nested(flat):
    tree: dict = {}
    for key, value in flat.items():
        table, name = key.split(".")
        tree.setdefault(table, {})[name] = value
    return tree
