//! The two live bodies stay apart: the manager (`pliant-manager`) and the
//! Slurm controller (`pliant-slurm`) each build on `pliant-live` and
//! neither depends on the other — not in its `Cargo.toml` (any dependency
//! table) nor by a path in its sources and tests — and `pliant slurm`'s
//! command (`crates/cli/src/slurm_cmd.rs`) borrows nothing of the manager.

use std::path::{Path, PathBuf};

const CRATES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// The packages `Cargo.toml` of crate folder `dir` depends on, in every
/// dependency table (normal, dev, build, and per target).
fn dependencies(dir: &str) -> Vec<String> {
    let text = std::fs::read_to_string(Path::new(CRATES).join(dir).join("Cargo.toml")).unwrap();
    let manifest: toml::Table = text.parse().unwrap();
    let tables = |t: &toml::Table| -> Vec<String> {
        ["dependencies", "dev-dependencies", "build-dependencies"]
            .iter()
            .filter_map(|k| t.get(*k)?.as_table())
            .flat_map(|deps| {
                deps.iter().map(|(name, spec)| spec.get("package").and_then(|p| p.as_str()).unwrap_or(name).to_string())
            })
            .collect()
    };
    let mut names = tables(&manifest);
    if let Some(targets) = manifest.get("target").and_then(|t| t.as_table()) {
        for target in targets.values().filter_map(|t| t.as_table()) {
            names.extend(tables(target));
        }
    }
    names
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut found = Vec::new();
    for path in entries.map(|e| e.unwrap().path()) {
        if path.is_dir() {
            found.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
    found
}

/// The files of crate folder `dir` (its sources and tests) that name `path`
/// (`pliant_manager`, say) as a path.
fn naming(dir: &str, path: &str) -> Vec<PathBuf> {
    let root = Path::new(CRATES).join(dir);
    let files = sources(&root.join("src")).into_iter().chain(sources(&root.join("tests")));
    files.filter(|f| names(&std::fs::read_to_string(f).unwrap(), path)).collect()
}

/// True when `source` names `path` as the first segment of a path (`use
/// pliant_manager::…`, `pliant_manager::x()`), in code or comment.
fn names(source: &str, path: &str) -> bool {
    source.match_indices(path).any(|(i, _)| {
        let before = source[..i].chars().next_back();
        let after = &source[i + path.len()..];
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_') && (after.starts_with("::") || after.starts_with(';'))
    })
}

#[test]
fn the_manager_and_the_slurm_controller_do_not_depend_on_each_other() {
    for (dir, other, other_path) in
        [("manager", "pliant-slurm", "pliant_slurm"), ("slurm", "pliant-manager", "pliant_manager")]
    {
        let deps = dependencies(dir);
        assert!(deps.iter().any(|d| d == "pliant-live"), "crates/{dir} builds on pliant-live: {deps:?}");
        assert!(!deps.iter().any(|d| d == other), "crates/{dir}/Cargo.toml depends on {other}: {deps:?}");
        let files = naming(dir, other_path);
        assert!(files.is_empty(), "crates/{dir} names {other_path}: {files:?}");
    }
}

#[test]
fn pliant_slurm_borrows_nothing_of_the_manager() {
    let command = std::fs::read_to_string(Path::new(CRATES).join("cli/src/slurm_cmd.rs")).unwrap();
    assert!(!names(&command, "pliant_manager"), "crates/cli/src/slurm_cmd.rs names pliant_manager");
    assert!(names(&command, "pliant_slurm"), "the check reads the command's paths");
}

#[test]
fn a_path_is_told_from_a_longer_name() {
    assert!(names("use pliant_manager::state_dir;", "pliant_manager"));
    assert!(names("extern crate pliant_manager;", "pliant_manager"));
    assert!(!names("use pliant_manager_extra::x;", "pliant_manager"));
    assert!(!names("use my_pliant_manager::x;", "pliant_manager"));
}
