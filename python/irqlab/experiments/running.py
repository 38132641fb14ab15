"""Running a sweep: every point checked before anything runs, the runs the journal lacks sent
to the executor in rounds (more for the points sequential stopping finds imprecise), and the
tables written when all are done (:func:`sweep`, :func:`execute`)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from irqlab import __version__, core
from irqlab.errors import ConfigError, IrqlabError, option
from irqlab.experiments import journal as journal_module
from irqlab.experiments.executors import Executor, WorkersLost, make_executor
from irqlab.experiments.executors import check as check_executor
from irqlab.experiments.journal import Journal, JournalRecovered, open_journal
from irqlab.experiments.spec import (
    Points,
    SweepSpec,
    base_file,
    entry_counts,
    flat_table,
    parse_axes,
    parse_sweep,
    shown,
)
from irqlab.experiments.statistics import precision_met, replications_needed
from irqlab.experiments.tables import runs_table, write_results
from irqlab.experiments.tasks import run_pilot, run_replication
from irqlab.files import own_folder, read_limited
from irqlab.formatting import count
from irqlab.scenario import (
    load_scenario,
    spec_of,
)

#: The lists of entries in a report, and what sets their length: a key, or the entries.
ENTRY_COUNTS = {
    "per_core": "host.cores",
    "per_queue": "nic.queues",
    "per_class": "traffic classes",
    "per_app": "apps",
}


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
        params = core.resolve(overrides)
    except ConfigError as e:
        where = ", ".join(f"{a.key}={shown(overrides[a.key])}" for a in spec.axes)
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
        return "not set" if value is None else f"sweep.{key} = {shown(value)}"
    if key in definition["base"]:
        return f"{key} = {shown(definition['base'][key])}"
    spec = spec_of(key)
    if spec is None or "table" in spec:
        return f"no {key}"
    return f"{key} at its default, {shown(spec['default'])}"


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
                runs = None if journal.dropped else runs_table(spec, ids, journal, targets)
                if runs is not None:
                    break
                # stored rows found damaged (and deleted): run them again
                warnings.warn(
                    f"{journal.path}: {count(len(journal.dropped), 'run')} found damaged there; "
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
            f"{count(finished, 'run')} finished so far, kept in {out}: run the sweep again "
            "(with any executor) to resume"
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


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise IrqlabError(f"{path}: cannot write it ({e.strerror or e})") from None


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
            extra = base_file(Path(base), "base", base)
        elif isinstance(base, Mapping):
            extra = flat_table(base, "base")
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
