//! A real two-node Slurm cluster on this machine, for tests: its own
//! `munged` (own key and socket), `slurmctld` on a bridge the test makes, and
//! two `slurmd`, each in its own network and UTS namespace with its own
//! address and hostname (Debian's Slurm 22.05 packages, nothing else). Every
//! daemon runs in the foreground as a child of the test, so it is stopped by
//! its own pid. Dropping the cluster — also after a panic — cancels its jobs,
//! stops its daemons and removes what it made: the job cgroups Slurm left
//! (`slurm_<node>`), the namespaces, veths and bridge, `/run/netns` if it
//! made it, and its directory (config, state, spool, logs). It never touches
//! a `munged` or Slurm it did not start.

use crate::live::{live_machine, skip};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How Slurm itself is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrangement {
    /// Plain Slurm preempting by `SUSPEND,GANG` (the baseline): partitions
    /// `long` (PriorityTier 1) and `short` (PriorityTier 10), memory
    /// allocated by Slurm (`CR_Core_Memory`).
    SuspendGang,
    /// Slurm under pliant: one partition `pliant` with `CR_Core` and
    /// `OverSubscribe=FORCE:4`, so Slurm never refuses a placement pliant
    /// makes (pliant books CPU and memory itself), and pliant's
    /// `job_submit.lua`, which holds every job of the partition at submission.
    Pliant,
    /// As [`Arrangement::Pliant`] without `job_submit.lua`: a job submitted
    /// without `--hold` may start before pliant holds it.
    PliantWithoutPlugin,
    /// Plain Slurm on the same partition `pliant`: `CR_Core`,
    /// `OverSubscribe=NO`, no plugin (Slurm places every job itself).
    Plain,
    /// Slurm places under pliant (`pliant slurm --placement slurm`): the
    /// partition `pliant` with `CR_Core_Memory` (Slurm books CPU and memory),
    /// `OverSubscribe=NO`, no plugin: jobs are not held.
    SlurmPlaces,
}

/// pliant's `job_submit` plugin, as shipped.
const JOB_SUBMIT_LUA: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../slurm/slurm/job_submit.lua"));

/// A running test cluster.
pub struct SlurmCluster {
    dir: PathBuf,
    conf: PathBuf,
    /// The node names (also their hostnames and cgroup names `slurm_<name>`).
    pub nodes: [String; 2],
    netns: Vec<String>,
    /// The bridge's /24, `10.213.X`.
    net: String,
    bridge: Option<String>,
    made_netns_dir: bool,
    daemons: Vec<(String, Child)>,
    _machine: std::fs::File,
}

/// Node memory as Slurm is told (`RealMemory`, MB): the test jobs size their
/// requests against it.
pub const NODE_MEM_MB: u64 = 1000;

/// Why a Slurm cluster cannot be started here, if it cannot.
fn missing_tools() -> Option<String> {
    for tool in ["slurmctld", "slurmd", "munged", "sbatch", "squeue", "scontrol", "ip", "nsenter", "unshare"] {
        let found = std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
            || Path::new("/usr/sbin").join(tool).is_file();
        if !found {
            return Some(format!("`{tool}` is not installed (apt-get install slurm-wlm munge iproute2 util-linux)"));
        }
    }
    None
}

impl SlurmCluster {
    /// Starts a cluster for test `what` (under the live tests' machine lock),
    /// or skips loudly and returns `None` when this machine cannot run one.
    pub fn start(what: &str, arrangement: Arrangement) -> Option<SlurmCluster> {
        SlurmCluster::start_with_cpus(what, arrangement, 2)
    }

    /// As [`SlurmCluster::start`], each node declaring `cpus` CPUs (beyond
    /// the machine's, Slurm is told to trust the configuration and the jobs
    /// are not bound to cores).
    pub fn start_with_cpus(what: &str, arrangement: Arrangement, cpus: u32) -> Option<SlurmCluster> {
        let machine = live_machine(what)?;
        if let Some(reason) = missing_tools() {
            skip(&format!("{what}: {reason}"));
            return None;
        }
        let tag = std::process::id() % 100_000;
        let dir = std::env::temp_dir().join(format!("pliant-slurm-{tag}"));
        let _ = std::fs::remove_dir_all(&dir);
        let nodes = [format!("p{tag}a"), format!("p{tag}b")];
        let mut cluster = SlurmCluster {
            conf: dir.join("etc/slurm.conf"),
            dir,
            nodes,
            netns: Vec::new(),
            net: String::new(),
            bridge: None,
            made_netns_dir: false,
            daemons: Vec::new(),
            _machine: machine,
        };
        cluster.boot(tag, arrangement, cpus).unwrap_or_else(|e| panic!("{what}: starting the Slurm cluster: {e}"));
        Some(cluster)
    }

    fn boot(&mut self, tag: u32, arrangement: Arrangement, cpus: u32) -> Result<(), String> {
        for sub in ["etc", "state", "log", "jobs", "munge"] {
            std::fs::create_dir_all(self.dir.join(sub)).map_err(|e| e.to_string())?;
        }
        for node in &self.nodes {
            std::fs::create_dir_all(self.dir.join("spool").join(node)).map_err(|e| e.to_string())?;
        }
        self.start_munged()?;
        // A private /24 per test process, used only inside namespaces it made.
        let net = format!("10.213.{}", 100 + tag % 100);
        self.net = net.clone();
        let bridge = format!("psb{tag}");
        run("ip", &["link", "add", &bridge, "type", "bridge"])?;
        self.bridge = Some(bridge.clone());
        run("ip", &["addr", "add", &format!("{net}.1/24"), "dev", &bridge])?;
        run("ip", &["link", "set", &bridge, "up"])?;
        self.made_netns_dir = !Path::new("/run/netns").exists();
        for (i, _) in self.nodes.clone().iter().enumerate() {
            let ns = format!("psn{tag}{i}");
            let (host, inner) = (format!("psv{tag}{i}h"), format!("psv{tag}{i}n"));
            run("ip", &["netns", "add", &ns])?;
            self.netns.push(ns.clone());
            run("ip", &["link", "add", &host, "type", "veth", "peer", "name", &inner])?;
            run("ip", &["link", "set", &host, "master", &bridge])?;
            run("ip", &["link", "set", &host, "up"])?;
            run("ip", &["link", "set", &inner, "netns", &ns])?;
            run("ip", &["-n", &ns, "link", "set", "lo", "up"])?;
            run("ip", &["-n", &ns, "addr", "add", &format!("{net}.{}/24", 11 + i), "dev", &inner])?;
            run("ip", &["-n", &ns, "link", "set", &inner, "up"])?;
        }
        let port = crate::live::free_port();
        std::fs::write(&self.conf, self.slurm_conf(&net, port, arrangement, cpus)).map_err(|e| e.to_string())?;
        let cores = if cpus > 2 { "no" } else { "yes" };
        std::fs::write(
            self.dir.join("etc/cgroup.conf"),
            format!(
                "CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\nConstrainCores={cores}\nConstrainRAMSpace=yes\n"
            ),
        )
        .map_err(|e| e.to_string())?;
        if arrangement == Arrangement::Pliant {
            std::fs::write(self.dir.join("etc/job_submit.lua"), JOB_SUBMIT_LUA).map_err(|e| e.to_string())?;
        }
        let conf = self.conf.to_string_lossy().into_owned();
        let log = self.dir.join("log/slurmctld.out");
        self.spawn("slurmctld", Command::new("slurmctld").args(["-D", "-f", &conf]), &log)?;
        for (i, node) in self.nodes.clone().iter().enumerate() {
            // `nsenter --net` keeps the mount namespace (`ip netns exec` would
            // hide /sys/fs/cgroup); `unshare --uts` gives the node its hostname.
            // Both exec, so the child's pid is slurmd's.
            let script = format!("hostname {node} && exec slurmd -D -f {conf}");
            let mut cmd = Command::new("nsenter");
            cmd.args([&format!("--net=/run/netns/{}", self.netns[i]), "unshare", "--uts", "sh", "-c", &script]);
            self.spawn(&format!("slurmd {node}"), &mut cmd, &self.dir.join(format!("log/slurmd.{node}.out")))?;
        }
        self.wait_until("both nodes idle in sinfo", Duration::from_secs(60), |c| {
            let nodes = c.nodes();
            nodes.len() == 2 && nodes.iter().all(|n| n["state"] == "idle")
        });
        Ok(())
    }

    fn start_munged(&mut self) -> Result<(), String> {
        use std::os::unix::fs::PermissionsExt;
        let m = self.dir.join("munge");
        let mut key = [0u8; 128];
        std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom").map_err(|e| e.to_string())?, &mut key)
            .map_err(|e| e.to_string())?;
        std::fs::write(m.join("key"), key).map_err(|e| e.to_string())?;
        std::fs::set_permissions(m.join("key"), std::fs::Permissions::from_mode(0o600)).map_err(|e| e.to_string())?;
        std::fs::set_permissions(&m, std::fs::Permissions::from_mode(0o711)).map_err(|e| e.to_string())?;
        let p = |f: &str| m.join(f).to_string_lossy().into_owned();
        let mut cmd = Command::new("munged");
        cmd.args(["-F", "-f"]).args([
            format!("--socket={}", p("sock")),
            format!("--key-file={}", p("key")),
            format!("--pid-file={}", p("pid")),
            format!("--log-file={}", p("log")),
            format!("--seed-file={}", p("seed")),
        ]);
        self.spawn("munged", &mut cmd, &m.join("out"))?;
        let start = Instant::now();
        while !m.join("sock").exists() {
            if start.elapsed() > Duration::from_secs(10) {
                return Err("munged did not create its socket in 10 s".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    fn spawn(&mut self, name: &str, cmd: &mut Command, log: &Path) -> Result<(), String> {
        let out = std::fs::File::create(log).map_err(|e| e.to_string())?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let child = cmd
            .env("SLURM_CONF", &self.conf)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("{name}: {e}"))?;
        self.daemons.push((name.to_string(), child));
        Ok(())
    }

    fn slurm_conf(&self, net: &str, port: u16, arrangement: Arrangement, cpus: u32) -> String {
        let d = self.dir.display();
        let host = String::from_utf8(Command::new("hostname").arg("-s").output().unwrap().stdout).unwrap();
        let mut conf = format!(
            "ClusterName=pliant\nSlurmctldHost={}({net}.1)\nSlurmUser=root\nSlurmdUser=root\n\
             SlurmctldPort={port}\nSlurmdPort=6818\nAuthType=auth/munge\nCredType=cred/munge\n\
             AuthInfo=socket={d}/munge/sock\nStateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool/%n\n\
             SlurmctldPidFile={d}/state/slurmctld.pid\nSlurmdPidFile={d}/spool/%n/slurmd.pid\n\
             SlurmctldLogFile={d}/log/slurmctld.log\nSlurmdLogFile={d}/log/slurmd.%n.log\n\
             ProctrackType=proctrack/cgroup\nTaskPlugin=task/cgroup\nJobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\nJobCompType=jobcomp/filetxt\n\
             JobCompLoc={d}/log/jobcomp.txt\nMpiDefault=none\nReturnToService=2\n\
             SchedulerType=sched/backfill\nSelectType=select/cons_tres\nMailProg=/bin/true\n",
            host.trim()
        );
        conf += match arrangement {
            Arrangement::SuspendGang => {
                "SelectTypeParameters=CR_Core_Memory\nPreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\n"
            }
            // A released job is started by Slurm's next scheduling pass,
            // which `batch_sched_delay` (3 s by default) holds back.
            Arrangement::Pliant => {
                "SelectTypeParameters=CR_Core\nJobSubmitPlugins=lua\nSchedulerParameters=batch_sched_delay=0\n"
            }
            Arrangement::PliantWithoutPlugin | Arrangement::Plain => {
                "SelectTypeParameters=CR_Core\nSchedulerParameters=batch_sched_delay=0\n"
            }
            Arrangement::SlurmPlaces => {
                "SelectTypeParameters=CR_Core_Memory\nSchedulerParameters=batch_sched_delay=0\n"
            }
        };
        if cpus > 2 {
            conf += "SlurmdParameters=config_overrides\n";
        }
        for (i, node) in self.nodes.iter().enumerate() {
            conf += &format!(
                "NodeName={node} NodeAddr={net}.{} CPUs={cpus} Boards=1 SocketsPerBoard=1 CoresPerSocket={cpus} \
                 ThreadsPerCore=1 RealMemory={NODE_MEM_MB} State=UNKNOWN\n",
                11 + i
            );
        }
        let nodes = self.nodes.join(",");
        conf += &match arrangement {
            Arrangement::SuspendGang => format!(
                "PartitionName=long Nodes={nodes} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:1 \
                 PriorityTier=1 PreemptMode=SUSPEND\n\
                 PartitionName=short Nodes={nodes} MaxTime=INFINITE State=UP OverSubscribe=FORCE:1 PriorityTier=10 PreemptMode=OFF\n"
            ),
            Arrangement::Pliant | Arrangement::PliantWithoutPlugin => format!(
                "PartitionName=pliant Nodes={nodes} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4\n"
            ),
            Arrangement::Plain | Arrangement::SlurmPlaces => {
                format!("PartitionName=pliant Nodes={nodes} Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO\n")
            }
        };
        conf
    }

    /// The address of this machine on the cluster's bridge, where the
    /// nodes reach `slurmctld` (and `pliant slurm`).
    pub fn gateway(&self) -> String {
        format!("{}.1", self.net)
    }

    /// A command run in node `i`'s network namespace (as its `slurmd` is):
    /// `nsenter` execs it, so the child's pid is the program's.
    pub fn on_node(&self, i: usize, program: &str) -> Command {
        let mut cmd = Command::new("nsenter");
        cmd.arg(format!("--net=/run/netns/{}", self.netns[i])).arg(program);
        cmd
    }

    /// The cluster's `slurm.conf`.
    pub fn conf(&self) -> &Path {
        &self.conf
    }

    /// A directory for the test's job scripts and outputs (removed with the cluster).
    pub fn jobs_dir(&self) -> PathBuf {
        self.dir.join("jobs")
    }

    /// Runs a Slurm client tool against this cluster.
    pub fn tool(&self, tool: &str, args: &[&str]) -> Output {
        Command::new(tool).args(args).env("SLURM_CONF", &self.conf).output().unwrap_or_else(|e| panic!("{tool}: {e}"))
    }

    /// Runs a Slurm client tool that must succeed; returns its stdout.
    pub fn ok(&self, tool: &str, args: &[&str]) -> String {
        let out = self.tool(tool, args);
        assert!(out.status.success(), "{tool} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    /// `sbatch --parsable ARGS`: the new job's id.
    pub fn sbatch(&self, args: &[&str]) -> u64 {
        let mut all = vec!["--parsable"];
        all.extend_from_slice(args);
        let out = self.ok("sbatch", &all);
        out.trim().split(';').next().unwrap().parse().unwrap_or_else(|_| panic!("sbatch printed {out:?}"))
    }

    /// Every job slurmctld knows (`squeue --json`; 22.05 ignores its filters).
    pub fn jobs(&self) -> Vec<Value> {
        let out = self.tool("squeue", &["--json"]);
        if !out.status.success() {
            return Vec::new();
        }
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        doc["jobs"].as_array().cloned().unwrap_or_default()
    }

    /// One job's `squeue --json` record.
    pub fn job(&self, id: u64) -> Value {
        self.jobs().into_iter().find(|j| j["job_id"] == id).unwrap_or(Value::Null)
    }

    /// Every job completion record Slurm wrote (`sacct --completion`: its
    /// `jobcomp/filetxt` log, as there is no slurmdbd), oldest first, as
    /// (job id, state, nodes).
    pub fn completions(&self) -> Vec<(u64, String, String)> {
        let out = self.ok("sacct", &["-c", "-a", "-n", "-P", "-o", "jobid,state,nodelist"]);
        out.lines()
            .filter_map(|l| {
                let mut f = l.split('|');
                let id = f.next()?.trim().parse().ok()?;
                Some((id, f.next()?.trim().to_string(), f.next()?.trim().to_string()))
            })
            .collect()
    }

    /// Every node (`sinfo --json`).
    pub fn nodes(&self) -> Vec<Value> {
        let out = self.tool("sinfo", &["--json"]);
        if !out.status.success() {
            return Vec::new();
        }
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        doc["nodes"].as_array().cloned().unwrap_or_default()
    }

    /// Polls `done` every 100 ms; panics (with the daemons' logs) after `limit`.
    pub fn wait_until(&self, what: &str, limit: Duration, mut done: impl FnMut(&SlurmCluster) -> bool) {
        let start = Instant::now();
        while !done(self) {
            assert!(start.elapsed() < limit, "timed out after {limit:?} waiting for {what}\n{}", self.logs());
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The tails of the daemons' logs, for failure messages.
    pub fn logs(&self) -> String {
        let mut text = String::new();
        for entry in std::fs::read_dir(self.dir.join("log")).into_iter().flatten().flatten() {
            let body = std::fs::read_to_string(entry.path()).unwrap_or_default();
            let tail: Vec<&str> = body.lines().rev().take(15).collect();
            text += &format!("--- {}\n", entry.path().display());
            for line in tail.into_iter().rev() {
                text += line;
                text.push('\n');
            }
        }
        text
    }

    /// The memory cgroup Slurm made for `job` on `node` (cgroup v1).
    pub fn job_memory_cgroup(&self, node: &str, job: u64) -> PathBuf {
        PathBuf::from(format!("/sys/fs/cgroup/memory/slurm_{node}/uid_0/job_{job}"))
    }

    fn teardown(&mut self) {
        let ids: Vec<String> = self.jobs().iter().filter_map(|j| j["job_id"].as_u64()).map(|i| i.to_string()).collect();
        if !ids.is_empty() {
            let mut args = vec!["--full"];
            args.extend(ids.iter().map(String::as_str));
            let _ = self.tool("scancel", &args);
            let quiet = Instant::now();
            while quiet.elapsed() < Duration::from_secs(15)
                && self.jobs().iter().any(|j| !matches!(j["job_state"].as_str(), Some(s) if is_over(s)))
            {
                std::thread::sleep(Duration::from_millis(200));
            }
        }
        // slurmd first (it waits for its steps), slurmctld, then munged.
        for (name, child) in self.daemons.iter_mut().rev() {
            stop(name, child);
        }
        for node in &self.nodes {
            for controller in std::fs::read_dir("/sys/fs/cgroup").into_iter().flatten().flatten() {
                let top = controller.path().join(format!("slurm_{node}"));
                if top.is_dir() {
                    remove_cgroup_tree(&top);
                }
            }
        }
        for ns in &self.netns {
            let _ = run("ip", &["netns", "del", ns]);
        }
        if let Some(bridge) = &self.bridge {
            let _ = run("ip", &["link", "del", bridge]);
        }
        let netns_dir = Path::new("/run/netns");
        if self.made_netns_dir && std::fs::read_dir(netns_dir).is_ok_and(|mut d| d.next().is_none()) {
            let _ = run("umount", &["/run/netns"]);
            let _ = std::fs::remove_dir(netns_dir);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Drop for SlurmCluster {
    fn drop(&mut self) {
        self.teardown();
    }
}

/// True for a Slurm job state that will not change any more.
pub fn is_over(state: &str) -> bool {
    matches!(
        state,
        "COMPLETED" | "CANCELLED" | "FAILED" | "TIMEOUT" | "NODE_FAIL" | "OUT_OF_MEMORY" | "BOOT_FAIL" | "DEADLINE"
    )
}

/// SIGTERM, up to 20 s to exit, then SIGKILL.
fn stop(name: &str, child: &mut Child) {
    if matches!(child.try_wait(), Ok(Some(_))) {
        return;
    }
    // SAFETY: kill(2) has no memory-safety preconditions; the pid is our own child's.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!("{name} did not stop on SIGTERM in 20 s: killed");
    let _ = child.kill();
    let _ = child.wait();
}

/// Kills what is left in a cgroup tree Slurm made for a node of this test
/// and removes its directories, deepest first.
fn remove_cgroup_tree(top: &Path) {
    let mut dirs = vec![top.to_path_buf()];
    let mut i = 0;
    while i < dirs.len() {
        let children: Vec<PathBuf> = std::fs::read_dir(&dirs[i])
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect();
        dirs.extend(children);
        i += 1;
    }
    for dir in dirs.iter().rev() {
        let frozen = dir.join("freezer.state");
        if frozen.exists() {
            let _ = std::fs::write(&frozen, "THAWED");
        }
        for pid in std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default().lines() {
            if let Ok(pid) = pid.trim().parse::<i32>() {
                // SAFETY: as above; these are the test's job processes.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
        let start = Instant::now();
        while std::fs::remove_dir(dir).is_err() && dir.exists() && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn run(tool: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(tool).args(args).output().map_err(|e| format!("{tool}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{tool} {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}
