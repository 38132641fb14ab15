"""``irqlab run``, ``irqlab check`` and ``irqlab keys``: one scenario, run, checked, or its keys
listed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from irqlab.cli.common import (
    Console,
    Table,
    check_output_file,
    format_option,
    main,
    out_option,
    overrides_option,
    parse_sets,
    user_errors,
)
from irqlab.errors import ConfigError


@main.command()
@click.argument("scenario", type=click.Path(path_type=Path))
@click.option("--seed", type=int, default=None, help="Override run.seed.")
@overrides_option
@format_option
@out_option(
    "Write the output to FILE instead of stdout. FILE's directory must exist (it is not "
    "created); an existing FILE is replaced. Checked before the run.",
    metavar="FILE",
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

    A run of more than 1e9 packets (traffic.rate_pps × (warm-up + duration); a minute or
    more) is announced with a warning line on stderr. Ctrl-C stops any run within about a
    second: one line on stderr, nothing written, exit status 130.
    """
    from irqlab.report import render
    from irqlab.scenario import build
    from irqlab.simulate import expected_packets, simulated_seconds
    from irqlab.simulate import run as run_scenario

    # built once: its warnings are said here, and the run takes it as it is
    resolved = build(scenario, parse_sets(sets), seed=seed)
    params = resolved.params
    _warn_if_large(params)
    if out:
        check_output_file(out, "--out")
    seconds = simulated_seconds(params)
    packets = expected_packets(params)
    status = Console(stderr=True)
    if packets > 2e7 and status.is_terminal:
        # Long runs (seconds of wall time): say what is happening while the core works.
        with status.status(f"simulating {packets / 1e6:,.0f} M packets ({seconds:g} s)…"):
            report = run_scenario(resolved)
    else:
        report = run_scenario(resolved)
    if fmt == "json":
        text = json.dumps(report, indent=2) + "\n"
        if out:
            _write(out, lambda fh: fh.write(text))
        else:
            click.echo(text, nl=False)
        return
    table = render(report, params)
    if out:
        _write(out, lambda fh: Console(file=fh, width=100, color_system=None).print(table))
    else:
        Console().print(table)


def _warn_if_large(params: dict[str, Any]) -> None:
    """One line on stderr before a run of more than ``LARGE_RUN_PACKETS`` packets."""
    from irqlab.simulate import large_run_warning

    warning = large_run_warning(params)
    if warning:
        click.echo(f"irqlab: warning: {warning}", err=True)


def _write(path: Path, write: Callable[[Any], Any]) -> None:
    """Writes ``path`` with ``write(file)``; a failure (a full disk) is one line."""
    try:
        with path.open("w", encoding="utf-8") as fh:
            write(fh)
    except OSError as e:
        raise ConfigError(f"--out {path}: cannot write ({e.strerror or e})", "--out") from None


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
    from irqlab.report.layout import fit, min_width
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
    console = Console()
    if min_width(t, console) <= console.width:
        console.print(fit(t, prose=("allowed", "meaning")))
    else:  # too narrow for the table without cutting a bound (a pipe: 80 columns)
        click.echo(_key_list(rows, console.width), nl=False)


def _key_list(rows: list[tuple[str, ...] | None], width: int) -> str:
    """The keys as a list, for an output too narrow for their table: ``key = default``, then
    the allowed values and the meaning indented beneath (a section's heading: ``[[app]]``,
    how many entries it takes and what they are)."""
    import textwrap

    out: list[str] = []
    for row in rows:
        if row is None:
            out.append("")
            continue
        key, default, allowed, doc = row
        out.append(f"{key}  ({allowed})" if key.startswith("[[") else f"{key} = {default}")
        for line in [doc] if key.startswith("[[") else [allowed, doc]:
            out.append(
                textwrap.fill(
                    line,
                    max(width, 40),
                    initial_indent="    ",
                    subsequent_indent="    ",
                    break_long_words=False,
                    break_on_hyphens=False,
                )
            )
    return "\n".join(out) + "\n"


@main.command()
@click.argument("scenario", type=click.Path(path_type=Path))
@click.option("--seed", type=int, default=None, help="Override run.seed.")
@overrides_option
@user_errors
def check(scenario: Path, seed: int | None, sets: tuple[str, ...]) -> None:
    """Validate SCENARIO without running it; print every key with its resolved value.

    A scenario of more than 1e9 packets (traffic.rate_pps × (warm-up + duration)) gets a
    warning line on stderr saying how long its run would take. With driver.moderation =
    "python", the class that driver.policy names is imported (and so checked) too.
    """
    from irqlab.ops.policies import resolve_policy
    from irqlab.scenario import resolve

    params = resolve(scenario, parse_sets(sets), seed=seed)
    resolve_policy(params)
    _warn_if_large(params)
    for key, value in params.items():
        click.echo(f"{key} = {json.dumps(value)}")
