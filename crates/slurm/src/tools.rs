//! Slurm's command-line tools, as the controller runs them. They find the
//! cluster the usual way (`SLURM_CONF`, or the system's `slurm.conf`).

use crate::records::{parse_jobs, parse_nodes, SlurmJob, SlurmNode};
use std::path::PathBuf;
use std::process::Command;

/// A Slurm tool that failed.
#[derive(Debug, thiserror::Error)]
#[error("{command}: {reason}")]
pub struct ToolError {
    /// What was run.
    pub command: String,
    /// What it said.
    pub reason: String,
}

/// What a placement found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// The job was pending: it is now on the node, eligible at once.
    Placed,
    /// The job had left pending already (released by a controller that was
    /// then killed, before it journaled more): it was left as it was.
    Started,
}

/// The tools, run as child processes.
#[derive(Debug, Clone, Default)]
pub struct SlurmTools {
    /// `SLURM_CONF` for the tools; `None`: the one this process has.
    conf: Option<PathBuf>,
}

impl SlurmTools {
    /// The tools of the cluster configured by `conf` (a `slurm.conf`).
    pub fn with_conf(conf: PathBuf) -> SlurmTools {
        SlurmTools { conf: Some(conf) }
    }

    fn run(&self, tool: &str, args: &[&str]) -> Result<String, ToolError> {
        let command = format!("{tool} {}", args.join(" "));
        let mut child = Command::new(tool);
        if let Some(conf) = &self.conf {
            child.env("SLURM_CONF", conf);
        }
        let out =
            child.args(args).output().map_err(|e| ToolError { command: command.clone(), reason: e.to_string() })?;
        if !out.status.success() {
            let reason = String::from_utf8_lossy(&out.stderr).trim().to_string();
            return Err(ToolError { command, reason: format!("{} ({})", reason, out.status) });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn scontrol(&self, args: &[&str]) -> Result<(), ToolError> {
        self.run("scontrol", args).map(|_| ())
    }

    /// Every job slurmctld holds in memory (`squeue --json`).
    pub fn jobs(&self) -> Result<Vec<SlurmJob>, ToolError> {
        let text = self.run("squeue", &["--json"])?;
        parse_jobs(&text).map_err(|reason| ToolError { command: "squeue --json".into(), reason })
    }

    /// Every node (`sinfo --json`).
    pub fn nodes(&self) -> Result<Vec<SlurmNode>, ToolError> {
        let text = self.run("sinfo", &["--json"])?;
        parse_nodes(&text).map_err(|reason| ToolError { command: "sinfo --json".into(), reason })
    }

    /// Holds a pending job.
    pub fn hold(&self, job: u64) -> Result<(), ToolError> {
        self.scontrol(&["hold", &job.to_string()])
    }

    /// Releases a held job.
    pub fn release(&self, job: u64) -> Result<(), ToolError> {
        self.scontrol(&["release", &job.to_string()])
    }

    /// Slurm's state of one job (`PENDING`, `RUNNING`, …).
    pub fn job_state(&self, job: u64) -> Result<String, ToolError> {
        let found = self.jobs()?.into_iter().find(|j| j.id == job);
        found
            .map(|j| j.state)
            .ok_or_else(|| ToolError { command: "squeue --json".into(), reason: format!("no job {job}") })
    }

    /// Places a pending job on `node`, eligible at once (a requeued job's
    /// eligible time is otherwise ~2 minutes away), then releases it. It is
    /// held first and its state read only then: a held pending job cannot
    /// start, while one that started meanwhile is left as it was (released
    /// again), since a new `NodeList` for a running job resizes it and a
    /// refused `StartTime` does not undo that.
    pub fn place(&self, job: u64, node: &str) -> Result<Placement, ToolError> {
        self.hold(job)?;
        if self.job_state(job)? != "PENDING" {
            self.release(job)?;
            return Ok(Placement::Started);
        }
        self.scontrol(&["update", &format!("JobId={job}"), &format!("NodeList={node}"), "StartTime=now"])?;
        self.release(job)?;
        Ok(Placement::Placed)
    }

    /// `scontrol suspend`: Slurm stops the job (SIGTSTP, then its freezer)
    /// and frees its cores.
    pub fn suspend(&self, job: u64) -> Result<(), ToolError> {
        self.scontrol(&["suspend", &job.to_string()])
    }

    /// `scontrol resume`.
    pub fn resume(&self, job: u64) -> Result<(), ToolError> {
        self.scontrol(&["resume", &job.to_string()])
    }

    /// Requeues a running or finished batch job, held: it goes back to pending
    /// and waits for pliant to place it again.
    pub fn requeue_held(&self, job: u64) -> Result<(), ToolError> {
        self.scontrol(&["requeuehold", &job.to_string()])
    }

    /// Sends `signal` to every process of the job (the batch shell and its children).
    pub fn signal(&self, job: u64, signal: &str) -> Result<(), ToolError> {
        self.run("scancel", &[&format!("--signal={signal}"), "--full", &job.to_string()]).map(|_| ())
    }

    /// Cancels the job.
    pub fn cancel(&self, job: u64) -> Result<(), ToolError> {
        self.run("scancel", &[&job.to_string()]).map(|_| ())
    }
}
