"""The Rust core, typed: every call into it, and the shapes of what it returns.

This is the one module that imports the compiled extension (``irqlab._irqlab``, whose
signatures ``_irqlab.pyi`` states and ``mypy.stubtest`` checks against the built module);
the rest of the package reaches the core through the names here. The core takes a scenario as
a flat ``{dotted key: value}`` mapping (:data:`Params`) or as a :class:`ResolvedScenario` (a
scenario it has built once: validated, resolved, its warnings found), and gives back plain
dicts and lists whose keys are fixed: :class:`Report` (one run), :class:`PacketTrace`,
:class:`Series`, :class:`TraceInfo`, :class:`KeySpec`. They are ``TypedDict``: at run time
the very dicts the core made, to the type checker every key with its type.

The report's types follow the sections of the core's ``Metrics::report``
(``crates/irqlab-core/src/metrics.rs``): what ran, the packets, the traffic, the CPU, the
interrupts, the apps, the per-part lists, and the parts only some scenarios have (notes, a
replay's progress, request/response, busy polling), marked ``NotRequired``.
"""

# No `from __future__ import annotations`: the TypedDicts' NotRequired keys are read when the
# classes are made (their __required_keys__), which needs the annotations evaluated.

from collections.abc import Callable, Mapping
from typing import Literal, NotRequired, Protocol, TypedDict

from irqlab import _irqlab
from irqlab._irqlab import Coalesce, Itr, ResolvedScenario, Sample, __version__

#: A scenario value as the core takes and gives it: a scalar, or a list of scalars
#: (``nic.irq_affinity = [0, 0, 1]``).
Scalar = bool | int | float | str
Value = Scalar | list[Scalar]
#: A scenario as the core takes it: ``{dotted key: value}``, numbered entries as ``app.0.core``.
Params = Mapping[str, Value]


class Policy(Protocol):
    """A moderation policy written in Python (:mod:`irqlab.policy`): what one vector's
    ``on_complete`` (and, if it has one, ``initial``) returns is the register write."""

    def on_complete(self, sample: Sample, /) -> Itr | Coalesce | None: ...


#: Makes the policy of one queue vector; called once per vector.
PolicyMaker = Callable[[], Policy]


# --- the report of one run, by section --------------------------------------------------------


class Latency(TypedDict):
    """Latency, µs; None where nothing was recorded. Percentiles from an HDR histogram
    (3 significant digits); mean, min and max exact."""

    mean: float | None
    p50: float | None
    p90: float | None
    p99: float | None
    p999: float | None
    min: float | None
    max: float | None


class Packets(TypedDict):
    """Packet counts in the measured window, and where the packets were at its ends."""

    offered: int
    delivered: int
    dropped_nic: int
    dropped_socket: int
    in_flight: int
    in_flight_at_warmup: int
    dropped_tx: int
    in_poll: int
    consumed: int
    transmitted: int
    to_stack: int
    in_socket: int
    in_app: int
    in_tx_ring: int
    in_host_at_warmup: int
    in_sender: NotRequired[int]


class FrameBytes(TypedDict):
    """Sizes of the offered frames, bytes (FCS included); None when none was offered."""

    mean: float | None
    min: int | None
    p50: int | None
    p90: int | None
    p99: int | None
    max: int | None


#: The categories of CPU time (``cpu``: shares; ``cpu_ps``: picoseconds, without ``busy``).
CpuCategory = Literal[
    "busy", "irq", "softirq", "ksoftirqd", "app", "idle", "busy_poll", "napi_thread", "sender"
]


class CpuShare(TypedDict):
    """CPU time by category, as fractions of the measured time (of all cores together)."""

    busy: float
    irq: float
    softirq: float
    ksoftirqd: float
    app: float
    idle: float
    busy_poll: float
    napi_thread: NotRequired[float]
    sender: NotRequired[float]


class CpuPs(TypedDict):
    """CPU time by category, exact picoseconds; they sum to ``measured``."""

    irq: int
    softirq: int
    ksoftirqd: int
    app: int
    idle: int
    busy_poll: int
    napi_thread: NotRequired[int]
    sender: NotRequired[int]
    measured: int


class Counts(TypedDict):
    """Event counts of the whole host in the measured window."""

    irqs: int
    polls: int
    polled_packets: int
    softirq_runs: int
    ksoftirqd_wakeups: int
    time_squeeze: int
    timer_ticks: int
    mode_switches: int
    moderation_writes: int
    context_switches: int
    tx_cleaned: int


class CoreCounts(TypedDict):
    """A core's event counts (its vectors' and its own)."""

    irqs: int
    polls: int
    polled_packets: int
    timer_ticks: int
    softirq_runs: int
    ksoftirqd_wakeups: int
    time_squeeze: int
    context_switches: int


class VectorCounts(TypedDict):
    """A queue vector's event counts."""

    irqs: int
    polls: int
    polled_packets: int
    timer_ticks: int
    mode_switches: int
    moderation_writes: int
    tx_cleaned: int


class PathReport(TypedDict):
    """The receive path's figures for a part of the host (a core, a queue, a class)."""

    offered: int
    delivered: int
    dropped_nic: int
    dropped_socket: int
    dropped_tx: int
    in_flight: int
    offered_pps: float
    throughput_pps: float
    loss_ratio: float
    latency_us: Latency


class CoreReport(PathReport):
    """One core (``per_core``)."""

    core: int
    vectors: list[int]
    app_latency_us: Latency
    goodput_bps: float
    cpu: CpuShare
    cpu_ps: CpuPs
    irq_per_s: float
    polls_per_s: float
    packets_per_poll: float | None
    cycles_per_packet: float | None
    counts: CoreCounts


class QueueReport(PathReport):
    """One queue vector (``per_queue``)."""

    queue: int
    core: int
    flows: int
    in_tx_ring: int
    irq_per_s: float
    polls_per_s: float
    packets_per_poll: float | None
    #: this vector's polls by their packets (as the report's ``packets_per_poll_hist``)
    packets_per_poll_hist: NotRequired[dict[str, int]]
    counts: VectorCounts


#: ``class`` is a keyword, so the key that names a class is declared in the functional form.
_ClassName = TypedDict("_ClassName", {"class": str})


class ClassReport(PathReport, _ClassName):
    """One traffic class (``per_class``), named by ``class``."""

    share: float
    consumed: int
    goodput_bps: float
    app_latency_us: Latency


class AppReport(TypedDict):
    """One app (``per_app``)."""

    app: int
    core: int
    flows: int
    consumed: int
    dropped_socket: int
    in_socket: int
    in_app: int
    consumed_pps: float
    goodput_bps: float
    app_latency_us: Latency
    #: wake-up (a packet for the sleeping app) → the start of its switch in, as
    #: ``sched:sched_wakeup`` → ``sched:sched_switch``; the switch's own cost left out
    wakeup_delay_us: Latency
    #: the wake-ups ``wakeup_delay_us`` counts
    wakeups: int


class ReplayReport(TypedDict):
    """How a replayed capture went (``traffic.kind = "pcap"``)."""

    packets: int
    passes: int
    reordered: int
    error: str | None


class BusyPollCounts(TypedDict):
    """Busy polling's counts, when an app may busy-poll or waits with epoll."""

    sessions: int
    polls: int
    packets: int
    most_per_poll: int
    handovers: int
    irqs_while_owned: int
    watchdog_lost: int
    epoll_returns: int
    epoll_events: int
    empty_epoll_waits: int
    suspends: int
    resumes: int


class XskCounts(TypedDict):
    """The AF_XDP apps' counts (``app.N.io = "xsk"``), all apps together."""

    #: times an app's own thread found its XSK's Rx ring empty
    empty_checks: int
    #: recvfrom calls on the XSKs: kicks and busy polls, the polling threads' included
    recvfroms: int
    #: packets a full XSK Rx ring refused (also in ``packets.dropped_socket``)
    rx_ring_full: int


class RunSection(TypedDict):
    """What ran: the scheme, the seed and replication, the measured window's length."""

    scheme: str
    seed: int
    replication: int
    measured_s: float


class TrafficSection(TypedDict):
    """What was offered, delivered and lost, per second, and how long it took."""

    offered_pps: float
    offered_gbps: float
    frame_bytes: FrameBytes
    throughput_pps: float
    loss_ratio: float
    latency_us: Latency


class CpuSection(TypedDict):
    """The CPU's time by category, and the cycles each delivered packet cost."""

    cpu: CpuShare
    cpu_ps: CpuPs
    cycles_per_packet: float | None
    load_latency_product: float | None


class InterruptSection(TypedDict):
    """IRQ and poll rates, and the event counts."""

    irq_per_s: float
    polls_per_s: float
    packets_per_poll: float | None
    #: calls of the driver's poll function by their packets, in bpftrace's log2 buckets keyed
    #: by their smallest count ("0", "1", "2", "4", …; only those that counted); absent for the
    #: schemes of Salah's polling loop
    packets_per_poll_hist: NotRequired[dict[str, int]]
    counts: Counts


class AppSection(TypedDict):
    """What the apps finished: their latency and goodput."""

    app_latency_us: Latency
    goodput_bps: float


class PartsSection(TypedDict):
    """One entry per core, queue vector, traffic class and app."""

    per_core: list[CoreReport]
    per_queue: list[QueueReport]
    per_class: list[ClassReport]
    per_app: list[AppReport]


class RequestResponseSection(TypedDict):
    """Request/response traffic (``traffic.kind = "rr"`` only): transactions per second, their
    round-trip times, responses dropped at a full Tx ring."""

    transactions_per_s: NotRequired[float]
    rtt_us: NotRequired[Latency]
    responses_dropped: NotRequired[int]


class Report(
    RunSection,
    TrafficSection,
    CpuSection,
    InterruptSection,
    AppSection,
    PartsSection,
    RequestResponseSection,
):
    """The report of one run (``irqlab.run``, ``irqlab run --format json``)."""

    packets: Packets
    #: every scenario key with the value the run used: enough to run it again
    scenario: dict[str, Value]
    #: what the result depends on beyond the model's sources; absent when nothing
    notes: NotRequired[list[str]]
    replay: NotRequired[ReplayReport]
    busy_poll: NotRequired[BusyPollCounts]
    xsk: NotRequired[XskCounts]


# --- what else the core returns ---------------------------------------------------------------


#: Every packet of a traced run, in arrival order (:func:`run_traced`): ``done_ps`` is None
#: for a packet dropped or still in flight at the end, ``queue`` the vector RSS steered it to,
#: ``class`` its traffic class's index (a keyword: hence the functional form).
PacketTrace = TypedDict(
    "PacketTrace",
    {
        "arrival_ps": list[int],
        "accepted": list[bool],
        "done_ps": list[int | None],
        "size_bytes": list[int],
        "flow": list[int],
        "queue": list[int],
        "class": list[int],
    },
)


class Series(TypedDict):
    """A run as a time series of equal buckets from time zero, warm-up included."""

    bucket_ps: int
    offered: list[int]
    dropped: list[int]
    delivered: list[int]
    latency_sum_us: list[float]


class TraceInfo(TypedDict):
    """What one pass over a capture finds (``irqlab trace-info``), as the core counts it."""

    format: str
    compressed: bool
    link_types: list[int]
    snaplen: int
    packets: int
    first_ps: int
    span_ps: int
    period_ps: int
    frame_bytes: int
    #: ``(bytes, frames)`` per frame size, smallest first
    sizes: list[tuple[int, int]]
    flows: int
    #: ``(id, flow, packets, rss_hash)`` of the largest flows
    top_flows: list[tuple[int, str, int, int]]
    #: ``(gap_ps, index of the packet after it)`` of the largest gaps
    gaps: list[tuple[int, int]]
    reordered: int
    cut: int
    ipv4: int
    ipv6: int
    other: int
    tcp: int
    udp: int


class KeySpec(TypedDict):
    """One key of the scenario schema. The fields of numbered entries appear once, as
    ``{table}.N.{field}``, with ``table``, ``noun``, ``max_entries``, ``table_doc`` and
    ``field``."""

    key: str
    type: Literal["bool", "int", "float", "str", "text", "int_list"]
    default: Value
    allowed: str
    doc: str
    #: the range of an int, float or int_list
    min: NotRequired[int | float]
    max: NotRequired[int | float]
    #: a float's lower bound is excluded
    min_exclusive: NotRequired[bool]
    #: an int or str from a fixed set
    choices: NotRequired[list[int] | list[str]]
    #: the most items of an int_list
    max_len: NotRequired[int]
    table: NotRequired[str]
    noun: NotRequired[str]
    max_entries: NotRequired[int]
    table_doc: NotRequired[str]
    field: NotRequired[str]


# --- the calls --------------------------------------------------------------------------------


def schema() -> list[KeySpec]:
    """The scenario schema, in the core's order: plain keys, then the numbered entries'
    fields."""
    return _irqlab.schema()


def resolved(params: Params) -> ResolvedScenario:
    """The scenario of ``params`` built by the core: validated (a bad key or value raises
    :class:`irqlab.ConfigError` naming it), every key resolved, its warnings found. The
    warnings are not shown here (:func:`irqlab.scenario.build` shows them)."""
    return ResolvedScenario(dict(params))


def resolve(params: Params) -> dict[str, Value]:
    """Every key of the scenario of ``params`` with its resolved value (defaults filled in)."""
    return resolved(params).params


def _scenario(scenario: ResolvedScenario | Params) -> ResolvedScenario | dict[str, Value]:
    return scenario if isinstance(scenario, ResolvedScenario) else dict(scenario)


def run(scenario: ResolvedScenario | Params, policy: PolicyMaker | None = None) -> Report:
    """Runs a scenario (built already, or built now from its params) and returns its report.
    ``policy`` makes the ``python`` moderation policy of each vector. Ctrl-C stops the run
    within about a second (``KeyboardInterrupt``, or what the signal's handler raised)."""
    return _irqlab.run(_scenario(scenario), policy)


def run_traced(
    scenario: ResolvedScenario | Params, policy: PolicyMaker | None = None
) -> tuple[Report, PacketTrace]:
    """:func:`run`, and every packet's outcome."""
    return _irqlab.run_traced(_scenario(scenario), policy)


def run_series(
    scenario: ResolvedScenario | Params, buckets: int, policy: PolicyMaker | None = None
) -> tuple[Report, Series]:
    """:func:`run`, and the run as a time series of ``buckets`` equal buckets from time zero."""
    return _irqlab.run_series(_scenario(scenario), buckets, policy)


def frame_sizes(params: Params) -> list[tuple[int, float]]:
    """The frame-size distribution of a scenario, as ``[(bytes, probability), ...]``."""
    return _irqlab.frame_sizes(dict(params))


def trace_info(path: str, top: int) -> TraceInfo:
    """One pass over the capture at ``path`` (its ``top`` largest flows); a capture that
    cannot be read raises ``ConfigError("<path>: <why>")``."""
    return _irqlab.trace_info(path, top)


__all__ = [
    "AppReport",
    "BusyPollCounts",
    "ClassReport",
    "Coalesce",
    "CoreCounts",
    "CoreReport",
    "Counts",
    "CpuCategory",
    "CpuPs",
    "CpuShare",
    "FrameBytes",
    "Itr",
    "KeySpec",
    "Latency",
    "PacketTrace",
    "Packets",
    "Params",
    "PathReport",
    "Policy",
    "PolicyMaker",
    "QueueReport",
    "ReplayReport",
    "Report",
    "ResolvedScenario",
    "Sample",
    "Scalar",
    "Series",
    "TraceInfo",
    "Value",
    "VectorCounts",
    "XskCounts",
    "__version__",
    "frame_sizes",
    "resolve",
    "resolved",
    "run",
    "run_series",
    "run_traced",
    "schema",
    "trace_info",
]
