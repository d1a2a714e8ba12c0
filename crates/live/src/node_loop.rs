//! The node agent's loop, one for both bodies: `pliant agent` under
//! pliant's own manager and `pliant agent --slurm` under the Slurm
//! controller. It registers with the node's credential (else joins with the
//! join token and keeps the credential issued), then heartbeats: each
//! heartbeat carries the reports not acknowledged yet and brings back a batch
//! of orders, carried out once and acknowledged by the next heartbeat. What
//! differs between the bodies is a [`NodeBody`] (the node's jobs) and a
//! [`Peer`] (who answers and which refusals last).

use crate::client::{Client, ClientError};
use crate::node_dir::NodeDir;
use crate::protocol::{AgentOp, AgentReport};
use crate::remote_agent::{take_registration, AgentOptions, Pacer};
use crate::tls::Pin;
use crate::token::{Token, JOIN_ENV};
use crate::wire::{Heartbeat, Orders, Registered};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

/// What one body's agent does with its node's jobs.
pub trait NodeBody {
    /// Runs at the start of each turn, before anything is sent.
    fn before_turn(&mut self, _reports: &mut Vec<AgentReport>, _log: &dyn Fn(&str)) {}

    /// The peer registered this node; the registration was sent at `sent`.
    fn registered(
        &mut self,
        _answer: &Registered,
        _sent: SystemTime,
        _as_node: &mut Client,
        _pacer: &mut Pacer,
        _log: &dyn Fn(&str),
    ) -> Result<(), String> {
        Ok(())
    }

    /// Adds the reports of the jobs' changes since the last poll.
    fn poll(&mut self, reports: &mut Vec<AgentReport>);

    /// A heartbeat sent at `sent` got through; `all_taken` when the peer
    /// took every report it carried (else those it did not take are kept
    /// and sent again).
    fn heartbeat_answered(&mut self, _sent: SystemTime, _all_taken: bool, _log: &dyn Fn(&str)) {}

    /// Carries out one order (logged by the body), adding its reports.
    fn apply(&mut self, op: AgentOp, reports: &mut Vec<AgentReport>, log: &dyn Fn(&str));
}

/// Who answers the agent and how its refusals are taken.
#[derive(Debug, Clone)]
pub struct Peer {
    /// The peer's name in log lines ("manager", "controller").
    pub name: &'static str,
    /// HTTP statuses refusing a registration for good (the agent gives up after a while).
    pub registration_permanent: &'static [u16],
    /// HTTP statuses refusing a heartbeat for good.
    pub heartbeat_permanent: &'static [u16],
    /// HTTP statuses to a heartbeat after which the agent registers again.
    pub register_again: &'static [u16],
    /// Whether a registration voids the orders of an earlier one (the peer names the jobs again).
    pub orders_void_on_register: bool,
}

/// One agent's link to its peer: its clients, its credential and its registration.
pub struct NodeLoop {
    /// Who answers.
    pub peer: Peer,
    /// The client that registers (with the credential or the join token).
    pub joiner: Client,
    /// The client that heartbeats as the node, with its credential.
    pub as_node: Client,
    /// The node credential kept in the node directory, if any.
    pub credential: Option<Token>,
    /// The registration sent (a [`crate::wire::NodeRecord`]).
    pub registration: Value,
    /// Said after "registered as node N" in the log.
    pub label: String,
}

impl NodeLoop {
    /// Runs until `stop` is set. Returns an error when the peer has refused
    /// this agent for good for `opts.give_up_after`, or sent what it cannot read.
    pub fn run(
        mut self,
        opts: &AgentOptions,
        node_dir: &NodeDir,
        body: &mut impl NodeBody,
        stop: &AtomicBool,
        log: &(dyn Fn(&str) + Sync),
    ) -> Result<(), String> {
        let peer = self.peer.clone();
        // Set when the peer refused this node's credential at a registration
        // (it does not know it: a new cluster): the next one joins with the join token.
        let mut credential_refused = false;
        let mut node: Option<u32> = None;
        // Reports not taken yet, numbered from `first_report` (from this
        // agent's start in µs: a successor's numbers come after), and the last
        // batch of orders carried out: a heartbeat whose answer is lost
        // loses nothing, and nothing is taken or done twice.
        let mut reports: Vec<AgentReport> = Vec::new();
        let mut first_report = crate::machine::unix_us();
        let mut applied: Option<u64> = None;
        let mut pacer = Pacer::new(opts.give_up_after);
        while !stop.load(Ordering::SeqCst) {
            pacer.wait(stop);
            body.before_turn(&mut reports, log);
            let Some(id) = node else {
                // Its own credential, else the join token; nothing is sent without one.
                let joining = self.credential.is_none() || credential_refused;
                let bearer = match self.credential.clone().filter(|_| !joining) {
                    Some(own) => Ok(Some(own)),
                    None => Token::join_for_agent(opts.join_token_file.as_deref(), &opts.state_dir),
                };
                match bearer {
                    Ok(Some(bearer)) => self.joiner.set_token(Some(bearer)),
                    Ok(None) => {
                        pacer.refused(
                            &format!(
                                "no join token to join with: give --join-token-file (a copy of the {}'s \
                                 STATE_DIR/join-token), set {JOIN_ENV}, or give the --state-dir whose join-token \
                                 this user can read",
                                peer.name
                            ),
                            log,
                        )?;
                        continue;
                    }
                    Err(e) => {
                        pacer.refused(&format!("cannot read the join token: {e}"), log)?;
                        continue;
                    }
                }
                match Pin::for_client(opts.ca.as_deref(), &opts.state_dir) {
                    Ok(pin) => {
                        self.joiner.set_pin(pin.clone());
                        self.as_node.set_pin(pin);
                    }
                    Err(e) => log(&format!("no {} certificate to pin yet: {e}", peer.name)),
                }
                let sent = SystemTime::now();
                match self.joiner.post("/agents/register", &self.registration) {
                    Ok(answer) => {
                        let (answer, issued) = take_registration(answer, peer.name, joining, node_dir, log)?;
                        if let Some(issued) = issued {
                            self.as_node.set_token(Some(issued.clone()));
                            self.credential = Some(issued);
                        }
                        credential_refused = false;
                        pacer.got_through();
                        body.registered(&answer, sent, &mut self.as_node, &mut pacer, log)?;
                        if peer.orders_void_on_register {
                            applied = None;
                        }
                        node = Some(answer.node);
                        log(&format!("registered as node {} ({})", answer.node, self.label));
                    }
                    Err(ClientError::Refused { status, message }) if peer.registration_permanent.contains(&status) => {
                        if status == 403 && !joining {
                            credential_refused = true;
                            log(&format!(
                                "the {} does not take this node's credential: joining with the join token next",
                                peer.name
                            ));
                        }
                        pacer.refused(&format!("registration refused: {message} (HTTP {status})"), log)?;
                    }
                    Err(e) => {
                        pacer.failed();
                        log(&format!("cannot register yet: {e}"));
                    }
                }
                continue;
            };
            body.poll(&mut reports);
            let count = reports.len();
            let beat = Heartbeat { reports: reports.clone(), first_report, acked: applied };
            let beat = serde_json::to_value(beat).expect("reports serialise");
            let sent = SystemTime::now();
            match self.as_node.post(&format!("/agents/{id}/heartbeat"), &beat) {
                Ok(answer) => {
                    pacer.got_through();
                    let orders: Orders = serde_json::from_value(answer)
                        .map_err(|e| format!("the {} sent orders this agent cannot read: {e}", peer.name))?;
                    // Reports the peer did not take (it could not journal them) are sent again.
                    let taken = orders
                        .reports_taken
                        .map_or(count, |through| through.saturating_sub(first_report).min(count as u64) as usize);
                    first_report += taken as u64;
                    reports.drain(..taken);
                    body.heartbeat_answered(sent, taken == count, log);
                    if applied != Some(orders.batch) {
                        applied = Some(orders.batch);
                        for op in orders.ops {
                            body.apply(op, &mut reports, log);
                        }
                    }
                }
                // Registered again, the agent has its jobs named again; its
                // reports wait for the heartbeats that follow.
                Err(ClientError::Refused { status, message }) if peer.register_again.contains(&status) => {
                    node = None;
                    if peer.heartbeat_permanent.contains(&status) {
                        pacer.refused(
                            &format!("heartbeat refused: {message} (HTTP {status}): registering again"),
                            log,
                        )?;
                    } else {
                        log(&format!("{message}: registering again"));
                    }
                }
                // Reports are kept.
                Err(ClientError::Refused { status, message }) if peer.heartbeat_permanent.contains(&status) => {
                    pacer.refused(&format!("heartbeat refused: {message} (HTTP {status})"), log)?;
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
}
