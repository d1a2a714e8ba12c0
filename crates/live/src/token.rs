//! The bearer tokens that guard the manager's API. The API token (users):
//! every request that changes something (submit, cancel) must carry
//! `Authorization: Bearer TOKEN`. The join token (agents, `pliant serve`
//! only): a new node registers with it and is issued its own node
//! credential (see [`crate::credentials`]); it can do nothing else.
//!
//! The manager takes each from its file option (`--token-file`,
//! `--join-token-file`), or else from `STATE_DIR/token` and
//! `STATE_DIR/join-token`, which it creates (mode 0600, 32 random bytes in
//! hex) on first start. Clients (the CLI) take the API token from
//! `--token-file`, else `PLIANT_TOKEN`, else the manager's `STATE_DIR/token`
//! when they can read it; agents take the join token likewise from
//! `--join-token-file`, `PLIANT_JOIN_TOKEN` or `STATE_DIR/join-token`.

use std::io::Read;
use std::net::ToSocketAddrs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Shortest token accepted from a file or the environment.
const MIN_LEN: usize = 16;
/// The environment variable clients read the API token from.
pub const ENV: &str = "PLIANT_TOKEN";
/// The environment variable agents read the join token from.
pub const JOIN_ENV: &str = "PLIANT_JOIN_TOKEN";

/// One of the manager's secrets: where it is kept and looked for.
struct Kind {
    /// Its file in the manager's state directory.
    file: &'static str,
    /// The environment variable clients read it from.
    env: &'static str,
    /// What it is called in messages.
    what: &'static str,
    /// Who reads it there, for the message when it is generated.
    readers: &'static str,
}

/// The API token (users).
const API: Kind = Kind { file: "token", env: ENV, what: "API token", readers: "clients" };
/// The join token (agents).
const JOIN: Kind = Kind { file: "join-token", env: JOIN_ENV, what: "join token", readers: "agents" };

/// The SHA-256 digest of `bytes` as `sha256:HEX`: what the manager keeps
/// of a node credential, so that its journal never holds the secret itself
/// (and a certificate's fingerprint).
pub fn digest(bytes: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, bytes);
    format!("sha256:{}", d.as_ref().iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// A secret shared by the manager and its clients.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

impl Token {
    /// A token from its text (surrounding white space ignored).
    pub fn parse(text: &str, origin: &str) -> Result<Token, String> {
        let t = text.trim();
        if t.len() < MIN_LEN || t.chars().any(|c| !c.is_ascii_graphic()) {
            return Err(format!(
                "{origin}: a token must be at least {MIN_LEN} printable characters without spaces \
                 (e.g. `openssl rand -hex 32`)"
            ));
        }
        Ok(Token(t.to_string()))
    }

    /// The token's text, for an `Authorization` header.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True when `given` is this token. The time taken depends on the
    /// lengths only, never on where the first differing byte is, so an
    /// attacker cannot guess the token a byte at a time by timing answers.
    pub fn matches(&self, given: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), given.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
        // Keeps the compiler from turning the fold into an early-exit comparison.
        std::hint::black_box(diff) == 0
    }

    /// The manager's API token: read from `token_file` when given, else from
    /// `STATE_DIR/token`, created with a fresh random token on first start.
    /// `log` hears of a token file others can read.
    pub fn for_manager(state_dir: &Path, token_file: Option<&Path>, log: &dyn Fn(&str)) -> Result<Token, String> {
        Token::kept(&API, state_dir, token_file, log)
    }

    /// The manager's join token (for `pliant serve`'s agents), likewise from
    /// `join_token_file` or `STATE_DIR/join-token`.
    pub fn join_for_manager(
        state_dir: &Path,
        join_token_file: Option<&Path>,
        log: &dyn Fn(&str),
    ) -> Result<Token, String> {
        Token::kept(&JOIN, state_dir, join_token_file, log)
    }

    fn kept(kind: &Kind, state_dir: &Path, given: Option<&Path>, log: &dyn Fn(&str)) -> Result<Token, String> {
        if let Some(file) = given {
            crate::strict::check_file(file, kind.what)?;
            let token = read(file)?;
            if let Ok(meta) = std::fs::metadata(file) {
                if meta.permissions().mode() & 0o077 != 0 {
                    log(&format!("warning: {} can be read by other users (chmod 600 it)", file.display()));
                }
            }
            return Ok(token);
        }
        let file = state_dir.join(kind.file);
        if file.symlink_metadata().is_ok() {
            crate::strict::check_file(&file, kind.what)?;
            return read(&file);
        }
        std::fs::create_dir_all(state_dir).map_err(|e| format!("{}: {e}", state_dir.display()))?;
        let token = Token::random()?;
        crate::strict::create_new(&file, 0o600, format!("{}\n", token.0).as_bytes())
            .map_err(|e| format!("cannot write the {} to {}: {e}", kind.what, file.display()))?;
        log(&format!(
            "{} generated in {} ({} read it there or from {})",
            kind.what,
            file.display(),
            kind.readers,
            kind.env
        ));
        Ok(token)
    }

    /// A fresh random token: 32 bytes from `/dev/urandom`, in hex.
    pub fn random() -> Result<Token, String> {
        let mut bytes = [0u8; 32];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut bytes))
            .map_err(|e| format!("cannot read /dev/urandom for a secret: {e}"))?;
        Ok(Token(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    /// A client's API token: `token_file` when given, else `PLIANT_TOKEN`,
    /// else the manager's `STATE_DIR/token` if this user can read it; `None`
    /// when none is found (reads still work; changes get a 401 that says why).
    pub fn for_client(token_file: Option<&Path>, state_dir: &Path) -> Result<Option<Token>, String> {
        Token::looked_up(&API, token_file, state_dir)
    }

    /// An agent's join token: `join_token_file` when given, else
    /// `PLIANT_JOIN_TOKEN`, else the manager's `STATE_DIR/join-token` if this
    /// user can read it; `None` when none is found.
    pub fn join_for_agent(join_token_file: Option<&Path>, state_dir: &Path) -> Result<Option<Token>, String> {
        Token::looked_up(&JOIN, join_token_file, state_dir)
    }

    fn looked_up(kind: &Kind, given: Option<&Path>, state_dir: &Path) -> Result<Option<Token>, String> {
        if let Some(file) = given {
            return read(file).map(Some);
        }
        if let Ok(text) = std::env::var(kind.env) {
            return Token::parse(&text, kind.env).map(Some);
        }
        Ok(read(&state_dir.join(kind.file)).ok())
    }
}

fn read(file: &Path) -> Result<Token, String> {
    let text =
        std::fs::read_to_string(file).map_err(|e| format!("cannot read the token file {}: {e}", file.display()))?;
    Token::parse(&text, &file.display().to_string())
}

/// Refuses an address reachable from other machines unless the operator
/// chose the token (`explicit`, i.e. `--token-file`): a token generated into
/// the state directory is fine on loopback, where only this machine's users
/// reach the port and only the state directory's owner can read the token,
/// but a cluster open to the network must be set up knowingly.
pub fn check_listen(listen: &str, explicit: bool) -> Result<(), String> {
    let addrs: Vec<_> =
        listen.to_socket_addrs().map_err(|e| format!("cannot resolve --listen {listen}: {e}"))?.collect();
    if explicit || addrs.iter().all(|a| a.ip().is_loopback()) {
        return Ok(());
    }
    Err(format!(
        "refusing to listen on {listen} without a token: it is reachable from other machines, and \
         anyone who reaches the API can run commands as this user. Create a secret (e.g. \
         `openssl rand -hex 32 > /etc/pliant/token; chmod 600 /etc/pliant/token`) and give it with \
         --token-file to the manager, its agents and its clients (or set {ENV} for clients)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_token_matches() {
        let t = Token::parse("0123456789abcdef0123\n", "test").unwrap();
        assert!(t.matches("0123456789abcdef0123"));
        assert!(!t.matches("0123456789abcdef0124"));
        assert!(!t.matches("0123456789abcdef012"));
        assert!(!t.matches(""));
        assert!(Token::parse("short", "test").is_err());
        assert!(Token::parse("0123456789 abcdef0123", "test").is_err());
    }

    #[test]
    fn loopback_needs_no_explicit_token_and_other_addresses_do() {
        assert_eq!(check_listen("127.0.0.1:7466", false), Ok(()));
        assert_eq!(check_listen("[::1]:7466", false), Ok(()));
        assert_eq!(check_listen("0.0.0.0:7466", true), Ok(()));
        let err = check_listen("0.0.0.0:7466", false).unwrap_err();
        assert!(err.contains("refusing to listen on 0.0.0.0:7466 without a token"), "{err}");
    }
}
