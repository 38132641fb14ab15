"""``irqlab probe``: a scenario of this host's receive path."""

from __future__ import annotations

from pathlib import Path

import click

from irqlab.cli.common import (
    Console,
    main,
    out_option,
    root_option,
    user_errors,
)
from irqlab.errors import ConfigError


@main.command()
@click.argument("iface", required=False)
@out_option(
    "Write the scenario to FILE (default: print it on stdout, the summary on stderr).",
    metavar="FILE",
)
@click.option("--force", is_flag=True, help="Replace --out if it exists (else: an error).")
@click.option(
    "--interval",
    default="1s",
    show_default=True,
    metavar="DURATION",
    help="Time between the two samples of /proc/interrupts and of the interface's packet "
    "counters that give the IRQ and packet rates: 1s, 500ms, or 0 (one sample, no rates).",
)
@root_option(
    "Probe a recorded host instead of this one: ROOT/proc and ROOT/sys as the host had "
    "them, ethtool's output in ROOT/ethtool/IFACE/{driver,show-coalesce,show-ring,"
    "show-channels,show-rxfh-indir}, netlink's per-NAPI settings in ROOT/netlink/IFACE/napi-get, "
    "second samples as FILE.2 (docs/probe.md)."
)
@user_errors
def probe(iface: str | None, out: Path | None, force: bool, interval: str, root: Path) -> None:
    """Write a scenario of this host's receive path for IFACE (default: the interface of the
    default route).

    Reads the interface's coalescing, ring sizes, channels and RSS table (`ethtool
    -c/-g/-l/-x/-i`), the NAPI and busy-poll sysctls (netdev_budget, netdev_budget_usecs,
    busy_read, busy_poll), the per-device and per-NAPI settings (napi_defer_hard_irqs,
    gro_flush_timeout, and irq-suspend-timeout over netlink), its IRQs with their affinity and
    rates (/proc/interrupts sampled twice), the CPUs, their clock and the kernel's tick rate,
    and the driver. Each value in the scenario names its source in a comment; the costs a
    host cannot tell (how long an IRQ or a packet takes) are irqlab's defaults marked
    "default — calibrate". No root needed; whatever cannot be read (no ethtool, an old
    kernel) becomes a note in the file and the summary.

    \b
    Examples:
      irqlab probe eth0 --out host.toml
      irqlab run host.toml --set traffic.rate_pps=5e5 --set traffic.flows=64
      irqlab probe > host.toml             # the default route's interface, to stdout
      irqlab probe ens4 --root recorded/   # a host recorded elsewhere (docs/probe.md)
    """
    from irqlab.ops.probe import parse_interval, summary, write
    from irqlab.ops.probe import probe as run_probe
    from irqlab.report.layout import fit

    seconds = parse_interval(interval)
    if out is not None:
        if out.exists() and not force:
            raise ConfigError(f"{out} exists; --force to overwrite it", None)
        if not out.parent.is_dir():
            raise ConfigError(f"{out}: no directory {out.parent}", None)
    if not root.is_dir():
        raise ConfigError(f"--root {root}: no such directory", None)
    console = Console(stderr=out is None)
    if seconds > 0 and console.is_terminal:
        with console.status(f"sampling /proc/interrupts for {seconds:g} s…"):
            result = run_probe(iface, root=root, interval_s=seconds)
    else:
        result = run_probe(iface, root=root, interval_s=seconds)
    if out is None:
        click.echo(result.toml(), nl=False)
    else:
        write(result, out, force=force)
    for table in summary(result):
        console.print(fit(table, prose=("source", "why")))
    for note in result.notes:
        click.echo(f"note: {note}", err=out is None)
    if out is not None:
        click.echo(f"wrote {out}")
