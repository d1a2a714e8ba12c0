//! A test workload with memory: it holds a buffer, dirties every page of it
//! once per pass and counts passes, so a test or a measurement can see
//! progress, freezing, restarts and lost memory.
//!
//! Output protocol (stdout, one line each): `start N` when it starts (N > 0
//! after a restore), `restored N` after reading a checkpoint, `pass N` after
//! each pass, `checkpoint N` when it saved its state, `done N` at the end
//! (after its passes, or once its `--until-file` exists: a test ends it
//! when it has seen what it needed, however fast the machine is).
//! Each page's first byte holds the number of passes made over it (mod 256);
//! a page that comes back from swap with another value makes it exit with
//! code 3, so a surviving task proves its memory survived.
//!
//! Cooperative checkpointing: when [`CHECKPOINT_DIR_ENV`] is set, SIGUSR1
//! makes it write the pass count and the whole buffer to `state` in that
//! directory and exit 0; a new start with the same directory continues from it.

use crate::process::CHECKPOINT_DIR_ENV;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

const PAGE: usize = 4096;

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirtyArgs {
    /// Buffer size in MB.
    pub mb: u64,
    /// Stop after this many passes in total (forever when `None`).
    pub passes: Option<u64>,
    /// Also stop, before its next pass, once this file exists.
    pub until_file: Option<PathBuf>,
}

/// Parses `--mb N [--passes P] [--until-file FILE]`.
pub fn parse_args(args: &[String]) -> Result<DirtyArgs, String> {
    let mut out = DirtyArgs { mb: 0, passes: None, until_file: None };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let n = || value.parse::<u64>().map_err(|_| format!("{flag}: not a whole number: {value}"));
        match flag.as_str() {
            "--mb" => out.mb = n()?,
            "--passes" => out.passes = Some(n()?),
            "--until-file" => out.until_file = Some(PathBuf::from(value)),
            _ => return Err(format!("unknown flag {flag} (expected --mb N [--passes P] [--until-file FILE])")),
        }
    }
    if out.mb == 0 {
        return Err("--mb N (at least 1) is required".into());
    }
    Ok(out)
}

static CHECKPOINT: AtomicBool = AtomicBool::new(false);

extern "C" fn on_checkpoint_signal(_: libc::c_int) {
    CHECKPOINT.store(true, Ordering::SeqCst);
}

/// Runs the workload until it has made `args.passes` passes, finds
/// `args.until_file`, or is asked to checkpoint.
pub fn run(args: DirtyArgs) -> Result<(), String> {
    let dir = std::env::var_os(CHECKPOINT_DIR_ENV).map(PathBuf::from);
    if dir.is_some() {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe {
            libc::signal(libc::SIGUSR1, on_checkpoint_signal as extern "C" fn(libc::c_int) as libc::sighandler_t)
        };
    }
    let mut buf = vec![0u8; (args.mb as usize) << 20];
    let mut passes = match &dir {
        Some(d) if d.join("state").exists() => {
            let n = restore(&d.join("state"), &mut buf)?;
            say(&format!("restored {n}"));
            n
        }
        _ => 0,
    };
    say(&format!("start {passes}"));
    loop {
        if args.passes.is_some_and(|p| passes >= p) || args.until_file.as_ref().is_some_and(|f| f.exists()) {
            say(&format!("done {passes}"));
            return Ok(());
        }
        if let (true, Some(d)) = (CHECKPOINT.load(Ordering::SeqCst), &dir) {
            save(d, passes, &buf)?;
            say(&format!("checkpoint {passes}"));
            return Ok(());
        }
        let expected = passes as u8;
        for (i, page) in buf.chunks_mut(PAGE).enumerate() {
            if page[0] != expected {
                return Err(format!("memory lost: page {i} holds {} after {passes} passes", page[0]));
            }
            page[0] = expected.wrapping_add(1);
        }
        passes += 1;
        say(&format!("pass {passes}"));
    }
}

fn say(line: &str) {
    // Stdout is line-buffered: each line reaches the file as it is written.
    println!("{line}");
}

fn save(dir: &Path, passes: u64, buf: &[u8]) -> Result<(), String> {
    let tmp = dir.join("state.tmp");
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&passes.to_le_bytes())?;
        f.write_all(buf)?;
        f.sync_all()?;
        std::fs::rename(&tmp, dir.join("state"))
    };
    write().map_err(|e| format!("cannot save state in {}: {e}", dir.display()))
}

fn restore(file: &Path, buf: &mut [u8]) -> Result<u64, String> {
    let read = |buf: &mut [u8]| -> std::io::Result<u64> {
        let mut f = std::fs::File::open(file)?;
        let mut n = [0u8; 8];
        f.read_exact(&mut n)?;
        f.read_exact(buf)?;
        Ok(u64::from_le_bytes(n))
    };
    let passes = read(buf).map_err(|e| format!("cannot restore {}: {e}", file.display()))?;
    if buf.chunks(PAGE).any(|p| p[0] != passes as u8) {
        return Err(format!("checkpoint {} does not match its pass count {passes}", file.display()));
    }
    Ok(passes)
}

/// What a dirtier's stdout says so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Progress {
    /// How many times it started (1 = never restarted).
    pub starts: u32,
    /// The pass count of its first start line (0 for a fresh start).
    pub first_start: u64,
    /// The last pass count it reported (start, restored, pass or checkpoint).
    pub passes: u64,
    /// True when it reported saving a checkpoint.
    pub checkpointed: bool,
}

/// Reads a dirtier's stdout file (a missing file reads as no progress).
pub fn read_progress(stdout: &Path) -> Progress {
    let text = std::fs::read_to_string(stdout).unwrap_or_default();
    let mut p = Progress::default();
    // Only complete lines: the last one may still be being written.
    for line in text.split_inclusive('\n').filter(|l| l.ends_with('\n')) {
        let Some((word, n)) = line.trim().split_once(' ') else { continue };
        let Ok(n) = n.parse::<u64>() else { continue };
        match word {
            "start" => {
                if p.starts == 0 {
                    p.first_start = n;
                }
                p.starts += 1;
            }
            "checkpoint" => p.checkpointed = true,
            _ => {}
        }
        p.passes = n;
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_need_a_size() {
        let a = |s: &[&str]| parse_args(&s.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        assert_eq!(a(&["--mb", "64", "--passes", "3"]), Ok(DirtyArgs { mb: 64, passes: Some(3), until_file: None }));
        let until = Some(PathBuf::from("/tmp/stop"));
        assert_eq!(
            a(&["--mb", "8", "--until-file", "/tmp/stop"]),
            Ok(DirtyArgs { mb: 8, passes: None, until_file: until })
        );
        assert!(a(&[]).is_err());
        assert!(a(&["--mb"]).is_err());
        assert!(a(&["--mb", "x"]).is_err());
        assert!(a(&["--gb", "1"]).is_err());
    }

    #[test]
    fn progress_counts_starts_and_ignores_a_partial_last_line() {
        let dir = crate::scratch::ScratchDir::new("pliant-progress").unwrap();
        let f = dir.path().join("out");
        std::fs::write(&f, "start 0\npass 1\npass 2\ncheckpoint 2\nrestored 2\nstart 2\npass 3\npass 4").unwrap();
        assert_eq!(read_progress(&f), Progress { starts: 2, first_start: 0, passes: 3, checkpointed: true });
        assert_eq!(read_progress(&dir.path().join("missing")), Progress::default());
    }
}
