//! DSS's quiet nodes: under DSS's heartbeats a node does not heartbeat every
//! period. After a heartbeat it heartbeats again only while it holds a
//! container placed but not launched yet, or (with node reservations) while
//! it is not reserved and the head of the job queue is one it has not seen
//! at a heartbeat yet; otherwise it goes quiet until a container on it ends,
//! a job arrives or an ApplicationMaster starts (these two wake every node).
//! So a reserved node that cannot fit its job tries again (its job's next
//! task, or a backfill into its gap) only when one of these happens
//! (DSS, the YARN-ME paper's simulator: its node managers' heartbeats).

use pliant_core::Micros;
use std::collections::BTreeSet;

/// Which nodes heartbeat at the next node heartbeat.
#[derive(Debug, Clone)]
pub(crate) struct QuietNodes {
    /// Per node, it heartbeats at the next node heartbeat.
    awake: Vec<bool>,
    /// Per node, the queue head it saw at its last heartbeat while unreserved
    /// (cleared when it places a container or is reserved).
    head_seen: Vec<Option<u32>>,
    /// Per node, until when a container placed on it is not launched yet.
    unlaunched_until: Vec<Micros>,
    /// When ApplicationMasters start (each wakes every node).
    am_starts: BTreeSet<Micros>,
}

impl QuietNodes {
    /// `nodes` nodes, all heartbeating (DSS starts every node's heartbeat).
    pub fn new(nodes: usize) -> Self {
        QuietNodes {
            awake: vec![true; nodes],
            head_seen: vec![None; nodes],
            unlaunched_until: vec![0; nodes],
            am_starts: BTreeSet::new(),
        }
    }

    /// Whether node `n` heartbeats at the node heartbeat `now` (ApplicationMasters
    /// started by then have woken it).
    pub fn heartbeats(&mut self, n: usize, now: Micros) -> bool {
        if self.am_starts.first().is_some_and(|&at| at <= now) {
            self.am_starts.retain(|&at| at > now);
            self.wake_all();
        }
        self.awake[n]
    }

    /// Whether some node heartbeats at the next node heartbeat.
    pub fn any_awake(&self) -> bool {
        self.awake.contains(&true)
    }

    /// A container on node `n` ended.
    pub fn wake(&mut self, n: usize) {
        if let Some(a) = self.awake.get_mut(n) {
            *a = true;
        }
    }

    /// A job arrived.
    pub fn wake_all(&mut self) {
        self.awake.fill(true);
    }

    /// A container was placed on node `n`, launched at `launch`; an
    /// ApplicationMaster placed there starts at `am_start`.
    pub fn placed(&mut self, n: usize, launch: Micros, am_start: Option<Micros>) {
        self.unlaunched_until[n] = self.unlaunched_until[n].max(launch);
        self.head_seen[n] = None;
        if let Some(at) = am_start {
            self.am_starts.insert(at);
        }
    }

    /// After node `n`'s heartbeat at `now`: whether it heartbeats at the next
    /// one, from the queue's head (`None`: no job waits) and its reservation.
    pub fn after_heartbeat(&mut self, n: usize, now: Micros, head: Option<u32>, reserved: bool, reservations: bool) {
        let Some(head) = head else {
            self.head_seen[n] = None;
            self.awake[n] = false;
            return;
        };
        if self.unlaunched_until[n] > now {
            self.head_seen[n] = None;
            self.awake[n] = true;
            return;
        }
        let mut awake = false;
        if reservations {
            if reserved {
                self.head_seen[n] = None;
            } else if self.head_seen[n] != Some(head) {
                self.head_seen[n] = Some(head);
                awake = true;
            }
        }
        self.awake[n] = awake;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::SECOND;

    #[test]
    fn a_reserved_node_sleeps_until_woken() {
        let mut q = QuietNodes::new(2);
        assert!(q.heartbeats(0, 0));
        // Placed at 0, launched at 2 s: awake at 1 s and 2 s.
        q.placed(0, 2 * SECOND, None);
        q.after_heartbeat(0, 0, Some(7), false, true);
        assert!(q.heartbeats(0, SECOND));
        q.after_heartbeat(0, SECOND, Some(7), false, true);
        assert!(q.heartbeats(0, 2 * SECOND));
        // Unreserved: one more heartbeat for a head it has not seen, then quiet.
        q.after_heartbeat(0, 2 * SECOND, Some(7), false, true);
        assert!(q.heartbeats(0, 3 * SECOND));
        q.after_heartbeat(0, 3 * SECOND, Some(7), false, true);
        assert!(!q.heartbeats(0, 4 * SECOND));
        // Reserved: quiet at once, until a container on it ends.
        q.after_heartbeat(1, 0, Some(7), true, true);
        assert!(!q.heartbeats(1, SECOND));
        q.wake(1);
        assert!(q.heartbeats(1, SECOND));
        // An ApplicationMaster's start wakes every node.
        q.after_heartbeat(1, SECOND, Some(7), true, true);
        q.placed(0, 6 * SECOND, Some(5 * SECOND));
        assert!(!q.heartbeats(1, 4 * SECOND));
        assert!(q.heartbeats(1, 5 * SECOND));
        // No job waits: every node goes quiet.
        q.after_heartbeat(1, 5 * SECOND, None, false, true);
        assert!(!q.heartbeats(1, 6 * SECOND));
    }
}
