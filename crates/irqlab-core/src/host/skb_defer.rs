//! Deferred skb frees (`platform.skb_free_ns`, `kernel.skb_defer_max`; the list's rule:
//! `crate::kernel::DeferList`). An app's `recv` frees the skb it read (`udp_recvmsg` →
//! `skb_consume_udp` → `skb_attempt_defer_free`, Linux 6.18; TCP's `tcp_eat_recv_skb` since
//! 5.17): at once, in its own time, if its core allocated the skb; else onto the allocating
//! core's list (`skb->alloc_cpu`), unless that list is full, when the app frees it after all.
//! The skb that finds half of `skb_defer_max` on the list before it sends an IPI to the
//! allocating core (`kick_defer_list_purge` → `trigger_rx_softirq`), which raises `NET_RX`
//! there, whose exit runs it like any hard IRQ's (`irq::irq_exit`; the IPI's own cost is not
//! modelled, an idle core pays its wake-up). Each `net_rx_action` loop head frees the whole
//! list first (`skb_defer_free_flush`), charged to its softirq context, as does a NAPI thread
//! after each poll (`napi_threaded_poll_loop`).
//!
//! The allocating core: the veth's sender (`sender.core`: the sending thread allocates the skb
//! and veth hands it on), or the core whose poll built the skb from a NIC's ring (the vector's
//! core, the NAPI thread's, a busy poller's).

use super::{Feed, Host, Layout, Work};
use crate::kernel::Deferred;
use crate::time::SimDuration;
use crate::trace::Tracer;

impl<T: Tracer, L: Layout, F: Feed> Host<'_, T, L, F> {
    /// The core that allocates the skb of a packet whose protocol processing runs on core `c`.
    #[inline(always)]
    pub(super) fn alloc_core(&self, c: usize) -> u16 {
        let c = if self.veth { self.s.sender.core } else { c };
        c as u16
    }

    /// `skb_attempt_defer_free` by app `a` on core `c` of the skb it has just read: the CPU
    /// time the app spends freeing it (none if the allocating core's list takes it).
    #[cold]
    #[inline(never)]
    pub(super) fn skb_attempt_defer_free(&mut self, c: usize, a: usize) -> SimDuration {
        let free = self.s.platform.skb_free;
        let alloc = self.apps[a].socket.taken_alloc_core();
        if alloc == c {
            return free;
        }
        let max = self.s.kernel.skb_defer_max;
        match self.defer_lists[alloc].attempt(max) {
            Deferred::No => free,
            Deferred::Yes => SimDuration::ZERO,
            Deferred::Kick => {
                self.kick_defer_list_purge(alloc);
                SimDuration::ZERO
            }
        }
    }

    /// `kick_defer_list_purge`: an IPI to core `c` raises `NET_RX` there
    /// (`trigger_rx_softirq`); the IPI's exit runs it, unless softirq processing is under way
    /// on the core (it sees it) or bottom halves are disabled there.
    fn kick_defer_list_purge(&mut self, c: usize) {
        self.l.core_mut(c).kernel.softirq_pending = true;
        self.irq_exit(c);
    }

    /// `skb_defer_free_flush` on core `c`, in its softirq context: frees the whole list,
    /// `platform.skb_free_ns` an skb, then goes on with `then`. False if the list is empty
    /// (nothing to do).
    #[cold]
    #[inline(never)]
    pub(super) fn skb_defer_free_flush(&mut self, c: usize, then: Work) -> bool {
        let list = &mut self.defer_lists[c];
        if list.skbs == 0 {
            return false;
        }
        let n = list.flush();
        let d = SimDuration(self.s.platform.skb_free.ps() * n);
        self.start_softirq_job(c, d, then);
        true
    }
}
