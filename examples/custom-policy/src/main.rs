//! `cargo run --release` here: the custom policy against `gp` and `pliant`
//! on the built-in `mixed` scenario.

use pliant_core::model::JobClass;
use pliant_metrics::summarise;

fn main() {
    println!("{:<15} {:>14} {:>14} {:>13}  preemptions", "policy", "short JCT (s)", "long JCT (s)", "lost core-s");
    for run in custom_policy::compare("mixed", 1) {
        let (short, long) = (summarise(&run.jobs, JobClass::Short), summarise(&run.jobs, JobClass::Long));
        let preemptions: Vec<String> = run.preemptions.iter().map(|(m, n)| format!("{m} {n}")).collect();
        println!(
            "{:<15} {:>14.1} {:>14.1} {:>13.0}  {}",
            run.policy,
            short.jct.mean,
            long.jct.mean,
            run.lost_core_seconds,
            preemptions.join(", ")
        );
    }
}
