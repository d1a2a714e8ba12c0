//! The driver around a scheduler running built-in plugins: the timers a
//! reservation and the resource monitor name.

use pliant_core::model::{JobClass, JobId, JobRequest, PhaseRequest, TaskRef, TaskRequest};
use pliant_core::policy::Params;
use pliant_core::{Driver, Micros, Observation, Pass, Resources, Scheduler, SECOND};
use pliant_plugins::preset;

const SLOT: Resources = Resources::cores_gb(1, 4);

/// Settles `now`: how many actions its passes took, and the timer the
/// last one named.
fn settle(d: &mut Driver, now: Micros) -> (usize, Option<Micros>) {
    let mut out = Vec::new();
    loop {
        if let Pass::Settled { timer } = d.pass(now, &mut out) {
            return (out.len(), timer);
        }
    }
}

/// timeout-reserve (60 s) on two slots: H's phase 0 (two tasks) runs,
/// then one task of phase 1. Task 0 ends at 10 s and its slot is kept for
/// H until 70 s, which the driver names once, however often 10 s is
/// settled; the timer goes off at 70 s, not before, and the slot lapses.
#[test]
fn a_reservation_timer_is_named_once_and_goes_off_at_its_instant() {
    let policy = preset("timeout-reserve", &Params::default()).unwrap();
    let mut d = Driver::new(Scheduler::new(&[SLOT, SLOT], policy).unwrap());
    assert_eq!(d.next_deadline(), None);
    let phase = |deps: Vec<u32>, n: usize| PhaseRequest {
        deps,
        coupled: false,
        local: false,
        tasks: vec![TaskRequest { resources: SLOT, estimate: None }; n],
    };
    let h = JobRequest {
        id: JobId(0),
        submit: 0,
        class: JobClass::Short,
        priority: 9,
        phases: vec![phase(vec![], 2), phase(vec![0], 1)],
        elastic: None,
    };
    d.observe(0, Observation::JobSubmitted(h)).unwrap();
    assert_eq!(settle(&mut d, 0), (2, None));
    d.observe(10 * SECOND, Observation::TaskFinished(TaskRef { job: JobId(0), task: 0 })).unwrap();
    assert_eq!(settle(&mut d, 10 * SECOND), (0, Some(70 * SECOND)));
    assert_eq!(settle(&mut d, 10 * SECOND), (0, None));
    assert_eq!(d.next_deadline(), Some(70 * SECOND));
    assert!(!d.fire(70 * SECOND - 1));
    assert_eq!(d.core().reservation().idle(), SLOT);
    assert!(d.fire(70 * SECOND));
    assert_eq!(settle(&mut d, 70 * SECOND), (0, None));
    assert_eq!((d.next_deadline(), d.core().reservation().idle()), (None, Resources::ZERO));
}

/// ip (monitor every 3 s): the first run is due at 3 s; a run at 3.5 s
/// makes the next due at 6.5 s, which is then the driver's deadline.
#[test]
fn the_monitor_runs_one_period_after_its_last_run() {
    let policy = preset("ip", &Params::default()).unwrap();
    let mut d = Driver::new(Scheduler::new(&[SLOT], policy).unwrap());
    assert_eq!(d.next_deadline(), Some(3 * SECOND));
    assert!(!d.monitor_due(3 * SECOND - 1));
    assert!(d.monitor_due(3 * SECOND));
    d.monitor(3 * SECOND + SECOND / 2, &mut Vec::new());
    assert!(!d.monitor_due(6 * SECOND));
    assert_eq!(d.next_deadline(), Some(6 * SECOND + SECOND / 2));
}
