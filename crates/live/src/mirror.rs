//! What a live body (the manager, the Slurm controller) keeps of a task
//! beside the core's books of it: only what the core does not know — what
//! the task was given at its start, the limits its node holds it to, whether
//! it was asked to checkpoint, how and where it ended. Where it stands, on
//! which node and what memory it still owes back are read from the core
//! ([`pliant_core::Scheduler::task`]). Both bodies move it through the same
//! state machine: [`TaskMirror::carry_out`] for each node operation the core
//! decided, [`TaskMirror::hear`] for each thing its node (or Slurm) says
//! happened, which gives the observations the core is told, or none when
//! what was heard is stale.

use crate::dispatch::NodeOp;
use pliant_core::model::{TaskRef, TaskState};
use pliant_core::{MechanismKind, Observation, Resources, TaskBooks};
use serde::{Serialize, Serializer};

/// Where a task stands as a body shows it: the core's state, marked
/// `cancelled` for a task its job's cancellation ended (the core counts
/// that as failed). It serialises as the state's name, or `"cancelled"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    /// The core's lifecycle state.
    pub state: TaskState,
    /// Its job was cancelled before it ended (`state` is then `Failed`).
    pub cancelled: bool,
}

impl Status {
    /// A task its job's cancellation ended.
    pub const CANCELLED: Status = Status { state: TaskState::Failed, cancelled: true };

    /// The core's state, not cancelled.
    pub fn of(state: TaskState) -> Status {
        Status { state, cancelled: false }
    }
}

impl Serialize for Status {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.cancelled {
            s.serialize_str("cancelled")
        } else {
            self.state.serialize(s)
        }
    }
}

/// What a body heard of a task: from the agent of its node, or from Slurm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heard {
    /// It ended by itself: successfully (`ok`) or not.
    Exited {
        /// Exit code 0.
        ok: bool,
    },
    /// Its memory limit holds at the lower value: `mem_mb` is free.
    Reclaimed {
        /// MB given back.
        mem_mb: u64,
    },
    /// Shrunk, it started swapping and was frozen.
    Swapping,
    /// Resumed or restored, it runs again with its memory.
    Resumed,
    /// Asked to checkpoint, it saved its state and exited.
    Checkpointed,
    /// Its node could not keep it.
    Lost,
}

/// How and where a task ended, which the core does not keep: it drops a
/// finished job's books, and counts a cancelled task as failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    /// Finished, failed or cancelled.
    pub status: Status,
    /// The node it was on when it ended (`None` if it was waiting).
    pub node: Option<u32>,
}

/// What a body keeps of a task beside the core's books of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TaskMirror {
    /// What it was given at its last start; zero while it is on no node.
    pub allocated: Resources,
    /// The limits in force on its node (lower than its allocation while preempted).
    pub limits: Resources,
    /// True while it is asked to checkpoint and its state is not reported saved.
    pub checkpointing: bool,
    /// How and where it ended, once it has.
    pub ended: Option<Ended>,
}

/// A task as a body shows it (`/jobs`, `pliant slurm --show`) and acts on
/// it: its [`TaskMirror`] read together with the core's books.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Standing {
    /// Where it stands.
    pub state: Status,
    /// The node it is on while it holds resources, or the one it was on
    /// when it ended (`None` while it waits).
    pub node: Option<u32>,
    /// What it was given at its last start (zero until it starts).
    pub allocated: Resources,
    /// The limits in force on its node.
    pub limits: Resources,
    /// Memory (MB) its node has yet to report reclaimed.
    pub owed_mb: u64,
    /// True while it is asked to checkpoint and its state is not reported saved.
    pub checkpointing: bool,
}

impl Standing {
    /// True while it holds resources on a node.
    pub fn holds_resources(&self) -> bool {
        self.state.state.holds_resources()
    }

    /// True once it has ended for good.
    pub fn is_terminal(&self) -> bool {
        self.state.state.is_terminal()
    }
}

/// A body's record of a task with where the task stands, serialised as
/// one object (the record's fields and the [`Standing`]'s).
#[derive(Debug, Clone, Serialize)]
pub struct Shown<T> {
    /// Where it stands.
    #[serde(flatten)]
    pub standing: Standing,
    /// The body's own record of it.
    #[serde(flatten)]
    pub record: T,
}

impl TaskMirror {
    /// The task as it stands, given the core's books of it (`None`: the
    /// core was never given it, so it waits).
    pub fn standing(&self, books: Option<TaskBooks>) -> Standing {
        let (state, owed_mb) = match (self.ended, books) {
            (Some(ended), _) => (ended.status, 0),
            (None, Some(b)) => (Status::of(b.state), b.reclaiming_mb),
            (None, None) => (Status::of(TaskState::Pending), 0),
        };
        Standing {
            state,
            node: self.node(books),
            allocated: self.allocated,
            limits: self.limits,
            owed_mb,
            checkpointing: self.checkpointing,
        }
    }

    /// The node the body has it on (the core's), until it ends: also
    /// once the core has failed its job, when the body still has to stop it.
    pub fn placed_on(&self, books: Option<TaskBooks>) -> Option<u32> {
        match self.ended {
            Some(_) => None,
            None if self.allocated.is_zero() => None,
            None => books.and_then(|b| b.node).map(|n| n.0),
        }
    }

    /// The node it is on, or was on when it ended.
    fn node(&self, books: Option<TaskBooks>) -> Option<u32> {
        self.ended.map_or_else(|| self.placed_on(books), |ended| ended.node)
    }

    /// Started with `resources` (the core books where): afresh or restored.
    pub fn start(&mut self, resources: Resources) {
        *self = TaskMirror { allocated: resources, limits: resources, checkpointing: false, ended: None };
    }

    /// Back to waiting, on no node.
    pub fn requeue(&mut self) {
        *self = TaskMirror::default();
    }

    /// Ended as `status` (finished, failed or cancelled), given the core's
    /// books of it: it keeps the node it was on.
    pub fn end(&mut self, status: Status, books: Option<TaskBooks>) {
        self.ended = Some(Ended { status, node: self.node(books) });
        self.checkpointing = false;
    }

    /// Mirrors one node operation the core decided (a launch, restore,
    /// preemption or resumption; the others leave the task as it is).
    pub fn carry_out(&mut self, op: &NodeOp) {
        match *op {
            NodeOp::Launch { resources, .. } | NodeOp::Restore { resources, .. } => self.start(resources),
            NodeOp::Preempt { mechanism, limits, .. } => self.preempt(mechanism, limits),
            NodeOp::Resume { resources, .. } => self.limits = resources,
            NodeOp::StopJob { .. } | NodeOp::KeepSlot { .. } => {}
        }
    }

    fn preempt(&mut self, mechanism: MechanismKind, limits: Resources) {
        match mechanism {
            MechanismKind::Kill => self.requeue(),
            // Frozen in place: its CPU is free, its memory stays.
            MechanismKind::Suspend => self.limits.cpu_milli = 0,
            // It keeps its allocation until its dump is reported written.
            MechanismKind::Checkpoint => self.checkpointing = true,
            // What the limit drops by is owed back: the core books that.
            MechanismKind::Immediate | MechanismKind::Graceful => self.limits = self.limits.min(&limits),
        }
    }

    /// Takes in what was heard of `task` (from node `from`, when it came
    /// from a node's agent), given the core's books of it before, and
    /// returns what the core is to observe of it, in order; `None` when it
    /// is stale: about a task that has ended or moved on, or from a node it
    /// is not on.
    pub fn hear(
        &mut self,
        books: Option<TaskBooks>,
        task: TaskRef,
        heard: Heard,
        from: Option<u32>,
    ) -> Option<Vec<Observation>> {
        let b = books?;
        if self.ended.is_some() || b.state.is_terminal() || from.is_some_and(|n| self.placed_on(books) != Some(n)) {
            return None;
        }
        let observed = match heard {
            Heard::Exited { ok: true } => match b.state {
                TaskState::Running | TaskState::Shrunk => {
                    self.end(Status::of(TaskState::Finished), books);
                    vec![Observation::TaskFinished(task)]
                }
                // Given its memory back, it ran again before that was reported.
                TaskState::Restoring => {
                    self.end(Status::of(TaskState::Finished), books);
                    vec![Observation::Resumed(task), Observation::TaskFinished(task)]
                }
                // It finished while it should have been frozen: run it again.
                TaskState::Suspended => {
                    self.requeue();
                    vec![Observation::TaskLost(task)]
                }
                _ => return None,
            },
            Heard::Exited { ok: false } => {
                self.end(Status::of(TaskState::Failed), books);
                vec![Observation::JobAborted(task.job)]
            }
            Heard::Reclaimed { mem_mb } => {
                let mem_mb = mem_mb.min(b.reclaiming_mb);
                if !matches!(b.state, TaskState::Suspended | TaskState::Shrunk) || mem_mb == 0 {
                    return None;
                }
                vec![Observation::MemoryReclaimed { task, mem_mb }]
            }
            Heard::Swapping if b.state == TaskState::Shrunk => vec![Observation::Swapping(task)],
            Heard::Resumed if b.state == TaskState::Restoring => vec![Observation::Resumed(task)],
            Heard::Checkpointed if self.checkpointing => {
                self.requeue();
                vec![Observation::Checkpointed(task)]
            }
            Heard::Lost if b.state.holds_resources() => {
                self.requeue();
                vec![Observation::TaskLost(task)]
            }
            Heard::Swapping | Heard::Resumed | Heard::Checkpointed | Heard::Lost => return None,
        };
        Some(observed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::model::{JobClass, JobId, JobRequest, NodeId, PhaseRequest, TaskRequest};
    use pliant_core::policy::Params;
    use pliant_core::{Action, Scheduler};
    use pliant_plugins::preset;

    const TASK: TaskRef = TaskRef { job: JobId(0), task: 0 };
    const NODE: Resources = Resources::new(2000, 1000);
    /// The task followed; the short job that preempts it asks the rest of
    /// the memory and all the CPU.
    const FULL: Resources = Resources::new(2000, 600);
    const SHORT: Resources = Resources::new(2000, 400);

    /// A task as a body keeps it: the mirror beside the core that decides.
    struct Body {
        core: Scheduler,
        mirror: TaskMirror,
    }

    impl Body {
        /// Under `policy` (monitor every second, no delayed resumption), on
        /// `nodes` nodes of ⟨2 CPU, 1000 MB⟩, with job 0's task of ⟨2 CPU,
        /// 600 MB⟩ running on node `on`.
        fn running(policy: &str, nodes: usize, on: u32) -> Body {
            let mut params = Params::default();
            params.set("monitor_interval_s", "1").unwrap();
            params.set("delayed_resumption", "0").unwrap();
            let core = Scheduler::new(&vec![NODE; nodes], preset(policy, &params).unwrap()).unwrap();
            let mut body = Body { core, mirror: TaskMirror::default() };
            body.submit(0, JobClass::Long, FULL);
            body.core.observe(0, Observation::Started { task: TASK, node: NodeId(on) }).unwrap();
            body.mirror.start(FULL);
            body
        }

        /// Job `id` of one task asking `resources`; a short one has the higher priority.
        fn submit(&mut self, id: u32, class: JobClass, resources: Resources) {
            let tasks = vec![TaskRequest { resources, estimate: None }];
            let phase = PhaseRequest { deps: vec![], coupled: false, local: false, tasks };
            let priority = if class == JobClass::Short { 9 } else { 0 };
            let req = JobRequest { id: JobId(id), submit: 0, class, priority, phases: vec![phase], elastic: None };
            self.core.observe(0, Observation::JobSubmitted(req)).unwrap();
        }

        /// A short job comes and the monitor runs at `s` seconds; the
        /// mirror carries out the core's actions on the task; returns them.
        fn preempted(&mut self, s: u64) -> Vec<Action> {
            self.submit(1, JobClass::Short, SHORT);
            self.step(s)
        }

        /// A monitor run and a pass at `s` seconds, carried out.
        fn step(&mut self, s: u64) -> Vec<Action> {
            let mut out = Vec::new();
            self.core.monitor(s * pliant_core::SECOND, &mut out);
            self.core.schedule(s * pliant_core::SECOND, &mut out);
            let ours: Vec<Action> = out.into_iter().filter(|a| a.task() == Some(TASK)).collect();
            for a in &ours {
                self.mirror.carry_out(&crate::dispatch::node_op(a));
            }
            ours
        }

        /// Hears `heard` (from node `from`) and tells the core what it gives.
        fn hear(&mut self, heard: Heard, from: Option<u32>) -> Option<Vec<Observation>> {
            let observed = self.mirror.hear(self.core.task(TASK), TASK, heard, from)?;
            for o in &observed {
                self.core.observe(5 * pliant_core::SECOND, o.clone()).unwrap();
            }
            Some(observed)
        }

        fn standing(&self) -> Standing {
            self.mirror.standing(self.core.task(TASK))
        }
    }

    #[test]
    fn a_shrunk_task_owes_what_the_core_books_until_its_node_reports_it_reclaimed() {
        let mut b = Body::running("gp", 1, 0);
        let [Action::Graceful { to, .. }] = b.preempted(1)[..] else { panic!("one graceful step") };
        let s = b.standing();
        assert_eq!((s.state, s.limits, s.owed_mb), (Status::of(TaskState::Shrunk), FULL.min(&to), 600 - to.mem_mb));
        let heard = b.hear(Heard::Reclaimed { mem_mb: 5000 }, Some(0));
        assert_eq!(heard, Some(vec![Observation::MemoryReclaimed { task: TASK, mem_mb: 600 - to.mem_mb }]));
        assert_eq!(b.standing().owed_mb, 0);
        assert_eq!(b.hear(Heard::Reclaimed { mem_mb: 10 }, Some(0)), None, "nothing is owed any more");
    }

    #[test]
    fn what_is_heard_from_another_node_or_after_the_end_is_stale() {
        let mut b = Body::running("kill", 2, 1);
        assert_eq!(b.hear(Heard::Exited { ok: true }, Some(0)), None);
        assert_eq!(b.standing().state, Status::of(TaskState::Running));
        assert_eq!(b.hear(Heard::Exited { ok: true }, Some(1)), Some(vec![Observation::TaskFinished(TASK)]));
        assert_eq!(b.core.task(TASK).map(|t| t.node), Some(None), "the core dropped the finished job");
        assert_eq!(b.hear(Heard::Exited { ok: false }, None), None);
        let s = b.standing();
        assert_eq!((s.state, s.node), (Status::of(TaskState::Finished), Some(1)));
    }

    #[test]
    fn a_task_that_ends_while_its_memory_comes_back_has_resumed_then_finished() {
        let mut b = Body::running("ip", 1, 0);
        assert!(matches!(b.preempted(1)[..], [Action::Immediate { .. }]));
        assert_eq!(b.standing().state, Status::of(TaskState::Suspended));
        let owed = b.standing().owed_mb;
        b.hear(Heard::Reclaimed { mem_mb: owed }, Some(0)).unwrap();
        // The short job is gone: the task is offered its node back.
        b.core.observe(2 * pliant_core::SECOND, Observation::JobAborted(JobId(1))).unwrap();
        assert!(matches!(b.step(2)[..], [Action::Resume { .. }]));
        let s = b.standing();
        assert_eq!((s.state, s.limits, s.owed_mb), (Status::of(TaskState::Restoring), FULL, 0));
        let heard = b.hear(Heard::Exited { ok: true }, None);
        assert_eq!(heard, Some(vec![Observation::Resumed(TASK), Observation::TaskFinished(TASK)]));
    }

    #[test]
    fn a_task_that_exits_while_frozen_is_lost_and_waits_again() {
        let mut b = Body::running("suspend", 1, 0);
        assert!(matches!(b.preempted(1)[..], [Action::Suspend { .. }]));
        let s = b.standing();
        assert_eq!((s.state, s.limits), (Status::of(TaskState::Suspended), Resources::new(0, 600)));
        assert_eq!(b.hear(Heard::Exited { ok: true }, Some(0)), Some(vec![Observation::TaskLost(TASK)]));
        assert_eq!(b.mirror, TaskMirror::default());
        assert_eq!((b.standing().state, b.standing().node), (Status::of(TaskState::Pending), None));
    }

    #[test]
    fn only_a_task_asked_to_checkpoint_is_checkpointed() {
        let mut b = Body::running("gp", 1, 0);
        b.preempted(1);
        assert_eq!(b.hear(Heard::Checkpointed, Some(0)), None);
        let mut b = Body::running("checkpoint-nvm", 1, 0);
        assert!(matches!(b.preempted(1)[..], [Action::Checkpoint { .. }]));
        assert!(b.standing().checkpointing);
        assert_eq!(b.hear(Heard::Checkpointed, Some(0)), Some(vec![Observation::Checkpointed(TASK)]));
        let s = b.standing();
        assert_eq!((s.state, s.node, s.checkpointing), (Status::of(TaskState::Pending), None, false));
    }

    #[test]
    fn a_failed_job_keeps_the_node_its_task_was_on_and_a_cancelled_one_shows_so() {
        let mut b = Body::running("kill", 2, 1);
        b.core.observe(0, Observation::JobAborted(JobId(0))).unwrap();
        // The core no longer has it holding resources; the body still has it placed.
        assert_eq!(b.standing().node, Some(1));
        b.mirror.end(Status::CANCELLED, b.core.task(TASK));
        let s = b.standing();
        assert_eq!((s.node, serde_json::to_value(s.state).unwrap()), (Some(1), serde_json::json!("cancelled")));
        assert_eq!(serde_json::to_value(Status::of(TaskState::Shrunk)).unwrap(), "shrunk");
    }
}
