//! `pliant agent --manager URL`: this machine's agent as its own process. It
//! keeps what a killed agent left, registers the node's size and working
//! mechanisms (the manager then has it take over the tasks it should hold and
//! remove the rest), then heartbeats: each heartbeat carries its reports and brings
//! back the operations to carry out. If the manager declared it lost, it
//! stops its tasks and registers again. A new node joins with the join
//! token and is issued its node credential, kept in its [`NodeDir`]; from
//! then on it registers and acts as its node with that credential alone. If
//! it cannot reach the manager for the
//! manager's agent timeout it stops its tasks (fencing), and a watchdog
//! process does so if the agent itself has died.

use crate::agent::Agent;
use crate::cgroup::Layout;
use crate::client::Client;
use crate::confine::Confinement;
use crate::fence::{watchdog_after, Contact};
use crate::machine::{this_node, Offer};
use crate::node_dir::NodeDir;
use crate::node_loop::{NodeBody, NodeLoop, Peer};
use crate::protocol::{AgentOp, AgentReport};
use crate::token::Token;
use crate::wire::Registered;
use serde_json::Value;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

/// How often the agent heartbeats.
pub const HEARTBEAT: Duration = Duration::from_millis(200);
/// Longest pause between attempts while the manager cannot be reached or refuses.
pub const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Options of `pliant agent`.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// The manager's URL.
    pub manager: String,
    /// Where the join token comes from, for a node without a credential yet:
    /// `--join-token-file`, or the state directory read when neither it nor
    /// `PLIANT_JOIN_TOKEN` is given (see [`Token::join_for_agent`]). Read
    /// again at each registration, so an agent may start before its manager
    /// has written it.
    pub join_token_file: Option<PathBuf>,
    /// The manager's state directory, for its join token and certificate.
    pub state_dir: PathBuf,
    /// The manager's certificate, pinned (`--ca`: a file or `sha256:HEX`);
    /// else `PLIANT_CA`, else the state directory's (see [`Pin::for_client`]).
    /// Read again at each registration until found; nothing is sent before.
    pub ca: Option<String>,
    /// The node's name (fixed for the life of the cluster).
    pub name: String,
    /// What the node offers.
    pub offer: Offer,
    /// How long a task asked to checkpoint has to save and exit.
    pub checkpoint_grace: std::time::Duration,
    /// The cap on each task's output (and any file it writes), bytes.
    pub max_log_bytes: Option<u64>,
    /// The user tasks run as and the processes each may hold.
    pub confinement: Confinement,
    /// How long the manager may refuse this agent for good (a wrong credential,
    /// an unknown node, a node its policy cannot use) before the agent stops.
    pub give_up_after: Duration,
    /// This node's own state: its credential, its last contact (see [`NodeDir`]).
    pub node_dir: PathBuf,
    /// The `pliant` executable, run as `pliant agent-watchdog`.
    pub program: PathBuf,
}

/// Runs until `stop` is set; then every task is killed and every cgroup
/// removed, but those of tasks that ended whose reports the manager has
/// not taken (see [`Agent::keep_ended`]). Returns an error when the manager has refused this agent for
/// good (see [`Pacer`]) for `give_up_after`.
pub fn run_agent(opts: &AgentOptions, stop: &AtomicBool, log: &(dyn Fn(&str) + Sync)) -> Result<(), String> {
    let node_dir = NodeDir::open(&opts.node_dir)?;
    let credential = node_dir.credential()?;
    let contact = node_dir.contact();
    let layout = Layout::detect().map_err(|e| e.to_string())?;
    let top = format!("pliant-agent-{}", opts.name);
    // A killed predecessor's watchdog goes first: this agent starts its own.
    stop_watchdog(&node_dir.watchdog_pid(), &contact);
    let (mut agent, leftover) = Agent::start(&layout, &top, true, opts.checkpoint_grace).map_err(|e| e.to_string())?;
    agent.set_max_output(opts.max_log_bytes);
    if let Some(note) = agent.confine(opts.confinement.clone()) {
        log(&note);
    }
    if leftover {
        log("found a previous agent's cgroup: the manager says which of its tasks to take over");
    }
    let record = this_node(&opts.name, agent.capabilities(), opts.offer)?;
    for note in &record.notes {
        log(note);
    }
    let timeout = node_dir.agent_timeout();
    let watchdog = match timeout {
        Some(t) => Some(Watchdog::start(&opts.program, &top, &contact, t, &node_dir.watchdog_pid())?),
        None => None,
    };
    let mut as_node = Client::new(&opts.manager, None).with_token(credential.clone());
    if let Some(t) = timeout {
        as_node = as_node.with_timeout(answer_timeout(t));
    }
    let link = NodeLoop {
        peer: MANAGER,
        joiner: Client::new(&opts.manager, None),
        as_node,
        credential,
        registration: serde_json::to_value(&record).expect("registrations serialise"),
        label: record.capacity.to_string(),
    };
    let mut body = ManagedNode { opts, node_dir: &node_dir, watchdog, agent, contact, top, timeout };
    link.run(opts, &node_dir, &mut body, stop, log)
}

/// Pliant's own manager: a heartbeat it refuses with 409 declared the node
/// lost (it registers again, its tasks running on); a 409 to a registration
/// lasts.
const MANAGER: Peer = Peer {
    name: "manager",
    registration_permanent: &[400, 401, 403, 404, 409],
    heartbeat_permanent: &[400, 401, 403, 404],
    register_again: &[409],
    orders_void_on_register: false,
};

/// This machine's node under pliant's own manager: its tasks, its contact
/// with the manager and the watchdog that fences it.
struct ManagedNode<'a> {
    opts: &'a AgentOptions,
    node_dir: &'a NodeDir,
    // Dropped (stopped) before the agent, as the agent's tasks are stopped.
    watchdog: Option<Watchdog>,
    agent: Agent,
    contact: Contact,
    top: String,
    timeout: Option<Duration>,
}

impl Drop for ManagedNode<'_> {
    /// The tasks that ended since the manager last took every report keep
    /// their cgroups and exit files for the next agent: their reports may
    /// not be journaled (see [`Agent::keep_ended`]).
    fn drop(&mut self) {
        self.agent.keep_ended();
    }
}

impl NodeBody for ManagedNode<'_> {
    // Before the tasks are looked at: one the watchdog killed is then
    // reported lost, not failed.
    fn before_turn(&mut self, reports: &mut Vec<AgentReport>, log: &dyn Fn(&str)) {
        if let Some(t) = self.timeout {
            fence(&mut self.agent, &self.contact, t, reports, log);
        }
    }

    fn registered(
        &mut self,
        answer: &Registered,
        sent: SystemTime,
        as_node: &mut Client,
        pacer: &mut Pacer,
        log: &dyn Fn(&str),
    ) -> Result<(), String> {
        stamp(&self.contact, sent, log);
        let told = Duration::from_millis(answer.agent_timeout_ms);
        if self.timeout != Some(told) {
            self.node_dir.set_agent_timeout(told)?;
            drop(self.watchdog.take());
            self.watchdog = Some(Watchdog::start(
                &self.opts.program,
                &self.top,
                &self.contact,
                told,
                &self.node_dir.watchdog_pid(),
            )?);
            self.timeout = Some(told);
        }
        pacer.limit(told / 4);
        // A manager that does not answer must not keep this agent from fencing in time.
        *as_node = as_node.clone().with_timeout(answer_timeout(told));
        Ok(())
    }

    fn poll(&mut self, reports: &mut Vec<AgentReport>) {
        self.agent.poll(reports);
    }

    fn heartbeat_answered(&mut self, sent: SystemTime, all_taken: bool, log: &dyn Fn(&str)) {
        stamp(&self.contact, sent, log);
        // An ended task's cgroup and exit file stay until the manager has taken its report.
        if all_taken {
            self.agent.forget_ended();
        }
    }

    fn apply(&mut self, op: AgentOp, reports: &mut Vec<AgentReport>, log: &dyn Fn(&str)) {
        log(&op.to_string());
        self.agent.apply(op, reports);
    }
}

/// How long a heartbeat waits for its answer under the agent timeout `timeout`.
fn answer_timeout(timeout: Duration) -> Duration {
    (timeout / 4).max(HEARTBEAT)
}

/// Records a contact; a contact file that cannot be written is said (the
/// watchdog will then stop the tasks at the timeout).
fn stamp(contact: &Contact, sent: SystemTime, log: &dyn Fn(&str)) {
    if let Err(e) = contact.stamp(sent) {
        log(&format!("cannot record the contact with the manager in {}: {e}", contact.path().display()));
    }
}

/// Fencing (Kubernetes never starts a second copy of a pod until its node is
/// fenced): once the manager has not been reached for `timeout`, every task
/// is stopped and reported lost, so that it never runs beside the copy the
/// manager starts elsewhere after `timeout` and a margin.
fn fence(agent: &mut Agent, contact: &Contact, timeout: Duration, reports: &mut Vec<AgentReport>, log: &dyn Fn(&str)) {
    let silence = contact.age().unwrap_or(Duration::MAX);
    let tasks: Vec<_> = agent.tasks().collect();
    if silence <= timeout || tasks.is_empty() {
        return;
    }
    let reason = format!("its agent lost the manager for over {:.1} s and stopped it (fencing)", timeout.as_secs_f64());
    // Reports already made stay (they may have been sent, and are numbered).
    for &task in &tasks {
        agent.apply(AgentOp::Stop { task }, &mut Vec::new());
        reports.push(AgentReport::Lost { task, reason: reason.clone() });
    }
    let names: Vec<String> = tasks.iter().map(|t| t.to_string()).collect();
    log(&format!(
        "no contact with the manager for over {:.1} s: stopped {} so that they cannot run twice (fencing)",
        timeout.as_secs_f64(),
        names.join(", ")
    ));
}

/// The watchdog process (`pliant agent-watchdog`, see
/// `crate::fence::watch`): it stops the tasks if this agent dies and
/// no successor renews the contact. Stopped when dropped.
struct Watchdog {
    child: Child,
    pid_file: PathBuf,
}

impl Watchdog {
    fn start(
        program: &Path,
        top: &str,
        contact: &Contact,
        timeout: Duration,
        pid_file: &Path,
    ) -> Result<Watchdog, String> {
        let after = watchdog_after(timeout).as_millis().to_string();
        let child = Command::new(program)
            .args(["agent-watchdog", "--cgroup", top, "--after-ms", &after, "--parent"])
            .arg(std::process::id().to_string())
            .arg("--contact")
            .arg(contact.path())
            .stdin(Stdio::null())
            // Its own process group: a Ctrl-C meant for the agent does not stop it.
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start the watchdog {}: {e}", program.display()))?;
        std::fs::write(pid_file, format!("{}\n", child.id())).map_err(|e| format!("{}: {e}", pid_file.display()))?;
        Ok(Watchdog { child, pid_file: pid_file.to_path_buf() })
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.pid_file);
    }
}

/// Stops the watchdog a killed agent left (its pid in `pid_file`, checked
/// to be a watchdog of the same contact file) and waits until it is gone.
fn stop_watchdog(pid_file: &Path, contact: &Contact) {
    let Some(pid) = std::fs::read_to_string(pid_file).ok().and_then(|t| t.trim().parse::<i32>().ok()) else {
        return;
    };
    let cmdline =
        || std::fs::read(format!("/proc/{pid}/cmdline")).ok().map(|c| String::from_utf8_lossy(&c).into_owned());
    let ours = |c: &str| c.contains("agent-watchdog") && c.contains(&*contact.path().to_string_lossy());
    if cmdline().is_some_and(|c| ours(&c)) {
        // SAFETY: kill(2) on a process checked above to be our watchdog.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        let start = Instant::now();
        while cmdline().is_some_and(|c| ours(&c)) && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    let _ = std::fs::remove_file(pid_file);
}

/// The agent's pace: a heartbeat every [`HEARTBEAT`] while the manager
/// answers; after a failure, twice as long each time up to [`MAX_BACKOFF`];
/// and an error once the manager has refused the agent for good for longer
/// than the agent's patience.
pub struct Pacer {
    pause: Duration,
    longest: Duration,
    patience: Duration,
    refused_since: Option<Instant>,
}

impl Pacer {
    /// A pace that gives up once refusals have lasted `patience`.
    pub fn new(patience: Duration) -> Pacer {
        Pacer { pause: HEARTBEAT, longest: MAX_BACKOFF, patience, refused_since: None }
    }

    /// Sleeps for the current pause, waking early when `stop` is set.
    pub fn wait(&self, stop: &AtomicBool) {
        let until = Instant::now() + self.pause;
        while !stop.load(Ordering::SeqCst) && Instant::now() < until {
            std::thread::sleep(until.saturating_duration_since(Instant::now()).min(HEARTBEAT));
        }
    }

    /// The peer answered: back to a heartbeat's pause, refusals forgotten.
    pub fn got_through(&mut self) {
        self.pause = HEARTBEAT;
        self.refused_since = None;
    }

    /// Pauses at most `longest` from now on (a quarter of the agent timeout,
    /// so that the fencing deadline is not slept through).
    pub fn limit(&mut self, longest: Duration) {
        self.longest = longest.clamp(HEARTBEAT, MAX_BACKOFF);
    }

    /// A failure that may pass (no answer): the pause doubles.
    pub fn failed(&mut self) {
        self.pause = (self.pause * 2).min(self.longest);
    }

    /// A permanent refusal: logged, then an error once refusals have lasted the patience.
    pub fn refused(&mut self, why: &str, log: &dyn Fn(&str)) -> Result<(), String> {
        self.failed();
        let since = *self.refused_since.get_or_insert_with(Instant::now);
        if since.elapsed() >= self.patience {
            return Err(format!(
                "{why}; refused for {:.0} s (--give-up-after): this agent stops",
                since.elapsed().as_secs_f64()
            ));
        }
        log(&format!("{why}; retrying in {:.1} s", self.pause.as_secs_f64()));
        Ok(())
    }
}

/// Reads the answer to a registration and keeps the node credential it
/// issues in `node_dir`, returned for the requests that follow; an agent
/// that joined with the join token must be issued one. `peer` names who
/// answered ("manager", "controller").
pub fn take_registration(
    answer: Value,
    peer: &str,
    joining: bool,
    node_dir: &NodeDir,
    log: &dyn Fn(&str),
) -> Result<(Registered, Option<Token>), String> {
    let answer: Registered = serde_json::from_value(answer)
        .map_err(|e| format!("the {peer} answered the registration with something else: {e}"))?;
    let Some(issued) = &answer.credential else {
        if joining {
            return Err(format!("the {peer} answered the join token without a node credential"));
        }
        return Ok((answer, None));
    };
    let issued = Token::parse(issued, &format!("the node credential the {peer} issued"))?;
    node_dir.set_credential(&issued)?;
    log(&format!("joined: node credential kept in {}", node_dir.path().join("credential").display()));
    Ok((answer, Some(issued)))
}
