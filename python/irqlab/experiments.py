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

import difflib
import hashlib
import itertools
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from irqlab import __version__, _irqlab
from irqlab.errors import ConfigError
from irqlab.executors import Executor, make_executor
from irqlab.executors import check as check_executor
from irqlab.journal import Journal
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
from irqlab.stats import precision_met, replications_needed, summarize
from irqlab.tasks import run_pilot, run_replication

SWEEP_KEYS = ("base", "replications", "seed", "warmup", "out", "precision")
PRECISION_KEYS = ("metrics", "relative", "confidence", "max_replications")
RANGE_KEYS = ("from", "to", "step", "num", "log")
#: Keys a sweep sets itself.
RESERVED = ("run.seed", "run.replication")
#: Replications of one point at most (the core's replication index is 16 bits).
MAX_REPLICATIONS = 65_536
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

    def points(self) -> list[dict[str, Any]]:
        """Every point's flat overrides, in product order (the first axis varies slowest)."""
        keys = [a.key for a in self.axes]
        combos = itertools.product(*(a.values for a in self.axes))
        return [{**self.base, **dict(zip(keys, c, strict=True))} for c in combos]

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
        n = math.floor((hi - lo) / step * (1 + 1e-12) + 1e-9) + 1
        if n > 100_000:
            raise ConfigError(f"{name}: {n} values; at most 100000 per axis", name)
        if integral:
            return [int(spec["from"]) + i * int(spec["step"]) for i in range(n)]
        return [_tidy(lo + i * step) for i in range(n)]
    n = _int(f"{name}.num", spec["num"], 1, 100_000)
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


def _axis_leaves(tree: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for k, v in tree.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping) and not (set(v) & set(RANGE_KEYS)):
            out += _axis_leaves(v, f"{key}.")
        else:
            out.append((key, v))
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
    for key, spec in _axis_leaves(tree or {}):
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
    known = metric_templates()
    for m in metrics:
        if template(m) not in known or is_entry_label(m):
            raise ConfigError(
                f"{name}.metrics: '{show_key(m)}' is not a metric{_suggest_metric(m, known)}",
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
    for k in tree:
        if k not in ("sweep", "base", "axes"):
            raise ConfigError(
                f"'{show_key(k)}': unknown section{_close(k, ('sweep', 'base', 'axes'))}; "
                "a sweep file has [sweep], [base] and [axes]",
                k,
            )
    for section in ("sweep", "base"):
        if not isinstance(tree.get(section, {}), Mapping):
            raise ConfigError(f"{section}: expected a table ([{section}])", section)
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
        base.update(flatten(load_toml(here / settings["base"])))
    base.update(flatten(tree.get("base", {})))
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


def _check_measured(metrics: Sequence[str], points: Sequence[Point]) -> None:
    """Every precision metric exists at every point (``per_core.3.*`` needs 4 cores)."""
    for m in metrics:
        found = re.match(r"^(per_[a-z_]+)\.(0|[1-9][0-9]*)\.", m)
        if not found:
            continue
        name, index = found[1], int(found[2])
        for p in points:
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


def resolve_points(spec: SweepSpec) -> list[Point]:
    points = []
    for i, overrides in enumerate(spec.points()):
        if spec.seed is not None:
            overrides["run.seed"] = spec.seed
        if isinstance(spec.warmup, float):
            overrides["run.warmup_ms"] = spec.warmup
        try:
            params = dict(_irqlab.resolve(overrides))
        except ConfigError as e:
            where = ", ".join(f"{a.key}={_show(overrides[a.key])}" for a in spec.axes)
            raise ConfigError(f"{e} (at point {i}: {where})", e.key) from None
        points.append(Point(i, _point_id(params, spec.warmup), params))
    return points


def _progress(enabled: bool):
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
        TextColumn("runs ·"),
        TimeElapsedColumn(),
        TextColumn("· ETA"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        disable=not enabled,
        transient=False,
    )


def _targets(
    spec: SweepSpec,
    points: Sequence[Point],
    rows: Mapping[tuple[str, int], dict[str, Any]],
    targets: dict[str, int],
) -> bool:
    """Sequential stopping: raises each point's target count until its metrics are precise.

    Each decision uses exactly replications 0 … target−1, so the same data always gives the
    same next target, whatever order the runs finished in or whether the sweep was resumed.
    The target at most doubles per round. Returns whether any target changed.
    """
    prec = spec.precision
    if prec is None:
        return False
    changed = False
    for p in points:
        n = targets[p.point_id]
        if n >= prec.max_replications:
            continue
        data = [rows[(p.point_id, r)] for r in range(n)]
        need = n
        for m in prec.metrics:
            values = [d.get(m) for d in data]
            values = [v for v in values if v is not None and v == v]
            if len(values) < 2 or not precision_met(values, prec.relative, prec.confidence):
                est = replications_needed(values, prec.relative, prec.confidence)
                need = max(need, min(est, 2 * n), n + 1)
        need = min(need, prec.max_replications)
        if need > n:
            targets[p.point_id] = need
            changed = True
    return changed


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
    """Runs a parsed sweep; returns its runs table. See :func:`sweep`."""
    check_executor(executor, workers)
    points = resolve_points(spec)
    if spec.precision is not None:
        _check_measured(spec.precision.metrics, points)
    if out is not None:
        out = Path(out)
        if out.exists() and not out.is_dir():
            raise ConfigError(f"{out}: exists and is not a directory", None)
        if not resume and out.exists():
            for name in ("journal.sqlite", "journal.sqlite-wal", "journal.sqlite-shm"):
                (out / name).unlink(missing_ok=True)
        out.mkdir(parents=True, exist_ok=True)
        _write_atomic(out / "sweep.json", json.dumps(spec.describe(), indent=2) + "\n")
    journal = Journal(None if out is None else out / "journal.sqlite")
    pool: Executor | None = None
    try:
        rows = journal.rows()
        pilots = journal.pilots()
        targets = {p.point_id: spec.replications for p in points}
        bar = _progress(progress)
        bars: dict[str, Any] = {}

        def run(name: str, fn: Any, tasks: list[dict[str, Any]], done: Any) -> None:
            nonlocal pool
            if not tasks:
                return
            if pool is None:  # started only when there is work: a finished sweep starts none
                pool = make_executor(executor, workers, scheduler)
            if name in bars:
                bar.update(bars[name], total=bar.tasks[bars[name]].total + len(tasks))
            else:
                bars[name] = bar.add_task(name, total=len(tasks))
            for i, result in pool.imap_unordered(fn, tasks):
                done(tasks[i], result)
                bar.advance(bars[name])

        def got_pilot(task: dict[str, Any], result: dict[str, Any]) -> None:
            journal.add_pilot(task["point_id"], result)
            pilots[task["point_id"]] = result

        def got_row(task: dict[str, Any], row: dict[str, Any]) -> None:
            key = (task["extra"]["point_id"], task["params"]["run.replication"])
            journal.add_row(*key, row)
            rows[key] = row

        with bar:
            # in rounds: sequential stopping may raise the targets after each
            while True:
                missing = [
                    (p, r)
                    for p in points
                    for r in range(targets[p.point_id])
                    if (p.point_id, r) not in rows
                ]
                if spec.warmup == "auto":  # MSER-5 pilot of each point that needs runs
                    todo = {p.point_id: p for p, _ in missing if p.point_id not in pilots}
                    pilot_tasks = [{"point_id": pid, "params": p.params} for pid, p in todo.items()]
                    run("warm-up pilots", run_pilot, pilot_tasks, got_pilot)
                tasks = [_replication_task(spec, p, r, pilots) for p, r in missing]
                run("sweep", run_replication, tasks, got_row)
                if not _targets(spec, points, rows, targets):
                    break
    finally:
        if pool is not None:
            pool.close()
        journal.close()
    runs = _runs_table(spec, points, rows, targets)
    if out is not None:
        write_results(runs, out)
    return runs


def _replication_task(
    spec: SweepSpec, p: Point, r: int, pilots: Mapping[str, dict[str, Any]]
) -> dict[str, Any]:
    params = dict(p.params)
    params["run.replication"] = r
    if spec.warmup == "auto":
        pilot = pilots[p.point_id]
        params["run.warmup_ms"] = pilot["warmup_ms"]
        method, reliable = "mser5", pilot["reliable"]
    else:
        method, reliable = "fixed", True
    extra = {"point_id": p.point_id, "warmup.method": method, "warmup.reliable": reliable}
    return {"params": params, "extra": extra}


def _runs_table(
    spec: SweepSpec,
    points: Sequence[Point],
    rows: Mapping[tuple[str, int], dict[str, Any]],
    targets: Mapping[str, int],
) -> pd.DataFrame:
    records = []
    for p in points:
        for r in range(targets[p.point_id]):
            records.append({"point": p.index, "replication": r, **rows[(p.point_id, r)]})
    names = _merged_order([list(rec) for rec in records])
    axes = [a.key for a in spec.axes]
    metrics = [c for c in names if c not in BOOKKEEPING and not is_parameter(c)]
    params = sorted((c for c in names if is_parameter(c) and c not in axes), key=_param_order)
    columns = ["point", "replication", *axes, *metrics, *params, *BOOKKEEPING[2:]]
    df = pd.DataFrame.from_records(records, columns=columns)
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
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_results(runs: pd.DataFrame, out: Path) -> None:
    """``runs.parquet``, ``summary.parquet`` and ``summary.csv`` in ``out``, each replaced
    atomically (a reader never sees half a file)."""
    out.mkdir(parents=True, exist_ok=True)
    summary = summary_table(runs)
    for name, df in (("runs.parquet", runs), ("summary.parquet", summary)):
        tmp = out / (name + ".tmp")
        df.to_parquet(tmp, index=False)
        os.replace(tmp, out / name)
    tmp = out / "summary.csv.tmp"
    summary.to_csv(tmp, index=False)
    os.replace(tmp, out / "summary.csv")


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
            extra = load_toml(base)
        elif isinstance(base, Mapping):
            extra = base
        else:
            raise ConfigError(
                "base: expected a scenario file's path (str or pathlib.Path) or a dict of "
                f"keys, got {type(base).__name__}",
                "base",
            )
        parsed.base = load_scenario({**parsed.base, **flatten(extra)})
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
    """A sweep's ``summary`` or ``runs`` table from its directory (or a .parquet/.csv file)."""
    if not isinstance(path, str | os.PathLike):
        raise ConfigError(
            "path: expected a sweep's directory or a .parquet or .csv file (str or "
            f"pathlib.Path), got {type(path).__name__}",
            "path",
        )
    p = Path(path)
    if p.is_dir():
        for candidate in (p / f"{kind}.parquet", p / f"{kind}.csv"):
            if candidate.exists():
                p = candidate
                break
        else:
            raise ConfigError(f"{path}: no {kind}.parquet or {kind}.csv (not a sweep?)", None)
    if not p.exists():
        raise ConfigError(f"{p}: no such file", None)
    if p.suffix.lower() == ".parquet":
        return pd.read_parquet(p)
    if p.suffix.lower() == ".csv":
        return pd.read_csv(p)
    raise ConfigError(f"{p}: expected a directory, a .parquet or a .csv file", None)


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
        if typ == "int_list":
            value = decode_list(value)
        elif typ == "bool":
            value = bool(value)
        elif typ == "int":
            value = int(value)
        elif typ == "float":
            value = float(value)
        out[key] = value
    return out
