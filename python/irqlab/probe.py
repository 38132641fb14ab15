"""``irqlab probe``: a scenario from a live Linux host.

Reads what the host says about its receive path — the interface's coalescing, rings, channels
and RSS table (the ``ethtool`` command), the NAPI and busy-poll sysctls, the per-device
settings (sysfs) and the per-NAPI ones (netlink's ``napi-get``, Linux 6.13 and later), its IRQs
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
directory listings, NAPIs, RSS entries — is bounded by one of the ``MAX_*`` limits below, which
the note names, so a damaged or hostile tree costs neither unbounded time nor memory. Every
value is checked against the schema before it is written, and the scenario as a whole by the
same loader ``irqlab check`` uses.
"""

from __future__ import annotations

import errno
import io
import itertools
import json
import os
import re
import selectors
import shutil
import socket
import stat
import struct
import subprocess
import sys
import time
import warnings
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irqlab.errors import ConfigError, ConfigWarning
from irqlab.scenario import check_value, resolve, schema, show_key, spec_of

#: ethtool's long options whose output the probe reads, and the short flag run for each. A
#: recorded tree holds their output as ``ethtool/IFACE/OPTION``.
ETHTOOL_OPTIONS = {
    "driver": "-i",
    "show-coalesce": "-c",
    "show-ring": "-g",
    "show-channels": "-l",
    "show-rxfh-indir": "-x",
}

#: The kernel's default ``netdev_budget_usecs`` is 2 jiffies: from it the tick rate can be told.
HZ_OF_DEFAULT_BUDGET_USECS = {2000: 1000, 6666: 300, 8000: 250, 20000: 100}

# --- limits: what a damaged or hostile tree can make the probe read --------------------------

#: Bytes read of a file at most: a sysfs or procfs value is a page at most.
MAX_FILE_BYTES = 1 << 20
#: Bytes read of /proc/interrupts and /proc/cpuinfo at most, which grow with the CPUs (1024
#: CPUs and 2,000 IRQs make a /proc/interrupts of about 22 MB).
MAX_TABLE_BYTES = 32 << 20
#: Bytes of ethtool's output read at most (its -x of a 64k-entry RSS table is about 600 kB).
MAX_OUTPUT_BYTES = 4 << 20
#: Bytes of a kernel configuration decompressed from /proc/config.gz at most.
MAX_CONFIG_BYTES = 16 << 20
#: Entries of a directory listed at most.
MAX_DIR_ENTRIES = 65536
#: CPUs a CPU list may name at most (Linux's NR_CPUS is at most 8192).
MAX_CPUS = 8192
#: Numbered IRQs read from /proc/interrupts at most.
MAX_IRQS = 65536
#: NAPI instances read from netlink at most.
MAX_NAPIS = 4096
#: Vectors of the interface kept at most, of queues and others each (nic.queues' maximum).
MAX_VECTORS = 1024
#: Notes of files that could not be read, at most (the rest are counted).
MAX_PROBLEM_NOTES = 64
#: Entries of an RSS indirection table at most (nic.rss_table_size's maximum).
MAX_RSS_ENTRIES = 65536
#: Characters of a value read from a host that a comment or note shows.
SHOWN_CHARS = 64


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"


@dataclass(frozen=True)
class DriverModel:
    """How a driver's ``ethtool -c`` values map to irqlab's NIC and policy."""

    #: rx-usecs is the ITR, a minimum interval between interrupts (Intel), not a timeout
    itr: bool
    #: ``driver.moderation`` of its adaptive mode
    adaptive: str
    #: the rx-usecs value that means "dynamic ITR" (ixgbe: 1), when the driver has one
    dynamic_usecs: int | None = None
    #: ``nic.cause_mode`` of its interrupt logic
    cause_mode: str | None = None
    #: tx-frames-irq is the Tx clean limit per poll (``driver.tx_work_limit``)
    tx_work_limit: bool = False
    #: what the mapping assumes, for the comment
    why: str = ""


DRIVERS: dict[str, DriverModel] = {
    "ixgbe": DriverModel(
        itr=True,
        adaptive="ixgbe",
        dynamic_usecs=1,
        cause_mode="latched",
        tx_work_limit=True,
        why="rx-usecs is the EITR interval: 0 = off, 1 = dynamic ITR, N = N µs",
    ),
    "i40e": DriverModel(
        itr=True,
        adaptive="i40e",
        cause_mode="latched",
        tx_work_limit=True,
        why="rx-usecs is the ITR interval; adaptive-rx runs the driver's adaptive ITR",
    ),
    "iavf": DriverModel(
        itr=True,
        adaptive="i40e",
        cause_mode="latched",
        why="rx-usecs is the ITR interval; adaptive-rx runs i40e's adaptive ITR",
    ),
    "ice": DriverModel(
        itr=True,
        adaptive="dim",
        cause_mode="latched",
        why="rx-usecs is the ITR interval; adaptive-rx runs net_dim (ice's own ITR profiles; "
        "irqlab's dim uses mlx5e's)",
    ),
    "mlx5_core": DriverModel(
        itr=False,
        adaptive="dim",
        cause_mode="armed",
        why="rx-usecs/rx-frames are the CQ moderation period and count; adaptive-rx is net_dim",
    ),
    "virtio_net": DriverModel(
        itr=False,
        adaptive="dim",
        why="rx-usecs/rx-frames are the device's notification coalescing; adaptive-rx is net_dim",
    ),
    "bnxt_en": DriverModel(
        itr=False,
        adaptive="dim",
        why="rx-usecs/rx-frames are the completion ring's coalescing; adaptive-rx is net_dim",
    ),
}
#: Any other driver: ethtool's own meaning of rx-usecs and rx-frames; adaptive is assumed DIM.
GENERIC = DriverModel(
    itr=False,
    adaptive="dim",
    why="ethtool's meaning of rx-usecs/rx-frames; its adaptive mode is assumed to be net_dim",
)


# --- which key comes from where -----------------------------------------------------------


@dataclass(frozen=True)
class HostSetting:
    """A setting a host exposes as one integer — a sysctl, a per-device sysfs file, a per-NAPI
    netlink attribute — and the scenario key it gives. Reading one more such setting, or
    writing one read so far as a comment once irqlab models it (threaded NAPI: give its entry
    the key), is one entry of :data:`HOST_SETTINGS`."""

    #: the scenario key; None: read, and written as a comment until irqlab models it
    key: str | None
    #: what it is, for the comments
    what: str
    #: the file (``{iface}``: the interface); None if only netlink has it
    path: str | None = None
    #: its attribute in netlink's per-NAPI ``napi-get`` (Linux 6.13 and later), which wins
    #: over the file: the file holds the device's value, netlink each NAPI's own
    napi: str | None = None
    #: the unit the host gives it in, for the comment
    unit: str = ""
    #: the key's value per unit of the host's (base_slice_ns → sched_slice_us: 1e-3)
    scale: float = 1.0
    #: why the file may be missing, for the note
    absent: str = ""
    #: the first Linux that has it, and the key's value on an older one (None: a note)
    since: tuple[int, int] | None = None
    before: Any = None
    #: takes effect only with an application ([[app]]), which a probe does not write: a value
    #: other than 0 is written commented out, ready for a scenario with an app
    needs_app: bool = False


HOST_SETTINGS: tuple[HostSetting, ...] = (
    HostSetting(
        "kernel.netdev_budget",
        "packets per net_rx_action run",
        "/proc/sys/net/core/netdev_budget",
    ),
    HostSetting(
        "kernel.netdev_budget_usecs",
        "µs per net_rx_action run",
        "/proc/sys/net/core/netdev_budget_usecs",
        absent="Linux before 4.12?",
    ),
    HostSetting(
        "socket.rcvbuf_bytes",
        "the receive buffer a socket gets",
        "/proc/sys/net/core/rmem_default",
    ),
    HostSetting(
        "socket.busy_read_us",
        "µs a blocking read busy-polls the device queue",
        "/proc/sys/net/core/busy_read",
        absent="kernel without busy polling?",
        needs_app=True,
    ),
    HostSetting(
        "kernel.busy_poll_us",
        "µs poll(), select() and epoll busy-poll",
        "/proc/sys/net/core/busy_poll",
        absent="kernel without busy polling?",
        needs_app=True,
    ),
    HostSetting(
        "kernel.napi_defer_hard_irqs",
        "empty polls before the IRQ is re-enabled",
        "/sys/class/net/{iface}/napi_defer_hard_irqs",
        napi="defer-hard-irqs",
        absent="kernel before 5.7?",
    ),
    HostSetting(
        "kernel.gro_flush_timeout_ns",
        "the deferral timer",
        "/sys/class/net/{iface}/gro_flush_timeout",
        napi="gro-flush-timeout",
        unit=" ns",
    ),
    HostSetting(
        "kernel.irq_suspend_timeout_ns",
        "ns IRQs stay suspended while epoll_wait finds events",
        napi="irq-suspend-timeout",
        unit=" ns",
        since=(6, 13),
        before=0,
        needs_app=True,
    ),
    HostSetting(
        None,
        "1: each NAPI polls in a kernel thread of its own",
        "/sys/class/net/{iface}/threaded",
        napi="threaded",
    ),
    HostSetting(
        "kernel.sched_slice_us",
        "the scheduler's base slice",
        "/sys/kernel/debug/sched/base_slice_ns",
        unit=" ns",
        scale=1e-3,
        absent="debugfs, readable by root",
        since=(6, 6),
    ),
)


def _where(s: HostSetting) -> str:
    parts = [s.path.replace("{iface}", "IFACE")] if s.path else []
    if s.napi:
        parts.append(f"netlink napi-get {s.napi} per NAPI (Linux 6.13 and later)")
    if s.since and s.before is not None:
        parts.append(f"{s.before} before Linux {s.since[0]}.{s.since[1]}")
    return "; ".join(parts)


#: Every scenario key the probe reads, and where (docs/probe.md has the same in a table).
PROBED: dict[str, str] = {
    "scheme": "always napi: Linux receives through NAPI",
    "host.cores": "/sys/devices/system/cpu/online, else /proc/cpuinfo",
    "platform.cpu_ghz": "cpufreq's cpuinfo_max_freq or base_frequency, else /proc/cpuinfo",
    "nic.link_gbps": "/sys/class/net/IFACE/speed",
    "nic.queues": "ethtool -l, else /sys/class/net/IFACE/queues, else /proc/interrupts",
    "nic.ring_descriptors": "ethtool -g: RX",
    "nic.tx_ring_descriptors": "ethtool -g: TX",
    "nic.rss_table_size": "ethtool -x: the entries of the indirection table",
    "nic.itr_us": "ethtool -c: rx-usecs (Intel drivers)",
    "nic.rx_usecs": "ethtool -c: rx-usecs (other drivers)",
    "nic.rx_frames": "ethtool -c: rx-frames (other drivers)",
    "nic.cause_mode": "the driver",
    "nic.irq_affinity": "/proc/irq/N/effective_affinity_list, else smp_affinity_list",
    "nic.tx_irq": "the queue vectors' names in /proc/interrupts (TxRx, or Rx only)",
    "driver.moderation": "ethtool -c, read per driver",
    "driver.dim_mode": "ethtool -c: CQE mode RX",
    "driver.tx_work_limit": "ethtool -c: tx-frames-irq (ixgbe, i40e)",
    "driver.legacy_bulk_rate": "the kernel release (ixgbe before 4.15)",
    "kernel.hz": "CONFIG_HZ of /boot/config-RELEASE or /proc/config.gz, else netdev_budget_usecs",
    **{s.key: _where(s) for s in HOST_SETTINGS if s.key},
}

#: Every other scenario key, grouped by why no host has a counterpart to read.
_NO_COUNTERPART: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "the run, not the host: its length and random streams",
        ("run.seed", "run.replication", "run.duration_ms", "run.warmup_ms"),
    ),
    (
        "the workload, not the host: the packet rate observed is a comment",
        (
            "traffic.kind",
            "traffic.rate_pps",
            "traffic.size_bytes",
            "traffic.sizes",
            "traffic.sources",
            "traffic.alpha_on",
            "traffic.alpha_off",
            "traffic.on_min_bytes",
            "traffic.line_rate_gbps",
            "traffic.flows",
            "traffic.flow_zipf_s",
            "traffic.pcap",
            "traffic.speedup",
            "traffic.loop",
            "traffic.classes.N.name",
            "traffic.classes.N.share",
            "rr.clients",
            "rr.outstanding",
            "rr.remote_us",
            "rr.remote_dist",
            "rr.rate_rps",
            "rr.response_bytes",
            "rr.timeout_us",
        ),
    ),
    (
        "whether the traffic is routed is the workload's: net.ipv4.ip_forward only permits it "
        "(hosts that run containers set it without routing anything)",
        ("host.forward",),
    ),
    (
        "the applications studied, and the socket and epoll options each program sets for "
        "itself: [[app]] entries are yours to add",
        (
            "app.N.core",
            "app.N.cost_ns",
            "app.N.cost_dist",
            "app.N.cost_ns_per_byte",
            "app.N.flows",
            "app.N.rcvbuf_bytes",
            "app.N.io",
            "socket.busy_poll_budget",
            "socket.prefer_busy_poll",
            "epoll.busy_poll_us",
            "epoll.busy_poll_budget",
            "epoll.prefer_busy_poll",
            "epoll.maxevents",
            "epoll.timeout_ms",
        ),
    ),
    (
        "a cost: how long the host takes, which no file says (to calibrate, docs/probe.md)",
        (
            "platform.irq_ns",
            "platform.irq_dist",
            "platform.proto_ns",
            "platform.proto_dist",
            "platform.proto_ns_per_byte",
            "platform.poll_ns",
            "platform.poll_dist",
            "platform.softirq_ns",
            "platform.softirq_dist",
            "platform.mask_ns",
            "platform.mask_dist",
            "platform.unmask_ns",
            "platform.unmask_dist",
            "platform.poll_timer_ns",
            "platform.poll_timer_dist",
            "platform.wakeup_ns",
            "platform.wakeup_after_us",
            "platform.ctx_switch_ns",
            "platform.ctx_switch_dist",
            "platform.tx_ns",
            "platform.tx_dist",
            "platform.tx_clean_ns",
            "platform.tx_clean_dist",
            "platform.task_wakeup_ns",
            "platform.task_wakeup_dist",
            "platform.ring_switch_ns",
            "platform.busy_iter_ns",
            "epoll.batch_ns",
        ),
    ),
    ("a named set of costs: chosen, not read", ("platform.preset",)),
    (
        "the kernel's code, not a setting: the defaults are today's kernel; the other values "
        "reproduce Linux 2.6.18 or a patched kernel (chang2007)",
        (
            "kernel.net_rx_action",
            "kernel.ksoftirqd_policy",
            "kernel.softirq_time_limit",
            "kernel.max_softirq_restart",
            "kernel.max_softirq_time_ms",
        ),
    ),
    (
        "every kernel ticks; irqlab models no other interrupt source and leaves the tick off "
        "unless a study needs it (docs/applications.md)",
        ("kernel.timer_tick",),
    ),
    (
        "the weight a driver gives netif_napi_add (64 in nearly all), in no file; "
        "net.core.dev_weight is the backlog's, which irqlab does not model",
        ("kernel.napi_weight",),
    ),
    (
        "how the driver builds its buffers, not a setting: 0 follows ixgbe at the frame size",
        ("socket.truesize_bytes",),
    ),
    ("the interrupt rate of nic.itr_us, which the probe writes", ("driver.itr_rate",)),
    ("0 follows nic.link_gbps, which the probe writes", ("driver.link_gbps",)),
    ("a quirk of the ixgbe-legacy model: chosen, not read", ("driver.legacy_elapsed",)),
    ("a policy written in Python: chosen, not read", ("driver.policy",)),
    (
        "a scheme or controller from a paper, which no stock kernel or driver runs",
        (
            "driver.linear_rate_max",
            "driver.linear_rate_min",
            "driver.linear_pps_max",
            "driver.linear_min_update_us",
            "driver.linear_elapsed",
            "driver.first_packet",
            "adapt.scheme",
            "adapt.interval_ms",
            "adapt.buflow",
            "adapt.bufupper",
            "adapt.alpha",
            "adapt.beta",
            "adapt.budget_min",
            "adapt.budget_max",
            "adapt.micro",
            "adapt.rhip_rate",
            "adapt.rhip_budget",
            "adapt.t_decrease",
            "adapt.t_increase_ns",
            "adapt.t_snap_ns",
            "adapt.aic_min_rate",
            "adapt.aic_max_rate",
            "adapt.aic_rate_step",
            "adapt.aic_decrease",
            "poll.period_us",
            "poll.quota",
            "hybrid.switch_pps",
            "hybrid.window_us",
            "hybrid.hysteresis",
            "qos.strategy",
            "qos.rt_share",
            "qos.ring_budgets",
            "qos.ring_order",
        ),
    ),
)
#: Why each key not in :data:`PROBED` has no counterpart on a host.
NOT_PROBED: dict[str, str] = {key: why for why, keys in _NO_COUNTERPART for key in keys}


@dataclass
class Setting:
    """One scenario key the probe writes: its value and where it came from."""

    key: str
    value: Any
    source: str


@dataclass
class Vector:
    """An IRQ of the interface, as /proc/interrupts and /proc/irq/N name it."""

    irq: int
    name: str
    #: the queue it serves (the number in its name), None for a non-queue vector
    queue: int | None = None
    #: a queue vector named for Rx alone (IFACE-rx-N, virtioK-input.N): Tx completions
    #: interrupt other vectors; None for a non-queue vector
    rx_only: bool | None = None
    #: /proc/irq/N/smp_affinity_list as read, and effective_affinity_list
    affinity: str | None = None
    effective: str | None = None
    #: the irqlab core it is pinned to, and why
    core: int | None = None
    core_source: str = ""
    #: IRQs per second between the two samples; the CPU that took most of them
    rate_per_s: float | None = None
    busiest_cpu: int | None = None


@dataclass
class Probe:
    """What was read from one host about one interface, and the scenario it gives."""

    iface: str
    hostname: str | None = None
    kernel: str | None = None
    driver: str | None = None
    driver_version: str | None = None
    bus: str | None = None
    settings: dict[str, Setting] = field(default_factory=dict)
    #: host settings that take effect only with an application ([[app]]): busy polling, IRQ
    #: suspension. A probe writes no app, so these are written commented out; add them to
    #: :meth:`scenario` with your apps.
    with_apps: dict[str, Setting] = field(default_factory=dict)
    #: every key a value was read for, whether written or not (the tests hold it to PROBED)
    read_keys: set[str] = field(default_factory=set)
    driver_source: str = ""
    #: settings irqlab has no key for: (name, value, what it is, source)
    unmodelled: list[tuple[str, str, str, str]] = field(default_factory=list)
    vectors: list[Vector] = field(default_factory=list)
    other_vectors: list[Vector] = field(default_factory=list)
    #: packets/s and mean bytes per packet received between the samples
    rx_pps: float | None = None
    rx_bytes_per_packet: float | None = None
    interval_s: float = 0.0
    notes: list[str] = field(default_factory=list)

    def set(self, key: str, value: Any, source: str) -> None:
        """Records a value for ``key``, or a note if the schema does not allow it."""
        self.read_keys.add(key)
        try:
            self.settings[key] = Setting(key, check_value(key, value), source)
        except ConfigError as e:
            self.notes.append(f"{e} — read from {source}; not written")

    def set_for_apps(self, key: str, value: Any, source: str) -> None:
        """Records a value that takes effect only with an application (:attr:`with_apps`)."""
        self.read_keys.add(key)
        try:
            self.with_apps[key] = Setting(key, check_value(key, value), source)
        except ConfigError as e:
            self.notes.append(f"{e} — read from {source}; not written")

    def get(self, key: str, default: Any = None) -> Any:
        s = self.settings.get(key)
        return default if s is None else s.value

    def scenario(self) -> dict[str, Any]:
        """The scenario as flat dotted keys (what :func:`irqlab.run` and ``--set`` take)."""
        return {k: s.value for k, s in self.settings.items()}

    def toml(self) -> str:
        """The scenario file: every value with its source, notes and observations as comments."""
        return render_toml(self)


# --- reading the host ---------------------------------------------------------------------

#: Characters a value read from a host may not carry into a comment, a note or a terminal:
#: control characters (but tab and newline), line separators and bidirectional overrides.
_UNPRINTABLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


#: The same characters, each to U+FFFD, for str.translate (which, unlike re.sub, keeps the
#: time and memory of 32 MiB of control characters linear).
_UNPRINTABLE_MAP = dict.fromkeys((c for c in range(0x2070) if _UNPRINTABLE.match(chr(c))), "\ufffd")


def _clean(text: str) -> str:
    return text.translate(_UNPRINTABLE_MAP) if _UNPRINTABLE.search(text) else text


def _shown(text: str, limit: int = SHOWN_CHARS) -> str:
    """A value read from a host as a comment or note shows it: one line, cut if long."""
    line = " ".join(_clean(text).split())
    return line if len(line) <= limit else line[: limit - 1] + f"… ({len(line)} characters)"


def _why(e: OSError) -> str:
    if e.errno == errno.ELOOP:
        return "a symbolic link loop"
    if e.errno == errno.EACCES or e.errno == errno.EPERM:
        return "not readable (permission denied)"
    return f"not readable ({(e.strerror or type(e).__name__).lower()})"


def _kind(mode: int) -> str:
    for test, what in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return f"{what}, not a file: not read"
    return "not a regular file: not read"


class Host:
    """Reads files and runs ethtool, for the live host (root ``/``) or a recorded tree.

    In a recorded tree, ethtool's output is ``ethtool/IFACE/OPTION`` (``show-coalesce``, ...),
    netlink's per-NAPI settings ``netlink/IFACE/napi-get``, and the second sample of a file is
    ``FILE.2``. Nothing read is trusted: a file is read only if it is a regular one (a FIFO
    would block), up to a bounded prefix; a listing is bounded; a path that loops or cannot be
    read is recorded in :attr:`problems` (and becomes a note), never an exception.
    """

    def __init__(
        self,
        root: str | Path = "/",
        *,
        ethtool: str | None = None,
        timeout_s: float = 5.0,
    ) -> None:
        self.root = Path(root)
        try:
            self.real_root = self.root.resolve()
        except (OSError, RuntimeError, ValueError) as e:  # a loop of symbolic links
            raise ConfigError(
                f"root {show_key(str(root))}: cannot be resolved ({e})", None
            ) from None
        self.recorded = self.real_root != Path("/")
        self.ethtool_cmd = ethtool
        self.timeout_s = timeout_s
        #: what went wrong reading a path that exists, by path: a note each unless a reader
        #: made its own (:meth:`failure`)
        self.problems: dict[str, str] = {}
        self._kept: dict[str, str | None] = {}

    def path(self, name: str) -> Path:
        return self.root / name.lstrip("/")

    def failure(self, name: str) -> str:
        """Why ``name`` gave nothing: "not present", or what was wrong with it (which the
        caller now reports, so it is no longer in :attr:`problems`)."""
        return self.problems.pop(name, "not present")

    def read(
        self, name: str, *, second: bool = False, limit: int = MAX_FILE_BYTES, keep: bool = False
    ) -> str | None:
        """The text of ``name`` (an absolute path on the host; at most ``limit`` bytes), or
        None if it cannot be read. ``keep``: read once, for a file that does not change
        between readers (/proc/cpuinfo, large on a large host)."""
        if second and self.recorded:
            name += ".2"
        if keep and name in self._kept:
            return self._kept[name]
        data = self.read_bytes(name, limit=limit)
        text = None if data is None else _clean(data.decode("utf-8", errors="replace"))
        if keep:
            self._kept[name] = text
        return text

    def read_bytes(self, name: str, *, limit: int = MAX_FILE_BYTES) -> bytes | bytearray | None:
        """The bytes of ``name``, at most ``limit`` of them, if it is a regular file: anything
        else is not even opened (a FIFO would block, a device could act on being opened)."""
        path = self.path(name)
        try:
            mode = os.stat(path).st_mode
            if not stat.S_ISREG(mode):
                self.problems[name] = _kind(mode)
                return None
            flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
            fd = os.open(path, flags)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as e:
            self.problems[name] = _why(e)
            return None
        except ValueError:  # a NUL in the path
            self.problems[name] = "not a path"
            return None
        data = bytearray()
        try:
            mode = os.fstat(fd).st_mode  # what was opened, should the path have changed
            if not stat.S_ISREG(mode):
                self.problems[name] = _kind(mode)
                return None
            while len(data) <= limit:
                chunk = os.read(fd, min(1 << 20, limit + 1 - len(data)))
                if not chunk:
                    break
                data += chunk
        except OSError as e:
            self.problems[name] = _why(e)
            return None
        finally:
            os.close(fd)
        if len(data) > limit:
            which = "MAX_TABLE_BYTES" if limit == MAX_TABLE_BYTES else "MAX_FILE_BYTES"
            self.problems[name] = (
                f"larger than {_size(limit)} ({which}): only its first {_size(limit)} read"
            )
            del data[limit:]
        return data

    def listdir(self, name: str) -> list[str] | None:
        """The entries of directory ``name`` (at most ``MAX_DIR_ENTRIES``), sorted."""
        names: list[str] = []
        try:
            with os.scandir(self.path(name)) as entries:
                for entry in entries:
                    if len(names) == MAX_DIR_ENTRIES:
                        self.problems[name] = (
                            f"more than {MAX_DIR_ENTRIES} entries (MAX_DIR_ENTRIES): the first "
                            f"{MAX_DIR_ENTRIES} read"
                        )
                        break
                    names.append(entry.name)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as e:
            self.problems[name] = _why(e)
            return None
        except ValueError:
            return None
        return sorted(names)

    def exists(self, name: str) -> bool:
        try:
            return self.path(name).exists()
        except (OSError, ValueError):
            return False

    def readlink(self, name: str) -> str | None:
        try:
            return _clean(os.readlink(self.path(name)))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as e:
            if e.errno != errno.EINVAL:  # EINVAL: not a symbolic link
                self.problems[name] = _why(e)
            return None
        except ValueError:
            return None

    def realname(self, name: str) -> Path | None:
        """Where ``name`` leads after its symbolic links, as a path on the host."""
        p = self.path(name)
        try:
            os.stat(p)
            real = p.resolve()
        except (FileNotFoundError, NotADirectoryError):
            if os.path.islink(p):
                self.problems[name] = "a symbolic link to nothing"
            return None
        except RuntimeError:  # Python 3.11's resolve() reports a loop so
            self.problems[name] = "a symbolic link loop"
            return None
        except OSError as e:
            self.problems[name] = _why(e)
            return None
        except ValueError:
            return None
        try:
            return Path("/") / real.relative_to(self.real_root)
        except ValueError:
            return None

    def ethtool(self, option: str, iface: str) -> tuple[str | None, str]:
        """ethtool's output for ``--OPTION IFACE`` and a description of its source; None and
        the reason when there is none."""
        flag = ETHTOOL_OPTIONS[option]
        if self.recorded and self.ethtool_cmd is None:
            name = f"/ethtool/{iface}/{option}"
            text = self.read(name)
            if text is None:
                why = self.failure(name)
                if why == "not present":
                    return None, f"no recorded `ethtool {flag} {iface}` ({name})"
                return None, f"{name}: {why}"
            return text, f"ethtool {flag} {iface}"
        cmd = self.ethtool_cmd or "ethtool"
        exe = shutil.which(cmd)
        if exe is None:
            return None, f"`ethtool {flag} {iface}`: {cmd} not found"
        try:
            status, out, err = run_bounded([exe, flag, iface], self.timeout_s, MAX_OUTPUT_BYTES)
        except OSError as e:
            return None, f"`ethtool {flag} {iface}`: {(e.strerror or str(e)).lower()}"
        if status == "timeout":
            return None, f"`ethtool {flag} {iface}` did not answer within {self.timeout_s:g} s"
        if status == "too long":
            return None, (
                f"`ethtool {flag} {iface}` printed more than {_size(MAX_OUTPUT_BYTES)}: ignored"
            )
        if status != 0:
            lines = _clean(err.decode("utf-8", errors="replace")).strip().splitlines()
            why = _shown(lines[-1], 200) if lines else f"exit status {status}"
            return None, f"`ethtool {flag} {iface}` failed: {why}"
        return _clean(out.decode("utf-8", errors="replace")), f"ethtool {flag} {iface}"

    def napis(self, iface: str) -> tuple[list[dict[str, int]] | None, str]:
        """Each NAPI of ``iface`` with its netlink attributes (``napi-get``) and the source;
        None and the reason when there are none."""
        if self.recorded:
            # a damaged recording is a note of its own (:attr:`problems`), needed or not
            name = f"/netlink/{iface}/napi-get"
            text = self.read(name)
            if text is None:
                why = self.problems.get(name)
                return None, f"{name}: {why}" if why else f"no recorded netlink napi-get ({name})"
            try:
                return parse_napis(text), f"netlink napi-get {iface}"
            except ValueError as e:
                self.problems[name] = str(e)
                return None, f"{name}: {e}"
        ifindex = _int((self.read(f"/sys/class/net/{iface}/ifindex") or "").strip() or None)
        if ifindex is None or not 0 < ifindex < 1 << 31:
            return None, f"/sys/class/net/{iface}/ifindex unreadable: no netlink napi-get"
        try:
            return napi_get(ifindex, self.timeout_s), f"netlink napi-get {iface}"
        except OSError as e:
            return None, f"netlink napi-get {iface}: {_netlink_why(e)}"


def run_bounded(argv: list[str], timeout_s: float, limit: int) -> tuple[int | str, bytes, bytes]:
    """Runs ``argv`` with no input; its exit status, or "timeout" or "too long" when it was
    killed for taking more than ``timeout_s`` or printing more than ``limit`` bytes, and what
    it printed on stdout and stderr. A command that hangs or floods costs neither time nor
    memory beyond those bounds, and Ctrl-C stops it."""
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "LC_ALL": "C"},
    )
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    bufs = {out_fd: bytearray(), err_fd: bytearray()}
    deadline = time.monotonic() + timeout_s
    status: int | str | None = None
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            sel.register(proc.stderr, selectors.EVENT_READ)
            while sel.get_map() and status is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    status = "timeout"
                    break
                for key, _ in sel.select(left):
                    chunk = os.read(key.fd, 1 << 16)
                    if not chunk:
                        sel.unregister(key.fileobj)
                        continue
                    bufs[key.fd] += chunk
                    if len(bufs[key.fd]) > limit:
                        status = "too long"
                        break
        if status is None:
            try:
                status = proc.wait(timeout=max(deadline - time.monotonic(), 0.01))
            except subprocess.TimeoutExpired:
                status = "timeout"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    return status, bytes(bufs[out_fd]), bytes(bufs[err_fd])


# --- netlink: each NAPI's settings (Linux 6.13 and later) ---------------------------------

#: Generic netlink's controller and the netdev family's napi-get (include/uapi/linux/
#: genetlink.h, netlink.h, netdev.h).
_NETLINK_GENERIC = 16
_GENL_ID_CTRL = 0x10
_CTRL_CMD_GETFAMILY = 3
_CTRL_ATTR_FAMILY_ID = 1
_CTRL_ATTR_FAMILY_NAME = 2
_NLMSG_ERROR = 2
_NLMSG_DONE = 3
_NLM_F_REQUEST = 1
_NLM_F_DUMP = 0x300
_NETDEV_CMD_NAPI_GET = 11
_NETDEV_A_NAPI_IFINDEX = 1
#: The attributes of a NAPI in napi-get's answer, by number, named as netdev.yaml names them
#: (and the recording script writes them).
NAPI_ATTRIBUTES = {
    1: "ifindex",
    2: "id",
    3: "irq",
    4: "pid",
    5: "defer-hard-irqs",
    6: "gro-flush-timeout",
    7: "irq-suspend-timeout",
    8: "threaded",
}


def _nl_attrs(data: bytes) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    i = 0
    while i + 4 <= len(data):
        length, kind = struct.unpack_from("=HH", data, i)
        if length < 4 or i + length > len(data):
            break
        out[kind & 0x3FFF] = data[i + 4 : i + length]
        i += (length + 3) & ~3
    return out


def _nl_request(family: int, flags: int, seq: int, cmd: int, attrs: bytes) -> bytes:
    body = struct.pack("=BBH", cmd, 1, 0) + attrs
    return struct.pack("=IHHII", 16 + len(body), family, _NLM_F_REQUEST | flags, seq, 0) + body


def _nl_answer(s: socket.socket, seq: int, deadline: float, dump: bool) -> list[bytes]:
    """The payloads (after the generic header) of the answer to request ``seq``: one message,
    or a dump's until its end; OSError for the kernel's error, a timeout, or an answer of more
    than ``MAX_NAPIS`` messages."""
    out: list[bytes] = []
    for _ in range(MAX_NAPIS + 64):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(errno.ETIMEDOUT, "no answer")
        s.settimeout(left)
        data = s.recv(1 << 16)
        i = 0
        while i + 16 <= len(data):
            length, kind, _flags, got, _pid = struct.unpack_from("=IHHII", data, i)
            if length < 16 or i + length > len(data):
                break
            payload = data[i + 16 : i + length]
            i += (length + 3) & ~3
            if got != seq:
                continue
            if kind == _NLMSG_ERROR:
                code = -struct.unpack_from("=i", payload)[0] if len(payload) >= 4 else errno.EIO
                if code:
                    raise OSError(code, os.strerror(code))
                return out
            if kind == _NLMSG_DONE:
                return out
            out.append(payload[4:])
            if not dump:
                return out
            if len(out) > MAX_NAPIS:
                raise OSError(errno.E2BIG, f"more than {MAX_NAPIS} NAPIs (MAX_NAPIS)")
    raise OSError(errno.E2BIG, "an answer without end")


def napi_get(ifindex: int, timeout_s: float = 5.0) -> list[dict[str, int]]:
    """Each NAPI of interface ``ifindex`` as the kernel's netdev family tells it (``napi-get``,
    no privilege needed): ``{attribute: value}`` named as :data:`NAPI_ATTRIBUTES`. OSError if
    the kernel has no such family or command, or does not answer within ``timeout_s``."""
    family_af = getattr(socket, "AF_NETLINK", None)
    if family_af is None:
        raise OSError(errno.EAFNOSUPPORT, "no netlink on this system")
    deadline = time.monotonic() + timeout_s
    with socket.socket(family_af, socket.SOCK_RAW, _NETLINK_GENERIC) as s:
        s.bind((0, 0))
        name = b"netdev\0\0"
        attr = struct.pack("=HH", 4 + 7, _CTRL_ATTR_FAMILY_NAME) + name
        s.send(_nl_request(_GENL_ID_CTRL, 0, 1, _CTRL_CMD_GETFAMILY, attr))
        family = None
        for payload in _nl_answer(s, 1, deadline, dump=False):
            raw = _nl_attrs(payload).get(_CTRL_ATTR_FAMILY_ID)
            if raw is not None and len(raw) >= 2:
                family = struct.unpack_from("=H", raw)[0]
        if family is None:
            raise OSError(errno.ENOENT, "no netdev family")
        attr = struct.pack("=HHI", 8, _NETDEV_A_NAPI_IFINDEX, ifindex)
        s.send(_nl_request(family, _NLM_F_DUMP, 2, _NETDEV_CMD_NAPI_GET, attr))
        napis = []
        for payload in _nl_answer(s, 2, deadline, dump=True):
            napi = {}
            for number, raw in _nl_attrs(payload).items():
                if number in NAPI_ATTRIBUTES and len(raw) in (1, 2, 4, 8):
                    napi[NAPI_ATTRIBUTES[number]] = int.from_bytes(raw, sys.byteorder)
            napis.append(napi)
        return napis


def _netlink_why(e: OSError) -> str:
    if isinstance(e, TimeoutError):
        return "no answer"
    if e.errno == errno.ENOENT:
        return "the kernel has no netdev family (older than Linux 6.3?)"
    if e.errno == errno.EOPNOTSUPP:
        return "the kernel has no napi-get (older than Linux 6.8?)"
    return (e.strerror or str(e)).lower()


def parse_napis(text: str) -> list[dict[str, int]]:
    """netlink's napi-get as the recording script writes it (a JSON list with an object per
    NAPI, attributes named as :data:`NAPI_ATTRIBUTES`); ValueError if it is not one."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise ValueError("not a JSON list of NAPIs") from None
    if not isinstance(data, list):
        raise ValueError("not a JSON list of NAPIs")
    if len(data) > MAX_NAPIS:
        raise ValueError(f"more than {MAX_NAPIS} NAPIs (MAX_NAPIS)")
    out = []
    for napi in data:
        if not isinstance(napi, dict):
            raise ValueError("an entry is not a JSON object")
        known = {}
        for name in NAPI_ATTRIBUTES.values():
            if name not in napi:
                continue
            value = napi[name]
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 64:
                raise ValueError(f"{name} = {_shown(json.dumps(value))}: not a count")
            known[name] = value
        out.append(known)
    return out


# --- parsers (pure functions of text) -----------------------------------------------------


def parse_ethtool(text: str) -> dict[str, str | None]:
    """``ethtool -c/-g/-l/-i`` output as ``{field: value}``, fields lower case, "n/a" as None.

    ``-g`` and ``-l`` list pre-set maximums and current settings under the same names: the
    maximums get the prefix ``max ``. ``Adaptive RX: on  TX: off`` (and ``CQE mode``) gives
    ``adaptive rx`` and ``adaptive tx``. Works on the netlink format (``n/a`` for unsupported
    fields, ethtool ≥ 5.6) and the older ioctl one (zeros).
    """
    out: dict[str, str | None] = {}
    prefix = ""
    for raw in text.splitlines():
        line = raw.strip()
        low = line.lower()
        if not line or " parameters for " in low:
            continue
        if low.startswith("pre-set maximums"):
            prefix = "max "
            continue
        if low.startswith("current hardware settings"):
            prefix = ""
            continue
        pair = re.fullmatch(r"(adaptive|cqe mode) rx:\s*(\S+)\s+tx:\s*(\S+)", low)
        if pair:
            out[f"{pair[1]} rx"] = _na(pair[2])
            out[f"{pair[1]} tx"] = _na(pair[3])
            continue
        if ":" in line:
            key, value = line.split(":", 1)
        else:  # ethtool 6.x prints "tx-aggr-time-usecs" without its colon
            key, _, value = line.partition("\t") if "\t" in line else line.partition(" ")
        out[prefix + key.strip().lower()] = _na(value.strip())
    return out


def _na(value: str) -> str | None:
    return None if value.lower() in ("n/a", "") else value


def _int(value: str | None) -> int | None:
    """A kernel's integer (decimal, or 0x... in firmware versions); None if ``value`` is not
    one. More than 24 characters is not a kernel's integer (and would not convert to a float)."""
    if value is None or len(value) > 24:
        return None
    try:
        return int(value)
    except ValueError:
        try:
            return int(value, 0)
        except ValueError:
            return None


def _number(text: str, digits: int = 9) -> int:
    """A plain decimal number of at most ``digits`` digits; ValueError if ``text`` is not."""
    text = text.strip()
    if not (text.isascii() and text.isdigit() and len(text) <= digits):
        raise ValueError(f"{_shown(text)!r} is not a number")
    return int(text)


def parse_cpulist(text: str, limit: int = MAX_CPUS) -> list[int]:
    """A kernel CPU list (``0-3,8,10-11``) as CPU numbers, sorted, each once; ValueError if it
    is not one or names more than ``limit`` CPUs."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if not part.strip():
            continue
        first, dash, last = part.partition("-")
        lo = _number(first)
        hi = _number(last) if dash else lo
        if hi < lo:
            raise ValueError(f"{_shown(part)!r}: a range that ends before it starts")
        if len(cpus) + hi - lo + 1 > limit:
            raise ValueError(f"more than {limit} CPUs, Linux's most (MAX_CPUS)")
        cpus.update(range(lo, hi + 1))
    return sorted(cpus)


@dataclass
class Interrupts:
    """One sample of /proc/interrupts: the CPU of each column and, per IRQ number, its action
    names; its counts per column are parsed when asked (:meth:`counts_of`), as a host of 1024
    CPUs has tens of MB of them."""

    cpus: list[int]
    names: dict[int, str]
    #: each IRQ's count columns, as read
    columns: dict[int, str] = field(default_factory=dict, repr=False)
    #: what was skipped: lines too long, IRQs beyond ``MAX_IRQS``
    problems: list[str] = field(default_factory=list)

    def counts_of(self, irq: int) -> list[int] | None:
        text = self.columns.get(irq)
        return None if text is None else [int(t) for t in text.split()]

    @property
    def counts(self) -> dict[int, list[int]]:
        return {irq: [int(t) for t in text.split()] for irq, text in self.columns.items()}


_TRIGGER = re.compile(r"-(edge|level|fasteoi)$|^(Level|Edge)$")


def _is_count(token: str) -> bool:
    return token.isascii() and token.isdigit() and len(token) <= 20


def parse_interrupts(text: str) -> Interrupts:
    """/proc/interrupts: the header names the CPUs of the columns (only the online ones); a
    numbered line has a count per column, the chip, the hardware IRQ and trigger, and the
    actions' names (comma-separated when shared). Lines that are not numbered IRQs (NMI,
    LOC, ...) are skipped, and so is a line longer than its counts and a name can make (with a
    problem said); at most ``MAX_CPUS`` columns and ``MAX_IRQS`` IRQs are read."""
    end = text.find("\n")
    end = len(text) if end < 0 else end
    header = text[: min(end, MAX_CPUS * 24)]
    found = re.finditer(r"CPU([0-9]{1,9})", header)
    cpus = [int(m[1]) for m in itertools.islice(found, MAX_CPUS)]
    names: dict[int, str] = {}
    columns: dict[int, str] = {}
    problems: list[str] = []
    width = 24 * len(cpus) + 4096
    skipped = lines = 0
    while end < len(text):
        lines += 1
        if lines > MAX_IRQS + 4096:  # the lines not IRQs (NMI, LOC, ...) are a few dozen
            problems.append(f"more than {MAX_IRQS + 4096} lines: the rest not read")
            break
        start = end + 1
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        if end - start > width:  # measured before it is copied: a line may be the whole file
            skipped += 1
            continue
        line = text[start:end]
        head, _, rest = line.partition(":")
        head = head.strip()
        if not (head.isascii() and head.isdigit() and len(head) <= 9):
            continue
        if len(names) == MAX_IRQS:
            problems.append(f"more than {MAX_IRQS} IRQs (MAX_IRQS): the first {MAX_IRQS} read")
            break
        parts = rest.split(None, len(cpus))
        n = 0
        while n < len(cpus) and n < len(parts) and _is_count(parts[n]):
            n += 1
        tail = parts[n : len(cpus)]
        if len(parts) > len(cpus):
            tail += parts[len(cpus)].split()
        # the actions follow the "<hwirq>-edge" (or -level, -fasteoi) token; old kernels
        # joined the chip and trigger ("PCI-MSI-edge"); ARM's GIC writes "27 Level"
        trigger = [i for i, t in enumerate(tail) if _TRIGGER.search(t)]
        name = " ".join(tail[trigger[-1] + 1 :]) if trigger else " ".join(tail[-1:])
        irq = int(head)
        columns[irq] = " ".join(parts[:n])
        names[irq] = name
    if skipped:
        problems.append(f"{skipped} lines longer than {width} characters skipped")
    return Interrupts(cpus, names, columns, problems)


def parse_rss_table(text: str) -> list[int]:
    """``ethtool -x``: the queue of each entry of the RSS indirection table, in order;
    ValueError if there is no table or it has more than ``MAX_RSS_ENTRIES`` entries."""
    entries: list[int] = []
    started = False
    for line in io.StringIO(text):
        low = line.strip().lower()
        if low.startswith("rx flow hash indirection table"):
            started = True
            continue
        if not started:
            continue
        row = re.fullmatch(r"[0-9]{1,9}:((?:\s+[0-9]{1,9})*)\s*", low)
        if row is None:
            if entries:
                break  # "RSS hash key:" follows the table
            continue
        for m in re.finditer(r"[0-9]+", row[1]):
            if len(entries) == MAX_RSS_ENTRIES:
                raise ValueError(f"more than {MAX_RSS_ENTRIES} entries (MAX_RSS_ENTRIES)")
            entries.append(int(m[0]))
    if not entries:
        raise ValueError("no indirection table")
    return entries


def parse_hz(config: str) -> int | None:
    m = re.search(r"^CONFIG_HZ=([0-9]{1,9})$", config, re.M)
    return int(m[1]) if m else None


def _version(release: str | None) -> tuple[int, int] | None:
    m = re.match(r"([0-9]{1,4})\.([0-9]{1,4})", release or "")
    return (int(m[1]), int(m[2])) if m else None


def gunzip(data: bytes, limit: int = MAX_CONFIG_BYTES) -> bytes:
    """The first ``limit`` bytes ``data`` decompresses to (a gzip bomb costs no more);
    ValueError if it is not gzip."""
    try:
        return zlib.decompressobj(wbits=31).decompress(data, limit)
    except zlib.error:
        raise ValueError("not a gzip file") from None


def parse_interval(text: str) -> float:
    """``1s``, ``500ms``, ``0.5`` (seconds) or ``0`` → seconds."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(ms|s)?\s*", text)
    if not m:
        raise ConfigError(f"--interval {text!r}: expected a duration like 1s, 500ms or 0", None)
    value = float(m[1]) / (1000 if m[2] == "ms" else 1)
    if value > 60:
        raise ConfigError(f"--interval {text!r}: at most 60 s", None)
    return value


# --- the probe ----------------------------------------------------------------------------


def interfaces(host: Host) -> list[str]:
    return [n for n in host.listdir("/sys/class/net") or [] if not n.startswith(".")]


def _listing(names: list[str]) -> str:
    shown = ", ".join(show_key(n) for n in names[:16])
    return shown + (f", … ({len(names)} in all)" if len(names) > 16 else "")


def default_interface(host: Host) -> str:
    """The interface of the default route, else the only one with a device behind it."""
    names = interfaces(host)
    if not names:
        raise ConfigError(
            f"no network interfaces in {host.path('/sys/class/net')}"
            + (" (is --root a recorded host?)" if host.recorded else ""),
            None,
        )
    for line in (host.read("/proc/net/route") or "").splitlines()[1:]:
        fields = line.split()
        if len(fields) > 1 and fields[1] == "00000000" and fields[0] in names:
            return fields[0]
    devices = [n for n in names if host.exists(f"/sys/class/net/{n}/device")]
    if devices:
        return devices[0]
    raise ConfigError(
        f"no default route and no interface with a device; name one of: {_listing(names)}",
        None,
    )


def probe(
    iface: str | None = None,
    *,
    root: str | Path = "/",
    interval_s: float = 1.0,
    ethtool: str | None = None,
    timeout_s: float = 5.0,
) -> Probe:
    """Probes ``iface`` (default: the interface of the default route) on the host under
    ``root`` and returns what was read and the scenario it gives.

    ``interval_s`` separates the two samples of /proc/interrupts and of the interface's
    packet counters (0: one sample, no rates). ``ethtool`` is the command to run (default:
    ``ethtool`` on the PATH for the live host, the recorded outputs for a tree), given
    ``timeout_s`` to answer (netlink too). Raises :class:`ConfigError` only if the interface
    cannot be found; anything else missing or damaged is a note in :attr:`Probe.notes`.
    """
    host = Host(root, ethtool=ethtool, timeout_s=timeout_s)
    names = interfaces(host)
    if iface is None:
        iface = default_interface(host)
    elif iface not in names:
        where = f" in {host.root}" if host.recorded else ""
        found = _listing(names) if names else "none"
        raise ConfigError(
            f"no interface '{show_key(iface)}'{where}; interfaces found: {found}", None
        )
    p = Probe(iface=iface, interval_s=interval_s)
    p.hostname = _shown((host.read("/proc/sys/kernel/hostname") or "").strip(), 255) or None
    p.kernel = _shown((host.read("/proc/sys/kernel/osrelease") or "").strip(), 255) or None
    p.set("scheme", "napi", "Linux receives through NAPI")
    online = _cpus(host, p)
    _device(host, p)
    ethtool_out = _ethtool(host, p)
    _cpu_clock(host, p, online)
    _channels_and_rings(host, p, ethtool_out)
    _coalescing(p, ethtool_out.get("show-coalesce"))
    _host_settings(host, p)
    _hz(host, p)
    _irqs(host, p, online)
    _rss(p, ethtool_out.get("show-rxfh-indir"))
    _problems(host, p)
    _validate(p)
    p.notes = [_clean(note) for note in p.notes]  # an interface's name may carry anything
    return p


def _problems(host: Host, p: Probe) -> None:
    """A note for each path that could not be read and that no reader reported, but one under
    a path with a note of its own (a looping device link); at most ``MAX_PROBLEM_NOTES``."""
    said = 0
    for name, why in host.problems.items():
        if any(str(parent) in host.problems for parent in Path(name).parents):
            continue
        if said == MAX_PROBLEM_NOTES:
            left = len(host.problems) - said
            p.notes.append(f"… and up to {left} more files that could not be read")
            return
        p.notes.append(f"{_shown(name, 200)}: {why}")
        said += 1


def _cpus(host: Host, p: Probe) -> list[int]:
    name = "/sys/devices/system/cpu/online"
    text = host.read(name)
    online: list[int] = []
    source = ""
    if text is not None:
        try:
            online = parse_cpulist(text)
            source = f"{name}: {_shown(text.strip())}"
        except ValueError as e:
            p.notes.append(f"{name}: cannot parse {_shown(text.strip())!r}: {e}")
    if not online:
        info = host.read("/proc/cpuinfo", limit=MAX_TABLE_BYTES, keep=True) or ""
        found = re.finditer(r"^processor\s*:\s*([0-9]{1,9})", info, re.M)
        online = sorted({int(m[1]) for m in itertools.islice(found, MAX_CPUS)})
        source = f"/proc/cpuinfo: {len(online)} processors"
    if not online:
        p.notes.append("CPU count unknown (no /sys/devices/system/cpu/online, no /proc/cpuinfo)")
        return []
    cores = len(online)
    if cores > 1024:
        p.notes.append(f"{cores} CPUs: irqlab simulates at most 1024 cores; host.cores = 1024")
        online = online[:1024]
    p.set("host.cores", len(online), source)
    return online


def _device(host: Host, p: Probe) -> None:
    """The driver, the bus address and the link speed."""
    base = f"/sys/class/net/{p.iface}"
    link = host.readlink(f"{base}/device/driver")
    if link:
        p.driver = _shown(os.path.basename(link.rstrip("/"))) or None
        driver_source = f"{base}/device/driver → {p.driver}"
    else:
        uevent = host.read(f"{base}/device/uevent") or ""
        m = re.search(r"^DRIVER=(\S+)", uevent, re.M)
        p.driver = _shown(m[1]) if m else None
        driver_source = f"{base}/device/uevent: DRIVER={p.driver}"
    device = host.realname(f"{base}/device")
    if p.driver:
        p.driver_source = driver_source
    elif f"{base}/device" in host.problems:
        pass  # a note says what is wrong with it
    elif not host.exists(f"{base}/device"):
        p.notes.append(f"{p.iface} has no device ({base}/device): a virtual interface")
    else:
        p.notes.append(f"{base}/device: no driver link nor uevent; the driver from ethtool -i")
    if device is not None:
        for d in (device, device.parent):
            if re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", d.name):
                p.bus = d.name
                break
    text = host.read(f"{base}/speed")
    speed = _int(text.strip() if text else None)
    if speed is not None and speed > 0:
        p.set("nic.link_gbps", speed / 1000, f"{base}/speed: {speed} Mb/s")
    else:
        if text is None:
            why = host.failure(f"{base}/speed")
            shown = "unreadable" if why == "not present" else why
        else:
            shown = f"{speed}" if speed is not None else f"{_shown(text.strip())!r}"
        p.notes.append(f"{base}/speed: {shown} (link speed unknown): nic.link_gbps keeps 10")


@dataclass
class EthtoolOutput:
    """One ethtool command's output, its fields (:func:`parse_ethtool`) and its source."""

    fields: dict[str, str | None]
    source: str
    text: str = ""

    def get(self, name: str) -> str | None:
        return self.fields.get(name)


def _ethtool(host: Host, p: Probe) -> dict[str, EthtoolOutput]:
    out: dict[str, EthtoolOutput] = {}
    missing: list[str] = []
    for option in ETHTOOL_OPTIONS:
        text, source = host.ethtool(option, p.iface)
        if text is None:
            missing.append(source)
            continue
        fields = parse_ethtool(text) if option != "show-rxfh-indir" else {}
        out[option] = EthtoolOutput(fields, source, text)
    if len(missing) == len(ETHTOOL_OPTIONS):
        if all(m.startswith("no recorded") for m in missing):
            why = f"no recorded ethtool output (ethtool/{p.iface}/{{driver,show-coalesce,...}})"
        elif all(m.endswith(" not found") for m in missing):
            why = missing[0].split(": ", 1)[1]
        else:  # each failed (or a recording is damaged): say each
            p.notes.extend(missing[:-1])
            why = missing[-1]
        p.notes.append(f"{why}: coalescing, ring sizes and channels unknown (docs/probe.md)")
    else:
        p.notes.extend(missing)
    info = out.get("driver")
    if info:
        if not p.driver and info.get("driver"):
            p.driver = _shown(info.get("driver") or "")
            p.driver_source = f"ethtool -i {p.iface}"
        version = info.get("version")
        p.driver_version = _shown(version) if version else None
        bus = info.get("bus-info")
        if not p.bus and bus:
            p.bus = _shown(bus)
    return out


def _cpu_clock(host: Host, p: Probe, online: list[int]) -> None:
    cpu = online[0] if online else 0
    base = f"/sys/devices/system/cpu/cpu{cpu}/cpufreq"
    for name, what in (("cpuinfo_max_freq", "maximum"), ("base_frequency", "base")):
        khz = _int((host.read(f"{base}/{name}") or "").strip() or None)
        if khz:
            p.set("platform.cpu_ghz", round(khz / 1e6, 3), f"{base}/{name}: {khz} kHz ({what})")
            return
    info = host.read("/proc/cpuinfo", limit=MAX_TABLE_BYTES, keep=True) or ""
    found = re.finditer(r"^cpu MHz\s*:\s*([0-9]{1,9}(?:\.[0-9]{1,9})?)\s*$", info, re.M)
    mhz = [float(m[1]) for m in itertools.islice(found, MAX_CPUS)]
    if mhz:
        ghz = round(sum(mhz) / len(mhz) / 1000, 3)
        p.set("platform.cpu_ghz", ghz, f"/proc/cpuinfo: cpu MHz {sum(mhz) / len(mhz):.0f} (mean)")
        return
    p.notes.append("CPU clock unknown (no cpufreq, no 'cpu MHz' in /proc/cpuinfo)")


def _channels_and_rings(host: Host, p: Probe, eth: dict[str, EthtoolOutput]) -> None:
    ch = eth.get("show-channels")
    if ch:
        combined, rx = _int(ch.get("combined")) or 0, _int(ch.get("rx")) or 0
        if combined + rx > 0:
            parts = [f"Combined {combined}"] + ([f"RX {rx}"] if rx else [])
            p.set("nic.queues", combined + rx, f"{ch.source}: {', '.join(parts)}")
    if "nic.queues" not in p.settings:
        queues = [
            q for q in host.listdir(f"/sys/class/net/{p.iface}/queues") or [] if q[:3] == "rx-"
        ]
        if queues:
            p.set("nic.queues", len(queues), f"/sys/class/net/{p.iface}/queues: {len(queues)} rx-N")
    ring = eth.get("show-ring")
    if ring:
        for field_, key in (("rx", "nic.ring_descriptors"), ("tx", "nic.tx_ring_descriptors")):
            value = _int(ring.get(field_))
            if value:
                top = _int(ring.get(f"max {field_}"))
                most = f" (max {top})" if top else ""
                p.set(key, value, f"{ring.source}: {field_.upper()} {value}{most}")


def _rss(p: Probe, rss: EthtoolOutput | None) -> None:
    """ethtool -x → nic.rss_table_size; a table irqlab would not fill alike is a note."""
    if rss is None:
        return
    try:
        table = parse_rss_table(rss.text)
    except ValueError as e:
        p.notes.append(f"{rss.source}: {e}; nic.rss_table_size keeps its default")
        return
    p.set("nic.rss_table_size", len(table), f"{rss.source}: {len(table)} entries")
    queues = p.get("nic.queues")
    if queues and any(q != i % queues for i, q in enumerate(table)):
        p.notes.append(
            f"{rss.source}: the indirection table is not entry i → queue i mod {queues}, as "
            "irqlab fills it: its size is written, not how it spreads the flows"
        )


def _coalescing(p: Probe, c: EthtoolOutput | None) -> None:
    """ethtool -c → the ITR or coalescing of the NIC and the driver's moderation policy."""
    model = DRIVERS.get(p.driver or "", GENERIC)
    if p.driver and p.driver not in DRIVERS:
        p.notes.append(f"driver {p.driver}: no mapping of its own; {GENERIC.why}")
    if model.cause_mode:
        p.set("nic.cause_mode", model.cause_mode, f"{p.driver}'s interrupt logic")
    if c is None:
        return
    src = c.source
    adaptive = c.get("adaptive rx") == "on"
    rx_usecs, rx_frames = _int(c.get("rx-usecs")), _int(c.get("rx-frames"))
    label = f"{p.driver}: {model.why}" if p.driver else model.why
    if model.itr:
        dynamic = model.dynamic_usecs is not None and rx_usecs == model.dynamic_usecs
        if dynamic:
            policy = model.adaptive
            if p.driver == "ixgbe" and (_version(p.kernel) or (99, 0)) < (4, 15):
                policy = "ixgbe-legacy"
                p.set("driver.legacy_bulk_rate", 12000, f"ixgbe before Linux 4.15 ({p.kernel})")
            p.set("driver.moderation", policy, f"{src}: rx-usecs {rx_usecs} — {label}")
        elif adaptive:
            p.set("driver.moderation", model.adaptive, f"{src}: Adaptive RX on — {label}")
            if rx_usecs is not None:
                p.set(
                    "nic.itr_us", rx_usecs, f"{src}: rx-usecs {rx_usecs} (the policy rewrites it)"
                )
        elif rx_usecs:
            p.set("driver.moderation", "static", f"{src}: Adaptive RX off — {label}")
            p.set("nic.itr_us", rx_usecs, f"{src}: rx-usecs {rx_usecs}")
        elif rx_usecs == 0:
            p.set("driver.moderation", "off", f"{src}: rx-usecs 0 — {label}")
        high = _int(c.get("rx-usecs-high"))
        if high:
            what = "µs; the vector's interrupt rate limit"
            p.unmodelled.append(("rx-usecs-high", str(high), what, src))
    else:
        if rx_usecs is not None:
            p.set("nic.rx_usecs", rx_usecs, f"{src}: rx-usecs {rx_usecs}")
        if rx_frames is not None:
            p.set("nic.rx_frames", rx_frames, f"{src}: rx-frames {rx_frames}")
        if adaptive:
            p.set("driver.moderation", model.adaptive, f"{src}: Adaptive RX on — {label}")
            cqe = c.get("cqe mode rx")
            if cqe in ("on", "off"):
                mode = "cqe" if cqe == "on" else "eqe"
                p.set("driver.dim_mode", mode, f"{src}: CQE mode RX {cqe}")
        else:
            shown = _shown(c.get("adaptive rx") or "n/a")
            p.set("driver.moderation", "off", f"{src}: Adaptive RX {shown} — {label}")
            if c.get("cqe mode rx") == "on":
                p.notes.append(
                    f"{src}: CQE mode RX on without adaptive-rx: a static timer restarted by "
                    "each packet is not modelled (irqlab's timer starts at the first packet)"
                )
    tx_limit = _int(c.get("tx-frames-irq"))
    if model.tx_work_limit and tx_limit:
        p.set("driver.tx_work_limit", tx_limit, f"{src}: tx-frames-irq {tx_limit} (Tx work limit)")


def _napi_value(
    p: Probe, napis: list[dict[str, int]], source: str, attr: str
) -> tuple[int, str] | None:
    """The value of ``attr`` every NAPI has, or most of them (with a note: irqlab has one
    value for all vectors), and its source; None if no NAPI has it."""
    values = Counter(n[attr] for n in napis if attr in n)
    if not values:
        return None
    value, count = values.most_common(1)[0]
    total = sum(values.values())
    if len(values) > 1:
        spread = ", ".join(f"{v} on {c}" for v, c in itertools.islice(values.most_common(), 8))
        p.notes.append(
            f"{source}: {attr} differs between the NAPIs ({spread}); irqlab has one value for "
            f"every vector: the most common, {value}, is written"
        )
        return value, f"{source}: {attr} {value} on {count} of {total} NAPIs"
    where = f"on all {total} NAPIs" if total > 1 else "on its one NAPI"
    return value, f"{source}: {attr} {value} {where}"


def _host_settings(host: Host, p: Probe) -> None:
    """Each setting of :data:`HOST_SETTINGS`: from netlink's per-NAPI attribute if the host
    has it, else from its file, else from the kernel release (a feature it predates)."""
    napis, napi_source = host.napis(p.iface)
    if napis == []:
        napi_source += ": no NAPI"
    release = _version(p.kernel)
    for s in HOST_SETTINGS:
        name = s.key or (s.path or s.napi or "").rsplit("/", 1)[-1]
        keeps = f"{s.key} keeps its default" if s.key else "not read"
        found = _napi_value(p, napis, napi_source, s.napi) if napis and s.napi else None
        older = s.since is not None and release is not None and release < s.since
        since = f"Linux {s.since[0]}.{s.since[1]} and later" if s.since else ""
        if found is not None:
            raw, source = found
        elif s.path:
            path = s.path.format(iface=p.iface)
            text = host.read(path)
            if text is None:
                why = host.failure(path)
                if why == "not present" and older and s.before is not None:
                    _host_value(p, s, name, s.before, f"Linux {p.kernel}: none ({since})")
                elif why == "not present" and older:
                    p.notes.append(f"{path}: Linux {p.kernel} has none ({since}); {keeps}")
                elif why == "not present" and s.key:
                    absent = f" ({s.absent})" if s.absent else ""
                    p.notes.append(f"{path}: not present{absent}; {keeps}")
                elif why != "not present":
                    p.notes.append(f"{path}: {why}; {keeps}")
                continue
            raw = _int(text.strip() or None)
            if raw is None:
                p.notes.append(f"{path}: {_shown(text.strip())!r} is not an integer; {keeps}")
                continue
            source = f"{path}: {raw}{s.unit}"
        elif older and s.before is not None:
            _host_value(p, s, name, s.before, f"Linux {p.kernel}: none ({since})")
            continue
        else:
            if s.key:
                p.notes.append(
                    f"{s.napi}: per NAPI, only netlink's napi-get has it ({napi_source}); {keeps}"
                )
            continue
        _host_value(p, s, name, raw * s.scale if s.scale != 1 else raw, source)


def _host_value(p: Probe, s: HostSetting, name: str, value: Any, source: str) -> None:
    if s.key is None:
        p.unmodelled.append((name, str(value), s.what, source))
    elif s.needs_app and value:
        p.set_for_apps(s.key, value, source)
    else:
        p.set(s.key, value, source)


def _hz(host: Host, p: Probe) -> None:
    release = p.kernel or ""
    hz, source = None, ""
    plain_release = re.fullmatch(r"[\w.+~-]+", release) is not None  # no "/" to leave the tree
    config = host.read(f"/boot/config-{release}") if release and plain_release else None
    if config is not None:
        hz, source = parse_hz(config), f"/boot/config-{release}"
    if hz is None:
        packed = host.read_bytes("/proc/config.gz")
        if packed is not None:
            try:
                text = gunzip(packed).decode("utf-8", errors="replace")
                hz, source = parse_hz(text), "/proc/config.gz"
            except ValueError as e:
                p.notes.append(f"/proc/config.gz: {e}")
    if hz is None:
        usecs = p.get("kernel.netdev_budget_usecs")
        if usecs in HZ_OF_DEFAULT_BUDGET_USECS:
            hz = HZ_OF_DEFAULT_BUDGET_USECS[usecs]
            source = f"inferred: netdev_budget_usecs {usecs} is the default 2 jiffies at HZ={hz}"
    if hz is None:
        p.notes.append("kernel tick rate unknown (no kernel config): kernel.hz keeps 1000")
    else:
        p.set(
            "kernel.hz",
            hz,
            source if source.startswith("inferred") else f"{source}: CONFIG_HZ={hz}",
        )
    usecs = p.get("kernel.netdev_budget_usecs")
    jiffy_us = 1_000_000 // p.get("kernel.hz", 1000)
    if usecs is not None and 0 < usecs < 2 * jiffy_us:
        s = p.settings["kernel.netdev_budget_usecs"]
        p.notes.append(
            f"netdev_budget_usecs {usecs} is under 2 jiffies ({2 * jiffy_us} µs), irqlab's "
            "minimum: written as 0 (2 jiffies)"
        )
        p.set("kernel.netdev_budget_usecs", 0, s.source + " → 0 (2 jiffies)")


def _sample(host: Host, p: Probe, second: bool) -> tuple[Interrupts | None, int | None, int | None]:
    text = host.read("/proc/interrupts", second=second, limit=MAX_TABLE_BYTES)
    stats = f"/sys/class/net/{p.iface}/statistics"
    packets = _int((host.read(f"{stats}/rx_packets", second=second) or "").strip() or None)
    octets = _int((host.read(f"{stats}/rx_bytes", second=second) or "").strip() or None)
    if text is None:
        return None, packets, octets
    ints = parse_interrupts(text)
    del text
    for problem in ints.problems:
        p.notes.append(f"/proc/interrupts: {problem}")
    return ints, packets, octets


def _irqs(host: Host, p: Probe, online: list[int]) -> None:
    first, pk1, by1 = _sample(host, p, second=False)
    if first is None:
        why = host.failure("/proc/interrupts")
        why = "not readable" if why == "not present" else why
        p.notes.append(f"/proc/interrupts: {why}; IRQs, affinity and rates unknown")
        return
    second = None
    pk2 = by2 = None
    elapsed = p.interval_s
    if p.interval_s > 0:
        start = time.monotonic()
        if not host.recorded:
            time.sleep(p.interval_s)
        second, pk2, by2 = _sample(host, p, second=True)
        if not host.recorded:
            elapsed = time.monotonic() - start
        if second is None:
            name = "/proc/interrupts" + (".2" if host.recorded else "")
            why = host.failure(name)
            why = "no second sample" if why == "not present" else f"second sample {why}"
            p.notes.append(f"/proc/interrupts: {why}; no IRQ rates")
    if pk1 is not None and pk2 is not None and elapsed > 0:
        p.rx_pps = max(pk2 - pk1, 0) / elapsed
        if by1 is not None and by2 is not None and pk2 > pk1:
            p.rx_bytes_per_packet = (by2 - by1) / (pk2 - pk1)
    queue, other = _find_vectors(host, p, first)
    cores = {cpu: core for core, cpu in enumerate(online)}
    for v in queue + other:
        _rate(v, first, second, elapsed)
        _affinity(host, v, cores)
    queue.sort(key=lambda v: (v.queue, v.irq))
    p.vectors, p.other_vectors = queue, other
    _pin(p, online)


def _find_vectors(host: Host, p: Probe, ints: Interrupts) -> tuple[list[Vector], list[Vector]]:
    """The interface's queue vectors (by their names, as the drivers write them) and its
    device's other vectors (the PCI device's msi_irqs that are not queue vectors)."""
    iface = re.escape(p.iface)
    # (pattern, whether its vectors serve Rx alone)
    patterns: list[tuple[str, bool]] = [
        # ixgbe, igb, bnxt: IFACE-TxRx-N; i40e, ice, iavf: DRIVER-IFACE-TxRx-N; bnx2x IFACE-fp-N
        (rf"(?:[\w.]+-)?{iface}-(?:TxRx|RxTx|fp)-(\d{{1,9}})", False),
        # separate Rx vectors: IFACE-rx-N
        (rf"(?:[\w.]+-)?{iface}-(?:rx|Rx)-(\d{{1,9}})", True),
    ]
    device = host.realname(f"/sys/class/net/{p.iface}/device")
    if p.bus:
        patterns.append((rf"mlx5_comp(\d{{1,9}})@pci:{re.escape(p.bus)}", False))
    if device is not None and device.name.startswith("virtio"):
        patterns.append((rf"{re.escape(device.name)}-input\.(\d{{1,9}})", True))
    compiled = [(re.compile(pat), rx_only) for pat, rx_only in patterns]
    msi: set[int] = set()
    if device is not None:
        for d in (device, device.parent):
            listed = host.listdir(f"{d}/msi_irqs")
            if listed is not None:
                msi = {int(n) for n in listed if n.isascii() and n.isdigit() and len(n) <= 9}
                break
    queue: list[Vector] = []
    other: list[Vector] = []
    dropped = 0
    for irq, names in ints.names.items():
        found: tuple[int, bool] | None = None
        for action in names.split(", "):
            for pat, rx_only in compiled:
                m = pat.fullmatch(action)
                if m:
                    found = (int(m[1]), rx_only)
                    break
            if found is not None:
                break
        if found is not None:
            if len(queue) < MAX_VECTORS:
                queue.append(Vector(irq=irq, name=names, queue=found[0], rx_only=found[1]))
            else:
                dropped += 1
        elif irq in msi:
            if len(other) < MAX_VECTORS:
                other.append(Vector(irq=irq, name=names))
            else:
                dropped += 1
    if dropped:
        p.notes.append(
            f"/proc/interrupts: {dropped} vectors of {p.iface} beyond {MAX_VECTORS} queue "
            f"vectors and {MAX_VECTORS} others (MAX_VECTORS) not read"
        )
    return queue, other


def _rate(v: Vector, first: Interrupts, second: Interrupts | None, elapsed: float) -> None:
    if second is None or elapsed <= 0:
        return
    a, b = first.counts_of(v.irq), second.counts_of(v.irq)
    if a is None or b is None or len(a) != len(b):
        return
    deltas = [max(y - x, 0) for x, y in zip(a, b, strict=True)]
    v.rate_per_s = sum(deltas) / elapsed
    if sum(deltas) > 0 and len(first.cpus) == len(deltas):
        v.busiest_cpu = first.cpus[deltas.index(max(deltas))]


def _affinity(host: Host, v: Vector, cores: dict[int, int]) -> None:
    """The core of vector ``v`` (``cores``: the irqlab core of each online CPU)."""
    base = f"/proc/irq/{v.irq}"
    v.affinity = _shown((host.read(f"{base}/smp_affinity_list") or "").strip()) or None
    v.effective = _shown((host.read(f"{base}/effective_affinity_list") or "").strip()) or None
    choices: list[tuple[str | None, str]] = [
        (v.effective, f"{base}/effective_affinity_list"),
        (v.affinity, f"{base}/smp_affinity_list"),
    ]
    for text, source in choices:
        if not text:
            continue
        try:
            cpus = [c for c in parse_cpulist(text) if c in cores]
        except ValueError:
            continue
        if len(cpus) == 1:
            v.core, v.core_source = cores[cpus[0]], f"{source}: {text}"
            return
        if cpus and v.busiest_cpu in cpus:
            v.core = cores[v.busiest_cpu]
            v.core_source = f"{source}: {text}; most of its IRQs on CPU {v.busiest_cpu}"
            return
        if cpus:
            v.core, v.core_source = cores[cpus[0]], f"{source}: {text}; the first"
            return


def _pin(p: Probe, online: list[int]) -> None:
    """nic.queues, nic.irq_affinity and nic.tx_irq from the queue vectors found."""
    found = p.vectors
    if not found:
        if p.driver:
            p.notes.append(
                f"no queue vectors of {p.iface} in /proc/interrupts: "
                "nic.irq_affinity left empty (vector i on core i mod host.cores)"
            )
        return
    kinds = {v.rx_only for v in found}
    if len(kinds) == 1:
        rx_only = kinds.pop()
        what = (
            "serve Rx alone: a Tx completion interrupts another vector"
            if rx_only
            else ("serve Rx and Tx: a Tx completion interrupts them")
        )
        p.set(
            "nic.tx_irq",
            not rx_only,
            f"/proc/interrupts: the queue vectors ({found[0].name}) {what}",
        )
    else:
        p.notes.append(
            "/proc/interrupts: some queue vectors serve Rx and Tx, some Rx alone; nic.tx_irq "
            "keeps its default"
        )
    if "nic.queues" not in p.settings:
        p.set("nic.queues", len(found), f"/proc/interrupts: {len(found)} queue vectors")
    queues = p.get("nic.queues")
    if queues is None:
        return
    if len(found) != queues:
        p.notes.append(
            f"{len(found)} queue vectors in /proc/interrupts for nic.queues = {queues}"
            + ("; the first ones are pinned" if len(found) > queues else "")
        )
    if len(found) < queues or not online:
        return
    used = found[:queues]
    if any(v.core is None for v in used):
        p.notes.append("an IRQ's affinity is unreadable: nic.irq_affinity left empty")
        return
    p.set(
        "nic.irq_affinity",
        [v.core for v in used],
        "/proc/irq/N/effective_affinity_list, else smp_affinity_list:",
    )


def _validate(p: Probe) -> None:
    """The scenario as a whole through the loader `irqlab check` uses; a value the core
    rejects in combination with the others is dropped with a note, and so is a value the
    scenario would ignore — silently if it is irqlab's default anyway (a TxRx vector's Tx
    interrupt on a host that does not forward)."""
    for _ in range(len(p.settings) + 1):
        try:
            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always", ConfigWarning)
                resolve(p.scenario())
        except ConfigError as e:
            if e.key is None or e.key not in p.settings:
                raise
            s = p.settings.pop(e.key)
            p.notes.append(f"{e} — read from {s.source}; not written")
            continue
        # a value the scenario would ignore (an ITR under an adaptive policy) is not a setting
        ignored = [w.message for w in said if isinstance(w.message, ConfigWarning)]
        for w in ignored:
            if w.key in p.settings:
                s = p.settings.pop(w.key)
                spec = spec_of(w.key)
                if spec is None or s.value != spec["default"]:
                    p.notes.append(f"{w} — read from {s.source}; not written")
        if not any(w.key in p.settings for w in ignored):
            return


# --- the scenario file --------------------------------------------------------------------

#: Sections of the written file, in order, and what each says first.
SECTIONS = {
    "host": None,
    "nic": None,
    "driver": None,
    "kernel": None,
    "socket": "what a socket gets by default (only [[app]] entries use it)",
    "platform": None,
}


def _section(key: str) -> str:
    """The table a key is written in: ``nic.queues`` → ``nic``; top-level keys → ``""``."""
    return key.split(".", 1)[0] if "." in key else ""


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _line(text: str) -> str:
    """``text`` as one line a comment can hold (a host's values may carry anything)."""
    return " ".join(_clean(text).split())


def _comment(text: str, width: int = 98) -> list[str]:
    """``text`` as ``#`` lines of at most ``width`` characters."""
    words, lines, line = _clean(text).split(), [], "#"
    for w in words:
        if len(line) + 1 + len(w) > width and line != "#":
            lines.append(line)
            line = "#  "
        line += " " + w
    lines.append(line)
    return lines


def _rate_text(x: float | None) -> str:
    return "—" if x is None else f"{x:,.0f}"


def render_toml(p: Probe) -> str:
    where = f"host {p.hostname}" if p.hostname else "this host"
    kernel = f" (Linux {p.kernel})" if p.kernel else ""
    driver = f", driver {p.driver}" + (f" {p.driver_version}" if p.driver_version else "")
    out = _comment(
        f"irqlab scenario probed from {where}{kernel}, interface {p.iface}"
        f"{driver if p.driver else ''}, by `irqlab probe`. Each value names where it was "
        "read; the costs under [platform] cannot be read from a host: they are irqlab's "
        "defaults, to calibrate (docs/probe.md)."
    )
    if p.notes:
        out += ["#", "# Notes:"]
        for note in p.notes:
            out += [
                ("# - " + line[2:]) if i == 0 else line for i, line in enumerate(_comment(note))
            ]
    out.append("")
    by_section: dict[str, list[Setting]] = {}
    for s in p.settings.values():
        if "." not in s.key:
            out.append(f"{s.key} = {_toml_value(s.value)}  # {_line(s.source)}")
        else:
            by_section.setdefault(s.key.split(".", 1)[0], []).append(s)
    out += ["", *_traffic_comment(p)]
    platform_defaults = [
        (key, spec)
        for key, spec in schema().items()
        if key.startswith("platform.") and key not in ("platform.preset", "platform.cpu_ghz")
    ]
    for section, intro in SECTIONS.items():
        rows = by_section.pop(section, [])
        extra = _section_extra(p, section)
        if not rows and not extra and section != "platform":
            continue
        out += ["", f"[{section}]"]
        if intro:
            out += _comment(intro)
        for s in rows:
            out.append(f"{s.key.split('.', 1)[1]} = {_toml_value(s.value)}  # {_line(s.source)}")
            if s.key == "nic.irq_affinity":
                out += _vector_comment(p)
        out += extra
        if section == "platform":
            out += _comment(
                "Costs: irqlab's defaults (Salah et al. 2007's Pentium 4) — calibrate them "
                "against this host (docs/probe.md), or delete them and set preset = "
                '"emmerich2015" for a 3.3 GHz Xeon forwarding 64 B frames.'
            )
            for key, spec in platform_defaults:
                value = _toml_value(spec["default"])
                out.append(f"{key.split('.', 1)[1]} = {value}  # default — calibrate")
    for section, rows in by_section.items():  # any other section the mapping may add
        out += ["", f"[{section}]"]
        out += [
            f"{s.key.split('.', 1)[1]} = {_toml_value(s.value)}  # {_line(s.source)}" for s in rows
        ]
    return "\n".join(out) + "\n"


def _traffic_comment(p: Probe) -> list[str]:
    text = (
        "[traffic] is the workload, not the host: not probed, so irqlab's default (Poisson "
        "arrivals, 100 kpps of 64 B frames, one flow) applies until you set it."
    )
    if p.rx_pps is not None:
        size = (
            f", {p.rx_bytes_per_packet:,.0f} B per packet on average"
            if p.rx_bytes_per_packet
            else ""
        )
        text += (
            f" Observed on {p.iface} over {p.interval_s:g} s: {p.rx_pps:,.0f} packets/s "
            f"received{size} (statistics/rx_packets, rx_bytes)."
        )
    return _comment(text)


def _section_extra(p: Probe, section: str) -> list[str]:
    lines = []
    for s in p.with_apps.values():
        if _section(s.key) == section:
            lines.append(
                f"# {s.key.split('.', 1)[1]} = {_toml_value(s.value)}  # {_line(s.source)} — "
                "takes effect with an application: uncomment it once the scenario has an [[app]]"
            )
    if section == "kernel" and p.unmodelled:
        lines.append("# Read, but not modelled yet (irqlab has no key for these):")
        for name, value, what, source in p.unmodelled:
            lines.append(f"#   {_line(name)} = {_line(value)}  ({what}; {_line(source)})")
    if section == "driver" and p.driver:
        version = f", version {p.driver_version}" if p.driver_version else ""
        lines.append(_line(f"# the driver: {p.driver}{version} ({p.driver_source})"))
    return lines


def _vector_comment(p: Probe) -> list[str]:
    rate = f"IRQs/s over {p.interval_s:g} s" if p.interval_s else "IRQs/s"
    lines = [f"#   vector  IRQ  core  affinity  {rate:>18}  name"]
    for i, v in enumerate(p.vectors):
        lines.append(
            f"#   {i:>6}  {v.irq:>3}  {'' if v.core is None else v.core:>4}  "
            f"{_line(v.affinity or '?'):>8}  {_rate_text(v.rate_per_s):>18}  {_line(v.name)}"
        )
    for v in p.other_vectors:
        lines.append(
            f"#   {'other':>6}  {v.irq:>3}  {'':>4}  {_line(v.affinity or '?'):>8}  "
            f"{_rate_text(v.rate_per_s):>18}  {_line(v.name)}"
        )
    return lines


# --- the summary `irqlab probe` prints ------------------------------------------------------


def summary(p: Probe) -> list[Any]:
    """Rich tables for a person: the values written and their sources, the vectors with their
    observed rates, and the notes. What a host wrote is shown as text, never as markup."""
    from rich.markup import escape
    from rich.table import Table

    def text(value: str) -> str:
        return escape(_line(value))

    title = f"irqlab probe — {p.iface}" + (f" ({p.driver})" if p.driver else "")
    if p.hostname:
        title += f" on {p.hostname}"
    t = Table(title=text(title), title_justify="left", show_header=True, header_style="bold")
    t.add_column("key", no_wrap=True)
    t.add_column("value", justify="right", overflow="fold", max_width=24)
    t.add_column("source", overflow="fold")
    order = {name: i for i, name in enumerate(["", *SECTIONS])}
    for s in sorted(p.settings.values(), key=lambda s: order.get(_section(s.key), len(order))):
        t.add_row(s.key, text(_toml_value(s.value)), text(s.source.rstrip(":")))
    for s in p.with_apps.values():
        t.add_row(
            f"({s.key})",
            text(_toml_value(s.value)),
            text(f"{s.source}; needs an [[app]]: written commented out"),
        )
    if p.rx_pps is not None:
        t.add_row("(observed)", f"{p.rx_pps:,.0f} pps", text(f"{p.iface} received, not written"))
    for name, value, what, source in p.unmodelled:
        t.add_row(text(f"({name})"), text(value), text(f"{source} ({what}); not modelled yet"))
    out: list[Any] = [t]
    if p.vectors or p.other_vectors:
        rate = f"IRQs/s ({p.interval_s:g} s)" if p.interval_s else "IRQs/s"
        v = Table(show_header=True, header_style="bold")
        for name, justify in (
            ("vector", "right"),
            ("IRQ", "right"),
            ("name", "left"),
            ("affinity", "right"),
            ("core", "right"),
            (rate, "right"),
            ("busiest CPU", "right"),
        ):
            v.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
        for i, vec in enumerate(p.vectors):
            v.add_row(*_vector_row(str(i), vec))
        for vec in p.other_vectors:
            v.add_row(*_vector_row("other", vec))
        out.append(v)
    return out


def _vector_row(label: str, v: Vector) -> list[str]:
    from rich.markup import escape

    return [
        label,
        str(v.irq),
        escape(_line(v.name)),
        escape(_line(v.affinity or "?")),
        "" if v.core is None or v.queue is None else str(v.core),
        _rate_text(v.rate_per_s),
        "" if v.busiest_cpu is None else str(v.busiest_cpu),
    ]


def write(p: Probe, out: Path, *, force: bool = False) -> None:
    """Writes the scenario to ``out``; refuses to replace a file unless ``force``."""
    if out.exists() and not force:
        raise ConfigError(f"{out} exists; --force to overwrite it", None)
    try:
        out.write_text(p.toml(), encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"{out}: cannot write ({e.strerror})", None) from None
