//! The `pliant` binary end to end: outputs, the README's default comparison,
//! and clear errors (exit code 2) for bad input.

mod common;

use common::{error_of, json, pliant, result, says_what_it_wrote, temp_dir};
use serde_json::Value;

/// The README's first command: on `mixed` (seed 1), fifo has the worst short-job
/// p95, kill a short-job p95 within 1.2× of the best, fifo the best long-job p90,
/// and kill a worse long-job p90 than fifo with non-zero waste.
#[test]
fn default_comparison_has_the_expected_shape() {
    let doc = json(&["simulate", "--format", "json"]);
    assert_eq!(doc["scenario"], "mixed");
    let p =
        |policy: &str, class: &str, stat: &str| result(&doc, policy)["classes"][class]["jct"][stat].as_f64().unwrap();
    let policies = ["fifo", "priority", "reserve", "kill"];
    let best_short = policies.iter().map(|x| p(x, "short", "p95")).fold(f64::MAX, f64::min);
    for x in &policies[1..] {
        assert!(p("fifo", "short", "p95") > p(x, "short", "p95"), "fifo short p95 should be worst ({x})");
        assert!(p("fifo", "long", "p90") < p(x, "long", "p90"), "fifo long p90 should be best ({x})");
    }
    assert!(p("kill", "short", "p95") <= 1.2 * best_short);
    assert!(result(&doc, "kill")["waste_core_seconds"].as_f64().unwrap() > 0.0);
}

/// Every documented key is present.
#[test]
fn json_has_the_documented_keys() {
    let doc = json(&["simulate", "--scale", "0.3", "--policies", "fifo,kill", "--format", "json"]);
    for key in ["scenario", "seed", "scale", "params", "results"] {
        assert!(!doc[key].is_null(), "missing {key}");
    }
    let r = result(&doc, "kill");
    for class in ["short", "long"] {
        let c = &r["classes"][class];
        for key in ["jobs", "failed", "cov"] {
            assert!(c[key].is_number(), "classes.{class}.{key}");
        }
        for dist in ["jct", "queue_delay"] {
            for stat in ["mean", "p50", "p90", "p95", "p99"] {
                assert!(c[dist][stat].is_number(), "classes.{class}.{dist}.{stat}");
            }
        }
    }
    assert!(r["utilization"]["cpu_mean"].as_f64().unwrap() > 0.0);
    assert!(r["waste_core_seconds"].is_number());
    assert!(r["preemptions"]["kill"].as_u64().unwrap() > 0);
    assert!(r["sim"]["events"].as_u64().unwrap() > 0);
    assert!(r["sim"]["wall_seconds"].is_number());
    assert_eq!(doc["params"]["max_attempts"], 4);
}

/// Same seed → byte-identical JSON once the wall-clock fields are removed.
#[test]
fn same_seed_gives_identical_json() {
    let strip = |mut doc: Value| {
        for r in doc["results"].as_array_mut().unwrap() {
            r["sim"].as_object_mut().unwrap().retain(|k, _| k == "events");
        }
        serde_json::to_string(&doc).unwrap()
    };
    let args = ["simulate", "--scale", "0.5", "--seed", "9", "--format", "json"];
    let (a, b) = (strip(json(&args)), strip(json(&args)));
    assert_eq!(a, b);
    let other = strip(json(&["simulate", "--scale", "0.5", "--seed", "10", "--format", "json"]));
    assert_ne!(a, other);
}

/// `--out` writes the per-job CSV (a row per job per policy) and both plots with
/// one line per policy and panel.
#[test]
fn out_writes_csv_and_plots() {
    let dir = temp_dir("out");
    let d = dir.to_str().unwrap();
    let out = pliant(&["simulate", "--scale", "0.3", "--policies", "fifo,kill", "--format", "json", "--out", d]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    says_what_it_wrote(&out.stderr, &dir);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let jobs: u64 =
        ["short", "long"].iter().map(|c| result(&doc, "fifo")["classes"][c]["jobs"].as_u64().unwrap()).sum();
    let csv = std::fs::read_to_string(dir.join("jobs.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with("policy,job,class"));
    assert_eq!(lines.count() as u64, 2 * jobs);
    // jct_cdf: a line per policy in each of its two panels and a legend sample
    // beside them, fifo's wider under kill's (4 and 2 pixels: equal curves stay
    // visible); cpu_timeline: a panel per policy, named with its mean.
    for (plot, wide, narrow, name) in
        [("jct_cdf.svg", 2 + 1, 2 + 1, ">\nkill"), ("cpu_timeline.svg", 0, 2, ">\nkill (mean ")]
    {
        let svg = std::fs::read_to_string(dir.join(plot)).unwrap();
        assert!(svg.starts_with("<svg"), "{plot}");
        let width = |w: &str| svg.lines().filter(|l| l.starts_with("<polyline") && l.contains(w)).count();
        assert_eq!(width("stroke-width=\"4\""), wide, "{plot}: fifo's lines");
        assert_eq!(width("stroke-width=\"2\""), narrow, "{plot}: kill's lines");
        assert!(svg.contains(name), "{plot}: names the policy");
        assert!(svg.contains("mixed (seed 1, scale 0.3)"), "{plot}: names the run");
    }
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(saved["results"][1]["policy"], "kill");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Small traps: a negative scale is a value to refuse, not an unknown flag; an
/// empty workload directory is named; --scale on the fixed two-job is refused.
#[test]
fn small_traps_are_clear_errors() {
    let e = error_of(&["simulate", "--scale", "-1"]);
    assert!(e.starts_with("error: --scale must be a number in (0, 10000], got -1"), "{e}");
    let dir = temp_dir("empty-workload");
    let e = error_of(&["simulate", "--workload", dir.to_str().unwrap()]);
    assert!(e.contains(&format!("{}: no trace or workload file found", dir.display())), "{e}");
    let e = error_of(&["simulate", "--scenario", "two-job", "--scale", "2"]);
    assert!(e.contains("two-job is fixed") && e.contains("--scale"), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn unknown_scenario_and_policy_are_clear_errors() {
    let e = error_of(&["simulate", "--scenario", "nope"]);
    assert!(e.contains("unknown scenario `nope`") && e.contains("mixed"), "{e}");
    let e = error_of(&["simulate", "--policies", "fifo,nope"]);
    assert!(e.contains("unknown policy `nope`") && e.contains("kill"), "{e}");
    let e = error_of(&["simulate", "--set", "max_attempts=0"]);
    assert!(e.contains("max_attempts"), "{e}");
    let e = error_of(&["simulate", "--set", "warp=9"]);
    assert!(e.contains("unknown parameter `warp`"), "{e}");
    let e = error_of(&["simulate", "--scale", "0"]);
    assert!(e.contains("--scale"), "{e}");
}

#[test]
fn bad_workload_files_name_file_line_and_problem() {
    let dir = temp_dir("bad");
    let cluster = r#"{"cluster":{"nodes":[{"count":2,"cpu":4,"mem_mb":4096}]}}"#;
    let cases = [
        ("malformed.jsonl", format!("{cluster}\n{{\"job\": oops}}\n"), ":2:", "expected"),
        ("nonodes.jsonl", r#"{"cluster":{"nodes":[]}}"#.to_string(), ":1:", "no nodes"),
        (
            "toobig.jsonl",
            format!("{cluster}\n\n{{\"job\":{{\"submit_s\":0,\"class\":\"long\",\"phases\":[{{\"tasks\":[{{\"cpu\":64,\"mem_mb\":1,\"duration_s\":5}}]}}]}}}}\n"),
            ":3:",
            "bigger than every node",
        ),
    ];
    for (name, text, line, problem) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let e = error_of(&["simulate", "--workload", path.to_str().unwrap()]);
        assert!(e.contains(&format!("{name}{line}")) && e.contains(problem), "{name}: {e}");
    }
    let e = error_of(&["simulate", "--workload", dir.join("missing.jsonl").to_str().unwrap()]);
    assert!(e.contains("missing.jsonl") && e.contains("cannot open"), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// A class with no finished job measured nothing: `null` in the JSON, `-` in
/// the table (here: no long job at all, and a single node and job, in the
/// singular).
#[test]
fn nothing_measured_is_null_and_dash_and_counts_are_grammatical() {
    let dir = temp_dir("null");
    let path = dir.join("w.jsonl");
    std::fs::write(
        &path,
        concat!(
            "{\"cluster\":{\"nodes\":[{\"cpu\":8,\"mem_mb\":8192}]}}\n",
            "{\"job\":{\"name\":\"b\",\"submit_s\":10,\"class\":\"short\",\"phases\":[{\"tasks\":[{\"cpu\":4,\"mem_mb\":4096,\"duration_s\":20}]}]}}\n",
        ),
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let doc = json(&["simulate", "--workload", p, "--policies", "fifo,kill", "--format", "json"]);
    assert_eq!(doc["schema_version"], 1);
    let long = &result(&doc, "fifo")["classes"]["long"];
    assert_eq!(long["jobs"], 0);
    for key in ["jct", "queue_delay", "jct_retry"] {
        assert!(long[key]["mean"].is_null() && long[key]["p99"].is_null(), "{key}: {long}");
    }
    assert!(long["cov"].is_null(), "{long}");
    assert_eq!(result(&doc, "fifo")["classes"]["short"]["jct"]["mean"], 20.0);
    let out = pliant(&["simulate", "--workload", p, "--policies", "fifo,kill"]);
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains(": 1 job on 1 node\n"), "{table}");
    let fifo: Vec<&str> = table.lines().find(|l| l.starts_with("fifo")).unwrap().split_whitespace().collect();
    assert_eq!(&fifo[8..15], ["|", "0", "0", "-", "-", "-", "-"], "{table}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A native workload file runs, and long jobs under `reserve` with every node
/// reserved are reported as never able to run instead of hanging.
#[test]
fn workload_file_runs_and_impossible_runs_are_reported() {
    let dir = temp_dir("wl");
    let path = dir.join("w.jsonl");
    std::fs::write(
        &path,
        concat!(
            "{\"cluster\":{\"nodes\":[{\"cpu\":8,\"mem_mb\":8192}]}}\n",
            "{\"job\":{\"name\":\"a\",\"submit_s\":0,\"class\":\"long\",\"phases\":[{\"tasks\":[{\"cpu\":8,\"mem_mb\":8192,\"duration_s\":100}]}]}}\n",
            "{\"job\":{\"name\":\"b\",\"submit_s\":10,\"class\":\"short\",\"phases\":[{\"tasks\":[{\"cpu\":4,\"mem_mb\":4096,\"duration_s\":20}]}]}}\n",
        ),
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let doc = json(&["simulate", "--workload", p, "--policies", "fifo", "--format", "json"]);
    assert_eq!(result(&doc, "fifo")["classes"]["short"]["jct"]["mean"], 110.0);
    let e = error_of(&["simulate", "--workload", p, "--policies", "reserve", "--set", "reserve_fraction=1"]);
    assert!(e.contains("can never run"), "{e}");
    // On two nodes the short job finds room without preempting: the user is
    // told why kill matches fifo. On one node kill preempts, and no note.
    let note = "no policy preempted anything";
    let out = pliant(&["simulate", "--workload", p, "--policies", "fifo,kill", "--nodes", "2"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains(note), "{out:?}");
    let out = pliant(&["simulate", "--workload", p, "--policies", "fifo,kill"]);
    assert!(out.status.success() && !String::from_utf8_lossy(&out.stderr).contains(note), "{out:?}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// A native file is replayed streamed, each run reading its jobs in
/// submission order wherever they are in the file: the per-job records are
/// those of the whole file read at once (`--slowdown` reads it so), and a
/// bad line is still named with its file and line.
#[test]
fn a_native_file_streams_in_submission_order() {
    let dir = temp_dir("stream");
    let path = dir.join("w.jsonl");
    let job = |name: &str, submit: u32, secs: u32| {
        format!(
            "{{\"job\":{{\"name\":\"{name}\",\"submit_s\":{submit},\"class\":\"short\",\"phases\":[{{\"tasks\":[{{\"count\":2,\"cpu\":4,\"mem_mb\":4096,\"duration_s\":{secs}}}]}}]}}}}\n"
        )
    };
    let mut text = "# out of order on purpose\n{\"cluster\":{\"nodes\":[{\"cpu\":8,\"mem_mb\":8192}]}}\n\n".to_string();
    for (name, submit, secs) in [("c", 30, 5), ("a", 0, 40), ("b", 10, 20), ("b2", 10, 7), ("d", 5, 9)] {
        text += &job(name, submit, secs);
    }
    std::fs::write(&path, &text).unwrap();
    let (p, streamed, whole) = (path.to_str().unwrap(), dir.join("streamed"), dir.join("whole"));
    for (out, extra) in [(&streamed, None), (&whole, Some("--slowdown"))] {
        let mut args = vec!["simulate", "--workload", p, "--policies", "fifo,kill", "--out", out.to_str().unwrap()];
        args.extend(extra);
        assert!(pliant(&args).status.success());
    }
    let csv = std::fs::read_to_string(streamed.join("jobs.csv")).unwrap();
    assert_eq!(csv, std::fs::read_to_string(whole.join("jobs.csv")).unwrap());
    let names: Vec<&str> = csv.lines().skip(1).take(5).map(|l| l.split(',').nth(1).unwrap()).collect();
    assert_eq!(names, ["a", "d", "b", "b2", "c"]);
    std::fs::write(&path, text + "{\"cluster\":{\"nodes\":[{\"cpu\":8,\"mem_mb\":8192}]}}\n").unwrap();
    let e = error_of(&["simulate", "--workload", p, "--policies", "fifo"]);
    assert!(e.contains("w.jsonl:9:") && e.contains("second cluster record (first at line 2)"), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn catalogues_list_scenarios_presets_and_keys() {
    let out = String::from_utf8(pliant(&["scenarios"]).stdout).unwrap();
    for s in ["mixed", "high-load", "low-load", "multi-load", "bigc-fig2-alone"] {
        assert!(out.contains(s), "{out}");
    }
    // Every name, the longest too, is followed by its text in one column.
    let column = |l: &str| l.find("  ").map(|i| i + l[i..].len() - l[i..].trim_start().len());
    let columns: std::collections::BTreeSet<Option<usize>> = out.lines().map(column).collect();
    assert!(columns.len() == 1 && !columns.contains(&None), "the texts start in {columns:?}:\n{out}");
    let out = String::from_utf8(pliant(&["policies"]).stdout).unwrap();
    for s in ["fifo", "priority", "reserve", "kill", "reserve_fraction", "max_attempts"] {
        assert!(out.contains(s), "{out}");
    }
    // Every step's every value says what it does.
    let steps: Vec<&str> =
        out.lines().skip_while(|l| !l.starts_with("steps")).skip(1).take_while(|l| !l.is_empty()).collect();
    let values: Vec<&str> = steps.iter().copied().filter(|l| l.starts_with("    ")).collect();
    assert_eq!(steps.len() - values.len(), 10, "ten steps: {steps:?}");
    assert!(values.len() >= 35, "{values:?}");
    for line in values {
        assert!(line.split_whitespace().count() >= 3, "a value without what it does: {line}");
    }
}

/// Each point of a sweep is the mean over its seeds of what `simulate --set` gives
/// for that value and seed, computed here by separate `simulate` runs.
#[test]
fn sweep_points_are_seed_means_of_simulate_runs() {
    let doc = json(&[
        "sweep",
        "--scenario",
        "high-load",
        "--scale",
        "0.3",
        "--vary",
        "delayed_resumption=0,3",
        "--policies",
        "ip,gp",
        "--seeds",
        "2",
        "--metric",
        "classes.short.queue_delay.mean,classes.long.jct.p90",
        "--format",
        "json",
    ]);
    assert_eq!(doc["key"], "delayed_resumption");
    assert_eq!(doc["seeds"], serde_json::json!([1, 2]));
    let metrics = doc["metrics"].as_array().unwrap();
    assert_eq!(metrics.len(), 2);
    for (value, d) in ["0", "3"].iter().enumerate() {
        let set = format!("delayed_resumption={d}");
        let runs: Vec<Value> = ["1", "2"]
            .iter()
            .map(|seed| {
                let args = ["simulate", "--scenario", "high-load", "--scale", "0.3", "--seed", seed, "--set", &set];
                json(&[&args[..], &["--policies", "ip,gp", "--format", "json"]].concat())
            })
            .collect();
        for (m, path) in [["short", "queue_delay", "mean"], ["long", "jct", "p90"]].iter().enumerate() {
            for (p, policy) in ["ip", "gp"].iter().enumerate() {
                let series = &metrics[m]["series"][p];
                assert_eq!(series["policy"], *policy);
                let figures: Vec<f64> = runs
                    .iter()
                    .map(|r| result(r, policy)["classes"][path[0]][path[1]][path[2]].as_f64().unwrap())
                    .collect();
                assert_eq!(series["per_seed"][value], serde_json::json!(figures), "{policy} {path:?} D={d}");
                let mean = series["mean"][value].as_f64().unwrap();
                assert!((mean - (figures[0] + figures[1]) / 2.0).abs() < 1e-9, "{policy} {path:?} D={d}");
            }
        }
    }
}

/// A bad key, value or metric is a clear error before anything is written.
#[test]
fn sweep_rejects_bad_keys_values_and_metrics() {
    let dir = temp_dir("sweep-errors");
    let out = dir.join("out");
    let out = out.to_str().unwrap();
    assert!(error_of(&["sweep", "--vary", "no_such_key=1,2", "--out", out]).contains("unknown parameter `no_such_key`"));
    assert!(error_of(&["sweep", "--vary", "delayed_resumption=1,x", "--out", out]).contains("delayed_resumption=x"));
    assert!(error_of(&["sweep", "--vary", "delayed_resumption", "--out", out]).contains("KEY=V1,V2"));
    let err = error_of(&["sweep", "--vary", "delayed_resumption=1", "--metric", "classes.short.p95", "--out", out]);
    assert!(err.contains("`classes.short` has keys") && err.contains("queue_delay"), "{err}");
    assert!(!dir.join("out").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--out` writes the JSON and one plot per metric.
#[test]
fn sweep_out_writes_json_and_a_plot_per_metric() {
    let dir = temp_dir("sweep-out");
    let args =
        ["sweep", "--scale", "0.3", "--vary", "gp_units=1,4", "--policies", "gp", "--metric", "classes.long.cov"];
    let out = pliant(&[&args[..], &["--out", dir.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    says_what_it_wrote(&out.stderr, &dir);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["values"], serde_json::json!([1, 4]), "numbers as numbers");
    let svg = std::fs::read_to_string(dir.join("sweep_classes_long_cov.svg")).unwrap();
    assert!(svg.contains("gp_units") && svg.contains("<svg"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A storage key sets the scheduler's estimate and the simulator's truth at
/// once. two-job with NVM at 512 MB/s: dumping or restoring 5 GB takes 10 s;
/// adaptive-nvm checkpoints (30 s of progress > 10 + 10 s): the dump runs
/// 30–40, high 40–100 (JCT 70 = 7/6 of kill's 60), the restore 100–110 and
/// low's last 30 s end at 140. Waste: 4 cores × 20 s.
#[test]
fn storage_keys_set_estimates_and_truth() {
    let doc = json(&[
        "simulate",
        "--scenario",
        "two-job",
        "--policies",
        "priority-kill,adaptive-nvm",
        "--set",
        "nvm_mb_s=512",
        "--format",
        "json",
    ]);
    assert_eq!(doc["params"]["nvm_mb_s"], 512.0);
    let r = result(&doc, "adaptive-nvm");
    assert_eq!(r["classes"]["production"]["jct"]["mean"], 70.0);
    assert_eq!(r["classes"]["free"]["jct"]["mean"], 140.0);
    assert_eq!(r["waste_core_seconds"], 80.0);
    assert_eq!(r["checkpoints"]["full_dumps"], 1);
    assert!((r["jct_vs_kill"]["production"].as_f64().unwrap() - 70.0 / 60.0).abs() < 1e-12);
    let err = error_of(&["simulate", "--scenario", "two-job", "--set", "dirty_fraction=2"]);
    assert!(err.contains("dirty_fraction") && err.contains("between 0 and 1"), "{err}");
}
