//! YARN-ME (memory elasticity): the fair scheduler's node-by-node pass
//! (`node_pass.rs`, Algorithm 1 with node reservations and §3.3's backfill),
//! the elastic fit (`fit.rs`, lines 7–10), the timeline generator
//! (`timeline.rs`, §3.2), the snapshot it reads (`snapshot.rs`), the
//! waiting jobs indexed by need (`waiting.rs`), the nodes a pass is to visit
//! (`node_set.rs`), and which nodes heartbeat under DSS's heartbeats
//! (`quiet.rs`).

pub mod fit;
mod node_pass;
mod node_set;
mod quiet;
mod snapshot;
pub mod timeline;
mod waiting;

pub(crate) use node_pass::NodePass;
