//! Tunable numbers from a config file and `--set KEY=VALUE`: the policy
//! parameters of the core and the simulator's execution model, under one flat
//! set of keys (listed by `pliant policies`). A config file holds one
//! `KEY = VALUE` per line; `#` starts a comment. `--set` wins over the file.

use clap::Args;
use pliant_core::policy::Params;
use pliant_sim::ExecModel;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The `--set` and `--config` flags.
#[derive(Debug, Args)]
pub struct SettingsArgs {
    /// Parameter override, KEY=VALUE (repeatable; keys in `pliant policies`).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// A file of `KEY = VALUE` lines (same keys as --set, which wins over it).
    #[arg(long)]
    config: Option<PathBuf>,
}

impl SettingsArgs {
    /// Defaults, then the config file, then each `--set`.
    pub fn load(&self) -> Result<Settings, String> {
        Settings::load(self.config.as_deref(), &self.set)
    }
}

/// Every setting in force, echoed in the JSON output under `params`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Settings {
    /// Policy parameters.
    #[serde(flatten)]
    pub params: Params,
    /// Execution-model parameters.
    #[serde(flatten)]
    pub exec: ExecModel,
}

impl Settings {
    /// Sets one key, whichever part it belongs to.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        match self.params.set(key, value) {
            Err(pliant_core::policy::ParamError::UnknownKey(_)) => match self.exec.set(key, value) {
                Some(result) => result,
                None => Err(format!("unknown parameter `{key}` (see `pliant policies` for the list)")),
            },
            other => {
                // The storage keys are both the core's estimates and the
                // simulator's truth: one key sets both.
                self.exec.storage = self.params.storage;
                other.map_err(|e| e.to_string())
            }
        }
    }

    /// Defaults, then the config file's lines, then each `KEY=VALUE`.
    pub fn load(config: Option<&Path>, overrides: &[String]) -> Result<Settings, String> {
        let mut s = Settings::default();
        if let Some(path) = config {
            let text = std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
            for (i, line) in text.lines().enumerate() {
                let line = line.split('#').next().unwrap_or("").trim();
                if line.is_empty() {
                    continue;
                }
                let at = |e: String| format!("{}:{}: {e}", path.display(), i + 1);
                let (k, v) = line.split_once('=').ok_or_else(|| at(format!("expected KEY = VALUE, got `{line}`")))?;
                s.set(k.trim(), v.trim()).map_err(at)?;
            }
        }
        for kv in overrides {
            let (k, v) = kv.split_once('=').ok_or_else(|| format!("--set expects KEY=VALUE, got `{kv}`"))?;
            s.set(k.trim(), v.trim())?;
        }
        Ok(s)
    }
}
