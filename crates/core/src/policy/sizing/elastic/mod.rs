//! YARN-ME (memory elasticity): the elastic fit (`fit.rs`, lines 7–10), the
//! timeline generator (`timeline.rs`, §3.2) and the snapshot it reads
//! (`snapshot.rs`). The fair scheduler's node-by-node pass that sizes with
//! them is `policy/fair/`.

pub mod fit;
mod snapshot;
pub mod timeline;

pub(crate) use snapshot::SnapshotCache;
