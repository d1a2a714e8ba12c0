//! Slurm as recorded, for testing the controller without a cluster: it
//! answers the controller's reads from `squeue`, `sinfo --json` and
//! `scontrol show job -o` outputs a test gives it (parsed as the tools'
//! are, [`crate::records`]), keeps every call the controller makes, and
//! moves a job through the states Slurm would put it in on that call (a
//! held job is `JobHeldUser`, a requeued one pending and held again). A
//! job starts, ends or checkpoints when the test shows it so. Its clock
//! stands still until the test moves it.

use crate::calls::{PerJob, SlurmCalls, Surroundings};
use crate::records::{parse_nodes, parse_squeue, shown_mem_mb, started_at_or_after, SlurmJob, SlurmNode};
use crate::tools::{Placement, Placing, ToolError};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

/// A call the controller made on Slurm, with the jobs it named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// `scontrol hold`.
    Hold(Vec<u64>),
    /// Placed and released ([`SlurmCalls::place`]).
    Place(Vec<Placing>),
    /// Ranked first in Slurm's queue.
    RankFirst(Vec<u64>),
    /// `scontrol suspend`.
    Suspend(u64),
    /// `scontrol resume`.
    Resume(u64),
    /// `scontrol requeuehold`.
    RequeueHeld(u64),
    /// `scancel --signal=… --full`.
    Signal(u64, String),
    /// `scancel`.
    Cancel(u64),
}

#[derive(Debug, Default)]
struct Recording {
    jobs: BTreeMap<u64, SlurmJob>,
    /// `squeue -h -t all -o %i|%T|%S` with `SLURM_TIME_FORMAT=%s`.
    starts: String,
    /// `sinfo --json`.
    sinfo: String,
    /// `scontrol show job -o ID` per job.
    shown: HashMap<u64, String>,
    calls: Vec<Call>,
    unix_us: u64,
}

/// Slurm as recorded; clones share one recording (one for the test, one
/// for the controller).
#[derive(Debug, Clone, Default)]
pub struct RecordedSlurm {
    recording: Rc<RefCell<Recording>>,
}

impl RecordedSlurm {
    /// A cluster whose nodes are those of `sinfo` (`sinfo --json`), its
    /// clock at `unix_us` (µs since 1970).
    pub fn new(sinfo: &str, unix_us: u64) -> RecordedSlurm {
        let slurm = RecordedSlurm::default();
        let mut r = slurm.recording.borrow_mut();
        (r.sinfo, r.unix_us) = (sinfo.to_string(), unix_us);
        drop(r);
        slurm
    }

    /// Shows the jobs of `squeue` (lines of [`crate::records::SQUEUE_FORMAT`])
    /// from now on, each in place of what was shown of it before.
    pub fn show(&self, squeue: &str) {
        let jobs = parse_squeue(squeue).unwrap_or_else(|e| panic!("a recorded squeue output: {e}"));
        self.recording.borrow_mut().jobs.extend(jobs.into_iter().map(|j| (j.id, j)));
    }

    /// Shows the started jobs of `squeue -h -t all -o %i|%T|%S` (start in
    /// seconds since 1970) from now on.
    pub fn show_starts(&self, text: &str) {
        self.recording.borrow_mut().starts = text.to_string();
    }

    /// Shows `text` as `scontrol show job -o` of `job`.
    pub fn show_job(&self, job: u64, text: &str) {
        self.recording.borrow_mut().shown.insert(job, text.to_string());
    }

    /// Slurm forgets `job` (past `MinJobAge`).
    pub fn forget(&self, job: u64) {
        self.recording.borrow_mut().jobs.remove(&job);
    }

    /// Where `job` stands now: its state and reason.
    pub fn state(&self, job: u64) -> Option<(String, String)> {
        self.recording.borrow().jobs.get(&job).map(|j| (j.state.clone(), j.reason.clone()))
    }

    /// Moves the clock on by `us`.
    pub fn advance(&self, us: u64) {
        self.recording.borrow_mut().unix_us += us;
    }

    /// The calls made since the last call of this.
    pub fn calls(&self) -> Vec<Call> {
        std::mem::take(&mut self.recording.borrow_mut().calls)
    }

    /// This Slurm and its clock, for a controller.
    pub fn surroundings(&self) -> Surroundings {
        let clock = self.clone();
        Surroundings { slurm: Box::new(self.clone()), clock: Box::new(move || clock.recording.borrow().unix_us) }
    }

    /// Records `call` and, for each job it names, applies `change` to the
    /// job; a job Slurm does not show fails as `scontrol` fails.
    fn act(&self, call: Call, jobs: &[u64], change: impl Fn(&mut SlurmJob)) -> PerJob<()> {
        if jobs.is_empty() {
            return Vec::new();
        }
        let mut r = self.recording.borrow_mut();
        r.calls.push(call);
        jobs.iter()
            .map(|&id| match r.jobs.get_mut(&id) {
                Some(job) => {
                    change(job);
                    (id, Ok(()))
                }
                None => (id, Err(invalid(id))),
            })
            .collect()
    }

    fn act_one(&self, call: Call, job: u64, change: impl Fn(&mut SlurmJob)) -> Result<(), ToolError> {
        self.act(call, &[job], change).remove(0).1
    }
}

/// `scontrol`'s answer for a job it does not know.
fn invalid(job: u64) -> ToolError {
    ToolError { command: format!("scontrol … {job}"), reason: "Invalid job id specified".into() }
}

fn held(job: &mut SlurmJob) {
    job.state = "PENDING".into();
    job.reason = "JobHeldUser".into();
    job.nodes.clear();
}

impl SlurmCalls for RecordedSlurm {
    fn live_jobs(&self, partition: &str) -> Result<Vec<SlurmJob>, ToolError> {
        let r = self.recording.borrow();
        let live = |j: &&SlurmJob| matches!(j.state.as_str(), "PENDING" | "RUNNING" | "SUSPENDED" | "COMPLETING");
        Ok(r.jobs.values().filter(|j| j.partition == partition).filter(live).cloned().collect())
    }

    fn jobs_by_id(&self, ids: &[u64]) -> Result<Vec<SlurmJob>, ToolError> {
        let r = self.recording.borrow();
        Ok(ids.iter().filter_map(|id| r.jobs.get(id)).cloned().collect())
    }

    fn started_since(&self, _partition: &str, unix_s: u64) -> Result<Vec<u64>, ToolError> {
        Ok(started_at_or_after(&self.recording.borrow().starts, unix_s))
    }

    fn nodes(&self) -> Result<Vec<SlurmNode>, ToolError> {
        parse_nodes(&self.recording.borrow().sinfo)
            .map_err(|reason| ToolError { command: "sinfo --json".into(), reason })
    }

    fn allocated_mem_mb(&self, job: u64) -> Result<Option<u64>, ToolError> {
        let r = self.recording.borrow();
        r.shown.get(&job).map(|text| shown_mem_mb(text)).ok_or_else(|| invalid(job))
    }

    fn hold(&self, jobs: &[u64]) -> PerJob<()> {
        self.act(Call::Hold(jobs.to_vec()), jobs, |j| {
            if j.state == "PENDING" {
                held(j);
            }
        })
    }

    fn place(&self, jobs: &[Placing]) -> PerJob<Placement> {
        let ids: Vec<u64> = jobs.iter().map(|p| p.job).collect();
        let was: Vec<Option<String>> = ids.iter().map(|&id| self.state(id).map(|(state, _)| state)).collect();
        let answers = self.act(Call::Place(jobs.to_vec()), &ids, |j| {
            if j.state == "PENDING" {
                j.reason = "None".into();
            }
        });
        answers
            .into_iter()
            .zip(was)
            .map(|((id, r), was)| {
                let placement = if was.as_deref() == Some("PENDING") { Placement::Placed } else { Placement::Started };
                (id, r.map(|()| placement))
            })
            .collect()
    }

    fn rank_first(&self, jobs: &[u64]) -> PerJob<()> {
        self.act(Call::RankFirst(jobs.to_vec()), jobs, |_| {})
    }

    fn suspend(&self, job: u64) -> Result<(), ToolError> {
        self.act_one(Call::Suspend(job), job, |j| j.state = "SUSPENDED".into())
    }

    fn resume(&self, job: u64) -> Result<(), ToolError> {
        self.act_one(Call::Resume(job), job, |j| j.state = "RUNNING".into())
    }

    fn requeue_held(&self, job: u64) -> Result<(), ToolError> {
        self.act_one(Call::RequeueHeld(job), job, held)
    }

    fn signal(&self, job: u64, signal: &str) -> Result<(), ToolError> {
        self.act_one(Call::Signal(job, signal.to_string()), job, |_| {})
    }

    fn cancel(&self, job: u64) -> Result<(), ToolError> {
        self.act_one(Call::Cancel(job), job, |j| j.state = "CANCELLED".into())
    }
}
