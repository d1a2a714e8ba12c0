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
use pliant_live::client::Client;
use pliant_live::node_dir::NodeDir;
use pliant_live::node_loop::{NodeBody, NodeLoop, Peer};
use pliant_live::protocol::{AgentOp, AgentReport};
use pliant_live::remote_agent::AgentOptions;
use pliant_live::slurm_node::SlurmNode;
use pliant_live::wire::NodeRecord;
use std::sync::atomic::AtomicBool;
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
    let credential = node_dir.credential()?;
    let layout = Layout::detect().map_err(|e| e.to_string())?;
    let jobs = SlurmNode::new(layout, &opts.name);
    let record = NodeRecord {
        name: opts.name.clone(),
        // Slurm's sinfo sizes the node for the controller.
        capacity: Resources::ZERO,
        mechanisms: vec![MechanismKind::Immediate, MechanismKind::Graceful, MechanismKind::Suspend],
        notes: vec!["a Slurm node: Slurm launches, the agent reclaims and restores memory".into()],
    };
    let link = NodeLoop {
        peer: CONTROLLER,
        joiner: Client::new(&opts.manager, None).with_timeout(ANSWER_TIMEOUT),
        as_node: Client::new(&opts.manager, None).with_token(credential.clone()).with_timeout(ANSWER_TIMEOUT),
        credential,
        registration: serde_json::to_value(&record).expect("registrations serialise"),
        label: opts.name.clone(),
    };
    link.run(opts, &node_dir, &mut SlurmJobs(jobs), stop, log)
}

/// The Slurm controller: a heartbeat it refuses for good is also a sign to
/// register again (the controller then names the jobs again, and the orders
/// of the earlier registration are void).
const CONTROLLER: Peer = Peer {
    name: "controller",
    registration_permanent: &[400, 401, 403, 404],
    heartbeat_permanent: &[401, 403, 404, 409],
    register_again: &[401, 403, 404, 409],
    orders_void_on_register: true,
};

/// The job cgroups Slurm made on this node.
struct SlurmJobs(SlurmNode);

impl NodeBody for SlurmJobs {
    fn poll(&mut self, reports: &mut Vec<AgentReport>) {
        self.0.poll(reports);
    }

    fn apply(&mut self, op: AgentOp, reports: &mut Vec<AgentReport>, log: &dyn Fn(&str)) {
        match &op {
            AgentOp::Sweep => log("forget the jobs the controller did not name again"),
            op => log(&op.to_string()),
        }
        self.0.apply(op, reports);
    }
}
