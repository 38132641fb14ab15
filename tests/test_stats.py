"""Sweep statistics: t intervals, per-point summaries, sequential stopping, MSER warm-up."""

from __future__ import annotations

import math
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from irqlab.experiments.statistics import (
    MserResult,
    ci_column,
    mser,
    precision_met,
    replications_needed,
    summarize,
    t_halfwidth,
)

T975_2 = st.t.ppf(0.975, 2)
T975_1 = st.t.ppf(0.975, 1)


# --- t_halfwidth ---------------------------------------------------------------------------


def test_t_halfwidth_matches_hand_computation():
    # t(0.975, 4) = 2.7764, s = sqrt(2.5) = 1.5811, hw = 2.7764 * 1.5811 / sqrt(5) = 1.9632
    hw = t_halfwidth([1, 2, 3, 4, 5])
    assert hw == pytest.approx(st.t.ppf(0.975, 4) * math.sqrt(2.5) / math.sqrt(5), rel=1e-12)
    assert hw == pytest.approx(1.9632, abs=1e-4)


def test_t_halfwidth_confidence_level():
    assert t_halfwidth([1, 2, 3, 4, 5], 0.99) == pytest.approx(
        st.t.ppf(0.995, 4) * math.sqrt(2.5) / math.sqrt(5), rel=1e-12
    )
    with pytest.raises(ValueError, match="confidence"):
        t_halfwidth([1, 2, 3], 1.0)


def test_t_halfwidth_small_samples_and_nans():
    assert math.isnan(t_halfwidth([]))
    assert math.isnan(t_halfwidth([3.0]))
    assert math.isnan(t_halfwidth([3.0, math.nan, None]))
    assert t_halfwidth([1, math.nan, 2, 3, None, 4, 5]) == pytest.approx(
        t_halfwidth([1, 2, 3, 4, 5])
    )
    assert t_halfwidth(np.full(7, 0.1)) == 0.0


def test_t_interval_coverage():
    rng = np.random.default_rng(20240607)
    samples = rng.normal(5.0, 2.0, size=(2000, 10))
    means = samples.mean(axis=1)
    hws = np.array([t_halfwidth(s) for s in samples])
    coverage = np.mean(np.abs(means - 5.0) <= hws)
    assert 0.93 <= coverage <= 0.97


# --- summarize -----------------------------------------------------------------------------


def hand_runs() -> pd.DataFrame:
    """Points 0 and 1 with 3 replications, point 2 with one; rows deliberately out of order."""
    rows = [
        (1, 0, "irq", 2000.0, 5, 2.0),
        (0, 0, "napi", 1000.0, 10, 1.0),
        (2, 0, "poll", 3000.0, 0, math.nan),
        (1, 1, "irq", 2000.0, 5, 4.0),
        (0, 1, "napi", 1000.0, 20, math.nan),
        (0, 2, "napi", 1000.0, 30, 3.0),
        (1, 2, "irq", 2000.0, 5, 6.0),
    ]
    df = pd.DataFrame(
        rows,
        columns=[
            "point",
            "replication",
            "scheme",
            "traffic.rate_pps",
            "packets.delivered",
            "latency_us.mean",
        ],
    )
    df.insert(2, "point_id", [f"p{p}" for p in df["point"]])
    df["run.seed"] = 100 * df["point"] + df["replication"]
    return df


def test_summarize_exact_values_and_layout():
    runs = hand_runs()
    assert runs["packets.delivered"].dtype == np.int64
    out = summarize(
        runs, ["scheme", "traffic.rate_pps"], metrics=["packets.delivered", "latency_us.mean"]
    )
    assert list(out.columns) == [
        "point",
        "scheme",
        "traffic.rate_pps",
        "point_id",
        "n",
        "packets.delivered",
        "packets.delivered.std",
        "packets.delivered.ci95",
        "packets.delivered.rel",
        "latency_us.mean",
        "latency_us.mean.std",
        "latency_us.mean.ci95",
        "latency_us.mean.rel",
    ]
    assert out["point"].tolist() == [0, 1, 2]
    assert out["scheme"].tolist() == ["napi", "irq", "poll"]
    assert out["traffic.rate_pps"].tolist() == [1000.0, 2000.0, 3000.0]
    assert out["point_id"].tolist() == ["p0", "p1", "p2"]
    assert out["n"].tolist() == [3, 3, 1]
    for c in out.columns[5:]:
        assert out[c].dtype == np.float64, c

    pk = "packets.delivered"
    ci_pk0 = T975_2 * 10.0 / math.sqrt(3)
    np.testing.assert_allclose(out[pk], [20.0, 5.0, 0.0], rtol=1e-12)
    np.testing.assert_allclose(out[f"{pk}.std"], [10.0, 0.0, np.nan], rtol=1e-12)
    np.testing.assert_allclose(out[f"{pk}.ci95"], [ci_pk0, 0.0, np.nan], rtol=1e-12)
    # point 2: a zero mean has no relative precision
    np.testing.assert_allclose(out[f"{pk}.rel"], [ci_pk0 / 20.0, 0.0, np.nan], rtol=1e-12)

    lat = "latency_us.mean"
    ci_l0 = T975_1 * math.sqrt(2.0) / math.sqrt(2)  # the NaN leaves two values
    ci_l1 = T975_2 * 2.0 / math.sqrt(3)
    np.testing.assert_allclose(out[lat], [2.0, 4.0, np.nan], rtol=1e-12)
    np.testing.assert_allclose(out[f"{lat}.std"], [math.sqrt(2.0), 2.0, np.nan], rtol=1e-12)
    np.testing.assert_allclose(out[f"{lat}.ci95"], [ci_l0, ci_l1, np.nan], rtol=1e-12)
    np.testing.assert_allclose(out[f"{lat}.rel"], [ci_l0 / 2.0, ci_l1 / 4.0, np.nan], rtol=1e-12)


def test_summarize_agrees_with_t_halfwidth():
    runs = hand_runs()
    out = summarize(runs, ["scheme"], metrics=["latency_us.mean"])
    for _, row in out.iterrows():
        values = runs.loc[runs["point"] == row["point"], "latency_us.mean"]
        expected = t_halfwidth(values)
        if math.isnan(expected):
            assert math.isnan(row["latency_us.mean.ci95"])
        else:
            assert row["latency_us.mean.ci95"] == pytest.approx(expected, rel=1e-12)


def test_summarize_ci99_naming():
    assert ci_column("cpu.busy") == "cpu.busy.ci95"
    assert ci_column("cpu.busy", 0.99) == "cpu.busy.ci99"
    assert ci_column("cpu.busy", 0.9) == "cpu.busy.ci90"
    out = summarize(hand_runs(), ["scheme"], metrics=["latency_us.mean"], confidence=0.99)
    assert "latency_us.mean.ci95" not in out.columns
    assert out["latency_us.mean.ci99"].iloc[1] == pytest.approx(
        st.t.ppf(0.995, 2) * 2.0 / math.sqrt(3), rel=1e-12
    )


def test_summarize_default_metrics_skip_ids_params_bools_and_strings():
    runs = hand_runs().drop(columns=["run.seed"])
    runs["ok"] = True
    runs["throughput_pps"] = 1.5
    out = summarize(runs, ["scheme", "traffic.rate_pps"])
    means = [c for c in out.columns[5:] if c.rsplit(".", 1)[-1] not in {"std", "ci95", "rel"}]
    assert means == ["packets.delivered", "latency_us.mean", "throughput_pps"]
    assert out["throughput_pps"].tolist() == [1.5, 1.5, 1.5]
    assert out["throughput_pps.std"].iloc[0] == 0.0


def test_summarize_rejects_missing_columns():
    with pytest.raises(KeyError, match=r"nic\.ring"):
        summarize(hand_runs(), ["nic.ring"], metrics=["latency_us.mean"])
    with pytest.raises(ValueError, match="both parameter and metric"):
        summarize(hand_runs(), ["scheme", "latency_us.mean"], metrics=["latency_us.mean"])


def test_summarize_empty_runs():
    runs = hand_runs().iloc[0:0]
    out = summarize(runs, ["scheme"], metrics=["latency_us.mean"])
    assert len(out) == 0
    assert list(out.columns)[:4] == ["point", "scheme", "point_id", "n"]
    assert out["latency_us.mean"].dtype == np.float64


def test_summarize_large_sweep_is_unfragmented():
    points, reps, n_metrics = 200, 3, 300
    rng = np.random.default_rng(7)
    point = np.repeat(np.arange(points), reps)
    data = {"point": point, "replication": np.tile(np.arange(reps), points)}
    data["traffic.rate_pps"] = 1000.0 * point
    metric_names = [f"m{i}.value" for i in range(n_metrics)]
    for name in metric_names:
        data[name] = rng.normal(size=points * reps)
    runs = pd.DataFrame(data)
    out = summarize(runs, ["traffic.rate_pps"])  # a PerformanceWarning would fail here
    assert out.shape == (points, 3 + 4 * n_metrics)
    expected = runs.groupby("point")["m123.value"].agg(["mean", "std"])
    np.testing.assert_allclose(out["m123.value"], expected["mean"], rtol=1e-12)
    np.testing.assert_allclose(out["m123.value.std"], expected["std"], rtol=1e-10)


# --- sequential stopping -------------------------------------------------------------------


def values_with(mean: float, hw: float, n: int) -> np.ndarray:
    """``n`` values whose sample mean and 95 % half-width are ``mean`` and ``hw``."""
    z = np.random.default_rng(3).normal(size=n)
    z = (z - z.mean()) / z.std(ddof=1)
    s = hw * math.sqrt(n) / st.t.ppf(0.975, n - 1)
    return mean + s * z


def test_replications_needed_classic_estimate():
    v = values_with(100.0, 4.0, 10)
    assert np.mean(v) == pytest.approx(100.0)
    assert t_halfwidth(v) == pytest.approx(4.0)
    assert replications_needed(v, 0.01) == 160  # ceil(10 * (4 / 1)^2)
    assert replications_needed(v, 0.02) == 40  # ceil(10 * (4 / 2)^2)
    assert replications_needed(v, 0.03) == math.ceil(10 * (4.0 / 3.0) ** 2)
    assert not precision_met(v, 0.03)


def test_replications_needed_when_precision_met():
    v = values_with(100.0, 4.0, 10)
    assert precision_met(v, 0.05)
    assert replications_needed(v, 0.05) == 10
    assert replications_needed([7.0, 7.0, 7.0], 0.001) == 3


def test_replications_needed_zero_mean_and_too_few_values():
    assert replications_needed([0.0, 0.0, 0.0, 0.0], 0.01) == 4
    assert precision_met([0.0, 0.0, 0.0], 0.01)
    assert replications_needed([-1.0, 1.0, -1.0, 1.0], 0.01) == sys.maxsize
    assert not precision_met([-1.0, 1.0, -1.0, 1.0], 0.01)
    assert replications_needed([5.0], 0.01) == sys.maxsize
    assert replications_needed([5.0, math.nan], 0.01) == sys.maxsize
    assert not precision_met([5.0], 0.5)
    assert not precision_met([5.0, math.nan], 0.5)
    with pytest.raises(ValueError, match="relative"):
        replications_needed([1.0, 2.0], 0.0)


# --- MSER ----------------------------------------------------------------------------------


def naive_mser(series: np.ndarray, batch: int) -> np.ndarray:
    """MSER(d) straight from the definition, O(k²)."""
    k = len(series) // batch
    z = series[: k * batch].reshape(k, batch).mean(axis=1)
    out = np.full(k, np.nan)
    for d in range(k - 1):
        tail = z[d:]
        out[d] = np.sum((tail - tail.mean()) ** 2) / (k - d) ** 2
    return out


def test_mser_stationary_series_keeps_almost_everything():
    x = np.random.default_rng(11).normal(3.0, 1.0, size=5000)
    r = mser(x)
    assert isinstance(r, MserResult)
    assert r.batches == 1000
    assert r.truncate == 5 * r.d
    assert r.truncate < 0.05 * len(x)
    assert r.reliable


def test_mser_deletes_initial_transient():
    rng = np.random.default_rng(12)
    i = np.arange(1000)
    x = np.concatenate([10.0 * np.exp(-i / 100) + rng.normal(size=1000), rng.normal(size=4000)])
    r = mser(x)
    assert 200 <= r.truncate <= 1500
    assert r.reliable
    # the mean after deletion is far less biased than the raw mean
    assert abs(x[r.truncate :].mean()) < 0.5 * abs(x.mean())


def test_mser_matches_naive_definition():
    x = np.random.default_rng(13).exponential(2.0, size=200) + np.linspace(3.0, 0.0, 200)
    for batch in (1, 5, 7):
        r = mser(x, batch=batch)
        ref = naive_mser(x, batch)
        k = len(x) // batch
        assert r.batches == k
        assert r.statistic.dtype == np.float64
        assert r.statistic.shape == (k,)
        np.testing.assert_allclose(r.statistic, ref, rtol=1e-9, atol=1e-12, equal_nan=True)
        assert np.isnan(r.statistic[-1])
        assert r.d == int(np.argmin(ref[: k // 2 + 1]))


def test_mser_drops_incomplete_batch_and_flags_short_runs():
    x = np.random.default_rng(14).normal(size=5003)
    assert mser(x).batches == 1000
    assert np.array_equal(mser(x).statistic, mser(x[:5000]).statistic, equal_nan=True)
    # a series still drifting at the end: the minimum sits at the edge of the search
    ramp = mser(np.arange(1000.0))
    assert ramp.d == 100
    assert not ramp.reliable


def test_mser_input_errors():
    with pytest.raises(ValueError, match="finite"):
        mser([1.0, 2.0, math.nan, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0])
    with pytest.raises(ValueError, match="finite"):
        mser([1.0, math.inf] * 10)
    with pytest.raises(ValueError, match="at least 2 batches"):
        mser(np.ones(9), batch=5)
    with pytest.raises(ValueError, match="batch"):
        mser(np.ones(100), batch=0)
