//! The results directory (`--out`), checked before a run so that a long run
//! does not end in "cannot write", and the line that says what was written there.

use std::path::Path;

/// Checks that results can be written to `dir`: creates it, writes and
/// removes a file there, and removes again what it created (a run that
/// fails later leaves no empty directory). The error names the directory
/// and says nothing was run.
pub fn check(dir: &Path) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("--out {}: cannot write there ({e}); nothing was run", dir.display());
    let made: Vec<&Path> = dir.ancestors().take_while(|d| !d.as_os_str().is_empty() && !d.exists()).collect();
    std::fs::create_dir_all(dir).map_err(fail)?;
    let probe = dir.join(format!(".pliant-write-check-{}", std::process::id()));
    let written = std::fs::write(&probe, b"").and_then(|()| std::fs::remove_file(&probe));
    for d in &made {
        let _ = std::fs::remove_dir(d);
    }
    written.map_err(fail)
}

/// The line a command prints after writing `files` into `dir`.
pub fn wrote(dir: &Path, files: &[&str]) -> String {
    format!("wrote {}: {}", dir.display(), files.join(", "))
}
