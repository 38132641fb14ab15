"""``irqlab reproduce`` and ``irqlab report``: a study re-run, and any result as one HTML page."""

from __future__ import annotations

from pathlib import Path

import click

from irqlab.cli.common import (
    Console,
    check_output_file,
    main,
    out_option,
    pool_options,
    progress_option,
    user_errors,
)


@main.command()
@click.argument("study")
@out_option(
    "Output directory (default: results/STUDY, or results/STUDY-quick with --quick).",
    file_okay=False,
)
@click.option("--quick", is_flag=True, help="A coarse version in under a minute.")
@pool_options
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
      chang2007     Chang et al. (2007): goodput of an application under receive load with
                    NAPI, QAPolling, AIC and RHIP (Figs. 8-11, Table II)
      beifuss2016   Beifuß et al. (2016): ingress QoS, SQ, RR, LL-RR and LL-WFQ (Figs. 5a/b,
                    6a/b, 7a/b) and the paper's numbers beside irqlab's
      busypoll2013  the socket busy-poll cover letter (2013): TCP_RR transactions/s with and
                    without busy polling, rx-usecs 0 / adaptive / 100, deep C-states on and off
      irq-suspend   Linux 6.13 IRQ suspension: interrupts, deferral, busy polling and suspension
                    at low, medium and saturating load, with napi.rst's conclusions
      threaded-busypoll
                    the threaded NAPI busy polling letter (2025): xsk_rr round trips with
                    interrupts, SO_BUSYPOLL inline and on its own core, threaded busy polling

    The sweeps are resumable: rerunning the command reuses the runs already in --out.
    """
    from irqlab.studies import reproduce as run_study
    from irqlab.studies import study as find

    found = find(study)
    target = out or Path("results") / (f"{study}-quick" if quick else study)
    console = Console(stderr=True)
    console.print(f"{found.TITLE}\n→ {target}", highlight=False)
    tables = run_study(
        found,
        target,
        quick=quick,
        executor=executor,
        workers=workers,
        scheduler=scheduler,
        progress=console.is_terminal if progress is None else progress,
    )
    printed = [markdown(tables[name]) for name, markdown in found.TABLES.items()]
    click.echo("\n".join(printed), nl=False)
    click.echo(f"wrote {target}/README.md and the figures and tables it lists")


@main.command()
@click.argument("results", type=click.Path(path_type=Path))
@out_option(
    "The HTML file to write (default: RESULTS/report.html for a folder, r.html beside "
    "r.json). Its directory must exist; an existing FILE is replaced.",
    metavar="FILE",
)
@click.option("--title", default=None, help="The page's title (default: one naming the result).")
@user_errors
def report(results: Path, out: Path | None, title: str | None) -> None:
    """Write one self-contained HTML page of RESULTS, to read in a browser or send to someone.

    \b
    RESULTS is any result irqlab writes; which one is told by its files:
      r.json          a run's report (irqlab run ... --format json --out r.json)
      a sweep folder  sweep.json, runs.parquet, summary.parquet (irqlab sweep)
      a tune folder   tune.json, candidates.csv, recommendation.json (irqlab tune)
      a reproduction  README.md and its figures and tables (irqlab reproduce)

    The page holds the scenario (every key), the key metrics, the figures, the tables with
    their 95% confidence intervals, and the commands that re-run each result. The figures of
    runs, sweeps and tunes are interactive: hover over a point to read its value, click a
    legend entry to hide or show a line. Everything is inside the file (plotly.js, about
    5 MB, and the images): it opens offline and fetches nothing.

    \b
    Examples:
      irqlab report results/livelock                  # → results/livelock/report.html
      irqlab run examples/napi.toml --format json --out r.json && irqlab report r.json
      irqlab report results/tune -o tune.html --title "eth0 at 1 Mpps"
      irqlab report results/emmerich2015 -o emmerich2015.html
    """
    from irqlab.report.html import default_out, detect, write_report

    kind = detect(results)  # before anything is written: a damaged folder is one line
    target = out or default_out(results)
    check_output_file(target, "--out")
    write_report(results, target, title=title)
    size = target.stat().st_size
    click.echo(f"wrote {target} ({kind}, {size / 1e6:.1f} MB)")
