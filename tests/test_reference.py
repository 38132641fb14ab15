"""The fast engine held to the pure-Python reference simulator (``irqlab.reference``).

The reference re-implements the core's model decision by decision, plainly. Every comparison
here is of per-packet outcomes (arrival time, accepted or dropped, completion time) and of the
integer counters of the report (``packets.*``, ``cpu_ps.*``, ``counts.*``), to the picosecond;
the derived floats of the report (shares, rates, latency mean/min/max and percentiles) are
computed by the same formulas and compared exactly too.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import irqlab
from irqlab import reference as ref

INTEGER_SECTIONS = ("packets", "cpu_ps", "counts")


def assert_same(params: dict[str, Any]) -> dict[str, Any]:
    """Runs both simulators; asserts identical traces, integer counters and reports."""
    core_report, core_trace = irqlab.run_traced(params)
    ref_report, ref_trace = ref.simulate(params)
    n = len(core_trace["arrival_ps"])
    assert len(ref_trace["arrival_ps"]) == n, "different number of arrivals"
    for key in ("arrival_ps", "accepted", "done_ps"):
        for i, (a, b) in enumerate(zip(core_trace[key], ref_trace[key], strict=True)):
            assert a == b, f"packet {i}: {key} core={a} reference={b} ({params})"
    for section in INTEGER_SECTIONS:
        assert core_report[section] == ref_report[section], section
    assert core_report == ref_report
    return core_report


# ----- random numbers --------------------------------------------------------------------------

# First `next_u64` of each of the 9 streams of (seed, replication), printed by a stand-alone
# Rust probe (a /tmp cargo project depending on rand_xoshiro 0.8.1 and rand_core 0.10.1, as the
# core does) that builds the streams as rng.rs does: seed_from_u64, `replication` long_jump()s,
# then one jump() per stream.
RUST_FIRST_DRAWS = {
    (42, 0): [
        0xD0764D4F4476689F, 0xC0B6F4BE293B1AE5, 0xBD1A801454FF844B,
        0x6CE8C5B32E1DAA5C, 0xD54A865FEFC78706, 0xE66A1FDC27500618,
        0x0668031F2E19984C, 0x7766B4B9B112F49C, 0xBD78476A14C636B0,
    ],
    (1, 0): [
        0xCFC5D07F6F03C29B, 0xDAFD92F1ADFFC5B9, 0xCF14EC0CD23320F2,
        0x1957FEAEEE7B292B, 0xCD13E85C41F61EA6, 0x78F60C02D5BEE5B1,
        0xF389154D0E3CC306, 0xF33E40ACB1AB2645, 0x918DB9A7CE1A5BE3,
    ],
    (1, 1): [
        0xC6E0F3D2B09D8EEC, 0xF98D7777A4092978, 0xA167917141355648,
        0x054552FEBE750513, 0x8FB159FECF6EA578, 0xAE19C801E8F7FEAF,
        0x2446A500A0D7DA34, 0x5B10E6DD5BA3AAA1, 0x62AB1719A89691DF,
    ],
    (0, 2): [
        0x279BEEED67ADDF0E, 0x9A05ED1E9138EF09, 0xF8A1E74A5BF04469,
        0x618EC73A404E66FE, 0x4E22FC2D50D726DB, 0x71949253CCEC9064,
        0xE14465B28CA71791, 0x6C34160993242F0E, 0xA01109B266DC6B3B,
    ],
    (2**64 - 1, 3): [
        0x6E2C48CD39B6CFF3, 0x981BAEA284C6220C, 0xC58FFB295C543E7C,
        0x6DC5EC288EF1F201, 0x495F17782EA5B34C, 0x1441D71109C51B19,
        0x6D26F34D39C52321, 0xD8DF12A165A8AC11, 0xAD93840AD6D1360F,
    ],
}  # fmt: skip
# The first four outputs of stream 0 for seed 42, replication 0 (same probe).
RUST_SEED42_STREAM0 = [
    0xD0764D4F4476689F,
    0x519E4174576F3791,
    0xFBE07CFB0C24ED8C,
    0xB37D9F600CD835B8,
]


@pytest.mark.parametrize(("seed", "replication"), list(RUST_FIRST_DRAWS))
def test_streams_match_rand_xoshiro(seed, replication):
    draws = [s.next_u64() for s in ref.streams(seed, replication)]
    expected = RUST_FIRST_DRAWS[seed, replication]
    assert draws[: len(expected)] == expected  # the streams recorded; later ones are jumps on


def test_a_stream_continues_like_rand_xoshiro():
    s = ref.streams(42, 0)[0]
    assert [s.next_u64() for _ in range(4)] == RUST_SEED42_STREAM0


def test_splitmix64_reference_vector():
    # The first values of rand_xoshiro's own SplitMix64 test (splitmix64.rs, `reference`),
    # produced there with Vigna's splitmix64.c.
    sm = ref.SplitMix64(1477776061723855037)
    assert [sm.next_u64() for _ in range(5)] == [
        1985237415132408290,
        2979275885539914483,
        13511426838097143398,
        8488337342461049707,
        15141737807933549159,
    ]


# The exponential sampler (ziggurat, rng.rs), printed by a second /tmp probe that depends on
# irqlab-core by path and calls `rng::ziggurat()` and `rng::streams(..)[k].exp1()`: an FNV-1a
# style digest of the bits of the 2 x 257 table entries, the bits of the first six exp1() of
# stream 3, and the first three tail draws (beyond ZIG_R) of stream 0 of seed 1 (1-based index,
# bits).
RUST_ZIGGURAT_DIGEST = 0x426FAC3F9C39CCFE
RUST_EXP1_BITS = {
    (42, 0): [
        0x3FED9A2A2A2D75A2, 0x3FB975D31FC8BB31, 0x3FD8B46E49CEC973,
        0x3FD252F553C0E738, 0x3FDEF87E13EB99F5, 0x3FDF36D62DBC15DD,
    ],
    (7, 1): [
        0x3FE3021505D27044, 0x3FE569552AD8E70A, 0x3FC9552FD2C71268,
        0x3F8D6B93A6E6C35F, 0x40051258CFCE3D5B, 0x3FD2FFFCD061E93A,
    ],
}  # fmt: skip
RUST_TAIL_DRAWS = [
    (1140, 4620519223282353441),
    (2209, 4621228482086530825),
    (3316, 4621540976463256075),
]


def _bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def test_ziggurat_tables_match_the_core():
    h = 0xCBF29CE484222325
    for v in ref.ZIG_X + ref.ZIG_F:
        h = ((h ^ _bits(v)) * 0x100000001B3) & ref.MASK64
    assert h == RUST_ZIGGURAT_DIGEST


@pytest.mark.parametrize(("seed", "replication"), list(RUST_EXP1_BITS))
def test_exp1_matches_the_core(seed, replication):
    s = ref.streams(seed, replication)[3]
    assert [_bits(s.exp1()) for _ in range(6)] == RUST_EXP1_BITS[seed, replication]


def test_exp1_tail_matches_the_core():
    s = ref.streams(1, 0)[0]
    tail = []
    for n in range(1, 3317):
        x = s.exp1()
        if x > ref.ZIG_R:
            tail.append((n, _bits(x)))
    assert tail == RUST_TAIL_DRAWS


@pytest.mark.parametrize(("seed", "replication"), [(1, 0), (42, 2), (2**64 - 1, 1), (0, 0)])
def test_poisson_arrivals_are_the_arrivals_stream(seed, replication):
    """Indirect RNG check: the core's arrival times are the reference's stream 0, drawn as
    ``t += round_ps(exp1() * 1e12 / rate)``."""
    rate = 250_000.0
    _, trace = irqlab.run_traced(
        {
            "scheme": "ideal",
            "traffic.rate_pps": rate,
            "run.warmup_ms": 0.0,
            "run.duration_ms": 2.0,
            "run.seed": seed,
            "run.replication": replication,
        }
    )
    stream = ref.streams(seed, replication)[ref.ARRIVALS]
    t, expected = 0, []
    for _ in trace["arrival_ps"]:
        t += ref.round_ps(stream.exponential(1e12 / rate))
        expected.append(t)
    assert trace["arrival_ps"] == expected
    assert len(expected) > 300


# ----- unit conversion -------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e-9, max_value=3.6e6, allow_nan=False, allow_infinity=False))
def test_durations_round_like_rust(duration_ms):
    """``SimDuration::from_units`` (f64 ``round``: ties away from zero) as the core does it,
    observed through ``cpu_ps.measured`` of a run with almost no events."""
    expected = ref.from_units(duration_ms, ref.PS_PER_MS)
    params = {
        "scheme": "ideal",
        "traffic.rate_pps": 1e-3,
        "run.warmup_ms": 0.0,
        "run.duration_ms": duration_ms,
    }
    if expected == 0:
        with pytest.raises(irqlab.ConfigError, match="at least one picosecond"):
            irqlab.run(params)
    else:
        assert irqlab.run(params)["cpu_ps"]["measured"] == expected


def test_rounding_is_not_floor_of_x_plus_half():
    # 4.999999999999999e-10 ms is 0.49999999999999994 ps: f64::round gives 0 (so the core
    # rejects the duration), while floor(x + 0.5) would give 1 because x + 0.5 rounds to 1.0.
    x = 4.999999999999999e-10
    assert x * 1e9 == 0.49999999999999994
    assert math.floor(x * 1e9 + 0.5) == 1
    assert ref.from_units(x, ref.PS_PER_MS) == 0
    with pytest.raises(irqlab.ConfigError, match="at least one picosecond"):
        irqlab.resolve({"run.duration_ms": x})
    assert ref.from_units(5e-10, ref.PS_PER_MS) == 1
    assert ref.from_units(2.5e-9, ref.PS_PER_MS) == 3  # 2.5 ps: the tie goes away from zero


# ----- the main property -----------------------------------------------------------------------

MAX_PACKETS = 1200


def _cost(max_ns: float):
    return st.one_of(
        st.just(0.0),
        st.integers(0, int(max_ns)),
        st.floats(0.0, max_ns, allow_nan=False, allow_infinity=False),
    )


DIST = st.sampled_from(["deterministic", "exponential"])


@st.composite
def scenarios(draw) -> dict[str, Any]:
    """Small valid scenarios that reach every corner of the model: drops, moderation, masking,
    repoll, budget and time squeeze, softirq restarts and ksoftirqd."""
    p: dict[str, Any] = {
        "scheme": draw(st.sampled_from(ref.ORACLE_SCHEMES)),
        "run.seed": draw(st.integers(0, 2**64 - 1)),
        "run.replication": draw(st.integers(0, 3)),
        "traffic.kind": draw(st.sampled_from(["poisson", "cbr"])),
        "traffic.size_bytes": draw(st.integers(1, 1500)),
    }
    rate = draw(st.floats(1e3, 1.5e6))
    p["traffic.rate_pps"] = rate
    # At most MAX_PACKETS arrivals over warm-up plus measured time.
    span_ms = min(draw(st.floats(0.01, 30.0)), MAX_PACKETS / rate * 1e3)
    warm = draw(st.sampled_from([0.0, 0.0, 0.2, 0.5]))
    p["run.warmup_ms"] = span_ms * warm
    p["run.duration_ms"] = span_ms * (1 - warm)
    p["nic.ring_descriptors"] = draw(st.one_of(st.integers(1, 64), st.just(1024)))
    p["nic.itr_us"] = draw(st.one_of(st.just(0.0), st.floats(0.0, 60.0)))
    p["nic.rx_usecs"] = draw(st.one_of(st.just(0.0), st.floats(0.0, 60.0)))
    # count coalescing counts at least one frame (0 would make it another scheme: an error)
    low = 1 if p["scheme"] == "coalesce-count" else 0
    p["nic.rx_frames"] = draw(st.one_of(st.just(low), st.integers(1, 8)))
    p["nic.cause_mode"] = draw(st.sampled_from(["latched", "armed"]))
    for name, max_ns in [
        ("irq", 6000.0),
        ("proto", 12000.0),
        ("poll", 2000.0),
        ("softirq", 2000.0),
        ("mask", 1000.0),
        ("unmask", 1000.0),
        ("ctx_switch", 6000.0),
    ]:
        p[f"platform.{name}_ns"] = draw(_cost(max_ns))
        p[f"platform.{name}_dist"] = draw(DIST)
    p["platform.proto_ns_per_byte"] = draw(st.one_of(st.just(0.0), st.floats(0.0, 3.0)))
    hz = draw(st.sampled_from([100, 250, 300, 1000, 1000]))
    p["kernel.hz"] = hz
    min_budget_us = 2_000_000 // hz
    p["kernel.netdev_budget_usecs"] = draw(
        st.one_of(st.just(0), st.integers(min_budget_us, min_budget_us + 3000))
    )
    p["kernel.napi_weight"] = draw(st.one_of(st.integers(1, 8), st.just(64)))
    p["kernel.netdev_budget"] = draw(st.one_of(st.integers(1, 24), st.just(300)))
    p["kernel.max_softirq_restart"] = draw(st.one_of(st.integers(1, 4), st.just(10)))
    p["kernel.max_softirq_time_ms"] = draw(st.sampled_from([0.001, 0.5, 1.0, 2.0, 5.0]))
    return p


# the random settings include some the scheme ignores (an ITR with ideal): warned, not errors
@pytest.mark.filterwarnings("ignore::irqlab.ConfigWarning")
@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(scenarios())
def test_engine_equals_reference(params):
    """For random small valid scenarios, the core and the reference give the same per-packet
    outcomes (arrival, accepted, completion, in ps) and the same integer counters."""
    report = assert_same(params)
    # Which regimes were reached: pytest -W default --hypothesis-show-statistics
    for regime in ("irqs", "time_squeeze", "ksoftirqd_wakeups"):
        event(f"{regime} > 0: {report['counts'][regime] > 0}")
    p = report["packets"]
    event(f"drops: {p['dropped_nic'] > 0}")
    assert p["offered"] + p["in_flight_at_warmup"] == (
        p["delivered"] + p["dropped_nic"] + p["dropped_socket"] + p["in_flight"]
    )
    cpu = report["cpu_ps"]
    assert (
        cpu["irq"] + cpu["softirq"] + cpu["ksoftirqd"] + cpu["app"] + cpu["idle"]
        == (cpu["measured"])
    )


# ----- hand-picked stories ---------------------------------------------------------------------

SALAH = {
    "platform.irq_ns": 3730,
    "platform.irq_dist": "exponential",
    "platform.proto_ns": 5340,
    "platform.proto_dist": "exponential",
}


def test_story_receive_livelock_under_normal_interruption():
    """``irq`` far beyond the cliff: ISRs (also raised by drops) starve protocol processing."""
    r = assert_same(
        {
            **SALAH,
            "scheme": "irq",
            "traffic.rate_pps": 400_000,
            "nic.ring_descriptors": 32,
            "run.warmup_ms": 1.0,
            "run.duration_ms": 4.0,
        }
    )
    assert r["packets"]["dropped_nic"] > r["packets"]["offered"] // 2
    assert r["cpu_ps"]["irq"] > r["cpu_ps"]["softirq"]
    assert r["cpu_ps"]["idle"] == 0


def test_story_overload_hands_off_to_ksoftirqd():
    """A budget below the weight, few restarts: every net_rx_action is squeezed, the softirq
    keeps being re-raised, and ksoftirqd is woken (after a random context switch). As the ring
    never drains, the NAPI never completes: the vector stays masked and ksoftirqd keeps it."""
    r = assert_same(
        {
            **SALAH,
            "scheme": "napi",
            "traffic.rate_pps": 600_000,
            "nic.ring_descriptors": 64,
            "kernel.napi_weight": 3,
            "kernel.netdev_budget": 2,
            "kernel.max_softirq_restart": 2,
            "platform.ctx_switch_ns": 2000,
            "platform.ctx_switch_dist": "exponential",
            "platform.poll_ns": 150,
            "platform.softirq_ns": 250,
            "platform.softirq_dist": "exponential",
            "run.warmup_ms": 0.0,
            "run.duration_ms": 3.0,
        }
    )
    c = r["counts"]
    assert c["ksoftirqd_wakeups"] == 1
    assert c["irqs"] == 1
    assert c["time_squeeze"] >= c["polls"] - 1 > 100
    assert r["cpu_ps"]["ksoftirqd"] > r["cpu_ps"]["measured"] * 0.9
    assert r["packets"]["dropped_nic"] > 0


# 0.5 ms on purpose: both models round it up to the jiffy it acts as, and the core says so
@pytest.mark.filterwarnings(r"ignore:kernel\.max_softirq_time_ms = 0\.5. acts as 1\.0 ms")
def test_story_time_limit_squeeze_in_ksoftirqd():
    """A huge budget and a weight of 512 packets (about 2.7 ms of work): net_rx_action is cut
    by its 2-jiffy time limit instead, and the restart window (1 jiffy) has run out, so the work
    moves to ksoftirqd (zero-cost context switch)."""
    r = assert_same(
        {
            **SALAH,
            "scheme": "napi",
            "traffic.rate_pps": 300_000,
            "kernel.napi_weight": 512,
            "kernel.netdev_budget": 1_000_000,
            "kernel.max_softirq_time_ms": 0.5,
            "run.warmup_ms": 0.0,
            "run.duration_ms": 8.0,
        }
    )
    assert r["counts"]["time_squeeze"] > 0
    assert r["counts"]["ksoftirqd_wakeups"] > 0
    assert r["cpu_ps"]["ksoftirqd"] > 0


def test_story_itr_throttles_the_irq_rate():
    """CBR every 5 us with a 50 us ITR: at most one IRQ per 50 us, the rest wait for it."""
    for scheme in ("irq", "napi"):
        r = assert_same(
            {
                **SALAH,
                "scheme": scheme,
                "traffic.kind": "cbr",
                "traffic.rate_pps": 200_000,
                "platform.proto_ns": 1000,
                "platform.irq_ns": 500,
                "nic.itr_us": 50,
                "run.warmup_ms": 0.1,
                "run.duration_ms": 5.0,
            }
        )
        assert 0 < r["counts"]["irqs"] <= 5.0e3 / 50 + 1
        assert r["packets"]["delivered"] > 900


def test_story_coalescing_by_frames_and_timeout_armed():
    r = assert_same(
        {
            **SALAH,
            "scheme": "napi",
            "nic.rx_frames": 4,
            "nic.rx_usecs": 30,
            "nic.cause_mode": "armed",
            "platform.mask_ns": 400,
            "platform.unmask_ns": 700,
            "platform.unmask_dist": "exponential",
            "traffic.rate_pps": 80_000,
            "run.warmup_ms": 0.5,
            "run.duration_ms": 10.0,
        }
    )
    assert 0 < r["counts"]["irqs"] < r["packets"]["offered"] / 2


def test_story_zero_costs_make_zero_length_jobs():
    """All costs zero: every job takes no time, so each packet completes at its arrival and the
    CPU is idle; IRQs and polls still happen and are counted."""
    for scheme in ("ideal", "irq", "napi"):
        params = {
            "scheme": scheme,
            "platform.irq_ns": 0,
            "platform.proto_ns": 0,
            "platform.ctx_switch_ns": 0,
            "traffic.rate_pps": 500_000,
            "nic.ring_descriptors": 1,
            "kernel.napi_weight": 1,
            "kernel.netdev_budget": 1,
            "run.warmup_ms": 0.0,
            "run.duration_ms": 1.0,
        }
        r = assert_same(params)
        _, trace = ref.simulate(params)
        assert trace["done_ps"] == trace["arrival_ps"]
        assert all(trace["accepted"])
        assert r["cpu_ps"]["idle"] == r["cpu_ps"]["measured"]
        # Weight 1: every poll that takes a packet uses its whole weight, so it is repolled.
        assert r["counts"]["polls"] >= r["packets"]["delivered"] > 400
        if scheme != "ideal":
            assert r["counts"]["irqs"] == r["packets"]["offered"]


def test_story_zero_mean_exponential_costs_still_draw():
    """An exponential cost of mean zero takes no time but, where the core always makes a job
    (ISR, packet), still consumes a draw; mixed with non-zero costs the streams stay aligned."""
    assert_same(
        {
            "scheme": "napi",
            "platform.irq_ns": 0,
            "platform.irq_dist": "exponential",
            "platform.proto_ns": 2000,
            "platform.proto_dist": "exponential",
            "platform.mask_ns": 0,
            "platform.mask_dist": "exponential",
            "platform.unmask_ns": 300,
            "platform.unmask_dist": "exponential",
            "traffic.rate_pps": 300_000,
            "run.duration_ms": 2.0,
            "run.warmup_ms": 0.3,
        }
    )


def test_story_per_byte_cost_and_tiny_ring():
    assert_same(
        {
            **SALAH,
            "scheme": "ideal",
            "traffic.size_bytes": 1500,
            "platform.proto_ns_per_byte": 1.337,
            "nic.ring_descriptors": 1,
            "traffic.rate_pps": 150_000,
            "run.duration_ms": 3.0,
            "run.warmup_ms": 1.0,
        }
    )


@pytest.mark.parametrize("kind", ["poisson", "cbr"])
def test_story_lowest_allowed_rate(kind):
    """At the lowest rate the schema allows (1e-3 pps, a mean gap of 1000 s) nothing arrives in
    a short run but the CBR packet at time zero; rates below it, whose gaps would overflow the
    picosecond clock, are rejected before the run."""
    r = assert_same({"traffic.kind": kind, "traffic.rate_pps": 1e-3, "run.warmup_ms": 0.0})
    assert r["packets"]["offered"] == (1 if kind == "cbr" else 0)
    with pytest.raises(irqlab.ConfigError, match=r"traffic\.rate_pps = 1e-07: must be"):
        irqlab.run({"traffic.kind": kind, "traffic.rate_pps": 1e-7})


def test_reference_accepts_nested_scenarios_like_the_core():
    scenario = {"scheme": "irq", "traffic": {"rate_pps": 50_000}, "run": {"duration_ms": 2.0}}
    assert ref.simulate(scenario) == irqlab.run_traced(scenario)


@pytest.mark.parametrize("zipf_s", [0.0, 1.1])
def test_reference_draws_each_packets_flow_as_the_core(zipf_s):
    scenario = {
        "scheme": "napi",
        "traffic": {"rate_pps": 200_000, "flows": 64, "flow_zipf_s": zipf_s},
        "run": {"duration_ms": 2.0},
    }
    report, trace = ref.simulate(scenario)
    assert (report, trace) == irqlab.run_traced(scenario)
    assert len(set(trace["flow"])) > 16
