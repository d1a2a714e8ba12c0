//! DSS (the YARN-ME paper's simulator) traces from the command line: the
//! lossless round trip through `generate --format dss`, DSS's own ten-line
//! layout, the penalty keys, and malformed traces (nothing dropped silently).
//! `tests/data/dss/` holds two traces exactly as DSS's generator wrote them
//! (see its README).

mod common;

use common::{error_of, pliant, temp_dir};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/dss");

/// Runs `pliant ARGS` in `dir`, which must succeed; returns its stdout.
fn pliant_in(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_pliant")).current_dir(dir).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// A results document without its wall-clock fields (the only ones that may differ between runs).
fn without_wall_clock(mut v: Value) -> Value {
    match &mut v {
        Value::Object(o) => {
            o.remove("wall_seconds");
            o.remove("events_per_second");
            for x in o.values_mut() {
                *x = without_wall_clock(x.take());
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| *x = without_wall_clock(x.take())),
        _ => {}
    }
    v
}

/// `generate --format dss` then `simulate` gives what `generate` (native) then
/// `simulate` gives, byte for byte (jobs.csv, and results without wall-clock
/// fields), for both penalty models: the reader keeps `c.penalty`/`c.ib`, the
/// jobs' names and classes, and the 10,240 MB node DSS runs on.
#[test]
fn generate_dss_then_simulate_equals_native() {
    let root = temp_dir("dss-roundtrip");
    for model in ["reducer", "step"] {
        let (native, dss) = (root.join(format!("native-{model}")), root.join(format!("dss-{model}")));
        let mut outputs = Vec::new();
        for (dir, format, cluster) in
            [(&native, "native", &[][..]), (&dss, "dss", &["--nodes", "100", "--node", "16,10"][..])]
        {
            std::fs::create_dir_all(dir).unwrap();
            let gen = ["generate", "yarn-me", "--jobs", "30", "--seed", "4", "--model", model, "--penalty", "3"];
            pliant_in(dir, &[&gen[..], &["--format", format, "--out", "trace.json"]].concat());
            let run =
                ["simulate", "--workload", "trace.json", "--policies", "yarn,elastic,meganode", "--format", "json"];
            let stdout = pliant_in(dir, &[&run[..], cluster, &["--out", "out"]].concat());
            let doc: Value = serde_json::from_slice(&stdout).unwrap();
            let jobs_csv = std::fs::read(dir.join("out/jobs.csv")).unwrap();
            outputs.push((without_wall_clock(doc), jobs_csv));
        }
        let (n, d) = (&outputs[0], &outputs[1]);
        assert_eq!(n.1, d.1, "{model}: jobs.csv differs");
        assert_eq!(serde_json::to_string(&n.0).unwrap(), serde_json::to_string(&d.0).unwrap(), "{model}");
        // The penalty is in play: elastic under-sizes tasks and ends jobs sooner than yarn.
        let jct = |i: usize| n.0["results"][i]["classes"]["long"]["jct"]["mean"].as_f64().unwrap();
        assert!(jct(1) < jct(0), "{model}: elastic {} vs yarn {}", jct(1), jct(0));
    }
    std::fs::remove_dir_all(root).unwrap();
}

/// The lines of a record with every value blanked: the keys and layout alone.
fn shape(record: &str) -> Vec<String> {
    record
        .lines()
        .map(|l| {
            let mut out = String::new();
            let mut in_string = false;
            let mut after_colon = false;
            for c in l.chars() {
                match c {
                    '"' => in_string = !in_string,
                    ':' if !in_string => after_colon = true,
                    ',' | '}' | '{' | '[' | ']' if !in_string => after_colon = false,
                    _ => {}
                }
                if !after_colon || c == ':' {
                    out.push(c);
                }
            }
            out
        })
        .collect()
}

/// DSS's parser reads ten lines at a time: `generate --format dss` writes each
/// job as DSS's generator does (same lines, keys, order and spacing; the
/// penalty keys added), so DSS reads every job back.
#[test]
fn generate_dss_writes_dss_generators_layout() {
    let dir = temp_dir("dss-layout");
    pliant_in(&dir, &["generate", "yarn-me", "--jobs", "7", "--seed", "2", "--format", "dss", "--out", "t.json"]);
    let ours = std::fs::read_to_string(dir.join("t.json")).unwrap();
    let theirs = std::fs::read_to_string(Path::new(DATA).join("dss-2718.json")).unwrap();
    assert_eq!(ours.lines().count(), 70);
    let first = |text: &str, job: usize| text.lines().skip(10 * job).take(10).collect::<Vec<_>>().join("\n");
    let want = shape(&first(&theirs, 0));
    for job in 0..7 {
        let mut got = shape(&first(&ours, job));
        // The task line carries the two penalty keys DSS's generator does not write.
        let task = got[7].replace(", \"c.penalty\" :, \"c.ib\" :}", "}");
        got[7] = task;
        assert_eq!(got, want, "job {job}:\n{}", first(&ours, job));
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// One job in DSS's layout (the job's task class line given).
fn dss_job(id: u32, start_ms: &str, class: &str) -> String {
    format!(
        "{{\t\"am.type\" : \"mapreduce\",\n\t\"job.start.ms\" : {start_ms},\n\t\"job.end.ms\" : 200000,\n\t\"job.queue.name\" : \"sls_queue_1\",\n\t\"job.id\" : \"job_{id}\",\n\t\"job.user\" : \"default\",\n\t\"job.tasks\" : [\n{class}\n]\n}}\n"
    )
}

fn class(mem: &str, extra: &str) -> String {
    format!("{{\"c.dur\" : 100000, \"c.prio\" : 20, \"c.mem\" : {mem}, \"c.type\" : \"reduce\", \"c.nr\" : 4{extra}}}")
}

/// A malformed DSS trace loses nothing silently: every record is read, the
/// bad ones reported at the line of their bad field, and a run that would
/// leave jobs out is an error (exit 2) unless --skip-bad; --strict stops at
/// the first bad field's line.
#[test]
fn a_malformed_dss_trace_is_read_to_the_end_and_refused_without_skip_bad() {
    let dir = temp_dir("dss-malformed");
    let text = [
        dss_job(0, "0", &class("3000", "")),
        // Line 18: not JSON (a stray letter in `c.mem`).
        dss_job(1, "1000", &class("30x0", "")),
        // Job 2's closing brace is missing: it ends where job 3 starts (line 21).
        dss_job(2, "2000", &class("3000", "")).trim_end_matches("}\n").to_owned(),
        dss_job(3, "3000", &class("3000", ", \"c.penalty\" : \"POWER1\", \"c.ib\" : 1.5")),
        // Line 41: job.start.ms on its own line.
        dss_job(4, "-5", &class("3000", "")),
        dss_job(5, "5000", &class("3000", ", \"c.penalty\" : \"step\", \"c.ib\" : 1.5")),
    ]
    .concat();
    let path = dir.join("bad.json");
    std::fs::write(&path, text).unwrap();
    let p = path.to_str().unwrap();
    let run = ["simulate", "--workload", p, "--nodes", "2", "--node", "16,10", "--policies", "yarn"];
    let err = error_of(&run);
    for line in [
        "bad.json:18: not valid JSON",
        "bad.json:21: a job record that is never closed",
        "bad.json:37: `c.penalty` must be \"STEP\" or \"SAWTOOTH\"",
        "bad.json:41: `job.start.ms` must be a non-negative number",
    ] {
        assert!(err.contains(line), "missing `{line}` in:\n{err}");
    }
    assert!(err.contains("6 rows, 4 bad rows skipped") && err.contains("4 job record(s) could not be read"), "{err}");
    assert!(err.lines().last().unwrap().starts_with("error: "), "{err}");
    // With --skip-bad the two good jobs run.
    let out = pliant(&[&run[..], &["--skip-bad"]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("workload: 2 jobs (0 short, 2 long, 0 services, 0 of ended runs), 8 tasks"));
    // --strict: the first bad field's line is the error.
    let err = error_of(&[&run[..], &["--strict"]].concat());
    assert!(err.starts_with("error: ") && err.contains("bad.json:18: not valid JSON"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// `c.penalty`/`c.ib` change what `elastic` does; `--penalty` gives tasks that
/// name none a model (DSS's `PENALTY IB` arguments) and a task's own keys win.
#[test]
fn the_penalty_keys_change_the_elastic_run() {
    let dir = temp_dir("dss-penalty");
    // Two jobs on one node: 6 GB tasks then 5 GB tasks, which fit only under-sized.
    let trace = |extra: &str| {
        let big = "{\"c.dur\" : 100000, \"c.prio\" : 20, \"c.mem\" : 6000, \"c.type\" : \"reduce\", \"c.nr\" : 1}";
        let small = format!(
            "{{\"c.dur\" : 20000, \"c.prio\" : 20, \"c.mem\" : 5000, \"c.type\" : \"reduce\", \"c.nr\" : 3{extra}}}"
        );
        [dss_job(0, "0", big), dss_job(1, "1000", &small)].concat()
    };
    let path = dir.join("t.json");
    let p = path.to_str().unwrap();
    let mean_jct = |text: String, flags: &[&str]| {
        std::fs::write(&path, text).unwrap();
        // Without ApplicationMasters, so that the tasks alone decide what fits.
        let args = [
            "simulate",
            "--workload",
            p,
            "--nodes",
            "1",
            "--node",
            "16,10",
            "--policies",
            "elastic",
            "--set",
            "am_mb=0",
            "--set",
            "containers_per_heartbeat=0",
            "--set",
            "am_heartbeat_s=0",
        ];
        let out = pliant_in(&dir, &[&args[..], flags, &["--format", "json"]].concat());
        let doc: Value = serde_json::from_slice(&out).unwrap();
        doc["results"][0]["classes"]["long"]["jct"]["mean"].as_f64().unwrap()
    };
    let none = mean_jct(trace(""), &[]);
    let step = |ib: &str| mean_jct(trace(&format!(", \"c.penalty\" : \"STEP\", \"c.ib\" : {ib}")), &[]);
    // No penalty: the 5 GB tasks wait for the 6 GB one (100 s), then two run, then one:
    // job 1 ends at 140 s, 139 s after it came; job 0 takes 100 s.
    assert_eq!(none, (100.0 + 139.0) / 2.0);
    // Under-sized (STEP 1.1) they run beside it instead; STEP 3 costs more.
    let (low, high) = (step("1.1"), step("3.0"));
    assert!(low < none, "{low} vs {none}");
    assert!(high > low, "STEP 3 ({high}) should cost more than STEP 1.1 ({low})");
    // --penalty applies to classes without keys; a class's own keys win over it.
    assert_eq!(mean_jct(trace(""), &["--penalty", "step:1.1"]), low);
    assert_eq!(mean_jct(trace(", \"c.penalty\" : \"STEP\", \"c.ib\" : 1.1"), &["--penalty", "step:3"]), low);
    std::fs::remove_dir_all(dir).unwrap();
}

/// Every job of a DSS trace runs an ApplicationMaster (1,000 MB, 1 core),
/// placed before its tasks and held until its last task ends: on one node of
/// 10,240 MB, job 0 (AM + 9,000 MB for 100 s) leaves 240 MB, so job 1 (at
/// 1 s, one 200 MB task of 10 s) waits for job 0's AM to go at 100 s and ends
/// at 110 s; without AMs (`--set am_mb=0`) it runs at once. (DSS's
/// heartbeats off: what fits is placed at once.)
#[test]
fn dss_jobs_run_an_application_master_first() {
    let dir = temp_dir("dss-am");
    let task = |mem: u32, dur: u32| {
        format!("{{\"c.dur\" : {dur}, \"c.prio\" : 20, \"c.mem\" : {mem}, \"c.type\" : \"reduce\", \"c.nr\" : 1}}")
    };
    let path = dir.join("t.json");
    std::fs::write(&path, [dss_job(0, "0", &task(9000, 100_000)), dss_job(1, "1000", &task(200, 10_000))].concat())
        .unwrap();
    let jcts = |flags: &[&str]| {
        let args = ["simulate", "--workload", "t.json", "--nodes", "1", "--node", "16,10", "--policies", "yarn"];
        // Placing at once: with DSS's one container per heartbeat job 1's
        // AM comes first and job 0 then reserves the node for good (DSS's -r).
        let args = [&args[..], &["--set", "containers_per_heartbeat=0", "--set", "am_heartbeat_s=0"]].concat();
        let out = pliant_in(&dir, &[&args, flags, &["--out", "out"][..]].concat());
        assert!(!out.is_empty());
        let csv = std::fs::read_to_string(dir.join("out/jobs.csv")).unwrap();
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let col = header.iter().position(|h| *h == "jct_s").expect("a jct_s column");
        csv.lines().skip(1).map(|l| l.split(',').nth(col).unwrap().parse::<f64>().unwrap()).collect::<Vec<f64>>()
    };
    assert_eq!(jcts(&[]), [100.0, 109.0]);
    assert_eq!(jcts(&["--set", "am_mb=0"]), [100.0, 10.0]);
    std::fs::remove_dir_all(dir).unwrap();
}
