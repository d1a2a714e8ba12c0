//! The manager's state directory: resolved to an absolute path at start
//! (agents, which may run in other directories or on other machines, are
//! sent paths inside it) and readable by its owner only (it holds the
//! journal with every command line, the tasks' output and the token).

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Mode of the state directory: its owner's only.
pub const MODE: u32 = 0o700;

/// Makes `dir` absolute (and free of `..` and symbolic links), creates it
/// (mode [`MODE`]) if it is missing, refuses it unless it and the
/// directories above it are safe ([`crate::strict::check_dir`]: this user's,
/// writable by nobody else), and takes group and other read access away
/// from it if it has any; `log` hears of that.
pub fn prepare(dir: &Path, log: &dyn Fn(&str)) -> Result<PathBuf, String> {
    let dir = std::path::absolute(dir).map_err(|e| format!("--state-dir {}: {e}", dir.display()))?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(MODE)
        .create(&dir)
        .map_err(|e| format!("cannot create the state directory {}: {e}", dir.display()))?;
    let dir = std::fs::canonicalize(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    crate::strict::check_dir(&dir, "state directory")?;
    let mode = std::fs::metadata(&dir).map_err(|e| format!("{}: {e}", dir.display()))?.permissions().mode();
    if mode & 0o077 != 0 {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(MODE))
            .map_err(|e| format!("cannot make {} private (chmod 700 it): {e}", dir.display()))?;
        log(&format!("{} could be read by other users: made private (mode 700)", dir.display()));
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_directory_becomes_absolute_and_private() {
        let scratch = pliant_live::scratch::ScratchDir::new("pliant-state-dir").unwrap();
        let open = scratch.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        let said = std::cell::RefCell::new(Vec::new());
        let dir = prepare(&open, &|m| said.borrow_mut().push(m.to_string())).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(said.borrow().len(), 1, "{said:?}");
        let relative = Path::new("pliant-state-dir-test-relative");
        let made = prepare(relative, &|_| {}).unwrap();
        std::fs::remove_dir(&made).unwrap();
        assert!(made.is_absolute(), "{}", made.display());
        assert!(made.ends_with(relative));
    }
}
