//! `pliant local` run by a live test: started, crashed and restarted,
//! asked through its API, stopped (and its cgroups removed) when dropped.

use super::live::free_port;
use pliant_live::cgroup::Layout;
use pliant_live::client::Client;
use pliant_live::tls::Pin;
use pliant_live::token::Token;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

const PLIANT: &str = env!("CARGO_BIN_EXE_pliant");

/// Nanoseconds since 1970.
pub fn unix_ns() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
}

/// A running `pliant local`; stopped with SIGTERM (its agent then removes
/// every cgroup it made) when dropped.
pub struct Local {
    child: Child,
    /// A client with the manager's token.
    pub client: Client,
    /// Its state directory.
    pub state: PathBuf,
    /// Its port.
    pub port: u16,
    policy: String,
    args: Vec<String>,
    log: PathBuf,
}

impl Local {
    /// `pliant local --policy POLICY` offering ⟨2 CPU, 600 MB⟩, the monitor every second.
    pub fn start(state: &Path, policy: &str, port: u16, log: &Path) -> Local {
        let args = ["--cpu", "2", "--mem", "600M", "--set", "monitor_interval_s=1"];
        Local::start_with(state, policy, &args.map(String::from), port, log)
    }

    /// `pliant local --policy POLICY ARGS…`, its stderr appended to `log`;
    /// waits until its API answers.
    pub fn start_with(state: &Path, policy: &str, args: &[String], port: u16, log: &Path) -> Local {
        let out = std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap();
        let child = Command::new(PLIANT)
            .args(["local", "--policy", policy])
            .args(args)
            .arg("--state-dir")
            .arg(state)
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .stdout(Stdio::null())
            .stderr(out)
            .spawn()
            .expect("start pliant local");
        // The manager makes its certificate and its token before it listens
        // (every read needs the token).
        let started = Instant::now();
        let (pin, token) = loop {
            if let (Some(pin), Some(token)) =
                (Pin::for_client(None, state).unwrap(), Token::for_client(None, state).unwrap_or(None))
            {
                break (pin, token);
            }
            assert!(started.elapsed() < Duration::from_secs(20), "no certificate or token in {}", state.display());
            sleep(Duration::from_millis(50));
        };
        let client = Client::new(&format!("https://127.0.0.1:{port}"), Some(pin)).with_token(Some(token));
        let (policy, args, log) = (policy.into(), args.to_vec(), log.into());
        let local = Local { child, client, state: state.into(), port, policy, args, log };
        local.wait_until("the API answers", Duration::from_secs(20), |c| c.get("/cluster").is_ok());
        local
    }

    /// Kills the manager without warning (its tasks live on) and starts it
    /// again from its journal, on a fresh port: the old one was at times
    /// still held when the new manager bound it ("Address already in use"),
    /// and what is tested here is the journal, not the port.
    pub fn crash_and_restart(&mut self) {
        self.restart_after(libc::SIGKILL);
    }

    /// Stops the manager cleanly (SIGTERM: its agent stops its tasks) and
    /// starts it again from its journal, on a fresh port.
    pub fn stop_and_restart(&mut self) {
        self.restart_after(libc::SIGTERM);
    }

    fn restart_after(&mut self, signal: i32) {
        // SAFETY: kill(2) on our own child, not reaped yet.
        unsafe { libc::kill(self.child.id() as i32, signal) };
        self.child.wait().unwrap();
        let again = Local::start_with(
            &self.state.clone(),
            &self.policy.clone(),
            &self.args.clone(),
            free_port(),
            &self.log.clone(),
        );
        let old = std::mem::replace(self, again);
        std::mem::forget(old);
    }

    /// Waits for `done`, at most `limit` (then fails with the log).
    pub fn wait_until(&self, what: &str, limit: Duration, done: impl Fn(&Client) -> bool) {
        let start = Instant::now();
        while !done(&self.client) {
            assert!(start.elapsed() < limit, "timed out waiting for {what}; log:\n{}", self.log_text());
            sleep(Duration::from_millis(50));
        }
    }

    /// Waits for every job to finish, fail or be cancelled.
    pub fn wait_for_every_job(&self, limit: Duration) {
        self.wait_until("every job to end", limit, |c| {
            let jobs = c.get("/jobs").unwrap();
            jobs.as_array()
                .unwrap()
                .iter()
                .all(|j| ["finished", "failed", "cancelled"].contains(&j["state"].as_str().unwrap()))
        });
    }

    /// What it printed so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// `GET /jobs/ID`.
    pub fn job(&self, id: u64) -> Value {
        self.client.get(&format!("/jobs/{id}")).unwrap()
    }

    /// Submits `body`; returns the job's id.
    pub fn submit(&self, body: Value) -> u64 {
        self.client.post("/jobs", &body).unwrap()["id"].as_u64().unwrap()
    }

    /// Where task `task` of `job` writes its stdout.
    pub fn stdout(&self, job: u64, task: u64) -> PathBuf {
        self.state.join(format!("logs/job-{job}/task-{task}/stdout"))
    }
}

impl Drop for Local {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
        // A manager that stopped cleanly removed its cgroup; one killed by a
        // failing test left it, with what runs in it: dropping the handle removes both.
        if let Ok(layout) = Layout::detect() {
            drop(layout.open(&pliant_manager::local::cgroup_name(&self.state)));
        }
    }
}

/// `pliant dirty --mb MB --passes PASSES`.
pub fn dirty(mb: u64, passes: u64) -> Vec<String> {
    [PLIANT, "dirty", "--mb", &mb.to_string(), "--passes", &passes.to_string()].map(String::from).to_vec()
}
