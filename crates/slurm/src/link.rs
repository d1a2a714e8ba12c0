//! The controller's channel to its node agents (`pliant agent --slurm`, one
//! per node of the partition): the manager's protocol, delivery and
//! authentication, served over TLS on the controller's `--listen` address.
//!
//! - An agent joins with the controller's join token (`STATE_DIR/join-token`)
//!   and is issued a node credential ([`NodeCredentials`]); only that
//!   credential may act as the node from then on. The credentials' digests
//!   are kept in `STATE_DIR/node-credentials.json`, so that agents outlive
//!   a controller restart.
//! - Its heartbeats carry its reports (numbered: one sent again is taken
//!   once) and bring back its orders, each batch once, acknowledged
//!   ([`Delivery`]).
//! - A node whose agent registered again, and every node after a controller
//!   restart, has its jobs named again ([`NodeLink::take_to_adopt`]).
//!
//! The controller acts on a node's cgroups only through that node's agent:
//! without one heard within [`AGENT_TIMEOUT`], it waits and says so.

use pliant_live::credentials::{not_its_credential, Joiner, NodeCredentials};
use pliant_live::delivery::Delivery;
use pliant_live::machine::unix_us;
use pliant_live::protocol::{AgentOp, AgentReport};
use pliant_live::report_sequence::ReportSequence;
use pliant_live::server::{Request, Response};
use pliant_live::token::Token;
use pliant_live::wire::{registered_node, Heartbeat, Orders, Registered};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Silence after which a node counts as having no agent.
pub const AGENT_TIMEOUT: Duration = Duration::from_secs(5);

/// One node's side of the channel.
#[derive(Debug, Default)]
struct Node {
    last_heard: Option<Instant>,
    /// Its reports taken.
    reports: ReportSequence,
    /// The batch in flight and its orders.
    sent: Option<(u64, Vec<AgentOp>)>,
    /// Its jobs are to be named again.
    to_adopt: bool,
}

/// The agents of the partition's nodes, as the controller sees them.
#[derive(Debug)]
pub struct NodeLink {
    names: Vec<String>,
    nodes: Vec<Node>,
    join: Token,
    credentials: NodeCredentials,
    credentials_file: PathBuf,
    delivery: Delivery,
    reports: Vec<(usize, AgentReport)>,
    carried_out: Vec<(usize, AgentOp)>,
    opened: Instant,
}

impl NodeLink {
    /// The channel to the agents of `names` (in core order) of a controller
    /// whose state is in `state_dir`, joined with `join`.
    pub fn open(state_dir: &Path, names: Vec<String>, join: Token) -> Result<NodeLink, String> {
        let credentials_file = state_dir.join("node-credentials.json");
        let credentials = match std::fs::read_to_string(&credentials_file) {
            Ok(text) => {
                let (used, unused): (BTreeMap<String, String>, BTreeMap<String, String>) =
                    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", credentials_file.display()))?;
                NodeCredentials::from_digests(used, unused)
                    .map_err(|e| format!("{}: {e}", credentials_file.display()))?
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => NodeCredentials::default(),
            Err(e) => return Err(format!("{}: {e}", credentials_file.display())),
        };
        let nodes = names.iter().map(|_| Node { to_adopt: true, ..Node::default() }).collect();
        Ok(NodeLink {
            delivery: Delivery::new(names.len(), unix_us()),
            names,
            nodes,
            join,
            credentials,
            credentials_file,
            reports: Vec::new(),
            carried_out: Vec::new(),
            opened: Instant::now(),
        })
    }

    /// True when `node`'s agent was heard within [`AGENT_TIMEOUT`].
    pub fn present(&self, node: usize) -> bool {
        self.nodes[node].last_heard.is_some_and(|t| t.elapsed() < AGENT_TIMEOUT)
    }

    /// True when `node` has no agent and has had time to be heard from
    /// ([`AGENT_TIMEOUT`] since the controller started): worth saying.
    pub fn missing(&self, node: usize) -> bool {
        !self.present(node) && self.opened.elapsed() >= AGENT_TIMEOUT
    }

    /// Queues an order for `node`'s agent.
    pub fn push(&mut self, node: usize, op: AgentOp) {
        self.delivery.push(node, op);
    }

    /// The reports taken since the last call, with their node.
    pub fn take_reports(&mut self) -> Vec<(usize, AgentReport)> {
        std::mem::take(&mut self.reports)
    }

    /// The orders agents acknowledged as carried out since the last call.
    pub fn take_carried_out(&mut self) -> Vec<(usize, AgentOp)> {
        std::mem::take(&mut self.carried_out)
    }

    /// The nodes whose jobs are to be named again (a new agent, or a new
    /// controller), once their agent is there.
    pub fn take_to_adopt(&mut self) -> Vec<usize> {
        let mut out = Vec::new();
        for (i, node) in self.nodes.iter_mut().enumerate() {
            if node.to_adopt && node.last_heard.is_some() {
                node.to_adopt = false;
                out.push(i);
            }
        }
        out
    }

    fn save_credentials(&self) -> Result<(), String> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let (used, unused) = self.credentials.digests();
        let text = serde_json::to_string(&(used, unused)).expect("digests serialise");
        let tmp = self.credentials_file.with_extension("tmp");
        let _ = std::fs::remove_file(&tmp);
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .and_then(|mut f| f.write_all(text.as_bytes()).and_then(|()| f.sync_all()))
            .and_then(|()| std::fs::rename(&tmp, &self.credentials_file))
            .map_err(|e| format!("{}: {e}", self.credentials_file.display()))
    }

    fn register(&mut self, request: &Request) -> Response {
        let joiner = match request.bearer.as_deref() {
            Some(b) if self.join.matches(b) => Joiner::JoinToken,
            Some(b) => Joiner::Credential(b),
            None => return unauthorised("a node's agent registers with the join token (STATE_DIR/join-token)"),
        };
        let record = match std::str::from_utf8(&request.body)
            .map_err(|e| e.to_string())
            .and_then(|body| registered_node(body).map_err(|_| "malformed registration".to_string()))
        {
            Ok(r) => r,
            Err(e) => return Response::error(400, &e),
        };
        let Some(node) = self.names.iter().position(|n| *n == record.name) else {
            // Only the join token's holder learns that a name is not a node here.
            if joiner != Joiner::JoinToken {
                return Response::error(403, &not_its_credential(&record.name));
            }
            return Response::error(
                404,
                &format!("`{}` is not a node of the partition ({})", record.name, self.names.join(", ")),
            );
        };
        let issued = match self.credentials.admit(&record.name, joiner) {
            Ok(issued) => issued,
            Err(why) => return Response::error(403, &why),
        };
        if let Err(e) = self.save_credentials() {
            return Response::error(500, &format!("cannot keep the node credential: {e}"));
        }
        eprintln!("pliant slurm: the agent of node {} registered", record.name);
        self.delivery.reregistered(node);
        let n = &mut self.nodes[node];
        (n.sent, n.to_adopt, n.last_heard) = (None, true, Some(Instant::now()));
        let answer = Registered {
            node: node as u32,
            agent_timeout_ms: AGENT_TIMEOUT.as_millis() as u64,
            credential: issued.map(|c| c.as_str().to_string()),
        };
        Response::json(200, &serde_json::to_value(answer).expect("answers serialise"))
    }

    fn heartbeat(&mut self, node: &str, request: &Request) -> Response {
        let Some(bearer) = request.bearer.as_deref() else {
            return unauthorised(&format!("only node {node}'s agent may act as node {node}"));
        };
        let id = node.parse::<usize>().ok().filter(|&i| i < self.names.len());
        let Some(id) = id.filter(|&i| self.credentials.check(&self.names[i], bearer).is_some()) else {
            return Response::error(
                403,
                &format!("only node {node}'s agent, with the node credential it was issued, may act as node {node}"),
            );
        };
        let beat: Heartbeat = match std::str::from_utf8(&request.body).ok().and_then(|b| serde_json::from_str(b).ok()) {
            Some(beat) => beat,
            None => return Response::error(400, "malformed heartbeat"),
        };
        let n = &mut self.nodes[id];
        n.last_heard = Some(Instant::now());
        let (unseen, through) = n.reports.unseen(beat.first_report, beat.reports);
        self.reports.extend(unseen.into_iter().map(|report| (id, report)));
        n.reports.taken(through);
        if let Some((batch, ops)) = n.sent.take() {
            if beat.acked == Some(batch) {
                self.carried_out.extend(ops.into_iter().map(|op| (id, op)));
            }
        }
        self.delivery.acknowledge(id, beat.acked);
        let (batch, ops) = self.delivery.send(id);
        if !ops.is_empty() {
            self.nodes[id].sent = Some((batch, ops.clone()));
        }
        let reports_taken = Some(self.nodes[id].reports.next());
        Response::json(200, &serde_json::to_value(Orders { batch, ops, reports_taken }).expect("orders serialise"))
    }
}

fn unauthorised(why: &str) -> Response {
    let mut r = Response::error(401, &format!("no credential: {why}"));
    r.headers.push(("WWW-Authenticate", "Bearer".into()));
    r
}

/// Answers one request of an agent: a registration or a heartbeat.
pub fn respond(link: &Mutex<NodeLink>, request: &Request) -> Response {
    let mut link = link.lock().unwrap_or_else(|e| e.into_inner());
    let path = request.url.split('?').next().unwrap_or(&request.url).trim_end_matches('/');
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    match (request.method.as_str(), parts.as_slice()) {
        ("POST", ["agents", "register"]) => link.register(request),
        ("POST", ["agents", node, "heartbeat"]) => link.heartbeat(node, request),
        _ => Response::error(
            404,
            &format!("no such endpoint: {} {path} (a Slurm controller serves its agents only)", request.method),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::model::{JobId, TaskRef};
    use pliant_core::Resources;
    use serde_json::{json, Value};

    fn post(link: &Mutex<NodeLink>, url: &str, bearer: &str, body: Value) -> (u16, Value) {
        let request = Request {
            method: "POST".into(),
            url: url.into(),
            bearer: Some(bearer.into()),
            body: body.to_string().into_bytes(),
        };
        let r = respond(link, &request);
        (r.status, serde_json::from_slice(&r.body).unwrap())
    }

    fn registration(name: &str) -> Value {
        json!({ "name": name, "capacity": Resources::ZERO, "mechanisms": [], "notes": [] })
    }

    fn beat(reports: Vec<AgentReport>, first_report: u64, acked: Option<u64>) -> Value {
        serde_json::to_value(Heartbeat { reports, first_report, acked }).unwrap()
    }

    /// A node joins with the join token and acts with the credential it was
    /// issued alone; its reports are taken once; its orders count as carried
    /// out once acknowledged; a controller opened anew on the same state
    /// still knows its credential and names its jobs again.
    #[test]
    fn agents_join_report_once_acknowledge_and_outlive_a_controller_restart() {
        let dir = pliant_live::scratch::ScratchDir::new("pliant-slurm-link").unwrap();
        let join = Token::random().unwrap();
        let names = vec!["n1".to_string(), "n2".to_string()];
        let link = Mutex::new(NodeLink::open(dir.path(), names.clone(), join.clone()).unwrap());
        assert!(!link.lock().unwrap().present(0), "no agent yet: the controller waits for one");
        assert_eq!(post(&link, "/agents/register", "not-the-join-token", registration("n1")).0, 403);
        assert_eq!(post(&link, "/agents/register", join.as_str(), registration("elsewhere")).0, 404);
        let (status, answer) = post(&link, "/agents/register", join.as_str(), registration("n1"));
        assert_eq!(status, 200, "{answer}");
        let credential = answer["credential"].as_str().unwrap().to_string();
        assert!(link.lock().unwrap().present(0) && !link.lock().unwrap().present(1));
        assert_eq!(link.lock().unwrap().take_to_adopt(), vec![0]);
        // Only n1's credential acts as n1.
        assert_eq!(post(&link, "/agents/0/heartbeat", join.as_str(), beat(vec![], 0, None)).0, 403);
        assert_eq!(post(&link, "/agents/1/heartbeat", &credential, beat(vec![], 0, None)).0, 403);
        let task = TaskRef { job: JobId(7), task: 0 };
        let resume = AgentOp::Resume { task, limits: Resources::new(1000, 700) };
        link.lock().unwrap().push(0, resume.clone());
        let reclaimed = AgentReport::Reclaimed { task, mem_mb: 100, freed_mb: 90, took_ms: 5 };
        let (status, orders) = post(&link, "/agents/0/heartbeat", &credential, beat(vec![reclaimed.clone()], 50, None));
        assert_eq!(status, 200);
        let batch = orders["batch"].as_u64().unwrap();
        assert_eq!(orders["ops"].as_array().unwrap().len(), 1);
        assert!(link.lock().unwrap().take_carried_out().is_empty(), "not acknowledged yet");
        // The answer was lost: the report comes again, with one more; the
        // batch is not acknowledged and goes again.
        let resumed = AgentReport::Resumed { task };
        let (_, again) =
            post(&link, "/agents/0/heartbeat", &credential, beat(vec![reclaimed.clone(), resumed.clone()], 50, None));
        assert_eq!(again["ops"].as_array().unwrap().len(), 1);
        let again_batch = again["batch"].as_u64().unwrap();
        assert_ne!(again_batch, batch);
        assert_eq!(link.lock().unwrap().take_reports(), vec![(0, reclaimed), (0, resumed)]);
        post(&link, "/agents/0/heartbeat", &credential, beat(vec![], 52, Some(again_batch)));
        assert_eq!(link.lock().unwrap().take_carried_out(), vec![(0, resume)]);
        // A new controller: the credential still acts as n1, and n1's jobs are named again.
        drop(link);
        let link = Mutex::new(NodeLink::open(dir.path(), names, join).unwrap());
        assert!(link.lock().unwrap().take_to_adopt().is_empty(), "not before its agent is heard");
        assert_eq!(post(&link, "/agents/0/heartbeat", &credential, beat(vec![], 52, Some(again_batch))).0, 200);
        assert_eq!(link.lock().unwrap().take_to_adopt(), vec![0]);
        assert!(link.lock().unwrap().take_carried_out().is_empty(), "an old batch's acknowledgement is no new one's");
    }
}
