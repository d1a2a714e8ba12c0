//! Preemption planners written in Python: a `pliant.Planner` object given
//! among a run's policies plans for the core at each resource-monitor run,
//! through the core's public plugin API (`PlannerSpec::Custom`).
//!
//! The core names a custom planner by a `&'static dyn PlannerPlugin`. One
//! [`PythonPlugin`] is leaked per planner *name* the process ever runs (a
//! name, a few counters and empty slots), never per call: during a call the
//! plugin holds the caller's object, and each run the core builds plans
//! with a deep copy of it, so runs in parallel share no state. Each plan
//! call takes the GIL, which serialises the Python calls of parallel runs;
//! runs of Rust policies never take it. An exception in `plan` stops the
//! Python calls of every run of that planner (they take nothing more, in
//! Rust, to their end) and the call raises it, traceback and all.

use crate::PliantError;
use pliant_core::model::{JobId, TaskRef, TaskState};
use pliant_core::policy::steps::{self, Mechanism, PlannerPlugin};
use pliant_core::policy::{Policy, Profile, Registry};
use pliant_core::{MechanismKind, Micros};
use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The plugin of one planner name.
struct PythonPlugin {
    name: &'static str,
    /// The planner object of the call running it, if one is.
    object: Mutex<Option<Py<PyAny>>>,
    /// Whether a copy raised: every copy then stops calling Python.
    failed: AtomicBool,
    /// The first exception, as the `PliantError` the call raises.
    failure: Mutex<Option<PyErr>>,
    /// Plan calls in this call's runs, and the nanoseconds they took (the
    /// GIL's acquisition, the view, Python's `plan`, the takes' checks).
    calls: AtomicU64,
    nanos: AtomicU64,
}

/// Every plugin made, by name.
static PLUGINS: Mutex<Vec<&'static PythonPlugin>> = Mutex::new(Vec::new());

/// The plugin of planner name `name`, made (and leaked) the first time.
fn plugin(name: &str) -> &'static PythonPlugin {
    let mut plugins = PLUGINS.lock().expect("no thread panics holding the plugins");
    if let Some(p) = plugins.iter().find(|p| p.name == name) {
        return p;
    }
    let p: &'static PythonPlugin = Box::leak(Box::new(PythonPlugin {
        name: Box::leak(name.to_string().into_boxed_str()),
        object: Mutex::new(None),
        failed: AtomicBool::new(false),
        failure: Mutex::new(None),
        calls: AtomicU64::new(0),
        nanos: AtomicU64::new(0),
    }));
    plugins.push(p);
    p
}

impl PythonPlugin {
    /// Records the first exception of its copies, with its traceback, and
    /// stops them all; `now`: when, if in a plan.
    fn fail(&self, py: Python<'_>, err: PyErr, now: Option<Micros>) {
        if self.failed.swap(true, Ordering::SeqCst) {
            return;
        }
        let traceback = py
            .import("traceback")
            .and_then(|m| m.call_method1("format_exception", (err.get_type(py), err.value(py), err.traceback(py))))
            .and_then(|lines| lines.extract::<Vec<String>>())
            .map(|lines| lines.concat())
            .unwrap_or_else(|_| err.to_string());
        let when = match now {
            Some(t) => format!("its plan raised at {:.3} s of simulated time", t as f64 / 1e6),
            None => "copying it for a run raised".to_string(),
        };
        let error = PliantError::new_err(format!("policy {}: {when}:\n{}", self.name, traceback.trim_end()));
        error.set_cause(py, Some(err));
        *self.failure.lock().expect("no thread panics holding a failure") = Some(error);
    }

    /// A deep copy of the call's object, for one run.
    fn copy(&self, py: Python<'_>, of: Option<&Py<PyAny>>) -> Option<Py<PyAny>> {
        let object = of.map(|o| o.clone_ref(py)).or_else(|| {
            self.object.lock().expect("no thread panics holding an object").as_ref().map(|o| o.clone_ref(py))
        })?;
        let copied = py.import("copy").and_then(|m| m.call_method1("deepcopy", (object,)));
        match copied {
            Ok(o) => Some(o.unbind()),
            Err(e) => {
                self.fail(py, e, None);
                None
            }
        }
    }
}

impl PlannerPlugin for PythonPlugin {
    fn name(&self) -> &'static str {
        self.name
    }

    fn build(&self, _policy: &Policy) -> Box<dyn steps::Planner> {
        let object = Python::attach(|py| self.copy(py, None));
        Box::new(PyPlanner { plugin: plugin(self.name), object })
    }
}

/// The planner of one run: its own copy of the Python object.
struct PyPlanner {
    plugin: &'static PythonPlugin,
    /// `None` when copying it failed.
    object: Option<Py<PyAny>>,
}

impl std::fmt::Debug for PyPlanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PyPlanner({})", self.plugin.name)
    }
}

impl steps::Planner for PyPlanner {
    fn clone_box(&self) -> Box<dyn steps::Planner> {
        let object = Python::attach(|py| self.object.as_ref().and_then(|o| self.plugin.copy(py, Some(o))));
        Box::new(PyPlanner { plugin: self.plugin, object })
    }

    fn plan(&mut self, view: &steps::View, _mechanism: &dyn Mechanism, now: Micros) -> Vec<steps::Take> {
        let Some(object) = &self.object else { return Vec::new() };
        if self.plugin.failed.load(Ordering::Relaxed) {
            return Vec::new();
        }
        let start = Instant::now();
        let takes = Python::attach(|py| plan(py, object, view, now).map_err(|e| self.plugin.fail(py, e, Some(now))));
        self.plugin.calls.fetch_add(1, Ordering::Relaxed);
        self.plugin.nanos.fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        takes.unwrap_or_default()
    }
}

/// Calls `object.plan(view)` and checks its takes.
fn plan(py: Python<'_>, object: &Py<PyAny>, view: &steps::View, now: Micros) -> PyResult<Vec<steps::Take>> {
    let shown = Bound::new(py, View { view: Mutex::new(Some(Lent(view))), now })?;
    let result = object.bind(py).call_method1("plan", (&shown,));
    *shown.get().view.lock().expect("no thread panics holding a view") = None;
    let mut takes = Vec::new();
    for item in result?.try_iter()? {
        let item = item?;
        let take = item.extract::<PyRef<Take>>().map_err(|_| {
            PyTypeError::new_err(format!(
                "plan returned {}, not a pliant.Take",
                item.repr().map_or("?".into(), |r| r.to_string())
            ))
        })?;
        takes.push(take.0);
    }
    if !takes.is_empty() {
        check(view, now, &takes)?;
    }
    Ok(takes)
}

/// Refuses what the core would not carry out: a task that holds nothing,
/// one taken twice, a whole take of a task not running, a shrink that
/// grows, a mechanism its node cannot do.
fn check(view: &steps::View, now: Micros, takes: &[steps::Take]) -> PyResult<()> {
    let holding: HashMap<TaskRef, steps::Holding> =
        (0..view.queue_count()).flat_map(|q| view.holding(q, now)).map(|h| (h.task, h)).collect();
    let mut seen = HashSet::new();
    for take in takes {
        let bad = |why: String| PyValueError::new_err(format!("plan returned a take of {}: {why}", take.task));
        let Some(h) = holding.get(&take.task) else { return Err(bad("it holds no resources".into())) };
        if !seen.insert(take.task) {
            return Err(bad("it is taken twice in one plan".into()));
        }
        match take.shrink_to {
            None if h.state != TaskState::Running => {
                return Err(bad(format!("it is {}: only a running task can be taken whole", state_name(h.state))))
            }
            Some(_) if !matches!(h.state, TaskState::Running | TaskState::Shrunk) => {
                return Err(bad(format!("it is {}: only a running or shrunk task can shrink", state_name(h.state))))
            }
            Some(to) if !to.fits_in(&h.allocated) || to == h.allocated => {
                return Err(bad(format!("shrink_to {to:?} is not less than what it holds, {:?}", h.allocated)))
            }
            _ => {}
        }
        if let Some(by) = take.by {
            if !view.node_can(h.node.0 as usize, by) {
                return Err(bad(format!("its node {} cannot {}", h.node.0, by.name())));
            }
        }
    }
    Ok(())
}

/// A task state's name in Python.
fn state_name(state: TaskState) -> &'static str {
    match state {
        TaskState::Pending => "pending",
        TaskState::Running => "running",
        TaskState::Shrunk => "shrunk",
        TaskState::Suspended => "suspended",
        TaskState::Restoring => "restoring",
        TaskState::Finished => "finished",
        TaskState::Failed => "failed",
    }
}

/// A mechanism by its name.
fn mechanism(name: &str) -> PyResult<MechanismKind> {
    MechanismKind::ALL.into_iter().find(|m| m.name() == name).ok_or_else(|| {
        let names: Vec<&str> = MechanismKind::ALL.iter().map(|m| m.name()).collect();
        PyValueError::new_err(format!("no mechanism `{name}`: one of {}", names.join(", ")))
    })
}

/// The core's view, lent to Python for one plan call.
struct Lent(*const steps::View);

// SAFETY: the pointer is dereferenced only under its `View`'s mutex, while
// the plan call that lent it runs (it is cleared before the call returns),
// on whichever thread Python runs `plan`; the view is not changed meanwhile.
unsafe impl Send for Lent {}

/// What a planner reads: the cluster's nodes, the queues and the tasks that
/// hold resources, as the core's `View` shows them, at `now` (µs). Valid only
/// during the `plan` call it is given to.
#[pyclass(frozen, module = "pliant", name = "View")]
struct View {
    view: Mutex<Option<Lent>>,
    #[pyo3(get)]
    now: Micros,
}

impl View {
    /// Reads the lent view.
    fn read<R>(&self, f: impl FnOnce(&steps::View) -> PyResult<R>) -> PyResult<R> {
        let lent = self.view.lock().expect("no thread panics holding a view");
        match &*lent {
            // SAFETY: see `Lent`.
            Some(Lent(view)) => f(unsafe { &**view }),
            None => Err(PyRuntimeError::new_err("a View is valid only during the plan call it was given to")),
        }
    }

    /// Checks index `i` of `what` below `count`.
    fn index(i: usize, count: usize, what: &str) -> PyResult<usize> {
        if i < count {
            Ok(i)
        } else {
            Err(PyIndexError::new_err(format!("no {what} {i}: there are {count}")))
        }
    }
}

#[pymethods]
impl View {
    /// Number of nodes.
    fn node_count(&self) -> PyResult<usize> {
        self.read(|v| Ok(v.node_count()))
    }

    /// What node `i` has free (nothing if it is down).
    fn node_free(&self, i: usize) -> PyResult<Resources> {
        self.read(|v| Ok(Resources(v.node_free(View::index(i, v.node_count(), "node")?))))
    }

    /// Node `i`'s capacity.
    fn node_capacity(&self, i: usize) -> PyResult<Resources> {
        self.read(|v| Ok(Resources(v.node_capacity(View::index(i, v.node_count(), "node")?))))
    }

    /// Whether node `i` can carry out `mechanism` (``"kill"``, ``"suspend"``...).
    fn node_can(&self, i: usize, mechanism: &str) -> PyResult<bool> {
        let kind = self::mechanism(mechanism)?;
        self.read(|v| Ok(v.node_can(View::index(i, v.node_count(), "node")?, kind)))
    }

    /// Total capacity of the nodes up.
    fn total(&self) -> PyResult<Resources> {
        self.read(|v| Ok(Resources(v.total())))
    }

    /// What is allocated cluster-wide.
    fn allocated(&self) -> PyResult<Resources> {
        self.read(|v| Ok(Resources(v.allocated())))
    }

    /// Memory preempted tasks have still to give back, MB.
    fn reclaiming_mb(&self) -> PyResult<u64> {
        self.read(|v| Ok(v.reclaiming_mb()))
    }

    /// Number of queues (the policy's, in its order: ``short``, ``long`` for two).
    fn queue_count(&self) -> PyResult<usize> {
        self.read(|v| Ok(v.queue_count()))
    }

    /// Queue `q`'s guaranteed share of the nodes up.
    fn queue_guaranteed(&self, q: usize) -> PyResult<Resources> {
        self.read(|v| Ok(Resources(v.queue_guaranteed(View::index(q, v.queue_count(), "queue")?))))
    }

    /// What queue `q`'s tasks hold now.
    fn queue_used(&self, q: usize) -> PyResult<Resources> {
        self.read(|v| Ok(Resources(v.queue_used(View::index(q, v.queue_count(), "queue")?))))
    }

    /// Sum of the requests of queue `q`'s runnable pending tasks.
    fn pending_demand(&self, q: usize) -> PyResult<Resources> {
        self.read(|v| Ok(Resources(v.pending_demand(View::index(q, v.queue_count(), "queue")?))))
    }

    /// The tasks of queue `q`'s jobs that hold resources, job by job in service order.
    fn holding(&self, q: usize) -> PyResult<Vec<Holding>> {
        self.read(|v| Ok(v.holding(View::index(q, v.queue_count(), "queue")?, self.now).map(Holding::of).collect()))
    }
}

/// A task that holds resources: ``job``, ``task``, ``state`` (``running``,
/// ``shrunk``, ``suspended``, ``restoring``), ``node``, ``allocated``,
/// ``started`` (its attempt's start, µs) and ``ran`` (µs run in it,
/// suspensions excluded).
#[pyclass(frozen, get_all, module = "pliant", name = "Holding")]
struct Holding {
    job: u32,
    task: u32,
    state: &'static str,
    node: u32,
    allocated: Resources,
    started: Micros,
    ran: Micros,
}

impl Holding {
    fn of(h: steps::Holding) -> Holding {
        Holding {
            job: h.task.job.0,
            task: h.task.task,
            state: state_name(h.state),
            node: h.node.0,
            allocated: Resources(h.allocated),
            started: h.started,
            ran: h.ran,
        }
    }
}

#[pymethods]
impl Holding {
    fn __repr__(&self) -> String {
        format!(
            "Holding(job={}, task={}, state={:?}, node={}, allocated={}, started={}, ran={})",
            self.job,
            self.task,
            self.state,
            self.node,
            self.allocated.__repr__(),
            self.started,
            self.ran
        )
    }
}

/// A ⟨CPU, memory⟩ vector: ``cpu_milli`` (1000 = one core) and ``mem_mb``.
#[pyclass(frozen, eq, hash, module = "pliant", name = "Resources")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Resources(pliant_core::Resources);

#[pymethods]
impl Resources {
    #[new]
    fn new(cpu_milli: u64, mem_mb: u64) -> Self {
        Resources(pliant_core::Resources::new(cpu_milli, mem_mb))
    }

    /// CPU in millicores.
    #[getter]
    fn cpu_milli(&self) -> u64 {
        self.0.cpu_milli
    }

    /// Memory in MB.
    #[getter]
    fn mem_mb(&self) -> u64 {
        self.0.mem_mb
    }

    /// True when both are zero.
    fn is_zero(&self) -> bool {
        self.0.is_zero()
    }

    /// True when both fit within `other`'s.
    fn fits_in(&self, other: &Resources) -> bool {
        self.0.fits_in(&other.0)
    }

    /// True when both are below `other`'s.
    fn strictly_less(&self, other: &Resources) -> bool {
        self.0.strictly_less(&other.0)
    }

    /// Each less `other`'s, at least zero.
    fn saturating_sub(&self, other: &Resources) -> Resources {
        Resources(self.0.saturating_sub(&other.0))
    }

    /// Each the smaller of the two.
    fn min(&self, other: &Resources) -> Resources {
        Resources(self.0.min(&other.0))
    }

    fn __add__(&self, other: &Resources) -> Resources {
        Resources(self.0 + other.0)
    }

    fn __repr__(&self) -> String {
        format!("Resources(cpu_milli={}, mem_mb={})", self.0.cpu_milli, self.0.mem_mb)
    }
}

/// One victim: task ``task`` of job ``job``, taken ``by`` a mechanism
/// (``"kill"``, ``"immediate"``, ``"graceful"``, ``"suspend"``,
/// ``"checkpoint"``; ``None``: the policy's), shrunk to ``shrink_to`` for a
/// graceful step (``None``: all it holds).
#[pyclass(frozen, module = "pliant", name = "Take")]
struct Take(steps::Take);

#[pymethods]
impl Take {
    #[new]
    #[pyo3(signature = (job, task, by = None, shrink_to = None))]
    fn new(job: u32, task: u32, by: Option<&str>, shrink_to: Option<PyRef<'_, Resources>>) -> PyResult<Self> {
        Ok(Take(steps::Take {
            task: TaskRef { job: JobId(job), task },
            shrink_to: shrink_to.map(|r| r.0),
            by: by.map(mechanism).transpose()?,
        }))
    }

    #[getter]
    fn job(&self) -> u32 {
        self.0.task.job.0
    }

    #[getter]
    fn task(&self) -> u32 {
        self.0.task.task
    }

    #[getter]
    fn by(&self) -> Option<&'static str> {
        self.0.by.map(|m| m.name())
    }

    #[getter]
    fn shrink_to(&self) -> Option<Resources> {
        self.0.shrink_to.map(Resources)
    }

    fn __repr__(&self) -> String {
        let by = self.by().map_or("None".to_string(), |m| format!("'{m}'"));
        let to = self.shrink_to().map_or("None".to_string(), |r| r.__repr__());
        format!("Take(job={}, task={}, by={by}, shrink_to={to})", self.job(), self.task())
    }
}

/// A planner object claimed for one call: its plugin holds it until dropped.
pub struct Claimed {
    plugin: &'static PythonPlugin,
    base: String,
    steps: Vec<(String, String)>,
}

/// Claims planner object `object` for a call: reads its ``name``, ``base``
/// and ``steps``; refuses a name another planner of a running call has.
pub fn claim(object: &Bound<'_, PyAny>) -> PyResult<Claimed> {
    let name: String = object.getattr("name")?.extract()?;
    let base: String = object.getattr("base")?.extract()?;
    let steps = object.getattr("steps")?.call_method0("items")?;
    let steps = steps.try_iter()?.map(|kv| kv?.extract()).collect::<PyResult<Vec<(String, String)>>>()?;
    let plugin = plugin(&name);
    let mut held = plugin.object.lock().expect("no thread panics holding an object");
    if held.is_some() {
        return Err(PliantError::new_err(format!(
            "a planner named `{name}` is running already: two planners of one name, or one in two calls at once"
        )));
    }
    *held = Some(object.clone().unbind());
    plugin.failed.store(false, Ordering::SeqCst);
    *plugin.failure.lock().expect("no thread panics holding a failure") = None;
    plugin.calls.store(0, Ordering::SeqCst);
    plugin.nanos.store(0, Ordering::SeqCst);
    drop(held);
    Ok(Claimed { plugin, base, steps })
}

impl Claimed {
    /// Its planner's name.
    pub fn name(&self) -> &'static str {
        self.plugin.name
    }

    /// Registers its planner in `registry` and returns the profile it
    /// stands for: preset `base` with `steps` and this planner.
    pub fn profile(&self, registry: &mut Registry) -> Result<Profile, String> {
        registry.add_planner(self.plugin)?;
        let pairs: Vec<(&str, &str)> = self.steps.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let mut profile = registry.compose(self.plugin.name, &self.base, &pairs).map_err(|e| match e.step {
            Some(i) => format!("steps[{:?}]: {}", pairs[i].0, e.reason),
            None => format!("base: {}", e.reason),
        })?;
        if profile.preemption.is_none() {
            let base = &self.base;
            return Err(format!("base `{base}` with these steps never preempts: a planner needs one that does"));
        }
        registry.fill(&mut profile, "planner", self.plugin.name)?;
        Ok(profile)
    }

    /// The exception a run of it raised, as the call's error.
    pub fn failure(&self) -> Option<PyErr> {
        self.plugin.failure.lock().expect("no thread panics holding a failure").take()
    }
}

impl Drop for Claimed {
    fn drop(&mut self) {
        *self.plugin.object.lock().expect("no thread panics holding an object") = None;
    }
}

/// Its plan calls in the call's runs, as columns: ``policy``, ``calls`` and
/// ``seconds`` (their wall-clock time, summed over the runs).
pub fn counts<'py>(py: Python<'py>, claimed: &[Claimed]) -> PyResult<Bound<'py, PyDict>> {
    let columns = PyDict::new(py);
    columns.set_item("policy", claimed.iter().map(|c| c.plugin.name).collect::<Vec<_>>())?;
    columns.set_item("calls", claimed.iter().map(|c| c.plugin.calls.load(Ordering::SeqCst)).collect::<Vec<_>>())?;
    let seconds = claimed.iter().map(|c| c.plugin.nanos.load(Ordering::SeqCst) as f64 / 1e9);
    columns.set_item("seconds", seconds.collect::<Vec<_>>())?;
    Ok(columns)
}

/// Adds the classes a planner sees to the module.
pub fn add_classes(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<View>()?;
    m.add_class::<Holding>()?;
    m.add_class::<Resources>()?;
    m.add_class::<Take>()?;
    Ok(())
}
