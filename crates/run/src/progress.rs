//! Progress on long work: bars on stderr, drawn only when it is a terminal
//! (indicatif's rule) and not under `--quiet`.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicBool, Ordering};

static QUIET: AtomicBool = AtomicBool::new(false);

/// `--quiet`: no progress bars from here on.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether progress is to be shown at all (a terminal is checked when drawing).
pub fn enabled() -> bool {
    !QUIET.load(Ordering::Relaxed)
}

fn target() -> ProgressDrawTarget {
    if enabled() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    }
}

/// A bar of `len` steps drawn with `template` (indicatif's syntax).
pub fn bar(len: u64, template: &str) -> ProgressBar {
    ProgressBar::with_draw_target(Some(len), target())
        .with_style(ProgressStyle::with_template(template).expect("valid template"))
}

/// Bars stacked one per line, e.g. one per policy.
pub fn stack() -> MultiProgress {
    MultiProgress::with_draw_target(target())
}
