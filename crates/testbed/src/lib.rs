//! Real clusters on this machine for end-to-end tests: the gates every live
//! test passes (PLIANT_LIVE_TESTS=1, root, cgroups; a skip that fails when
//! live tests were asked for), the machine lock the tests that use swap or
//! much memory share, and a real two-node Slurm cluster. Shared by
//! `pliant`'s own tests and by `examples/custom-policy`, whose binary is a
//! `pliant` of its own and runs on the same clusters.

pub mod live;
pub mod slurm;
