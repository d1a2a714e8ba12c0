//! A task started outside the core (a body taking over a job another
//! scheduler started, as `pliant slurm` does with a Slurm job that ran
//! before it was held): booked on its node as running, even beyond the
//! node's capacity; nothing more goes there until the node has room again.

mod common;

use pliant_core::model::{JobClass, JobId, JobRequest, NodeId, TaskRef, TaskRequest};
use pliant_core::policy::Params;
use pliant_core::{Action, CoreError, Observation, Resources, Scheduler};
use pliant_plugins::preset;

fn job(id: u32) -> JobRequest {
    common::one_phase_job(
        id,
        JobClass::Long,
        vec![TaskRequest { resources: Resources::new(1000, 100), estimate: None }],
    )
}

fn task(job: u32) -> TaskRef {
    TaskRef { job: JobId(job), task: 0 }
}

#[test]
fn tasks_started_outside_fill_their_node_beyond_its_capacity() {
    let mut s = Scheduler::new(&[Resources::new(2000, 1000)], preset("fifo", &Params::default()).unwrap()).unwrap();
    for id in 0..3 {
        s.observe(0, Observation::JobSubmitted(job(id))).unwrap();
        s.observe(0, Observation::Started { task: task(id), node: NodeId(0) }).unwrap();
    }
    // Started again, or on a node that does not exist: refused.
    let again = s.observe(0, Observation::Started { task: task(0), node: NodeId(0) });
    assert!(matches!(again, Err(CoreError::BadTask { .. })), "{again:?}");
    s.observe(0, Observation::JobSubmitted(job(3))).unwrap();
    let nowhere = s.observe(0, Observation::Started { task: task(3), node: NodeId(1) });
    assert_eq!(nowhere, Err(CoreError::UnknownNode(1)));
    let mut out = Vec::new();
    s.schedule(0, &mut out);
    assert!(out.is_empty(), "3 CPUs held on 2: nothing more fits: {out:?}");
    assert_eq!(s.node_allocations().next().map(|(_, held)| held.cpu_milli), Some(3000));
    s.observe(1, Observation::TaskFinished(task(0))).unwrap();
    s.schedule(1, &mut out);
    assert!(out.is_empty(), "2 CPUs held on 2: {out:?}");
    s.observe(2, Observation::TaskFinished(task(1))).unwrap();
    s.schedule(2, &mut out);
    assert!(matches!(out[..], [Action::Launch { task: t, node: NodeId(0), .. }] if t == task(3)), "{out:?}");
}
