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
//! Unix socket's peers ([`PeerIds`]), as does a connect for its peer and
//! a System V `*get` for the object's owner: those calls are made by a
//! helper thread that takes the ids, makes the call and gives the ids
//! back, checked, before its next call; one that cannot give them back
//! ends, and the next call starts another. Why a thread that lasts: a
//! thread started per call cost more than the call, and the kernel
//! removes the shared memory segments a thread made when it ends
//! (`kernel.shm_rmid_forced`), before their caller could attach them.

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

    /// Runs `call` in the calling thread's helper ([`Helper`]), which
    /// takes these ids first and gives them back after.
    pub fn run_as<T: Send + 'static>(&self, call: impl FnOnce() -> T + Send + 'static) -> io::Result<T> {
        let ids = self.clone();
        let (answer, answered) = std::sync::mpsc::sync_channel(1);
        let job: Job = Box::new(move || {
            // The caller waits for this answer: it cannot be gone.
            let _ = answer.send(ids.take().map(|()| call()));
        });
        HELPER.with(|helper| Helper::run(&mut helper.borrow_mut(), job))?;
        answered.recv().unwrap_or_else(|_| Err(io::Error::other("the thread making the call ended abruptly")))
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

/// A call for a [`Helper`], which answers it itself.
type Job = Box<dyn FnOnce() + Send>;

thread_local! {
    /// The calling thread's helper, started at its first call.
    static HELPER: std::cell::RefCell<Option<Helper>> = const { std::cell::RefCell::new(None) };
}

/// A thread making the calls of one daemon thread (its owner, which
/// waits for each) with another task's ids; it ends when its owner does
/// (the channel closes), or when it cannot give the ids back.
struct Helper {
    jobs: std::sync::mpsc::Sender<Job>,
}

impl Helper {
    /// Hands `job` to `helper`, started first if there is none or the
    /// one there ended.
    fn run(helper: &mut Option<Helper>, job: Job) -> io::Result<()> {
        let job = match helper {
            Some(h) => match h.jobs.send(job) {
                Ok(()) => return Ok(()),
                Err(std::sync::mpsc::SendError(job)) => job,
            },
            None => job,
        };
        let started = Helper::start()?;
        started.jobs.send(job).map_err(|_| io::Error::other("the thread making the call ended at once"))?;
        *helper = Some(started);
        Ok(())
    }

    fn start() -> io::Result<Helper> {
        let (jobs, next) = std::sync::mpsc::channel::<Job>();
        let home = Home::current()?;
        std::thread::Builder::new().name("caller ids".into()).spawn(move || {
            while let Ok(job) = next.recv() {
                job();
                if let Err(e) = home.back() {
                    eprintln!(
                        "rampartd: a thread making calls with a caller's ids cannot give them back ({e}); it ends"
                    );
                    return;
                }
            }
        })?;
        Ok(Helper { jobs })
    }
}

/// The ids a helper starts with and gives back to after each call.
#[derive(Debug, PartialEq, Eq)]
struct Home {
    uids: [u32; 3],
    gids: [u32; 3],
    groups: Vec<u32>,
    caps: [(u32, u32); 2],
}

impl Home {
    /// The calling thread's.
    fn current() -> io::Result<Home> {
        let (mut uids, mut gids) = ([0u32; 3], [0u32; 3]);
        for (ids, call) in [(&mut uids, libc::SYS_getresuid), (&mut gids, libc::SYS_getresgid)] {
            let [real, effective, saved] = ids;
            // SAFETY: the call writes one id into each of the three.
            io_check(unsafe { libc::syscall(call, real, effective, saved) }, "getresuid")?;
        }
        let caps = capget()?.map(|d| (d.effective, d.permitted));
        Ok(Home { uids, gids, groups: current_groups()?, caps })
    }

    /// Back to these ids ([`PeerIds::take`] changed the effective user,
    /// group and the groups; a call may have changed the effective
    /// capabilities): every permitted capability made effective first
    /// (the permitted set stays while the real and saved user do), then
    /// the user, the groups and the group, then the effective
    /// capabilities; then checked.
    fn back(&self) -> io::Result<()> {
        let mut caps = capget()?;
        for d in &mut caps {
            d.effective = d.permitted;
        }
        capset(&caps)?;
        let keep = -1i64;
        // SAFETY: integer arguments; the raw calls change this thread only.
        io_check(unsafe { libc::syscall(libc::SYS_setresuid, keep, self.uids[1], keep) }, "setresuid")?;
        let n = self.groups.len();
        // SAFETY: `groups` holds `n` ids, read by the kernel.
        io_check(unsafe { libc::syscall(libc::SYS_setgroups, n, self.groups.as_ptr()) }, "setgroups")?;
        // SAFETY: as for setresuid.
        io_check(unsafe { libc::syscall(libc::SYS_setresgid, keep, self.gids[1], keep) }, "setresgid")?;
        let mut caps = capget()?;
        for (d, (effective, _)) in caps.iter_mut().zip(self.caps) {
            d.effective = effective;
        }
        capset(&caps)?;
        let now = Home::current()?;
        if now != *self {
            return Err(io::Error::other(format!("ids {now:?}, not {self:?}")));
        }
        Ok(())
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

    /// The thread that takes the ids has them; the caller keeps its own;
    /// the helper gives them back between calls, whatever a call did to
    /// its capabilities, and the next call takes the next caller's.
    #[test]
    fn only_the_calls_thread_takes_the_ids() {
        if unsafe { libc::geteuid() } != 0 {
            return;
        }
        fn mine() -> PeerIds {
            PeerIds::from_status(&std::fs::read_to_string("/proc/thread-self/status").unwrap()).unwrap()
        }
        let before = mine();
        let ids = PeerIds { euid: 65534, egid: 65533, groups: vec![7, 9] };
        assert_eq!(ids.run_as(mine).unwrap(), ids);
        assert_eq!(mine(), before);
        fn helper() -> i32 {
            unsafe { libc::gettid() }
        }
        let first = PeerIds { euid: 1000, egid: 1000, groups: vec![] };
        let tid = first.run_as(|| {
            let mut caps = capget().unwrap();
            caps[0].effective = 0;
            capset(&caps).unwrap();
            helper()
        });
        // As root, whose capabilities a call lowered: no user change
        // gives them back.
        let root = PeerIds { euid: 0, egid: 0, groups: vec![] };
        let as_root = root.run_as(|| {
            let mut caps = capget().unwrap();
            caps[0].effective = 0;
            caps[1].effective = 0;
            capset(&caps).unwrap();
            helper()
        });
        assert_eq!(as_root.unwrap(), tid.as_ref().copied().unwrap(), "the same helper after a root call");
        let second = PeerIds { euid: 1001, egid: 1002, groups: vec![3] };
        assert_eq!(second.run_as(|| (mine(), helper())).unwrap(), (second.clone(), tid.unwrap()), "the same helper");
        // Between calls, the helper is back to its own ids, real and
        // saved kept; this thread never left them.
        let home = PeerIds { euid: 0, egid: 0, groups: before.groups.clone() }.run_as(Home::current);
        assert_eq!(home.unwrap().unwrap(), Home::current().unwrap());
    }

    #[test]
    fn this_thread_reads_its_own_credentials() {
        let mine = Creds::from_status(&std::fs::read_to_string("/proc/self/status").unwrap()).unwrap();
        assert_eq!(Creds::current().unwrap(), mine);
    }
}
