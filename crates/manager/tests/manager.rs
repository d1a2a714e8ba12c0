//! The manager without a node: reports are fed by hand, so these run
//! anywhere. Expected values are worked out in the comments.

use pliant_core::model::{JobId, TaskRef};
use pliant_core::MechanismKind;
use pliant_core::Resources;
use pliant_live::credentials::Joiner;
use pliant_live::machine::unix_us;
use pliant_live::mirror::Standing;
use pliant_live::protocol::{AgentOp, AgentReport, Expected};
use pliant_live::scratch::ScratchDir;
use pliant_live::token::digest;
use pliant_live::uid_range::{UidRange, DEFAULT_TASK_UIDS};
use pliant_live::wire::NodeRecord;
use pliant_manager::api::{self, handle};
use pliant_manager::journal::Journal;
use pliant_manager::manager::{ClusterConfig, Manager};
use pliant_manager::submit::SubmitRequest;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// One node of ⟨2 CPU, 600 MB⟩ that can do everything; `ip`, with the
/// monitor due at every step (interval 1 µs).
fn config() -> ClusterConfig {
    ClusterConfig {
        policy: "ip".into(),
        params: vec![("monitor_interval_s".into(), "0.000001".into())],
        nodes: vec![NodeRecord {
            name: "n0".into(),
            capacity: Resources::new(2000, 600),
            mechanisms: MechanismKind::ALL.to_vec(),
            notes: vec![],
        }],
        epoch_unix_us: unix_us(),
    }
}

fn submit(m: &mut Manager, body: Value) -> u32 {
    m.submit(serde_json::from_value::<SubmitRequest>(body).unwrap()).unwrap()
}

fn task(job: u32, task: u32) -> TaskRef {
    TaskRef { job: JobId(job), task }
}

/// `record`'s registration body.
fn registration(record: &NodeRecord) -> String {
    json!(record).to_string()
}

fn jobs_json(m: &Manager) -> Value {
    serde_json::to_value(m.jobs().iter().map(|j| m.show_job(j.id).unwrap()).collect::<Vec<_>>()).unwrap()
}

/// Where task `index` of job `job` stands.
fn standing(m: &Manager, job: u32, index: u32) -> Standing {
    m.standing(task(job, index)).unwrap()
}

#[test]
fn a_restarted_manager_replays_its_journal_and_takes_its_tasks_over() {
    let dir = ScratchDir::new("pliant-manager-replay").unwrap();
    let (mut m, recovered) = Manager::open(dir.path(), config(), &pliant_plugins::registry()).unwrap();
    assert!(!recovered);
    let long =
        submit(&mut m, json!({"queue": "long", "tasks": 2, "cpu_milli": 1000, "mem_mb": 280, "command": ["sh"]}));
    // Two tasks of ⟨1, 280⟩ fill the 2 CPUs: both launch at once.
    let ops = m.take_ops(0);
    assert!(matches!(ops.as_slice(), [AgentOp::Launch { .. }, AgentOp::Launch { .. }]), "{ops:?}");
    let short = submit(&mut m, json!({"queue": "short", "cpu_milli": 1000, "mem_mb": 400, "command": ["sh"]}));
    m.advance(vec![]).unwrap();
    // The monitor suspends long tasks to their 64 MB footprint (immediate; the
    // footprint's 1 % CPU is the cgroup quota's floor, booked as 0).
    let ops = m.take_ops(0);
    let suspended: Vec<TaskRef> = ops
        .iter()
        .map(|op| match op {
            AgentOp::Preempt { task, mechanism: MechanismKind::Immediate, limits } => {
                assert_eq!(*limits, Resources::new(0, 64));
                *task
            }
            other => panic!("expected immediate preemptions, got {other:?}"),
        })
        .collect();
    assert!(!suspended.is_empty());
    // Each owes 280 − 64 = 216 MB; nothing is reclaimed yet, so the short job waits.
    for &t in &suspended {
        assert_eq!(m.standing(t).unwrap().owed_mb, 216);
    }
    assert_eq!(m.jobs()[short as usize].tasks[0].launches, 0);
    // The node reports every suspended task's memory back: 600 − 280·(2 − k) MB
    // frees up, so with both suspended 600 MB ≥ 400 MB and the short job starts.
    let reports = suspended
        .iter()
        .map(|&t| (0, AgentReport::Reclaimed { task: t, mem_mb: 216, freed_mb: 150, took_ms: 300 }))
        .collect();
    m.advance(reports).unwrap();
    assert_eq!(suspended.len(), 2, "one suspended task would leave 600 − 280 = 320 MB < 400 MB");
    assert_eq!(m.jobs()[short as usize].tasks[0].launches, 1);
    let before = jobs_json(&m);
    assert_eq!(before[long as usize]["tasks"][0]["state"], "suspended");
    assert_eq!(before[long as usize]["tasks"][0]["reclaimed_mb"], 216);
    // The limits gave back 216 MB each, the cgroups' usage went down by 150 MB
    // each: the metric counts what was freed, 2 × 150 MB.
    assert_eq!(before[long as usize]["tasks"][0]["freed_mb"], 150);
    let metrics = pliant_manager::metrics::Snapshot::of(&m).prometheus();
    assert!(metrics.contains(&format!("pliant_reclaimed_bytes_total {}\n", 300u64 << 20)), "{metrics}");
    drop(m);

    let (mut again, recovered) = Manager::open(dir.path(), config(), &pliant_plugins::registry()).unwrap();
    assert!(recovered);
    assert_eq!(jobs_json(&again), before, "replay rebuilt other records");
    again.queue_recovery();
    let ops = again.take_ops(0);
    let frozen = AgentOp::Adopt {
        task: task(long, 0),
        log_dir: again.log_dir(task(long, 0)),
        checkpoint_dir: dir.path().join("checkpoints/job-0/task-0"),
        resources: Resources::new(1000, 280),
        expect: Expected::Frozen(Resources::new(0, 64)),
        owed_mb: 0,
    };
    assert!(ops.contains(&frozen), "{ops:?}");
    assert!(ops
        .iter()
        .any(|op| matches!(op, AgentOp::Adopt { task: t, expect: Expected::Running, .. } if *t == task(short, 0))));
    assert_eq!(ops.last(), Some(&AgentOp::Sweep));
    assert_eq!(ops.len(), 4, "three tasks to take over, then the sweep");
}

#[test]
fn a_failing_task_fails_its_job_with_its_exit_code_and_stops_the_rest() {
    let dir = ScratchDir::new("pliant-manager-fail").unwrap();
    let (mut m, _) = Manager::open(dir.path(), config(), &pliant_plugins::registry()).unwrap();
    let job = submit(&mut m, json!({"tasks": 2, "cpu_milli": 500, "mem_mb": 100, "command": ["sh"]}));
    m.take_ops(0);
    let failed = AgentReport::Exited { task: task(job, 1), code: Some(3), signal: None, stderr_tail: "boom\n".into() };
    m.advance(vec![(0, failed)]).unwrap();
    let j = &m.jobs()[job as usize];
    assert_eq!(serde_json::to_value(j.state).unwrap(), "failed");
    assert_eq!((j.tasks[1].exit_code, j.tasks[1].stderr_tail.as_deref()), (Some(3), Some("boom\n")));
    assert_eq!(m.take_ops(0), vec![AgentOp::Stop { task: task(job, 0) }], "the other task is stopped");
    // Both tasks are gone from the node: nothing is booked there any more.
    assert_eq!(m.allocations(), vec![Resources::ZERO]);
}

/// A finished or failed task still says which node it ran on; a cancelled
/// job's tasks show `cancelled` (the one that had finished stays finished),
/// and a late report about an ended task changes nothing.
#[test]
fn ended_tasks_keep_their_node_and_a_cancelled_job_s_tasks_show_cancelled() {
    let dir = ScratchDir::new("pliant-manager-ended").unwrap();
    let (mut m, _) = Manager::open(dir.path(), config(), &pliant_plugins::registry()).unwrap();
    let job = submit(&mut m, json!({"tasks": 3, "cpu_milli": 500, "mem_mb": 100, "command": ["sh"]}));
    m.take_ops(0);
    let exited = |t: u32, code: i32| AgentReport::Exited {
        task: task(job, t),
        code: Some(code),
        signal: None,
        stderr_tail: String::new(),
    };
    m.advance(vec![(0, exited(0, 0))]).unwrap();
    m.cancel(job).unwrap();
    assert_eq!(m.take_ops(0), vec![AgentOp::Stop { task: task(job, 1) }, AgentOp::Stop { task: task(job, 2) }]);
    let tasks = &jobs_json(&m)[job as usize]["tasks"];
    let shown: Vec<(&str, u64)> =
        (0..3).map(|t| (tasks[t]["state"].as_str().unwrap(), tasks[t]["node"].as_u64().unwrap())).collect();
    assert_eq!(shown, [("finished", 0), ("cancelled", 0), ("cancelled", 0)]);
    assert_eq!(jobs_json(&m)[job as usize]["state"], "cancelled");
    // The stopped tasks' exits arrive late: stale, nothing changes.
    let before = jobs_json(&m);
    m.advance(vec![(0, exited(1, 0)), (0, exited(2, 137))]).unwrap();
    assert_eq!(jobs_json(&m), before);

    let failing = submit(&mut m, json!({"tasks": 1, "cpu_milli": 500, "mem_mb": 100, "command": ["sh"]}));
    m.take_ops(0);
    m.advance(vec![(
        0,
        AgentReport::Exited { task: task(failing, 0), code: Some(3), signal: None, stderr_tail: String::new() },
    )])
    .unwrap();
    assert_eq!(m.take_ops(0), vec![], "the failed task has already ended: nothing to stop");
    let t = &jobs_json(&m)[failing as usize]["tasks"][0];
    assert_eq!((t["state"].as_str(), t["node"].as_u64(), t["exit_code"].as_i64()), (Some("failed"), Some(0), Some(3)));
}

/// A recovered cluster refuses, with 409 and why, a node whose agent cannot
/// carry out the policy's mechanism (gp without swap), and goes on.
#[test]
fn a_node_that_cannot_carry_out_the_policy_is_refused_not_fatal() {
    let dir = ScratchDir::new("pliant-manager-unfit").unwrap();
    let mut cfg = config();
    cfg.policy = "gp".into();
    let (m, _) = Manager::open(dir.path(), cfg.clone(), &pliant_plugins::registry()).unwrap();
    let mut without_swap = cfg.nodes[0].clone();
    without_swap.mechanisms = vec![MechanismKind::Kill, MechanismKind::Suspend];
    without_swap.notes = vec!["no swap".into()];
    let m = Mutex::new(m);
    let (status, body) = api::register(&m, &registration(&without_swap), Joiner::JoinToken);
    assert_eq!(status, 409, "{body}");
    let error = body["error"].as_str().unwrap();
    assert!(error.contains("policy `gp` needs graceful preemption, which node `n0` cannot do (no swap)"), "{error}");
    let (status, body) = api::register(&m, &registration(&cfg.nodes[0]), Joiner::JoinToken);
    assert_eq!(status, 200, "{body}");
    assert_eq!((&body["node"], &body["agent_timeout_ms"]), (&json!(0), &json!(10_000)));
    assert_eq!(body["credential"].as_str().map(str::len), Some(64), "the node credential issued: {body}");
}

/// The manager sends agents absolute paths even when its state directory
/// was given as a relative one.
#[test]
fn a_relative_state_directory_gives_agents_absolute_paths() {
    let dir = ScratchDir::new("pliant-manager-relative").unwrap();
    let cwd = std::env::current_dir().unwrap();
    let relative = pathdiff(dir.path(), &cwd);
    assert!(relative.is_relative());
    let (mut m, _) = Manager::open(&relative, config(), &pliant_plugins::registry()).unwrap();
    submit(&mut m, json!({"command": ["sh"]}));
    match m.take_ops(0).as_slice() {
        [AgentOp::Launch { log_dir, checkpoint_dir, .. }] => {
            assert_eq!(log_dir, &dir.path().join("logs/job-0/task-0"));
            assert_eq!(checkpoint_dir, &dir.path().join("checkpoints/job-0/task-0"));
        }
        other => panic!("expected one launch, got {other:?}"),
    }
}

/// `to` as a path relative to `from` (both absolute).
fn pathdiff(to: &std::path::Path, from: &std::path::Path) -> std::path::PathBuf {
    let common = to.components().zip(from.components()).take_while(|(a, b)| a == b).count();
    let ups = from.components().skip(common).map(|_| std::path::Component::ParentDir);
    ups.chain(to.components().skip(common)).collect()
}

#[test]
fn bad_requests_get_4xx_and_change_nothing() {
    let dir = ScratchDir::new("pliant-manager-api").unwrap();
    let (m, _) = Manager::open(dir.path(), config(), &pliant_plugins::registry()).unwrap();
    let m = Mutex::new(m);
    let (status, body) = handle(&m, "POST", "/jobs", r#"{"command": ["sh"], "mem_mb": 100}"#);
    assert_eq!((status, body["id"].as_u64()), (201, Some(0)));
    let jobs_before = handle(&m, "GET", "/jobs", "").1;
    let cases: &[(&str, &str, &str, u16, &str)] = &[
        ("POST", "/jobs", "{not json", 400, "malformed job"),
        ("POST", "/jobs", r#"{"command": ["sh"], "mem_mb": 601}"#, 400, "bigger than any node"),
        ("POST", "/jobs", r#"{"command": ["/nonexistent/x"]}"#, 400, "not an executable"),
        ("POST", "/jobs", r#"{"command": ["sh"], "queue": "urgent"}"#, 400, "unknown variant"),
        ("GET", "/jobs/9", "", 404, "no job 9"),
        ("GET", "/jobs/x", "", 400, "not a job id"),
        ("GET", "/jobs/0/tasks/5", "", 404, "no task 5"),
        ("POST", "/jobs/9/cancel", "", 404, "no job 9"),
        ("DELETE", "/jobs", "", 400, "not allowed"),
        ("GET", "/nothing", "", 404, "no such endpoint"),
    ];
    for &(method, url, body, status, message) in cases {
        let (got, answer) = handle(&m, method, url, body);
        assert_eq!(got, status, "{method} {url} {body}: {answer}");
        assert!(answer["error"].as_str().unwrap().contains(message), "{method} {url}: {answer}");
    }
    assert_eq!(handle(&m, "GET", "/jobs", "").1, jobs_before, "a refused request changed the jobs");
    assert_eq!(handle(&m, "POST", "/jobs/0/cancel", "").0, 200);
    let (status, answer) = handle(&m, "POST", "/jobs/0/cancel", "");
    assert_eq!((status, answer["error"].as_str().unwrap()), (409, "job 0 is already cancelled"));
    let metrics = handle(&m, "GET", "/metrics.json", "").1;
    assert_eq!(metrics["jobs"], json!({"cancelled": 1}));
    let cluster = handle(&m, "GET", "/cluster", "").1;
    assert_eq!(cluster["nodes"][0]["allocated"], json!({"cpu_milli": 0, "mem_mb": 0}));
}

#[test]
fn a_silent_agent_is_declared_lost_and_its_task_goes_to_another_node() {
    let dir = ScratchDir::new("pliant-manager-lost").unwrap();
    let mut cfg = config();
    cfg.policy = "fifo".into();
    cfg.params.clear();
    let second = NodeRecord { name: "n1".into(), ..cfg.nodes[0].clone() };
    cfg.nodes.push(second.clone());
    let (mut m, _) = Manager::open(dir.path(), cfg, &pliant_plugins::registry()).unwrap();
    let job = submit(&mut m, json!({"cpu_milli": 2000, "mem_mb": 600, "command": ["sh"]}));
    // A whole-node task: first fit puts it on node 0.
    assert!(matches!(m.take_ops(0).as_slice(), [AgentOp::Launch { .. }]));
    std::thread::sleep(std::time::Duration::from_millis(30));
    assert_eq!(m.heartbeat(1, None, 0, vec![]).unwrap().1, vec![]);
    // Node 0 has been silent for 30 ms, node 1 for almost nothing: a 20 ms timeout loses node 0 only.
    assert_eq!(m.check_agents(20_000).unwrap(), vec!["n0".to_string()]);
    assert_eq!(m.lost_nodes(), &[true, false]);
    let ops = m.take_ops(1);
    assert!(matches!(ops.as_slice(), [AgentOp::Launch { task: t, .. }] if *t == task(job, 0)), "{ops:?}");
    assert_eq!(standing(&m, job, 0).node, Some(1));
    assert_eq!(m.jobs()[job as usize].tasks[0].launches, 2);
    // A lost node's heartbeat is refused until it registers again.
    assert!(m.heartbeat(0, None, 0, vec![]).is_err());
    assert_eq!(m.register(&NodeRecord { name: "n0".into(), ..second }, Joiner::JoinToken).unwrap().0, 0);
    assert_eq!(m.lost_nodes(), &[false, false]);
    // It holds nothing now: it sweeps whatever the killed agent left; the task stays on node 1.
    assert_eq!(m.heartbeat(0, None, 0, vec![]).unwrap().1, vec![AgentOp::Sweep]);
    drop(m);
    let (again, _) = Manager::open(dir.path(), config(), &pliant_plugins::registry()).unwrap();
    assert_eq!(standing(&again, job, 0).node, Some(1), "the replay agrees");
}

/// An agent killed with its tasks still running in their cgroups registers
/// again: it is told to take its running task over and sweep the rest, and
/// the launch it had not fetched still comes; no task is requeued or launched
/// twice. A stop it never fetched (a job cancelled meanwhile) becomes the sweep.
#[test]
fn a_restarted_agent_takes_its_tasks_over_instead_of_losing_them() {
    let dir = ScratchDir::new("pliant-manager-reregister").unwrap();
    let mut cfg = config();
    cfg.policy = "fifo".into();
    cfg.params.clear();
    let (mut m, _) = Manager::open(dir.path(), cfg, &pliant_plugins::registry()).unwrap();
    let body = json!({"cpu_milli": 1000, "mem_mb": 100, "command": ["sh"]});
    let first = submit(&mut m, body.clone());
    assert!(matches!(m.take_ops(0).as_slice(), [AgentOp::Launch { .. }]));
    // ⟨1 CPU⟩ + ⟨1 CPU⟩ fill the ⟨2 CPU⟩ node; the second launch waits in the outbox.
    let second = submit(&mut m, body);
    let record = m.config().nodes[0].clone();
    assert_eq!(m.register(&record, Joiner::JoinToken).unwrap().0, 0);
    let ops = m.take_ops(0);
    match ops.as_slice() {
        [AgentOp::Adopt { task: a, expect: Expected::Running, .. }, AgentOp::Sweep, AgentOp::Launch { task: l, .. }] => {
            assert_eq!((*a, *l), (task(first, 0), task(second, 0)));
        }
        other => panic!("expected adopt, sweep, launch: {other:?}"),
    }
    for job in [first, second] {
        let t = &m.jobs()[job as usize].tasks[0];
        assert_eq!((t.launches, standing(&m, job, 0).node), (1, Some(0)), "job {job}");
    }
    m.cancel(second).unwrap();
    assert_eq!(m.register(&record, Joiner::JoinToken).unwrap().0, 0);
    let ops = m.take_ops(0);
    assert!(
        matches!(ops.as_slice(), [AgentOp::Adopt { task: a, .. }, AgentOp::Sweep] if *a == task(first, 0)),
        "the unfetched stop of job {second} becomes the sweep: {ops:?}"
    );
}

/// `checkpoint-nvm` on the ⟨2 CPU, 600 MB⟩ node, the monitor due at every step.
fn checkpointing(dir: &std::path::Path) -> Manager {
    let mut cfg = config();
    cfg.policy = "checkpoint-nvm".into();
    Manager::open(dir, cfg, &pliant_plugins::registry()).unwrap().0
}

/// A free-level task ⟨2 CPU, 400 MB⟩ runs; a production task ⟨1 CPU, 400 MB⟩
/// does not fit beside it (600 − 400 = 200 MB free) and preempts it by
/// checkpoint. Returns the manager and the two job ids.
fn checkpoint_the_free_task(dir: &std::path::Path) -> (Manager, u32, u32) {
    let mut m = checkpointing(dir);
    let free = submit(&mut m, json!({"priority": 0, "cpu_milli": 2000, "mem_mb": 400, "command": ["sh"]}));
    let ops = m.take_ops(0);
    let ckpt_dir = dir.join("checkpoints/job-0/task-0");
    assert!(
        matches!(ops.as_slice(), [AgentOp::Launch { restore: false, checkpoint_dir, .. }] if *checkpoint_dir == ckpt_dir),
        "{ops:?}"
    );
    let prod = submit(&mut m, json!({"priority": 10, "cpu_milli": 1000, "mem_mb": 400, "command": ["sh"]}));
    m.advance(vec![]).unwrap();
    assert_eq!(
        m.take_ops(0),
        vec![AgentOp::Preempt { task: task(free, 0), mechanism: MechanismKind::Checkpoint, limits: Resources::ZERO }]
    );
    let t = &jobs_json(&m)[free as usize]["tasks"][0];
    assert_eq!((t["state"].as_str(), t["checkpointing"].as_bool()), (Some("suspended"), Some(true)), "{t}");
    assert_eq!(t["preemptions"], json!({"checkpoint": 1}));
    // Each preemption is kept with its time: after the production job came, by now.
    let (preempted, submitted) = (&t["preempted"], jobs_json(&m)[prod as usize]["submit_us"].as_u64().unwrap());
    assert_eq!((preempted.as_array().map(Vec::len), &preempted[0]["mechanism"]), (Some(1), &json!("checkpoint")));
    let at = preempted[0]["at_us"].as_u64().unwrap();
    assert!(submitted <= at && at <= m.now(), "preempted at {at} µs, the job submitted at {submitted} µs");
    // Until the dump is written the free task keeps its ⟨2000, 400⟩ and the production task waits.
    assert_eq!(m.allocations(), vec![Resources::new(2000, 400)]);
    assert_eq!(m.jobs()[prod as usize].tasks[0].launches, 0);
    (m, free, prod)
}

/// Checkpoint → Checkpointed → the production task runs → it finishes →
/// Restore (a relaunch with the same checkpoint directory) → Resumed → finish;
/// the journal replays to the same records.
#[test]
fn a_checkpointed_task_is_restored_from_its_directory_when_room_frees() {
    let dir = ScratchDir::new("pliant-manager-ckpt").unwrap();
    let (mut m, free, prod) = checkpoint_the_free_task(dir.path());
    m.advance(vec![(0, AgentReport::Checkpointed { task: task(free, 0) })]).unwrap();
    // Its ⟨2000, 400⟩ is free: the production task takes ⟨1000, 400⟩, and the
    // free task (2000 > 1000 CPU left) waits, checkpointed.
    let ops = m.take_ops(0);
    assert!(
        matches!(ops.as_slice(), [AgentOp::Launch { task: t, restore: false, .. }] if *t == task(prod, 0)),
        "{ops:?}"
    );
    assert_eq!(m.allocations(), vec![Resources::new(1000, 400)]);
    let t = &jobs_json(&m)[free as usize]["tasks"][0];
    assert_eq!(
        (t["state"].as_str(), t["checkpoints"].as_u64(), t["checkpointing"].as_bool()),
        (Some("pending"), Some(1), Some(false))
    );
    assert_eq!(t["node"], Value::Null);
    let done = |t: TaskRef| AgentReport::Exited { task: t, code: Some(0), signal: None, stderr_tail: String::new() };
    m.advance(vec![(0, done(task(prod, 0)))]).unwrap();
    // The node is empty again: the free task is restored there, from the same directory.
    let restore = AgentOp::Launch {
        task: task(free, 0),
        argv: vec!["sh".into()],
        resources: Resources::new(2000, 400),
        log_dir: dir.path().join("logs/job-0/task-0"),
        checkpoint_dir: dir.path().join("checkpoints/job-0/task-0"),
        restore: true,
        uid: Some(DEFAULT_TASK_UIDS.first),
    };
    assert_eq!(m.take_ops(0), vec![restore]);
    let (t, s) = (&m.jobs()[free as usize].tasks[0], standing(&m, free, 0));
    assert_eq!((serde_json::to_value(s.state).unwrap(), t.launches, s.node), (json!("restoring"), 2, Some(0)));
    assert_eq!(m.allocations(), vec![Resources::new(2000, 400)]);
    m.advance(vec![(0, AgentReport::Resumed { task: task(free, 0) })]).unwrap();
    assert_eq!(serde_json::to_value(standing(&m, free, 0).state).unwrap(), "running");
    m.advance(vec![(0, done(task(free, 0)))]).unwrap();
    let jobs = jobs_json(&m);
    assert_eq!((jobs[0]["state"].as_str(), jobs[1]["state"].as_str()), (Some("finished"), Some("finished")));
    assert_eq!(jobs[free as usize]["tasks"][0]["checkpoints"], 1);
    assert_eq!(m.allocations(), vec![Resources::ZERO]);
    drop(m);
    let (again, recovered) = Manager::open(dir.path(), config(), &pliant_plugins::registry()).unwrap();
    assert!(recovered);
    assert_eq!(jobs_json(&again), jobs, "replay rebuilt other records");
}

/// A task that does not checkpoint (it ended otherwise, or too late) is
/// lost: requeued with the reason on record, and started afresh (its dump
/// never finished, so there is no image to restore). A manager restarted
/// mid-checkpoint asks the node to finish the checkpoint.
#[test]
fn a_failed_checkpoint_requeues_the_task_afresh_and_says_why() {
    let dir = ScratchDir::new("pliant-manager-ckpt-lost").unwrap();
    let (m, free, prod) = checkpoint_the_free_task(dir.path());
    drop(m);
    let (mut m, _) = Manager::open(dir.path(), config(), &pliant_plugins::registry()).unwrap();
    m.queue_recovery();
    let ops = m.take_ops(0);
    assert!(
        matches!(&ops[0], AgentOp::Adopt { task: t, expect: Expected::Checkpointing, .. } if *t == task(free, 0)),
        "{ops:?}"
    );
    let reason = "checkpoint failed: the task ended with exit 1 after SIGUSR1";
    m.advance(vec![(0, AgentReport::Lost { task: task(free, 0), reason: reason.into() })]).unwrap();
    // Freed: the production task starts; the free task waits without a checkpoint.
    let ops = m.take_ops(0);
    assert!(matches!(ops.as_slice(), [AgentOp::Launch { task: t, .. }] if *t == task(prod, 0)), "{ops:?}");
    let t = &jobs_json(&m)[free as usize]["tasks"][0];
    assert_eq!(
        (t["state"].as_str(), t["checkpoints"].as_u64(), t["lost_reason"].as_str()),
        (Some("pending"), Some(0), Some(reason))
    );
    let done = AgentReport::Exited { task: task(prod, 0), code: Some(0), signal: None, stderr_tail: String::new() };
    m.advance(vec![(0, done)]).unwrap();
    let ops = m.take_ops(0);
    assert!(
        matches!(ops.as_slice(), [AgentOp::Launch { task: t, restore: false, .. }] if *t == task(free, 0)),
        "a fresh start, not a restore: {ops:?}"
    );
    assert_eq!(m.allocations(), vec![Resources::new(2000, 400)], "the failed dump left nothing booked");
}

/// Live mode carries out the checkpointing presets; it refuses one only for
/// a node that does not report the checkpoint mechanism.
#[test]
fn checkpointing_presets_need_every_node_to_checkpoint() {
    let mut c = config();
    c.policy = "adaptive-ssd".into();
    assert_eq!(c.policy(&pliant_plugins::registry()).unwrap().name, "adaptive-ssd");
    c.nodes[0].mechanisms.retain(|m| *m != MechanismKind::Checkpoint);
    let err = c.policy(&pliant_plugins::registry()).unwrap_err();
    assert!(err.contains("`adaptive-ssd` needs checkpoint preemption, which node `n0` cannot do"), "{err}");
}

/// Gradual resumption through the manager: `gp` with r_GP = ⟨1 CPU, 2 GB⟩ on a
/// node ⟨4 CPU, 8 GB⟩, the monitor every second (each run is an offer to
/// preempted tasks), the clock stepped by hand. A long task ⟨4, 4 GB⟩ runs; a
/// short one ⟨2, 512 MB⟩ arrives and the monitor at 1 s takes the long task to
/// ⟨3, 2 GB⟩. Its node reports it swapping (frozen: its 3 cores are free) and
/// 2 GB reclaimed; the short task starts, leaving ⟨2, 5.5 GB⟩. After D = 3
/// refused offers (2, 3, 4 s) the long task gets its 2 GB and the 2 free cores
/// back at 5 s and is shrunk, not running; when the short task ends it gets
/// its last 2 cores at the next offer. The journal replays to the same records.
#[test]
fn a_frozen_task_takes_back_part_of_its_allocation_then_the_rest() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    let dir = ScratchDir::new("pliant-manager-gradual").unwrap();
    let mut cfg = config();
    cfg.policy = "gp".into();
    cfg.params = vec![("monitor_interval_s".into(), "1".into()), ("gp_units".into(), "1".into())];
    cfg.nodes[0].capacity = Resources::cores_gb(4, 8);
    let mut m = Manager::open(dir.path(), cfg.clone(), &pliant_plugins::registry()).unwrap().0;
    let clock = Arc::new(AtomicU64::new(cfg.epoch_unix_us + 500_000));
    let read = Arc::clone(&clock);
    m.set_clock(Box::new(move || read.load(Ordering::SeqCst)));
    let at = |s: f64| clock.store(cfg.epoch_unix_us + (s * 1e6) as u64, Ordering::SeqCst);
    let long = submit(&mut m, json!({"queue": "long", "cpu_milli": 4000, "mem_mb": 4096, "command": ["sh"]}));
    assert!(matches!(m.take_ops(0).as_slice(), [AgentOp::Launch { .. }]));
    let short = submit(&mut m, json!({"queue": "short", "cpu_milli": 2000, "mem_mb": 512, "command": ["sh"]}));
    at(1.0);
    m.advance(vec![]).unwrap();
    let limits = Resources::new(3000, 2048);
    assert_eq!(
        m.take_ops(0),
        vec![AgentOp::Preempt { task: task(long, 0), mechanism: MechanismKind::Graceful, limits }]
    );
    let reclaimed = AgentReport::Reclaimed { task: task(long, 0), mem_mb: 2048, freed_mb: 2048, took_ms: 1 };
    at(1.5);
    m.advance(vec![(0, AgentReport::Swapping { task: task(long, 0) }), (0, reclaimed)]).unwrap();
    assert!(matches!(m.take_ops(0).as_slice(), [AgentOp::Launch { task: t, .. }] if *t == task(short, 0)));
    for offer in 2..=4 {
        at(offer as f64);
        m.advance(vec![]).unwrap();
        assert_eq!(m.take_ops(0), vec![], "the offer at {offer} s is refused");
    }
    at(5.0);
    m.advance(vec![]).unwrap();
    let part = Resources::new(2000, 4096);
    assert_eq!(m.take_ops(0), vec![AgentOp::Resume { task: task(long, 0), limits: part }]);
    at(5.5);
    m.advance(vec![(0, AgentReport::Resumed { task: task(long, 0) })]).unwrap();
    let t = standing(&m, long, 0);
    assert_eq!((serde_json::to_value(t.state).unwrap(), t.limits), (json!("shrunk"), part));
    assert_eq!(m.take_ops(0), vec![]);
    let done = |t: TaskRef| AgentReport::Exited { task: t, code: Some(0), signal: None, stderr_tail: String::new() };
    at(5.7);
    m.advance(vec![(0, done(task(short, 0)))]).unwrap();
    assert_eq!(m.take_ops(0), vec![], "no offer before the monitor's next run");
    at(6.0);
    m.advance(vec![]).unwrap();
    let full = Resources::new(4000, 4096);
    assert_eq!(m.take_ops(0), vec![AgentOp::Resume { task: task(long, 0), limits: full }]);
    at(6.5);
    m.advance(vec![(0, AgentReport::Resumed { task: task(long, 0) })]).unwrap();
    let t = standing(&m, long, 0);
    assert_eq!((serde_json::to_value(t.state).unwrap(), t.limits), (json!("running"), full));
    let jobs = jobs_json(&m);
    drop(m);
    let (again, recovered) = Manager::open(dir.path(), cfg, &pliant_plugins::registry()).unwrap();
    assert!(recovered);
    assert_eq!(jobs_json(&again), jobs, "replay rebuilt other records");
}

/// A `gp` manager whose ⟨2 CPU, 1000 MB⟩ node is filled by two long jobs of
/// one ⟨1 CPU, 440 MB⟩ task each (jobs 0 and 1), launched.
fn two_long_tasks_under_gp(dir: &ScratchDir) -> Manager {
    let mut cfg = config();
    cfg.policy = "gp".into();
    cfg.nodes[0].capacity = Resources::new(2000, 1000);
    let mut m = Manager::open(dir.path(), cfg, &pliant_plugins::registry()).unwrap().0;
    for _ in 0..2 {
        submit(&mut m, json!({"queue": "long", "cpu_milli": 1000, "mem_mb": 440, "command": ["sh"]}));
    }
    assert_eq!(m.take_ops(0).len(), 2);
    m
}

/// Two long tasks of ⟨1 CPU, 440 MB⟩ fill a ⟨2 CPU, 1000 MB⟩ node under `gp`;
/// a short task of ⟨1 CPU, 100 MB⟩ needs only a core (120 MB are free). One
/// r_GP step (⟨2 CPU, 4 GB⟩) takes the younger long task to its footprint
/// ⟨0, 64 MB⟩ — live, the footprint's 1 % CPU is the quota's floor, not
/// booked — which frees a whole core: the short task is launched in the same
/// step, and the other long task is not touched.
#[test]
fn a_cpu_only_need_shrinks_one_container_and_starts_at_once() {
    let dir = ScratchDir::new("pliant-manager-one-victim").unwrap();
    let mut m = two_long_tasks_under_gp(&dir);
    let short = submit(&mut m, json!({"queue": "short", "cpu_milli": 1000, "mem_mb": 100, "command": ["sh"]}));
    m.advance(vec![]).unwrap();
    let ops = m.take_ops(0);
    let footprint = Resources::new(0, 64);
    assert!(
        matches!(ops.as_slice(),
            [AgentOp::Preempt { task: v, mechanism: MechanismKind::Graceful, limits }, AgentOp::Launch { task: s, .. }]
            if *v == task(1, 0) && *limits == footprint && *s == task(short, 0)),
        "{ops:?}"
    );
}

/// The same node and long tasks; the short task needs ⟨1 CPU, 300 MB⟩, 180 MB
/// more than is free. The memory comes back as the victim's node reports it,
/// in parts: 100 MB are not enough, 80 MB more are, and the short task
/// starts then — before the victim's whole 376 MB are back.
#[test]
fn a_memory_need_starts_once_its_part_of_the_reclaim_is_reported() {
    let dir = ScratchDir::new("pliant-manager-partial-reclaim").unwrap();
    let mut m = two_long_tasks_under_gp(&dir);
    let short = submit(&mut m, json!({"queue": "short", "cpu_milli": 1000, "mem_mb": 300, "command": ["sh"]}));
    m.advance(vec![]).unwrap();
    let victims: Vec<TaskRef> = m
        .take_ops(0)
        .into_iter()
        .map(|op| match op {
            AgentOp::Preempt { task, .. } => task,
            other => panic!("expected preemptions only, got {other}"),
        })
        .collect();
    assert_eq!(victims, vec![task(1, 0)], "one victim");
    let part = |mem_mb| (0, AgentReport::Reclaimed { task: victims[0], mem_mb, freed_mb: mem_mb, took_ms: 100 });
    m.advance(vec![part(100)]).unwrap();
    assert_eq!(m.take_ops(0), vec![], "100 MB back: 20 MB short");
    m.advance(vec![part(80)]).unwrap();
    assert!(matches!(m.take_ops(0).as_slice(), [AgentOp::Launch { task: t, .. }] if *t == task(short, 0)));
    m.advance(vec![part(196)]).unwrap();
    let t = &m.jobs()[1].tasks[0];
    assert_eq!((t.reclaimed_mb, standing(&m, 1, 0).owed_mb), (376, 0));
}

/// `pliant` on a ⟨2 CPU, 1000 MB⟩ node, with the node able to do `can`:
/// two long tasks of ⟨1 CPU, 440 MB⟩ run for 100 s, then a short task of
/// ⟨1 CPU, 300 MB⟩ arrives (a core and 180 MB more than is free). Returns
/// the preemption ops and the choices recorded.
fn pliant_takes(can: &[MechanismKind]) -> (Vec<AgentOp>, Value) {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    let dir = ScratchDir::new("pliant-manager-pliant").unwrap();
    let mut cfg = config();
    cfg.policy = "pliant".into();
    cfg.nodes[0].capacity = Resources::new(2000, 1000);
    cfg.nodes[0].mechanisms = can.to_vec();
    let epoch = cfg.epoch_unix_us;
    let mut m = Manager::open(dir.path(), cfg, &pliant_plugins::registry()).unwrap().0;
    let now = Arc::new(AtomicU64::new(epoch + 1));
    let clock = now.clone();
    m.set_clock(Box::new(move || clock.load(Ordering::SeqCst)));
    for _ in 0..2 {
        submit(&mut m, json!({"queue": "long", "cpu_milli": 1000, "mem_mb": 440, "command": ["sh"]}));
    }
    assert_eq!(m.take_ops(0).len(), 2);
    now.store(epoch + 100_000_000, Ordering::SeqCst);
    submit(&mut m, json!({"queue": "short", "cpu_milli": 1000, "mem_mb": 300, "command": ["sh"]}));
    m.advance(vec![]).unwrap();
    (m.take_ops(0), serde_json::to_value(m.preemptions()).unwrap())
}

/// With swap the node can shrink: the younger long task gives the short one
/// its core and the 180 MB it lacks — a shrink by the need to ⟨0, 260 MB⟩.
/// 88 MB of it are above the task's 352 MB working set (80 %) and free at
/// once; 92 MB are swapped out in 0.27 s (3 s/GB) while the waiting core
/// waits (0.27 core-s) and the frozen task's core stops (0.27), and read
/// back in 0.46 s (5.1 s/GB): 1.00 core-s, not a kill losing its 100 s (100
/// core-s). A live node has no checkpoint tier: no checkpoint is offered.
/// Without swap the same need is met by killing it, the only mechanism
/// there that frees memory (freezing frees the core for nothing, but no
/// memory). Each choice is recorded with its alternatives' costs.
#[test]
fn pliant_chooses_among_what_the_node_can_do_and_says_why() {
    let (ops, choices) = pliant_takes(&MechanismKind::ALL);
    let victim = task(1, 0);
    assert_eq!(
        ops,
        vec![AgentOp::Preempt { task: victim, mechanism: MechanismKind::Graceful, limits: Resources::new(0, 260) }]
    );
    let c = &choices[0];
    assert_eq!((c["job"].as_u64(), c["chosen"]["mechanism"].as_str()), (Some(1), Some("graceful")));
    let cost = |m: &str| {
        c["options"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["mechanism"] == m)
            .map(|o| o["cost_core_s"].as_f64().unwrap())
    };
    assert!((cost("graceful").unwrap() - 0.997).abs() < 0.01, "{c}");
    assert_eq!(cost("checkpoint"), None, "{c}");
    assert!((cost("kill").unwrap() - 100.0).abs() < 0.01, "{c}");
    // Freezing would free the core for nothing, but no memory: it does not count while memory is missing.
    assert_eq!(cost("suspend"), Some(0.0), "{c}");
    let (ops, choices) = pliant_takes(&[MechanismKind::Kill, MechanismKind::Suspend]);
    assert!(
        matches!(ops.as_slice(), [AgentOp::Preempt { task, mechanism: MechanismKind::Kill, .. }, AgentOp::Launch { .. }] if *task == victim),
        "{ops:?}"
    );
    assert_eq!(choices[0]["chosen"]["mechanism"], "kill");
}

/// The journal keeps a digest of each node credential, never the credential
/// itself (issue 21: credentials sat in it in plain text); a restarted
/// manager still knows the node's own credential from another, and that it
/// was used (the join token cannot replace it). A journal from before the
/// join token, with the digest of a credential its agent made, is taken as it is.
#[test]
fn the_journal_keeps_no_node_credential_only_its_digest() {
    let dir = ScratchDir::new("pliant-manager-digest").unwrap();
    let made_by_an_old_agent = "credential-made-by-an-old-agent";
    let old = Journal::open(&dir.path().join("journal.sqlite")).unwrap();
    old.put("node_credential_digests", &BTreeMap::from([("n1", digest(made_by_an_old_agent.as_bytes()))])).unwrap();
    drop(old);
    let mut cfg = config();
    cfg.nodes.push(NodeRecord { name: "n1".into(), ..cfg.nodes[0].clone() });
    let (mut m, _) = Manager::open(dir.path(), cfg.clone(), &pliant_plugins::registry()).unwrap();
    let (node, issued) = m.register(&cfg.nodes[0], Joiner::JoinToken).unwrap();
    let issued = issued.expect("the join token is issued a node credential");
    assert_eq!(node, 0);
    assert!(m.authenticate_node(0, issued.as_str()), "its first heartbeat");
    drop(m);
    let mut stored = Vec::new();
    for entry in std::fs::read_dir(dir.path()).unwrap().flatten() {
        if entry.file_name().to_string_lossy().starts_with("journal.sqlite") {
            stored.extend(std::fs::read(entry.path()).unwrap());
        }
    }
    let stored = String::from_utf8_lossy(&stored);
    assert!(!stored.contains(issued.as_str()), "the journal holds the node credential");
    let digest = digest(issued.as_str().as_bytes());
    assert_eq!(digest.len(), "sha256:".len() + 64);
    assert!(stored.contains(&digest), "the journal holds no digest of the credential");
    let (mut again, _) = Manager::open(dir.path(), cfg.clone(), &pliant_plugins::registry()).unwrap();
    assert!(again.authenticate_node(0, issued.as_str()));
    assert!(!again.authenticate_node(0, "another-node-credential"));
    assert!(!again.authenticate_node(1, issued.as_str()), "node 0's credential acts as node 1");
    let other = Joiner::Credential("another-node-credential");
    assert!(again.register(&cfg.nodes[0], other).is_err(), "another credential registers as n0");
    assert!(again.register(&cfg.nodes[0], Joiner::JoinToken).is_err(), "the join token takes n0 over");
    assert_eq!(again.register(&cfg.nodes[0], Joiner::Credential(issued.as_str())).unwrap(), (0, None));
    // The old agent's own credential still acts as n1; the join token cannot replace it.
    assert!(again.authenticate_node(1, made_by_an_old_agent));
    assert!(again.register(&cfg.nodes[1], Joiner::JoinToken).is_err());
    assert_eq!(again.register(&cfg.nodes[1], Joiner::Credential(made_by_an_old_agent)).unwrap(), (1, None));
}

/// A restarted manager's takeover, on a cluster of two: the agent of node 0
/// finds the task the journal has there gone and says so, more than once (a
/// report sent again after a lost answer, and the report of a second,
/// stale takeover). The task runs again once only: on node 0, once node 1
/// has swept whatever it may still run, in one launch; every report of the
/// earlier run, whenever it comes, is taken for that run, not the new one.
#[test]
fn a_takeover_that_finds_a_task_gone_relaunches_it_once_after_every_sweep() {
    let dir = ScratchDir::new("pliant-manager-relaunch").unwrap();
    let mut cfg = config();
    cfg.policy = "fifo".into();
    cfg.params.clear();
    cfg.nodes.push(NodeRecord { name: "n1".into(), ..cfg.nodes[0].clone() });
    let (mut m, _) = Manager::open(dir.path(), cfg.clone(), &pliant_plugins::registry()).unwrap();
    let job = submit(&mut m, json!({"cpu_milli": 2000, "mem_mb": 600, "command": ["sh"]}));
    // Launched on node 0 in the journal; the manager dies before node 0 fetches it.
    drop(m);
    let (mut m, _) = Manager::open(dir.path(), cfg, &pliant_plugins::registry()).unwrap();
    m.queue_recovery();
    let t = task(job, 0);
    let (b0, ops) = m.heartbeat(0, None, 0, vec![]).unwrap();
    assert!(matches!(ops.as_slice(), [AgentOp::Adopt { task, .. }, AgentOp::Sweep] if *task == t), "{ops:?}");
    let lost = || AgentReport::Lost { task: t, reason: "its cgroup is gone".into() };
    // Requeued and placed on node 0 again, but held: node 1 has not swept.
    let (b1, ops) = m.heartbeat(0, Some(b0), 10, vec![lost()]).unwrap();
    assert_eq!(ops, vec![]);
    assert_eq!(m.jobs()[job as usize].tasks[0].launches, 2);
    // The same report again (its answer was lost), then a new one of the earlier run.
    let (b2, ops) = m.heartbeat(0, Some(b1), 10, vec![lost()]).unwrap();
    assert_eq!(ops, vec![]);
    let (b3, _) = m.heartbeat(0, Some(b2), 11, vec![lost()]).unwrap();
    assert_eq!(m.jobs()[job as usize].tasks[0].launches, 2, "a report of the earlier run relaunched the task");
    let (swept, ops) = m.heartbeat(1, None, 0, vec![]).unwrap();
    assert_eq!(ops, vec![AgentOp::Sweep]);
    m.heartbeat(1, Some(swept), 0, vec![]).unwrap();
    let (_, ops) = m.heartbeat(0, Some(b3), 12, vec![]).unwrap();
    assert!(matches!(ops.as_slice(), [AgentOp::Launch { task, .. }] if *task == t), "{ops:?}");
    let shown = &m.jobs()[job as usize].tasks[0];
    assert_eq!((shown.launches, standing(&m, job, 0).node), (2, Some(0)));
}

/// Each job gets a uid of its own, the next of the range after the last
/// job's, sent with its launches and journaled: a restarted manager gives
/// the same jobs the same uids (with another range configured meanwhile).
/// A uid comes back round only once its job has ended, and a submission
/// while every uid is held is refused.
#[test]
fn each_job_runs_as_a_uid_of_its_own_kept_across_a_restart() {
    let dir = ScratchDir::new("pliant-manager-uids").unwrap();
    let (mut m, _) = Manager::open(dir.path(), config(), &pliant_plugins::registry()).unwrap();
    m.set_task_uids(UidRange { first: 70_000, last: 70_001 });
    let small = json!({"cpu_milli": 500, "mem_mb": 50, "command": ["sh"]});
    let (a, b) = (submit(&mut m, small.clone()), submit(&mut m, small.clone()));
    let uids = |m: &Manager| m.jobs().iter().map(|j| j.uid).collect::<Vec<_>>();
    assert_eq!(uids(&m), vec![Some(70_000), Some(70_001)]);
    let launched: Vec<Option<u32>> = m
        .take_ops(0)
        .into_iter()
        .filter_map(|op| match op {
            AgentOp::Launch { uid, .. } => Some(uid),
            _ => None,
        })
        .collect();
    assert_eq!(launched, vec![Some(70_000), Some(70_001)]);
    // Both uids are held by unfinished jobs: a third job has none to get.
    let refused = m.submit(serde_json::from_value::<SubmitRequest>(small.clone()).unwrap()).unwrap_err();
    assert!(format!("{refused:?}").contains("every task uid (70000-70001) is held"), "{refused:?}");
    let done = |t: TaskRef| AgentReport::Exited { task: t, code: Some(0), signal: None, stderr_tail: String::new() };
    m.advance(vec![(0, done(task(a, 0)))]).unwrap();
    // Job a ended: its uid is the next free one after b's.
    let c = submit(&mut m, small);
    assert_eq!(uids(&m), vec![Some(70_000), Some(70_001), Some(70_000)]);
    assert_eq!((a, b, c), (0, 1, 2));
    drop(m);
    let (again, recovered) = Manager::open(dir.path(), config(), &pliant_plugins::registry()).unwrap();
    assert!(recovered);
    assert_eq!(uids(&again), vec![Some(70_000), Some(70_001), Some(70_000)], "the journal keeps each job's uid");
}
