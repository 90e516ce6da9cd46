//! Process identity beyond the pid: pidfds, pidfs ids, start times and
//! names.
//!
//! A pid is reused once its process is reaped, so the daemon cannot key
//! its per-process state (the domain a process runs in) by pid alone: a
//! new process that happens to get a dead process's pid must never
//! inherit the dead one's domain. The process events connector
//! ([`crate::proc_connector`]) gives the order of fork, exec and exit; this
//! module gives identities that survive pid reuse, for resynchronising
//! from `/proc` after an overrun and for checking that a pid still names
//! the process the daemon thinks it does:
//!
//! * [`process_id`]: on kernels with pidfs (Linux 6.9 and later) every
//!   process gets an inode in pidfs whose number is unique for the boot
//!   and never reused (a 64-bit counter), so `st_ino` of any pidfd for the
//!   process is its identity. Older kernels back pidfds with one shared
//!   anonymous inode, so `st_ino` says nothing; [`pidfs_id`] detects that
//!   with `fstatfs` (`PID_FS_MAGIC`) and fails with
//!   [`io::ErrorKind::Unsupported`].
//! * [`start_time_ticks`]: the start time in clock ticks since boot, field
//!   22 of `/proc/PID/stat`; with the pid, an identity on every kernel
//!   (two processes could only share both if the pid were reused within
//!   one tick).
//!
//! Opening by pid is itself racy: [`pidfd_open`] returns a handle to
//! whatever process holds the pid *now*. Once open, a pidfd keeps naming
//! that process (also after it exits), so take the pidfd first and check
//! the identity through it.

use std::collections::VecDeque;
use std::fs;
use std::io;
use std::mem;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// `PID_FS_MAGIC` from `linux/magic.h`: the filesystem type of pidfds on
/// kernels with pidfs.
pub const PID_FS_MAGIC: i64 = 0x5049_4446;

/// `pidfd_open(pid, 0)`: a close-on-exec handle to the process `pid`
/// (a thread group leader; other thread ids fail with `EINVAL`). Fails
/// with `ESRCH` when no such process exists (also once it has been
/// reaped).
pub fn pidfd_open(pid: u32) -> io::Result<OwnedFd> {
    let pid = libc::pid_t::try_from(pid)
        .ok()
        .filter(|&p| p > 0)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("invalid pid {pid}")))?;
    // SAFETY: pidfd_open takes a pid and flags by value and touches no
    // memory of ours.
    let rc = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0 as libc::c_uint) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    let raw = libc::c_int::try_from(rc)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, format!("pidfd_open returned {rc}")))?;
    // SAFETY: the kernel just created `raw` for us and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// The pidfs inode number of the process `fd` refers to: unique among all
/// processes of this boot and never reused (Linux 6.9 and later, 64-bit
/// targets). Works after the process has exited.
///
/// Fails with [`io::ErrorKind::Unsupported`] when `fd` is not on pidfs
/// (older kernels, where every pidfd has the same inode) or on 32-bit
/// targets, where the id does not fit `st_ino`.
pub fn pidfs_id(fd: BorrowedFd<'_>) -> io::Result<u64> {
    // SAFETY: statfs is plain integers; all zeroes is a valid value.
    let mut sfs: libc::statfs = unsafe { mem::zeroed() };
    // SAFETY: `sfs` is writable and outlives the call.
    if unsafe { libc::fstatfs(fd.as_raw_fd(), &mut sfs) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // f_type's width and signedness differ between targets.
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    let fs_type = i64::from(sfs.f_type);
    if fs_type != PID_FS_MAGIC {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "pidfd is on filesystem {fs_type:#x}, not pidfs ({PID_FS_MAGIC:#x}): \
                 this kernel (before 6.9) gives pidfds no per-process inode"
            ),
        ));
    }
    if cfg!(not(target_pointer_width = "64")) {
        return Err(io::Error::new(io::ErrorKind::Unsupported, "pidfs ids need a 64-bit st_ino"));
    }
    // SAFETY: stat is plain integers; all zeroes is a valid value.
    let mut st: libc::stat = unsafe { mem::zeroed() };
    // SAFETY: `st` is writable and outlives the call.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } < 0 {
        return Err(io::Error::last_os_error());
    }
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    Ok(u64::from(st.st_ino))
}

/// The pidfs id ([`pidfs_id`]) of the process that holds `pid` now.
pub fn process_id(pid: u32) -> io::Result<u64> {
    let fd = pidfd_open(pid)?;
    pidfs_id(std::os::fd::AsFd::as_fd(&fd))
}

/// The start time of `pid` in clock ticks since boot (field 22 of
/// `/proc/PID/stat`).
pub fn start_time_ticks(pid: u32) -> io::Result<u64> {
    let stat = fs::read(format!("/proc/{pid}/stat"))?;
    parse_start_time(&stat)
        .map_err(|reason| io::Error::new(io::ErrorKind::InvalidData, format!("/proc/{pid}/stat: {reason}")))
}

/// Field 22 (`starttime`) of a `/proc/PID/stat` line. The command name
/// (field 2) is in parentheses and may itself hold spaces and
/// parentheses, so the fields after it start after the *last* `)`.
fn parse_start_time(stat: &[u8]) -> Result<u64, String> {
    let close = stat.iter().rposition(|&b| b == b')').ok_or_else(|| "no ')' closing the command name".to_string())?;
    let rest = stat.get(close + 1..).unwrap_or_default();
    let rest = std::str::from_utf8(rest)
        .map_err(|e| format!("non-UTF-8 after the command name at byte {}", close + 1 + e.valid_up_to()))?;
    // `rest` starts with field 3 (state), so field 22 is its 20th.
    let field = rest.split_ascii_whitespace().nth(22 - 3).ok_or_else(|| "fewer than 22 fields".to_string())?;
    field.parse().map_err(|e| format!("field 22 (starttime) {field:?}: {e}"))
}

/// The command name of `pid` (`/proc/PID/comm`, at most 15 bytes, without
/// the newline; bytes that are not UTF-8 are replaced). `None` when the
/// process is gone or unreadable.
pub fn comm(pid: u32) -> Option<String> {
    let bytes = fs::read(format!("/proc/{pid}/comm")).ok()?;
    let name = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
    Some(String::from_utf8_lossy(name).into_owned())
}

/// Pidfds of the last few processes a responder answered, kept open.
///
/// pidfs frees a process's inode and dentry with its last pidfd and makes
/// them again for the next one, so with `FAN_REPORT_PIDFD` every event of
/// a process that opens file after file would pay for both. Holding one
/// pidfd of the process keeps them: making and closing a pidfd then costs
/// 0.7 µs instead of 2.0 µs here (`contrib/repro/event-syscall-costs.c`).
/// Several are held because events of a few busy processes interleave
/// (one held pidfd would be replaced at every change of process). A held
/// pidfd keeps the kernel's `struct pid`, not the process or its number;
/// the oldest is closed beyond [`RecentPidfds::MAX_HELD`].
#[derive(Default)]
pub struct RecentPidfds {
    held: VecDeque<(u32, OwnedFd)>,
}

impl RecentPidfds {
    pub const MAX_HELD: usize = 8;

    /// Done with an event of `pid`: its `pidfd` is kept if no pidfd of
    /// that process is held (closing the oldest beyond the limit), and
    /// closed otherwise.
    pub fn done_with(&mut self, pid: u32, pidfd: Option<OwnedFd>) {
        let Some(fd) = pidfd else {
            return;
        };
        if self.holds(pid) {
            return;
        }
        if self.held.len() == Self::MAX_HELD {
            self.held.pop_front();
        }
        self.held.push_back((pid, fd));
    }

    /// Whether a pidfd of `pid` is held.
    pub fn holds(&self, pid: u32) -> bool {
        self.held.iter().any(|(p, _)| *p == pid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn start_time_survives_hostile_names() {
        let tail = "S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 424242 20 21";
        for name in ["sh", "a b", "x) S 1 2 3", "((", ")", ") 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9"] {
            let line = format!("1234 ({name}) {tail}\n");
            assert_eq!(parse_start_time(line.as_bytes()), Ok(424242), "{line}");
        }
    }

    #[test]
    fn start_time_rejects_bad_lines() {
        assert!(parse_start_time(b"").is_err());
        assert!(parse_start_time(b"1 (sh S 1 2").is_err());
        assert!(parse_start_time(b"1 (sh) S 1 2 3").is_err());
        assert!(parse_start_time(b"1 (sh) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 -1").is_err());
        assert!(parse_start_time(b"1 (sh) \xff").is_err());
    }

    #[test]
    fn own_process() {
        let me = std::process::id();
        assert!(start_time_ticks(me).unwrap() > 0);
        assert!(comm(me).is_some_and(|c| !c.is_empty() && !c.ends_with('\n')));
        let fd = pidfd_open(me).unwrap();
        match pidfs_id(fd.as_fd()) {
            Ok(id) => assert_eq!(process_id(me).unwrap(), id),
            Err(e) => assert_eq!(e.kind(), io::ErrorKind::Unsupported),
        }
        assert_eq!(pidfd_open(0).unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert_eq!(pidfd_open(u32::MAX).unwrap_err().kind(), io::ErrorKind::InvalidInput);
    }

    fn is_open(fd: i32) -> bool {
        // SAFETY: F_GETFD only reads the descriptor table.
        unsafe { libc::fcntl(fd, libc::F_GETFD) >= 0 }
    }

    #[test]
    fn recent_pidfds_keep_one_per_process_and_a_bounded_number() {
        let me = std::process::id();
        let mut recent = RecentPidfds::default();
        recent.done_with(me, None);
        assert!(!recent.holds(me));

        let first = pidfd_open(me).unwrap();
        let first_raw = first.as_raw_fd();
        recent.done_with(me, Some(first));
        assert!(recent.holds(me));
        assert!(is_open(first_raw));

        // Another pidfd of the same process: closed, the held one stays.
        let second = pidfd_open(me).unwrap();
        let second_raw = second.as_raw_fd();
        recent.done_with(me, Some(second));
        assert!(!is_open(second_raw));
        assert!(is_open(first_raw));

        // Other processes: held beside it until the limit, then the
        // oldest (ours) is closed.
        let mut children: Vec<_> = (0..RecentPidfds::MAX_HELD)
            .map(|_| std::process::Command::new("sleep").arg("5").spawn().unwrap())
            .collect();
        for (i, child) in children.iter().enumerate() {
            recent.done_with(child.id(), Some(pidfd_open(child.id()).unwrap()));
            assert_eq!(recent.holds(me), i + 1 < RecentPidfds::MAX_HELD, "after {} others", i + 1);
        }
        assert!(!is_open(first_raw));
        assert!(children.iter().all(|c| recent.holds(c.id())));
        for child in &mut children {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }
}
