//! The simulator calibrated from the machine (issue 26): `pliant measure
//! --out FILE` on real cgroups and a temporary swap file writes the measured
//! rates as a parameter file, and `pliant simulate --config FILE` runs with
//! exactly those rates (echoed under `params`) and decides by them: a
//! checkpoint of `two-job`'s 5 GB low-priority job on the measured SSD rate
//! takes 5120 MB over that rate, so the high-priority job's JCT moves with it.

mod common;

use common::live::live_machine;
use common::{json, pliant, result, temp_dir};
use std::collections::BTreeMap;

/// The `KEY = VALUE` lines of a parameter file, comments left out.
fn keys(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap_or_else(|| panic!("not KEY = VALUE: {l}"));
            (k.trim().to_string(), v.trim().parse().unwrap_or_else(|_| panic!("not a number: {l}")))
        })
        .collect()
}

#[test]
fn measure_out_calibrates_simulate_config() {
    let Some(_lock) = live_machine("measure --out") else { return };
    let dir = temp_dir("calibration");
    let file = dir.join("machine.conf");
    let out = pliant(&["measure", "--sizes", "256M", "--temp-swap", "--out", file.to_str().unwrap()]);
    assert!(out.status.success(), "measure: {}", String::from_utf8_lossy(&out.stderr));
    let measured = keys(&std::fs::read_to_string(&file).unwrap());
    for key in ["reclaim_s_per_gb", "restore_s_per_gb", "ssd_mb_s"] {
        let v = measured.get(key).unwrap_or_else(|| panic!("{key} missing from {measured:?}"));
        assert!(*v > 0.0 && v.is_finite(), "{key} = {v}");
    }

    let calibrated = json(&[
        "simulate",
        "--scenario",
        "two-job",
        "--policies",
        "checkpoint-ssd",
        "--format",
        "json",
        "--config",
        file.to_str().unwrap(),
    ]);
    for (key, value) in &measured {
        let echoed = calibrated["params"][key].as_f64().unwrap_or_else(|| panic!("{key} not echoed"));
        assert_eq!(echoed, *value, "{key}");
    }
    let defaults = json(&["simulate", "--scenario", "two-job", "--policies", "checkpoint-ssd", "--format", "json"]);
    let prod_jct = |doc: &serde_json::Value| {
        result(doc, "checkpoint-ssd")["classes"]["production"]["jct"]["mean"].as_f64().unwrap()
    };
    let dump_s = |mb_s: f64| 5120.0 / mb_s;
    let default_ssd = defaults["params"]["ssd_mb_s"].as_f64().unwrap();
    // The high-priority job waits for the victim's dump: its JCT moves by the dump-time difference.
    let moved = prod_jct(&calibrated) - prod_jct(&defaults);
    let expected = dump_s(measured["ssd_mb_s"]) - dump_s(default_ssd);
    assert!((moved - expected).abs() < 0.02, "JCT moved {moved} s, the dump time by {expected} s");
    let _ = std::fs::remove_dir_all(&dir);
}
