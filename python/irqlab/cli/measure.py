"""``irqlab measure``: this host's receive-path counters over a window, as a bundle."""

from __future__ import annotations

from pathlib import Path

import click

from irqlab.cli.common import Console, Table, main, out_option, root_option, user_errors
from irqlab.errors import ConfigError


def _fmt(value: float | None, digits: int = 0) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _share(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


@main.command()
@click.option(
    "--seconds",
    type=float,
    default=5.0,
    show_default=True,
    help="The window, 0.1 to 3600 s; Ctrl-C ends it early and the bundle covers the shorter "
    "window.",
)
@out_option(
    "The bundle's directory (default: measurement; made if absent, its files replaced).",
    metavar="DIR",
    file_okay=False,
)
@root_option("Read a recorded host instead of this one: ROOT/proc as the host had it.")
@user_errors
def measure(seconds: float, out: Path | None, root: Path) -> None:
    """Record this host's receive-path counters over a window and write a measurement bundle.

    Reads /proc/net/softnet_stat, /proc/softirqs (NET_RX, NET_TX), /proc/interrupts,
    /proc/net/snmp (UDP) and /proc/stat before and after the window, and writes DIR/manifest.json,
    counters_before.json, counters_after.json and summary.json (per-CPU NET_RX softirqs/s,
    packets/s, drops, time_squeeze, softirq CPU share; per-IRQ rates; UDP datagrams/s and
    RcvbufErrors/s). Counters only: no tracepoints, no root needed.

    \b
    Examples:
      irqlab measure --seconds 10 --out run1/
      irqlab measure --root recorded/ --seconds 0.1
    """
    from irqlab.ops.measure import check_seconds, record, write_bundle
    from irqlab.ops.probe import Host

    check_seconds(seconds)
    if not root.is_dir():
        raise ConfigError(f"--root {root}: no such directory", None)
    out = Path("measurement") if out is None else out
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: not a directory", None)
    bundle = record(Host(root), seconds)
    write_bundle(bundle, out)
    m, s = bundle.manifest, bundle.summary
    click.echo(f"only the counters are recorded: {m['tracing_reason']}", err=True)
    if m["interrupted"]:
        click.echo(f"window ended early by Ctrl-C: {m['window_s']:.2f} s", err=True)
    for name, why in m["missing"].items():
        click.echo(f"note: {name}: {why}", err=True)
    for warning in s["warnings"]:
        click.echo(f"warning: {warning}", err=True)
    table = Table(title=f"per CPU over {m['window_s']:.2f} s")
    for col in ("CPU", "NET_RX/s", "packets/s", "dropped", "squeezed", "softirq", "irq"):
        table.add_column(col, justify="right")
    for row in s["cpus"]:
        table.add_row(
            str(row["cpu"]),
            _fmt(row["net_rx_per_s"]),
            _fmt(row["packets_per_s"]),
            _fmt(row["dropped"]),
            _fmt(row["time_squeeze"]),
            _share(row["softirq_share"]),
            _share(row["irq_share"]),
        )
    console = Console()
    console.print(table)
    udp = s["udp"]
    if udp:
        click.echo(
            f"UDP: {_fmt(udp.get('InDatagrams_per_s'))} datagrams/s, "
            f"{_fmt(udp.get('RcvbufErrors_per_s'))} RcvbufErrors/s"
        )
    click.echo(f"wrote {out}")
