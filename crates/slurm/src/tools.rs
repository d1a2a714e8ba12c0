//! Slurm's command-line tools, as the controller runs them. They find the
//! cluster the usual way (`SLURM_CONF`, or the system's `slurm.conf`).

use crate::calls::{PerJob, SlurmCalls};
use crate::records::{
    parse_nodes, parse_squeue, shown_mem_mb, started_at_or_after, SlurmJob, SlurmNode, SQUEUE_FORMAT,
};
use std::path::PathBuf;
use std::process::Command;

/// A Slurm tool that failed.
#[derive(Debug, Clone, thiserror::Error)]
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

/// The priority [`SlurmCalls::rank_first`] gives: above every priority
/// `priority/basic` gives (it counts down from 4,294,901,759) and any
/// `priority/multifactor` sum, below the values Slurm reserves (`NO_VAL`,
/// `INFINITE`).
pub const TOP_PRIORITY: u32 = 4_294_967_000;

/// A job to place: Slurm's id, the node, and whether the poll that
/// decided it showed the job held (only pliant releases a held job of its
/// partition, so it still is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placing {
    /// Slurm's id.
    pub job: u64,
    /// The node's `NodeName`.
    pub node: String,
    /// Held when last read.
    pub held: bool,
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
        self.run_with(tool, args, &[])
    }

    fn run_with(&self, tool: &str, args: &[&str], env: &[(&str, &str)]) -> Result<String, ToolError> {
        let command = format!("{tool} {}", args.join(" "));
        let mut child = Command::new(tool);
        if let Some(conf) = &self.conf {
            child.env("SLURM_CONF", conf);
        }
        child.envs(env.iter().copied());
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

    fn read_jobs(&self, args: &[&str]) -> Result<Vec<SlurmJob>, ToolError> {
        let text = self.run("squeue", args)?;
        parse_squeue(&text).map_err(|reason| ToolError { command: format!("squeue {}", args.join(" ")), reason })
    }

    /// `scontrol VERB KEY<jobs> REST…` with the job list `jobs` (`7,8,9`,
    /// after `key`), in one call; if that fails (one of them ended, say),
    /// one call per job, so that each job has its own answer.
    fn each(&self, verb: &str, key: &str, jobs: &[u64], rest: &[&str]) -> PerJob<()> {
        if jobs.is_empty() {
            return Vec::new();
        }
        let call = |list: &str| {
            let list = format!("{key}{list}");
            let mut args = vec![verb, &list];
            args.extend_from_slice(rest);
            self.scontrol(&args)
        };
        if jobs.len() == 1 || call(&id_list(jobs)).is_err() {
            return jobs.iter().map(|&j| (j, call(&j.to_string()))).collect();
        }
        jobs.iter().map(|&j| (j, Ok(()))).collect()
    }

    /// Releases held jobs, all in one call where they allow it.
    pub fn release(&self, jobs: &[u64]) -> PerJob<()> {
        self.each("release", "", jobs, &[])
    }
}

/// Slurm's tools, run as child processes.
impl SlurmCalls for SlurmTools {
    /// The jobs of `partition` in a live state — pending, running,
    /// suspended, completing — in one compact read (`squeue -h -p P -t
    /// PD,R,S,CG -o …`): no other partition and no finished job.
    fn live_jobs(&self, partition: &str) -> Result<Vec<SlurmJob>, ToolError> {
        let args = ["-h", "-p", partition, "-t", "PD,R,S,CG", "-o", SQUEUE_FORMAT];
        self.read_jobs(&args)
    }

    /// The jobs `ids` in whatever state slurmctld still holds them
    /// (finished ones for `MinJobAge`); a job it has forgotten is absent.
    fn jobs_by_id(&self, ids: &[u64]) -> Result<Vec<SlurmJob>, ToolError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let list = id_list(ids);
        match self.read_jobs(&["-h", "-t", "all", "-j", &list, "-o", SQUEUE_FORMAT]) {
            // One id slurmctld no longer knows is an error; several are a shorter list.
            Err(e) if ids.len() == 1 && e.reason.contains("Invalid job id") => Ok(Vec::new()),
            other => other,
        }
    }

    /// The jobs of `partition` that slurmctld still holds and that started
    /// at or after `unix_s` (seconds since 1970), in any state but pending.
    fn started_since(&self, partition: &str, unix_s: u64) -> Result<Vec<u64>, ToolError> {
        let args = ["-h", "-p", partition, "-t", "all", "-o", "%i|%T|%S"];
        let text = self.run_with("squeue", &args, &[("SLURM_TIME_FORMAT", "%s")])?;
        Ok(started_at_or_after(&text, unix_s))
    }

    /// Every node (`sinfo --json`).
    fn nodes(&self) -> Result<Vec<SlurmNode>, ToolError> {
        let text = self.run("sinfo", &["--json"])?;
        parse_nodes(&text).map_err(|reason| ToolError { command: "sinfo --json".into(), reason })
    }

    /// Holds pending jobs, all in one call where they allow it.
    fn hold(&self, jobs: &[u64]) -> PerJob<()> {
        self.each("hold", "", jobs, &[])
    }

    /// Places pending jobs each on its node, eligible at once (a requeued
    /// job's eligible time is otherwise ~2 minutes away), and releases them:
    /// one `scontrol update` per node and one `scontrol release` for all. A
    /// job not known to be held is held first and its state read back only
    /// then (a held pending job cannot start): one that started meanwhile is
    /// left as it was (released again), since a new `NodeList` for a running
    /// job resizes it and a refused `StartTime` does not undo that.
    fn place(&self, jobs: &[Placing]) -> PerJob<Placement> {
        let mut out = Vec::new();
        let mut go: Vec<&Placing> = jobs.iter().filter(|p| p.held).collect();
        let unsure: Vec<&Placing> = jobs.iter().filter(|p| !p.held).collect();
        if !unsure.is_empty() {
            let mut held = Vec::new();
            for (job, r) in self.hold(&unsure.iter().map(|p| p.job).collect::<Vec<_>>()) {
                match r {
                    Ok(()) => held.push(job),
                    Err(e) => out.push((job, Err(e))),
                }
            }
            match self.jobs_by_id(&held) {
                Ok(found) => {
                    let mut started = Vec::new();
                    for &job in &held {
                        match found.iter().find(|j| j.id == job).map(|j| j.state.as_str()) {
                            Some("PENDING") => go.extend(unsure.iter().find(|p| p.job == job)),
                            Some(_) => started.push(job),
                            None => out.push((job, Err(gone(job)))),
                        }
                    }
                    for (job, r) in self.release(&started) {
                        out.push((job, r.map(|()| Placement::Started)));
                    }
                }
                Err(e) => out.extend(held.iter().map(|&job| (job, Err(e.clone())))),
            }
        }
        let mut nodes: Vec<&str> = go.iter().map(|p| p.node.as_str()).collect();
        nodes.sort_unstable();
        nodes.dedup();
        let mut updated = Vec::new();
        for node in nodes {
            let on: Vec<u64> = go.iter().filter(|p| p.node == node).map(|p| p.job).collect();
            let node_list = format!("NodeList={node}");
            for (job, r) in self.each("update", "JobId=", &on, &[&node_list, "StartTime=now"]) {
                match r {
                    Ok(()) => updated.push(job),
                    Err(e) => out.push((job, Err(e))),
                }
            }
        }
        for (job, r) in self.release(&updated) {
            out.push((job, r.map(|()| Placement::Placed)));
        }
        out
    }

    /// Ranks released pending jobs above every other pending job
    /// (`scontrol update JobId=A,B,… Priority=`[`TOP_PRIORITY`]), so that
    /// Slurm's scheduler starts them first on the room pliant freed for them;
    /// Slurm ignores a priority set while a job is held, so this follows the
    /// release.
    fn rank_first(&self, jobs: &[u64]) -> PerJob<()> {
        self.each("update", "JobId=", jobs, &[&format!("Priority={TOP_PRIORITY}")])
    }

    /// The memory Slurm allocated (or will allocate) to a job, MB: the `mem`
    /// of its `TRES` in `scontrol show job -o` (a job without `--mem` is
    /// given the whole node under `CR_Core_Memory`); `None` when Slurm books
    /// no memory (`CR_Core`).
    fn allocated_mem_mb(&self, job: u64) -> Result<Option<u64>, ToolError> {
        let text = self.run("scontrol", &["show", "job", "-o", &job.to_string()])?;
        Ok(shown_mem_mb(&text))
    }

    /// `scontrol suspend`: Slurm stops the job (SIGTSTP, then its freezer)
    /// and frees its cores.
    fn suspend(&self, job: u64) -> Result<(), ToolError> {
        self.scontrol(&["suspend", &job.to_string()])
    }

    /// `scontrol resume`.
    fn resume(&self, job: u64) -> Result<(), ToolError> {
        self.scontrol(&["resume", &job.to_string()])
    }

    /// Requeues a running or finished batch job, held: it goes back to pending
    /// and waits for pliant to place it again.
    fn requeue_held(&self, job: u64) -> Result<(), ToolError> {
        self.scontrol(&["requeuehold", &job.to_string()])
    }

    /// Sends `signal` to every process of the job (the batch shell and its children).
    fn signal(&self, job: u64, signal: &str) -> Result<(), ToolError> {
        self.run("scancel", &[&format!("--signal={signal}"), "--full", &job.to_string()]).map(|_| ())
    }

    /// Cancels the job.
    fn cancel(&self, job: u64) -> Result<(), ToolError> {
        self.run("scancel", &[&job.to_string()]).map(|_| ())
    }
}

/// Job ids as Slurm's tools take a list of them: `7,8,9`.
fn id_list(ids: &[u64]) -> String {
    ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}

/// A job slurmctld no longer shows.
fn gone(job: u64) -> ToolError {
    ToolError { command: format!("squeue -j {job}"), reason: format!("no job {job}") }
}
