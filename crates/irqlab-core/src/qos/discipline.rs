//! The ring discipline: how the driver's poll function serves a vector's Rx rings, one step at
//! a time (a ring visit, a packet taken, the poll's end), as the host runs it
//! (`host::rings`). The stock equal split (`vmdq`) and the LL driver's procedure (`ll-rr`,
//! `ll-wfq`; Beifuß et al. §III-B, §IV-B) are the same loop with other budgets.

/// One step of a poll, as the ring discipline decides it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Start a visit of this ring (it costs `platform.ring_switch_ns`).
    Visit(usize),
    /// Take the next packet of this ring for protocol processing.
    Take(usize),
    /// The poll returns: complete (every ring empty: `napi_complete_done`, re-enable the
    /// IRQ) or not (the NAPI reports its whole weight and stays on the poll list).
    Done { complete: bool },
}

/// Where a poll is in the discipline: the position in the visit order, the packets taken from
/// the ring visited and from all rings, and whether a ring used its whole budget.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PollState {
    pos: usize,
    ring_work: u64,
    work: u64,
    visited: bool,
    budget_used: bool,
}

/// A ring discipline for a vector with several Rx rings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Discipline {
    /// Ring indices in the order a pass visits them.
    pub order: Vec<usize>,
    /// Budget of each ring (by ring index) in one visit.
    pub budgets: Vec<u64>,
    /// LL: repeat passes until every ring is empty or the device budget is used. Otherwise
    /// (stock) one pass, incomplete if a ring used its budget.
    pub repeat: bool,
    /// Each ring visit costs `platform.ring_switch_ns` (a job of its own).
    pub visit_cost: bool,
}

impl Discipline {
    /// The next step of a poll with device budget `weight`; `unprocessed(r)` is the number of
    /// packets waiting in ring `r` now. A `Take` counts its packet at once.
    ///
    /// The LL procedure (Beifuß et al. §III-B, §IV-B): a pass visits the rings in order and
    /// takes from each up to `min(ring budget, weight − taken)`; a visit that would start
    /// with the device budget used ends the pass. After a pass: every ring empty → complete;
    /// the device budget used → incomplete; otherwise another pass. So a poll never takes
    /// more than `weight`.
    ///
    /// ```
    /// use irqlab_core::qos::{Discipline, PollState, Step};
    /// // LL-WFQ, RT first: RT (ring 1) holds 70 packets, BE (ring 0) holds 10
    /// let d = Discipline { order: vec![1, 0], budgets: vec![4, 60], repeat: true, visit_cost: false };
    /// let mut rings = [10usize, 70];
    /// let mut st = PollState::default();
    /// let mut taken = [0u64; 2];
    /// let done = loop {
    ///     match d.next(&mut st, 64, |r| rings[r]) {
    ///         Step::Take(r) => { rings[r] -= 1; taken[r] += 1; }
    ///         Step::Visit(_) => {}
    ///         Step::Done { complete } => break complete,
    ///     }
    /// };
    /// assert_eq!((taken, done), ([4, 60], false));
    /// ```
    pub fn next(
        &self,
        st: &mut PollState,
        weight: u64,
        unprocessed: impl Fn(usize) -> usize,
    ) -> Step {
        let n = self.order.len();
        loop {
            if st.pos == n {
                if !self.repeat {
                    return Step::Done {
                        complete: !st.budget_used,
                    };
                }
                if (0..self.budgets.len()).all(|r| unprocessed(r) == 0) {
                    return Step::Done { complete: true };
                }
                if st.work >= weight {
                    return Step::Done { complete: false };
                }
                st.pos = 0;
                st.ring_work = 0;
                st.visited = false;
                continue;
            }
            let r = self.order[st.pos];
            if !st.visited {
                if st.work >= weight {
                    // no quota left: the pass ends here
                    st.pos = n;
                    continue;
                }
                st.visited = true;
                if self.visit_cost {
                    return Step::Visit(r);
                }
            }
            if st.ring_work < self.budgets[r] && st.work < weight && unprocessed(r) > 0 {
                st.ring_work += 1;
                st.work += 1;
                return Step::Take(r);
            }
            if st.ring_work >= self.budgets[r] {
                st.budget_used = true;
            }
            st.pos += 1;
            st.ring_work = 0;
            st.visited = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qos::{BE, RT};

    /// Runs one poll over rings holding `contents` (nothing arrives meanwhile); returns the
    /// rings taken from in order, the visits, and whether it completed.
    fn poll(d: &Discipline, contents: &[usize], weight: u64) -> (Vec<usize>, Vec<usize>, bool) {
        let mut rings = contents.to_vec();
        let mut st = PollState::default();
        let (mut takes, mut visits) = (Vec::new(), Vec::new());
        loop {
            match d.next(&mut st, weight, |r| rings[r]) {
                Step::Take(r) => {
                    rings[r] -= 1;
                    takes.push(r);
                }
                Step::Visit(r) => visits.push(r),
                Step::Done { complete } => return (takes, visits, complete),
            }
        }
    }

    fn ll(budgets: [u64; 2], rt_first: bool) -> Discipline {
        Discipline {
            order: if rt_first { vec![RT, BE] } else { vec![BE, RT] },
            budgets: budgets.to_vec(),
            repeat: true,
            visit_cost: true,
        }
    }

    fn counts(takes: &[usize]) -> [usize; 2] {
        let mut c = [0; 2];
        for &r in takes {
            c[r] += 1;
        }
        c
    }

    #[test]
    fn ll_rr_alternates_four_and_four_for_eight_passes_under_backlog() {
        let (takes, visits, complete) = poll(&ll([4, 4], true), &[100, 100], 64);
        assert_eq!(takes.len(), 64);
        assert!(!complete);
        // RT first, then BE, 4 each, 8 passes
        let expect: Vec<usize> = (0..8)
            .flat_map(|_| [RT; 4].into_iter().chain([BE; 4]))
            .collect();
        assert_eq!(takes, expect);
        assert_eq!(visits.len(), 16);
    }

    #[test]
    fn ll_wfq_takes_60_rt_and_4_be_in_one_pass() {
        let (takes, visits, complete) = poll(&ll([4, 60], true), &[100, 100], 64);
        assert_eq!(counts(&takes), [4, 60]);
        assert_eq!(&takes[..60], &[RT; 60][..]);
        assert_eq!(visits, vec![RT, BE]);
        assert!(!complete);
    }

    #[test]
    fn a_ring_that_runs_dry_lets_the_other_use_the_rest_of_the_budget() {
        // RT has 2: every later pass visits it empty and BE takes 4 per pass until 64
        let (takes, _, complete) = poll(&ll([4, 4], true), &[100, 2], 64);
        assert_eq!(counts(&takes), [62, 2]);
        assert!(!complete);
    }

    #[test]
    fn all_rings_emptied_completes_even_with_budget_left() {
        let (takes, _, complete) = poll(&ll([4, 4], true), &[5, 3], 64);
        assert_eq!(counts(&takes), [5, 3]);
        assert!(complete);
        // emptied exactly at the device budget: the empty check comes first (the paper)
        let (takes, _, complete) = poll(&ll([4, 60], true), &[4, 60], 64);
        assert_eq!(takes.len(), 64);
        assert!(complete);
    }

    #[test]
    fn the_device_budget_is_never_exceeded() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut rnd = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..2000 {
            let budgets = [1 + rnd(100), 1 + rnd(100)];
            let weight = 1 + rnd(128);
            let contents = [rnd(300) as usize, rnd(300) as usize];
            let d = ll(budgets, rnd(2) == 0);
            let (takes, _, complete) = poll(&d, &contents, weight);
            assert!(
                takes.len() as u64 <= weight,
                "{budgets:?} {weight} {contents:?}"
            );
            let total = (contents[0] + contents[1]) as u64;
            // it takes everything or the whole budget; complete iff nothing is left
            assert_eq!(takes.len() as u64, total.min(weight));
            assert_eq!(complete, total <= weight);
        }
    }

    #[test]
    fn an_rt_budget_above_the_device_budget_starves_be() {
        let (takes, _, complete) = poll(&ll([4, 100], true), &[50, 500], 64);
        assert_eq!(counts(&takes), [0, 64]);
        assert!(!complete);
        // in PRB order BE is served first and gets its 4
        let (takes, _, _) = poll(&ll([4, 100], false), &[50, 500], 64);
        assert_eq!(counts(&takes), [4, 60]);
    }

    #[test]
    fn vmdq_is_one_pass_of_equal_shares_and_incomplete_when_a_share_is_used() {
        let d = Discipline {
            order: vec![BE, RT],
            budgets: vec![32, 32],
            repeat: false,
            visit_cost: false,
        };
        let (takes, visits, complete) = poll(&d, &[100, 5], 64);
        assert_eq!(counts(&takes), [32, 5]);
        assert!(visits.is_empty());
        assert!(!complete);
        let (takes, _, complete) = poll(&d, &[10, 5], 64);
        assert_eq!(counts(&takes), [10, 5]);
        assert!(complete);
        // used its share exactly: incomplete, as the stock driver reports
        let (_, _, complete) = poll(&d, &[32, 0], 64);
        assert!(!complete);
    }
}
