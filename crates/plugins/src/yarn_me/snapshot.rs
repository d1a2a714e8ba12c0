//! The timeline generator's snapshot (YARN-ME §3.2, taken by `node_pass.rs`
//! every heartbeat), taken fast: what it may skip is remembered between
//! snapshots. Each job's live tasks are read, not every task it has; waiting
//! tasks are read as runs; and the running tasks' order by estimated end is
//! the last snapshot's order, less the tasks that stopped, merged with the
//! few that started since (a full sort of ~1,500 tasks every heartbeat was
//! the generator's largest cost).

use super::timeline::RunningTask;
use pliant_core::books::{JobRuntime, JobStatus, TaskRuntime};
use pliant_core::{Micros, Resources};

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

/// A task as the last snapshots saw it running.
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    /// The snapshot that last saw it running.
    snapshot: u32,
    /// That snapshot saw it start running, or run on other terms.
    fresh: bool,
    started: Micros,
    node: u32,
    allocated: Resources,
    /// Its estimated end (not clamped to the snapshot's time).
    end: Micros,
}

/// The order the walk passes running tasks' ends in.
fn end_key(r: &RunningTask) -> (Micros, u32, u32, u64, u64) {
    (r.end, r.node, r.job, r.held.cpu_milli, r.held.mem_mb)
}

/// What one snapshot leaves for the next.
#[derive(Debug, Clone, Default)]
pub(crate) struct SnapshotCache {
    /// Per job, every task before this index is finished or failed (for good).
    live_from: Vec<u32>,
    estimates: Vec<Estimates>,
    /// Per job and task, how the last snapshots saw it.
    seen: Vec<Vec<Seen>>,
    /// Snapshots taken.
    taken: u32,
    /// The last snapshot's running tasks by unclamped end (then node, job,
    /// CPU, memory), with their task indices.
    by_end: Vec<(RunningTask, u32)>,
}

impl SnapshotCache {
    fn grow(&mut self, job: usize) {
        if self.live_from.len() <= job {
            self.live_from.resize(job + 1, 0);
            self.estimates.resize(job + 1, Estimates::Unknown);
            self.seen.resize(job + 1, Vec::new());
        }
    }

    /// The first task of job `ji` that may hold resources: the ones before
    /// it are finished or failed.
    fn live_from(&mut self, ji: usize, j: &JobRuntime) -> usize {
        self.grow(ji);
        let from = &mut self.live_from[ji];
        while j.tasks.get(*from as usize).is_some_and(|t| t.state.is_terminal()) {
            *from += 1;
        }
        *from as usize
    }

    /// Takes a snapshot of the running tasks of the active jobs among
    /// `candidates` (ascending job ids; every active job is one); `end_of` gives a
    /// task's estimated end (asked only of tasks the last snapshot did not
    /// see running on the same terms). Read them with
    /// [`SnapshotCache::running_by_end`] or [`SnapshotCache::by_end`].
    pub fn take(
        &mut self,
        jobs: &pliant_core::LiveTable<JobRuntime>,
        candidates: impl IntoIterator<Item = usize>,
        end_of: impl Fn(&JobRuntime, &TaskRuntime) -> Micros,
    ) {
        self.taken += 1;
        let (now, last) = (self.taken, self.taken - 1);
        let mut started = Vec::new();
        for ji in candidates {
            let Some(j) = jobs.get(ji).filter(|j| j.status == JobStatus::Active) else {
                continue;
            };
            let from = self.live_from(ji, j);
            let seen = &mut self.seen[ji];
            if seen.len() < j.tasks.len() {
                seen.resize(j.tasks.len(), Seen::default());
            }
            // `running` counts the tasks that hold resources: none lie past the last.
            let holders = j.tasks.changed_from(from).filter(|(_, t)| t.state.holds_resources());
            for (ti, t) in holders.take(j.running as usize) {
                let s = &mut seen[ti as usize];
                let same = s.snapshot != 0
                    && s.snapshot == last
                    && (s.started, s.node, s.allocated) == (t.started, t.node.0, t.allocated);
                if same {
                    (s.snapshot, s.fresh) = (now, false);
                } else {
                    let end = end_of(j, t);
                    *s = Seen {
                        snapshot: now,
                        fresh: true,
                        started: t.started,
                        node: t.node.0,
                        allocated: t.allocated,
                        end,
                    };
                }
                if !same {
                    started.push((RunningTask { job: ji as u32, node: t.node.0, held: t.allocated, end: s.end }, ti));
                }
            }
        }
        started.sort_unstable_by_key(|(r, _)| end_key(r));
        let seen = &self.seen;
        let still = |(r, ti): &(RunningTask, u32)| {
            let s = &seen[r.job as usize][*ti as usize];
            s.snapshot == now && !s.fresh
        };
        let mut merged = Vec::with_capacity(self.by_end.len() + started.len());
        let mut added = started.into_iter().peekable();
        for kept in self.by_end.iter().filter(|e| still(e)) {
            while let Some(a) = added.next_if(|a| end_key(&a.0) < end_key(&kept.0)) {
                merged.push(a);
            }
            merged.push(*kept);
        }
        merged.extend(added);
        self.by_end = merged;
    }

    /// The snapshot's running tasks by estimated end (then node, job, CPU,
    /// memory), ends already passed as they are.
    pub fn running_by_end(&self) -> impl Iterator<Item = &RunningTask> {
        self.by_end.iter().map(|(r, _)| r)
    }

    /// The last snapshot's running tasks in the walk's order: by estimated
    /// end, an end already passed counting as `now`.
    pub fn by_end(&self, now: Micros) -> Vec<RunningTask> {
        let mut ordered: Vec<RunningTask> = self.by_end.iter().map(|&(r, _)| r).collect();
        let passed = ordered.partition_point(|r| r.end <= now);
        for r in &mut ordered[..passed] {
            r.end = now;
        }
        ordered[..passed].sort_unstable_by_key(end_key);
        ordered
    }

    /// Job `ji`'s waiting tasks in order, as runs of equal ones: request,
    /// estimated run time (0 if none) and how many.
    pub fn waiting_runs(&mut self, ji: usize, j: &JobRuntime) -> Vec<(Resources, Micros, u32)> {
        self.grow(ji);
        if self.estimates[ji] == Estimates::Unknown {
            let estimate = |i: usize| j.tasks.estimate(i).unwrap_or(0);
            let first = if j.tasks.is_empty() { 0 } else { estimate(0) };
            let same = (0..j.tasks.len()).all(|i| estimate(i) == first);
            self.estimates[ji] = if same { Estimates::Same(first) } else { Estimates::Mixed };
        }
        if let Estimates::Same(estimate) = self.estimates[ji] {
            return j.pending.runs().map(|(request, n)| (request, estimate, n)).collect();
        }
        let mut runs: Vec<(Resources, Micros, u32)> = Vec::new();
        for ti in j.pending.iter() {
            let ti = ti as usize;
            let task = (j.tasks.request(ti), j.tasks.estimate(ti).unwrap_or(0));
            match runs.last_mut() {
                Some(run) if (run.0, run.1) == task => run.2 += 1,
                _ => runs.push((task.0, task.1, 1)),
            }
        }
        runs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::model::{JobClass, JobId, JobRequest, NodeId, PhaseRequest, TaskRequest, TaskState};
    use pliant_core::SECOND;

    const REQ: Resources = Resources::new(1000, 1000);

    fn job(estimates: &[u64]) -> JobRuntime {
        let tasks = estimates.iter().map(|&s| TaskRequest { resources: REQ, estimate: Some(s * SECOND) }).collect();
        let phase = PhaseRequest { deps: vec![], coupled: false, local: false, tasks };
        let req = JobRequest {
            id: JobId(0),
            submit: 0,
            class: JobClass::Long,
            priority: 0,
            phases: vec![phase],
            elastic: None,
        };
        JobRuntime::new(&req, 0, 0, (0, 0, 0))
    }

    fn start(j: &mut JobRuntime, task: usize, at_s: u64, node: u32) {
        let t = &mut j.tasks[task];
        (t.state, t.started, t.node, t.allocated) = (TaskState::Running, at_s * SECOND, NodeId(node), REQ);
        j.running += 1;
    }

    fn finish(j: &mut JobRuntime, task: usize) {
        j.tasks[task].state = TaskState::Finished;
        j.running -= 1;
    }

    fn ends(c: &SnapshotCache) -> Vec<(Micros, u32)> {
        c.running_by_end().map(|r| (r.end / SECOND, r.node)).collect()
    }

    #[test]
    fn running_tasks_stay_in_order_of_end_across_snapshots() {
        // Four 10 s tasks: 0 finished, 1 runs on node 0 from 0 s (ends 10 s),
        // 3 on node 1 from 5 s (ends 15 s).
        let mut jobs = pliant_core::LiveTable::default();
        jobs.push(job(&[10, 10, 10, 10]));
        let j = &mut jobs[0];
        start(j, 0, 0, 0);
        finish(j, 0);
        start(j, 1, 0, 0);
        start(j, 3, 5, 1);
        let end_of = |_: &JobRuntime, t: &TaskRuntime| t.started + t.estimate.unwrap_or(0);
        let mut c = SnapshotCache::default();
        c.take(&jobs, 0..1, end_of);
        assert_eq!(ends(&c), vec![(10, 0), (15, 1)]);
        assert_eq!(c.live_from[0], 1);
        // 1 ends; 2 starts on node 0 at 12 s (ends 22 s): 3 is kept, 2 merged in after it.
        let j = &mut jobs[0];
        finish(j, 1);
        start(j, 2, 12, 0);
        c.take(&jobs, 0..1, end_of);
        assert_eq!(ends(&c), vec![(15, 1), (22, 0)]);
        // At 16 s, 3's end has passed: the walk sees it end now.
        let walk: Vec<(Micros, u32)> = c.by_end(16 * SECOND).iter().map(|r| (r.end / SECOND, r.node)).collect();
        assert_eq!(walk, vec![(16, 1), (22, 0)]);
        // 2 is killed and restarts on node 1 at 13 s: the snapshot sees it anew.
        jobs[0].tasks[2].started = 13 * SECOND;
        jobs[0].tasks[2].node = NodeId(1);
        c.take(&jobs, 0..1, end_of);
        assert_eq!(ends(&c), vec![(15, 1), (23, 1)]);
    }

    #[test]
    fn waiting_tasks_come_as_runs_of_request_and_estimate() {
        let mut c = SnapshotCache::default();
        assert_eq!(c.waiting_runs(0, &job(&[10, 10, 10])), vec![(REQ, 10 * SECOND, 3)]);
        let runs = vec![(REQ, 10 * SECOND, 2), (REQ, 20 * SECOND, 1), (REQ, 10 * SECOND, 1)];
        assert_eq!(c.waiting_runs(1, &job(&[10, 10, 20, 10])), runs);
    }
}
