//! A submission as the API receives it, and its validation: a bad one is
//! refused with a message and changes nothing.

use crate::elastic::ElasticRequest;
use crate::events::{JobSpec, PhaseSpec};
use pliant_core::model::JobClass;
use pliant_core::Resources;
use serde::Deserialize;
use std::path::Path;

/// The body of `POST /jobs`. Everything but `command` has a default.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubmitRequest {
    /// A name for people (default: the program's file name).
    pub name: Option<String>,
    /// `short` or `long` (default `long`).
    pub queue: Option<JobClass>,
    /// CPU per task in millicores (default 1000).
    pub cpu_milli: Option<u64>,
    /// Memory per task in MB (default 256); the ideal size of an elastic task.
    pub mem_mb: Option<u64>,
    /// Priority 0–11, higher first (default 0).
    pub priority: Option<u8>,
    /// Number of tasks (default 1); each runs `command` with `PLIANT_TASK` set to its index.
    pub tasks: Option<u32>,
    /// The program and its arguments.
    pub command: Vec<String>,
    /// A DAG of phases, each `{"tasks": N, "after": [earlier phases], "local": bool}`,
    /// instead of `tasks` (default: one phase of `tasks` tasks).
    pub phases: Option<Vec<PhaseSpec>>,
    /// Estimated run time of each task with its full memory, seconds.
    pub estimate_s: Option<f64>,
    /// `{"penalty": P, "min_mem_mb": M}`: its tasks may run with less memory,
    /// at least M MB, P times slower (sized so under the `elastic` preset).
    pub elastic: Option<ElasticRequest>,
}

/// Highest priority (as in the Google trace).
pub const MAX_PRIORITY: u8 = 11;
/// Most tasks one job may have.
pub const MAX_TASKS: u32 = 10_000;

impl SubmitRequest {
    /// Checks the request against the cluster's node capacities and fills in defaults.
    pub fn validate(self, nodes: &[Resources]) -> Result<JobSpec, String> {
        let program = self.command.first().ok_or("`command` is empty: give a program to run")?;
        check_exec_args(&self.command)?;
        if !is_runnable(program) {
            return Err(format!("`{program}` is not an executable file or a program on the manager's PATH"));
        }
        let cpu_milli = self.cpu_milli.unwrap_or(1000);
        let mem_mb = self.mem_mb.unwrap_or(256);
        if cpu_milli == 0 || mem_mb == 0 {
            return Err("a task needs some CPU (`cpu_milli` > 0) and memory (`mem_mb` > 0)".into());
        }
        let request = Resources::new(cpu_milli, mem_mb);
        if !nodes.iter().any(|n| request.fits_in(n)) {
            let largest: Vec<String> = nodes.iter().map(|n| n.to_string()).collect();
            return Err(format!("a task of {request} is bigger than any node ({})", largest.join(", ")));
        }
        let priority = self.priority.unwrap_or(0);
        if priority > MAX_PRIORITY {
            return Err(format!("priority {priority} is out of range 0–{MAX_PRIORITY}"));
        }
        let phases = self.phases.unwrap_or_default();
        if !phases.is_empty() && self.tasks.is_some() {
            return Err("give either `tasks` or `phases`, not both".into());
        }
        for (i, p) in phases.iter().enumerate() {
            if let Some(d) = p.after.iter().find(|&&d| d as usize >= i) {
                return Err(format!("phase {i} waits for phase {d}, which does not come before it"));
            }
            if p.tasks == 0 {
                return Err(format!("phase {i} has no tasks"));
            }
        }
        let sum: u64 = phases.iter().map(|p| p.tasks as u64).sum();
        let tasks = if phases.is_empty() { self.tasks.unwrap_or(1) } else { sum.min(u32::MAX as u64) as u32 };
        if !(1..=MAX_TASKS).contains(&tasks) {
            return Err(format!("`tasks` must be 1–{MAX_TASKS}, got {tasks}"));
        }
        let estimate_us = crate::elastic::check(self.estimate_s, self.elastic.as_ref(), mem_mb)?;
        let default_name =
            || Path::new(program).file_name().map_or(program.clone(), |n| n.to_string_lossy().into_owned());
        Ok(JobSpec {
            name: self.name.unwrap_or_else(default_name),
            queue: self.queue.unwrap_or(JobClass::Long),
            cpu_milli,
            mem_mb,
            priority,
            tasks,
            command: self.command,
            phases,
            estimate_us,
            elastic: self.elastic,
        })
    }
}

/// Longest single argument `execve` takes on Linux (`MAX_ARG_STRLEN`, 32
/// pages of 4 KB), its terminating NUL included.
const MAX_ARG_BYTES: usize = 32 * 4096;
/// Room left for the environment (the task's `PLIANT_*` variables and the
/// agent's own) and the exit-code wrapper within the OS argument limit.
const ENV_ALLOWANCE: usize = 64 << 10;

/// Refuses a command `execve` would refuse at launch: an argument with a NUL
/// byte (it cannot be passed), one over [`MAX_ARG_BYTES`], or arguments over
/// the OS limit (`sysconf(_SC_ARG_MAX)`) less [`ENV_ALLOWANCE`].
fn check_exec_args(command: &[String]) -> Result<(), String> {
    if let Some(i) = command.iter().position(|a| a.contains('\0')) {
        return Err(format!("`command` argument {i} holds a NUL byte, which no program can be given"));
    }
    if let Some(i) = command.iter().position(|a| a.len() + 1 > MAX_ARG_BYTES) {
        let len = command[i].len();
        return Err(format!(
            "`command` argument {i} is {len} bytes, over the OS limit of {} per argument",
            MAX_ARG_BYTES - 1
        ));
    }
    // SAFETY: sysconf has no preconditions.
    let arg_max = usize::try_from(unsafe { libc::sysconf(libc::_SC_ARG_MAX) }).unwrap_or(128 << 10);
    let limit = arg_max.saturating_sub(ENV_ALLOWANCE);
    // Each argument costs its bytes, its NUL and its pointer.
    let total: usize = command.iter().map(|a| a.len() + 1 + std::mem::size_of::<usize>()).sum();
    if total > limit {
        return Err(format!(
            "`command` is {total} bytes in all, over the {limit} bytes the OS lets a program be given"
        ));
    }
    Ok(())
}

/// True when `program` names an executable file, directly (with a `/`) or on `PATH`.
fn is_runnable(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if program.contains('/') {
        return executable(Path::new(program));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    !program.is_empty() && std::env::split_paths(&path).any(|dir| executable(&dir.join(program)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(json: &str) -> Result<JobSpec, String> {
        let r: SubmitRequest = serde_json::from_str(json).map_err(|e| e.to_string())?;
        r.validate(&[Resources::new(2000, 1024)])
    }

    #[test]
    fn defaults_fill_in_and_the_name_is_the_program() {
        let spec = req(r#"{"command": ["/bin/sh", "-c", "true"]}"#).unwrap();
        assert_eq!(spec.name, "sh");
        assert_eq!(
            (spec.queue, spec.cpu_milli, spec.mem_mb, spec.priority, spec.tasks),
            (JobClass::Long, 1000, 256, 0, 1)
        );
        assert_eq!(req(r#"{"command": ["sh"], "queue": "short"}"#).unwrap().queue, JobClass::Short);
        let elastic = req(
            r#"{"command": ["sh"], "mem_mb": 800, "estimate_s": 2.5, "elastic": {"penalty": 1.5, "min_mem_mb": 200}}"#,
        )
        .unwrap();
        assert_eq!(elastic.estimate_us, Some(2_500_000));
        assert_eq!(elastic.elastic, Some(ElasticRequest { penalty: 1.5, min_mem_mb: Some(200) }));
        let dag = req(r#"{"command": ["sh"], "phases": [{"tasks": 2}, {"tasks": 3, "after": [0], "local": true}]}"#);
        assert_eq!(dag.unwrap().tasks, 5);
    }

    #[test]
    fn bad_submissions_say_why() {
        let err = |json: &str| req(json).unwrap_err();
        assert!(err(r#"{"command": []}"#).contains("empty"));
        assert!(err(r#"{"command": ["sh"], "phases": [{"tasks": 1, "after": [0]}]}"#).contains("does not come before"));
        assert!(err(r#"{"command": ["sh"], "phases": [{"tasks": 1}], "tasks": 2}"#).contains("not both"));
        assert!(err(r#"{"command": ["/no/such/program"]}"#).contains("not an executable"));
        assert!(err(r#"{"command": ["no-such-program-pliant"]}"#).contains("PATH"));
        assert!(err(r#"{"command": ["sh"], "mem_mb": 2048}"#).contains("bigger than any node"));
        assert!(err(r#"{"command": ["sh"], "cpu_milli": 0}"#).contains("some CPU"));
        assert!(err(r#"{"command": ["sh"], "priority": 12}"#).contains("out of range"));
        assert!(err(r#"{"command": ["sh"], "tasks": 0}"#).contains("1–"));
        assert!(err(r#"{"command": ["sh"], "queue": "medium"}"#).contains("unknown variant"));
        assert!(err(r#"{"command": ["sh", "-c", "a\u0000b"]}"#).contains("argument 2 holds a NUL byte"));
        let long = format!(r#"{{"command": ["sh", "-c", "{}"]}}"#, "x".repeat(900 << 10));
        assert!(err(&long).contains("argument 2 is 921600 bytes, over the OS limit of 131071"));
        let many = format!(r#"{{"command": ["sh", {}]}}"#, vec![format!(r#""{}""#, "y".repeat(100_000)); 40].join(","));
        assert!(err(&many).contains("bytes the OS lets a program be given"));
        assert!(err(r#"{"command": ["sh"], "colour": 1}"#).contains("unknown field"));
        let elastic =
            |e: &str| err(&format!(r#"{{"command": ["sh"], "mem_mb": 800, "estimate_s": 5, "elastic": {e}}}"#));
        assert!(elastic(r#"{"penalty": 0.5}"#).contains("penalty 0.5 is below 1"));
        assert!(elastic(r#"{"penalty": 1.5, "min_mem_mb": 900}"#).contains("above the ideal memory 800 MB"));
        assert!(elastic(r#"{"penalty": 1.5, "floor": 1}"#).contains("unknown field"));
    }
}
