//! Memory elasticity in live mode without a node (reports fed by hand): the
//! manager's core sizes an elastic task as the simulator's does, the launch
//! carries the chosen memory, a restart keeps it, and bad submissions change
//! nothing. One node of ⟨2 CPU, 1000 MB⟩; A asks 600 MB for an estimated
//! 100 s; B, elastic (penalty 1.5, at least 300 MB), asks 800 MB for 10 s.

use pliant_core::model::{JobId, TaskRef};
use pliant_core::Resources;
use pliant_live::machine::unix_us;
use pliant_live::protocol::{AgentOp, AgentReport};
use pliant_live::scratch::ScratchDir;
use pliant_live::wire::NodeRecord;
use pliant_manager::api::handle;
use pliant_manager::manager::{ClusterConfig, Manager};
use pliant_manager::submit::SubmitRequest;
use serde_json::{json, Value};
use std::sync::Mutex;

fn config(policy: &str) -> ClusterConfig {
    ClusterConfig {
        policy: policy.into(),
        params: vec![],
        nodes: vec![NodeRecord {
            name: "n0".into(),
            capacity: Resources::new(2000, 1000),
            mechanisms: vec![],
            notes: vec![],
        }],
        epoch_unix_us: unix_us(),
    }
}

fn submit(m: &mut Manager, body: Value) -> u32 {
    m.submit(serde_json::from_value::<SubmitRequest>(body).unwrap()).unwrap()
}

/// The launches in `ops`: task and memory given.
fn launches(ops: &[AgentOp]) -> Vec<(TaskRef, u64)> {
    ops.iter()
        .filter_map(|op| match op {
            AgentOp::Launch { task, resources, .. } => Some((*task, resources.mem_mb)),
            _ => None,
        })
        .collect()
}

fn b_task() -> TaskRef {
    TaskRef { job: JobId(1), task: 0 }
}

/// A then B; returns the manager and B's launches at submission.
fn a_then_b(policy: &str, dir: &ScratchDir) -> (Manager, Vec<(TaskRef, u64)>) {
    let (mut m, _) = Manager::open(dir.path(), config(policy), &pliant_plugins::registry()).unwrap();
    submit(&mut m, json!({"name": "a", "mem_mb": 600, "estimate_s": 100, "command": ["sh"]}));
    assert_eq!(launches(&m.take_ops(0)), [(TaskRef { job: JobId(0), task: 0 }, 600)]);
    let b = submit(
        &mut m,
        json!({"name": "b", "mem_mb": 800, "estimate_s": 10,
               "elastic": {"penalty": 1.5, "min_mem_mb": 300}, "command": ["sh"]}),
    );
    assert_eq!(b, 1);
    let ops = launches(&m.take_ops(0));
    (m, ops)
}

/// Under `elastic`, B does not fit (400 MB free) but runs under-sized: a step
/// profile costs the same at any size, so it gets its floor, 300 MB (above
/// 10 % of 800). Run 15 s from now, it still ends before its job would with
/// its full memory (after A's 100 s), so Algorithm 1 takes it. The view
/// shows the size, and a restarted manager has the agent adopt it at that size.
#[test]
fn elastic_starts_the_task_under_sized_and_a_restart_keeps_its_size() {
    let dir = ScratchDir::new("pliant-manager-elastic").unwrap();
    let (m, ops) = a_then_b("elastic", &dir);
    assert_eq!(ops, [(b_task(), 300)]);
    let task = m.standing(b_task()).unwrap();
    assert_eq!((task.allocated, task.limits), (Resources::new(1000, 300), Resources::new(1000, 300)));
    assert_eq!(m.allocations(), [Resources::new(2000, 900)]);
    drop(m);
    let (mut again, recovered) = Manager::open(dir.path(), config("elastic"), &pliant_plugins::registry()).unwrap();
    assert!(recovered);
    again.queue_recovery();
    let adopted: Vec<(TaskRef, u64)> = again
        .take_ops(0)
        .iter()
        .filter_map(|op| match op {
            AgentOp::Adopt { task, resources, .. } => Some((*task, resources.mem_mb)),
            _ => None,
        })
        .collect();
    assert_eq!(adopted, [(TaskRef { job: JobId(0), task: 0 }, 600), (b_task(), 300)]);
}

/// Under `yarn` the elastic metadata is ignored: B waits for A, then gets its 800 MB.
#[test]
fn yarn_makes_the_task_wait_for_its_full_memory() {
    let dir = ScratchDir::new("pliant-manager-yarn").unwrap();
    let (mut m, ops) = a_then_b("yarn", &dir);
    assert!(ops.is_empty(), "{ops:?}");
    let a_done = AgentReport::Exited {
        task: TaskRef { job: JobId(0), task: 0 },
        code: Some(0),
        signal: None,
        stderr_tail: String::new(),
    };
    m.advance(vec![(0, a_done)]).unwrap();
    assert_eq!(launches(&m.take_ops(0)), [(b_task(), 800)]);
    assert_eq!(m.standing(b_task()).unwrap().allocated, Resources::new(1000, 800));
}

/// Each bad submission is a 400 naming the problem, and neither the jobs nor
/// the journal change.
#[test]
fn bad_elastic_submissions_are_refused_and_change_nothing() {
    let dir = ScratchDir::new("pliant-manager-elastic-bad").unwrap();
    let (mut m, _) = Manager::open(dir.path(), config("elastic"), &pliant_plugins::registry()).unwrap();
    submit(&mut m, json!({"name": "a", "mem_mb": 600, "estimate_s": 100, "command": ["sh"]}));
    let m = Mutex::new(m);
    let state = |m: &Mutex<Manager>| {
        let m = m.lock().unwrap();
        let jobs: Vec<_> = m.jobs().iter().map(|j| m.show_job(j.id).unwrap()).collect();
        (serde_json::to_value(jobs).unwrap(), m.journal_steps().unwrap())
    };
    let before = state(&m);
    let elastic =
        |e: &str, estimate: &str| format!(r#"{{"mem_mb": 800, {estimate} "elastic": {e}, "command": ["sh"]}}"#);
    for (body, message) in [
        (elastic(r#"{"penalty": 0.8}"#, r#""estimate_s": 10,"#), "penalty 0.8 is below 1"),
        (elastic(r#"{"penalty": 1.5, "min_mem_mb": 900}"#, r#""estimate_s": 10,"#), "above the ideal memory 800 MB"),
        (elastic(r#"{"penalty": 1.5, "min_mem_mb": 0}"#, r#""estimate_s": 10,"#), "must be positive"),
        (elastic(r#"{"penalty": 1.5}"#, ""), "needs `estimate_s`"),
        (elastic(r#"{"penalty": "high"}"#, r#""estimate_s": 10,"#), "malformed job"),
        (elastic(r#"{"penalty": 1.5}"#, r#""estimate_s": -3,"#), "positive number of seconds"),
    ] {
        let (status, answer) = handle(&m, "POST", "/jobs", &body);
        assert_eq!(status, 400, "{body}: {answer}");
        let error = answer["error"].as_str().unwrap();
        assert!(error.contains(message), "{body}: {error}");
        assert_eq!(state(&m), before, "{body} changed the manager's state");
    }
}
