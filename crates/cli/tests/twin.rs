//! The simulator as the live cluster's twin (issue 26), on real processes:
//! `pliant local` (⟨2 CPU, 600 MB⟩, a real swap file, the monitor every
//! second) runs two long jobs that fill the node's CPU and most of its memory,
//! then four short jobs arriving over them, each needing a CPU a long task
//! holds (and the memory that is free: the agent reports a victim's memory
//! back as its reclaim goes, as the simulator frees it). Every task is the memory-dirtying
//! workload, its passes sized to last about 20 s (long) or 10 s (short) on
//! this machine. `pliant twin STATE_DIR` then replays the run's journal
//! through the simulator, calibrated by `pliant measure --out` on this
//! machine, and again with the papers' defaults:
//! - under `gp` and under `kill` the replay makes the same preemptions (victim
//!   and mechanism, in the same order, each within the monitor period);
//! - each job's JCT is within 15 % of the live one;
//! - the calibration makes the worst JCT error no larger than the defaults do
//!   (by more than 2 points: the rates enter only through resumes here).
//!
//! Needs root, the cpu, memory and freezer controllers and swapon; without
//! them it prints `SKIPPED`, or fails under PLIANT_REQUIRE_LIVE=1.

mod common;

use common::live::{free_port, live_machine, skip};
use common::pliant;
use pliant_live::swap::TempSwap;
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

const PLIANT: &str = env!("CARGO_BIN_EXE_pliant");

/// A running `pliant local`, stopped with SIGTERM when dropped.
struct Local {
    child: Child,
    args: Vec<String>,
}

impl Local {
    fn start(state: &Path, policy: &str, log: &Path) -> Local {
        let url = format!("https://127.0.0.1:{}", free_port());
        let child = Command::new(PLIANT)
            .args(["local", "--policy", policy, "--cpu", "2", "--mem", "600M", "--set", "monitor_interval_s=1"])
            .args(["--listen", url.trim_start_matches("https://"), "--state-dir", state.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .expect("start pliant local");
        let args = vec!["--manager".into(), url, "--state-dir".into(), state.to_str().unwrap().into()];
        let local = Local { child, args };
        local.wait_until("the manager to answer", Duration::from_secs(20), |jobs| jobs.is_some());
        local
    }

    /// `pliant status --json`'s jobs, if the manager answers.
    fn jobs(&self) -> Option<Vec<Value>> {
        let mut args = vec!["status", "--json"];
        args.extend(self.args.iter().map(String::as_str));
        let out = pliant(&args);
        out.status.success().then(|| serde_json::from_slice::<Value>(&out.stdout).ok()?.as_array().cloned()).flatten()
    }

    fn wait_until(&self, what: &str, limit: Duration, done: impl Fn(Option<Vec<Value>>) -> bool) {
        let start = Instant::now();
        while !done(self.jobs()) {
            assert!(start.elapsed() < limit, "timed out waiting for {what}");
            sleep(Duration::from_millis(100));
        }
    }

    /// Submits a one-task job running the dirtier over `mb` MB for `passes` passes.
    fn submit(&self, name: &str, queue: &str, mem: &str, mb: u64, passes: u64) {
        let mut args = vec!["submit", "--queue", queue, "--cpu", "1", "--mem", mem, "--name", name];
        args.extend(self.args.iter().map(String::as_str));
        let (mb, passes) = (mb.to_string(), passes.to_string());
        args.extend(["--", PLIANT, "dirty", "--mb", &mb, "--passes", &passes]);
        let out = pliant(&args);
        assert!(out.status.success(), "submit {name}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

impl Drop for Local {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child; it removes its cgroups on SIGTERM.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

/// Passes per second the dirtier makes over `mb` MB on this machine now, so
/// that the tasks last about as long whatever the machine (the gap between
/// live and replay is a fraction of a second: it must stay small beside a task).
fn passes_per_second(mb: u64) -> f64 {
    let start = Instant::now();
    let out = pliant(&["dirty", "--mb", &mb.to_string(), "--passes", "400"]);
    assert!(out.status.success(), "dirty: {}", String::from_utf8_lossy(&out.stderr));
    400.0 / start.elapsed().as_secs_f64()
}

/// Runs the workload under `policy`; returns the state directory's path.
fn live_run(dir: &Path, policy: &str) -> std::path::PathBuf {
    // About 20 s for a long task, 10 s for a short one, alone on a core: the
    // replay's known gap (below a second: see docs/live.md) stays under 10 %.
    let long_passes = (passes_per_second(150) * 20.0) as u64;
    let short_passes = (passes_per_second(100) * 10.0) as u64;
    let state = dir.join(format!("state-{policy}"));
    let local = Local::start(&state, policy, &dir.join(format!("{policy}.log")));
    for i in 0..2 {
        local.submit(&format!("long-{i}"), "long", "240M", 150, long_passes);
    }
    local.wait_until("both long jobs to run", Duration::from_secs(30), |jobs| {
        jobs.is_some_and(|j| j.iter().filter(|j| j["state"] == "running").count() == 2)
    });
    for i in 0..4 {
        sleep(Duration::from_millis(3000));
        local.submit(&format!("short-{i}"), "short", "120M", 100, short_passes);
    }
    local.wait_until("every job to finish", Duration::from_secs(240), |jobs| {
        jobs.is_some_and(|j| j.len() == 6 && j.iter().all(|j| j["state"] == "finished"))
    });
    state
}

/// `pliant twin STATE --format json [ARGS]`.
fn twin(state: &Path, args: &[&str]) -> Value {
    let mut all = vec!["twin", state.to_str().unwrap(), "--format", "json"];
    all.extend(args);
    let out = pliant(&all);
    assert!(out.status.success(), "twin: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_twin_replays_a_live_run_with_the_same_preemptions() {
    let Some(_lock) = live_machine("twin") else { return };
    let dir = common::temp_dir("twin");
    let swap = match TempSwap::enable(&dir, 1 << 30) {
        Ok(s) => s,
        Err(e) => return skip(&format!("twin: cannot turn on a swap file: {e}")),
    };
    let calibration = dir.join("machine.conf");
    let out = pliant(&["measure", "--sizes", "256M", "--out", calibration.to_str().unwrap()]);
    assert!(out.status.success(), "measure: {}", String::from_utf8_lossy(&out.stderr));

    for policy in ["gp", "kill"] {
        let state = live_run(&dir, policy);
        let table = pliant(&["twin", state.to_str().unwrap(), "--config", calibration.to_str().unwrap()]);
        eprintln!("{}", String::from_utf8_lossy(&table.stdout));
        let calibrated = twin(&state, &["--config", calibration.to_str().unwrap()]);
        let defaults = twin(&state, &[]);
        let worst = |r: &Value| r["worst_jct_error"].as_f64().unwrap();
        let reclaim = |r: &Value| r["exec"]["reclaim_s_per_gb"].as_f64().unwrap();
        let file = std::fs::read_to_string(&calibration).unwrap();
        // (A reclaim that stalled leaves the key out of the file, and the default in force.)
        let expected = if file.contains("reclaim_s_per_gb =") {
            format!("reclaim_s_per_gb = {:.3}", reclaim(&calibrated))
        } else {
            String::new()
        };
        assert!(file.contains(&expected), "{file}");
        assert_eq!(reclaim(&defaults), 3.0, "the replay without --config runs BIG-C's default");
        assert_eq!(calibrated["schema_version"], 1);
        eprintln!(
            "{policy}: worst JCT error {:.3} calibrated, {:.3} with the paper defaults",
            worst(&calibrated),
            worst(&defaults)
        );
        let live_preemptions = calibrated["live_preemptions"].as_array().unwrap();
        assert!(!live_preemptions.is_empty(), "{policy}: the live run preempted nothing");
        assert!(
            calibrated["preemption_divergence"].is_null(),
            "{policy}: the preemptions differ: {}",
            calibrated["preemption_divergence"]
        );
        assert!(worst(&calibrated) <= 0.15, "{policy}: a JCT is {:.1} % off", worst(&calibrated) * 100.0);
        // The rates enter only through resumes here (a second or two of a long
        // job's minute): within 2 points of each other is "not worse".
        assert!(worst(&calibrated) <= worst(&defaults) + 0.02, "{policy}: the calibration made the replay worse");
    }
    drop(swap);
    let _ = std::fs::remove_dir_all(&dir);
}
