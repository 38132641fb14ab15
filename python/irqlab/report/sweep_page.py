"""The page of a sweep: the key metrics of every point with their 95% intervals, a figure per
metric against the first axis of numbers, the sweep's settings and base, and the commands and
``sweep.toml`` that run it again."""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from irqlab import shapes, toml_writer
from irqlab.errors import ConfigError
from irqlab.formatting import count, page_number
from irqlab.report.charts import error_bars, finite, metric_label, plotly_figure, scatter
from irqlab.report.page import Code, Facts, Figures, Page, Plot, Section, Table
from irqlab.report.parts import ci_cell, mean_ci, scenario_table, shell, value_cell
from irqlab.report.reading import py, read_json, read_table

#: The metrics a sweep's table and figures show (when its summary has them).
SWEEP_METRICS = (
    "throughput_pps",
    "loss_ratio",
    "latency_us.mean",
    "latency_us.p99",
    "cpu.busy",
    "irq_per_s",
)


def page(path: Path, title: str | None) -> Page:
    """The page of the sweep folder ``path``."""

    spec = read_json(path / "sweep.json")
    if not isinstance(spec, Mapping) or not {"base", "axes", "replications"} <= set(spec):
        raise ConfigError(f"{path / 'sweep.json'}: not a sweep definition (damaged?)", None)
    shapes.check(spec, shapes.SWEEP_DEFINITION, path / "sweep.json")
    summary_path = path / "summary.parquet"
    if not summary_path.exists():
        summary_path = path / "summary.csv"
    summary = read_table(summary_path)
    runs = read_table(path / "runs.parquet")
    axes = list(spec["axes"])
    for key in [*axes, "point", "n"]:
        if key not in summary.columns:
            raise ConfigError(f"{summary_path}: no column {key!r} (damaged?)", None)
    for key in ("point", "replication"):
        if key not in runs.columns:
            raise ConfigError(f"{path / 'runs.parquet'}: no column {key!r} (damaged?)", None)
    shapes.check_columns(
        summary,
        summary_path,
        integers=("point", "n"),
        numbers_=shapes.metric_columns(list(summary.columns)),
        least={"n": 1, "point": 0},
    )
    shapes.check_columns(
        runs, path / "runs.parquet", integers=("point", "replication"), least={"point": 0}
    )
    summary = summary.sort_values("point", kind="stable")
    metrics = [m for m in SWEEP_METRICS if m in summary.columns]
    reps = sorted({int(n) for n in summary["n"]})
    n_text = (
        count(reps[0], "replication") if len(reps) == 1 else f"{reps[0]}–{reps[-1]} replications"
    )
    lede = [
        f"{count(len(summary), 'point')} × {n_text} ({count(len(runs), 'run')}); axes: "
        + "; ".join(f"{k} ({count(len(v), 'value')})" for k, v in spec["axes"].items())
        + ".",
        "Each number is the mean over the replications ± the half-width of its 95% "
        "Student-t confidence interval (n − 1 degrees of freedom); the figures draw the same "
        "intervals as error bars. Replication r of every point uses the same random streams "
        "(common random numbers).",
    ]

    table = Section("metrics", "Key metrics, per point")
    headers = ["point", *axes, "n", *(metric_label(m) for m in metrics)]
    rows = []
    for _, row in summary.iterrows():
        p = int(row["point"])
        cells = [value_cell(p, data_point=p, data_key="point")]
        cells += [value_cell(py(row[a]), data_point=p, data_key=a) for a in axes]
        cells.append(value_cell(int(row["n"]), data_point=p, data_key="n"))
        for m in metrics:
            ci = row[f"{m}.ci95"] if f"{m}.ci95" in summary.columns else None
            cells.append(ci_cell(py(row[m]), py(ci), data_point=p, data_key=m))
        rows.append(cells)
    table.items.append(
        Table(
            "summary-table",
            "mean ± 95% confidence half-width",
            headers,
            rows,
            note=f"Every metric of every point: {summary_path.name} "
            "(columns M, M.std, M.ci95, M.rel).",
        )
    )

    figs = Section("figures", "Figures")
    if axes:
        x, lines = _sweep_x(spec["axes"])
        figs.p(
            f"Each metric against {x}"
            + (f", a line per value of {', '.join(lines)}" if lines else "")
            + ". Hover over a point to read its mean, interval and n; click a legend entry to "
            "hide or show its line (double-click: that line alone)."
        )
        figs.items.append(Figures([_sweep_figure(summary, x, lines, m) for m in metrics]))

    scen = Section("scenario", "Scenario")
    settings = [
        ("replications", str(spec["replications"])),
        ("seed", "the base's run.seed" if spec.get("seed") is None else str(spec["seed"])),
        (
            "warm-up",
            "the base's run.warmup_ms"
            if spec.get("warmup") is None
            else ("auto (MSER-5)" if spec["warmup"] == "auto" else f"{spec['warmup']:g} ms"),
        ),
    ]
    if spec.get("precision"):
        prec = spec["precision"]
        settings.append(
            (
                "precision",
                f"{', '.join(prec['metrics'])} within {prec['relative']:g} of the mean at "
                f"{prec['confidence']:g}, at most {prec['max_replications']} replications",
            )
        )
    settings += [
        (f"axis {k}", ", ".join(page_number(x) for x in v)) for k, v in spec["axes"].items()
    ]
    scen.items.append(Facts(settings))
    scen.items.append(
        scenario_table(
            dict(spec["base"]),
            "base-table",
            "the base scenario: the keys the sweep sets (every other key at its default)",
            open_=True,
        )
    )
    try:
        resolved = _point_scenario(runs)
    except ConfigError as e:
        raise ConfigError(f"{path / 'runs.parquet'}: point 0, replication 0: {e}", e.key) from None
    if resolved:
        scen.items.append(
            scenario_table(resolved, "point0-table", "point 0, replication 0: every key")
        )

    rerun = Section("rerun", "How to re-run")
    toml = _sweep_toml(spec)
    rerun.p(
        "Save the sweep below as sweep.toml (or download it) and run it; into this folder it "
        "reuses every run already there, into a new one it runs them all again and gives the "
        "same tables row for row."
    )
    rerun.items.append(
        Code(shell(["irqlab", "sweep", "sweep.toml", "--out", str(path)]), id="command")
    )
    rerun.items.append(Code(toml, "sweep.toml", "sweep.toml", "toml"))
    rerun.p(
        "Any one run alone, exactly as it ran (point P, replication R; the table's first "
        "column is P):"
    )
    last = int(summary["point"].max())
    rerun.items.append(
        Code(
            "\n".join(
                [
                    shell(["irqlab", "rerun", str(path), "--point", "0", "--replication", "0"]),
                    shell(
                        [
                            "irqlab",
                            "rerun",
                            str(path),
                            "--point",
                            str(last),
                            "--replication",
                            str(reps[0] - 1),
                            "--format",
                            "json",
                        ]
                    ),
                ]
            ),
            "",
        )
    )
    if axes:
        rerun.items.append(_plot_command(path, x, lines, metrics))
    sections = [table, figs, scen, rerun] if axes else [table, scen, rerun]
    return Page(
        title or f"irqlab sweep — {path.name or path.resolve().name}",
        "sweep",
        str(path),
        lede,
        sections,
    )


def _plot_command(path: Path, x: str, lines: list[str], metrics: list[str]) -> Code:
    """The `irqlab plot` command that draws the page's first figures as a PNG."""
    return Code(
        shell(
            [
                "irqlab",
                "plot",
                str(path),
                "--x",
                x,
                *(w for m in metrics[:3] for w in ("--y", m)),
                *(("--hue", lines[0]) if len(lines) == 1 else ()),
            ]
        ),
        "the same figures as PNG, from the command line",
    )


def _point_scenario(runs: Any) -> dict[str, Any]:
    """The resolved scenario of point 0, replication 0, as ``irqlab rerun`` runs it."""
    from irqlab.experiments import row_scenario

    match = runs[(runs["point"] == 0) & (runs["replication"] == 0)]
    if match.empty:
        return {}
    return row_scenario(match.iloc[0].to_dict())


def _is_number(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _sweep_x(axes: Mapping[str, Sequence[Any]]) -> tuple[str, list[str]]:
    """The x of the figures (the first axis of numbers, else the first axis) and the axes
    that split lines (the others)."""
    keys = list(axes)
    x = next((k for k in keys if all(_is_number(v) for v in axes[k])), keys[0])
    return x, [k for k in keys if k != x]


def _sweep_figure(summary: Any, x: str, lines: list[str], metric: str) -> Plot:
    data = []
    groups = summary.groupby(lines, sort=False, dropna=False) if lines else [((), summary)]
    for values, part in groups:
        values = values if isinstance(values, tuple) else (values,)
        part = part.sort_values(x, kind="stable")
        if not lines:
            name = metric
        elif len(lines) == 1:
            name = page_number(py(values[0]))
        else:
            name = ", ".join(
                f"{k}={page_number(py(v))}" for k, v in zip(lines, values, strict=True)
            )
        ci_col = f"{metric}.ci95"
        ci = finite(part[ci_col]) if ci_col in part.columns else [None] * len(part)
        data.append(
            scatter(
                "lines+markers",
                name,
                finite(part[x]),
                finite(part[metric]),
                error_y=error_bars(ci, visible=True, thickness=1.2, width=3),
                # the values as the table shows them
                customdata=[
                    [mean_ci(m, c), page_number(py(v)), int(n), int(p)]
                    for m, c, v, n, p in zip(
                        finite(part[metric]), ci, part[x], part["n"], part["point"], strict=True
                    )
                ],
                hovertemplate=(
                    f"{x} = %{{customdata[1]}}<br>{metric} = %{{customdata[0]}}"
                    "<br>n = %{customdata[2]}, point %{customdata[3]}<extra>%{fullData.name}"
                    "</extra>"
                ),
            )
        )
    xs = [v for v in finite(summary[x]) if _is_number(v)]
    spread = len(xs) > 2 and min(xs) > 0 and max(xs) / min(xs) >= 100
    layout = {
        "title": {"text": metric_label(metric)},
        # values over two decades or more (a geometric axis): a log axis shows them all
        "xaxis": {"title": {"text": metric_label(x)}, "type": "log" if spread else "-"},
        "yaxis": {"title": {"text": metric_label(metric)}},
        "legend": {"title": {"text": lines[0] if len(lines) == 1 else ""}},
        "showlegend": bool(lines),
    }
    return plotly_figure(
        f"sweep-{metric}", f"{metric_label(metric)} against {metric_label(x)}", data, layout
    )


def _sweep_toml(spec: Mapping[str, Any]) -> str:
    """A sweep file that runs the sweep ``sweep.json`` describes."""
    from irqlab.scenario import unflatten

    sweep: dict[str, Any] = {"replications": spec["replications"]}
    if spec.get("seed") is not None:
        sweep["seed"] = spec["seed"]
    if spec.get("warmup") is not None:
        sweep["warmup"] = spec["warmup"]
    if spec.get("precision"):
        sweep["precision"] = dict(spec["precision"])
    tree = {"sweep": sweep, "base": unflatten(spec["base"]), "axes": dict(spec["axes"])}
    return toml_writer.document(tree)
