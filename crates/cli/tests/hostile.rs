//! Live mode against a hostile local user, a malicious job and a full disk:
//! `pliant serve` and `pliant agent` (or `pliant local`) as an operator runs
//! them, on loopback, attacked by processes of the unprivileged user
//! `nobody` and by the jobs themselves. Each test is one attack; each needs
//! root (to run as `nobody`, and for cgroups) and runs under
//! PLIANT_LIVE_TESTS=1 only (failing there without it).

mod common;

use common::live::{free_port, live_without_lock};
use pliant_live::client::{Client, ClientError};
use pliant_live::scratch::ScratchDir;
use pliant_live::tls::Pin;
use pliant_live::token::Token;
use serde_json::{json, Value};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

const PLIANT: &str = env!("CARGO_BIN_EXE_pliant");
/// The unprivileged user the attacks run as.
const NOBODY: u32 = 65534;

/// A process of the test; SIGTERMed (then reaped) when dropped.
struct Daemon(Child);

impl Daemon {
    fn start(command: &mut Command, log: &Path) -> Daemon {
        let out = std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap();
        Daemon(command.stdout(Stdio::null()).stderr(out).spawn().unwrap())
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let _ = self.0.wait();
    }
}

/// `pliant serve` with one agent, on loopback, in a scratch directory
/// (removed once they have stopped: the fields' order).
struct Cluster {
    _daemons: Vec<Daemon>,
    dir: ScratchDir,
    state: PathBuf,
    agent_timeout: String,
    /// Its agent's node name.
    node: String,
    url: String,
    client: Client,
}

impl Drop for Cluster {
    /// Stops the daemons, then removes what their agent left in its top
    /// cgroup (the cgroups of tasks whose ends its stopped manager had not
    /// taken) and the cgroup itself.
    fn drop(&mut self) {
        self._daemons.clear();
        if let Ok(layout) = pliant_live::cgroup::Layout::detect() {
            drop(layout.open(&format!("pliant-agent-{}", self.node)));
        }
    }
}

/// `pliant serve --policy kill` on `state` and `listen`, with the agent timeout `agent_timeout` (s).
fn serve_command(state: &Path, listen: &str, agent_timeout: &str) -> Command {
    let mut serve = Command::new(PLIANT);
    serve.args(["serve", "--state-dir", state.to_str().unwrap(), "--listen", listen]);
    serve.args(["--policy", "kill", "--agent-timeout", agent_timeout]);
    serve
}

impl Cluster {
    /// A manager (`kill`, the given agent timeout in s) and one agent of ⟨2 CPU, 1 GB⟩.
    fn start(name: &str, agent_timeout: &str) -> Cluster {
        let dir = ScratchDir::new(&format!("pliant-hostile-{name}")).unwrap();
        let state = dir.path().join("state");
        Cluster::start_in(dir, state, name, agent_timeout)
    }

    /// As [`Cluster::start`], with its log and node directory in `dir` and
    /// its state directory at `state`.
    fn start_in(dir: ScratchDir, state: PathBuf, name: &str, agent_timeout: &str) -> Cluster {
        let url = format!("https://127.0.0.1:{}", free_port());
        let listen = url.trim_start_matches("https://").to_string();
        let state_arg = state.to_str().unwrap().to_string();
        let log = dir.path().join("log");
        let serve = Daemon::start(&mut serve_command(&state, &listen, agent_timeout), &log);
        let node = format!("hostile-{name}-{}", std::process::id());
        let node_dir = dir.path().join("node");
        let agent =
            Daemon::start(
                Command::new(PLIANT)
                    .args(["agent", "--manager", &url, "--state-dir", &state_arg, "--name", &node])
                    .args(["--cpu", "2", "--mem", "1G", "--node-dir", node_dir.to_str().unwrap()]),
                &log,
            );
        let started = Instant::now();
        let (pin, token) = loop {
            if let (Some(pin), Some(token)) =
                (Pin::for_client(None, &state).unwrap(), Token::for_client(None, &state).unwrap_or(None))
            {
                break (pin, token);
            }
            assert!(started.elapsed() < Duration::from_secs(30), "no certificate or token");
            sleep(Duration::from_millis(50));
        };
        let client = Client::new(&url, Some(pin)).with_token(Some(token));
        let agent_timeout = agent_timeout.to_string();
        let cluster = Cluster { _daemons: vec![serve, agent], dir, state, agent_timeout, node, url, client };
        cluster.wait("the cluster to form", Duration::from_secs(60), || cluster.client.get("/cluster").is_ok());
        cluster
    }

    /// Kills the manager (`kill -9`; its agent lives on) and starts it again
    /// on its state directory and its address.
    fn crash_and_restart_manager(&mut self) {
        let old = &mut self._daemons[0].0;
        old.kill().unwrap();
        old.wait().unwrap();
        let listen = self.url.trim_start_matches("https://").to_string();
        let again =
            Daemon::start(&mut serve_command(&self.state, &listen, &self.agent_timeout), &self.dir.path().join("log"));
        // Reaped already: its drop must not signal a pid that may be another's by now.
        std::mem::forget(std::mem::replace(&mut self._daemons[0], again));
        self.wait("the manager to answer again", Duration::from_secs(30), || self.client.get("/cluster").is_ok());
    }

    fn state(&self) -> PathBuf {
        self.state.clone()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default()
    }

    fn wait(&self, what: &str, limit: Duration, done: impl Fn() -> bool) {
        let start = Instant::now();
        while !done() {
            assert!(start.elapsed() < limit, "timed out waiting for {what}; log:\n{}", self.log());
            sleep(Duration::from_millis(100));
        }
    }

    fn submit(&self, body: Value) -> u64 {
        self.client.post("/jobs", &body).unwrap()["id"].as_u64().unwrap()
    }

    fn job(&self, id: u64) -> Value {
        self.client.get(&format!("/jobs/{id}")).unwrap()
    }

    /// `pliant ARGS` against the manager, with the state directory's token.
    fn cli(&self, args: &[&str]) -> std::process::Output {
        Command::new(PLIANT)
            .arg(args[0])
            .args(["--manager", &self.url, "--state-dir", self.state().to_str().unwrap()])
            .args(&args[1..])
            .output()
            .unwrap()
    }
}

/// `bash -c SCRIPT` as `nobody`, from `/`, in a process group of its own
/// (see [`kill_group`]).
fn as_nobody(script: &str) -> Child {
    Command::new("/bin/bash")
        .args(["-c", script])
        .current_dir("/")
        .uid(NOBODY)
        .gid(NOBODY)
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// A process started by [`as_nobody`], ended with every process it started
/// (its process group) when dropped, however the test ends.
struct Group(Child);

impl Drop for Group {
    fn drop(&mut self) {
        // SAFETY: kill has no memory effects; the group is the child's own (`as_nobody`).
        unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

/// A task that records its start and end in `record`, sleeping `secs` between.
fn recorded(record: &Path, secs: u32) -> Value {
    let script = format!("echo start >> {0}; sleep {secs}; echo end >> {0}", record.display());
    json!(["/bin/sh", "-c", script])
}

fn lines(record: &Path, kind: &str) -> usize {
    std::fs::read_to_string(record).unwrap_or_default().lines().filter(|l| *l == kind).count()
}

/// Attack 1: `nobody` holds 300 idle connections to the API, dribbles a
/// byte a second into 40 more (a TLS handshake that never ends) and opens
/// and drops connections as fast as it can, for four times the agent
/// timeout. The agent never fences, the task runs once, and the CLI gets
/// its answers throughout.
#[test]
fn a_connection_flood_from_another_user_starves_no_agent_and_no_user() {
    if !live_without_lock("connection flood") {
        return;
    }
    let cluster = Cluster::start("flood", "3");
    let record = cluster.dir.shared("tasks").unwrap().join("record");
    let job = cluster.submit(json!({ "command": recorded(&record, 16) }));
    cluster.wait("the task to start", Duration::from_secs(30), || lines(&record, "start") == 1);
    let port = cluster.url.rsplit(':').next().unwrap().to_string();
    let flood = format!(
        r#"trap '' PIPE; ulimit -n 4096
        for i in $(seq 10 309); do eval "exec $i<>/dev/tcp/127.0.0.1/{port}" 2>/dev/null; done
        for i in $(seq 310 349); do eval "exec $i<>/dev/tcp/127.0.0.1/{port}" 2>/dev/null; done
        (while :; do exec 3<>/dev/tcp/127.0.0.1/{port}; exec 3<&-; done) 2>/dev/null &
        for s in $(seq 1 12); do
          for i in $(seq 310 349); do printf '\x16' >&$i 2>/dev/null; done
          sleep 1
        done
        kill $!"#
    );
    let attacker = Group(as_nobody(&flood));
    let flooded = Instant::now();
    let mut answers = Vec::new();
    while flooded.elapsed() < Duration::from_secs(12) {
        let asked = Instant::now();
        let out = cluster.cli(&["status", "--json"]);
        answers.push((out.status.success(), asked.elapsed()));
        sleep(Duration::from_millis(500));
    }
    drop(attacker);
    cluster.wait("the job to end", Duration::from_secs(40), || {
        cluster.client.get(&format!("/jobs/{job}")).is_ok_and(|j| j["state"] == "finished" || j["state"] == "failed")
    });
    let log = cluster.log();
    assert!(!log.contains("declared lost") && !log.contains("fencing"), "an agent was starved:\n{log}");
    let task = cluster.job(job)["tasks"][0].clone();
    assert_eq!(task["launches"], 1, "{task}");
    assert_eq!((lines(&record, "start"), lines(&record, "end")), (1, 1));
    assert!(answers.len() >= 8, "{answers:?}");
    assert!(answers.iter().all(|(ok, took)| *ok && *took < Duration::from_secs(3)), "the CLI was starved: {answers:?}");
}

/// The manager's pid, from the scratch directory's `pliant serve` (the first daemon).
fn manager_pid(cluster: &Cluster) -> u32 {
    cluster._daemons[0].0.id()
}

/// The most memory (kB) process `pid` has held.
fn peak_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// `GET PATH` with the token, given up after 5 s.
fn read(cluster: &Cluster, path: &str) -> Result<Value, String> {
    cluster.client.clone().with_timeout(Duration::from_secs(5)).get(path).map_err(|e| e.to_string())
}

/// Attack 2a: a job replaces its `stdout` with a FIFO, another its own with
/// a link to `/etc/shadow`. Reading their logs answers at once, reads
/// neither, and the manager goes on answering everyone (its agent too).
/// A local user without the token reads no job's logs, on loopback too.
#[test]
fn a_task_s_fifo_or_link_in_place_of_its_log_neither_hangs_nor_leaks() {
    if !live_without_lock("a FIFO and a link as logs") {
        return;
    }
    let cluster = Cluster::start("fifo", "3");
    let fifo = cluster.submit(json!({ "cpu_milli": 500, "mem_mb": 50,
        "command": ["/bin/sh", "-c", "echo before; rm -f stdout; mkfifo stdout; touch made; sleep 12"] }));
    let link = cluster.submit(json!({ "cpu_milli": 500, "mem_mb": 50,
        "command": ["/bin/sh", "-c", "rm -f stdout; ln -s /etc/shadow stdout; touch made; sleep 12"] }));
    let made = |job: u64| cluster.state().join(format!("logs/job-{job}/task-0/made")).exists();
    cluster.wait("both tasks to put their traps in place", Duration::from_secs(30), || made(fifo) && made(link));
    for round in 0..3 {
        for job in [fifo, link] {
            let asked = Instant::now();
            let logs = read(&cluster, &format!("/jobs/{job}/logs"));
            let logs = logs.unwrap_or_else(|e| panic!("round {round}: logs of job {job}: {e}\n{}", cluster.log()));
            assert!(asked.elapsed() < Duration::from_secs(2), "{:?}", asked.elapsed());
            let stdout = logs["tasks"][0]["stdout"].as_str().unwrap().to_string();
            assert_eq!(stdout, pliant_live::task_files::NOT_A_FILE, "job {job}");
            assert!(!stdout.contains("root:"), "/etc/shadow leaked: {stdout}");
        }
        assert!(read(&cluster, "/cluster").is_ok(), "the manager stopped answering");
        sleep(Duration::from_secs(1));
    }
    let stranger = Client::new(&cluster.url, Pin::for_client(None, &cluster.state()).unwrap());
    for path in [format!("/jobs/{fifo}/logs"), "/jobs".into(), "/cluster".into(), "/metrics".into()] {
        match stranger.get(&path) {
            Err(ClientError::Refused { status: 401, .. }) => {}
            other => panic!("GET {path} without the token: {other:?}"),
        }
    }
    cluster.wait("both jobs to end", Duration::from_secs(40), || {
        [fifo, link].iter().all(|j| cluster.job(*j)["state"] == "finished")
    });
    let log = cluster.log();
    assert!(!log.contains("declared lost") && !log.contains("fencing"), "{log}");
    let shadow = std::fs::read_to_string("/etc/shadow").unwrap_or_default();
    assert!(!shadow.is_empty() && shadow.contains("root:"), "the link pointed at a real file");
}

/// Attack 2b: 20 jobs of 10,000 tasks (200,000 tasks) and four readers of
/// the whole listing, as fast as they can, for four times the agent timeout.
/// The listing comes in pages (each bounded), the manager's memory stays
/// bounded, every reader gets every job, the agent never fences and the
/// task it runs runs once.
#[test]
fn a_200_000_task_listing_read_four_at_a_time_starves_no_heartbeat() {
    if !live_without_lock("a 200,000-task listing") {
        return;
    }
    let cluster = Cluster::start("listing", "3");
    let record = cluster.dir.shared("tasks").unwrap().join("record");
    let job = cluster.submit(json!({ "cpu_milli": 1000, "mem_mb": 50, "command": recorded(&record, 20) }));
    cluster.wait("the task to start", Duration::from_secs(30), || lines(&record, "start") == 1);
    for _ in 0..20 {
        // Each task would take the whole node: they all wait.
        cluster.submit(json!({ "tasks": 10_000, "cpu_milli": 2000, "mem_mb": 50, "command": ["true"] }));
    }
    let before = peak_kb(manager_pid(&cluster));
    let started = Instant::now();
    let pages = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let reader = cluster.client.clone();
                while started.elapsed() < Duration::from_secs(12) {
                    let all = reader.get_all("/jobs").unwrap();
                    let tasks: usize =
                        all.as_array().unwrap().iter().map(|j| j["tasks"].as_array().unwrap().len()).sum();
                    pages.lock().unwrap().push((all.as_array().unwrap().len(), tasks));
                }
            });
        }
    });
    let peak = peak_kb(manager_pid(&cluster));
    let pages = pages.into_inner().unwrap();
    assert!(!pages.is_empty() && pages.iter().all(|p| *p == (21, 200_001)), "{pages:?}");
    // One page holds at most 10,000 tasks, or one job.
    let first = first_page_bytes(&cluster);
    assert!(first < 12 << 20, "a page of {first} bytes");
    let log = cluster.log();
    assert!(!log.contains("declared lost") && !log.contains("fencing"), "{log}");
    cluster.wait("the task to end", Duration::from_secs(40), || lines(&record, "end") == 1);
    assert_eq!(cluster.job(job)["tasks"][0]["launches"], 1);
    assert_eq!(lines(&record, "start"), 1);
    eprintln!("manager peak memory {before} kB before the readers, {peak} kB after; {} listings", pages.len());
    assert!(peak < before + (512 << 10), "the readers cost the manager {} MB", (peak - before) >> 10);
}

/// The size of the first page of `GET /jobs`, in bytes.
fn first_page_bytes(cluster: &Cluster) -> usize {
    let page = cluster.client.get("/jobs").unwrap();
    page.to_string().len()
}

/// `pliant ARGS`, which must refuse (exit 2) within 20 s; its stderr.
fn refused(args: &[&str]) -> String {
    let mut child = Command::new(PLIANT).args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("pliant {args:?} did not refuse: it ran");
        }
        sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    err
}

/// Runs `script` as `nobody` and waits for it to succeed.
fn nobody_does(script: &str) {
    let status = as_nobody(script).wait().unwrap();
    assert!(status.success(), "as nobody: {script}");
}

/// For a live test `what` that needs root (to act as nobody) but no
/// cgroups: whether it runs (after [`common::live::skip`] when it cannot).
fn live_as_root(what: &str) -> bool {
    if !pliant_xtest::live(what) {
        return false;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        common::live::skip(&format!("{what}: needs root (to act as nobody)"));
        return false;
    }
    true
}

/// Attack 3: `nobody` makes a state directory in a shared place (with a
/// token of its choosing), or a directory above one, or a link in a
/// token's place. The manager refuses each, naming the path and why,
/// before it listens: `nobody` never gets to submit a job as root.
#[test]
fn a_state_directory_another_user_controls_is_refused() {
    if !live_as_root("a state directory another user controls") {
        return;
    }
    let shared = std::env::temp_dir().join(format!("pliant-hostile-shared-{}", std::process::id()));
    let _gone = Removed(shared.clone());
    let theirs = shared.join("theirs");
    nobody_does(&format!(
        "mkdir -m 700 {0} && mkdir -m 700 {0}/theirs && echo a-token-nobody-chose-of-32-chars-or-more > {0}/theirs/token \
         && chmod 600 {0}/theirs/token && mkdir -m 755 {0}/above",
        shared.display()
    ));
    let listen = format!("127.0.0.1:{}", free_port());
    let serve = |state: &Path| refused(&["serve", "--listen", &listen, "--state-dir", state.to_str().unwrap()]);
    let err = serve(&theirs);
    assert!(err.contains(&format!("refusing the state directory {}", theirs.display())), "{err}");
    assert!(err.contains("belongs to uid 65534"), "{err}");
    // A directory of root's own inside one of nobody's: nobody could swap it.
    let under = shared.join("above/state");
    std::fs::create_dir(&under).unwrap();
    let err = serve(&under);
    assert!(err.contains(&format!("its parent {}", shared.display())), "{err}");
    // Root's own state directory, with a link in the token's place.
    let own = ScratchDir::new("pliant-hostile-own").unwrap();
    let state = own.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::os::unix::fs::symlink(theirs.join("token"), state.join("token")).unwrap();
    let err = serve(&state);
    assert!(err.contains(&format!("refusing the API token {}", state.join("token").display())), "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    assert!(!state.join("journal.sqlite").exists());
}

/// Removes a directory tree when dropped.
struct Removed(PathBuf);

impl Drop for Removed {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A tmpfs of `mb` MB mounted at `dir` (made for it); unmounted and
/// removed when dropped.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(dir: &Path, mb: u64) -> Result<SmallDisk, String> {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mb}m,mode=700"), "tmpfs"])
            .arg(dir)
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            let _ = std::fs::remove_dir(dir);
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        Ok(SmallDisk(dir.to_path_buf()))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// `pliant local` (`kill`, ⟨1 CPU, 200 MB⟩, then `args`) whose state
/// directory is on a 48 MB tmpfs of its own: stopped, then unmounted, then
/// removed when dropped (the fields' order).
struct OnSmallDisk {
    local: common::local::Local,
    disk: SmallDisk,
    _dir: ScratchDir,
}

/// For the live test `what`: [`OnSmallDisk`], or `None` when live tests were
/// not asked for or (after a skip) no tmpfs can be mounted.
fn local_on_small_disk(name: &str, what: &str, args: &[&str]) -> Option<OnSmallDisk> {
    if !live_without_lock(what) {
        return None;
    }
    let dir = ScratchDir::new(&format!("pliant-hostile-{name}")).unwrap();
    let disk = match SmallDisk::mount(&dir.path().join("disk"), 48) {
        Ok(d) => d,
        Err(e) => {
            common::live::skip(&format!("{what}: cannot mount a tmpfs: {e}"));
            return None;
        }
    };
    let args: Vec<String> = ["--cpu", "1", "--mem", "200M"].iter().chain(args).map(|a| a.to_string()).collect();
    let log = dir.path().join("log");
    let local = common::local::Local::start_with(&disk.0.join("state"), "kill", &args, free_port(), &log);
    Some(OnSmallDisk { local, disk, _dir: dir })
}

/// Attack 4: a job that writes without end (`yes`) on a 48 MB state
/// filesystem. Its output stops at `--max-log-mb` (8 MB here) and ends with
/// a note saying the rest was dropped; the task fails (its writes past the
/// cap fail) instead of filling the disk; the manager goes on, and after a
/// crash and restart the job is still failed, not run again.
#[test]
fn a_task_writing_without_end_is_capped_and_fails_once() {
    let Some(mut on) = local_on_small_disk("disk", "a task writing without end", &["--max-log-mb", "8"]) else {
        return;
    };
    let job = on.local.submit(json!({ "cpu_milli": 1000, "mem_mb": 100, "command": ["yes"] }));
    on.local.wait_until("the job to fail", Duration::from_secs(60), |c| {
        c.get(&format!("/jobs/{job}")).is_ok_and(|j| j["state"] == "failed")
    });
    let task = on.local.job(job)["tasks"][0].clone();
    assert_eq!(task["launches"], 1, "{task}");
    assert_eq!(task["exit_code"], 1, "{task}");
    let out = std::fs::read(on.local.stdout(job, 0)).unwrap();
    let cut = pliant_live::agent::OUTPUT_CUT.as_bytes();
    assert_eq!(out.len() as u64, (8 << 20) + cut.len() as u64);
    assert!(out.ends_with(cut));
    let free = Command::new("df").args(["--output=avail", "-m"]).arg(&on.disk.0).output().unwrap();
    let free_mb: u64 = String::from_utf8_lossy(&free.stdout).lines().nth(1).unwrap().trim().parse().unwrap();
    assert!(free_mb > 30, "the disk filled: {free_mb} MB left");
    on.local.crash_and_restart();
    sleep(Duration::from_secs(2));
    let again = on.local.job(job);
    assert_eq!(again["state"], "failed", "{again}");
    assert_eq!(again["tasks"][0]["launches"], 1, "{again}");
}

/// Attack 4b: a job that writes without end (`yes`, under the default
/// `--max-log-mb`) fills the 48 MB file system of the state directory. The
/// manager does not exit: it stops placing, says why (`pliant status`,
/// `GET /cluster`, its log) and refuses submissions with 503, still
/// answering; once the operator frees space it resumes on its own: the
/// job that filled the disk failed (its writes did), after one launch, and
/// a job submitted then runs.
#[test]
fn a_full_disk_stops_placement_but_not_the_manager_until_space_is_freed() {
    let Some(on) = local_on_small_disk("full", "a task filling the state directory's disk", &[]) else {
        return;
    };
    let (local, state) = (&on.local, &on.local.state);
    let filler = local.submit(json!({ "cpu_milli": 1000, "mem_mb": 64, "command": ["yes"] }));
    local.wait_until("the manager to stop placing", Duration::from_secs(60), |c| {
        c.get("/cluster").is_ok_and(|cluster| cluster["not_placing"].is_string())
    });
    let status = Command::new(PLIANT)
        .args(["status", "--manager", &format!("https://127.0.0.1:{}", local.port), "--state-dir"])
        .arg(state)
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success() && shown.starts_with("not placing: the file system of"), "{shown}");
    match local.client.post("/jobs", &json!({ "command": ["true"] })) {
        Err(ClientError::Refused { status: 503, message }) => assert!(message.contains("not placing"), "{message}"),
        other => panic!("a submission while the disk is full: {other:?}"),
    }
    sleep(Duration::from_secs(2));
    assert!(local.client.get("/cluster").unwrap()["not_placing"].is_string(), "{}", local.log_text());
    std::fs::remove_file(local.stdout(filler, 0)).unwrap();
    local.wait_until("the job that filled the disk to fail", Duration::from_secs(30), |c| {
        c.get(&format!("/jobs/{filler}")).is_ok_and(|j| j["state"] == "failed")
    });
    let task = local.job(filler)["tasks"][0].clone();
    assert_eq!((task["launches"].as_u64(), task["exit_code"].as_i64()), (Some(1), Some(1)), "{task}");
    let after = local.submit(json!({ "cpu_milli": 1000, "mem_mb": 64, "command": ["echo", "placed"] }));
    local.wait_until("a job after space was freed to finish", Duration::from_secs(30), |c| {
        c.get(&format!("/jobs/{after}")).is_ok_and(|j| j["state"] == "finished")
    });
    assert_eq!(std::fs::read_to_string(local.stdout(after, 0)).unwrap(), "placed\n");
    let log = local.log_text();
    assert!(log.contains("not placing: the file system of") && log.contains("room for the journal again"), "{log}");
    assert!(local.client.get("/cluster").unwrap()["not_placing"].is_null());
}

/// Attack 5: a job that tries to break out of its confinement, on a node
/// whose tasks run as `nobody` (`--task-user`) with at most 32 processes.
/// It cannot raise its own memory limit, move itself to the root cgroup,
/// gain privileges through a setuid program, or see the daemon's
/// environment (the test's `CARGO_*` variables stand for its secrets), and
/// its fork bomb stops at the bound; the job itself still runs and ends.
#[test]
fn a_job_cannot_raise_its_limits_leave_its_cgroup_or_read_the_daemon_s_environment() {
    if !live_without_lock("a job breaking out of its confinement") {
        return;
    }
    let dir = ScratchDir::new("pliant-hostile-confined").unwrap();
    let args = ["--cpu", "1", "--mem", "200M", "--task-user", "nobody", "--max-task-pids", "32"].map(String::from);
    let local = kill_local_in(&dir, &args);
    let script = r#"
        id -u; grep NoNewPrivs /proc/self/status; env > env.txt
        for line in $(cat /proc/self/cgroup); do
            path=${line#*:*:}; controllers=${line#*:}; controllers=${controllers%%:*}
            for root in /sys/fs/cgroup/$controllers /sys/fs/cgroup/unified; do
                for f in memory.limit_in_bytes memory.max pids.max; do
                    [ -e "$root$path/$f" ] && echo max > "$root$path/$f" && echo "raised $f"
                    [ -e "$root$path/$f" ] && echo 9223372036854771712 > "$root$path/$f" && echo "raised $f"
                done
                [ -e "$root/cgroup.procs" ] && echo $$ > "$root/cgroup.procs" && echo "left for $root"
            done
        done
        # The bomb in a shell of its own: a shell whose fork fails gives up.
        bash -c 'i=0; while [ $i -lt 100 ]; do sleep 2 & i=$((i+1)); done; wait'; echo done"#;
    let job = local.submit(json!({ "cpu_milli": 1000, "mem_mb": 64, "command": ["/bin/bash", "-c", script] }));
    local.wait_until("the job to end", Duration::from_secs(60), |c| {
        c.get(&format!("/jobs/{job}")).is_ok_and(|j| j["state"] == "finished" || j["state"] == "failed")
    });
    let out = std::fs::read_to_string(local.stdout(job, 0)).unwrap();
    let err = std::fs::read_to_string(local.stdout(job, 0).with_file_name("stderr")).unwrap();
    assert!(out.starts_with(&format!("{NOBODY}\nNoNewPrivs:\t1\n")), "{out}");
    assert!(!out.contains("raised") && !out.contains("left for"), "{out}");
    assert!(out.ends_with("done\n"), "{out}\n{err}");
    assert!(err.contains("fork") || err.contains("Resource temporarily unavailable"), "no fork failed:\n{err}");
    let env = std::fs::read_to_string(local.stdout(job, 0).with_file_name("env.txt")).unwrap();
    assert!(std::env::var("CARGO_PKG_NAME").is_ok(), "cargo gives tests their package's name");
    assert!(!env.contains("CARGO_"), "the daemon's environment reached the job:\n{env}");
    assert_eq!(local.job(job)["state"], "finished", "{}", local.job(job));
    drop(local);
}

/// `pliant local --policy kill` with `args`, its state and log in `dir`.
fn kill_local_in(dir: &ScratchDir, args: &[String]) -> common::local::Local {
    common::local::Local::start_with(&dir.path().join("state"), "kill", args, free_port(), &dir.path().join("log"))
}

/// The capability lines of a task's `/proc/self/status` after its user id,
/// run by `pliant local` with `args`.
fn identity_of_a_task(name: &str, args: &[&str]) -> String {
    let dir = ScratchDir::new(&format!("pliant-hostile-{name}")).unwrap();
    let args: Vec<String> = ["--cpu", "1", "--mem", "200M"].iter().chain(args).map(|a| a.to_string()).collect();
    let local = kill_local_in(&dir, &args);
    let script = "id -u; grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status";
    let job = local.submit(json!({ "cpu_milli": 1000, "mem_mb": 64, "command": ["/bin/sh", "-c", script] }));
    local.wait_until("the job to end", Duration::from_secs(30), |c| {
        c.get(&format!("/jobs/{job}")).is_ok_and(|j| j["state"] == "finished" || j["state"] == "failed")
    });
    assert_eq!(local.job(job)["state"], "finished", "{}", local.log_text());
    std::fs::read_to_string(local.stdout(job, 0)).unwrap()
}

/// Attack 5c: a daemon run as root runs each job as a uid of its own (the
/// first of the default range for the first job) unless the operator names
/// one user for all; a task the operator lets run as root
/// (`--task-user root`, said out loud) holds no capability, nor can
/// anything it executes gain one (empty bounding set).
#[test]
fn tasks_run_as_a_uid_of_their_job_by_default_and_as_root_only_without_capabilities() {
    if !live_without_lock("the user and capabilities of a task") {
        return;
    }
    let no_capability = "CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n\
                         CapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\n";
    let by_default = identity_of_a_task("default-user", &[]);
    let first = pliant_live::uid_range::DEFAULT_TASK_UIDS.first;
    assert_eq!(by_default, format!("{first}\n{no_capability}"));
    let as_nobody = identity_of_a_task("nobody-user", &["--task-user", "nobody"]);
    assert_eq!(as_nobody, format!("{NOBODY}\n{no_capability}"));
    let as_root = identity_of_a_task("root-user", &["--task-user", "root"]);
    assert_eq!(as_root, format!("0\n{no_capability}"));
}

/// Attack 5b: a node's credential is stolen (read from its node directory)
/// and the operator revokes it (`pliant node revoke NAME`). From then on the
/// thief's heartbeat as the node is refused; the real agent, which has the
/// join token, joins again and is issued a new credential, so its task runs
/// on, once, and the node is never lost. An unknown node is named as such.
#[test]
fn a_revoked_node_credential_acts_as_the_node_no_more_and_its_agent_rejoins() {
    if !live_without_lock("node credential revocation") {
        return;
    }
    let cluster = Cluster::start("revoke", "3");
    let node = format!("hostile-revoke-{}", std::process::id());
    let record = cluster.dir.shared("tasks").unwrap().join("record");
    let job = cluster.submit(json!({ "command": recorded(&record, 8) }));
    cluster.wait("the task to start", Duration::from_secs(30), || lines(&record, "start") == 1);
    let file = cluster.dir.path().join("node/credential");
    let stolen = std::fs::read_to_string(&file).unwrap();
    let pin = Pin::for_client(None, &cluster.state()).unwrap();
    let thief = Client::new(&cluster.url, pin).with_token(Some(Token::parse(stolen.trim(), "stolen").unwrap()));
    let revoke = |name: &str| {
        Command::new(PLIANT)
            .args(["node", "revoke", name, "--manager", &cluster.url, "--state-dir"])
            .arg(cluster.state())
            .output()
            .unwrap()
    };
    let out = revoke(&node);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("credential revoked"));
    let beat = |client: &Client| match client.post("/agents/0/heartbeat", &json!({ "reports": [] })) {
        Ok(_) => 200,
        Err(ClientError::Refused { status, .. }) => status,
        Err(e) => panic!("{e}"),
    };
    let refused = beat(&thief);
    assert!(refused == 403 || refused == 409, "the stolen credential's heartbeat got {refused}");
    cluster.wait("the agent to join again", Duration::from_secs(20), || {
        std::fs::read_to_string(&file).is_ok_and(|now| now != stolen)
    });
    assert_eq!(beat(&thief), 403, "the stolen credential after the agent joined again");
    cluster.wait("the job to finish", Duration::from_secs(40), || cluster.job(job)["state"] == "finished");
    let log = cluster.log();
    assert_eq!(cluster.job(job)["tasks"][0]["launches"], 1, "{log}");
    assert_eq!(lines(&record, "start"), 1);
    assert!(!log.contains("declared lost") && !log.contains("fencing"), "{log}");
    let unknown = revoke("no-such-node");
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no node `no-such-node`"));
}

/// Attack 4c: a job ends while a runaway job's output has filled the
/// state directory's disk (the manager is not placing), and the manager is
/// then killed (`kill -9`, which takes `pliant local`'s agent with it) and
/// started again before space is freed. The end it could not journal was
/// never acknowledged: the agent kept the task's cgroup and exit code, so
/// the restarted manager learns it again, and once space is freed the job
/// is finished after its one run; the job that filled the disk failed
/// after its one run, not requeued to fill it again. Needs root and cgroups.
#[test]
fn a_job_that_ended_on_a_full_disk_is_not_run_again_after_a_crash() {
    ended_on_a_full_disk_runs_once("crash-full", common::local::Local::crash_and_restart);
}

/// Attack 4d: as 4c, with the manager stopped cleanly (SIGTERM, as an
/// operator restarting it would) instead of killed: its agent stops the
/// tasks that run but leaves those whose end is not journaled to the next
/// start. Needs root and cgroups.
#[test]
fn a_job_that_ended_on_a_full_disk_is_not_run_again_after_a_restart() {
    ended_on_a_full_disk_runs_once("stop-full", common::local::Local::stop_and_restart);
}

/// A job that ends while a `yes` job has filled the state directory's
/// disk, then `restart` of `pliant local` before space is freed: each job
/// ends after one run (see [`ran_once`]).
fn ended_on_a_full_disk_runs_once(name: &str, restart: fn(&mut common::local::Local)) {
    let Some(mut on) = local_on_small_disk(name, "a restart while the disk is full", &[]) else {
        return;
    };
    let record = on._dir.shared("tasks").unwrap().join("record");
    let ended = on.local.submit(json!({ "cpu_milli": 500, "mem_mb": 32, "command": recorded(&record, 3) }));
    on.local.wait_until("the job to start", Duration::from_secs(30), |_| lines(&record, "start") == 1);
    // Its output's pages count against its memory: 100 MB hold the 48 MB disk.
    let filler = on.local.submit(json!({ "cpu_milli": 500, "mem_mb": 100, "command": ["yes"] }));
    on.local.wait_until("the manager to stop placing", Duration::from_secs(60), |c| {
        c.get("/cluster").is_ok_and(|cluster| cluster["not_placing"].is_string())
    });
    on.local.wait_until("the job to end", Duration::from_secs(30), |_| lines(&record, "end") == 1);
    // Its end is seen by the agent (every 50 ms) and waits for the journal.
    sleep(Duration::from_secs(2));
    assert_eq!(on.local.job(ended)["state"], "running", "taken while the journal had no room");
    restart(&mut on.local);
    std::fs::remove_file(on.local.stdout(filler, 0)).unwrap();
    on.local.wait_until("both jobs to end", Duration::from_secs(60), |c| {
        let state = |id: u64| c.get(&format!("/jobs/{id}")).map(|j| j["state"].clone()).unwrap_or_default();
        state(ended) == "finished" && state(filler) == "failed"
    });
    ran_once(&on.local.job(ended), &on.local.job(filler), &record);
}

/// Asserts that job `ended` finished and job `filler` failed (exit 1), each
/// after one launch, and that `record` holds one run of `ended`'s task.
fn ran_once(ended: &Value, filler: &Value, record: &Path) {
    let (e, f) = (&ended["tasks"][0], &filler["tasks"][0]);
    assert_eq!((e["launches"].as_u64(), e["exit_code"].as_i64()), (Some(1), Some(0)), "{ended}");
    assert_eq!((lines(record, "start"), lines(record, "end")), (1, 1), "the finished job ran again");
    assert_eq!((f["launches"].as_u64(), f["exit_code"].as_i64()), (Some(1), Some(1)), "{filler}");
}

/// The mode and the entries (with their contents) of directory `dir`.
fn snapshot(dir: &Path) -> (u32, Vec<(String, String)>) {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir).unwrap().permissions().mode() & 0o7777;
    let mut entries: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), std::fs::read_to_string(e.path()).unwrap_or_default())
        })
        .collect();
    entries.sort();
    (mode, entries)
}

/// Attack 3b: `nobody` plants a link in `/tmp` to a directory of root's
/// and waits for an operator to give it (or a directory below it) as a
/// state or node directory. Every daemon refuses the path, naming the
/// link, before it writes anything: the directory's mode and contents stay
/// as they were. An API token file of nobody's is refused before the state
/// directory, its certificate or its tokens are made. Needs root (to act as
/// nobody), no cgroups.
#[test]
fn a_state_directory_through_another_user_s_link_is_refused_before_anything_is_written() {
    if !live_as_root("a state directory through another user's link") {
        return;
    }
    let roots = ScratchDir::new("pliant-hostile-linked").unwrap();
    let target = roots.path().join("root-owned");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("keep"), "root's\n").unwrap();
    std::fs::set_permissions(&target, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let before = snapshot(&target);
    let link = std::env::temp_dir().join(format!("pliant-hostile-link-{}", std::process::id()));
    let _gone = Removed(link.clone());
    nobody_does(&format!("ln -s {} {}", target.display(), link.display()));
    let listen = format!("127.0.0.1:{}", free_port());
    let named = format!("{} on its path is a symbolic link that belongs to uid 65534", link.display());
    for state in [link.clone(), link.join("below")] {
        let state_arg = state.to_str().unwrap();
        for args in [
            vec!["serve", "--listen", &listen, "--state-dir", state_arg],
            vec!["local", "--listen", &listen, "--state-dir", state_arg],
            vec!["slurm", "--listen", &listen, "--state-dir", state_arg],
            vec!["agent", "--manager", "https://127.0.0.1:9", "--name", "n", "--node-dir", state_arg],
        ] {
            let err = refused(&args);
            assert!(err.contains(&format!("{}: {named}", state.display())), "{args:?}: {err}");
            assert_eq!(snapshot(&target), before, "{args:?} wrote to the link's target");
        }
    }
    let token = roots.path().join("nobody-token");
    std::fs::write(&token, "a-token-nobody-chose-of-32-chars-or-more\n").unwrap();
    std::os::unix::fs::chown(&token, Some(NOBODY), Some(NOBODY)).unwrap();
    let fresh = roots.path().join("fresh-state");
    let err = refused(&[
        "serve",
        "--listen",
        &listen,
        "--state-dir",
        fresh.to_str().unwrap(),
        "--token-file",
        token.to_str().unwrap(),
    ]);
    assert!(err.contains(&format!("refusing the API token {}", token.display())), "{err}");
    assert!(!fresh.exists(), "a state directory was made before the token was refused");
}

/// Attack 2c: a job's stderr holds terminal escape sequences (a window
/// title, a screen clear) and the job fails: `pliant status ID` shows its
/// stderr tail with every control character written out, none raw.
/// Needs root and cgroups.
#[test]
fn a_failed_task_s_stderr_reaches_the_terminal_escaped() {
    if !live_without_lock("escape sequences in a task's stderr") {
        return;
    }
    let cluster = Cluster::start("escape", "3");
    let script = r"printf '\033]0;pwned\007\033[2Jcleared\n' >&2; exit 3";
    let job = cluster.submit(json!({ "cpu_milli": 500, "mem_mb": 32, "command": ["/bin/sh", "-c", script] }));
    cluster.wait("the job to fail", Duration::from_secs(30), || cluster.job(job)["state"] == "failed");
    let out = cluster.cli(&["status", &job.to_string()]);
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{shown}");
    assert!(!shown.chars().any(|c| c.is_control() && c != '\n'), "raw control characters: {shown:?}");
    assert!(shown.contains(r"stderr: \u{1b}]0;pwned\u{7}\u{1b}[2Jcleared"), "{shown}");
}

/// `POST PATH BODY` by `client`: the refusal's status and message, the
/// node name or id asked for written `NODE`.
fn refusal_of(client: &Client, path: &str, body: &Value, asked: &str) -> (u16, String) {
    match client.post(path, body) {
        Err(ClientError::Refused { status, message }) => (status, message.replace(asked, "NODE")),
        other => panic!("POST {path}: {other:?}"),
    }
}

/// Attack 3c: a local user with a made-up credential registers, and
/// heartbeats, as a node of the cluster and as a node that does not exist:
/// the answers are the same (status and message, but for the name or id
/// asked), so node names cannot be told from made-up ones. Needs root and
/// cgroups (a running agent).
#[test]
fn registrations_and_heartbeats_are_refused_alike_for_known_and_unknown_nodes() {
    if !live_without_lock("refusals that do not tell node names") {
        return;
    }
    let cluster = Cluster::start("enumerate", "3");
    let pin = Pin::for_client(None, &cluster.state()).unwrap();
    let made_up = Token::parse("a-credential-made-up-by-a-local-user", "test").unwrap();
    let stranger = Client::new(&cluster.url, pin).with_token(Some(made_up));
    let registration = |name: &str| {
        let record = pliant_live::wire::NodeRecord {
            name: name.to_string(),
            capacity: pliant_core::Resources::new(2000, 1024),
            mechanisms: vec![pliant_core::MechanismKind::Kill],
            notes: Vec::new(),
        };
        refusal_of(&stranger, "/agents/register", &serde_json::to_value(record).unwrap(), name)
    };
    let known = registration(&cluster.node);
    assert_eq!(known.0, 403, "{known:?}");
    assert_eq!(registration("no-such-node"), known);
    let beat = |id: u32| {
        let path = format!("/agents/{id}/heartbeat");
        refusal_of(&stranger, &path, &json!({ "reports": [] }), &format!("node {id}"))
    };
    let known = beat(0);
    assert_eq!(known.0, 403, "{known:?}");
    assert_eq!(beat(99), known);
    assert_eq!(cluster.client.get("/cluster").unwrap()["nodes"][0]["lost"], false, "{}", cluster.log());
}

/// Attack 4f: the journal is truncated to 0 bytes after a `kill -9` of the
/// manager, its write-ahead log still beside it. The manager refuses to
/// start, with or without `--policy`, saying the journal is lost, as for a
/// journal deleted: it never starts a new, empty cluster over the old one.
/// Needs root and cgroups (a running agent).
#[test]
fn a_journal_truncated_beside_its_write_ahead_log_is_refused_as_lost() {
    if !live_without_lock("a truncated journal") {
        return;
    }
    let cluster = Cluster::start("truncated", "3");
    let job = cluster.submit(json!({ "cpu_milli": 500, "mem_mb": 32, "command": ["true"] }));
    cluster.wait("the job to finish", Duration::from_secs(30), || cluster.job(job)["state"] == "finished");
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(manager_pid(&cluster) as i32, libc::SIGKILL) };
    let state = cluster.state();
    cluster.wait("the manager to die", Duration::from_secs(10), || cluster.client.get("/cluster").is_err());
    let wal = std::fs::metadata(state.join("journal.sqlite-wal")).map(|m| m.len()).unwrap_or(0);
    assert!(wal > 0, "no write-ahead log beside the journal");
    std::fs::File::create(state.join("journal.sqlite")).unwrap();
    let listen = format!("127.0.0.1:{}", free_port());
    let state_arg = state.to_str().unwrap();
    for policy in [&["--policy", "kill"][..], &[]] {
        let mut args = vec!["serve", "--listen", &listen, "--state-dir", state_arg];
        args.extend_from_slice(policy);
        let err = refused(&args);
        assert!(err.contains(&format!("{}: the journal is lost", state.join("journal.sqlite").display())), "{err}");
    }
    assert_eq!(std::fs::metadata(state.join("journal.sqlite")).unwrap().len(), 0, "the lost journal was written to");
}

/// Attack 4e: as 4c, with `pliant serve` and `pliant agent` apart (the
/// issue's setup): the manager, whose disk a runaway job filled, did not
/// take (nor acknowledge) the report of a job that ended meanwhile, so its
/// agent kept it, kept sending it, and sends it to the manager restarted
/// after a `kill -9`; once space is freed the job is finished after its one
/// run, and the job that filled the disk failed after its one run. Needs
/// root and cgroups.
#[test]
fn a_job_that_ended_while_the_manager_s_disk_was_full_is_not_run_again_after_its_crash() {
    if !live_without_lock("a crash of the manager while its disk is full") {
        return;
    }
    let outer = ScratchDir::new("pliant-hostile-serve-full-disk").unwrap();
    let disk = match SmallDisk::mount(&outer.path().join("disk"), 48) {
        Ok(d) => d,
        Err(e) => {
            common::live::skip(&format!("a crash of the manager while its disk is full: cannot mount a tmpfs: {e}"));
            return;
        }
    };
    let run = ScratchDir::new("pliant-hostile-serve-full").unwrap();
    let mut cluster = Cluster::start_in(run, disk.0.join("state"), "serve-full", "3");
    let record = cluster.dir.shared("tasks").unwrap().join("record");
    let ended = cluster.submit(json!({ "cpu_milli": 500, "mem_mb": 32, "command": recorded(&record, 3) }));
    cluster.wait("the job to start", Duration::from_secs(30), || lines(&record, "start") == 1);
    // Its output's pages count against its memory: 100 MB hold the 48 MB disk.
    let filler = cluster.submit(json!({ "cpu_milli": 500, "mem_mb": 100, "command": ["yes"] }));
    cluster.wait("the manager to stop placing", Duration::from_secs(60), || {
        cluster.client.get("/cluster").is_ok_and(|c| c["not_placing"].is_string())
    });
    cluster.wait("the job to end", Duration::from_secs(30), || lines(&record, "end") == 1);
    // Its end is seen by the agent and sent with every heartbeat (200 ms).
    sleep(Duration::from_secs(2));
    assert_eq!(cluster.job(ended)["state"], "running", "taken while the journal had no room");
    cluster.crash_and_restart_manager();
    std::fs::remove_file(cluster.state().join(format!("logs/job-{filler}/task-0/stdout"))).unwrap();
    cluster.wait("both jobs to end", Duration::from_secs(60), || {
        cluster.job(ended)["state"] == "finished" && cluster.job(filler)["state"] == "failed"
    });
    ran_once(&cluster.job(ended), &cluster.job(filler), &record);
    let log = cluster.log();
    assert!(!log.contains("declared lost") && !log.contains("fencing"), "{log}");
}

/// A directory of root's (mode 0755) that the attacks below try to have
/// the agent hand to a task's user through a symbolic link.
fn root_owned_target(dir: &ScratchDir) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let target = dir.path().join("root-owned");
    std::fs::create_dir(&target).unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).unwrap();
    target
}

/// For the live test `what`: a scratch directory for the attack `name`, a
/// directory of root's in it ([`root_owned_target`]) and a directory anyone
/// may write to; `None` when live tests were not asked for or (after a
/// skip) cannot run here.
fn attack_scene(name: &str, what: &str) -> Option<(ScratchDir, PathBuf, PathBuf)> {
    if !live_without_lock(what) {
        return None;
    }
    let dir = ScratchDir::new(&format!("pliant-hostile-{name}")).unwrap();
    let target = root_owned_target(&dir);
    let shared = dir.shared("tasks").unwrap();
    Some((dir, target, shared))
}

/// Has the free-level job `free` checkpointed by a production job that
/// needs its room (`sleep 2`), then waits for both to end (the free task
/// restored once the room is back).
fn checkpoint_and_restore(local: &common::local::Local, free: u64) {
    let prod = json!({ "name": "prod", "priority": 10, "cpu_milli": 1000, "mem_mb": 400, "command": ["sleep", "2"] });
    local.submit(prod);
    local.wait_until("the free task to be checkpointed", Duration::from_secs(30), |c| {
        c.get(&format!("/jobs/{free}/tasks/0")).unwrap()["checkpoints"] == 1
    });
    local.wait_for_every_job(Duration::from_secs(60));
}

/// The owner (uid, gid) and permission bits of `path` itself (not followed).
fn owner_and_mode(path: &Path) -> (u32, u32, u32) {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).unwrap();
    (meta.uid(), meta.gid(), meta.mode() & 0o7777)
}

/// Waits up to `limit` for `path` to hold a line; returns its first line.
fn first_line(path: &Path, limit: Duration) -> String {
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if let Some(line) = text.lines().next().filter(|_| text.ends_with('\n')) {
            return line.to_string();
        }
        assert!(start.elapsed() < limit, "nothing in {} after {limit:?}", path.display());
        sleep(Duration::from_millis(50));
    }
}

/// `pliant local --policy POLICY` on ⟨2 CPU, 600 MB⟩, the monitor every
/// second, then `args`, its state and log in `dir`.
fn local_in(dir: &ScratchDir, policy: &str, args: &[&str]) -> common::local::Local {
    let args: Vec<String> = ["--cpu", "2", "--mem", "600M", "--set", "monitor_interval_s=1"]
        .iter()
        .chain(args)
        .map(|a| a.to_string())
        .collect();
    common::local::Local::start_with(&dir.path().join("state"), policy, &args, free_port(), &dir.path().join("log"))
}

/// A task that writes its pid to `pid_file`, then counts to 40 (0.1 s a
/// step) from the count saved in its checkpoint directory; on SIGUSR1 it
/// runs `on_checkpoint` and exits 0.
fn checkpointing_task(pid_file: &Path, on_checkpoint: &str) -> Value {
    let script = format!(
        r#"d="$PLIANT_CHECKPOINT_DIR"; n=0; [ -f "$d/count" ] && n=$(cat "$d/count")
echo $$ > {pid}
trap '{on_checkpoint}; exit 0' USR1
while [ $n -lt 40 ]; do n=$((n + 1)); echo $n; sleep 0.1; done"#,
        pid = pid_file.display()
    );
    json!(["/bin/sh", "-c", script])
}

/// Issue 47 (1a): under `checkpoint-nvm` a task's own SIGUSR1 handler
/// replaces its `checkpoint` directory with a link to a directory of
/// root's before it exits 0. The agent makes the directory again for the
/// restore through a directory descriptor without following the link, so
/// the root-owned target keeps its owner and mode; the task is restored
/// (from an empty checkpoint directory) and finishes. Needs root and
/// cgroups: runs under PLIANT_LIVE_TESTS=1 only, and fails there without them.
#[test]
fn a_task_s_own_link_in_place_of_its_checkpoint_directory_is_not_followed() {
    let Some((dir, target, shared)) = attack_scene("ckpt-link", "a task's link in place of its checkpoint directory")
    else {
        return;
    };
    let pid = shared.join("pid");
    let local = local_in(&dir, "checkpoint-nvm", &[]);
    let swap = format!("rm -rf \"$d\"; ln -s {} \"$d\"", target.display());
    let free = local.submit(json!({ "name": "free", "priority": 0, "cpu_milli": 2000, "mem_mb": 400,
        "command": checkpointing_task(&pid, &swap) }));
    first_line(&pid, Duration::from_secs(30));
    checkpoint_and_restore(&local, free);
    assert_eq!(owner_and_mode(&target), (0, 0, 0o755), "the agent handed root's directory to the task's user");
    let task = local.job(free)["tasks"][0].clone();
    assert_eq!((task["launches"].as_u64(), task["exit_code"].as_i64()), (Some(2), Some(0)), "{task}");
    let checkpoint = local.stdout(free, 0).with_file_name("checkpoint");
    assert!(std::fs::symlink_metadata(&checkpoint).unwrap().is_dir(), "the restore made a fresh directory");
}

/// Issue 47 (1b, 2): a local `nobody` that never submitted anything tries
/// to plant a link to a directory of root's in another user's running job
/// through `/proc/PID/cwd`, holding the directory to plant it once the
/// task has saved its state and before it is restored. The job's tasks run
/// as a user of their own: the directory is out of `nobody`'s reach, and the
/// target keeps its owner. Needs root and cgroups (PLIANT_LIVE_TESTS=1).
#[test]
fn an_outside_user_cannot_plant_a_link_in_another_job_s_directory() {
    let Some((dir, target, shared)) = attack_scene("proc-cwd", "an outside user's link in a job's directory") else {
        return;
    };
    let (pid, outside) = (shared.join("pid"), shared.join("outside"));
    let local = local_in(&dir, "checkpoint-nvm", &[]);
    let free = local.submit(json!({ "name": "free", "priority": 0, "cpu_milli": 2000, "mem_mb": 400,
        "command": checkpointing_task(&pid, "echo $n > \"$d/count\"") }));
    let task_pid = first_line(&pid, Duration::from_secs(30));
    let plant = format!(
        r#"cd /proc/{task_pid}/cwd 2>/dev/null && ls . >/dev/null 2>&1 || {{ echo refused > {out}; exit 0; }}
echo entered > {out}
while [ ! -e checkpoint/count ]; do sleep 0.02; done
sleep 0.2; rm -rf checkpoint; ln -s {target} checkpoint && echo planted >> {out}"#,
        out = outside.display(),
        target = target.display()
    );
    let _attacker = Group(as_nobody(&plant));
    let entered = first_line(&outside, Duration::from_secs(10));
    checkpoint_and_restore(&local, free);
    assert_eq!(owner_and_mode(&target), (0, 0, 0o755), "the agent handed root's directory to nobody");
    assert_eq!(entered, "refused", "nobody reached another user's job directory");
    assert_eq!(local.job(free)["state"], "finished", "{}", local.log_text());
}

/// Issue 47 (1c): under `kill`, on a node whose tasks all run as `nobody`
/// (`--task-user nobody`, a fixed user), a `nobody` process holding a long
/// job's directory (entered through `/proc/PID/cwd`) races each relaunch,
/// for 20 s, replacing `checkpoint` with a link to a directory of root's as
/// fast as it can (a few system calls a try), while short jobs kill the
/// long one again and again. The agent's remove, make and give act under a
/// directory descriptor and never follow the link: the target keeps its
/// owner. Needs root and cgroups (PLIANT_LIVE_TESTS=1).
#[test]
fn a_race_against_a_relaunch_never_gets_root_s_directory_handed_over() {
    let Some((dir, target, shared)) = attack_scene("race", "a race against the relaunch of a killed task") else {
        return;
    };
    let (pid, racer) = (shared.join("pid"), shared.join("racer"));
    let local = local_in(&dir, "kill", &["--task-user", "nobody"]);
    let script = format!("echo $$ > {}; exec sleep 300", pid.display());
    let long = local.submit(json!({ "name": "long", "queue": "long", "cpu_milli": 2000, "mem_mb": 100,
        "command": ["/bin/sh", "-c", script] }));
    let task_pid = first_line(&pid, Duration::from_secs(30));
    // In Perl (in every Debian system): each try is a few system calls, no process started.
    let race = format!(
        r#"exec perl -e 'chdir "/proc/{task_pid}/cwd" or exit 1; open(my $f, ">", "{out}") or exit 1;
print $f "entered\n"; close $f; my $end = time + 20;
while (time < $end) {{ rmdir "checkpoint"; symlink "{target}", "checkpoint" }}'"#,
        out = racer.display(),
        target = target.display()
    );
    let _attacker = Group(as_nobody(&race));
    assert_eq!(first_line(&racer, Duration::from_secs(10)), "entered");
    let started = Instant::now();
    let mut kills = 0;
    while started.elapsed() < Duration::from_secs(20) && owner_and_mode(&target).0 == 0 {
        let launches = local.job(long)["tasks"][0]["launches"].as_u64().unwrap();
        let short = local.submit(json!({ "name": "short", "queue": "short", "cpu_milli": 1000, "mem_mb": 100,
            "command": ["sleep", "0.5"] }));
        local.wait_until("the short job to end", Duration::from_secs(30), |c| {
            c.get(&format!("/jobs/{short}")).unwrap()["state"] == "finished"
        });
        local.wait_until("the long job to run again or fail", Duration::from_secs(30), |c| {
            let job = c.get(&format!("/jobs/{long}")).unwrap();
            job["state"] == "failed" || job["tasks"][0]["launches"].as_u64().unwrap() > launches
        });
        kills += 1;
        if local.job(long)["state"] == "failed" {
            break;
        }
    }
    assert_eq!(
        owner_and_mode(&target),
        (0, 0, 0o755),
        "the agent handed root's directory to nobody after {kills} kill(s)"
    );
    assert!(kills >= 1, "{}", local.log_text());
    eprintln!("relaunch race: {kills} kill(s) and relaunch(es) raced in {:.1} s", started.elapsed().as_secs_f64());
}

/// What `attack.sh` prints for each way one process reached another
/// (its environment, its directory, a signal, a file planted there); it
/// ends with `checked`.
const REACH: &str = r#"p=$1
cat /proc/$p/environ >/dev/null 2>&1 && echo read-environ
ls /proc/$p/cwd/ >/dev/null 2>&1 && echo listed-directory
cat /proc/$p/cwd/stdout >/dev/null 2>&1 && echo read-stdout
touch /proc/$p/cwd/planted 2>/dev/null && echo wrote
kill -STOP $p 2>/dev/null && echo stopped && kill -CONT $p
echo checked"#;

/// Issue 47 (2): two jobs on one node each try to read the other's
/// environment and files, signal it and write in its directory, and so does
/// a local `nobody`; with a user of its own per job (the default) every try
/// fails. Each job keeps its uid, from the node's range and its own, across
/// a manager crash and restart. Needs root and cgroups (PLIANT_LIVE_TESTS=1).
#[test]
fn jobs_cannot_reach_each_other_nor_can_an_outside_user_reach_them() {
    if !live_without_lock("jobs reaching each other") {
        return;
    }
    let dir = ScratchDir::new("pliant-hostile-reach").unwrap();
    let shared = dir.shared("tasks").unwrap();
    let attack = shared.join("attack.sh");
    std::fs::write(&attack, REACH).unwrap();
    let mut local = local_in(&dir, "kill", &[]);
    let job = |me: &str, other: &str| {
        let script = format!(
            "cd .; echo $$ > {s}/{me}.pid; while [ ! -s {s}/{other}.pid ]; do sleep 0.05; done; sleep 0.5; \
             /bin/sh {a} $(cat {s}/{other}.pid) > {s}/{me}.out; sleep 20",
            s = shared.display(),
            a = attack.display()
        );
        local.submit(json!({ "name": me, "cpu_milli": 500, "mem_mb": 50, "command": ["/bin/sh", "-c", script] }))
    };
    let (a, b) = (job("a", "b"), job("b", "a"));
    let a_pid = first_line(&shared.join("a.pid"), Duration::from_secs(30));
    let outside = format!("/bin/sh {} {a_pid} > {}", attack.display(), shared.join("outside.out").display());
    let _outside = Group(as_nobody(&outside));
    for who in ["a", "b", "outside"] {
        assert_eq!(first_line(&shared.join(format!("{who}.out")), Duration::from_secs(30)), "checked", "{who}");
    }
    let uid = |local: &common::local::Local, job: u64| local.job(job)["uid"].as_u64();
    let (a_uid, b_uid) = (uid(&local, a), uid(&local, b));
    let range = pliant_live::uid_range::DEFAULT_TASK_UIDS;
    for u in [a_uid, b_uid] {
        assert!(u.is_some_and(|u| range.contains(u as u32)), "{a_uid:?} {b_uid:?} not in {range}");
    }
    assert_ne!(a_uid, b_uid);
    local.crash_and_restart();
    assert_eq!((uid(&local, a), uid(&local, b)), (a_uid, b_uid), "a restart changed a job's uid");
}
