"""Sweeps: axes, common random numbers, statistics, outputs, executors, resume, warm-up."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import irqlab
from conftest import SALAH, salah_cliff_pps
from irqlab.analytic.mm1b import mm1b
from irqlab.experiments import parse_axes, parse_sweep, row_scenario

SMALL = {"scheme": "ideal", "run.duration_ms": 5.0, "run.warmup_ms": 1.0}


def small_sweep(**kw):
    args = {
        "base": SMALL,
        "axes": {"traffic.rate_pps": [50_000, 150_000], "scheme": ["ideal", "irq", "napi"]},
        "replications": 3,
        "executor": "inline",
    }
    args.update(kw)
    return irqlab.sweep(**args)


# --- axes and the sweep file ----------------------------------------------------------------


def test_ranges_include_the_end_and_keep_integers():
    (a,) = parse_axes({"nic.ring_descriptors": {"from": 64, "to": 256, "step": 64}})
    assert a.values == (64, 128, 192, 256)
    assert all(isinstance(v, int) for v in a.values)
    (b,) = parse_axes({"traffic.rate_pps": {"from": 0.1, "to": 0.7, "step": 0.2}})
    assert b.values == (0.1, 0.3, 0.5, 0.7)
    (c,) = parse_axes({"traffic.rate_pps": {"from": 1e3, "to": 1e6, "num": 4, "log": True}})
    assert c.values == (1e3, 1e4, 1e5, 1e6)
    (d,) = parse_axes({"traffic": {"rate_pps": {"from": 10, "to": 20, "num": 3}}})
    assert d.key == "traffic.rate_pps" and d.values == (10, 15, 20)


def test_points_are_the_product_of_the_axes_first_axis_slowest(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(
        '[base]\nscheme = "irq"\n[axes]\nscheme = ["ideal", "napi"]\n'
        '"traffic.rate_pps" = [1000, 2000, 3000]\n'
    )
    spec = parse_sweep(f)
    pts = spec.points()
    assert len(pts) == 6
    assert [(p["scheme"], p["traffic.rate_pps"]) for p in pts[:4]] == [
        ("ideal", 1000),
        ("ideal", 2000),
        ("ideal", 3000),
        ("napi", 1000),
    ]


@pytest.mark.parametrize(
    ("text", "key", "needle"),
    [
        ("[sweep]\nreplication = 3\n", "sweep.replication", "did you mean 'replications'"),
        ("[sweeps]\n", "sweeps", "unknown section"),
        ("[sweep]\nreplications = 0\n", "sweep.replications", "[1, 65536]"),
        ("[axes]\n'traffic.rate' = [1]\n", "traffic.rate", "did you mean 'traffic.rate_pps'"),
        ("[axes]\n'traffic.rate_pps' = [-5]\n", "traffic.rate_pps", "must be"),
        ("[axes]\n'traffic.rate_pps' = {from = 5, to = 1, step = 1}\n", "axes.", "below"),
        ("[axes]\n'traffic.rate_pps' = {from = 1, to = 5, step = 0}\n", "step", "(0.0"),
        ("[axes]\n'traffic.rate_pps' = {from = 1, to = 5, stp = 1}\n", "axes.", "'step'"),
        ("[axes]\n'traffic.rate_pps' = []\n", "traffic.rate_pps", "empty"),
        ("[axes]\n'run.seed' = [1, 2]\n", "run.seed", "sets run.seed itself"),
        ("[sweep]\nwarmup = 'soon'\n", "sweep.warmup", '"auto"'),
        (
            "[sweep.precision]\nmetrics = ['latency_us.mena']\n",
            "sweep.precision.metrics",
            "did you mean 'latency_us.mean'",
        ),
    ],
)
def test_bad_sweep_files_name_the_key(tmp_path, text, key, needle):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(irqlab.ConfigError) as e:
        parse_sweep(f)
    assert key in str(e.value) and needle in str(e.value)


def test_a_bad_point_is_reported_before_anything_runs(tmp_path):
    # Each value is valid alone; the core rejects the combination at one point.
    with pytest.raises(irqlab.ConfigError) as e:
        irqlab.sweep(
            base={"run.duration_ms": 5.0},
            axes={"kernel.netdev_budget_usecs": [0, 1]},
            replications=1,
            executor="inline",
            out=tmp_path / "o",
        )
    assert "kernel.netdev_budget_usecs" in str(e.value) and "point 1" in str(e.value)
    assert not (tmp_path / "o" / "runs.parquet").exists()


# --- replications and common random numbers -------------------------------------------------


def test_replications_differ_and_share_arrivals_across_schemes():
    df = small_sweep()
    assert len(df) == 2 * 3 * 3
    assert df.groupby(["point", "replication"]).size().max() == 1
    for _, g in df.groupby("traffic.rate_pps"):
        by_rep = g.groupby("replication")["packets.offered"]
        # common random numbers: every scheme sees the same arrivals in a replication …
        assert (by_rep.nunique() == 1).all()
        # … and replications are independent draws
        assert g.groupby("replication")["packets.offered"].first().nunique() == 3
    assert (df["run.seed"] == df["run.seed"].iloc[0]).all()
    assert list(df["run.replication"]) == list(df["replication"])


def test_the_sweep_seed_changes_every_replication():
    a = small_sweep(seed=1)
    b = small_sweep(seed=2)
    assert (a["packets.offered"] != b["packets.offered"]).sum() >= len(a) // 2


def test_every_row_reruns_alone_to_the_same_metrics(tmp_path):
    df = small_sweep(out=tmp_path)
    metrics = [c for c in irqlab.experiments.metric_names() if c in df.columns]
    for i in (0, 7, len(df) - 1):
        row = df.iloc[i]
        report = irqlab.report.flatten_report(irqlab.run(row_scenario(row.to_dict())))
        for m in metrics:
            assert report[m] == pytest.approx(row[m], rel=0, abs=0, nan_ok=True), m


def test_cli_rerun_prints_the_row(tmp_path):
    from click.testing import CliRunner

    from irqlab.cli import main

    df = small_sweep(out=tmp_path)
    res = CliRunner().invoke(
        main, ["rerun", str(tmp_path), "--point", "3", "--replication", "2", "--format", "json"]
    )
    assert res.exit_code == 0, res.output
    import json

    report = json.loads(res.output)
    row = df[(df["point"] == 3) & (df["replication"] == 2)].iloc[0]
    assert report["packets"]["delivered"] == row["packets.delivered"]
    assert report["latency_us"]["p99"] == row["latency_us.p99"]
    bad = CliRunner().invoke(main, ["rerun", str(tmp_path), "--point", "99"])
    assert bad.exit_code == 2 and "no row with point 99" in bad.output


# --- statistics and output files ------------------------------------------------------------


def test_outputs_hold_runs_and_summary(tmp_path):
    df = small_sweep(out=tmp_path)
    runs = pd.read_parquet(tmp_path / "runs.parquet")
    pd.testing.assert_frame_equal(runs, df)
    summary = pd.read_parquet(tmp_path / "summary.parquet")
    csv = pd.read_csv(tmp_path / "summary.csv")
    assert len(summary) == len(csv) == 6
    assert list(summary["n"]) == [3] * 6
    g = df.groupby("point")["latency_us.mean"]
    np.testing.assert_allclose(summary["latency_us.mean"], g.mean(), rtol=1e-12)
    t = stats.t.ppf(0.975, 2)
    np.testing.assert_allclose(
        summary["latency_us.mean.ci95"], t * g.std(ddof=1) / np.sqrt(3), rtol=1e-9
    )
    np.testing.assert_allclose(
        summary["latency_us.mean.rel"],
        summary["latency_us.mean.ci95"] / summary["latency_us.mean"],
        rtol=1e-12,
    )
    np.testing.assert_allclose(csv["throughput_pps"], summary["throughput_pps"], rtol=1e-15)
    # parameters and seed on every row, so any row can be re-run
    for col in ("scheme", "traffic.rate_pps", "run.seed", "run.replication", "nic.itr_us"):
        assert col in runs.columns
    assert "scheme" in summary.columns and "run.replication" not in summary.columns


def _keyed(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(["point", "replication"]).reset_index(drop=True)


@pytest.mark.slow
def test_results_do_not_depend_on_the_executor():
    kw = {
        "base": {**SMALL, "run.duration_ms": 4.0},
        "axes": {"traffic.rate_pps": [60_000, 180_000], "scheme": ["irq", "napi"]},
        "replications": 3,
        "warmup": "auto",
        "precision": {"metrics": ["latency_us.mean"], "relative": 0.05, "max_replications": 8},
    }
    inline = irqlab.sweep(**kw, executor="inline")
    assert inline.groupby("point").size().max() > 3  # sequential stopping did add runs
    for executor, workers in (("process", 1), ("process", 2), ("dask", 2)):
        other = irqlab.sweep(**kw, executor=executor, workers=workers)
        pd.testing.assert_frame_equal(other, inline, check_exact=True, obj=executor)


# --- resume ---------------------------------------------------------------------------------


def _journal_rows(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=5) as db:
            return db.execute("SELECT count(*) FROM runs").fetchone()[0]
    except sqlite3.OperationalError:  # the table is not created yet
        return 0


@pytest.mark.slow
def test_a_killed_sweep_resumes_to_the_uninterrupted_result(tmp_path):
    f = tmp_path / "kill_sweep.toml"
    f.write_text(
        "[sweep]\nreplications = 4\nseed = 7\n"
        '[base]\nscheme = "napi"\nrun.duration_ms = 60\nrun.warmup_ms = 5\n'
        "[axes]\n'traffic.rate_pps' = {from = 100_000, to = 400_000, step = 20_000}\n"
        "'nic.itr_us' = [0, 20]\n"
    )
    total = 16 * 2 * 4
    killed = tmp_path / "killed"
    cmd = [sys.executable, "-m", "irqlab.cli", "sweep", str(f), "--workers", "2"]
    proc = subprocess.Popen(
        [*cmd, "--out", str(killed), "--no-progress"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while _journal_rows(killed / "journal.sqlite") < 20:
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline, "the sweep did not start"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    done = _journal_rows(killed / "journal.sqlite")
    assert 20 <= done < total, "kill the sweep while it runs"
    assert not (killed / "runs.parquet").exists()
    # rerunning the same command resumes …
    resumed = subprocess.run(
        [*cmd, "--out", str(killed), "--no-progress"], capture_output=True, check=True
    )
    assert resumed.returncode == 0
    assert _journal_rows(killed / "journal.sqlite") == total
    # … to exactly what an uninterrupted sweep gives
    clean = irqlab.sweep(f, out=tmp_path / "clean", workers=2)
    runs = pd.read_parquet(killed / "runs.parquet")
    assert not runs.duplicated(["point", "replication"]).any()
    pd.testing.assert_frame_equal(runs, clean, check_exact=True)


def test_a_finished_sweep_is_not_run_again(tmp_path, monkeypatch):
    first = small_sweep(out=tmp_path)
    import irqlab.experiments as sw

    def fail(task):
        raise AssertionError("a finished run was run again")

    monkeypatch.setattr(sw, "run_replication", fail)
    again = small_sweep(out=tmp_path)
    pd.testing.assert_frame_equal(again, first)
    # --fresh discards the journal and runs everything again
    with pytest.raises(AssertionError, match="run again"):
        small_sweep(out=tmp_path, resume=False)


# --- warm-up detection and sequential stopping ----------------------------------------------


def _overloaded(warmup):
    return irqlab.sweep(
        base={**SALAH, "scheme": "ideal", "run.duration_ms": 200.0},
        axes={"traffic.rate_pps": [0.3 * 187_266, 1.2 * 187_266]},
        replications=2,
        warmup=warmup,
        executor="inline",
    )


def test_mser_finds_the_transient_of_a_filling_ring():
    # At 1.2× capacity the 1024-slot ring fills in 1024 / (0.2 μ) ≈ 27 ms, during which the
    # latency climbs; after that it is stationary. At 0.3× there is no real transient.
    df = _overloaded("auto").drop_duplicates("point").set_index("point")
    low, high = df.loc[0], df.loc[1]
    assert low["run.warmup_ms"] < 5
    assert 15 < high["run.warmup_ms"] < 80
    assert low["warmup.method"] == high["warmup.method"] == "mser5"
    assert bool(high["warmup.reliable"])
    # the measured window is the asked duration after the detected warm-up
    assert high["measured_s"] == pytest.approx(0.2)


def test_points_with_their_own_warmup_still_plot_one_line_per_scheme():
    df = irqlab.sweep(
        base={**SMALL, "run.duration_ms": 10.0},
        axes={"scheme": ["irq", "napi"], "traffic.rate_pps": [30_000, 120_000, 170_000]},
        replications=2,
        warmup="auto",
        executor="inline",
    )
    assert df["run.warmup_ms"].nunique() > 1
    for data in (df, irqlab.summarize(df)):
        fig = irqlab.plot(data, x="traffic.rate_pps", y="latency_us.mean", hue="scheme")
        assert len(fig.axes[0].get_lines()) == 2


def test_sequential_stopping_reaches_the_precision_or_the_cap():
    df = irqlab.sweep(
        base={**SMALL, "run.duration_ms": 10.0},
        axes={"traffic.rate_pps": [20_000, 100_000, 170_000]},
        replications=3,
        precision={"metrics": ["latency_us.mean", "throughput_pps"], "relative": 0.02},
        executor="inline",
    )
    s = irqlab.summarize(df)
    n = s["n"].to_numpy()
    assert n.min() >= 3 and n.max() > 3 and len(set(n)) > 1
    for m in ("latency_us.mean", "throughput_pps"):
        met = s[f"{m}.rel"] <= 0.02
        assert (met | (s["n"] == 100)).all(), s[[m, f"{m}.rel", "n"]]


# --- agreement with theory through the sweep ------------------------------------------------


@pytest.mark.slow
def test_ideal_sweep_intervals_cover_mm1b():
    mu = 1e9 / SALAH["platform.proto_ns"]
    loads = [0.2, 0.4, 0.6, 0.8, 0.9, 1.0, 1.1, 1.3]
    df = irqlab.sweep(
        base={
            **SALAH,
            "scheme": "ideal",
            "nic.ring_descriptors": 16,
            "run.duration_ms": 200.0,
            "run.warmup_ms": 5.0,
        },
        axes={"traffic.rate_pps": [rho * mu for rho in loads]},
        replications=10,
        seed=2025,
    )
    s = irqlab.summarize(df)
    assert list(s["n"]) == [10] * len(loads)
    misses = []
    for _, row in s.iterrows():
        q = mm1b(row["traffic.rate_pps"], mu, 16)
        expected = q.mean_sojourn_s * 1e6
        if abs(row["latency_us.mean"] - expected) > row["latency_us.mean.ci95"]:
            misses.append((row["traffic.rate_pps"] / mu, row["latency_us.mean"], expected))
        # 99.9% intervals: 3.3 / 2.26 of the 95% half-width (t with 9 degrees of freedom)
        wide = row["latency_us.mean.ci95"] * stats.t.ppf(0.9995, 9) / stats.t.ppf(0.975, 9)
        assert abs(row["latency_us.mean"] - expected) <= wide
        assert row["latency_us.mean.rel"] < 0.05
    assert len(misses) <= 1, misses


# --- the example ----------------------------------------------------------------------------


def test_the_example_sweep_shows_livelock(tmp_path):
    example = Path(__file__).parent.parent / "examples" / "livelock_sweep.toml"
    df = irqlab.sweep(example, out=tmp_path, replications=2)
    s = irqlab.summarize(df)
    irq = s[s["scheme"] == "irq"].set_index("traffic.rate_pps")["throughput_pps"]
    napi = s[s["scheme"] == "napi"].set_index("traffic.rate_pps")["throughput_pps"]
    peak = irq.idxmax()
    assert abs(peak - salah_cliff_pps()) <= 20_000
    assert irq.iloc[-1] < 0.7 * irq.max()  # livelock: throughput falls past the cliff
    assert napi.iloc[-1] == pytest.approx(187_000, rel=0.02)  # NAPI holds the maximum


@pytest.mark.parametrize(
    ("kw", "needle"),
    [({"executor": "slurm"}, "executor = 'slurm'"), ({"workers": 0}, "workers = 0")],
)
def test_a_bad_executor_is_refused_before_anything_runs(tmp_path, kw, needle):
    with pytest.raises(irqlab.ConfigError, match=needle):
        small_sweep(out=tmp_path, **kw)
    assert not (tmp_path / "journal.sqlite").exists()
