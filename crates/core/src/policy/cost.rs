//! What each way of taking resources back costs, per victim and per need —
//! the estimates the `pliant` preset chooses by (`planner/least_cost.rs`). Pure
//! arithmetic on what a resource manager knows (a victim's allocation, how
//! long it has run, its attempts) and the papers' rates, so that any body
//! (the simulator, live mode) can ask the same question. The formulas, with
//! their sources, are in `docs/cost-model.md`.
//!
//! Every cost is in core-microseconds, one currency for the victim's loss
//! and the waiting work's delay:
//! `cost = lost + resume + wait + stopped`, where `lost` is work the victim
//! must run again, `resume` the core time it holds without progress to come
//! back, `wait` the core time of the need kept waiting until it is free, and
//! `stopped` the core time the victim's job does not progress while the
//! waiting task runs: the cores taken, and its siblings idle at their stage
//! barrier.

use crate::action::MechanismKind;
use crate::declare_params;
use crate::model::{StorageModel, TaskRef, Tier};
use crate::parameter::{any, fraction, non_negative, ParamValue};
use crate::policy::Params;
use crate::time::from_secs_f64;
use crate::{Micros, Resources, SwapRates};
use serde::{Serialize, Serializer};

declare_params! {
    /// The cost model's rates, settable by name (`--set`).
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct CostParams {
        /// `pliant`'s estimate of the seconds to swap out 1 GB of a CPU-deprived container, for a shrink's wait (BIG-C §5.4)
        cost_reclaim_s_per_gb: f64 = 3.0, non_negative;
        /// `pliant`'s estimate of the seconds to read 1 GB back on resume, for a shrink's resume cost (1.7 × reclaim, as measured for restore_s_per_gb)
        cost_restore_s_per_gb: f64 = 5.1, non_negative;
        /// `pliant`'s estimate of a task's resident working set over its requested memory: memory taken below it is swapped out and freezes the task (BIG-C §3.2, §4.2); the simulator's working_set_fraction
        cost_working_set_fraction: f64 = 0.8, fraction;
        /// the tier `pliant` may checkpoint to where a node has one (the checkpoint paper's Table 3, at the storage keys' rates; nodes that report none, as live nodes do, are not offered it); none: never
        cost_checkpoint_tier: Option<Tier> = Some(Tier::Nvm), any, shown "nvm";
    }
}

/// A tier's name; `none` for no tier, where it is optional.
impl ParamValue for Tier {
    const EXPECTED: &'static str = "hdd, ssd or nvm";
    const EXPECTED_OR_NONE: &'static str = "none, hdd, ssd or nvm";
    fn parse_param(text: &str) -> Option<Self> {
        Tier::ALL.into_iter().find(|t| t.name() == text)
    }
    fn show(&self) -> String {
        self.name().to_string()
    }
}

/// A run's `params` show the rates only where they were set away from their
/// defaults (as the YARN keys show only what is given), so that the other
/// presets' runs read as they did before the keys existed.
impl Serialize for CostParams {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.serialize_changed(serializer)
    }
}

/// Where checkpoints go and how long they take, as the estimates use them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CheckpointRates {
    /// The tier (`cost_checkpoint_tier`).
    pub tier: Tier,
    /// Time to write or read 1 GB there (the storage keys' bandwidth of the tier).
    pub per_gb: Micros,
    /// Millionths of a task's memory an incremental dump writes (`dirty_fraction`).
    pub dirty_ppm: u64,
    /// The storage keys the rates come from (the dumps' own bookings use them).
    pub storage: StorageModel,
}

/// The rates the estimates use (integers: the monitor asks for many estimates).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    /// Time to swap out 1 GB of a CPU-deprived container (`cost_reclaim_s_per_gb`).
    pub reclaim_per_gb: Micros,
    /// Time to read 1 GB back on resume (`cost_restore_s_per_gb`).
    pub restore_per_gb: Micros,
    /// What a preempted container keeps (BIG-C §3.2: 64 MB); memory is never
    /// taken below it.
    pub footprint_mb: u64,
    /// Millionths of its requested memory a task's resident working set is
    /// estimated at (`cost_working_set_fraction`).
    pub working_set_ppm: u64,
    /// The tier checkpoints go to and their rates; `None`: no checkpoints.
    pub checkpoint: Option<CheckpointRates>,
}

impl Rates {
    /// The rates `params` set (`cost_*` keys and `footprint_mb`).
    pub fn from_params(params: &Params) -> Rates {
        Rates {
            reclaim_per_gb: from_secs_f64(params.cost.cost_reclaim_s_per_gb),
            restore_per_gb: from_secs_f64(params.cost.cost_restore_s_per_gb),
            footprint_mb: params.footprint_mb,
            working_set_ppm: ppm(params.cost.cost_working_set_fraction),
            checkpoint: params.cost.cost_checkpoint_tier.map(|tier| CheckpointRates {
                tier,
                per_gb: from_secs_f64(1024.0 / params.storage.bandwidth(tier)),
                dirty_ppm: ppm(params.storage.dirty_fraction),
                storage: params.storage,
            }),
        }
    }
}

impl Default for Rates {
    fn default() -> Self {
        Rates::from_params(&Params::default())
    }
}

/// What the core knows of a victim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Victim {
    /// What it holds now.
    pub held: Resources,
    /// What it asked for (its working set and its checkpoint are sized by it).
    pub request: Resources,
    /// How long its current attempt has run (suspensions excluded).
    pub ran: Micros,
    /// Whether it may be killed (a kill would not fail its job).
    pub killable: bool,
    /// Core time its job's other tasks have run, lost besides its own if a
    /// kill of it fails its job's application attempt (Spark on YARN's
    /// executor-failure limit reached: the job relaunches from zero); 0
    /// where a kill would not.
    pub relaunch: u64,
    /// Whether it runs and may be frozen whole (a shrunk task is already stopped in part).
    pub running: bool,
    /// Whether it has a checkpoint image already (a new dump writes only the dirtied part).
    pub has_image: bool,
    /// CPU held by the other running tasks of its phase when they meet at a
    /// barrier it must reach too (a coupled phase: Spark executors, whose
    /// stage cannot end while one of them is stopped); 0 otherwise.
    pub siblings_cpu: u64,
    /// The largest part of its CPU request any task of its coupled phase
    /// (itself included) has stopped already, in millionths: the phase's
    /// slowest member, which its barrier waits for (1,000,000 for a frozen
    /// one; 0 outside a coupled phase).
    pub phase_stopped_ppm: u64,
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
    /// Core time the victim's job is stopped until the waiting task has
    /// run: the victim's cores stopped, and its siblings idle at their barrier.
    pub stopped: u64,
    /// What the victim keeps holding while preempted.
    pub keeps: Resources,
    /// Disk I/O it takes from its node's other tasks, MB (swap out and back
    /// in, or dump and restore).
    pub io_mb: u64,
}

impl Estimate {
    /// The total cost, core-microseconds.
    pub fn cost(&self) -> u64 {
        self.lost + self.resume + self.wait + self.stopped
    }
}

/// The mechanisms the estimates cover, in the order ties are broken.
pub const MECHANISMS: [MechanismKind; 4] =
    [MechanismKind::Suspend, MechanismKind::Graceful, MechanismKind::Kill, MechanismKind::Checkpoint];

/// `spark.yarn.max.executor.failures`'s default for a Spark job of
/// `executors` executors: numExecutors × 2, at least 3 (Spark's "Running on
/// YARN" reference); the kill that reaches it fails the application attempt.
pub fn spark_max_executor_failures(executors: usize) -> u32 {
    (2 * executors as u32).max(3)
}

/// Core-microseconds of `cpu_milli` held for `t` (the cost model's unit before it is read as core-seconds).
#[inline]
pub fn core_time(cpu_milli: u64, t: Micros) -> u64 {
    // 64-bit arithmetic where it cannot overflow (the monitor asks often).
    match cpu_milli.checked_mul(t) {
        Some(x) => x / 1000,
        None => (cpu_milli as u128 * t as u128 / 1000) as u64,
    }
}

/// A fraction in millionths.
fn ppm(fraction: f64) -> u64 {
    (fraction * 1e6).round() as u64
}

/// `ppm` millionths of `mb`, rounded up.
fn part_of(mb: u64, ppm: u64) -> u64 {
    match mb.checked_mul(ppm) {
        Some(x) => x.div_ceil(1_000_000),
        None => (mb as u128 * ppm as u128).div_ceil(1_000_000) as u64,
    }
}

/// Time to move `mb` at `per_gb`.
fn transfer(mb: u64, per_gb: Micros) -> Micros {
    (mb as u128 * per_gb as u128 / 1024) as u64
}

/// The CPU of `v`'s `siblings` that idles at their barrier while `part` of
/// `v`'s CPU is stopped: the siblings' CPU times how much further that stop
/// holds back the phase's slowest member (the part of its request `v` would
/// have stopped, beyond the phase's largest so far).
fn siblings_idle(v: &Victim, siblings: u64, part: u64) -> u64 {
    // 64-bit: millicores times millionths stay far below 2^64 (the monitor
    // asks often).
    let request = v.request.cpu_milli.max(1);
    let own = v.request.cpu_milli.saturating_sub(v.held.cpu_milli);
    let slowest = v.phase_stopped_ppm;
    if slowest.saturating_mul(request) <= own.saturating_mul(1_000_000) {
        // It is the slowest already (or nothing is stopped): all it stops more.
        siblings.saturating_mul(part) / request
    } else {
        let after = ((own + part).saturating_mul(1_000_000) / request).min(1_000_000);
        siblings.saturating_mul(after.saturating_sub(slowest)) / 1_000_000
    }
}

/// What the waiting work needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Need {
    /// What is still missing, per resource.
    pub left: Resources,
    /// The CPU of the waiting tasks the missing part would admit (they wait
    /// while it is freed, even when only memory is missing).
    pub waiting_cpu: u64,
    /// How long the waiting task is expected to run (its estimate; 0 when it
    /// has none): how long what it takes stays away from the victim.
    pub run: Micros,
    /// How long the node's dumps and restores already booked will take (a
    /// checkpoint waits for them, the checkpoint paper §5.2.2).
    pub io_queue: Micros,
    /// The node's measured swap rates, which a shrink there is priced at
    /// where it has them (`View::node_swap_rates`).
    pub swap: SwapRates,
}

/// What `mechanism` would cost to free (part of) `need` from `v`, or `None`
/// if it cannot help: nothing of `need` is freed, or it may not be used.
pub fn estimate(mechanism: MechanismKind, v: &Victim, need: &Need, rates: &Rates) -> Option<Estimate> {
    let (waiting_cpu, run, need_left) = (need.waiting_cpu, need.run, need.left);
    // Stopping a `part` of the victim's CPU from now until the waiting task,
    // which starts `free_after` from now, has run: those cores make no
    // progress, and its whole phase's end moves by that part of the time,
    // with its siblings idle at the barrier meanwhile (docs/results/bigc.md:
    // a frozen executor's job runs longer by about its stalled time, its
    // other executors waiting at the stage barrier) — but only for the part
    // of the stop beyond what the phase's slowest member makes them wait
    // already: a stage ends with its slowest executor, so stopping a second
    // one no more than the first holds the barrier back no further.
    let stopped = |part: u64, free_after: Micros, siblings_wait: bool| {
        let siblings = match v.siblings_cpu {
            s if s > 0 && siblings_wait => siblings_idle(v, s, part),
            _ => 0,
        };
        core_time(part + siblings, free_after + run)
    };
    let none = Estimate {
        mechanism,
        takes: Resources::ZERO,
        free_after: 0,
        lost: 0,
        resume: 0,
        wait: 0,
        stopped: 0,
        keeps: v.held,
        io_mb: 0,
    };
    let e = match mechanism {
        // A kill frees everything at once; the attempt's run is lost and runs
        // again (BIG-C §2.2, checkpoint paper §2: killed work is redone; a
        // Spark executor's map output is lost with it and recomputed), and
        // its cores are away while the waiting task runs, as a frozen one's
        // are. Its siblings do not wait for it: its in-flight work goes back
        // to its job, which asks for it again at once. A kill that reaches
        // Spark's executor-failure limit loses its whole job's run besides
        // (`relaunch`).
        MechanismKind::Kill if v.killable && v.running => Estimate {
            takes: v.held,
            lost: core_time(v.held.cpu_milli, v.ran).saturating_add(v.relaunch),
            stopped: stopped(v.held.cpu_milli, 0, false),
            keeps: Resources::ZERO,
            ..none
        },
        // Suspend in place (Slurm's SUSPEND): all its CPU at once, nothing
        // else; no memory moves, so it resumes at once, but all of it stops.
        MechanismKind::Suspend if v.running && need_left.cpu_milli > 0 => {
            let takes = Resources::new(v.held.cpu_milli, 0);
            Estimate { takes, keeps: v.held - takes, stopped: stopped(takes.cpu_milli, 0, true), ..none }
        }
        // A shrink by the need (BIG-C §3.3's graceful preemption, sized by
        // the deficit instead of r_GP). CPU frees at once; memory above the
        // victim's resident working set too (§3.2: only the working set is
        // swapped); memory below it is swapped out (§5.4's reclaim rate) and
        // read back on resume holding its CPU (the restore rate), and the
        // need waits for it. A limit below the working set freezes the whole
        // victim until it resumes (§4.2: a swapping container is frozen);
        // above it the victim runs on at the CPU it keeps, and only the CPU
        // taken stops.
        MechanismKind::Graceful => {
            let mem_room = v.held.mem_mb.saturating_sub(rates.footprint_mb);
            let takes = Resources::new(need_left.cpu_milli.min(v.held.cpu_milli), need_left.mem_mb.min(mem_room));
            let swapped = match takes.mem_mb {
                0 => 0,
                mem => {
                    let resident = part_of(v.request.mem_mb, rates.working_set_ppm).min(v.held.mem_mb);
                    mem.saturating_sub(v.held.mem_mb - resident)
                }
            };
            let (reclaim_per_gb, restore_per_gb) = need.swap.or(rates.reclaim_per_gb, rates.restore_per_gb);
            let free_after = transfer(swapped, reclaim_per_gb);
            let part = if swapped > 0 { v.held.cpu_milli } else { takes.cpu_milli };
            Estimate {
                takes,
                free_after,
                resume: core_time(v.held.cpu_milli, transfer(swapped, restore_per_gb)),
                wait: core_time(waiting_cpu, free_after),
                stopped: stopped(part, free_after, true),
                keeps: v.held - takes,
                io_mb: 2 * swapped,
                ..none
            }
        }
        // A checkpoint (the checkpoint paper §3.2, Alg. 1's estimate): the
        // victim is frozen and dumped after the node's queue of dumps and
        // restores, holding its resources until the dump ends; then it waits
        // in its job's queue and is restored (read back holding its request)
        // where there is room. Nothing is lost; its siblings wait for it at
        // the barrier, as for a freeze (its in-flight work is in the image).
        MechanismKind::Checkpoint if v.running => {
            let c = rates.checkpoint?;
            // §4.1 item 3: with an image, only the dirtied part is written.
            let dump_mb = if v.has_image { part_of(v.request.mem_mb, c.dirty_ppm) } else { v.request.mem_mb };
            let free_after = need.io_queue + transfer(dump_mb, c.per_gb);
            Estimate {
                takes: v.held,
                free_after,
                resume: core_time(v.request.cpu_milli, transfer(v.request.mem_mb, c.per_gb)),
                wait: core_time(waiting_cpu, free_after),
                stopped: stopped(v.held.cpu_milli, free_after, true),
                keeps: Resources::ZERO,
                io_mb: dump_mb + v.request.mem_mb,
                ..none
            }
        }
        _ => return None,
    };
    let useful = e.takes.min(&need_left);
    (!useful.is_zero()).then_some(e)
}

/// A lower bound of what any mechanism's [`estimate`] costs for a victim, or
/// for any of a set of victims, for needs missing a given CPU: it holds
/// whatever the need's memory, waiting CPU and dump queue are, and is
/// evaluated at the waiting task's run time in constant time. The cost
/// planner skips a node whose floor cannot beat the cheapest node found
/// so far (`planner/least_cost.rs`). Every mechanism stops at least the CPU the
/// need lacks (or all the victim holds, if less) until the waiting task has
/// run; all but a kill idle the victim's siblings at their barrier for it
/// too, and a kill loses the attempt's run instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Floor {
    /// A kill's lost work and the CPU it stops; `None` where no victim may be killed.
    kill: Option<(u64, u64)>,
    /// The least CPU any other mechanism stops, siblings idle at the barrier included.
    stop_cpu: u64,
}

impl Floor {
    /// `v`'s floor for needs missing `left_cpu` millicores, or `None` if it
    /// holds no CPU and some is missing: any cover of such a need takes CPU,
    /// at a first step where all of `left_cpu` is still missing, from a
    /// victim that holds some, so only those victims' floors bound it.
    #[inline]
    pub fn of(v: &Victim, left_cpu: u64) -> Option<Floor> {
        if left_cpu > 0 && v.held.cpu_milli == 0 {
            return None;
        }
        // A shrink stops at least the CPU it takes, min(left, held); a
        // freeze or a checkpoint all it holds; the siblings idle more the
        // more of it stops (`siblings_idle` grows with the part).
        let part = left_cpu.min(v.held.cpu_milli);
        let siblings = if v.siblings_cpu > 0 { siblings_idle(v, v.siblings_cpu, part) } else { 0 };
        Some(Floor {
            kill: (v.killable && v.running)
                .then(|| (core_time(v.held.cpu_milli, v.ran).saturating_add(v.relaunch), v.held.cpu_milli)),
            stop_cpu: part + siblings,
        })
    }

    /// A floor at or below both `self`'s and `other`'s, for the victims of both.
    #[inline]
    pub fn min(self, other: Floor) -> Floor {
        let kill = match (self.kill, other.kill) {
            (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.min(b.1))),
            (a, b) => a.or(b),
        };
        Floor { kill, stop_cpu: self.stop_cpu.min(other.stop_cpu) }
    }

    /// The bound for a waiting task expected to run `run`.
    #[inline]
    pub fn at(&self, run: Micros) -> u64 {
        let stop = core_time(self.stop_cpu, run);
        self.kill.map_or(stop, |(lost, cpu)| stop.min(lost.saturating_add(core_time(cpu, run))))
    }
}

/// How much of what is left of the need an estimate covers, 0..=1: the mean
/// over the resources still needed of the part it frees.
#[inline]
pub fn coverage(e: &Estimate, left: Resources) -> f64 {
    let part = |got: u64, want: u64| (want > 0).then(|| got.min(want) as f64 / want as f64);
    match (part(e.takes.cpu_milli, left.cpu_milli), part(e.takes.mem_mb, left.mem_mb)) {
        (Some(cpu), Some(mem)) => (cpu + mem) / 2.0,
        (Some(one), None) | (None, Some(one)) => one,
        (None, None) => 0.0,
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
    pub options: [Option<Estimate>; MECHANISMS.len()],
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::strategies::any_victim;
    use crate::SECOND;
    use proptest::prelude::{
        any as arbitrary, prop, prop_assert, prop_assert_eq, prop_oneof, proptest, Just, Strategy,
    };

    /// Needs of every kind: CPU, memory or both missing, with or without a
    /// run estimate and a dump queue.
    fn any_need() -> impl Strategy<Value = Need> {
        let cpu = prop::sample::select(vec![0u64, 250, 1000, 4000, 12_000]);
        let mem = prop::sample::select(vec![0u64, 100, 1024, 4096, 40_000]);
        let run = prop_oneof![Just(0u64), 0u64..200_000_000];
        (cpu, mem, 0u64..=16_000, run, prop_oneof![Just(0u64), 0u64..20_000_000])
            .prop_filter("something is missing", |(cpu, mem, ..)| cpu + mem > 0)
            .prop_map(|(cpu, mem, waiting_cpu, run, io_queue)| Need {
                left: Resources::new(cpu, mem),
                waiting_cpu,
                run,
                io_queue,
                swap: SwapRates::default(),
            })
    }

    proptest! {
        // A victim's floor is at or below every mechanism's estimate for
        // any need missing the CPU it is for, at any run time; where it has
        // none, no estimate takes any CPU. The floor of two victims is at
        // or below each one's.
        #[test]
        fn a_floor_is_below_every_estimate(v in any_victim(), w in any_victim(), need in any_need(), tier in arbitrary::<bool>()) {
            let rates = Rates { checkpoint: if tier { Rates::default().checkpoint } else { None }, ..Rates::default() };
            let floor = Floor::of(&v, need.left.cpu_milli);
            for m in MECHANISMS {
                let Some(e) = estimate(m, &v, &need, &rates) else { continue };
                match floor {
                    Some(f) => prop_assert!(f.at(need.run) <= e.cost(), "{m:?}: {} > {}", f.at(need.run), e.cost()),
                    None => prop_assert_eq!(e.takes.cpu_milli, 0),
                }
            }
            if let (Some(a), Some(b)) = (floor, Floor::of(&w, need.left.cpu_milli)) {
                prop_assert!(a.min(b).at(need.run) <= a.at(need.run).min(b.at(need.run)));
            }
        }
    }

    /// A victim that runs its request: `cores` and `gb`, for `ran_s`.
    fn victim(cores: u64, gb: u64, ran_s: u64) -> Victim {
        let held = Resources::cores_gb(cores, gb);
        Victim {
            held,
            request: held,
            ran: ran_s * SECOND,
            killable: true,
            relaunch: 0,
            running: true,
            has_image: false,
            siblings_cpu: 0,
            phase_stopped_ppm: 0,
        }
    }

    fn need(left: Resources) -> Need {
        Need { left, waiting_cpu: left.cpu_milli, run: 0, io_queue: 0, swap: SwapRates::default() }
    }

    // The rates come from the `cost_*` keys, `footprint_mb` and the storage keys.
    #[test]
    fn rates_are_settable_keys() {
        let mut p = Params::default();
        let r = Rates::default();
        assert_eq!((r.reclaim_per_gb, r.restore_per_gb, r.footprint_mb), (3 * SECOND, 5_100_000, 64));
        let storage = StorageModel::default();
        let nvm = CheckpointRates { tier: Tier::Nvm, per_gb: 584_000, dirty_ppm: 100_000, storage };
        assert_eq!((r.working_set_ppm, r.checkpoint), (800_000, Some(nvm)));
        p.set("cost_reclaim_s_per_gb", "1.5").unwrap();
        p.set("cost_restore_s_per_gb", "2.5").unwrap();
        p.set("footprint_mb", "128").unwrap();
        p.set("cost_working_set_fraction", "0.5").unwrap();
        p.set("cost_checkpoint_tier", "ssd").unwrap();
        p.set("ssd_mb_s", "100").unwrap();
        let r = Rates::from_params(&p);
        assert_eq!((r.reclaim_per_gb, r.restore_per_gb, r.footprint_mb), (1_500_000, 2_500_000, 128));
        let storage = StorageModel { ssd_mb_s: 100.0, ..storage };
        let ssd = CheckpointRates { tier: Tier::Ssd, per_gb: 10_240_000, dirty_ppm: 100_000, storage };
        assert_eq!((r.working_set_ppm, r.checkpoint), (500_000, Some(ssd)));
        p.set("cost_checkpoint_tier", "none").unwrap();
        assert_eq!(Rates::from_params(&p).checkpoint, None);
        assert!(p.set("cost_restore_s_per_gb", "-1").is_err());
        assert!(p.set("cost_working_set_fraction", "1.5").is_err());
        assert!(p.set("cost_checkpoint_tier", "tape").is_err());
    }

    // A 4-core, 10 GB victim that ran 100 s, resident 8 GB (80 %). A need of
    // ⟨2 CPU, 2 GB⟩ is met from the 2 GB above its working set: free at once,
    // nothing swapped, and it runs on at 2 cores; with no run estimate it
    // costs nothing. A need of ⟨2 CPU, 3 GB⟩ swaps 1 GB out, which freezes
    // it (BIG-C §4.2): 1 GB in 3 s while 2 cores wait (6 core-s), read back
    // in 5.1 s holding 4 cores (20.4), its 4 cores stopped for the 3 s (12):
    // 38.4 core-s. A kill loses 4 × 100 = 400. Suspend in place takes all 4
    // cores and no memory.
    #[test]
    fn costs_by_hand() {
        let (v, r) = (victim(4, 10, 100), Rates::default());
        let above = estimate(MechanismKind::Graceful, &v, &need(Resources::cores_gb(2, 2)), &r).unwrap();
        assert_eq!((above.cost(), above.free_after, above.io_mb), (0, 0, 0));
        let need = need(Resources::cores_gb(2, 3));
        let kill = estimate(MechanismKind::Kill, &v, &need, &r).unwrap();
        assert_eq!((kill.cost(), kill.takes, kill.free_after), (400 * SECOND, Resources::cores_gb(4, 10), 0));
        let shrink = estimate(MechanismKind::Graceful, &v, &need, &r).unwrap();
        assert_eq!((shrink.takes, shrink.free_after), (need.left, 3 * SECOND));
        assert_eq!((shrink.wait, shrink.resume, shrink.stopped), (6 * SECOND, 20_400_000, 12 * SECOND));
        assert_eq!((shrink.cost(), shrink.io_mb), (38_400_000, 2048));
        let suspend = estimate(MechanismKind::Suspend, &v, &need, &r).unwrap();
        assert_eq!(
            (suspend.cost(), suspend.takes, suspend.keeps),
            (0, Resources::cores_gb(4, 0), Resources::cores_gb(0, 10))
        );
        assert_eq!(coverage(&suspend, need.left), 0.5);
        assert_eq!(coverage(&shrink, need.left), 1.0);
    }

    // The same victim on a node whose body measured 40 s/GB out and 60 s/GB
    // back: the 1 GB swapped takes 40 s while 2 cores wait (80 core-s) and
    // its 4 cores stop (160), and 60 s to read back on 4 cores (240): 480
    // core-s, dearer than the kill's 400, which the policy's rates make
    // ten times dearer than the shrink. A node that measured only its
    // reclaim reads back at the policy's 5.1 s/GB.
    #[test]
    fn a_node_s_measured_rates_price_its_shrinks() {
        let (v, r) = (victim(4, 10, 100), Rates::default());
        let slow = SwapRates { reclaim_per_gb: Some(40 * SECOND), restore_per_gb: Some(60 * SECOND) };
        let need = Need { swap: slow, ..need(Resources::cores_gb(2, 3)) };
        let shrink = estimate(MechanismKind::Graceful, &v, &need, &r).unwrap();
        assert_eq!((shrink.free_after, shrink.wait, shrink.stopped), (40 * SECOND, 80 * SECOND, 160 * SECOND));
        assert_eq!((shrink.resume, shrink.cost()), (240 * SECOND, 480 * SECOND));
        let kill = estimate(MechanismKind::Kill, &v, &need, &r).unwrap();
        assert!(kill.cost() < shrink.cost(), "{} vs {}", kill.cost(), shrink.cost());
        let reclaim_only = Need { swap: SwapRates { restore_per_gb: None, ..slow }, ..need };
        let shrink = estimate(MechanismKind::Graceful, &v, &reclaim_only, &r).unwrap();
        assert_eq!(shrink.resume, 20_400_000);
    }

    // A victim that ran 5 s is cheaper to kill (20 core-s) than to shrink (38.4);
    // one whose kill would fail its job is never killed.
    #[test]
    fn barely_run_tasks_are_cheapest_to_kill() {
        let (need, r) = (need(Resources::cores_gb(2, 3)), Rates::default());
        let young = victim(4, 10, 5);
        let kill = estimate(MechanismKind::Kill, &young, &need, &r).unwrap().cost();
        let shrink = estimate(MechanismKind::Graceful, &young, &need, &r).unwrap().cost();
        assert!(kill < shrink, "{kill} vs {shrink}");
        let last = Victim { killable: false, ..young };
        assert!(estimate(MechanismKind::Kill, &last, &need, &r).is_none());
        // The kill that reaches Spark's executor-failure limit loses its
        // job's other 3 executors' 100 s of 4 cores besides: 20 + 1200
        // core-s, above the shrink; its floor counts the relaunch too.
        let relaunching = Victim { relaunch: 1200 * SECOND, ..young };
        let kill = estimate(MechanismKind::Kill, &relaunching, &need, &r).unwrap();
        assert_eq!((kill.lost, kill.cost()), (1220 * SECOND, 1220 * SECOND));
        assert!(kill.cost() > shrink);
        assert_eq!(Floor::of(&relaunching, 0).unwrap().at(0), 0);
        assert_eq!(Floor::of(&relaunching, 4000).unwrap().kill, Some((1220 * SECOND, 4000)));
        assert_eq!(spark_max_executor_failures(1), 3);
        assert_eq!(spark_max_executor_failures(6), 12);
    }

    // A victim of a coupled phase with 12 cores of siblings, for a waiting
    // task of 1 core expected to run 30 s. Freezing its 4 cores stops them
    // and, at the stage barrier, its siblings: (4 + 12) × 30 = 480 core-s.
    // A shrink by 1 core slows it by a quarter: (1 + 12 / 4) × 30 = 120.
    // A kill loses its 100 s (400 core-s) and its 4 cores for the run (120),
    // but its siblings take its work: 520. Outside a coupled phase a freeze
    // costs only its own 4 × 30 = 120.
    #[test]
    fn stopping_a_victim_stops_its_siblings_at_the_barrier() {
        let r = Rates::default();
        let coupled = Victim { siblings_cpu: 12_000, ..victim(4, 8, 100) };
        let need = Need {
            left: Resources::cores_gb(1, 0),
            waiting_cpu: 1000,
            run: 30 * SECOND,
            io_queue: 0,
            swap: SwapRates::default(),
        };
        let cost = |m, v: &Victim| estimate(m, v, &need, &r).unwrap();
        assert_eq!(cost(MechanismKind::Suspend, &coupled).stopped, 480 * SECOND);
        let shrink = cost(MechanismKind::Graceful, &coupled);
        assert_eq!((shrink.stopped, shrink.cost()), (120 * SECOND, 120 * SECOND));
        let kill = cost(MechanismKind::Kill, &coupled);
        assert_eq!((kill.lost, kill.stopped, kill.cost()), (400 * SECOND, 120 * SECOND, 520 * SECOND));
        assert_eq!(cost(MechanismKind::Suspend, &victim(4, 8, 100)).cost(), 120 * SECOND);
    }

    // The same coupled victim (4 cores, 12 of siblings, a 1-core task to
    // run 30 s) in a phase whose slowest member has stopped a quarter of
    // its CPU already: the barrier waits for that one, so a shrink by a
    // quarter of this one idles no sibling more (1 × 30 = 30 core-s, not
    // 120), a shrink by half holds it back a further quarter ((2 + 12 / 4)
    // × 30 = 150) and a freeze three quarters ((4 + 9) × 30 = 390, not
    // 480). Beside a frozen sibling a freeze costs only its own cores. A
    // victim shrunk by a quarter already, the slowest itself, holds the
    // barrier back by each core more over its request: (1 + 12 / 4) × 30.
    #[test]
    fn a_phase_held_back_already_is_held_back_only_by_the_excess() {
        let r = Rates::default();
        let fresh = Victim { siblings_cpu: 12_000, ..victim(4, 8, 100) };
        let behind = Victim { phase_stopped_ppm: 250_000, ..fresh };
        let need = |cores| Need {
            left: Resources::cores_gb(cores, 0),
            waiting_cpu: 1000,
            run: 30 * SECOND,
            io_queue: 0,
            swap: SwapRates::default(),
        };
        let cost = |m, v: &Victim, cores| estimate(m, v, &need(cores), &r).unwrap().cost();
        assert_eq!(cost(MechanismKind::Graceful, &fresh, 1), 120 * SECOND);
        assert_eq!(cost(MechanismKind::Graceful, &behind, 1), 30 * SECOND);
        assert_eq!(cost(MechanismKind::Graceful, &behind, 2), 150 * SECOND);
        assert_eq!(cost(MechanismKind::Suspend, &behind, 1), 390 * SECOND);
        let frozen_sibling = Victim { phase_stopped_ppm: 1_000_000, ..fresh };
        assert_eq!(cost(MechanismKind::Suspend, &frozen_sibling, 1), 120 * SECOND);
        let shrunk = Victim {
            held: Resources::new(3000, 8192),
            running: false,
            siblings_cpu: 12_000,
            phase_stopped_ppm: 250_000,
            ..victim(4, 8, 100)
        };
        assert_eq!(cost(MechanismKind::Graceful, &shrunk, 1), 120 * SECOND);
    }

    // A memory-only need: suspend in place frees none of it; a shrink takes
    // only the need's memory and no CPU, never below the footprint. Of the
    // 960 MB it takes from a 1 GB victim, 204 are above its 820 MB working
    // set; the other 756 MB are swapped out at 3 s/GB (2.21484375 s) while
    // the waiting core waits.
    #[test]
    fn memory_need_is_taken_by_memory_only() {
        let (v, r) = (victim(4, 1, 100), Rates::default());
        let mem_only =
            Need { left: Resources::new(0, 2048), waiting_cpu: 1000, run: 0, io_queue: 0, swap: SwapRates::default() };
        assert!(estimate(MechanismKind::Suspend, &v, &mem_only, &r).is_none());
        let shrink = estimate(MechanismKind::Graceful, &v, &mem_only, &r).unwrap();
        assert_eq!(shrink.takes, Resources::new(0, 1024 - 64));
        assert_eq!((shrink.free_after, shrink.wait), (2_214_843, 2_214_843));
    }

    // The checkpoint paper's two-job experiment (§3.3.3): a 4-core, 5 GB task
    // that ran 30 s, a task of the same size expected to run 60 s; 2 GB of
    // the machine are free. On NVM (5 GB in 2.92 s) a checkpoint dumps the
    // 5 GB while the 4 waiting cores wait (11.68 core-s), reads it back on
    // restore (11.68) and stops the victim for 2.92 + 60 s (251.68): 275.04.
    // A shrink frees the 1 GB above its 4 GB working set at once and swaps
    // 1 GB (3 s: 12), reads it back (20.4) and stops it for 63 s (252):
    // 284.4. A kill loses 120 and stops 240: 360. Behind 10 s of queued
    // dumps the checkpoint costs 355.04, more than the shrink; with an image
    // it writes only the dirtied tenth (0.292 s).
    #[test]
    fn a_checkpoint_to_nvm_beats_a_swap_for_the_two_job_experiment() {
        let (v, r) = (victim(4, 5, 30), Rates::default());
        let mut need = Need {
            left: Resources::cores_gb(4, 2),
            waiting_cpu: 4000,
            run: 60 * SECOND,
            io_queue: 0,
            swap: SwapRates::default(),
        };
        let cost = |m, need: &Need| estimate(m, &v, need, &r).unwrap();
        let checkpoint = cost(MechanismKind::Checkpoint, &need);
        assert_eq!((checkpoint.takes, checkpoint.free_after), (v.held, 2_920_000));
        assert_eq!((checkpoint.wait, checkpoint.resume, checkpoint.stopped), (11_680_000, 11_680_000, 251_680_000));
        assert_eq!((checkpoint.cost(), checkpoint.io_mb), (275_040_000, 10_240));
        assert_eq!(cost(MechanismKind::Graceful, &need).cost(), 284_400_000);
        assert_eq!(cost(MechanismKind::Kill, &need).cost(), 360 * SECOND);
        need.io_queue = 10 * SECOND;
        assert_eq!(cost(MechanismKind::Checkpoint, &need).cost(), 355_040_000);
        let imaged = Victim { has_image: true, ..v };
        assert_eq!(estimate(MechanismKind::Checkpoint, &imaged, &need, &r).unwrap().free_after, 10_292_000);
        let tierless = Rates { checkpoint: None, ..r };
        assert!(estimate(MechanismKind::Checkpoint, &v, &need, &tierless).is_none());
    }
}
