//! `pliant scenarios` and `pliant policies`: what is built in.

use pliant_core::policy::profile::POINTS;
use pliant_core::policy::Registry;
use pliant_plugins::PRESETS;
use pliant_workload::scenarios::SCENARIOS;

/// Prints every scenario with a line about it.
pub fn scenarios() -> Result<(), String> {
    let width = SCENARIOS.iter().map(|s| s.name.len()).max().unwrap_or(0);
    for s in SCENARIOS {
        println!("{:<width$}  {}", s.name, s.about);
        println!("{:<width$}  compared by default: {}", "", s.policies.join(", "));
    }
    Ok(())
}

/// Prints every preset, the plugins of every point `registry` has, and the
/// `--set` keys with their defaults; with `markdown`, only the keys, as the
/// table of docs/parameters.md.
pub fn policies(markdown: bool, registry: &Registry) -> Result<(), String> {
    if markdown {
        print!("{}", pliant_core::parameter::markdown_table(&pliant_run::Settings::keys()));
        return Ok(());
    }
    println!("presets:");
    for p in PRESETS {
        println!("  {:<14} {}", p.name, p.about);
    }
    for name in registry.policy_names().into_iter().skip(PRESETS.len()) {
        println!("  {name:<14} registered by this binary");
    }
    println!("\nsteps (--compose NAME=FROM[,STEP=VALUE]..., --policy NAME=FROM[,STEP=VALUE]..., or [policies.NAME] in an experiment file):");
    for (step, builtin) in POINTS {
        println!("  {step}");
        for plugin in registry.plugins(step) {
            let about =
                builtin.iter().find(|(name, _)| *name == plugin).map_or("registered by this binary", |(_, a)| a);
            println!("    {plugin:<24} {about}");
        }
    }
    println!("\nparameters (--set KEY=VALUE, or KEY = VALUE lines in a --config file):");
    let keys = pliant_run::Settings::keys();
    let (key_width, default_width) = keys.iter().fold((0, 0), |(k, d), p| (k.max(p.key.len()), d.max(p.default.len())));
    for p in keys {
        println!("  {:<key_width$} = {:<default_width$}  {}", p.key, p.default, p.about);
    }
    Ok(())
}
