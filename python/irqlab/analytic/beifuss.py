"""The RT latency bound of Beifuß et al. (2016), "Building a Low Latency Linux Software Router",
§III-D, Table II, Eqs. (1) and (2).

**The model (their Fig. 3).** One server (the core) serves two queues, the RT ring and the BE
ring, with a constant service time ``x`` per packet. RT packets arrive as a Poisson stream of
rate ``λ_RT = r·λ``. The server serves the RT ring until it is empty (its ring budget is
assumed large enough), then at most ``b`` BE packets (the BE ring budget), then the RT ring
again; an empty ring is passed over. ``ρ_RT = x·λ_RT < 1``.

**Eq. (1).** ``T_max = b·x + Σ_{i≥1} b·x·ρ_RT^i = b·x / (1 − ρ_RT)``: a full BE visit lasts
``b·x``; the ``b·x·λ_RT`` RT packets that arrive meanwhile (a mean) take ``b·x·ρ_RT`` to serve,
those arriving during that ``b·x·ρ_RT²``, and so on.

**What it is, precisely.** ``T_max`` is the *mean* time from the start of a full BE visit to the
moment the RT ring is next empty: ``b·x`` plus the mean busy period that the RT arrivals of the
visit start (an M/D/1 busy period begun by work ``w`` lasts ``w/(1 − ρ)`` on average). It is
built from mean arrival counts, as the paper says ("slightly conservative"; valid for smooth
traffic). It therefore bounds the *mean* waiting time of an RT packet, which is shorter than the
cycle it waits in; it is **not** a bound on every packet's wait: Poisson bursts make some RT
packets wait longer than ``T_max``. It does not include the packet's own service ``x``, the
IRQ and wake-up, or the Tx path.

**Eq. (2).** For a target ``T_max ≤ m·x``: ``b ≤ m·(1 − ρ_RT)``; the largest integer budget is
``floor(m·(1 − ρ_RT))`` (their examples: ``m = 6``, ``ρ_RT ≤ 0.3`` → ``b = 4``;
``ρ_RT ≤ 0.5`` → ``b = 3``).

:func:`fig3_scenario` gives the irqlab scenario that *is* this model (free interrupts, one
vector, an RT ring served exhaustively before up to ``b`` BE packets, constant service), and
:func:`rt_cycles` measures, from a traced run of it, the durations ``T_max`` predicts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np


def t_max(b: int, x: float, rho_rt: float) -> float:
    """Eq. (1): ``b·x / (1 − ρ_RT)``, in the unit of ``x``.

    >>> round(t_max(4, 1 / 1.75, 0.45 / 1.75), 3)  # 1.5 Mpps, 30 % RT, x = 1/1.75 µs
    3.077
    """
    if b < 1 or int(b) != b:
        raise ValueError(f"b = {b}: the BE ring budget must be an integer of at least 1")
    if not x > 0:
        raise ValueError(f"x = {x}: the service time must be positive")
    if not 0 <= rho_rt < 1:
        raise ValueError(f"rho_rt = {rho_rt}: the RT utilisation must be in [0, 1)")
    return b * x / (1.0 - rho_rt)


def t_max_series(b: int, x: float, rho_rt: float, terms: int) -> float:
    """Eq. (1) as the paper builds it: ``b·x + Σ_{i=1..terms} b·x·ρ_RT^i``."""
    return sum(b * x * rho_rt**i for i in range(terms + 1))


def b_max(m: float, rho_rt: float) -> int:
    """Eq. (2): the largest BE ring budget ``b`` with ``T_max ≤ m·x``: ``floor(m·(1 − ρ_RT))``.

    >>> b_max(6, 0.3), b_max(6, 0.5)
    (4, 3)
    """
    if not m > 0:
        raise ValueError(f"m = {m}: the target must be a positive multiple of x")
    if not 0 <= rho_rt < 1:
        raise ValueError(f"rho_rt = {rho_rt}: the RT utilisation must be in [0, 1)")
    # a tolerance so that m·(1 − ρ) = 4.2000000001 or 3.9999999999 round as meant
    return math.floor(m * (1.0 - rho_rt) + 1e-9)


def fig3_scenario(
    b: int, x_ns: float, rate_pps: float, rt_share: float, duration_ms: float = 200.0
) -> dict[str, Any]:
    """The scenario that is the model of Fig. 3: interrupts, polls and switches cost nothing;
    constant service ``x_ns``; an RT ring served until empty (budget and device budget far
    above any backlog), then up to ``b`` BE packets; rings that never fill."""
    return {
        "scheme": "ideal",
        "traffic.kind": "poisson",
        "traffic.rate_pps": rate_pps,
        "qos.strategy": "ll-wfq",
        "qos.rt_share": rt_share,
        "qos.ring_budgets": [b, 1 << 20],
        "qos.ring_order": "rt-first",
        "kernel.napi_weight": 65536,
        "kernel.netdev_budget": 1 << 20,
        "platform.proto_ns": x_ns,
        "platform.proto_dist": "deterministic",
        "platform.tx_ns": 0.0,
        "platform.tx_clean_ns": 0.0,
        "platform.ring_switch_ns": 0.0,
        "nic.ring_descriptors": 1 << 20,
        "run.warmup_ms": 1.0,
        "run.duration_ms": duration_ms,
    }


def rt_cycles(trace: Mapping[str, Sequence[Any]], b: int, x_ps: int, rt: int = 1) -> np.ndarray:
    """From a traced run of :func:`fig3_scenario`: the duration (ps) of every RT service cycle
    that Eq. (1) describes — from the start of a full BE visit (``b`` BE packets served back to
    back) to the moment the RT ring is next empty (the end of the RT packets served back to
    back right after it; the visit alone if none follow).

    With constant service the server's schedule is the packets' completions in time order,
    each service starting ``x`` before its completion.
    """
    done = np.array([d if d is not None else -1 for d in trace["done_ps"]], dtype=np.int64)
    cls = np.asarray(trace["class"], dtype=np.int64)
    served = done >= 0
    order = np.argsort(done[served], kind="stable")
    t = done[served][order]
    c = cls[served][order]
    start = t - x_ps
    # segments: maximal runs of one class served back to back (no idle time in between)
    new = np.ones(len(t), dtype=bool)
    new[1:] = (c[1:] != c[:-1]) | (start[1:] != t[:-1])
    first = np.flatnonzero(new)
    last = np.append(first[1:] - 1, len(t) - 1)
    cycles = []
    for s_i, (a, z) in enumerate(zip(first, last, strict=True)):
        if c[a] == rt:
            continue
        # a BE segment is visits of b (the RT ring was empty at each switch) and maybe a
        # shorter last one (the BE ring ran dry)
        full = (z - a + 1) // b
        cycles.extend([b * x_ps] * max(full - 1, 0))
        if full == 0:
            continue
        if (z - a + 1) % b:
            cycles.append(b * x_ps)  # the last full visit, then the partial one
            continue
        # the last visit is full: the RT packets served right after it belong to its cycle
        follows = s_i + 1 < len(first) and c[first[s_i + 1]] == rt and not _gap(start, t, z)
        end = t[last[s_i + 1]] if follows else t[z]
        cycles.append(end - start[z - b + 1])
    return np.asarray(cycles, dtype=np.int64)


def _gap(start: np.ndarray, done: np.ndarray, i: int) -> bool:
    """Whether the server idled between service ``i`` and the next."""
    return bool(start[i + 1] != done[i])
