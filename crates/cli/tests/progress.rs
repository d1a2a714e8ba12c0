//! Progress on stderr: a bar per policy for `simulate` and one for `sweep`'s
//! runs when stderr is a terminal (a pseudo-terminal from util-linux's
//! `script`), nothing under `--quiet` or when stderr is not a terminal.

mod common;

use common::pliant;
use std::process::Command;

/// Runs `pliant ARGS` on a pseudo-terminal and returns what it drew there.
fn on_a_terminal(args: &str) -> Option<String> {
    let bin = env!("CARGO_BIN_EXE_pliant");
    let out = Command::new("script").args(["-qec", &format!("{bin} {args}"), "/dev/null"]).output().ok()?;
    assert!(out.status.success(), "{args}: {}", String::from_utf8_lossy(&out.stderr));
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

const SIMULATE: &str = "simulate --scenario google-day --scale 0.1 --policies priority,priority-kill";

#[test]
fn simulate_and_sweep_draw_progress_on_a_terminal_only() {
    let Some(drawn) = on_a_terminal(SIMULATE) else {
        common::live::skip("progress: util-linux `script` is not installed (no pseudo-terminal to test on)");
        return;
    };
    for policy in ["priority ", "priority-kill "] {
        assert!(drawn.lines().any(|l| l.contains(policy) && l.contains("/1478 jobs ended")), "{policy}bar: {drawn}");
    }
    let quiet = on_a_terminal(&format!("{SIMULATE} --quiet")).unwrap();
    assert!(!quiet.contains("jobs ended") && quiet.contains("priority-kill"), "--quiet: {quiet}");
    let piped = pliant(&SIMULATE.split(' ').collect::<Vec<_>>());
    assert!(piped.status.success() && piped.stderr.is_empty(), "{}", String::from_utf8_lossy(&piped.stderr));

    let sweep = "sweep --scenario google-day --scale 0.05 --vary monitor_interval_s=3,6 --policies priority-kill";
    assert!(on_a_terminal(sweep).unwrap().contains("/2 runs,"), "sweep's bar");
    assert!(!on_a_terminal(&format!("{sweep} -q")).unwrap().contains("runs,"), "-q");
}
