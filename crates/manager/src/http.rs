//! A small HTTP/1.1 server for the manager's API, one request per connection
//! (`Connection: close`). Written here rather than taken from a crate
//! because the manager must bound what a stranger who reaches the port can
//! cost it: at most [`Limits::connections`] connections at once (more get
//! 503 at once), a deadline on every read and write (a client that stalls is
//! dropped), headers of at most 16 KB, and a body declared over
//! [`Limits::body`] refused with 413 before a byte of it is read (`tiny_http`,
//! used before, has no connection bound and reads or discards every body).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Largest request line plus headers.
const MAX_HEAD: u64 = 16 << 10;
/// Most bytes drained from a client after its answer (see [`write_response`]).
const LINGER: u64 = 256 << 10;

/// What one server accepts.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest request body, bytes.
    pub body: usize,
    /// Connections served at once.
    pub connections: usize,
    /// Deadline for each read from and write to a client.
    pub io_timeout: Duration,
}

impl Default for Limits {
    /// 1 MB bodies, 32 connections, 10 s per read or write.
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
    /// The body (empty without `Content-Length`).
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

/// Serves connections on `listener` with `handler` while `running()` holds
/// (checked every 50 ms); returns once every connection it accepted is done.
pub fn serve(
    listener: &TcpListener,
    limits: Limits,
    running: &(dyn Fn() -> bool + Sync),
    handler: &(dyn Fn(&Request) -> Response + Sync),
) {
    listener.set_nonblocking(true).expect("a listening socket can be made non-blocking");
    let active = AtomicUsize::new(0);
    std::thread::scope(|s| {
        while running() {
            let stream = match listener.accept() {
                Ok((stream, _)) => stream,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
                Err(e) => {
                    eprintln!("pliant manager: API: cannot accept a connection: {e}");
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
            };
            if stream.set_nonblocking(false).is_err()
                || stream.set_read_timeout(Some(limits.io_timeout)).is_err()
                || stream.set_write_timeout(Some(limits.io_timeout)).is_err()
            {
                continue;
            }
            if active.fetch_add(1, Ordering::SeqCst) >= limits.connections {
                active.fetch_sub(1, Ordering::SeqCst);
                let busy = format!("more than {} connections at once; try again", limits.connections);
                let _ = write_response(&stream, &Response::error(503, &busy));
                continue;
            }
            let active = &active;
            s.spawn(move || {
                let response = match read_request(&stream, limits.body) {
                    Ok(request) => handler(&request),
                    Err(refusal) => refusal,
                };
                let _ = write_response(&stream, &response);
                active.fetch_sub(1, Ordering::SeqCst);
            });
        }
    });
}

/// Reads one request; a refusal is the response to send instead.
fn read_request(stream: &TcpStream, max_body: usize) -> Result<Request, Response> {
    let mut reader = BufReader::new(stream.take(MAX_HEAD));
    let mut line = String::new();
    let unreadable = |e: std::io::Error| Response::error(400, &format!("unreadable request: {e}"));
    reader.read_line(&mut line).map_err(unreadable)?;
    let mut words = line.split_whitespace();
    let (Some(method), Some(url), Some(version)) = (words.next(), words.next(), words.next()) else {
        return Err(Response::error(400, "malformed request line"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(Response::error(505, "only HTTP/1.x is spoken here"));
    }
    let mut request = Request { method: method.into(), url: url.into(), bearer: None, body: Vec::new() };
    let (mut length, mut expect_continue) = (0usize, false);
    loop {
        line.clear();
        if reader.read_line(&mut line).map_err(unreadable)? == 0 {
            return Err(Response::error(431, "headers too long or cut short"));
        }
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            break;
        }
        let Some((name, value)) = header.split_once(':') else {
            return Err(Response::error(400, &format!("malformed header `{header}`")));
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => {
                length = value.parse().map_err(|_| Response::error(400, "malformed Content-Length"))?;
            }
            "transfer-encoding" => return Err(Response::error(411, "send a Content-Length, not chunks")),
            "expect" => expect_continue = value.eq_ignore_ascii_case("100-continue"),
            "authorization" => {
                request.bearer = value
                    .split_once(' ')
                    .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
                    .map(|(_, token)| token.trim().to_string());
            }
            _ => {}
        }
    }
    if length > max_body {
        return Err(Response::error(413, &format!("request body of {length} bytes is over the {max_body}-byte limit")));
    }
    if expect_continue && length > 0 {
        let mut out = stream;
        let _ = out.write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
    }
    // The head's byte budget is spent on the head alone; the body has its own.
    reader.get_mut().set_limit(length as u64);
    request.body.resize(length, 0);
    reader.read_exact(&mut request.body).map_err(unreadable)?;
    Ok(request)
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "",
    }
}

fn write_response(mut stream: &TcpStream, r: &Response) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n",
        r.status,
        reason(r.status),
        r.content_type,
        r.body.len()
    );
    for (name, value) in &r.headers {
        head += &format!("{name}: {value}\r\n");
    }
    head += "\r\n";
    stream.write_all(head.as_bytes())?;
    stream.write_all(&r.body)?;
    stream.flush()?;
    // Unread bytes (a refused body) would turn the close into a reset that
    // can destroy the answer before the client reads it: say we are done,
    // then let a little of what the client still sends drain, for a second at most.
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let _ = std::io::copy(&mut stream.take(LINGER), &mut std::io::sink());
    Ok(())
}
