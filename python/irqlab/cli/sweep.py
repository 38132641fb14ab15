"""``irqlab sweep``, ``irqlab plot`` and ``irqlab rerun``: a sweep run (and the summary table it
prints), drawn, and one of its rows run again."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

import click

from irqlab.cli.common import (
    Console,
    Table,
    format_option,
    main,
    out_option,
    overrides_option,
    parse_sets,
    pool_options,
    progress_option,
    stops_resumably,
    user_errors,
)
from irqlab.errors import ConfigError, IrqlabError
from irqlab.formatting import axis_value, si


@main.command()
@click.argument("sweep_file", metavar="SWEEP", type=click.Path(path_type=Path))
@out_option(
    # checked by the sweep, which names the path in one line (and creates missing folders)
    "Output directory, created if missing (default: sweep.out in the file, else "
    "results/<file name>).",
)
@click.option(
    "-n",
    "--replications",
    type=int,
    default=None,
    help="Replications per point (sweep.replications).",
)
@click.option("--seed", type=int, default=None, help="The sweep seed (sweep.seed).")
@click.option(
    "--warmup",
    default=None,
    metavar="auto|MS",
    help="Warm-up: a number of ms, or auto (MSER-5 on a pilot run of each point).",
)
@overrides_option
@pool_options
@click.option(
    "--resume/--fresh",
    default=True,
    show_default=True,
    help="Resume: reuse the runs already finished in --out. Fresh: discard them first.",
)
@progress_option
@user_errors
def sweep(
    sweep_file: Path,
    out: Path | None,
    replications: int | None,
    seed: int | None,
    warmup: str | None,
    sets: tuple[str, ...],
    executor: str,
    workers: int | None,
    scheduler: str | None,
    resume: bool,
    progress: bool | None,
) -> None:
    """Run every point of a SWEEP file, with replications, and write the results.

    A sweep file has a base scenario, axes over any keys (their product gives the points)
    and how many replications to run (see docs/sweeps.md). Replication r of every point uses
    random streams (run.seed, r): independent across replications, common across schemes and
    loads, so differences between points are not noise.

    \b
    Writes to --out:
      runs.parquet      one row per point × replication: metrics (as in `irqlab run
                        --format json`, dotted; per_core.N.*, per_queue.N.*,
                        per_class.N.*, per_app.N.* for each entry), every parameter
                        (lists as text, "[0, 1]"), the seed
      summary.parquet   one row per point: per metric the mean, .std, .ci95 (Student-t
      summary.csv       half-width), .rel (half-width / mean), and n
      journal.sqlite    every finished run; rerunning the command resumes from it

    Results are identical, row for row, whatever the executor and number of workers.
    """
    from irqlab.experiments import execute, parse_sweep, summary_table
    from irqlab.files import own_folder, writable_folder
    from irqlab.formatting import count

    spec = parse_sweep(sweep_file, parse_sets(sets))
    spec.override(replications=replications, seed=seed, warmup=warmup)
    spec.check_size()
    target = Path(os.path.normpath(out or spec.out or Path("results") / sweep_file.stem))
    own_folder(target, "sweep", "--out")  # before the banner: an error says it all
    writable_folder(target, "--out")
    console = Console(stderr=True)
    points, reps = count(spec.count(), "point"), count(spec.replications, "replication")
    console.print(f"sweep: {points} × {reps} → {target}", highlight=False)
    with stops_resumably(target, "sweep"), warnings.catch_warnings():
        warnings.showwarning = _show_warning
        runs = execute(
            spec,
            target,
            executor=executor,
            workers=workers,
            scheduler=scheduler,
            resume=resume,
            progress=console.is_terminal if progress is None else progress,
        )
    _print_summary(summary_table(runs), [a.key for a in spec.axes])
    click.echo(f"wrote {target}/runs.parquet, summary.parquet, summary.csv")


def _show_warning(message: Warning | str, *args: Any, **kwargs: Any) -> None:
    """A warning as one line on stderr, like an error."""
    click.echo(f"irqlab: warning: {message}", err=True)


#: Columns of the table `irqlab sweep` prints: (metric, header).
SUMMARY_COLUMNS = (
    ("throughput_pps", "throughput pps"),
    ("loss_ratio", "loss"),
    ("latency_us.mean", "latency µs"),
    ("latency_us.p99", "p99 µs"),
    ("cpu.busy", "CPU busy"),
    ("irq_per_s", "IRQ/s"),
)


def _print_summary(summary: Any, axes: list[str], limit: int = 40) -> None:
    """The sweep's points as a table: axes, n, and key metrics as mean ±95% half-width."""
    from irqlab.report.layout import fit

    t = Table(show_header=True, header_style="bold", caption="mean ±95% confidence half-width")
    for a in axes:
        t.add_column(a, justify="right")
    t.add_column("n", justify="right")
    for _, header in SUMMARY_COLUMNS:
        t.add_column(header, justify="right")
    for _, row in summary.head(limit).iterrows():
        cells = [axis_value(row[a]) for a in axes]
        cells.append(str(row["n"]))
        for m, _ in SUMMARY_COLUMNS:
            ci = row[f"{m}.ci95"]
            cells.append(si(row[m]) + ("" if ci != ci else f" ±{si(ci, 2)}"))
        t.add_row(*cells)
    Console().print(fit(t, keep=len(axes)))
    if len(summary) > limit:
        click.echo(f"… and {len(summary) - limit} more points in summary.csv")


@main.command()
@click.argument("results", type=click.Path(exists=True, path_type=Path))
@click.option("--x", "x", required=True, help="Column on the x axis, e.g. traffic.rate_pps.")
@click.option(
    "--y",
    "ys",
    required=True,
    multiple=True,
    help="Metric on the y axis, e.g. latency_us.mean; repeat for one panel per metric.",
)
@click.option("--hue", default=None, help="One line per value of this column, e.g. scheme.")
@click.option(
    "--where",
    "wheres",
    multiple=True,
    metavar="KEY=VALUE",
    help="Keep only rows with this parameter value (repeatable).",
)
@click.option("--logx", is_flag=True, help="Logarithmic x axis.")
@click.option("--logy", is_flag=True, help="Logarithmic y axes.")
@click.option("--band", is_flag=True, help="Shaded confidence bands instead of error bars.")
@click.option("--title", default=None, help="Figure title.")
@out_option("PNG or SVG file (default: <results>/<first y>.png).", dir_okay=False)
@user_errors
def plot(
    results: Path,
    x: str,
    ys: tuple[str, ...],
    hue: str | None,
    wheres: tuple[str, ...],
    logx: bool,
    logy: bool,
    band: bool,
    title: str | None,
    out: Path | None,
) -> None:
    """Plot a sweep's RESULTS (its directory, or a summary/runs .parquet or .csv).

    Points are the means over replications; error bars (or --band) are their 95% confidence
    intervals. Several --y give one panel per metric sharing the x axis.

    \b
    Example:
      irqlab plot results/livelock --x traffic.rate_pps \\
          --y throughput_pps --y latency_us.mean --y cpu.busy --hue scheme --logy
    """
    from irqlab.figures import plot as make_plot
    from irqlab.scenario import parse_override

    where = dict(parse_override(w) for w in wheres)
    if out is None:
        folder = results if results.is_dir() else results.parent
        out = folder / f"{ys[0]}.png"
    try:
        make_plot(
            results,
            x,
            list(ys),
            hue,
            where=where,
            logx=logx,
            logy=logy,
            band=band,
            title=title,
            out=out,
        )
    except ValueError as e:
        raise ConfigError(str(e), None) from None
    except OSError as e:  # the tables are read without raising it: this is the figure's file
        raise IrqlabError(f"{out}: cannot write the figure ({e.strerror or e})") from None
    click.echo(f"wrote {out}")


@main.command()
@click.argument("results", type=click.Path(exists=True, path_type=Path))
@click.option("--point", type=int, required=True, help="Point index (column 'point').")
@click.option("--replication", type=int, default=0, show_default=True, help="Replication.")
@format_option
@user_errors
def rerun(results: Path, point: int, replication: int, fmt: str) -> None:
    """Re-run one row of a sweep's RESULTS alone (its directory or runs.parquet).

    The row's parameters and seed are exactly what ran, so the report equals the row.
    """
    from irqlab.experiments import load_results, row_scenario
    from irqlab.report import render
    from irqlab.simulate import run as run_scenario

    runs = load_results(results, "runs")
    for column in ("point", "replication"):
        if column not in runs.columns:
            raise ConfigError(
                f"{results}: not a sweep's runs table (no column '{column}'); give the sweep's "
                "folder or its runs.parquet",
                None,
            )
    match = runs[(runs["point"] == point) & (runs["replication"] == replication)]
    if match.empty:
        raise ConfigError(
            f"no row with point {point} and replication {replication} "
            f"(points 0–{runs['point'].max()}, replications 0–{runs['replication'].max()})",
            None,
        )
    try:
        params = row_scenario(match.iloc[0].to_dict())
    except ConfigError as e:  # a table edited by hand
        where = f"{results}: point {point}, replication {replication}"
        raise ConfigError(f"{where}: {e}", e.key) from None
    report = run_scenario(params)
    if fmt == "json":
        click.echo(json.dumps(report, indent=2))
    else:
        Console().print(render(report, params))
