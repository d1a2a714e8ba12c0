//! Swap on this machine: how much there is, and a temporary swap file for
//! tests and measurements that is always turned off and deleted afterwards.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Total swap space in bytes (`SwapTotal` in `/proc/meminfo`).
pub fn total_bytes() -> io::Result<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo")?;
    let kb = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("SwapTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no SwapTotal in /proc/meminfo"))?;
    Ok(kb * 1024)
}

/// A swap file that is on while this value lives: dropping it runs `swapoff`
/// and deletes the file, also when the code using it panicked.
#[derive(Debug)]
pub struct TempSwap {
    file: PathBuf,
    on: bool,
}

impl TempSwap {
    /// Creates a `bytes`-sized swap file in `dir` (a real file system, not
    /// tmpfs) and turns it on. Needs root, `mkswap` and `swapon`.
    pub fn enable(dir: &Path, bytes: u64) -> io::Result<TempSwap> {
        let file = dir.join("pliant-swapfile");
        let mut guard = TempSwap { file, on: false };
        allocate(&guard.file, bytes)?;
        run("mkswap", &guard.file)?;
        run("swapon", &guard.file)?;
        guard.on = true;
        Ok(guard)
    }

    /// The swap file.
    pub fn path(&self) -> &Path {
        &self.file
    }
}

impl Drop for TempSwap {
    fn drop(&mut self) {
        if self.on {
            if let Err(e) = run("swapoff", &self.file) {
                eprintln!("pliant: swapoff {} failed: {e}", self.file.display());
            }
        }
        let _ = std::fs::remove_file(&self.file);
    }
}

/// Writes `bytes` of zeros: a swap file must have no holes, which a plain
/// `set_len` would leave.
fn allocate(file: &Path, bytes: u64) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(file)?;
    let chunk = vec![0u8; 1 << 20];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        f.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    f.sync_all()
}

fn run(tool: &str, file: &Path) -> io::Result<()> {
    let out = Command::new(tool).arg(file).output().map_err(|e| io::Error::new(e.kind(), format!("{tool}: {e}")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "{tool} {}: {} {}",
            file.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}
