//! The path of an open descriptor, as `/proc/self/fd/N` links to it.
//!
//! The daemon asks this for every first open of a file without an xattr
//! (file_contexts needs the path), so it is on the path of a held open.
//! `readlink("/proc/self/fd/N")` walks four components of procfs each
//! time; `readlinkat` relative to a descriptor of this process's
//! `/proc/self/fd`, opened once, looks up one (measured on a 2-CPU VM:
//! 2.5 µs against 3.4 µs). The descriptor names the process that opened
//! it, so a forked child (told by a `pthread_atfork` handler, cheaper
//! than a `getpid` system call per lookup) reads by path instead.

use std::ffi::OsStr;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// `/proc/self/fd` of the process that opened it.
static PROC_FD: OnceLock<Option<File>> = OnceLock::new();
/// Set in a child forked after `PROC_FD` was opened (the descriptor then
/// names the parent's table).
static FORKED: AtomicBool = AtomicBool::new(false);

extern "C" fn note_fork_in_child() {
    // Relaxed: the child has one thread when this runs, the one that reads it.
    FORKED.store(true, Ordering::Relaxed);
}

fn open_proc_fd() -> Option<File> {
    // SAFETY: registers a handler that only stores to an atomic, which is
    // async-signal-safe as a fork child handler must be.
    if unsafe { libc::pthread_atfork(None, None, Some(note_fork_in_child)) } != 0 {
        return None;
    }
    File::open("/proc/self/fd").ok()
}

/// Longest link read in one call; longer ones take the slow path.
const LINK_BUFFER: usize = 4096;

/// What `/proc/self/fd/N` links to for `fd` (e.g. `/srv/www/index.html`,
/// `/tmp/x (deleted)`, `pipe:[1234]`); `None` if it cannot be read.
pub fn fd_link(fd: BorrowedFd<'_>) -> Option<PathBuf> {
    // Relaxed: see `note_fork_in_child`.
    match PROC_FD.get_or_init(open_proc_fd) {
        Some(dir) if !FORKED.load(Ordering::Relaxed) => read_link_at(dir, fd.as_raw_fd()),
        _ => read_link_by_path(fd.as_raw_fd()),
    }
}

fn read_link_by_path(fd: i32) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()
}

/// Without allocating unless the link is long: this is on the path of a
/// held open.
fn read_link_at(dir: &File, fd: i32) -> Option<PathBuf> {
    // "N\0": at most 11 characters and a NUL left by the zeroed array.
    let mut name = [0u8; 16];
    write!(&mut name[..15], "{fd}").ok()?;
    let mut buf = [0u8; LINK_BUFFER];
    // SAFETY: `name` is NUL-terminated (the write left its last byte
    // zero), `buf` is writable for `buf.len()` bytes, and `dir` is an open
    // directory descriptor for the duration of the call.
    let n = unsafe { libc::readlinkat(dir.as_raw_fd(), name.as_ptr().cast(), buf.as_mut_ptr().cast(), buf.len()) };
    let n = usize::try_from(n).ok()?;
    match buf.get(..n) {
        Some(link) if n < buf.len() => Some(PathBuf::from(OsStr::from_bytes(link))),
        // Possibly truncated: read it whole.
        _ => read_link_by_path(fd),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn matches_the_kernels_link_for_a_file_a_deleted_file_and_a_pipe() {
        let dir = std::env::temp_dir().join(format!("rampart-fdpath-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a file with spaces");
        let file = File::create(&path).unwrap();
        let kernel = |f: BorrowedFd<'_>| std::fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd())).unwrap();
        assert_eq!(fd_link(file.as_fd()).unwrap(), path);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(fd_link(file.as_fd()).unwrap(), kernel(file.as_fd()));
        assert!(fd_link(file.as_fd()).unwrap().to_string_lossy().ends_with(" (deleted)"));
        let (r, _w) = std::io::pipe().unwrap();
        assert_eq!(fd_link(r.as_fd()).unwrap(), kernel(r.as_fd()));
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn a_forked_child_reads_its_own_table() {
        let dir = std::env::temp_dir().join(format!("rampart-fdpath-fork-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("opened in the child");
        let parent_file = File::create(dir.join("opened in the parent")).unwrap();
        // Opens PROC_FD in the parent.
        assert!(fd_link(parent_file.as_fd()).is_some());
        // SAFETY: the child only opens a file, reads a link (glibc's malloc
        // is fork-safe) and exits without unwinding.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let ok = File::create(&path).is_ok_and(|f| fd_link(f.as_fd()).as_deref() == Some(path.as_path()));
            // SAFETY: ends the child without running the parent's destructors.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "child status {status:#x}");
    }
}
