"""Beifuß, Runge, Raumer, Emmerich, Wolfinger & Carle (2016), "Building a Low Latency Linux
Software Router": the NIC classifies packets into a real-time (RT) and a best-effort (BE) Rx
ring, and the driver's poll serves the RT ring with priority — lower RT latency without losing
throughput.

What is re-run, on the study's fitted ``beifuss2016.preset.toml`` (the ``beifuss2016`` platform
preset, one 3.2 GHz core forwarding Poisson 128-byte frames, 512 descriptors per ring, ITR off,
with its interrupt split into CPU time and delivery and a cost per switch between NAPIs;
calibrated to the targets of ``beifuss2016.targets.toml``, see docs/qos.md), for the
strategies SQ, RR, LL-RR and LL-WFQ (and the stock driver's equal split, VMDq, beside them):

- **Fig. 5a** — maximum loss-free throughput against the RT share: the paper's search, the
  offered load raised in 0.05 Mpps steps until a run loses a packet.
- **Fig. 5b** — CPU load against the offered load (30 % RT).
- **Fig. 6a/6b** — IRQ rate against the RT share at 1.5 Mpps, and against the load at 30 % RT.
- **Fig. 7a/7b** — mean latency per class against the RT share at 1.5 Mpps and against the load
  at 30 % RT. irqlab's latency ends where the packet is handed to the Tx ring; MoonGen's covers
  the egress path too, so a constant offset ``L0`` is added, fitted once so that SQ shows the
  paper's 11.7 µs at 1.5 Mpps and 30 % RT.
- **The paper's numbers** — every number its text gives beside irqlab's (``paper.md``), each
  marked as a calibration target (not evidence) or a comparison.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from scipy import stats

from irqlab.analytic.beifuss import t_max
from irqlab.formatting import with_unit
from irqlab.studies.common import Sweeps, errorbar, markdown_table, mpps, preset

NAME = "beifuss2016"
TITLE = "Beifuß et al. (2016): ingress QoS on the receive path (SQ, RR, LL-RR, LL-WFQ)"

#: The study's platform is its calibration's (``beifuss2016.preset.toml``, fitted to
#: ``beifuss2016.targets.toml``): one preset for every figure.
BASE = {
    "platform.preset": "beifuss2016",
    **preset(__name__),
    "scheme": "napi",
    "host.forward": True,
    "traffic.kind": "poisson",
    "traffic.size_bytes": 128,
}
PAPER = ("sq", "rr", "ll-rr", "ll-wfq")
STRATEGIES = (*PAPER, "vmdq")
LABELS = {
    "sq": "SQ",
    "rr": "RR",
    "ll-rr": "LL-RR",
    "ll-wfq": "LL-WFQ",
    "vmdq": "VMDq split",
}
COLORS = {
    "sq": "black",
    "rr": "tab:red",
    "ll-rr": "tab:blue",
    "ll-wfq": "tab:green",
    "vmdq": "tab:gray",
}
SEED = 2016
#: The paper's fixed operating points.
FIXED_LOAD_PPS = 1.5e6
FIXED_RT = 0.3
#: SQ's mean latency at the fixed point (Fig. 7a): fits the egress offset L0.
SQ_LATENCY_US = 11.7
#: The paper's service time, 1/(1.75 Mpps) µs, for T_max.
X_US = 1 / 1.75


@dataclass(frozen=True)
class Plan:
    shares: tuple[float, ...]
    loads: tuple[float, ...]
    search_shares: tuple[float, ...]
    search_loads: tuple[float, ...]
    duration_ms: float
    warmup_ms: float
    replications: int


def _steps(lo: float, hi: float, step: float) -> tuple[float, ...]:
    n = round((hi - lo) / step)
    return tuple(round(lo + i * step, 6) for i in range(n + 1))


FULL = Plan(
    shares=_steps(0.0, 1.0, 0.05),
    loads=mpps(*_steps(0.05, 2.0, 0.05)),
    search_shares=_steps(0.0, 1.0, 0.05),
    search_loads=mpps(*_steps(1.45, 1.95, 0.05)),
    duration_ms=100.0,
    warmup_ms=10.0,
    replications=5,
)
QUICK = Plan(
    shares=(0.0, 0.1, 0.3, 0.5, 0.7, 1.0),
    loads=mpps(0.05, 0.2, 0.5, 0.75, 1.0, 1.25, 1.5, 1.7, 2.0),
    search_shares=(0.3, 0.7),
    search_loads=mpps(*_steps(1.5, 1.85, 0.05)),
    duration_ms=60.0,
    warmup_ms=5.0,
    replications=4,
)


def run(sweeps: Sweeps, plan: Plan) -> dict[str, pd.DataFrame]:
    """The strategies against the RT share and the load, the maximum loss-free throughput
    (Fig. 5a) and the paper's numbers beside irqlab's."""
    shares = sweeps.planned(
        "shares",
        {**BASE, "traffic.rate_pps": FIXED_LOAD_PPS},
        {"qos.strategy": STRATEGIES, "qos.rt_share": plan.shares},
        plan,
    )
    loads = sweeps.planned(
        "loads",
        {**BASE, "qos.rt_share": FIXED_RT},
        {"qos.strategy": STRATEGIES, "traffic.rate_pps": plan.loads},
        plan,
    )
    # the search: every run of the grid, so that each replication is searched on its own
    search_runs = sweeps.runs(
        "search",
        BASE,
        {
            "qos.strategy": PAPER,
            "qos.rt_share": plan.search_shares,
            "traffic.rate_pps": plan.search_loads,
        },
        duration_ms=plan.duration_ms,
        replications=plan.replications,
        warmup=plan.warmup_ms,
    )
    offset = egress_offset(shares)
    maximum = max_throughput(search_runs)
    return {
        "shares": shares,
        "loads": loads,
        "max_throughput": maximum,
        "paper": paper_table(shares, loads, maximum, offset),
    }


def figures(tables: Mapping[str, pd.DataFrame]) -> dict[str, Figure]:
    shares, loads = tables["shares"], tables["loads"]
    return {
        "fig5.png": plot_fig5(tables["max_throughput"], loads),
        "fig6.png": plot_fig6(shares, loads),
        "fig7.png": plot_fig7(shares, loads, egress_offset(shares)),
    }


def documents(tables: Mapping[str, pd.DataFrame]) -> dict[str, str]:
    return {"paper.md": paper_markdown(tables["paper"])}


# ----- analysis --------------------------------------------------------------------------------


def at(df: pd.DataFrame, strategy: str, **where: float) -> pd.Series:
    """The summary row of ``strategy`` where each key (``rt_share``, ``rate_pps``) has its
    value."""
    keys = {"rt_share": "qos.rt_share", "rate_pps": "traffic.rate_pps"}
    mask = df["qos.strategy"] == strategy
    for k, v in where.items():
        mask &= np.isclose(df[keys[k]], v)
    row = df[mask]
    if len(row) != 1:
        raise KeyError(f"no single row for {strategy} at {where}")
    return row.iloc[0]


def class_column(df: pd.DataFrame, name: str, metric: str) -> str:
    """The column of ``metric`` for class ``name`` (``per_class.1.latency_us.mean``)."""
    index = {"be": 0, "rt": 1}[name]
    column = f"per_class.{index}.{metric}"
    labels = df.get(f"per_class.{index}.class")
    if labels is not None and not (labels.dropna() == name).all():
        raise KeyError(f"per_class.{index} is not class {name}")
    return column


def egress_offset(shares: pd.DataFrame) -> float:
    """``L0``: what MoonGen measures beyond irqlab's latency (the egress path), fitted on SQ at
    1.5 Mpps and 30 % RT."""
    sq = at(shares, "sq", rt_share=FIXED_RT)
    return SQ_LATENCY_US - float(sq["latency_us.mean"])


def max_throughput(runs: pd.DataFrame) -> pd.DataFrame:
    """Fig. 5a: per strategy, RT share and replication, the paper's search — the loads in
    increasing order, the last one before the first run that lost a packet — then the mean and
    95 % interval over the replications."""
    rows = []
    keys = ["qos.strategy", "qos.rt_share", "replication"]
    for (strategy, share, rep), d in runs.groupby(keys, sort=True):
        d = d.sort_values("traffic.rate_pps")
        lossy = d["packets.dropped_nic"].to_numpy() > 0
        loads = d["traffic.rate_pps"].to_numpy()
        if lossy.all():
            found = np.nan  # below the searched range
        elif not lossy.any():
            found = float(loads[-1])  # at least the top of the range
        else:
            first = int(np.argmax(lossy))
            found = float(loads[first - 1]) if first > 0 else np.nan
        rows.append(
            {"qos.strategy": strategy, "qos.rt_share": share, "replication": rep, "max": found}
        )
    per_rep = pd.DataFrame(rows)
    out = []
    for (strategy, share), d in per_rep.groupby(["qos.strategy", "qos.rt_share"], sort=True):
        x = d["max"].to_numpy(dtype=float)
        n = int(np.isfinite(x).sum())
        mean = float(np.nanmean(x)) if n else np.nan
        half = (
            float(stats.t.ppf(0.975, n - 1) * np.nanstd(x, ddof=1) / np.sqrt(n))
            if n > 1
            else np.nan
        )
        out.append(
            {
                "qos.strategy": strategy,
                "qos.rt_share": share,
                "max_loss_free_pps": mean,
                "max_loss_free_pps.ci95": half,
                "n": n,
            }
        )
    return pd.DataFrame(out)


def paper_table(
    shares: pd.DataFrame, loads: pd.DataFrame, maximum: pd.DataFrame, offset: float
) -> pd.DataFrame:
    """Every number the paper's text gives, beside irqlab's (latencies with ``L0`` added)."""
    rows: list[dict[str, Any]] = []

    def add(what: str, paper: str, value: str, role: str = "comparison") -> None:
        rows.append({"quantity": what, "paper": paper, "irqlab": value, "role": role})

    def mx(strategy: str) -> tuple[float, float]:
        d = maximum[maximum["qos.strategy"] == strategy]["max_loss_free_pps"]
        return float(d.min()), float(d.max())

    def span(strategy: str) -> str:
        lo, hi = mx(strategy)
        if not np.isfinite(lo):
            return "—"
        if round(lo / 1e4) == round(hi / 1e4):
            return f"{lo / 1e6:.2f} Mpps at every RT share"
        return f"{lo / 1e6:.2f}–{hi / 1e6:.2f} Mpps over the RT shares"

    def s(strategy: str, share: float, col: str) -> pd.Series:
        r = at(shares, strategy, rt_share=share)
        return r[col], r.get(f"{col}.ci95", np.nan)

    def ld(strategy: str, rate: float, col: str) -> pd.Series:
        r = at(loads, strategy, rate_pps=rate)
        return r[col], r.get(f"{col}.ci95", np.nan)

    def lat(df_get: str, strategy: str, key: float, cls: str | None) -> str:
        df = shares if df_get == "s" else loads
        col = "latency_us.mean" if cls is None else class_column(df, cls, "latency_us.mean")
        v, ci = (s if df_get == "s" else ld)(strategy, key, col)
        return with_unit(float(v) + offset, "µs", float(ci))

    add("SQ max. loss-free throughput (Fig. 5a)", "≈ 1.75 Mpps", span("sq"), "calibration")
    add("RR max. loss-free throughput", "1.6–1.65 Mpps", span("rr"))
    for share in (0.3, 0.5):  # the two targets that fix the switch cost and split the interrupt
        d = maximum[(maximum["qos.strategy"] == "rr") & np.isclose(maximum["qos.rt_share"], share)]
        if len(d):
            add(
                f"RR max. loss-free throughput at {share * 100:.0f} % RT (Fig. 5a)",
                "1.6–1.65 Mpps",
                with_unit(
                    d["max_loss_free_pps"].iloc[0], "Mpps", d["max_loss_free_pps.ci95"].iloc[0]
                ),
                "calibration",
            )
    add("LL-RR max. loss-free throughput", "≥ 1.65 Mpps", span("ll-rr"))
    add("LL-WFQ max. loss-free throughput", "≥ 1.65 Mpps", span("ll-wfq"))
    for st in PAPER:
        v, ci = s(st, FIXED_RT, "loss_ratio")
        add(
            f"{LABELS[st]} loss at 1.5 Mpps, 30 % RT",
            "none (all cope with 1.5 Mpps)",
            f"{float(v):.1e}",
        )
    v, ci = s("sq", FIXED_RT, "irq_per_s")
    add("SQ IRQ rate at 1.5 Mpps (Fig. 6a)", "≈ 32 k/s", with_unit(v, "k/s", ci), "calibration")
    for share, paper in ((0.0, "≈ 20 k/s"), (0.5, "≈ 58 k/s (peak)"), (1.0, "≈ 20 k/s")):
        if np.isclose(list(shares["qos.rt_share"].unique()), share).any():
            v, ci = s("rr", share, "irq_per_s")
            # the peak is a target that splits the interrupt (beifuss2016.targets.toml)
            role = "calibration" if share == 0.5 else "comparison"
            add(f"RR IRQ rate at 1.5 Mpps, {share:.0%} RT", paper, with_unit(v, "k/s", ci), role)
    for st in ("ll-rr", "ll-wfq"):
        v, ci = s(st, FIXED_RT, "irq_per_s")
        add(f"{LABELS[st]} IRQ rate at 1.5 Mpps, 30 % RT", "≈ 20 k/s", with_unit(v, "k/s", ci))
    rates = loads["traffic.rate_pps"].unique()

    def have(rate: float) -> bool:
        return bool(np.isclose(rates, rate).any())

    for rate, paper in ((0.8e6, "falls to ≈ 25 k/s (0.8–1.0)"), (1.0e6, "back to ≈ 32 k/s")):
        if have(rate):
            v, ci = ld("sq", rate, "irq_per_s")
            add(f"SQ IRQ rate at {rate / 1e6:g} Mpps (Fig. 6b)", paper, with_unit(v, "k/s", ci))
    if have(1.7e6):
        v, ci = ld("sq", 1.7e6, "irq_per_s")
        add("SQ IRQ rate at 1.7 Mpps", "0 (NAPI keeps polling)", with_unit(v, "k/s", ci))
    if have(2.0e6):
        v, ci = ld("rr", 2.0e6, "irq_per_s")
        add(
            "RR IRQ rate in overload (2.0 Mpps)",
            "≈ 17 k/s (the RT vector)",
            with_unit(v, "k/s", ci),
        )
    for rate in (1.5e6, 1.7e6):
        if have(rate):
            for st in ("sq", "rr"):
                v, ci = ld(st, rate, "cpu.busy")
                paper = {
                    ("sq", 1.5e6): "nearly full, not overloaded",
                    ("rr", 1.5e6): "nearly full (100 % at 1.55 Mpps)",
                    ("sq", 1.7e6): "100 % at ≈ 1.7 Mpps",
                    ("rr", 1.7e6): "100 %",
                }[(st, rate)]
                add(
                    f"{LABELS[st]} CPU load at {rate / 1e6:g} Mpps (Fig. 5b)",
                    paper,
                    with_unit(v, "%", ci),
                )
    add(
        "SQ mean latency at 1.5 Mpps, 30 % RT (Fig. 7a)",
        "11.7 µs",
        lat("s", "sq", FIXED_RT, None),
        "calibration (L0)",
    )
    for st in ("ll-rr", "ll-wfq"):
        add(
            f"{LABELS[st]} RT latency at 1.5 Mpps, 30 % RT",
            "≈ 10.4 µs (11 % below SQ)",
            lat("s", st, FIXED_RT, "rt"),
        )
        add(
            f"{LABELS[st]} BE latency at 1.5 Mpps, 30 % RT",
            "notably above SQ",
            lat("s", st, FIXED_RT, "be"),
        )
    add("RR RT latency at 1.5 Mpps, 30 % RT", "above SQ and above RR BE", lat("s", "rr", 0.3, "rt"))
    add("RR BE latency at 1.5 Mpps, 30 % RT", "above SQ", lat("s", "rr", 0.3, "be"))
    for share in (0.0, 1.0):
        cls = "be" if share == 0.0 else "rt"
        for st in ("sq", "ll-rr", "ll-wfq"):
            add(
                f"{LABELS[st]} latency at 1.5 Mpps, {share:.0%} RT",
                "LL above SQ (overhead)" if st != "sq" else "11.7 µs",
                lat("s", st, share, cls),
            )
    if have(2.0e6):
        for st in ("ll-rr", "ll-wfq"):
            add(
                f"{LABELS[st]} RT latency in overload (2.0 Mpps, 30 % RT, Fig. 7b)",
                "≈ 11.4 µs, stays low",
                lat("l", st, 2.0e6, "rt"),
            )
        add("SQ latency in overload (2.0 Mpps)", "rises sharply", lat("l", "sq", 2.0e6, None))
    rho = FIXED_LOAD_PPS * FIXED_RT * X_US * 1e-6
    add(
        "T_max, b = 4, 1.5 Mpps, 30 % RT (Eq. 1)",
        "[derived] 3.08 µs",
        f"{t_max(4, X_US, rho):.2f} µs (irqlab.analytic)",
        "analysis",
    )
    add("L0, the egress offset added to every latency", "—", f"{offset:.2f} µs", "calibration")
    return pd.DataFrame(rows)


def paper_markdown(table: pd.DataFrame) -> str:
    rows = table[["quantity", "paper", "irqlab", "role"]].itertuples(index=False)
    return markdown_table(["quantity", "paper", "irqlab", "role"], rows)


#: The headline table: printed by `irqlab reproduce`, first in its report.
TABLES = {"paper": paper_markdown}


def readme(tables: Mapping[str, pd.DataFrame]) -> str:
    offset = egress_offset(tables["shares"])
    return (
        "- `fig5.png`: (a) maximum loss-free throughput against the RT share, "
        "(b) CPU load against the load at 30 % RT.\n"
        "- `fig6.png`: IRQ rate (a) against the RT share at 1.5 Mpps, (b) against the load.\n"
        "- `fig7.png`: mean latency per class (a) against the RT share at 1.5 Mpps, "
        "(b) against the load at 30 % RT.\n"
        "- `shares.csv`, `loads.csv`, `max_throughput.csv`: the data, with 95 % intervals.\n"
        "- `paper.md`, `paper.csv`: the paper's numbers beside irqlab's.\n"
        "- `shares/`, `loads/`, `search/`: the sweeps (rerunning the command resumes them).\n\n"
        f"Latencies include the egress offset L0 = {offset:.2f} µs, fitted on SQ "
        "(docs/qos.md).\n\n" + paper_markdown(tables["paper"])
    )


# ----- figures ---------------------------------------------------------------------------------


def _style(strategy: str, cls: str | None = None) -> dict[str, Any]:
    return {
        "color": COLORS[strategy],
        "marker": "o" if cls != "be" else "s",
        "ls": "-" if cls != "be" else "--",
        "ms": 3.5,
        "lw": 1.2,
        "capsize": 2,
        "label": LABELS[strategy] + (f" {cls.upper()}" if cls else ""),
    }


def plot_fig5(maximum: pd.DataFrame, loads: pd.DataFrame) -> Figure:
    fig = Figure(figsize=(11, 4.2), layout="constrained")
    a, b = fig.subplots(1, 2)
    for st in PAPER:
        d = maximum[maximum["qos.strategy"] == st]
        errorbar(a, d, "qos.rt_share", "max_loss_free_pps", scale=1e-6, x_scale=100, **_style(st))
    a.set_xlabel("RT share (%)")
    a.set_title("(a) maximum loss-free throughput (Mpps)", fontsize=10)
    for st in STRATEGIES:
        d = loads[loads["qos.strategy"] == st]
        errorbar(b, d, "traffic.rate_pps", "cpu.busy", scale=100, x_scale=1e-6, **_style(st))
    b.set_xlabel("offered load (Mpps, 30 % RT)")
    b.set_title("(b) CPU load (%)", fontsize=10)
    for ax in (a, b):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Fig. 5 reproduced (Poisson 128 B, one core; 95% CI)", fontsize=10)
    return fig


def plot_fig6(shares: pd.DataFrame, loads: pd.DataFrame) -> Figure:
    fig = Figure(figsize=(11, 4.2), layout="constrained")
    a, b = fig.subplots(1, 2)
    for st in STRATEGIES:
        d = shares[shares["qos.strategy"] == st]
        errorbar(a, d, "qos.rt_share", "irq_per_s", scale=1e-3, x_scale=100, **_style(st))
        d = loads[loads["qos.strategy"] == st]
        errorbar(b, d, "traffic.rate_pps", "irq_per_s", scale=1e-3, x_scale=1e-6, **_style(st))
    a.set_xlabel("RT share (%), 1.5 Mpps")
    b.set_xlabel("offered load (Mpps, 30 % RT)")
    a.set_title("(a) IRQ rate (k/s)", fontsize=10)
    b.set_title("(b) IRQ rate (k/s)", fontsize=10)
    for ax in (a, b):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Fig. 6 reproduced (95% CI)", fontsize=10)
    return fig


def plot_fig7(shares: pd.DataFrame, loads: pd.DataFrame, offset: float) -> Figure:
    fig = Figure(figsize=(12, 4.6), layout="constrained")
    a, b = fig.subplots(1, 2)
    for st in PAPER:
        for cls in ("rt", "be"):
            if st == "sq" and cls == "be":
                continue
            for ax, df, x, xs in (
                (a, shares, "qos.rt_share", 100),
                (b, loads, "traffic.rate_pps", 1e-6),
            ):
                d = df[df["qos.strategy"] == st].copy()
                col = "latency_us.mean" if st == "sq" else class_column(d, cls, "latency_us.mean")
                d["y"] = d[col] + offset
                d["y.ci95"] = d[f"{col}.ci95"]
                if x == "qos.rt_share":
                    d = d[(d[x] > 0) if cls == "rt" else (d[x] < 1)]
                errorbar(ax, d, x, "y", x_scale=xs, **_style(st, None if st == "sq" else cls))
    a.set_xlabel("RT share (%), 1.5 Mpps")
    b.set_xlabel("offered load (Mpps, 30 % RT)")
    b.set_yscale("log")
    a.set_title(f"(a) mean latency (µs, incl. L0 = {offset:.1f} µs)", fontsize=10)
    b.set_title("(b) mean latency (µs, log scale)", fontsize=10)
    for ax in (a, b):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
    fig.suptitle("Fig. 7 reproduced: RT solid, BE dashed (95% CI)", fontsize=10)
    return fig
