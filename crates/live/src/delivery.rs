//! How operations reach the agents so that no task ever runs twice.
//!
//! - **Each batch once, acknowledged.** A heartbeat's answer is a numbered
//!   batch; the agent's next heartbeat says the last batch it carried out.
//!   A batch whose answer was lost (the agent timed out, or died with the
//!   request in flight) is sent again, before anything newer, instead of
//!   being lost with its kills and launches.
//! - **No launch beside a run that may still be alive.** A kill sent to node
//!   X holds back every launch of that task on another node until X has
//!   acknowledged the kill (or been declared lost, by when its agent fenced
//!   itself: `crate::fence`). After a manager restart every node may
//!   hold runs the journal has moved on from (the old manager's orders died
//!   with it), so launches on another node wait until each node has
//!   acknowledged its takeover and sweep. Kubernetes likewise starts no second
//!   copy of a pod until the first is known gone.
//!
//! A held launch keeps the later operations of its own task behind it (the
//! agent carries out a task's operations in order); other tasks' go on.

use crate::protocol::AgentOp;
use pliant_core::model::TaskRef;
use pliant_core::MechanismKind;
use std::collections::BTreeSet;

/// Runs that may still be alive on one node although the records have moved
/// them on: a kill not yet acknowledged, or, after a restart, anything.
#[derive(Debug, Default, Clone)]
struct Hold {
    every: bool,
    tasks: BTreeSet<TaskRef>,
}

/// A batch sent and not yet acknowledged.
#[derive(Debug, Clone)]
struct Batch {
    id: u64,
    ops: Vec<AgentOp>,
}

/// Per node: operations waiting, the batch in flight, and runs that may be alive.
#[derive(Debug)]
pub struct Delivery {
    outbox: Vec<Vec<AgentOp>>,
    in_flight: Vec<Option<Batch>>,
    holds: Vec<Hold>,
    next_id: u64,
}

impl Delivery {
    /// For `nodes` nodes; batch numbers start at `first_id` (a restarted
    /// manager starts past its predecessor's, e.g. at the wall clock in µs,
    /// so that an agent's acknowledgement of an old batch matches none).
    pub fn new(nodes: usize, first_id: u64) -> Delivery {
        Delivery {
            outbox: vec![Vec::new(); nodes],
            in_flight: vec![None; nodes],
            holds: vec![Hold::default(); nodes],
            next_id: first_id,
        }
    }

    /// Queues `op` for `node`. A kill holds back the task's launches elsewhere until acknowledged.
    pub fn push(&mut self, node: usize, op: AgentOp) {
        if let AgentOp::Preempt { task, mechanism: MechanismKind::Kill, .. } = op {
            self.holds[node].tasks.insert(task);
        }
        self.outbox[node].push(op);
    }

    /// After a restart: any node may run anything until it has acknowledged its sweep.
    pub fn hold_every_node(&mut self) {
        for hold in &mut self.holds {
            hold.every = true;
        }
    }

    /// Node `node` was declared lost: what it was sent or not is moot, and
    /// its agent has stopped its tasks by now (fencing).
    pub fn node_lost(&mut self, node: usize) {
        self.outbox[node].clear();
        self.in_flight[node] = None;
        self.holds[node] = Hold::default();
    }

    /// A new agent registered as `node`: the batch in flight is void (what
    /// the manager still wants there is sent afresh, from its records).
    /// Returns the operations not sent yet, taken out.
    pub fn reregistered(&mut self, node: usize) -> Vec<AgentOp> {
        self.in_flight[node] = None;
        std::mem::take(&mut self.outbox[node])
    }

    /// Appends `ops` to what waits for `node`.
    pub fn extend(&mut self, node: usize, ops: Vec<AgentOp>) {
        for op in ops {
            self.push(node, op);
        }
    }

    /// `node`'s agent carried out batch `acked` last: the batch in flight is
    /// done if that is it, else (its answer never arrived) it goes again, first.
    pub fn acknowledge(&mut self, node: usize, acked: Option<u64>) {
        if let Some(batch) = self.in_flight[node].take() {
            if acked == Some(batch.id) {
                self.acknowledged(node, &batch.ops);
            } else {
                let later = std::mem::replace(&mut self.outbox[node], batch.ops);
                self.outbox[node].extend(later);
            }
        }
    }

    /// True when a launch of `task` on `node` has not been carried out yet
    /// (after [`Delivery::acknowledge`]): what the agent says of the task
    /// until then is about an earlier run.
    pub fn launch_pending(&self, node: usize, task: TaskRef) -> bool {
        let queued = |ops: &[AgentOp]| ops.iter().any(|op| matches!(op, AgentOp::Launch { task: t, .. } if *t == task));
        queued(&self.outbox[node]) || self.in_flight[node].as_ref().is_some_and(|b| queued(&b.ops))
    }

    /// The next batch for `node` (after [`Delivery::acknowledge`]): what may
    /// go now. Returns its number and its operations.
    pub fn send(&mut self, node: usize) -> (u64, Vec<AgentOp>) {
        let ops = self.ready(node);
        let id = self.next_id;
        self.next_id += 1;
        if !ops.is_empty() {
            self.in_flight[node] = Some(Batch { id, ops: ops.clone() });
        }
        (id, ops)
    }

    /// The operations that may go to `node` now, taken out and counted as
    /// carried out (for a channel that loses nothing: `pliant local`, tests).
    pub fn take(&mut self, node: usize) -> Vec<AgentOp> {
        let ops = self.ready(node);
        self.acknowledged(node, &ops);
        ops
    }

    /// Takes out of `node`'s outbox every operation that may go now: all but
    /// launches of a task that may still run on another node, and what
    /// follows them for the same task.
    fn ready(&mut self, node: usize) -> Vec<AgentOp> {
        let mut held: BTreeSet<TaskRef> = BTreeSet::new();
        let (mut ready, mut waiting) = (Vec::new(), Vec::new());
        for op in std::mem::take(&mut self.outbox[node]) {
            let task = op.task();
            let blocked = match (&op, task) {
                (_, Some(t)) if held.contains(&t) => true,
                (AgentOp::Launch { .. }, Some(t)) => self.alive_elsewhere(node, t),
                _ => false,
            };
            if blocked {
                held.extend(task);
                waiting.push(op);
            } else {
                ready.push(op);
            }
        }
        self.outbox[node] = waiting;
        ready
    }

    /// True when `task` may still run on a node other than `node`.
    fn alive_elsewhere(&self, node: usize, task: TaskRef) -> bool {
        self.holds.iter().enumerate().any(|(n, h)| n != node && (h.every || h.tasks.contains(&task)))
    }

    /// `node` carried out `ops`: the runs they stop are gone.
    fn acknowledged(&mut self, node: usize, ops: &[AgentOp]) {
        let hold = &mut self.holds[node];
        for op in ops {
            match op {
                AgentOp::Sweep => *hold = Hold::default(),
                AgentOp::Preempt { task, mechanism: MechanismKind::Kill, .. } | AgentOp::Stop { task } => {
                    hold.tasks.remove(task);
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::model::JobId;
    use pliant_core::Resources;
    use std::path::PathBuf;

    fn task(t: u32) -> TaskRef {
        TaskRef { job: JobId(0), task: t }
    }

    fn launch(t: u32) -> AgentOp {
        AgentOp::Launch {
            task: task(t),
            argv: vec!["true".into()],
            resources: Resources::new(1000, 64),
            log_dir: PathBuf::from("/l"),
            checkpoint_dir: PathBuf::from("/c"),
            restore: false,
            uid: None,
        }
    }

    /// A heartbeat of `node`'s agent that carried out batch `acked` last.
    fn beat(d: &mut Delivery, node: usize, acked: Option<u64>) -> (u64, Vec<AgentOp>) {
        d.acknowledge(node, acked);
        d.send(node)
    }

    fn kill(t: u32) -> AgentOp {
        AgentOp::Preempt { task: task(t), mechanism: MechanismKind::Kill, limits: Resources::ZERO }
    }

    /// A batch whose answer was lost goes again, before what came since;
    /// once acknowledged it is not sent again.
    #[test]
    fn a_batch_not_acknowledged_goes_again_first() {
        let mut d = Delivery::new(1, 100);
        d.push(0, launch(0));
        let (first, ops) = beat(&mut d, 0, None);
        assert_eq!((first, ops), (100, vec![launch(0)]));
        d.push(0, launch(1));
        // The agent never got batch 100: it acknowledges nothing newer.
        let (second, ops) = beat(&mut d, 0, None);
        assert_eq!((second, ops), (101, vec![launch(0), launch(1)]));
        let (third, ops) = beat(&mut d, 0, Some(second));
        assert_eq!((third, ops), (102, vec![]));
    }

    /// A task killed on node 0 and launched on node 1 starts there only once
    /// node 0 has acknowledged the kill; a launch on node 0 itself goes at once
    /// (node 0 carries out the kill first), as do other tasks' operations.
    #[test]
    fn a_launch_waits_until_its_kill_elsewhere_is_acknowledged() {
        let mut d = Delivery::new(2, 1);
        d.push(0, kill(0));
        d.push(1, launch(0));
        d.push(1, AgentOp::Stop { task: task(0) });
        d.push(1, launch(1));
        assert_eq!(beat(&mut d, 1, None).1, vec![launch(1)], "task 0 may still run on node 0");
        let (kill_batch, ops) = beat(&mut d, 0, None);
        assert_eq!(ops, vec![kill(0)]);
        assert_eq!(
            beat(&mut d, 1, None).1,
            vec![launch(1)],
            "the kill is not acknowledged; node 1's unacknowledged batch goes again"
        );
        beat(&mut d, 0, Some(kill_batch));
        assert_eq!(beat(&mut d, 1, None).1, vec![launch(1), launch(0), AgentOp::Stop { task: task(0) }]);
        d.push(0, kill(2));
        d.push(0, launch(2));
        assert_eq!(d.take(0), vec![kill(2), launch(2)]);
    }

    /// After a restart, launches on a node wait until every other node has
    /// acknowledged its sweep, or was declared lost.
    #[test]
    fn after_a_restart_launches_wait_for_every_other_node_s_sweep() {
        let mut d = Delivery::new(3, 1);
        d.hold_every_node();
        for node in 0..3 {
            d.push(node, AgentOp::Sweep);
        }
        d.push(0, launch(0));
        assert_eq!(beat(&mut d, 0, None).1, vec![AgentOp::Sweep]);
        let (swept, _) = beat(&mut d, 1, None);
        beat(&mut d, 1, Some(swept));
        assert_eq!(beat(&mut d, 0, None).1, vec![AgentOp::Sweep], "node 2 has not swept");
        d.node_lost(2);
        assert_eq!(beat(&mut d, 0, None).1, vec![AgentOp::Sweep, launch(0)]);
    }
}
