//! The controller: pliant's core driving a Slurm partition.
//!
//! Each poll reads the partition's live jobs from `squeue` (compactly; the
//! jobs pliant tracks that left those states by id) and what the node agents reported
//! ([`crate::link`]), turns what changed into events (a new held job, a job
//! that completed, memory a victim gave back), runs one
//! scheduling step of the core through the live step driver
//! (`pliant_live::stepper`, the manager's too; a monitor run due goes first,
//! at its due instant, as in the simulator), journals it, and then carries
//! its actions out through
//! Slurm and, on the job cgroups Slurm made, through each node's agent
//! (`pliant agent --slurm`, [`crate::agent`]):
//!
//! | core action | on Slurm |
//! |---|---|
//! | Launch, Restore | `scontrol update JobId=… NodeList=… StartTime=now`, `scontrol release` (when Slurm places, then `scontrol update JobId=… Priority=`[`crate::tools::TOP_PRIORITY`]); the node's agent is told of the job |
//! | Immediate (BIG-C IP) | `scontrol suspend`; the agent freezes the job cgroup and lowers its memory limit to the footprint |
//! | Graceful (BIG-C GP) | the agent lowers the job cgroup's memory limit (its CPU step is not enforced: Slurm's cpuset stays); suspended through Slurm when the agent reports it swaps |
//! | Suspend (Slurm's own SUSPEND) | `scontrol suspend` |
//! | Resume | the agent lifts the memory limit; once it has, `scontrol resume` |
//! | Kill | `scontrol requeuehold` |
//! | Checkpoint | `scancel --signal=USR1 --full`; once the job has exited, `scontrol requeuehold` |
//! | FailJob | `scancel` |
//!
//! When Slurm places ([`crate::placement`]), it starts the jobs itself and
//! each one it started is taken in as running on its node (as a job started
//! before pliant held it is); the table's placements are then those of the
//! short jobs pliant holds and of the victims it requeued, each ranked first
//! in Slurm's queue once released, so that the room freed for it is its own.
//! Every job Slurm runs there is booked: one without `--mem` at the memory
//! Slurm allocated it, one with a comment pliant cannot read as a long job
//! of priority 0 (the controller says so).
//!
//! The calls on Slurm and the wall clock come through [`Surroundings`]
//! ([`crate::calls`]): Slurm's tools in a real run, recorded outputs and a
//! set clock in tests. Time in the core is integer µs since the cluster's
//! epoch (journaled).

use crate::calls::{SlurmCalls, Surroundings};
use crate::journal::{Journal, JournalError, Step};
use crate::link::NodeLink;
use crate::options::parse_comment;
use crate::placement::{takes_pending, Placer, Queued};
use crate::records::SlurmJob;
use crate::tools::{Placement, Placing, ToolError};
use pliant_core::model::{JobClass, JobId, JobRequest, NodeId, PhaseRequest, TaskRef, TaskRequest, TaskState};
use pliant_core::policy::{Profile, Registry};
use pliant_core::MechanismKind;
use pliant_core::{Action, CoreError, Driver, Micros, Observation, Resources, Scheduler, SwapRates};
use pliant_live::dispatch::{node_op, NodeOp};
use pliant_live::mirror::{Heard, Shown, Standing, Status, TaskMirror};
use pliant_live::protocol::{AgentOp, AgentReport, Expected};
use pliant_live::stepper::JournaledPolicy;
use pliant_live::stepper::{LiveBody, StepError, Stepping};
use pliant_live::swap_meter::SwapHeard;
use pliant_live::token::Token;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long after a checkpointed job's requeue its restore is released. The
/// requeue revokes the job's credential on its node, and slurmd refuses a
/// launch whose credential is not newer than the revocation, in whole
/// seconds ("Job N already killed, do not launch batch job"): released in the
/// same second, the restored job fails at once.
const RELAUNCH_GAP: u64 = 2_000_000;

/// A node of the managed partition, in core order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeSpec {
    /// Slurm's `NodeName`.
    pub name: String,
    /// CPUs × 1000 and `RealMemory`.
    pub capacity: Resources,
}

/// What the controller manages; fixed when its journal is created.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControllerConfig {
    /// The Slurm partition whose jobs pliant places.
    pub partition: String,
    /// The policy.
    pub policy: JournaledPolicy,
    /// `--set` parameters, in order.
    pub params: Vec<(String, String)>,
    /// The partition's nodes.
    pub nodes: Vec<NodeSpec>,
    /// Wall-clock µs since 1970 at which core time is 0.
    pub epoch_unix_us: u64,
    /// Who places the jobs (journals from before the choice: pliant).
    #[serde(default)]
    pub placement: Placer,
}

/// A job's request as pliant reads it from Slurm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobSpec {
    /// Its queue.
    pub class: JobClass,
    /// 0–11.
    pub priority: u8,
    /// CPUs × 1000.
    pub cpu_milli: u64,
    /// `--mem`, MB.
    pub mem_mb: u64,
    /// Run-time estimate, µs.
    pub estimate_us: Option<Micros>,
}

/// An input of a scheduling step; these are journaled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A held job appeared in the partition, or one that Slurm started
    /// before pliant held it.
    Submitted {
        /// Slurm's id.
        slurm_id: u64,
        /// Its owner (the job cgroup's `uid_` level).
        uid: u32,
        /// What it asks for.
        spec: JobSpec,
        /// The node (core index) Slurm already runs it on: pliant takes it
        /// over there, counted in its books as running.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        running_on: Option<u32>,
    },
    /// Slurm reports it `COMPLETED`.
    Finished {
        /// Slurm's id.
        slurm_id: u64,
    },
    /// It ended otherwise (failed, cancelled, timed out, gone).
    Ended {
        /// Slurm's id.
        slurm_id: u64,
        /// Slurm's state.
        state: String,
    },
    /// Its memory limit holds at the lower value: `mem_mb` is free.
    Reclaimed {
        /// Slurm's id.
        slurm_id: u64,
        /// MB given back.
        mem_mb: u64,
    },
    /// A shrunk job started swapping and was suspended.
    Swapping {
        /// Slurm's id.
        slurm_id: u64,
    },
    /// A resumed or restored job runs again with its memory.
    Resumed {
        /// Slurm's id.
        slurm_id: u64,
    },
    /// A job asked to checkpoint has exited and is requeued, held.
    Checkpointed {
        /// Slurm's id.
        slurm_id: u64,
    },
    /// The swap rates the controller measured on a node, given to the core
    /// from this step on (`pliant_live::swap_meter`).
    SwapRates {
        /// The node (core index).
        node: u32,
        /// Its rates (`None`: the policy's).
        rates: SwapRates,
    },
}

/// One Slurm job pliant manages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tracked {
    /// Slurm's id.
    pub slurm_id: u64,
    /// The owner's uid.
    pub uid: u32,
    /// Its request.
    pub spec: JobSpec,
    /// What the controller keeps of it beside the core's books (where it
    /// stands is [`Controller::standing`]; `failed` for any end but `COMPLETED`).
    #[serde(skip)]
    pub mirror: TaskMirror,
    /// True while Slurm has it suspended.
    pub slurm_suspended: bool,
    /// How often pliant placed it.
    pub placements: u32,
    /// How often it saved its state and exited when asked to checkpoint.
    pub checkpoints: u32,
    /// How it ended as pliant saw it: `COMPLETED` when it finished,
    /// otherwise the state Slurm showed (`GONE` once Slurm forgot it).
    pub end_state: Option<String>,
}

/// What a step leaves to do on Slurm and the nodes, for one Slurm job
/// (`slurm_id`); what a memory limit's drop frees, the node's agent reports.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Placed on `node` and released (`restore`: after a checkpoint).
    Place { slurm_id: u64, node: u32, restore: bool },
    /// Immediate preemption (BIG-C IP): suspended in Slurm, its memory
    /// reclaimed to `footprint_mb`.
    Immediate { slurm_id: u64, footprint_mb: u64 },
    /// Suspend in place (Slurm's own SUSPEND): suspended in Slurm, its memory kept.
    Suspend { slurm_id: u64 },
    /// Graceful preemption (BIG-C GP): running under a memory limit of `mem_mb`.
    Graceful { slurm_id: u64, mem_mb: u64 },
    /// Its memory limit lifted, resumed in Slurm.
    Resume { slurm_id: u64 },
    /// Requeued, held (kill).
    Requeue { slurm_id: u64 },
    /// Asked to checkpoint (SIGUSR1).
    Checkpoint { slurm_id: u64 },
    /// Cancelled.
    Cancel { slurm_id: u64 },
    /// Taken over running where Slurm started it: its node's agent is told of it.
    Adopt { slurm_id: u64, node: u32 },
}

impl Effect {
    fn slurm_id(&self) -> u64 {
        match *self {
            Effect::Place { slurm_id, .. }
            | Effect::Immediate { slurm_id, .. }
            | Effect::Suspend { slurm_id }
            | Effect::Graceful { slurm_id, .. }
            | Effect::Resume { slurm_id }
            | Effect::Requeue { slurm_id }
            | Effect::Checkpoint { slurm_id }
            | Effect::Cancel { slurm_id }
            | Effect::Adopt { slurm_id, .. } => slurm_id,
        }
    }

    /// The Slurm state the job must be in for this effect to be carried out now.
    fn needs(&self) -> &'static [&'static str] {
        match self {
            Effect::Place { .. } => &["PENDING"],
            Effect::Immediate { .. } | Effect::Suspend { .. } | Effect::Graceful { .. } | Effect::Checkpoint { .. } => {
                &["RUNNING", "SUSPENDED"]
            }
            Effect::Resume { .. } | Effect::Adopt { .. } => &["RUNNING", "SUSPENDED"],
            Effect::Requeue { .. } => &["RUNNING", "SUSPENDED", "COMPLETED", "FAILED", "CANCELLED"],
            Effect::Cancel { .. } => &["PENDING", "RUNNING", "SUSPENDED"],
        }
    }
}

/// Why the controller cannot go on: the live step driver's errors, or a
/// Slurm tool it cannot do without.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// Stepping the core failed (journal, core, configuration, replay).
    #[error(transparent)]
    Step(#[from] StepError),
    /// A Slurm tool failed where the controller cannot do without it.
    #[error(transparent)]
    Tool(#[from] ToolError),
}

impl From<JournalError> for StepError {
    fn from(e: JournalError) -> StepError {
        StepError::Journal(Box::new(e))
    }
}

impl From<JournalError> for ControllerError {
    fn from(e: JournalError) -> ControllerError {
        ControllerError::Step(e.into())
    }
}

impl From<CoreError> for ControllerError {
    fn from(e: CoreError) -> ControllerError {
        ControllerError::Step(e.into())
    }
}

/// The configuration is unusable.
fn config_error(reason: String) -> ControllerError {
    ControllerError::Step(StepError::Config(reason))
}

/// pliant's core in charge of one Slurm partition.
pub struct Controller {
    stepping: Stepping,
    config: ControllerConfig,
    slurm: Box<dyn SlurmCalls>,
    /// Wall-clock µs since 1970.
    clock: Box<dyn Fn() -> u64>,
    /// The node agents; `None` for a view of the journal.
    link: Option<Arc<Mutex<NodeLink>>>,
    /// Nodes said to have no agent (said once until one is there).
    agentless: BTreeSet<u32>,
    jobs: Vec<Tracked>,
    by_slurm: HashMap<u64, usize>,
    /// `None` for a view of the journal ([`Controller::view`]), which never writes.
    journal: Option<Journal>,
    /// Events that carrying out actions caused, for the next step.
    inbox: Vec<Event>,
    /// Effects waiting for their job to reach the Slurm state they need.
    deferred: Vec<Effect>,
    /// When each checkpointed job was requeued (controller µs): its restore
    /// waits [`RELAUNCH_GAP`] after it.
    requeued_at: HashMap<u64, u64>,
    /// Jobs of the partition pliant will not manage (said once).
    refused: BTreeSet<u64>,
    /// When Slurm places: the pending jobs pliant has seen and leaves to Slurm.
    queued: Queued,
}

impl Controller {
    /// Opens the controller whose journal is in `state_dir`, on the Slurm
    /// and the clock of `around`, its policy built through `registry`. A new
    /// journal takes the partition, policy and parameters given and reads
    /// the partition's nodes from `sinfo`; an existing one keeps its own and
    /// is replayed, then squared with what Slurm shows. Node agents join
    /// with `join` ([`Controller::link`] serves them). Returns the
    /// controller and whether it recovered a journal.
    #[allow(clippy::too_many_arguments)]
    pub fn open(
        around: Surroundings,
        state_dir: &Path,
        partition: &str,
        policy: &Profile,
        params: &[(String, String)],
        placement: Placer,
        join: Token,
        registry: &Registry,
    ) -> Result<(Controller, bool), ControllerError> {
        let state_dir = &pliant_live::strict::make_dir(state_dir, "state directory", 0o700).map_err(config_error)?;
        let path = state_dir.join("journal.jsonl");
        let fresh = || -> Result<ControllerConfig, ControllerError> {
            let config = ControllerConfig {
                partition: partition.to_string(),
                policy: policy.clone().into(),
                params: params.to_vec(),
                nodes: partition_nodes(around.slurm.as_ref(), partition)?,
                epoch_unix_us: (around.clock)(),
                placement,
            };
            let built = config.policy.build(registry, &config.params).map_err(config_error)?;
            placement.check(config.policy.name(), &built).map_err(config_error)?;
            Ok(config)
        };
        // A new journal's cluster entry is made (sinfo) before its file is,
        // so that a reader (`--show`) does not find the file empty meanwhile.
        let new = std::fs::metadata(&path).map_or(true, |m| m.len() == 0);
        let mut made = if new { Some(fresh()?) } else { None };
        let (mut journal, (existing, steps)) = Journal::open::<ControllerConfig, Event>(&path)?;
        let recovered = existing.is_some();
        let config = match existing {
            Some(c) => c,
            None => {
                let config = match made.take() {
                    Some(c) => c,
                    None => fresh()?,
                };
                journal.start(&config)?;
                config
            }
        };
        let mut c = Controller::replayed(config, Some(journal), steps, registry, around)?;
        let names = c.config.nodes.iter().map(|n| n.name.clone()).collect();
        c.link = Some(Arc::new(Mutex::new(NodeLink::open(state_dir, names, join).map_err(config_error)?)));
        if recovered {
            c.recover()?;
        }
        Ok((c, recovered))
    }

    /// pliant's view of the partition from the journal in `state_dir` alone
    /// (replayed, its policy built through `registry`; nothing is asked of or
    /// done on Slurm, and the journal is only read, so a controller may be
    /// running on it): the configuration and the jobs, in core order, each
    /// with where it stands (its node a core index).
    pub fn view(
        state_dir: &Path,
        registry: &Registry,
    ) -> Result<(ControllerConfig, Vec<Shown<Tracked>>), ControllerError> {
        let path = state_dir.join("journal.jsonl");
        let (config, steps) = Journal::read::<ControllerConfig, Event>(&path)?;
        let config = config.ok_or_else(|| config_error(format!("{}: an empty journal", path.display())))?;
        let c = Controller::replayed(config, None, steps, registry, Surroundings::real())?;
        let jobs = (0..c.jobs.len()).map(|i| Shown { standing: c.standing(i), record: c.jobs[i].clone() }).collect();
        Ok((c.config, jobs))
    }

    /// Where the job of core index `i` stands.
    pub fn standing(&self, i: usize) -> Standing {
        self.jobs[i].mirror.standing(self.stepping.driver.core().task(core_task(i)))
    }

    /// The node the records have the job of core index `i` on
    /// ([`TaskMirror::placed_on`]).
    fn placed_on(&self, i: usize) -> Option<u32> {
        self.jobs[i].mirror.placed_on(self.stepping.driver.core().task(core_task(i)))
    }

    /// A controller on `config` with the journaled `steps` replayed (each
    /// checked against the actions it journaled), its policy built through
    /// `registry`, not yet acting.
    fn replayed(
        config: ControllerConfig,
        journal: Option<Journal>,
        steps: Vec<Step<Event>>,
        registry: &Registry,
        around: Surroundings,
    ) -> Result<Controller, ControllerError> {
        let policy = config.policy.build(registry, &config.params).map_err(config_error)?;
        config.placement.check(config.policy.name(), &policy).map_err(config_error)?;
        let capacities: Vec<Resources> = config.nodes.iter().map(|n| n.capacity).collect();
        let mut core = Scheduler::new(&capacities, policy)?;
        for node in 0..capacities.len() {
            // A Slurm job's checkpoint is its own (SIGUSR1), at no rate the core knows.
            core.unpriced_mechanisms(node, &[MechanismKind::Checkpoint]);
            if let Some(can) = config.placement.mechanisms() {
                core.restrict_mechanisms(node, can);
            }
        }
        let mut c = Controller {
            stepping: Stepping::new(Driver::new(core)),
            config,
            slurm: around.slurm,
            clock: around.clock,
            link: None,
            agentless: BTreeSet::new(),
            jobs: Vec::new(),
            by_slurm: HashMap::new(),
            journal,
            inbox: Vec::new(),
            deferred: Vec::new(),
            requeued_at: HashMap::new(),
            refused: BTreeSet::new(),
            queued: Queued::default(),
        };
        c.replay(steps)?;
        Ok(c)
    }

    /// The channel to the node agents, for the server that answers them.
    pub fn link(&self) -> Option<Arc<Mutex<NodeLink>>> {
        self.link.clone()
    }

    /// The configuration.
    pub fn config(&self) -> &ControllerConfig {
        &self.config
    }

    /// The jobs pliant manages, in core order.
    pub fn jobs(&self) -> &[Tracked] {
        &self.jobs
    }

    /// Core time now.
    pub fn now(&self) -> Micros {
        (self.clock)().saturating_sub(self.config.epoch_unix_us).max(self.stepping.last_now)
    }

    /// How long the loop may sleep before the next poll: until the core's
    /// next deadline, at most `max`.
    pub fn pause(&self, max: Duration) -> Duration {
        let until =
            self.stepping.driver.next_deadline().map_or(max, |t| Duration::from_micros(t.saturating_sub(self.now())));
        until.clamp(Duration::from_millis(1), max)
    }

    /// One round: read Slurm, take in what changed, schedule, act.
    pub fn poll(&mut self) -> Result<(), ControllerError> {
        let snapshot = self.read_slurm()?;
        let mut events = std::mem::take(&mut self.inbox);
        self.observe(&snapshot, &mut events)?;
        self.hear_agents(&snapshot, &mut events);
        let now = self.now();
        let effects = self.live_step(now, events)?;
        self.deferred.extend(effects);
        self.carry_out_ready(&snapshot);
        Ok(())
    }

    /// What Slurm shows of pliant's jobs, never the whole queue: the
    /// partition's live jobs in one compact read, and, read by id, the
    /// tracked jobs no longer among them (ended, or between states).
    /// When Slurm places, also the pending jobs left to it that are no
    /// longer live (one may have run between two polls).
    fn read_slurm(&mut self) -> Result<Vec<SlurmJob>, ToolError> {
        let mut jobs = self.slurm.live_jobs(&self.config.partition)?;
        let live: BTreeSet<u64> = jobs.iter().map(|j| j.id).collect();
        let mut missing: Vec<u64> = (0..self.jobs.len())
            .filter(|&i| !self.standing(i).is_terminal() && !live.contains(&self.jobs[i].slurm_id))
            .map(|i| self.jobs[i].slurm_id)
            .collect();
        if self.config.placement == Placer::Slurm {
            let pending = jobs.iter().filter(|j| j.state == "PENDING" && !self.by_slurm.contains_key(&j.id));
            missing.extend(self.queued.update(pending.map(|j| j.id).collect::<Vec<_>>(), &live));
        }
        jobs.extend(self.slurm.jobs_by_id(&missing)?);
        Ok(jobs)
    }

    /// Turns Slurm's view of the partition into events.
    fn observe(&mut self, snapshot: &[SlurmJob], events: &mut Vec<Event>) -> Result<(), ToolError> {
        let seen: BTreeSet<u64> = snapshot.iter().map(|j| j.id).collect();
        let partition = self.config.partition.clone();
        let mut unheld = Vec::new();
        for sj in snapshot.iter().filter(|j| j.partition == partition) {
            let Some(&i) = self.by_slurm.get(&sj.id) else {
                if self.config.placement == Placer::Slurm && sj.state == "PENDING" {
                    // Slurm's to place, unless a short job it could not start.
                    let class = parse_comment(&sj.comment).ok().map(|o| o.class);
                    if class == Some(JobClass::Short) && sj.is_held() {
                        self.consider(sj, events);
                    } else if takes_pending(sj, class) {
                        unheld.push(sj.id);
                    }
                } else if sj.state == "PENDING" && !sj.is_held() && !self.refused.contains(&sj.id) {
                    unheld.push(sj.id);
                } else {
                    self.consider(sj, events);
                }
                continue;
            };
            let standing = self.standing(i);
            match (standing.state.state, sj.state.as_str()) {
                (state, _) if state.is_terminal() => {}
                (_, "COMPLETED") if standing.checkpointing && self.act(&self.slurm.requeue_held(sj.id)) => {
                    self.requeued_at.insert(sj.id, self.now());
                    events.push(Event::Checkpointed { slurm_id: sj.id });
                }
                (TaskState::Running | TaskState::Shrunk | TaskState::Restoring, "COMPLETED") => {
                    events.push(Event::Finished { slurm_id: sj.id })
                }
                // A requeued job passes through its old states on its way back to pending.
                (TaskState::Pending, "COMPLETED" | "COMPLETING" | "RUNNING" | "SUSPENDED") => {}
                (_, state) if crate::records::is_over(state) => {
                    events.push(Event::Ended { slurm_id: sj.id, state: state.to_string() })
                }
                _ => {}
            }
        }
        for i in (0..self.jobs.len()).filter(|&i| !self.standing(i).is_terminal()) {
            let slurm_id = self.jobs[i].slurm_id;
            if !seen.contains(&slurm_id) {
                events.push(Event::Ended { slurm_id, state: "GONE".into() });
            }
        }
        // Submitted without --hold (and no job_submit plugin held it): held
        // at once, then read again, since Slurm may have started one before
        // the hold reached it.
        let mut asked = Vec::new();
        for (job, r) in self.slurm.hold(&unheld) {
            if self.act(&r) {
                asked.push(job);
            }
        }
        for sj in self.slurm.jobs_by_id(&asked)? {
            self.consider(&sj, events);
        }
        Ok(())
    }

    /// A job of the partition pliant has not seen: it takes it over if it
    /// pends held, or if it runs on one of the partition's nodes (Slurm
    /// started it before pliant held it): then there, as running.
    ///
    /// When Slurm places, a job it started is adopted where it runs, also
    /// one that ended between two polls (then it ends at once in pliant's books).
    fn consider(&mut self, sj: &SlurmJob, events: &mut Vec<Event>) {
        let slurm_places = self.config.placement == Placer::Slurm;
        // When Slurm places, a job that ran is adopted even once it is over.
        let adoptable = slurm_places && !sj.nodes.is_empty();
        if (sj.is_over() && !adoptable) || self.refused.contains(&sj.id) {
            return;
        }
        self.queued.forget(sj.id);
        let refuse = |why: String| format!("pliant slurm: job {} is not managed: {why}", sj.id);
        let ran = sj.state == "RUNNING" || (slurm_places && (sj.state == "COMPLETING" || sj.is_over()));
        let running_on = match ran {
            true => self.config.nodes.iter().position(|n| n.name == sj.nodes).map(|i| i as u32),
            false => None,
        };
        let why = if sj.state != "PENDING" && running_on.is_none() {
            let on = if sj.nodes.is_empty() { String::new() } else { format!(" on {}", sj.nodes) };
            Some(refuse(format!("it was {}{on} before pliant held it", sj.state)))
        } else if sj.node_count > 1 {
            Some(refuse("pliant places single-node jobs only".into()))
        } else if sj.mem_mb == 0 && !slurm_places {
            Some(refuse("it has no --mem (pliant books every job's memory)".into()))
        } else {
            None
        };
        let options = match parse_comment(&sj.comment) {
            // Slurm runs it all the same: booked with the defaults.
            Err(e) if slurm_places => {
                eprintln!("pliant slurm: job {}: {e}: booked as a long job of priority 0", sj.id);
                parse_comment("")
            }
            other => other,
        };
        let why = why.or_else(|| options.as_ref().err().map(|e| refuse(e.clone())));
        if let Some(why) = why {
            let stays = if sj.state == "PENDING" { "it stays held" } else { "it runs outside pliant's books" };
            eprintln!("{why}; {stays}");
            self.refused.insert(sj.id);
            return;
        }
        let o = options.expect("checked above");
        let mem_mb = match sj.mem_mb {
            0 => self.allocated_mem_mb(sj, running_on),
            mb => mb,
        };
        let spec = JobSpec {
            class: o.class,
            priority: o.priority,
            cpu_milli: sj.cpus.max(1) * 1000,
            mem_mb,
            estimate_us: o.estimate_us,
        };
        if running_on.is_some() && !slurm_places {
            eprintln!("pliant slurm: job {} started on {} before pliant held it: taken over there", sj.id, sj.nodes);
        }
        events.push(Event::Submitted { slurm_id: sj.id, uid: sj.user_id, spec, running_on });
        match sj.state.as_str() {
            "COMPLETED" => events.push(Event::Finished { slurm_id: sj.id }),
            state if sj.is_over() => events.push(Event::Ended { slurm_id: sj.id, state: state.to_string() }),
            _ => {}
        }
    }

    /// The memory Slurm gives a job without `--mem` when it places (the
    /// `mem` of its `TRES`: the whole node under `CR_Core_Memory` unless a
    /// `DefMemPer…` says otherwise), or, where Slurm books no memory, the
    /// whole of the node it runs on (of the largest node while it pends);
    /// the controller says which.
    fn allocated_mem_mb(&self, sj: &SlurmJob, running_on: Option<u32>) -> u64 {
        let node_mem = |n: &NodeSpec| n.capacity.mem_mb;
        let whole = match running_on {
            Some(i) => node_mem(&self.config.nodes[i as usize]),
            None => self.config.nodes.iter().map(node_mem).max().unwrap_or(0),
        };
        let (mb, source) = match self.slurm.allocated_mem_mb(sj.id) {
            Ok(Some(mb)) => (mb, "Slurm's allocation (the mem of its TRES)".to_string()),
            Ok(None) => (whole, "the whole node (Slurm books no memory)".to_string()),
            Err(e) => (whole, format!("the whole node ({e})")),
        };
        eprintln!("pliant slurm: job {} has no --mem: booked at {mb} MB, {source}", sj.id);
        mb
    }

    /// Takes in what the node agents reported and did: memory a victim
    /// gave back, a shrunk job that swaps (BIG-C GP §4.2: then suspended
    /// through Slurm too), a resumed job whose memory is back; a memory
    /// limit lifted, after which Slurm resumes the job. Nodes whose agent
    /// is new (or all, after a restart) have their jobs named again.
    fn hear_agents(&mut self, snapshot: &[SlurmJob], events: &mut Vec<Event>) {
        let Some(link) = self.link.clone() else { return };
        let mut link = link.lock().unwrap_or_else(|e| e.into_inner());
        let state: HashMap<u64, &str> = snapshot.iter().map(|j| (j.id, j.state.as_str())).collect();
        for (node, report) in link.take_reports() {
            let slurm_id = pliant_live::slurm_node::slurm_id(report.task());
            let name = &self.config.nodes[node].name;
            match report {
                AgentReport::Reclaimed { mem_mb, freed_mb, took_ms, .. } => {
                    eprintln!(
                        "pliant slurm: job {slurm_id} gave back {mem_mb} MB ({freed_mb} MB in use) in {took_ms} ms on {name}"
                    );
                    events.push(Event::Reclaimed { slurm_id, mem_mb });
                }
                AgentReport::Swapping { .. } => {
                    if state.get(&slurm_id) == Some(&"RUNNING") {
                        self.act(&self.slurm.suspend(slurm_id));
                    }
                    eprintln!("pliant slurm: job {slurm_id} swaps while it shrinks: suspended");
                    events.push(Event::Swapping { slurm_id });
                }
                AgentReport::Resumed { .. } => {
                    eprintln!("pliant slurm: job {slurm_id} has its memory back on {name}");
                    events.push(Event::Resumed { slurm_id });
                }
                AgentReport::Lost { reason, .. } => {
                    eprintln!("pliant slurm: warning: the agent of {name} could not act on job {slurm_id}: {reason}")
                }
                AgentReport::Exited { .. } | AgentReport::Checkpointed { .. } => {}
            }
        }
        for (_, op) in link.take_carried_out() {
            let lifted = match op {
                AgentOp::Resume { task, .. } => task,
                AgentOp::Adopt { task, expect: Expected::Restoring(_), .. } => task,
                _ => continue,
            };
            let slurm_id = pliant_live::slurm_node::slurm_id(lifted);
            let Some(&i) = self.by_slurm.get(&slurm_id) else { continue };
            if state.get(&slurm_id) == Some(&"SUSPENDED") && !self.act(&self.slurm.resume(slurm_id)) {
                continue;
            }
            self.jobs[i].slurm_suspended = false;
            eprintln!("pliant slurm: job {slurm_id} resumed");
        }
        for node in link.take_to_adopt() {
            for i in (0..self.jobs.len()).filter(|&i| self.placed_on(i) == Some(node as u32)) {
                if let Some(op) = adoption(&self.jobs[i], &self.standing(i)) {
                    link.push(node, op);
                }
            }
            link.push(node, AgentOp::Sweep);
        }
    }

    /// Applies one event to the core and the records; false when it is
    /// stale. A job taken over running leaves its agent to be told (`out`).
    fn take_event(&mut self, now: Micros, event: &Event, out: &mut Vec<Effect>) -> Result<bool, StepError> {
        if let Event::SwapRates { node, rates } = event {
            let given = self.stepping.give_swap_rates(*node, *rates);
            if given {
                eprintln!("pliant slurm: {}", rates_line(&self.config.nodes[*node as usize].name, rates));
            }
            return Ok(given);
        }
        if let Event::Submitted { slurm_id, uid, spec, running_on } = event {
            if self.by_slurm.contains_key(slurm_id) {
                return Ok(false);
            }
            let id = JobId(self.jobs.len() as u32);
            self.stepping.driver.observe(now, Observation::JobSubmitted(job_request(id, now, spec)))?;
            let mut t = Tracked {
                slurm_id: *slurm_id,
                uid: *uid,
                spec: *spec,
                mirror: TaskMirror::default(),
                slurm_suspended: false,
                placements: 0,
                checkpoints: 0,
                end_state: None,
            };
            if let Some(node) = *running_on {
                let task = TaskRef { job: id, task: 0 };
                self.stepping.driver.observe(now, Observation::Started { task, node: NodeId(node) })?;
                t.mirror.start(full(spec));
                t.placements = 1;
                out.push(Effect::Adopt { slurm_id: *slurm_id, node });
            }
            self.by_slurm.insert(*slurm_id, self.jobs.len());
            self.jobs.push(t);
            return Ok(true);
        }
        let slurm_id = match event {
            Event::Submitted { .. } | Event::SwapRates { .. } => unreachable!("handled above"),
            Event::Finished { slurm_id }
            | Event::Ended { slurm_id, .. }
            | Event::Reclaimed { slurm_id, .. }
            | Event::Swapping { slurm_id }
            | Event::Resumed { slurm_id }
            | Event::Checkpointed { slurm_id } => *slurm_id,
        };
        let Some(&i) = self.by_slurm.get(&slurm_id) else { return Ok(false) };
        let task = core_task(i);
        let heard = match event {
            Event::Submitted { .. } | Event::SwapRates { .. } => unreachable!("handled above"),
            Event::Finished { .. } => Heard::Exited { ok: true },
            Event::Ended { .. } => Heard::Exited { ok: false },
            Event::Reclaimed { mem_mb, .. } => Heard::Reclaimed { mem_mb: *mem_mb },
            Event::Swapping { .. } => Heard::Swapping,
            Event::Resumed { .. } => Heard::Resumed,
            Event::Checkpointed { .. } => Heard::Checkpointed,
        };
        let books = self.stepping.driver.core().task(task);
        let t = &mut self.jobs[i];
        let Some(observed) = t.mirror.hear(books, task, heard, None) else { return Ok(false) };
        match event {
            Event::Finished { .. } => t.end_state = Some("COMPLETED".into()),
            Event::Ended { state, .. } => {
                if !self.stepping.replaying {
                    eprintln!("pliant slurm: job {slurm_id} ended {state}");
                }
                t.end_state = Some(state.clone());
            }
            Event::Swapping { .. } => t.slurm_suspended = true,
            Event::Checkpointed { .. } => t.checkpoints += 1,
            Event::Submitted { .. } | Event::SwapRates { .. } | Event::Reclaimed { .. } | Event::Resumed { .. } => {}
        }
        let swap = match event {
            Event::Reclaimed { mem_mb, .. } => Some(SwapHeard::Reclaimed { freed_mb: *mem_mb }),
            Event::Resumed { .. } => Some(SwapHeard::Resumed),
            Event::Finished { .. } | Event::Ended { .. } => Some(SwapHeard::Ended),
            _ => None,
        };
        if let Some(heard) = swap {
            self.stepping.heard_swap(now, task, heard);
        }
        for o in observed {
            self.stepping.driver.observe(now, o)?;
        }
        Ok(true)
    }

    /// Updates the records for one core action and queues what it takes on Slurm.
    fn decide(&mut self, action: &Action, effects: &mut Vec<Effect>) {
        let op = node_op(action);
        let Some(job) = action.task().map(|t| t.job).or(match op {
            NodeOp::StopJob { job } => Some(job),
            _ => None,
        }) else {
            return;
        };
        let books = self.stepping.driver.core().task(core_task(job.0 as usize));
        let t = &mut self.jobs[job.0 as usize];
        t.mirror.carry_out(&op);
        let slurm_id = t.slurm_id;
        let effect = match op {
            NodeOp::Launch { node, .. } | NodeOp::Restore { node, .. } => {
                t.placements += 1;
                Effect::Place { slurm_id, node: node.0, restore: matches!(op, NodeOp::Restore { .. }) }
            }
            NodeOp::Preempt { mechanism, limits, .. } => match mechanism {
                MechanismKind::Kill => {
                    t.slurm_suspended = false;
                    Effect::Requeue { slurm_id }
                }
                MechanismKind::Suspend => {
                    t.slurm_suspended = true;
                    Effect::Suspend { slurm_id }
                }
                MechanismKind::Checkpoint => Effect::Checkpoint { slurm_id },
                MechanismKind::Immediate => {
                    t.slurm_suspended = true;
                    Effect::Immediate { slurm_id, footprint_mb: limits.mem_mb }
                }
                MechanismKind::Graceful => Effect::Graceful { slurm_id, mem_mb: t.mirror.limits.mem_mb },
            },
            NodeOp::Resume { .. } => Effect::Resume { slurm_id },
            NodeOp::StopJob { .. } => {
                t.mirror.end(Status::CANCELLED, books);
                t.end_state = Some("CANCELLED".into());
                Effect::Cancel { slurm_id }
            }
            NodeOp::KeepSlot { .. } => return,
        };
        effects.push(effect);
    }

    /// After a journal replay: whatever the records say was decided but
    /// Slurm does not show carried out is done again (Slurm is the truth of
    /// what runs; the records of what pliant decided). What the node agents
    /// hold is named to them again at their first heartbeat ([`adoption`]).
    fn recover(&mut self) -> Result<(), ControllerError> {
        let snapshot = self.read_slurm()?;
        let state: HashMap<u64, &SlurmJob> = snapshot.iter().map(|j| (j.id, j)).collect();
        let mut unheld = Vec::new();
        for (i, t) in self.jobs.iter().enumerate() {
            let Some(sj) = state.get(&t.slurm_id) else { continue };
            let id = t.slurm_id;
            let m = self.standing(i);
            let redo = match (m.state.state, sj.state.as_str(), m.node) {
                (TaskState::Running | TaskState::Restoring, "PENDING", Some(node)) => {
                    Some(Effect::Place { slurm_id: id, node, restore: m.state.state == TaskState::Restoring })
                }
                (TaskState::Suspended, "RUNNING", _) if !m.checkpointing => Some(Effect::Suspend { slurm_id: id }),
                (TaskState::Restoring, _, _) => Some(Effect::Resume { slurm_id: id }),
                (TaskState::Running, "SUSPENDED", _) => Some(Effect::Resume { slurm_id: id }),
                (TaskState::Pending, "PENDING", _) if !sj.is_held() => {
                    unheld.push(id);
                    None
                }
                _ => None,
            };
            if let Some(effect) = redo {
                eprintln!(
                    "pliant slurm: recovery: job {id} is {} in Slurm, {:?} in the journal: {effect:?}",
                    sj.state, m.state.state
                );
                self.deferred.push(effect);
            }
        }
        for (_, r) in self.slurm.hold(&unheld) {
            self.act(&r);
        }
        if self.config.placement == Placer::Slurm {
            // Jobs Slurm started while no controller watched, and that may
            // have ended since: adopted where they ran.
            let since = (self.config.epoch_unix_us + self.stepping.last_now) / 1_000_000;
            let started = self.slurm.started_since(&self.config.partition, since.saturating_sub(2))?;
            let unknown: Vec<u64> = started.into_iter().filter(|id| !self.by_slurm.contains_key(id)).collect();
            let mut events = Vec::new();
            for sj in self.slurm.jobs_by_id(&unknown)? {
                self.consider(&sj, &mut events);
            }
            self.inbox.extend(events);
        }
        self.carry_out_ready(&snapshot);
        Ok(())
    }

    /// Carries out the effects whose jobs are in a state that allows them
    /// (a requeued job must be pending again before it is placed); the rest
    /// wait for a later poll. Placements go to Slurm together ([`SlurmCalls::place`]).
    fn carry_out_ready(&mut self, snapshot: &[SlurmJob]) {
        let state: HashMap<u64, &SlurmJob> = snapshot.iter().map(|j| (j.id, j)).collect();
        let mut later = Vec::new();
        let mut placing = Vec::new();
        for effect in std::mem::take(&mut self.deferred) {
            // A job Slurm no longer shows has ended: its effects are moot.
            let Some(&sj) = state.get(&effect.slurm_id()) else { continue };
            let too_soon = |id: &u64| self.requeued_at.get(id).is_some_and(|&t| self.now() < t + RELAUNCH_GAP);
            let restoring_too_soon =
                matches!(effect, Effect::Place { slurm_id, restore: true, .. } if too_soon(&slurm_id));
            if !effect.needs().contains(&sj.state.as_str()) || restoring_too_soon {
                later.push(effect);
            } else if let Effect::Place { slurm_id, node, restore } = effect {
                self.requeued_at.remove(&slurm_id);
                let node_name = self.config.nodes[node as usize].name.clone();
                placing.push((Placing { job: slurm_id, node: node_name, held: sj.is_held() }, node, restore));
            } else if !self.apply(&effect, &sj.state) {
                later.push(effect);
            }
        }
        let jobs: Vec<Placing> = placing.iter().map(|(p, _, _)| p.clone()).collect();
        let at = self.now() as f64 / 1e6;
        let placed = self.slurm.place(&jobs);
        if self.config.placement == Placer::Slurm {
            // The room was freed for these jobs: ranked first, so that an
            // older pending job does not take it (see `docs/slurm.md`).
            let released: Vec<u64> =
                placed.iter().filter(|(_, r)| matches!(r, Ok(Placement::Placed))).map(|(id, _)| *id).collect();
            for (_, r) in self.slurm.rank_first(&released) {
                self.act(&r);
            }
        }
        for (slurm_id, result) in placed {
            let Some((p, node, restore)) = placing.iter().find(|(p, _, _)| p.job == slurm_id) else { continue };
            match result {
                Ok(Placement::Placed) => eprintln!("pliant slurm: job {slurm_id} placed on {} at {at:.3} s", p.node),
                // Released by a controller killed before it journaled more:
                // on the node that one placed it on, which is this one.
                Ok(Placement::Started) => {
                    eprintln!("pliant slurm: job {slurm_id} had started on {} already at {at:.3} s", p.node)
                }
                Err(e) => {
                    self.act(&Err(e));
                    later.push(Effect::Place { slurm_id, node: *node, restore: *restore });
                    continue;
                }
            }
            let Some(&i) = self.by_slurm.get(&slurm_id) else { continue };
            // Named as running: a restored job reads nothing back from swap.
            let running = Standing { state: Status::of(TaskState::Running), ..self.standing(i) };
            if let Some(op) = adoption(&self.jobs[i], &running) {
                self.order(*node, op);
            }
            if *restore {
                self.inbox.push(Event::Resumed { slurm_id });
            }
        }
        self.deferred = later;
    }

    /// Carries out one effect on a job Slurm shows in `slurm_state`; false
    /// when it must be tried again later.
    fn apply(&mut self, effect: &Effect, slurm_state: &str) -> bool {
        let Some(&i) = self.by_slurm.get(&effect.slurm_id()) else { return true };
        let (t, standing) = (self.jobs[i].clone(), self.standing(i));
        match *effect {
            Effect::Place { .. } => unreachable!("placements go to Slurm together"),
            Effect::Immediate { slurm_id, footprint_mb } => {
                // Slurm's part first: without an agent the job is at least stopped.
                if slurm_state != "SUSPENDED" && !self.act(&self.slurm.suspend(slurm_id)) {
                    return false;
                }
                let Some(node) = self.agent_of(&t, standing.node) else { return false };
                let limits = Resources::new(0, footprint_mb);
                self.order(
                    node,
                    AgentOp::Preempt { task: channel_task(slurm_id), mechanism: MechanismKind::Immediate, limits },
                );
            }
            Effect::Suspend { slurm_id } => {
                if slurm_state != "SUSPENDED" && !self.act(&self.slurm.suspend(slurm_id)) {
                    return false;
                }
            }
            Effect::Graceful { slurm_id, mem_mb } => {
                let Some(node) = self.agent_of(&t, standing.node) else { return false };
                let limits = Resources::new(t.mirror.limits.cpu_milli, mem_mb);
                self.order(
                    node,
                    AgentOp::Preempt { task: channel_task(slurm_id), mechanism: MechanismKind::Graceful, limits },
                );
            }
            Effect::Resume { slurm_id } => {
                // Memory first, so that the job does not thrash against the
                // footprint when it runs again: Slurm resumes it once the
                // agent has lifted its limit ([`Controller::hear_agents`]).
                let Some(node) = self.agent_of(&t, standing.node) else { return false };
                self.order(node, AgentOp::Resume { task: channel_task(slurm_id), limits: t.mirror.limits });
            }
            Effect::Requeue { slurm_id } => {
                if !self.act(&self.slurm.requeue_held(slurm_id)) {
                    return false;
                }
                eprintln!("pliant slurm: job {slurm_id} killed: requeued, held");
            }
            Effect::Checkpoint { slurm_id } => {
                if !self.act(&self.slurm.signal(slurm_id, "USR1")) {
                    return false;
                }
                eprintln!("pliant slurm: job {slurm_id} asked to checkpoint (SIGUSR1)");
            }
            Effect::Cancel { slurm_id } => {
                self.act(&self.slurm.cancel(slurm_id));
            }
            Effect::Adopt { node, .. } => {
                if let Some(op) = adoption(&t, &standing) {
                    self.order(node, op);
                }
            }
        }
        true
    }

    /// The node of a placed job (on `node`) whose agent is there; `None`
    /// (said once per node) when it has none: its cgroups are acted on only
    /// through its agent, so the effect waits for one.
    fn agent_of(&mut self, t: &Tracked, node: Option<u32>) -> Option<u32> {
        let node = node?;
        let link = self.link.as_ref()?;
        let link = link.lock().unwrap_or_else(|e| e.into_inner());
        if link.present(node as usize) {
            self.agentless.remove(&node);
            return Some(node);
        }
        if link.missing(node as usize) && self.agentless.insert(node) {
            eprintln!(
                "pliant slurm: warning: node {} has no agent (`pliant agent --slurm` there): job {}'s memory is \
                 reclaimed or given back once one registers",
                self.config.nodes[node as usize].name, t.slurm_id
            );
        }
        None
    }

    /// Queues an order for `node`'s agent.
    fn order(&self, node: u32, op: AgentOp) {
        if let Some(link) = &self.link {
            link.lock().unwrap_or_else(|e| e.into_inner()).push(node as usize, op);
        }
    }

    /// Logs a failed Slurm command; true when it succeeded.
    fn act(&self, result: &Result<(), ToolError>) -> bool {
        match result {
            Ok(()) => true,
            Err(e) => {
                eprintln!("pliant slurm: warning: {e}");
                false
            }
        }
    }
}

/// The controller as a live body: the step driver's protocol, its events
/// read from Slurm and the effects on Slurm its steps leave.
impl LiveBody for Controller {
    type Event = Event;
    type Out = Effect;

    fn stepping(&mut self) -> &mut Stepping {
        &mut self.stepping
    }

    fn swap_rates_event(node: u32, rates: SwapRates) -> Event {
        Event::SwapRates { node, rates }
    }

    fn take_in(&mut self, now: Micros, event: &Event, out: &mut Vec<Effect>) -> Result<bool, StepError> {
        self.take_event(now, event, out)
    }

    fn journal(&mut self, step: &Step<Event>) -> Result<(), StepError> {
        match self.journal.as_mut() {
            Some(journal) => Ok(journal.append(step)?),
            None => Ok(()),
        }
    }

    fn carry_out(&mut self, _: Micros, action: &Action, effects: &mut Vec<Effect>) {
        self.decide(action, effects);
    }
}

/// The core's task for the job of core index `i` (one task per job).
/// What the planner prices shrinks on node `name` at from now on: its
/// own measured rates, the policy's where it has measured none yet.
fn rates_line(name: &str, rates: &SwapRates) -> String {
    let rate = |r: Option<Micros>| r.map_or("the policy's".to_string(), |us| format!("{:.2} s/GB", us as f64 / 1e6));
    format!(
        "{name} prices shrinks at its own measured rates: reclaim {}, restore {}",
        rate(rates.reclaim_per_gb),
        rate(rates.restore_per_gb)
    )
}

fn core_task(i: usize) -> TaskRef {
    TaskRef { job: JobId(i as u32), task: 0 }
}

/// The task that stands for Slurm job `slurm_id` on the agents' channel.
fn channel_task(slurm_id: u64) -> TaskRef {
    TaskRef { job: JobId(slurm_id as u32), task: 0 }
}

/// How a placed job, standing as `m`, is named to its node's agent: its
/// allocation and the state it should be in (`None` when it is not on a node).
fn adoption(t: &Tracked, m: &Standing) -> Option<AgentOp> {
    m.node?;
    let expect = match m.state.state {
        _ if !m.holds_resources() => return None,
        _ if m.checkpointing => Expected::Checkpointing,
        TaskState::Shrunk => Expected::Shrunk(m.limits),
        // Reclaimed (BIG-C IP, or shrunk and swapping), or kept whole (Slurm's SUSPEND).
        TaskState::Suspended if m.limits.mem_mb < t.spec.mem_mb => Expected::Frozen(m.limits),
        TaskState::Restoring => Expected::Restoring(m.limits),
        _ => Expected::Running,
    };
    Some(AgentOp::Adopt {
        task: channel_task(t.slurm_id),
        log_dir: Default::default(),
        checkpoint_dir: Default::default(),
        resources: full(&t.spec),
        expect,
        owed_mb: m.owed_mb,
    })
}

/// A job's full allocation.
fn full(spec: &JobSpec) -> Resources {
    Resources::new(spec.cpu_milli, spec.mem_mb)
}

/// The core's view of a Slurm job: one task.
fn job_request(id: JobId, now: Micros, spec: &JobSpec) -> JobRequest {
    let task = TaskRequest { resources: full(spec), estimate: spec.estimate_us };
    let phase = PhaseRequest { deps: vec![], coupled: false, local: false, tasks: vec![task] };
    JobRequest { id, submit: now, class: spec.class, priority: spec.priority, phases: vec![phase], elastic: None }
}

/// The nodes of `partition`, sorted by name, with their capacities.
fn partition_nodes(slurm: &dyn SlurmCalls, partition: &str) -> Result<Vec<NodeSpec>, ControllerError> {
    let mut nodes: Vec<NodeSpec> = slurm
        .nodes()?
        .into_iter()
        .filter(|n| n.partitions.iter().any(|p| p == partition))
        .map(|n| NodeSpec { name: n.name, capacity: Resources::new(n.cpus * 1000, n.real_memory_mb) })
        .collect();
    nodes.sort_by(|a, b| a.name.cmp(&b.name));
    nodes.dedup();
    if nodes.is_empty() {
        return Err(config_error(format!("sinfo shows no nodes in partition `{partition}`")));
    }
    Ok(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_s_rates_are_said_as_the_planner_takes_them() {
        let measured = SwapRates { reclaim_per_gb: Some(61_741_051), restore_per_gb: None };
        assert_eq!(
            rates_line("node-a", &measured),
            "node-a prices shrinks at its own measured rates: reclaim 61.74 s/GB, restore the policy's"
        );
    }
}
