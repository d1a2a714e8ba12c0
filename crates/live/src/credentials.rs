//! Node credentials (Kubernetes' per-kubelet credentials and
//! NodeRestriction): a node joins with the join token and is issued a
//! credential of its own, with which alone anyone may act as that node
//! (register it again, heartbeat, report, pick up its orders).
//!
//! Only each credential's SHA-256 digest is kept ([`digest`]). A credential
//! issued but not yet used may be issued again to a registration with the
//! join token (its answer may have been lost, or the agent killed before it
//! kept it); once its agent has used it, the join token cannot take the node
//! over.

use crate::token::{digest, Token};
use std::collections::BTreeMap;

/// Who registers a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Joiner<'a> {
    /// The holder of the join token: a node that has not joined yet.
    JoinToken,
    /// An agent with this credential (the node's own, if it is).
    Credential(&'a str),
}

/// The digests of the node credentials a manager issued, by node name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeCredentials {
    /// Credentials their agents have used.
    used: BTreeMap<String, Token>,
    /// Credentials issued and not used yet.
    unused: BTreeMap<String, Token>,
}

/// A credential's digest, as compared in constant time.
fn digest_of(credential: &str) -> Token {
    Token::parse(&digest(credential.as_bytes()), "digest").expect("a digest is a valid token")
}

/// The refusal of a registration as node `name` with a credential that is
/// not its own: the same whether there is such a node and whether it holds
/// a credential, so that nobody learns the cluster's node names from it.
pub fn not_its_credential(name: &str) -> String {
    format!(
        "not a credential this manager issued to node `{name}`: only a node's own agent may register as it \
         (neither the API token nor another node's credential can); a node new to this manager joins with the \
         join token (the manager's STATE_DIR/join-token)"
    )
}

impl NodeCredentials {
    /// The credentials of these digests (`sha256:HEX` by node name).
    pub fn from_digests(
        used: BTreeMap<String, String>,
        unused: BTreeMap<String, String>,
    ) -> Result<NodeCredentials, String> {
        let parse = |m: BTreeMap<String, String>| -> Result<BTreeMap<String, Token>, String> {
            m.into_iter().map(|(name, d)| Ok((name, Token::parse(&d, "a node credential's digest")?))).collect()
        };
        Ok(NodeCredentials { used: parse(used)?, unused: parse(unused)? })
    }

    /// The digests of the credentials used, and of those not used yet.
    pub fn digests(&self) -> (BTreeMap<&str, &str>, BTreeMap<&str, &str>) {
        fn show(m: &BTreeMap<String, Token>) -> BTreeMap<&str, &str> {
            m.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect()
        }
        (show(&self.used), show(&self.unused))
    }

    /// True when node `name` has a credential.
    pub fn has(&self, name: &str) -> bool {
        self.used.contains_key(name) || self.unused.contains_key(name)
    }

    /// A registration of node `name` by `joiner`: with the join token, a
    /// node without a used credential is issued a new one (returned); with
    /// the node's own credential it registers again (`None`, the credential
    /// counted as used). Anything else is refused with why.
    pub fn admit(&mut self, name: &str, joiner: Joiner) -> Result<Option<Token>, String> {
        match joiner {
            Joiner::JoinToken if self.used.contains_key(name) => Err(format!(
                "node `{name}` has joined already: only its own agent, with the node credential it was \
                 issued (in its --node-dir), may register as it; the join token cannot take a node over"
            )),
            Joiner::JoinToken => {
                let credential = Token::random()?;
                self.unused.insert(name.to_string(), digest_of(credential.as_str()));
                Ok(Some(credential))
            }
            Joiner::Credential(given) => match self.check(name, given) {
                Some(_) => Ok(None),
                None => Err(not_its_credential(name)),
            },
        }
    }

    /// Voids node `name`'s credential, used or not; false when it had none.
    /// Its agent must join again with the join token, and is then issued a
    /// new one: a revocation is also how a credential is rotated.
    pub fn revoke(&mut self, name: &str) -> bool {
        let used = self.used.remove(name).is_some();
        self.unused.remove(name).is_some() || used
    }

    /// True when `given` is node `name`'s credential, which then counts as
    /// used; `Some(true)` when this is its first use, `None` when it is not
    /// the node's.
    pub fn check(&mut self, name: &str, given: &str) -> Option<bool> {
        let given = digest_of(given);
        if self.used.get(name).is_some_and(|d| d.matches(given.as_str())) {
            return Some(false);
        }
        if self.unused.get(name).is_some_and(|d| d.matches(given.as_str())) {
            let d = self.unused.remove(name).expect("checked");
            self.used.insert(name.to_string(), d);
            return Some(true);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_join_token_is_issued_a_credential_until_it_is_used_and_never_after() {
        let mut book = NodeCredentials::default();
        let first = book.admit("n0", Joiner::JoinToken).unwrap().unwrap();
        // The answer was lost: the join token is issued another, and the first is void.
        let second = book.admit("n0", Joiner::JoinToken).unwrap().unwrap();
        assert_ne!(first, second);
        assert_eq!(book.check("n0", first.as_str()), None);
        assert_eq!(book.admit("n0", Joiner::Credential(second.as_str())), Ok(None));
        assert_eq!(book.check("n0", second.as_str()), Some(false), "used at its registration");
        let taken = book.admit("n0", Joiner::JoinToken).unwrap_err();
        assert!(taken.contains("has joined already"), "{taken}");
        // Another node's credential is no credential of n0's.
        let other = book.admit("n1", Joiner::JoinToken).unwrap().unwrap();
        assert!(book.admit("n0", Joiner::Credential(other.as_str())).is_err());
        assert_eq!(book.check("n0", other.as_str()), None);
        assert_eq!(book.check("n1", other.as_str()), Some(true));
        let stale = book.admit("n2", Joiner::Credential(other.as_str())).unwrap_err();
        assert_eq!(stale, not_its_credential("n2"), "a node without a credential is refused as any other");
        // Only digests are kept, and they are read back as they were.
        let (used, unused) = book.digests();
        assert!(used.values().chain(unused.values()).all(|d| d.starts_with("sha256:")));
        assert!(!format!("{used:?}").contains(second.as_str()));
        let own = |m: BTreeMap<&str, &str>| m.into_iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        assert_eq!(NodeCredentials::from_digests(own(used), own(unused)).unwrap(), book);
    }

    #[test]
    fn a_revoked_credential_is_void_and_its_node_joins_again_with_the_join_token() {
        let mut book = NodeCredentials::default();
        let old = book.admit("n0", Joiner::JoinToken).unwrap().unwrap();
        assert_eq!(book.check("n0", old.as_str()), Some(true));
        assert!(book.revoke("n0"));
        assert!(!book.revoke("n0"), "nothing left to revoke");
        assert_eq!(book.check("n0", old.as_str()), None);
        assert!(book.admit("n0", Joiner::Credential(old.as_str())).is_err());
        let new = book.admit("n0", Joiner::JoinToken).unwrap().unwrap();
        assert_ne!(new, old);
        assert_eq!(book.check("n0", new.as_str()), Some(true));
    }
}
