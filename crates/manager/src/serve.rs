//! `pliant serve`: the manager as its own process; agents (`pliant agent`)
//! register over HTTP and heartbeat. A new cluster waits until the number of
//! nodes asked for have registered (the core's nodes are fixed when the
//! journal is created); a recovered one starts at once and its agents are
//! told, at their next heartbeat, to take their tasks over.

use crate::api;
use crate::local::{ManagerSetup, TICK};
use crate::manager::{unix_us, ClusterConfig, Manager, NodeRecord};
use pliant_core::Micros;
use serde_json::json;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Options of `pliant serve`.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// State, address and parameters.
    pub setup: ManagerSetup,
    /// Policy preset.
    pub policy: String,
    /// Nodes a new cluster waits for.
    pub nodes: usize,
    /// Silence after which an agent is declared lost.
    pub agent_timeout: Duration,
}

/// Runs until `stop` is set.
pub fn run_serve(opts: &ServeOptions, stop: &AtomicBool, log: &(dyn Fn(&str) + Sync)) -> Result<(), String> {
    let server = tiny_http::Server::http(&opts.setup.listen)
        .map_err(|e| format!("cannot listen on {}: {e}", opts.setup.listen))?;
    let recovered = opts.setup.state_dir.join("journal.sqlite").exists();
    let nodes = if recovered {
        Vec::new()
    } else {
        log(&format!("manager on http://{}: waiting for {} agent(s) to register", server.server_addr(), opts.nodes));
        match gather(&server, opts.nodes, stop) {
            Some(nodes) => nodes,
            None => return Ok(()),
        }
    };
    let fresh = ClusterConfig {
        policy: opts.policy.clone(),
        params: opts.setup.params.clone(),
        nodes,
        epoch_unix_us: unix_us(),
    };
    let (mut manager, recovered) = Manager::open(&opts.setup.state_dir, fresh).map_err(|e| e.to_string())?;
    if recovered {
        log(&format!("recovered {} jobs from the journal; agents take their tasks over", manager.jobs().len()));
    }
    // A new cluster's agents may keep cgroups of an earlier one: they are swept.
    manager.queue_recovery();
    let names: Vec<&str> = manager.config().nodes.iter().map(|n| n.name.as_str()).collect();
    log(&format!(
        "manager on http://{} — policy {}, nodes {}",
        server.server_addr(),
        manager.config().policy,
        names.join(", ")
    ));
    let timeout = opts.agent_timeout.as_micros() as Micros;
    let manager = Mutex::new(manager);
    std::thread::scope(|s| {
        s.spawn(|| api::serve(&server, &manager, stop));
        let result = (|| {
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(TICK);
                let mut m = manager.lock().unwrap_or_else(|e| e.into_inner());
                m.advance(Vec::new()).map_err(|e| e.to_string())?;
                for name in m.check_agents(timeout).map_err(|e| e.to_string())? {
                    log(&format!("agent `{name}` stopped heartbeating: declared lost, its tasks requeued"));
                }
            }
            Ok(())
        })();
        stop.store(true, Ordering::SeqCst);
        result
    })
}

/// Answers registrations until `count` distinct nodes have registered; other
/// requests get 503. `None` when stopped first.
fn gather(server: &tiny_http::Server, count: usize, stop: &AtomicBool) -> Option<Vec<NodeRecord>> {
    let mut nodes: Vec<NodeRecord> = Vec::new();
    while nodes.len() < count {
        if stop.load(Ordering::SeqCst) {
            return None;
        }
        let Ok(Some(mut request)) = server.recv_timeout(Duration::from_millis(100)) else { continue };
        let mut body = String::new();
        let _ = request.as_reader().take(1 << 20).read_to_string(&mut body);
        let (status, answer) = match (request.method().as_str(), request.url()) {
            ("POST", "/agents/register") => match serde_json::from_str::<NodeRecord>(&body) {
                Ok(record) => {
                    let node = nodes.iter().position(|n| n.name == record.name).unwrap_or(nodes.len());
                    if node == nodes.len() {
                        nodes.push(record);
                    } else {
                        nodes[node] = record;
                    }
                    (200, json!({ "node": node }))
                }
                Err(e) => (400, json!({ "error": format!("malformed registration: {e}") })),
            },
            _ => {
                (503, json!({ "error": format!("waiting for {} of {count} agents to register", count - nodes.len()) }))
            }
        };
        let _ = request.respond(tiny_http::Response::from_string(answer.to_string()).with_status_code(status));
    }
    Some(nodes)
}
