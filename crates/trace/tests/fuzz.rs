//! Arbitrary bytes fed to every reader (through `load_workload`, `import` and
//! `trace_stats`), under every file name that selects one: the readers may
//! refuse the input, but never panic.

use pliant_trace::{import, load_workload, trace_stats, LoadOptions, StatsOptions, Target};
use proptest::prelude::*;
use std::path::PathBuf;

const NAMES: [&str; 6] =
    ["task_events-0.csv", "batch_task.csv", "batch_instance.csv", "trace.json", "workload.jsonl", "data.csv"];

fn dir(case: u64) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pliant-trace-fuzz-{}-{case}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Bytes that look a little like the formats, so the fuzzing gets past detection.
fn near_miss() -> impl Strategy<Value = Vec<u8>> {
    let google = "0,,3418309,0,4155527081,0,u,3,9,0.125,0.07446,0.0004244,0\n";
    let ali = "M1,2,j_1,1,Terminated,100,160,100,0.5\n";
    let sls = "{\"job.id\":\"a\",\"job.start.ms\":1,\"job.tasks\":[{\"duration.ms\":5}]}\n";
    let native = "{\"cluster\":{\"nodes\":[{\"cpu\":4,\"mem_mb\":8192}]}}\n";
    (prop::sample::select(vec![google, ali, sls, native]), prop::collection::vec((any::<usize>(), any::<u8>()), 0..8))
        .prop_map(|(base, edits)| {
            let mut b = base.repeat(3).into_bytes();
            for (at, byte) in edits {
                let i = at % b.len();
                b[i] = byte;
            }
            b
        })
}

fn check(bytes: &[u8], case: u64) {
    let d = dir(case);
    for name in NAMES {
        let p = d.join(name);
        std::fs::write(&p, bytes).unwrap();
        let opts = LoadOptions { target: Target::Nodes(4), ..LoadOptions::default() };
        let _ = load_workload(std::slice::from_ref(&p), &opts);
        let _ = import(std::slice::from_ref(&p), &opts, std::io::sink());
        let _ = trace_stats(std::slice::from_ref(&p), &StatsOptions::default());
        std::fs::remove_file(&p).unwrap();
    }
    // A directory with the Google pair.
    std::fs::write(d.join("task_events-0.csv"), bytes).unwrap();
    std::fs::write(d.join("job_events-0.csv"), bytes).unwrap();
    let _ =
        load_workload(std::slice::from_ref(&d), &LoadOptions { target: Target::Nodes(4), ..LoadOptions::default() });
    std::fs::remove_dir_all(&d).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512), case in any::<u64>()) {
        check(&bytes, case);
    }

    #[test]
    fn damaged_records_never_panic(bytes in near_miss(), case in any::<u64>()) {
        check(&bytes, case);
    }
}

#[test]
fn gzip_garbage_is_an_error_not_a_panic() {
    let d = dir(u64::MAX);
    let p = d.join("task_events-1.csv.gz");
    std::fs::write(&p, [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3, 4]).unwrap();
    assert!(load_workload(&[p], &LoadOptions { target: Target::Nodes(1), ..LoadOptions::default() }).is_err());
    std::fs::remove_dir_all(&d).unwrap();
}
