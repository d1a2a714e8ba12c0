//! `pliant elasticity`: YARN-ME §6.2's sweep — N generated Table 2 traces,
//! each run under `yarn`, `elastic` and `meganode` in parallel, and the
//! distribution of the average job completion time ratios (Fig. 6).

use clap::{Args, ValueEnum};
use pliant_core::policy::Params;
use pliant_plugins::preset;
use pliant_report::plot_ratio_cdf;
use pliant_run::simulate::parallel_map;
use pliant_sim::{simulate, SimOptions};
use pliant_workload::scenarios::yarn_me::{generate, Misestimate, Misestimated, PenaltyModel, Spread, TraceSpec};
use std::path::PathBuf;

/// Table 2's two rows.
#[derive(Clone, Copy, ValueEnum)]
pub enum SpreadArg {
    /// Uniformly drawn jobs.
    Uniform,
    /// Exponentially drawn jobs.
    Exponential,
}

/// The tasks' penalty model.
#[derive(Clone, Copy, ValueEnum)]
pub enum ModelArg {
    /// §6.1's reducer model: §2.3's saw-tooth with the penalty its maximum.
    Reducer,
    /// Every under-sized allocation costs the full penalty.
    Step,
}

impl ModelArg {
    /// The workload generator's model.
    pub fn model(self) -> PenaltyModel {
        match self {
            ModelArg::Reducer => PenaltyModel::Reducer,
            ModelArg::Step => PenaltyModel::Step,
        }
    }
}

/// Which estimates `--misestimate` puts off.
#[derive(Clone, Copy, ValueEnum)]
pub enum MisestimatedArg {
    /// Duration, ideal memory and penalty, each by its own draw.
    All,
    /// The task duration only (Fig. 7a).
    Duration,
    /// The ideal memory only (Fig. 7b).
    Memory,
    /// The penalty only (Fig. 7c).
    Penalty,
}

impl MisestimatedArg {
    /// The workload generator's choice.
    fn of(self) -> Misestimated {
        match self {
            MisestimatedArg::All => Misestimated::All,
            MisestimatedArg::Duration => Misestimated::Duration,
            MisestimatedArg::Memory => Misestimated::Memory,
            MisestimatedArg::Penalty => Misestimated::Penalty,
        }
    }
}

/// Arguments of `pliant elasticity`.
#[derive(Args)]
pub struct ElasticityArgs {
    /// Number of generated traces (seeds --seed, --seed + 1, ...).
    #[arg(long, default_value_t = 100)]
    traces: u64,
    /// First seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How jobs are drawn (Table 2's rows).
    #[arg(long, value_enum, default_value = "uniform")]
    spread: SpreadArg,
    /// The tasks' maximum penalty when under-sized (§6.1: 1.5 or 3).
    #[arg(long, default_value_t = 1.5)]
    penalty: f64,
    /// The penalty's shape (§6.1: the reducer model).
    #[arg(long, value_enum, default_value = "reducer")]
    model: ModelArg,
    /// Mis-estimation interval LO,HI: per job, true duration, ideal memory and
    /// penalty are each the estimate times 1 + a uniform draw from it (Fig. 7).
    #[arg(long, value_name = "LO,HI", allow_hyphen_values = true)]
    misestimate: Option<String>,
    /// Which values --misestimate puts off (Fig. 7a-c vary one at a time).
    #[arg(long, value_enum, default_value = "all", requires = "misestimate")]
    misestimated: MisestimatedArg,
    /// Write each trace's ratios as CSV here.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Write the CDF of the per-trace ratios (Fig. 6a and 6c) as SVG here.
    #[arg(long)]
    plot: Option<PathBuf>,
}

/// Average job completion time of a run, seconds.
fn avg_jct(run: &pliant_metrics::RunRecord) -> f64 {
    let jcts: Vec<f64> = run.jobs.iter().filter_map(|j| j.end.map(|e| (e - j.submit) as f64 / 1e6)).collect();
    jcts.iter().sum::<f64>() / jcts.len().max(1) as f64
}

/// The `q` quantile of sorted values (nearest rank).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

fn parse_interval(s: &str, of: Misestimated) -> Result<Misestimate, String> {
    let bad = || format!("--misestimate expects LO,HI with -1 < LO <= HI, got `{s}`");
    let (lo, hi) = s.split_once(',').ok_or_else(bad)?;
    let (lo, hi): (f64, f64) = (lo.trim().parse().map_err(|_| bad())?, hi.trim().parse().map_err(|_| bad())?);
    if lo <= -1.0 || lo > hi || !hi.is_finite() {
        return Err(bad());
    }
    Ok(Misestimate { lo, hi, of })
}

/// Runs `pliant elasticity`.
pub fn run(args: ElasticityArgs) -> Result<(), String> {
    if args.traces == 0 {
        return Err("--traces must be at least 1".into());
    }
    if !(args.penalty >= 1.0 && args.penalty.is_finite()) {
        return Err(format!("--penalty {} is below 1 (an under-sized task cannot run faster)", args.penalty));
    }
    let spread = match args.spread {
        SpreadArg::Uniform => Spread::Uniform,
        SpreadArg::Exponential => Spread::Exponential,
    };
    let misestimate = args.misestimate.as_deref().map(|s| parse_interval(s, args.misestimated.of())).transpose()?;
    let spec = TraceSpec { misestimate, model: args.model.model(), ..TraceSpec::table2(spread, args.penalty) };
    let params = Params::default();
    let policies: Vec<_> =
        ["yarn", "elastic", "meganode"].iter().map(|n| preset(n, &params).expect("built-in preset")).collect();
    let seeds: Vec<u64> = (args.seed..args.seed + args.traces).collect();
    let bar = pliant_run::progress::bar(args.traces, "{bar:40} {pos}/{len} traces {elapsed} (eta {eta})");
    let started = std::time::Instant::now();
    let opts = SimOptions::default();
    let results = parallel_map(seeds.clone(), |&seed| {
        let w = generate(&spec, seed);
        let avg: Result<Vec<f64>, String> = policies
            .iter()
            .map(|p| {
                simulate(&w, p.clone(), &opts).map(|r| avg_jct(&r)).map_err(|e| format!("seed {seed}, {}: {e}", p.name))
            })
            .collect();
        bar.inc(1);
        avg
    });
    bar.finish_and_clear();
    let wall = started.elapsed().as_secs_f64();
    let avgs = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let vs_yarn: Vec<f64> = avgs.iter().map(|a| a[1] / a[0]).collect();
    let vs_mega: Vec<f64> = avgs.iter().map(|a| a[1] / a[2]).collect();
    let show = |name: &str, v: &[f64]| {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        println!(
            "{name:<18} median {:.3}  p90 {:.3}  worst {:.3}  best {:.3}",
            quantile(&s, 0.5),
            quantile(&s, 0.9),
            s[s.len() - 1],
            s[0]
        );
    };
    let title = format!(
        "{} {:?} Table 2 traces, {:?} penalty {}x{}",
        args.traces,
        spread,
        spec.model,
        args.penalty,
        misestimate.map_or(String::new(), |m| {
            let of = match m.of {
                Misestimated::All => "",
                Misestimated::Duration => " of durations",
                Misestimated::Memory => " of ideal memory",
                Misestimated::Penalty => " of penalties",
            };
            format!(", mis-estimation [{}, {}]{of}", m.lo, m.hi)
        })
    );
    println!("{title}");
    println!("avg JCT ratio");
    show("elastic/yarn", &vs_yarn);
    show("elastic/meganode", &vs_mega);
    let beats = vs_mega.iter().filter(|&&r| r < 1.0).count();
    println!(
        "elastic beats meganode on {beats} of {} traces ({:.0} %)",
        args.traces,
        100.0 * beats as f64 / args.traces as f64
    );
    println!("{:.2} traces/s ({wall:.1} s wall)", args.traces as f64 / wall);
    if let Some(path) = &args.csv {
        let mut out = String::from(
            "seed,yarn_avg_jct_s,elastic_avg_jct_s,meganode_avg_jct_s,elastic_over_yarn,elastic_over_meganode\n",
        );
        for ((seed, a), (y, m)) in seeds.iter().zip(&avgs).zip(vs_yarn.iter().zip(&vs_mega)) {
            out.push_str(&format!("{seed},{:.3},{:.3},{:.3},{y:.5},{m:.5}\n", a[0], a[1], a[2]));
        }
        std::fs::write(path, out).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if let Some(path) = &args.plot {
        let series = [("elastic/yarn".to_string(), vs_yarn), ("elastic/meganode".to_string(), vs_mega)];
        plot_ratio_cdf(&title, &series, path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}
