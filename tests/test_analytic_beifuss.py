"""The RT latency bound of Beifuß et al. (2016), Eqs. (1) and (2), and what it holds to in a
simulation of exactly its model (Fig. 3): T_max is the mean RT service cycle, so it bounds the
mean RT wait, but Poisson bursts make some RT packets wait longer."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import irqlab
from irqlab.analytic.beifuss import b_max, fig3_scenario, rt_cycles, t_max, t_max_series


def test_t_max_is_the_closed_form_of_the_papers_series():
    for b, x, rho in [(4, 0.6, 0.3), (1, 1.0, 0.0), (60, 0.571, 0.9), (3, 2.0, 0.5)]:
        assert t_max(b, x, rho) == pytest.approx(t_max_series(b, x, rho, 2000), rel=1e-12)
        assert t_max(b, x, rho) == pytest.approx(b * x / (1 - rho))
    # without RT load the wait is one BE visit; it grows without bound as rho_RT -> 1
    assert t_max(4, 0.5, 0.0) == 2.0
    assert t_max(4, 0.5, 0.999) > 1000


def test_t_max_at_the_papers_operating_points():
    x = 1 / 1.75  # µs: the paper's 1.75 Mpps
    assert t_max(4, x, 0.3) == pytest.approx(3.265, abs=1e-3)
    assert t_max(4, 0.6, 0.3) == pytest.approx(3.429, abs=1e-3)
    assert t_max(4, x, 0.45 * x) == pytest.approx(3.077, abs=1e-3)  # 1.5 Mpps, 30 % RT
    assert t_max(64, x, 0.45 * x) == pytest.approx(49.2, abs=0.1)  # RR's whole BE weight


def test_b_max_gives_the_papers_budgets_and_meets_the_target():
    assert b_max(6, 0.3) == 4
    assert b_max(6, 0.5) == 3
    assert b_max(6, 0.0) == 6
    assert b_max(1, 0.5) == 0  # no budget meets it
    for m in (2, 6, 10.5, 64):
        for rho in np.linspace(0, 0.95, 20):
            b = b_max(m, rho)
            if b >= 1:
                assert t_max(b, 1.0, rho) <= m + 1e-9
            assert t_max(b + 1, 1.0, rho) > m - 1e-9


@pytest.mark.parametrize(
    "call",
    [
        lambda: t_max(0, 1.0, 0.3),
        lambda: t_max(2.5, 1.0, 0.3),
        lambda: t_max(4, 0.0, 0.3),
        lambda: t_max(4, 1.0, 1.0),
        lambda: t_max(4, 1.0, -0.1),
        lambda: b_max(0, 0.3),
        lambda: b_max(6, 1.0),
    ],
)
def test_out_of_domain_arguments_are_refused(call):
    with pytest.raises(ValueError):
        call()


X_NS = 600.0
B = 4


def simulate_fig3(rate_pps: float, rt_share: float, seed: int = 1):
    sc = fig3_scenario(B, X_NS, rate_pps, rt_share, duration_ms=150.0)
    report, trace = irqlab.run_traced(sc, seed=seed)
    return report, trace


@pytest.mark.parametrize(("rate_pps", "rt_share"), [(1.5e6, 0.3), (1.0e6, 0.5), (1.6e6, 0.1)])
def test_t_max_is_the_mean_rt_service_cycle_of_the_fig3_model(rate_pps, rt_share):
    report, trace = simulate_fig3(rate_pps, rt_share)
    assert report["loss_ratio"] == 0
    rho_rt = rate_pps * rt_share * X_NS * 1e-9
    cycles = rt_cycles(trace, B, int(X_NS * 1000)) / 1e6  # µs
    assert len(cycles) > 1000
    # every cycle is at least one full BE visit
    assert cycles.min() == pytest.approx(B * X_NS / 1000)
    # the mean cycle is T_max, within the 99.9 % interval of the sample mean
    mean = cycles.mean()
    half = stats.t.ppf(0.9995, len(cycles) - 1) * cycles.std(ddof=1) / math.sqrt(len(cycles))
    expected = t_max(B, X_NS / 1000, rho_rt)
    assert abs(mean - expected) < half + 1e-3, (mean, half, expected)


@pytest.mark.parametrize(("rate_pps", "rt_share"), [(1.5e6, 0.3), (1.6e6, 0.1)])
def test_t_max_bounds_the_mean_rt_wait_but_not_every_packets_wait(rate_pps, rt_share):
    report, trace = simulate_fig3(rate_pps, rt_share)
    rho_rt = rate_pps * rt_share * X_NS * 1e-9
    bound = t_max(B, X_NS / 1000, rho_rt)
    rt = next(c for c in report["per_class"] if c["class"] == "rt")
    # latency = wait + own service x
    assert rt["latency_us"]["mean"] - X_NS / 1000 < bound
    arrival = np.asarray(trace["arrival_ps"], dtype=np.int64)
    done = np.array([d if d is not None else -1 for d in trace["done_ps"]], dtype=np.int64)
    cls = np.asarray(trace["class"])
    ok = (done >= 0) & (cls == 1)
    wait_us = (done[ok] - arrival[ok]) / 1e6 - X_NS / 1000
    # bursts: a share of RT packets waits longer than T_max
    beyond = float(np.mean(wait_us > bound))
    assert beyond > 1e-4, beyond
    assert wait_us.max() > bound
