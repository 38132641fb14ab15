"""`irqlab calibrate`: a platform's costs fitted back from numbers irqlab itself made (at other
seeds) within the uncertainties it reports; a cost none of the targets can see reported as not
identified; every bad targets file one line naming the entry; a killed calibration resumed
from its journal with fewer new runs and the same result; the command line and its page."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import irqlab
from irqlab import core
from irqlab.calibration import calibrate, parse_targets
from irqlab.cli import main
from irqlab.errors import ConfigError
from irqlab.report.flat import flatten_report

#: A small NAPI host at loads from light to near its saturation.
BASE = {"scheme": "napi", "traffic.kind": "poisson", "run.duration_ms": 40, "run.warmup_ms": 2}
TRUTH = {"platform.irq_ns": 3000.0, "platform.proto_ns": 4000.0}
RATES = (30_000, 80_000, 150_000)
METRICS = ("cpu.busy", "irq_per_s", "latency_us.mean")
FREE = {
    "platform.irq_ns": {"min": 1000, "max": 8000},
    "platform.proto_ns": {"min": 2000, "max": 10000},
}


def measured(rates=RATES, metrics=METRICS, seeds=(101, 102)) -> list[dict[str, Any]]:
    """Targets made by irqlab at TRUTH, at seeds other than the fit's."""
    out = []
    for rate in rates:
        rows = [
            flatten_report(
                core.run(core.resolve({**BASE, **TRUTH, "traffic.rate_pps": rate, "run.seed": s}))
            )
            for s in seeds
        ]
        for m in metrics:
            value = float(np.mean([r[m] for r in rows]))
            out.append({"point": {"traffic.rate_pps": rate}, "metric": m, "value": value})
    return out


def targets_file(free=FREE, targets=None, **settings: Any) -> dict[str, Any]:
    entries = [{**t, "relative": 0.03} for t in (targets or measured())]
    return {
        "calibrate": {"name": "napi-fit", "seeds": [1, 2], **settings},
        "base": BASE,
        "free": free,
        "target": entries,
    }


def test_known_costs_are_fitted_back_within_their_uncertainties():
    result = calibrate(targets_file(), executor="inline")
    assert not result.poor, result.poor_reasons
    for p in result.parameters:
        true = TRUTH[p.key]
        assert p.identifiable, p.note
        # the uncertainty means something: a few per cent of the value, not the whole range
        assert 0 < p.sigma < 0.12 * true, (p.key, p.sigma)
        assert abs(p.value - true) <= 3 * p.sigma, (p.key, p.value, p.sigma)
        assert p.profile is not None and p.profile["agrees"], p.profile
    assert result.evaluations > 1 and result.runs_new > 0
    assert result.chi2 < result.chi2_start


def test_a_cost_no_target_sees_is_reported_not_identified():
    # NAPI never runs a polling timer: poll_timer_ns moves nothing the targets measure
    free = {**FREE, "platform.poll_timer_ns": {"min": 0, "max": 5000}}
    result = calibrate(targets_file(free=free), executor="inline")
    by_key = {p.key: p for p in result.parameters}
    timer = by_key["platform.poll_timer_ns"]
    assert not timer.identifiable and timer.status == "no effect"
    assert "do not see it" in timer.note
    assert timer.effect == 0.0
    assert by_key["platform.irq_ns"].identifiable and by_key["platform.proto_ns"].identifiable


def test_collinear_parameters_are_reported_with_the_combination_they_fix():
    # CPU load at two light loads: irq_ns and proto_ns trade for each other
    targets = measured(rates=(30_000, 60_000), metrics=("cpu.busy",))
    result = calibrate(targets_file(targets=targets), executor="inline")
    assert all(not p.identifiable for p in result.parameters)
    assert {p.status for p in result.parameters} <= {"collinear", "wide"}
    assert result.combinations
    assert set(result.combinations[0]["parameters"]) == set(FREE)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "targets.toml"
    path.write_text(text)
    return path


GOOD = """
[calibrate]
seeds = [1]
[base]
scheme = "napi"
run.duration_ms = 5
[free]
"platform.irq_ns" = { min = 500, max = 5000 }
[[target]]
name = "IRQ rate"
point = { "traffic.rate_pps" = 50000 }
metric = "irq_per_s"
value = 30000
"""


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ('metric = "irq_per_s"', 'metric = "irq_per_sec"'),
            "targets.toml: target 1 (\"IRQ rate\"): metric 'irq_per_sec': not a metric "
            "(did you mean 'irq_per_s'?)",
        ),
        (
            ('"platform.irq_ns" = {', '"platform.irq_nss" = {'),
            "targets.toml: free \"platform.irq_nss\": unknown key 'platform.irq_nss' "
            "(did you mean 'platform.irq_ns'?)",
        ),
        (
            ('"traffic.rate_pps" = 50000', '"trafic.rate_pps" = 50000'),
            "targets.toml: target 1 (\"IRQ rate\"): point: unknown key 'trafic.rate_pps' "
            "(did you mean 'traffic.rate_pps'?)",
        ),
        (
            ("run.duration_ms = 5", "run.duration = 5"),
            "targets.toml: base: unknown key 'run.duration' (did you mean 'run.duration_ms'?)",
        ),
        (
            ("min = 500, max = 5000", "min = 5000, max = 500"),
            'targets.toml: free "platform.irq_ns": min 5000 > max 500',
        ),
        (
            ('"traffic.rate_pps" = 50000', '"traffic.rate_pps" = -5'),
            'targets.toml: target 1 ("IRQ rate"): point: traffic.rate_pps = -5: must be',
        ),
        (
            ('"traffic.rate_pps" = 50000', '"nic.queues" = 2, "nic.irq_affinity" = [0, 5]'),
            'targets.toml: target 1 ("IRQ rate"): the point is refused: ',
        ),
        (
            ("value = 30000", 'value = "lots"'),
            "targets.toml: target 1 (\"IRQ rate\"): value = 'lots': expected a number",
        ),
        (
            ("min = 500", 'min = "low"'),
            "targets.toml: free \"platform.irq_ns\": min = 'low': expected a number",
        ),
        (
            ('"platform.irq_ns" = {', '"platform.irq_dist" = {'),
            'targets.toml: free "platform.irq_dist": not a numeric key',
        ),
        (
            ("value = 30000", "value = 30000\nsigma = 1\nrelative = 0.1"),
            'targets.toml: target 1 ("IRQ rate"): give one of sigma, relative or weight',
        ),
        (
            ("value = 30000", "value = 30000\nsigma = 0"),
            'targets.toml: target 1 ("IRQ rate"): sigma = 0: must be above 0',
        ),
        (
            ("seeds = [1]", "seeds = [1, 1]"),
            "targets.toml: calibrate.seeds = [1, 1]: a seed repeats",
        ),
        (
            ('metric = "irq_per_s"', 'metric = "per_core.3.cpu.busy"'),
            "targets.toml: target 1 (\"IRQ rate\"): metric 'per_core.3.cpu.busy' is not "
            "measured at this point (host.cores: 1)",
        ),
        (
            ('point = { "traffic.rate_pps" = 50000 }', 'point = { "platform.irq_ns" = 1 }'),
            'targets.toml: target 1 ("IRQ rate"): point: platform.irq_ns is a free parameter',
        ),
        (("[calibrate]", "[calibration]"), "targets.toml: 'calibration': unknown section"),
        (
            ('name = "IRQ rate"', 'name = "IRQ rate"\nunit = "k"'),
            "targets.toml: target 1 (\"IRQ rate\"): unknown field 'unit'",
        ),
    ],
)
def test_a_bad_targets_file_is_one_line_naming_the_entry(tmp_path, change, message):
    old, new = change
    assert old in GOOD
    path = write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(ConfigError) as e:
        parse_targets(path)
    text = str(e.value)
    assert "\n" not in text
    assert text.startswith(str(tmp_path / "targets.toml")), text
    assert message.removeprefix("targets.toml") in text, text


def test_empty_targets_and_too_many_free_parameters_are_refused(tmp_path):
    start = GOOD.index("[[target]]")
    with pytest.raises(ConfigError, match=r"no \[\[target\]\]: give at least one"):
        parse_targets(write(tmp_path, GOOD[:start]))
    more = GOOD.replace(
        "[[target]]", '"platform.proto_ns" = { min = 100, max = 9000 }\n[[target]]', 1
    )
    with pytest.raises(ConfigError, match="2 free parameters but 1 target"):
        parse_targets(write(tmp_path, more))


def test_a_metric_only_some_scenarios_report_is_a_target(tmp_path):
    # rtt_us.* only with request/response traffic, busy_poll.* only where an app busy-polls:
    # names the report's type declares, accepted as any other metric; a misspelt one is not
    for metric in ("rtt_us.mean", "transactions_per_s", "busy_poll.polls"):
        spec = parse_targets(write(tmp_path, GOOD.replace('"irq_per_s"', f'"{metric}"')))
        assert [t.metric for t in spec.targets] == [metric]
    with pytest.raises(ConfigError, match=r"not a metric \(did you mean 'rtt_us.mean'\?\)"):
        parse_targets(write(tmp_path, GOOD.replace('"irq_per_s"', '"rtt_us.maen"')))


def test_a_file_of_validation_points_only_compares_the_base_and_fits_nothing(tmp_path):
    text = """
[calibrate]
name = "check"
seeds = [1]
[base]
scheme = "napi"
run.duration_ms = 10
[[validate]]
name = "CPU at 50 kpps"
point = { "traffic.rate_pps" = 50000 }
metric = "cpu.busy"
value = 0.3
sigma = 0.05
"""
    out = tmp_path / "out"
    result = calibrate(write(tmp_path, text), out=out, executor="inline")
    assert result.parameters == []
    assert not (out / "check.toml").exists(), "nothing fitted: no preset"
    (row,) = result.rows
    base = core.run(
        core.resolve(
            {"scheme": "napi", "run.duration_ms": 10, "traffic.rate_pps": 50000, "run.seed": 1}
        )
    )
    assert row["role"] == "validation"
    assert row["predicted"] == pytest.approx(base["cpu"]["busy"])
    assert row["normalised"] == pytest.approx((base["cpu"]["busy"] - 0.3) / 0.05)
    # targets without free keys are refused, naming the way out
    bad = text.replace("[[validate]]", "[[target]]")
    with pytest.raises(ConfigError, match=r"no \[free\] parameter.*\[\[validate\]\]"):
        parse_targets(write(tmp_path, bad))


def test_the_file_is_checked_before_anything_runs(tmp_path):
    # the second target is bad: nothing runs, no folder is made
    bad = GOOD + '[[target]]\npoint = {}\nmetric = "cpu.bussy"\nvalue = 1\n'
    out = tmp_path / "out"
    with pytest.raises(ConfigError, match=r"target 2: .*not a metric"):
        calibrate(write(tmp_path, bad), out=out, executor="inline")
    assert not out.exists()


def test_a_killed_calibration_resumes_with_fewer_runs_and_the_same_result(tmp_path):
    spec = targets_file()
    whole = calibrate(spec, out=tmp_path / "whole", executor="inline")
    total = whole.runs_new
    made = [0]

    def kill_after_some(done: int, batch: int) -> None:
        if done:
            made[0] += 1
        if made[0] >= total // 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        calibrate(spec, out=tmp_path / "cut", executor="inline", progress=kill_after_some)
    resumed = calibrate(spec, out=tmp_path / "cut", executor="inline")
    assert resumed.values == whole.values
    assert resumed.sigmas == whole.sigmas
    assert resumed.runs_cached >= total // 2 - 1
    assert resumed.runs_new < total
    assert resumed.runs_new + resumed.runs_cached == total
    # a rerun of a finished calibration makes no run
    again = calibrate(spec, out=tmp_path / "cut", executor="inline")
    assert again.runs_new == 0 and again.values == whole.values


def test_the_budget_of_evaluations_stops_the_fit_at_its_best_candidate():
    result = calibrate(targets_file(), executor="inline", max_evaluations=4)
    assert result.stopped.startswith("stopped after calibrate.max_evaluations = 4")
    assert result.chi2 <= result.chi2_start


def test_the_python_api_is_exported():
    assert irqlab.calibrate is calibrate


def test_the_command_writes_the_preset_the_residuals_and_a_page(tmp_path):
    import tomllib

    spec = targets_file()
    spec["validate"] = [{**measured(rates=(200_000,), metrics=("cpu.busy",))[0], "sigma": 0.02}]
    lines = ["[calibrate]", 'name = "napi-fit"', "seeds = [1, 2]", "[base]"]
    lines += [f'"{k}" = {json.dumps(v)}' for k, v in BASE.items()]
    lines += ["[free]"] + [
        f'"{k}" = {{ min = {v["min"]}, max = {v["max"]} }}' for k, v in FREE.items()
    ]
    for role, entries in (("target", spec["target"]), ("validate", spec["validate"])):
        for e in entries:
            lines += [
                f"[[{role}]]",
                f'point = {{ "traffic.rate_pps" = {e["point"]["traffic.rate_pps"]} }}',
            ]
            lines += [f'metric = "{e["metric"]}"', f"value = {e['value']!r}"]
            lines += [f"relative = {e['relative']}" if "relative" in e else f"sigma = {e['sigma']}"]
    path = tmp_path / "napi.toml"
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["calibrate", str(path), "-o", str(out), "--executor", "inline"])
    assert r.exit_code == 0, r.output
    assert "platform.irq_ns" in r.output and "χ²" in r.output and "validation" in r.output
    for name in ("napi-fit.toml", "residuals.csv", "calibration.json", "measured_vs_predicted.png"):
        assert (out / name).is_file(), name
    # the preset is a scenario file irqlab runs
    preset = tomllib.loads((out / "napi-fit.toml").read_text())
    assert set(preset["platform"]) == {"irq_ns", "proto_ns"}
    assert "# ±" in (out / "napi-fit.toml").read_text()
    r = CliRunner().invoke(main, ["run", str(out / "napi-fit.toml"), "--set", "run.duration_ms=2"])
    assert r.exit_code == 0, r.output
    # and any scenario runs on it with --set @FILE, a later --set winning
    napi = Path(__file__).resolve().parents[1] / "examples" / "napi.toml"
    args = ["run", str(napi), "--set", f"@{out / 'napi-fit.toml'}"]
    args += ["--set", "platform.proto_ns=4321", "--set", "run.duration_ms=2", "--format", "json"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    echoed = json.loads(r.output)["scenario"]
    assert echoed["platform.irq_ns"] == preset["platform"]["irq_ns"]
    assert echoed["platform.proto_ns"] == 4321
    rows = (out / "residuals.csv").read_text().splitlines()
    assert rows[0].startswith("role,name,metric,point,measured,sigma,predicted")
    assert len(rows) == 1 + len(spec["target"]) + 1 and rows[-1].startswith("validation,")
    data = json.loads((out / "calibration.json").read_text())
    assert data["kind"] == "calibration" and data["runs"]["new"] > 0
    assert math.isfinite(data["fit"]["chi2"]) and data["wall_s"] > 0
    # rerun: everything from the journal
    r = CliRunner().invoke(main, ["calibrate", str(path), "-o", str(out), "--executor", "inline"])
    assert r.exit_code == 0 and "(0 runs made," in r.output
    # the page
    r = CliRunner().invoke(main, ["report", str(out)])
    assert r.exit_code == 0, r.output
    html = (out / "report.html").read_text()
    assert "Fitted parameters" in html and "Residuals" in html and "data:image/png" in html


def test_the_command_line_errors_are_one_line_with_status_2(tmp_path):
    path = write(tmp_path, GOOD.replace("min = 500, max = 5000", "min = 5000, max = 500"))
    r = CliRunner().invoke(main, ["calibrate", str(path), "-o", str(tmp_path / "o")])
    assert r.exit_code == 2
    assert r.output.count("\n") == 1 and "Traceback" not in r.output
    assert r.output.startswith("irqlab: error: ") and "min 5000 > max 500" in r.output
    r = CliRunner().invoke(main, ["calibrate", str(tmp_path / "missing.toml")])
    assert r.exit_code == 2 and "no such file" in r.output


def test_a_folder_of_another_kind_is_refused(tmp_path):
    out = tmp_path / "sweep"
    out.mkdir()
    (out / "sweep.json").write_text("{}")
    with pytest.raises(ConfigError, match="holds a sweep's results"):
        calibrate(targets_file(), out=out, executor="inline")


def test_the_page_of_an_unfinished_or_damaged_calibration_is_one_line(tmp_path):
    out = tmp_path / "out"

    def stop(done: int, batch: int) -> None:
        if done:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        calibrate(targets_file(), out=out, executor="inline", progress=stop)
    r = CliRunner().invoke(main, ["report", str(out)])
    assert r.exit_code == 2 and "a calibration that did not finish" in r.output
    calibrate(targets_file(), out=out, executor="inline")
    data = json.loads((out / "calibration.json").read_text())
    del data["fit"]
    (out / "calibration.json").write_text(json.dumps(data))
    r = CliRunner().invoke(main, ["report", str(out)])
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "no field fit" in r.output


def test_the_fit_is_the_same_on_a_process_pool_as_inline():
    spec = targets_file(targets=measured(rates=(30_000, 150_000)), seeds=[1])
    spec["base"] = {**BASE, "run.duration_ms": 20}
    inline = calibrate(spec, executor="inline")
    pool = calibrate(spec, executor="process", workers=2)
    assert pool.values == inline.values and pool.sigmas == inline.sigmas
    assert pool.evaluations == inline.evaluations


def test_a_setting_without_effect_is_one_warning_naming_the_first_entry(tmp_path):
    text = GOOD.replace('scheme = "napi"', 'scheme = "ideal"\n"nic.itr_us" = 50')
    text = text.replace('metric = "irq_per_s"', 'metric = "cpu.busy"').replace("30000", "0.2")
    text += '[[target]]\npoint = { "traffic.rate_pps" = 90000 }\nmetric = "cpu.busy"\nvalue = 0.3\n'
    text = text.replace('"platform.irq_ns"', '"platform.proto_ns"')
    with pytest.warns(irqlab.ConfigWarning) as caught:
        parse_targets(write(tmp_path, text))
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1, messages
    assert messages[0].startswith('target 1 ("IRQ rate"): nic.itr_us = 50')


def test_the_preset_is_a_scenario_file_whatever_keys_were_fitted():
    import tomllib

    from irqlab.calibration import Calibration, Parameter, TargetsSpec
    from irqlab.calibration.result import preset_toml

    def fitted(key: str, value: float, sigma: float, identifiable: bool = True) -> Parameter:
        status = "identified" if identifiable else "no effect"
        return Parameter(
            key, value, value, sigma, 0, 1e6, False, identifiable, status, "", False, 1
        )

    spec = TargetsSpec("host", {"platform.preset": "beifuss2016", "scheme": "napi"}, [], [])
    result = Calibration(
        spec,
        [
            fitted("platform.irq_ns", 2343.2, 120.0),
            fitted("nic.itr_us", 33.3333, 2.0),
            fitted("platform.poll_timer_ns", 700.0, math.inf, identifiable=False),
        ],
        [],
        3.0,
        2,
        0.2,
        False,
        [],
    )
    text = preset_toml(result)
    tree = tomllib.loads(text)
    assert tree["platform"] == {"preset": "beifuss2016", "irq_ns": 2340.0, "poll_timer_ns": 700.0}
    assert tree["nic"] == {"itr_us": 33.3}
    assert "irq_ns = 2340.0  # ± 120\n" in text
    assert "itr_us = 33.3  # ± 2.0\n" in text
    assert "poll_timer_ns = 700.0  # ± ∞; NOT IDENTIFIED (no effect)" in text
    irqlab.load_scenario(tree)  # every key a scenario key
