//! A manager in the test's own process, on one node that can carry out
//! every mechanism, whose clock the test sets: no agent, no root, and the
//! journal it writes is the one a live cluster writes.

use pliant_core::model::TaskRef;
use pliant_core::{MechanismKind, Micros, Resources};
use pliant_live::protocol::AgentReport;
use pliant_live::wire::NodeRecord;
use pliant_manager::manager::{ClusterConfig, Manager};
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
