"""``irqlab lab``: a paced UDP load between two network namespaces of this host, measured at
each rate, threaded NAPI off and on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from irqlab.cli.common import Console, Table, main, out_option, user_errors
from irqlab.ops.lab.plan import DEFAULT_RATES


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _share_columns(shares: dict[str, float], cpus: list[str]) -> list[str]:
    return [_pct(shares.get(cpu)) for cpu in cpus]


def summary_table(lab: dict[str, Any]) -> Any:
    """The sweep's points, one row each."""
    cpus = sorted({c for p in lab["points"] for c in p["measured"]["net_rx_share"]}, key=int)
    table = Table(title=f"irqlab lab: {lab['size_bytes']}-byte UDP, {lab['seconds']:g} s a point")
    for col in ("threaded", "asked/s", "sent/s", "received/s", "sock drops"):
        table.add_column(col, justify="right")
    for cpu in cpus:
        table.add_column(f"softirq CPU{cpu}", justify="right")
    for cpu in cpus:
        table.add_column(f"ksoftirqd/{cpu}", justify="right")
    table.add_column("napi thread", justify="right")
    table.add_column("pkts/poll", justify="right")
    for p in lab["points"]:
        m = p["measured"]
        ppp = m["packets_per_poll"]
        table.add_row(
            "on" if p["threaded"] else "off",
            f"{p['rate_pps']:,.0f}",
            f"{m['sent_pps']:,.0f}",
            f"{m['app_pps']:,.0f}",
            _pct(m["socket_drop_ratio"]),
            *_share_columns(m["net_rx_share"], cpus),
            *_share_columns(m["ksoftirqd_share"], cpus),
            _pct(m["napi_thread_share"]),
            "—" if ppp is None else f"{ppp:.2f}",
        )
    return table


@main.command()
@click.option(
    "--rates",
    default=",".join(f"{r // 1000}k" for r in DEFAULT_RATES),
    show_default=True,
    help="The sender's rates, messages/s, comma-separated (k and M allowed).",
)
@click.option(
    "--threaded",
    default="off,on",
    show_default=True,
    help="Threaded NAPI of the receiving veth: off, on, or off,on.",
)
@click.option("--repeats", type=int, default=1, show_default=True, help="Each point's repeats.")
@click.option(
    "--seconds", type=float, default=3.0, show_default=True, help="Each point's window, 0.5-60 s."
)
@click.option("--size", type=int, default=64, show_default=True, help="UDP payload, 14-1472 bytes.")
@click.option("--sender-core", type=int, default=0, show_default=True, help="The sender's CPU.")
@click.option(
    "--app-core", type=int, default=1, show_default=True, help="The receiving application's CPU."
)
@click.option(
    "--napi-core",
    type=int,
    default=None,
    help="The NAPI thread's CPU when threaded (default: the app's).",
)
@click.option("--budget", type=int, default=300, show_default=True, help="net.core.netdev_budget.")
@click.option(
    "--rcvbuf",
    type=int,
    default=212_992,
    show_default=True,
    help="The receiving socket's SO_RCVBUF request, bytes (net.core.rmem_max raised if lower).",
)
@click.option("--busy-read", type=int, default=0, show_default=True, help="net.core.busy_read, µs.")
@click.option(
    "--trace", is_flag=True, help="Trace each window too (napi_poll's packets per poll, ...)."
)
@click.option(
    "--max-minutes",
    type=float,
    default=5.0,
    show_default=True,
    help="Refuse a sweep estimated to take longer.",
)
@click.option(
    "--exact-rates",
    is_flag=True,
    help="Send at the rates as given; by default each is moved by less than the tick rate "
    "(HZ) so that the tick-sampled softirq time in /proc/stat does not alias with the "
    "sends' period (docs/lab.md).",
)
@out_option("The lab's directory (default: lab): lab.json and points/NAME/.", metavar="DIR",
            file_okay=False)  # fmt: skip
@user_errors
def lab(
    rates: str,
    threaded: str,
    repeats: int,
    seconds: float,
    size: int,
    sender_core: int,
    app_core: int,
    napi_core: int | None,
    budget: int,
    rcvbuf: int,
    busy_read: int,
    trace: bool,
    max_minutes: float,
    exact_rates: bool,
    out: Path | None,
) -> None:
    """Measure this kernel's receive path: a paced UDP load between two network namespaces.

    Creates irqlab-PID-tx and irqlab-PID-rx joined by a veth pair (198.18.0.1 → 198.18.0.2,
    GRO on at the receiver so that veth polls with NAPI, TSO/GSO off at the sender), runs
    sockperf's server pinned to --app-core and, at each rate, sockperf throughput pinned to
    --sender-core, threaded NAPI off and on; records each window as `irqlab measure` does,
    with the namespaces' UDP counters and the ksoftirqd and NAPI threads' CPU time, and
    writes DIR/lab.json and DIR/points/NAME/. Needs root. Everything it made is removed and
    every sysctl it set is restored when it ends, however it ends (even SIGKILL).

    \b
    Examples:
      irqlab lab --out lab1
      irqlab lab --rates 50k,150k,250k --threaded on --seconds 2 --repeats 3
    """
    from irqlab.ops.lab import Plan, check, parse_rates, parse_threaded, run_lab

    asked = parse_rates(rates)
    sent = asked if exact_rates else _off_tick(asked)
    plan = check(
        Plan(
            rates_pps=sent,
            threaded=parse_threaded(threaded),
            repeats=repeats,
            seconds=seconds,
            size_bytes=size,
            sender_core=sender_core,
            app_core=app_core,
            napi_core=napi_core,
            netdev_budget=budget,
            rcvbuf_bytes=rcvbuf,
            busy_read_us=busy_read,
            max_minutes=max_minutes,
            trace=trace,
        )
    )
    out = Path("lab") if out is None else out
    if sent != asked:
        moved = ", ".join(f"{a:g}→{b:g}" for a, b in zip(asked, sent, strict=True) if a != b)
        click.echo(f"lab: rates moved off the tick's multiples (--exact-rates: not): {moved}",
                   err=True)  # fmt: skip
    click.echo(
        f"lab: {len(plan.points())} points, about {plan.estimate_s():.0f} s; writing {out}",
        err=True,
    )
    result = run_lab(plan, out, lambda line: click.echo(line))
    console = Console()
    if not console.is_terminal:  # a file or a pipe: the whole table, not one squeezed to 80
        console = Console(width=150)
    console.print(summary_table(result))
    pacing = result["pacing"]
    clean, worst = (
        pacing.get("max_abs_sockperf_error_without_drops"),
        pacing.get("max_abs_sockperf_error"),
    )
    if worst is not None:
        click.echo(
            "sender pacing: sockperf's rate "
            + (
                ""
                if clean is None
                else f"within {100 * clean:.2f} % of the request where nothing was dropped, "
            )
            + f"{100 * worst:.1f} % off at worst (at overload the softirq on the sender's core "
            "holds it back)"
        )
    click.echo(f"wrote {out / 'lab.json'} in {result['wall_s']:.0f} s")


def _off_tick(rates: tuple[float, ...]) -> tuple[float, ...]:
    """The rates moved off the tick's multiples at this kernel's HZ (as given when HZ is
    unknown)."""
    from irqlab.ops.lab.plan import off_tick
    from irqlab.ops.measure.bundle import host_hz

    hz = host_hz()
    return rates if hz is None else tuple(float(off_tick(r, hz)) for r in rates)
