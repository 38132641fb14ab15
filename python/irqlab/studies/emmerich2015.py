"""Emmerich, Raumer, Beifuß, Erlacher, Wohlfart, Runge, Gallenmüller & Carle (2015),
"Optimizing Latency and CPU Load in Packet Processing Systems" (SPECTS 2015): ixgbe's dynamic
ITR trades latency for CPU badly; a linear packet-rate ITR measured with real elapsed time does
better.

What is re-run, on the ``emmerich2015`` platform preset (one core that forwards 2.1 Mpps of
64-byte frames when polling, one IRQ per packet up to 0.5 Mpps, 2300 µs of buffering; see
docs/moderation.md for the calibration), with 64-byte CBR traffic from 0.02 to 2.5 Mpps:

- **Figs. 3, 5, 8** — mean latency, CPU load and IRQ rate against the offered load for ITR off,
  ``ixgbe-legacy`` (ixgbe 3.x's 3-state byte-rate ITR) and ``linear`` (the paper's).
- **Fig. 7** — the load-latency product P_ll = c_pkt · t of both algorithms and their
  difference.
- **Beyond the paper** — the same curves for today's ``ixgbe``, ``i40e``, Linux ``dim`` and the
  kernel's software coalescing (``napi_defer_hard_irqs`` = 10, ``gro_flush_timeout`` = 20 µs,
  ITR off), and a table of every policy at three loads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from irqlab.studies.common import Sweeps, errorbar, finish, markdown_table, mpps

NAME = "emmerich2015"
TITLE = "Emmerich et al. (2015): interrupt throttling, latency and CPU load"

BASE = {
    "platform.preset": "emmerich2015",
    "scheme": "napi",
    "traffic.kind": "cbr",
    "traffic.size_bytes": 64,
}
#: The software coalescing variant: the commit message's example values, ITR off.
SOFT = {
    "driver.moderation": "off",
    "kernel.napi_defer_hard_irqs": 10,
    "kernel.gro_flush_timeout_ns": 20_000,
}
PAPER_POLICIES = ("off", "ixgbe-legacy", "linear")
POLICIES = (*PAPER_POLICIES, "ixgbe", "i40e", "dim", "soft")
LABELS = {
    "off": "ITR off",
    "ixgbe-legacy": "ixgbe 3.x dynamic ITR",
    "linear": "linear (Emmerich et al.)",
    "ixgbe": "ixgbe (upstream ≥ 4.15)",
    "i40e": "i40e adaptive ITR",
    "dim": "Linux DIM",
    "soft": "napi_defer_hard_irqs",
}
COLORS = {
    "off": "black",
    "ixgbe-legacy": "tab:red",
    "linear": "tab:blue",
    "ixgbe": "tab:orange",
    "i40e": "tab:green",
    "dim": "tab:purple",
    "soft": "tab:brown",
}
SEED = 2015
OVERLOAD_PPS = 2.1e6


@dataclass(frozen=True)
class Plan:
    rates: tuple[float, ...]
    table_rates: tuple[float, ...]
    duration_ms: float
    warmup_ms: float
    replications: int


FULL = Plan(
    rates=mpps(0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8)
    + mpps(1.9, 2.0, 2.05, 2.1, 2.2, 2.5),
    table_rates=(1e5, 1e6, 1.9e6),
    duration_ms=200.0,
    warmup_ms=60.0,
    replications=3,
)
QUICK = Plan(
    rates=mpps(0.02, 0.1, 0.3, 0.5, 1.0, 1.5, 1.9, 2.05, 2.3, 2.5),
    table_rates=(1e5, 1e6, 1.9e6),
    duration_ms=40.0,
    warmup_ms=40.0,
    replications=2,
)


def run(sweeps: Sweeps, plan: Plan) -> dict[str, pd.DataFrame]:
    """Every policy's curves against the load, the load-latency products (Fig. 7) and every
    policy at three loads."""
    hardware = sweeps.planned(
        "policies",
        BASE,
        {"driver.moderation": POLICIES[:-1], "traffic.rate_pps": plan.rates},
        plan,
    )
    soft = sweeps.planned("soft", {**BASE, **SOFT}, {"traffic.rate_pps": plan.rates}, plan)
    soft["driver.moderation"] = "soft"
    curves = pd.concat([hardware, soft], ignore_index=True)
    curves.insert(0, "policy", curves.pop("driver.moderation"))
    return {"curves": curves, "pll": pll_table(curves), "policies": policy_table(curves, plan)}


def figures(tables: Mapping[str, pd.DataFrame]) -> dict[str, Figure]:
    curves = tables["curves"]
    return {
        "fig3_5_8.png": plot_curves(curves, PAPER_POLICIES, "Figs. 3, 5 and 8 reproduced"),
        "fig7.png": plot_pll(tables["pll"]),
        "policies.png": plot_curves(curves, POLICIES, "Every policy on the same host"),
    }


def documents(tables: Mapping[str, pd.DataFrame]) -> dict[str, str]:
    return {"policies.md": policy_markdown(tables["policies"])}


# ----- tables ----------------------------------------------------------------------------------


def at(curves: pd.DataFrame, policy: str, rate: float) -> pd.Series:
    row = curves[(curves["policy"] == policy) & np.isclose(curves["traffic.rate_pps"], rate)]
    if len(row) != 1:
        raise KeyError(f"no single row for {policy} at {rate}")
    return row.iloc[0]


def pll_table(curves: pd.DataFrame) -> pd.DataFrame:
    """Fig. 7: P_ll of ixgbe-legacy and linear against the offered load, and the difference."""
    legacy = curves[curves["policy"] == "ixgbe-legacy"].set_index("traffic.rate_pps")
    linear = curves[curves["policy"] == "linear"].set_index("traffic.rate_pps")
    col = "load_latency_product"
    df = pd.DataFrame(
        {
            "ixgbe-legacy": legacy[col],
            "ixgbe-legacy.ci95": legacy[f"{col}.ci95"],
            "linear": linear[col],
            "linear.ci95": linear[f"{col}.ci95"],
        }
    )
    df["difference"] = df["ixgbe-legacy"] - df["linear"]
    return df.reset_index().sort_values("traffic.rate_pps")


def policy_table(curves: pd.DataFrame, plan: Plan) -> pd.DataFrame:
    """Every policy at three loads: latency p50/p99, CPU load, IRQ rate, P_ll."""
    rows = []
    for rate in plan.table_rates:
        for policy in POLICIES:
            r = at(curves, policy, rate)
            rows.append(
                {
                    "load_mpps": rate / 1e6,
                    "policy": policy,
                    "latency_p50_us": r["latency_us.p50"],
                    "latency_p99_us": r["latency_us.p99"],
                    "latency_mean_us": r["latency_us.mean"],
                    "cpu_load": r["cpu.busy"],
                    "irq_per_s": r["irq_per_s"],
                    "p_ll": r["load_latency_product"],
                }
            )
    return pd.DataFrame(rows)


def policy_markdown(table: pd.DataFrame) -> str:
    columns = ["load (Mpps)", "policy", "latency p50 (µs)", "p99 (µs)", "CPU load", "IRQs/s"]
    rows = [
        f"{r.load_mpps:g} | {LABELS[r.policy]} | {r.latency_p50_us:.1f} | "
        f"{r.latency_p99_us:.1f} | {r.cpu_load:.0%} | {r.irq_per_s:,.0f} | {r.p_ll:,.0f}"
        for r in table.itertuples(index=False)
    ]
    return markdown_table([*columns, "P_ll (cycles·µs)"], rows)


#: The headline table: printed by `irqlab reproduce`, first in its report.
TABLES = {"policies": policy_markdown}


def readme(tables: Mapping[str, pd.DataFrame]) -> str:
    return (
        "- `fig3_5_8.png`: latency, CPU load, IRQ rate for ITR off, ixgbe-legacy and linear.\n"
        "- `fig7.png`, `pll.csv`: load-latency products and their difference.\n"
        "- `policies.png`, `curves.csv`: every policy, every load.\n"
        "- `policies.md`, `policies.csv`: every policy at three loads.\n"
        "- `policies/`, `soft/`: the sweeps (rerunning the command resumes them).\n\n"
        + policy_markdown(tables["policies"])
    )


# ----- figures ---------------------------------------------------------------------------------


def plot_curves(curves: pd.DataFrame, policies: Sequence[str], title: str) -> Figure:
    """Latency (below overload), CPU load and IRQ rate against the offered load."""
    fig = Figure(figsize=(14, 4.2), layout="constrained")
    axes = fig.subplots(1, 3)
    panels = [
        ("latency_us.mean", 1.0, "mean latency (µs), below overload"),
        ("cpu.busy", 100.0, "CPU load (%)"),
        ("irq_per_s", 1e-3, "IRQ rate (k/s)"),
    ]
    for ax, (col, scale, ylabel) in zip(axes, panels, strict=True):
        for policy in policies:
            d = curves[curves["policy"] == policy]
            if col.startswith("latency"):
                d = d[d["traffic.rate_pps"] <= OVERLOAD_PPS * 0.99]
            errorbar(
                ax,
                d,
                "traffic.rate_pps",
                col,
                scale=scale,
                x_scale=1e-6,
                color=COLORS[policy],
                marker="o",
                ms=3.5,
                lw=1.2,
                capsize=2,
                label=LABELS[policy],
            )
        ax.set_xlabel("offered load (Mpps, 64 B CBR)")
        ax.set_title(ylabel, fontsize=10)
        ax.grid(alpha=0.3)
    axes[0].set_yscale("log")
    axes[0].yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
    axes[0].legend(fontsize=8)
    fig.suptitle(f"{title} (95% CI; latency under overload ≈ 2300 µs, not shown)", fontsize=10)
    return fig


def plot_pll(pll: pd.DataFrame) -> Figure:
    """Fig. 7: the load-latency products of ixgbe-legacy and linear, and their difference."""
    fig = Figure(figsize=(7.5, 4.5), layout="constrained")
    ax = fig.subplots()
    d = pll[pll["traffic.rate_pps"] <= OVERLOAD_PPS * 0.99]
    x = d["traffic.rate_pps"] / 1e6
    for name in ("ixgbe-legacy", "linear"):
        ax.errorbar(
            x,
            d[name] / 1e6,
            yerr=d[f"{name}.ci95"].fillna(0) / 1e6,
            marker="o",
            ms=3.5,
            capsize=2,
            color=COLORS[name],
            label=LABELS[name],
        )
    ax.plot(x, d["difference"] / 1e6, ls="--", color="gray", label="difference")
    finish(ax, "offered load (Mpps, 64 B CBR)", "load-latency product P_ll (10⁶ cycles·µs)")
    fig.suptitle("Fig. 7 reproduced: P_ll = c_pkt · t (95% CI)", fontsize=10)
    return fig
