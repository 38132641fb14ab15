"""``irqlab measure``: this host's receive-path counters over a window, as a bundle."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

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
@click.option(
    "--trace/--no-trace",
    default=True,
    show_default=True,
    help="Record the receive path's tracepoints too (root and bpftrace needed; without them "
    "the counters alone are recorded).",
)
@click.option(
    "--app-comm",
    metavar="NAME",
    help="The application's task name (as ps -o comm shows it): its wake-up delay is recorded.",
)
@click.option(
    "--iface",
    metavar="IFACE",
    help="The interface whose settings the bundle keeps, as irqlab probe reads them "
    "(default: the interface of the default route).",
)
@user_errors
def measure(
    seconds: float,
    out: Path | None,
    root: Path,
    trace: bool,
    app_comm: str | None,
    iface: str | None,
) -> None:
    """Record this host's receive path over a window and write a measurement bundle.

    Reads /proc/net/softnet_stat, /proc/softirqs (NET_RX, NET_TX), /proc/interrupts,
    /proc/net/snmp (UDP) and /proc/stat before and after the window, and writes DIR/manifest.json,
    counters_before.json, counters_after.json and summary.json (per-CPU NET_RX softirqs/s,
    packets/s, drops, time_squeeze, softirq CPU share; per-IRQ rates; UDP datagrams/s and
    RcvbufErrors/s), and settings.json (the host's settings as irqlab probe reads them). As
    root with bpftrace, also distributions.json: the tracepoints aggregated in the kernel —
    hard-IRQ handler time per IRQ, NET_RX softirq duration and raise-to-run delay per CPU,
    runs in ksoftirqd, packets per napi_poll per device, the app's wake-up delay — and what
    the probes cost. Without root: the counters only.

    \b
    Examples:
      irqlab measure --seconds 10 --out run1/ --app-comm sockperf
      irqlab measure --root recorded/ --seconds 0.1
    """
    from irqlab.ops.measure import TraceSession, check_seconds, record, write_bundle
    from irqlab.ops.measure.tracing import check_app_comm
    from irqlab.ops.probe import Host, interfaces
    from irqlab.scenario import show_key

    check_seconds(seconds)
    check_app_comm(app_comm)
    if not root.is_dir():
        raise ConfigError(f"--root {root}: no such directory", None)
    out = Path("measurement") if out is None else out
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: not a directory", None)
    host = Host(root)
    if iface is not None and iface not in interfaces(host):
        found = ", ".join(interfaces(host)[:16]) or "none"
        raise ConfigError(
            f"--iface {show_key(iface)}: no such interface; interfaces found: {found}", "iface"
        )
    if host.recorded:
        untraced = "a recorded host (--root): tracepoints are the running kernel's"
    else:
        untraced = "--no-trace"
    if trace and not host.recorded and os.geteuid() == 0:
        with TraceSession(app_comm=app_comm) as session:
            bundle = record(host, seconds, trace=session, iface=iface)
        for note in session.notes:
            click.echo(f"note: {note}", err=True)
    else:
        bundle = record(host, seconds, untraced=untraced, iface=iface)
    write_bundle(bundle, out)
    m, s = bundle.manifest, bundle.summary
    if bundle.distributions is None:
        click.echo(f"only the counters are recorded: {m['tracing_reason']}", err=True)
    if bundle.settings is None:
        click.echo(f"note: no settings.json: {m['settings_reason']}", err=True)
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
    if bundle.distributions is not None:
        _traced(console, s["traced"])
    click.echo(f"wrote {out}")


def _ns(value: float | None) -> str:
    return "—" if value is None else f"{value / 1000:,.1f} µs"


def _traced(console: Any, t: dict[str, Any]) -> None:
    """The tracepoints' headline numbers: NET_RX per CPU, packets per poll per device, the
    app's wake-up delay and what the probes cost."""
    table = Table(title="NET_RX softirq, from tracepoints")
    for col in ("CPU", "runs/s", "mean", "p99", "CPU share", "in ksoftirqd", "raise→run p99"):
        table.add_column(col, justify="right")
    for cpu, row in t["net_rx"].items():
        table.add_row(
            cpu,
            _fmt(row["net_rx_runs_per_s"]),
            _ns(row["net_rx_mean_ns"]),
            _ns(row["net_rx_p99_ns"]),
            _share(row["net_rx_share"]),
            _share(row["ksoftirqd_runs_share"]),
            _ns(row["raise_to_run_p99_ns"]),
        )
    if t["net_rx"]:
        console.print(table)
    for dev, row in t["napi_poll"].items():
        click.echo(
            f"napi_poll {dev}: {_fmt(row['polls_per_s'])} polls/s, "
            f"{_fmt(row['packets_per_poll'], 2)} packets per poll, "
            f"{_share(row['full_budget_share'])} used the whole budget"
        )
    wake = t["app_wakeup_us"]
    if wake is not None:
        click.echo(
            f"app wake-up delay: {wake['count']} wake-ups, p50 {_fmt(wake['p50'], 1)} µs, "
            f"p99 {_fmt(wake['p99'], 1)} µs"
        )
    costs = ", ".join(
        f"{name.split(':')[1]} {ns:.0f} ns"
        for name, ns in t["probes_ns_per_event"].items()
        if ns is not None
    )
    click.echo(
        f"probes' cost: {_share(t['probes_cpu_share'])} of all CPUs"
        + (f"; per event: {costs}" if costs else "")
    )
