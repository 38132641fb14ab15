"""`irqlab reproduce beifuss2016 --quick`: the figures and tables are written, and the paper's
qualitative conclusions that are not calibration targets hold in the reproduced data (the
acceptance points of the ingress-QoS issue)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import is_png
from irqlab.studies.beifuss2016 import PAPER, QUICK, STRATEGIES, at, class_column

LOAD = 1.5e6


@pytest.fixture(scope="module")
def out(beifuss2016_quick) -> Path:
    return beifuss2016_quick


@pytest.fixture(scope="module")
def shares(out) -> pd.DataFrame:
    return pd.read_csv(out / "shares.csv")


@pytest.fixture(scope="module")
def loads(out) -> pd.DataFrame:
    return pd.read_csv(out / "loads.csv")


@pytest.fixture(scope="module")
def maximum(out) -> pd.DataFrame:
    return pd.read_csv(out / "max_throughput.csv")


def latency(df: pd.DataFrame, strategy: str, cls: str | None, **where: float) -> float:
    col = "latency_us.mean" if cls is None else class_column(df, cls, "latency_us.mean")
    return float(at(df, strategy, **where)[col])


def best(maximum: pd.DataFrame, strategy: str) -> float:
    return float(maximum[maximum["qos.strategy"] == strategy]["max_loss_free_pps"].mean())


def test_outputs_are_written(out, shares, loads, maximum):
    for name in ("fig5.png", "fig6.png", "fig7.png"):
        assert is_png(out / name), name
    assert set(shares["qos.strategy"]) == set(STRATEGIES)
    assert len(shares) == len(STRATEGIES) * len(QUICK.shares)
    assert len(loads) == len(STRATEGIES) * len(QUICK.loads)
    assert len(maximum) == len(PAPER) * len(QUICK.search_shares)
    # confidence intervals beside every metric
    assert {"irq_per_s.ci95", "per_class.1.latency_us.mean.ci95"} <= set(shares)
    paper = (out / "paper.md").read_text()
    assert "| SQ IRQ rate at 1.5 Mpps (Fig. 6a) | ≈ 32 k/s |" in paper
    assert "calibration" in paper and "comparison" in paper


def test_the_classes_are_rt_and_be_with_the_share_asked(shares):
    for share in (0.1, 0.3, 0.7):
        row = at(shares, "ll-rr", rt_share=share)
        assert row["per_class.0.class"] == "be" and row["per_class.1.class"] == "rt"
        offered = row["per_class.1.offered"] / row["packets.offered"]
        assert offered == pytest.approx(share, abs=0.01)


def test_ll_rt_latency_is_below_sq_at_moderate_rt_shares(shares):
    for share in (0.1, 0.3):
        sq = latency(shares, "sq", None, rt_share=share)
        for st in ("ll-rr", "ll-wfq"):
            rt = latency(shares, st, "rt", rt_share=share)
            be = latency(shares, st, "be", rt_share=share)
            assert rt < sq, (st, share, rt, sq)
            assert be > sq, (st, share, be, sq)  # at BE's expense


def test_ll_wfq_keeps_rt_below_sq_to_higher_rt_shares_than_ll_rr(shares):
    share = 0.7
    sq = latency(shares, "sq", None, rt_share=share)
    assert latency(shares, "ll-wfq", "rt", rt_share=share) < sq
    assert latency(shares, "ll-rr", "rt", rt_share=share) > sq


def test_rr_is_worse_than_sq_in_throughput_and_latency_with_more_irqs(shares, loads, maximum):
    assert best(maximum, "rr") < best(maximum, "sq")
    for share in (0.1, 0.3, 0.5):
        sq = latency(shares, "sq", None, rt_share=share)
        for cls in ("rt", "be"):
            assert latency(shares, "rr", cls, rt_share=share) > sq, (share, cls)
        # the RT ring waits behind the BE vector's long polls while RT is the lighter class:
        # "the RT latency is above the BE latency at RT ratios below 50 %" (at 50 % the two
        # classes are alike, and the paper says nothing of their order)
        if share < 0.5:
            assert latency(shares, "rr", "rt", rt_share=share) > latency(
                shares, "rr", "be", rt_share=share
            )
    for rate in QUICK.loads:
        if 0.15e6 < rate < 1.6e6:
            rr = at(loads, "rr", rate_pps=rate)["irq_per_s"]
            sq = at(loads, "sq", rate_pps=rate)["irq_per_s"]
            assert rr > sq, rate


def test_ll_rt_latency_stays_low_in_overload_while_sq_and_ll_be_rise(loads):
    for st in ("ll-rr", "ll-wfq"):
        moderate = latency(loads, st, "rt", rate_pps=1.0e6)
        assert latency(loads, st, "rt", rate_pps=2.0e6) < 2 * moderate
        assert latency(loads, st, "be", rate_pps=2.0e6) > 20 * latency(
            loads, st, "be", rate_pps=1.0e6
        )
        # RT loses nothing: BE takes all of the loss
        row = at(loads, st, rate_pps=2.0e6)
        assert row["per_class.1.dropped_nic"] == 0
        assert row["per_class.0.dropped_nic"] > 0
    assert latency(loads, "sq", None, rate_pps=2.0e6) > 20 * latency(
        loads, "sq", None, rate_pps=1.0e6
    )


def test_ll_throughput_is_close_to_sq(maximum):
    sq = best(maximum, "sq")
    for st in ("ll-rr", "ll-wfq"):
        assert abs(best(maximum, st) - sq) <= 0.15e6, st
    assert all(np.isfinite(maximum["max_loss_free_pps"]))


def test_rr_keeps_interrupting_in_overload_from_its_rt_vector(loads):
    # RR gives RT half the core: 0.6 Mpps of RT at 2 Mpps still empties its ring
    assert at(loads, "rr", rate_pps=2.0e6)["irq_per_s"] > 5000
    for st in ("sq", "ll-rr", "ll-wfq"):
        assert at(loads, st, rate_pps=2.0e6)["irq_per_s"] == 0, st


@pytest.mark.slow
def test_refitting_the_targets_file_gives_the_committed_preset():
    """`irqlab calibrate` on the committed targets file (which starts at the committed preset)
    identifies every free cost, fits its five targets (none 3 σ off) and lands on the
    committed preset within the uncertainties it reports (a few seconds)."""
    from importlib import resources

    from irqlab.calibration import calibrate
    from irqlab.studies.common import preset, targets_file

    path = resources.files("irqlab.studies").joinpath(targets_file("irqlab.studies.beifuss2016"))
    with resources.as_file(path) as f:
        result = calibrate(f, executor="inline")
    committed = preset("irqlab.studies.beifuss2016")
    fitted = {p.key: p for p in result.parameters}
    assert set(fitted) == set(committed) - {"platform.preset"}
    assert not result.poor, result.poor_reasons
    for key, p in fitted.items():
        assert p.identifiable and p.status == "identified", (key, p.status, p.note)
        assert abs(p.value - committed[key]) <= p.sigma, (key, p.value, p.sigma, committed[key])
