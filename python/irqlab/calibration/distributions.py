"""A lab's distributions against the fitted model's: packets per ``napi_poll`` and the app's
wake-up delay, at the lab's traced points.

The fit (:mod:`irqlab.calibration.lab`) compares means and shares; a traced lab point also
holds the whole histogram of packets per poll (``napi:napi_poll``'s ``work`` on the receiving
veth, bpftrace's log2 buckets) and the app's wake-up delay (``sched_wakeup`` → ``sched_switch``).
:func:`predict_distributions` runs the fitted model at each such point — at the rate the
traced sender achieved, since the probes slow it at overload — over the calibration's seeds,
and :func:`compare_distributions` sets each predicted distribution beside the measured one:
bucket by bucket, their total variation distance (½ Σ |p − q|: 0 the same, 1 disjoint), and
the delay's mean, median and p99. No goal is set for these: they are evidence, reported as
measured. A traced point is a different load than an untraced one (the probes cost the
kernel time the model does not charge), so a point where tracing held the sender below
:data:`THROTTLED` of its request is flagged, not hidden.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from irqlab.calibration.lab import Lab, lab_scenario

#: A traced point whose sender achieved less than this share of the rate asked is flagged:
#: the probes, not only the receive path, limited it.
THROTTLED = 0.95


@dataclass
class TracedPoint:
    """One (threaded, rate) of the lab with tracepoint distributions, over its repeats."""

    threaded: bool
    rate_pps: float
    sent_pps: float
    #: packets per poll: bucket lower bound → polls, summed over the repeats
    hist: dict[int, int] = field(default_factory=dict)
    #: the app's wake-up delay of each repeat: mean, p50, p99 (µs)
    wakeup: list[dict[str, float]] = field(default_factory=list)

    @property
    def throttled(self) -> bool:
        return self.sent_pps < THROTTLED * self.rate_pps


def traced_points(lab: Lab) -> list[TracedPoint]:
    """The lab's points that carry a histogram of packets per poll or a wake-up delay, grouped
    by (threaded, rate) over the repeats; the sender's rate is the repeats' mean."""
    groups: dict[tuple[bool, float], tuple[TracedPoint, list[float]]] = {}
    for p in lab.points:
        # the point's traced twin (irqlab lab --trace), else the point itself if it was traced
        m = p.traced["measured"] if p.traced is not None else p.measured
        hist = m.get("packets_per_poll_hist")
        wake = m.get("app_wakeup_us")
        if not isinstance(hist, Mapping) and not isinstance(wake, Mapping):
            continue
        key = (p.threaded, p.rate_pps)
        if key not in groups:
            groups[key] = (TracedPoint(p.threaded, p.rate_pps, 0.0), [])
        point, sent = groups[key]
        sent_pps = m.get("sent_pps")
        sent.append(float(sent_pps) if isinstance(sent_pps, int | float) else p.rate_pps)
        if isinstance(hist, Mapping):
            for lo, n in hist.items():
                if str(lo).isdigit() and isinstance(n, int) and not isinstance(n, bool):
                    point.hist[int(lo)] = point.hist.get(int(lo), 0) + n
        if isinstance(wake, Mapping):
            stats = {k: wake.get(k) for k in ("mean", "p50", "p99")}
            if all(isinstance(v, int | float) and math.isfinite(v) for v in stats.values()):
                point.wakeup.append({k: float(v) for k, v in stats.items() if v is not None})
    out = []
    for point, sent in groups.values():
        point.sent_pps = sum(sent) / len(sent)
        out.append(point)
    return sorted(out, key=lambda t: (t.threaded, t.rate_pps))


def fractions(hist: Mapping[int, int]) -> dict[int, float]:
    """Each bucket's share of the polls."""
    total = sum(hist.values())
    return {lo: n / total for lo, n in sorted(hist.items())} if total else {}


def total_variation(p: Mapping[int, float], q: Mapping[int, float]) -> float:
    """½ Σ |p − q| over the buckets of either: 0 for the same distribution, 1 for disjoint."""
    return 0.5 * sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in set(p) | set(q))


def point_scenario(lab: Lab, point: TracedPoint, fitted: Mapping[str, Any]) -> dict[str, Any]:
    """The lab's host with the fitted costs at a traced point: its sender's achieved rate."""
    keys = {**lab_scenario(lab), **fitted, "traffic.rate_pps": round(point.sent_pps, 3)}
    keys["kernel.threaded_napi"] = point.threaded
    if point.threaded:
        keys["kernel.napi_thread_core"] = lab.napi_thread_core
    return keys


Runner = Callable[[dict[str, Any], int], Mapping[str, Any]]


def _run(scenario: dict[str, Any], seed: int) -> Mapping[str, Any]:
    import irqlab

    return irqlab.run(scenario, seed=seed)


def predict_distributions(
    lab: Lab,
    fitted: Mapping[str, Any],
    seeds: Sequence[int],
    run: Runner = _run,
) -> list[dict[str, Any]]:
    """Per traced point: the measured and predicted packets-per-poll buckets (shares), their
    total variation distance, and the wake-up delay measured (each repeat's mean, p50, p99;
    their mean) and predicted (over the seeds)."""
    rows = []
    for point in traced_points(lab):
        predicted: dict[int, int] = {}
        delays: list[dict[str, float]] = []
        for seed in seeds:
            report = run(point_scenario(lab, point, fitted), seed)
            for lo, n in (report.get("packets_per_poll_hist") or {}).items():
                predicted[int(lo)] = predicted.get(int(lo), 0) + int(n)
            apps = report.get("per_app") or []
            delay = apps[0].get("wakeup_delay_us") if apps else None
            if isinstance(delay, Mapping) and delay.get("mean") is not None:
                delays.append({k: float(delay[k]) for k in ("mean", "p50", "p99")})
        measured_f, predicted_f = fractions(point.hist), fractions(predicted)
        row: dict[str, Any] = {
            "threaded": point.threaded,
            "rate_pps": point.rate_pps,
            "sent_pps": point.sent_pps,
            "throttled": point.throttled,
            "packets_per_poll": {
                "measured": {str(k): v for k, v in measured_f.items()},
                "predicted": {str(k): v for k, v in predicted_f.items()},
                "polls_measured": sum(point.hist.values()),
                "polls_predicted": sum(predicted.values()),
                "total_variation": total_variation(measured_f, predicted_f)
                if measured_f and predicted_f
                else None,
            },
            "wakeup_us": {
                "measured": _mean_stats(point.wakeup),
                "predicted": _mean_stats(delays),
            },
        }
        rows.append(row)
    return rows


def _mean_stats(rows: Sequence[Mapping[str, float]]) -> dict[str, float] | None:
    if not rows:
        return None
    return {k: sum(r[k] for r in rows) / len(rows) for k in ("mean", "p50", "p99")}


def distributions_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """One line per traced point: how far the predicted packets-per-poll distribution is from
    the measured one, and the wake-up delay both ways."""
    if not rows:
        return ""
    lines = ["distributions at the lab's traced points (evidence, no goal):"]
    for r in rows:
        mode = "threaded" if r["threaded"] else "softirq"
        ppp = r["packets_per_poll"]
        tv = ppp["total_variation"]
        text = f"  {mode} at {r['rate_pps']:g}/s"
        if r["throttled"]:
            text += f" (tracing held the sender to {r['sent_pps']:.0f}/s)"
        text += ": packets per poll " + ("n/a" if tv is None else f"distance {tv:.2f}")
        w = r["wakeup_us"]
        if w["measured"] and w["predicted"]:
            text += (
                f"; wake-up µs mean/p99 measured {w['measured']['mean']:.1f}/"
                f"{w['measured']['p99']:.1f}, predicted {w['predicted']['mean']:.1f}/"
                f"{w['predicted']['p99']:.1f}"
            )
        lines.append(text)
    return "\n".join(lines) + "\n"


def distributions_figure(rows: Sequence[Mapping[str, Any]], title: str) -> Any:
    """One panel per traced point: each bucket's share of the polls, measured (bars) and
    predicted (outlined bars), on a log scale of shares; "held back": tracing held the sender
    below :data:`THROTTLED` of its rate."""
    from matplotlib.figure import Figure

    cols = min(4, len(rows)) or 1
    n_rows = max(1, math.ceil(len(rows) / cols))
    fig = Figure(figsize=(3.6 * cols, 3.0 * n_rows), layout="constrained")
    axes = fig.subplots(n_rows, cols, squeeze=False)
    for ax, r in zip(axes.flat, rows, strict=False):
        ppp = r["packets_per_poll"]
        buckets = sorted({int(k) for k in ppp["measured"]} | {int(k) for k in ppp["predicted"]})
        x = list(range(len(buckets)))
        color = "tab:orange" if r["threaded"] else "tab:blue"
        m = [ppp["measured"].get(str(b), 0.0) for b in buckets]
        p = [ppp["predicted"].get(str(b), 0.0) for b in buckets]
        ax.bar([i - 0.2 for i in x], m, width=0.4, color=color, label="measured")
        ax.bar([i + 0.2 for i in x], p, width=0.4, fill=False, edgecolor=color, hatch="//",
               label="predicted")  # fmt: skip
        ax.set_xticks(x, [_bucket(b) for b in buckets], fontsize=7)
        ax.set_yscale("log")
        ax.set_ylim(1e-5, 1.5)
        mode = "threaded" if r["threaded"] else "softirq"
        tv = ppp["total_variation"]
        sub = "" if tv is None else f", distance {tv:.2f}"
        flag = " (held back)" if r["throttled"] else ""
        ax.set_title(f"{mode}, {r['sent_pps'] / 1000:.0f}k/s{flag}{sub}", fontsize=9)
        ax.set_xlabel("packets per poll")
        ax.set_ylabel("share of polls")
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(rows) :]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=11)
    return fig


def _bucket(lo: int) -> str:
    """A log2 bucket's label: 0, 1, then 2–3, 4–7, …"""
    return str(lo) if lo < 2 else f"{lo}–{2 * lo - 1}"


def write_distributions(
    out: Any, lab: Lab, fitted: Mapping[str, Any], seeds: Sequence[int]
) -> tuple[str, list[str]]:
    """At the lab's traced points (none: nothing written), the fitted model's distributions
    beside the measured ones: lab-distributions.json and lab_packets_per_poll.png; the
    summary text and the files written."""
    import json
    from pathlib import Path

    from irqlab.calibration.lab import save_figure
    from irqlab.files import write_atomic

    if not traced_points(lab):
        return "", []
    rows = predict_distributions(lab, fitted, seeds)
    folder = Path(out)
    data = {"kind": "lab-distributions", "lab": str(lab.path), "seeds": list(seeds),
            "throttled_below": THROTTLED, "rows": rows}  # fmt: skip
    write_atomic(folder / "lab-distributions.json", json.dumps(data, indent=1) + "\n", "--out")
    title = f"the lab on {lab.kernel or 'this kernel'}: packets per poll, measured and predicted"
    save_figure(distributions_figure(rows, title), folder / "lab_packets_per_poll.png")
    return distributions_text(rows), ["lab-distributions.json", "lab_packets_per_poll.png"]
