"""Sweep figures: panels, lines, labels, error bars, inputs and files, on synthetic sweeps."""

from __future__ import annotations

import ast
import io
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.ticker import EngFormatter

import irqlab.figures
from conftest import confidence_interval
from irqlab.figures import label, plot

SCHEMES = ("interrupt", "napi")
RATES = (10_000.0, 50_000.0, 100_000.0, 200_000.0, 400_000.0)
METRICS = ("latency_us.p99", "cpu.busy", "throughput_pps")
T4 = 2.776  # Student t, 97.5 % quantile, 4 degrees of freedom (n = 5)


def make_summary(seed: int = 0, itr_us: int = 0) -> pd.DataFrame:
    """2 schemes × 5 rates, one row per point, rows shuffled so that x is out of order."""
    rng = np.random.default_rng(seed)
    rows = []
    for scheme in SCHEMES:
        for rate in RATES:
            row: dict = {
                "scheme": scheme,
                "traffic.rate_pps": rate,
                "traffic.kind": "poisson",
                "nic.itr_us": itr_us,
                "run.duration_ms": 100,
                "n": 5,
            }
            means = {
                "latency_us.p99": rng.uniform(5, 500),
                "cpu.busy": rng.uniform(0, 1),
                "throughput_pps": rate * rng.uniform(0.9, 1.0),
            }
            for m, v in means.items():
                std = rng.uniform(0.01, 0.1) * v
                row |= {m: v, f"{m}.std": std, f"{m}.ci95": T4 * std / math.sqrt(5)}
                row[f"{m}.rel"] = row[f"{m}.ci95"] / v
            rows.append(row)
    df = pd.DataFrame(rows).sample(frac=1, random_state=seed).reset_index(drop=True)
    df.insert(0, "point", range(len(df)))
    df.insert(1, "point_id", [f"p{i:03d}" for i in range(len(df))])
    return df


def make_runs(seed: int = 1) -> pd.DataFrame:
    """2 schemes × 4 rates × 3 replications, one row per replication."""
    rng = np.random.default_rng(seed)
    rows = []
    for point, (scheme, rate) in enumerate((s, r) for s in SCHEMES for r in RATES[:4]):
        for rep in range(3):
            rows.append(
                {
                    "point": point,
                    "replication": rep,
                    "seed": 1000 * point + rep,
                    "scheme": scheme,
                    "traffic.rate_pps": rate,
                    "nic.ring_descriptors": 1024,
                    # an outcome that happens to be equal across replications: not a parameter
                    "offered_pps": rate,
                    "latency_us.p99": rng.uniform(5, 500),
                    "cpu.busy": rng.uniform(0, 1),
                }
            )
    return pd.DataFrame(rows).sample(frac=1, random_state=seed).reset_index(drop=True)


def lines_of(ax) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each data line of a panel by its label: (x, y)."""
    return {
        line.get_label(): (np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata()))
        for line in ax.get_lines()
    }


def bar_segments(ax) -> list[np.ndarray]:
    """The vertical error-bar segments of a panel, each [[x, low], [x, high]]."""
    return [s for c in ax.collections if isinstance(c, LineCollection) for s in c.get_segments()]


def render(fig) -> bytes:
    """Draws the figure for real, where matplotlib would complain about what it cannot show."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=20)
    return buf.getvalue()


def test_one_panel_per_metric_and_one_line_per_scheme():
    fig = plot(make_summary(), x="traffic.rate_pps", y=list(METRICS), hue="scheme")
    axes = fig.axes
    assert len(axes) == len(METRICS)
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4, 3.2 * len(METRICS)))
    assert axes[0].get_shared_x_axes().joined(axes[0], axes[-1])
    for ax in axes:
        assert len(ax.get_lines()) == len(SCHEMES)
        legend = ax.get_legend()
        assert [t.get_text() for t in legend.get_texts()] == list(SCHEMES)
        assert legend.get_title().get_text() == "scheme"


def test_single_metric_gives_single_panel():
    fig = plot(make_summary(), x="traffic.rate_pps", y="cpu.busy", hue="scheme")
    assert len(fig.axes) == 1
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4, 3.2))


def test_axis_labels_carry_units():
    fig = plot(make_summary(), x="traffic.rate_pps", y=["latency_us.p99", "cpu.busy"], hue="scheme")
    top, bottom = fig.axes
    assert "µs" in top.get_ylabel()
    assert "fraction" in bottom.get_ylabel()
    assert "packets/s" in bottom.get_xlabel()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("traffic.rate_pps", "offered load (packets/s)"),
        ("throughput_pps", "throughput (packets/s)"),
        ("offered_pps", "offered rate (packets/s)"),
        ("latency_us.p99", "latency p99 (µs)"),
        ("latency_us.mean", "latency mean (µs)"),
        ("cpu.irq", "CPU irq (fraction)"),
        ("irq_per_s", "IRQ rate (1/s)"),
        ("polls_per_s", "poll rate (1/s)"),
        ("loss_ratio", "loss ratio"),
        ("cycles_per_packet", "cycles per packet"),
        ("load_latency_product", "load-latency product (cycles·µs)"),
        ("packets.delivered", "packets delivered"),
        ("nic.itr_us", "nic.itr (µs)"),
        ("platform.irq_ns", "platform.irq (ns)"),
        ("run.duration_ms", "run.duration (ms)"),
        ("traffic.size_bytes", "traffic.size (bytes)"),
        ("nic.ring_descriptors", "nic.ring_descriptors"),
        ("scheme", "scheme"),
    ],
)
def test_label(name, expected):
    assert label(name) == expected


def test_rates_read_with_engineering_prefixes_unless_log():
    df = make_summary()
    fig = plot(df, x="traffic.rate_pps", y=["throughput_pps", "cpu.busy"], hue="scheme")
    assert isinstance(fig.axes[-1].xaxis.get_major_formatter(), EngFormatter)
    assert isinstance(fig.axes[0].yaxis.get_major_formatter(), EngFormatter)
    assert not isinstance(fig.axes[1].yaxis.get_major_formatter(), EngFormatter)
    fig = plot(df, x="traffic.rate_pps", y="throughput_pps", hue="scheme", logx=True)
    assert not isinstance(fig.axes[-1].xaxis.get_major_formatter(), EngFormatter)


def test_log_scales_apply_to_every_panel():
    df = make_summary()
    fig = plot(df, x="traffic.rate_pps", y=list(METRICS), hue="scheme")
    assert {ax.get_xscale() for ax in fig.axes} == {"linear"}
    assert {ax.get_yscale() for ax in fig.axes} == {"linear"}
    fig = plot(df, x="traffic.rate_pps", y=list(METRICS), hue="scheme", logx=True, logy=True)
    assert {ax.get_xscale() for ax in fig.axes} == {"log"}
    assert {ax.get_yscale() for ax in fig.axes} == {"log"}
    render(fig)


@pytest.mark.parametrize("band", [False, True])
def test_logy_skips_non_positive_values_quietly(band):
    df = make_summary()
    napi = df.index[df["scheme"] == "napi"]
    df.loc[napi[0], "cpu.busy"] = 0.0
    df.loc[napi[1], "cpu.busy"] = -1.0
    df.loc[napi[2], "cpu.busy.ci95"] = 10 * df.loc[napi[2], "cpu.busy"]  # bar crosses zero
    fig = plot(df, x="traffic.rate_pps", y="cpu.busy", hue="scheme", logy=True, band=band)
    got = lines_of(fig.axes[0])
    assert len(got["napi"][0]) == len(RATES) - 2
    assert len(got["interrupt"][0]) == len(RATES)
    assert (got["napi"][1] > 0).all()
    render(fig)  # warnings are errors in this test suite


def test_logx_skips_non_positive_x():
    df = make_summary()
    df.loc[df["traffic.rate_pps"] == RATES[0], "traffic.rate_pps"] = 0.0
    fig = plot(df, x="traffic.rate_pps", y="cpu.busy", hue="scheme", logx=True)
    for xs, _ in lines_of(fig.axes[0]).values():
        assert list(xs) == list(RATES[1:])
    render(fig)


def test_plotted_values_are_the_summary_means_sorted_by_x():
    df = make_summary()
    fig = plot(df, x="traffic.rate_pps", y=list(METRICS), hue="scheme")
    for ax, metric in zip(fig.axes, METRICS, strict=True):
        got = lines_of(ax)
        for scheme in SCHEMES:
            want = df[df["scheme"] == scheme].sort_values("traffic.rate_pps")
            xs, ys = got[scheme]
            assert list(xs) == list(RATES)
            np.testing.assert_array_equal(ys, want[metric].to_numpy())


def test_error_bars_span_the_ci_half_width():
    df = make_summary()
    fig = plot(df, x="traffic.rate_pps", y="latency_us.p99", hue="scheme")
    ax = fig.axes[0]
    assert any(isinstance(c, LineCollection) for c in ax.collections)
    segments = bar_segments(ax)
    assert len(segments) == len(df)
    got = sorted((s[0, 0], s[0, 1], s[1, 1]) for s in segments)
    want = sorted(
        (r["traffic.rate_pps"], r["latency_us.p99"] - r["latency_us.p99.ci95"],
         r["latency_us.p99"] + r["latency_us.p99.ci95"])
        for _, r in df.iterrows()
    )  # fmt: skip
    np.testing.assert_allclose(got, want)


def test_ci_option_picks_another_spread_column():
    df = make_summary()
    fig = plot(df, x="traffic.rate_pps", y="cpu.busy", hue="scheme", ci="std")
    widths = sorted(s[1, 1] - s[0, 1] for s in bar_segments(fig.axes[0]))
    np.testing.assert_allclose(widths, sorted(2 * df["cpu.busy.std"]))


def test_band_draws_a_shaded_region_instead_of_bars():
    fig = plot(make_summary(), x="traffic.rate_pps", y="cpu.busy", hue="scheme", band=True)
    ax = fig.axes[0]
    assert sum(isinstance(c, PolyCollection) for c in ax.collections) == len(SCHEMES)
    assert not any(isinstance(c, LineCollection) for c in ax.collections)
    assert len(ax.get_lines()) == len(SCHEMES)


def test_missing_ci_draws_no_bar_for_that_point():
    df = make_summary()
    df.loc[[0, 3, 4], "cpu.busy.ci95"] = np.nan
    fig = plot(df, x="traffic.rate_pps", y="cpu.busy", hue="scheme")
    assert len(bar_segments(fig.axes[0])) == len(df) - 3
    assert sum(len(xs) for xs, _ in lines_of(fig.axes[0]).values()) == len(df)
    df["cpu.busy.ci95"] = np.nan  # n = 1 everywhere
    for band in (False, True):
        fig = plot(df, x="traffic.rate_pps", y="cpu.busy", hue="scheme", band=band)
        assert len(fig.axes[0].collections) == 0
        render(fig)


def test_reading_a_directory_a_parquet_or_a_csv_gives_the_same_figure(tmp_path):
    df = make_summary()
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    df.to_parquet(sweep / "summary.parquet", index=False)
    csv_only = tmp_path / "csv_only"
    csv_only.mkdir()
    df.to_csv(csv_only / "summary.csv", index=False)
    args = {"x": "traffic.rate_pps", "y": list(METRICS), "hue": "scheme"}
    want = [lines_of(ax) for ax in plot(df, **args).axes]
    sources = [sweep, str(sweep), sweep / "summary.parquet", csv_only, csv_only / "summary.csv"]
    for source in sources:
        got = [lines_of(ax) for ax in plot(source, **args).axes]
        assert got[0].keys() == want[0].keys()
        for g, w in zip(got, want, strict=True):
            for name in w:
                np.testing.assert_allclose(g[name][0], w[name][0])
                np.testing.assert_allclose(g[name][1], w[name][1], rtol=1e-12)


def test_unreadable_sources_are_refused(tmp_path):
    with pytest.raises(irqlab.ConfigError, match=r"summary\.parquet"):
        plot(tmp_path, x="traffic.rate_pps", y="cpu.busy")
    with pytest.raises(irqlab.ConfigError, match=r"nothing\.csv"):
        plot(tmp_path / "nothing.csv", x="traffic.rate_pps", y="cpu.busy")
    (tmp_path / "summary.json").write_text("{}")
    with pytest.raises(ValueError, match=r"\.parquet"):
        plot(tmp_path / "summary.json", x="traffic.rate_pps", y="cpu.busy")


def test_runs_are_reduced_to_means_and_t_intervals():
    runs = make_runs()
    fig = plot(runs, x="traffic.rate_pps", y=["latency_us.p99", "cpu.busy"], hue="scheme")
    assert len(fig.axes) == 2
    for ax, metric in zip(fig.axes, ["latency_us.p99", "cpu.busy"], strict=True):
        got = lines_of(ax)
        assert sorted(got) == list(SCHEMES)  # offered_pps, constant per point, splits nothing
        for scheme in SCHEMES:
            part = runs[runs["scheme"] == scheme]
            want = part.groupby("traffic.rate_pps")[metric].mean()
            xs, ys = got[scheme]
            assert list(xs) == list(want.index)
            np.testing.assert_allclose(ys, want.to_numpy(), rtol=1e-12)
        bars = {(s[0, 0], round((s[0, 1] + s[1, 1]) / 2, 9)): (s[1, 1] - s[0, 1]) / 2
                for s in bar_segments(ax)}  # fmt: skip
        assert len(bars) == len(runs) // 3
        for (_, rate), part in runs.groupby(["scheme", "traffic.rate_pps"]):
            mean, half = confidence_interval(part[metric])
            assert bars[(rate, round(mean, 9))] == pytest.approx(half, rel=1e-9)


def test_runs_with_one_replication_draw_no_bars():
    runs = make_runs()
    runs = runs[runs["replication"] == 0]
    fig = plot(runs, x="traffic.rate_pps", y="cpu.busy", hue="scheme")
    assert len(fig.axes[0].get_lines()) == len(SCHEMES)
    assert bar_segments(fig.axes[0]) == []


def test_a_second_varying_parameter_gets_lines_of_its_own():
    df = pd.concat([make_summary(0, itr_us=0), make_summary(1, itr_us=10)], ignore_index=True)
    df["point"] = range(len(df))
    fig = plot(df, x="traffic.rate_pps", y=["latency_us.p99", "cpu.busy"], hue="scheme")
    for ax in fig.axes:
        names = sorted(lines_of(ax))
        assert len(names) == 2 * len(SCHEMES)
        assert names == sorted(f"scheme={s}, nic.itr_us={i}" for s in SCHEMES for i in (0, 10))
        assert [t.get_text() for t in ax.get_legend().get_texts()] == [
            line.get_label() for line in ax.get_lines()
        ]
    # each of those lines is exactly one (scheme, itr) slice, never an average of the two
    got = lines_of(fig.axes[0])["scheme=napi, nic.itr_us=10"][1]
    want = df[(df["scheme"] == "napi") & (df["nic.itr_us"] == 10)].sort_values("traffic.rate_pps")
    np.testing.assert_array_equal(got, want["latency_us.p99"].to_numpy())


def test_without_hue_a_varying_parameter_still_splits_the_lines():
    fig = plot(make_summary(), x="traffic.rate_pps", y="cpu.busy")
    assert sorted(lines_of(fig.axes[0])) == [f"scheme={s}" for s in SCHEMES]


def test_copies_of_x_or_hue_do_not_split_lines():
    df = make_summary()
    df["scenario.traffic.rate_pps"] = df["traffic.rate_pps"]
    df["scenario.scheme"] = df["scheme"]
    fig = plot(df, x="traffic.rate_pps", y="cpu.busy", hue="scheme")
    assert sorted(lines_of(fig.axes[0])) == list(SCHEMES)


def test_a_parameter_varying_along_part_of_x_still_splits():
    df = make_summary()
    df["nic.itr_us"] = np.where(df["traffic.rate_pps"] > RATES[2], 10, 0)
    fig = plot(df, x="traffic.rate_pps", y="cpu.busy", hue="scheme")
    assert len(fig.axes[0].get_lines()) == 2 * len(SCHEMES)


def test_an_outcome_on_x_is_not_split_by_the_parameter_it_follows():
    df = make_summary()
    fig = plot(df, x="throughput_pps", y="latency_us.p99", hue="scheme")
    got = lines_of(fig.axes[0])
    assert sorted(got) == list(SCHEMES)
    xs, ys = got["napi"]
    want = df[df["scheme"] == "napi"].sort_values("throughput_pps")
    np.testing.assert_array_equal(xs, want["throughput_pps"].to_numpy())
    np.testing.assert_array_equal(ys, want["latency_us.p99"].to_numpy())
    # runs: the outcome on x is averaged per point like the metrics
    runs = make_runs()
    runs["offered_pps"] *= 1 + 0.01 * runs["replication"]
    got = lines_of(plot(runs, x="offered_pps", y="cpu.busy", hue="scheme").axes[0])
    assert sorted(got) == list(SCHEMES)
    want = runs[runs["scheme"] == "napi"].groupby("point")["offered_pps"].mean()
    np.testing.assert_allclose(got["napi"][0], np.sort(want.to_numpy()))


def test_where_filters_rows_first():
    df = pd.concat([make_summary(0, itr_us=0), make_summary(1, itr_us=10)], ignore_index=True)
    df["point"] = range(len(df))
    fig = plot(df, x="traffic.rate_pps", y="cpu.busy", hue="scheme", where={"nic.itr_us": 10})
    assert sorted(lines_of(fig.axes[0])) == list(SCHEMES)
    fig = plot(df, x="traffic.rate_pps", y="cpu.busy", where={"nic.itr_us": 10, "scheme": "napi"})
    ax = fig.axes[0]
    assert len(ax.get_lines()) == 1
    assert ax.get_legend() is None
    fig = plot(df, x="traffic.rate_pps", y="cpu.busy", hue="scheme", where={"nic.itr_us": [0, 10]})
    assert len(fig.axes[0].get_lines()) == 2 * len(SCHEMES)
    with pytest.raises(ValueError, match="no rows left") as err:
        plot(df, x="traffic.rate_pps", y="cpu.busy", where={"scheme": "busy_poll"})
    assert "napi" in str(err.value)


def test_rows_that_cannot_be_told_apart_are_refused():
    df = pd.concat([make_summary(0), make_summary(1)], ignore_index=True)
    with pytest.raises(ValueError, match=r"several rows share traffic\.rate_pps"):
        plot(df, x="traffic.rate_pps", y="cpu.busy", hue="scheme")


@pytest.mark.parametrize(
    ("kwargs", "bad", "suggestion"),
    [
        ({"x": "traffic.rate_pp"}, "traffic.rate_pp", "traffic.rate_pps"),
        ({"x": "rate_pps"}, "rate_pps", "traffic.rate_pps"),
        ({"y": "latency_us.p9"}, "latency_us.p9", "latency_us.p99"),
        ({"y": ["cpu.busy", "cpu.bsy"]}, "cpu.bsy", "cpu.busy"),
        ({"hue": "schema"}, "schema", "scheme"),
        ({"where": {"nic.itr": 10}}, "nic.itr", "nic.itr_us"),
    ],
)
def test_unknown_columns_are_named_with_suggestions(kwargs, bad, suggestion):
    args = {"x": "traffic.rate_pps", "y": "cpu.busy", "hue": "scheme"} | kwargs
    with pytest.raises(ValueError, match="unknown column") as err:
        plot(make_summary(), **args)
    message = str(err.value)
    assert repr(bad) in message
    assert repr(suggestion) in message


def test_a_missing_spread_column_is_named():
    df = make_summary().drop(columns=["cpu.busy.ci95"])
    with pytest.raises(ValueError, match=r"cpu\.busy\.ci95"):
        plot(df, x="traffic.rate_pps", y="cpu.busy", hue="scheme")
    with pytest.raises(ValueError, match=r"cpu\.busy\.ci99"):
        plot(make_summary(), x="traffic.rate_pps", y="cpu.busy", ci="ci99")


def test_title_goes_on_the_figure():
    fig = plot(make_summary(), x="traffic.rate_pps", y=list(METRICS), title="NAPI vs IRQ")
    assert fig.get_suptitle() == "NAPI vs IRQ"
    assert plot(make_summary(), x="traffic.rate_pps", y="cpu.busy").get_suptitle() == ""


def test_saves_png_and_svg_creating_directories(tmp_path):
    df = make_summary()
    png = tmp_path / "figs" / "deep" / "latency.png"
    svg = tmp_path / "figs" / "latency.svg"
    plot(df, x="traffic.rate_pps", y="latency_us.p99", hue="scheme", out=png, height_per_panel=2)
    plot(df, x="traffic.rate_pps", y="cpu.busy", hue="scheme", out=str(svg), band=True)
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert "<svg" in svg.read_text()


@pytest.mark.parametrize("name", ["figure.pdf", "figure.jpg", "figure"])
def test_other_file_types_are_refused_before_any_work(tmp_path, name):
    with pytest.raises(ValueError, match=r"\.png, \.svg"):
        plot(tmp_path / "absent", x="traffic.rate_pps", y="cpu.busy", out=tmp_path / name)
    assert not (tmp_path / name).exists()


def test_plotting_leaves_pyplot_alone(tmp_path):
    tree = ast.parse(Path(irqlab.figures.__file__).read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {
        f"{n.module}.{a.name}"
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom)
        for a in n.names
    }
    assert "matplotlib.pyplot" not in imported
    fig = plot(make_summary(), x="traffic.rate_pps", y="cpu.busy", out=tmp_path / "f.svg")
    assert fig.canvas.manager is None  # no window, no global figure registry
