//! pliant's native workload format on the trace side: a writer that streams
//! jobs out one at a time (so an import never holds the whole trace), and
//! the view of a native job as a [`TraceJob`] for statistics.

use crate::record::TraceJob;
use pliant_core::Micros;
use pliant_workload::{write_workload, Cluster, Job, Workload};
use std::io::Write;

/// Writes a native workload file job by job: the cluster record first, then
/// one line per job (the reader sorts jobs by submission time).
pub struct NativeWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
}

impl<W: Write> NativeWriter<W> {
    /// Starts the file with the cluster record.
    pub fn new(mut out: W, cluster: &Cluster) -> std::io::Result<Self> {
        write_workload(&Workload { cluster: cluster.clone(), jobs: Vec::new() }, &mut out)?;
        Ok(NativeWriter { out, buf: Vec::new() })
    }

    /// Appends one job.
    pub fn job(&mut self, job: Job) -> std::io::Result<()> {
        // `write_workload` is the one serialiser of the format; the job line is
        // what follows its (empty) cluster line.
        self.buf.clear();
        write_workload(&Workload { cluster: Cluster { nodes: Vec::new() }, jobs: vec![job] }, &mut self.buf)?;
        let start = self.buf.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1);
        self.out.write_all(&self.buf[start..])
    }

    /// Flushes and returns the writer.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// A native job seen as a trace job; its end is its submission plus its
/// critical path (each phase lasting as long as its longest task).
pub fn trace_job(job: Job) -> TraceJob {
    let mut finish: Vec<Micros> = Vec::with_capacity(job.phases.len());
    for p in &job.phases {
        let ready = p.deps.iter().filter_map(|&d| finish.get(d as usize)).max().copied().unwrap_or(0);
        finish.push(ready + p.tasks.iter().map(|t| t.duration).max().unwrap_or(0));
    }
    TraceJob {
        end: job.submit + finish.into_iter().max().unwrap_or(0),
        id: job.name,
        submit: job.submit,
        priority: job.priority,
        sched_class: None,
        phases: job.phases,
    }
}
