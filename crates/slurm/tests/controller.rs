//! The controller driven from recorded Slurm outputs ([`RecordedSlurm`]):
//! no Slurm, no root. Each test shows the controller the jobs as `squeue`
//! prints them, polls, and checks the calls it made on Slurm and what it
//! journaled. The same cases on a real cluster are in
//! `crates/cli/tests/slurm.rs` (`PLIANT_LIVE_TESTS=1`).

use pliant_core::model::TaskState;
use pliant_live::scratch::ScratchDir;
use pliant_live::token::Token;
use pliant_slurm::controller::Controller;
use pliant_slurm::placement::Placer;
use pliant_slurm::recorded::{Call, RecordedSlurm};
use pliant_slurm::tools::Placing;
use serde_json::{json, Value};
use std::path::Path;

/// `sinfo --json` of the two-node test cluster (`crates/testbed`), the
/// fields the controller reads.
const SINFO: &str = r#"{"nodes":[
    {"name":"n1","cpus":2,"real_memory":1000,"partitions":["pliant"]},
    {"name":"n2","cpus":2,"real_memory":1000,"partitions":["pliant","debug"]}]}"#;

/// Wall-clock µs at which the controllers start.
const EPOCH: u64 = 1_796_656_825_225_414;

/// Polls are this far apart (µs): past the monitor's interval, so that
/// each poll's step runs the monitor.
const POLL: u64 = 600_000;

/// One `squeue -h -o %i|%T|%r|%N|%C|%m|%D|%U|%P|%k` line of a one-CPU
/// 700 MB job of partition `pliant`.
fn line(id: u64, state: &str, reason: &str, node: &str, comment: &str) -> String {
    format!("{id}|{state}|{reason}|{node}|1|700M|1|1000|pliant|{comment}\n")
}

fn held(id: u64, comment: &str) -> String {
    line(id, "PENDING", "JobHeldUser", "", comment)
}

fn running(id: u64, node: &str, comment: &str) -> String {
    line(id, "RUNNING", "None", node, comment)
}

fn placing(job: u64, node: &str) -> Placing {
    Placing { job, node: node.into(), held: true }
}

/// The controller of partition `pliant` under `policy`, its journal in `dir`.
fn open(slurm: &RecordedSlurm, dir: &Path, policy: &str, placement: Placer) -> (Controller, bool) {
    let registry = pliant_plugins::registry();
    let profile = registry.preset(policy).unwrap();
    let params = [("monitor_interval_s".to_string(), "0.5".to_string())];
    let join = Token::random().unwrap();
    Controller::open(slurm.surroundings(), dir, "pliant", &profile, &params, placement, join, &registry).unwrap()
}

/// One poll, [`POLL`] after the last.
fn poll(slurm: &RecordedSlurm, c: &mut Controller) {
    slurm.advance(POLL);
    c.poll().unwrap();
}

/// The journal's steps.
fn steps(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("journal.jsonl")).unwrap();
    text.lines().skip(1).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The journaled events, in order, each as `(event, slurm_id)`.
fn events(dir: &Path) -> Vec<(String, u64)> {
    let steps = steps(dir);
    let all = steps.iter().flat_map(|s| s["events"].as_array().unwrap().iter());
    all.map(|e| (e["event"].as_str().unwrap().to_string(), e["slurm_id"].as_u64().unwrap())).collect()
}

/// The journaled actions, in order, each as `(action, core job)`.
fn actions(dir: &Path) -> Vec<(String, u64)> {
    let steps = steps(dir);
    let all = steps.iter().flat_map(|s| s["actions"].as_array().unwrap().iter());
    all.map(|a| (a["action"].as_str().unwrap().to_string(), a["task"]["job"].as_u64().unwrap())).collect()
}

/// The journaled `submitted` event of `slurm_id`.
fn submitted(dir: &Path, slurm_id: u64) -> Value {
    let steps = steps(dir);
    let mut all = steps.iter().flat_map(|s| s["events"].as_array().unwrap().iter());
    all.find(|e| e["event"] == "submitted" && e["slurm_id"] == slurm_id).unwrap().clone()
}

fn pair(what: &str, id: u64) -> (String, u64) {
    (what.to_string(), id)
}

/// The core's state and node of the job Slurm calls `slurm_id`.
fn standing(c: &Controller, slurm_id: u64) -> (TaskState, Option<u32>) {
    let i = c.jobs().iter().position(|t| t.slurm_id == slurm_id).unwrap();
    let s = c.standing(i);
    (s.state.state, s.node)
}

/// Two long jobs placed by pliant and running, one per node; `comment` theirs.
fn two_running(slurm: &RecordedSlurm, c: &mut Controller, comment: &str) {
    slurm.show(&(held(101, comment) + &held(102, comment)));
    poll(slurm, c);
    assert_eq!(slurm.calls(), vec![Call::Place(vec![placing(101, "n1"), placing(102, "n2")])]);
    slurm.show(&(running(101, "n1", comment) + &running(102, "n2", comment)));
    poll(slurm, c);
    assert_eq!(slurm.calls(), vec![]);
}

/// pliant places: held jobs are placed on the nodes the core chose (first
/// fit, 700 MB of 1000 each), all in one call; the third waits, held,
/// until one ends and is then placed in its room.
#[test]
fn pliant_places_held_jobs_where_its_core_chose() {
    let scratch = ScratchDir::new("pliant-slurm-unit-place").unwrap();
    let slurm = RecordedSlurm::new(SINFO, EPOCH);
    let (mut c, recovered) = open(&slurm, scratch.path(), "ip", Placer::Pliant);
    assert!(!recovered);
    let long = "pliant:long";
    slurm.show(&(held(101, long) + &held(102, long) + &held(103, long)));
    poll(&slurm, &mut c);
    assert_eq!(slurm.calls(), vec![Call::Place(vec![placing(101, "n1"), placing(102, "n2")])]);
    assert_eq!(events(scratch.path()), vec![pair("submitted", 101), pair("submitted", 102), pair("submitted", 103)]);
    assert_eq!(actions(scratch.path()), vec![pair("launch", 0), pair("launch", 1)]);
    assert_eq!(standing(&c, 103), (TaskState::Pending, None));
    slurm.show(&(running(101, "n1", long) + &running(102, "n2", long)));
    poll(&slurm, &mut c);
    assert_eq!(slurm.calls(), vec![]);
    slurm.show(&line(101, "COMPLETED", "None", "n1", long));
    poll(&slurm, &mut c);
    assert_eq!(slurm.calls(), vec![Call::Place(vec![placing(103, "n1")])]);
    assert_eq!(events(scratch.path()).last(), Some(&pair("finished", 101)));
    assert_eq!(standing(&c, 103), (TaskState::Running, Some(0)));
    assert_eq!(c.jobs()[0].end_state.as_deref(), Some("COMPLETED"));
}

/// Slurm places (`--placement slurm`): the jobs it started are adopted
/// where they run, with no call on Slurm; a short job it could not start
/// (pending for `Resources`) is held, read again, and placed on the room
/// a requeued long job freed, released and ranked first in Slurm's queue.
#[test]
fn slurm_places_and_pliant_places_the_short_job_it_could_not_start() {
    let scratch = ScratchDir::new("pliant-slurm-unit-slurm-places").unwrap();
    let slurm = RecordedSlurm::new(SINFO, EPOCH);
    let (mut c, _) = open(&slurm, scratch.path(), "kill", Placer::Slurm);
    slurm.show(&(running(201, "n1", "pliant:long") + &running(202, "n2", "pliant:long")));
    poll(&slurm, &mut c);
    assert_eq!(slurm.calls(), vec![]);
    assert_eq!((standing(&c, 201), standing(&c, 202)), ((TaskState::Running, Some(0)), (TaskState::Running, Some(1))));
    assert_eq!(submitted(scratch.path(), 201)["running_on"], json!(0));
    assert_eq!(submitted(scratch.path(), 202)["running_on"], json!(1));
    slurm.show(&line(203, "PENDING", "Resources", "", "pliant:short"));
    poll(&slurm, &mut c);
    assert_eq!(slurm.calls(), vec![Call::Hold(vec![203])]);
    assert_eq!(standing(&c, 203), (TaskState::Pending, None));
    poll(&slurm, &mut c);
    let calls = slurm.calls();
    let Some(Call::RequeueHeld(victim)) = calls.first() else { panic!("{calls:?}") };
    let node = if *victim == 201 { "n1" } else { "n2" };
    assert_eq!(
        calls,
        vec![Call::RequeueHeld(*victim), Call::Place(vec![placing(203, node)]), Call::RankFirst(vec![203])]
    );
    assert_eq!(standing(&c, *victim), (TaskState::Pending, None));
    assert_eq!(slurm.state(*victim), Some(("PENDING".into(), "JobHeldUser".into())));
}

/// A job Slurm started before pliant held it (no `job_submit.lua`) is
/// taken over where it runs, with no call on Slurm; one submitted unheld
/// that still pends is held at once, read again, and placed beside it.
#[test]
fn a_job_started_behind_pliants_back_is_taken_over_where_it_runs() {
    let scratch = ScratchDir::new("pliant-slurm-unit-behind").unwrap();
    let slurm = RecordedSlurm::new(SINFO, EPOCH);
    let (mut c, _) = open(&slurm, scratch.path(), "ip", Placer::Pliant);
    slurm.show(&(running(301, "n2", "pliant:long") + &line(302, "PENDING", "Priority", "", "pliant:long")));
    poll(&slurm, &mut c);
    // Placed as the poll's read showed it, not held: the placement holds
    // it again and reads it back first (`SlurmTools::place`).
    let unsure = Placing { job: 302, node: "n1".into(), held: false };
    assert_eq!(slurm.calls(), vec![Call::Hold(vec![302]), Call::Place(vec![unsure])]);
    assert_eq!(standing(&c, 301), (TaskState::Running, Some(1)));
    assert_eq!(standing(&c, 302), (TaskState::Running, Some(0)));
    assert_eq!(submitted(scratch.path(), 301)["running_on"], json!(1));
    assert_eq!(submitted(scratch.path(), 302)["running_on"], Value::Null);
    assert_eq!(actions(scratch.path()), vec![pair("launch", 1)], "only the held job is launched");
    assert_eq!(c.jobs()[0].placements, 1);
}

/// A controller that journaled its placements and stopped before Slurm
/// saw them: the next one replays the journal, places those jobs again
/// (they still pend, held), holds again a tracked job someone released,
/// leaves the job that had no room pending, and takes in a job submitted
/// meanwhile once, without taking in the old ones again.
#[test]
fn a_restart_places_again_what_the_journal_decided_and_slurm_did_not_see() {
    let scratch = ScratchDir::new("pliant-slurm-unit-restart").unwrap();
    let slurm = RecordedSlurm::new(SINFO, EPOCH);
    let long = "pliant:long";
    let (mut c, _) = open(&slurm, scratch.path(), "ip", Placer::Pliant);
    slurm.show(&(held(101, long) + &held(102, long) + &held(103, long)));
    poll(&slurm, &mut c);
    assert_eq!(slurm.calls(), vec![Call::Place(vec![placing(101, "n1"), placing(102, "n2")])]);
    drop(c);
    let journaled = steps(scratch.path());
    // Killed between its journal line and `scontrol`: Slurm still holds
    // them; job 103 was released by hand; job 104 came meanwhile.
    slurm.show(&(held(101, long) + &held(102, long) + &line(103, "PENDING", "None", "", long) + &held(104, long)));
    slurm.advance(5_000_000);
    let (mut c, recovered) = open(&slurm, scratch.path(), "ip", Placer::Pliant);
    assert!(recovered);
    assert_eq!(slurm.calls(), vec![Call::Hold(vec![103]), Call::Place(vec![placing(101, "n1"), placing(102, "n2")])]);
    assert_eq!(steps(scratch.path()), journaled, "recovery journals nothing");
    assert_eq!(c.jobs().iter().map(|t| t.slurm_id).collect::<Vec<_>>(), vec![101, 102, 103]);
    assert_eq!(standing(&c, 103), (TaskState::Pending, None));
    poll(&slurm, &mut c);
    assert_eq!(slurm.calls(), vec![]);
    let taken: Vec<(String, u64)> = events(scratch.path()).into_iter().filter(|(e, _)| e == "submitted").collect();
    assert_eq!(
        taken,
        vec![pair("submitted", 101), pair("submitted", 102), pair("submitted", 103), pair("submitted", 104)]
    );
}

/// `kill` through Slurm: a short job that needs a long job's room has the
/// long job requeued, held, and is placed there in the same poll; the
/// victim waits held until the short job ends and is placed again.
#[test]
fn a_killed_job_is_requeued_held_and_placed_again() {
    let scratch = ScratchDir::new("pliant-slurm-unit-requeue").unwrap();
    let slurm = RecordedSlurm::new(SINFO, EPOCH);
    let (mut c, _) = open(&slurm, scratch.path(), "kill", Placer::Pliant);
    two_running(&slurm, &mut c, "pliant:long");
    slurm.show(&held(103, "pliant:short"));
    poll(&slurm, &mut c);
    assert_eq!(slurm.calls(), vec![], "taken in; the monitor's next run preempts");
    poll(&slurm, &mut c);
    let calls = slurm.calls();
    let Some(Call::RequeueHeld(victim)) = calls.first() else { panic!("{calls:?}") };
    let (victim, node) = (*victim, if *victim == 101 { "n1" } else { "n2" });
    assert_eq!(calls, vec![Call::RequeueHeld(victim), Call::Place(vec![placing(103, node)])]);
    assert_eq!(slurm.state(victim), Some(("PENDING".into(), "JobHeldUser".into())));
    assert_eq!(standing(&c, victim), (TaskState::Pending, None));
    let last = steps(scratch.path()).last().unwrap().clone();
    assert_eq!(last["actions"][0]["action"], json!("kill"));
    slurm.show(&running(103, node, "pliant:short"));
    poll(&slurm, &mut c);
    assert_eq!(slurm.calls(), vec![], "the victim waits, held");
    slurm.show(&line(103, "COMPLETED", "None", node, "pliant:short"));
    poll(&slurm, &mut c);
    assert_eq!(slurm.calls(), vec![Call::Place(vec![placing(victim, node)])]);
    let t = c.jobs().iter().find(|t| t.slurm_id == victim).unwrap();
    assert_eq!((t.placements, t.checkpoints), (2, 0));
}

/// A checkpoint through Slurm: the victim is signalled (SIGUSR1); once it
/// has saved its state and exited it is requeued held and the short job
/// placed in its room; after the short job it is restored there, but not
/// before 2 s after its requeue (the controller's `RELAUNCH_GAP`: slurmd
/// would refuse it).
#[test]
fn a_checkpointed_job_is_requeued_once_it_exits_and_restored_two_seconds_on() {
    let scratch = ScratchDir::new("pliant-slurm-unit-checkpoint").unwrap();
    let slurm = RecordedSlurm::new(SINFO, EPOCH);
    let (mut c, _) = open(&slurm, scratch.path(), "checkpoint-nvm", Placer::Pliant);
    let (long, short) = ("pliant:long,priority=0", "pliant:short,priority=9");
    two_running(&slurm, &mut c, long);
    slurm.show(&held(103, short));
    poll(&slurm, &mut c);
    assert_eq!(slurm.calls(), vec![], "taken in; the monitor's next run preempts");
    poll(&slurm, &mut c);
    let calls = slurm.calls();
    let Some(Call::Signal(victim, _)) = calls.first() else { panic!("{calls:?}") };
    let (victim, node) = (*victim, if *victim == 101 { "n1" } else { "n2" });
    assert_eq!(calls, vec![Call::Signal(victim, "USR1".into())], "the short job waits for the checkpoint");
    assert!(c.standing(c.jobs().iter().position(|t| t.slurm_id == victim).unwrap()).checkpointing);
    poll(&slurm, &mut c);
    assert_eq!(slurm.calls(), vec![], "still saving its state");
    slurm.show(&line(victim, "COMPLETED", "None", node, long));
    poll(&slurm, &mut c);
    assert_eq!(slurm.calls(), vec![Call::RequeueHeld(victim), Call::Place(vec![placing(103, node)])]);
    assert_eq!(events(scratch.path()).last(), Some(&pair("checkpointed", victim)));
    slurm.show(&line(103, "COMPLETED", "None", node, short));
    poll(&slurm, &mut c);
    assert_eq!(slurm.calls(), vec![], "the restore waits 2 s after the requeue");
    assert_eq!(actions(scratch.path()).last().map(|(a, _)| a.as_str()), Some("restore"));
    slurm.advance(2_000_000 - 2 * POLL);
    poll(&slurm, &mut c);
    assert_eq!(slurm.calls(), vec![Call::Place(vec![placing(victim, node)])]);
    let t = c.jobs().iter().find(|t| t.slurm_id == victim).unwrap();
    assert_eq!((t.placements, t.checkpoints), (2, 1));
}
