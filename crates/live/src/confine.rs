//! What a task may do besides using its CPU and memory: the user it runs as,
//! how many processes it may hold, and the environment it starts with.
//!
//! Every task starts with `no_new_privs` (no setuid program raises it above
//! what it has) and without the agent's environment: only the variables in
//! [`PASSED_ENV`] pass, so a secret the daemon holds in its environment (its
//! join token, an operator's credentials) never reaches a job. A task run as
//! another user cannot write its own cgroup's files (they belong to root), so
//! it can neither raise its limits nor leave its cgroup. An agent that runs
//! as root runs each job as a user of its own, a uid from a range no user of
//! the machine has ([`crate::uid_range`], given by the manager with the
//! launch), unless the operator names one user for every task (root
//! included); every task it starts holds no capability, a task left as
//! root included ([`drop_bounding_set`], [`clear_capabilities`]).

use crate::uid_range::{UidRange, DEFAULT_TASK_UIDS};
use std::ffi::{CStr, CString};
use std::io;
use std::path::PathBuf;

/// True when this process runs as root (and may so drop its tasks' capabilities).
pub fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Variables of the agent's environment that a task sees (and any `LC_*`);
/// the rest are dropped. `HOME`, `USER`, `LOGNAME` and `SHELL` are the task
/// user's own when tasks run as another user.
pub const PASSED_ENV: &[&str] =
    &["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TERM", "TMPDIR"];

/// How tasks are confined on a node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Confinement {
    /// The one user every task runs as, when the operator names one.
    pub user: Option<TaskUser>,
    /// Else, the range each job's own uid is in (`None` with no `user`:
    /// the agent's own user).
    pub job_uids: Option<UidRange>,
    /// The most processes and threads a task may hold at once (`None`: no bound).
    pub max_pids: Option<u64>,
}

impl Confinement {
    /// How a node confines its tasks: as `fixed` when the operator names a
    /// user; else, when this process runs as root, each job as a uid of its
    /// own from `uids` ([`DEFAULT_TASK_UIDS`] when `None`), a range no user
    /// or group of the machine may have; else as this process's own user.
    pub fn for_node(
        fixed: Option<TaskUser>,
        uids: Option<UidRange>,
        max_pids: Option<u64>,
    ) -> Result<Confinement, String> {
        let job_uids = match (&fixed, running_as_root()) {
            (Some(_), _) if uids.is_some() => {
                return Err(
                    "give --task-user (one user for every task) or --task-uids (one uid per job), not both".into()
                )
            }
            (Some(_), _) => None,
            (None, true) => {
                let range = uids.unwrap_or(DEFAULT_TASK_UIDS);
                range.check_unused()?;
                Some(range)
            }
            (None, false) if uids.is_some() => {
                return Err("--task-uids: only a daemon run as root can run tasks as other users".into())
            }
            (None, false) => None,
        };
        Ok(Confinement { user: fixed, job_uids, max_pids })
    }

    /// True when tasks run as another user than the agent's.
    pub fn as_other_user(&self) -> bool {
        self.user.as_ref().is_some_and(|u| !u.is_root()) || self.job_uids.is_some()
    }

    /// The user a task of a job the manager gave `uid` runs as: the fixed
    /// user, or the job's own uid (which must be in this node's range), or
    /// `None` (the agent's own user).
    pub fn user_for(&self, uid: Option<u32>) -> Result<Option<TaskUser>, String> {
        let Some(range) = self.job_uids.filter(|_| self.user.is_none()) else { return Ok(self.user.clone()) };
        match uid {
            Some(uid) if range.contains(uid) => Ok(Some(TaskUser::of_job(uid))),
            Some(uid) => Err(format!(
                "the manager gave the job uid {uid}, outside this node's task uids {range} (give every daemon the \
                 same --task-uids)"
            )),
            None => Err("the manager gave the job no uid of its own (an older manager?)".into()),
        }
    }
}

/// A user tasks run as, as the user database gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskUser {
    /// The login name.
    pub name: String,
    /// The user id.
    pub uid: u32,
    /// The primary group id.
    pub gid: u32,
    /// Every group the user is in (the primary one included).
    pub groups: Vec<u32>,
    /// The home directory.
    pub home: PathBuf,
    /// The login shell.
    pub shell: PathBuf,
}

impl TaskUser {
    /// Looks up `name` (a login name, or a numeric uid) in the user database.
    pub fn lookup(name: &str) -> Result<TaskUser, String> {
        let unknown = || format!("no user {name:?} on this machine (see /etc/passwd)");
        let cname = CString::new(name).map_err(|_| unknown())?;
        let mut buf = vec![0u8; 16 << 10];
        // SAFETY: an all-zero passwd is a valid value to be filled in.
        let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer is valid for the call, and `buf` outlives the
        // strings `pw` points into (they are copied out below).
        let rc = match name.parse::<u32>() {
            Ok(uid) => unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr().cast(), buf.len(), &mut found) },
            Err(_) => unsafe {
                libc::getpwnam_r(cname.as_ptr(), &mut pw, buf.as_mut_ptr().cast(), buf.len(), &mut found)
            },
        };
        if rc != 0 {
            return Err(format!("looking up user {name:?}: {}", std::io::Error::from_raw_os_error(rc)));
        }
        if found.is_null() {
            return Err(unknown());
        }
        // SAFETY: on success the fields point at NUL-terminated strings in `buf`.
        let text = |p: *const libc::c_char| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        let user = TaskUser {
            name: text(pw.pw_name),
            uid: pw.pw_uid,
            gid: pw.pw_gid,
            groups: Vec::new(),
            home: PathBuf::from(text(pw.pw_dir)),
            shell: PathBuf::from(text(pw.pw_shell)),
        };
        Ok(TaskUser { groups: groups_of(&user.name, user.gid), ..user })
    }

    /// The user of a job run as `uid` of its own (also its group): no
    /// name in the user database, no home but `/`.
    pub fn of_job(uid: u32) -> TaskUser {
        TaskUser {
            name: format!("pliant-{uid}"),
            uid,
            gid: uid,
            groups: vec![uid],
            home: PathBuf::from("/"),
            shell: PathBuf::from("/bin/sh"),
        }
    }

    /// True for the superuser, whom running "as" confines in nothing.
    pub fn is_root(&self) -> bool {
        self.uid == 0
    }
}

/// Every group `name` is in, `gid` first.
fn groups_of(name: &str, gid: u32) -> Vec<u32> {
    let Ok(cname) = CString::new(name) else { return vec![gid] };
    let mut groups = vec![0 as libc::gid_t; 64];
    loop {
        let mut n = groups.len() as libc::c_int;
        // SAFETY: `groups` holds `n` entries; on -1 `n` says how many are needed.
        let rc = unsafe { libc::getgrouplist(cname.as_ptr(), gid, groups.as_mut_ptr(), &mut n) };
        if rc >= 0 {
            groups.truncate(n as usize);
            return groups;
        }
        groups.resize(n.max(groups.len() as libc::c_int * 2) as usize, 0);
    }
}

/// The highest capability number any kernel has yet (`CAP_LAST_CAP` is 40
/// on Linux 6); numbers past the running kernel's are skipped.
const LAST_CAP: libc::c_int = 63;

/// Empties the capability bounding set and the ambient set, so that nothing
/// this process executes can gain a capability again. Needs `CAP_SETPCAP`
/// (root). Async-signal-safe: called between fork and exec, before the
/// process gives up root or its capabilities.
pub(crate) fn drop_bounding_set() -> io::Result<()> {
    for cap in 0..=LAST_CAP {
        // SAFETY: prctl with integer arguments only.
        if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } != 0 {
            let err = io::Error::last_os_error();
            // EINVAL: a capability this kernel does not have.
            if err.raw_os_error() != Some(libc::EINVAL) {
                return Err(err);
            }
        }
    }
    // SAFETY: as above. EINVAL: a kernel before ambient capabilities (4.3).
    let rc = unsafe { libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) };
    if rc != 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `struct __user_cap_header_struct` of capset(2).
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

/// `struct __user_cap_data_struct` of capset(2): one per 32 capabilities.
#[repr(C)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// `_LINUX_CAPABILITY_VERSION_3`: 64-bit sets, as two [`CapData`].
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// Empties this process's effective, permitted and inheritable capability
/// sets: as root it can then do only what a file's owner can. Last before
/// `no_new_privs` (a user switch needs its capabilities). Async-signal-safe.
pub(crate) fn clear_capabilities() -> io::Result<()> {
    let header = CapHeader { version: CAPABILITY_VERSION_3, pid: 0 };
    let none = [
        CapData { effective: 0, permitted: 0, inheritable: 0 },
        CapData { effective: 0, permitted: 0, inheritable: 0 },
    ];
    // SAFETY: capset reads one header and two data structs, valid for the call.
    if unsafe { libc::syscall(libc::SYS_capset, &header as *const CapHeader, none.as_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The environment a task starts with: the variables of `agent_env` named by
/// [`PASSED_ENV`] (or `LC_*`), with the task user's identity in place of the
/// agent's when it runs as another user.
pub fn task_environment(
    agent_env: impl IntoIterator<Item = (String, String)>,
    user: Option<&TaskUser>,
) -> Vec<(String, String)> {
    let identity: Vec<(String, String)> = user
        .map(|u| {
            vec![
                ("HOME".to_string(), u.home.display().to_string()),
                ("USER".to_string(), u.name.clone()),
                ("LOGNAME".to_string(), u.name.clone()),
                ("SHELL".to_string(), u.shell.display().to_string()),
            ]
        })
        .unwrap_or_default();
    let mut env: Vec<(String, String)> = agent_env
        .into_iter()
        .filter(|(k, _)| PASSED_ENV.contains(&k.as_str()) || k.starts_with("LC_"))
        .filter(|(k, _)| !identity.iter().any(|(i, _)| i == k))
        .collect();
    env.extend(identity);
    env.sort();
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn only_the_passed_variables_reach_a_task() {
        let agent = vars(&[
            ("PATH", "/usr/bin"),
            ("PLIANT_JOIN_TOKEN", "secret"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("LC_TIME", "C"),
            ("HOME", "/root"),
        ]);
        let env = task_environment(agent, None);
        assert_eq!(env, vars(&[("HOME", "/root"), ("LC_TIME", "C"), ("PATH", "/usr/bin")]));
    }

    #[test]
    fn a_task_user_s_identity_replaces_the_agent_s() {
        let user = TaskUser {
            name: "nobody".into(),
            uid: 65534,
            gid: 65534,
            groups: vec![65534],
            home: "/nonexistent".into(),
            shell: "/usr/sbin/nologin".into(),
        };
        let env = task_environment(vars(&[("HOME", "/root"), ("USER", "root"), ("PATH", "/bin")]), Some(&user));
        assert_eq!(
            env,
            vars(&[
                ("HOME", "/nonexistent"),
                ("LOGNAME", "nobody"),
                ("PATH", "/bin"),
                ("SHELL", "/usr/sbin/nologin"),
                ("USER", "nobody"),
            ])
        );
    }

    #[test]
    fn users_are_found_by_name_or_uid_and_unknown_ones_are_named() {
        let root = TaskUser::lookup("root").expect("root is in every user database");
        assert_eq!((root.uid, root.gid), (0, 0));
        assert!(root.is_root());
        assert_eq!(TaskUser::lookup("0").expect("uid 0").name, "root");
        let err = TaskUser::lookup("no-such-user-pliant").unwrap_err();
        assert!(err.contains("no user \"no-such-user-pliant\""), "{err}");
    }
}
