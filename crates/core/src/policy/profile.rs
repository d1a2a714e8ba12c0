//! A policy as data: the plugin named at each extension point of the
//! scheduler. A profile is what an experiment file, `--compose` and a live
//! journal hold, and what the [`Registry`](super::Registry) builds a
//! [`Policy`](super::Policy) from; the presets are the registry's built-in
//! profiles, and a composition is a preset with some points filled anew.

use serde::{Deserialize, Serialize};

/// Every extension point a profile fills, with the built-in plugins it
/// takes and what each does; a registry adds its own planners and mechanisms.
pub const POINTS: &[(&str, &[(&str, &str)])] = &[
    (
        "queues",
        &[
            ("single", "one queue for every job"),
            (
                "short-long",
                "a short and a long queue with guaranteed shares (short_share); the short one preempts (BIG-C §5.1)",
            ),
        ],
    ),
    (
        "order",
        &[
            ("fifo", "first submitted, first served"),
            ("priority", "higher priority first, then first submitted"),
            (
                "fair",
                "YARN's fair scheduler: the job holding the least memory first, served node by node (YARN-ME Alg. 1)",
            ),
            ("shortest-remaining", "the least estimated work left first, served like fair (YARN-ME §6.2's Meganode)"),
        ],
    ),
    (
        "head_of_line",
        &[
            ("all", "a task that finds no room holds back every later task"),
            ("per-class", "it holds back later tasks of its own class only"),
        ],
    ),
    (
        "placement",
        &[
            ("first-fit", "the first node with room"),
            (
                "reserved-for-short",
                "a share of the nodes (reserve_fraction) for short jobs only, first fit (BIG-C §5.1)",
            ),
            ("pooled", "every node pooled into one of their total capacity (YARN-ME §6.2's Meganode)"),
        ],
    ),
    (
        "planner",
        &[
            ("none", "never preempts"),
            ("capacity", "queues over their guaranteed share give back to starved queues (BIG-C Alg. 1 and 2)"),
            ("priority-levels", "a waiting task preempts tasks of a lower priority level (checkpoint paper §3.1)"),
            ("cost", "as capacity, the take sized by the need and each victim given its cheapest mechanism (pliant's)"),
        ],
    ),
    (
        "compute_dr",
        &[
            ("true", "the take sized by BIG-C's ComputeDR (Alg. 1)"),
            ("false", "all of an over-provisioned queue's excess over its guarantee is taken (YARN)"),
        ],
    ),
    (
        "mechanism",
        &[
            ("kill", "the victim is killed and its task launched again: its work is lost"),
            ("immediate", "suspended to its footprint, its memory swapped out; resumed on its node (BIG-C §3)"),
            ("graceful", "shrunk by r_GP steps (gp_units) while it runs on (BIG-C §3)"),
            ("suspend", "frozen in place with its memory resident: frees CPU only (Slurm's SUSPEND)"),
            ("cheapest", "each victim by the mechanism the cost planner chose for it (pliant's)"),
            ("checkpoint-hdd", "checkpointed to HDD and restored later (checkpoint paper, Table 3's rates)"),
            ("checkpoint-ssd", "checkpointed to SSD and restored later"),
            ("checkpoint-nvm", "checkpointed to NVM and restored later"),
            ("adaptive-hdd", "checkpointed to HDD or killed, whichever Alg. 1 of the checkpoint paper finds cheaper"),
            ("adaptive-ssd", "the same on SSD"),
            ("adaptive-nvm", "the same on NVM"),
        ],
    ),
    (
        "reservation",
        &[
            ("none", "no slot is kept for a job's later phases"),
            ("timeout", "every slot a task frees is kept for its job reservation_timeout_s (SSR §III-A)"),
            ("speculative", "the slots a wider next phase needs are reserved from prereserve on (SSR §III-B, Alg. 1)"),
            (
                "speculative-deadline",
                "as speculative, reservations expiring at Eq. 2's deadline for isolation P (SSR §IV-B)",
            ),
            (
                "speculative-stragglers",
                "as speculative, idle reserved slots running copies of the phase's last tasks (SSR §IV-C)",
            ),
        ],
    ),
    (
        "sizing",
        &[
            ("requested", "a task gets the memory it asks for"),
            ("elastic", "a task may start with less memory and run slower (YARN-ME §3)"),
        ],
    ),
    (
        "attempts",
        &[
            ("limited", "a kill counts against a task's launches (max_attempts)"),
            ("unlimited", "kills never fail a job"),
        ],
    ),
];

/// A resolved policy: one plugin, by name, at each extension point. It names
/// no preset, so a journal that keeps it rebuilds the same policy whatever
/// the presets become; the numbers the plugins read are the policy
/// parameters (`Params`), kept beside it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The policy's name, for reports.
    pub name: String,
    /// The queues jobs go to (`single`, `short-long`).
    pub queues: String,
    /// How jobs are ordered and served inside a queue.
    pub order: String,
    /// What a task that finds no room holds back.
    pub head_of_line: String,
    /// Which node gets a task.
    pub placement: String,
    /// The resource monitor's plugins; `None`: the policy does not preempt.
    pub preemption: Option<Preempting>,
    /// Slot reservation for a job's later tasks.
    pub reservation: String,
    /// How much memory a placed task gets.
    pub sizing: String,
    /// Whether a kill counts against a task's launches.
    pub attempts: String,
}

/// The plugins of a policy that preempts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preempting {
    /// Whom the resource monitor takes from, for whom.
    pub planner: String,
    /// Whether the take is sized with BIG-C's COMPUTEDR.
    pub compute_dr: bool,
    /// How each victim gives its resources back.
    pub mechanism: String,
}

impl Profile {
    /// The root every preset starts from: one FIFO queue (a task that finds
    /// no room holds back every later one), first fit, no preemption, no
    /// reservation, requested sizes, limited attempts.
    pub fn root(name: &str) -> Profile {
        Profile {
            name: name.to_string(),
            queues: "single".into(),
            order: "fifo".into(),
            head_of_line: "all".into(),
            placement: "first-fit".into(),
            preemption: None,
            reservation: "none".into(),
            sizing: "requested".into(),
            attempts: "limited".into(),
        }
    }

    /// Fills `point` with `plugin` (both checked by the registry). A point of
    /// the resource monitor on a profile that does not preempt starts it from
    /// the capacity planner with COMPUTEDR, killing; planner `none` stops it.
    pub(super) fn fill(&mut self, point: &str, plugin: &str) {
        let value = plugin.to_string();
        match point {
            "queues" => self.queues = value,
            "order" => self.order = value,
            "head_of_line" => self.head_of_line = value,
            "placement" => self.placement = value,
            "planner" if plugin == "none" => self.preemption = None,
            "planner" => self.preempting().planner = value,
            "compute_dr" => self.preempting().compute_dr = plugin == "true",
            "mechanism" => self.preempting().mechanism = value,
            "reservation" => self.reservation = value,
            "sizing" => self.sizing = value,
            _ => self.attempts = value,
        }
    }

    /// Its resource monitor's plugins; a profile that does not preempt
    /// starts from the capacity planner with COMPUTEDR, killing.
    fn preempting(&mut self) -> &mut Preempting {
        self.preemption.get_or_insert_with(|| Preempting {
            planner: "capacity".into(),
            compute_dr: true,
            mechanism: "kill".into(),
        })
    }

    /// Every point with the plugin filling it, as (point, plugin), in
    /// [`POINTS`]' order; the resource monitor's three only when it preempts.
    pub fn points(&self) -> Vec<(&'static str, String)> {
        let mut points = vec![
            ("queues", self.queues.clone()),
            ("order", self.order.clone()),
            ("head_of_line", self.head_of_line.clone()),
            ("placement", self.placement.clone()),
        ];
        match &self.preemption {
            None => points.push(("planner", "none".into())),
            Some(p) => points.extend([
                ("planner", p.planner.clone()),
                ("compute_dr", p.compute_dr.to_string()),
                ("mechanism", p.mechanism.clone()),
            ]),
        }
        points.extend([
            ("reservation", self.reservation.clone()),
            ("sizing", self.sizing.clone()),
            ("attempts", self.attempts.clone()),
        ]);
        points
    }
}
