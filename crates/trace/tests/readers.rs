//! Each reader on small hand-written files; expected values worked out by hand
//! in the comments.

use pliant_core::model::JobClass;
use pliant_core::{Resources, SECOND};
use pliant_trace::input::Progress;
use pliant_trace::{
    detect, import, load_workload, read_trace, Format, LoadOptions, ReadOptions, Target, TraceError, TraceJob,
    Unfinished, Window,
};
use pliant_workload::read_workload;

mod common;
use common::{fixture, read};

/// `--finished-only`: complete finished runs only.
fn finished_only() -> ReadOptions {
    ReadOptions { unfinished: Unfinished::Drop, ..ReadOptions::default() }
}

fn durations(j: &TraceJob) -> Vec<Vec<u64>> {
    j.phases.iter().map(|p| p.tasks.iter().map(|t| t.duration).collect()).collect()
}

#[test]
fn google_final_runs_evictions_and_drops() {
    let (jobs, rep) = read("google", &finished_only());
    assert_eq!(rep.format, Format::Google2011);
    // 20 task rows + 3 job rows; line 12 of task_events is bad.
    assert_eq!(rep.rows, 23);
    assert_eq!(rep.bad.count, 1);
    let e = &rep.bad.examples[0];
    assert!(e.file.ends_with("task_events-part-0.csv") && e.line == 12, "{e}");
    assert!(e.to_string().contains("task_events-part-0.csv:12: 1 fields"), "{e}");
    assert_eq!(rep.jobs_in_trace, 3);
    // Job 1: task 0 finished (730 → 790 s), task 1 killed. Job 2: task 0 ran from
    // timestamp 0 (before the window), task 1 still running, task 2 never scheduled.
    // Job 3: task 0 finished (800 → 801.5 s).
    let t = rep.tasks;
    assert_eq!((t.finished, t.truncated, t.unfinished, t.started_before, t.abnormal, t.never_ran), (2, 0, 1, 1, 1, 1));
    // Job 1 is handed out first (its FINISH job event, 795 s + 5 s grace, expires at 801.5 s).
    let ids: Vec<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(ids, ["1", "3"]);
    let j1 = &jobs[0];
    assert_eq!((j1.submit, j1.end, j1.priority, j1.sched_class), (700 * SECOND, 790 * SECOND, 0, Some(0)));
    assert_eq!(durations(j1), [[60 * SECOND]]);
    // 0.5 and 0.25 of ⟨32 CPU, 128 GB⟩.
    assert_eq!(j1.phases[0].tasks[0].request, Resources::new(16_000, 32_768));
    assert_eq!(j1.phases[0].tasks[0].estimate, Some(60 * SECOND));
    let j3 = &jobs[1];
    assert_eq!((j3.submit, j3.priority), (800 * SECOND, 5));
    assert_eq!(durations(j3), [[1_500_000]]);
    // CPU 0 → the 1-millicore floor; memory 0.001 × 131,072 = 131.07 → 132 MB.
    assert_eq!(j3.phases[0].tasks[0].request, Resources::new(1, 132));
    // SCHEDULE events — free: 1/1 at 705 s, 1/0 at 710 s and 730 s; middle: 3/0;
    // production: 2/0 at 0 s, 2/1 at 660 s. One EVICT (1/0 at 720 s, free), and
    // nothing is scheduled on machine 7 in the 5 s after it: no preemption.
    let ev = rep.evictions.unwrap();
    assert_eq!(ev.schedules, [3, 1, 2]);
    assert_eq!(ev.evictions, [1, 0, 0]);
    assert_eq!(ev.preemptions, [0, 0, 0]);
    // The evicted run of 1/0: 710 → 720 s at 0.5 × 32 cores = 160 core-seconds.
    assert_eq!(ev.evicted_core_seconds, [160.0, 0.0, 0.0]);
    // At 800 s jobs 2 (never ends), 1 (ended at 795 s, handed out after 800 s) and 3 are held.
    assert_eq!(rep.peak_live_jobs, 3);
    assert_eq!(rep.late_events, 0);
}

#[test]
fn google_late_task_events_are_ignored() {
    let (jobs, rep) = read("google_late", &ReadOptions::default());
    // Job 5 runs 1000 → 1010 s and ends at 1010 s; the UPDATE_RUNNING at 1100 s
    // comes 90 s later (more than the 5 s grace): ignored and counted.
    assert_eq!(rep.late_events, 1);
    assert_eq!(jobs.len(), 1);
    assert_eq!(durations(&jobs[0]), [[10 * SECOND]]);
}

/// The checkpoint paper's Table 1 definition (§2): an eviction is a preemption
/// when a higher-priority task is scheduled on the same machine within 5 s.
#[test]
fn google_preemptions_per_band_follow_the_checkpoint_paper() {
    let (_, rep) = read("google_preempt", &ReadOptions::default());
    assert_eq!(rep.bad.count, 0);
    // Evictions, worked out by hand (machine: time):
    //   10/0 free,  m1 1010 s → 20/0 (prio 9) on m1 at 1012 s: preempted.
    //   11/0 free,  m2 1010 s → 21/0 (prio 9) on m2 at 1016 s: 6 s, not preempted.
    //   12/0 middle, m3 1030 s → 22/0 (prio 10) on m3 at the same instant,
    //        listed just before the eviction: preempted.
    //   13/0 middle, m4 1040 s → 23/0 on m4 at 1041 s has the same priority (5);
    //        24/0 (prio 11) at 1042 s is on m5: not preempted.
    //   14/0 free (prio 1), m6 1060 s → 25/0 (prio 2) on m6 at 1065 s, exactly
    //        5 s: preempted.
    //   20/0 production (prio 9), m1 1100 s → 26/0 (prio 11) on m1 at 1101 s: preempted.
    //   15/0 free, no machine in the row: cannot be matched, not preempted.
    // SCHEDULE events — free: 10/0 (twice), 11/0, 14/0, 15/0 = 5; middle:
    // 12/0, 13/0, 23/0, 25/0 = 4; production: 20/0, 21/0, 22/0, 24/0, 26/0, 27/0 = 6.
    let ev = rep.evictions.unwrap();
    assert_eq!(ev.schedules, [5, 4, 6]);
    assert_eq!(ev.evictions, [4, 2, 1]);
    assert_eq!(ev.preemptions, [2, 1, 1]);
    use pliant_core::model::PriorityLevel;
    assert_eq!(ev.preempted_share(PriorityLevel::Free), 2.0 / 5.0);
    assert_eq!(ev.preempted_share(PriorityLevel::Middle), 1.0 / 4.0);
    assert_eq!(ev.preempted_share(PriorityLevel::Production), 1.0 / 6.0);
    // Evicted runs at 0.1 × 32 = 3.2 cores — free: 10/0, 11/0, 14/0, 15/0 ran 10 s
    // each (128 core-s); middle: 12/0 10 s, 13/0 20 s (96); production: 20/0
    // 1012 → 1100 s, 88 s (281.6).
    for (got, want) in ev.evicted_core_seconds.iter().zip([128.0, 96.0, 281.6]) {
        assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    }
}

#[test]
fn google_truncation_keeps_partial_runs() {
    let opts = ReadOptions { unfinished: Unfinished::Truncate, ..ReadOptions::default() };
    let (jobs, rep) = read("google", &opts);
    assert_eq!((rep.tasks.truncated, rep.tasks.unfinished, rep.tasks.started_before), (2, 0, 0));
    let j2 = jobs.iter().find(|j| j.id == "2").unwrap();
    // Task 0: window start 600 s → 800 s = 200 s. Task 1: 660 s → last event 900 s = 240 s.
    assert_eq!(durations(j2), [[200 * SECOND, 240 * SECOND]]);
    // Submitted at timestamp 0, before the window: it arrives when the window opens.
    assert_eq!((j2.submit, j2.end, j2.priority), (600 * SECOND, 900 * SECOND, 9));
}

#[test]
fn google_window_stops_reading_at_its_end() {
    // Window [650 s, 795 s): job 3's events (800 s) are never read; job 1 finishes at 790 s
    // (its killed and evicted runs are kept apart); job 2's running tasks are cut at 790 s, the
    // last event read: its task 0 ran from before the window to its end, so job 2 is a service.
    let opts =
        ReadOptions { window: Some(Window { start: 650 * SECOND, end: 795 * SECOND }), ..ReadOptions::default() };
    let (jobs, _) = read("google", &opts);
    assert_eq!(jobs.iter().map(|j| j.id.as_str()).collect::<Vec<_>>(), ["1", "1@ended", "2@service"]);
    assert_eq!(durations(&jobs[2]), [[190 * SECOND, 130 * SECOND]]);
    let (jobs, _) = read("google", &ReadOptions { unfinished: Unfinished::Drop, ..opts });
    assert_eq!(jobs.iter().map(|j| j.id.as_str()).collect::<Vec<_>>(), ["1"]);
}

#[test]
fn strict_mode_stops_at_the_first_bad_row() {
    let inputs = detect(&[fixture("google")]).unwrap();
    let opts = ReadOptions { strict: true, ..ReadOptions::default() };
    let err = read_trace(&inputs, &opts, &Progress::hidden(), &mut |_| Ok(())).unwrap_err();
    match err {
        TraceError::Row(e) => assert_eq!(e.line, 12),
        other => panic!("{other}"),
    }
}

#[test]
fn alibaba_2018_dag_from_task_names() {
    let (jobs, rep) = read("alibaba2018", &finished_only());
    assert_eq!(rep.format, Format::Alibaba2018);
    assert_eq!((rep.rows, rep.bad.count), (7, 1));
    assert_eq!(rep.bad.examples[0].line, 7);
    // Instances: M1 2 + R2 1 + J4 1 + task_abc 3 finished; M3 failed; task_def running.
    let t = rep.tasks;
    assert_eq!((t.finished, t.abnormal, t.unfinished), (7, 1, 1));
    let j1 = &jobs[0];
    assert_eq!(j1.id, "j_1");
    // Phases: M1, R2 (after M1), J4 (after R2; its dependency on the failed M3 is gone).
    let deps: Vec<Vec<u32>> = j1.phases.iter().map(|p| p.deps.clone()).collect();
    assert_eq!(deps, [vec![], vec![0], vec![1]]);
    assert_eq!(durations(j1), [vec![60 * SECOND; 2], vec![30 * SECOND], vec![20 * SECOND]]);
    // plan_cpu 100 = 1 core; plan_mem 0.5 % of 131,072 MB = 655.36 → 656.
    assert_eq!(j1.phases[0].tasks[0].request, Resources::new(1000, 656));
    assert_eq!(j1.phases[2].tasks[0].request, Resources::new(2000, 2622));
    assert_eq!((j1.submit, j1.end), (100 * SECOND, 230 * SECOND));
    let j2 = &jobs[1];
    assert_eq!(durations(j2), [vec![5 * SECOND; 3]]);
    assert_eq!(j2.submit, 50 * SECOND);
}

#[test]
fn alibaba_2018_instances_give_each_instance_its_run() {
    let (jobs, rep) = read("alibaba2018_instances", &ReadOptions::default());
    assert_eq!(rep.orphan_instances, 1);
    // ins_1: 100 → 130 s; ins_2: 100 → 160 s.
    assert_eq!(durations(&jobs[0]), [[30 * SECOND, 60 * SECOND]]);
}

#[test]
fn alibaba_2017_independent_tasks() {
    let (jobs, rep) = read("alibaba2017", &ReadOptions::default());
    assert_eq!(rep.format, Format::Alibaba2017);
    assert_eq!((rep.tasks.finished, rep.tasks.never_ran), (3, 1));
    assert_eq!(jobs.len(), 1);
    let j = &jobs[0];
    assert_eq!(j.id, "1");
    assert_eq!(durations(j), [vec![60 * SECOND; 2], vec![10 * SECOND]]);
    assert!(j.phases.iter().all(|p| p.deps.is_empty()));
    // 0.5 cores; 1 % of 131,072 MB = 1,310.72 → 1,311 MB.
    assert_eq!(j.phases[0].tasks[0].request, Resources::new(500, 1311));
}

#[test]
fn sls_task_classes_become_phases() {
    let (jobs, rep) = read("sls.json", &ReadOptions::default());
    assert_eq!(rep.format, Format::Sls);
    assert_eq!((rep.rows, rep.bad.count), (3, 1));
    // The third record ends on line 13 of the file.
    assert_eq!(rep.bad.examples[0].line, 13, "{}", rep.bad.examples[0]);
    let j = &jobs[0];
    assert_eq!((j.id.as_str(), j.submit, j.end, j.priority), ("job_1", SECOND, 61 * SECOND, 3));
    assert_eq!(j.phases[1].deps, vec![0]);
    assert_eq!(durations(j), [vec![20 * SECOND; 2], vec![30 * SECOND]]);
    assert_eq!(j.phases[0].tasks[0].request, Resources::new(2000, 2048));
    // Defaults: one core, 1,024 MB.
    assert_eq!(j.phases[1].tasks[0].request, Resources::new(1000, 1024));
    let j7 = &jobs[1];
    // No end given: 5 s + the longest map (1.5 s).
    assert_eq!((j7.id.as_str(), j7.submit, j7.end), ("7", 5 * SECOND, 6_500_000));
}

/// DSS rows (one per line): a malformed one is reported with its file, its
/// line and the field as DSS spells it; under --strict it is the error.
#[test]
fn malformed_dss_rows_name_file_line_and_dss_field() {
    let row =
        |id: u32, class: &str| format!("{{\"job.start.ms\": 0, \"job.id\": \"job_{id}\", \"job.tasks\": [{class}]}}\n");
    let good = r#"{"c.dur": 1000, "c.mem": 500, "c.nr": 2, "c.type": "MAP", "c.prio": 20}"#;
    let text = [
        row(1, good),
        row(2, &good.replace("500", "\"lots\"")),
        row(3, &good.replace("\"MAP\"", "7")),
        row(4, &good.replace("2,", "-1,")),
        row(5, r#"{"c.mem": 500}"#),
    ]
    .concat();
    let path = std::env::temp_dir().join(format!("pliant-dss-bad-{}.json", std::process::id()));
    std::fs::write(&path, text).unwrap();
    let inputs = detect(std::slice::from_ref(&path)).unwrap();
    let mut jobs = 0;
    let rep = read_trace(&inputs, &ReadOptions::default(), &Progress::hidden(), &mut |_| {
        jobs += 1;
        Ok(())
    })
    .unwrap();
    let reasons: Vec<String> = rep.bad.examples.iter().map(|e| e.to_string()).collect();
    let at = |line: u32, reason: &str| format!("{}:{line}: {reason}", path.display());
    assert_eq!((jobs, rep.bad.count), (1, 4));
    assert_eq!(
        reasons,
        [
            at(2, "`c.mem` must be a whole number from 0 to 1073741824, got \"lots\""),
            at(3, "`c.type` must be a string, got 7"),
            at(4, "`c.nr` must be a whole number from 0 to 1000000, got -1"),
            at(5, "a task class needs `duration.ms` (DSS: `c.dur`) or `container.start.ms` ≤ `container.end.ms`"),
        ]
    );
    let strict = ReadOptions { strict: true, ..ReadOptions::default() };
    let err = read_trace(&inputs, &strict, &Progress::hidden(), &mut |_| Ok(())).unwrap_err();
    assert!(matches!(&err, TraceError::Row(e) if e.to_string() == reasons[0]), "{err}");
    std::fs::remove_file(path).unwrap();
}

#[test]
fn load_applies_window_cluster_and_classes() {
    let opts = LoadOptions {
        target: Target::Nodes(2),
        read: ReadOptions { window: Some(Window { start: 700 * SECOND, end: 800 * SECOND }), ..ReadOptions::default() },
        ..LoadOptions::default()
    };
    let (w, rep) = load_workload(&[fixture("google")], &opts).unwrap();
    assert_eq!(w.cluster.nodes, vec![Resources::cores_gb(32, 128); 2]);
    // Job 1 (700 s) stays, rebased to 0, and its killed and evicted runs (from 705 s) with it. Job 2
    // (600 s) is outside [700, 800) (counted); job 3 (800 s) too, but the reader stops at
    // 800 s, so it is never even read (not counted as filtered).
    assert_eq!(w.jobs.len(), 2);
    assert_eq!((w.jobs[0].name.as_str(), w.jobs[0].submit), ("1", 0));
    assert_eq!((w.jobs[1].name.as_str(), w.jobs[1].submit), ("1@ended", 5 * SECOND));
    // 90 s long, 16 cores × 60 s = 960 core-s: short under the default rule.
    assert_eq!(w.jobs[0].class, JobClass::Short);
    assert_eq!((rep.outside_window, rep.read.jobs_in_trace), (1, 2));
}

#[test]
fn scale_samples_by_nodes_over_machines() {
    // 2 of 4 source machines: keep each job when draw(seed, name) < 0.5.
    let opts = LoadOptions { target: Target::Scale(0.5), source_machines: Some(4), seed: 3, ..LoadOptions::default() };
    let expected: Vec<&str> = ["job_1", "7"].into_iter().filter(|n| pliant_trace::shrink::draw(3, n) < 0.5).collect();
    match load_workload(&[fixture("sls.json")], &opts) {
        Ok((w, rep)) => {
            assert_eq!(rep.fraction, 0.5);
            let mut names: Vec<&str> = w.jobs.iter().map(|j| j.name.as_str()).collect();
            names.sort_unstable();
            let mut exp = expected.clone();
            exp.sort_unstable();
            assert_eq!(names, exp);
        }
        Err(e) => assert!(expected.is_empty(), "{e}"),
    }
}

#[test]
fn import_writes_what_load_returns() {
    let opts = LoadOptions { target: Target::Nodes(3), ..LoadOptions::default() };
    for name in ["google", "alibaba2018", "alibaba2017", "sls.json"] {
        let mut buf = Vec::new();
        import(&[fixture(name)], &opts, &mut buf).unwrap();
        let back = read_workload(buf.as_slice()).unwrap();
        let (w, _) = load_workload(&[fixture(name)], &opts).unwrap();
        assert_eq!(back, w, "{name}");
        // And the native file loads as a workload in its own right.
        let path = std::env::temp_dir().join(format!("pliant-trace-import-{}-{name}.jsonl", std::process::id()));
        std::fs::write(&path, &buf).unwrap();
        let (again, _) = load_workload(std::slice::from_ref(&path), &LoadOptions::default()).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(again, w, "{name}");
    }
}

#[test]
fn a_native_cluster_keeps_its_mix_when_resized() {
    let path = std::env::temp_dir().join(format!("pliant-trace-mix-{}.jsonl", std::process::id()));
    std::fs::write(
        &path,
        concat!(
            "{\"cluster\":{\"nodes\":[{\"count\":2,\"cpu\":4,\"mem_mb\":8192},{\"count\":2,\"cpu\":8,\"mem_mb\":16384}]}}\n",
            "{\"job\":{\"name\":\"a\",\"submit_s\":0,\"class\":\"short\",\"phases\":[{\"tasks\":[{\"cpu\":2,\"mem_mb\":1024,\"duration_s\":5}]}]}}\n",
        ),
    )
    .unwrap();
    let (a, b) = (Resources::cores_gb(4, 8), Resources::cores_gb(8, 16));
    let nodes = |target| {
        let opts = LoadOptions { target, ..LoadOptions::default() };
        load_workload(std::slice::from_ref(&path), &opts).unwrap().0.cluster.nodes
    };
    // Node i of N is node ⌊i·4/N⌋ of [a, a, b, b]: N = 2 → 0, 2; N = 6 → 0, 0, 1, 2, 2, 3.
    assert_eq!(nodes(Target::Nodes(2)), [a, b]);
    assert_eq!(nodes(Target::Nodes(6)), [a, a, a, b, b, b]);
    assert_eq!(nodes(Target::Source), [a, a, b, b]);
    std::fs::remove_file(&path).unwrap();
}

/// A table under a name of the user's own is told by its rows: Alibaba
/// v2017's `batch_task` (with or without its header row) by the status in its
/// sixth field, Google's `job_events` by the event type in its fourth.
#[test]
fn formats_are_told_by_content_whatever_the_file_is_called() {
    let dir = std::env::temp_dir().join(format!("pliant-renamed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let copy = |from: &str, to: &str| {
        let path = dir.join(to);
        std::fs::copy(fixture(from), &path).unwrap();
        path
    };
    for (from, to) in
        [("alibaba2017/batch_task.csv", "tasks-2017.csv"), ("alibaba2017_full/batch_task.csv", "with-header")]
    {
        let inputs = detect(&[copy(from, to)]).unwrap();
        assert_eq!((inputs.format, inputs.main.len()), (Format::Alibaba2017, 1), "{to}");
    }
    let err = detect(&[copy("google/job_events-part-0.csv", "jobs.csv")]).unwrap_err().to_string();
    assert!(err.contains("Google job_events without task_events"), "{err}");
    let odd = dir.join("odd.csv");
    std::fs::write(&odd, "1,2,3,40,5,x,7,8\n").unwrap();
    let err = detect(std::slice::from_ref(&odd)).unwrap_err().to_string();
    for expected in ["odd.csv:1:", "an event type 0-8 in the 4th", "a status in the 6th"] {
        assert!(err.contains(expected), "{expected} not in {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
