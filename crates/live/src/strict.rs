//! Ownership of the daemons' own files, checked as sshd's `StrictModes`
//! checks a user's: the state directory, the node directory, the tokens,
//! the TLS key and the node credential must belong to the user the daemon
//! runs as and be writable by nobody else, and so must every directory
//! above them (or belong to root; a world-writable one only with its sticky
//! bit, as `/tmp`, where nobody can replace what is not theirs). Otherwise
//! another local user could have put the file there, or could replace it,
//! and the daemon refuses it with the path and the reason. New files are
//! made with `O_EXCL|O_NOFOLLOW`, never through a link left in their place.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// The user this process runs as.
fn me() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// Why `path` (of metadata `meta`) is unsafe for a daemon of user `uid` to
/// trust, if it is: `own` when it must be this user's (the file or directory
/// itself), else root's will do too (a directory above it).
fn unsafe_because(meta: &std::fs::Metadata, uid: u32, own: bool) -> Option<String> {
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

/// Refuses `path` unless it is this user's own (a directory when `dir`, a
/// regular file otherwise, never a link), not writable by group or other,
/// and every directory above it passes [`unsafe_because`].
fn check(path: &Path, what: &str, dir: bool) -> Result<(), String> {
    let refuse = |why: String| Err(format!("refusing the {what} {}: {why}", path.display()));
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) => return refuse(e.to_string()),
    };
    if meta.file_type().is_symlink() {
        return refuse("it is a symbolic link".into());
    }
    if dir != meta.is_dir() || (!dir && !meta.is_file()) {
        return refuse(format!("it is not a {}", if dir { "directory" } else { "regular file" }));
    }
    let uid = me();
    if let Some(why) = unsafe_because(&meta, uid, true) {
        return refuse(why);
    }
    let absolute = std::path::absolute(path).map_err(|e| format!("{}: {e}", path.display()))?;
    for parent in absolute.ancestors().skip(1) {
        let meta = std::fs::metadata(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        if let Some(why) = unsafe_because(&meta, uid, false) {
            return Err(format!("refusing the {what} {}: its parent {}: {why}", path.display(), parent.display()));
        }
    }
    Ok(())
}

/// Refuses the directory `path` unless it and every directory above it are
/// safe (see the module's documentation). Its own group and other *read*
/// bits are the caller's business (it may take them away).
pub fn check_dir(path: &Path, what: &str) -> Result<(), String> {
    check(path, what, true)
}

/// Refuses the file `path` (a secret: a token, a key, a credential) unless
/// it and every directory above it are safe.
pub fn check_file(path: &Path, what: &str) -> Result<(), String> {
    check(path, what, false)
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
}
