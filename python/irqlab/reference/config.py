"""The scenario as the reference runs it (:class:`Config`): what :func:`irqlab.resolve` gives,
in integer time, with the parts' own conversions — the traffic's flow popularity
(``traffic/config.rs``), the costs (``platform.rs``, ``dist.rs``), the kernel's jiffies
(``kernel/config.rs``) — and the limits of what this oracle covers."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from irqlab.reference.rng import Stream
from irqlab.reference.units import PS_PER_MS, PS_PER_NS, PS_PER_S, PS_PER_US, from_units, round_ps

__all__ = ["ORACLE_SCHEMES", "Config", "Cost", "zipf_cum"]

#: Schemes this oracle implements (the `coalesce-*` ones are `irq` with NIC coalescing).
ORACLE_SCHEMES = ("ideal", "irq", "coalesce-count", "coalesce-time", "napi")


def zipf_cum(n: int, s: float) -> tuple[float, ...] | None:
    """Cumulative Zipf popularity of ``n`` flows, flow ``k`` of weight ``1/(k+1)^s``, as
    ``zipf_cum`` of ``traffic/config.rs`` sums it; None for uniform popularity (``s = 0`` or
    one flow)."""
    if s <= 0.0 or n <= 1:
        return None
    w = [float(k) ** -s for k in range(1, n + 1)]
    total = 0.0
    for x in w:
        total += x
    acc, cum = 0.0, []
    for x in w:
        acc += x
        cum.append(acc / total)
    cum[-1] = 1.0
    return tuple(cum)


@dataclass(frozen=True)
class Cost:
    """A CPU cost: integer-ps mean and distribution. A zero cost is skipped where the core
    skips it (no job, no draw); where the core always makes a job, it draws all the same."""

    mean_ps: int
    exponential: bool

    def is_zero(self) -> bool:
        return self.mean_ps == 0

    def sample(self, stream: Stream) -> int:
        """``dist::sample``: deterministic costs draw nothing."""
        if not self.exponential:
            return self.mean_ps
        return round_ps(stream.exponential(float(self.mean_ps)))


def _cost(p: Mapping[str, Any], name: str) -> Cost:
    mean = from_units(p[f"platform.{name}_ns"], PS_PER_NS)
    return Cost(mean, p[f"platform.{name}_dist"] == "exponential")


def _to_jiffies(value: float, per_second: float, hz: int) -> int:
    """``ceil(value * hz / per_second)``, the kernel's rounding up to jiffies."""
    return max(0, math.ceil(float(value) * float(hz) / per_second))


@dataclass
class Config:
    """The typed, integer-time scenario (``Scenario::build``, which asks each part for its
    configuration)."""

    scheme: str
    seed: int
    replication: int
    warmup: int
    end: int
    traffic_kind: str
    rate_pps: float
    size_bytes: int
    ring_descriptors: int
    itr: int
    rx_usecs: int
    rx_frames: int
    cause_armed: bool
    cpu_ghz: float
    flows: int
    #: Cumulative Zipf popularity of the flows (``traffic/config.rs``: ``zipf_cum``); None: uniform.
    flow_cum: tuple[float, ...] | None
    irq: Cost
    proto: Cost
    proto_ps_per_byte: float
    poll: Cost
    softirq: Cost
    mask: Cost
    unmask: Cost
    ctx_switch: Cost
    napi_weight: int
    netdev_budget: int
    jiffy_ps: int
    budget_jiffies: int
    max_softirq_restart: int
    max_softirq_jiffies: int

    @classmethod
    def from_resolved(cls, p: Mapping[str, Any]) -> Config:
        """Builds from a complete flat dict as returned by :func:`irqlab.resolve`."""
        warmup = from_units(p["run.warmup_ms"], PS_PER_MS)
        end = warmup + from_units(p["run.duration_ms"], PS_PER_MS)
        hz = int(p["kernel.hz"])
        budget_us = int(p["kernel.netdev_budget_usecs"]) or 2_000_000 // hz
        if p["scheme"] not in ORACLE_SCHEMES:
            raise NotImplementedError(
                f"the reference covers schemes {', '.join(ORACLE_SCHEMES)}, not {p['scheme']}"
            )
        if p["traffic.kind"] not in ("poisson", "cbr") or p["traffic.sizes"] != "fixed":
            raise NotImplementedError("the reference covers Poisson and CBR fixed-size traffic")
        one_core = (
            p["host.cores"] == 1
            and p["nic.queues"] == 1
            and not any(k.startswith(("app.", "traffic.classes.")) for k in p)
            and not p["host.forward"]
        )
        if not one_core:
            raise NotImplementedError(
                "the reference covers one core with one queue vector and one traffic class, "
                "without apps or forwarding"
            )
        adaptive = p["driver.moderation"] != "static" or p["driver.itr_rate"] != 0
        deferred = p["kernel.napi_defer_hard_irqs"] > 0 and p["kernel.gro_flush_timeout_ns"] > 0
        if adaptive or deferred or p["platform.wakeup_ns"] > 0:
            raise NotImplementedError(
                "the reference covers a static ITR (nic.itr_us) without software coalescing "
                "or idle wake-up costs"
            )
        delays = ("irq_delivery_ns", "writeback_ns", "irq_indirect_ns")
        if any(p[f"platform.{k}"] > 0 for k in delays):
            raise NotImplementedError(
                "the reference covers costs as CPU time per event: no delivery or write-back "
                "delay, no indirect interrupt cost"
            )
        cold = p["platform.cold_packets"] > 0 and p["platform.cold_packet_ns"] > 0
        if cold or p["platform.napi_switch_ns"] > 0 or p["platform.ring_contention_ns"] > 0:
            raise NotImplementedError(
                "the reference covers costs as CPU time per event: no cold packets, NAPI "
                "switch or ring contention"
            )
        return cls(
            scheme=p["scheme"],
            seed=int(p["run.seed"]),
            replication=int(p["run.replication"]),
            warmup=warmup,
            end=end,
            traffic_kind=p["traffic.kind"],
            rate_pps=float(p["traffic.rate_pps"]),
            size_bytes=int(p["traffic.size_bytes"]),
            ring_descriptors=int(p["nic.ring_descriptors"]),
            flows=int(p["traffic.flows"]),
            flow_cum=zipf_cum(int(p["traffic.flows"]), float(p["traffic.flow_zipf_s"])),
            itr=from_units(p["nic.itr_us"], PS_PER_US),
            rx_usecs=from_units(p["nic.rx_usecs"], PS_PER_US),
            rx_frames=int(p["nic.rx_frames"]),
            cause_armed=p["nic.cause_mode"] == "armed",
            cpu_ghz=float(p["platform.cpu_ghz"]),
            irq=_cost(p, "irq"),
            proto=_cost(p, "proto"),
            proto_ps_per_byte=float(p["platform.proto_ns_per_byte"]) * 1000.0,
            poll=_cost(p, "poll"),
            softirq=_cost(p, "softirq"),
            mask=_cost(p, "mask"),
            unmask=_cost(p, "unmask"),
            ctx_switch=_cost(p, "ctx_switch"),
            napi_weight=int(p["kernel.napi_weight"]),
            netdev_budget=int(p["kernel.netdev_budget"]),
            jiffy_ps=PS_PER_S // hz,
            budget_jiffies=_to_jiffies(budget_us, 1e6, hz),
            max_softirq_restart=int(p["kernel.max_softirq_restart"]),
            max_softirq_jiffies=_to_jiffies(p["kernel.max_softirq_time_ms"], 1e3, hz),
        )
