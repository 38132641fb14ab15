"""``irqlab measure``: a live host's receive-path counters over a window, as a measurement
bundle.

Reads, before and after a window, ``/proc/net/softnet_stat``, ``/proc/softirqs`` (NET_RX,
NET_TX), ``/proc/interrupts``, ``/proc/net/snmp`` (UDP) and ``/proc/stat``'s cpu lines, through
probe's :class:`~irqlab.ops.probe.Host` (``/`` on the live host, a recorded tree otherwise, each
file bounded), and writes a bundle: a manifest, the two snapshots and the window's per-CPU,
per-IRQ and UDP rates. No root needed; tracepoints are not recorded (counters only).

The package, by concern:

- :mod:`~irqlab.ops.measure.counters` — the files' parsers and one snapshot;
- :mod:`~irqlab.ops.measure.summary` — deltas and rates, counters that went backwards left out;
- :mod:`~irqlab.ops.measure.bundle` — recording a window, writing and reading a bundle.
"""

from __future__ import annotations

from irqlab.ops.measure.bundle import (
    FORMAT,
    FORMAT_VERSION,
    MAX_SECONDS,
    MIN_SECONDS,
    TRACING,
    Bundle,
    BundleError,
    check_seconds,
    load_bundle,
    record,
    write_bundle,
)
from irqlab.ops.measure.counters import (
    FILES,
    parse_snmp,
    parse_softirqs,
    parse_softnet_stat,
    parse_stat,
    snapshot,
)
from irqlab.ops.measure.summary import summarize

__all__ = [
    "FILES",
    "FORMAT",
    "FORMAT_VERSION",
    "MAX_SECONDS",
    "MIN_SECONDS",
    "TRACING",
    "Bundle",
    "BundleError",
    "check_seconds",
    "load_bundle",
    "parse_snmp",
    "parse_softirqs",
    "parse_softnet_stat",
    "parse_stat",
    "record",
    "snapshot",
    "summarize",
    "write_bundle",
]
