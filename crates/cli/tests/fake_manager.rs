//! A fake manager (issue 21): while the manager is down, an unprivileged
//! process listening on its address — a TLS server with a certificate of
//! its own that prints whatever it is sent (`openssl s_server`, run as
//! `nobody`) — receives no credential from an agent (neither the node
//! credential of one that has joined nor the join token of one that has
//! not), the CLI or a `pliant submit`: they pin the manager's certificate
//! and stop at the handshake. The same fake does receive what a client that checks nothing
//! (`curl -k`) sends it, so the test can fail. Runs under
//! PLIANT_LIVE_TESTS=1 only, and needs root (the agent), `openssl`, `setpriv`
//! and `curl` (it fails without them).

mod common;

use common::live::{free_port, live_machine, skip};
use pliant_live::scratch::ScratchDir;
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

const PLIANT: &str = env!("CARGO_BIN_EXE_pliant");
/// The state directory every command names, in the scratch directory
/// (root's default is `/var/lib/pliant`).
const STATE: [&str; 2] = ["--state-dir", "pliant-state"];
/// A user and group with no rights here.
const NOBODY: &str = "65534";

/// A `pliant` daemon; SIGTERMed (and waited for) when dropped.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let _ = self.0.wait();
    }
}

fn pliant(dir: &Path, args: &[&str], log: &Path) -> Daemon {
    let log = std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap();
    let mut command = Command::new(PLIANT);
    command.arg(args[0]).args(STATE).args(&args[1..]).current_dir(dir);
    Daemon(command.stdout(Stdio::null()).stderr(log).spawn().unwrap())
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(30), "timed out waiting for {what}");
        sleep(Duration::from_millis(50));
    }
}

fn has(tool: &str) -> bool {
    Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().is_ok_and(|o| o.status.success())
}

#[test]
fn a_fake_manager_on_the_manager_s_address_gets_no_credential() {
    let Some(_machine) = live_machine("fake manager") else { return };
    if let Some(tool) = ["openssl", "setpriv", "curl"].into_iter().find(|t| !has(t)) {
        return skip(&format!("fake manager: needs `{tool}`"));
    }
    let scratch = ScratchDir::new("pliant-fake-manager").unwrap();
    let dir = scratch.path();
    let (port, log) = (free_port(), dir.join("daemons.log"));
    let (listen, url) = (format!("127.0.0.1:{port}"), format!("https://127.0.0.1:{port}"));
    let name = format!("fake-{}", std::process::id());
    // The real manager, and an agent that joined it (both from `dir`, whose
    // `pliant-state` holds the tokens and the certificate the agent and the
    // CLI read).
    let mut serve = pliant(dir, &["serve", "--listen", &listen, "--policy", "kill", "--nodes", "1"], &log);
    let _agent = pliant(
        dir,
        &["agent", "--manager", &url, "--name", &name, "--cpu", "1", "--mem", "256M", "--node-dir", "node"],
        &log,
    );
    let cli = |args: &[&str]| -> Output {
        let mut command = Command::new(PLIANT);
        command.arg(args[0]).args(["--manager", &url]).args(STATE).args(&args[1..]);
        command.current_dir(dir).output().unwrap()
    };
    wait_until("the cluster to form", || cli(&["status"]).status.success());
    let submit = ["submit", "--mem", "16M", "--", "true"];
    assert!(cli(&submit).status.success(), "a submission to the real manager");
    let token = std::fs::read_to_string(dir.join("pliant-state/token")).unwrap().trim().to_string();
    let join = std::fs::read_to_string(dir.join("pliant-state/join-token")).unwrap().trim().to_string();
    let credential = std::fs::read_to_string(dir.join("node/credential")).unwrap().trim().to_string();
    serve.0.kill().unwrap();
    serve.0.wait().unwrap();
    std::mem::forget(serve);

    // The fake: a certificate of its own, readable by `nobody`.
    let fake_dir = dir.join("fake");
    std::fs::create_dir(&fake_dir).unwrap();
    let made = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1"])
        .args(["-subj", "/CN=localhost", "-keyout", "key.pem", "-out", "cert.pem"])
        .current_dir(&fake_dir)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    for f in ["key.pem", "cert.pem"] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(fake_dir.join(f), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let captured = dir.join("captured");
    let mut fake = Command::new("setpriv")
        .args(["--reuid", NOBODY, "--regid", NOBODY, "--clear-groups", "openssl", "s_server", "-quiet"])
        .args(["-accept", &listen, "-cert", "cert.pem", "-key", "key.pem"])
        .current_dir(&fake_dir)
        .stdin(Stdio::piped())
        .stdout(std::fs::File::create(&captured).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // A connection to itself (its own port taken as the source) is not the fake listening.
    let listening = || TcpStream::connect(&listen).is_ok_and(|s| s.local_addr().ok() != s.peer_addr().ok());
    wait_until("the fake manager to listen", listening);
    let status = std::fs::read_to_string(format!("/proc/{}/status", fake.id())).unwrap();
    let uid = status.lines().find(|l| l.starts_with("Uid:")).unwrap().split_whitespace().nth(1).unwrap().to_string();
    assert_eq!(uid, NOBODY, "the fake manager is not unprivileged");

    // The agent keeps trying (a heartbeat every 0.2 s, more slowly as they
    // fail); a new agent tries to join; the CLI and a submission try too, and fail.
    let started = Instant::now();
    let before_the_newcomer = std::fs::read_to_string(&log).unwrap().len();
    let newcomer = format!("{name}-new");
    let _joining = pliant(
        dir,
        &["agent", "--manager", &url, "--name", &newcomer, "--cpu", "1", "--mem", "256M", "--node-dir", "new"],
        &log,
    );
    for args in [&["status"][..], &submit[..], &["cancel", "0"][..], &["logs", "0"][..]] {
        let out = cli(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "pliant {args:?} succeeded against the fake manager");
        assert!(err.contains("certificate"), "pliant {args:?}: {err}");
    }
    sleep(Duration::from_secs(2).saturating_sub(started.elapsed()));
    // The control: a client that checks no certificate does hand the fake its header.
    let canary = "canary-credential-0123456789";
    // (curl gets no HTTP answer and gives up after 3 s.)
    Command::new("curl")
        .args(["-sk", "-m", "3", "-o", "/dev/null", "-H", &format!("Authorization: Bearer {canary}")])
        .arg(format!("{url}/jobs"))
        .status()
        .unwrap();
    let text = || std::fs::read_to_string(&captured).unwrap_or_default();
    let start = Instant::now();
    while !text().contains(canary) && start.elapsed() < Duration::from_secs(5) {
        sleep(Duration::from_millis(50));
    }
    fake.kill().unwrap();
    fake.wait().unwrap();
    let text = text();
    let daemons = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains(canary), "the fake manager did not capture what curl -k sent it: {text}");
    assert!(!text.contains(&token), "the fake manager got the API token:\n{text}");
    assert!(!text.contains(&credential), "the fake manager got the node credential:\n{text}");
    assert!(!text.contains(&join), "the fake manager got the join token:\n{text}");
    assert_eq!(text.matches("Authorization").count(), 1, "only curl's request got through:\n{text}");
    assert!(daemons.contains("invalid peer certificate"), "the agent did not try the fake manager:\n{daemons}");
    let since = &daemons[before_the_newcomer..];
    let tried = since.lines().any(|l| l.contains("cannot register yet") && l.contains("invalid peer certificate"));
    assert!(tried, "the new agent did not try to join the fake manager:\n{since}");
}
