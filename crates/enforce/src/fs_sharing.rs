//! Processes sharing a working directory, root and umask (one
//! `fs_struct`, `clone(CLONE_FS)` without `CLONE_THREAD`), which an exec
//! transition must not leave shared with the new domain.
//!
//! Why: after the transition the other process could still change the
//! new domain's working directory and umask while it runs, steering
//! where it writes by relative names and how open the files it makes
//! are. SELinux refuses such an exec (`EPERM`) unless the old domain may
//! `process { share }` with the new one (`LSM_UNSAFE_SHARE` in
//! `selinux_bprm_creds_for_exec`).
//!
//! How: the launcher's filter hands over every `clone` that makes a
//! process sharing the caller's `fs_struct` (crate::supervised; the
//! kernel makes it), and the first one is noted here (as is a start
//! that finds launched processes an earlier daemon saw). Until then no
//! launched process shares one (`clone3` is refused), so an exec
//! transition costs nothing more; afterwards [`shares_with_another`]
//! compares, with `kcmp(KCMP_FS)`, the exec's process with every thread
//! of the daemon's tree (where every launched process and its children
//! are; one `cgroup.threads` read per domain) outside its own thread
//! group. A process launched with `--no-sandbox` has no filter, so its
//! clones are not seen: such a launch is noted as a clone (crate::daemon).

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether a launched process ever made a process sharing its
/// `fs_struct` (since this daemon started).
static SEEN: AtomicBool = AtomicBool::new(false);

/// `KCMP_FS` (uapi/linux/kcmp.h).
const KCMP_FS: libc::c_int = 3;

/// Notes a `clone(CLONE_FS)` of a launched process, before the kernel
/// makes it.
pub(crate) fn note_clone() {
    // SeqCst: a transition decided after this call's answer (which the
    // clone follows) must see it; pairs with the load below.
    SEEN.store(true, Ordering::SeqCst);
}

/// Whether process `tgid` shares its `fs_struct` with a thread of
/// another process among `tree` (thread ids).
pub(crate) fn shares_with_another(tgid: u32, tree: impl IntoIterator<Item = u32>) -> bool {
    // SeqCst: see `note_clone`.
    if !SEEN.load(Ordering::SeqCst) {
        return false;
    }
    let own: Vec<u32> = tasks_of(tgid).collect();
    tree.into_iter().filter(|t| !own.contains(t)).any(|t| same_fs(tgid, t))
}

/// Whether tasks `a` and `b` share one `fs_struct` (`false` if either is
/// gone).
pub(crate) fn same_fs(a: u32, b: u32) -> bool {
    // SAFETY: kcmp takes integer arguments only.
    unsafe { libc::syscall(libc::SYS_kcmp, a as libc::pid_t, b as libc::pid_t, KCMP_FS, 0usize, 0usize) == 0 }
}

/// The tasks (threads) of process `pid`.
fn tasks_of(pid: u32) -> impl Iterator<Item = u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|d| d.file_name().to_str()?.parse().ok())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// A child made with `CLONE_FS` shares the parent's; a forked one
    /// does not; noted or not decides whether the tree is looked at.
    #[test]
    fn a_clone_fs_child_is_found_and_a_forked_one_is_not() {
        let me = std::process::id();
        let forked = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        assert!(!same_fs(me, forked.id()), "a forked child has its own");
        // SAFETY: the child only calls pause (async-signal-safe) and is
        // killed below; CLONE_FS without CLONE_VM copies the memory.
        let shared = unsafe { libc::syscall(libc::SYS_clone, libc::CLONE_FS | libc::SIGCHLD, 0, 0, 0, 0) };
        if shared == 0 {
            // SAFETY: the child waits to be killed.
            unsafe {
                libc::pause();
                libc::_exit(0);
            }
        }
        assert!(shared > 0, "clone: {}", std::io::Error::last_os_error());
        let shared = shared as u32;
        assert!(same_fs(me, shared), "a CLONE_FS child shares it");
        let tree: Vec<u32> = [me, forked.id(), shared].into_iter().flat_map(tasks_of).collect();
        assert!(!shares_with_another(me, tree.clone()), "not looked at before a note");
        note_clone();
        assert!(shares_with_another(me, tree.clone()));
        assert!(shares_with_another(shared, tree.clone()));
        assert!(!shares_with_another(forked.id(), tree.clone()));
        // SAFETY: our own children, by pid.
        unsafe {
            libc::kill(shared as libc::pid_t, libc::SIGKILL);
            libc::waitpid(shared as libc::pid_t, std::ptr::null_mut(), 0);
        }
        let mut forked = forked;
        forked.kill().unwrap();
        forked.wait().unwrap();
    }
}
