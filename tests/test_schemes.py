"""Each interrupt-handling scheme's defining behaviour, on the platform of Salah et al. (2007).

``platform.preset = "salah2007"``: 1/r = 3.73 us (exponential), 1/mu = 5.25 us (exponential)
+ 64 B / 748 MB/s = 5.336 us, mask 0.5 us, polling-timer interrupt 1.59 us (exponential),
B = 1024. Cliff point (Salah Eq. 13) ~127 kpps, mu ~187.4 kpps. Every run has a fixed seed;
each tolerance below is noted with the value it was measured at.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import irqlab
from irqlab import _irqlab
from irqlab.errors import ConfigError
from irqlab.scenario import load_scenario, schema

SALAH2007 = {"platform.preset": "salah2007"}
SCHEMES = schema()["scheme"]["choices"]
SEED = 1

IRQ_US = 3.73
MASK_US = 0.5
PROTO_FIXED_US = 5.25
US_PER_BYTE = 1 / 748  # 748 MB/s copy
PROTO_US = PROTO_FIXED_US + 64 * US_PER_BYTE  # 5.336 us at 64 B
MU = 1e6 / PROTO_US  # 187.4 kpps
SALAH2007_MEAN_FRAME = 556.95  # bytes, the mean of the built-in "salah2007" size table


def eq13(irq_ns: float, proto_ns: float) -> float:
    """Salah Eq. 13, the cliff point of normal interruption: r/2 (sqrt(1 + 4 mu/r) - 1)."""
    r, mu = 1e9 / irq_ns, 1e9 / proto_ns
    return r / 2 * (math.sqrt(1 + 4 * mu / r) - 1)


CLIFF = eq13(IRQ_US * 1e3, PROTO_US * 1e3)  # 127.1 kpps


def scenario(
    scheme: str,
    rate_pps: float,
    keys: dict | None = None,
    *,
    duration_ms: float = 500,
    warmup_ms: float = 20,
    seed: int = SEED,
    replication: int = 0,
) -> dict:
    return {
        **SALAH2007,
        "scheme": scheme,
        "traffic.rate_pps": rate_pps,
        "run.seed": seed,
        "run.replication": replication,
        "run.warmup_ms": warmup_ms,
        "run.duration_ms": duration_ms,
        **(keys or {}),
    }


def run(scheme: str, rate_pps: float, keys: dict | None = None, **kw) -> dict:
    """One run on the Salah platform; ``keys`` are extra dotted keys, ``kw`` go to scenario()."""
    return irqlab.run(scenario(scheme, rate_pps, keys, **kw))


def runs(scheme: str, rate_pps: float, n: int, keys: dict | None = None, **kw) -> list[dict]:
    """``n`` independent replications (same seed, replications 0 … n-1)."""
    return [run(scheme, rate_pps, keys, replication=i, **kw) for i in range(n)]


def mean(reports: list[dict], metric) -> float:
    return float(np.mean([metric(r) for r in reports]))


def without_echo(report: dict) -> dict:
    """The report minus what names the scenario rather than measures it."""
    return {k: v for k, v in report.items() if k not in ("scheme", "scenario")}


def ticks_expected(report: dict) -> float:
    """Polling-timer ticks in the measured window: one per ``poll.period_us``."""
    return report["measured_s"] / (report["scenario"]["poll.period_us"] * 1e-6)


def irqs_per_idle_arrival(report: dict) -> float:
    """IRQs over the packets that found the CPU idle. By PASTA, a Poisson arrival finds the CPU
    idle with probability ``cpu.idle``: a scheme that masks interrupts for the whole busy
    period takes exactly one IRQ per such packet, so this is 1."""
    return report["counts"]["irqs"] / (report["packets"]["delivered"] * report["cpu"]["idle"])


def arrivals_per_ms(kind: str, replication: int, duration_ms: int = 2000) -> np.ndarray:
    """Packets offered in each 1-ms bucket of a run at 100 kpps of salah2007-sized frames."""
    params = load_scenario(
        scenario(
            "ideal",
            100e3,
            {"traffic.kind": kind, "traffic.sizes": "salah2007"},
            duration_ms=duration_ms,
            warmup_ms=0,
            replication=replication,
        )
    )
    report, series = _irqlab.run_series(params, duration_ms)
    offered = np.asarray(series["offered"], dtype=float)
    assert series["bucket_ps"] == 10**9
    assert offered.sum() == report["packets"]["offered"]
    return offered


def dispersion(counts: np.ndarray) -> float:
    """Index of dispersion (variance / mean) of counts: 1 for a Poisson process."""
    return float(counts.var(ddof=1) / counts.mean())


# --- 1. tau = 1 and T = 0 are normal interruption ------------------------------------------


@pytest.mark.parametrize("rate", [50e3, 300e3], ids=["below-cliff", "above-cliff"])
@pytest.mark.parametrize(
    ("scheme", "key", "value"),
    [("coalesce-count", "nic.rx_frames", 1), ("coalesce-time", "nic.rx_usecs", 0)],
)
def test_unit_coalescing_is_irq(scheme, key, value, rate):
    irq = run("irq", rate)
    coalesced = run(scheme, rate, {key: value})
    assert without_echo(coalesced) == without_echo(irq)
    # the scenario echo differs only where it was told to
    echo, irq_echo = coalesced["scenario"], irq["scenario"]
    assert {k for k in echo if echo[k] != irq_echo[k]} <= {"scheme", key}
    assert echo[key] == value


# --- 2. coalescing ---------------------------------------------------------------------------


def test_coalesce_count_interrupts_once_per_tau_packets():
    rate = 20e3
    irq, cc = run("irq", rate), run("coalesce-count", rate)
    assert cc["scenario"]["nic.rx_frames"] == 8
    # an IRQ per 8 arrivals: measured 0.990 x rate/8
    assert cc["irq_per_s"] == pytest.approx(cc["offered_pps"] / 8, rel=0.05)
    assert cc["packets_per_poll"] > 7  # measured 8.09
    # a packet waits for the rest of its batch of 8, ~3.5 interarrivals of 50 us:
    # measured 164 us against irq's 10.7 us
    assert cc["latency_us"]["mean"] > 100
    assert cc["latency_us"]["mean"] > 10 * irq["latency_us"]["mean"]
    assert cc["throughput_pps"] == pytest.approx(rate, rel=0.02)


def test_coalesce_time_interrupts_at_most_T_after_a_batch_opens():
    rate, t_us = 5e3, 50
    irq, ct = run("irq", rate, duration_ms=2000), run("coalesce-time", rate, duration_ms=2000)
    assert ct["scenario"]["nic.rx_usecs"] == t_us
    lat = ct["latency_us"]["mean"]
    # measured 53.2 us against irq's 9.4 us
    assert irq["latency_us"]["mean"] < lat <= t_us + 20
    # every IRQ ends a batch whose first packet waited the full T: measured bound 39.2 us
    batch_openers = ct["counts"]["irqs"] / ct["packets"]["delivered"]
    assert lat > t_us * batch_openers
    assert ct["irq_per_s"] < 0.9 * irq["irq_per_s"]  # measured 3940 vs 4940


# --- 3. pure polling ---------------------------------------------------------------------------


@pytest.mark.parametrize("rate", [1e3, 1e4, 1e5, 2e5, 5e5, 1e6, 2e6])
def test_poll_takes_no_packet_interrupts_and_keeps_cpu_free(rate):
    r = run("poll", rate, duration_ms=200)
    quota = r["scenario"]["poll.quota"]
    assert r["counts"]["irqs"] == 0
    assert r["irq_per_s"] == 0
    # CPU availability stays >= 1 - (Q mu^-1 + T_PollOH)/T_poll: measured 0.17 at overload
    assert r["cpu"]["idle"] > 0.05
    assert abs(r["counts"]["timer_ticks"] - ticks_expected(r)) <= 1
    # at most Q per poll; a poll straddling the start of the measurement window can add up to
    # Q - 1 packets to the window without its start being counted
    c = r["counts"]
    assert c["polled_packets"] <= quota * c["polls"] + quota - 1


def test_poll_without_warmup_takes_at_most_quota_per_poll():
    r = run("poll", 400e3, {"poll.quota": 4}, warmup_ms=0)
    assert r["packets_per_poll"] <= 4
    assert r["packets_per_poll"] > 3.99  # the quota is used at overload


DETERMINISTIC = {
    "platform.irq_dist": "deterministic",
    "platform.proto_dist": "deterministic",
    "platform.poll_timer_dist": "deterministic",
}


@pytest.mark.parametrize(("quota", "period_us"), [(3, 20), (4, 30)])
def test_poll_throughput_at_overload_is_quota_over_period(quota, period_us):
    keys = {"poll.quota": quota, "poll.period_us": period_us}
    bound = quota / (period_us * 1e-6)  # 150 kpps, 133.3 kpps
    exp = run("poll", 400e3, keys)
    # exponential costs lose the ticks that fall inside a long poll: measured 140.5 k, 131.5 k
    assert exp["throughput_pps"] <= bound
    assert exp["throughput_pps"] > 0.9 * bound
    # deterministic costs: every poll (Q x 5.336 + 1.59 us) ends within its period
    det = run("poll", 400e3, {**keys, **DETERMINISTIC})
    assert det["throughput_pps"] == pytest.approx(bound, rel=0.005)  # measured exact
    assert det["counts"]["timer_ticks"] == pytest.approx(ticks_expected(det), abs=1)


# --- 4. livelock: irq falls, disable-enable does not ---------------------------------------


def test_irq_livelocks():
    at_cliff, overload = run("irq", 127e3), run("irq", 600e3)
    # measured 58.0 k / 126.7 k = 0.458
    assert overload["throughput_pps"] < 0.5 * at_cliff["throughput_pps"]


def test_disable_enable_does_not_livelock():
    overload = runs("disable-enable", 600e3, 4)
    # measured 1.000 x mu over 4 x 0.5 s (single runs 0.993 … 1.008)
    assert mean(overload, lambda r: r["throughput_pps"]) == pytest.approx(MU, rel=0.01)
    for r in overload:
        assert r["cpu"]["idle"] < 1e-3  # measured 0: the CPU never leaves protocol processing
    light = run("disable-enable", 50e3)
    # the ring never empties, interrupts stay disabled: measured 0 vs 30.8 k IRQ/s at 50 kpps
    assert max(r["irq_per_s"] for r in overload) < 0.01 * light["irq_per_s"]


# --- 5. disable-enable at low load, and its presets -------------------------------------------


def test_disable_enable_at_low_load_each_packet_is_its_own_busy_period():
    light = runs("disable-enable", 5e3, 4, duration_ms=2000)
    for r in light:
        irqs, delivered = r["counts"]["irqs"], r["packets"]["delivered"]
        # one IRQ per packet that finds the CPU idle (PASTA): measured 0.999 … 1.002
        assert irqs_per_idle_arrival(r) == pytest.approx(1, rel=0.015)
        # i.e. nearly one per packet, short of it by ~rho = 4.7%: measured 0.953 … 0.955
        assert 0.9 * delivered < irqs <= delivered
        # the ISR processes the first packet of each busy period; the loop only the others:
        # measured 0.047 (driver.first_packet = "softirq" would give 1)
        assert r["counts"]["polled_packets"] < 0.1 * delivered
    # so a packet's latency is mostly one cost of 1/v = irq + mask + proto, exponential:
    # mean measured 1.023 x 1/v over 4 x 2 s (single runs 1.012 … 1.038; queueing adds a
    # little), median 1.039 x ln 2/v (single runs 1.010 … 1.056; 1.24 x with the ISR and the
    # packet as separate costs)
    one_over_v = IRQ_US + MASK_US + PROTO_US
    assert mean(light, lambda r: r["latency_us"]["mean"]) == pytest.approx(one_over_v, rel=0.05)
    median = mean(light, lambda r: r["latency_us"]["p50"])
    assert median == pytest.approx(math.log(2) * one_over_v, rel=0.1)
    # at 1 kpps nearly every packet finds the CPU idle: measured 0.992
    r = run("disable-enable", 1e3, duration_ms=2000)
    assert r["counts"]["irqs"] >= 0.97 * r["packets"]["delivered"]


def test_disable_enable_armed_cause_takes_no_spurious_interrupts():
    # armed (its default): re-enabling after the ring is found empty discards the cause the
    # busy period's arrivals raised, so IRQs are still one per idle-finding packet at 50 kpps:
    # measured 1.001; latched interrupts again at once, measured 1.094
    armed = run("disable-enable", 50e3, duration_ms=2000)
    assert armed["scenario"]["nic.cause_mode"] == "armed"
    assert irqs_per_idle_arrival(armed) == pytest.approx(1, rel=0.025)
    latched = run("disable-enable", 50e3, {"nic.cause_mode": "latched"}, duration_ms=2000)
    assert latched["scenario"]["nic.cause_mode"] == "latched"
    assert irqs_per_idle_arrival(latched) > 1.04


def test_disable_enable_presets():
    de = irqlab.resolve({"scheme": "disable-enable"})
    assert de["nic.cause_mode"] == "armed"
    assert de["driver.first_packet"] == "isr"
    explicit = irqlab.resolve({"scheme": "disable-enable", "nic.cause_mode": "latched"})
    assert explicit["nic.cause_mode"] == "latched"
    assert explicit["driver.first_packet"] == "isr"
    assert irqlab.resolve({"scheme": "irq"})["nic.cause_mode"] == "latched"
    assert irqlab.resolve({"scheme": "irq"})["driver.first_packet"] == "softirq"


# --- 6. napi-poll ----------------------------------------------------------------------------


def test_napi_poll_at_low_load_is_interrupt_driven():
    r = run("napi-poll", 5e3, duration_ms=2000)
    delivered = r["packets"]["delivered"]
    # the timer runs only while a poll leaves packets behind or outlasts T_poll:
    # measured 0.029 ticks per packet (vs 50 000 ticks/s when polling)
    assert r["counts"]["timer_ticks"] < 0.05 * delivered
    assert irqs_per_idle_arrival(r) == pytest.approx(1, rel=0.015)  # measured 0.9997
    assert 0.9 * delivered < r["counts"]["irqs"] <= delivered  # measured 0.952


def test_napi_poll_at_overload_is_timer_driven():
    r = run("napi-poll", 400e3)
    assert r["irq_per_s"] < 100  # measured 0
    # one tick per T_poll, every one of them: measured 25 000 in 0.5 s
    assert abs(r["counts"]["timer_ticks"] - ticks_expected(r)) <= 1


def test_napi_poll_beats_poll_at_light_load():
    # latency: no wait for the next tick; measured 9.8 us vs 15.6 us at 10 kpps
    napi_poll, poll = run("napi-poll", 10e3), run("poll", 10e3)
    assert napi_poll["latency_us"]["mean"] < 0.8 * poll["latency_us"]["mean"]
    # CPU: no 1.59 us tick every 20 us; measured idle 0.981 vs 0.910 at 2 kpps
    napi_poll, poll = run("napi-poll", 2e3), run("poll", 2e3)
    assert napi_poll["cpu"]["idle"] > poll["cpu"]["idle"] + 0.03


# --- 7. hybrid -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("keys", "mean_frame"),
    [
        (SALAH2007, 64),
        ({**SALAH2007, "traffic.sizes": "salah2007"}, SALAH2007_MEAN_FRAME),
        ({}, 64),
    ],
    ids=["salah2007", "salah2007-sizes", "no-preset"],
)
def test_hybrid_automatic_switch_is_0_95_of_eq_13(keys, mean_frame):
    res = irqlab.resolve({**keys, "scheme": "hybrid", "hybrid.switch_pps": 0})
    proto_ns = res["platform.proto_ns"] + res["platform.proto_ns_per_byte"] * mean_frame
    expected = 0.95 * eq13(res["platform.irq_ns"], proto_ns)
    assert res["hybrid.switch_pps"] == pytest.approx(expected, rel=1e-9)


def test_hybrid_switch_is_echoed_and_explicit_switch_wins():
    r = run("hybrid", 50e3, duration_ms=10)
    assert r["scenario"]["hybrid.switch_pps"] == pytest.approx(0.95 * CLIFF, rel=1e-9)
    res = irqlab.resolve({**SALAH2007, "scheme": "hybrid", "hybrid.switch_pps": 1e5})
    assert res["hybrid.switch_pps"] == 1e5


def test_hybrid_below_the_switch_is_disable_enable():
    hybrid, de = run("hybrid", 50e3), run("disable-enable", 50e3)
    for key in ("packets", "throughput_pps", "latency_us", "cpu", "cpu_ps", "counts"):
        assert hybrid[key] == de[key], key
    assert hybrid["counts"]["mode_switches"] == 0
    assert hybrid["counts"]["timer_ticks"] == 0


def test_hybrid_above_the_switch_is_polling():
    hybrid, poll, de = (run(s, 300e3) for s in ("hybrid", "poll", "disable-enable"))
    assert hybrid["cpu"]["idle"] > 0.1  # measured 0.172, poll's 0.171
    assert de["cpu"]["idle"] < 1e-3  # measured 0
    assert hybrid["throughput_pps"] == pytest.approx(poll["throughput_pps"], rel=0.02)
    assert hybrid["irq_per_s"] == 0
    assert abs(hybrid["counts"]["timer_ticks"] - ticks_expected(hybrid)) <= 1


def test_hybrid_with_explicit_switch_stays_polling_past_it():
    # 120 kpps offered, switch at 100 kpps: disable-enable would cope, but the hybrid must poll
    keys = {"hybrid.switch_pps": 1e5}
    hybrid, poll, de = run("hybrid", 120e3, keys), run("poll", 120e3), run("disable-enable", 120e3)
    # measured idle 0.2811 (hybrid), 0.2812 (poll), 0.2417 (disable-enable)
    assert hybrid["cpu"]["idle"] == pytest.approx(poll["cpu"]["idle"], abs=0.01)
    assert abs(hybrid["cpu"]["idle"] - de["cpu"]["idle"]) > 0.02
    # measured 48 IRQ/s (one rare 1-ms window under 90 kpps) vs disable-enable's 28.8 k
    assert hybrid["irq_per_s"] < 0.01 * de["irq_per_s"]
    assert hybrid["counts"]["timer_ticks"] > 0.98 * ticks_expected(hybrid)  # measured 0.998
    # hysteresis: it switches back only when a window falls 10% below the switch
    assert hybrid["counts"]["mode_switches"] <= 4  # measured 2


# --- 8. ideal ----------------------------------------------------------------------------------


def test_ideal_is_an_upper_bound():
    rate = 300e3
    ideal = run("ideal", rate)
    assert ideal["counts"]["irqs"] == 0
    assert ideal["cpu"]["irq"] == 0
    assert ideal["cpu_ps"]["irq"] == 0
    for scheme in SCHEMES:
        if scheme == "ideal":
            continue
        other = run(scheme, rate)
        # disable-enable and napi pay no interrupt at sustained overload either: they tie with
        # ideal up to which packets the full ring drops (measured within 3 packets per 0.5 s)
        slack = 10 / ideal["measured_s"]
        assert ideal["throughput_pps"] >= other["throughput_pps"] - slack, scheme
        if scheme not in ("disable-enable", "napi"):
            # measured 1.07 x (coalesce-time) … 2.1 x (irq)
            assert ideal["throughput_pps"] > 1.05 * other["throughput_pps"], scheme


# --- 9. Pareto ON/OFF traffic -------------------------------------------------------------------


def test_pareto_onoff_offers_its_rate_in_bursts():
    reps = 8
    pareto = [arrivals_per_ms("pareto-onoff", i) for i in range(reps)]
    poisson = [arrivals_per_ms("poisson", i) for i in range(reps)]
    # measured 0.998 x 100 kpps (heavy tails: single replications 0.96 … 1.02)
    rate = np.mean([c.sum() / (len(c) * 1e-3) for c in pareto])
    assert rate == pytest.approx(100e3, rel=0.05)
    # bursty: measured mean 8.2 (replications 6.0 … 9.7); Poisson 0.95 … 1.04
    assert np.mean([dispersion(c) for c in pareto]) > 5
    for c in poisson:
        assert 0.8 < dispersion(c) < 1.25
    # and burstier at longer time scales (long-range dependence): measured 20 at 10 ms
    per_10ms = [c.reshape(-1, 10).sum(axis=1) for c in pareto]
    assert np.mean([dispersion(c) for c in per_10ms]) > 1.5 * np.mean(
        [dispersion(c) for c in pareto]
    )


def test_pareto_onoff_unreachable_rate_is_rejected():
    # 8 sources at 1 Gbit/s with 557-B frames carry at most 1.73 Mpps
    with pytest.raises(ConfigError) as err:
        irqlab.run(
            {
                **SALAH2007,
                "traffic.kind": "pareto-onoff",
                "traffic.sources": 8,
                "traffic.sizes": "salah2007",
                "traffic.rate_pps": 3e6,
                "run.duration_ms": 1,
            }
        )
    assert err.value.key == "traffic.rate_pps"


# --- 10. frame sizes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sizes", "mean_frame"), [("salah2007", SALAH2007_MEAN_FRAME), ("64:1, 1518:1", 791)]
)
def test_frame_sizes_set_the_protocol_cost(sizes, mean_frame):
    # ideal at overload delivers 1/E[proto]: 166.8 kpps at 557 B, 158.5 kpps at 791 B
    capacity = 1e6 / (PROTO_FIXED_US + mean_frame * US_PER_BYTE)
    r = run("ideal", 400e3, {"traffic.sizes": sizes})
    assert r["throughput_pps"] == pytest.approx(capacity, rel=0.015)  # measured 0.9999, 0.9999


@pytest.mark.parametrize(
    ("sizes", "says"),
    [
        ("64", "bytes:weight"),
        ("64:x", "weight must be a number >= 0"),
        ("0:1", "size must be an integer in 1 … 65535"),
        ("64:-1", "weight must be a number >= 0"),
        ("64:0", "at least one size with a positive weight"),
        ("", "at least one size with a positive weight"),
    ],
)
def test_malformed_size_table_is_rejected(sizes, says):
    with pytest.raises(ConfigError, match=r"traffic\.sizes") as err:
        irqlab.run({**SALAH2007, "traffic.sizes": sizes, "run.duration_ms": 1})
    assert err.value.key == "traffic.sizes"
    assert says in str(err.value)


# --- 11. presets --------------------------------------------------------------------------------


def test_platform_preset_brings_the_salah_costs():
    res = irqlab.resolve(SALAH2007)
    assert res["platform.mask_ns"] == 500
    assert res["platform.poll_timer_ns"] == 1590
    assert res["platform.proto_ns"] == 5250
    assert res["platform.irq_ns"] == 3730
    assert res["platform.proto_ns_per_byte"] == pytest.approx(1 / 0.748)
    assert res["nic.ring_descriptors"] == 1024
    bare = irqlab.resolve({})
    assert bare["platform.mask_ns"] == 0
    assert bare["platform.proto_ns"] == 5340


def test_explicit_keys_win_over_presets():
    res = irqlab.resolve(
        {**SALAH2007, "platform.mask_ns": 200, "platform.proto_ns": 6000, "scheme": "hybrid"}
    )
    assert res["platform.mask_ns"] == 200
    assert res["platform.proto_ns"] == 6000
    assert res["platform.poll_timer_ns"] == 1590


@pytest.mark.parametrize(
    ("scheme", "key", "default", "explicit"),
    [("coalesce-count", "nic.rx_frames", 8, 3), ("coalesce-time", "nic.rx_usecs", 50, 20)],
)
def test_coalescing_presets(scheme, key, default, explicit):
    assert irqlab.resolve({"scheme": scheme})[key] == default
    assert irqlab.resolve({**SALAH2007, "scheme": scheme})[key] == default
    assert irqlab.resolve({"scheme": scheme, key: explicit})[key] == explicit
    assert irqlab.resolve({"scheme": "irq"})[key] == 0


# --- 12. conservation ----------------------------------------------------------------------------


@pytest.mark.parametrize("rate", [20e3, 127e3, 500e3])
@pytest.mark.parametrize("scheme", SCHEMES)
def test_conservation(scheme, rate):
    r = run(scheme, rate, duration_ms=100, warmup_ms=10)
    p = r["packets"]
    assert p["offered"] + p["in_flight_at_warmup"] == (
        p["delivered"] + p["dropped_nic"] + p["dropped_socket"] + p["in_flight"]
    )
    c = r["cpu_ps"]
    assert c["irq"] + c["softirq"] + c["ksoftirqd"] + c["app"] + c["idle"] == c["measured"]
    assert c["measured"] == round(r["measured_s"] * 1e12)
