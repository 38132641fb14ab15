//! The driver's Rx loop under a ring discipline (ingress QoS; the disciplines are in
//! `crate::qos`): the vector's rings are served as [`crate::qos::Discipline::next`] decides, one
//! step at a time: a ring visit (a job costing `platform.ring_switch_ns`, the LL driver's
//! overhead), a packet's protocol processing, or the poll's return.

use super::{Feed, Host, Layout, Work};
use crate::qos::Step;
use crate::rng::StreamId;
use crate::trace::Tracer;

impl<T: Tracer, L: Layout, F: Feed> Host<'_, T, L, F> {
    /// The next step of the poll of the vector core `c` is polling.
    pub(super) fn ring_discipline_step(&mut self, c: usize) {
        let v = self.l.core_mut(c).kernel.polling as usize;
        let weight = self.s.kernel.napi_weight;
        let d = self.s.qos.discipline.as_ref().expect("a ring discipline");
        let vec = self.l.vector_mut(v);
        let rings = &vec.rings;
        match d.next(&mut vec.napi.rings, weight, |r| rings[r].unprocessed()) {
            Step::Take(r) => {
                vec.napi.ring = r;
                let pkt = vec.rings[r].take();
                self.start_packet(c, pkt);
            }
            Step::Visit(_) => {
                let cost = self.s.platform.ring_switch;
                self.softirq_cost(c, cost, StreamId::PollCost, Work::RingVisit);
            }
            Step::Done { complete } => {
                if !complete {
                    vec.napi.clean_complete = false;
                }
                self.driver_poll_done(c);
            }
        }
    }

    /// A ring visit's overhead is paid: the poll goes on.
    pub(super) fn ring_visit_done(&mut self, c: usize) {
        self.ring_discipline_step(c);
    }
}
