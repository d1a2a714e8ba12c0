//! Memory elasticity (YARN-ME paper §2.2–2.3): how a task's run time grows
//! when it gets less than its ideal memory. The same type describes the
//! estimate a job hands the core and the simulator's ground truth.

use crate::Micros;
use serde::{Deserialize, Serialize};

/// Hadoop's share of a reducer's memory used as shuffle buffer
/// (`mapreduce.reduce.shuffle.input.buffer.percent`, 0.70; paper §1: "70% by default").
pub const SHUFFLE_BUFFER_FRACTION: f64 = 0.7;

/// A task's run time as a function of its memory allocation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "lowercase")]
pub enum ElasticityProfile {
    /// A step (§2.2's mapper model, and the plain "max penalty" profile of
    /// §6's synthetic traces): any under-sized allocation runs `penalty` times
    /// slower than the ideal run.
    Step {
        /// Run time under-sized over run time well-sized (≥ 1).
        penalty: f64,
    },
    /// §2.3's reducer model, T(m) = T + spilledBytes(m) / diskRate, with
    /// Hadoop's spilling: a buffer of 70 % of the allocation is spilled each
    /// time the input overflows it (the saw-tooth of Fig. 1b).
    Spill {
        /// Reducer input in MB (the ideal memory holds it in the shuffle buffer).
        input_mb: f64,
        /// Microseconds added per MB spilled (1 / diskRate).
        us_per_mb: f64,
    },
    /// §2.3's reducer saw-tooth normalised to its maximum penalty: the model
    /// §6.1 runs on the synthetic traces ("we only use the reducer penalty
    /// model ... 1.5x and 3x penalties"), as DSS's SAWTOOTH penalty with an
    /// initial bump does. With memory m of ideal M the input overflows the
    /// buffer ⌊M / m⌋ times; the time added is `penalty - 1` times the ideal
    /// run, scaled by the share of the input spilled, so spilling almost all
    /// of it (m just below M) costs the full `penalty` and m just above M / 2
    /// the least, about half that. It models no spill volume (DSS's tasks do
    /// no I/O), so it leaves the disk budget alone.
    Sawtooth {
        /// Run time when (almost) all the input is spilled over the ideal run time (≥ 1).
        penalty: f64,
    },
}

impl ElasticityProfile {
    /// The plain profile of §6's synthetic traces (1.5× or 3×).
    pub fn max_penalty(penalty: f64) -> Self {
        ElasticityProfile::Step { penalty }
    }

    /// §6.1's reducer model at a maximum penalty of `penalty` (1.5× or 3×).
    pub fn reducer_max_penalty(penalty: f64) -> Self {
        ElasticityProfile::Sawtooth { penalty }
    }

    /// The maximum penalty of a step or saw-tooth profile (`None` for a
    /// fitted spill model, whose penalty depends on the task's size).
    pub fn max_penalty_of(&self) -> Option<f64> {
        match *self {
            ElasticityProfile::Step { penalty } | ElasticityProfile::Sawtooth { penalty } => Some(penalty),
            ElasticityProfile::Spill { .. } => None,
        }
    }

    /// §2.2: a mapper's step model from one well-sized run (`ideal`) and one
    /// under-sized run (`undersized`).
    pub fn fit_mapper(ideal: Micros, undersized: Micros) -> Self {
        ElasticityProfile::Step { penalty: undersized as f64 / ideal.max(1) as f64 }
    }

    /// §2.3: a reducer's spill model from a well-sized run of `ideal` µs at
    /// `ideal_mb` and an under-sized run of `undersized` µs at `under_mb`: the
    /// input is what fills the ideal allocation's buffer, and diskRate is what
    /// the under-sized run spilled over the time it added.
    pub fn fit_reducer(ideal_mb: u64, ideal: Micros, under_mb: u64, undersized: Micros) -> Self {
        let input_mb = ideal_mb as f64 * SHUFFLE_BUFFER_FRACTION;
        let spilled = spilled_mb(input_mb, under_mb);
        let added = undersized.saturating_sub(ideal) as f64;
        let us_per_mb = if spilled > 0.0 { added / spilled } else { 0.0 };
        ElasticityProfile::Spill { input_mb, us_per_mb }
    }

    /// Run time with `mem_mb` of a task that runs `ideal` µs with `ideal_mb`.
    pub fn runtime(&self, ideal: Micros, ideal_mb: u64, mem_mb: u64) -> Micros {
        if mem_mb >= ideal_mb {
            return ideal;
        }
        match *self {
            ElasticityProfile::Step { penalty } => (ideal as f64 * penalty).round() as Micros,
            ElasticityProfile::Spill { input_mb, us_per_mb } => {
                ideal + (spilled_mb(input_mb, mem_mb) * us_per_mb).round() as Micros
            }
            ElasticityProfile::Sawtooth { penalty } => {
                let input = ideal_mb as f64 * SHUFFLE_BUFFER_FRACTION;
                let share = spilled_mb(input, mem_mb) / input.max(f64::MIN_POSITIVE);
                (ideal as f64 * (1.0 + (penalty - 1.0) * share)).round() as Micros
            }
        }
    }

    /// MB spilled to disk by a run with `mem_mb` (zero for a step profile,
    /// which models no volume).
    pub fn spilled_mb(&self, ideal_mb: u64, mem_mb: u64) -> f64 {
        match *self {
            ElasticityProfile::Spill { input_mb, .. } if mem_mb < ideal_mb => spilled_mb(input_mb, mem_mb),
            _ => 0.0,
        }
    }

    /// Whether no allocation runs faster than the ideal one (a step's or a
    /// saw-tooth's penalty is at least 1; a spill only adds time).
    pub fn never_faster(&self) -> bool {
        match *self {
            ElasticityProfile::Step { penalty } | ElasticityProfile::Sawtooth { penalty } => penalty >= 1.0,
            ElasticityProfile::Spill { .. } => true,
        }
    }

    /// Checks the profile makes sense: a step's penalty is at least 1.
    pub fn check(&self) -> Result<(), String> {
        match *self {
            ElasticityProfile::Step { penalty } | ElasticityProfile::Sawtooth { penalty }
                if !(penalty >= 1.0 && penalty.is_finite()) =>
            {
                Err(format!("penalty {penalty} is below 1 (an under-sized task cannot run faster)"))
            }
            ElasticityProfile::Spill { input_mb, us_per_mb } if !(input_mb >= 0.0 && us_per_mb >= 0.0) => {
                Err("a spill profile needs a non-negative input and disk rate".into())
            }
            _ => Ok(()),
        }
    }
}

/// Hadoop's spilled volume for `input_mb` of reducer input with `mem_mb` of
/// memory: each time the input overflows the buffer, the full buffer goes to
/// disk, so the spill is the largest multiple of the buffer below the input
/// (§2.3: with 2.01 GB of input, 0.5 GB and 2 GB buffers both spill 2 GB, a
/// 1.5 GB one spills 1.5 GB).
pub fn spilled_mb(input_mb: f64, mem_mb: u64) -> f64 {
    let buffer = mem_mb as f64 * SHUFFLE_BUFFER_FRACTION;
    if buffer <= 0.0 {
        return input_mb;
    }
    if input_mb <= buffer {
        return 0.0;
    }
    (input_mb / buffer).floor() * buffer
}

/// What a job tells the scheduler about its tasks' elasticity (§3.2's
/// metadata): the ideal memory is each task's request, the ideal duration its
/// estimate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Elasticity {
    /// The estimated profile.
    pub profile: ElasticityProfile,
    /// The least memory a task may get, in MB, if the owner sets one (the
    /// policy's floor of 10 % of ideal applies in any case).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_mem_mb: Option<u64>,
}

impl Elasticity {
    /// Checks the metadata against the tasks' ideal memory `ideal_mb`.
    pub fn check(&self, ideal_mb: u64) -> Result<(), String> {
        self.profile.check()?;
        match self.min_mem_mb {
            Some(min) if min > ideal_mb => {
                Err(format!("minimum memory {min} MB is above the ideal memory {ideal_mb} MB"))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SECOND;

    #[test]
    fn spill_follows_hadoops_saw_tooth() {
        // §2.3's example: 2.01 GB of input.
        let input = 2010.0;
        let mem = |buffer_mb: f64| (buffer_mb / SHUFFLE_BUFFER_FRACTION).round() as u64;
        assert!((spilled_mb(input, mem(500.0)) - 2000.0).abs() < 1.0);
        assert!((spilled_mb(input, mem(2000.0)) - 2000.0).abs() < 1.0);
        assert!((spilled_mb(input, mem(1500.0)) - 1500.0).abs() < 1.0);
        assert_eq!(spilled_mb(input, mem(2100.0)), 0.0);
    }

    #[test]
    fn reducer_fit_reproduces_both_profiling_points() {
        // Ideal 10 GB (input 7 GB) in 100 s; at 52 % (§2.3's choice) 150 s.
        let p = ElasticityProfile::fit_reducer(10_000, 100 * SECOND, 5_200, 150 * SECOND);
        assert_eq!(p.runtime(100 * SECOND, 10_000, 10_000), 100 * SECOND);
        assert!(p.runtime(100 * SECOND, 10_000, 5_200).abs_diff(150 * SECOND) <= 1);
        // At 52 % the buffer is 3,640 MB: one buffer spilled. At 30 % (2,100 MB
        // buffer) three buffers, 6,300 MB: 50 s × 6,300 / 3,640 added.
        let at30 = p.runtime(100 * SECOND, 10_000, 3_000);
        let want = 100.0 + 50.0 * 6300.0 / 3640.0;
        assert!((at30 as f64 / 1e6 - want).abs() < 0.01, "{at30}");
    }

    #[test]
    fn reducer_saw_tooth_at_a_max_penalty() {
        // 1.5× max, a 100 s task of ideal 10,000 MB (input 7,000 MB).
        let p = ElasticityProfile::reducer_max_penalty(1.5);
        let at = |mb| p.runtime(100 * SECOND, 10_000, mb);
        // 9,900 MB: buffer 6,930 MB, one spilled: 50 s × 0.99 added.
        assert_eq!(at(9_900), 149_500_000);
        // 5,100 MB: one 3,570 MB buffer of 7,000 spilled: 50 s × 0.51.
        assert_eq!(at(5_100), 125_500_000);
        // 5,000 MB: the input is exactly two buffers, both spilled: the full 1.5×.
        assert_eq!(at(5_000), 150_000_000);
        // 3,400 MB: two 2,380 MB buffers spilled (68 %); 1,000 MB: ten of 700 (100 %).
        assert_eq!(at(3_400), 134_000_000);
        assert_eq!(at(1_000), 150_000_000);
        assert_eq!(at(10_000), 100 * SECOND);
        assert_eq!((p.spilled_mb(10_000, 5_100), p.max_penalty_of()), (0.0, Some(1.5)));
        assert!(ElasticityProfile::reducer_max_penalty(0.5).check().is_err());
    }

    #[test]
    fn mapper_step_and_checks() {
        let p = ElasticityProfile::fit_mapper(100 * SECOND, 135 * SECOND);
        assert_eq!(p.runtime(10 * SECOND, 1000, 100), 13_500_000);
        assert_eq!(p.runtime(10 * SECOND, 1000, 1000), 10 * SECOND);
        assert!(ElasticityProfile::max_penalty(0.9).check().is_err());
        let e = Elasticity { profile: ElasticityProfile::max_penalty(1.5), min_mem_mb: Some(2000) };
        assert!(e.check(1000).is_err());
        assert!(e.check(2000).is_ok());
    }
}
