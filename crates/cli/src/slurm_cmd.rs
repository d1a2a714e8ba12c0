//! `pliant slurm`: pliant's core in charge of a Slurm partition
//! (`pliant_slurm`; docs/slurm.md). Slurm's tools find the cluster as usual
//! (`SLURM_CONF`).

use crate::manager_cmd::parse_key_value;
use pliant_core::policy::Registry;
use pliant_live::daemon::stop_on_signals;
use pliant_slurm::calls::Surroundings;
use pliant_slurm::controller::Controller;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Arguments of `pliant slurm`.
#[derive(Debug, clap::Args)]
pub struct SlurmArgs {
    /// The Slurm partition whose jobs pliant places (they must be submitted
    /// held: `sbatch --hold`, or SBATCH_HOLD=1).
    #[arg(long, default_value = "pliant")]
    partition: String,
    /// The policy: a preset (see `pliant policies`), a composition
    /// `NAME=FROM[,STEP=VALUE]...`, or `FILE#NAME` of an experiment file;
    /// fixed when the journal is created.
    #[arg(long, default_value = "ip")]
    policy: String,
    /// Who places the jobs: `pliant` (every job held, released on the node
    /// pliant's core chose) or `slurm` (Slurm places and starts them under
    /// CR_Core_Memory; pliant adopts each where it started and preempts for
    /// short jobs by requeue or checkpoint); fixed when the journal is created.
    #[arg(long, default_value = "pliant", value_parser = pliant_slurm::placement::Placer::parse)]
    placement: pliant_slurm::placement::Placer,
    /// Set a policy parameter, KEY=VALUE (repeatable).
    #[arg(long = "set", value_parser = parse_key_value)]
    sets: Vec<(String, String)>,
    /// Directory of the journal (journal.jsonl); a restart with the same
    /// directory takes over where the last run stopped.
    #[arg(long, default_value = "pliant-slurm-state")]
    state_dir: PathBuf,
    /// Address the node agents (`pliant agent --slurm`, one per node) reach
    /// the controller on, over TLS (its certificate in STATE_DIR/tls).
    #[arg(long, default_value = "0.0.0.0:7467")]
    listen: String,
    /// File holding the join token with which node agents join (default:
    /// STATE_DIR/join-token, generated on first start, mode 0600).
    #[arg(long)]
    join_token_file: Option<PathBuf>,
    /// How often Slurm is read, in milliseconds: the most from the start of
    /// one poll to the start of the next.
    #[arg(long, default_value_t = 200)]
    poll_ms: u64,
    /// Print pliant's view of the partition's jobs as JSON and exit: the
    /// journal in --state-dir replayed, nothing asked of or done on Slurm (a
    /// controller may be running on it).
    #[arg(long)]
    show: bool,
}

/// `pliant slurm --show`: one JSON object per job, in pliant's order.
fn show(state_dir: &std::path::Path, registry: &Registry) -> Result<(), String> {
    let (config, jobs) = Controller::view(state_dir, registry).map_err(|e| e.to_string())?;
    let jobs: Vec<serde_json::Value> = jobs
        .iter()
        .map(|t| {
            let mut v = serde_json::to_value(t).expect("a job record serialises");
            v["node"] = t.standing.node.map(|n| config.nodes[n as usize].name.clone()).into();
            v
        })
        .collect();
    println!("{}", serde_json::to_string_pretty(&jobs).expect("JSON serialises"));
    Ok(())
}

/// Binds `address`, waiting up to 5 s while it is in use: a controller
/// restarted at once after a crash may find its port held for a moment.
fn bind(address: &str) -> std::io::Result<std::net::TcpListener> {
    let start = std::time::Instant::now();
    loop {
        match std::net::TcpListener::bind(address) {
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && start.elapsed() < Duration::from_secs(5) => {
                std::thread::sleep(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// Runs the controller until SIGINT or SIGTERM, its policy built through `registry`.
pub fn run(args: SlurmArgs, registry: &Registry) -> Result<(), String> {
    if args.show {
        return show(&args.state_dir, registry);
    }
    let log = |line: &str| eprintln!("pliant slurm: {line}");
    // An unknown policy, a bad parameter or a mechanism the placement cannot
    // carry out is refused before anything starts.
    let profile = pliant_run::policy_spec::resolve("--policy", &args.policy, registry)?;
    let policy = pliant_live::stepper::build_policy(registry, &profile, &args.sets)?;
    args.placement.check(&profile.name, &policy)?;
    // A join token file given is checked before anything is written: a refused one leaves no trace.
    if let Some(file) = &args.join_token_file {
        pliant_live::strict::check_file(file, "join token")?;
    }
    let state_dir = pliant_live::daemon::private_state_dir(&args.state_dir, &log)?;
    let tls = pliant_live::tls::ServerTls::for_manager(&state_dir, &log)?;
    let join = pliant_live::token::Token::join_for_manager(&state_dir, args.join_token_file.as_deref(), &log)?;
    let listener = bind(&args.listen).map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let (mut controller, recovered) = Controller::open(
        Surroundings::real(),
        &state_dir,
        &args.partition,
        &profile,
        &args.sets,
        args.placement,
        join,
        registry,
    )
    .map_err(|e| e.to_string())?;
    let c = controller.config();
    let nodes: Vec<String> = c.nodes.iter().map(|n| format!("{} ({})", n.name, n.capacity)).collect();
    eprintln!(
        "pliant slurm: {} partition `{}` under policy `{}`, placed by {}: {}",
        if recovered { "took over" } else { "manages" },
        c.partition,
        c.policy,
        c.placement.name(),
        nodes.join(", ")
    );
    log(&format!(
        "node agents join on https://{} (certificate {}, join token in {})",
        pliant_live::daemon::listening_address(&listener),
        tls.fingerprint(),
        args.join_token_file.unwrap_or_else(|| state_dir.join("join-token")).display()
    ));
    let stop = stop_on_signals();
    let link = controller.link().expect("an opened controller has its agents' channel");
    let period = Duration::from_millis(args.poll_ms.max(1));
    std::thread::scope(|s| {
        s.spawn(|| {
            let running = || !stop.load(Ordering::SeqCst);
            let answer = |r: &pliant_live::server::Request| pliant_slurm::link::respond(&link, r);
            pliant_live::server::serve(&listener, Default::default(), Some(&tls), &running, &answer);
        });
        let result = (|| {
            while !stop.load(Ordering::SeqCst) {
                // The period bounds the time from one poll's start to the next's.
                let started = std::time::Instant::now();
                if let Err(e) = controller.poll() {
                    match e {
                        pliant_slurm::controller::ControllerError::Tool(e) => eprintln!("pliant slurm: warning: {e}"),
                        e => return Err(e.to_string()),
                    }
                }
                std::thread::sleep(
                    controller.pause(period.saturating_sub(started.elapsed()).max(Duration::from_millis(1))),
                );
            }
            Ok(())
        })();
        stop.store(true, Ordering::SeqCst);
        result
    })?;
    eprintln!("pliant slurm: stopped; held jobs stay held, running ones run on");
    Ok(())
}
