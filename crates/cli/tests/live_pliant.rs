//! The `pliant` preset live (issue 20, "done when"): `pliant local` on real
//! processes, cgroups and a swap file, three long victims and three short
//! jobs, the cost model's choices asserted (docs/cost-model.md).
//!
//! The node offers ⟨3 CPU, 1550 MB⟩; the resource monitor runs every 0.25 s.
//! Long jobs (queue `long`, `pliant dirty` tasks of 1 CPU):
//! - B, little memory: ⟨1 CPU, 150 MB⟩ dirtying 80 MB, estimated 300 s;
//! - C, much dirty memory: ⟨1 CPU, 760 MB⟩ dirtying 700 MB, estimated 200 s,
//!   running 5 s before A starts (so that killing it costs more than S3's shrink);
//! - A, just started (once B and C have run a while): ⟨1 CPU, 600 MB⟩
//!   dirtying 50 MB, estimated 100 s. The node is then full: 3 CPU, 1510 MB.
//!
//! Short jobs, each submitted once the one before has started, each writing
//! its own start stamp and sleeping 3 s:
//! - S1 needs CPU only (⟨1 CPU, 30 MB⟩, 40 MB are free). Freezing any
//!   running victim costs nothing (no work lost, nothing swapped); among
//!   equal costs the victims go in Algorithm 2's order, the longest
//!   remaining job first: B is **suspended**.
//! - S2 needs ⟨1 CPU, 580 MB⟩, 570 MB more than is free. Freezing frees no
//!   memory. Killing A costs the work it did, ran_A core-seconds (well under
//!   a second: it has just started) and frees its 600 MB at once; shrinking A
//!   by 536 MB (all above its 64 MB footprint) costs 0.523 GB × (5.1 s/GB to
//!   read back + 3 s/GB of the waiting core) = 4.24 core-s for 97 % of the
//!   need, shrinking C by 570 MB 4.51; killing C loses its run (seconds).
//!   A is **killed** (the model's choice while ran_A < 4.37 s).
//! - S3 needs ⟨1 CPU, 290 MB⟩, 260 MB more than is free; C is the only
//!   running victim: shrinking it by the need costs 0.254 GB × 8.1 s/GB =
//!   2.06 core-s, killing it its whole run: C is **shrunk by 260 MB**.
//!
//! Asserted: those choices, each one the cheapest (per part of the need) of
//! the alternatives the live record shows; each short job starts (its own
//! stamp) within the measured reclaim time of its need + 1 s (0 for S1 and
//! S2: freezing and killing free at once; for S3 the time from C's
//! preemption until its node reported 260 MB back); and no task starts
//! twice (the tasks' own start lines) but the killed A, every long task
//! ending with its memory intact (B and C run until the short jobs have
//! ended and they have made two more passes). Runs under PLIANT_LIVE_TESTS=1
//! only, and needs root, the cpu, memory and freezer controllers, and swapon
//! (it fails without them).

mod common;

use common::live::{free_port, live_machine, skip};
use common::local::{dirty, unix_ns, Local};
use pliant_live::dirtier::read_progress;
use pliant_live::scratch::ScratchDir;
use pliant_live::swap::TempSwap;
use pliant_testbed::slow_swap::SlowSwap;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

/// A short job's command: writes its start (ns since 1970) to `stamp`, then sleeps 3 s.
fn stamped(stamp: &Path) -> Vec<String> {
    let script = format!("date +%s%N > {}; sleep 3", stamp.display());
    vec!["/bin/sh".into(), "-c".into(), script]
}

/// The manager's log lines `T s: …` that contain `what`, with their T.
fn log_times<'a>(log: &'a str, what: &str) -> Vec<(f64, &'a str)> {
    log.lines()
        .filter(|l| l.contains(what))
        .filter_map(|l| {
            let t = l.split_once("local: ")?.1.split_once(" s: ")?;
            Some((t.0.parse().ok()?, l))
        })
        .collect()
}

/// Seconds from the preemption of `victim` (as `job J task 0`) until its node
/// had reported `mem_mb` back, from the manager's log.
fn reclaim_time(log: &str, victim: &str, mem_mb: u64) -> f64 {
    let (preempted, _) = log_times(log, &format!("preempt {victim}:"))[0];
    let mut back = 0;
    for (t, line) in log_times(log, &format!("{victim} gave back ")) {
        back += line.split("gave back ").nth(1).and_then(|r| r.split(' ').next()).unwrap().parse::<u64>().unwrap();
        if back >= mem_mb {
            return t - preempted;
        }
    }
    panic!("{victim} never gave back {mem_mb} MB; log:\n{log}");
}

/// The choice of the cost model among `options` for `need`: the least cost
/// per part of the need covered (the mean over the resources needed), only
/// options that free memory while memory is needed.
fn cheapest<'a>(options: &'a [Value], need: &Value) -> &'a Value {
    let (cpu, mem) = (need["cpu_milli"].as_f64().unwrap(), need["mem_mb"].as_f64().unwrap());
    let per_part = |o: &Value| {
        let (c, m) = (o["takes"]["cpu_milli"].as_f64().unwrap(), o["takes"]["mem_mb"].as_f64().unwrap());
        let parts: Vec<f64> = [(c, cpu), (m, mem)]
            .iter()
            .filter(|(_, want)| *want > 0.0)
            .map(|(got, want)| got.min(*want) / want)
            .collect();
        o["cost_core_s"].as_f64().unwrap() / (parts.iter().sum::<f64>() / parts.len() as f64)
    };
    options
        .iter()
        .filter(|o| mem == 0.0 || o["takes"]["mem_mb"].as_u64() > Some(0))
        .min_by(|a, b| per_part(a).total_cmp(&per_part(b)))
        .unwrap()
}

#[test]
fn pliant_takes_each_need_the_cheapest_way_and_restarts_only_the_killed_task() {
    let Some(_machine) = live_machine("live pliant") else { return };
    let dir = ScratchDir::new("pliant-live-pliant").unwrap();
    let _swap = match TempSwap::enable(dir.path(), 512 << 20) {
        Ok(s) => s,
        Err(e) => return skip(&format!("live pliant: cannot turn on a swap file: {e}")),
    };
    let args = ["--cpu", "3", "--mem", "1550M", "--set", "monitor_interval_s=0.25"].map(String::from);
    let log = dir.path().join("local.log");
    let local = Local::start_with(&dir.path().join("state"), "pliant", &args, free_port(), &log);
    // B and C also stop at the first pass after `stop` exists (see below).
    let stop = dir.path().join("stop");
    let long = |name: &str, mem_mb: u64, dirty_mb: u64, passes: u64, estimate_s: u64, until_stop: bool| {
        let mut command = dirty(dirty_mb, passes);
        if until_stop {
            command.extend(["--until-file".to_string(), stop.to_string_lossy().into_owned()]);
        }
        local.submit(json!({"name": name, "queue": "long", "cpu_milli": 1000, "mem_mb": mem_mb,
            "estimate_s": estimate_s, "command": command}))
    };
    let b = long("little", 150, 80, 60000, 300, true);
    // C's passes outlast the short jobs on an idle machine too (1,500 passes
    // of 700 MB took 5.2 s here: C ended before S3 came).
    let c = long("dirty", 760, 700, 6000, 200, true);
    let c_submitted = Instant::now();
    // C runs 5 s first, so that killing it (its run lost) costs more than
    // shrinking it by S3's need (2.06 core-s) on a fast machine too.
    local.wait_until("B and C to run 5 s with their memory dirtied", Duration::from_secs(60), |_| {
        read_progress(&local.stdout(b, 0)).passes >= 200
            && read_progress(&local.stdout(c, 0)).passes >= 10
            && c_submitted.elapsed() >= Duration::from_secs(5)
    });
    let a = long("young", 600, 50, 4000, 100, false);
    local.wait_until("A to start", Duration::from_secs(10), |_| local.job(a)["first_start_us"].is_u64());
    let short = |name: &str, mem_mb: u64| {
        let stamp = dir.shared("tasks").unwrap().join(format!("{name}-started"));
        let submitted = unix_ns();
        let id = local.submit(json!({"name": name, "queue": "short", "cpu_milli": 1000, "mem_mb": mem_mb,
            "command": stamped(&stamp)}));
        local.wait_until(&format!("{name} to start"), Duration::from_secs(30), |_| {
            std::fs::read_to_string(&stamp).is_ok_and(|s| s.ends_with('\n'))
        });
        let started: u64 = std::fs::read_to_string(&stamp).unwrap().trim().parse().unwrap();
        (id, (started - submitted) as f64 / 1e9)
    };
    let (s1, wait1) = short("s1", 30);
    let (s2, wait2) = short("s2", 580);
    let (s3, wait3) = short("s3", 290);
    // Every choice is made once the short jobs have ended. B and C then make
    // two more passes (so at least one whole pass checks the memory C got
    // back from swap) and stop: running their passes out (50 s more at load
    // 7 here) would prove nothing more.
    local.wait_until("the short jobs to end", Duration::from_secs(60), |_| {
        [s1, s2, s3].iter().all(|&j| local.job(j)["state"] == "finished")
    });
    let at_end = [b, c].map(|j| read_progress(&local.stdout(j, 0)).passes);
    local.wait_until("B and C to make two more passes", Duration::from_secs(300), |_| {
        let over = |j: u64| local.job(j)["state"] == "finished";
        [b, c].iter().zip(at_end).all(|(&j, p)| read_progress(&local.stdout(j, 0)).passes >= p + 2 || over(j))
    });
    std::fs::write(&stop, "").unwrap();
    local.wait_for_every_job(Duration::from_secs(300));
    let text = local.log_text();
    let choices: Vec<Value> = local.client.get("/preemptions").unwrap().as_array().unwrap().clone();
    let status = common::pliant(&[
        "status",
        "--manager",
        &format!("https://127.0.0.1:{}", local.port),
        "--state-dir",
        local.state.to_str().unwrap(),
        &c.to_string(),
    ]);
    let status = String::from_utf8_lossy(&status.stdout).into_owned();
    drop(local);

    // Each short job started within the reclaim of its need + 1 s.
    let reclaim3 = reclaim_time(&text, &format!("job {c} task 0"), 260);
    eprintln!(
        "live pliant: S1 (CPU) waited {wait1:.2} s, S2 (kill A) {wait2:.2} s, S3 (260 MB of C, reclaimed in \
         {reclaim3:.2} s) {wait3:.2} s; {} preemptions",
        choices.len()
    );
    for (name, wait, reclaim) in [("S1", wait1, 0.0), ("S2", wait2, 0.0), ("S3", wait3, reclaim3)] {
        assert!(
            wait <= reclaim + 1.0,
            "{name} waited {wait:.2} s, its need's reclaim took {reclaim:.2} s; log:\n{text}"
        );
    }

    // The choices, in order, and each the cost model's own.
    let made: Vec<(u64, &str, u64)> = choices
        .iter()
        .map(|c| {
            let chosen = &c["chosen"];
            (
                c["job"].as_u64().unwrap(),
                chosen["mechanism"].as_str().unwrap(),
                chosen["takes"]["mem_mb"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(made[..3], [(b, "suspend", 0), (a, "kill", 600), (c, "graceful", 260)], "{choices:#?}\nlog:\n{text}");
    // While S3 waits for C's memory, the core it freed at once is offered to
    // the frozen B, which resumes into it and is frozen again at the next
    // monitor run (the core's resumption does not hold room for a waiting
    // task; reported, not fixed here): only re-freezings of B may follow.
    assert!(made[3..].iter().all(|m| *m == (b, "suspend", 0)), "{made:?}\nlog:\n{text}");
    for choice in &choices {
        let model = cheapest(choice["options"].as_array().unwrap(), &choice["need"]);
        assert_eq!(model["mechanism"], choice["chosen"]["mechanism"], "not the cheapest: {choice:#}");
    }
    assert!(status.contains("PREEMPTIONS") && status.contains("graceful"), "pliant status {c}:\n{status}");

    // No task started twice but the killed A; every long task ran to its end
    // (A its passes, B and C to the stop) with its memory intact (exit 0);
    // the short jobs finished.
    let starts = |job: u64| read_progress(&dir.path().join(format!("state/logs/job-{job}/task-0/stdout"))).starts;
    assert_eq!((starts(b), starts(c), starts(a)), (1, 1, 2), "start lines of B, C, A; log:\n{text}");
    let jobs: Vec<Value> = [a, b, c, s1, s2, s3]
        .iter()
        .map(|&j| {
            let path = dir.path().join(format!("state/logs/job-{j}/task-0/exit"));
            json!({"job": j, "exit": std::fs::read_to_string(path).unwrap_or_default().trim()})
        })
        .collect();
    assert!(jobs.iter().all(|j| j["exit"] == "0"), "{jobs:?}");
}

/// The rate the slow swap goes at, each way (MB/s): about 50 s/GB, against
/// the 3 s/GB the policy prices a reclaim at until its node has measured.
const SLOW_SWAP_MB_S: u64 = 20;

/// A long job's passes over its 800 MB: 20–40 s of work here, so that it
/// still runs when its short job comes 5 s after it started.
const LONG_PASSES: u64 = 4000;

/// `pliant twin STATE --format json`.
fn twin(state: &Path) -> Value {
    let out = common::pliant(&["twin", state.to_str().unwrap(), "--format", "json"]);
    assert!(out.status.success(), "twin: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The live planner prices with the rates it measured. The node
/// offers ⟨2 CPU, 1100 MB⟩ and swaps to a device going at 20 MB/s (a FUSE
/// file on a loop device, `pliant_testbed::slow_swap`: this machine's
/// cgroup v1 cannot throttle swap). Twice the same pair: a long job ⟨1 CPU,
/// 1000 MB⟩ dirtying 800 MB (the working set the model assumes, 0.8 of its
/// request) for 20–40 s of work runs 5 s, then a short job ⟨1 CPU,
/// 600 MB⟩ (estimated 3 s) needs 500 MB more than is free.
/// - First, at the policy's 3 s/GB: the shrink's wait (the 300 MB below
///   the victim's working set, 0.9 s) and its restore (1.5 s) cost less
///   than the kill's lost run (5 core-s) and the victim's core stopped while
///   the short job runs (3): the long job is **shrunk**, and frozen as soon
///   as it swaps (BIG-C §4.2). Its reclaim moves about 300 MB at 20 MB/s;
///   once 256 MB have moved, the node's own rate (about 60 s/GB) is
///   journaled and priced with.
/// - Then the same need costs a shrink about 18 s of waiting: the second
///   long job is **killed**.
///
/// Asserted: the two choices, each the cheapest of the options the live
/// record shows; the node's reclaim rate measured at least 5× the default;
/// the second shrink option priced dearer than the first; every job
/// finished; and the twin, at the journal's rates, within 10 % of every
/// JCT. Runs under PLIANT_LIVE_TESTS=1 only; needs root, the cpu, memory and
/// freezer controllers, `/dev/fuse`, `losetup` and `swapon` (it fails
/// without them).
#[test]
fn a_node_measured_slow_to_swap_is_no_longer_shrunk() {
    let Some(_machine) = live_machine("live pliant on slow swap") else { return };
    let dir = ScratchDir::new("pliant-live-slow-swap").unwrap();
    let _swap = match SlowSwap::enable(dir.path(), 1 << 30, SLOW_SWAP_MB_S) {
        Ok(s) => s,
        Err(e) => return skip(&format!("live pliant on slow swap: cannot turn on a slow swap device: {e}")),
    };
    let args = ["--cpu", "2", "--mem", "1100M", "--set", "monitor_interval_s=0.25"].map(String::from);
    let log = dir.path().join("local.log");
    let local = Local::start_with(&dir.path().join("state"), "pliant", &args, free_port(), &log);
    let rates = || local.client.get("/cluster").unwrap()["nodes"][0]["swap"]["reclaim"].clone();
    let mut pairs = vec![];
    for round in 0..2 {
        let long = local.submit(json!({"name": format!("long-{round}"), "queue": "long", "cpu_milli": 1000,
            "mem_mb": 1000, "estimate_s": 300, "command": dirty(800, LONG_PASSES)}));
        local.wait_until("the long job to dirty its memory", Duration::from_secs(60), |_| {
            read_progress(&local.stdout(long, 0)).passes >= 1
        });
        std::thread::sleep(Duration::from_secs(5));
        let stamp = dir.shared("tasks").unwrap().join(format!("short-{round}-started"));
        let short = local.submit(json!({"name": format!("short-{round}"), "queue": "short", "cpu_milli": 1000,
            "mem_mb": 600, "estimate_s": 3, "command": stamped(&stamp)}));
        local.wait_until("the short job to end", Duration::from_secs(180), |_| local.job(short)["state"] == "finished");
        if round == 0 {
            local.wait_until("the node's reclaim rate measured", Duration::from_secs(120), |_| {
                rates()["from"] == "measured"
            });
        }
        local.wait_until("the long job to end", Duration::from_secs(300), |_| local.job(long)["state"] == "finished");
        pairs.push((long, short));
    }
    let measured = rates();
    let text = local.log_text();
    let choices: Vec<Value> = local.client.get("/preemptions").unwrap().as_array().unwrap().clone();
    let state = local.state.clone();
    drop(local);

    let made: Vec<(u64, &str)> =
        choices.iter().map(|c| (c["job"].as_u64().unwrap(), c["chosen"]["mechanism"].as_str().unwrap())).collect();
    assert_eq!(made, [(pairs[0].0, "graceful"), (pairs[1].0, "kill")], "{choices:#?}\nlog:\n{text}");
    for choice in &choices {
        let model = cheapest(choice["options"].as_array().unwrap(), &choice["need"]);
        assert_eq!(model["mechanism"], choice["chosen"]["mechanism"], "not the cheapest: {choice:#}");
    }
    let s_per_gb = measured["s_per_gb"].as_f64().unwrap();
    assert!(
        s_per_gb >= 15.0,
        "the node's reclaims went at {s_per_gb:.1} s/GB, not at its slow swap's rate: {measured}"
    );
    let shrink_cost = |c: &Value| {
        let options = c["options"].as_array().unwrap();
        let shrink = options.iter().find(|o| o["mechanism"] == "graceful").expect("a shrink was priced");
        shrink["cost_core_s"].as_f64().unwrap()
    };
    let (first, second) = (shrink_cost(&choices[0]), shrink_cost(&choices[1]));
    assert!(second > 3.0 * first, "the shrink cost {first:.2} core-s at the defaults, {second:.2} once measured");
    let replay = twin(&state);
    let worst = replay["worst_jct_error"].as_f64().unwrap();
    eprintln!(
        "live pliant on slow swap: reclaim measured at {s_per_gb:.1} s/GB; shrink priced {first:.2} then {second:.2} \
         core-s; the twin's worst JCT error {:.1} %",
        worst * 100.0
    );
    assert!(worst <= 0.10, "the twin is {:.1} % off a JCT: {replay:#}", worst * 100.0);
}
