//! `pliant numeric`: the numerical studies of the SSR paper, as series on
//! standard output and, with `--out`, SVG plots.

use clap::{Args, Subcommand};
use pliant_plugins::ssr::deadline::utilisation_bound;
use pliant_report::{plot_sweep, sweep_table, Sweep, SweepMetric, SweepSeries, SCHEMA_VERSION};
use pliant_workload::straggler_study::straggler_speedup;
use std::path::{Path, PathBuf};

/// The studies.
#[derive(Subcommand)]
pub enum NumericCmd {
    /// Eq. 4 / Fig. 8: the lower bound on utilisation against isolation P, for N = 20 and 200.
    Tradeoff(NumericArgs),
    /// Fig. 10: phase time cut by straggler copies against the Pareto shape α, for N = 20 and 200.
    Stragglers(NumericArgs),
}

/// Options shared by the studies.
#[derive(Args)]
pub struct NumericArgs {
    /// Also write one SVG plot per N here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Fig. 10: random phases averaged per point (the paper: 1,000).
    #[arg(long, default_value_t = 1000)]
    runs: usize,
    /// Fig. 10: seed of the draws.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Degrees of parallelism of Fig. 8 and Fig. 10.
const PARALLELISM: [u32; 2] = [20, 200];

fn series(name: String, values: Vec<f64>) -> SweepSeries {
    SweepSeries {
        policy: name,
        per_seed: values.iter().map(|&v| vec![Some(v)]).collect(),
        mean: values.into_iter().map(Some).collect(),
    }
}

fn show(sweep: &Sweep, out: Option<&Path>, file: &str) -> Result<(), String> {
    print!("{}", sweep_table(sweep));
    if let Some(dir) = out {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
        let path = dir.join(file);
        plot_sweep(sweep, &sweep.metrics[0], None, &path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Runs `pliant numeric`.
pub fn run(cmd: NumericCmd) -> Result<(), String> {
    match cmd {
        NumericCmd::Tradeoff(args) => {
            let ps = [0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99];
            for n in PARALLELISM {
                let lines = [1.2, 1.6, 2.0, 3.0]
                    .iter()
                    .map(|&a| series(format!("alpha={a}"), ps.iter().map(|&p| utilisation_bound(p, n, a)).collect()))
                    .collect();
                let sweep = Sweep {
                    schema_version: SCHEMA_VERSION,
                    scenario: format!("Eq. 4, N = {n}"),
                    key: "P".into(),
                    values: ps.iter().map(f64::to_string).collect(),
                    seeds: vec![0],
                    metrics: vec![SweepMetric { metric: "utilisation lower bound E[U]".into(), series: lines }],
                };
                show(&sweep, args.out.as_deref(), &format!("tradeoff_n{n}.svg"))?;
            }
        }
        NumericCmd::Stragglers(args) => {
            let alphas = [1.1, 1.2, 1.4, 1.6, 1.8, 2.0, 2.5, 3.0];
            let lines = PARALLELISM
                .iter()
                .map(|&n| {
                    let cut = alphas.iter().map(|&a| straggler_speedup(a, n as usize, args.runs, args.seed)).collect();
                    series(format!("N={n}"), cut)
                })
                .collect();
            let sweep = Sweep {
                schema_version: SCHEMA_VERSION,
                scenario: format!("Fig. 10, {} phases per point", args.runs),
                key: "alpha".into(),
                values: alphas.iter().map(f64::to_string).collect(),
                seeds: vec![args.seed],
                metrics: vec![SweepMetric { metric: "phase time cut 1 - E[T']/E[T]".into(), series: lines }],
            };
            show(&sweep, args.out.as_deref(), "stragglers.svg")?;
        }
    }
    Ok(())
}
