//! The manager's HTTP server: `hyper` (HTTP/1.1, one request per
//! connection) over `tokio`, with TLS by `rustls` ([`crate::tls`]) and the
//! request limits as `tower-http` layers. What a stranger who reaches the
//! port can cost the manager is bounded: at most [`Limits::connections`]
//! connections are served at once (as many more get 503 at once, the rest are
//! closed), a request body declared over [`Limits::body`] gets 413 from its
//! headers before a byte of it is read (`RequestBodyLimitLayer`; a chunked
//! one is cut off at the limit), and a client that stalls is dropped: its
//! headers within [`Limits::io_timeout`] (hyper's header timeout), its body
//! likewise (`RequestBodyTimeoutLayer`), the whole connection within three
//! times that.
//!
//! The handlers are the manager's own blocking code, borrowed from the
//! caller's stack: the async side hands each request over a channel to a few
//! worker threads of the caller's scope and awaits their answer.

use crate::tls::ServerTls;
use http_body_util::{BodyExt, Either, Full};
use hyper::body::Bytes;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE};
use hyper::StatusCode;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::convert::Infallible;
use std::net::TcpListener;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{oneshot, Semaphore};
use tower::util::BoxCloneService;
use tower::ServiceBuilder;
use tower_http::limit::{RequestBodyLimitLayer, ResponseBody};
use tower_http::timeout::{RequestBodyTimeoutLayer, TimeoutLayer};

/// Threads that run handlers.
const WORKERS: usize = 4;
/// How long a connection refused for being one too many may take to send its request.
const BUSY_PATIENCE: Duration = Duration::from_secs(1);

/// What one server accepts.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest request body, bytes.
    pub body: usize,
    /// Connections served at once.
    pub connections: usize,
    /// Deadline for a client's headers, and for its body.
    pub io_timeout: Duration,
}

impl Default for Limits {
    /// 1 MB bodies, 32 connections, 10 s for the headers and for the body.
    fn default() -> Limits {
        Limits { body: 1 << 20, connections: 32, io_timeout: Duration::from_secs(10) }
    }
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
    let (jobs, queue) = mpsc::channel::<Job>();
    let queue = Mutex::new(queue);
    std::thread::scope(|s| {
        for _ in 0..WORKERS {
            s.spawn(|| loop {
                let job = queue.lock().unwrap_or_else(|e| e.into_inner()).recv();
                let Ok((request, answer)) = job else { return };
                let _ = answer.send(handler(&request));
            });
        }
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        match runtime {
            Ok(runtime) => runtime.block_on(accept_loop(listener, limits, tls, running, jobs)),
            Err(e) => eprintln!("pliant manager: API: cannot start the HTTP runtime: {e}"),
        }
    });
}

async fn accept_loop(
    listener: &TcpListener,
    limits: Limits,
    tls: Option<&ServerTls>,
    running: &(dyn Fn() -> bool + Sync),
    jobs: mpsc::Sender<Job>,
) {
    if let Err(e) = listener.set_nonblocking(true) {
        return eprintln!("pliant manager: API: cannot listen: {e}");
    }
    let served = Arc::new(Semaphore::new(limits.connections));
    let refused = Arc::new(Semaphore::new(limits.connections));
    let acceptor = tls.map(|t| t.acceptor());
    // `running()` is asked before each accept, never after: a connection
    // that arrives once it is false stays queued for the listener's next
    // server (`pliant serve` gathers its agents with one, then serves the API).
    while running() {
        let accepted = listener.accept().and_then(|(stream, _)| {
            stream.set_nonblocking(true)?;
            tokio::net::TcpStream::from_std(stream)
        });
        let stream = match accepted {
            Ok(stream) => stream,
            Err(e) => {
                if e.kind() != std::io::ErrorKind::WouldBlock {
                    eprintln!("pliant manager: API: cannot accept a connection: {e}");
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let acceptor = acceptor.clone();
        if let Ok(permit) = served.clone().try_acquire_owned() {
            let jobs = jobs.clone();
            let service = ServiceBuilder::new()
                .map_response(move |r| json_refusal(r, limits.body))
                .layer(RequestBodyLimitLayer::new(limits.body))
                .layer(RequestBodyTimeoutLayer::new(limits.io_timeout))
                .layer(TimeoutLayer::with_status_code(StatusCode::SERVICE_UNAVAILABLE, 3 * limits.io_timeout))
                .service_fn(move |r| answer(r, jobs.clone()));
            tokio::spawn(async move {
                connection(stream, acceptor, limits.io_timeout, BoxCloneService::new(service)).await;
                drop(permit);
            });
        } else if let Ok(permit) = refused.clone().try_acquire_owned() {
            // One too many: told so at once, if it sends its request soon.
            let busy = format!("more than {} connections at once; try again", limits.connections);
            let service = tower::service_fn(move |_: hyper::Request<Incoming>| {
                std::future::ready(Ok(to_hyper(Response::error(503, &busy)).map(Either::Right)))
            });
            tokio::spawn(async move {
                connection(stream, acceptor, BUSY_PATIENCE, BoxCloneService::new(service)).await;
                drop(permit);
            });
        }
    }
    // Every connection in service holds a permit: they are all done once every permit is back.
    let everyone = |s: Arc<Semaphore>| async move { s.acquire_many(limits.connections as u32).await.map(drop) };
    let _ = tokio::time::timeout(6 * limits.io_timeout, everyone(served)).await;
}

/// What a connection is served with: a request in, an answer out (the
/// layers' own, or the handler's).
type Served = BoxCloneService<
    hyper::Request<Incoming>,
    hyper::Response<Either<ResponseBody<Full<Bytes>>, Full<Bytes>>>,
    Infallible,
>;

/// Serves one connection with `service`, over TLS if `acceptor` is given;
/// the whole exchange must be over within three times `patience`.
async fn connection(
    stream: tokio::net::TcpStream,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    patience: Duration,
    service: Served,
) {
    let exchange = async move {
        match acceptor {
            None => http1(stream, patience, service).await,
            // A peer that does not complete the handshake gets nothing.
            Some(acceptor) => {
                if let Ok(Ok(stream)) = tokio::time::timeout(patience, acceptor.accept(stream)).await {
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

/// Reads a request whole and has a worker answer it.
async fn answer<B>(
    request: hyper::Request<B>,
    jobs: mpsc::Sender<Job>,
) -> Result<hyper::Response<Full<Bytes>>, Infallible>
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
    if jobs.send((request, tx)).is_err() {
        return Ok(to_hyper(Response::error(503, "the manager is stopping")));
    }
    Ok(to_hyper(rx.await.unwrap_or_else(|_| Response::error(500, "the request's handler failed"))))
}

fn to_hyper(r: Response) -> hyper::Response<Full<Bytes>> {
    let mut builder = hyper::Response::builder()
        .status(r.status)
        .header(CONTENT_TYPE, r.content_type)
        .header(CACHE_CONTROL, "no-store");
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
