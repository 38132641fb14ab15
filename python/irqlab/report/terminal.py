"""The tables ``irqlab run`` prints: the host-wide table, then a table per core and per class
when the host has several (:func:`render`), each laid out to the terminal's width
(:mod:`irqlab.report.layout`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from irqlab.formatting import count, kilo, mbps, percent, percent_bare, short
from irqlab.report.layout import fit

if TYPE_CHECKING:
    from irqlab.core import CpuCategory, CpuShare, Report


def _setting(report: Report, scenario: Mapping[str, Any] | None, key: str, default: Any) -> Any:
    """A scenario value: the report's echo of what ran, else ``scenario``, else ``default``."""
    for source in (report.get("scenario"), scenario):
        if source and key in source:
            return source[key]
    return default


def _grouped(group: str, rows: Sequence[tuple[str, str]]) -> list[tuple[str, str, str]]:
    return [(group if i == 0 else "", m, v) for i, (m, v) in enumerate(rows)]


def render_table(report: Report, scenario: Mapping[str, Any] | None = None) -> Table:
    """The host-wide table, grouped as an engineer reads it.

    A one-core host without apps or forwarding gets exactly the groups it always had; a
    ``forwarding`` group appears with ``host.forward``, an ``apps`` group when apps read
    sockets. With several cores, the CPU shares are the mean over the cores.
    """
    r = report
    cores = len(r.get("per_core") or ()) or _setting(r, scenario, "host.cores", 1)
    queues = len(r.get("per_queue") or ()) or _setting(r, scenario, "nic.queues", 1)
    title = f"irqlab run — scheme {r['scheme']}, seed {r['seed']}"
    if scenario:
        title += (
            f"\n{scenario.get('traffic.kind', '')} {short(scenario.get('traffic.rate_pps'))} pps,"
            f" ring {scenario.get('nic.ring_descriptors', '')},"
            f" {r['measured_s'] * 1e3:g} ms measured"
        )
        if cores > 1 or queues > 1:
            title += f", {count(cores, 'core')}, {count(queues, 'queue')}"
    t = Table(title=title, show_header=True, header_style="bold")
    t.add_column("group")
    t.add_column("metric")
    t.add_column("value", justify="right")
    p = r["packets"]
    rows: list[tuple[str, str, str]] = [
        ("traffic", "offered", f"{short(r['offered_pps'])} pps"),
        ("", "throughput", f"{short(r['throughput_pps'])} pps"),
        ("", "loss", percent(r["loss_ratio"])),
        ("packets", "offered / delivered", f"{p['offered']:,} / {p['delivered']:,}"),
        ("", "dropped (nic / socket)", f"{p['dropped_nic']:,} / {p['dropped_socket']:,}"),
        ("", "in flight (end / warm-up)", f"{p['in_flight']:,} / {p['in_flight_at_warmup']:,}"),
    ]
    if _setting(r, scenario, "host.forward", False):
        rows += _grouped(
            "forwarding",
            [
                ("transmitted", f"{p.get('transmitted', 0):,}"),
                ("dropped at Tx ring", f"{p.get('dropped_tx', 0):,}"),
                ("in Tx rings", f"{p.get('in_tx_ring', 0):,}"),
            ],
        )
    lat = r["latency_us"]
    rows += _grouped(
        "latency",
        [(n, f"{short(lat[n])} µs") for n in ("mean", "p50", "p90", "p99", "p999", "max")],
    )
    if r.get("per_app"):
        app_lat = r.get("app_latency_us") or {}
        rows += _grouped(
            "apps",
            [
                ("consumed", f"{p.get('consumed', 0):,}"),
                ("goodput", mbps(r.get("goodput_bps"))),
                ("app latency p50", f"{short(app_lat.get('p50'))} µs"),
                ("app latency p99", f"{short(app_lat.get('p99'))} µs"),
                ("socket drops", f"{p['dropped_socket']:,}"),
            ],
        )
    cpu = r["cpu"]
    rows += _grouped(
        "cpu" if cores <= 1 else f"cpu (mean of {cores})",
        [(n, percent(cpu[n])) for n in ("busy", "irq", "softirq", "ksoftirqd", "app", "idle")]
        # a NAPI thread's polls and a sending thread, only when the scenario has them
        + [(n, percent(v)) for n, v in _thread_shares(cpu)],
    )
    rows += [
        ("interrupts", "IRQs", f"{short(r['irq_per_s'])} /s"),
        ("", "polls", f"{short(r['polls_per_s'])} /s"),
        ("", "packets per poll", short(r["packets_per_poll"])),
        ("efficiency", "cycles per packet", short(r["cycles_per_packet"])),
        ("", "load-latency product", f"{short(r['load_latency_product'])} cycles·µs"),
    ]
    for g, m, v in rows:
        t.add_row(g, m, v)
    return t


def _thread_shares(cpu: CpuShare) -> list[tuple[str, float]]:
    """The CPU shares of a NAPI thread's polls and of a sending thread, those the run has."""
    out = []
    if "napi_thread" in cpu:
        out.append(("napi_thread", cpu["napi_thread"]))
    if "sender" in cpu:
        out.append(("sender", cpu["sender"]))
    return out


def _vectors(values: Sequence[int]) -> str:
    return ", ".join(str(v) for v in values) if values else "—"


def render_per_core(report: Report) -> Table | None:
    """One row per core (vectors, throughput, latency, CPU shares, IRQs), or None with one.
    Compact enough for an 80-column terminal: rates in thousands, shares in percent; the
    ksoftirqd and app columns only when some core spends time there."""
    per_core = report.get("per_core") or []
    if len(per_core) <= 1:
        return None
    shares: list[CpuCategory] = ["busy", "irq", "softirq"]
    optional: tuple[CpuCategory, ...] = ("ksoftirqd", "app", "napi_thread", "sender")
    shares += [n for n in optional if any(c["cpu"].get(n, 0.0) > 0 for c in per_core)]
    t = Table(title="per core", show_header=True, header_style="bold")
    # the NAPI thread's column as "napi", so that the table stays within 80 columns
    headers = [
        "core",
        "vectors",
        "kpps",
        "p99 µs",
        *(f"{'napi' if n == 'napi_thread' else n} %" for n in shares),
        "IRQ k/s",
    ]
    for i, h in enumerate(headers):
        t.add_column(h, justify="left" if i < 2 else "right")
    for c in per_core:
        t.add_row(
            str(c["core"]),
            _vectors(c["vectors"]),
            kilo(c["throughput_pps"]),
            short(c["latency_us"]["p99"]),
            *(percent_bare(c["cpu"].get(n, 0.0)) for n in shares),
            kilo(c["irq_per_s"]),
        )
    return t


#: Where a class's packets were dropped, and the field that counts them.
_DROPPED: dict[str, Literal["dropped_nic", "dropped_socket", "dropped_tx"]] = {
    "nic": "dropped_nic",
    "socket": "dropped_socket",
    "tx": "dropped_tx",
}


def render_per_class(report: Report) -> Table | None:
    """One row per traffic class (offered and delivered rates, loss, latency mean and
    percentiles, drops by place where there are some), or None with one class."""
    per_class = report.get("per_class") or []
    if len(per_class) <= 1:
        return None
    apps = bool(report.get("per_app"))
    t = Table(title="per traffic class (rates in kpps)", show_header=True, header_style="bold")
    headers = ["class", "share", "offered", "kpps", "loss %", "mean µs", "p50 µs", "p99 µs"]
    # packets dropped, by place, when some class lost some
    places = [p for p, key in _DROPPED.items() if any(c[key] for c in per_class)]
    if places:
        headers.append("drops")
    if apps:
        headers += ["app p99 µs", "goodput"]
    for i, h in enumerate(headers):
        t.add_column(h, justify="left" if i == 0 else "right")
    for c in per_class:
        cells = [
            str(c["class"]),
            short(c["share"]),
            kilo(c["offered_pps"]),
            kilo(c["throughput_pps"]),
            percent_bare(c["loss_ratio"]),
            short(c["latency_us"]["mean"]),
            short(c["latency_us"]["p50"]),
            short(c["latency_us"]["p99"]),
        ]
        if places:
            drops = [f"{p} {short(c[_DROPPED[p]])}" for p in places if c[_DROPPED[p]]]
            cells.append(", ".join(drops) or "0")
        if apps:
            cells += [short(c["app_latency_us"]["p99"]), mbps(c.get("goodput_bps"))]
        t.add_row(*cells)
    return t


def render(report: Report, scenario: Mapping[str, Any] | None = None) -> Group:
    """Everything ``irqlab run`` prints: the host-wide table, then the per-core table (several
    cores) and the per-class table (several classes)."""
    parts = [render_table(report, scenario), render_per_core(report), render_per_class(report)]
    # what the result depends on beyond the sources (plain text: no markup)
    notes = [Text(f"note: {n}") for n in report.get("notes", ())]
    return Group(*(fit(p) for p in parts if p is not None), *notes)


def print_table(
    report: Report,
    scenario: Mapping[str, Any] | None = None,
    console: Console | None = None,
) -> None:
    """Prints :func:`render` of the report."""
    (console or Console()).print(render(report, scenario))
