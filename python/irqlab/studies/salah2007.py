"""Salah, El-Badawi & Haidari (2007), "Performance analysis and comparison of interrupt-handling
schemes in gigabit networks", Computer Communications 30: the seven schemes and the hybrid,
analysis and simulation, under Poisson and bursty traffic.

What is re-run, on the ``salah2007`` platform preset (1/r = 3.73 µs, 1/μ = 5.25 µs + size /
748 MB/s, 0.5 µs to disable interrupts, T_PollOH = 1.59 µs, B = 1024):

- **Fig. 6** — throughput, CPU availability and mean latency (low and high load) against the
  Poisson rate of 64-byte frames, for every scheme: simulation points (95% intervals) and, for
  the schemes with a model, the analysis lines (``irqlab.analytic``). As in the paper's §4, the
  simulation uses the analysis' assumptions: exponential costs, 1/μ = 5.34 µs.
- **Fig. 9** — the same under bursty traffic: 8 aggregated Pareto ON/OFF sources (α_ON = 1.3,
  α_OFF = 1.5) at 1 Gbit/s with the ``salah2007`` frame-size table (mean 557 bytes), against
  the load ρ (fraction of the line rate), 10 replications per point.
- **Fig. 10** — the effect of τ and T (coalescing), Q and T_poll (polling).
- **Headline table** — the cliff point (127 kpps Poisson, 116 kpps bursty), the maximum
  throughput (187 kpps; ≈ 167 kpps bursty), polling's CPU availability under overload: paper,
  analysis, simulation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter

import irqlab
from irqlab.analytic import cliff_point, curve, model_rates
from irqlab.scenario import mean_frame_bytes
from irqlab.studies.common import SweepPlan, Sweeps, errorbar, markdown_table

NAME = "salah2007"
TITLE = "Salah, El-Badawi & Haidari (2007): interrupt-handling schemes compared"

#: The schemes of Fig. 6 and 9, in the paper's order, with the hybrid last.
SCHEMES = (
    "ideal",
    "irq",
    "disable-enable",
    "poll",
    "napi-poll",
    "coalesce-count",
    "coalesce-time",
    "hybrid",
)
#: Schemes drawn with analysis lines (the others have no model in the paper).
ANALYSED = ("ideal", "irq", "disable-enable", "poll", "hybrid")
LABELS = {
    "ideal": "ideal",
    "irq": "normal interruption",
    "disable-enable": "disable-enable",
    "poll": "pure polling",
    "napi-poll": "NAPI polling",
    "coalesce-count": "count coalescing τ=8",
    "coalesce-time": "time coalescing T=50µs",
    "hybrid": "hybrid",
}
MARKERS = {
    "ideal": "o",
    "irq": "o",
    "disable-enable": "s",
    "poll": "^",
    "napi-poll": "v",
    "coalesce-count": "D",
    "coalesce-time": "P",
    "hybrid": "x",
}
COLORS = {
    "ideal": "black",
    "irq": "tab:red",
    "disable-enable": "tab:blue",
    "poll": "tab:green",
    "napi-poll": "tab:olive",
    "coalesce-count": "tab:purple",
    "coalesce-time": "tab:pink",
    "hybrid": "tab:orange",
}

#: The platform of §4 as the analysis sees it: exponential 1/μ = 5.34 µs for 64-byte frames.
POISSON_BASE = {
    "platform.preset": "salah2007",
    "platform.proto_ns": 5340.0,
    "platform.proto_ns_per_byte": 0.0,
    "traffic.kind": "poisson",
    "traffic.size_bytes": 64,
}
#: §5.1: bursty traffic, the empirical sizes, 5.25 µs + size / 748 MB/s.
BURSTY_BASE = {
    "platform.preset": "salah2007",
    "traffic.kind": "pareto-onoff",
    "traffic.sizes": "salah2007",
    "traffic.sources": 8,
    "traffic.alpha_on": 1.3,
    "traffic.alpha_off": 1.5,
}
#: The paper's headline numbers.
PAPER = {
    "cliff_poisson_kpps": 127.0,
    "max_poisson_kpps": 187.0,
    "cliff_bursty_kpps": 116.0,
    "max_bursty_kpps": 167.0,
}
SEED = 2007


@dataclass(frozen=True)
class Plan:
    """How much to run: the full reproduction or the quick one."""

    poisson_rates: tuple[float, ...]
    bursty_loads: tuple[float, ...]
    param_rates: tuple[float, ...]
    duration_ms: float
    bursty_duration_ms: float
    warmup: str | float
    replications: int
    bursty_replications: int
    max_replications: int
    taus: tuple[int, ...]
    coalesce_times_us: tuple[float, ...]
    quotas: tuple[int, ...]
    periods_us: tuple[float, ...]


def _kpps(*k: float) -> tuple[float, ...]:
    return tuple(1e3 * x for x in k)


FULL = Plan(
    poisson_rates=_kpps(1, 5, 10, 20, 40, 60, 80, 100, 110, 120, 127, 135, 150, 170, 187, 200)
    + _kpps(250, 300, 400, 500, 600),
    bursty_loads=(0.02, 0.1, 0.2, 0.3, 0.4, 0.5, 0.55, 0.6, 0.7, 0.8, 0.9, 0.98),
    param_rates=_kpps(2, 10, 40, 80, 110, 140, 170, 200, 300, 500),
    duration_ms=500.0,
    bursty_duration_ms=2000.0,
    warmup="auto",
    replications=5,
    bursty_replications=10,
    max_replications=20,
    taus=(1, 4, 8, 16, 32),
    coalesce_times_us=(0.0, 25.0, 50.0, 100.0),
    quotas=(2, 3, 4),
    periods_us=(10.0, 20.0, 40.0),
)
QUICK = Plan(
    poisson_rates=_kpps(2, 20, 60, 100, 127, 160, 250, 400),
    bursty_loads=(0.1, 0.4, 0.6, 0.9),
    param_rates=_kpps(2, 40, 100, 300),
    duration_ms=100.0,
    bursty_duration_ms=200.0,
    warmup=30.0,
    replications=3,
    bursty_replications=3,
    max_replications=3,
    taus=(1, 8, 32),
    coalesce_times_us=(0.0, 50.0),
    quotas=(2, 4),
    periods_us=(10.0, 20.0, 40.0),
)

# ----- running ---------------------------------------------------------------------------------


def _sweep(
    sweeps: Sweeps,
    name: str,
    base: Mapping[str, Any],
    axes: Mapping[str, Sequence[Any]],
    plan: Plan,
    *,
    replications: int,
    duration_ms: float,
    precision: bool,
) -> pd.DataFrame:
    stop = None
    if precision and plan.max_replications > replications:
        stop = {
            "metrics": ["throughput_pps", "latency_us.mean"],
            "relative": 0.05,
            "max_replications": plan.max_replications,
        }
    run = SweepPlan(duration_ms, plan.warmup, replications)
    return sweeps.planned(name, base, axes, run, precision=stop)


def _rate_of_load(load: float) -> float:
    """Packets/s of the bursty traffic at load ρ (fraction of 1 Gbit/s, 557-byte frames)."""
    return load * 1e9 / ((_mean_size() + 20) * 8)


@cache
def _mean_size() -> float:
    """Mean frame of the bursty traffic's size table (557 bytes)."""
    return mean_frame_bytes(BURSTY_BASE)


def _analysis(base: Mapping[str, Any], rates: Sequence[float] | np.ndarray) -> pd.DataFrame:
    frames = []
    for scheme in ANALYSED:
        params = irqlab.resolve({**base, "scheme": scheme})
        frames.append(curve(scheme, params, list(rates)))
    return pd.concat(frames, ignore_index=True)


def run(sweeps: Sweeps, plan: Plan) -> dict[str, pd.DataFrame]:
    """Figs. 6, 9 and 10: the simulations (and the analysis lines of Fig. 6), and the headline
    numbers."""
    tables: dict[str, pd.DataFrame] = {}

    fig6 = _sweep(
        sweeps,
        "fig6",
        POISSON_BASE,
        {"scheme": SCHEMES, "traffic.rate_pps": plan.poisson_rates},
        plan,
        replications=plan.replications,
        duration_ms=plan.duration_ms,
        precision=True,
    )
    dense = np.unique(np.concatenate([np.geomspace(1e3, 6e5, 160), plan.poisson_rates]))
    tables["fig6_simulation"] = fig6
    tables["fig6_analysis"] = _analysis(POISSON_BASE, dense)

    loads = plan.bursty_loads
    fig9 = _sweep(
        sweeps,
        "fig9",
        BURSTY_BASE,
        {"scheme": SCHEMES, "traffic.rate_pps": [_rate_of_load(x) for x in loads]},
        plan,
        replications=plan.bursty_replications,
        duration_ms=plan.bursty_duration_ms,
        precision=False,
    )
    fig9.insert(2, "load", fig9["traffic.rate_pps"].map(_load_of_rate))
    tables["fig9_simulation"] = fig9

    rates = plan.param_rates
    polling = ("poll", "napi-poll")
    fig10: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
        "fig10_tau": (
            {"scheme": "coalesce-count"},
            {"nic.rx_frames": plan.taus},
        ),
        "fig10_T": (
            {"scheme": "coalesce-time"},
            {"nic.rx_usecs": plan.coalesce_times_us},
        ),
        "fig10_Q": (
            {"poll.period_us": 20.0},
            {"scheme": polling, "poll.quota": plan.quotas},
        ),
        "fig10_Tpoll": (
            {"poll.quota": 4},
            {"scheme": polling, "poll.period_us": plan.periods_us},
        ),
    }
    for name, (base, axes) in fig10.items():
        tables[name] = _sweep(
            sweeps,
            name,
            {**POISSON_BASE, **base},
            {**axes, "traffic.rate_pps": rates},
            plan,
            replications=plan.replications,
            duration_ms=plan.duration_ms,
            precision=False,
        )
    tables["headline"] = headline(tables)
    return tables


def figures(tables: Mapping[str, pd.DataFrame]) -> dict[str, Figure]:
    return {
        "fig6.png": plot_fig6(tables["fig6_simulation"], tables["fig6_analysis"]),
        "fig9.png": plot_fig9(tables["fig9_simulation"]),
        "fig10.png": plot_fig10(tables),
    }


def documents(tables: Mapping[str, pd.DataFrame]) -> dict[str, str]:
    return {"headline.md": headline_markdown(tables["headline"])}


def _load_of_rate(rate: float) -> float:
    return round(rate * (_mean_size() + 20) * 8 / 1e9, 6)


# ----- the headline numbers --------------------------------------------------------------------


def _peak(df: pd.DataFrame, scheme: str | None) -> tuple[float, float]:
    """Highest mean throughput (and its 95% half-width) of a scheme, or of all but ideal."""
    part = df[df["scheme"] == scheme] if scheme else df[df["scheme"] != "ideal"]
    row = part.loc[part["throughput_pps"].idxmax()]
    return float(row["throughput_pps"]), float(row["throughput_pps.ci95"])


def headline(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The paper's headline numbers next to irqlab's analysis and simulation."""
    poisson = irqlab.resolve({**POISSON_BASE, "scheme": "irq"})
    bursty = irqlab.resolve({**BURSTY_BASE, "scheme": "irq"})

    mu_p, r_p, _ = model_rates(poisson)
    mu_b, r_b, _ = model_rates(bursty)
    fig6, fig9 = tables["fig6_simulation"], tables["fig9_simulation"]
    poll_row = fig6[fig6["scheme"] == "poll"].sort_values("traffic.rate_pps").iloc[-1]
    overload = float(poll_row["traffic.rate_pps"])
    poll_avail = float(curve("poll", poisson, [overload]).iloc[0]["cpu_availability"])
    rows = [
        (
            "cliff point, Poisson (kpps)",
            PAPER["cliff_poisson_kpps"],
            cliff_point(mu_p, r_p) / 1e3,
            *(_kilo(_peak(fig6, "irq"))),
            "Eq. 13; simulation: peak throughput of normal interruption",
        ),
        (
            "maximum throughput, Poisson (kpps)",
            PAPER["max_poisson_kpps"],
            mu_p / 1e3,
            *(_kilo(_peak(fig6, None))),
            "1/μ; simulation: highest throughput of any scheme but ideal",
        ),
        (
            "cliff point, bursty (kpps)",
            PAPER["cliff_bursty_kpps"],
            cliff_point(mu_b, r_b) / 1e3,
            *(_kilo(_peak(fig9, "irq"))),
            "Eq. 13 with the mean frame of 557 B (5.99 µs); simulation: peak of normal "
            "interruption",
        ),
        (
            "maximum throughput, bursty (kpps)",
            PAPER["max_bursty_kpps"],
            mu_b / 1e3,
            *(_kilo(_peak(fig9, None))),
            "1/(5.25 µs + 557 B / 748 MB/s); simulation: highest of any scheme but ideal",
        ),
        (
            "pure polling CPU availability under overload",
            math.nan,
            poll_avail,
            float(poll_row["cpu.idle"]),
            float(poll_row["cpu.idle.ci95"]),
            "1 − T_PollOH/T_poll − γ/μ; simulation at "
            f"{poll_row['traffic.rate_pps'] / 1e3:.0f} kpps",
        ),
    ]
    return pd.DataFrame(
        rows, columns=["quantity", "paper", "analysis", "simulation", "simulation.ci95", "how"]
    )


def _kilo(pair: tuple[float, float]) -> tuple[float, float]:
    return pair[0] / 1e3, pair[1] / 1e3


def headline_markdown(table: pd.DataFrame) -> str:
    rows = [
        f"{row.quantity} | {'—' if math.isnan(row.paper) else f'{row.paper:g}'} | "
        f"{row.analysis:.4g} | {row.simulation:.4g} ± {row._4:.2g}"
        for row in table.itertuples(index=False)
    ]
    columns = ["quantity", "paper", "irqlab analysis", "irqlab simulation (95% CI)"]
    return markdown_table(columns, rows)


#: The headline table: printed by `irqlab reproduce`, first in its report.
TABLES = {"headline": headline_markdown}


def readme(tables: Mapping[str, pd.DataFrame]) -> str:
    return (
        "- `fig6.png`, `fig6_simulation.csv`, `fig6_analysis.csv`: Poisson traffic, 64 B.\n"
        "- `fig9.png`, `fig9_simulation.csv`: bursty traffic, empirical frame sizes.\n"
        "- `fig10.png`, `fig10_*.csv`: effect of τ, T, Q and T_poll.\n"
        "- `headline.csv`, `headline.md`: the headline numbers.\n"
        "- `fig6/`, `fig9/`, `fig10_*/`: the sweeps (runs.parquet, summary.parquet); rerunning "
        "the command resumes them.\n\n" + headline_markdown(tables["headline"])
    )


# ----- figures ---------------------------------------------------------------------------------


def _axes_grid(
    rows: int, cols: int, width: float = 11.0, height: float = 3.4
) -> tuple[Figure, Any]:
    fig = Figure(figsize=(width, height * rows), layout="constrained")
    return fig, fig.subplots(rows, cols, squeeze=False)


def _points(scheme: str, lw: float = 0.9) -> dict[str, Any]:
    """How a scheme's simulated points are drawn, with their 95% intervals."""
    color, marker, label = COLORS[scheme], MARKERS[scheme], LABELS[scheme]
    return {"color": color, "marker": marker, "ms": 4, "lw": lw, "capsize": 2, "label": label}


def plot_fig6(sim: pd.DataFrame, analysis: pd.DataFrame) -> Figure:
    """Fig. 6: (a) throughput, (b) CPU availability, (c) latency at low load, (d) at high load."""
    fig, ax = _axes_grid(2, 2, height=3.8)
    panels = [
        (ax[0, 0], "throughput_pps", "throughput_pps", 1e-3, "(a) throughput (kpps)", None),
        (ax[0, 1], "cpu.idle", "cpu_availability", 1.0, "(b) CPU availability", None),
        (ax[1, 0], "latency_us.mean", "latency_us", 1.0, "(c) mean latency, low load (µs)", 1.1e5),
        (ax[1, 1], "latency_us.mean", "latency_us", 1.0, "(d) mean latency, high load (µs)", None),
    ]
    rate = "traffic.rate_pps"
    for a, sim_col, model_col, scale, title, x_max in panels:
        for scheme in SCHEMES:
            part = sim[sim["scheme"] == scheme]
            model = analysis[analysis["scheme"] == scheme]
            if x_max is not None:
                part = part[part[rate] <= x_max]
                model = model[model["rate_pps"] <= x_max]
            if not model.empty:
                a.plot(
                    model["rate_pps"] / 1e3, model[model_col] * scale, color=COLORS[scheme], lw=1.2
                )
            ls = "none" if scheme in ANALYSED else "--"
            errorbar(a, part, rate, sim_col, scale=scale, x_scale=1e-3, ls=ls, **_points(scheme))
        a.set_title(title, fontsize=10)
        a.set_xlabel("Poisson arrival rate (kpps)")
        a.grid(alpha=0.3)
    ax[1, 0].set_yscale("log")
    ax[1, 1].set_yscale("log")
    ax[1, 1].set_xlim(left=90)
    ax[0, 0].legend(fontsize=7.5, ncols=2)
    fig.suptitle(
        "Fig. 6 reproduced: lines analysis, markers simulation (95% CI); dashed: simulation only",
        fontsize=10,
    )
    return fig


def plot_fig9(sim: pd.DataFrame) -> Figure:
    """Fig. 9: throughput, CPU availability and latency against the bursty load."""
    fig, ax = _axes_grid(1, 3, width=13.0, height=3.8)
    panels = [
        ("throughput_pps", 1e-3, "(a) throughput (kpps)"),
        ("cpu.idle", 1.0, "(b) CPU availability"),
        ("latency_us.mean", 1.0, "(c) mean latency (µs)"),
    ]
    for a, (col, scale, title) in zip(ax[0], panels, strict=True):
        for scheme in SCHEMES:
            part = sim[sim["scheme"] == scheme]
            errorbar(a, part, "load", col, scale=scale, **_points(scheme, lw=1))
        a.set_title(title, fontsize=10)
        a.set_xlabel("load ρ (fraction of 1 Gbit/s)")
        a.grid(alpha=0.3)
    ax[0, 2].set_yscale("log")
    ax[0, 0].legend(fontsize=7.5)
    fig.suptitle("Fig. 9 reproduced: bursty traffic (8 Pareto ON/OFF sources), 95% CI", fontsize=10)
    return fig


def plot_fig10(tables: Mapping[str, pd.DataFrame]) -> Figure:
    """Fig. 10: one row per parameter (τ and T, Q, T_poll), columns as Fig. 9."""
    fig, ax = _axes_grid(3, 3, width=13.0, height=3.4)
    cols = [
        ("throughput_pps", 1e-3, "throughput (kpps)"),
        ("cpu.idle", 1.0, "CPU availability"),
        ("latency_us.mean", 1.0, "mean latency (µs)"),
    ]
    rows: list[list[tuple[pd.DataFrame, str, str, str, str | None]]] = [
        [
            (tables["fig10_tau"], "nic.rx_frames", "τ = {}", "-", None),
            (tables["fig10_T"], "nic.rx_usecs", "T = {:g} µs", ":", None),
        ],
        [
            (tables["fig10_Q"], "poll.quota", "pure Q = {}", "-", "poll"),
            (tables["fig10_Q"], "poll.quota", "NAPI Q = {}", "--", "napi-poll"),
        ],
        [
            (tables["fig10_Tpoll"], "poll.period_us", "pure T_poll = {:g} µs", "-", "poll"),
            (tables["fig10_Tpoll"], "poll.period_us", "NAPI T_poll = {:g} µs", "--", "napi-poll"),
        ],
    ]
    titles = ["coalescing: τ and T", "polling quota Q (T_poll = 20 µs)", "T_poll (Q = 4)"]
    for r, (series, title) in enumerate(zip(rows, titles, strict=True)):
        for c, (col, scale, ylabel) in enumerate(cols):
            a = ax[r, c]
            for df, key, fmt, ls, scheme in series:
                part = df if scheme is None else df[df["scheme"] == scheme]
                values = sorted(part[key].unique())
                cmap = _colors(len(values))
                for value, color in zip(values, cmap, strict=True):
                    errorbar(
                        a,
                        part[part[key] == value],
                        "traffic.rate_pps",
                        col,
                        scale=scale,
                        x_scale=1e-3,
                        color=color,
                        ls=ls,
                        marker="o",
                        ms=3,
                        lw=1,
                        capsize=2,
                        label=fmt.format(value),
                    )
            a.set_title(f"{title}: {ylabel}", fontsize=9)
            a.set_xlabel("Poisson arrival rate (kpps)")
            a.set_xscale("log")
            a.xaxis.set_major_formatter(EngFormatter())
            a.grid(alpha=0.3)
            if col == "latency_us.mean":
                a.set_yscale("log")
        ax[r, 0].legend(fontsize=7)
    fig.suptitle("Fig. 10 reproduced: effect of the schemes' parameters (95% CI)", fontsize=10)
    return fig


def _colors(n: int) -> list[Any]:
    from matplotlib import colormaps

    cmap = colormaps["viridis"]
    return [cmap(0.1 + 0.75 * i / max(n - 1, 1)) for i in range(n)]
