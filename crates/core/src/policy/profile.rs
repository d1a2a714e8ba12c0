//! A policy as data: the plugin named at each extension point of the
//! scheduler. A profile is what an experiment file, `--compose` and a live
//! journal hold, and what the [`Registry`](super::Registry) builds a
//! [`Policy`](super::Policy) from; the presets are the registry's built-in
//! profiles, and a composition is a preset with some points filled anew.

use serde::{Deserialize, Serialize};

/// Every extension point a profile fills, with the built-in plugins it
/// takes; a registry adds its own planners and mechanisms.
pub const POINTS: &[(&str, &[&str])] = &[
    ("queues", &["single", "short-long"]),
    ("order", &["fifo", "priority", "fair", "shortest-remaining"]),
    ("head_of_line", &["all", "per-class"]),
    ("placement", &["first-fit", "reserved-for-short", "pooled"]),
    ("planner", &["none", "capacity", "priority-levels", "cost"]),
    ("compute_dr", &["true", "false"]),
    (
        "mechanism",
        &[
            "kill",
            "immediate",
            "graceful",
            "suspend",
            "cheapest",
            "checkpoint-hdd",
            "checkpoint-ssd",
            "checkpoint-nvm",
            "adaptive-hdd",
            "adaptive-ssd",
            "adaptive-nvm",
        ],
    ),
    ("reservation", &["none", "timeout", "speculative", "speculative-deadline", "speculative-stragglers"]),
    ("sizing", &["requested", "elastic"]),
    ("attempts", &["limited", "unlimited"]),
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
