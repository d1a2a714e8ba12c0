//! Locality, reservation and straggler copies in the simulator, by hand.
//! Three nodes of one slot. H (priority 9): phase 0 of tasks of 10 s and
//! 20 s, then a `local` phase 1 of two 10 s tasks. L (priority 0): tasks
//! of 25 s and 100 s. All submitted at 0: H's phase 0 takes nodes 0 and 1, L's task 0
//! node 2.

use pliant_core::model::JobClass;
use pliant_core::policy::Params;
use pliant_core::{Resources, SECOND};
use pliant_metrics::RunRecord;
use pliant_plugins::preset;
use pliant_sim::{simulate, SimOptions};
use pliant_workload::{Cluster, Job, Phase, Task, Workload};

const SLOT: Resources = Resources::cores_gb(1, 4);

fn task(secs: u64) -> Task {
    Task { request: SLOT, duration: secs * SECOND, estimate: None }
}

fn workload() -> Workload {
    let h = Job {
        name: "h".into(),
        submit: 0,
        class: JobClass::Short,
        priority: 9,
        phases: vec![
            Phase { deps: vec![], coupled: false, local: false, tasks: vec![task(10), task(20)], stages: vec![] },
            Phase { deps: vec![0], coupled: false, local: true, tasks: vec![task(10), task(10)], stages: vec![] },
        ],
        elastic: None,
    };
    let l = Job {
        name: "l".into(),
        submit: 0,
        class: JobClass::Long,
        priority: 0,
        phases: vec![Phase {
            deps: vec![],
            coupled: false,
            local: false,
            tasks: vec![task(25), task(100)],
            stages: vec![],
        }],
        elastic: None,
    };
    Workload { cluster: Cluster { am: None, nodes: vec![SLOT; 3] }, jobs: vec![h, l] }
}

fn run(policy: &str) -> RunRecord {
    let opts = SimOptions { slowdown: true, ..SimOptions::default() };
    simulate(&workload(), preset(policy, &Params::default()).unwrap(), &opts).unwrap()
}

fn jct(r: &RunRecord, job: usize) -> f64 {
    r.jobs[job].jct().unwrap() as f64 / SECOND as f64
}

/// priority: L's task 1 takes node 0 at 10 s (to 110 s). At 20 s phase 1
/// starts: one task on node 1 (local, ends 30); the other waits 3 s for node
/// 0 or 1, then takes the first free slot, node 2 at 25 s, where it runs 5x
/// slower (50 s): H ends at 75 s. Alone H takes 20 + 10 = 30 s: slowdown 2.5.
#[test]
fn priority_loses_the_slot_and_the_locality() {
    let r = run("priority");
    assert_eq!((jct(&r, 0), jct(&r, 1)), (75.0, 110.0));
    assert_eq!(r.jobs[0].alone, Some(30 * SECOND));
    assert_eq!(r.jobs[0].slowdown(), Some(2.5));
    assert_eq!(r.reserved_core_seconds, 0.0);
}

/// ssr: node 0 is reserved at 10 s; at 20 s phase 1 runs on nodes 0 and 1,
/// both local, ending at 30 s (slowdown 1); L's task 1 starts on node 2 when
/// its task 0 ends (25 s) and ends at 125 s. Node 0 was reserved and idle
/// for 10 s.
#[test]
fn ssr_keeps_the_slot_and_the_locality() {
    let r = run("ssr");
    assert_eq!((jct(&r, 0), jct(&r, 1)), (30.0, 125.0));
    assert_eq!(r.jobs[0].slowdown(), Some(1.0));
    assert_eq!(r.reserved_core_seconds, 10.0);
}

/// ssr-stragglers: at 10 s the 20 s task (1) gets a copy on node 0, which
/// runs as long as its sibling ⌈2/2⌉ = 1 place on (task 0: 10 s) and wins at
/// 20 s, as the original would: JCT 30 s; the reserved slot was never idle.
#[test]
fn a_copy_runs_on_the_reserved_slot() {
    let r = run("ssr-stragglers");
    assert_eq!(jct(&r, 0), 30.0);
    assert_eq!(r.reserved_core_seconds, 0.0);
}
