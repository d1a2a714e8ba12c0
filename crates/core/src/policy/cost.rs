//! What each way of taking resources back costs, per victim and per need —
//! the estimates the `pliant` preset chooses by (`planner/cost.rs`). Pure
//! arithmetic on what a resource manager knows (a victim's allocation, how
//! long it has run, its attempts) and the papers' rates, so that any body
//! (the simulator, live mode) can ask the same question. The formulas, with
//! their sources, are in `docs/cost-model.md`.
//!
//! Every cost is in core-microseconds, one currency for the victim's loss
//! and the waiting work's delay:
//! `cost = lost + resume + wait`, where `lost` is work the victim must run
//! again, `resume` the core time it holds without progress to come back,
//! and `wait` the core time of the need kept waiting until it is free.

use crate::action::MechanismKind;
use crate::model::TaskRef;
use crate::{Micros, Resources, SECOND};

/// The rates the estimates use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rates {
    /// Time to swap out 1 GB of a CPU-deprived container (BIG-C §5.4: 3 s/GB).
    pub reclaim_per_gb: Micros,
    /// Time to read 1 GB back on resume (1.7 × reclaim, as measured for the
    /// simulator's default: 2.5–2.9 s/GB restore vs 1.5–1.7 s/GB reclaim).
    pub restore_per_gb: Micros,
    /// What a preempted container keeps (BIG-C §3.2: 64 MB); memory is never
    /// taken below it.
    pub footprint_mb: u64,
}

impl Default for Rates {
    fn default() -> Self {
        Rates { reclaim_per_gb: 3 * SECOND, restore_per_gb: 5_100_000, footprint_mb: 64 }
    }
}

/// What the core knows of a victim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Victim {
    /// What it holds now.
    pub held: Resources,
    /// How long its current attempt has run (suspensions excluded).
    pub ran: Micros,
    /// Whether it may be killed (a kill would not fail its job).
    pub killable: bool,
    /// Whether it runs and may be frozen whole (a shrunk task is already stopped in part).
    pub running: bool,
}

/// One mechanism's estimate for one victim and one need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Estimate {
    /// The mechanism.
    pub mechanism: MechanismKind,
    /// What it takes from the victim (for a shrink, only what the need asks).
    pub takes: Resources,
    /// Time until what it takes is free.
    pub free_after: Micros,
    /// Work lost: core time the victim must run again.
    pub lost: u64,
    /// Core time the victim holds without progress to resume.
    pub resume: u64,
    /// Core time of the need kept waiting until the resources are free.
    pub wait: u64,
    /// What the victim keeps holding while preempted.
    pub keeps: Resources,
    /// Disk I/O it takes from its node's other tasks, MB (swap out and back in).
    pub io_mb: u64,
}

impl Estimate {
    /// The total cost, core-microseconds.
    pub fn cost(&self) -> u64 {
        self.lost + self.resume + self.wait
    }
}

/// The mechanisms the estimates cover, in the order ties are broken.
pub const MECHANISMS: [MechanismKind; 3] = [MechanismKind::Suspend, MechanismKind::Graceful, MechanismKind::Kill];

/// Core-microseconds of `cpu_milli` held for `t`.
fn core_time(cpu_milli: u64, t: Micros) -> u64 {
    (cpu_milli as u128 * t as u128 / 1000) as u64
}

/// Time to move `mb` at `per_gb`.
fn transfer(mb: u64, per_gb: Micros) -> Micros {
    (mb as u128 * per_gb as u128 / 1024) as u64
}

/// What the waiting work needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Need {
    /// What is still missing, per resource.
    pub left: Resources,
    /// The CPU of the waiting tasks the missing part would admit (they wait
    /// while it is freed, even when only memory is missing).
    pub waiting_cpu: u64,
}

/// What `mechanism` would cost to free (part of) `need` from `v`, or `None`
/// if it cannot help: nothing of `need` is freed, or it may not be used.
pub fn estimate(mechanism: MechanismKind, v: &Victim, need: &Need, rates: &Rates) -> Option<Estimate> {
    let (waiting_cpu, need) = (need.waiting_cpu, need.left);
    let none = Estimate {
        mechanism,
        takes: Resources::ZERO,
        free_after: 0,
        lost: 0,
        resume: 0,
        wait: 0,
        keeps: v.held,
        io_mb: 0,
    };
    let e = match mechanism {
        // A kill frees everything at once; the attempt's run is lost and runs
        // again (BIG-C §2.2, checkpoint paper §2: killed work is redone).
        MechanismKind::Kill if v.killable && v.running => {
            Estimate { takes: v.held, lost: core_time(v.held.cpu_milli, v.ran), keeps: Resources::ZERO, ..none }
        }
        // Suspend in place (Slurm's SUSPEND): all its CPU at once, nothing
        // else; no memory moves, so it resumes at once.
        MechanismKind::Suspend if v.running && need.cpu_milli > 0 => {
            let takes = Resources::new(v.held.cpu_milli, 0);
            Estimate { takes, keeps: v.held - takes, ..none }
        }
        // A shrink by the need (BIG-C §3.3's graceful preemption, sized by
        // the deficit instead of r_GP): CPU frees at once, memory as it is
        // swapped out (§5.4's reclaim rate), read back on resume holding its
        // CPU (the restore rate); the need waits for the reclaim.
        MechanismKind::Graceful => {
            let mem_room = v.held.mem_mb.saturating_sub(rates.footprint_mb);
            let takes = Resources::new(need.cpu_milli.min(v.held.cpu_milli), need.mem_mb.min(mem_room));
            let free_after = transfer(takes.mem_mb, rates.reclaim_per_gb);
            Estimate {
                takes,
                free_after,
                resume: core_time(v.held.cpu_milli, transfer(takes.mem_mb, rates.restore_per_gb)),
                wait: core_time(waiting_cpu, free_after),
                keeps: v.held - takes,
                io_mb: 2 * takes.mem_mb,
                ..none
            }
        }
        _ => return None,
    };
    let useful = e.takes.min(&need);
    (!useful.is_zero()).then_some(e)
}

/// How much of what is left of the need an estimate covers, 0..=1: the mean
/// over the resources still needed of the part it frees.
pub fn coverage(e: &Estimate, left: Resources) -> f64 {
    let part = |got: u64, want: u64| (want > 0).then(|| got.min(want) as f64 / want as f64);
    let parts: Vec<f64> =
        [part(e.takes.cpu_milli, left.cpu_milli), part(e.takes.mem_mb, left.mem_mb)].into_iter().flatten().collect();
    if parts.is_empty() {
        0.0
    } else {
        parts.iter().sum::<f64>() / parts.len() as f64
    }
}

/// One preemption the cost planner chose, with the estimates of every
/// mechanism for the same victim and need (what `preemptions.csv` shows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// When.
    pub at: Micros,
    /// The victim.
    pub task: TaskRef,
    /// What it held.
    pub held: Resources,
    /// The need left when it was chosen.
    pub need: Resources,
    /// The estimate chosen.
    pub chosen: Estimate,
    /// Every mechanism's estimate for this victim and need, in [`MECHANISMS`]
    /// order; `None` where a mechanism cannot help.
    pub options: [Option<Estimate>; 3],
}

#[cfg(test)]
mod tests {
    use super::*;

    fn victim(cores: u64, gb: u64, ran_s: u64) -> Victim {
        Victim { held: Resources::cores_gb(cores, gb), ran: ran_s * SECOND, killable: true, running: true }
    }

    // A 4-core, 8 GB victim that ran 100 s; the need is 2 CPU and 2 GB.
    // Kill: 4 cores × 100 s = 400 core-s lost. Shrink by the need: 2 GB swapped
    // out in 6 s (3 s/GB) while 2 needed cores wait = 12 core-s, read back in
    // 10.2 s (5.1 s/GB) holding 4 cores = 40.8 core-s: 52.8 core-s in all.
    // Suspend in place: all 4 cores at once, no memory, costs nothing.
    fn need(left: Resources) -> Need {
        Need { left, waiting_cpu: left.cpu_milli }
    }

    #[test]
    fn costs_by_hand() {
        let (v, need, r) = (victim(4, 8, 100), need(Resources::cores_gb(2, 2)), Rates::default());
        let kill = estimate(MechanismKind::Kill, &v, &need, &r).unwrap();
        assert_eq!((kill.cost(), kill.takes, kill.free_after), (400 * SECOND, Resources::cores_gb(4, 8), 0));
        let shrink = estimate(MechanismKind::Graceful, &v, &need, &r).unwrap();
        assert_eq!(shrink.takes, need.left);
        assert_eq!(shrink.free_after, 6 * SECOND);
        assert_eq!((shrink.wait, shrink.resume), (12 * SECOND, 40_800_000));
        assert_eq!(shrink.io_mb, 4096);
        let suspend = estimate(MechanismKind::Suspend, &v, &need, &r).unwrap();
        assert_eq!(
            (suspend.cost(), suspend.takes, suspend.keeps),
            (0, Resources::cores_gb(4, 0), Resources::cores_gb(0, 8))
        );
        assert_eq!(coverage(&suspend, need.left), 0.5);
        assert_eq!(coverage(&shrink, need.left), 1.0);
    }

    // A victim that ran 5 s is cheaper to kill (20 core-s) than to shrink (52.8);
    // one whose kill would fail its job is never killed.
    #[test]
    fn barely_run_tasks_are_cheapest_to_kill() {
        let (need, r) = (need(Resources::cores_gb(2, 2)), Rates::default());
        let young = victim(4, 8, 5);
        let kill = estimate(MechanismKind::Kill, &young, &need, &r).unwrap().cost();
        let shrink = estimate(MechanismKind::Graceful, &young, &need, &r).unwrap().cost();
        assert!(kill < shrink, "{kill} vs {shrink}");
        let last = Victim { killable: false, ..young };
        assert!(estimate(MechanismKind::Kill, &last, &need, &r).is_none());
    }

    // A memory-only need: suspend in place frees none of it; a shrink takes
    // only the need's memory and no CPU, never below the footprint. The
    // waiting tasks' CPU waits for the reclaim: 960 MB at 3 s/GB = 2.8125 s
    // × 1 core.
    #[test]
    fn memory_need_is_taken_by_memory_only() {
        let (v, r) = (victim(4, 1, 100), Rates::default());
        let mem_only = Need { left: Resources::new(0, 2048), waiting_cpu: 1000 };
        assert!(estimate(MechanismKind::Suspend, &v, &mem_only, &r).is_none());
        let shrink = estimate(MechanismKind::Graceful, &v, &mem_only, &r).unwrap();
        assert_eq!(shrink.takes, Resources::new(0, 1024 - 64));
        assert_eq!(shrink.wait, 2_812_500);
    }
}
