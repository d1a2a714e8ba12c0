//! Picking the window of a trace that holds a given number of jobs of each
//! class, as BIG-C §5.5 took "2202 jobs, of which 2020 are classified as
//! short jobs and 182 as long jobs" over 3.8 hours of the Google trace.
//!
//! Every window of the given length that starts on a multiple of the step
//! and ends by the last submission is counted; a window with more jobs than asked is thinned by a
//! sample (`--sample`, which keeps each job with the same chance whatever
//! its class). A window's miss is the relative error of its sampled job
//! count plus that of its sampled long-job count; the windows with the
//! smallest misses come first.

use pliant_core::model::JobClass;
use pliant_core::Micros;

/// What the window should hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowTarget {
    /// Length of the window.
    pub span: Micros,
    /// Jobs in it (after the sample).
    pub jobs: u64,
    /// Long jobs among them (after the sample).
    pub long: u64,
    /// Windows start on multiples of this step after the first submission.
    pub step: Micros,
}

/// One candidate window and what it holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowPick {
    /// First instant of the window (trace time).
    pub start: Micros,
    /// First instant after it.
    pub end: Micros,
    /// Jobs submitted in it, before the sample.
    pub jobs: u64,
    /// Long jobs among them.
    pub long: u64,
    /// The sample fraction that brings `jobs` to the target (1 when it holds fewer).
    pub sample: f64,
    /// Relative miss of jobs and of long jobs after the sample, summed.
    pub miss: f64,
}

/// The `best` windows for `target` among jobs given as (submission, class),
/// smallest miss first (ties: the earlier window). Empty when the jobs span
/// less than one window.
pub fn pick_windows(jobs: &[(Micros, JobClass)], target: &WindowTarget, best: usize) -> Vec<WindowPick> {
    let mut submits: Vec<(Micros, bool)> = jobs.iter().map(|&(t, c)| (t, c == JobClass::Long)).collect();
    submits.sort_unstable();
    let (Some(first), Some(last)) = (submits.first().map(|j| j.0), submits.last().map(|j| j.0)) else {
        return Vec::new();
    };
    if target.span == 0 || target.step == 0 || last - first < target.span {
        return Vec::new();
    }
    let mut picks = Vec::new();
    let (mut lo, mut hi, mut long) = (0usize, 0usize, 0u64);
    // Starts on the step's grid of trace time, so a window reads as whole steps.
    let mut start = first.div_ceil(target.step) * target.step;
    while start + target.span <= last + 1 {
        let end = start + target.span;
        while hi < submits.len() && submits[hi].0 < end {
            long += u64::from(submits[hi].1);
            hi += 1;
        }
        while lo < hi && submits[lo].0 < start {
            long -= u64::from(submits[lo].1);
            lo += 1;
        }
        let n = (hi - lo) as u64;
        if n > 0 {
            let sample = (target.jobs as f64 / n as f64).min(1.0);
            let rel = |got: f64, want: u64| (got - want as f64).abs() / (want.max(1) as f64);
            let miss = rel(n as f64 * sample, target.jobs) + rel(long as f64 * sample, target.long);
            picks.push(WindowPick { start, end, jobs: n, long, sample, miss });
        }
        start += target.step;
    }
    picks.sort_by(|a, b| a.miss.total_cmp(&b.miss).then(a.start.cmp(&b.start)));
    picks.truncate(best);
    picks
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::SECOND;

    #[test]
    fn the_window_with_the_asked_mix_comes_first_with_its_sample() {
        // 100 jobs, one a second; jobs 50-59 long.
        let jobs: Vec<_> = (0..100u64)
            .map(|i| (i * SECOND, if (50..60).contains(&i) { JobClass::Long } else { JobClass::Short }))
            .collect();
        let target = WindowTarget { span: 20 * SECOND, jobs: 10, long: 5, step: SECOND };
        let picks = pick_windows(&jobs, &target, 3);
        // A 20 s window holds 20 jobs, sampled at 0.5; 10 long of them are in
        // any window that covers 50-59: 5 after the sample.
        assert_eq!(picks[0].start, 40 * SECOND);
        assert_eq!((picks[0].jobs, picks[0].long, picks[0].sample, picks[0].miss), (20, 10, 0.5, 0.0));
        assert!(picks.iter().all(|p| p.miss == 0.0), "{picks:?}");
        assert_eq!(picks.len(), 3);
    }

    #[test]
    fn a_window_longer_than_the_trace_finds_nothing() {
        let jobs = [(0, JobClass::Short), (5 * SECOND, JobClass::Long)];
        let target = WindowTarget { span: 10 * SECOND, jobs: 2, long: 1, step: SECOND };
        assert!(pick_windows(&jobs, &target, 5).is_empty());
        assert!(pick_windows(&[], &target, 5).is_empty());
    }
}
