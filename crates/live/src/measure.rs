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
        max_file_bytes: None,
        cwd: None,
        confinement: Default::default(),
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

/// What a measurement calibrates in the simulator's execution model: the
/// parameters `--config` reads, each from the measured figure that plays its
/// part (see [`calibrate`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// `reclaim_s_per_gb`: the frozen reclaim, as pliant's immediate preemption does it
    /// (`None` when it stalled at every size: the paper default stays).
    pub reclaim_s_per_gb: Option<f64>,
    /// `restore_s_per_gb`: resume until the task has touched all its memory again.
    pub restore_s_per_gb: f64,
    /// The checkpoint tier whose bandwidth the measured disk sets (`hdd`, `ssd` or `nvm`).
    pub tier: String,
    /// `<tier>_mb_s`: one bandwidth for dump and restore (the model's), fitted so that a
    /// dump plus a restore take as long as the measured dump plus restart.
    pub tier_mb_s: f64,
    /// Median freeze latency, ms (the model has no parameter for it: written as a comment).
    pub freeze_ms: f64,
}

/// The calibration `pliant measure --out` writes: per rate, the least-squares
/// line through the origin of seconds against GiB over the measured sizes
/// (Σ rate·g² / Σ g²), so the larger sizes, where fixed costs weigh least,
/// count most; stalled reclaims are left out. `None` without rows.
pub fn calibrate(rows: &[Row], tier: &str) -> Option<Calibration> {
    let fit = |rate: &dyn Fn(&Row) -> Option<f64>| -> Option<f64> {
        let (num, den) = rows
            .iter()
            .filter_map(|r| Some((rate(r)?, r.size_mb as f64 / 1024.0)))
            .fold((0.0, 0.0), |(num, den), (x, g)| (num + x * g * g, den + g * g));
        (den > 0.0).then(|| num / den)
    };
    let mut freeze: Vec<f64> = rows.iter().map(|r| r.freeze_ms).collect();
    freeze.sort_by(f64::total_cmp);
    Some(Calibration {
        reclaim_s_per_gb: fit(&|r| r.reclaim_frozen),
        restore_s_per_gb: fit(&|r| Some(r.restore))?,
        tier: tier.to_string(),
        // Dump and restore of 1 GiB take dump + restart seconds; the model takes 2 × 1024 MB / bw.
        tier_mb_s: 2.0 * 1024.0 / fit(&|r| Some(r.dump + r.restart))?,
        freeze_ms: freeze[freeze.len() / 2],
    })
}

impl Calibration {
    /// The calibration as a parameter file of `KEY = VALUE` lines (what `--config` reads).
    pub fn to_config(&self, rows: &[Row]) -> String {
        let sizes: Vec<String> = rows.iter().map(|r| r.size_mb.to_string()).collect();
        let mut out = format!(
            "# pliant measure on this machine, fitted over dirty-memory sizes of {} MB.\n\
             # Read it with `pliant simulate --config FILE` (later --set flags win).\n",
            sizes.join(", ")
        );
        match self.reclaim_s_per_gb {
            Some(x) => out.push_str(&format!(
                "# immediate preemption: reclaim from the frozen task to the 64 MB footprint\nreclaim_s_per_gb = {x:.3}\n"
            )),
            None => out.push_str("# reclaim stalled at every size: reclaim_s_per_gb keeps its default\n"),
        }
        out.push_str(&format!(
            "# resume: read the swapped memory back until the task has touched it all\nrestore_s_per_gb = {:.3}\n",
            self.restore_s_per_gb
        ));
        out.push_str(&format!(
            "# cooperative checkpoint: 2 x 1024 MB over (dump + cold restart) s/GB, as the {} tier\n{}_mb_s = {:.3}\n",
            self.tier, self.tier, self.tier_mb_s
        ));
        out.push_str(&format!(
            "# freeze latency {:.2} ms: no model parameter (the model freezes at once)\n",
            self.freeze_ms
        ));
        out
    }
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

    fn row(size_mb: u64, reclaim_frozen: Option<f64>, restore: f64, dump: f64, restart: f64) -> Row {
        Row {
            size_mb,
            freeze_ms: size_mb as f64 / 100.0,
            thaw_ms: 0.1,
            reclaim_running: None,
            reclaim_throttled: None,
            reclaim_frozen,
            restore,
            dump,
            restart,
        }
    }

    #[test]
    fn calibration_fits_seconds_against_size_and_one_disk_bandwidth() {
        let rows =
            [row(512, Some(4.0), 2.5, 1.0, 3.0), row(1024, None, 3.0, 0.5, 1.5), row(2048, Some(1.5), 2.0, 1.0, 1.0)];
        let c = calibrate(&rows, "ssd").unwrap();
        // Reclaim: sizes 0.5 and 2 GiB (1 GiB stalled): (4·0.25 + 1.5·4) / (0.25 + 4) = 7 / 4.25.
        assert_eq!(c.reclaim_s_per_gb, Some(7.0 / 4.25));
        // Restore: (2.5·0.25 + 3·1 + 2·4) / 5.25 = 11.625 / 5.25.
        assert_eq!(c.restore_s_per_gb, 11.625 / 5.25);
        // Round trips 4, 2, 2 s/GiB: (1 + 2 + 8) / 5.25 s/GiB, so 2048 MB over that.
        assert_eq!(c.tier_mb_s, 2048.0 / (11.0 / 5.25));
        assert_eq!(c.freeze_ms, 10.24);
        let text = c.to_config(&rows);
        assert!(text.contains("\nreclaim_s_per_gb = 1.647\n"), "{text}");
        assert!(text.contains("\nrestore_s_per_gb = 2.214\n"), "{text}");
        assert!(text.contains("\nssd_mb_s = 977.455\n"), "{text}");
        let stalled = calibrate(&[row(256, None, 2.0, 1.0, 1.0)], "hdd").unwrap();
        assert_eq!(stalled.reclaim_s_per_gb, None);
        assert!(!stalled.to_config(&[]).contains("reclaim_s_per_gb ="));
        assert_eq!(calibrate(&[], "ssd"), None);
    }
}
