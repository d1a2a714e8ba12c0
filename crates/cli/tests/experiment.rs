//! Experiment files (`pliant run`): the kept experiments give byte for byte
//! what their commands give, the resolved `experiment.toml` of any `--out`
//! reruns its results, and a bad file is `FILE:LINE: reason`, exit 2.

mod common;

use common::{error_of, pliant, temp_dir};
use std::path::{Path, PathBuf};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path)
}

fn ok(args: &[&str]) -> String {
    let out = pliant(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{}/{file}: {e}", dir.display()))
}

/// results.json without its wall-clock fields (the only ones that differ run to run).
fn deterministic_json(dir: &Path) -> String {
    read(dir, "results.json")
        .lines()
        .filter(|l| !l.contains("wall_seconds") && !l.contains("events_per_second"))
        .collect()
}

#[test]
fn google_day_experiment_gives_what_simulate_gives() {
    // A whole simulated day, twice: minutes on a busy 2-core machine.
    pliant_xtest::heartbeat();
    let dir = temp_dir("exp-google-day");
    let (a, b) = (dir.join("run"), dir.join("simulate"));
    let exp = repo("docs/experiments/google-day.toml");
    ok(&["run", exp.to_str().unwrap(), "--out", a.to_str().unwrap()]);
    ok(&["simulate", "--scenario", "google-day", "--out", b.to_str().unwrap()]);
    assert_eq!(read(&a, "jobs.csv"), read(&b, "jobs.csv"));
    assert_eq!(deterministic_json(&a), deterministic_json(&b));
    assert!(read(&a, "jobs.csv").lines().count() > 8 * 14_000, "the whole day ran");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bigc_fig7_experiment_gives_what_sweep_gives_and_its_resolved_file_reruns_it() {
    pliant_xtest::heartbeat();
    let dir = temp_dir("exp-fig7");
    let (a, b, c) = (dir.join("run"), dir.join("sweep"), dir.join("rerun"));
    let exp = repo("docs/experiments/bigc-fig7-high-load.toml");
    let table = ok(&["run", exp.to_str().unwrap(), "--out", a.to_str().unwrap()]);
    let metrics = "classes.short.queue_delay.mean,classes.short.queue_delay.p95,classes.long.jct.p90";
    let cli = [
        "sweep",
        "--scenario",
        "high-load",
        "--vary",
        "delayed_resumption=0,1,2,3,4,5",
        "--policies",
        "ip,gp",
        "--seeds",
        "3",
        "--metric",
        metrics,
    ];
    let mut with_out = cli.to_vec();
    with_out.extend(["--out", b.to_str().unwrap()]);
    assert_eq!(table, ok(&with_out));
    assert_eq!(read(&a, "sweep.json"), read(&b, "sweep.json"));
    assert!(read(&a, "sweep.json").contains("\"delayed_resumption\""));

    let resolved = read(&a, "experiment.toml");
    assert!(resolved.contains("seeds = \"1..3\"") && resolved.contains("values = [0, 1, 2, 3, 4, 5]"), "{resolved}");
    ok(&["run", a.join("experiment.toml").to_str().unwrap(), "--out", c.to_str().unwrap()]);
    assert_eq!(read(&a, "sweep.json"), read(&c, "sweep.json"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn resolved_experiment_of_a_simulate_reruns_it_with_its_parameters() {
    let dir = temp_dir("exp-resolved");
    let (a, b) = (dir.join("simulate"), dir.join("rerun"));
    let args =
        ["simulate", "--scale", "0.3", "--seed", "2", "--policies", "fifo,gp", "--set", "gp_units=4", "--barrier-idle"];
    let mut first = args.to_vec();
    first.extend(["--out", a.to_str().unwrap()]);
    ok(&first);
    let resolved = read(&a, "experiment.toml");
    let lines = ["policies = [\"fifo\", \"gp\"]", "scenario = \"mixed\"", "scale = 0.3", "seed = 2", "gp_units = 4"];
    for line in lines.into_iter().chain(["barrier_idle = true"]) {
        assert!(resolved.lines().any(|l| l == line), "missing `{line}` in\n{resolved}");
    }
    ok(&["run", a.join("experiment.toml").to_str().unwrap(), "--out", b.to_str().unwrap()]);
    assert_eq!(read(&a, "jobs.csv"), read(&b, "jobs.csv"));
    assert_eq!(deterministic_json(&a), deterministic_json(&b));
    // The default differs from what was run: the rerun kept gp_units = 4.
    let default = dir.join("default");
    let mut plain = args[..7].to_vec();
    plain.extend(["--out", default.to_str().unwrap()]);
    ok(&plain);
    assert_ne!(read(&a, "jobs.csv"), read(&default, "jobs.csv"));
    // Barrier idle is in the JSON (and measured: the executors of mixed's
    // Spark jobs wait at barriers under fifo too) only when asked for.
    let idle = |dir: &Path| {
        let doc: serde_json::Value = serde_json::from_str(&read(dir, "results.json")).unwrap();
        doc["results"][0].get("barrier_idle_core_hours").map(|v| v.as_f64().unwrap())
    };
    assert!(idle(&a).is_some_and(|h| h > 0.0), "{:?}", idle(&a));
    assert_eq!(idle(&default), None);
    assert!(!read(&default, "experiment.toml").contains("barrier_idle"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_trace_experiment_reads_its_file_relative_to_itself() {
    let dir = temp_dir("exp-trace");
    let sample = repo("crates/trace/tests/fixtures/google2011-sample");
    std::fs::create_dir_all(dir.join("exp")).unwrap();
    let exp = dir.join("exp/sample.toml");
    let relative = pathdiff(&sample, &dir.join("exp"));
    std::fs::write(
        &exp,
        format!("policies = [\"fifo\", \"kill\"]\n[workload]\nfile = \"{relative}\"\n[cluster]\nnodes = 4\n"),
    )
    .unwrap();
    let (a, b) = (dir.join("run"), dir.join("simulate"));
    ok(&["run", exp.to_str().unwrap(), "--out", a.to_str().unwrap()]);
    let s = sample.to_str().unwrap();
    ok(&["simulate", "--workload", s, "--nodes", "4", "--policies", "fifo,kill", "--out", b.to_str().unwrap()]);
    assert_eq!(read(&a, "jobs.csv"), read(&b, "jobs.csv"));
    assert!(read(&a, "experiment.toml").contains("nodes = 4"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `../..`-style path from `base` to `target` (both absolute, sharing the repository's root).
fn pathdiff(target: &Path, base: &Path) -> String {
    let (t, b) = (target.canonicalize().unwrap(), base.canonicalize().unwrap());
    let common = t.components().zip(b.components()).take_while(|(x, y)| x == y).count();
    let ups = b.components().count() - common;
    let rest: PathBuf = t.components().skip(common).collect();
    format!("{}{}", "../".repeat(ups), rest.display())
}

#[test]
fn bad_experiments_are_file_line_reason_and_exit_2() {
    let dir = temp_dir("exp-bad");
    let cases: &[(&str, usize, &str)] = &[
        ("[workload]\nscenario = \"mixed\"\ncolour = 3\n", 3, "unknown field `colour`"),
        ("policies = [\"fifo\",\n  \"nope\"]\n[workload]\nscenario = \"mixed\"\n", 2, "unknown policy `nope`"),
        ("[workload]\nscenario = \"mixd\"\n", 2, "unknown scenario `mixd`"),
        ("[workload]\nscenario = \"mixed\"\nscale = -1\n", 3, "scale must be in (0, 10000]"),
        ("[workload]\nscenario = \"mixed\"\nseed = \"one\"\n", 3, "invalid type"),
        ("[workload]\nscenario = \"mixed\"\n[parameters]\ngp_units = 0\n", 4, "gp_units"),
        ("[workload]\nscenario = \"mixed\"\n[parameters]\nno_such_key = 1\n", 4, "unknown parameter `no_such_key`"),
        ("[workload]\nscenario = \"mixed\"\n[sweep]\nvary = \"gp_units\"\nvalues = [1,\n \"x\"]\n", 6, "gp_units = x"),
        ("[workload]\nscenario = \"mixed\"\nseeds = \"1..3\"\n", 3, "needs a [sweep]"),
        ("[workload]\nscenario = \"mixed\"\n[cluster]\nnodes = 4\n", 3, "applies to a workload file"),
        ("[workload]\nfile = \"missing.jsonl\"\n", 2, "no such workload file"),
        ("[workload]\nscenario = \"mixed\"\n[outputs]\nformat = \"xml\"\n", 4, "format must be"),
        ("[workload\n", 1, "invalid table header"),
        ("[outputs]\nformat = \"json\"\n", 1, "missing field `workload`"),
    ];
    for (i, (text, line, reason)) in cases.iter().enumerate() {
        let path = dir.join(format!("bad{i}.toml"));
        std::fs::write(&path, text).unwrap();
        let err = error_of(&["run", path.to_str().unwrap()]);
        let want = format!("error: {}:{line}: ", path.display());
        assert!(err.starts_with(&want) && err.contains(reason), "{text:?}: want {want}…{reason}, got {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Presets are entries of the built-in table of compositions: composed
/// from `fifo` step by step in an experiment file, `yarn` (the fair order
/// brings YARN's node reservations) and `priority-kill` (priority levels,
/// unlimited attempts) give their presets' jobs.csv rows byte for byte.
#[test]
fn presets_composed_from_fifo_in_an_experiment_file_reproduce_them_byte_for_byte() {
    let dir = temp_dir("exp-compose-root");
    let exp = dir.join("root.toml");
    let body = "[workload]\nscenario = \"mixed\"\nseed = 3\n\n[policies.yarn]\n\n[policies.priority-kill]\n\n\
                [policies.my-yarn]\nfrom = \"fifo\"\norder = \"fair\"\n\n\
                [policies.my-priority-kill]\nfrom = \"fifo\"\norder = \"priority\"\nplanner = \"priority-levels\"\n\
                compute_dr = false\nmechanism = \"kill\"\nattempts = \"unlimited\"\n";
    std::fs::write(&exp, body).unwrap();
    let out = dir.join("run");
    ok(&["run", exp.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let csv = read(&out, "jobs.csv");
    for preset in ["yarn", "priority-kill"] {
        let rows = rows_of(&csv, preset);
        assert!(rows.len() > 900, "every job of mixed under {preset}");
        assert_eq!(rows, rows_of(&csv, &format!("my-{preset}")), "{preset}");
    }
    assert_ne!(rows_of(&csv, "yarn"), rows_of(&csv, "priority-kill"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The rows of `policy` in a jobs.csv, without the policy column.
fn rows_of<'a>(csv: &'a str, policy: &str) -> Vec<&'a str> {
    csv.lines().filter_map(|l| l.strip_prefix(policy)?.strip_prefix(',')).collect()
}

#[test]
fn a_composed_policy_reproduces_its_preset_byte_for_byte_and_its_resolved_file_reruns_it() {
    let dir = temp_dir("exp-compose");
    let exp = dir.join("compose.toml");
    let body = "[workload]\nscenario = \"mixed\"\nseed = 2\n\n[policies.gp]\n\n[policies.my-gp]\nfrom = \"ip\"\n";
    std::fs::write(&exp, format!("{body}mechanism = \"graceful\"\n")).unwrap();
    let (a, b) = (dir.join("run"), dir.join("rerun"));
    ok(&["run", exp.to_str().unwrap(), "--out", a.to_str().unwrap()]);
    let csv = read(&a, "jobs.csv");
    let (gp, mine) = (rows_of(&csv, "gp"), rows_of(&csv, "my-gp"));
    assert!(gp.len() > 900, "every job of mixed");
    assert_eq!(gp, mine);
    // It differs from what it starts from: ip suspends where gp shrinks.
    ok(&["simulate", "--scenario", "mixed", "--seed", "2", "--policies", "ip", "--out", b.to_str().unwrap()]);
    assert_ne!(rows_of(&read(&b, "jobs.csv"), "ip"), gp);

    let resolved = read(&a, "experiment.toml");
    assert!(resolved.contains("[policies.my-gp]\nfrom = \"ip\"\nmechanism = \"graceful\""), "{resolved}");
    std::fs::remove_dir_all(&b).unwrap();
    ok(&["run", a.join("experiment.toml").to_str().unwrap(), "--out", b.to_str().unwrap()]);
    assert_eq!(read(&b, "jobs.csv"), csv);

    std::fs::write(&exp, format!("{body}mechanism = \"shrink\"\n")).unwrap();
    let err = error_of(&["run", exp.to_str().unwrap()]);
    assert!(err.contains("compose.toml:9: mechanism takes kill, immediate"), "{err}");
    std::fs::write(&exp, format!("{body}mechansim = \"graceful\"\n")).unwrap();
    let err = error_of(&["run", exp.to_str().unwrap()]);
    assert!(err.contains("compose.toml:9: unknown field `mechansim`"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--policies FILE#NAME` runs a policy of an experiment file by name; its
/// resolved experiment holds it as a composition from `fifo`, and reruns it.
#[test]
fn a_policy_of_an_experiment_file_runs_by_file_and_name() {
    let dir = temp_dir("exp-file-name");
    let exp = dir.join("policies.toml");
    std::fs::write(
        &exp,
        "[workload]\nscenario = \"mixed\"\n\n[policies.my-gp]\nfrom = \"ip\"\nmechanism = \"graceful\"\n",
    )
    .unwrap();
    let (a, b) = (dir.join("run"), dir.join("rerun"));
    let spec = format!("{}#my-gp", exp.display());
    let line = ["simulate", "--scenario", "mixed", "--seed", "2", "--scale", "0.3", "--out", a.to_str().unwrap()];
    ok(&[&line[..], &["--policies", &format!("gp,{spec}")]].concat());
    let csv = read(&a, "jobs.csv");
    assert!(!rows_of(&csv, "gp").is_empty());
    assert_eq!(rows_of(&csv, "gp"), rows_of(&csv, "my-gp"));
    let resolved = read(&a, "experiment.toml");
    let mine = &resolved[resolved.find("[policies.my-gp]").unwrap()..];
    for line in ["from = \"fifo\"", "queues = \"short-long\"", "planner = \"capacity\"", "mechanism = \"graceful\""] {
        assert!(mine.contains(line), "{resolved}");
    }
    ok(&["run", a.join("experiment.toml").to_str().unwrap(), "--out", b.to_str().unwrap()]);
    assert_eq!(read(&b, "jobs.csv"), csv);

    let err = error_of(&["simulate", "--scenario", "mixed", "--policies", &format!("{}#other", exp.display())]);
    assert!(err.contains("policies.toml: no [policies.other] here (it has: my-gp)"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
