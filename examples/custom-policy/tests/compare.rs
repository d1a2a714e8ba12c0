//! The custom policy decides as its rule says, and differently from `gp`;
//! the rule decides under a built-in planner too.

use custom_policy::{compare, kill_young, run, KILL_UNDER};
use pliant_core::model::TaskRef;
use pliant_core::policy::Params;
use pliant_core::{Action, Micros};
use pliant_plugins::preset;
use std::collections::HashMap;

/// Each preemption's victim with the age of its attempt then, by kind:
/// (killed, suspended to its footprint, shrunk).
fn preemption_ages(decisions: &[(Micros, Action)]) -> (Vec<Micros>, Vec<Micros>, usize) {
    let mut launched: HashMap<TaskRef, Micros> = HashMap::new();
    let (mut killed, mut suspended, mut shrunk) = (Vec::new(), Vec::new(), 0);
    for &(at, ref action) in decisions {
        match *action {
            Action::Launch { task, .. } => {
                launched.insert(task, at);
            }
            Action::Kill { task } => killed.push(at - launched[&task]),
            Action::Immediate { task, .. } => suspended.push(at - launched[&task]),
            Action::Graceful { .. } => shrunk += 1,
            _ => {}
        }
    }
    (killed, suspended, shrunk)
}

#[test]
fn youngest_first_kills_young_victims_and_suspends_old_ones_where_gp_shrinks() {
    let runs = compare("mixed", 1);
    let names: Vec<&str> = runs.iter().map(|r| r.policy.as_str()).collect();
    assert_eq!(names, ["youngest-first", "gp", "pliant"]);

    let (killed, suspended, shrunk) = preemption_ages(&runs[0].decisions);
    assert!(!killed.is_empty() && !suspended.is_empty(), "both branches of the rule ran");
    assert!(killed.iter().all(|&age| age < KILL_UNDER), "a kill's victim is younger than the bound");
    assert!(suspended.iter().all(|&age| age >= KILL_UNDER), "a suspension's victim is not");
    assert_eq!(shrunk, 0, "the rule never shrinks");
    assert_eq!(runs[0].preemptions.get("kill").copied().unwrap_or(0), killed.len() as u64);

    // gp shrinks its victims step by step and never kills or suspends whole.
    let (killed, suspended, shrunk) = preemption_ages(&runs[1].decisions);
    assert!(killed.is_empty() && suspended.is_empty());
    assert!(shrunk > 0);

    // Killing loses work that gp's shrinking keeps.
    assert!(runs[0].lost_work_core_seconds > 0.0);
    assert_eq!(runs[1].lost_work_core_seconds, 0.0);
}

#[test]
fn the_rule_chooses_each_victims_mechanism_under_gps_planner() {
    let gp = preset("gp", &Params::default()).unwrap();
    let runs = run("high-load", 1, [kill_young("gp", "gp-kill-young"), gp]);

    // gp's planner names no mechanism: the kills and whole suspensions are the rule's.
    let (killed, suspended, shrunk) = preemption_ages(&runs[0].decisions);
    assert!(!killed.is_empty() && !suspended.is_empty(), "both branches of the rule ran");
    assert!(killed.iter().all(|&age| age < KILL_UNDER), "a kill's victim is younger than the bound");
    assert!(suspended.iter().all(|&age| age >= KILL_UNDER), "a suspension's victim is not");
    assert_eq!(shrunk, 0, "the rule takes whole victims");
    let counted: Vec<(&str, u64)> = runs[0].preemptions.iter().map(|(m, &n)| (m.as_str(), n)).collect();
    assert_eq!(counted, [("immediate", suspended.len() as u64), ("kill", killed.len() as u64)]);

    // The same planner with gp's own mechanism only shrinks.
    let (killed, suspended, shrunk) = preemption_ages(&runs[1].decisions);
    assert!(killed.is_empty() && suspended.is_empty() && shrunk > 0);
}
