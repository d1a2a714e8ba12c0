//! Requested load over time: Σ request × time held, per fixed-width bucket of
//! time. The readers fill one with every run the trace shows, at the times it
//! really ran (the trace's load); `pliant trace stats` fills another with the
//! imported jobs as a replay would ask for them, each task from its job's
//! submission for its duration (the replay's load), and prints both as shares
//! of the cluster's capacity.

use pliant_core::{Micros, Resources, SECOND};

/// The default bucket: one hour.
pub const HOUR: Micros = 3600 * SECOND;

/// Requested CPU and memory per bucket of time.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadTimeline {
    /// Width of a bucket.
    pub bucket: Micros,
    /// Core-seconds requested in each bucket.
    pub cpu: Vec<f64>,
    /// MB-seconds requested in each bucket.
    pub mem: Vec<f64>,
    /// Earliest and latest instant any run covered.
    pub span: Option<(Micros, Micros)>,
}

impl Default for LoadTimeline {
    fn default() -> Self {
        LoadTimeline::new(HOUR)
    }
}

/// Most buckets a timeline holds (a bad timestamp should not exhaust memory).
const MAX_BUCKETS: usize = 1 << 20;

impl LoadTimeline {
    /// An empty timeline of `bucket`-wide buckets.
    pub fn new(bucket: Micros) -> Self {
        LoadTimeline { bucket: bucket.max(1), cpu: Vec::new(), mem: Vec::new(), span: None }
    }

    /// Adds `count` runs of `request` held over `[start, end)`.
    pub fn add(&mut self, start: Micros, end: Micros, request: Resources, count: u32) {
        if end <= start {
            return;
        }
        self.span = Some(self.span.map_or((start, end), |(s, e)| (s.min(start), e.max(end))));
        let (cores, mb) = (request.cpu_milli as f64 / 1000.0, request.mem_mb as f64);
        let mut t = start;
        while t < end {
            let i = usize::try_from(t / self.bucket).unwrap_or(MAX_BUCKETS).min(MAX_BUCKETS - 1);
            let next = end.min((i as Micros + 1) * self.bucket).max(t + 1);
            if self.cpu.len() <= i {
                self.cpu.resize(i + 1, 0.0);
                self.mem.resize(i + 1, 0.0);
            }
            let secs = f64::from(count) * (next - t) as f64 / 1e6;
            self.cpu[i] += cores * secs;
            self.mem[i] += mb * secs;
            t = next;
        }
    }

    /// The part of bucket `i` inside the timeline's span, in seconds (the
    /// first and last buckets may be partly covered).
    pub fn covered_seconds(&self, i: usize) -> f64 {
        let Some((s, e)) = self.span else { return 0.0 };
        let (lo, hi) = (i as Micros * self.bucket, (i as Micros + 1) * self.bucket);
        e.min(hi).saturating_sub(s.max(lo)) as f64 / 1e6
    }

    /// Mean requested cores and MB over bucket `i`'s part inside `span`.
    pub fn mean_at(&self, i: usize, span: (Micros, Micros)) -> (f64, f64) {
        let (lo, hi) = (i as Micros * self.bucket, (i as Micros + 1) * self.bucket);
        let secs = span.1.min(hi).saturating_sub(span.0.max(lo)) as f64 / 1e6;
        if secs <= 0.0 {
            return (0.0, 0.0);
        }
        (self.cpu.get(i).copied().unwrap_or(0.0) / secs, self.mem.get(i).copied().unwrap_or(0.0) / secs)
    }

    /// Mean requested cores over `span` (the whole timeline's by default).
    pub fn mean_cpu(&self, span: Option<(Micros, Micros)>) -> f64 {
        let Some((s, e)) = span.or(self.span) else { return 0.0 };
        let secs = e.saturating_sub(s) as f64 / 1e6;
        if secs <= 0.0 {
            return 0.0;
        }
        let (first, last) = ((s / self.bucket) as usize, ((e - 1) / self.bucket) as usize);
        (first..=last).map(|i| self.cpu.get(i).copied().unwrap_or(0.0)).sum::<f64>() / secs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_split_over_buckets() {
        let mut t = LoadTimeline::new(10 * SECOND);
        // 2 cores from 5 s to 25 s: 10 core-s in [0,10), 20 in [10,20), 10 in [20,30).
        t.add(5 * SECOND, 25 * SECOND, Resources::cores_gb(2, 1), 1);
        t.add(12 * SECOND, 14 * SECOND, Resources::cores_gb(1, 1), 3);
        assert_eq!(t.cpu, vec![10.0, 26.0, 10.0]);
        assert_eq!(t.mem[0], 5.0 * 1024.0);
        assert_eq!(t.span, Some((5 * SECOND, 25 * SECOND)));
        assert_eq!(t.covered_seconds(0), 5.0);
        assert_eq!(t.mean_at(1, t.span.unwrap()).0, 2.6);
        assert_eq!(t.mean_cpu(None), (10.0 + 26.0 + 10.0) / 20.0);
    }
}
