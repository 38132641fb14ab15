"""Tuning: the setting an operator can change that meets every SLO at the least cost.

``irqlab tune`` (and :func:`tune`) answers the reverse of ``irqlab run``: given a scenario (the
load and the platform), service-level objectives such as ``latency_us.p99 <= 50``, and an
objective to minimise (``cpu.busy`` by default), it finds among the settings an operator
controls — the driver's moderation policy, the ITR, coalescing, software IRQ deferral, the
NAPI budget — the one that meets every SLO at the lowest objective, at the scenario's load or
at every load of a range.

"Meets" is a statistical decision. Every candidate runs with the same seeds (common random
numbers: the same arrivals and costs for every setting), replication after replication, in
rounds. After each round a candidate whose SLO interval lies wholly on the wrong side of a
target is eliminated; one that meets every SLO is *feasible*; a feasible or undecided candidate
whose objective is worse than the best feasible one's, by a paired interval that excludes zero,
is eliminated too. Replications go to the candidates still in the race, up to
``max_replications``. The decisions depend only on the runs' results, which depend only on the
seed: the same seed gives the same recommendation, with any executor.

This is racing (Maron & Moore's Hoeffding races; Birattari et al.'s F-Race): the search space
is a modest, discrete set of values operators actually type, each evaluation is noisy, and the
question is a constrained decision with a stated confidence. General optimisers (Optuna's TPE,
scikit-optimize's Gaussian processes) model a noisy objective but treat each evaluation as
final and have no notion of "meets the SLO at 95 %"; scipy's interval functions are used for
the decisions instead (:mod:`scipy.stats`, Student's *t*).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irqlab.errors import ConfigError, option
from irqlab.files import own_folder, read_limited, regular_file

#: The objective by default.
DEFAULT_OBJECTIVE = "cpu.busy"
#: ITR intervals (µs) tried for ``static`` by default: what ``ethtool -C rx-usecs`` users type.
DEFAULT_ITR_US = (2, 4, 8, 12, 16, 20, 24, 32, 40, 50, 64, 84, 100, 125, 200, 250)
#: Adaptive policies tried by default (``linear`` is a research patch; say so in the commands).
DEFAULT_POLICIES = ("off", "ixgbe-legacy", "linear", "ixgbe", "i40e", "dim")
#: Software IRQ deferral tried by default: (napi_defer_hard_irqs, gro_flush_timeout_ns).
DEFAULT_DEFER = ((0, 0), (2, 20_000), (10, 50_000))
#: NAPI budgets tried by default (net.core.netdev_budget).
DEFAULT_BUDGETS = (300, 600)
#: Refuse searches larger than this many candidates.
MAX_CANDIDATES = 5000
#: Replications per candidate and load in the first round, and at most.
MIN_REPLICATIONS = 3
MAX_REPLICATIONS = 10

_SLO = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(<=|>=|<|>)\s*(\S+)\s*$")


@dataclass(frozen=True)
class Slo:
    """``metric op bound``: an objective every recommendation meets at every load."""

    metric: str
    op: str
    bound: float

    @classmethod
    def parse(cls, text: str) -> Slo:
        m = _SLO.match(text)
        if not m:
            raise ConfigError(
                f"{option('--slo', 'slos:')} {text!r}: expected 'METRIC <= VALUE' (or <, >=, >), "
                "e.g. 'latency_us.p99 <= 50'",
                "slo",
            )
        try:
            bound = float(m.group(3))
        except ValueError:
            raise ConfigError(
                f"{option('--slo', 'slos:')} {text!r}: {m.group(3)!r} is not a number", "slo"
            ) from None
        if not math.isfinite(bound):
            raise ConfigError(
                f"{option('--slo', 'slos:')} {text!r}: the bound must be finite", "slo"
            )
        return cls(m.group(1), m.group(2), bound)

    @property
    def upper(self) -> bool:
        """A ceiling (``<=``, ``<``) rather than a floor."""
        return self.op in ("<=", "<")

    def margin(self, value: float) -> float:
        """How far ``value`` is inside the bound (negative: violated)."""
        return self.bound - value if self.upper else value - self.bound

    def __str__(self) -> str:
        return f"{self.metric} {self.op} {self.bound:g}"


def _knob() -> str:
    """How the caller names a knob: ``--knob`` on the command line, ``knobs:`` in Python."""
    return option("--knob", "knobs:")


def _scalar(text: str) -> Any:
    """A knob value: a TOML scalar (number, true/false, "string") or a bare word."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text.strip()


def parse_range(key: str, text: str) -> list[Any]:
    """``a..b:step`` (inclusive), ``a..b`` (nine evenly spaced values; whole numbers when both
    ends are), or ``v1,v2,...``."""
    text = text.strip()
    m = re.fullmatch(r"([^.:,]+(?:\.\d+)?(?:e[+-]?\d+)?)\.\.([^:,]+)(?::(.+))?", text)
    if m:
        lo, hi = _scalar(m.group(1)), _scalar(m.group(2))
        step = _scalar(m.group(3)) if m.group(3) else None
        nums = (lo, hi) if step is None else (lo, hi, step)
        if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in nums):
            raise ConfigError(f"{_knob()} {key}={text}: a range needs numbers, a..b[:step]", key)
        if hi < lo:
            raise ConfigError(f"{_knob()} {key}={text}: the range runs backwards", key)
        whole = all(isinstance(x, int) for x in nums)
        if step is None:
            if whole and hi - lo <= 8:
                return list(range(lo, hi + 1))
            values = [lo + (hi - lo) * i / 8 for i in range(9)]
            return sorted({round(v) for v in values}) if whole else values
        if step <= 0:
            raise ConfigError(f"{_knob()} {key}={text}: the step must be positive", key)
        n = math.floor((hi - lo) / step + 1e-9) + 1
        if n > MAX_CANDIDATES:
            raise ConfigError(f"{_knob()} {key}={text}: {n} values (at most {MAX_CANDIDATES})", key)
        return [lo + i * step for i in range(n)]
    values = [_scalar(v) for v in text.split(",") if v.strip()]
    if not values:
        raise ConfigError(f"{_knob()} {key}=: give values, a..b[:step] or v1,v2,...", key)
    return values


def parse_knob(text: str) -> tuple[str, list[Any]]:
    """``KEY=RANGE``."""
    key, sep, rng = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(
            f"{_knob()} {text!r}: expected KEY=RANGE, e.g. nic.itr_us=0..100:4", "knob"
        )
    return key.strip(), parse_range(key.strip(), rng)


def default_candidates(params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The settings searched when no ``--knob`` is given, for the scenario's scheme."""
    scheme = params["scheme"]
    if scheme in ("napi", "irq"):
        moderation: list[dict[str, Any]] = [{"driver.moderation": p} for p in DEFAULT_POLICIES]
        moderation += [{"driver.moderation": "static", "nic.itr_us": v} for v in DEFAULT_ITR_US]
    elif scheme == "coalesce-count":
        moderation = [{"nic.rx_frames": v} for v in (1, 2, 4, 8, 16, 32, 64, 128)]
    elif scheme == "coalesce-time":
        moderation = [{"nic.rx_usecs": v} for v in DEFAULT_ITR_US]
    else:
        raise ConfigError(
            f"scheme = {scheme!r} has no operator settings to tune by default (they are "
            "napi, irq, coalesce-count and coalesce-time); give "
            f"{option('--knob KEY=RANGE', 'knobs=[KEY=RANGE, ...]')}",
            "scheme",
        )
    defer = [
        {} if n == 0 else {"kernel.napi_defer_hard_irqs": n, "kernel.gro_flush_timeout_ns": t}
        for n, t in DEFAULT_DEFER
    ]
    budgets = [{"kernel.netdev_budget": b} for b in DEFAULT_BUDGETS]
    return [{**m, **d, **b} for m, d, b in itertools.product(moderation, defer, budgets)]


def knob_candidates(knobs: Sequence[tuple[str, list[Any]]]) -> list[dict[str, Any]]:
    """Every combination of the given knobs' values."""
    seen: set[str] = set()
    for key, _ in knobs:
        if key in seen:
            raise ConfigError(f"{_knob()} {key}: given twice", key)
        seen.add(key)
    n = math.prod(len(v) for _, v in knobs)
    if n > MAX_CANDIDATES:
        raise ConfigError(
            f"the knobs make {n:,} candidates (at most {MAX_CANDIDATES:,}): "
            "give fewer values or a coarser step",
            "knob",
        )
    keys = [k for k, _ in knobs]
    return [
        dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(v for _, v in knobs))
    ]


def _effective(
    settings: list[dict[str, Any]], base: Mapping[str, Any], loads: Sequence[float]
) -> list[dict[str, Any]]:
    """The candidates, each checked at every load before anything runs (a bad value is a
    :class:`ConfigError` naming its key), without the knobs that have no effect in it (an ITR
    under an adaptive policy) and without the duplicates that leaves, in their first order."""
    import warnings

    from irqlab.errors import ConfigWarning
    from irqlab.scenario import resolve

    out: list[dict[str, Any]] = []
    for s in settings:
        idle: set[str] = set()
        for load in loads:
            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always", ConfigWarning)
                resolve({**base, **s, "traffic.rate_pps": load})
            idle |= {w.message.key for w in said if isinstance(w.message, ConfigWarning)}
        s = {k: v for k, v in s.items() if k not in idle}
        if s not in out:
            out.append(s)
    return out


def label(candidate: Mapping[str, Any]) -> str:
    """A short name: ``static itr_us=24 defer=2/20000 budget=600``."""
    parts = []
    for k, v in candidate.items():
        short = k.split(".")[-1]
        parts.append(str(v) if k == "driver.moderation" else f"{short}={v}")
    return " ".join(parts) or "(the scenario as it is)"


# --- what the operator types -------------------------------------------------------------

_ADAPTIVE = {
    "ixgbe-legacy": "ixgbe before 4.15 / the out-of-tree 3.x driver's adaptive ITR",
    "ixgbe": "ixgbe's adaptive ITR (4.15 and later)",
    "i40e": "i40e/iavf's dynamic ITR",
    "dim": "net_dim (mlx5, ice, bnxt, ...)",
    "linear": "the linear ITR patch of Emmerich et al. (2015); not in mainline drivers",
}


def commands(
    setting: Mapping[str, Any], params: Mapping[str, Any], iface: str = "IFACE"
) -> list[str]:
    """The commands that apply ``setting`` on a Linux host (``params``: the whole scenario)."""
    out: list[str] = []
    coalesce: list[str] = []
    moderation = setting.get("driver.moderation", params.get("driver.moderation"))
    if "driver.moderation" in setting or "nic.itr_us" in setting:
        if moderation == "static":
            itr = setting.get("nic.itr_us", params.get("nic.itr_us"))
            coalesce += ["adaptive-rx off", f"rx-usecs {_num(itr)}"]
        elif moderation == "off":
            coalesce += ["adaptive-rx off", "rx-usecs 0"]
        elif moderation in _ADAPTIVE:
            coalesce += ["adaptive-rx on"]
    if "nic.rx_usecs" in setting:
        coalesce.append(f"rx-usecs {_num(setting['nic.rx_usecs'])}")
    if "nic.rx_frames" in setting:
        coalesce.append(f"rx-frames {_num(setting['nic.rx_frames'])}")
    if coalesce:
        note = f"   # {_ADAPTIVE[moderation]}" if moderation in _ADAPTIVE else ""
        out.append(f"ethtool -C {iface} {' '.join(coalesce)}{note}")
    written = {"driver.moderation", "nic.itr_us", "nic.rx_usecs", "nic.rx_frames"}
    for host in _host_settings():
        if host.key in setting:
            out.append(_host_command(host, setting[host.key], iface))
            written.add(host.key)
    for key, value in setting.items():
        if key not in written:
            out.append(f"# {key} = {_num(value)} (a model setting: no operator command)")
    return out


def _host_settings() -> tuple[Any, ...]:
    """The host's own settings, as the probe reads them (one table for both directions)."""
    from irqlab.probe import HOST_SETTINGS

    return HOST_SETTINGS


def _host_command(host: Any, value: Any, iface: str) -> str:
    """The command that writes one of :func:`_host_settings` (``value`` in the key's unit)."""
    if host.scale != 1.0 and isinstance(value, int | float) and not isinstance(value, bool):
        value = round(value / host.scale)
    shown = _num(value)
    path = host.path
    if path is None:  # netlink only (per NAPI): each of the device's NAPIs
        return (
            f'ynl --family netdev --do napi-set --json \'{{"id": NAPI_ID, '
            f'"{host.napi}": {shown}}}\'   # each NAPI of {iface} (napi-get lists them)'
        )
    if path.startswith("/proc/sys/"):
        return f"sysctl -w {path.removeprefix('/proc/sys/').replace('/', '.')}={shown}"
    return f"echo {shown} > {path.replace('{iface}', iface)}"


def _num(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


# --- the race -------------------------------------------------------------------------------


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


@dataclass
class TuneResult:
    """What :func:`tune` found."""

    recommended: dict[str, Any] | None
    feasible: bool
    commands: list[str]
    table: Any  # pandas.DataFrame: every candidate, its status, means and intervals
    slos: list[Slo]
    objective: str
    loads: list[float]
    runs: int
    out: Path | None = None
    #: The recommended candidate's number (``candidate`` in :attr:`table`).
    pick: int | None = None

    def row(self) -> Any:
        """The recommended candidate's row of :attr:`table`."""
        return self.table[self.table["candidate"] == self.pick].iloc[0]

    def runners_up(self, k: int = 5) -> Any:
        """The next ``k`` feasible candidates by objective."""
        t = self.table
        t = t[(t["status"] == "feasible") & (t["candidate"] != self.pick)]
        return t.sort_values(["objective", "candidate"]).head(k)


def _metric(row: Mapping[str, Any], metric: str) -> float:
    v = row.get(metric)
    if v is None:
        return math.nan
    return float(v)


#: Metrics to suggest when no numeric name is close to the one given.
EXAMPLE_METRICS = ("latency_us.p99", "throughput_pps", "loss_ratio", "cpu.busy", "irq_per_s")


#: The report's fields that say which run it is (numbers, but nothing a setting changes).
_RUN_IDS = ("seed", "replication")


def is_number(value: Any) -> bool:
    """Whether a report's value measures something: a number, or None (not measured in this
    run, e.g. a latency with no packet delivered); not text, a flag or a list."""
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


def check_metrics(report: Mapping[str, Any], metrics: Iterable[tuple[str, Any]]) -> None:
    """Raises :class:`ConfigError` for a metric that is not a numeric field of ``report`` (a
    flattened run report): one it does not have, or text (``scheme``), a list
    (``per_core.0.vectors``), an entry's name or a scenario setting; the message names where
    the metric was given (``metrics``: ``(where, metric)`` pairs) and close numeric names."""
    import difflib

    from irqlab.report import is_entry_label

    numeric = sorted(
        k
        for k, v in report.items()
        if is_number(v)
        and not is_entry_label(k)
        and not k.startswith("scenario.")
        and k not in _RUN_IDS
    )
    for where, m in metrics:
        if not isinstance(m, str):
            raise ConfigError(
                f"{where}: expected a metric name (str), got {type(m).__name__}", "metric"
            )
        if m in numeric:
            continue
        close = difflib.get_close_matches(m, numeric, n=3)
        hint = (
            f"; did you mean {', '.join(close)}?"
            if close
            else f"; numeric metrics are e.g. {', '.join(EXAMPLE_METRICS)} (irqlab run "
            "--format json shows every one)"
        )
        if m not in report:
            raise ConfigError(f"{where}: metric {m!r} is not in irqlab's report{hint}", m)
        value = report[m]
        if m.startswith("scenario."):
            kind = "a setting of the scenario, not a measurement"
        elif is_entry_label(m):
            kind = "the name of an entry, not a measurement"
        elif m in _RUN_IDS:
            kind = "which run it is, not a measurement"
        else:
            kind = f"not a number (its value is {type(value).__name__} {value!r})"
        raise ConfigError(
            f"{where}: metric {m!r} is {kind}; an SLO or objective takes a numeric field{hint}",
            m,
        )


def _definition_hash(definition: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(definition, sort_keys=True, default=str).encode()).hexdigest()


class _Journal:
    """The finished runs of a tune, one JSON line each, so that a stopped tune resumes."""

    def __init__(self, out: Path | None, definition: Mapping[str, Any], fresh: bool) -> None:
        self.path = None if out is None else out / "runs.jsonl"
        self.done: dict[tuple[int, int, int], dict[str, float]] = {}
        if out is None:
            return
        own_folder(out, "tune", option("--out", "out="))
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ConfigError(
                f"{option('--out', 'out=')} {out}: cannot create it ({e.strerror})", "out"
            ) from None
        spec = out / "tune.json"
        digest = _definition_hash(definition)
        if fresh:
            for p in (spec, self.path):
                p.unlink(missing_ok=True)
        if os.path.lexists(spec):
            try:
                old = json.loads(read_limited(spec, "tune"))
                if not isinstance(old, dict):
                    raise ValueError("not a JSON object")
            except (ConfigError, ValueError, UnicodeDecodeError):
                raise ConfigError(
                    f"{spec}: damaged; run again with {option('--fresh', 'fresh=True')} to start "
                    "over",
                    "out",
                ) from None
            if old.get("hash") != digest:
                raise ConfigError(
                    f"{out} holds a different tune (other scenario, SLOs, knobs, loads or "
                    f"seed): choose another {option('--out', 'out=')}, or "
                    f"{option('--fresh', 'fresh=True')} to replace it",
                    "out",
                )
        try:
            spec.write_text(
                json.dumps({"hash": digest, **definition}, indent=2, default=str) + "\n",
                encoding="utf-8",
            )
        except OSError as e:
            raise ConfigError(
                f"{option('--out', 'out=')} {out}: cannot write ({e.strerror})", "out"
            ) from None
        # the metrics each run must have: the SLOs' (``metric op bound``) and the objective
        needed = {str(x).split()[0] for x in definition["slos"]} | {definition["minimize"]}
        if os.path.lexists(self.path):
            regular_file(self.path, "tune", f"{option('--fresh', 'fresh=True')} replaces it")
            for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    rec = json.loads(line)
                    key = (int(rec["c"]), int(rec["l"]), int(rec["r"]))
                    measured = {str(k): float(v) for k, v in rec["m"].items()}
                    if not needed <= measured.keys():
                        raise KeyError("a metric is missing")
                    self.done[key] = measured
                except (ValueError, KeyError, TypeError, AttributeError):
                    continue  # a line cut short by a kill (or edited): that run runs again

    def record(self, key: tuple[int, int, int], metrics: Mapping[str, float]) -> None:
        self.done[key] = dict(metrics)
        if self.path is None:
            return
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"c": key[0], "l": key[1], "r": key[2], "m": metrics}) + "\n")
            fh.flush()
            os.fsync(fh.fileno())


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
) -> TuneResult:
    """Finds the setting that meets every SLO at the lowest ``minimize`` (module docs).

    ``slos``: ``"latency_us.p99 <= 50"`` strings; ``knobs``: ``"KEY=RANGE"`` strings or
    ``(key, values)`` (default: the operator settings of the scenario's scheme); ``loads``:
    ``traffic.rate_pps`` values at which every SLO must hold (default: the scenario's);
    ``confidence``: of each "meets" decision, shared by all SLOs and loads (Bonferroni).
    ``progress(done, most)`` is called after each run. With ``out``, writes the folder
    described in docs/tune.md and resumes from it.
    """
    import pandas as pd

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
    loads = [float(base["traffic.rate_pps"])] if not loads else [float(x) for x in loads]
    if any(not (x > 0 and math.isfinite(x)) for x in loads):
        raise ConfigError(f"loads {loads}: every load must be a positive rate", "load_range")
    parsed = [parse_knob(k) if isinstance(k, str) else (k[0], list(k[1])) for k in knobs]
    settings = knob_candidates(parsed) if parsed else default_candidates(base)
    settings = _effective(settings, base, loads)
    # the metrics exist: a short run of the base scenario tells the report's keys
    probe = dict(load_scenario(base))
    probe["run.duration_ms"] = min(float(base["run.duration_ms"]), 0.1)
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
    out_path = None if out is None else Path(out)
    journal = _Journal(out_path, definition, fresh)
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

    with make_executor(executor, workers, scheduler) as ex:
        reps = 0
        while True:
            racing = [c for c in cands if c.status in ("racing", "feasible")]
            target = min_replications if reps == 0 else reps + 1
            if target > max_replications or not racing:
                break
            todo, keys_in_order = [], []
            for c in racing:
                for li in range(len(loads)):
                    for r in range(reps, target):
                        key = (c.index, li, r)
                        keys_in_order.append(key)
                        if key not in journal.done:
                            todo.append(_task(params_of(c, li, r), key))
            for _, row in ex.imap_unordered(run_replication, todo):
                key = tuple(row["tune.key"])
                journal.record(key, {k: _metric(row, k) for k in metrics})
                done_runs += 1
                if progress:
                    progress(done_runs, most)
            # results in a fixed order, whatever order the executor finished them in
            for key in keys_in_order:
                add(cands[key[0]], key[1], key[2], journal.done[key])
            reps = target
            _decide(racing, slo_list, minimize, level, confidence, len(loads))
            if all(c.status == "feasible" for c in racing) and len(racing) == 1:
                break
    return _result(cands, slo_list, minimize, level, loads, base, journal, out_path, iface, pd)


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


def _result(cands, slos, minimize, level, loads, base, journal, out, iface, pd) -> TuneResult:
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
            worst = None
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
        result = TuneResult(
            pick,
            True,
            commands(pick, base, iface),
            table,
            list(slos),
            minimize,
            loads,
            len(journal.done),
            out,
            index,
        )
    else:
        result = TuneResult(
            None, False, [], table, list(slos), minimize, loads, len(journal.done), out
        )
    if out is not None:
        write_outputs(result, base, out)
    return result


def closest(result: TuneResult) -> Any:
    """When nothing is feasible: candidates by their worst relative shortfall to any SLO."""
    t = result.table.copy()
    shortfall = []
    for _, row in t.iterrows():
        worst = 0.0
        for s in result.slos:
            m = row.get(f"margin[{s}]")
            if m is None or (isinstance(m, float) and math.isnan(m)):
                worst = math.inf
                break
            worst = max(worst, -m / max(abs(s.bound), 1e-12))
        shortfall.append(worst)
    t["shortfall"] = shortfall
    return t.sort_values(["shortfall", "objective"])


def pareto(table: Any, objective: str, slo: Slo) -> Any:
    """The candidates no other beats on both the objective and the first SLO's metric."""
    t = table.dropna(subset=["objective", slo.metric]).sort_values(["objective", slo.metric])
    keep, best = [], math.inf
    sign = 1 if slo.upper else -1
    for i, row in t.iterrows():
        v = sign * row[slo.metric]
        if v < best:
            keep.append(i)
            best = v
    return t.loc[keep]


def write_outputs(result: TuneResult, base: Mapping[str, Any], out: Path) -> None:
    """recommendation.md/.json, candidates.csv, pareto.csv and pareto.png in ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    try:
        result.table.to_csv(out / "candidates.csv", index=False)
        front = pareto(result.table, result.objective, result.slos[0])
        front.to_csv(out / "pareto.csv", index=False)
        fig, ax = plt.subplots(figsize=(7, 4.5))
        t = result.table.dropna(subset=["objective", result.slos[0].metric])
        for status, marker in (
            ("feasible", "o"),
            ("undecided", "s"),
            ("infeasible", "x"),
            ("worse", "."),
        ):
            part = t[t["status"] == status]
            if len(part):
                ax.scatter(
                    part["objective"],
                    part[result.slos[0].metric],
                    marker=marker,
                    label=status,
                    alpha=0.7,
                )
        ax.plot(
            front["objective"], front[result.slos[0].metric], "k--", lw=1, label="Pareto frontier"
        )
        ax.axhline(result.slos[0].bound, color="red", lw=1, label=str(result.slos[0]))
        ax.set_xlabel(result.objective)
        ax.set_ylabel(result.slos[0].metric)
        ax.legend(fontsize=8)
        ax.set_title("irqlab tune: every candidate (means over replications)")
        fig.tight_layout()
        fig.savefig(out / "pareto.png", dpi=110)
        plt.close(fig)
        (out / "recommendation.md").write_text(summary_text(result), encoding="utf-8")
        (out / "recommendation.json").write_text(
            json.dumps(
                {
                    "feasible": result.feasible,
                    "recommended": result.recommended,
                    "commands": result.commands,
                    "slos": [str(s) for s in result.slos],
                    "minimize": result.objective,
                    "loads": result.loads,
                    "runs": result.runs,
                },
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )
    except OSError as e:
        raise ConfigError(
            f"{option('--out', 'out=')} {out}: cannot write ({e.strerror})", "out"
        ) from None


def summary_text(result: TuneResult) -> str:
    """The recommendation as Markdown: the commands, the margins, the runners-up."""
    from irqlab.formatting import count

    lines = ["# irqlab tune", ""]
    lines.append(f"SLOs: {', '.join(str(s) for s in result.slos)}; minimise {result.objective}; ")
    lines.append(
        f"loads (pps): {', '.join(f'{x:,.0f}' for x in result.loads)}; {count(result.runs, 'run')}."
    )
    lines.append("")
    t = result.table
    if result.feasible:
        row = result.row()
        lines += [f"## Recommended: {row['setting']}", "", "```sh", *result.commands, "```", ""]
        obj = f"{row['objective']:.4g}"
        ci = f"{row['objective_lo']:.4g} to {row['objective_hi']:.4g}"
        lines += [f"{result.objective} = {obj} (95% CI {ci})", ""]
        for s in result.slos:
            lo, hi = row[f"margin_lo[{s}]"], row[f"margin_hi[{s}]"]
            lines.append(
                f"- {s}: {s.metric} = {row[s.metric]:.4g} at the worst load; margin "
                f"{row[f'margin[{s}]']:.4g} (interval {lo:.4g} to {hi:.4g})"
            )
        runners = result.runners_up()
        if len(runners):
            lines += ["", "## Runners-up", ""]
            lines += [
                f"- {r['setting']}: {result.objective} = {r['objective']:.4g}"
                for _, r in runners.iterrows()
            ]
    else:
        lines += ["## No setting meets every SLO", "", "The closest:", ""]
        for _, r in closest(result).head(5).iterrows():
            parts = [f"{s.metric} = {r.get(s.metric, math.nan):.4g}" for s in result.slos]
            lines.append(f"- {r['setting']}: {', '.join(parts)}")
    counts = t["status"].value_counts().to_dict()
    lines += ["", "Candidates: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())), ""]
    return "\n".join(lines)
