//! Killing a victim: its resources free at once, its progress is lost and it
//! goes back to the front of its job's pending tasks (YARN's capacity
//! scheduler, BIG-C's baseline; the checkpoint paper's "kill").

use pliant_core::action::Action;
use pliant_core::books::View;
use pliant_core::model::TaskRef;
use pliant_core::policy::steps::{Mechanism, Preempted, Take};
use pliant_core::Micros;

/// Kills every victim.
#[derive(Debug, Clone)]
pub(crate) struct Kill {
    /// Launches of a coupled task after which a kill fails its job.
    pub max_attempts: u32,
}

/// Kills `task` and requeues it; whether its job has used up its attempts.
pub(crate) fn kill(view: &mut View, task: TaskRef, max_attempts: u32, out: &mut Vec<Action>) -> bool {
    let t = view.task(task);
    // A preempted MapReduce attempt is "killed", not "failed" (YARN's PREEMPTED exit
    // status): only coupled (Spark) tasks use up attempts by being preempted, as the
    // failed Spark jobs of BIG-C §5.2 did.
    let (attempts, phase) = (t.attempts, t.phase);
    let job = view.job_mut(task.job.0 as usize);
    job.kills += 1;
    let exhausted = attempts >= max_attempts && job.phases[phase as usize].coupled;
    view.requeue(task);
    out.push(Action::Kill { task });
    exhausted
}

impl Mechanism for Kill {
    fn clone_box(&self) -> Box<dyn Mechanism> {
        Box::new(self.clone())
    }

    fn preempt(&mut self, view: &mut View, _now: Micros, take: Take, out: &mut Vec<Action>) -> Preempted {
        Preempted::Killed { exhausted: kill(view, take.task, self.max_attempts, out) }
    }

    // A killed task is not resumed: only the books' checks answer.
    crate::bigc::container_reports!();
}
