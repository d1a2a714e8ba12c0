//! Readers for public cluster traces — Google cluster-data 2011, Alibaba
//! cluster-trace v2018 and v2017, YARN SLS JSON — streaming them (gzip or
//! plain, one file, several or a directory of parts) into pliant's workload
//! model, with statistics, short/long classes and window / sample / scale
//! filters.
//!
//! Architecture invariant: this crate knows file formats and nothing about
//! scheduling; what it produces is a [`pliant_workload::Workload`], the same
//! model the built-in scenarios produce. A trace has no owner's estimates, so
//! every task's estimate is its true duration.
#![warn(missing_docs)]

pub mod alibaba;
pub mod classify;
pub mod dag;
pub mod detect;
pub mod dss_writer;
pub mod error;
pub mod fit_use;
pub mod google2011;
pub mod input;
pub mod json_records;
pub mod load;
pub mod machines;
pub mod native;
pub mod pick_window;
pub mod preemption;
pub mod record;
pub mod shrink;
pub mod sls;
pub mod stats;
pub mod timeline;

pub use classify::ClassRule;
pub use detect::{detect, Format, Inputs};
pub use dss_writer::{write_dss, DssWriteError};
pub use error::{BadRows, RowError, TraceError};
pub use fit_use::{fit_use, FitReport, UseShares};
pub use load::{import, load_workload, read_trace, LoadOptions, LoadReport, ReadReport, Target};
pub use pick_window::{pick_windows, WindowPick, WindowTarget};
pub use record::{JobKind, ReadOptions, TraceJob, Unfinished, Window, DEFAULT_NODE};
pub use stats::{trace_stats, StatsOptions, TraceStats};
