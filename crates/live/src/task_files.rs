//! Files a task controls (its output and exit files live in its working
//! directory), opened so that the task cannot make the daemon hang or read
//! elsewhere: never through a symbolic link (`O_NOFOLLOW`), never blocking
//! (`O_NONBLOCK`: a FIFO put in a log's place neither hangs the open nor the
//! read), and only when the file is a regular one.

use crate::held_dir::HeldDir;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// What a log that is not a regular file reads as.
pub const NOT_A_FILE: &str = "(not a regular file: not read)\n";

/// Opens `path` for reading without following a link or blocking; an error
/// unless it is a regular file.
fn open_regular(path: &Path) -> io::Result<File> {
    let file =
        OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY).open(path)?;
    if !file.metadata()?.file_type().is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("{} is not a regular file", path.display())));
    }
    Ok(file)
}

/// The last `bytes` of a task's file, from a line start where possible;
/// empty when it is missing, [`NOT_A_FILE`] when it is a link, a FIFO, a
/// device or a directory.
pub fn tail(path: &Path, bytes: u64) -> String {
    let mut file = match open_regular(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return String::new(),
        Err(_) => return NOT_A_FILE.into(),
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let from = len.saturating_sub(bytes);
    let mut buf = Vec::new();
    if file.seek(SeekFrom::Start(from)).is_err() || file.take(bytes).read_to_end(&mut buf).is_err() {
        return String::new();
    }
    let text = String::from_utf8_lossy(&buf).into_owned();
    match (from > 0, text.find('\n')) {
        (true, Some(i)) if i + 1 < text.len() => text[i + 1..].to_string(),
        _ => text,
    }
}

/// A task's small file (its exit file) read whole, at most 4 kB; `None`
/// when missing or not a regular file.
pub fn read_small(path: &Path) -> Option<String> {
    let mut text = String::new();
    open_regular(path).ok()?.take(4096).read_to_string(&mut text).ok()?;
    Some(text)
}

/// A task's output file opened for appending (restarts add to it): a
/// regular file with no other name, never through a link; anything else in
/// its place (a link, a hard link to another file, a FIFO, a directory a task
/// left there) is removed and a fresh file made. Everything happens under
/// the directory's descriptor ([`HeldDir`]): the directory is the agent's
/// path, what is in it the task's.
pub fn open_output(path: &Path) -> io::Result<File> {
    let (dir, name) = parent_and_name(path)?;
    let append = || dir.open_file(name, libc::O_WRONLY | libc::O_APPEND | libc::O_NONBLOCK | libc::O_NOCTTY, 0);
    match append() {
        // A second name for it is a file the task linked there (another's, maybe).
        Ok(file) if file.metadata().is_ok_and(|m| m.file_type().is_file() && m.nlink() == 1) => return blocking(file),
        Ok(_) | Err(_) => {}
    }
    if dir.entry(name)?.is_some_and(|e| !e.is_file) {
        dir.remove(name)?;
    }
    let created = libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_EXCL | libc::O_NOCTTY;
    match dir.open_file(name, created, 0o600) {
        Ok(file) => Ok(file),
        // A regular file that was there all along (its first open failed for another reason).
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => blocking(append()?),
        Err(e) => Err(e),
    }
}

/// Removes a task's file `path` (whatever is there: a link itself, a
/// directory tree) under its directory's descriptor; fine when it is not there.
pub fn remove(path: &Path) -> io::Result<()> {
    let (dir, name) = parent_and_name(path)?;
    dir.remove(name)
}

/// The directory of a task's file `path`, held open, and the file's name in it.
fn parent_and_name(path: &Path) -> io::Result<(HeldDir, &str)> {
    let bad = || io::Error::new(io::ErrorKind::InvalidInput, format!("{}: not a file in a directory", path.display()));
    let dir = HeldDir::open(path.parent().ok_or_else(bad)?)?;
    Ok((dir, path.file_name().and_then(|n| n.to_str()).ok_or_else(bad)?))
}

/// `file` with `O_NONBLOCK` cleared (a task's writes to a regular file never block anyway).
fn blocking(file: File) -> io::Result<File> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function owns.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::ScratchDir;
    use std::io::Write;

    fn mkfifo(path: &Path) {
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn tail_starts_at_a_line_when_it_cuts() {
        let dir = ScratchDir::new("pliant-tail").unwrap();
        let f = dir.path().join("err");
        std::fs::write(&f, "first line\nsecond\nthird\n").unwrap();
        assert_eq!(tail(&f, 1000), "first line\nsecond\nthird\n");
        assert_eq!(tail(&f, 10), "third\n", "the cut line `cond` is dropped");
        assert_eq!(tail(&dir.path().join("missing"), 10), "");
    }

    #[test]
    fn a_fifo_or_a_link_in_a_log_s_place_is_not_read_and_is_replaced() {
        let dir = ScratchDir::new("pliant-task-files").unwrap();
        let (fifo, link, plain) = (dir.path().join("fifo"), dir.path().join("link"), dir.path().join("plain"));
        mkfifo(&fifo);
        std::fs::write(&plain, "one\ntwo\nthree\n").unwrap();
        std::os::unix::fs::symlink(&plain, &link).unwrap();
        assert_eq!(tail(&fifo, 100), NOT_A_FILE);
        assert_eq!(tail(&link, 100), NOT_A_FILE);
        assert_eq!(tail(&plain, 8), "three\n");
        assert_eq!(tail(&dir.path().join("missing"), 8), "");
        assert_eq!(read_small(&link), None);
        // Opened for output, each becomes a fresh regular file; the link's target is untouched.
        for path in [&fifo, &link] {
            open_output(path).unwrap().write_all(b"new\n").unwrap();
            assert!(std::fs::symlink_metadata(path).unwrap().file_type().is_file());
            assert_eq!(std::fs::read_to_string(path).unwrap(), "new\n");
        }
        assert_eq!(std::fs::read_to_string(&plain).unwrap(), "one\ntwo\nthree\n");
        open_output(&plain).unwrap().write_all(b"four\n").unwrap();
        assert_eq!(std::fs::read_to_string(&plain).unwrap(), "one\ntwo\nthree\nfour\n", "appended");
    }
}
