//! Writes a workload as a DSS trace, in the layout DSS's own generator
//! (`samples/traces/trace-generator.py`) writes: ten lines per job (eleven
//! and up with more task classes), because DSS's parser reads the file ten
//! lines at a time and silently drops the jobs a shorter layout leaves in
//! its buffer. The cluster is not written: DSS takes it on its command line.
//!
//! A job is written only if DSS can run it as pliant does: one phase with no
//! upstream phase, whole milliseconds, whole cores, a `job_<int>` name,
//! estimates equal to the run times, and an elasticity DSS has (STEP or
//! SAWTOOTH with its IB, estimate equal to truth). Anything else is an error
//! naming the job, never a silent change.

use pliant_core::model::ElasticityProfile;
use pliant_workload::{Job, Task, Workload};
use std::io::Write;

/// Why a job cannot be written for DSS.
#[derive(Debug, thiserror::Error)]
pub enum DssWriteError {
    /// The job has something DSS's format cannot say.
    #[error("job `{job}` cannot be written for DSS: {why}")]
    Unsupported {
        /// The job's name.
        job: String,
        /// What DSS cannot express.
        why: String,
    },
    /// The output failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Writes every job of `w` to `out` in DSS's layout, in workload order.
pub fn write_dss(w: &Workload, out: &mut dyn Write) -> Result<(), DssWriteError> {
    for job in &w.jobs {
        write_job(job, out)?;
    }
    Ok(())
}

fn unsupported(job: &Job, why: impl Into<String>) -> DssWriteError {
    DssWriteError::Unsupported { job: job.name.clone(), why: why.into() }
}

/// Whole milliseconds of `us`, or an error naming `what`.
fn whole_ms(job: &Job, us: u64, what: &str) -> Result<u64, DssWriteError> {
    if us.is_multiple_of(1000) {
        Ok(us / 1000)
    } else {
        Err(unsupported(job, format!("its {what} ({us} µs) is not a whole number of milliseconds")))
    }
}

/// `c.penalty` and `c.ib` of the job, if it is elastic.
fn penalty(job: &Job) -> Result<Option<(&'static str, f64)>, DssWriteError> {
    let Some(e) = job.elastic else { return Ok(None) };
    if e.truth != e.estimate.profile || e.true_ideal_scale != 1.0 || e.estimate.min_mem_mb.is_some() {
        return Err(unsupported(job, "DSS has no mis-estimated elasticity and no owner's memory floor"));
    }
    match e.estimate.profile {
        ElasticityProfile::Step { penalty } => Ok(Some(("step", penalty))),
        ElasticityProfile::Sawtooth { penalty } => Ok(Some(("sawtooth", penalty))),
        ElasticityProfile::Spill { .. } => Err(unsupported(job, "DSS has no fitted spill penalty")),
    }
}

/// Runs of identical tasks, in order: DSS's task classes.
fn classes(tasks: &[Task]) -> Vec<(Task, usize)> {
    let mut out: Vec<(Task, usize)> = Vec::new();
    for t in tasks {
        match out.last_mut() {
            Some((last, n)) if last == t => *n += 1,
            _ => out.push((*t, 1)),
        }
    }
    out
}

fn write_job(job: &Job, out: &mut dyn Write) -> Result<(), DssWriteError> {
    let is_dss_id =
        job.name.strip_prefix("job_").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if !is_dss_id {
        return Err(unsupported(job, "DSS job ids are `job_<int>`"));
    }
    let [phase] = job.phases.as_slice() else { return Err(unsupported(job, "DSS jobs have a single phase")) };
    if !phase.deps.is_empty() || !phase.stages.is_empty() || phase.coupled || phase.local {
        return Err(unsupported(job, "DSS has no phase dependencies, Spark stages, coupling or locality"));
    }
    if job.priority != 0 {
        return Err(unsupported(job, "DSS has no job priorities"));
    }
    let penalty = penalty(job)?;
    let submit = whole_ms(job, job.submit, "submission")?;
    let mut lines = Vec::new();
    let mut longest = 0;
    for (t, n) in classes(&phase.tasks) {
        if t.estimate != Some(t.duration) {
            return Err(unsupported(job, "DSS tasks run as long as the trace says (no owner's estimate)"));
        }
        if !t.request.cpu_milli.is_multiple_of(1000) {
            return Err(unsupported(job, "DSS counts whole cores"));
        }
        let dur = whole_ms(job, t.duration, "task duration")?;
        longest = longest.max(dur);
        let cores = t.request.cpu_milli / 1000;
        let mut line = format!(
            "{{\"c.host\" : \"/default-rack/node1\", \"c.dur\" : {dur}, \"c.prio\" : 20, \"c.mem\" : {}, \"c.type\" : \"reduce\", \"c.nr\" : {n}",
            t.request.mem_mb
        );
        if cores != 1 {
            line += &format!(", \"c.cores\" : {cores}");
        }
        if let Some((model, ib)) = penalty {
            // `{:?}` keeps a decimal point (1.0, not 1): DSS reads the IB as a float.
            line += &format!(", \"c.penalty\" : \"{model}\", \"c.ib\" : {ib:?}");
        }
        lines.push(line + "}");
    }
    writeln!(out, "{{\t\"am.type\" : \"mapreduce\",")?;
    writeln!(out, "\t\"job.start.ms\" : {submit},")?;
    writeln!(out, "\t\"job.end.ms\" : {},", submit + longest)?;
    writeln!(out, "\t\"job.queue.name\" : \"sls_queue_1\",")?;
    writeln!(out, "\t\"job.id\" : \"{}\",", job.name)?;
    writeln!(out, "\t\"job.user\" : \"default\",")?;
    writeln!(out, "\t\"job.tasks\" : [")?;
    writeln!(out, "{}", lines.join(",\n"))?;
    writeln!(out, "]")?;
    writeln!(out, "}}")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::model::{Elasticity, JobClass};
    use pliant_core::{Resources, SECOND};
    use pliant_workload::{Cluster, JobElasticity, Phase};

    fn job(name: &str, mem: u64, dur_s: u64, n: usize) -> Job {
        let t = Task { request: Resources::new(1000, mem), duration: dur_s * SECOND, estimate: Some(dur_s * SECOND) };
        let profile = ElasticityProfile::Sawtooth { penalty: 1.5 };
        Job {
            name: name.into(),
            submit: 426 * SECOND,
            class: JobClass::Long,
            priority: 0,
            phases: vec![Phase::independent(vec![t; n])],
            elastic: Some(JobElasticity {
                estimate: Elasticity { profile, min_mem_mb: None },
                truth: profile,
                true_ideal_scale: 1.0,
            }),
        }
    }

    /// The first job of DSS's `dss-2718.json`, as its generator wrote it,
    /// plus the penalty keys.
    #[test]
    fn a_job_is_ten_lines_as_dss_writes_them() {
        let w = Workload { cluster: Cluster { am: None, nodes: vec![] }, jobs: vec![job("job_0", 3400, 220, 58)] };
        let mut out = Vec::new();
        write_dss(&w, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let expected = "{\t\"am.type\" : \"mapreduce\",\n\t\"job.start.ms\" : 426000,\n\t\"job.end.ms\" : 646000,\n\
            \t\"job.queue.name\" : \"sls_queue_1\",\n\t\"job.id\" : \"job_0\",\n\t\"job.user\" : \"default\",\n\
            \t\"job.tasks\" : [\n{\"c.host\" : \"/default-rack/node1\", \"c.dur\" : 220000, \"c.prio\" : 20, \
            \"c.mem\" : 3400, \"c.type\" : \"reduce\", \"c.nr\" : 58, \"c.penalty\" : \"sawtooth\", \"c.ib\" : 1.5}\n]\n}\n";
        assert_eq!(text, expected);
        assert_eq!(text.lines().count(), 10);
    }

    #[test]
    fn what_dss_cannot_say_is_an_error_naming_the_job() {
        let mut bad = job("q7", 1000, 10, 1);
        let w = |j: Job| Workload { cluster: Cluster { am: None, nodes: vec![] }, jobs: vec![j] };
        let err = |j: Job| write_dss(&w(j), &mut Vec::new()).unwrap_err().to_string();
        assert!(err(bad.clone()).contains("job `q7` cannot be written for DSS: DSS job ids"));
        bad.name = "job_7".into();
        bad.submit += 1;
        assert!(err(bad.clone()).contains("not a whole number of milliseconds"));
        bad.submit -= 1;
        bad.elastic.as_mut().unwrap().truth = ElasticityProfile::Step { penalty: 3.0 };
        assert!(err(bad).contains("mis-estimated"));
    }
}
