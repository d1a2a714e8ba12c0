//! Which tests a default `cargo test --workspace --release` runs, and an
//! honest account of those it does not.
//!
//! Tests that need root, cgroups, swap, Chromium, a Slurm cluster or another
//! program of the machine run only when asked: `PLIANT_LIVE_TESTS=1` (which
//! CI sets). Asked for, a test that cannot run fails instead of skipping.
//! Tests of public data outside the repository run when the data is there,
//! and must under `PLIANT_REQUIRE_SHARED=1`.
//!
//! Every test that does not run says so on stderr and is recorded; the last
//! test of the workspace run (`tests/not_run.rs`, in this package, whose name
//! sorts last so cargo runs it last) lists them, since cargo's own summary
//! counts them as passed.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The variable that asks for the live tests, and makes any test that
/// cannot run fail.
pub const LIVE: &str = "PLIANT_LIVE_TESTS";
/// The variable that makes tests of data outside the repository fail when
/// the data is not there.
pub const REQUIRE_SHARED: &str = "PLIANT_REQUIRE_SHARED";

/// Why a test did not run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Why {
    /// A live test, not asked for.
    NotAsked,
    /// Public data outside the repository is not there.
    NoData,
    /// A program or capability of this machine is missing.
    Missing,
    /// The test does not apply to this machine (e.g. the other cgroup version).
    NotApplicable,
}

impl Why {
    fn code(self) -> &'static str {
        match self {
            Why::NotAsked => "live",
            Why::NoData => "data",
            Why::Missing => "missing",
            Why::NotApplicable => "n/a",
        }
    }

    fn from_code(code: &str) -> Option<Why> {
        [Why::NotAsked, Why::NoData, Why::Missing, Why::NotApplicable].into_iter().find(|w| w.code() == code)
    }
}

/// Whether the live tests were asked for (`PLIANT_LIVE_TESTS=1`).
pub fn live_requested() -> bool {
    std::env::var(LIVE).as_deref() == Ok("1")
}

/// For a live test `what`: `true` when asked for; otherwise it is recorded
/// as not run and this returns `false` (the caller returns at once, before
/// touching cgroups, swap or processes).
pub fn live(what: &str) -> bool {
    if live_requested() {
        heartbeat();
        return true;
    }
    record(Why::NotAsked, &format!("{what}: a live test (root, cgroups, swap, Chromium or Slurm)"));
    false
}

/// Says on stderr every 30 s, from the first call on, that this test binary
/// is still running, so that no long test is silent for a minute (cargo
/// itself says only "has been running for over 60 seconds").
pub fn heartbeat() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let binary = binary_name();
        let start = std::time::Instant::now();
        std::thread::spawn(move || loop {
            std::thread::sleep(std::time::Duration::from_secs(30));
            let _ = writeln!(std::io::stderr(), "... {binary}: still running, {} s", start.elapsed().as_secs());
        });
    });
}

/// A test that cannot run on this machine for `reason`: fails under
/// `PLIANT_LIVE_TESTS=1`, is recorded as not run otherwise.
pub fn cannot_run(reason: &str) {
    if live_requested() {
        panic!("test cannot run and {LIVE}=1: {reason}");
    }
    record(Why::Missing, reason);
}

/// A test of public data outside the repository that is not there: fails
/// under `PLIANT_REQUIRE_SHARED=1`, is recorded as not run otherwise.
pub fn without_data(reason: &str) {
    if std::env::var(REQUIRE_SHARED).as_deref() == Ok("1") {
        panic!("test cannot run and {REQUIRE_SHARED}=1: {reason}");
    }
    record(Why::NoData, reason);
}

/// A test that does not apply to this machine: recorded, never fails.
pub fn not_applicable(reason: &str) {
    record(Why::NotApplicable, reason);
}

/// One test that did not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotRun {
    /// Why.
    pub why: Why,
    /// Its package, e.g. `pliant-live`.
    pub package: String,
    /// Its test binary, e.g. `live` (`tests/live.rs`).
    pub binary: String,
    /// The test's name.
    pub test: String,
    /// What it said.
    pub reason: String,
}

/// Says on stderr (past the harness's capture) that this test does not run,
/// and records it for the summary.
fn record(why: Why, reason: &str) {
    let _ = writeln!(std::io::stderr(), "NOT RUN: {reason}");
    let entry = NotRun {
        why,
        package: std::env::var("CARGO_PKG_NAME").unwrap_or_default(),
        binary: binary_name(),
        test: std::thread::current().name().unwrap_or("?").to_string(),
        reason: reason.replace(['\t', '\n'], " "),
    };
    if let Some(log) = log_path() {
        append(&log, parent_pid(), &entry);
    }
}

/// The record file: beside the test binaries of this profile
/// (`target/release/not-run-tests.txt`).
pub fn log_path() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.parent()?.join("not-run-tests.txt"))
}

/// The process that ran this test: `cargo test`, for every binary of one run.
pub fn parent_pid() -> u32 {
    std::os::unix::process::parent_id()
}

/// The test binary's name without cargo's hash.
fn binary_name() -> String {
    let exe = std::env::current_exe().ok();
    let stem = exe.as_deref().and_then(Path::file_stem).and_then(|s| s.to_str()).unwrap_or("?");
    stem.rsplit_once('-').map_or(stem, |(name, _hash)| name).to_string()
}

/// Appends `entry` of the run `run` to `log`.
pub fn append(log: &Path, run: u32, e: &NotRun) {
    let line = format!("{run}\t{}\t{}\t{}\t{}\t{}\n", e.why.code(), e.package, e.binary, e.test, e.reason);
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(log) {
        let _ = f.write_all(line.as_bytes());
    }
}

/// Takes the entries of the run `run` out of `log`, sorted; the entries of
/// runs whose process is gone are dropped with them, those of runs still
/// going are kept.
pub fn take(log: &Path, run: u32) -> Vec<NotRun> {
    let Ok(text) = std::fs::read_to_string(log) else { return Vec::new() };
    let mut mine = Vec::new();
    let mut others = String::new();
    for line in text.lines() {
        let f: Vec<&str> = line.splitn(6, '\t').collect();
        let (Some(pid), Some(why)) =
            (f.first().and_then(|p| p.parse::<u32>().ok()), f.get(1).and_then(|c| Why::from_code(c)))
        else {
            continue;
        };
        if f.len() != 6 {
            continue;
        }
        if pid == run {
            let s = |i: usize| f[i].to_string();
            mine.push(NotRun { why, package: s(2), binary: s(3), test: s(4), reason: s(5) });
        } else if Path::new(&format!("/proc/{pid}")).exists() {
            others.push_str(line);
            others.push('\n');
        }
    }
    let _ = if others.is_empty() { std::fs::remove_file(log) } else { std::fs::write(log, others) };
    mine.sort_by(|a, b| (a.why, &a.package, &a.binary, &a.test).cmp(&(b.why, &b.package, &b.binary, &b.test)));
    mine
}

/// The summary of `entries` for the end of a run: what did not run, grouped
/// by why, and how to run it.
pub fn summary(entries: &[NotRun]) -> String {
    let mut s = String::new();
    if entries.is_empty() {
        s.push_str("Every test of this run ran.\n");
        return s;
    }
    let n = entries.len();
    s.push_str(&format!(
        "{n} test{} of this run did not run (cargo's counts above include them as passed):\n",
        if n == 1 { "" } else { "s" }
    ));
    let asked: Vec<&NotRun> = entries.iter().filter(|e| e.why == Why::NotAsked).collect();
    if !asked.is_empty() {
        s.push_str(&format!(
            "  {} live tests (root, cgroups, swap, Chromium, a Slurm cluster), not asked for:\n",
            asked.len()
        ));
        let mut binaries: Vec<(&str, &str, usize)> = Vec::new();
        for e in &asked {
            match binaries.last_mut() {
                Some((p, b, count)) if *p == e.package && *b == e.binary => *count += 1,
                _ => binaries.push((&e.package, &e.binary, 1)),
            }
        }
        for (package, binary, count) in binaries {
            s.push_str(&format!("    {count:>2}  cargo test --release -p {package} --test {binary}\n"));
        }
        s.push_str(&format!("  Run them all, as root: {LIVE}=1 cargo test --workspace --release\n"));
        s.push_str("  (or one line above with the variable); asked for, a test that cannot run fails.\n");
    }
    let mut rest: Vec<&NotRun> = entries.iter().filter(|e| e.why != Why::NotAsked).collect();
    rest.sort_by(|a, b| {
        (a.why, &a.reason, &a.package, &a.binary, &a.test).cmp(&(b.why, &b.reason, &b.package, &b.binary, &b.test))
    });
    let mut said: Option<(Why, &str)> = None;
    for e in rest {
        if said != Some((e.why, &e.reason)) {
            let why = match e.why {
                Why::NoData => "data not here",
                Why::Missing => "cannot run here",
                _ => "does not apply here",
            };
            s.push_str(&format!("  {why}: {}\n", e.reason));
            said = Some((e.why, &e.reason));
        }
        s.push_str(&format!("        cargo test --release -p {} --test {} {}\n", e.package, e.binary, e.test));
    }
    s
}

/// What the tests of the public Google trace part need, for their reason
/// when it is not there.
pub const GOOGLE_PART: &str = "the public Google 2011 trace's first part (its task_events and job_events \
     part 00000; docs/traces.md says how to fetch them) is not in ../shared/traces/google2011/ beside the \
     repository; the repository's ten-minute sample of it is tested instead";

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(why: Why, binary: &str, test: &str) -> NotRun {
        NotRun {
            why,
            package: "pliant".into(),
            binary: binary.into(),
            test: test.into(),
            reason: format!("{binary}: why"),
        }
    }

    #[test]
    fn a_run_takes_its_own_entries_and_keeps_those_of_a_run_still_going() {
        let dir = std::env::temp_dir().join(format!("pliant-xtest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("not-run-tests.txt");
        let me = std::process::id();
        // pid 1 is always there (another run still going); u32::MAX never is (a run that ended).
        append(&log, 1, &entry(Why::Missing, "b", "other"));
        append(&log, me, &entry(Why::NoData, "trace", "shared"));
        append(&log, u32::MAX, &entry(Why::Missing, "c", "gone"));
        append(&log, me, &entry(Why::NotAsked, "live", "t1"));
        let mine = take(&log, me);
        assert_eq!(mine, vec![entry(Why::NotAsked, "live", "t1"), entry(Why::NoData, "trace", "shared")]);
        let rest = std::fs::read_to_string(&log).unwrap();
        assert!(rest.starts_with("1\tmissing\tpliant\tb\tother\t") && rest.lines().count() == 1, "{rest}");
        assert_eq!(take(&log, 1).len(), 1);
        assert!(!log.exists(), "an emptied log is removed");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_summary_counts_live_tests_per_binary_and_names_the_rest() {
        let entries = [
            entry(Why::NotAsked, "live_cluster", "a"),
            entry(Why::NotAsked, "live_cluster", "b"),
            entry(Why::NotAsked, "twin", "c"),
            entry(Why::NoData, "trace", "shared"),
        ];
        let s = summary(&entries);
        assert!(s.starts_with("4 tests of this run did not run"), "{s}");
        assert!(s.contains("     2  cargo test --release -p pliant --test live_cluster\n"), "{s}");
        assert!(s.contains("     1  cargo test --release -p pliant --test twin\n"), "{s}");
        assert!(s.contains("PLIANT_LIVE_TESTS=1"), "{s}");
        assert!(
            s.ends_with("  data not here: trace: why\n        cargo test --release -p pliant --test trace shared\n"),
            "{s}"
        );
        let twice = [entry(Why::NoData, "trace", "a"), entry(Why::NoData, "trace", "b")];
        let s = summary(&twice);
        assert_eq!(s.matches("data not here: trace: why").count(), 1, "one reason, said once: {s}");
        assert!(s.contains("--test trace a\n") && s.contains("--test trace b\n"), "{s}");
        assert_eq!(summary(&[]), "Every test of this run ran.\n");
    }
}
