//! The terminal sessions the README and `docs/` show (a ```text block whose
//! lines start with `$ `) are run as written and their output compared with
//! what the page shows, numbers included: a page cannot go on showing
//! figures the command no longer prints. A shown `…` stands for one word
//! that varies from run to run (a speed); spacing is not compared.
//!
//! A session runs here when every command in it is `cat FILE` (the lines
//! shown under it are the file, made in a scratch directory) or a `pliant`
//! command that needs no cluster. The others (a live cluster's `status`,
//! `logs`, `curl`) are counted and named at the end: the README's run in
//! `scripts/check-readme.sh`'s tour.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
const PLIANT: &str = env!("CARGO_BIN_EXE_pliant");

/// `pliant` commands that need no cluster, machine or root.
const OFFLINE: [&str; 6] = ["simulate", "sweep", "run", "trace", "policies", "generate"];

/// One command of a shown session and the lines shown under it.
struct Step {
    command: String,
    shown: Vec<String>,
}

/// A shown session: its page, the line its block starts on, its steps.
struct Session {
    page: String,
    line: usize,
    steps: Vec<Step>,
}

impl Session {
    fn runs_here(&self) -> bool {
        self.steps.iter().all(|s| {
            let mut words = s.command.split_whitespace();
            match (words.next(), words.next()) {
                (Some("cat"), Some(_)) => words.next().is_none(),
                (Some("pliant"), Some(sub)) => OFFLINE.contains(&sub),
                _ => false,
            }
        })
    }
}

/// The sessions of one page.
fn sessions(page: &Path) -> Vec<Session> {
    let text = std::fs::read_to_string(page).unwrap();
    let name = page.strip_prefix(REPO).unwrap_or(page).display().to_string();
    let mut found = Vec::new();
    let mut block: Option<Session> = None;
    for (i, line) in text.lines().enumerate() {
        match (&mut block, line) {
            (None, "```text") => block = Some(Session { page: name.clone(), line: i + 1, steps: Vec::new() }),
            (Some(_), "```") => found.extend(block.take().filter(|s| !s.steps.is_empty())),
            (Some(s), l) if l.starts_with("$ ") => {
                s.steps.push(Step { command: l[2..].to_string(), shown: Vec::new() })
            }
            (Some(s), l) => {
                if let Some(step) = s.steps.last_mut() {
                    step.shown.push(l.to_string());
                }
            }
            (None, _) => {}
        }
    }
    found
}

fn pages() -> Vec<PathBuf> {
    let mut pages = vec![Path::new(REPO).join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(Path::new(REPO).join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// Whether a printed line is the shown one: the same words, a shown `…`
/// standing for any one word.
fn same_line(shown: &str, printed: &str) -> bool {
    let (a, b): (Vec<&str>, Vec<&str>) = (shown.split_whitespace().collect(), printed.split_whitespace().collect());
    a.len() == b.len() && a.iter().zip(&b).all(|(s, p)| *s == "…" || s == p)
}

/// Runs `step` in `dir` (where `crates/` and `docs/` are the repository's)
/// and says where its output parts from the page, if it does.
fn differs(session: &Session, step: &Step, dir: &Path) -> Option<String> {
    let at = format!("{}:{}: `$ {}`", session.page, session.line, step.command);
    if let Some(file) = step.command.strip_prefix("cat ") {
        std::fs::write(dir.join(file), step.shown.join("\n") + "\n").unwrap();
        return None;
    }
    let command = format!("{PLIANT}{} 2>&1", &step.command["pliant".len()..]);
    // A results directory the page names outside the scratch one is removed
    // afterwards, unless it was there before.
    let words: Vec<&str> = step.command.split_whitespace().collect();
    let out_dir = words.windows(2).find(|w| w[0] == "--out").map(|w| dir.join(w[1]));
    let made = out_dir.filter(|d| !d.exists());
    let out = Command::new("sh").arg("-c").arg(&command).current_dir(dir).output().unwrap();
    if let Some(d) = made {
        let _ = std::fs::remove_dir_all(d);
    }
    let printed = String::from_utf8_lossy(&out.stdout);
    let printed: Vec<&str> = printed.lines().collect();
    if printed.len() != step.shown.len() {
        return Some(format!(
            "{at}: {} lines shown, {} printed:\n{}",
            step.shown.len(),
            printed.len(),
            printed.join("\n")
        ));
    }
    let (shown, printed) = step.shown.iter().zip(&printed).find(|(s, p)| !same_line(s, p))?;
    Some(format!("{at}: shown\n  {shown}\nprinted\n  {printed}"))
}

#[test]
fn every_shown_session_that_needs_no_cluster_prints_what_its_page_shows() {
    let all: Vec<Session> = pages().iter().flat_map(|p| sessions(p)).collect();
    let (run, elsewhere): (Vec<&Session>, Vec<&Session>) = all.iter().partition(|s| s.runs_here());
    let scratch = std::env::temp_dir().join(format!("pliant-docs-output-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    for top in ["crates", "docs"] {
        std::os::unix::fs::symlink(Path::new(REPO).join(top), scratch.join(top)).unwrap();
    }
    let mut wrong = Vec::new();
    for session in &run {
        let dir = scratch.join(format!("{}-{}", session.page.replace('/', "_"), session.line));
        std::fs::create_dir_all(&dir).unwrap();
        for top in ["crates", "docs"] {
            std::os::unix::fs::symlink(Path::new(REPO).join(top), dir.join(top)).unwrap();
        }
        wrong.extend(session.steps.iter().filter_map(|step| differs(session, step, &dir)));
    }
    std::fs::remove_dir_all(&scratch).unwrap();
    let named: Vec<String> = elsewhere.iter().map(|s| format!("{}:{}", s.page, s.line)).collect();
    // Straight to the stderr handle, past the harness's capture: the counts are seen in every run.
    let _ = writeln!(
        std::io::stderr(),
        "docs: {} shown session(s) run as written; {} shown but not run here (a live cluster's): {}",
        run.len(),
        elsewhere.len(),
        named.join(", ")
    );
    assert!(run.len() >= 2, "the pages show sessions that run here: {} found", run.len());
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

#[test]
fn a_shown_word_is_compared_as_printed_and_an_ellipsis_stands_for_one() {
    assert!(same_line("kill  |  57   0  35.8  …", "kill | 57 0 35.8 6.85e5"));
    assert!(!same_line("kill  |  57   0  43.8  …", "kill | 57 0 35.8 6.85e5"));
    assert!(!same_line("a b", "a b c"));
}
