//! The node-side executor, one for both agents: what pliant does to a held
//! task's memory and what it reports of it. A limit is lowered on a thread
//! of its own and what it frees is reported as the kernel frees it (BIG-C
//! §3.2–3.3); a graceful shrink is frozen and reported swapping as soon as
//! the task swaps or its reclaim stalls, and so is a shrunk task that swaps
//! later (BIG-C §4.2); a resumed task
//! is reported resumed once its memory is back from swap (the simulator's
//! restore). Pliant's own agent ([`crate::agent`]) runs it on the cgroups of
//! the tasks it launched, the Slurm node's agent ([`crate::slurm_node`]) on
//! the job cgroups Slurm made; what they do differently is their [`Rules`].

use crate::cgroup::{CgroupError, MemoryLimit, MemoryStats};
use crate::mechanism::{MechanismError, LIMIT_ATTEMPTS};
use crate::protocol::AgentReport;
use crate::reclaim::Reclaiming;
use pliant_core::model::TaskRef;
use std::time::{Duration, Instant};

const MB: u64 = 1 << 20;
/// Swap (bytes) at or below which a resumed task's memory is back.
pub const BACK: u64 = MB;
/// A resumed task whose swap went down and then stopped going down for
/// this long has read back what it touches (pages it never touches stay in swap).
pub const RESTORE_SETTLE: Duration = Duration::from_secs(1);

/// What one agent does differently from the other (each says why).
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    /// How long a graceful shrink's limit write may stall while the task
    /// runs before the task counts as swapping and is frozen.
    pub stall: Duration,
    /// How long a limit write on a frozen task may stall before it is tried
    /// again (at most [`LIMIT_ATTEMPTS`] times in all).
    pub patience: Duration,
    /// How long a resumed task's swap may stay where it was at the resume
    /// before the task counts as not touching what is there.
    pub cold: Duration,
    /// How log lines name a task.
    pub name: fn(TaskRef) -> String,
}

/// The cgroup of a held task, as the executor uses it.
pub trait Knobs {
    /// The memory counters.
    fn memory(&self) -> Result<MemoryStats, CgroupError>;
    /// A handle on the memory limit alone, for the thread that lowers it.
    fn memory_limit(&self) -> MemoryLimit;
    /// Starts freezing the task, without waiting for it to settle.
    fn freeze(&mut self) -> Result<(), MechanismError>;
}

/// The executor's state of one held task's memory: its limit as booked, a
/// lowering under way, the watch for swapping, and a restore.
#[derive(Debug)]
pub struct TaskMemory {
    /// Bytes: the limit the task holds as its manager books it.
    limit: u64,
    reclaim: Option<Underway>,
    /// Shrunk and running: its counters at the last look, to see it swap.
    watch: Option<MemoryStats>,
    restoring: Option<Restoring>,
    rules: &'static Rules,
}

/// A limit write under way.
#[derive(Debug)]
struct Underway {
    write: Reclaiming,
    /// Graceful: the task runs meanwhile, and is frozen as soon as it
    /// swaps or the reclaim stalls.
    graceful: bool,
    /// Frozen (from the start, or once it swapped or the write stalled).
    froze: bool,
    start: Instant,
    before_mb: u64,
    /// Bytes of the task in swap when the lowering began.
    swap_before: u64,
}

/// A resumed task reading its memory back in: it holds its allocation and
/// is reported resumed only once that is done.
#[derive(Debug, Clone, Copy)]
struct Restoring {
    /// Bytes still in swap at the last look.
    swap: u64,
    /// When that figure last went down.
    since: Instant,
    started: Instant,
    /// Whether it has gone down at all.
    moved: bool,
}

impl Restoring {
    /// A restore from `now` with `swap` bytes to read back, or `None` when there are none.
    fn start(swap: u64, now: Instant) -> Option<Restoring> {
        (swap > BACK).then_some(Restoring { swap, since: now, started: now, moved: false })
    }

    /// True once the swap is (almost) all back, has stopped going down for
    /// [`RESTORE_SETTLE`], or never went down for `cold`; `swap` is the bytes
    /// in swap `now`.
    fn done(&mut self, swap: u64, now: Instant, cold: Duration) -> bool {
        if swap < self.swap {
            (self.swap, self.since, self.moved) = (swap, now, true);
        }
        let still = if self.moved { RESTORE_SETTLE } else { cold };
        swap <= BACK || now.duration_since(self.since) >= still
    }
}

impl TaskMemory {
    /// A task holding a limit of `limit` bytes, run by `rules`.
    pub fn new(limit: u64, rules: &'static Rules) -> TaskMemory {
        TaskMemory { limit, reclaim: None, watch: None, restoring: None, rules }
    }

    /// The limit (bytes) the task holds as booked.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Starts the task's memory afresh at a limit of `limit` bytes as
    /// booked (after a restart of either side): a lowering under way is
    /// dropped once its write ended, and one from here counts from `limit`.
    pub fn rebook(&mut self, limit: u64) {
        self.settle();
        (self.watch, self.restoring, self.limit) = (None, None, limit);
    }

    /// Starts lowering the limit to `to` bytes: the task runs meanwhile when
    /// `graceful`, else the caller froze it first. A lowering still under
    /// way is waited for and this one counts on from it. What the task
    /// never used is reported free at once, the rest by [`TaskMemory::look`].
    pub fn lower(
        &mut self,
        task: TaskRef,
        knobs: &mut impl Knobs,
        to: u64,
        graceful: bool,
        out: &mut Vec<AgentReport>,
    ) -> Result<(), MechanismError> {
        (self.watch, self.restoring) = (None, None);
        let memory = knobs.memory()?;
        let usage = memory.usage;
        let patience = if graceful { self.rules.stall } else { self.rules.patience };
        let underway = match self.reclaim.take() {
            Some(mut earlier) => {
                if let Some(Ok(())) = earlier.write.wait() {
                    self.limit = earlier.write.target();
                }
                earlier.write.retarget(knobs.memory_limit(), to, patience);
                Underway { graceful, froze: earlier.froze || !graceful, ..earlier }
            }
            None => Underway {
                write: Reclaiming::start(knobs.memory_limit(), self.limit, to, usage, patience),
                graceful,
                froze: !graceful,
                start: Instant::now(),
                before_mb: usage / MB,
                swap_before: memory.swap,
            },
        };
        self.reclaim = Some(underway);
        self.progress(task, knobs, out)
    }

    /// Gives the task its memory back: the write under way ends first (it
    /// would undo the lift), then `lift` raises the limit to `limit` bytes
    /// and lets the task run. The task is reported resumed once its
    /// swapped-out memory is back ([`TaskMemory::look`]); at once when none
    /// of it is in swap.
    pub fn resume<K: Knobs>(
        &mut self,
        task: TaskRef,
        knobs: &mut K,
        limit: u64,
        lift: impl FnOnce(&mut K) -> Result<(), MechanismError>,
        out: &mut Vec<AgentReport>,
    ) -> Result<(), MechanismError> {
        self.settle();
        (self.watch, self.restoring) = (None, None);
        lift(knobs)?;
        self.limit = limit;
        // Swap that cannot be read is none to wait for.
        self.restoring = Restoring::start(knobs.memory().map_or(0, |m| m.swap), Instant::now());
        if self.restoring.is_none() {
            out.push(AgentReport::Resumed { task });
        }
        Ok(())
    }

    /// Ends a restore under way (the task exited); true if there was one.
    pub fn end_restore(&mut self) -> bool {
        self.restoring.take().is_some()
    }

    /// Waits for the limit write under way, if any, and drops it (its
    /// cgroup is about to go, or a new limit follows).
    pub fn settle(&mut self) {
        if let Some(mut r) = self.reclaim.take() {
            r.write.wait();
        }
    }

    /// One look at the task: reports what its lowering freed since the last
    /// look, freezes a shrunk task that swaps, and reports a resumed task
    /// whose memory is back.
    pub fn look(
        &mut self,
        task: TaskRef,
        knobs: &mut impl Knobs,
        out: &mut Vec<AgentReport>,
    ) -> Result<(), MechanismError> {
        self.progress(task, knobs, out)?;
        let name = self.rules.name;
        if let Some(restoring) = &mut self.restoring {
            if restoring.done(knobs.memory()?.swap, Instant::now(), self.rules.cold) {
                let took = restoring.started.elapsed().as_millis();
                eprintln!("pliant agent: {}: its memory is back ({took} ms after its limit was lifted)", name(task));
                self.restoring = None;
                out.push(AgentReport::Resumed { task });
            }
        }
        if let Some(before) = self.watch {
            let now = knobs.memory()?;
            self.watch = Some(now);
            if now.swapping_since(&before) {
                // BIG-C GP §4.2: a shrunk container that swaps is frozen.
                knobs.freeze()?;
                self.watch = None;
                eprintln!("pliant agent: {}: swaps while shrunk: frozen", name(task));
                out.push(AgentReport::Swapping { task });
            }
        }
        Ok(())
    }

    /// Reports what the lowering under way freed since the last look; at its
    /// end logs it, and watches a shrunk task that still runs for swapping.
    /// A write that stalled is tried again — under a graceful shrink first
    /// from the task frozen — up to [`LIMIT_ATTEMPTS`] times, then the error
    /// is returned with the old limit in force.
    fn progress(
        &mut self,
        task: TaskRef,
        knobs: &mut impl Knobs,
        out: &mut Vec<AgentReport>,
    ) -> Result<(), MechanismError> {
        let Some(mut r) = self.reclaim.take() else { return Ok(()) };
        let memory = knobs.memory()?;
        let usage = memory.usage;
        let name = self.rules.name;
        let ended = r.write.ended();
        let stalled = matches!(ended, Some(Err(CgroupError::LimitBusy { .. })));
        // BIG-C §4.2: "If memory swapping is detected in a container, CM
        // immediately freezes the container". A limit that cuts into what
        // the task uses swaps it out; left running, the task pages back in
        // what the reclaim takes for as long as the reclaim lasts, and a
        // write that stalls is the same swapping seen later.
        if r.graceful && !r.froze && (stalled || memory.swap > r.swap_before) {
            knobs.freeze()?;
            r.froze = true;
            eprintln!("pliant agent: {}: swaps while it shrinks: frozen", name(task));
            out.push(AgentReport::Swapping { task });
        }
        let done = match ended {
            None => false,
            Some(Ok(())) => true,
            Some(Err(CgroupError::LimitBusy { .. })) if r.write.attempts < LIMIT_ATTEMPTS => {
                r.write.retry(knobs.memory_limit(), self.rules.patience);
                false
            }
            Some(Err(e)) => return Err(e.into()),
        };
        let freed = r.write.freed(usage, done);
        if freed.mem_mb > 0 {
            let took_ms = freed.took.as_millis() as u64;
            out.push(AgentReport::Reclaimed { task, mem_mb: freed.mem_mb, freed_mb: freed.used_mb, took_ms });
        }
        if !done {
            self.reclaim = Some(r);
            return Ok(());
        }
        self.limit = r.write.target();
        let after = knobs.memory()?;
        eprintln!(
            "pliant agent: {} limited to {} MB: {} MB -> {} MB in {} ms",
            name(task),
            self.limit / MB,
            r.before_mb,
            after.usage / MB,
            r.start.elapsed().as_millis()
        );
        if !r.froze {
            self.watch = Some(after);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cgroup::{Foreign, Layout};
    use crate::scratch::ScratchDir;
    use pliant_core::model::JobId;
    use std::path::Path;

    const TASK: TaskRef = TaskRef { job: JobId(7), task: 0 };
    /// A graceful shrink may stall for 5 s: long enough for the test to play the kernel.
    const PATIENT: Rules = Rules {
        stall: Duration::from_secs(5),
        patience: Duration::from_secs(5),
        cold: Duration::from_secs(10),
        name: |t| t.to_string(),
    };
    /// A graceful shrink stalls after 200 ms.
    const HASTY: Rules = Rules { stall: Duration::from_millis(200), ..PATIENT };

    /// A cgroup v2 directory made of plain files (no root): the test plays
    /// the kernel by writing its counters.
    struct Fake {
        dir: ScratchDir,
        cgroup: Foreign,
    }

    impl Fake {
        fn new(usage_mb: u64) -> Fake {
            let dir = ScratchDir::new("pliant-executor").unwrap();
            let job = dir.path().join("job");
            std::fs::create_dir(&job).unwrap();
            for (file, text) in [
                ("cgroup.controllers", "memory".to_string()),
                ("cgroup.freeze", "0".into()),
                ("memory.high", "max".into()),
                ("memory.max", "max".into()),
                ("memory.stat", "pgmajfault 0".into()),
                ("memory.events", "max 0".into()),
                ("memory.swap.current", "0".into()),
                ("memory.current", (usage_mb * MB).to_string()),
            ] {
                std::fs::write(job.join(file), text).unwrap();
            }
            let cgroup = Layout::v2_at(dir.path()).foreign("job").unwrap();
            Fake { dir, cgroup }
        }

        fn file(&self, name: &str) -> std::path::PathBuf {
            self.dir.path().join("job").join(name)
        }

        /// Sets the usage and swap, each file replaced whole (the thread
        /// that lowers the limit reads the usage meanwhile).
        fn set(&self, usage_mb: u64, swap_mb: u64) {
            for (file, mb) in [("memory.current", usage_mb), ("memory.swap.current", swap_mb)] {
                let next = self.file("next");
                std::fs::write(&next, (mb * MB).to_string()).unwrap();
                std::fs::rename(next, self.file(file)).unwrap();
            }
        }

        fn frozen(&self) -> bool {
            read(&self.file("cgroup.freeze")) == "1"
        }
    }

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap().trim().to_string()
    }

    impl Knobs for Fake {
        fn memory(&self) -> Result<MemoryStats, CgroupError> {
            self.cgroup.memory()
        }
        fn memory_limit(&self) -> MemoryLimit {
            self.cgroup.memory_limit()
        }
        fn freeze(&mut self) -> Result<(), MechanismError> {
            Ok(self.cgroup.begin_freeze()?)
        }
    }

    /// Looks until `until` holds of the task's memory and the reports so far, for at most 5 s.
    fn look_until(
        m: &mut TaskMemory,
        fake: &mut Fake,
        out: &mut Vec<AgentReport>,
        until: impl Fn(&TaskMemory, &[AgentReport]) -> bool,
    ) {
        let start = Instant::now();
        while !until(m, out) {
            assert!(start.elapsed() < Duration::from_secs(5), "never came: {out:?}");
            m.look(TASK, fake, out).unwrap();
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn reclaimed(out: &[AgentReport]) -> u64 {
        out.iter().map(|r| if let AgentReport::Reclaimed { mem_mb, .. } = r { *mem_mb } else { 0 }).sum()
    }

    #[test]
    fn a_lowering_reports_what_is_free_as_the_usage_drops_then_watches_the_shrunk_task() {
        let mut fake = Fake::new(300);
        let mut m = TaskMemory::new(440 * MB, &PATIENT);
        let mut out = Vec::new();
        m.lower(TASK, &mut fake, 64 * MB, true, &mut out).unwrap();
        assert_eq!(reclaimed(&out), 140, "what it never used is free at once: {out:?}");
        // Usage that goes without swapping (its page cache): it runs on.
        fake.set(200, 0);
        look_until(&mut m, &mut fake, &mut out, |_, o| reclaimed(o) >= 240);
        assert_eq!(reclaimed(&out), 240);
        assert_eq!(m.limit(), 440 * MB, "not lowered until the write is through");
        fake.set(60, 0);
        look_until(&mut m, &mut fake, &mut out, |m, _| m.limit() == 64 * MB);
        assert_eq!(reclaimed(&out), 376, "the whole drop");
        assert_eq!(read(&fake.file("memory.max")), (64 * MB).to_string());
        assert!(!out.contains(&AgentReport::Swapping { task: TASK }) && !fake.frozen(), "it ran through: {out:?}");
        // Watched from here: more of it in swap is swapping, and it is frozen.
        out.clear();
        m.look(TASK, &mut fake, &mut out).unwrap();
        assert_eq!(out, vec![]);
        fake.set(60, 10);
        m.look(TASK, &mut fake, &mut out).unwrap();
        assert_eq!(out, vec![AgentReport::Swapping { task: TASK }]);
        assert!(fake.frozen());
    }

    // BIG-C §4.2: the first swap of a graceful shrink freezes the task, and
    // the lowering goes on from the frozen task (it ran through before).
    #[test]
    fn a_graceful_shrink_freezes_the_task_as_soon_as_it_swaps() {
        let mut fake = Fake::new(300);
        let mut m = TaskMemory::new(440 * MB, &PATIENT);
        let mut out = Vec::new();
        m.lower(TASK, &mut fake, 64 * MB, true, &mut out).unwrap();
        fake.set(200, 100);
        look_until(&mut m, &mut fake, &mut out, |_, o| o.contains(&AgentReport::Swapping { task: TASK }));
        assert!(fake.frozen());
        assert_eq!(m.limit(), 440 * MB, "frozen while its limit goes down");
        fake.set(60, 240);
        look_until(&mut m, &mut fake, &mut out, |m, _| m.limit() == 64 * MB);
        assert_eq!(reclaimed(&out), 376);
        assert_eq!(out.iter().filter(|r| matches!(r, AgentReport::Swapping { .. })).count(), 1, "{out:?}");
        // Frozen: not watched for swapping.
        out.clear();
        fake.set(60, 300);
        m.look(TASK, &mut fake, &mut out).unwrap();
        assert_eq!(out, vec![]);
    }

    #[test]
    fn a_graceful_shrink_that_stalls_freezes_the_task_once_and_goes_on_frozen() {
        let mut fake = Fake::new(300);
        let mut m = TaskMemory::new(300 * MB, &HASTY);
        let mut out = Vec::new();
        m.lower(TASK, &mut fake, 100 * MB, true, &mut out).unwrap();
        assert_eq!(out, vec![]);
        look_until(&mut m, &mut fake, &mut out, |_, o| !o.is_empty());
        assert_eq!(out, vec![AgentReport::Swapping { task: TASK }], "stalled past `stall`");
        assert!(fake.frozen());
        fake.set(90, 210);
        look_until(&mut m, &mut fake, &mut out, |m, _| m.limit() == 100 * MB);
        assert_eq!(reclaimed(&out), 200);
        assert_eq!(out.iter().filter(|r| matches!(r, AgentReport::Swapping { .. })).count(), 1);
        // Frozen: not watched for swapping.
        out.clear();
        fake.set(90, 300);
        m.look(TASK, &mut fake, &mut out).unwrap();
        assert_eq!(out, vec![]);
    }

    #[test]
    fn an_immediate_lowering_is_not_watched_and_a_second_counts_on_from_the_first() {
        let mut fake = Fake::new(400);
        let mut m = TaskMemory::new(400 * MB, &PATIENT);
        let mut out = Vec::new();
        m.lower(TASK, &mut fake, 200 * MB, false, &mut out).unwrap();
        fake.set(150, 250);
        m.lower(TASK, &mut fake, 100 * MB, false, &mut out).unwrap();
        fake.set(100, 300);
        look_until(&mut m, &mut fake, &mut out, |m, _| m.limit() == 100 * MB);
        assert_eq!(reclaimed(&out), 300, "one drop from the first limit to the last");
        fake.set(100, 400);
        out.clear();
        m.look(TASK, &mut fake, &mut out).unwrap();
        assert_eq!(out, vec![], "frozen by its preemption: nothing to watch");
    }

    #[test]
    fn a_resume_ends_the_lowering_and_is_reported_once_the_swap_is_back() {
        let mut fake = Fake::new(64);
        fake.set(64, 200);
        let mut m = TaskMemory::new(64 * MB, &PATIENT);
        let mut out = Vec::new();
        let mut lifted = false;
        let lift = |_: &mut Fake| {
            lifted = true;
            Ok(())
        };
        m.resume(TASK, &mut fake, 320 * MB, lift, &mut out).unwrap();
        assert!(lifted);
        assert_eq!((out.clone(), m.limit()), (vec![], 320 * MB), "not before its memory is back");
        fake.set(200, 50);
        m.look(TASK, &mut fake, &mut out).unwrap();
        assert_eq!(out, vec![]);
        fake.set(264, 0);
        m.look(TASK, &mut fake, &mut out).unwrap();
        assert_eq!(out, vec![AgentReport::Resumed { task: TASK }]);
        out.clear();
        fake.set(264, 0);
        m.resume(TASK, &mut fake, 320 * MB, |_| Ok(()), &mut out).unwrap();
        assert_eq!(out, vec![AgentReport::Resumed { task: TASK }], "nothing in swap: resumed at once");
    }

    #[test]
    fn a_lowering_ends_a_restore_under_way() {
        let mut fake = Fake::new(64);
        fake.set(64, 200);
        let mut m = TaskMemory::new(64 * MB, &PATIENT);
        let mut out = Vec::new();
        m.resume(TASK, &mut fake, 320 * MB, |_| Ok(()), &mut out).unwrap();
        m.lower(TASK, &mut fake, 64 * MB, false, &mut out).unwrap();
        fake.set(64, 0);
        look_until(&mut m, &mut fake, &mut out, |m, _| m.limit() == 64 * MB);
        m.look(TASK, &mut fake, &mut out).unwrap();
        assert_eq!(reclaimed(&out), 256);
        assert!(!out.contains(&AgentReport::Resumed { task: TASK }), "preempted again, it is not resumed: {out:?}");
    }

    #[test]
    fn a_restore_ends_when_the_swap_is_back_settles_or_stays_put_for_cold() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        assert!(Restoring::start(BACK, t0).is_none(), "nothing to read back: resumed at once");
        let fresh = || Restoring::start(200 * MB, t0).unwrap();
        let slurm = Duration::from_secs(10);
        let mut r = fresh();
        assert!(!r.done(200 * MB, at(2000), slurm), "not moved yet (Slurm may not have resumed it)");
        assert!(!r.done(150 * MB, at(2500), slurm));
        assert!(!r.done(150 * MB, at(3400), slurm), "a second from the last drop, not from the start");
        assert!(r.done(150 * MB, at(3500), slurm));
        assert!(fresh().done(BACK, at(10), slurm), "all back");
        assert!(fresh().done(200 * MB, at(10_000), slurm), "pages it never touches stay in swap");
        // Cold as long as settling: a task that never moves counts from the resume.
        let mut own = fresh();
        assert!(!own.done(200 * MB, at(900), RESTORE_SETTLE));
        assert!(own.done(200 * MB, at(1000), RESTORE_SETTLE));
    }
}
