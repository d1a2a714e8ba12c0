//! Sizing: how much memory a placed task gets. Most presets give every task
//! what it asked for; YARN-ME (Algorithm 1, `pliant_plugins::yarn_me`) may give
//! an elastic task less, when its job's timeline says that costs nothing.

use crate::Micros;

/// How a placed task is sized.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sizing {
    /// Every task gets its request.
    Requested,
    /// YARN-ME: a task that does not fit may run under-sized (Algorithm 1).
    Elastic(ElasticSpec),
}

/// YARN-ME's settings (§3.3, §6.1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ElasticSpec {
    /// Least memory a task may get, as a fraction of its ideal (§6.1: 10 %).
    pub min_fraction: f64,
    /// Memory is allocated in steps of this many MB (§6.1: 100 MB).
    pub granularity_mb: u64,
    /// Disk bandwidth per node, MB/s, that elastic tasks' spills may use
    /// together (§3.3's disk contention awareness).
    pub disk_budget_mb_s: f64,
    /// How often the timeline generator runs: every heartbeat (§3.2).
    pub heartbeat: Micros,
}
