//! Slowdown (SSR §VI): each job's completion time when it runs alone on the
//! same cluster under the same policy, the denominator of its slowdown.

use crate::{SimError, SimOptions};
use pliant_core::policy::Policy;
use pliant_metrics::JobRecord;
use pliant_workload::Workload;

/// Fills every record's `alone` with its job's JCT when submitted at time 0
/// on an otherwise empty copy of the cluster.
pub(crate) fn measure_alone(
    workload: &Workload,
    policy: &Policy,
    opts: &SimOptions,
    records: &mut [JobRecord],
) -> Result<(), SimError> {
    let opts = SimOptions { slowdown: false, ..opts.clone() };
    for (job, record) in workload.jobs.iter().zip(records) {
        let mut alone = job.clone();
        alone.submit = 0;
        let w = Workload { cluster: workload.cluster.clone(), jobs: vec![alone] };
        record.alone = crate::simulate(&w, policy.clone(), &opts)?.jobs[0].jct();
    }
    Ok(())
}
