"""Interrupt disabling and enabling (Salah et al. 2007, §3.3, Fig. 2): the receive interrupt is
masked while the protocol buffer holds packets and unmasked when it empties.

The Markov chain. State (n, m): n packets in the buffer (0..B), m = 1 if the interrupt is
enabled, 0 if disabled; the states are (0,1), (n,1) and (n,0) for n = 1..B. Arrivals (rate λ)
move (n,m) to (n+1,m) while n < B. In an enabled state the first packet of a busy period is
served at rate v (1/v = masking + ISR + its protocol processing): (1,1) → (0,1) and
(n,1) → (n−1,0) for n ≥ 2. In a disabled state packets are served at rate μ: (n,0) → (n−1,0)
for n ≥ 2 and (1,0) → (0,1), which re-enables the interrupt.

With a = λ/μ and b = λ/(λ + v) the balance equations give (p01 = p_{0,1})

    p_{n,1} = b^n p01                              1 ≤ n < B
    p_{B,1} = b^B/(1 − b) p01
    p_{n,0} = ab (b^n − a^n)/(b − a) p01           1 ≤ n < B
    p_{B,0} = a · ab (b^(B−1) − a^(B−1))/(b − a) p01

(the per-state forms printed in §3.3). Two ways of getting them are offered and checked against
each other in the tests: ``method="chain"`` solves π Q = 0 on the sparse generator, and
``method="closed"`` evaluates the forms above in logarithms (a > 1 makes a^B overflow at
B = 1024), with the quotient (b^n − a^n)/(b − a) = Σ_k b^k a^(n−1−k) written as
m^(n−1) expm1(n log q)/expm1(log q), m = max(a, b), q = min(a, b)/m: no cancellation near
a = b (λ = μ − v, inside the paper's load range), the limit n a^(n−1) at a = b exactly, and
nothing special at a = 1 (only the compact Eqs. 7-8 are singular there).

The compact p01 (Eq. 7) and throughput (Eq. 8) are given by :func:`p01_compact` and
:func:`throughput_compact`; see there for what the printed derivation gets wrong.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

from irqlab.analytic.limits import check_capacity

Method = Literal["chain", "closed"]

#: largest accepted residual max|πQ| / (λ + μ + v) of the chain solution
CHAIN_RESIDUAL_TOL = 1e-10


@dataclass(frozen=True)
class DisableEnable:
    """Steady-state figures of the interrupt disable-enable scheme."""

    rate: float  #: λ, arrivals per second
    service_rate: float  #: μ, protocol processing rate while interrupts are disabled
    first_rate: float  #: v, rate of the first packet of a busy period (mask + ISR + protocol)
    capacity: int  #: B, packets in the buffer at most
    method: str  #: "chain" or "closed", how the distribution was computed
    p01: float  #: probability of the idle, enabled state = CPU availability (§3.3.1)
    throughput: float  #: γ = v Σ p_{n,1} + μ Σ p_{n,0}, packets per second (§3.3.2)
    loss: float  #: p_B = p_{B,0} + p_{B,1}
    mean_in_system: float  #: E[N] = Σ n (p_{n,0} + p_{n,1})
    mean_latency_s: float  #: E[T] = E[N]/(λ(1 − p_B)), seconds (§3.3.3)

    @property
    def cpu_availability(self) -> float:
        """The CPU is free for applications only in the idle state (0,1) (§3.3.1)."""
        return self.p01

    @property
    def rho(self) -> float:
        """a = λ/μ, the load on the protocol processing."""
        return self.rate / self.service_rate


def _check(rate: float, service_rate: float, first_rate: float, capacity: int) -> None:
    if rate < 0 or service_rate <= 0 or first_rate <= 0 or capacity < 1:
        raise ValueError("need rate >= 0, service_rate > 0, first_rate > 0, capacity >= 1")


def generator(rate: float, service_rate: float, first_rate: float, capacity: int) -> sp.csr_array:
    """The generator Q of the chain of Fig. 2, states in level order: (0,1), (1,1), (1,0),
    (2,1), (2,0), …, (B,1), (B,0); (n,1) has index 2n − 1 and (n,0) index 2n."""
    _check(rate, service_rate, first_rate, capacity)
    check_capacity(capacity, "the disable-enable model", 2, 1, chain=True)
    n = np.arange(1, capacity + 1)
    up, down = n[:-1], n[1:]  # levels that can grow / that hand a packet down to a level ≥ 1
    rows = [np.r_[0, 2 * up - 1], 2 * up, [1], 2 * down - 1, [2], 2 * down]
    cols = [np.r_[1, 2 * up + 1], 2 * up + 2, [0], 2 * down - 2, [0], 2 * down - 2]
    rates = [rate, rate, first_rate, first_rate, service_rate, service_rate]
    r = np.concatenate([np.asarray(x, dtype=np.int64) for x in rows])
    c = np.concatenate([np.asarray(x, dtype=np.int64) for x in cols])
    q = np.concatenate([np.full(len(x), v, dtype=float) for x, v in zip(rows, rates, strict=True)])
    size = 2 * capacity + 1
    off = sp.coo_array((q, (r, c)), shape=(size, size)).tocsr()
    out = np.asarray(off.sum(axis=1)).ravel()
    return (off - sp.diags_array(out)).tocsr()


def _split(pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p_{n,1} for n = 0..B, p_{n,0} for n = 0..B with p_{0,0} = 0) from the state vector."""
    return np.r_[pi[0], pi[1::2]], np.r_[0.0, pi[2::2]]


def _chain(
    rate: float, service_rate: float, first_rate: float, capacity: int
) -> tuple[np.ndarray, np.ndarray]:
    """Solve π Q = 0, Σπ = 1 as Qᵀ πᵀ = 0 with one balance equation replaced by Σπ = 1.

    Sparse LU without pivoting, in level order. Qᵀ is column diagonally dominant (each row of Q
    sums to 0), so elimination needs no pivoting to be stable, and the band structure keeps the
    factors sparse when the dense normalisation row comes last (~4 ms at B = 1024; pivoting or
    the dense row first fill them in, ~100 ms). The elimination starts at the improbable end of
    the chain, the top levels if a = λ/μ < 1 and the bottom ones otherwise, and the
    normalisation replaces the balance equation of the state at the probable end ((0,1) or
    (B,0)): then the back substitution adds terms of one sign only and even probabilities of
    1e-300 come out with a relative error ~1e-13 (the other direction leaves them at the 1e-16
    absolute noise level). The residual max|πQ|/(λ + μ + v) is checked.
    """
    q = generator(rate, service_rate, first_rate, capacity)
    size = q.shape[0]
    order = np.arange(size) if rate >= service_rate else np.arange(size)[::-1]
    a = q.T.tocsr()[order][:, order].tolil()
    a[size - 1, :] = np.ones(size)
    rhs = np.zeros(size)
    rhs[-1] = 1.0
    lu = splu(a.tocsc(), permc_spec="NATURAL", diag_pivot_thresh=0.0)
    pi = np.empty(size)
    pi[order] = lu.solve(rhs)
    residual = float(np.max(np.abs(q.T @ pi))) / (rate + service_rate + first_rate)
    if not np.all(np.isfinite(pi)) or residual > CHAIN_RESIDUAL_TOL:
        raise ArithmeticError(f"disable-enable chain: residual {residual:.3g} too large")
    # round-off may leave probabilities that are zero in exact arithmetic at ±1e-20
    pi = np.clip(pi, 0.0, None)
    return _split(pi / pi.sum())


def _log_quotient(n: np.ndarray, rate: float, service_rate: float, first_rate: float) -> np.ndarray:
    """log((b^n − a^n)/(b − a)) = log Σ_{k<n} b^k a^(n−1−k) for n ≥ 1, without cancellation.

    a/b = (λ + v)/μ, so log q = −|log1p((λ + v − μ)/μ)| is exact to rounding even when a ≈ b.
    """
    a = rate / service_rate
    b = rate / (rate + first_rate)
    log_m = math.log(max(a, b))
    log_q = -abs(math.log1p((rate + first_rate - service_rate) / service_rate))
    if log_q == 0.0:  # a = b: the sum is n a^(n−1)
        equal: np.ndarray = (n - 1) * log_m + np.log(n)
        return equal
    # m^(n−1) (1 − q^n)/(1 − q)
    return (n - 1) * log_m + np.log(np.expm1(n * log_q) / math.expm1(log_q))


def _closed(
    rate: float, service_rate: float, first_rate: float, capacity: int
) -> tuple[np.ndarray, np.ndarray]:
    """The per-state closed forms, in logarithms, normalised numerically (the sum is Eq. 7)."""
    big = capacity
    if rate == 0:
        enabled = np.zeros(big + 1)
        enabled[0] = 1.0
        return enabled, np.zeros(big + 1)
    log_a = math.log(rate / service_rate)
    log_b = math.log(rate / (rate + first_rate))
    log_1mb = math.log(first_rate / (rate + first_rate))
    n = np.arange(big + 1, dtype=float)
    log_enabled = n * log_b
    log_enabled[big] -= log_1mb  # p_{B,1} = b^B/(1 − b) p01
    log_disabled = np.full(big + 1, -np.inf)
    if big >= 2:
        inner = n[1:big]
        log_c = log_a + log_b + _log_quotient(inner, rate, service_rate, first_rate)
        log_disabled[1:big] = log_c  # p_{n,0}, 1 ≤ n < B
        log_disabled[big] = log_a + log_c[-1]  # p_{B,0} = a p_{B−1,0}
    top = max(log_enabled.max(), log_disabled.max())
    enabled = np.exp(log_enabled - top)
    disabled = np.exp(log_disabled - top)
    total = enabled.sum() + disabled.sum()
    return enabled / total, disabled / total


def distribution(
    rate: float, service_rate: float, first_rate: float, capacity: int, method: Method = "chain"
) -> tuple[np.ndarray, np.ndarray]:
    """(p_{n,1}, p_{n,0}) for n = 0..B (p_{0,0} = 0: (0,0) is not a state), summing to 1."""
    _check(rate, service_rate, first_rate, capacity)
    chain = method == "chain"
    check_capacity(capacity, "the disable-enable model", 2 if chain else 1, 1, chain=chain)
    if method == "chain":
        return _chain(rate, service_rate, first_rate, capacity)
    if method == "closed":
        return _closed(rate, service_rate, first_rate, capacity)
    raise ValueError(f"method must be 'chain' or 'closed', not {method!r}")


def disable_enable(
    rate: float,
    service_rate: float,
    first_rate: float,
    capacity: int,
    method: Method = "chain",
) -> DisableEnable:
    """Disable-enable figures at arrival rate λ = ``rate`` (§3.3.1-3.3.3).

    ``first_rate`` is v (1/v: masking + ISR + protocol processing of the first packet of a busy
    period). With v = μ the scheme is the ideal M/M/1/B queue (§3.3.4).
    """
    enabled, disabled = distribution(rate, service_rate, first_rate, capacity, method)
    n = np.arange(capacity + 1)
    throughput = first_rate * enabled[1:].sum() + service_rate * disabled[1:].sum()
    loss = float(enabled[-1] + disabled[-1])
    mean_n = float(np.dot(n, enabled + disabled))
    accepted = rate * (1.0 - loss)
    # λ → 0: a lone packet stays 1/v, the first packet of its busy period
    latency = mean_n / accepted if accepted > 0 else 1.0 / first_rate
    return DisableEnable(
        rate=rate,
        service_rate=service_rate,
        first_rate=first_rate,
        capacity=capacity,
        method=method,
        p01=float(enabled[0]),
        throughput=float(throughput),
        loss=loss,
        mean_in_system=mean_n,
        mean_latency_s=latency,
    )


def _ab(rate: float, service_rate: float, first_rate: float) -> tuple[float, float]:
    a = rate / service_rate
    b = rate / (rate + first_rate)
    if a == b or a == 1.0 or rate == 0:
        raise ValueError("the compact forms are 0/0 at a = b, a = 1 and λ = 0: use disable_enable")
    return a, b


def _compact_denominator(a: float, b: float, capacity: int) -> float:
    big = capacity
    return (
        (b - a) * (1 - a + a * b)
        - a * (1 - a) * (a * b + b - a) * b**big
        + (1 - b) * b * a ** (big + 2)
    )


def p01_compact(rate: float, service_rate: float, first_rate: float, capacity: int) -> float:
    """p01 in closed form (Eq. 7), derived anew from the balance equations:

        p01 = (b − a)(1 − a)(1 − b) / D,
        D   = (b − a)(1 − a + ab) − a(1 − a)(ab + b − a) b^B + (1 − b) b a^(B+2).

    Derivation: Σ_{n=1}^{B−1} b^n + b^B/(1 − b) = b/(1 − b), and
    Σ_{n=1}^{B−1} p_{n,0} + p_{B,0} = ab/(b − a) [b(1 − b^(B−1))/(1 − b) − a(1 − a^(B−1))/(1 − a)
    + a(b^(B−1) − a^(B−1))] p01; multiplying 1/p01 = 1/(1 − b) + that by (b − a)(1 − a)(1 − b)
    gives D. D expands to the printed denominator (b − a)(1 − a + ab − ab^B)
    − a²(1 − b)(ab^B − a^B b), so the compact Eq. 7 as printed is right; the errors are in the
    line before it, which drops a '+' between the two a-sums (the second sum is the p_{B,0}
    term, a²b(b^(B−1) − a^(B−1))/(b − a), not a factor of the first).

    Singular (0/0) at a = b, a = 1 and λ = 0; a^B overflows for a > 1 and large B. Meant for
    checking at small B; :func:`disable_enable` is the stable evaluation.
    """
    _check(rate, service_rate, first_rate, capacity)
    a, b = _ab(rate, service_rate, first_rate)
    return (b - a) * (1 - a) * (1 - b) / _compact_denominator(a, b, capacity)


def throughput_compact(rate: float, service_rate: float, first_rate: float, capacity: int) -> float:
    """The throughput γ in closed form (Eq. 8), derived anew as λ(1 − p_B):

        γ = λ [(b − a)(1 − a + ab) − (1 − a)(ab + b − a) b^B + (1 − b) b a^(B+1)] / D

    with D the denominator of :func:`p01_compact`, using p_B = [(1 − a)(ab + b − a) b^B
    /((b − a)(1 − b)) − ab a^B/(b − a)] p01. The numerator expands to the printed
    (b − a)(1 − a + ab − b^B) − a(1 − b)(ab^B − a^B b), so the compact Eq. 8 as printed is
    right too. The printed derivation before it is not: it writes p_{0,0} for p01 (p_{0,0} is not
    a state), b^N for b^B, and its last sum μ Σ_{n=1}^{B−1} a^i b^(B−i) for p_{B,0} misses a
    factor a and sums over i: μ a Σ_{i=1}^{B−1} a^i b^(B−i). The p_B and E[N] lines of §3.3.3
    likewise write p_{1,0} where p01 is meant.

    Same domain as :func:`p01_compact`.
    """
    _check(rate, service_rate, first_rate, capacity)
    a, b = _ab(rate, service_rate, first_rate)
    big = capacity
    numerator = (b - a) * (1 - a + a * b) - (1 - a) * (a * b + b - a) * b**big
    numerator += (1 - b) * b * a ** (big + 1)
    return rate * numerator / _compact_denominator(a, b, capacity)
