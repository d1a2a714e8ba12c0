//! The HTTP/JSON API. [`handle`] maps one request to a status and a JSON
//! body and knows nothing of sockets; [`serve`] runs it on a `tiny_http`
//! server. Refused requests get a 4xx status with `{"error": "..."}` and
//! change nothing.

use crate::manager::{Manager, NodeRecord, Refusal};
use crate::submit::SubmitRequest;
use crate::view::{JobState, JobView};
use pliant_core::model::{JobId, TaskRef};
use pliant_core::Micros;
use pliant_live::agent::tail;
use pliant_live::protocol::{files, AgentReport};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Largest request body accepted.
const MAX_BODY: u64 = 1 << 20;
/// Bytes of each log a `logs` answer carries.
const LOG_TAIL: u64 = 64 << 10;

/// The body of an agent's heartbeat.
#[derive(Debug, Serialize, Deserialize)]
pub struct Heartbeat {
    /// What the agent saw since its last heartbeat.
    pub reports: Vec<AgentReport>,
}

/// An answer: HTTP status and JSON body.
pub type Answer = (u16, Value);

fn refused(r: Refusal) -> Answer {
    match r {
        Refusal::Invalid(m) => (400, json!({ "error": m })),
        Refusal::NotFound(m) => (404, json!({ "error": m })),
        Refusal::Conflict(m) => (409, json!({ "error": m })),
    }
}

fn ok<T: Serialize>(status: u16, value: &T) -> Answer {
    (status, serde_json::to_value(value).expect("API values serialise"))
}

fn parse_id(text: &str, what: &str) -> Result<u32, Refusal> {
    text.parse().map_err(|_| Refusal::Invalid(format!("`{text}` is not a {what} id (a whole number)")))
}

/// Answers one request.
pub fn handle(manager: &Mutex<Manager>, method: &str, url: &str, body: &str) -> Answer {
    let path = url.split('?').next().unwrap_or(url).trim_end_matches('/');
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let mut m = manager.lock().unwrap_or_else(|e| e.into_inner());
    let result = match (method, parts.as_slice()) {
        ("GET", ["jobs"]) => Ok(ok(200, &m.jobs())),
        ("POST", ["jobs"]) => serde_json::from_str::<SubmitRequest>(body)
            .map_err(|e| Refusal::Invalid(format!("malformed job: {e}")))
            .and_then(|req| m.submit(req))
            .map(|id| ok(201, &json!({ "id": id }))),
        ("GET", ["jobs", id]) => parse_id(id, "job").and_then(|id| m.job(id).map(|j| ok(200, j))),
        ("GET", ["jobs", id, "tasks"]) => parse_id(id, "job").and_then(|id| m.job(id).map(|j| ok(200, &j.tasks))),
        ("GET", ["jobs", id, "tasks", t]) => parse_id(id, "job").and_then(|id| {
            let t = parse_id(t, "task")?;
            let job = m.job(id)?;
            let task =
                job.tasks.get(t as usize).ok_or_else(|| Refusal::NotFound(format!("job {id} has no task {t}")))?;
            Ok(ok(200, task))
        }),
        ("POST", ["jobs", id, "cancel"]) => parse_id(id, "job").and_then(|id| {
            m.cancel(id)?;
            Ok(ok(200, m.job(id)?))
        }),
        ("GET", ["jobs", id, "logs"]) => parse_id(id, "job").and_then(|id| logs(&m, id)),
        ("GET", ["cluster"]) => Ok(cluster(&m)),
        ("POST", ["agents", "register"]) => serde_json::from_str::<NodeRecord>(body)
            .map_err(|e| Refusal::Invalid(format!("malformed registration: {e}")))
            .and_then(|record| m.register(&record))
            .map(|node| ok(200, &json!({ "node": node }))),
        ("POST", ["agents", node, "heartbeat"]) => parse_id(node, "node").and_then(|node| {
            let beat: Heartbeat =
                serde_json::from_str(body).map_err(|e| Refusal::Invalid(format!("malformed heartbeat: {e}")))?;
            let ops = m.heartbeat(node, beat.reports)?;
            Ok(ok(200, &json!({ "ops": ops })))
        }),
        ("GET", ["metrics"]) => Ok(metrics(&m)),
        (_, ["jobs" | "cluster" | "metrics" | "agents", ..]) => {
            Err(Refusal::Invalid(format!("{method} is not allowed on {path} (see the README's API section)")))
        }
        _ => Err(Refusal::NotFound(format!("no such endpoint: {method} {path}"))),
    };
    result.unwrap_or_else(refused)
}

fn logs(m: &Manager, id: u32) -> Result<Answer, Refusal> {
    let job = m.job(id)?;
    let tasks: Vec<Value> = job
        .tasks
        .iter()
        .map(|t| {
            let dir = m.log_dir(TaskRef { job: JobId(id), task: t.index });
            json!({
                "task": t.index,
                "stdout": tail(&files::stdout(&dir), LOG_TAIL),
                "stderr": tail(&files::stderr(&dir), LOG_TAIL),
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
        .enumerate()
        .map(|(i, ((n, allocated), lost))| {
            json!({
                "id": i,
                "name": n.name,
                "lost": lost,
                "capacity": n.capacity,
                "allocated": allocated,
                "mechanisms": n.mechanisms,
                "notes": n.notes,
            })
        })
        .collect();
    (200, json!({ "policy": cfg.policy, "params": cfg.params, "now_us": m.now(), "nodes": nodes }))
}

/// Waiting time (submission to first start) of a class's started jobs.
#[derive(Debug, Default, Serialize)]
struct Wait {
    started: u32,
    mean_us: Micros,
    max_us: Micros,
}

fn metrics(m: &Manager) -> Answer {
    let mut jobs: BTreeMap<&str, u32> = BTreeMap::new();
    let mut preemptions: BTreeMap<String, u32> = BTreeMap::new();
    let mut waits: BTreeMap<&str, Vec<Micros>> = BTreeMap::new();
    let (mut reclaimed_mb, mut reclaim_ms, mut launches) = (0, 0, 0);
    for j in m.jobs() {
        *jobs.entry(state_name(j)).or_default() += 1;
        if let Some(start) = j.first_start_us {
            waits.entry(j.spec.queue.name()).or_default().push(start - j.submit_us);
        }
        for t in &j.tasks {
            for (k, n) in &t.preemptions {
                *preemptions.entry(k.clone()).or_default() += n;
            }
            reclaimed_mb += t.reclaimed_mb;
            reclaim_ms += t.reclaim_ms;
            launches += t.launches;
        }
    }
    let wait: BTreeMap<&str, Wait> = waits
        .into_iter()
        .map(|(class, w)| {
            let mean_us = w.iter().sum::<Micros>() / w.len() as Micros;
            (class, Wait { started: w.len() as u32, mean_us, max_us: w.iter().copied().max().unwrap_or(0) })
        })
        .collect();
    (
        200,
        json!({
            "jobs": jobs,
            "task_launches": launches,
            "preemptions": preemptions,
            "reclaimed_mb": reclaimed_mb,
            "reclaim_ms": reclaim_ms,
            "wait": wait,
            "journal_steps": m.journal_steps().unwrap_or(0),
        }),
    )
}

fn state_name(j: &JobView) -> &'static str {
    match j.state {
        JobState::Pending => "pending",
        JobState::Running => "running",
        JobState::Finished => "finished",
        JobState::Failed => "failed",
        JobState::Cancelled => "cancelled",
    }
}

/// Serves the API on `server` until `stop` is set.
pub fn serve(server: &tiny_http::Server, manager: &Mutex<Manager>, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        let mut request = match server.recv_timeout(Duration::from_millis(100)) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(e) => {
                eprintln!("pliant manager: API: {e}");
                continue;
            }
        };
        let mut body = String::new();
        let answer = match request.as_reader().take(MAX_BODY).read_to_string(&mut body) {
            Ok(_) => handle(manager, request.method().as_str(), request.url(), &body),
            Err(e) => (400, json!({ "error": format!("unreadable body: {e}") })),
        };
        let header =
            tiny_http::Header::from_bytes(&b"Content-Type"[..], &b"application/json"[..]).expect("valid header");
        let response =
            tiny_http::Response::from_string(answer.1.to_string()).with_status_code(answer.0).with_header(header);
        if let Err(e) = request.respond(response) {
            eprintln!("pliant manager: API: {e}");
        }
    }
}
