//! Tunable numbers from a config file and `--set KEY=VALUE`: the policy
//! parameters of the core and the simulator's execution model, under one flat
//! set of keys (listed by `pliant policies`). A config file holds one
//! `KEY = VALUE` per line; `#` starts a comment. `--set` wins over the file.

use clap::Args;
use pliant_core::parameter::{ParamError, ParamInfo};
use pliant_core::policy::Params;
use pliant_sim::ExecModel;
use serde::Serialize;
use std::collections::BTreeMap;
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
    /// Where each key not at its default was set: `--config FILE` or `--set`.
    #[serde(skip)]
    sources: BTreeMap<String, String>,
}

impl Settings {
    /// Every key, the policies' then the execution model's, with its default
    /// as the docs write it and its meaning.
    pub fn keys() -> Vec<ParamInfo> {
        let mut keys = Params::keys();
        keys.extend(ExecModel::keys());
        keys
    }

    /// Sets one key, whichever part it belongs to.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let result = self
            .params
            .set_key(key, value)
            .or_else(|| self.exec.set_key(key, value))
            .unwrap_or_else(|| Err(ParamError::UnknownKey(key.into())));
        // The storage keys are both the core's estimates and the simulator's
        // truth: one key sets both.
        self.exec.storage = self.params.storage;
        result.map_err(|e| e.to_string())
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
                s.sources.insert(k.trim().into(), format!("--config {}", path.display()));
            }
        }
        for kv in overrides {
            let (k, v) = kv.split_once('=').ok_or_else(|| format!("--set expects KEY=VALUE, got `{kv}`"))?;
            s.set(k.trim(), v.trim())?;
            s.sources.insert(k.trim().into(), "--set".into());
        }
        Ok(s)
    }

    /// Where `key` was set: `--config FILE`, `--set`, or `default`.
    pub fn source(&self, key: &str) -> &str {
        self.sources.get(key).map_or("default", String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::parameter::markdown_table;

    /// The table of docs/parameters.md between its markers.
    fn documented() -> String {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/parameters.md");
        let text = std::fs::read_to_string(path).expect("docs/parameters.md");
        let start = text.find("<!-- parameters: the list below").expect("start marker");
        let end = text.find("<!-- parameters: end -->").expect("end marker");
        text[start..end].lines().skip(1).map(|l| format!("{l}\n")).collect()
    }

    #[test]
    fn the_docs_list_every_key_as_declared() {
        assert_eq!(documented(), markdown_table(&Settings::keys()), "regenerate docs/parameters.md's table");
    }

    #[test]
    fn keys_set_their_fields_and_refuse_bad_values() {
        let mut s = Settings::default();
        s.set("hdd_mb_s", "50").unwrap();
        assert_eq!((s.params.storage.hdd_mb_s, s.exec.storage.hdd_mb_s), (50.0, 50.0));
        s.set("spark_model", "lockstep").unwrap();
        assert_eq!(s.exec.spark_model, pliant_sim::SparkModel::Lockstep);
        s.set("gradual_resumption", "0").unwrap();
        assert!(!s.params.gradual_resumption);
        let err = s.set("short_share", "1.5").unwrap_err();
        assert_eq!(err, "bad value `1.5` for `short_share`: expected a number between 0 and 1");
        assert!(s.set("nope", "1").unwrap_err().starts_with("unknown parameter `nope`"));
        let shown: Vec<(&str, String)> = Settings::keys().into_iter().map(|k| (k.key, k.default)).collect();
        assert!(shown.contains(&("gradual_resumption", "1".into())));
        assert!(shown.contains(&("monitor_interval_s", "3".into())));
        assert!(shown.contains(&("hdd_mb_s", "5 GB in 169.18 s (30.26)".into())));
    }

    #[test]
    fn each_key_says_where_it_was_set() {
        let file = std::env::temp_dir().join(format!("pliant-settings-{}.conf", std::process::id()));
        std::fs::write(&file, "reclaim_s_per_gb = 7.5\nrestore_s_per_gb = 2\n").unwrap();
        let s = Settings::load(Some(&file), &["restore_s_per_gb=4".into()]).unwrap();
        std::fs::remove_file(&file).unwrap();
        assert_eq!((s.exec.reclaim_s_per_gb, s.exec.restore_s_per_gb), (7.5, 4.0));
        assert_eq!(s.source("reclaim_s_per_gb"), format!("--config {}", file.display()));
        assert_eq!((s.source("restore_s_per_gb"), s.source("node_disk_mb_s")), ("--set", "default"));
    }
}
