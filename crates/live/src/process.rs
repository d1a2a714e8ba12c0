//! A task's command as a real process: started inside its cgroup (it joins
//! before `exec`, so nothing it allocates or forks is charged elsewhere), in
//! its own process group, with stdout and stderr going to files.

use crate::cgroup::Cgroup;
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// Environment variable naming the task's checkpoint directory (cooperative checkpointing).
pub const CHECKPOINT_DIR_ENV: &str = "PLIANT_CHECKPOINT_DIR";

/// What to run and where its output goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// File that receives stdout (appended to, so restarts add to it).
    pub stdout: PathBuf,
    /// File that receives stderr (appended to).
    pub stderr: PathBuf,
    /// Where the task writes its state when asked to checkpoint, passed as
    /// [`CHECKPOINT_DIR_ENV`]; a restarted task reads it back from there.
    pub checkpoint_dir: Option<PathBuf>,
}

/// A running (or exited, not yet dropped) task process.
#[derive(Debug)]
pub struct TaskProcess {
    child: Child,
    status: Option<ExitStatus>,
}

impl TaskProcess {
    /// Starts `spec` inside `cgroup`, as the leader of a new process group.
    pub fn spawn(spec: &CommandSpec, cgroup: &Cgroup) -> io::Result<TaskProcess> {
        let (program, args) =
            spec.argv.split_first().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "empty command"))?;
        let append = |p: &PathBuf| std::fs::OpenOptions::new().create(true).append(true).open(p);
        let procs: Vec<CString> = cgroup
            .procs_files()
            .iter()
            .map(|p| CString::new(p.as_os_str().as_bytes()).expect("cgroup paths have no NUL"))
            .collect();
        let mut cmd = Command::new(program);
        cmd.args(args)
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(append(&spec.stdout)?)
            .stderr(append(&spec.stderr)?)
            .process_group(0);
        if let Some(dir) = &spec.checkpoint_dir {
            cmd.env(CHECKPOINT_DIR_ENV, dir);
        }
        // SAFETY: the hook runs between fork and exec and only calls
        // async-signal-safe functions (open, write, close) on memory prepared
        // before the fork; it allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                for path in &procs {
                    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                    if fd < 0 {
                        return Err(io::Error::last_os_error());
                    }
                    // "0" means the writing process itself.
                    let n = libc::write(fd, b"0".as_ptr().cast(), 1);
                    let err = io::Error::last_os_error();
                    libc::close(fd);
                    if n != 1 {
                        return Err(err);
                    }
                }
                Ok(())
            });
        }
        Ok(TaskProcess { child: cmd.spawn()?, status: None })
    }

    /// The process id (also the process group id).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` to the task's whole process group.
    pub fn signal_group(&self, signal: i32) -> io::Result<()> {
        // SAFETY: killpg(2) has no memory-safety preconditions.
        if unsafe { libc::killpg(self.pid() as i32, signal) } == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// The exit status, if the process has exited.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.status.is_none() {
            self.status = self.child.try_wait()?;
        }
        Ok(self.status)
    }

    /// Waits up to `timeout` for the process to exit.
    pub fn wait_timeout(&mut self, timeout: Duration) -> io::Result<Option<ExitStatus>> {
        let start = Instant::now();
        loop {
            if let Some(s) = self.try_wait()? {
                return Ok(Some(s));
            }
            if start.elapsed() >= timeout {
                return Ok(None);
            }
            sleep(Duration::from_millis(5));
        }
    }

    /// SIGKILLs the process group and reaps the leader.
    pub fn kill_group(&mut self) -> io::Result<ExitStatus> {
        if let Some(s) = self.status {
            return Ok(s);
        }
        // The group may already be gone; the wait below is what matters.
        let _ = self.signal_group(libc::SIGKILL);
        let s = self.child.wait()?;
        self.status = Some(s);
        Ok(s)
    }
}

impl Drop for TaskProcess {
    fn drop(&mut self) {
        let _ = self.kill_group();
    }
}

/// A short text for an exit status: `exit 3` or `signal 9`.
pub fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit {code}"),
        (None, Some(sig)) => format!("signal {sig}"),
        (None, None) => "unknown exit".into(),
    }
}
