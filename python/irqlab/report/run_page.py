"""The page of one run: ``irqlab run --format json``'s report, its key metrics, figures, the
tables of its cores, queues, classes and apps, every metric, and the scenario to run it again."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from irqlab import shapes, toml_writer
from irqlab.core import Report
from irqlab.errors import ConfigError
from irqlab.formatting import page_number
from irqlab.report.charts import finite, metric_label, plotly_figure
from irqlab.report.flat import flatten_report
from irqlab.report.page import Cell, Code, Figures, Image, Page, Plot, Section, Table
from irqlab.report.parts import scenario_table, shell, value_cell
from irqlab.report.reading import lookup, read_json

RUN_KEYS = (
    "scheme",
    "seed",
    "measured_s",
    "packets",
    "offered_pps",
    "throughput_pps",
    "loss_ratio",
    "latency_us",
    "cpu",
    "irq_per_s",
    "polls_per_s",
    "packets_per_poll",
    "cycles_per_packet",
    "load_latency_product",
    "scenario",
)


_PERCENTILES = ("mean", "p50", "p90", "p99", "p999", "max")
_CPU = ("irq", "softirq", "ksoftirqd", "app", "idle")
_CPU_COLORS = dict(zip(_CPU, ("#d62728", "#1f77b4", "#9467bd", "#2ca02c", "#c7c7c7"), strict=True))


_ENTRY_COLUMNS = {
    "per_core": (
        "core",
        "vectors",
        "offered_pps",
        "throughput_pps",
        "loss_ratio",
        "latency_us.p99",
        "cpu.busy",
        "cpu.irq",
        "cpu.softirq",
        "cpu.ksoftirqd",
        "cpu.app",
        "irq_per_s",
        "polls_per_s",
    ),
    "per_queue": (
        "queue",
        "core",
        "flows",
        "offered_pps",
        "throughput_pps",
        "loss_ratio",
        "latency_us.p99",
        "irq_per_s",
        "packets_per_poll",
    ),
    "per_class": (
        "class",
        "share",
        "offered_pps",
        "throughput_pps",
        "loss_ratio",
        "latency_us.p50",
        "latency_us.p99",
        "app_latency_us.p99",
        "goodput_bps",
    ),
    "per_app": (
        "app",
        "core",
        "flows",
        "consumed",
        "consumed_pps",
        "dropped_socket",
        "goodput_bps",
        "app_latency_us.p50",
        "app_latency_us.p99",
    ),
}
#: Names in a run's key metrics where the plot label reads poorly.
_RUN_LABELS = {
    "packets.offered": "packets offered",
    "packets.delivered": "packets delivered",
    "packets.dropped_nic": "dropped at the NIC (ring full)",
    "packets.dropped_socket": "dropped at a socket",
    "packets.in_flight": "in flight at the end",
    "packets.in_flight_at_warmup": "in flight at the end of the warm-up",
    "packets.transmitted": "transmitted",
    "packets.dropped_tx": "dropped at a Tx ring",
    "packets.in_tx_ring": "in Tx rings at the end",
    "packets.consumed": "consumed by the apps",
}
_ENTRY_TITLES = {
    "per_core": "Per core",
    "per_queue": "Per queue vector",
    "per_class": "Per traffic class",
    "per_app": "Per application",
}


def page(path: Path, title: str | None) -> Page:
    """The page of the run report ``path``."""
    report = read_json(path)
    if not isinstance(report, Mapping):
        raise ConfigError(f"{path}: not a run's JSON report (irqlab run --format json)", None)
    missing = [k for k in RUN_KEYS if k not in report]
    if len(missing) > 3:
        raise ConfigError(
            f"{path}: not a run's JSON report (irqlab run --format json --out r.json): no "
            + ", ".join(repr(k) for k in missing[:3])
            + ", …",
            None,
        )
    if missing:
        raise ConfigError(
            f"{path}: not a complete run report (irqlab run --format json): no "
            + ", ".join(repr(k) for k in missing),
            None,
        )
    report = shapes.check_report(report, path)
    scenario = dict(report["scenario"])
    cores = len(report.get("per_core") or ()) or 1
    lede = [
        f"Scheme {report['scheme']}, seed {report['seed']}, replication "
        f"{report.get('replication', 0)}: {scenario.get('traffic.kind', '')} traffic at "
        f"{page_number(scenario.get('traffic.rate_pps'))} packets/s, "
        f"{page_number(report['measured_s'] * 1e3)} ms measured after "
        f"{page_number(scenario.get('run.warmup_ms'))} ms of warm-up; {cores} "
        f"core{'s' if cores > 1 else ''}, {page_number(scenario.get('nic.queues', 1))} queue "
        f"vector{'s' if scenario.get('nic.queues', 1) != 1 else ''}.",
        "One run: its numbers carry no confidence intervals. For intervals, replicate it "
        "in a sweep (irqlab sweep, docs/sweeps.md); its report shows mean ± 95% half-width.",
    ]

    groups: list[tuple[str, list[str]]] = [
        ("traffic", ["offered_pps", "throughput_pps", "loss_ratio"]),
        (
            "packets",
            [f"packets.{k}" for k in ("offered", "delivered", "dropped_nic", "dropped_socket")]
            + ["packets.in_flight", "packets.in_flight_at_warmup"],
        ),
    ]
    if scenario.get("host.forward"):
        groups.append(
            ("forwarding", [f"packets.{k}" for k in ("transmitted", "dropped_tx", "in_tx_ring")])
        )
    groups.append(("latency", [f"latency_us.{k}" for k in _PERCENTILES]))
    if report.get("per_app"):
        groups.append(
            (
                "apps",
                ["packets.consumed", "goodput_bps", "app_latency_us.p50", "app_latency_us.p99"],
            )
        )
    groups += [
        (
            "cpu" if cores == 1 else f"cpu (mean of {cores} cores)",
            [f"cpu.{k}" for k in ("busy", *_CPU)],
        ),
        ("interrupts", ["irq_per_s", "polls_per_s", "packets_per_poll"]),
        ("efficiency", ["cycles_per_packet", "load_latency_product"]),
    ]
    rows = []
    for group, keys in groups:
        first = True
        for key in keys:
            value = lookup(report, key)
            if value is None and key.startswith("packets."):
                continue
            rows.append(
                [
                    Cell(group if first else ""),
                    Cell(_RUN_LABELS.get(key) or metric_label(key)),
                    Cell(key),
                    value_cell(value, data_key=key),
                ]
            )
            first = False
    metrics = Section("metrics", "Key metrics")
    metrics.items.append(Table("key-metrics", "", ["group", "metric", "name", "value"], rows))

    figures: list[Plot | Image] = [_latency_figure(report), _cpu_figure(report)]
    figs = Section("figures", "Figures")
    figs.p(
        "Hover over a bar to read its value; click a legend entry to hide or show its series "
        "(double-click: that series alone)."
    )
    figs.items.append(Figures(figures))

    entries = Section("entries", "Cores, queues, classes and apps")
    for name, columns in _ENTRY_COLUMNS.items():
        items: list[Any] = lookup(report, name) or []
        if len(items) > 1 or (name == "per_app" and items):
            entries.items.append(_entry_table(name, items, columns))
    sections = [metrics, figs]
    if entries.items:
        sections.append(entries)

    every = Section("every-metric", "Every metric")
    flat = flatten_report({k: v for k, v in report.items() if k != "scenario"})
    every.items.append(
        Table(
            "every-metric-table",
            f"{len(flat)} figures, named as in irqlab run --format json (dotted)",
            ["name", "value"],
            [[Cell(k), value_cell(v, data_key=k)] for k, v in flat.items()],
            open=False,
        )
    )
    sections.append(every)

    scen = Section("scenario", "Scenario")
    scen.p(
        f"Every key of the scenario that ran ({len(scenario)} keys; the run's echo of what "
        "the core was given)."
    )
    scen.items.append(scenario_table(scenario, "scenario-table", "the scenario"))
    sections.append(scen)

    toml = toml_writer.scenario(scenario)
    out_name = path.name
    rerun = Section("rerun", "How to re-run")
    rerun.p(
        "Save the scenario as scenario.toml (or download it) and run it: the same scenario "
        "and seed give the same report, bit for bit."
    )
    rerun.items.append(
        Code(
            shell(["irqlab", "run", "scenario.toml", "--format", "json", "--out", out_name]),
            "the command",
            id="command",
        )
    )
    rerun.items.append(Code(toml, "scenario.toml: every key as it ran", "scenario.toml", "toml"))
    sections.append(rerun)
    return Page(
        title or f"irqlab run — scheme {report['scheme']}, seed {report['seed']}",
        "run",
        str(path),
        lede,
        sections,
    )


def _entry_table(name: str, items: list[Mapping[str, Any]], columns: Sequence[str]) -> Table:
    shown = [c for c in columns if any(lookup(e, c) is not None for e in items)]
    rows = []
    for i, entry in enumerate(items):
        rows.append([value_cell(lookup(entry, c), data_key=f"{name}.{i}.{c}") for c in shown])
    return Table(f"{name}-table", _ENTRY_TITLES[name], [metric_label(c) for c in shown], rows)


def _latency_figure(report: Report) -> Plot:
    data = []
    series: list[tuple[Literal["latency_us", "app_latency_us"], str]] = [
        ("latency_us", "to the end of protocol processing")
    ]
    if report.get("per_app") and report.get("app_latency_us"):
        series.append(("app_latency_us", "to the application"))
    for key, name in series:
        lat = report[key]
        ys = [lat.get(k) for k in _PERCENTILES]
        data.append(
            {
                "type": "bar",
                "name": name,
                "x": list(_PERCENTILES),
                "y": finite(ys),
                "customdata": [page_number(y) for y in ys],  # as the tables show them
                "hovertemplate": "%{x}: %{customdata} µs<extra>" + name + "</extra>",
            }
        )
    layout = {
        "title": {"text": "Latency: mean and percentiles"},
        "yaxis": {"title": {"text": "latency (µs)"}},
        "barmode": "group",
        "showlegend": True,
        "legend": {"orientation": "h", "y": -0.15},
    }
    return plotly_figure("latency", "Latency of the packets, from NIC arrival (µs)", data, layout)


def _cpu_figure(report: Report) -> Plot:
    per_core = report.get("per_core") or []
    if len(per_core) > 1:
        names = [f"core {c.get('core', i)}" for i, c in enumerate(per_core)]
        shares = [c.get("cpu") or {} for c in per_core]  # a field edited away: no bar
    else:
        names, shares = ["host"], [report["cpu"]]
    data = []
    for k in _CPU:
        data.append(
            {
                "type": "bar",
                "orientation": "h",
                "name": k,
                "y": names,
                "x": finite([s.get(k) for s in shares]),
                "customdata": [page_number(s.get(k)) for s in shares],
                "marker": {"color": _CPU_COLORS[k]},
                "hovertemplate": "%{y}: cpu." + k + " = %{customdata}<extra></extra>",
            }
        )
    layout = {
        "title": {"text": "Where the CPU time goes"},
        "barmode": "stack",
        "xaxis": {"title": {"text": "share of the measured time"}, "tickformat": ".0%"},
        "yaxis": {"autorange": "reversed"},
        "legend": {"orientation": "h", "traceorder": "normal", "y": -0.3},
        "height": max(260, 120 + 40 * len(names)),
    }
    return plotly_figure("cpu", "CPU time by category", data, layout)
