"""The goodput model of Chang et al. (2007), "A robust device hybrid scheme to improve system
performance in gigabit Ethernet networks", §III: protocol processing, ksoftirqd and one
application sharing one CPU under a constant packet rate.

Notation (the paper's table; times in seconds, rates per second):

* λ — packet rate at the DMA ring; T_p — protocol processing of one packet; T_a — the
  application's work on one packet (its ``recv`` included);
* B_p — the most packets an RX softirq invocation takes from the ring (``max_softirq_restart``
  × ``netdev_budget`` in Linux 2.6.18); B_a — the most packets the application handles in one
  scheduling round (its quantum / T_a);
* T_c^a, T_c^k — a context switch to the application, to ksoftirqd; T_c^i + T_itr — one
  interrupt (overhead and handler); T_x — the rest of an inter-interrupt interval;
* γ — packets in the ring when protocol processing starts; k_p — packets one invocation takes;
  k_a — packets the application handles in a round; G — goodput, packets per second.

The OCR of the paper scrambles the formulas. Each one here is reconstructed from its fragment
(``../shared``'s reference, §2.3, and the propositions' proofs), and checked against the
simulation under the model's own assumptions (``tests/test_chang2007.py``):

* Eq. (1), Prop. 1: ``k_p = min(B_p, γ / (1 − λ T_p))`` when λ T_p < 1 — from γ queued
  packets the ring empties after γ + γλT_p/(1 − λT_p) = γ/(1 − λT_p) (fragment
  ``kp= min { Bp , λ γ pT−1 }``).
* The three modes: (1) T_p ≥ 1/λ, the ring never empties (Prop. 2); (2) T_p < 1/λ and
  B_p ≤ γ/(1 − λT_p), the budget binds and ksoftirqd takes over; (3) T_p < 1/λ and
  B_p > γ/(1 − λT_p), the interrupt is re-enabled after each invocation.
* Eq. (2), modes 1–2 (Fig. 2: a round is the application for k_a packets, ksoftirqd for one
  invocation): ``G = k_a / (T_c^a + T_c^k + B_p T_p + k_a T_a)``, k_a ≤ k_p = B_p (fragment
  ``G= aapp k c a c a TkTBTT k +++``).
* Eq. (3), without overflow (k_a = B_p): ``G ≤ 1 / ((T_c^a + T_c^k)/B_p + T_p + T_a)``.
* Eq. (4), mode 3: ``G = 1 / ((T_c^a + T_c^k + T_c^i + T_x + T_itr)/k_a + k_p T_p/k_a + T_a)``
  with k_a ≤ k_p = γ/(1 − λT_p) (fragment ``G= a p pa a itrx i c k c a c T k Tk k TTTTT ++
  ++++ 1``). The five overheads over k_a are read as printed; T_c^k in mode 3 (the softirq
  runs on interrupt exit) stands for a switch back after preemption and is usually 0.
* Eq. (5), Prop. 8: with T = T_x + k_p T_p + k_a T_a and γ = (T_x + k_a T_a) λ, k_p ≥ k_a
  becomes ``T_a + T_x/k_a ≥ 1/λ − T_p``: when it holds for every k_a, raising T cannot remove
  the overflow.

The simulator measures G directly and needs none of this; the functions here are the paper's
analysis, to mark Fig. 8's mode boundaries and to test the simulation against.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def _check(**values: float) -> None:
    for name, v in values.items():
        if not (isinstance(v, int | float) and math.isfinite(v) and v >= 0):
            raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")


def k_p(budget: float, gamma: float, rate: float, proto_s: float) -> float:
    """Eq. (1): packets one RX softirq invocation takes, ``min(B_p, γ/(1 − λT_p))``; B_p
    itself in mode 1 (λT_p ≥ 1: the ring never empties)."""
    _check(budget=budget, gamma=gamma, rate=rate, proto_s=proto_s)
    load = rate * proto_s
    if load >= 1.0:
        return float(budget)
    return min(float(budget), gamma / (1.0 - load))


def mode(budget: float, gamma: float, rate: float, proto_s: float) -> int:
    """The protocol-processing mode (1, 2 or 3) of §III-A."""
    _check(budget=budget, gamma=gamma, rate=rate, proto_s=proto_s)
    load = rate * proto_s
    if load >= 1.0:
        return 1
    return 2 if budget <= gamma / (1.0 - load) else 3


def goodput_rounds(
    k_a: float,
    budget: float,
    proto_s: float,
    app_s: float,
    switch_app_s: float,
    switch_ksd_s: float,
) -> float:
    """Eq. (2), modes 1–2: goodput (packets/s) of rounds of k_a application packets and one
    ksoftirqd invocation of B_p packets."""
    _check(k_a=k_a, budget=budget, proto_s=proto_s, app_s=app_s)
    return k_a / (switch_app_s + switch_ksd_s + budget * proto_s + k_a * app_s)


def goodput_bound(
    budget: float, proto_s: float, app_s: float, switch_app_s: float, switch_ksd_s: float
) -> float:
    """Eq. (3): the goodput without overflow in modes 1–2 (k_a = B_p), an upper bound."""
    _check(budget=budget, proto_s=proto_s, app_s=app_s)
    return 1.0 / ((switch_app_s + switch_ksd_s) / budget + proto_s + app_s)


def goodput_mode3(
    k_a: float,
    k_p_: float,
    proto_s: float,
    app_s: float,
    overhead_s: float,
    idle_s: float = 0.0,
) -> float:
    """Eq. (4), mode 3: ``1 / ((overheads + T_x)/k_a + k_p T_p/k_a + T_a)``; ``overhead_s`` is
    T_c^a + T_c^k + T_c^i + T_itr, ``idle_s`` the rest of T_x."""
    _check(k_a=k_a, k_p=k_p_, proto_s=proto_s, app_s=app_s)
    return 1.0 / ((overhead_s + idle_s) / k_a + k_p_ * proto_s / k_a + app_s)


def raising_t_cannot_help(
    k_a: float, rate: float, proto_s: float, app_s: float, rest_s: float
) -> bool:
    """Eq. (5), Prop. 8: ``T_a + T_x/k_a ≥ 1/λ − T_p`` — then k_p = k_a is impossible and a
    longer interrupt interval cannot remove the overflow."""
    _check(k_a=k_a, rate=rate, proto_s=proto_s, app_s=app_s, rest_s=rest_s)
    return app_s + rest_s / k_a >= 1.0 / rate - proto_s


@dataclass(frozen=True)
class Rounds:
    """Mode 1–2 under Linux 2.6.18's scheduling (ksoftirqd below the application): the steady
    round of Fig. 2."""

    k_a: float
    """Packets the application handles per round: min(B_a, B_p)."""
    goodput_pps: float
    """Eq. (2) with that k_a."""
    overflow_pps: float
    """Packets protocol-processed and then dropped at the socket: (B_p − k_a) per round."""
    ksoftirqd_share: float
    """CPU share of ksoftirqd (its switch and its B_p packets)."""
    app_share: float


def rounds(
    budget: int,
    app_quantum_pkts: int,
    proto_s: float,
    app_s: float,
    switch_app_s: float = 0.0,
    switch_ksd_s: float = 0.0,
) -> Rounds:
    """The steady state of Fig. 2 when the ring never empties (λ above what the core can take):
    ksoftirqd protocol-processes B_p packets per invocation and cannot be preempted inside
    it; the application then handles k_a = min(B_a, B_p) (Prop. 4: no overflow iff k_a = B_p;
    Remark 1: B_p > B_a overflows)."""
    if budget < 1 or app_quantum_pkts < 1:
        raise ValueError("budget and app_quantum_pkts must be at least 1")
    ka = float(min(app_quantum_pkts, budget))
    cycle = switch_app_s + switch_ksd_s + budget * proto_s + ka * app_s
    return Rounds(
        k_a=ka,
        goodput_pps=goodput_rounds(ka, budget, proto_s, app_s, switch_app_s, switch_ksd_s),
        overflow_pps=(budget - ka) / cycle,
        ksoftirqd_share=(switch_ksd_s + budget * proto_s) / cycle,
        app_share=(switch_app_s + ka * app_s) / cycle,
    )


@dataclass(frozen=True)
class Interrupts:
    """Mode 3 with an interrupt interval T (Figs. 3–4) at constant rate λ."""

    k_p: float
    """Packets per interrupt: λT (Eq. (1) with γ = λ(T − k_p T_p))."""
    gamma: float
    """Packets in the ring when protocol processing starts."""
    goodput_pps: float
    idle_share: float
    """T_x's idle part over T."""
    mode: int


def interrupts(
    rate: float,
    interval_s: float,
    proto_s: float,
    app_s: float,
    irq_s: float,
    switch_app_s: float = 0.0,
    budget: float = math.inf,
) -> Interrupts:
    """Fig. 3 (k_a = k_p): an interrupt every T, protocol processing of all k_p = λT packets
    that arrived since the previous one, then the application for the same k_p; the rest of T
    is idle. Valid while that fits in T (no overflow, Prop. 6: maximum goodput, G = λ) and
    k_p < B_p (else the system is in mode 2)."""
    _check(rate=rate, interval_s=interval_s, proto_s=proto_s, app_s=app_s, irq_s=irq_s)
    kp = rate * interval_s
    gamma = kp * (1.0 - rate * proto_s)
    busy = irq_s + switch_app_s + kp * (proto_s + app_s)
    if busy > interval_s:
        raise ValueError(
            f"the interval does not fit its work ({busy * 1e6:.3f} us > "
            f"{interval_s * 1e6:.3f} us): not the Fig. 3 timeline"
        )
    idle = interval_s - busy
    m = mode(budget, gamma, rate, proto_s) if math.isfinite(budget) else 3
    g = goodput_mode3(kp, kp, proto_s, app_s, irq_s + switch_app_s, idle)
    return Interrupts(k_p=kp, gamma=gamma, goodput_pps=g, idle_share=idle / interval_s, mode=m)
