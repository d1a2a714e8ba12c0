//! pliant's native workload format: JSON Lines. The first non-blank line
//! describes the cluster, every other line one job. Identical tasks are
//! grouped with `count`. Times are in seconds, CPU in cores, memory in MB.
//! Blank lines and lines starting with `#` are ignored.
//!
//! ```text
//! {"cluster":{"nodes":[{"count":26,"cpu":32,"mem_mb":131072}]}}
//! {"job":{"name":"q1","submit_s":12.5,"class":"short","priority":9,
//!   "phases":[{"tasks":[{"count":3,"cpu":4,"mem_mb":4096,"duration_s":20}]}]}}
//! ```
//! (each record on one line). The cluster record may name the YARN
//! ApplicationMaster container every job runs, `"am":{"cpu":1,"mem_mb":1000}`
//! (default none). Phase fields: `after` (indices of upstream
//! phases, default none), `coupled` (default false), `local` (default false: the
//! phase reads its upstream phases' output where they ran, see `PhaseRequest::local`). Task fields: `count`
//! (default 1), `cpu`, `mem_mb`, `duration_s` (true run time at full
//! allocation), `estimate_s` (the owner's estimate, optional). Job field
//! `elastic` (optional, YARN-ME memory elasticity): `penalty` (the estimated
//! slowdown under-sized, ≥ 1), `model` (optional: `"step"`, the default, any
//! under-sized run costs `penalty`; `"reducer"`, §2.3's saw-tooth with
//! `penalty` its maximum), `min_mem_mb` (optional floor, at most every
//! task's `mem_mb`), `true_penalty` and `true_ideal_scale` (the ground truth,
//! default: the estimate and 1).
//!
//! A Spark pool phase has `executors` (one group of identical containers,
//! `duration_s` optional) and `stage_tasks` (stages in order, each
//! `{"count":N,"duration_s":D}`: N tasks of D seconds on one core) instead of
//! `tasks`; it is coupled. An executor's `duration_s` defaults to the phase's
//! span with every core busy, Σ N × D / (executors × cores), the run time the
//! lockstep model (`spark_model=lockstep`) gives each executor.
//!
//! This module reads and writes streams; opening files is the caller's job.

use crate::model::{Cluster, Job, JobElasticity, Phase, StageTasks, Task, Workload};
use pliant_core::model::JobClass;
use pliant_core::model::{Elasticity, ElasticityProfile};
use pliant_core::time::{from_secs_f64, to_secs_f64};
use pliant_core::Resources;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};

/// Largest `count` accepted in one group, so a typo cannot exhaust memory.
const MAX_COUNT: u32 = 10_000_000;

/// A problem at one line of a workload stream.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct FormatError {
    /// 1-based line number (0 when the problem concerns the whole stream).
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

fn one() -> u32 {
    1
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeGroup {
    #[serde(default = "one")]
    count: u32,
    cpu: f64,
    mem_mb: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClusterRecord {
    nodes: Vec<NodeGroup>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    am: Option<AmRecord>,
}

/// The ApplicationMaster container every job runs (YARN's).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AmRecord {
    cpu: f64,
    mem_mb: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskGroup {
    #[serde(default = "one")]
    count: u32,
    cpu: f64,
    mem_mb: u64,
    duration_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    estimate_s: Option<f64>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExecutorGroup {
    count: u32,
    cpu: f64,
    mem_mb: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    duration_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    estimate_s: Option<f64>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StageGroup {
    count: u32,
    duration_s: f64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PhaseRecord {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    after: Vec<u32>,
    #[serde(default, skip_serializing_if = "is_false")]
    coupled: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    local: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tasks: Vec<TaskGroup>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    executors: Option<ExecutorGroup>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    stage_tasks: Vec<StageGroup>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct JobRecord {
    #[serde(default)]
    name: Option<String>,
    submit_s: f64,
    class: JobClass,
    #[serde(default)]
    priority: u8,
    phases: Vec<PhaseRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    elastic: Option<ElasticRecord>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ElasticRecord {
    penalty: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    min_mem_mb: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    true_penalty: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    true_ideal_scale: Option<f64>,
}

/// Checks a job's elasticity against its tasks.
fn elastic_from(rec: ElasticRecord, phases: &[Phase]) -> Result<JobElasticity, String> {
    let profile: fn(f64) -> ElasticityProfile = match rec.model.as_deref() {
        None | Some("step") => ElasticityProfile::max_penalty,
        Some("reducer") => ElasticityProfile::reducer_max_penalty,
        Some(other) => return Err(format!("elastic: model must be \"step\" or \"reducer\", got \"{other}\"")),
    };
    let estimate = Elasticity { profile: profile(rec.penalty), min_mem_mb: rec.min_mem_mb };
    for t in phases.iter().flat_map(|p| &p.tasks) {
        estimate.check(t.request.mem_mb).map_err(|e| format!("elastic: {e}"))?;
    }
    let truth = profile(rec.true_penalty.unwrap_or(rec.penalty));
    truth.check().map_err(|e| format!("elastic: true_{e}"))?;
    let true_ideal_scale = rec.true_ideal_scale.unwrap_or(1.0);
    if !(true_ideal_scale > 0.0 && true_ideal_scale.is_finite()) {
        return Err(format!("elastic: true_ideal_scale must be positive, got {true_ideal_scale}"));
    }
    Ok(JobElasticity { estimate, truth, true_ideal_scale })
}

/// The record of a job's elasticity (step or reducer max-penalty profiles only).
fn elastic_record(e: &JobElasticity) -> Option<ElasticRecord> {
    let model = match (e.estimate.profile, e.truth) {
        (ElasticityProfile::Step { .. }, ElasticityProfile::Step { .. }) => None,
        (ElasticityProfile::Sawtooth { .. }, ElasticityProfile::Sawtooth { .. }) => Some("reducer".to_string()),
        _ => return None,
    };
    let (penalty, truth) = (e.estimate.profile.max_penalty_of()?, e.truth.max_penalty_of()?);
    Some(ElasticRecord {
        penalty,
        model,
        min_mem_mb: e.estimate.min_mem_mb,
        true_penalty: (truth != penalty).then_some(truth),
        true_ideal_scale: (e.true_ideal_scale != 1.0).then_some(e.true_ideal_scale),
    })
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Record {
    Cluster(ClusterRecord),
    Job(JobRecord),
}

fn cores_to_milli(cpu: f64) -> Result<u64, String> {
    if (0.001..=1e6).contains(&cpu) {
        Ok((cpu * 1000.0).round() as u64)
    } else {
        Err(format!("cpu must be between 0.001 and 1000000 cores, got {cpu}"))
    }
}

fn seconds(value: f64, what: &str, positive: bool) -> Result<u64, String> {
    let ok = (0.0..1e12).contains(&value) && (!positive || value > 0.0);
    if ok {
        Ok(from_secs_f64(value))
    } else {
        let bound = if positive { "a positive" } else { "a non-negative" };
        Err(format!("{what} must be {bound} number of seconds, got {value}"))
    }
}

fn check_count(count: u32) -> Result<usize, String> {
    if count == 0 || count > MAX_COUNT {
        Err(format!("count must be between 1 and {MAX_COUNT}, got {count}"))
    } else {
        Ok(count as usize)
    }
}

fn cluster_from(rec: ClusterRecord) -> Result<Cluster, String> {
    let mut nodes = Vec::new();
    for g in rec.nodes {
        let n = check_count(g.count)?;
        let r = Resources::new(cores_to_milli(g.cpu)?, g.mem_mb);
        nodes.extend(std::iter::repeat_n(r, n));
    }
    let am = match rec.am {
        Some(a) if a.mem_mb == 0 => return Err("am: mem_mb must be at least 1 (leave `am` out for none)".into()),
        Some(a) => Some(Resources::new(cores_to_milli(a.cpu).map_err(|e| format!("am: {e}"))?, a.mem_mb)),
        None => None,
    };
    Ok(Cluster { nodes, am })
}

/// serde_json's message with its position as a column of the line (its own
/// "at line 1" counts lines of one record, not of the file).
fn json_reason(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => format!("{} (column {})", &text[..i], e.column()),
        None => text,
    }
}

/// A pool phase: `executors` and `stage_tasks`, no `tasks`.
fn pool_phase_from(p: PhaseRecord) -> Result<Phase, String> {
    let (Some(e), false, true) = (p.executors, p.stage_tasks.is_empty(), p.tasks.is_empty()) else {
        return Err("a pool phase needs `executors` and `stage_tasks`, and no `tasks`".into());
    };
    let executors = check_count(e.count)?;
    let mut stages = Vec::with_capacity(p.stage_tasks.len());
    for s in p.stage_tasks {
        check_count(s.count)?;
        stages.push(StageTasks { count: s.count, duration: seconds(s.duration_s, "stage duration_s", true)? });
    }
    let mut exec = Task {
        request: Resources::new(cores_to_milli(e.cpu)?, e.mem_mb),
        duration: 0,
        estimate: e.estimate_s.map(|x| seconds(x, "estimate_s", false)).transpose()?,
    };
    exec.duration = match e.duration_s {
        Some(d) => seconds(d, "duration_s", true)?,
        None => {
            let work: f64 = stages.iter().map(|s| s.count as f64 * s.duration as f64).sum();
            (work / (executors as f64 * exec.slots() as f64)).ceil() as u64
        }
    };
    Ok(Phase { deps: p.after, coupled: true, local: p.local, tasks: vec![exec; executors], stages })
}

fn job_from(rec: JobRecord, line: usize) -> Result<Job, String> {
    let mut phases = Vec::with_capacity(rec.phases.len());
    for p in rec.phases {
        if p.executors.is_some() || !p.stage_tasks.is_empty() {
            phases.push(pool_phase_from(p)?);
            continue;
        }
        let mut tasks = Vec::new();
        for g in p.tasks {
            let n = check_count(g.count)?;
            let task = Task {
                request: Resources::new(cores_to_milli(g.cpu)?, g.mem_mb),
                duration: seconds(g.duration_s, "duration_s", true)?,
                estimate: g.estimate_s.map(|e| seconds(e, "estimate_s", false)).transpose()?,
            };
            tasks.extend(std::iter::repeat_n(task, n));
        }
        phases.push(Phase { deps: p.after, coupled: p.coupled, local: p.local, tasks, stages: vec![] });
    }
    if phases.iter().all(|p| p.tasks.is_empty()) {
        return Err("a job needs at least one task".into());
    }
    Ok(Job {
        name: rec.name.unwrap_or_else(|| format!("job-line-{line}")),
        submit: seconds(rec.submit_s, "submit_s", false)?,
        class: rec.class,
        priority: rec.priority,
        elastic: rec.elastic.map(|e| elastic_from(e, &phases)).transpose()?,
        phases,
    })
}

/// Reads a workload from a JSON Lines stream and validates it. Errors name
/// the line; the caller adds the file name.
pub fn read_workload(input: impl BufRead) -> Result<Workload, FormatError> {
    let jobs = JobReader::new(input)?;
    let cluster = jobs.cluster().clone();
    let mut jobs = jobs.collect::<Result<Vec<Job>, FormatError>>()?;
    jobs.sort_by_key(|j| j.submit);
    Ok(Workload { cluster, jobs })
}

/// A workload stream read job by job: the cluster record first (read by
/// [`JobReader::new`]), then each job, validated against it, as it is
/// taken, in the stream's order (which [`read_workload`] sorts by
/// submission; a caller that streams checks the order itself). Holds one line
/// at a time.
pub struct JobReader<R: BufRead> {
    lines: std::iter::Enumerate<std::io::Lines<R>>,
    cluster: Cluster,
    /// The cluster record's line.
    cluster_line: usize,
    /// An error was returned: nothing more is read.
    failed: bool,
}

impl<R: BufRead> JobReader<R> {
    /// Reads up to and including the cluster record (the first record).
    pub fn new(input: R) -> Result<Self, FormatError> {
        let mut lines = input.lines().enumerate();
        match next_record(&mut lines)? {
            Some((n, Record::Cluster(c))) => {
                let c = cluster_from(c).map_err(|reason| FormatError { line: n, reason })?;
                c.validate().map_err(|e| FormatError { line: n, reason: e.to_string() })?;
                Ok(JobReader { lines, cluster: c, cluster_line: n, failed: false })
            }
            Some((n, Record::Job(_))) => Err(FormatError { line: n, reason: "a job before the cluster record".into() }),
            None => Err(FormatError {
                line: 0,
                reason: "no cluster record: the first line must be {\"cluster\":{...}}".into(),
            }),
        }
    }

    /// The cluster the jobs run on.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// The cluster record's line (1-based).
    pub fn cluster_line(&self) -> usize {
        self.cluster_line
    }

    fn next_job(&mut self) -> Result<Option<Job>, FormatError> {
        for (i, line) in self.lines.by_ref() {
            let n = i + 1;
            let text = line.map_err(|e| FormatError { line: n, reason: format!("cannot read: {e}") })?;
            if let Some(job) = read_job_line(&text, n, &self.cluster, self.cluster_line)? {
                return Ok(Some(job));
            }
        }
        Ok(None)
    }
}

impl<R: BufRead> Iterator for JobReader<R> {
    type Item = Result<Job, FormatError>;

    /// The next job; after an error, nothing.
    fn next(&mut self) -> Option<Result<Job, FormatError>> {
        if self.failed {
            return None;
        }
        let next = self.next_job().transpose();
        self.failed = matches!(next, Some(Err(_)));
        next
    }
}

/// The job on line `line` of a workload stream, `text`, validated against
/// `cluster`, whose record is on line `cluster_line` (`None` for a blank or
/// `#` line): for a caller that reads the stream's lines in an order of its
/// own, past the cluster record.
pub fn read_job_line(
    text: &str,
    line: usize,
    cluster: &Cluster,
    cluster_line: usize,
) -> Result<Option<Job>, FormatError> {
    let text = text.trim();
    if text.is_empty() || text.starts_with('#') {
        return Ok(None);
    }
    let rec: Record = serde_json::from_str(text).map_err(|e| FormatError { line, reason: json_reason(&e) })?;
    match rec {
        Record::Cluster(_) => {
            Err(FormatError { line, reason: format!("a second cluster record (first at line {cluster_line})") })
        }
        Record::Job(j) => {
            let job = job_from(j, line).map_err(|reason| FormatError { line, reason })?;
            job.validate(&cluster.nodes).map_err(|e| FormatError { line, reason: e.to_string() })?;
            Ok(Some(job))
        }
    }
}

/// The next record of `lines` (blank and `#` lines skipped) with its 1-based line number.
fn next_record<R: BufRead>(
    lines: &mut std::iter::Enumerate<std::io::Lines<R>>,
) -> Result<Option<(usize, Record)>, FormatError> {
    for (i, line) in lines.by_ref() {
        let n = i + 1;
        let line = line.map_err(|e| FormatError { line: n, reason: format!("cannot read: {e}") })?;
        let text = line.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let rec: Record = serde_json::from_str(text).map_err(|e| FormatError { line: n, reason: json_reason(&e) })?;
        return Ok(Some((n, rec)));
    }
    Ok(None)
}

fn group<T: PartialEq + Copy>(items: &[T]) -> Vec<(T, u32)> {
    let mut out: Vec<(T, u32)> = Vec::new();
    for &x in items {
        match out.last_mut() {
            Some((y, n)) if *y == x => *n += 1,
            _ => out.push((x, 1)),
        }
    }
    out
}

/// A pool phase's record; its executors are identical (the first stands for all).
fn pool_record(p: &Phase) -> PhaseRecord {
    let e = p.tasks[0];
    PhaseRecord {
        after: p.deps.clone(),
        coupled: p.coupled,
        local: p.local,
        tasks: vec![],
        executors: Some(ExecutorGroup {
            count: p.tasks.len() as u32,
            cpu: e.request.cpu_milli as f64 / 1000.0,
            mem_mb: e.request.mem_mb,
            duration_s: Some(to_secs_f64(e.duration)),
            estimate_s: e.estimate.map(to_secs_f64),
        }),
        stage_tasks: p
            .stages
            .iter()
            .map(|s| StageGroup { count: s.count, duration_s: to_secs_f64(s.duration) })
            .collect(),
    }
}

/// Writes a workload as JSON Lines one record at a time: the cluster record
/// when it is created, then each job as it is handed over, so a caller that
/// streams jobs in (a trace import) never holds more than one of them.
/// Identical neighbouring tasks and nodes are grouped.
pub struct WorkloadWriter<W: Write> {
    out: W,
}

impl<W: Write> WorkloadWriter<W> {
    /// Writes the cluster record.
    pub fn new(mut out: W, cluster: &Cluster) -> std::io::Result<Self> {
        let nodes = group(&cluster.nodes)
            .into_iter()
            .map(|(r, count)| NodeGroup { count, cpu: r.cpu_milli as f64 / 1000.0, mem_mb: r.mem_mb })
            .collect();
        let am = cluster.am.map(|a| AmRecord { cpu: a.cpu_milli as f64 / 1000.0, mem_mb: a.mem_mb });
        serde_json::to_writer(&mut out, &Record::Cluster(ClusterRecord { nodes, am }))?;
        writeln!(out)?;
        Ok(WorkloadWriter { out })
    }

    /// Writes one job record.
    pub fn job(&mut self, job: &Job) -> std::io::Result<()> {
        let phases = job
            .phases
            .iter()
            .map(|p| {
                if !p.stages.is_empty() {
                    pool_record(p)
                } else {
                    PhaseRecord {
                        after: p.deps.clone(),
                        coupled: p.coupled,
                        local: p.local,
                        executors: None,
                        stage_tasks: vec![],
                        tasks: group(&p.tasks)
                            .into_iter()
                            .map(|(t, count)| TaskGroup {
                                count,
                                cpu: t.request.cpu_milli as f64 / 1000.0,
                                mem_mb: t.request.mem_mb,
                                duration_s: to_secs_f64(t.duration),
                                estimate_s: t.estimate.map(to_secs_f64),
                            })
                            .collect(),
                    }
                }
            })
            .collect();
        let rec = JobRecord {
            name: Some(job.name.clone()),
            submit_s: to_secs_f64(job.submit),
            class: job.class,
            priority: job.priority,
            phases,
            elastic: job.elastic.as_ref().and_then(elastic_record),
        };
        serde_json::to_writer(&mut self.out, &Record::Job(rec))?;
        writeln!(self.out)
    }

    /// Flushes and hands back the output.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Writes a whole workload as JSON Lines (see [`WorkloadWriter`]).
pub fn write_workload(w: &Workload, out: impl Write) -> std::io::Result<()> {
    let mut writer = WorkloadWriter::new(out, &w.cluster)?;
    for job in &w.jobs {
        writer.job(job)?;
    }
    writer.finish().map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"# a tiny workload
{"cluster":{"nodes":[{"count":2,"cpu":4,"mem_mb":8192}]}}

{"job":{"name":"a","submit_s":1.5,"class":"short","priority":9,"phases":[{"tasks":[{"count":2,"cpu":1,"mem_mb":1024,"duration_s":10,"estimate_s":12}]}]}}
{"job":{"submit_s":0,"class":"long","phases":[{"coupled":true,"tasks":[{"cpu":2,"mem_mb":2048,"duration_s":100}]},{"after":[0],"tasks":[{"cpu":0.5,"mem_mb":512,"duration_s":5}]}]}}
"#;

    #[test]
    fn reads_the_documented_example() {
        let w = read_workload(GOOD.as_bytes()).unwrap();
        assert_eq!(w.cluster.nodes, vec![Resources::new(4000, 8192); 2]);
        assert_eq!(w.jobs.len(), 2);
        // Sorted by submission: the long job (t = 0, line 5) comes first.
        let long = &w.jobs[0];
        assert_eq!(long.name, "job-line-5");
        assert_eq!(long.class, JobClass::Long);
        assert!(long.phases[0].coupled);
        assert_eq!(long.phases[1].deps, vec![0]);
        assert_eq!(long.phases[1].tasks[0].request, Resources::new(500, 512));
        let short = &w.jobs[1];
        assert_eq!(short.submit, 1_500_000);
        assert_eq!(short.phases[0].tasks.len(), 2);
        assert_eq!(short.phases[0].tasks[0].estimate, Some(12_000_000));
    }

    #[test]
    fn round_trips_through_write() {
        let w = read_workload(GOOD.as_bytes()).unwrap();
        let mut buf = Vec::new();
        write_workload(&w, &mut buf).unwrap();
        assert_eq!(read_workload(buf.as_slice()).unwrap(), w);
    }

    #[test]
    fn the_writer_writes_each_record_as_it_comes() {
        let w = read_workload(GOOD.as_bytes()).unwrap();
        let mut writer = WorkloadWriter::new(Vec::new(), &w.cluster).unwrap();
        // Only the cluster record so far, its two equal nodes grouped.
        assert_eq!(writer.out, b"{\"cluster\":{\"nodes\":[{\"count\":2,\"cpu\":4.0,\"mem_mb\":8192}]}}\n");
        writer.job(&w.jobs[0]).unwrap();
        assert_eq!(writer.out.iter().filter(|&&b| b == b'\n').count(), 2);
        writer.job(&w.jobs[1]).unwrap();
        let out = writer.finish().unwrap();
        assert_eq!(read_workload(out.as_slice()).unwrap(), w);
    }

    // 2 executors of 8 cores, stages of 32 × 10 s and 16 × 20 s: span
    // (320 + 320) / 16 = 40 s, the executors' lockstep run time.
    #[test]
    fn reads_a_pool_phase() {
        let text = r#"{"cluster":{"nodes":[{"count":2,"cpu":8,"mem_mb":16384}]}}
{"job":{"submit_s":0,"class":"long","phases":[{"executors":{"count":2,"cpu":8,"mem_mb":8192,"estimate_s":50},"stage_tasks":[{"count":32,"duration_s":10},{"count":16,"duration_s":20}]}]}}
"#;
        let w = read_workload(text.as_bytes()).unwrap();
        let p = &w.jobs[0].phases[0];
        assert!(p.coupled);
        assert_eq!(
            p.stages,
            vec![StageTasks { count: 32, duration: 10_000_000 }, StageTasks { count: 16, duration: 20_000_000 }]
        );
        assert_eq!(
            p.tasks,
            vec![Task { request: Resources::new(8000, 8192), duration: 40_000_000, estimate: Some(50_000_000) }; 2]
        );
        let mut buf = Vec::new();
        write_workload(&w, &mut buf).unwrap();
        assert_eq!(read_workload(buf.as_slice()).unwrap(), w);
        let e = error_of(&text.replace(r#""executors":{"count":2,"cpu":8,"mem_mb":8192,"estimate_s":50},"#, ""));
        assert_eq!(
            (e.line, e.reason.as_str()),
            (2, "a pool phase needs `executors` and `stage_tasks`, and no `tasks`")
        );
    }

    #[test]
    fn elastic_jobs_round_trip_and_bad_elasticity_is_refused() {
        let cluster = r#"{"cluster":{"nodes":[{"cpu":16,"mem_mb":10000}]}}"#;
        let job = |elastic: &str| {
            format!("{cluster}\n{{\"job\":{{\"submit_s\":0,\"class\":\"long\",\"elastic\":{elastic},\"phases\":[{{\"tasks\":[{{\"cpu\":1,\"mem_mb\":3000,\"duration_s\":20}}]}}]}}}}\n")
        };
        let w = read_workload(job(r#"{"penalty":1.5,"min_mem_mb":1000,"true_penalty":1.8}"#).as_bytes()).unwrap();
        let e = w.jobs[0].elastic.unwrap();
        assert_eq!(e.estimate.profile, ElasticityProfile::max_penalty(1.5));
        assert_eq!(
            (e.estimate.min_mem_mb, e.truth, e.true_ideal_scale),
            (Some(1000), ElasticityProfile::max_penalty(1.8), 1.0)
        );
        let mut buf = Vec::new();
        write_workload(&w, &mut buf).unwrap();
        assert_eq!(read_workload(buf.as_slice()).unwrap(), w);

        let w = read_workload(job(r#"{"penalty":3,"model":"reducer"}"#).as_bytes()).unwrap();
        let e = w.jobs[0].elastic.unwrap();
        assert_eq!((e.estimate.profile, e.truth), (ElasticityProfile::reducer_max_penalty(3.0), e.estimate.profile));
        let mut buf = Vec::new();
        write_workload(&w, &mut buf).unwrap();
        assert!(String::from_utf8_lossy(&buf).contains(r#""model":"reducer""#));
        assert_eq!(read_workload(buf.as_slice()).unwrap(), w);
        let e = error_of(&job(r#"{"penalty":1.5,"model":"linear"}"#));
        assert!(e.reason.contains(r#"model must be "step" or "reducer", got "linear""#), "{e}");

        let e = error_of(&job(r#"{"penalty":0.8}"#));
        assert_eq!(e.line, 2);
        assert!(e.reason.contains("penalty 0.8 is below 1"), "{e}");
        let e = error_of(&job(r#"{"penalty":1.5,"min_mem_mb":4000}"#));
        assert_eq!(e.line, 2);
        assert!(e.reason.contains("minimum memory 4000 MB is above the ideal memory 3000 MB"), "{e}");
    }

    fn error_of(text: &str) -> FormatError {
        read_workload(text.as_bytes()).unwrap_err()
    }

    #[test]
    fn errors_name_the_line_and_the_reason() {
        let cluster = r#"{"cluster":{"nodes":[{"cpu":4,"mem_mb":8192}]}}"#;
        let e = error_of(&format!("{cluster}\n{{\"job\":{{\"submit_s\":0,\"class\":\"short\",\"phases\":[{{\"tasks\":[{{\"cpu\":8,\"mem_mb\":1,\"duration_s\":1}}]}}]}}}}\n"));
        assert_eq!(e.line, 2);
        assert!(e.reason.contains("bigger than every node"), "{e}");

        let e = error_of(&format!("{cluster}\n{{\"job\":{{\"submit_s\":0,\"class\":\"medium\",\"phases\":[]}}}}"));
        assert_eq!(e.line, 2);
        assert!(e.reason.contains("medium"), "{e}");

        let e = error_of(&format!("{cluster}\nnot json"));
        assert_eq!(e.line, 2);
        assert_eq!(e.reason, "expected value (column 1)");

        let e = error_of(&format!("{cluster}\n{{\"job\":{{\"submit\":0}}}}"));
        assert_eq!((e.line, e.reason.starts_with("unknown field `submit`")), (2, true), "{e}");
        assert!(e.reason.ends_with("(column 16)") && !e.reason.contains("line 1"), "{e}");

        let e = error_of(r#"{"cluster":{"nodes":[]}}"#);
        assert_eq!((e.line, e.reason.as_str()), (1, "the cluster has no nodes"));

        let e = error_of("");
        assert_eq!(e.line, 0);

        let e = error_of(&format!("{cluster}\n{{\"job\":{{\"submit_s\":-1,\"class\":\"short\",\"phases\":[{{\"tasks\":[{{\"cpu\":1,\"mem_mb\":1,\"duration_s\":1}}]}}]}}}}"));
        assert!(e.reason.contains("submit_s"), "{e}");

        let e = error_of(&format!("{cluster}\n{{\"job\":{{\"submit_s\":0,\"class\":\"short\",\"phases\":[{{\"after\":[0],\"tasks\":[{{\"cpu\":1,\"mem_mb\":1,\"duration_s\":1}}]}}]}}}}"));
        assert!(e.reason.contains("depends on phase 0"), "{e}");
    }
}
