//! pliant's options of a Slurm job, given as `--comment=pliant:…`: its class
//! and priority (the queues and levels of pliant's policies) and an estimate
//! of its run time. The rest of the request is Slurm's own: `-c`/`--mem`.

use pliant_core::model::JobClass;
use pliant_core::{Micros, SECOND};

/// What `--comment` tells pliant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobOptions {
    /// `short` or `long` (default `long`).
    pub class: JobClass,
    /// 0–11 (default 0).
    pub priority: u8,
    /// `estimate=SECONDS`: the owner's run-time estimate.
    pub estimate_us: Option<Micros>,
}

/// Reads `pliant:short`, `pliant:long,priority=9,estimate=600`; an empty
/// comment gives the defaults.
pub fn parse_comment(comment: &str) -> Result<JobOptions, String> {
    let mut options = JobOptions { class: JobClass::Long, priority: 0, estimate_us: None };
    let comment = comment.trim();
    if comment.is_empty() {
        return Ok(options);
    }
    let body = comment
        .strip_prefix("pliant:")
        .ok_or_else(|| format!("--comment {comment:?}: pliant's options start with `pliant:`"))?;
    for item in body.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        match item.split_once('=') {
            None if item == "short" => options.class = JobClass::Short,
            None if item == "long" => options.class = JobClass::Long,
            Some(("priority", v)) => {
                options.priority =
                    v.parse().ok().filter(|p| *p <= 11).ok_or_else(|| {
                        format!("--comment {comment:?}: priority must be a whole number 0-11, not {v:?}")
                    })?
            }
            Some(("estimate", v)) => {
                let s: u64 = v
                    .parse()
                    .map_err(|_| format!("--comment {comment:?}: estimate must be whole seconds, not {v:?}"))?;
                options.estimate_us = Some(s * SECOND);
            }
            _ => {
                return Err(format!(
                    "--comment {comment:?}: unknown option {item:?} (expected short, long, priority=N, estimate=S)"
                ))
            }
        }
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_give_class_priority_and_estimate() {
        let o = parse_comment("pliant:short,priority=9,estimate=60").unwrap();
        assert_eq!((o.class, o.priority, o.estimate_us), (JobClass::Short, 9, Some(60 * SECOND)));
        assert_eq!(parse_comment("").unwrap().class, JobClass::Long);
        assert!(parse_comment("pliant:priority=12").unwrap_err().contains("0-11"));
        assert!(parse_comment("urgent").unwrap_err().contains("pliant:"));
        assert!(parse_comment("pliant:fast").unwrap_err().contains("unknown option"));
    }
}
