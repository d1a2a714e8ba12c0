//! Swap that is slow on purpose: a node whose reclaims and restores go at a
//! rate the test chooses, so that a test can show the planner pricing with
//! what it measured. This machine's cgroup v1 cannot throttle swap (a swap
//! write is charged to the root `blkio` group there, whatever cgroup the
//! page belongs to), so the slowness sits in the device: one file served
//! from memory by a FUSE file system in this process, every read and write
//! held back to `mb_per_s`, attached to a loop device, and that device
//! turned on as swap above any other. Needs root, `/dev/fuse`, `losetup`,
//! `mkswap` and `swapon`.

use fuser::{
    BackgroundSession, FileAttr, FileType, Filesystem, MountOption, ReplyAttr, ReplyData, ReplyEmpty, ReplyEntry,
    ReplyOpen, ReplyWrite, Request,
};
use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, UNIX_EPOCH};

/// The inode of the mount's root directory, and of its one file.
const ROOT: u64 = 1;
const DISK: u64 = 2;
/// The one file's name.
const DISK_NAME: &str = "disk";
/// Above any swap area a machine would have of its own (the highest
/// priority `swapon` takes).
const PRIORITY: &str = "32767";

/// A slow swap area that is on while this value lives: dropping it turns it
/// off, detaches the loop device and unmounts, also after a panic.
pub struct SlowSwap {
    device: Option<String>,
    on: bool,
    session: Option<BackgroundSession>,
    mount: PathBuf,
}

impl SlowSwap {
    /// Turns on `bytes` of swap going at `mb_per_s` MB/s each way, its
    /// mount point made in `dir`.
    pub fn enable(dir: &Path, bytes: u64, mb_per_s: u64) -> io::Result<SlowSwap> {
        let mount = dir.join("slow-swap");
        std::fs::create_dir_all(&mount)?;
        let disk = SlowDisk { data: vec![0; bytes as usize], bytes_per_s: mb_per_s << 20 };
        let options = [MountOption::FSName("pliant-slow-swap".into())];
        let session = fuser::spawn_mount2(disk, &mount, &options)?;
        let mut swap = SlowSwap { device: None, on: false, session: Some(session), mount };
        let file = swap.mount.join(DISK_NAME);
        let device = run("losetup", &["--find", "--show", &file.to_string_lossy()])?;
        swap.device = Some(device.trim().to_string());
        let device = swap.device.clone().unwrap_or_default();
        run("mkswap", &[&device])?;
        run("swapon", &["--priority", PRIORITY, &device])?;
        swap.on = true;
        Ok(swap)
    }
}

impl Drop for SlowSwap {
    fn drop(&mut self) {
        if let Some(device) = &self.device {
            if self.on {
                if let Err(e) = run("swapoff", &[device]) {
                    eprintln!("pliant: {e}");
                }
            }
            if let Err(e) = run("losetup", &["--detach", device]) {
                eprintln!("pliant: {e}");
            }
        }
        drop(self.session.take());
        let _ = std::fs::remove_dir(&self.mount);
    }
}

/// The file system: a root directory holding one file of `data`, each read
/// and write answered only after the time its size takes at `bytes_per_s`
/// (requests are served one at a time, so that is the device's rate).
struct SlowDisk {
    data: Vec<u8>,
    bytes_per_s: u64,
}

impl SlowDisk {
    fn hold_back(&self, bytes: usize) {
        std::thread::sleep(Duration::from_nanos(bytes as u64 * 1_000_000_000 / self.bytes_per_s));
    }

    fn attr(&self, ino: u64) -> FileAttr {
        let (kind, perm, size) =
            if ino == ROOT { (FileType::Directory, 0o700, 0) } else { (FileType::RegularFile, 0o600, self.data.len()) };
        FileAttr {
            ino,
            size: size as u64,
            blocks: size as u64 / 512,
            atime: UNIX_EPOCH,
            mtime: UNIX_EPOCH,
            ctime: UNIX_EPOCH,
            crtime: UNIX_EPOCH,
            kind,
            perm,
            nlink: 1,
            uid: 0,
            gid: 0,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        }
    }

    /// The part of the file `len` bytes from `offset` covers.
    fn span(&self, offset: i64, len: usize) -> std::ops::Range<usize> {
        let start = (offset.max(0) as usize).min(self.data.len());
        start..(start + len).min(self.data.len())
    }
}

/// How long the kernel may keep what it was told of a name or its attributes.
const TTL: Duration = Duration::from_secs(3600);

impl Filesystem for SlowDisk {
    fn lookup(&mut self, _: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEntry) {
        if parent == ROOT && name == DISK_NAME {
            reply.entry(&TTL, &self.attr(DISK), 0);
        } else {
            reply.error(libc::ENOENT);
        }
    }

    fn getattr(&mut self, _: &Request<'_>, ino: u64, _: Option<u64>, reply: ReplyAttr) {
        reply.attr(&TTL, &self.attr(ino));
    }

    /// Opened for direct I/O: the page cache would otherwise answer reads
    /// at memory speed.
    fn open(&mut self, _: &Request<'_>, _: u64, _: i32, reply: ReplyOpen) {
        reply.opened(0, fuser::consts::FOPEN_DIRECT_IO);
    }

    fn read(
        &mut self,
        _: &Request<'_>,
        _: u64,
        _: u64,
        offset: i64,
        size: u32,
        _: i32,
        _: Option<u64>,
        reply: ReplyData,
    ) {
        let span = self.span(offset, size as usize);
        self.hold_back(span.len());
        reply.data(&self.data[span]);
    }

    fn write(
        &mut self,
        _: &Request<'_>,
        _: u64,
        _: u64,
        offset: i64,
        data: &[u8],
        _: u32,
        _: i32,
        _: Option<u64>,
        reply: ReplyWrite,
    ) {
        let span = self.span(offset, data.len());
        let written = span.len();
        self.data[span].copy_from_slice(&data[..written]);
        self.hold_back(written);
        reply.written(written as u32);
    }

    fn flush(&mut self, _: &Request<'_>, _: u64, _: u64, _: u64, reply: ReplyEmpty) {
        reply.ok();
    }

    fn fsync(&mut self, _: &Request<'_>, _: u64, _: u64, _: bool, reply: ReplyEmpty) {
        reply.ok();
    }
}

/// Runs `tool args`, its standard output on success.
fn run(tool: &str, args: &[&str]) -> io::Result<String> {
    let out = Command::new(tool).args(args).output().map_err(|e| io::Error::new(e.kind(), format!("{tool}: {e}")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(io::Error::other(format!(
            "{tool} {}: {} {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_stays_inside_the_file() {
        let disk = SlowDisk { data: vec![0; 100], bytes_per_s: 1 };
        assert_eq!(disk.span(90, 20), 90..100);
        assert_eq!(disk.span(200, 5), 100..100);
        assert_eq!(disk.span(-1, 5), 0..5);
    }
}
