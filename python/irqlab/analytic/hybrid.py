"""The hybrid scheme (Salah et al. 2007, §5.3): interrupt disable-enable at light load, for its
throughput and latency, and pure polling at heavy load, for the CPU it leaves to applications.

The switch is made on the offered load λ: disable-enable below the switching point, pure polling
at and above it. The switching point should sit just before the cliff point of normal
interruption (Eq. 13); the paper picks 120 kpps for a 127 kpps cliff and 110 kpps for 116, about
0.95 of it, which is the default here. (The paper measures the *throughput*; below the switch
disable-enable delivers all but a negligible fraction of λ, so the two coincide.)
"""

from __future__ import annotations

from dataclasses import dataclass

from irqlab.analytic.disable_enable import DisableEnable, Method, disable_enable
from irqlab.analytic.normal import cliff_point
from irqlab.analytic.polling import EmptyWait, Polling, pure_polling

#: default switching point as a fraction of the cliff point (Eq. 13)
SWITCH_FRACTION = 0.95


def switch_point(service_rate: float, isr_rate: float, fraction: float = SWITCH_FRACTION) -> float:
    """The default switching rate, ``fraction`` × λ_cliff (Eq. 13), packets per second."""
    return fraction * cliff_point(service_rate, isr_rate)


@dataclass(frozen=True)
class Hybrid:
    """The figures of the scheme in force at this load."""

    rate: float  #: λ, arrivals per second
    switch_rate: float  #: the switching point, packets per second
    model: DisableEnable | Polling  #: the scheme in force and its figures

    @property
    def mode(self) -> str:
        """The scheme in force: "disable-enable" below the switching point, else "poll"."""
        return "poll" if isinstance(self.model, Polling) else "disable-enable"

    @property
    def throughput(self) -> float:
        return self.model.throughput

    @property
    def cpu_availability(self) -> float:
        return self.model.cpu_availability

    @property
    def loss(self) -> float:
        return self.model.loss

    @property
    def mean_latency_s(self) -> float:
        return self.model.mean_latency_s

    @property
    def rho(self) -> float:
        return self.model.rho


def hybrid(
    rate: float,
    service_rate: float,
    isr_rate: float,
    first_rate: float,
    period_s: float,
    overhead_s: float,
    quota: int,
    capacity: int,
    *,
    switch_rate: float | None = None,
    empty_wait: EmptyWait = "half-period",
    method: Method = "chain",
) -> Hybrid:
    """Hybrid figures at arrival rate λ = ``rate``.

    ``isr_rate`` (r) only places the default switching point, 0.95 λ_cliff(μ, r); pass
    ``switch_rate`` to choose it. ``first_rate`` (v) is disable-enable's, ``period_s``,
    ``overhead_s`` and ``quota`` pure polling's.
    """
    switch = switch_point(service_rate, isr_rate) if switch_rate is None else switch_rate
    if switch <= 0:
        raise ValueError("need switch_rate > 0")
    model: DisableEnable | Polling
    if rate < switch:
        model = disable_enable(rate, service_rate, first_rate, capacity, method)
    else:
        model = pure_polling(rate, service_rate, period_s, overhead_s, quota, capacity, empty_wait)
    return Hybrid(rate, switch, model)
