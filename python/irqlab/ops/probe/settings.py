"""The probe's tables: which scenario key comes from where on a host, and why every other key
has none.

- :data:`DRIVERS` — how each driver's ``ethtool -c`` values map to irqlab's NIC and policy;
- :data:`HOST_SETTINGS` — the settings a host exposes as one integer (a sysctl, a sysfs file, a
  netlink attribute per NAPI) and the key each gives; ``irqlab tune`` writes its commands from
  the same table;
- :data:`PROBED` — every key the probe reads, and where; :data:`NOT_PROBED` — why each other
  key has no counterpart on a host. A test holds the two to the schema, so a key added to
  irqlab is either probed or said not to be.

The readers look the tables up here when they run (``settings.HOST_SETTINGS``), so that a test
can give one more entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: The kernel's default ``netdev_budget_usecs`` is 2 jiffies: from it the tick rate can be told.
HZ_OF_DEFAULT_BUDGET_USECS = {2000: 1000, 6666: 300, 8000: 250, 20000: 100}


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
    #: a switch: the host's 0 and 1 are the key's false and true (another value is a mode
    #: irqlab does not model, noted)
    boolean: bool = False
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
        "kernel.threaded_napi",
        "1: each NAPI polls in a kernel thread of its own",
        "/sys/class/net/{iface}/threaded",
        napi="threaded",
        boolean=True,
        absent="a device without NAPI?",
        since=(5, 12),
        before=False,
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
        "the sending thread of a veth pair's other end is the workload (irqlab lab's sender)",
        ("sender.core", "sender.cost_ns", "sender.cost_dist"),
    ),
    (
        "a veth pair's end is the lab's host (docs/veth.md); the probe models a NIC's queues",
        ("nic.device",),
    ),
    (
        "the NAPI thread's CPU and policy are a task's affinity and scheduling class (taskset "
        "-p, chrt -p on napi/IFACE-N), not the device's; the probe does not read them yet",
        (
            "kernel.napi_thread_core",
            "kernel.napi_thread_policy",
            "napi.N.thread_core",
            "napi.N.thread_policy",
        ),
    ),
    (
        "each NAPI's own setting is in the probe's NAPI table, and the most common value is "
        "written as the device's (kernel.*); the probe does not write [[napi]] entries yet",
        (
            "napi.N.defer_hard_irqs",
            "napi.N.gro_flush_timeout_ns",
            "napi.N.irq_suspend_timeout_ns",
            "napi.N.threaded",
        ),
    ),
    (
        "whether the traffic is routed is the workload's: net.ipv4.ip_forward only permits it "
        "(hosts that run containers set it without routing anything)",
        ("host.forward",),
    ),
    (
        "the applications studied, and the socket, epoll and AF_XDP options each program sets "
        "for itself: [[app]] entries are yours to add",
        (
            "app.N.core",
            "app.N.cost_ns",
            "app.N.cost_dist",
            "app.N.cost_ns_per_byte",
            "app.N.flows",
            "app.N.rcvbuf_bytes",
            "app.N.io",
            "app.N.xsk_ring",
            "app.N.need_wakeup",
            "app.N.xsk_poll_core",
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
            "platform.ipi_wakeup_ns",
            "platform.ring_switch_ns",
            "platform.busy_iter_ns",
            "platform.irq_delivery_ns",
            "platform.writeback_ns",
            "platform.irq_indirect_ns",
            "platform.cold_packets",
            "platform.cold_packet_ns",
            "platform.napi_switch_ns",
            "platform.ring_contention_ns",
            "platform.skb_free_ns",
            "platform.xdp_ns",
            "epoll.batch_ns",
        ),
    ),
    ("a named set of costs: chosen, not read", ("platform.preset",)),
    (
        "deferred skb frees take effect only with platform.skb_free_ns, a cost no file gives "
        "(docs/costs.md); written without it, net.core.skb_defer_max would only warn",
        ("kernel.skb_defer_max",),
    ),
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
            "adapt.t_min_ns",
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
