//! The host side of the receive-load controllers (`crate::adapt`): each core's controller sees
//! the utilisation of a socket before each packet is queued on it and, every sampling
//! interval, the interval's maximum, overflow and ksoftirqd activity; its knobs are applied
//! to the core's `netdev_budget` and to the ITR of the vectors whose interrupts the core
//! handles (from the next interrupt, as an ITR write).

use super::{Feed, Host, Layout, Timer};
use crate::adapt::{AnyController, Controller, Interval, Knobs};
use crate::cpu::Category;
use crate::moderation::Write;
use crate::trace::Tracer;

/// One core's controller and what it has seen in the current interval.
#[derive(Debug)]
pub(crate) struct CoreAdapt {
    ctl: AnyController,
    knobs: Knobs,
    /// Highest utilisation at an enqueue in this interval, and in the one before.
    max_util: f64,
    prev_max_util: f64,
    /// A socket refused a packet in this interval.
    pub overflowed: bool,
    /// The core's ksoftirqd CPU time (ps) when the interval began.
    ksoftirqd_ps: u64,
}

impl<T: Tracer, L: Layout, F: Feed> Host<'_, T, L, F> {
    /// Makes each core's controller and arms its first interval.
    pub(super) fn adapt_start(&mut self) {
        let cfg = &self.s.adapt;
        if cfg.controller().is_none() {
            return;
        }
        let n = self.s.host.cores;
        for c in 0..n {
            let ctl = cfg.controller().expect("a scheme");
            // the ITR the NIC starts with: the vectors' own (static or off)
            let itr = match self.s.moderation {
                crate::scenario::Moderation::Static(itr) => itr,
                _ => crate::time::SimDuration::ZERO,
            };
            self.adapt.push(CoreAdapt {
                ctl,
                knobs: Knobs {
                    budget: self.s.kernel.netdev_budget as u64,
                    itr,
                },
                max_util: 0.0,
                prev_max_util: 0.0,
                overflowed: false,
                ksoftirqd_ps: 0,
            });
            self.push_timer(self.now + cfg.interval, Timer::AdaptInterval(c as u16));
        }
    }

    /// A packet is about to be queued on app `a`'s socket by core `c`'s protocol processing.
    pub(super) fn adapt_enqueue(&mut self, c: usize, a: usize) {
        let util = self.apps[a].socket.utilisation();
        let st = &mut self.adapt[c];
        if util > st.max_util {
            st.max_util = util;
        }
        let before = st.knobs;
        st.ctl.on_enqueue(util, &mut st.knobs);
        if st.knobs != before {
            self.apply_knobs(c, before);
        }
    }

    /// Core `c`'s sampling interval ended.
    pub(super) fn on_adapt_interval(&mut self, c: usize) {
        let ksd = {
            let cpu = &mut self.l.core_mut(c).cpu;
            cpu.advance(self.now);
            cpu.account()[Category::Ksoftirqd as usize]
        };
        let st = &mut self.adapt[c];
        let i = Interval {
            max_util: st.max_util,
            prev_max_util: st.prev_max_util,
            overflowed: st.overflowed,
            ksoftirqd_ran: ksd > st.ksoftirqd_ps,
        };
        st.prev_max_util = st.max_util;
        st.max_util = 0.0;
        st.overflowed = false;
        st.ksoftirqd_ps = ksd;
        let before = st.knobs;
        st.ctl.on_interval(&i, &mut st.knobs);
        if st.knobs != before {
            self.apply_knobs(c, before);
        }
        let next = self.now + self.s.adapt.interval;
        self.push_timer(next, Timer::AdaptInterval(c as u16));
    }

    /// The controller of core `c` changed its knobs from `before`.
    fn apply_knobs(&mut self, c: usize, before: Knobs) {
        let k = self.adapt[c].knobs;
        self.tracer.knobs(c, self.now, k.budget, k.itr.ps());
        self.l.core_mut(c).kernel.netdev_budget = k.budget as i64;
        if k.itr != before.itr {
            for i in 0..self.l.core(c).vectors.len() {
                let v = self.l.core(c).vectors[i] as usize;
                self.apply_moderation(v, Write::Itr(k.itr));
                if self.measuring() {
                    self.metrics.vectors[v].moderation_writes += 1;
                }
            }
        }
    }
}
