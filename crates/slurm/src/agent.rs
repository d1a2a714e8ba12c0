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

use pliant_core::Resources;
use pliant_live::capabilities::NodeMechanism;
use pliant_live::cgroup::Layout;
use pliant_live::protocol::{AgentOp, AgentReport};
use pliant_live::slurm_node::SlurmNode;
use pliant_manager::api::{Heartbeat, Orders, Registered};
use pliant_manager::client::{Client, ClientError};
use pliant_manager::manager::{unix_us, NodeRecord};
use pliant_manager::node_dir::NodeDir;
use pliant_manager::remote_agent::{AgentOptions, HEARTBEAT, MAX_BACKOFF};
use pliant_manager::tls::Pin;
use pliant_manager::token::Token;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

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
        mechanisms: vec![NodeMechanism::Immediate, NodeMechanism::Graceful, NodeMechanism::Suspend],
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
    let mut pause = HEARTBEAT;
    let mut refused_since: Option<Instant> = None;
    let refused = |why: String, pause: &mut Duration, since: &mut Option<Instant>| -> Result<(), String> {
        *pause = (*pause * 2).min(MAX_BACKOFF);
        let since = *since.get_or_insert_with(Instant::now);
        if since.elapsed() >= opts.give_up_after {
            let waited = since.elapsed().as_secs_f64();
            return Err(format!("{why}; refused for {waited:.0} s (--give-up-after): this agent stops"));
        }
        log(&format!("{why}; retrying in {:.1} s", pause.as_secs_f64()));
        Ok(())
    };
    while !stop.load(Ordering::SeqCst) {
        let until = Instant::now() + pause;
        while !stop.load(Ordering::SeqCst) && Instant::now() < until {
            std::thread::sleep(until.saturating_duration_since(Instant::now()).min(HEARTBEAT));
        }
        let Some(id) = node else {
            let joining = credential.is_none() || credential_refused;
            let bearer = match credential.clone().filter(|_| !joining) {
                Some(own) => Ok(Some(own)),
                None => Token::join_for_agent(opts.join_token_file.as_deref(), &opts.state_dir),
            };
            match bearer {
                Ok(Some(bearer)) => joiner.set_token(Some(bearer)),
                Ok(None) => {
                    refused(
                        "no join token: give --join-token-file (a copy of the controller's STATE_DIR/join-token)"
                            .into(),
                        &mut pause,
                        &mut refused_since,
                    )?;
                    continue;
                }
                Err(e) => {
                    refused(format!("cannot read the join token: {e}"), &mut pause, &mut refused_since)?;
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
                    let answer: Registered = serde_json::from_value(answer)
                        .map_err(|e| format!("the controller answered the registration with something else: {e}"))?;
                    if let Some(issued) = &answer.credential {
                        let issued = Token::parse(issued, "the node credential the controller issued")?;
                        node_dir.set_credential(&issued)?;
                        log(&format!(
                            "joined: node credential kept in {}",
                            node_dir.path().join("credential").display()
                        ));
                        as_node.set_token(Some(issued.clone()));
                        credential = Some(issued);
                    } else if joining {
                        return Err("the controller answered the join token without a node credential".into());
                    }
                    (credential_refused, refused_since, pause) = (false, None, HEARTBEAT);
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
                    refused(
                        format!("registration refused: {message} (HTTP {status})"),
                        &mut pause,
                        &mut refused_since,
                    )?;
                }
                Err(e) => {
                    pause = (pause * 2).min(MAX_BACKOFF);
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
                (refused_since, pause) = (None, HEARTBEAT);
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
                refused(
                    format!("heartbeat refused: {message} (HTTP {status}): registering again"),
                    &mut pause,
                    &mut refused_since,
                )?;
            }
            // Reports are kept and go with the next heartbeat that gets through.
            Err(e) => {
                pause = (pause * 2).min(MAX_BACKOFF);
                log(&format!("heartbeat failed: {e}"));
            }
        }
    }
    Ok(())
}
