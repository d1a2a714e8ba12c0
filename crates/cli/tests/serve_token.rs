//! `pliant serve` and its tokens (issues 14, 21): it will not listen on an
//! address other machines reach unless the operator gives the token with
//! `--token-file`; with it, it listens and refuses changes without it; a
//! node registers with the join token (`STATE_DIR/join-token`, made 0600),
//! not with the API token.
//! `serve` touches no cgroup until an agent registers, so these run anywhere.

use pliant_live::scratch::ScratchDir;
use pliant_live::tls::Pin;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PLIANT: &str = env!("CARGO_BIN_EXE_pliant");

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn serve_refuses_a_non_loopback_address_without_a_token_file() {
    let dir = ScratchDir::new("pliant-serve-open").unwrap();
    let state = dir.path().join("state");
    let listen = format!("0.0.0.0:{}", free_port());
    let out = Command::new(PLIANT)
        .args(["serve", "--listen", &listen, "--state-dir", state.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("refusing to listen on {listen} without a token")), "{err}");
    assert!(err.contains("--token-file"), "{err}");
    assert!(!state.join("journal.sqlite").exists(), "it started a cluster before refusing");
}

#[test]
fn serve_with_a_token_file_listens_on_every_address_and_guards_changes() {
    let dir = ScratchDir::new("pliant-serve-token").unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "a-secret-of-32-characters-or-so\n").unwrap();
    let port = free_port();
    let mut serve = Command::new(PLIANT)
        .args(["serve", "--listen", &format!("0.0.0.0:{port}"), "--token-file", token.to_str().unwrap()])
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // `curl` stand-in: a registration's status with and without a token,
    // over TLS to the certificate the manager makes in its state directory.
    let http = |pin: Option<Pin>| ureq::AgentBuilder::new().tls_config(Pin::client_config(pin.as_ref())).build();
    let register = |bearer: Option<&str>| {
        let pin = Pin::for_client(None, &dir.path().join("state")).ok()??;
        let mut request = http(Some(pin)).post(&format!("https://127.0.0.1:{port}/agents/register"));
        if let Some(b) = bearer {
            request = request.set("Authorization", &format!("Bearer {b}"));
        }
        match request.send_string("{}") {
            Ok(r) => Some(r.status()),
            Err(ureq::Error::Status(code, _)) => Some(code),
            Err(_) => None,
        }
    };
    let start = Instant::now();
    let mut without = register(None);
    while without.is_none() && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
        without = register(None);
    }
    // The join token gets past the check to the registration itself (an
    // empty one is malformed); the API token cannot register a node.
    let join_file = dir.path().join("state/join-token");
    let join = std::fs::read_to_string(&join_file).unwrap();
    let with_join = register(Some(join.trim()));
    let with_api_token = register(Some("a-secret-of-32-characters-or-so"));
    serve.kill().unwrap();
    serve.wait().unwrap();
    assert_eq!(without, Some(401));
    assert_eq!(with_join, Some(400));
    assert_eq!(with_api_token, Some(403));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&join_file).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(join.trim().len(), 64);
}
