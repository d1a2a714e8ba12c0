//! An agent's reports taken once, on the server side of the channel (the
//! manager's and the Slurm controller's alike): the agent numbers its
//! reports and sends every one not yet taken again with each heartbeat,
//! from [`crate::wire::Heartbeat::first_report`] on, until an answer's
//! [`crate::wire::Orders::reports_taken`] passes it; the server keeps the
//! number after the last it took.

/// Where one node's numbered reports stand.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReportSequence {
    next: u64,
}

impl ReportSequence {
    /// Of a heartbeat's `reports`, numbered from `first` on, those not
    /// taken yet, and the number after its last report.
    pub fn unseen<T>(&self, first: u64, reports: Vec<T>) -> (Vec<T>, u64) {
        let through = first + reports.len() as u64;
        let seen = self.next.saturating_sub(first).min(reports.len() as u64) as usize;
        (reports.into_iter().skip(seen).collect(), through)
    }

    /// The reports numbered before `through` are taken.
    pub fn taken(&mut self, through: u64) {
        self.next = self.next.max(through);
    }

    /// The number after the last report taken.
    pub fn next(&self) -> u64 {
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_sent_again_is_taken_once() {
        let mut s = ReportSequence::default();
        let (new, through) = s.unseen(0, vec!["a", "b"]);
        assert_eq!((new, through), (vec!["a", "b"], 2));
        // Not taken (the journal had no room): sent again, all of it new.
        assert_eq!(s.unseen(0, vec!["a", "b"]).0, vec!["a", "b"]);
        s.taken(through);
        // The answer was lost: sent again with one more.
        let (new, through) = s.unseen(0, vec!["a", "b", "c"]);
        assert_eq!((new, through), (vec!["c"], 3));
        s.taken(through);
        // An old heartbeat arriving late moves nothing back.
        assert!(s.unseen(1, vec!["b"]).0.is_empty());
        s.taken(2);
        assert_eq!(s.next(), 3);
        // A gap (reports the server never saw are gone from the agent) is taken as it comes.
        assert_eq!(s.unseen(5, vec!["f"]), (vec!["f"], 6));
    }
}
