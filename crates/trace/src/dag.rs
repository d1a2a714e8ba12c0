//! Alibaba 2018 DAGs from task names: `M1`, `R2_1`, `J3_1_2` — letters, the
//! task's number, then the numbers of the tasks it waits for (`J3_1_2`: task 3
//! depends on tasks 1 and 2). Names that do not follow the pattern
//! (`task_xxx`, `MergeTask`) are independent tasks.

/// A task's number and the numbers it depends on, or `None` for an independent name.
pub fn parse_name(name: &str) -> Option<(u32, Vec<u32>)> {
    let rest = name.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    if rest.len() == name.len() || rest.is_empty() {
        return None;
    }
    let mut nums =
        rest.split('_')
            .map(|p| if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) { p.parse().ok() } else { None });
    let id = nums.next()??;
    let deps: Option<Vec<u32>> = nums.collect();
    Some((id, deps?))
}

/// Orders a job's tasks into phases. `nodes[i]` is task `i`'s parsed name;
/// `kept[i]` says whether it has any task left. Returns the kept tasks in
/// topological order (ties by number, then position) with, for each, the
/// positions *in that order* of the phases it waits for. Dependencies on
/// dropped tasks pass through to their own dependencies; dependencies on
/// numbers absent from the job, and those closing a cycle, are left out.
pub fn order(nodes: &[Option<(u32, Vec<u32>)>], kept: &[bool]) -> Vec<(usize, Vec<u32>)> {
    let n = nodes.len();
    let mut by_id = std::collections::HashMap::new();
    for (i, node) in nodes.iter().enumerate() {
        if let Some((id, _)) = node {
            by_id.entry(*id).or_insert(i);
        }
    }
    let direct: Vec<Vec<usize>> = nodes
        .iter()
        .enumerate()
        .map(|(i, node)| match node {
            Some((id, deps)) if by_id.get(id) == Some(&i) => {
                let mut d: Vec<usize> = deps.iter().filter_map(|x| by_id.get(x).copied()).filter(|&j| j != i).collect();
                d.sort_unstable();
                d.dedup();
                d
            }
            _ => Vec::new(),
        })
        .collect();
    // Effective dependencies: through dropped tasks to kept ones.
    let effective: Vec<Vec<usize>> = (0..n)
        .map(|i| {
            let mut out = Vec::new();
            let mut seen = vec![false; n];
            let mut stack = direct[i].clone();
            while let Some(j) = stack.pop() {
                if std::mem::replace(&mut seen[j], true) || j == i {
                    continue;
                }
                if kept[j] {
                    out.push(j);
                } else {
                    stack.extend(&direct[j]);
                }
            }
            out
        })
        .collect();
    let key = |i: usize| (nodes[i].as_ref().map_or(u32::MAX, |(id, _)| *id), i);
    let mut pending: Vec<usize> = (0..n).filter(|&i| kept[i]).collect();
    pending.sort_by_key(|&i| key(i));
    let mut phase_of = vec![None; n];
    let mut out: Vec<(usize, Vec<u32>)> = Vec::new();
    while !pending.is_empty() {
        let ready = pending.iter().position(|&i| effective[i].iter().all(|&j| phase_of[j].is_some()));
        // A cycle: take the first pending task anyway and drop its unmet dependencies.
        let pick = pending.remove(ready.unwrap_or(0));
        let deps: Vec<u32> = effective[pick].iter().filter_map(|&j| phase_of[j]).collect();
        phase_of[pick] = Some(out.len() as u32);
        out.push((pick, deps));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_v2018_pattern() {
        assert_eq!(parse_name("M1"), Some((1, vec![])));
        assert_eq!(parse_name("R2_1"), Some((2, vec![1])));
        assert_eq!(parse_name("J3_1_2"), Some((3, vec![1, 2])));
        assert_eq!(parse_name("task_Nzg3ODAwNDgzMTAwNTc2NTQ2Mw=="), None);
        assert_eq!(parse_name("MergeTask"), None);
        assert_eq!(parse_name("M"), None);
        assert_eq!(parse_name("R2_"), None);
        assert_eq!(parse_name("7_1"), None);
    }

    #[test]
    fn order_is_topological_and_skips_dropped_tasks() {
        // Given in the order R3_2, M1, R2_1, task_x; R2_1 is dropped, so R3 waits for M1 directly.
        let nodes = vec![parse_name("R3_2"), parse_name("M1"), parse_name("R2_1"), parse_name("task_x")];
        let kept = [true, true, false, true];
        // Order: M1 (id 1), R3 (needs M1), then the independent task last (no number).
        assert_eq!(order(&nodes, &kept), vec![(1, vec![]), (0, vec![0]), (3, vec![])]);
    }

    #[test]
    fn cycles_and_missing_numbers_do_not_stop_the_order() {
        // M1_2 and M2_1 wait for each other; J3_9 waits for a task that is not there.
        let nodes = vec![parse_name("M1_2"), parse_name("M2_1"), parse_name("J3_9")];
        let kept = [true; 3];
        // J3 is ready at once (task 9 is absent). Then neither M is ready, so M1 goes
        // without its dependency (phase 1), and M2 waits for it.
        assert_eq!(order(&nodes, &kept), vec![(2, vec![]), (0, vec![]), (1, vec![1])]);
    }
}
