//! YARN-ME (memory elasticity) and YARN's fair scheduler as it runs
//! (`JobOrder::Fair`, and `ShortestRemaining` for `meganode`): the
//! node-by-node pass (`node_pass.rs`, Algorithm 1 with node reservations
//! and §3.3's backfill), the elastic fit (`fit.rs`, lines 7–10), the
//! timeline generator (`timeline.rs`, §3.2) and the snapshot it reads
//! (`snapshot.rs`), the waiting jobs indexed by need (`need_index.rs`), the
//! nodes a pass is to visit (`node_set.rs`), and which nodes heartbeat
//! under DSS's heartbeats (`quiet.rs`). It is the policy's [`PlacementPass`].

pub mod fit;
mod need_index;
mod node_pass;
mod node_set;
mod quiet;
mod snapshot;
pub mod timeline;

use pliant_core::policy::steps::PlacementPass;
use pliant_core::policy::{JobOrder, Policy};

/// The fair scheduler's pass for `policy` on `nodes` nodes, if its job
/// order is one the fair scheduler serves.
pub(crate) fn build(policy: &Policy, nodes: usize) -> Option<Box<dyn PlacementPass>> {
    matches!(policy.order, JobOrder::Fair | JobOrder::ShortestRemaining)
        .then(|| Box::new(node_pass::NodePass::new(policy, nodes)) as Box<dyn PlacementPass>)
}
