"""The host's parts, one class per part of the core: the traffic sources
(``traffic/poisson.rs``, ``traffic/cbr.rs``), the NIC's Rx ring and interrupt logic
(``nic/mod.rs``), the CPU as a preemptive-resume priority server (``cpu.rs``) and the kernel's
NAPI and softirq state (``kernel.rs``). The run that drives them is :mod:`irqlab.reference.sim`."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from irqlab.reference.config import Config
from irqlab.reference.rng import Stream
from irqlab.reference.units import PS_PER_S, round_ps

__all__ = [
    "CATEGORIES",
    "FIRE",
    "HARDIRQ",
    "IDLE",
    "INLINE",
    "KSOFTIRQD",
    "RUNNING",
    "SLEEPING",
    "SOFTIRQ_LEVEL",
    "SWITCHING",
    "THREAD",
    "Cbr",
    "Cpu",
    "IrqLine",
    "Job",
    "Kernel",
    "Napi",
    "Packet",
    "Poisson",
    "Ring",
    "ctx_category",
    "ctx_level",
]

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


# ----- NIC (nic/mod.rs) ------------------------------------------------------------------------


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
