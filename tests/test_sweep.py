"""Sweeps: axes, common random numbers, statistics, outputs, executors, resume, warm-up."""

from __future__ import annotations

import json
import math
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
    _, _, metrics = irqlab.experiments.table_columns(df)
    assert "latency_us.p99" in metrics and "per_core.0.cpu.busy" in metrics
    for i in (0, 7, len(df) - 1):
        row = df.iloc[i]
        report = irqlab.report.flatten_report(irqlab.run(row_scenario(row.to_dict())))
        for m in metrics:
            value = math.nan if report[m] is None else report[m]  # nothing measured: NaN
            assert value == pytest.approx(row[m], rel=0, abs=0, nan_ok=True), m


def test_cli_rerun_prints_the_row(tmp_path):
    from click.testing import CliRunner

    from irqlab.cli import main

    df = small_sweep(out=tmp_path)
    res = CliRunner().invoke(
        main, ["rerun", str(tmp_path), "--point", "3", "--replication", "2", "--format", "json"]
    )
    assert res.exit_code == 0, res.output
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
    import irqlab.experiments.running as sw

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


# --- host topology: per-core columns, list-valued and numbered axes --------------------------

TWO_CORES = {
    **SMALL,
    "scheme": "napi",
    "host.cores": 2,
    "nic.queues": 2,
    "traffic.flows": 64,
}


def test_a_two_core_sweep_has_per_core_columns_with_intervals(tmp_path):
    runs = irqlab.sweep(
        base=TWO_CORES,
        axes={"traffic.rate_pps": [50_000, 150_000]},
        replications=3,
        executor="inline",
        out=tmp_path,
    )
    for col in ("per_core.1.cpu.busy", "per_core.1.latency_us.p99", "per_queue.1.irq_per_s"):
        assert col in runs.columns and runs[col].notna().all(), col
    assert set(runs["per_core.1.vectors"]) == {"[1]"}
    # the host-wide CPU shares are the mean of the cores'
    mean = (runs["per_core.0.cpu.busy"] + runs["per_core.1.cpu.busy"]) / 2
    np.testing.assert_allclose(runs["cpu.busy"], mean, rtol=1e-9)
    # per_core.1.* come right after per_core.0.*, before the queues
    cols = list(runs.columns)
    assert cols.index("per_core.0.counts.context_switches") < cols.index("per_core.1.core")
    assert cols.index("per_core.1.counts.context_switches") < cols.index("per_queue.0.queue")
    summary = pd.read_parquet(tmp_path / "summary.parquet")
    g = runs.groupby("point")["per_core.1.cpu.busy"]
    np.testing.assert_allclose(summary["per_core.1.cpu.busy"], g.mean(), rtol=1e-12)
    np.testing.assert_allclose(
        summary["per_core.1.cpu.busy.ci95"],
        stats.t.ppf(0.975, 2) * g.std(ddof=1) / np.sqrt(3),
        rtol=1e-9,
    )
    assert (summary["per_core.1.cpu.busy.ci95"] > 0).all()
    # a field that names an entry is carried as it is, never averaged
    assert list(summary["per_core.1.vectors"]) == ["[1]", "[1]"]
    assert "per_core.1.vectors.ci95" not in summary.columns
    assert "per_class.0.class.ci95" not in summary.columns
    assert "per_core.1.cpu.busy.ci95" in pd.read_csv(tmp_path / "summary.csv").columns


def test_a_cores_axis_gives_every_core_a_column_empty_where_it_does_not_exist():
    runs = irqlab.sweep(base=SMALL, axes={"host.cores": [1, 3]}, replications=2, executor="inline")
    one, three = runs[runs["host.cores"] == 1], runs[runs["host.cores"] == 3]
    assert one["per_core.2.cpu.busy"].isna().all()
    assert three["per_core.2.cpu.busy"].notna().all()
    assert (three["per_core.2.cpu.busy"] == 0).all()  # one queue: cores 1 and 2 stay idle
    s = irqlab.summarize(runs)
    assert math.isnan(s.loc[0, "per_core.2.cpu.busy"]) and s.loc[1, "per_core.2.cpu.busy"] == 0


def _affinity_sweep(out=None, **kw):
    args = {
        "base": TWO_CORES,
        "axes": {"nic.irq_affinity": [[0, 1], [1, 1]], "traffic.rate_pps": [50_000, 120_000]},
        "replications": 2,
        "executor": "inline",
        "out": out,
    }
    return irqlab.sweep(**{**args, **kw})


def test_a_sweep_over_irq_affinity_lists(tmp_path):
    runs = _affinity_sweep(tmp_path)
    assert list(runs["nic.irq_affinity"].drop_duplicates()) == ["[0, 1]", "[1, 1]"]
    assert runs.columns[2] == "nic.irq_affinity"  # the axes first, as always
    spread = runs[runs["nic.irq_affinity"] == "[0, 1]"]
    pinned = runs[runs["nic.irq_affinity"] == "[1, 1]"]
    assert set(spread["per_core.0.vectors"]) == {"[0]"}
    assert set(pinned["per_core.0.vectors"]) == {"[]"}
    assert set(pinned["per_core.1.vectors"]) == {"[0, 1]"}
    assert (pinned["per_core.0.cpu.irq"] == 0).all() and (spread["per_core.0.cpu.irq"] > 0).all()
    # the stored text groups like any parameter
    by = irqlab.summarize(runs).groupby("nic.irq_affinity")["per_core.1.cpu.busy"].mean()
    assert by["[1, 1]"] > by["[0, 1]"]
    described = json.loads((tmp_path / "sweep.json").read_text())
    assert described["axes"]["nic.irq_affinity"] == [[0, 1], [1, 1]]
    # point ids are a hash of the resolved point: stable, and distinct per point
    again = _affinity_sweep()
    assert list(again["point_id"]) == list(runs["point_id"])
    assert runs.drop_duplicates("point")["point_id"].nunique() == 4


def test_rerun_of_a_row_with_list_parameters_reproduces_the_report_exactly(tmp_path):
    from click.testing import CliRunner

    from irqlab.cli import main

    runs = _affinity_sweep(tmp_path)
    row = runs[(runs["point"] == 2) & (runs["replication"] == 1)].iloc[0]
    scenario = row_scenario(row.to_dict())
    assert scenario["nic.irq_affinity"] == [1, 1] and scenario["host.forward"] is False
    direct = irqlab.run(
        {**TWO_CORES, "nic.irq_affinity": [1, 1], "traffic.rate_pps": 50_000},
        {"run.replication": 1, "run.seed": int(row["run.seed"])},
    )
    assert irqlab.run(scenario) == direct
    res = CliRunner().invoke(
        main, ["rerun", str(tmp_path), "--point", "2", "--replication", "1", "--format", "json"]
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.output) == json.loads(json.dumps(direct))
    table = CliRunner().invoke(main, ["rerun", str(tmp_path), "--point", "2"])
    assert table.exit_code == 0 and "per core" in table.output


def test_a_sweep_over_an_app_field():
    runs = irqlab.sweep(
        base={**SMALL, "scheme": "napi", "app": [{"core": 0}]},
        axes={"app.0.cost_ns": [500, 4000]},
        replications=2,
        executor="inline",
    )
    assert list(runs["app.0.cost_ns"].drop_duplicates()) == [500.0, 4000.0]
    assert runs.columns[2] == "app.0.cost_ns"
    assert set(runs["app.0.core"]) == {0} and set(runs["app.0.flows"]) == {"[]"}
    s = irqlab.summarize(runs).set_index("app.0.cost_ns")
    assert s.loc[4000.0, "cpu.app"] > 4 * s.loc[500.0, "cpu.app"]
    assert s.loc[4000.0, "app_latency_us.mean"] > s.loc[500.0, "app_latency_us.mean"]
    assert s["per_app.0.goodput_bps.ci95"].notna().all()


def test_a_finished_topology_sweep_resumes_without_running(tmp_path, monkeypatch):
    first = _affinity_sweep(tmp_path)
    import irqlab.experiments.running as sw

    def fail(task):
        raise AssertionError("a finished run was run again")

    monkeypatch.setattr(sw, "run_replication", fail)
    pd.testing.assert_frame_equal(_affinity_sweep(tmp_path), first, check_exact=True)


@pytest.mark.parametrize(
    ("axes", "needle"),
    [
        ({"nic.irq_affinity": [0, 1]}, "axis is a list of lists, e.g. [[0, 1], [1, 0]]"),
        ({"nic.irq_affinity": [[0, 1], [0, 1]]}, "axes.nic.irq_affinity: the value [0, 1] repeats"),
        ({"app.0.cost_ns": [500, 500.0]}, "axes.app.0.cost_ns: the value 500.0 repeats"),
        ({"app.0.cots_ns": [1]}, "unknown key 'app.0.cots_ns' (did you mean 'app.0.cost_ns'?)"),
        ({"host.forward": ["yes"]}, 'host.forward = "yes": expected true or false'),
    ],
)
def test_bad_topology_axes_name_the_key(axes, needle):
    with pytest.raises(irqlab.ConfigError) as e:
        parse_axes(axes)
    assert needle in str(e.value)


def test_a_point_with_an_impossible_affinity_is_named_before_anything_runs(tmp_path):
    with pytest.raises(irqlab.ConfigError) as e:
        irqlab.sweep(
            base=TWO_CORES,
            axes={"nic.irq_affinity": [[0, 1], [0, 9]]},
            replications=1,
            executor="inline",
            out=tmp_path,
        )
    assert "nic.irq_affinity = [0, 9]" in str(e.value)
    assert "(at point 1: nic.irq_affinity=[0, 9])" in str(e.value)
    assert not (tmp_path / "runs.parquet").exists()


def test_precision_on_a_per_core_metric():
    df = irqlab.sweep(
        base={**TWO_CORES, "run.duration_ms": 10.0},
        axes={"traffic.rate_pps": [60_000]},
        replications=3,
        precision={"metrics": ["per_core.1.latency_us.mean"], "relative": 0.02},
        executor="inline",
    )
    s = irqlab.summarize(df)
    # three replications do not reach 2 % on core 1's mean latency; more are added until
    # they do
    assert s.loc[0, "n"] > 3
    assert s.loc[0, "per_core.1.latency_us.mean.rel"] <= 0.02 or s.loc[0, "n"] == 100


@pytest.mark.parametrize(
    ("metric", "needle"),
    [
        ("per_core.3.cpu.busy", "'per_core.3.cpu.busy' is not measured at point 0 (host.cores ="),
        ("per_app.0.goodput_bps", "'per_app.0.goodput_bps' is not measured at point 0"),
        ("per_core.1.cpu.bussy", "did you mean 'per_core.1.cpu.busy'"),
        ("per_core.0.vectors", "'per_core.0.vectors' is not a metric"),
    ],
)
def test_precision_metrics_must_exist_at_every_point(tmp_path, metric, needle):
    with pytest.raises(irqlab.ConfigError) as e:
        irqlab.sweep(
            base=TWO_CORES,
            axes={"traffic.rate_pps": [60_000]},
            precision={"metrics": [metric]},
            executor="inline",
            out=tmp_path,
        )
    assert needle in str(e.value) and "sweep.precision.metrics" in str(e.value)
    assert not (tmp_path / "journal.sqlite").exists()


def test_plot_a_per_core_metric_from_the_command_line(tmp_path):
    from click.testing import CliRunner

    from irqlab.cli import main

    _affinity_sweep(tmp_path)
    png = tmp_path / "core1.png"
    args = ["plot", str(tmp_path), "--x", "traffic.rate_pps", "--y", "per_core.1.cpu.busy"]
    r = CliRunner().invoke(main, [*args, "-o", str(png)])
    assert r.exit_code == 0, r.output
    assert png.read_bytes()[:4] == b"\x89PNG"
    fig = irqlab.plot(tmp_path, x="traffic.rate_pps", y="per_core.1.cpu.busy")
    ax = fig.axes[0]
    assert ax.get_ylabel() == "core 1: CPU busy (fraction)"
    labels = sorted(line.get_label() for line in ax.get_lines())
    assert labels == ["nic.irq_affinity=[0, 1]", "nic.irq_affinity=[1, 1]"]
    fig = irqlab.plot(
        tmp_path,
        x="traffic.rate_pps",
        y="per_core.1.cpu.busy",
        hue="nic.irq_affinity",
        where={"nic.irq_affinity": [1, 1]},
    )
    assert [line.get_label() for line in fig.axes[0].get_lines()] == ["[1, 1]"]
    r = CliRunner().invoke(main, [*args, "--where", "nic.irq_affinity=[0,1]", "-o", str(png)])
    assert r.exit_code == 0, r.output


def test_summarize_takes_a_results_folder_or_its_runs_file_and_names_what_it_takes(tmp_path):
    runs = small_sweep(replications=2, out=tmp_path)
    expected = irqlab.summarize(runs)
    for given in (str(tmp_path), tmp_path, tmp_path / "runs.parquet"):
        pd.testing.assert_frame_equal(irqlab.summarize(given), expected)
    for wrong in (None, 3, {"point": [0]}):
        with pytest.raises(irqlab.ConfigError, match=r"^runs: expected a sweep's runs table"):
            irqlab.summarize(wrong)
    with pytest.raises(irqlab.ConfigError, match=r"^runs: a summary already.*runs\.parquet"):
        irqlab.summarize(expected)
    with pytest.raises(irqlab.ConfigError, match=r"runs: not a sweep's runs table"):
        irqlab.summarize(pd.DataFrame({"x": [1.0]}))
    with pytest.raises(irqlab.ConfigError, match=r"elsewhere: no such file"):
        irqlab.summarize(tmp_path / "elsewhere")
