//! Memory elasticity in live mode (issue 11), end to end with real processes
//! and cgroups, through the CLI: `pliant local` on one node of ⟨2 CPU,
//! 1000 MB⟩. A asks 600 MB for an estimated 100 s and holds it until told;
//! then B, elastic (`--mem 800M --min-mem 300M --penalty 1.5 --estimate 10`),
//! which does not fit in the 400 MB left:
//! - under `elastic` B starts at once under-sized, with YARN-ME's size for a
//!   step profile, its floor: 300 MB. B writes `PLIANT_MEM_MB` and its memory
//!   cgroup (from /proc/self/cgroup); the test reads that cgroup's limit from
//!   /sys/fs/cgroup and `pliant status`'s MEM_MB: all three say 300 MB;
//! - under `yarn` B waits until A ends, then gets 800 MB, seen the same three ways.
//!
//! Bad input (a penalty below 1, a minimum above the ideal, a malformed size,
//! a bad elastic row in a --workload file) exits 2 with the reason and
//! leaves the manager's jobs as they were.

mod common;

use common::error_of;
use common::live::{free_port, live_machine};
use pliant_live::cgroup::Layout;
use pliant_live::scratch::ScratchDir;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

const PLIANT: &str = env!("CARGO_BIN_EXE_pliant");

/// A running `pliant local`, stopped with SIGTERM when dropped.
struct Cluster {
    child: Child,
    state: PathBuf,
    url: String,
    log: PathBuf,
}

impl Cluster {
    fn start(dir: &Path, policy: &str) -> Cluster {
        let (state, log) = (dir.join("state"), dir.join("local.log"));
        let url = format!("https://127.0.0.1:{}", free_port());
        let child = Command::new(PLIANT)
            .args(["local", "--policy", policy, "--cpu", "2", "--mem", "1000M", "--listen"])
            .arg(url.trim_start_matches("https://"))
            .arg("--state-dir")
            .arg(&state)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start pliant local");
        let cluster = Cluster { child, state, url, log };
        cluster.wait_until("the API to answer", || cluster.pliant(&["status"]).status.success());
        cluster
    }

    /// `pliant COMMAND --manager URL --state-dir STATE ARGS…`.
    fn pliant(&self, args: &[&str]) -> Output {
        Command::new(PLIANT)
            .arg(args[0])
            .args(["--manager", &self.url, "--state-dir", self.state.to_str().unwrap()])
            .args(&args[1..])
            .output()
            .unwrap()
    }

    /// Submits with `flags`; returns the job id.
    fn submit(&self, flags: &[&str], script: &str) -> u64 {
        let args: Vec<&str> = ["submit"].iter().chain(flags).chain(&["--", "/bin/sh", "-c", script]).copied().collect();
        let out = self.pliant(&args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().parse().unwrap()
    }

    fn jobs(&self) -> Value {
        serde_json::from_slice(&self.pliant(&["status", "--json"]).stdout).unwrap()
    }

    fn job(&self, id: u64) -> Value {
        serde_json::from_slice(&self.pliant(&["status", "--json", &id.to_string()]).stdout).unwrap()
    }

    /// MEM_MB of task 0 in `pliant status ID`'s task table.
    fn status_mem(&self, id: u64) -> String {
        let table = String::from_utf8(self.pliant(&["status", &id.to_string()]).stdout).unwrap();
        let header: Vec<&str> = table.lines().find(|l| l.contains("MEM_MB")).unwrap().split_whitespace().collect();
        let column = header.iter().position(|&h| h == "MEM_MB").unwrap();
        let row = table.lines().skip_while(|l| !l.contains("MEM_MB")).nth(1).unwrap();
        row.split_whitespace().nth(column).unwrap().to_string()
    }

    fn wait_until(&self, what: &str, done: impl Fn() -> bool) {
        let start = Instant::now();
        while !done() {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            assert!(start.elapsed() < Duration::from_secs(30), "timed out waiting for {what}; log:\n{log}");
            sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
        // A manager killed by a failing test leaves its cgroup: dropping the handle removes it.
        if let Ok(layout) = Layout::detect() {
            drop(layout.open(&pliant_manager::local::cgroup_name(&self.state)));
        }
    }
}

/// A task that waits until `release` exists.
fn wait_for(release: &Path) -> String {
    format!("while [ ! -e {} ]; do sleep 0.05; done", release.display())
}

/// A task that writes `PLIANT_MEM_MB` and its memory cgroup to `out`, then waits for `release`.
fn report_size(out: &Path, release: &Path) -> String {
    let tmp = out.with_extension("tmp");
    format!(
        "{{ echo \"$PLIANT_MEM_MB\"; grep -E '^[0-9]+:memory:' /proc/self/cgroup | cut -d: -f3-; }} > {tmp}; \
         mv {tmp} {out}; {wait}",
        tmp = tmp.display(),
        out = out.display(),
        wait = wait_for(release)
    )
}

/// What the elastic task saw: its PLIANT_MEM_MB and its cgroup's memory limit in MB.
fn seen(out: &Path) -> (u64, u64) {
    let text = std::fs::read_to_string(out).unwrap();
    let mut lines = text.lines();
    let env: u64 = lines.next().unwrap().parse().unwrap();
    let cgroup = lines.next().expect("a memory cgroup line (cgroup v1)");
    let limit_file =
        Path::new("/sys/fs/cgroup/memory").join(cgroup.trim_start_matches('/')).join("memory.limit_in_bytes");
    let bytes: u64 = std::fs::read_to_string(&limit_file).unwrap().trim().parse().unwrap();
    (env, bytes >> 20)
}

const ELASTIC_B: [&str; 8] = ["--mem", "800M", "--min-mem", "300M", "--penalty", "1.5", "--estimate", "10"];

/// Runs A then B under `policy`; returns (B started before A ended, B's
/// PLIANT_MEM_MB, its cgroup limit MB, its status MEM_MB, its API allocation MB).
fn run(policy: &str) -> (bool, u64, u64, String, u64) {
    let dir = ScratchDir::new(&format!("pliant-elastic-live-{policy}")).unwrap();
    let cluster = Cluster::start(dir.path(), policy);
    let tasks = dir.shared("tasks").unwrap();
    let (release_a, release_b, out) = (dir.path().join("a.go"), dir.path().join("b.go"), tasks.join("b.size"));
    let a = cluster.submit(&["--mem", "600M", "--estimate", "100"], &wait_for(&release_a));
    cluster.wait_until("A to run", || cluster.job(a)["state"] == "running");
    let b = cluster.submit(&ELASTIC_B, &report_size(&out, &release_b));
    // B starts now (elastic) or never while A holds its memory (yarn): give it 2 s.
    let started = Instant::now();
    while !out.exists() && started.elapsed() < Duration::from_secs(2) {
        sleep(Duration::from_millis(50));
    }
    let early = out.exists();
    if !early {
        assert_eq!(cluster.job(b)["state"], "pending", "{}", cluster.job(b));
        std::fs::write(&release_a, "").unwrap();
        cluster.wait_until("B to start", || out.exists());
    }
    let (env, limit) = seen(&out);
    let (status_mem, job) = (cluster.status_mem(b), cluster.job(b));
    let allocated = job["tasks"][0]["allocated"]["mem_mb"].as_u64().unwrap();
    std::fs::write(&release_a, "").unwrap();
    std::fs::write(&release_b, "").unwrap();
    cluster.wait_until("both jobs to finish", || {
        cluster.jobs().as_array().unwrap().iter().all(|j| j["state"] == "finished")
    });
    (early, env, limit, status_mem, allocated)
}

#[test]
fn elastic_starts_the_task_under_sized_and_yarn_makes_it_wait() {
    let Some(_machine) = live_machine("live elasticity") else { return };
    assert_eq!(run("elastic"), (true, 300, 300, "300".into(), 300));
    assert_eq!(run("yarn"), (false, 800, 800, "800".into(), 800));
}

/// Bad elastic input through the CLI against a running manager: exit 2 with
/// the reason, and the jobs unchanged.
#[test]
fn bad_elastic_input_exits_2_and_changes_nothing() {
    let Some(_machine) = live_machine("live elasticity, bad input") else { return };
    let dir = ScratchDir::new("pliant-elastic-live-bad").unwrap();
    let cluster = Cluster::start(dir.path(), "elastic");
    cluster.submit(&["--mem", "100M"], "true");
    cluster.wait_until("the first job to finish", || cluster.jobs()[0]["state"] == "finished");
    let before = cluster.jobs();
    let bad_row = dir.path().join("bad.jsonl");
    std::fs::write(
        &bad_row,
        concat!(
            "{\"cluster\":{\"nodes\":[{\"count\":1,\"cpu\":2,\"mem_mb\":1000}]}}\n",
            "{\"job\":{\"submit_s\":0,\"class\":\"long\",\"phases\":[{\"tasks\":[{\"cpu\":1,\"mem_mb\":100,\"duration_s\":1}]}]}}\n",
            "{\"job\":{\"submit_s\":0,\"class\":\"long\",\"elastic\":{\"penalty\":0.5},",
            "\"phases\":[{\"tasks\":[{\"cpu\":1,\"mem_mb\":800,\"duration_s\":5}]}]}}\n",
        ),
    )
    .unwrap();
    let bad_row_message = format!("{}:3: elastic: penalty 0.5 is below 1", bad_row.display());
    let cases: [(Vec<&str>, &str); 5] = [
        (vec!["--mem", "800M", "--penalty", "0.5", "--estimate", "10"], "penalty 0.5 is below 1"),
        (
            vec!["--mem", "800M", "--min-mem", "900M", "--penalty", "1.5", "--estimate", "10"],
            "minimum memory 900 MB is above the ideal memory 800 MB",
        ),
        (vec!["--mem", "4Q"], "`4Q` is not a size"),
        (vec!["--mem", "800M", "--penalty", "1.5"], "--estimate"),
        (vec!["--workload", bad_row.to_str().unwrap()], &bad_row_message),
    ];
    for (flags, message) in cases {
        let args: Vec<&str> = ["submit"].iter().chain(&flags).chain(&["--", "true"]).copied().collect();
        let out = cluster.pliant(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(message) && !err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(cluster.jobs(), before, "{args:?} changed the jobs");
    }
    // A malformed size is refused before any manager is asked.
    assert!(error_of(&["submit", "--min-mem", "1Q", "--penalty", "2", "--estimate", "1", "--", "true"])
        .contains("`1Q` is not a size"));
}
