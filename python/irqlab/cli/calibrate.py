"""``irqlab calibrate``: free parameters fitted to measured values."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from irqlab.cli.common import (
    Console,
    main,
    out_option,
    pool_options,
    progress_option,
    stops_resumably,
    user_errors,
)
from irqlab.errors import ConfigError


@main.command(
    epilog="""\b
A targets file (docs/calibrate.md):
  [calibrate]
  name = "my-host"                 # the preset written: OUT/my-host.toml
  seeds = [1, 2]                   # every candidate runs every point at these seeds
  [base]                           # the scenario every point starts from
  "platform.preset" = "beifuss2016"
  scheme = "napi"
  run.duration_ms = 50
  [free]                           # the keys fitted, within bounds
  "platform.irq_ns" = { min = 500, max = 5000 }
  "platform.proto_ns" = { min = 100, max = 2000, log = true }
  [[target]]                       # a measured value the fit meets
  name = "IRQ rate at 1.5 Mpps"
  point = { "traffic.rate_pps" = 1_500_000 }
  metric = "irq_per_s"             # any metric of `irqlab run --format json`, dotted
  value = 32_000
  sigma = 2_000                    # or relative = 0.05, or weight = 2
  [[target]]
  point = { "traffic.rate_pps" = 1_700_000 }
  metric = "cpu.busy"
  value = 1.0                      # σ: 5 % of the value by default
  [[validate]]                     # measured, not fitted: predicted and compared
  point = { "traffic.rate_pps" = 1_000_000 }
  metric = "cpu.busy"
  value = 0.99

\b
Example:
  irqlab calibrate examples/calibrate_beifuss2016.toml
  irqlab report results/calibrate-beifuss2016
"""
)
@click.argument("targets", nargs=-1, required=True, type=click.Path(path_type=Path))
@out_option(
    "Results folder (created; default: calibrate.out in the file, else "
    "results/calibrate-NAME). A rerun into it resumes from the runs it holds.",
    file_okay=False,
)
@click.option(
    "--max-evaluations",
    type=int,
    default=None,
    help="Model evaluations at most (each: every point at every seed); default: "
    "calibrate.max_evaluations, else 200.",
)
@click.option(
    "--fit-rates",
    default=None,
    metavar="R1,R2,...",
    help="With a lab's folder: the rates fitted (at most half of the lab's; default: half "
    "of them, spread over the range with both ends); the others are predicted.",
)
@click.option(
    "--scenario",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="With measurement bundles: the host's scenario (irqlab probe IFACE -o FILE); "
    "default: the one probe wrote into the first bundle (settings.json).",
)
@pool_options
@progress_option
@user_errors
def calibrate(
    targets: tuple[Path, ...],
    out: Path | None,
    max_evaluations: int | None,
    fit_rates: str | None,
    scenario: Path | None,
    executor: str,
    workers: int | None,
    scheduler: str | None,
    progress: bool | None,
) -> None:
    """Fit the free parameters of a TARGETS file (or a lab's folder, or measurement
    bundles) to its measured values.

    Every candidate runs every target's scenario point at the same seeds (common random
    numbers); scipy's bounded least squares ('trf') moves the free parameters to minimise
    χ² = Σ ((predicted − measured) / σ)², σ including the simulation's standard error over the
    seeds; the Jacobian's candidates run in one batch on the workers. Then each parameter's
    uncertainty (from the Jacobian, checked by a profile), whether the targets identify it,
    χ²/dof and the worst residuals, and the validation points' residuals. Says clearly when
    a parameter is not identified or the fit is poor.

    \b
    Writes to --out:
      NAME.toml                  the fitted preset: a scenario file, each value with its
                                 uncertainty (irqlab run OUT/NAME.toml --set ...)
      residuals.csv              every target and validation point: measured, σ,
                                 predicted, its standard error, residual, residual/σ
      calibration.json           everything: parameters, uncertainties, identifiability,
                                 χ², evaluations, wall time
      measured_vs_predicted.png  one panel per metric, error bars both ways, y = x
      journal.sqlite             every finished run; rerunning the command resumes from it

    \b
    TARGETS may be the folder `irqlab lab` wrote: its host becomes the scenario (a veth
    pair, the sending thread, the app), its costs are fitted at half of the lab's rates
    and the other rates are predicted (docs/calibrate.md, "From a lab"). It also writes
      lab-targets.toml                 the targets file made from the lab
      lab-host.toml                    the lab's host as a scenario file (run, tune)
      lab-comparison.json              every rate: measured (each run), predicted ± s.e.,
                                       the tolerance and whether it is met
      lab_predicted_vs_measured.png    one panel per quantity against the rate
      lab-distributions.json           at the lab's traced points: packets per poll
      lab_packets_per_poll.png         (log2 buckets) and the app's wake-up delay,
                                       measured and predicted (evidence, no goal)

    \b
    TARGETS may be one or more bundles `irqlab measure` wrote on a host under load
    (docs/calibrate.md, "From measurement bundles"): the host's probed scenario (--scenario,
    else the first bundle's) is fitted at half of the bundles' rates (the interface's
    received packets/s) and predicts the others: per-CPU softirq share, IRQs/s per queue,
    packets per poll (traced bundles), the app's rate and socket drops (with an app). A
    bundle of another kernel, driver or HZ than the scenario is a warning. It also writes
    bundle-targets.toml, bundle-host.toml, bundle-comparison.json and
    bundle_predicted_vs_measured.png, as with a lab.
    """
    from irqlab.calibration import calibrate as run_calibration
    from irqlab.calibration import parse_targets, summary_text
    from irqlab.calibration.bundle import is_bundle
    from irqlab.experiments import progress_bar
    from irqlab.files import own_folder, writable_folder

    lab = None
    bundles = None
    paths = targets
    first = paths[0]
    if len(paths) > 1 or is_bundle(first):
        from irqlab.calibration.bundle import bundle_targets, load_bundles

        for p in paths:
            if not is_bundle(p):
                raise ConfigError(
                    f"{p}: not a measurement bundle (irqlab measure -o DIR); with several "
                    "TARGETS each is a bundle",
                    "targets",
                )
        if fit_rates is not None:
            raise ConfigError("--fit-rates: only with a lab's folder as TARGETS", "fit_rates")
        bundles = load_bundles(paths, scenario)
        tree, plan = bundle_targets(bundles)
        name = paths[0].name if len(paths) == 1 else f"{paths[0].name}-and-{len(paths) - 1}"
        target = Path(os.path.normpath(out or Path("results") / f"calibrate-{name}"))
        own_folder(target, "calibration", "--out")
        writable_folder(target, "--out")
        file = _write_bundle_targets(tree, plan, bundles.scenario_text, target)
    elif scenario is not None:
        raise ConfigError("--scenario: only with measurement bundles as TARGETS", "scenario")
    elif first.is_dir() or first.name == "lab.json":
        from irqlab.calibration.lab import lab_scenario, lab_targets, load_lab

        lab = load_lab(first)
        tree, plan = lab_targets(lab, fit=_rates(fit_rates))
        host = lab_scenario(lab)
        target = Path(os.path.normpath(out or Path("results") / f"calibrate-{lab.path.name}"))
        own_folder(target, "calibration", "--out")
        writable_folder(target, "--out")
        file = _write_lab_targets(tree, plan, host, target)
    elif fit_rates is not None:
        raise ConfigError("--fit-rates: only with a lab's folder as TARGETS", "fit_rates")
    else:
        file = first
    spec = parse_targets(file)
    if lab is None and bundles is None:
        target = Path(
            os.path.normpath(out or spec.out or Path("results") / f"calibrate-{spec.name}")
        )
        own_folder(target, "calibration", "--out")
        writable_folder(target, "--out")
    console = Console(stderr=True)
    console.print(
        f"calibrate: {len(spec.free)} free parameter(s), {len(spec.targets)} target(s), "
        f"{len(spec.seeds)} seed(s) → {target}",
        highlight=False,
    )
    show = console.is_terminal if progress is None else progress
    bar = progress_bar(show, "runs of the batch", "ETA")
    with stops_resumably(target, "calibration"), bar:
        task = bar.add_task("calibrate", total=None)
        batches = [0]

        def advance(done: int, total: int) -> None:
            if done == 0:
                batches[0] += 1
                bar.update(task, description=f"batch {batches[0]}")
            bar.update(task, completed=done, total=total)

        result = run_calibration(
            spec,
            out=target,
            executor=executor,
            workers=workers,
            scheduler=scheduler,
            max_evaluations=max_evaluations,
            progress=advance,
        )
    click.echo(summary_text(result), nl=False)
    if lab is not None:
        from irqlab.calibration.lab import write_comparison

        text, files = write_comparison(target, result.rows, lab)
        click.echo(text, nl=False)
        result.files += files
        from irqlab.calibration.distributions import write_distributions

        text, files = write_distributions(target, lab, result.values, spec.seeds)
        click.echo(text, nl=False)
        result.files += files
    if bundles is not None:
        from irqlab.calibration.lab import write_plan_comparison

        kernel = bundles.host.kernel or "the host"
        meta = {
            "bundles": [str(b.path) for b in bundles.bundles],
            "scenario": bundles.scenario_source,
            "kernel": bundles.host.kernel,
            "hz": bundles.host.hz,
        }
        text, files = write_plan_comparison(
            target, result.rows, "bundle", f"{kernel}: measured against predicted", meta,
            "the bundles",
        )  # fmt: skip
        click.echo(text, nl=False)
        result.files += files
    click.echo(f"wrote {target}/{', '.join(result.files)}")


def _rates(text: str | None) -> list[float] | None:
    """--fit-rates as numbers (k and M allowed, as `irqlab lab --rates`); a bad entry is one
    line naming it."""
    if text is None:
        return None
    out = []
    for part in text.split(","):
        word = part.strip().replace("_", "")
        scale = {"k": 1e3, "K": 1e3, "M": 1e6}.get(word[-1:], 1.0)
        try:
            out.append(float(word[:-1] if scale != 1.0 else word) * scale)
        except ValueError:
            raise ConfigError(
                f"--fit-rates: {part.strip()!r} is not a rate (give packets/s, e.g. "
                "20153,150153 or 20k)",
                "fit_rates",
            ) from None
    return out


def _write_bundle_targets(
    tree: dict[str, Any], plan: list[dict[str, Any]], scenario: str, out: Path
) -> Path:
    """The bundles' targets file, its plan and the host's scenario (bundle-host.toml, its
    base), written into the results folder; the targets file's path."""
    import json

    from irqlab import toml_writer
    from irqlab.files import write_atomic

    out.mkdir(parents=True, exist_ok=True)
    path = out / "bundle-targets.toml"
    header = "# Targets made by irqlab calibrate from measurement bundles (docs/calibrate.md)\n"
    write_atomic(path, header + toml_writer.document(tree), "--out")
    write_atomic(out / "bundle-plan.json", json.dumps(plan, indent=1) + "\n", "--out")
    write_atomic(out / "bundle-host.toml", scenario, "--out")
    return path


def _write_lab_targets(
    tree: dict[str, Any], plan: list[dict[str, Any]], host: dict[str, Any], out: Path
) -> Path:
    """The lab's targets file, its plan and its host as a scenario file (lab-host.toml, for
    run and tune with the fitted preset), written into the results folder; the targets
    file's path."""
    import json

    from irqlab import toml_writer
    from irqlab.files import write_atomic

    out.mkdir(parents=True, exist_ok=True)
    path = out / "lab-targets.toml"
    header = "# Targets made by irqlab calibrate from a lab's folder (docs/calibrate.md)\n"
    write_atomic(path, header + toml_writer.document(tree), "--out")
    write_atomic(out / "lab-plan.json", json.dumps(plan, indent=1) + "\n", "--out")
    note = "# The lab's host (irqlab calibrate); its fitted costs: --set @lab-fitted.toml\n"
    write_atomic(out / "lab-host.toml", note + toml_writer.scenario(host), "--out")
    return path
