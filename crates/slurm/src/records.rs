//! Slurm's view of jobs and nodes: jobs from `squeue`'s compact format
//! ([`SQUEUE_FORMAT`]; 22.05's `--json` ignores the filter options and
//! costs ~3 KB and ~0.3 ms per job of the whole cluster), nodes from `sinfo
//! --json` (read once).

use serde_json::Value;

/// The fields the controller reads of a job, one line per job with `squeue
/// -h -o`: id, state, reason, nodes, CPUs, memory per node, node count, uid,
/// partition, and last the comment (which may itself hold `|`).
pub const SQUEUE_FORMAT: &str = "%i|%T|%r|%N|%C|%m|%D|%U|%P|%k";

/// A job as `squeue` shows it.
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

/// The jobs of `squeue -h -o SQUEUE_FORMAT` output, one per line.
pub fn parse_squeue(text: &str) -> Result<Vec<SlurmJob>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, line)| {
            let bad = |what: &str| format!("squeue line {}: {what}: {line:?}", n + 1);
            let f: Vec<&str> = line.splitn(10, '|').collect();
            if f.len() != 10 {
                return Err(bad("expected 10 `|`-separated fields"));
            }
            let num = |i: usize, what: &str| f[i].trim().parse::<u64>().map_err(|_| bad(what));
            let state = f[1].trim();
            Ok(SlurmJob {
                id: num(0, "a job id that is not a number")?,
                state: state.to_string(),
                reason: f[2].trim().to_string(),
                partition: f[8].trim().to_string(),
                comment: if f[9] == "(null)" { String::new() } else { f[9].to_string() },
                nodes: f[3].trim().to_string(),
                cpus: num(4, "a CPU count that is not a number")?,
                mem_mb: memory_mb(f[5].trim()).ok_or_else(|| bad("a memory size that is not one"))?,
                node_count: num(6, "a node count that is not a number")?,
                user_id: num(7, "a uid that is not a number")? as u32,
            })
        })
        .collect()
}

/// `squeue`'s memory size (`%m`: `700M`, `2G`, `0`) in MB.
fn memory_mb(text: &str) -> Option<u64> {
    let (digits, scale) = match text.char_indices().last()? {
        (i, 'K') => (&text[..i], 1.0 / 1024.0),
        (i, 'M') => (&text[..i], 1.0),
        (i, 'G') => (&text[..i], 1024.0),
        (i, 'T') => (&text[..i], 1024.0 * 1024.0),
        _ => (text, 1.0),
    };
    let value: f64 = digits.parse().ok()?;
    (value >= 0.0).then(|| (value * scale).round() as u64)
}

/// The memory of a `TRES` list (`cpu=1,mem=1000M,node=1`), MB; `None`
/// when it names none.
pub fn tres_mem_mb(tres: &str) -> Option<u64> {
    tres.split(',').find_map(|item| memory_mb(item.strip_prefix("mem=")?))
}

/// The memory of a job as `scontrol show job -o` shows it (the `mem` of
/// its `TRES`), MB; `None` when it names none.
pub fn shown_mem_mb(text: &str) -> Option<u64> {
    text.split_whitespace().find_map(|f| f.strip_prefix("TRES=")).and_then(tres_mem_mb)
}

/// The ids of the jobs of `squeue -h -o %i|%T|%S` output (start times in
/// seconds since 1970) that started at or after `unix_s`, in any state but
/// pending.
pub fn started_at_or_after(text: &str, unix_s: u64) -> Vec<u64> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.trim().split('|');
            let (id, state, start) = (f.next()?.parse().ok()?, f.next()?, f.next()?.parse::<u64>().ok()?);
            (state != "PENDING" && start >= unix_s).then_some(id)
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
    fn compact_lines_read_each_field() {
        let text = "7|PENDING|JobHeldUser||2|600M|1|0|pliant|pliant:short|x\n\
                    8|RUNNING|None|n2|1|1.50G|1|1000|pliant|(null)\n";
        let jobs = parse_squeue(text).unwrap();
        assert_eq!(jobs.len(), 2);
        assert_eq!((jobs[0].id, jobs[0].cpus, jobs[0].mem_mb, jobs[0].is_held()), (7, 2, 600, true));
        assert_eq!(jobs[0].comment, "pliant:short|x");
        assert_eq!((jobs[1].nodes.as_str(), jobs[1].mem_mb, jobs[1].user_id), ("n2", 1536, 1000));
        assert_eq!(jobs[1].comment, "");
        let err = parse_squeue("7|PENDING|x||2|600M|1|0|pliant\n").unwrap_err();
        assert!(err.contains("line 1"), "{err}");
        assert!(parse_squeue("7|PENDING|x||2|lots|1|0|pliant|c\n").is_err());
    }

    #[test]
    fn tres_gives_its_memory() {
        assert_eq!(tres_mem_mb("cpu=1,mem=1000M,node=1,billing=1"), Some(1000));
        assert_eq!(tres_mem_mb("cpu=2,mem=1.50G,node=1"), Some(1536));
        assert_eq!(tres_mem_mb("cpu=1,node=1,billing=1"), None);
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
