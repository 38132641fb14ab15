//! The timer tick (`kernel.timer_tick`): a timer interrupt every jiffy on each core. Its own
//! cost is not modelled; what matters is its exit: like any hard IRQ's, it runs pending
//! softirqs inline (`irq_exit` → `invoke_softirq`) unless softirq processing is already in
//! progress on the core. So a `NET_RX` softirq left pending for ksoftirqd gets a softirq-level
//! invocation at least once a jiffy, whatever the thread level is doing (Linux 2.6.18 with
//! ksoftirqd below the application: Chang et al. 2007).

use super::{Feed, Host, Layout, Timer};
use crate::trace::Tracer;

impl<T: Tracer, L: Layout, F: Feed> Host<'_, T, L, F> {
    /// Arms each core's first tick.
    pub(super) fn tick_start(&mut self) {
        if !self.s.kernel.timer_tick {
            return;
        }
        for c in 0..self.s.host.cores {
            let t = self.now + self.s.kernel.jiffy;
            self.push_timer(t, Timer::Tick(c as u16));
        }
    }

    /// Core `c`'s tick: the interrupt's exit, and the next tick.
    pub(super) fn on_tick(&mut self, c: usize) {
        self.irq_exit(c);
        let t = self.now + self.s.kernel.jiffy;
        self.push_timer(t, Timer::Tick(c as u16));
    }
}
