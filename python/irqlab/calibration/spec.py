"""A targets file parsed and checked completely before anything runs: its [calibrate] settings,
the base scenario, the free parameters and their bounds, every target and validation point —
each point's scenario resolved once by the core (with the free parameters at their start), so
that a point the core refuses is one line naming the entry, not an error in the middle of a
fit."""

from __future__ import annotations

import difflib
import math
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irqlab.errors import ConfigError, ConfigWarning
from irqlab.scenario import check_key, check_value, load_scenario, load_toml, plain, show_key

#: The settings of [calibrate].
CALIBRATE_KEYS = ("base", "name", "seeds", "out", "max_evaluations", "step", "profile")
#: The fields of a free parameter.
FREE_KEYS = ("min", "max", "start", "log")
#: The fields of a [[target]] or [[validate]] entry.
ENTRY_KEYS = ("name", "point", "metric", "value", "sigma", "relative", "weight")
#: The uncertainty of a measured value: exactly one of these (default relative = 0.05).
UNCERTAINTY_KEYS = ("sigma", "relative", "weight")
DEFAULT_RELATIVE = 0.05
#: The finite-difference step of the Jacobian, as a fraction of each parameter's range: the
#: model is a simulation (common random numbers), so the step must be large beside its noise.
DEFAULT_STEP = 0.05
#: Model evaluations (each: every point at every seed) at most, by default.
DEFAULT_MAX_EVALUATIONS = 200
#: Keys a calibration sets itself (run.seed from ``seeds``).
RESERVED = ("run.seed", "run.replication")
#: A preset's name: it names the file written.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$")


@dataclass(frozen=True)
class Free:
    """A free parameter: a numeric scenario key searched within [lo, hi] (on a log scale when
    ``log``), from ``start``."""

    key: str
    lo: float
    hi: float
    start: float
    log: bool = False
    integer: bool = False

    def value(self, x: float) -> float | int:
        """The key's value at ``x`` in [0, 1] (0: lo, 1: hi)."""
        x = min(1.0, max(0.0, x))
        if self.log:
            v = math.exp(math.log(self.lo) + x * (math.log(self.hi) - math.log(self.lo)))
        else:
            v = self.lo + x * (self.hi - self.lo)
        v = min(self.hi, max(self.lo, float(f"{v:.9g}")))
        return round(v) if self.integer else v

    def scaled(self, v: float) -> float:
        """``v`` as a position in [0, 1] within the bounds."""
        if self.hi == self.lo:
            return 0.5
        if self.log:
            return (math.log(v) - math.log(self.lo)) / (math.log(self.hi) - math.log(self.lo))
        return (v - self.lo) / (self.hi - self.lo)

    def slope(self, x: float) -> float:
        """d value / d x at ``x``: how a step in [0, 1] becomes one in the key's unit."""
        if self.log:
            return float(self.value(x)) * (math.log(self.hi) - math.log(self.lo))
        return self.hi - self.lo


@dataclass(frozen=True)
class Entry:
    """A measured value at a scenario point: a target (fitted) or a validation point."""

    role: str  # "target" or "validation"
    index: int  # 1-based, within its role
    name: str
    point: dict[str, Any]
    metric: str
    value: float
    sigma: float

    @property
    def where(self) -> str:
        return f'{self.role} {self.index} ("{self.name}")'


@dataclass
class TargetsSpec:
    """A parsed targets file."""

    name: str
    base: dict[str, Any]
    free: list[Free]
    targets: list[Entry]
    validation: list[Entry] = field(default_factory=list)
    seeds: tuple[int, ...] = (1,)
    out: Path | None = None
    max_evaluations: int = DEFAULT_MAX_EVALUATIONS
    step: float = DEFAULT_STEP
    profile: bool = True
    source: str = "targets"

    def scenario(self, entry: Entry, theta: Mapping[str, Any], seed: int) -> dict[str, Any]:
        """The flat scenario of one run: the base, the entry's point, the free parameters'
        values and the seed."""
        return {**self.base, **entry.point, **theta, "run.seed": seed}

    def theta(self, x: Sequence[float]) -> dict[str, float | int]:
        """The free keys' values at ``x`` (each in [0, 1])."""
        return {f.key: f.value(float(v)) for f, v in zip(self.free, x, strict=True)}

    def describe(self) -> dict[str, Any]:
        """A JSON-able description (calibration.json's ``definition``)."""
        return {
            "name": self.name,
            "source": self.source,
            "base": self.base,
            "seeds": list(self.seeds),
            "max_evaluations": self.max_evaluations,
            "step": self.step,
            "free": [
                {"key": f.key, "min": f.lo, "max": f.hi, "start": f.start, "log": f.log}
                for f in self.free
            ],
            "targets": [_entry_json(e) for e in self.targets],
            "validation": [_entry_json(e) for e in self.validation],
        }


def _entry_json(e: Entry) -> dict[str, Any]:
    return {
        "name": e.name,
        "point": e.point,
        "metric": e.metric,
        "value": e.value,
        "sigma": e.sigma,
    }


def _close(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _number(where: str, name: str, value: Any, *, positive: bool = False) -> float:
    value = plain(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{where}: {name} = {value!r}: expected a number", name)
    if not math.isfinite(value):
        raise ConfigError(f"{where}: {name} = {value!r}: must be finite", name)
    if positive and not value > 0:
        raise ConfigError(f"{where}: {name} = {value!r}: must be above 0", name)
    return float(value)


def _integer(where: str, value: Any, low: int, high: int) -> int:
    value = plain(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(f"{where} = {value!r}: must be an integer in [{low}, {high}]", where)
    return value


def _unknown_fields(where: str, table: Mapping[str, Any], allowed: Sequence[str]) -> None:
    for k in table:
        if k not in allowed:
            raise ConfigError(
                f"{where}: unknown field '{show_key(str(k))}'{_close(str(k), allowed)}; "
                f"allowed: {', '.join(allowed)}",
                str(k),
            )


def _in_file(source: str, e: ConfigError) -> ConfigError:
    return ConfigError(f"{source}: {e}", e.key)


def parse_targets(source: str | os.PathLike[str] | Mapping[str, Any]) -> TargetsSpec:
    """Reads a targets file (or a dict shaped like one) and checks every entry; each error is
    one line naming the file and the entry."""
    from irqlab.experiments.spec import base_file, flat_table

    if isinstance(source, str | os.PathLike):
        path = Path(source)
        tree: Mapping[str, Any] = load_toml(path)
        here, shown, stem = path.parent, str(path), path.stem
    elif isinstance(source, Mapping):
        tree, here, shown, stem = source, Path.cwd(), "targets", "calibration"
    else:
        raise ConfigError(
            "targets: expected a targets file's path (str or pathlib.Path) or a dict shaped "
            f"like one, got {type(source).__name__}",
            "targets",
        )
    try:
        return _parse(tree, here, shown, stem, base_file, flat_table)
    except ConfigError as e:
        raise _in_file(shown, e) from None


def _parse(
    tree: Mapping[str, Any], here: Path, shown: str, stem: str, base_file: Any, flat_table: Any
) -> TargetsSpec:
    sections = ("calibrate", "base", "free", "target", "validate")
    for k in tree:
        if k not in sections:
            raise ConfigError(
                f"'{show_key(str(k))}': unknown section{_close(str(k), sections)}; a targets "
                "file has [calibrate], [base], [free], [[target]] and [[validate]]",
                str(k),
            )
    for k in ("calibrate", "base", "free"):
        if k in tree and not isinstance(tree[k], Mapping):
            raise ConfigError(f"{k}: must be a table, [{k}]", k)
    for k in ("target", "validate"):
        if k in tree and not (
            isinstance(tree[k], list) and all(isinstance(x, Mapping) for x in tree[k])
        ):
            raise ConfigError(f"{k}: must be an array of tables, [[{k}]]", k)
    settings = dict(tree.get("calibrate", {}))
    _unknown_fields("calibrate", settings, CALIBRATE_KEYS)
    base: dict[str, Any] = {}
    if "base" in settings:
        if not isinstance(settings["base"], str):
            raise ConfigError("calibrate.base: give the path of a scenario file", "base")
        base.update(base_file(here / settings["base"], "calibrate.base", settings["base"]))
    base.update(flat_table(tree.get("base", {}), "base"))
    for key in RESERVED:
        if key in base:
            raise ConfigError(f"base: {key}: a calibration sets it itself (calibrate.seeds)", key)
    try:
        base = load_scenario(base)
    except ConfigError as e:
        raise ConfigError(f"base: {e}", e.key) from None
    name = settings.get("name", stem)
    if not isinstance(name, str) or not _NAME.match(name):
        raise ConfigError(
            f"calibrate.name = {name!r}: must be a file name of letters, digits, '_', '-' and "
            "'.' (it names the preset written, NAME.toml)",
            "name",
        )
    seeds_value = plain(settings.get("seeds", [1]))
    if isinstance(seeds_value, int) and not isinstance(seeds_value, bool):
        seeds_value = [seeds_value]
    if not isinstance(seeds_value, list) or not seeds_value:
        raise ConfigError("calibrate.seeds: give a list of run.seed values, e.g. [1, 2]", "seeds")
    seeds = tuple(_integer("calibrate.seeds", s, 0, 2**64 - 1) for s in seeds_value)
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"calibrate.seeds = {list(seeds)}: a seed repeats", "seeds")
    spec = TargetsSpec(name=name, base=base, free=[], targets=[], seeds=seeds, source=shown)
    if "out" in settings:
        if not isinstance(settings["out"], str):
            raise ConfigError("calibrate.out: give a directory path", "out")
        spec.out = here / settings["out"]
    if "max_evaluations" in settings:
        spec.max_evaluations = _integer(
            "calibrate.max_evaluations", settings["max_evaluations"], 1, 100_000
        )
    if "step" in settings:
        step = _number("calibrate", "step", settings["step"], positive=True)
        if not step <= 0.5:
            raise ConfigError(f"calibrate.step = {step:g}: must be in (0, 0.5]", "step")
        spec.step = step
    if "profile" in settings:
        if not isinstance(settings["profile"], bool):
            raise ConfigError("calibrate.profile: must be true or false", "profile")
        spec.profile = settings["profile"]
    spec.free = _parse_free(tree.get("free", {}), base)
    spec.targets = [
        _parse_entry("target", i + 1, e, spec) for i, e in enumerate(tree.get("target", []))
    ]
    spec.validation = [
        _parse_entry("validation", i + 1, e, spec) for i, e in enumerate(tree.get("validate", []))
    ]
    if not spec.free and not spec.targets and not spec.validation:
        raise ConfigError(
            "nothing to do: give [free] keys and the [[target]] values to fit them to, or "
            "[[validate]] points to compare the base with",
            "target",
        )
    if spec.free and not spec.targets:
        raise ConfigError("no [[target]]: give at least one measured value to fit", "target")
    if spec.targets and not spec.free:
        raise ConfigError(
            "no [free] parameter: give at least one key to fit, e.g. "
            '"platform.irq_ns" = { min = 500, max = 5000 } (or make the [[target]] entries '
            "[[validate]] points, to compare the base with them without a fit)",
            "free",
        )
    if len(spec.free) > len(spec.targets):
        raise ConfigError(
            f"{len(spec.free)} free parameters but {len(spec.targets)} target(s): a fit needs "
            "at least as many targets as free parameters",
            "free",
        )
    _check_points(spec)
    return spec


def _parse_free(tree: Mapping[str, Any], base: Mapping[str, Any]) -> list[Free]:
    from irqlab import core

    if not isinstance(tree, Mapping):
        raise ConfigError("free: must be a table, [free]", "free")
    # a field table is a leaf: flatten the keys down to their {min, max} tables
    leaves: dict[str, Any] = {}

    def walk(node: Mapping[str, Any], prefix: str) -> None:
        for k, v in node.items():
            key = f"{prefix}{k}"
            if isinstance(v, Mapping) and not (set(v) & set(FREE_KEYS)) and v:
                walk(v, f"{key}.")
            elif key in leaves:
                raise ConfigError(f'free "{key}": given twice; keep one', key)
            else:
                leaves[key] = v

    walk(tree, "")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        resolved = core.resolve(dict(base))
    out = []
    for key, spec in leaves.items():
        where = f'free "{key}"'
        try:
            schema = check_key(key)
        except ConfigError as e:
            raise ConfigError(f"{where}: {e}", key) from None
        if key in RESERVED:
            raise ConfigError(f"{where}: a calibration sets {key} itself", key)
        if schema["type"] not in ("float", "int"):
            raise ConfigError(
                f"{where}: not a numeric key ({schema['allowed']}); a free parameter is a number",
                key,
            )
        if not isinstance(spec, Mapping):
            raise ConfigError(f"{where}: give its bounds, e.g. {{ min = 500, max = 5000 }}", key)
        _unknown_fields(where, spec, FREE_KEYS)
        for k in ("min", "max"):
            if k not in spec:
                raise ConfigError(f"{where}: needs '{k}'", key)
        lo = _number(where, "min", spec["min"])
        hi = _number(where, "max", spec["max"])
        if lo > hi:
            raise ConfigError(f"{where}: min {lo:g} > max {hi:g}", key)
        if lo == hi:
            raise ConfigError(f"{where}: min = max = {lo:g}; a fixed value belongs in [base]", key)
        for k, v in (("min", lo), ("max", hi)):
            try:
                check_value(key, int(v) if schema["type"] == "int" and v.is_integer() else v)
            except ConfigError as e:
                raise ConfigError(f"{where}: {k}: {e}", key) from None
        log = spec.get("log", False)
        if not isinstance(log, bool):
            raise ConfigError(f"{where}: log = {log!r}: must be true or false", key)
        if log and lo <= 0:
            raise ConfigError(f"{where}: a log scale needs min > 0 (min = {lo:g})", key)
        if "start" in spec:
            start = _number(where, "start", spec["start"])
            if not lo <= start <= hi:
                raise ConfigError(f"{where}: start {start:g} is outside [{lo:g}, {hi:g}]", key)
        else:
            given = resolved.get(key)
            if isinstance(given, int | float) and lo <= float(given) <= hi:
                start = float(given)
            elif log:
                start = math.sqrt(lo * hi)
            else:
                start = (lo + hi) / 2
        out.append(Free(key, lo, hi, start, log, schema["type"] == "int"))
    return out


def _parse_entry(role: str, index: int, tree: Mapping[str, Any], spec: TargetsSpec) -> Entry:
    from irqlab.experiments.spec import flat_table, metric_problem

    section = "target" if role == "target" else "validate"
    label = tree.get("name")
    where = f'{role} {index} ("{label}")' if isinstance(label, str) else f"{role} {index}"
    _unknown_fields(where, tree, ENTRY_KEYS)
    if "name" in tree and not isinstance(label, str):
        raise ConfigError(f"{where}: name = {label!r}: expected a string", "name")
    metric = tree.get("metric")
    if not isinstance(metric, str) or not metric:
        raise ConfigError(
            f'{where}: give the metric, e.g. metric = "irq_per_s" (any metric of '
            f"irqlab run --format json, dotted) in [[{section}]]",
            "metric",
        )
    from irqlab.calibration.model import DERIVED

    problem = None if metric in DERIVED else metric_problem(metric)
    if problem is not None:
        raise ConfigError(f"{where}: metric '{show_key(metric)}': {problem}", "metric")
    point = tree.get("point", {})
    if not isinstance(point, Mapping):
        raise ConfigError(
            f'{where}: point must be a table of keys, e.g. point = {{ "traffic.rate_pps" = 1e6 }}',
            "point",
        )
    try:
        flat = flat_table(point, f"{where}: point")
        for key in flat:
            if key in RESERVED:
                raise ConfigError(f"{key}: a calibration sets it itself (calibrate.seeds)", key)
            if any(f.key == key for f in spec.free):
                raise ConfigError(f"{key} is a free parameter: the fit sets it", key)
        flat = load_scenario(flat)
    except ConfigError as e:
        text = str(e)
        prefix = f"{where}: point: "
        raise ConfigError(
            f"{text}" if text.startswith(where) else f"{prefix}{text}", e.key
        ) from None
    if "value" not in tree:
        raise ConfigError(f"{where}: give the measured value, value = …", "value")
    value = _number(where, "value", tree["value"])
    given = [k for k in UNCERTAINTY_KEYS if k in tree]
    if len(given) > 1:
        raise ConfigError(
            f"{where}: give one of sigma, relative or weight, not {' and '.join(given)}", given[1]
        )
    kind = given[0] if given else "relative"
    amount = _number(where, kind, tree.get(kind, DEFAULT_RELATIVE), positive=True)
    if kind == "sigma":
        sigma = amount
    else:
        if value == 0:
            raise ConfigError(
                f"{where}: value = 0 with {kind}: a relative uncertainty of 0 is none; give sigma",
                kind,
            )
        sigma = abs(value) * amount if kind == "relative" else abs(value) / amount
    name = label if isinstance(label, str) else f"{metric} @ {point_text(flat)}"
    return Entry(role, index, name, dict(flat), metric, value, sigma)


def point_text(point: Mapping[str, Any]) -> str:
    """A point's keys as one line: ``qos.strategy=sq, traffic.rate_pps=1500000``."""
    if not point:
        return "the base"
    return ", ".join(f"{k}={_shown(v)}" for k, v in point.items())


def _shown(v: Any) -> str:
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return str(v)


def _check_points(spec: TargetsSpec) -> None:
    """Resolves every point once, with the free parameters at their start and at each bound,
    and checks that each entry's metric is measured there (``per_class.1.*`` needs two
    classes): a point the core refuses is one line naming the entry. A setting without effect
    at the start is a :class:`ConfigWarning`, once, naming the first entry where it is so."""
    from irqlab import core
    from irqlab.experiments.running import ENTRY_COUNTS
    from irqlab.experiments.spec import entry_counts

    start = {f.key: f.value(f.scaled(f.start)) for f in spec.free}
    corners = [start, {f.key: f.value(0.0) for f in spec.free}]
    corners.append({f.key: f.value(1.0) for f in spec.free})
    said: dict[str, str] = {}
    for entry in [*spec.targets, *spec.validation]:
        params: dict[str, Any] = {}
        for theta in corners:
            try:
                resolved = core.resolved(spec.scenario(entry, theta, spec.seeds[0]))
            except ConfigError as e:
                what = "" if theta is start else " (with the free parameters at their bounds)"
                raise ConfigError(
                    f"{entry.where}: the point is refused{what}: {e}", e.key
                ) from None
            if theta is start:
                params = resolved.params
                for _, message in resolved.warnings:
                    said.setdefault(message, f"{entry.where}: {message}")
        m = re.match(r"^(per_[a-z_]+)\.(0|[1-9][0-9]*)\.", entry.metric)
        if m:
            n = entry_counts(params)[m[1]]
            if int(m[2]) >= n:
                source = ENTRY_COUNTS[m[1]]
                raise ConfigError(
                    f"{entry.where}: metric '{entry.metric}' is not measured at this point "
                    f"({source}: {n})",
                    "metric",
                )
    for text in said.values():
        warnings.warn(ConfigWarning(text), stacklevel=4)
