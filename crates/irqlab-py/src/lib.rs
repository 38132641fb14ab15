//! Python bindings for irqlab-core. Conversion only: Python values in, a core call, Python
//! values out. Errors become `irqlab.errors.ConfigError` (naming the key); a panic in the core
//! is caught here and becomes `irqlab.errors.InternalError`, never a crash or a
//! `PanicException`. A run can be stopped by a signal (Ctrl-C): see [`interruptible`].

use std::borrow::Cow;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

use irqlab_core::params::{Kind, ParamSpec, TABLES};
use irqlab_core::traffic::replay::Scan;
use irqlab_core::{
    Error, Interrupted, PARAMS, PacketTrace, Report, Scenario, Series, Value, run_interruptible,
    run_with_interruptible,
};
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

mod policy;

use policy::Failure;

/// The Python exception `irqlab.errors.<name>(*args)`.
fn py_err<'py, A: pyo3::call::PyCallArgs<'py>>(py: Python<'py>, name: &str, args: A) -> PyErr {
    let made = py
        .import("irqlab.errors")
        .and_then(|m| m.getattr(name))
        .and_then(|cls| cls.call1(args));
    match made {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// A core error as `ConfigError(message, key)`.
fn config_error(py: Python<'_>, e: &Error) -> PyErr {
    py_err(py, "ConfigError", (e.to_string(), e.key()))
}

const RUN_FAILED: &str =
    "irqlab core failed during the run (this is a bug; please report the scenario)";

/// How often a run looks for signals, wall time.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Runs `run` (a core run given its `stop` function) with the GIL released, looking for
/// signals every [`SIGNAL_POLL`]: Python runs its signal handlers only when asked, so a run
/// that held this thread would ignore Ctrl-C for hours. The core asks `stop` between slices of
/// the run (at most a fraction of a second apart); once `SIGNAL_POLL` has passed, `stop` takes
/// the GIL and runs the pending handlers. When one raises (Ctrl-C: `KeyboardInterrupt`), the
/// run stops there and the handler's exception is returned. A panic in the core becomes
/// `InternalError`.
fn interruptible<R: Send>(
    py: Python<'_>,
    run: impl FnOnce(&mut dyn FnMut() -> bool) -> Result<R, Interrupted> + Send,
) -> PyResult<R> {
    interruptible_with(py, &Failure::default(), run)
}

/// [`interruptible`] for a run with a Python moderation policy: the run also stops at its
/// next slice once the policy has raised, and the policy's exception is the answer.
fn interruptible_with<R: Send>(
    py: Python<'_>,
    failure: &Failure,
    run: impl FnOnce(&mut dyn FnMut() -> bool) -> Result<R, Interrupted> + Send,
) -> PyResult<R> {
    let mut raised: Option<PyErr> = None;
    let out = py.detach(|| {
        let mut next_look = Instant::now() + SIGNAL_POLL;
        let mut stop = || {
            if failure.happened() {
                return true;
            }
            let now = Instant::now();
            if now < next_look {
                return false;
            }
            next_look = now + SIGNAL_POLL;
            match Python::attach(|py| py.check_signals()) {
                Ok(()) => false,
                Err(e) => {
                    raised = Some(e);
                    true
                }
            }
        };
        catch_unwind(AssertUnwindSafe(|| run(&mut stop)))
    });
    if let Some(e) = failure.take() {
        return Err(e);
    }
    match (out, raised) {
        (Ok(Ok(r)), None) => Ok(r),
        // a handler raised: that is the answer, whether the run stopped or had just ended
        (Ok(_), Some(e)) => Err(e),
        (Ok(Err(stopped)), None) => Err(PyKeyboardInterrupt::new_err(stopped.to_string())),
        (Err(_), _) => Err(py_err(py, "InternalError", (RUN_FAILED,))),
    }
}

/// Converts one Python value; `bool` is checked before `int` (it is a subclass).
fn to_value(py: Python<'_>, key: &str, v: &Bound<'_, PyAny>) -> PyResult<Value> {
    if v.is_instance_of::<PyBool>() {
        return Ok(Value::Bool(v.extract()?));
    }
    if v.is_instance_of::<PyInt>() {
        return match v.extract::<i128>() {
            Ok(i) => Ok(Value::Int(i)),
            Err(_) => Err(config_error(
                py,
                &Error::OutOfRange {
                    key: key.to_string(),
                    value: v.str()?.to_string(),
                    allowed: "integer too large".into(),
                },
            )),
        };
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(Value::Float(v.extract()?));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(Value::Str(v.extract()?));
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for item in v.try_iter()? {
            let item = item?;
            if item.is_instance_of::<PyList>() || item.is_instance_of::<PyTuple>() {
                return Err(config_error(
                    py,
                    &Error::WrongType {
                        key: key.to_string(),
                        value: v.repr()?.to_string(),
                        expected: "a list of numbers or strings, not of lists".into(),
                    },
                ));
            }
            items.push(to_value(py, key, &item)?);
        }
        return Ok(Value::List(items));
    }
    Err(config_error(
        py,
        &Error::WrongType {
            key: key.to_string(),
            value: v.repr()?.to_string(),
            expected: "a number or a string".into(),
        },
    ))
}

fn build(py: Python<'_>, params: &Bound<'_, PyDict>) -> PyResult<Scenario> {
    let mut pairs = Vec::with_capacity(params.len());
    for (k, v) in params.iter() {
        let key: String = k.extract()?;
        let value = to_value(py, &key, &v)?;
        pairs.push((key, value));
    }
    // without the GIL: a replay's scenario reads its whole capture
    match py.detach(|| catch_unwind(AssertUnwindSafe(|| Scenario::from_pairs(pairs)))) {
        Ok(built) => built.map_err(|e| config_error(py, &e)),
        Err(payload) => Err(panic_error(py, payload)),
    }
}

/// Runs `f`, turning a panic into `InternalError`.
fn guard<T>(py: Python<'_>, f: impl FnOnce() -> T) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| panic_error(py, payload))
}

/// A panic's payload as `InternalError`.
fn panic_error(py: Python<'_>, payload: Box<dyn std::any::Any + Send>) -> PyErr {
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    py_err(
        py,
        "InternalError",
        (format!(
            "irqlab core failed: {msg} (this is a bug; please report the scenario)"
        ),),
    )
}

fn report_to_py<'py>(py: Python<'py>, r: &Report) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, r).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

fn value_to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(x) => PyFloat::new(py, *x).into_any(),
        Value::Str(s) => PyString::new(py, s).into_any(),
        Value::List(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(value_to_py(py, item)?)?;
            }
            list.into_any()
        }
    })
}

/// A scenario built by the core once: validated, every key resolved, its warnings found, ready
/// to run as it is (`run`, `run_traced`, `run_series` take it instead of a params dict, so a
/// checked scenario is not built again to run).
#[pyclass(frozen, module = "irqlab.core", name = "ResolvedScenario")]
struct Resolved {
    scenario: Scenario,
}

#[pymethods]
impl Resolved {
    /// Builds the scenario of a flat `{dotted key: value}` dict; a bad one raises `ConfigError`.
    #[new]
    fn new(py: Python<'_>, params: &Bound<'_, PyDict>) -> PyResult<Resolved> {
        Ok(Resolved {
            scenario: build(py, params)?,
        })
    }

    /// Every key with its resolved value (defaults filled in), as a new dict.
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (k, v) in self.scenario.params.iter() {
            out.set_item(k, value_to_py(py, v)?)?;
        }
        Ok(out)
    }

    /// The settings that have no effect in the scenario, as `[(key, message), ...]` (the
    /// Python layer shows them as `irqlab.ConfigWarning`).
    #[getter]
    fn warnings(&self) -> Vec<(String, String)> {
        self.scenario
            .warnings
            .iter()
            .map(|w| (w.key.clone(), w.to_string()))
            .collect()
    }

    /// Among the warnings, the settings that have an effect but not exactly the one their
    /// value says, with the value each acts as: `[(key, acts_as), ...]` (a time the kernel
    /// rounds up to whole jiffies). The others have no effect at all.
    #[getter]
    fn acting(&self) -> Vec<(String, String)> {
        self.scenario
            .warnings
            .iter()
            .filter_map(|w| w.acts_as.clone().map(|a| (w.key.clone(), a)))
            .collect()
    }
}

/// What to run: a [`Resolved`] scenario as it is, or a params dict built now; with the
/// scenario's `python` moderation policies made by `policy()` (a zero-argument callable, one
/// call per vector), whose first error goes to the returned [`Failure`].
fn scenario_of<'a>(
    py: Python<'_>,
    scenario: &'a Bound<'_, PyAny>,
    policy: Option<Bound<'_, PyAny>>,
) -> PyResult<(Cow<'a, Scenario>, Arc<Failure>)> {
    let s = match scenario.cast::<Resolved>() {
        Ok(resolved) => Cow::Borrowed(&resolved.get().scenario),
        Err(_) => Cow::Owned(build(py, scenario.cast::<PyDict>()?)?),
    };
    let failure = Arc::new(Failure::default());
    let s = match policy {
        Some(make) => Cow::Owned(
            s.into_owned()
                .with_policy(policy::factory(make.unbind(), Arc::clone(&failure))),
        ),
        None => s,
    };
    Ok((s, failure))
}

/// Runs one scenario given as a flat `{dotted key: value}` dict; returns the report as a dict.
/// A signal stops it within about a second, raising what its handler raised. `policy`: a
/// zero-argument callable making the `python` moderation policy of each vector.
#[pyfunction]
#[pyo3(signature = (scenario, policy = None))]
fn run<'py>(
    py: Python<'py>,
    scenario: &Bound<'py, PyAny>,
    policy: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (s, failure) = scenario_of(py, scenario, policy)?;
    let r = interruptible_with(py, &failure, |stop| run_interruptible(&s, stop))?;
    report_to_py(py, &r)
}

/// Like `run`, and also returns per-packet outcomes: `{arrival_ps, accepted, done_ps,
/// size_bytes, flow, queue, class}` lists (`done_ps` is None for dropped packets and packets still in
/// flight; `queue`: the vector RSS steered the packet to).
#[pyfunction]
#[pyo3(signature = (scenario, policy = None))]
fn run_traced<'py>(
    py: Python<'py>,
    scenario: &Bound<'py, PyAny>,
    policy: Option<Bound<'py, PyAny>>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyDict>)> {
    let (s, failure) = scenario_of(py, scenario, policy)?;
    let (r, trace) = interruptible_with(py, &failure, |stop| {
        run_with_interruptible(&s, PacketTrace::default(), stop)
    })?;
    let d = PyDict::new(py);
    d.set_item("arrival_ps", PyList::new(py, &trace.arrival_ps)?)?;
    d.set_item("accepted", PyList::new(py, &trace.accepted)?)?;
    d.set_item("done_ps", PyList::new(py, &trace.done_ps)?)?;
    d.set_item("size_bytes", PyList::new(py, &trace.size_bytes)?)?;
    d.set_item("flow", PyList::new(py, &trace.flow)?)?;
    d.set_item("queue", PyList::new(py, &trace.queue)?)?;
    d.set_item("class", PyList::new(py, &trace.class)?)?;
    Ok((report_to_py(py, &r)?, d))
}

/// Like `run`, and also returns the run as a time series of `buckets` equal buckets from time
/// zero (warm-up included): `{bucket_ps, offered, dropped, delivered, latency_sum_us}` lists.
#[pyfunction]
#[pyo3(signature = (scenario, buckets, policy = None))]
fn run_series<'py>(
    py: Python<'py>,
    scenario: &Bound<'py, PyAny>,
    buckets: usize,
    policy: Option<Bound<'py, PyAny>>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyDict>)> {
    if !(1..=10_000_000).contains(&buckets) {
        return Err(py_err(
            py,
            "ConfigError",
            (
                format!("buckets = {buckets}: must be in [1, 10000000]"),
                "buckets",
            ),
        ));
    }
    let (s, failure) = scenario_of(py, scenario, policy)?;
    let (r, series) = interruptible_with(py, &failure, |stop| {
        run_with_interruptible(&s, Series::new(s.run.end, buckets), stop)
    })?;
    let d = PyDict::new(py);
    d.set_item("bucket_ps", series.bucket.ps())?;
    d.set_item("offered", PyList::new(py, &series.offered)?)?;
    d.set_item("dropped", PyList::new(py, &series.dropped)?)?;
    d.set_item("delivered", PyList::new(py, &series.delivered)?)?;
    let lat: Vec<f64> = series
        .latency_sum_ps
        .iter()
        .map(|&ps| ps as f64 / 1e6)
        .collect();
    d.set_item("latency_sum_us", PyList::new(py, &lat)?)?;
    Ok((report_to_py(py, &r)?, d))
}

/// What one pass over the capture at `path` finds (`irqlab trace-info`): a dict of counts,
/// `sizes` as `[(bytes, frames), ...]`, `top_flows` as `[(id, flow, packets, rss_hash), ...]`,
/// `gaps` as `[(gap_ps, index of the packet after it), ...]`. A capture that cannot be read
/// raises `ConfigError("<path>: <why>")`.
#[pyfunction]
fn trace_info<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
    top: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let scanned = py.detach(|| catch_unwind(AssertUnwindSafe(|| Scan::of(&path))));
    let s = match scanned {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            let shown = path.display().to_string();
            return Err(py_err(py, "ConfigError", (format!("{shown}: {e}"), "path")));
        }
        Err(payload) => return Err(panic_error(py, payload)),
    };
    let d = PyDict::new(py);
    d.set_item("format", s.format.name())?;
    d.set_item("compressed", s.compressed)?;
    d.set_item("link_types", &s.link_types)?;
    d.set_item("snaplen", s.snaplen)?;
    d.set_item("packets", s.packets)?;
    d.set_item("first_ps", s.first_ps)?;
    d.set_item("span_ps", s.span_ps)?;
    d.set_item("period_ps", s.period_ps())?;
    d.set_item("frame_bytes", s.frame_bytes)?;
    d.set_item("sizes", &s.sizes)?;
    d.set_item("flows", s.flows.len())?;
    let top: Vec<(u32, String, u64, u32)> = s
        .flows
        .top(top)
        .into_iter()
        .map(|(id, key, n)| (id, key.to_string(), n, s.flows.hash[id as usize]))
        .collect();
    d.set_item("top_flows", top)?;
    d.set_item("gaps", &s.gaps)?;
    for (k, v) in [
        ("reordered", s.reordered),
        ("cut", s.cut),
        ("ipv4", s.ipv4),
        ("ipv6", s.ipv6),
        ("other", s.other),
        ("tcp", s.tcp),
        ("udp", s.udp),
    ] {
        d.set_item(k, v)?;
    }
    Ok(d)
}

/// The frame-size distribution of a scenario, as `[(bytes, probability), ...]`.
#[pyfunction]
fn frame_sizes(py: Python<'_>, params: &Bound<'_, PyDict>) -> PyResult<Vec<(u32, f64)>> {
    Ok(build(py, params)?.traffic.sizes.pmf())
}

fn spec_to_py<'py>(py: Python<'py>, key: &str, p: &ParamSpec) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("key", key)?;
    d.set_item("doc", p.doc)?;
    d.set_item("allowed", p.kind.allowed())?;
    d.set_item("default", value_to_py(py, &p.default.value())?)?;
    match p.kind {
        Kind::Bool => d.set_item("type", "bool")?,
        Kind::Int { min, max } => {
            d.set_item("type", "int")?;
            d.set_item("min", min)?;
            d.set_item("max", max)?;
        }
        Kind::IntOneOf(set) => {
            d.set_item("type", "int")?;
            d.set_item("choices", set.to_vec())?;
        }
        Kind::Float { min, max, min_open } => {
            d.set_item("type", "float")?;
            d.set_item("min", min)?;
            d.set_item("max", max)?;
            d.set_item("min_exclusive", min_open)?;
        }
        Kind::OneOf(set) => {
            d.set_item("type", "str")?;
            d.set_item("choices", set.to_vec())?;
        }
        Kind::Text(_) => d.set_item("type", "text")?,
        Kind::IntList { min, max, max_len } => {
            d.set_item("type", "int_list")?;
            d.set_item("min", min)?;
            d.set_item("max", max)?;
            d.set_item("max_len", max_len)?;
        }
    }
    Ok(d)
}

/// The scenario schema: a list of `{key, type, default, allowed, doc, ...}` dicts. The fields
/// of numbered entries appear as `{table}.N.{field}` with `table`, `noun` and `max_entries`.
#[pyfunction]
fn schema<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for p in PARAMS {
        list.append(spec_to_py(py, p.key, p)?)?;
    }
    for t in TABLES {
        for f in t.fields {
            let d = spec_to_py(py, &format!("{}.N.{}", t.prefix, f.key), f)?;
            d.set_item("table", t.prefix)?;
            d.set_item("noun", t.noun)?;
            d.set_item("max_entries", t.max_entries)?;
            d.set_item("table_doc", t.doc)?;
            d.set_item("field", f.key)?;
            list.append(d)?;
        }
    }
    Ok(list)
}

/// Deliberately panics inside the core boundary guard, or in a run's worker thread with
/// `in_run` (for the no-panic-crosses tests).
#[pyfunction]
#[pyo3(signature = (in_run = false))]
fn _panic_for_test(py: Python<'_>, in_run: bool) -> PyResult<()> {
    if in_run {
        interruptible(py, |_| -> Result<(), Interrupted> {
            panic!("deliberate test panic")
        })
    } else {
        guard(py, || panic!("deliberate test panic"))
    }
}

#[pymodule]
fn _irqlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Resolved>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_traced, m)?)?;
    m.add_function(wrap_pyfunction!(run_series, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(frame_sizes, m)?)?;
    m.add_function(wrap_pyfunction!(trace_info, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    policy::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
