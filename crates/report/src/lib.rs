//! Reports: turn run records into what people read — a table, JSON with
//! stable keys, a per-job CSV and SVG plots.
#![warn(missing_docs)]

mod csv_jobs;
mod csv_preemptions;
mod grid;
mod json;
mod level_table;
mod plots;
mod sweep;
mod table;

pub use csv_jobs::write_jobs_csv;
pub use csv_preemptions::write_preemptions_csv;
pub use json::{comparison_json, result_metrics, Comparison, SCHEMA_VERSION};
pub use level_table::level_table;
pub use plots::{plot_cpu_timeline, plot_jct_cdf, plot_ratio_cdf};
pub use sweep::{mean_of_measured, plot_sweep, sweep_table, Sweep, SweepMetric, SweepSeries};
pub use table::comparison_table;

/// `n` and the noun, plural unless `n` is 1: "1 node", "2 jobs".
pub fn counted(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}
