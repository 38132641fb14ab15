"""Chang et al. (2007), "A robust device hybrid scheme to improve system performance in gigabit
Ethernet networks" (LCN 2007): what a host delivers to its *application* under heavy receive
load, when protocol processing, ksoftirqd and the application share one CPU; QAPolling (adapts
the NAPI budget), AIC (the interrupt interval) and RHIP (both) against NAPI.

What is re-run, on the study's fitted ``chang2007.preset.toml`` (the ``chang2007`` platform
preset: Linux 2.6.18 scheduling and ``net_rx_action``, e1000 with 4096 descriptors, an
8,000,000-byte socket buffer; its costs and RHIP's smallest interval fitted by
``irqlab calibrate`` to ``chang2007.targets.toml``, docs/applications.md), with an application
doing 200 floating-point multiplications per packet,
with UDP at fixed sizes as fast as the gigabit link allows:

- **Fig. 8** — goodput against B_p at 64, 128, 150 and 256 bytes (NAPI,
  ``max_softirq_restart`` = 1, B_p = ``netdev_budget``), with the analysis' mode boundary
  γ/(1 − λT_p) marked;
- **Fig. 9 and Table II** — the schemes against packet size, and the CPU idle time at 512 to
  1500 bytes beside the paper's;
- **Fig. 10** — the schemes against application work (0 to 2000 multiplications, 1500 bytes);
- **Fig. 11** — the latency a low-rate probe (ping) sees over time under full 1500-byte load:
  the protocol-path latency of the packets arriving in each window (an ICMP echo is answered
  at the end of protocol processing);
- a table of every number the text gives beside irqlab's.

The QAPolling and AIC update rules and the unit of RHIP's "+500" are irqlab's choices (the
``adapt.*`` keys; the paper leaves them to a reference it does not reproduce): every result of
these schemes depends on them, and each output says so.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from irqlab.analytic import chang as model
from irqlab.studies.common import SweepPlan, Sweeps, finish, markdown_table, preset, targets

NAME = "chang2007"
TITLE = "Chang et al. (2007): applications under receive load, QAPolling, AIC and RHIP"

#: The application: a ``recv`` (system call and copy) plus 200 floating-point multiplications.
#: The paper gives no times; these are calibrated (docs/applications.md).
RECV_NS = 760.0
RECV_NS_PER_BYTE = 1.317
MULT_NS = 0.714
MULTS = 200

#: The study's platform is its calibration's (``chang2007.preset.toml``, fitted to
#: ``chang2007.targets.toml``): one preset for Figs. 8-11 and Table II.
BASE = {
    "platform.preset": "chang2007",
    **preset(__name__),
    "scheme": "napi",
    "traffic.kind": "cbr",
    "driver.moderation": "static",
    "nic.itr_us": 0.0,
}
SCHEMES = ("napi", "qapolling", "aic", "rhip", "rhip-noksd")
LABELS = {
    "napi": "NAPI",
    "qapolling": "QAPolling",
    "aic": "AIC",
    "rhip": "RHIP",
    "rhip-noksd": "RHIP without adjusting ksoftirqd",
}
COLORS = {
    "napi": "black",
    "qapolling": "tab:orange",
    "aic": "tab:green",
    "rhip": "tab:blue",
    "rhip-noksd": "tab:purple",
}
CHOICE_NOTE = (
    "QAPolling's and AIC's update rules (adapt.alpha, adapt.beta, adapt.micro, "
    "adapt.aic_rate_step, adapt.aic_decrease) and the unit of RHIP's '+500' "
    "(adapt.t_increase_ns) are irqlab's choices: these results depend on them."
)
SEED = 2007
FIG8_SIZES = (64, 128, 150, 256)
FIG9_SIZES = (46, 64, 128, 512, 1024, 1200, 1500)
TABLE2_SIZES = (512, 1024, 1200, 1500)
#: Table II as printed: CPU idle (%) per scheme at 512, 1024, 1200 and 1500 bytes.
TABLE2_PAPER = {
    "napi": (0, 0, 0, 0),
    "qapolling": (0, 0, 0, 0),
    "rhip-noksd": (16, 43, 48, 52),
    "rhip": (16, 48, 52, 57),
}
#: The results the preset's costs were calibrated on (docs/applications.md), exactly: each is
#: labelled "calibration" in the reproduction's tables; every other number there is evidence.
CALIBRATION_TARGETS = (
    "RHIP's CPU idle time at 512, 1024 and 1200 bytes (Table II: 16 %, 48 % and 52 %)",
    "NAPI's goodput 'very small' below 1500 bytes (the application starves)",
    "NAPI at 1500 bytes: the socket overflows, with no CPU idle time",
)
#: The calibration as ``irqlab calibrate`` reads it, declared once, in ``chang2007.targets.toml``
#: beside this module: the tables label as calibration exactly the cells it names.
TARGETS = targets(__name__)


def _cell(point: Mapping[str, Any]) -> tuple[str, int]:
    """A target's point as a Table II cell: (scheme, IP bytes)."""
    scheme = str(point["adapt.scheme"])
    return ("napi" if scheme == "none" else scheme, int(point["traffic.size_bytes"]) - 18)


#: Table II's cells among the calibration targets: (scheme, bytes), in the file's order.
CALIBRATED_IDLE = tuple(_cell(t["point"]) for t in TARGETS["target"] if t["metric"] == "cpu.idle")
#: The sizes at which NAPI's starvation is a calibration target.
STARVED_SIZES = tuple(
    _cell(t["point"])[1] for t in TARGETS["target"] if t["metric"] == "goodput_bps"
)


@dataclass(frozen=True)
class Plan:
    budgets: tuple[int, ...]
    sizes: tuple[int, ...]
    mults: tuple[int, ...]
    duration_ms: float
    warmup_ms: float
    fig8_duration_ms: float
    fig8_warmup_ms: float
    window_ms: float
    windows: int


FULL_BUDGETS: tuple[int, ...]
FULL_BUDGETS = (1, 5, 10, 20, 35, 50, 70, 100, 150, 200, 300, 400, 500, 600, 750, 900)
FULL_BUDGETS = (*FULL_BUDGETS, 1200, 1500, 2000, 3000)
FULL = Plan(
    budgets=FULL_BUDGETS,
    sizes=FIG9_SIZES,
    mults=(0, 250, 500, 750, 1000, 1500, 2000),
    duration_ms=30_000.0,
    warmup_ms=10_000.0,
    fig8_duration_ms=1000.0,
    fig8_warmup_ms=500.0,
    window_ms=500.0,
    windows=40,
)
QUICK = Plan(
    budgets=(1, 10, 35, 70, 150, 300, 600, 900, 1500, 3000),
    sizes=FIG9_SIZES,
    mults=(0, 500, 1000, 2000),
    duration_ms=5000.0,
    warmup_ms=3000.0,
    fig8_duration_ms=300.0,
    fig8_warmup_ms=200.0,
    window_ms=500.0,
    windows=16,
)


def wire_pps(ip_bytes: int, link_gbps: float = 1.0) -> float:
    """The gigabit link's packet rate at an IP size: the frame (IP + 18 bytes, at least 64)
    plus 20 bytes of preamble and gap."""
    frame = max(ip_bytes + 18, 64)
    return link_gbps * 1e9 / ((frame + 20) * 8)


def traffic(ip_bytes: int) -> dict[str, Any]:
    return {"traffic.size_bytes": max(ip_bytes + 18, 64), "traffic.rate_pps": wire_pps(ip_bytes)}


def app(mults: int = MULTS) -> dict[str, Any]:
    return {
        "app": [
            {
                "cost_ns": RECV_NS + MULT_NS * mults,
                "cost_ns_per_byte": RECV_NS_PER_BYTE,
                "cost_dist": "deterministic",
            }
        ]
    }


def scheme_keys(scheme: str) -> dict[str, Any]:
    return {"adapt.scheme": "none" if scheme == "napi" else scheme}


def _sweep(
    sweeps: Sweeps,
    name: str,
    base: Mapping[str, Any],
    axes: Mapping[str, Sequence[Any]],
    duration_ms: float,
    warmup_ms: float | None,
) -> pd.DataFrame:
    # CBR and deterministic costs: every replication is the same run
    return sweeps.planned(name, base, axes, SweepPlan(duration_ms, warmup_ms, replications=1))


def run(sweeps: Sweeps, plan: Plan) -> dict[str, pd.DataFrame]:
    """Figs. 8-11, Table II and every number of the text beside irqlab's."""
    fig8 = fig8_table(sweeps, plan)
    fig9 = schemes_by(sweeps, "fig9", plan, sizes=plan.sizes, mults=(MULTS,))
    fig10 = schemes_by(sweeps, "fig10", plan, sizes=(1500,), mults=plan.mults)
    fig11 = latency_over_time(sweeps, plan)
    table2 = table2_table(fig9)
    return {
        "fig8": fig8,
        "fig9": fig9,
        "table2": table2,
        "fig10": fig10,
        "fig11": fig11,
        "paper_vs_irqlab": paper_table(fig8, fig9, fig10, fig11, table2),
    }


def figures(tables: Mapping[str, pd.DataFrame]) -> dict[str, Figure]:
    return {
        "fig8.png": plot_fig8(tables["fig8"]),
        "fig9.png": plot_fig9(tables["fig9"]),
        "fig10.png": plot_fig10(tables["fig10"]),
        "fig11.png": plot_fig11(tables["fig11"]),
    }


def documents(tables: Mapping[str, pd.DataFrame]) -> dict[str, str]:
    return {
        "table2.md": table2_markdown(tables["table2"]),
        "paper_vs_irqlab.md": paper_markdown(tables["paper_vs_irqlab"]),
    }


# ----- runs ------------------------------------------------------------------------------------


def _derived(df: pd.DataFrame, ip_bytes: pd.Series | int) -> pd.DataFrame:
    df = df.copy()
    df["goodput_pps"] = df["goodput_bps"] / ip_bytes
    df["goodput_mbps"] = df["goodput_bps"] * 8 / 1e6
    df["socket_drops_per_s"] = df["packets.dropped_socket"] / df["measured_s"]
    df["nic_drops_per_s"] = df["packets.dropped_nic"] / df["measured_s"]
    return df


def fig8_table(sweeps: Sweeps, plan: Plan) -> pd.DataFrame:
    """Goodput against B_p (NAPI, one pass per invocation) at Fig. 8's sizes, with the mode
    the analysis gives each point."""
    frames = []
    proto_s = float(BASE["platform.proto_ns"]) * 1e-9  # the protocol processing per packet
    for size in FIG8_SIZES:
        base = {**BASE, **traffic(size), **app(), "kernel.max_softirq_restart": 1}
        df = _sweep(
            sweeps,
            f"fig8_{size}",
            base,
            {"kernel.netdev_budget": plan.budgets},
            plan.fig8_duration_ms,
            plan.fig8_warmup_ms,
        )
        df = _derived(df, size)
        df.insert(0, "size_bytes", size)
        rate = wire_pps(size)
        # gamma/(1 - lambda T_p): the packets an invocation takes with an unbounded budget,
        # measured at the largest budget (packets per interrupt there)
        top = df.loc[df["kernel.netdev_budget"].idxmax()]
        irqs = top["counts.irqs"]
        kp = top["counts.polled_packets"] / irqs if irqs > 0 else np.inf
        gamma = kp * (1 - rate * proto_s) if np.isfinite(kp) else np.inf
        df["mode_boundary"] = kp if rate * proto_s < 1 else np.nan
        df["mode"] = [
            model.mode(b, gamma if np.isfinite(gamma) else 1e18, rate, proto_s)
            for b in df["kernel.netdev_budget"]
        ]
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def schemes_by(
    sweeps: Sweeps,
    name: str,
    plan: Plan,
    *,
    sizes: Sequence[int],
    mults: Sequence[int],
) -> pd.DataFrame:
    """Every scheme at each size and application work (max_softirq_restart = 10)."""
    frames = []
    for size in sizes:
        for m in mults:
            base = {**BASE, **traffic(size), **app(m)}
            df = _sweep(
                sweeps,
                f"{name}_{size}_{m}",
                base,
                {"adapt.scheme": ["none", *SCHEMES[1:]]},
                plan.duration_ms,
                plan.warmup_ms,
            )
            df = _derived(df, size).drop(columns=["scheme"], errors="ignore")
            df.insert(0, "scheme", df.pop("adapt.scheme").replace({"none": "napi"}))
            df.insert(1, "size_bytes", size)
            df.insert(2, "mults", m)
            df["srate_pps"] = wire_pps(size)
            frames.append(df)
    return pd.concat(frames, ignore_index=True)


def latency_over_time(sweeps: Sweeps, plan: Plan) -> pd.DataFrame:
    """Fig. 11: the protocol-path latency of the packets arriving in each window of a
    1500-byte full-load run, per scheme. Each window is the same run measured from its start
    (the warm-up does not change the dynamics, only what is counted)."""
    starts = [plan.window_ms * i for i in range(plan.windows)]
    base = {**BASE, **traffic(1500), **app()}
    frames = []
    for scheme in ("qapolling", "aic", "rhip"):
        df = _sweep(
            sweeps,
            f"fig11_{scheme}",
            {**base, **scheme_keys(scheme)},
            {"run.warmup_ms": starts},
            plan.window_ms,
            None,
        )
        df = df.drop(columns=["scheme"], errors="ignore")
        df.insert(0, "scheme", scheme)
        df["t_s"] = (df["run.warmup_ms"] + plan.window_ms / 2) / 1e3
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


# ----- tables ----------------------------------------------------------------------------------


def at(df: pd.DataFrame, scheme: str, size: int, mults: int = MULTS) -> pd.Series:
    row = df[(df["scheme"] == scheme) & (df["size_bytes"] == size) & (df["mults"] == mults)]
    if len(row) != 1:
        raise KeyError(f"no single row for {scheme} at {size} B, {mults} multiplications")
    return row.iloc[0]


def table2_table(fig9: pd.DataFrame) -> pd.DataFrame:
    """Table II: CPU idle (%) per scheme at 512-1500 bytes, the paper's beside irqlab's."""
    rows = []
    for scheme, paper in TABLE2_PAPER.items():
        for size, p in zip(TABLE2_SIZES, paper, strict=True):
            r = at(fig9, scheme, size)
            rows.append(
                {
                    "scheme": scheme,
                    "size_bytes": size,
                    "paper_idle_pct": p,
                    "irqlab_idle_pct": 100 * r["cpu.idle"],
                    "goodput_share": r["goodput_pps"] / r["srate_pps"],
                    "socket_drops_per_s": r["socket_drops_per_s"],
                }
            )
    return pd.DataFrame(rows)


def table2_markdown(t: pd.DataFrame) -> str:
    rows = []
    for scheme in TABLE2_PAPER:
        cells = [LABELS[scheme]]
        for size in TABLE2_SIZES:
            r = t[(t["scheme"] == scheme) & (t["size_bytes"] == size)].iloc[0]
            cells.append(f"{r.paper_idle_pct:.0f} / {r.irqlab_idle_pct:.0f}")
        rows.append(cells)
    table = markdown_table(["scheme", *(f"{s} B" for s in TABLE2_SIZES)], rows)
    return f"{table2_caption()}\n\n{table}\n{CHOICE_NOTE}\n"


def _listed(sizes: Sequence[int]) -> str:
    """``512``, ``512 and 1024``, ``512, 1024 and 1200``."""
    text = [str(s) for s in sizes]
    return text[0] if len(text) == 1 else f"{', '.join(text[:-1])} and {text[-1]}"


def table2_caption() -> str:
    """Table II's caption, naming its calibrated cells (``CALIBRATED_IDLE``) by scheme."""
    sizes: dict[str, list[int]] = {}
    for scheme, size in CALIBRATED_IDLE:
        sizes.setdefault(scheme, []).append(size)
    cells = ", ".join(f"{LABELS[scheme]} at {_listed(s)} B" for scheme, s in sizes.items())
    return (
        f"CPU idle time (%), paper / irqlab; calibration targets: {cells} "
        "(the other cells are evidence)."
    )


def _fig8_summary(fig8: pd.DataFrame, size: int) -> dict[str, float]:
    d = fig8[fig8["size_bytes"] == size].sort_values("kernel.netdev_budget")
    g = d["goodput_pps"].to_numpy()
    b = d["kernel.netdev_budget"].to_numpy()
    top = g[-1]
    # the budgets from the largest down that keep its goodput within 2 %
    flat_from = b[-1]
    for bp, gp in zip(b[::-1], g[::-1], strict=True):
        if abs(gp - top) > 0.02 * max(top, 1.0):
            break
        flat_from = bp
    over = b[d["socket_drops_per_s"].to_numpy() > 0]
    return {
        "peak_bp": float(b[int(np.argmax(g))]),
        "plateau_from_bp": float(flat_from),
        "overflow_min_bp": float(over.min()) if len(over) else np.nan,
        "mode_boundary": float(d["mode_boundary"].iloc[0]),
    }


def paper_table(
    fig8: pd.DataFrame,
    fig9: pd.DataFrame,
    fig10: pd.DataFrame,
    fig11: pd.DataFrame,
    table2: pd.DataFrame,
) -> pd.DataFrame:
    """Every number and claim the text gives, beside irqlab's."""
    rows: list[dict[str, Any]] = []

    def row(what: str, paper: str, irqlab: str, kind: str) -> None:
        rows.append({"what": what, "paper": paper, "irqlab": irqlab, "kind": kind})

    s150 = _fig8_summary(fig8, 150)
    row(
        "Fig. 8, 150 B: goodput unchanged (within 2 %) from B_p = 3000 down to",
        "900",
        f"{s150['plateau_from_bp']:.0f}",
        "evidence",
    )
    row("Fig. 8, 150 B: goodput peaks at B_p", "≈ 70", f"{s150['peak_bp']:.0f}", "evidence")
    row(
        "Fig. 8, 150 B: mode boundary γ/(1 − λT_p)",
        "750–900",
        "mode 1 (λT_p ≥ 1)" if np.isnan(s150["mode_boundary"]) else f"{s150['mode_boundary']:.0f}",
        "evidence",
    )
    lowest_overflow = np.nanmin([_fig8_summary(fig8, s)["overflow_min_bp"] for s in FIG8_SIZES])
    row(
        "Fig. 8: no socket overflow below B_p (all sizes)",
        "500",
        "none overflows" if np.isnan(lowest_overflow) else f"{lowest_overflow:.0f}",
        "evidence",
    )
    for r in table2.itertuples(index=False):
        row(
            f"Table II: idle, {LABELS[r.scheme]}, {r.size_bytes} B",
            f"{r.paper_idle_pct:.0f} %",
            f"{r.irqlab_idle_pct:.0f} %",
            "calibration" if (r.scheme, r.size_bytes) in CALIBRATED_IDLE else "evidence",
        )
    shares = [
        at(fig9, "napi", s)["goodput_pps"] / at(fig9, "napi", s)["srate_pps"] for s in STARVED_SIZES
    ]
    row(
        "NAPI: goodput below 1500 B (share of the sender's rate at "
        f"{', '.join(map(str, STARVED_SIZES))} B)",
        "very small",
        ", ".join(f"{x:.2f}" for x in shares),
        "calibration",
    )
    row(
        "NAPI at 1500 B: the socket overflows",
        "yes",
        "yes" if at(fig9, "napi", 1500)["socket_drops_per_s"] > 0 else "no",
        "calibration",
    )
    napi = fig9[(fig9["scheme"] == "napi") & (fig9["size_bytes"] != 1500)]
    overflowed = (napi["socket_drops_per_s"] > 0).sum()
    row(
        "NAPI: the socket overflows in every other experiment (every size but 1500 B)",
        f"{len(napi)} of {len(napi)}",
        f"{overflowed} of {len(napi)}",
        "evidence",
    )
    small = [s for s in FIG9_SIZES if s < 512]
    ratio = [
        at(fig9, "rhip", s)["goodput_pps"] / at(fig9, "qapolling", s)["goodput_pps"] for s in small
    ]
    row(
        "below 512 B, RHIP behaves like QAPolling (goodput RHIP / QAPolling)",
        "≈ 1",
        ", ".join(f"{x:.2f}" for x in ratio),
        "evidence",
    )
    large = [s for s in FIG9_SIZES if s >= 512]
    ratio = [at(fig9, "aic", s)["goodput_pps"] / at(fig9, "rhip", s)["goodput_pps"] for s in large]
    row(
        "from 512 B, AIC does as well as RHIP (goodput AIC / RHIP)",
        "≈ 1",
        ", ".join(f"{x:.2f}" for x in ratio),
        "evidence",
    )
    aic_over = [s for s in small if at(fig9, "aic", s)["socket_drops_per_s"] > 0]
    row(
        "below 512 B, AIC cannot avoid socket overflow (sizes that overflow)",
        ", ".join(map(str, small)),
        ", ".join(map(str, aic_over)) or "none",
        "evidence",
    )
    best = []
    for m in sorted(fig10["mults"].unique()):
        g = {s: at(fig10, s, 1500, m)["goodput_pps"] for s in SCHEMES[:4]}
        best.append(f"{m}: {LABELS[max(g, key=lambda s: g[s])]}")
    row("Fig. 10: best scheme by application work", "RHIP and AIC", "; ".join(best), "evidence")
    qa_vs_napi = [
        at(fig10, "qapolling", 1500, m)["goodput_pps"] / at(fig10, "napi", 1500, m)["goodput_pps"]
        for m in sorted(fig10["mults"].unique())
    ]
    row(
        "Fig. 10: QAPolling above NAPI (goodput ratio)",
        "> 1",
        ", ".join(f"{x:.2f}" for x in qa_vs_napi),
        "evidence",
    )
    spread = fig11.groupby("scheme")["latency_us.mean"].agg(lambda x: float(np.std(x)))
    row(
        "Fig. 11: ping latency varies more under QAPolling than RHIP (std over time, µs)",
        "QAPolling ≫ RHIP",
        f"QAPolling {spread['qapolling']:.0f}, RHIP {spread['rhip']:.0f}",
        "evidence",
    )
    row(
        "Fig. 11: AIC's latency is the same as RHIP's (std over time, µs)",
        "AIC ≈ RHIP",
        f"AIC {spread['aic']:.0f}, RHIP {spread['rhip']:.0f}",
        "evidence",
    )
    return pd.DataFrame(rows)


def calibration_markdown() -> str:
    """The calibration targets, exactly, as a list: everything else is evidence."""
    items = "".join(f"- {t}\n" for t in CALIBRATION_TARGETS)
    return (
        "The preset's costs (not in the paper) were calibrated on these results, and only "
        f"these; every other number is evidence:\n\n{items}"
    )


def paper_markdown(t: pd.DataFrame) -> str:
    columns = ["what", "paper", "irqlab", "kind"]
    return markdown_table(columns, t[columns].itertuples(index=False)) + f"\n{CHOICE_NOTE}\n"


#: The headline tables: printed by `irqlab reproduce`, first in its report.
TABLES = {"table2": table2_markdown, "paper_vs_irqlab": paper_markdown}


def readme(tables: Mapping[str, pd.DataFrame]) -> str:
    return (
        f"{CHOICE_NOTE}\n\n{calibration_markdown()}\n"
        "- `fig8.png`, `fig8.csv`: goodput against B_p at 64-256 B (NAPI, one pass per "
        "invocation), the mode boundary dashed.\n"
        "- `fig9.png`, `fig9.csv`: the schemes against packet size, with the sender's rate.\n"
        "- `table2.md`, `table2.csv`: CPU idle time at 512-1500 B, paper / irqlab.\n"
        "- `fig10.png`, `fig10.csv`: the schemes against application work at 1500 B.\n"
        "- `fig11.png`, `fig11.csv`: latency of the packets arriving in each window at "
        "1500 B full load.\n"
        "- `paper_vs_irqlab.md`, `.csv`: every number the text gives beside irqlab's.\n"
        "- `fig8_*/`, `fig9_*/`, `fig10_*/`, `fig11_*/`: the sweeps (rerunning resumes them).\n\n"
        "## Table II\n\n"
        + table2_markdown(tables["table2"])
        + "\n## Paper and irqlab\n\n"
        + paper_markdown(tables["paper_vs_irqlab"])
    )


# ----- figures ---------------------------------------------------------------------------------


def plot_fig8(fig8: pd.DataFrame) -> Figure:
    fig = Figure(figsize=(12, 3.8), layout="constrained")
    axes = fig.subplots(1, len(FIG8_SIZES))
    for ax, size in zip(axes, FIG8_SIZES, strict=True):
        d = fig8[fig8["size_bytes"] == size].sort_values("kernel.netdev_budget")
        ax.plot(d["kernel.netdev_budget"], d["goodput_mbps"], marker="o", ms=3, color="black")
        over = d[d["socket_drops_per_s"] > 0]
        ax.plot(
            over["kernel.netdev_budget"], over["goodput_mbps"], "rx", ms=6, label="socket overflow"
        )
        boundary = d["mode_boundary"].iloc[0]
        if np.isfinite(boundary):
            ax.axvline(boundary, ls="--", color="gray", label="γ/(1 − λT_p)")
        else:
            ax.text(0.05, 0.05, "mode 1: λT_p ≥ 1", transform=ax.transAxes, fontsize=8)
        ax.set_xscale("log")
        ax.set_xlabel("B_p (packets per softirq invocation)")
        ax.set_title(f"{size} B", fontsize=10)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("goodput (Mbit/s at IP length)")
    axes[0].legend(fontsize=7)
    fig.suptitle("Fig. 8 reproduced: goodput against B_p (NAPI, MAX_SOFTIRQ_RESTART = 1)")
    return fig


def plot_fig9(fig9: pd.DataFrame) -> Figure:
    fig = Figure(figsize=(11, 4.2), layout="constrained")
    ax, ax2 = fig.subplots(1, 2)
    for scheme in SCHEMES:
        d = fig9[fig9["scheme"] == scheme].sort_values("size_bytes")
        ax.plot(
            d["size_bytes"],
            d["goodput_mbps"],
            marker="o",
            ms=3.5,
            color=COLORS[scheme],
            label=LABELS[scheme],
        )
        ax2.plot(d["size_bytes"], 100 * d["cpu.idle"], marker="o", ms=3.5, color=COLORS[scheme])
    d = fig9[fig9["scheme"] == "napi"].sort_values("size_bytes")
    ax.plot(
        d["size_bytes"],
        d["srate_pps"] * d["size_bytes"] * 8 / 1e6,
        ls=":",
        color="gray",
        label="SRate",
    )
    ax.set_xlabel("packet size (bytes, IP length)")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    ax2.set_xlabel("packet size (bytes)")
    ax2.set_ylabel("CPU idle (%)")
    ax2.grid(alpha=0.3)
    fig.suptitle("Fig. 9 reproduced: goodput and CPU idle against packet size", fontsize=10)
    # the whole note, as a caption the layout makes room for
    fig.supxlabel(textwrap.fill(CHOICE_NOTE, 150), fontsize=7)
    return fig


def _scheme_lines(
    table: pd.DataFrame, schemes: Sequence[str], x: str, y: str, ms: float
) -> tuple[Figure, Any]:
    """A figure with one line of ``y`` against ``x`` per scheme, in the schemes' colours."""
    fig = Figure(figsize=(6.5, 4.2), layout="constrained")
    ax = fig.subplots()
    for scheme in schemes:
        d = table[table["scheme"] == scheme].sort_values(x)
        ax.plot(d[x], d[y], marker="o", ms=ms, color=COLORS[scheme], label=LABELS[scheme])
    return fig, ax


def plot_fig10(fig10: pd.DataFrame) -> Figure:
    fig, ax = _scheme_lines(fig10, SCHEMES[:4], "mults", "goodput_mbps", ms=3.5)
    finish(ax, "floating-point multiplications per packet", "goodput (Mbit/s), 1500 B")
    fig.suptitle("Fig. 10 reproduced: goodput against application work", fontsize=10)
    return fig


def plot_fig11(fig11: pd.DataFrame) -> Figure:
    fig, ax = _scheme_lines(fig11, ("qapolling", "aic", "rhip"), "t_s", "latency_us.mean", ms=3)
    ax.set_yscale("log")
    finish(ax, "time (s)", "mean protocol-path latency (µs)")
    fig.suptitle("Fig. 11 reproduced: latency under full 1500-byte load", fontsize=10)
    return fig
