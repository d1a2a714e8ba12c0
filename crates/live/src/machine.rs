//! This machine as a node: its size, what the operator offers of it, and
//! its wall clock.

use crate::capabilities::Capabilities;
use crate::wire::NodeRecord;
use pliant_core::Resources;

/// Wall-clock µs since 1970.
pub fn unix_us() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

/// What a node offers of this machine (default: all of it).
#[derive(Debug, Clone, Copy, Default)]
pub struct Offer {
    /// CPU, millicores.
    pub cpu_milli: Option<u64>,
    /// Memory, MB.
    pub mem_mb: Option<u64>,
}

/// This machine's CPU (millicores) and memory (MB).
fn machine_size() -> Result<Resources, String> {
    let cores = std::thread::available_parallelism().map_err(|e| format!("cannot count CPUs: {e}"))?.get() as u64;
    let meminfo = std::fs::read_to_string("/proc/meminfo").map_err(|e| format!("/proc/meminfo: {e}"))?;
    let kb = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .ok_or("no MemTotal in /proc/meminfo")?;
    Ok(Resources::new(cores * 1000, kb / 1024))
}

/// This machine as a node named `name`: its size (or what the operator
/// offers of it) and what its kernel lets the agent do.
pub fn this_node(name: &str, caps: &Capabilities, offer: Offer) -> Result<NodeRecord, String> {
    let machine = machine_size()?;
    let capacity = Resources::new(offer.cpu_milli.unwrap_or(machine.cpu_milli), offer.mem_mb.unwrap_or(machine.mem_mb));
    Ok(NodeRecord { name: name.into(), capacity, mechanisms: caps.mechanisms(), notes: caps.notes() })
}
