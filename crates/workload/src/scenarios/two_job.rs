//! `two-job`: the sensitivity experiment of the checkpoint paper (§3.3.3,
//! §4.2.2): on one machine, a low-priority job of one minute and 5 GB runs
//! for 30 s before an equal high-priority job arrives and preempts it. Fixed:
//! the seed and scale do not change it.

use crate::{Cluster, Job, Phase, Task, Workload};
use pliant_core::model::JobClass;
use pliant_core::{Resources, SECOND};

/// The machine: room for one of the two jobs at a time.
const NODE: Resources = Resources::new(4000, 8192);
/// Each job: one task of 5 GB running 60 s on the whole machine's CPU.
const TASK: Resources = Resources::new(4000, 5120);

fn job(name: &str, priority: u8, submit_s: u64) -> Job {
    let task = Task { request: TASK, duration: 60 * SECOND, estimate: Some(60 * SECOND) };
    Job {
        name: name.into(),
        submit: submit_s * SECOND,
        class: if priority >= 9 { JobClass::Short } else { JobClass::Long },
        priority,
        phases: vec![Phase::independent(vec![task])],
        elastic: None,
    }
}

/// The two jobs: low (priority 0) at 0 s, high (priority 9) at 30 s.
pub fn generate() -> Workload {
    Workload { cluster: Cluster { am: None, nodes: vec![NODE] }, jobs: vec![job("low", 0, 0), job("high", 9, 30)] }
}
