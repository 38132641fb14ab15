"""Pure polling (Salah et al. 2007, §3.4, Figs. 3 and 5): the receive interrupt is off; a timer
fires every T_poll and each slot of T_poll is an overhead T_PollOH, then protocol processing of
up to Q packets at 1/μ each, then idle until the next tick. Protocol processing is modelled as
an M/D/1/B queue at the effective rate μ' (§3.4.3).

What is solved here, and where it departs from the printed equations:

* μ' (Eq. 9). A slot serves at most Q packets per T_poll, and at most μ(T_poll − T_PollOH) of
  them, so μ' = min(Q/T_poll, μ(1 − U_PollOH)), U_PollOH = T_PollOH/T_poll. The printed first
  case, Q/T_v with T_v = T_poll − T_PollOH, counts Q packets per T_v although the slot lasts
  T_poll, and it jumps at its own boundary Q/μ = T_v (Q/T_v = μ there against μ(1 − U_PollOH)
  on the other side). :func:`effective_rate_printed` keeps it for the record.
* CPU availability (§3.4.2). V = 1 − U_PollOH − U_IP with U_IP = γ/μ, the CPU time actually
  spent on the delivered packets. Eq. 10's three cases are piecewise approximations of it
  (λ/μ at light load, Q/(μ T_poll) when the quota binds, T_v/T_poll at full speed);
  :func:`u_ip_printed` implements them as printed.
* Latency (Eq. 12). E[T] = E_IP[T] + p0 · w, E_IP[T] the M/D/1/B sojourn and w the wait of a
  packet that finds the system empty for the next tick. ``empty_wait="half-period"`` (the
  default) takes the mean residual time to the next tick of a deterministic timer seen by a
  Poisson arrival, w = T_poll/2; ``"period"`` the paper's conservative upper bound w = T_poll,
  which puts the latency at light load 60-70% above the simulated one (Salah's costs: 26.4 µs
  against 15.4 µs at 2 kpps), where T_poll/2 is within 10%.

The model stays an approximation: the M/D/1/B queue serves continuously at μ' while the host
serves in slots. With the analysis' own assumptions (deterministic costs) the simulation gives
the same throughput (to 0.5%) and CPU availability (to 0.01); the mean latency is within about
20% (the queue's slotted waiting is not in M/D/1/B). With exponential costs, as in the paper's
simulation, a poll can overrun its slot, and the timer flag (Fig. 3) merges the ticks that fall
in one poll: at Salah's costs the saturated throughput is 140 kpps, not Q/T_poll = 150 kpps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from irqlab.analytic.md1b import md1b

EmptyWait = Literal["period", "half-period"]


@dataclass(frozen=True)
class Polling:
    """Steady-state figures of pure polling."""

    rate: float  #: λ, arrivals per second
    service_rate: float  #: μ, protocol processing rate, packets per second
    period_s: float  #: T_poll, seconds between polls
    overhead_s: float  #: T_PollOH, CPU time of one poll, seconds
    quota: int  #: Q, packets processed per poll at most
    capacity: int  #: B, packets in the buffer at most
    empty_wait: str  #: "period" or "half-period", see the module docstring
    effective_rate: float  #: μ' = min(Q/T_poll, μ(1 − U_PollOH)), packets per second (Eq. 9)
    u_poll_oh: float  #: U_PollOH = T_PollOH/T_poll
    p0: float  #: probability that the M/D/1/B queue is empty (Eq. 11)
    throughput: float  #: γ = μ'(1 − p0), packets per second
    loss: float  #: p_B
    u_ip: float  #: U_IP = γ/μ, CPU share of protocol processing
    cpu_availability: float  #: V = 1 − U_PollOH − U_IP (§3.4.2)
    mean_in_system: float  #: E_IP[N]
    mean_latency_s: float  #: E[T] = E_IP[T] + p0 · w, seconds (Eq. 12)

    @property
    def rho(self) -> float:
        """ρ = λ/μ', the load on the M/D/1/B queue."""
        return self.rate / self.effective_rate


def _check(service_rate: float, period_s: float, overhead_s: float, quota: int) -> None:
    if service_rate <= 0 or quota < 1 or not 0 <= overhead_s < period_s:
        raise ValueError("need service_rate > 0, quota >= 1 and 0 <= overhead_s < period_s")


def effective_rate(service_rate: float, period_s: float, overhead_s: float, quota: int) -> float:
    """μ' = min(Q/T_poll, μ(1 − T_PollOH/T_poll)): the quota or the CPU left by the polls binds.

    The corrected Eq. 9 (see the module docstring); continuous in all its arguments.
    """
    _check(service_rate, period_s, overhead_s, quota)
    return min(quota / period_s, service_rate * (1.0 - overhead_s / period_s))


def effective_rate_printed(
    service_rate: float, period_s: float, overhead_s: float, quota: int
) -> float:
    """Eq. 9 as printed: Q/T_v if Q/μ < T_v, else μ(1 − U_PollOH), T_v = T_poll − T_PollOH.

    Overstates μ' by T_poll/T_v while the quota binds and jumps at Q/μ = T_v.
    """
    _check(service_rate, period_s, overhead_s, quota)
    busy = period_s - overhead_s
    if quota / service_rate < busy:
        return quota / busy
    return service_rate * (1.0 - overhead_s / period_s)


def u_ip_printed(
    rate: float, service_rate: float, period_s: float, overhead_s: float, quota: int
) -> float:
    """U_IP as printed in Eq. 10, with N = λ T_poll and M = μ T_v:

    λ/μ if N < M and N < Q; else Q/(μ T_poll) if Q < M; else T_v/T_poll.
    """
    _check(service_rate, period_s, overhead_s, quota)
    busy = period_s - overhead_s
    arrivals, capacity = rate * period_s, service_rate * busy
    if arrivals < capacity and arrivals < quota:
        return rate / service_rate
    if quota < capacity:
        return quota / (service_rate * period_s)
    return busy / period_s


def pure_polling(
    rate: float,
    service_rate: float,
    period_s: float,
    overhead_s: float,
    quota: int,
    capacity: int,
    empty_wait: EmptyWait = "half-period",
) -> Polling:
    """Pure polling figures at arrival rate λ = ``rate`` (§3.4, Eqs. 9-12, as corrected above)."""
    _check(service_rate, period_s, overhead_s, quota)
    if empty_wait == "period":
        wait = period_s
    elif empty_wait == "half-period":
        wait = period_s / 2.0
    else:
        raise ValueError(f"empty_wait must be 'period' or 'half-period', not {empty_wait!r}")
    mu_eff = effective_rate(service_rate, period_s, overhead_s, quota)
    q = md1b(rate, mu_eff, capacity)
    throughput = mu_eff * (1.0 - q.p0)
    u_poll_oh = overhead_s / period_s
    u_ip = throughput / service_rate
    return Polling(
        # the inputs, in the order of pure_polling's arguments
        rate,
        service_rate,
        period_s,
        overhead_s,
        quota,
        capacity,
        empty_wait,
        effective_rate=mu_eff,
        u_poll_oh=u_poll_oh,
        p0=q.p0,
        throughput=throughput,
        loss=q.loss,
        u_ip=u_ip,
        # γ ≤ μ' ≤ μ(1 − U_PollOH): V ≥ 0 but for rounding
        cpu_availability=max(0.0, 1.0 - u_poll_oh - u_ip),
        mean_in_system=q.mean_in_system,
        mean_latency_s=q.mean_sojourn_s + q.p0 * wait,  # Eq. 12
    )
