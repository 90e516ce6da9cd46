//! Process and thread identity beyond the pid: pidfds, pidfs ids,
//! `PIDFD_GET_INFO`, names.
//!
//! A pid is reused once its process is reaped, so nothing may be keyed by
//! a pid alone. A pidfd, once open, keeps naming the task it was opened
//! for (also after it exits), so take the pidfd first and ask through it:
//!
//! * [`process_id`]: on kernels with pidfs (Linux 6.9 and later) every
//!   process gets an inode in pidfs whose number is unique for the boot
//!   and never reused, so `st_ino` of any pidfd for the process is its
//!   identity ([`pidfs_id`] checks the filesystem is pidfs).
//! * [`thread_info`]: `PIDFD_GET_INFO` (Linux 6.13) on a pidfd gives the
//!   thread group id and the task's cgroup v2 id, which is how an event's
//!   thread is mapped to its domain ([`crate::cgroups`]). On a pidfd of a
//!   task that has exited it fails with `ESRCH`.
//! * [`RecentThreads`]: a responder's pidfds of the threads it answered
//!   last, so a thread opening file after file costs one `ioctl`, not an
//!   open, an `ioctl` and a close (pidfs frees a task's inode with its
//!   last pidfd and builds it again for the next).

use std::collections::VecDeque;
use std::fs;
use std::io;
use std::mem;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// `PID_FS_MAGIC` from `linux/magic.h`: the filesystem type of pidfds on
/// kernels with pidfs.
pub const PID_FS_MAGIC: i64 = 0x5049_4446;

/// `pidfd_open(pid, 0)`: a close-on-exec handle to the process `pid`
/// (a thread group leader; other thread ids fail with `EINVAL`). Fails
/// with `ESRCH` when no such process exists (also once it has been
/// reaped).
pub fn pidfd_open(pid: u32) -> io::Result<OwnedFd> {
    open_pidfd(pid, 0)
}

fn open_pidfd(pid: u32, flags: libc::c_uint) -> io::Result<OwnedFd> {
    let pid = libc::pid_t::try_from(pid)
        .ok()
        .filter(|&p| p > 0)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("invalid pid {pid}")))?;
    // SAFETY: pidfd_open takes a pid and flags by value and touches no
    // memory of ours.
    let rc = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, flags) };
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

/// The command name of `pid` (`/proc/PID/comm`, at most 15 bytes, without
/// the newline; bytes that are not UTF-8 are replaced). `None` when the
/// process is gone or unreadable.
pub fn comm(pid: u32) -> Option<String> {
    let bytes = fs::read(format!("/proc/{pid}/comm")).ok()?;
    let name = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
    Some(String::from_utf8_lossy(name).into_owned())
}

/// `struct pidfd_info` of `linux/pidfd.h` (Linux 6.13), up to the
/// fields the daemon reads; the kernel copies at most the size given.
#[repr(C)]
#[derive(Default)]
struct PidfdInfo {
    mask: u64,
    cgroupid: u64,
    pid: u32,
    tgid: u32,
    ppid: u32,
    ruid: u32,
    rgid: u32,
    euid: u32,
    egid: u32,
    suid: u32,
    sgid: u32,
    fsuid: u32,
    fsgid: u32,
    exit_code: i32,
}

const PIDFD_INFO_PID: u64 = 1 << 0;
const PIDFD_INFO_CREDS: u64 = 1 << 1;
const PIDFD_INFO_CGROUPID: u64 = 1 << 2;
/// `_IOWR(0xFF, 11, struct pidfd_info)`: the size is part of the number.
const PIDFD_GET_INFO: libc::c_ulong =
    (3 << 30) | ((std::mem::size_of::<PidfdInfo>() as libc::c_ulong) << 16) | (0xFF << 8) | 11;
/// `PIDFD_THREAD` (= `O_EXCL`): a pidfd of one thread, not a process.
const PIDFD_THREAD: libc::c_uint = libc::O_EXCL as libc::c_uint;

/// Who a task is, for the decision: its thread group and its cgroup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadInfo {
    pub tgid: u32,
    pub cgroup_id: u64,
}

/// Who a process is, for a control request: its pid (in the daemon's pid
/// namespace), effective uid and cgroup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcessInfo {
    pub pid: u32,
    pub euid: u32,
    pub cgroup_id: u64,
}

/// [`ProcessInfo`] of the task `fd` refers to, now (`ESRCH` once it
/// exited).
pub fn process_info(fd: BorrowedFd<'_>) -> io::Result<ProcessInfo> {
    let want = PIDFD_INFO_PID | PIDFD_INFO_CREDS | PIDFD_INFO_CGROUPID;
    let mut info = PidfdInfo { mask: want, ..PidfdInfo::default() };
    // SAFETY: as in `thread_info`.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), PIDFD_GET_INFO, &mut info as *mut PidfdInfo) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    if info.mask & want != want {
        return Err(io::Error::new(io::ErrorKind::Unsupported, "PIDFD_GET_INFO gave no credentials or cgroup id"));
    }
    Ok(ProcessInfo { pid: info.tgid, euid: info.euid, cgroup_id: info.cgroupid })
}

/// `pidfd_getfd`: a copy of descriptor `n` of the process `pidfd` names
/// (needs ptrace access to it: root).
pub fn take_descriptor(pidfd: BorrowedFd<'_>, n: i32) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_getfd takes two descriptor numbers and flags by value.
    let rc = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), n, 0 as libc::c_uint) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    let raw = libc::c_int::try_from(rc)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, format!("pidfd_getfd returned {rc}")))?;
    // SAFETY: the kernel just installed `raw` for us (close-on-exec).
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// A regular file or directory process `pid` holds open for access (not
/// `O_PATH`), as a copy taken with [`take_descriptor`].
pub struct HeldFile {
    /// Its number in the process.
    pub n: i32,
    pub file: fs::File,
    pub md: fs::Metadata,
    /// Its open file status flags (`F_GETFL`).
    pub flags: i32,
}

/// The regular files and directories process `pid` holds open, what an
/// exec transition revalidates (crate::entry, crate::apparmor). Pipes,
/// sockets and devices are left out; a process that cannot be read
/// (gone) holds nothing.
pub fn held_files(pid: u32) -> Vec<HeldFile> {
    let Ok(pidfd) = pidfd_open(pid) else { return Vec::new() };
    let Ok(entries) = fs::read_dir(format!("/proc/{pid}/fd")) else { return Vec::new() };
    let mut held = Vec::new();
    for n in entries.flatten().filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok()) {
        let Ok(file) = take_descriptor(pidfd.as_fd(), n) else { continue };
        let file = fs::File::from(file);
        let Ok(md) = file.metadata() else { continue };
        if !(md.is_file() || md.is_dir()) {
            continue;
        }
        // SAFETY: F_GETFL reads the open file's status flags.
        let flags = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETFL) };
        // O_PATH: no access through it to check.
        if flags < 0 || flags & libc::O_PATH != 0 {
            continue;
        }
        held.push(HeldFile { n, file, md, flags });
    }
    held
}

/// `pidfd_open(tid, PIDFD_THREAD)`: a handle to the thread `tid`.
pub fn thread_pidfd(tid: u32) -> io::Result<OwnedFd> {
    open_pidfd(tid, PIDFD_THREAD)
}

/// [`ThreadInfo`] of the task `fd` refers to (`ESRCH` once it exited).
pub fn thread_info(fd: BorrowedFd<'_>) -> io::Result<ThreadInfo> {
    let mut info = PidfdInfo { mask: PIDFD_INFO_PID | PIDFD_INFO_CGROUPID, ..PidfdInfo::default() };
    // SAFETY: PIDFD_GET_INFO reads `mask` and writes at most
    // size_of::<PidfdInfo>() bytes (encoded in the request number) into
    // `info`, which is valid and writable for the call.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), PIDFD_GET_INFO, &mut info as *mut PidfdInfo) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    if info.mask & PIDFD_INFO_CGROUPID == 0 {
        return Err(io::Error::new(io::ErrorKind::Unsupported, "PIDFD_GET_INFO gave no cgroup id (no cgroup v2?)"));
    }
    Ok(ThreadInfo { tgid: info.tgid, cgroup_id: info.cgroupid })
}

/// Pidfds of the last few threads a responder answered, kept open
/// (see the module docs). A held pidfd keeps the kernel's `struct pid`,
/// not the task or its number: a reused number is noticed because the
/// held pidfd then names a dead task (`ESRCH`) and is replaced.
#[derive(Default)]
pub struct RecentThreads {
    held: VecDeque<(u32, OwnedFd)>,
}

impl RecentThreads {
    pub const MAX_HELD: usize = 8;

    /// [`ThreadInfo`] of thread `tid`, through a held pidfd if one is.
    pub fn info(&mut self, tid: u32) -> io::Result<ThreadInfo> {
        if let Some(i) = self.held.iter().position(|(t, _)| *t == tid) {
            if let Ok(info) = thread_info(self.held[i].1.as_fd()) {
                return Ok(info);
            }
            self.held.remove(i);
        }
        let fd = thread_pidfd(tid)?;
        let info = thread_info(fd.as_fd())?;
        if self.held.len() == Self::MAX_HELD {
            self.held.pop_front();
        }
        self.held.push_back((tid, fd));
        Ok(info)
    }

    /// The pidfs id ([`pidfs_id`]) of thread `tid`, through the pidfd
    /// [`Self::info`] holds if it was just asked about `tid`.
    pub fn id(&mut self, tid: u32) -> io::Result<u64> {
        match self.held.iter().find(|(t, _)| *t == tid) {
            Some((_, fd)) => pidfs_id(fd.as_fd()),
            None => pidfs_id(thread_pidfd(tid)?.as_fd()),
        }
    }

    /// Whether a pidfd of `tid` is held.
    #[cfg(test)]
    fn holds(&self, tid: u32) -> bool {
        self.held.iter().any(|(t, _)| *t == tid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process() {
        let me = std::process::id();
        assert!(comm(me).is_some_and(|c| !c.is_empty() && !c.ends_with('\n')));
        let fd = pidfd_open(me).unwrap();
        match pidfs_id(fd.as_fd()) {
            Ok(id) => assert_eq!(process_id(me).unwrap(), id),
            Err(e) => assert_eq!(e.kind(), io::ErrorKind::Unsupported),
        }
        assert_eq!(pidfd_open(0).unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert_eq!(pidfd_open(u32::MAX).unwrap_err().kind(), io::ErrorKind::InvalidInput);
    }

    fn gettid() -> u32 {
        // SAFETY: gettid cannot fail.
        unsafe { libc::gettid() as u32 }
    }

    fn own_cgroup_id() -> u64 {
        let text = std::fs::read_to_string("/proc/self/cgroup").unwrap();
        let rel = text.lines().find_map(|l| l.strip_prefix("0::")).unwrap();
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let mount = crate::mountinfo::cgroup2_mounts(&mountinfo).into_iter().next().unwrap();
        let mount = mount.display();
        std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(format!("{mount}{rel}")).unwrap())
    }

    #[test]
    fn a_thread_pidfd_names_its_process_and_cgroup() {
        let me = std::process::id();
        let expected = own_cgroup_id();
        let (tid, info) = std::thread::spawn(|| {
            let tid = gettid();
            (tid, thread_info(thread_pidfd(tid).unwrap().as_fd()).unwrap())
        })
        .join()
        .unwrap();
        assert_ne!(tid, me);
        assert_eq!(info, ThreadInfo { tgid: me, cgroup_id: expected });
        // The thread has exited: its number names nothing now, or
        // another task (then with another identity than a held pidfd).
        let mut recent = RecentThreads::default();
        let main = recent.info(gettid()).unwrap();
        assert_eq!(main.tgid, me);
        assert!(recent.holds(gettid()));
    }

    #[test]
    fn process_info_names_the_process_its_uid_and_cgroup() {
        let me = std::process::id();
        let fd = pidfd_open(me).unwrap();
        let info = process_info(fd.as_fd()).unwrap();
        // SAFETY: geteuid cannot fail.
        let euid = unsafe { libc::geteuid() };
        assert_eq!(info, ProcessInfo { pid: me, euid, cgroup_id: own_cgroup_id() });
    }

    #[test]
    fn a_held_pidfd_of_an_exited_task_is_replaced() {
        let mut recent = RecentThreads::default();
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let pid = child.id();
        assert_eq!(recent.info(pid).unwrap().tgid, pid);
        child.kill().unwrap();
        child.wait().unwrap();
        // Reaped: the held pidfd names a dead task; a fresh open fails
        // too unless the number was reused (then it names the new task).
        match recent.info(pid) {
            Ok(info) => assert_eq!(info.tgid, pid),
            Err(e) => assert_eq!(e.raw_os_error(), Some(libc::ESRCH)),
        }
        // Bounded.
        for _ in 0..2 * RecentThreads::MAX_HELD {
            let _ = recent.info(gettid());
        }
        assert!(recent.held.len() <= RecentThreads::MAX_HELD);
    }
}
