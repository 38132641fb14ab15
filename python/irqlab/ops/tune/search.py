"""What a tune searches, and against what: the SLOs (``latency_us.p99 <= 50``), the knobs and
their ranges (``nic.itr_us=0..100:4``), the candidate settings (a scheme's defaults, or every
combination of the knobs, each checked at every load before anything runs) and the metrics an
SLO or objective may name (a numeric field of the run's report)."""

from __future__ import annotations

import itertools
import math
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from irqlab.errors import ConfigError, option

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


def scalar(text: str) -> Any:
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
        lo, hi = scalar(m.group(1)), scalar(m.group(2))
        step = scalar(m.group(3)) if m.group(3) else None
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
    values = [scalar(v) for v in text.split(",") if v.strip()]
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


@dataclass(frozen=True)
class Skipped:
    """A candidate not raced as given, because a setting of it does nothing on the scenario's
    host (or, in :attr:`Screened.doubts`, may do nothing: raced, and said so)."""

    #: the candidate's :func:`label`
    setting: str
    #: what the rules found, each naming the setting and why
    reason: str
    #: the candidate raced in its place (without its settings that do nothing), if any
    instead: str | None = None
    #: the kernel or driver sources of the reasons
    source: str = ""


@dataclass
class Screened:
    """The candidates to race, and those left out before racing with the reasons."""

    candidates: list[dict[str, Any]]
    skipped: list[Skipped]
    doubts: list[Skipped]


def screen_candidates(
    settings: list[dict[str, Any]],
    base: Mapping[str, Any],
    loads: Sequence[float],
    driver: str | None = None,
) -> Screened:
    """The candidates, each checked at every load before anything runs (a bad value is a
    :class:`ConfigError` naming its key), without those that some rule marks as doing
    nothing on the scenario's host, in their first order:

    - a setting the model ignores in the candidate (an ITR under an adaptive policy, deferral
      where nothing is masked: the model's warnings) is dropped from it, and the candidate
      races without it unless that leaves a duplicate;
    - a candidate with a setting that acts as another value (a time between ticks, which the
      kernel rounds up to whole jiffies) is skipped: the candidate with the value it acts as
      says the same, as the kernel runs it;
    - with ``driver``, a candidate with a setting the driver refuses, rounds or has no
      counterpart for (:func:`irqlab.ops.probe.ineffective.candidate_findings`) is skipped;
      one the driver may refuse, depending on what the device offers, races and is listed
      in :attr:`Screened.doubts`.
    """
    import warnings

    from irqlab.errors import ConfigWarning
    from irqlab.ops.probe.ineffective import candidate_findings
    from irqlab.scenario import resolve

    out: list[dict[str, Any]] = []
    skipped: list[Skipped] = []
    doubts: list[Skipped] = []
    for s in settings:
        idle: dict[str, str] = {}
        acting: dict[str, str] = {}
        for load in loads:
            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always", ConfigWarning)
                resolve({**base, **s, "traffic.rate_pps": load})
            for w in said:
                m = w.message
                if isinstance(m, ConfigWarning) and m.key is not None:
                    (idle if m.acts_as is None else acting).setdefault(m.key, str(m))
        kept = {k: v for k, v in s.items() if k not in idle}
        # the driver's rules, on what the model does not ignore
        found = candidate_findings(driver, kept, base)
        certain = [f for f in found if f.certain]
        acts = [acting[k] for k in kept if k in acting]
        if certain or acts:
            why = "; ".join([f.brief() for f in certain] + acts)
            sources = "; ".join(dict.fromkeys(f.source for f in certain))
            skipped.append(Skipped(label(s), why, source=sources))
            continue
        why_idle = [idle[k] for k in s if k in idle]
        if why_idle:
            skipped.append(Skipped(label(s), "; ".join(why_idle), label(kept)))
        if kept in out:
            continue
        unsure = [f for f in found if not f.certain]
        if unsure:
            why = "; ".join(f.brief() for f in unsure)
            sources = "; ".join(dict.fromkeys(f.source for f in unsure))
            doubts.append(Skipped(label(kept), why, label(kept), sources))
        out.append(kept)
    return Screened(out, skipped, doubts)


def effective_candidates(
    settings: list[dict[str, Any]],
    base: Mapping[str, Any],
    loads: Sequence[float],
    driver: str | None = None,
) -> list[dict[str, Any]]:
    """The candidates :func:`screen_candidates` races."""
    return screen_candidates(settings, base, loads, driver).candidates


def label(candidate: Mapping[str, Any]) -> str:
    """A short name: ``static itr_us=24 defer=2/20000 budget=600``."""
    parts = []
    for k, v in candidate.items():
        short = k.split(".")[-1]
        parts.append(str(v) if k == "driver.moderation" else f"{short}={v}")
    return " ".join(parts) or "(the scenario as it is)"


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
