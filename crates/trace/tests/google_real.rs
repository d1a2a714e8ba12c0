//! `trace stats` on real Google 2011 rows, checked against figures computed
//! here by a separate, naive pass (every row in memory, events grouped per
//! task, no streaming, no job events for completion) and against counts made
//! without pliant: on the in-repository sample always, and on the whole
//! shared part when `../shared` sits beside the repository.

use flate2::read::GzDecoder;
use pliant_trace::{trace_stats, ReadOptions, StatsOptions, Unfinished};
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Ten minutes of part 00000, kept in the repository (its README says how it was cut).
const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/google2011-sample");
/// The whole part 00000, outside the repository; only the `shared_part_` test reads it.
const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces/google2011");

fn rows(path: PathBuf) -> Vec<Vec<String>> {
    let mut text = String::new();
    GzDecoder::new(std::fs::File::open(path).unwrap()).read_to_string(&mut text).unwrap();
    text.lines().map(|l| l.split(',').map(str::to_owned).collect()).collect()
}

struct Ev {
    ts: u64,
    kind: u8,
    priority: u8,
    cpu: Option<f64>,
}

struct Expected {
    jobs_in_trace: usize,
    tasks_in_trace: usize,
    kept_tasks: usize,
    jobs: usize,
    short: usize,
    top10: f64,
    job_p50: f64,
    job_p90: f64,
    task_p50: f64,
    schedules: [u64; 3],
    evictions: [u64; 3],
    preemptions: [u64; 3],
    evicted_core_seconds: [f64; 3],
    arrivals: BTreeMap<u64, u64>,
}

fn band(p: u8) -> usize {
    if p <= 1 {
        0
    } else if p <= 8 {
        1
    } else {
        2
    }
}

fn rank(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let k = (p * v.len() as f64).ceil() as usize;
    v[k.max(1) - 1]
}

/// The checkpoint paper's Table 1 counted directly from its definition (§2):
/// per band of the row's priority, SCHEDULE rows, EVICT rows, and EVICT rows
/// for which some SCHEDULE row on the same machine has a higher priority and
/// a timestamp in [t, t + 5 s] — searched in a per-machine list, in any order.
fn preemptions(tasks: &[Vec<String>]) -> ([u64; 3], [u64; 3], [u64; 3]) {
    let (mut schedules, mut evictions, mut preempted) = ([0u64; 3], [0u64; 3], [0u64; 3]);
    let mut on_machine: HashMap<&str, Vec<(u64, u8)>> = HashMap::new();
    for r in tasks.iter().filter(|r| r[5] == "1") {
        schedules[band(r[8].parse().unwrap())] += 1;
        on_machine.entry(r[4].as_str()).or_default().push((r[0].parse().unwrap(), r[8].parse().unwrap()));
    }
    for r in tasks.iter().filter(|r| r[5] == "2") {
        let (t, p): (u64, u8) = (r[0].parse().unwrap(), r[8].parse().unwrap());
        evictions[band(p)] += 1;
        let hit = !r[4].is_empty()
            && on_machine
                .get(r[4].as_str())
                .is_some_and(|v| v.iter().any(|&(s, q)| q > p && s >= t && s <= t + 5_000_000));
        preempted[band(p)] += u64::from(hit);
    }
    (schedules, evictions, preempted)
}

fn naive(dir: &Path) -> Expected {
    let tasks = rows(dir.join("task_events_part-00000-of-00500.csv.gz"));
    let jobs = rows(dir.join("job_events_part-00000-of-00500.csv.gz"));
    let mut per_task: BTreeMap<(u64, u64), Vec<Ev>> = BTreeMap::new();
    let mut cpu: HashMap<(u64, u64), f64> = HashMap::new();
    let mut submit: HashMap<u64, u64> = HashMap::new();
    let mut first: HashMap<u64, u64> = HashMap::new();
    for r in &tasks {
        let key = (r[2].parse().unwrap(), r[3].parse().unwrap());
        let ts: u64 = r[0].parse().unwrap();
        let kind: u8 = r[5].parse().unwrap();
        if !r[9].is_empty() {
            cpu.insert(key, r[9].parse().unwrap());
        }
        let cpu = if r[9].is_empty() { None } else { Some(r[9].parse().unwrap()) };
        per_task.entry(key).or_default().push(Ev { ts, kind, priority: r[8].parse().unwrap(), cpu });
        let f = first.entry(key.0).or_insert(ts);
        *f = (*f).min(ts);
        if kind == 0 {
            let s = submit.entry(key.0).or_insert(ts);
            *s = (*s).min(ts);
        }
    }
    for r in &jobs {
        let (ts, job, kind): (u64, u64, u8) = (r[0].parse().unwrap(), r[2].parse().unwrap(), r[3].parse().unwrap());
        if kind == 0 && first.contains_key(&job) {
            let s = submit.entry(job).or_insert(ts);
            *s = (*s).min(ts);
        }
    }
    let (schedules, evictions, preemptions) = preemptions(&tasks);
    // job → (end, task-time µs, core-seconds)
    let mut kept_jobs: HashMap<u64, (u64, u64, f64)> = HashMap::new();
    let mut task_secs = Vec::new();
    let mut evicted_core_seconds = [0.0; 3];
    for (key, evs) in &per_task {
        // Runs ended by EVICT: the latest CPU request so far × 32 cores × the time
        // since the run's SCHEDULE (none after a SUBMIT, FINISH, FAIL, KILL or LOST;
        // runs scheduled at timestamp 0 began before the trace and are left out).
        let (mut cpu_now, mut started) = (0.0, None);
        for e in evs {
            cpu_now = e.cpu.unwrap_or(cpu_now);
            match e.kind {
                1 => started = Some(e.ts),
                2 => {
                    if let Some(s) = started.filter(|&s| s > 0) {
                        evicted_core_seconds[band(e.priority)] += cpu_now * 32.0 * (e.ts - s) as f64 / 1e6;
                    }
                    started = None;
                }
                0 | 3..=6 => started = None,
                _ => {}
            }
        }
        // The last run: the SCHEDULE right before the last lifecycle event, if that is a FINISH.
        let life: Vec<&Ev> = evs.iter().filter(|e| e.kind <= 6).collect();
        let Some(last) = life.last() else { continue };
        if last.kind != 4 || life.len() < 2 {
            continue;
        }
        let before = life[life.len() - 2];
        if before.kind != 1 || before.ts == 0 {
            continue;
        }
        let d = (last.ts - before.ts).max(1);
        task_secs.push(d as f64 / 1e6);
        let milli = ((cpu.get(key).copied().unwrap_or(0.0) * 32_000.0).ceil() as u64).clamp(1, 32_000);
        let j = kept_jobs.entry(key.0).or_insert((0, 0, 0.0));
        j.0 = j.0.max(last.ts);
        j.1 += d;
        j.2 += milli as f64 / 1000.0 * d as f64 / 1e6;
    }
    // A submission at timestamp 0 (before the window) counts as the window's start, 600 s.
    let submitted = |id: &u64| submit.get(id).copied().unwrap_or(first[id]).max(600_000_000);
    let mut per_job: Vec<(u64, u64, f64)> = kept_jobs
        .iter()
        .map(|(id, &(end, tt, core_s))| {
            let s = submitted(id);
            (end.max(s) - s, tt, core_s)
        })
        .collect();
    // Jobs with a kept task per 600 s of submission time.
    let mut arrivals = BTreeMap::new();
    for id in kept_jobs.keys() {
        *arrivals.entry(submitted(id) / 600_000_000).or_insert(0) += 1;
    }
    let short = per_job.iter().filter(|j| j.0 <= 300_000_000 && j.2 <= 1000.0).count();
    per_job.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    let total: u64 = per_job.iter().map(|j| j.1).sum();
    let top: u64 = per_job.iter().take(per_job.len().div_ceil(10)).map(|j| j.1).sum();
    let durs: Vec<f64> = per_job.iter().map(|j| j.0 as f64 / 1e6).collect();
    Expected {
        jobs_in_trace: first.len(),
        tasks_in_trace: per_task.len(),
        kept_tasks: task_secs.len(),
        jobs: per_job.len(),
        short,
        top10: top as f64 / total as f64,
        job_p50: rank(durs.clone(), 0.5),
        job_p90: rank(durs, 0.9),
        task_p50: rank(task_secs, 0.5),
        schedules,
        evictions,
        preemptions,
        evicted_core_seconds,
        arrivals,
    }
}

/// Counts of a trace part made without pliant: rows read, jobs, SCHEDULE rows per band.
struct Counted {
    rows: u64,
    jobs: usize,
    schedules: [u64; 3],
}

/// `trace stats --finished-only` on `dir` against the naive recount (of
/// finished runs) and the outside counts; returns the naive figures for further checks.
fn stats_match_a_naive_recount(dir: &Path, counted: Counted) -> Expected {
    let read = ReadOptions { unfinished: Unfinished::Drop, ..ReadOptions::default() };
    let s = trace_stats(&[dir.to_path_buf()], &StatsOptions { read, ..StatsOptions::default() }).unwrap();
    let e = naive(dir);
    assert_eq!(s.read.rows, counted.rows);
    assert_eq!(s.read.bad.count, 0);
    assert_eq!(s.read.jobs_in_trace as usize, e.jobs_in_trace);
    assert_eq!(e.jobs_in_trace, counted.jobs);
    assert_eq!(s.read.tasks.total() as usize, e.tasks_in_trace);
    assert_eq!(s.tasks as usize, e.kept_tasks);
    assert_eq!(s.jobs as usize, e.jobs);
    assert_eq!(s.short as usize, e.short);
    assert!((s.top10_task_time - e.top10).abs() < 1e-12, "{} vs {}", s.top10_task_time, e.top10);
    assert_eq!((s.job_duration.p50, s.job_duration.p90), (e.job_p50, e.job_p90));
    assert_eq!(s.task_duration.p50, e.task_p50);
    let buckets: BTreeMap<u64, u64> =
        s.arrivals.iter().enumerate().filter(|(_, &n)| n > 0).map(|(i, &n)| (i as u64, n)).collect();
    assert_eq!(buckets, e.arrivals);
    let ev = s.read.evictions.unwrap();
    assert_eq!((ev.schedules, ev.evictions, ev.preemptions), (e.schedules, e.evictions, e.preemptions));
    for (got, want) in ev.evicted_core_seconds.iter().zip(e.evicted_core_seconds) {
        assert!((got - want).abs() <= 1e-9 * want.max(1.0), "{got} vs {want}");
    }
    assert!(e.evicted_core_seconds[0] > 0.0);
    assert_eq!(ev.schedules, counted.schedules);
    // The printed table carries the same counts and shares, one row per band.
    let text = s.to_string();
    for (i, label) in ["free (0-1)", "middle (2-8)", "production (9-11)"].into_iter().enumerate() {
        let share = 100.0 * e.preemptions[i] as f64 / e.schedules[i] as f64;
        let row =
            format!("{label:<20}{:>12}{:>12}{:>12}{share:>9.2}%", e.schedules[i], e.evictions[i], e.preemptions[i]);
        assert!(text.contains(&row), "missing `{row}` in\n{text}");
    }
    e
}

/// The in-repository sample; the figures are those `python3 recount.py` prints in
/// the sample's directory (and its README): 15,724 task rows + 347 job rows, 222
/// jobs, SCHEDULE/EVICT/preempted rows per band [1401, 3699, 80] / [101, 5, 6] /
/// [71, 0, 0], and 2,236 tasks of 63 jobs scheduled and finished inside the window.
#[test]
fn sample_stats_match_a_naive_recount() {
    let counted = Counted { rows: 15_724 + 347, jobs: 222, schedules: [1401, 3699, 80] };
    let e = stats_match_a_naive_recount(Path::new(SAMPLE), counted);
    assert_eq!((e.evictions, e.preemptions), ([101, 5, 6], [71, 0, 0]));
    assert_eq!((e.kept_tasks, e.jobs), (2236, 63));
    assert_eq!(e.arrivals, BTreeMap::from([(1, 63)]));
}

/// The trace part is public data outside the repository: its absence is
/// listed at the end of the run, or fails under PLIANT_REQUIRE_SHARED=1
/// (which `.ci/run` sets when the data is there).
fn skip(reason: &str) {
    pliant_xtest::without_data(reason);
}

/// The whole shared part, only when `../shared/traces/google2011` is there (it
/// is not in a fresh clone): skipped loudly otherwise.
#[test]
fn shared_part_stats_match_a_naive_recount() {
    let dir = PathBuf::from(SHARED);
    if !dir.join("task_events_part-00000-of-00500.csv.gz").exists() {
        skip(pliant_xtest::GOOGLE_PART);
        return;
    }
    // The README of the shared part: 450,146 task rows, 10,704 job rows, 4,895 jobs.
    // Every SCHEDULE row of the part: 189,994 (`awk -F, '$6 == 1'`), per band as counted there.
    let schedules = naive(&dir).schedules;
    assert_eq!(schedules.iter().sum::<u64>(), 189_994);
    stats_match_a_naive_recount(&dir, Counted { rows: 450_146 + 10_704, jobs: 4_895, schedules });
}

/// Requested CPU per hour of trace time, recounted from the raw task rows,
/// as fractions of one 1.0 machine: every run holds its task's latest CPU
/// request from its SCHEDULE to its EVICT, FAIL, FINISH, KILL or LOST (a run
/// scheduled at timestamp 0, before the window, from 600 s; one still going at
/// the last row, to it). Returns (core-fraction-seconds per hour, first and last instant).
fn recount_hourly(files: &[PathBuf]) -> (BTreeMap<u64, f64>, (u64, u64)) {
    const HOUR: u64 = 3_600_000_000;
    let mut hourly: BTreeMap<u64, f64> = BTreeMap::new();
    let mut add = |s: u64, e: u64, cpu: f64| {
        let mut t = s.max(600_000_000);
        while t < e {
            let next = e.min((t / HOUR + 1) * HOUR);
            *hourly.entry(t / HOUR).or_default() += cpu * (next - t) as f64 / 1e6;
            t = next;
        }
    };
    let mut running: HashMap<(u64, u64), u64> = HashMap::new();
    let mut cpu: HashMap<(u64, u64), f64> = HashMap::new();
    let mut last = 0;
    for f in files {
        for r in rows(f.clone()) {
            let (ts, key): (u64, (u64, u64)) = (r[0].parse().unwrap(), (r[2].parse().unwrap(), r[3].parse().unwrap()));
            last = last.max(ts);
            if !r[9].is_empty() {
                cpu.insert(key, r[9].parse().unwrap());
            }
            match r[5].as_str() {
                "1" => {
                    running.insert(key, ts);
                }
                "2" | "3" | "4" | "5" | "6" => {
                    if let Some(s) = running.remove(&key) {
                        add(s, ts, cpu.get(&key).copied().unwrap_or(0.0));
                    }
                }
                _ => {}
            }
        }
    }
    for (key, s) in running {
        add(s, last, cpu[&key]);
    }
    (hourly, (600_000_000, last))
}

/// The import's requested CPU per hour, as fractions of a 32-core machine:
/// every task of the workload from its job's submission for its duration.
fn import_hourly(dir: &Path) -> BTreeMap<u64, f64> {
    const HOUR: u64 = 3_600_000_000;
    let (w, _) = pliant_trace::load_workload(&[dir.to_path_buf()], &pliant_trace::LoadOptions::default()).unwrap();
    let mut hourly: BTreeMap<u64, f64> = BTreeMap::new();
    for j in &w.jobs {
        for t in j.tasks() {
            let (mut s, e) = (j.submit, j.submit + t.duration);
            while s < e {
                let next = e.min((s / HOUR + 1) * HOUR);
                *hourly.entry(s / HOUR).or_default() += t.request.cpu_milli as f64 / 32_000.0 * (next - s) as f64 / 1e6;
                s = next;
            }
        }
    }
    hourly
}

/// The whole shared part: the import's requested CPU, hour by hour, is within
/// 5 % of a recount from the raw rows (≈ 60 % of the 12,583 machines).
#[test]
fn shared_part_requested_load_matches_a_recount() {
    let dir = PathBuf::from(SHARED);
    let tasks = dir.join("task_events_part-00000-of-00500.csv.gz");
    if !tasks.exists() {
        skip(pliant_xtest::GOOGLE_PART);
        return;
    }
    let (want, (start, end)) = recount_hourly(&[tasks]);
    let got = import_hourly(&dir);
    const HOUR: u64 = 3_600_000_000;
    for (&h, &w) in &want {
        let secs = (end.min((h + 1) * HOUR) - start.max(h * HOUR)) as f64 / 1e6;
        let (w, g) = (w / secs, got.get(&h).copied().unwrap_or(0.0) / secs);
        let share = w / pliant_trace::google2011::MACHINES as f64;
        assert!(share > 0.5, "hour {h}: the recount finds {share:.3} of the machines requested");
        assert!((g - w).abs() <= 0.05 * w, "hour {h}: import {g:.0} vs recount {w:.0} machines' CPU requested");
    }
}
