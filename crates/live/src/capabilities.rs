//! What this node can do: which preemption mechanisms work here, and what a
//! mechanism that cannot work degrades to. The manager plans only the
//! mechanisms a node reports.

use crate::cgroup::{Cgroup, Controllers, Version};
use pliant_core::MechanismKind;
use std::io;

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
    pub fn supports(&self, m: MechanismKind) -> bool {
        let c = self.controllers;
        let swap = self.swap_bytes > 0;
        match m {
            MechanismKind::Kill | MechanismKind::Suspend | MechanismKind::Checkpoint => true,
            MechanismKind::Immediate => c.memory && swap && (c.cpu || c.freezer),
            MechanismKind::Graceful => c.memory && c.cpu && swap,
        }
    }

    /// The mechanisms that work here as themselves.
    pub fn mechanisms(&self) -> Vec<MechanismKind> {
        MechanismKind::ALL.into_iter().filter(|&m| self.supports(m)).collect()
    }

    /// What the node does when asked for `m`: `m` itself, or — for immediate
    /// and graceful preemption without swap or the memory controller —
    /// freeze-in-place, with the reason.
    pub fn effective(&self, m: MechanismKind) -> (MechanismKind, Option<String>) {
        if self.supports(m) {
            return (m, None);
        }
        let missing = match (self.controllers.memory, self.swap_bytes > 0, self.controllers.cpu) {
            (false, _, _) => "no memory controller",
            (true, false, _) => "no swap",
            (true, true, _) => "no cpu controller",
        };
        (MechanismKind::Suspend, Some(format!("{missing}: {} preemption degrades to freeze-in-place", m.name())))
    }

    /// One line per degraded mechanism, for the agent to report at start.
    pub fn notes(&self) -> Vec<String> {
        MechanismKind::ALL.into_iter().filter_map(|m| self.effective(m).1).collect()
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
        assert_eq!(c.mechanisms(), vec![MechanismKind::Kill, MechanismKind::Suspend, MechanismKind::Checkpoint]);
        let (m, note) = c.effective(MechanismKind::Immediate);
        assert_eq!(m, MechanismKind::Suspend);
        assert_eq!(note.as_deref(), Some("no swap: immediate preemption degrades to freeze-in-place"));
        assert_eq!(c.notes().len(), 2);
    }

    #[test]
    fn with_swap_and_controllers_everything_works() {
        let c = caps(true, true, 1 << 30);
        assert_eq!(c.mechanisms(), MechanismKind::ALL.to_vec());
        assert!(c.notes().is_empty());
        let no_cpu = caps(true, false, 1 << 30);
        assert!(no_cpu.supports(MechanismKind::Immediate), "the freezer stands in for the CPU quota");
        assert_eq!(no_cpu.effective(MechanismKind::Graceful).0, MechanismKind::Suspend);
        assert_eq!(
            caps(false, true, 1 << 30).effective(MechanismKind::Immediate).1.unwrap(),
            "no memory controller: immediate preemption degrades to freeze-in-place"
        );
    }
}
