//! The API over real HTTPS on loopback, without a node (agents are played by
//! hand, so these run anywhere): the token guards every request that changes
//! something, a node joins with the join token and acts as itself only with
//! the credential it is issued, `/metrics` is valid Prometheus text with the values worked out
//! below, the server's limits hold (413 before the body is read; a peer over its
//! places waits, past twice them is closed), and a client sends nothing to a server whose
//! certificate is not the one it pins.

use pliant_core::MechanismKind;
use pliant_core::Resources;
use pliant_live::client::{Client, ClientError};
use pliant_live::machine::unix_us;
use pliant_live::scratch::ScratchDir;
use pliant_live::server::{self, Limits, Response};
use pliant_live::tls::{Pin, ServerTls};
use pliant_live::token::Token;
use pliant_live::wire::NodeRecord;
use pliant_manager::api;
use pliant_manager::manager::{ClusterConfig, Manager};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

fn node(name: &str) -> NodeRecord {
    NodeRecord {
        name: name.into(),
        capacity: Resources::new(2000, 600),
        mechanisms: MechanismKind::ALL.to_vec(),
        notes: vec![],
    }
}

/// A manager served on loopback.
struct Api<'a> {
    url: String,
    /// A client with the token, one without, and one with the join token.
    with: Client,
    without: Client,
    joiner: Client,
    token: &'a Token,
    state_dir: &'a std::path::Path,
    /// The manager's certificate, pinned.
    pin: Pin,
}

/// A node's registration body.
fn registration(name: &str) -> Value {
    json!(node(name))
}

impl Api<'_> {
    /// A client acting with `credential`.
    fn client(&self, credential: &str) -> Client {
        Client::new(&self.url, Some(self.pin.clone())).with_token(Some(Token::parse(credential, "test").unwrap()))
    }

    /// Node `name` joins with the join token: its id and the credential it is issued.
    fn join(&self, name: &str) -> (u64, String) {
        let answer = self.joiner.post("/agents/register", &registration(name)).unwrap();
        (answer["node"].as_u64().unwrap(), answer["credential"].as_str().unwrap().to_string())
    }
}

/// Runs `body` against a manager of one node `n0` ⟨2 CPU, 600 MB⟩ under
/// `kill`, served on loopback, with a client that has the token and one that has not.
fn with_api(name: &str, body: impl FnOnce(&Api)) {
    with_api_on(name, "127.0.0.1:0", &["n0"], body)
}

/// [`with_api`] with the API listening on `bind` (reached on 127.0.0.1), with nodes `nodes`.
fn with_api_on(name: &str, bind: &str, nodes: &[&str], body: impl FnOnce(&Api)) {
    let dir = ScratchDir::new(name).unwrap();
    let nodes = nodes.iter().map(|n| node(n)).collect();
    let cfg = ClusterConfig { policy: "kill".into(), params: vec![], nodes, epoch_unix_us: unix_us() };
    let (m, _) = Manager::open(dir.path(), cfg, &pliant_plugins::registry()).unwrap();
    let token = Token::for_manager(dir.path(), None, &|_| {}).unwrap();
    let join = Token::join_for_manager(dir.path(), None, &|_| {}).unwrap();
    let tokens = api::Tokens { api: token.clone(), join: Some(join.clone()) };
    let tls = ServerTls::for_manager(dir.path(), &|_| {}).unwrap();
    let pin = Pin::parse(tls.fingerprint()).unwrap();
    let listener = TcpListener::bind(bind).unwrap();
    let url = format!("https://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let (manager, stop) = (Mutex::new(m), AtomicBool::new(false));
    std::thread::scope(|s| {
        s.spawn(|| api::serve(&listener, &manager, &tokens, &tls, &stop));
        let _stop = StopOnDrop(&stop);
        let without = Client::new(&url, Some(pin.clone()));
        let with = without.clone().with_token(Some(token.clone()));
        let joiner = without.clone().with_token(Some(join));
        body(&Api { url: url.clone(), with, without, joiner, token: &token, state_dir: dir.path(), pin })
    });
}

/// Stops a server when dropped, so a failed assertion ends the test instead of hanging it.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn status(result: Result<Value, ClientError>) -> u16 {
    match result {
        Ok(_) => 200,
        Err(ClientError::Refused { status, .. }) => status,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn every_change_needs_the_token_and_works_with_it() {
    with_api("pliant-api-auth", |api| {
        let (with, without, token) = (&api.with, &api.without, api.token);
        // The generated token: 32 random bytes in hex, readable by its owner only.
        let file = api.state_dir.join("token");
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), token.as_str());
        assert_eq!(token.as_str().len(), 64);
        let wrong = Client::new(&api.url, Some(api.pin.clone()))
            .with_token(Some(Token::parse("not-the-token-0123456789", "test").unwrap()));
        let job = json!({"command": ["sh", "-c", "sleep 60"], "mem_mb": 100});
        let beat = json!({"reports": []});
        let mutating: [(&str, &Value); 2] = [("/jobs", &job), ("/jobs/0/cancel", &json!({}))];
        // Before any job exists: every change is refused, and nothing changed.
        for (path, body) in mutating {
            for client in [without, &wrong] {
                assert_eq!(status(client.post(path, body)), 401, "POST {path} without the right token");
            }
        }
        // A registration needs the join token (or the node's own credential):
        // the API token and a wrong one get 403, none 401.
        for (client, code) in [(without, 401), (&wrong, 403), (with, 403)] {
            assert_eq!(status(client.post("/agents/register", &registration("n0"))), code);
        }
        // The join token submits nothing.
        assert_eq!(status(api.joiner.post("/jobs", &job)), 401);
        assert_eq!(with.get("/jobs").unwrap(), json!([]), "a refused request changed the jobs");
        match without.post("/jobs", &job) {
            Err(ClientError::Refused { message, .. }) => assert!(message.contains("PLIANT_TOKEN"), "{message}"),
            other => panic!("{other:?}"),
        }
        // A command no program can be given (a NUL byte; 900 KB, beyond the
        // OS argument limit less the environment's room): 400 at submission.
        for command in [json!(["sh", "-c", "a\u{0}b"]), json!(["sh", "-c", "x".repeat(900 << 10)])] {
            assert_eq!(status(with.post("/jobs", &json!({"command": command, "mem_mb": 100}))), 400);
        }
        // With the token, each works (the job is submitted, then cancelled).
        assert_eq!(with.post("/jobs", &job).unwrap()["id"], 0);
        assert_eq!(with.post("/jobs/0/cancel", &json!({})).unwrap()["state"], "cancelled");
        let registered = api.joiner.post("/agents/register", &registration("n0")).unwrap();
        assert_eq!((&registered["node"], &registered["agent_timeout_ms"]), (&json!(0), &json!(10_000)));
        let credential = registered["credential"].as_str().unwrap();
        assert_eq!(credential.len(), 64, "{registered}");
        // The agent registers after the cancellation: it is told to sweep its
        // node, and the cancelled job's launch, never fetched, is not sent.
        let as_node = api.client(credential);
        let ops = as_node.post("/agents/0/heartbeat", &beat).unwrap()["ops"].clone();
        assert_eq!((ops[0]["op"].as_str(), ops.get(1)), (Some("sweep"), None), "{ops}");
        // Reads need the token on loopback too: a job's logs and names are
        // not every local user's.
        for path in ["/jobs", "/jobs/0", "/jobs/0/logs", "/cluster", "/metrics.json", "/metrics"] {
            assert_eq!(status(without.get(path)), 401, "GET {path} without the token");
        }
        assert_eq!(with.get("/jobs/0").unwrap()["state"], "cancelled");
        assert_eq!(with.get("/metrics.json").unwrap()["jobs"], json!({"cancelled": 1}));
    });
}

/// Only node N's agent, with the credential it was issued when it joined,
/// acts as node N: a heartbeat (order pick-up), a report, or an
/// acknowledgement for node 0 with the API token, the join token or node 1's
/// credential gets 403, without one 401, and changes nothing — its forged
/// `finished` report is not taken, the launch stays queued and is delivered
/// to node 0's agent afterwards, the nodes' records are as they were. Neither the API token nor node 1's credential can
/// register node 0; once node 0's agent has used its credential, neither can
/// the join token.
#[test]
fn forged_node_requests_get_403_and_change_nothing() {
    with_api_on("pliant-api-forged", "127.0.0.1:0", &["n0", "n1"], |api| {
        let with = &api.with;
        let (n0, c0) = api.join("n0");
        let (n1, c1) = api.join("n1");
        assert_eq!((n0, n1), (0, 1));
        let (node0, node1, joiner) = (api.client(&c0), api.client(&c1), &api.joiner);
        // Node 0's agent uses its credential: the join token can no longer replace it.
        assert_eq!(node0.post("/agents/0/heartbeat", &json!({"reports": []})).unwrap()["ops"][0]["op"], "sweep");
        // A whole-node task: first fit puts it on node 0.
        let job = json!({"command": ["sh", "-c", "sleep 60"], "cpu_milli": 2000, "mem_mb": 100});
        assert_eq!(with.post("/jobs", &job).unwrap()["id"], 0);
        let before = with.get("/jobs").unwrap();
        assert_eq!(before[0]["tasks"][0]["node"], 0);
        let cluster_before = with.get("/cluster").unwrap()["nodes"].clone();
        let pick_up = json!({"reports": [], "acked": null});
        let report = json!({"reports": [{"report": "exited", "task": {"job": 0, "task": 0}, "code": 0,
            "signal": null, "stderr_tail": ""}], "first_report": 1});
        let ack = json!({"reports": [], "acked": u64::MAX});
        let forgers = [(with, 403), (joiner, 403), (&node1, 403), (&api.without, 401)];
        for (client, code) in forgers {
            for body in [&pick_up, &report, &ack] {
                // The same endpoint however its path is spelt.
                for path in
                    ["/agents/0/heartbeat", "/agents/0/heartbeat/", "/agents//0/heartbeat", "/agents/0/heartbeat?x=1"]
                {
                    assert_eq!(status(client.post(path, body)), code, "{path} {body}");
                }
            }
            // Nor can it register node 0 again (and so take its orders).
            let code = if code == 401 { 401 } else { 403 };
            assert_eq!(status(client.post("/agents/register", &registration("n0"))), code);
        }
        assert_eq!(with.get("/jobs").unwrap(), before, "a forged request changed the jobs");
        assert_eq!(with.get("/cluster").unwrap()["nodes"], cluster_before, "a forged request changed the nodes");
        // The real agent gets the launch, then registers again with its own credential.
        let ops = node0.post("/agents/0/heartbeat", &json!({"reports": []})).unwrap();
        let launches: Vec<&Value> = ops["ops"].as_array().unwrap().iter().filter(|op| op["op"] == "launch").collect();
        assert_eq!(launches.len(), 1, "node 0's launch was taken: {ops}");
        assert_eq!(launches[0]["task"], json!({"job": 0, "task": 0}));
        let again = node0.post("/agents/register", &registration("n0")).unwrap();
        assert_eq!((&again["node"], again.get("credential")), (&json!(0), None), "{again}");
        // Node 1 has not used its credential yet: the join token is issued another
        // (its answer may have been lost), and the first is void.
        let (_, c1_again) = api.join("n1");
        assert_ne!(c1_again, c1);
        assert_eq!(status(node1.post("/agents/1/heartbeat", &json!({"reports": []}))), 403);
        assert_eq!(status(api.client(&c1_again).post("/agents/1/heartbeat", &json!({"reports": []}))), 200);
    });
}

/// A client whose pin is another certificate's, or which has none, or is
/// given a plain `http://` URL, sends nothing: the submission it carried
/// never reaches the manager.
#[test]
fn a_client_sends_nothing_to_a_manager_it_cannot_check() {
    with_api("pliant-api-pin", |api| {
        let elsewhere = ScratchDir::new("pliant-api-other-cert").unwrap();
        let other = Pin::parse(ServerTls::for_manager(elsewhere.path(), &|_| {}).unwrap().fingerprint()).unwrap();
        assert_ne!(other, api.pin);
        let job = json!({"command": ["true"], "mem_mb": 10});
        let plain = api.url.replace("https://", "http://");
        let clients = [
            Client::new(&api.url, Some(other)),
            Client::new(&api.url, None),
            Client::new(&plain, Some(api.pin.clone())),
        ];
        for client in clients {
            let client = client.with_token(Some(api.token.clone()));
            match client.post("/jobs", &job) {
                Err(ClientError::Unreachable { reason, .. }) => {
                    assert!(["certificate", "speaks only https"].iter().any(|w| reason.contains(w)), "{reason}")
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(api.with.get("/jobs").unwrap(), json!([]), "a submission got through");
    });
}

/// Off loopback every read but the page needs the token too; no answer
/// repeats a credential a client put in the URL; the state directory, the
/// journal and the token file are their owner's only.
#[test]
fn off_loopback_reads_need_the_token_and_nothing_echoes_it() {
    with_api_on("pliant-api-reads", "0.0.0.0:0", &["n0"], |api| {
        let (with, without) = (&api.with, &api.without);
        for path in ["/jobs", "/jobs/0", "/cluster", "/metrics.json"] {
            assert_eq!(status(without.get(path)), 401, "GET {path} without the token");
        }
        assert_eq!(with.get("/jobs").unwrap(), json!([]));
        assert_eq!(with.get("/cluster").unwrap()["nodes"][0]["name"], "n0");
        let (code, page) = raw(&api.url, Some(&api.pin), "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(code == 200 && page.contains("API token"), "the page, which holds no data, is served: {code}");
        let (code, _) = raw(&api.url, Some(&api.pin), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(code, 401, "Prometheus text needs the token off loopback");
        let bearer = format!("GET /metrics HTTP/1.1\r\nAuthorization: Bearer {}\r\n\r\n", api.token.as_str());
        assert_eq!(raw(&api.url, Some(&api.pin), &bearer).0, 200);
        // A token put in the query is not taken, and not repeated back.
        for method in ["GET", "POST"] {
            let request = format!("{method} /jobs?token={} HTTP/1.1\r\nContent-Length: 0\r\n\r\n", api.token.as_str());
            let (code, body) = raw(&api.url, Some(&api.pin), &request);
            assert_eq!(code, 401, "{body}");
            assert!(!body.contains(api.token.as_str()), "{method}: the answer repeats the token: {body}");
        }
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(api.state_dir), 0o700, "state directory");
        assert_eq!(mode(&api.state_dir.join("journal.sqlite")), 0o600, "journal");
        assert_eq!(mode(&api.state_dir.join("token")), 0o600, "token");
        assert_eq!(mode(&api.state_dir.join("join-token")), 0o600, "join token");
        // The join token reads nothing either.
        assert_eq!(status(api.joiner.get("/jobs")), 401);
    });
}

/// `request` sent over a raw socket (over TLS to the certificate `pin`
/// names, if given): the answer's status code and body.
fn raw(url: &str, pin: Option<&Pin>, request: &str) -> (u16, String) {
    let (code, _, body) = raw_answer(url, pin, request);
    (code, body)
}

/// `raw`'s answer with its header lines, lower-cased names.
fn raw_answer(url: &str, pin: Option<&Pin>, request: &str) -> (u16, Vec<(String, String)>, String) {
    let socket = TcpStream::connect(url.trim_start_matches("https://").trim_start_matches("http://")).unwrap();
    socket.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut stream: Box<dyn ReadWrite> = match pin {
        None => Box::new(socket),
        Some(pin) => {
            let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
            let tls = rustls::ClientConnection::new(Pin::client_config(Some(pin)), name).unwrap();
            Box::new(rustls::StreamOwned::new(tls, socket))
        }
    };
    stream.write_all(request.as_bytes()).unwrap();
    let mut bytes = Vec::new();
    // The server closes after its answer (a TLS peer may skip its close_notify).
    if let Err(e) = stream.read_to_end(&mut bytes) {
        assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof, "{e}");
    }
    let answer = String::from_utf8(bytes).unwrap();
    let code = answer.split_whitespace().nth(1).unwrap().parse().unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let headers = head
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_string()))
        .collect();
    (code, headers, body.to_string())
}

/// A stream to read and write.
trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

#[test]
fn metrics_are_prometheus_text_with_the_cluster_s_values() {
    with_api("pliant-api-metrics", |api| {
        let with = &api.with;
        // Two jobs of ⟨1 CPU, 100 MB⟩ both fit on n0 and start at once; job 1 is then cancelled.
        for _ in 0..2 {
            with.post("/jobs", &json!({"command": ["sh"], "cpu_milli": 1000, "mem_mb": 100})).unwrap();
        }
        with.post("/jobs/1/cancel", &json!({})).unwrap();
        let request = format!("GET /metrics HTTP/1.1\r\nAuthorization: Bearer {}\r\n\r\n", api.token.as_str());
        let (code, text) = raw(&api.url, Some(&api.pin), &request);
        assert_eq!(code, 200);
        // Strict: every line is a comment, a HELP/TYPE line or a sample the parser understands.
        for line in text.lines() {
            let info = prometheus_parse::LineInfo::parse(line);
            assert!(!matches!(info, prometheus_parse::LineInfo::Ignored), "unparsable line `{line}`");
        }
        let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).unwrap();
        let value = |metric: &str, label: Option<(&str, &str)>| -> f64 {
            let s = scrape
                .samples
                .iter()
                .find(|s| s.metric == metric && label.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
                .unwrap_or_else(|| panic!("no {metric} {label:?} in\n{text}"));
            match &s.value {
                prometheus_parse::Value::Counter(v)
                | prometheus_parse::Value::Gauge(v)
                | prometheus_parse::Value::Untyped(v) => *v,
                other => panic!("{metric}: {other:?}"),
            }
        };
        assert_eq!(value("pliant_jobs", Some(("state", "cancelled"))), 1.0);
        assert_eq!(value("pliant_jobs", Some(("state", "finished"))), 0.0);
        assert_eq!(value("pliant_node_capacity_cpu_cores", Some(("node", "n0"))), 2.0);
        assert_eq!(value("pliant_node_capacity_memory_bytes", Some(("node", "n0"))), 600.0 * 1048576.0);
        // Job 0 holds ⟨1 CPU, 100 MB⟩ (job 1's share was released by the cancel).
        assert_eq!(value("pliant_node_allocated_cpu_cores", Some(("node", "n0"))), 1.0);
        assert_eq!(value("pliant_node_allocated_memory_bytes", Some(("node", "n0"))), 100.0 * 1048576.0);
        assert_eq!(value("pliant_node_lost", Some(("node", "n0"))), 0.0);
        assert_eq!(value("pliant_task_launches_total", None), 2.0);
        // Both long-queue jobs started: the histogram counts 2 in its +Inf bucket.
        let wait = scrape.samples.iter().find(|s| s.metric == "pliant_queue_wait_seconds").expect("the histogram");
        assert_eq!(wait.labels.get("queue"), Some("long"));
        let prometheus_parse::Value::Histogram(buckets) = &wait.value else { panic!("{:?}", wait.value) };
        assert_eq!(buckets.last().map(|b| (b.less_than, b.count)), Some((f64::INFINITY, 2.0)));
        assert_eq!(value("pliant_queue_wait_seconds_count", Some(("queue", "long"))), 2.0);
    });
}

#[test]
fn the_page_is_served_and_is_self_contained() {
    with_api("pliant-api-page", |api| {
        let (code, headers, page) = raw_answer(&api.url, Some(&api.pin), "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(code, 200);
        let header = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
        assert_eq!(header("x-content-type-options").as_deref(), Some("nosniff"));
        assert_eq!(header("x-frame-options").as_deref(), Some("DENY"));
        // Only the page's own inline script and style run, by hash; nothing else loads.
        let csp = header("content-security-policy").expect("a CSP");
        assert!(csp.starts_with("default-src 'none'; script-src 'sha256-"), "{csp}");
        assert!(csp.contains("style-src 'sha256-") && csp.contains("frame-ancestors 'none'"), "{csp}");
        assert!(!csp.contains("unsafe-inline"), "{csp}");
        // A JSON answer is never sniffed as a page either.
        let (_, headers, _) = raw_answer(&api.url, Some(&api.pin), "GET /cluster HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(headers.contains(&("x-content-type-options".into(), "nosniff".into())), "{headers:?}");
        assert!(page.starts_with("<!DOCTYPE html>") && page.contains("fetch("), "{page}");
        // No external assets: nothing is loaded from another origin.
        for external in ["src=\"http", "href=\"http", "src=\"//", "href=\"//", "@import", "url("] {
            assert!(!page.contains(external), "the page loads {external}…");
        }
    });
}

#[test]
fn a_body_over_the_limit_gets_413_before_it_is_sent() {
    with_api("pliant-api-413", |api| {
        // Headers only: the 2 MB body is never sent, so an answer proves it was not read.
        let request = format!(
            "POST /jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nContent-Length: 2000000\r\n\r\n",
            api.token.as_str()
        );
        let (code, body) = raw(&api.url, Some(&api.pin), &request);
        assert_eq!(code, 413, "{body}");
        assert!(body.contains("over the 1048576-byte limit"), "{body}");
        // The size is checked first, from the headers alone: the same without the token.
        let (code, _) = raw(&api.url, Some(&api.pin), "POST /jobs HTTP/1.1\r\nContent-Length: 2000000\r\n\r\n");
        assert_eq!(code, 413);
    });
}

#[test]
fn a_peer_over_its_places_waits_and_stalled_clients_are_dropped() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = AtomicBool::new(false);
    let limits = Limits {
        body: 100,
        connections: 64,
        per_peer: 2,
        handshake: Duration::from_secs(1),
        io_timeout: Duration::from_secs(2),
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            server::serve(&listener, limits, None, &|| !stop.load(Ordering::SeqCst), &|_| Response::error(200, "ok"))
        });
        let _stop = StopOnDrop(&stop);
        // Two clients connect and send nothing: they hold this peer's two places.
        let idle: Vec<TcpStream> = (0..2).map(|_| TcpStream::connect(addr).unwrap()).collect();
        std::thread::sleep(Duration::from_millis(300));
        // A third is neither refused nor closed: it waits for a place, which
        // it gets once the stalled two are dropped at the 2 s header deadline.
        let asked = Instant::now();
        let (code, body) = raw(&format!("{addr}"), None, "GET / HTTP/1.1\r\n\r\n");
        let waited = asked.elapsed();
        assert_eq!(code, 200, "{body}");
        assert!(waited > Duration::from_millis(1200) && waited < Duration::from_secs(5), "waited {waited:?}");
        drop(idle);
        // Past twice its places, a peer's newest connections are closed at once.
        let held: Vec<TcpStream> = (0..4).map(|_| TcpStream::connect(addr).unwrap()).collect();
        std::thread::sleep(Duration::from_millis(300));
        let mut over = TcpStream::connect(addr).unwrap();
        over.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        let closed = Instant::now();
        assert_eq!(over.read(&mut [0u8; 16]).unwrap(), 0, "the fifth connection is closed");
        assert!(closed.elapsed() < Duration::from_millis(900));
        drop(held);
    });
}

/// `pliant local` takes no agents (its node runs in its process, and it has
/// no join token): a registration gets 403 whatever it carries, and so does
/// a heartbeat for its node.
#[test]
fn a_manager_without_a_join_token_takes_no_agent() {
    let dir = ScratchDir::new("pliant-api-local").unwrap();
    let cfg =
        ClusterConfig { policy: "kill".into(), params: vec![], nodes: vec![node("local")], epoch_unix_us: unix_us() };
    let (m, _) = Manager::open(dir.path(), cfg, &pliant_plugins::registry()).unwrap();
    let token = Token::for_manager(dir.path(), None, &|_| {}).unwrap();
    let tokens = api::Tokens { api: token.clone(), join: None };
    let manager = Mutex::new(m);
    let request = |url: &str, bearer: Option<&str>, body: &Value| server::Request {
        method: "POST".into(),
        url: url.into(),
        bearer: bearer.map(String::from),
        body: body.to_string().into_bytes(),
    };
    for bearer in [Some(token.as_str()), Some("a-would-be-join-token"), None] {
        let answer = api::respond(&manager, &tokens, &request("/agents/register", bearer, &registration("local")));
        assert_eq!(answer.status, 403, "{bearer:?}: {}", String::from_utf8_lossy(&answer.body));
        let beat = api::respond(&manager, &tokens, &request("/agents/0/heartbeat", bearer, &json!({"reports": []})));
        assert_eq!(beat.status, if bearer.is_some() { 403 } else { 401 });
    }
}
