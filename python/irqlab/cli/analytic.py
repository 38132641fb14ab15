"""``irqlab analytic``: a scheme's analytic model (Salah et al. 2007) over a range of rates."""

from __future__ import annotations

import math
from pathlib import Path

import click

from irqlab.cli.common import (
    Console,
    Table,
    main,
    overrides_option,
    parse_sets,
    user_errors,
)
from irqlab.errors import ConfigError
from irqlab.formatting import si


def _parse_rates(text: str) -> list[float]:
    """``FROM:TO:NUM`` (geometric) or ``FROM:TO:NUM:lin``, or a comma-separated list: at most
    :data:`irqlab.analytic.limits.MAX_RATES` rates, counted before any is made."""
    from irqlab.analytic.limits import MAX_RATES

    shown = repr(text if len(text) <= 60 else text[:57] + "...")
    parts = text.split(":")
    try:
        if len(parts) in (3, 4):
            lo, hi, num = float(parts[0]), float(parts[1]), int(parts[2])
            spacing = parts[3] if len(parts) == 4 else "log"
            if not (0 < lo < hi < math.inf) or num < 2 or spacing not in ("log", "lin"):
                raise ValueError
        else:
            rates = [float(x) for x in text.split(",")]
            num = len(rates)
    except ValueError:
        raise ConfigError(
            f"--rates {shown}: expected FROM:TO:NUM (geometric), FROM:TO:NUM:lin, "
            "or a list like 1e4,5e4,1e5 (packets/s, finite and > 0, FROM < TO, NUM >= 2)",
            None,
        ) from None
    if num > MAX_RATES:
        raise ConfigError(
            f"--rates {shown}: {num:,} rates; a curve takes at most {MAX_RATES:,} "
            "(fewer rates, or several curves)",
            None,
        )
    if len(parts) in (3, 4):
        import numpy as np

        space = np.geomspace if spacing == "log" else np.linspace
        return [float(x) for x in space(lo, hi, num)]
    if not rates or any(not (r > 0) or math.isinf(r) for r in rates):
        raise ConfigError(f"--rates {shown}: every rate must be a number > 0", None)
    return rates


@main.command()
@click.argument("scheme")
@click.argument("scenario", required=False, type=click.Path(path_type=Path))
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
    from irqlab.report.layout import fit
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
            f"{si(row.rate_pps)} pps",
            f"{si(row.throughput_pps)} pps",
            f"{row.cpu_availability:.3f}",
            f"{si(row.latency_us)} µs",
            f"{row.loss_ratio:.2e}",
            f"{row.rho:.3f}",
        )
    Console().print(fit(table))
