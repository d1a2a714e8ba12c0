//! `pliant generate yarn-me`: writes a Table 2 trace (YARN-ME §6) in pliant's
//! native format or in DSS's SLS variant.

use clap::{Args, ValueEnum};
use pliant_trace::write_dss;
use pliant_workload::scenarios::yarn_me::{generate, Spread, TraceSpec};
use pliant_workload::write_workload;
use std::io::Write;
use std::path::PathBuf;

/// Which file format.
#[derive(Clone, Copy, ValueEnum)]
pub enum GenFormat {
    /// pliant's JSON Lines (with each job's elasticity).
    Native,
    /// DSS's SLS variant in its generator's ten-line layout (`c.nr`, `c.dur`,
    /// `c.mem`, `c.type`, `c.prio`, and the penalty as DSS's per-task
    /// `c.penalty` model and `c.ib` bump); `simulate --workload FILE --nodes N
    /// --node 16,10` reads it back as the native file.
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
    match args.format {
        GenFormat::Native => write_workload(&w, &mut out).map_err(|e| format!("{name}: {e}"))?,
        GenFormat::Dss => write_dss(&w, &mut out).map_err(|e| format!("{name}: {e}"))?,
    }
    out.flush().map_err(|e| format!("{name}: {e}"))
}
