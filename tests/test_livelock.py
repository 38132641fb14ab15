"""Receive livelock. With Salah et al.'s costs (1/r = 3.73 us per interrupt, 1/mu = 5.34 us per
packet, both exponential, B = 1024), normal interruption's throughput peaks near the cliff point
of Salah Eq. 13 (127 kpps) and falls as the offered load grows past it: the ISR, at top priority,
takes an ever larger share of the CPU. NAPI on the same costs does not fall: past saturation it
keeps the vector masked, the IRQ rate drops towards zero and throughput stays at mu."""

from __future__ import annotations

import itertools

import pytest

import irqlab
from conftest import SALAH, salah_cliff_pps

RATES = [40e3, 80e3, 110e3, 127e3, 145e3, 170e3, 200e3, 300e3, 400e3, 600e3]
MU = 1e9 / SALAH["platform.proto_ns"]  # 187.3 kpps
R = 1e9 / SALAH["platform.irq_ns"]


def sweep(scheme: str) -> dict[float, dict]:
    out = {}
    for rate in RATES:
        out[rate] = irqlab.run(
            {
                **SALAH,
                "scheme": scheme,
                "traffic.rate_pps": rate,
                "run.warmup_ms": 50,
                "run.duration_ms": 400,
                "run.seed": 3,
            }
        )
    return out


@pytest.fixture(scope="module")
def irq():
    return sweep("irq")


@pytest.fixture(scope="module")
def napi():
    return sweep("napi")


def test_cliff_point_of_eq_13_is_127_kpps():
    assert salah_cliff_pps() == pytest.approx(127.06e3, rel=1e-3)


def test_irq_throughput_peaks_at_the_cliff_and_falls_past_it(irq):
    tput = {rate: r["throughput_pps"] for rate, r in irq.items()}
    peak_rate = max(tput, key=tput.get)
    cliff = salah_cliff_pps()
    assert 0.85 * cliff <= peak_rate <= 1.15 * cliff, tput
    # below the cliff nearly everything gets through
    for rate in (40e3, 80e3, 110e3):
        assert tput[rate] == pytest.approx(rate, rel=0.02)
    # past it, throughput falls monotonically: livelock
    past = [tput[r] for r in RATES if r >= 145e3]
    assert all(a > b for a, b in itertools.pairwise(past)), past
    assert tput[600e3] < 0.5 * tput[peak_rate]
    # and follows the model's effective service rate mu' = mu r / (lambda + r) (Eq. 2)
    for rate in (300e3, 400e3, 600e3):
        assert tput[rate] == pytest.approx(MU * R / (rate + R), rel=0.02)
    # the CPU is saturated and the ISR's share grows with the load
    assert irq[600e3]["cpu"]["idle"] == 0
    assert irq[600e3]["cpu"]["irq"] > irq[200e3]["cpu"]["irq"] > 0.3


def test_napi_does_not_livelock(napi, irq):
    tput = {rate: r["throughput_pps"] for rate, r in napi.items()}
    for rate in (200e3, 300e3, 400e3, 600e3):
        assert tput[rate] == pytest.approx(MU, rel=0.01), tput
        assert tput[rate] > 1.5 * irq[rate]["throughput_pps"] or rate == 200e3
    irqs = {rate: r["irq_per_s"] for rate, r in napi.items()}
    peak = max(irqs.values())
    assert irqs[600e3] < 0.01 * peak, irqs
    # in overload the NAPI polls full weights and the softirq work moves to ksoftirqd
    assert napi[600e3]["packets_per_poll"] == pytest.approx(64, rel=0.01)
    assert napi[600e3]["cpu"]["ksoftirqd"] > 0.9
