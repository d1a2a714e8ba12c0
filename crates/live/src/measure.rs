//! Measures the mechanisms on the machine it runs on (BIG-C Fig. 3 and §5.4;
//! checkpoint paper Fig. 2): freeze and thaw latency, seconds per GB to
//! reclaim dirty memory from a running, a CPU-throttled and a frozen task, to
//! restore it on resume, and to dump and restart a cooperative checkpoint.
//! The rates are what the simulator's execution model takes as
//! `reclaim_bw` and `restore_bw`.

use crate::cgroup::{Cgroup, CgroupError, Layout};
use crate::dirtier::{read_progress, Progress};
use crate::mechanism::{
    Allocation, CheckpointOutcome, LiveTask, MechanismError, FOOTPRINT_CPU_MILLI, FOOTPRINT_MEM_BYTES,
};
use crate::process::CommandSpec;
use crate::scratch::ScratchDir;
use crate::swap::{self, TempSwap};
use std::path::Path;
use std::time::{Duration, Instant};

/// What to measure and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeasureConfig {
    /// Dirty-memory sizes in MB.
    pub sizes_mb: Vec<u64>,
    /// The command that runs the dirtier workload; `--mb N` is appended.
    pub workload: Vec<String>,
    /// Turn on a temporary swap file for the run (needs root); otherwise swap must be on.
    pub temp_swap: bool,
    /// How long one memory-limit write may retry before reclaim counts as stalled.
    pub patience: Duration,
}

/// The figures for one size. Rates are seconds per GiB; `None` means reclaim
/// stalled for the whole patience (the limit write kept failing with EBUSY).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    /// Dirty memory in MB.
    pub size_mb: u64,
    /// Median time to freeze the task, ms.
    pub freeze_ms: f64,
    /// Median time to thaw it, ms.
    pub thaw_ms: f64,
    /// Reclaim to the 64 MB footprint while the task runs at full CPU.
    pub reclaim_running: Option<f64>,
    /// Reclaim while the task's CPU quota is 1 %.
    pub reclaim_throttled: Option<f64>,
    /// Reclaim from the frozen task (immediate preemption as pliant does it).
    pub reclaim_frozen: Option<f64>,
    /// Resume after immediate preemption until the task has touched all its memory again.
    pub restore: f64,
    /// Cooperative checkpoint: signal until the task has written its state and exited.
    pub dump: f64,
    /// Restart from the checkpoint until the task runs again (state read cold from disk).
    pub restart: f64,
}

/// Why a measurement could not be made.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// Something this machine lacks (swap, cgroups, root).
    #[error("{0}")]
    Setup(String),
    /// A mechanism failed.
    #[error(transparent)]
    Mechanism(#[from] MechanismError),
    /// A cgroup operation failed.
    #[error(transparent)]
    Cgroup(#[from] CgroupError),
    /// The workload did not behave.
    #[error("workload: {0}")]
    Workload(String),
}

/// How long the workload may take to fill or restore its memory.
const WORKLOAD_TIMEOUT: Duration = Duration::from_secs(300);
const GIB: f64 = (1u64 << 30) as f64;

/// Runs every measurement; `log` gets a line as each step starts.
pub fn measure(cfg: &MeasureConfig, log: &mut dyn FnMut(&str)) -> Result<Vec<Row>, MeasureError> {
    let layout = Layout::detect()?;
    // Declared in this order so they drop in reverse: tasks and cgroups go
    // before swap is turned off, and swap before its directory is removed.
    let scratch = ScratchDir::new("pliant-measure").map_err(|e| MeasureError::Setup(e.to_string()))?;
    let largest = cfg.sizes_mb.iter().copied().max().unwrap_or(0);
    let _swap = if cfg.temp_swap {
        log(&format!("turning on a temporary {} MB swap file", largest + 512));
        Some(TempSwap::enable(scratch.path(), (largest + 512) << 20).map_err(|e| MeasureError::Setup(e.to_string()))?)
    } else {
        None
    };
    if swap::total_bytes().unwrap_or(0) < largest << 20 {
        return Err(MeasureError::Setup(format!(
            "reclaim needs at least {largest} MB of swap: turn swap on, or pass --temp-swap (as root)"
        )));
    }
    let (top, _) = layout.create_fresh(&format!("pliant-measure-{}", std::process::id()))?;
    let c = top.controllers();
    if !(c.memory && c.cpu && c.freezer) {
        return Err(MeasureError::Setup(format!("need the cpu, memory and freezer controllers; have {c:?}")));
    }
    cfg.sizes_mb.iter().map(|&mb| measure_size(cfg, &top, scratch.path(), mb, log)).collect()
}

fn measure_size(
    cfg: &MeasureConfig,
    top: &Cgroup,
    scratch: &Path,
    mb: u64,
    log: &mut dyn FnMut(&str),
) -> Result<Row, MeasureError> {
    let dir = scratch.join(format!("{mb}mb"));
    let ckpt = dir.join("checkpoint");
    std::fs::create_dir_all(&ckpt).map_err(|e| MeasureError::Setup(e.to_string()))?;
    let mut argv = cfg.workload.clone();
    argv.extend(["--mb".to_string(), mb.to_string()]);
    let spec = CommandSpec {
        argv,
        env: Vec::new(),
        stdout: dir.join("stdout"),
        stderr: dir.join("stderr"),
        checkpoint_dir: Some(ckpt.clone()),
        exit_file: None,
        cwd: None,
    };
    let alloc = Allocation { cpu_milli: 1000, mem_bytes: (mb << 21) + (256 << 20) };
    log(&format!("{mb} MB: filling"));
    let mut task = LiveTask::launch(top, &format!("task-{mb}"), &spec, alloc)?;
    wait_passes(&mut task, &spec, |p| p.passes >= 1)?;

    log(&format!("{mb} MB: freeze/thaw"));
    let (mut freeze, mut thaw) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        freeze.push(timed(|| task.cgroup().freeze())?);
        thaw.push(timed(|| task.cgroup().thaw())?);
    }

    log(&format!("{mb} MB: reclaim from the running task"));
    let reclaim_running = reclaim(task.cgroup(), cfg.patience)?;
    restore(&mut task, &spec)?;
    log(&format!("{mb} MB: reclaim at 1 % CPU"));
    task.cgroup().set_cpu_quota(Some(FOOTPRINT_CPU_MILLI))?;
    let reclaim_throttled = reclaim(task.cgroup(), cfg.patience)?;
    restore(&mut task, &spec)?;
    log(&format!("{mb} MB: immediate preemption (frozen reclaim) and resume"));
    let reclaim_frozen = match task.immediate(FOOTPRINT_MEM_BYTES, cfg.patience) {
        Ok(r) => Some(per_gib(r.took, r.before.usage.saturating_sub(r.after.usage))),
        Err(MechanismError::Cgroup(CgroupError::LimitBusy { .. })) => None,
        Err(e) => return Err(e.into()),
    };
    let swapped = task.memory()?.swap;
    let restore_time = restore(&mut task, &spec)?;

    log(&format!("{mb} MB: cooperative checkpoint and restart"));
    let start = Instant::now();
    match task.checkpoint(WORKLOAD_TIMEOUT)? {
        CheckpointOutcome::Saved(_) => {}
        other => return Err(MeasureError::Workload(format!("checkpoint failed: {other:?}"))),
    }
    let dump = per_gib(start.elapsed(), mb << 20);
    task.remove()?;
    evict_from_page_cache(&ckpt.join("state"));
    let start = Instant::now();
    let mut restarted = LiveTask::launch(top, &format!("task-{mb}-restart"), &spec, alloc)?;
    wait_passes(&mut restarted, &spec, |p| p.starts >= 2)?;
    let restart = per_gib(start.elapsed(), mb << 20);
    restarted.remove()?;

    Ok(Row {
        size_mb: mb,
        freeze_ms: median_ms(&mut freeze),
        thaw_ms: median_ms(&mut thaw),
        reclaim_running,
        reclaim_throttled,
        reclaim_frozen,
        restore: per_gib(restore_time, swapped),
        dump,
        restart,
    })
}

/// Lowers the limit to the footprint and times it; `None` when reclaim stalled.
fn reclaim(cgroup: &Cgroup, patience: Duration) -> Result<Option<f64>, MeasureError> {
    let before = cgroup.memory()?.usage;
    let start = Instant::now();
    match cgroup.set_memory_limit(Some(FOOTPRINT_MEM_BYTES), patience) {
        Ok(()) => Ok(Some(per_gib(start.elapsed(), before.saturating_sub(cgroup.memory()?.usage)))),
        Err(CgroupError::LimitBusy { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Resumes the task and waits until it has made two more passes — one to
/// finish the pass it was in, one over all of its memory. Returns the time.
fn restore(task: &mut LiveTask, spec: &CommandSpec) -> Result<Duration, MeasureError> {
    let from = read_progress(&spec.stdout).passes;
    let start = Instant::now();
    task.resume()?;
    wait_passes(task, spec, |p| p.passes >= from + 2)?;
    Ok(start.elapsed())
}

fn wait_passes(
    task: &mut LiveTask,
    spec: &CommandSpec,
    done: impl Fn(&Progress) -> bool,
) -> Result<Progress, MeasureError> {
    let start = Instant::now();
    loop {
        let p = read_progress(&spec.stdout);
        if done(&p) {
            return Ok(p);
        }
        if let Some(status) = task.try_wait()? {
            let err = std::fs::read_to_string(&spec.stderr).unwrap_or_default();
            return Err(MeasureError::Workload(format!("exited ({status}): {}", err.trim())));
        }
        if start.elapsed() > WORKLOAD_TIMEOUT {
            return Err(MeasureError::Workload(format!("no progress in {WORKLOAD_TIMEOUT:?}")));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Drops the file's pages from the page cache, so the restart reads it from disk.
fn evict_from_page_cache(file: &Path) {
    if let Ok(f) = std::fs::File::open(file) {
        use std::os::fd::AsRawFd;
        // SAFETY: posix_fadvise only reads its integer arguments.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    }
}

fn timed(f: impl FnOnce() -> Result<(), CgroupError>) -> Result<Duration, CgroupError> {
    let start = Instant::now();
    f()?;
    Ok(start.elapsed())
}

fn per_gib(took: Duration, bytes: u64) -> f64 {
    took.as_secs_f64() / (bytes.max(1) as f64 / GIB)
}

fn median_ms(samples: &mut [Duration]) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1000.0
}

/// The figures as a table.
pub fn table(rows: &[Row]) -> String {
    let rate = |r: Option<f64>| r.map_or_else(|| "stalled".to_string(), |x| format!("{x:.2}"));
    let mut out = String::from(
        "size      freeze   thaw  | reclaim s/GB to 64 MB      | restore | checkpoint s/GB\n\
         MB          ms      ms  | running  1% CPU   frozen  |  s/GB   |  dump  restart\n",
    );
    for r in rows {
        out.push_str(&format!(
            "{:<6} {:>8.2} {:>7.2}  | {:>7} {:>8} {:>8}  | {:>7.2} | {:>6.2} {:>8.2}\n",
            r.size_mb,
            r.freeze_ms,
            r.thaw_ms,
            rate(r.reclaim_running),
            rate(r.reclaim_throttled),
            rate(r.reclaim_frozen),
            r.restore,
            r.dump,
            r.restart,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_seconds_per_gib() {
        assert_eq!(per_gib(Duration::from_secs(3), 1 << 30), 3.0);
        assert_eq!(per_gib(Duration::from_millis(500), 256 << 20), 2.0);
        let mut s = [Duration::from_millis(3), Duration::from_millis(1), Duration::from_millis(2)];
        assert_eq!(median_ms(&mut s), 2.0);
    }

    #[test]
    fn the_table_marks_stalled_reclaim() {
        let row = Row {
            size_mb: 256,
            freeze_ms: 0.5,
            thaw_ms: 0.25,
            reclaim_running: None,
            reclaim_throttled: Some(2.5),
            reclaim_frozen: Some(0.75),
            restore: 4.0,
            dump: 1.0,
            restart: 0.5,
        };
        let t = table(&[row]);
        let last = t.lines().last().unwrap();
        assert_eq!(last, "256        0.50    0.25  | stalled     2.50     0.75  |    4.00 |   1.00     0.50");
    }
}
