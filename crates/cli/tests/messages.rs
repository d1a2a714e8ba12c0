//! Messages that send a newcomer the right way: nothing listening is said as
//! such, `--out` is checked before the run, a closed pipe ends the output
//! quietly, and a misspelt preset or scenario gets a "did you mean".

mod common;

use common::{error_of, temp_dir};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

const PLIANT: &str = env!("CARGO_BIN_EXE_pliant");

#[test]
fn a_client_with_nothing_listening_says_so_once() {
    let port = common::live::free_port();
    let url = format!("https://127.0.0.1:{port}");
    let dir = temp_dir("nothing-listening");
    let pin = format!("sha256:{}", "ab".repeat(32));
    for ca in [None, Some(pin.as_str())] {
        let mut cmd = Command::new(PLIANT);
        cmd.args(["submit", "--manager", &url])
            .current_dir(&dir)
            .env("PLIANT_TOKEN", "0123456789abcdef0123")
            .env_remove("PLIANT_CA");
        if let Some(ca) = ca {
            cmd.args(["--ca", ca]);
        }
        let out = cmd.args(["--", "true"]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--ca {ca:?}: {err}");
        assert!(
            err.contains(&format!("nothing is listening at {url} (is the manager running?)")),
            "--ca {ca:?}: {err}"
        );
        assert_eq!(err.matches(&url).count(), 1, "the URL once: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unwritable_out_is_refused_before_the_run() {
    let dir = temp_dir("unwritable-out");
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let out_dir = file.join("results");
    for command in ["simulate", "sweep"] {
        let mut args = vec![command, "--scenario", "two-job", "--policies", "fifo", "--out", out_dir.to_str().unwrap()];
        if command == "sweep" {
            args.extend(["--vary", "delayed_resumption=0,1"]);
        }
        let out = Command::new(PLIANT).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command}: {err}");
        assert!(err.contains(&format!("--out {}: cannot write there", out_dir.display())), "{command}: {err}");
        assert!(err.contains("nothing was run"), "{command}: {err}");
        assert!(out.stdout.is_empty(), "{command} ran before refusing: {}", String::from_utf8_lossy(&out.stdout));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `pliant policies | head -1`: the reader is gone before the first write.
#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    for args in [&["policies"][..], &["scenarios"], &["simulate", "--scenario", "two-job", "--format", "json"]] {
        let mut fds = [0; 2];
        // SAFETY: pipe writes two descriptors into `fds`.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: the read end is ours and closed once: every write now meets a closed pipe.
        unsafe { libc::close(fds[0]) };
        // SAFETY: the write end is ours; the Stdio takes it over.
        let stdout = unsafe { <Stdio as std::os::fd::FromRawFd>::from_raw_fd(fds[1]) };
        let out = Command::new(PLIANT).args(args).stdout(stdout).stderr(Stdio::piped()).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        let quiet = out.status.code() == Some(0) || out.status.signal() == Some(libc::SIGPIPE);
        assert!(quiet, "{args:?}: {:?} {err}", out.status);
    }
}

#[test]
fn a_misspelt_preset_or_scenario_gets_a_guess() {
    let e = error_of(&["simulate", "--policies", "fifo,gpp"]);
    assert!(e.contains("unknown policy `gpp`: did you mean `gp`?"), "{e}");
    let e = error_of(&["simulate", "--scenario", "mixd"]);
    assert!(e.contains("unknown scenario `mixd`: did you mean `mixed`?"), "{e}");
    let e = error_of(&["simulate", "--policies", "zzzz"]);
    assert!(e.contains("unknown policy `zzzz` (known: fifo,"), "no guess for nonsense: {e}");
}

/// A state directory keeps its cluster's policy: `local` or `serve` with
/// another `--policy` there stops at once (exit 2) and names the ways out,
/// before it listens or touches a cgroup.
#[test]
fn another_policy_on_a_kept_state_dir_is_an_error_naming_the_way_out() {
    use pliant_core::MechanismKind;
    use pliant_live::machine::unix_us;
    use pliant_live::wire::NodeRecord;
    use pliant_manager::manager::{ClusterConfig, Manager};
    let dir = temp_dir("kept-policy");
    let state = dir.join("st");
    let node = NodeRecord {
        name: "local".into(),
        capacity: pliant_core::Resources::new(2000, 1000),
        mechanisms: MechanismKind::ALL.to_vec(),
        notes: vec![],
    };
    let config = ClusterConfig { policy: "kill".into(), params: vec![], nodes: vec![node], epoch_unix_us: unix_us() };
    drop(Manager::open(&state, config, &pliant_plugins::registry()).unwrap());
    for command in ["local", "serve"] {
        let port = common::live::free_port().to_string();
        let listen = format!("127.0.0.1:{port}");
        let args = [command, "--state-dir", state.to_str().unwrap(), "--policy", "gp", "--listen", &listen];
        let mut child = Command::new(PLIANT).args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let started = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > std::time::Duration::from_secs(20) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{command} --policy gp ran on a state directory of a kill cluster");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        let mut err = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert_eq!(status.code(), Some(2), "{command}: {err}");
        assert!(err.contains("holds a cluster under policy kill"), "{command}: {err}");
        assert!(err.contains("start with --policy kill") && err.contains("another --state-dir"), "{command}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--policy` of the live bodies takes a preset, a composition or
/// `FILE#NAME`; an unknown name or a bad step or parameter fails with the
/// flag (or FILE:LINE) and what exists, before the state directory (its
/// certificate, token and journal) is made.
#[test]
fn a_bad_live_policy_fails_before_anything_is_written() {
    let dir = temp_dir("live-policy");
    let (state, exp) = (dir.join("st"), dir.join("e.toml"));
    std::fs::write(&exp, "[workload]\nscenario = \"mixed\"\n[policies.bad]\nfrom = \"ip\"\nmechanism = \"shrink\"\n")
        .unwrap();
    let in_file = |name: &str| format!("{}#{name}", exp.display());
    let cases = [
        (
            "local",
            "gp-kill".to_string(),
            vec![],
            "--policy gp-kill: unknown policy `gp-kill`: did you mean `gp`? (known: fifo,",
        ),
        ("serve", "x=gp,mechanism=shrink".into(), vec![], "--policy x=gp,mechanism=shrink: mechanism takes kill,"),
        ("slurm", in_file("bad"), vec![], "e.toml:5: mechanism takes kill, immediate,"),
        ("local", in_file("other"), vec![], "e.toml: no [policies.other] here (it has: bad)"),
        (
            "local",
            "x=gp,mechanism=kill".into(),
            vec!["--set", "gp_units=0"],
            "--policy x=gp,mechanism=kill: bad value `0` for `gp_units`",
        ),
    ];
    for (command, policy, mut more, expected) in cases {
        let mut args = vec![command, "--state-dir", state.to_str().unwrap(), "--policy", &policy];
        args.append(&mut more);
        let err = error_of(&args);
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(!state.exists(), "{args:?} made {}", state.display());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
