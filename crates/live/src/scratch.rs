//! Scratch directories that clean up after themselves.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// A fresh directory under the system temp dir, removed with its contents when dropped.
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    /// Creates `<tmp>/<prefix>-<pid>-<n>`.
    pub fn new(prefix: &str) -> io::Result<ScratchDir> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("{prefix}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        Ok(ScratchDir { path })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A subdirectory `name` that any user may write to (mode 1777, as
    /// `/tmp`), made if missing, with the scratch directory made reachable
    /// to others (mode 0755): where a task run as another user than the
    /// caller (by default `nobody`) leaves what the caller reads.
    pub fn shared(&self, name: &str) -> io::Result<PathBuf> {
        use std::os::unix::fs::PermissionsExt;
        let dir = self.path.join(name);
        std::fs::create_dir_all(&dir)?;
        std::fs::set_permissions(&self.path, std::fs::Permissions::from_mode(0o755))?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777))?;
        Ok(dir)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
