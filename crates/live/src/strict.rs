//! Ownership of the daemons' own files, checked as sshd's `StrictModes`
//! checks a user's, over the whole path: the state directory, the node
//! directory, the tokens, the TLS key and the node credential must belong
//! to the user the daemon runs as and be writable by nobody else, and every
//! component of the path that reaches them, walked from `/` with `lstat`,
//! must belong to root or to that user and be writable by nobody else (a
//! world-writable directory only with its sticky bit, as `/tmp`: the next
//! component, checked in turn, is then root's or the daemon's, which nobody
//! else can rename or remove there). A symbolic link on the way is followed
//! only if the link itself is root's or the daemon user's, and its target
//! is walked the same way; a secret's own file is never a link. Otherwise
//! another local user could have put the file there, or could point the
//! daemon at a place of their choosing, and the daemon refuses it naming
//! the component and the reason, before it writes anything. New files are
//! made with `O_EXCL|O_NOFOLLOW`, never through a link left in their place.

use std::ffi::OsString;
use std::fs::{File, Metadata, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

/// The most symbolic links a checked path may pass through (the kernel's
/// own bound before `ELOOP`).
const MAX_LINKS: usize = 40;

/// The user this process runs as.
fn me() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// Why `path` (of metadata `meta`) is unsafe for a daemon of user `uid` to
/// trust, if it is: `own` when it must be this user's (the file or directory
/// itself), else root's will do too (a directory above it).
fn unsafe_because(meta: &Metadata, uid: u32, own: bool) -> Option<String> {
    let owner = meta.uid();
    if owner != uid && (own || owner != 0) {
        return Some(format!("it belongs to uid {owner}, not to uid {uid} whom this daemon runs as"));
    }
    let sticky_dir = meta.is_dir() && meta.mode() & libc::S_ISVTX != 0;
    if meta.mode() & 0o022 != 0 && (own || !sticky_dir) {
        return Some(format!("group or other users may write to it (mode {:o})", meta.mode() & 0o7777));
    }
    None
}

/// A path as [`walk`] found it.
struct Walked {
    /// Where it leads: absolute, free of links, `.` and `..` (up to the
    /// last component that exists, when some are missing).
    real: PathBuf,
    /// The final component's metadata, when the whole path exists.
    meta: Option<Metadata>,
    /// The components still to be made below `real`, when some are missing.
    missing: Vec<OsString>,
}

/// Walks `path` from `/` one component at a time with `lstat`, for a daemon
/// of user `uid`: every directory on the way must pass [`unsafe_because`]
/// (root's or `uid`'s, writable by nobody else unless sticky), every link
/// must be root's or `uid`'s and is followed by walking its target the same
/// way, and the final component is followed when it is a link only if
/// `follow_last`. The final component's own checks are the caller's.
/// `refuse` words a refusal of the whole path.
fn walk(path: &Path, uid: u32, follow_last: bool, refuse: &dyn Fn(String) -> String) -> Result<Walked, String> {
    let absolute = std::path::absolute(path).map_err(|e| refuse(e.to_string()))?;
    let mut real = PathBuf::from("/");
    check_above(&real, uid, refuse)?;
    let mut rest: Vec<OsString> = Vec::new();
    push_front(&mut rest, &absolute);
    let mut links = 0;
    while let Some(name) = rest.pop() {
        if name == ".." {
            real.pop();
            continue;
        }
        let next = real.join(&name);
        let meta = match std::fs::symlink_metadata(&next) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                rest.push(name);
                rest.reverse();
                return Ok(Walked { real, meta: None, missing: rest });
            }
            Err(e) => return Err(refuse(format!("{}: {e}", next.display()))),
        };
        let last = rest.is_empty();
        if meta.file_type().is_symlink() && (follow_last || !last) {
            let owner = meta.uid();
            if owner != 0 && owner != uid {
                return Err(refuse(format!(
                    "{} on its path is a symbolic link that belongs to uid {owner}: only links of root or of \
                     uid {uid}, whom this daemon runs as, are followed",
                    next.display()
                )));
            }
            links += 1;
            if links > MAX_LINKS {
                return Err(refuse(format!("more than {MAX_LINKS} symbolic links on its path")));
            }
            let target = std::fs::read_link(&next).map_err(|e| refuse(format!("{}: {e}", next.display())))?;
            if target.is_absolute() {
                real = PathBuf::from("/");
            }
            push_front(&mut rest, &target);
            continue;
        }
        real = next;
        if last {
            return Ok(Walked { real, meta: Some(meta), missing: Vec::new() });
        }
        if !meta.is_dir() {
            return Err(refuse(format!("{} on its path is not a directory", real.display())));
        }
        check_above(&real, uid, refuse)?;
    }
    Ok(Walked { meta: std::fs::symlink_metadata(&real).ok(), real, missing: Vec::new() })
}

/// Puts the components of `path` (but its root) before those of `rest`,
/// which is kept in reverse order (the next component last).
fn push_front(rest: &mut Vec<OsString>, path: &Path) {
    for c in path.components().rev() {
        match c {
            Component::Normal(name) => rest.push(name.to_owned()),
            Component::ParentDir => rest.push("..".into()),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
}

/// Refuses the directory `dir` above a daemon's file unless it passes [`unsafe_because`].
fn check_above(dir: &Path, uid: u32, refuse: &dyn Fn(String) -> String) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(dir).map_err(|e| refuse(format!("{}: {e}", dir.display())))?;
    match unsafe_because(&meta, uid, false) {
        Some(why) => Err(refuse(format!("its parent {}: {why}", dir.display()))),
        None => Ok(()),
    }
}

/// The refusal of the `what` at `path`, for `why`.
fn refusal(what: &str, path: &Path) -> impl Fn(String) -> String {
    let named = format!("refusing the {what} {}", path.display());
    move |why| format!("{named}: {why}")
}

/// Refuses the final component of a walked path unless it is this user's
/// own (a directory when `dir`, a regular file otherwise, never a link)
/// and not writable by group or other.
fn check_own(walked: &Walked, dir: bool, uid: u32, refuse: &dyn Fn(String) -> String) -> Result<(), String> {
    let Some(meta) = &walked.meta else {
        let missing: PathBuf = walked.missing.iter().collect();
        return Err(refuse(format!("{} does not exist", walked.real.join(missing).display())));
    };
    if meta.file_type().is_symlink() {
        return Err(refuse("it is a symbolic link".into()));
    }
    if dir != meta.is_dir() || (!dir && !meta.is_file()) {
        return Err(refuse(format!("it is not a {}", if dir { "directory" } else { "regular file" })));
    }
    match unsafe_because(meta, uid, true) {
        Some(why) => Err(refuse(why)),
        None => Ok(()),
    }
}

/// Refuses the directory `path` unless it and every component of the path
/// that reaches it are safe (see the module's documentation). Its own
/// group and other *read* bits are the caller's business (it may take them
/// away). Returns where it is: absolute, free of links, `.` and `..`.
pub fn check_dir(path: &Path, what: &str) -> Result<PathBuf, String> {
    let (uid, refuse) = (me(), refusal(what, path));
    let walked = walk(path, uid, true, &refuse)?;
    check_own(&walked, true, uid, &refuse)?;
    Ok(walked.real)
}

/// Refuses the file `path` (a secret: a token, a key, a credential) unless
/// it and every component of the path that reaches it are safe; the file
/// itself is never a link.
pub fn check_file(path: &Path, what: &str) -> Result<(), String> {
    let (uid, refuse) = (me(), refusal(what, path));
    let walked = walk(path, uid, false, &refuse)?;
    check_own(&walked, false, uid, &refuse)
}

/// Makes the directory `path` with `mode` where it and the directories it
/// lacks are missing, one at a time and only below a path that passes the
/// checks ([`check_dir`]), which the whole then passes too. A component
/// someone else makes meanwhile is walked like any other (and refused if
/// it is not safe). Returns where it is, as [`check_dir`] does.
pub fn make_dir(path: &Path, what: &str, mode: u32) -> Result<PathBuf, String> {
    let (uid, refuse) = (me(), refusal(what, path));
    loop {
        let walked = walk(path, uid, true, &refuse)?;
        let Some(name) = walked.missing.first() else {
            check_own(&walked, true, uid, &refuse)?;
            return Ok(walked.real);
        };
        if name == ".." {
            return Err(refuse(format!("{} does not exist", walked.real.join(name).display())));
        }
        let next = walked.real.join(name);
        match std::fs::DirBuilder::new().mode(mode).create(&next) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                return Err(format!("cannot create the {what} {}: {e}", next.display()))
            }
            _ => {}
        }
    }
}

/// Creates `path` anew (it must not exist: `O_EXCL`, and never through a
/// link: `O_NOFOLLOW`) with `mode`, holding `text`, synced.
pub fn create_new(path: &Path, mode: u32, text: &[u8]) -> std::io::Result<File> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    file.write_all(text)?;
    file.sync_all()?;
    Ok(file)
}

/// Replaces `path` with a file holding `text`: written whole under
/// `path.partial` (removed first if a crash left it), then renamed, so no
/// reader ever sees half of it.
pub fn replace(path: &Path, mode: u32, text: &[u8]) -> std::io::Result<()> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = std::path::PathBuf::from(partial);
    match std::fs::remove_file(&partial) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    create_new(&partial, mode, text)?;
    std::fs::rename(&partial, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::ScratchDir;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_file_others_may_write_or_a_link_is_refused_with_its_path() {
        let dir = ScratchDir::new("pliant-strict").unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let file = dir.path().join("token");
        create_new(&file, 0o600, b"secret\n").unwrap();
        check_file(&file, "token").unwrap();
        check_dir(dir.path(), "state directory").unwrap();
        assert!(create_new(&file, 0o600, b"again").is_err(), "O_EXCL");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o620)).unwrap();
        let err = check_file(&file, "token").unwrap_err();
        assert!(err.contains(&file.display().to_string()) && err.contains("may write"), "{err}");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(check_file(&link, "token").unwrap_err().contains("symbolic link"));
        assert!(create_new(&link, 0o600, b"x").is_err(), "never through a link");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let err = check_file(&file, "token").unwrap_err();
        assert!(err.contains(&format!("its parent {}", dir.path().display())), "{err}");
        replace(&file, 0o600, b"new\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new\n");
    }

    /// A link of this user's is followed (its target walked like the rest),
    /// `..` is taken from where the link led, missing directories are made
    /// below a checked path, and a directory above that others may write to
    /// is named in the refusal, before anything is made below it.
    #[test]
    fn a_path_is_walked_from_the_root_through_its_links() {
        let dir = ScratchDir::new("pliant-strict-walk").unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        let made = make_dir(&dir.path().join("link/a/b"), "state directory", 0o700).unwrap();
        assert_eq!(made, std::fs::canonicalize(&real).unwrap().join("a/b"));
        assert_eq!(std::fs::metadata(&made).unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(check_dir(&dir.path().join("link/a/b/../b"), "state directory").unwrap(), made);
        std::os::unix::fs::symlink("real/a", dir.path().join("relative")).unwrap();
        assert_eq!(check_dir(&dir.path().join("relative/b"), "node directory").unwrap(), made);
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = make_dir(&open.join("state"), "state directory", 0o700).unwrap_err();
        let real_open = std::fs::canonicalize(&open).unwrap();
        assert!(err.contains(&format!("its parent {}: group or other users may write", real_open.display())), "{err}");
        assert!(!open.join("state").exists(), "made below a directory others may write to");
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
        make_dir(&open.join("state"), "state directory", 0o700).unwrap();
        let loops = dir.path().join("loop");
        std::os::unix::fs::symlink(&loops, &loops).unwrap();
        assert!(check_dir(&loops, "state directory").unwrap_err().contains("symbolic links on its path"));
    }
}
