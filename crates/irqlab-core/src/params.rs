//! The key table: every key of a scenario, its type, default, allowed range and meaning, as
//! data (written in the types of [`crate::schema`]).
//!
//! This table is the single source of truth. The core validates against it; the Python layer
//! reads it (through the bindings) to validate, to print `--help` and to document keys; a test
//! holds `docs/scenario.md` to it. A scenario arrives as flat `(dotted key, value)` pairs;
//! [`Params::from_pairs`] checks each against the table and fills in the defaults.
//!
//! Two kinds of keys: plain keys ([`PARAMS`], e.g. `nic.queues`) and the fields of numbered
//! entries ([`TABLES`]): `app.0.core`, `app.1.core`, `traffic.classes.0.share`, … — what a
//! TOML array of tables (`[[app]]`) flattens to. Entries are numbered from 0 without gaps; an
//! entry's fields not given take their defaults.
//!
//! The parts read their own keys (each declares their names as constants) and the closed sets
//! of names (schemes, policies, strategies, traffic kinds, …) come from the parts' registries;
//! the table only describes them. Nothing below `scenario` imports this module.

use crate::error::Error;
pub use crate::schema::{
    Default, Kind, Lookup, ParamSpec, Params, Preset, Schema, TableSpec, Value, field_key,
};

/// Names of the schemes, in the order they are documented: Salah et al. (2007)'s seven and
/// their hybrid, then Linux NAPI.
pub const SCHEMES: &[&str] = crate::scheme::Scheme::NAMES;
/// Platform presets: named sets of costs.
pub const PLATFORM_PRESETS: &[&str] = &[
    "none",
    "salah2007",
    "emmerich2015",
    "chang2007",
    "beifuss2016",
    "busypoll2013",
];
/// Interrupt moderation policies (`driver.moderation`).
pub const MODERATION: &[&str] = crate::moderation::NAMES;
/// Receive-load controllers (`adapt.scheme`).
pub const ADAPT_SCHEMES: &[&str] = crate::adapt::Scheme::NAMES;
/// Cost distributions.
pub const DISTS: &[&str] = crate::dist::Dist::NAMES;

const fn int(min: i128, max: i128) -> Kind {
    Kind::Int { min, max }
}
const fn float(min: f64, max: f64) -> Kind {
    Kind::Float {
        min,
        max,
        min_open: false,
    }
}
const fn positive(max: f64) -> Kind {
    Kind::Float {
        min: 0.0,
        max,
        min_open: true,
    }
}
const fn p(key: &'static str, kind: Kind, default: Default, doc: &'static str) -> ParamSpec {
    ParamSpec {
        key,
        kind,
        default,
        doc,
    }
}

use self::Default::{Bool as B, EmptyList, Float as F, Int as I, Str as S};

const COST_MAX_NS: f64 = 1e9;
/// Cores and queue vectors allowed at most.
pub const MAX_CORES: usize = 1024;
pub const MAX_VECTORS: usize = 1024;

/// The schema. Order is the order of documentation.
pub const PARAMS: &[ParamSpec] = &[
    p(
        "scheme",
        Kind::OneOf(SCHEMES),
        S("napi"),
        "interrupt-handling scheme (a preset of the host model)",
    ),
    p(
        "run.seed",
        int(0, u64::MAX as i128),
        I(1),
        "random seed of the run",
    ),
    p(
        "run.replication",
        int(0, crate::rng::MAX_REPLICATION as i128),
        I(0),
        "index of an independent, non-overlapping set of random streams under the same seed",
    ),
    p(
        "run.duration_ms",
        Kind::Float {
            min: 0.0,
            max: 3.6e6,
            min_open: true,
        },
        F(100.0),
        "measured simulated time after the warm-up, ms",
    ),
    p(
        "run.warmup_ms",
        float(0.0, 3.6e6),
        F(10.0),
        "simulated time before measuring starts, ms",
    ),
    p(
        "host.cores",
        int(1, MAX_CORES as i128),
        I(1),
        "CPU cores; each is its own priority server with its own softirq state, poll list and ksoftirqd",
    ),
    p(
        "host.forward",
        Kind::Bool,
        B(false),
        "forward every packet that no app reads: after protocol processing it is sent on its vector's Tx ring (a router)",
    ),
    p(
        "traffic.kind",
        Kind::OneOf(crate::traffic::TrafficKind::NAMES),
        S("poisson"),
        "arrival process (pareto-onoff: aggregated Pareto ON/OFF sources, self-similar; pcap: replay of traffic.pcap; rr: requests answered by the apps, rr.*)",
    ),
    p(
        "traffic.rate_pps",
        float(1e-3, 1e9),
        F(100_000.0),
        "mean offered packet rate, packets/s",
    ),
    p(
        "traffic.size_bytes",
        int(1, 65_535),
        I(64),
        "frame size, bytes (when traffic.sizes = \"fixed\")",
    ),
    p(
        "traffic.sizes",
        Kind::Text(
            "\"fixed\", a built-in table (\"salah2007\", \"imix\") or \"bytes:weight, ...\" pairs",
        ),
        S("fixed"),
        "frame-size distribution: fixed (traffic.size_bytes) or an empirical table",
    ),
    p(
        "traffic.sources",
        int(1, 4096),
        I(8),
        "pareto-onoff: number of ON/OFF sources aggregated",
    ),
    p(
        "traffic.alpha_on",
        Kind::Float {
            min: 1.0,
            max: 10.0,
            min_open: true,
        },
        F(1.3),
        "pareto-onoff: Pareto shape of the ON periods",
    ),
    p(
        "traffic.alpha_off",
        Kind::Float {
            min: 1.0,
            max: 10.0,
            min_open: true,
        },
        F(1.5),
        "pareto-onoff: Pareto shape of the OFF periods",
    ),
    p(
        "traffic.on_min_bytes",
        int(1, 65_535),
        I(64),
        "pareto-onoff: shortest ON period, as the wire time of this many bytes (Pareto location)",
    ),
    p(
        "traffic.line_rate_gbps",
        positive(1e4),
        F(1.0),
        "pareto-onoff: line rate during ON (frames back to back with 20 bytes of preamble and gap), Gbit/s",
    ),
    p(
        "traffic.flows",
        int(1, 1 << 20),
        I(1),
        "flows; each packet belongs to one, drawn by popularity; RSS steers a flow to a queue",
    ),
    p(
        "traffic.flow_zipf_s",
        float(0.0, 10.0),
        F(0.0),
        "flow popularity: 0 = uniform, s > 0 = Zipf (flow k has weight 1/(k+1)^s)",
    ),
    p(
        "traffic.pcap",
        Kind::Text("a path to a pcap or pcapng capture, gzip-compressed or not"),
        S(""),
        "pcap: the capture replayed; each packet's timestamp, frame length and 5-tuple give the arrivals, sizes and flows",
    ),
    p(
        "traffic.speedup",
        positive(1e6),
        F(1.0),
        "pcap: time runs this many times faster than in the capture (10: a 1 Gbit/s capture replayed at 10 Gbit/s)",
    ),
    p(
        "traffic.loop",
        int(0, 1_000_000),
        I(1),
        "pcap: passes over the capture, each after the previous one's last packet and a mean gap (0: until the run ends)",
    ),
    p(
        "nic.device",
        Kind::OneOf(crate::nic::config::Device::NAMES),
        S("hw"),
        "the receiving device: hw (a NIC: DMA, interrupts, moderation) or veth (one end of a veth pair: no interrupt; the peer's transmit puts the packet in its 256-entry ring and schedules its NAPI on the sender's core)",
    ),
    p(
        "nic.ring_descriptors",
        int(1, 1 << 20),
        I(1024),
        "Rx ring slots; a packet holds one from arrival to the end of its protocol processing (veth: VETH_RING_SIZE = 256, fixed)",
    ),
    p(
        "nic.itr_us",
        float(0.0, 1e6),
        F(0.0),
        "ITR: minimum interval between two IRQs of the vector, us (0 = off)",
    ),
    p(
        "nic.rx_usecs",
        float(0.0, 1e6),
        F(0.0),
        "absolute timeout from the first unsignalled packet to its IRQ, us (0 = none)",
    ),
    p(
        "nic.rx_frames",
        int(0, 1 << 20),
        I(0),
        "IRQ once this many packets wait to be signalled (0 = none)",
    ),
    p(
        "nic.cause_mode",
        Kind::OneOf(crate::nic::CauseMode::NAMES),
        S("latched"),
        "latched: a cause raised while masked interrupts at unmask (Intel EICR); armed: re-enabling after an empty poll discards it",
    ),
    p(
        "nic.queues",
        int(1, MAX_VECTORS as i128),
        I(1),
        "queue vectors, each with its own IRQ line, NAPI, moderation state, Rx ring per traffic class and Tx ring",
    ),
    p(
        "nic.irq_affinity",
        Kind::IntList {
            min: 0,
            max: MAX_CORES as i128 - 1,
            max_len: MAX_VECTORS,
        },
        EmptyList,
        "core of each vector's IRQ and NAPI, one entry per vector (empty = vector i on core i mod host.cores)",
    ),
    p(
        "nic.rss_table_size",
        int(1, 65_536),
        I(128),
        "RSS indirection table entries, filled round robin with the queues (ixgbe: 128, i40e: 512)",
    ),
    p(
        "nic.tx_ring_descriptors",
        int(0, 1 << 20),
        I(512),
        "Tx ring slots per vector; a packet holds one from transmit until the driver cleans it (0 = Rx-only vectors, no Tx ring)",
    ),
    p(
        "nic.tx_irq",
        Kind::Bool,
        B(true),
        "a Tx completion raises its vector's interrupt cause, as on Intel TxRx vectors (false: Tx is cleaned only when Rx polls)",
    ),
    p(
        "nic.link_gbps",
        positive(1e4),
        F(10.0),
        "link speed, Gbit/s: transmitted frames leave at this rate (with 20 bytes of preamble and gap)",
    ),
    p(
        "sender.core",
        int(0, MAX_CORES as i128 - 1),
        I(0),
        "veth: the core of the sending thread; without threaded NAPI, also the core whose NET_RX_SOFTIRQ polls the veth's NAPI (veth_xmit schedules it there)",
    ),
    p(
        "sender.cost_ns",
        float(0.0, COST_MAX_NS),
        F(0.0),
        "veth: the sending thread's CPU time per packet (syscall, stack transmit, veth_xmit), at the thread level of sender.core, charged to cpu.sender; it sends at the traffic's arrival times, late sends back to back (0 = no sending thread: packets enter the ring at their arrival times), ns",
    ),
    p(
        "sender.cost_dist",
        Kind::OneOf(DISTS),
        S("deterministic"),
        "distribution of sender.cost_ns",
    ),
    p(
        "socket.rcvbuf_bytes",
        int(1, i32::MAX as i128),
        I(212_992),
        "socket receive buffer, bytes of skb truesize (net.core.rmem_default; SO_RCVBUF)",
    ),
    p(
        "socket.truesize_bytes",
        int(0, 1 << 20),
        I(0),
        "truesize charged per packet in a socket (0 = as ixgbe builds skbs: 2304 bytes at the standard MTU; 4352 per 3 KiB of frame with jumbo frames)",
    ),
    // busy polling, preferred busy polling, IRQ suspension and request/response (busypoll.rs)
    p(
        "socket.busy_read_us",
        float(0.0, i32::MAX as f64),
        F(0.0),
        "socket busy polling: a recv that finds the socket empty polls the device queue for up to this long before sleeping, us of 1024 ns as the kernel counts (SO_BUSY_POLL; net.core.busy_read; 0 = off)",
    ),
    p(
        "socket.busy_poll_budget",
        int(0, 65_535),
        I(0),
        "packets each poll of a socket's busy loop may process (SO_BUSY_POLL_BUDGET; 0 = BUSY_POLL_BUDGET, 8)",
    ),
    p(
        "socket.prefer_busy_poll",
        Kind::Bool,
        B(false),
        "preferred busy polling for recv (SO_PREFER_BUSY_POLL): the softirq hands the NAPI to the poller and the IRQ stays masked; needs kernel.napi_defer_hard_irqs and kernel.gro_flush_timeout_ns",
    ),
    p(
        "kernel.busy_poll_us",
        float(0.0, i32::MAX as f64),
        F(0.0),
        "busy polling of poll/select/epoll: how long epoll_wait polls when epoll.busy_poll_us is 0, us of 1024 ns (net.core.busy_poll; 0 = off)",
    ),
    p(
        "epoll.busy_poll_us",
        float(0.0, i32::MAX as f64),
        F(0.0),
        "how long an epoll_wait with nothing ready busy-polls, us of 1024 ns (EPIOCSPARAMS busy_poll_usecs; 0 = kernel.busy_poll_us)",
    ),
    p(
        "epoll.busy_poll_budget",
        int(0, 65_535),
        I(0),
        "packets each poll of epoll's busy loop may process (EPIOCSPARAMS busy_poll_budget; 0 = 8)",
    ),
    p(
        "epoll.prefer_busy_poll",
        Kind::Bool,
        B(false),
        "preferred busy polling for epoll (EPIOCSPARAMS prefer_busy_poll): an empty epoll_wait polls once even with no busy-poll time; with kernel.irq_suspend_timeout_ns, IRQ suspension",
    ),
    p(
        "epoll.maxevents",
        int(1, 1 << 20),
        I(64),
        "ready events one epoll_wait returns at most (each queued request is one ready event)",
    ),
    p(
        "epoll.timeout_ms",
        Kind::IntOneOf(&[-1, 0]),
        I(-1),
        "epoll_wait's timeout: -1 blocks until an event; 0 returns at once (and never busy-polls)",
    ),
    p(
        "epoll.batch_ns",
        float(0.0, COST_MAX_NS),
        F(0.0),
        "CPU cost of one return from epoll_wait (the syscall and the event copy), charged to the app, ns",
    ),
    p(
        "kernel.irq_suspend_timeout_ns",
        float(0.0, 1e12),
        F(0.0),
        "IRQ suspension (Linux 6.13, per NAPI): while epoll_wait keeps finding events, IRQs stay off for up to this long, ns (needs epoll.prefer_busy_poll and software IRQ coalescing; 0 = off)",
    ),
    p(
        "platform.busy_iter_ns",
        positive(COST_MAX_NS),
        F(100.0),
        "one iteration of a busy loop that finds nothing (the poll reading no descriptor, the loop-end check, cpu_relax), ns",
    ),
    p(
        "rr.clients",
        int(1, 1 << 16),
        I(1),
        "traffic.kind = \"rr\": clients, each a flow of its own",
    ),
    p(
        "rr.outstanding",
        int(1, 1 << 12),
        I(1),
        "rr, closed loop: requests each client keeps in flight",
    ),
    p(
        "rr.remote_us",
        float(0.0, 1e9),
        F(10.0),
        "rr: from a response leaving the wire to the client's next request arriving (the wire and the peer), mean, us",
    ),
    p(
        "rr.remote_dist",
        Kind::OneOf(DISTS),
        S("deterministic"),
        "distribution of rr.remote_us",
    ),
    p(
        "rr.rate_rps",
        float(0.0, 1e9),
        F(0.0),
        "rr: 0 = closed loop; otherwise an open-loop Poisson stream of this many requests per second, spread round robin over the clients",
    ),
    p(
        "rr.response_bytes",
        int(60, 65_535),
        I(64),
        "rr: frame size of a response",
    ),
    p(
        "rr.timeout_us",
        float(1.0, 1e9),
        F(1000.0),
        "rr, closed loop: a request or response dropped anywhere is sent again this long after the drop, us",
    ),
    p(
        "platform.preset",
        Kind::OneOf(PLATFORM_PRESETS),
        S("none"),
        "a named set of platform costs (salah2007: Salah et al. 2007, section 4); keys given explicitly win",
    ),
    p(
        "platform.cpu_ghz",
        positive(100.0),
        F(3.0),
        "core clock, GHz (for cycles_per_packet)",
    ),
    p(
        "platform.irq_ns",
        float(0.0, COST_MAX_NS),
        F(3730.0),
        "one hard interrupt: entry, ISR, exit, ns",
    ),
    p(
        "platform.irq_dist",
        Kind::OneOf(DISTS),
        S("exponential"),
        "distribution of irq_ns",
    ),
    p(
        "platform.proto_ns",
        float(0.0, COST_MAX_NS),
        F(5340.0),
        "protocol processing of one packet (fixed part), ns",
    ),
    p(
        "platform.proto_dist",
        Kind::OneOf(DISTS),
        S("exponential"),
        "distribution of proto_ns",
    ),
    p(
        "platform.proto_ns_per_byte",
        float(0.0, 1e6),
        F(0.0),
        "protocol processing per frame byte (deterministic), ns",
    ),
    p(
        "platform.poll_ns",
        float(0.0, COST_MAX_NS),
        F(0.0),
        "one call of the driver poll function, ns",
    ),
    p(
        "platform.poll_dist",
        Kind::OneOf(DISTS),
        S("deterministic"),
        "distribution of poll_ns",
    ),
    p(
        "platform.softirq_ns",
        float(0.0, COST_MAX_NS),
        F(0.0),
        "one net_rx_action run, ns",
    ),
    p(
        "platform.softirq_dist",
        Kind::OneOf(DISTS),
        S("deterministic"),
        "distribution of softirq_ns",
    ),
    p(
        "platform.mask_ns",
        float(0.0, COST_MAX_NS),
        F(0.0),
        "masking the vector in the ISR, ns",
    ),
    p(
        "platform.mask_dist",
        Kind::OneOf(DISTS),
        S("deterministic"),
        "distribution of mask_ns",
    ),
    p(
        "platform.unmask_ns",
        float(0.0, COST_MAX_NS),
        F(0.0),
        "re-enabling the vector after napi_complete_done, ns",
    ),
    p(
        "platform.unmask_dist",
        Kind::OneOf(DISTS),
        S("deterministic"),
        "distribution of unmask_ns",
    ),
    p(
        "platform.poll_timer_ns",
        float(0.0, COST_MAX_NS),
        F(1590.0),
        "one polling-timer interrupt that starts a poll (poll, napi-poll, hybrid; Salah's T_PollOH), ns",
    ),
    p(
        "platform.poll_timer_dist",
        Kind::OneOf(DISTS),
        S("exponential"),
        "distribution of poll_timer_ns",
    ),
    p(
        "platform.wakeup_ns",
        float(0.0, COST_MAX_NS),
        F(0.0),
        "waking the core from an idle state: added to the first job after an idle period longer than wakeup_after_us, ns",
    ),
    p(
        "platform.wakeup_after_us",
        float(0.0, 1e9),
        F(0.0),
        "idle time after which waking up costs wakeup_ns, us",
    ),
    p(
        "platform.ctx_switch_ns",
        float(0.0, COST_MAX_NS),
        F(0.0),
        "a context switch into a thread (ksoftirqd, an app) when it gets the core, ns",
    ),
    p(
        "platform.ctx_switch_dist",
        Kind::OneOf(DISTS),
        S("deterministic"),
        "distribution of ctx_switch_ns",
    ),
    p(
        "platform.tx_ns",
        float(0.0, COST_MAX_NS),
        F(250.0),
        "forwarding: transmitting one packet (neighbour output, qdisc, driver xmit), in softirq after its protocol processing, ns",
    ),
    p(
        "platform.tx_dist",
        Kind::OneOf(DISTS),
        S("deterministic"),
        "distribution of tx_ns",
    ),
    p(
        "platform.tx_clean_ns",
        float(0.0, COST_MAX_NS),
        F(50.0),
        "forwarding: cleaning one completed Tx descriptor in the poll, before Rx, ns",
    ),
    p(
        "platform.tx_clean_dist",
        Kind::OneOf(DISTS),
        S("deterministic"),
        "distribution of tx_clean_ns",
    ),
    p(
        "platform.task_wakeup_ns",
        float(0.0, COST_MAX_NS),
        F(0.0),
        "waking a sleeping app (try_to_wake_up), charged to the softirq that queued its packet, ns",
    ),
    p(
        "platform.ipi_wakeup_ns",
        float(0.0, COST_MAX_NS),
        F(0.0),
        "waking a thread on another core that has been idle longer than wakeup_after_us: the waker's reschedule IPI (a VM exit in a guest), charged to the waker besides task_wakeup_ns, ns",
    ),
    p(
        "platform.task_wakeup_dist",
        Kind::OneOf(DISTS),
        S("deterministic"),
        "distribution of task_wakeup_ns",
    ),
    p(
        "platform.ring_switch_ns",
        float(0.0, COST_MAX_NS),
        F(0.0),
        "ll-rr, ll-wfq: one visit of an Rx ring in the LL driver's poll (its overhead per ring switch), ns",
    ),
    p(
        "platform.irq_delivery_ns",
        float(0.0, COST_MAX_NS),
        F(0.0),
        "a delay, not CPU time: from the NIC's decision to interrupt to the handler starting on the core (MSI-X write across PCIe, the interrupt controller, the core's entry); the vector's IRQ is committed meanwhile, ns",
    ),
    p(
        "platform.writeback_ns",
        float(0.0, COST_MAX_NS),
        F(0.0),
        "a delay, not CPU time: from a packet's DMA into the Rx ring to its descriptor's write-back, when the driver's poll can see it and it raises the interrupt cause, ns",
    ),
    p(
        "platform.irq_indirect_ns",
        float(0.0, COST_MAX_NS),
        F(0.0),
        "the indirect cost of a hard interrupt (caches and pipeline refilled): added once to the next job that runs on the core after one or more hard-IRQ handlers, charged to that job's category, ns",
    ),
    p(
        "platform.cold_packets",
        int(0, 65_536),
        I(0),
        "batching economies: the first packets of a poll cost more (cold caches, descriptor prefetch not yet under way); over how many packets the extra cost falls linearly from platform.cold_packet_ns to 0 (0: none), packets",
    ),
    p(
        "platform.cold_packet_ns",
        float(0.0, COST_MAX_NS),
        F(0.0),
        "batching economies: the extra protocol-processing time of a poll's first packet; the i-th packet pays cold_packet_ns x max(0, 1 - (i-1)/cold_packets), charged like its own processing, ns",
    ),
    p(
        "platform.napi_switch_ns",
        float(0.0, COST_MAX_NS),
        F(0.0),
        "a NAPI poll call of another vector than the last one polled on the same core costs this much more (the second context's cache footprint), charged like platform.poll_ns, ns",
    ),
    p(
        "platform.ring_contention_ns",
        float(0.0, COST_MAX_NS),
        F(0.0),
        "a busy poller's protocol processing on one core overlapping its vector's interrupt handler on another core costs it this much more, once per overlap (the vector's cache lines bouncing between the cores), charged to cpu.busy_poll, ns",
    ),
    p(
        "platform.skb_free_ns",
        float(0.0, COST_MAX_NS),
        F(0.0),
        "freeing one skb read by an app (napi_consume_skb): the app frees it at once if its core allocated it, else it defers the free to the allocating core's list (skb_attempt_defer_free, up to kernel.skb_defer_max), freed by that core's next net_rx_action (skb_defer_free_flush, charged to its softirq) or by the app when the list is full; an IPI raises NET_RX there when the list passes half of skb_defer_max (0: frees not modelled), ns",
    ),
    p(
        "platform.xdp_ns",
        float(0.0, COST_MAX_NS),
        F(50.0),
        "an AF_XDP app's packet in the NAPI poll: the driver's Rx descriptor, the XDP program and XDP_REDIRECT into the XSK's Rx ring, instead of protocol processing (platform.proto_ns), deterministic, charged like it (1 / 20 Mpps per core, AF_XDP zero-copy to user space: Høiland-Jørgensen et al., The eXpress Data Path, CoNEXT 2018, §6.7), ns",
    ),
    p(
        "kernel.napi_weight",
        int(1, 65_536),
        I(64),
        "per-NAPI budget of one poll call (NAPI_POLL_WEIGHT)",
    ),
    p(
        "kernel.netdev_budget",
        int(1, 1 << 20),
        I(300),
        "packets per net_rx_action run (net.core.netdev_budget)",
    ),
    p(
        "kernel.netdev_budget_usecs",
        int(0, 10_000_000),
        I(0),
        "time limit of one net_rx_action run, us, checked in jiffies (0 = 2 jiffies, the kernel default and minimum)",
    ),
    p(
        "kernel.hz",
        Kind::IntOneOf(&[100, 250, 300, 1000]),
        I(1000),
        "kernel tick rate (jiffy = 1/hz s)",
    ),
    p(
        "kernel.max_softirq_restart",
        int(1, 1000),
        I(10),
        "handle_softirqs passes before ksoftirqd takes over (MAX_SOFTIRQ_RESTART)",
    ),
    p(
        "kernel.max_softirq_time_ms",
        positive(1000.0),
        F(2.0),
        "handle_softirqs restart window, ms, in jiffies (MAX_SOFTIRQ_TIME)",
    ),
    p(
        "kernel.napi_defer_hard_irqs",
        int(0, i32::MAX as i128),
        I(0),
        "software IRQ coalescing: empty polls, each gro_flush_timeout_ns apart, before the vector is re-enabled (napi_defer_hard_irqs)",
    ),
    p(
        "kernel.gro_flush_timeout_ns",
        float(0.0, 1e9),
        F(0.0),
        "software IRQ coalescing: timer that re-polls instead of re-enabling the vector, ns (gro_flush_timeout; needs napi_defer_hard_irqs > 0)",
    ),
    p(
        "kernel.sched_slice_us",
        float(0.0, 1e6),
        F(0.0),
        "time slice of the threads (apps, ksoftirqd) sharing a core, us (0 = EEVDF's base slice: 750 x (1 + log2(min(cores, 8))))",
    ),
    p(
        "kernel.ksoftirqd_policy",
        Kind::OneOf(crate::kernel::config::KsoftirqdPolicy::NAMES),
        S("fair"),
        "how ksoftirqd shares the thread level with the apps: fair (round robin in slices, EEVDF) or below-apps (Linux 2.6.18's O(1) scheduler with ksoftirqd at nice 19: an app that waits takes the core after each handle_softirqs run of ksoftirqd; ksoftirqd waits for an app's slice to end)",
    ),
    p(
        "kernel.net_rx_action",
        Kind::OneOf(crate::kernel::config::NetRxAction::NAMES),
        S("6.13"),
        "net_rx_action's loop: 6.13 (each NAPI polled once per pass with its whole weight, a repoll ends the pass) or 2.6.18 (dev->poll(dev, &budget): a poll cleans at most min(weight, budget left) and a device that used it goes to the tail and is polled again in the same pass until netdev_budget or the time limit ends it)",
    ),
    p(
        "kernel.timer_tick",
        Kind::Bool,
        B(false),
        "a timer interrupt every jiffy (at no cost of its own) whose exit runs pending softirqs inline, as irq_exit does: a softirq left to ksoftirqd still gets a softirq-level run each jiffy",
    ),
    p(
        "kernel.softirq_time_limit",
        Kind::Bool,
        B(true),
        "false: no time limit on net_rx_action runs (netdev_budget_usecs) nor on handle_softirqs restarts (max_softirq_time_ms), as Chang et al. (2007) removed it; only budgets and restarts bound them",
    ),
    p(
        "kernel.threaded_napi",
        Kind::Bool,
        B(false),
        "threaded NAPI (/sys/class/net/<dev>/threaded = 1): napi_schedule wakes the NAPI's thread, which polls at the thread level (cpu.napi_thread) until a poll does less than the weight, then sleeps; no NET_RX_SOFTIRQ",
    ),
    p(
        "kernel.napi_thread_core",
        int(0, MAX_CORES as i128 - 1),
        I(0),
        "the core the NAPI threads are pinned to (threaded NAPI; a vector's own: napi.N.thread_core)",
    ),
    p(
        "kernel.napi_thread_policy",
        Kind::OneOf(&["fair", "fifo"]),
        S("fair"),
        "the NAPI threads' scheduling policy (chrt): fair shares the core with its other threads by the time slice; fifo (SCHED_FIFO, chrt -f) runs before them once woken (they give way at their next preemption point) and never gives way to them (a vector's own: napi.N.thread_policy)",
    ),
    p(
        "kernel.skb_defer_max",
        int(0, 1 << 20),
        I(64),
        "skbs a core's list of deferred frees takes from the cores whose apps read them, before those apps free them themselves; the (skb_defer_max/2 + 1)-th raises NET_RX on it by an IPI (net.core.skb_defer_max; 0: no deferral; with platform.skb_free_ns)",
    ),
    p(
        "driver.moderation",
        Kind::OneOf(MODERATION),
        S("static"),
        "interrupt moderation policy (static: a fixed ITR; the others adapt it after each NAPI session)",
    ),
    p(
        "driver.policy",
        Kind::Text("\"module:Class\" or \"file.py:Class\" (a file relative to the scenario's)"),
        S(""),
        "python: the policy class, made once per vector (irqlab.run(..., policy=...) overrides it)",
    ),
    p(
        "driver.itr_rate",
        float(0.0, 1e7),
        F(0.0),
        "static: interrupts per second at most (0 = keep nic.itr_us)",
    ),
    p(
        "driver.link_gbps",
        float(0.0, 1e4),
        F(0.0),
        "ixgbe, i40e: link speed the driver sees, Gbit/s: selects the size formula's branch as the drivers do (0.01, 0.1, 1, 2.5, 10, 20, 25, 40; others take their default); 0 = nic.link_gbps",
    ),
    p(
        "driver.tx_work_limit",
        int(1, 1 << 20),
        I(256),
        "Tx descriptors cleaned per poll at most; more left makes the poll incomplete (IXGBE_DEFAULT_TX_WORK)",
    ),
    p(
        "driver.legacy_bulk_rate",
        Kind::IntOneOf(&[8000, 12000]),
        I(8000),
        "ixgbe-legacy: interrupt rate of the bulk class (8000: ixgbe 3.x; 12000: upstream before 4.15)",
    ),
    p(
        "driver.legacy_elapsed",
        Kind::OneOf(crate::moderation::ixgbe_legacy::Elapsed::NAMES),
        S("itr"),
        "ixgbe-legacy: time since the last update as the driver assumes it (itr: the programmed interval, its quirk) or measured",
    ),
    p(
        "driver.linear_rate_max",
        positive(1e7),
        F(100_000.0),
        "linear: interrupt rate at zero load (r_max), ints/s",
    ),
    p(
        "driver.linear_rate_min",
        positive(1e7),
        F(8000.0),
        "linear: interrupt rate at and above linear_pps_max (r_min), ints/s",
    ),
    p(
        "driver.linear_pps_max",
        positive(1e10),
        F(2.1e6),
        "linear: packet rate at which the system overloads (rho_max), packets/s",
    ),
    p(
        "driver.linear_min_update_us",
        float(0.0, 1e6),
        F(50.0),
        "linear: least time between two adaptations, us (the patch's 50 us)",
    ),
    p(
        "driver.linear_elapsed",
        Kind::OneOf(crate::moderation::linear::Elapsed::NAMES),
        S("measured"),
        "linear: elapsed time as measured, or nsec-only: the patch's bug that drops whole seconds",
    ),
    p(
        "driver.dim_mode",
        Kind::OneOf(crate::moderation::dim::DimMode::NAMES),
        S("eqe"),
        "dim: profile table and timer mode (eqe: timer from the first packet; cqe: restarted by each packet)",
    ),
    p(
        "driver.first_packet",
        Kind::OneOf(crate::moderation::config::FirstPacket::NAMES),
        S("softirq"),
        "disable-enable, hybrid: isr = the ISR processes the first packet of a busy period, one cost of mean irq+mask+proto (Salah's 1/v); softirq = ISR, then protocol processing",
    ),
    p(
        "adapt.scheme",
        Kind::OneOf(ADAPT_SCHEMES),
        S("none"),
        "receive-load controller adapting netdev_budget and/or the interrupt interval from the socket buffer (Chang et al. 2007): qapolling (budget), aic (interval), rhip (both), rhip-noksd (rhip without its ksoftirqd rule)",
    ),
    p(
        "adapt.interval_ms",
        positive(1e4),
        F(100.0),
        "adapt: sampling interval of the per-interval rules, ms (the paper's T = 100 ms)",
    ),
    p(
        "adapt.buflow",
        float(0.0, 1.0),
        F(0.03),
        "adapt: lower threshold of socket-buffer utilisation (sk_rmem_alloc / sk_rcvbuf), fraction",
    ),
    p(
        "adapt.bufupper",
        float(0.0, 1.0),
        F(0.5),
        "adapt: upper threshold of socket-buffer utilisation, fraction, checked before each packet is queued",
    ),
    p(
        "adapt.alpha",
        Kind::Float {
            min: 1.0,
            max: 1e6,
            min_open: true,
        },
        F(2.0),
        "adapt: multiplicative decrease (budget / alpha; aic: interrupt rate / alpha) — the paper's alpha, its use irqlab's choice",
    ),
    p(
        "adapt.beta",
        int(1, 1 << 20),
        I(1),
        "adapt: additive increase per interval (budget + beta; aic: rate + beta x aic_rate_step) — the paper's beta, its use irqlab's choice",
    ),
    p(
        "adapt.budget_min",
        int(1, 1 << 20),
        I(1),
        "adapt: lowest netdev_budget the controller sets",
    ),
    p(
        "adapt.budget_max",
        int(1, 1 << 20),
        I(300),
        "adapt: highest netdev_budget the controller sets (the paper varies it in [1, 300])",
    ),
    p(
        "adapt.micro",
        Kind::OneOf(crate::adapt::config::Micro::NAMES),
        S("trend"),
        "qapolling, aic: between buflow and bufupper, trend = step down by beta if the interval's maximum utilisation rose since the interval before, else up (irqlab's choice); none = leave it",
    ),
    p(
        "adapt.rhip_rate",
        positive(1e7),
        F(8000.0),
        "rhip: interrupt rate above which pressure raises T before lowering the budget, ints/s",
    ),
    p(
        "adapt.rhip_budget",
        int(1, 1 << 20),
        I(300),
        "rhip: netdev_budget up to which calm intervals raise the budget; at it they lower T",
    ),
    p(
        "adapt.t_decrease",
        Kind::Float {
            min: 0.0,
            max: 1.0,
            min_open: true,
        },
        F(0.1),
        "rhip: fraction by which a calm interval lowers T (the paper's 10 %)",
    ),
    p(
        "adapt.t_increase_ns",
        positive(1e9),
        F(500.0),
        "rhip: step by which pressure raises T, ns (the paper's \"+500\", unit not given: ns is irqlab's choice)",
    ),
    p(
        "adapt.t_snap_ns",
        float(0.0, 1e9),
        F(1000.0),
        "rhip: a T lowered below this becomes 0 (an interrupt per packet), ns",
    ),
    p(
        "adapt.t_min_ns",
        float(0.0, 1e9),
        F(0.0),
        "rhip: the smallest T a calm interval lowers it to, ns (0: no floor, as printed; e.g. the driver's own range)",
    ),
    p(
        "adapt.aic_min_rate",
        positive(1e7),
        F(1.0),
        "aic: lowest interrupt rate, ints/s (the paper's one per second)",
    ),
    p(
        "adapt.aic_max_rate",
        positive(1e7),
        F(100_000.0),
        "aic: interrupt rate at and above which the NIC is unthrottled (T = 0), ints/s",
    ),
    p(
        "adapt.aic_rate_step",
        positive(1e7),
        F(1000.0),
        "aic: the interrupt rate one beta stands for, ints/s (irqlab's choice)",
    ),
    p(
        "adapt.aic_decrease",
        Kind::OneOf(crate::adapt::aic::Decrease::NAMES),
        S("per-interval"),
        "aic: the rate is divided by alpha at the first packet above bufupper in each interval, or at every one (irqlab's choice)",
    ),
    p(
        "poll.period_us",
        Kind::Float {
            min: 0.0,
            max: 1e6,
            min_open: true,
        },
        F(20.0),
        "poll, napi-poll, hybrid: period of the polling timer (T_poll), us",
    ),
    p(
        "poll.quota",
        int(1, 1 << 20),
        I(3),
        "poll, napi-poll, hybrid: packets processed per poll at most (Q)",
    ),
    p(
        "hybrid.switch_pps",
        float(0.0, 1e9),
        F(0.0),
        "hybrid: measured throughput at which disable-enable hands over to polling, packets/s (0 = 0.95 x the cliff point of Eq. 13)",
    ),
    p(
        "hybrid.window_us",
        Kind::Float {
            min: 0.0,
            max: 1e7,
            min_open: true,
        },
        F(1000.0),
        "hybrid: throughput measurement window, us",
    ),
    p(
        "hybrid.hysteresis",
        float(0.0, 0.99),
        F(0.1),
        "hybrid: polling hands back to disable-enable below (1 - hysteresis) x switch_pps",
    ),
    p(
        "qos.strategy",
        Kind::OneOf(crate::qos::Strategy::NAMES),
        S("off"),
        "ingress QoS: off (the classes of traffic.classes), sq (one ring), rr (an RT and a BE vector), vmdq (equal split), ll-rr, ll-wfq (ring budgets)",
    ),
    p(
        "qos.rt_share",
        float(0.0, 1.0),
        F(0.3),
        "with a QoS strategy: fraction of the packets in class rt (the rest are be), drawn independently per packet",
    ),
    p(
        "qos.ring_budgets",
        Kind::IntList {
            min: 1,
            max: 1 << 20,
            max_len: 2,
        },
        EmptyList,
        "ll-rr, ll-wfq: ring budgets [BE, RT] in the driver's PRB order (empty = ll-rr [4, 4], ll-wfq [4, 60])",
    ),
    p(
        "qos.ring_order",
        Kind::OneOf(crate::qos::config::RingOrder::NAMES),
        S("rt-first"),
        "vmdq, ll-rr, ll-wfq: ring visited first in each pass (rt-first; prb: BE first, the PRB order)",
    ),
];

/// The presets, highest rank first.
pub const PRESETS: &[Preset] = &[
    Preset {
        key: "scheme",
        value: "disable-enable",
        defaults: &[
            ("nic.cause_mode", S("armed")),
            ("driver.first_packet", S("isr")),
        ],
        doc: "interrupts re-armed when the ring is found empty; the ISR processes the first packet (the Markov chain of Salah Fig. 2)",
    },
    Preset {
        key: "scheme",
        value: "napi-poll",
        defaults: &[("nic.cause_mode", S("armed"))],
        doc: "interrupts re-armed when the ring is found empty (Salah Fig. 4)",
    },
    Preset {
        key: "scheme",
        value: "hybrid",
        defaults: &[
            ("nic.cause_mode", S("armed")),
            ("driver.first_packet", S("isr")),
        ],
        doc: "as disable-enable below the switching point",
    },
    Preset {
        key: "scheme",
        value: "coalesce-count",
        defaults: &[("nic.rx_frames", I(8))],
        doc: "an IRQ every tau = nic.rx_frames packets",
    },
    Preset {
        key: "scheme",
        value: "coalesce-time",
        defaults: &[("nic.rx_usecs", F(50.0))],
        doc: "an IRQ T = nic.rx_usecs after the first packet of a batch",
    },
    Preset {
        key: "platform.preset",
        value: "salah2007",
        defaults: &[
            ("platform.cpu_ghz", F(2.53)),
            ("platform.irq_ns", F(3730.0)),
            ("platform.irq_dist", S("exponential")),
            ("platform.proto_ns", F(5250.0)),
            ("platform.proto_dist", S("exponential")),
            ("platform.proto_ns_per_byte", F(1.0 / 0.748)),
            ("platform.mask_ns", F(500.0)),
            ("platform.mask_dist", S("deterministic")),
            ("platform.unmask_ns", F(0.0)),
            ("platform.poll_ns", F(0.0)),
            ("platform.softirq_ns", F(0.0)),
            ("platform.ctx_switch_ns", F(0.0)),
            ("platform.poll_timer_ns", F(1590.0)),
            ("platform.poll_timer_dist", S("exponential")),
            ("nic.ring_descriptors", I(1024)),
        ],
        doc: "2.53 GHz Pentium 4 of Salah et al. (2007), section 4: 1/r = 3.73 us; 1/mu = 5.25 us + size / 748 MB/s (5.34 us at 64 B); 0.5 us NIC register write to disable interrupts; T_PollOH = 1.59 us; B = 1024",
    },
    Preset {
        key: "platform.preset",
        value: "chang2007",
        defaults: CHANG2007,
        doc: "the 2.8 GHz Pentium D receiver of Chang et al. (2007) with Linux 2.6.18 and e1000 (docs/applications.md): one interrupt 5.5 us + 1.9 us to re-enable, protocol processing 1.6 us per packet, 0.3 us per softirq pass and per poll, context switch 2 us, wake-up 1 us; 4096 descriptors, 8,000,000-byte socket buffer, ksoftirqd below the app, 2.6.18's net_rx_action, no softirq time limit, 100 ms quantum",
    },
    Preset {
        key: "platform.preset",
        value: "emmerich2015",
        defaults: &[
            ("platform.cpu_ghz", F(3.3)),
            ("platform.irq_ns", F(700.0)),
            ("platform.irq_dist", S("deterministic")),
            ("platform.proto_ns", F(462.0)),
            ("platform.proto_dist", S("exponential")),
            ("platform.proto_ns_per_byte", F(0.0)),
            ("platform.poll_ns", F(500.0)),
            ("platform.poll_dist", S("deterministic")),
            ("platform.softirq_ns", F(300.0)),
            ("platform.softirq_dist", S("deterministic")),
            ("platform.mask_ns", F(0.0)),
            ("platform.unmask_ns", F(33.0)),
            ("platform.unmask_dist", S("deterministic")),
            ("platform.ctx_switch_ns", F(0.0)),
            ("platform.poll_timer_ns", F(700.0)),
            ("platform.poll_timer_dist", S("deterministic")),
            ("platform.wakeup_ns", F(4000.0)),
            ("platform.wakeup_after_us", F(20.0)),
            ("platform.tx_ns", F(0.0)),
            ("platform.tx_clean_ns", F(0.0)),
            ("nic.ring_descriptors", I(4830)),
        ],
        doc: "one 3.3 GHz Xeon E3-1230 v2 core forwarding 64 B frames of Emmerich et al. (2015), calibrated in docs/moderation.md: saturates at 2.1 Mpps when polling, one IRQ per packet up to 0.5 Mpps, 2300 us of buffering at overload",
    },
    Preset {
        key: "platform.preset",
        value: "beifuss2016",
        defaults: &[
            ("platform.cpu_ghz", F(3.2)),
            ("platform.irq_ns", F(3900.0)),
            ("platform.irq_dist", S("deterministic")),
            ("platform.proto_ns", F(556.0)),
            ("platform.proto_dist", S("exponential")),
            ("platform.proto_ns_per_byte", F(0.0)),
            ("platform.poll_ns", F(600.0)),
            ("platform.poll_dist", S("deterministic")),
            ("platform.softirq_ns", F(360.0)),
            ("platform.softirq_dist", S("deterministic")),
            ("platform.mask_ns", F(0.0)),
            ("platform.unmask_ns", F(40.0)),
            ("platform.unmask_dist", S("deterministic")),
            ("platform.ctx_switch_ns", F(0.0)),
            ("platform.poll_timer_ns", F(840.0)),
            ("platform.poll_timer_dist", S("deterministic")),
            ("platform.wakeup_ns", F(4800.0)),
            ("platform.wakeup_after_us", F(20.0)),
            ("platform.tx_ns", F(0.0)),
            ("platform.tx_clean_ns", F(0.0)),
            ("platform.ring_switch_ns", F(100.0)),
            ("nic.ring_descriptors", I(512)),
            ("nic.itr_us", F(0.0)),
            ("kernel.napi_weight", I(64)),
            ("kernel.netdev_budget", I(300)),
            ("kernel.hz", I(250)),
        ],
        doc: "one 3.2 GHz Xeon E3-1230 core of Beifuss et al. (2016), 512 descriptors per ring, ITR off, HZ 250; with host.forward = true and 128 B frames, calibrated in docs/qos.md on SQ: 1.75 Mpps when polling, 32 k IRQ/s at 1.5 Mpps",
    },
    Preset {
        key: "platform.preset",
        value: "busypoll2013",
        defaults: &[
            ("platform.cpu_ghz", F(2.7)),
            ("platform.irq_ns", F(2000.0)),
            ("platform.irq_dist", S("deterministic")),
            ("platform.mask_ns", F(0.0)),
            ("platform.softirq_ns", F(300.0)),
            ("platform.softirq_dist", S("deterministic")),
            ("platform.poll_ns", F(300.0)),
            ("platform.poll_dist", S("deterministic")),
            ("platform.proto_ns", F(1000.0)),
            ("platform.proto_dist", S("deterministic")),
            ("platform.proto_ns_per_byte", F(0.0)),
            ("platform.unmask_ns", F(50.0)),
            ("platform.unmask_dist", S("deterministic")),
            ("platform.task_wakeup_ns", F(800.0)),
            ("platform.task_wakeup_dist", S("deterministic")),
            ("platform.ctx_switch_ns", F(1200.0)),
            ("platform.ctx_switch_dist", S("deterministic")),
            ("platform.tx_ns", F(1000.0)),
            ("platform.tx_dist", S("deterministic")),
            ("platform.tx_clean_ns", F(50.0)),
            ("platform.tx_clean_dist", S("deterministic")),
            ("platform.poll_timer_ns", F(700.0)),
            ("platform.poll_timer_dist", S("deterministic")),
            ("platform.busy_iter_ns", F(100.0)),
        ],
        doc: "a 2.7 GHz Xeon E5-2680 with an 82599 answering 1-byte TCP_RR requests, after the busy-poll cover letter (2013), calibrated in docs/busy-polling.md on its interrupt-driven 57k and busy-polling 87k transactions/s; C-states (platform.wakeup_ns) are set by the study",
    },
];

/// The `chang2007` platform: Chang et al. (2007)'s receiver, calibrated in
/// `docs/applications.md` (the costs are not printed in the paper).
const CHANG2007: &[(&str, Default)] = &[
    ("platform.cpu_ghz", F(2.8)),
    ("platform.irq_ns", F(5500.0)),
    ("platform.irq_dist", S("deterministic")),
    ("platform.softirq_ns", F(300.0)),
    ("platform.softirq_dist", S("deterministic")),
    ("platform.poll_ns", F(300.0)),
    ("platform.poll_dist", S("deterministic")),
    ("platform.mask_ns", F(0.0)),
    ("platform.unmask_ns", F(1900.0)),
    ("platform.unmask_dist", S("deterministic")),
    ("platform.proto_ns", F(1600.0)),
    ("platform.proto_dist", S("deterministic")),
    ("platform.proto_ns_per_byte", F(0.0)),
    ("platform.ctx_switch_ns", F(2000.0)),
    ("platform.ctx_switch_dist", S("deterministic")),
    ("platform.task_wakeup_ns", F(1000.0)),
    ("platform.task_wakeup_dist", S("deterministic")),
    ("platform.wakeup_ns", F(0.0)),
    ("platform.tx_ns", F(0.0)),
    ("platform.tx_clean_ns", F(0.0)),
    ("nic.ring_descriptors", I(4096)),
    ("socket.rcvbuf_bytes", I(8_000_000)),
    ("kernel.hz", I(250)),
    ("kernel.ksoftirqd_policy", S("below-apps")),
    ("kernel.net_rx_action", S("2.6.18")),
    ("kernel.softirq_time_limit", B(false)),
    ("kernel.timer_tick", B(true)),
    ("kernel.sched_slice_us", F(100_000.0)),
];

/// The fields of one traffic class (`traffic.classes.N.*`).
pub const CLASS_FIELDS: &[ParamSpec] = &[
    p(
        "name",
        Kind::Text("a name of letters, digits, '-' and '_', unique among the classes"),
        S(""),
        "the class's name in reports (empty: c0, c1, …)",
    ),
    p(
        "share",
        float(0.0, 1.0),
        F(0.0),
        "fraction of the packets in this class, drawn independently per packet; the shares sum to 1 (all 0: equal shares)",
    ),
];

/// The fields of one application (`app.N.*`).
pub const APP_FIELDS: &[ParamSpec] = &[
    p(
        "core",
        int(0, MAX_CORES as i128 - 1),
        I(0),
        "core the app's thread runs on",
    ),
    p(
        "cost_ns",
        float(0.0, COST_MAX_NS),
        F(1000.0),
        "reading and handling one packet (recv and the app's work), fixed part, ns",
    ),
    p(
        "cost_dist",
        Kind::OneOf(DISTS),
        S("exponential"),
        "distribution of cost_ns",
    ),
    p(
        "cost_ns_per_byte",
        float(0.0, 1e6),
        F(0.0),
        "per frame byte (deterministic), ns",
    ),
    p(
        "flows",
        Kind::IntList {
            min: 0,
            max: (1 << 20) - 1,
            max_len: 1 << 20,
        },
        EmptyList,
        "flows the app reads (empty = the flows RSS steers to its core; shared round robin by the apps on that core)",
    ),
    p(
        "rcvbuf_bytes",
        int(0, i32::MAX as i128),
        I(0),
        "its socket's receive buffer, bytes (0 = socket.rcvbuf_bytes)",
    ),
    p(
        "io",
        Kind::OneOf(crate::socket::config::Io::NAMES),
        S("recv"),
        "how the app waits for packets: a blocking recv loop, an epoll_wait loop (epoll.*), or xsk: it reads an AF_XDP socket's Rx ring, bound to the one queue of its flows (app.N.xsk_ring, need_wakeup, xsk_poll_core)",
    ),
    // AF_XDP apps (xsk.rs)
    p(
        "xsk_ring",
        int(0, crate::xsk::XSK_RING_MAX),
        I(crate::xsk::XSK_RING_DEFAULT),
        "xsk: descriptors of its XSK's Rx ring, a power of two (XDP_RX_RING; XSK_RING_CONS__DEFAULT_NUM_DESCS); a packet that finds it full is dropped, counted in the app's dropped_socket (an XSK has no socket buffer: rcvbuf_bytes has no effect)",
    ),
    p(
        "need_wakeup",
        Kind::Bool,
        B(true),
        "xsk: bound with XDP_USE_NEED_WAKEUP: the app calls recvfrom only when the driver flags its fill ring, which it never does while the ring is stocked; false: it calls recvfrom each time it finds its ring empty (without busy polling, a syscall that does nothing)",
    ),
    p(
        "xsk_poll_core",
        int(crate::xsk::NO_POLL_CORE, MAX_CORES as i128 - 1),
        I(crate::xsk::NO_POLL_CORE),
        "xsk: the core of a second thread of the app that calls recvfrom in a loop, each a nonblocking busy poll (needs socket.busy_read_us > 0), while the app's own thread only reads its ring (xsk_rr -t); -1 = none: the app's thread calls it itself",
    ),
];

use crate::kernel::config::{NAPI_DEVICE, NAPI_THREADED_BUSY_POLL, NAPI_THREADED_DEVICE};

/// The settings of one NAPI (`napi.N.*`, N the vector): each overrides the device-wide
/// `kernel.*` value for vector N alone (`/sys/class/net/<dev>/napi/...`, netdev's napi-set);
/// -1 (the default) keeps the device's.
pub const NAPI_FIELDS: &[ParamSpec] = &[
    p(
        "defer_hard_irqs",
        int(NAPI_DEVICE, i32::MAX as i128),
        I(NAPI_DEVICE),
        "this vector's napi_defer_hard_irqs (-1 = kernel.napi_defer_hard_irqs)",
    ),
    p(
        "gro_flush_timeout_ns",
        float(NAPI_DEVICE as f64, 1e9),
        F(NAPI_DEVICE as f64),
        "this vector's gro_flush_timeout, ns (-1 = kernel.gro_flush_timeout_ns)",
    ),
    p(
        "irq_suspend_timeout_ns",
        float(NAPI_DEVICE as f64, 1e12),
        F(NAPI_DEVICE as f64),
        "this vector's irq_suspend_timeout, ns (-1 = kernel.irq_suspend_timeout_ns)",
    ),
    p(
        "threaded",
        Kind::OneOf(&[NAPI_THREADED_DEVICE, "off", "on", NAPI_THREADED_BUSY_POLL]),
        S(NAPI_THREADED_DEVICE),
        "this vector's threaded NAPI (napi-set threaded): off polls it in NET_RX_SOFTIRQ, on in a thread of its own that sleeps once a poll completes it, busy-poll in a thread that polls it without end once its IRQ first fires (NAPI_STATE_THREADED_BUSY_POLL, Linux 6.19: the IRQ stays masked, the thread's core 100 % busy; per NAPI only, as in the kernel); device = kernel.threaded_napi",
    ),
    p(
        "thread_core",
        int(NAPI_DEVICE, MAX_CORES as i128 - 1),
        I(NAPI_DEVICE),
        "the core this vector's NAPI thread is pinned to (taskset; -1 = kernel.napi_thread_core)",
    ),
    p(
        "thread_policy",
        Kind::OneOf(&[NAPI_THREADED_DEVICE, "fair", "fifo"]),
        S(NAPI_THREADED_DEVICE),
        "this vector's NAPI thread's scheduling policy (chrt; device = kernel.napi_thread_policy)",
    ),
];

/// The numbered entries.
pub const TABLES: &[TableSpec] = &[
    TableSpec {
        prefix: "traffic.classes",
        noun: "traffic class",
        max_entries: 8,
        fields: CLASS_FIELDS,
        doc: "traffic classes ([[traffic.classes]]): each selects an Rx ring in every vector (default: one class)",
    },
    TableSpec {
        prefix: "app",
        noun: "app",
        max_entries: 256,
        fields: APP_FIELDS,
        doc: "applications ([[app]]): a thread on a core reading a socket (default: none)",
    },
    TableSpec {
        prefix: "napi",
        noun: "napi",
        max_entries: MAX_VECTORS,
        fields: NAPI_FIELDS,
        doc: "per-NAPI settings ([[napi]]): entry N overrides the device-wide kernel.* values for vector N (default: none)",
    },
];

/// The key table: [`PARAMS`], [`TABLES`] and [`PRESETS`].
pub const SCHEMA: Schema = Schema {
    params: PARAMS,
    tables: TABLES,
    presets: PRESETS,
};

/// Looks up a plain key in the schema.
pub fn spec(key: &str) -> Option<&'static ParamSpec> {
    SCHEMA.spec(key)
}

/// Looks up a key: a plain key or `{table}.{index}.{field}`.
pub fn lookup(key: &str) -> Result<Lookup, Error> {
    SCHEMA.lookup(key)
}

impl Params {
    /// Validates `(dotted key, value)` pairs against the key table and fills in defaults.
    /// A key given twice keeps its last value (later overrides win).
    pub fn from_pairs<K: AsRef<str>>(
        pairs: impl IntoIterator<Item = (K, Value)>,
    ) -> Result<Params, Error> {
        SCHEMA.params(pairs)
    }

    /// The defaults alone.
    pub fn defaults() -> Params {
        Self::from_pairs(std::iter::empty::<(&str, Value)>()).expect("defaults are valid")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_complete() {
        let p = Params::defaults();
        for spec in PARAMS {
            assert_eq!(p.get(spec.key), &spec.default.value(), "{}", spec.key);
        }
    }

    #[test]
    fn keys_are_unique() {
        let mut keys: Vec<&str> = PARAMS.iter().map(|p| p.key).collect();
        keys.sort_unstable();
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n);
    }

    #[test]
    fn unknown_key_suggests_the_nearest() {
        let e = Params::from_pairs([("traffic.rate_ps", Value::Float(1.0))]).unwrap_err();
        assert_eq!(e.key(), "traffic.rate_ps");
        assert!(
            e.to_string().contains("did you mean 'traffic.rate_pps'"),
            "{e}"
        );
    }

    #[test]
    fn unknown_section_lists_the_sections() {
        let e = Params::from_pairs([("bogus.thing_that_is_long", Value::Int(1))]).unwrap_err();
        assert!(e.to_string().contains("sections are"), "{e}");
    }

    #[test]
    fn wrong_type_and_range_name_key_value_and_allowed() {
        let e = Params::from_pairs([("nic.ring_descriptors", Value::Int(0))]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "nic.ring_descriptors = 0: must be an integer in 1 … 1048576"
        );
        let e = Params::from_pairs([("traffic.rate_pps", Value::Str("fast".into()))]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "traffic.rate_pps = \"fast\": expected a number"
        );
        let e = Params::from_pairs([("traffic.rate_pps", Value::Float(f64::NAN))]).unwrap_err();
        assert!(
            e.to_string().starts_with("traffic.rate_pps = NaN: must be"),
            "{e}"
        );
        let e = Params::from_pairs([("scheme", Value::Str("nappi".into()))]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "scheme = \"nappi\": must be one of \"ideal\", \"irq\", \"disable-enable\", \"poll\", \"napi-poll\", \"coalesce-count\", \"coalesce-time\", \"hybrid\", \"napi\""
        );
        let e = Params::from_pairs([("nic.ring_descriptors", Value::Float(8.0))]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "nic.ring_descriptors = 8.0: expected an integer"
        );
    }

    #[test]
    fn presets_fill_defaults_and_explicit_keys_win() {
        let p = Params::from_pairs([("platform.preset", Value::Str("salah2007".into()))]).unwrap();
        assert_eq!(p.f64("platform.mask_ns"), 500.0);
        assert_eq!(p.f64("platform.proto_ns"), 5250.0);
        let p = Params::from_pairs([
            ("platform.preset", Value::Str("salah2007".into())),
            ("platform.mask_ns", Value::Float(7.0)),
            ("scheme", Value::Str("disable-enable".into())),
        ])
        .unwrap();
        assert_eq!(p.f64("platform.mask_ns"), 7.0);
        assert_eq!(p.str("nic.cause_mode"), "armed");
        assert_eq!(p.str("driver.first_packet"), "isr");
        let p = Params::from_pairs([
            ("scheme", Value::Str("disable-enable".into())),
            ("nic.cause_mode", Value::Str("latched".into())),
        ])
        .unwrap();
        assert_eq!(p.str("nic.cause_mode"), "latched");
        let p = Params::from_pairs([("scheme", Value::Str("coalesce-count".into()))]).unwrap();
        assert_eq!(p.u64("nic.rx_frames"), 8);
        assert_eq!(Params::defaults().u64("nic.rx_frames"), 0);
    }

    #[test]
    fn integers_are_accepted_for_numbers() {
        let p = Params::from_pairs([("traffic.rate_pps", Value::Int(5))]).unwrap();
        assert_eq!(p.f64("traffic.rate_pps"), 5.0);
    }

    #[test]
    fn a_number_above_an_open_minimum_is_accepted_and_the_minimum_is_not() {
        let e = Params::from_pairs([("traffic.speedup", Value::Int(0))]).unwrap_err();
        assert_eq!(e.key(), "traffic.speedup");
        assert_eq!(
            e.to_string(),
            "traffic.speedup = 0: must be a number in (0, 1e6]"
        );
        let p = Params::from_pairs([("traffic.speedup", Value::Float(1e-9))]).unwrap();
        assert_eq!(p.f64("traffic.speedup"), 1e-9);
        // a closed minimum is allowed
        let p = Params::from_pairs([("traffic.rate_pps", Value::Float(1e-3))]).unwrap();
        assert_eq!(p.f64("traffic.rate_pps"), 1e-3);
    }

    #[test]
    fn range_bounds_are_written_in_exponent_form_from_1e6_and_below_1e_3() {
        let e = Params::from_pairs([("run.duration_ms", Value::Int(0))]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "run.duration_ms = 0: must be a number in (0, 3.6e6]"
        );
        let e = Params::from_pairs([("traffic.rate_pps", Value::Int(0))]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "traffic.rate_pps = 0: must be a number in [0.001, 1e9]"
        );
        let small = Kind::Float {
            min: 1e-4,
            max: 999_999.0,
            min_open: false,
        };
        assert_eq!(small.allowed(), "a number in [1e-4, 999999]");
    }

    #[test]
    fn floats_show_one_decimal_when_whole_and_all_their_digits_otherwise() {
        let shown = |x: f64| Value::Float(x).to_string();
        assert_eq!(shown(3.0), "3.0");
        assert_eq!(shown(-2.0), "-2.0");
        assert_eq!(shown(0.25), "0.25");
        assert_eq!(shown(1.125), "1.125");
        assert_eq!(shown(1e15), "1000000000000000");
        assert_eq!(shown(f64::INFINITY), "inf");
        assert_eq!(shown(f64::NAN), "NaN");
    }

    #[test]
    fn strings_of_64_characters_are_shown_whole_and_longer_ones_cut_to_48() {
        let whole = "a".repeat(64);
        assert_eq!(
            Value::Str(whole.clone()).to_string(),
            format!("\"{whole}\"")
        );
        let long = "b".repeat(65);
        assert_eq!(
            Value::Str(long).to_string(),
            format!("\"{}…\" (65 characters)", "b".repeat(48))
        );
        assert_eq!(Value::Str("a\nb".into()).to_string(), "\"a\\nb\"");
    }

    #[test]
    fn lists_of_16_items_are_shown_whole_and_longer_ones_cut_to_16() {
        let list = |n: i128| Value::List((0..n).map(Value::Int).collect()).to_string();
        assert_eq!(list(0), "[]");
        assert_eq!(list(1), "[0]");
        assert_eq!(list(3), "[0, 1, 2]");
        let sixteen = (0..16)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        assert_eq!(list(16), format!("[{sixteen}]"));
        assert_eq!(list(17), format!("[{sixteen}, …] (17 entries)"));
    }

    #[test]
    fn params_are_equal_when_their_values_are() {
        assert_eq!(Params::defaults(), Params::defaults());
        // given at its default or left out: the same values
        let given = Params::from_pairs([("nic.queues", Value::Int(1))]).unwrap();
        assert_eq!(given, Params::defaults());
        let other = Params::from_pairs([("nic.queues", Value::Int(2))]).unwrap();
        assert_ne!(other, Params::defaults());
        assert_ne!(Params::defaults(), other);
        let app = Params::from_pairs([("app.0.core", Value::Int(0))]).unwrap();
        assert_ne!(app, Params::defaults());
    }

    #[test]
    fn an_entry_number_must_be_digits() {
        for key in ["app.x.core", "app..core", "app.01.core"] {
            let e = Params::from_pairs([(key, Value::Int(0))]).unwrap_err();
            assert_eq!(e.key(), key);
            assert_eq!(
                e.to_string(),
                format!(
                    "unknown key '{key}'; app entries are written app.N.field with N = 0, 1, …"
                )
            );
        }
        let p = Params::from_pairs([("app.0.core", Value::Int(0)), ("app.1.core", Value::Int(0))])
            .unwrap();
        assert_eq!(p.entries("app"), 2);
    }

    #[test]
    fn a_long_unknown_key_is_matched_within_a_third_of_its_length() {
        // 4 edits from traffic.rate_pps, a key of 20 characters: within 20 / 3
        let e = Params::from_pairs([("traffic.rate_ppsxxxx", Value::Int(1))]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown key 'traffic.rate_ppsxxxx' (did you mean 'traffic.rate_pps'?)"
        );
    }

    #[test]
    fn irq_affinity_names_cores_0_to_1023() {
        let p = Params::from_pairs([(
            "nic.irq_affinity",
            Value::List(vec![Value::Int(0), Value::Int(1023)]),
        )])
        .unwrap();
        assert_eq!(p.u64_list("nic.irq_affinity"), [0, 1023]);
        let e = Params::from_pairs([("nic.irq_affinity", Value::List(vec![Value::Int(1024)]))])
            .unwrap_err();
        assert_eq!(e.key(), "nic.irq_affinity");
        assert_eq!(
            e.to_string(),
            "nic.irq_affinity = [1024]: must be a list of at most 1024 integers, each in 0 … 1023"
        );
    }

    #[test]
    fn the_socket_truesize_may_be_up_to_1_mib() {
        let p = Params::from_pairs([("socket.truesize_bytes", Value::Int(1 << 20))]).unwrap();
        assert_eq!(p.u64("socket.truesize_bytes"), 1 << 20);
        let e =
            Params::from_pairs([("socket.truesize_bytes", Value::Int((1 << 20) + 1))]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "socket.truesize_bytes = 1048577: must be an integer in 0 … 1048576"
        );
    }

    #[test]
    fn salah2007_charges_a_byte_at_0_748_bytes_per_ns() {
        // the paper's 748 Mbit/s of protocol processing: 1 / 0.748 ns per byte
        let p = Params::from_pairs([("platform.preset", Value::Str("salah2007".into()))]).unwrap();
        let per_byte = p.f64("platform.proto_ns_per_byte");
        assert!((per_byte - 1.336_898).abs() < 1e-6, "{per_byte}");
    }

    #[test]
    fn an_app_runs_on_cores_0_to_1023_and_reads_flows_0_to_2_pow_20_minus_1() {
        let p = Params::from_pairs([
            ("app.0.core", Value::Int(1023)),
            ("app.0.flows", Value::List(vec![Value::Int((1 << 20) - 1)])),
        ])
        .unwrap();
        assert_eq!(p.u64("app.0.core"), 1023);
        assert_eq!(p.u64_list("app.0.flows"), [(1 << 20) - 1]);
        let e = Params::from_pairs([("app.0.core", Value::Int(1024))]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "app.0.core = 1024: must be an integer in 0 … 1023"
        );
        let e = Params::from_pairs([("app.0.flows", Value::List(vec![Value::Int(1 << 20)]))])
            .unwrap_err();
        assert_eq!(e.key(), "app.0.flows");
        assert!(e.to_string().contains("each in 0 … 1048575"), "{e}");
    }

    #[test]
    fn a_misspelt_field_of_an_entry_is_matched_within_a_third_of_its_length() {
        // 4 edits from cost_ns_per_byte, in a name of 18 characters: within max(3, 18 / 3 = 6)
        let e = Params::from_pairs([("app.0.cost_ns_per_bxxxx", Value::Int(1))]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown key 'app.0.cost_ns_per_bxxxx' (did you mean 'app.0.cost_ns_per_byte'?)"
        );
        // nothing within max(3, 13 / 3 = 4) edits of a 13-character name: the fields listed
        let e = Params::from_pairs([("app.0.zzzzzzzzzzzzz", Value::Int(1))]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown key 'app.0.zzzzzzzzzzzzz'; fields of app are: core, cost_ns, cost_dist, \
             cost_ns_per_byte, flows, rcvbuf_bytes, io, xsk_ring, need_wakeup, xsk_poll_core"
        );
        // 5 edits from io for a 5-character name: max(3, 5 / 3) = 3 < 5, listed
        let e = Params::from_pairs([("app.0.qqqqq", Value::Int(1))]).unwrap_err();
        assert!(e.to_string().contains("fields of app are"), "{e}");
    }
}
