//! `pliant what-if` on a journal made without root: the manager runs in
//! this process under `fifo` with a clock the test sets, and the test plays
//! its agent (a task exits 0 once its work has passed; the manager is
//! stepped at each submission, each exit and each deadline it names), as
//! `step_driver.rs` does. The journal is the manager's own, written as a
//! live cluster writes it.
//!
//! One node ⟨2 CPU, 1000 MB⟩. Two long jobs of one 100 s task ⟨1 CPU,
//! 400 MB⟩ at 0 s fill it; three short jobs of one 10 s task ⟨1 CPU,
//! 200 MB⟩ come at 10, 20 and 30 s, and a third long job at 40 s. Under
//! fifo the shorts wait for the longs: short-0 runs 100–110 s (JCT 100 s),
//! short-1 100–110 s (90 s), short-2 110–120 s (90 s); long-2 starts at
//! 110 s. The test stops the cluster at 150 s, so the journal's last step
//! is short-2's end at 120 s, with long-2 still running: it is replayed
//! with the 10 s of work it had done by then.

mod common;

use common::clocked::Arrival;
use pliant_core::{Micros, Resources, SECOND};
use pliant_live::scratch::ScratchDir;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Output;

/// (name, queue, submitted at s, work s, MB).
const JOBS: [(&str, &str, u64, u64, u64); 6] = [
    ("long-0", "long", 0, 100, 400),
    ("long-1", "long", 0, 100, 400),
    ("short-0", "short", 10, 10, 200),
    ("short-1", "short", 20, 10, 200),
    ("short-2", "short", 30, 10, 200),
    ("long-2", "long", 40, 100, 400),
];

/// The cluster stops here.
const END: Micros = 150 * SECOND;

/// Runs the jobs under fifo in a manager whose state is `dir`.
fn journal(dir: &Path) {
    let (mut m, clock) = common::clocked::manager(dir, "fifo", &[], Resources::new(2000, 1000));
    let arrivals = JOBS
        .iter()
        .map(|&(name, queue, at, work, mb)| {
            let body = json!({"name": name, "queue": queue, "cpu_milli": 1000, "mem_mb": mb, "command": ["sh"]});
            Arrival { at: at * SECOND, request: serde_json::from_value(body).unwrap(), work: work * SECOND }
        })
        .collect();
    common::clocked::play(&mut m, &clock, arrivals, END);
}

fn what_if(state: &Path, more: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_pliant"))
        .args([&["what-if", state.to_str().unwrap()][..], more].concat())
        .output()
        .unwrap()
}

fn json_of(state: &Path, more: &[&str]) -> Value {
    let out = what_if(state, &[&["--format", "json"][..], more].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The policies of the results, in order.
fn policies(doc: &Value) -> Vec<String> {
    doc["results"].as_array().unwrap().iter().map(|r| r["policy"].as_str().unwrap().to_string()).collect()
}

/// A class's mean JCT in a result, seconds.
fn mean(result: &Value, class: &str) -> f64 {
    result["classes"][class]["jct"]["mean"].as_f64().unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

#[test]
fn what_if_replays_the_journal_under_every_policy_beside_what_happened() {
    let dir = ScratchDir::new("pliant-what-if").unwrap();
    journal(dir.path());
    let state = dir.path();

    let doc = json_of(state, &[]);
    let w = &doc["what_if"];
    // The policy that ran first, then the default presets (every node can do everything).
    assert_eq!(policies(&doc), ["fifo", "priority", "kill", "ip", "gp", "suspend", "pliant"]);
    assert_eq!(w["policy_ran"], "fifo");
    assert_eq!((w["jobs"].as_u64(), w["nodes"].as_u64(), w["journal_nodes"].as_u64()), (Some(6), Some(1), Some(1)));
    // long-2 still ran when the journal ended: replayed, but in no JCT column.
    assert_eq!(w["unfinished_live"], json!(["long-2"]));
    assert_eq!(w["live"]["classes"]["long"]["jobs"], 2);
    // What happened: shorts of 100, 90 and 90 s; longs of 100 s.
    assert!(close(mean(&w["live"], "short"), 280.0 / 3.0), "{}", w["live"]);
    assert!(close(mean(&w["live"], "long"), 100.0), "{}", w["live"]);
    // The fifo replay is what happened, to the µs: the band is 0.
    assert!(w["band_worst_jct_error"].as_f64().unwrap() < 1e-9, "{w}");
    let fifo = &doc["results"][0];
    assert!(close(mean(fifo, "short"), 280.0 / 3.0) && close(mean(fifo, "long"), 100.0), "{fifo}");
    // A policy that preempts for the short jobs serves them better than
    // fifo did, and ranks above it by mean JCT.
    let kill = &doc["results"][2];
    assert!(mean(kill, "short") < 20.0, "{kill}");
    let ranking: Vec<&str> = w["ranking"].as_array().unwrap().iter().map(|r| r["policy"].as_str().unwrap()).collect();
    assert_eq!(ranking.len(), 7);
    assert_ne!(ranking[0], "fifo", "{}", w["ranking"]);
    let fifo_rank = &w["ranking"].as_array().unwrap().iter().find(|r| r["policy"] == "fifo").unwrap();
    assert_eq!((fifo_rank["vs_ran"].as_f64(), fifo_rank["within_band"].as_bool()), (Some(0.0), Some(true)));

    // The table has the live row first, then the replays, and the band.
    let out = what_if(state, &["--policies", "kill,gp"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8(out.stdout).unwrap();
    eprintln!("{table}");
    let rows: Vec<&str> = table.lines().filter_map(|l| l.split(" |").next()).map(str::trim).collect();
    let at = rows.iter().position(|r| *r == "fifo (live)").expect(&table);
    assert_eq!(rows[at..at + 4], ["fifo (live)", "fifo", "kill", "gp"], "{table}");
    assert!(table.contains("is off by at most 0.0 % in JCT"), "{table}");
    assert!(table.contains("1 job did not finish live, replayed but left out of the JCT columns: long-2\n"), "{table}");

    // A window: from 15 s, short-1, short-2 and long-2, on an empty node:
    // each short runs at once (10 s) where live it waited (90 s).
    let late = json_of(state, &["--since", "15", "--policies", "kill"]);
    assert_eq!(late["what_if"]["jobs"], 3);
    assert!(close(mean(&late["results"][0], "short"), 10.0), "{late}");
    let band = late["what_if"]["band_worst_jct_error"].as_f64().unwrap();
    assert!(close(band, 1.0 - 10.0 / 90.0), "{band}");
    // Until 5 s: the two long jobs alone, 100 s under every policy.
    let early = json_of(state, &["--until", "5", "--policies", "kill,gp"]);
    assert_eq!(early["what_if"]["jobs"], 2);
    for r in early["results"].as_array().unwrap() {
        assert!(close(mean(r, "long"), 100.0), "{r}");
    }

    // Two nodes: under fifo the shorts no longer wait; the band is still
    // the twin's on the cluster as it was.
    let two = json_of(state, &["--nodes", "2", "--policies", "kill"]);
    assert_eq!((two["what_if"]["nodes"].as_u64(), two["what_if"]["journal_nodes"].as_u64()), (Some(2), Some(1)));
    assert!(close(mean(&two["results"][0], "short"), 10.0), "{two}");
    assert!(two["what_if"]["band_worst_jct_error"].as_f64().unwrap() < 1e-9);

    // --out writes simulate's files, the live row in jobs.csv.
    let out_dir = state.join("results");
    let out = what_if(state, &["--policies", "kill", "--out", out_dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = std::fs::read_to_string(out_dir.join("jobs.csv")).unwrap();
    assert_eq!(csv.lines().filter(|l| l.starts_with("fifo (live),")).count(), 5, "{csv}");
    for file in ["results.json", "preemptions.csv", "jct_cdf.svg", "cpu_timeline.svg"] {
        assert!(out_dir.join(file).is_file(), "{file}");
    }
}

#[test]
fn what_if_refuses_bad_input_before_writing_anything() {
    let dir = ScratchDir::new("pliant-what-if-errors").unwrap();
    journal(dir.path());
    let out_dir = dir.path().join("never");
    let fails = |state: &Path, more: &[&str], says: &str| {
        let out = what_if(state, &[more, &["--out", out_dir.to_str().unwrap()]].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(says), "{more:?}: {err}");
        assert!(!out_dir.exists(), "{more:?} wrote {}", out_dir.display());
    };
    let empty = ScratchDir::new("pliant-what-if-empty").unwrap();
    fails(empty.path(), &[], "no journal.sqlite (pliant local or serve) nor journal.jsonl (pliant slurm) here");
    fails(dir.path(), &["--since", "1000"], "no job was submitted in the window asked");
    fails(dir.path(), &["--policies", "kill,nope"], "--policies nope: unknown policy `nope`");
    fails(dir.path(), &["--since", "20", "--until", "10"], "--since must come before --until");
}

/// A Slurm controller's journal, recorded from a run of `slurm.rs`'s
/// `big_c_graceful_preemption_frees_the_memory_a_short_job_needs` (two
/// nodes ⟨2 CPU, 1000 MB⟩, `gp`: two long jobs of 700 MB, then a short one
/// of 700 MB for which both are shrunk; the test then stops the longs),
/// read by the twin and what-if as a manager's journal is: no Slurm here.
const SLURM_RUN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/slurm-gp");

#[test]
fn the_twin_and_what_if_read_a_slurm_controller_s_journal() {
    let state = Path::new(SLURM_RUN);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pliant"))
        .args(["twin", SLURM_RUN, "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let twin: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(twin["policy"], "gp");
    // Slurm's jobs 2 and 1 (submitted in that order), then the short job 3.
    let names: Vec<&str> = twin["jobs"].as_array().unwrap().iter().map(|j| j["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["slurm-2", "slurm-1", "slurm-3"]);
    // Both long jobs shrunk gracefully at 2.5 s, in the replay as live.
    let live: Vec<(f64, u64, &str)> = twin["live_preemptions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["at_s"].as_f64().unwrap(), p["job"].as_u64().unwrap(), p["mechanism"].as_str().unwrap()))
        .collect();
    assert_eq!(live, [(2.5, 1, "graceful"), (2.5, 0, "graceful")]);
    assert!(twin["preemption_divergence"].is_null(), "{}", twin["preemption_divergence"]);
    // The node agents' reclaim and resume reports give the rates: 1272 MB
    // swapped out in 14.94 s, 1272 MB read back in 3.05 s.
    let shown = &twin["rates"]["reclaim"]["journal"];
    assert_eq!((shown["episodes"].as_u64(), shown["mb"].as_u64()), (Some(2), Some(1272)));
    assert_eq!(twin["rates"]["reclaim"]["from"], "journal");
    assert_eq!(twin["rates"]["restore"]["journal"]["mb"], 1272);
    // Every JCT within 15 %: the replay starts the short job about 1 s
    // sooner than Slurm did (its release-to-start is no part of the model).
    let worst = twin["worst_jct_error"].as_f64().unwrap();
    assert!(worst < 0.15, "{worst}");
    // Work lost to kills under the one name `simulate` gives it: gp killed nothing.
    assert_eq!(twin["schema_version"], 2);
    assert_eq!(
        (twin["live_lost_work_core_seconds"].as_f64(), twin["sim_lost_work_core_seconds"].as_f64()),
        (Some(0.0), Some(0.0))
    );

    let doc = json_of(state, &[]);
    assert_eq!(policies(&doc), ["gp", "fifo", "priority", "kill", "ip", "suspend", "pliant"]);
    assert_eq!((doc["what_if"]["nodes"].as_u64(), doc["what_if"]["jobs"].as_u64()), (Some(2), Some(3)));
    assert!((doc["what_if"]["band_worst_jct_error"].as_f64().unwrap() - worst).abs() < 1e-12);
}
