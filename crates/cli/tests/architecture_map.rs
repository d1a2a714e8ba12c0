//! ARCHITECTURE.md is a map that stays true: every repository path it names
//! (entry points, the papers' files, the recipes for a new planner and a new
//! mechanism) exists, and the example policy is written against pliant's
//! public crates alone: its planner and its mechanism rule need no edit of
//! pliant.

use std::path::Path;

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// The top-level folders whose paths the document writes from the repository's root.
const ROOTS: [&str; 5] = ["crates/", "examples/", "docs/", "scripts/", "python/"];

/// Every `code span` of `text` that is a path from the repository's root
/// (a glob such as `checkpoint-*` or a `{a,b}` list is not a path).
fn paths(text: &str) -> Vec<&str> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| ROOTS.iter().any(|r| span.starts_with(r)))
        .filter(|span| !span.contains(|c: char| c.is_whitespace() || "*{}<>".contains(c)))
        .collect()
}

#[test]
fn every_path_the_architecture_names_exists() {
    let text = std::fs::read_to_string(Path::new(REPO).join("ARCHITECTURE.md")).unwrap();
    let named = paths(&text);
    assert!(named.len() >= 40, "the map names its files: {} found", named.len());
    for section in
        ["## Entry points", "## Papers → files", "## Adding a planner", "## Adding a mechanism", "## Invariants"]
    {
        assert!(text.contains(section), "ARCHITECTURE.md has no `{section}`");
    }
    let missing: Vec<_> = named.iter().filter(|p| !Path::new(REPO).join(p).exists()).collect();
    assert!(missing.is_empty(), "ARCHITECTURE.md names paths that do not exist: {missing:?}");
}

#[test]
fn the_recipes_name_the_files_they_touch() {
    let text = std::fs::read_to_string(Path::new(REPO).join("ARCHITECTURE.md")).unwrap();
    let recipe = &text[text.find("## Adding a mechanism").unwrap()..text.find("## Invariants").unwrap()];
    for file in ["crates/plugins/src/builtin.rs", "crates/sim/src/engine.rs", "crates/live/src/dispatch.rs"] {
        assert!(paths(recipe).contains(&file), "the mechanism recipe does not name {file}");
    }
    let planner = &text[text.find("## Adding a planner").unwrap()..text.find("## Adding a mechanism").unwrap()];
    assert!(planner.contains("`examples/custom-policy/`"), "the planner recipe points to the example");
}

#[test]
fn the_example_policy_depends_on_pliants_public_crates_only() {
    let manifest = std::fs::read_to_string(Path::new(REPO).join("examples/custom-policy/Cargo.toml")).unwrap();
    let deps = &manifest[manifest.find("[dependencies]").unwrap()..];
    let names: Vec<&str> = deps
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with('['))
        .filter_map(|l| l.split(['.', '=', ' ']).next().filter(|n| !n.is_empty()))
        .collect();
    assert!(names.contains(&"pliant-core"), "{names:?}");
    let public = [
        "pliant-cli",
        "pliant-core",
        "pliant-plugins",
        "pliant-sim",
        "pliant-workload",
        "pliant-metrics",
        "pliant-report",
    ];
    let other: Vec<_> = names.iter().filter(|n| !public.contains(n)).collect();
    assert!(other.is_empty(), "the example depends on more than pliant's public crates: {other:?}");
    // A path into pliant's sources would let it reach past the public API.
    assert!(!manifest.contains("path ="), "the example names pliant's crates by the workspace, not by path");
}

/// The names the plugins of `source` give themselves (`fn name`).
fn plugin_names(source: &str) -> Vec<&str> {
    source.split("fn name(&self) -> &'static str {").skip(1).filter_map(|rest| rest.split('"').nth(1)).collect()
}

/// Every Rust source and manifest under `dir`.
fn sources(dir: &Path, into: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs" || e == "toml") {
            into.push(path);
        }
    }
}

#[test]
fn the_examples_planner_and_mechanism_rule_are_named_nowhere_in_pliant() {
    let example = std::fs::read_to_string(Path::new(REPO).join("examples/custom-policy/src/lib.rs")).unwrap();
    for plugin in ["impl PlannerPlugin for", "impl MechanismPlugin for", "impl MechanismRule for"] {
        assert!(example.contains(plugin), "the example has no `{plugin}`");
    }
    let names = plugin_names(&example);
    assert_eq!(names.len(), 2, "a planner and a mechanism: {names:?}");
    let mut files = Vec::new();
    for dir in ["crates", "python/src"] {
        sources(&Path::new(REPO).join(dir), &mut files);
    }
    assert!(files.len() > 100, "{} sources", files.len());
    for name in names {
        let quoted = format!("\"{name}\"");
        let naming: Vec<_> =
            files.iter().filter(|f| std::fs::read_to_string(f).unwrap_or_default().contains(&quoted)).collect();
        assert!(naming.is_empty(), "pliant's sources name the example's `{name}`: {naming:?}");
    }
    let text = std::fs::read_to_string(Path::new(REPO).join("ARCHITECTURE.md")).unwrap();
    let recipe = &text[text.find("## Adding a mechanism").unwrap()..text.find("## Invariants").unwrap()];
    assert!(recipe.contains("`examples/custom-policy/`"), "the mechanism recipe points to the example");
}

#[test]
fn plugin_names_are_read_from_their_name_methods() {
    let source = "fn name(&self) -> &'static str {\n        \"a\"\n    }\n fn x() { \"b\" }\n fn name(&self) -> &'static str { \"c\" }";
    assert_eq!(plugin_names(source), ["a", "c"]);
}

#[test]
fn a_code_span_is_a_path_only_from_a_root_and_without_globs() {
    let text = "see `crates/sim/src/engine.rs`, `policy/cost.rs`, `checkpoint-*`, `crates/{a,b}` and `docs/`";
    assert_eq!(paths(text), vec!["crates/sim/src/engine.rs", "docs/"]);
}
