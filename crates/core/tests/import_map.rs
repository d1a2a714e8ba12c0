//! Imports inside the core run one way (ARCHITECTURE.md, "Invariants"): no
//! two files of `crates/core/src` reach each other through paths, however
//! long the circle, and the shared books (`books/`) and the scheduler
//! (`scheduler/`) name no plugin — of `policy/` they use only the policy
//! itself (`policy/mod.rs`) and the traits of `policy/steps.rs`.
//!
//! No built-in plugin is in the core: no module of `crates/core/src` is
//! named after a folder or file of `crates/plugins/src` (a paper's plugin),
//! and the core's code names no `pliant_plugins` path. The plugin crate
//! reaches the core only through its public API: Cargo lets a crate see
//! another only through its `pub` items, so what is checked is that
//! `crates/plugins` depends on `pliant-core` as a plain dependency and its
//! sources pull in no file from outside their crate (`#[path]`, `include!`).
//!
//! A file's references are the `crate::`, `super::` and `self::` paths of
//! its code outside comments and its `#[cfg(test)]` module, and the paths
//! that start with one of its own child modules; each goes to the file of
//! the longest module it names. A child naming its parent module (where
//! the parent's shared types live) is not an import the rule counts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
const PLUGINS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../plugins");

/// Every `.rs` file under `dir`, with its source.
fn sources(dir: &Path) -> Vec<(std::path::PathBuf, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            let source = std::fs::read_to_string(&path).unwrap();
            found.push((path, source));
        }
    }
    found
}

/// Every module of the crate: its path of names (the root is empty) and its source.
fn modules() -> BTreeMap<Vec<String>, String> {
    let mut modules = BTreeMap::new();
    for (path, source) in sources(Path::new(SRC)) {
        let rel = path.strip_prefix(SRC).unwrap().with_extension("");
        let mut names: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
        if matches!(names.last().map(String::as_str), Some("mod" | "lib")) {
            names.pop();
        }
        modules.insert(names, source);
    }
    modules
}

/// The code of `source` without comments and without its test module.
fn code(source: &str) -> String {
    let source = source.split("#[cfg(test)]\nmod tests").next().unwrap();
    source
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .map(|line| line.split(" //").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `a::b::{c, d}` paths of `code`: each as its leading names, and the
/// first names inside a brace group that follows.
fn paths(code: &str) -> Vec<(Vec<&str>, Vec<&str>)> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        let starts = ident(bytes[i] as char) && (i == 0 || !ident(bytes[i - 1] as char));
        if !starts {
            i += 1;
            continue;
        }
        let mut names = Vec::new();
        let mut j = i;
        loop {
            let end = code[j..].find(|c: char| !ident(c)).map_or(code.len(), |k| j + k);
            names.push(&code[j..end]);
            j = end;
            if code[j..].starts_with("::") && code[j + 2..].starts_with(ident) {
                j += 2;
            } else {
                break;
            }
        }
        let mut group = Vec::new();
        if names.len() > 1 && code[j..].starts_with("::{") {
            let close = code[j..].find('}').map_or(code.len(), |k| j + k);
            group = code[j + 3..close].split(',').filter_map(|item| item.split("::").next()).map(str::trim).collect();
            j = close;
        }
        if names.len() > 1 {
            found.push((names, group));
        }
        i = j.max(i + 1);
    }
    found
}

/// The module a path written in module `from` names: the longest of its
/// prefixes that is a module; `None` for a path that leaves the crate.
fn resolve(from: &[String], names: &[&str], modules: &BTreeMap<Vec<String>, String>) -> Option<Vec<String>> {
    let mut base: Vec<String> = from.to_vec();
    let mut rest = names;
    match rest[0] {
        "crate" => {
            base.clear();
            rest = &rest[1..];
        }
        "self" => rest = &rest[1..],
        "super" => {
            while rest.first() == Some(&"super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        child => {
            let mut path = base.clone();
            path.push(child.to_string());
            if !modules.contains_key(&path) {
                return None;
            }
        }
    }
    let mut module = base;
    for name in rest {
        let mut longer = module.clone();
        longer.push(name.to_string());
        if !modules.contains_key(&longer) {
            break;
        }
        module = longer;
    }
    Some(module)
}

/// Each module's imports: the other modules its code names, but its ancestors.
fn imports() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let modules = modules();
    let mut edges = BTreeMap::new();
    for (module, source) in &modules {
        let mut to = BTreeSet::new();
        for (names, group) in paths(&code(source)) {
            let Some(target) = resolve(module, &names, &modules) else { continue };
            let mut named = Vec::new();
            for item in &group {
                let inner = [&target[..], &[item.to_string()]].concat();
                named.push(if modules.contains_key(&inner) { inner } else { target.clone() });
            }
            if group.is_empty() {
                named.push(target);
            }
            to.extend(named.into_iter().filter(|t| !module.starts_with(t)));
        }
        edges.insert(module.clone(), to);
    }
    edges
}

/// The circles of `edges`: its strongly connected parts of more than one
/// module (Tarjan's algorithm).
fn circles(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'a Vec<String>, (usize, usize)>,
        stack: Vec<&'a Vec<String>>,
        on_stack: BTreeSet<&'a Vec<String>>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a Vec<String>) {
            let n = self.index.len();
            self.index.insert(v, (n, n));
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.edges.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.index[w].1.min(self.index[v].1);
                    self.index.get_mut(v).unwrap().1 = low;
                } else if self.on_stack.contains(w) {
                    let low = self.index[w].0.min(self.index[v].1);
                    self.index.get_mut(v).unwrap().1 = low;
                }
            }
            if self.index[v].0 == self.index[v].1 {
                let mut part = Vec::new();
                loop {
                    let w = self.stack.pop().unwrap();
                    self.on_stack.remove(w);
                    part.push(w.join("/"));
                    if w == v {
                        break;
                    }
                }
                if part.len() > 1 {
                    part.sort();
                    self.found.push(part);
                }
            }
        }
    }
    let mut walk =
        Walk { edges, index: BTreeMap::new(), stack: Vec::new(), on_stack: BTreeSet::new(), found: Vec::new() };
    for v in edges.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found
}

#[test]
fn no_two_files_of_the_core_import_each_other() {
    let edges = imports();
    assert!(edges.len() > 30, "the walk finds the core's files: {}", edges.len());
    assert!(edges.values().map(BTreeSet::len).sum::<usize>() > 60, "and their imports: {edges:?}");
    assert_eq!(circles(&edges), Vec::<Vec<String>>::new(), "import circles in crates/core/src");
}

#[test]
fn the_books_and_the_scheduler_name_no_plugin() {
    let allowed = [vec!["policy".to_string()], vec!["policy".to_string(), "steps".to_string()]];
    let mut named = Vec::new();
    for (module, to) in imports() {
        if !matches!(module.first().map(String::as_str), Some("books" | "scheduler")) {
            continue;
        }
        for target in to {
            if target.first().is_some_and(|t| t == "policy") && !allowed.contains(&target) {
                named.push(format!("{} → {}", module.join("/"), target.join("/")));
            }
        }
    }
    assert!(named.is_empty(), "the books and the scheduler import plugins: {named:?}");
}

/// The names of the plugin crate's folders and files (its papers and their
/// plugins), but its root's.
fn plugin_names() -> BTreeSet<String> {
    let src = Path::new(PLUGINS).join("src");
    let mut names = BTreeSet::new();
    for (path, _) in sources(&src) {
        for part in path.strip_prefix(&src).unwrap().with_extension("").iter() {
            names.insert(part.to_string_lossy().into_owned());
        }
    }
    names.remove("mod");
    names.remove("lib");
    names
}

#[test]
fn no_plugin_is_in_the_core() {
    let plugins = plugin_names();
    assert!(
        plugins.is_superset(&["bigc", "checkpoint", "yarn_me", "ssr", "pliant", "capacity"].map(String::from).into())
    );
    let mut in_core = Vec::new();
    for (module, source) in modules() {
        if let Some(name) = module.iter().find(|name| plugins.contains(*name)) {
            in_core.push(format!("{} (named `{name}`)", module.join("/")));
        }
        if code(&source).contains("pliant_plugins") {
            in_core.push(format!("{} names pliant_plugins", module.join("/")));
        }
    }
    assert!(in_core.is_empty(), "plugins in crates/core/src: {in_core:?}");
}

#[test]
fn the_plugins_reach_the_core_only_as_a_dependency() {
    let manifest = std::fs::read_to_string(Path::new(PLUGINS).join("Cargo.toml")).unwrap();
    let dependencies = manifest.split("[dependencies]").nth(1).unwrap().split("\n[").next().unwrap();
    assert!(dependencies.lines().any(|l| l.trim() == "pliant-core.workspace = true"), "{dependencies}");
    let mut reaching = Vec::new();
    for (path, source) in sources(&Path::new(PLUGINS).join("src")) {
        if ["#[path", "include!(", "include_str!(", "include_bytes!("].iter().any(|m| source.contains(m)) {
            reaching.push(path.display().to_string());
        }
    }
    assert!(reaching.is_empty(), "plugin sources that pull in files: {reaching:?}");
}

#[test]
fn a_circle_is_found_however_long() {
    let m = |s: &str| vec![s.to_string()];
    let edges: BTreeMap<_, BTreeSet<_>> = [
        (m("a"), [m("b")].into()),
        (m("b"), [m("c")].into()),
        (m("c"), [m("a"), m("d")].into()),
        (m("d"), BTreeSet::new()),
    ]
    .into();
    assert_eq!(circles(&edges), vec![vec!["a".to_string(), "b".to_string(), "c".to_string()]]);
}
