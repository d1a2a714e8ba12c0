//! Operator traps of live mode (issue 21), through the `pliant` binary:
//! `serve` run from one directory with a relative `--state-dir` sends agents
//! absolute paths; it refuses a node that cannot carry out its policy (and
//! goes on) instead of exiting, and without `--policy` picks one every node
//! can carry out; an agent the manager keeps refusing backs off and stops
//! with a clear error; an agent of a manager killed while it formed its
//! cluster joins the next one. Agents are played over HTTP here except in
//! the tests that run `pliant agent`, which need root and cgroups (they
//! run under PLIANT_LIVE_TESTS=1 only).

mod common;

use common::live::{free_port, live_machine};
use pliant_live::scratch::ScratchDir;
use pliant_live::tls::Pin;
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PLIANT: &str = env!("CARGO_BIN_EXE_pliant");

/// `pliant serve ARGS` run in `dir`, its stderr in `dir/serve.log`; killed when dropped.
struct Serve {
    child: Child,
    url: String,
    /// An HTTPS client pinned to the manager's certificate.
    http: ureq::Agent,
    /// The API token, which every read needs.
    token: String,
}

impl Serve {
    fn start(dir: &Path, args: &[&str]) -> Serve {
        Serve::start_at(dir, free_port(), args)
    }

    /// [`Serve::start`] on `port`.
    fn start_at(dir: &Path, port: u16, args: &[&str]) -> Serve {
        let log_path = dir.join("serve.log");
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&log_path).unwrap();
        let before = log.metadata().unwrap().len() as usize;
        let mut child = Command::new(PLIANT)
            .arg("serve")
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .args(args)
            .current_dir(dir)
            .stderr(log)
            .spawn()
            .unwrap();
        // It says "manager on URL" once it listens. A connection alone would
        // not tell: it may reach another listener, or the client itself.
        let start = Instant::now();
        loop {
            let text = std::fs::read(&log_path).unwrap();
            if String::from_utf8_lossy(&text[before..]).contains("manager on ") {
                break;
            }
            let exited = child.try_wait().unwrap();
            let waited = start.elapsed() > Duration::from_secs(20);
            assert!(
                exited.is_none() && !waited,
                "serve did not listen ({exited:?}):\n{}",
                String::from_utf8_lossy(&text)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        // It made its certificate, in its state directory, before it listened.
        let state = args.iter().position(|a| *a == "--state-dir").map_or("pliant-state", |i| args[i + 1]);
        let pin = Pin::for_client(None, &dir.join(state)).unwrap().expect("the manager's certificate");
        let http = ureq::AgentBuilder::new().tls_config(Pin::client_config(Some(&pin))).build();
        Serve { child, url: format!("https://127.0.0.1:{port}"), http, token: token(&dir.join(state)) }
    }

    /// `POST path` with `token`: status and JSON body.
    fn post(&self, path: &str, token: &str, body: &Value) -> (u16, Value) {
        let request = self.http.post(&format!("{}{path}", self.url)).set("Authorization", &format!("Bearer {token}"));
        match request.send_json(body.clone()) {
            Ok(r) => (r.status(), r.into_json().unwrap()),
            Err(ureq::Error::Status(code, r)) => (code, r.into_json().unwrap()),
            Err(e) => panic!("POST {path}: {e}"),
        }
    }

    fn get(&self, path: &str) -> Value {
        self.try_get(path).unwrap()
    }

    /// `GET path` with the token, if it is answered (the cluster has formed).
    fn try_get(&self, path: &str) -> Option<Value> {
        let request = self.http.get(&format!("{}{path}", self.url));
        Some(request.set("Authorization", &format!("Bearer {}", self.token)).call().ok()?.into_json().unwrap())
    }

    fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A node as an agent registers it: ⟨2 CPU, 1 GB⟩ with `mechanisms`.
fn node(name: &str, mechanisms: &[&str], notes: &[&str]) -> Value {
    json!({"name": name, "capacity": {"cpu_milli": 2000, "mem_mb": 1024}, "mechanisms": mechanisms, "notes": notes})
}

/// The id and agent timeout of a registration's answer, and whether it issued a credential.
fn registered((code, answer): (u16, Value)) -> (u16, Value, Value, bool) {
    (code, answer["node"].clone(), answer["agent_timeout_ms"].clone(), answer["credential"].is_string())
}

const EVERY: [&str; 5] = ["kill", "suspend", "immediate", "graceful", "checkpoint"];

fn token(state: &Path) -> String {
    std::fs::read_to_string(state.join("token")).unwrap().trim().to_string()
}

/// The join token `serve` generated in `state`.
fn join_token(state: &Path) -> String {
    std::fs::read_to_string(state.join("join-token")).unwrap().trim().to_string()
}

#[test]
fn a_relative_state_dir_reaches_agents_as_an_absolute_path() {
    let dir = ScratchDir::new("pliant-traps-relative").unwrap();
    let serve = Serve::start(dir.path(), &["--state-dir", "st", "--policy", "kill"]);
    let state = dir.path().join("st");
    let token = token(&state);
    let (code, answer) = serve.post("/agents/register", &join_token(&state), &node("n0", &EVERY, &[]));
    assert_eq!(registered((code, answer.clone())), (200, json!(0), json!(10_000), true));
    let credential = answer["credential"].as_str().unwrap();
    let (code, _) = serve.post("/jobs", &token, &json!({"command": ["true"], "mem_mb": 64}));
    assert_eq!(code, 201);
    let (code, beat) = serve.post("/agents/0/heartbeat", credential, &json!({"reports": []}));
    assert_eq!(code, 200, "{beat}");
    let launch = beat["ops"].as_array().unwrap().iter().find(|op| op["op"] == "launch").expect("a launch").clone();
    let state = std::fs::canonicalize(&state).unwrap();
    assert_eq!(launch["log_dir"], json!(state.join("logs/job-0/task-0")), "{launch}");
    assert_eq!(launch["checkpoint_dir"], json!(state.join("checkpoints/job-0/task-0")), "{launch}");
}

#[test]
fn serve_refuses_a_node_its_policy_cannot_use_and_goes_on() {
    let dir = ScratchDir::new("pliant-traps-unfit").unwrap();
    let mut serve = Serve::start(dir.path(), &["--state-dir", "st", "--policy", "gp", "--nodes", "2"]);
    let token = join_token(&dir.path().join("st"));
    let no_swap = node("small", &["kill", "suspend"], &["no swap: graceful and immediate preemption cannot work"]);
    let (code, body) = serve.post("/agents/register", &token, &no_swap);
    assert_eq!(code, 409, "{body}");
    let error = body["error"].as_str().unwrap();
    assert!(error.contains("policy `gp` needs graceful preemption, which node `small` cannot do (no swap"), "{error}");
    assert!(serve.running(), "serve exited on an unfit node");
    for (i, name) in ["a", "b"].iter().enumerate() {
        let answer = serve.post("/agents/register", &token, &node(name, &EVERY, &[]));
        assert_eq!(registered(answer), (200, json!(i), json!(10_000), true));
    }
    let start = Instant::now();
    let cluster = loop {
        if let Some(cluster) = serve.try_get("/cluster") {
            break cluster;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "the cluster did not form");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(cluster["policy"], "gp");
    assert!(serve.running());
}

#[test]
fn serve_without_a_policy_picks_one_every_node_can_carry_out() {
    let dir = ScratchDir::new("pliant-traps-default").unwrap();
    let serve = Serve::start(dir.path(), &["--state-dir", "st", "--nodes", "2"]);
    let token = join_token(&dir.path().join("st"));
    serve.post("/agents/register", &token, &node("swapless", &["kill", "suspend", "checkpoint"], &["no swap"]));
    serve.post("/agents/register", &token, &node("full", &EVERY, &[]));
    let start = Instant::now();
    while serve.try_get("/cluster").is_none() {
        assert!(start.elapsed() < Duration::from_secs(10), "the cluster did not form");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(serve.get("/cluster")["policy"], "kill", "gp would need swap on `swapless`");
}

/// A second agent on a one-node cluster: refused (404, no such node) with a
/// growing pause, then it stops with exit code 2 and says why.
#[test]
fn an_agent_refused_for_good_backs_off_and_stops_with_a_clear_error() {
    let Some(_machine) = live_machine("agent give-up") else { return };
    let dir = ScratchDir::new("pliant-traps-giveup").unwrap();
    let serve = Serve::start(dir.path(), &["--state-dir", "st", "--policy", "kill"]);
    let token = join_token(&dir.path().join("st"));
    assert_eq!(serve.post("/agents/register", &token, &node("only", &EVERY, &[])).0, 200);
    let started = Instant::now();
    let out = Command::new(PLIANT)
        .args(["agent", "--manager", &serve.url, "--state-dir", "st", "--name", "extra", "--give-up-after", "3"])
        .args(["--node-dir", "node-extra"])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .output()
        .unwrap();
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no node named `extra`") && err.contains("this agent stops"), "{err}");
    // Pauses of 0.4, 0.8, 1.6, 3.2 s after the first attempt at 0.2 s: at most 5 tries in 3 s.
    let tries = err.matches("registration refused").count();
    assert!((2..=5).contains(&tries), "{tries} tries in {took:?}:\n{err}");
    assert!(took < Duration::from_secs(15), "took {took:?}");
    let leftover = pliant_live::cgroup::Layout::detect().unwrap().open("pliant-agent-extra");
    assert!(leftover.is_none(), "the agent left its cgroup");
}

/// A manager killed while it forms its cluster forgets who had joined: an
/// agent that had joined is told at its next heartbeat to register again
/// (409); its credential is unknown to the new manager (403), and it joins
/// again with the join token. The API token registers no node, and a node's
/// heartbeat waits (503) until the cluster is formed.
#[test]
fn an_agent_of_a_manager_killed_while_forming_joins_the_next() {
    let dir = ScratchDir::new("pliant-traps-reform").unwrap();
    let args = ["--state-dir", "st", "--policy", "kill", "--nodes", "2"];
    let first = Serve::start(dir.path(), &args);
    let join = join_token(&dir.path().join("st"));
    let (code, answer) = first.post("/agents/register", &join, &node("a", &EVERY, &[]));
    assert_eq!(code, 200, "{answer}");
    let credential = answer["credential"].as_str().unwrap().to_string();
    let beat = json!({"reports": []});
    assert_eq!(first.post("/agents/0/heartbeat", &credential, &beat).0, 503, "the cluster is not formed yet");
    drop(first);
    let second = Serve::start(dir.path(), &args);
    assert_eq!(second.post("/agents/0/heartbeat", &credential, &beat).0, 409);
    assert_eq!(second.post("/agents/register", &credential, &node("a", &EVERY, &[])).0, 403);
    let api_token = token(&dir.path().join("st"));
    assert_eq!(second.post("/agents/register", &api_token, &node("a", &EVERY, &[])).0, 403);
    let (code, again) = second.post("/agents/register", &join, &node("a", &EVERY, &[]));
    assert_eq!(code, 200, "{again}");
    let renewed = again["credential"].as_str().unwrap();
    assert_ne!(renewed, credential);
    assert_eq!(second.post("/agents/0/heartbeat", renewed, &beat).0, 503);
}

/// The same, with a real agent: it joins a manager that is killed before
/// the cluster forms, then joins the next one (a new credential in its node
/// directory, mode 0600) and the cluster forms.
#[test]
fn a_real_agent_joins_again_after_its_forming_manager_is_killed() {
    let Some(_machine) = live_machine("agent rejoin") else { return };
    let dir = ScratchDir::new("pliant-traps-rejoin").unwrap();
    let port = free_port();
    let first = Serve::start_at(dir.path(), port, &["--state-dir", "st", "--policy", "kill", "--nodes", "2"]);
    let log = std::fs::File::create(dir.path().join("agent.log")).unwrap();
    let mut agent = Command::new(PLIANT)
        .args(["agent", "--manager", &first.url, "--state-dir", "st", "--name", "rejoin", "--cpu", "1"])
        .args(["--mem", "256M", "--node-dir", "node"])
        .current_dir(dir.path())
        .stderr(log)
        .spawn()
        .unwrap();
    let file = dir.path().join("node/credential");
    let start = Instant::now();
    while !file.exists() {
        assert!(start.elapsed() < Duration::from_secs(30), "the agent did not join");
        std::thread::sleep(Duration::from_millis(50));
    }
    let issued = std::fs::read_to_string(&file).unwrap();
    drop(first);
    let second = Serve::start_at(dir.path(), port, &["--state-dir", "st", "--policy", "kill", "--nodes", "1"]);
    let start = Instant::now();
    let cluster = loop {
        if let Some(cluster) = second.try_get("/cluster") {
            break cluster;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "the cluster did not form");
        std::thread::sleep(Duration::from_millis(100));
    };
    // SIGTERM: the agent removes its cgroup.
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(agent.id() as i32, libc::SIGTERM) };
    agent.wait().unwrap();
    let log = std::fs::read_to_string(dir.path().join("agent.log")).unwrap();
    assert_eq!(cluster["nodes"][0]["name"], "rejoin", "{log}");
    let renewed = std::fs::read_to_string(&file).unwrap();
    assert_ne!(renewed, issued, "{log}");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(log.contains("joining with the join token next"), "{log}");
    let leftover = pliant_live::cgroup::Layout::detect().unwrap().open("pliant-agent-rejoin");
    assert!(leftover.is_none(), "the agent left its cgroup");
}

/// A daemon run as root keeps its state in `/var/lib/pliant` unless
/// `--state-dir` says otherwise (another user: `./pliant-state`), and
/// root's clients and agents look for the token and certificate there.
#[test]
fn root_s_state_directory_is_var_lib_pliant_by_default() {
    // SAFETY: geteuid has no preconditions.
    let expected = if unsafe { libc::geteuid() } == 0 { "/var/lib/pliant" } else { "pliant-state" };
    for command in ["local", "serve", "agent", "status", "submit"] {
        let out = Command::new(PLIANT).args([command, "--help"]).output().unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        let line = help.lines().skip_while(|l| !l.contains("--state-dir")).take(6).collect::<Vec<_>>().join("\n");
        assert!(line.contains(&format!("[default: {expected}]")), "pliant {command} --help:\n{help}");
    }
}
