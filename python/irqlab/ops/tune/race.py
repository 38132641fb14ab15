"""The race: every candidate runs with the same seeds (common random numbers), a round of
replications at a time; after each round a candidate whose SLO interval lies wholly on the wrong
side of a target drops out, one that meets every SLO is feasible, and one that clearly costs more
than the best feasible one drops out too (module docs of :mod:`irqlab.ops.tune`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from irqlab.errors import ConfigError, option
from irqlab.ops.probe.ineffective import DRIVER_COALESCING, known_drivers
from irqlab.ops.tune.commands import ProbedNapis, commands, probed_napis_of
from irqlab.ops.tune.result import TuneResult, write_outputs
from irqlab.ops.tune.runs import Key, TuneRuns
from irqlab.ops.tune.search import (
    DEFAULT_OBJECTIVE,
    MAX_REPLICATIONS,
    MIN_REPLICATIONS,
    Slo,
    check_metrics,
    default_candidates,
    knob_candidates,
    label,
    parse_knob,
    screen_candidates,
)


@dataclass
class Candidate:
    """One setting in the race, with its runs: ``values[load][metric]`` per replication."""

    index: int
    setting: dict[str, Any]
    values: dict[int, dict[str, list[float]]] = field(default_factory=dict)
    status: str = "racing"  # racing, feasible, infeasible, worse
    reason: str = ""


def _interval(x: Sequence[float], level: float) -> tuple[float, float, float]:
    """Mean and the two-sided Student-t interval at ``level`` (zero width for one value or no
    spread)."""
    from scipy import stats

    n = len(x)
    mean = math.fsum(x) / n
    if n < 2:
        return mean, -math.inf, math.inf
    var = math.fsum((v - mean) ** 2 for v in x) / (n - 1)
    half = stats.t.ppf(0.5 + level / 2, n - 1) * math.sqrt(var / n) if var > 0 else 0.0
    return mean, mean - half, mean + half


def _metric(row: Mapping[str, Any], metric: str) -> float:
    v = row.get(metric)
    if v is None:
        return math.nan
    return float(v)


def _task(params: Mapping[str, Any], key: tuple[int, int, int]) -> dict[str, Any]:
    return {"params": dict(params), "extra": {"tune.key": list(key)}}


def tune(
    scenario: str | Path | Mapping[str, Any],
    slos: Sequence[str | Slo],
    *,
    knobs: Sequence[str | tuple[str, Sequence[Any]]] = (),
    minimize: str = DEFAULT_OBJECTIVE,
    overrides: Iterable[tuple[str, Any]] | Mapping[str, Any] = (),
    loads: Sequence[float] | None = None,
    seed: int | None = None,
    confidence: float = 0.95,
    min_replications: int = MIN_REPLICATIONS,
    max_replications: int = MAX_REPLICATIONS,
    out: str | Path | None = None,
    fresh: bool = False,
    executor: str = "process",
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    iface: str = "IFACE",
    driver: str | None = None,
) -> TuneResult:
    """Finds the setting that meets every SLO at the lowest ``minimize`` (module docs).

    ``slos``: ``"latency_us.p99 <= 50"`` strings; ``knobs``: ``"KEY=RANGE"`` strings or
    ``(key, values)`` (default: the operator settings of the scenario's scheme); ``loads``:
    ``traffic.rate_pps`` values at which every SLO must hold (default: the scenario's);
    ``confidence``: of each "meets" decision, shared by all SLOs and loads (Bonferroni).
    ``progress(done, most)`` is called after each run. With ``out``, writes the folder
    described in docs/tune.md and resumes from it. ``driver``: the host's NIC driver (as
    ``irqlab probe`` names it), whose coalescing rules skip the candidates it would refuse or
    round (:mod:`irqlab.ops.probe.ineffective`); the skipped candidates are in the result.
    """
    from irqlab import core
    from irqlab.experiments.executors import make_executor
    from irqlab.experiments.tasks import run_replication
    from irqlab.report import flatten_report
    from irqlab.scenario import load_scenario, resolve

    if not slos:
        raise ConfigError(
            f"give at least one SLO, e.g. {option('--slo', 'slos=[')}'latency_us.p99 <= 50'"
            f"{option('', ']')}",
            "slo",
        )
    slo_list = [s if isinstance(s, Slo) else Slo.parse(s) for s in slos]
    if not 0.5 <= confidence < 1:
        raise ConfigError(f"confidence = {confidence}: must be in [0.5, 1)", "confidence")
    if not 2 <= min_replications <= max_replications:
        raise ConfigError(
            f"replications {min_replications}..{max_replications}: need 2 <= min <= max",
            "replications",
        )
    base = resolve(scenario, overrides, seed=seed)
    rate = cast(float, base["traffic.rate_pps"])
    loads = [float(rate)] if not loads else [float(x) for x in loads]
    if any(not (x > 0 and math.isfinite(x)) for x in loads):
        raise ConfigError(f"loads {loads}: every load must be a positive rate", "load_range")
    parsed = [parse_knob(k) if isinstance(k, str) else (k[0], list(k[1])) for k in knobs]
    if driver is not None and driver not in DRIVER_COALESCING:
        raise ConfigError(
            f"{option('--driver', 'driver=')} {driver!r}: irqlab knows the coalescing of "
            f"{', '.join(known_drivers())} (docs/tune.md); leave it out for another driver",
            "driver",
        )
    settings = knob_candidates(parsed) if parsed else default_candidates(base)
    screened = screen_candidates(settings, base, loads, driver)
    settings = screened.candidates
    if not settings:
        raise ConfigError(
            f"every candidate does nothing on this host ({driver or 'the model'}): "
            f"{screened.skipped[0].setting}: {screened.skipped[0].reason}; give other "
            f"{option('--knob', 'knobs')}",
            "knob",
        )
    # the metrics exist: a short run of the base scenario tells the report's keys
    probe = dict(load_scenario(base))
    probe["run.duration_ms"] = min(float(cast(float, base["run.duration_ms"])), 0.1)
    probe["run.warmup_ms"] = 0.0
    check_metrics(
        flatten_report(core.run(probe)),
        [(f"{option('--slo', 'slos:')} {str(s)!r}", s.metric) for s in slo_list]
        + [(option(f"--minimize {minimize}", f"minimize={minimize!r}"), minimize)],
    )

    definition = {
        "scenario": base,
        "slos": [str(s) for s in slo_list],
        "minimize": minimize,
        "candidates": settings,
        "loads": loads,
        "confidence": confidence,
        "replications": [min_replications, max_replications],
    }
    if driver is not None:
        definition["driver"] = driver
    out_path = None if out is None else Path(out)
    runs = TuneRuns(out_path, definition, fresh)
    cands = [Candidate(i, s) for i, s in enumerate(settings)]
    checks = len(slo_list) * len(loads)
    level = 1 - (1 - confidence) / checks  # Bonferroni over every SLO at every load
    metrics = sorted({s.metric for s in slo_list} | {minimize})
    most = len(cands) * len(loads) * max_replications
    done_runs = 0

    def params_of(c: Candidate, li: int, r: int) -> dict[str, Any]:
        return {**base, **c.setting, "traffic.rate_pps": loads[li], "run.replication": r}

    def add(c: Candidate, li: int, r: int, m: Mapping[str, float]) -> None:
        per = c.values.setdefault(li, {k: [] for k in metrics})
        for k in metrics:
            per[k].append(m[k])

    with runs, make_executor(executor, workers, scheduler) as ex:
        reps = 0
        while True:
            racing = [c for c in cands if c.status in ("racing", "feasible")]
            target = min_replications if reps == 0 else reps + 1
            if target > max_replications or not racing:
                break
            todo: list[dict[str, Any]] = []
            keys_in_order: list[Key] = []
            for c in racing:
                for li in range(len(loads)):
                    for r in range(reps, target):
                        key = (c.index, li, r)
                        keys_in_order.append(key)
                        if key not in runs.done:
                            todo.append(_task(params_of(c, li, r), key))
            for _, row in ex.imap_unordered(run_replication, todo):
                c_index, li, r = row["tune.key"]
                runs.record((c_index, li, r), {k: _metric(row, k) for k in metrics})
                done_runs += 1
                if progress:
                    progress(done_runs, most)
            # results in a fixed order, whatever order the executor finished them in
            for key in keys_in_order:
                add(cands[key[0]], key[1], key[2], runs.done[key])
            reps = target
            _decide(racing, slo_list, minimize, level, confidence, len(loads))
            if all(c.status == "feasible" for c in racing) and len(racing) == 1:
                break
    # a scenario written by `irqlab probe`: napi-set for its NAPIs, on its interface
    napis = probed_napis_of(scenario)
    if napis is not None and iface == "IFACE":
        iface = napis.iface
    result = _result(
        cands, slo_list, minimize, level, loads, base, len(runs.done), out_path, iface, napis
    )
    result.skipped, result.doubts = screened.skipped, screened.doubts
    if out_path is not None:
        write_outputs(result, base, out_path)
    return result


def _ends(s: Slo, lo: float, hi: float) -> tuple[float, float]:
    """The interval's (best, worst) end for ``s``: for a ceiling the low end is the best."""
    return (lo, hi) if s.upper else (hi, lo)


def _inside(s: Slo, margin: float) -> bool:
    return margin > 0 if s.op in ("<", ">") else margin >= 0


def _slo_state(c: Candidate, slos: Sequence[Slo], level: float, loads: int) -> tuple[str, str]:
    """``meets``, ``fails`` or ``open`` over every SLO at every load, and why."""
    state = "meets"
    for li in range(loads):
        for s in slos:
            x = [v for v in c.values[li][s.metric] if not math.isnan(v)]
            if not x:
                return "fails", f"{s.metric} is not measured at load {li}"
            best, worst = _ends(s, *_interval(x, level)[1:])
            if not _inside(s, s.margin(best)):
                return "fails", f"{s} fails at load {li}"
            if not _inside(s, s.margin(worst)):
                state = "open"
    return state, ""


def _objective(c: Candidate, minimize: str) -> list[float]:
    """The objective per replication, averaged over the loads (a paired sample across
    candidates: replication r sees the same random numbers everywhere)."""
    per_load = [c.values[li][minimize] for li in sorted(c.values)]
    return [math.fsum(v) / len(v) for v in zip(*per_load, strict=False)]


def _decide(
    racing: list[Candidate],
    slos: Sequence[Slo],
    minimize: str,
    level: float,
    conf: float,
    loads: int,
) -> None:
    for c in racing:
        state, why = _slo_state(c, slos, level, loads)
        if state == "fails":
            c.status, c.reason = "infeasible", why
        elif state == "meets":
            c.status = "feasible"
        else:
            c.status = "racing"
    feasible = [c for c in racing if c.status == "feasible"]
    if not feasible:
        return
    best = min(feasible, key=lambda c: math.fsum(_objective(c, minimize)))
    b = _objective(best, minimize)
    for c in racing:
        if c is best or c.status == "infeasible":
            continue
        d = [x - y for x, y in zip(_objective(c, minimize), b, strict=False)]
        if len(d) < 2:
            continue
        _, lo, _ = _interval(d, conf)
        if lo > 0:
            c.status, c.reason = "worse", f"{minimize} above {label(best.setting)}'s"


def _pick(cands: list[Candidate], feasible: list[int], minimize: str) -> int:
    """The recommendation among the feasible candidates (sorted by mean objective): the first
    in the search order among those not significantly costlier than the cheapest (a paired
    95% interval of the difference that includes zero). Settings that behave alike — any ITR
    once deferral keeps the interrupts off — then give the simplest, not a coin toss."""
    best = _objective(cands[feasible[0]], minimize)
    tied = []
    for i in feasible:
        d = [x - y for x, y in zip(_objective(cands[i], minimize), best, strict=False)]
        if i == feasible[0] or (len(d) >= 2 and _interval(d, 0.95)[1] <= 0):
            tied.append(i)
    return min(tied)


def _result(
    cands: list[Candidate],
    slos: Sequence[Slo],
    minimize: str,
    level: float,
    loads: list[float],
    base: Mapping[str, Any],
    runs: int,
    out: Path | None,
    iface: str,
    napis: ProbedNapis | None = None,
) -> TuneResult:
    """The table of every candidate (status, objective and SLO margins with their intervals)
    and the recommendation."""
    import pandas as pd

    rows = []
    for c in cands:
        row: dict[str, Any] = {"candidate": c.index, "setting": label(c.setting), **c.setting}
        row["status"] = c.status if c.status != "racing" else "undecided"
        row["reason"] = c.reason
        obj = _objective(c, minimize) if c.values else []
        row["replications"] = len(obj)
        if obj:
            mean, lo, hi = _interval(obj, 0.95)
            row.update({"objective": mean, "objective_lo": lo, "objective_hi": hi})
        for s in slos:
            worst: tuple[float, float, float, float, int] | None = None
            for li in sorted(c.values):
                x = [v for v in c.values[li][s.metric] if not math.isnan(v)]
                if not x:
                    continue
                mean, lo, hi = _interval(x, level)
                margin = s.margin(mean)
                if worst is None or margin < worst[0]:
                    best_end, worst_end = _ends(s, lo, hi)
                    worst = (margin, s.margin(worst_end), s.margin(best_end), mean, li)
            if worst:
                row[f"{s.metric}"] = worst[3]
                row[f"margin[{s}]"] = worst[0]
                row[f"margin_lo[{s}]"] = worst[1]
                row[f"margin_hi[{s}]"] = worst[2]
                row[f"worst_load[{s}]"] = loads[worst[4]]
        rows.append(row)
    table = pd.DataFrame(rows)
    feas = table[table["status"] == "feasible"].sort_values(["objective", "candidate"])
    if len(feas):
        index = _pick(cands, [int(i) for i in feas["candidate"]], minimize)
        pick = cands[index].setting
        return TuneResult(
            pick,
            True,
            commands(pick, base, iface, napis),
            table,
            list(slos),
            minimize,
            loads,
            runs,
            out,
            index,
        )
    return TuneResult(None, False, [], table, list(slos), minimize, loads, runs, out)
