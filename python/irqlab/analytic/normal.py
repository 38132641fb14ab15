"""Normal interruption (Salah et al. 2007, §3.2): every arriving packet raises an interrupt whose
handling (ISR, mean 1/r) pre-empts protocol processing (mean 1/μ).

The paper's equations take the CPU share the ISRs use, U_ISR = λ/(λ + r) (Eq. 1), away from
protocol processing, which then runs as an M/M/1/B queue at the effective rate μ' = μ r/(λ + r)
(Eq. 2). As λ grows past the cliff point (Eq. 13) μ' falls below λ and the throughput γ = μ'(1−p0)
*decreases* with the load: receive livelock.

Those equations approximate the model they describe. Under its own assumptions (Poisson
arrivals; exponential ISRs raised by an arrival when none is running, the arrivals during one
absorbed by it, as the interrupt cause bit does; exponential protocol processing pre-empted by
them) the host is a Markov chain on (packets n, ISR running s). ``method="chain"`` (the
default) solves it: γ = μ Σ_{n≥1} P(n, 0), V = P(0, 0), E[T] = E[N]/γ (Little; an ISR delays
every packet waiting behind it, which Eq. 6's single 1/r misses). Throughput and CPU
availability agree with Eqs. 3 and 5 to a fraction of a percent except near the cliff point;
the mean latency does not: at Salah's costs Eq. 6 is 14% low at 60 kpps and 25% low at 100
kpps. ``method="printed"`` evaluates Eqs. 1-6 as printed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spl

from irqlab.analytic.limits import check_capacity
from irqlab.analytic.mm1b import mm1b

NormalMethod = Literal["chain", "printed"]


@dataclass(frozen=True)
class Normal:
    """Steady-state figures of normal interruption."""

    rate: float  #: λ, arrivals per second
    service_rate: float  #: μ, protocol processing rate, packets per second
    isr_rate: float  #: r, interrupt handling rate (1/r = one ISR), per second; inf = free ISRs
    capacity: int  #: B, packets in the protocol buffer at most
    u_isr: float  #: U_ISR = λ/(λ + r), CPU share of the ISRs (Eq. 1)
    effective_rate: float  #: μ' = μ r/(λ + r), disrupted protocol processing rate (Eq. 2)
    p0: float  #: probability that the protocol queue is empty (Eq. 4)
    cpu_availability: float  #: V = r/(λ + r) · p0, CPU share left to applications (Eq. 3)
    throughput: float  #: γ = μ'(1 − p0) = λ(1 − p_B), packets per second (Eq. 5)
    loss: float  #: p_B, probability that an arrival finds the buffer full
    mean_in_system: float  #: E_IP[N], packets in the protocol queue
    mean_latency_s: float  #: E[T] = 1/r + E_IP[N]/γ, seconds (Eq. 6)

    @property
    def rho(self) -> float:
        """ρ_IP = λ/μ', the load the protocol queue sees."""
        return self.rate / self.effective_rate


def _free_share(rate: float, isr_rate: float) -> float:
    """r/(λ + r), written as 1/(1 + λ/r) so that r = inf gives exactly 1."""
    return 1.0 / (1.0 + rate / isr_rate)


def normal(
    rate: float,
    service_rate: float,
    isr_rate: float,
    capacity: int,
    method: NormalMethod = "chain",
) -> Normal:
    """Normal interruption at arrival rate λ = ``rate``: the Markov chain of the model, or Salah
    Eqs. 1-6 as printed (``method="printed"``).

    ``isr_rate`` is r (1/r is the mean cost of one interrupt); ``math.inf`` removes the interrupt
    cost and gives the ideal M/M/1/B system (§3.2.4).
    """
    if rate < 0 or service_rate <= 0 or isr_rate <= 0 or capacity < 1:
        raise ValueError("need rate >= 0, service_rate > 0, isr_rate > 0, capacity >= 1")
    if method == "chain" and math.isfinite(isr_rate) and rate > 0:
        return _chain(rate, service_rate, isr_rate, capacity)
    check_capacity(capacity, "the normal-interruption model", 1, 1, chain=False)
    if method not in ("chain", "printed"):
        raise ValueError(f"method must be 'chain' or 'printed', not {method!r}")
    free = _free_share(rate, isr_rate)
    effective = service_rate * free  # Eq. 2
    q = mm1b(rate, effective, capacity)  # Eq. 4: the protocol queue at ρ_IP = λ/μ'
    throughput = effective * (1.0 - q.p0)  # Eq. 5 (equals λ(1 − p_B) for M/M/1/B)
    latency = 1.0 / isr_rate + q.mean_sojourn_s  # Eq. 6
    return Normal(
        rate=rate,
        service_rate=service_rate,
        isr_rate=isr_rate,
        capacity=capacity,
        u_isr=1.0 - free,
        effective_rate=effective,
        p0=q.p0,
        cpu_availability=free * q.p0,  # Eq. 3
        throughput=throughput,
        loss=q.loss,
        mean_in_system=q.mean_in_system,
        mean_latency_s=latency,
    )


def generator(rate: float, service_rate: float, isr_rate: float, capacity: int) -> sp.csr_array:
    """The generator of the chain on states 2n + s (n = 0..B packets, s = 1 while an ISR runs).

    An arrival with no ISR running starts one (even if the ring is full: the overrun raises the
    cause too); during an ISR arrivals only queue; protocol processing runs when no ISR does.
    """
    check_capacity(capacity, "the normal-interruption model", 2, 2, chain=True)
    lam, mu, r, b = rate, service_rate, isr_rate, capacity
    n = np.arange(b + 1)
    up = np.minimum(n + 1, b)
    rows = [2 * n, 2 * n[:-1] + 1, 2 * n + 1, 2 * n[1:]]
    cols = [2 * up + 1, 2 * n[:-1] + 3, 2 * n, 2 * n[1:] - 2]
    vals = [np.full(b + 1, lam), np.full(b, lam), np.full(b + 1, r), np.full(b, mu)]
    q = sp.coo_array(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(2 * b + 2, 2 * b + 2),
    ).tocsr()
    return q - sp.diags_array(np.asarray(q.sum(axis=1)).ravel())


def _chain(rate: float, service_rate: float, isr_rate: float, capacity: int) -> Normal:
    """Solves π Q = 0, Σπ = 1 as Qᵀ πᵀ = 0 with one balance equation replaced by Σπ = 1.

    As for disable-enable (:func:`irqlab.analytic.disable_enable._chain`): sparse LU without
    pivoting, in level order, the dense normalisation row last. The chain moves one level at
    a time (the states 2n + s are at most 3 apart), so the factors keep Qᵀ's band and their
    memory grows as B; a fill-reducing ordering with the normalisation row first, as a default
    sparse solve has it, filled them in (4.5 GB at B = 16384). Elimination starts at the
    improbable end: the top levels below the cliff point (λ < μ' = μr/(λ + r)), the bottom
    ones past it.
    """
    q = generator(rate, service_rate, isr_rate, capacity)
    size = q.shape[0]
    below_cliff = rate * (rate + isr_rate) < service_rate * isr_rate
    order = np.arange(size)[::-1] if below_cliff else np.arange(size)
    place = np.empty(size, dtype=np.int64)
    place[order] = np.arange(size)
    qt = q.T.tocoo()
    row, col = place[qt.row], place[qt.col]
    keep = row != size - 1  # the last row becomes the normalisation
    a = sp.csc_array(
        (
            np.concatenate([qt.data[keep], np.ones(size)]),
            (
                np.concatenate([row[keep], np.full(size, size - 1)]),
                np.concatenate([col[keep], np.arange(size)]),
            ),
        ),
        shape=(size, size),
    )
    rhs = np.zeros(size)
    rhs[-1] = 1.0
    lu = spl.splu(a, permc_spec="NATURAL", diag_pivot_thresh=0.0)
    pi = np.empty(size)
    pi[order] = lu.solve(rhs)
    residual = np.abs(pi @ q).max()
    if not residual < 1e-9 * max(rate, service_rate, isr_rate):
        raise ArithmeticError(f"normal-interruption chain not solved (residual {residual:.2e})")
    pi = np.clip(pi, 0.0, None)
    pi /= pi.sum()
    idle, isr = pi[0::2], pi[1::2]
    n = np.arange(capacity + 1)
    throughput = service_rate * float(idle[1:].sum())
    mean_n = float(n @ (idle + isr))
    p0 = float(idle[0] + isr[0])
    u_isr = float(isr.sum())
    return Normal(
        rate=rate,
        service_rate=service_rate,
        isr_rate=isr_rate,
        capacity=capacity,
        u_isr=u_isr,
        effective_rate=service_rate * (1.0 - u_isr),
        p0=p0,
        cpu_availability=float(idle[0]),
        throughput=throughput,
        loss=float(idle[-1] + isr[-1]),
        mean_in_system=mean_n,
        mean_latency_s=mean_n / throughput if throughput > 0 else math.inf,
    )


def cliff_point(service_rate: float, isr_rate: float) -> float:
    """λ_cliff = r/2 (sqrt(1 + 4μ/r) − 1), the saturation point of normal interruption (Eq. 13).

    It solves λ = μ r/(λ + r), i.e. ρ_IP = 1. Evaluated in the rationalised form
    2μ/(1 + sqrt(1 + 4μ/r)), which does not cancel when r ≫ μ and gives μ at r = inf.
    """
    if service_rate <= 0 or isr_rate <= 0:
        raise ValueError("need service_rate > 0 and isr_rate > 0")
    return 2.0 * service_rate / (1.0 + math.sqrt(1.0 + 4.0 * service_rate / isr_rate))
