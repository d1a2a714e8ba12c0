//! The mechanisms on real processes, real cgroups and real swap.
//!
//! These need root, the cgroup memory, cpu and freezer controllers, and (for
//! immediate and graceful preemption) a swap file they turn on themselves.
//! They run only under `PLIANT_LIVE_TESTS=1` (CI sets it), and then fail
//! where something is missing; otherwise each says `NOT RUN` on stderr and
//! the end of `cargo test --workspace` lists it.
//! The tests run one at a time: swap and CPU are shared by the whole machine.

use pliant_core::model::{JobId, TaskRef};
use pliant_core::MechanismKind;
use pliant_core::Resources;
use pliant_live::agent::{Agent, RULES};
use pliant_live::capabilities::Capabilities;
use pliant_live::cgroup::{Cgroup, CgroupError, Layout, Version};
use pliant_live::confine::{Confinement, TaskUser};
use pliant_live::dirtier::{read_progress, Progress};
use pliant_live::executor::TaskMemory;
use pliant_live::mechanism::{Allocation, CheckpointOutcome, LiveTask, MechanismError};
use pliant_live::process::{CommandSpec, TaskProcess};
use pliant_live::protocol::{files, AgentOp, AgentReport, Expected};
use pliant_live::scratch::ScratchDir;
use pliant_live::swap::{self, TempSwap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::thread::sleep;
use std::time::{Duration, Instant};

const MB: u64 = 1 << 20;
static SERIAL: Mutex<()> = Mutex::new(());

/// One test's world. Fields drop in order: the cgroups (and every task in
/// them) go first, then swap is turned off, then the scratch directory goes.
struct Live {
    layout: Layout,
    top: Cgroup,
    _swap: Option<TempSwap>,
    dir: ScratchDir,
    _serial: MutexGuard<'static, ()>,
    _machine: std::fs::File,
}

/// A test that cannot run here: fails under PLIANT_LIVE_TESTS=1 (it was
/// asked for), is listed at the end of the run otherwise.
fn skip(reason: &str) -> Option<Live> {
    pliant_xtest::cannot_run(reason);
    None
}

/// Sets up a test: root, cgroups, and `swap_mb` of fresh swap if asked.
/// Runs only under PLIANT_LIVE_TESTS=1: otherwise it is listed at the end of
/// the run as not asked for, and touches nothing.
fn live(test: &str, swap_mb: Option<u64>) -> Option<Live> {
    if !pliant_xtest::live(test) {
        return None;
    }
    let serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return skip(&format!("{test}: needs root to create cgroups"));
    }
    let machine = machine_lock();
    let layout = match Layout::detect() {
        Ok(l) => l,
        Err(e) => return skip(&format!("{test}: {e}")),
    };
    let name = format!("pliant-test-{}-{test}", std::process::id());
    let top = match layout.create_fresh(&name) {
        Ok((top, _)) => top,
        Err(e) => return skip(&format!("{test}: cannot create a cgroup: {e}")),
    };
    let c = top.controllers();
    if !(c.memory && c.cpu && c.freezer) {
        return skip(&format!("{test}: needs the cpu, memory and freezer controllers, have {c:?}"));
    }
    let dir = ScratchDir::new(&format!("pliant-test-{test}")).expect("scratch dir");
    let swap = match swap_mb {
        Some(mb) => match TempSwap::enable(dir.path(), mb * MB) {
            Ok(s) => Some(s),
            Err(e) => return skip(&format!("{test}: cannot turn on a swap file: {e}")),
        },
        None => None,
    };
    Some(Live { layout, top, _swap: swap, dir, _serial: serial, _machine: machine })
}

/// Serialises live tests across test processes too (two developers' runs,
/// or a release and a debug build): swap and memory are machine-wide.
fn machine_lock() -> std::fs::File {
    use std::os::fd::AsRawFd;
    let path = std::env::temp_dir().join("pliant-live-tests.lock");
    let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path).expect("lock file");
    // SAFETY: flock only takes the descriptor; the lock goes with the file.
    assert_eq!(unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) }, 0, "flock {}", path.display());
    file
}

fn dirty_spec(dir: &Path, name: &str, mb: u64, checkpoint: bool) -> CommandSpec {
    let argv = vec![env!("CARGO_BIN_EXE_pliant-dirty").to_string(), "--mb".into(), mb.to_string()];
    spec(dir, name, argv, checkpoint)
}

fn spec(dir: &Path, name: &str, argv: Vec<String>, checkpoint: bool) -> CommandSpec {
    let ckpt = dir.join(format!("{name}.ckpt"));
    if checkpoint {
        std::fs::create_dir_all(&ckpt).unwrap();
    }
    CommandSpec {
        argv,
        env: Vec::new(),
        stdout: dir.join(format!("{name}.out")),
        stderr: dir.join(format!("{name}.err")),
        checkpoint_dir: checkpoint.then_some(ckpt),
        exit_file: None,
        cwd: None,
        max_file_bytes: None,
        confinement: Default::default(),
    }
}

/// Waits until the task's progress satisfies `done`, failing if it exits or stalls.
fn wait_for(task: &mut LiveTask, spec: &CommandSpec, what: &str, done: impl Fn(&Progress) -> bool) -> Progress {
    let start = Instant::now();
    loop {
        let p = read_progress(&spec.stdout);
        if done(&p) {
            return p;
        }
        if let Some(status) = task.try_wait().unwrap() {
            let err = std::fs::read_to_string(&spec.stderr).unwrap_or_default();
            panic!("task exited ({status}) while waiting for {what}: {err}");
        }
        assert!(start.elapsed() < Duration::from_secs(60), "timed out waiting for {what}; progress {p:?}");
        sleep(Duration::from_millis(5));
    }
}

/// The pass count after `d`, checking it did not move.
fn stays_put(spec: &CommandSpec, d: Duration) -> u64 {
    let before = read_progress(&spec.stdout).passes;
    sleep(d);
    let after = read_progress(&spec.stdout).passes;
    assert_eq!(after, before, "a frozen task made progress");
    after
}

fn alloc(cpu_milli: u64, mem_mb: u64) -> Allocation {
    Allocation { cpu_milli, mem_bytes: mem_mb * MB }
}

#[test]
fn immediate_preemption_swaps_out_to_the_footprint_and_resume_continues() {
    let Some(w) = live("ip", Some(512)) else { return };
    let caps = Capabilities::detect(&w.top).unwrap();
    assert!(caps.swap_bytes >= 500 * MB, "{caps:?}");
    assert!(caps.supports(MechanismKind::Immediate) && caps.supports(MechanismKind::Graceful));

    let spec = dirty_spec(w.dir.path(), "ip", 256, false);
    let mut task = LiveTask::launch(&w.top, "ip", &spec, alloc(1000, 512)).unwrap();
    wait_for(&mut task, &spec, "two passes", |p| p.passes >= 2);
    assert!(task.memory().unwrap().usage >= 256 * MB);

    let r = task.immediate(64 * MB, Duration::from_secs(30)).unwrap();
    eprintln!("reclaimed {} MB in {:?}", (r.before.usage - r.after.usage) / MB, r.took);
    assert!(r.before.usage >= 256 * MB, "{r:?}");
    assert!(r.after.usage <= 64 * MB, "usage {} is over the footprint", r.after.usage);
    assert!(r.after.swap >= 180 * MB, "only {} MB went to swap", r.after.swap / MB);
    assert_eq!(task.cgroup().cpu_quota().unwrap(), Some(10), "1 % of a core");
    assert!(task.is_frozen().unwrap());
    let frozen_at = stays_put(&spec, Duration::from_millis(300));

    task.resume().unwrap();
    assert_eq!(task.memory().unwrap().limit, Some(512 * MB));
    assert_eq!(task.cgroup().cpu_quota().unwrap(), Some(1000));
    let p = wait_for(&mut task, &spec, "progress after resume", |p| p.passes >= frozen_at + 3);
    assert_eq!((p.starts, p.first_start), (1, 0), "the task restarted");
    assert!(task.try_wait().unwrap().is_none(), "the dirtier exits if a page comes back wrong");
}

#[test]
fn suspend_in_place_keeps_memory_and_stops_progress() {
    let Some(w) = live("suspend", None) else { return };
    let spec = dirty_spec(w.dir.path(), "s", 128, false);
    let mut task = LiveTask::launch(&w.top, "s", &spec, alloc(1000, 512)).unwrap();
    wait_for(&mut task, &spec, "a pass", |p| p.passes >= 1);
    let before = task.memory().unwrap();

    task.suspend().unwrap();
    let frozen_at = stays_put(&spec, Duration::from_millis(300));
    let during = task.memory().unwrap();
    assert!(during.usage >= 128 * MB && during.usage >= before.usage - MB, "{before:?} -> {during:?}");
    assert_eq!(during.swap, before.swap, "suspend must not swap");

    task.resume().unwrap();
    let p = wait_for(&mut task, &spec, "progress after thaw", |p| p.passes >= frozen_at + 2);
    assert_eq!(p.starts, 1);
}

#[test]
fn kill_kills_the_whole_tree_and_removal_leaves_no_cgroup() {
    let Some(w) = live("kill", None) else { return };
    let dirty = env!("CARGO_BIN_EXE_pliant-dirty");
    let argv = vec!["sh".into(), "-c".into(), format!("sleep 600 & sleep 600 & exec {dirty} --mb 16")];
    let spec = spec(w.dir.path(), "k", argv, false);
    let mut task = LiveTask::launch(&w.top, "k", &spec, alloc(1000, 256)).unwrap();
    wait_for(&mut task, &spec, "a pass", |p| p.passes >= 1);
    let pids = task.cgroup().pids().unwrap();
    assert_eq!(pids.len(), 3, "sh (now the dirtier) and two sleeps: {pids:?}");

    let status = task.kill().unwrap();
    assert_eq!(pliant_live::process::describe(status), "signal 9");
    assert!(task.cgroup().pids().unwrap().is_empty());
    for pid in pids {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(state.is_empty() || state.contains(") Z "), "pid {pid} still alive: {state}");
    }
    let dirs = task.cgroup().dirs();
    assert!(dirs.iter().all(|d| d.exists()));
    task.remove().unwrap();
    for d in dirs {
        assert!(!d.exists(), "{} left behind", d.display());
    }
}

/// The executor's looks at `task` until `until` holds, for at most `within`.
fn look_until(
    memory: &mut TaskMemory,
    task: &mut LiveTask,
    out: &mut Vec<AgentReport>,
    within: Duration,
    until: impl Fn(&TaskMemory, &mut LiveTask, &[AgentReport]) -> bool,
) {
    let (start, me) = (Instant::now(), TaskRef { job: JobId(0), task: 0 });
    while !until(memory, task, out) {
        assert!(start.elapsed() < within, "not within {within:?}: {out:?}");
        memory.look(me, task, out).unwrap();
        sleep(Duration::from_millis(100));
    }
}

#[test]
fn graceful_shrinks_keep_the_task_running_then_freeze_it_when_it_swaps() {
    let Some(w) = live("gp", Some(512)) else { return };
    let spec = dirty_spec(w.dir.path(), "gp", 192, false);
    let mut task = LiveTask::launch(&w.top, "gp", &spec, alloc(2000, 512)).unwrap();
    wait_for(&mut task, &spec, "a pass", |p| p.passes >= 1);
    let (me, mut out) = (TaskRef { job: JobId(0), task: 0 }, Vec::new());
    let mut memory = TaskMemory::new(512 * MB, &RULES);

    task.limit_cpu(1500).unwrap();
    memory.lower(me, &mut task, 384 * MB, true, &mut out).unwrap();
    look_until(&mut memory, &mut task, &mut out, Duration::from_secs(10), |m, _, _| m.limit() == 384 * MB);
    let given: u64 = out.iter().map(|r| if let AgentReport::Reclaimed { mem_mb, .. } = r { *mem_mb } else { 0 }).sum();
    assert_eq!(given, 128, "the limit drop, free at once as it was never used: {out:?}");
    assert!(!out.contains(&AgentReport::Swapping { task: me }), "{out:?}");
    assert!(!task.is_frozen().unwrap());
    assert_eq!(task.cgroup().cpu_quota().unwrap(), Some(1500));
    assert_eq!(task.memory().unwrap().limit, Some(384 * MB));
    let p = read_progress(&spec.stdout).passes;
    wait_for(&mut task, &spec, "progress while shrunk", |q| q.passes >= p + 2);
    out.clear();
    memory.look(me, &mut task, &mut out).unwrap();
    assert_eq!(out, vec![], "192 MB fits in 384 MB: no swapping");

    // Below its working set: it stalls (frozen after the agent's 10 s) or swaps (frozen at a look).
    task.limit_cpu(500).unwrap();
    memory.lower(me, &mut task, 128 * MB, true, &mut out).unwrap();
    look_until(&mut memory, &mut task, &mut out, Duration::from_secs(30), |m, t, _| {
        m.limit() == 128 * MB && t.is_frozen().unwrap()
    });
    assert_eq!(out.iter().filter(|r| matches!(r, AgentReport::Swapping { .. })).count(), 1, "{out:?}");
    let m = task.memory().unwrap();
    assert!(m.usage <= 128 * MB && m.swap >= 60 * MB, "{m:?}");
    let frozen_at = stays_put(&spec, Duration::from_millis(300));

    // Gradual resumption: all the memory back but half the CPU; it thaws and runs.
    memory.resume(me, &mut task, 512 * MB, |t| t.resume_to(alloc(1000, 512)), &mut out).unwrap();
    assert!(!task.is_frozen().unwrap());
    assert_eq!(task.cgroup().cpu_quota().unwrap(), Some(1000));
    assert_eq!(task.memory().unwrap().limit, Some(512 * MB));
    let p = wait_for(&mut task, &spec, "progress after a partial resume", |p| p.passes >= frozen_at + 2);
    task.resume().unwrap();
    assert_eq!(task.cgroup().cpu_quota().unwrap(), Some(2000));
    wait_for(&mut task, &spec, "progress after resume", |q| q.passes >= p.passes + 2);
    assert_eq!(p.starts, 1);
}

#[test]
fn cooperative_checkpoint_restarts_from_the_saved_state() {
    let Some(w) = live("ckpt", None) else { return };
    let spec = dirty_spec(w.dir.path(), "c", 32, true);
    let mut task = LiveTask::launch(&w.top, "c", &spec, alloc(1000, 256)).unwrap();
    wait_for(&mut task, &spec, "three passes", |p| p.passes >= 3);

    let dir = spec.checkpoint_dir.clone().unwrap();
    assert_eq!(task.checkpoint(Duration::from_secs(10)).unwrap(), CheckpointOutcome::Saved(dir.clone()));
    let saved = read_progress(&spec.stdout);
    assert!(saved.checkpointed && saved.passes >= 3, "{saved:?}");
    assert_eq!(std::fs::metadata(dir.join("state")).unwrap().len(), 8 + 32 * MB);
    task.remove().unwrap();

    let mut again = LiveTask::launch(&w.top, "c2", &spec, alloc(1000, 256)).unwrap();
    let p = wait_for(&mut again, &spec, "progress after restart", |p| p.starts == 2 && p.passes >= saved.passes + 2);
    let out = std::fs::read_to_string(&spec.stdout).unwrap();
    assert!(out.contains(&format!("restored {}\nstart {}\n", saved.passes, saved.passes)), "{out}");
    assert!(p.passes > saved.passes);
}

#[test]
fn a_task_that_ignores_the_checkpoint_protocol_loses_its_progress() {
    let Some(w) = live("ckpt-lost", None) else { return };
    let spec = spec(w.dir.path(), "l", vec!["sleep".into(), "600".into()], true);
    let mut task = LiveTask::launch(&w.top, "l", &spec, alloc(1000, 64)).unwrap();
    sleep(Duration::from_millis(50));
    let outcome = task.checkpoint(Duration::from_secs(5)).unwrap();
    assert_eq!(outcome, CheckpointOutcome::Lost(format!("signal {}", libc::SIGUSR1)));
}

/// Polls `agent` until it has made `n` reports (at most 20 s).
fn reports(agent: &mut Agent, n: usize) -> Vec<AgentReport> {
    let (start, mut out) = (Instant::now(), Vec::new());
    while out.len() < n {
        assert!(start.elapsed() < Duration::from_secs(20), "only {out:?} after 20 s");
        agent.poll(&mut out);
        sleep(Duration::from_millis(20));
    }
    out
}

/// The agent's side of checkpoint-based preemption: asked by the manager, it
/// reports a cooperating task checkpointed once it has saved and exited 0, a
/// task that dies of SIGUSR1 lost, with why, and one that ignores SIGUSR1
/// lost once its grace is up; an agent that took over a task being
/// checkpointed (its predecessor died) reports its outcome too.
#[test]
fn the_agent_reports_checkpoints_and_failed_ones_even_after_taking_over() {
    let Some(w) = live("agent-ckpt", None) else { return };
    let name = format!("pliant-test-{}-agent-ckpt", std::process::id());
    let task = |job| TaskRef { job: JobId(job), task: 0 };
    let (log_dir, checkpoint_dir) = (
        |job| w.dir.path().join(format!("logs/job-{job}/task-0")),
        |job| w.dir.path().join(format!("ckpt/job-{job}/task-0")),
    );
    let resources = Resources::new(1000, 128);
    let launch = |job, argv: Vec<String>| AgentOp::Launch {
        task: task(job),
        argv,
        resources,
        log_dir: log_dir(job),
        checkpoint_dir: checkpoint_dir(job),
        restore: false,
        uid: None,
    };
    let dirty = || vec![env!("CARGO_BIN_EXE_pliant-dirty").to_string(), "--mb".into(), "8".into()];
    let checkpoint =
        |job| AgentOp::Preempt { task: task(job), mechanism: MechanismKind::Checkpoint, limits: Resources::ZERO };
    let passes = |job| read_progress(&log_dir(job).join("stdout")).passes;
    let grace = Duration::from_secs(2);
    let (mut agent, _) = Agent::start(&w.layout, &name, false, grace).unwrap();
    let mut out = Vec::new();
    agent.apply(launch(0, dirty()), &mut out);
    agent.apply(launch(1, vec!["sleep".into(), "600".into()]), &mut out);
    agent.apply(launch(2, dirty()), &mut out);
    // An ignored signal stays ignored across exec: this `sleep` outlives
    // SIGUSR1 (once the trap is set: it says so in its log directory, its cwd).
    let deaf = ["/bin/sh", "-c", "trap '' USR1; : > deaf; exec sleep 600"].map(String::from).to_vec();
    agent.apply(launch(3, deaf), &mut out);
    assert_eq!(out, vec![], "fresh launches report nothing");
    let start = Instant::now();
    while passes(0) < 2 || passes(2) < 2 || !log_dir(3).join("deaf").exists() {
        assert!(start.elapsed() < Duration::from_secs(20), "the dirtiers do not progress, or task 3 has no trap");
        sleep(Duration::from_millis(20));
    }
    let asked = Instant::now();
    agent.apply(checkpoint(0), &mut out);
    agent.apply(checkpoint(1), &mut out);
    agent.apply(checkpoint(3), &mut out);
    let got = reports(&mut agent, 3);
    assert!(got.contains(&AgentReport::Checkpointed { task: task(0) }), "{got:?}");
    // `sleep` dies of SIGUSR1; the exit-code wrapper outlives it and exits 128 + 10.
    let reason = "checkpoint failed: the task ended with exit 138 after SIGUSR1".to_string();
    assert!(got.contains(&AgentReport::Lost { task: task(1), reason }), "{got:?}");
    let reason = "checkpoint failed: the task did not exit within 2 s of SIGUSR1 and was killed".to_string();
    assert!(got.contains(&AgentReport::Lost { task: task(3), reason }), "{got:?}");
    assert!(asked.elapsed() >= grace, "task 3 was given up before its grace was over");
    // pliant-dirty saves an 8-byte pass count and its 8 MB.
    assert_eq!(std::fs::metadata(checkpoint_dir(0).join("state")).unwrap().len(), 8 + 8 * MB);
    assert_eq!(agent.tasks().collect::<Vec<_>>(), vec![task(2)]);

    // The agent dies without cleaning up; the next one takes task 2 over mid-checkpoint.
    // (Handles remove their cgroup when dropped: these are the next agent's to clean.)
    let top = w.layout.open(&name).unwrap();
    let leftover = top.open_child("job2-task0").unwrap();
    let pid = leftover.pids().unwrap()[0];
    std::mem::forget((agent, top, leftover));
    let (mut next, found) = Agent::start(&w.layout, &name, true, grace).unwrap();
    assert!(found);
    let adopt = AgentOp::Adopt {
        task: task(2),
        log_dir: log_dir(2),
        checkpoint_dir: checkpoint_dir(2),
        resources,
        expect: Expected::Checkpointing,
        owed_mb: 0,
    };
    next.apply(adopt, &mut out);
    assert_eq!(out, vec![]);
    assert_eq!(reports(&mut next, 1), vec![AgentReport::Checkpointed { task: task(2) }]);
    assert_eq!(std::fs::metadata(checkpoint_dir(2).join("state")).unwrap().len(), 8 + 8 * MB);
    assert!(read_progress(&log_dir(2).join("stdout")).checkpointed);
    drop(next);
    // The dead agent's child, a zombie now: reap it.
    let mut status = 0;
    // SAFETY: waitpid writes only to `status`.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
}

/// An agent killed between creating a task's cgroup and starting its command
/// leaves the cgroup empty and no exit status (a launch first removes an
/// earlier run's status): the next agent, told to take the task over,
/// reports it lost, so it runs again, not killed by a signal, which would
/// fail its job. A task that left a status is reported with it.
#[test]
fn an_adopted_task_that_left_no_exit_status_is_lost_not_failed() {
    let Some(w) = live("agent-no-status", None) else { return };
    let name = format!("pliant-test-{}-agent-no-status", std::process::id());
    let task = |job| TaskRef { job: JobId(job), task: 0 };
    let log_dir = |job| w.dir.path().join(format!("logs/job-{job}/task-0"));
    let (agent, _) = Agent::start(&w.layout, &name, false, Duration::from_secs(1)).unwrap();
    let top = w.layout.open(&name).unwrap();
    let mut out = Vec::new();
    // Job 0: launched by an agent that died before the command started (its
    // cgroup made, empty). Job 1: ended with exit code 3 while no agent watched.
    let empty = top.child("job0-task0").unwrap();
    let ended = top.child("job1-task0").unwrap();
    std::fs::create_dir_all(log_dir(1)).unwrap();
    std::fs::write(files::exit(&log_dir(1)), "3\n").unwrap();
    // (Handles remove their cgroup when dropped: these are the next agent's to clean.)
    std::mem::forget((agent, top, empty, ended));
    let (mut next, found) = Agent::start(&w.layout, &name, true, Duration::from_secs(1)).unwrap();
    assert!(found);
    for job in [0, 1] {
        let adopt = AgentOp::Adopt {
            task: task(job),
            log_dir: log_dir(job),
            checkpoint_dir: w.dir.path().join(format!("ckpt/job-{job}/task-0")),
            resources: Resources::new(1000, 64),
            expect: Expected::Running,
            owed_mb: 0,
        };
        next.apply(adopt, &mut out);
    }
    let reason = "it left no exit status (its agent died)".to_string();
    assert_eq!(out[0], AgentReport::Lost { task: task(0), reason });
    assert!(matches!(out[1], AgentReport::Exited { code: Some(3), signal: None, .. }), "{out:?}");
    assert_eq!(out.len(), 2);
    assert_eq!(next.tasks().count(), 0);
}

/// A task ends and the agent reports it, but dies before the manager gets
/// the report (the manager was down): its cgroup stays until the report is
/// delivered, so the next agent, told to take the task over, finds it empty
/// with its exit file and reports the same exit — the task is not lost and
/// run again. Once delivered, the cgroup goes.
#[test]
fn an_ended_task_s_report_survives_its_agent_dying_before_delivery() {
    let Some(w) = live("agent-undelivered", None) else { return };
    let name = format!("pliant-test-{}-agent-undelivered", std::process::id());
    let task = TaskRef { job: JobId(0), task: 0 };
    let log_dir = w.dir.path().join("logs/job-0/task-0");
    let checkpoint_dir = w.dir.path().join("ckpt/job-0/task-0");
    let resources = Resources::new(1000, 64);
    let (mut agent, _) = Agent::start(&w.layout, &name, false, Duration::from_secs(1)).unwrap();
    let argv = ["/bin/sh", "-c", "exit 7"].map(String::from).to_vec();
    let (log, ckpt) = (log_dir.clone(), checkpoint_dir.clone());
    let mut out = Vec::new();
    agent.apply(
        AgentOp::Launch { task, argv, resources, log_dir: log, checkpoint_dir: ckpt, restore: false, uid: None },
        &mut out,
    );
    let first = reports(&mut agent, 1);
    assert!(matches!(first.as_slice(), [AgentReport::Exited { code: Some(7), .. }]), "{first:?}");
    let top = w.layout.open(&name).unwrap();
    assert!(top.open_child("job0-task0").is_some_and(|c| {
        let empty = c.pids().unwrap().is_empty();
        std::mem::forget(c);
        empty
    }));
    // Killed before delivery. (Handles remove their cgroup when dropped: this is the next agent's.)
    std::mem::forget((agent, top));
    let (mut next, _) = Agent::start(&w.layout, &name, true, Duration::from_secs(1)).unwrap();
    let adopt = AgentOp::Adopt { task, log_dir, checkpoint_dir, resources, expect: Expected::Running, owed_mb: 0 };
    next.apply(adopt, &mut out);
    assert!(matches!(out.as_slice(), [AgentReport::Exited { code: Some(7), .. }]), "{out:?}");
    assert_eq!(next.tasks().count(), 0);
    // The next agent delivers, then forgets: nothing of the task is left.
    next.forget_ended();
    let top = w.layout.open(&name).unwrap();
    assert!(top.children().unwrap().is_empty());
    std::mem::forget(top);
}

/// A manager's launch whose checkpoint directory is not the task's own (a
/// directory of the node's that does not end in `job-J/task-T`): the agent,
/// which runs as root, neither empties nor creates it, nor gives it to the
/// task's user; the launch fails with why.
#[test]
fn the_agent_empties_no_directory_but_a_task_s_own() {
    let Some(w) = live("agent-foreign-dir", None) else { return };
    let name = format!("pliant-test-{}-agent-foreign-dir", std::process::id());
    let victim = w.dir.path().join("operator-data");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("precious"), "keep").unwrap();
    let (mut agent, _) = Agent::start(&w.layout, &name, false, Duration::from_secs(1)).unwrap();
    let task = TaskRef { job: JobId(0), task: 0 };
    let log_dir = w.dir.path().join("logs/job-0/task-0");
    let launch = |log_dir: PathBuf, checkpoint_dir: PathBuf| AgentOp::Launch {
        task,
        argv: vec!["true".into()],
        resources: Resources::new(1000, 64),
        log_dir,
        checkpoint_dir,
        restore: false,
        uid: None,
    };
    for (log, ckpt) in [
        (log_dir.clone(), victim.clone()),
        (victim.clone(), w.dir.path().join("ckpt/job-0/task-0")),
        (log_dir.clone(), w.dir.path().join("ckpt/job-0/task-0/../../../operator-data/job-0/task-0")),
    ] {
        let mut out = Vec::new();
        agent.apply(launch(log, ckpt), &mut out);
        match out.as_slice() {
            [AgentReport::Exited { task: t, code: None, stderr_tail, .. }] if *t == task => {
                assert!(stderr_tail.contains("refusing the"), "{stderr_tail}")
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(std::fs::read_to_string(victim.join("precious")).unwrap(), "keep");
    assert!(!log_dir.exists(), "a launch refused creates nothing");
    agent.forget_ended();
}

/// A launch of a sleeper as task `job`-0, its files under `dir`.
fn launch_sleeper(dir: &Path, job: u32) -> AgentOp {
    AgentOp::Launch {
        task: TaskRef { job: JobId(job), task: 0 },
        argv: vec!["sleep".into(), "600".into()],
        resources: Resources::new(1000, 64),
        log_dir: dir.join(format!("logs/job-{job}/task-0")),
        checkpoint_dir: dir.join(format!("ckpt/job-{job}/task-0")),
        restore: false,
        uid: None,
    }
}

/// The processes in the agent's cgroup of task `job`-0 (none if it is gone).
fn task_pids(layout: &Layout, top: &str, job: u32) -> Vec<i32> {
    let top = layout.open(top).unwrap();
    let pids = top.open_child(&format!("job{job}-task0")).map(|c| {
        let pids = c.pids().unwrap();
        std::mem::forget(c);
        pids
    });
    std::mem::forget(top);
    pids.unwrap_or_default()
}

/// The processes of task `job`-0 once both its exit-code wrapper and its `sleep` run.
fn running_sleeper(layout: &Layout, top: &str, job: u32) -> Vec<i32> {
    let start = Instant::now();
    loop {
        let pids = task_pids(layout, top, job);
        if pids.len() == 2 || start.elapsed() > Duration::from_secs(5) {
            return pids;
        }
        sleep(Duration::from_millis(10));
    }
}

/// A task launched again while the agent still holds a run of it (the kill
/// of that run was lost with a crashed manager): the old run is killed and
/// the new one runs on in a fresh cgroup, not killed with the old handle.
#[test]
fn a_relaunch_of_a_held_task_replaces_the_old_run() {
    let Some(w) = live("agent-relaunch", None) else { return };
    let name = format!("pliant-test-{}-agent-relaunch", std::process::id());
    let (mut agent, _) = Agent::start(&w.layout, &name, false, Duration::from_secs(1)).unwrap();
    let mut out = Vec::new();
    agent.apply(launch_sleeper(w.dir.path(), 0), &mut out);
    let first = running_sleeper(&w.layout, &name, 0);
    assert_eq!(first.len(), 2, "the exit-code wrapper and sleep: {first:?}");
    agent.apply(launch_sleeper(w.dir.path(), 0), &mut out);
    let second = running_sleeper(&w.layout, &name, 0);
    agent.poll(&mut out);
    assert_eq!(out, vec![], "the new run was reported ended");
    assert_eq!(second.len(), 2, "the new run is not running: {second:?}");
    assert!(second.iter().all(|p| !first.contains(p)), "the old run {first:?} still runs: {second:?}");
    assert_eq!(agent.tasks().collect::<Vec<_>>(), vec![TaskRef { job: JobId(0), task: 0 }]);
}

/// After a manager restart the agent is told which tasks to take over, then
/// to sweep: a task it still holds that the manager did not name (its kill
/// was lost with the crashed manager) is stopped, the adopted one runs on.
#[test]
fn a_sweep_stops_held_tasks_the_manager_did_not_take_over() {
    let Some(w) = live("agent-sweep", None) else { return };
    let name = format!("pliant-test-{}-agent-sweep", std::process::id());
    let (mut agent, _) = Agent::start(&w.layout, &name, false, Duration::from_secs(1)).unwrap();
    let mut out = Vec::new();
    agent.apply(launch_sleeper(w.dir.path(), 0), &mut out);
    agent.apply(launch_sleeper(w.dir.path(), 1), &mut out);
    let kept = TaskRef { job: JobId(1), task: 0 };
    agent.apply(
        AgentOp::Adopt {
            task: kept,
            log_dir: w.dir.path().join("logs/job-1/task-0"),
            checkpoint_dir: w.dir.path().join("ckpt/job-1/task-0"),
            resources: Resources::new(1000, 64),
            expect: Expected::Running,
            owed_mb: 0,
        },
        &mut out,
    );
    agent.apply(AgentOp::Sweep, &mut out);
    assert_eq!(out, vec![]);
    assert_eq!(agent.tasks().collect::<Vec<_>>(), vec![kept]);
    assert_eq!(task_pids(&w.layout, &name, 0), Vec::<i32>::new());
    assert_eq!(running_sleeper(&w.layout, &name, 1).len(), 2);
    let top = w.layout.open(&name).unwrap();
    assert_eq!(top.children().unwrap(), vec!["job1-task0".to_string()]);
    std::mem::forget(top);
    // A later sweep with no adoption before it stops the rest.
    agent.apply(AgentOp::Sweep, &mut out);
    assert_eq!(agent.tasks().count(), 0);
    assert_eq!(task_pids(&w.layout, &name, 1), Vec::<i32>::new());
}

/// A task taken over that had ended unseen is reported with its exit, and a
/// launch of it in the same batch (the manager held that run killed) drops
/// that report: delivered after the launch, it would pass for the new run's.
#[test]
fn a_relaunch_drops_undelivered_reports_of_the_earlier_run() {
    let Some(w) = live("agent-stale", None) else { return };
    let name = format!("pliant-test-{}-agent-stale", std::process::id());
    let (agent, _) = Agent::start(&w.layout, &name, false, Duration::from_secs(1)).unwrap();
    let top = w.layout.open(&name).unwrap();
    let ended = top.child("job0-task0").unwrap();
    let log_dir = w.dir.path().join("logs/job-0/task-0");
    std::fs::create_dir_all(&log_dir).unwrap();
    std::fs::write(files::exit(&log_dir), "0\n").unwrap();
    // The agent dies. (Handles remove their cgroup when dropped: these are the next agent's.)
    std::mem::forget((agent, top, ended));
    let (mut next, _) = Agent::start(&w.layout, &name, true, Duration::from_secs(1)).unwrap();
    let task = TaskRef { job: JobId(0), task: 0 };
    let resources = Resources::new(1000, 64);
    let checkpoint_dir = w.dir.path().join("ckpt/job-0/task-0");
    let adopt = AgentOp::Adopt { task, log_dir, checkpoint_dir, resources, expect: Expected::Running, owed_mb: 0 };
    let mut out = vec![AgentReport::Resumed { task: TaskRef { job: JobId(1), task: 0 } }];
    next.apply(adopt, &mut out);
    assert!(matches!(out[1], AgentReport::Exited { task: t, code: Some(0), .. } if t == task), "{out:?}");
    next.apply(AgentOp::Preempt { task, mechanism: MechanismKind::Kill, limits: Resources::ZERO }, &mut out);
    next.apply(launch_sleeper(w.dir.path(), 0), &mut out);
    assert_eq!(out, vec![AgentReport::Resumed { task: TaskRef { job: JobId(1), task: 0 } }]);
    assert_eq!(running_sleeper(&w.layout, &name, 0).len(), 2);
    assert_eq!(next.tasks().collect::<Vec<_>>(), vec![task]);
}

/// The agent reports a task resumed after immediate preemption only once it
/// has read its swapped-out memory back (the simulator's restore): not when
/// the resume is carried out, and by then the task's swap is mostly gone.
#[test]
fn the_agent_reports_a_resume_once_the_memory_is_back() {
    let Some(w) = live("agent-restore", Some(512)) else { return };
    let name = format!("pliant-test-{}-agent-restore-node", std::process::id());
    let task = TaskRef { job: JobId(0), task: 0 };
    let full = Resources::new(1000, 320);
    let log_dir = w.dir.path().join("logs/job-0/task-0");
    let argv = vec![env!("CARGO_BIN_EXE_pliant-dirty").to_string(), "--mb".into(), "256".into()];
    let launch = AgentOp::Launch {
        task,
        argv,
        resources: full,
        log_dir: log_dir.clone(),
        checkpoint_dir: w.dir.path().join("ckpt/job-0/task-0"),
        restore: false,
        uid: None,
    };
    let (mut agent, _) = Agent::start(&w.layout, &name, false, Duration::from_secs(1)).unwrap();
    let mut out = Vec::new();
    agent.apply(launch, &mut out);
    // Handles of the agent's cgroups, forgotten at the end: the agent removes them.
    let top = w.layout.open(&name).unwrap();
    let cgroup = top.open_child("job0-task0").unwrap();
    let start = Instant::now();
    while read_progress(&log_dir.join("stdout")).passes < 2 {
        assert!(start.elapsed() < Duration::from_secs(30), "the dirtier does not progress");
        sleep(Duration::from_millis(20));
    }
    let footprint = Resources::new(10, 64);
    agent.apply(AgentOp::Preempt { task, mechanism: MechanismKind::Immediate, limits: footprint }, &mut out);
    while cgroup.memory().unwrap().usage > 64 * MB {
        assert!(start.elapsed() < Duration::from_secs(60), "reclaim does not end");
        agent.poll(&mut out);
        sleep(Duration::from_millis(20));
    }
    let swapped = cgroup.memory().unwrap().swap;
    assert!(swapped >= 150 * MB, "only {} MB went to swap", swapped / MB);
    out.clear();
    let resumed = Instant::now();
    agent.apply(AgentOp::Resume { task, limits: full }, &mut out);
    assert_eq!(out, vec![], "reported resumed before its memory is back");
    let report = reports(&mut agent, 1);
    assert_eq!(report, vec![AgentReport::Resumed { task }]);
    let left = cgroup.memory().unwrap().swap;
    eprintln!("{} MB read back in {:?}, {} MB left in swap", (swapped - left) / MB, resumed.elapsed(), left / MB);
    assert!(left < swapped / 4, "reported resumed with {} MB of {} still in swap", left / MB, swapped / MB);
    std::mem::forget((cgroup, top));
}

#[test]
fn a_memory_limit_that_cannot_be_reached_is_refused_and_not_applied() {
    let Some(w) = live("ebusy", None) else { return };
    let spec = dirty_spec(w.dir.path(), "b", 128, false);
    let mut task = LiveTask::launch(&w.top, "b", &spec, alloc(1000, 512)).unwrap();
    if swap::total_bytes().unwrap() > 0 {
        // Swap on this machine (maybe another test's) would let reclaim swap the
        // task out: forbid it for this cgroup, so the limit cannot be reached.
        let forbidden = task.cgroup().dirs().iter().any(|d| {
            [("memory.swappiness", "0"), ("memory.swap.max", "0")]
                .iter()
                .any(|(file, value)| d.join(file).exists() && std::fs::write(d.join(file), value).is_ok())
        });
        if !forbidden {
            skip("ebusy: swap is on and this cgroup cannot be kept from swapping");
            return;
        }
    }
    wait_for(&mut task, &spec, "a pass", |p| p.passes >= 1);

    let refused = task.cgroup().set_memory_limit(Some(32 * MB), Duration::from_millis(300));
    match refused {
        Err(CgroupError::LimitBusy { limit, usage, waited }) => {
            assert_eq!(limit, 32 * MB);
            assert!(usage >= 100 * MB, "usage {usage}");
            assert!(waited >= Duration::from_millis(300));
        }
        other => panic!("expected LimitBusy, got {other:?}"),
    }
    assert_eq!(task.memory().unwrap().limit, Some(512 * MB), "the old limit stays");
    let p = read_progress(&spec.stdout).passes;
    wait_for(&mut task, &spec, "progress after the refusal", |q| q.passes >= p + 2);
}

#[test]
fn a_killed_agents_leftover_cgroups_are_removed_at_the_next_start() {
    let Some(w) = live("leftover", None) else { return };
    let name = format!("pliant-test-{}-agent", std::process::id());
    let (top, had) = w.layout.create_fresh(&name).unwrap();
    assert!(!had);
    let child = top.child("task").unwrap();
    let sleeper = spec(w.dir.path(), "z", vec!["sleep".into(), "600".into()], false);
    let process = TaskProcess::spawn(&sleeper, &child).unwrap();
    let pid = process.pid() as i32;
    let dirs: Vec<PathBuf> = child.dirs();
    // The agent dies: nothing of it runs its clean-up.
    std::mem::forget((process, child, top));

    let (fresh, had) = w.layout.create_fresh(&name).unwrap();
    assert!(had, "the leftover was not seen");
    assert!(dirs.iter().all(|d| !d.exists()));
    let mut status = 0;
    // SAFETY: waitpid writes only to `status`.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGKILL);
    fresh.remove().unwrap();
}

/// An agent killed between the removals of a task cgroup's v1 directories
/// (memory first) leaves it in the other hierarchies only: it is still a
/// child, and removing the top cgroup removes it (else EBUSY kept the top).
#[test]
fn a_child_left_in_some_v1_hierarchies_is_still_removed() {
    let Some(w) = live("partial", None) else { return };
    if w.layout.version() != Version::V1 {
        pliant_xtest::not_applicable("partial: cgroup v1 only (one directory per hierarchy)");
        return;
    }
    let name = format!("pliant-test-{}-partial", std::process::id());
    let (top, _) = w.layout.create_fresh(&name).unwrap();
    let child = top.child("task").unwrap();
    let dirs = child.dirs();
    assert_eq!(dirs.len(), top.dirs().len(), "one per hierarchy: {dirs:?}");
    assert!(dirs.len() >= 3, "memory, cpu and freezer at least: {dirs:?}");
    std::fs::remove_dir(&dirs[0]).unwrap();
    std::mem::forget(child);
    assert_eq!(top.children().unwrap(), vec!["task".to_string()]);
    let top_dirs = top.dirs();
    top.remove().unwrap();
    assert!(top_dirs.iter().chain(&dirs).all(|d| !d.exists()), "left: {top_dirs:?} {dirs:?}");
}

/// On a machine whose controllers are bound to v1 the unified hierarchy
/// still freezes and kills (core v2 files); CPU and memory report Unsupported.
#[test]
fn cgroup_v2_freezes_kills_and_cleans_up() {
    let Some(w) = live("v2", None) else { return };
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    let Some(root) = mounts.lines().map(|l| l.split_whitespace().collect::<Vec<_>>()).find(|f| f[2] == "cgroup2")
    else {
        skip("v2: no cgroup2 hierarchy mounted");
        return;
    };
    let layout = Layout::v2_at(root[1]);
    let (top, _) = layout.create_fresh(&format!("pliant-test-{}-v2", std::process::id())).unwrap();
    assert_eq!(top.version(), Version::V2);
    let spec = dirty_spec(w.dir.path(), "v2", 16, false);
    let mut task = LiveTask::launch(&top, "v2", &spec, alloc(1000, 64)).unwrap();
    assert_eq!(task.cgroup().pids().unwrap(), vec![task.pid() as i32]);
    wait_for(&mut task, &spec, "a pass", |p| p.passes >= 1);

    task.suspend().unwrap();
    assert!(task.cgroup().is_frozen().unwrap());
    let frozen_at = stays_put(&spec, Duration::from_millis(200));
    task.resume().unwrap();
    wait_for(&mut task, &spec, "progress after thaw", |p| p.passes >= frozen_at + 2);

    if !top.controllers().memory {
        assert!(matches!(task.memory(), Err(MechanismError::Cgroup(CgroupError::Unsupported(_)))));
    }
    let status = task.kill().unwrap();
    assert_eq!(pliant_live::process::describe(status), "signal 9");
    let dir = task.cgroup().path().to_path_buf();
    task.remove().unwrap();
    assert!(!dir.exists());
    let top_dir = top.path().to_path_buf();
    top.remove().unwrap();
    assert!(!top_dir.exists());
}

/// A task starts in its own log directory (the README's live mode says so),
/// and the agent creates that directory and its checkpoint directory
/// readable by their owner only.
#[test]
fn a_task_runs_in_its_log_directory_which_only_its_owner_reads() {
    use std::os::unix::fs::PermissionsExt;
    let Some(w) = live("agent-cwd", None) else { return };
    let name = format!("pliant-test-{}-agent-cwd", std::process::id());
    let (mut agent, _) = Agent::start(&w.layout, &name, false, Duration::from_secs(1)).unwrap();
    let (log_dir, checkpoint_dir) = (w.dir.path().join("logs/job-0/task-0"), w.dir.path().join("ckpt/job-0/task-0"));
    let task = TaskRef { job: JobId(0), task: 0 };
    let op = AgentOp::Launch {
        task,
        argv: vec!["/bin/sh".into(), "-c".into(), "pwd".into()],
        resources: Resources::new(1000, 64),
        log_dir: log_dir.clone(),
        checkpoint_dir: checkpoint_dir.clone(),
        restore: false,
        uid: None,
    };
    let mut out = Vec::new();
    agent.apply(op, &mut out);
    assert_eq!(out, vec![]);
    let ended = reports(&mut agent, 1);
    assert!(matches!(ended[0], AgentReport::Exited { code: Some(0), .. }), "{ended:?}");
    let pwd = std::fs::read_to_string(log_dir.join("stdout")).unwrap();
    assert_eq!(pwd.trim_end(), log_dir.to_str().unwrap());
    for dir in [&log_dir, &checkpoint_dir, &w.dir.path().join("logs"), &w.dir.path().join("ckpt/job-0")] {
        let mode = std::fs::metadata(dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{} has mode {mode:o}", dir.display());
    }
    agent.forget_ended();
}

/// A task run as another user (`nobody`) with a bound on its processes: it
/// starts in its own directory, where it writes its exit code and its
/// checkpoints; it sees none of the agent's environment beyond the passed
/// variables (this test process's `CARGO_*` stand for a daemon's secrets);
/// it cannot gain privileges, raise its own memory limit or leave its
/// cgroup; and no fork takes it past its bound.
#[test]
fn a_confined_task_runs_as_its_user_and_cannot_escape_its_limits() {
    let Some(w) = live("agent-confined", None) else { return };
    let nobody = TaskUser::lookup("nobody").expect("a user nobody on this machine");
    let name = format!("pliant-test-{}-agent-confined", std::process::id());
    let (mut agent, _) = Agent::start(&w.layout, &name, false, Duration::from_secs(1)).unwrap();
    let confinement = Confinement { user: Some(nobody.clone()), job_uids: None, max_pids: Some(16) };
    if let Some(note) = agent.confine(confinement) {
        pliant_xtest::cannot_run(&format!("agent-confined: {note}"));
        return;
    }
    let top = w.layout.open(&name).unwrap();
    let task_dir = top.path().join("job0-task0");
    let limit_file = ["memory.limit_in_bytes", "memory.max"].map(|f| task_dir.join(f));
    let root_procs = top.path().parent().unwrap().join("cgroup.procs");
    let pids_current: Vec<PathBuf> = top.dirs().iter().map(|d| d.join("job0-task0/pids.current")).collect();
    std::mem::forget(top);
    let script = r#"
        id -u; id -g; grep NoNewPrivs /proc/self/status
        env > env.txt
        for f in "$1" "$2"; do [ -e "$f" ] && echo 9223372036854771712 > "$f" && echo "raised $f"; done
        echo $$ > "$3" && echo left-its-cgroup
        touch "$PLIANT_CHECKPOINT_DIR/saved"
        # The bomb in a shell of its own: a shell whose fork fails gives up.
        bash -c 'i=0; while [ $i -lt 40 ]; do sleep 3 & i=$((i+1)); done; sleep 1; wait'; echo forked"#;
    let log_dir = w.dir.path().join("logs/job-0/task-0");
    let task = TaskRef { job: JobId(0), task: 0 };
    let mut argv: Vec<String> = ["/bin/bash", "-c", script, "task"].map(String::from).into();
    argv.extend(limit_file.iter().chain([&root_procs]).map(|p| p.display().to_string()));
    let op = AgentOp::Launch {
        task,
        argv,
        resources: Resources::new(1000, 64),
        log_dir: log_dir.clone(),
        checkpoint_dir: w.dir.path().join("ckpt/job-0/task-0"),
        restore: false,
        uid: None,
    };
    let mut out = Vec::new();
    agent.apply(op, &mut out);
    assert_eq!(out, vec![]);
    let start = Instant::now();
    let mut most = 0;
    // The exit file is there from the start, blank until the code is written over it.
    let exit = log_dir.join("exit");
    while pliant_live::process::recorded_exit(&exit).is_none() && start.elapsed() < Duration::from_secs(20) {
        let current = pids_current.iter().find_map(|f| std::fs::read_to_string(f).ok());
        most = most.max(current.and_then(|c| c.trim().parse::<u64>().ok()).unwrap_or(0));
        sleep(Duration::from_millis(50));
    }
    let ended = reports(&mut agent, 1);
    let stdout = std::fs::read_to_string(log_dir.join("stdout")).unwrap();
    let stderr = std::fs::read_to_string(log_dir.join("stderr")).unwrap();
    assert!(matches!(ended[0], AgentReport::Exited { .. }), "{ended:?}");
    assert!(stdout.starts_with(&format!("{}\n{}\nNoNewPrivs:\t1\n", nobody.uid, nobody.gid)), "{stdout}");
    assert!(!stdout.contains("raised") && !stdout.contains("left-its-cgroup"), "{stdout}");
    assert!(stdout.contains("forked"), "{stdout}\n{stderr}");
    assert!((1..=16).contains(&most), "the task held {most} processes at most, its bound is 16");
    assert!(stderr.contains("fork") || stderr.contains("Resource temporarily unavailable"), "{stderr}");
    let env = std::fs::read_to_string(log_dir.join("env.txt")).unwrap();
    assert!(std::env::var("CARGO_PKG_NAME").is_ok(), "cargo gives tests their package's name");
    assert!(!env.contains("CARGO_"), "the agent's environment reached the task:\n{env}");
    assert!(env.contains("USER=nobody\n") && env.contains("PLIANT_TASK=0\n"), "{env}");
    assert!(log_dir.join("checkpoint/saved").exists(), "its checkpoint directory is below its own");
    assert_eq!(std::fs::read_to_string(log_dir.join("exit")).unwrap().trim(), "0");
    agent.forget_ended();
}
