//! The apps' side of busy polling (the rules and settings are in `crate::busypoll`): the
//! `recv` and `epoll_wait` loops, the busy loop that polls a NAPI from the app's thread,
//! `busy_poll_stop`, preferred busy polling's hand-over, IRQ suspension, and the responses of
//! request/response traffic.
//!
//! A busy loop's iterations that find nothing are one CPU job (`Work::BusySpin`) lasting as
//! many iterations as fit before the loop's deadline (or the end of the thread's slice when
//! another thread waits); an event that would end the loop or give the poll work (a packet on
//! the owned NAPI's ring, data in the socket, the NAPI released, a thread woken on the core)
//! cuts the job at the end of the iteration under way. So does the deadline itself: the loop
//! reads the clock, and a spin that interrupts or softirqs preempted reaches its deadline
//! before its planned iterations are done. The result is the same as simulating each
//! iteration. Tx descriptors completed while the loop spins are cleaned by its next poll.

use super::{Feed, Host, Layout, Work};
use crate::busypoll::{Io, busy_deadline};
use crate::cpu::{Category, Level};
use crate::kernel::SoftirqCtx;
use crate::nic::Packet;
use crate::nic::tx::TxEntry;
use crate::sched::Thread;
use crate::time::{SimDuration, SimTime};
use crate::trace::Tracer;

/// The traffic class a response takes in a Tx ring (so that it is not counted as a received
/// packet leaving the host).
pub(crate) const RESPONSE_CLASS: u16 = u16::MAX;

/// Why a busy loop left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Leave {
    /// Data, or the time is up: back to `recv` or `epoll_wait`.
    End,
    /// Another thread needs the core: yield, then start over (`cond_resched`, `goto restart`).
    Resched,
}

/// One busy loop (`__napi_busy_loop`) of an app's thread.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Session {
    /// The NAPI polled.
    pub v: u16,
    /// When the loop has timed out (`None`: a nonblocking loop, one iteration).
    pub deadline: Option<SimTime>,
    pub budget: u64,
    pub prefer: bool,
    /// It owns the NAPI (`SCHED | IN_BUSY_POLL`).
    pub owned: bool,
    /// Length of the spin job under way (0: none).
    pub spin_ps: u64,
    /// `busy_poll_stop`: its final poll is under way, with the timer armed instead of a
    /// softirq if `skip_schedule`.
    pub skip_schedule: bool,
    pub leave: Leave,
}

impl<T: Tracer, L: Layout, F: Feed> Host<'_, T, L, F> {
    /// The app whose thread is core `c`'s current one (its own, or its XSK polling thread).
    pub(super) fn current_app(&self, c: usize) -> usize {
        match self.l.core(c).threads.current {
            Some(Thread::App(a) | Thread::XskPoller(a)) => a as usize,
            other => unreachable!("busy polling without a current app: {other:?}"),
        }
    }

    /// The app's loop: a busy loop to resume, or `recv` / `epoll_wait` / its XSK's ring (an
    /// XSK app's busy loops are nonblocking: none is left to resume).
    pub(super) fn app_wait(&mut self, c: usize, a: usize) {
        let io = self.s.apps[a].io;
        if io != Io::Xsk && self.apps[a].session.is_some() {
            // back from a yield inside a busy loop: `if (loop_end()) return; goto restart`
            if self.loop_end(a) {
                self.apps[a].session = None;
                self.after_busy_loop(c, a);
            } else {
                self.busy_iteration(c, a);
            }
            return;
        }
        match io {
            Io::Recv => self.recv(c, a),
            Io::Epoll => {
                let app = &mut self.apps[a];
                if app.epoll_left > 0 {
                    app.epoll_left -= 1;
                    if let Some(pkt) = app.socket.dequeue() {
                        self.app_take(c, a, pkt);
                        return;
                    }
                    self.apps[a].epoll_left = 0;
                }
                self.epoll_wait(c, a);
            }
            Io::Xsk => self.xsk_next(c, a),
        }
    }

    /// `recv`: a packet, else a busy loop (`sk_can_busy_loop` and a known NAPI), else sleep.
    fn recv(&mut self, c: usize, a: usize) {
        if let Some(pkt) = self.apps[a].socket.dequeue() {
            self.app_take(c, a, pkt);
            return;
        }
        let b = &self.s.busy;
        match self.apps[a].napi_id {
            Some(v) if b.busy_read_us > 0.0 => {
                let deadline = Some(busy_deadline(self.now, b.busy_read_us));
                self.busy_loop_start(c, a, v, deadline, b.sock_budget, b.sock_prefer);
            }
            _ => self.block_thread(c),
        }
    }

    /// `ep_poll`.
    fn epoll_wait(&mut self, c: usize, a: usize) {
        if !self.apps[a].socket.is_empty() {
            self.epoll_send_events(c, a);
            return;
        }
        let b = &self.s.busy;
        if b.epoll_nonblocking {
            // `timed_out`: returns 0 at once, never busy-polls
            if self.measuring() {
                self.metrics.busy.empty_epoll_waits += 1;
            }
            let d = b.epoll_batch;
            self.start(c, Level::Thread, d, Category::App, Work::EpollEmpty);
            return;
        }
        match self.apps[a].napi_id {
            Some(v) if b.epoll_on() => {
                let deadline = (b.epoll_us > 0.0).then(|| busy_deadline(self.now, b.epoll_us));
                self.busy_loop_start(c, a, v, deadline, b.epoll_budget, b.epoll_prefer);
            }
            _ => self.block_thread(c),
        }
    }

    /// `ep_send_events` returned events: with prefer and a suspension timeout, IRQs are
    /// suspended (`ep_suspend_napi_irqs`); the app pays the return and handles them.
    fn epoll_send_events(&mut self, c: usize, a: usize) {
        let b = &self.s.busy;
        let n = (self.apps[a].socket.len() as u64).min(b.maxevents);
        self.apps[a].epoll_left = n;
        if b.epoll_prefer
            && let Some(v) = self.apps[a].napi_id
            && let suspend = self.s.kernel.napi[v as usize].irq_suspend_timeout
            && !suspend.is_zero()
        {
            // `napi_suspend_irqs`: the timer restarts with the long timeout, whoever owns it
            let t = self.now + suspend;
            self.l.vector_mut(v as usize).napi.watchdog_at = Some(t);
            self.push_timer(t, super::Timer::NapiWatchdog(v));
            if self.measuring() {
                self.metrics.busy.suspends += 1;
            }
        }
        if self.measuring() {
            self.metrics.busy.epoll_returns += 1;
            self.metrics.busy.epoll_events += n;
        }
        let d = b.epoll_batch;
        self.start(c, Level::Thread, d, Category::App, Work::EpollReturn);
    }

    /// The app has paid for `epoll_wait`'s return: it handles the events.
    pub(super) fn epoll_events(&mut self, c: usize) {
        let a = self.current_app(c);
        self.app_wait(c, a);
    }

    /// A nonblocking `epoll_wait` returned nothing: the app calls it again.
    pub(super) fn epoll_again(&mut self, c: usize) {
        let a = self.current_app(c);
        self.epoll_wait(c, a);
    }

    /// The busy loop has ended (data or time up): `recv` reads or sleeps; `ep_busy_loop`
    /// returns events, or resumes IRQs, forgets the NAPI and sleeps.
    fn after_busy_loop(&mut self, c: usize, a: usize) {
        match self.s.apps[a].io {
            Io::Recv => match self.apps[a].socket.dequeue() {
                Some(pkt) => self.app_take(c, a, pkt),
                None => self.block_thread(c),
            },
            Io::Epoll => {
                if !self.apps[a].socket.is_empty() {
                    self.epoll_send_events(c, a);
                    return;
                }
                let b = &self.s.busy;
                if b.epoll_prefer
                    && let Some(v) = self.apps[a].napi_id
                    && !self.s.kernel.napi[v as usize].irq_suspend_timeout.is_zero()
                {
                    // `napi_resume_irqs`: an immediate softirq poll
                    if self.measuring() {
                        self.metrics.busy.resumes += 1;
                    }
                    let v = v as usize;
                    self.napi_schedule(v);
                    let vc = self.l.vector(v).core;
                    self.irq_exit(vc);
                }
                self.apps[a].napi_id = None;
                self.block_thread(c);
            }
            Io::Xsk => self.xsk_after_recvfrom(c, a),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn busy_loop_start(
        &mut self,
        c: usize,
        a: usize,
        v: u16,
        deadline: Option<SimTime>,
        budget: u64,
        prefer: bool,
    ) {
        if self.measuring() {
            self.metrics.busy.sessions += 1;
        }
        self.apps[a].session = Some(Session {
            v,
            deadline,
            budget,
            prefer,
            owned: false,
            spin_ps: 0,
            skip_schedule: false,
            leave: Leave::End,
        });
        if let Some(t) = deadline {
            self.push_timer(t, super::Timer::BusyDeadline(a as u16));
        }
        self.busy_iteration(c, a);
    }

    /// App `a`'s busy loop reaches its deadline. The loop reads the clock between two
    /// iterations (`busy_loop_timeout`): a spin that ran all along ends at that moment anyway,
    /// but one that was preempted still has iterations the time spent elsewhere used up. It
    /// ends with the iteration under way.
    pub(super) fn on_busy_deadline(&mut self, a: usize) {
        if self.apps[a]
            .session
            .is_some_and(|s| s.deadline == Some(self.now))
        {
            self.busy_cut(a);
        }
    }

    fn session(&mut self, a: usize) -> &mut Session {
        self.apps[a].session.as_mut().expect("in a busy loop")
    }

    /// The loop's head: take the NAPI if no one owns it (else ask for it, with prefer), then
    /// poll it with the budget if it has work.
    fn busy_iteration(&mut self, c: usize, a: usize) {
        let s = *self.session(a);
        let v = s.v as usize;
        if !s.owned {
            let napi = &mut self.l.vector_mut(v).napi;
            if napi.sched {
                if s.prefer {
                    napi.prefer = true;
                }
                self.busy_check(c, a);
                return;
            }
            napi.sched = true;
            napi.in_busy_poll = true;
            self.session(a).owned = true;
        }
        if self.poll_finds_work(v) {
            self.busy_poll_call(c, v, s.budget);
        } else {
            self.busy_check(c, a);
        }
    }

    /// Whether a poll of vector `v` now would find work: an Rx descriptor the driver can see,
    /// or a completed Tx descriptor to clean (a busy poller that finds none spins instead).
    pub(super) fn poll_finds_work(&self, v: usize) -> bool {
        let vec = self.l.vector(v);
        vec.rings.iter().any(|r| r.unprocessed() > 0) || vec.tx.done_by(self.now) > 0
    }

    /// `napi_poll(napi, budget)` from the app's thread, bottom halves disabled.
    fn busy_poll_call(&mut self, c: usize, v: usize, budget: u64) {
        let k = &mut self.l.core_mut(c).kernel;
        debug_assert!(k.ctx.is_none(), "bottom halves already disabled");
        k.ctx = Some(SoftirqCtx::BusyPoll);
        if self.measuring() {
            self.metrics.busy.polls += 1;
        }
        // the budget split over the rings; a ring discipline goes on where it was
        let rings = self.l.vector(v).rings.len() as u64;
        self.poll_call(c, v, (budget / rings).max(1));
    }

    /// The driver's poll function returned in a busy loop. An iteration's poll: its
    /// `napi_complete_done` does nothing (the poller owns the NAPI, the IRQ stays as it is and
    /// no timer is armed). `busy_poll_stop`'s poll that used its whole budget: the softirq
    /// takes over, or (prefer with deferral) the armed timer.
    pub(super) fn busy_driver_poll_done(&mut self, c: usize, v: usize) {
        let napi = &self.l.vector(v).napi;
        let work = napi.work;
        let budget = napi.ring_budget;
        self.l.vector_mut(v).napi_ret = if napi.clean_complete {
            work.min(budget.saturating_sub(1))
        } else {
            budget
        };
        self.tracer
            .poll(c, v, self.now, work, self.l.vector(v).napi_ret);
        self.metrics.on_poll_done(self.now, v, work);
        if self.l.vector(v).napi.in_busy_poll {
            self.count_busy_poll(work);
            self.local_bh_enable(c, Category::BusyPoll, Work::BusyCheck);
            return;
        }
        // `__busy_poll_stop`
        let a = self.current_app(c);
        if self.session(a).skip_schedule {
            self.l.vector_mut(v).napi.sched = false;
            self.napi_released(v);
        } else {
            // `__napi_schedule`: on this core's poll list (`this_cpu_ptr(&softnet_data)`),
            // whose softirq the `local_bh_enable` below runs, whichever core the vector's IRQ
            // is on
            let k = &mut self.l.core_mut(c).kernel;
            k.poll_list.push_back(v as u16);
            if !k.in_net_rx_action {
                k.softirq_pending = true;
            }
        }
        self.busy_stop_returned(c);
    }

    fn count_busy_poll(&mut self, work: u64) {
        if self.measuring() {
            let b = &mut self.metrics.busy;
            b.packets += work;
            b.most_per_poll = b.most_per_poll.max(work);
        }
    }

    /// `BusyCheck` for the core's current app.
    pub(super) fn busy_check_current(&mut self, c: usize) {
        let a = self.current_app(c);
        self.busy_check(c, a);
    }

    /// The loop's tail: `loop_end`, then `need_resched`, else spin to the next iteration.
    fn busy_check(&mut self, c: usize, a: usize) {
        if self.loop_end(a) {
            self.busy_leave(c, a, Leave::End);
            return;
        }
        let thread_ps = self.thread_ps(c);
        let slice = self.s.kernel.sched_slice.ps();
        let rq = &self.l.core(c).threads;
        if rq.should_yield(thread_ps, slice) {
            self.busy_leave(c, a, Leave::Resched);
            return;
        }
        let waiting = !rq.queue.is_empty();
        let slice_start = rq.slice_start_ps;
        let iter = self.s.busy.iter.ps();
        let s = *self.session(a);
        let until = s
            .deadline
            .map_or(0, |d| d.ps().saturating_sub(self.now.ps()));
        let mut k = until.div_ceil(iter).max(1);
        if waiting {
            let left = slice.saturating_sub(thread_ps - slice_start);
            k = k.min(left.div_ceil(iter).max(1));
        }
        let d = k * iter;
        self.session(a).spin_ps = d;
        let vec = self.l.vector_mut(s.v as usize);
        if s.owned {
            vec.spinner = Some(a as u16);
        } else {
            vec.waiting.push(a as u16);
        }
        self.start(
            c,
            Level::Thread,
            SimDuration(d),
            Category::BusyPoll,
            Work::BusySpin,
        );
    }

    /// The spin job ended: the next iteration.
    pub(super) fn busy_spin_done(&mut self, c: usize) {
        let a = self.current_app(c);
        let v = self.session(a).v as usize;
        self.session(a).spin_ps = 0;
        let vec = self.l.vector_mut(v);
        if vec.spinner == Some(a as u16) {
            vec.spinner = None;
        }
        vec.waiting.retain(|&w| w as usize != a);
        self.busy_iteration(c, a);
    }

    /// `loop_end`: the socket (the epoll set) has data, or the time is up.
    fn loop_end(&self, a: usize) -> bool {
        let app = &self.apps[a];
        let s = app.session.as_ref().expect("in a busy loop");
        !app.socket.is_empty() || s.deadline.is_none_or(|d| self.now >= d)
    }

    /// Leaving the loop: `busy_poll_stop` if it owns the NAPI, then on.
    fn busy_leave(&mut self, c: usize, a: usize, leave: Leave) {
        self.session(a).leave = leave;
        if !self.session(a).owned {
            self.busy_stopped(c);
            return;
        }
        let s = *self.session(a);
        let v = s.v as usize;
        let k = &self.s.kernel.napi[v];
        let napi = &mut self.l.vector_mut(v).napi;
        napi.missed = false;
        napi.in_busy_poll = false;
        let mut skip = false;
        if s.prefer {
            napi.defer_count = k.defer_hard_irqs;
            if k.defers() {
                let t = self.now + k.gro_flush_timeout;
                napi.watchdog_at = Some(t);
                self.push_timer(t, super::Timer::NapiWatchdog(v as u16));
                skip = true;
            }
        }
        let sess = self.session(a);
        sess.owned = false;
        sess.skip_schedule = skip;
        // one more poll, which may complete the NAPI and re-enable the IRQ
        self.busy_poll_call(c, v, s.budget);
    }

    /// `busy_poll_stop`'s poll has returned (through `after_napi_poll`).
    pub(super) fn busy_stop_returned(&mut self, c: usize) {
        let v = self.l.core(c).kernel.polling as usize;
        self.count_busy_poll(self.l.vector(v).napi.work);
        if !self.l.vector(v).napi.sched {
            self.napi_released(v);
        }
        self.local_bh_enable(c, Category::BusyPoll, Work::BusyStopped);
    }

    /// The loop is over: back to the app's call, or yield first.
    pub(super) fn busy_stopped(&mut self, c: usize) {
        let a = self.current_app(c);
        match self.session(a).leave {
            Leave::End => {
                self.apps[a].session = None;
                self.after_busy_loop(c, a);
            }
            Leave::Resched => self.yield_thread(c),
        }
    }

    /// Cuts app `a`'s spin job at the end of the iteration under way. (An indirect interrupt
    /// cost the spin job was given is paid after its iterations: it stays after the cut.)
    fn busy_cut(&mut self, a: usize) {
        let Some(s) = self.apps[a].session else {
            return;
        };
        if s.spin_ps == 0 {
            return;
        }
        let c = self.apps[a].core;
        self.cut_spin(c, s.spin_ps);
    }

    /// Cuts the spin job on core `c`'s thread level, `spin_ps` long (iterations of
    /// `platform.busy_iter_ns`), at the end of the iteration under way; returns its length
    /// now.
    pub(super) fn cut_spin(&mut self, c: usize, spin_ps: u64) -> u64 {
        let iter = self.s.busy.iter.ps();
        let now = self.now;
        let cpu = &mut self.l.core_mut(c).cpu;
        cpu.advance(now);
        let owed = cpu.indirect_owed(Level::Thread);
        let Some(left) = cpu.remaining(Level::Thread).checked_sub(owed) else {
            return spin_ps; // the iterations are over
        };
        let done = spin_ps - left;
        let to_boundary = iter - done % iter;
        if to_boundary < left {
            cpu.shorten(Level::Thread, to_boundary + owed);
            let t = cpu.next_completion_ps();
            self.cpu_changed(c, t);
            return done + to_boundary;
        }
        spin_ps
    }

    /// Ring contention (`platform.ring_contention_ns`): the protocol processing of a packet
    /// of vector `v` starts on core `c`. If it is a busy poller's on another core than the
    /// vector's, it is marked as under way, and it pays one contention if the vector's ISR is
    /// under way now. Returns its extra time.
    pub(super) fn contention_on_start(&mut self, c: usize, v: usize) -> SimDuration {
        if !self.contention
            || self.l.core(c).kernel.ctx != Some(SoftirqCtx::BusyPoll)
            || self.l.vector(v).core == c
        {
            return SimDuration::ZERO;
        }
        let vc = &mut self.vector_costs[v];
        vc.poller_packet = Some(c as u16);
        if vc.in_isr {
            self.s.platform.ring_contention
        } else {
            SimDuration::ZERO
        }
    }

    /// Ring contention: vector `v`'s ISR starts. A busy poller's protocol processing of its
    /// packet under way on another core (the job on the poller's thread level is a packet of
    /// this vector's, in its busy poll) pays one contention; the ISR is under way until
    /// [`Host::contention_isr_done`].
    #[cold]
    #[inline(never)]
    pub(super) fn contention_on_isr(&mut self, v: usize) {
        let vc = &mut self.vector_costs[v];
        vc.in_isr = true;
        if let Some(pc) = vc.poller_packet {
            let pc = pc as usize;
            let core = self.l.core(pc);
            let under_way = core.kernel.ctx == Some(SoftirqCtx::BusyPoll)
                && core.kernel.polling as usize == v
                && core.cpu.tag(Level::Thread) == Some(Work::Packet);
            if !under_way {
                return;
            }
            let now = self.now;
            let cpu = &mut self.l.core_mut(pc).cpu;
            cpu.advance(now);
            cpu.extend(Level::Thread, self.s.platform.ring_contention.ps());
            let t = cpu.next_completion_ps();
            self.cpu_changed(pc, t);
        }
    }

    /// Ring contention: vector `v`'s ISR has ended.
    #[inline(always)]
    pub(super) fn contention_isr_done(&mut self, v: usize) {
        if self.contention {
            self.vector_costs[v].in_isr = false;
        }
    }

    /// NAPI `v` is free (SCHED cleared): a poller waiting for it tries again.
    pub(super) fn napi_released(&mut self, v: usize) {
        for i in 0..self.l.vector(v).waiting.len() {
            let a = self.l.vector(v).waiting[i];
            self.busy_cut(a as usize);
        }
    }

    /// A thread was woken on core `c`: a busy loop there checks `need_resched` soon (an XSK
    /// app spinning on its ring too).
    pub(super) fn need_resched(&mut self, c: usize) {
        if let Some(Thread::App(a)) = self.l.core(c).threads.current {
            self.busy_cut(a as usize);
            if self.xsk {
                self.xsk_cut(a as usize);
            }
        }
    }

    /// A packet reached vector `v`'s ring (or was dropped there): the owning poller polls it;
    /// a lost request is sent again.
    pub(super) fn arrival_seen(
        &mut self,
        v: usize,
        flow: u32,
        accepted: bool,
        spinner: Option<u16>,
    ) {
        if !accepted && self.s.rr.is_some() {
            self.feed.respond(flow, self.now, true);
        }
        if let Some(a) = spinner
            && self.apps[a as usize]
                .session
                .is_some_and(|s| s.owned && s.v as usize == v)
        {
            self.busy_cut(a as usize);
        }
    }

    /// A packet from vector `v` was queued on app `a`'s socket (`sk_data_ready`): the socket
    /// learns the NAPI (`sk_mark_napi_id`; epoll: `ep_poll_callback`), a busy loop sees data.
    pub(super) fn socket_data_ready(&mut self, a: usize, v: usize) {
        self.apps[a].napi_id = Some(v as u16);
        self.busy_cut(a);
    }

    /// Preferred busy polling: the softirq's poll used the whole weight while a poller waits.
    /// `napi_complete_done` arms the timer and leaves the IRQ masked (deferral), or, without
    /// deferral, the NAPI is scheduled again at once (prefer has no effect).
    pub(super) fn prefer_handover(&mut self, c: usize, v: usize) {
        let napi = &mut self.l.vector_mut(v).napi;
        napi.sched = false;
        napi.prefer = false;
        if self.napi_complete_done(v) {
            self.napi_schedule(v);
            let _ = c;
        } else {
            if self.measuring() {
                self.metrics.busy.handovers += 1;
            }
            self.napi_released(v);
        }
    }

    /// App `a` answers `req`: the response goes out on the Tx ring of the request's vector; a
    /// closed loop's client sends its next request once the response is back.
    pub(super) fn send_response(&mut self, a: usize, req: Packet) {
        let _ = a;
        let rr = self.s.rr.as_ref().expect("rr traffic");
        let v = self.s.topology.flow_queue[req.flow as usize] as usize;
        let now = self.now;
        if self.l.vector(v).tx.is_full() {
            if self.measuring() {
                self.metrics.rr.responses_dropped += 1;
            }
            self.feed.respond(req.flow, now, true);
            return;
        }
        let size = rr.response_bytes;
        let depart = self.wire.send(now, size);
        self.l.vector_mut(v).tx.push(TxEntry {
            depart,
            size_bytes: size,
            class: RESPONSE_CLASS,
        });
        self.tx_queued(v, depart);
        let remote = self.feed.respond(req.flow, depart, false);
        if self.measuring() {
            self.metrics.rr.transactions += 1;
            self.metrics
                .rr
                .rtt
                .record((depart + remote - req.arrival).ps());
        }
    }
}
