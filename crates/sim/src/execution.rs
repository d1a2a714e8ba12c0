//! The ground truth: how tasks really progress on the simulated cluster. The
//! core never reads this; it only hears of its consequences (a task finished).
//!
//! Progress rate of a running task = min(allocated CPU, requested CPU) /
//! requested CPU × memory factor (DESIGN.md). A coupled (Spark-like) phase
//! stalls while any of its started tasks is not running: its siblings wait at
//! the next synchronisation point.

use crate::event_queue::{Event, EventQueue};
use pliant_core::{Micros, Resources};
use pliant_workload::Job;
use std::ops::Range;

/// One task's true state.
#[derive(Debug, Clone)]
pub(crate) struct TaskExec {
    /// True run time at full allocation.
    pub duration: Micros,
    /// Work done so far, in microseconds at full speed, as of `since`.
    pub done: f64,
    /// Current progress rate (0 = stalled, 1 = full speed).
    pub rate: f64,
    pub since: Micros,
    pub epoch: u32,
    pub phase: u32,
    pub node: u32,
    /// What it holds while running (zero otherwise).
    pub held: Resources,
    pub requested: Resources,
    pub running: bool,
    pub ever_started: bool,
}

/// A phase's coupling state.
#[derive(Debug, Clone)]
pub(crate) struct PhaseExec {
    pub coupled: bool,
    pub tasks: Range<u32>,
    /// Started tasks of a coupled phase that are not running now.
    pub stalled_by: u32,
}

/// A job's true state.
#[derive(Debug, Clone)]
pub(crate) struct JobExec {
    pub tasks: Vec<TaskExec>,
    pub phases: Vec<PhaseExec>,
    pub unfinished: u32,
}

impl JobExec {
    pub fn new(job: &Job) -> Self {
        let mut tasks = Vec::new();
        let mut phases = Vec::new();
        for (pi, p) in job.phases.iter().enumerate() {
            let start = tasks.len() as u32;
            for t in &p.tasks {
                tasks.push(TaskExec {
                    duration: t.duration,
                    done: 0.0,
                    rate: 0.0,
                    since: 0,
                    epoch: 0,
                    phase: pi as u32,
                    node: 0,
                    held: Resources::ZERO,
                    requested: t.request,
                    running: false,
                    ever_started: false,
                });
            }
            phases.push(PhaseExec { coupled: p.coupled, tasks: start..tasks.len() as u32, stalled_by: 0 });
        }
        let unfinished = tasks.len() as u32;
        JobExec { tasks, phases, unfinished }
    }
}

/// Cluster-wide usage integrals for utilisation and energy.
#[derive(Debug, Clone, Default)]
pub(crate) struct Usage {
    /// CPU (millicores) used by progressing tasks.
    pub busy_cpu: f64,
    /// Σ over progressing tasks of their CPU over their node's CPU.
    pub busy_nodes: f64,
    /// Memory (MB) held by running tasks.
    pub held_mem: u64,
    pub last: Micros,
    pub cpu_area: f64,
    pub mem_area: f64,
    pub node_area: f64,
}

impl Usage {
    /// Accumulates the integrals up to `now`.
    pub fn advance(&mut self, now: Micros) {
        let dt = (now - self.last) as f64;
        self.cpu_area += self.busy_cpu * dt;
        self.mem_area += self.held_mem as f64 * dt;
        self.node_area += self.busy_nodes * dt;
        self.last = now;
    }
}

/// The true state of every job and the usage it adds up to.
pub(crate) struct Execution {
    pub jobs: Vec<JobExec>,
    pub node_cpu: Vec<u64>,
    pub usage: Usage,
    /// Core-microseconds of work lost to kills.
    pub lost_core_us: f64,
    pub running_tasks: u64,
}

impl Execution {
    /// Settles a task's progress to `now` and gives it a new rate, scheduling
    /// its finish if it progresses.
    pub fn set_rate(&mut self, now: Micros, job: u32, task: u32, rate: f64, events: &mut EventQueue) {
        let t = &mut self.jobs[job as usize].tasks[task as usize];
        t.done = (t.done + t.rate * (now - t.since) as f64).min(t.duration as f64);
        t.since = now;
        let cpu = t.requested.cpu_milli.min(t.held.cpu_milli) as f64;
        let delta = rate - t.rate;
        self.usage.busy_cpu += cpu * delta;
        self.usage.busy_nodes += cpu * delta / self.node_cpu[t.node as usize] as f64;
        t.rate = rate;
        t.epoch += 1;
        if rate > 0.0 {
            let left = (t.duration as f64 - t.done).max(0.0);
            let finish = now + (left / rate).ceil() as Micros;
            events.push(finish, Event::TaskFinish { job, task, epoch: t.epoch });
        }
    }

    fn phase_rate(&self, job: u32, phase: u32) -> f64 {
        let p = &self.jobs[job as usize].phases[phase as usize];
        if p.coupled && p.stalled_by > 0 {
            0.0
        } else {
            1.0
        }
    }

    /// Sets every running task of a phase to the phase's current rate.
    fn refresh_phase(&mut self, now: Micros, job: u32, phase: u32, events: &mut EventQueue) {
        let rate = self.phase_rate(job, phase);
        for task in self.jobs[job as usize].phases[phase as usize].tasks.clone() {
            let t = &self.jobs[job as usize].tasks[task as usize];
            if t.running && t.rate != rate {
                self.set_rate(now, job, task, rate, events);
            }
        }
    }

    /// Starts (or restarts, from zero) a task on `node` holding `held`.
    pub fn launch(&mut self, now: Micros, job: u32, task: u32, node: u32, held: Resources, events: &mut EventQueue) {
        let t = &mut self.jobs[job as usize].tasks[task as usize];
        let restarted = t.ever_started;
        t.ever_started = true;
        t.running = true;
        t.node = node;
        t.held = held;
        t.done = 0.0;
        t.rate = 0.0;
        t.since = now;
        let phase = t.phase;
        self.usage.held_mem += held.mem_mb;
        self.running_tasks += 1;
        let p = &mut self.jobs[job as usize].phases[phase as usize];
        if p.coupled && restarted {
            p.stalled_by -= 1;
            if p.stalled_by == 0 {
                self.refresh_phase(now, job, phase, events);
            }
        }
        let rate = self.phase_rate(job, phase);
        self.set_rate(now, job, task, rate, events);
    }

    /// Stops a running task: its resources are freed; returns the work it had done.
    fn stop(&mut self, now: Micros, job: u32, task: u32, events: &mut EventQueue) -> f64 {
        self.set_rate(now, job, task, 0.0, events);
        let t = &mut self.jobs[job as usize].tasks[task as usize];
        t.running = false;
        self.usage.held_mem -= t.held.mem_mb;
        t.held = Resources::ZERO;
        self.running_tasks -= 1;
        t.done
    }

    /// Kills a running task: its progress is lost (counted as waste) and, in a
    /// coupled phase, its siblings stall until it runs again.
    pub fn kill(&mut self, now: Micros, job: u32, task: u32, events: &mut EventQueue) {
        let done = self.stop(now, job, task, events);
        let t = &mut self.jobs[job as usize].tasks[task as usize];
        self.lost_core_us += done * t.requested.cpu_milli as f64 / 1000.0;
        t.done = 0.0;
        let phase = t.phase;
        let p = &mut self.jobs[job as usize].phases[phase as usize];
        if p.coupled {
            p.stalled_by += 1;
            if p.stalled_by == 1 {
                self.refresh_phase(now, job, phase, events);
            }
        }
    }

    /// Records a task's completion; returns true when its job has no task left.
    pub fn finish(&mut self, now: Micros, job: u32, task: u32, events: &mut EventQueue) -> bool {
        self.stop(now, job, task, events);
        let j = &mut self.jobs[job as usize];
        j.unfinished -= 1;
        j.unfinished == 0
    }

    /// Stops every running task of a failed job, counting their work as lost.
    pub fn fail(&mut self, now: Micros, job: u32, events: &mut EventQueue) {
        for task in 0..self.jobs[job as usize].tasks.len() as u32 {
            if self.jobs[job as usize].tasks[task as usize].running {
                let done = self.stop(now, job, task, events);
                let cpu = self.jobs[job as usize].tasks[task as usize].requested.cpu_milli as f64 / 1000.0;
                self.lost_core_us += done * cpu;
            }
        }
    }
}
