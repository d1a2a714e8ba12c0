//! `pliant scenarios` and `pliant policies`: what is built in.

use pliant_core::model::STORAGE_KEYS;
use pliant_core::policy::{PARAM_KEYS, PRESETS};
use pliant_workload::scenarios::SCENARIOS;

/// Prints every scenario with a line about it.
pub fn scenarios() -> Result<(), String> {
    for s in SCENARIOS {
        println!("{:<12} {}", s.name, s.about);
        println!("{:<12} compared by default: {}", "", s.policies.join(", "));
    }
    Ok(())
}

/// Prints every preset and the `--set` keys with their defaults.
pub fn policies() -> Result<(), String> {
    println!("presets:");
    for p in PRESETS {
        println!("  {:<14} {}", p.name, p.about);
    }
    let defaults = serde_json::to_value(crate::settings::Settings::default()).map_err(|e| e.to_string())?;
    println!("\nparameters (--set KEY=VALUE, or KEY = VALUE lines in a --config file):");
    for (key, about) in PARAM_KEYS.iter().chain(STORAGE_KEYS).chain(pliant_sim::EXEC_KEYS) {
        println!("  {key:<20} = {:<6} {about}", defaults[key]);
    }
    Ok(())
}
