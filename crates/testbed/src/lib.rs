//! Real clusters on this machine for end-to-end tests: the gates every live
//! test passes (PLIANT_LIVE_TESTS=1, root, cgroups; a skip that fails when
//! live tests were asked for), the machine lock the tests that use swap or
//! much memory share, a real two-node Slurm cluster, and a manager on a
//! clock the caller sets (no root, no agent), and swap made slow on purpose. Shared by
//! `pliant`'s own tests and by `examples/custom-policy`, whose binary is a
//! `pliant` of its own and runs on the same clusters.

pub mod clocked;
pub mod live;
pub mod slow_swap;
pub mod slurm;
