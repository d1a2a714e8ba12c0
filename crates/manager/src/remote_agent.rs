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
use std::time::Duration;

/// How often the agent heartbeats.
pub const HEARTBEAT: Duration = Duration::from_millis(200);

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
}

/// Runs until `stop` is set; then every task is killed and every cgroup removed.
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
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(HEARTBEAT);
        let Some(id) = node else {
            match Token::for_client(opts.token_file.as_deref(), &opts.state_dir) {
                Ok(token) => client.set_token(token),
                Err(e) => log(&format!("no token yet: {e}")),
            }
            match client.post("/agents/register", &serde_json::to_value(&record).expect("records serialise")) {
                Ok(answer) => {
                    node = answer["node"].as_u64();
                    log(&format!("registered as node {} ({})", answer["node"], record.capacity));
                }
                Err(e) => log(&format!("cannot register yet: {e}")),
            }
            continue;
        };
        agent.poll(&mut reports);
        let beat = serde_json::to_value(Heartbeat { reports: reports.clone() }).expect("reports serialise");
        match client.post(&format!("/agents/{id}/heartbeat"), &beat) {
            Ok(answer) => {
                reports.clear();
                agent.forget_ended();
                for op in ops_of(&answer)? {
                    log(&op.to_string());
                    agent.apply(op, &mut reports);
                }
            }
            // Reports are kept; the token is read again (the manager may have a new one).
            Err(ClientError::Refused { status: 401, message }) => {
                log(&format!("heartbeat refused: {message}"));
                match Token::for_client(opts.token_file.as_deref(), &opts.state_dir) {
                    Ok(token) => client.set_token(token),
                    Err(e) => log(&e),
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
            // Reports are kept and sent with the next heartbeat that gets through.
            Err(e) => log(&format!("heartbeat failed: {e}")),
        }
    }
    Ok(())
}

fn ops_of(answer: &Value) -> Result<Vec<AgentOp>, String> {
    serde_json::from_value(answer["ops"].clone())
        .map_err(|e| format!("the manager sent operations this agent cannot read: {e}"))
}
