//! The minimum Rust the README states is the one the locked dependencies
//! need, and every package of the workspace declares it, so that an older
//! cargo refuses in one line naming the version instead of failing deep in a
//! dependency's build.

use serde_json::Value;
use std::cmp::Ordering;
use std::path::Path;
use std::process::Command;

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// A `major.minor[.patch]` version as numbers, for comparison.
fn numbers(version: &str) -> Vec<u64> {
    let mut parts: Vec<u64> = version.split('.').map(|p| p.parse().expect("a numeric rust-version")).collect();
    parts.resize(3, 0);
    parts
}

fn metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked"])
        .current_dir(REPO)
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn every_package_declares_the_rust_its_locked_dependencies_need() {
    let meta = metadata();
    let members: Vec<&str> =
        meta["workspace_members"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    let packages = meta["packages"].as_array().unwrap();
    let (dependencies, ours): (Vec<&Value>, Vec<&Value>) =
        packages.iter().partition(|p| !members.contains(&p["id"].as_str().unwrap()));
    let (needed, by) = dependencies
        .iter()
        .filter_map(|p| p["rust_version"].as_str().map(|v| (numbers(v), p["name"].as_str().unwrap())))
        .max_by(|a, b| a.0.cmp(&b.0))
        .expect("some dependency states its rust-version");
    assert!(ours.len() >= 10, "the workspace's packages: {}", ours.len());
    for package in ours {
        let name = package["name"].as_str().unwrap();
        let declared = package["rust_version"].as_str().unwrap_or_else(|| {
            panic!("{name} declares no rust-version: add `rust-version.workspace = true` to its Cargo.toml")
        });
        assert_eq!(
            numbers(declared).cmp(&needed),
            Ordering::Equal,
            "{name} declares rust {declared}; the locked dependencies need {needed:?} ({by})"
        );
    }
    let stated = format!("Rust {}.{} or newer", needed[0], needed[1]);
    for page in ["README.md", "docs/python.md"] {
        let text = std::fs::read_to_string(Path::new(REPO).join(page)).unwrap();
        assert!(text.contains(&stated), "{page} does not say \"{stated}\"");
    }
}
