//! `pliant local`: the manager and one agent for this machine in one process.
//! Three threads: the agent (carries out operations, watches its tasks), the
//! API server, and the manager loop that feeds reports to the core every
//! [`TICK`] (sooner when the core's next deadline comes first) and hands its
//! operations to the agent.

use crate::api;
use crate::manager::{check_kept_policy, default_policy, ClusterConfig, Manager};
use pliant_core::policy::{Profile, Registry};
use pliant_live::agent::Agent;
use pliant_live::cgroup::Layout;
use pliant_live::confine::Confinement;
use pliant_live::machine::{this_node, unix_us, Offer};
use pliant_live::protocol::{AgentOp, AgentReport};
use pliant_live::tls::ServerTls;
use pliant_live::token::{check_listen, Token};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often, at least, the manager loop runs and the agent looks at its tasks.
pub const TICK: Duration = Duration::from_millis(50);

/// Where a manager keeps its state and listens, and its policy parameters.
#[derive(Debug, Clone)]
pub struct ManagerSetup {
    /// Where the journal and task logs live (made absolute at start).
    pub state_dir: PathBuf,
    /// Address the API listens on.
    pub listen: String,
    /// `--set` parameters.
    pub params: Vec<(String, String)>,
    /// The API token's file (`--token-file`); default `STATE_DIR/token`,
    /// generated on first start. Needed to listen beyond loopback.
    pub token_file: Option<PathBuf>,
    /// The plugins policies are built from.
    pub registry: Registry,
}

/// Whether agents join a manager over its API.
#[derive(Debug, Clone, Copy)]
pub enum Agents<'a> {
    /// No: its one node runs in its process (`pliant local`).
    InProcess,
    /// Yes (`pliant serve`), with the join token of this file, else of
    /// `STATE_DIR/join-token` (generated on first start).
    Join(Option<&'a Path>),
}

/// The manager's API, ready to serve.
#[derive(Debug)]
pub struct OpenApi {
    /// The listening socket.
    pub listener: TcpListener,
    /// The API token and, where agents join, the join token.
    pub tokens: api::Tokens,
    /// The manager's certificate.
    pub tls: ServerTls,
    /// The state directory, absolute and private.
    pub state_dir: PathBuf,
}

impl OpenApi {
    /// `https://ADDRESS`, for messages.
    pub fn url(&self) -> String {
        format!("https://{}", pliant_live::daemon::listening_address(&self.listener))
    }
}

impl ManagerSetup {
    /// The API's tokens, certificate and listening socket, and the state
    /// directory made absolute and private (see [`crate::state_dir::prepare`]):
    /// refuses an address reachable from other machines without
    /// `--token-file` (see [`check_listen`]), and a join token that is the API token.
    pub fn open_api(&self, agents: Agents, log: &dyn Fn(&str)) -> Result<OpenApi, String> {
        check_listen(&self.listen, self.token_file.is_some())?;
        // Token files given are checked before anything is written: a refused one leaves no trace.
        if let Some(file) = &self.token_file {
            pliant_live::strict::check_file(file, "API token")?;
        }
        if let Agents::Join(Some(file)) = agents {
            pliant_live::strict::check_file(file, "join token")?;
        }
        let state_dir = crate::state_dir::prepare(&self.state_dir, log)?;
        // The certificate first: a client that finds a token finds it too.
        let tls = ServerTls::for_manager(&state_dir, log)?;
        let token = Token::for_manager(&state_dir, self.token_file.as_deref(), log)?;
        let join = match agents {
            Agents::InProcess => None,
            Agents::Join(file) => Some(Token::join_for_manager(&state_dir, file, log)?),
        };
        if join.as_ref() == Some(&token) {
            return Err("the join token must not be the API token: agents that hold it could act as users".into());
        }
        let tokens = api::Tokens { api: token, join };
        let listener = bind_patiently(&self.listen, BIND_PATIENCE, log)
            .map_err(|e| format!("cannot listen on {}: {e}", self.listen))?;
        log(&format!("TLS certificate {} (clients pin it with --ca)", tls.fingerprint()));
        Ok(OpenApi { listener, tokens, tls, state_dir })
    }
}

/// How long a manager restarted on its port waits for the port to be free.
const BIND_PATIENCE: Duration = Duration::from_secs(5);

/// Binds `addr`, retrying for up to `patience` while the port is in use: a
/// manager restarted at once after a crash has found its old port still
/// held for a moment (seen in the live tests, cause not found).
fn bind_patiently(addr: &str, patience: Duration, log: &dyn Fn(&str)) -> std::io::Result<TcpListener> {
    let started = Instant::now();
    let mut told = false;
    loop {
        match TcpListener::bind(addr) {
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && started.elapsed() < patience => {
                if !told {
                    log(&format!("{addr} is in use; retrying for up to {:.1} s", patience.as_secs_f64()));
                    told = true;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// Options of `pliant local`.
#[derive(Debug, Clone)]
pub struct LocalOptions {
    /// State, address and parameters.
    pub setup: ManagerSetup,
    /// The policy (default: preset `gp` where the node can do it, else `kill`).
    pub policy: Option<Profile>,
    /// What the node offers.
    pub offer: Offer,
    /// How long a task asked to checkpoint has to save and exit.
    pub checkpoint_grace: std::time::Duration,
    /// The cap on each task's output (and any file it writes), bytes.
    pub max_log_bytes: Option<u64>,
    /// The user tasks run as and the processes each may hold.
    pub confinement: Confinement,
}

/// The name of the top cgroup for a state directory: one per cluster, so two
/// local managers on one machine keep apart, and a restart finds its tasks.
/// The cgroup `pliant local` keeps its tasks in, named after its state directory.
pub fn cgroup_name(state_dir: &std::path::Path) -> String {
    let path = std::fs::canonicalize(state_dir).unwrap_or_else(|_| state_dir.to_path_buf());
    // FNV-1a: stable across builds, unlike the standard hasher.
    let hash = path
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3));
    format!("pliant-local-{hash:016x}")
}

/// Runs until `stop` is set. `log` receives one line per notable thing.
pub fn run_local(opts: &LocalOptions, stop: &AtomicBool, log: &(dyn Fn(&str) + Sync)) -> Result<(), String> {
    let registry = &opts.setup.registry;
    // Listen first: an agent that cannot serve would stop, and take the tasks it recovers with it.
    let api = opts.setup.open_api(Agents::InProcess, log)?;
    let state_dir = api.state_dir.clone();
    check_kept_policy(&state_dir, opts.policy.as_ref(), registry)?;
    let journal_exists = state_dir.join("journal.sqlite").exists();
    let layout = Layout::detect().map_err(|e| e.to_string())?;
    let (mut agent, found) = Agent::start(&layout, &cgroup_name(&state_dir), journal_exists, opts.checkpoint_grace)
        .map_err(|e| format!("agent: {e}"))?;
    agent.set_max_output(opts.max_log_bytes);
    if let Some(note) = agent.confine(opts.confinement.clone()) {
        log(&note);
    }
    if found && !journal_exists {
        log("removed a leftover cgroup of an earlier run");
    }
    let caps = *agent.capabilities();
    let node = this_node("local", &caps, opts.offer)?;
    let policy = match opts.policy.clone() {
        Some(profile) => profile,
        None => {
            let name = default_policy(std::slice::from_ref(&node));
            if !journal_exists {
                log(&format!("policy {name} (the default for what this node can do)"));
            }
            registry.preset(name)?
        }
    };
    for note in caps.notes() {
        log(&note);
    }
    let params = opts.setup.params.clone();
    let fresh = ClusterConfig { policy: policy.into(), params, nodes: vec![node], epoch_unix_us: unix_us() };
    let (mut manager, recovered) = Manager::open(&state_dir, fresh, registry).map_err(|e| e.to_string())?;
    if let Some(range) = opts.confinement.job_uids {
        manager.set_task_uids(range);
    }
    if recovered {
        log(&format!(
            "recovered {} jobs from the journal ({} steps); taking over their tasks",
            manager.jobs().len(),
            manager.journal_steps().map_err(|e| e.to_string())?
        ));
        manager.queue_recovery();
    }
    log(&format!(
        "manager on {} — policy {}, node {}",
        api.url(),
        manager.config().policy,
        manager.config().nodes[0].capacity
    ));
    let manager = Mutex::new(manager);
    let (ops_tx, ops_rx) = channel::<Vec<AgentOp>>();
    let (reports_tx, reports_rx) = channel::<AgentReport>();
    let journaled = AtomicU64::new(0);
    std::thread::scope(|s| {
        s.spawn(|| run_agent(agent, ops_rx, reports_tx, &journaled, stop));
        s.spawn(|| api::serve(&api.listener, &manager, &api.tokens, &api.tls, stop));
        let result = manager_loop(&manager, &reports_rx, &journaled, &ops_tx, stop, log);
        stop.store(true, Ordering::SeqCst);
        result
    })
}

/// Feeds the agent's reports to the manager every tick and hands its
/// operations to the agent. Reports wait here, in order, while the journal
/// has no room; `journaled` counts those taken into journaled steps.
fn manager_loop(
    manager: &Mutex<Manager>,
    reports: &Receiver<AgentReport>,
    journaled: &AtomicU64,
    ops: &Sender<Vec<AgentOp>>,
    stop: &AtomicBool,
    log: &(dyn Fn(&str) + Sync),
) -> Result<(), String> {
    let mut waiting: Vec<(u32, AgentReport)> = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        // Until the core's next deadline (a timer, the monitor), at most a tick.
        let pause = manager.lock().unwrap_or_else(|e| e.into_inner()).pause(TICK);
        std::thread::sleep(pause);
        let incoming: Vec<(u32, AgentReport)> = reports.try_iter().map(|r| (0, r)).collect();
        let mut m = manager.lock().unwrap_or_else(|e| e.into_inner());
        for (_, r) in &incoming {
            log(&format!("{:.3} s: {r}", m.now() as f64 / 1e6));
        }
        waiting.extend(incoming);
        if m.advance(waiting.clone()).map_err(|e| e.to_string())? {
            journaled.fetch_add(waiting.len() as u64, Ordering::SeqCst);
            waiting.clear();
        }
        if let Some(news) = m.placing_news() {
            log(&news);
        }
        let batch = m.take_ops(0);
        if batch.is_empty() {
            continue;
        }
        for op in &batch {
            log(&format!("{:.3} s: {op}", m.now() as f64 / 1e6));
        }
        // One batch per step: the agent carries out all of it before it next polls its tasks.
        if ops.send(batch).is_err() {
            return Err("the agent stopped".into());
        }
    }
    Ok(())
}

/// Carries out the manager's operations and polls the tasks every tick,
/// sending their reports on; an ended task's cgroup and exit file stay
/// until every report sent is `journaled`, so that a crash or a stop
/// before then leaves the restarted agent what it needs to report the end
/// again.
fn run_agent(
    mut agent: Agent,
    ops: Receiver<Vec<AgentOp>>,
    reports: Sender<AgentReport>,
    journaled: &AtomicU64,
    stop: &AtomicBool,
) {
    let mut out = Vec::new();
    let mut sent = 0u64;
    // Reports go out as soon as they are made: freezing a swapping task in
    // `poll` can take a while, and the manager waits for reclaimed memory.
    let flush = |out: &mut Vec<AgentReport>, sent: &mut u64| {
        *sent += out.len() as u64;
        out.drain(..).all(|r| reports.send(r).is_ok())
    };
    'running: while !stop.load(Ordering::SeqCst) {
        if let Ok(batch) = ops.recv_timeout(TICK) {
            for op in std::iter::once(batch).chain(ops.try_iter()).flatten() {
                agent.apply(op, &mut out);
                if !flush(&mut out, &mut sent) {
                    break 'running;
                }
            }
        }
        if journaled.load(Ordering::SeqCst) == sent {
            agent.forget_ended();
        }
        agent.poll(&mut out);
        if !flush(&mut out, &mut sent) {
            break;
        }
    }
    // Ended tasks whose reports the manager has not journaled keep their
    // cgroups and exit files: the next start learns their ends from them.
    if journaled.load(Ordering::SeqCst) == sent {
        agent.forget_ended();
    } else {
        agent.keep_ended();
    }
    // Dropping the agent kills its tasks and removes their cgroups.
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// A port held for 300 ms is bound once it is let go, with one message;
    /// one held past the patience gives the bind's own error.
    #[test]
    fn a_held_port_is_waited_for_within_the_patience() {
        let held = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = held.local_addr().unwrap().to_string();
        let said = RefCell::new(Vec::new());
        let log = |m: &str| said.borrow_mut().push(m.to_string());
        let err = bind_patiently(&addr, Duration::from_millis(200), &log).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
        let freer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(held);
        });
        let bound = bind_patiently(&addr, Duration::from_secs(5), &log).unwrap();
        freer.join().unwrap();
        assert_eq!(bound.local_addr().unwrap().to_string(), addr);
        let said = said.into_inner();
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said.iter().all(|m| m.starts_with(&format!("{addr} is in use; retrying"))), "{said:?}");
    }
}
