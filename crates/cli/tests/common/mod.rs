//! Helpers shared by the `pliant` end-to-end tests (each test binary uses some).
#![allow(dead_code, unused_imports)]

pub mod local;

pub use pliant_testbed::{clocked, live, slurm};

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the `pliant` binary with `args`.
pub fn pliant(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pliant")).args(args).output().expect("run pliant")
}

/// That the last line of `stderr` says it wrote `dir`, naming exactly the
/// files that are there.
pub fn says_what_it_wrote(stderr: &[u8], dir: &std::path::Path) {
    let stderr = String::from_utf8_lossy(stderr);
    let line = stderr.lines().last().unwrap_or_default();
    let (head, named) = line.split_once(": ").unwrap_or_default();
    assert_eq!(head, format!("wrote {}", dir.display()), "{stderr}");
    let mut named: Vec<&str> = named.split(", ").collect();
    let mut there: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    named.sort_unstable();
    there.sort();
    assert_eq!(named, there, "{line}");
}

/// `pliant ARGS`, which must succeed, as JSON.
pub fn json(args: &[&str]) -> Value {
    let out = pliant(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The result of `policy` in a `--format json` document.
pub fn result<'a>(doc: &'a Value, policy: &str) -> &'a Value {
    doc["results"].as_array().unwrap().iter().find(|r| r["policy"] == policy).unwrap()
}

/// A fresh, empty directory for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pliant-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `pliant` expecting exit code 2 without a panic; returns its stderr.
pub fn error_of(args: &[&str]) -> String {
    let out = pliant(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: stdout: {}", String::from_utf8_lossy(&out.stdout));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!err.contains("panicked"), "{err}");
    err
}
