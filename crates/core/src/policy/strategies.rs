//! Proptest strategies over the cost model's inputs, for the tests of the
//! core and of plugins that read it (feature `strategies`).

use super::cost::Victim;
use crate::Resources;
use proptest::prelude::{any as arbitrary, prop, prop_oneof, Just, Strategy};

/// Victims of every kind the planner sees: running or shrunk (held
/// below the request, up to none of its CPU), killable or not, alone or
/// in a coupled phase held back by nothing, a shrink or a freeze.
pub fn any_victim() -> impl Strategy<Value = Victim> {
    let cpu = prop::sample::select(vec![0u64, 500, 1000, 2000, 4000, 8000, 16_000]);
    let mem = prop::sample::select(vec![64u64, 512, 1024, 4096, 16_384, 32_768]);
    let siblings = prop::sample::select(vec![0u64, 4000, 40_000, 112_000]);
    let stopped = prop::sample::select(vec![0u64, 125_000, 250_000, 500_000, 1_000_000]);
    let relaunch = prop_oneof![Just(0u64), 0u64..100_000_000_000];
    (cpu, mem, 0u64..=16_000, 0u64..=16_384, 0u64..3_000_000_000, arbitrary::<[bool; 3]>(), siblings, stopped, relaunch)
        .prop_map(
            |(cpu, mem, cpu_short, mem_short, ran, [killable, shrunk, has_image], siblings_cpu, stopped, relaunch)| {
                let request = Resources::new(cpu.max(1000), mem);
                let held = if shrunk {
                    Resources::new(cpu.saturating_sub(cpu_short), mem.saturating_sub(mem_short).max(64.min(mem)))
                } else {
                    request
                };
                Victim {
                    held,
                    request,
                    ran,
                    killable,
                    relaunch,
                    running: !shrunk,
                    has_image,
                    siblings_cpu,
                    phase_stopped_ppm: if siblings_cpu > 0 { stopped } else { 0 },
                }
            },
        )
}
