//! Every command block of the README and `docs/` runs as written: a
//! ```sh block is run as a script (it must exit 0), a shown terminal session
//! (a block whose lines start with `$ `) step by step with its output
//! compared with what the page shows, numbers included — a page cannot go on
//! showing figures the command no longer prints. A shown `…` stands for one
//! word that varies from run to run (a speed); spacing is not compared. A
//! step must exit 2 when its shown output ends in an `error:` line (the
//! CLI's bad-input exit), else 0. `cat FILE` makes FILE of the lines shown
//! under it; `cd DIR` moves the session.
//!
//! Each page's blocks run in order in one scratch directory that holds the
//! repository's files (linked), with this build's `pliant` on the PATH. A
//! block runs here unless:
//! - its first line is `# illustrative: WHY` (the page says so where it is
//!   shown);
//! - it is in a README section only `scripts/check-readme.sh` runs (the
//!   install, the two commands, the Python install, and the operators' tour
//!   as root: `.ci/run` runs it), or each of its commands is one of those;
//! - it builds (`cargo`) or installs (`pip`, into a new virtual environment):
//!   then it runs only under `PLIANT_LIVE_TESTS=1`, as CI runs it.
//!
//! A block that needs root, a cluster or the network and none of these is an
//! error. The counts per page are printed at the end.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
const PLIANT: &str = env!("CARGO_BIN_EXE_pliant");

/// `pliant` commands that need no cluster, machine or root.
const OFFLINE: [&str; 9] =
    ["simulate", "sweep", "run", "trace", "policies", "generate", "scenarios", "numeric", "elasticity"];

/// Commands that need root, a cluster or the network.
const LIVE_COMMANDS: [&str; 6] = ["sudo", "curl", "sbatch", "scontrol", "srun", "wget"];

/// Commands that build or install: run only under `PLIANT_LIVE_TESTS=1`.
const SLOW_COMMANDS: [&str; 2] = ["cargo", "pip"];

/// README sections whose blocks `scripts/check-readme.sh` runs (installing,
/// and the default test run: this test among them) and this test does not.
const CHECK_README: [&str; 3] = ["Install", "Two commands", "From Python"];

/// The README section `scripts/check-readme.sh` runs as root under `PLIANT_LIVE_TESTS=1`.
const OPERATORS_TOUR: &str = "A 5-minute tour for operators";

/// The first line of a block a page shows without its being run.
const ILLUSTRATIVE: &str = "# illustrative:";

/// One command of a shown session and the lines shown under it.
struct Step {
    command: String,
    shown: Vec<String>,
}

/// What a command block holds.
enum Body {
    /// A script: its lines, run by bash.
    Script(String),
    /// A shown terminal session.
    Session(Vec<Step>),
}

/// A command block: its page, the line its fence is on, the `## ` section it is in, its body.
struct Block {
    page: String,
    line: usize,
    section: String,
    first: String,
    body: Body,
}

/// Where a block runs.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Fate {
    /// In this test, every time.
    Here,
    /// In this test under `PLIANT_LIVE_TESTS=1` (it builds or installs).
    Slow,
    /// In `scripts/check-readme.sh`, without root.
    CheckReadme,
    /// In `scripts/check-readme.sh`, as root, under `PLIANT_LIVE_TESTS=1`.
    CheckReadmeLive,
    /// Nowhere: the page says it is illustrative.
    Illustrative,
    /// Nowhere, though it needs a cluster: an error.
    Unrun,
}

impl Block {
    /// The block's commands: a script's lines that are not comments, a session's steps.
    fn commands(&self) -> Vec<&str> {
        match &self.body {
            Body::Script(s) => s.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect(),
            Body::Session(steps) => steps.iter().map(|s| s.command.as_str()).collect(),
        }
    }

    /// Whether a command of the block is `name` (a word of it, so
    /// `$sudo` and `--ca` do not count).
    fn runs(&self, names: &[&str]) -> bool {
        self.commands().iter().any(|c| c.split_whitespace().any(|w| names.contains(&w)))
    }

    fn needs_cluster(&self) -> bool {
        self.runs(&LIVE_COMMANDS)
            || self.commands().iter().any(|c| {
                let words: Vec<&str> = c.split_whitespace().collect();
                words.windows(2).any(|w| w[0] == "pliant" && !w[1].starts_with('-') && !OFFLINE.contains(&w[1]))
            })
    }

    /// Where the block runs, `by_script` being the commands `scripts/check-readme.sh` runs without root.
    fn fate(&self, by_script: &[String]) -> Fate {
        let bare = |c: &&str| c.split(" #").next().unwrap_or("").trim().to_string();
        if self.first.starts_with(ILLUSTRATIVE) {
            Fate::Illustrative
        } else if self.page == "README.md" && CHECK_README.contains(&self.section.as_str())
            || !self.commands().is_empty() && self.commands().iter().all(|c| by_script.contains(&bare(c)))
        {
            Fate::CheckReadme
        } else if self.page == "README.md" && self.section == OPERATORS_TOUR {
            Fate::CheckReadmeLive
        } else if self.needs_cluster() {
            Fate::Unrun
        } else if self.runs(&SLOW_COMMANDS) {
            Fate::Slow
        } else {
            Fate::Here
        }
    }
}

/// The command blocks of one page (```sh and ```bash blocks, and any block
/// with `$ ` lines), and the lines of its blocks that name no language.
fn blocks(page: &Path) -> (Vec<Block>, Vec<usize>) {
    let text = std::fs::read_to_string(page).unwrap();
    let name = page.strip_prefix(REPO).unwrap_or(page).display().to_string().trim_start_matches('/').to_string();
    let (mut found, mut bare) = (Vec::new(), Vec::new());
    let mut section = String::new();
    let mut open: Option<(usize, String, Vec<&str>)> = None;
    for (i, line) in text.lines().enumerate() {
        match &mut open {
            None if line.starts_with("```") => {
                let lang = line.trim_start_matches('`').trim().to_string();
                if lang.is_empty() {
                    bare.push(i + 1);
                }
                open = Some((i + 1, lang, Vec::new()));
            }
            None => {
                if let Some(heading) = line.strip_prefix("## ") {
                    section = heading.to_string();
                }
            }
            Some(_) if line == "```" => {
                let (at, lang, lines) = open.take().unwrap();
                let first = lines.first().map_or("", |l| l.trim()).to_string();
                let body = if lines.iter().any(|l| l.starts_with("$ ")) {
                    Body::Session(steps(&lines))
                } else if ["sh", "bash", "console", "shell"].contains(&lang.as_str()) {
                    Body::Script(lines.join("\n") + "\n")
                } else {
                    continue;
                };
                found.push(Block { page: name.clone(), line: at, section: section.clone(), first, body });
            }
            Some((_, _, lines)) => lines.push(line),
        }
    }
    (found, bare)
}

/// A session's steps: each `$ ` line and the lines under it.
fn steps(lines: &[&str]) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    for line in lines {
        match line.strip_prefix("$ ") {
            Some(command) => steps.push(Step { command: command.to_string(), shown: Vec::new() }),
            None => {
                if let Some(step) = steps.last_mut() {
                    step.shown.push(line.to_string());
                }
            }
        }
    }
    steps
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

/// A page's scratch directory: the repository's files linked into it (but
/// its build, history and workspace manifest), this build's `pliant` first
/// on the PATH, `cargo install` into the scratch directory. It is in the
/// repository's `target/`, so that `cargo` finds the repository's workspace
/// above it and builds into `target/` as from the repository.
struct Scratch {
    dir: PathBuf,
    path: String,
}

impl Scratch {
    fn new(page: &str) -> Scratch {
        let name = format!("docs-scratch-{}-{}", std::process::id(), page.replace('/', "_"));
        let dir = Path::new(REPO).join("target").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(REPO).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name();
            if !["target", ".git", "Cargo.toml", "Cargo.lock"].contains(&name.to_str().unwrap_or("")) {
                std::os::unix::fs::symlink(entry.path(), dir.join(&name)).unwrap();
            }
        }
        let bin = Path::new(PLIANT).parent().unwrap().display().to_string();
        let path = format!("{bin}:{}", std::env::var("PATH").unwrap_or_default());
        Scratch { dir, path }
    }

    /// `bash -c script` in `cwd`, its output (stdout and stderr, interleaved) and exit code.
    fn run(&self, cwd: &Path, script: &str) -> (String, Option<i32>) {
        let mut path = self.path.clone();
        if script.contains("pip ") {
            // A page's `pip` installs into a virtual environment of its own.
            let venv = self.dir.join(".venv");
            if !venv.exists() {
                let made = Command::new("python3").arg("-m").arg("venv").arg(&venv).status().unwrap();
                assert!(made.success(), "python3 -m venv {}", venv.display());
            }
            path = format!("{}/bin:{path}", venv.display());
        }
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!("set -euo pipefail\n{{\n{script}\n}} 2>&1"))
            .current_dir(cwd)
            .env("PATH", path)
            .env("CARGO_TARGET_DIR", Path::new(REPO).join("target"))
            .env("CARGO_INSTALL_ROOT", self.dir.join(".cargo-root"))
            .output()
            .unwrap();
        (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs a block in `scratch` and says where it parts from its page, if it
/// does. A results directory it names (`--out DIR`) outside the scratch
/// directory is removed afterwards, unless it was there before.
fn differs(block: &Block, scratch: &Scratch) -> Vec<String> {
    let made: Vec<PathBuf> = block
        .commands()
        .iter()
        .flat_map(|c| {
            c.split_whitespace()
                .collect::<Vec<_>>()
                .windows(2)
                .filter(|w| w[0] == "--out")
                .map(|w| PathBuf::from(w[1]))
                .collect::<Vec<_>>()
        })
        .filter(|d| d.is_absolute() && !d.exists())
        .collect();
    let wrong = block_differs(block, scratch);
    for dir in made {
        let _ = std::fs::remove_dir_all(dir);
    }
    wrong
}

/// Runs a block in `scratch` and says where it parts from its page.
fn block_differs(block: &Block, scratch: &Scratch) -> Vec<String> {
    let at = format!("{}:{}", block.page, block.line);
    match &block.body {
        Body::Script(script) => {
            let (printed, code) = scratch.run(&scratch.dir, script);
            if code == Some(0) {
                return Vec::new();
            }
            vec![format!("{at}: the block exits {code:?}, not 0:\n{printed}")]
        }
        Body::Session(steps) => {
            let mut cwd = scratch.dir.clone();
            let mut wrong = Vec::new();
            for step in steps {
                if let Some(dir) = step.command.strip_prefix("cd ") {
                    cwd = cwd.join(dir.trim());
                } else if let Some(file) = step.command.strip_prefix("cat ") {
                    std::fs::write(cwd.join(file.trim()), step.shown.join("\n") + "\n").unwrap();
                } else {
                    wrong.extend(step_differs(&at, step, scratch, &cwd));
                }
            }
            wrong
        }
    }
}

/// Runs one step of a session in `cwd` and says where it parts from the page.
fn step_differs(at: &str, step: &Step, scratch: &Scratch, cwd: &Path) -> Option<String> {
    let at = format!("{at}: `$ {}`", step.command);
    let (printed, code) = scratch.run(cwd, &step.command);
    let printed: Vec<&str> = printed.lines().collect();
    let exits = if step.shown.last().is_some_and(|l| l.starts_with("error:")) { 2 } else { 0 };
    if code != Some(exits) {
        return Some(format!("{at}: exits {code:?}, the page shows it exiting {exits}:\n{}", printed.join("\n")));
    }
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

/// A page's counts, as printed at the end.
fn counts(page: &str, fates: &[(Fate, bool)]) -> String {
    let n = |f: Fate, ran: bool| fates.iter().filter(|&&(g, r)| g == f && r == ran).count();
    let run = n(Fate::Here, true) + n(Fate::Slow, true);
    let mut line = format!("{page}: {run} run here");
    let by_script = n(Fate::CheckReadme, false);
    if by_script > 0 {
        line += &format!(", {by_script} run by scripts/check-readme.sh");
    }
    line += &format!(", {} illustrative", n(Fate::Illustrative, false));
    let live = n(Fate::Slow, false) + n(Fate::CheckReadmeLive, false);
    line += &format!(", {live} left to live runs");
    if live > 0 {
        let mut whose = Vec::new();
        if n(Fate::Slow, false) > 0 {
            whose.push(format!("{} building or installing: PLIANT_LIVE_TESTS=1", n(Fate::Slow, false)));
        }
        if n(Fate::CheckReadmeLive, false) > 0 {
            whose.push(format!("{} as root: scripts/check-readme.sh", n(Fate::CheckReadmeLive, false)));
        }
        line += &format!(" ({})", whose.join("; "));
    }
    line
}

#[test]
fn every_command_block_runs_as_written_and_prints_what_its_page_shows() {
    let live = pliant_xtest::live_requested();
    let mut slow_left = 0;
    let mut wrong = Vec::new();
    let mut report = Vec::new();
    let mut total: BTreeMap<&str, usize> = BTreeMap::new();
    let readme = blocks(&Path::new(REPO).join("README.md")).0;
    let by_script: Vec<String> = readme
        .iter()
        .filter(|b| CHECK_README.contains(&b.section.as_str()))
        .flat_map(|b| {
            b.commands().iter().map(|c| c.split(" #").next().unwrap_or("").trim().to_string()).collect::<Vec<_>>()
        })
        .collect();
    for page in pages() {
        let (blocks, bare) = blocks(&page);
        let name = page.strip_prefix(REPO).unwrap_or(&page).display().to_string().trim_start_matches('/').to_string();
        for line in bare {
            wrong.push(format!("{name}:{line}: a block without a language: name it (sh, text, toml…) so that a command is never missed"));
        }
        if blocks.is_empty() {
            continue;
        }
        let scratch = Scratch::new(&name);
        let mut fates = Vec::new();
        for block in &blocks {
            let fate = block.fate(&by_script);
            let ran = fate == Fate::Here || (fate == Fate::Slow && live);
            if ran {
                wrong.extend(differs(block, &scratch));
            }
            if fate == Fate::Unrun {
                wrong.push(format!(
                    "{}:{}: needs root, a cluster or the network, and nothing runs it: \
                     begin it with `{ILLUSTRATIVE} WHY` (and say so on the page) or run it in a test",
                    block.page, block.line
                ));
            }
            slow_left += usize::from(fate == Fate::Slow && !live);
            *total.entry(if ran { "run" } else { "not run" }).or_default() += 1;
            fates.push((fate, ran));
        }
        report.push(counts(&name, &fates));
    }
    // Straight to the stderr handle, past the harness's capture: the counts are seen in every run.
    let _ = writeln!(std::io::stderr(), "docs: the command blocks of each page\n  {}", report.join("\n  "));
    if slow_left > 0 {
        // Listed in the run's summary of what did not run (they run under PLIANT_LIVE_TESTS=1).
        pliant_xtest::live(&format!("docs: {slow_left} command block(s) that build or install (cargo, pip)"));
    }
    assert!(total.get("run").copied().unwrap_or(0) >= 8, "the pages have blocks that run here: {total:?}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

#[test]
fn a_shown_word_is_compared_as_printed_and_an_ellipsis_stands_for_one() {
    assert!(same_line("kill  |  57   0  35.8  …", "kill | 57 0 35.8 6.85e5"));
    assert!(!same_line("kill  |  57   0  43.8  …", "kill | 57 0 35.8 6.85e5"));
    assert!(!same_line("a b", "a b c"));
}

#[test]
fn a_block_that_needs_a_cluster_is_not_run_here_and_one_that_builds_only_in_live_runs() {
    let block = |page: &str, section: &str, script: &str| Block {
        page: page.into(),
        line: 1,
        section: section.into(),
        first: script.lines().next().unwrap_or("").into(),
        body: Body::Script(script.into()),
    };
    let by_script = ["cargo install --path x".to_string()];
    let fate = |page: &str, section: &str, script: &str| block(page, section, script).fate(&by_script);
    assert_eq!(fate("docs/x.md", "", "pliant simulate --scenario mixed\n"), Fate::Here);
    assert_eq!(fate("docs/x.md", "", "pliant submit -- sleep 1\n"), Fate::Unrun);
    assert_eq!(fate("docs/x.md", "", "sudo=$(id -u)\ncurl -s x\n"), Fate::Unrun);
    assert_eq!(fate("docs/x.md", "", "cd x && cargo run -- simulate\n"), Fate::Slow);
    assert_eq!(fate("docs/x.md", "", "# illustrative: a Slurm controller's\nsbatch x\n"), Fate::Illustrative);
    assert_eq!(fate("README.md", OPERATORS_TOUR, "pliant status\n"), Fate::CheckReadmeLive);
    assert_eq!(fate("README.md", "Install", "cargo install --path y\n"), Fate::CheckReadme);
    assert_eq!(fate("docs/x.md", "", "cargo install --path x   # as the README\n"), Fate::CheckReadme);
}
