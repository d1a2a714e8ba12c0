//! A small blocking client for the manager's API (used by the CLI and the tests).

use crate::token::Token;
use serde_json::Value;
use std::time::Duration;

/// The manager's default address.
pub const DEFAULT_URL: &str = "http://127.0.0.1:7466";

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
}

impl Client {
    /// A client for the manager at `base` (e.g. `http://127.0.0.1:7466`),
    /// without a token: only reads work until [`Client::set_token`].
    pub fn new(base: &str) -> Client {
        let agent = ureq::AgentBuilder::new().timeout(Duration::from_secs(30)).build();
        Client { base: base.trim_end_matches('/').to_string(), agent, token: None }
    }

    /// The same client, sending `token` with every request.
    pub fn with_token(mut self, token: Option<Token>) -> Client {
        self.token = token;
        self
    }

    /// The same client, giving up on an answer after `timeout` (30 s unless told).
    pub fn with_timeout(mut self, timeout: Duration) -> Client {
        self.agent = ureq::AgentBuilder::new().timeout(timeout).build();
        self
    }

    /// Sends `token` from now on.
    pub fn set_token(&mut self, token: Option<Token>) {
        self.token = token;
    }

    fn request(&self, method: &str, path: &str) -> (String, ureq::Request) {
        let url = format!("{}{path}", self.base);
        let mut request = self.agent.request(method, &url);
        if let Some(t) = &self.token {
            request = request.set("Authorization", &format!("Bearer {}", t.as_str()));
        }
        (url, request)
    }

    /// `GET path`.
    pub fn get(&self, path: &str) -> Result<Value, ClientError> {
        let (url, request) = self.request("GET", path);
        answer(&url, request.call())
    }

    /// `POST path` with a JSON body.
    pub fn post(&self, path: &str, body: &Value) -> Result<Value, ClientError> {
        let (url, request) = self.request("POST", path);
        answer(&url, request.send_json(body))
    }
}

fn answer(url: &str, result: Result<ureq::Response, ureq::Error>) -> Result<Value, ClientError> {
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
        Err(e) => Err(unreachable(e.to_string())),
    }
}
