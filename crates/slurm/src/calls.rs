//! The calls the controller makes on Slurm, and the clock it reads: what
//! stands between its logic and the cluster. [`crate::tools::SlurmTools`]
//! makes them with Slurm's command-line tools; [`crate::recorded`] answers
//! them from recorded outputs, so that the controller is tested without Slurm.

use crate::records::{SlurmJob, SlurmNode};
use crate::tools::{Placement, Placing, ToolError};

/// Each job's answer to a call on several jobs.
pub type PerJob<T> = Vec<(u64, Result<T, ToolError>)>;

/// What the controller reads of Slurm and does on it.
pub trait SlurmCalls {
    /// The jobs of `partition` that are pending, running, suspended or completing.
    fn live_jobs(&self, partition: &str) -> Result<Vec<SlurmJob>, ToolError>;

    /// The jobs `ids` in whatever state slurmctld still holds them; a job
    /// it has forgotten is absent.
    fn jobs_by_id(&self, ids: &[u64]) -> Result<Vec<SlurmJob>, ToolError>;

    /// The ids of the jobs of `partition` slurmctld still holds that started
    /// at or after `unix_s` (seconds since 1970), in any state but pending.
    fn started_since(&self, partition: &str, unix_s: u64) -> Result<Vec<u64>, ToolError>;

    /// Every node of the cluster.
    fn nodes(&self) -> Result<Vec<SlurmNode>, ToolError>;

    /// The memory Slurm allocated (or will allocate) to a job, MB; `None`
    /// when Slurm books no memory.
    fn allocated_mem_mb(&self, job: u64) -> Result<Option<u64>, ToolError>;

    /// Holds pending jobs.
    fn hold(&self, jobs: &[u64]) -> PerJob<()>;

    /// Places pending jobs each on its node, eligible at once, and releases them.
    fn place(&self, jobs: &[Placing]) -> PerJob<Placement>;

    /// Ranks released pending jobs above every other pending job.
    fn rank_first(&self, jobs: &[u64]) -> PerJob<()>;

    /// Suspends a running job.
    fn suspend(&self, job: u64) -> Result<(), ToolError>;

    /// Resumes a suspended job.
    fn resume(&self, job: u64) -> Result<(), ToolError>;

    /// Requeues a running or finished batch job, held.
    fn requeue_held(&self, job: u64) -> Result<(), ToolError>;

    /// Sends `signal` (`USR1`) to every process of the job.
    fn signal(&self, job: u64, signal: &str) -> Result<(), ToolError>;

    /// Cancels the job.
    fn cancel(&self, job: u64) -> Result<(), ToolError>;
}

/// Where the controller stands: the Slurm it calls and its wall clock
/// (µs since 1970).
pub struct Surroundings {
    /// The calls on Slurm.
    pub slurm: Box<dyn SlurmCalls>,
    /// Wall-clock µs since 1970.
    pub clock: Box<dyn Fn() -> u64>,
}

impl Surroundings {
    /// Slurm's tools as this process finds them, and the system clock.
    pub fn real() -> Surroundings {
        Surroundings {
            slurm: Box::new(crate::tools::SlurmTools::default()),
            clock: Box::new(pliant_live::machine::unix_us),
        }
    }
}
