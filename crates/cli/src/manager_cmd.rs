//! Live-mode cluster commands: `pliant local` runs the manager and an agent
//! for this machine; `submit`, `status`, `cancel` and `logs` talk to a
//! manager over its HTTP API. [`ManagerCommand`] is flattened into the
//! top-level command.

use crate::live_cmd::{parse_seconds, parse_size_mb};
use pliant_core::model::{Elasticity, ElasticityProfile};
use pliant_core::policy::{Profile, Registry};
use pliant_live::client::{Client, DEFAULT_URL};
use pliant_live::confine::{Confinement, TaskUser};
use pliant_live::daemon::stop_on_signals;
use pliant_live::machine::Offer;
use pliant_live::remote_agent::{run_agent, AgentOptions};
use pliant_live::tls::Pin;
use pliant_live::token::Token;
use pliant_live::uid_range::UidRange;
use pliant_manager::elastic::ElasticRequest;
use pliant_manager::local::{run_local, LocalOptions, ManagerSetup};
use pliant_manager::serve::{run_serve, ServeOptions};
use pliant_manager::state_dir::default_dir;
use serde_json::{json, Value};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// The cluster subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum ManagerCommand {
    /// Run the manager and one agent for this machine in one process (needs
    /// root or a delegated cgroup, and swap for the ip and gp policies).
    Local(LocalArgs),
    /// Run the manager alone; agents (`pliant agent`) register over HTTP.
    Serve(ServeArgs),
    /// Run this machine's agent for a manager started with `pliant serve`
    /// (needs root or a delegated cgroup, and swap for ip and gp); with
    /// --slurm, a Slurm node's agent for `pliant slurm` (as root).
    Agent(AgentArgs),
    /// Submit a job to a manager.
    Submit(SubmitArgs),
    /// Show the jobs a manager knows (or one job).
    Status(StatusArgs),
    /// Cancel a job.
    Cancel(JobArgs),
    /// Print a job's output (stdout, then stderr, of each task).
    Logs(JobArgs),
    /// Manage the nodes of a `pliant serve` cluster.
    #[command(subcommand)]
    Node(NodeCommand),
    /// The watchdog `pliant agent` starts: it stops the agent's tasks once
    /// the agent has not reached the manager for too long (fencing).
    #[command(hide = true)]
    AgentWatchdog(WatchdogArgs),
}

/// Options of the agent's watchdog (set by `pliant agent`).
#[derive(Debug, clap::Args)]
pub struct WatchdogArgs {
    /// The agent's top cgroup.
    #[arg(long)]
    cgroup: String,
    /// The agent's contact file.
    #[arg(long)]
    contact: PathBuf,
    /// Silence (ms) after which the tasks are stopped.
    #[arg(long)]
    after_ms: u64,
    /// The agent's process id.
    #[arg(long)]
    parent: u32,
}

/// Where a manager keeps its state and listens, and its policy parameters.
#[derive(Debug, clap::Args)]
pub struct SetupArgs {
    /// Directory for the journal (journal.sqlite) and the tasks' logs; a
    /// restart with the same directory recovers every job. Default:
    /// /var/lib/pliant for root, else ./pliant-state.
    #[arg(long, default_value_os_t = default_dir())]
    pub state_dir: PathBuf,
    /// Address the HTTP API listens on.
    #[arg(long, default_value = "127.0.0.1:7466")]
    pub listen: String,
    /// Set a policy parameter, KEY=VALUE (repeatable; see `pliant policies`).
    #[arg(long = "set", value_parser = parse_key_value)]
    pub sets: Vec<(String, String)>,
    /// File holding the API token (at least 16 printable characters), shared
    /// with agents and clients. Default: STATE_DIR/token, generated (mode
    /// 0600) on first start. Required to listen on a non-loopback address.
    #[arg(long)]
    pub token_file: Option<PathBuf>,
}

impl SetupArgs {
    /// The manager's setup, its policies built through `registry`.
    fn setup(self, registry: &Registry) -> ManagerSetup {
        let (state_dir, listen, params, token_file) = (self.state_dir, self.listen, self.sets, self.token_file);
        ManagerSetup { state_dir, listen, params, token_file, registry: registry.clone() }
    }
}

/// The profile of `--policy SPEC`, checked with the `--set` parameters
/// `sets` before anything is written.
fn policy(spec: Option<&str>, sets: &[(String, String)], registry: &Registry) -> Result<Option<Profile>, String> {
    let Some(spec) = spec else { return Ok(None) };
    let profile = pliant_run::policy_spec::resolve("--policy", spec, registry)?;
    pliant_live::stepper::build_policy(registry, &profile, sets).map_err(|e| format!("--policy {spec}: {e}"))?;
    Ok(Some(profile))
}

/// What this node offers, and how long its tasks have to checkpoint.
#[derive(Debug, clap::Args)]
pub struct NodeArgs {
    /// CPU cores this node offers (default: all of them).
    #[arg(long, value_parser = parse_cores)]
    pub cpu: Option<u64>,
    /// Memory this node offers, in MB or with an M or G suffix (default: all of it).
    #[arg(long, value_parser = parse_size_mb)]
    pub mem: Option<u64>,
    /// Seconds a task asked to checkpoint has to save its state and exit 0 before
    /// it is killed and loses its progress (size it to the tasks' state and disk).
    #[arg(long, default_value = "20", value_parser = parse_seconds)]
    pub checkpoint_grace: std::time::Duration,
    /// The most MB each task's stdout and stderr (and any file it writes) may
    /// hold; what comes after is dropped and the output ends with a note
    /// saying so. 0: no cap.
    #[arg(long, default_value = "1024")]
    pub max_log_mb: u64,
    /// One user every task runs as, by name or uid, instead of a uid per
    /// job (--task-uids); tasks run as root only when this says root, and
    /// then without any capability. Jobs run as one user can reach each
    /// other's processes and files. A task run as another user cannot raise
    /// its own limits or leave its cgroup; it finds its checkpoint directory
    /// below the one it starts in. Without root, tasks run as the user
    /// pliant runs as.
    #[arg(long, value_parser = TaskUser::lookup, conflicts_with = "task_uids")]
    pub task_user: Option<TaskUser>,
    /// The uids a daemon run as root runs jobs as, one per job (the job's
    /// group has the same id), as FIRST-LAST; no user or group of the
    /// machine may have one. Give every daemon of a cluster the same range.
    /// Default: 1900000000-1900065535.
    #[arg(long, value_parser = UidRange::parse)]
    pub task_uids: Option<UidRange>,
    /// The most processes and threads each task may hold at once (its
    /// cgroup's `pids.max`; a fork past it fails). 0: no bound.
    #[arg(long, default_value = "4096")]
    pub max_task_pids: u64,
}

impl NodeArgs {
    fn max_log_bytes(&self) -> Option<u64> {
        (self.max_log_mb > 0).then_some(self.max_log_mb << 20)
    }

    fn confinement(&self) -> Result<Confinement, String> {
        let max_pids = (self.max_task_pids > 0).then_some(self.max_task_pids);
        Confinement::for_node(self.task_user.clone(), self.task_uids, max_pids)
    }

    fn offer(&self) -> Offer {
        Offer { cpu_milli: self.cpu, mem_mb: self.mem }
    }
}

/// Options of `pliant local`.
#[derive(Debug, clap::Args)]
pub struct LocalArgs {
    #[command(flatten)]
    setup: SetupArgs,
    /// The policy: a preset (see `pliant policies`), a composition
    /// `NAME=FROM[,STEP=VALUE]...`, or `FILE#NAME` of an experiment file;
    /// default gp where this node has swap and the memory controller, else
    /// kill. Fixed when the journal is created.
    #[arg(long)]
    policy: Option<String>,
    #[command(flatten)]
    node: NodeArgs,
}

/// Options of `pliant serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    setup: SetupArgs,
    /// The policy: a preset (see `pliant policies`), a composition
    /// `NAME=FROM[,STEP=VALUE]...`, or `FILE#NAME` of an experiment file; a
    /// node that cannot carry out its mechanism is refused when it
    /// registers. Default: gp when every node has swap and the memory
    /// controller, else kill. Fixed when the journal is created.
    #[arg(long)]
    policy: Option<String>,
    /// Number of agents a new cluster waits for before it schedules.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    nodes: u64,
    /// Seconds without a heartbeat after which an agent is declared lost and its tasks requeued.
    #[arg(long, default_value = "10", value_parser = parse_seconds)]
    agent_timeout: std::time::Duration,
    /// The uids jobs are given, one each (journaled with the job), as
    /// FIRST-LAST: the agents' --task-uids. Default: 1900000000-1900065535.
    #[arg(long, value_parser = UidRange::parse)]
    task_uids: Option<UidRange>,
    /// File holding the join token (at least 16 printable characters), given
    /// to agents only: a new node joins with it and is issued its own node
    /// credential; it can do nothing else. Default: STATE_DIR/join-token,
    /// generated (mode 0600) on first start.
    #[arg(long)]
    join_token_file: Option<PathBuf>,
}

/// Options of `pliant agent`.
#[derive(Debug, clap::Args)]
pub struct AgentArgs {
    #[command(flatten)]
    manager: ManagerAddress,
    /// File holding the manager's join token, for a node that has not joined
    /// yet (else PLIANT_JOIN_TOKEN, else STATE_DIR/join-token). Once joined,
    /// the agent acts with the node credential it was issued (in --node-dir).
    #[arg(long)]
    join_token_file: Option<PathBuf>,
    /// This node's name in the cluster (default: the host name).
    #[arg(long)]
    name: Option<String>,
    /// Seconds the manager may refuse this agent for good (a wrong credential, an
    /// unknown node name, a node its policy cannot use) before the agent stops
    /// with an error; it retries with a growing pause until then.
    #[arg(long, default_value = "60", value_parser = parse_seconds)]
    give_up_after: std::time::Duration,
    /// This node's own directory (mode 0700): the node credential the
    /// manager issued when it joined (file `credential`, mode 0600; keep it:
    /// only this agent can act as the node, and the join token cannot take
    /// the node over), and its last contact with the manager. Default:
    /// /var/lib/pliant/node-NAME, or /var/lib/pliant/slurm-node-NAME with
    /// --slurm (a node that runs both agents keeps two credentials).
    #[arg(long)]
    node_dir: Option<PathBuf>,
    /// A Slurm node's agent for `pliant slurm` (--manager is the
    /// controller's URL, --state-dir its state directory): it launches
    /// nothing, and reclaims, shrinks and restores the memory of the job
    /// cgroups Slurm's task/cgroup made on this node when the controller
    /// says (--name: the node's Slurm NodeName).
    #[arg(long)]
    slurm: bool,
    #[command(flatten)]
    node: NodeArgs,
}

/// How to reach the manager, and where its API token is.
#[derive(Debug, clap::Args)]
pub struct ManagerUrl {
    #[command(flatten)]
    pub address: ManagerAddress,
    /// File holding the manager's API token (else PLIANT_TOKEN, else STATE_DIR/token).
    #[arg(long)]
    pub token_file: Option<PathBuf>,
}

/// How to reach the manager, and check it is the manager.
#[derive(Debug, clap::Args)]
pub struct ManagerAddress {
    /// The manager's URL.
    #[arg(long = "manager", default_value = DEFAULT_URL)]
    pub url: String,
    /// The manager's state directory, whose token file (an agent's:
    /// join-token) is read when no option or environment variable gives it,
    /// and whose tls/cert.pem is pinned when neither --ca nor PLIANT_CA is
    /// given. Default: /var/lib/pliant for root, else ./pliant-state.
    #[arg(long, default_value_os_t = default_dir())]
    pub state_dir: PathBuf,
    /// The manager's certificate: the fingerprint it prints (`sha256:HEX`)
    /// or a copy of its STATE_DIR/tls/cert.pem. Nothing is sent to a
    /// manager whose certificate is not this one.
    #[arg(long, value_name = "FILE|sha256:HEX")]
    pub ca: Option<String>,
}

/// Options of `pliant submit`.
#[derive(Debug, clap::Args)]
pub struct SubmitArgs {
    #[command(flatten)]
    manager: ManagerUrl,
    /// Queue: short (latency-critical) or long (best effort).
    #[arg(long, default_value = "long", value_parser = ["short", "long"])]
    queue: String,
    /// CPU cores per task (fractions allowed, e.g. 0.5).
    #[arg(long, default_value = "1", value_parser = parse_cores)]
    cpu: u64,
    /// Memory per task, in MB or with an M or G suffix; an elastic task's
    /// ideal memory.
    #[arg(long, default_value = "256M", value_parser = parse_size_mb)]
    mem: u64,
    /// Estimated run time of each task with its full memory, in seconds
    /// (YARN-ME's ideal duration; needed with --penalty).
    #[arg(long, value_parser = parse_seconds)]
    estimate: Option<std::time::Duration>,
    /// Make the tasks elastic: under the `elastic` preset one may start with
    /// less memory than --mem, running up to this many times slower (≥ 1); it
    /// learns its size from PLIANT_MEM_MB. Other presets give it --mem.
    #[arg(long, requires = "estimate")]
    penalty: Option<f64>,
    /// With --penalty: the least memory a task may get, in MB or with an M or
    /// G suffix (default: 10 % of --mem).
    #[arg(long, value_parser = parse_size_mb, requires = "penalty")]
    min_mem: Option<u64>,
    /// Priority 0–11, higher first. Under priority-kill, checkpoint-* and
    /// adaptive-* a task preempts only tasks of lower levels: free 0–1 <
    /// middle 2–8 < production 9–11.
    #[arg(long, default_value_t = 0)]
    priority: u8,
    /// A name for the job (default: the program's name).
    #[arg(long)]
    name: Option<String>,
    /// Number of tasks; each runs COMMAND with PLIANT_TASK set to its index.
    #[arg(long, default_value_t = 1)]
    tasks: u32,
    /// Submit the jobs of this native workload file instead (their phases,
    /// barriers, `local` flags, class, priority, name and task size; every
    /// task runs COMMAND), with their elasticity and run-time estimate (the
    /// longest task's `estimate_s`, else `duration_s`); --queue, --cpu,
    /// --mem, --estimate, --penalty, --min-mem, --priority, --name and --tasks are ignored.
    #[arg(long)]
    workload: Option<PathBuf>,
    /// The command to run, after `--`.
    #[arg(last = true, required = true)]
    command: Vec<String>,
}

/// The API bodies of a native workload file's jobs, each task running `command`.
fn workload_submissions(path: &Path, command: &[String]) -> Result<Vec<serde_json::Value>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: cannot open: {e}", path.display()))?;
    let w = pliant_workload::read_workload(std::io::BufReader::new(file))
        .map_err(|e| format!("{}:{}: {}", path.display(), e.line, e.reason))?;
    w.jobs
        .iter()
        .map(|j| {
            let size = j.tasks().next().map(|t| t.request).expect("a job has a task");
            if j.tasks().any(|t| t.request != size) {
                return Err(format!("{}: job `{}`: live mode runs one task size per job", path.display(), j.name));
            }
            // Live tasks take as long as their command: a file's durations are
            // estimates, and a job has one, its longest.
            let estimate = j.tasks().map(|t| t.estimate.unwrap_or(t.duration)).max().filter(|&us| us > 0);
            let phases: Vec<serde_json::Value> =
                j.phases.iter().map(|p| json!({"tasks": p.tasks.len(), "after": p.deps, "local": p.local})).collect();
            let estimate_s = estimate.map(|us| us as f64 / 1e6);
            let elastic = j.elastic.as_ref().map(|e| elastic_request(&e.estimate)).transpose();
            elastic
                .and_then(|e| pliant_manager::elastic::check(estimate_s, e.as_ref(), size.mem_mb).map(|_| e))
                .map_err(|e| format!("{}: job `{}`: {e}", path.display(), j.name))
                .map(|elastic| {
                    json!({
                        "name": j.name, "queue": j.class, "priority": j.priority, "cpu_milli": size.cpu_milli,
                        "mem_mb": size.mem_mb, "phases": phases, "command": command, "estimate_s": estimate_s,
                        "elastic": elastic,
                    })
                })
        })
        .collect()
}

/// The API's `elastic` object for a native job's elasticity (live mode
/// takes plain max-penalty (step) profiles only, as `--penalty` gives them).
fn elastic_request(e: &Elasticity) -> Result<ElasticRequest, String> {
    match e.profile {
        ElasticityProfile::Step { penalty } => Ok(ElasticRequest { penalty, min_mem_mb: e.min_mem_mb }),
        ElasticityProfile::Sawtooth { .. } | ElasticityProfile::Spill { .. } => {
            Err("live mode takes max-penalty (step) elasticity only".into())
        }
    }
}

/// `pliant node …`.
#[derive(Debug, clap::Subcommand)]
pub enum NodeCommand {
    /// Void a node's credential: whoever holds it can no longer act as the
    /// node. Its agent joins again with the join token (if it has it) and is
    /// issued a new one, which is how a credential is rotated; without the
    /// join token the node is lost after the agent timeout.
    Revoke(RevokeArgs),
}

/// Options of `pliant node revoke`.
#[derive(Debug, clap::Args)]
pub struct RevokeArgs {
    #[command(flatten)]
    manager: ManagerUrl,
    /// The node's name (as `pliant status` and `GET /cluster` show it).
    name: String,
}

/// Options of `pliant status`.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    #[command(flatten)]
    manager: ManagerUrl,
    /// Print the manager's JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Show only this job, with its tasks.
    id: Option<u32>,
}

/// A command about one job.
#[derive(Debug, clap::Args)]
pub struct JobArgs {
    #[command(flatten)]
    manager: ManagerUrl,
    /// The job id.
    id: u32,
}

/// Runs a cluster subcommand; a manager builds its policy through `registry`.
pub fn run(cmd: ManagerCommand, registry: &Registry) -> Result<(), String> {
    match cmd {
        ManagerCommand::Local(a) => {
            let opts = LocalOptions {
                policy: policy(a.policy.as_deref(), &a.setup.sets, registry)?,
                setup: a.setup.setup(registry),
                offer: a.node.offer(),
                checkpoint_grace: a.node.checkpoint_grace,
                max_log_bytes: a.node.max_log_bytes(),
                confinement: a.node.confinement()?,
            };
            run_local(&opts, stop_on_signals(), &|line| eprintln!("pliant local: {line}"))
        }
        ManagerCommand::Serve(a) => {
            let opts = ServeOptions {
                policy: policy(a.policy.as_deref(), &a.setup.sets, registry)?,
                setup: a.setup.setup(registry),
                nodes: a.nodes as usize,
                agent_timeout: a.agent_timeout,
                join_token_file: a.join_token_file,
                task_uids: a.task_uids,
            };
            run_serve(&opts, stop_on_signals(), &|line| eprintln!("pliant serve: {line}"))
        }
        ManagerCommand::Agent(a) => {
            let name = match a.name {
                Some(n) => n,
                None => std::fs::read_to_string("/proc/sys/kernel/hostname")
                    .map(|h| h.trim().to_string())
                    .map_err(|e| format!("cannot read the host name (give --name): {e}"))?,
            };
            let opts = AgentOptions {
                manager: a.manager.url,
                join_token_file: a.join_token_file,
                state_dir: a.manager.state_dir,
                ca: a.manager.ca,
                offer: a.node.offer(),
                checkpoint_grace: a.node.checkpoint_grace,
                max_log_bytes: a.node.max_log_bytes(),
                // Under Slurm, slurmd starts the jobs: the agent launches no task to confine.
                confinement: if a.slurm { Confinement::default() } else { a.node.confinement()? },
                give_up_after: a.give_up_after,
                node_dir: a.node_dir.unwrap_or_else(|| default_node_dir(&name, a.slurm)),
                program: std::env::current_exe().map_err(|e| format!("cannot find the pliant executable: {e}"))?,
                name,
            };
            if a.slurm {
                return pliant_slurm::agent::run(&opts, stop_on_signals(), &|line| eprintln!("pliant agent: {line}"));
            }
            run_agent(&opts, stop_on_signals(), &|line| eprintln!("pliant agent: {line}"))
        }
        ManagerCommand::AgentWatchdog(a) => {
            let layout = pliant_live::cgroup::Layout::detect().map_err(|e| e.to_string())?;
            let contact = pliant_live::fence::Contact::new(a.contact);
            let after = std::time::Duration::from_millis(a.after_ms);
            pliant_live::fence::watch(&layout, &a.cgroup, &contact, after, a.parent, &|line| {
                eprintln!("pliant agent watchdog: {line}")
            });
            Ok(())
        }
        ManagerCommand::Submit(a) if a.workload.is_some() => {
            let path = a.workload.as_ref().expect("matched");
            // Every job is checked before any is sent.
            let bodies = workload_submissions(path, &a.command)?;
            let client = client(&a.manager)?;
            for body in bodies {
                let answer = client.post("/jobs", &body).map_err(|e| e.to_string())?;
                println!("{}", answer["id"]);
            }
            Ok(())
        }
        ManagerCommand::Submit(a) => {
            let body = json!({
                "name": a.name,
                "queue": a.queue,
                "cpu_milli": a.cpu,
                "mem_mb": a.mem,
                "priority": a.priority,
                "tasks": a.tasks,
                "command": a.command,
                "estimate_s": a.estimate.map(|d| d.as_secs_f64()),
                "elastic": a.penalty.map(|penalty| json!({"penalty": penalty, "min_mem_mb": a.min_mem})),
            });
            let answer = client(&a.manager)?.post("/jobs", &body).map_err(|e| e.to_string())?;
            println!("{}", answer["id"]);
            Ok(())
        }
        ManagerCommand::Status(a) => {
            let answer = match a.id {
                Some(id) => client(&a.manager)?.get(&format!("/jobs/{id}")),
                None => client(&a.manager)?.get_all("/jobs"),
            };
            let answer = answer.map_err(|e| e.to_string())?;
            if a.json {
                println!("{}", serde_json::to_string_pretty(&answer).expect("JSON prints"));
            } else if a.id.is_some() {
                print!("{}", jobs_table(std::slice::from_ref(&answer)));
                print!("{}", tasks_table(&answer));
                let choices = client(&a.manager)?.get("/preemptions").map_err(|e| e.to_string())?;
                print!("{}", choices_table(a.id, choices.as_array().map_or(&[][..], |v| v.as_slice())));
            } else {
                let cluster = client(&a.manager)?.get("/cluster").map_err(|e| e.to_string())?;
                if let Some(why) = cluster["not_placing"].as_str() {
                    println!("{}", printable(why));
                }
                print!("{}", jobs_table(answer.as_array().map_or(&[][..], |v| v.as_slice())));
                print!("{}", swap_table(cluster["nodes"].as_array().map_or(&[][..], |v| v.as_slice())));
            }
            Ok(())
        }
        ManagerCommand::Cancel(a) => {
            let answer =
                client(&a.manager)?.post(&format!("/jobs/{}/cancel", a.id), &json!({})).map_err(|e| e.to_string())?;
            println!("job {} {}", a.id, answer["state"].as_str().unwrap_or("?"));
            Ok(())
        }
        ManagerCommand::Node(NodeCommand::Revoke(a)) => {
            let path = format!("/nodes/{}/revoke", a.name);
            client(&a.manager)?.post(&path, &json!({})).map_err(|e| e.to_string())?;
            println!("node {}: credential revoked (its agent must join again with the join token)", a.name);
            Ok(())
        }
        ManagerCommand::Logs(a) => {
            let answer = client(&a.manager)?.get(&format!("/jobs/{}/logs", a.id)).map_err(|e| e.to_string())?;
            let tasks = answer["tasks"].as_array().cloned().unwrap_or_default();
            let many = tasks.len() > 1;
            for t in tasks {
                if many {
                    println!("== task {} ==", t["task"]);
                }
                // Exactly as written into a file or a pipe; written out on a terminal.
                let (out, err) = (t["stdout"].as_str().unwrap_or(""), t["stderr"].as_str().unwrap_or(""));
                if std::io::stdout().is_terminal() {
                    print!("{}", printable_lines(out));
                } else {
                    print!("{out}");
                }
                if std::io::stderr().is_terminal() {
                    eprint!("{}", printable_lines(err));
                } else {
                    eprint!("{err}");
                }
            }
            Ok(())
        }
    }
}

fn client(url: &ManagerUrl) -> Result<Client, String> {
    let address = &url.address;
    let pin = Pin::for_client(address.ca.as_deref(), &address.state_dir)?;
    Ok(Client::new(&address.url, pin).with_token(Token::for_client(url.token_file.as_deref(), &address.state_dir)?))
}

fn secs(us: &Value) -> String {
    us.as_u64().map_or("-".into(), |us| format!("{:.1}", us as f64 / 1e6))
}

/// `text` (a name a job's submitter chose, what a task wrote) safe to print
/// on a terminal: its control characters (escape sequences among them)
/// written as `\u{1b}`.
fn printable(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// `text` (a task's output) safe to print on a terminal: as [`printable`],
/// but for its line breaks and tabs.
fn printable_lines(text: &str) -> String {
    let line = |l: &str| l.split('\t').map(printable).collect::<Vec<_>>().join("\t");
    text.split('\n').map(line).collect::<Vec<_>>().join("\n")
}

fn jobs_table(jobs: &[Value]) -> String {
    let mut out = format!(
        "{:>4}  {:<16} {:<6} {:<10} {:>5} {:>8} {:>8} {:>8}\n",
        "ID", "NAME", "QUEUE", "STATE", "TASKS", "SUBMIT", "START", "END"
    );
    for j in jobs {
        out += &format!(
            "{:>4}  {:<16} {:<6} {:<10} {:>5} {:>8} {:>8} {:>8}\n",
            j["id"].as_u64().unwrap_or(0),
            printable(j["name"].as_str().unwrap_or("?")),
            printable(j["queue"].as_str().unwrap_or("?")),
            printable(j["state"].as_str().unwrap_or("?")),
            j["tasks"].as_array().map_or(0, |t| t.len()),
            secs(&j["submit_us"]),
            secs(&j["first_start_us"]),
            secs(&j["end_us"]),
        );
    }
    out
}

/// Each node's swap rates as the planner prices shrinks there: its own
/// once measured, the policy's marked `(default)` until then.
fn swap_table(nodes: &[Value]) -> String {
    let rate = |r: &Value| {
        let s = r["s_per_gb"].as_f64().map_or("?".to_string(), |s| format!("{s:.2}"));
        match r["from"].as_str() {
            Some("measured") => format!("{s} ({} MB seen)", r["seen_mb"].as_u64().unwrap_or(0)),
            _ => format!("{s} (default)"),
        }
    };
    let mut out = format!("\n{:<16} {:<24} {:<24}\n", "NODE", "RECLAIM S/GB", "RESTORE S/GB");
    for n in nodes {
        let name = printable(n["name"].as_str().unwrap_or("?"));
        out += &format!("{name:<16} {:<24} {:<24}\n", rate(&n["swap"]["reclaim"]), rate(&n["swap"]["restore"]));
    }
    out
}

fn tasks_table(job: &Value) -> String {
    let mut out = format!(
        "\n{:>4}  {:<13} {:>4} {:>8} {:>5} {:>6} {:>7}  {}\n",
        "TASK", "STATE", "NODE", "LAUNCHES", "CKPTS", "EXIT", "MEM_MB", "PREEMPTIONS"
    );
    for t in job["tasks"].as_array().into_iter().flatten() {
        let exit = match (&t["exit_code"], &t["signal"]) {
            (Value::Number(c), _) => c.to_string(),
            (_, Value::Number(s)) => format!("sig{s}"),
            _ => "-".into(),
        };
        let checkpoints = t["checkpoints"].as_u64().unwrap_or(0);
        let state = match t["state"].as_str().unwrap_or("?") {
            _ if t["checkpointing"] == true => "checkpointing",
            "pending" if checkpoints > 0 => "checkpointed",
            other => other,
        };
        // The memory it got at its last start (less than the job's under `elastic`).
        let mem = t["allocated"]["mem_mb"].as_u64().filter(|&m| m > 0).map_or("-".into(), |m| m.to_string());
        out += &format!(
            "{:>4}  {:<13} {:>4} {:>8} {:>5} {:>6} {:>7}  {}\n",
            t["index"].as_u64().unwrap_or(0),
            state,
            t["node"].as_u64().map_or("-".into(), |n| n.to_string()),
            t["launches"].as_u64().unwrap_or(0),
            checkpoints,
            exit,
            mem,
            t["preemptions"],
        );
        // What a task or its agent wrote: never a raw control character to the terminal.
        if let Some(reason) = t["lost_reason"].as_str() {
            out += &format!("      last requeued: {}\n", printable(reason));
        }
        if let Some(tail) = t["stderr_tail"].as_str().filter(|s| !s.is_empty()) {
            let lines: Vec<String> = tail.trim_end().lines().map(printable).collect();
            out += &format!("      stderr: {}\n", lines.join("\n              "));
        }
    }
    out
}

/// Why the job's tasks were preempted: each choice the planner made (only
/// `pliant` chooses per victim) with its cost and its alternatives'.
fn choices_table(job: Option<u32>, choices: &[Value]) -> String {
    let mine: Vec<&Value> = choices.iter().filter(|c| c["job"].as_u64() == job.map(u64::from)).collect();
    if mine.is_empty() {
        return String::new();
    }
    let cost = |e: &Value| {
        format!("{} {:.2}", e["mechanism"].as_str().unwrap_or("?"), e["cost_core_s"].as_f64().unwrap_or(0.0))
    };
    let mut out = "\nPREEMPTIONS (cost in core-seconds: lost + resume + wait; docs/cost-model.md)\n".to_string();
    for c in mine {
        let chosen = &c["chosen"];
        let others: Vec<String> = c["options"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|o| o["mechanism"] != chosen["mechanism"])
            .map(cost)
            .collect();
        out += &format!(
            "  {:>7} s  task {}: {} (takes {} CPU, {} MB; free after {:.2} s) — {}\n",
            secs(&c["at_us"]),
            c["task"],
            cost(chosen),
            chosen["takes"]["cpu_milli"].as_u64().unwrap_or(0) as f64 / 1000.0,
            chosen["takes"]["mem_mb"],
            chosen["free_after_s"].as_f64().unwrap_or(0.0),
            if others.is_empty() { "no other mechanism could help".to_string() } else { others.join(", ") }
        );
    }
    out
}

/// `KEY=VALUE`.
pub(crate) fn parse_key_value(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .ok_or_else(|| format!("`{s}` is not KEY=VALUE"))
}

/// Where an agent keeps its node credential unless told: the pliant
/// manager's agent and a Slurm controller's agent issue separate
/// credentials for the same node name, so each has a directory of its own.
fn default_node_dir(name: &str, slurm: bool) -> PathBuf {
    let kind = if slurm { "slurm-node" } else { "node" };
    PathBuf::from(format!("/var/lib/pliant/{kind}-{name}"))
}

/// Cores (fractions allowed) to millicores.
fn parse_cores(s: &str) -> Result<u64, String> {
    match s.parse::<f64>() {
        Ok(c) if c > 0.0 && c.is_finite() && c <= 1e6 => Ok((c * 1000.0).round().max(1.0) as u64),
        _ => Err(format!("`{s}` is not a positive number of cores")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a task wrote reaches a terminal with its control characters
    /// written out, its lines and tabs kept.
    #[test]
    fn a_task_s_escape_sequences_are_written_out_for_a_terminal() {
        let written = "\x1b]0;title\x07\tcol\r\nnext\x1b[2J\n";
        assert_eq!(printable_lines(written), "\\u{1b}]0;title\\u{7}\tcol\\r\nnext\\u{1b}[2J\n");
        assert_eq!(printable("a\nb"), "a\\nb");
    }

    #[test]
    fn the_task_table_names_checkpoint_states_and_counts() {
        let task = |index: u64, state: &str, checkpointing: bool, checkpoints: u64| {
            serde_json::json!({"index": index, "state": state, "checkpointing": checkpointing,
                "checkpoints": checkpoints, "launches": checkpoints + 1, "node": 0, "preemptions": {}})
        };
        let job = serde_json::json!({"tasks": [
            task(0, "suspended", true, 0),
            task(1, "pending", false, 2),
            task(2, "running", false, 1),
        ]});
        let rows: Vec<Vec<String>> = tasks_table(&job)
            .lines()
            .skip(2)
            .map(|l| l.split_whitespace().take(5).map(String::from).collect())
            .collect();
        assert_eq!(
            rows,
            [
                ["0", "checkpointing", "0", "1", "0"],
                ["1", "checkpointed", "0", "3", "2"],
                ["2", "running", "0", "2", "1"]
            ]
        );
    }

    #[test]
    fn a_job_name_s_escape_sequences_reach_the_terminal_as_text() {
        // A name that would clear the screen and retitle the terminal.
        let job = serde_json::json!({"id": 3, "name": "x\u{1b}[2J\u{1b}]0;owned\u{7}", "queue": "long",
            "state": "running", "tasks": []});
        let table = jobs_table(&[job]);
        assert!(!table.chars().any(|c| c.is_control() && c != '\n'), "{table:?}");
        assert!(table.contains("x\\u{1b}[2J\\u{1b}]0;owned\\u{7}"), "{table}");
    }

    #[test]
    fn the_two_agents_keep_their_credentials_apart_by_default() {
        assert_eq!(default_node_dir("n1", false), PathBuf::from("/var/lib/pliant/node-n1"));
        assert_eq!(default_node_dir("n1", true), PathBuf::from("/var/lib/pliant/slurm-node-n1"));
    }

    #[test]
    fn cores_and_key_values_parse() {
        assert_eq!(parse_cores("0.5"), Ok(500));
        assert_eq!(parse_cores("2"), Ok(2000));
        assert!(parse_cores("0").is_err());
        assert!(parse_cores("lots").is_err());
        assert_eq!(parse_key_value("d=3"), Ok(("d".into(), "3".into())));
        assert!(parse_key_value("d").is_err());
    }
}
