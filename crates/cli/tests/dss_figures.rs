//! pliant against DSS, the YARN-ME paper's own simulator, on the traces DSS's
//! generator wrote (`tests/data/dss/`): DSS's average job runtimes, copied
//! from its output (`../shared/traces/dss/results.csv`, DSS commit 4ca2dcd,
//! 100 nodes of 10,240 MB and 16 cores, 1 s heartbeats, AM 1,000 MB and
//! 1 core), pinned here. Each pliant figure is the mean JCT of the same
//! trace under the matching preset, and must lie within the issue's bar of
//! DSS's: `yarn` within 5 % of REGULAR `-r`, `yarn --set backfill=1` within
//! 5 % of REGULAR `-r -g`, `elastic` within 15 % of PEEK (STEP and SAWTOOTH
//! 1.5), `meganode` within 5 % of SRTF `--meganode`.
//!
//! pliant runs these traces with DSS's heartbeats (the workload's defaults
//! for an SLS/DSS trace): one container per node per 1 s node heartbeat,
//! nodes that go quiet as DSS's do (a reserved node tries again only when a
//! container on it ends, a job arrives or an ApplicationMaster starts),
//! tasks placed one AM heartbeat after their ApplicationMaster and launched
//! two AM heartbeats after being placed; `elastic`'s timeline generator sees
//! the nodes reserved for a job's task, as PEEK's look-ahead (a copy of the
//! cluster) does. See `../shared/traces/dss/README.md`, "DSS semantics".

use serde_json::Value;
use std::process::Command;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/dss");

/// One comparison: a pliant run on a trace and the DSS figure it matches.
struct Check {
    trace: &'static str,
    /// DSS's configuration, as its results table names it.
    dss_config: &'static str,
    /// DSS's average job runtime, s.
    dss: f64,
    /// The pliant preset and its flags.
    policy: &'static str,
    flags: &'static [&'static str],
    /// Largest relative difference accepted (the issue's bar).
    tolerance: f64,
}

const SMALL: &str = "dss-31415-small.json";
const BIG: &str = "dss-2718.json";

/// `yarn` against REGULAR: within 5 %.
const YARN: f64 = 0.05;
/// `elastic` against PEEK: within 15 %.
const PEEK: f64 = 0.15;

const CHECKS: &[Check] = &[
    check(SMALL, "REGULAR -r", 2613.99, "yarn", &[], YARN),
    check(SMALL, "REGULAR -r -g", 1530.33, "yarn", &["--set", "backfill=1"], YARN),
    check(SMALL, "REGULAR -r, AM 0 MB", 2077.30, "yarn", &["--set", "am_mb=0"], YARN),
    check(SMALL, "PEEK STEP 1.5 (-r)", 543.97, "elastic", &["--penalty", "step:1.5"], PEEK),
    check(SMALL, "PEEK SAWTOOTH 1.5 (-r)", 626.62, "elastic", &["--penalty", "sawtooth:1.5"], PEEK),
    check(SMALL, "SRTF --meganode", 706.76, "meganode", &[], YARN),
    check(BIG, "REGULAR -r", 30179.77, "yarn", &[], YARN),
    check(BIG, "REGULAR -r -g", 14565.22, "yarn", &["--set", "backfill=1"], YARN),
    check(BIG, "REGULAR -r, AM 0 MB", 21980.53, "yarn", &["--set", "am_mb=0"], YARN),
    check(BIG, "PEEK STEP 1.5 (-r)", 2937.07, "elastic", &["--penalty", "step:1.5"], PEEK),
    check(BIG, "PEEK SAWTOOTH 1.5 (-r)", 4842.46, "elastic", &["--penalty", "sawtooth:1.5"], PEEK),
    check(BIG, "SRTF --meganode", 6694.11, "meganode", &[], YARN),
];

const fn check(
    trace: &'static str,
    dss_config: &'static str,
    dss: f64,
    policy: &'static str,
    flags: &'static [&'static str],
    tolerance: f64,
) -> Check {
    Check { trace, dss_config, dss, policy, flags, tolerance }
}

/// Mean JCT (s) of `policy` with `flags` on `trace` (100 nodes of ⟨16 CPU, 10 GB⟩).
fn mean_jct(trace: &str, policy: &str, flags: &[&str]) -> f64 {
    let path = format!("{DATA}/{trace}");
    let mut args = vec!["simulate", "--workload", &path, "--nodes", "100", "--node", "16,10", "--format", "json"];
    args.extend(["--policies", policy]);
    args.extend(flags);
    let out = Command::new(env!("CARGO_BIN_EXE_pliant")).args(&args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let long = &doc["results"][0]["classes"]["long"];
    assert_eq!(long["jobs"], 100, "{args:?}");
    long["jct"]["mean"].as_f64().unwrap()
}

#[test]
fn pliant_matches_dss_on_dsss_own_traces() {
    let mut failures = Vec::new();
    eprintln!("{:<22} {:<28} {:>10} {:>10} {:>8}  status", "trace", "DSS configuration", "DSS s", "pliant s", "diff");
    for c in CHECKS {
        let got = mean_jct(c.trace, c.policy, c.flags);
        let diff = got / c.dss - 1.0;
        let holds = diff.abs() <= c.tolerance;
        if !holds {
            failures.push(format!(
                "{} {}: pliant {got:.2} s is {:+.1} % off DSS {:.2} s (bar {:.0} %)",
                c.trace,
                c.dss_config,
                diff * 100.0,
                c.dss,
                c.tolerance * 100.0
            ));
        }
        eprintln!(
            "{:<22} {:<28} {:>10.2} {:>10.2} {:>+7.1}%  {}",
            c.trace,
            c.dss_config,
            c.dss,
            got,
            diff * 100.0,
            if holds { "holds" } else { "FAILS" }
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
