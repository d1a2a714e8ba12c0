//! Scaling each job's task count so that a replay uses a given share of the
//! cluster, as BIG-C §5.5 replayed the Google trace on 26 nodes: "We scaled
//! down the task numbers in each job to match our cluster capacity … The
//! average cluster utilization was about 17% and 75% for short and long
//! jobs" (each class measured with the cluster dedicated to it).
//!
//! A class's *use* here is its offered CPU: the core-seconds its tasks ask
//! for (requested cores × run time) over the cluster's cores × the span.
//! With the cluster dedicated to one class and that class below the
//! cluster's size, this is the utilisation the paper measured. Every phase
//! of a job of the class keeps `max(1, round(n × f))` of its `n` tasks,
//! spread evenly over the phase (task `⌊i·n/k⌋` for `i < k`), so a job keeps
//! the mix of its tasks' sizes and run times; `f` is found by bisection so
//! that the class's use comes closest to its target.

use pliant_core::model::JobClass;
use pliant_core::Micros;
use pliant_workload::{Phase, Workload};
use std::fmt;

/// The target use of each class, as fractions of the cluster's CPU.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UseShares {
    /// Short jobs' mean use (BIG-C §5.5: 0.17).
    pub short: f64,
    /// Long jobs' mean use (BIG-C §5.5: 0.75).
    pub long: f64,
}

/// What scaling did to one class.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassFit {
    /// Jobs of the class.
    pub jobs: usize,
    /// Tasks before and after.
    pub tasks: (u64, u64),
    /// The class's use before and after, fractions of the cluster's CPU.
    pub use_share: (f64, f64),
    /// The factor applied to each phase's task count.
    pub factor: f64,
}

/// What [`fit_use`] did: per class, over `span`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FitReport {
    /// Short jobs.
    pub short: ClassFit,
    /// Long jobs.
    pub long: ClassFit,
    /// The span the use is averaged over.
    pub span: Micros,
}

impl fmt::Display for FitReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let line = |f: &mut fmt::Formatter<'_>, name: &str, c: &ClassFit| {
            write!(
                f,
                "{name} {} jobs, tasks x{:.4} ({} -> {}), use {:.1} % -> {:.1} %",
                c.jobs,
                c.factor,
                c.tasks.0,
                c.tasks.1,
                c.use_share.0 * 100.0,
                c.use_share.1 * 100.0
            )
        };
        write!(f, "task counts fitted to the cluster's CPU over {:.0} s: ", self.span as f64 / 1e6)?;
        line(f, "short", &self.short)?;
        write!(f, "; ")?;
        line(f, "long", &self.long)
    }
}

/// The evenly spread `k` of a phase's `n` tasks' indices.
fn kept(n: usize, factor: f64) -> impl Iterator<Item = usize> {
    let k = if n == 0 { 0 } else { ((n as f64 * factor).round() as usize).clamp(1, n) };
    (0..k).map(move |i| i * n / k)
}

/// Core-microseconds asked for by the kept tasks of `phases`.
fn demand(phases: &[Phase], factor: f64) -> f64 {
    phases
        .iter()
        .map(|p| {
            kept(p.tasks.len(), factor)
                .map(|i| p.tasks[i].request.cpu_milli as f64 * p.tasks[i].duration as f64)
                .sum::<f64>()
        })
        .sum::<f64>()
        / 1000.0
}

/// Scales the task counts of `w`'s jobs, class by class, so that each
/// class's use over `span` comes closest to its target. Refuses a target a
/// class cannot reach (above its use with every task, or below its use
/// with one task per phase), a pool (Spark executor) phase, and an empty
/// span or cluster.
pub fn fit_use(w: &mut Workload, span: Micros, target: UseShares) -> Result<FitReport, String> {
    let cores: f64 = w.cluster.nodes.iter().map(|n| n.cpu_milli as f64 / 1000.0).sum();
    if span == 0 || cores == 0.0 {
        return Err("the task counts cannot be fitted to an empty span or cluster".into());
    }
    if let Some(j) = w.jobs.iter().find(|j| j.phases.iter().any(|p| !p.stages.is_empty())) {
        return Err(format!("job {}: its executors pull stage tasks; only a trace's tasks can be scaled", j.name));
    }
    let capacity = cores * span as f64;
    let mut fit = |class: JobClass, share: f64| -> Result<ClassFit, String> {
        let name = if class == JobClass::Short { "short" } else { "long" };
        if !(share > 0.0 && share <= 1.0) {
            return Err(format!("the {name} jobs' use must be a fraction in (0, 1], got {share}"));
        }
        let jobs: Vec<usize> = (0..w.jobs.len()).filter(|&i| w.jobs[i].class == class).collect();
        let use_at = |f: f64| jobs.iter().map(|&i| demand(&w.jobs[i].phases, f)).sum::<f64>() / capacity;
        let (least, most) = (use_at(0.0), use_at(1.0));
        if jobs.is_empty() || share > most || share < least {
            return Err(format!(
                "the {name} jobs use {:.1} % of the cluster with all their tasks and {:.1} % with one per phase: \
                 {:.1} % is out of reach (change the window, the sample or --nodes)",
                most * 100.0,
                least * 100.0,
                share * 100.0
            ));
        }
        // Use grows with f in steps; bisection finds the step nearest the target.
        let (mut lo, mut hi) = (0.0, 1.0);
        for _ in 0..60 {
            let mid = (lo + hi) / 2.0;
            if use_at(mid) < share {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let factor = if (use_at(lo) - share).abs() <= (use_at(hi) - share).abs() { lo } else { hi };
        let reached = use_at(factor);
        let before: u64 = jobs.iter().map(|&i| w.jobs[i].tasks().count() as u64).sum();
        for &i in &jobs {
            for p in &mut w.jobs[i].phases {
                p.tasks = kept(p.tasks.len(), factor).map(|t| p.tasks[t]).collect();
            }
        }
        let after: u64 = jobs.iter().map(|&i| w.jobs[i].tasks().count() as u64).sum();
        Ok(ClassFit { jobs: jobs.len(), tasks: (before, after), use_share: (most, reached), factor })
    };
    let short = fit(JobClass::Short, target.short)?;
    let long = fit(JobClass::Long, target.long)?;
    Ok(FitReport { short, long, span })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::{Resources, SECOND};
    use pliant_workload::{Cluster, Job, Task};

    fn job(name: &str, class: JobClass, tasks: usize, cores: u64, secs: u64) -> Job {
        let t = Task { request: Resources::cores_gb(cores, 1), duration: secs * SECOND, estimate: None };
        Job {
            name: name.into(),
            submit: 0,
            class,
            priority: 0,
            phases: vec![Phase::independent(vec![t; tasks])],
            elastic: None,
        }
    }

    fn workload() -> Workload {
        Workload {
            cluster: Cluster { am: None, nodes: vec![Resources::cores_gb(10, 100); 2] },
            jobs: vec![
                job("s0", JobClass::Short, 100, 1, 10),
                job("s1", JobClass::Short, 50, 2, 10),
                job("l0", JobClass::Long, 400, 1, 100),
            ],
        }
    }

    #[test]
    fn each_class_lands_on_its_share_with_its_tasks_spread() {
        let mut w = workload();
        // 20 cores over 100 s = 2,000 core-s: shorts ask 2,000 (100 %), the long job 40,000 (2,000 %).
        let r = fit_use(&mut w, 100 * SECOND, UseShares { short: 0.2, long: 0.5 }).unwrap();
        assert_eq!((r.short.use_share.0, r.long.use_share.0), (1.0, 20.0));
        assert!((r.short.use_share.1 - 0.2).abs() < 0.01, "{r}");
        assert!((r.long.use_share.1 - 0.5).abs() < 0.01, "{r}");
        // A long job of 400 one-core 100 s tasks keeps 10 of them for 50 % of 2,000 core-s.
        assert_eq!(w.jobs[2].phases[0].tasks.len(), 10);
        assert_eq!((r.long.tasks, r.short.jobs), ((400, 10), 2));
        // Both short jobs shrink by the same factor: 20 of 100, 10 of 50.
        assert_eq!((w.jobs[0].phases[0].tasks.len(), w.jobs[1].phases[0].tasks.len()), (20, 10));
    }

    #[test]
    fn an_unreachable_share_is_refused_and_says_why() {
        let mut w = workload();
        let err = fit_use(&mut w, 100 * SECOND, UseShares { short: 0.2, long: 0.001 }).unwrap_err();
        assert!(err.contains("long jobs use 2000.0 % of the cluster with all their tasks and 5.0 % with one"), "{err}");
        let err = fit_use(&mut workload(), 1000 * SECOND, UseShares { short: 0.5, long: 0.5 }).unwrap_err();
        assert!(err.contains("short jobs use 10.0 %"), "{err}");
        assert!(fit_use(&mut workload(), 100 * SECOND, UseShares { short: 0.0, long: 0.5 }).is_err());
    }

    #[test]
    fn kept_tasks_spread_over_the_phase() {
        assert_eq!(kept(10, 0.3).collect::<Vec<_>>(), vec![0, 3, 6]);
        assert_eq!(kept(3, 0.01).collect::<Vec<_>>(), vec![0]);
        assert_eq!(kept(0, 0.5).count(), 0);
    }
}
