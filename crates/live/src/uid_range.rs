//! The user ids jobs run as, one per job (as systemd's `DynamicUser=`
//! gives each service a uid of its own): a range that no user or group of
//! the machine has, from which the manager gives each job the next uid no
//! unfinished job holds, and journals it with the job.

use std::ffi::CStr;
use std::fmt;

/// A range of user ids, `first` to `last` included; each is also the id
/// of the job's group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UidRange {
    /// The first uid.
    pub first: u32,
    /// The last uid (included).
    pub last: u32,
}

/// The uids jobs run as unless the operator gives others: 65,536 ids past
/// the ones systemd gives containers (up to 1879048191) and below 2³¹
/// (which some programs take for negative), as no distribution gives
/// users or groups.
pub const DEFAULT_TASK_UIDS: UidRange = UidRange { first: 1_900_000_000, last: 1_900_065_535 };

impl fmt::Display for UidRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.first, self.last)
    }
}

impl UidRange {
    /// Parses `FIRST-LAST`; neither may be root's 0, `nobody`'s 65534 or
    /// the invalid 4294967295, nor may the range hold them.
    pub fn parse(text: &str) -> Result<UidRange, String> {
        let bad = || format!("{text:?}: give the uids as FIRST-LAST, e.g. {DEFAULT_TASK_UIDS}");
        let (first, last) = text.split_once('-').ok_or_else(bad)?;
        let (first, last): (u32, u32) =
            (first.trim().parse().map_err(|_| bad())?, last.trim().parse().map_err(|_| bad())?);
        let range = UidRange { first, last };
        if first > last {
            return Err(format!("{text:?}: the first uid is past the last"));
        }
        if let Some(special) = [0, 65534, u32::MAX].into_iter().find(|&u| range.contains(u)) {
            return Err(format!("{text:?}: holds uid {special}, which no job may run as"));
        }
        Ok(range)
    }

    /// True when `uid` is in the range.
    pub fn contains(&self, uid: u32) -> bool {
        (self.first..=self.last).contains(&uid)
    }

    /// The uid a new job gets: the first after `after` (the last job's,
    /// wrapping round at the end of the range) that `held` does not say an
    /// unfinished job holds; `None` when every uid is held. A uid comes
    /// back only after every other one was given out.
    pub fn next_free(&self, after: Option<u32>, held: impl Fn(u32) -> bool) -> Option<u32> {
        let len = u64::from(self.last - self.first) + 1;
        let start = after.filter(|u| self.contains(*u)).map_or(0, |u| u64::from(u - self.first) + 1);
        (0..len).map(|i| self.first + ((start + i) % len) as u32).find(|&uid| !held(uid))
    }

    /// Refuses the range if a user or a group of this machine has an id in
    /// it (read from the user and group databases, as `getent` does):
    /// a job would run as that user, or in that group.
    pub fn check_unused(&self) -> Result<(), String> {
        let taken = |what: &str, name: String, id: u32| {
            format!(
                "the task uids {self} hold {what} {name:?} ({id}) of this machine; give --task-uids a range \
                 no user or group has (see getent passwd, getent group)"
            )
        };
        // SAFETY: the database walks are not used from another thread
        // during the check; each entry is read before the next call.
        unsafe {
            libc::setpwent();
            let mut found = None;
            loop {
                let pw = libc::getpwent();
                if pw.is_null() {
                    break;
                }
                if self.contains((*pw).pw_uid) || self.contains((*pw).pw_gid) {
                    found = Some(taken("the user", text((*pw).pw_name), (*pw).pw_uid));
                    break;
                }
            }
            libc::endpwent();
            if let Some(why) = found {
                return Err(why);
            }
            libc::setgrent();
            loop {
                let gr = libc::getgrent();
                if gr.is_null() {
                    break;
                }
                if self.contains((*gr).gr_gid) {
                    found = Some(taken("the group", text((*gr).gr_name), (*gr).gr_gid));
                    break;
                }
            }
            libc::endgrent();
            found.map_or(Ok(()), Err)
        }
    }
}

/// A C string of the user or group database as text.
///
/// # Safety
/// `p` points at a NUL-terminated string.
unsafe fn text(p: *const libc::c_char) -> String {
    CStr::from_ptr(p).to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_parsed_and_refused_with_why() {
        assert_eq!(UidRange::parse("70000-70009"), Ok(UidRange { first: 70000, last: 70009 }));
        assert!(UidRange::parse("7-3").unwrap_err().contains("past the last"));
        assert!(UidRange::parse("65000-66000").unwrap_err().contains("uid 65534"));
        assert!(UidRange::parse("0-10").unwrap_err().contains("uid 0"));
        assert!(UidRange::parse("many").unwrap_err().contains("FIRST-LAST"));
        assert_eq!(DEFAULT_TASK_UIDS.to_string(), "1900000000-1900065535");
    }

    #[test]
    fn the_next_uid_follows_the_last_one_given_and_skips_held_ones() {
        let range = UidRange { first: 100, last: 103 };
        assert_eq!(range.next_free(None, |_| false), Some(100));
        assert_eq!(range.next_free(Some(100), |_| false), Some(101));
        assert_eq!(range.next_free(Some(103), |_| false), Some(100), "wraps round");
        assert_eq!(range.next_free(Some(101), |u| u == 102), Some(103));
        assert_eq!(range.next_free(Some(103), |u| u != 101), Some(101));
        assert_eq!(range.next_free(Some(5), |_| false), Some(100), "a uid outside the range restarts it");
        assert_eq!(range.next_free(Some(100), |_| true), None);
    }

    #[test]
    fn a_range_holding_a_user_of_this_machine_is_refused() {
        let root = UidRange { first: 0, last: 0 };
        let err = root.check_unused().unwrap_err();
        assert!(err.contains("the user \"root\" (0)"), "{err}");
        DEFAULT_TASK_UIDS.check_unused().expect("no user or group of this machine has the default uids");
    }
}
