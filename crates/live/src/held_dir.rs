//! A directory the agent holds open, and what it does inside a task's
//! directory: every entry is made, opened, given, taken back and removed
//! relative to the descriptor it holds (`mkdirat`, `openat` with
//! `O_NOFOLLOW`, `fchown`/`fchmod` on the entry's own descriptor,
//! `unlinkat`), never through a path a task could have changed since. A
//! task (or any process of its user) may put a link, a file or another
//! directory in any entry's place at any moment: the agent then acts on
//! what it opened, or on the link itself, never on what the link points at.
//!
//! This is how OpenSSH and systemd touch directories other users can write.

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// How often a directory is made again when something keeps taking its
/// place between the `mkdirat` and the `openat` (a task racing the agent).
const MAKE_ATTEMPTS: u32 = 3;
/// The deepest a tree in a task's directory may go for the agent to walk
/// it (removing, giving, taking back): each level holds a descriptor and
/// a stack frame of the agent, and a task could nest directories without end.
const MAX_DEPTH: u32 = 64;

/// A directory held open by its descriptor.
#[derive(Debug)]
pub struct HeldDir {
    fd: OwnedFd,
    path: PathBuf,
}

/// The status of an entry itself (`fstatat` with `AT_SYMLINK_NOFOLLOW`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Its owner.
    pub uid: u32,
    /// Its group.
    pub gid: u32,
    /// Its links (hard links of a regular file).
    pub nlink: u64,
    /// A directory (not a link to one).
    pub is_dir: bool,
    /// A regular file (not a link to one).
    pub is_file: bool,
}

fn cname(name: &str) -> io::Result<CString> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{name:?} is not one entry's name")));
    }
    CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in a name"))
}

/// `Ok(rc)`, or the error `rc` says there was.
fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// Opens `name` under `dir` (`AT_FDCWD`: a path) as a directory, never through a link.
fn open_dir_at(dir: RawFd, name: &CStr) -> io::Result<OwnedFd> {
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: openat with a NUL-terminated name; the descriptor returned is ours.
    let fd = check(unsafe { libc::openat(dir, name.as_ptr(), flags) })?;
    // SAFETY: `fd` was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

impl HeldDir {
    /// Opens `path` as a directory; its last component must not be a link.
    /// For the daemon's own directories, whose parents no task can write.
    pub fn open(path: &Path) -> io::Result<HeldDir> {
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in a path"))?;
        let fd = open_dir_at(libc::AT_FDCWD, &c).map_err(|e| with_path(e, path))?;
        Ok(HeldDir { fd, path: path.to_path_buf() })
    }

    /// Makes `path` and its missing parents readable by their owner only
    /// (a task's output and saved state are its owner's), then opens it.
    /// For the daemon's own directories, whose parents no task can write.
    pub fn make_all(path: &Path) -> io::Result<HeldDir> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(path).map_err(|e| with_path(e, path))?;
        HeldDir::open(path)
    }

    /// The path it was opened by, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The subdirectory `name`, made (mode 0700) if missing and opened
    /// without following a link. Whatever else is in its place (a link, a
    /// file) is removed and a directory made instead.
    pub fn make_child(&self, name: &str) -> io::Result<HeldDir> {
        let c = cname(name)?;
        let path = self.path.join(name);
        for _ in 0..MAKE_ATTEMPTS {
            // SAFETY: mkdirat with a NUL-terminated name.
            match check(unsafe { libc::mkdirat(self.fd.as_raw_fd(), c.as_ptr(), 0o700) }) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {}
                Err(e) => return Err(with_path(e, &path)),
            }
            match open_dir_at(self.fd.as_raw_fd(), &c) {
                Ok(fd) => return Ok(HeldDir { fd, path }),
                // A link (ELOOP) or something not a directory in its place.
                Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR | libc::ENOENT)) => {
                    self.remove(name)?;
                }
                Err(e) => return Err(with_path(e, &path)),
            }
        }
        let why = "something else kept taking its place (refused: not the directory the agent made)";
        Err(io::Error::new(io::ErrorKind::AlreadyExists, format!("{}: {why}", path.display())))
    }

    /// The existing subdirectory `name`, opened without following a link;
    /// `None` when there is none (a link or a file in its place included).
    pub fn child(&self, name: &str) -> io::Result<Option<HeldDir>> {
        self.child_c(&cname(name)?)
    }

    fn child_c(&self, name: &CStr) -> io::Result<Option<HeldDir>> {
        match open_dir_at(self.fd.as_raw_fd(), name) {
            Ok(fd) => Ok(Some(HeldDir { fd, path: self.join(name) })),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR | libc::ENOENT)) => Ok(None),
            Err(e) => Err(with_path(e, &self.join(name))),
        }
    }

    /// Removes the entry `name` (a file, a link or a whole directory tree,
    /// never following a link); fine when it is not there.
    pub fn remove(&self, name: &str) -> io::Result<()> {
        self.remove_c(&cname(name)?, 0)
    }

    fn remove_c(&self, name: &CStr, depth: u32) -> io::Result<()> {
        // SAFETY: unlinkat with a NUL-terminated name.
        match check(unsafe { libc::unlinkat(self.fd.as_raw_fd(), name.as_ptr(), 0) }) {
            Ok(_) => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(()),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EISDIR | libc::EPERM)) => {}
            Err(e) => return Err(with_path(e, &self.join(name))),
        }
        if let Some(dir) = self.child_c(name)? {
            dir.deeper(depth)?;
            for entry in dir.names()? {
                dir.remove_c(&entry, depth + 1)?;
            }
        }
        // SAFETY: as above.
        match check(unsafe { libc::unlinkat(self.fd.as_raw_fd(), name.as_ptr(), libc::AT_REMOVEDIR) }) {
            Err(e) if e.raw_os_error() != Some(libc::ENOENT) => Err(with_path(e, &self.join(name))),
            _ => Ok(()),
        }
    }

    /// The path of the entry `name`, for messages.
    fn join(&self, name: &CStr) -> PathBuf {
        self.path.join(std::ffi::OsStr::from_bytes(name.to_bytes()))
    }

    /// Gives this directory to `uid`:`gid`, readable by its owner only
    /// (`fchown` and `fchmod` on the descriptor held).
    pub fn give(&self, uid: u32, gid: u32) -> io::Result<()> {
        let fd = self.fd.as_raw_fd();
        // SAFETY: fchown and fchmod on a descriptor this value owns.
        check(unsafe { libc::fchown(fd, uid, gid) }).map_err(|e| with_path(e, &self.path))?;
        check(unsafe { libc::fchmod(fd, 0o700) }).map_err(|e| with_path(e, &self.path))?;
        Ok(())
    }

    /// The status of the entry `name` itself; `None` when it is not there.
    pub fn entry(&self, name: &str) -> io::Result<Option<Entry>> {
        self.entry_c(&cname(name)?)
    }

    fn entry_c(&self, c: &CStr) -> io::Result<Option<Entry>> {
        // SAFETY: an all-zero stat is a valid value to be filled in.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstatat with a NUL-terminated name and a stat to fill in.
        let rc = unsafe { libc::fstatat(self.fd.as_raw_fd(), c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
        match check(rc) {
            Ok(_) => Ok(Some(Entry {
                uid: st.st_uid,
                gid: st.st_gid,
                nlink: st.st_nlink as u64,
                is_dir: st.st_mode & libc::S_IFMT == libc::S_IFDIR,
                is_file: st.st_mode & libc::S_IFMT == libc::S_IFREG,
            })),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
            Err(e) => Err(with_path(e, &self.join(c))),
        }
    }

    /// Changes the owner of the entry `name` itself, a link's included (never what it points at).
    fn chown_entry(&self, name: &CStr, uid: u32, gid: u32) -> io::Result<()> {
        // SAFETY: fchownat with a NUL-terminated name.
        let rc = unsafe { libc::fchownat(self.fd.as_raw_fd(), name.as_ptr(), uid, gid, libc::AT_SYMLINK_NOFOLLOW) };
        match check(rc) {
            Err(e) if e.raw_os_error() != Some(libc::ENOENT) => Err(with_path(e, &self.join(name))),
            _ => Ok(()),
        }
    }

    /// Hands every entry below this directory that `from` says yes to
    /// over to `uid`:`gid`, directories first and then what is in them;
    /// links are not followed, and a directory swapped for a link halfway
    /// is not entered.
    fn chown_tree(&self, uid: u32, gid: u32, from: &dyn Fn(&Entry) -> bool, depth: u32) -> io::Result<()> {
        self.deeper(depth)?;
        for name in self.names()? {
            let Some(entry) = self.entry_c(&name)? else { continue };
            if from(&entry) {
                self.chown_entry(&name, uid, gid)?;
            }
            if entry.is_dir {
                if let Some(dir) = self.child_c(&name)? {
                    dir.chown_tree(uid, gid, from, depth + 1)?;
                }
            }
        }
        Ok(())
    }

    /// Gives what is below this directory and belongs to root to
    /// `uid`:`gid` (what [`HeldDir::take_back`] took from a task's user),
    /// but for the entries named in `kept` (the agent's own files) and
    /// files with another name elsewhere (a hard link: not the task's).
    pub fn give_tree(&self, uid: u32, gid: u32, kept: &[&str]) -> io::Result<()> {
        let given = |e: &Entry| e.uid == 0 && (e.is_dir || (e.is_file && e.nlink == 1));
        for name in self.names()? {
            if kept.iter().any(|k| k.as_bytes() == name.to_bytes()) {
                continue;
            }
            let Some(entry) = self.entry_c(&name)? else { continue };
            if given(&entry) {
                self.chown_entry(&name, uid, gid)?;
            }
            if entry.is_dir {
                if let Some(dir) = self.child_c(&name)? {
                    dir.chown_tree(uid, gid, &given, 1)?;
                }
            }
        }
        Ok(())
    }

    /// Gives this directory and everything below it that is not root's to
    /// root (a task's user then owns nothing here).
    pub fn take_back(&self) -> io::Result<()> {
        self.chown_tree(0, 0, &|e: &Entry| e.uid != 0 || e.gid != 0, 0)?;
        // SAFETY: fchown on a descriptor this value owns.
        check(unsafe { libc::fchown(self.fd.as_raw_fd(), 0, 0) }).map_err(|e| with_path(e, &self.path))?;
        Ok(())
    }

    /// Opens the file `name` with `flags` (`O_NOFOLLOW` and `O_CLOEXEC`
    /// added), made with `mode` when `flags` has `O_CREAT`.
    pub fn open_file(&self, name: &str, flags: libc::c_int, mode: libc::mode_t) -> io::Result<File> {
        let c = cname(name)?;
        let flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: openat with a NUL-terminated name; the descriptor returned is ours.
        let fd = check(unsafe { libc::openat(self.fd.as_raw_fd(), c.as_ptr(), flags, mode as libc::c_uint) })
            .map_err(|e| with_path(e, &self.path.join(name)))?;
        // SAFETY: `fd` was just opened and is owned by nobody else.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    /// Refuses to walk this directory, `depth` levels below where the walk
    /// started, when that is past [`MAX_DEPTH`].
    fn deeper(&self, depth: u32) -> io::Result<()> {
        if depth < MAX_DEPTH {
            return Ok(());
        }
        let why = format!("{}: nested deeper than {MAX_DEPTH} directories: not walked", self.path.display());
        Err(io::Error::other(why))
    }

    /// The names in this directory (not `.` and `..`).
    fn names(&self) -> io::Result<Vec<CString>> {
        // SAFETY: dup of a descriptor this value owns; fdopendir then owns the copy.
        let copy = check(unsafe { libc::fcntl(self.fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) })?;
        // SAFETY: `copy` is a directory descriptor of ours; closedir below closes it.
        let stream = unsafe { libc::fdopendir(copy) };
        if stream.is_null() {
            let e = io::Error::last_os_error();
            // SAFETY: fdopendir failed, so `copy` is still ours to close.
            unsafe { libc::close(copy) };
            return Err(with_path(e, &self.path));
        }
        // SAFETY: rewinding a stream this function opened (a dup shares the offset).
        unsafe { libc::rewinddir(stream) };
        let mut names = Vec::new();
        loop {
            // SAFETY: readdir on an open stream; the entry is read before the next call.
            let entry = unsafe { libc::readdir(stream) };
            if entry.is_null() {
                break;
            }
            // SAFETY: d_name is NUL-terminated in the entry readdir returned.
            let name = unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) };
            if name.to_bytes() != b"." && name.to_bytes() != b".." {
                names.push(name.to_owned());
            }
        }
        // SAFETY: closes the stream (and `copy`) opened above.
        unsafe { libc::closedir(stream) };
        Ok(names)
    }
}

impl AsRawFd for HeldDir {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// `e` with `path` named.
fn with_path(e: io::Error, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::ScratchDir;
    use std::ffi::OsStr;

    #[test]
    fn trees_are_removed_and_made_without_following_links_and_too_deep_ones_are_refused() {
        let scratch = ScratchDir::new("pliant-held-dir").unwrap();
        let outside = scratch.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("kept"), "not the task's").unwrap();
        let dir = HeldDir::make_all(&scratch.path().join("task")).unwrap();
        let tree = dir.make_child("tree").unwrap();
        std::fs::write(tree.path().join("file"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, tree.path().join("link")).unwrap();
        std::fs::create_dir_all(tree.path().join(OsStr::from_bytes(b"not-utf8-\xff")).join("inner")).unwrap();
        dir.remove("tree").unwrap();
        assert!(!tree.path().exists());
        assert_eq!(std::fs::read_to_string(outside.join("kept")).unwrap(), "not the task's");
        // A link in a directory's place is removed and a directory made.
        std::os::unix::fs::symlink(&outside, dir.path().join("made")).unwrap();
        let made = dir.make_child("made").unwrap();
        assert!(std::fs::symlink_metadata(made.path()).unwrap().is_dir());
        assert!(outside.join("kept").exists());
        assert!(dir.make_child("../escape").is_err(), "one entry's name only");
        let deep = (0..=MAX_DEPTH).fold(dir.path().join("deep"), |p, _| p.join("d"));
        std::fs::create_dir_all(&deep).unwrap();
        let err = dir.remove("deep").unwrap_err().to_string();
        assert!(err.contains(&format!("nested deeper than {MAX_DEPTH} directories")), "{err}");
    }
}
