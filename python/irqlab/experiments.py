"""Experiments: sweeps of a base scenario over axes, with replications, statistics, and
resumable output.

A sweep file is TOML::

    [sweep]
    base = "napi.toml"          # a scenario file (relative to this file); [base] adds to it
    replications = 10           # per point (independent random streams, see below)
    seed = 1                    # the sweep seed: run.seed of every run
    warmup = "auto"             # MSER-5 on a pilot run; or a number of ms; default: the base's
    out = "results/napi"        # default output directory

    [sweep.precision]           # optional: add replications until every metric is precise
    metrics = ["latency_us.mean", "throughput_pps"]
    relative = 0.01             # CI half-width ≤ 1% of the mean …
    confidence = 0.95           # … at 95%
    max_replications = 100

    [base]                      # scenario keys, as in a scenario file
    run.duration_ms = 100

    [axes]                      # the points are the product of the axes, in this order
    scheme = ["irq", "napi"]
    "traffic.rate_pps" = { from = 20_000, to = 300_000, step = 20_000 }
    # or { from = 1e4, to = 1e6, num = 13, log = true }
    "nic.irq_affinity" = [[0, 1], [1, 1]]   # a list-valued key: a list of lists
    "app.0.cost_ns" = [500, 1000]           # a field of a numbered entry ([[app]])

Replication ``r`` of every point runs with ``run.seed`` = the sweep seed and
``run.replication`` = ``r``: the core derives its random streams from the pair, so
replications never overlap, and replication ``r`` of every scheme and load sees the same
arrival stream (common random numbers).

A run's row is flat scalars: the report flattened with dots (``per_core.1.cpu.busy``,
:func:`irqlab.report.flatten_report`), then every parameter the core echoed, numbered keys
included (``app.0.core``). Lists (``nic.irq_affinity``, ``per_core.0.vectors``) are stored as
their canonical text ``"[0, 1]"``, which :func:`row_scenario` turns back into lists. The
columns of a table are those of its rows: a 4-core sweep has ``per_core.3.*``.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import math
import os
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, overload

import pandas as pd

from irqlab import __version__, _irqlab
from irqlab import journal as journal_module
from irqlab.errors import ConfigError, IrqlabError, option
from irqlab.executors import Executor, WorkersLost, make_executor
from irqlab.executors import check as check_executor
from irqlab.files import own_folder, read_limited, regular_file
from irqlab.journal import Journal, JournalRecovered, open_journal
from irqlab.report import (
    decode_list,
    encode_list,
    instantiate,
    is_entry_label,
    list_indices,
    template,
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
    tables,
)
from irqlab.shapes import check_columns, metric_columns
from irqlab.stats import precision_met, replications_needed, summarize
from irqlab.tasks import run_pilot, run_replication

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
#: Rows turned into a data frame at a time when the runs table is built from the journal.
TABLE_CHUNK = 2_000
#: Columns a sweep adds to each run's row.
BOOKKEEPING = ("point", "replication", "point_id", "warmup.method", "warmup.reliable")
#: The lists of entries in a report, and what sets their length: a key, or the entries.
ENTRY_COUNTS = {
    "per_core": "host.cores",
    "per_queue": "nic.queues",
    "per_class": "traffic classes",
    "per_app": "apps",
}


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


# ---------------------------------------------------------------------------------------------
# Parsing


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


def _leaves(tree: Mapping[str, Any], parts: tuple[str, ...] = ()) -> Iterator[tuple[str, tuple]]:
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


def _flat(tree: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A scenario table flattened to dotted keys, refusing a key given twice."""
    _once(_leaves(tree), where, "keep one")
    return flatten(tree)


def _base_file(path: Path, name: str, shown: str | Path) -> dict[str, Any]:
    """The flat keys of the scenario file that is a sweep's base (refusing a sweep file)."""
    scenario = load_toml(path)
    if any(isinstance(scenario.get(k), Mapping) for k in ("sweep", "base", "axes")):
        raise ConfigError(
            f"{name}: {shown} is a sweep file, not a scenario; a sweep's base is a scenario "
            "file (the base of that sweep, or its [base] table copied into a file)",
            name,
        )
    return _flat(scenario, str(path))


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
        check_key(key)
        if key in RESERVED:
            raise ConfigError(
                f"axes.{key}: a sweep sets {key} itself "
                "(use [sweep] seed and replications instead)",
                key,
            )
        listed = (spec_of(key) or {}).get("type") == "int_list"
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
                raise ConfigError(f"axes.{key}: the value {_show(v)} repeats", key)
            seen.add(frozen)
        axes.append(Axis(key, checked))
    return axes


def _show(value: Any) -> str:
    """A value as written in a scenario file: ``[0, 1]``, ``true``, ``"napi"``, ``1000``."""
    return json.dumps(value) if isinstance(value, list | tuple | bool | str) else str(value)


def _suggest_metric(metric: str, known: Sequence[str]) -> str:
    """`` (did you mean 'per_core.1.cpu.busy'?)`` for ``per_core.1.cpu.bussy``: the closest
    known name, with the indices as written."""
    close = difflib.get_close_matches(template(metric), known, n=1, cutoff=0.6)
    if not close:
        return ""
    return f" (did you mean '{instantiate(close[0], list_indices(metric))}'?)"


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
    known = [k for k in metric_templates() if not is_entry_label(instantiate(k, [0, 0]))]
    for m in metrics:
        if template(m) not in known:
            what = "a metric"
            if is_entry_label(m):
                what = "a metric: it names an entry"
            elif is_parameter(m):
                what = "a metric: it is a setting of the scenario"
            raise ConfigError(
                f"{name}.metrics: '{show_key(m)}' is not {what}{_suggest_metric(m, known)}",
                f"{name}.metrics",
            )
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
        base.update(_base_file(here / settings["base"], "sweep.base", settings["base"]))
    base.update(_flat(tree.get("base", {}), "base"))
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
    return float(check_value("run.warmup_ms", value))


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
    return tuple(dict.fromkeys(template(k) for k in row if not is_parameter(k)))


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


def _check_measured(metrics: Sequence[str], p: Point) -> None:
    """Every precision metric exists at this point (``per_core.3.*`` needs 4 cores)."""
    for m in metrics:
        found = re.match(r"^(per_[a-z_]+)\.(0|[1-9][0-9]*)\.", m)
        if not found:
            continue
        name, index = found[1], int(found[2])
        count = entry_counts(p.params)[name]
        if index >= count:
            source = ENTRY_COUNTS[name]
            what = f"{source} = {count}" if source in p.params else f"{source}: {count}"
            raise ConfigError(
                f"sweep.precision.metrics: '{m}' is not measured at point {p.index} ({what})",
                "sweep.precision.metrics",
            )


# ---------------------------------------------------------------------------------------------
# Running


@dataclass
class Point:
    index: int
    point_id: str
    params: dict[str, Any]  # resolved, run.replication = 0


def _point_id(params: Mapping[str, Any], warmup: str | float | None) -> str:
    key = {k: v for k, v in params.items() if k != "run.replication"}
    if warmup == "auto":
        key["run.warmup_ms"] = "auto"
    text = json.dumps({"irqlab": __version__, "params": key}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _resolve(spec: SweepSpec, points: Points, i: int) -> Point:
    """Point ``i`` resolved by the core (every key, defaults filled in), with its id."""
    overrides = points[i]
    if spec.seed is not None:
        overrides["run.seed"] = spec.seed
    if isinstance(spec.warmup, float):
        overrides["run.warmup_ms"] = spec.warmup
    try:
        params = dict(_irqlab.resolve(overrides))
    except ConfigError as e:
        where = ", ".join(f"{a.key}={_show(overrides[a.key])}" for a in spec.axes)
        raise ConfigError(f"{e} (at point {i}: {where})", e.key) from None
    return Point(i, _point_id(params, spec.warmup), params)


def resolve_points(spec: SweepSpec) -> Iterator[Point]:
    """Every point of the sweep resolved, one at a time, in order."""
    points = spec.points()
    for i in range(len(points)):
        yield _resolve(spec, points, i)


def _check_points(spec: SweepSpec) -> list[str]:
    """Checks every point before anything runs (the core validates each); their ids."""
    spec.check_size()
    ids = []
    for p in resolve_points(spec):
        if spec.precision is not None:
            _check_measured(spec.precision.metrics, p)
        ids.append(p.point_id)
    return ids


def progress_bar(enabled: bool, runs: str = "runs", eta: str = "ETA") -> Any:
    """A rich bar over runs on stderr: done/total, elapsed, ETA (sweeps; ``irqlab tune`` says
    "runs (at most)" and "ETA ≤", its total being the most its race can take)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(f"{runs} ·"),
        TimeElapsedColumn(),
        TextColumn(f"· {eta}"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        disable=not enabled,
        transient=False,
    )


def _targets(
    spec: SweepSpec,
    ids: Sequence[str],
    journal: Journal,
    targets: list[int],
    settled: set[int],
) -> bool:
    """Sequential stopping: raises each point's target count until its metrics are precise.

    Each decision uses exactly replications 0 … target−1, so the same data always gives the
    same next target, whatever order the runs finished in or whether the sweep was resumed
    (and a point found precise stays so: ``settled``). The target at most doubles per round.
    Returns whether any target changed.
    """
    prec = spec.precision
    if prec is None:
        return False
    changed = False
    for i, pid in enumerate(ids):
        n = targets[i]
        if i in settled or n >= prec.max_replications:
            continue
        data = journal.rows(pid, n)
        if len(data) < n:  # some were damaged: decide once they have run again
            continue
        need = n
        for m in prec.metrics:
            values = [d.get(m) for d in data]
            values = [v for v in values if v is not None and v == v]
            if len(values) < 2 or not precision_met(values, prec.relative, prec.confidence):
                est = replications_needed(values, prec.relative, prec.confidence)
                need = max(need, min(est, 2 * n), n + 1)
        need = min(need, prec.max_replications)
        if need > n:
            targets[i] = need
            changed = True
        else:
            settled.add(i)
    return changed


def _normal(key: str, value: Any) -> Any:
    """A base value as the sweep's definition records it: floats for float keys."""
    spec = spec_of(key)
    if spec is not None and spec["type"] == "float" and isinstance(value, int | float):
        return float(value)
    return value


def _definition(described: Mapping[str, Any]) -> dict[str, Any]:
    """What makes a sweep the one a results folder holds, from :meth:`SweepSpec.describe`:
    its base (but the keys its axes set, and plain keys at their default), its axes' keys
    in order, its seed and its warm-up. More values on an axis, more replications or another
    precision continue the same sweep (reusing its runs); anything else is another sweep."""
    axes = list(described["axes"])
    base = {}
    for key, value in described["base"].items():
        spec = spec_of(key)
        if key in axes or (
            spec is not None and "table" not in spec and _normal(key, spec["default"]) == value
        ):
            continue
        base[key] = _normal(key, value)
    return {
        "base": base,
        "axes": axes,
        "seed": described.get("seed"),
        "warmup": described.get("warmup"),
    }


def _setting(key: str, definition: Mapping[str, Any]) -> str:
    """How one definition sets ``key`` (a base key, or a [sweep] setting)."""
    if key in ("seed", "warmup"):
        value = definition[key]
        return "not set" if value is None else f"sweep.{key} = {_show(value)}"
    if key in definition["base"]:
        return f"{key} = {_show(definition['base'][key])}"
    spec = spec_of(key)
    if spec is None or "table" in spec:
        return f"no {key}"
    return f"{key} at its default, {_show(spec['default'])}"


def _difference(there: Mapping[str, Any], here: Mapping[str, Any]) -> str:
    """The first difference between two sweep definitions, in words."""
    if there["axes"] != here["axes"]:
        return (
            f"there the axes are {', '.join(there['axes']) or 'none'}; "
            f"here {', '.join(here['axes']) or 'none'}"
        )
    for key in ("seed", "warmup", *dict.fromkeys([*there["base"], *here["base"]])):
        a, b = _setting(key, there), _setting(key, here)
        if a != b:
            return f"there {a}; here {b}"
    return "its definition differs"


def _claim(out: Path, journal: Journal, spec: SweepSpec) -> None:
    """Refuses to run into a folder that holds another sweep (see :func:`_definition`); else
    records this sweep's definition in the journal."""
    current = _definition(spec.describe())
    stored = journal.definition()
    if stored is None and (out / "sweep.json").exists():  # written before the journal kept it
        try:
            stored = _definition(json.loads(read_limited(out / "sweep.json", "out")))
        except (ConfigError, ValueError, TypeError, KeyError, AttributeError):
            stored = None
    if stored is not None and stored != current:
        raise ConfigError(
            f"{out} holds the results of another sweep ({_difference(stored, current)}); "
            f"use another {option('--out', 'out=')}, or {option('--fresh', 'resume=False')} "
            "to discard them",
            None,
        )
    journal.set_definition(current)


#: What a results folder holds: removed by --fresh.
RESULT_FILES = ("runs.parquet", "summary.parquet", "summary.csv", "sweep.json")


def _discard(out: Path) -> None:
    """Removes a previous sweep's journal and tables from ``out`` (``--fresh``)."""
    if not out.is_dir():
        return
    journal_module.remove(out / "journal.sqlite")
    for name in RESULT_FILES:
        (out / name).unlink(missing_ok=True)
        (out / f"{name}.tmp").unlink(missing_ok=True)


def execute(
    spec: SweepSpec,
    out: Path | None = None,
    *,
    executor: str = "process",
    workers: int | None = None,
    scheduler: str | None = None,
    resume: bool = True,
    progress: bool = False,
) -> pd.DataFrame:
    """Runs a parsed sweep; returns its runs table. See :func:`sweep`.

    Memory does not grow with the sweep's runs: points are counted before anything is
    expanded, checked one at a time, and turned into tasks only as the executor takes them;
    finished runs live in the journal until the tables are written.
    """
    check_executor(executor, workers)
    ids = _check_points(spec)
    if out is not None:
        out = Path(out)
        if out.exists() and not out.is_dir():
            raise ConfigError(
                f"{out}: a file, not a folder; a sweep writes its results into a folder", None
            )
        own_folder(out, "sweep", option("--out", "out="))
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ConfigError(f"{out}: cannot create the folder ({e.strerror})", None) from None
        if not resume:
            try:
                _discard(out)
            except OSError as e:
                raise ConfigError(
                    f"{out}: cannot discard the previous results ({e.strerror})", None
                ) from None
    journal = open_journal(None if out is None else out / "journal.sqlite")
    pool: Executor | None = None
    done: dict[str, int] = {}  # finished replications of each point id, as bit masks
    try:
        if out is not None:
            _claim(out, journal, spec)
            _write_atomic(out / "sweep.json", json.dumps(spec.describe(), indent=2) + "\n")
        points = spec.points()
        done.update(journal.done(ids))
        targets = [spec.replications] * len(ids)
        settled: set[int] = set()
        pilots = journal.pilot_ids() if spec.warmup == "auto" else set()
        bar = progress_bar(progress)
        bars: dict[str, Any] = {}

        def missing(i: int) -> list[int]:
            mask = done.get(ids[i], 0)
            return [r for r in range(targets[i]) if not mask >> r & 1]

        def run(name: str, fn: Any, tasks: Iterable[dict[str, Any]], total: int, got: Any) -> None:
            nonlocal pool
            if not total:
                return
            if pool is None:  # started only when there is work: a finished sweep starts none
                pool = make_executor(executor, workers, scheduler)
            if name in bars:
                bar.update(bars[name], total=bar.tasks[bars[name]].total + total)
            else:
                bars[name] = bar.add_task(name, total=total)
            for task, result in pool.imap_unordered(fn, tasks):
                got(task, result)
                bar.advance(bars[name])

        def pilot_tasks(todo: Iterable[int]) -> Iterator[dict[str, Any]]:
            for i in todo:
                yield {"point_id": ids[i], "params": _resolve(spec, points, i).params}

        def got_pilot(task: dict[str, Any], result: dict[str, Any]) -> None:
            journal.add_pilot(task["point_id"], result)
            pilots.add(task["point_id"])

        def replication_tasks(todo: Iterable[int]) -> Iterator[dict[str, Any]]:
            for i in todo:
                p = _resolve(spec, points, i)
                pilot = journal.pilot(p.point_id) if spec.warmup == "auto" else None
                for r in missing(i):
                    yield _replication_task(p, r, pilot)

        def got_row(task: dict[str, Any], row: dict[str, Any]) -> None:
            pid, r = task["extra"]["point_id"], task["params"]["run.replication"]
            journal.add_row(pid, r, row)
            done[pid] = done.get(pid, 0) | 1 << r

        with bar:
            # in rounds: sequential stopping may raise the targets after each
            while True:
                todo = [i for i in range(len(ids)) if missing(i)]
                if spec.warmup == "auto":  # MSER-5 pilot of each point that needs runs
                    need = [i for i in todo if ids[i] not in pilots]
                    run("warm-up pilots", run_pilot, pilot_tasks(need), len(need), got_pilot)
                total = sum(len(missing(i)) for i in todo)
                run("sweep", run_replication, replication_tasks(todo), total, got_row)
                if _targets(spec, ids, journal, targets, settled):
                    continue
                runs = None if journal.dropped else _runs_table(spec, ids, journal, targets)
                if runs is not None:
                    break
                # stored rows found damaged (and deleted): run them again
                warnings.warn(
                    f"{journal.path}: {_runs(len(journal.dropped))} found damaged there; "
                    "running again",
                    JournalRecovered,
                    stacklevel=2,
                )
                for pid, r in journal.dropped:
                    done[pid] = done.get(pid, 0) & ~(1 << r)
                journal.dropped.clear()
        if pool is not None:
            pool.close()
            pool = None
    except WorkersLost as e:
        finished = sum(mask.bit_count() for mask in done.values())
        kept = (
            f"{_runs(finished)} finished so far, kept in {out}: run the sweep again (with any "
            "executor) to resume"
            if out is not None
            else "without an output folder, the finished runs are lost"
        )
        raise WorkersLost(f"{e}; {kept}") from None
    finally:
        if pool is not None:  # interrupted, or failed: stop the runs in progress
            pool.close(abort=True)
        journal.close()
    if out is not None:
        write_results(runs, out)
    return runs


def _runs(n: int) -> str:
    """``1 run``, ``2 runs``."""
    return f"{n:,} run" + ("" if n == 1 else "s")


def _replication_task(p: Point, r: int, pilot: Mapping[str, Any] | None) -> dict[str, Any]:
    params = dict(p.params)
    params["run.replication"] = r
    if pilot is not None:
        params["run.warmup_ms"] = pilot["warmup_ms"]
        method, reliable = "mser5", pilot["reliable"]
    else:
        method, reliable = "fixed", True
    extra = {"point_id": p.point_id, "warmup.method": method, "warmup.reliable": reliable}
    return {"params": params, "extra": extra}


def _runs_table(
    spec: SweepSpec, ids: Sequence[str], journal: Journal, targets: Sequence[int]
) -> pd.DataFrame | None:
    """The runs table, read from the journal a point at a time and built in chunks of rows
    (a row as a Python dict takes ~10× its place in a data frame). None if some rows were
    found damaged (:attr:`Journal.dropped`): they must run again first."""
    frames: list[pd.DataFrame] = []
    shapes: dict[tuple[str, ...], None] = {}  # each distinct list of column names, in order
    chunk: list[dict[str, Any]] = []
    for i, pid in enumerate(ids):
        rows = journal.rows(pid, targets[i])
        if journal.dropped:
            return None
        if len(rows) != targets[i]:
            raise IrqlabError(
                f"{journal.path}: runs of point {i} went missing while the sweep ran "
                "(another process discarded the journal?); run the sweep again"
            )
        for r, row in enumerate(rows):
            record = {"point": i, "replication": r, **row}
            shapes.setdefault(tuple(record), None)
            chunk.append(record)
        if len(chunk) >= TABLE_CHUNK:
            frames.append(pd.DataFrame.from_records(chunk))
            chunk = []
    if chunk or not frames:
        frames.append(pd.DataFrame.from_records(chunk))
    names = _merged_order(list(shapes))
    axes = [a.key for a in spec.axes]
    metrics = [c for c in names if c not in BOOKKEEPING and not is_parameter(c)]
    params = sorted((c for c in names if is_parameter(c) and c not in axes), key=_param_order)
    columns = ["point", "replication", *axes, *metrics, *params, *BOOKKEEPING[2:]]
    df = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    del frames
    df = df.reindex(columns=columns)
    for m in metrics:
        if df[m].dtype == object and not _is_text(df[m]):
            # a metric that was None (nothing delivered), or absent (fewer cores), in some row
            df[m] = pd.to_numeric(df[m]).astype("float64")
    return df


def _is_text(column: pd.Series) -> bool:
    """A column of strings (``per_class.0.class``, ``per_core.0.vectors``), NaN where absent."""
    return any(isinstance(v, str) for v in column)


def _merged_order(lists: Sequence[Sequence[str]]) -> list[str]:
    """Every name of ``lists``, each list's order kept: a name new in a later list goes right
    after the name it follows there (``per_core.1.*`` after ``per_core.0.*``)."""
    order: list[str] = []
    known: set[str] = set()
    for names in lists:
        if all(n in known for n in names):
            continue
        pending: dict[str | None, list[str]] = {}
        anchor: str | None = None
        for n in names:
            if n in known:
                anchor = n
            else:
                pending.setdefault(anchor, []).append(n)
        merged = list(pending.get(None, []))
        for n in order:
            merged.append(n)
            merged += pending.get(n, [])
        order = merged
        known.update(names)
    return order


@cache
def _param_order(key: str) -> tuple[int, int, int]:
    """Schema order; a numbered key by its table, then entry, then field."""
    keys = list(schema())
    if key in schema():
        return (keys.index(key), 0, 0)
    spec = spec_of(key)
    if spec is None:
        return (len(keys), 0, 0)
    fields = list(tables()[spec["table"]]["fields"].values())
    index = int(key[len(spec["table"]) + 1 :].split(".", 1)[0])
    return (keys.index(fields[0]["key"]), index, fields.index(spec))


def table_columns(runs: pd.DataFrame) -> tuple[list[str], list[str], list[str]]:
    """A runs table's columns by role: parameters (but ``run.replication``), labels (fields that
    name an entry, like ``per_core.0.vectors``, and other text) and metrics (the rest)."""
    params = [c for c in runs.columns if is_parameter(c) and c != "run.replication"]
    skip = {*BOOKKEEPING, "run.replication", *params}
    labels, metrics = [], []
    for c in runs.columns:
        if c in skip:
            continue
        numeric = pd.api.types.is_numeric_dtype(runs[c]) and not pd.api.types.is_bool_dtype(runs[c])
        (metrics if numeric and not is_entry_label(c) else labels).append(c)
    return params, labels, metrics


def summary_table(runs: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """One row per point: parameters, entry labels, ``n``, and per metric its mean, std, CI
    and precision."""
    params, labels, metrics = table_columns(runs)
    return summarize(runs, [*params, *labels], metrics, confidence)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise IrqlabError(f"{path}: cannot write it ({e.strerror or e})") from None


def write_results(runs: pd.DataFrame, out: Path) -> None:
    """``runs.parquet``, ``summary.parquet`` and ``summary.csv`` in ``out``, each replaced
    atomically (a reader never sees half a file); the Parquet pages carry checksums, so that
    :func:`load_results` notices a damaged one."""
    summary = summary_table(runs)
    tmp = out / "runs.parquet.tmp"
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, df in (("runs.parquet", runs), ("summary.parquet", summary)):
            tmp = out / (name + ".tmp")
            df.to_parquet(tmp, index=False, write_page_checksum=True)
            os.replace(tmp, out / name)
        tmp = out / "summary.csv.tmp"
        summary.to_csv(tmp, index=False)
        os.replace(tmp, out / "summary.csv")
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise IrqlabError(
            f"{tmp}: cannot write it ({e.strerror or e}); every run is kept in the journal: "
            "run the sweep again to write the tables"
        ) from None


def sweep(
    spec: str | Path | Mapping[str, Any] | SweepSpec | None = None,
    *,
    base: str | Path | Mapping[str, Any] | None = None,
    axes: Mapping[str, Any] | None = None,
    replications: int | None = None,
    seed: int | None = None,
    warmup: str | float | None = None,
    precision: Mapping[str, Any] | None = None,
    out: str | Path | None = None,
    executor: str = "process",
    workers: int | None = None,
    scheduler: str | None = None,
    resume: bool = True,
    progress: bool = False,
) -> pd.DataFrame:
    """Runs a sweep; returns one row per point × replication (a pandas DataFrame).

    ``spec`` is a sweep file, a dict shaped like one, or None; the keyword arguments add to it
    or override it: ``base`` a scenario (file or dict), ``axes`` ``{key: values or range}``,
    ``replications``, ``seed``, ``warmup`` (ms or ``"auto"``), ``precision``
    (``{metrics, relative, confidence, max_replications}``), ``out`` a directory for
    ``runs.parquet``, ``summary.parquet``, ``summary.csv`` and the journal that makes the
    sweep resumable. ``executor`` is ``"process"`` (a local pool of ``workers`` processes,
    default one per core), ``"inline"`` or ``"dask"`` (a LocalCluster, or the cluster at
    ``scheduler``). Rows are identical whatever the executor and worker count.

    >>> import irqlab
    >>> df = irqlab.sweep(base={"scheme": "ideal", "run.duration_ms": 5},
    ...                   axes={"traffic.rate_pps": [50_000, 100_000]},
    ...                   replications=2, executor="inline")
    >>> len(df), df["traffic.rate_pps"].unique().tolist()
    (4, [50000.0, 100000.0])

    Use :func:`irqlab.summarize` for means and confidence intervals per point.
    """
    if isinstance(spec, SweepSpec):
        parsed = spec
    elif isinstance(spec, str | os.PathLike | Mapping) or spec is None:
        parsed = parse_sweep({} if spec is None else spec)
    else:
        raise ConfigError(
            "spec: expected a sweep file's path (str or pathlib.Path), a dict shaped like one "
            f"or None, got {type(spec).__name__}",
            "spec",
        )
    if base is not None:
        if isinstance(base, str | os.PathLike):
            extra = _base_file(Path(base), "base", base)
        elif isinstance(base, Mapping):
            extra = _flat(base, "base")
        else:
            raise ConfigError(
                "base: expected a scenario file's path (str or pathlib.Path) or a dict of "
                f"keys, got {type(base).__name__}",
                "base",
            )
        parsed.base = load_scenario({**parsed.base, **extra})
    if axes is not None:
        parsed.axes = parse_axes(axes)
    parsed.override(replications=replications, seed=seed, warmup=warmup, precision=precision)
    target = out if out is not None else parsed.out
    if target is not None and not isinstance(target, str | os.PathLike):
        raise ConfigError(
            f"out: expected a directory's path (str or pathlib.Path), got {type(target).__name__}",
            "out",
        )
    return execute(
        parsed,
        None if target is None else Path(target),
        executor=executor,
        workers=workers,
        scheduler=scheduler,
        resume=resume,
        progress=progress,
    )


def load_results(path: str | Path, kind: str = "summary") -> pd.DataFrame:
    """A sweep's ``summary`` or ``runs`` table from its directory (or a .parquet/.csv file).

    A missing or damaged table is a :class:`ConfigError` that says how to get it back: the
    sweep's journal rewrites it when the sweep is run again into its folder.
    """
    if not isinstance(path, str | os.PathLike):
        raise ConfigError(
            "path: expected a sweep's directory or a .parquet or .csv file (str or "
            f"pathlib.Path), got {type(path).__name__}",
            "path",
        )
    p = Path(path)
    in_folder = p.is_dir()
    if in_folder:
        for candidate in (p / f"{kind}.parquet", p / f"{kind}.csv"):
            if candidate.exists():
                p = candidate
                break
        else:
            if (p / "journal.sqlite").exists():
                raise ConfigError(
                    f"{path}: no {kind} table yet (the sweep has not finished); run the sweep "
                    "into it again: it resumes, then writes the tables",
                    None,
                )
            raise ConfigError(f"{path}: no {kind}.parquet or {kind}.csv (not a sweep?)", None)
    if not p.exists():
        raise ConfigError(f"{p}: no such file", None)
    regular_file(p, "results")  # pyarrow would wait on a pipe through Ctrl-C
    suffix = p.suffix.lower()
    if suffix not in (".parquet", ".csv"):
        hint = ""
        if suffix == ".toml":  # the sweep or scenario file itself, not what it wrote
            hint = "; a TOML file is a sweep or scenario, not its results: give the folder "
            hint += "the sweep wrote (its --out, sweep.out, else results/<file name>)"
        raise ConfigError(f"{p}: expected a sweep's folder, a .parquet or a .csv file{hint}", None)
    import pyarrow

    try:
        if suffix == ".csv" and in_folder and not _ends_a_line(p):
            raise ValueError("it stops in the middle of a line: truncated")
        if suffix == ".parquet":
            table = pd.read_parquet(p, page_checksum_verification=True)
        else:
            table = pd.read_csv(p)
    except (OSError, ValueError, pyarrow.ArrowException) as e:
        reason = (str(e).strip().splitlines() or [type(e).__name__])[0]
        reason = re.sub(r"^Could not open Parquet input source '.*?': ", "", reason)
        reason = reason.split(". ")[0].rstrip(".")
        if (p.parent / "journal.sqlite").exists():
            remedy = (
                f"running the sweep into {p.parent} again rewrites it from the journal "
                "(nothing runs again)"
            )
        else:
            remedy = "run the sweep again to write it"
        raise ConfigError(
            f"{p}: damaged or not a {suffix[1:]} table ({reason}); {remedy}", None
        ) from None
    # a table edited by hand: the columns that name rows are there and hold whole numbers,
    # the metrics numbers
    if in_folder:
        for column in ("point", "n" if kind == "summary" else "replication"):
            if column not in table.columns:
                raise ConfigError(f"{p}: no column {column!r} (changed by hand, or damaged?)", None)
    return check_columns(
        table,
        p,
        integers=("point", "n", "replication"),
        numbers_=metric_columns(list(table.columns)),
        least={"point": 0, "n": 1, "replication": 0},
    )


def _ends_a_line(path: Path) -> bool:
    """Whether a file ends with a newline, as every table a sweep writes does."""
    with path.open("rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() == 0:
            return True  # empty: pandas says so
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def row_scenario(row: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario of one row of a runs table: exactly what ran, ready for :func:`irqlab.run`.

    Every parameter column becomes its scenario value again: ``"[0, 1]"`` a list, numpy
    scalars Python ones. A numbered key that is empty (NaN) in this row belongs to an entry
    other points have and this one does not, and is left out.
    """
    out: dict[str, Any] = {}
    for key, value in row.items():
        spec = spec_of(key)
        if spec is None:
            continue
        if hasattr(value, "item") and not isinstance(value, str):  # numpy scalar → Python
            value = value.item()
        if isinstance(value, float) and value != value and "table" in spec:
            continue
        typ = spec["type"]
        try:
            if typ == "int_list":
                value = decode_list(value)
            elif typ == "bool":
                value = bool(value)
            elif typ == "int":
                value = int(value)
            elif typ == "float":
                value = float(value)
            elif isinstance(value, float) and value != value:
                value = ""  # an empty text cell of a CSV file reads as NaN
        except (ValueError, TypeError, OverflowError):  # a table edited by hand
            shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "…"
            raise ConfigError(
                f"column {key!r} = {shown}: expected {_TYPE_WORDS.get(typ, typ)}", key
            ) from None
        out[key] = value
    return out


#: A scenario key's type, as a row's error says it.
_TYPE_WORDS = {
    "int_list": "a list of integers, e.g. [0, 1]",
    "int": "an integer",
    "float": "a number",
}
