//! The view's per-task waiting requests, as a planner from outside the core
//! reads them: every runnable waiting task once, with its queue, its job's
//! class and priority and its request, short jobs' first within a queue,
//! each queue's summing to its `pending_demand`.
//!
//! The workload: one ⟨8 CPU, 32 GB⟩ node; a long job of four ⟨4, 8⟩ tasks
//! (two run, two wait); a short job of priority 5 (⟨2, 2⟩, ⟨2, 2⟩, ⟨1, 1⟩)
//! arrives at 1 s; the monitor runs at 3 s, before any allocation pass.

mod common;

use common::one_phase_job;
use pliant_core::model::{JobClass, JobId, TaskRef, TaskRequest};
use pliant_core::policy::steps::{Mechanism, Planner, PlannerPlugin, Take, View, Waiting};
use pliant_core::policy::{CustomPlanner, Params, PlannerSpec, Policy};
use pliant_core::{Micros, Observation, Resources, Scheduler, SECOND};
use pliant_plugins::preset;
use std::sync::Mutex;

/// What the recording planner saw: per queue, its waiting tasks and its
/// `pending_demand`; then `waiting_all`.
type Seen = (Vec<(Vec<Waiting>, Resources)>, Vec<Waiting>);

static SEEN: Mutex<Option<Seen>> = Mutex::new(None);

/// Records what the view shows of the waiting tasks and takes nothing.
#[derive(Debug, Clone)]
struct Recorder;

impl Planner for Recorder {
    fn clone_box(&self) -> Box<dyn Planner> {
        Box::new(self.clone())
    }

    fn plan(&mut self, view: &View, _mechanism: &dyn Mechanism, _now: Micros) -> Vec<Take> {
        let queues = (0..view.queue_count()).map(|q| (view.waiting(q).collect(), view.pending_demand(q))).collect();
        *SEEN.lock().unwrap() = Some((queues, view.waiting_all().collect()));
        Vec::new()
    }
}

impl PlannerPlugin for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }

    fn build(&self, _policy: &Policy) -> Box<dyn Planner> {
        Box::new(Recorder)
    }
}

static RECORDER: Recorder = Recorder;

#[test]
fn waiting_shows_each_runnable_waiting_task_with_its_request() {
    let mut policy = preset("pliant", &Params::default()).unwrap();
    policy.preemption.as_mut().unwrap().planner = PlannerSpec::Custom(CustomPlanner(&RECORDER));
    let mut s = Scheduler::new(&[Resources::cores_gb(8, 32)], policy).unwrap();
    let ask = |r: Resources| TaskRequest { resources: r, estimate: None };
    let mut out = Vec::new();
    let long = one_phase_job(0, JobClass::Long, vec![ask(Resources::cores_gb(4, 8)); 4]);
    s.observe(0, Observation::JobSubmitted(long)).unwrap();
    s.schedule(0, &mut out);
    let short_asks = [Resources::cores_gb(2, 2), Resources::cores_gb(2, 2), Resources::cores_gb(1, 1)];
    let mut short = one_phase_job(1, JobClass::Short, short_asks.iter().map(|&r| ask(r)).collect());
    (short.submit, short.priority) = (SECOND, 5);
    s.observe(SECOND, Observation::JobSubmitted(short)).unwrap();
    s.monitor(3 * SECOND, &mut out);

    let (queues, all) = SEEN.lock().unwrap().take().expect("the planner ran");
    for (waiting, demand) in &queues {
        assert_eq!(waiting.iter().fold(Resources::ZERO, |sum, w| sum + w.request), *demand);
        let classes: Vec<JobClass> = waiting.iter().map(|w| w.class).collect();
        assert!(classes.is_sorted_by_key(|&c| c == JobClass::Long), "short jobs' first: {classes:?}");
    }
    assert_eq!(all, queues.iter().flat_map(|(w, _)| w.iter().copied()).collect::<Vec<_>>());

    let mut all = all;
    all.sort_by_key(|w| w.task);
    let long_queue = all[0].queue;
    let task = |job, task| TaskRef { job: JobId(job), task };
    let long = |t| Waiting {
        task: task(0, t),
        queue: long_queue,
        class: JobClass::Long,
        priority: 0,
        request: Resources::cores_gb(4, 8),
    };
    let short_queue = all[2].queue;
    let short = |t: u32| Waiting {
        task: task(1, t),
        queue: short_queue,
        class: JobClass::Short,
        priority: 5,
        request: short_asks[t as usize],
    };
    assert_eq!(all, [long(2), long(3), short(0), short(1), short(2)]);
    assert_eq!(queues[long_queue].0.iter().filter(|w| w.class == JobClass::Long).count(), 2);
}
