//! The file operations fanotify never sees (chmod, chown, truncate by
//! name, unlink, rmdir, rename, link, extended attribute writes, mkdir,
//! mknod, symlink, the times: utime, utimes, futimesat, utimensat), and
//! opens asking to write (see "Opens"), which rampartd decides exactly
//! for every process `rampart run` started: the launcher installs a
//! seccomp filter that hands these calls to the daemon (user
//! notification, [`install_filter`]), and the daemon decides and makes
//! them (crate::supervisor). This module is what both sides agree on:
//! which calls, and how their arguments read ([`decode`]).
//!
//! The calls that signal a process by its pid (kill, tkill, tgkill,
//! rt_sigqueueinfo, rt_tgsigqueueinfo) are handed over too, for SELinux's
//! check between the two domains (crate::signals; `pidfd_send_signal`,
//! whose target is a descriptor, gets `ENOSYS`), and so are
//! `fcntl(F_SETOWN)` (the process the kernel will signal: checked as a
//! kill), `prlimit64` naming another process or setting limits, and
//! `setrlimit` (crate::limits), `capset` (crate::own_capabilities), the calls
//! that change or read a process's scheduling, group or session, the
//! caller's own included (crate::sched, crate::process_ids), and the
//! calls that make memory executable, where SELinux checks `execmem`
//! and the like, or the mapped file's `execute` (crate::exec_memory):
//! `mmap`, `mprotect` and `pkey_mprotect` with `PROT_EXEC`, each told
//! apart by the filter from its registers, and `memfd_create`, which the
//! daemon makes (crate::memfds); System V shared memory and semaphores,
//! `shmget`, `shmat`, `shmctl`, `semget`, `semop`, `semtimedop` and
//! `semctl`, decided per object (crate::ipc_objects; `shmat` with
//! `SHM_EXEC` by crate::exec_memory too); `personality` setting
//! `READ_IMPLIES_EXEC` (every readable mapping executable, unseen) is
//! refused (`EPERM`). `socket` and `socketpair` are handed over for
//! SELinux's `create` of the socket's class, `bind` for its `bind`,
//! `name_bind` and `node_bind`, `connect` for its `connect` and
//! `name_connect`, and `listen` for its `listen` (crate::sockets); a send with `MSG_FASTOPEN`, which
//! connects without a connect call, is refused (`EPERM`); io_uring,
//! which makes sockets (and renames, links and opens) without any of
//! these calls, is refused (`EPERM`). `execve` and `execveat` are handed over only to be
//! noted, so that the daemon tells an exec's program from the
//! interpreters it opens (crate::exec_calls). `inotify_add_watch` is
//! handed over for SELinux's `read` and `watch` of what it watches, and
//! made by the daemon (crate::watches), and `fcntl(F_SETFL)` with flags
//! lacking `O_APPEND`, which clears it where the file has it: SELinux's
//! `write` (crate::append_only); `fanotify_init` is refused
//! (`EPERM`): a group's marks are watches too (`watch_mount`,
//! `watch_sb`, `watch_with_perm`), and see "Opens".
//!
//! Only the x86-64 numbers are handed over; the same calls made through
//! the 32-bit entry (`int 0x80`) are refused (`EPERM`): coarser, never
//! laxer.
//!
//! # Opens
//!
//! With `opens` ([`install_filter`]), the filter also hands over every
//! `open`, `openat` and `creat` that asks to write, truncate or create
//! (flags with `O_WRONLY`, `O_RDWR`, `O_TRUNC` or `O_CREAT`, which
//! AppArmor counts as a request to create even of an existing file: a
//! register, read by the filter itself, so no other thread can change it
//! after the check). The daemon
//! decides the open, makes it with the caller's credentials and installs
//! the descriptor in the caller (crate::supervisor). The kernel then sees
//! the process open files for reading only, which lets an ignore mark
//! rest on reads alone for its domain (crate::marks, "Scope"). That
//! holds only if no other way to open for writing is left, so the filter
//! also refuses: `openat2` (`ENOSYS`: its flags are in memory; callers
//! fall back to `openat`), `open_by_handle_at` and
//! `fanotify_init` (`EPERM`, refused in any case: a group of the
//! process's own would receive its events' files opened with the flags
//! it chose, writable, unseen),
//! the x32 numbers (`ENOSYS`), and the i386 opens asking to write
//! (`EPERM`).

use self::IpcKind as Kind;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

use crate::bpf::{
    bpf, data_arg, data_arg_high, AUDIT_ARCH_I386, AUDIT_ARCH_X86_64, BPF_AND_K, BPF_JEQ_K, BPF_JGE_K, BPF_JSET_K,
    BPF_LD_W_ABS, BPF_RET_K, DATA_ARCH, DATA_NR,
};

/// An operand naming a file: a path (in the caller's memory) relative to
/// a directory descriptor, or a descriptor itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileArg {
    /// `path` (an address in the caller) relative to `dirfd`
    /// (`AT_FDCWD`: the caller's working directory). `follow`: a final
    /// symbolic link is followed. `empty_ok`: an empty path means
    /// `dirfd` itself (`AT_EMPTY_PATH`).
    Path { dirfd: i32, path: u64, follow: bool, empty_ok: bool },
    /// The caller's descriptor `fd` (fchmod, fchown).
    Fd(i32),
}

/// An attribute change: what SELinux checks as `setattr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attr {
    Mode(u32),
    Owner { uid: u32, gid: u32 },
}

/// One supervised call, its operands read from the registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// chmod, fchmod, fchmodat, fchmodat2, chown, fchown, lchown,
    /// fchownat.
    Setattr { target: FileArg, attr: Attr },
    /// `truncate(2)` (by name; always follows).
    Truncate { target: FileArg, length: i64 },
    /// unlink, unlinkat (`dir`: `AT_REMOVEDIR`), rmdir.
    Remove { name: FileArg, dir: bool },
    /// rename, renameat, renameat2.
    Rename { from: FileArg, to: FileArg, flags: u32 },
    /// link, linkat (`from` follows a final link only with
    /// `AT_SYMLINK_FOLLOW`).
    Link { from: FileArg, to: FileArg },
    /// setxattr, lsetxattr, fsetxattr: `name` and `value` (`size` bytes)
    /// are addresses in the caller.
    SetXattr { target: FileArg, name: u64, value: u64, size: u64, flags: i32 },
    /// removexattr, lremovexattr, fremovexattr.
    RemoveXattr { target: FileArg, name: u64 },
    /// open, openat, creat asking to write, truncate or create (see "Opens"):
    /// `flags` and `mode` as the call gave them.
    Open { target: FileArg, flags: i32, mode: u32 },
    /// mkdir, mkdirat, mknod, mknodat, symlink, symlinkat: a new object
    /// at `name`.
    Make { name: FileArg, what: Make },
    /// utime, utimes, futimesat, utimensat: the access and modification
    /// times at `times` (an address in the caller, 0: now), laid out as
    /// `layout` says.
    Times { target: FileArg, times: u64, layout: TimesLayout },
    /// kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo: signal
    /// `sig` (0: only the checks) to `to`. Not made by the daemon: once
    /// allowed, the kernel carries the call on (crate::signals).
    Signal { to: SignalTarget, sig: i32 },
    /// fcntl(F_SETOWN): `to` becomes the file's owner, which the kernel
    /// signals later (SIGIO, SIGURG, or the signal F_SETSIG set: never
    /// SIGKILL, SIGSTOP or SIGCHLD, see `owner`): checked as a kill of
    /// SIGIO now, and remembered (crate::file_owners).
    SetOwner { to: SignalTarget },
    /// prlimit64 of process `pid` (0: the caller), setting resource
    /// `resource`'s limits to those at `new` (if not 0), the old ones
    /// written at `old` (if not 0); setrlimit as prlimit64 of 0: of
    /// another process checked, then made by the kernel; of the caller's
    /// own, a change of its hard limit checked, any other change made by
    /// the daemon (crate::limits).
    Prlimit { pid: i32, resource: u32, new: u64, old: u64 },
    /// capset: a change of the caller's own capability sets (another
    /// process's the kernel refuses), checked as `self:process setcap`,
    /// then made by the kernel (crate::own_capabilities).
    Capset,
    /// A change (`set`: setpriority, sched_setparam, sched_setscheduler,
    /// sched_setattr, sched_setaffinity, ioprio_set, migrate_pages,
    /// move_pages) or a read (sched_get*, sched_rr_get_interval,
    /// ioprio_get) of the scheduling of `to`: checked, then made by the
    /// kernel (crate::sched).
    Sched { to: SchedTarget, set: bool },
    /// getpgid (`session` false) or getsid of process `pid` (handed over
    /// when not 0): checked, then made by the kernel
    /// (crate::process_ids).
    Ids { pid: i32, session: bool },
    /// setpgid of process `pid` (0: the caller): checked, then made by
    /// the kernel (crate::process_ids).
    SetPgid { pid: i32 },
    /// get_robust_list (of a thread not the caller), kcmp or
    /// process_madvise: a look into other processes that SELinux checks
    /// as ptrace's read mode; checked, then made by the kernel
    /// (crate::process_reads).
    Inspect { of: Inspected },
    /// mmap with `prot`, `flags` and descriptor `fd` as the call gave
    /// them (handed over with `PROT_EXEC`): checked, then made by the
    /// kernel (crate::exec_memory).
    Mmap { prot: u32, flags: u32, fd: i32 },
    /// memfd_create of the name at `name` in the caller's memory with
    /// `flags`: made by the daemon (crate::memfds).
    MemfdCreate { name: u64, flags: u32 },
    /// shmat of segment `id` with `flags`: checked, then made by the
    /// kernel (crate::ipc_objects, crate::exec_memory).
    Shmat { id: i32, flags: u32 },
    /// shmget (`key`, `arg` bytes, `flags`) or semget (`arg` semaphores):
    /// made by the daemon (crate::ipc_objects).
    IpcGet { kind: Kind, key: i32, arg: u64, flags: i32 },
    /// shmctl or semctl of object `id` (an index for the `*_STAT`
    /// commands), command `cmd`: checked, then made by the kernel
    /// (crate::ipc_objects).
    IpcCtl { kind: Kind, id: i32, cmd: i32 },
    /// semop, semtimedop of set `id`: checked, then made by the kernel
    /// (crate::ipc_objects).
    Semop { id: i32 },
    /// msgsnd (`receive` false) or msgrcv of queue `id`: checked, then
    /// made by the kernel (crate::ipc_objects).
    Message { id: i32, receive: bool },
    /// mprotect, pkey_mprotect of `[addr, addr + len)` to `prot` (handed
    /// over with `PROT_EXEC`): checked on the mappings there.
    Mprotect { addr: u64, len: u64, prot: u32 },
    /// execve, execveat: noted, then made by the kernel, so that the
    /// exec events it makes are told apart (crate::exec_calls).
    Exec,
    /// socket, socketpair of (`family`, `ty` with its flags, `protocol`):
    /// checked, then made by the kernel (crate::sockets).
    Socket { family: i32, ty: i32, protocol: i32 },
    /// bind of socket `fd` to the `len` bytes at `addr` in the caller:
    /// checked, then made by the daemon (crate::sockets).
    Bind { fd: i32, addr: u64, len: i32 },
    /// connect of socket `fd` to the `len` bytes at `addr`: checked, then
    /// made by the daemon (crate::sockets).
    Connect { fd: i32, addr: u64, len: i32 },
    /// listen on socket `fd` with `backlog`: checked, then made by the
    /// daemon (crate::sockets).
    Listen { fd: i32, backlog: i32 },
    /// clone of a process sharing the caller's working directory, root
    /// and umask (`CLONE_FS` without `CLONE_THREAD`): noted, then made by
    /// the kernel (crate::fs_sharing).
    CloneSharingFs,
    /// fcntl(F_SETFL) of `flags` without `O_APPEND` on descriptor `fd`:
    /// where the file has `O_APPEND`, a clear of it, checked; made by the
    /// daemon on its copy of the file (crate::append_only).
    SetFlags { fd: i32, flags: u32 },
    /// ftruncate of descriptor `fd` to `length`: checked (`write` of the
    /// file, whatever the descriptor's flags: a descriptor opened to
    /// append only would empty a log), made by the daemon on its copy of
    /// the file (crate::append_only).
    Ftruncate { fd: i32, length: i64 },
    /// fallocate of descriptor `fd` with `mode` other than allocating
    /// (punching a hole, zeroing, collapsing or inserting a range):
    /// checked (`write` where the descriptor was opened to append: it
    /// would rewrite a log), made by the daemon on its copy of the file
    /// (crate::append_only).
    Fallocate { fd: i32, mode: i32, offset: i64, len: i64 },
    /// inotify_add_watch of `mask` on `target` to instance `fd`: checked,
    /// then made by the daemon on its copy of the instance
    /// (crate::watches).
    Watch { fd: i32, target: FileArg, mask: u32 },
}

/// Whom a signal call names, as the kernel reads its pid arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignalTarget {
    /// The process holding thread `pid` (`kill` with a positive pid,
    /// `rt_sigqueueinfo`); a pid of none, `ESRCH`.
    Process(i32),
    /// Thread `tid`, of process `tgid` when the call names it (`tkill`,
    /// `tgkill`, `rt_tgsigqueueinfo`).
    Thread { tgid: Option<i32>, tid: i32 },
    /// Process group `pgid` (`kill` with 0: the caller's own, `-pgid`).
    /// `kill(INT_MIN)` names none (the kernel's `ESRCH`).
    Group(i32),
    /// Every process the caller may signal but itself (`kill(-1)`).
    Everyone,
    /// No process (`F_SETOWN` 0: the file has no owner any more).
    Nobody,
}

/// Whom a call that looks into other processes names
/// (crate::process_reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inspected {
    /// get_robust_list's thread (0: the caller).
    Thread(i32),
    /// kcmp's two threads, each of a process compared.
    Pair(i32, i32),
    /// process_madvise's pidfd: a descriptor of the caller.
    Pidfd(i32),
}

/// Whose scheduling a call names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedTarget {
    /// Thread `tid` (0: the caller).
    Thread(i32),
    /// Process group `pgid` (0: the caller's).
    Group(i32),
    /// Every process of a user (`PRIO_USER`, `IOPRIO_WHO_USER`).
    User,
    /// None: an argument the kernel refuses (`EINVAL`).
    Nobody,
}

/// How a call's two times are laid out in the caller's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimesLayout {
    /// `struct utimbuf`: two `time_t` (utime).
    Utimbuf,
    /// Two `struct timeval` (utimes, futimesat).
    Timeval,
    /// Two `struct timespec` (utimensat), `UTIME_NOW` and `UTIME_OMIT`
    /// included.
    Timespec,
}

/// What [`Op::Make`] creates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Make {
    /// A directory (mode before the umask).
    Dir { mode: u32 },
    /// A node: `mode` holds its type (`S_IFREG` when none), `dev` a
    /// device's number.
    Node { mode: u32, dev: u64 },
    /// A symbolic link to `target` (an address in the caller).
    Symlink { target: u64 },
}

/// x86-64 numbers of the supervised calls.
pub mod nr {
    pub const CHMOD: u32 = 90;
    pub const FCHMOD: u32 = 91;
    pub const CHOWN: u32 = 92;
    pub const FCHOWN: u32 = 93;
    pub const LCHOWN: u32 = 94;
    pub const TRUNCATE: u32 = 76;
    /// ftruncate: handed over; i386's ftruncate and ftruncate64 refused.
    pub const FTRUNCATE: u32 = 77;
    pub const I386_FTRUNCATE: [u32; 2] = [93, 194];
    /// fallocate: handed over (x86-64) or refused (i386) when its mode
    /// may change what the file holds (crate::append_only).
    pub const FALLOCATE: u32 = 285;
    pub const I386_FALLOCATE: u32 = 324;
    pub const RENAME: u32 = 82;
    pub const RMDIR: u32 = 84;
    pub const LINK: u32 = 86;
    pub const UNLINK: u32 = 87;
    pub const FCHOWNAT: u32 = 260;
    pub const UNLINKAT: u32 = 263;
    pub const RENAMEAT: u32 = 264;
    pub const LINKAT: u32 = 265;
    pub const FCHMODAT: u32 = 268;
    pub const RENAMEAT2: u32 = 316;
    pub const FCHMODAT2: u32 = 452;
    pub const SETXATTR: u32 = 188;
    pub const LSETXATTR: u32 = 189;
    pub const FSETXATTR: u32 = 190;
    pub const REMOVEXATTR: u32 = 197;
    pub const LREMOVEXATTR: u32 = 198;
    pub const FREMOVEXATTR: u32 = 199;
    pub const MKDIR: u32 = 83;
    pub const MKDIRAT: u32 = 258;
    pub const MKNOD: u32 = 133;
    pub const MKNODAT: u32 = 259;
    pub const SYMLINK: u32 = 88;
    pub const SYMLINKAT: u32 = 266;
    pub const UTIME: u32 = 132;
    pub const UTIMES: u32 = 235;
    pub const FUTIMESAT: u32 = 261;
    pub const UTIMENSAT: u32 = 280;
    pub const OPEN: u32 = 2;
    pub const CREAT: u32 = 85;
    pub const OPENAT: u32 = 257;
    pub const OPEN_BY_HANDLE_AT: u32 = 304;
    pub const IO_URING: [u32; 3] = [425, 426, 427];
    pub const OPENAT2: u32 = 437;
    /// Refused with or without "Opens": a group's events carry files
    /// opened with the flags it chose, and its marks are watches
    /// (crate::watches).
    pub const FANOTIFY_INIT: u32 = 300;
    pub const I386_FANOTIFY_INIT: u32 = 338;
    /// i386: open, creat, openat, open_by_handle_at.
    pub const I386_OPEN: u32 = 5;
    pub const I386_CREAT: u32 = 8;
    pub const I386_OPENAT: u32 = 295;
    pub const I386_OPEN_BY_HANDLE_AT: u32 = 342;
    pub const KILL: u32 = 62;
    pub const RT_SIGQUEUEINFO: u32 = 129;
    pub const TKILL: u32 = 200;
    pub const TGKILL: u32 = 234;
    pub const RT_TGSIGQUEUEINFO: u32 = 297;
    /// The calls that send a signal to a pid, handed over (crate::signals).
    pub const SIGNALS: [u32; 5] = [KILL, RT_SIGQUEUEINFO, TKILL, TGKILL, RT_TGSIGQUEUEINFO];
    /// Its target is a descriptor, which another thread may replace
    /// between the daemon's check and the kernel's call: `ENOSYS`
    /// (callers fall back to `kill`). Same number on i386.
    pub const PIDFD_SEND_SIGNAL: u32 = 424;
    /// i386: kill, rt_sigqueueinfo, tkill, tgkill, rt_tgsigqueueinfo.
    pub const I386_SIGNALS: [u32; 5] = [37, 178, 238, 270, 335];
    /// `memfd_create`: handed over, the daemon makes the memfd
    /// (crate::memfds); refused on i386.
    pub const MEMFD_CREATE: u32 = 319;
    pub const I386_MEMFD_CREATE: u32 = 356;
    /// `fcntl`, `ioctl`: handed over, or refused, for the commands that
    /// set a file's owner (super::owner).
    pub const FCNTL: u32 = 72;
    pub const IOCTL: u32 = 16;
    /// `prlimit64`: handed over (x86-64) or refused (i386) when it
    /// names another process or sets limits (crate::limits); `setrlimit`
    /// handed over or refused.
    pub const PRLIMIT64: u32 = 302;
    pub const I386_PRLIMIT64: u32 = 340;
    pub const SETRLIMIT: u32 = 160;
    pub const I386_SETRLIMIT: u32 = 75;
    /// `capset`: handed over (x86-64) or refused (i386).
    pub const CAPSET: u32 = 126;
    pub const I386_CAPSET: u32 = 185;
    /// i386: fcntl, fcntl64; ioctl.
    pub const I386_FCNTL: [u32; 2] = [55, 221];
    pub const I386_IOCTL: u32 = 54;
    /// Scheduling of another process (crate::sched), named by its pid in
    /// the first argument (0: the caller): sched_setparam,
    /// sched_setscheduler, sched_setaffinity, sched_setattr,
    /// migrate_pages, move_pages change it; sched_getparam,
    /// sched_getscheduler, sched_rr_get_interval, sched_getaffinity,
    /// sched_getattr read it.
    pub const SCHED_SET_BY_PID: [u32; 6] = [142, 144, 203, 314, 256, 279];
    /// migrate_pages, move_pages: they also look into the process's
    /// memory (which node holds each page), which the kernel checks
    /// first as ptrace's read mode (crate::process_reads).
    pub const MOVES_MEMORY: [u32; 2] = [256, 279];
    pub const SCHED_GET_BY_PID: [u32; 5] = [143, 145, 148, 204, 315];
    /// getpgid, getsid (pid): another process's group, session
    /// (crate::process_ids); i386 the same, refused.
    pub const GETPGID: u32 = 121;
    pub const GETSID: u32 = 124;
    /// setpgid (pid, pgid): the process whose group changes (0: the
    /// caller), `self:process setpgid` or a child's; i386: getpgid,
    /// getsid, setpgid.
    pub const SETPGID: u32 = 109;
    pub const I386_IDS_BY_PID: [u32; 3] = [132, 147, 57];
    /// get_robust_list (pid), kcmp (pid1, pid2), process_madvise
    /// (pidfd): looks into another process, ptrace's read mode
    /// (crate::process_reads). i386: get_robust_list by its pid (0 the
    /// caller), the others refused; process_madvise has one number.
    pub const GET_ROBUST_LIST: u32 = 274;
    pub const KCMP: u32 = 312;
    pub const PROCESS_MADVISE: u32 = 440;
    pub const I386_GET_ROBUST_LIST: u32 = 312;
    pub const I386_KCMP: u32 = 349;
    /// setpriority(which, who, prio); ioprio_set, ioprio_get (which, who).
    pub const SETPRIORITY: u32 = 141;
    pub const IOPRIO_SET: u32 = 251;
    pub const IOPRIO_GET: u32 = 252;
    /// The same on i386 (refused when they name another process):
    /// sched_setparam sched_getparam sched_setscheduler
    /// sched_getscheduler sched_rr_get_interval
    /// sched_rr_get_interval_time64 sched_setaffinity sched_getaffinity
    /// sched_setattr sched_getattr migrate_pages move_pages.
    pub const I386_SCHED_BY_PID: [u32; 12] = [154, 155, 156, 157, 161, 423, 241, 242, 351, 352, 294, 317];
    pub const I386_SETPRIORITY: u32 = 97;
    pub const I386_IOPRIO: [u32; 2] = [289, 290];
    /// Executable memory (crate::exec_memory): handed over (x86-64) or
    /// refused (i386) when it needs a check; `personality` setting
    /// `READ_IMPLIES_EXEC` refused.
    pub const MMAP: u32 = 9;
    pub const MPROTECT: [u32; 2] = [10, 329];
    /// shmget, shmat, shmctl, semget, semop, semctl, semtimedop: handed
    /// over (crate::ipc_objects); on i386 refused, with `ipc`'s shared
    /// memory and semaphore calls.
    pub const SHMGET: u32 = 29;
    pub const SHMAT: u32 = 30;
    pub const SHMCTL: u32 = 31;
    pub const SEMGET: u32 = 64;
    pub const SEMOP: u32 = 65;
    pub const SEMCTL: u32 = 66;
    pub const SEMTIMEDOP: u32 = 220;
    pub const MSGGET: u32 = 68;
    pub const MSGSND: u32 = 69;
    pub const MSGRCV: u32 = 70;
    pub const MSGCTL: u32 = 71;
    pub const PERSONALITY: u32 = 135;
    /// clone (its flags the first argument on both arches): handed over
    /// (x86-64) or refused (i386) with `CLONE_FS` and without
    /// `CLONE_THREAD` (crate::fs_sharing).
    pub const CLONE: u32 = 56;
    pub const I386_CLONE: u32 = 120;
    /// inotify_add_watch: handed over (crate::watches); refused on i386.
    pub const INOTIFY_ADD_WATCH: u32 = 254;
    pub const I386_INOTIFY_ADD_WATCH: u32 = 292;
    /// i386: mmap2; mprotect, pkey_mprotect; semget, semctl, shmget,
    /// shmctl, shmat, semtimedop_time64; ipc (its shared memory and
    /// semaphore calls); personality. The old `mmap`, whose arguments are
    /// in memory, is refused.
    pub const I386_MMAP2: u32 = 192;
    pub const I386_MPROTECT: [u32; 2] = [125, 380];
    pub const I386_SHM_SEM: [u32; 10] = [393, 394, 395, 396, 397, 399, 400, 401, 402, 420];
    pub const I386_IPC: u32 = 117;
    pub const I386_PERSONALITY: u32 = 136;
    pub const I386_OLD_MMAP: u32 = 90;
    /// execve, execveat: handed over (crate::exec_calls); refused on
    /// i386, where they would make exec events unannounced.
    pub const EXECVE: u32 = 59;
    pub const EXECVEAT: u32 = 322;
    pub const I386_EXECVE: u32 = 11;
    pub const I386_EXECVEAT: u32 = 358;
    /// uselib: opens a file for execution (an exec event) outside an
    /// exec call. Gone from recent kernels; refused wherever it is.
    pub const USELIB: u32 = 134;
    pub const I386_USELIB: u32 = 86;
    /// remap_file_pages: rearranges a shared file mapping's pages, which
    /// the kernel checks as a new mapping of the file
    /// (`security_mmap_file`) and nothing here sees; long deprecated:
    /// refused on both entries.
    pub const REMAP_FILE_PAGES: u32 = 216;
    pub const I386_REMAP_FILE_PAGES: u32 = 257;
    /// socket, socketpair, bind, connect, listen: handed over
    /// (crate::sockets). On i386 they are refused, and so are
    /// `socketcall`'s `SYS_SOCKET`, `SYS_BIND`, `SYS_CONNECT`,
    /// `SYS_LISTEN` and `SYS_SOCKETPAIR` (its first argument), and its
    /// sends that may carry an address, `SYS_SENDTO`, `SYS_SENDMSG` and
    /// `SYS_SENDMMSG`, whose `MSG_FASTOPEN` lies in memory.
    pub const SOCKET: u32 = 41;
    pub const CONNECT: u32 = 42;
    pub const BIND: u32 = 49;
    pub const LISTEN: u32 = 50;
    pub const SOCKETPAIR: u32 = 53;
    pub const I386_SOCKETS: [u32; 5] = [359, 360, 361, 362, 363];
    pub const I386_SOCKETCALL: u32 = 102;
    pub const SOCKETCALL_REFUSED: [u32; 8] = [1, 2, 3, 4, 8, 11, 16, 20];
    /// sendto, sendmsg, sendmmsg and their flags argument: refused with
    /// `MSG_FASTOPEN`, which connects to the message's address without
    /// a connect call (crate::sockets decides connects; neither the
    /// `socket_connect` hook, where Landlock's TCP rights are checked,
    /// nor the daemon sees it). On i386 no socket can be made, but an
    /// x86-64 process may use the 32-bit entry (`int $0x80`) on the
    /// socket it made: i386's sendto, sendmsg and sendmmsg likewise.
    pub const FASTOPEN: [(u32, u32); 3] = [(44, 3), (46, 2), (307, 3)];
    pub const I386_FASTOPEN: [(u32, u32); 3] = [(369, 3), (370, 2), (345, 3)];
    /// The bit that marks an x32 call (`__X32_SYSCALL_BIT`): past
    /// [`UNKNOWN_FROM`], so refused with every unknown number.
    #[cfg(test)]
    pub const X32_BIT: u32 = 0x4000_0000;
    /// The first number past the last call of Linux 6.18 (`file_setattr`,
    /// 469, in both numberings): a later call, which the filter does not
    /// know and which might do what a handed-over one does (as
    /// `openat2` did for `openat`), gets `ENOSYS`, and a program falls back
    /// to the older call. The x32 numbers are past it too.
    pub const UNKNOWN_FROM: u32 = 470;
    pub const ALL: [u32; 33] = [
        CHMOD,
        FCHMOD,
        CHOWN,
        FCHOWN,
        LCHOWN,
        TRUNCATE,
        RENAME,
        RMDIR,
        LINK,
        UNLINK,
        FCHOWNAT,
        UNLINKAT,
        RENAMEAT,
        LINKAT,
        FCHMODAT,
        RENAMEAT2,
        FCHMODAT2,
        SETXATTR,
        LSETXATTR,
        FSETXATTR,
        REMOVEXATTR,
        LREMOVEXATTR,
        FREMOVEXATTR,
        MKDIR,
        MKDIRAT,
        MKNOD,
        MKNODAT,
        SYMLINK,
        SYMLINKAT,
        UTIME,
        UTIMES,
        FUTIMESAT,
        UTIMENSAT,
    ];
    /// The same calls' i386 numbers (chmod lchown fchmod fchown chown
    /// lchown32 fchown32 chown32 fchownat fchmodat fchmodat2 truncate
    /// truncate64 unlink unlinkat rmdir rename renameat renameat2 link
    /// linkat mkdir mkdirat mknod mknodat symlink symlinkat utime utimes
    /// futimesat utimensat utimensat_time64): refused.
    pub const I386: [u32; 32] = [
        15, 16, 94, 95, 182, 198, 207, 212, 298, 306, 452, 92, 193, 10, 301, 40, 38, 302, 353, 9, 303, 39, 296, 14,
        297, 83, 304, 30, 271, 299, 320, 412,
    ];
}

const AT_FDCWD: i32 = libc::AT_FDCWD;
const AT_SYMLINK_NOFOLLOW: u64 = libc::AT_SYMLINK_NOFOLLOW as u64;
const AT_SYMLINK_FOLLOW: u64 = libc::AT_SYMLINK_FOLLOW as u64;
const AT_EMPTY_PATH: u64 = libc::AT_EMPTY_PATH as u64;
const AT_REMOVEDIR: u64 = libc::AT_REMOVEDIR as u64;

/// The operation x86-64 call `nr` makes with arguments `args` (`None`:
/// not a supervised call). Descriptor and id arguments are 32-bit in the
/// kernel: their upper halves are ignored, as the kernel ignores them.
pub fn decode(nr: u32, args: [u64; 6]) -> Option<Op> {
    let int = |i: usize| args[i] as u32 as i32;
    let path =
        |dirfd: i32, i: usize, follow: bool, empty_ok: bool| FileArg::Path { dirfd, path: args[i], follow, empty_ok };
    let owner = |i: usize| Attr::Owner { uid: args[i] as u32, gid: args[i + 1] as u32 };
    let mode = |i: usize| Attr::Mode(args[i] as u32 & 0o7777);
    Some(match nr {
        nr::CHMOD => Op::Setattr { target: path(AT_FDCWD, 0, true, false), attr: mode(1) },
        nr::FCHMOD => Op::Setattr { target: FileArg::Fd(int(0)), attr: mode(1) },
        nr::FCHMODAT => Op::Setattr { target: path(int(0), 1, true, false), attr: mode(2) },
        nr::FCHMODAT2 => Op::Setattr {
            target: path(int(0), 1, args[3] & AT_SYMLINK_NOFOLLOW == 0, args[3] & AT_EMPTY_PATH != 0),
            attr: mode(2),
        },
        nr::CHOWN => Op::Setattr { target: path(AT_FDCWD, 0, true, false), attr: owner(1) },
        nr::LCHOWN => Op::Setattr { target: path(AT_FDCWD, 0, false, false), attr: owner(1) },
        nr::FCHOWN => Op::Setattr { target: FileArg::Fd(int(0)), attr: owner(1) },
        nr::FCHOWNAT => Op::Setattr {
            target: path(int(0), 1, args[4] & AT_SYMLINK_NOFOLLOW == 0, args[4] & AT_EMPTY_PATH != 0),
            attr: owner(2),
        },
        nr::TRUNCATE => Op::Truncate { target: path(AT_FDCWD, 0, true, false), length: args[1] as i64 },
        nr::FTRUNCATE => Op::Ftruncate { fd: int(0), length: args[1] as i64 },
        nr::FALLOCATE if args[1] as u32 & !bits::FALLOC_FL_KEEP_SIZE != 0 => {
            Op::Fallocate { fd: int(0), mode: int(1), offset: args[2] as i64, len: args[3] as i64 }
        }
        nr::UNLINK => Op::Remove { name: path(AT_FDCWD, 0, false, false), dir: false },
        nr::RMDIR => Op::Remove { name: path(AT_FDCWD, 0, false, false), dir: true },
        nr::UNLINKAT => Op::Remove { name: path(int(0), 1, false, false), dir: args[2] & AT_REMOVEDIR != 0 },
        nr::RENAME => {
            Op::Rename { from: path(AT_FDCWD, 0, false, false), to: path(AT_FDCWD, 1, false, false), flags: 0 }
        }
        nr::RENAMEAT => Op::Rename { from: path(int(0), 1, false, false), to: path(int(2), 3, false, false), flags: 0 },
        nr::RENAMEAT2 => {
            Op::Rename { from: path(int(0), 1, false, false), to: path(int(2), 3, false, false), flags: args[4] as u32 }
        }
        nr::LINK => Op::Link { from: path(AT_FDCWD, 0, false, false), to: path(AT_FDCWD, 1, false, false) },
        nr::LINKAT => Op::Link {
            from: path(int(0), 1, args[4] & AT_SYMLINK_FOLLOW != 0, args[4] & AT_EMPTY_PATH != 0),
            to: path(int(2), 3, false, false),
        },
        nr::SETXATTR | nr::LSETXATTR | nr::FSETXATTR => Op::SetXattr {
            target: match nr {
                nr::FSETXATTR => FileArg::Fd(int(0)),
                _ => path(AT_FDCWD, 0, nr == nr::SETXATTR, false),
            },
            name: args[1],
            value: args[2],
            size: args[3],
            flags: int(4),
        },
        nr::OPEN => Op::Open { target: path(AT_FDCWD, 0, true, false), flags: int(1), mode: args[2] as u32 },
        nr::OPENAT => Op::Open { target: path(int(0), 1, true, false), flags: int(2), mode: args[3] as u32 },
        nr::CREAT => Op::Open {
            target: path(AT_FDCWD, 0, true, false),
            flags: libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
            mode: args[1] as u32,
        },
        nr::MKDIR => Op::Make { name: path(AT_FDCWD, 0, false, false), what: Make::Dir { mode: args[1] as u32 } },
        nr::MKDIRAT => Op::Make { name: path(int(0), 1, false, false), what: Make::Dir { mode: args[2] as u32 } },
        nr::MKNOD => Op::Make {
            name: path(AT_FDCWD, 0, false, false),
            what: Make::Node { mode: args[1] as u32, dev: args[2] as u32 as u64 },
        },
        nr::MKNODAT => Op::Make {
            name: path(int(0), 1, false, false),
            what: Make::Node { mode: args[2] as u32, dev: args[3] as u32 as u64 },
        },
        nr::SYMLINK => Op::Make { name: path(AT_FDCWD, 1, false, false), what: Make::Symlink { target: args[0] } },
        nr::SYMLINKAT => Op::Make { name: path(int(1), 2, false, false), what: Make::Symlink { target: args[0] } },
        nr::REMOVEXATTR | nr::LREMOVEXATTR | nr::FREMOVEXATTR => Op::RemoveXattr {
            target: match nr {
                nr::FREMOVEXATTR => FileArg::Fd(int(0)),
                _ => path(AT_FDCWD, 0, nr == nr::REMOVEXATTR, false),
            },
            name: args[1],
        },
        nr::UTIME => Op::Times { target: path(AT_FDCWD, 0, true, false), times: args[1], layout: TimesLayout::Utimbuf },
        nr::UTIMES => {
            Op::Times { target: path(AT_FDCWD, 0, true, false), times: args[1], layout: TimesLayout::Timeval }
        }
        // A null path: the descriptor itself (futimens is utimensat so).
        nr::FUTIMESAT => Op::Times {
            target: if args[1] == 0 { FileArg::Fd(int(0)) } else { path(int(0), 1, true, false) },
            times: args[2],
            layout: TimesLayout::Timeval,
        },
        nr::UTIMENSAT => Op::Times {
            target: if args[1] == 0 {
                FileArg::Fd(int(0))
            } else {
                path(int(0), 1, args[3] & AT_SYMLINK_NOFOLLOW == 0, args[3] & AT_EMPTY_PATH != 0)
            },
            times: args[2],
            layout: TimesLayout::Timespec,
        },
        nr::KILL => Op::Signal {
            to: match int(0) {
                0 => SignalTarget::Group(0),
                -1 => SignalTarget::Everyone,
                pid if pid < 0 => SignalTarget::Group(pid.wrapping_neg()),
                pid => SignalTarget::Process(pid),
            },
            sig: int(1),
        },
        nr::FCNTL if args[1] as u32 == owner::F_SETOWN => Op::SetOwner {
            to: match int(2) {
                0 => SignalTarget::Nobody,
                pgid if pgid < 0 => SignalTarget::Group(pgid.wrapping_neg()),
                pid => SignalTarget::Process(pid),
            },
        },
        nr::FCNTL if args[1] as u32 == append::F_SETFL && args[2] as u32 & append::O_APPEND == 0 => {
            Op::SetFlags { fd: int(0), flags: args[2] as u32 }
        }
        nr::PRLIMIT64 if int(0) != 0 || args[2] != 0 => {
            Op::Prlimit { pid: int(0), resource: args[1] as u32, new: args[2], old: args[3] }
        }
        nr::SETRLIMIT => Op::Prlimit { pid: 0, resource: args[0] as u32, new: args[1], old: 0 },
        nr::CAPSET => Op::Capset,
        n if nr::SCHED_SET_BY_PID.contains(&n) || nr::SCHED_GET_BY_PID.contains(&n) => {
            let to = match int(0) {
                pid if pid < 0 => SchedTarget::Nobody,
                pid => SchedTarget::Thread(pid),
            };
            Op::Sched { to, set: nr::SCHED_SET_BY_PID.contains(&n) }
        }
        // PRIO_PROCESS, PRIO_PGRP, PRIO_USER; IOPRIO_WHO_PROCESS, _PGRP,
        // _USER.
        nr::SETPRIORITY | nr::IOPRIO_SET | nr::IOPRIO_GET => {
            let which = int(0).wrapping_sub(i32::from(nr != nr::SETPRIORITY));
            let to = match (which, int(1)) {
                (_, who) if who < 0 => SchedTarget::Nobody,
                (0, who) => SchedTarget::Thread(who),
                (1, who) => SchedTarget::Group(who),
                (2, _) => SchedTarget::User,
                _ => SchedTarget::Nobody,
            };
            Op::Sched { to, set: nr != nr::IOPRIO_GET }
        }
        nr::MMAP => Op::Mmap { prot: args[2] as u32, flags: args[3] as u32, fd: args[4] as i32 },
        nr::SHMAT => Op::Shmat { id: int(0), flags: args[2] as u32 },
        nr::SHMGET => Op::IpcGet { kind: Kind::Shm, key: int(0), arg: args[1], flags: int(2) },
        nr::SEMGET => Op::IpcGet { kind: Kind::Sem, key: int(0), arg: args[1], flags: int(2) },
        nr::SHMCTL => Op::IpcCtl { kind: Kind::Shm, id: int(0), cmd: int(1) },
        nr::SEMCTL => Op::IpcCtl { kind: Kind::Sem, id: int(0), cmd: int(2) },
        nr::SEMOP | nr::SEMTIMEDOP => Op::Semop { id: int(0) },
        nr::MSGGET => Op::IpcGet { kind: Kind::Msg, key: int(0), arg: 0, flags: int(1) },
        nr::MSGCTL => Op::IpcCtl { kind: Kind::Msg, id: int(0), cmd: int(1) },
        nr::MSGSND => Op::Message { id: int(0), receive: false },
        nr::MSGRCV => Op::Message { id: int(0), receive: true },
        nr::MEMFD_CREATE => Op::MemfdCreate { name: args[0], flags: args[1] as u32 },
        nr::GETPGID => Op::Ids { pid: int(0), session: false },
        nr::GETSID => Op::Ids { pid: int(0), session: true },
        nr::SETPGID => Op::SetPgid { pid: int(0) },
        nr::GET_ROBUST_LIST => Op::Inspect { of: Inspected::Thread(int(0)) },
        nr::KCMP => Op::Inspect { of: Inspected::Pair(int(0), int(1)) },
        nr::PROCESS_MADVISE => Op::Inspect { of: Inspected::Pidfd(int(0)) },
        n if nr::MPROTECT.contains(&n) => Op::Mprotect { addr: args[0], len: args[1], prot: args[2] as u32 },
        nr::EXECVE | nr::EXECVEAT => Op::Exec,
        nr::SOCKET | nr::SOCKETPAIR => Op::Socket { family: int(0), ty: int(1), protocol: int(2) },
        nr::BIND => Op::Bind { fd: int(0), addr: args[1], len: int(2) },
        nr::CONNECT => Op::Connect { fd: int(0), addr: args[1], len: int(2) },
        nr::LISTEN => Op::Listen { fd: int(0), backlog: int(1) },
        nr::CLONE => Op::CloneSharingFs,
        nr::INOTIFY_ADD_WATCH => Op::Watch {
            fd: int(0),
            target: path(AT_FDCWD, 1, args[2] as u32 & crate::watches::IN_DONT_FOLLOW == 0, false),
            mask: args[2] as u32,
        },
        nr::RT_SIGQUEUEINFO => Op::Signal { to: SignalTarget::Process(int(0)), sig: int(1) },
        nr::TKILL => Op::Signal { to: SignalTarget::Thread { tgid: None, tid: int(0) }, sig: int(1) },
        nr::TGKILL | nr::RT_TGSIGQUEUEINFO => {
            Op::Signal { to: SignalTarget::Thread { tgid: Some(int(0)), tid: int(1) }, sig: int(2) }
        }
        _ => return None,
    })
}

/// A class of System V IPC objects decided per object
/// (crate::ipc_objects).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IpcKind {
    Shm,
    Sem,
    Msg,
}

/// Open flags that ask to write, truncate or create (see "Opens").
pub const WRITE_FLAGS: u32 = (libc::O_WRONLY | libc::O_RDWR | libc::O_TRUNC | libc::O_CREAT) as u32;

/// Where a filter instruction jumps: a return, or the check of an open's
/// flags (argument `i`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Target {
    Allow,
    Action,
    Enosys,
    Eperm,
    Flags(u32),
    /// An `fcntl`'s command (see [`owner`]).
    Fcntl,
    /// The signal `F_SETSIG` names.
    SetSig,
    /// The flags `F_SETFL` sets.
    SetFlags,
    /// An `ioctl`'s command.
    Ioctl,
    /// The pid of a call naming a process in its first argument
    /// (the `sched_*` calls): 0 is the caller.
    ByPid,
    /// A `prlimit64`'s pid and new limits: the caller's (pid 0) read
    /// alone passes.
    Limit,
    /// A `fallocate`'s mode: allocating alone passes.
    Fallocate,
    /// A `setpriority` or `ioprio_*`'s `which` and `who`: `who` 0 with
    /// `which` `k` (the kind that names a thread) is the caller.
    Who(u32),
    /// An `mmap`'s or `mprotect`'s protection (both the third argument).
    Protection,
    /// An `mmap`'s protection, then its flags: a shared mapping of a
    /// file too.
    Mmap,
    /// An `ipc`'s call (i386).
    Ipc,
    /// A `personality`'s flags.
    Personality,
    /// A `clone`'s flags.
    Clone,
    /// A `socketcall`'s call (i386).
    SocketCall,
    /// A `sendto`'s or `sendmmsg`'s flags (`Fastopen(3)`), a `sendmsg`'s
    /// (`Fastopen(2)`): the argument.
    Fastopen(u32),
}

/// Bits the filter tests (uapi mman, shm and personality headers).
mod bits {
    pub const PROT_READ: u32 = 0x1;
    pub const PROT_WRITE: u32 = 0x2;
    pub const PROT_EXEC: u32 = 0x4;
    pub const MAP_TYPE: u32 = 0x0f;
    pub const MAP_SHARED: u32 = 0x01;
    pub const MAP_SHARED_VALIDATE: u32 = 0x03;
    pub const MAP_ANONYMOUS: u32 = 0x20;
    pub const SHM_EXEC: u32 = 0o100000;
    /// `ipc(2)`'s calls (its low 16 bits) for semop, semget, semctl,
    /// semtimedop, msgsnd, msgrcv, msgget, msgctl, shmat, shmget, shmctl.
    pub const IPC_SHM_SEM: [u32; 11] = [1, 2, 3, 4, 11, 12, 13, 14, 21, 23, 24];
    pub const READ_IMPLIES_EXEC: u32 = 0x040_0000;
    /// `personality(0xffffffff)` only reads it.
    pub const PERSONALITY_QUERY: u32 = u32::MAX;
    /// A clone's flags: the new task shares the working directory, root
    /// and umask; is a thread of the caller.
    pub const CLONE_FS: u32 = 0x200;
    pub const CLONE_THREAD: u32 = 0x1_0000;
    /// A send that connects first (TCP Fast Open).
    pub const MSG_FASTOPEN: u32 = 0x2000_0000;
    /// `fallocate`'s mode that only allocates, keeping the size.
    pub const FALLOC_FL_KEEP_SIZE: u32 = 0x01;
}
pub use bits::{MAP_ANONYMOUS, MAP_SHARED, MAP_SHARED_VALIDATE, MAP_TYPE, PROT_EXEC, PROT_READ, PROT_WRITE, SHM_EXEC};

/// `fcntl` and `ioctl` commands that name a process the kernel will
/// signal (`SIGIO`, `SIGURG`, or what `F_SETSIG` sets) when the file is
/// ready: the file's owner, whose signals SELinux checks
/// (`selinux_file_send_sigiotask`) as it checks kill's.
pub mod owner {
    pub const F_SETOWN: u32 = 8;
    pub const F_SETSIG: u32 = 10;
    /// Its owner is in memory, which another thread may change after a
    /// check: refused.
    pub const F_SETOWN_EX: u32 = 15;
    /// dnotify (`F_NOTIFY`): a watch of the descriptor's directory, which
    /// SELinux checks as `watch` (`security_path_notify`), and which only
    /// the caller's own descriptor table can hold (the daemon cannot make
    /// it for it): refused, coarser (an obsolete interface; inotify's
    /// watches are handed over, crate::watches).
    pub const F_NOTIFY: u32 = 1026;
    /// `FIOSETOWN`, `SIOCSPGRP`: the owner in memory, refused.
    pub const IOCTLS: [u32; 2] = [0x8901, 0x8902];
    /// Signals `F_SETSIG` may not choose: their own permissions
    /// (`sigkill`, `sigstop`, `sigchld`) would have to be checked at
    /// `F_SETOWN`, which checks `signal`.
    pub const SETSIG_REFUSED: [u32; 3] = [libc::SIGKILL as u32, libc::SIGSTOP as u32, libc::SIGCHLD as u32];
}

/// `fcntl(F_SETFL)` with flags lacking `O_APPEND`: it clears `O_APPEND`
/// where the file has it, which SELinux checks as `write`
/// (crate::append_only). Handed over (x86-64) or refused (i386).
pub mod append {
    pub const F_SETFL: u32 = libc::F_SETFL as u32;
    pub const O_APPEND: u32 = libc::O_APPEND as u32;
}

/// The calls one arch's filter decides by an argument: file owners (see
/// [`owner`]), `prlimit64` of another process, and executable memory.
struct ByArgument {
    fcntl: &'static [u32],
    ioctl: u32,
    /// Calls naming a process by the pid in their first argument.
    by_pid: &'static [&'static [u32]],
    /// `prlimit64`.
    prlimit: u32,
    /// `fallocate`.
    fallocate: u32,
    /// `setpriority`, then `ioprio_set` and `ioprio_get`, where they
    /// are decided by whom they name (none: handed over whoever it is).
    setpriority: Option<u32>,
    ioprio: &'static [u32],
    mmap: u32,
    mprotect: [u32; 2],
    /// i386's `ipc`, whose shared memory calls are refused.
    ipc: Option<u32>,
    /// i386's `socketcall`, whose socket-making calls are refused.
    socketcall: Option<u32>,
    /// The sends that may carry `MSG_FASTOPEN` (a connect without a
    /// connect call), with their flags argument: refused with it.
    fastopen: &'static [(u32, u32)],
    personality: u32,
    clone: u32,
    /// `F_SETOWN`, calls on another process and executable memory go to
    /// the daemon (x86-64); else they are refused.
    hand_over: bool,
}

/// A filter under construction: instructions whose jumps name targets,
/// placed (forward only, as classic BPF jumps) by [`Asm::finish`].
#[derive(Default)]
struct Asm {
    code: Vec<(libc::sock_filter, Option<Target>, Option<Target>)>,
}

impl Asm {
    fn op(&mut self, code: u16, k: u32) {
        self.code.push((bpf(code, k, 0, 0), None, None));
    }
    fn jump(&mut self, code: u16, k: u32, yes: Target) {
        self.code.push((bpf(code, k, 0, 0), Some(yes), None));
    }
    /// The accumulator equal to one of `values`: `yes`; else allowed.
    fn tests_then_allow(&mut self, values: &[u32], yes: Target) {
        for (i, &v) in values.iter().enumerate() {
            let no = (i + 1 == values.len()).then_some(Target::Allow);
            self.code.push((bpf(BPF_JEQ_K, v, 0, 0), Some(yes), no));
        }
    }
    /// Appends the targets after the tests and resolves every jump:
    /// `action` for [`Target::Action`].
    fn finish(mut self, action: u32, flag_args: &[u32], owners: &ByArgument) -> Vec<libc::sock_filter> {
        let mut at = Vec::new();
        self.op(BPF_RET_K, libc::SECCOMP_RET_ALLOW);
        for &i in flag_args {
            at.push((Target::Flags(i), self.code.len()));
            self.op(BPF_LD_W_ABS, data_arg(i));
            self.code.push((bpf(BPF_JSET_K, WRITE_FLAGS, 0, 0), Some(Target::Action), Some(Target::Allow)));
        }
        at.push((Target::Fcntl, self.code.len()));
        self.op(BPF_LD_W_ABS, data_arg(1));
        self.jump(BPF_JEQ_K, owner::F_SETOWN, if owners.hand_over { Target::Action } else { Target::Eperm });
        self.jump(BPF_JEQ_K, owner::F_SETOWN_EX, Target::Eperm);
        self.jump(BPF_JEQ_K, owner::F_NOTIFY, Target::Eperm);
        self.jump(BPF_JEQ_K, append::F_SETFL, Target::SetFlags);
        self.code.push((bpf(BPF_JEQ_K, owner::F_SETSIG, 0, 0), Some(Target::SetSig), Some(Target::Allow)));
        // F_SETFL without O_APPEND may clear it (crate::append_only).
        at.push((Target::SetFlags, self.code.len()));
        self.op(BPF_LD_W_ABS, data_arg(2));
        let setfl = if owners.hand_over { Target::Action } else { Target::Eperm };
        self.code.push((bpf(BPF_JSET_K, append::O_APPEND, 0, 0), Some(Target::Allow), Some(setfl)));
        at.push((Target::SetSig, self.code.len()));
        self.op(BPF_LD_W_ABS, data_arg(2));
        self.tests_then_allow(&owner::SETSIG_REFUSED, Target::Eperm);
        at.push((Target::Ioctl, self.code.len()));
        self.op(BPF_LD_W_ABS, data_arg(1));
        self.tests_then_allow(&owner::IOCTLS, Target::Eperm);
        // prlimit64(0, ...), sched_*(0, ...): the caller itself, allowed;
        // another pid not.
        at.push((Target::ByPid, self.code.len()));
        self.op(BPF_LD_W_ABS, data_arg(0));
        let other = if owners.hand_over { Target::Action } else { Target::Eperm };
        self.code.push((bpf(BPF_JEQ_K, 0, 0, 0), Some(Target::Allow), Some(other)));
        // prlimit64(0, r, NULL, old): reads the caller's own limits;
        // another pid, or new limits (a pointer: both words), not.
        at.push((Target::Limit, self.code.len()));
        self.op(BPF_LD_W_ABS, data_arg(0));
        self.code.push((bpf(BPF_JEQ_K, 0, 0, 0), None, Some(other)));
        self.op(BPF_LD_W_ABS, data_arg(2));
        self.code.push((bpf(BPF_JEQ_K, 0, 0, 0), None, Some(other)));
        self.op(BPF_LD_W_ABS, data_arg_high(2));
        self.code.push((bpf(BPF_JEQ_K, 0, 0, 0), Some(Target::Allow), Some(other)));
        // fallocate allocating (mode 0 or FALLOC_FL_KEEP_SIZE) passes;
        // a mode that rewrites or moves what the file holds, not.
        at.push((Target::Fallocate, self.code.len()));
        self.op(BPF_LD_W_ABS, data_arg(1));
        self.code.push((bpf(BPF_JSET_K, !bits::FALLOC_FL_KEEP_SIZE, 0, 0), Some(other), Some(Target::Allow)));
        // setpriority(PRIO_PROCESS, 0), ioprio_*(IOPRIO_WHO_PROCESS, 0):
        // the caller; any other `which` or `who` another process.
        for k in [0, 1] {
            at.push((Target::Who(k), self.code.len()));
            self.op(BPF_LD_W_ABS, data_arg(0));
            self.code.push((bpf(BPF_JEQ_K, k, 0, 0), None, Some(other)));
            self.op(BPF_LD_W_ABS, data_arg(1));
            self.code.push((bpf(BPF_JEQ_K, 0, 0, 0), Some(Target::Allow), Some(other)));
        }
        // Executable memory where SELinux checks it (crate::exec_memory):
        // mmap and mprotect with PROT_EXEC (anonymous memory needs
        // `execmem`, a file `execute`), the protection their third
        // argument.
        at.push((Target::Protection, self.code.len()));
        self.op(BPF_LD_W_ABS, data_arg(2));
        self.code.push((bpf(BPF_JSET_K, bits::PROT_EXEC, 0, 0), Some(other), Some(Target::Allow)));
        // mmap: executable, or a shared mapping of a file (its descriptor
        // may be open for writing: crate::exec_memory), the type in the
        // flags' low bits (MAP_SHARED, MAP_SHARED_VALIDATE).
        at.push((Target::Mmap, self.code.len()));
        self.op(BPF_LD_W_ABS, data_arg(2));
        self.jump(BPF_JSET_K, bits::PROT_EXEC, other);
        self.op(BPF_LD_W_ABS, data_arg(3));
        self.jump(BPF_JSET_K, bits::MAP_ANONYMOUS, Target::Allow);
        self.op(BPF_AND_K, bits::MAP_TYPE);
        self.jump(BPF_JEQ_K, bits::MAP_SHARED, other);
        self.code.push((bpf(BPF_JEQ_K, bits::MAP_SHARED_VALIDATE, 0, 0), Some(other), Some(Target::Allow)));
        at.push((Target::Ipc, self.code.len()));
        self.op(BPF_LD_W_ABS, data_arg(0));
        self.op(BPF_AND_K, 0xffff);
        self.tests_then_allow(&bits::IPC_SHM_SEM, Target::Eperm);
        at.push((Target::SocketCall, self.code.len()));
        self.op(BPF_LD_W_ABS, data_arg(0));
        self.tests_then_allow(&nr::SOCKETCALL_REFUSED, Target::Eperm);
        for &(_, arg) in owners.fastopen {
            if at.iter().any(|(t, _)| *t == Target::Fastopen(arg)) {
                continue;
            }
            at.push((Target::Fastopen(arg), self.code.len()));
            self.op(BPF_LD_W_ABS, data_arg(arg));
            self.code.push((bpf(BPF_JSET_K, bits::MSG_FASTOPEN, 0, 0), Some(Target::Eperm), Some(Target::Allow)));
        }
        at.push((Target::Personality, self.code.len()));
        self.op(BPF_LD_W_ABS, data_arg(0));
        self.jump(BPF_JEQ_K, bits::PERSONALITY_QUERY, Target::Allow);
        self.code.push((bpf(BPF_JSET_K, bits::READ_IMPLIES_EXEC, 0, 0), Some(Target::Eperm), Some(Target::Allow)));
        // A new process sharing the caller's fs_struct: a thread shares
        // it too, and goes at an exec.
        at.push((Target::Clone, self.code.len()));
        self.op(BPF_LD_W_ABS, data_arg(0));
        self.jump(BPF_JSET_K, bits::CLONE_THREAD, Target::Allow);
        self.code.push((bpf(BPF_JSET_K, bits::CLONE_FS, 0, 0), Some(other), Some(Target::Allow)));
        for (t, k) in [
            (Target::Allow, libc::SECCOMP_RET_ALLOW),
            (Target::Action, action),
            (Target::Enosys, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
            (Target::Eperm, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
        ] {
            at.push((t, self.code.len()));
            self.op(BPF_RET_K, k);
        }
        let place = |from: usize, t: Option<Target>| -> u8 {
            let Some(t) = t else { return 0 };
            let to = at.iter().find(|(x, _)| *x == t).map_or(from + 1, |&(_, pos)| pos);
            // Every block is far shorter than 256 instructions.
            u8::try_from(to - from - 1).unwrap_or(u8::MAX)
        };
        self.code
            .iter()
            .enumerate()
            .map(|(i, &(mut ins, yes, no))| {
                ins.jt = place(i, yes);
                ins.jf = place(i, no);
                ins
            })
            .collect()
    }
}

/// The block of one arch: calls in `to_action` get `action`, `open_flags`
/// (number, flags argument) get it when their flags ask to write,
/// `enosys` and `eperm` are refused, and so is every number from
/// [`nr::UNKNOWN_FROM`] on (`ENOSYS`: x32's among them).
fn block(
    action: u32,
    to_action: &[u32],
    open_flags: &[(u32, u32)],
    enosys: &[u32],
    eperm: &[u32],
    owners: &ByArgument,
) -> Vec<libc::sock_filter> {
    let mut asm = Asm::default();
    asm.op(BPF_LD_W_ABS, DATA_NR);
    asm.jump(BPF_JGE_K, nr::UNKNOWN_FROM, Target::Enosys);
    for &n in owners.fcntl {
        asm.jump(BPF_JEQ_K, n, Target::Fcntl);
    }
    asm.jump(BPF_JEQ_K, owners.ioctl, Target::Ioctl);
    for &n in owners.by_pid.iter().copied().flatten() {
        asm.jump(BPF_JEQ_K, n, Target::ByPid);
    }
    asm.jump(BPF_JEQ_K, owners.prlimit, Target::Limit);
    asm.jump(BPF_JEQ_K, owners.fallocate, Target::Fallocate);
    if let Some(n) = owners.setpriority {
        asm.jump(BPF_JEQ_K, n, Target::Who(0));
    }
    for &n in owners.ioprio {
        asm.jump(BPF_JEQ_K, n, Target::Who(1));
    }
    asm.jump(BPF_JEQ_K, owners.mmap, Target::Mmap);
    for &n in &owners.mprotect {
        asm.jump(BPF_JEQ_K, n, Target::Protection);
    }
    if let Some(ipc) = owners.ipc {
        asm.jump(BPF_JEQ_K, ipc, Target::Ipc);
    }
    if let Some(socketcall) = owners.socketcall {
        asm.jump(BPF_JEQ_K, socketcall, Target::SocketCall);
    }
    for &(n, arg) in owners.fastopen {
        asm.jump(BPF_JEQ_K, n, Target::Fastopen(arg));
    }
    asm.jump(BPF_JEQ_K, owners.personality, Target::Personality);
    asm.jump(BPF_JEQ_K, owners.clone, Target::Clone);
    for &n in to_action {
        asm.jump(BPF_JEQ_K, n, Target::Action);
    }
    for &n in enosys {
        asm.jump(BPF_JEQ_K, n, Target::Enosys);
    }
    for &n in eperm {
        asm.jump(BPF_JEQ_K, n, Target::Eperm);
    }
    let mut flag_args = Vec::new();
    for &(n, arg) in open_flags {
        asm.jump(BPF_JEQ_K, n, Target::Flags(arg));
        if !flag_args.contains(&arg) {
            flag_args.push(arg);
        }
    }
    asm.finish(action, &flag_args, owners)
}

/// The filter: on x86-64 the supervised calls go to the listener, on
/// i386 they are refused, everything else is allowed; with `opens`, also
/// the opens of "Opens".
fn program(opens: bool) -> Vec<libc::sock_filter> {
    let notify = libc::SECCOMP_RET_USER_NOTIF;
    let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    let mut handed = nr::ALL.to_vec();
    handed.extend(nr::SIGNALS);
    handed.extend([nr::MEMFD_CREATE, nr::KCMP, nr::PROCESS_MADVISE, nr::EXECVE, nr::EXECVEAT]);
    handed.extend([nr::SOCKET, nr::SOCKETPAIR, nr::BIND, nr::CONNECT, nr::LISTEN, nr::INOTIFY_ADD_WATCH]);
    handed.extend([nr::SHMGET, nr::SHMAT, nr::SHMCTL, nr::SEMGET, nr::SEMOP, nr::SEMCTL, nr::SEMTIMEDOP]);
    handed.extend([nr::MSGGET, nr::MSGSND, nr::MSGRCV, nr::MSGCTL]);
    // Scheduling and ids of any process, the caller's own included, which
    // SELinux checks too (`self:process setsched`...).
    handed.extend(nr::SCHED_SET_BY_PID.into_iter().chain(nr::SCHED_GET_BY_PID));
    handed.extend([nr::SETPRIORITY, nr::IOPRIO_SET, nr::IOPRIO_GET, nr::GETPGID, nr::GETSID, nr::SETPGID]);
    handed.extend([nr::FTRUNCATE, nr::SETRLIMIT, nr::CAPSET]);
    let mut i386_refused = nr::I386.to_vec();
    i386_refused.extend(nr::I386_SIGNALS);
    i386_refused.extend([nr::PIDFD_SEND_SIGNAL, nr::I386_MEMFD_CREATE, nr::I386_KCMP, nr::PROCESS_MADVISE]);
    i386_refused.extend([nr::I386_EXECVE, nr::I386_EXECVEAT, nr::I386_USELIB, nr::I386_REMAP_FILE_PAGES]);
    i386_refused.extend(nr::I386_SOCKETS);
    i386_refused.extend(nr::I386_SHM_SEM);
    i386_refused.extend([nr::I386_INOTIFY_ADD_WATCH, nr::I386_FANOTIFY_INIT]);
    i386_refused.extend(nr::IO_URING);
    i386_refused.extend(nr::I386_FTRUNCATE);
    i386_refused.extend([nr::I386_SETRLIMIT, nr::I386_CAPSET]);
    let owners = ByArgument {
        fcntl: &[nr::FCNTL],
        ioctl: nr::IOCTL,
        by_pid: &[&[nr::GET_ROBUST_LIST]],
        prlimit: nr::PRLIMIT64,
        fallocate: nr::FALLOCATE,
        setpriority: None,
        ioprio: &[],
        mmap: nr::MMAP,
        mprotect: nr::MPROTECT,
        ipc: None,
        socketcall: None,
        fastopen: &nr::FASTOPEN,
        personality: nr::PERSONALITY,
        clone: nr::CLONE,
        hand_over: true,
    };
    let mut refused = nr::IO_URING.to_vec();
    // fanotify's marks are watches, which SELinux checks (`watch`,
    // `watch_mount`, `watch_sb`, `watch_with_perm`...; crate::watches
    // for inotify's): refused with or without `opens`.
    refused.extend([nr::USELIB, nr::FANOTIFY_INIT, nr::REMAP_FILE_PAGES]);
    let x86_64 = if opens {
        handed.push(nr::CREAT);
        refused.push(nr::OPEN_BY_HANDLE_AT);
        let enosys = [nr::OPENAT2, nr::PIDFD_SEND_SIGNAL];
        block(notify, &handed, &[(nr::OPEN, 1), (nr::OPENAT, 2)], &enosys, &refused, &owners)
    } else {
        block(notify, &handed, &[], &[nr::PIDFD_SEND_SIGNAL], &refused, &owners)
    };
    let owners = ByArgument {
        fcntl: &nr::I386_FCNTL,
        ioctl: nr::I386_IOCTL,
        by_pid: &[&[nr::I386_GET_ROBUST_LIST], &nr::I386_SCHED_BY_PID, &nr::I386_IDS_BY_PID],
        prlimit: nr::I386_PRLIMIT64,
        fallocate: nr::I386_FALLOCATE,
        setpriority: Some(nr::I386_SETPRIORITY),
        ioprio: &nr::I386_IOPRIO,
        mmap: nr::I386_MMAP2,
        mprotect: nr::I386_MPROTECT,
        ipc: Some(nr::I386_IPC),
        socketcall: Some(nr::I386_SOCKETCALL),
        fastopen: &nr::I386_FASTOPEN,
        personality: nr::I386_PERSONALITY,
        clone: nr::I386_CLONE,
        hand_over: false,
    };
    i386_refused.push(nr::I386_OLD_MMAP);
    let i386 = if opens {
        i386_refused.extend([nr::I386_CREAT, nr::I386_OPEN_BY_HANDLE_AT, nr::OPENAT2]);
        block(eperm, &i386_refused, &[(nr::I386_OPEN, 1), (nr::I386_OPENAT, 2)], &[], &[], &owners)
    } else {
        block(eperm, &i386_refused, &[], &[], &[], &owners)
    };
    let mut prog = Vec::new();
    for (arch, block) in [(AUDIT_ARCH_X86_64, x86_64), (AUDIT_ARCH_I386, i386)] {
        prog.push(bpf(BPF_LD_W_ABS, DATA_ARCH, 0, 0));
        prog.push(bpf(BPF_JEQ_K, arch, 0, u8::try_from(block.len()).unwrap_or(u8::MAX)));
        prog.extend(block);
    }
    prog.push(bpf(BPF_RET_K, libc::SECCOMP_RET_ALLOW, 0, 0));
    prog
}

/// Installs the filter on this process (inherited by everything it
/// starts), with the opens of "Opens" if `opens`, and returns its
/// listener, for rampartd. Once the listener is
/// closed by everyone, the supervised calls fail with `ENOSYS`: without
/// the daemon nothing is let through. The wait for an answer is killable
/// only once the daemon has received the call
/// (`SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV`), so a signal cannot make
/// the call restart after the daemon made it. Needs `no_new_privs` or
/// CAP_SYS_ADMIN.
pub fn install_filter(opens: bool) -> io::Result<OwnedFd> {
    if !cfg!(target_arch = "x86_64") {
        return Err(io::Error::new(io::ErrorKind::Unsupported, "the supervised calls are known on x86-64 only"));
    }
    let prog = program(opens);
    if prog.len() > usize::from(u16::MAX) {
        return Err(io::Error::other("the supervising filter is too long"));
    }
    let fprog = libc::sock_fprog { len: prog.len() as u16, filter: prog.as_ptr() as *mut libc::sock_filter };
    let flags = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER | libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
    // SAFETY: `fprog` points at `prog`, alive across the call; the kernel
    // copies the program.
    let rc = unsafe {
        libc::syscall(libc::SYS_seccomp, libc::SECCOMP_SET_MODE_FILTER, flags, &fprog as *const libc::sock_fprog)
    };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("seccomp (user notification): {e}")));
    }
    let raw = i32::try_from(rc).map_err(|_| io::Error::other(format!("seccomp returned {rc}")))?;
    // SAFETY: the kernel just installed `raw` as the listener, ours alone.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    use crate::bpf::{run, run64};

    const EPERM: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    const ENOSYS: u32 = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
    const NOTIFY: u32 = libc::SECCOMP_RET_USER_NOTIF;
    const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;

    #[test]
    fn the_filter_hands_over_exactly_its_calls() {
        for opens in [false, true] {
            let prog = program(opens);
            for n in nr::ALL {
                assert_eq!(run(&prog, n, AUDIT_ARCH_X86_64, [0; 6]), NOTIFY, "{n}");
                assert!(decode(n, [0; 6]).is_some(), "{n} decodes");
            }
            for n in nr::I386 {
                assert_eq!(run(&prog, n, AUDIT_ARCH_I386, [0; 6]), EPERM, "i386 {n}");
            }
            for n in nr::SIGNALS {
                assert_eq!(run(&prog, n, AUDIT_ARCH_X86_64, [0; 6]), NOTIFY, "signal {n}");
                assert!(matches!(decode(n, [0; 6]), Some(Op::Signal { .. })), "{n} decodes");
            }
            for n in nr::I386_SIGNALS.into_iter().chain([nr::PIDFD_SEND_SIGNAL]) {
                assert_eq!(run(&prog, n, AUDIT_ARCH_I386, [0; 6]), EPERM, "i386 signal {n}");
            }
            assert_eq!(run(&prog, nr::PIDFD_SEND_SIGNAL, AUDIT_ARCH_X86_64, [0; 6]), ENOSYS);
            // Exec calls are noted (crate::exec_calls); on i386 refused.
            for n in [nr::EXECVE, nr::EXECVEAT] {
                assert_eq!(run(&prog, n, AUDIT_ARCH_X86_64, [0; 6]), NOTIFY, "exec {n}");
                assert_eq!(decode(n, [0; 6]), Some(Op::Exec), "{n} decodes");
            }
            for n in [nr::I386_EXECVE, nr::I386_EXECVEAT, nr::I386_USELIB] {
                assert_eq!(run(&prog, n, AUDIT_ARCH_I386, [0; 6]), EPERM, "i386 exec {n}");
            }
            assert_eq!(run(&prog, nr::USELIB, AUDIT_ARCH_X86_64, [0; 6]), EPERM, "uselib");
            assert_eq!(run(&prog, nr::REMAP_FILE_PAGES, AUDIT_ARCH_X86_64, [0; 6]), EPERM, "remap_file_pages");
            assert_eq!(run(&prog, nr::I386_REMAP_FILE_PAGES, AUDIT_ARCH_I386, [0; 6]), EPERM, "i386 remap_file_pages");
            // Sockets: handed over; on i386 refused, socketcall's by its call.
            for n in [nr::SOCKET, nr::SOCKETPAIR] {
                let args = [libc::AF_INET as u32, libc::SOCK_STREAM as u32 | 0x80000, 6, 0, 0, 0];
                assert_eq!(run(&prog, n, AUDIT_ARCH_X86_64, args), NOTIFY, "socket {n}");
                let want =
                    Op::Socket { family: libc::AF_INET, ty: libc::SOCK_STREAM | libc::SOCK_CLOEXEC, protocol: 6 };
                assert_eq!(decode(n, args.map(u64::from)), Some(want), "{n} decodes");
            }
            for n in nr::I386_SOCKETS {
                assert_eq!(run(&prog, n, AUDIT_ARCH_I386, [2, 1, 0, 0, 0, 0]), EPERM, "i386 socket {n}");
            }
            for call in nr::SOCKETCALL_REFUSED {
                assert_eq!(run(&prog, nr::I386_SOCKETCALL, AUDIT_ARCH_I386, [call, 0, 0, 0, 0, 0]), EPERM, "{call}");
            }
            let bind = [3, 0x7000, 16, 0, 0, 0];
            assert_eq!(run(&prog, nr::BIND, AUDIT_ARCH_X86_64, bind), NOTIFY, "bind");
            assert_eq!(decode(nr::BIND, bind.map(u64::from)), Some(Op::Bind { fd: 3, addr: 0x7000, len: 16 }));
            let connect = [3, 0x7000, 16, 0, 0, 0];
            assert_eq!(run(&prog, nr::CONNECT, AUDIT_ARCH_X86_64, connect), NOTIFY, "connect");
            assert_eq!(decode(nr::CONNECT, connect.map(u64::from)), Some(Op::Connect { fd: 3, addr: 0x7000, len: 16 }));
            let listen = [3, 128, 0, 0, 0, 0];
            assert_eq!(run(&prog, nr::LISTEN, AUDIT_ARCH_X86_64, listen), NOTIFY, "listen");
            assert_eq!(decode(nr::LISTEN, listen.map(u64::from)), Some(Op::Listen { fd: 3, backlog: 128 }));
            // inotify watches: handed over, a final link followed unless
            // IN_DONT_FOLLOW; on i386 refused.
            for (mask, follow) in [(0x100, true), (0x0200_0100, false)] {
                let watch = [3, 0x7000, mask, 0, 0, 0];
                assert_eq!(run(&prog, nr::INOTIFY_ADD_WATCH, AUDIT_ARCH_X86_64, watch), NOTIFY, "watch");
                let target = FileArg::Path { dirfd: AT_FDCWD, path: 0x7000, follow, empty_ok: false };
                assert_eq!(
                    decode(nr::INOTIFY_ADD_WATCH, watch.map(u64::from)),
                    Some(Op::Watch { fd: 3, target, mask })
                );
            }
            assert_eq!(run(&prog, nr::I386_INOTIFY_ADD_WATCH, AUDIT_ARCH_I386, [3, 0, 0x100, 0, 0, 0]), EPERM);
            // TCP Fast Open's sends: refused with MSG_FASTOPEN, passed without.
            for (n, arg) in nr::FASTOPEN {
                let mut args = [3, 0, 0, 0, 0, 0];
                assert_eq!(run(&prog, n, AUDIT_ARCH_X86_64, args), ALLOW, "send {n}");
                args[arg as usize] = bits::MSG_FASTOPEN | 0x40;
                assert_eq!(run(&prog, n, AUDIT_ARCH_X86_64, args), EPERM, "fast open {n}");
                assert_eq!(decode(n, args.map(u64::from)), None);
            }
            // ftruncate: handed over (a descriptor opened to append would
            // empty a log); i386's refused.
            assert_eq!(run(&prog, nr::FTRUNCATE, AUDIT_ARCH_X86_64, [3, 0, 0, 0, 0, 0]), NOTIFY, "ftruncate");
            assert_eq!(decode(nr::FTRUNCATE, [3, 7, 0, 0, 0, 0]), Some(Op::Ftruncate { fd: 3, length: 7 }));
            for n in nr::I386_FTRUNCATE {
                assert_eq!(run(&prog, n, AUDIT_ARCH_I386, [3, 0, 0, 0, 0, 0]), EPERM, "i386 ftruncate {n}");
            }
            // fallocate: allocating passes; punching a hole (with
            // KEEP_SIZE), zeroing, collapsing, inserting handed over.
            for mode in [0, 1] {
                assert_eq!(run(&prog, nr::FALLOCATE, AUDIT_ARCH_X86_64, [3, mode, 0, 4096, 0, 0]), ALLOW, "{mode}");
                assert_eq!(run(&prog, nr::I386_FALLOCATE, AUDIT_ARCH_I386, [3, mode, 0, 4096, 0, 0]), ALLOW);
                assert_eq!(decode(nr::FALLOCATE, [3, u64::from(mode), 0, 4096, 0, 0]), None);
            }
            for mode in [0x02 | 0x01, 0x08, 0x10, 0x20, 0x04] {
                assert_eq!(run(&prog, nr::FALLOCATE, AUDIT_ARCH_X86_64, [3, mode, 0, 4096, 0, 0]), NOTIFY, "{mode}");
                assert_eq!(run(&prog, nr::I386_FALLOCATE, AUDIT_ARCH_I386, [3, mode, 0, 4096, 0, 0]), EPERM);
                let want = Op::Fallocate { fd: 3, mode: mode as i32, offset: 0, len: 4096 };
                assert_eq!(decode(nr::FALLOCATE, [3, u64::from(mode), 0, 4096, 0, 0]), Some(want));
            }
            // Through the 32-bit entry, which an x86-64 process may use on
            // its own socket, likewise.
            for (n, arg) in nr::I386_FASTOPEN {
                let mut args = [3, 0, 0, 0, 0, 0];
                assert_eq!(run(&prog, n, AUDIT_ARCH_I386, args), ALLOW, "i386 send {n}");
                args[arg as usize] = bits::MSG_FASTOPEN;
                assert_eq!(run(&prog, n, AUDIT_ARCH_I386, args), EPERM, "i386 fast open {n}");
            }
            // socketcall's accept (5), send (9), recvmsg (17): passed.
            for call in [5, 9, 17] {
                assert_eq!(run(&prog, nr::I386_SOCKETCALL, AUDIT_ARCH_I386, [call, 0, 0, 0, 0, 0]), ALLOW, "{call}");
            }
            assert_eq!(run(&prog, nr::I386_SOCKETCALL, AUDIT_ARCH_X86_64, [1, 0, 0, 0, 0, 0]), ALLOW, "x86-64 102");
            // A file's owner: F_SETOWN handed over, the owner in memory
            // refused, F_SETSIG refused the signals F_SETOWN's check
            // does not cover; every other command passes.
            let fcntl = |cmd: u32, arg: u32| [3, cmd, arg, 0, 0, 0];
            assert_eq!(run(&prog, nr::FCNTL, AUDIT_ARCH_X86_64, fcntl(owner::F_SETOWN, 42)), NOTIFY);
            assert!(matches!(decode(nr::FCNTL, fcntl(owner::F_SETOWN, 42).map(u64::from)), Some(Op::SetOwner { .. })));
            assert_eq!(run(&prog, nr::FCNTL, AUDIT_ARCH_X86_64, fcntl(owner::F_SETOWN_EX, 0)), EPERM);
            for sig in owner::SETSIG_REFUSED {
                assert_eq!(run(&prog, nr::FCNTL, AUDIT_ARCH_X86_64, fcntl(owner::F_SETSIG, sig)), EPERM, "{sig}");
            }
            // F_SETFL: handed over unless it keeps O_APPEND.
            let setfl = fcntl(append::F_SETFL, libc::O_NONBLOCK as u32);
            assert_eq!(run(&prog, nr::FCNTL, AUDIT_ARCH_X86_64, setfl), NOTIFY);
            let want = Op::SetFlags { fd: 3, flags: libc::O_NONBLOCK as u32 };
            assert_eq!(decode(nr::FCNTL, setfl.map(u64::from)), Some(want));
            for n in nr::I386_FCNTL {
                assert_eq!(run(&prog, n, AUDIT_ARCH_I386, setfl), EPERM, "i386 {n}");
            }
            let keeps = fcntl(append::F_SETFL, append::O_APPEND | libc::O_NONBLOCK as u32);
            assert_eq!(run(&prog, nr::FCNTL, AUDIT_ARCH_X86_64, keeps), ALLOW);
            assert_eq!(run(&prog, nr::I386_FCNTL[1], AUDIT_ARCH_I386, keeps), ALLOW);
            assert_eq!(decode(nr::FCNTL, keeps.map(u64::from)), None);
            for (cmd, arg) in [(owner::F_SETSIG, 34), (owner::F_SETSIG, 0), (libc::F_GETFL as u32, 0), (9, 0)] {
                assert_eq!(run(&prog, nr::FCNTL, AUDIT_ARCH_X86_64, fcntl(cmd, arg)), ALLOW, "fcntl {cmd} {arg}");
                assert_eq!(decode(nr::FCNTL, fcntl(cmd, arg).map(u64::from)), None);
            }
            for cmd in owner::IOCTLS {
                assert_eq!(run(&prog, nr::IOCTL, AUDIT_ARCH_X86_64, [3, cmd, 0, 0, 0, 0]), EPERM, "{cmd:#x}");
                assert_eq!(run(&prog, nr::I386_IOCTL, AUDIT_ARCH_I386, [3, cmd, 0, 0, 0, 0]), EPERM, "{cmd:#x}");
            }
            assert_eq!(run(&prog, nr::IOCTL, AUDIT_ARCH_X86_64, [3, 0x5401, 0, 0, 0, 0]), ALLOW, "TCGETS");
            // prlimit64 reading its own limits passes; setting them (a
            // pointer in either word) or naming another pid, handed over.
            assert_eq!(run(&prog, nr::PRLIMIT64, AUDIT_ARCH_X86_64, [0, 4, 0, 0x1000, 0, 0]), ALLOW);
            assert_eq!(decode(nr::PRLIMIT64, [0, 4, 0, 0x1000, 0, 0]), None);
            assert_eq!(run(&prog, nr::PRLIMIT64, AUDIT_ARCH_X86_64, [0, 4, 0x1000, 0, 0, 0]), NOTIFY);
            let high = [0, 4, 0x7ffc_0000_0000, 0, 0, 0];
            assert_eq!(run64(&prog, nr::PRLIMIT64, AUDIT_ARCH_X86_64, high), NOTIFY, "a pointer above 4 GiB");
            let own = Op::Prlimit { pid: 0, resource: 4, new: 0x7ffc_0000_0000, old: 0 };
            assert_eq!(decode(nr::PRLIMIT64, high), Some(own));
            assert_eq!(run(&prog, nr::PRLIMIT64, AUDIT_ARCH_X86_64, [42, 4, 0x1000, 0, 0, 0]), NOTIFY);
            assert_eq!(run(&prog, nr::PRLIMIT64, AUDIT_ARCH_X86_64, [42, 4, 0, 0x1000, 0, 0]), NOTIFY);
            assert_eq!(run(&prog, nr::SETRLIMIT, AUDIT_ARCH_X86_64, [7, 0x1000, 0, 0, 0, 0]), NOTIFY);
            let set = Op::Prlimit { pid: 0, resource: 7, new: 0x1000, old: 0 };
            assert_eq!(decode(nr::SETRLIMIT, [7, 0x1000, 0, 0, 0, 0]), Some(set));
            assert_eq!(run(&prog, nr::I386_PRLIMIT64, AUDIT_ARCH_I386, [42, 4, 0x1000, 0, 0, 0]), EPERM);
            assert_eq!(run(&prog, nr::I386_PRLIMIT64, AUDIT_ARCH_I386, [0, 4, 0x1000, 0, 0, 0]), EPERM);
            assert_eq!(run(&prog, nr::I386_PRLIMIT64, AUDIT_ARCH_I386, [0, 4, 0, 0x1000, 0, 0]), ALLOW);
            assert_eq!(run(&prog, nr::I386_SETRLIMIT, AUDIT_ARCH_I386, [7, 0x1000, 0, 0, 0, 0]), EPERM);
            // capset: handed over whatever its arguments; i386's refused.
            assert_eq!(run(&prog, nr::CAPSET, AUDIT_ARCH_X86_64, [0x1000, 0x2000, 0, 0, 0, 0]), NOTIFY);
            assert_eq!(decode(nr::CAPSET, [0x1000, 0x2000, 0, 0, 0, 0]), Some(Op::Capset));
            assert_eq!(run(&prog, nr::I386_CAPSET, AUDIT_ARCH_I386, [0x1000, 0x2000, 0, 0, 0, 0]), EPERM);
            // dnotify: refused, both entries.
            assert_eq!(run(&prog, nr::FCNTL, AUDIT_ARCH_X86_64, fcntl(owner::F_NOTIFY, 4)), EPERM, "F_NOTIFY");
            for n in nr::I386_FCNTL {
                assert_eq!(run(&prog, n, AUDIT_ARCH_I386, fcntl(owner::F_NOTIFY, 4)), EPERM, "i386 F_NOTIFY {n}");
                assert_eq!(run(&prog, n, AUDIT_ARCH_I386, fcntl(owner::F_SETOWN, 42)), EPERM, "i386 {n}");
                assert_eq!(run(&prog, n, AUDIT_ARCH_I386, fcntl(owner::F_SETSIG, 9)), EPERM, "i386 {n}");
                assert_eq!(run(&prog, n, AUDIT_ARCH_I386, fcntl(libc::F_GETFL as u32, 0)), ALLOW, "i386 {n}");
            }
            // read passes; reading opens pass; another arch passes.
            assert_eq!(run(&prog, 0, AUDIT_ARCH_X86_64, [0; 6]), ALLOW, "read");
            assert_eq!(decode(0, [0; 6]), None);
            let rdonly = [0, libc::O_RDONLY as u32 | libc::O_APPEND as u32 | libc::O_DIRECTORY as u32, 0, 0, 0, 0];
            assert_eq!(run(&prog, nr::OPEN, AUDIT_ARCH_X86_64, rdonly), ALLOW);
            assert_eq!(run(&prog, nr::OPENAT, AUDIT_ARCH_X86_64, [0, 0, rdonly[1], 0, 0, 0]), ALLOW);
            assert_eq!(run(&prog, 3, AUDIT_ARCH_I386, [0; 6]), ALLOW, "i386 read");
            assert_eq!(run(&prog, 90, 0xC000_00B7, [0; 6]), ALLOW, "aarch64");
        }
        let (without, with) = (program(false), program(true));
        // Opens asking to write or truncate: handed over with `opens`,
        // through the flags argument only (the path's is ignored).
        for flags in [libc::O_WRONLY, libc::O_RDWR, libc::O_TRUNC, libc::O_CREAT, libc::O_WRONLY | libc::O_CREAT, 3] {
            let f = flags as u32;
            for (n, args) in [(nr::OPEN, [!WRITE_FLAGS, f, 0, 0, 0, 0]), (nr::OPENAT, [0, 0, f, 0, 0, 0])] {
                assert_eq!(run(&with, n, AUDIT_ARCH_X86_64, args), NOTIFY, "{n} {flags:#o}");
                assert_eq!(run(&without, n, AUDIT_ARCH_X86_64, args), ALLOW, "{n} {flags:#o}");
                assert!(matches!(decode(n, args.map(u64::from)), Some(Op::Open { .. })));
            }
            for (n, args) in [(nr::I386_OPEN, [0, f, 0, 0, 0, 0]), (nr::I386_OPENAT, [0, 0, f, 0, 0, 0])] {
                assert_eq!(run(&with, n, AUDIT_ARCH_I386, args), EPERM, "i386 {n} {flags:#o}");
            }
        }
        assert_eq!(run(&with, nr::CREAT, AUDIT_ARCH_X86_64, [0; 6]), NOTIFY);
        assert_eq!(run(&without, nr::CREAT, AUDIT_ARCH_X86_64, [0; 6]), ALLOW);
        // The other ways to open for writing are closed with `opens`.
        assert_eq!(run(&with, nr::OPENAT2, AUDIT_ARCH_X86_64, [0; 6]), ENOSYS);
        assert_eq!(run(&with, nr::OPEN_BY_HANDLE_AT, AUDIT_ARCH_X86_64, [0; 6]), EPERM);
        assert_eq!(run(&with, nr::X32_BIT | nr::OPEN, AUDIT_ARCH_X86_64, [0; 6]), ENOSYS, "x32");
        assert_eq!(run(&without, nr::X32_BIT | nr::MMAP, AUDIT_ARCH_X86_64, [0; 6]), ENOSYS, "x32");
        // Calls newer than the filter: ENOSYS on both entries; the last
        // known one is the filter's to decide.
        for prog in [&with, &without] {
            for arch in [AUDIT_ARCH_X86_64, AUDIT_ARCH_I386] {
                assert_eq!(run(prog, nr::UNKNOWN_FROM, arch, [0; 6]), ENOSYS, "{arch:#x} {}", nr::UNKNOWN_FROM);
                assert_ne!(run(prog, nr::UNKNOWN_FROM - 1, arch, [0; 6]), ENOSYS, "{arch:#x} 469");
            }
        }
        for prog in [&with, &without] {
            // fanotify groups: their marks are watches (crate::watches).
            assert_eq!(run(prog, nr::FANOTIFY_INIT, AUDIT_ARCH_X86_64, [0; 6]), EPERM);
            assert_eq!(run(prog, nr::I386_FANOTIFY_INIT, AUDIT_ARCH_I386, [0; 6]), EPERM);
            for n in nr::IO_URING {
                assert_eq!(run(prog, n, AUDIT_ARCH_X86_64, [0; 6]), EPERM, "io_uring {n}");
                assert_eq!(run(prog, n, AUDIT_ARCH_I386, [0; 6]), EPERM, "i386 io_uring {n}");
            }
        }
        for n in [nr::I386_CREAT, nr::I386_OPEN_BY_HANDLE_AT, nr::OPENAT2] {
            assert_eq!(run(&with, n, AUDIT_ARCH_I386, [0; 6]), EPERM, "i386 {n}");
        }
    }

    /// Classic BPF jumps are 8-bit, and `Asm::finish` saturates a longer
    /// one: each arch's block must stay under 256 instructions, or calls
    /// would be misrouted. Walks the arch tests: their skips must add up
    /// to the whole program.
    #[test]
    fn every_arch_block_fits_8_bit_jumps() {
        for opens in [false, true] {
            let prog = program(opens);
            let (mut pc, mut blocks) = (0, Vec::new());
            while prog[pc].code == BPF_LD_W_ABS && prog[pc].k == DATA_ARCH {
                let skip = usize::from(prog[pc + 1].jf);
                blocks.push(skip);
                pc += 2 + skip;
            }
            assert_eq!(blocks.len(), 2, "x86-64 and i386: {blocks:?}");
            assert!(blocks.iter().all(|&n| n < 255), "{blocks:?}");
            assert_eq!((prog[pc].code, pc + 1), (BPF_RET_K, prog.len()), "{blocks:?}");
        }
    }

    /// A clone sharing the caller's fs_struct with a new process is
    /// handed over (refused on i386); a thread, a fork, a vfork pass.
    #[test]
    fn a_clone_sharing_the_working_directory_is_handed_over() {
        const CLONE_VM: u32 = 0x100;
        const CLONE_VFORK: u32 = 0x4000;
        const CLONE_SIGHAND: u32 = 0x800;
        let sigchld = libc::SIGCHLD as u32;
        for opens in [false, true] {
            let prog = program(opens);
            let flags = |f: u32| [f, 0, 0, 0, 0, 0];
            let shared = flags(bits::CLONE_FS | sigchld);
            assert_eq!(run(&prog, nr::CLONE, AUDIT_ARCH_X86_64, shared), NOTIFY);
            assert_eq!(decode(nr::CLONE, shared.map(u64::from)), Some(Op::CloneSharingFs));
            assert_eq!(run(&prog, nr::I386_CLONE, AUDIT_ARCH_I386, shared), EPERM);
            let thread = flags(CLONE_VM | bits::CLONE_FS | CLONE_SIGHAND | bits::CLONE_THREAD);
            for passes in [thread, flags(sigchld), flags(CLONE_VM | CLONE_VFORK | sigchld)] {
                assert_eq!(run(&prog, nr::CLONE, AUDIT_ARCH_X86_64, passes), ALLOW, "{passes:x?}");
                assert_eq!(run(&prog, nr::I386_CLONE, AUDIT_ARCH_I386, passes), ALLOW, "i386 {passes:x?}");
            }
        }
    }

    /// Scheduling calls are handed over, whichever process they name; on
    /// i386 those naming another process are refused.
    #[test]
    fn scheduling_of_another_process_is_handed_over() {
        for opens in [false, true] {
            let prog = program(opens);
            for (n, set) in
                nr::SCHED_SET_BY_PID.map(|n| (n, true)).into_iter().chain(nr::SCHED_GET_BY_PID.map(|n| (n, false)))
            {
                assert_eq!(run(&prog, n, AUDIT_ARCH_X86_64, [0, 8, 0x1000, 0, 0, 0]), NOTIFY, "{n} of itself");
                assert_eq!(decode(n, [0, 8, 0x1000, 0, 0, 0]), Some(Op::Sched { to: SchedTarget::Thread(0), set }));
                assert_eq!(run(&prog, n, AUDIT_ARCH_X86_64, [42, 8, 0x1000, 0, 0, 0]), NOTIFY, "{n}");
                assert_eq!(decode(n, [42, 8, 0x1000, 0, 0, 0]), Some(Op::Sched { to: SchedTarget::Thread(42), set }));
                assert_eq!(decode(n, [u64::MAX, 0, 0, 0, 0, 0]), Some(Op::Sched { to: SchedTarget::Nobody, set }));
            }
            for pid in [0, 42] {
                assert_eq!(run(&prog, nr::SETPGID, AUDIT_ARCH_X86_64, [pid, 0, 0, 0, 0, 0]), NOTIFY, "setpgid {pid}");
                assert_eq!(decode(nr::SETPGID, [u64::from(pid), 0, 0, 0, 0, 0]), Some(Op::SetPgid { pid: pid as i32 }));
            }
            for n in nr::I386_SCHED_BY_PID.into_iter().chain(nr::I386_IDS_BY_PID) {
                assert_eq!(run(&prog, n, AUDIT_ARCH_I386, [0, 8, 0x1000, 0, 0, 0]), ALLOW, "i386 {n} of itself");
                assert_eq!(run(&prog, n, AUDIT_ARCH_I386, [42, 8, 0x1000, 0, 0, 0]), EPERM, "i386 {n}");
            }
            // get_robust_list (pid): 0 is the caller; kcmp and
            // process_madvise always handed over; on i386 refused but a
            // get_robust_list of the caller.
            assert_eq!(run(&prog, nr::GET_ROBUST_LIST, AUDIT_ARCH_X86_64, [0, 8, 16, 0, 0, 0]), ALLOW);
            assert_eq!(run(&prog, nr::GET_ROBUST_LIST, AUDIT_ARCH_X86_64, [42, 8, 16, 0, 0, 0]), NOTIFY);
            assert_eq!(
                decode(nr::GET_ROBUST_LIST, [42, 8, 16, 0, 0, 0]),
                Some(Op::Inspect { of: Inspected::Thread(42) })
            );
            let kcmp = [7, 42, 1, 0, 0, 0];
            assert_eq!(run(&prog, nr::KCMP, AUDIT_ARCH_X86_64, kcmp), NOTIFY);
            assert_eq!(decode(nr::KCMP, kcmp.map(u64::from)), Some(Op::Inspect { of: Inspected::Pair(7, 42) }));
            let madvise = [5, 0x1000, 1, 20, 0, 0];
            assert_eq!(run(&prog, nr::PROCESS_MADVISE, AUDIT_ARCH_X86_64, madvise), NOTIFY);
            assert_eq!(
                decode(nr::PROCESS_MADVISE, madvise.map(u64::from)),
                Some(Op::Inspect { of: Inspected::Pidfd(5) })
            );
            assert_eq!(run(&prog, nr::I386_GET_ROBUST_LIST, AUDIT_ARCH_I386, [0, 8, 16, 0, 0, 0]), ALLOW);
            assert_eq!(run(&prog, nr::I386_GET_ROBUST_LIST, AUDIT_ARCH_I386, [42, 8, 16, 0, 0, 0]), EPERM);
            assert_eq!(run(&prog, nr::I386_KCMP, AUDIT_ARCH_I386, kcmp), EPERM);
            assert_eq!(run(&prog, nr::PROCESS_MADVISE, AUDIT_ARCH_I386, madvise), EPERM);
            // getpgid, getsid (pid): 0 is the caller, handed over too.
            for (n, session) in [(nr::GETPGID, false), (nr::GETSID, true)] {
                assert_eq!(run(&prog, n, AUDIT_ARCH_X86_64, [0, 0, 0, 0, 0, 0]), NOTIFY, "{n} of itself");
                assert_eq!(decode(n, [0, 0, 0, 0, 0, 0]), Some(Op::Ids { pid: 0, session }));
                assert_eq!(run(&prog, n, AUDIT_ARCH_X86_64, [42, 0, 0, 0, 0, 0]), NOTIFY, "{n}");
                assert_eq!(decode(n, [42, 0, 0, 0, 0, 0]), Some(Op::Ids { pid: 42, session }));
            }
            // setpriority(which, who, prio): PRIO_PROCESS 0 is the caller,
            // handed over too; on i386 only the caller's passes.
            let prio = |which: u32, who: u32| [which, who, 19, 0, 0, 0];
            assert_eq!(run(&prog, nr::I386_SETPRIORITY, AUDIT_ARCH_I386, prio(0, 0)), ALLOW);
            for (which, who, to) in [
                (0, 0, SchedTarget::Thread(0)),
                (0, 42, SchedTarget::Thread(42)),
                (1, 0, SchedTarget::Group(0)),
                (1, 42, SchedTarget::Group(42)),
                (2, 0, SchedTarget::User),
                (7, 0, SchedTarget::Nobody),
            ] {
                assert_eq!(run(&prog, nr::SETPRIORITY, AUDIT_ARCH_X86_64, prio(which, who)), NOTIFY, "{which} {who}");
                if (which, who) != (0, 0) {
                    assert_eq!(
                        run(&prog, nr::I386_SETPRIORITY, AUDIT_ARCH_I386, prio(which, who)),
                        EPERM,
                        "{which} {who}"
                    );
                }
                let args = prio(which, who).map(u64::from);
                assert_eq!(decode(nr::SETPRIORITY, args), Some(Op::Sched { to, set: true }), "{which} {who}");
            }
            // ioprio_set/get(which, who): IOPRIO_WHO_PROCESS (1) 0 is the
            // caller, handed over too.
            for (n, set) in [(nr::IOPRIO_SET, true), (nr::IOPRIO_GET, false)] {
                assert_eq!(run(&prog, n, AUDIT_ARCH_X86_64, prio(1, 0)), NOTIFY, "{n}");
                assert_eq!(decode(n, prio(1, 0).map(u64::from)), Some(Op::Sched { to: SchedTarget::Thread(0), set }));
                assert_eq!(run(&prog, n, AUDIT_ARCH_X86_64, prio(1, 42)), NOTIFY, "{n}");
                assert_eq!(run(&prog, n, AUDIT_ARCH_X86_64, prio(3, 0)), NOTIFY, "{n}");
                assert_eq!(decode(n, prio(1, 42).map(u64::from)), Some(Op::Sched { to: SchedTarget::Thread(42), set }));
                assert_eq!(decode(n, prio(2, 7).map(u64::from)), Some(Op::Sched { to: SchedTarget::Group(7), set }));
                assert_eq!(decode(n, prio(3, 0).map(u64::from)), Some(Op::Sched { to: SchedTarget::User, set }));
                // `which` as the caller gave it: no overflow on the least.
                let least = [i32::MIN as u32 as u64, 0, 0, 0, 0, 0];
                assert_eq!(decode(n, least), Some(Op::Sched { to: SchedTarget::Nobody, set }));
            }
            for n in nr::I386_IOPRIO {
                assert_eq!(run(&prog, n, AUDIT_ARCH_I386, prio(1, 0)), ALLOW, "i386 {n}");
                assert_eq!(run(&prog, n, AUDIT_ARCH_I386, prio(1, 42)), EPERM, "i386 {n}");
            }
            // getpriority: no SELinux check, never handed over.
            assert_eq!(run(&prog, 140, AUDIT_ARCH_X86_64, prio(0, 42)), ALLOW);
        }
    }

    /// mmap and mprotect: handed over with `PROT_EXEC`, where SELinux
    /// checks `execmem` or the file's `execute` (the daemon's rule,
    /// crate::exec_memory, decides which from the decoded call); shmat
    /// with its exec bit; `READ_IMPLIES_EXEC` refused; on i386 all
    /// refused.
    #[test]
    fn executable_memory_is_handed_over_where_selinux_checks_it() {
        let (r, w, x) = (libc::PROT_READ as u32, PROT_WRITE, PROT_EXEC);
        let (private, shared, anon) = (libc::MAP_PRIVATE as u32, MAP_SHARED, MAP_ANONYMOUS);
        let validate = libc::MAP_SHARED_VALIDATE as u32;
        for opens in [false, true] {
            let prog = program(opens);
            for (prot, flags, handed) in [
                (r | x, private | anon, true),
                (r | w | x, shared | anon, true),
                (r | w | x, private, true),
                (r | w | x, validate, true),
                (r | x, private, true),
                (r | w | x, shared, true),
                (x, shared, true),
                (r | w, private | anon, false),
                (r, shared | anon, false),
                (r | w, shared | anon, false),
                (r | w, private, false),
                (r, private, false),
                // A shared mapping of a file: its descriptor may be open
                // for writing.
                (r | w, shared, true),
                (r, shared, true),
                (r | w, validate, true),
                (r, validate, true),
            ] {
                let args = [0, 4096, prot, flags, 3, 0];
                let (want, i386) = if handed { (NOTIFY, EPERM) } else { (ALLOW, ALLOW) };
                assert_eq!(run(&prog, nr::MMAP, AUDIT_ARCH_X86_64, args), want, "mmap {prot:#x} {flags:#x}");
                assert_eq!(run(&prog, nr::I386_MMAP2, AUDIT_ARCH_I386, args), i386, "mmap2 {prot:#x} {flags:#x}");
                assert_eq!(decode(nr::MMAP, args.map(u64::from)), Some(Op::Mmap { prot, flags, fd: 3 }));
            }
            // No descriptor: -1 as the caller passed it.
            let anonymous = [0, 4096, u64::from(r | x), u64::from(private | anon), u64::from(u32::MAX), 0];
            assert_eq!(decode(nr::MMAP, anonymous), Some(Op::Mmap { prot: r | x, flags: private | anon, fd: -1 }));
            assert_eq!(run(&prog, nr::I386_OLD_MMAP, AUDIT_ARCH_I386, [0; 6]), EPERM, "old mmap");
            // memfd_create, whatever its flags: the daemon makes it.
            for flags in [0, 1, 8, 0x10] {
                assert_eq!(run(&prog, nr::MEMFD_CREATE, AUDIT_ARCH_X86_64, [0x1000, flags, 0, 0, 0, 0]), NOTIFY);
                assert_eq!(run(&prog, nr::I386_MEMFD_CREATE, AUDIT_ARCH_I386, [0x1000, flags, 0, 0, 0, 0]), EPERM);
                let want = Op::MemfdCreate { name: 0x1000, flags };
                assert_eq!(decode(nr::MEMFD_CREATE, [0x1000, u64::from(flags), 0, 0, 0, 0]), Some(want));
            }
            for n in nr::MPROTECT {
                assert_eq!(run(&prog, n, AUDIT_ARCH_X86_64, [0x1000, 4096, r | x, 0, 0, 0]), NOTIFY, "{n}");
                assert_eq!(run(&prog, n, AUDIT_ARCH_X86_64, [0x1000, 4096, r | w, 0, 0, 0]), ALLOW, "{n}");
                assert_eq!(
                    decode(n, [0x1000, 4096, u64::from(r | x), 0, 0, 0]),
                    Some(Op::Mprotect { addr: 0x1000, len: 4096, prot: r | x })
                );
            }
            for n in nr::I386_MPROTECT {
                assert_eq!(run(&prog, n, AUDIT_ARCH_I386, [0x1000, 4096, r | x, 0, 0, 0]), EPERM, "i386 {n}");
                assert_eq!(run(&prog, n, AUDIT_ARCH_I386, [0x1000, 4096, r, 0, 0, 0]), ALLOW, "i386 {n}");
            }
            // Every shared memory call but shmdt (x86-64 67; ipc's SHMDT
            // 22): handed over on x86-64, refused on i386.
            for (flags, what) in [(SHM_EXEC, "SHM_EXEC"), (0o10000, "SHM_RDONLY"), (0, "read and write")] {
                assert_eq!(run(&prog, nr::SHMAT, AUDIT_ARCH_X86_64, [1, 0, flags, 0, 0, 0]), NOTIFY, "{what}");
            }
            assert_eq!(
                decode(nr::SHMAT, [7, 0, u64::from(SHM_EXEC), 0, 0, 0]),
                Some(Op::Shmat { id: 7, flags: SHM_EXEC })
            );
            let (shm, sem) = (Kind::Shm, Kind::Sem);
            for (n, kind) in [(nr::SHMGET, shm), (nr::SEMGET, sem)] {
                assert_eq!(run(&prog, n, AUDIT_ARCH_X86_64, [5, 4096, 0o1600, 0, 0, 0]), NOTIFY, "{n}");
                let want = Op::IpcGet { kind, key: 5, arg: 4096, flags: 0o1600 };
                assert_eq!(decode(n, [5, 4096, 0o1600, 0, 0, 0]), Some(want));
            }
            // shmctl(id, cmd, buf); semctl(id, semnum, cmd, arg).
            assert_eq!(run(&prog, nr::SHMCTL, AUDIT_ARCH_X86_64, [7, 2, 0, 0, 0, 0]), NOTIFY);
            assert_eq!(decode(nr::SHMCTL, [7, 2, 0, 0, 0, 0]), Some(Op::IpcCtl { kind: shm, id: 7, cmd: 2 }));
            assert_eq!(run(&prog, nr::SEMCTL, AUDIT_ARCH_X86_64, [7, 0, 16, 0, 0, 0]), NOTIFY);
            assert_eq!(decode(nr::SEMCTL, [7, 0, 16, 0, 0, 0]), Some(Op::IpcCtl { kind: sem, id: 7, cmd: 16 }));
            for n in [nr::SEMOP, nr::SEMTIMEDOP] {
                assert_eq!(run(&prog, n, AUDIT_ARCH_X86_64, [7, 0x1000, 1, 0, 0, 0]), NOTIFY, "{n}");
                assert_eq!(decode(n, [7, 0x1000, 1, 0, 0, 0]), Some(Op::Semop { id: 7 }));
            }
            assert_eq!(run(&prog, 67, AUDIT_ARCH_X86_64, [0x1000, 0, 0, 0, 0, 0]), ALLOW, "shmdt");
            for n in nr::I386_SHM_SEM {
                assert_eq!(run(&prog, n, AUDIT_ARCH_I386, [1, 0, 0, 0, 0, 0]), EPERM, "i386 {n}");
            }
            // ipc(call | version << 16, ...).
            for call in bits::IPC_SHM_SEM {
                assert_eq!(run(&prog, nr::I386_IPC, AUDIT_ARCH_I386, [call, 1, 0, 0, 0, 0]), EPERM, "ipc {call}");
                assert_eq!(run(&prog, nr::I386_IPC, AUDIT_ARCH_I386, [1 << 16 | call, 1, 0, 0, 0, 0]), EPERM);
            }
            assert_eq!(run(&prog, nr::I386_IPC, AUDIT_ARCH_I386, [22, 1, SHM_EXEC, 0, 0, 0]), ALLOW, "shmdt");
            for (n, op) in [(nr::MSGSND, false), (nr::MSGRCV, true)] {
                assert_eq!(run(&prog, n, AUDIT_ARCH_X86_64, [7, 0x1000, 8, 0, 0, 0]), NOTIFY, "{n}");
                assert_eq!(decode(n, [7, 0x1000, 8, 0, 0, 0]), Some(Op::Message { id: 7, receive: op }));
            }
            // msgget(key, flags); msgctl(id, cmd, buf).
            let msg = Kind::Msg;
            assert_eq!(
                decode(nr::MSGGET, [5, 0o1600, 0, 0, 0, 0]),
                Some(Op::IpcGet { kind: msg, key: 5, arg: 0, flags: 0o1600 })
            );
            assert_eq!(decode(nr::MSGCTL, [7, 2, 0, 0, 0, 0]), Some(Op::IpcCtl { kind: msg, id: 7, cmd: 2 }));
            assert_eq!(run(&prog, nr::MSGCTL, AUDIT_ARCH_X86_64, [7, 2, 0, 0, 0, 0]), NOTIFY);
            for (n, arch) in [(nr::PERSONALITY, AUDIT_ARCH_X86_64), (nr::I386_PERSONALITY, AUDIT_ARCH_I386)] {
                let read_implies_exec = 0x040_0000;
                assert_eq!(run(&prog, n, arch, [read_implies_exec, 0, 0, 0, 0, 0]), EPERM, "{n}");
                assert_eq!(run(&prog, n, arch, [u32::MAX, 0, 0, 0, 0, 0]), ALLOW, "{n}: a query");
                assert_eq!(run(&prog, n, arch, [0x0008, 0, 0, 0, 0, 0]), ALLOW, "{n}: PER_LINUX32");
            }
        }
    }

    #[test]
    fn arguments_read_as_the_kernel_reads_them() {
        let fd = |x: i32| x as u32 as u64 | 0xdead_0000_0000_0000;
        assert_eq!(
            decode(nr::FCHMODAT2, [fd(5), 0x1000, 0o104755, AT_SYMLINK_NOFOLLOW, 0, 0]),
            Some(Op::Setattr {
                target: FileArg::Path { dirfd: 5, path: 0x1000, follow: false, empty_ok: false },
                attr: Attr::Mode(0o4755)
            })
        );
        assert_eq!(
            decode(nr::UNLINKAT, [fd(AT_FDCWD), 0x2000, AT_REMOVEDIR, 0, 0, 0]),
            Some(Op::Remove {
                name: FileArg::Path { dirfd: AT_FDCWD, path: 0x2000, follow: false, empty_ok: false },
                dir: true
            })
        );
        assert_eq!(
            decode(nr::LINKAT, [fd(3), 0x1, fd(4), 0x2, AT_SYMLINK_FOLLOW | AT_EMPTY_PATH, 0]),
            Some(Op::Link {
                from: FileArg::Path { dirfd: 3, path: 0x1, follow: true, empty_ok: true },
                to: FileArg::Path { dirfd: 4, path: 0x2, follow: false, empty_ok: false }
            })
        );
        // mknodat(dirfd, path, mode, dev): dev is 32 bits in the kernel.
        assert_eq!(
            decode(nr::MKNODAT, [fd(7), 0x4000, 0o10644, 0xffff_ffff_0000_0103, 0, 0]),
            Some(Op::Make {
                name: FileArg::Path { dirfd: 7, path: 0x4000, follow: false, empty_ok: false },
                what: Make::Node { mode: 0o10644, dev: 0x103 }
            })
        );
        // symlinkat(target, newdirfd, linkpath): the name is the third.
        assert_eq!(
            decode(nr::SYMLINKAT, [0x5000, fd(8), 0x6000, 0, 0, 0]),
            Some(Op::Make {
                name: FileArg::Path { dirfd: 8, path: 0x6000, follow: false, empty_ok: false },
                what: Make::Symlink { target: 0x5000 }
            })
        );
        assert_eq!(
            decode(nr::MKDIR, [0x7000, 0o755, 0, 0, 0, 0]),
            Some(Op::Make {
                name: FileArg::Path { dirfd: AT_FDCWD, path: 0x7000, follow: false, empty_ok: false },
                what: Make::Dir { mode: 0o755 }
            })
        );
        assert_eq!(
            decode(nr::OPENAT, [fd(9), 0x3000, 0o1101, 0o100644, 0, 0]),
            Some(Op::Open {
                target: FileArg::Path { dirfd: 9, path: 0x3000, follow: true, empty_ok: false },
                flags: 0o1101,
                mode: 0o100644
            })
        );
        assert_eq!(
            decode(nr::CREAT, [0x4000, 0o600, 0, 0, 0, 0]),
            Some(Op::Open {
                target: FileArg::Path { dirfd: AT_FDCWD, path: 0x4000, follow: true, empty_ok: false },
                flags: libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
                mode: 0o600
            })
        );
        assert_eq!(
            decode(nr::FCHOWN, [fd(7), u64::MAX, 0, 0, 0, 0]),
            Some(Op::Setattr { target: FileArg::Fd(7), attr: Attr::Owner { uid: u32::MAX, gid: 0 } })
        );
        // utimensat(dirfd, path, times, flags); a null path: futimens.
        assert_eq!(
            decode(nr::UTIMENSAT, [fd(6), 0x8000, 0x9000, AT_SYMLINK_NOFOLLOW, 0, 0]),
            Some(Op::Times {
                target: FileArg::Path { dirfd: 6, path: 0x8000, follow: false, empty_ok: false },
                times: 0x9000,
                layout: TimesLayout::Timespec
            })
        );
        assert_eq!(
            decode(nr::UTIMENSAT, [fd(6), 0, 0, 0, 0, 0]),
            Some(Op::Times { target: FileArg::Fd(6), times: 0, layout: TimesLayout::Timespec })
        );
        // kill(pid, sig): the pid's sign says whom, as kill_something_info.
        let setown = |pid: i32| decode(nr::FCNTL, [fd(3), u64::from(owner::F_SETOWN), fd(pid), 0, 0, 0]);
        assert_eq!(setown(42), Some(Op::SetOwner { to: SignalTarget::Process(42) }));
        assert_eq!(setown(-42), Some(Op::SetOwner { to: SignalTarget::Group(42) }));
        assert_eq!(setown(0), Some(Op::SetOwner { to: SignalTarget::Nobody }));
        assert_eq!(
            decode(nr::PRLIMIT64, [fd(42), 4, 0x1000, 0, 0, 0]),
            Some(Op::Prlimit { pid: 42, resource: 4, new: 0x1000, old: 0 })
        );
        assert_eq!(
            decode(nr::PRLIMIT64, [fd(42), 4, 0, 0x2000, 0, 0]),
            Some(Op::Prlimit { pid: 42, resource: 4, new: 0, old: 0x2000 })
        );
        let kill = |pid: i32, sig: i32| decode(nr::KILL, [fd(pid), fd(sig), 0, 0, 0, 0]);
        assert_eq!(kill(42, 15), Some(Op::Signal { to: SignalTarget::Process(42), sig: 15 }));
        assert_eq!(kill(0, 9), Some(Op::Signal { to: SignalTarget::Group(0), sig: 9 }));
        assert_eq!(kill(-1, 0), Some(Op::Signal { to: SignalTarget::Everyone, sig: 0 }));
        assert_eq!(kill(-42, 19), Some(Op::Signal { to: SignalTarget::Group(42), sig: 19 }));
        assert_eq!(kill(i32::MIN, 1), Some(Op::Signal { to: SignalTarget::Group(i32::MIN), sig: 1 }));
        assert_eq!(
            decode(nr::TGKILL, [fd(7), fd(8), fd(6), 0, 0, 0]),
            Some(Op::Signal { to: SignalTarget::Thread { tgid: Some(7), tid: 8 }, sig: 6 })
        );
        assert_eq!(
            decode(nr::TKILL, [fd(8), fd(6), 0, 0, 0, 0]),
            Some(Op::Signal { to: SignalTarget::Thread { tgid: None, tid: 8 }, sig: 6 })
        );
        assert_eq!(
            decode(nr::RT_SIGQUEUEINFO, [fd(7), fd(34), 0x1000, 0, 0, 0]),
            Some(Op::Signal { to: SignalTarget::Process(7), sig: 34 })
        );
        assert_eq!(
            decode(nr::RT_TGSIGQUEUEINFO, [fd(7), fd(8), fd(34), 0x1000, 0, 0]),
            Some(Op::Signal { to: SignalTarget::Thread { tgid: Some(7), tid: 8 }, sig: 34 })
        );
        assert_eq!(
            decode(nr::UTIME, [0xa000, 0xb000, 0, 0, 0, 0]),
            Some(Op::Times {
                target: FileArg::Path { dirfd: AT_FDCWD, path: 0xa000, follow: true, empty_ok: false },
                times: 0xb000,
                layout: TimesLayout::Utimbuf
            })
        );
    }
}
