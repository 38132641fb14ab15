//! The continuation table: what happens when a CPU job ends ([`Work`]) and when a timer fires
//! ([`Timer`]). Every step of the model that waits (for CPU time, or for a time) names its
//! continuation here, and each continuation is one function of the file that owns its part
//! (named at the end of its arm). Both tables are `match`es: static dispatch, inlined into the
//! engine's event loop.

use super::{Feed, Host, Layout};
use crate::trace::Tracer;

/// What a CPU job is doing; its completion continues the corresponding step. Which vector or
/// thread it belongs to is kept by its core (`Core::hardirq`, `Kernel::polling`,
/// `RunQueue::current`): a core runs at most one job per priority level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// The NIC's hard interrupt handler (entry, ISR, exit; masking for NAPI).
    Isr,
    /// Entry overhead of a `net_rx_action` run.
    NetRxEntry,
    /// Entry overhead of one call of the driver's poll function.
    PollEntry,
    /// Cleaning completed Tx descriptors at the start of a poll.
    TxClean,
    /// Protocol processing of the packet at the head of the ring being cleaned (and its
    /// transmit, when forwarded).
    Packet,
    /// Waking the app whose socket just got a packet (softirq; then the poll goes on).
    Wakeup,
    /// Re-enabling the vector after `napi_complete_done`.
    Unmask,
    /// The LL driver's poll starts a visit of an Rx ring (`qos`).
    RingVisit,
    /// A context switch into the core's current thread (ksoftirqd or an app).
    ThreadSwitch,
    /// An app reading and handling one packet.
    AppPacket,
    /// The polling timer's interrupt handler (`polling`).
    PollTimer,
    /// Protocol processing of one packet in Salah's polling loop (`polling`).
    LoopPacket,
    /// Waking an app from Salah's polling loop.
    LoopWakeup,
    /// Re-enabling packet interrupts at the end of the polling loop (`polling`).
    LoopUnmask,
    /// The NAPI hrtimer's interrupt (software IRQ coalescing).
    NapiWatchdog,
    /// A busy loop's iterations that find nothing (`busypoll`).
    BusySpin,
    /// A busy loop goes on after the softirqs its `local_bh_enable` ran.
    BusyCheck,
    /// `busy_poll_stop` returns, after the softirqs its `local_bh_enable` ran.
    BusyStopped,
    /// `epoll_wait` returns ready events, or nothing (a zero timeout).
    EpollReturn,
    EpollEmpty,
    /// A NAPI thread goes on after the softirqs its `local_bh_enable` ran (`napi_thread`).
    NapiThreadNext,
    /// A busy-polling NAPI thread's polls that find nothing (`napi_thread`).
    NapiThreadSpin,
    /// The sending thread's CPU time for one packet (`sender`).
    SenderSend,
    /// The sending thread waking a NAPI thread (`sender`).
    SenderWakeup,
    /// `net_rx_action`'s loop head freed the core's deferred skbs (`skb_defer`).
    NetRxFlushed,
    /// A NAPI thread freed its core's deferred skbs after its poll (`skb_defer`).
    NapiThreadFlushed,
    /// An AF_XDP app's empty checks of its ring (`xsk`).
    XskSpin,
    /// The entry of a `recvfrom` on an AF_XDP socket (`xsk`).
    XskRecvfrom,
}

/// Timers in the event queue, each for one vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// The NIC's moderation timer (ITR throttle or absolute timeout) expires.
    NicModeration(u16),
    /// The periodic polling timer (`polling`).
    PollTick(u16),
    /// The hybrid scheme's throughput measurement window ends (`polling`).
    HybridWindow(u16),
    /// The NAPI hrtimer of software IRQ coalescing (`gro_flush_timeout`).
    NapiWatchdog(u16),
    /// A transmitted packet leaves the wire: its descriptor write-back raises the cause.
    TxDone(u16),
    /// A receive-load controller's sampling interval of a core ends (`adapt`).
    AdaptInterval(u16),
    /// A core's timer tick (`tick`).
    Tick(u16),
    /// An app's busy loop reaches its deadline (`busypoll`).
    BusyDeadline(u16),
    /// A vector's interrupt reaches its core, `platform.irq_delivery_ns` after it was issued.
    IrqDelivered(u16),
    /// The oldest descriptor not yet written back of a vector's Rx ring (vector, ring) is,
    /// `platform.writeback_ns` after its packet's DMA.
    WriteBack(u16, u16),
}

impl<T: Tracer, L: Layout, F: Feed> Host<'_, T, L, F> {
    /// Core `c`'s job tagged `work` has run to its end: its continuation.
    #[inline(always)]
    pub(super) fn work_done(&mut self, c: usize, work: Work) {
        match work {
            Work::Isr => self.isr_done(c),                            // driver
            Work::NetRxEntry => self.net_rx_start(c),                 // kernel
            Work::PollEntry => self.driver_poll_begin(c),             // driver
            Work::TxClean => self.tx_clean_done(c),                   // driver
            Work::Packet => self.packet_done(c),                      // driver
            Work::Wakeup => self.driver_poll_step(c),                 // driver
            Work::Unmask => self.unmask_done(c),                      // driver
            Work::RingVisit => self.ring_visit_done(c),               // qos
            Work::ThreadSwitch => self.thread_switched_in(c),         // sched
            Work::AppPacket => self.app_packet_done(c),               // socket
            Work::PollTimer => self.tick_done(c),                     // polling
            Work::NapiWatchdog => self.watchdog_done(c),              // kernel
            Work::LoopPacket => self.loop_packet_done(c),             // polling
            Work::LoopWakeup => self.loop_wakeup_done(c),             // polling
            Work::LoopUnmask => self.loop_unmask_done(c),             // polling
            Work::BusySpin => self.busy_spin_done(c),                 // busypoll
            Work::BusyCheck => self.busy_check_current(c),            // busypoll
            Work::BusyStopped => self.busy_stopped(c),                // busypoll
            Work::EpollReturn => self.epoll_events(c),                // busypoll
            Work::EpollEmpty => self.epoll_again(c),                  // busypoll
            Work::NapiThreadNext => self.napi_thread_next(c),         // napi_thread
            Work::NapiThreadSpin => self.napi_thread_spun(c),         // napi_thread
            Work::SenderSend => self.sender_sent(c),                  // sender
            Work::SenderWakeup => self.sender_after_send(c),          // sender
            Work::NetRxFlushed => self.net_rx_next(c),                // kernel
            Work::NapiThreadFlushed => self.napi_thread_bh_enable(c), // napi_thread
            Work::XskSpin => self.xsk_spin_done(c),                   // xsk
            Work::XskRecvfrom => self.xsk_recvmsg(c),                 // xsk
        }
    }

    /// `timer` fires now: its continuation.
    pub(super) fn timer_fired(&mut self, timer: Timer) {
        match timer {
            Timer::NicModeration(v) => self.on_moderation_timer(v as usize), // nic
            Timer::PollTick(v) => self.on_poll_tick(v as usize),             // polling
            Timer::HybridWindow(v) => self.on_hybrid_window(v as usize),     // polling
            Timer::NapiWatchdog(v) => self.on_napi_watchdog(v as usize),     // kernel
            Timer::TxDone(v) => self.on_tx_done(v as usize),                 // nic
            Timer::AdaptInterval(c) => self.on_adapt_interval(c as usize),   // adapt
            Timer::Tick(c) => self.on_tick(c as usize),                      // tick
            Timer::BusyDeadline(a) => self.on_busy_deadline(a as usize),     // busypoll
            Timer::IrqDelivered(v) => self.on_irq_delivered(v as usize),     // irq
            Timer::WriteBack(v, r) => self.on_write_back(v as usize, r as usize), // nic
        }
    }
}
