//! The three priority levels of the checkpoint paper (§2, Table 1): the
//! Google trace's priorities 0–11 grouped into free, middle and production.

use serde::Serialize;

/// A band of priorities; a job preempts only jobs of a lower level (§3.3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PriorityLevel {
    /// Priorities 0–1: best effort, preempted most.
    Free,
    /// Priorities 2–8.
    Middle,
    /// Priorities 9–11: production jobs.
    Production,
}

impl PriorityLevel {
    /// Every level, lowest first.
    pub const ALL: [PriorityLevel; 3] = [PriorityLevel::Free, PriorityLevel::Middle, PriorityLevel::Production];

    /// The level of a Google-trace priority (0–11; anything higher counts as production).
    pub fn of(priority: u8) -> PriorityLevel {
        match priority {
            0..=1 => PriorityLevel::Free,
            2..=8 => PriorityLevel::Middle,
            _ => PriorityLevel::Production,
        }
    }

    /// Position in [`PriorityLevel::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// A label for tables: name and priority range.
    pub fn label(self) -> &'static str {
        match self {
            PriorityLevel::Free => "free (0-1)",
            PriorityLevel::Middle => "middle (2-8)",
            PriorityLevel::Production => "production (9-11)",
        }
    }

    /// The lowercase name used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            PriorityLevel::Free => "free",
            PriorityLevel::Middle => "middle",
            PriorityLevel::Production => "production",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::PriorityLevel::*;
    use super::*;

    #[test]
    fn bands_follow_table_1() {
        let levels: Vec<PriorityLevel> = (0..=11).map(PriorityLevel::of).collect();
        assert_eq!(
            levels,
            [Free, Free, Middle, Middle, Middle, Middle, Middle, Middle, Middle, Production, Production, Production]
        );
        assert!(Free < Middle && Middle < Production);
    }
}
