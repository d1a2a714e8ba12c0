//! Slot reservation end to end: the `reservation` scenario's slowdowns, the
//! numerical studies, and clear errors (exit code 2) for bad settings and DAGs.

mod common;

use common::{error_of, json, pliant, result, temp_dir};

/// At a tenth of the cluster, priority slows the foreground DAG jobs down
/// far more than ssr does, and the JSON carries slowdowns and reserved time.
#[test]
fn ssr_isolates_the_foreground_and_reports_slowdown() {
    let doc = json(&[
        "simulate",
        "--scenario",
        "reservation",
        "--scale",
        "0.1",
        "--policies",
        "priority,ssr",
        "--slowdown",
        "--format",
        "json",
    ]);
    let slowdown = |policy: &str| result(&doc, policy)["classes"]["short"]["slowdown"]["mean"].as_f64().unwrap();
    assert!(slowdown("ssr") < 1.15, "ssr {}", slowdown("ssr"));
    assert!(slowdown("priority") > 1.5 * slowdown("ssr"), "priority {}", slowdown("priority"));
    assert!(result(&doc, "ssr")["reserved_idle_core_seconds"].as_f64().unwrap() > 0.0);
    assert!(result(&doc, "priority").get("reserved_idle_core_seconds").is_none());
}

/// Fig. 14's direction under ssr-deadline on the full `reservation` scenario
/// (seed 1): a larger isolation target P keeps reservations longer, so the
/// foreground finishes sooner and more reserved slots sit idle.
#[test]
fn a_larger_isolation_target_trades_idle_slots_for_foreground_speed() {
    let run = |p: &str| {
        let doc = json(&[
            "simulate",
            "--scenario",
            "reservation",
            "--policies",
            "ssr-deadline",
            "--set",
            &format!("isolation={p}"),
            "--format",
            "json",
        ]);
        let r = result(&doc, "ssr-deadline");
        (r["classes"]["short"]["jct"]["mean"].as_f64().unwrap(), r["reserved_idle_core_seconds"].as_f64().unwrap())
    };
    let runs: Vec<(f64, f64)> = ["0.1", "0.5", "0.9"].into_iter().map(run).collect();
    for w in runs.windows(2) {
        assert!(w[1].0 < w[0].0 && w[1].1 > w[0].1, "(fg JCT, reserved idle) by P: {runs:?}");
    }
}

/// The numerical studies print their series: Eq. 4 at P = 0.5, N = 20,
/// α = 2: tail = 1 − 0.5^(1/20) = 0.03406; 2·√tail − tail = 0.335.
#[test]
fn numeric_tradeoff_prints_equation_4() {
    let out = pliant(&["numeric", "tradeoff"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let row = text.lines().find(|l| l.split_whitespace().next() == Some("0.5")).unwrap();
    // P | α=1.2 α=1.6 α=2 α=3
    assert_eq!(row.split_whitespace().nth(4), Some("0.335"), "{row}");
}

#[test]
fn bad_isolation_prereserve_and_dags_are_clear_errors() {
    let e = error_of(&["simulate", "--scenario", "two-job", "--set", "isolation=1"]);
    assert!(e.contains("isolation") && e.contains("strictly between 0 and 1"), "{e}");
    let e = error_of(&["simulate", "--scenario", "two-job", "--set", "isolation=0"]);
    assert!(e.contains("isolation"), "{e}");
    for p in ["1.5", "-0.2"] {
        let e = error_of(&["simulate", "--scenario", "two-job", "--set", &format!("isolation={p}")]);
        assert!(e.contains("isolation") && e.contains("strictly between 0 and 1"), "{p}: {e}");
    }
    for r in ["1.5", "-0.1"] {
        let e = error_of(&["simulate", "--scenario", "two-job", "--set", &format!("prereserve={r}")]);
        assert!(e.contains("prereserve") && e.contains("between 0 and 1"), "{r}: {e}");
    }
    let dir = temp_dir("dag");
    let cluster = r#"{"cluster":{"nodes":[{"count":2,"cpu":4,"mem_mb":16384}]}}"#;
    let task = r#"{"cpu":1,"mem_mb":4096,"duration_s":5}"#;
    let cases = [
        ("self.jsonl", format!(r#"[{{"after":[0],"tasks":[{task}]}}]"#), "phase 0 depends on phase 0"),
        (
            "cycle.jsonl",
            format!(r#"[{{"after":[1],"tasks":[{task}]}},{{"after":[0],"local":true,"tasks":[{task}]}}]"#),
            "phase 0 depends on phase 1",
        ),
        (
            "ring.jsonl",
            format!(
                r#"[{{"after":[2],"tasks":[{task}]}},{{"after":[0],"tasks":[{task}]}},{{"after":[1],"tasks":[{task}]}}]"#
            ),
            "phase 0 depends on phase 2",
        ),
    ];
    for (name, phases, problem) in cases {
        let path = dir.join(name);
        std::fs::write(
            &path,
            format!("{cluster}\n{{\"job\":{{\"submit_s\":0,\"class\":\"short\",\"phases\":{phases}}}}}\n"),
        )
        .unwrap();
        let e = error_of(&["simulate", "--workload", path.to_str().unwrap(), "--policies", "ssr"]);
        assert!(e.contains(&format!("{name}:2:")) && e.contains(problem), "{name}: {e}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}
