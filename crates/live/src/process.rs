//! A task's command as a real process: started inside its cgroup (it joins
//! before `exec`, so nothing it allocates or forks is charged elsewhere), in
//! its own process group, with stdout and stderr going to files, confined
//! as [`Confinement`] says (see [`crate::confine`]). A task
//! started with an exit file outlives its agent: a restarted agent adopts it
//! by its process group and learns its exit code from that file.

use crate::cgroup::Cgroup;
use crate::confine::{task_environment, Confinement};
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

/// Environment variable naming the file the exit-code wrapper writes.
const EXIT_FILE_ENV: &str = "PLIANT_EXIT_FILE";

/// Runs the command given as its arguments, then writes its exit code to the
/// exit file and exits with it. It catches SIGUSR1 (the checkpoint request,
/// sent to the whole process group) so as to outlive the command and record
/// its exit; a caught signal is reset to its default in the command. The
/// file is written blank (no code yet) before the command runs and the code
/// over it in place (`1<>`, no truncation) after: a file system the
/// command's output filled meanwhile still takes the code, which is what
/// tells an agent restarted after a crash how the task ended.
const EXIT_WRAPPER: &str = r#"trap : USR1; printf '%11s\n' '' 2>/dev/null > "$PLIANT_EXIT_FILE"; "$@"; c=$?;
printf '%-11s\n' $c 2>/dev/null 1<> "$PLIANT_EXIT_FILE"; exit $c"#;

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
    /// When set, the command runs under `/bin/sh`, which writes its exit code
    /// here when it ends, so an agent that did not start it can learn it.
    pub exit_file: Option<PathBuf>,
    /// The working directory it starts in (default: the caller's).
    pub cwd: Option<PathBuf>,
    /// When set, no file the task writes (its output first) may grow past
    /// this many bytes (`RLIMIT_FSIZE`): a write past it fails (`EFBIG`;
    /// `SIGXFSZ` is ignored), so what comes after is dropped.
    pub max_file_bytes: Option<u64>,
    /// The user it runs as and the processes it may hold.
    pub confinement: Confinement,
}

/// A running (or exited, not yet dropped) task process.
#[derive(Debug)]
pub struct TaskProcess {
    /// The child, if this agent started it (adopted tasks are not our children).
    child: Option<Child>,
    pgid: i32,
    status: Option<ExitStatus>,
}

impl TaskProcess {
    /// Starts `spec` inside `cgroup`, as the leader of a new process group.
    pub fn spawn(spec: &CommandSpec, cgroup: &Cgroup) -> io::Result<TaskProcess> {
        if spec.argv.is_empty() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty command"));
        }
        let argv: Vec<String> = match &spec.exit_file {
            Some(_) => ["/bin/sh", "-c", EXIT_WRAPPER, "pliant-task"]
                .into_iter()
                .map(String::from)
                .chain(spec.argv.iter().cloned())
                .collect(),
            None => spec.argv.clone(),
        };
        let (program, args) = argv.split_first().expect("checked above");
        let procs: Vec<CString> = cgroup
            .procs_files()
            .iter()
            .map(|p| CString::new(p.as_os_str().as_bytes()).expect("cgroup paths have no NUL"))
            .collect();
        let user = spec.confinement.user.as_ref().filter(|u| !u.is_root());
        let agent_env = std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)));
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env_clear()
            .envs(task_environment(agent_env, user))
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(crate::task_files::open_output(&spec.stdout)?)
            .stderr(crate::task_files::open_output(&spec.stderr)?)
            .process_group(0);
        // A task run as another user may not be able to reach its own
        // directory by its full path (the agent's directories above it are
        // private): it is given the paths inside its directory from there.
        let reachable = |path: &std::path::Path| -> PathBuf {
            match (&spec.cwd, user) {
                (Some(cwd), Some(_)) => path.strip_prefix(cwd).map_or_else(|_| path.to_path_buf(), PathBuf::from),
                _ => path.to_path_buf(),
            }
        };
        if let Some(dir) = &spec.checkpoint_dir {
            cmd.env(CHECKPOINT_DIR_ENV, reachable(dir));
        }
        if let Some(dir) = &spec.cwd {
            cmd.current_dir(dir);
        }
        if let Some(file) = &spec.exit_file {
            crate::task_files::remove(file)?;
            cmd.env(EXIT_FILE_ENV, reachable(file));
        }
        // SAFETY: the hook runs between fork and exec and only calls
        // async-signal-safe functions (setrlimit, signal, open, write, close,
        // setgroups, setgid, setuid, prctl, capset) on memory prepared before the
        // fork; it allocates nothing.
        let max_file = spec.max_file_bytes;
        let identity = user.map(|u| (u.uid, u.gid, u.groups.clone()));
        let drop_capabilities = crate::confine::running_as_root();
        unsafe {
            cmd.pre_exec(move || {
                if let Some(bytes) = max_file {
                    let limit = libc::rlimit { rlim_cur: bytes as libc::rlim_t, rlim_max: bytes as libc::rlim_t };
                    if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                    libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                }
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
                // Capabilities and the user last: joining the cgroups above needs root.
                if drop_capabilities {
                    crate::confine::drop_bounding_set()?;
                }
                if let Some((uid, gid, groups)) = &identity {
                    if libc::setgroups(groups.len(), groups.as_ptr()) != 0
                        || libc::setgid(*gid) != 0
                        || libc::setuid(*uid) != 0
                    {
                        return Err(io::Error::last_os_error());
                    }
                }
                if drop_capabilities {
                    crate::confine::clear_capabilities()?;
                }
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn()?;
        Ok(TaskProcess { pgid: child.id() as i32, child: Some(child), status: None })
    }

    /// Takes over a task another agent started: the process group `pgid`.
    /// Its exit status is then not known here: [`TaskProcess::try_wait`]
    /// reports none, and the caller watches the task's cgroup instead.
    pub fn adopt(pgid: i32) -> TaskProcess {
        TaskProcess { child: None, pgid, status: None }
    }

    /// True when this agent did not start the process but adopted it.
    pub fn is_adopted(&self) -> bool {
        self.child.is_none()
    }

    /// The process id of the group leader (also the process group id).
    pub fn pid(&self) -> u32 {
        self.pgid as u32
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
        if let (None, Some(child)) = (self.status, self.child.as_mut()) {
            self.status = child.try_wait()?;
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
        let s = match self.child.as_mut() {
            Some(child) => child.wait()?,
            None => ExitStatus::from_raw(libc::SIGKILL),
        };
        self.status = Some(s);
        Ok(s)
    }
}

impl Drop for TaskProcess {
    fn drop(&mut self) {
        let _ = self.kill_group();
    }
}

/// The exit status a task's exit file records (see [`CommandSpec::exit_file`]),
/// if it wrote one.
pub fn recorded_exit(file: &std::path::Path) -> Option<ExitStatus> {
    let code: i32 = crate::task_files::read_small(file)?.trim().parse().ok()?;
    Some(ExitStatus::from_raw((code & 0xff) << 8))
}

/// A short text for an exit status: `exit 3` or `signal 9`.
pub fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit {code}"),
        (None, Some(sig)) => format!("signal {sig}"),
        (None, None) => "unknown exit".into(),
    }
}
