"""The ``irqlab`` command line.

Every subcommand has ``--help``. User errors (bad scenario, missing file) print one line on
stderr and exit with status 2; they never print a traceback.
"""

from __future__ import annotations

import functools
import json
import sys
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
        '(repeatable; values are read as TOML: numbers, "strings" or bare words).',
    )(f)


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
    """


@main.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--seed", type=int, default=None, help="Override run.seed.")
@overrides_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="table: for a person; json: every metric, for programs.",
)
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
    load-latency product. The same scenario and seed always give the same output.
    """
    from irqlab.report import render_table
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
    table = render_table(report, params)
    if out:
        with out.open("w", encoding="utf-8") as fh:
            Console(file=fh, width=100, color_system=None).print(table)
    else:
        Console().print(table)


@main.command()
@click.argument("prefix", required=False, default="")
def keys(prefix: str) -> None:
    """List every scenario key (or those starting with PREFIX), its default and allowed values."""
    from irqlab.scenario import schema

    t = Table(show_header=True, header_style="bold", show_lines=False)
    t.add_column("key")
    t.add_column("default", justify="right")
    t.add_column("allowed")
    t.add_column("meaning")
    for key, spec in schema().items():
        if key.startswith(prefix):
            t.add_row(key, str(spec["default"]), spec["allowed"], spec["doc"])
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


if __name__ == "__main__":  # pragma: no cover
    main()
