//! pliant on a real two-node Slurm 22.05 cluster (`common::slurm`).

mod common;

use common::slurm::{is_over, Arrangement, SlurmCluster};
use std::time::Duration;

/// The harness gives two real nodes: a job bound to each runs there, under
/// that node's hostname, in that node's cgroups.
#[test]
fn test_cluster_has_two_nodes() {
    let Some(cluster) = SlurmCluster::start("slurm two-node cluster", Arrangement::Pliant) else { return };
    let out = cluster.jobs_dir();
    let ids: Vec<u64> = cluster
        .nodes
        .iter()
        .map(|node| {
            let file = format!("{}/host-{node}.out", out.display());
            cluster.sbatch(&["-w", node, "-o", &file, "--wrap", "hostname; cat /proc/self/cgroup"])
        })
        .collect();
    cluster.wait_until("both jobs to end", Duration::from_secs(30), |c| {
        ids.iter().all(|id| c.job(*id)["job_state"].as_str().is_some_and(is_over))
    });
    for (node, id) in cluster.nodes.iter().zip(&ids) {
        assert_eq!(cluster.job(*id)["job_state"], "COMPLETED");
        let text = std::fs::read_to_string(out.join(format!("host-{node}.out"))).unwrap();
        assert_eq!(text.lines().next(), Some(node.as_str()), "{text}");
        assert!(text.contains(&format!("/slurm_{node}/uid_0/job_{id}/")), "{text}");
    }
}
