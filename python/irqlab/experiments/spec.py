"""A sweep's definition: a sweep file (or a dict shaped like one) parsed and checked key by
key — its base scenario, its axes and ranges, its replications, seed, warm-up and precision —
into a :class:`SweepSpec`, whose points are computed on demand."""

from __future__ import annotations

import difflib
import json
import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, cast, overload

from irqlab import __version__
from irqlab.errors import ConfigError
from irqlab.experiments.tasks import run_replication
from irqlab.report.flat import (
    encode_list,
    instantiate,
    is_entry_label,
    list_indices,
    template,
    typed_metrics,
)
from irqlab.scenario import (
    check_key,
    check_value,
    flatten,
    load_scenario,
    load_toml,
    plain,
    schema,
    show_key,
    spec_of,
)

SWEEP_KEYS = ("base", "replications", "seed", "warmup", "out", "precision")
PRECISION_KEYS = ("metrics", "relative", "confidence", "max_replications")
RANGE_KEYS = ("from", "to", "step", "num", "log")
#: Keys a sweep sets itself.
RESERVED = ("run.seed", "run.replication")
#: Replications of one point at most (the core's replication index is 16 bits).
MAX_REPLICATIONS = 65_536
#: Values of one axis at most.
MAX_AXIS_VALUES = 100_000
#: Points of one sweep at most, as values of one axis. A sweep is counted (the product of its
#: axes' lengths) before anything is expanded; its summary takes ~8 KB a point in memory.
MAX_POINTS = 100_000
#: Runs one sweep may need at most: points × replications (× max_replications with
#: [sweep.precision]). Its runs table takes ~3 KB a run in memory, its journal ~8 KB on disk.
MAX_RUNS = 1_000_000


@dataclass(frozen=True)
class Precision:
    """Sequential stopping: replicate until each metric's CI half-width ≤ relative·|mean|."""

    metrics: tuple[str, ...]
    relative: float
    confidence: float = 0.95
    max_replications: int = 100


@dataclass(frozen=True)
class Axis:
    key: str
    values: tuple[Any, ...]


@dataclass
class SweepSpec:
    """A parsed sweep: base scenario (flat, validated), axes, and how to run it."""

    base: dict[str, Any] = field(default_factory=dict)
    axes: list[Axis] = field(default_factory=list)
    replications: int = 10
    seed: int | None = None
    warmup: str | float | None = None
    precision: Precision | None = None
    out: Path | None = None

    def count(self) -> int:
        """How many points: the product of the axes' lengths (nothing is expanded)."""
        return math.prod(len(a.values) for a in self.axes)

    def points(self) -> Points:
        """Every point's flat overrides, in product order (the first axis varies slowest),
        as a sequence computed on demand."""
        return Points(self.base, tuple(self.axes))

    def check_size(self) -> None:
        """Refuses a sweep of more than :data:`MAX_POINTS` points or :data:`MAX_RUNS` runs,
        counting them without expanding anything."""
        n = self.count()
        if n > MAX_POINTS:
            sizes = " × ".join(f"{len(a.values):,} {a.key}" for a in self.axes)
            raise ConfigError(
                f"axes: {n:,} points ({sizes}); at most {MAX_POINTS:,} points per sweep: "
                "use coarser axes, or split it into several sweeps",
                "axes",
            )
        if self.precision is None:
            per_point, what = self.replications, "replications"
        else:
            per_point, what = self.precision.max_replications, "sweep.precision.max_replications"
        if n * per_point > MAX_RUNS:
            raise ConfigError(
                f"{n:,} points × {per_point:,} {what} = {n * per_point:,} runs; at most "
                f"{MAX_RUNS:,} runs per sweep: fewer points or replications, or several sweeps",
                what,
            )

    def override(
        self,
        *,
        replications: int | None = None,
        seed: int | None = None,
        warmup: str | float | None = None,
        precision: Mapping[str, Any] | None = None,
    ) -> None:
        """Replaces the given [sweep] settings (None keeps the file's), checking each."""
        if replications is not None:
            self.replications = _int("replications", replications, 1, MAX_REPLICATIONS)
        if seed is not None:
            self.seed = _int("seed", seed, 0, 2**64 - 1)
        if warmup is not None:
            self.warmup = parse_warmup(warmup)
        if precision is not None:
            self.precision = parse_precision(precision, self.replications)

    def describe(self) -> dict[str, Any]:
        """A JSON-able description, written next to the results."""
        return {
            "irqlab": __version__,
            "base": self.base,
            "axes": {a.key: list(a.values) for a in self.axes},
            "replications": self.replications,
            "seed": self.seed,
            "warmup": self.warmup,
            "precision": None if self.precision is None else vars(self.precision),
        }


class Points(Sequence[dict[str, Any]]):
    """The points of a sweep, computed on demand: point ``i`` is the ``i``-th combination of
    the axes' values in product order, the first axis varying slowest (mixed radix)."""

    def __init__(self, base: Mapping[str, Any], axes: Sequence[Axis]):
        self._base = dict(base)
        self._axes = tuple(axes)
        self._len = math.prod(len(a.values) for a in self._axes)

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, i: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._len))]
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError(f"point {i} of {self._len}")
        values = []
        for axis in reversed(self._axes):
            i, k = divmod(i, len(axis.values))
            values.append(axis.values[k])
        keys = [a.key for a in self._axes]
        return {**self._base, **dict(zip(keys, reversed(values), strict=True))}


def _close(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _int(name: str, value: Any, low: int, high: int) -> int:
    value = plain(value)  # numpy integers are integers
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(f"{name} = {value!r}: must be an integer in [{low}, {high}]", name)
    return value


def _number(name: str, value: Any, low: float, high: float, *, open_low: bool = True) -> float:
    value = plain(value)
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if ok:
        x = float(value)
        ok = math.isfinite(x) and (x > low if open_low else x >= low) and x <= high
    if not ok:
        bracket = "(" if open_low else "["
        raise ConfigError(f"{name} = {value!r}: must be a number in {bracket}{low}, {high}]", name)
    return float(value)


def _tidy(x: float) -> float:
    """Removes the binary noise of ``from + i·step`` (0.30000000000000004 → 0.3)."""
    return float(f"{x:.12g}")


def _range(key: str, spec: Mapping[str, Any]) -> list[Any]:
    name = f"axes.{key}"
    unknown = [k for k in spec if k not in RANGE_KEYS]
    if unknown:
        raise ConfigError(
            f"{name}.{show_key(unknown[0])}: unknown range key{_close(unknown[0], RANGE_KEYS)}; "
            f"a range is {{from, to, step}} or {{from, to, num, log}}",
            name,
        )
    for k in ("from", "to"):
        if k not in spec:
            raise ConfigError(f"{name}: a range needs '{k}'", name)
    lo = _number(f"{name}.from", spec["from"], -math.inf, math.inf)
    hi = _number(f"{name}.to", spec["to"], -math.inf, math.inf)
    if hi < lo:
        raise ConfigError(f"{name}: 'to' ({hi:g}) is below 'from' ({lo:g})", name)
    if ("step" in spec) == ("num" in spec):
        raise ConfigError(f"{name}: give exactly one of 'step' or 'num'", name)
    log = spec.get("log", False)
    if not isinstance(log, bool):
        raise ConfigError(f"{name}.log = {log!r}: must be true or false", name)
    integral = all(isinstance(spec.get(k, 0), int) for k in ("from", "to", "step"))
    if "step" in spec:
        if log:
            raise ConfigError(f"{name}: 'log' goes with 'num', not 'step'", name)
        step = _number(f"{name}.step", spec["step"], 0.0, math.inf)
        span = (hi - lo) / step * (1 + 1e-12) + 1e-9
        if not span < MAX_AXIS_VALUES:  # infinite too
            n_text = f"{math.floor(span) + 1:,}" if math.isfinite(span) else "too many"
            raise ConfigError(
                f"{name}: {n_text} values; at most {MAX_AXIS_VALUES:,} per axis", name
            )
        n = math.floor(span) + 1
        if integral:
            return [int(spec["from"]) + i * int(spec["step"]) for i in range(n)]
        return [_tidy(lo + i * step) for i in range(n)]
    n = _int(f"{name}.num", spec["num"], 1, MAX_AXIS_VALUES)
    if log:
        if lo <= 0:
            raise ConfigError(f"{name}: a log range needs 'from' > 0", name)
        values = [lo * (hi / lo) ** (i / (n - 1)) if n > 1 else lo for i in range(n)]
    else:
        values = [lo + (hi - lo) * i / (n - 1) if n > 1 else lo for i in range(n)]
    values = [_tidy(v) for v in values]
    if integral and not log and all(v.is_integer() for v in values):
        return [int(v) for v in values]
    return values


def _spell(parts: Sequence[str]) -> str:
    """A key as written in TOML: ``traffic.rate_pps``, ``"traffic.rate_pps"``, ``app."0".core``."""
    return ".".join(p if re.fullmatch(r"[A-Za-z0-9_-]+", p) else json.dumps(p) for p in parts)


def _once(leaves: Iterable[tuple[str, tuple[str, ...]]], where: str, hint: str) -> None:
    """Refuses a key given twice in one table, in two spellings that TOML itself accepts (a
    quoted dotted key and a bare one, or a sub-table): ``where: the key K is given twice``."""
    seen: dict[str, tuple[str, ...]] = {}
    for key, parts in leaves:
        if key in seen:
            raise ConfigError(
                f"{where}: the key {key} is given twice ({_spell(seen[key])} and "
                f"{_spell(parts)}); {hint}",
                key,
            )
        seen[key] = parts


def _leaves(
    tree: Mapping[str, Any], parts: tuple[str, ...] = ()
) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Every leaf of a scenario table as (dotted key, the parts it was written as), numbering
    the entries of an array of tables as :func:`irqlab.scenario.flatten` does."""
    for k, v in tree.items():
        here = (*parts, k)
        if isinstance(v, Mapping):
            yield from _leaves(v, here)
        elif isinstance(v, list | tuple) and v and all(isinstance(x, Mapping) for x in v):
            for i, entry in enumerate(v):
                yield from _leaves(entry, (*here, str(i)))
        else:
            yield ".".join(here), here


def flat_table(tree: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A scenario table flattened to dotted keys, refusing a key given twice."""
    _once(_leaves(tree), where, "keep one")
    return flatten(tree)


def base_file(path: Path, name: str, shown: str | Path) -> dict[str, Any]:
    """The flat keys of the scenario file that is a sweep's base (refusing a sweep file)."""
    scenario = load_toml(path)
    if any(isinstance(scenario.get(k), Mapping) for k in ("sweep", "base", "axes")):
        raise ConfigError(
            f"{name}: {shown} is a sweep file, not a scenario; a sweep's base is a scenario "
            "file (the base of that sweep, or its [base] table copied into a file)",
            name,
        )
    return flat_table(scenario, str(path))


def _axis_leaves(
    tree: Mapping[str, Any], parts: tuple[str, ...] = ()
) -> list[tuple[str, Any, tuple[str, ...]]]:
    out: list[tuple[str, Any, tuple[str, ...]]] = []
    for k, v in tree.items():
        here = (*parts, k)
        if isinstance(v, Mapping) and not (set(v) & set(RANGE_KEYS)):
            out += _axis_leaves(v, here)
        else:
            out.append((".".join(here), v, here))
    return out


def parse_axes(tree: Mapping[str, Any] | None) -> list[Axis]:
    """``{key: [values] | {from, to, step|num, log} | value}`` → checked axes, in order."""
    if tree is not None and not isinstance(tree, Mapping):
        raise ConfigError(
            "axes: expected a dict {key: [values] or {from, to, step|num}}, "
            f"got {type(tree).__name__}",
            "axes",
        )
    axes: list[Axis] = []
    leaves = _axis_leaves(tree or {})
    _once(((key, parts) for key, _, parts in leaves), "axes", "give each axis once")
    for key, spec, _ in leaves:
        listed = check_key(key)["type"] == "int_list"
        if key in RESERVED:
            raise ConfigError(
                f"axes.{key}: a sweep sets {key} itself "
                "(use [sweep] seed and replications instead)",
                key,
            )
        if not isinstance(spec, Mapping):
            spec = plain(spec)  # a numpy array of values is a list
        if isinstance(spec, Mapping):
            values = _range(key, spec)
        elif isinstance(spec, list | tuple):
            values = list(spec)
            if not values:
                raise ConfigError(f"axes.{key}: the list of values is empty", key)
            if len(values) > MAX_AXIS_VALUES:
                raise ConfigError(
                    f"axes.{key}: {len(values):,} values; at most {MAX_AXIS_VALUES:,} per axis", key
                )
            if listed and not all(isinstance(v, list | tuple) for v in values):
                raise ConfigError(
                    f"axes.{key}: {key} takes a list, so its axis is a list of lists, "
                    f"e.g. [[0, 1], [1, 0]] (one value: [{encode_list(values)}])",
                    key,
                )
        else:
            values = [spec]
        checked = tuple(check_value(key, v) for v in values)
        seen: set[Any] = set()
        for v in checked:
            frozen = tuple(v) if isinstance(v, list) else v
            if frozen in seen:
                raise ConfigError(f"axes.{key}: the value {shown(v)} repeats", key)
            seen.add(frozen)
        axes.append(Axis(key, checked))
    return axes


def shown(value: Any) -> str:
    """A value as written in a scenario file: ``[0, 1]``, ``true``, ``"napi"``, ``1000``."""
    return json.dumps(value) if isinstance(value, list | tuple | bool | str) else str(value)


def _suggest_metric(metric: str, known: Sequence[str]) -> str:
    """`` (did you mean 'per_core.1.cpu.busy'?)`` for ``per_core.1.cpu.bussy``: the closest
    known name, with the indices as written."""
    close = difflib.get_close_matches(template(metric), known, n=1, cutoff=0.6)
    if not close:
        return ""
    return f" (did you mean '{instantiate(close[0], list_indices(metric))}'?)"


def metric_problem(metric: str) -> str | None:
    """None if ``metric`` is a metric a run reports (``per_core.1.cpu.busy``, list indices as
    any number); else what it is instead, with the closest metric: ``not a metric (did you
    mean 'irq_per_s'?)``."""
    known = [k for k in metric_templates() if not is_entry_label(instantiate(k, [0, 0]))]
    if template(metric) in known:
        return None
    what = "a metric"
    if is_entry_label(metric):
        what = "a metric: it names an entry"
    elif is_parameter(metric):
        what = "a metric: it is a setting of the scenario"
    return f"not {what}{_suggest_metric(metric, known)}"


def parse_precision(tree: Mapping[str, Any], replications: int) -> Precision:
    name = "sweep.precision"
    if not isinstance(tree, Mapping):
        raise ConfigError(
            f"{name}: expected a table {{{', '.join(PRECISION_KEYS)}}}, got {type(tree).__name__}",
            name,
        )
    for k in tree:
        if k not in PRECISION_KEYS:
            raise ConfigError(
                f"{name}.{show_key(k)}: unknown key{_close(k, PRECISION_KEYS)}; "
                f"allowed: {', '.join(PRECISION_KEYS)}",
                f"{name}.{k}",
            )
    metrics = tree.get("metrics")
    if isinstance(metrics, str):
        metrics = [metrics]
    listed = isinstance(metrics, list | tuple) and all(isinstance(m, str) for m in metrics)
    if not metrics or not listed:
        raise ConfigError(f"{name}.metrics: give a list of metric names", f"{name}.metrics")
    for m in metrics:
        problem = metric_problem(m)
        if problem is not None:
            raise ConfigError(f"{name}.metrics: '{show_key(m)}' is {problem}", f"{name}.metrics")
    relative = _number(f"{name}.relative", tree.get("relative", 0.01), 0.0, 1.0)
    confidence = _number(f"{name}.confidence", tree.get("confidence", 0.95), 0.0, 0.9999)
    top = _int(
        f"{name}.max_replications",
        tree.get("max_replications", max(100, replications)),
        max(2, replications),
        MAX_REPLICATIONS,
    )
    return Precision(tuple(metrics), relative, confidence, top)


def parse_sweep(
    source: str | Path | Mapping[str, Any], base_overrides: Iterable[tuple[str, Any]] = ()
) -> SweepSpec:
    """Reads a sweep file (or a dict shaped like one) and checks every key in it."""
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        tree: Mapping[str, Any] = load_toml(path)
        here = path.parent
    else:
        tree, here = source, Path.cwd()
    sections = ("sweep", "base", "axes")
    for k in tree:
        if k not in sections:
            if spec_of(k) is not None or any(key.startswith(f"{k}.") for key in schema()):
                what = f"{source}" if isinstance(source, str | Path) else "this"
                raise ConfigError(
                    f"{what} is a scenario, not a sweep file ('{k}' is a scenario key); a sweep "
                    "file has [sweep], [base] and [axes], and its sweep.base may name a scenario",
                    k,
                )
            raise ConfigError(
                f"'{show_key(k)}': unknown section{_close(k, sections)}; "
                "a sweep file has [sweep], [base] and [axes]",
                k,
            )
        if not isinstance(tree[k], Mapping):
            raise ConfigError(f"{k}: must be a table, [{k}]", k)
    settings = dict(tree.get("sweep", {}))
    for k in settings:
        if k not in SWEEP_KEYS:
            raise ConfigError(
                f"sweep.{show_key(k)}: unknown key{_close(k, SWEEP_KEYS)}; "
                f"allowed: {', '.join(SWEEP_KEYS)}",
                f"sweep.{k}",
            )
    base: dict[str, Any] = {}
    if "base" in settings:
        if not isinstance(settings["base"], str):
            raise ConfigError("sweep.base: give the path of a scenario file", "sweep.base")
        base.update(base_file(here / settings["base"], "sweep.base", settings["base"]))
    base.update(flat_table(tree.get("base", {}), "base"))
    base.update(base_overrides)
    for key in RESERVED[1:]:
        if key in base:
            raise ConfigError(f"{key}: a sweep sets it itself (use sweep.replications)", key)
    spec = SweepSpec(base=load_scenario(base), axes=parse_axes(tree.get("axes")))
    replications = settings.get("replications", spec.replications)
    spec.replications = _int("sweep.replications", replications, 1, MAX_REPLICATIONS)
    if "seed" in settings:
        spec.seed = _int("sweep.seed", settings["seed"], 0, 2**64 - 1)
    if "warmup" in settings:
        spec.warmup = parse_warmup(settings["warmup"])
    if "out" in settings:
        if not isinstance(settings["out"], str):
            raise ConfigError("sweep.out: give a directory path", "sweep.out")
        spec.out = here / settings["out"]
    if "precision" in settings:
        spec.precision = parse_precision(settings["precision"], spec.replications)
    return spec


def parse_warmup(value: Any) -> str | float:
    """``"auto"`` (MSER-5) or a warm-up in ms."""
    if value == "auto":
        return "auto"
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ConfigError(
                f'sweep.warmup = {value!r}: must be "auto" or a number of ms', "sweep.warmup"
            ) from None
    return float(cast(float, check_value("run.warmup_ms", value)))  # a float key's value


def is_parameter(column: str) -> bool:
    """Whether a column of a runs table is a scenario key (``nic.itr_us``, ``app.0.core``)."""
    return spec_of(column) is not None


@cache
def metric_templates() -> tuple[str, ...]:
    """Every metric a run can report, in report order, list indices as ``N``
    (``per_core.N.cpu.busy``): the names a sweep's precision may ask for."""
    params = {
        "run.duration_ms": 0.001,
        "run.warmup_ms": 0.0,
        "traffic.rate_pps": 1.0,
        "app.0.core": 0,  # one entry in every list
    }
    row = run_replication({"params": params, "extra": {}})
    ran = [template(k) for k in row if not is_parameter(k)]
    # and those only some scenarios report (request/response, busy polling, a replay); not the
    # run's seed and replication, which are settings
    rest = [m for m in typed_metrics() if m not in ("seed", "replication")]
    return tuple(dict.fromkeys([*ran, *rest]))


def entry_counts(params: Mapping[str, Any]) -> dict[str, int]:
    """How many entries each list of a report has for these resolved parameters."""

    def numbered(table: str) -> int:
        prefix = table + "."
        found = {k[len(prefix) :].split(".", 1)[0] for k in params if k.startswith(prefix)}
        return len({i for i in found if i.isdigit()})

    return {
        "per_core": int(params["host.cores"]),
        "per_queue": int(params["nic.queues"]),
        "per_class": max(1, numbered("traffic.classes")),
        "per_app": numbered("app"),
    }
