//! `python`: a policy written outside the core (`driver.moderation = "python"`), behind the
//! same hooks as the built-in ones.
//!
//! The core knows only the [`External`] trait; the Python bindings implement it with the
//! user's object. A scenario carries a [`Factory`] that makes one policy per vector when the
//! host is built (each vector keeps its own state, as each of a driver's `q_vector`s does).
//! Whatever the policy returns is applied with the same hardware semantics as a built-in
//! policy's write (module docs of [`super`]).
//!
//! A policy that fails (a Python exception) cannot stop the run from here: the bindings keep
//! the error, return `None` from then on, and stop the run at its next slice.

use std::fmt;
use std::sync::Arc;

use super::{Itr, Policy, Sample, Variant, Write};
use crate::error::Error;
use crate::schema::Params;
use crate::time::SimDuration;

/// The policy's Python class, `module:Class` (read by the Python layer).
pub const POLICY: &str = "driver.policy";

/// A moderation policy implemented outside the core.
pub trait External: Send {
    /// The setting programmed when the interface comes up (`None`: keep the NIC's
    /// configuration from the scenario). Called once, when the vector is built.
    fn initial(&mut self) -> Option<Write>;
    /// A NAPI session completed and the vector is about to be re-enabled.
    fn on_complete(&mut self, s: &Sample) -> Option<Write>;
}

/// Makes one [`External`] policy per vector.
#[derive(Clone)]
pub struct Factory(Arc<dyn Fn() -> Box<dyn External> + Send + Sync>);

impl Factory {
    pub fn new(make: impl Fn() -> Box<dyn External> + Send + Sync + 'static) -> Factory {
        Factory(Arc::new(make))
    }

    /// A new policy for one vector.
    pub fn make(&self) -> ExternalPolicy {
        ExternalPolicy::new((self.0)())
    }
}

impl fmt::Debug for Factory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Factory(..)")
    }
}

impl PartialEq for Factory {
    /// The same factory (two scenarios that share it behave alike).
    fn eq(&self, other: &Factory) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// What runs when a scenario names `python` but carries no factory (the core on its own, e.g.
/// the `run` example): a policy that keeps the NIC's configuration and never writes. The Python
/// layer refuses such a scenario before it runs.
struct Absent;

impl External for Absent {
    fn initial(&mut self) -> Option<Write> {
        None
    }
    fn on_complete(&mut self, _: &Sample) -> Option<Write> {
        None
    }
}

/// One vector's external policy, with what the core needs to know about it.
pub struct ExternalPolicy {
    inner: Box<dyn External>,
    initial: Option<Write>,
    /// The last ITR written, for [`Policy::interval`].
    itr: SimDuration,
}

impl ExternalPolicy {
    /// The policy of a scenario that names `python` without a factory: see [`Absent`].
    pub fn absent() -> ExternalPolicy {
        ExternalPolicy::new(Box::new(Absent))
    }

    pub fn new(mut inner: Box<dyn External>) -> ExternalPolicy {
        let initial = inner.initial();
        ExternalPolicy {
            inner,
            initial,
            itr: itr_of(initial).unwrap_or(SimDuration::ZERO),
        }
    }
}

impl fmt::Debug for ExternalPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExternalPolicy")
            .field("initial", &self.initial)
            .field("itr", &self.itr)
            .finish_non_exhaustive()
    }
}

fn itr_of(w: Option<Write>) -> Option<SimDuration> {
    match w {
        Some(Write::Itr(itr)) => Some(itr),
        _ => None,
    }
}

impl Policy for ExternalPolicy {
    fn initial(&self) -> Option<Write> {
        self.initial
    }

    fn on_complete(&mut self, s: &Sample) -> Option<Write> {
        let w = self.inner.on_complete(s);
        if let Some(itr) = itr_of(w) {
            self.itr = itr;
        }
        w
    }

    fn interval(&self) -> SimDuration {
        self.itr
    }
}

impl Variant for ExternalPolicy {
    const KIND: &'static str = "python";
    const KEYS: &'static [&'static str] = &[POLICY];
    /// Not assumed to adapt: what it does is the user's.
    const ADAPTIVE: bool = false;
    const ITR: Itr = Itr::Programs;
    /// The factory the bindings attach (`Scenario::with_policy`); `None` until then.
    type Config = Option<Factory>;

    fn from_params(_: &Params) -> Result<Option<Factory>, Error> {
        Ok(None)
    }

    fn new_vector(f: &Option<Factory>, _has_tx: bool) -> ExternalPolicy {
        match f {
            Some(f) => f.make(),
            None => ExternalPolicy::absent(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;

    /// Halves the interval at each completion, from 64 µs, and counts its calls.
    struct Halving {
        itr_us: f64,
        calls: Arc<std::sync::atomic::AtomicU64>,
    }

    impl External for Halving {
        fn initial(&mut self) -> Option<Write> {
            Some(Write::Itr(SimDuration::from_us(self.itr_us)))
        }
        fn on_complete(&mut self, _: &Sample) -> Option<Write> {
            self.calls
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.itr_us /= 2.0;
            Some(Write::Itr(SimDuration::from_us(self.itr_us)))
        }
    }

    fn factory(calls: &Arc<std::sync::atomic::AtomicU64>) -> Factory {
        let calls = Arc::clone(calls);
        Factory::new(move || {
            Box::new(Halving {
                itr_us: 64.0,
                calls: Arc::clone(&calls),
            })
        })
    }

    #[test]
    fn each_vector_gets_its_own_policy_and_the_core_tracks_its_interval() {
        let calls = Arc::default();
        let f = factory(&calls);
        let (mut a, b) = (f.make(), f.make());
        assert_eq!(a.initial(), Some(Write::Itr(SimDuration::from_us(64.0))));
        assert_eq!(a.interval(), SimDuration::from_us(64.0));
        let s = Sample {
            now: SimTime(1),
            ..Sample::default()
        };
        assert_eq!(
            a.on_complete(&s),
            Some(Write::Itr(SimDuration::from_us(32.0)))
        );
        assert_eq!(a.interval(), SimDuration::from_us(32.0));
        assert_eq!(
            b.interval(),
            SimDuration::from_us(64.0),
            "b's state is its own"
        );
        assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 1);
    }

    #[test]
    fn a_factory_equals_itself_only() {
        let calls = Arc::default();
        let f = factory(&calls);
        assert_eq!(f, f.clone());
        assert_ne!(f, factory(&calls));
    }

    #[test]
    fn a_factory_debugs_as_an_opaque_factory() {
        let calls = Arc::default();
        assert_eq!(format!("{:?}", factory(&calls)), "Factory(..)");
    }

    #[test]
    fn a_policy_debugs_with_its_initial_setting_and_interval() {
        let calls = Arc::default();
        let p = factory(&calls).make();
        let d = format!("{p:?}");
        assert!(d.starts_with("ExternalPolicy {"), "{d}");
        assert!(d.contains("initial: Some(Itr("), "{d}");
        assert!(d.contains("itr: "), "{d}");
        assert!(d.ends_with(".. }"), "{d}");
        assert_eq!(
            format!("{:?}", ExternalPolicy::absent()),
            format!(
                "ExternalPolicy {{ initial: None, itr: {:?}, .. }}",
                SimDuration::ZERO
            )
        );
    }
}
