//! Room for the journal on its file system, which the tasks' output shares:
//! a reserve file the manager keeps in its state directory and gives up to
//! the journal when a write finds the disk full, and a floor of free space
//! below which the manager takes no step (it places nothing and writes no
//! journal) until room comes back, while its API goes on answering.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The reserve's size, and the free space below which steps wait.
pub const RESERVE_BYTES: u64 = 8 << 20;
/// The free space at which steps resume (with the reserve made again).
const RESUME_BYTES: u64 = 2 * RESERVE_BYTES;
/// The reserve's name in the state directory.
pub const RESERVE_FILE: &str = "journal-reserve";

/// The journal's room: whether steps wait for it, and why.
#[derive(Debug)]
pub struct JournalRoom {
    dir: PathBuf,
    short: Option<String>,
    /// Whether steps waited when [`JournalRoom::news`] last said.
    told_short: bool,
}

impl JournalRoom {
    /// The room of a journal in `state_dir`, whose reserve is made now if
    /// there is room for it.
    pub fn new(state_dir: &Path) -> JournalRoom {
        let mut room = JournalRoom { dir: state_dir.to_path_buf(), short: None, told_short: false };
        room.check();
        room
    }

    /// Why steps wait now, if they do: checks the free space (below
    /// [`RESERVE_BYTES`] they wait; from twice that on they resume, the
    /// reserve made again first).
    pub fn check(&mut self) -> Option<&str> {
        let Some(free) = available(&self.dir) else { return self.short.as_deref() };
        if free < RESERVE_BYTES {
            self.short.get_or_insert_with(|| short_of_room(&self.dir, free));
        } else if free >= RESUME_BYTES {
            self.short = None;
            self.make_reserve();
        }
        self.short.as_deref()
    }

    /// Why steps wait, as last checked.
    pub fn why(&self) -> Option<&str> {
        self.short.as_deref()
    }

    /// A line for the operator when steps began or stopped waiting since
    /// the last call.
    pub fn news(&mut self) -> Option<String> {
        if self.short.is_some() == self.told_short {
            return None;
        }
        self.told_short = self.short.is_some();
        Some(self.short.clone().unwrap_or_else(|| "room for the journal again: placing".to_string()))
    }

    /// Gives the reserve up (a journal write found the disk full): steps
    /// wait from now on. False when there was no reserve to give.
    pub fn release(&mut self) -> bool {
        let path = self.dir.join(RESERVE_FILE);
        let had = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
        if had && std::fs::remove_file(&path).is_err() {
            return false;
        }
        self.short = Some(short_of_room(&self.dir, available(&self.dir).unwrap_or(0)));
        had
    }

    fn make_reserve(&self) {
        let path = self.dir.join(RESERVE_FILE);
        if std::fs::symlink_metadata(&path).is_ok() {
            return;
        }
        let made = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .and_then(|mut f| {
                let zeros = vec![0u8; 1 << 20];
                (0..RESERVE_BYTES >> 20).try_for_each(|_| f.write_all(&zeros))?;
                f.sync_all()
            });
        if made.is_err() {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Why steps wait with `free` bytes left where `dir` is.
fn short_of_room(dir: &Path, free: u64) -> String {
    format!(
        "not placing: the file system of {} has {} MB free, under the journal's {} MB; \
         jobs wait until {} MB are free (a task's output in its logs/ may have filled it)",
        dir.display(),
        free >> 20,
        RESERVE_BYTES >> 20,
        RESUME_BYTES >> 20
    )
}

/// Bytes an unprivileged writer may still use on `dir`'s file system.
fn available(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: an all-zero statvfs is a valid value to be filled in.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is NUL-terminated and `st` valid for the call.
    if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reserve_is_made_where_there_is_room_and_given_up_once() {
        let dir = pliant_live::scratch::ScratchDir::new("pliant-room").unwrap();
        let mut room = JournalRoom::new(dir.path());
        assert_eq!(room.check(), None);
        let reserve = dir.path().join(RESERVE_FILE);
        assert_eq!(std::fs::metadata(&reserve).unwrap().len(), RESERVE_BYTES);
        assert!(room.release());
        assert!(!reserve.exists());
        assert!(room.short.as_deref().is_some_and(|why| why.starts_with("not placing")), "{:?}", room.short);
        assert!(!room.release(), "the reserve is given once");
        assert_eq!(room.check(), None, "a disk with room resumes, the reserve made again");
        assert!(reserve.exists());
    }
}
