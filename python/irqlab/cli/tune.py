"""``irqlab tune``: the setting that meets every SLO at the lowest cost."""

from __future__ import annotations

from pathlib import Path

import click

from irqlab.cli.common import (
    Console,
    main,
    out_option,
    overrides_option,
    parse_sets,
    pool_options,
    progress_option,
    user_errors,
)
from irqlab.errors import ConfigError


@main.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--slo",
    "slos",
    multiple=True,
    required=True,
    metavar="'METRIC OP VALUE'",
    help="A service-level objective every recommendation meets, at every load: "
    "'latency_us.p99 <= 50', 'loss_ratio <= 1e-6', 'throughput_pps >= 9.9e5' "
    "(repeatable; any metric of `irqlab run --format json`, dotted).",
)
@click.option(
    "--knob",
    "knobs",
    multiple=True,
    metavar="KEY=RANGE",
    help="A setting to search: a..b:step, a..b (nine values) or v1,v2,... "
    "(repeatable; the candidates are every combination). Default: the scheme's operator "
    "settings (docs/tune.md).",
)
@click.option(
    "--minimize",
    default="cpu.busy",
    show_default=True,
    metavar="METRIC",
    help="The objective: the feasible setting with its lowest mean wins.",
)
@overrides_option
@click.option(
    "--load-range",
    default=None,
    metavar="PPS",
    help="Loads (traffic.rate_pps) at which every SLO must hold: a..b:step, a..b or "
    "v1,v2,... (default: the scenario's rate). The objective is averaged over them.",
)
@click.option(
    "--seed", type=int, default=None, help="Override run.seed (the same seed, the same decisions)."
)
@click.option(
    "--confidence",
    type=float,
    default=0.95,
    show_default=True,
    help="Confidence of each 'meets the SLOs' decision (Bonferroni over SLOs and loads).",
)
@click.option(
    "--replications",
    default="3..10",
    show_default=True,
    metavar="MIN..MAX",
    help="Replications per candidate and load: MIN in the first round, then one more per "
    "round for the candidates still racing, up to MAX.",
)
@out_option(
    "Results folder (created; a rerun resumes from the runs it holds).",
    file_okay=False,
    required=True,
)
@click.option("--fresh", is_flag=True, help="Discard the runs already in --out first.")
@click.option(
    "--iface", default="IFACE", show_default=True, help="Interface name for the commands."
)
@click.option(
    "--driver",
    metavar="NAME",
    default=None,
    help="The host's NIC driver, as `irqlab probe` names it (ixgbe, i40e, ice, mlx5_core, "
    "virtio_net, vmxnet3): candidates it would refuse, round or has no counterpart for are "
    "skipped before racing, and listed with the reason.",
)
@pool_options
@progress_option
@user_errors
def tune(
    scenario: Path,
    slos: tuple[str, ...],
    knobs: tuple[str, ...],
    minimize: str,
    sets: tuple[str, ...],
    load_range: str | None,
    seed: int | None,
    confidence: float,
    replications: str,
    out: Path,
    fresh: bool,
    iface: str,
    driver: str | None,
    executor: str,
    workers: int | None,
    scheduler: str | None,
    progress: bool | None,
) -> None:
    """Find the setting that meets every SLO at the lowest cost, for SCENARIO's load.

    Searches the settings an operator can change (for napi/irq: driver.moderation among the
    policies, nic.itr_us for static, kernel.napi_defer_hard_irqs with
    kernel.gro_flush_timeout_ns, kernel.netdev_budget; or --knob) by racing: every candidate
    runs with the same random numbers, a round of replications at a time; candidates that
    clearly miss an SLO, or clearly cost more than the best feasible one, drop out; the rest
    get more replications. Prints the recommended setting as the commands to type, its
    margin to each SLO with its interval, and the runners-up (docs/tune.md).

    \b
    Example:
      irqlab tune examples/emmerich2015.toml --set traffic.rate_pps=1e6 \\
          --slo 'latency_us.p99 <= 50' --out results/tune

    \b
    Writes to --out:
      recommendation.md   the commands, margins, runners-up (also printed)
      recommendation.json the same, for scripts
      candidates.csv      every candidate: status, objective and SLO metrics with intervals
      pareto.csv/.png     the objective against the first SLO's metric, and its frontier
      journal.sqlite      every finished run (a rerun resumes from it), tune.json the setup
    """
    from irqlab.experiments import progress_bar
    from irqlab.ops.tune import parse_range, summary_text
    from irqlab.ops.tune import tune as run_tune

    lo, sep, hi = replications.partition("..")
    try:
        reps = (int(lo), int(hi)) if sep else (int(lo), int(lo))
    except ValueError:
        raise ConfigError(f"--replications {replications}: expected MIN..MAX", None) from None
    loads = parse_range("traffic.rate_pps", load_range) if load_range else None
    show = Console(stderr=True).is_terminal if progress is None else progress
    bar = progress_bar(show, "runs (at most)", "ETA ≤")
    with bar:
        task = bar.add_task("tune", total=None)

        def advance(done: int, most: int) -> None:
            bar.update(task, completed=done, total=most)

        result = run_tune(
            scenario,
            slos,
            knobs=knobs,
            minimize=minimize,
            overrides=parse_sets(sets),
            loads=loads,
            seed=seed,
            confidence=confidence,
            min_replications=reps[0],
            max_replications=reps[1],
            out=out,
            fresh=fresh,
            executor=executor,
            workers=workers,
            scheduler=scheduler,
            progress=advance,
            iface=iface,
            driver=driver,
        )
        bar.update(task, total=result.runs, completed=result.runs)
    click.echo(summary_text(result), nl=False)
    click.echo(f"wrote {out}/recommendation.md, candidates.csv, pareto.csv and pareto.png")
