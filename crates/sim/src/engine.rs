//! The discrete-event loop: feed arrivals and task completions to the core
//! through the step driver (`pliant_core::driver`, shared with the live
//! manager), carry out its actions on the execution model, and record what
//! happens. The driver's timers and monitor runs are events in the queue.

use crate::event_queue::{Event, EventQueue};
use crate::execution::{Due, Execution, JobExec, Usage};
use crate::held::HeldJob;
use crate::records::Records;
use crate::spares::Spares;
use crate::{SimError, SimOptions};
use pliant_core::model::{JobClass, JobId, JobRequest, TaskRef};
use pliant_core::policy::Policy;
use pliant_core::time::to_secs_f64;
use pliant_core::{Action, Driver, LiveTable, MechanismKind, Micros, Observation, Pass, Scheduler};
use pliant_metrics::{RunRecord, Sample, SimCost};
use pliant_workload::{Cluster, Job, Workload};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::iter::Peekable;
use std::sync::atomic::{AtomicU64, Ordering};

struct Run<'w, J: Iterator<Item = Cow<'w, Job>>> {
    /// The jobs still to arrive, in submission order.
    arrivals: Peekable<J>,
    /// The jobs that arrived and whose owner still waits for them, by
    /// workload index (a failed one is submitted again from it).
    live: LiveTable<HeldJob>,
    driver: Driver,
    exec: Execution,
    events: EventQueue,
    /// Per workload job, in submission order.
    records: Records,
    /// The workload job behind each core job (a resubmission shares its origin's).
    origin: Vec<u32>,
    preemptions: BTreeMap<String, u64>,
    /// The execution model's reports being told to the core (a buffer kept
    /// between events, so that telling them allocates nothing).
    telling: Vec<Observation>,
    /// An arriving job's request to the core (a buffer made anew for each).
    request: JobRequest,
    timeline: Vec<Sample>,
    ended_jobs: usize,
    processed: u64,
    actions: Vec<Action>,
    total_cpu: f64,
    total_mem: f64,
    /// Actions applied so far, and as of the last check for a stall.
    actions_applied: u64,
    seen_actions: u64,
    /// When something last progressed or changed.
    last_change: Micros,
    /// The policy checkpoints adaptively: its kills are Algorithm 1's choice.
    adaptive: bool,
    /// Shared count of ended jobs, for a progress display.
    progress: Option<&'w AtomicU64>,
    /// Core-microseconds of idle reserved slots.
    reserved_area: f64,
    /// Every action with its time, when the options ask for them.
    decisions: Option<Vec<(Micros, Action)>>,
    /// The preemptions the core chose per victim, with their estimates.
    choices: Vec<pliant_core::policy::cost::Choice>,
    /// Core jobs whose application attempt a kill failed, to be ended once
    /// the actions at hand are carried out (`kill_model=spark`).
    failing: Vec<u32>,
    /// How many of `SimOptions::node_swap_rates` the core was given.
    given_swap_rates: usize,
}

/// `yarn.resourcemanager.am.max-attempts`'s default (YARN's
/// yarn-default.xml; Spark's `spark.yarn.maxAppAttempts` defaults to it):
/// an application whose attempts fail this many times fails.
const AM_MAX_ATTEMPTS: u32 = 2;

/// Simulated time without progress or decisions after which a run is stuck.
const STALL_LIMIT: Micros = 3600 * pliant_core::SECOND;

/// Replays `workload` under `policy` and returns what happened.
pub fn simulate(workload: &Workload, policy: Policy, opts: &SimOptions) -> Result<RunRecord, SimError> {
    simulate_counting(workload, policy, opts, None)
}

/// As [`simulate`], with the jobs taken one by one as the run reaches their
/// submission times (`jobs` in submission order): the run holds only the
/// jobs that have arrived and not yet ended, so a workload made as it is
/// taken (`pliant_workload::scenarios::stream`) is never held whole.
/// Slowdown (`opts.slowdown`) is refused: it runs every job again, alone,
/// so it needs the whole workload ([`simulate`]).
pub fn simulate_stream(
    cluster: &Cluster,
    jobs: impl Iterator<Item = Job>,
    policy: Policy,
    opts: &SimOptions,
) -> Result<RunRecord, SimError> {
    simulate_stream_counting(cluster, jobs, policy, opts, None)
}

/// As [`simulate_stream`], adding one to `ended_jobs` as each job finishes
/// or fails, so that another thread can show progress.
pub fn simulate_stream_counting(
    cluster: &Cluster,
    jobs: impl Iterator<Item = Job>,
    policy: Policy,
    opts: &SimOptions,
    ended_jobs: Option<&AtomicU64>,
) -> Result<RunRecord, SimError> {
    if opts.slowdown {
        return Err(SimError::Refused(
            "slowdown runs every job again alone, which needs the whole workload: simulate it, do not stream it",
        ));
    }
    Ok(run(cluster, jobs.map(Cow::Owned), policy, opts, ended_jobs)?.0)
}

/// As [`simulate`], adding one to `ended_jobs` as each job finishes or fails,
/// so that another thread can show progress.
pub fn simulate_counting(
    workload: &Workload,
    policy: Policy,
    opts: &SimOptions,
    ended_jobs: Option<&AtomicU64>,
) -> Result<RunRecord, SimError> {
    let jobs = workload.jobs.iter().map(Cow::Borrowed);
    let (mut record, policy) = run(&workload.cluster, jobs, policy, opts, ended_jobs)?;
    if opts.slowdown {
        crate::alone::measure_alone(workload, &policy, opts, &mut record.jobs)?;
    }
    Ok(record)
}

/// Runs `jobs` (in submission order) on `cluster` under `policy`; returns
/// the record and the policy as the core ran it (its ApplicationMaster and
/// heartbeats filled in from the cluster), which slowdown's runs alone reuse.
fn run<'w>(
    cluster: &Cluster,
    jobs: impl Iterator<Item = Cow<'w, Job>>,
    policy: Policy,
    opts: &SimOptions,
    ended_jobs: Option<&'w AtomicU64>,
) -> Result<(RunRecord, Policy), SimError> {
    let started = std::time::Instant::now();
    let adaptive = matches!(
        policy.preemption.map(|p| p.mechanism),
        Some(pliant_core::policy::MechanismSpec::Checkpoint(c)) if c.adaptive
    );
    // What the policy leaves to the workload: its cluster's ApplicationMaster,
    // and DSS's backfill (none, PEEK's `-r` alone) where it runs DSS's.
    // DSS's heartbeats too, where the workload's model is DSS's.
    let dss = cluster.am.is_some();
    // Only YARN's node-by-node presets run ApplicationMasters that launch tasks.
    let yarn =
        matches!(policy.order, pliant_core::policy::JobOrder::Fair | pliant_core::policy::JobOrder::ShortestRemaining);
    let am = policy.am.or(cluster.am);
    let backfill = policy.backfill.or(Some(am.is_none_or(|a| a.is_zero())));
    let per_heartbeat = policy.per_heartbeat.or(Some(dss as u32));
    let am_start = policy.am_start.or(Some(if dss { pliant_core::SECOND } else { 0 }));
    // Under Spark's kill semantics the application fails itself (its
    // executor-failure and stage-attempt limits), not the core's count of
    // a task's attempts.
    let max_attempts = match opts.exec.kill_model {
        crate::KillModel::Spark => u32::MAX,
        crate::KillModel::Tasks => policy.max_attempts,
    };
    let policy = Policy { am, backfill, per_heartbeat, am_start, max_attempts, ..policy };
    let mut core = Scheduler::new(&cluster.nodes, policy)?;
    if opts.without_checkpoint_tier {
        (0..cluster.nodes.len()).for_each(|node| core.unpriced_mechanisms(node, &[MechanismKind::Checkpoint]));
    }
    for (node, can) in opts.node_mechanisms.iter().enumerate() {
        core.restrict_mechanisms(node, can);
    }
    let total = cluster.total();
    let mut run = Run {
        arrivals: jobs.peekable(),
        live: LiveTable::default(),
        exec: Execution {
            model: opts.exec.clone(),
            jobs: LiveTable::default(),
            node_cpu: cluster.nodes.iter().map(|n| n.cpu_milli).collect(),
            usage: Usage::default(),
            lost_core_us: 0.0,
            held_core_us: 0.0,
            reports: Vec::new(),
            ckpt: crate::checkpoint::CheckpointExec::new(cluster.nodes.len()),
            disks: crate::disk_share::DiskShare::new(cluster.nodes.len(), opts.exec.node_disk_mb_s),
            launch_delay: if yarn { 2 * am_start.unwrap_or(0) } else { 0 },
            own_rates: opts.task_swap_rates.iter().map(|r| ((r.job, r.task), *r)).collect(),
            spare_tasks: Spares::default(),
            reclaiming: BTreeMap::new(),
        },
        driver: Driver::new(core),
        events: EventQueue::default(),
        records: Records::default(),
        origin: Vec::new(),
        preemptions: BTreeMap::new(),
        telling: Vec::new(),
        request: JobRequest {
            id: JobId(0),
            submit: 0,
            class: JobClass::Short,
            priority: 0,
            phases: Vec::new(),
            elastic: None,
        },
        timeline: Vec::new(),
        ended_jobs: 0,
        processed: 0,
        actions: Vec::new(),
        total_cpu: total.cpu_milli as f64,
        total_mem: total.mem_mb as f64,
        actions_applied: 0,
        seen_actions: 0,
        last_change: 0,
        adaptive,
        progress: ended_jobs,
        reserved_area: 0.0,
        decisions: opts.record_decisions.then(Vec::new),
        choices: Vec::new(),
        failing: Vec::new(),
        given_swap_rates: 0,
    };
    if let Some(at) = run.driver.next_monitor() {
        run.events.push(at, Event::Monitor);
    }
    run.events.push(0, Event::Sample);
    run.main_loop(opts)?;

    let now = run.exec.usage.last;
    let span = now.max(1) as f64;
    let u = &run.exec.usage;
    let nodes = cluster.nodes.len() as f64;
    let policy = run.driver.core().policy().clone();
    let energy =
        opts.power.idle_w * nodes * to_secs_f64(now) + (opts.power.peak_w - opts.power.idle_w) * u.node_area / 1e6;
    let mut record = RunRecord {
        policy: run.driver.core().policy().name.clone(),
        cpu_mean: u.cpu_area / span / run.total_cpu,
        mem_mean: u.mem_area / span / run.total_mem,
        timeline: run.timeline,
        waste_core_seconds: (run.exec.lost_core_us + run.exec.held_core_us) / 1e6,
        lost_work_core_seconds: run.exec.lost_core_us / 1e6,
        reserved_core_seconds: run.reserved_area / 1e6,
        barrier_idle_core_seconds: opts.barrier_idle.then_some(u.barrier_idle_area / 1e9),
        energy_joules: energy,
        preemptions: run.preemptions,
        checkpoints: run.exec.ckpt.counts,
        cluster_cores: run.total_cpu / 1000.0,
        makespan: now,
        cost: SimCost { events: run.processed, wall_seconds: started.elapsed().as_secs_f64() },
        jobs: Vec::new(),
        decisions: run.decisions.unwrap_or_default(),
        choices: run.choices,
    };
    let records = run.records;
    // The rest of the run (its tables at their largest) is freed before the
    // per-job records are made, so that the two are never held at once.
    drop((run.driver, run.exec, run.live, run.events, run.origin));
    record.jobs = records.into_records();
    Ok((record, policy))
}

impl<'w, J: Iterator<Item = Cow<'w, Job>>> Run<'w, J> {
    fn main_loop(&mut self, opts: &SimOptions) -> Result<(), SimError> {
        loop {
            let arrival = self.arrivals.peek().map(|j| j.submit);
            if self.ended_jobs == self.exec.jobs.len() && arrival.is_none() {
                break;
            }
            let now = match (arrival, self.events.peek_time()) {
                (Some(a), Some(e)) => a.min(e),
                (Some(a), None) => a,
                (None, Some(e)) => e,
                (None, None) => break,
            };
            self.reserved_area +=
                self.driver.core().reservation().idle().cpu_milli as f64 / 1000.0 * (now - self.exec.usage.last) as f64;
            self.exec.usage.advance(now);
            self.give_swap_rates(now, &opts.node_swap_rates);
            // Peeked before it is taken, so that a job not yet due stays where it is.
            while self.arrivals.peek().is_some_and(|j| j.submit == now) {
                let job = self.arrivals.next().expect("peeked");
                let index = self.arrive(job);
                let id = self.submit(index);
                self.live[index].request_into(id, now, &mut self.request);
                self.driver.submit(&self.request)?;
                self.processed += 1;
            }
            while self.events.peek_time() == Some(now) {
                let (_, event) = self.events.pop().expect("peeked");
                self.handle(now, event, opts)?;
                self.report(now)?;
            }
            self.schedule(now)?;
            // With nothing running and nothing left to arrive, no event can free
            // resources any more: the remaining jobs can never start.
            let unfinished = self.exec.jobs.len() - self.ended_jobs;
            if self.exec.usage.running_tasks == 0
                && self.driver.next_timer().is_none()
                && self.arrivals.peek().is_none()
                && unfinished > 0
            {
                return Err(SimError::Stuck { unfinished, at: now });
            }
            // Tasks may hold resources without progressing (suspended, stalled):
            // if nothing has progressed or changed for an hour of simulated time
            // after the last arrival, nothing ever will.
            if self.exec.usage.busy_cpu > 0.0
                || self.arrivals.peek().is_some()
                || self.actions_applied > self.seen_actions
            {
                self.seen_actions = self.actions_applied;
                self.last_change = now;
            } else if now - self.last_change > STALL_LIMIT {
                return Err(SimError::Stuck { unfinished: self.exec.jobs.len() - self.ended_jobs, at: now });
            }
        }
        Ok(())
    }

    /// Gives the core the swap rates of `given` due by `now` (from
    /// `given_swap_rates` on), before anything at `now` is decided.
    fn give_swap_rates(&mut self, now: Micros, given: &[crate::NodeSwapRates]) {
        while let Some(r) = given.get(self.given_swap_rates).filter(|r| r.at <= now) {
            self.driver.set_swap_rates(r.node as usize, r.rates);
            self.given_swap_rates += 1;
        }
    }

    fn handle(&mut self, now: Micros, event: Event, opts: &SimOptions) -> Result<(), SimError> {
        if let Some(job) = event.job() {
            if self.exec.released(job) {
                // Every step of a finished job's tasks is stale; memory steps
                // count as events all the same, as they did before release.
                if event.counted_when_stale() {
                    self.processed += 1;
                }
                return Ok(());
            }
        }
        match event {
            Event::TaskFinish { job, task, epoch } => {
                let job_done = match self.exec.due(now, job, task, epoch, &mut self.events) {
                    Due::Stale => return Ok(()),
                    Due::Tick => {
                        self.processed += 1;
                        return Ok(());
                    }
                    Due::Finished { job_done } => job_done,
                };
                self.processed += 1;
                self.driver.observe(now, Observation::TaskFinished(TaskRef { job: JobId(job), task }))?;
                if job_done {
                    let index = self.origin[job as usize] as usize;
                    self.close_record(job);
                    self.exec.release(job);
                    self.live.remove(index);
                    // A resubmission's end is its owner's; the first attempt's is the job's.
                    self.records.get_mut(index).end(now);
                    self.job_ended(true);
                }
            }
            Event::CopyFinish { job, task, epoch } => {
                if self.exec.copy_won(job, task, epoch) {
                    self.handle(
                        now,
                        Event::TaskFinish { job, task, epoch: self.exec.jobs[job as usize].tasks[task as usize].epoch },
                        opts,
                    )?;
                }
            }
            Event::Reclaimed { job, task, epoch, mem_mb } => {
                self.processed += 1;
                let core = self.driver.core();
                self.exec.reclaimed(
                    now,
                    job,
                    task,
                    epoch,
                    mem_mb,
                    |node| core.memory_wanted().on(node),
                    &mut self.events,
                );
            }
            Event::Restored { job, task, epoch } => {
                self.processed += 1;
                self.exec.restored(now, job, task, epoch, &mut self.events);
            }
            Event::Dumped { job, task, epoch } => {
                self.processed += 1;
                self.exec.dumped(now, job, task, epoch, &mut self.events);
            }
            Event::Monitor => {
                self.processed += 1;
                self.report_reclaims(now)?;
                let mut actions = std::mem::take(&mut self.actions);
                self.driver.monitor(now, &mut actions);
                if let Some(planner) = self.driver.planner_mut() {
                    self.choices.extend(planner.take_choices());
                }
                for a in actions.drain(..) {
                    self.apply(now, a);
                }
                self.actions = actions;
                self.end_failed_attempts(now);
                self.report(now)?;
                if let Some(at) = self.driver.next_monitor() {
                    self.events.push(at, Event::Monitor);
                }
            }
            Event::Wake => {
                self.processed += 1;
                self.driver.fire(now);
            }
            Event::Sample => {
                self.processed += 1;
                let u = &self.exec.usage;
                self.timeline.push(Sample {
                    time: now,
                    cpu: u.busy_cpu / self.total_cpu,
                    mem: u.held_mem as f64 / self.total_mem,
                });
                self.events.push(now + opts.sample_interval, Event::Sample);
            }
        }
        Ok(())
    }

    /// What a waiting task still needs on the node of task `task` of job
    /// `job` (`Scheduler::memory_wanted`): where its reclaim's next step ends.
    fn memory_wanted(&self, job: u32, task: u32) -> Option<u64> {
        let node = self.exec.jobs[job as usize].tasks[task as usize].node;
        self.driver.core().memory_wanted().on(node as usize)
    }

    /// Tells the core what the reclaims in progress have freed so far.
    fn report_reclaims(&mut self, now: Micros) -> Result<(), SimError> {
        if self.exec.reclaiming.is_empty() {
            return Ok(());
        }
        let wanted = self.driver.core().memory_wanted();
        if wanted.is_empty() {
            return Ok(());
        }
        self.exec.report_reclaims(now, |node| wanted.on(node), &mut self.events);
        self.report(now)
    }

    /// Tells the core what the execution model observed.
    #[inline]
    fn report(&mut self, now: Micros) -> Result<(), SimError> {
        if self.exec.reports.is_empty() {
            return Ok(());
        }
        self.tell(now)
    }

    /// Tells the core the execution model's reports, which are not empty
    /// (out of line: most events have none).
    #[inline(never)]
    fn tell(&mut self, now: Micros) -> Result<(), SimError> {
        std::mem::swap(&mut self.telling, &mut self.exec.reports);
        for obs in self.telling.drain(..) {
            self.driver.observe(now, obs)?;
        }
        Ok(())
    }

    /// Runs allocation passes until the core has nothing more to do at `now`.
    fn schedule(&mut self, now: Micros) -> Result<(), SimError> {
        loop {
            self.report(now)?;
            let mut actions = std::mem::take(&mut self.actions);
            let pass = self.driver.pass(now, &mut actions);
            for a in actions.drain(..) {
                self.apply(now, a);
            }
            self.actions = actions;
            self.end_failed_attempts(now);
            if let Pass::Settled { timer } = pass {
                if let Some(at) = timer {
                    self.events.push(at, Event::Wake);
                }
                return Ok(());
            }
        }
    }

    /// Job `job` arrives: it is kept while its owner waits for it, its
    /// record begun. Returns its workload index.
    fn arrive(&mut self, job: Cow<'w, Job>) -> usize {
        let index = self.records.arrive(&job);
        let id = self.live.push(HeldJob::new(&job));
        debug_assert_eq!(index, id, "records and live jobs are both by arrival");
        id
    }

    /// Makes workload job `index` the next core job (dense ids in
    /// submission order, resubmissions included) and returns its id: the
    /// caller tells the core its request.
    fn submit(&mut self, index: usize) -> JobId {
        let id = JobId(self.exec.jobs.len() as u32);
        self.exec.jobs.push(JobExec::waiting(&self.live[index]));
        self.origin.push(index as u32);
        id
    }

    /// A core job ended; `owner_done` when its owner has nothing more to wait for.
    fn job_ended(&mut self, owner_done: bool) {
        self.ended_jobs += 1;
        if let (true, Some(counter)) = (owner_done, self.progress) {
            counter.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn count_preemption(&mut self, job: JobId, mechanism: MechanismKind) {
        // The mechanism's name is made a key once, at its first preemption.
        match self.preemptions.get_mut(mechanism.name()) {
            Some(count) => *count += 1,
            None => _ = self.preemptions.insert(mechanism.name().to_string(), 1),
        }
        let j = &mut self.exec.jobs[job.0 as usize];
        j.preemptions += 1;
        j.kills += u32::from(mechanism == MechanismKind::Kill);
    }

    /// Adds what core job `job`'s attempt kept while it ran (its first
    /// start, its preemptions, its stalls) to its workload job's record:
    /// once, as it ends or fails, so that the record (cold by then, as the
    /// job may have waited long) is read once per attempt, not per launch.
    fn close_record(&mut self, job: u32) {
        let j = &self.exec.jobs[job as usize];
        let rec = self.records.get_mut(self.origin[job as usize] as usize);
        if j.started() {
            rec.started(j.started_at);
            rec.attempts += 1;
        }
        rec.preemptions += j.preemptions;
        rec.kills += j.kills;
        rec.relaunches += j.relaunches;
        rec.stalled += j.stalled;
    }

    fn apply(&mut self, now: Micros, action: Action) {
        self.actions_applied += 1;
        if let Some(log) = &mut self.decisions {
            log.push((now, action.clone()));
        }
        if let Some(p) = action.preemption() {
            self.count_preemption(p.task.job, p.mechanism);
        }
        match action {
            Action::Launch { task, node, resources } => {
                let job = &mut self.exec.jobs[task.job.0 as usize];
                if !job.started() {
                    let held = &self.live[self.origin[task.job.0 as usize] as usize];
                    job.start(held, &self.exec.model, now, &mut self.exec.spare_tasks);
                } else if job.tasks[task.task as usize].ever_started {
                    job.relaunches += 1;
                }
                self.exec.launch(now, task.job.0, task.task, node.0, resources, &mut self.events);
            }
            Action::Kill { task } => {
                if self.exec.kill(now, task.job.0, task.task, &mut self.events) && !self.failing.contains(&task.job.0) {
                    self.failing.push(task.job.0);
                }
                self.exec.drop_image(task.job.0, task.task);
                if self.adaptive {
                    self.exec.ckpt.counts.adaptive_kills += 1;
                }
            }
            Action::Checkpoint { task, tier } => {
                self.exec.checkpoint(now, task.job.0, task.task, tier, &mut self.events);
            }
            Action::Restore { task, node, resources, image, tier } => {
                self.exec.restore(now, task.job.0, task.task, node.0, resources, image.0, tier, &mut self.events);
            }
            Action::Immediate { task, footprint } => {
                let wanted = self.memory_wanted(task.job.0, task.task);
                self.exec.suspend(now, task.job.0, task.task, footprint, wanted, &mut self.events);
            }
            Action::Suspend { task } => {
                self.exec.freeze(now, task.job.0, task.task, &mut self.events);
            }
            Action::Graceful { task, to } => {
                let wanted = self.memory_wanted(task.job.0, task.task);
                self.exec.shrink(now, task.job.0, task.task, to, wanted, &mut self.events);
            }
            Action::Resume { task, resources } => {
                self.exec.resume(now, task.job.0, task.task, resources, &mut self.events);
            }
            Action::Copy { task, node, resources } => {
                self.exec.copy(now, task.job.0, task.task, node.0, resources, &mut self.events);
            }
            Action::FailJob { job } => self.end_attempt(now, job.0, None),
        }
    }

    /// Ends the application attempts a kill failed (`kill_model=spark`): the
    /// core is told each job aborted; YARN relaunches it from zero as a new
    /// attempt, or after [`AM_MAX_ATTEMPTS`] it fails (BIG-C §5.5: killed
    /// jobs "suffered significant slowdown due to job re-launch", or failed).
    fn end_failed_attempts(&mut self, now: Micros) {
        for job in std::mem::take(&mut self.failing) {
            self.exec.reports.push(Observation::JobAborted(JobId(job)));
            let attempt = self.exec.jobs[job as usize].app_attempt + 1;
            self.end_attempt(now, job, (attempt < AM_MAX_ATTEMPTS).then_some(attempt));
        }
    }

    /// Ends core job `job`'s attempt: its tasks stop. `relaunch`: YARN
    /// starts it again from zero as that application attempt, the same job
    /// to its owner. Otherwise it failed: its record says so, and its owner
    /// submits it again from scratch if the model says owners do (the
    /// user's view of JCT).
    fn end_attempt(&mut self, now: Micros, job: u32, relaunch: Option<u32>) {
        self.exec.fail(now, job, &mut self.events);
        let index = self.origin[job as usize] as usize;
        self.close_record(job);
        if relaunch.is_none() {
            self.records.get_mut(index).fail();
        }
        let again = relaunch.is_some() || self.exec.model.resubmit_failed;
        self.job_ended(!again);
        if !again {
            self.live.remove(index);
            return;
        }
        let id = self.submit(index);
        self.exec.jobs[id.0 as usize].app_attempt = relaunch.unwrap_or(0);
        self.exec.reports.push(Observation::JobSubmitted(self.live[index].request(id, now)));
    }
}
