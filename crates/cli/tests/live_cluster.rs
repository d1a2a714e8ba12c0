//! Live mode end to end (issue 5, "done when"): `pliant local` with real
//! processes, real cgroups and a real swap file. A long job whose two tasks
//! fill the node's CPU and hold 2 × 200 MB of dirty memory, then a short job
//! that needs that memory:
//! - under `gp` and `ip` the short job starts within the reclaim time of the
//!   memory plus 2 s, the long tasks are shrunk or frozen (never killed), and
//!   the long job finishes with one start per task;
//! - under `kill` the long job visibly restarts;
//! - killing the manager (SIGKILL) in the middle and starting it again keeps
//!   every job and task, and the run completes.
//!
//! The node offers ⟨2 CPU, 600 MB⟩ so that a few hundred MB fill it, and the
//! resource monitor runs every second (BIG-C's 3 s alone could exceed the 2 s
//! bound). Runs under PLIANT_LIVE_TESTS=1 only, and needs root, the cpu,
//! memory and freezer controllers, and swapon (it fails without them).
//!
//! The three runs above hold the live tests' machine lock (swap and memory
//! are machine-wide); the other tests here run sleeping tasks of a few MB
//! without swap, so they run beside them without it.

mod common;

use common::live::{free_port, live_machine, live_without_lock, skip};
use common::local::{dirty, unix_ns, Local};
use pliant_live::cgroup::Layout;
use pliant_live::client::Client;
use pliant_live::dirtier::read_progress;
use pliant_live::scratch::ScratchDir;
use pliant_live::swap::TempSwap;
use pliant_live::tls::Pin;
use pliant_live::token::Token;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

const PLIANT: &str = env!("CARGO_BIN_EXE_pliant");
/// Passes the long tasks make over their 200 MB (several seconds of work);
/// under `gp` and `ip` they stop sooner, once they have made two passes after
/// the short job ended (one whole pass over the memory they got back).
const LONG_PASSES: u64 = 4000;
/// Passes the short task makes over its 300 MB.
const SHORT_PASSES: u64 = 1500;

/// What one run showed.
struct Run {
    long: Value,
    short: Value,
    /// Start lines in each long task's stdout.
    long_starts: Vec<u32>,
    /// Last pass each long task reported.
    long_passes: Vec<u64>,
    /// Each long task's passes when the short job ended (`gp` and `ip`).
    long_passes_after_short: Vec<u64>,
    /// Submission to start of the short job, and the long tasks' reclaim time.
    short_wait: Duration,
    reclaim: Duration,
    jobs_before_restart: Option<Vec<(u64, String)>>,
    jobs_after_restart: Option<Vec<(u64, String)>>,
    /// `/metrics.json` at the end.
    metrics: Value,
    /// What `pliant local` printed.
    log: String,
    /// The policy the manager's journal keeps.
    journaled: pliant_live::stepper::JournaledPolicy,
}

fn jobs_summary(local: &Local) -> Vec<(u64, String)> {
    let jobs = local.client.get("/jobs").unwrap();
    jobs.as_array().unwrap().iter().map(|j| (j["id"].as_u64().unwrap(), j["name"].as_str().unwrap().into())).collect()
}

fn run(policy: &str, restart: bool) -> Option<Run> {
    run_as(policy, policy, restart)
}

/// [`run`] under `--policy spec`, named `policy` (the preset or the
/// composition's name).
fn run_as(policy: &str, spec: &str, restart: bool) -> Option<Run> {
    let _machine = live_machine(&format!("live cluster ({policy})"))?;
    let dir = ScratchDir::new(&format!("pliant-cluster-{policy}")).unwrap();
    let _swap = match TempSwap::enable(dir.path(), 1 << 30) {
        Ok(s) => s,
        Err(e) => {
            skip(&format!("live cluster ({policy}): cannot turn on a swap file: {e}"));
            return None;
        }
    };
    let mut local = Local::start(&dir.path().join("state"), spec, free_port(), &dir.path().join("local.log"));
    let (stop, stops) = (dir.path().join("stop"), policy != "kill");
    let mut long_command = dirty(200, LONG_PASSES);
    if stops {
        long_command.extend(["--until-file".to_string(), stop.to_string_lossy().into_owned()]);
    }
    let long = local.submit(json!({
        "name": "long", "queue": "long", "tasks": 2, "cpu_milli": 1000, "mem_mb": 280, "command": long_command
    }));
    // Both long tasks have dirtied their memory and are working.
    local.wait_until("the long tasks to run", Duration::from_secs(30), |_| {
        (0..2).all(|t| read_progress(&local.stdout(long, t)).passes >= 20)
    });
    // The short task records when its process really started (ns since 1970),
    // independently of the manager's own record.
    let started_file = dir.shared("tasks").unwrap().join("short-started");
    let record_start = format!("date +%s%N > {}; exec \"$@\"", started_file.display());
    let mut command = vec!["/bin/sh".to_string(), "-c".into(), record_start, "short".into()];
    command.extend(dirty(300, SHORT_PASSES));
    let submitted = unix_ns();
    let short = local.submit(json!({
        "name": "short", "queue": "short", "cpu_milli": 1000, "mem_mb": 400, "command": command
    }));
    local.wait_until("the short job to start", Duration::from_secs(30), |c| {
        c.get(&format!("/jobs/{short}")).unwrap()["first_start_us"].is_u64()
    });
    let (mut before, mut after) = (None, None);
    if restart {
        before = Some(jobs_summary(&local));
        local.crash_and_restart();
        after = Some(jobs_summary(&local));
    }
    let mut long_passes_after_short = Vec::new();
    if stops {
        local.wait_until("the short job to end", Duration::from_secs(150), |c| {
            ["finished", "failed", "cancelled"]
                .contains(&c.get(&format!("/jobs/{short}")).unwrap()["state"].as_str().unwrap())
        });
        long_passes_after_short = (0..2).map(|t| read_progress(&local.stdout(long, t)).passes).collect();
        local.wait_until("two more passes of each long task", Duration::from_secs(150), |_| {
            (0..2).all(|t| {
                let now = read_progress(&local.stdout(long, t)).passes;
                now >= (long_passes_after_short[t as usize] + 2).min(LONG_PASSES)
            })
        });
        std::fs::write(&stop, "").unwrap();
    }
    local.wait_for_every_job(Duration::from_secs(150));
    let (long_v, short_v) = (local.job(long), local.job(short));
    let started: u64 = std::fs::read_to_string(&started_file).unwrap().trim().parse().unwrap();
    let short_wait = (started - submitted) / 1000;
    let reclaim_ms: u64 = long_v["tasks"].as_array().unwrap().iter().map(|t| t["reclaim_ms"].as_u64().unwrap()).sum();
    let progress: Vec<_> = (0..2).map(|t| read_progress(&local.stdout(long, t))).collect();
    eprintln!(
        "{policy}: short job waited {:.2} s; long tasks reclaimed {} MB in {:.2} s",
        short_wait as f64 / 1e6,
        long_v["tasks"].as_array().unwrap().iter().map(|t| t["reclaimed_mb"].as_u64().unwrap()).sum::<u64>(),
        reclaim_ms as f64 / 1e3
    );
    check_cli(&local, long, &progress.iter().map(|p| p.passes).collect::<Vec<_>>());
    if std::env::var_os("PLIANT_SHOW_LOG").is_some() {
        eprintln!("{}", local.log_text());
    }
    Some(Run {
        long: long_v,
        short: short_v,
        long_starts: progress.iter().map(|p| p.starts).collect(),
        long_passes: progress.iter().map(|p| p.passes).collect(),
        long_passes_after_short,
        short_wait: Duration::from_micros(short_wait),
        reclaim: Duration::from_millis(reclaim_ms),
        jobs_before_restart: before,
        jobs_after_restart: after,
        metrics: local.client.get("/metrics.json").unwrap(),
        log: local.log_text(),
        journaled: journaled_policy(&local.state),
    })
}

/// The policy the journal in `state` keeps.
fn journaled_policy(state: &Path) -> pliant_live::stepper::JournaledPolicy {
    let journal = pliant_manager::journal::Journal::open(&state.join("journal.sqlite")).unwrap();
    let config: pliant_manager::manager::ClusterConfig = journal.get("config").unwrap().unwrap();
    config.policy
}

/// The CLI against the running manager: output (each long task's last line,
/// `done` at its last pass), and exit code 2 with a message for bad input.
fn check_cli(local: &Local, long: u64, last_passes: &[u64]) {
    let url = format!("https://127.0.0.1:{}", local.port);
    let pliant = |args: &[&str]| {
        let state = ["--manager", &url, "--state-dir", local.state.to_str().unwrap()];
        Command::new(PLIANT).arg(args[0]).args(state).args(&args[1..]).output().unwrap()
    };
    let logs = pliant(&["logs", &long.to_string()]);
    assert!(logs.status.success());
    let stdout = String::from_utf8(logs.stdout).unwrap();
    for passes in last_passes {
        assert!(stdout.lines().any(|l| l == format!("done {passes}")), "{}\n{stdout}", local.job(long));
    }
    let status = String::from_utf8(pliant(&["status", &long.to_string()]).stdout).unwrap();
    assert!(status.lines().nth(1).unwrap().contains("finished"), "{status}");
    let jobs_before = local.client.get("/jobs").unwrap();
    for (args, message) in [
        (&["cancel", "99"][..], "no job 99"),
        (&["logs", "99"][..], "no job 99"),
        (&["submit", "--mem", "100G", "--", "true"][..], "bigger than any node"),
        (&["submit", "--", "/no/such/program"][..], "not an executable"),
    ] {
        let out = pliant(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(message) && !err.contains("panicked"), "{args:?}: {err}");
    }
    assert_eq!(local.client.get("/jobs").unwrap(), jobs_before, "a refused command changed the jobs");
}

fn tasks(job: &Value) -> &Vec<Value> {
    job["tasks"].as_array().unwrap()
}

/// gp and ip: prompt start, no kill, no restart, work and memory intact.
fn check_preserving(r: &Run, mechanism: &str) {
    assert_eq!(r.short["state"], "finished", "{}", r.short);
    assert_eq!(r.long["state"], "finished", "{}", r.long);
    assert!(
        r.short_wait <= r.reclaim + Duration::from_secs(2),
        "short job waited {:?}, more than reclaim {:?} + 2 s; log:\n{}",
        r.short_wait,
        r.reclaim,
        r.log
    );
    for t in tasks(&r.long) {
        assert_eq!(t["launches"], 1, "a long task was started again: {t}");
        assert!(t["preemptions"].get("kill").is_none(), "a long task was killed: {t}");
        // dirty exits 3 if a page came back from swap wrong: exit 0 means memory survived.
        assert_eq!(t["exit_code"], 0, "{t}");
    }
    let preempted: u64 = tasks(&r.long).iter().filter_map(|t| t["preemptions"][mechanism].as_u64()).sum();
    assert!(preempted >= 1, "no long task was preempted by {mechanism}: {}", r.long);
    assert_eq!(r.long_starts, vec![1, 1], "each long task started exactly once");
    // What was freed is what the cgroups gave back: at most the 2 × 200 MB
    // the long tasks dirtied (and a few MB of program), less than their
    // limits dropped by (280 MB each down to a footprint).
    let (freed, booked) = (r.metrics["freed_mb"].as_u64().unwrap(), r.metrics["reclaimed_mb"].as_u64().unwrap());
    assert!(freed > 0 && freed <= 2 * 210 && freed < booked, "freed {freed} MB, limits gave back {booked} MB");
    // Each long task ran on after the short job ended: two passes at least
    // (then it stopped), or all its passes.
    for (t, (end, after_short)) in r.long_passes.iter().zip(&r.long_passes_after_short).enumerate() {
        let least = (after_short + 2).min(LONG_PASSES);
        assert!(*end >= least, "long task {t} ended at pass {end}, {after_short} when the short job ended");
    }
}

#[test]
fn graceful_preemption_shrinks_the_long_job_and_it_never_restarts() {
    if let Some(r) = run("gp", false) {
        check_preserving(&r, "graceful");
    }
}

/// `ip` with BIG-C's graceful mechanism, composed in an experiment file and
/// run by `--policy FILE#NAME`, preserves the long job as `gp` does; the
/// journal keeps the composition resolved (its name, `ip`'s steps and the
/// graceful mechanism), not a preset's name.
#[test]
fn ip_composed_with_the_graceful_mechanism_runs_live_from_an_experiment_file() {
    let dir = ScratchDir::new("pliant-composed-graceful").unwrap();
    let file = dir.path().join("policies.toml");
    let body = "[workload]\nscenario = \"mixed\"\n\n[policies.my-gp]\nfrom = \"ip\"\nmechanism = \"graceful\"\n";
    std::fs::write(&file, body).unwrap();
    let Some(r) = run_as("my-gp", &format!("{}#my-gp", file.display()), false) else { return };
    check_preserving(&r, "graceful");
    let registry = pliant_plugins::registry();
    let profile = registry.compose("my-gp", "ip", &[("mechanism", "graceful")]).unwrap();
    assert_ne!(profile, registry.preset("ip").unwrap(), "the composition is not ip itself");
    assert_eq!(r.journaled, pliant_live::stepper::JournaledPolicy::from(profile));
}

#[test]
fn immediate_preemption_suspends_and_survives_a_manager_crash() {
    let Some(r) = run("ip", true) else { return };
    check_preserving(&r, "immediate");
    let before = r.jobs_before_restart.as_ref().unwrap();
    assert_eq!(before.len(), 2);
    assert_eq!(r.jobs_after_restart.as_ref(), Some(before), "the restarted manager lost or renamed a job");
}

#[test]
fn kill_preemption_restarts_the_long_job() {
    let Some(r) = run("kill", false) else { return };
    assert_eq!(r.short["state"], "finished", "{}", r.short);
    assert_eq!(r.long["state"], "finished", "{}", r.long);
    let killed: Vec<&Value> = tasks(&r.long).iter().filter(|t| t["preemptions"]["kill"].as_u64() >= Some(1)).collect();
    assert!(!killed.is_empty(), "no long task was killed: {}", r.long);
    for t in killed {
        let i = t["index"].as_u64().unwrap() as usize;
        assert!(t["launches"].as_u64().unwrap() >= 2, "{t}");
        assert!(r.long_starts[i] >= 2, "task {i}'s output shows {} start(s)", r.long_starts[i]);
    }
    assert_eq!(r.long_passes, vec![LONG_PASSES, LONG_PASSES]);
}

/// A process started with `args`, killed (SIGKILL unless stopped with SIGTERM first) when dropped.
struct Daemon(Child);

impl Daemon {
    fn start(args: &[&str], log: &Path) -> Daemon {
        let out = std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap();
        Daemon(Command::new(PLIANT).args(args).stdout(Stdio::null()).stderr(out).spawn().unwrap())
    }

    fn kill(mut self) {
        self.0.kill().unwrap();
        self.0.wait().unwrap();
        std::mem::forget(self);
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let _ = self.0.wait();
    }
}

/// `pliant serve` and `pliant agent` as separate processes: an agent killed
/// mid-task is declared lost after the timeout and a margin, by when its
/// watchdog has killed the orphaned run (fencing: it never ends, and no two
/// runs overlap); the task runs again when an agent is back; a manager
/// killed mid-task recovers from its journal and the agent keeps the task running.
#[test]
fn a_lost_agent_s_task_is_rescheduled_and_a_crashed_manager_recovers() {
    if !live_without_lock("serve and agent") {
        return;
    }
    let dir = ScratchDir::new("pliant-serve").unwrap();
    let (state, log, starts) =
        (dir.path().join("state"), dir.path().join("log"), dir.shared("tasks").unwrap().join("starts"));
    let url = format!("https://127.0.0.1:{}", free_port());
    let listen = url.trim_start_matches("https://").to_string();
    let state_arg = state.to_str().unwrap();
    let serve_args =
        ["serve", "--state-dir", state_arg, "--listen", &listen, "--policy", "kill", "--agent-timeout", "2"];
    let name = format!("test-{}", std::process::id());
    // The agent reads the join token the manager generates in its state directory.
    let node_dir = dir.path().join("node");
    let agent_args = [
        "agent",
        "--manager",
        &url,
        "--state-dir",
        state_arg,
        "--name",
        &name,
        "--cpu",
        "2",
        "--mem",
        "1G",
        "--node-dir",
        node_dir.to_str().unwrap(),
    ];
    let mut serve = Daemon::start(&serve_args, &log);
    let agent = Daemon::start(&agent_args, &log);
    let mut client = Client::new(&url, None);
    let wait = |what: &str, done: &dyn Fn() -> bool| {
        let start = Instant::now();
        while !done() {
            let log = std::fs::read_to_string(&log).unwrap_or_default();
            assert!(start.elapsed() < Duration::from_secs(60), "timed out waiting for {what}; log:\n{log}");
            sleep(Duration::from_millis(50));
        }
    };
    wait("the manager's certificate", &|| Pin::for_client(None, &state).unwrap().is_some());
    client.set_pin(Pin::for_client(None, &state).unwrap());
    // Written before the manager listens; every read needs it.
    client.set_token(Token::for_client(None, &state).unwrap());
    wait("the cluster to form", &|| client.get("/cluster").is_ok());
    let script = format!("echo start >> {0}; sleep 8; echo end >> {0}; echo done", starts.display());
    let job = client.post("/jobs", &json!({"command": ["/bin/sh", "-c", script]})).unwrap()["id"].as_u64().unwrap();
    let lines =
        |kind: &str| std::fs::read_to_string(&starts).unwrap_or_default().lines().filter(|l| *l == kind).count();
    let start_lines = || lines("start");
    wait("the task to start", &|| start_lines() == 1);
    agent.kill();
    // The killed agent's task lives on in its cgroup.
    let leftover = Layout::detect().unwrap().open(&format!("pliant-agent-{name}")).expect("the killed agent's cgroup");
    let task_cgroup = leftover.open_child(&format!("job{job}-task0")).expect("its task's cgroup");
    let old_pids = task_cgroup.pids().unwrap();
    // The handles would remove the cgroups when dropped: they are the new agent's to clean.
    std::mem::forget((leftover, task_cgroup));
    assert!(!old_pids.is_empty());
    wait("the agent to be declared lost", &|| std::fs::read_to_string(&log).unwrap().contains("declared lost"));
    // By then (2 s + a 3 s margin) the watchdog has killed the orphaned run
    // (dead, or zombies nobody reaps here), 1.5 s after the timeout: before its end.
    for pid in old_pids {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next());
        assert!(matches!(state, None | Some("Z")), "the orphaned run {pid} still runs when requeued: {stat}");
    }
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("watchdog: no contact with the manager for over 3.5 s: killed"), "{text}");
    assert_eq!(lines("end"), 0, "the orphaned run went on to its end");
    let _agent = Daemon::start(&agent_args, &log);
    wait("the task to start again on the new agent", &|| start_lines() == 2);
    serve.0.kill().unwrap();
    serve.0.wait().unwrap();
    serve = Daemon::start(&serve_args, &log);
    wait("the job to finish", &|| client.get(&format!("/jobs/{job}")).is_ok_and(|j| j["state"] == "finished"));
    let t = client.get(&format!("/jobs/{job}/tasks/0")).unwrap();
    assert_eq!(start_lines(), 2, "the recovered manager must not start the task a third time");
    assert_eq!(lines("end"), 1, "only the second run ended");
    assert_eq!(t["launches"], 2, "{t}");
    assert_eq!(t["exit_code"], 0, "{t}");
    drop(serve);
}

/// Steps the checkpointable task counts, one every 0.1 s.
const COUNT_TO: u64 = 60;

/// A checkpointable task: it counts to [`COUNT_TO`] in memory, saves its
/// count to `$PLIANT_CHECKPOINT_DIR/count` on SIGUSR1 and exits 0, resumes
/// from the saved count on start, and records each start, save and its end
/// in `record` (outside the checkpoint directory, which a fresh start empties).
fn counting_task(record: &Path) -> Vec<String> {
    let script = format!(
        r#"d="$PLIANT_CHECKPOINT_DIR"; r={record}; n=0
[ -f "$d/count" ] && n=$(cat "$d/count")
echo "start $n" >> $r
trap 'echo $n > "$d/count"; echo "saved $n" >> $r; exit 0' USR1
while [ $n -lt {COUNT_TO} ]; do echo $((n += 1)); sleep 0.1; done
echo "done $n" >> $r"#,
        record = record.display()
    );
    vec!["/bin/sh".into(), "-c".into(), script]
}

/// `checkpoint-nvm`: a free-level job (priority 0) whose task fills the
/// node's CPU, then a production job (priority 10) that needs its room. The
/// free task is checkpointed (SIGUSR1, saves, exits 0), not killed; the
/// production job runs; the free task is restored from its checkpoint
/// directory and resumes from the saved count, so no step is done twice and
/// none is lost; both jobs finish, across a manager crash in between.
#[test]
fn checkpoint_preemption_saves_the_free_task_and_restores_it_where_it_stopped() {
    if !live_without_lock("live cluster (checkpoint-nvm)") {
        return;
    }
    let dir = ScratchDir::new("pliant-cluster-ckpt").unwrap();
    let record = dir.shared("tasks").unwrap().join("record");
    let mut local =
        Local::start(&dir.path().join("state"), "checkpoint-nvm", free_port(), &dir.path().join("local.log"));
    let free = local.submit(json!({
        "name": "free", "priority": 0, "cpu_milli": 2000, "mem_mb": 400, "command": counting_task(&record)
    }));
    local.wait_until("the free task to count", Duration::from_secs(20), |_| {
        std::fs::read_to_string(local.stdout(free, 0)).is_ok_and(|s| s.lines().count() >= 10)
    });
    // ⟨1 CPU, 400 MB⟩ does not fit beside ⟨2 CPU, 400 MB⟩ on ⟨2 CPU, 600 MB⟩.
    let prod = local.submit(json!({
        "name": "prod", "priority": 10, "cpu_milli": 1000, "mem_mb": 400, "command": ["sleep", "2"]
    }));
    // Once the free task is checkpointed, the manager crashes and recovers
    // from its journal: the checkpoint and the running production job survive.
    local.wait_until("the free task to be checkpointed", Duration::from_secs(20), |c| {
        c.get(&format!("/jobs/{free}/tasks/0")).unwrap()["checkpoints"] == 1
    });
    local.crash_and_restart();
    assert_eq!(local.job(free)["tasks"][0]["checkpoints"], 1, "the restarted manager forgot the checkpoint");
    local.wait_for_every_job(Duration::from_secs(40));
    let (free_v, prod_v) = (local.job(free), local.job(prod));
    assert_eq!(prod_v["state"], "finished", "{prod_v}");
    assert_eq!(free_v["state"], "finished", "{free_v}");
    let t = &free_v["tasks"][0];
    assert!(t["preemptions"].get("kill").is_none(), "the free task was killed: {t}");
    let checkpoints = t["checkpoints"].as_u64().unwrap();
    assert!(checkpoints >= 1, "the free task was never checkpointed: {t}");
    assert_eq!(t["preemptions"]["checkpoint"], checkpoints, "every checkpoint request was saved: {t}");
    assert_eq!(t["launches"], checkpoints + 1, "one start, then one restore per checkpoint: {t}");
    assert_eq!(t["exit_code"], 0, "{t}");
    // The task's own record: each save is followed by a start from that very count.
    let lines: Vec<String> = std::fs::read_to_string(&record).unwrap().lines().map(String::from).collect();
    let log = local.log_text();
    assert_eq!(lines.len() as u64, 2 + 2 * checkpoints, "{lines:?}; log:\n{log}");
    assert_eq!(lines[0], "start 0");
    assert_eq!(lines.last().unwrap(), &format!("done {COUNT_TO}"));
    for pair in lines[1..lines.len() - 1].chunks(2) {
        let saved: u64 = pair[0].strip_prefix("saved ").expect("a save").parse().unwrap();
        assert!((10..COUNT_TO).contains(&saved), "{lines:?}");
        assert_eq!(pair[1], format!("start {saved}"), "the restored run did not resume from the save: {lines:?}");
    }
    // stdout has every step once: 1..=COUNT_TO across the runs, none repeated.
    let steps: Vec<u64> =
        std::fs::read_to_string(local.stdout(free, 0)).unwrap().lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(steps, (1..=COUNT_TO).collect::<Vec<_>>(), "steps lost or repeated");
    // The production job waited for the dump only, not for the free task to end.
    let prod_start = prod_v["first_start_us"].as_u64().unwrap();
    assert!(prod_start < free_v["end_us"].as_u64().unwrap() - 2_000_000, "{prod_v} {free_v}");
    // `pliant status` shows the count, and the node it ran on: TASK STATE NODE LAUNCHES CKPTS EXIT …
    let url = format!("https://127.0.0.1:{}", local.port);
    let state = local.state.to_str().unwrap();
    let status = Command::new(PLIANT)
        .args(["status", "--manager", &url, "--state-dir", state, &free.to_string()])
        .output()
        .unwrap();
    let status = String::from_utf8(status.stdout).unwrap();
    let row: Vec<&str> =
        status.lines().skip_while(|l| !l.contains("CKPTS")).nth(1).unwrap().split_whitespace().collect();
    assert_eq!(
        row[..6],
        ["0", "finished", "0", &(checkpoints + 1).to_string(), &checkpoints.to_string(), "0"],
        "{status}"
    );
    eprintln!(
        "checkpoint-nvm: free task checkpointed {checkpoints} time(s); production job started {:.2} s after submission",
        (prod_start - prod_v["submit_us"].as_u64().unwrap()) as f64 / 1e6
    );
}

/// Headless Chromium, if installed (Debian's `chromium` package).
fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"].iter().find_map(|name| {
        let found = Command::new("sh").args(["-c", &format!("command -v {name}")]).output().ok()?;
        found.status.success().then(|| PathBuf::from(String::from_utf8_lossy(&found.stdout).trim()))
    })
}

/// Headless Chromium with its profile in `profile`, letting a page's script
/// run for 5 s of virtual time (fetches complete within it).
fn headless(chromium: &Path, profile: &Path) -> Command {
    let mut command = Command::new(chromium);
    command
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--virtual-time-budget=5000"])
        // The manager's certificate is self-signed: the page is what is tested here.
        .arg("--ignore-certificate-errors")
        .arg(format!("--user-data-dir={}", profile.display()));
    command
}

/// The page's DOM as Chromium leaves it after its script has run.
fn rendered_page(chromium: &Path, url: &str, profile: &Path) -> String {
    let mut child = headless(chromium, profile)
        .args(["--dump-dom", url])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut dom = String::new();
        std::io::Read::read_to_string(&mut out, &mut dom).map(|_| dom)
    });
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 90 s");
        }
        sleep(Duration::from_millis(100));
    }
    reader.join().unwrap().unwrap()
}

/// The `<tr>` of the element with `id` in a DOM dump.
fn row<'a>(dom: &'a str, id: &str) -> &'a str {
    let start = dom.find(&format!("<tr id=\"{id}\"")).unwrap_or_else(|| panic!("no row {id} in\n{dom}"));
    let end = dom[start..].find("</tr>").map_or(dom.len(), |e| start + e);
    &dom[start..end]
}

/// The web page in a real browser (issue 14): `pliant local` under `kill`,
/// a long job filling the node's CPU, then a short job that kills it once
/// and finishes. Headless Chromium loads `/` and its script fills the page
/// from the API: without the token, nothing but the request for it; with
/// the token in the link (`/#token=…`), the node with its capacity and
/// allocation, the jobs by state, each job's submission, start, wait and end
/// times and its tasks' exit codes and preemptions (when, by which
/// mechanism) as the API gives them, the last 5 lines of the short job's
/// output (escaped), the finished job still listed, and a cancel button on
/// the job still running; with 22 jobs, the newest 20 and the next page
/// offered. A screenshot of it is copied to the path
/// `PLIANT_WEB_SCREENSHOT` gives (absolute: docs/web-page.png was made so). Needs
/// Chromium (fails without it under PLIANT_LIVE_TESTS=1).
#[test]
fn the_web_page_shows_the_cluster_in_a_browser() {
    if !live_without_lock("web page") {
        return;
    }
    let Some(chromium) = chromium() else {
        skip("web page: no chromium (apt-get install chromium)");
        return;
    };
    let dir = ScratchDir::new("pliant-web").unwrap();
    let local = Local::start(&dir.path().join("state"), "kill", free_port(), &dir.path().join("local.log"));
    let long = local.submit(json!({
        "name": "web-long", "queue": "long", "cpu_milli": 2000, "mem_mb": 100, "command": ["sleep", "60"]
    }));
    local.wait_until("the long job to run", Duration::from_secs(20), |c| {
        c.get(&format!("/jobs/{long}")).unwrap()["state"] == "running"
    });
    let short = local.submit(json!({
        "name": "web-short", "queue": "short", "cpu_milli": 1000, "mem_mb": 100,
        "command": ["sh", "-c", "for i in 1 2 3 4 5 6 7; do echo line $i; done; echo '<b>not bold</b> & done'"]
    }));
    local.wait_until("the short job to finish and the long one to run again", Duration::from_secs(30), |c| {
        let long = c.get(&format!("/jobs/{long}")).unwrap();
        c.get(&format!("/jobs/{short}")).unwrap()["state"] == "finished"
            && long["state"] == "running"
            && long["tasks"][0]["launches"] == 2
    });
    let page = format!("https://127.0.0.1:{}/", local.port);
    let blind = rendered_page(&chromium, &page, &dir.path().join("chromium"));
    assert!(blind.contains("only with its API token") && !blind.contains("web-long"), "{blind}");
    let token = std::fs::read_to_string(dir.path().join("state/token")).unwrap();
    let dom = rendered_page(&chromium, &format!("{page}#token={}", token.trim()), &dir.path().join("chromium"));
    let node = row(&dom, "node-0");
    assert!(node.contains("local") && node.contains("2 / 2 cores") && node.contains("100 / 600 MB"), "{node}");
    let long_row = row(&dom, &format!("job-{long}"));
    assert!(long_row.contains("data-state=\"running\"") && long_row.contains("web-long"), "{long_row}");
    assert!(long_row.contains("#0 running on local · kill×1"), "the long task's state and preemption: {long_row}");
    let short_row = row(&dom, &format!("job-{short}"));
    assert!(short_row.contains("data-state=\"finished\"") && short_row.contains("web-short"), "{short_row}");
    for (state, n) in [("running", 1), ("finished", 1), ("pending", 0)] {
        assert!(dom.contains(&format!("<span class=\"count\" id=\"count-{state}\"><b>{n}</b>")), "{state}: {dom}");
    }
    assert!(long_row.contains("data-cancel"), "no cancel button with the token: {long_row}");
    assert!(!short_row.contains("<button"), "a cancel button on a finished job: {short_row}");
    // The times, waits, exit codes and preemptions are the API's.
    let (l, s) = (local.job(long), local.job(short));
    let secs = |v: &Value| format!("{:.2} s", v.as_u64().unwrap() as f64 / 1e6);
    let waited = |j: &Value| json!(j["first_start_us"].as_u64().unwrap() - j["submit_us"].as_u64().unwrap());
    let cell = |row: &str, name: &str| {
        let start = row.find(&format!("data-{name}=\"\">")).unwrap_or_else(|| panic!("no {name} in {row}"));
        let text = &row[start + name.len() + 9..];
        text[..text.find("</td>").unwrap()].to_string()
    };
    for (row, j) in [(long_row, &l), (short_row, &s)] {
        assert_eq!(cell(row, "submitted"), secs(&j["submit_us"]), "{row}");
        assert_eq!(cell(row, "started"), format!("{} ({})", secs(&j["first_start_us"]), secs(&waited(j))), "{row}");
    }
    assert_eq!(cell(long_row, "ended"), "–", "{long_row}");
    assert_eq!(cell(short_row, "ended"), secs(&s["end_us"]), "{short_row}");
    assert!(short_row.contains("data-task-detail=\"0\">#0: exit 0</span>"), "{short_row}");
    let kill = &l["tasks"][0]["preempted"][0];
    assert_eq!(kill["mechanism"], "kill", "{l}");
    let detail = format!("data-task-detail=\"0\">#0: kill at {}</span>", secs(&kill["at_us"]));
    assert_eq!(l["tasks"][0]["preempted"].as_array().map(Vec::len), Some(1), "{l}");
    assert!(long_row.contains(&detail), "the long task's kill, when: {detail} in {long_row}");
    // The short job's output: its last 5 lines, as text.
    let output = "line 4\nline 5\nline 6\nline 7\n&lt;b&gt;not bold&lt;/b&gt; &amp; done</pre>";
    assert!(short_row.contains(output) && !short_row.contains("line 3"), "{short_row}");
    assert!(dom.contains("<span class=\"muted\" id=\"shown\">1–2 of 2 (newest first)</span>"), "{dom}");
    let shot = dir.path().join("page.png");
    screenshot(&chromium, &format!("{page}#token={}", token.trim()), &dir.path().join("chromium"), &shot);
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "screenshot: {} bytes", png.len());
    if let Ok(to) = std::env::var("PLIANT_WEB_SCREENSHOT") {
        std::fs::copy(&shot, to).unwrap();
    }
    // 20 more jobs, once the long one is cancelled: the page holds the newest 20.
    local.client.post(&format!("/jobs/{long}/cancel"), &json!({})).unwrap();
    let more: Vec<u64> = (0..20)
        .map(|i| {
            local.submit(json!({"name": format!("web-more-{i}"), "cpu_milli": 1000, "mem_mb": 10, "command": ["true"]}))
        })
        .collect();
    local.wait_for_every_job(Duration::from_secs(60));
    let dom = rendered_page(&chromium, &format!("{page}#token={}", token.trim()), &dir.path().join("chromium"));
    assert!(dom.contains("<span class=\"muted\" id=\"shown\">1–20 of 22 (newest first)</span>"), "{dom}");
    for id in &more {
        assert!(row(&dom, &format!("job-{id}")).contains("data-state=\"finished\""), "job {id}: {dom}");
    }
    for id in [long, short] {
        assert!(!dom.contains(&format!("<tr id=\"job-{id}\"")), "job {id} is on the second page: {dom}");
    }
    assert!(dom.contains("<button id=\"older\" type=\"button\">Older</button>"), "the next page is not offered: {dom}");
}

/// A screenshot of the page at `url` into `to`, as Chromium shows it after
/// its script has run.
fn screenshot(chromium: &Path, url: &str, profile: &Path, to: &Path) {
    let status = headless(chromium, profile)
        .args(["--hide-scrollbars", "--window-size=1400,900"])
        .arg(format!("--screenshot={}", to.display()))
        .arg(url)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("start chromium");
    assert!(status.success(), "chromium --screenshot: {status}");
}

/// Issue 12, live: a two-phase job (priority 9; tasks sleep 1, 2, then 3, 4
/// seconds: `PLIANT_TASK` + 1) and a one-task job of priority 0 submitted
/// just after it, on 2 CPUs. Under `ssr` the slot H's task 0 frees at 1 s is
/// kept for its phase 1, so L starts only once H's last phase releases its
/// slots, after H's phase 1 started; under `priority` L takes that slot at
/// 1 s, before H's phase 1 starts (at 2 s).
#[test]
fn ssr_keeps_a_dag_job_slots_across_its_barrier_while_a_lower_job_waits() {
    if !live_without_lock("ssr barrier") {
        return;
    }
    for (policy, lower_waits) in [("ssr", true), ("priority", false)] {
        let dir = ScratchDir::new(&format!("pliant-ssr-barrier-{policy}")).unwrap();
        let local = Local::start(&dir.path().join("state"), policy, free_port(), &dir.path().join("local.log"));
        let sleep_by_index = ["/bin/sh", "-c", "sleep $((PLIANT_TASK + 1))"];
        let high = local.submit(json!({
            "name": "dag", "priority": 9, "cpu_milli": 1000, "mem_mb": 64, "command": sleep_by_index,
            "phases": [{"tasks": 2}, {"tasks": 2, "after": [0], "local": true}]
        }));
        let low = local.submit(json!({
            "name": "low", "priority": 0, "cpu_milli": 1000, "mem_mb": 64, "command": ["/bin/sh", "-c", "sleep 1"]
        }));
        local.wait_for_every_job(Duration::from_secs(60));
        let h = local.job(high);
        let phase_1 =
            tasks(&h)[2]["first_start_us"].as_u64().unwrap().min(tasks(&h)[3]["first_start_us"].as_u64().unwrap());
        let l = local.job(low)["first_start_us"].as_u64().unwrap();
        assert_eq!(l >= phase_1, lower_waits, "{policy}: low started at {l} µs, H's phase 1 at {phase_1} µs");
        assert_eq!(h["state"], "finished", "{policy}: {h}");
    }
}

/// A policy composed in an experiment file (`--policy FILE#NAME`) runs live:
/// `ip` killing its victims takes a node held by a long job back for a short
/// one by a kill; the journal keeps the resolved profile, which a restart
/// (with the same `--policy`) finds the same and rebuilds.
#[test]
fn a_policy_composed_in_an_experiment_file_runs_live_and_its_journal_keeps_its_profile() {
    if !live_without_lock("composed policy") {
        return;
    }
    let dir = ScratchDir::new("pliant-composed-live").unwrap();
    let file = dir.path().join("policies.toml");
    let body = "[workload]\nscenario = \"mixed\"\n\n[policies.ip-kill]\nfrom = \"ip\"\nmechanism = \"kill\"\n";
    std::fs::write(&file, body).unwrap();
    let spec = format!("{}#ip-kill", file.display());
    let state = dir.path().join("state");
    let mut local = Local::start(&state, &spec, free_port(), &dir.path().join("local.log"));
    let long = local.submit(json!({
        "name": "long", "queue": "long", "tasks": 2, "cpu_milli": 1000, "mem_mb": 64,
        "command": ["/bin/sh", "-c", "sleep 60"]
    }));
    local.wait_until("the long tasks to run", Duration::from_secs(30), |c| {
        c.get(&format!("/jobs/{long}")).unwrap()["state"] == "running"
    });
    let short = local.submit(json!({
        "name": "short", "queue": "short", "cpu_milli": 1000, "mem_mb": 64, "command": ["/bin/sh", "-c", "sleep 1"]
    }));
    local.wait_until("the short job to finish", Duration::from_secs(30), |c| {
        c.get(&format!("/jobs/{short}")).unwrap()["state"] == "finished"
    });
    let killed: u64 = tasks(&local.job(long)).iter().map(|t| t["preemptions"]["kill"].as_u64().unwrap_or(0)).sum();
    assert_eq!(killed, 1, "one long task was killed for the short one: {}", local.job(long));
    assert_eq!(local.client.get("/cluster").unwrap()["policy"], "ip-kill");

    local.crash_and_restart();
    assert_eq!(local.client.get("/cluster").unwrap()["policy"], "ip-kill");
    let registry = pliant_plugins::registry();
    let profile = registry.compose("ip-kill", "ip", &[("mechanism", "kill")]).unwrap();
    assert_eq!(journaled_policy(&state), pliant_live::stepper::JournaledPolicy::from(profile));
}
