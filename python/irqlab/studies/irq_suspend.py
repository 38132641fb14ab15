"""Karsten & Damato, "Suspend IRQs during application busy periods" (Linux 6.13, 2024), and
``Documentation/networking/napi.rst``: an epoll application that keeps finding events can keep
its NAPI's IRQs suspended and poll the device itself, and fall back to deferral when idle.

What is re-run, on the ``busypoll2013`` platform preset (one core; the NAPI and a server
thread waiting in ``epoll_wait`` share it, as in the patch's experiments), with open-loop
Poisson requests from 64 connections at a low, a medium and a saturating load:

- ``base``: interrupts, no deferral;
- ``defer``: software IRQ coalescing (``napi_defer_hard_irqs = 100``, ``gro_flush_timeout =
  20 µs``, the patch's "defer20");
- ``busy``: NAPI busy polling from ``epoll_wait`` (``busy_poll_usecs = 64``), without
  preferred busy polling;
- ``fullbusy``: preferred busy polling with a long busy-poll time and a 5 ms
  ``gro_flush_timeout``: the application always polls;
- ``suspend``: IRQ suspension (``prefer_busy_poll``, ``irq-suspend-timeout = 20 ms``, defer20).

The conclusions ``napi.rst`` states are checked on the result (``conclusions``): IRQs stay off
while epoll keeps finding events; an idle application falls back to deferral, not to a busy
core; without deferral (plain busy polling) loop 3 cannot take control from loop 1.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
from matplotlib.figure import Figure

from irqlab.studies.common import SweepPlan, Sweeps, finish, markdown_table, preset

NAME = "irq-suspend"
TITLE = "IRQ suspension (Linux 6.13): deferral, busy polling and suspension under load"

SEED = 2024
BASE = {
    # the busypoll2013 platform as that study's calibration fitted it
    **preset("irqlab.studies.busypoll2013"),
    "scheme": "napi",
    "nic.itr_us": 0,
    "traffic.kind": "rr",
    "rr.clients": 64,
    "rr.remote_us": 10,
    "app": [{"core": 0, "cost_ns": 2000, "cost_dist": "exponential", "io": "epoll"}],
    "epoll.batch_ns": 1000,
    "epoll.maxevents": 64,
}
DEFER = {"kernel.napi_defer_hard_irqs": 100, "kernel.gro_flush_timeout_ns": 20_000}
MECHANISMS = {
    "base": {},
    "defer": DEFER,
    "busy": {"epoll.busy_poll_us": 64},
    "fullbusy": {
        **DEFER,
        "kernel.gro_flush_timeout_ns": 5_000_000,
        "epoll.busy_poll_us": 1000,
        "epoll.prefer_busy_poll": True,
    },
    "suspend": {
        **DEFER,
        "epoll.prefer_busy_poll": True,
        "kernel.irq_suspend_timeout_ns": 20_000_000,
    },
}
LABELS = {
    "base": "interrupts",
    "defer": "deferral (defer20)",
    "busy": "NAPI busy polling",
    "fullbusy": "full busy polling",
    "suspend": "IRQ suspension",
}
COLORS = {
    "base": "black",
    "defer": "tab:orange",
    "busy": "tab:green",
    "fullbusy": "tab:red",
    "suspend": "tab:blue",
}
#: low, medium, saturating (the host's capacity is about 235k requests/s)
LOADS = {"low": 20_000.0, "medium": 100_000.0, "saturating": 230_000.0}


FULL = SweepPlan(duration_ms=200.0, warmup_ms=10.0, replications=3)
QUICK = SweepPlan(duration_ms=20.0, warmup_ms=2.0, replications=2)


def run(sweeps: Sweeps, plan: SweepPlan) -> dict[str, pd.DataFrame]:
    """Every sweep point (``runs``), the headline table and napi.rst's conclusions."""
    parts = []
    for name, settings in MECHANISMS.items():
        df = sweeps.planned(name, {**BASE, **settings}, {"rr.rate_rps": list(LOADS.values())}, plan)
        df.insert(0, "mechanism", name)
        parts.append(df)
    runs = pd.concat(parts, ignore_index=True)
    table = headline_table(runs)
    return {"runs": runs, "headline": table, "conclusions": conclusions(table)}


def figures(tables: Mapping[str, pd.DataFrame]) -> dict[str, Figure]:
    return {"latency_cpu.png": plot(tables["headline"])}


def documents(tables: Mapping[str, pd.DataFrame]) -> dict[str, str]:
    return {}


def headline_table(runs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for load, rate in LOADS.items():
        for name in MECHANISMS:
            r = runs[(runs["mechanism"] == name) & (runs["rr.rate_rps"] == rate)].iloc[0]
            rows.append(
                {
                    "load": load,
                    "offered_rps": rate,
                    "mechanism": name,
                    "rtt_p50_us": r["rtt_us.p50"],
                    "rtt_p99_us": r["rtt_us.p99"],
                    "cpu": r["cpu.busy"],
                    "transactions_per_s": r["transactions_per_s"],
                    "irq_per_s": r["irq_per_s"],
                }
            )
    return pd.DataFrame(rows)


def _at(table: pd.DataFrame, load: str, name: str) -> pd.Series:
    return table[(table["load"] == load) & (table["mechanism"] == name)].iloc[0]


def conclusions(table: pd.DataFrame) -> pd.DataFrame:
    """napi.rst's statements, each with whether the run bears it out."""
    s = lambda name, load="saturating": _at(table, load, name)  # noqa: E731
    rows = [
        (
            "while epoll_wait keeps finding events, IRQs stay suspended",
            s("suspend")["irq_per_s"] < 0.01 * s("base")["irq_per_s"],
        ),
        (
            "suspension keeps the system busy polling under load: lower latency than deferral",
            s("suspend")["rtt_p99_us"] < s("defer")["rtt_p99_us"],
        ),
        (
            "when epoll finds nothing, deferral takes over: at low load suspension costs "
            "about the CPU of deferral, far below full busy polling",
            s("suspend", "low")["cpu"] < 0.5 * s("fullbusy", "low")["cpu"],
        ),
        (
            "full busy polling keeps the core busy at every load",
            all(s("fullbusy", load)["cpu"] > 0.999 for load in LOADS),
        ),
        (
            "without deferral, busy polling cannot take control from IRQ delivery (loop 1)",
            abs(s("busy", "medium")["irq_per_s"] / s("base", "medium")["irq_per_s"] - 1) < 0.1,
        ),
        (
            "interrupts alone saturate first; suspension carries the saturating load",
            s("base")["transactions_per_s"] < 0.6 * LOADS["saturating"]
            and s("suspend")["transactions_per_s"] > 0.95 * LOADS["saturating"],
        ),
    ]
    return pd.DataFrame(rows, columns=["statement", "holds"])


def headline_markdown(table: pd.DataFrame) -> str:
    columns = ["load", "mechanism", "RTT p50 (µs)", "RTT p99 (µs)", "CPU", "transactions/s"]
    rows = [
        f"{r.load} | {LABELS[r.mechanism]} | {r.rtt_p50_us:.1f} | {r.rtt_p99_us:.1f} "
        f"| {r.cpu:.0%} | {r.transactions_per_s:,.0f} | {r.irq_per_s:,.0f}"
        for r in table.itertuples(index=False)
    ]
    return markdown_table([*columns, "IRQs/s"], rows)


def conclusions_markdown(c: pd.DataFrame) -> str:
    rows = [[r.statement, "yes" if r.holds else "NO"] for r in c.itertuples(index=False)]
    return markdown_table(["napi.rst / the patch", "holds"], rows)


#: The headline tables: printed by `irqlab reproduce`, first in its report.
TABLES = {"headline": headline_markdown, "conclusions": conclusions_markdown}


def plot(table: pd.DataFrame) -> Figure:
    """Latency (p99) against CPU for each mechanism, one point per load."""
    fig = Figure(figsize=(7.5, 4.5), layout="constrained")
    ax = fig.subplots()
    for name in MECHANISMS:
        d = table[table["mechanism"] == name]
        ax.plot(
            d["cpu"] * 100,
            d["rtt_p99_us"],
            marker="o",
            color=COLORS[name],
            label=LABELS[name],
        )
        for r in d.itertuples(index=False):
            ax.annotate(r.load[0], (r.cpu * 100, r.rtt_p99_us), fontsize=7, xytext=(3, 3),
                        textcoords="offset points")  # fmt: skip
    ax.set_yscale("log")
    finish(ax, "CPU load of the core (%)", "round-trip time p99 (µs)")
    fig.suptitle("Latency against CPU per mechanism (l/m/s: low, medium, saturating load)",
                 fontsize=10)  # fmt: skip
    return fig


def readme(tables: Mapping[str, pd.DataFrame]) -> str:
    return (
        "- `latency_cpu.png`: p99 round-trip time against CPU per mechanism.\n"
        "- `headline.csv`, `conclusions.csv`, `runs.csv`: the tables below, every point.\n"
        "- one folder per mechanism: the sweeps (rerunning resumes them).\n\n"
        + headline_markdown(tables["headline"])
        + "\n"
        + conclusions_markdown(tables["conclusions"])
    )
