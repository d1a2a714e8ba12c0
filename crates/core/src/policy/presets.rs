//! Named policies. Each is a composition of the pieces in [`super`].

use super::{
    CheckpointSpec, HeadOfLine, JobOrder, Params, Placement, Planner, Policy, PreemptionSpec, QueueSpec,
    ReservationSpec, Sizing, Tier,
};
use crate::action::Mechanism;
use crate::model::JobClass;
use crate::time::from_secs_f64;

/// A preset's name and one-line description, for `pliant policies`.
pub struct PresetInfo {
    /// The name used with `--policies`.
    pub name: &'static str,
    /// What it does.
    pub about: &'static str,
}

/// Every preset, in the order reports list them.
pub const PRESETS: &[PresetInfo] = &[
    PresetInfo { name: "fifo", about: "one FIFO queue, no preemption" },
    PresetInfo { name: "priority", about: "strict priority, no preemption (the \"wait\" baseline)" },
    PresetInfo {
        name: "reserve",
        about: "reserve_fraction of the nodes only for short jobs, long jobs on the rest, no preemption (BIG-C §5.1)",
    },
    PresetInfo {
        name: "kill",
        about: "YARN capacity scheduler: queues short (short_share) and long, work-conserving, kills per BIG-C Alg. 1 (no ComputeDR) and Alg. 2",
    },
    PresetInfo {
        name: "ip",
        about: "BIG-C immediate preemption: like kill, but sized with ComputeDR and victims suspended to a footprint; delayed resumption D",
    },
    PresetInfo {
        name: "gp",
        about: "BIG-C graceful preemption: ComputeDR, containers shrunk by gp_units basic units per round, frozen when swapping; delayed resumption D",
    },
    PresetInfo {
        name: "priority-kill",
        about: "strict priority; a task preempts lower priority levels (free 0-1 < middle 2-8 < production 9-11) by killing, youngest first (checkpoint paper's kill)",
    },
    PresetInfo { name: "checkpoint-hdd", about: "as priority-kill, but every victim is checkpointed to HDD and restored on its node if it fits there, else remotely" },
    PresetInfo { name: "checkpoint-ssd", about: "as checkpoint-hdd, on SSD" },
    PresetInfo { name: "checkpoint-nvm", about: "as checkpoint-hdd, on NVM" },
    PresetInfo {
        name: "adaptive-hdd",
        about: "checkpoint paper §4.1 on HDD: cheapest-to-dump victims first; checkpoint only if progress exceeds dump + restore + queue (Alg. 1), else kill; local or remote restore, whichever is cheaper (Alg. 2)",
    },
    PresetInfo { name: "adaptive-ssd", about: "as adaptive-hdd, on SSD" },
    PresetInfo { name: "adaptive-nvm", about: "as adaptive-hdd, on NVM" },
    PresetInfo {
        name: "timeout-reserve",
        about: "as priority, but every slot a task of an unfinished job frees stays reserved for it for reservation_timeout_s (SSR §III-A, Spark dynamic allocation)",
    },
    PresetInfo {
        name: "ssr",
        about: "as priority, plus speculative slot reservation: a finished task's slot is kept for the next phase (SSR Alg. 1, pre-reservation past R = prereserve)",
    },
    PresetInfo {
        name: "ssr-deadline",
        about: "as ssr, reservations expire at the deadline of SSR Eq. 2 for isolation P (--set isolation=P)",
    },
    PresetInfo {
        name: "ssr-stragglers",
        about: "as ssr, a phase's last running tasks get copies on its idle reserved slots (SSR §IV-C)",
    },
    PresetInfo {
        name: "yarn",
        about: "YARN's fair scheduler as YARN-ME runs it: node by node, least memory held first, node reservations; every task gets its request",
    },
    PresetInfo {
        name: "elastic",
        about: "YARN-ME (Alg. 1): as yarn, but a task that does not fit may run with less memory if the timeline generator says its job does not end later",
    },
    PresetInfo {
        name: "meganode",
        about: "YARN-ME §6.2's bound: all nodes pooled into one, shortest remaining job first, no elasticity",
    },
];

fn single_queue() -> Vec<QueueSpec> {
    vec![QueueSpec {
        name: "default",
        classes: vec![JobClass::Short, JobClass::Long],
        guaranteed: 1.0,
        preempts: false,
    }]
}

fn two_queues(short_share: f64) -> Vec<QueueSpec> {
    vec![
        QueueSpec { name: "short", classes: vec![JobClass::Short], guaranteed: short_share, preempts: true },
        // BIG-C §5.1: the rest "was assigned to the long job queue in a best-effort
        // manner": long jobs never preempt short ones.
        QueueSpec { name: "long", classes: vec![JobClass::Long], guaranteed: 1.0 - short_share, preempts: false },
    ]
}

/// Builds the preset `name` with `params`, or `None` for an unknown name.
pub fn preset(name: &str, params: &Params) -> Option<Policy> {
    let base = |queues, order, placement, preemption: Option<PreemptionSpec>| Policy {
        name: name.to_string(),
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
    };
    let capacity = |compute_dr, mechanism| {
        let spec = PreemptionSpec {
            planner: Planner::Capacity,
            checkpoint: None,
            interval: params.monitor_interval(),
            compute_dr,
            mechanism,
            delayed_resumption: params.delayed_resumption,
            gp_step: params.gp_step(),
            gradual_resumption: params.gradual_resumption,
            footprint: params.footprint(),
        };
        base(two_queues(params.short_share), JobOrder::Fifo, Placement::FirstFit, Some(spec))
    };
    // Checkpoint paper §3.1: one strict priority queue; preempted tasks are
    // resubmitted as often as it takes (§2: Google's evicted tasks are).
    let by_level = |checkpoint: Option<CheckpointSpec>| Policy {
        name: name.to_string(),
        queues: single_queue(),
        order: JobOrder::Priority,
        head_of_line: HeadOfLine::All,
        placement: Placement::FirstFit,
        preemption: Some(PreemptionSpec {
            planner: Planner::PriorityLevels,
            checkpoint,
            interval: params.monitor_interval(),
            compute_dr: false,
            mechanism: if checkpoint.is_some() { Mechanism::Checkpoint } else { Mechanism::Kill },
            delayed_resumption: params.delayed_resumption,
            gp_step: params.gp_step(),
            gradual_resumption: params.gradual_resumption,
            footprint: params.footprint(),
        }),
        max_attempts: u32::MAX,
        locality_wait: params.locality_wait(),
        reservation: None,
        sizing: Sizing::Requested,
        node_reservations: false,
    };
    // SSR §III–§IV: strict priority, work-conserving, plus a reserve/permit step.
    let reserving = |spec| Policy {
        reservation: Some(spec),
        ..base(single_queue(), JobOrder::Priority, Placement::FirstFit, None)
    };
    let speculative =
        |isolation, stragglers| ReservationSpec::Speculative { prereserve: params.prereserve, isolation, stragglers };
    let checkpointing = |tier, adaptive| by_level(Some(CheckpointSpec { tier, adaptive, storage: params.storage }));
    if let Some((kind, tier)) = name.split_once('-') {
        if let Some(tier) = Tier::ALL.into_iter().find(|t| t.name() == tier) {
            match kind {
                "checkpoint" => return Some(checkpointing(tier, false)),
                "adaptive" => return Some(checkpointing(tier, true)),
                _ => {}
            }
        }
    }
    let policy = match name {
        "fifo" => base(single_queue(), JobOrder::Fifo, Placement::FirstFit, None),
        "priority" => base(single_queue(), JobOrder::Priority, Placement::FirstFit, None),
        "reserve" => base(
            single_queue(),
            JobOrder::Fifo,
            Placement::ReservedForShort { fraction: params.reserve_fraction },
            None,
        ),
        "kill" => capacity(false, Mechanism::Kill),
        "ip" => capacity(true, Mechanism::Immediate),
        "gp" => capacity(true, Mechanism::Graceful),
        "priority-kill" => by_level(None),
        "timeout-reserve" => {
            reserving(ReservationSpec::Timeout { timeout: from_secs_f64(params.reservation_timeout_s) })
        }
        "ssr" => reserving(speculative(None, false)),
        "ssr-deadline" => reserving(speculative(Some(params.isolation), false)),
        "ssr-stragglers" => reserving(speculative(None, true)),
        "yarn" => Policy { node_reservations: true, ..base(single_queue(), JobOrder::Fair, Placement::FirstFit, None) },
        "elastic" => Policy {
            node_reservations: true,
            sizing: Sizing::Elastic(params.elastic()),
            ..base(single_queue(), JobOrder::Fair, Placement::FirstFit, None)
        },
        "meganode" => base(single_queue(), JobOrder::ShortestRemaining, Placement::Pooled, None),
        _ => return None,
    };
    Some(policy)
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
