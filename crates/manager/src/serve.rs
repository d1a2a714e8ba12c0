//! `pliant serve`: the manager as its own process; agents (`pliant agent`)
//! join with the join token (`STATE_DIR/join-token`, or
//! `--join-token-file`), are issued their node credentials, and heartbeat
//! with them. A new cluster waits until the number of
//! nodes asked for have registered (the core's nodes are fixed when the
//! journal is created); a recovered one starts at once and its agents are
//! told, at their next heartbeat, to take their tasks over.

use crate::api;
use crate::local::{Agents, ManagerSetup, TICK};
use crate::manager::{check_kept_policy, default_policy, unfit_node, ClusterConfig, Manager};
use pliant_core::policy::{Policy, Profile};
use pliant_core::Micros;
use pliant_live::credentials::{Joiner, NodeCredentials};
use pliant_live::fence::requeue_after;
use pliant_live::machine::unix_us;
use pliant_live::server::{self, Limits, Request, Response};
use pliant_live::stepper::build_policy;
use pliant_live::tls::ServerTls;
use pliant_live::wire::{registered_node, NodeRecord, Registered};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Options of `pliant serve`.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// State, address and parameters.
    pub setup: ManagerSetup,
    /// The policy (default: the preset [`default_policy`] names for the nodes that register).
    pub policy: Option<Profile>,
    /// Nodes a new cluster waits for.
    pub nodes: usize,
    /// Silence after which an agent is declared lost.
    pub agent_timeout: Duration,
    /// The join token's file (`--join-token-file`); default
    /// `STATE_DIR/join-token`, generated on first start.
    pub join_token_file: Option<std::path::PathBuf>,
    /// The uids jobs are given (default [`pliant_live::uid_range::DEFAULT_TASK_UIDS`]).
    pub task_uids: Option<pliant_live::uid_range::UidRange>,
}

/// Runs until `stop` is set.
pub fn run_serve(opts: &ServeOptions, stop: &AtomicBool, log: &(dyn Fn(&str) + Sync)) -> Result<(), String> {
    let registry = &opts.setup.registry;
    let policy = match &opts.policy {
        Some(profile) => Some((profile.clone(), build_policy(registry, profile, &opts.setup.params)?)),
        None => None,
    };
    let api = opts.setup.open_api(Agents::Join(opts.join_token_file.as_deref()), log)?;
    let (listener, tokens, state_dir) = (&api.listener, &api.tokens, &api.state_dir);
    // A policy given is checked before anyone is waited for; each node then is, as it registers.
    check_kept_policy(state_dir, opts.policy.as_ref(), registry)?;
    let recovered = state_dir.join("journal.sqlite").exists();
    let (nodes, credentials) = if recovered {
        Default::default()
    } else {
        log(&format!("manager on {}: waiting for {} agent(s) to register", api.url(), opts.nodes));
        match gather(listener, tokens, &api.tls, opts.nodes, policy.as_ref(), opts.agent_timeout, stop, log) {
            Some(gathered) => gathered,
            None => return Ok(()),
        }
    };
    let policy = match policy {
        Some((profile, _)) => profile,
        None => {
            let name = default_policy(&nodes);
            if !recovered {
                log(&format!("policy {name} (the default for what every node can do)"));
            }
            registry.preset(name)?
        }
    };
    let params = opts.setup.params.clone();
    let fresh = ClusterConfig { policy: policy.into(), params, nodes, epoch_unix_us: unix_us() };
    let (mut manager, recovered) = Manager::open(state_dir, fresh, registry).map_err(|e| e.to_string())?;
    if !recovered {
        manager.adopt_credentials(credentials).map_err(|e| e.to_string())?;
    }
    manager.set_agent_timeout(opts.agent_timeout);
    if let Some(range) = opts.task_uids {
        manager.set_task_uids(range);
    }
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
        s.spawn(|| api::serve(listener, &manager, tokens, &api.tls, stop));
        let result = (|| {
            while !stop.load(Ordering::SeqCst) {
                // Until the core's next deadline (a timer, the monitor), at most a tick.
                let pause = manager.lock().unwrap_or_else(|e| e.into_inner()).pause(TICK);
                std::thread::sleep(pause);
                let mut m = manager.lock().unwrap_or_else(|e| e.into_inner());
                m.advance(Vec::new()).map_err(|e| e.to_string())?;
                if let Some(news) = m.placing_news() {
                    log(&news);
                }
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

/// Answers registrations (with the join token, or a node's own credential)
/// until `count` distinct nodes have registered; other requests get 503, and
/// a node that cannot carry out `policy` (when one was given) 409. Returns
/// the nodes with the credentials issued to them; `None` when stopped first.
#[allow(clippy::too_many_arguments)]
fn gather(
    listener: &TcpListener,
    tokens: &api::Tokens,
    tls: &ServerTls,
    count: usize,
    policy: Option<&(Profile, Policy)>,
    agent_timeout: Duration,
    stop: &AtomicBool,
    log: &(dyn Fn(&str) + Sync),
) -> Option<(Vec<NodeRecord>, NodeCredentials)> {
    let gathered: Mutex<(Vec<NodeRecord>, NodeCredentials)> = Mutex::default();
    let formed = || gathered.lock().unwrap_or_else(|e| e.into_inner()).0.len() >= count;
    let register = |request: &Request| {
        let (nodes, credentials) = &mut *gathered.lock().unwrap_or_else(|e| e.into_inner());
        let waiting = format!("waiting for {} of {count} agents to register", count - nodes.len());
        let joiner = match (request.method.as_str(), request.url.as_str()) {
            ("POST", "/agents/register") => match api::joiner(tokens, request) {
                Ok(joiner) => joiner,
                Err(refusal) => return refusal,
            },
            // A registered agent's heartbeats wait, as everyone else does, and
            // its credential counts as used (the join token cannot replace it).
            // Any other's are told to register again: an agent of a manager
            // killed as it formed the cluster then joins this one.
            (_, url) if url.starts_with("/agents/") => {
                let id = url.split('/').nth(2).and_then(|n| n.parse::<usize>().ok());
                let known = match (id.and_then(|i| nodes.get(i)), request.bearer.as_deref()) {
                    (Some(node), Some(bearer)) => credentials.check(&node.name, bearer).is_some(),
                    _ => false,
                };
                if known {
                    return Response::error(503, &waiting);
                }
                return Response::error(409, "not a node of the cluster being formed: register again");
            }
            _ => {
                return api::refuse_unauthorised(&tokens.api, request).unwrap_or_else(|| Response::error(503, &waiting))
            }
        };
        let Ok(body) = std::str::from_utf8(&request.body) else {
            return Response::error(400, "the body is not UTF-8");
        };
        let record = match registered_node(body) {
            Ok(r) => r,
            Err(why) => return Response::error(400, &why),
        };
        if let Some(why) = policy.and_then(|(profile, p)| unfit_node(&profile.name, p, &record)) {
            log(&format!("refused node `{}`: {why}", record.name));
            return Response::error(409, &why);
        }
        let node = nodes.iter().position(|n| n.name == record.name).unwrap_or(nodes.len());
        // A credential is judged first (a name not among the nodes holds none):
        // the refusal does not tell the nodes' names from made-up ones.
        if node >= count && joiner == Joiner::JoinToken {
            return Response::error(503, "the cluster is being formed without this node");
        }
        let issued = match credentials.admit(&record.name, joiner) {
            Ok(issued) => issued,
            Err(why) => return Response::error(403, &why),
        };
        if node < nodes.len() {
            nodes[node] = record;
        } else {
            nodes.push(record);
        }
        let answer = Registered {
            node: node as u32,
            agent_timeout_ms: agent_timeout.as_millis() as u64,
            credential: issued.map(|c| c.as_str().to_string()),
        };
        Response::json(200, &serde_json::to_value(answer).expect("answers serialise"))
    };
    let running = || !stop.load(Ordering::SeqCst) && !formed();
    server::serve(listener, Limits::default(), Some(tls), &running, &register);
    (!stop.load(Ordering::SeqCst)).then(|| gathered.into_inner().unwrap_or_else(|e| e.into_inner()))
}
