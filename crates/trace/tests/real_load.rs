//! A replay carries the load the trace really had: every run the trace shows
//! holds its resources for as long as it ran. Small hand-written files in the
//! published formats; expected values worked out by hand in the comments.

use pliant_core::{Resources, SECOND};
use pliant_trace::{detect, load_workload, JobKind, LoadOptions, ReadOptions, TraceError, TraceJob, Unfinished};

mod common;
use common::{fixture, read};

fn durations(j: &TraceJob) -> Vec<Vec<u64>> {
    j.phases.iter().map(|p| p.tasks.iter().map(|t| t.duration / SECOND).collect()).collect()
}

fn find<'a>(jobs: &'a [TraceJob], id: &str) -> &'a TraceJob {
    jobs.iter().find(|j| j.id == id).unwrap_or_else(|| panic!("no job {id}"))
}

/// Job 7 runs since before the window (task 0 to the end: a service; task 1
/// LOST at 900 s); job 8's task fails once (710 → 750 s) and then finishes
/// (770 → 800 s); job 9 runs 1000 → 1200 s, the last event.
#[test]
fn google_every_run_holds_its_machine_by_default() {
    let (jobs, rep) = read("google_service", &ReadOptions::default());
    let ids: Vec<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(ids, ["7@service", "7@ended", "8", "8@ended", "9"]);
    let t = rep.tasks;
    assert_eq!((t.finished, t.truncated, t.ended, t.ended_runs), (2, 1, 1, 2));
    assert_eq!((t.unfinished, t.started_before, t.abnormal, t.never_ran), (0, 0, 0, 0));
    // The service: 600 s (the window opens) → 1200 s (the files end), submitted at 600 s.
    let svc = find(&jobs, "7@service");
    assert_eq!((svc.kind, svc.submit, svc.end), (JobKind::Service, 600 * SECOND, 1200 * SECOND));
    assert_eq!(durations(svc), [[600]]);
    // CPU 0.25 and memory 0.125 of ⟨32 CPU, 128 GB⟩.
    assert_eq!(svc.phases[0].tasks[0].request, Resources::new(8_000, 16_384));
    // Its LOST task: 600 → 900 s, a run of its own kind.
    let lost = find(&jobs, "7@ended");
    assert_eq!((lost.kind, durations(lost)), (JobKind::Ended, vec![vec![300]]));
    // Job 8: the finished run is the task's work; the failed run held 16 cores for 40 s.
    assert_eq!(durations(find(&jobs, "8")), [[30]]);
    assert_eq!(find(&jobs, "8").kind, JobKind::Batch);
    assert_eq!(durations(find(&jobs, "8@ended")), [[40]]);
    // Ended runs arrive when the first of them began.
    assert_eq!(find(&jobs, "8@ended").submit, 710 * SECOND);
    // The trace's load, every run when it ran: 8 cores × (600 + 300) s + 16 × (40 + 30) + 4 × 200.
    let load = rep.load.unwrap();
    assert_eq!(load.cpu.iter().sum::<f64>(), 8.0 * 900.0 + 16.0 * 70.0 + 4.0 * 200.0);
    assert_eq!(load.span, Some((600 * SECOND, 1200 * SECOND)));
    // The import asks for the same core-seconds.
    let asked: f64 = jobs.iter().map(|j| j.core_seconds()).sum();
    assert_eq!(asked, load.cpu.iter().sum::<f64>());
}

/// `--finished-only` is today's view: only complete finished runs.
#[test]
fn google_finished_only_keeps_complete_runs() {
    let opts = ReadOptions { unfinished: Unfinished::Drop, ..ReadOptions::default() };
    let (jobs, rep) = read("google_service", &opts);
    assert_eq!(jobs.iter().map(|j| j.id.as_str()).collect::<Vec<_>>(), ["8", "9"]);
    let t = rep.tasks;
    assert_eq!((t.finished, t.unfinished, t.abnormal, t.ended, t.ended_runs), (2, 1, 1, 0, 0));
}

/// The hand-written part of `google`: job 1's killed task (705 → 750 s) and
/// the evicted run of its other task (710 → 720 s) are kept as ended runs; job 2's task that ran since timestamp 0 runs from
/// 600 s; job 2 is submitted at timestamp 0, so it arrives when the window opens.
#[test]
fn google_runs_from_before_the_window_start_at_600_s() {
    let (jobs, rep) = read("google", &ReadOptions::default());
    let ids: Vec<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(ids, ["1", "1@ended", "2", "3"]);
    let t = rep.tasks;
    assert_eq!((t.finished, t.truncated, t.ended, t.never_ran, t.abnormal, t.unfinished), (2, 2, 1, 1, 0, 0));
    assert_eq!((t.ended_runs, t.evicted_runs), (1, 1));
    assert_eq!(durations(find(&jobs, "1@ended")), [[10, 45]]);
    let j2 = find(&jobs, "2");
    // Task 0: 600 → 800 s; task 1: 660 s → the last event, 900 s. Not a service:
    // the task that ran from before the window finished inside it.
    assert_eq!(durations(j2), [[200, 240]]);
    assert_eq!((j2.submit, j2.kind), (600 * SECOND, JobKind::Batch));
}

/// Alibaba v2017's `plan_cpu` is in hundredths of a core (50 = half a core).
#[test]
fn alibaba_2017_plan_cpu_is_hundredths_of_a_core() {
    let (jobs, _) = read("alibaba2017", &ReadOptions::default());
    assert_eq!(jobs[0].phases[0].tasks[0].request.cpu_milli, 500);
    assert_eq!(jobs[0].phases[1].tasks[0].request.cpu_milli, 1000);
}

/// A v2017 `batch_task` with a header row and its `batch_instance` (also with
/// one): instances run their own spans, the failed one is an ended run, the
/// running task runs to the last end seen (400 s), and machines have 64 CPUs.
#[test]
fn alibaba_2017_header_instances_and_64_cpu_machines() {
    let (jobs, rep) = read("alibaba2017_full", &ReadOptions::default());
    assert_eq!((rep.rows, rep.bad.count), (6, 0));
    assert_eq!(jobs.iter().map(|j| j.id.as_str()).collect::<Vec<_>>(), ["11", "11@ended", "12"]);
    assert_eq!(durations(find(&jobs, "11")), [[60, 280]]);
    assert_eq!(durations(find(&jobs, "11@ended")), [[20]]);
    let j12 = find(&jobs, "12");
    assert_eq!(durations(j12), [[250]]);
    // 6400 hundredths = 64 cores, a whole v2017 machine; 0.5 of its 128 GB.
    assert_eq!(j12.phases[0].tasks[0].request, Resources::new(64_000, 65_536));
    let t = rep.tasks;
    assert_eq!((t.finished, t.truncated, t.ended, t.ended_runs, t.abnormal), (2, 1, 1, 1, 0));
    let opts = LoadOptions { target: pliant_trace::Target::Nodes(2), ..LoadOptions::default() };
    let (w, _) = load_workload(&[fixture("alibaba2017_full")], &opts).unwrap();
    assert_eq!(w.cluster.nodes, vec![Resources::cores_gb(64, 128); 2]);
}

/// Input that is no known layout is refused with its file, line and reason.
#[test]
fn refused_input_says_where_and_why() {
    let err = detect(&[fixture("alibaba2017_bad/batch_task.csv")]).unwrap_err();
    let TraceError::Format(msg) = err else { panic!("{err}") };
    assert!(msg.contains("batch_task.csv:2: a row of 3 comma-separated field(s)"), "{msg}");
    assert!(msg.contains("v2017 batch_task: 8 fields"), "{msg}");
}

/// Google `machine_events`: machines 1, 2 and 3 up from the start (0.5, 1.0
/// and 0.25 of the largest machine's CPU), 4 with no capacity given, 3
/// removed at 700 s, 5 added at 800 s. The cluster is every machine up at some
/// instant: 1, 2, 3 and 5, in ID order.
#[test]
fn google_machine_events_give_the_cluster() {
    let (w, rep) = load_workload(&[fixture("google_machines")], &LoadOptions::default()).unwrap();
    // Memory: 0.4993 × 131,072 MB = 65,444.2 → 65,445; 0.2498 → 32,742; 0.2493 → 32,677.
    let want = [
        Resources::new(16_000, 65_445),
        Resources::new(32_000, 131_072),
        Resources::new(8_000, 32_742),
        Resources::new(16_000, 32_677),
    ];
    assert_eq!(w.cluster.nodes, want);
    let m = rep.machines.clone().unwrap();
    assert_eq!((m.machines, m.added, m.removed, m.no_capacity), (4, 1, 1, 1));
    assert!(rep.to_string().contains("4 nodes of the trace's machine table"), "{rep}");
    // --nodes 2 picks machines evenly: the first and the third.
    let opts = LoadOptions { target: pliant_trace::Target::Nodes(2), ..LoadOptions::default() };
    let (w, _) = load_workload(&[fixture("google_machines")], &opts).unwrap();
    assert_eq!(w.cluster.nodes, [want[0], want[2]]);
    // Without a machine table the output says the nodes are uniform.
    let (_, rep) = load_workload(&[fixture("google_service/task_events-part-0.csv")], &opts).unwrap();
    assert!(rep.to_string().contains("uniform: the trace gives no machine table"), "{rep}");
}

/// Alibaba v2018 `machine_meta`: 96 and 64 cores, memory 100 % and 50 % of the node's.
#[test]
fn alibaba_machine_meta_gives_the_cluster() {
    let (w, rep) = load_workload(&[fixture("alibaba2018_machines")], &LoadOptions::default()).unwrap();
    assert_eq!(w.cluster.nodes, [Resources::new(96_000, 131_072), Resources::new(64_000, 65_536)]);
    assert_eq!(rep.nodes, 2);
    let stats = pliant_trace::trace_stats(&[fixture("alibaba2018_machines")], &Default::default()).unwrap();
    assert_eq!(stats.capacity, (2, Resources::new(160_000, 196_608), true));
}

/// Alibaba `batch_task` core-seconds recounted from the raw rows, without
/// pliant: Σ instance_num × plan_cpu / 100 × (end − start) over the rows that
/// ran (Terminated or Failed with a start after 0 and an end after it), plus
/// Running rows to the last end time seen. The import asks for the same
/// within 5 % (here: exactly, the rows being whole seconds and cores).
#[test]
fn alibaba_import_core_seconds_match_a_recount_of_the_rows() {
    // Columns: plan_cpu, instance count, status, start, end.
    for (dir, cpu, n, status, start, end) in [("alibaba2017", 6, 4, 5, 0, 1), ("alibaba2018", 7, 1, 4, 5, 6)] {
        let text = std::fs::read_to_string(fixture(dir).join("batch_task.csv")).unwrap();
        let rows: Vec<Vec<&str>> =
            text.lines().map(|l| l.split(',').collect()).filter(|f: &Vec<&str>| f.len() > 7).collect();
        let time = |f: &Vec<&str>, i: usize| f[i].parse::<f64>().unwrap();
        let last = rows.iter().map(|f| time(f, end)).fold(0.0, f64::max);
        let mut want = 0.0;
        for f in &rows {
            let (s, e, cores) = (time(f, start), time(f, end), time(f, cpu) / 100.0);
            let e = match f[status] {
                "Terminated" | "Failed" if s > 0.0 && e > s => e,
                "Running" => last,
                _ => continue,
            };
            want += f[n].parse::<f64>().unwrap() * cores * (e - s);
        }
        let (jobs, _) = read(dir, &ReadOptions::default());
        let got: f64 = jobs.iter().map(|j| j.core_seconds()).sum();
        assert!(want > 0.0 && (got - want).abs() <= 0.05 * want, "{dir}: import {got} vs recount {want} core-seconds");
    }
}
