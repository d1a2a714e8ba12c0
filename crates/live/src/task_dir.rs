//! A task's own directory (its working directory: its output, its exit
//! file and, for a task run as another user, its `checkpoint/`), made
//! ready by the agent for each run and taken back when the run ends.
//!
//! The directory's parents are the agent's (root's, mode 0700): no task
//! can replace the directory itself. Inside it everything may change at
//! any moment (the task's user owns it), so every operation there goes
//! through [`HeldDir`]: nothing in it is reached by a path, and no link in
//! it is followed. Between runs the directory and everything in it are
//! root's ([`take_back`]): a job's user owns files only while one of its
//! tasks runs, and a uid given back owns nothing here.

use crate::confine::TaskUser;
use crate::held_dir::HeldDir;
use std::io;
use std::path::{Path, PathBuf};

/// The name of a confined task's checkpoint directory inside its own.
pub const CHECKPOINT: &str = "checkpoint";
/// The agent's own files in a task's directory: never given to the task's user.
const AGENT_FILES: &[&str] = &["stdout", "stderr"];
/// The task's exit file (written by its exit wrapper, as the task's user).
const EXIT: &str = "exit";

/// Makes `log_dir` ready for a run: made if missing, its earlier exit
/// file removed, and its checkpoint directory emptied unless `restore`.
/// A task run as another `user` keeps its checkpoints in `checkpoint/`
/// inside it, and is given the directory and what is in it (but the
/// agent's output files); one run as the agent's own user keeps them in
/// `checkpoint_dir` (the manager's, shared by every node). Returns the
/// checkpoint directory.
pub fn prepare(log_dir: &Path, checkpoint_dir: &Path, restore: bool, user: Option<&TaskUser>) -> io::Result<PathBuf> {
    let dir = HeldDir::make_all(log_dir)?;
    // An earlier run's exit status must not pass for this run's, should
    // the agent die before the command starts.
    dir.remove(EXIT)?;
    let Some(user) = user else {
        let parent = checkpoint_dir.parent().ok_or_else(|| no_parent(checkpoint_dir))?;
        let name = checkpoint_dir.file_name().and_then(|n| n.to_str()).ok_or_else(|| no_parent(checkpoint_dir))?;
        let parent = HeldDir::make_all(parent)?;
        if !restore {
            // A fresh start: state saved by an earlier run is not to be resumed.
            parent.remove(name)?;
        }
        parent.make_child(name)?;
        return Ok(checkpoint_dir.to_path_buf());
    };
    if !restore {
        dir.remove(CHECKPOINT)?;
    }
    // Whatever the task left in its place (a link to another directory, a
    // file) is removed and a directory made: its saved state is then lost.
    dir.make_child(CHECKPOINT)?.give(user.uid, user.gid)?;
    dir.give_tree(user.uid, user.gid, AGENT_FILES)?;
    dir.give(user.uid, user.gid)?;
    Ok(log_dir.join(CHECKPOINT))
}

/// After a run of a task run as another user (its processes all gone):
/// the directory and everything in it that is not root's become root's.
pub fn take_back(log_dir: &Path) -> io::Result<()> {
    match HeldDir::open(log_dir) {
        Ok(dir) => dir.take_back(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn no_parent(dir: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("{}: not a directory below another", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::ScratchDir;
    use std::os::unix::fs::MetadataExt;

    fn owner(path: &Path) -> u32 {
        std::fs::symlink_metadata(path).unwrap().uid()
    }

    /// Needs root (to give files away): a no-op otherwise.
    #[test]
    fn a_link_in_place_of_the_checkpoint_directory_is_replaced_not_followed() {
        if !crate::confine::running_as_root() {
            return;
        }
        let scratch = ScratchDir::new("pliant-task-dir").unwrap();
        let (log_dir, target) = (scratch.path().join("job-0/task-0"), scratch.path().join("target"));
        std::fs::create_dir(&target).unwrap();
        let user = TaskUser::lookup("nobody").unwrap();
        let checkpoint = prepare(&log_dir, Path::new("/unused"), false, Some(&user)).unwrap();
        assert_eq!(checkpoint, log_dir.join(CHECKPOINT));
        assert_eq!((owner(&log_dir), owner(&checkpoint)), (user.uid, user.uid));
        std::fs::write(checkpoint.join("state"), "saved").unwrap();
        std::fs::write(log_dir.join("stdout"), "output").unwrap();
        take_back(&log_dir).unwrap();
        assert_eq!((owner(&log_dir), owner(&checkpoint), owner(&checkpoint.join("state"))), (0, 0, 0));
        std::fs::remove_dir_all(&checkpoint).unwrap();
        std::os::unix::fs::symlink(&target, &checkpoint).unwrap();
        prepare(&log_dir, Path::new("/unused"), true, Some(&user)).unwrap();
        assert_eq!(owner(&target), 0, "the link's target was given away");
        assert!(std::fs::symlink_metadata(&checkpoint).unwrap().is_dir());
        assert_eq!((owner(&checkpoint), owner(&log_dir.join("stdout"))), (user.uid, 0));
    }
}
