//! The workload model shared by scenarios, trace importers and bodies.

use pliant_core::model::{Elasticity, ElasticityProfile, JobClass, JobId, JobRequest, PhaseRequest, TaskRequest};
use pliant_core::{Micros, Resources};

/// The machines of a cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    /// The ApplicationMaster container each job runs, if the cluster runs
    /// YARN's (one per job: placed before its tasks, held until its last task
    /// ends). DSS's YARN model, and so the YARN-ME traces, use 1,000 MB and
    /// 1 core ([`DSS_AM`]). The YARN presets place it; `--set am_mb` overrides it.
    pub am: Option<Resources>,
    /// Capacity of each node, in node order.
    pub nodes: Vec<Resources>,
}

/// The ApplicationMaster container of DSS's runs: 1,000 MB and 1 core.
pub const DSS_AM: Resources = Resources::new(1000, 1000);

/// One task: its request, its owner's estimate and its true run time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Task {
    /// The container size requested.
    pub request: Resources,
    /// True run time at full allocation (ground truth: only bodies read it).
    pub duration: Micros,
    /// The owner's estimate of `duration`, handed to the core (may be wrong).
    pub estimate: Option<Micros>,
}

/// One Spark stage of a pool phase: `count` tasks of `duration` each, at one
/// executor core per task (ground truth: only bodies read it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageTasks {
    /// Tasks in the stage.
    pub count: u32,
    /// True run time of each task on one full core.
    pub duration: Micros,
}

impl Task {
    /// Stage tasks an executor runs at once: one per whole requested core
    /// (BIG-C §5.1 footnote 3), at least one.
    pub fn slots(&self) -> u32 {
        ((self.request.cpu_milli / 1000) as u32).max(1)
    }
}

/// A DAG stage of a job.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    /// Indices of upstream phases (each smaller than this phase's index).
    pub deps: Vec<u32>,
    /// Coupled (Spark-like): a suspended task stalls the others.
    pub coupled: bool,
    /// Its tasks read their upstream phases' output where it was written
    /// (see [`PhaseRequest::local`]).
    pub local: bool,
    /// The phase's tasks.
    pub tasks: Vec<Task>,
    /// A pool phase (Spark): its tasks are executors
    /// that pull these stages' tasks in order, a barrier between stages. Empty
    /// for an ordinary phase.
    pub stages: Vec<StageTasks>,
}

impl Phase {
    /// A phase of independent tasks that waits for no other phase.
    pub fn independent(tasks: Vec<Task>) -> Phase {
        Phase { deps: vec![], coupled: false, local: false, tasks, stages: vec![] }
    }
}

/// A job to submit.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// A name for reports (unique names help, but are not required).
    pub name: String,
    /// Submission time.
    pub submit: Micros,
    /// Short or long.
    pub class: JobClass,
    /// Priority 0–11 (higher is more important).
    pub priority: u8,
    /// Phases in topological order.
    pub phases: Vec<Phase>,
    /// Memory elasticity, if its tasks may run under-sized.
    pub elastic: Option<JobElasticity>,
}

/// A job's memory elasticity: what its owner tells the scheduler and how its
/// tasks really behave (YARN-ME §2, §6.2's mis-estimations).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobElasticity {
    /// The metadata handed to the core (ideal memory = each task's request).
    pub estimate: Elasticity,
    /// The true profile (ground truth: only bodies read it).
    pub truth: ElasticityProfile,
    /// True ideal memory over the requested memory (1 when the request is right).
    pub true_ideal_scale: f64,
}

/// A cluster and its jobs, sorted by submission time.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// The machines.
    pub cluster: Cluster,
    /// The jobs, in submission order.
    pub jobs: Vec<Job>,
}

/// Why a workload cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValidationError {
    /// No nodes.
    #[error("the cluster has no nodes")]
    NoNodes,
    /// A node with zero CPU or memory.
    #[error("node {0} has zero CPU or memory")]
    EmptyNode(usize),
    /// A task no node can ever hold.
    #[error("job `{job}` asks for a task of {request}, bigger than every node")]
    TaskTooBig {
        /// The job's name.
        job: String,
        /// The request.
        request: Resources,
    },
    /// A task asking for nothing, or running for no time.
    #[error("job `{job}` has a task with {what}")]
    DegenerateTask {
        /// The job's name.
        job: String,
        /// What is wrong.
        what: &'static str,
    },
    /// A phase depending on itself or a later phase.
    #[error("job `{job}` phase {phase} depends on phase {dep}, which does not come before it")]
    BadDependency {
        /// The job's name.
        job: String,
        /// The phase.
        phase: usize,
        /// The dependency.
        dep: u32,
    },
}

impl Job {
    /// What the core may see of this job, under the dense id `id`.
    pub fn request(&self, id: JobId) -> JobRequest {
        JobRequest {
            id,
            submit: self.submit,
            class: self.class,
            priority: self.priority,
            phases: self
                .phases
                .iter()
                .map(|p| PhaseRequest {
                    deps: p.deps.clone(),
                    coupled: p.coupled,
                    local: p.local,
                    tasks: p.tasks.iter().map(|t| TaskRequest { resources: t.request, estimate: t.estimate }).collect(),
                })
                .collect(),
            elastic: self.elastic.map(|e| e.estimate),
        }
    }

    /// Every task in job order (phases in order).
    pub fn tasks(&self) -> impl Iterator<Item = &Task> {
        self.phases.iter().flat_map(|p| p.tasks.iter())
    }

    /// Checks the job against a cluster whose largest node in each resource is `largest`.
    pub fn validate(&self, nodes: &[Resources]) -> Result<(), ValidationError> {
        for (i, p) in self.phases.iter().enumerate() {
            if let Some(&dep) = p.deps.iter().find(|&&d| d as usize >= i) {
                return Err(ValidationError::BadDependency { job: self.name.clone(), phase: i, dep });
            }
        }
        if self.phases.iter().any(|p| !p.stages.is_empty() && p.tasks.is_empty()) {
            return Err(ValidationError::DegenerateTask { job: self.name.clone(), what: "stages but no executors" });
        }
        if self.phases.iter().flat_map(|p| &p.stages).any(|s| s.count == 0 || s.duration == 0) {
            return Err(ValidationError::DegenerateTask { job: self.name.clone(), what: "an empty or instant stage" });
        }
        for t in self.tasks() {
            if t.request.cpu_milli == 0 || t.request.mem_mb == 0 {
                return Err(ValidationError::DegenerateTask { job: self.name.clone(), what: "zero CPU or memory" });
            }
            if t.duration == 0 {
                return Err(ValidationError::DegenerateTask { job: self.name.clone(), what: "zero duration" });
            }
            if !nodes.iter().any(|n| t.request.fits_in(n)) {
                return Err(ValidationError::TaskTooBig { job: self.name.clone(), request: t.request });
            }
        }
        Ok(())
    }
}

impl Cluster {
    /// Checks that the cluster can run anything at all.
    pub fn validate(&self) -> Result<(), ValidationError> {
        if self.nodes.is_empty() {
            return Err(ValidationError::NoNodes);
        }
        if let Some(i) = self.nodes.iter().position(|n| n.cpu_milli == 0 || n.mem_mb == 0) {
            return Err(ValidationError::EmptyNode(i));
        }
        Ok(())
    }

    /// Sum of all node capacities.
    pub fn total(&self) -> Resources {
        self.nodes.iter().fold(Resources::ZERO, |a, &n| a + n)
    }
}

impl Workload {
    /// Checks the cluster and every job; sorts jobs by submission time (stable).
    pub fn validate(&mut self) -> Result<(), ValidationError> {
        self.cluster.validate()?;
        for j in &self.jobs {
            j.validate(&self.cluster.nodes)?;
        }
        self.jobs.sort_by_key(|j| j.submit);
        Ok(())
    }
}
