//! A manager in the test's own process, on one node that can carry out
//! every mechanism, whose clock the test sets: no agent, no root, and the
//! journal it writes is the one a live cluster writes.

use pliant_core::model::TaskRef;
use pliant_core::{MechanismKind, Micros, Resources};
use pliant_live::protocol::{AgentOp, AgentReport};
use pliant_live::wire::NodeRecord;
use pliant_manager::manager::{ClusterConfig, Manager};
use pliant_manager::submit::SubmitRequest;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A manager keeping its state in `dir`, under `policy` with the `--set`
/// `params`, on one node of `capacity`; its clock reads the µs the test
/// stores in the returned counter (core time, from 0).
pub fn manager(dir: &Path, policy: &str, params: &[(&str, &str)], capacity: Resources) -> (Manager, Arc<AtomicU64>) {
    let config = ClusterConfig {
        policy: policy.into(),
        params: params.iter().map(|&(k, v)| (k.into(), v.into())).collect(),
        nodes: vec![NodeRecord { name: "n0".into(), capacity, mechanisms: MechanismKind::ALL.to_vec(), notes: vec![] }],
        epoch_unix_us: 0,
    };
    let mut m = Manager::open(dir, config, &pliant_plugins::registry()).unwrap().0;
    let clock = Arc::new(AtomicU64::new(0));
    let read = Arc::clone(&clock);
    m.set_clock(Box::new(move || read.load(Ordering::SeqCst)));
    (m, clock)
}

/// Steps `m` at `now` with an exit 0 of each task of `running` (the tasks
/// and when each ends) that ends then, as its agent would report it; those
/// leave `running`.
pub fn exit_due(m: &mut Manager, running: &mut Vec<(Micros, TaskRef)>, now: Micros) {
    let (ended, still): (Vec<_>, Vec<_>) = running.drain(..).partition(|&(end, _)| end == now);
    *running = still;
    let reports = ended
        .into_iter()
        .map(|(_, task)| (0, AgentReport::Exited { task, code: Some(0), signal: None, stderr_tail: String::new() }))
        .collect();
    m.advance(reports).unwrap();
}

/// A job the test submits at `at`, each of whose tasks works `work` once
/// launched.
pub struct Arrival {
    /// When it is submitted (core time).
    pub at: Micros,
    /// What is submitted.
    pub request: SubmitRequest,
    /// How long each of its tasks runs.
    pub work: Micros,
}

/// Plays the agent of `m` on `clock`: submits each of `arrivals` (in
/// order of `at`) at its time, runs each launched task for its job's work
/// and reports its exit 0 then, and steps the manager at each submission,
/// exit and deadline it names, up to `end`. Returns the instant of the last
/// step.
pub fn play(m: &mut Manager, clock: &AtomicU64, arrivals: Vec<Arrival>, end: Micros) -> Micros {
    let mut work: Vec<Micros> = Vec::with_capacity(arrivals.len());
    let mut pending = arrivals.into_iter().peekable();
    let mut running: Vec<(Micros, TaskRef)> = Vec::new();
    loop {
        let now = clock.load(Ordering::SeqCst);
        for op in m.take_ops(0) {
            if let AgentOp::Launch { task, .. } = op {
                running.push((now + work[task.job.0 as usize], task));
            }
        }
        let exit = running.iter().map(|&(end, _)| end).min();
        let submission = pending.peek().map(|a| a.at);
        let Some(next) = [exit, submission, m.next_deadline()].into_iter().flatten().min().filter(|&t| t <= end) else {
            return now;
        };
        clock.store(next, Ordering::SeqCst);
        while let Some(a) = pending.next_if(|a| a.at == next) {
            work.push(a.work);
            m.submit(a.request).unwrap_or_else(|e| panic!("submitting job {}: {e:?}", work.len() - 1));
        }
        exit_due(m, &mut running, next);
    }
}
