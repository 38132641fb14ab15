"""``irqlab probe``: a scenario from a live Linux host.

Reads what the host says about its receive path — the interface's coalescing, rings, channels
and RSS table (the ``ethtool`` command), the NAPI and busy-poll sysctls, the per-device
settings (sysfs) and the per-NAPI ones with the queues each NAPI serves (the kernel's netdev
netlink family through pyroute2: ``napi-get``, ``queue-get``; Linux 6.13 and later), its IRQs
with their affinity and rates (``/proc/interrupts`` sampled twice), the CPUs and the driver —
and writes a scenario with those values, each with a comment naming where it was read. What a
host cannot tell (how long an interrupt or a packet takes) keeps irqlab's default, marked for
calibration. :data:`PROBED` names where each key is read, :data:`NOT_PROBED` why every other
key has no counterpart on a host; a test holds the two to the schema, so a key added to irqlab
is either probed or said not to be.

Everything is read through a root directory, ``/`` on the live host, so a recorded tree of
another host's ``/proc``, ``/sys``, ethtool and netlink outputs probes exactly the same way
(``tests/data/probe``). A file or tool that is missing, unreadable or says something
unexpected becomes a note in the output, never an exception: only an interface that does not
exist is an error. A tree is not trusted: only regular files are read (a FIFO would block),
each up to a bounded prefix, and every list expanded from what is read — CPU lists, IRQs,
directory listings, NAPIs and queues, RSS entries — is bounded by one of the ``MAX_*`` limits,
which the note names, so a damaged or hostile tree costs neither unbounded time nor memory. Every
value is checked against the schema before it is written, and the scenario as a whole by the
same loader ``irqlab check`` uses.

The package, by concern:

- :mod:`~irqlab.ops.probe.steps` — :func:`probe` itself, one step per part of the host;
- :mod:`~irqlab.ops.probe.host` — :class:`Host`: reading files and running ethtool, bounded;
- :mod:`~irqlab.ops.probe.netlink` — each NAPI's settings and queues (``napi-get``,
  ``queue-get``), read live through :mod:`~irqlab.ops.probe.netdev_genl` or from a recording;
- :mod:`~irqlab.ops.probe.parsers` — ethtool, /proc/interrupts, CPU lists, RSS table, HZ;
- :mod:`~irqlab.ops.probe.settings` — the tables: drivers, :data:`HOST_SETTINGS`,
  :data:`PROBED`, :data:`NOT_PROBED`;
- :mod:`~irqlab.ops.probe.ineffective` — settings that do nothing on a host: the rules, each
  with its kernel or driver source, and the drivers' coalescing table (``irqlab tune`` skips
  by the same rules);
- :mod:`~irqlab.ops.probe.findings` — what a probe found (:class:`Probe`, :class:`Setting`,
  :class:`Vector`);
- :mod:`~irqlab.ops.probe.render` — the scenario file and the summary printed;
- :mod:`~irqlab.ops.probe.limits` and :mod:`~irqlab.ops.probe.text` — the ``MAX_*`` bounds, and
  what a host wrote made safe to show.
"""

from __future__ import annotations

from irqlab.ops.probe.findings import Probe, Setting, Vector
from irqlab.ops.probe.host import ETHTOOL_OPTIONS, Host, run_bounded
from irqlab.ops.probe.limits import (
    MAX_CONFIG_BYTES,
    MAX_CPUS,
    MAX_DIR_ENTRIES,
    MAX_FILE_BYTES,
    MAX_IRQS,
    MAX_NAPIS,
    MAX_OUTPUT_BYTES,
    MAX_PROBLEM_NOTES,
    MAX_QUEUES,
    MAX_RSS_ENTRIES,
    MAX_TABLE_BYTES,
    MAX_VECTORS,
    SHOWN_CHARS,
)
from irqlab.ops.probe.netlink import (
    NAPI_ATTRIBUTES,
    napi_get,
    parse_napis,
    parse_queues,
    queue_get,
)
from irqlab.ops.probe.parsers import (
    Interrupts,
    gunzip,
    parse_cpulist,
    parse_ethtool,
    parse_hz,
    parse_interrupts,
    parse_interval,
    parse_rss_table,
)
from irqlab.ops.probe.render import SECTIONS, render_toml, summary, write
from irqlab.ops.probe.settings import (
    DRIVERS,
    GENERIC,
    HOST_SETTINGS,
    HZ_OF_DEFAULT_BUDGET_USECS,
    NOT_PROBED,
    PROBED,
    DriverModel,
    HostSetting,
)
from irqlab.ops.probe.steps import EthtoolOutput, default_interface, interfaces, probe

__all__ = [
    "DRIVERS",
    "ETHTOOL_OPTIONS",
    "GENERIC",
    "HOST_SETTINGS",
    "HZ_OF_DEFAULT_BUDGET_USECS",
    "MAX_CONFIG_BYTES",
    "MAX_CPUS",
    "MAX_DIR_ENTRIES",
    "MAX_FILE_BYTES",
    "MAX_IRQS",
    "MAX_NAPIS",
    "MAX_OUTPUT_BYTES",
    "MAX_PROBLEM_NOTES",
    "MAX_QUEUES",
    "MAX_RSS_ENTRIES",
    "MAX_TABLE_BYTES",
    "MAX_VECTORS",
    "NAPI_ATTRIBUTES",
    "NOT_PROBED",
    "PROBED",
    "SECTIONS",
    "SHOWN_CHARS",
    "DriverModel",
    "EthtoolOutput",
    "Host",
    "HostSetting",
    "Interrupts",
    "Probe",
    "Setting",
    "Vector",
    "default_interface",
    "gunzip",
    "interfaces",
    "napi_get",
    "parse_cpulist",
    "parse_ethtool",
    "parse_hz",
    "parse_interrupts",
    "parse_interval",
    "parse_napis",
    "parse_queues",
    "parse_rss_table",
    "probe",
    "queue_get",
    "render_toml",
    "run_bounded",
    "summary",
    "write",
]
