//! Taking on another task's file credentials in one thread of the
//! daemon (crate::supervisor): the daemon makes a supervised call on the
//! caller's behalf, so the kernel's own permission checks (owner, mode
//! bits, sticky directories, capabilities) must see the caller, not
//! root.
//!
//! Linux keeps credentials per thread; the C library's `setgroups` and
//! `setfsuid` wrappers may broadcast to every thread, so the raw system
//! calls are used. Only the file system ids, the supplementary groups and
//! the effective capabilities change: the thread keeps root's permitted
//! set, so [`Creds::assume`] of the daemon's own credentials restores it.
//!
//! A listen records its caller's effective user, group and groups for a
//! Unix socket's peers ([`PeerIds`]): those a thread takes only in a
//! thread of its own, which ends with the call, so no worker is left
//! with ids it would have to give back.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// What the kernel's file permission checks read of a task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Creds {
    pub fsuid: u32,
    pub fsgid: u32,
    pub groups: Vec<u32>,
    /// Effective capabilities, bit `i`: capability `i`.
    pub effective: u64,
}

/// `struct __user_cap_header_struct` and `__user_cap_data_struct`
/// (`linux/capability.h`, version 3: two 32-bit words per set).
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(crate) struct CapData {
    pub effective: u32,
    pub permitted: u32,
    pub inheritable: u32,
}

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

fn io_check(rc: libc::c_long, what: &str) -> io::Result<()> {
    if rc < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("{what}: {e}")));
    }
    Ok(())
}

/// The calling thread's capability sets (also the launcher's:
/// crate::sandbox).
pub(crate) fn capget() -> io::Result<[CapData; 2]> {
    let mut header = CapHeader { version: LINUX_CAPABILITY_VERSION_3, pid: 0 };
    let mut data = [CapData::default(); 2];
    // SAFETY: version 3 reads two `CapData` into `data`, valid and
    // writable for the call.
    io_check(unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) }, "capget")?;
    Ok(data)
}

/// Sets the calling thread's capability sets.
pub(crate) fn capset(data: &[CapData; 2]) -> io::Result<()> {
    let mut header = CapHeader { version: LINUX_CAPABILITY_VERSION_3, pid: 0 };
    // SAFETY: version 3 reads two `CapData` from `data`; pid 0 is the
    // calling thread.
    io_check(unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) }, "capset")
}

impl Creds {
    /// The credentials a `/proc/TID/status` text shows (`None`: not such
    /// a text).
    pub fn from_status(status: &str) -> Option<Creds> {
        parse_status(status)
    }

    /// The calling thread's credentials.
    pub fn current() -> io::Result<Creds> {
        // SAFETY: no memory is touched by these calls with these
        // arguments (-1 reads the fs id without changing it).
        let (fsuid, fsgid) =
            unsafe { (libc::syscall(libc::SYS_setfsuid, -1) as u32, libc::syscall(libc::SYS_setfsgid, -1) as u32) };
        let groups = current_groups()?;
        let caps = capget()?;
        let effective = u64::from(caps[0].effective) | u64::from(caps[1].effective) << 32;
        Ok(Creds { fsuid, fsgid, groups, effective })
    }

    /// Makes the calling thread act with these credentials in file
    /// operations. Needs CAP_SETUID, CAP_SETGID (restored first from the
    /// permitted set) and a permitted set holding `effective`. Each
    /// change is made only where the thread's credentials differ: every
    /// one is a new `struct cred` in the kernel, and a supervised call
    /// switches between the daemon's and the caller's several times.
    pub fn assume(&self) -> io::Result<()> {
        const SETID: u32 = 1 << 6 | 1 << 7; // CAP_SETGID, CAP_SETUID
        let mut caps = capget()?;
        if caps[0].effective & SETID != SETID {
            // Everything permitted first: changing groups and ids needs it.
            for d in &mut caps {
                d.effective = d.permitted;
            }
            capset(&caps)?;
        }
        if current_groups()? != self.groups {
            let n = self.groups.len();
            // SAFETY: `groups` holds `n` ids, read by the kernel.
            io_check(unsafe { libc::syscall(libc::SYS_setgroups, n, self.groups.as_ptr()) }, "setgroups")?;
        }
        // SAFETY: integer arguments only; -1 only reads the fs id.
        // setfsuid/setfsgid return the old id and report no error:
        // checked below.
        unsafe {
            if libc::syscall(libc::SYS_setfsgid, -1) as u32 != self.fsgid {
                libc::syscall(libc::SYS_setfsgid, self.fsgid);
            }
            if libc::syscall(libc::SYS_setfsuid, -1) as u32 != self.fsuid {
                libc::syscall(libc::SYS_setfsuid, self.fsuid);
            }
        }
        // SAFETY: as above; -1 only reads.
        let (u, g) =
            unsafe { (libc::syscall(libc::SYS_setfsuid, -1) as u32, libc::syscall(libc::SYS_setfsgid, -1) as u32) };
        if (u, g) != (self.fsuid, self.fsgid) {
            return Err(io::Error::other(format!("cannot take fsuid {} fsgid {}", self.fsuid, self.fsgid)));
        }
        // The fs id change may have changed the file capabilities in the
        // effective set; now exactly the caller's (within ours).
        let mut caps = capget()?;
        let want = [self.effective as u32 & caps[0].permitted, (self.effective >> 32) as u32 & caps[1].permitted];
        if [caps[0].effective, caps[1].effective] != want {
            caps[0].effective = want[0];
            caps[1].effective = want[1];
            capset(&caps)?;
        }
        Ok(())
    }
}

/// The mode bits' part of the kernel's permission check
/// (`generic_permission` with this thread's file credentials: the
/// caller's, assumed) for `want` (`R_OK`, `W_OK`) on the object `object`
/// (`O_PATH`), made before SELinux's: a caller the mode bits refuse gets
/// `EACCES` without an AVC line, as from the kernel.
pub(crate) fn mode_allows(object: BorrowedFd<'_>, want: i32) -> Result<(), i32> {
    // SAFETY: a descriptor, a NUL-terminated string and integers.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_faccessat2,
            object.as_raw_fd(),
            c"".as_ptr(),
            want,
            libc::AT_EMPTY_PATH | libc::AT_EACCESS,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EACCES));
    }
    Ok(())
}

/// The calling thread's supplementary groups.
fn current_groups() -> io::Result<Vec<u32>> {
    // SAFETY: size 0 only counts the groups.
    let n = unsafe { libc::syscall(libc::SYS_getgroups, 0, std::ptr::null_mut::<libc::gid_t>()) };
    io_check(n, "getgroups")?;
    let mut groups = vec![0u32; n as usize];
    // SAFETY: `groups` has room for `n` ids.
    let got = unsafe { libc::syscall(libc::SYS_getgroups, n, groups.as_mut_ptr()) };
    io_check(got, "getgroups")?;
    groups.truncate(got as usize);
    Ok(groups)
}

/// Who a listening Unix socket shows its peers (`SO_PEERCRED`,
/// `SO_PEERGROUPS`): the effective user and group and the groups of the
/// task that listened (`update_peercred` keeps its credentials).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerIds {
    pub euid: u32,
    pub egid: u32,
    pub groups: Vec<u32>,
}

impl PeerIds {
    /// The ids a `/proc/PID/status` text shows (`None`: not such a text).
    pub fn from_status(status: &str) -> Option<PeerIds> {
        let field = |name: &str| field(status, name);
        let effective = |name: &str| field(name)?.split_ascii_whitespace().nth(1)?.parse().ok();
        Some(PeerIds { euid: effective("Uid:")?, egid: effective("Gid:")?, groups: groups(status)? })
    }

    /// Runs `call` in a thread of its own that takes these ids first, and
    /// ends with it (so no thread of the daemon keeps them).
    pub fn run_as<T: Send>(&self, call: impl FnOnce() -> T + Send) -> io::Result<T> {
        std::thread::scope(|s| {
            let thread = s.spawn(|| self.take().map(|()| call()));
            thread.join().unwrap_or_else(|_| Err(io::Error::other("the thread making the call ended abruptly")))
        })
    }

    /// Takes these ids in the calling thread: the group and the groups
    /// first, while its capabilities allow them, then the user (the real
    /// and saved user stay root's).
    pub(crate) fn take(&self) -> io::Result<()> {
        let keep = -1i64;
        // SAFETY: integer arguments; the raw calls change this thread only.
        io_check(unsafe { libc::syscall(libc::SYS_setresgid, keep, self.egid, keep) }, "setresgid")?;
        let n = self.groups.len();
        // SAFETY: `groups` holds `n` ids, read by the kernel.
        io_check(unsafe { libc::syscall(libc::SYS_setgroups, n, self.groups.as_ptr()) }, "setgroups")?;
        // SAFETY: as for setresgid.
        io_check(unsafe { libc::syscall(libc::SYS_setresuid, keep, self.euid, keep) }, "setresuid")
    }
}

/// Field `name`'s value in a `/proc/PID/status` text.
fn field<'a>(status: &'a str, name: &str) -> Option<&'a str> {
    status.lines().find_map(|l| l.strip_prefix(name)).map(str::trim)
}

/// The supplementary groups in a `/proc/PID/status` text.
fn groups(status: &str) -> Option<Vec<u32>> {
    field(status, "Groups:")?.split_ascii_whitespace().map(str::parse).collect::<Result<Vec<u32>, _>>().ok()
}

/// The ids in a `/proc/PID/status` text.
fn parse_status(status: &str) -> Option<Creds> {
    let field = |name: &str| field(status, name);
    // Uid: real effective saved fs
    let fs_id = |name: &str| field(name)?.split_ascii_whitespace().nth(3)?.parse().ok();
    let effective = u64::from_str_radix(field("CapEff:")?, 16).ok()?;
    Some(Creds { fsuid: fs_id("Uid:")?, fsgid: fs_id("Gid:")?, groups: groups(status)?, effective })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn status_ids_are_the_fs_ones() {
        let status = "Name:\tcat\nUid:\t1000\t1001\t1002\t1003\nGid:\t20\t21\t22\t23\nGroups:\t4 24 27 \nCapEff:\t0000000000000401\n";
        assert_eq!(
            parse_status(status),
            Some(Creds { fsuid: 1003, fsgid: 23, groups: vec![4, 24, 27], effective: 0x401 })
        );
        let none = "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nGroups:\t\nCapEff:\t000001ffffffffff\n";
        assert_eq!(parse_status(none).map(|c| c.groups), Some(vec![]));
        assert_eq!(parse_status("Uid:\t0\t0\t0\nGid:\t0\t0\t0\t0\nGroups:\nCapEff:\t0\n"), None, "no fs uid");
    }

    #[test]
    fn peers_see_the_effective_ids() {
        let status = "Uid:\t1000\t1001\t1002\t1003\nGid:\t20\t21\t22\t23\nGroups:\t4 24 \nCapEff:\t0\n";
        assert_eq!(PeerIds::from_status(status), Some(PeerIds { euid: 1001, egid: 21, groups: vec![4, 24] }));
        assert_eq!(PeerIds::from_status("Uid:\t5\nGid:\t5\t5\nGroups:\n"), None, "no effective uid");
    }

    /// The thread that takes the ids has them; the caller keeps its own.
    #[test]
    fn only_the_calls_thread_takes_the_ids() {
        if unsafe { libc::geteuid() } != 0 {
            return;
        }
        let mine = || PeerIds::from_status(&std::fs::read_to_string("/proc/thread-self/status").unwrap()).unwrap();
        let before = mine();
        let ids = PeerIds { euid: 65534, egid: 65533, groups: vec![7, 9] };
        assert_eq!(ids.run_as(mine).unwrap(), ids);
        assert_eq!(mine(), before);
    }

    #[test]
    fn this_thread_reads_its_own_credentials() {
        let mine = Creds::from_status(&std::fs::read_to_string("/proc/self/status").unwrap()).unwrap();
        assert_eq!(Creds::current().unwrap(), mine);
    }
}
