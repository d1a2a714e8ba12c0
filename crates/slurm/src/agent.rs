//! `pliant agent --slurm`: a Slurm node's agent. It launches nothing (Slurm
//! does); it carries out the controller's orders on the job cgroups Slurm
//! made on this node (`pliant_live::slurm_node`) and reports back.
//!
//! It speaks to `pliant slurm` as `pliant agent` speaks to `pliant serve`:
//! it joins with the controller's join token and is issued a node
//! credential, kept in its node directory, with which alone it registers and
//! heartbeats from then on; each heartbeat carries its reports (kept until
//! acknowledged) and brings back a batch of orders (carried out once,
//! acknowledged by the next heartbeat). It needs no fencing: it runs no task
//! that could run twice. Restarted, it registers again and the controller
//! names its jobs again.

use pliant_core::MechanismKind;
use pliant_core::Resources;
use pliant_live::cgroup::Layout;
use pliant_live::client::{Client, ClientError};
use pliant_live::machine::unix_us;
use pliant_live::node_dir::NodeDir;
use pliant_live::protocol::{AgentOp, AgentReport};
use pliant_live::remote_agent::{take_registration, AgentOptions, Pacer};
use pliant_live::slurm_node::SlurmNode;
use pliant_live::tls::Pin;
use pliant_live::token::Token;
use pliant_live::wire::NodeRecord;
use pliant_live::wire::{Heartbeat, Orders};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How long one request to the controller may take.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(2);

/// Runs until `stop` is set (what it did to the job cgroups stays: the
/// controller decides). `opts.offer`, `opts.checkpoint_grace` and
/// `opts.program` are not used: Slurm sizes the node and runs the jobs.
/// Returns an error when the controller has refused it for good for
/// `opts.give_up_after`.
pub fn run(opts: &AgentOptions, stop: &AtomicBool, log: &(dyn Fn(&str) + Sync)) -> Result<(), String> {
    let node_dir = NodeDir::open(&opts.node_dir)?;
    let mut credential = node_dir.credential()?;
    let layout = Layout::detect().map_err(|e| e.to_string())?;
    let mut jobs = SlurmNode::new(layout, &opts.name);
    let record = NodeRecord {
        name: opts.name.clone(),
        // Slurm's sinfo sizes the node for the controller.
        capacity: Resources::ZERO,
        mechanisms: vec![MechanismKind::Immediate, MechanismKind::Graceful, MechanismKind::Suspend],
        notes: vec!["a Slurm node: Slurm launches, the agent reclaims and restores memory".into()],
    };
    let registration = serde_json::to_value(&record).expect("registrations serialise");
    let mut joiner = Client::new(&opts.manager, None).with_timeout(ANSWER_TIMEOUT);
    let mut as_node = Client::new(&opts.manager, None).with_token(credential.clone()).with_timeout(ANSWER_TIMEOUT);
    let mut credential_refused = false;
    let mut node: Option<u32> = None;
    let mut reports: Vec<AgentReport> = Vec::new();
    let mut first_report = unix_us();
    let mut applied: Option<u64> = None;
    let mut pacer = Pacer::new(opts.give_up_after);
    while !stop.load(Ordering::SeqCst) {
        pacer.wait(stop);
        let Some(id) = node else {
            let joining = credential.is_none() || credential_refused;
            let bearer = match credential.clone().filter(|_| !joining) {
                Some(own) => Ok(Some(own)),
                None => Token::join_for_agent(opts.join_token_file.as_deref(), &opts.state_dir),
            };
            match bearer {
                Ok(Some(bearer)) => joiner.set_token(Some(bearer)),
                Ok(None) => {
                    pacer.refused(
                        "no join token: give --join-token-file (a copy of the controller's STATE_DIR/join-token)",
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
                    joiner.set_pin(pin.clone());
                    as_node.set_pin(pin);
                }
                Err(e) => log(&format!("no controller certificate to pin yet: {e}")),
            }
            match joiner.post("/agents/register", &registration) {
                Ok(answer) => {
                    let (answer, issued) = take_registration(answer, "controller", joining, &node_dir, log)?;
                    if let Some(issued) = issued {
                        as_node.set_token(Some(issued.clone()));
                        credential = Some(issued);
                    }
                    credential_refused = false;
                    pacer.got_through();
                    // Orders of an earlier registration are void; the controller names the jobs again.
                    applied = None;
                    node = Some(answer.node);
                    log(&format!("registered as node {} ({})", answer.node, opts.name));
                }
                Err(ClientError::Refused { status, message }) if matches!(status, 400 | 401 | 403 | 404) => {
                    if status == 403 && !joining {
                        credential_refused = true;
                        log("the controller does not take this node's credential: joining with the join token next");
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
        jobs.poll(&mut reports);
        let count = reports.len();
        let beat = Heartbeat { reports: reports.clone(), first_report, acked: applied };
        let beat = serde_json::to_value(beat).expect("reports serialise");
        match as_node.post(&format!("/agents/{id}/heartbeat"), &beat) {
            Ok(answer) => {
                pacer.got_through();
                first_report += count as u64;
                reports.drain(..count);
                let orders: Orders = serde_json::from_value(answer)
                    .map_err(|e| format!("the controller sent orders this agent cannot read: {e}"))?;
                if applied != Some(orders.batch) {
                    applied = Some(orders.batch);
                    for op in orders.ops {
                        match &op {
                            AgentOp::Sweep => log("forget the jobs the controller did not name again"),
                            op => log(&op.to_string()),
                        }
                        jobs.apply(op, &mut reports);
                    }
                }
            }
            Err(ClientError::Refused { status, message }) if matches!(status, 401 | 403 | 404 | 409) => {
                // Registered again, this agent has its jobs named again.
                node = None;
                pacer.refused(&format!("heartbeat refused: {message} (HTTP {status}): registering again"), log)?;
            }
            // Reports are kept and go with the next heartbeat that gets through.
            Err(e) => {
                pacer.failed();
                log(&format!("heartbeat failed: {e}"));
            }
        }
    }
    Ok(())
}
