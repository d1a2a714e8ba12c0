//! The manager's metrics, counted once from its job records and nodes
//! ([`Snapshot`]) and shown two ways: JSON (`GET /metrics.json`) and the
//! Prometheus text exposition format, version 0.0.4 (`GET /metrics`).
//!
//! The text is written here rather than through a client library: every
//! value is recomputed from the manager's records at each scrape (nothing is
//! instrumented in place), so a registry of live counters would only be
//! filled and emptied again; the format is a few fixed line shapes.

use crate::manager::Manager;
use crate::view::JobState;
use pliant_core::{Micros, Resources};
use pliant_live::swap_meter::{RateShown, SwapShown};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Upper bounds (seconds) of the queue-wait histogram's buckets.
pub const WAIT_BUCKETS_S: [f64; 11] = [0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0];

const STATES: [(JobState, &str); 5] = [
    (JobState::Pending, "pending"),
    (JobState::Running, "running"),
    (JobState::Finished, "finished"),
    (JobState::Failed, "failed"),
    (JobState::Cancelled, "cancelled"),
];

/// A job state's name, as the API spells it.
pub fn state_name(state: JobState) -> &'static str {
    STATES.iter().find(|(s, _)| *s == state).map_or("?", |(_, n)| n)
}

/// One node's size and use.
#[derive(Debug, Clone, Serialize)]
pub struct NodeUse {
    /// Its name.
    pub name: String,
    /// What it offers.
    pub capacity: Resources,
    /// What its tasks hold.
    pub allocated: Resources,
    /// True while its agent is declared lost.
    pub lost: bool,
    /// The swap rates the planner prices its shrinks there at.
    pub swap: SwapShown,
}

/// Everything the metrics show, at one instant.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Jobs by state (every state present, zeros included).
    pub jobs: BTreeMap<&'static str, u32>,
    /// Task starts, restarts and restores.
    pub task_launches: u32,
    /// Preemptions by mechanism.
    pub preemptions: BTreeMap<String, u32>,
    /// Memory preempted tasks' limits gave back, MB (booked as free).
    pub reclaimed_mb: u64,
    /// Memory preempted tasks' cgroups really gave back (their usage drop), MB.
    pub freed_mb: u64,
    /// Time the kernel took to reclaim it, ms.
    pub reclaim_ms: u64,
    /// Each started job's wait (submission to first start), by queue.
    pub waits: BTreeMap<&'static str, Vec<Micros>>,
    /// Scheduling steps in the journal.
    pub journal_steps: u64,
    /// The nodes.
    pub nodes: Vec<NodeUse>,
}

impl Snapshot {
    /// Counts what `m` knows now.
    pub fn of(m: &Manager) -> Snapshot {
        let mut s = Snapshot { journal_steps: m.journal_steps().unwrap_or(0), ..Snapshot::default() };
        for (_, name) in STATES {
            s.jobs.insert(name, 0);
        }
        for j in m.jobs() {
            *s.jobs.entry(state_name(j.state)).or_default() += 1;
            if let Some(start) = j.first_start_us {
                s.waits.entry(j.spec.queue.name()).or_default().push(start - j.submit_us);
            }
            for t in &j.tasks {
                for (k, n) in &t.preemptions {
                    *s.preemptions.entry(k.clone()).or_default() += n;
                }
                s.reclaimed_mb += t.reclaimed_mb;
                s.freed_mb += t.freed_mb;
                s.reclaim_ms += t.reclaim_ms;
                s.task_launches += t.launches;
            }
        }
        s.nodes = m
            .config()
            .nodes
            .iter()
            .zip(m.allocations())
            .zip(m.lost_nodes())
            .zip(m.swap_rates())
            .map(|(((n, allocated), &lost), swap)| NodeUse {
                name: n.name.clone(),
                capacity: n.capacity,
                allocated,
                lost,
                swap,
            })
            .collect();
        s
    }

    /// The JSON form: job counts of the states that occur, waits as count, mean and max per queue.
    pub fn json(&self) -> Value {
        let jobs: BTreeMap<_, _> = self.jobs.iter().filter(|(_, &n)| n > 0).collect();
        let wait: BTreeMap<_, _> = self
            .waits
            .iter()
            .map(|(queue, w)| {
                let mean_us = w.iter().sum::<Micros>() / w.len() as Micros;
                let max_us = w.iter().copied().max().unwrap_or(0);
                (queue, json!({ "started": w.len(), "mean_us": mean_us, "max_us": max_us }))
            })
            .collect();
        json!({
            "jobs": jobs,
            "task_launches": self.task_launches,
            "preemptions": self.preemptions,
            "reclaimed_mb": self.reclaimed_mb,
            "freed_mb": self.freed_mb,
            "reclaim_ms": self.reclaim_ms,
            "wait": wait,
            "journal_steps": self.journal_steps,
            "nodes": self.nodes,
        })
    }

    /// The Prometheus text form (base units: seconds, bytes, cores).
    pub fn prometheus(&self) -> String {
        let mut t = Text::default();
        t.family("pliant_jobs", "gauge", "Jobs by state.");
        for (state, n) in &self.jobs {
            t.sample("pliant_jobs", &[("state", state)], *n as f64);
        }
        t.family("pliant_task_launches_total", "counter", "Task starts, restarts and restores.");
        t.sample("pliant_task_launches_total", &[], self.task_launches as f64);
        t.family("pliant_preemptions_total", "counter", "Preemptions by mechanism.");
        for (mechanism, n) in &self.preemptions {
            t.sample("pliant_preemptions_total", &[("mechanism", mechanism)], *n as f64);
        }
        t.family(
            "pliant_reclaimed_bytes_total",
            "counter",
            "Memory preempted tasks gave back: the drop of their cgroups' usage.",
        );
        t.sample("pliant_reclaimed_bytes_total", &[], (self.freed_mb << 20) as f64);
        t.family("pliant_reclaim_seconds_total", "counter", "Time the kernel took to reclaim that memory.");
        t.sample("pliant_reclaim_seconds_total", &[], self.reclaim_ms as f64 / 1e3);
        t.family("pliant_journal_steps_total", "counter", "Scheduling steps in the journal.");
        t.sample("pliant_journal_steps_total", &[], self.journal_steps as f64);
        self.wait_histogram(&mut t);
        t.family("pliant_queue_wait_max_seconds", "gauge", "Longest wait from submission to first start, by queue.");
        for (queue, w) in &self.waits {
            let max = w.iter().copied().max().unwrap_or(0);
            t.sample("pliant_queue_wait_max_seconds", &[("queue", queue)], max as f64 / 1e6);
        }
        let per_node: [(&str, &str, NodeValue); 5] = [
            ("pliant_node_capacity_cpu_cores", "CPU a node offers.", |n| n.capacity.cpu_milli as f64 / 1e3),
            ("pliant_node_capacity_memory_bytes", "Memory a node offers.", |n| (n.capacity.mem_mb << 20) as f64),
            ("pliant_node_allocated_cpu_cores", "CPU its tasks hold.", |n| n.allocated.cpu_milli as f64 / 1e3),
            ("pliant_node_allocated_memory_bytes", "Memory its tasks hold.", |n| (n.allocated.mem_mb << 20) as f64),
            ("pliant_node_lost", "1 while a node's agent is declared lost.", |n| u8::from(n.lost) as f64),
        ];
        for (name, help, value) in per_node {
            t.family(name, "gauge", help);
            for n in &self.nodes {
                t.sample(name, &[("node", &n.name)], value(n));
            }
        }
        let rates: [(&str, &str, NodeRate); 2] = [
            (
                "pliant_node_reclaim_seconds_per_gigabyte",
                "Seconds to swap out 1 GB there, as the planner prices shrinks (from: measured, or the policy's default).",
                |n| n.swap.reclaim,
            ),
            (
                "pliant_node_restore_seconds_per_gigabyte",
                "Seconds to read 1 GB back there, as the planner prices shrinks (from: measured, or the policy's default).",
                |n| n.swap.restore,
            ),
        ];
        for (name, help, rate) in rates {
            t.family(name, "gauge", help);
            for n in &self.nodes {
                let r = rate(n);
                t.sample(name, &[("node", &n.name), ("from", r.from)], r.s_per_gb);
            }
        }
        t.0
    }

    fn wait_histogram(&self, t: &mut Text) {
        let name = "pliant_queue_wait_seconds";
        t.family(name, "histogram", "Wait from submission to first start of started jobs, by queue.");
        for (queue, w) in &self.waits {
            let secs: Vec<f64> = w.iter().map(|&us| us as f64 / 1e6).collect();
            for bound in WAIT_BUCKETS_S {
                let below = secs.iter().filter(|&&s| s <= bound).count();
                t.sample(&format!("{name}_bucket"), &[("queue", queue), ("le", &bound.to_string())], below as f64);
            }
            t.sample(&format!("{name}_bucket"), &[("queue", queue), ("le", "+Inf")], secs.len() as f64);
            t.sample(&format!("{name}_sum"), &[("queue", queue)], secs.iter().sum());
            t.sample(&format!("{name}_count"), &[("queue", queue)], secs.len() as f64);
        }
    }
}

/// One per-node value.
type NodeValue = fn(&NodeUse) -> f64;

/// One of a node's swap rates.
type NodeRate = fn(&NodeUse) -> RateShown;

/// Text in the exposition format.
#[derive(Default)]
struct Text(String);

impl Text {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = write!(self.0, "# HELP {name} {help}\n# TYPE {name} {kind}\n");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        self.0 += name;
        if !labels.is_empty() {
            let quoted: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{}\"", escape(v))).collect();
            let _ = write!(self.0, "{{{}}}", quoted.join(","));
        }
        let _ = writeln!(self.0, " {value}");
    }
}

/// A label value with `\`, `"` and line feeds escaped, as the format asks.
fn escape(v: &str) -> String {
    v.replace('\\', r"\\").replace('"', "\\\"").replace('\n', r"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped_and_histograms_accumulate() {
        assert_eq!(escape("a\"b\\c\nd"), r#"a\"b\\c\nd"#);
        let mut s = Snapshot::default();
        s.waits.insert("short", vec![200_000, 3_000_000]);
        let text = s.prometheus();
        // 0.2 s falls in le=0.25 and above; 3 s in le=5 and above.
        assert!(text.contains("pliant_queue_wait_seconds_bucket{queue=\"short\",le=\"0.1\"} 0\n"), "{text}");
        assert!(text.contains("pliant_queue_wait_seconds_bucket{queue=\"short\",le=\"0.25\"} 1\n"), "{text}");
        assert!(text.contains("pliant_queue_wait_seconds_bucket{queue=\"short\",le=\"5\"} 2\n"), "{text}");
        assert!(text.contains("pliant_queue_wait_seconds_bucket{queue=\"short\",le=\"+Inf\"} 2\n"), "{text}");
        assert!(text.contains("pliant_queue_wait_seconds_sum{queue=\"short\"} 3.2\n"), "{text}");
        assert!(text.contains("pliant_queue_wait_max_seconds{queue=\"short\"} 3\n"), "{text}");
    }
}
