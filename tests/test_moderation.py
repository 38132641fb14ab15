"""Moderation policies, software coalescing and the idle wake-up, as the engine applies them.

The policies' own rules are tested as tables in Rust (crates/irqlab-core/src/moderation/);
here: the engine calls them, programs the NIC with the §0.5 semantics, and each mechanism has
its defining effect on a run.
"""

from __future__ import annotations

import pytest

import irqlab
import irqlab.policy
from irqlab.scenario import schema

EMMERICH = {"platform.preset": "emmerich2015", "scheme": "napi", "traffic.kind": "cbr"}


def run(**kw) -> dict:
    params = {**EMMERICH, "run.duration_ms": 40, "run.warmup_ms": 40}
    params.update({k.replace("__", "."): v for k, v in kw.items()})
    return irqlab.run(params)


def test_moderation_names_and_default():
    # Every policy the docs describe is a choice, in the documented order; a policy added to
    # the core's registry joins the list without this test changing (docs/design.md).
    choices = schema()["driver.moderation"]["choices"]
    documented = ["off", "static", "ixgbe-legacy", "linear", "ixgbe", "i40e", "dim", "python"]
    assert [c for c in choices if c in documented] == documented
    assert len(set(choices)) == len(choices)
    assert irqlab.resolve({})["driver.moderation"] == "static"


@pytest.mark.parametrize("rate", [20_000, 8_000])
def test_static_rate_caps_the_irq_rate(rate):
    r = run(driver__moderation="static", driver__itr_rate=rate, traffic__rate_pps=1e6)
    assert r["irq_per_s"] <= rate * 1.001
    assert r["irq_per_s"] > 0.9 * rate
    same = run(driver__moderation="static", nic__itr_us=1e6 / rate, traffic__rate_pps=1e6)
    assert same["irq_per_s"] == r["irq_per_s"], "itr_rate is nic.itr_us in other units"


def test_off_ignores_a_configured_itr():
    ignored = 'nic.itr_us = 100.0: has no effect: driver.moderation = "off" runs without an ITR'
    with pytest.warns(irqlab.ConfigWarning, match=ignored):
        off = run(driver__moderation="off", nic__itr_us=100, traffic__rate_pps=3e5)
    assert off["irq_per_s"] > 2.5e5
    assert off["counts"]["moderation_writes"] == 0


@pytest.mark.parametrize("policy", ["ixgbe-legacy", "linear", "ixgbe", "i40e", "dim"])
def test_adaptive_policies_reprogram_the_nic_and_lose_nothing(policy):
    low = run(driver__moderation=policy, traffic__rate_pps=2e4)
    high = run(driver__moderation=policy, traffic__rate_pps=1e6)
    assert low["loss_ratio"] == high["loss_ratio"] == 0
    # the driver writes new settings (counted from time zero: DIM may have parked by 40 ms)
    cold = run(driver__moderation=policy, traffic__rate_pps=1e6, run__warmup_ms=0)
    assert cold["counts"]["moderation_writes"] > 0, policy
    # at low load every packet still gets its interrupt; at high load fewer than with ITR off
    assert low["irq_per_s"] == pytest.approx(2e4, rel=0.01)
    off = run(driver__moderation="off", traffic__rate_pps=1e6)
    assert high["irq_per_s"] < 0.5 * off["irq_per_s"], policy
    assert high["cpu"]["busy"] < off["cpu"]["busy"] - 0.2, policy


def test_linear_rate_follows_the_formula_between_its_ends():
    """r = r_max − ρ (r_max − r_min)/ρ_max: at 1 Mpps, 100000 − 1e6 · 92000 / 2.1e6 ≈ 56190 /s;
    CBR keeps every interrupt's session full, so the IRQ rate is close to r."""
    r = run(driver__moderation="linear", traffic__rate_pps=1e6)
    assert r["irq_per_s"] == pytest.approx(100_000 - 1e6 * 92_000 / 2.1e6, rel=0.15)
    slower = run(driver__moderation="linear", driver__linear_rate_max=50_000, traffic__rate_pps=1e6)
    assert slower["irq_per_s"] < 0.7 * r["irq_per_s"]


def test_legacy_elapsed_assumption_changes_its_decisions():
    """The driver assumes the time since the last update is the programmed interval; measuring
    it (the fix) leads to other decisions under the same load (the Rust tables show the
    overestimate after an idle gap itself)."""
    for rate in (2e5, 1e6):
        quirk = run(driver__moderation="ixgbe-legacy", traffic__rate_pps=rate)
        fixed = run(
            driver__moderation="ixgbe-legacy",
            driver__legacy_elapsed="measured",
            traffic__rate_pps=rate,
        )
        assert quirk["irq_per_s"] != fixed["irq_per_s"], rate


def test_dim_starts_from_profile_1_and_moves():
    """DIM programs its default profile (8 µs or 256 packets) at start; under a constant load
    its hill climb moves to fewer interrupts (same throughput, fewer events is better)."""
    # the first 0.4 ms, before DIM's first window of 64 interrupts closes: profile 1 fires
    # 8 µs after the first packet, at most 125 k interrupts/s
    start = run(driver__moderation="dim", traffic__rate_pps=1e6, run__warmup_ms=0)
    first = run(
        driver__moderation="dim", traffic__rate_pps=1e6, run__warmup_ms=0, run__duration_ms=0.4
    )
    assert 0.8 * 1e6 / 8 < first["irq_per_s"] <= 1e6 / 8
    assert first["counts"]["moderation_writes"] == 0
    # then it moves: new profiles written, far fewer interrupts after the warm-up
    assert start["counts"]["moderation_writes"] > 0
    r = run(driver__moderation="dim", traffic__rate_pps=1e6)
    assert r["irq_per_s"] < 0.1 * first["irq_per_s"]
    assert r["throughput_pps"] == pytest.approx(1e6, rel=0.01)
    cqe = run(driver__moderation="dim", driver__dim_mode="cqe", traffic__rate_pps=1e6)
    assert cqe["latency_us"]["mean"] != r["latency_us"]["mean"]


def test_software_coalescing_polls_n_times_from_the_timer_then_reenables():
    """Poisson at 2 kpps: gaps of 500 µs on average, far longer than N × T = 40 µs, so nearly
    every packet gets its IRQ, a poll, then N timer polls before the vector is re-enabled."""
    base = {
        "traffic__kind": "poisson",
        "traffic__rate_pps": 2000,
        "driver__moderation": "off",
        "kernel__napi_defer_hard_irqs": 4,
        "kernel__gro_flush_timeout_ns": 10_000,
        "run__duration_ms": 500,
    }
    r = run(**base, nic__cause_mode="armed")
    irqs, ticks = r["counts"]["irqs"], r["counts"]["timer_ticks"]
    assert irqs > 800
    # N timer polls per interrupt, more when a packet arrives during them (8% of gaps here)
    assert 4 * irqs - 4 <= ticks <= 4.5 * irqs
    assert r["counts"]["polls"] == pytest.approx(irqs + ticks, abs=2)
    # latched cause (Intel): packets polled while masked leave the cause set: spurious IRQs
    assert run(**base)["counts"]["irqs"] > irqs
    # a steady stream keeps the NAPI on the timer: no IRQs at all
    steady = run(
        driver__moderation="off",
        traffic__rate_pps=2e5,
        kernel__napi_defer_hard_irqs=10,
        kernel__gro_flush_timeout_ns=20_000,
    )
    assert steady["counts"]["irqs"] == 0
    # one timer poll per T plus the poll's own time (its interrupt, the softirq, 4 packets)
    assert 40e-3 / 25e-6 < steady["counts"]["timer_ticks"] < 40e-3 / 20e-6


def test_gro_flush_timeout_alone_changes_nothing():
    """No GRO is modelled, so the timeout without napi_defer_hard_irqs has no effect (nor does
    the counter without a timeout, as in the kernel)."""

    def outcome(**kw) -> dict:
        r = run(driver__moderation="off", traffic__rate_pps=3e5, **kw)
        r.pop("scenario")
        return r

    plain = outcome()
    # and the scenario says so
    with pytest.warns(irqlab.ConfigWarning, match="kernel.gro_flush_timeout_ns = 20000.0: has no"):
        assert outcome(kernel__gro_flush_timeout_ns=20_000) == plain
    with pytest.warns(irqlab.ConfigWarning, match="kernel.napi_defer_hard_irqs = 10: has no"):
        assert outcome(kernel__napi_defer_hard_irqs=10) == plain


def test_wakeup_cost_is_paid_after_long_idle_periods_only():
    """CBR at 20 kpps: 50 µs gaps, longer than the 20 µs threshold: each packet's latency grows
    by the wake-up cost; at 200 kpps (5 µs gaps) the core never sleeps that long."""
    for rate, paid in ((2e4, True), (2e5, False)):
        awake = run(traffic__rate_pps=rate, driver__moderation="off", platform__wakeup_ns=0)
        asleep = run(traffic__rate_pps=rate, driver__moderation="off")
        extra = asleep["latency_us"]["mean"] - awake["latency_us"]["mean"]
        if paid:
            assert extra == pytest.approx(4.0, abs=0.05)
            assert asleep["cpu"]["busy"] > awake["cpu"]["busy"]
        else:
            assert extra == pytest.approx(0.0, abs=1e-9)


def test_emmerich_preset_calibration():
    """The three numbers the preset is calibrated to (docs/moderation.md)."""
    saturated = run(driver__moderation="off", traffic__rate_pps=2.5e6)
    assert saturated["throughput_pps"] == pytest.approx(2.1e6, rel=0.005)
    assert saturated["latency_us"]["mean"] == pytest.approx(2300, rel=0.02)
    peak = max(
        (run(driver__moderation="off", traffic__rate_pps=x)["irq_per_s"], x)
        for x in (3e5, 4e5, 5e5, 6e5, 7e5, 8e5)
    )
    assert peak[1] in (5e5, 6e5), peak


@pytest.mark.parametrize("policy", schema()["driver.moderation"]["choices"])
def test_every_policy_repeats_exactly_and_conserves(policy):
    params = {
        **EMMERICH,
        "driver.moderation": policy,
        "traffic.kind": "poisson",
        "traffic.rate_pps": 8e5,
        "kernel.napi_defer_hard_irqs": 2,
        "kernel.gro_flush_timeout_ns": 5000,
        "run.duration_ms": 10,
        "run.seed": 4,
    }
    # "python": a policy written in Python, here the built-in linear's twin
    kw = {"policy": irqlab.policy.Linear} if policy == "python" else {}
    a, b = irqlab.run(params, **kw), irqlab.run(params, **kw)
    assert a == b
    p = a["packets"]
    assert (
        p["offered"] + p["in_flight_at_warmup"]
        == p["delivered"] + p["dropped_nic"] + p["dropped_socket"] + p["in_flight"]
    )
