//! pliant on a real two-node Slurm 22.05 cluster (`common::slurm`).

mod common;

use common::slurm::{is_over, Arrangement, SlurmCluster};
use std::time::Duration;

/// The harness gives two real nodes: a job bound to each runs there, under
/// that node's hostname, in that node's cgroups.
#[test]
fn test_cluster_has_two_nodes() {
    let Some(cluster) = SlurmCluster::start("slurm two-node cluster", Arrangement::Pliant) else { return };
    let out = cluster.jobs_dir();
    let ids: Vec<u64> = cluster
        .nodes
        .iter()
        .map(|node| {
            let file = format!("{}/host-{node}.out", out.display());
            cluster.sbatch(&["-w", node, "-o", &file, "--wrap", "hostname; cat /proc/self/cgroup"])
        })
        .collect();
    cluster.wait_until("both jobs to end", Duration::from_secs(30), |c| {
        ids.iter().all(|id| c.job(*id)["job_state"].as_str().is_some_and(is_over))
    });
    for (node, id) in cluster.nodes.iter().zip(&ids) {
        assert_eq!(cluster.job(*id)["job_state"], "COMPLETED");
        let text = std::fs::read_to_string(out.join(format!("host-{node}.out"))).unwrap();
        assert_eq!(text.lines().next(), Some(node.as_str()), "{text}");
        assert!(text.contains(&format!("/slurm_{node}/uid_0/job_{id}/")), "{text}");
    }
}

const PLIANT: &str = env!("CARGO_BIN_EXE_pliant");

/// `pliant slurm` running against a test cluster; killed when dropped.
struct PliantSlurm {
    child: std::process::Child,
    log: std::path::PathBuf,
}

impl PliantSlurm {
    fn start(cluster: &SlurmCluster, policy: &str, state: &std::path::Path) -> PliantSlurm {
        let log = state.with_extension("log");
        let out = std::fs::OpenOptions::new().create(true).append(true).open(&log).unwrap();
        let child = std::process::Command::new(PLIANT)
            .args(["slurm", "--partition", "pliant", "--policy", policy, "--poll-ms", "100"])
            .args(["--set", "monitor_interval_s=0.5", "--state-dir"])
            .arg(state)
            .env("SLURM_CONF", cluster.conf())
            .stdout(std::process::Stdio::null())
            .stderr(out)
            .spawn()
            .unwrap();
        PliantSlurm { child, log }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for PliantSlurm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Submits `pliant dirty --mb MB --passes P` to the pliant partition, held,
/// appending its output to `NAME.out`; the script first writes its start
/// instant (ns since 1970) to `NAME.started`.
fn submit_dirty(
    cluster: &SlurmCluster,
    partition: &str,
    name: &str,
    class: &str,
    mem: u64,
    mb: u64,
    passes: u64,
) -> u64 {
    let dir = cluster.jobs_dir();
    let out = format!("{}/{name}.out", dir.display());
    let script =
        format!("date +%s%N > {}/{name}.started; exec {PLIANT} dirty --mb {mb} --passes {passes}", dir.display());
    let (comment, mem) = (format!("--comment=pliant:{class}"), format!("--mem={mem}"));
    cluster.sbatch(&[
        "--hold",
        "-p",
        partition,
        "-c",
        "1",
        &mem,
        &comment,
        "-o",
        &out,
        "--open-mode=append",
        "--wrap",
        &script,
    ])
}

fn unix_ns() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
}

fn started_ns(cluster: &SlurmCluster, name: &str) -> Option<u64> {
    std::fs::read_to_string(cluster.jobs_dir().join(format!("{name}.started"))).ok()?.trim().parse().ok()
}

fn output(cluster: &SlurmCluster, name: &str) -> String {
    std::fs::read_to_string(cluster.jobs_dir().join(format!("{name}.out"))).unwrap_or_default()
}

fn passes(cluster: &SlurmCluster, name: &str) -> u64 {
    output(cluster, name).lines().rev().find_map(|l| l.strip_prefix("pass ")?.parse().ok()).unwrap_or(0)
}

const LONG_MEM: u64 = 700;
const SHORT_MEM: u64 = 700;
const LONG_PASSES: u64 = 1500;
const SHORT_PASSES: u64 = 40;

/// The BIG-C situation under plain Slurm `SUSPEND,GANG` (the baseline):
/// long jobs hold 700 of each node's 1000 MB; a short job of the
/// higher-priority partition needing 600 MB cannot start until a long job
/// ends, because Slurm keeps a suspended job's memory allocated.
#[test]
fn baseline_suspend_gang_short_job_waits_for_a_long_job_to_end() {
    let Some(cluster) = SlurmCluster::start("slurm baseline SUSPEND,GANG", Arrangement::SuspendGang) else { return };
    let longs: Vec<u64> = (0..2)
        .map(|i| {
            let mem = format!("--mem={LONG_MEM}");
            cluster.sbatch(&[
                "-p",
                "long",
                "-c",
                "1",
                &mem,
                "-o",
                "/dev/null",
                "--wrap",
                &format!("sleep {}", 8 + 4 * i),
            ])
        })
        .collect();
    cluster.wait_until("both long jobs to run", Duration::from_secs(30), |c| {
        longs.iter().all(|id| c.job(*id)["job_state"] == "RUNNING")
    });
    let submitted = unix_ns();
    let mem = format!("--mem={SHORT_MEM}");
    let short = cluster.sbatch(&["-p", "short", "-c", "1", &mem, "-o", "/dev/null", "--wrap", "sleep 1"]);
    cluster.wait_until("the short job to end", Duration::from_secs(60), |c| {
        c.job(short)["job_state"].as_str().is_some_and(is_over)
    });
    let short_job = cluster.job(short);
    let first_long_end = longs.iter().map(|id| cluster.job(*id)["end_time"].as_u64().unwrap()).min().unwrap();
    let start = short_job["start_time"].as_u64().unwrap();
    eprintln!(
        "baseline SUSPEND,GANG: the short job waited {:.1} s; it started at {start}, the first long job ended at {first_long_end}",
        start as f64 - submitted as f64 / 1e9
    );
    assert!(start >= first_long_end, "the short job started at {start}, before a long job ended at {first_long_end}");
    assert_eq!(short_job["job_state"], "COMPLETED");
}

/// What one BIG-C run under pliant measured.
struct BigC {
    waited_s: f64,
    reclaim_s: f64,
    victim_usage_mb: u64,
}

/// The BIG-C situation under pliant: the short job starts within the time
/// its memory took to reclaim + 2 s, the victim's cgroup really gives the
/// memory back, and every long job resumes and finishes with one start.
fn big_c(policy: &str) -> Option<BigC> {
    let scratch = pliant_live::scratch::ScratchDir::new(&format!("pliant-slurm-bigc-{policy}")).unwrap();
    let _swap = match pliant_live::swap::TempSwap::enable(scratch.path(), 1536 << 20) {
        Ok(s) => s,
        Err(e) => {
            common::live::skip(&format!("slurm BIG-C ({policy}): cannot turn on a swap file: {e}"));
            return None;
        }
    };
    let cluster = SlurmCluster::start(&format!("slurm BIG-C ({policy})"), Arrangement::Pliant)?;
    let pliant = PliantSlurm::start(&cluster, policy, &scratch.path().join("state"));
    let longs: Vec<u64> = (0..2)
        .map(|i| submit_dirty(&cluster, "pliant", &format!("long{i}"), "long", LONG_MEM, 500, LONG_PASSES))
        .collect();
    cluster.wait_until("both long jobs to work", Duration::from_secs(60), |c| {
        (0..2).all(|i| passes(c, &format!("long{i}")) >= 10)
    });
    let nodes: Vec<String> = longs.iter().map(|id| cluster.job(*id)["nodes"].as_str().unwrap().to_string()).collect();
    assert_ne!(nodes[0], nodes[1], "pliant put one long job on each node: {nodes:?}\n{}", pliant.log());
    let submitted = unix_ns();
    let short = submit_dirty(&cluster, "pliant", "short", "short", SHORT_MEM, 550, SHORT_PASSES);
    cluster.wait_until("the short job to start", Duration::from_secs(60), |c| started_ns(c, "short").is_some());
    let waited_s = (started_ns(&cluster, "short").unwrap() - submitted) as f64 / 1e9;
    // The victim: suspended in Slurm, its cgroup down to the footprint.
    let log = pliant.log();
    let victim: u64 = log
        .lines()
        .find_map(|l| l.strip_prefix("pliant slurm: job ")?.split_once(" limited to ")?.0.parse().ok())
        .unwrap_or_else(|| panic!("no victim's memory was limited:\n{log}"));
    let reclaim_s: f64 = log
        .lines()
        .filter(|l| l.contains(" limited to "))
        .filter_map(|l| l.rsplit_once(" in ")?.1.strip_suffix(" ms")?.parse::<f64>().ok())
        .sum::<f64>()
        / 1000.0;
    let victim_node = &nodes[longs.iter().position(|id| *id == victim).expect("the victim is a long job")];
    let usage = std::fs::read_to_string(cluster.job_memory_cgroup(victim_node, victim).join("memory.usage_in_bytes"))
        .unwrap()
        .trim()
        .parse::<u64>()
        .unwrap();
    let victim_usage_mb = usage >> 20;
    eprintln!("BIG-C {policy}: short job waited {waited_s:.2} s; reclaim took {reclaim_s:.2} s; victim {victim} holds {victim_usage_mb} MB");
    assert!(
        waited_s <= reclaim_s + 2.0,
        "{policy}: the short job waited {waited_s:.2} s, more than the reclaim ({reclaim_s:.2} s) + 2 s\n{log}"
    );
    assert!(victim_usage_mb <= 64 + 8, "{policy}: victim {victim} still holds {victim_usage_mb} MB\n{log}");
    let mut all = longs.clone();
    all.push(short);
    cluster.wait_until("every job to end", Duration::from_secs(240), |c| {
        all.iter().all(|id| c.job(*id)["job_state"].as_str().is_some_and(is_over))
    });
    for (id, name) in all.iter().zip(["long0", "long1", "short"]) {
        assert_eq!(cluster.job(*id)["job_state"], "COMPLETED", "{name}: {}\n{}", output(&cluster, name), pliant.log());
        let out = output(&cluster, name);
        let starts = out.lines().filter(|l| l.starts_with("start ")).count();
        assert_eq!(starts, 1, "{name} started {starts} times:\n{out}");
        let passes = if name == "short" { SHORT_PASSES } else { LONG_PASSES };
        assert_eq!(out.lines().last(), Some(format!("done {passes}").as_str()), "{name}:\n{out}");
    }
    let log = pliant.log();
    assert!(log.contains(&format!("job {victim} resumed")), "{log}");
    Some(BigC { waited_s, reclaim_s, victim_usage_mb })
}

#[test]
fn big_c_immediate_preemption_frees_the_memory_a_short_job_needs() {
    if let Some(run) = big_c("ip") {
        assert!(run.reclaim_s > 0.0 && run.victim_usage_mb <= 72 && run.waited_s >= 0.0);
    }
}

#[test]
fn big_c_graceful_preemption_frees_the_memory_a_short_job_needs() {
    if let Some(run) = big_c("gp") {
        assert!(run.reclaim_s > 0.0 && run.victim_usage_mb <= 72 && run.waited_s >= 0.0);
    }
}
