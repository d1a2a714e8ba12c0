//! The last test of `cargo test --workspace`: lists the tests of this run
//! that did not run, and how to run them, where a reader sees it.

use std::io::Write;

#[test]
fn tests_this_run_did_not_run() {
    let Some(log) = pliant_xtest::log_path() else { return };
    let entries = pliant_xtest::take(&log, pliant_xtest::parent_pid());
    let rule = "=".repeat(78);
    // Straight to the stderr handle: the harness captures `eprintln!`.
    let _ = write!(std::io::stderr(), "\n{rule}\n{}{rule}\n", pliant_xtest::summary(&entries));
}
