"""The M/M/1/B queue: Poisson arrivals (rate λ), exponential service (rate μ), at most B
packets in the system including the one in service. It is the `ideal` scheme's model
(Salah et al. 2007, §3.1) and a building block of the others.

With ρ = λ/μ, the stationary distribution is p_n = p_0 ρ^n for n = 0..B, with
p_0 = (1 − ρ)/(1 − ρ^(B+1)) (ρ ≠ 1) or 1/(B+1) (ρ = 1). The probabilities are computed in a
numerically stable way (normalised by the largest term) so that B = 1024 at ρ = 2 is fine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from irqlab.analytic.limits import check_capacity

Q = TypeVar("Q", bound="FiniteQueue")


@dataclass(frozen=True)
class FiniteQueue:
    """Steady-state figures of a single-server queue with room for B packets."""

    rate: float  #: λ, arrivals per second
    service_rate: float  #: μ, services per second
    capacity: int  #: B, packets in the system at most
    p0: float  #: probability that the system is empty (= CPU idle fraction)
    loss: float  #: p_B, probability that an arrival is dropped (PASTA)
    throughput: float  #: λ (1 − p_B), packets per second
    mean_in_system: float  #: E[N]
    mean_sojourn_s: float  #: E[T] = E[N] / throughput, seconds

    @classmethod
    def from_distribution(cls: type[Q], rate: float, service_rate: float, p: np.ndarray) -> Q:
        """The figures of the time-average distribution p_0 … p_B."""
        capacity = len(p) - 1
        loss = float(p[-1])
        throughput = rate * (1.0 - loss)
        mean_n = float(np.dot(np.arange(capacity + 1), p))
        sojourn = mean_n / throughput if throughput > 0 else 1.0 / service_rate
        return cls(rate, service_rate, capacity, float(p[0]), loss, throughput, mean_n, sojourn)

    @property
    def utilisation(self) -> float:
        return 1.0 - self.p0

    @property
    def rho(self) -> float:
        return self.rate / self.service_rate


class MM1B(FiniteQueue):
    """Steady-state figures of an M/M/1/B queue."""


def distribution(rho: float, capacity: int) -> np.ndarray:
    """p_0 … p_B of an M/M/1/B queue at load ρ."""
    check_capacity(capacity, "the M/M/1/B queue", 1, 1, chain=False)
    n = np.arange(capacity + 1, dtype=float)
    if rho == 0:
        p = np.zeros(capacity + 1)
        p[0] = 1.0
        return p
    # log-weights avoid overflow (ρ^B for ρ > 1) and underflow alike
    logw = n * np.log(rho)
    w = np.exp(logw - logw.max())
    dist: np.ndarray = w / w.sum()
    return dist


def mm1b(rate: float, service_rate: float, capacity: int) -> MM1B:
    """M/M/1/B figures for arrival rate λ = ``rate``, service rate μ, buffer B = ``capacity``."""
    if rate < 0 or service_rate <= 0 or capacity < 1:
        raise ValueError("need rate >= 0, service_rate > 0, capacity >= 1")
    return MM1B.from_distribution(rate, service_rate, distribution(rate / service_rate, capacity))
