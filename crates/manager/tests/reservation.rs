//! A DAG job submitted with phases in the API body, under `ssr` and
//! `priority`, with reports fed by hand (no node needed). One node of two
//! slots ⟨1 CPU, 256 MB⟩; H (priority 9): phase 0 of two tasks, phase 1 of
//! two `local` tasks after it; L (priority 0): one task.

use pliant_core::model::{JobId, TaskRef};
use pliant_core::MechanismKind;
use pliant_core::Resources;
use pliant_live::machine::unix_us;
use pliant_live::protocol::{AgentOp, AgentReport};
use pliant_live::scratch::ScratchDir;
use pliant_live::wire::NodeRecord;
use pliant_manager::manager::{ClusterConfig, Manager};
use pliant_manager::submit::SubmitRequest;
use serde_json::json;

fn manager(policy: &str, dir: &ScratchDir) -> Manager {
    let config = ClusterConfig {
        policy: policy.into(),
        params: vec![],
        nodes: vec![NodeRecord {
            name: "n0".into(),
            capacity: Resources::new(2000, 512),
            mechanisms: MechanismKind::ALL.to_vec(),
            notes: vec![],
        }],
        epoch_unix_us: unix_us(),
    };
    Manager::open(dir.path(), config, &pliant_plugins::registry()).unwrap().0
}

fn launched(ops: &[AgentOp]) -> Vec<TaskRef> {
    ops.iter()
        .filter_map(|op| match op {
            AgentOp::Launch { task, .. } => Some(*task),
            _ => None,
        })
        .collect()
}

fn done(job: u32, task: u32) -> (u32, AgentReport) {
    let task = TaskRef { job: JobId(job), task };
    (0, AgentReport::Exited { task, code: Some(0), signal: None, stderr_tail: String::new() })
}

/// H's task 0 ends: under ssr its slot stays H's and L waits; when task 1
/// ends, H's phase 1 starts on both slots. Under priority L takes the slot.
fn run(policy: &str) -> (Vec<TaskRef>, Vec<TaskRef>) {
    let dir = ScratchDir::new(&format!("pliant-manager-ssr-{policy}")).unwrap();
    let mut m = manager(policy, &dir);
    let body = |v| serde_json::from_value::<SubmitRequest>(v).unwrap();
    let h = m
        .submit(body(json!({"priority": 9, "mem_mb": 256, "command": ["sh"],
            "phases": [{"tasks": 2}, {"tasks": 2, "after": [0], "local": true}]})))
        .unwrap();
    assert_eq!(launched(&m.take_ops(0)).len(), 2);
    let l = m.submit(body(json!({"priority": 0, "mem_mb": 256, "command": ["sh"]}))).unwrap();
    assert_eq!((h, l), (0, 1));
    m.advance(vec![done(0, 0)]).unwrap();
    let after_first = launched(&m.take_ops(0));
    m.advance(vec![done(0, 1)]).unwrap();
    (after_first, launched(&m.take_ops(0)))
}

#[test]
fn ssr_keeps_a_phase_slots_across_the_barrier_while_a_lower_job_waits() {
    let (first, second) = run("ssr");
    assert!(first.is_empty(), "{first:?}");
    let h = |task| TaskRef { job: JobId(0), task };
    assert_eq!(second, vec![h(2), h(3)]);
}

#[test]
fn priority_gives_the_slot_to_the_lower_job() {
    let (first, second) = run("priority");
    assert_eq!(first, vec![TaskRef { job: JobId(1), task: 0 }]);
    assert_eq!(second, vec![TaskRef { job: JobId(0), task: 2 }]);
}
