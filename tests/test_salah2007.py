"""`irqlab reproduce salah2007 --quick`: it writes the figures and tables, and the paper's
qualitative conclusions (§4, §5.1, §5.2, §5.3) hold in the data it reproduces.

Each conclusion is asserted on the reproduced means; where two schemes are compared, the
difference must exceed the sum of their 95% half-widths unless it is a "comparable" claim.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import irqlab
from conftest import is_png, reproduce_quick
from irqlab.studies import salah2007

LOW, MODERATE, HIGH = 2e3, 60e3, 400e3


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    return reproduce_quick(
        "salah2007", tmp_path_factory.mktemp("salah2007"), "cliff point, Poisson"
    )


@pytest.fixture(scope="module")
def fig6(out) -> pd.DataFrame:
    return pd.read_csv(out / "fig6_simulation.csv")


def at(df: pd.DataFrame, scheme: str, rate: float, metric: str) -> tuple[float, float]:
    """Mean and 95% half-width of ``metric`` for ``scheme`` at the offered ``rate``."""
    row = df[(df["scheme"] == scheme) & (df["traffic.rate_pps"] == rate)]
    assert len(row) == 1, (scheme, rate)
    return float(row[metric].iloc[0]), float(row[f"{metric}.ci95"].fillna(0).iloc[0])


def better(df, a: str, b: str, rate: float, metric: str, higher: bool = True) -> bool:
    """Whether ``a`` beats ``b`` at ``rate`` by more than their combined 95% half-widths."""
    (ma, ha), (mb, hb) = at(df, a, rate, metric), at(df, b, rate, metric)
    return (ma - mb if higher else mb - ma) > ha + hb


OTHERS = ("irq", "poll", "napi-poll", "coalesce-count", "coalesce-time", "hybrid")


def test_outputs_are_written(out):
    for name in ("fig6.png", "fig9.png", "fig10.png"):
        assert is_png(out / name), name
    for name in ("fig6_simulation", "fig6_analysis", "fig9_simulation", "fig10_tau", "headline"):
        assert len(pd.read_csv(out / f"{name}.csv")) > 0, name
    assert "| cliff point, Poisson (kpps) | 127 |" in (out / "headline.md").read_text()
    assert (out / "fig6" / "runs.parquet").exists(), "the sweeps are kept, and resumable"


def test_headline_numbers(out):
    h = pd.read_csv(out / "headline.csv").set_index("quantity")
    for quantity, tolerance in [
        ("cliff point, Poisson (kpps)", 0.03),
        ("maximum throughput, Poisson (kpps)", 0.02),
        ("cliff point, bursty (kpps)", 0.06),
        ("maximum throughput, bursty (kpps)", 0.03),
    ]:
        row = h.loc[quantity]
        assert row["analysis"] == pytest.approx(row["paper"], rel=0.01), quantity
        assert row["simulation"] == pytest.approx(row["paper"], rel=tolerance), quantity


# ----- §4 -------------------------------------------------------------------------------------


def test_disable_enable_has_the_best_throughput_and_latency_at_high_load(fig6):
    for rate in (250e3, HIGH):
        for other in OTHERS:
            assert better(fig6, "disable-enable", other, rate, "throughput_pps"), (other, rate)
            assert better(fig6, "disable-enable", other, rate, "latency_us.mean", higher=False)


def test_disable_enable_cpu_availability_is_the_worst_after_normal_interruption(fig6):
    for rate in (MODERATE, 100e3):
        assert better(fig6, "disable-enable", "irq", rate, "cpu.idle")
        for other in ("poll", "coalesce-count", "coalesce-time"):
            assert better(fig6, other, "disable-enable", rate, "cpu.idle"), (other, rate)


def test_at_extremely_low_rate_disable_enable_is_slower_than_normal_interruption():
    """1/v = 1/r + 0.5 µs + 1/μ against 1/r + 1/μ: half a microsecond, measured long enough."""
    lat = {}
    for scheme in ("irq", "disable-enable"):
        params = {**salah2007.POISSON_BASE, "scheme": scheme, "traffic.rate_pps": 1000}
        reps = [
            irqlab.run({**params, "run.duration_ms": 4000, "run.replication": r}) for r in range(3)
        ]
        lat[scheme] = np.mean([r["latency_us"]["mean"] for r in reps])
    assert 0.3 < lat["disable-enable"] - lat["irq"] < 0.8, lat


def test_napi_polling_matches_pure_polling_at_high_load_and_beats_it_at_low_load(fig6):
    for metric in ("throughput_pps", "latency_us.mean"):
        a, _ = at(fig6, "napi-poll", HIGH, metric)
        b, _ = at(fig6, "poll", HIGH, metric)
        assert a == pytest.approx(b, rel=0.02), metric
    assert better(fig6, "napi-poll", "poll", LOW, "cpu.idle")
    assert better(fig6, "napi-poll", "poll", LOW, "latency_us.mean", higher=False)


def test_polling_is_slower_at_light_load_and_delivers_less_at_high_load_than_disable_enable(fig6):
    assert better(fig6, "disable-enable", "poll", LOW, "latency_us.mean", higher=False)
    assert better(fig6, "disable-enable", "poll", HIGH, "throughput_pps")


def test_polling_has_the_best_cpu_availability_at_high_load_and_keeps_some_at_any_load(fig6):
    for other in ("irq", "disable-enable", "coalesce-count", "coalesce-time", "ideal"):
        assert better(fig6, "poll", other, HIGH, "cpu.idle"), other
    for rate in salah2007.QUICK.poisson_rates:
        assert at(fig6, "poll", rate, "cpu.idle")[0] > 0.1, rate


def test_large_coalescing_values_hurt_latency_at_low_load(fig6):
    irq, _ = at(fig6, "irq", LOW, "latency_us.mean")
    assert at(fig6, "coalesce-count", LOW, "latency_us.mean")[0] > 20 * irq
    assert at(fig6, "coalesce-time", LOW, "latency_us.mean")[0] > 3 * irq


def test_normal_interruption_livelocks_past_the_cliff(fig6):
    irq = fig6[fig6["scheme"] == "irq"].sort_values("traffic.rate_pps")
    peak = irq.loc[irq["throughput_pps"].idxmax()]
    assert peak["traffic.rate_pps"] == 127e3
    assert at(fig6, "irq", HIGH, "throughput_pps")[0] < 0.65 * peak["throughput_pps"]
    assert at(fig6, "irq", HIGH, "cpu.idle")[0] == 0.0


def test_no_scheme_is_best_everywhere(fig6):
    high = fig6[(fig6["traffic.rate_pps"] == HIGH) & (fig6["scheme"] != "ideal")]
    low = fig6[(fig6["traffic.rate_pps"] == LOW) & (fig6["scheme"] != "ideal")]
    best_throughput = high.loc[high["throughput_pps"].idxmax(), "scheme"]
    best_cpu = high.loc[high["cpu.idle"].idxmax(), "scheme"]
    best_latency_low = low.loc[low["latency_us.mean"].idxmin(), "scheme"]
    assert best_throughput == "disable-enable"
    assert best_cpu in ("poll", "napi-poll", "hybrid")
    assert best_latency_low not in ("poll", "coalesce-count", "coalesce-time")


def test_analysis_lines_meet_the_simulation(out, fig6):
    """Fig. 6's lines and points: throughput and CPU of the analysed schemes within 3% (or
    0.02 of CPU) of the simulated means wherever the model is the simulated one (all but
    polling)."""
    model = pd.read_csv(out / "fig6_analysis.csv")
    for scheme in ("ideal", "irq", "disable-enable"):
        for rate in salah2007.QUICK.poisson_rates:
            m = model[(model["scheme"] == scheme) & (model["rate_pps"] == rate)].iloc[0]
            thr, _ = at(fig6, scheme, rate, "throughput_pps")
            # 3%, or three standard errors of the Poisson count (3 runs of 100 ms)
            counting = 3 / np.sqrt(rate * 0.3)
            assert thr == pytest.approx(m["throughput_pps"], rel=max(0.03, counting)), (
                scheme,
                rate,
            )
            cpu, _ = at(fig6, scheme, rate, "cpu.idle")
            assert cpu == pytest.approx(m["cpu_availability"], abs=0.02), (scheme, rate)


# ----- §5.1 bursty traffic --------------------------------------------------------------------


def test_bursty_traffic_keeps_the_relative_performance(out):
    fig9 = pd.read_csv(out / "fig9_simulation.csv")
    top = fig9["traffic.rate_pps"].max()
    irq = fig9[fig9["scheme"] == "irq"]
    assert at(fig9, "irq", top, "throughput_pps")[0] < 0.9 * irq["throughput_pps"].max()
    for other in ("irq", "poll", "napi-poll", "coalesce-count", "coalesce-time"):
        assert better(fig9, "disable-enable", other, top, "throughput_pps"), other
    assert better(fig9, "poll", "disable-enable", top, "cpu.idle")
    assert at(fig9, "disable-enable", top, "throughput_pps")[0] == pytest.approx(167e3, rel=0.02)


# ----- §5.2 parameters ------------------------------------------------------------------------


def test_large_tau_hurts_latency_at_low_load_and_T_bounds_it(out):
    tau = pd.read_csv(out / "fig10_tau.csv")
    low = tau[tau["traffic.rate_pps"] == LOW].set_index("nic.rx_frames")["latency_us.mean"]
    assert low[32] > 3 * low[8] > 3 * low[1]
    t = pd.read_csv(out / "fig10_T.csv")
    low_t = t[t["traffic.rate_pps"] == LOW].set_index("nic.rx_usecs")["latency_us.mean"]
    assert low_t[50.0] < 50 + 20 < low[8]


def test_quota_trades_cpu_availability_for_throughput_and_latency(out):
    q = pd.read_csv(out / "fig10_Q.csv")
    poll = q[q["scheme"] == "poll"]
    top = poll["traffic.rate_pps"].max()
    high = poll[poll["traffic.rate_pps"] == top].set_index("poll.quota")
    assert high.loc[4, "cpu.idle"] < 0.1  # Q = 4: protocol processing at full speed
    assert high.loc[2, "cpu.idle"] > high.loc[4, "cpu.idle"] + 0.2
    assert high.loc[2, "throughput_pps"] < 0.8 * high.loc[4, "throughput_pps"]
    assert high.loc[2, "latency_us.mean"] > high.loc[4, "latency_us.mean"]


def test_polling_period_trades_overhead_for_latency(out):
    t = pd.read_csv(out / "fig10_Tpoll.csv")
    poll = t[t["scheme"] == "poll"]
    mid = poll[poll["traffic.rate_pps"] == 40e3].set_index("poll.period_us")
    assert mid.loc[10.0, "cpu.idle"] < mid.loc[20.0, "cpu.idle"] < mid.loc[40.0, "cpu.idle"]
    low = poll[poll["traffic.rate_pps"] == LOW].set_index("poll.period_us")
    assert low.loc[40.0, "latency_us.mean"] > low.loc[20.0, "latency_us.mean"]
    assert low.loc[20.0, "latency_us.mean"] > low.loc[10.0, "latency_us.mean"]


def test_napi_polling_has_lower_latency_pure_polling_better_cpu_at_moderate_load(out):
    q = pd.read_csv(out / "fig10_Q.csv")
    q = q[q["poll.quota"] == 4]
    assert better(q, "napi-poll", "poll", LOW, "latency_us.mean", higher=False)
    assert better(q, "poll", "napi-poll", 40e3, "cpu.idle")


# ----- §5.3 the hybrid ------------------------------------------------------------------------


def test_hybrid_is_disable_enable_at_low_load_and_polling_at_high_load(fig6):
    for metric in ("throughput_pps", "latency_us.mean", "cpu.idle"):
        assert (
            at(fig6, "hybrid", MODERATE, metric)[0]
            == at(fig6, "disable-enable", MODERATE, metric)[0]
        )
    assert at(fig6, "hybrid", HIGH, "cpu.idle")[0] == pytest.approx(
        at(fig6, "poll", HIGH, "cpu.idle")[0], abs=0.01
    )
    assert better(fig6, "hybrid", "disable-enable", HIGH, "cpu.idle")
