//! A policy is a composition of small pieces: which queues exist
//! and how jobs are ordered, where tasks go, and how resources are taken back.
//! A [`Profile`] names the plugin at each point, the [`Registry`] builds the
//! policy a profile names, and presets are its built-in profiles.

pub mod cost;
mod mechanism;
mod params;
mod planner;
pub mod profile;
mod registry;
mod reservation;
mod sizing;
pub mod steps;
#[cfg(any(test, feature = "strategies"))]
pub mod strategies;

use crate::model::{StorageModel, Tier};
pub use params::{Params, FOOTPRINT_CPU_MILLI, GP_BASIC_UNIT};
pub use profile::{Preempting, Profile};
pub use registry::{ComposeError, PresetInfo, Registry};
pub use reservation::ReservationSpec;
pub use sizing::{ElasticSpec, Sizing};

use crate::action::MechanismKind;
use crate::model::JobClass;
use crate::{Micros, Resources};

/// A queue with a guaranteed share of the cluster (YARN's capacity).
#[derive(Debug, Clone, PartialEq)]
pub struct QueueSpec {
    /// The queue's name.
    pub name: &'static str,
    /// Classes of job that go into this queue.
    pub classes: Vec<JobClass>,
    /// Guaranteed fraction of the cluster; over it, the queue may be preempted.
    pub guaranteed: f64,
    /// Whether the queue, when under its guarantee, takes resources back from
    /// over-provisioned queues; a best-effort queue only waits.
    pub preempts: bool,
}

/// What a task that finds no room holds back: nothing overtakes it within its scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeadOfLine {
    /// It blocks every later task in the cluster (a strict single queue).
    All,
    /// It blocks later tasks of its own class only (one FIFO per class).
    PerClass,
}

/// How jobs are ordered inside a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobOrder {
    /// First submitted, first served.
    Fifo,
    /// Higher priority first, then first submitted.
    Priority,
    /// YARN's fair scheduler: the job holding the least memory first, then
    /// first submitted; served node by node as nodes heartbeat (YARN-ME Alg. 1).
    Fair,
    /// Shortest remaining job first (by estimated work left), served like
    /// `Fair` (YARN-ME §6.2's Meganode).
    ShortestRemaining,
}

impl JobOrder {
    /// The key that orders `job` in its queue (smaller first): inverted
    /// priority, submission, id.
    pub fn service_key(self, job: &crate::model::JobRequest) -> (u8, Micros, u32) {
        let priority = match self {
            JobOrder::Priority => u8::MAX - job.priority,
            JobOrder::Fifo | JobOrder::Fair | JobOrder::ShortestRemaining => 0,
        };
        (priority, job.submit, job.id.0)
    }
}

/// Which node gets a task.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Placement {
    /// The first node (in cluster order) with room.
    FirstFit,
    /// A fraction of the nodes is kept for short jobs only (Hawk-style
    /// reservation, BIG-C §5.1); first fit within what a job may use.
    ReservedForShort {
        /// Fraction of nodes only short jobs may use.
        fraction: f64,
    },
    /// All nodes pooled into one of their total capacity (YARN-ME §6.2's Meganode).
    Pooled,
}

/// Whom the resource monitor preempts, for whom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlannerSpec {
    /// Queues over their guaranteed share give back to starved queues (BIG-C Alg. 1 and 2).
    Capacity,
    /// A pending task preempts running tasks of a lower priority level
    /// (checkpoint paper §3.1, §3.3.2).
    PriorityLevels,
    /// As `Capacity`, the take sized by the need per resource and each victim
    /// given the mechanism that frees it cheapest (`pliant_plugins::pliant`; with
    /// `MechanismSpec::Cheapest`).
    Cost,
    /// A planner from outside the core (`steps::PlannerPlugin`).
    Custom(CustomPlanner),
}

/// A planner written outside the core, named in a policy: the plugin that
/// builds it for each scheduler. Policies compare it by name.
#[derive(Clone, Copy)]
pub struct CustomPlanner(pub &'static dyn steps::PlannerPlugin);

impl PartialEq for CustomPlanner {
    fn eq(&self, other: &Self) -> bool {
        self.0.name() == other.0.name()
    }
}

impl Eq for CustomPlanner {}

impl std::fmt::Debug for CustomPlanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Custom({})", self.0.name())
    }
}

/// The plugins that build a policy's steps for each scheduler running it:
/// the registry's that built it. Policies compare them by name.
#[derive(Clone, Copy)]
pub struct Plugins(pub &'static dyn steps::StepBuilder);

impl PartialEq for Plugins {
    fn eq(&self, other: &Self) -> bool {
        self.0.name() == other.0.name()
    }
}

impl std::fmt::Debug for Plugins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Plugins({})", self.0.name())
    }
}

/// How checkpoint-based preemption is carried out (checkpoint paper §3–§4).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CheckpointSpec {
    /// Where images are written.
    pub tier: Tier,
    /// Adaptive (§4.1): kill victims whose progress does not pay for their
    /// checkpoint (Alg. 1), resume where it is estimated cheaper (Alg. 2) and
    /// take the victims that are cheapest to dump first (§5.2.2). Otherwise
    /// every victim is checkpointed and restored on its own node when it fits
    /// there (the paper's "basic").
    pub adaptive: bool,
    /// The bandwidths the estimates use.
    pub storage: StorageModel,
}

/// How a victim gives its resources back (`policy/mechanism/`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MechanismSpec {
    /// Kill it (`kill.rs`).
    Kill,
    /// Suspend it to its footprint (BIG-C immediate preemption, `container.rs`).
    Immediate,
    /// Shrink it step by step (BIG-C graceful preemption, `container.rs`).
    Graceful,
    /// Freeze it in place, memory kept (Slurm's SUSPEND, `suspend.rs`).
    Suspend,
    /// Dump it to storage (`checkpoint.rs`).
    Checkpoint(CheckpointSpec),
    /// Per victim, the one the planner chose: kill, freeze or shrink (`cheapest.rs`).
    Cheapest,
    /// A mechanism from outside the core (`steps::MechanismPlugin`).
    Custom(CustomMechanism),
}

/// A mechanism written outside the core, named in a policy: the plugin that
/// builds it for each scheduler. Policies compare it by name.
#[derive(Clone, Copy)]
pub struct CustomMechanism(pub &'static dyn steps::MechanismPlugin);

impl PartialEq for CustomMechanism {
    fn eq(&self, other: &Self) -> bool {
        self.0.name() == other.0.name()
    }
}

impl std::fmt::Debug for CustomMechanism {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Custom({})", self.0.name())
    }
}

impl MechanismSpec {
    /// Which mechanism this is; `None` for `Cheapest` and `Custom`, which
    /// choose per victim among what each node can do.
    pub fn kind(&self) -> Option<MechanismKind> {
        match self {
            MechanismSpec::Kill => Some(MechanismKind::Kill),
            MechanismSpec::Immediate => Some(MechanismKind::Immediate),
            MechanismSpec::Graceful => Some(MechanismKind::Graceful),
            MechanismSpec::Suspend => Some(MechanismKind::Suspend),
            MechanismSpec::Checkpoint(_) => Some(MechanismKind::Checkpoint),
            MechanismSpec::Cheapest | MechanismSpec::Custom(_) => None,
        }
    }
}

/// How the resource monitor takes resources back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PreemptionSpec {
    /// Whom it preempts, for whom.
    pub planner: PlannerSpec,
    /// How often the resource monitor runs (BIG-C §4.2: every 3 s).
    pub interval: Micros,
    /// Whether Algorithm 1 sizes the take with COMPUTEDR (BIG-C) or takes all
    /// over-provisioned resources (YARN's capacity scheduler).
    pub compute_dr: bool,
    /// How each victim gives its resources back.
    pub mechanism: MechanismSpec,
    /// Offers of its node a preempted container waits for before resuming (D).
    pub delayed_resumption: u32,
    /// The graceful-preemption step r⃗_GP.
    pub gp_step: Resources,
    /// Whether a gracefully preempted container may take back part of what it
    /// gave up (gradual resumption, `policy/mechanism/container.rs`).
    pub gradual_resumption: bool,
    /// What a suspended container keeps.
    pub footprint: Resources,
    /// The rates `pliant`'s cost model estimates with.
    pub rates: cost::Rates,
}

/// A complete scheduling policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// The preset or config name, for reports.
    pub name: String,
    /// The queues; every job class must map to exactly one.
    pub queues: Vec<QueueSpec>,
    /// Job order inside a queue.
    pub order: JobOrder,
    /// What a task that finds no room holds back.
    pub head_of_line: HeadOfLine,
    /// Task placement.
    pub placement: Placement,
    /// Preemption, if any.
    pub preemption: Option<PreemptionSpec>,
    /// Launches of one task after which a kill fails its job.
    pub max_attempts: u32,
    /// Delay scheduling: how long a task of a `local` phase waits for a slot
    /// on its upstream phase's nodes before taking any (Spark's locality wait).
    pub locality_wait: Micros,
    /// Slot reservation for downstream phases, if any.
    pub reservation: Option<ReservationSpec>,
    /// How much memory a placed task gets.
    pub sizing: Sizing,
    /// A node-by-node (`Fair`) pass reserves a node for the job whose task
    /// did not fit there (YARN-ME §3.3; DSS's `-r`).
    pub node_reservations: bool,
    /// A node-by-node pass lets other jobs use a reserved node with tasks
    /// estimated to end before the reserved job's task would fit there
    /// (YARN-ME §3.3; DSS's `-g`). `None`: as the workload's model has it —
    /// off where its cluster runs DSS's ApplicationMasters (DSS's PEEK runs
    /// with `-r` alone), on elsewhere.
    pub backfill: Option<bool>,
    /// The ApplicationMaster container a node-by-node pass places for each
    /// job before its tasks and holds until its last task ends (YARN, DSS);
    /// `None`: the workload's cluster says (`Cluster::am`), `Some(ZERO)`: none.
    pub am: Option<Resources>,
    /// How many containers a node-by-node pass gives a node per node
    /// heartbeat (YARN's NodeManager heartbeat, `ElasticSpec::heartbeat`
    /// apart; DSS: one): passes then run only on heartbeats. `None`: the
    /// workload's model (DSS's 1 where its cluster runs DSS's
    /// ApplicationMasters), `Some(0)`: any number, at every pass.
    pub per_heartbeat: Option<u32>,
    /// YARN's node heartbeat period, for `per_heartbeat`.
    pub node_heartbeat: Micros,
    /// A job's tasks are placed only once its ApplicationMaster runs, this
    /// long after it was placed (the AM's first heartbeat; DSS: 1 s).
    /// `None`: the workload's model (as `per_heartbeat`).
    pub am_start: Option<Micros>,
    /// What builds its steps for each scheduler.
    pub plugins: Plugins,
}

impl Placement {
    /// The nodes placement sees, of the cluster's `nodes`: one of their
    /// total capacity when pooled, else the nodes themselves.
    pub fn nodes<'a>(&self, nodes: &'a [Resources]) -> std::borrow::Cow<'a, [Resources]> {
        match self {
            Placement::Pooled => vec![nodes.iter().fold(Resources::ZERO, |acc, &n| acc + n)].into(),
            Placement::FirstFit | Placement::ReservedForShort { .. } => nodes.into(),
        }
    }

    /// How many of `nodes` nodes (in cluster order, from the first) only short jobs may use.
    pub fn short_only(&self, nodes: usize) -> usize {
        match self {
            Placement::FirstFit | Placement::Pooled => 0,
            Placement::ReservedForShort { fraction } => (nodes as f64 * fraction).round() as usize,
        }
    }
}

impl Policy {
    /// How often the body must run the resource monitor (the heartbeat),
    /// if the policy has one: elastic sizing's timeline heartbeat, else
    /// the preemption interval.
    pub fn monitor_interval(&self) -> Option<Micros> {
        match self.sizing {
            Sizing::Elastic(spec) => Some(spec.heartbeat),
            Sizing::Requested => self.preemption.map(|p| p.interval),
        }
    }

    /// The queue that jobs of `class` go to.
    pub fn queue_of(&self, class: JobClass) -> usize {
        self.queues.iter().position(|q| q.classes.contains(&class)).expect("every preset maps every class to a queue")
    }
}
