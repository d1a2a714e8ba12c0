//! What a daemon of live mode (the manager, the Slurm controller, an agent)
//! needs at start beside its own work: a private state directory, SIGINT
//! and SIGTERM as a request to stop, and the address it listens on, for
//! its messages.

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Mode of a state directory: its owner's only.
pub const STATE_DIR_MODE: u32 = 0o700;

/// Makes `dir` absolute (and free of `..` and symbolic links), refuses it
/// unless every component of the path that reaches it is safe and it is
/// this user's, writable by nobody else ([`crate::strict::make_dir`]:
/// checked before anything is made, the missing directories then made mode
/// [`STATE_DIR_MODE`]), and takes group and other read access away from it
/// if it has any; `log` hears of that.
pub fn private_state_dir(dir: &Path, log: &dyn Fn(&str)) -> Result<PathBuf, String> {
    let dir = crate::strict::make_dir(dir, "state directory", STATE_DIR_MODE)?;
    let mode = std::fs::metadata(&dir).map_err(|e| format!("{}: {e}", dir.display()))?.permissions().mode();
    if mode & 0o077 != 0 {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(STATE_DIR_MODE))
            .map_err(|e| format!("cannot make {} private (chmod 700 it): {e}", dir.display()))?;
        log(&format!("{} could be read by other users: made private (mode 700)", dir.display()));
    }
    Ok(dir)
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Installs handlers by which SIGINT and SIGTERM ask the daemon to stop
/// cleanly (an agent then kills its tasks and removes their cgroups;
/// SIGKILL leaves them running, for the next start to take over), and
/// returns the flag they set.
pub fn stop_on_signals() -> &'static AtomicBool {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe { libc::signal(sig, on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t) };
    }
    &STOP
}

/// The address a listener is on, for messages.
pub fn listening_address(listener: &TcpListener) -> String {
    listener.local_addr().map_or_else(|_| "?".into(), |a| a.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_state_directory_becomes_absolute_and_private() {
        let scratch = crate::scratch::ScratchDir::new("pliant-state-dir").unwrap();
        let open = scratch.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        let said = std::cell::RefCell::new(Vec::new());
        let dir = private_state_dir(&open, &|m| said.borrow_mut().push(m.to_string())).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(said.borrow().len(), 1, "{said:?}");
        let relative = Path::new("pliant-state-dir-test-relative");
        let made = private_state_dir(relative, &|_| {}).unwrap();
        std::fs::remove_dir(&made).unwrap();
        assert!(made.is_absolute(), "{}", made.display());
        assert!(made.ends_with(relative));
    }

    #[test]
    fn a_listener_names_its_port() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        assert_eq!(listening_address(&listener), format!("127.0.0.1:{port}"));
    }
}
