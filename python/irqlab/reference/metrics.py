"""The report (``metrics.rs``): counters in the measured window, latencies into the same HDR
buckets as the core's histogram, and the report field for field as ``Metrics::report`` gives
it, with the per-core, per-queue and per-class breakdowns of the one-core host this oracle
models."""

from __future__ import annotations

import math
from typing import Any

from irqlab.reference.config import Config
from irqlab.reference.units import PS_PER_NS, PS_PER_S, PS_PER_US

__all__ = [
    "HIST_MAX_NS",
    "Metrics",
    "hdr_highest_equivalent",
    "hdr_value_at_quantile",
    "with_topology",
]

HIST_MAX_NS = 3_600_000_000_000


def hdr_highest_equivalent(v: int) -> int:
    """The top of ``v``'s bucket in an HDR histogram of bounds (1, HIST_MAX_NS) and 3
    significant digits (2048 sub-buckets, unit 1)."""
    shift = max(0, (v | 2047).bit_length() - 11)
    return ((v >> shift) << shift) + (1 << shift) - 1


def hdr_value_at_quantile(sorted_ns: list[int], q: float) -> int:
    """hdrhistogram 7.6's ``value_at_quantile`` (``q`` > 0): the bucket where the cumulative
    count first reaches ``max(1, ceil(q * n))``, reported as its highest equivalent value."""
    rank = max(1, math.ceil(q * float(len(sorted_ns))))
    return hdr_highest_equivalent(sorted_ns[rank - 1])


class Metrics:
    """Counters in the window ``[warmup, end)``."""

    def __init__(self, warmup: int, end: int) -> None:
        self.warmup = warmup
        self.end = end
        # packets in the window; and accepted and completed before it (the host's at warm-up)
        self.offered = self.delivered = self.dropped_nic = self.dropped_socket = 0
        self.accepted_before = self.completed_before = 0
        # events in the window
        self.irqs = self.polls = self.polled_packets = 0
        self.softirq_runs = self.ksoftirqd_wakeups = self.time_squeeze = 0
        self.latencies_ps: list[int] = []
        # polls that returned in the window, by bpftrace's log2 bucket of their packets
        self.poll_buckets: dict[int, int] = {}

    def measuring(self, t: int) -> bool:
        return t >= self.warmup

    def on_arrival(self, t: int, accepted: bool) -> None:
        if self.measuring(t):
            self.offered += 1
            if not accepted:
                self.dropped_nic += 1
        elif accepted:
            self.accepted_before += 1

    def on_poll_done(self, now: int, work: int) -> None:
        """The driver's poll function returned at ``now`` having processed ``work`` packets:
        bucket 0 holds 0, bucket k ≥ 1 holds [2^(k-1), 2^k - 1] (``work``'s bit length)."""
        if self.measuring(now):
            k = work.bit_length()
            self.poll_buckets[k] = self.poll_buckets.get(k, 0) + 1

    def poll_hist(self) -> dict[str, int]:
        """The histogram as the core reports it: each bucket's smallest count, as text."""
        return {str(0 if k == 0 else 1 << (k - 1)): n for k, n in sorted(self.poll_buckets.items())}

    def on_delivery(self, now: int, arrival: int) -> None:
        if not self.measuring(now):
            self.completed_before += 1
            return
        self.delivered += 1
        self.latencies_ps.append(now - arrival)

    def report(self, cfg: Config, cpu_ps: dict[str, int], in_flight: int) -> dict[str, Any]:
        """The report, field for field as the core's ``Metrics::report``."""
        measured = self.end - self.warmup
        # Every `as f64` of the core is an explicit float() here (int / int in Python would
        # round the exact quotient, not the quotient of the two rounded floats).
        secs = float(measured) / float(PS_PER_S)

        def share(c: str) -> float:
            return float(cpu_ps[c]) / float(measured)

        idle = share("idle")
        busy = 1.0 - idle
        throughput_pps = float(self.delivered) / secs
        n = self.delivered
        lat = self.latencies_ps
        # The histogram records whole nanoseconds, clamped to its top (a latency above an hour
        # would sit in a slightly different bucket in the core; irrelevant at these durations).
        ns = sorted(min(x // PS_PER_NS, HIST_MAX_NS) for x in lat)

        def q(x: float) -> float | None:
            # bounded by the exact extremes, as the core's percentiles are
            if n == 0:
                return None
            lo, hi = float(min(lat)) / float(PS_PER_US), float(max(lat)) / float(PS_PER_US)
            return max(lo, min(float(hdr_value_at_quantile(ns, x)) / 1e3, hi))

        mean_us = float(sum(lat)) / float(n) / float(PS_PER_US) if n > 0 else None
        cycles = busy * cfg.cpu_ghz * 1e9 / throughput_pps if n > 0 else None
        return {
            "scheme": cfg.scheme,
            "seed": cfg.seed,
            "replication": cfg.replication,
            "measured_s": secs,
            "packets": {
                "offered": self.offered,
                "delivered": self.delivered,
                "dropped_nic": self.dropped_nic,
                "dropped_socket": self.dropped_socket,
                "in_flight": in_flight,
                "in_flight_at_warmup": self.accepted_before - self.completed_before,
            },
            "offered_pps": float(self.offered) / secs,
            # every frame has the one size: the core's exact size counts reduce to it
            "offered_gbps": float(self.offered * cfg.size_bytes) * 8.0 / secs / 1e9,
            "frame_bytes": {
                "mean": float(cfg.size_bytes) if self.offered else None,
                **dict.fromkeys(
                    ("min", "p50", "p90", "p99", "max"), cfg.size_bytes if self.offered else None
                ),
            },
            "throughput_pps": throughput_pps,
            "loss_ratio": (
                float(self.dropped_nic + self.dropped_socket) / float(self.offered)
                if self.offered
                else 0.0
            ),
            "latency_us": {
                "mean": mean_us,
                "p50": q(0.5),
                "p90": q(0.9),
                "p99": q(0.99),
                "p999": q(0.999),
                "min": float(min(lat)) / float(PS_PER_US) if n > 0 else None,
                "max": float(max(lat)) / float(PS_PER_US) if n > 0 else None,
            },
            "cpu": {
                "busy": busy,
                "irq": share("irq"),
                "softirq": share("softirq"),
                "ksoftirqd": share("ksoftirqd"),
                "app": share("app"),
                "idle": idle,
                "busy_poll": 0.0,  # no app busy-polls here
            },
            "cpu_ps": {**cpu_ps, "busy_poll": 0, "measured": measured},
            "irq_per_s": float(self.irqs) / secs,
            "polls_per_s": float(self.polls) / secs,
            "packets_per_poll": (
                float(self.polled_packets) / float(self.polls) if self.polls else None
            ),
            "packets_per_poll_hist": self.poll_hist(),
            "cycles_per_packet": cycles,
            "load_latency_product": (
                cycles * mean_us if cycles is not None and mean_us is not None else None
            ),
            "counts": {
                "irqs": self.irqs,
                "polls": self.polls,
                "polled_packets": self.polled_packets,
                "softirq_runs": self.softirq_runs,
                "ksoftirqd_wakeups": self.ksoftirqd_wakeups,
                "time_squeeze": self.time_squeeze,
                # the polling timer and the hybrid's switch are not part of this oracle
                "timer_ticks": 0,
                "mode_switches": 0,
                "moderation_writes": 0,
                # the only thread is ksoftirqd: a switch per wake-up
                "context_switches": self.ksoftirqd_wakeups,
                "tx_cleaned": 0,
            },
        }


def with_topology(report: dict[str, Any], cfg: Config, in_poll: int) -> dict[str, Any]:
    """Adds what the core reports about its topology, for the one-core, one-vector,
    one-class host without apps or forwarding that this oracle models: every breakdown has
    one entry equal to the whole."""
    r = report
    p = r["packets"]
    p.update(
        dropped_tx=0,
        in_poll=in_poll,
        consumed=0,
        transmitted=0,
        to_stack=p["delivered"],
        in_socket=0,
        in_app=0,
        in_tx_ring=0,
        in_host_at_warmup=p["in_flight_at_warmup"],
    )
    none = dict.fromkeys(("mean", "p50", "p90", "p99", "p999", "min", "max"))
    path = {
        "offered": p["offered"],
        "delivered": p["delivered"],
        "dropped_nic": p["dropped_nic"],
        "dropped_socket": 0,
        "dropped_tx": 0,
        "in_flight": p["in_flight"],
        "offered_pps": r["offered_pps"],
        "throughput_pps": r["throughput_pps"],
        "loss_ratio": r["loss_ratio"],
        "latency_us": dict(r["latency_us"]),
    }
    c = r["counts"]
    polling = ("irqs", "polls", "polled_packets", "timer_ticks")  # a core's and a queue's
    rates = {k: r[k] for k in ("irq_per_s", "polls_per_s", "packets_per_poll")}
    r["app_latency_us"] = dict(none)
    r["goodput_bps"] = 0.0
    r["per_core"] = [
        {
            "core": 0,
            "vectors": [0],
            **path,
            "app_latency_us": dict(none),
            "goodput_bps": 0.0,
            "cpu": dict(r["cpu"]),
            "cpu_ps": dict(r["cpu_ps"]),
            **rates,
            "cycles_per_packet": r["cycles_per_packet"],
            "counts": {
                k: c[k]
                for k in (
                    *polling,
                    "softirq_runs",
                    "ksoftirqd_wakeups",
                    "time_squeeze",
                    "context_switches",
                )
            },
        }
    ]
    r["per_queue"] = [
        {
            "queue": 0,
            "core": 0,
            "flows": cfg.flows,
            **path,
            "in_tx_ring": 0,
            **rates,
            "packets_per_poll_hist": dict(r["packets_per_poll_hist"]),
            "counts": {
                k: c[k] for k in (*polling, "mode_switches", "moderation_writes", "tx_cleaned")
            },
        }
    ]
    r["per_class"] = [
        {
            "class": "default",
            "share": 1.0,
            **path,
            "consumed": 0,
            "goodput_bps": 0.0,
            "app_latency_us": dict(none),
        }
    ]
    r["per_app"] = []
    return r
