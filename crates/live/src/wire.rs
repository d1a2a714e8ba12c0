//! The messages between a node's agent and the manager (or the Slurm
//! controller) over HTTPS: a registration names the node ([`NodeRecord`]) and
//! is answered [`Registered`]; each [`Heartbeat`] carries the agent's reports
//! and is answered with its [`Orders`].

use crate::protocol::{AgentOp, AgentReport};
use pliant_core::{MechanismKind, Resources};
use serde::{Deserialize, Serialize};

/// A node as an agent registers it, and as its manager keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeRecord {
    /// The agent's name for it.
    pub name: String,
    /// What it offers.
    pub capacity: Resources,
    /// The preemption mechanisms that work there.
    pub mechanisms: Vec<MechanismKind>,
    /// What degrades there, and why.
    pub notes: Vec<String>,
}

/// The body of an agent's heartbeat.
#[derive(Debug, Serialize, Deserialize)]
pub struct Heartbeat {
    /// What the agent saw and the manager has not acknowledged yet.
    pub reports: Vec<AgentReport>,
    /// The sequence number of the first of `reports` (each agent numbers
    /// its reports from its start time in µs, so a successor's come after):
    /// a report sent again because an answer was lost is taken once.
    #[serde(default)]
    pub first_report: u64,
    /// The last batch of operations ([`Orders::batch`]) the agent carried out.
    #[serde(default)]
    pub acked: Option<u64>,
}

/// The answer to a heartbeat: the operations to carry out, in order.
#[derive(Debug, Serialize, Deserialize)]
pub struct Orders {
    /// The batch's number, acknowledged by the next heartbeat (until then the
    /// batch is sent again).
    pub batch: u64,
    /// The operations.
    pub ops: Vec<AgentOp>,
    /// The sequence number after the last report the peer has taken in
    /// ([`Heartbeat::first_report`]): one it could not make durable yet (a
    /// manager whose journal has no room) is not taken, and the agent keeps
    /// it and sends it again. Absent: every report of the heartbeat was taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reports_taken: Option<u64>,
}

/// The answer to a registration.
#[derive(Debug, Serialize, Deserialize)]
pub struct Registered {
    /// The node's id.
    pub node: u32,
    /// The silence (ms) after which the agent must stop its tasks: the
    /// manager requeues them only after this plus a margin.
    pub agent_timeout_ms: u64,
    /// The node credential issued to a node that joined with the join token
    /// (the agent keeps it and acts as its node with it from then on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<String>,
}

/// The node of a registration's body (its `name`, `capacity`, `mechanisms`,
/// `notes`), or why it is malformed.
pub fn registered_node(body: &str) -> Result<NodeRecord, String> {
    serde_json::from_str(body).map_err(|e| format!("malformed registration: {e}"))
}
