//! The papers' shapes that pliant reproduces (docs/results/bigc.md and
//! checkpoint.md), pinned on seed 1 so that a change that breaks one fails
//! here, not only in a regenerated table.

mod common;

use common::{json, result};
use serde_json::Value;

/// `pliant simulate ARGS --format json`.
fn simulate(args: &[&str]) -> Value {
    let mut all = vec!["simulate"];
    all.extend(args);
    all.extend(["--format", "json"]);
    json(&all)
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
        let runs = simulate(&["--scenario", scenario, "--policies", "fifo,reserve,kill,ip,gp"]);
        let short = |p| num(result(&runs, p), "classes.short.jct.p95");
        let (long, failed) =
            (|p| num(result(&runs, p), "classes.long.jct.p90"), |p| num(result(&runs, p), "classes.long.failed"));
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
        let runs = simulate(&["--scenario", "high-load", "--policies", "gp", "--set", &set]);
        num(result(&runs, "gp"), "classes.short.queue_delay.mean")
    };
    let (d0, d3) = (delay("0"), delay("3"));
    assert!(d0 > 3.0 * d3, "D = 0: {d0} s, D = 3: {d3} s");
}

/// BIG-C Fig. 6d: with map-heavy wordcount long jobs, kill, ip and gp are close.
#[test]
fn wordcount_long_jobs_fare_alike_under_kill_ip_and_gp() {
    let runs = simulate(&["--scenario", "high-load", "--long-jobs", "wordcount", "--policies", "kill,ip,gp"]);
    let p90: Vec<f64> = ["kill", "ip", "gp"].iter().map(|p| num(result(&runs, p), "classes.long.jct.p90")).collect();
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
    let runs = simulate(&["--scenario", "google-day", "--scale", "0.1", "--policies", policies]);
    let waste: Vec<f64> = ["priority-kill", "checkpoint-hdd", "checkpoint-ssd", "checkpoint-nvm"]
        .iter()
        .map(|p| num(result(&runs, p), "waste_pct_capacity"))
        .collect();
    assert!(waste.windows(2).all(|w| w[0] > w[1]), "waste % {waste:?}");
    let production = num(result(&runs, "checkpoint-nvm"), "jct_vs_kill.production");
    assert!((production - 1.0).abs() <= 0.10, "{production}");
    for tier in ["hdd", "ssd"] {
        let free = |p: String| num(result(&runs, &p), "classes.free.jct.mean");
        assert!(free(format!("adaptive-{tier}")) < free(format!("checkpoint-{tier}")), "{tier}");
    }
}

/// Issue 13: counting failed jobs as their owners do (resubmitted when they
/// fail, timed to the resubmission's end), gp's long-job tail is below kill's
/// on every BIG-C scenario (seed 1): kill no longer looks good by failing its
/// slowest jobs. Not on every seed: on low-load seed 3 kill fails only 3 of
/// 38 long jobs, no more than the 3 that p90 leaves out, while gp's cost is
/// spread over many (docs/results/bigc.md, job by job); there gp's tail is
/// below kill's from p95 up, where kill's resubmissions are.
#[test]
fn gp_beats_kill_once_failed_jobs_are_resubmitted() {
    for scenario in ["mixed", "high-load", "low-load", "multi-load", "google-like"] {
        let runs = simulate(&["--scenario", scenario, "--policies", "kill,gp"]);
        let retry = |p| num(result(&runs, p), "classes.long.jct_retry.p90");
        assert!(retry("gp") < retry("kill"), "{scenario}: gp {} kill {}", retry("gp"), retry("kill"));
    }
    let runs = simulate(&["--scenario", "low-load", "--seed", "3", "--policies", "kill,gp"]);
    let p95 = |p| num(result(&runs, p), "classes.long.jct_retry.p95");
    assert!(p95("gp") < p95("kill"), "low-load seed 3: gp {} kill {}", p95("gp"), p95("kill"));
}
