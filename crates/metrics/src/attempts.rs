//! Why jobs were late beyond waiting and stalls: their tasks killed, the
//! killed tasks started again, and application attempts thrown away whole.

use crate::JobRecord;
use serde::Serialize;

/// Kills, relaunches and application attempts, summed over a run's jobs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Attempts {
    /// Tasks (containers or executors) killed.
    pub kills: u64,
    /// Killed tasks started again within their attempt.
    pub relaunches: u64,
    /// Application attempts beyond each job's first: YARN's relaunches of
    /// an attempt a kill failed, and owners' resubmissions of failed jobs.
    pub reattempts: u64,
    /// Jobs with more than one attempt.
    pub jobs_reattempted: u64,
}

impl Attempts {
    /// The sums over `jobs`.
    pub fn of(jobs: &[JobRecord]) -> Attempts {
        jobs.iter().fold(Attempts::default(), |mut a, j| {
            a.kills += u64::from(j.kills);
            a.relaunches += u64::from(j.relaunches);
            a.reattempts += u64::from(j.attempts.saturating_sub(1));
            a.jobs_reattempted += u64::from(j.attempts > 1);
            a
        })
    }

    /// Whether anything was killed or attempted again.
    pub fn any(&self) -> bool {
        *self != Attempts::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::model::JobClass;

    fn job(attempts: u32, kills: u32, relaunches: u32) -> JobRecord {
        JobRecord {
            name: "j".into(),
            class: JobClass::Long,
            priority: 0,
            submit: 0,
            first_start: Some(0),
            end: Some(1),
            failed: false,
            tasks: 4,
            preemptions: kills,
            attempts,
            kills,
            relaunches,
            stalled: 0,
            retry_end: None,
            alone: None,
        }
    }

    #[test]
    fn sums_kills_and_relaunches_and_counts_attempts_beyond_the_first() {
        // A job never started has no attempt, one that ran once has one.
        let jobs = [job(0, 0, 0), job(1, 3, 3), job(3, 5, 2), job(2, 0, 0)];
        let a = Attempts::of(&jobs);
        assert_eq!(a, Attempts { kills: 8, relaunches: 5, reattempts: 3, jobs_reattempted: 2 });
        assert!(a.any());
        assert!(!Attempts::of(&[job(1, 0, 0)]).any());
    }
}
