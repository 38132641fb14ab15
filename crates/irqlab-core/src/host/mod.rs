//! The host model: how an arrival becomes an interrupt, a softirq, a NAPI poll, protocol
//! processing on a core, and then a socket and an app, a Tx ring, or the stack. Every
//! transition happens at one instant; time passes only inside CPU jobs (tagged with a
//! [`Work`]) and until timers fire ([`Timer`]).
//!
//! The state is organised as the real system is: [`Core`]s (a CPU server, the kernel's softirq
//! state and poll list, the thread level with ksoftirqd and the apps' threads), [`Vector`]s (an
//! IRQ line, an Rx ring per class, a Tx ring, a NAPI and a moderation policy), sockets and
//! [`App`]s; their types are the top-level modules' (`crate::nic`, `crate::kernel`,
//! `crate::cpu`, `crate::sched`, `crate::socket`, …), which hold the state and its rules. The
//! behaviour is one `impl Host` per file, each file named after the part whose state it
//! changes. A packet goes through them in this order: `feed` → `nic` → `irq` → `driver` (ISR)
//! → `kernel` (softirq, `net_rx_action`) → `driver` (poll) → `socket` → `sched` → `socket`
//! (app); every CPU job and timer comes back through `dispatch`, and the optional mechanisms
//! join through `hooks`.
//!
//! Where each kernel and driver function lives (file `::` function):
//!
//! | kernel / driver | here |
//! |---|---|
//! | the NIC: DMA into the Rx ring, the interrupt cause | `nic::arrival` |
//! | descriptor write-back (`platform.writeback_ns`): the packet visible, the cause raised | `nic::write_back_later`, `on_write_back` (the ring: `crate::nic::Ring::hide_newest`) |
//! | interrupt delivery (`platform.irq_delivery_ns`: MSI-X across PCIe to the core) | `nic::issue_irq`, `irq::on_irq_delivered` |
//! | the indirect cost of an interrupt (`platform.irq_indirect_ns`) | `irq::hardirq_done` (the rule: `crate::cpu::Cpu::irq_done`) |
//! | a poll's cold first packets (`platform.cold_packets`, `cold_packet_ns`) | `driver::poll_packet_extras`, `polling::poll_step`, `polling::isr_with_first_packet` (the rule: `crate::platform::PlatformConfig::cold_ps`) |
//! | a core switching NAPIs (`platform.napi_switch_ns`) | `kernel::poll_call` |
//! | a busy poller contending with its vector's interrupt on another core (`platform.ring_contention_ns`) | `busypoll::contention_on_start`, `contention_on_isr`, `contention_isr_done` |
//! | the NIC's interrupt logic: ITR throttle, coalescing, their timer | `nic::nic_check`, `nic::on_moderation_timer`, `nic::issue_irq` |
//! | Tx descriptor write-back raising the cause | `nic::tx_queued`, `nic::cause_cleared`, `nic::on_tx_done` |
//! | `do_IRQ` (one hard-IRQ handler at a time per core) | `irq::do_irq`, `irq::next_hardirq` |
//! | the ISR (`ixgbe_msix_clean_rings`) | `driver::start_isr`, `driver::isr_done` |
//! | `irq_exit` → `invoke_softirq` | `irq::irq_exit` |
//! | `__napi_schedule` | `kernel::napi_schedule` (the list: `crate::kernel::Kernel::napi_schedule`) |
//! | `____napi_schedule` with threaded NAPI: wake the NAPI's thread | `napi_thread::napi_thread_schedule` |
//! | `napi_threaded_poll`, `napi_thread_wait`, `napi_threaded_poll_loop` | `napi_thread::napi_thread_loop`, `napi_thread_after_poll`, `napi_thread_next` |
//! | `veth_xmit`, `veth_forward_skb` / `veth_xdp_rx`, `__veth_xdp_flush` | `veth::veth_arrival`, `veth_xmit` |
//! | the sending thread: `sendto` → `__dev_queue_xmit` | `sender::sender_due`, `sender_next`, `sender_sent`, `sender_after_send` |
//! | `handle_softirqs` (restarts, hand-off) | `kernel::handle_softirqs`, `softirq_pass`, `softirq_pass_done` |
//! | `net_rx_action` | `kernel::net_rx_start`, `net_rx_loop`, `after_napi_poll`, `net_rx_finish` |
//! | `napi_poll`, `__napi_poll` (one setup for softirq and busy polls) | `kernel::napi_poll`, `kernel::poll_call` |
//! | the driver's poll (`ixgbe_poll`): Tx clean, Rx clean | `driver::driver_poll_begin`, `tx_clean_done`, `driver_poll_step`, `packet_done` |
//! | protocol processing's end: socket, `ndo_start_xmit` or the stack | `driver::deliver`, `deliver_to_sink` |
//! | the poll's return, `napi_complete_done`, re-enabling the IRQ | `driver::driver_poll_done`, `kernel::napi_complete_done`, `driver::unmask_done` |
//! | the moderation policy (`ixgbe_update_itr`, `net_dim`, …) and its register write | `driver::moderate`, `nic::apply_moderation` |
//! | `napi_watchdog` (the NAPI hrtimer) | `kernel::on_napi_watchdog`, `watchdog_done`; its interrupt: `irq::start_timer_handler` |
//! | `wakeup_softirqd`, ksoftirqd's thread loop | `kernel::wakeup_softirqd`, `kernel::ksoftirqd_loop` |
//! | `try_to_wake_up`, `schedule`, `cond_resched` | `sched::wake_thread`, `switch_to`, `schedule_next`, `yield_thread` |
//! | `__udp_enqueue_schedule_skb`, `sk_data_ready` | `socket::socket_enqueue` |
//! | `udp_recvmsg` and the app's work | `socket::app_next`, `app_take`, `app_packet_done` |
//! | `skb_attempt_defer_free` (`skb_consume_udp`), `kick_defer_list_purge`, `skb_defer_free_flush` (`platform.skb_free_ns`) | `skb_defer::skb_attempt_defer_free`, `kick_defer_list_purge`, `skb_defer_free_flush` (the list: `crate::kernel::DeferList`) |
//! | `napi_busy_loop` | `busypoll::busy_loop_start`, `busy_iteration`, `busy_poll_call`, `busy_check` |
//! | `__xsk_map_redirect` → `xsk_rcv_zc` (XDP_REDIRECT into an AF_XDP socket, `platform.xdp_ns`) | `xsk::xsk_redirect`, `xdp_cost` (the ring: `crate::xsk::XskRing`) |
//! | `xdp_do_flush` → `xsk_flush` (the poll's descriptors made visible) | `xsk::xsk_flush` |
//! | an AF_XDP app's loop: peek the ring, spin, `recvfrom` (`__xsk_recvmsg` → `sk_busy_loop(sk, 1)`) | `xsk::xsk_next`, `xsk_spin`, `xsk_recvfrom`, `xsk_recvmsg`; its polling thread: `xsk_poller_loop` |
//! | `busy_poll_stop` | `busypoll::busy_leave`, `busy_stop_returned`, `busy_stopped` |
//! | `ep_poll`, `ep_send_events`, `napi_suspend_irqs`, `napi_resume_irqs` | `busypoll::epoll_wait`, `epoll_send_events`, `after_busy_loop` |
//! | the LL driver's ring order (ingress QoS) | `qos::ring_discipline_step` |
//! | the timer tick's `irq_exit` | `tick::on_tick` |
//!
//! Every file, and the data it changes:
//!
//! | file | holds | data |
//! |---|---|---|
//! | `mod` (this file) | the host's state, starting CPU jobs, the engine's events | [`Host`], [`Core`], [`Vector`], [`App`] |
//! | `dispatch` | the continuation table of CPU jobs and timers | [`Work`], [`Timer`] |
//! | `feed` | the arrivals as the NIC classifies them (RSS, class) | `Generator`, `Buffer` |
//! | `nic` | the NIC | `Vector::rings`, `irq`, `tx_signal_at`, `irq_events` (`crate::nic`) |
//! | `irq` | the hard-IRQ level | `Core::pending_isr`, `Core::hardirq` |
//! | `driver` | the ISR, the poll function, delivery, moderation | `Vector::napi_ret`, `tx_cleaning`, `tx`, `policy`, its counters (`crate::moderation`) |
//! | `kernel` | softirqs, `net_rx_action`, NAPI, ksoftirqd | `Core::kernel`, `Vector::napi` (`crate::kernel`) |
//! | `sched` | the thread level | `Core::threads`, `Core::ksoftirqd`, `App::state` (`crate::sched`) |
//! | `socket` | sockets and the apps' `recv` loop | `App::socket`, `App::holding` (`crate::socket`) |
//! | `busypoll` | busy polling, epoll, request/response | `App::session`, `napi_id`, `epoll_left`; `Vector::spinner`, `waiting`; `Napi`'s busy-poll bits (`crate::busypoll`) |
//! | `xsk` | AF_XDP apps: the redirect into an XSK, the flush, the apps' and their polling threads' loops | `App::xsk` (`XskState`), `Host::xsk_bound` (`crate::xsk`) |
//! | `qos` | the Rx loop under a ring discipline | `Napi::rings` (`crate::qos`) |
//! | `adapt` | receive-load controllers | `Host::adapt` (`CoreAdapt`; `crate::adapt`) |
//! | `hooks` | where the optional mechanisms join the main path | — |
//! | `tick` | the timer tick | — |
//! | `veth` | a veth device: the peer's transmit into its ring | `Vector::rings` (`crate::nic::config::Device`) |
//! | `sender` | the sending thread of a veth lab | `Host::sender` ([`SenderThread`]; `crate::sender`) |
//! | `napi_thread` | threaded NAPI: the NAPI's thread | `Vector::napi_thread` |
//! | `skb_defer` | deferred skb frees: an app's recv, the allocating core's list and its flush | `Host::defer_lists` (`crate::kernel::DeferList`) |
//! | `polling` | Salah's polling loop (the `disable-enable`, `poll`, `napi-poll`, `hybrid` schemes) | `Vector::poll_loop` (`PollLoop`), `Vector::pending_ticks` |
//! | `layout` | where the cores and vectors are kept (one core inline, or several) | `One`, `Many` |
//! | `partition` | a host whose cores do not interact, run core by core | — |
//!
//! Scheme by scheme:
//! - `ideal`: an accepted arrival schedules the NAPI and runs softirqs inline, for free.
//! - `irq`: the NIC raises an IRQ per arrival (cause bit semantics, `nic`); the ISR schedules
//!   the NAPI without masking the vector, so ISRs keep preempting protocol processing.
//! - `coalesce-count`, `coalesce-time`: as `irq`; the NIC coalesces (`nic.rx_frames`,
//!   `nic.rx_usecs`).
//! - `napi`: the IRQ auto-masks the vector; the poll re-enables it when it completes.
//! - `disable-enable`, `poll`, `napi-poll`, `hybrid`: the same NIC and CPU, with protocol
//!   processing in Salah's polling loop (`polling`).

mod adapt;
pub(crate) mod busypoll;
mod dispatch;
mod driver;
mod feed;
mod hooks;
mod irq;
mod kernel;
mod layout;
mod napi_thread;
mod nic;
pub(crate) mod partition;
mod polling;
mod qos;
mod sched;
mod sender;
mod skb_defer;
mod socket;
mod tick;
mod veth;
mod xsk;

use std::collections::VecDeque;

use crate::cpu::{Category, Cpu, Level, N_CATEGORIES};
use crate::dist::sample;
use crate::engine::{Interrupted, Model};
use crate::kernel::{Kernel, Napi};
use crate::metrics::{Metrics, Report, Snapshot};
use crate::moderation::{AnyPolicy, Policy};
use crate::nic::tx::{TxRing, Wire};
use crate::nic::{IrqLine, Packet, Ring};
use crate::queue::{Earliest, EventQueue};
use crate::rng::{N_STREAMS, Stream, StreamId};
use crate::scenario::{Cost, Scenario};
use crate::sched::{RunQueue, ThreadState};
use crate::socket::Socket;
use crate::time::{SimDuration, SimTime};
use crate::trace::Tracer;

pub(crate) use dispatch::{Timer, Work};
pub(crate) use feed::{Buffer, Feed, Generator, Routed};
pub(crate) use layout::{Layout, Many, One};
pub(crate) use polling::PollLoop;
pub(crate) use sender::SenderThread;

/// Priority of timers in the event queue (the CPU's completion ranks 0 and an arrival 2).
const PRIO_TIMER: u8 = 1;

/// One core.
#[derive(Debug)]
pub struct Core {
    pub cpu: Cpu<Work>,
    pub kernel: Kernel,
    pub threads: RunQueue,
    pub ksoftirqd: ThreadState,
    /// Packet IRQs waiting for the hard-IRQ level, in order (vector indices).
    pub pending_isr: VecDeque<u16>,
    /// The vectors whose IRQ and NAPI run here.
    pub vectors: Vec<u16>,
    /// The vector whose hard-IRQ job runs (ISR, polling-timer or NAPI-timer handler).
    pub hardirq: u16,
    /// The random streams of the costs of the work done here (`rng::core_streams`).
    pub streams: [Stream; N_STREAMS],
}

/// One queue vector.
#[derive(Debug)]
pub struct Vector {
    pub core: usize,
    pub irq: IrqLine,
    /// One Rx ring per traffic class.
    pub rings: Vec<Ring>,
    pub tx: TxRing,
    pub napi: Napi,
    /// The work the last poll call reported (`budget` when it did not complete).
    pub napi_ret: u64,
    /// Tx descriptors being cleaned by the running `TxClean` job.
    pub tx_cleaning: usize,
    pub policy: AnyPolicy,
    pub poll_loop: PollLoop,
    /// Cumulative counters of the vector, for its moderation policy: Rx packets and bytes the
    /// driver cleaned, Tx packets and bytes it cleaned, IRQs issued.
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub irq_events: u64,
    /// Polling-timer interrupts waiting for the hard-IRQ level.
    pub pending_ticks: u32,
    /// When a Tx write-back will raise the cause, if armed.
    pub tx_signal_at: Option<SimTime>,
    /// The app whose busy loop owns this NAPI and spins (`busypoll`), and the apps whose
    /// busy loops spin waiting for it to be free.
    pub spinner: Option<u16>,
    pub waiting: Vec<u16>,
    /// Its NAPI thread (`kernel.threaded_napi`, `napi.N.threaded`; `napi_thread`).
    pub napi_thread: ThreadState,
    /// Its busy-polling NAPI thread's spin job under way, ps (0: none; `napi_thread`).
    pub napi_spin_ps: u64,
}

/// A vector's state for ring contention (`platform.ring_contention_ns`), kept out of
/// [`Vector`] so that the common path does not carry it.
#[derive(Debug, Default)]
pub struct VectorCosts {
    /// The core of the busy poller that last started processing a packet of this vector on
    /// another core (its job may be over: `busypoll::contention_on_isr` checks), and whether
    /// this vector's ISR is under way.
    pub poller_packet: Option<u16>,
    pub in_isr: bool,
}

/// One application thread and its socket.
#[derive(Debug)]
pub struct App {
    pub core: usize,
    pub socket: Socket,
    pub state: ThreadState,
    /// The packet it is handling.
    pub holding: Option<Packet>,
    /// The NAPI (vector) of the last packet its socket received (`sk_napi_id`; for epoll,
    /// the context's, forgotten after a busy loop that found nothing).
    pub napi_id: Option<u16>,
    /// Its busy loop, while in one (`busypoll`).
    pub session: Option<crate::host::busypoll::Session>,
    /// Ready events left of the last `epoll_wait`.
    pub epoll_left: u64,
    /// When it was last woken from sleep, until its switch in completes (its wake-up delay).
    pub woken_at: Option<SimTime>,
    /// The cost drawn for its last switch in.
    pub switch_cost: SimDuration,
    /// Its AF_XDP socket, if it reads one (`app.N.io = "xsk"`; `xsk`).
    pub xsk: Option<Box<xsk::XskState>>,
}

/// The state of one run; `L` keeps its cores and vectors, `F` brings its packets.
pub(crate) struct Host<'s, T: Tracer, L: Layout, F: Feed> {
    pub now: SimTime,
    pub s: &'s Scenario,
    pub feed: F,
    pub next_id: u64,
    pub timers: EventQueue<Timer>,
    /// The cores and the queue vectors.
    pub l: L,
    /// Each core's next completion (with more than one core).
    pub core_times: Earliest,
    /// The earliest next completion of all cores.
    next_cpu_ps: u64,
    /// The core whose job completion is being handled (`usize::MAX`: none).
    completing: usize,
    pub apps: Vec<App>,
    /// The sending thread (`[sender]`; `sender`), if one is modelled.
    pub sender: Option<Box<SenderThread>>,
    /// Each vector's state for ring contention (empty when it is off).
    pub vector_costs: Vec<VectorCosts>,
    /// Each core's list of deferred skb frees (`skb_defer`; empty when it is off).
    pub defer_lists: Vec<crate::kernel::DeferList>,
    /// Each core's receive-load controller (empty: none).
    pub adapt: Vec<adapt::CoreAdapt>,
    pub wire: Wire,
    pub metrics: Metrics,
    /// Each core's CPU accounts when the window opened.
    at_warmup: Vec<[u64; N_CATEGORIES]>,
    measured: Vec<[u64; N_CATEGORIES]>,
    /// More than one core: the earliest completion comes from `core_times`.
    multi_core: bool,
    /// Every packet ends in the stack (no app, no forwarding): the sink needs no lookup.
    all_to_stack: bool,
    /// One ring per vector, every packet to the stack, descriptors written back at once:
    /// `driver::packet_done` takes its fused path.
    fused: bool,
    /// A poll's packets may cost more than their processing: the poll's cold start
    /// (`platform.cold_packets`) or a busy poller's ring contention
    /// (`platform.ring_contention_ns`).
    packet_extras: bool,
    /// A busy poller on another core than its vector's pays for overlapping the vector's
    /// interrupt handler (`platform.ring_contention_ns`, with busy polling).
    contention: bool,
    /// A poll of another NAPI than the core's last costs more (`platform.napi_switch_ns`).
    napi_switching: bool,
    /// Every vector has one Rx ring (one traffic class).
    single_ring: bool,
    /// The Rx budget of each ring in a poll: the weight split equally (at least 1 each).
    ring_budget: u64,
    /// The vectors' rings are served by a ring discipline (`qos`), not the stock loop.
    disciplined: bool,
    /// Apps wait with epoll, busy-poll or answer requests (`busypoll`): not the plain recv
    /// loop.
    apps_extended: bool,
    /// The device is a veth (`veth`): no interrupt; arrivals are its peer's transmits.
    veth: bool,
    /// Threaded NAPI (`napi_thread`) for some vector: napi_schedule wakes the NAPI's thread.
    threaded: bool,
    /// Some vector's NAPI thread busy-polls (`napi_thread`).
    threaded_busy: bool,
    /// An app's recv frees the skb it read, or defers its free (`skb_defer`).
    skb_defer: bool,
    /// An app reads an AF_XDP socket (`xsk`).
    xsk: bool,
    /// The app whose XSK each vector's queue is bound to ([`crate::topology::NO_APP`]: none;
    /// empty without AF_XDP apps).
    xsk_bound: Vec<u16>,
    pub tracer: T,
}

impl<'s, T: Tracer, L: Layout> Host<'s, T, L, Generator<'s>> {
    /// The whole host of `s`, generating its own traffic.
    pub fn new(s: &'s Scenario, tracer: T) -> Self {
        let streams = crate::rng::core_streams(s.run.seed, s.run.replication, s.host.cores);
        let feed = Generator::new(s, &streams[0]);
        Host::with_feed(s, tracer, feed, streams)
    }
}

impl<'s, T: Tracer, L: Layout, F: Feed> Host<'s, T, L, F> {
    /// The host of `s` fed by `feed`; core `c` draws its costs from `streams[c]`.
    pub fn with_feed(
        s: &'s Scenario,
        tracer: T,
        feed: F,
        streams: Vec<[Stream; N_STREAMS]>,
    ) -> Self {
        let p = &s.platform;
        let topo = &s.topology;
        let n_cores = s.host.cores;
        assert_eq!(streams.len(), n_cores, "one block of streams per core");
        let cores: Vec<Core> = streams
            .into_iter()
            .enumerate()
            .map(|(c, streams)| {
                let vectors = topo.core_vectors[c].clone();
                let apps_here = s.apps.iter().filter(|a| a.core == c).count()
                    + (0..s.apps.len())
                        .filter(|&a| s.xsk.of(a).and_then(|x| x.poll_core) == Some(c))
                        .count();
                // the sending thread spins between sends (sockperf's pacing): its core never
                // enters an idle state, so it never pays for leaving one
                let spins = s.sender.runs() && s.sender.core == c;
                Core {
                    cpu: Cpu::new()
                        .with_wakeup(
                            if p.wakeup.is_zero() || spins {
                                SimDuration::ZERO
                            } else {
                                p.wakeup.mean
                            },
                            p.wakeup_after,
                        )
                        .with_irq_indirect(p.irq_indirect),
                    kernel: {
                        let mut k = Kernel::new(s.kernel.jiffy.ps(), vectors.len());
                        k.netdev_budget = s.kernel.netdev_budget;
                        k
                    },
                    threads: RunQueue::new(apps_here + 1),
                    ksoftirqd: ThreadState::Sleeping,
                    pending_isr: VecDeque::with_capacity(vectors.len()),
                    vectors,
                    hardirq: 0,
                    streams,
                }
            })
            .collect();
        let has_tx = s.nic.tx_ring_descriptors > 0;
        let vectors = (0..s.nic.queues)
            .map(|v| Vector {
                core: topo.vector_core[v] as usize,
                irq: IrqLine::new(&s.nic),
                rings: (0..s.qos.rings)
                    .map(|_| Ring::new(s.nic.ring_descriptors))
                    .collect(),
                tx: TxRing::new(s.nic.tx_ring_descriptors),
                napi: Napi::default(),
                napi_ret: 0,
                tx_cleaning: 0,
                policy: s.moderation.policy(has_tx),
                poll_loop: PollLoop::new(s.scheme),
                rx_packets: 0,
                rx_bytes: 0,
                tx_packets: 0,
                tx_bytes: 0,
                irq_events: 0,
                pending_ticks: 0,
                tx_signal_at: None,
                spinner: None,
                waiting: Vec::with_capacity(s.apps.len()),
                napi_thread: ThreadState::Sleeping,
                napi_spin_ps: 0,
            })
            .collect();
        let min_truesize = s.socket.truesize(1);
        let apps = s
            .apps
            .iter()
            .enumerate()
            .map(|(i, a)| App {
                core: a.core,
                socket: Socket::new(a.rcvbuf_bytes, min_truesize),
                state: ThreadState::Sleeping,
                holding: None,
                napi_id: None,
                session: None,
                epoll_left: 0,
                woken_at: None,
                switch_cost: SimDuration::ZERO,
                xsk: s.xsk.of(i).map(|x| Box::new(xsk::XskState::new(x.ring))),
            })
            .collect();
        let contention = !p.ring_contention.is_zero() && s.host.cores > 1 && s.busy.any();
        let mut host = Host {
            now: SimTime::ZERO,
            s,
            feed,
            next_id: 0,
            timers: EventQueue::with_capacity(64),
            core_times: Earliest::new(n_cores),
            l: L::new(cores, vectors),
            next_cpu_ps: u64::MAX,
            completing: usize::MAX,
            apps,
            sender: s
                .sender
                .runs()
                .then(|| Box::new(SenderThread::new(s.sender.core))),
            vector_costs: if contention {
                (0..s.nic.queues).map(|_| VectorCosts::default()).collect()
            } else {
                Vec::new()
            },
            defer_lists: if s.platform.skb_free.is_zero() {
                Vec::new()
            } else {
                (0..n_cores)
                    .map(|_| crate::kernel::DeferList::default())
                    .collect()
            },
            adapt: Vec::new(),
            wire: Wire::new(s.nic.link_gbps),
            metrics: Metrics::new(s),
            at_warmup: vec![[0; N_CATEGORIES]; n_cores],
            measured: vec![[0; N_CATEGORIES]; n_cores],
            multi_core: n_cores > 1,
            all_to_stack: s.apps.is_empty() && !s.host.forward,
            fused: s.apps.is_empty()
                && !s.host.forward
                && s.qos.rings == 1
                && s.platform.writeback.is_zero()
                && !s.platform.cold(),
            packet_extras: s.platform.cold() || contention,
            contention,
            napi_switching: !p.napi_switch.is_zero(),
            single_ring: s.qos.rings == 1,
            ring_budget: {
                let rings = s.qos.rings as u64;
                let weight = s.kernel.napi_weight;
                if rings > 1 {
                    (weight / rings).max(1)
                } else {
                    weight
                }
            },
            disciplined: s.qos.discipline.is_some(),
            apps_extended: s.busy.any()
                || s.rr.is_some()
                || s.apps.iter().any(|a| a.io == crate::busypoll::Io::Epoll)
                || s.xsk.any(),
            veth: s.nic.device == crate::scenario::Device::Veth,
            threaded: s.kernel.any_threaded(),
            threaded_busy: s.kernel.any_threaded_busy_poll(),
            skb_defer: !s.platform.skb_free.is_zero(),
            xsk: s.xsk.any(),
            xsk_bound: if s.xsk.any() {
                let mut bound = vec![crate::topology::NO_APP; s.nic.queues];
                for (a, x) in s.xsk.apps.iter().enumerate() {
                    if let Some(x) = x {
                        bound[x.queue as usize] = a as u16;
                    }
                }
                bound
            } else {
                Vec::new()
            },
            tracer,
        };
        for v in 0..host.l.vectors().len() {
            if let Some(write) = host.l.vector(v).policy.initial() {
                host.apply_moderation(v, write);
            }
        }
        if s.scheme.uses_poll_loop() {
            host.poll_loop_start();
        }
        host.adapt_start();
        host.tick_start();
        if host.xsk {
            host.xsk_start();
        }
        host
    }

    /// Runs to the end and returns the report, unless `stop` says to stop first.
    pub fn run(mut self, stop: &mut dyn FnMut() -> bool) -> Result<(Report, T), Interrupted> {
        let (warmup, end) = (self.s.run.warmup, self.s.run.end);
        crate::engine::run(&mut self, warmup, end, stop)?;
        let snap = self.snapshot();
        let mut report = self.metrics.report(self.s, &snap);
        report.replay = self.feed.replay_report();
        Ok((report, self.tracer))
    }

    /// The counters and the end state of a run the caller drove to its end.
    pub fn into_results(self) -> (Metrics, Snapshot) {
        let snap = self.snapshot();
        (self.metrics, snap)
    }

    fn snapshot(&self) -> Snapshot {
        // per (vector, class): a ring may hold several classes (`qos`)
        let classes = self.s.traffic.classes.len();
        let mut in_ring = vec![0; self.l.vectors().len() * classes];
        let mut in_poll = vec![0; self.l.vectors().len() * classes];
        for (i, v) in self.l.vectors().iter().enumerate() {
            for r in &v.rings {
                r.count_by_class(&mut in_ring[i * classes..], &mut in_poll[i * classes..]);
            }
        }
        Snapshot {
            in_ring,
            in_poll,
            in_socket: self
                .apps
                .iter()
                .map(|a| (a.socket.len() + a.xsk.as_ref().map_or(0, |x| x.ring.len())) as u64)
                .collect(),
            in_app: self
                .apps
                .iter()
                .map(|a| u64::from(a.holding.is_some()))
                .collect(),
            in_tx_ring: self
                .l
                .vectors()
                .iter()
                .map(|v| v.tx.occupied() as u64)
                .collect(),
            cpu_ps: self.measured.clone(),
            in_sender: self.sender.as_ref().map_or(0, |s| s.holds()),
        }
    }

    #[inline]
    pub(crate) fn measuring(&self) -> bool {
        self.metrics.measuring(self.now)
    }

    /// Draws a cost of work on core `c`.
    #[inline]
    fn draw(&mut self, c: usize, cost: Cost, stream: StreamId) -> SimDuration {
        sample(&cost, &mut self.l.core_mut(c).streams[stream as usize])
    }

    /// Draws a cost of work on core `c`, or nothing if it is zero.
    #[inline]
    fn draw_or_zero(&mut self, c: usize, cost: Cost, stream: StreamId) -> SimDuration {
        if cost.is_zero() {
            SimDuration::ZERO
        } else {
            self.draw(c, cost, stream)
        }
    }

    /// Starts a job on core `c` (brought to now first) and updates its next completion.
    #[inline(always)]
    fn start(&mut self, c: usize, level: Level, d: SimDuration, cat: Category, work: Work) {
        let cpu = &mut self.l.core_mut(c).cpu;
        cpu.advance(self.now);
        cpu.start(level, d, cat, work);
        let t = cpu.next_completion_ps();
        self.cpu_changed(c, t);
    }

    /// The completion event of core `c` (of several) is handled: its next completion counts
    /// now.
    #[inline(never)]
    fn core_finished_event(&mut self, c: usize) {
        self.completing = usize::MAX;
        let t = self.l.core(c).cpu.next_completion_ps();
        self.core_times.set(c, t);
        self.next_cpu_ps = self.core_times.time();
    }

    /// Core `c`'s next completion is now `t`. (The core whose completion is being handled is
    /// updated once, when its event ends.)
    #[inline(always)]
    fn cpu_changed(&mut self, c: usize, t: u64) {
        if !self.multi_core() {
            self.next_cpu_ps = t;
        } else if c != self.completing {
            self.core_times.set(c, t);
            self.next_cpu_ps = self.core_times.time();
        }
    }

    /// More than one core (known at compile time for the one-core layout).
    #[inline(always)]
    fn multi_core(&self) -> bool {
        !L::ONE_CORE && self.multi_core
    }

    #[inline]
    fn is_busy(&self, c: usize, level: Level) -> bool {
        self.l.core(c).cpu.is_busy(level)
    }

    #[inline]
    fn push_timer(&mut self, t: SimTime, timer: Timer) {
        self.timers.push(t, PRIO_TIMER, timer);
    }

    /// Picoseconds core `c` has spent at the thread level (its threads' CPU time).
    #[inline]
    fn thread_ps(&mut self, c: usize) -> u64 {
        let cpu = &mut self.l.core_mut(c).cpu;
        cpu.advance(self.now);
        let a = cpu.account();
        a[Category::Ksoftirqd as usize]
            + a[Category::App as usize]
            + a[Category::BusyPoll as usize]
            + a[Category::NapiThread as usize]
            + a[Category::Sender as usize]
    }
}

impl<T: Tracer, L: Layout, F: Feed> Model for Host<'_, T, L, F> {
    #[inline]
    fn next_completion_ps(&self) -> u64 {
        self.next_cpu_ps
    }

    #[inline]
    fn next_timer_ps(&self) -> u64 {
        self.timers.next_ps()
    }

    #[inline]
    fn next_arrival_ps(&self) -> u64 {
        self.feed.next_ps()
    }

    #[inline]
    fn on_completion(&mut self, now: SimTime) {
        debug_assert!(now >= self.now, "event in the past: {now} < {}", self.now);
        self.now = now;
        let multi = self.multi_core();
        let c = if multi { self.core_times.min().1 } else { 0 };
        let cpu = &mut self.l.core_mut(c).cpu;
        cpu.advance(now);
        let (_, work) = cpu.complete();
        if multi {
            self.completing = c;
        } else {
            self.next_cpu_ps = cpu.next_completion_ps();
        }
        self.work_done(c, work);
        if multi {
            self.core_finished_event(c);
        }
    }

    #[inline]
    fn on_timer(&mut self, now: SimTime) {
        debug_assert!(now >= self.now, "event in the past: {now} < {}", self.now);
        self.now = now;
        let (_, timer) = self.timers.pop().expect("a timer is due");
        self.timer_fired(timer);
    }

    #[inline]
    fn on_arrival(&mut self, now: SimTime) {
        debug_assert!(now >= self.now, "event in the past: {now} < {}", self.now);
        self.now = now;
        let a = self.feed.take();
        if self.veth {
            self.veth_arrival(a);
        } else {
            self.arrival(a);
        }
    }

    fn open_window(&mut self, t: SimTime) {
        for (core, acc) in self.l.cores_mut().iter_mut().zip(&mut self.at_warmup) {
            core.cpu.advance(t);
            *acc = core.cpu.account();
        }
    }

    fn close(&mut self, t: SimTime) {
        self.now = t;
        for (c, core) in self.l.cores_mut().iter_mut().enumerate() {
            core.cpu.advance(t);
            let mut m = core.cpu.account();
            for (x, b) in m.iter_mut().zip(self.at_warmup[c]) {
                *x -= b;
            }
            self.measured[c] = m;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Value;
    use crate::trace::NoTrace;

    /// The lines of this module's doc, without their `//! `.
    fn module_doc() -> Vec<&'static str> {
        include_str!("mod.rs")
            .lines()
            .map_while(|l| l.strip_prefix("//!"))
            .map(str::trim)
            .collect()
    }

    /// The rows of the doc's table under the line that starts with `title`.
    fn table_rows(title: &str) -> Vec<&'static str> {
        let doc = module_doc();
        let from = doc
            .iter()
            .position(|l| l.starts_with(title))
            .unwrap_or_else(|| panic!("a table under {title:?}"));
        doc[from..]
            .iter()
            .skip_while(|l| !l.starts_with('|'))
            .take_while(|l| l.starts_with('|'))
            .skip(2)
            .copied()
            .collect()
    }

    /// The code spans (between backticks) of a table cell.
    fn spans(cell: &str) -> Vec<&str> {
        cell.split('`').skip(1).step_by(2).collect()
    }

    #[test]
    fn the_module_doc_lists_every_file_of_host_and_no_other() {
        let mut listed: Vec<String> = table_rows("Every file, and the data it changes")
            .iter()
            .map(|row| spans(row.split('|').nth(1).unwrap())[0].to_string())
            .collect();
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/host");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "rs"))
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        listed.sort();
        files.sort();
        assert_eq!(listed, files);
    }

    #[test]
    fn every_function_the_module_doc_places_is_in_its_file() {
        // rows of the first table: `file::function`, then functions of the same file
        let rows = table_rows("Where each kernel and driver function lives");
        assert!(rows.len() > 20);
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/host");
        for row in rows {
            let mut file = "";
            for span in spans(row.split('|').nth(2).unwrap()) {
                if span.starts_with("crate::") {
                    continue;
                }
                let name = match span.split_once("::") {
                    Some((f, name)) => {
                        file = f;
                        name
                    }
                    None => span,
                };
                let src = std::fs::read_to_string(format!("{dir}/{file}.rs")).unwrap();
                assert!(
                    src.contains(&format!("fn {name}(")),
                    "the module doc places `{name}` in host/{file}.rs: {row}"
                );
            }
        }
    }

    #[test]
    fn the_snapshot_counts_each_vectors_packets_in_its_own_slots_per_class() {
        // two vectors, two classes: slot `vector * 2 + class` of `in_ring` (every packet a
        // ring holds) and of `in_poll` (the one in protocol processing)
        let s = Scenario::from_pairs([
            ("nic.queues", Value::Int(2)),
            ("host.cores", Value::Int(2)),
            ("traffic.classes.0.share", Value::Float(0.5)),
            ("traffic.classes.1.share", Value::Float(0.5)),
        ])
        .unwrap();
        let mut h = Host::<NoTrace, Many, _>::new(&s, NoTrace);
        let pkt = |class: u16| Packet {
            arrival: SimTime::ZERO,
            size_bytes: 64,
            flow: 0,
            class,
            id: 0,
        };
        let last = h.l.vector(1).rings.len() - 1;
        let ring = &mut h.l.vector_mut(1).rings[last];
        ring.push(pkt(1));
        ring.push(pkt(0));
        ring.take();
        let snap = h.snapshot();
        assert_eq!(snap.in_ring, vec![0, 0, 1, 1]);
        assert_eq!(snap.in_poll, vec![0, 0, 0, 1]);
    }
}
