"""`irqlab reproduce emmerich2015 --quick`: the figures and tables are written, and the paper's
findings hold in the reproduced data (the acceptance points of the moderation issue)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from conftest import is_png
from irqlab.studies.emmerich2015 import POLICIES, QUICK, at

LOW, MEDIUM, HIGH, OVERLOAD = 0.02e6, (0.5e6, 1.0e6, 1.5e6), 1.9e6, 2.5e6


@pytest.fixture(scope="module")
def out(emmerich2015_quick) -> Path:
    return emmerich2015_quick


@pytest.fixture(scope="module")
def curves(out) -> pd.DataFrame:
    return pd.read_csv(out / "curves.csv")


def value(curves: pd.DataFrame, policy: str, rate: float, metric: str) -> float:
    return float(at(curves, policy, rate)[metric])


def test_outputs_are_written(out, curves):
    for name in ("fig3_5_8.png", "fig7.png", "policies.png"):
        assert is_png(out / name), name
    assert set(curves["policy"]) == set(POLICIES)
    assert len(curves) == len(POLICIES) * len(QUICK.rates)
    table = pd.read_csv(out / "policies.csv")
    assert len(table) == 3 * len(POLICIES)
    assert {"latency_p50_us", "latency_p99_us", "cpu_load", "irq_per_s", "p_ll"} <= set(table)
    assert "| 1 | linear (Emmerich et al.) |" in (out / "policies.md").read_text()


def test_itr_off_irq_rate_rises_peaks_and_falls_before_overload(curves):
    off = curves[curves["policy"] == "off"].sort_values("traffic.rate_pps")
    irq = off.set_index("traffic.rate_pps")["irq_per_s"]
    peak_rate = irq.idxmax()
    assert 0.3e6 <= peak_rate <= 0.7e6, peak_rate
    assert irq[0.1e6] < irq[peak_rate]
    falling = [irq[x] for x in (peak_rate, 1.0e6, 1.5e6, HIGH, 2.05e6)]
    assert falling == sorted(falling, reverse=True), falling
    assert irq[2.05e6] < 0.1 * irq[peak_rate], "towards zero before the overload point"
    assert irq[OVERLOAD] == 0, "under overload the NAPI never re-enables the vector"


def test_itr_off_cpu_saturates_before_overload_and_forwards_2_1_mpps(curves):
    for rate in (1.0e6, 1.5e6, HIGH):
        assert value(curves, "off", rate, "cpu.busy") > 0.99, rate
    assert value(curves, "off", 0.1e6, "cpu.busy") < 0.5
    assert value(curves, "off", 2.05e6, "loss_ratio") < 1e-3
    assert value(curves, "off", 2.3e6, "loss_ratio") > 0.03
    assert value(curves, "off", OVERLOAD, "throughput_pps") == pytest.approx(2.1e6, rel=0.02)
    # overload latency is set by the buffering
    assert value(curves, "off", OVERLOAD, "latency_us.mean") == pytest.approx(2300, rel=0.05)


def test_ixgbe_legacy_saves_cpu_costs_latency_keeps_throughput(curves):
    for rate in MEDIUM:
        assert (
            value(curves, "ixgbe-legacy", rate, "cpu.busy")
            < value(curves, "off", rate, "cpu.busy") - 0.05
        ), rate
    for rate in (0.5e6, 1.0e6):
        ratio = value(curves, "ixgbe-legacy", rate, "latency_us.mean") / value(
            curves, "off", rate, "latency_us.mean"
        )
        assert 4 < ratio < 40, (rate, ratio)  # about an order of magnitude on the plateau
    assert value(curves, "ixgbe-legacy", OVERLOAD, "throughput_pps") == pytest.approx(
        value(curves, "off", OVERLOAD, "throughput_pps"), rel=0.02
    )


def test_linear_latency_near_off_cpu_in_between(curves):
    for rate in MEDIUM:
        off = value(curves, "off", rate, "latency_us.mean")
        lin = value(curves, "linear", rate, "latency_us.mean")
        legacy = value(curves, "ixgbe-legacy", rate, "latency_us.mean")
        assert lin < off + 0.5 * (legacy - off), (rate, off, lin, legacy)
    for rate in (0.5e6, 1.0e6):
        cpu = {p: value(curves, p, rate, "cpu.busy") for p in ("off", "linear", "ixgbe-legacy")}
        assert cpu["ixgbe-legacy"] < cpu["linear"] <= cpu["off"] + 1e-9, (rate, cpu)


def test_linear_load_latency_product_below_legacy_at_medium_equal_at_the_ends(out):
    pll = pd.read_csv(out / "pll.csv").set_index("traffic.rate_pps")
    for rate in MEDIUM:
        assert pll.loc[rate, "linear"] < 0.8 * pll.loc[rate, "ixgbe-legacy"], rate
        assert pll.loc[rate, "difference"] > 0
    for rate in (LOW, OVERLOAD):
        assert pll.loc[rate, "linear"] == pytest.approx(pll.loc[rate, "ixgbe-legacy"], rel=0.1)


def test_newer_policies_keep_throughput_and_interrupt_no_more_than_itr_off(curves):
    """Beyond the paper: no adaptive policy loses throughput at overload, and none takes more
    interrupts than ITR off at light load."""
    for policy in ("ixgbe", "i40e", "dim", "soft"):
        assert value(curves, policy, OVERLOAD, "throughput_pps") == pytest.approx(
            value(curves, "off", OVERLOAD, "throughput_pps"), rel=0.02
        ), policy
        assert (
            value(curves, policy, 0.1e6, "irq_per_s")
            <= value(curves, "off", 0.1e6, "irq_per_s") * 1.01
        ), policy
