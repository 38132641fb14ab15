"""One run (``engine.rs`` and ``host/``): the event loop in the core's order — CPU completion,
then timers, then an arrival — and the host's handlers, one method per function of the core:
the NIC's arrival and interrupt, the ISR, ``net_rx_action``, the driver's poll,
``handle_softirqs`` and ksoftirqd."""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Mapping
from typing import Any

from irqlab.reference.config import Config, Cost
from irqlab.reference.metrics import Metrics, with_topology
from irqlab.reference.parts import (
    CATEGORIES,
    FIRE,
    HARDIRQ,
    INLINE,
    KSOFTIRQD,
    RUNNING,
    SLEEPING,
    SWITCHING,
    THREAD,
    Cbr,
    Cpu,
    IrqLine,
    Kernel,
    Packet,
    Poisson,
    Ring,
    ctx_category,
    ctx_level,
)
from irqlab.reference.rng import (
    ARRIVALS,
    CTX_SWITCH_COST,
    FLOWS,
    IRQ_COST,
    MASK_COST,
    POLL_COST,
    PROTO_COST,
    SOFTIRQ_COST,
    UNMASK_COST,
    streams,
)
from irqlab.reference.units import round_ps

__all__ = [
    "ISR",
    "KSOFTIRQD_SWITCH",
    "NET_RX_ENTRY",
    "NIC_MODERATION",
    "PACKET",
    "POLL_ENTRY",
    "PRIO_ARRIVAL",
    "PRIO_CPU",
    "PRIO_TIMER",
    "UNMASK",
    "Sim",
    "simulate",
]

PRIO_CPU, PRIO_TIMER, PRIO_ARRIVAL = 0, 1, 2

# CPU job tags (``Work`` of host/dispatch.rs).
ISR, NET_RX_ENTRY, POLL_ENTRY, PACKET, UNMASK, KSOFTIRQD_SWITCH = (
    "isr",
    "net_rx_entry",
    "poll_entry",
    "packet",
    "unmask",
    "ksoftirqd_switch",
)
NIC_MODERATION = "nic_moderation"  # the only timer


class Sim:
    """The state of one run; methods mirror ``engine.rs`` and ``host/*.rs`` one
    for one."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.now = 0
        self.streams = streams(cfg.seed, cfg.replication)
        self.source = Cbr(cfg.rate_pps) if cfg.traffic_kind == "cbr" else Poisson(cfg.rate_pps)
        self.next_arrival = self.source.next(self.streams[ARRIVALS])
        self.next_id = 0
        self.ring = Ring(cfg.ring_descriptors)
        self.irq = IrqLine(cfg)
        self.pending_hardirqs = 0
        self.cpu = Cpu()
        self.kernel = Kernel(cfg.jiffy_ps)
        self.timers: list[tuple[int, int, int, str]] = []  # heap of (time, priority, seq, timer)
        self.timer_seq = 0
        self.metrics = Metrics(cfg.warmup, cfg.end)
        self.trace: dict[str, list[Any]] = {
            "arrival_ps": [],
            "accepted": [],
            "done_ps": [],
            "size_bytes": [],
            "flow": [],
            "queue": [],
            "class": [],
        }

    # ----- engine ------------------------------------------------------------------------------

    def run(self) -> tuple[dict[str, Any], dict[str, list[Any]]]:
        end, warmup = self.cfg.end, self.cfg.warmup
        at_warmup: dict[str, int] | None = None  # CPU accounts when the window opens
        while True:
            # The smallest (time, priority): CPU completion, then timers (FIFO), then arrival.
            candidates = []
            t_cpu = self.cpu.next_completion()
            if t_cpu is not None:
                candidates.append((t_cpu, PRIO_CPU, "cpu"))
            if self.timers:
                t_timer, prio, _, _ = self.timers[0]
                candidates.append((t_timer, prio, "timer"))
            candidates.append((self.next_arrival, PRIO_ARRIVAL, "arrival"))
            t, _, which = min(candidates)
            if t >= end:
                break
            assert t >= self.now, "event in the past"
            if at_warmup is None and t >= warmup:
                self.cpu.advance(warmup)
                at_warmup = dict(self.cpu.account)
            self.now = t
            self.cpu.advance(t)
            if which == "cpu":
                self.on_work_done(self.cpu.complete())
            elif which == "timer":
                _, _, _, timer = heapq.heappop(self.timers)
                self.on_timer(timer)
            else:
                a = self.next_arrival
                self.next_arrival = self.source.next(self.streams[ARRIVALS])
                self.on_arrival(a)
        if at_warmup is None:
            self.cpu.advance(warmup)
            at_warmup = dict(self.cpu.account)
        self.now = end
        self.cpu.advance(end)
        measured = {c: self.cpu.account[c] - at_warmup[c] for c in CATEGORIES}
        report = self.metrics.report(self.cfg, measured, self.ring.occupied())
        in_poll = self.ring.occupied() - self.ring.unprocessed()
        return with_topology(report, self.cfg, in_poll), self.trace

    def push_timer(self, t: int, timer: str) -> None:
        self.timer_seq += 1
        heapq.heappush(self.timers, (t, PRIO_TIMER, self.timer_seq, timer))

    # ----- helpers -----------------------------------------------------------------------------

    def measuring(self) -> bool:
        return self.metrics.measuring(self.now)

    def draw(self, cost: Cost, stream: int) -> int:
        return cost.sample(self.streams[stream])

    def draw_flow(self) -> int:
        """The packet's flow (``host/feed.rs``: ``Generator::draw_flow``): uniform, or by its
        cumulative popularity; one flow draws nothing."""
        n = self.cfg.flows
        if n == 1:
            return 0
        u = self.streams[FLOWS].uniform()
        if self.cfg.flow_cum is None:
            return min(int(u * n), n - 1)
        return min(bisect.bisect_right(self.cfg.flow_cum, u), n - 1)

    # ----- NIC ---------------------------------------------------------------------------------

    def on_arrival(self, t: int) -> None:
        pid = self.next_id
        self.next_id += 1
        accepted = not self.ring.is_full()
        self.metrics.on_arrival(self.now, accepted)
        self.trace["arrival_ps"].append(self.now)
        self.trace["accepted"].append(accepted)
        self.trace["done_ps"].append(None)
        self.trace["size_bytes"].append(self.cfg.size_bytes)
        self.trace["flow"].append(self.draw_flow())
        self.trace["queue"].append(0)
        self.trace["class"].append(0)  # one traffic class
        if accepted:
            self.ring.push(Packet(self.now, self.cfg.size_bytes, pid))
        if self.cfg.scheme == "ideal":
            if accepted:
                self.kernel.napi_schedule()
                self.irq_exit()
        else:
            # A drop raises the cause too (receiver overrun).
            self.irq.raise_(self.now)
            self.nic_check()

    def nic_check(self) -> None:
        d = self.irq.decide(self.now)
        if d == FIRE:
            self.issue_irq()
        elif not isinstance(d, str) and self.irq.timer_at != d:  # a time: ask again then
            self.push_timer(d, NIC_MODERATION)
            self.irq.timer_at = d

    def on_timer(self, timer: str) -> None:
        assert timer == NIC_MODERATION
        if self.irq.timer_at == self.now:
            self.irq.timer_at = None
        self.nic_check()

    def issue_irq(self) -> None:
        self.irq.issue(self.now, self.cfg.scheme == "napi")
        if self.measuring():
            self.metrics.irqs += 1
        if self.cpu.is_busy(HARDIRQ):
            self.pending_hardirqs += 1
        else:
            self.start_isr()

    def start_isr(self) -> None:
        d = self.draw(self.cfg.irq, IRQ_COST)  # always a job, even of zero length
        if self.cfg.scheme == "napi" and not self.cfg.mask.is_zero():
            d += self.draw(self.cfg.mask, MASK_COST)
        self.cpu.start(HARDIRQ, d, "irq", ISR)

    # ----- CPU job completions -----------------------------------------------------------------

    def on_work_done(self, work: str) -> None:
        if work == ISR:
            self.isr_done()
        elif work == NET_RX_ENTRY:
            self.net_rx_start()
        elif work == POLL_ENTRY:
            self.driver_poll_step()
        elif work == PACKET:
            self.packet_done()
        elif work == UNMASK:
            self.irq.masked = False
            self.nic_check()
            self.after_napi_poll()
        elif work == KSOFTIRQD_SWITCH:
            self.kernel.ksoftirqd = RUNNING
            self.ksoftirqd_loop()
        else:
            raise AssertionError(work)

    def isr_done(self) -> None:
        self.irq.isr_done()
        self.kernel.napi_schedule()
        if self.pending_hardirqs > 0:
            self.pending_hardirqs -= 1
            self.start_isr()
        self.irq_exit()
        self.nic_check()

    def irq_exit(self) -> None:
        if self.kernel.softirq_pending and self.kernel.ctx is None:
            self.handle_softirqs(INLINE)

    # ----- softirq -----------------------------------------------------------------------------

    def start_softirq_job(self, d: int, work: str) -> None:
        ctx = self.kernel.ctx
        assert ctx is not None, "inside handle_softirqs"
        self.cpu.start(ctx_level(ctx), d, ctx_category(ctx), work)

    def handle_softirqs(self, ctx: str) -> None:
        k = self.kernel
        assert k.ctx is None
        k.ctx = ctx
        k.restart_end = k.jiffies(self.now) + self.cfg.max_softirq_jiffies
        k.restarts_left = self.cfg.max_softirq_restart
        self.softirq_pass()

    def softirq_pass(self) -> None:
        k = self.kernel
        k.softirq_pending = False
        if self.measuring():
            self.metrics.softirq_runs += 1
        k.budget = self.cfg.netdev_budget
        k.time_limit = k.jiffies(self.now) + self.cfg.budget_jiffies
        if self.cfg.softirq.is_zero():
            self.net_rx_start()
        else:
            self.start_softirq_job(self.draw(self.cfg.softirq, SOFTIRQ_COST), NET_RX_ENTRY)

    def net_rx_start(self) -> None:
        """``net_rx_action``'s ``start:`` label: take the poll list."""
        self.kernel.in_net_rx_action = True
        napi = self.kernel.napi
        napi.on_local_list = napi.on_local_list or napi.on_poll_list
        napi.on_poll_list = False
        self.net_rx_loop()

    def net_rx_loop(self) -> None:
        napi = self.kernel.napi
        if napi.on_local_list:
            napi.on_local_list = False
            self.napi_poll()
            return
        if not napi.on_repoll:
            self.kernel.in_net_rx_action = False
            if napi.on_poll_list:
                self.net_rx_start()
            else:
                self.softirq_pass_done()
            return
        self.net_rx_finish()

    def net_rx_finish(self) -> None:
        napi = self.kernel.napi
        if napi.on_local_list or napi.on_repoll:
            napi.on_poll_list = True
        napi.on_local_list = False
        napi.on_repoll = False
        if napi.on_poll_list:
            self.kernel.softirq_pending = True
        else:
            self.kernel.in_net_rx_action = False
        self.softirq_pass_done()

    def napi_poll(self) -> None:
        if self.measuring():
            self.metrics.polls += 1
        self.kernel.napi.work = 0
        if self.cfg.poll.is_zero():
            self.driver_poll_step()
        else:
            self.start_softirq_job(self.draw(self.cfg.poll, POLL_COST), POLL_ENTRY)

    def driver_poll_step(self) -> None:
        if self.kernel.napi.work < self.cfg.napi_weight and self.ring.unprocessed() > 0:
            pkt = self.ring.take()
            d = self.draw(self.cfg.proto, PROTO_COST)  # always a job, even of zero length
            if self.cfg.proto_ps_per_byte > 0.0:
                d += round_ps(float(pkt.size_bytes) * self.cfg.proto_ps_per_byte)
            self.start_softirq_job(d, PACKET)
        else:
            self.driver_poll_done()

    def packet_done(self) -> None:
        pkt = self.ring.release()
        self.metrics.on_delivery(self.now, pkt.arrival)
        if self.measuring():
            self.metrics.polled_packets += 1
        self.trace["done_ps"][pkt.id] = self.now
        self.kernel.napi.work += 1
        self.driver_poll_step()

    def driver_poll_done(self) -> None:
        napi = self.kernel.napi
        self.metrics.on_poll_done(self.now, napi.work)
        if napi.work < self.cfg.napi_weight:
            napi.sched = False
            if self.cfg.scheme == "napi":
                if self.cfg.cause_armed:
                    self.irq.clear()
                if not self.cfg.unmask.is_zero():
                    self.start_softirq_job(self.draw(self.cfg.unmask, UNMASK_COST), UNMASK)
                    return
                self.irq.masked = False
                self.nic_check()
        else:
            napi.on_repoll = True
        self.after_napi_poll()

    def after_napi_poll(self) -> None:
        k = self.kernel
        k.budget -= k.napi.work
        if k.budget <= 0 or k.jiffies(self.now) >= k.time_limit:
            if self.measuring():
                self.metrics.time_squeeze += 1
            self.net_rx_finish()
        else:
            self.net_rx_loop()

    def softirq_pass_done(self) -> None:
        k = self.kernel
        if k.softirq_pending:
            if k.jiffies(self.now) < k.restart_end:
                k.restarts_left -= 1
                if k.restarts_left > 0:
                    self.softirq_pass()
                    return
            self.wakeup_softirqd()
        ctx, k.ctx = k.ctx, None
        if ctx == KSOFTIRQD:
            self.ksoftirqd_loop()

    def wakeup_softirqd(self) -> None:
        k = self.kernel
        if k.ksoftirqd != SLEEPING:
            return
        k.ksoftirqd = SWITCHING
        if self.measuring():
            self.metrics.ksoftirqd_wakeups += 1
        cost = self.cfg.ctx_switch
        d = 0 if cost.is_zero() else self.draw(cost, CTX_SWITCH_COST)  # always a job
        self.cpu.start(THREAD, d, "ksoftirqd", KSOFTIRQD_SWITCH)

    def ksoftirqd_loop(self) -> None:
        k = self.kernel
        assert k.ksoftirqd == RUNNING
        if k.softirq_pending and k.ctx is None:
            self.handle_softirqs(KSOFTIRQD)
        else:
            k.ksoftirqd = SLEEPING


def simulate(
    params: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """Runs one scenario in pure Python: ``(report, trace)``, as :func:`irqlab.run_traced`.

    ``params`` is what :func:`irqlab.run_traced` accepts as a scenario (a flat dict of dotted
    keys or a nested dict); it is validated and completed by :func:`irqlab.resolve`.
    """
    from irqlab.scenario import resolve

    resolved = resolve(params or {})
    report, trace = Sim(Config.from_resolved(resolved)).run()
    # The core echoes every key it ran with, sorted.
    report["scenario"] = dict(sorted(resolved.items()))
    return report, trace
