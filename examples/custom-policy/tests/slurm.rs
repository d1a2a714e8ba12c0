//! The example's own `pliant` as Slurm's brain: `custom-policy slurm` with
//! the example's planner and mechanism rule (`--policy youngest-first`) and
//! one `custom-policy agent --slurm` per node, on a real two-node Slurm
//! cluster whose four cores four long jobs hold. A short job gets a core by
//! a real preemption: the youngest long job (started last, seconds old) is
//! taken as the planner says and killed as the rule says for an attempt
//! under a minute old — a kill is Slurm's requeue — and the short job runs
//! where it ran. `twin` then replays the controller's journal within 10 %,
//! and `what-if` on it ranks the example's policy beside five of pliant's.
//! Runs under PLIANT_LIVE_TESTS=1 only: needs root, cgroups and Slurm 22.05
//! (`slurmctld`, `slurmd`, `munged`), and fails without them then.

use pliant_testbed::live::free_port;
use pliant_testbed::slurm::{is_over, Arrangement, SlurmCluster};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const BINARY: &str = env!("CARGO_BIN_EXE_custom-policy");
/// How long each long job sleeps, once it runs to the end.
const LONG_S: u32 = 25;

/// The controller and the node agents, killed (by their pids) when dropped.
struct Brain {
    children: Vec<Child>,
    log: PathBuf,
}

impl Brain {
    fn start(cluster: &SlurmCluster, state: &Path) -> Brain {
        let address = format!("{}:{}", cluster.gateway(), free_port());
        let log = state.with_extension("log");
        let out = |path: &Path| std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap();
        let controller = Command::new(BINARY)
            .args(["slurm", "--partition", "pliant", "--policy", "youngest-first", "--poll-ms", "100"])
            .args(["--listen", &address, "--set", "monitor_interval_s=0.5", "--state-dir"])
            .arg(state)
            .env("SLURM_CONF", cluster.conf())
            .stdout(Stdio::null())
            .stderr(out(&log))
            .spawn()
            .expect("start custom-policy slurm");
        let mut children = vec![controller];
        for (i, node) in cluster.nodes.iter().enumerate() {
            let agent = cluster
                .on_node(i, BINARY)
                .args(["agent", "--slurm", "--name", node, "--manager", &format!("https://{address}"), "--state-dir"])
                .arg(state)
                .arg("--node-dir")
                .arg(state.with_file_name(format!("node-{node}")))
                .stdout(Stdio::null())
                .stderr(out(&state.with_file_name(format!("agent-{node}.log"))))
                .spawn()
                .expect("start custom-policy agent --slurm");
            children.push(agent);
        }
        Brain { children, log }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Brain {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Submits `NAME` to pliant's partition (one core, 64 MB), which sleeps
/// `seconds`; its output (a `start` line each time it starts) goes to
/// `NAME.out`.
fn submit(cluster: &SlurmCluster, name: &str, queue: &str, seconds: u32) -> u64 {
    let out = cluster.jobs_dir().join(format!("{name}.out"));
    let comment = format!("--comment=pliant:{queue}");
    let script = format!("echo start; sleep {seconds}; echo done");
    let out = out.to_str().unwrap();
    cluster.sbatch(&[
        "-p",
        "pliant",
        "-c",
        "1",
        "--mem=64",
        &comment,
        "-o",
        out,
        "--open-mode=append",
        "--wrap",
        &script,
    ])
}

fn starts(cluster: &SlurmCluster, name: &str) -> usize {
    let out = std::fs::read_to_string(cluster.jobs_dir().join(format!("{name}.out"))).unwrap_or_default();
    out.lines().filter(|l| *l == "start").count()
}

fn state_of(cluster: &SlurmCluster, id: u64) -> String {
    cluster.job(id)["job_state"].as_str().unwrap_or_default().to_string()
}

fn json(args: &[&str]) -> Value {
    let out = Command::new(BINARY).args(args).output().expect("run custom-policy");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn its_planner_and_rule_preempt_through_slurm_and_the_twin_replays_them() {
    let what = "custom-policy on Slurm";
    let Some(cluster) = SlurmCluster::start(what, Arrangement::Pliant) else { return };
    let dir = cluster.jobs_dir().join("pliant");
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("state");
    let brain = Brain::start(&cluster, &state);
    let running = |ids: &[u64]| ids.iter().all(|id| state_of(&cluster, *id) == "RUNNING");

    let mut longs: Vec<u64> = (0..3).map(|i| submit(&cluster, &format!("long{i}"), "long", LONG_S)).collect();
    cluster.wait_until("three long jobs to run", Duration::from_secs(60), |_| running(&longs));
    // The fourth starts seconds after the others: the youngest by far.
    std::thread::sleep(Duration::from_secs(2));
    longs.push(submit(&cluster, "long3", "long", LONG_S));
    cluster.wait_until("the fourth long job to run", Duration::from_secs(60), |_| running(&longs));
    let youngest_node = cluster.job(longs[3])["nodes"].as_str().unwrap().to_string();
    std::thread::sleep(Duration::from_secs(1));

    let short = submit(&cluster, "short", "short", 2);
    let mut all = longs.clone();
    all.push(short);
    cluster
        .wait_until("every job to end", Duration::from_secs(240), |c| all.iter().all(|id| is_over(&state_of(c, *id))));
    let log = brain.log();
    for id in &all {
        assert_eq!(state_of(&cluster, *id), "COMPLETED", "job {id}:\n{log}");
    }
    let started: Vec<usize> = (0..4).map(|i| starts(&cluster, &format!("long{i}"))).collect();
    assert_eq!(started, [1, 1, 1, 2], "the youngest long job alone was killed and ran again:\n{log}");
    assert!(log.contains(&format!("job {} killed: requeued", longs[3])), "a kill is a requeue:\n{log}");
    let ran_on = cluster.job(short)["nodes"].as_str().map(str::to_string);
    assert_eq!(ran_on.as_deref(), Some(youngest_node.as_str()), "the short job ran in the victim's room");
    drop(brain);

    let twin = json(&["twin", state.to_str().unwrap(), "--format", "json"]);
    assert_eq!(twin["policy"], "youngest-first");
    let kills = twin["live_preemptions"].as_array().unwrap();
    assert_eq!(kills.len(), 1, "one preemption live: {twin}");
    assert_eq!(twin["sim_preemptions"].as_array().unwrap().len(), 1, "and one in the replay: {twin}");
    let worst = twin["worst_jct_error"].as_f64().unwrap();
    eprintln!("custom-policy on Slurm: the twin's worst JCT error {:.1} %", worst * 100.0);
    assert!(worst <= 0.10, "the twin's worst JCT error is {worst}: {twin}");

    // What-if on the same journal: the example's policy beside five of
    // pliant's, the one that ran first and replayed as the twin replayed it.
    let policies = "youngest-first,fifo,kill,ip,gp,pliant";
    let what_if = json(&["what-if", state.to_str().unwrap(), "--policies", policies, "--format", "json"]);
    let rows: Vec<&str> =
        what_if["results"].as_array().unwrap().iter().map(|r| r["policy"].as_str().unwrap()).collect();
    assert_eq!(rows, policies.split(',').collect::<Vec<_>>(), "{what_if}");
    assert_eq!(what_if["what_if"]["ranking"].as_array().unwrap().len(), 6, "{what_if}");
    assert_eq!(what_if["what_if"]["policy_ran"], "youngest-first");
    let band = what_if["what_if"]["band_worst_jct_error"].as_f64().unwrap();
    assert!((band - worst).abs() < 1e-9, "what-if's band {band} is not the twin's {worst}");
}
