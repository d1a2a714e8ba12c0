//! The manager's HTTP server: `hyper` (HTTP/1.1, one request per
//! connection) over `tokio`, with TLS by `rustls` ([`crate::tls`]) and the
//! request limits as `tower-http` layers. What a stranger who reaches the
//! port can cost the manager, and the agents and users beside it, is
//! bounded:
//! - each peer (an address; on loopback, a local user: [`crate::peer`]) is
//!   served on at most [`Limits::per_peer`] connections at once; as many more
//!   of its connections wait for one of its places, the rest of its own are
//!   closed. One peer's idle connections never take another's place.
//! - at most [`Limits::connections`] connections are held in all; past that
//!   the server stops accepting, and new connections wait in the listen
//!   queue rather than being closed.
//! - a TLS handshake must be over within [`Limits::handshake`], the headers
//!   within [`Limits::io_timeout`] (hyper's header timeout), the body
//!   likewise (`RequestBodyTimeoutLayer`), the whole connection within three
//!   times that; a request body declared over [`Limits::body`] gets 413 from
//!   its headers before a byte of it is read (`RequestBodyLimitLayer`; a
//!   chunked one is cut off at the limit).
//!
//! The handlers are the manager's own blocking code, borrowed from the
//! caller's stack: the async side hands each request over a channel to a few
//! worker threads of the caller's scope and awaits their answer. The agents'
//! requests (`/agents/…`) have workers of their own, so users' requests,
//! however many or slow, never hold up a heartbeat.

use crate::peer::Peer;
use crate::tls::ServerTls;
use http_body_util::{BodyExt, Either, Full};
use hyper::body::Bytes;
use hyper::body::Incoming;
use hyper::header::{
    HeaderValue, AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use hyper::StatusCode;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::TcpListener;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{oneshot, OwnedSemaphorePermit, Semaphore};
use tower::util::BoxCloneService;
use tower::ServiceBuilder;
use tower_http::limit::{RequestBodyLimitLayer, ResponseBody};
use tower_http::timeout::{RequestBodyTimeoutLayer, TimeoutLayer};

/// Threads that run users' requests.
const WORKERS: usize = 4;
/// Threads that run agents' requests.
const AGENT_WORKERS: usize = 2;
/// How often the accept loop asks whether it is still to run.
const POLL: Duration = Duration::from_millis(50);

/// What one server accepts.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest request body, bytes.
    pub body: usize,
    /// Connections held at once in all (served, or waiting for their peer's place).
    pub connections: usize,
    /// Connections one peer is served on at once (as many more wait).
    pub per_peer: usize,
    /// Deadline for a TLS handshake.
    pub handshake: Duration,
    /// Deadline for a client's headers, and for its body.
    pub io_timeout: Duration,
}

impl Default for Limits {
    /// 1 MB bodies, 1024 connections (fewer when the process may open
    /// fewer files), 16 per peer, 2 s for a handshake, 10 s for the headers
    /// and for the body.
    fn default() -> Limits {
        Limits {
            body: 1 << 20,
            connections: open_files_allowed().saturating_sub(64).clamp(64, 1024),
            per_peer: 16,
            handshake: Duration::from_secs(2),
            io_timeout: Duration::from_secs(10),
        }
    }
}

/// How many files this process may open (its soft `RLIMIT_NOFILE`).
fn open_files_allowed() -> usize {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return 1024;
    }
    usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX)
}

/// One request, its body read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `GET`, `POST`…
    pub method: String,
    /// Path and query, as sent.
    pub url: String,
    /// The token of an `Authorization: Bearer TOKEN` header.
    pub bearer: Option<String>,
    /// The body.
    pub body: Vec<u8>,
}

/// One response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// HTTP status.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: &'static str,
    /// Extra headers, `(name, value)`.
    pub headers: Vec<(&'static str, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// A JSON response.
    pub fn json(status: u16, value: &serde_json::Value) -> Response {
        Response { status, content_type: "application/json", headers: Vec::new(), body: value.to_string().into() }
    }

    /// A JSON `{"error": message}` response.
    pub fn error(status: u16, message: &str) -> Response {
        Response::json(status, &serde_json::json!({ "error": message }))
    }
}

/// A request on its way to a worker, with where its answer goes.
type Job = (Request, oneshot::Sender<Response>);

/// Where requests go: the agents' workers, or the users'.
#[derive(Clone)]
struct Queues {
    agents: mpsc::Sender<Job>,
    users: mpsc::Sender<Job>,
}

/// Serves connections on `listener` (over TLS when `tls` is given) with
/// `handler` while `running()` holds (checked every 50 ms); returns once
/// every connection it accepted is done.
pub fn serve(
    listener: &TcpListener,
    limits: Limits,
    tls: Option<&ServerTls>,
    running: &(dyn Fn() -> bool + Sync),
    handler: &(dyn Fn(&Request) -> Response + Sync),
) {
    let (agents, agent_queue) = mpsc::channel::<Job>();
    let (users, user_queue) = mpsc::channel::<Job>();
    let (agent_queue, user_queue) = (Mutex::new(agent_queue), Mutex::new(user_queue));
    let work = |queue: &Mutex<mpsc::Receiver<Job>>| loop {
        let job = queue.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok((request, answer)) = job else { return };
        let _ = answer.send(handler(&request));
    };
    std::thread::scope(|s| {
        for _ in 0..AGENT_WORKERS {
            s.spawn(|| work(&agent_queue));
        }
        for _ in 0..WORKERS {
            s.spawn(|| work(&user_queue));
        }
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        match runtime {
            Ok(runtime) => runtime.block_on(accept_loop(listener, limits, tls, running, Queues { agents, users })),
            Err(e) => eprintln!("pliant manager: API: cannot start the HTTP runtime: {e}"),
        }
    });
}

/// The connections each peer holds, and its places.
struct Peers {
    per_peer: usize,
    held: Mutex<HashMap<Peer, (usize, Arc<Semaphore>)>>,
}

/// One connection of a peer, counted until dropped.
struct Held {
    peers: Arc<Peers>,
    peer: Peer,
}

impl Peers {
    /// A new connection of `peer`, and its places; `None` when it already
    /// holds twice its places (served, and as many waiting).
    fn admit(self: &Arc<Peers>, peer: Peer) -> Option<(Held, Arc<Semaphore>)> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let (count, places) = held.entry(peer).or_insert_with(|| (0, Arc::new(Semaphore::new(self.per_peer))));
        if *count >= 2 * self.per_peer {
            return None;
        }
        *count += 1;
        Some((Held { peers: self.clone(), peer }, places.clone()))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut held = self.peers.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((count, _)) = held.get_mut(&self.peer) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.peer);
            }
        }
    }
}

async fn accept_loop(
    listener: &TcpListener,
    limits: Limits,
    tls: Option<&ServerTls>,
    running: &(dyn Fn() -> bool + Sync),
    queues: Queues,
) {
    if let Err(e) = listener.set_nonblocking(true) {
        return eprintln!("pliant manager: API: cannot listen: {e}");
    }
    deepen_listen_queue(listener);
    let held = Arc::new(Semaphore::new(limits.connections));
    let peers = Arc::new(Peers { per_peer: limits.per_peer, held: Mutex::default() });
    let acceptor = tls.map(|t| t.acceptor());
    // `running()` is asked right before each accept, never after: a
    // connection that arrives once it is false stays queued for the
    // listener's next server (`pliant serve` gathers its agents with one,
    // then serves the API).
    while running() {
        // Past the bound nothing is accepted: new connections wait in the listen queue.
        let Ok(Ok(permit)) = tokio::time::timeout(POLL, held.clone().acquire_owned()).await else { continue };
        if !running() {
            break;
        }
        let accepted = listener.accept().and_then(|(stream, from)| {
            stream.set_nonblocking(true)?;
            Ok((tokio::net::TcpStream::from_std(stream)?, from))
        });
        let (stream, from) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                if e.kind() != std::io::ErrorKind::WouldBlock {
                    eprintln!("pliant manager: API: cannot accept a connection: {e}");
                }
                tokio::time::sleep(POLL).await;
                continue;
            }
        };
        let Some(local) = stream.local_addr().ok() else { continue };
        // A peer over its own bound loses its newest connection; nobody else does.
        let Some((mine, places)) = peers.admit(Peer::of(from, local)) else { continue };
        let (acceptor, queues) = (acceptor.clone(), queues.clone());
        tokio::spawn(async move {
            let _counted = (permit, mine);
            if let Ok(Ok(place)) = tokio::time::timeout(limits.io_timeout, places.acquire_owned()).await {
                serve_connection(stream, acceptor, limits, queues, place).await;
            }
        });
    }
    // Every connection held holds a permit: they are all done once every permit is back.
    let everyone = |s: Arc<Semaphore>| async move { s.acquire_many(limits.connections as u32).await.map(drop) };
    let _ = tokio::time::timeout(6 * limits.io_timeout, everyone(held)).await;
}

/// Connections the kernel may hold for `accept` (it caps this at
/// `net.core.somaxconn`).
const LISTEN_QUEUE: i32 = 4096;

/// Lets the kernel queue up to [`LISTEN_QUEUE`] connections for `listener`
/// (Rust's default is 128). When the queue is full the kernel drops a
/// client's last handshake packet, and that client (an agent's heartbeat
/// among a flood of strangers') waits a second or more for its retry.
fn deepen_listen_queue(listener: &TcpListener) {
    use std::os::fd::AsRawFd;
    // SAFETY: listen on a socket already listening only changes its queue's length.
    if unsafe { libc::listen(listener.as_raw_fd(), LISTEN_QUEUE) } != 0 {
        eprintln!("pliant manager: API: cannot lengthen the listen queue: {}", std::io::Error::last_os_error());
    }
}

/// Serves one connection in its peer's `place`.
async fn serve_connection(
    stream: tokio::net::TcpStream,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    limits: Limits,
    queues: Queues,
    place: OwnedSemaphorePermit,
) {
    let service = ServiceBuilder::new()
        .map_response(move |r| json_refusal(r, limits.body))
        .layer(RequestBodyLimitLayer::new(limits.body))
        .layer(RequestBodyTimeoutLayer::new(limits.io_timeout))
        .layer(TimeoutLayer::with_status_code(StatusCode::SERVICE_UNAVAILABLE, 3 * limits.io_timeout))
        .service_fn(move |r| answer(r, queues.clone()));
    connection(stream, acceptor, limits, BoxCloneService::new(service)).await;
    drop(place);
}

/// What a connection is served with: a request in, an answer out (the
/// layers' own, or the handler's).
type Served = BoxCloneService<
    hyper::Request<Incoming>,
    hyper::Response<Either<ResponseBody<Full<Bytes>>, Full<Bytes>>>,
    Infallible,
>;

/// Serves one connection with `service`, over TLS if `acceptor` is given
/// (the handshake over within [`Limits::handshake`]); the whole exchange
/// must be over within three times [`Limits::io_timeout`].
async fn connection(
    stream: tokio::net::TcpStream,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    limits: Limits,
    service: Served,
) {
    let patience = limits.io_timeout;
    let exchange = async move {
        match acceptor {
            None => http1(stream, patience, service).await,
            // A peer that does not complete the handshake in time gets nothing.
            Some(acceptor) => {
                if let Ok(Ok(stream)) = tokio::time::timeout(limits.handshake, acceptor.accept(stream)).await {
                    http1(stream, patience, service).await
                }
            }
        }
    };
    let _ = tokio::time::timeout(3 * patience, exchange).await;
}

async fn http1<IO: AsyncRead + AsyncWrite + Unpin + Send + 'static>(io: IO, patience: Duration, service: Served) {
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(patience)
        .keep_alive(false)
        .serve_connection(TokioIo::new(io), TowerToHyperService::new(service))
        .await;
}

/// Reads a request whole and has a worker (an agent's, or a user's) answer it.
async fn answer<B>(request: hyper::Request<B>, queues: Queues) -> Result<hyper::Response<Full<Bytes>>, Infallible>
where
    B: hyper::body::Body,
    B::Error: std::fmt::Display,
{
    let (parts, body) = request.into_parts();
    let body = match body.collect().await {
        Ok(collected) => collected.to_bytes().to_vec(),
        // Over the limit, or stalled: the connection is not worth more.
        Err(e) => return Ok(to_hyper(Response::error(413, &format!("request body refused: {e}")))),
    };
    let bearer = parts.headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| {
        let (scheme, token) = v.split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then(|| token.trim().to_string())
    });
    let url = parts.uri.path_and_query().map_or_else(|| parts.uri.path().to_string(), |p| p.as_str().to_string());
    let request = Request { method: parts.method.as_str().to_string(), url, bearer, body };
    let (tx, rx) = oneshot::channel();
    let queue = if request.url.starts_with("/agents/") { &queues.agents } else { &queues.users };
    if queue.send((request, tx)).is_err() {
        return Ok(to_hyper(Response::error(503, "the manager is stopping")));
    }
    Ok(to_hyper(rx.await.unwrap_or_else(|_| Response::error(500, "the request's handler failed"))))
}

fn to_hyper(r: Response) -> hyper::Response<Full<Bytes>> {
    let mut builder = hyper::Response::builder()
        .status(r.status)
        .header(CONTENT_TYPE, r.content_type)
        .header(CACHE_CONTROL, "no-store")
        // Every answer is read as its declared type, framed by no other site,
        // and names this server to no other.
        .header(X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(X_FRAME_OPTIONS, "DENY")
        .header(REFERRER_POLICY, "no-referrer");
    for (name, value) in &r.headers {
        builder = builder.header(*name, value);
    }
    builder.body(Full::new(Bytes::from(r.body))).unwrap_or_else(|_| {
        let mut fallback = hyper::Response::new(Full::new(Bytes::from_static(b"{\"error\":\"unsendable answer\"}")));
        *fallback.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        fallback
    })
}

/// The layers' own refusals (413 from the headers) as this API's JSON errors.
fn json_refusal<B>(r: hyper::Response<B>, limit: usize) -> hyper::Response<Either<B, Full<Bytes>>> {
    let plain = r.headers().get(CONTENT_TYPE) != Some(&HeaderValue::from_static("application/json"));
    if r.status() == StatusCode::PAYLOAD_TOO_LARGE && plain {
        let why = format!("request body over the {limit}-byte limit");
        return to_hyper(Response::error(413, &why)).map(Either::Right);
    }
    r.map(Either::Left)
}
