//! The ground truth: how tasks really progress on the simulated cluster. The
//! core never reads this; it only hears of its consequences (a task finished,
//! memory was reclaimed, a task swapped, a task was restored).
//!
//! Progress rate of a running task = min(allocated CPU, requested CPU) /
//! requested CPU; a frozen, suspended or restoring task makes no
//! progress. A pool phase (Spark stages, `spark_model=pool`) runs its stage
//! tasks on its executors (see `pool`). A coupled phase without stages, or
//! any coupled phase under `spark_model=lockstep`, moves in lockstep: every
//! running task of it progresses at the slowest started task's rate, so one
//! stopped task (killed and waiting, suspended, restoring) stalls all of them.
//!
//! Memory (BIG-C §3.2, §5.4): a task's resident set is its working set
//! (a fraction of its request). Lowering its limit frees the slack above the
//! resident set at once; the rest is swapped out at the reclaim rate and
//! comes free as it goes. The core hears of it in steps that end where a
//! waiting task's own need is free (`Scheduler::memory_wanted`), else at
//! most [`RECLAIM_STEP_MB`] apart, so a waiting task starts as soon as its
//! need is free, as live (where the agent reports what the kernel has
//! reclaimed at every look). A resumed task takes the memory it had swapped
//! out back as it reads it, at the restore rate.

use crate::copies::end_copy;
use crate::disk_share::{shares, DiskShare};
use crate::event_queue::{Event, EventQueue};
use crate::held::HeldJob;
use crate::pool::{finish_time, Lost, PoolExec};
use crate::spares::Spares;
use crate::{ExecModel, KillModel, SparkModel, TaskSwapRates};
use pliant_core::model::{JobId, TaskRef};
use pliant_core::policy::cost::spark_max_executor_failures;
use pliant_core::policy::FOOTPRINT_CPU_MILLI;
use pliant_core::{LiveTable, Micros, Observation, Resources};
use std::collections::BTreeMap;
use std::ops::Range;

/// Most memory a reclaim frees in one step, MB, when no waiting task wants
/// less (it fits the event's 16 bits).
const RECLAIM_STEP_MB: u16 = 1024;

/// One task's true state.
#[derive(Debug, Clone)]
pub(crate) struct TaskExec {
    /// True run time at full allocation.
    pub duration: Micros,
    /// Work done so far, in microseconds at full speed, as of `since`.
    pub done: f64,
    /// Current progress rate (0 = stalled, 1 = full speed).
    pub rate: f64,
    /// The rate its CPU use is counted at in the usage integrals: `rate`, or
    /// 0 for a pool executor with nothing in flight.
    pub busy: f64,
    /// The rate a pool executor with nothing in flight could progress at
    /// (it waits at its stage's barrier), counted as barrier idle; else 0.
    pub idle: f64,
    pub since: Micros,
    /// It does no work before this instant (launched after it was placed:
    /// see `Execution::launch_delay`).
    pub work_from: Micros,
    /// Invalidates scheduled finishes when the rate changes.
    pub epoch: u32,
    /// Invalidates scheduled reclaim and restore steps.
    pub mem_epoch: u32,
    pub phase: u32,
    pub node: u32,
    /// What it holds now (zero when not running).
    pub held: Resources,
    pub requested: Resources,
    pub working_set_mb: u64,
    pub swapped_mb: u64,
    /// Memory still moving: to be swapped out by the reclaim in progress, or
    /// to be read back by the restore in progress (not yet in `held`).
    pub moving_mb: u64,
    pub running: bool,
    pub frozen: bool,
    pub restoring: bool,
    pub ever_started: bool,
    pub finished: bool,
    /// Speed on its current node: 1, or 1 / the locality slowdown for a task
    /// run away from the data it reads (see `locality.rs`).
    pub speed: f64,
    /// The node its copy runs on and what the copy holds, if it has one.
    pub copy: Option<(u32, Resources)>,
    /// Invalidates a scheduled copy finish.
    pub copy_epoch: u32,
    /// True run time at its allocation over true run time at full allocation
    /// (memory elasticity, YARN-ME §2: above 1 when it runs under-sized).
    pub slowdown: f64,
    /// Since when it has been preempted without progress (frozen, suspended
    /// or restoring), if it is.
    pub stalled_since: Option<Micros>,
    /// MB its spills move through its node's disk per µs of work (0 when it
    /// does not spill; YARN-ME §2.6, see `disk_share`).
    pub spill_per_us: f64,
    /// The fastest its share of its node's disk lets it progress (infinite
    /// while the disk keeps up with every spilling task there).
    pub disk_cap: f64,
}

impl TaskExec {
    /// The rate the task could progress at on its own, its share of the
    /// node's disk included.
    fn own_rate(&self) -> f64 {
        self.alone_rate().min(self.disk_cap)
    }

    /// The rate the task could progress at alone on its node.
    fn alone_rate(&self) -> f64 {
        if !self.running || self.frozen || self.restoring {
            0.0
        } else {
            self.held.cpu_milli.min(self.requested.cpu_milli) as f64 / self.requested.cpu_milli as f64 * self.speed
                / self.slowdown
        }
    }
}

/// A phase's coupling.
#[derive(Debug, Clone)]
pub(crate) struct PhaseExec {
    pub coupled: bool,
    pub tasks: Range<u32>,
    /// The stage tasks its executors pull, for a pool phase.
    pub pool: Option<PoolExec>,
    /// Its tasks read their upstream phases' output where it was written.
    pub local: bool,
    /// Upstream phases.
    pub deps: Vec<u32>,
    /// Nodes its finished tasks ran on (where their output is), kept only
    /// when a local phase reads it.
    pub ran_on: Vec<u32>,
    /// A local phase depends on it.
    pub feeds_local: bool,
    /// Its tasks killed in this application attempt: Spark counts each as
    /// an executor failure (`kill_model=spark`, for a coupled phase).
    pub executor_failures: u32,
}

/// A job's true state.
#[derive(Debug, Clone)]
pub(crate) struct JobExec {
    /// Its tasks (none before its first launch), in a buffer of exactly their number.
    pub tasks: Vec<TaskExec>,
    pub phases: Box<[PhaseExec]>,
    pub unfinished: u32,
    /// The true memory elasticity of its tasks, if any (boxed: most jobs
    /// have none, and every live job has this record).
    pub elastic: Option<Box<pliant_workload::JobElasticity>>,
    /// Task-time its tasks have spent preempted without progress, µs.
    pub stalled: Micros,
    /// When its first task was launched ([`JobExec::start`]).
    pub started_at: Micros,
    /// Times its tasks were preempted.
    pub preemptions: u32,
    /// Times its tasks were killed.
    pub kills: u32,
    /// Launches of its tasks that had run before in this attempt (a killed
    /// container or executor started again).
    pub relaunches: u32,
    /// Its application attempt, from 0 (`kill_model=spark`: YARN relaunches
    /// a failed attempt, see `engine`).
    pub app_attempt: u32,
}

impl JobExec {
    /// A job that has arrived: its tasks' state is made at its first launch
    /// ([`JobExec::start`]), so a job that only waits holds none.
    pub fn waiting(job: &HeldJob) -> Self {
        let unfinished = job.task_count() as u32;
        JobExec {
            tasks: Vec::new(),
            phases: Box::default(),
            unfinished,
            elastic: job.elastic.clone(),
            stalled: 0,
            started_at: 0,
            preemptions: 0,
            kills: 0,
            relaunches: 0,
            app_attempt: 0,
        }
    }

    /// Whether its tasks' state has been made (a task of it was launched).
    pub fn started(&self) -> bool {
        !self.phases.is_empty()
    }

    /// Makes its tasks' state from `job`, the job it was made from, before
    /// its first launch, at `now`, its tasks in a buffer from `spares`.
    pub fn start(&mut self, job: &HeldJob, model: &ExecModel, now: Micros, spares: &mut Spares<TaskExec>) {
        self.started_at = now;
        let mut tasks = spares.take(self.unfinished as usize);
        let mut phases = Vec::with_capacity(job.phases().count());
        // A task's working set, worked out once per run of tasks asking the same memory.
        let mut last: Option<(u64, u64)> = None;
        let mut working_set = |mem_mb: u64| match last {
            Some((mem, set)) if mem == mem_mb => set,
            _ => {
                let set = (mem_mb as f64 * model.working_set_fraction).ceil() as u64;
                last = Some((mem_mb, set));
                set
            }
        };
        for (pi, (p, p_tasks)) in job.phases().enumerate() {
            let start = tasks.len() as u32;
            let pooled = model.spark_model == SparkModel::Pool && !p.stages.is_empty();
            let mut slots = Vec::new();
            for t in p_tasks {
                if pooled {
                    slots.push(t.slots());
                }
                tasks.push(TaskExec {
                    duration: t.duration,
                    done: 0.0,
                    rate: 0.0,
                    busy: 0.0,
                    idle: 0.0,
                    since: 0,
                    work_from: 0,
                    epoch: 0,
                    mem_epoch: 0,
                    phase: pi as u32,
                    node: 0,
                    held: Resources::ZERO,
                    requested: t.request,
                    working_set_mb: working_set(t.request.mem_mb),
                    swapped_mb: 0,
                    moving_mb: 0,
                    running: false,
                    frozen: false,
                    restoring: false,
                    ever_started: false,
                    finished: false,
                    speed: 1.0,
                    copy: None,
                    copy_epoch: 0,
                    slowdown: 1.0,
                    stalled_since: None,
                    spill_per_us: 0.0,
                    disk_cap: f64::INFINITY,
                });
            }
            let pool = pooled.then(|| PoolExec::new(p.stages.to_vec(), slots));
            let coupled = p.coupled && pool.is_none();
            phases.push(PhaseExec {
                coupled,
                tasks: start..tasks.len() as u32,
                pool,
                local: p.local,
                deps: p.deps.to_vec(),
                ran_on: Vec::new(),
                feeds_local: job.phases().any(|(q, _)| q.local && q.deps.contains(&(pi as u32))),
                executor_failures: 0,
            });
        }
        self.tasks = tasks;
        self.phases = phases.into_boxed_slice();
    }
}

/// Cluster-wide usage integrals for utilisation and energy.
#[derive(Debug, Clone, Default)]
pub(crate) struct Usage {
    /// CPU (millicores) used by progressing tasks.
    pub busy_cpu: f64,
    /// Σ over progressing tasks of their CPU use over their node's CPU.
    pub busy_nodes: f64,
    /// Memory (MB) held by running tasks.
    pub held_mem: u64,
    /// Tasks running (holding resources, progressing or not).
    pub running_tasks: u64,
    /// CPU (millicores) held by running pool executors with no stage task in
    /// flight: waiting at their stage's barrier for its slowest executor.
    pub barrier_idle_cpu: f64,
    pub last: Micros,
    pub cpu_area: f64,
    pub mem_area: f64,
    pub node_area: f64,
    /// Millicore-µs of `barrier_idle_cpu`.
    pub barrier_idle_area: f64,
}

impl Usage {
    /// Accumulates the integrals up to `now`.
    pub fn advance(&mut self, now: Micros) {
        let dt = (now - self.last) as f64;
        self.cpu_area += self.busy_cpu * dt;
        self.mem_area += self.held_mem as f64 * dt;
        self.node_area += self.busy_nodes * dt;
        self.barrier_idle_area += self.barrier_idle_cpu * dt;
        self.last = now;
    }
}

/// The true state of every job and the usage it adds up to.
pub(crate) struct Execution {
    pub model: ExecModel,
    pub jobs: LiveTable<JobExec>,
    pub node_cpu: Vec<u64>,
    pub usage: Usage,
    /// Core-microseconds of work lost to kills.
    pub lost_core_us: f64,
    /// Core-microseconds held without progress while restoring.
    pub held_core_us: f64,
    /// What the core must be told, in order.
    pub reports: Vec<Observation>,
    /// Checkpoint images and the nodes' dump queues.
    pub ckpt: crate::checkpoint::CheckpointExec,
    /// The tasks spilling on each node, sharing its disk.
    pub disks: DiskShare,
    /// From placing a task to its running: YARN's ApplicationMaster picks a
    /// container up at its next heartbeat and launches it at the one after
    /// (DSS: two AM heartbeats); the container is held meanwhile.
    pub launch_delay: Micros,
    /// Tasks with swap rates of their own (`SimOptions::task_swap_rates`).
    pub own_rates: BTreeMap<(u32, u32), TaskSwapRates>,
    /// Released jobs' task buffers, for later jobs' first launch.
    pub spare_tasks: Spares<TaskExec>,
    /// The reclaims in progress: when each one's current step began, µs.
    pub reclaiming: BTreeMap<(u32, u32), f64>,
}

/// Counts task `t`'s CPU use at `busy` (its rate, or 0 when idle) in the
/// usage integrals, and the CPU it holds idle at a barrier at `idle`;
/// `node_cpu` is every node's CPU. A use that does not change is skipped:
/// adding zero leaves a sum as it is.
fn count_busy(t: &mut TaskExec, busy: f64, idle: f64, node_cpu: &[u64], usage: &mut Usage) {
    if idle != t.idle {
        usage.barrier_idle_cpu += t.requested.cpu_milli as f64 * (idle - t.idle);
        t.idle = idle;
    }
    if busy != t.busy {
        let used = t.requested.cpu_milli as f64 * (busy - t.busy);
        t.busy = busy;
        usage.busy_cpu += used;
        usage.busy_nodes += used / node_cpu[t.node as usize] as f64;
    }
}

/// Starts or stops task `t`'s stall clock as it enters or leaves a
/// preempted state without progress (frozen, suspended, restoring); a
/// stall that ends adds to its job's `stalled`.
fn track_stall(t: &mut TaskExec, stalled: &mut Micros, now: Micros) {
    let stalls = t.running && (t.frozen || t.restoring);
    match (stalls, t.stalled_since) {
        (true, None) => t.stalled_since = Some(now),
        (false, Some(since)) => {
            t.stalled_since = None;
            *stalled += now - since;
        }
        _ => {}
    }
}

/// What a task's due finish came to (see [`Execution::due`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Due {
    /// The task stopped or its rate changed since it was scheduled: nothing happens.
    Stale,
    /// A pool executor's stage task ended; the executor runs on.
    Tick,
    /// The task finished; `job_done` when its job has no task left.
    Finished {
        /// Its job has no task left.
        job_done: bool,
    },
}

/// What a task's rate change updates besides its job: the usage integrals
/// (a task's CPU counted against its node's) and the event queue (its next
/// finish).
pub(crate) struct Books<'a> {
    node_cpu: &'a [u64],
    usage: &'a mut Usage,
    events: &'a mut EventQueue,
}

impl JobExec {
    /// Settles task `task`'s progress to `now` (a pool executor's: its
    /// in-flight tasks'); returns its rate.
    #[inline(always)]
    fn settle(&mut self, now: Micros, task: u32) -> f64 {
        let t = &mut self.tasks[task as usize];
        let rate = t.rate;
        // A task without progress did no work: there is nothing to add.
        if rate > 0.0 {
            let work = rate * now.saturating_sub(t.since.max(t.work_from)) as f64;
            let p = &mut self.phases[t.phase as usize];
            match p.pool.as_mut() {
                Some(pool) => pool.advance((task - p.tasks.start) as usize, work),
                None => t.done = (t.done + work).min(t.duration as f64),
            }
        }
        t.since = now;
        rate
    }

    /// Settles task `task` (of job `job`) to `now` and gives it a new rate,
    /// scheduling its finish (a pool executor: its next stage task's) if it
    /// progresses.
    #[inline(always)]
    fn set_rate(&mut self, books: &mut Books, now: Micros, job: u32, task: u32, rate: f64) {
        self.settle(now, task);
        self.set_settled_rate(books, now, job, task, rate);
    }

    /// As [`JobExec::set_rate`], for a task settled to `now` already.
    #[inline(always)]
    fn set_settled_rate(&mut self, books: &mut Books, now: Micros, job: u32, task: u32, rate: f64) {
        let t = &mut self.tasks[task as usize];
        let p = &mut self.phases[t.phase as usize];
        t.rate = rate;
        t.epoch += 1;
        let (finish, idle) = match p.pool.as_mut() {
            None if rate <= 0.0 => (None, false),
            None => (Some(finish_time(now.max(t.work_from), t.duration as f64 - t.done, rate)), false),
            Some(pool) => {
                let e = (task - p.tasks.start) as usize;
                let finish = if rate <= 0.0 {
                    None
                } else if pool.done() {
                    // An executor with nothing left to run ends now.
                    Some(now)
                } else {
                    pool.pull(e);
                    pool.next_left(e).map(|left| finish_time(now, left, rate))
                };
                // A pool executor with no stage task in flight (waiting at a
                // barrier) holds its cores but uses none.
                (finish, pool.idle(e))
            }
        };
        let epoch = t.epoch;
        let (busy, idle) = if idle { (0.0, rate) } else { (rate, 0.0) };
        count_busy(t, busy, idle, books.node_cpu, books.usage);
        if let Some(at) = finish {
            books.events.push(at, Event::TaskFinish { job, task, epoch });
        }
    }

    /// Lets the progressing executors of pool phase `phase` pull tasks again
    /// (after a stage ended or a kill gave tasks back).
    fn repull(&mut self, books: &mut Books, now: Micros, job: u32, phase: usize) {
        for i in self.phases[phase].tasks.clone() {
            let rate = self.tasks[i as usize].rate;
            if rate > 0.0 {
                self.set_rate(books, now, job, i, rate);
            }
        }
    }

    /// Task `task`'s scheduled finish is due (see [`Execution::due`]).
    fn due(&mut self, books: &mut Books, now: Micros, job: u32, task: u32) -> bool {
        let pi = self.tasks[task as usize].phase as usize;
        if self.phases[pi].pool.is_none() {
            return true;
        }
        let rate = self.settle(now, task);
        let p = &mut self.phases[pi];
        let e = (task - p.tasks.start) as usize;
        let pool = p.pool.as_mut().expect("a pool phase");
        if pool.done() {
            return true;
        }
        if pool.complete(e) {
            self.repull(books, now, job, pi);
        } else {
            self.set_settled_rate(books, now, job, task, rate);
        }
        false
    }

    /// Stops its running task `task` (see [`Execution::stop`]), settled to
    /// `now` already (see `settle`), but for its node's disk: returns the
    /// node it spilled on, if it did.
    fn stop(&mut self, books: &mut Books, now: Micros, job: u32, task: u32) -> Option<u32> {
        end_copy(&mut self.tasks[task as usize], books.node_cpu, books.usage);
        self.set_settled_rate(books, now, job, task, 0.0);
        let t = &mut self.tasks[task as usize];
        t.running = false;
        t.frozen = false;
        t.restoring = false;
        // Its stall clock stops with it (see `track_stall`).
        let stalled = t.stalled_since.take();
        t.swapped_mb = 0;
        t.moving_mb = 0;
        t.mem_epoch += 1;
        let (mem, node, spilled) = (t.held.mem_mb, t.node, t.spill_per_us > 0.0);
        t.held = Resources::ZERO;
        t.disk_cap = f64::INFINITY;
        if let Some(since) = stalled {
            self.stalled += now - since;
        }
        books.usage.held_mem -= mem;
        books.usage.running_tasks -= 1;
        // Only a task with spills is ever on a disk (see `Execution::launch`).
        spilled.then_some(node)
    }

    /// Records the completion of its task `task`, stopped already; returns
    /// true when it has no task left.
    fn finish(&mut self, books: &mut Books, now: Micros, job: u32, task: u32) -> bool {
        let t = &mut self.tasks[task as usize];
        t.finished = true;
        let node = t.node;
        let p = &mut self.phases[t.phase as usize];
        if p.feeds_local {
            p.ran_on.push(node);
        }
        // A stopped task has rate 0 and spills on no disk already: only a
        // coupled phase has rates to change.
        if p.coupled {
            self.phase_rates(books, now, job, task);
        }
        self.unfinished -= 1;
        self.unfinished == 0
    }

    /// Brings the rates of task `task` and of its coupled siblings up to date.
    fn phase_rates(&mut self, books: &mut Books, now: Micros, job: u32, task: u32) {
        let phase = &self.phases[self.tasks[task as usize].phase as usize];
        if !phase.coupled {
            return self.task_rate(books, now, job, task, 1.0);
        }
        let members = phase.tasks.clone();
        let lockstep = self.tasks[members.start as usize..members.end as usize]
            .iter()
            .filter(|t| t.ever_started && !t.finished)
            .map(TaskExec::own_rate)
            .fold(1.0, f64::min);
        for i in members {
            self.task_rate(books, now, job, i, lockstep);
        }
    }

    /// Brings task `task`'s rate up to date, at most `lockstep` (its coupled
    /// phase's slowest started task's rate, or 1).
    #[inline(always)]
    fn task_rate(&mut self, books: &mut Books, now: Micros, job: u32, task: u32, lockstep: f64) {
        let t = &mut self.tasks[task as usize];
        track_stall(t, &mut self.stalled, now);
        let rate = if t.running { t.own_rate().min(lockstep) } else { 0.0 };
        if rate != t.rate {
            self.set_rate(books, now, job, task, rate);
        }
    }
}

fn task_ref(job: u32, task: u32) -> TaskRef {
    TaskRef { job: JobId(job), task }
}

impl Execution {
    pub(crate) fn task(&mut self, job: u32, task: u32) -> &mut TaskExec {
        &mut self.jobs[job as usize].tasks[task as usize]
    }

    /// Drops the state of job `job`, which has finished: what is left of it
    /// in the event queue is stale and is ignored.
    pub(crate) fn release(&mut self, job: u32) {
        if let Some(j) = self.jobs.remove(job as usize) {
            self.spare_tasks.keep(j.tasks);
        }
        let after: Vec<(u32, u32)> = self.reclaiming.range((job, 0)..(job + 1, 0)).map(|(&k, _)| k).collect();
        for key in after {
            self.reclaiming.remove(&key);
        }
    }

    /// Whether job `job` finished and its state was dropped.
    pub(crate) fn released(&self, job: u32) -> bool {
        self.jobs.removed(job as usize)
    }

    /// Job `job`'s state and the books its rate changes update.
    fn job_books<'a>(&'a mut self, job: u32, events: &'a mut EventQueue) -> (&'a mut JobExec, Books<'a>) {
        let books = Books { node_cpu: &self.node_cpu, usage: &mut self.usage, events };
        (&mut self.jobs[job as usize], books)
    }

    /// A task's finish scheduled at `epoch` is due. Unless it is stale (the
    /// task stopped or its rate changed since), the task finishes, or, if it
    /// is a pool executor, its stage task does: it retires its finished
    /// tasks, starts the next stage when this one is over, and pulls more;
    /// the executor finishes once every stage has ended.
    pub fn due(&mut self, now: Micros, job: u32, task: u32, epoch: u32, events: &mut EventQueue) -> Due {
        let (j, mut books) = self.job_books(job, events);
        let t = &j.tasks[task as usize];
        if !t.running || t.epoch != epoch {
            return Due::Stale;
        }
        if !j.due(&mut books, now, job, task) {
            return Due::Tick;
        }
        // A finishing task's progress is complete: it is not settled (nothing
        // reads it again).
        if let Some(node) = j.stop(&mut books, now, job, task) {
            // Its node's disk is shared anew before it counts as finished.
            self.unspill(now, node, job, task, events);
            let (j, mut books) = self.job_books(job, events);
            return Due::Finished { job_done: j.finish(&mut books, now, job, task) };
        }
        Due::Finished { job_done: j.finish(&mut books, now, job, task) }
    }

    /// Brings the rates of a task (and of its coupled siblings) up to date;
    /// a spilling task's node shares its disk anew first.
    pub(crate) fn update_rates(&mut self, now: Micros, job: u32, task: u32, events: &mut EventQueue) {
        let t = &self.jobs[job as usize].tasks[task as usize];
        // Only a task with spills is ever on a disk (see `launch`).
        if t.spill_per_us > 0.0 && self.disks.spills(t.node, job, task) {
            self.reshare(now, t.node, events);
        }
        self.phase_rates(now, job, task, events);
    }

    /// §2.6: shares `node`'s disk among the tasks spilling there (see
    /// `disk_share`) and updates the rates of those whose share changed.
    fn reshare(&mut self, now: Micros, node: u32, events: &mut EventQueue) {
        let on = self.disks.on(node).to_vec();
        let demands: Vec<f64> = on
            .iter()
            .map(|&(j, t)| {
                let t = &self.jobs[j as usize].tasks[t as usize];
                t.alone_rate() * t.spill_per_us
            })
            .collect();
        for (&(j, t), share) in on.iter().zip(shares(self.disks.bandwidth(), &demands)) {
            let task = self.task(j, t);
            let cap = share.map_or(f64::INFINITY, |mb_per_us| mb_per_us / task.spill_per_us);
            if cap != task.disk_cap {
                task.disk_cap = cap;
                self.phase_rates(now, j, t, events);
            }
        }
    }

    /// Brings the rates of a task and of its coupled siblings up to date.
    fn phase_rates(&mut self, now: Micros, job: u32, task: u32, events: &mut EventQueue) {
        let (j, mut books) = self.job_books(job, events);
        j.phase_rates(&mut books, now, job, task);
    }

    /// Starts (or restarts, from zero) a task on `node` holding `held`.
    pub fn launch(&mut self, now: Micros, job: u32, task: u32, node: u32, held: Resources, events: &mut EventQueue) {
        let (slowdown, launch_delay) = (self.model.locality_slowdown, self.launch_delay);
        let mut books = Books { node_cpu: &self.node_cpu, usage: &mut self.usage, events };
        let j = &mut self.jobs[job as usize];
        let speed = j.speed_on(task, node, slowdown);
        let t = &mut j.tasks[task as usize];
        t.speed = speed;
        t.ever_started = true;
        t.running = true;
        t.node = node;
        t.held = held;
        t.slowdown = 1.0;
        t.spill_per_us = 0.0;
        t.disk_cap = f64::INFINITY;
        if let Some(e) = j.elastic.as_deref() {
            let ideal_mb = (t.requested.mem_mb as f64 * e.true_ideal_scale).round() as u64;
            let runtime = e.truth.runtime(t.duration, ideal_mb, held.mem_mb);
            t.slowdown = runtime as f64 / t.duration.max(1) as f64;
            t.spill_per_us = e.truth.spilled_mb(ideal_mb, held.mem_mb) / t.duration.max(1) as f64;
        }
        let spills = t.spill_per_us > 0.0;
        t.done = 0.0;
        t.rate = 0.0;
        t.since = now;
        t.work_from = now + launch_delay;
        books.usage.held_mem += held.mem_mb;
        books.usage.running_tasks += 1;
        if spills {
            // Its node's disk is shared anew before its rate is set.
            self.disks.start(node, job, task);
            self.reshare(now, node, events);
            self.phase_rates(now, job, task, events);
        } else {
            j.phase_rates(&mut books, now, job, task);
        }
    }

    /// Stops a running task: its resources are freed and pending steps cancelled.
    pub(crate) fn stop(&mut self, now: Micros, job: u32, task: u32, events: &mut EventQueue) {
        let (j, mut books) = self.job_books(job, events);
        j.settle(now, task);
        if let Some(node) = j.stop(&mut books, now, job, task) {
            self.unspill(now, node, job, task, events);
        }
    }

    /// A task that spilled on `node` stopped: if it was spilling there, the
    /// node shares its disk anew.
    fn unspill(&mut self, now: Micros, node: u32, job: u32, task: u32, events: &mut EventQueue) {
        if self.disks.stop(node, job, task) {
            self.reshare(now, node, events);
        }
    }

    /// Kills a running task: its progress is lost and counted as waste; a
    /// coupled phase stalls until it runs again; a pool executor's in-flight
    /// tasks go back to the pool for the others to pull, and under
    /// `kill_model=spark` the output it holds is lost with it (see
    /// `PoolExec::lose`). Returns whether that fails its job's application
    /// attempt (the caller ends the attempt: [`Execution::fail`]).
    pub fn kill(&mut self, now: Micros, job: u32, task: u32, events: &mut EventQueue) -> bool {
        self.kill_as(now, job, task, self.model.kill_model == KillModel::Spark, events)
    }

    /// As [`Execution::kill`]; `spark`: under Spark's semantics.
    fn kill_as(&mut self, now: Micros, job: u32, task: u32, spark: bool, events: &mut EventQueue) -> bool {
        self.stop(now, job, task, events);
        let j = &mut self.jobs[job as usize];
        let t = &mut j.tasks[task as usize];
        let lost = t.done * t.requested.cpu_milli as f64 / 1000.0;
        t.done = 0.0;
        let pi = t.phase as usize;
        if spark && j.phases[pi].pool.is_some() {
            // A fetch failure takes the other executors' in-flight work as it is now.
            for i in j.phases[pi].tasks.clone() {
                j.settle(now, i);
            }
        }
        let p = &mut j.phases[pi];
        let e = (task - p.tasks.start) as usize;
        let coupled = p.coupled;
        // A Spark job (a coupled or pool phase) fails its application
        // attempt once Spark's executor-failure limit is reached.
        let mut app_failed = false;
        if spark && (coupled || p.pool.is_some()) {
            p.executor_failures += 1;
            app_failed = p.executor_failures >= spark_max_executor_failures(p.tasks.len());
        }
        let pool_lost = p.pool.as_mut().map(|pool| match spark {
            true => pool.lose(e),
            false => Lost { work: pool.give_back(e), app_failed: false },
        });
        self.lost_core_us += lost;
        let mut books = Books { node_cpu: &self.node_cpu, usage: &mut self.usage, events };
        if let Some(pool_lost) = pool_lost {
            j.repull(&mut books, now, job, pi);
            self.lost_core_us += pool_lost.work;
            app_failed |= pool_lost.app_failed;
        }
        // A stopped task has rate 0 and spills on no disk already: only a
        // coupled phase has rates to change.
        if coupled {
            j.phase_rates(&mut books, now, job, task);
        }
        app_failed
    }

    /// Stops every running task of a failed job, counting their work as
    /// lost; under `kill_model=spark` the output its executors hold is lost
    /// too (a relaunch starts from zero).
    pub fn fail(&mut self, now: Micros, job: u32, events: &mut EventQueue) {
        for task in 0..self.jobs[job as usize].tasks.len() as u32 {
            if self.task(job, task).running {
                self.kill_as(now, job, task, false, events);
            }
        }
        if self.model.kill_model == KillModel::Spark {
            let held: f64 =
                self.jobs[job as usize].phases.iter().filter_map(|p| p.pool.as_ref()).map(PoolExec::held_work).sum();
            self.lost_core_us += held;
        }
    }

    /// Immediate preemption: CPU to the footprint, the task frozen, memory
    /// reclaimed down to the footprint; `wanted`: the core's
    /// `memory_wanted` on its node.
    pub fn suspend(
        &mut self,
        now: Micros,
        job: u32,
        task: u32,
        footprint: Resources,
        wanted: Option<u64>,
        events: &mut EventQueue,
    ) {
        let t = self.task(job, task);
        t.held.cpu_milli = t.held.cpu_milli.min(footprint.cpu_milli);
        t.frozen = true;
        self.update_rates(now, job, task, events);
        self.reclaim_to(now, job, task, footprint.mem_mb, wanted, events);
    }

    /// Suspend in place: the task is frozen with its memory resident; its
    /// CPU is free. Nothing is swapped, so resuming reads nothing back.
    pub fn freeze(&mut self, now: Micros, job: u32, task: u32, events: &mut EventQueue) {
        let t = self.task(job, task);
        t.held.cpu_milli = 0;
        t.frozen = true;
        self.update_rates(now, job, task, events);
    }

    /// Graceful preemption step: new limits; a limit under the resident set
    /// means swapping, and the node freezes the task (BIG-C §4.2) and says
    /// so; `wanted` as for [`Execution::suspend`].
    pub fn shrink(
        &mut self,
        now: Micros,
        job: u32,
        task: u32,
        to: Resources,
        wanted: Option<u64>,
        events: &mut EventQueue,
    ) {
        let t = self.task(job, task);
        t.held.cpu_milli = t.held.cpu_milli.min(to.cpu_milli);
        if to.mem_mb < t.working_set_mb.saturating_sub(t.swapped_mb) && !t.frozen {
            t.frozen = true;
            t.held.cpu_milli = t.held.cpu_milli.min(FOOTPRINT_CPU_MILLI);
            self.reports.push(Observation::Swapping(task_ref(job, task)));
        }
        self.update_rates(now, job, task, events);
        self.reclaim_to(now, job, task, to.mem_mb, wanted, events);
    }

    /// Lowers a task's memory to `target_mb`: the slack above its resident
    /// set frees at once; the rest is swapped out step by step.
    fn reclaim_to(
        &mut self,
        now: Micros,
        job: u32,
        task: u32,
        target_mb: u64,
        wanted: Option<u64>,
        events: &mut EventQueue,
    ) {
        let t = self.task(job, task);
        let resident = t.working_set_mb.saturating_sub(t.swapped_mb);
        let slack = t.held.mem_mb.saturating_sub(resident.max(target_mb));
        t.held.mem_mb -= slack;
        t.moving_mb = resident.saturating_sub(target_mb).min(t.held.mem_mb);
        t.mem_epoch += 1;
        self.usage.held_mem -= slack;
        if slack > 0 {
            self.reports.push(Observation::MemoryReclaimed { task: task_ref(job, task), mem_mb: slack });
        }
        self.next_reclaim_step(now as f64, job, task, wanted.map(|w| w.saturating_sub(slack)), events);
    }

    /// µs per MB to swap a task out and to read it back.
    fn swap_us_per_mb(&self, job: u32, task: u32) -> (f64, f64) {
        let own = self.own_rates.get(&(job, task));
        let reclaim = own.and_then(|r| r.reclaim_s_per_gb).unwrap_or(self.model.reclaim_s_per_gb);
        let restore = own.and_then(|r| r.restore_s_per_gb).unwrap_or(self.model.restore_s_per_gb);
        (reclaim * 1e6 / 1024.0, restore * 1e6 / 1024.0)
    }

    /// Schedules the next step of the reclaim in progress from `now`, if any
    /// is left: it ends where `wanted` more MB are free (what a waiting task
    /// still needs on the task's node, past what the core is about to hear
    /// of), at most [`RECLAIM_STEP_MB`] on.
    fn next_reclaim_step(&mut self, now: f64, job: u32, task: u32, wanted: Option<u64>, events: &mut EventQueue) {
        let per_mb = self.swap_us_per_mb(job, task).0;
        let t = self.task(job, task);
        let step = wanted.map_or(RECLAIM_STEP_MB as u64, |w| w.clamp(1, RECLAIM_STEP_MB as u64));
        let mb = t.moving_mb.min(step) as u16;
        if mb > 0 {
            let at = (now + mb as f64 * per_mb).ceil() as Micros;
            events.push(at, Event::Reclaimed { job, task, epoch: t.mem_epoch, mem_mb: mb });
            self.reclaiming.insert((job, task), now);
        } else {
            self.reclaiming.remove(&(job, task));
        }
    }

    /// Tells the core what each reclaim in progress on a node where a
    /// waiting task lacks only memory has swapped out so far (whole MB),
    /// before the resource monitor decides on it; its next step starts where
    /// the last whole MB ended. `wanted` as for [`Execution::reclaimed`].
    pub fn report_reclaims(&mut self, now: Micros, wanted: impl Fn(usize) -> Option<u64>, events: &mut EventQueue) {
        let under_way: Vec<((u32, u32), f64)> = self.reclaiming.iter().map(|(&k, &v)| (k, v)).collect();
        for ((job, task), from) in under_way {
            let t = (!self.released(job)).then(|| self.task(job, task));
            let Some(t) = t.filter(|t| t.running && !t.restoring && t.moving_mb > 0) else {
                self.reclaiming.remove(&(job, task));
                continue;
            };
            let Some(want) = wanted(t.node as usize) else { continue };
            let per_mb = self.swap_us_per_mb(job, task).0;
            let t = self.task(job, task);
            let mb = ((now as f64 - from) / per_mb).floor().min(t.moving_mb as f64) as u64;
            if mb == 0 {
                continue;
            }
            t.swapped_mb += mb;
            t.moving_mb -= mb;
            t.held.mem_mb -= mb;
            t.mem_epoch += 1;
            self.usage.held_mem -= mb;
            self.reports.push(Observation::MemoryReclaimed { task: task_ref(job, task), mem_mb: mb });
            // The next step starts where this whole MB ended (at most a MB's time ago).
            let done = from + mb as f64 * per_mb;
            self.next_reclaim_step(done, job, task, Some(want.saturating_sub(mb)), events);
        }
    }

    /// A step of memory has been swapped out; `wanted` gives the core's
    /// `memory_wanted` on a node, before it hears of this step.
    #[allow(clippy::too_many_arguments)]
    pub fn reclaimed(
        &mut self,
        now: Micros,
        job: u32,
        task: u32,
        epoch: u32,
        mb: u16,
        wanted: impl FnOnce(usize) -> Option<u64>,
        events: &mut EventQueue,
    ) {
        let mb = mb as u64;
        let t = self.task(job, task);
        if t.mem_epoch != epoch || !t.running {
            return;
        }
        let wanted = wanted(t.node as usize);
        t.swapped_mb += mb;
        t.moving_mb -= mb;
        t.held.mem_mb -= mb;
        self.usage.held_mem -= mb;
        self.reports.push(Observation::MemoryReclaimed { task: task_ref(job, task), mem_mb: mb });
        self.next_reclaim_step(now as f64, job, task, wanted.map(|w| w.saturating_sub(mb)), events);
    }

    /// Gives a task its full allocation back: it reads its swapped-out memory
    /// back at the restore rate, holding its CPU without progress (waste),
    /// and takes that memory as it reads it.
    pub fn resume(&mut self, now: Micros, job: u32, task: u32, full: Resources, events: &mut EventQueue) {
        let per_mb = self.swap_us_per_mb(job, task).1;
        let t = self.task(job, task);
        let back = t.swapped_mb.min(full.mem_mb);
        let before = t.held.mem_mb;
        t.held = full;
        t.held.mem_mb -= back;
        t.frozen = false;
        t.restoring = true;
        t.moving_mb = back;
        t.mem_epoch += 1;
        let restore = (t.swapped_mb as f64 * per_mb).ceil() as Micros;
        let (epoch, cores, held) = (t.mem_epoch, full.cpu_milli as f64 / 1000.0, t.held.mem_mb);
        self.usage.held_mem = self.usage.held_mem + held - before;
        self.held_core_us += cores * restore as f64;
        events.push(now + restore, Event::Restored { job, task, epoch });
        self.update_rates(now, job, task, events);
    }

    /// A resumed task has its memory back and runs again. The memory it read
    /// back came in at an even rate since its resumption: the usage integral
    /// gets that ramp's area.
    pub fn restored(&mut self, now: Micros, job: u32, task: u32, epoch: u32, events: &mut EventQueue) {
        let per_mb = self.swap_us_per_mb(job, task).1;
        let t = self.task(job, task);
        if t.mem_epoch != epoch || !t.restoring {
            return;
        }
        let back = std::mem::take(&mut t.moving_mb);
        let took = (t.swapped_mb as f64 * per_mb).ceil();
        t.restoring = false;
        t.swapped_mb = 0;
        t.held.mem_mb += back;
        self.usage.held_mem += back;
        self.usage.mem_area += back as f64 * took / 2.0;
        self.reports.push(Observation::Resumed(task_ref(job, task)));
        self.update_rates(now, job, task, events);
    }
}
