//! YARN-ME §2.6: under-sized tasks that spill share their node's disk.
//!
//! A spilling task (the §2.3 reducer model, T(m) = T + spilledBytes(m) /
//! diskRate) runs its T of work and its spill interleaved: each µs of work
//! moves `spilled / T` MB through the disk. Alone, at its own rate r (work
//! per µs, `TaskExec::own_rate` without this cap), it asks r × spilled / T
//! MB/µs of the disk: its spilled volume over its solo run time, the figure
//! the core books against its disk budget. When the spilling tasks on a
//! node ask more than the node's disk gives, the disk is shared max-min
//! fairly (water-filling): tasks asking less than an equal share get what
//! they ask, the others an equal share of the rest, and each of those runs
//! only as fast as its share lets it spill. So n equal tasks spilling X MB
//! each on a disk of R MB/s that cannot keep them all going end together at
//! n·X / R: the disk, not their work, bounds them.
//!
//! Only tasks with spill volume take part: a step or max-penalty profile
//! models no volume, so its tasks never touch this. The core never reads
//! any of it; it books disk bandwidth from its own estimates.

/// Per node, the tasks spilling there, and the disk they share.
#[derive(Debug, Clone)]
pub(crate) struct DiskShare {
    /// Each node's disk bandwidth for spills, MB per µs.
    bandwidth: f64,
    /// Per node, its spilling tasks as (job, task).
    spilling: Vec<Vec<(u32, u32)>>,
}

impl DiskShare {
    /// Nodes with `mb_s` MB/s of disk bandwidth each.
    pub fn new(nodes: usize, mb_s: f64) -> Self {
        DiskShare { bandwidth: mb_s / 1e6, spilling: vec![Vec::new(); nodes] }
    }

    /// A spilling task started on `node`.
    pub fn start(&mut self, node: u32, job: u32, task: u32) {
        self.spilling[node as usize].push((job, task));
    }

    /// A task stopped on `node`; true if it was spilling there.
    pub fn stop(&mut self, node: u32, job: u32, task: u32) -> bool {
        let on = &mut self.spilling[node as usize];
        let before = on.len();
        on.retain(|&t| t != (job, task));
        on.len() != before
    }

    /// Whether the task is spilling on `node`.
    pub fn spills(&self, node: u32, job: u32, task: u32) -> bool {
        self.spilling[node as usize].contains(&(job, task))
    }

    /// The tasks spilling on `node`.
    pub fn on(&self, node: u32) -> &[(u32, u32)] {
        &self.spilling[node as usize]
    }

    /// Each node's disk bandwidth, MB per µs.
    pub fn bandwidth(&self) -> f64 {
        self.bandwidth
    }
}

/// Max-min fair shares of a disk of `bandwidth` among tasks asking
/// `demands` (same unit): `None` for a task served all it asks, else the
/// share it gets. Nobody is held back while the demands fit.
pub(crate) fn shares(bandwidth: f64, demands: &[f64]) -> Vec<Option<f64>> {
    let mut out = vec![None; demands.len()];
    if demands.iter().sum::<f64>() <= bandwidth {
        return out;
    }
    let mut by_demand: Vec<usize> = (0..demands.len()).collect();
    by_demand.sort_by(|&a, &b| demands[a].total_cmp(&demands[b]).then(a.cmp(&b)));
    let mut left = bandwidth;
    for (served, &i) in by_demand.iter().enumerate() {
        let level = left / (demands.len() - served) as f64;
        if demands[i] <= level {
            left -= demands[i];
            continue;
        }
        for &j in &by_demand[served..] {
            out[j] = Some(level);
        }
        break;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demands_that_fit_are_served_in_full() {
        assert_eq!(shares(100.0, &[41.0, 41.0]), vec![None, None]);
        assert_eq!(shares(100.0, &[]), vec![]);
    }

    #[test]
    fn the_disk_is_water_filled() {
        // 90 shared by 10, 50, 60: 10 is under a third (30) and is served;
        // 80 is left for the other two, 40 each, below what both ask.
        assert_eq!(shares(90.0, &[50.0, 10.0, 60.0]), vec![Some(40.0), None, Some(40.0)]);
        // Two equal tasks asking 41 of 50: 25 each.
        assert_eq!(shares(50.0, &[41.0, 41.0]), vec![Some(25.0), Some(25.0)]);
    }

    #[test]
    fn nodes_keep_their_own_spilling_tasks() {
        let mut d = DiskShare::new(2, 50.0);
        d.start(1, 0, 3);
        d.start(1, 2, 0);
        assert!(d.spills(1, 0, 3) && !d.spills(0, 0, 3));
        assert!(d.stop(1, 0, 3));
        assert!(!d.stop(1, 0, 3));
        assert_eq!(d.on(1), &[(2, 0)]);
        assert_eq!(d.bandwidth(), 50e-6);
    }
}
