//! The optional mechanisms' entry points into the main path: busy polling and epoll
//! (`busypoll`), request/response traffic (`busypoll`), AF_XDP apps (`xsk`), a ring
//! discipline (`qos`) and a receive-load controller (`adapt`). Each place where one of them joins the path a packet
//! takes is one call of one hook here, named after its mechanism and the event. A hook is
//! inlined and first tests whether its mechanism is on (a flag of the host, or the scenario):
//! off, it costs that test, as the check written in the main path did.
//!
//! | hook | called from | what the mechanism does there |
//! |---|---|---|
//! | `busy_on_arrival` | `nic::arrival` | a busy poller spinning on the vector polls it; a lost request is sent again |
//! | `ring_order_step` | `driver::driver_poll_step` | the ring discipline picks the next step of the Rx loop |
//! | `busy_poll_done` | `driver::driver_poll_done` | a busy loop's poll returns to the busy loop |
//! | `busy_on_napi_complete` | `driver::driver_poll_done` | a poller waiting for the NAPI tries again |
//! | `busy_prefer_handover` | `driver::driver_poll_done` | the softirq hands the NAPI to a preferring poller |
//! | `busy_after_poll` | `kernel::after_napi_poll` | `busy_poll_stop`'s poll returns to the busy loop |
//! | `in_napi_thread` | `driver::driver_poll_done` | a NAPI thread's poll that used its weight is polled again by the thread, not listed for repoll (`napi_thread`) |
//! | `thread_after_poll` | `kernel::after_napi_poll` | a NAPI thread's poll returns to the thread's loop (`napi_thread`) |
//! | `adapt_on_enqueue` | `socket::socket_enqueue` | the controller sees the socket's utilisation |
//! | `busy_on_data_ready` | `socket::socket_enqueue` | the socket learns the NAPI; a busy loop sees data |
//! | `adapt_on_overflow` | `socket::socket_enqueue` | the controller notes the interval's overflow |
//! | `rr_on_request_lost` | `socket::socket_enqueue` | the client sends the dropped request again |
//! | `busy_app_wait` | `socket::app_next` | the app waits with epoll or a busy loop, not `recv` |
//! | `rr_with_response_cost` | `socket::app_take` | the app also pays for sending the response |
//! | `rr_on_consumed` | `socket::app_packet_done` | the app sends the response |
//! | `busy_on_wakeup` | `sched::wake_thread` | a busy loop on the core checks `need_resched` |
//! | `napi_thread_on_arrival` | `hooks::busy_on_arrival` | (every arrival passes there) a busy-polling NAPI thread spinning on the vector polls it (`napi_thread`) |
//! | `napi_thread_on_wakeup` | `sched::wake_thread` | a busy-polling NAPI thread spinning on the core checks `need_resched` (`napi_thread`) |
//! | `xsk_redirect_cost` | `driver::packet_cost` | an AF_XDP app's packet costs the XDP redirect, not protocol processing (`xsk`) |
//! | `xsk_on_deliver` | `driver::deliver_to_sink` | the XDP program redirects an AF_XDP app's packet into its XSK's Rx ring, not a socket (`xsk`) |
//! | `xsk_on_poll_done` | `driver::driver_poll_done` | the poll's flush makes the XSK's new descriptors visible (`xsk`) |

use super::{Feed, Host, Layout};
use crate::kernel::SoftirqCtx;
use crate::nic::Packet;
use crate::rng::StreamId;
use crate::time::SimDuration;
use crate::trace::Tracer;

impl<T: Tracer, L: Layout, F: Feed> Host<'_, T, L, F> {
    // ----- threaded NAPI (`napi_thread`) -------------------------------------------------------

    /// Whether core `c`'s poll is a NAPI thread's: with threaded NAPI every poll of a threaded
    /// vector is, as `napi_schedule` wakes the thread instead of listing the NAPI for
    /// `NET_RX_SOFTIRQ`, and the other pollers (busy polling, the polling loops) are refused
    /// with it (`kernel::check_threaded`); without it none is.
    #[inline(always)]
    pub(super) fn in_napi_thread(&self, c: usize) -> bool {
        self.threaded && self.l.core(c).kernel.ctx == Some(SoftirqCtx::NapiThread)
    }

    /// A packet reached vector `v`'s ring: its busy-polling NAPI thread, if it spins, polls.
    #[inline(always)]
    pub(super) fn napi_thread_on_arrival(&mut self, v: usize) {
        if self.threaded_busy {
            self.napi_thread_cut(v);
        }
    }

    /// A thread was woken on core `c`, which has a current thread: a busy-polling NAPI thread
    /// spinning there checks `need_resched` soon.
    #[inline(always)]
    pub(super) fn napi_thread_on_wakeup(&mut self, c: usize) {
        if self.threaded_busy
            && let Some(crate::sched::Thread::NapiThread(v)) = self.l.core(c).threads.current
        {
            self.napi_thread_cut(v as usize);
        }
    }

    /// A poll returned on core `c`: true if a NAPI thread made it, which goes on from there.
    #[inline(always)]
    pub(super) fn thread_after_poll(&mut self, c: usize) -> bool {
        self.threaded && self.napi_thread_after_poll(c)
    }

    // ----- busy polling and epoll (`busypoll`) ------------------------------------------------

    /// A packet reached vector `v`'s ring (`accepted`) or was dropped there; `spinner` was the
    /// vector's spinning owner when it came.
    #[inline(always)]
    pub(super) fn busy_on_arrival(
        &mut self,
        v: usize,
        flow: u32,
        accepted: bool,
        spinner: Option<u16>,
    ) {
        if self.apps_extended {
            self.arrival_seen(v, flow, accepted, spinner);
        }
        self.napi_thread_on_arrival(v);
    }

    /// The poll function of vector `v` returned on core `c`: true if a busy loop called it and
    /// takes it from here (an iteration's poll, or `busy_poll_stop`'s that did not complete).
    #[inline(always)]
    pub(super) fn busy_poll_done(&mut self, c: usize, v: usize) -> bool {
        if self.l.core(c).kernel.ctx != Some(SoftirqCtx::BusyPoll) {
            return false;
        }
        let napi = &self.l.vector(v).napi;
        if napi.in_busy_poll || !napi.clean_complete {
            self.busy_driver_poll_done(c, v);
            return true;
        }
        false
    }

    /// NAPI `v` completed (SCHED cleared).
    #[inline(always)]
    pub(super) fn busy_on_napi_complete(&mut self, v: usize) {
        if self.apps_extended {
            self.napi_released(v);
        }
    }

    /// The softirq's poll of vector `v` used its whole weight: true if a preferring busy
    /// poller waits and the NAPI is handed over (`__napi_poll`), instead of going to the
    /// repoll list.
    #[inline(always)]
    pub(super) fn busy_prefer_handover(&mut self, c: usize, v: usize) -> bool {
        if !self.l.vector(v).napi.prefer {
            return false;
        }
        self.prefer_handover(c, v);
        true
    }

    /// A poll returned to its caller on core `c`: true if that is `busy_poll_stop` (it goes
    /// on there), not `net_rx_action`.
    #[inline(always)]
    pub(super) fn busy_after_poll(&mut self, c: usize) -> bool {
        if self.l.core(c).kernel.ctx != Some(SoftirqCtx::BusyPoll) {
            return false;
        }
        self.busy_stop_returned(c);
        true
    }

    /// A packet from vector `v` was queued on app `a`'s socket (`sk_data_ready`).
    #[inline(always)]
    pub(super) fn busy_on_data_ready(&mut self, a: usize, v: usize) {
        if self.apps_extended {
            self.socket_data_ready(a, v);
        }
    }

    /// App `a`'s thread on core `c` looks for its next packet: true if it waits with epoll or
    /// a busy loop (`busypoll`), not the plain `recv` loop.
    #[inline(always)]
    pub(super) fn busy_app_wait(&mut self, c: usize, a: usize) -> bool {
        if !self.apps_extended {
            return false;
        }
        self.app_wait(c, a);
        true
    }

    /// A thread was woken on core `c`, which has a current thread.
    #[inline(always)]
    pub(super) fn busy_on_wakeup(&mut self, c: usize) {
        if self.apps_extended {
            self.need_resched(c);
        }
    }

    // ----- AF_XDP apps (`xsk`) -----------------------------------------------------------------

    /// The cost of `flow`'s packet in the poll, if an AF_XDP app reads it (`platform.xdp_ns`).
    #[inline(always)]
    pub(super) fn xsk_redirect_cost(&self, flow: u32) -> Option<SimDuration> {
        if !self.xsk {
            return None;
        }
        self.xdp_cost(flow)
    }

    /// `pkt`, from vector `v`, goes to app `a`: true if the app reads an AF_XDP socket and the
    /// packet was redirected into its Rx ring (or dropped there).
    #[inline(always)]
    pub(super) fn xsk_on_deliver(&mut self, v: usize, a: usize, pkt: Packet) -> bool {
        if !self.xsk || self.apps[a].xsk.is_none() {
            return false;
        }
        self.xsk_redirect(v, a, pkt);
        true
    }

    /// Vector `v`'s poll has cleaned its Rx rings (`xdp_do_flush`).
    #[inline(always)]
    pub(super) fn xsk_on_poll_done(&mut self, v: usize) {
        if self.xsk {
            self.xsk_flush(v);
        }
    }

    // ----- request/response traffic (`busypoll`) --------------------------------------------

    /// A request of client `flow` was dropped at its socket.
    #[inline(always)]
    pub(super) fn rr_on_request_lost(&mut self, flow: u32) {
        if self.s.rr.is_some() {
            self.feed.respond(flow, self.now, true);
        }
    }

    /// The cost `d` of handling a packet on core `c`, and of sending its response.
    #[inline(always)]
    pub(super) fn rr_with_response_cost(&mut self, c: usize, d: SimDuration) -> SimDuration {
        if self.s.rr.is_some() {
            d + self.draw_or_zero(c, self.s.platform.tx, StreamId::TxCost)
        } else {
            d
        }
    }

    /// App `a` finished `pkt`: it answers the request.
    #[inline(always)]
    pub(super) fn rr_on_consumed(&mut self, a: usize, pkt: Packet) {
        if self.s.rr.is_some() {
            self.send_response(a, pkt);
        }
    }

    // ----- a ring discipline (`qos`) ----------------------------------------------------------

    /// The Rx loop of the poll on core `c` goes on: true if a ring discipline serves the rings
    /// (its next step is taken), not the stock loop.
    #[inline(always)]
    pub(super) fn ring_order_step(&mut self, c: usize) -> bool {
        if !self.disciplined {
            return false;
        }
        self.ring_discipline_step(c);
        true
    }

    // ----- receive-load controllers (`adapt`) -------------------------------------------------

    /// Core `c`'s protocol processing is about to queue a packet on app `a`'s socket.
    #[inline(always)]
    pub(super) fn adapt_on_enqueue(&mut self, c: usize, a: usize) {
        if !self.adapt.is_empty() {
            self.adapt_enqueue(c, a);
        }
    }

    /// A socket refused a packet from core `c`'s protocol processing.
    #[inline(always)]
    pub(super) fn adapt_on_overflow(&mut self, c: usize) {
        if !self.adapt.is_empty() {
            self.adapt[c].overflowed = true;
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_hook_is_in_the_table_and_called_where_it_says() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/host");
        let read = |file: &str| std::fs::read_to_string(format!("{dir}/{file}.rs")).unwrap();
        let own = read("hooks");
        let rows: Vec<&str> = own
            .lines()
            .map_while(|l| l.strip_prefix("//!"))
            .map(str::trim)
            .filter(|l| l.starts_with("| `"))
            .collect();
        assert!(rows.len() > 10);
        let mut hooks = 0;
        for row in rows {
            let cells: Vec<&str> = row.split('`').skip(1).step_by(2).collect();
            let (hook, site) = (cells[0], cells[1]);
            let (file, _) = site.split_once("::").expect("file::function");
            assert!(own.contains(&format!("fn {hook}(")), "no hook {hook}");
            assert!(
                read(file).contains(&format!("self.{hook}(")),
                "{hook} is not called in host/{file}.rs"
            );
            hooks += 1;
        }
        // every hook of this file is in the table
        let defined = own
            .lines()
            .filter(|l| l.starts_with("    pub(super) fn "))
            .count();
        assert_eq!(defined, hooks);
    }
}
