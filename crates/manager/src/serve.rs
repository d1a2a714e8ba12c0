//! `pliant serve`: the manager as its own process; agents (`pliant agent`)
//! register over HTTP and heartbeat. A new cluster waits until the number of
//! nodes asked for have registered (the core's nodes are fixed when the
//! journal is created); a recovered one starts at once and its agents are
//! told, at their next heartbeat, to take their tasks over.

use crate::api;
use crate::local::{ManagerSetup, TICK};
use crate::manager::{build_policy, default_policy, unfit_node, unix_us, ClusterConfig, Manager, NodeRecord};
use crate::server::{self, Limits, Request, Response};
use crate::tls::ServerTls;
use crate::token::Token;
use pliant_core::policy::Policy;
use pliant_core::Micros;
use pliant_live::fence::requeue_after;
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Options of `pliant serve`.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// State, address and parameters.
    pub setup: ManagerSetup,
    /// Policy preset (default: [`default_policy`] of the nodes that register).
    pub policy: Option<String>,
    /// Nodes a new cluster waits for.
    pub nodes: usize,
    /// Silence after which an agent is declared lost.
    pub agent_timeout: Duration,
}

/// Runs until `stop` is set.
pub fn run_serve(opts: &ServeOptions, stop: &AtomicBool, log: &(dyn Fn(&str) + Sync)) -> Result<(), String> {
    // A policy given is checked before anyone is waited for; each node then is, as it registers.
    let policy = match &opts.policy {
        Some(name) => Some((name.clone(), build_policy(name, &opts.setup.params)?)),
        None => None,
    };
    let api = opts.setup.open_api(log)?;
    let (listener, token, state_dir) = (&api.listener, &api.token, &api.state_dir);
    let recovered = state_dir.join("journal.sqlite").exists();
    let nodes = if recovered {
        Vec::new()
    } else {
        log(&format!("manager on {}: waiting for {} agent(s) to register", api.url(), opts.nodes));
        match gather(listener, token, &api.tls, opts.nodes, policy.as_ref(), opts.agent_timeout, stop, log) {
            Some(nodes) => nodes,
            None => return Ok(()),
        }
    };
    let (nodes, credentials): (Vec<NodeRecord>, Vec<Token>) = nodes.into_iter().unzip();
    let policy = policy.map_or_else(
        || {
            let name = default_policy(&nodes);
            if !recovered {
                log(&format!("policy {name} (the default for what every node can do)"));
            }
            name.to_string()
        },
        |(name, _)| name,
    );
    let fresh = ClusterConfig { policy, params: opts.setup.params.clone(), nodes, epoch_unix_us: unix_us() };
    let names: Vec<String> = fresh.nodes.iter().map(|n| n.name.clone()).collect();
    let (mut manager, recovered) = Manager::open(state_dir, fresh).map_err(|e| e.to_string())?;
    for (name, credential) in names.iter().zip(&credentials) {
        manager.admit(name, credential).map_err(|e| format!("{e:?}"))?;
    }
    manager.set_agent_timeout(opts.agent_timeout);
    if recovered {
        log(&format!("recovered {} jobs from the journal; agents take their tasks over", manager.jobs().len()));
    }
    // A new cluster's agents may keep cgroups of an earlier one: they are swept.
    manager.queue_recovery();
    let names: Vec<&str> = manager.config().nodes.iter().map(|n| n.name.as_str()).collect();
    log(&format!("manager on {} — policy {}, nodes {}", api.url(), manager.config().policy, names.join(", ")));
    // Agents stop their tasks after the timeout; the manager requeues them after a margin more.
    let timeout = requeue_after(opts.agent_timeout).as_micros() as Micros;
    let manager = Mutex::new(manager);
    std::thread::scope(|s| {
        s.spawn(|| api::serve(listener, &manager, token, &api.tls, stop));
        let result = (|| {
            while !stop.load(Ordering::SeqCst) {
                // Until the core's next deadline (a timer, the monitor), at most a tick.
                let pause = manager.lock().unwrap_or_else(|e| e.into_inner()).pause(TICK);
                std::thread::sleep(pause);
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

/// Answers registrations (with the token) until `count` distinct nodes
/// have registered; other requests get 503, and a node that cannot carry
/// out `policy` (when one was given) 409. Returns the nodes with their
/// credentials; `None` when stopped first.
#[allow(clippy::too_many_arguments)]
fn gather(
    listener: &TcpListener,
    token: &Token,
    tls: &ServerTls,
    count: usize,
    policy: Option<&(String, Policy)>,
    agent_timeout: Duration,
    stop: &AtomicBool,
    log: &(dyn Fn(&str) + Sync),
) -> Option<Vec<(NodeRecord, Token)>> {
    let nodes: Mutex<Vec<(NodeRecord, Token)>> = Mutex::new(Vec::new());
    let guard = api::Guard::for_listener(listener);
    let gathered = || nodes.lock().unwrap_or_else(|e| e.into_inner()).len() >= count;
    let register = |request: &Request| {
        if let Some(refusal) = api::refuse_unauthorised(token, guard, request) {
            return refusal;
        }
        let mut nodes = nodes.lock().unwrap_or_else(|e| e.into_inner());
        if (request.method.as_str(), request.url.as_str()) != ("POST", "/agents/register") {
            let waiting = format!("waiting for {} of {count} agents to register", count - nodes.len());
            return Response::error(503, &waiting);
        }
        let Ok(body) = std::str::from_utf8(&request.body) else {
            return Response::error(400, "the body is not UTF-8");
        };
        let (record, credential) = match api::Registration::parse(body) {
            Ok(r) => r,
            Err(refusal) => return api::refusal_response(refusal),
        };
        if let Some(why) = policy.and_then(|(name, p)| unfit_node(name, p, &record)) {
            log(&format!("refused node `{}`: {why}", record.name));
            return Response::error(409, &why);
        }
        let node = nodes.iter().position(|(n, _)| n.name == record.name).unwrap_or(nodes.len());
        if node < nodes.len() {
            if !nodes[node].1.matches(credential.as_str()) {
                return Response::error(
                    403,
                    &format!("node `{}` registered before with another credential", record.name),
                );
            }
            nodes[node].0 = record;
        } else if node < count {
            nodes.push((record, credential));
        } else {
            return Response::error(503, "the cluster is being formed without this node");
        }
        let answer = api::Registered { node: node as u32, agent_timeout_ms: agent_timeout.as_millis() as u64 };
        Response::json(200, &serde_json::to_value(answer).expect("answers serialise"))
    };
    let running = || !stop.load(Ordering::SeqCst) && !gathered();
    server::serve(listener, Limits::default(), Some(tls), &running, &register);
    (!stop.load(Ordering::SeqCst)).then(|| nodes.into_inner().unwrap_or_else(|e| e.into_inner()))
}
