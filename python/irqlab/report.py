"""Presenting a run's report to a person: a table, and flattening for data frames."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table


def flatten_report(report: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"latency_us": {"p99": 1.0}}`` → ``{"latency_us.p99": 1.0}``."""
    out: dict[str, Any] = {}
    for k, v in report.items():
        if isinstance(v, Mapping):
            out.update(flatten_report(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _num(x: Any, digits: int = 3) -> str:
    if x is None:
        return "—"
    if isinstance(x, int):
        return f"{x:,}"
    if x == 0:
        return "0"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def render_table(report: Mapping[str, Any], scenario: Mapping[str, Any] | None = None) -> Table:
    """One table with the run's figures, grouped as an engineer reads them."""
    r = report
    title = f"irqlab run — scheme {r['scheme']}, seed {r['seed']}"
    if scenario:
        title += (
            f"\n{scenario.get('traffic.kind', '')} {_num(scenario.get('traffic.rate_pps'))} pps,"
            f" ring {scenario.get('nic.ring_descriptors', '')},"
            f" {r['measured_s'] * 1e3:g} ms measured"
        )
    t = Table(title=title, show_header=True, header_style="bold")
    t.add_column("group")
    t.add_column("metric")
    t.add_column("value", justify="right")
    p = r["packets"]
    rows: list[tuple[str, str, str]] = [
        ("traffic", "offered", f"{_num(r['offered_pps'])} pps"),
        ("", "throughput", f"{_num(r['throughput_pps'])} pps"),
        ("", "loss", _pct(r["loss_ratio"])),
        ("packets", "offered / delivered", f"{p['offered']:,} / {p['delivered']:,}"),
        ("", "dropped (nic / socket)", f"{p['dropped_nic']:,} / {p['dropped_socket']:,}"),
        ("", "in flight (end / warm-up)", f"{p['in_flight']:,} / {p['in_flight_at_warmup']:,}"),
    ]
    lat = r["latency_us"]
    first = True
    for name in ("mean", "p50", "p90", "p99", "p999", "max"):
        rows.append(("latency" if first else "", name, f"{_num(lat[name])} µs"))
        first = False
    cpu = r["cpu"]
    first = True
    for name in ("busy", "irq", "softirq", "ksoftirqd", "app", "idle"):
        rows.append(("cpu" if first else "", name, _pct(cpu[name])))
        first = False
    rows += [
        ("interrupts", "IRQs", f"{_num(r['irq_per_s'])} /s"),
        ("", "polls", f"{_num(r['polls_per_s'])} /s"),
        ("", "packets per poll", _num(r["packets_per_poll"])),
        ("efficiency", "cycles per packet", _num(r["cycles_per_packet"])),
        ("", "load-latency product", f"{_num(r['load_latency_product'])} cycles·µs"),
    ]
    for g, m, v in rows:
        t.add_row(g, m, v)
    return t


def print_table(
    report: Mapping[str, Any],
    scenario: Mapping[str, Any] | None = None,
    console: Console | None = None,
) -> None:
    (console or Console()).print(render_table(report, scenario))
