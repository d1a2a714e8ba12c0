//! The papers' shapes that pliant reproduces (docs/results/bigc.md and
//! checkpoint.md), pinned on seed 1 so that a change that breaks one fails
//! here, not only in a regenerated table.

// This test uses only some of the shared helpers.
#[allow(dead_code)]
mod common;

use common::pliant;
use serde_json::Value;

/// `pliant simulate ARGS --format json`, each policy's result by name.
fn results(args: &[&str]) -> Vec<(String, Value)> {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let out = pliant(&all);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["results"].as_array().unwrap().iter().map(|r| (r["policy"].as_str().unwrap().to_string(), r.clone())).collect()
}

fn of<'a>(runs: &'a [(String, Value)], policy: &str) -> &'a Value {
    &runs.iter().find(|(p, _)| p == policy).unwrap().1
}

fn num(v: &Value, path: &str) -> f64 {
    path.split('.').fold(v, |v, key| &v[key]).as_f64().unwrap_or_else(|| panic!("{path} in {v}"))
}

/// BIG-C §5.2 on high-load and multi-load: gp's short-job tail is at most
/// kill's and reserve's, fifo's is the worst; kill fails long jobs, ip and gp
/// none; gp's long jobs finish sooner than ip's.
#[test]
fn bigc_comparison_on_the_synthetic_loads() {
    for scenario in ["high-load", "multi-load"] {
        let runs = results(&["simulate", "--scenario", scenario, "--policies", "fifo,reserve,kill,ip,gp"]);
        let short = |p| num(of(&runs, p), "classes.short.jct.p95");
        let (long, failed) =
            (|p| num(of(&runs, p), "classes.long.jct.p90"), |p| num(of(&runs, p), "classes.long.failed"));
        assert!(short("gp") <= short("kill") && short("gp") <= short("reserve"), "{scenario}: gp {}", short("gp"));
        for p in ["reserve", "kill", "ip", "gp"] {
            assert!(short("fifo") > short(p), "{scenario}: fifo's short tail is not the worst ({p})");
        }
        assert!(failed("kill") > 0.0 && failed("ip") == 0.0 && failed("gp") == 0.0, "{scenario}");
        assert!(long("gp") < long("ip"), "{scenario}: gp {} ip {}", long("gp"), long("ip"));
    }
}

/// BIG-C Fig. 7a: without delayed resumption (D = 0) resumed containers are
/// preempted again and short jobs queue longer than with D = 3.
#[test]
fn delayed_resumption_shortens_short_jobs_queueing() {
    let delay = |d: &str| {
        let set = format!("delayed_resumption={d}");
        let runs = results(&["simulate", "--scenario", "high-load", "--policies", "gp", "--set", &set]);
        num(of(&runs, "gp"), "classes.short.queue_delay.mean")
    };
    let (d0, d3) = (delay("0"), delay("3"));
    assert!(d0 > 3.0 * d3, "D = 0: {d0} s, D = 3: {d3} s");
}

/// BIG-C Fig. 6d: with map-heavy wordcount long jobs, kill, ip and gp are close.
#[test]
fn wordcount_long_jobs_fare_alike_under_kill_ip_and_gp() {
    let runs =
        results(&["simulate", "--scenario", "high-load", "--long-jobs", "wordcount", "--policies", "kill,ip,gp"]);
    let p90: Vec<f64> = ["kill", "ip", "gp"].iter().map(|p| num(of(&runs, p), "classes.long.jct.p90")).collect();
    let (lo, hi) = (p90.iter().cloned().fold(f64::MAX, f64::min), p90.iter().cloned().fold(0.0, f64::max));
    assert!(hi <= 1.1 * lo, "{p90:?}");
}

/// Checkpoint paper Fig. 3 and 5 on google-day (scale 0.1): waste orders kill >
/// HDD > SSD > NVM; production jobs under NVM checkpointing are within 10 % of
/// kill's; adaptive lowers free-level JCT against always checkpointing on HDD
/// and SSD.
#[test]
fn checkpoint_comparison_on_google_day() {
    let policies = "priority-kill,checkpoint-hdd,checkpoint-ssd,checkpoint-nvm,adaptive-hdd,adaptive-ssd";
    let runs = results(&["simulate", "--scenario", "google-day", "--scale", "0.1", "--policies", policies]);
    let waste: Vec<f64> = ["priority-kill", "checkpoint-hdd", "checkpoint-ssd", "checkpoint-nvm"]
        .iter()
        .map(|p| num(of(&runs, p), "waste_pct_capacity"))
        .collect();
    assert!(waste.windows(2).all(|w| w[0] > w[1]), "waste % {waste:?}");
    let production = num(of(&runs, "checkpoint-nvm"), "jct_vs_kill.production");
    assert!((production - 1.0).abs() <= 0.10, "{production}");
    for tier in ["hdd", "ssd"] {
        let free = |p: String| num(of(&runs, &p), "classes.free.jct.mean");
        assert!(free(format!("adaptive-{tier}")) < free(format!("checkpoint-{tier}")), "{tier}");
    }
}
