//! Per-class summaries: count, failures, and the JCT and queueing-delay
//! distributions (mean, p50, p90, p95, p99) with the CoV of JCT.

use crate::JobRecord;
use pliant_core::model::{JobClass, PriorityLevel};
use pliant_core::time::to_secs_f64;
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

/// Mean and percentiles of a distribution, in seconds. With no values
/// (`count` 0) every figure is 0 in Rust and `null` in JSON: nothing was measured.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Stats {
    /// How many values (not serialised).
    pub count: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
}

impl Serialize for Stats {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let measured = |x: f64| (self.count > 0).then_some(x);
        let mut st = serializer.serialize_struct("Stats", 5)?;
        st.serialize_field("mean", &measured(self.mean))?;
        st.serialize_field("p50", &measured(self.p50))?;
        st.serialize_field("p90", &measured(self.p90))?;
        st.serialize_field("p95", &measured(self.p95))?;
        st.serialize_field("p99", &measured(self.p99))?;
        st.end()
    }
}

/// A class's summary.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct ClassSummary {
    /// Jobs of the class.
    pub jobs: usize,
    /// Of which failed (excluded from JCT, as in BIG-C §5.2 footnote 4).
    pub failed: usize,
    /// Job completion time of finished jobs.
    pub jct: Stats,
    /// The owner's JCT over every job that ended, a failed one counted to its
    /// resubmission's end ([`JobRecord::jct_retry`]).
    pub jct_retry: Stats,
    /// Queueing delay of jobs that started.
    pub queue_delay: Stats,
    /// Coefficient of variation of JCT (standard deviation over mean); `None`
    /// (JSON `null`) when no job of the class finished.
    pub cov: Option<f64>,
    /// Tasks of the class's jobs.
    pub tasks: u64,
    /// Times tasks of the class's jobs were preempted (any mechanism); over
    /// `tasks`, comparable to the checkpoint paper's Table 1.
    pub preemptions: u64,
    /// Slowdown of finished jobs (JCT over JCT alone), when measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown: Option<Stats>,
}

/// Nearest-rank percentile of sorted values (`q` in 0..=100); 0 for no values.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn stats(mut v: Vec<f64>) -> (Stats, Option<f64>) {
    if v.is_empty() {
        return (Stats::default(), None);
    }
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    let cov = if mean > 0.0 { var.sqrt() / mean } else { 0.0 };
    let s = Stats {
        count: v.len(),
        mean,
        p50: percentile(&v, 50.0),
        p90: percentile(&v, 90.0),
        p95: percentile(&v, 95.0),
        p99: percentile(&v, 99.0),
    };
    (s, Some(cov))
}

/// Summarises the jobs of `class`.
pub fn summarise(jobs: &[JobRecord], class: JobClass) -> ClassSummary {
    summarise_where(jobs, |j| j.class == class)
}

/// Summarises the jobs of a priority level (checkpoint paper §2: free, middle, production).
pub fn summarise_level(jobs: &[JobRecord], level: PriorityLevel) -> ClassSummary {
    summarise_where(jobs, |j| PriorityLevel::of(j.priority) == level)
}

fn summarise_where(jobs: &[JobRecord], keep: impl Fn(&JobRecord) -> bool) -> ClassSummary {
    let of_class: Vec<&JobRecord> = jobs.iter().filter(|j| keep(j)).collect();
    let failed = of_class.iter().filter(|j| j.failed).count();
    let (jct, cov) = stats(of_class.iter().filter(|j| !j.failed).filter_map(|j| j.jct()).map(to_secs_f64).collect());
    let (jct_retry, _) = stats(of_class.iter().filter_map(|j| j.jct_retry()).map(to_secs_f64).collect());
    let (queue_delay, _) = stats(of_class.iter().filter_map(|j| j.queue_delay()).map(to_secs_f64).collect());
    let tasks = of_class.iter().map(|j| j.tasks as u64).sum();
    let preemptions = of_class.iter().map(|j| j.preemptions as u64).sum();
    let slowdowns: Vec<f64> = of_class.iter().filter(|j| !j.failed).filter_map(|j| j.slowdown()).collect();
    let slowdown = (!slowdowns.is_empty()).then(|| stats(slowdowns).0);
    ClassSummary { jobs: of_class.len(), failed, jct, jct_retry, queue_delay, cov, tasks, preemptions, slowdown }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::SECOND;

    fn job(class: JobClass, submit_s: u64, start_s: u64, end_s: Option<u64>) -> JobRecord {
        JobRecord {
            name: String::new(),
            class,
            priority: 0,
            submit: submit_s * SECOND,
            first_start: Some(start_s * SECOND),
            end: end_s.map(|e| e * SECOND),
            failed: end_s.is_none(),
            tasks: 1,
            preemptions: 0,
            attempts: 1,
            kills: 0,
            relaunches: 0,
            stalled: 0,
            retry_end: None,
            alone: None,
        }
    }

    // Priorities 0 and 1 are free, 5 middle, 10 production: the free level
    // has JCTs 10 s and 30 s (mean 20), middle one job of 1000 s.
    #[test]
    fn level_summary_groups_priorities() {
        let mut jobs = vec![
            job(JobClass::Short, 0, 0, Some(10)),
            job(JobClass::Long, 10, 12, Some(40)),
            job(JobClass::Long, 0, 0, Some(1000)),
        ];
        jobs[1].priority = 1;
        jobs[2].priority = 5;
        jobs[1].tasks = 4;
        jobs[1].preemptions = 3;
        let free = summarise_level(&jobs, PriorityLevel::Free);
        assert_eq!((free.jobs, free.jct.mean, free.tasks, free.preemptions), (2, 20.0, 5, 3));
        assert_eq!(summarise_level(&jobs, PriorityLevel::Middle).jct.mean, 1000.0);
        assert_eq!(summarise_level(&jobs, PriorityLevel::Production).jobs, 0);
    }

    /// An empty class, or one whose every job failed, measured no JCT: `null`
    /// in JSON, not 0.
    #[test]
    fn nothing_measured_is_null() {
        let failed = vec![job(JobClass::Short, 0, 0, None)];
        let s = summarise(&failed, JobClass::Short);
        let doc = serde_json::to_value(s).unwrap();
        assert!(doc["jct"]["mean"].is_null() && doc["jct"]["p99"].is_null() && doc["cov"].is_null(), "{doc}");
        assert_eq!(doc["queue_delay"]["mean"], 0.0, "it started: its queueing delay was measured");
        let empty = serde_json::to_value(summarise(&failed, JobClass::Long)).unwrap();
        assert!(empty["queue_delay"]["p50"].is_null() && empty["jct_retry"]["mean"].is_null(), "{empty}");
        assert_eq!(empty["jobs"], 0);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 5.0);
        assert_eq!(percentile(&v, 90.0), 9.0);
        assert_eq!(percentile(&v, 95.0), 10.0);
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
    }

    // Short JCTs 10 s and 30 s: mean 20, sd 10, CoV 0.5. Queue delays 0 s, 2 s and 5 s
    // (the failed job started too). The long job is not counted.
    #[test]
    fn class_summary_by_hand() {
        let jobs = vec![
            job(JobClass::Short, 0, 0, Some(10)),
            job(JobClass::Short, 10, 12, Some(40)),
            job(JobClass::Short, 5, 10, None),
            job(JobClass::Long, 0, 0, Some(1000)),
        ];
        let s = summarise(&jobs, JobClass::Short);
        assert_eq!((s.jobs, s.failed), (3, 1));
        assert_eq!(s.jct.mean, 20.0);
        assert_eq!(s.jct.p50, 10.0);
        assert_eq!(s.jct.p99, 30.0);
        assert!((s.cov.unwrap() - 0.5).abs() < 1e-12);
        assert!((s.queue_delay.mean - 7.0 / 3.0).abs() < 1e-12);
        // The owner's view: a failed job counts once its resubmission ended;
        // submitted at 5 and resubmission ended at 100: JCTs 10, 30 and 95.
        assert_eq!(s.jct_retry, s.jct);
        let mut jobs = jobs;
        jobs[2].retry_end = Some(100 * SECOND);
        let s = summarise(&jobs, JobClass::Short);
        assert_eq!((s.jct.p99, s.jct_retry.p50, s.jct_retry.p99), (30.0, 30.0, 95.0));
        assert_eq!(s.queue_delay.p95, 5.0);
    }
}
