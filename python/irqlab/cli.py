"""The ``irqlab`` command line.

Every subcommand has ``--help``. User errors (bad scenario, missing file) print one line on
stderr and exit with status 2; they never print a traceback.
"""

from __future__ import annotations

import functools
import json
import math
import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.table import Table

from irqlab import __version__
from irqlab.errors import ConfigError, InternalError, IrqlabError

F = TypeVar("F", bound=Callable[..., Any])

EXIT_USER_ERROR = 2
EXIT_INTERNAL = 3
#: A sweep stopped by the loss of its workers: rerunning the command resumes it.
EXIT_STOPPED = 1
#: Interrupted (Ctrl-C), as a shell reports SIGINT.
EXIT_INTERRUPTED = 130


def user_errors(f: F) -> F:
    """Turns irqlab's errors into one line on stderr and an exit status."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return f(*args, **kwargs)
        except InternalError as e:
            click.echo(f"irqlab: internal error: {e}", err=True)
            sys.exit(EXIT_INTERNAL)
        except (ConfigError, IrqlabError) as e:
            click.echo(f"irqlab: error: {e}", err=True)
            sys.exit(EXIT_USER_ERROR)
        except KeyboardInterrupt:
            click.echo("irqlab: interrupted", err=True)
            sys.exit(130)

    return wrapper  # type: ignore[return-value]


def overrides_option(f: F) -> F:
    return click.option(
        "--set",
        "sets",
        multiple=True,
        metavar="KEY=VALUE",
        help="Override any scenario key, e.g. --set traffic.rate_pps=2e5 --set scheme=irq "
        "--set nic.irq_affinity=[0,1] --set app.0.core=1 (repeatable; values are read as "
        'TOML: numbers, true/false, [lists], "strings" or bare words).',
    )(f)


format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="table: for a person; json: every metric, for programs.",
)


executor_option = click.option(
    "--executor",
    type=click.Choice(["process", "inline", "dask"]),
    default="process",
    show_default=True,
    help="process: a local pool; inline: this process; dask: a Dask LocalCluster or --scheduler.",
)
workers_option = click.option(
    "-j", "--workers", type=int, default=None, help="Worker processes (default: one per core)."
)
scheduler_option = click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    help="Join the Dask cluster at ADDRESS (e.g. tcp://10.0.0.1:8786); implies --executor dask.",
)
progress_option = click.option(
    "--progress/--no-progress", default=None, help="Progress bars (default: on a terminal)."
)


def parse_sets(sets: tuple[str, ...]) -> list[tuple[str, Any]]:
    from irqlab.scenario import parse_override

    return [parse_override(s) for s in sets]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="irqlab")
def main() -> None:
    """irqlab: a laboratory for the host receive path.

    Simulates how a host turns packets arriving at a NIC into CPU work — interrupts,
    interrupt moderation (ITR, coalescing), NAPI polling with budgets, softirqs and
    ksoftirqd — and reports latency, CPU load, IRQ rate, throughput and loss.

    \b
    Start with:
      irqlab run examples/napi.toml
      irqlab run examples/napi.toml --set scheme=irq --set traffic.rate_pps=2e5
      irqlab keys            # every scenario key, its default and allowed values
      irqlab keys app        # the fields of each [[app]] entry (app.0.core, ...)
      irqlab sweep examples/livelock_sweep.toml --out results/livelock
      irqlab plot results/livelock --x traffic.rate_pps --y throughput_pps --hue scheme
      irqlab analytic irq --set platform.preset=salah2007
      irqlab reproduce salah2007 --out results/salah2007
    """


@main.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--seed", type=int, default=None, help="Override run.seed.")
@overrides_option
@format_option
@click.option(
    "--out",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Write the output to FILE instead of stdout.",
)
@user_errors
def run(
    scenario: Path, seed: int | None, sets: tuple[str, ...], fmt: str, out: Path | None
) -> None:
    """Run one SCENARIO (a TOML file) and report its metrics.

    Metrics are measured after run.warmup_ms: offered and delivered packets, drops, latency
    (mean and percentiles, µs, NIC arrival to end of protocol processing), CPU time by
    category, IRQs and polls per second, packets per poll, cycles per packet and the
    load-latency product; with host.forward, what was transmitted; with apps, what they
    consumed, their goodput and latency. Several cores add a table per core, several traffic
    classes a table per class (--format json: per_core, per_queue, per_class, per_app).
    The same scenario and seed always give the same output.
    """
    from irqlab.report import render
    from irqlab.scenario import resolve
    from irqlab.simulate import run as run_scenario

    overrides = parse_sets(sets)
    params = resolve(scenario, overrides, seed=seed)
    seconds = (params["run.warmup_ms"] + params["run.duration_ms"]) / 1e3
    packets = params["traffic.rate_pps"] * seconds
    status = Console(stderr=True)
    if packets > 2e7 and status.is_terminal:
        # Long runs (seconds of wall time): say what is happening while the core works.
        with status.status(f"simulating {packets / 1e6:,.0f} M packets ({seconds:g} s)…"):
            report = run_scenario(scenario, overrides, seed=seed)
    else:
        report = run_scenario(scenario, overrides, seed=seed)
    if fmt == "json":
        text = json.dumps(report, indent=2) + "\n"
        if out:
            out.write_text(text, encoding="utf-8")
        else:
            click.echo(text, nl=False)
        return
    table = render(report, params)
    if out:
        with out.open("w", encoding="utf-8") as fh:
            Console(file=fh, width=100, color_system=None).print(table)
    else:
        Console().print(table)


def _default(value: Any) -> str:
    """A default as a scenario file writes it: false, [], "" (other strings bare)."""
    if isinstance(value, bool | list | tuple) or value == "":
        return json.dumps(value)
    return str(value)


@main.command()
@click.argument("prefix", required=False, default="")
@user_errors
def keys(prefix: str) -> None:
    """List every scenario key (or those starting with PREFIX), its default and allowed values.

    Plain keys come first, then the fields of each numbered entry ([[app]],
    [[traffic.classes]]) as app.N.core: N counts the entries from 0. PREFIX may name an entry
    (app.0) or a table (app).
    """
    from rich.markup import escape

    from irqlab.report import template
    from irqlab.scenario import schema, tables

    wanted = template(prefix)  # app.0 → app.N
    rows: list[tuple[str, ...] | None] = []  # None: a new section
    for key, spec in schema().items():
        if "table" not in spec and key.startswith(wanted):
            rows.append((key, _default(spec["default"]), spec["allowed"], spec["doc"]))
    for name, table in tables().items():
        fields = [f for f in table["fields"].values() if f["key"].startswith(wanted)]
        if fields:
            rows.append(None)
            rows.append((f"[[{name}]]", "", f"at most {table['max_entries']}", table["doc"]))
            rows += [(f["key"], _default(f["default"]), f["allowed"], f["doc"]) for f in fields]
    shown = [r for r in rows if r is not None]
    if not shown:
        raise ConfigError(f"no scenario key starts with '{prefix}'", None)
    t = Table(show_header=True, header_style="bold", show_lines=False)
    t.add_column("key", no_wrap=True, min_width=max(len(r[0]) for r in shown))
    t.add_column("default", justify="right")
    t.add_column("allowed")
    t.add_column("meaning")
    for row in rows:
        if row is None:
            t.add_section()
        else:
            t.add_row(*(escape(cell) for cell in row))
    Console().print(t)


@main.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--seed", type=int, default=None, help="Override run.seed.")
@overrides_option
@user_errors
def check(scenario: Path, seed: int | None, sets: tuple[str, ...]) -> None:
    """Validate SCENARIO without running it; print every key with its resolved value."""
    from irqlab.scenario import resolve

    params = resolve(scenario, parse_sets(sets), seed=seed)
    for key, value in params.items():
        click.echo(f"{key} = {json.dumps(value)}")


@main.command()
@click.argument("sweep_file", metavar="SWEEP", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    # checked by the sweep, which names the path in one line (and creates missing folders)
    type=click.Path(path_type=Path),
    default=None,
    help="Output directory, created if missing (default: sweep.out in the file, else "
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
@executor_option
@workers_option
@scheduler_option
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
    from irqlab.executors import WorkersLost
    from irqlab.experiments import execute, parse_sweep, summary_table

    spec = parse_sweep(sweep_file, parse_sets(sets))
    spec.override(replications=replications, seed=seed, warmup=warmup)
    spec.check_size()
    target = Path(os.path.normpath(out or spec.out or Path("results") / sweep_file.stem))
    console = Console(stderr=True)
    console.print(
        f"sweep: {spec.count()} points × {spec.replications} replications → {target}",
        highlight=False,
    )
    try:
        with warnings.catch_warnings():
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
    except KeyboardInterrupt:
        click.echo(
            f"irqlab: interrupted; the finished runs are kept in {target}: "
            "the same command resumes the sweep",
            err=True,
        )
        sys.exit(EXIT_INTERRUPTED)
    except WorkersLost as e:
        click.echo(f"irqlab: error: {e}", err=True)
        sys.exit(EXIT_STOPPED)
    _print_summary(summary_table(runs), [a.key for a in spec.axes])
    click.echo(f"wrote {target}/runs.parquet, summary.parquet, summary.csv")


def _show_warning(message: Warning | str, *args: Any, **kwargs: Any) -> None:
    """A warning as one line on stderr, like an error."""
    click.echo(f"irqlab: warning: {message}", err=True)


def _sig(x: float, digits: int) -> str:
    """``x`` to ``digits`` significant digits, never in exponent notation."""
    if x == 0:
        return "0"
    places = digits - 1 - math.floor(math.log10(abs(x)))
    return f"{round(x, places):.{max(places, 0)}f}"


def _si(x: float, digits: int = 3) -> str:
    """Significant digits with an SI prefix: 187312.4 → 187k, 0.00421 → 0.00421."""
    if x != x:
        return "—"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return _sig(x / div, digits) + suffix
    return _sig(x, digits)


def _cell(value: Any) -> str:
    """An axis value in the sweep's table: text as it is, true/false, numbers with SI prefixes."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return "true" if value else "false"
    return _si(value)


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
    t = Table(show_header=True, header_style="bold", caption="mean ±95% confidence half-width")
    for a in axes:
        t.add_column(a, justify="right")
    t.add_column("n", justify="right")
    for _, header in SUMMARY_COLUMNS:
        t.add_column(header, justify="right")
    for _, row in summary.head(limit).iterrows():
        cells = [_cell(row[a]) for a in axes]
        cells.append(str(row["n"]))
        for m, _ in SUMMARY_COLUMNS:
            ci = row[f"{m}.ci95"]
            cells.append(_si(row[m]) + ("" if ci != ci else f" ±{_si(ci, 2)}"))
        t.add_row(*cells)
    Console().print(t)
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
@click.option(
    "-o",
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="PNG or SVG file (default: <results>/<first y>.png).",
)
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
    params = row_scenario(match.iloc[0].to_dict())
    report = run_scenario(params)
    if fmt == "json":
        click.echo(json.dumps(report, indent=2))
    else:
        Console().print(render(report, params))


def _parse_rates(text: str) -> list[float]:
    """``FROM:TO:NUM`` (geometric) or ``FROM:TO:NUM:lin``, or a comma-separated list."""
    parts = text.split(":")
    try:
        if len(parts) in (3, 4):
            lo, hi, num = float(parts[0]), float(parts[1]), int(parts[2])
            spacing = parts[3] if len(parts) == 4 else "log"
            if not (0 < lo < hi) or num < 2 or spacing not in ("log", "lin"):
                raise ValueError
            import numpy as np

            space = np.geomspace if spacing == "log" else np.linspace
            return [float(x) for x in space(lo, hi, num)]
        rates = [float(x) for x in text.split(",")]
    except ValueError:
        raise ConfigError(
            f"--rates {text!r}: expected FROM:TO:NUM (geometric), FROM:TO:NUM:lin, "
            "or a list like 1e4,5e4,1e5 (packets/s, all > 0, FROM < TO, NUM >= 2)",
            None,
        ) from None
    if not rates or any(not (r > 0) or math.isinf(r) for r in rates):
        raise ConfigError(f"--rates {text!r}: every rate must be a number > 0", None)
    return rates


@main.command()
@click.argument("scheme")
@click.argument("scenario", required=False, type=click.Path(dir_okay=False, path_type=Path))
@overrides_option
@click.option(
    "--rates",
    default="1e3:6e5:25",
    show_default=True,
    metavar="FROM:TO:NUM|LIST",
    help="Poisson arrival rates, packets/s: FROM:TO:NUM geometric, FROM:TO:NUM:lin, or a list.",
)
@click.option(
    "--empty-wait",
    type=click.Choice(["period", "half-period"]),
    default="half-period",
    show_default=True,
    help="poll, hybrid: wait of a packet that finds the system empty, Eq. 12 (half-period: "
    "the mean time to the next tick; period: the paper's upper bound T_poll).",
)
@click.option(
    "--printed",
    is_flag=True,
    help="irq: evaluate Eqs. 1-6 as printed instead of solving the model's Markov chain "
    "(they agree on throughput and CPU; Eq. 6 underestimates the latency).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
    help="table: for a person; csv or json: every column, for programs.",
)
@user_errors
def analytic(
    scheme: str,
    scenario: Path | None,
    sets: tuple[str, ...],
    rates: str,
    empty_wait: str,
    printed: bool,
    fmt: str,
) -> None:
    """Throughput, CPU availability and mean latency of SCHEME from its analytic model.

    The models of Salah et al. (2007): ideal (M/M/1/B), irq (the Markov chain of the model
    Eqs. 1-6 approximate; --printed for the equations), disable-enable (the Markov chain of
    Fig. 2, solved from its generator), poll (Eqs. 9-12 on an M/D/1/B queue, computed stably)
    and hybrid (disable-enable below its switching point, polling above).
    Costs, buffer and scheme parameters come from the scenario (optional SCENARIO file plus
    --set), e.g. --set platform.preset=salah2007 --set nic.ring_descriptors=32.

    \b
    Examples:
      irqlab analytic irq --set platform.preset=salah2007
      irqlab analytic disable-enable --set platform.irq_ns=2000 --rates 5e4,1e5,2e5
      irqlab analytic poll --set poll.quota=4 --format csv > poll.csv
    """
    from irqlab.analytic import SCHEMES_WITH_MODEL, curve
    from irqlab.scenario import resolve

    if scheme not in SCHEMES_WITH_MODEL:
        raise ConfigError(
            f"scheme '{scheme}' has no analytic model; models exist for "
            f"{', '.join(SCHEMES_WITH_MODEL)} (simulate the others with `irqlab run`)",
            "scheme",
        )
    params = resolve(scenario, [*parse_sets(sets), ("scheme", scheme)])
    df = curve(
        scheme,
        params,
        _parse_rates(rates),
        empty_wait=empty_wait,  # type: ignore[arg-type]
        normal_method="printed" if printed else "chain",
    )
    if fmt == "csv":
        click.echo(df.to_csv(index=False), nl=False)
        return
    if fmt == "json":
        click.echo(df.to_json(orient="records", indent=2))
        return
    table = Table(title=f"{scheme}: analytic model", title_justify="left")
    for name in ("offered", "throughput", "CPU availability", "mean latency", "loss", "ρ"):
        table.add_column(name, justify="right")
    for row in df.itertuples(index=False):
        table.add_row(
            f"{_si(row.rate_pps)} pps",
            f"{_si(row.throughput_pps)} pps",
            f"{row.cpu_availability:.3f}",
            f"{_si(row.latency_us)} µs",
            f"{row.loss_ratio:.2e}",
            f"{row.rho:.3f}",
        )
    Console().print(table)


@main.command()
@click.argument("study")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Output directory (default: results/STUDY, or results/STUDY-quick with --quick).",
)
@click.option("--quick", is_flag=True, help="A coarse version in under a minute.")
@executor_option
@workers_option
@scheduler_option
@progress_option
@user_errors
def reproduce(
    study: str,
    out: Path | None,
    quick: bool,
    executor: str,
    workers: int | None,
    scheduler: str | None,
    progress: bool | None,
) -> None:
    """Re-run a published study and write its figures (PNG), data (CSV) and headline table.

    \b
    Studies:
      salah2007     Salah, El-Badawi & Haidari (2007): seven interrupt-handling schemes and a
                    hybrid, analysis and simulation, Poisson and bursty traffic (Figs. 6, 9, 10)
      emmerich2015  Emmerich et al. (2015): ITR off, ixgbe's dynamic ITR and the linear ITR
                    (Figs. 3, 5, 7, 8), plus today's ixgbe, i40e, DIM and software coalescing

    The sweeps are resumable: rerunning the command reuses the runs already in --out.
    """
    from irqlab.studies import study as find

    module = find(study)
    target = out or Path("results") / (f"{study}-quick" if quick else study)
    console = Console(stderr=True)
    console.print(f"{module.TITLE}\n→ {target}", highlight=False)
    tables = module.reproduce(
        target,
        quick=quick,
        executor=executor,
        workers=workers,
        scheduler=scheduler,
        progress=console.is_terminal if progress is None else progress,
    )
    if "headline" in tables:
        click.echo(module.headline_markdown(tables["headline"]), nl=False)
    if "policies" in tables:
        click.echo(module.policy_markdown(tables["policies"]), nl=False)
    click.echo(f"wrote {target}/README.md and the figures and tables it lists")


if __name__ == "__main__":  # pragma: no cover
    main()
