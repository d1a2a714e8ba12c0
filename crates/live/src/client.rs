//! A small blocking client for the manager's API (used by the CLI, agents
//! and the tests): `ureq` over TLS (`rustls`), speaking only to the manager
//! whose certificate it pins (see [`crate::tls`]).

use crate::tls::Pin;
use crate::token::Token;
use serde_json::Value;
use std::time::Duration;

/// The manager's default address.
pub const DEFAULT_URL: &str = "https://127.0.0.1:7466";

/// A request that did not get a 2xx answer.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The manager refused it (4xx) or failed (5xx), with its message.
    #[error("{message} (HTTP {status})")]
    Refused {
        /// The HTTP status.
        status: u16,
        /// The manager's `error` text.
        message: String,
    },
    /// Nothing accepts connections at the manager's address.
    #[error("nothing is listening at {base} (is the manager running?)")]
    NotListening {
        /// The manager's URL.
        base: String,
    },
    /// No answer.
    #[error("cannot reach the manager at {url}: {reason}")]
    Unreachable {
        /// The URL tried.
        url: String,
        /// What went wrong.
        reason: String,
    },
}

/// A client for one manager.
#[derive(Debug, Clone)]
pub struct Client {
    base: String,
    agent: ureq::Agent,
    token: Option<Token>,
    pin: Option<Pin>,
    timeout: Duration,
}

impl Client {
    /// A client for the manager at `base` (e.g. `https://127.0.0.1:7466`)
    /// whose certificate `pin` names, without a token: only reads work
    /// until [`Client::set_token`]. Without a pin it sends nothing.
    pub fn new(base: &str, pin: Option<Pin>) -> Client {
        let timeout = Duration::from_secs(30);
        let agent = build(pin.as_ref(), timeout);
        Client { base: base.trim_end_matches('/').to_string(), agent, token: None, pin, timeout }
    }

    /// Pins `pin` from now on (the agent reads it again until it has one).
    pub fn set_pin(&mut self, pin: Option<Pin>) {
        if pin != self.pin {
            self.agent = build(pin.as_ref(), self.timeout);
            self.pin = pin;
        }
    }

    /// The same client, sending `token` with every request.
    pub fn with_token(mut self, token: Option<Token>) -> Client {
        self.token = token;
        self
    }

    /// The same client, giving up on an answer after `timeout` (30 s unless told).
    pub fn with_timeout(mut self, timeout: Duration) -> Client {
        self.agent = build(self.pin.as_ref(), timeout);
        self.timeout = timeout;
        self
    }

    /// Sends `token` from now on.
    pub fn set_token(&mut self, token: Option<Token>) {
        self.token = token;
    }

    /// The request, unless nothing may be sent: the manager is reached
    /// only over TLS, and only with a pinned certificate.
    fn request(&self, method: &str, path: &str) -> Result<(String, ureq::Request), ClientError> {
        let url = format!("{}{path}", self.base);
        let refuse = |reason: &str| Err(ClientError::Unreachable { url: url.clone(), reason: reason.into() });
        if !self.base.starts_with("https://") {
            return refuse("the manager speaks only https (its URL is https://HOST:PORT)");
        }
        if self.pin.is_none() {
            if !listening(&self.base) {
                return Err(ClientError::NotListening { base: self.base.clone() });
            }
            return refuse(&format!(
                "no certificate to check the manager by, so nothing was sent: give --ca with the \
                 fingerprint the manager prints (sha256:…) or its tls/cert.pem, set {}, or give the \
                 --state-dir whose tls/cert.pem this user can read",
                crate::tls::ENV
            ));
        }
        let mut request = self.agent.request(method, &url);
        if let Some(t) = &self.token {
            request = request.set("Authorization", &format!("Bearer {}", t.as_str()));
        }
        Ok((url, request))
    }

    /// `GET path`.
    pub fn get(&self, path: &str) -> Result<Value, ClientError> {
        let (url, request) = self.request("GET", path)?;
        answer(&self.base, &url, request.call())
    }

    /// `GET path` of a paged listing (`GET /jobs`): every page, following
    /// the manager's `Link: <…>; rel="next"` headers, as one array.
    pub fn get_all(&self, path: &str) -> Result<Value, ClientError> {
        let (mut all, mut next) = (Vec::new(), Some(path.to_string()));
        while let Some(path) = next.take() {
            let (url, request) = self.request("GET", &path)?;
            let result = request.call();
            next = result.as_ref().ok().and_then(|r| r.header("link")).and_then(next_page);
            match answer(&self.base, &url, result)? {
                Value::Array(items) => all.extend(items),
                other => return Ok(other),
            }
        }
        Ok(Value::Array(all))
    }

    /// `POST path` with a JSON body.
    pub fn post(&self, path: &str, body: &Value) -> Result<Value, ClientError> {
        let (url, request) = self.request("POST", path)?;
        answer(&self.base, &url, request.send_json(body))
    }
}

/// A ureq agent that accepts only the certificate `pin` names.
fn build(pin: Option<&Pin>, timeout: Duration) -> ureq::Agent {
    ureq::AgentBuilder::new().timeout(timeout).tls_config(Pin::client_config(pin)).build()
}

/// The path of a `Link` header's `rel="next"` page, on the same manager.
fn next_page(link: &str) -> Option<String> {
    let next = link.split(',').find(|l| l.contains("rel=\"next\""))?;
    let path = next.split_once('<')?.1.split_once('>')?.0;
    path.starts_with('/').then(|| path.to_string())
}

/// Whether something accepts TCP connections at the host and port of `base`
/// (`https://HOST:PORT`); `true` when that cannot be told.
fn listening(base: &str) -> bool {
    use std::net::{TcpStream, ToSocketAddrs};
    let authority = base.trim_start_matches("https://").split('/').next().unwrap_or_default();
    let with_port = if authority.rsplit_once(':').is_some_and(|(_, p)| p.parse::<u16>().is_ok()) {
        authority.to_string()
    } else {
        format!("{authority}:443")
    };
    let Ok(addresses) = with_port.to_socket_addrs() else { return true };
    let addresses: Vec<_> = addresses.collect();
    addresses.is_empty() || addresses.iter().any(|a| TcpStream::connect_timeout(a, Duration::from_secs(3)).is_ok())
}

fn answer(base: &str, url: &str, result: Result<ureq::Response, ureq::Error>) -> Result<Value, ClientError> {
    let unreachable = |reason: String| ClientError::Unreachable { url: url.to_string(), reason };
    match result {
        Ok(r) => r.into_json().map_err(|e| unreachable(format!("unreadable answer: {e}"))),
        Err(ureq::Error::Status(status, r)) => {
            let text = r.into_string().unwrap_or_default();
            let message = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v.get("error").and_then(Value::as_str).map(String::from))
                .unwrap_or(text);
            Err(ClientError::Refused { status, message })
        }
        Err(ureq::Error::Transport(t)) if t.kind() == ureq::ErrorKind::ConnectionFailed && !listening(base) => {
            Err(ClientError::NotListening { base: base.to_string() })
        }
        Err(e) => Err(unreachable(e.to_string())),
    }
}
