"""Each study's declared calibration, ``<study>.targets.toml`` beside its module, in the format
``irqlab calibrate`` reads: it parses, names only keys the core knows (the free ones numeric,
within their bounds, starting at the value the study uses today), metrics a report produces,
and points the core accepts; it ships in the package; and what the study's tables and the
README call calibration is what the file declares."""

from __future__ import annotations

import importlib
import math
import re
import tomllib
import warnings
from pathlib import Path
from typing import Any

import pytest

import irqlab
from irqlab import core
from irqlab.errors import ConfigWarning
from irqlab.report.flat import flatten_report
from irqlab.scenario import flatten
from irqlab.studies import STUDIES
from irqlab.studies import chang2007 as chang
from irqlab.studies.common import preset, preset_file, targets, targets_file

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(STUDIES.values())
SECTIONS = {"calibrate", "base", "free", "target", "validate"}
SCHEMA = {k["key"]: k for k in core.schema()}


def spec(key: str) -> dict[str, Any] | None:
    """The schema entry of a key, numbered entries as ``app.N.field``."""
    parts = key.split(".")
    if len(parts) == 3 and parts[1].isdigit():
        key = f"{parts[0]}.N.{parts[2]}"
    return SCHEMA.get(key)  # type: ignore[return-value]


def scenario(data: dict[str, Any], point: dict[str, Any]) -> dict[str, Any]:
    return {**flatten(data["base"]), **flatten(point)}


def points(data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(e["name"], e) for part in ("target", "validate") for e in data[part]]


@pytest.fixture(params=MODULES, ids=lambda m: m.rsplit(".", 1)[-1])
def study(request) -> tuple[str, dict[str, Any]]:
    return request.param, targets(request.param)


def test_each_study_has_a_targets_file_beside_it_in_the_package():
    for module in MODULES:
        here = Path(importlib.import_module(module).__file__).parent
        assert (here / targets_file(module)).is_file(), module
    # the wheel ships every file of the package folder: nothing in the build excludes them
    maturin = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["maturin"]
    assert maturin["python-source"] == "python"
    assert "exclude" not in maturin and "include" not in maturin
    ignored = (ROOT / ".gitignore").read_text().split()
    assert not any(p.endswith(".toml") or p == "python" or p.startswith("/python") for p in ignored)


def test_the_file_is_in_the_calibrate_format(study):
    _module, data = study
    assert set(data) <= SECTIONS, set(data) - SECTIONS
    cal = data["calibrate"]
    assert isinstance(cal["name"], str) and cal["name"]
    assert cal["seeds"] and all(isinstance(s, int) for s in cal["seeds"])
    assert isinstance(cal["max_evaluations"], int) and cal["max_evaluations"] >= 1
    for part in ("target", "validate"):
        for e in data[part]:
            assert set(e) <= {"name", "point", "metric", "value", "sigma", "relative", "weight"}, e
            assert isinstance(e["name"], str) and isinstance(e["metric"], str), e
            assert isinstance(e["point"], dict), e
            assert isinstance(e["value"], int | float) and not isinstance(e["value"], bool), e
            spread = [k for k in ("sigma", "relative", "weight") if k in e]
            assert len(spread) == 1, e["name"]
            assert e[spread[0]] > 0, e["name"]
    names = [n for n, _ in points(data)]
    assert len(names) == len(set(names)), "each target and validation point has its own name"
    if data["free"]:
        assert data["target"], "free parameters need targets to fit them"
    for name, e in points(data):  # a point that set a free key would hide the fit from it
        assert not set(flatten(e["point"])) & set(data["free"]), name


def test_every_key_is_one_the_core_knows(study):
    _module, data = study
    keys = set(flatten(data["base"])) | set(data["free"])
    for _, e in points(data):
        keys |= set(flatten(e["point"]))
    unknown = sorted(k for k in keys if spec(k) is None)
    assert not unknown, unknown


def test_free_parameters_are_numeric_with_bounds_and_start_where_the_study_is(study):
    module, data = study
    # the study's platform: the base's preset, with the keys its fitted preset sets
    today = core.resolve({**flatten(data["base"]), **preset(module)})
    for key, b in data["free"].items():
        s = spec(key)
        assert s is not None and s["type"] in ("int", "float"), key
        assert set(b) <= {"min", "max", "start", "log"}, key
        assert s["min"] <= b["min"] < b["max"] <= s["max"], key
        # the start is today's hand calibration (the preset's value), inside the bounds
        assert b["start"] == pytest.approx(today[key]), key
        assert b["min"] <= b["start"] <= b["max"], key


def test_every_point_is_a_scenario_the_core_accepts(study):
    _module, data = study
    core.resolved(flatten(data["base"]))
    for _name, e in points(data):
        params = scenario(data, e["point"])
        core.resolved(params)  # raises ConfigError naming the bad key
        for key in data["free"]:  # and with each free key at its bounds
            for bound in ("min", "max"):
                core.resolved({**params, key: data["free"][key][bound]})


def test_every_metric_is_one_the_points_report_gives(study):
    """Each point run for a millisecond: the metric is among its report's flattened names
    (as sweeps name them), a number."""
    _module, data = study
    for name, e in points(data):
        params = {**scenario(data, e["point"]), "run.duration_ms": 1.0, "run.warmup_ms": 0.0}
        report = core.run(params)
        flat = flatten_report({k: v for k, v in report.items() if k != "scenario"})
        assert e["metric"] in flat, (name, e["metric"])
        value = flat[e["metric"]]
        assert value is None or isinstance(value, int | float), (name, value)


def test_chang2007_labels_exactly_the_declared_targets():
    """The study reads its calibrated cells from the file; the README's Table II names them."""
    data = targets("irqlab.studies.chang2007")
    idle = [t for t in data["target"] if t["metric"] == "cpu.idle"]
    assert {(chang._cell(t["point"])) for t in idle} == set(chang.CALIBRATED_IDLE)
    assert set(chang.CALIBRATED_IDLE) == {
        ("rhip", 512),
        ("rhip", 1024),
        ("rhip", 1200),
        ("napi", 1500),
    }
    assert chang.STARVED_SIZES == (512, 1024, 1200)
    # the paper's Table II values are the targets' and the validation points' values
    for t in [*idle, *(v for v in data["validate"] if v["metric"] == "cpu.idle")]:
        scheme, size = chang._cell(t["point"])
        paper = chang.TABLE2_PAPER[scheme][chang.TABLE2_SIZES.index(size)]
        assert math.isclose(100 * t["value"], paper), t["name"]
        assert t["point"]["traffic.rate_pps"] == pytest.approx(chang.wire_pps(size))
    readme = (ROOT / "README.md").read_text()
    assert chang.table2_caption() in readme
    assert "calibration targets: RHIP at 512, 1024 and 1200 B, NAPI at 1500 B" in readme


def test_busypoll2013_marks_exactly_the_declared_targets_calibrated():
    """The study's "calibrated" rows are the file's targets; the validation points are not."""
    from irqlab.studies import busypoll2013

    data = targets("irqlab.studies.busypoll2013")
    assert {busypoll2013._row(t["point"]) for t in data["target"]} == busypoll2013.CALIBRATED
    assert {
        (False, False, "0"),
        (True, True, "100"),
        (False, True, "adaptive"),
        (True, True, "0"),
    } == busypoll2013.CALIBRATED
    for v in data["validate"]:
        assert busypoll2013._row(v["point"]) not in busypoll2013.CALIBRATED, v["name"]
        assert busypoll2013._row(v["point"]) in busypoll2013.LETTER, v["name"]


def test_a_fitted_preset_sets_only_free_keys_and_the_study_runs_on_it():
    """A study's ``<study>.preset.toml`` is its calibration's output: the base's preset and
    values of the file's free keys, within their bounds; the study's BASE carries them."""
    for module in MODULES:
        fitted = preset(module)
        here = Path(importlib.import_module(module).__file__).parent
        assert bool(fitted) == (here / preset_file(module)).is_file(), module
        if not fitted:
            continue
        data = targets(module)
        assert fitted.pop("platform.preset") == data["base"]["platform.preset"], module
        base = flatten(data["base"])
        for key, value in fitted.items():
            if key not in data["free"]:  # the base's own platform keys, as calibrate writes them
                assert key.startswith("platform.") and base[key] == value, key
                continue
            b = data["free"][key]
            assert b["min"] <= value <= b["max"], key
        study_base = importlib.import_module(module).BASE
        assert {k: study_base[k] for k in fitted} == fitted, module


def readme_rows(heading: str, columns: str) -> list[list[str]]:
    """The rows of the first table with header ``columns`` after ``heading`` in the README."""
    text = (ROOT / "README.md").read_text()
    text = text[text.index(heading) :]
    text = text[text.index(columns) :].split("\n\n")[0]
    return [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines()[2:]]


def test_beifuss2016_readme_labels_exactly_the_declared_targets_calibration():
    """The README's paper table marks as calibration the file's targets, and the egress offset
    L0 that the study fits after the platform (no platform key, so not in the file)."""
    header = "| quantity | paper | irqlab | role |"
    rows = readme_rows("## Ingress QoS: Beifuß et al. (2016)", header)
    calibration = {r[0] for r in rows if r[3].startswith("calibration")}
    offset = {r[0] for r in rows if r[3] == "calibration (L0)" or r[0].startswith("L0,")}
    names = {t["name"] for t in targets("irqlab.studies.beifuss2016")["target"]}
    assert calibration - offset == names
    assert len(offset) == 2


def test_beifuss2016_preset_moves_interrupt_time_into_delivery_and_leaves_sq_as_it_was():
    """The fitted interrupt cycle (handler plus delivery) is what SQ sees: SQ near saturation
    has the same interrupts, latency and throughput with the cycle split as with all of it CPU
    time, and its CPU is busy for less by the delivery's share of every interrupt. The switch
    cost between NAPIs touches neither SQ nor LL (one vector each), bit for bit."""
    from irqlab.studies import beifuss2016

    fitted = preset("irqlab.studies.beifuss2016")
    cycle = fitted["platform.irq_ns"] + fitted["platform.irq_delivery_ns"]
    assert fitted["platform.irq_delivery_ns"] > 0 and fitted["platform.napi_switch_ns"] > 0
    point = {
        **beifuss2016.BASE,
        "qos.strategy": "sq",
        "qos.rt_share": 0.3,
        "traffic.rate_pps": 1.5e6,
        "run.duration_ms": 20.0,
        "run.warmup_ms": 5.0,
    }
    split = core.run(point)
    whole = core.run({**point, "platform.irq_ns": cycle, "platform.irq_delivery_ns": 0.0})
    for metric in ("irq_per_s", "throughput_pps"):
        assert split[metric] == whole[metric], metric
    assert split["latency_us"]["mean"] == whole["latency_us"]["mean"]
    saved = split["irq_per_s"] * fitted["platform.irq_delivery_ns"] * 1e-9
    assert whole["cpu"]["busy"] - split["cpu"]["busy"] == pytest.approx(saved, rel=1e-3)
    for strategy in ("sq", "ll-wfq"):
        at = {**point, "qos.strategy": strategy}
        with_switch, without = core.run(at), core.run({**at, "platform.napi_switch_ns": 0.0})
        del with_switch["scenario"], without["scenario"]  # which lists the key as set
        assert with_switch == without, strategy


def committed_sigmas(module: str) -> dict[str, float]:
    """Each fitted key's 1-σ uncertainty as the committed preset's comments give it
    (``irq_ns = 5660.0  # ± 460``; ``± ∞`` where the targets do not see the key)."""
    text = (Path(importlib.import_module(module).__file__).parent / preset_file(module)).read_text()
    sigmas, table = {}, ""
    for line in text.splitlines():
        if line.startswith("[") and line.endswith("]"):
            table = line.strip("[]")
        m = re.match(r"(\w+) = \S+  # ± (\S+?)(;|$)", line)
        if m:
            sigmas[f"{table}.{m[1]}"] = math.inf if m[2] == "∞" else float(m[2].replace(",", ""))
    return sigmas


@pytest.mark.slow
@pytest.mark.parametrize("module", ["irqlab.studies.chang2007", "irqlab.studies.busypoll2013"])
def test_refitting_the_targets_file_reproduces_the_committed_preset(module):
    """`irqlab calibrate` on the study's targets file (which starts at the committed preset)
    gives the committed ``<study>.preset.toml`` back, each fitted value within the uncertainty
    the preset reports for it."""
    here = Path(importlib.import_module(module).__file__).parent
    with warnings.catch_warnings():  # chang2007: RHIP's floor has no effect at NAPI's points
        warnings.simplefilter("ignore", ConfigWarning)
        result = irqlab.calibrate(here / targets_file(module), out=None, workers=2)
    committed, sigmas = preset(module), committed_sigmas(module)
    assert set(sigmas) == set(result.values) == set(targets(module)["free"])
    for key, value in result.values.items():
        assert abs(value - committed[key]) <= sigmas[key], (key, value, committed[key])
    assert not result.poor, result.poor_reasons
