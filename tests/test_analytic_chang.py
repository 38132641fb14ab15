"""The §III model of Chang et al. (2007) in ``irqlab.analytic.chang`` against the simulation
run under the model's own assumptions: one core, one application, constant rate (CBR),
deterministic costs, Linux 2.6.18's scheduling (ksoftirqd below the application) and
net_rx_action (a pass takes at most netdev_budget packets), no softirq time limit.
"""

from __future__ import annotations

import pytest

import irqlab
from irqlab.analytic import chang

IP_BYTES = 46  # 64-byte frames
US = 1e-6


def base(rate: float, proto_us: float, app_us: float, **extra) -> dict:
    s = {
        "scheme": "napi",
        "traffic.kind": "cbr",
        "traffic.rate_pps": rate,
        "traffic.size_bytes": IP_BYTES + 18,
        "run.warmup_ms": 20.0,
        "run.duration_ms": 100.0,
        "nic.ring_descriptors": 4096,
        "platform.irq_ns": 0.0,
        "platform.irq_dist": "deterministic",
        "platform.proto_ns": proto_us * 1000,
        "platform.proto_dist": "deterministic",
        "platform.poll_ns": 0.0,
        "platform.softirq_ns": 0.0,
        "platform.unmask_ns": 0.0,
        "platform.mask_ns": 0.0,
        "platform.ctx_switch_ns": 1000.0,
        "platform.ctx_switch_dist": "deterministic",
        "platform.task_wakeup_ns": 0.0,
        "kernel.ksoftirqd_policy": "below-apps",
        "kernel.net_rx_action": "2.6.18",
        "kernel.softirq_time_limit": False,
        "kernel.max_softirq_restart": 1,
        "kernel.sched_slice_us": 1000.0,
        "app": [{"cost_ns": app_us * 1000, "cost_dist": "deterministic"}],
    }
    s.update(extra)
    return s


def goodput_pps(r: dict) -> float:
    return r["goodput_bps"] / IP_BYTES


@pytest.mark.parametrize("budget", [5, 20, 60])
def test_mode_2_without_overflow_meets_equation_3(budget):
    # 1 Mpps, far above what the core takes: the ring never empties (mode 2), ksoftirqd does
    # every invocation, the application (B_a = 200) empties its socket each round.
    r = irqlab.run(base(1e6, 2.0, 5.0, **{"kernel.netdev_budget": budget}))
    g = chang.goodput_bound(budget, 2 * US, 5 * US, 1 * US, 1 * US)
    assert goodput_pps(r) == pytest.approx(g, rel=0.005)
    assert r["packets"]["dropped_socket"] == 0, "Prop. 4: k_a = B_p, no overflow"
    m = chang.rounds(budget, 200, 2 * US, 5 * US, 1 * US, 1 * US)
    assert m.k_a == budget
    assert r["cpu"]["ksoftirqd"] == pytest.approx(m.ksoftirqd_share, abs=0.005)
    assert r["cpu"]["app"] == pytest.approx(m.app_share, abs=0.005)


def test_mode_2_with_a_budget_above_the_quantum_overflows_as_remark_1_says():
    # B_a = 100 us / 5 us = 20 packets per round, B_p = 60: 40 of each round's packets were
    # protocol-processed for nothing (Eq. (2) with k_a = B_a).
    r = irqlab.run(
        base(1e6, 2.0, 5.0, **{"kernel.netdev_budget": 60, "kernel.sched_slice_us": 100.0})
    )
    m = chang.rounds(60, 20, 2 * US, 5 * US, 1 * US, 1 * US)
    assert m.k_a == 20
    assert goodput_pps(r) == pytest.approx(m.goodput_pps, rel=0.01)
    dropped = r["packets"]["dropped_socket"] / r["measured_s"]
    assert dropped == pytest.approx(m.overflow_pps, rel=0.03)
    # Prop. 3: a smaller budget gives more goodput
    better = chang.rounds(20, 20, 2 * US, 5 * US, 1 * US, 1 * US)
    assert better.goodput_pps > m.goodput_pps


def test_mode_3_meets_figure_3_timeline():
    # 100 kpps, an interrupt every 100 us: k_p = 10 per interrupt, then the application takes
    # the same 10; the rest of each interval is idle and every packet is delivered (Prop. 6).
    s = base(
        1e5,
        2.0,
        3.0,
        **{"nic.itr_us": 100.0, "platform.irq_ns": 5000.0, "kernel.netdev_budget": 300},
    )
    r = irqlab.run(s)
    m = chang.interrupts(1e5, 100 * US, 2 * US, 3 * US, 5 * US, switch_app_s=1 * US, budget=300)
    assert m.mode == 3
    assert m.k_p == pytest.approx(10.0)
    assert r["irq_per_s"] == pytest.approx(1e4, rel=0.01)
    assert r["packets_per_poll"] == pytest.approx(m.k_p, rel=0.02)
    assert r["cpu"]["idle"] == pytest.approx(m.idle_share, abs=0.01)
    assert goodput_pps(r) == pytest.approx(m.goodput_pps, rel=0.01)
    assert r["counts"]["ksoftirqd_wakeups"] == 0, "mode 3: re-enabled after each invocation"
    assert r["packets"]["dropped_socket"] == 0 and r["packets"]["dropped_nic"] == 0


@pytest.mark.parametrize(("budget", "expected_mode"), [(5, 2), (8, 2), (13, 3), (50, 3)])
def test_the_mode_boundary_is_gamma_over_one_minus_lambda_tp(budget, expected_mode):
    # gamma = k_p (1 - lambda T_p) = 10 x 0.8 = 8: the boundary is 8 / 0.8 = 10 packets.
    m = chang.interrupts(1e5, 100 * US, 2 * US, 3 * US, 5 * US, switch_app_s=1 * US)
    assert chang.k_p(1e9, m.gamma, 1e5, 2 * US) == pytest.approx(10.0)
    assert chang.mode(budget, m.gamma, 1e5, 2 * US) == expected_mode
    s = base(
        1e5,
        2.0,
        3.0,
        **{"nic.itr_us": 100.0, "platform.irq_ns": 5000.0, "kernel.netdev_budget": budget},
    )
    r = irqlab.run(s)
    ksoftirqd_ran = r["counts"]["ksoftirqd_wakeups"] > 0
    assert ksoftirqd_ran == (expected_mode == 2)


def test_mode_1_never_reenables_the_interrupt():
    # T_p = 1.2 us at 1 Mpps: lambda T_p >= 1, the ring never empties (Prop. 2).
    assert chang.mode(3000, 1.0, 1e6, 1.2 * US) == 1
    r = irqlab.run(base(1e6, 1.2, 0.5, **{"kernel.netdev_budget": 300}))
    assert r["irq_per_s"] == 0


def test_equation_5_says_when_a_longer_interval_cannot_help():
    # 1/lambda - T_p = 1.5 us at 400 kpps with T_p = 1 us: an application slower than that
    # per packet cannot keep up however long T is; a faster one can, with a large enough k_a.
    assert chang.raising_t_cannot_help(10, 4e5, 1 * US, 2 * US, 0.0)
    assert not chang.raising_t_cannot_help(10, 4e5, 1 * US, 1 * US, 2 * US)
    assert chang.raising_t_cannot_help(1, 4e5, 1 * US, 1 * US, 2 * US)


def test_equations_2_and_3_agree_when_k_a_is_b_p():
    g2 = chang.goodput_rounds(40, 40, 2 * US, 5 * US, 1 * US, 2 * US)
    g3 = chang.goodput_bound(40, 2 * US, 5 * US, 1 * US, 2 * US)
    assert g2 == pytest.approx(g3)
    assert chang.goodput_rounds(20, 40, 2 * US, 5 * US, 1 * US, 2 * US) < g3


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="rate"):
        chang.k_p(10, 1, -1.0, 1e-6)
    with pytest.raises(ValueError, match="at least 1"):
        chang.rounds(0, 10, 1e-6, 1e-6)
