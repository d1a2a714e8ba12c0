//! pliant against DSS, the YARN-ME paper's own simulator, on the traces DSS's
//! generator wrote (`tests/data/dss/`): DSS's average job runtimes, copied
//! from its output (`../shared/traces/dss/results.csv`, DSS commit 4ca2dcd,
//! 100 nodes of 10,240 MB and 16 cores, 1 s heartbeats, AM 1,000 MB and
//! 1 core), pinned here. Each pliant figure is the mean JCT of the same
//! trace under the matching preset, and must lie within its tolerance of
//! DSS's; a comparison that does not hold yet is listed as a gap with the
//! figure pliant gives today, so that the test fails when either moves.
//!
//! pliant runs these traces with DSS's heartbeats (the workload's defaults
//! for an SLS/DSS trace): one container per node per 1 s node heartbeat,
//! tasks placed one AM heartbeat after their ApplicationMaster, launched two
//! AM heartbeats after being placed. The gaps that remain, and what is
//! known of why: `yarn --set backfill=1` on the small trace is 12 % faster
//! than REGULAR `-r -g` (within 3 % on the big one), and `elastic` on the
//! small trace is 28 % faster than PEEK STEP 1.5 (within 15 % under
//! SAWTOOTH, whose table pliant does not copy); pliant's node heartbeats
//! are all at once in node order rather than DSS's per-node phases, its
//! nodes never go quiet, a job's end is its last task's (DSS: about 3 s
//! later), and `elastic`'s timeline generator is not PEEK's look-ahead
//! (a REGULAR `-r` replay up to a cutoff); see
//! `../shared/traces/dss/README.md`, "DSS semantics".

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
    /// Largest relative difference accepted.
    tolerance: f64,
    /// `Some(x)`: a known gap; pliant gives `x` s today.
    gap: Option<f64>,
}

const SMALL: &str = "dss-31415-small.json";
const BIG: &str = "dss-2718.json";

/// DSS's heartbeats off: any number of containers at once, no AM heartbeats.
const NO_BEATS: &[&str] = &["--set", "containers_per_heartbeat=0", "--set", "am_heartbeat_s=0"];

const CHECKS: &[Check] = &[
    check(SMALL, "REGULAR -r", 2613.99, "yarn", &[], 0.05, None),
    check(SMALL, "REGULAR -r -g", 1530.33, "yarn", &["--set", "backfill=1"], 0.05, Some(1339.70)),
    check(SMALL, "REGULAR -r, AM 0 MB", 2077.30, "yarn", &["--set", "am_mb=0"], 0.05, None),
    check(SMALL, "PEEK STEP 1.5 (-r)", 543.97, "elastic", &["--penalty", "step:1.5"], 0.15, Some(392.85)),
    check(SMALL, "PEEK SAWTOOTH 1.5 (-r)", 626.62, "elastic", &["--penalty", "sawtooth:1.5"], 0.15, None),
    check(SMALL, "SRTF --meganode", 706.76, "meganode", &[], 0.05, None),
    check(BIG, "REGULAR -r", 30179.77, "yarn", &[], 0.05, None),
    check(BIG, "REGULAR -r -g", 14565.22, "yarn", &["--set", "backfill=1"], 0.05, None),
    check(BIG, "REGULAR -r, AM 0 MB", 21980.53, "yarn", &["--set", "am_mb=0"], 0.05, None),
    // Without DSS's heartbeats pliant places whatever fits at once: 17 % off.
    check(BIG, "REGULAR -r", 30179.77, "yarn", NO_BEATS, 0.05, Some(25143.85)),
    check(BIG, "PEEK STEP 1.5 (-r)", 2937.07, "elastic", &["--penalty", "step:1.5"], 0.15, None),
    check(BIG, "PEEK SAWTOOTH 1.5 (-r)", 4842.46, "elastic", &["--penalty", "sawtooth:1.5"], 0.15, None),
    check(BIG, "SRTF --meganode", 6694.11, "meganode", &[], 0.05, None),
];

#[allow(clippy::too_many_arguments)]
const fn check(
    trace: &'static str,
    dss_config: &'static str,
    dss: f64,
    policy: &'static str,
    flags: &'static [&'static str],
    tolerance: f64,
    gap: Option<f64>,
) -> Check {
    Check { trace, dss_config, dss, policy, flags, tolerance, gap }
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
        let status = match (c.gap, holds) {
            (None, true) => "holds".to_string(),
            (None, false) => {
                failures.push(format!(
                    "{} {}: pliant {got:.2} s is {:+.1} % off DSS {:.2} s",
                    c.trace,
                    c.dss_config,
                    diff * 100.0,
                    c.dss
                ));
                "FAILS".to_string()
            }
            (Some(_), true) => {
                failures.push(format!("{} {}: now holds ({got:.2} s): move it out of the gaps", c.trace, c.dss_config));
                "holds (listed as gap)".to_string()
            }
            (Some(pinned), false) if (got - pinned).abs() > 0.01 => {
                failures.push(format!("{} {}: the gap moved: {got:.2} s, pinned {pinned:.2} s", c.trace, c.dss_config));
                "GAP MOVED".to_string()
            }
            (Some(_), false) => format!("KNOWN GAP (tolerance {:.0} %)", c.tolerance * 100.0),
        };
        eprintln!(
            "{:<22} {:<28} {:>10.2} {:>10.2} {:>+7.1}%  {status}",
            c.trace,
            c.dss_config,
            c.dss,
            got,
            diff * 100.0
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
