//! The timeline generator's snapshot of a job (YARN-ME §3.2, taken by
//! `node_pass.rs` every heartbeat), read fast: what it may skip is
//! remembered per job between snapshots, so a snapshot reads each job's live
//! tasks and its runs of waiting tasks rather than every task it has.

use super::state::{JobState, TaskRuntime};
use crate::{Micros, Resources};

/// Whether every task of a job carries the same estimate.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Estimates {
    /// Not looked at yet.
    Unknown,
    /// All the same (`None`'s stand-in, 0, included).
    Same(Micros),
    /// Some differ.
    Mixed,
}

/// Per job: where its live tasks begin and whether its estimates differ.
#[derive(Debug, Clone, Default)]
pub(crate) struct SnapshotCache {
    /// Every task before this index is finished or failed (for good).
    live_from: Vec<u32>,
    estimates: Vec<Estimates>,
}

impl SnapshotCache {
    fn grow(&mut self, job: usize) {
        if self.live_from.len() <= job {
            self.live_from.resize(job + 1, 0);
            self.estimates.resize(job + 1, Estimates::Unknown);
        }
    }

    /// The tasks of job `ji` that hold resources, in task order: it counts
    /// them (`running`) and skips the finished ones before the first live task.
    pub fn holders<'a>(&mut self, ji: usize, j: &'a JobState) -> impl Iterator<Item = &'a TaskRuntime> + 'a {
        self.grow(ji);
        let from = &mut self.live_from[ji];
        while j.tasks.get(*from as usize).is_some_and(|t| t.state.is_terminal()) {
            *from += 1;
        }
        j.tasks[*from as usize..].iter().filter(|t| t.state.holds_resources()).take(j.running as usize)
    }

    /// Job `ji`'s waiting tasks in order, as runs of equal ones: request,
    /// estimated run time (0 if none) and how many.
    pub fn waiting_runs(&mut self, ji: usize, j: &JobState) -> Vec<(Resources, Micros, u32)> {
        self.grow(ji);
        if self.estimates[ji] == Estimates::Unknown {
            let first = j.tasks.first().map_or(0, |t| t.estimate.unwrap_or(0));
            let same = j.tasks.iter().all(|t| t.estimate.unwrap_or(0) == first);
            self.estimates[ji] = if same { Estimates::Same(first) } else { Estimates::Mixed };
        }
        if let Estimates::Same(estimate) = self.estimates[ji] {
            return j.pending.runs().map(|(request, n)| (request, estimate, n)).collect();
        }
        let mut runs: Vec<(Resources, Micros, u32)> = Vec::new();
        for ti in j.pending.iter() {
            let t = &j.tasks[ti as usize];
            let task = (t.request, t.estimate.unwrap_or(0));
            match runs.last_mut() {
                Some(run) if (run.0, run.1) == task => run.2 += 1,
                _ => runs.push((task.0, task.1, 1)),
            }
        }
        runs
    }
}
