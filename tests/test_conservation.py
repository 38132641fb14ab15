"""Conservation, for every scheme and traffic kind over many random valid scenarios.

Packets: offered + in_flight_at_warmup = delivered + dropped_nic + dropped_socket + in_flight
(with no warm-up, in_flight_at_warmup is 0 and this is offered = delivered + dropped + in flight).
CPU: the picoseconds of every category sum exactly to the measured time.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irqlab
from conftest import assert_conserved
from irqlab.scenario import schema

DIST = st.sampled_from(["deterministic", "exponential"])
COST = st.one_of(st.just(0), st.floats(1, 20_000))

scenarios = st.fixed_dictionaries(
    {
        "scheme": st.sampled_from(schema()["scheme"]["choices"]),
        "run.seed": st.integers(0, 2**64 - 1),
        "run.replication": st.integers(0, 50),
        "run.duration_ms": st.floats(0.05, 3),
        "run.warmup_ms": st.one_of(st.just(0), st.floats(0, 1)),
        "traffic.kind": st.sampled_from(["poisson", "cbr", "pareto-onoff"]),
        "traffic.rate_pps": st.floats(1_000, 1_000_000),
        "traffic.sizes": st.sampled_from(["fixed", "salah2007", "imix", "64:1, 1518:1"]),
        "nic.ring_descriptors": st.integers(1, 256),
        "nic.itr_us": st.one_of(st.just(0), st.floats(0, 100)),
        "nic.rx_usecs": st.one_of(st.just(0), st.floats(0, 100)),
        "nic.rx_frames": st.integers(0, 16),
        "nic.cause_mode": st.sampled_from(["latched", "armed"]),
        "platform.irq_ns": COST,
        "platform.irq_dist": DIST,
        "platform.proto_ns": st.floats(0, 20_000),
        "platform.proto_dist": DIST,
        "platform.poll_ns": COST,
        "platform.softirq_ns": COST,
        "platform.unmask_ns": COST,
        "platform.mask_ns": COST,
        "platform.ctx_switch_ns": COST,
        "platform.poll_timer_ns": COST,
        "platform.poll_timer_dist": DIST,
        "platform.proto_ns_per_byte": st.one_of(st.just(0), st.floats(0, 5)),
        "driver.first_packet": st.sampled_from(["softirq", "isr"]),
        "poll.period_us": st.floats(0.5, 100),
        "poll.quota": st.integers(1, 8),
        "hybrid.switch_pps": st.floats(0, 1_000_000),
        "hybrid.window_us": st.floats(5, 500),
        "hybrid.hysteresis": st.floats(0, 0.5),
        # "python" needs a policy object: tests/test_policy_python.py
        "driver.moderation": st.sampled_from(
            [m for m in schema()["driver.moderation"]["choices"] if m != "python"]
        ),
        "driver.dim_mode": st.sampled_from(["eqe", "cqe"]),
        "driver.legacy_elapsed": st.sampled_from(["itr", "measured"]),
        "kernel.napi_defer_hard_irqs": st.integers(0, 4),
        "kernel.gro_flush_timeout_ns": st.one_of(st.just(0), st.floats(0, 50_000)),
        "platform.wakeup_ns": st.one_of(st.just(0), st.floats(0, 10_000)),
        "platform.wakeup_after_us": st.floats(0, 100),
        "platform.irq_delivery_ns": st.one_of(st.just(0), st.floats(0, 5_000)),
        "platform.writeback_ns": st.one_of(st.just(0), st.floats(0, 5_000)),
        "platform.irq_indirect_ns": st.one_of(st.just(0), st.floats(0, 5_000)),
        "platform.cold_packets": st.integers(0, 8),
        "platform.cold_packet_ns": st.one_of(st.just(0), st.floats(0, 3_000)),
        "platform.napi_switch_ns": st.one_of(st.just(0), st.floats(0, 2_000)),
        "platform.ring_contention_ns": st.one_of(st.just(0), st.floats(0, 3_000)),
        "platform.skb_free_ns": st.one_of(st.just(0), st.floats(0, 2_000)),
        "kernel.skb_defer_max": st.integers(0, 64),
        "kernel.napi_weight": st.integers(1, 64),
        "kernel.netdev_budget": st.integers(1, 300),
        "kernel.max_softirq_restart": st.integers(1, 10),
    }
).filter(lambda p: not turns_the_scheme_into_another(p))


def turns_the_scheme_into_another(p: dict) -> bool:
    """The combinations that are errors (docs/scenario.md, "Settings a scheme ignores")."""
    return (
        (p["scheme"] == "coalesce-count" and p["nic.rx_frames"] == 0)
        or (p["scheme"].startswith("coalesce-") and p["driver.moderation"] == "dim")
        or (
            p["scheme"] == "ideal"
            and p["kernel.napi_defer_hard_irqs"] > 0
            and p["kernel.gro_flush_timeout_ns"] > 0
        )
    )


# random settings include many a scheme ignores (an ITR with ideal): warned, and conserved
@pytest.mark.filterwarnings("ignore::irqlab.ConfigWarning")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios)
def test_packets_and_cpu_time_are_conserved(params):
    assert_conserved(irqlab.run(params))


@pytest.mark.filterwarnings("ignore::irqlab.ConfigWarning")
@settings(max_examples=50, deadline=None)
@given(scenarios)
def test_without_warmup_offered_is_delivered_plus_dropped_plus_in_flight(params):
    params = {**params, "run.warmup_ms": 0}
    p = irqlab.run(params)["packets"]
    assert p["in_flight_at_warmup"] == 0
    assert p["offered"] == p["delivered"] + p["dropped_nic"] + p["dropped_socket"] + p["in_flight"]
