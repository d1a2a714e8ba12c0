//! The metrics, defined once for every body: what a run records
//! (per-job records, utilisation, waste, preemptions, kills and attempts) and how it is summarised
//! (per-class percentiles and CoV).
#![warn(missing_docs)]

mod attempts;
mod record;
mod summary;

pub use attempts::Attempts;
pub use record::{CheckpointCounts, JobRecord, RunRecord, Sample, SimCost};
pub use summary::{percentile, summarise, summarise_level, ClassSummary, Stats};
