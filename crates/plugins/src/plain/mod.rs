//! The plain mechanisms every paper's policies share: kill (`kill.rs`) and
//! suspend in place, memory kept (`suspend.rs`, Slurm's SUSPEND).

mod kill;
mod suspend;

pub(crate) use kill::{kill, Kill};
pub(crate) use suspend::{freeze, Suspend};
