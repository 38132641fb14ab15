//! Moderation policies written in Python (`driver.moderation = "python"`): the core's
//! [`External`] hooks call the user's object with the GIL taken for the call.
//!
//! The object has `on_complete(sample)` and, optionally, `initial()`; each returns `None`, an
//! [`Itr`] or a [`Coalesce`]. An exception (or a return of another type) is kept in a
//! [`Failure`] shared with the run, the policy is not called again, and the run stops at its
//! next slice and raises it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use irqlab_core::moderation::external::{External, Factory};
use irqlab_core::moderation::{Sample as CoreSample, Write};
use irqlab_core::time::{PS_PER_US, SimDuration};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// What a policy's NAPI completion shows it: the vector's cumulative counters, as the
/// built-in policies see them. Times are picoseconds since the start of the run.
#[pyclass(frozen, get_all, module = "irqlab.policy")]
pub struct Sample {
    /// Time of the completion, ps.
    now_ps: u64,
    /// `jiffies` at `now_ps` (the tick counter starts at zero with the run).
    jiffies: u64,
    /// Rx packets the driver has cleaned, and their bytes (`skb->len`: without the FCS).
    packets: u64,
    bytes: u64,
    /// Hard interrupts of the vector.
    events: u64,
    /// Tx packets and bytes cleaned on the vector's Tx ring (0 on an Rx-only vector).
    tx_packets: u64,
    tx_bytes: u64,
}

#[pymethods]
impl Sample {
    #[new]
    #[pyo3(signature = (now_ps, jiffies = 0, packets = 0, bytes = 0, events = 0, tx_packets = 0, tx_bytes = 0))]
    fn new(
        now_ps: u64,
        jiffies: u64,
        packets: u64,
        bytes: u64,
        events: u64,
        tx_packets: u64,
        tx_bytes: u64,
    ) -> Sample {
        Sample {
            now_ps,
            jiffies,
            packets,
            bytes,
            events,
            tx_packets,
            tx_bytes,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "Sample(now_ps={}, jiffies={}, packets={}, bytes={}, events={}, tx_packets={}, tx_bytes={})",
            self.now_ps,
            self.jiffies,
            self.packets,
            self.bytes,
            self.events,
            self.tx_packets,
            self.tx_bytes
        )
    }
}

impl From<&CoreSample> for Sample {
    fn from(s: &CoreSample) -> Sample {
        Sample {
            now_ps: s.now.ps(),
            jiffies: s.jiffies,
            packets: s.packets,
            bytes: s.bytes,
            events: s.events,
            tx_packets: s.tx_packets,
            tx_bytes: s.tx_bytes,
        }
    }
}

/// A duration of `usecs` µs in whole picoseconds (µs with up to six decimals are exact).
fn duration(what: &str, usecs: f64) -> PyResult<SimDuration> {
    if !(usecs.is_finite() && (0.0..=1e9).contains(&usecs)) {
        return Err(PyValueError::new_err(format!(
            "{what}: usecs = {usecs} must be in [0, 1e9]"
        )));
    }
    Ok(SimDuration((usecs * PS_PER_US as f64).round() as u64))
}

/// Write the ITR (EITR): a minimum interval of `usecs` µs between two interrupts of the
/// vector (0: no throttling). Takes effect from the next reload of the throttle, as on ixgbe.
#[pyclass(frozen, get_all, eq, module = "irqlab.policy")]
#[derive(PartialEq)]
pub struct Itr {
    usecs: f64,
}

#[pymethods]
impl Itr {
    #[new]
    fn new(usecs: f64) -> PyResult<Itr> {
        duration("Itr", usecs)?;
        Ok(Itr { usecs })
    }

    fn __repr__(&self) -> String {
        format!("Itr(usecs={})", self.usecs)
    }
}

/// Program coalescing: an interrupt `usecs` µs after the first unsignalled packet (with
/// `restart`, after the last one: DIM's CQE mode), or once `frames` packets wait, whichever
/// comes first (0 turns that condition off). Applies to the next interrupt.
#[pyclass(frozen, get_all, eq, module = "irqlab.policy")]
#[derive(PartialEq)]
pub struct Coalesce {
    usecs: f64,
    frames: u64,
    restart: bool,
}

#[pymethods]
impl Coalesce {
    #[new]
    #[pyo3(signature = (usecs, frames = 0, restart = false))]
    fn new(usecs: f64, frames: u64, restart: bool) -> PyResult<Coalesce> {
        duration("Coalesce", usecs)?;
        Ok(Coalesce {
            usecs,
            frames,
            restart,
        })
    }

    fn __repr__(&self) -> String {
        let restart = if self.restart { "True" } else { "False" };
        format!(
            "Coalesce(usecs={}, frames={}, restart={restart})",
            self.usecs, self.frames
        )
    }
}

/// The first error of a run's Python policies, shared by every vector's policy and the run.
#[derive(Default)]
pub struct Failure {
    happened: AtomicBool,
    error: Mutex<Option<PyErr>>,
}

impl Failure {
    pub fn happened(&self) -> bool {
        self.happened.load(Ordering::Relaxed)
    }

    /// Keeps `e` if it is the first.
    fn keep(&self, e: PyErr) {
        if let Ok(mut slot) = self.error.lock() {
            if slot.is_none() {
                *slot = Some(e);
            }
        }
        self.happened.store(true, Ordering::Relaxed);
    }

    /// The error, if a policy raised.
    pub fn take(&self) -> Option<PyErr> {
        self.error.lock().ok().and_then(|mut slot| slot.take())
    }
}

/// One vector's Python policy.
struct PyPolicy {
    /// The user's object (None when making it failed).
    obj: Option<Py<PyAny>>,
    failure: Arc<Failure>,
}

impl PyPolicy {
    /// Calls `method` (with `sample`, for `on_complete`) and converts what it returns.
    fn call(&self, method: &str, sample: Option<&CoreSample>) -> Option<Write> {
        let obj = self.obj.as_ref()?;
        if self.failure.happened() {
            return None;
        }
        Python::attach(|py| {
            let obj = obj.bind(py);
            let out = match sample {
                Some(s) => obj.call_method1(method, (Sample::from(s),)),
                None if obj.hasattr(method).unwrap_or(false) => obj.call_method0(method),
                None => return None,
            };
            let written = out.and_then(|w| write_of(py, method, &w));
            match written {
                Ok(w) => w,
                Err(e) => {
                    let when = sample.map_or(String::from("when the vector was set up"), |s| {
                        format!("at {} µs of simulated time", s.now.ps() as f64 / 1e6)
                    });
                    note(
                        py,
                        &e,
                        &format!("raised by the moderation policy's {method}() {when}"),
                    );
                    self.failure.keep(e);
                    None
                }
            }
        })
    }
}

/// Adds a PEP 678 note to an exception (best effort).
fn note(py: Python<'_>, e: &PyErr, text: &str) {
    let _ = e.value(py).call_method1("add_note", (text,));
}

/// A policy's return value as a register write.
fn write_of(py: Python<'_>, method: &str, w: &Bound<'_, PyAny>) -> PyResult<Option<Write>> {
    if w.is_none() {
        return Ok(None);
    }
    if let Ok(itr) = w.cast::<Itr>() {
        return Ok(Some(Write::Itr(duration("Itr", itr.get().usecs)?)));
    }
    if let Ok(c) = w.cast::<Coalesce>() {
        let c = c.get();
        return Ok(Some(Write::Coalesce {
            usecs: duration("Coalesce", c.usecs)?,
            frames: c.frames,
            restart: c.restart,
        }));
    }
    let _ = py;
    Err(PyTypeError::new_err(format!(
        "{method}() returned {}: expected None, irqlab.policy.Itr or irqlab.policy.Coalesce",
        w.repr()
            .map_or_else(|_| "an object".into(), |r| r.to_string())
    )))
}

impl External for PyPolicy {
    fn initial(&mut self) -> Option<Write> {
        self.call("initial", None)
    }

    fn on_complete(&mut self, s: &CoreSample) -> Option<Write> {
        self.call("on_complete", Some(s))
    }
}

/// A factory calling `make()` (a zero-argument Python callable) once per vector.
pub fn factory(make: Py<PyAny>, failure: Arc<Failure>) -> Factory {
    Factory::new(move || {
        let obj = Python::attach(|py| match make.bind(py).call0() {
            Ok(obj) => Some(obj.unbind()),
            Err(e) => {
                note(
                    py,
                    &e,
                    "raised while making the moderation policy of a queue vector",
                );
                failure.keep(e);
                None
            }
        });
        Box::new(PyPolicy {
            obj,
            failure: Arc::clone(&failure),
        }) as Box<dyn External>
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Sample>()?;
    m.add_class::<Itr>()?;
    m.add_class::<Coalesce>()?;
    Ok(())
}
