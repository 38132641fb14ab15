"""Tamir et al., "net: low latency Ethernet device polling" (netdev cover letter, 2013): socket
busy polling lets ``recv`` poll the device queue instead of waiting for an interrupt, the
softirq, a wake-up and a context switch.

What is re-run, on the study's fitted ``busypoll2013.preset.toml`` (the ``busypoll2013``
platform preset: one 82599 queue vector on core 0, the netperf-like app on core 1, as the
letter recommends; 1-byte TCP_RR, one transaction in flight):
transactions per second with and without busy polling (``socket.busy_read_us = 50``, the
letter's recommended value), for ``rx-usecs`` 0 (ITR off), adaptive (``ixgbe-legacy``, the
3.9 kernel's ITR) and 100 µs (``nic.itr_us = 100``), with deep C-states off and on (an idle
wake-up of ``WAKEUP_NS`` after ``WAKEUP_AFTER_US`` of idleness).

The peer is the host's mirror: both machines ran the same kernel and settings, so a round trip
is the host's own time (request at the NIC to response on the wire) twice, plus ``LINK_US``
each way for the NICs, PHYs and fibre. irqlab runs the host with a fixed remote time
(``REMOTE_US``, longer than the idle-state threshold, shorter than the busy-poll time) and the
table reports ``1 / (2 × host time + 2 × LINK_US)``.

Calibration (see docs/busy-polling.md), declared in ``busypoll2013.targets.toml`` and fitted
by ``irqlab calibrate`` into ``busypoll2013.preset.toml``: the interrupt path's costs on the
letter's "3.9 optimized, C-states off, rx-usecs 0" (57k) and "patched optimized, C-states on,
rx-usecs 100" (87k); the C-state exit (``WAKEUP_NS``) on "3.9 optimized, C-states on,
adaptive" (25k); the ring contention between the busy poller and the interrupt handler
(``platform.ring_contention_ns``) on "busy polling, C-states on, rx-usecs 0" (71k). The other
two rows are predictions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from irqlab.studies.common import SweepPlan, Sweeps, markdown_table, preset, targets

NAME = "busypoll2013"
TITLE = "Busy polling (netdev cover letter, 2013): TCP_RR with and without busy polling"

LINK_US = 2.0
REMOTE_US = 10.0
#: The study's platform is its calibration's (``busypoll2013.preset.toml``, fitted to
#: ``busypoll2013.targets.toml``): one preset for every row.
PRESET = {"platform.preset": "busypoll2013", **preset(__name__)}
#: Deep C-states on: an idle core pays the fitted exit after ``WAKEUP_AFTER_US`` of idleness.
WAKEUP_NS = float(PRESET["platform.wakeup_ns"])
WAKEUP_AFTER_US = float(PRESET["platform.wakeup_after_us"])
BUSY_READ_US = 50
SEED = 2013

BASE = {
    **PRESET,
    "scheme": "napi",
    "traffic.kind": "rr",
    "rr.clients": 1,
    "rr.outstanding": 1,
    "rr.remote_us": REMOTE_US,
    "rr.response_bytes": 64,
    "traffic.size_bytes": 64,
    "host.cores": 2,
    "app": [{"core": 1, "cost_ns": 900, "cost_dist": "deterministic", "flows": [0]}],
}
#: rx-usecs as the letter sets it with ethtool -C.
RX: dict[str, dict[str, Any]] = {
    "0": {"nic.itr_us": 0},
    "adaptive": {"driver.moderation": "ixgbe-legacy"},
    "100": {"nic.itr_us": 100},
}
#: The letter's "optimized" rows: (busy polling, C-states, rx-usecs) → (TCP_RR tps, cpu%).
LETTER = {
    (True, True, "100"): (87_000, 3.13),
    (True, True, "0"): (71_000, 3.12),
    (True, True, "adaptive"): (80_000, 3.13),
    (False, True, "adaptive"): (25_000, 1.0),
    (False, False, "adaptive"): (40_000, 0.82),
    (False, False, "0"): (57_000, 1.17),
}


def _row(point: Mapping[str, Any]) -> tuple[bool, bool, str]:
    """A target's point as a row of the letter's table: (busy polling, C-states, rx-usecs)."""
    busy = float(point.get("socket.busy_read_us", 0)) > 0
    cstates = float(point.get("platform.wakeup_after_us", WAKEUP_AFTER_US)) < 1e6
    rx = "adaptive" if "driver.moderation" in point else f"{float(point['nic.itr_us']):g}"
    return busy, cstates, rx


#: The rows the preset was fitted to (the targets of ``busypoll2013.targets.toml``): the table
#: marks them "calibrated"; the others are evidence.
CALIBRATED = {_row(t["point"]) for t in targets(__name__)["target"]}
#: The letter's machines have 32 hardware threads: cpu% × 0.32 is cores.
THREADS = 32


FULL = SweepPlan(duration_ms=200.0, warmup_ms=10.0, replications=3)
QUICK = SweepPlan(duration_ms=20.0, warmup_ms=2.0, replications=2)


def run(sweeps: Sweeps, plan: SweepPlan) -> dict[str, pd.DataFrame]:
    """Every sweep point (``runs``) and the letter's table beside irqlab's (``headline``)."""
    parts = []
    for rx, settings in RX.items():
        df = sweeps.planned(
            f"rx-{rx}",
            {**BASE, **settings},
            {"socket.busy_read_us": [0, BUSY_READ_US], "platform.wakeup_ns": [0.0, WAKEUP_NS]},
            plan,
        )
        df.insert(0, "rx_usecs", rx)
        parts.append(df)
    runs = pd.concat(parts, ignore_index=True)
    return {"runs": runs, "headline": headline_table(runs)}


def figures(tables: Mapping[str, pd.DataFrame]) -> dict[str, Figure]:
    return {"tps.png": plot(tables["headline"])}


def documents(tables: Mapping[str, pd.DataFrame]) -> dict[str, str]:
    return {}


def mirrored_tps(rtt_mean_us: float) -> float:
    """Transactions per second when the peer is the host's mirror."""
    host_us = rtt_mean_us - REMOTE_US
    return 1e6 / (2 * host_us + 2 * LINK_US)


def headline_table(runs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for _, d in runs.iterrows():
        busy = bool(d["socket.busy_read_us"] > 0)
        cstates = bool(d["platform.wakeup_ns"] > 0)
        key = (busy, cstates, d["rx_usecs"])
        letter = LETTER.get(key)
        rows.append(
            {
                "busy_poll": busy,
                "c_states": cstates,
                "rx_usecs": d["rx_usecs"],
                "letter_tps": letter[0] if letter else None,
                "irqlab_tps": mirrored_tps(d["rtt_us.mean"]),
                "letter_cores": letter[1] * THREADS / 100 if letter else None,
                "irqlab_cores": d["cpu.busy"] * 2,
                "irq_per_s": d["irq_per_s"],
                "calibrated": key in CALIBRATED,
            }
        )
    order = {"100": 0, "0": 1, "adaptive": 2}
    df = pd.DataFrame(rows)
    df["_o"] = df["rx_usecs"].map(order)
    df = df.sort_values(["busy_poll", "c_states", "_o"], ascending=[False, False, True])
    return df.drop(columns="_o").reset_index(drop=True)


def headline_markdown(table: pd.DataFrame) -> str:
    columns = ["busy poll", "C-states", "rx-usecs", "letter tps", "irqlab tps", "letter cores"]
    rows = []
    for r in table.itertuples(index=False):
        letter = f"{r.letter_tps / 1e3:.0f}k" if pd.notna(r.letter_tps) else "–"
        cores = f"{r.letter_cores:.2f}" if pd.notna(r.letter_cores) else "–"
        rows.append(
            f"{'on' if r.busy_poll else 'off'} | {'on' if r.c_states else 'off'} "
            f"| {r.rx_usecs} | {letter} | {r.irqlab_tps / 1e3:.1f}k | {cores} "
            f"| {r.irqlab_cores:.2f} | {r.irq_per_s:,.0f} "
            f"| {'calibrated' if r.calibrated else ''}"
        )
    return markdown_table([*columns, "irqlab cores", "IRQs/s", ""], rows)


#: The headline table: printed by `irqlab reproduce`, first in its report.
TABLES = {"headline": headline_markdown}


def plot(table: pd.DataFrame) -> Figure:
    fig = Figure(figsize=(9, 4.2), layout="constrained")
    ax = fig.subplots()
    labels, ours, theirs = [], [], []
    for r in table.itertuples(index=False):
        labels.append(
            f"{'busy' if r.busy_poll else 'IRQ'}\nC{'on' if r.c_states else 'off'}\n{r.rx_usecs}"
        )
        ours.append(r.irqlab_tps / 1e3)
        theirs.append(r.letter_tps / 1e3 if pd.notna(r.letter_tps) else float("nan"))
    x = range(len(labels))
    ax.bar([i - 0.2 for i in x], theirs, width=0.4, label="cover letter (TCP_RR)", color="gray")
    ax.bar([i + 0.2 for i in x], ours, width=0.4, label="irqlab", color="tab:blue")
    ax.set_xticks(list(x), labels, fontsize=7)
    ax.set_ylabel("transactions/s (k)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    fig.suptitle("Busy polling: round trips per second, letter vs irqlab", fontsize=10)
    return fig


def readme(tables: Mapping[str, pd.DataFrame]) -> str:
    return (
        "- `tps.png`: transactions per second, the letter's beside irqlab's.\n"
        "- `headline.csv`, `runs.csv`: the table below and every sweep point.\n"
        "- `rx-0/`, `rx-adaptive/`, `rx-100/`: the sweeps (rerunning resumes them).\n\n"
        f"Peer = the host's mirror, {LINK_US:g} µs of link each way; C-states on = "
        f"{WAKEUP_NS / 1e3:g} µs wake-up after {WAKEUP_AFTER_US:g} µs idle.\n\n"
        + headline_markdown(tables["headline"])
    )
