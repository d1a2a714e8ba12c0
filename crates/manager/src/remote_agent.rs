//! `pliant agent --manager URL`: this machine's agent as its own process. It
//! keeps what a killed agent left, registers the node's size and working
//! mechanisms (the manager then has it take over the tasks it should hold and
//! remove the rest), then heartbeats: each heartbeat carries its reports and brings
//! back the operations to carry out. If the manager declared it lost, it
//! stops its tasks and registers again.

use crate::api::Heartbeat;
use crate::client::{Client, ClientError};
use crate::local::{this_node, Offer};
use crate::token::Token;
use pliant_live::agent::Agent;
use pliant_live::cgroup::Layout;
use pliant_live::protocol::{AgentOp, AgentReport};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the agent heartbeats.
pub const HEARTBEAT: Duration = Duration::from_millis(200);
/// Longest pause between attempts while the manager cannot be reached or refuses.
pub const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Options of `pliant agent`.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// The manager's URL.
    pub manager: String,
    /// Where the manager's token comes from: `--token-file`, or the state
    /// directory read when neither it nor `PLIANT_TOKEN` is given (see
    /// [`Token::for_client`]). Read again at each registration, so an agent
    /// may start before its manager has written the token.
    pub token_file: Option<PathBuf>,
    /// The manager's state directory, for its token file.
    pub state_dir: PathBuf,
    /// The node's name (fixed for the life of the cluster).
    pub name: String,
    /// What the node offers.
    pub offer: Offer,
    /// How long a task asked to checkpoint has to save and exit.
    pub checkpoint_grace: std::time::Duration,
    /// How long the manager may refuse this agent for good (a wrong token,
    /// an unknown node, a node its policy cannot use) before the agent stops.
    pub give_up_after: Duration,
}

/// Runs until `stop` is set; then every task is killed and every cgroup
/// removed. Returns an error when the manager has refused this agent for
/// good (see [`Pacer`]) for `give_up_after`.
pub fn run_agent(opts: &AgentOptions, stop: &AtomicBool, log: &(dyn Fn(&str) + Sync)) -> Result<(), String> {
    let layout = Layout::detect().map_err(|e| e.to_string())?;
    let (mut agent, leftover) =
        Agent::start(&layout, &format!("pliant-agent-{}", opts.name), true, opts.checkpoint_grace)
            .map_err(|e| e.to_string())?;
    if leftover {
        log("found a previous agent's cgroup: the manager says which of its tasks to take over");
    }
    let record = this_node(&opts.name, agent.capabilities(), opts.offer)?;
    for note in &record.notes {
        log(note);
    }
    let mut client = Client::new(&opts.manager);
    let mut node = None;
    let mut reports: Vec<AgentReport> = Vec::new();
    let mut pacer = Pacer::new(opts.give_up_after);
    while !stop.load(Ordering::SeqCst) {
        pacer.wait(stop);
        let Some(id) = node else {
            match Token::for_client(opts.token_file.as_deref(), &opts.state_dir) {
                Ok(token) => client.set_token(token),
                Err(e) => log(&format!("no token yet: {e}")),
            }
            match client.post("/agents/register", &serde_json::to_value(&record).expect("records serialise")) {
                Ok(answer) => {
                    pacer.got_through();
                    node = answer["node"].as_u64();
                    log(&format!("registered as node {} ({})", answer["node"], record.capacity));
                }
                Err(ClientError::Refused { status, message }) if permanent(status, true) => {
                    pacer.refused(&format!("registration refused: {message} (HTTP {status})"), log)?;
                }
                Err(e) => {
                    pacer.failed();
                    log(&format!("cannot register yet: {e}"));
                }
            }
            continue;
        };
        agent.poll(&mut reports);
        let beat = serde_json::to_value(Heartbeat { reports: reports.clone() }).expect("reports serialise");
        match client.post(&format!("/agents/{id}/heartbeat"), &beat) {
            Ok(answer) => {
                pacer.got_through();
                reports.clear();
                agent.forget_ended();
                for op in ops_of(&answer)? {
                    log(&op.to_string());
                    agent.apply(op, &mut reports);
                }
            }
            Err(ClientError::Refused { status: 409, message }) => {
                log(&format!("{message}: stopping every task and registering again"));
                for task in agent.tasks().collect::<Vec<_>>() {
                    agent.apply(AgentOp::Stop { task }, &mut Vec::new());
                }
                reports.clear();
                agent.forget_ended();
                node = None;
            }
            // Reports are kept; the token is read again (the manager may have a new one).
            Err(ClientError::Refused { status, message }) if permanent(status, false) => {
                pacer.refused(&format!("heartbeat refused: {message} (HTTP {status})"), log)?;
                match Token::for_client(opts.token_file.as_deref(), &opts.state_dir) {
                    Ok(token) => client.set_token(token),
                    Err(e) => log(&e),
                }
            }
            // Reports are kept and sent with the next heartbeat that gets through.
            Err(e) => {
                pacer.failed();
                log(&format!("heartbeat failed: {e}"));
            }
        }
    }
    Ok(())
}

/// True when a refusal with `status` will not go away by itself (a wrong
/// token, an unknown node, a node the policy cannot use): the agent gives
/// up after a while instead of asking forever. A 409 to a heartbeat is not
/// one (the node was declared lost: it registers again).
fn permanent(status: u16, registering: bool) -> bool {
    matches!(status, 400 | 401 | 403 | 404) || (registering && status == 409)
}

/// The agent's pace: a heartbeat every [`HEARTBEAT`] while the manager
/// answers; after a failure, twice as long each time up to [`MAX_BACKOFF`];
/// and an error once the manager has refused the agent for good for longer
/// than the agent's patience.
struct Pacer {
    pause: Duration,
    patience: Duration,
    refused_since: Option<Instant>,
}

impl Pacer {
    fn new(patience: Duration) -> Pacer {
        Pacer { pause: HEARTBEAT, patience, refused_since: None }
    }

    /// Sleeps for the current pause, waking early when `stop` is set.
    fn wait(&self, stop: &AtomicBool) {
        let until = Instant::now() + self.pause;
        while !stop.load(Ordering::SeqCst) && Instant::now() < until {
            std::thread::sleep(until.saturating_duration_since(Instant::now()).min(HEARTBEAT));
        }
    }

    fn got_through(&mut self) {
        self.pause = HEARTBEAT;
        self.refused_since = None;
    }

    fn failed(&mut self) {
        self.pause = (self.pause * 2).min(MAX_BACKOFF);
    }

    /// A permanent refusal: logged, then an error once refusals have lasted the patience.
    fn refused(&mut self, why: &str, log: &dyn Fn(&str)) -> Result<(), String> {
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

fn ops_of(answer: &Value) -> Result<Vec<AgentOp>, String> {
    serde_json::from_value(answer["ops"].clone())
        .map_err(|e| format!("the manager sent operations this agent cannot read: {e}"))
}
