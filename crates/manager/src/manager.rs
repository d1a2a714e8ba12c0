//! The resource manager: the same core as the simulator, fed with live
//! events. Each scheduling step — events in, monitor run or not, actions out —
//! is committed to the journal before its actions go to the nodes, and a
//! restart replays the journal to rebuild the core and the job records.
//!
//! The core runs under the step driver (`pliant_core::driver`) as in the
//! simulator: its timers and the monitor's period are the driver's, and each
//! step runs passes until the core has nothing more to do at its instant.
//!
//! Time in the core is integer µs since the cluster's epoch (journaled at
//! creation); this module is the only place that reads a clock.

use crate::choices::ChoiceView;
use crate::events::{Event, JobSpec};
use crate::journal::{Journal, JournalError, Step};
use crate::room::JournalRoom;
use crate::submit::SubmitRequest;
use crate::view::{JobShown, JobState, JobView, Preempted, TaskView};
use pliant_core::model::{JobId, JobRequest, NodeId, PhaseRequest, TaskRef, TaskRequest, TaskState};
use pliant_core::policy::cost::Rates;
use pliant_core::policy::{Params, Policy, Profile, Registry};
use pliant_core::{Action, Driver, MechanismKind, Micros, Observation, Resources, Scheduler, SwapRates};
use pliant_live::credentials::{not_its_credential, Joiner, NodeCredentials};
use pliant_live::delivery::Delivery;
use pliant_live::dispatch::{node_op, NodeOp};
use pliant_live::machine::unix_us;
use pliant_live::mirror::{Heard, Standing};
use pliant_live::protocol::{AgentOp, AgentReport, Expected};
use pliant_live::report_sequence::ReportSequence;
use pliant_live::stepper::{JournaledPolicy, LiveBody, StepError, Stepping};
use pliant_live::swap_meter::{NodeSwap, SwapHeard, SwapShown};
use pliant_live::token::Token;
use pliant_live::uid_range::{UidRange, DEFAULT_TASK_UIDS};
use pliant_live::wire::NodeRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a cluster is made of; fixed when its journal is created.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterConfig {
    /// The policy.
    pub policy: JournaledPolicy,
    /// `--set` parameters, in order.
    pub params: Vec<(String, String)>,
    /// The nodes, in core order.
    pub nodes: Vec<NodeRecord>,
    /// The epoch: wall-clock µs since 1970 at which core time is 0.
    pub epoch_unix_us: u64,
}

/// Why `node` cannot serve under `policy` (named `name`): it lacks the
/// mechanism the policy preempts by. `None` when it can.
pub fn unfit_node(name: &str, policy: &Policy, node: &NodeRecord) -> Option<String> {
    // `Cheapest` has no kind: it chooses per victim among what each node can do (kill at least).
    let needed = policy.preemption?.mechanism.kind()?;
    (!node.mechanisms.contains(&needed)).then(|| {
        format!(
            "policy `{name}` needs {} preemption, which node `{}` cannot do ({}); give it swap (as root: \
             `fallocate -l 2G /swapfile && chmod 600 /swapfile && mkswap /swapfile && swapon /swapfile`), \
             or run the cluster under a policy it can carry out (e.g. --policy kill)",
            needed.name(),
            node.name,
            node.notes.join("; ")
        )
    })
}

/// Refuses `--policy asked` on a state directory whose journal holds a
/// cluster under another policy: a cluster keeps the policy its journal
/// was made with (its jobs were scheduled by it), so a different one is an
/// error naming the ways out, not a silent override.
pub fn check_kept_policy(state_dir: &Path, asked: Option<&Profile>, registry: &Registry) -> Result<(), String> {
    // Opening a lost journal would write to it; it is refused as it is.
    crate::state_dir::check_journal(state_dir)?;
    let path = state_dir.join("journal.sqlite");
    let Some(asked) = asked.filter(|_| path.exists()) else { return Ok(()) };
    let config: Option<ClusterConfig> =
        Journal::open(&path).and_then(|j| j.get("config")).map_err(|e| format!("{}: {e}", path.display()))?;
    match config {
        Some(c) if c.policy.profile(registry).as_ref() != Ok(asked) => Err(format!(
            "--policy {asked}: the state directory {dir} holds a cluster under policy {kept} (its journal keeps \
             the policy with the jobs); start with --policy {kept}, or without --policy, to recover its jobs, or \
             give another --state-dir (or remove {dir}, losing its jobs) for a new cluster under {asked}",
            asked = asked.name,
            dir = state_dir.display(),
            kept = c.policy
        )),
        _ => Ok(()),
    }
}

/// The policy a cluster of `nodes` runs when none is given: `gp` where
/// every node can preempt gracefully, else `kill`.
pub fn default_policy(nodes: &[NodeRecord]) -> &'static str {
    if nodes.iter().all(|n| n.mechanisms.contains(&MechanismKind::Graceful)) {
        "gp"
    } else {
        "kill"
    }
}

impl ClusterConfig {
    /// Builds the policy through `registry`, and checks that every node can
    /// carry out its mechanism.
    pub fn policy(&self, registry: &Registry) -> Result<Policy, String> {
        let policy = self.policy.build(registry, &self.params)?;
        if let Some(why) = self.nodes.iter().find_map(|n| unfit_node(self.policy.name(), &policy, n)) {
            return Err(why);
        }
        Ok(policy)
    }

    /// The capacities, in core order.
    pub fn capacities(&self) -> Vec<Resources> {
        self.nodes.iter().map(|n| n.capacity).collect()
    }

    /// Per node, in core order, the mechanisms its core is told it can
    /// carry out (`Scheduler::restrict_mechanisms`).
    pub fn mechanisms(&self) -> Vec<Vec<MechanismKind>> {
        self.nodes.iter().map(|n| core_mechanisms(&n.mechanisms)).collect()
    }
}

/// Where a manager reads wall-clock µs since 1970: [`unix_us`] unless a
/// test steps it through chosen instants ([`Manager::set_clock`]).
pub type Clock = Box<dyn Fn() -> u64 + Send>;

/// The shortest sleep of a manager's loop ([`Manager::pause`]), so that a
/// deadline due now or a microsecond monitor period cannot spin it.
pub const MIN_PAUSE: Duration = Duration::from_millis(1);

/// Why the manager cannot go on: the live step driver's errors ([`StepError`]).
pub type ManagerError = StepError;

impl From<JournalError> for StepError {
    fn from(e: JournalError) -> StepError {
        StepError::Journal(Box::new(e))
    }
}

/// A request the API refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Malformed or impossible (HTTP 400).
    Invalid(String),
    /// No such job or task (HTTP 404).
    NotFound(String),
    /// Not possible in the job's state (HTTP 409).
    Conflict(String),
    /// The credential given may not do this (HTTP 403).
    Forbidden(String),
    /// Not now: the manager cannot journal it (HTTP 503; see [`JournalRoom`]).
    Unavailable(String),
}

/// The resource manager.
pub struct Manager {
    stepping: Stepping,
    clock: Clock,
    config: ClusterConfig,
    jobs: Vec<JobView>,
    journal: Journal,
    log_root: PathBuf,
    checkpoint_root: PathBuf,
    /// Operations on their way to each node (see [`Delivery`]).
    delivery: Delivery,
    /// Per node, the sequence number after the last agent report taken in,
    /// which is journaled then (see [`Manager::heartbeat`]; the number is not).
    reports_seen: Vec<ReportSequence>,
    /// Per node, when its agent last heartbeated (not journaled: a restarted
    /// manager gives every agent a fresh timeout).
    last_seen: Vec<Micros>,
    /// Per node, true once its agent was declared lost (until it registers again).
    lost: Vec<bool>,
    /// Every preemption the planner chose with its alternatives (`pliant`),
    /// in order; rebuilt by the replay, as the core makes them again.
    preemptions: Vec<ChoiceView>,
    /// The digests of the node credentials issued (kept in the journal under
    /// [`CREDENTIALS`] and [`UNUSED_CREDENTIALS`]; the credentials themselves
    /// are kept nowhere here): only a node's own agent may act as the node.
    credentials: NodeCredentials,
    /// The silence after which agents stop their tasks (told them at registration).
    agent_timeout: Duration,
    /// Whether the journal's file system has room for steps.
    room: JournalRoom,
    /// Why a step failed, once one did: the records may then be ahead of
    /// the journal, and the manager takes no step more (its loop stops with
    /// this; a restart replays the journal).
    broken: Option<String>,
    /// The plugins its policy is built from.
    registry: Registry,
    /// The uids jobs are given, one each (see [`Manager::set_task_uids`]).
    task_uids: UidRange,
}

/// Journal key of the digests ([`pliant_live::token::digest`]) of the node
/// credentials their agents have used (before the join token, of those the
/// agents made themselves: they are taken over as they are).
const CREDENTIALS: &str = "node_credential_digests";
/// Journal key of the digests of node credentials issued and not used yet.
const UNUSED_CREDENTIALS: &str = "node_credential_digests_unused";
/// Agent timeout a manager tells agents unless told otherwise.
pub const DEFAULT_AGENT_TIMEOUT: Duration = Duration::from_secs(10);

impl Manager {
    /// Opens the manager whose journal lives in `state_dir`, its policy built
    /// through `registry`. A new journal takes `fresh` as its cluster; an
    /// existing one keeps its own and is replayed. Returns the manager and
    /// whether it recovered a journal.
    pub fn open(state_dir: &Path, fresh: ClusterConfig, registry: &Registry) -> Result<(Manager, bool), ManagerError> {
        // Agents are sent paths inside it, wherever they run.
        let state_dir = &crate::state_dir::prepare(state_dir, &|_| {}).map_err(ManagerError::Config)?;
        let journal = Journal::open(&state_dir.join("journal.sqlite"))?;
        let existing: Option<ClusterConfig> = journal.get("config")?;
        let recovered = existing.is_some();
        let config = existing.unwrap_or(fresh);
        let policy = config.policy(registry).map_err(ManagerError::Config)?;
        if !recovered {
            journal.put("config", &config)?;
        }
        let credentials = NodeCredentials::from_digests(
            journal.get(CREDENTIALS)?.unwrap_or_default(),
            journal.get(UNUSED_CREDENTIALS)?.unwrap_or_default(),
        )
        .map_err(|e| ManagerError::Config(format!("journal: {e}")))?;
        let mut core = Scheduler::new(&config.capacities(), policy)?;
        for (i, can) in config.mechanisms().iter().enumerate() {
            core.restrict_mechanisms(i, can);
            // An agent's checkpoint is the task's own (SIGUSR1), at no rate the core knows.
            core.unpriced_mechanisms(i, &[MechanismKind::Checkpoint]);
        }
        let config_nodes = config.nodes.len();
        let mut m = Manager {
            stepping: Stepping::new(Driver::new(core)),
            clock: Box::new(unix_us),
            // A successor's batch numbers come after this manager's.
            delivery: Delivery::new(config.nodes.len(), unix_us()),
            reports_seen: vec![ReportSequence::default(); config.nodes.len()],
            config,
            jobs: Vec::new(),
            journal,
            log_root: state_dir.join("logs"),
            checkpoint_root: state_dir.join("checkpoints"),
            last_seen: Vec::new(),
            lost: vec![false; config_nodes],
            preemptions: Vec::new(),
            credentials,
            agent_timeout: DEFAULT_AGENT_TIMEOUT,
            room: JournalRoom::new(state_dir),
            broken: None,
            registry: registry.clone(),
            task_uids: DEFAULT_TASK_UIDS,
        };
        let steps = m.journal.steps()?;
        m.replay(steps)?;
        // From now, not from the last step journaled: an agent may have been
        // heard from since, and must not be declared lost before it fenced itself.
        m.last_seen = vec![m.now(); m.config.nodes.len()];
        Ok((m, recovered))
    }

    /// The cluster.
    pub fn config(&self) -> &ClusterConfig {
        &self.config
    }

    /// Core time now: µs since the epoch, never going back.
    pub fn now(&self) -> Micros {
        (self.clock)().saturating_sub(self.config.epoch_unix_us).max(self.stepping.last_now)
    }

    /// Reads wall-clock time from `clock` from now on.
    pub fn set_clock(&mut self, clock: Clock) {
        self.clock = clock;
    }

    /// The earliest instant the core must be stepped at even if nothing
    /// happens (a timer it asked for, the monitor's next run), if any.
    pub fn next_deadline(&self) -> Option<Micros> {
        self.stepping.driver.next_deadline()
    }

    /// How long a manager's loop may sleep before it next calls
    /// [`Manager::advance`]: until the next deadline, at most `max` (the
    /// loop's polling period for outside events), at least [`MIN_PAUSE`].
    pub fn pause(&self, max: Duration) -> Duration {
        let until = self.next_deadline().map_or(max, |t| Duration::from_micros(t.saturating_sub(self.now())));
        until.clamp(MIN_PAUSE, max.max(MIN_PAUSE))
    }

    /// Why the manager places nothing now, if it does not: its journal's
    /// file system was short of room when last checked (at each step, and
    /// the manager's loop steps every tick; see [`JournalRoom`]).
    pub fn not_placing(&self) -> Option<&str> {
        self.room.why()
    }

    /// A line for the operator when the manager stopped or resumed placing
    /// since the last call ([`JournalRoom::news`]).
    pub fn placing_news(&mut self) -> Option<String> {
        self.room.news()
    }

    /// Refuses what must be journaled at once while the journal has no room.
    fn journal_has_room(&mut self) -> Result<(), Refusal> {
        self.room.check().map_or(Ok(()), |why| Err(Refusal::Unavailable(why.to_string())))
    }

    /// Gives the jobs submitted from now on uids from `range` (the nodes'
    /// `--task-uids`; a job keeps the uid journaled with it).
    pub fn set_task_uids(&mut self, range: UidRange) {
        self.task_uids = range;
    }

    /// The uid a new job gets: the next one after the last job's that no
    /// unfinished job holds (so a uid comes back only after every other
    /// one was given out, and never while its job runs).
    fn next_uid(&self) -> Option<u32> {
        let held: std::collections::BTreeSet<u32> =
            self.jobs.iter().filter(|j| !j.is_over()).filter_map(|j| j.uid).collect();
        self.task_uids.next_free(self.jobs.last().and_then(|j| j.uid), |uid| held.contains(&uid))
    }

    /// Takes in a submission; returns the new job's id.
    pub fn submit(&mut self, req: SubmitRequest) -> Result<u32, Refusal> {
        self.journal_has_room()?;
        let spec = req.validate(&self.config.capacities()).map_err(Refusal::Invalid)?;
        let uid = self.next_uid().ok_or_else(|| {
            Refusal::Unavailable(format!("every task uid ({}) is held by a job that has not ended", self.task_uids))
        })?;
        let id = self.jobs.len() as u32;
        self.step_or_refuse(vec![Event::Submitted { spec, uid: Some(uid) }])?;
        Ok(id)
    }

    /// Cancels a job that has not ended.
    pub fn cancel(&mut self, job: u32) -> Result<(), Refusal> {
        self.journal_has_room()?;
        let j = self.job(job)?;
        if j.is_over() {
            return Err(Refusal::Conflict(format!("job {job} is already {:?}", j.state).to_lowercase()));
        }
        self.step_or_refuse(vec![Event::Cancelled { job: JobId(job) }])
    }

    /// Takes in agents' reports, runs the resource monitor when it is due,
    /// and schedules. False when the journal has no room: nothing was taken
    /// (the reports are not acknowledged; the caller keeps them and offers
    /// them again), so that nothing is acknowledged before it is durable.
    pub fn advance(&mut self, reports: Vec<(u32, AgentReport)>) -> Result<bool, ManagerError> {
        let events = reports.into_iter().map(|(node, report)| Event::Report { node, report }).collect();
        self.step_now(events)
    }

    /// The operations that may go to node `node` now, taken out and counted
    /// as carried out (over a channel that loses nothing: `pliant local`).
    pub fn take_ops(&mut self, node: usize) -> Vec<AgentOp> {
        self.delivery.take(node)
    }

    /// After a restart: for each node, take over every task the journal says
    /// it holds, in the state the journal says, then remove anything else;
    /// no task starts on a node before every other node has done so (see [`Delivery`]).
    pub fn queue_recovery(&mut self) {
        self.delivery.hold_every_node();
        for node in 0..self.config.nodes.len() {
            let ops = self.takeover(node, &[]);
            self.delivery.extend(node, ops);
        }
    }

    /// The operations that make node `node`'s agent hold what the records
    /// say: an [`AgentOp::Adopt`] of every task holding resources there, in
    /// its recorded state (but the `spared` ones, whose launch is still to be
    /// sent), then an [`AgentOp::Sweep`] of anything else.
    fn takeover(&self, node: usize, spared: &[TaskRef]) -> Vec<AgentOp> {
        let mut ops = Vec::new();
        let core = self.stepping.driver.core();
        for job in &self.jobs {
            for t in &job.tasks {
                let task = TaskRef { job: JobId(job.id), task: t.index };
                if t.mirror.placed_on(core.task(task)) != Some(node as u32) || spared.contains(&task) {
                    continue;
                }
                let s = t.standing(job.id, core);
                let expect = match s.state.state {
                    _ if s.checkpointing => Expected::Checkpointing,
                    TaskState::Shrunk => Expected::Shrunk(s.limits),
                    TaskState::Suspended => Expected::Frozen(s.limits),
                    TaskState::Restoring => Expected::Restoring(s.limits),
                    _ => Expected::Running,
                };
                let (log_dir, checkpoint_dir) = (self.log_dir(task), self.checkpoint_dir(task));
                let resources = s.allocated;
                ops.push(AgentOp::Adopt { task, log_dir, checkpoint_dir, resources, expect, owed_mb: s.owed_mb });
            }
        }
        ops.push(AgentOp::Sweep);
        ops
    }

    /// The silence after which an agent stops its tasks, told to agents as
    /// they register (see `pliant_live::fence`).
    pub fn agent_timeout(&self) -> Duration {
        self.agent_timeout
    }

    /// Tells agents `timeout` from their next registration on.
    pub fn set_agent_timeout(&mut self, timeout: Duration) {
        self.agent_timeout = timeout;
    }

    /// Takes the node credentials issued while the cluster was being formed
    /// (`pliant serve`), and journals them.
    pub fn adopt_credentials(&mut self, credentials: NodeCredentials) -> Result<(), ManagerError> {
        self.credentials = credentials;
        self.journal_credentials()
    }

    fn journal_credentials(&self) -> Result<(), ManagerError> {
        let (used, unused) = self.credentials.digests();
        self.journal.put(CREDENTIALS, &used)?;
        Ok(self.journal.put(UNUSED_CREDENTIALS, &unused)?)
    }

    /// Runs `change` on the node credentials, journaling them if it changed them.
    fn with_credentials<T>(&mut self, change: impl FnOnce(&mut NodeCredentials) -> T) -> Result<T, Refusal> {
        let before = self.credentials.clone();
        let result = change(&mut self.credentials);
        if self.credentials != before {
            self.journal_credentials().map_err(|e| Refusal::Conflict(e.to_string()))?;
        }
        Ok(result)
    }

    /// True when `given` is the credential of node `node`'s agent (its
    /// first use is journaled: the join token can then no longer replace it).
    pub fn authenticate_node(&mut self, node: u32, given: &str) -> bool {
        let Some(name) = self.config.nodes.get(node as usize).map(|n| n.name.clone()) else { return false };
        self.with_credentials(|c| c.check(&name, given)).ok().flatten().is_some()
    }

    /// Revokes node `name`'s credential (see [`NodeCredentials::revoke`]),
    /// journaled: its agent's next heartbeat is refused until it joins again
    /// with the join token, and past the agent timeout without that the node
    /// is lost. Whoever holds the old credential can no longer act as the node.
    pub fn revoke_node(&mut self, name: &str) -> Result<(), Refusal> {
        self.journal_has_room()?;
        if !self.config.nodes.iter().any(|n| n.name == name) {
            return Err(Refusal::NotFound(format!("no node `{name}` in this cluster (see GET /cluster)")));
        }
        if !self.with_credentials(|c| c.revoke(name))? {
            return Err(Refusal::Conflict(format!(
                "node `{name}` holds no credential to revoke (`pliant local`'s node runs in its process)"
            )));
        }
        Ok(())
    }

    /// True when node `node` has a credential (an agent whose node has none
    /// must register again, with the join token).
    pub fn has_credential(&self, node: u32) -> bool {
        self.config.nodes.get(node as usize).is_some_and(|n| self.credentials.has(&n.name))
    }

    /// An agent (re)starts: it takes over the tasks the records have on its
    /// node (a restarted agent finds them still running in their cgroups) and
    /// removes the rest; operations it was sent but may not have carried out
    /// are replaced by that takeover, except launches not sent yet. A node
    /// declared lost comes back (its tasks were requeued then). Returns the
    /// node's id, and the node credential issued when the node joined with
    /// the join token (see [`NodeCredentials::admit`]).
    pub fn register(&mut self, record: &NodeRecord, joiner: Joiner) -> Result<(u32, Option<Token>), Refusal> {
        self.journal_has_room()?;
        // What the record asks is judged before its name is looked up: a
        // refusal must not tell a node of the cluster from a made-up name.
        let policy = self.config.policy(&self.registry).map_err(Refusal::Conflict)?;
        if let Some(why) = unfit_node(self.config.policy.name(), &policy, record) {
            return Err(Refusal::Conflict(why));
        }
        let node = self.config.nodes.iter().position(|n| n.name == record.name).ok_or_else(|| match joiner {
            // Only the join token's holder learns that a name is not a node here.
            Joiner::JoinToken => Refusal::NotFound(format!(
                "no node named `{}` in this cluster (its nodes are fixed when its journal is created)",
                record.name
            )),
            Joiner::Credential(_) => Refusal::Forbidden(not_its_credential(&record.name)),
        })?;
        let issued = self.with_credentials(|c| c.admit(&record.name, joiner))?.map_err(Refusal::Forbidden)?;
        // A task's last launch not sent yet still stands, with what follows it
        // for that task, if the records hold the task here (a later stop or
        // requeue, e.g. of a cancelled job, voids it).
        let waiting = self.delivery.reregistered(node);
        let mut last_launch: BTreeMap<TaskRef, usize> = BTreeMap::new();
        for (i, op) in waiting.iter().enumerate() {
            if let AgentOp::Launch { task, .. } = op {
                last_launch.insert(*task, i);
            }
        }
        last_launch.retain(|task, _| self.placed_on(*task) == Some(node as u32));
        let spared: Vec<TaskRef> = last_launch.keys().copied().collect();
        let queued: Vec<AgentOp> = waiting
            .into_iter()
            .enumerate()
            .filter(|(i, op)| op.task().and_then(|t| last_launch.get(&t)).is_some_and(|from| i >= from))
            .map(|(_, op)| op)
            .collect();
        let ops = self.takeover(node, &spared);
        self.delivery.extend(node, ops);
        self.delivery.extend(node, queued);
        let events = if self.lost[node] { vec![Event::NodeBack { node: node as u32 }] } else { Vec::new() };
        self.last_seen[node] = self.now();
        self.step_or_refuse(events)?;
        Ok((node as u32, issued))
    }

    /// An agent's heartbeat: takes in its reports, numbered from `first`
    /// on (a report resent because an answer was lost is taken once), and
    /// returns the next batch of operations with its number, given that the
    /// agent carried out batch `acked` last (see [`Delivery::send`]). Only
    /// reports journaled are taken: while the journal has no room none is
    /// (the answer says so with [`Manager::reports_taken`], and the agent
    /// sends them again).
    pub fn heartbeat(
        &mut self,
        node: u32,
        acked: Option<u64>,
        first: u64,
        reports: Vec<AgentReport>,
    ) -> Result<(u64, Vec<AgentOp>), Refusal> {
        let i = node as usize;
        if i >= self.config.nodes.len() {
            return Err(Refusal::NotFound(format!("no node {node}")));
        }
        if self.lost[i] {
            return Err(Refusal::Conflict(format!("node {node} was declared lost: register again")));
        }
        self.last_seen[i] = self.now();
        self.delivery.acknowledge(i, acked);
        let (unseen, through) = self.reports_seen[i].unseen(first, reports);
        // A report about a task whose launch the agent has not carried out
        // yet is about an earlier run (e.g. a takeover that found it gone).
        let new =
            unseen.into_iter().filter(|r| !self.delivery.launch_pending(i, r.task())).map(|r| (node, r)).collect();
        if self.advance(new).map_err(|e| Refusal::Unavailable(e.to_string()))? {
            self.reports_seen[i].taken(through);
        }
        Ok(self.delivery.send(i))
    }

    /// The sequence number after the last report of node `node`'s agent
    /// taken in, and journaled ([`pliant_live::wire::Orders::reports_taken`]).
    pub fn reports_taken(&self, node: u32) -> u64 {
        self.reports_seen.get(node as usize).map_or(0, ReportSequence::next)
    }

    /// Declares lost every agent silent for longer than `timeout` and requeues
    /// its tasks (`pliant serve` gives the agent timeout plus a margin, by
    /// when the agent has stopped them: `pliant_live::fence`). Returns the
    /// names of the nodes declared lost now.
    pub fn check_agents(&mut self, timeout: Micros) -> Result<Vec<String>, ManagerError> {
        let now = self.now();
        let mut lost = Vec::new();
        // Requeueing needs the journal; the agents are answered meanwhile.
        if self.room.check().is_some() {
            return Ok(lost);
        }
        for node in 0..self.config.nodes.len() {
            if !self.lost[node] && now.saturating_sub(self.last_seen[node]) > timeout {
                // Whatever it was told and did not fetch is moot: its tasks are requeued.
                self.delivery.node_lost(node);
                let mut events = self.lost_tasks(node, "its agent stopped heartbeating");
                events.push(Event::NodeLost { node: node as u32 });
                if self.step_now(events)? {
                    lost.push(self.config.nodes[node].name.clone());
                }
            }
        }
        Ok(lost)
    }

    /// Reports of every task the records have on `node` as lost.
    fn lost_tasks(&self, node: usize, reason: &str) -> Vec<Event> {
        self.jobs
            .iter()
            .flat_map(|j| j.tasks.iter().map(move |t| TaskRef { job: JobId(j.id), task: t.index }))
            .filter(|&task| self.placed_on(task) == Some(node as u32))
            .map(|task| Event::Report { node: node as u32, report: AgentReport::Lost { task, reason: reason.into() } })
            .collect()
    }

    /// A step at the clock's `now` (the live step driver's
    /// [`LiveBody::live_step`]: a monitor run due goes first, as a step of
    /// its own at its due instant); its operations go out to the agents.
    /// False when the journal has no room: no step is taken and the events
    /// are not taken in. After a step that failed (it may not be journaled
    /// while the records have moved on) every step is refused: the
    /// manager's loop stops, and a restart replays the journal.
    fn step_now(&mut self, events: Vec<Event>) -> Result<bool, ManagerError> {
        if let Some(why) = &self.broken {
            return Err(ManagerError::Config(why.clone()));
        }
        if self.room.check().is_some() {
            return Ok(false);
        }
        let now = self.now();
        match self.live_step(now, events) {
            Ok(ops) => {
                for (node, op) in ops {
                    self.delivery.push(node, op);
                }
                Ok(true)
            }
            Err(e) => {
                self.broken = Some(format!("a step failed, so the manager takes no more: {e}"));
                Err(e)
            }
        }
    }

    /// [`Manager::step_now`] for a request: refused (and nothing taken)
    /// while the journal has no room or after a step could not be journaled.
    fn step_or_refuse(&mut self, events: Vec<Event>) -> Result<(), Refusal> {
        match self.step_now(events) {
            Ok(true) => Ok(()),
            Ok(false) => Err(Refusal::Unavailable(self.room.why().unwrap_or("no room for the journal").to_string())),
            Err(e) => Err(Refusal::Unavailable(e.to_string())),
        }
    }

    /// Applies one event to the core and the records; false when it is stale
    /// (about a task that has moved on) and is dropped.
    fn take_event(
        &mut self,
        now: Micros,
        event: &Event,
        ops: &mut Vec<(usize, AgentOp)>,
    ) -> Result<bool, ManagerError> {
        match event {
            Event::Submitted { spec, uid } => {
                let id = JobId(self.jobs.len() as u32);
                let uid = uid.or_else(|| self.next_uid());
                self.stepping.driver.observe(now, Observation::JobSubmitted(job_request(id, now, spec)))?;
                self.jobs.push(JobView::new(id, spec.clone(), now, uid));
            }
            Event::Cancelled { job } => {
                match self.jobs.get(job.0 as usize) {
                    Some(j) if !j.is_over() => {}
                    _ => return Ok(false),
                }
                self.stepping.driver.observe(now, Observation::JobAborted(*job))?;
                self.stop_job(now, *job, JobState::Cancelled, ops);
            }
            Event::Report { node, report } => return self.take_report(now, *node, report, ops),
            Event::SwapRates { node, rates } => return Ok(self.stepping.give_swap_rates(*node, *rates)),
            Event::NodeLost { node } | Event::NodeBack { node } => {
                let lost = matches!(event, Event::NodeLost { .. });
                let i = *node as usize;
                if i >= self.lost.len() || self.lost[i] == lost {
                    return Ok(false);
                }
                let id = pliant_core::model::NodeId(*node);
                self.stepping
                    .driver
                    .observe(now, if lost { Observation::NodeLost(id) } else { Observation::NodeBack(id) })?;
                self.lost[i] = lost;
            }
        }
        Ok(true)
    }

    fn take_report(
        &mut self,
        now: Micros,
        node: u32,
        report: &AgentReport,
        ops: &mut Vec<(usize, AgentOp)>,
    ) -> Result<bool, ManagerError> {
        let task = report.task();
        let heard = match report {
            AgentReport::Exited { code, .. } => Heard::Exited { ok: *code == Some(0) },
            AgentReport::Reclaimed { mem_mb, .. } => Heard::Reclaimed { mem_mb: *mem_mb },
            AgentReport::Swapping { .. } => Heard::Swapping,
            AgentReport::Resumed { .. } => Heard::Resumed,
            AgentReport::Checkpointed { .. } => Heard::Checkpointed,
            AgentReport::Lost { .. } => Heard::Lost,
        };
        let books = self.stepping.driver.core().task(task);
        let Some(t) = self.jobs.get_mut(task.job.0 as usize).and_then(|j| j.tasks.get_mut(task.task as usize)) else {
            return Ok(false);
        };
        // A report from another node, or about a task that has ended
        // (it keeps the node it ran on), is stale.
        let Some(observed) = t.mirror.hear(books, task, heard, Some(node)) else { return Ok(false) };
        match report {
            AgentReport::Exited { code: Some(0), .. } if observed.contains(&Observation::TaskFinished(task)) => {
                t.exit_code = Some(0);
                t.end_us = Some(now);
            }
            AgentReport::Exited { code: Some(0), .. } => {}
            AgentReport::Exited { code, signal, stderr_tail, .. } => {
                t.exit_code = *code;
                t.signal = *signal;
                t.stderr_tail = Some(stderr_tail.clone());
                t.end_us = Some(now);
            }
            AgentReport::Reclaimed { freed_mb, took_ms, .. } => {
                if let Some(Observation::MemoryReclaimed { mem_mb, .. }) = observed.first() {
                    t.reclaimed_mb += mem_mb;
                }
                t.freed_mb += freed_mb;
                t.reclaim_ms += took_ms;
            }
            AgentReport::Checkpointed { .. } => t.checkpoints += 1,
            AgentReport::Lost { reason, .. } => {
                if !self.stepping.replaying {
                    eprintln!("pliant manager: {task} lost ({reason}); requeued");
                }
                t.lost_reason = Some(reason.clone());
            }
            AgentReport::Swapping { .. } | AgentReport::Resumed { .. } => {}
        }
        let swap = match report {
            AgentReport::Reclaimed { freed_mb, .. } => Some(SwapHeard::Reclaimed { freed_mb: *freed_mb }),
            AgentReport::Resumed { .. } => Some(SwapHeard::Resumed),
            AgentReport::Exited { .. } | AgentReport::Lost { .. } => Some(SwapHeard::Ended),
            AgentReport::Swapping { .. } | AgentReport::Checkpointed { .. } => None,
        };
        if let Some(heard) = swap {
            self.stepping.heard_swap(now, task, heard);
        }
        for o in observed {
            self.stepping.driver.observe(now, o)?;
        }
        if matches!(report, AgentReport::Exited { code, .. } if *code != Some(0)) {
            self.stop_job(now, task.job, JobState::Failed, ops);
        }
        self.jobs[task.job.0 as usize].refresh(now, self.stepping.driver.core());
        Ok(true)
    }

    /// Ends a job and tells the nodes to stop its tasks.
    fn stop_job(&mut self, now: Micros, job: JobId, state: JobState, ops: &mut Vec<(usize, AgentOp)>) {
        let core = self.stepping.driver.core();
        let j = &mut self.jobs[job.0 as usize];
        for t in &j.tasks {
            let task = TaskRef { job, task: t.index };
            if let Some(node) = t.mirror.placed_on(core.task(task)) {
                ops.push((node as usize, AgentOp::Stop { task }));
            }
        }
        j.end(state, now, core);
    }

    /// Updates the records for one core action and queues its node operation.
    fn mirror(&mut self, now: Micros, action: &Action, ops: &mut Vec<(usize, AgentOp)>) {
        let op = node_op(action);
        match op {
            NodeOp::Launch { task, node, resources } => self.start(now, task, node, resources, false, ops),
            // The checkpoint directory is the same path on every node (shared storage).
            NodeOp::Restore { task, node, resources, .. } => self.start(now, task, node, resources, true, ops),
            NodeOp::Preempt { task, mechanism, limits } => {
                let node = self.placed_on(task).expect("victims are on a node") as usize;
                let t = self.task_mut(task);
                *t.preemptions.entry(mechanism.name().to_string()).or_default() += 1;
                t.preempted.push(Preempted { at_us: now, mechanism: mechanism.name().to_string() });
                t.mirror.carry_out(&op);
                ops.push((node, AgentOp::Preempt { task, mechanism, limits }));
            }
            NodeOp::Resume { task, resources } => {
                self.task_mut(task).mirror.carry_out(&op);
                let node = self.placed_on(task).expect("preempted tasks are on a node") as usize;
                ops.push((node, AgentOp::Resume { task, limits: resources }));
            }
            NodeOp::StopJob { job } => self.stop_job(now, job, JobState::Failed, ops),
            NodeOp::KeepSlot { .. } => {}
        }
        if let Some(job) = action.task().map(|t| t.job) {
            self.jobs[job.0 as usize].refresh(now, self.stepping.driver.core());
        }
    }

    /// Starts a task on `node`: afresh, or restored from its checkpoint directory.
    fn start(
        &mut self,
        now: Micros,
        task: TaskRef,
        node: NodeId,
        resources: Resources,
        restore: bool,
        ops: &mut Vec<(usize, AgentOp)>,
    ) {
        let (log_dir, checkpoint_dir) = (self.log_dir(task), self.checkpoint_dir(task));
        let job = &mut self.jobs[task.job.0 as usize];
        job.first_start_us.get_or_insert(now);
        let (argv, uid) = (job.spec.command.clone(), job.uid);
        let t = &mut job.tasks[task.task as usize];
        t.mirror.start(resources);
        t.launches += 1;
        t.start_us = Some(now);
        t.first_start_us.get_or_insert(now);
        ops.push((node.0 as usize, AgentOp::Launch { task, argv, resources, log_dir, checkpoint_dir, restore, uid }));
    }

    fn task_mut(&mut self, task: TaskRef) -> &mut TaskView {
        &mut self.jobs[task.job.0 as usize].tasks[task.task as usize]
    }

    /// The node the records have `task` on ([`TaskMirror::placed_on`](pliant_live::mirror::TaskMirror::placed_on)).
    fn placed_on(&self, task: TaskRef) -> Option<u32> {
        let t = &self.jobs[task.job.0 as usize].tasks[task.task as usize];
        t.mirror.placed_on(self.stepping.driver.core().task(task))
    }

    /// Where `task` stands, if there is such a task.
    pub fn standing(&self, task: TaskRef) -> Option<Standing> {
        let t = self.jobs.get(task.job.0 as usize)?.tasks.get(task.task as usize)?;
        Some(t.standing(task.job.0, self.stepping.driver.core()))
    }

    /// Where a task's stdout, stderr and exit code go.
    pub fn log_dir(&self, task: TaskRef) -> PathBuf {
        task_dir(&self.log_root, task)
    }

    /// Where a task saves its state when asked to checkpoint, and resumes
    /// from: the same path for every run of the task, on whichever node.
    pub fn checkpoint_dir(&self, task: TaskRef) -> PathBuf {
        task_dir(&self.checkpoint_root, task)
    }

    /// Every job, in id order.
    pub fn jobs(&self) -> &[JobView] {
        &self.jobs
    }

    /// One job.
    pub fn job(&self, id: u32) -> Result<&JobView, Refusal> {
        self.jobs.get(id as usize).ok_or_else(|| Refusal::NotFound(format!("no job {id}")))
    }

    /// One job as the API shows it, each task with where it stands.
    pub fn show_job(&self, id: u32) -> Result<JobShown, Refusal> {
        Ok(JobShown::of(self.job(id)?, self.stepping.driver.core()))
    }

    /// Resources allocated per node, in node order, as the core books them.
    pub fn allocations(&self) -> Vec<Resources> {
        self.stepping.driver.core().node_allocations().map(|(_, a)| a).collect()
    }

    /// Every preemption the planner chose, with the estimates of its
    /// alternatives (only the `pliant` preset chooses per victim).
    pub fn preemptions(&self) -> &[ChoiceView] {
        &self.preemptions
    }

    /// Per node, true while its agent is declared lost.
    pub fn lost_nodes(&self) -> &[bool] {
        &self.lost
    }

    /// Per node, the swap rates the planner prices its shrinks there at:
    /// measured there, or the policy's (`pliant_live::swap_meter`).
    pub fn swap_rates(&self) -> Vec<SwapShown> {
        let mut params = Params::default();
        for (k, v) in &self.config.params {
            // The configuration was checked when the cluster started.
            let _ = params.set(k, v);
        }
        let policy = Rates::from_params(&params);
        let shown = |n: &NodeSwap| n.shown(policy.reclaim_per_gb, policy.restore_per_gb);
        self.stepping.swap.nodes().iter().map(shown).collect()
    }

    /// Steps journaled so far.
    pub fn journal_steps(&self) -> Result<u64, ManagerError> {
        Ok(self.journal.len()?)
    }
}

/// The core's names for the mechanisms a node reports.
fn core_mechanisms(node: &[MechanismKind]) -> Vec<MechanismKind> {
    MechanismKind::ALL.into_iter().filter(|k| node.contains(k)).collect()
}

/// A task's own directory under `root`.
fn task_dir(root: &Path, task: TaskRef) -> PathBuf {
    root.join(format!("job-{}", task.job.0)).join(format!("task-{}", task.task))
}

/// The core's view of a submission: its phases of identical tasks (by
/// default one phase of independent tasks).
fn job_request(id: JobId, now: Micros, spec: &JobSpec) -> JobRequest {
    let task = TaskRequest { resources: Resources::new(spec.cpu_milli, spec.mem_mb), estimate: spec.estimate_us };
    let phase = |deps: Vec<u32>, local: bool, n: u32| PhaseRequest {
        deps,
        coupled: false,
        local,
        tasks: vec![task; n as usize],
    };
    let phases = if spec.phases.is_empty() {
        vec![phase(vec![], false, spec.tasks)]
    } else {
        spec.phases.iter().map(|p| phase(p.after.clone(), p.local, p.tasks)).collect()
    };
    let elastic = spec.elastic.map(|e| e.elasticity());
    JobRequest { id, submit: now, class: spec.queue, priority: spec.priority, phases, elastic }
}

/// The manager as a live body: the step driver's protocol, its events and
/// the operations for agents that its steps leave.
impl LiveBody for Manager {
    type Event = Event;
    type Out = (usize, AgentOp);

    fn stepping(&mut self) -> &mut Stepping {
        &mut self.stepping
    }

    fn swap_rates_event(node: u32, rates: SwapRates) -> Event {
        Event::SwapRates { node, rates }
    }

    fn take_in(&mut self, now: Micros, event: &Event, ops: &mut Vec<(usize, AgentOp)>) -> Result<bool, StepError> {
        self.take_event(now, event, ops)
    }

    /// A disk found full gives the journal the reserve (once) for this
    /// step; the steps after it wait for room ([`JournalRoom`]).
    fn journal(&mut self, step: &Step) -> Result<(), StepError> {
        match self.journal.append(step) {
            Err(e) if e.is_disk_full() && self.room.release() => Ok(self.journal.append(step)?),
            done => Ok(done?),
        }
    }

    fn carry_out(&mut self, now: Micros, action: &Action, ops: &mut Vec<(usize, AgentOp)>) {
        self.mirror(now, action, ops);
    }

    fn settled(&mut self) {
        if let Some(planner) = self.stepping.driver.planner_mut() {
            self.preemptions.extend(planner.take_choices().iter().map(ChoiceView::from));
        }
    }
}
