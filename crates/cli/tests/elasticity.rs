//! Memory elasticity from the command line: elastic workloads, bad elasticity
//! refused with file and line (exit 2), and the Table 2 sweep.

mod common;

use common::{error_of, json, pliant, result, temp_dir};

const CLUSTER: &str = r#"{"cluster":{"nodes":[{"cpu":16,"mem_mb":10000}]}}"#;

fn job(submit: u32, tasks: u32, mem: u32, secs: u32, elastic: &str) -> String {
    format!(
        r#"{{"job":{{"submit_s":{submit},"class":"long"{elastic},"phases":[{{"tasks":[{{"count":{tasks},"cpu":1,"mem_mb":{mem},"duration_s":{secs},"estimate_s":{secs}}}]}}]}}}}"#
    )
}

/// Fig. 3 as a file: an 8 GB background task 0–100 s; three 3 GB, 20 s
/// elastic tasks (2×) at 1 s: yarn ends the job at 120 s, elastic at 41 s.
#[test]
fn an_elastic_workload_file_runs_under_yarn_and_elastic() {
    let dir = temp_dir("elastic-fig3");
    let path = dir.join("fig3.jsonl");
    let text =
        format!("{CLUSTER}\n{}\n{}\n", job(0, 1, 8000, 100, ""), job(1, 3, 3000, 20, r#","elastic":{"penalty":2}"#));
    std::fs::write(&path, text).unwrap();
    let doc =
        json(&["simulate", "--workload", path.to_str().unwrap(), "--policies", "yarn,elastic", "--format", "json"]);
    let makespan = |p| result(&doc, p)["makespan_s"].as_f64().unwrap();
    assert_eq!((makespan("yarn"), makespan("elastic")), (120.0, 100.0));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn bad_elasticity_names_file_and_line() {
    let dir = temp_dir("elastic-bad");
    for (elastic, reason) in [
        (r#","elastic":{"penalty":0.5}"#, "penalty 0.5 is below 1"),
        (r#","elastic":{"penalty":1.5,"min_mem_mb":5000}"#, "minimum memory 5000 MB is above the ideal memory 3000 MB"),
    ] {
        let path = dir.join("bad.jsonl");
        std::fs::write(&path, format!("{CLUSTER}\n{}\n", job(1, 3, 3000, 20, elastic))).unwrap();
        let err = error_of(&["simulate", "--workload", path.to_str().unwrap(), "--policies", "elastic"]);
        assert!(err.contains("bad.jsonl:2:") && err.contains(reason), "{err}");
    }
    std::fs::remove_dir_all(dir).unwrap();
    assert!(error_of(&["elasticity", "--traces", "1", "--penalty", "0.9"]).contains("below 1"));
    assert!(error_of(&["elasticity", "--traces", "1", "--misestimate", "0.2,0.1"]).contains("LO,HI"));
    assert!(error_of(&["elasticity", "--traces", "1", "--misestimated", "memory"]).contains("--misestimate <LO,HI>"));
}

#[test]
fn the_sweep_prints_the_ratio_distribution() {
    let dir = temp_dir("elastic-sweep");
    let plot = dir.join("cdf.svg");
    let out = pliant(&[
        "elasticity",
        "--traces",
        "1",
        "--seed",
        "3",
        "--misestimate",
        "-0.15,0.15",
        "--misestimated",
        "memory",
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    for want in [
        "Reducer penalty 1.5x, mis-estimation [-0.15, 0.15] of ideal memory",
        "elastic/yarn",
        "elastic/meganode",
        "median",
        "p90",
        "worst",
        "traces/s",
    ] {
        assert!(text.contains(want), "{text}");
    }
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(svg.contains("elastic/yarn") && svg.contains("elastic/meganode"), "{svg}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// DSS's SLS variant (`c.nr`, `c.dur` ms, `c.mem` MB, `c.type`, `c.prio`) with
/// the cluster given DSS-style: Fig. 3's jobs on one ⟨16, 10 GB⟩ node; yarn
/// runs the three tasks after the 8 GB one. With DSS's AMs and heartbeats
/// (one container per node heartbeat, tasks one AM heartbeat after their AM,
/// run two after being placed): AM 1 at 0 s, AM 2 at 1 s, the 8 GB task
/// placed at 2 s runs 4–104 s; the 3 GB tasks, placed at 104, 105 and 106 s,
/// end by 128 s. A malformed row names
/// file and the line of the bad field under --strict.
#[test]
fn dss_traces_are_read_with_a_dss_style_cluster() {
    let dir = temp_dir("elastic-dss");
    let job = |id, start, dur, mem, nr| {
        format!(
            "{{\n  \"am.type\": \"mapreduce\",\n  \"job.start.ms\": {start},\n  \"job.id\": \"job_{id}\",\n  \"job.tasks\": [\n    {{\"c.dur\": {dur}, \"c.mem\": {mem}, \"c.nr\": {nr}, \"c.type\": \"MAP\", \"c.prio\": 20}}\n  ]\n}}\n"
        )
    };
    let path = dir.join("dss.json");
    std::fs::write(&path, format!("{}{}", job(1, 0, 100_000, "8000", 1), job(2, 1000, 20_000, "3000", 3))).unwrap();
    let p = path.to_str().unwrap();
    let doc = json(&[
        "simulate",
        "--workload",
        p,
        "--nodes",
        "1",
        "--node",
        "16,10",
        "--policies",
        "yarn",
        "--format",
        "json",
    ]);
    assert_eq!(result(&doc, "yarn")["makespan_s"].as_f64(), Some(128.0));
    std::fs::write(&path, format!("{}{}", job(1, 0, 100_000, "8000", 1), job(2, 1000, 20_000, "\"lots\"", 3))).unwrap();
    let err = error_of(&["simulate", "--workload", p, "--nodes", "1", "--node", "16,10", "--strict"]);
    // The bad `c.mem` of the second job, on the file's line 14.
    assert!(err.contains("dss.json:14:") && err.contains("lots"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}
