"""A lab sweep's plan (:class:`Plan`): its points, checked before anything is set up, and how
long it will take.

Every bad option is one line naming the option, the value and the allowed range; nothing is
created on the host until the whole plan is valid (build, validate, then run).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from irqlab.errors import ConfigError

#: The rates a point may ask of the sender, in messages per second.
MIN_RATE_PPS, MAX_RATE_PPS = 1.0, 5e6
#: A UDP payload's bounds, in bytes (sockperf's minimum message is 14 bytes; the largest
#: datagram that fits the veth's MTU of 1500 without fragments is 1472).
MIN_SIZE, MAX_SIZE = 14, 1472
MIN_SECONDS, MAX_SECONDS = 0.5, 60.0
MAX_REPEATS = 10
MAX_POINTS = 200
#: The default rates: light load to overload on a 2-CPU VM (NET_RX saturates near 200k msg/s
#: without threaded NAPI, near 290k with it).
DEFAULT_RATES = (20_000, 50_000, 100_000, 150_000, 200_000, 250_000, 300_000, 400_000)
#: Before a point's window the sender starts (no warm-up messages) and settles; its run, whole
#: seconds as sockperf counts them, ends after the window.
SETTLE_S = 0.25
#: Per point, besides the sender's run: its start and exit, the counters read twice, the bundle
#: written (measured on a loaded 2-CPU VM: a 16-point default sweep took 101 s).
POINT_OVERHEAD_S = 2.0
#: Once per sweep: namespaces, veth, the receiver, the knobs, and their removal.
SETUP_S = 4.0
RCVBUF_RANGE = (1024, 1 << 30)
BUDGET_RANGE = (1, 1 << 20)
BUSY_READ_RANGE = (0, 1_000_000)


@dataclass(frozen=True)
class Point:
    """One measurement: a rate, threaded NAPI on or off, and which repeat."""

    threaded: bool
    rate_pps: float
    repeat: int

    @property
    def name(self) -> str:
        return f"{'on' if self.threaded else 'off'}-r{self.rate_pps:.0f}-{self.repeat}"


@dataclass(frozen=True)
class Plan:
    """What a sweep does: the points and the host's knobs for all of them."""

    rates_pps: tuple[float, ...] = tuple(float(r) for r in DEFAULT_RATES)
    threaded: tuple[bool, ...] = (False, True)
    repeats: int = 1
    seconds: float = 3.0
    size_bytes: int = 64
    sender_core: int = 0
    app_core: int = 1
    napi_core: int | None = None
    netdev_budget: int = 300
    rcvbuf_bytes: int = 212_992
    busy_read_us: int = 0
    max_minutes: float = 5.0
    trace: bool = False
    cpus: tuple[int, ...] = field(default_factory=lambda: tuple(sorted(os.sched_getaffinity(0))))

    @property
    def napi_thread_core(self) -> int:
        return self.app_core if self.napi_core is None else self.napi_core

    def points(self) -> list[Point]:
        """Threaded NAPI off first, then on (the thread, once made, stays until the device
        goes); within each, the repeats of the rates in the order given."""
        return [
            Point(threaded, rate, repeat)
            for threaded in self.threaded
            for repeat in range(self.repeats)
            for rate in self.rates_pps
        ]

    def estimate_s(self) -> float:
        """The sweep's wall time, setup and removal included."""
        # with --trace each point runs twice: untraced, then traced
        points = len(self.points()) * (2 if self.trace else 1)
        return SETUP_S + points * (sender_run_s(self.seconds) + POINT_OVERHEAD_S)


#: The fraction of a send per tick a nudged rate advances by: the golden ratio's, whose
#: multiples fill [0, 1) most evenly, so that successive ticks sample every phase of the send.
TICK_PHASE = 0.6180339887


def off_tick(rate_pps: float, hz: int) -> float:
    """``rate_pps`` moved by less than one tick rate to where a tick falls at a new phase of
    the send period each time: rate/HZ with the fraction :data:`TICK_PHASE`.

    /proc/stat charges each CPU's whole tick to what it was doing when the tick came (the
    kernel samples; without CONFIG_IRQ_TIME_ACCOUNTING softirq time is only sampled), and a
    paced sender is periodic: at 20000/s and HZ=250 a tick comes every 80 sends, always at
    the same point of the send's cycle, so that the softirq share read is 0 % or 100 % of
    what is there, or anything between as the phase drifts. Off the tick's multiples the
    samples spread evenly over the cycle: the rate's excess over a multiple of HZ is the
    integer nearest TICK_PHASE·HZ that shares no factor with HZ, so that HZ ticks visit HZ
    distinct phases."""
    target = round(TICK_PHASE * hz)
    excess = min(
        (e for e in range(1, hz) if math.gcd(e, hz) == 1),
        key=lambda e: (abs(e - target), e),
    )
    return math.floor(rate_pps / hz) * hz + excess


def sender_run_s(seconds: float) -> int:
    """The sender's run (``sockperf -t``, whole seconds) that holds a window of ``seconds``
    after the settling and ends after it."""
    return math.ceil(seconds + 2 * SETTLE_S)


def parse_rates(text: str) -> tuple[float, ...]:
    """``--rates``: a comma-separated list of messages per second, each with an optional k or
    M (``20k,50k,1.5e5``)."""
    rates: list[float] = []
    for item in text.split(","):
        word = item.strip()
        scale = 1.0
        if word[-1:] in ("k", "K"):
            word, scale = word[:-1], 1e3
        elif word[-1:] == "M":
            word, scale = word[:-1], 1e6
        try:
            rate = float(word) * scale
        except ValueError:
            raise ConfigError(
                f"--rates {item.strip()!r}: not a rate (messages/s, e.g. 20k,50k,100000)",
                "rates",
            ) from None
        if not MIN_RATE_PPS <= rate <= MAX_RATE_PPS:  # False for NaN too
            raise ConfigError(
                f"--rates {item.strip()}: each rate is {MIN_RATE_PPS:g} to {MAX_RATE_PPS:,.0f} "
                "messages/s",
                "rates",
            )
        rates.append(rate)
    if len(set(rates)) != len(rates):
        raise ConfigError(f"--rates {text}: a rate is given twice", "rates")
    return tuple(rates)


def parse_threaded(text: str) -> tuple[bool, ...]:
    """``--threaded``: ``off``, ``on`` or both, comma-separated."""
    words = [w.strip() for w in text.split(",")]
    values = {"off": False, "on": True}
    bad = [w for w in words if w not in values]
    if bad or not words or len(set(words)) != len(words):
        raise ConfigError(
            f"--threaded {text}: off, on or off,on (each once)",
            "threaded",
        )
    return tuple(values[w] for w in words)


def _check_range(option: str, value: float, low: float, high: float, unit: str) -> None:
    if not low <= value <= high:
        raise ConfigError(f"{option} {value:g}: {low:g} to {high:g} {unit}", option.lstrip("-"))


def _cpu_list(cpus: tuple[int, ...]) -> str:
    if cpus == tuple(range(cpus[0], cpus[-1] + 1)):
        return f"{cpus[0]} to {cpus[-1]}"
    return ", ".join(str(c) for c in cpus)


def check(plan: Plan) -> Plan:
    """``plan`` if every value is in range and its cores exist, else a one-line error naming the
    option and the allowed range; the sweep longer than ``max_minutes`` is refused too."""
    if not plan.rates_pps:
        raise ConfigError("--rates: give at least one rate", "rates")
    _check_range("--seconds", plan.seconds, MIN_SECONDS, MAX_SECONDS, "s")
    _check_range("--repeats", plan.repeats, 1, MAX_REPEATS, "")
    _check_range("--size", plan.size_bytes, MIN_SIZE, MAX_SIZE, "bytes of UDP payload")
    _check_range("--budget", plan.netdev_budget, *BUDGET_RANGE, "packets")
    _check_range("--rcvbuf", plan.rcvbuf_bytes, *RCVBUF_RANGE, "bytes")
    _check_range("--busy-read", plan.busy_read_us, *BUSY_READ_RANGE, "µs")
    _check_range("--max-minutes", plan.max_minutes, 0.1, 120, "minutes")
    for option, core in (
        ("--sender-core", plan.sender_core),
        ("--app-core", plan.app_core),
        ("--napi-core", plan.napi_thread_core),
    ):
        if core not in plan.cpus:
            raise ConfigError(
                f"{option} {core}: this host runs irqlab on CPUs {_cpu_list(plan.cpus)}",
                option.lstrip("-"),
            )
    n = len(plan.points())
    if n > MAX_POINTS:
        raise ConfigError(
            f"--rates × --threaded × --repeats: {n} points, at most {MAX_POINTS}", "rates"
        )
    estimate = plan.estimate_s()
    if estimate > plan.max_minutes * 60:
        raise ConfigError(
            f"the sweep would take about {estimate / 60:.1f} minutes ({n} points), more than "
            f"--max-minutes {plan.max_minutes:g}: fewer rates, repeats or --seconds, or a larger "
            "--max-minutes",
            "max-minutes",
        )
    return plan
