//! A policy as a command line names it — a preset, a composition
//! `NAME=FROM[,STEP=VALUE]...`, or `FILE#NAME` (a `[policies.NAME]` of an
//! experiment file) — resolved into a [`Profile`] through a registry, before
//! anything runs or is written.

use pliant_core::policy::{Profile, Registry};
use std::path::Path;

/// The profile `spec`, given with `flag`, names: `FILE#NAME`, a composition
/// (it has a `=`), or a preset. The error says where the fault is
/// (FILE:LINE, the flag) and what exists.
pub fn resolve(flag: &str, spec: &str, registry: &Registry) -> Result<Profile, String> {
    let spec = spec.trim();
    if let Some((file, name)) = spec.rsplit_once('#') {
        return crate::experiment::policy(Path::new(file), name, registry);
    }
    if spec.contains('=') {
        return composition(flag, spec, registry);
    }
    registry.preset(spec).map_err(|e| format!("{flag} {spec}: {e}"))
}

/// One composition `NAME=FROM[,STEP=VALUE]...`, given with `flag`.
pub fn composition(flag: &str, spec: &str, registry: &Registry) -> Result<Profile, String> {
    let bad = |reason: String| format!("{flag} {spec}: {reason}");
    let (name, rest) = spec.split_once('=').ok_or_else(|| bad("expected NAME=FROM[,STEP=VALUE]...".into()))?;
    let mut parts = rest.split(',');
    let from = parts.next().unwrap_or_default().trim();
    let steps = parts
        .map(|p| {
            p.split_once('=').map(|(k, v)| (k.trim(), v.trim())).ok_or_else(|| bad(format!("`{p}` is not STEP=VALUE")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    registry.compose(name.trim(), from, &steps).map_err(|e| bad(e.reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_is_a_preset_a_composition_or_a_file_entry() {
        let registry = pliant_plugins::registry();
        assert_eq!(resolve("--policy", "gp", &registry).unwrap(), registry.preset("gp").unwrap());
        let composed = resolve("--policy", "gp-kill=gp,mechanism=kill", &registry).unwrap();
        assert_eq!(composed.name, "gp-kill");
        assert_eq!(composed.preemption.unwrap().mechanism, "kill");
        let err = resolve("--policy", "gp-kill", &registry).unwrap_err();
        assert!(err.starts_with("--policy gp-kill: unknown policy `gp-kill`"), "{err}");
        let err = resolve("--policy", "x=gp,mechanism=shrink", &registry).unwrap_err();
        assert!(err.starts_with("--policy x=gp,mechanism=shrink: mechanism takes kill,"), "{err}");

        let dir = std::env::temp_dir().join(format!("pliant-spec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("e.toml");
        std::fs::write(
            &file,
            "[workload]\nscenario = \"mixed\"\n\n[policies.gp]\n\n[policies.mine]\nfrom = \"ip\"\nmechanism = \"graceful\"\n\n[policies.bad]\nfrom = \"ip\"\nmechanism = \"shrink\"\n",
        )
        .unwrap();
        let spec = |name: &str| format!("{}#{name}", file.display());
        let mine = resolve("--policy", &spec("mine"), &registry).unwrap();
        assert_eq!(mine, registry.compose("mine", "ip", &[("mechanism", "graceful")]).unwrap());
        assert_eq!(resolve("--policy", &spec("gp"), &registry).unwrap(), registry.preset("gp").unwrap());
        let err = resolve("--policy", &spec("bad"), &registry).unwrap_err();
        assert_eq!(err, format!("{}:12: mechanism takes {}, got `shrink`", file.display(), MECHANISMS));
        let err = resolve("--policy", &spec("other"), &registry).unwrap_err();
        assert_eq!(err, format!("{}: no [policies.other] here (it has: gp, mine, bad)", file.display()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    const MECHANISMS: &str = "kill, immediate, graceful, suspend, cheapest, checkpoint-hdd, checkpoint-ssd, \
        checkpoint-nvm, adaptive-hdd, adaptive-ssd, adaptive-nvm";
}
