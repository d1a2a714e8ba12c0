//! YARN's fair scheduler as YARN-ME runs it (`JobOrder::Fair`, and
//! `ShortestRemaining` for `meganode`): the node-by-node pass
//! (`node_pass.rs`, Algorithm 1 with node reservations and §3.3's
//! backfill, sizing tasks with `policy/sizing/elastic/` under elastic
//! sizing), the waiting jobs indexed by need (`waiting.rs`), the nodes a
//! pass is to visit (`node_set.rs`), and which nodes heartbeat under DSS's
//! heartbeats (`quiet.rs`). It is the policy's [`PlacementPass`].

mod node_pass;
mod node_set;
mod quiet;
mod waiting;

use crate::policy::steps::PlacementPass;
use crate::policy::{JobOrder, Policy};

/// The fair scheduler's pass for `policy` on `nodes` nodes, if its job
/// order is one the fair scheduler serves.
pub(crate) fn build(policy: &Policy, nodes: usize) -> Option<Box<dyn PlacementPass>> {
    matches!(policy.order, JobOrder::Fair | JobOrder::ShortestRemaining)
        .then(|| Box::new(node_pass::NodePass::new(policy, nodes)) as Box<dyn PlacementPass>)
}
