//! `cargo run --release` here: the custom policy against `gp` and `pliant`
//! on the built-in `mixed` scenario, with each run's wall-clock time. `-- --jobs-csv FILE` also writes the
//! three runs' `jobs.csv` (as `pliant simulate --out` does) to FILE.

use pliant_core::model::JobClass;
use pliant_metrics::summarise;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let jobs_csv = match args.as_slice() {
        [] => None,
        [flag, file] if flag == "--jobs-csv" => Some(file.clone()),
        _ => {
            eprintln!("usage: custom-policy [--jobs-csv FILE]");
            std::process::exit(2);
        }
    };
    let runs = custom_policy::compare("mixed", 1);
    println!(
        "{:<15} {:>14} {:>14} {:>13} {:>9}  preemptions",
        "policy", "short JCT (s)", "long JCT (s)", "lost core-s", "run (ms)"
    );
    for run in &runs {
        let (short, long) = (summarise(&run.jobs, JobClass::Short), summarise(&run.jobs, JobClass::Long));
        let preemptions: Vec<String> = run.preemptions.iter().map(|(m, n)| format!("{m} {n}")).collect();
        println!(
            "{:<15} {:>14.1} {:>14.1} {:>13.0} {:>9.1}  {}",
            run.policy,
            short.jct.mean,
            long.jct.mean,
            run.lost_core_seconds,
            run.cost.wall_seconds * 1e3,
            preemptions.join(", ")
        );
    }
    if let Some(file) = jobs_csv {
        let out = std::fs::File::create(&file).unwrap_or_else(|e| panic!("{file}: cannot write: {e}"));
        pliant_report::write_jobs_csv(&runs, out).unwrap_or_else(|e| panic!("{file}: cannot write: {e}"));
    }
}
