//! Checkpoint-based preemption on workloads small enough to work out by hand
//! (checkpoint paper §3.3.3's two-job experiment and variations). Tier rates
//! from Table 3: 5 GB = 5120 MB dumps in 169.18 s on HDD, 2.92 s on NVM;
//! restores read at the same rate; an incremental dump writes 10 %.

use pliant_core::model::JobClass;
use pliant_core::policy::Params;
use pliant_core::{Resources, SECOND};
use pliant_metrics::{CheckpointCounts, RunRecord};
use pliant_plugins::preset;
use pliant_sim::{simulate, NodeSwapRates, SimOptions, TaskSwapRates};
use pliant_workload::scenarios::{self, LongJobs};
use pliant_workload::{Cluster, Job, Task, Workload};

/// A one-task job of ⟨4 CPU, 5 GB⟩ running 60 s, submitted at `submit_s`:
/// the `two-job` scenario's low job, renamed, reprioritised and resubmitted.
fn job(name: &str, priority: u8, submit_s: u64) -> Job {
    let low = scenarios::build("two-job", 1, 1.0, LongJobs::Spark).unwrap().jobs.remove(0);
    Job { name: name.into(), priority, submit: submit_s * SECOND, ..low }
}

fn workload(nodes: usize, jobs: Vec<Job>) -> Workload {
    Workload { cluster: Cluster { am: None, nodes: vec![Resources::new(4000, 8192); nodes] }, jobs }
}

fn run(w: &Workload, policy: &str) -> RunRecord {
    simulate(w, preset(policy, &Params::default()).unwrap(), &SimOptions::default()).unwrap()
}

fn jct(r: &RunRecord, job: usize) -> f64 {
    r.jobs[job].jct().unwrap() as f64 / SECOND as f64
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-5
}

/// §3.3.3 on one ⟨4, 8 GB⟩ node: low (priority 0) at 0, high (9) at 30; the
/// monitor runs every 3 s, so it sees the high job at t = 30.
/// - priority (wait): high runs 60–120 (JCT 90), low 0–60.
/// - priority-kill: low killed at 30 (30 s × 4 cores = 120 core-s lost);
///   high 30–90 (60); low restarts 90–150 (150).
/// - checkpoint-hdd: the dump runs 30–199.18 (4 cores held: 676.72 core-s);
///   high 199.18–259.18 (229.18); low restored locally 259.18–428.36
///   (676.72 core-s more), then its last 30 s: ends 458.36.
/// - adaptive-hdd: 30 s of progress < 169.18 + 169.18 s overhead: kill, as priority-kill.
/// - adaptive-nvm: 30 > 2.92 + 2.92: dump 30–32.92, high 32.92–92.92 (62.92),
///   restore 92.92–95.84, low ends 125.84; waste 4 × 5.84 = 23.36 core-s.
#[test]
fn two_job_experiment_by_hand() {
    let w = workload(1, vec![job("low", 0, 0), job("high", 9, 30)]);

    let wait = run(&w, "priority");
    assert_eq!((jct(&wait, 0), jct(&wait, 1)), (60.0, 90.0));

    let kill = run(&w, "priority-kill");
    assert_eq!((jct(&kill, 0), jct(&kill, 1)), (150.0, 60.0));
    assert_eq!(kill.waste_core_seconds, 120.0);
    assert_eq!(kill.preemptions.get("kill"), Some(&1));

    let hdd = run(&w, "checkpoint-hdd");
    assert!(close(jct(&hdd, 1), 229.18), "{}", jct(&hdd, 1));
    assert!(close(jct(&hdd, 0), 458.36), "{}", jct(&hdd, 0));
    assert!(close(hdd.waste_core_seconds, 1353.44), "{}", hdd.waste_core_seconds);
    assert_eq!(hdd.lost_work_core_seconds, 0.0);
    assert_eq!(hdd.checkpoints, CheckpointCounts { full_dumps: 1, local_restores: 1, ..Default::default() });

    let adaptive_hdd = run(&w, "adaptive-hdd");
    assert_eq!((jct(&adaptive_hdd, 0), jct(&adaptive_hdd, 1)), (150.0, 60.0));
    assert_eq!(adaptive_hdd.checkpoints, CheckpointCounts { adaptive_kills: 1, ..Default::default() });

    let nvm = run(&w, "adaptive-nvm");
    assert!(close(jct(&nvm, 1), 62.92), "{}", jct(&nvm, 1));
    assert!(close(jct(&nvm, 0), 125.84), "{}", jct(&nvm, 0));
    assert!(close(nvm.waste_core_seconds, 23.36), "{}", nvm.waste_core_seconds);
}

/// A second preemption dumps only the dirtied 10 %. NVM, one node: low at 0,
/// high at 30 and another high at 102. As above, low is restored 92.92–95.84
/// and runs with 30 s left; at 102 (a monitor tick) it has 23.84 s left. The
/// incremental dump of 512 MB takes 0.292 s; the second high job runs
/// 102.292–162.292 (JCT 60.292); low is restored (all 5 GB, 2.92 s) by
/// 165.212 and ends at 189.052. Waste: 4 × (2.92 + 2.92 + 0.292 + 2.92) = 36.208 core-s.
#[test]
fn second_dump_is_incremental() {
    let w = workload(1, vec![job("low", 0, 0), job("high", 9, 30), job("high2", 9, 102)]);
    let r = run(&w, "checkpoint-nvm");
    assert!(close(jct(&r, 2), 60.292), "{}", jct(&r, 2));
    assert!(close(jct(&r, 0), 189.052), "{}", jct(&r, 0));
    assert!(close(r.waste_core_seconds, 36.208), "{}", r.waste_core_seconds);
    assert_eq!(
        r.checkpoints,
        CheckpointCounts { full_dumps: 1, incremental_dumps: 1, local_restores: 2, ..Default::default() }
    );
}

/// Remote restore: two nodes; low on node 0 and a free-level filler of 40 s
/// on node 1 at t = 0; high at 30 preempts low (node 0 is the first where a
/// victim frees enough). NVM dump 30–32.92; high runs on node 0. The filler
/// ends at 40 and low restores remotely on node 1: network 5120 / 1192.09 =
/// 4.294967 s plus the DFS read 2.92 × 1.5 = 4.38 s, so it runs from 48.674967
/// and ends at 78.674967.
#[test]
fn restore_on_another_node_pays_network_and_dfs() {
    let mut filler = job("filler", 0, 0);
    filler.phases[0].tasks[0].duration = 40 * SECOND;
    let w = workload(2, vec![job("low", 0, 0), filler, job("high", 9, 30)]);
    let r = run(&w, "checkpoint-nvm");
    assert!(close(jct(&r, 0), 78.674967), "{}", jct(&r, 0));
    assert!(close(jct(&r, 2), 62.92), "{}", jct(&r, 2));
    assert_eq!(r.checkpoints.remote_restores, 1);
    assert_eq!(r.checkpoints.local_restores, 0);
}

/// A middle-level job preempts only the free level; a free job waits (no
/// preemption among equals). One node: free job at 0, another free job at 3
/// (waits, FIFO), middle (priority 5) at 30: it kills the running free job.
#[test]
fn only_higher_levels_preempt() {
    let w = workload(1, vec![job("free", 0, 0), job("free2", 1, 3), job("middle", 5, 30)]);
    let r = run(&w, "priority-kill");
    // free killed at 30; middle 30–90; free2 (priority 1 > 0) 90–150; free 150–210.
    assert_eq!((jct(&r, 2), jct(&r, 1), jct(&r, 0)), (60.0, 147.0, 210.0));
    assert_eq!(r.preemptions.get("kill"), Some(&1));
}

/// Algorithm 2: with a free network and no DFS penalty a remote restore costs
/// only the read (2.92512 s for 5 GB), so an adaptive policy restores remotely
/// when the local node's queue is busy; the basic policy restores locally.
/// Two nodes ⟨8, 16 GB⟩. At 0: middle X1, X2 (34.92 s) fill node 0; free F0,
/// F1 (60 s) run on node 1. At 30 a middle job P of two 2-s tasks preempts F0
/// and F1 (node 0 holds no lower level): dumps 30–32.92 and 32.92–35.84 on
/// node 1. P.0 runs 32.92–34.92 on node 1. At 34.92 X1, X2 and P.0 end; P.1
/// goes to node 0; F0's first fit is node 0 (remote), and its own node 1 has
/// room too.
/// - adaptive-nvm: local 2.92 + 0.92 s of queue = 3.84 s > remote 2.92512 s:
///   remote on node 0, 34.92–37.84512, F0 ends 67.84512. F1 (dumped at 35.84)
///   restores locally on node 1 (node 0 is full) 35.84–38.76 and ends 68.76.
/// - checkpoint-nvm: F0 restores locally after F1's dump, 35.84–38.76 (ends
///   68.76); F1's first fit is node 0 but it fits at home: local after F0,
///   38.76–41.68, ends 71.68.
#[test]
fn adaptive_restores_remotely_when_the_local_queue_is_busy() {
    let mut params = Params::default();
    params.storage.set_key("network_mb_s", "1000000").unwrap().unwrap();
    params.storage.set_key("remote_penalty", "1").unwrap().unwrap();
    let mut opts = SimOptions::default();
    opts.exec.storage = params.storage;
    let timed = |name: &str, priority: u8, submit_s: u64, tasks: usize, micros: u64| {
        let mut j = job(name, priority, submit_s);
        j.phases[0].tasks = vec![Task { duration: micros, estimate: Some(micros), ..j.phases[0].tasks[0] }; tasks];
        j
    };
    let w = Workload {
        cluster: Cluster { am: None, nodes: vec![Resources::new(8000, 16384); 2] },
        jobs: vec![
            timed("x1", 5, 0, 1, 34_920_000),
            timed("x2", 5, 0, 1, 34_920_000),
            job("f0", 0, 0),
            job("f1", 0, 0),
            timed("p", 5, 30, 2, 2 * SECOND),
        ],
    };
    let sim = |policy: &str| simulate(&w, preset(policy, &params).unwrap(), &opts).unwrap();

    let adaptive = sim("adaptive-nvm");
    assert!(close(jct(&adaptive, 2), 67.84512), "{}", jct(&adaptive, 2));
    assert!(close(jct(&adaptive, 3), 68.76), "{}", jct(&adaptive, 3));
    assert!(close(jct(&adaptive, 4), 6.92), "{}", jct(&adaptive, 4));
    assert_eq!((adaptive.checkpoints.local_restores, adaptive.checkpoints.remote_restores), (1, 1));

    let basic = sim("checkpoint-nvm");
    assert!(close(jct(&basic, 2), 68.76), "{}", jct(&basic, 2));
    assert!(close(jct(&basic, 3), 71.68), "{}", jct(&basic, 3));
    assert_eq!((basic.checkpoints.local_restores, basic.checkpoints.remote_restores), (2, 0));
}

/// What a dump in progress will free counts as room: one node ⟨8, 16 GB⟩
/// runs two free jobs; a production job of one ⟨4, 5 GB⟩ task at 30 s needs
/// one victim (f0: equal priority and age, lower id). On HDD its dump takes
/// 169.18 s, over 50 monitor rounds, and no second victim is taken: one dump,
/// one preemption. f1 ends at 60 and the production task takes its room at
/// once, 60–120 (JCT 90 s); f0's dump still ends at 199.18, its local restore
/// at 368.36, and its last 30 s at 398.36.
#[test]
fn a_dump_in_progress_is_not_preempted_for_again() {
    let w = Workload {
        cluster: Cluster { am: None, nodes: vec![Resources::new(8000, 16384)] },
        jobs: vec![job("f0", 0, 0), job("f1", 0, 0), job("prod", 10, 30)],
    };
    let r = run(&w, "checkpoint-hdd");
    assert_eq!(r.preemptions.get("checkpoint"), Some(&1));
    assert_eq!(r.checkpoints.full_dumps, 1);
    assert_eq!((jct(&r, 1), jct(&r, 2)), (60.0, 90.0));
    assert!(close(jct(&r, 0), 398.36), "{}", jct(&r, 0));
}

/// The checkpoint paper's two-job experiment: a long job ⟨4 CPU, 5 GB⟩ of
/// 60 s, known, from 0; a short one of the same size at 30 s.
fn long_then_short() -> Workload {
    let sized = |name: &str, class, submit_s| {
        let mut j = job(name, 0, submit_s);
        j.class = class;
        j.phases[0].tasks[0].estimate = Some(60 * SECOND);
        j
    };
    workload(1, vec![sized("long", JobClass::Long, 0), sized("short", JobClass::Short, 30)])
}

/// Nodes without a checkpoint tier (`SimOptions::without_checkpoint_tier`,
/// as the twin replays a live run): the checkpoint paper's two-job
/// experiment as `pliant` sees it (a long job ⟨4 CPU, 5 GB⟩ of 60 s, known,
/// from 0; a short one of the same size at 30 s) checkpoints the long task
/// where the node has NVM (the default tier), and shrinks it where the node
/// has none. And a task's own swap rates (`SimOptions::task_swap_rates`, as
/// the twin replays a live run's tasks) in place of the model's.
#[test]
fn nodes_without_a_tier_are_offered_no_dump_and_a_task_swaps_at_its_own_rates() {
    let w = long_then_short();
    let policy = || preset("pliant", &Params::default()).unwrap();
    let with_tier = simulate(&w, policy(), &SimOptions::default()).unwrap();
    let tierless =
        simulate(&w, policy(), &SimOptions { without_checkpoint_tier: true, ..SimOptions::default() }).unwrap();
    assert_eq!(with_tier.preemptions.get("checkpoint"), Some(&1));
    assert_eq!((with_tier.checkpoints.full_dumps, with_tier.checkpoints.local_restores), (1, 1));
    assert_eq!(tierless.preemptions.get("checkpoint"), None);
    assert_eq!(tierless.preemptions.get("graceful"), Some(&1));
    assert_eq!(tierless.checkpoints, CheckpointCounts::default());
    // The short job waits 3 s for the long task's 1 GB to be swapped out (3 s/GB).
    assert_eq!(jct(&tierless, 1), 63.0);
    // At the long task's own rates (as the twin replays a live run's tasks).
    let own = |reclaim, restore| {
        let rates = TaskSwapRates { job: 0, task: 0, reclaim_s_per_gb: reclaim, restore_s_per_gb: restore };
        let opts = SimOptions { without_checkpoint_tier: true, task_swap_rates: vec![rates], ..SimOptions::default() };
        simulate(&w, policy(), &opts).unwrap()
    };
    // Its 1 GB swapped out at 7 s/GB: the short job waits 7 s.
    assert_eq!(jct(&own(Some(7.0), None), 1), 67.0);
    // Read back at 1 s/GB instead of 5.1: the long job ends 4.1 s sooner.
    let faster = own(None, Some(1.0));
    assert!(close(jct(&faster, 0), jct(&tierless, 0) - 4.1), "{}", jct(&faster, 0));
    assert_eq!(jct(&faster, 1), 63.0);
}

/// A node's measured swap rates given to the core from an instant on
/// (`SimOptions::node_swap_rates`, as the twin replays what a live planner
/// was given): the same run as above, tierless, where the long task is
/// shrunk at the policy's 3 s/GB. Given 1000 s/GB for its node from 10 s,
/// the 1 GB swap out would keep the short job waiting 1000 s: the long
/// task is killed instead. Given the same at 40 s, after the decision at
/// 30 s, it is shrunk as before.
#[test]
fn a_node_s_given_swap_rates_price_its_shrinks_from_their_instant_on() {
    let w = long_then_short();
    let slow = pliant_core::SwapRates { reclaim_per_gb: Some(1000 * SECOND), restore_per_gb: None };
    let given_at = |at_s: u64| {
        let given = vec![NodeSwapRates { at: at_s * SECOND, node: 0, rates: slow }];
        let opts = SimOptions { without_checkpoint_tier: true, node_swap_rates: given, ..SimOptions::default() };
        simulate(&w, preset("pliant", &Params::default()).unwrap(), &opts).unwrap()
    };
    let before = given_at(10);
    assert_eq!((before.preemptions.get("kill"), before.preemptions.get("graceful")), (Some(&1), None));
    let after = given_at(40);
    assert_eq!((after.preemptions.get("kill"), after.preemptions.get("graceful")), (None, Some(&1)));
    assert_eq!(jct(&after, 1), 63.0, "the swap itself goes at the execution model's rate");
}
