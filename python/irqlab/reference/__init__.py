"""A pure-Python reference simulator of irqlab's host receive-path model: a test oracle.

This package re-implements, slowly and plainly, exactly the model of the Rust core
(``crates/irqlab-core``): the same random streams, the same integer-picosecond time, the same
event order and the same decisions of the NIC interrupt logic, the CPU priority server, NAPI,
``net_rx_action``, ``handle_softirqs`` and ksoftirqd. It mirrors the core decision by decision
(function names follow ``host/``, ``nic/``, ``cpu.rs`` and ``kernel.rs``), so that for any
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

Its parts, as the core's: :mod:`~irqlab.reference.units` (integer time and rounding),
:mod:`~irqlab.reference.streams` (the random streams), :mod:`~irqlab.reference.config` (the
scenario in integer time), :mod:`~irqlab.reference.parts` (traffic, NIC, CPU, kernel),
:mod:`~irqlab.reference.metrics` (the report) and :mod:`~irqlab.reference.sim` (one run).
"""

from __future__ import annotations

from irqlab.reference.config import ORACLE_SCHEMES, Config, Cost, zipf_cum
from irqlab.reference.metrics import (
    HIST_MAX_NS,
    Metrics,
    hdr_highest_equivalent,
    hdr_value_at_quantile,
    with_topology,
)
from irqlab.reference.parts import (
    CATEGORIES,
    FIRE,
    HARDIRQ,
    IDLE,
    INLINE,
    KSOFTIRQD,
    RUNNING,
    SLEEPING,
    SOFTIRQ_LEVEL,
    SWITCHING,
    THREAD,
    Cbr,
    Cpu,
    IrqLine,
    Job,
    Kernel,
    Napi,
    Packet,
    Poisson,
    Ring,
    ctx_category,
    ctx_level,
)
from irqlab.reference.sim import (
    ISR,
    KSOFTIRQD_SWITCH,
    NET_RX_ENTRY,
    NIC_MODERATION,
    PACKET,
    POLL_ENTRY,
    PRIO_ARRIVAL,
    PRIO_CPU,
    PRIO_TIMER,
    UNMASK,
    Sim,
    simulate,
)
from irqlab.reference.streams import (
    ARRIVALS,
    CTX_SWITCH_COST,
    FLOWS,
    IRQ_COST,
    MASK_COST,
    N_STREAMS,
    POLL_COST,
    PROTO_COST,
    SIZES,
    SOFTIRQ_COST,
    UNMASK_COST,
    ZIG_F,
    ZIG_R,
    ZIG_V,
    ZIG_X,
    SplitMix64,
    Stream,
    Xoshiro256PlusPlus,
    streams,
)
from irqlab.reference.units import (
    MASK64,
    PS_PER_MS,
    PS_PER_NS,
    PS_PER_S,
    PS_PER_US,
    from_units,
    round_half_away,
    round_ps,
)

__all__ = [
    "ARRIVALS",
    "CATEGORIES",
    "CTX_SWITCH_COST",
    "FIRE",
    "FLOWS",
    "HARDIRQ",
    "HIST_MAX_NS",
    "IDLE",
    "INLINE",
    "IRQ_COST",
    "ISR",
    "KSOFTIRQD",
    "KSOFTIRQD_SWITCH",
    "MASK64",
    "MASK_COST",
    "NET_RX_ENTRY",
    "NIC_MODERATION",
    "N_STREAMS",
    "ORACLE_SCHEMES",
    "PACKET",
    "POLL_COST",
    "POLL_ENTRY",
    "PRIO_ARRIVAL",
    "PRIO_CPU",
    "PRIO_TIMER",
    "PROTO_COST",
    "PS_PER_MS",
    "PS_PER_NS",
    "PS_PER_S",
    "PS_PER_US",
    "RUNNING",
    "SIZES",
    "SLEEPING",
    "SOFTIRQ_COST",
    "SOFTIRQ_LEVEL",
    "SWITCHING",
    "THREAD",
    "UNMASK",
    "UNMASK_COST",
    "ZIG_F",
    "ZIG_R",
    "ZIG_V",
    "ZIG_X",
    "Cbr",
    "Config",
    "Cost",
    "Cpu",
    "IrqLine",
    "Job",
    "Kernel",
    "Metrics",
    "Napi",
    "Packet",
    "Poisson",
    "Ring",
    "Sim",
    "SplitMix64",
    "Stream",
    "Xoshiro256PlusPlus",
    "ctx_category",
    "ctx_level",
    "from_units",
    "hdr_highest_equivalent",
    "hdr_value_at_quantile",
    "round_half_away",
    "round_ps",
    "simulate",
    "streams",
    "with_topology",
    "zipf_cum",
]
