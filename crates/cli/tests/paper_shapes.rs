//! The papers' shapes that pliant reproduces (docs/results/bigc.md and
//! checkpoint.md), pinned on seed 1, or on the mean over seeds 1-3 where the
//! results doc judges a BIG-C shape on it, so that a change that breaks one
//! fails here, not only in a regenerated table.

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

/// `pliant simulate ARGS --seed S` for seeds 1-3.
fn seeds_1_to_3(args: &[&str]) -> Vec<Value> {
    ["1", "2", "3"].iter().map(|seed| simulate(&[args, &["--seed", seed]].concat())).collect()
}

/// The mean of `policy`'s `path` over `runs`.
fn mean(runs: &[Value], policy: &str, path: &str) -> f64 {
    runs.iter().map(|r| num(result(r, policy), path)).sum::<f64>() / runs.len() as f64
}

/// BIG-C §5.2 on high-load and multi-load, means over seeds 1-3: gp's
/// short-job tail is at most kill's and reserve's, fifo's is the worst; kill
/// fails long jobs, ip and gp none; gp's long jobs finish sooner than ip's.
/// (On a single seed the two can cross: high-load seed 1 has gp 32.46 s
/// against kill's 32.30 s.)
#[test]
fn bigc_comparison_on_the_synthetic_loads() {
    for scenario in ["high-load", "multi-load"] {
        let runs = seeds_1_to_3(&["--scenario", scenario, "--policies", "fifo,reserve,kill,ip,gp"]);
        let short = |p| mean(&runs, p, "classes.short.jct.p95");
        let (long, failed) = (|p| mean(&runs, p, "classes.long.jct.p90"), |p| mean(&runs, p, "classes.long.failed"));
        assert!(short("gp") <= short("kill") && short("gp") <= short("reserve"), "{scenario}: gp {}", short("gp"));
        for p in ["reserve", "kill", "ip", "gp"] {
            assert!(short("fifo") > short(p), "{scenario}: fifo's short tail is not the worst ({p})");
        }
        assert!(failed("kill") > 0.0 && failed("ip") == 0.0 && failed("gp") == 0.0, "{scenario}");
        assert!(long("gp") < long("ip"), "{scenario}: gp {} ip {}", long("gp"), long("ip"));
    }
}

/// BIG-C Fig. 7a: without delayed resumption (D = 0) resumed containers are
/// preempted again and short jobs queue longer than with D = 3 (means over
/// seeds 1-3, as the sweep in docs/results/bigc.md: 6.9 s against 1.2 s).
#[test]
fn delayed_resumption_shortens_short_jobs_queueing() {
    let delay = |d: &str| {
        let set = format!("delayed_resumption={d}");
        let runs = seeds_1_to_3(&["--scenario", "high-load", "--policies", "gp", "--set", &set]);
        mean(&runs, "gp", "classes.short.queue_delay.mean")
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
/// on every BIG-C scenario: on seed 1, and on the mean over seeds 1-3 of each
/// Spark scenario. Kill no longer looks good by failing its slowest jobs. Not
/// on every seed: on low-load seed 3 kill fails only 3 of 38 long jobs, no
/// more than the 3 that p90 leaves out (docs/results/bigc.md, job by job).
/// Under the simpler kill model (`kill_model=tasks`: a killed executor loses
/// only its in-flight tasks) the margin on low-load comes from gradual
/// resumption: with `gradual_resumption=0` gp's mean there is above kill's.
/// Spark's kill (the default) also loses the executor's map output, which
/// keeps gp ahead even with whole resumption.
#[test]
fn gp_beats_kill_once_failed_jobs_are_resubmitted() {
    let retry = |runs: &Value, p| num(result(runs, p), "classes.long.jct_retry.p90");
    for scenario in ["mixed", "high-load", "low-load", "multi-load", "google-like"] {
        let runs = simulate(&["--scenario", scenario, "--policies", "kill,gp"]);
        assert!(
            retry(&runs, "gp") < retry(&runs, "kill"),
            "{scenario}: gp {} kill {}",
            retry(&runs, "gp"),
            retry(&runs, "kill")
        );
    }
    let retry_mean = |scenario: &str, policies: &str, sets: &[&str]| {
        let mut args = vec!["--scenario", scenario, "--policies", policies];
        for s in sets {
            args.extend(["--set", s]);
        }
        let runs = seeds_1_to_3(&args);
        policies.split(',').map(|p| mean(&runs, p, "classes.long.jct_retry.p90")).collect::<Vec<_>>()
    };
    for scenario in ["high-load", "low-load", "multi-load", "google-like"] {
        let means = retry_mean(scenario, "gp,kill", &[]);
        assert!(means[0] < means[1], "{scenario}, seeds 1-3: gp {} kill {}", means[0], means[1]);
    }
    let whole = retry_mean("low-load", "gp,kill", &["gradual_resumption=0", "kill_model=tasks"]);
    assert!(whole[0] > whole[1], "low-load, whole resumption, tasks: gp {} kill {}", whole[0], whole[1]);
    let spark = retry_mean("low-load", "gp,kill", &["gradual_resumption=0"]);
    assert!(spark[0] < spark[1], "low-load, whole resumption, spark: gp {} kill {}", spark[0], spark[1]);
}

/// BIG-C §2.2, Fig. 2 (`bigc-fig2`, docs/results/bigc.md "Fig. 2"), seed 1:
/// one long job under a 95 % short share; kill slows it by at least the
/// floor the burst's own core-time sets (its core-seconds over the cluster's
/// cores and the job's JCT alone), and the floor is the burst's nominal
/// 60 % of the cores for 360 s over a ~780 s job.
/// Why the long job is late under kill is in the output: Spark's killed
/// executors fail its application attempt, which YARN runs again from zero
/// (JSON `attempts`, jobs.csv's `attempts`, `kills`, `relaunches`, the
/// table's `kills:` line); a MapReduce job's killed containers are started
/// again, its attempt kept; gp kills nothing.
#[test]
fn bigc_fig2_s_kills_relaunches_and_application_attempts_are_counted() {
    let dir = common::temp_dir("fig2-attempts");
    let out = dir.to_str().unwrap();
    let runs =
        simulate(&["--scenario", "bigc-fig2", "--long-jobs", "spark", "--policies", "fifo,kill,gp", "--out", out]);
    let (fifo, kill, gp) = (result(&runs, "fifo"), result(&runs, "kill"), result(&runs, "gp"));
    for r in [fifo, gp] {
        assert_eq!(
            r["attempts"],
            serde_json::json!({"kills": 0, "relaunches": 0, "reattempts": 0, "jobs_reattempted": 0})
        );
    }
    let kills = num(kill, "attempts.kills");
    assert_eq!(kills, num(kill, "preemptions.kill"));
    assert_eq!((num(kill, "attempts.reattempts"), num(kill, "attempts.jobs_reattempted")), (1.0, 1.0));
    // Executors killed in the attempt thrown away are not started again in it.
    let relaunches = num(kill, "attempts.relaunches");
    assert!(relaunches > 0.0 && relaunches < kills, "{}", kill["attempts"]);
    let csv = std::fs::read_to_string(dir.join("jobs.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let long = csv.lines().find(|l| l.starts_with("kill,") && l.contains(",long,")).unwrap();
    let row: std::collections::HashMap<&str, &str> = header.iter().copied().zip(long.split(',')).collect();
    let counts = [row["attempts"], row["kills"], row["relaunches"]].map(|c| c.parse::<f64>().unwrap());
    assert_eq!(counts, [2.0, kills, relaunches], "{long}");

    let terasort = simulate(&["--scenario", "bigc-fig2", "--long-jobs", "terasort", "--policies", "kill"]);
    let kill = result(&terasort, "kill");
    assert_eq!(num(kill, "attempts.reattempts"), 0.0);
    assert!(num(kill, "attempts.kills") > 0.0);
    assert_eq!(num(kill, "attempts.relaunches"), num(kill, "attempts.kills"), "every killed container ran again");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bigc_fig2_kill_costs_the_long_job_at_least_the_burst_floor() {
    let cores = 26.0 * 32.0;
    let used = |r: &Value| num(r, "utilization.cpu_mean") * num(r, "makespan_s") * cores;
    let jct = |r: &Value| num(r, "classes.long.jct_retry.p50");
    for kind in ["spark", "wordcount", "terasort"] {
        let alone = simulate(&["--scenario", "bigc-fig2-alone", "--long-jobs", kind, "--policies", "fifo"]);
        let runs = simulate(&["--scenario", "bigc-fig2", "--long-jobs", kind, "--policies", "fifo,kill"]);
        assert_eq!(num(&runs, "params.short_share"), 0.95, "{kind}");
        let (alone, fifo, kill) = (result(&alone, "fifo"), result(&runs, "fifo"), result(&runs, "kill"));
        assert_eq!(num(alone, "classes.short.jobs"), 0.0, "{kind}");
        for r in [alone, fifo, kill] {
            assert_eq!(num(r, "classes.long.jobs"), 1.0, "{kind}");
        }
        assert!(num(fifo, "classes.short.jobs") > 100.0, "{kind}");
        let floor = (used(fifo) - used(alone)) / cores / jct(alone);
        let nominal = 0.6 * 360.0 / jct(alone);
        assert!((floor - nominal).abs() < 0.05, "{kind}: floor {floor}, nominal {nominal}");
        let slowdown = jct(kill) / jct(alone) - 1.0;
        assert!(slowdown >= floor, "{kind}: kill slows the job by {slowdown}, under the floor {floor}");
    }
}
