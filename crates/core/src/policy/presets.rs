//! Named policies: one table of (name, about, build), each a composition of
//! the pieces in [`super`].

use super::cost::Rates;
use super::{
    CheckpointSpec, HeadOfLine, JobOrder, MechanismSpec, Params, Placement, PlannerSpec, Policy, PreemptionSpec,
    QueueSpec, ReservationSpec, Sizing, Tier,
};
use crate::model::JobClass;
use crate::time::from_secs_f64;

/// A preset: its name, a line about it and how it is built.
pub struct PresetInfo {
    /// The name used with `--policies`.
    pub name: &'static str,
    /// What it does.
    pub about: &'static str,
    /// The composition, with the parameters in force.
    build: fn(&Params) -> Policy,
}

/// Every preset, in the order reports list them.
pub const PRESETS: &[PresetInfo] = &[
    PresetInfo {
        name: "fifo",
        about: "one FIFO queue, no preemption",
        build: |p| base(p, single_queue(), JobOrder::Fifo, Placement::FirstFit, None),
    },
    PresetInfo {
        name: "priority",
        about: "strict priority, no preemption (the \"wait\" baseline)",
        build: |p| base(p, single_queue(), JobOrder::Priority, Placement::FirstFit, None),
    },
    PresetInfo {
        name: "reserve",
        about: "reserve_fraction of the nodes only for short jobs, long jobs on the rest, no preemption (BIG-C §5.1)",
        build: |p| {
            let placement = Placement::ReservedForShort { fraction: p.reserve_fraction };
            base(p, single_queue(), JobOrder::Fifo, placement, None)
        },
    },
    PresetInfo {
        name: "kill",
        about: "YARN capacity scheduler: queues short (short_share) and long, work-conserving, kills per BIG-C Alg. 1 (no ComputeDR) and Alg. 2",
        build: |p| capacity(p, false, MechanismSpec::Kill),
    },
    PresetInfo {
        name: "ip",
        about: "BIG-C immediate preemption: like kill, but sized with ComputeDR and victims suspended to a footprint; delayed resumption D",
        build: |p| capacity(p, true, MechanismSpec::Immediate),
    },
    PresetInfo {
        name: "gp",
        about: "BIG-C graceful preemption: ComputeDR, containers shrunk by gp_units basic units per round, frozen when swapping; delayed resumption D",
        build: |p| capacity(p, true, MechanismSpec::Graceful),
    },
    PresetInfo {
        name: "suspend",
        about: "as ip, but victims are frozen in place with their memory kept (Slurm's SUSPEND): only CPU is taken back; delayed resumption D",
        build: |p| capacity(p, true, MechanismSpec::Suspend),
    },
    PresetInfo {
        name: "pliant",
        about: "pliant's own: as ip, but the take is sized by the need per resource and each victim gives it back the cheapest way (kill, suspend in place, or a shrink by the need) by the cost model of docs/cost-model.md",
        build: |p| {
            let spec = preemption(p, PlannerSpec::Cost, true, MechanismSpec::Cheapest);
            base(p, two_queues(p.short_share), JobOrder::Fifo, Placement::FirstFit, Some(spec))
        },
    },
    PresetInfo {
        name: "priority-kill",
        about: "strict priority; a task preempts lower priority levels (free 0-1 < middle 2-8 < production 9-11) by killing, youngest first (checkpoint paper's kill)",
        build: |p| by_level(p, MechanismSpec::Kill),
    },
    PresetInfo {
        name: "checkpoint-hdd",
        about: "as priority-kill, but every victim is checkpointed to HDD and restored on its node if it fits there, else remotely",
        build: |p| checkpointing(p, Tier::Hdd, false),
    },
    PresetInfo {
        name: "checkpoint-ssd",
        about: "as checkpoint-hdd, on SSD",
        build: |p| checkpointing(p, Tier::Ssd, false),
    },
    PresetInfo {
        name: "checkpoint-nvm",
        about: "as checkpoint-hdd, on NVM",
        build: |p| checkpointing(p, Tier::Nvm, false),
    },
    PresetInfo {
        name: "adaptive-hdd",
        about: "checkpoint paper §4.1 on HDD: cheapest-to-dump victims first; checkpoint only if progress exceeds dump + restore + queue (Alg. 1), else kill; local or remote restore, whichever is cheaper (Alg. 2)",
        build: |p| checkpointing(p, Tier::Hdd, true),
    },
    PresetInfo { name: "adaptive-ssd", about: "as adaptive-hdd, on SSD", build: |p| checkpointing(p, Tier::Ssd, true) },
    PresetInfo { name: "adaptive-nvm", about: "as adaptive-hdd, on NVM", build: |p| checkpointing(p, Tier::Nvm, true) },
    PresetInfo {
        name: "timeout-reserve",
        about: "as priority, but every slot a task of an unfinished job frees stays reserved for it for reservation_timeout_s (SSR §III-A, Spark dynamic allocation)",
        build: |p| reserving(p, ReservationSpec::Timeout { timeout: from_secs_f64(p.reservation_timeout_s) }),
    },
    PresetInfo {
        name: "ssr",
        about: "as priority, plus speculative slot reservation: a finished task's slot is kept for the next phase (SSR Alg. 1, pre-reservation past R = prereserve)",
        build: |p| reserving(p, speculative(p, None, false)),
    },
    PresetInfo {
        name: "ssr-deadline",
        about: "as ssr, reservations expire at the deadline of SSR Eq. 2 for isolation P (--set isolation=P)",
        build: |p| reserving(p, speculative(p, Some(p.isolation), false)),
    },
    PresetInfo {
        name: "ssr-stragglers",
        about: "as ssr, a phase's last running tasks get copies on its idle reserved slots (SSR §IV-C)",
        build: |p| reserving(p, speculative(p, None, true)),
    },
    PresetInfo {
        name: "yarn",
        about: "YARN's fair scheduler as YARN-ME runs it: node by node, least memory held first, node reservations; every task gets its request",
        build: |p| Policy {
            node_reservations: p.yarn.node_reservations.unwrap_or(true),
            backfill: Some(p.yarn.backfill.unwrap_or(false)),
            ..base(p, single_queue(), JobOrder::Fair, Placement::FirstFit, None)
        },
    },
    PresetInfo {
        name: "elastic",
        about: "YARN-ME (Alg. 1): as yarn, but a task that does not fit may run with less memory if the timeline generator says its job does not end later",
        build: |p| Policy {
            node_reservations: p.yarn.node_reservations.unwrap_or(true),
            backfill: p.yarn.backfill,
            sizing: Sizing::Elastic(p.elastic()),
            ..base(p, single_queue(), JobOrder::Fair, Placement::FirstFit, None)
        },
    },
    PresetInfo {
        name: "meganode",
        about: "YARN-ME §6.2's bound: all nodes pooled into one, shortest remaining job first, no elasticity",
        build: |p| base(p, single_queue(), JobOrder::ShortestRemaining, Placement::Pooled, None),
    },
];

/// The error for an unknown preset `name`: a "did you mean", then every preset.
pub fn unknown_preset(name: &str) -> String {
    let known: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
    crate::names::unknown("policy", name, &known)
}

/// Builds the preset `name` with `params`, or `None` for an unknown name.
pub fn preset(name: &str, params: &Params) -> Option<Policy> {
    let info = PRESETS.iter().find(|p| p.name == name)?;
    Some(Policy { name: name.to_string(), ..(info.build)(params) })
}

pub(super) fn single_queue() -> Vec<QueueSpec> {
    vec![QueueSpec {
        name: "default",
        classes: vec![JobClass::Short, JobClass::Long],
        guaranteed: 1.0,
        preempts: false,
    }]
}

pub(super) fn two_queues(short_share: f64) -> Vec<QueueSpec> {
    vec![
        QueueSpec { name: "short", classes: vec![JobClass::Short], guaranteed: short_share, preempts: true },
        // BIG-C §5.1: the rest "was assigned to the long job queue in a best-effort
        // manner": long jobs never preempt short ones.
        QueueSpec { name: "long", classes: vec![JobClass::Long], guaranteed: 1.0 - short_share, preempts: false },
    ]
}

/// The composition every preset starts from: no reservation, requested sizes.
fn base(
    params: &Params,
    queues: Vec<QueueSpec>,
    order: JobOrder,
    placement: Placement,
    preemption: Option<PreemptionSpec>,
) -> Policy {
    Policy {
        name: String::new(),
        queues,
        order,
        // A single strict queue for the non-preemptive baselines, one FIFO per
        // class once classes are kept apart (by nodes or by queues).
        head_of_line: if matches!(placement, Placement::FirstFit) && preemption.is_none() {
            HeadOfLine::All
        } else {
            HeadOfLine::PerClass
        },
        placement,
        preemption,
        max_attempts: params.max_attempts,
        locality_wait: params.locality_wait(),
        reservation: None,
        sizing: Sizing::Requested,
        node_reservations: false,
        backfill: Some(false),
        am: params.yarn.am(),
        per_heartbeat: params.yarn.containers_per_heartbeat,
        node_heartbeat: params.elastic().heartbeat,
        am_start: params.yarn.am_heartbeat_s.map(from_secs_f64),
    }
}

/// The resource monitor's preemption with `planner` and `mechanism`.
pub(super) fn preemption(
    params: &Params,
    planner: PlannerSpec,
    compute_dr: bool,
    mechanism: MechanismSpec,
) -> PreemptionSpec {
    PreemptionSpec {
        planner,
        interval: params.monitor_interval(),
        compute_dr,
        mechanism,
        delayed_resumption: params.delayed_resumption,
        gp_step: params.gp_step(),
        gradual_resumption: params.gradual_resumption,
        footprint: params.footprint(),
        rates: Rates::from_params(params),
    }
}

/// BIG-C §5.1: capacity queues short and long; the short one takes back.
fn capacity(params: &Params, compute_dr: bool, mechanism: MechanismSpec) -> Policy {
    let spec = preemption(params, PlannerSpec::Capacity, compute_dr, mechanism);
    base(params, two_queues(params.short_share), JobOrder::Fifo, Placement::FirstFit, Some(spec))
}

/// Checkpoint paper §3.1: one strict priority queue; preempted tasks are
/// resubmitted as often as it takes (§2: Google's evicted tasks are).
fn by_level(params: &Params, mechanism: MechanismSpec) -> Policy {
    let spec = preemption(params, PlannerSpec::PriorityLevels, false, mechanism);
    Policy {
        head_of_line: HeadOfLine::All,
        max_attempts: u32::MAX,
        ..base(params, single_queue(), JobOrder::Priority, Placement::FirstFit, Some(spec))
    }
}

fn checkpointing(params: &Params, tier: Tier, adaptive: bool) -> Policy {
    by_level(params, MechanismSpec::Checkpoint(CheckpointSpec { tier, adaptive, storage: params.storage }))
}

/// SSR §III–§IV: strict priority, work-conserving, plus a reserve/permit step.
fn reserving(params: &Params, spec: ReservationSpec) -> Policy {
    Policy { reservation: Some(spec), ..base(params, single_queue(), JobOrder::Priority, Placement::FirstFit, None) }
}

fn speculative(params: &Params, isolation: Option<f64>, stragglers: bool) -> ReservationSpec {
    ReservationSpec::Speculative { prereserve: params.prereserve, isolation, stragglers }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_preset_builds_and_maps_both_classes() {
        for info in PRESETS {
            let p = preset(info.name, &Params::default()).expect(info.name);
            p.queue_of(JobClass::Short);
            p.queue_of(JobClass::Long);
        }
        assert!(preset("nope", &Params::default()).is_none());
    }
}
