//! The example's own `pliant` runs its planner and its mechanism rule live:
//! on a one-node `local` cluster whose two cores a long job of two tasks
//! holds, a short job gets a core by a real preemption — the youngest long
//! task (of two started together, the later in the job) taken as the rule
//! says for an attempt under a minute old, by a kill — and `twin` replays
//! the journal within 10 %. Runs under PLIANT_LIVE_TESTS=1 only (root and
//! cgroups; the tasks sleep in a few MB, so no swap).

use serde_json::Value;
use std::process::{Child, Command, Output, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

const BINARY: &str = env!("CARGO_BIN_EXE_custom-policy");

/// `custom-policy ARGS`.
fn run(args: &[&str]) -> Output {
    Command::new(BINARY).args(args).output().expect("run custom-policy")
}

/// `custom-policy ARGS`, which must succeed, as JSON.
fn json(args: &[&str]) -> Value {
    let out = run(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The manager, stopped with SIGTERM when dropped.
struct Manager(Child);

impl Drop for Manager {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child; it removes its cgroups on SIGTERM.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let _ = self.0.wait();
    }
}

/// Waits for `done`, at most `limit`.
fn wait_until(what: &str, limit: Duration, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        sleep(Duration::from_millis(100));
    }
}

#[test]
fn its_planner_and_rule_preempt_live_and_the_twin_replays_them() {
    if !pliant_xtest::live("custom-policy live") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("custom-policy-live-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("state");
    let state_arg = state.to_str().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port().to_string();
    let listen = format!("127.0.0.1:{port}");
    let log = std::fs::File::create(dir.join("local.log")).unwrap();
    let manager = Manager(
        Command::new(BINARY)
            .args(["local", "--policy", "youngest-first", "--cpu", "2", "--mem", "600M"])
            .args(["--set", "monitor_interval_s=1", "--state-dir", state_arg, "--listen", &listen])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start custom-policy local"),
    );
    let url = format!("https://{listen}");
    let client = ["--manager", url.as_str(), "--state-dir", state_arg];
    let jobs = || run(&[&["status", "--json"][..], &client].concat());
    wait_until("the manager to answer", Duration::from_secs(20), || jobs().status.success());
    // Returns the job's id, which `submit` prints.
    let submit = |queue: &str, tasks: &str, seconds: &str| -> String {
        let sleep = format!("sleep {seconds}");
        let head = ["submit", "--queue", queue, "--cpu", "1", "--mem", "64M", "--tasks", tasks];
        let out = run(&[&head[..], &client, &["--", "/bin/sh", "-c", &sleep]].concat());
        assert!(out.status.success(), "submit: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let job = |id: &str| json(&[&["status", id, "--json"][..], &client].concat());
    let long = submit("long", "2", "6");
    wait_until("the long tasks to run", Duration::from_secs(30), || job(&long)["state"] == "running");
    let short = submit("short", "1", "1");
    wait_until("every job to finish", Duration::from_secs(120), || {
        [&long, &short].iter().all(|id| job(id)["state"] == "finished")
    });
    let long = job(&long);
    let kills: Vec<u64> =
        long["tasks"].as_array().unwrap().iter().map(|t| t["preemptions"]["kill"].as_u64().unwrap_or(0)).collect();
    assert_eq!(kills, [0, 1], "the youngest long task (the later of two started together) was killed: {long}");
    for task in long["tasks"].as_array().unwrap() {
        assert!(task["preemptions"].get("immediate").is_none(), "an attempt under a minute old is killed: {task}");
    }
    assert!(job(&short)["first_start_us"].is_u64(), "the short job was placed");
    drop(manager);

    let twin = json(&["twin", state_arg, "--format", "json"]);
    assert_eq!(twin["policy"], "youngest-first");
    let worst = twin["worst_jct_error"].as_f64().unwrap();
    assert!(worst <= 0.10, "the twin's worst JCT error is {worst}: {twin}");
    std::fs::remove_dir_all(&dir).unwrap();
}
