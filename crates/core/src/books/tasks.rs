//! A job's tasks as the core keeps them. A task that has only waited since
//! its job came is its ask (estimate and phase, 16 bytes; its request is
//! kept once for each run of tasks asking the same); its whole
//! [`TaskRuntime`] is made the first time it is changed (launched, restored,
//! failed), so a job's backlog of waiting tasks holds no runtime records.

use crate::model::{NodeId, PhaseRequest, TaskState};
use crate::{Micros, Resources};
use std::ops::{Index, IndexMut, Range};

/// A task as the resource manager tracks it.
#[derive(Debug, Clone)]
pub struct TaskRuntime {
    /// Where it is in its lifecycle.
    pub state: TaskState,
    /// Its phase, by index in its job.
    pub phase: u32,
    /// What it asks for.
    pub request: Resources,
    /// Its run time as its job estimates it, if it does.
    pub estimate: Option<Micros>,
    /// The node it runs or last ran on.
    pub node: NodeId,
    /// What it holds on its node now.
    pub allocated: Resources,
    /// Times it has been launched.
    pub attempts: u32,
    /// When this attempt started (the youngest container is preempted first).
    pub started: Micros,
    /// Run time of this attempt banked before its current run (suspensions excluded).
    pub ran_before: Micros,
    /// Since when it has been running, if it is (running or shrunk).
    pub running_since: Option<Micros>,
    /// Memory a suspended or shrunk task has still to give back.
    pub reclaiming_mb: u64,
    /// What it has given up and is promised back on its node (while preempted).
    pub promise: Resources,
    /// It is among the view's preempted tasks awaiting resumption.
    pub preempted: bool,
}

impl TaskRuntime {
    /// A task of phase `phase` asking `request` that has only waited.
    pub fn waiting(phase: u32, request: Resources, estimate: Option<Micros>) -> Self {
        TaskRuntime {
            state: TaskState::Pending,
            phase,
            request,
            estimate,
            node: NodeId(0),
            allocated: Resources::ZERO,
            attempts: 0,
            started: 0,
            ran_before: 0,
            running_since: None,
            reclaiming_mb: 0,
            promise: Resources::ZERO,
            preempted: false,
        }
    }

    /// Run time of the current attempt up to `now`, suspensions excluded.
    pub fn ran(&self, now: Micros) -> Micros {
        self.ran_before + self.running_since.map_or(0, |since| now.saturating_sub(since))
    }

    /// Never preempted, or nothing is left of it: nothing promised, owed
    /// or awaiting resumption (`View::forget_preemption` has nothing to do).
    pub fn owes_nothing(&self) -> bool {
        !self.preempted && self.promise.is_zero() && self.reclaiming_mb == 0
    }

    /// Stops the run clock (the task is suspended or frozen).
    pub fn pause(&mut self, now: Micros) {
        self.ran_before = self.ran(now);
        self.running_since = None;
    }
}

/// What a task asks for but its request, which never changes, and where its record is.
#[derive(Debug, Clone, Copy)]
struct Ask {
    /// Its estimate (0 when it has none: see [`NO_ESTIMATE`]).
    estimate: Micros,
    /// Its phase, with [`NO_ESTIMATE`] set when it has no estimate.
    phase: u32,
    /// Its record's index in `records`, or [`WAITED`].
    record: u32,
}

impl Ask {
    fn estimate(&self) -> Option<Micros> {
        (self.phase & NO_ESTIMATE == 0).then_some(self.estimate)
    }

    fn phase(&self) -> u32 {
        self.phase & !NO_ESTIMATE
    }
}

/// What `record` holds for a task that has only waited.
const WAITED: u32 = u32::MAX;

/// The bit of `Ask::phase` that says the task has no estimate (phases are
/// numbered below it).
const NO_ESTIMATE: u32 = 1 << 31;

/// A job's tasks by index: each one's ask, and the runtime record of those
/// that have been changed. Indexing reads a record (a task that has only
/// waited has none: ask [`Tasks::state`], [`Tasks::request`] and the like);
/// indexing mutably makes it first.
#[derive(Debug, Clone, Default)]
pub struct Tasks {
    asks: Box<[Ask]>,
    /// What the first task asks for (zero when there is none).
    first_request: Resources,
    /// Every later run of tasks asking the same, as its first task's index
    /// and request (empty, so no allocation, when every task asks the first's).
    more_requests: Box<[(u32, Resources)]>,
    records: Vec<TaskRuntime>,
}

/// Records made at once when a job's first task is changed (no more than
/// it has tasks): a job of up to this many tasks has its records in one allocation.
const FIRST_RECORDS: usize = 8;

impl Tasks {
    /// The tasks of `phases`, phase by phase, in order; none changed yet.
    pub fn new(phases: &[PhaseRequest]) -> Self {
        let mut kept = Vec::with_capacity(phases.iter().map(|p| p.tasks.len()).sum());
        let first_request = phases.iter().find_map(|p| p.tasks.first()).map_or(Resources::ZERO, |t| t.resources);
        let (mut more_requests, mut last) = (Vec::new(), first_request);
        for (p, phase) in phases.iter().zip(0u32..) {
            assert!(phase < NO_ESTIMATE, "phase {phase}: too many phases");
            for t in &p.tasks {
                if t.resources != last {
                    more_requests.push((kept.len() as u32, t.resources));
                    last = t.resources;
                }
                let phase = if t.estimate.is_some() { phase } else { phase | NO_ESTIMATE };
                kept.push(Ask { estimate: t.estimate.unwrap_or(0), phase, record: WAITED });
            }
        }
        let more_requests = more_requests.into_boxed_slice();
        Tasks { asks: kept.into_boxed_slice(), first_request, more_requests, records: Vec::new() }
    }

    /// Number of tasks.
    pub fn len(&self) -> usize {
        self.asks.len()
    }

    /// Whether the job has no task.
    pub fn is_empty(&self) -> bool {
        self.asks.is_empty()
    }

    /// The record of task `i`, unless it has only waited (or does not exist).
    pub fn get(&self, i: usize) -> Option<&TaskRuntime> {
        match self.asks.get(i) {
            Some(ask) if ask.record != WAITED => Some(&self.records[ask.record as usize]),
            _ => None,
        }
    }

    /// The record of task `i` to change (made now if it has only waited),
    /// unless the task does not exist.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut TaskRuntime> {
        let at = match self.asks.get(i)?.record {
            WAITED => self.make_record(i),
            at => at,
        };
        Some(&mut self.records[at as usize])
    }

    /// Makes the record of task `i`, which has only waited; returns its index.
    #[inline(never)]
    fn make_record(&mut self, i: usize) -> u32 {
        if self.records.len() == self.records.capacity() {
            // Room grows as a vector's does, but never past a record per task.
            let room = self.records.len().max(FIRST_RECORDS).min(self.asks.len() - self.records.len());
            self.records.reserve_exact(room);
        }
        let at = self.records.len() as u32;
        let ask = &mut self.asks[i];
        ask.record = at;
        let request = Self::request_in(self.first_request, &self.more_requests, i);
        let record = TaskRuntime::waiting(ask.phase(), request, ask.estimate());
        self.records.push(record);
        at
    }

    /// Task `i`'s state.
    pub fn state(&self, i: usize) -> TaskState {
        self.get(i).map_or(TaskState::Pending, |t| t.state)
    }

    /// What task `i` asks for.
    pub fn request(&self, i: usize) -> Resources {
        assert!(i < self.asks.len(), "no task {i}");
        Self::request_in(self.first_request, &self.more_requests, i)
    }

    /// The requests its tasks ask, each at least once (in task order).
    pub fn requests(&self) -> impl Iterator<Item = Resources> + '_ {
        let first = (!self.asks.is_empty()).then_some(self.first_request);
        first.into_iter().chain(self.more_requests.iter().map(|r| r.1))
    }

    /// Task `i`'s request, its job's tasks asking `first` but where `more` says otherwise.
    fn request_in(first: Resources, more: &[(u32, Resources)], i: usize) -> Resources {
        match more.partition_point(|r| r.0 as usize <= i) {
            0 => first,
            run => more[run - 1].1,
        }
    }

    /// Tasks `range` as runs of tasks asking the same, in order: each run's
    /// first task, its length and its request.
    pub fn runs(&self, range: Range<u32>) -> impl Iterator<Item = (u32, u32, Resources)> + '_ {
        // The later runs' starts from `next` on, each ending the run before it.
        let mut next = self.more_requests.partition_point(|r| r.0 <= range.start);
        let mut request = next.checked_sub(1).map_or(self.first_request, |run| self.more_requests[run].1);
        let mut first = range.start;
        std::iter::from_fn(move || {
            if first >= range.end {
                return None;
            }
            let run = (first, request);
            match self.more_requests.get(next) {
                Some(&(start, asks)) if start < range.end => (first, request, next) = (start, asks, next + 1),
                _ => first = range.end,
            }
            Some((run.0, first - run.0, run.1))
        })
    }

    /// Its owner's estimate of task `i`'s run time.
    pub fn estimate(&self, i: usize) -> Option<Micros> {
        self.asks[i].estimate()
    }

    /// Task `i`'s phase.
    pub fn phase(&self, i: usize) -> u32 {
        self.asks[i].phase()
    }

    /// Run time of task `i`'s current attempt up to `now` (none for a task that has only waited).
    pub fn ran(&self, i: usize, now: Micros) -> Micros {
        self.get(i).map_or(0, |t| t.ran(now))
    }

    /// The tasks that have a record (every one that ever held resources),
    /// with their indices, in task order.
    pub fn changed(&self) -> impl Iterator<Item = (u32, &TaskRuntime)> + '_ {
        self.changed_from(0)
    }

    /// As [`Tasks::changed`], from task `from` on.
    pub fn changed_from(&self, from: usize) -> impl Iterator<Item = (u32, &TaskRuntime)> + '_ {
        let asks = self.asks.get(from..).unwrap_or_default();
        let changed = asks.iter().zip(from as u32..).filter(|(ask, _)| ask.record != WAITED);
        changed.map(|(ask, i)| (i, &self.records[ask.record as usize]))
    }
}

impl Index<usize> for Tasks {
    type Output = TaskRuntime;
    fn index(&self, i: usize) -> &TaskRuntime {
        self.get(i).unwrap_or_else(|| panic!("task {i} has only waited: it has no record"))
    }
}

impl IndexMut<usize> for Tasks {
    fn index_mut(&mut self, i: usize) -> &mut TaskRuntime {
        self.get_mut(i).unwrap_or_else(|| panic!("no task {i}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TaskRequest;

    /// Phases of the tasks of `asks`, each a request, an estimate and a
    /// phase (phases in order).
    fn phases(asks: &[(Resources, Option<Micros>, u32)]) -> Vec<PhaseRequest> {
        let mut phases: Vec<PhaseRequest> = Vec::new();
        for &(resources, estimate, phase) in asks {
            while phases.len() <= phase as usize {
                phases.push(PhaseRequest { deps: vec![], coupled: false, local: false, tasks: vec![] });
            }
            phases[phase as usize].tasks.push(TaskRequest { resources, estimate });
        }
        phases
    }

    #[test]
    fn a_task_has_a_record_once_changed_and_reads_its_ask_before() {
        let (r, big) = (Resources::cores_gb(1, 1), Resources::cores_gb(2, 2));
        let mut tasks = Tasks::new(&phases(&[(r, Some(5), 0), (big, None, 1), (big, Some(9), 1), (r, Some(7), 1)]));
        assert_eq!(tasks.requests().collect::<Vec<_>>(), [r, big, r]);
        assert_eq!((0..4).map(|i| tasks.request(i)).collect::<Vec<_>>(), [r, big, big, r]);
        assert_eq!(tasks.runs(0..4).collect::<Vec<_>>(), [(0, 1, r), (1, 2, big), (3, 1, r)]);
        assert_eq!(tasks.runs(2..3).collect::<Vec<_>>(), [(2, 1, big)]);
        assert_eq!(tasks.runs(1..4).collect::<Vec<_>>(), [(1, 2, big), (3, 1, r)]);
        assert_eq!(tasks.runs(2..2).count(), 0);
        // Any range's runs, spelt out, are its tasks' requests, each run maximal.
        for (from, to) in (0..=4).flat_map(|a| (a..=4).map(move |b| (a, b))) {
            let runs: Vec<_> = tasks.runs(from..to).collect();
            let spelt: Vec<_> = runs.iter().flat_map(|&(f, n, r)| (f..f + n).map(move |t| (t, r))).collect();
            assert_eq!(spelt, (from..to).map(|t| (t, tasks.request(t as usize))).collect::<Vec<_>>());
            assert!(runs.windows(2).all(|w| w[0].2 != w[1].2 && w[0].1 > 0));
        }
        let _ = tasks.get_mut(1);
        assert_eq!((tasks[1].request, tasks[1].estimate, tasks[1].phase), (big, None, 1));
        tasks = Tasks::new(&phases(&[(r, Some(5), 0), (r, None, 1), (r, Some(7), 1)]));
        assert_eq!(tasks.len(), 3);
        assert!(tasks.get(1).is_none() && tasks.changed().next().is_none());
        assert_eq!(
            (tasks.state(2), tasks.request(2), tasks.estimate(2), tasks.phase(2)),
            (TaskState::Pending, r, Some(7), 1)
        );
        assert_eq!(tasks.ran(2, 100), 0);
        tasks[2].state = TaskState::Running;
        tasks[2].running_since = Some(10);
        tasks[0].state = TaskState::Finished;
        assert_eq!(
            (tasks.state(2), tasks.ran(2, 100), tasks[2].estimate, tasks[2].phase),
            (TaskState::Running, 90, Some(7), 1)
        );
        let changed: Vec<(u32, TaskState)> = tasks.changed().map(|(i, t)| (i, t.state)).collect();
        assert_eq!(changed, [(0, TaskState::Finished), (2, TaskState::Running)]);
        assert!(tasks.get_mut(3).is_none());
    }

    #[test]
    fn records_are_made_in_one_allocation_for_a_small_job_and_grow_for_a_large_one() {
        let asks = |n| Tasks::new(&phases(&vec![(Resources::ZERO, None, 0); n]));
        let mut small = asks(5);
        let _ = small.get_mut(3);
        assert_eq!(small.records.capacity(), 5);
        (0..5).for_each(|i| _ = small.get_mut(i));
        assert_eq!((small.records.len(), small.records.capacity()), (5, 5));
        let mut large = asks(100);
        (0..9).for_each(|i| _ = large.get_mut(i));
        assert_eq!((large.records.len(), large.records.capacity()), (9, FIRST_RECORDS * 2));
    }

    #[test]
    #[should_panic(expected = "task 1 has only waited")]
    fn a_task_that_only_waited_has_no_record_to_read() {
        let tasks = Tasks::new(&phases(&[(Resources::ZERO, None, 0); 2]));
        let _ = &tasks[1];
    }
}
