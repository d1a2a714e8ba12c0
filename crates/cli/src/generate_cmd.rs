//! `pliant generate yarn-me`: writes a Table 2 trace (YARN-ME §6) in pliant's
//! native format or in DSS's SLS variant.

use clap::{Args, ValueEnum};
use pliant_core::model::ElasticityProfile;
use pliant_workload::scenarios::yarn_me::{generate, Spread, TraceSpec};
use pliant_workload::{write_workload, Workload};
use std::io::Write;
use std::path::PathBuf;

/// Which file format.
#[derive(Clone, Copy, ValueEnum)]
pub enum GenFormat {
    /// pliant's JSON Lines (with each job's elasticity).
    Native,
    /// DSS's SLS variant (`c.nr`, `c.dur`, `c.mem`, `c.type`, `c.prio`, and
    /// the penalty as DSS's per-task `c.penalty` model and `c.ib` bump).
    Dss,
}

/// Arguments of `pliant generate yarn-me`.
#[derive(Args)]
pub struct GenerateArgs {
    /// The generator: `yarn-me` (Table 2).
    #[arg(value_parser = ["yarn-me"])]
    kind: String,
    /// Jobs in the trace.
    #[arg(long, default_value_t = 100)]
    jobs: usize,
    /// Nodes of the cluster (native format only; DSS takes them on its command line).
    #[arg(long, default_value_t = 100)]
    nodes: usize,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How jobs are drawn (Table 2's rows).
    #[arg(long, value_enum, default_value = "uniform")]
    spread: crate::elasticity_cmd::SpreadArg,
    /// The tasks' maximum penalty when under-sized.
    #[arg(long, default_value_t = 1.5)]
    penalty: f64,
    /// The penalty's shape (§6.1: the reducer model).
    #[arg(long, value_enum, default_value = "reducer")]
    model: crate::elasticity_cmd::ModelArg,
    /// Output format.
    #[arg(long, value_enum, default_value = "native")]
    format: GenFormat,
    /// Output file (default: standard output).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// One job of `w` as a DSS SLS record.
fn dss_record(w: &Workload, i: usize) -> serde_json::Value {
    let j = &w.jobs[i];
    let t = j.phases[0].tasks[0];
    let ms = |us: u64| us / 1000;
    // DSS's names for the two models: SAWTOOTH (the reducer's) and STEP.
    let e = j.elastic.expect("generated jobs are elastic").estimate.profile;
    let model = if matches!(e, ElasticityProfile::Sawtooth { .. }) { "sawtooth" } else { "step" };
    serde_json::json!({
        "am.type": "mapreduce",
        "job.start.ms": ms(j.submit),
        "job.end.ms": ms(j.submit + t.duration),
        "job.id": format!("job_{}", i + 1),
        "job.tasks": [{"c.dur": ms(t.duration), "c.mem": t.request.mem_mb, "c.nr": j.phases[0].tasks.len(), "c.type": "reduce", "c.prio": 20,
            "c.penalty": model, "c.ib": e.max_penalty_of()}],
    })
}

/// Runs `pliant generate`.
pub fn run(args: GenerateArgs) -> Result<(), String> {
    if args.jobs == 0 || args.nodes == 0 {
        return Err("--jobs and --nodes must be at least 1".into());
    }
    if !(args.penalty >= 1.0 && args.penalty.is_finite()) {
        return Err(format!("--penalty {} is below 1 (an under-sized task cannot run faster)", args.penalty));
    }
    let spread = match args.spread {
        crate::elasticity_cmd::SpreadArg::Uniform => Spread::Uniform,
        crate::elasticity_cmd::SpreadArg::Exponential => Spread::Exponential,
    };
    let spec = TraceSpec {
        jobs: args.jobs,
        nodes: args.nodes,
        model: args.model.model(),
        ..TraceSpec::table2(spread, args.penalty)
    };
    let w = generate(&spec, args.seed);
    let mut out: Box<dyn Write> = match &args.out {
        Some(p) => {
            Box::new(std::io::BufWriter::new(std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()))?))
        }
        None => Box::new(std::io::stdout().lock()),
    };
    let name = args.out.as_ref().map_or("standard output".to_string(), |p| p.display().to_string());
    let result = match args.format {
        GenFormat::Native => write_workload(&w, &mut out),
        GenFormat::Dss => (0..w.jobs.len()).try_for_each(|i| writeln!(out, "{}", dss_record(&w, i))),
    };
    result.and_then(|()| out.flush()).map_err(|e| format!("{name}: {e}"))
}
