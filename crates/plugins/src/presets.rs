//! Named policies: one table of (name, about, steps), each a profile
//! filled point by point (`profile::POINTS`) from the root profile: the
//! registry's built-in profiles.

use pliant_core::policy::PresetInfo;

/// The steps of BIG-C §5.1's capacity queues: short and long, the short
/// one taking back with the capacity monitor, COMPUTEDR or not.
macro_rules! capacity {
    ($compute_dr:literal, $mechanism:literal) => {
        &[
            ("queues", "short-long"),
            ("head_of_line", "per-class"),
            ("planner", "capacity"),
            ("compute_dr", $compute_dr),
            ("mechanism", $mechanism),
        ]
    };
}

/// The steps of the checkpoint paper §3.1: one strict priority queue,
/// preemption by priority level; preempted tasks are resubmitted as often
/// as it takes (§2: Google's evicted tasks are).
macro_rules! by_level {
    ($mechanism:literal) => {
        &[
            ("order", "priority"),
            ("planner", "priority-levels"),
            ("compute_dr", "false"),
            ("mechanism", $mechanism),
            ("attempts", "unlimited"),
        ]
    };
}

/// Every preset, in the order reports list them: the built-in table of
/// compositions.
pub const PRESETS: &[PresetInfo] = &[
    PresetInfo { name: "fifo", about: "one FIFO queue, no preemption", steps: &[] },
    PresetInfo {
        name: "priority",
        about: "strict priority, no preemption (the \"wait\" baseline)",
        steps: &[("order", "priority")],
    },
    PresetInfo {
        name: "reserve",
        about: "reserve_fraction of the nodes only for short jobs, long jobs on the rest, no preemption (BIG-C §5.1)",
        // One FIFO per class once classes are kept apart.
        steps: &[("placement", "reserved-for-short"), ("head_of_line", "per-class")],
    },
    PresetInfo {
        name: "kill",
        about: "YARN capacity scheduler: queues short (short_share) and long, work-conserving, kills per BIG-C Alg. 1 (no ComputeDR) and Alg. 2, a random container of the chosen job (§2.2)",
        steps: capacity!("false", "kill"),
    },
    PresetInfo {
        name: "ip",
        about: "BIG-C immediate preemption: like kill, but sized with ComputeDR and victims suspended to a footprint; delayed resumption D",
        steps: capacity!("true", "immediate"),
    },
    PresetInfo {
        name: "gp",
        about: "BIG-C graceful preemption: ComputeDR, containers shrunk by gp_units basic units per round, frozen when swapping; delayed resumption D",
        steps: capacity!("true", "graceful"),
    },
    PresetInfo {
        name: "suspend",
        about: "as ip, but victims are frozen in place with their memory kept (Slurm's SUSPEND): only CPU is taken back; delayed resumption D",
        steps: capacity!("true", "suspend"),
    },
    PresetInfo {
        name: "pliant",
        about: "pliant's own: as ip, but the take is sized by the need per resource and each victim gives it back the cheapest way (kill, suspend in place, or a shrink by the need) by the cost model of docs/cost-model.md",
        steps: &[
            ("queues", "short-long"),
            ("head_of_line", "per-class"),
            ("planner", "cost"),
            ("compute_dr", "true"),
            ("mechanism", "cheapest"),
        ],
    },
    PresetInfo {
        name: "priority-kill",
        about: "strict priority; a task preempts lower priority levels (free 0-1 < middle 2-8 < production 9-11) by killing, youngest first (checkpoint paper's kill)",
        steps: by_level!("kill"),
    },
    PresetInfo {
        name: "checkpoint-hdd",
        about: "as priority-kill, but every victim is checkpointed to HDD and restored on its node if it fits there, else remotely",
        steps: by_level!("checkpoint-hdd"),
    },
    PresetInfo { name: "checkpoint-ssd", about: "as checkpoint-hdd, on SSD", steps: by_level!("checkpoint-ssd") },
    PresetInfo { name: "checkpoint-nvm", about: "as checkpoint-hdd, on NVM", steps: by_level!("checkpoint-nvm") },
    PresetInfo {
        name: "adaptive-hdd",
        about: "checkpoint paper §4.1 on HDD: cheapest-to-dump victims first; checkpoint only if progress exceeds dump + restore + queue (Alg. 1), else kill; local or remote restore, whichever is cheaper (Alg. 2)",
        steps: by_level!("adaptive-hdd"),
    },
    PresetInfo { name: "adaptive-ssd", about: "as adaptive-hdd, on SSD", steps: by_level!("adaptive-ssd") },
    PresetInfo { name: "adaptive-nvm", about: "as adaptive-hdd, on NVM", steps: by_level!("adaptive-nvm") },
    PresetInfo {
        name: "timeout-reserve",
        about: "as priority, but every slot a task of an unfinished job frees stays reserved for it for reservation_timeout_s (SSR §III-A, Spark dynamic allocation)",
        steps: &[("order", "priority"), ("reservation", "timeout")],
    },
    PresetInfo {
        name: "ssr",
        about: "as priority, plus speculative slot reservation: a finished task's slot is kept for the next phase (SSR Alg. 1, pre-reservation past R = prereserve)",
        steps: &[("order", "priority"), ("reservation", "speculative")],
    },
    PresetInfo {
        name: "ssr-deadline",
        about: "as ssr, reservations expire at the deadline of SSR Eq. 2 for isolation P (--set isolation=P)",
        steps: &[("order", "priority"), ("reservation", "speculative-deadline")],
    },
    PresetInfo {
        name: "ssr-stragglers",
        about: "as ssr, a phase's last running tasks get copies on its idle reserved slots (SSR §IV-C)",
        steps: &[("order", "priority"), ("reservation", "speculative-stragglers")],
    },
    PresetInfo {
        name: "yarn",
        about: "YARN's fair scheduler as YARN-ME runs it: node by node, least memory held first, node reservations; every task gets its request",
        steps: &[("order", "fair")],
    },
    PresetInfo {
        name: "elastic",
        about: "YARN-ME (Alg. 1): as yarn, but a task that does not fit may run with less memory if the timeline generator says its job does not end later",
        steps: &[("order", "fair"), ("sizing", "elastic")],
    },
    PresetInfo {
        name: "meganode",
        about: "YARN-ME §6.2's bound: all nodes pooled into one, shortest remaining job first, no elasticity",
        steps: &[("order", "shortest-remaining"), ("placement", "pooled"), ("head_of_line", "per-class")],
    },
];

#[cfg(test)]
mod tests {
    use super::PRESETS;
    use crate::preset;
    use pliant_core::model::JobClass;
    use pliant_core::policy::Params;

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
