"""The M/D/1/B queue: Poisson arrivals (rate λ), deterministic service 1/μ, at most B packets in
the system including the one in service. Salah et al. (2007, §3.4.3-3.4.4) use it for pure
polling, with μ the effective polling rate μ' of Eq. 9.

Stable method (:func:`md1b`): the chain embedded at departures (states 0..B−1 left behind), as
for any M/G/1/K queue (Gross & Harris, *Fundamentals of Queueing Theory*, §5.1.9). With
a_k = P(k Poisson(ρ) arrivals during one service) and ā_k = P(A > k), the level-crossing
recursion

    π_0 = 1,   π_{j+1} a_0 = π_0 ā_j + Σ_{i=1}^{j} π_i ā_{j−i+1}     (j = 0..B−2)

adds positive terms only; the vector is rescaled whenever it grows large (ρ > 1) and normalised
over 0..B−1. The time averages are p_n = π_n/(π_0 + ρ) for n < B and p_B = 1 − 1/(π_0 + ρ).

The printed formulas (Eq. 11 for p0, the b_n of the latency formula after Eq. 11) are
alternating series whose terms reach (B − 1)^k e^((B−1)ρ) ρ^k/k!: they overflow or cancel
catastrophically long before B = 1024. They are kept (``*_printed``) to show that they are the
same quantity at small B.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

from irqlab.analytic.limits import check_capacity
from irqlab.analytic.mm1b import FiniteQueue

#: rescale the embedded-chain vector when its largest entry passes this
_RESCALE_AT = 1e100
#: largest load: beyond, e^(−ρ) (no arrival in a service) nears the float64 underflow
_RHO_MAX = 500.0


class MD1B(FiniteQueue):
    """Steady-state figures of an M/D/1/B queue (service time exactly 1/μ)."""


def departure_distribution(rho: float, capacity: int) -> np.ndarray:
    """π_0..π_{B−1}: the number left behind by a departure, normalised to sum 1."""
    check_capacity(capacity, "the M/D/1/B queue", 1, 1, chain=False)
    big = capacity
    if rho > _RHO_MAX:
        raise ValueError(f"M/D/1/B: load {rho:g} too high (at most {_RHO_MAX:g})")
    if big == 1:
        return np.ones(1)
    a0 = math.exp(-rho)  # P(no arrival during a service)
    tail = stats.poisson.sf(np.arange(big, dtype=float), rho)  # ā_k = P(A > k), k = 0..B−1
    # ā_k decreases and is 0 in float64 from k = ρ + a few hundred on: the sum needs only the
    # terms before, so the recursion takes time B·k, not B²/2 (at B = 65536, 0.5 s, not 20)
    nonzero = int(np.count_nonzero(tail))
    pi = np.zeros(big)
    pi[0] = 1.0
    for j in range(big - 1):
        # π_0 ā_j + Σ_{i=lo}^{j} π_i ā_{j−i+1}: π_lo..π_j against ā_{j−lo+1}..ā_1, the terms
        # with ā_{j−i+1} > 0 (j − i + 1 < nonzero)
        lo = max(1, j + 2 - nonzero)
        acc = pi[0] * tail[j] + float(np.dot(pi[lo : j + 1], tail[j - lo + 1 : 0 : -1]))
        pi[j + 1] = acc / a0
        if pi[j + 1] > _RESCALE_AT:
            pi /= pi[j + 1]
    p: np.ndarray = pi / pi.sum()
    return p


def _excess_means(rho: float, most: int) -> np.ndarray:
    """T_m = E[(A − m)^+] = Σ_{j≥m} ā_j for m = 0..most, A ~ Poisson(ρ), positive terms only.

    The sum is cut where ā_j has fallen by more than 1e-25 relative to every T_m needed.
    """
    stop = most + math.ceil(rho + 20.0 * math.sqrt(rho) + 60.0)
    tail = stats.poisson.sf(np.arange(stop + 1, dtype=float), rho)
    return np.cumsum(tail[::-1])[::-1][: most + 1]


def distribution(rho: float, capacity: int) -> np.ndarray:
    """p_0..p_B, the time-average number in an M/D/1/B system at load ρ = λ/μ.

    p_n = π_n/(π_0 + ρ) for n < B. p_B = 1 − 1/(π_0 + ρ) would lose all relative accuracy
    when p_B is tiny (ρ ≪ 1, large B), so it is computed from positive terms: a service that
    starts with i packets keeps the system full for E[(D − S_{B−i})^+] = T_{B−i}/λ, where
    S_m is the m-th arrival in the service and T_m = E[(A − m)^+]; services start at rate γ
    with i = max(left behind, 1), so p_B = Σ_i π_i T_{B − max(i,1)}/(π_0 + ρ). The two forms
    agree to rounding (tested).
    """
    if capacity < 1:
        raise ValueError("need capacity >= 1")
    check_capacity(capacity, "the M/D/1/B queue", 1, 1, chain=False)
    p = np.zeros(capacity + 1)
    if rho == 0:
        p[0] = 1.0
        return p
    dep = departure_distribution(rho, capacity)
    scale = dep[0] + rho
    p[:-1] = dep / scale
    start = np.maximum(np.arange(capacity), 1)  # packets in the system when a service starts
    excess = _excess_means(rho, capacity)
    p[-1] = float(np.dot(dep, excess[capacity - start])) / scale
    return p


def md1b(rate: float, service_rate: float, capacity: int) -> MD1B:
    """M/D/1/B figures for arrival rate λ = ``rate``, service time 1/μ, buffer B = ``capacity``."""
    if rate < 0 or service_rate <= 0 or capacity < 1:
        raise ValueError("need rate >= 0, service_rate > 0, capacity >= 1")
    return MD1B.from_distribution(rate, service_rate, distribution(rate / service_rate, capacity))


def md1b_b_printed(rho: float, n: int) -> float:
    """b_n = Σ_{k=0}^{n} (−1)^k/k! (n − k)^k e^((n−k)ρ) ρ^k (b_0 = 1), as printed after Eq. 11.

    Evaluated naively, term by term in float64, on purpose: this is the printed formula, and it
    returns inf, nan or garbage once the terms pass ~1e16 times the result.
    """
    if n == 0:
        return 1.0
    k = np.arange(n + 1, dtype=float)
    m = n - k
    with np.errstate(all="ignore"):
        terms = (-1.0) ** k / special.factorial(k) * m**k * np.exp(m * rho) * rho**k
        return float(terms.sum())


def md1b_p0_printed(rate: float, service_rate: float, capacity: int) -> float:
    """p0 = 1/(1 + αρ), α = Σ_{k=0}^{B−1} (−1)^k/k! (B−k−1)^k e^((B−k−1)ρ) ρ^k (Eq. 11).

    α is b_{B−1}. Only for small B (see :func:`md1b_b_printed`); :func:`md1b` is the stable one.
    """
    rho = rate / service_rate
    alpha = md1b_b_printed(rho, capacity - 1)
    with np.errstate(all="ignore"):
        return float(np.float64(1.0) / (1.0 + np.float64(alpha) * rho))


def md1b_sojourn_printed(rate: float, service_rate: float, capacity: int) -> float:
    """E_IP[T] = (1/λ) (1 + ρ b_{B−1})/b_{B−1} · (B + Bρ b_{B−1} − Σ_{k=0}^{B−1} b_k)
    /(1 + ρ b_{B−1}), the M/D/1/B sojourn time printed in §3.4.4 (small B only)."""
    rho = rate / service_rate
    big = capacity
    b = np.array([md1b_b_printed(rho, k) for k in range(big)])
    last = b[-1]
    with np.errstate(all="ignore"):
        factor = (1.0 + rho * last) / last
        return float(factor * (big + big * rho * last - b.sum()) / (1.0 + rho * last) / rate)
