//! An agent's own state on its machine (`pliant agent --node-dir`), mode
//! 0700: its node credential (`credential`, 0600: issued by the manager when
//! the node joined with the join token; only this agent can then act as the
//! node), the manager's agent
//! timeout (`agent-timeout-ms`), its last contact with the manager
//! (`contact`, see `crate::fence`) and its watchdog's process id.

use crate::fence::Contact;
use crate::token::Token;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// An agent's node directory.
#[derive(Debug, Clone)]
pub struct NodeDir {
    dir: PathBuf,
}

impl NodeDir {
    /// Opens `dir` (made absolute, created readable by its owner only),
    /// refused unless it and the path that reaches it are safe
    /// ([`crate::strict::make_dir`]: checked before anything is made).
    pub fn open(dir: &Path) -> Result<NodeDir, String> {
        let dir = crate::strict::make_dir(dir, "node directory", 0o700)?;
        let fail = |e: std::io::Error| format!("node directory {}: {e}", dir.display());
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).map_err(fail)?;
        Ok(NodeDir { dir })
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The node credential, once the manager has issued one.
    pub fn credential(&self) -> Result<Option<Token>, String> {
        let file = self.dir.join("credential");
        if file.symlink_metadata().is_ok() {
            crate::strict::check_file(&file, "node credential")?;
        }
        match std::fs::read_to_string(&file) {
            Ok(text) => Token::parse(&text, &file.display().to_string()).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("node credential {}: {e}", file.display())),
        }
    }

    /// Keeps the node credential the manager issued (mode 0600).
    pub fn set_credential(&self, credential: &Token) -> Result<(), String> {
        let file = self.dir.join("credential");
        let fail = |e: std::io::Error| format!("node credential {}: {e}", file.display());
        // Written whole under another name, then renamed: an agent killed
        // meanwhile leaves no half credential.
        crate::strict::replace(&file, 0o600, format!("{}\n", credential.as_str()).as_bytes()).map_err(fail)
    }

    /// The agent timeout the manager gave at the last registration, if any.
    pub fn agent_timeout(&self) -> Option<Duration> {
        let text = std::fs::read_to_string(self.dir.join("agent-timeout-ms")).ok()?;
        text.trim().parse().ok().map(Duration::from_millis)
    }

    /// Keeps the agent timeout the manager gave.
    pub fn set_agent_timeout(&self, timeout: Duration) -> Result<(), String> {
        let file = self.dir.join("agent-timeout-ms");
        std::fs::write(&file, format!("{}\n", timeout.as_millis())).map_err(|e| format!("{}: {e}", file.display()))
    }

    /// The contact file.
    pub fn contact(&self) -> Contact {
        Contact::new(self.dir.join("contact"))
    }

    /// Where the watchdog's process id is kept.
    pub fn watchdog_pid(&self) -> PathBuf {
        self.dir.join("watchdog.pid")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_credential_is_kept_private() {
        let scratch = crate::scratch::ScratchDir::new("pliant-node-dir").unwrap();
        let node = NodeDir::open(&scratch.path().join("node")).unwrap();
        assert_eq!(node.credential().unwrap(), None);
        let issued = Token::random().unwrap();
        node.set_credential(&issued).unwrap();
        assert_eq!(node.credential().unwrap(), Some(issued));
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&node.path().join("credential")), 0o600);
        assert_eq!(mode(node.path()), 0o700);
        assert_eq!(node.agent_timeout(), None);
        node.set_agent_timeout(Duration::from_millis(2500)).unwrap();
        assert_eq!(node.agent_timeout(), Some(Duration::from_millis(2500)));
    }
}
