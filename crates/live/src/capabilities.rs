//! What this node can do: which preemption mechanisms work here, and what a
//! mechanism that cannot work degrades to. The manager plans only the
//! mechanisms a node reports.

use crate::cgroup::{Cgroup, Controllers, Version};
use std::io;

/// A preemption mechanism as a node carries it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeMechanism {
    /// Kill the whole process tree; the task is requeued and restarts.
    Kill,
    /// Freeze in place (freezer, or SIGSTOP without one); memory is kept (Slurm-style).
    Suspend,
    /// BIG-C immediate preemption: CPU to 1 % and freeze, then memory limit to the footprint.
    Immediate,
    /// BIG-C graceful preemption: step CPU quota and memory limit down, freeze when swapping.
    Graceful,
    /// Cooperative checkpoint: signal the task, it writes its state and exits.
    Checkpoint,
}

impl NodeMechanism {
    /// Every mechanism.
    pub const ALL: [NodeMechanism; 5] = [
        NodeMechanism::Kill,
        NodeMechanism::Suspend,
        NodeMechanism::Immediate,
        NodeMechanism::Graceful,
        NodeMechanism::Checkpoint,
    ];

    /// The name used in reports and the API.
    pub fn name(self) -> &'static str {
        match self {
            NodeMechanism::Kill => "kill",
            NodeMechanism::Suspend => "suspend",
            NodeMechanism::Immediate => "immediate",
            NodeMechanism::Graceful => "graceful",
            NodeMechanism::Checkpoint => "checkpoint",
        }
    }
}

/// What the node's kernel and configuration offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// The cgroup version tasks run under.
    pub cgroup: Version,
    /// The controllers task cgroups get.
    pub controllers: Controllers,
    /// Swap space in bytes.
    pub swap_bytes: u64,
}

impl Capabilities {
    /// Looks at the machine: the controllers task cgroups under `top` get, and the swap space.
    pub fn detect(top: &Cgroup) -> io::Result<Capabilities> {
        Ok(Capabilities {
            cgroup: top.version(),
            controllers: top.controllers(),
            swap_bytes: crate::swap::total_bytes()?,
        })
    }

    /// True when `m` works here as itself.
    pub fn supports(&self, m: NodeMechanism) -> bool {
        let c = self.controllers;
        let swap = self.swap_bytes > 0;
        match m {
            NodeMechanism::Kill | NodeMechanism::Suspend | NodeMechanism::Checkpoint => true,
            NodeMechanism::Immediate => c.memory && swap && (c.cpu || c.freezer),
            NodeMechanism::Graceful => c.memory && c.cpu && swap,
        }
    }

    /// The mechanisms that work here as themselves.
    pub fn mechanisms(&self) -> Vec<NodeMechanism> {
        NodeMechanism::ALL.into_iter().filter(|&m| self.supports(m)).collect()
    }

    /// What the node does when asked for `m`: `m` itself, or — for immediate
    /// and graceful preemption without swap or the memory controller —
    /// freeze-in-place, with the reason.
    pub fn effective(&self, m: NodeMechanism) -> (NodeMechanism, Option<String>) {
        if self.supports(m) {
            return (m, None);
        }
        let missing = match (self.controllers.memory, self.swap_bytes > 0, self.controllers.cpu) {
            (false, _, _) => "no memory controller",
            (true, false, _) => "no swap",
            (true, true, _) => "no cpu controller",
        };
        (NodeMechanism::Suspend, Some(format!("{missing}: {} preemption degrades to freeze-in-place", m.name())))
    }

    /// One line per degraded mechanism, for the agent to report at start.
    pub fn notes(&self) -> Vec<String> {
        NodeMechanism::ALL.into_iter().filter_map(|m| self.effective(m).1).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(memory: bool, cpu: bool, swap_bytes: u64) -> Capabilities {
        Capabilities {
            cgroup: Version::V1,
            controllers: Controllers { cpu, memory, freezer: true, pids: true },
            swap_bytes,
        }
    }

    #[test]
    fn without_swap_ip_and_gp_degrade_to_freeze_in_place() {
        let c = caps(true, true, 0);
        assert_eq!(c.mechanisms(), vec![NodeMechanism::Kill, NodeMechanism::Suspend, NodeMechanism::Checkpoint]);
        let (m, note) = c.effective(NodeMechanism::Immediate);
        assert_eq!(m, NodeMechanism::Suspend);
        assert_eq!(note.as_deref(), Some("no swap: immediate preemption degrades to freeze-in-place"));
        assert_eq!(c.notes().len(), 2);
    }

    #[test]
    fn with_swap_and_controllers_everything_works() {
        let c = caps(true, true, 1 << 30);
        assert_eq!(c.mechanisms(), NodeMechanism::ALL.to_vec());
        assert!(c.notes().is_empty());
        let no_cpu = caps(true, false, 1 << 30);
        assert!(no_cpu.supports(NodeMechanism::Immediate), "the freezer stands in for the CPU quota");
        assert_eq!(no_cpu.effective(NodeMechanism::Graceful).0, NodeMechanism::Suspend);
        assert_eq!(
            caps(false, true, 1 << 30).effective(NodeMechanism::Immediate).1.unwrap(),
            "no memory controller: immediate preemption degrades to freeze-in-place"
        );
    }
}
