//! What a preempted container gets back when its node has room (BIG-C §4.3,
//! "Delayed resumption"): a preempted task's resource request "can only be
//! satisfied on the machine where the task was preempted".
//!
//! Immediate preemption "reclaims and restores all resources of a preempted
//! task in one pass" (§3.2): it resumes only when everything it gave up fits.
//! For graceful preemption the paper says how resources are taken (r⃗_GP per
//! round, §3.3) but not how they come back. Gradual resumption is our reading,
//! the mirror of the take: a container takes back what its node has, as long
//! as that is all the memory it gave up (below its working set it would only
//! swap again) and at least one step's CPU (r⃗_GP's); the rest comes back at
//! later offers. GP's own premise (§3.3) is that part of a
//! container's resources is enough to make progress: a frozen Spark executor
//! then finishes its in-flight tasks instead of holding its stage for as long
//! as its whole allocation does not fit on its node.

use crate::Resources;

/// What to give back to a preempted container missing `missing` when its
/// node has `room` free for it: everything if it fits; with `gradual`, part
/// of it as above; otherwise nothing.
pub fn resumption_grant(missing: Resources, room: Resources, step: Resources, gradual: bool) -> Option<Resources> {
    if missing.fits_in(&room) {
        return Some(missing);
    }
    // Less CPU than it misses (else it would fit), but a step's worth.
    (gradual && missing.mem_mb <= room.mem_mb && room.cpu_milli >= step.cpu_milli)
        .then(|| Resources::new(room.cpu_milli.min(missing.cpu_milli), missing.mem_mb))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STEP: Resources = Resources::cores_gb(2, 4);

    // A frozen ⟨8 CPU, 16 GB⟩ executor shrunk once by r_GP = ⟨2, 4⟩ misses its
    // 8 cores (freezing released them) and 4 GB.
    const MISSING: Resources = Resources::cores_gb(8, 4);

    #[test]
    fn everything_comes_back_when_it_fits() {
        let room = Resources::cores_gb(10, 20);
        assert_eq!(resumption_grant(MISSING, room, STEP, false), Some(MISSING));
        assert_eq!(resumption_grant(MISSING, room, STEP, true), Some(MISSING));
    }

    // Room ⟨3 CPU, 20 GB⟩: whole resumption waits; gradual gives its 4 GB and
    // the 3 cores there are, and 5 cores are still owed.
    #[test]
    fn gradual_takes_what_the_node_has() {
        let room = Resources::cores_gb(3, 20);
        assert_eq!(resumption_grant(MISSING, room, STEP, false), None);
        assert_eq!(resumption_grant(MISSING, room, STEP, true), Some(Resources::cores_gb(3, 4)));
    }

    // Less than one step's CPU, or not all the memory: nothing yet.
    #[test]
    fn gradual_needs_a_step_of_cpu_and_all_the_memory() {
        assert_eq!(resumption_grant(MISSING, Resources::new(1_999, 20_480), STEP, true), None);
        assert_eq!(resumption_grant(MISSING, Resources::new(8_000, 4_095), STEP, true), None);
        // Exactly a step's CPU is enough.
        let room = Resources::new(2_000, 4_096);
        assert_eq!(resumption_grant(MISSING, room, STEP, true), Some(Resources::cores_gb(2, 4)));
    }
}
