//! A memory limit lowered on a thread of its own, with what it frees counted
//! as it goes. The kernel reclaims (swaps out) a task's memory for as long as
//! the limit write blocks — seconds for hundreds of MB — and a task waiting
//! for part of that memory can start as soon as its need is free, not when
//! the whole reclaim ends: the agent reports the victim's usage drop as it
//! happens, as the simulator frees reclaimed memory.

use crate::cgroup::{CgroupError, MemoryLimit};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const MB: u64 = 1 << 20;

/// Memory freed since the last look at a reclaim under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Freed {
    /// MB of the limit drop now free: the part of the old limit above both
    /// the usage and the new limit (what was never used counts at once).
    pub mem_mb: u64,
    /// MB the usage itself went down by.
    pub used_mb: u64,
    /// Time since the last look.
    pub took: Duration,
}

/// A limit write under way from `from` down to `to` bytes.
#[derive(Debug)]
pub struct Reclaiming {
    worker: Option<JoinHandle<Result<(), CgroupError>>>,
    from: u64,
    to: u64,
    usage_before: u64,
    counted_mb: u64,
    used_counted_mb: u64,
    last_look: Instant,
    /// Attempts at the limit so far (a stalled write is tried again).
    pub attempts: u32,
}

impl Reclaiming {
    /// Starts writing limit `to` (bytes) on a thread, from a limit of `from`
    /// with `usage` in use; the write retries a stalled reclaim for `patience`.
    pub fn start(limit: MemoryLimit, from: u64, to: u64, usage: u64, patience: Duration) -> Reclaiming {
        let mut r = Reclaiming {
            worker: None,
            from,
            to,
            usage_before: usage,
            counted_mb: 0,
            used_counted_mb: 0,
            last_look: Instant::now(),
            attempts: 0,
        };
        r.retry(limit, patience);
        r
    }

    /// Starts the write again after it stalled.
    pub fn retry(&mut self, limit: MemoryLimit, patience: Duration) {
        let to = self.to;
        self.attempts += 1;
        self.worker = Some(std::thread::spawn(move || limit.set(Some(to), patience)));
    }

    /// Goes on to a lower limit `to` once the write under way has ended (see
    /// [`Reclaiming::wait`]): what was counted stays counted, and the whole
    /// reclaim frees the drop from the first limit to `to`.
    pub fn retarget(&mut self, limit: MemoryLimit, to: u64, patience: Duration) {
        self.to = to;
        self.attempts = 0;
        self.retry(limit, patience);
    }

    /// The new limit, in bytes.
    pub fn target(&self) -> u64 {
        self.to
    }

    /// MB the whole reclaim frees: the limit drop.
    pub fn due_mb(&self) -> u64 {
        self.from.saturating_sub(self.to) / MB
    }

    /// What is free since the last look, with the cgroup's usage now at
    /// `usage` bytes; with `done`, all the rest of the limit drop.
    pub fn freed(&mut self, usage: u64, done: bool) -> Freed {
        let available = if done { self.due_mb() } else { self.from.saturating_sub(usage.max(self.to)) / MB };
        let mem_mb = available.min(self.due_mb()).saturating_sub(self.counted_mb);
        self.counted_mb += mem_mb;
        let used = self.usage_before.saturating_sub(usage) / MB;
        let used_mb = used.saturating_sub(self.used_counted_mb);
        self.used_counted_mb += used_mb;
        let took = self.last_look.elapsed();
        self.last_look = Instant::now();
        Freed { mem_mb, used_mb, took }
    }

    /// The write's result once it has ended (`None` while it runs).
    pub fn ended(&mut self) -> Option<Result<(), CgroupError>> {
        if !self.worker.as_ref().is_some_and(|w| w.is_finished()) {
            return None;
        }
        self.wait()
    }

    /// Waits for the write to end and returns its result (`None` if no
    /// write runs).
    pub fn wait(&mut self) -> Option<Result<(), CgroupError>> {
        let worker = self.worker.take()?;
        Some(
            worker.join().unwrap_or_else(|_| {
                Err(CgroupError::Unsupported("the thread writing the memory limit panicked".into()))
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reclaiming(from_mb: u64, to_mb: u64, usage_mb: u64) -> Reclaiming {
        Reclaiming {
            worker: None,
            from: from_mb * MB,
            to: to_mb * MB,
            usage_before: usage_mb * MB,
            counted_mb: 0,
            used_counted_mb: 0,
            last_look: Instant::now(),
            attempts: 1,
        }
    }

    // A 440 MB container using 300 MB goes down to 64 MB: the 140 MB it never
    // used are free at once, then what its usage drops by, never below the
    // new limit; the end brings the rest of the 376 MB drop.
    #[test]
    fn frees_the_unused_part_at_once_then_the_usage_drop() {
        let mut r = reclaiming(440, 64, 300);
        assert_eq!(r.due_mb(), 376);
        let first = r.freed(300 * MB, false);
        assert_eq!((first.mem_mb, first.used_mb), (140, 0));
        let second = r.freed(200 * MB, false);
        assert_eq!((second.mem_mb, second.used_mb), (100, 100));
        // Usage going back up frees nothing and takes nothing back.
        assert_eq!(r.freed(250 * MB, false).mem_mb, 0);
        assert_eq!(r.freed(30 * MB, false).mem_mb, 376 - 240, "never past the new limit");
        assert_eq!(r.freed(30 * MB, true).mem_mb, 0);
    }

    #[test]
    fn the_end_reports_what_the_usage_did_not_show() {
        let mut r = reclaiming(440, 64, 440);
        assert_eq!(r.freed(400 * MB, false).mem_mb, 40);
        let end = r.freed(100 * MB, true);
        assert_eq!(end.mem_mb, 336);
        assert_eq!(end.used_mb, 300);
    }
}
