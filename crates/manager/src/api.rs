//! The HTTP API. [`handle`] maps one JSON request to a status and a JSON
//! body and knows nothing of sockets or tokens; [`respond`] adds the
//! credential checks (the API token for every request but the page itself;
//! the join token or a node's own credential for a
//! registration, and the node's own credential for what acts as the node),
//! the web page at `/` and the Prometheus text at `/metrics`; [`serve`] runs
//! it on [`pliant_live::server`] over TLS.
//! Refused requests get a 4xx status with `{"error": "..."}` and change nothing.

use crate::manager::{Manager, Refusal};
use crate::metrics::Snapshot;
use crate::page;
use crate::submit::SubmitRequest;
use pliant_core::model::{JobId, TaskRef};
use pliant_live::credentials::Joiner;
use pliant_live::protocol::files;
use pliant_live::server::{self, Limits, Request, Response};
use pliant_live::task_files::tail;
use pliant_live::tls::ServerTls;
use pliant_live::token::Token;
use pliant_live::wire::{registered_node, Heartbeat, Orders, Registered};
use serde::Serialize;
use serde_json::{json, Value};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The Prometheus text exposition format's content type.
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";
/// Bytes of each log a `logs` answer carries.
const LOG_TAIL: u64 = 64 << 10;
/// Jobs a `GET /jobs` page holds at most.
const PAGE_JOBS: usize = 1000;
/// Tasks a `GET /jobs` page holds at most, past its first job (a job has at
/// most [`crate::submit::MAX_TASKS`]).
const PAGE_TASKS: usize = 10_000;

/// The manager's secrets: the API token (users) and, for `pliant serve`,
/// the join token (agents; `pliant local` takes none).
#[derive(Debug, Clone)]
pub struct Tokens {
    /// The API token.
    pub api: Token,
    /// The join token, if agents may join.
    pub join: Option<Token>,
}

/// An answer: HTTP status and JSON body.
pub type Answer = (u16, Value);

fn refused(r: Refusal) -> Answer {
    match r {
        Refusal::Invalid(m) => (400, json!({ "error": m })),
        Refusal::NotFound(m) => (404, json!({ "error": m })),
        Refusal::Conflict(m) => (409, json!({ "error": m })),
        Refusal::Forbidden(m) => (403, json!({ "error": m })),
        Refusal::Unavailable(m) => (503, json!({ "error": m })),
    }
}

fn ok<T: Serialize>(status: u16, value: &T) -> Answer {
    (status, serde_json::to_value(value).expect("API values serialise"))
}

fn parse_id(text: &str, what: &str) -> Result<u32, Refusal> {
    text.parse().map_err(|_| Refusal::Invalid(format!("`{text}` is not a {what} id (a whole number)")))
}

/// The path of `url` (without its query and a trailing `/`) and its
/// non-empty segments: how [`handle`] routes, and so how what a request acts
/// as is decided.
fn route(url: &str) -> (&str, Vec<&str>) {
    let path = url.split('?').next().unwrap_or(url).trim_end_matches('/');
    (path, path.split('/').filter(|p| !p.is_empty()).collect())
}

/// Answers a node's registration by `joiner` (see [`Manager::register`]).
pub fn register(manager: &Mutex<Manager>, body: &str, joiner: Joiner) -> Answer {
    let mut m = manager.lock().unwrap_or_else(|e| e.into_inner());
    let answer = registered_node(body).map_err(Refusal::Invalid).and_then(|record| m.register(&record, joiner)).map(
        |(node, issued)| {
            let agent_timeout_ms = m.agent_timeout().as_millis() as u64;
            ok(200, &Registered { node, agent_timeout_ms, credential: issued.map(|c| c.as_str().to_string()) })
        },
    );
    answer.unwrap_or_else(refused)
}

/// Answers one request (but a registration, see [`register`], and the
/// reads [`respond`] serves outside the manager's lock: `GET /jobs`, see
/// [`jobs_page`], and `GET /jobs/N/logs`, see [`logs`]).
pub fn handle(manager: &Mutex<Manager>, method: &str, url: &str, body: &str) -> Answer {
    let (path, parts) = route(url);
    let mut m = manager.lock().unwrap_or_else(|e| e.into_inner());
    let result = match (method, parts.as_slice()) {
        ("POST", ["jobs"]) => serde_json::from_str::<SubmitRequest>(body)
            .map_err(|e| Refusal::Invalid(format!("malformed job: {e}")))
            .and_then(|req| m.submit(req))
            .map(|id| ok(201, &json!({ "id": id }))),
        ("GET", ["jobs", id]) => parse_id(id, "job").and_then(|id| m.show_job(id).map(|j| ok(200, &j))),
        ("GET", ["jobs", id, "tasks"]) => parse_id(id, "job").and_then(|id| m.show_job(id).map(|j| ok(200, &j.tasks))),
        ("GET", ["jobs", id, "tasks", t]) => parse_id(id, "job").and_then(|id| {
            let t = parse_id(t, "task")?;
            let job = m.show_job(id)?;
            let task =
                job.tasks.get(t as usize).ok_or_else(|| Refusal::NotFound(format!("job {id} has no task {t}")))?;
            Ok(ok(200, task))
        }),
        ("POST", ["jobs", id, "cancel"]) => parse_id(id, "job").and_then(|id| {
            m.cancel(id)?;
            Ok(ok(200, &m.show_job(id)?))
        }),
        ("GET", ["cluster"]) => Ok(cluster(&m)),
        ("GET", ["preemptions"]) => Ok(ok(200, &m.preemptions())),
        ("POST", ["agents", node, "heartbeat"]) => parse_id(node, "node").and_then(|node| {
            let beat: Heartbeat =
                serde_json::from_str(body).map_err(|e| Refusal::Invalid(format!("malformed heartbeat: {e}")))?;
            let (batch, ops) = m.heartbeat(node, beat.acked, beat.first_report, beat.reports)?;
            Ok(ok(200, &Orders { batch, ops, reports_taken: Some(m.reports_taken(node)) }))
        }),
        ("GET", ["metrics.json"]) => Ok((200, Snapshot::of(&m).json())),
        ("POST", ["nodes", name, "revoke"]) => m.revoke_node(name).map(|()| ok(200, &json!({ "revoked": name }))),
        (_, ["jobs" | "cluster" | "metrics" | "metrics.json" | "agents" | "preemptions" | "nodes", ..]) => {
            Err(Refusal::Invalid(format!("{method} is not allowed on {path} (see docs/http-api.md)")))
        }
        _ => Err(Refusal::NotFound(format!("no such endpoint: {method} {path}"))),
    };
    result.unwrap_or_else(refused)
}

/// `GET /jobs?from=N&limit=K`: the jobs from id N (default 0), at most K
/// (default and most [`PAGE_JOBS`]) and, past the first, at most
/// [`PAGE_TASKS`] tasks in all; a `Link: <…>; rel="next"` header gives the
/// next page while there is one. The page is copied under the manager's
/// lock and written out after it, so readers of a big cluster neither hold
/// the lock long nor each build its whole listing.
pub fn jobs_page(manager: &Mutex<Manager>, url: &str) -> Response {
    let query = url.split_once('?').map_or("", |(_, q)| q);
    let (mut from, mut limit) = (0usize, PAGE_JOBS);
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let number = |v: &str| v.parse::<usize>().ok();
        match pair.split_once('=') {
            Some(("from", v)) if number(v).is_some() => from = number(v).unwrap_or(0),
            Some(("limit", v)) if number(v).is_some_and(|n| n > 0) => limit = number(v).unwrap_or(1).min(PAGE_JOBS),
            _ => {
                let why = format!("`{pair}`: GET /jobs takes `from=ID` and `limit=N` (1 or more)");
                return Response::error(400, &why);
            }
        }
    }
    let (page, next) = {
        let m = manager.lock().unwrap_or_else(|e| e.into_inner());
        let (mut page, mut tasks) = (Vec::new(), 0);
        for job in m.jobs().iter().skip(from).take(limit) {
            if !page.is_empty() && tasks + job.tasks.len() > PAGE_TASKS {
                break;
            }
            tasks += job.tasks.len();
            page.extend(m.show_job(job.id).ok());
        }
        let end = from + page.len();
        (page, (end < m.jobs().len()).then_some(end))
    };
    let body = serde_json::to_vec(&page).expect("jobs serialise");
    let mut r = Response { status: 200, content_type: "application/json", headers: Vec::new(), body };
    if let Some(next) = next {
        r.headers.push(("Link", format!("</jobs?from={next}&limit={limit}>; rel=\"next\"")));
    }
    r
}

/// `GET /jobs/N/logs`: the tail of each task's stdout and stderr. Only
/// where they are is asked under the manager's lock; the files, which the
/// tasks control, are read after it, never through a link and never
/// blocking ([`tail`]).
pub fn logs(manager: &Mutex<Manager>, id: u32) -> Result<Answer, Refusal> {
    let dirs: Vec<(u32, std::path::PathBuf)> = {
        let m = manager.lock().unwrap_or_else(|e| e.into_inner());
        let job = m.job(id)?;
        job.tasks.iter().map(|t| (t.index, m.log_dir(TaskRef { job: JobId(id), task: t.index }))).collect()
    };
    let tasks: Vec<Value> = dirs
        .iter()
        .map(|(index, dir)| {
            json!({
                "task": index,
                "stdout": tail(&files::stdout(dir), LOG_TAIL),
                "stderr": tail(&files::stderr(dir), LOG_TAIL),
            })
        })
        .collect();
    Ok((200, json!({ "job": id, "tasks": tasks })))
}

fn cluster(m: &Manager) -> Answer {
    let cfg = m.config();
    let nodes: Vec<Value> = cfg
        .nodes
        .iter()
        .zip(m.allocations())
        .zip(m.lost_nodes())
        .zip(m.swap_rates())
        .enumerate()
        .map(|(i, (((n, allocated), lost), swap))| {
            json!({
                "id": i,
                "name": n.name,
                "lost": lost,
                "capacity": n.capacity,
                "allocated": allocated,
                "mechanisms": n.mechanisms,
                "notes": n.notes,
                "swap": swap,
            })
        })
        .collect();
    let not_placing = m.not_placing();
    (
        200,
        json!({ "policy": cfg.policy.name(), "params": cfg.params, "now_us": m.now(), "nodes": nodes, "not_placing": not_placing }),
    )
}

/// What a request must carry.
enum Needs<'a> {
    /// Node N's own credential: it acts as node N (`/agents/N/heartbeat`:
    /// reports and order pick-up).
    Node(&'a str),
    /// The join token, or the node's own credential: a registration.
    Joiner,
    /// The API token.
    User,
}

/// What `request` must carry, routed as [`handle`] routes it.
fn needs(request: &Request) -> Needs<'_> {
    match (request.method.as_str(), route(&request.url).1.as_slice()) {
        (_, ["agents", node, "heartbeat"]) => Needs::Node(node),
        ("POST", ["agents", "register"]) => Needs::Joiner,
        _ => Needs::User,
    }
}

/// Answers one HTTP request: the credential check (node N's own for what
/// acts as node N, the join token or the node's own credential for a
/// registration, the API token for the rest), the page, the Prometheus
/// text, then [`handle`] for the JSON endpoints.
pub fn respond(manager: &Mutex<Manager>, tokens: &Tokens, request: &Request) -> Response {
    let refusal = match needs(request) {
        Needs::Node(node) => refuse_as_node(manager, tokens.join.is_some(), node, request),
        Needs::Joiner => {
            return match (joiner(tokens, request), std::str::from_utf8(&request.body)) {
                (Err(refusal), _) => refusal,
                (Ok(_), Err(_)) => Response::error(400, "the body is not UTF-8"),
                (Ok(joiner), Ok(body)) => {
                    let (status, value) = register(manager, body, joiner);
                    Response::json(status, &value)
                }
            }
        }
        Needs::User => refuse_unauthorised(&tokens.api, request),
    };
    if let Some(refusal) = refusal {
        return refusal;
    }
    match (request.method.as_str(), route(&request.url).1.as_slice()) {
        ("GET", []) => Response {
            status: 200,
            content_type: "text/html; charset=utf-8",
            headers: vec![("content-security-policy", page::CONTENT_SECURITY_POLICY.clone())],
            body: page::HTML.as_bytes().to_vec(),
        },
        ("GET", ["metrics"]) => {
            let text = Snapshot::of(&manager.lock().unwrap_or_else(|e| e.into_inner())).prometheus();
            Response { status: 200, content_type: PROMETHEUS_TEXT, headers: Vec::new(), body: text.into() }
        }
        ("GET", ["jobs"]) => jobs_page(manager, &request.url),
        ("GET", ["jobs", id, "logs"]) => {
            let (status, value) = parse_id(id, "job").and_then(|id| logs(manager, id)).unwrap_or_else(refused);
            Response::json(status, &value)
        }
        _ => match std::str::from_utf8(&request.body) {
            Ok(body) => {
                let (status, value) = handle(manager, &request.method, &request.url, body);
                Response::json(status, &value)
            }
            Err(_) => Response::error(400, "the body is not UTF-8"),
        },
    }
}

/// The 401 for a request that does not carry the token; `None` when it
/// may go on. Only the page itself, which holds no data, is open: on
/// loopback too, a job's logs and names are not every local user's to read.
/// The answer never repeats the URL's query, where a client may have put a
/// credential.
pub fn refuse_unauthorised(token: &Token, request: &Request) -> Option<Response> {
    let path = request.url.split('?').next().unwrap_or(&request.url);
    let open = request.method == "GET" && path == "/";
    if open || request.bearer.as_deref().is_some_and(|b| token.matches(b)) {
        return None;
    }
    let why = if request.bearer.is_some() { "wrong token" } else { "no token" };
    let mut r = Response::error(
        401,
        &format!(
            "{why}: {} {path} needs `Authorization: Bearer TOKEN` with the manager's token (its --token-file, \
             or the token file in its state directory; the CLI reads --token-file, {}, or --state-dir)",
            request.method,
            pliant_live::token::ENV
        ),
    );
    r.headers.push(("WWW-Authenticate", "Bearer".into()));
    Some(r)
}

/// The refusal of a request acting as node `node` without that node's own
/// credential: 401 without one, 403 with another (the API token, the join
/// token, another node's), 409 when the node holds no credential here and
/// agents may join (a manager killed as it formed its cluster: the agent
/// registers again, and joins). `None` when it may go on.
fn refuse_as_node(manager: &Mutex<Manager>, joinable: bool, node: &str, request: &Request) -> Option<Response> {
    let Some(bearer) = request.bearer.as_deref() else {
        let mut r = Response::error(401, &format!("no credential: only node {node}'s agent may act as node {node}"));
        r.headers.push(("WWW-Authenticate", "Bearer".into()));
        return Some(r);
    };
    let mut m = manager.lock().unwrap_or_else(|e| e.into_inner());
    if let Ok(id) = node.parse::<u32>() {
        if m.authenticate_node(id, bearer) {
            return None;
        }
        if joinable && !m.has_credential(id) && (id as usize) < m.config().nodes.len() {
            return Some(Response::error(409, &format!("node {node} holds no credential here: register again")));
        }
    }
    Some(Response::error(
        403,
        &format!("only node {node}'s agent, with the node credential it was issued, may act as node {node}"),
    ))
}

/// Who a registration is by: the join token's holder, or an agent with a
/// credential (its node's own, if [`Manager::register`] finds it so); a 401
/// without a credential, a 403 with the API token or where agents cannot
/// join (`pliant local`).
pub fn joiner<'a>(tokens: &Tokens, request: &'a Request) -> Result<Joiner<'a>, Response> {
    let Some(join) = &tokens.join else {
        return Err(Response::error(403, "this manager takes no agents: `pliant local` runs its own node"));
    };
    match request.bearer.as_deref() {
        Some(b) if join.matches(b) => Ok(Joiner::JoinToken),
        Some(b) if tokens.api.matches(b) => {
            Err(Response::error(403, "the API token cannot register a node: agents join with the join token"))
        }
        Some(b) => Ok(Joiner::Credential(b)),
        None => {
            let mut r = Response::error(
                401,
                "no credential: a node registers with the join token (the manager's --join-token-file, or \
                 the join-token file in its state directory), and once joined with its own node credential",
            );
            r.headers.push(("WWW-Authenticate", "Bearer".into()));
            Err(r)
        }
    }
}

/// Serves the API on `listener`, over TLS with `tls`, until `stop` is set.
pub fn serve(listener: &TcpListener, manager: &Mutex<Manager>, tokens: &Tokens, tls: &ServerTls, stop: &AtomicBool) {
    let running = || !stop.load(Ordering::SeqCst);
    server::serve(listener, Limits::default(), Some(tls), &running, &|r| respond(manager, tokens, r));
}
