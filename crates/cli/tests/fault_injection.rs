//! Fault injection (issues 14 and 21): `pliant serve` and two `pliant agent`s
//! as separate processes run a busy `kill` cluster — long jobs fill the
//! nodes, short jobs preempt them — while the test SIGKILLs the manager 20
//! times and the agents 20 times (either one, seeded) at seeded random
//! points, restarting each at once. Afterwards:
//! - every job finished, and a job seen ended never ends again differently
//!   (checked after every restart);
//! - no task ran twice when it should not (from the tasks' own start log,
//!   not the manager's view): a task no preemption killed started exactly
//!   once, any other at most once more per kill; each completed once (or
//!   once more per kill: a kill decided just as the run ended), and no two
//!   runs of a task were ever alive together (each run holds a lock file);
//! - once every job has ended, no agent holds a task cgroup and no task
//!   process runs; once the agents and the manager are stopped, no cgroup,
//!   swap file, task process or agent watchdog is left.
//!
//! Everything goes through the `pliant` binary, run from a scratch directory
//! that holds the state directory (`pliant-state`, as a user other than
//! root has it by default), as an operator would. PLIANT_FAULT_SEED picks another seed. Runs under
//! PLIANT_LIVE_TESTS=1 only, and needs root and the cpu, memory and freezer
//! controllers (it fails without them).

mod common;

use common::live::{free_port, live_machine};
use pliant_live::cgroup::Layout;
use pliant_live::scratch::ScratchDir;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

const PLIANT: &str = env!("CARGO_BIN_EXE_pliant");
/// SIGKILLs of each process.
const KILLS: usize = 20;
/// Jobs submitted, one before each of the first kills.
const JOBS: usize = 14;

/// A `pliant` daemon started from the scratch directory; SIGTERMed when dropped.
struct Daemon(Child);

impl Daemon {
    /// SIGKILL, and reap.
    fn kill(&mut self) {
        self.0.kill().unwrap();
        self.0.wait().unwrap();
    }

    /// SIGTERM once it catches SIGTERM, and wait for it to exit. (Sent
    /// before its handler is set, SIGTERM kills it as SIGKILL would, and an
    /// agent just restarted then leaves its predecessor's cgroup behind.)
    fn stop(&mut self) {
        let start = Instant::now();
        while !catches_sigterm(self.0.id()) && start.elapsed() < Duration::from_secs(10) {
            if !matches!(self.0.try_wait(), Ok(None)) {
                return;
            }
            sleep(Duration::from_millis(5));
        }
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let _ = self.0.wait();
    }
}

/// True when process `pid` has a handler for SIGTERM (`SigCgt` in its status).
fn catches_sigterm(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let caught = status.lines().find_map(|l| l.strip_prefix("SigCgt:"));
    caught.and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok()).is_some_and(|m| m >> (libc::SIGTERM - 1) & 1 == 1)
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Agents in the cluster.
const AGENTS: usize = 2;

/// The scratch directory, the manager's URL and the agents' names.
/// The state directory every command names: `pliant-state` in the scratch
/// directory (root's default is `/var/lib/pliant`).
const STATE: [&str; 2] = ["--state-dir", "pliant-state"];

struct Cluster {
    dir: PathBuf,
    log: PathBuf,
    url: String,
    agent_names: Vec<String>,
}

impl Cluster {
    fn daemon(&self, args: &[&str]) -> Daemon {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&self.log).unwrap();
        let mut cmd = Command::new(PLIANT);
        cmd.arg(args[0]).args(STATE).args(&args[1..]).current_dir(&self.dir).stdout(Stdio::null()).stderr(log);
        Daemon(cmd.spawn().unwrap())
    }

    /// The manager: `kill` (work-conserving queues; kills to give the short
    /// queue its share), the monitor every second, the default state directory.
    fn serve(&self) -> Daemon {
        let listen = self.url.trim_start_matches("https://");
        let args = ["serve", "--listen", listen, "--policy", "kill", "--agent-timeout", "10", "--nodes", "2"];
        self.daemon(&[&args[..], &["--set", "monitor_interval_s=1"]].concat())
    }

    /// Agent `i`: a node of ⟨2 CPU, 1 GB⟩, its node directory in the scratch directory.
    fn agent(&self, i: usize) -> Daemon {
        let (name, node_dir) = (&self.agent_names[i], format!("node-{i}"));
        self.daemon(&[
            "agent",
            "--manager",
            &self.url,
            "--name",
            name,
            "--cpu",
            "2",
            "--mem",
            "1G",
            "--node-dir",
            &node_dir,
        ])
    }

    /// `pliant ARGS` against the manager, from the scratch directory.
    fn cli(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new(PLIANT);
        cmd.arg(args[0]).args(["--manager", &self.url]).args(STATE).args(&args[1..]).current_dir(&self.dir);
        cmd.output().unwrap()
    }

    /// Every job, or `None` while the manager does not answer.
    fn jobs(&self) -> Option<Vec<Value>> {
        let out = self.cli(&["status", "--json"]);
        out.status.success().then(|| serde_json::from_slice::<Value>(&out.stdout).unwrap().as_array().unwrap().clone())
    }

    fn wait_until<T>(&self, what: &str, limit: Duration, mut done: impl FnMut() -> Option<T>) -> T {
        let start = Instant::now();
        loop {
            if let Some(v) = done() {
                return v;
            }
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            assert!(start.elapsed() < limit, "timed out waiting for {what}; log:\n{log}");
            sleep(Duration::from_millis(50));
        }
    }

    /// A task that records its start and its end in `runs`, and holds a lock
    /// on its own file in `locks` while it runs: a second run of the same task
    /// that finds the lock taken records an overlap.
    fn task_script(&self, seconds: f64) -> String {
        let (runs, locks) = (self.dir.join("runs/runs"), self.dir.join("locks"));
        format!(
            r#"id="$PLIANT_JOB-$PLIANT_TASK"; exec 9>>"{locks}/$id"
flock -n 9 || echo "overlap $id" >> {runs}
echo "start $id" >> {runs}; sleep {seconds}; echo "end $id" >> {runs}"#,
            locks = locks.display(),
            runs = runs.display()
        )
    }

    /// Submits a job (the manager is up, so it is taken exactly once); returns its id.
    fn submit(&self, queue: &str, tasks: u32, seconds: f64) -> u64 {
        let tasks = tasks.to_string();
        let script = self.task_script(seconds);
        let args = ["submit", "--queue", queue, "--cpu", "1", "--mem", "64M", "--tasks", &tasks, "--name", queue];
        let out = self.cli(&[&args[..], &["--", "/bin/sh", "-c", &script]].concat());
        assert!(out.status.success(), "submit: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().parse().unwrap()
    }
}

/// Which process a kill point hits.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Target {
    Manager,
    Agent,
}

/// Jobs seen ended, with how and when: a job must end once and stay so.
#[derive(Default)]
struct Ended(BTreeMap<u64, (String, u64)>);

impl Ended {
    fn check(&mut self, jobs: &[Value], after: &str) {
        for j in jobs {
            let id = j["id"].as_u64().unwrap();
            let state = j["state"].as_str().unwrap().to_string();
            let end = j["end_us"].as_u64();
            match (self.0.get(&id), end) {
                (Some(seen), Some(end)) => {
                    assert_eq!(seen, &(state, end), "job {id} ended twice (seen again {after}): {j}")
                }
                (Some(seen), None) => panic!("job {id} had ended {seen:?} and is {state} again {after}: {j}"),
                (None, Some(end)) => {
                    self.0.insert(id, (state, end));
                }
                (None, None) => {}
            }
        }
    }
}

/// Lines of `runs` per kind (`start`, `end`, `overlap`) and task (`J-T`).
fn run_counts(runs: &Path) -> BTreeMap<(String, String), u64> {
    let mut counts = BTreeMap::new();
    for line in std::fs::read_to_string(runs).unwrap_or_default().lines() {
        let (kind, id) = line.split_once(' ').unwrap();
        *counts.entry((kind.to_string(), id.to_string())).or_insert(0) += 1;
    }
    counts
}

/// Live processes (not zombies) whose command line mentions `marker`.
fn processes_mentioning(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let path = entry.path();
        let Ok(cmdline) = std::fs::read(path.join("cmdline")) else { continue };
        if !String::from_utf8_lossy(&cmdline).contains(marker) {
            continue;
        }
        let stat = std::fs::read_to_string(path.join("stat")).unwrap_or_default();
        let state = stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next());
        if !matches!(state, None | Some("Z")) {
            found.push(format!("{}: {}", path.display(), String::from_utf8_lossy(&cmdline).replace('\0', " ")));
        }
    }
    found
}

#[test]
fn manager_and_agent_survive_sigkill_at_random_points() {
    let Some(_machine) = live_machine("fault injection") else { return };
    let seed: u64 = std::env::var("PLIANT_FAULT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(14);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let scratch = ScratchDir::new("pliant-faults").unwrap();
    let dir = scratch.path();
    for shared in ["runs", "locks"] {
        scratch.shared(shared).unwrap();
    }
    // Every job runs as a uid of its own: the record they all append to is
    // made beforehand, writable by all.
    let runs = dir.join("runs/runs");
    std::fs::write(&runs, "").unwrap();
    std::fs::set_permissions(&runs, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
    let cluster = Cluster {
        dir: dir.into(),
        log: dir.join("daemons.log"),
        url: format!("https://127.0.0.1:{}", free_port()),
        agent_names: (0..AGENTS).map(|i| format!("faults-{}-{i}", std::process::id())).collect(),
    };
    let started = Instant::now();
    let mut serve = cluster.serve();
    let mut agents: Vec<Daemon> = (0..AGENTS).map(|i| cluster.agent(i)).collect();
    let limit = Duration::from_secs(20);
    cluster.wait_until("the cluster to form", limit, || cluster.jobs());
    let mut targets = [[Target::Manager; KILLS], [Target::Agent; KILLS]].concat();
    targets.shuffle(&mut rng);
    let mut ended = Ended::default();
    let mut jobs = Vec::new();
    for (i, &target) in targets.iter().enumerate() {
        if i < JOBS {
            // Long jobs of two 3 s tasks fill the node; short 1 s jobs preempt them.
            jobs.push(if rng.gen_bool(0.5) { cluster.submit("long", 2, 3.0) } else { cluster.submit("short", 1, 1.0) });
        }
        sleep(Duration::from_millis(rng.gen_range(50..1200)));
        match target {
            Target::Manager => {
                serve.kill();
                serve = cluster.serve();
            }
            Target::Agent => {
                let i = rng.gen_range(0..AGENTS);
                agents[i].kill();
                agents[i] = cluster.agent(i);
            }
        }
        let now = cluster.wait_until("the manager to answer", limit, || cluster.jobs());
        ended.check(&now, &format!("after kill {} ({target:?})", i + 1));
    }
    let last = cluster.wait_until("every job to end", Duration::from_secs(60), || {
        let now = cluster.jobs()?;
        now.iter().all(|j| j["end_us"].is_u64()).then_some(now)
    });
    ended.check(&last, "at the end");
    let took = started.elapsed();
    // Every job has ended: no agent holds a task cgroup and no task runs,
    // whatever their killed predecessors left.
    let layout = Layout::detect().unwrap();
    let tops: Vec<String> = cluster.agent_names.iter().map(|n| format!("pliant-agent-{n}")).collect();
    let mut task_cgroups = Vec::new();
    for top in &tops {
        let agent_cgroup = layout.open(top).expect("a running agent's cgroup");
        // An ended task's cgroup goes once its report is through: give the agent a few heartbeats.
        let settled = Instant::now();
        let mut children = agent_cgroup.children().unwrap();
        while !children.is_empty() && settled.elapsed() < Duration::from_secs(3) {
            sleep(Duration::from_millis(100));
            children = agent_cgroup.children().unwrap();
        }
        std::mem::forget(agent_cgroup); // the running agent's to remove
        task_cgroups.extend(children.into_iter().map(|c| format!("{top}/{c}")));
    }
    // The running agents' watchdogs are not tasks.
    let running: Vec<String> = processes_mentioning(&dir.display().to_string())
        .into_iter()
        .filter(|p| !p.contains("agent-watchdog"))
        .collect();
    for agent in &mut agents {
        agent.stop();
    }
    serve.stop();
    let log = std::fs::read_to_string(&cluster.log).unwrap_or_default();

    // Each submission made one job; every job finished.
    assert_eq!(jobs, (0..JOBS as u64).collect::<Vec<_>>());
    assert_eq!(last.len(), JOBS, "{last:?}");
    let runs = run_counts(&dir.join("runs/runs"));
    let count = |kind: &str, id: &str| runs.get(&(kind.to_string(), id.to_string())).copied().unwrap_or(0);
    let (mut tasks, mut starts, mut kills, mut duplicates, mut raced) = (0, 0, 0, 0, 0);
    let mut wrong = Vec::new();
    for j in &last {
        assert_eq!(j["state"], "finished", "{j}\nlog:\n{log}");
        for t in j["tasks"].as_array().unwrap() {
            let id = format!("{}-{}", j["id"], t["index"]);
            let killed = t["preemptions"]["kill"].as_u64().unwrap_or(0);
            let (started, ends, overlaps) = (count("start", &id), count("end", &id), count("overlap", &id));
            // A run killed by a preemption decided just as it ended has
            // ended too (the manager had not heard of it yet), so a task may
            // end once more per kill; never more, never zero times.
            let extra = started.saturating_sub(1 + killed) + ends.saturating_sub(1 + killed) + overlaps;
            raced += ends.saturating_sub(1).min(killed);
            if extra > 0 || ends == 0 || started == 0 {
                wrong.push(format!(
                    "task {id}: {started} starts, {ends} ends, {overlaps} overlaps, {killed} kills: {t}"
                ));
            }
            duplicates += extra;
            tasks += 1;
            starts += started;
            kills += killed;
        }
    }
    let known = |id: &str| last.iter().any(|j| id.starts_with(&format!("{}-", j["id"])));
    let unknown: Vec<_> = runs.keys().filter(|(_, id)| !known(id)).collect();
    assert!(unknown.is_empty(), "runs of tasks the manager does not know: {unknown:?}");

    // Nothing left behind once the agents stopped: their cgroups, task
    // processes, watchdogs, swap files.
    let cgroups: Vec<_> = tops.iter().filter_map(|top| layout.open(top)).collect();
    let cgroup_left = !cgroups.is_empty();
    drop(cgroups); // removes them (and what runs in them) if the agents did not
    let processes = processes_mentioning(&dir.display().to_string());
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap();
    let swap_files: Vec<&str> = swaps.lines().filter(|l| l.contains(&*dir.to_string_lossy())).collect();
    let leftovers = task_cgroups.len() + running.len() + usize::from(cgroup_left) + processes.len() + swap_files.len();
    eprintln!(
        "fault injection (seed {seed}): survived {KILLS} manager and {KILLS} agent SIGKILLs in {:.1} s; \
         {AGENTS} agents, {JOBS} jobs, {tasks} tasks finished, {starts} runs, {kills} kill preemptions ({raced} of a run as it \
         ended), {duplicates} duplicate runs, {leftovers} leftovers",
        took.as_secs_f64()
    );
    assert!(wrong.is_empty(), "tasks ran more often than they should:\n{}\nlog:\n{log}", wrong.join("\n"));
    assert!(task_cgroups.is_empty(), "task cgroups left after every job ended: {task_cgroups:?}");
    assert!(running.is_empty(), "task processes left after every job ended: {running:?}");
    assert!(!cgroup_left, "an agent's cgroup was left behind");
    assert!(processes.is_empty(), "task processes or watchdogs left behind: {processes:?}");
    assert!(swap_files.is_empty(), "swap files left behind: {swap_files:?}");
    let restarts = log.matches("recovered").count();
    assert_eq!(restarts, KILLS, "each manager restart recovers the journal; log:\n{log}");
}
