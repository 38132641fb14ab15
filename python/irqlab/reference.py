"""A pure-Python reference simulator of irqlab's host receive-path model: a test oracle.

This module re-implements, slowly and plainly, exactly the model of the Rust core
(``crates/irqlab-core``): the same random streams, the same integer-picosecond time, the same
event order and the same decisions of the NIC interrupt logic, the CPU priority server, NAPI,
``net_rx_action``, ``handle_softirqs`` and ksoftirqd. It mirrors the core decision by decision
(function names follow ``host.rs``, ``nic.rs``, ``cpu.rs`` and ``kernel.rs``), so that for any
scenario :func:`simulate` gives the same per-packet outcomes, to the picosecond, and the same
report as :func:`irqlab.run_traced`. It exists to be read and to check the fast engine against;
it is far too slow for studies (dozens of times slower than the core).

Only the configuration is taken from the core: :func:`irqlab.resolve` validates a scenario and
fills in the defaults. Everything from there on (unit conversion, the random numbers, the run,
the report) is computed here.

    >>> from irqlab import reference, run_traced
    >>> scenario = {"scheme": "napi", "run.duration_ms": 1.0, "run.warmup_ms": 0.2}
    >>> reference.simulate(scenario) == run_traced(scenario)
    True
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: Schemes this oracle implements (the `coalesce-*` ones are `irq` with NIC coalescing).
ORACLE_SCHEMES = ("ideal", "irq", "coalesce-count", "coalesce-time", "napi")

# ----- units (time.rs) -------------------------------------------------------------------------

PS_PER_NS = 1_000
PS_PER_US = 1_000_000
PS_PER_MS = 1_000_000_000
PS_PER_S = 1_000_000_000_000

MASK64 = (1 << 64) - 1


def round_half_away(x: float) -> int:
    """Rust's ``f64::round`` for a non-negative finite ``x``: nearest integer, ties away from 0.

    Computed exactly (``x - floor(x)`` is exact in binary floating point). Note that
    ``floor(x + 0.5)`` is *not* the same: it rounds 0.49999999999999994 up, and for odd integers
    above 2**52 the sum ``x + 0.5`` itself rounds.
    """
    whole = math.floor(x)
    return whole + 1 if x - whole >= 0.5 else whole


def from_units(value: float, unit_ps: int) -> int:
    """``SimDuration::from_units``: a quantity of ``unit_ps`` picoseconds, rounded to 1 ps."""
    return round_half_away(float(value) * float(unit_ps))


def round_ps(x: float) -> int:
    """``dist::round_ps``: ``(x + 0.5) as i64 as u64``, a truncation, i.e. ``floor(x + 0.5)``
    for the non-negative ``x`` it is given (ties up; the core rounds variates this way, on
    purpose). Rust's ``as`` saturates: NaN gives 0, +inf and huge values ``i64::MAX`` (this
    happens for absurdly low rates, whose mean gap overflows to infinity)."""
    y = x + 0.5
    if math.isnan(y):
        return 0
    if y >= 2.0**63:
        return 2**63 - 1
    return max(int(y), -(2**63)) & MASK64


# ----- random numbers (rng.rs, rand_xoshiro) ---------------------------------------------------


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & MASK64


class SplitMix64:
    """rand_xoshiro's ``SplitMix64``, used to expand a ``u64`` seed."""

    def __init__(self, seed: int) -> None:
        self.x = seed & MASK64

    def next_u64(self) -> int:
        self.x = (self.x + 0x9E3779B97F4A7C15) & MASK64
        z = self.x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)


class Xoshiro256PlusPlus:
    """rand_xoshiro 0.8.1's ``Xoshiro256PlusPlus``."""

    JUMP = (0x180EC6D33CFD0ABA, 0xD5A61266F0C9392C, 0xA9582618E03FC9AA, 0x39ABDC4529B1661C)
    LONG_JUMP = (0x76E15D3EFEFDCBBF, 0xC5004E441C522FB3, 0x77710069854EE241, 0x39109BB02ACBE635)

    def __init__(self, state: list[int]) -> None:
        if not any(state):
            # rand_xoshiro's zero_seed_fallback: the first words of SplitMix64(0).
            sm = SplitMix64(0)
            state = [sm.next_u64() for _ in range(4)]
        self.s = list(state)

    @classmethod
    def seed_from_u64(cls, seed: int) -> Xoshiro256PlusPlus:
        """``from_rng(SplitMix64(seed))``: 32 seed bytes filled by four little-endian words and
        read back as four little-endian words, i.e. the first four SplitMix64 outputs."""
        sm = SplitMix64(seed)
        return cls([sm.next_u64() for _ in range(4)])

    def clone(self) -> Xoshiro256PlusPlus:
        return Xoshiro256PlusPlus(self.s)

    def next_u64(self) -> int:
        s = self.s
        result = (_rotl((s[0] + s[3]) & MASK64, 23) + s[0]) & MASK64
        t = (s[1] << 17) & MASK64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return result

    def _jump_with(self, table: tuple[int, int, int, int]) -> None:
        acc = [0, 0, 0, 0]
        for word in table:
            for b in range(64):
                if word & (1 << b):
                    for i in range(4):
                        acc[i] ^= self.s[i]
                self.next_u64()
        self.s = acc

    def jump(self) -> None:
        """Equivalent to 2**128 calls of ``next_u64``."""
        self._jump_with(self.JUMP)

    def long_jump(self) -> None:
        """Equivalent to 2**192 calls of ``next_u64``."""
        self._jump_with(self.LONG_JUMP)


# The ziggurat of exp(-x) (Marsaglia & Tsang 2000) with 256 strips, as rng.rs builds it.
ZIG_R = 7.69711747013105  # start of the tail
ZIG_V = 0.003949659822581557  # area of each strip


def _ziggurat_tables() -> tuple[list[float], list[float]]:
    """Strip ``i`` spans ``[0, x[i]]`` with ``f[i] = exp(-x[i])``; ``x[0] = V e^R`` (the base
    strip), ``x[1] = R``, ``x[i+1] = -ln(exp(-x[i]) + V / x[i])``, ``x[256] = 0``."""
    x = [0.0] * 257
    x[0] = ZIG_V * math.exp(ZIG_R)
    x[1] = ZIG_R
    for i in range(1, 255):
        x[i + 1] = -math.log(math.exp(-x[i]) + ZIG_V / x[i])
    x[256] = 0.0
    f = [math.exp(-xi) for xi in x]
    return x, f


ZIG_X, ZIG_F = _ziggurat_tables()


class Stream:
    """One component's random stream (``rng::Stream``)."""

    def __init__(self, rng: Xoshiro256PlusPlus) -> None:
        self.rng = rng

    def next_u64(self) -> int:
        return self.rng.next_u64()

    def uniform(self) -> float:
        """A double in [0, 1): the top 53 bits of the next output."""
        return (self.rng.next_u64() >> 11) * (1.0 / (1 << 53))

    def exp1(self) -> float:
        """A standard exponential variate by the ziggurat: the low 8 bits of one draw choose
        the strip, the top 53 the position in it; the wedge and tail cases (about 1.1%) draw
        further uniforms from the same stream."""
        while True:
            bits = self.rng.next_u64()
            i = bits & 0xFF
            x = (bits >> 11) * (1.0 / (1 << 53)) * ZIG_X[i]
            if x < ZIG_X[i + 1]:
                return x
            if i == 0:
                # The base strip's tail beyond R is R + Exp(1) (memorylessness).
                return ZIG_R - math.log(1.0 - self.uniform())
            if ZIG_F[i] + (ZIG_F[i + 1] - ZIG_F[i]) * self.uniform() < math.exp(-x):
                return x

    def exponential(self, mean: float) -> float:
        return self.exp1() * mean


# Stream ids (rng::StreamId): part of the result contract.
ARRIVALS, SIZES, IRQ_COST, PROTO_COST, POLL_COST = 0, 1, 2, 3, 4
SOFTIRQ_COST, MASK_COST, UNMASK_COST, CTX_SWITCH_COST = 5, 6, 7, 8
FLOWS = 11
N_STREAMS = 12


def streams(seed: int, replication: int) -> list[Stream]:
    """All streams of a run: base ``seed_from_u64(seed)``, ``replication`` long jumps on, then
    stream ``k`` starts ``k`` jumps further."""
    base = Xoshiro256PlusPlus.seed_from_u64(seed)
    for _ in range(replication):
        base.long_jump()
    out = []
    for _ in range(N_STREAMS):
        out.append(Stream(base.clone()))
        base.jump()
    return out


# ----- configuration (scenario.rs) -------------------------------------------------------------


def zipf_cum(n: int, s: float) -> tuple[float, ...] | None:
    """Cumulative Zipf popularity of ``n`` flows, flow ``k`` of weight ``1/(k+1)^s``, as
    ``scenario::zipf_cum`` sums it; None for uniform popularity (``s = 0`` or one flow)."""
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
    """The typed, integer-time scenario (``Scenario::build``)."""

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
    #: Cumulative Zipf popularity of the flows (``scenario::zipf_cum``); None: uniform.
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


# ----- traffic (traffic/*.rs) ------------------------------------------------------------------


class Poisson:
    """Exponential gaps rounded to the picosecond; the first arrival one gap after zero."""

    def __init__(self, rate_pps: float) -> None:
        self.mean_gap_ps = float(PS_PER_S) / rate_pps
        self.last = 0

    def next(self, arrivals: Stream) -> int:
        self.last += round_ps(arrivals.exponential(self.mean_gap_ps))
        return self.last


class Cbr:
    """Arrival k at ``round(k / rate)``, from k = 0."""

    def __init__(self, rate_pps: float) -> None:
        self.period_ps = float(PS_PER_S) / rate_pps
        self.k = 0

    def next(self, arrivals: Stream) -> int:
        t = round_ps(float(self.k) * self.period_ps)
        self.k += 1
        return t


# ----- NIC (nic.rs) ----------------------------------------------------------------------------


@dataclass
class Packet:
    arrival: int
    size_bytes: int
    id: int


class Ring:
    """The Rx ring: a packet holds its slot from arrival to the end of its processing."""

    def __init__(self, capacity: int) -> None:
        self.slots: deque[Packet] = deque()
        self.capacity = capacity
        self.head_in_service = False

    def occupied(self) -> int:
        return len(self.slots)

    def unprocessed(self) -> int:
        return len(self.slots) - int(self.head_in_service)

    def is_full(self) -> bool:
        return len(self.slots) == self.capacity

    def push(self, p: Packet) -> None:
        assert not self.is_full()
        self.slots.append(p)

    def take(self) -> Packet:
        assert not self.head_in_service and self.slots
        self.head_in_service = True
        return self.slots[0]

    def release(self) -> Packet:
        assert self.head_in_service
        self.head_in_service = False
        return self.slots.popleft()


IDLE = "idle"
FIRE = "fire"


class IrqLine:
    """The interrupt logic of the queue vector (cause bit, mask, ITR throttle, coalescing)."""

    def __init__(self, cfg: Config) -> None:
        self.itr = cfg.itr
        self.rx_usecs = cfg.rx_usecs
        self.rx_frames = cfg.rx_frames
        self.cause = False
        self.frames = 0
        self.first = 0
        self.masked = False
        self.in_service = False
        self.throttle_until = 0
        self.timer_at: int | None = None

    def raise_(self, now: int) -> None:
        if self.frames == 0:
            self.first = now
        self.frames += 1
        self.cause = True

    def clear(self) -> None:
        self.cause = False
        self.frames = 0

    def decide(self, now: int) -> str | int:
        """``IDLE``, ``FIRE``, or the time (an int) at which to ask again."""
        if not self.cause or self.masked or self.in_service:
            return IDLE
        no_coalescing = self.rx_frames == 0 and self.rx_usecs == 0
        enough_frames = self.rx_frames > 0 and self.frames >= self.rx_frames
        if no_coalescing or enough_frames:
            coalesced = now
        elif self.rx_usecs != 0:
            coalesced = self.first + self.rx_usecs
        else:
            return IDLE
        at = max(coalesced, self.throttle_until)
        return FIRE if at <= now else at

    def issue(self, now: int, auto_mask: bool) -> None:
        self.throttle_until = now + self.itr
        self.in_service = True
        if auto_mask:
            self.masked = True

    def isr_done(self) -> None:
        self.in_service = False
        self.clear()


# ----- CPU (cpu.rs) ----------------------------------------------------------------------------

HARDIRQ, SOFTIRQ_LEVEL, THREAD = 0, 1, 2
CATEGORIES = ("irq", "softirq", "ksoftirqd", "app", "idle")


@dataclass
class Job:
    remaining: int
    category: str
    tag: str


class Cpu:
    """One core as a preemptive-resume priority server with three levels (0 = highest).
    Every picosecond since time zero is accounted to the running job's category, or idle."""

    def __init__(self) -> None:
        self.jobs: list[Job | None] = [None, None, None]
        self.running: int | None = None
        self.since = 0
        self.account = dict.fromkeys(CATEGORIES, 0)

    def advance(self, now: int) -> None:
        dt = now - self.since
        assert dt >= 0, "time went backwards"
        if self.running is None:
            self.account["idle"] += dt
        else:
            job = self.jobs[self.running]
            assert job is not None and job.remaining >= dt, "job overran its completion"
            job.remaining -= dt
            self.account[job.category] += dt
        self.since = now

    def start(self, level: int, duration: int, category: str, tag: str) -> None:
        assert self.jobs[level] is None, f"CPU level {level} is busy"
        self.jobs[level] = Job(duration, category, tag)
        if self.running is None or level < self.running:
            self.running = level

    def next_completion(self) -> int | None:
        if self.running is None:
            return None
        job = self.jobs[self.running]
        assert job is not None
        return self.since + job.remaining

    def complete(self) -> str:
        assert self.running is not None
        job = self.jobs[self.running]
        assert job is not None and job.remaining == 0
        self.jobs[self.running] = None
        self.running = next((i for i, j in enumerate(self.jobs) if j is not None), None)
        return job.tag

    def is_busy(self, level: int) -> bool:
        return self.jobs[level] is not None


# ----- kernel (kernel.rs) ----------------------------------------------------------------------

INLINE, KSOFTIRQD = "inline", "ksoftirqd"  # where handle_softirqs runs
SLEEPING, SWITCHING, RUNNING = "sleeping", "switching", "running"  # the ksoftirqd thread


@dataclass
class Napi:
    sched: bool = False
    on_poll_list: bool = False
    on_local_list: bool = False
    on_repoll: bool = False
    work: int = 0


@dataclass
class Kernel:
    jiffy_ps: int
    napi: Napi = field(default_factory=Napi)
    softirq_pending: bool = False
    ctx: str | None = None
    restart_end: int = 0
    restarts_left: int = 0
    in_net_rx_action: bool = False
    budget: int = 0
    time_limit: int = 0
    ksoftirqd: str = SLEEPING

    def jiffies(self, t: int) -> int:
        return t // self.jiffy_ps

    def napi_schedule(self) -> bool:
        if self.napi.sched:
            return False
        self.napi.sched = True
        self.napi.on_poll_list = True
        if not self.in_net_rx_action:
            self.softirq_pending = True
        return True


def ctx_level(ctx: str) -> int:
    return SOFTIRQ_LEVEL if ctx == INLINE else THREAD


def ctx_category(ctx: str) -> str:
    return "softirq" if ctx == INLINE else "ksoftirqd"


# ----- metrics (metrics.rs) --------------------------------------------------------------------

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
        self.offered = 0
        self.delivered = 0
        self.dropped_nic = 0
        self.dropped_socket = 0
        self.accepted_before = 0
        self.completed_before = 0
        self.irqs = 0
        self.polls = 0
        self.polled_packets = 0
        self.softirq_runs = 0
        self.ksoftirqd_wakeups = 0
        self.time_squeeze = 0
        self.latencies_ps: list[int] = []

    def measuring(self, t: int) -> bool:
        return t >= self.warmup

    def on_arrival(self, t: int, accepted: bool) -> None:
        if self.measuring(t):
            self.offered += 1
            if not accepted:
                self.dropped_nic += 1
        elif accepted:
            self.accepted_before += 1

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
            "irq_per_s": r["irq_per_s"],
            "polls_per_s": r["polls_per_s"],
            "packets_per_poll": r["packets_per_poll"],
            "cycles_per_packet": r["cycles_per_packet"],
            "counts": {
                k: c[k]
                for k in (
                    "irqs",
                    "polls",
                    "polled_packets",
                    "timer_ticks",
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
            "irq_per_s": r["irq_per_s"],
            "polls_per_s": r["polls_per_s"],
            "packets_per_poll": r["packets_per_poll"],
            "counts": {
                k: c[k]
                for k in (
                    "irqs",
                    "polls",
                    "polled_packets",
                    "timer_ticks",
                    "mode_switches",
                    "moderation_writes",
                    "tx_cleaned",
                )
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


# ----- the run (engine.rs and host.rs) ---------------------------------------------------------

PRIO_CPU, PRIO_TIMER, PRIO_ARRIVAL = 0, 1, 2

# CPU job tags (host::Work).
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
    """The state of one run; methods mirror ``engine.rs`` and ``host.rs`` one for one."""

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
        self.trace: dict[str, list] = {
            "arrival_ps": [],
            "accepted": [],
            "done_ps": [],
            "size_bytes": [],
            "flow": [],
            "queue": [],
            "class": [],
        }

    # ----- engine ------------------------------------------------------------------------------

    def run(self) -> tuple[dict[str, Any], dict[str, list]]:
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
        """The packet's flow (``feed.rs``: ``Generator::draw_flow``): uniform, or by its
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
        elif d != IDLE and self.irq.timer_at != d:
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
) -> tuple[dict[str, Any], dict[str, list]]:
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
