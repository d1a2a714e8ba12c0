//! Slurm's view of jobs and nodes, read from `squeue --json` and `sinfo
//! --json` (openapi v0.0.38 in 22.05, whose tools ignore their filter
//! options with `--json`: callers filter here).

use serde_json::Value;

/// A job as `squeue --json` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlurmJob {
    /// Slurm's job id.
    pub id: u64,
    /// `PENDING`, `RUNNING`, `SUSPENDED`, `COMPLETING`, `COMPLETED`, `CANCELLED`, …
    pub state: String,
    /// Why it pends (`JobHeldUser`, `Resources`, …).
    pub reason: String,
    /// Its partition.
    pub partition: String,
    /// `--comment`, where pliant's options go.
    pub comment: String,
    /// The nodes it runs on (empty while pending).
    pub nodes: String,
    /// CPUs asked for (all nodes).
    pub cpus: u64,
    /// Memory asked for per node, MB (0: none given).
    pub mem_mb: u64,
    /// Nodes asked for.
    pub node_count: u64,
    /// The owner's uid (the job cgroup's `uid_<uid>` level).
    pub user_id: u32,
}

impl SlurmJob {
    /// True when the job is held (it will not start until released).
    pub fn is_held(&self) -> bool {
        self.state == "PENDING" && matches!(self.reason.as_str(), "JobHeldUser" | "JobHeldAdmin")
    }

    /// True once the job will not run again (unless requeued).
    pub fn is_over(&self) -> bool {
        is_over(&self.state)
    }
}

/// True for a Slurm job state that will not change by itself.
pub fn is_over(state: &str) -> bool {
    matches!(
        state,
        "COMPLETED" | "CANCELLED" | "FAILED" | "TIMEOUT" | "NODE_FAIL" | "OUT_OF_MEMORY" | "BOOT_FAIL" | "DEADLINE"
    )
}

/// A node as `sinfo --json` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlurmNode {
    /// `NodeName`.
    pub name: String,
    /// CPUs.
    pub cpus: u64,
    /// `RealMemory`, MB.
    pub real_memory_mb: u64,
    /// The partitions it is in.
    pub partitions: Vec<String>,
}

/// The jobs of a `squeue --json` document.
pub fn parse_jobs(json: &str) -> Result<Vec<SlurmJob>, String> {
    let doc: Value = serde_json::from_str(json).map_err(|e| format!("squeue --json: {e}"))?;
    let jobs = doc["jobs"].as_array().ok_or("squeue --json: no `jobs` array")?;
    jobs.iter()
        .map(|j| {
            let num = |k: &str| j[k].as_u64().unwrap_or(0);
            let text = |k: &str| j[k].as_str().unwrap_or("").to_string();
            let cpus = num("cpus");
            let per_node = num("memory_per_node");
            let mem_mb = if per_node > 0 { per_node } else { num("memory_per_cpu") * cpus };
            Ok(SlurmJob {
                id: j["job_id"].as_u64().ok_or("squeue --json: a job without job_id")?,
                state: text("job_state"),
                reason: text("state_reason"),
                partition: text("partition"),
                comment: text("comment"),
                nodes: text("nodes"),
                cpus,
                mem_mb,
                node_count: num("node_count"),
                user_id: num("user_id") as u32,
            })
        })
        .collect()
}

/// The nodes of an `sinfo --json` document.
pub fn parse_nodes(json: &str) -> Result<Vec<SlurmNode>, String> {
    let doc: Value = serde_json::from_str(json).map_err(|e| format!("sinfo --json: {e}"))?;
    let nodes = doc["nodes"].as_array().ok_or("sinfo --json: no `nodes` array")?;
    Ok(nodes
        .iter()
        .map(|n| SlurmNode {
            name: n["name"].as_str().unwrap_or("").to_string(),
            cpus: n["cpus"].as_u64().unwrap_or(0),
            real_memory_mb: n["real_memory"].as_u64().unwrap_or(0),
            partitions: n["partitions"]
                .as_array()
                .map(|a| a.iter().filter_map(|p| p.as_str().map(String::from)).collect())
                .unwrap_or_default(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_read_their_memory_per_node_or_per_cpu() {
        let doc = r#"{"jobs":[
            {"job_id":7,"job_state":"PENDING","state_reason":"JobHeldUser","partition":"pliant",
             "comment":"pliant:short","nodes":"","cpus":2,"memory_per_node":600,"node_count":1,"user_id":0},
            {"job_id":8,"job_state":"RUNNING","state_reason":"None","partition":"other",
             "nodes":"n2","cpus":2,"memory_per_cpu":100,"node_count":1,"user_id":1000}]}"#;
        let jobs = parse_jobs(doc).unwrap();
        assert_eq!(jobs[0].mem_mb, 600);
        assert!(jobs[0].is_held());
        assert_eq!(jobs[0].comment, "pliant:short");
        assert_eq!((jobs[1].mem_mb, jobs[1].user_id, jobs[1].is_held()), (200, 1000, false));
        assert!(parse_jobs(r#"{"jobs":[{"job_state":"RUNNING"}]}"#).is_err());
    }

    #[test]
    fn nodes_carry_their_partitions() {
        let doc = r#"{"nodes":[{"name":"n1","cpus":2,"real_memory":1000,"partitions":["pliant","debug"]}]}"#;
        let nodes = parse_nodes(doc).unwrap();
        assert_eq!(
            nodes,
            vec![SlurmNode {
                name: "n1".into(),
                cpus: 2,
                real_memory_mb: 1000,
                partitions: vec!["pliant".into(), "debug".into()]
            }]
        );
    }
}
