"""The model a calibration fits: a candidate (the free parameters' values) evaluated at every
point and seed, many candidates in one batch on the executor, every finished run committed to
the folder's journal keyed by its full scenario — so that rerunning a calibration replays its
(deterministic) optimiser from the runs already made, and runs only what is missing."""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from irqlab import __version__
from irqlab.calibration.spec import Entry, TargetsSpec
from irqlab.errors import IrqlabError

if TYPE_CHECKING:
    from irqlab.experiments.executors import Executor
    from irqlab.experiments.journal import Journal

#: The journal in a calibration's folder.
JOURNAL = "journal.sqlite"
#: ``progress(done, total)``: runs finished in the current batch, and its size.
Progress = Callable[[int, int], None]


class BudgetSpent(Exception):
    """The fit has made calibrate.max_evaluations evaluations."""


@dataclass(frozen=True)
class Prediction:
    """The model at one candidate: per entry the mean over the seeds and its standard error
    (0 with one seed)."""

    mean: np.ndarray
    se: np.ndarray


def run_id(params: Mapping[str, Any]) -> str:
    """A run's key in the journal: its full, resolved scenario (seed included)."""
    text = json.dumps({"irqlab": __version__, "params": params}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


#: Metrics a calibration derives from a run's own: name → (numerator, denominator, meaning).
DERIVED: dict[str, tuple[str, str, str]] = {
    "socket_drop_ratio": (
        "packets.dropped_socket",
        "packets.offered",
        "packets dropped at a full socket receive buffer, of those offered",
    ),
    "app_wakeups_per_packet": (
        "per_app.0.wakeups",
        "per_app.0.consumed",
        "the first app's wake-ups per packet it read (a packet that finds it awake wakes none)",
    ),
    "ring_drop_ratio": (
        "packets.dropped_nic",
        "packets.offered",
        "packets dropped at a full Rx ring (a veth's 256 entries), of those offered",
    ),
}


def _metrics(row: Mapping[str, Any]) -> dict[str, float]:
    """A run's numeric metrics (the scenario's echo left out), and the :data:`DERIVED` ones."""
    from irqlab.experiments.spec import is_parameter

    out = {}
    for k, v in row.items():
        if isinstance(v, bool) or not isinstance(v, int | float) or is_parameter(k):
            continue
        out[k] = float(v)
    for name, (num, den, _) in DERIVED.items():
        if num in out and out.get(den, 0.0) > 0:
            out[name] = out[num] / out[den]
    return out


class Model:
    """Evaluates candidates in batches; counts the runs made and those found in the journal."""

    def __init__(
        self,
        spec: TargetsSpec,
        out: Path | None,
        *,
        executor: str = "process",
        workers: int | None = None,
        scheduler: str | None = None,
        progress: Progress | None = None,
    ) -> None:
        from irqlab.experiments.journal import open_journal

        self.spec = spec
        self.kind, self.workers, self.scheduler = executor, workers, scheduler
        self.progress = progress
        self.new_runs = 0
        self.cached_runs = 0
        self.evaluations = 0
        self._runs: dict[str, dict[str, float]] = {}
        self._pool: Executor | None = None
        self._ids: dict[str, tuple[str, dict[str, Any]]] = {}
        self.journal: Journal = open_journal(None if out is None else out / JOURNAL, "calibration")
        try:
            _claim(self.journal, out)
        except BaseException:
            self.journal.close()
            raise

    def __enter__(self) -> Model:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.close(abort=exc_type is not None)

    def close(self, abort: bool = False) -> None:
        if self._pool is not None:
            self._pool.close(abort=abort)
            self._pool = None
        self.journal.close()

    def _resolved(self, flat: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        from irqlab import core

        text = json.dumps(flat, sort_keys=True, default=str)
        found = self._ids.get(text)
        if found is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the check warned once, before the fit
                params = core.resolve(flat)
            found = (run_id(params), params)
            self._ids[text] = found
        return found

    def predict(
        self, candidates: Sequence[Mapping[str, Any]], entries: Sequence[Sequence[Entry]]
    ) -> list[Prediction]:
        """The model at each candidate (``theta``: the free keys' values) for its entries, the
        runs of all of them made in one batch."""
        seeds = self.spec.seeds
        plan: list[list[list[str]]] = []
        todo: dict[str, dict[str, Any]] = {}
        for theta, group in zip(candidates, entries, strict=True):
            ids = []
            for entry in group:
                per_seed = []
                for seed in seeds:
                    rid, params = self._resolved(self.spec.scenario(entry, theta, seed))
                    per_seed.append(rid)
                    if rid not in self._runs:
                        todo[rid] = params
                ids.append(per_seed)
            plan.append(ids)
        self._fetch(todo)
        out = []
        for ids, group in zip(plan, entries, strict=True):
            mean, se = [], []
            for per_seed, entry in zip(ids, group, strict=True):
                x = np.array([self._runs[r].get(entry.metric, math.nan) for r in per_seed])
                mean.append(float(np.mean(x)))
                se.append(float(np.std(x, ddof=1) / math.sqrt(len(x))) if len(x) > 1 else 0.0)
            out.append(Prediction(np.array(mean), np.array(se)))
        return out

    def _fetch(self, todo: dict[str, dict[str, Any]]) -> None:
        """The runs of ``todo`` (id → resolved scenario): from the journal, else made, in one
        batch on the executor, each committed as it finishes."""
        from irqlab.experiments.executors import make_executor
        from irqlab.experiments.tasks import run_replication

        if not todo:
            return
        stored = self.journal.done(todo)
        for rid in list(todo):
            if stored.get(rid, 0) & 1:
                rows = self.journal.rows(rid, 1)
                if rows:
                    self._runs[rid] = {k: float(v) for k, v in rows[0].items()}
                    self.cached_runs += 1
                    del todo[rid]
        if not todo:
            return
        if self._pool is None:
            self._pool = make_executor(self.kind, self.workers, self.scheduler)
        tasks = [{"params": p, "extra": {"calibration.run": rid}} for rid, p in todo.items()]
        total = len(tasks)
        if self.progress is not None:
            self.progress(0, total)
        finished = self._pool.imap_unordered(run_replication, tasks)
        for done, (task, row) in enumerate(finished, start=1):
            rid = task["extra"]["calibration.run"]
            metrics = _metrics(row)
            self.journal.add_row(rid, 0, metrics)
            self._runs[rid] = metrics
            self.new_runs += 1
            if self.progress is not None:
                self.progress(done, total)


#: What a calibration's journal says of itself: its runs are keyed by their full scenario, so
#: any calibration may reuse them, and nothing else may write there.
_DEFINITION = {"kind": "calibration", "key": "the full scenario of each run"}


def _claim(journal: Journal, out: Path | None) -> None:
    """Refuses a journal another kind of result wrote (a sweep's, a tune's); else marks it a
    calibration's."""
    from irqlab.errors import option

    stored = journal.definition()
    if stored is not None and stored != _DEFINITION:
        raise IrqlabError(
            f"{out}: holds another kind of result's runs (a sweep's or a tune's journal); "
            f"choose another {option('--out', 'out=')}"
        )
    if stored is None:
        journal.set_definition(dict(_DEFINITION))


def check_measured(entries: Sequence[Entry], prediction: Prediction) -> None:
    """Every entry's metric is a number at the start: a metric the point never measures (a
    latency with no packet delivered) is one line naming the entry."""
    for entry, value in zip(entries, prediction.mean, strict=True):
        if not math.isfinite(value):
            raise IrqlabError(
                f"{entry.where}: {entry.metric} is not measured at this point with the free "
                "parameters at their start (no value: nothing of that kind happened in the run)"
            )
