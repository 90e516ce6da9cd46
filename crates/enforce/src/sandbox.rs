//! What `rampart run` does to itself just before it execs the program it
//! confines: the parts of confinement fanotify cannot see.
//!
//! **Path labels that cannot be moved.** A file without a
//! `security.selinux` xattr is labeled by its path, so moving it to
//! another directory (rename, hard link) could move it under another
//! label, which SELinux never allows (labels live in the inode). The
//! launcher forbids confined processes to move files between directories
//! of the marked filesystems, and to rename directories there (which
//! moves every path label below them): a Landlock ruleset (ABI 2 or
//! later) that handles only `LANDLOCK_ACCESS_FS_REFER` and
//! `LANDLOCK_ACCESS_FS_REMOVE_DIR` and grants them on every directory
//! hierarchy except the marked filesystems' mounts. Cross-directory
//! `rename` and `link` there fail with `EXDEV` (`mv` then copies, which is
//! an open for reading, decided as any); renaming or removing a directory
//! there fails with `EACCES`; anywhere else they work (except directly in
//! a directory that holds a marked mount, such as `/tmp` for
//! `/tmp/marked`: its own entries are not granted). A file renamed or
//! linked within one directory is allowed: the daemon makes that call,
//! and first writes the file's path label into its xattr, so the label
//! stays with the file (crate::new_labels, `keep`). Landlock also refuses
//! mounts to the sandboxed process.
//!
//! **Socket files.** `bind` of a Unix socket to a path makes a file, which
//! SELinux checks as any creation (`add_name` on the directory, `create`
//! on the `sock_file`), while neither fanotify nor the supervised calls
//! see it (a filter cannot read the address). The ruleset handles
//! `MAKE_SOCK` with `REFER`: no socket file is made on the marked
//! filesystems (`EACCES`), coarser than SELinux, never laxer; a `mknod`
//! of a socket, which the daemon makes, is refused the same way.
//!
//! **TCP only through the daemon.** rampartd makes every bind and every
//! connect of a launched process itself, on its copy of the socket, with
//! the address it checked (crate::sockets). A TCP bind or connect the
//! kernel would make for the process some other way (a way the filter
//! missed) would go unchecked: where the kernel has Landlock ABI 4 the
//! ruleset handles `LANDLOCK_ACCESS_NET_BIND_TCP` and `_CONNECT_TCP` and
//! grants them on no port, so a TCP bind or connect the process makes
//! itself fails (`EACCES`); rampartd's threads, outside the ruleset, make
//! the checked ones. MPTCP and SCTP, which those rights do not cover and
//! whose connects ask `name_connect` as TCP's do, are not made at all
//! (crate::sockets).
//!
//! **Staying in its domain.** A process's domain is its cgroup
//! ([`crate::cgroups`]); root could leave it by writing its pid to the
//! hierarchy's `cgroup.procs` (root owns those files). The ruleset also
//! handles `WRITE_FILE` and grants it everywhere but the cgroup v2
//! mounts: no file there can be opened for writing. (Files directly in
//! a directory that holds such a mount, `/sys/fs/cgroup` on a hybrid
//! layout, are not writable either.)
//!
//! **The daemon's own defence.** Where the kernel has Landlock ABI 6, the
//! same ruleset scopes signals (`LANDLOCK_SCOPE_SIGNAL`): a confined
//! process, root included, cannot signal a process outside its sandbox
//! (`kill -9` or `kill -STOP` of rampartd, or of anything else). Landlock
//! also refuses a sandboxed process `ptrace` access to processes outside
//! its sandbox, so `ptrace`, `pidfd_getfd` and `process_vm_readv` of
//! rampartd fail.
//!
//! **Capabilities bounded by the policy.** Under SELinux root in a
//! confined domain still needs `capability` (and `capability2`) on itself
//! for every capability it uses. The launcher drops, before the exec,
//! every capability the daemon says the new domain may not use
//! ([`bound_capabilities`]): from the bounding set (no later exec gets it
//! back), and from the effective, permitted, inheritable and ambient sets.
//! The kernel then refuses exactly what SELinux would, though without an
//! AVC line (it never asks the daemon).
//!
//! **What a confined process may not call** ([`refuse_system_calls`], a
//! seccomp filter): extended attribute writes unless the daemon
//! supervises them (crate::supervised: it then checks a relabel's
//! `relabelfrom`/`relabelto`; the `*xattrat` calls and the 32-bit
//! numbers stay refused), the mount family (`mount`, `umount2`,
//! `pivot_root`, the new mount API), the `ioctl`s that set inode flags
//! (`chattr`: SELinux's `setattr`, seen by nothing here) or put input
//! into a terminal (`TIOCSTI`, `TIOCLINUX`: typed into the shell that
//! started the confined process, outside every domain) and namespace
//! creation (`unshare` and
//! `clone` with a `CLONE_NEW*` flag, `setns`, `clone3`, whose flags a
//! filter cannot read: `ENOSYS`, and C libraries fall back to `clone`),
//! and access to other processes' memory and descriptors (`ptrace`,
//! `process_vm_readv`, `process_vm_writev`, `pidfd_getfd`, and
//! `perf_event_open`, whose samples copy a process's user stack and
//! registers, and whose counters a child inherits across its exec): a
//! process that entered another domain by an exec transition stays in
//! its parent's Landlock domain, where Landlock lets them through, and
//! SELinux's `process ptrace` check between the two domains has no
//! counterpart here (`the_old_domain_cannot_trace_the_new_one`: a child
//! traced into trusted_t was made to read the secret). And the kernel's
//! keyrings (`add_key`, `request_key`, `keyctl`): every process of a
//! user shares its user keyring, where SELinux labels each key with its
//! creator's domain and checks `key { view read ... }`, and nothing here
//! labels keys (`a_confined_process_cannot_read_its_users_keys`).
//! All `EPERM`: coarser than SELinux (a domain the policy lets relabel
//! or trace cannot), never laxer. On x86-64 the 32-bit (`int 0x80`)
//! numbers of the same calls are refused too, and the x32 numbers all
//! (`ENOSYS`: the same calls under other numbers, where a kernel enables
//! x32).
//!
//! **What the policy grants on no type** ([`Forbidden`]). Where the
//! domain may `write` no file of any type, the ruleset also handles
//! `TRUNCATE` (ABI 3); where it may `remove_name` in no directory,
//! `REMOVE_FILE` (unlink, renames out of a directory); both granted outside
//! the marked filesystems, as `REFER`. Where it may `setattr` nothing, the
//! seccomp filter refuses chmod and chown; where it has no permission of
//! a System V IPC class, that class's calls (crate::sysv_ipc), and of
//! `anon_inode`, the calls that make one (crate::anon_inodes). These are
//! exact (SELinux would refuse each on every object); where the policy
//! grants the permission on some type, a file call goes to rampartd,
//! which decides it exactly
//! (crate::supervised, crate::supervisor). Without that (a launcher that
//! could not hand its listener over), where the domain may not write
//! every type the filter refuses `truncate(2)` by name on every file
//! ([`Forbidden::TruncateByName`], coarser than SELinux); a truncate
//! through a descriptor needs an open for writing, which the daemon
//! decides. The filter also refuses a listener of the process's own
//! (`seccomp` with `SECCOMP_FILTER_FLAG_NEW_LISTENER`): it would take the
//! supervised calls away from rampartd.
//!
//! **Descriptors across the transition.** The descriptors the daemon says
//! the new domain may not use are replaced by `/dev/null`
//! ([`revoke_descriptors`]), as SELinux's `flush_unauthorized_files` does
//! at a transition.
//!
//! **What a change of domain clears** ([`clear_inherited_state`]). A
//! launch enters a domain, and the kernel clears at every exec that
//! changes the domain the personality flags `PER_CLEAR_ON_SETID` (no
//! address randomization, the legacy layout, page zero, readable implies
//! executable) and, under SELinux and AppArmor, the parent-death signal:
//! the launcher clears both on itself before its exec (`setarch -R
//! rampart run ...` still runs the program with ASLR). Inside the sandbox
//! an exec transition carrying the flags is refused instead (crate::entry),
//! and its parent-death signal is cleared by the daemon
//! (crate::signal_state).
//!
//! **The daemon's policy files.** rampartd reloads its policy and
//! file_contexts when an authorized caller asks; a confined process that
//! rewrote them first would choose what is loaded. Wherever they are
//! (often on a filesystem that is not marked, where the daemon sees no
//! write), the ruleset refuses beneath their directories (the status
//! reply's `protected_dirs`) every write, truncate, creation, removal
//! and move, whatever the policy says. (Directly in the directories above
//! them, `/etc` for `/etc/selinux`, files cannot be created, removed or
//! moved either: Landlock grants rights on whole trees.)
//!
//! The ruleset is inherited by every descendant and survives exec (also
//! domain transitions); rampartd lets no process into a confined domain
//! without it (crate::entry, docs/security.md).

use std::ffi::CString;
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::bpf::{
    bpf, data_arg, AUDIT_ARCH_I386, AUDIT_ARCH_X86_64, BPF_JEQ_K, BPF_JGE_K, BPF_JSET_K, BPF_LD_W_ABS, BPF_RET_K,
    DATA_ARCH, DATA_NR,
};

const LANDLOCK_ACCESS_FS_WRITE_FILE: u64 = 1 << 1;
const LANDLOCK_ACCESS_FS_REMOVE_DIR: u64 = 1 << 4;
const LANDLOCK_ACCESS_FS_REMOVE_FILE: u64 = 1 << 5;
const LANDLOCK_ACCESS_FS_MAKE_DIR: u64 = 1 << 7;
const LANDLOCK_ACCESS_FS_MAKE_REG: u64 = 1 << 8;
const LANDLOCK_ACCESS_FS_MAKE_SOCK: u64 = 1 << 9;
const LANDLOCK_ACCESS_FS_MAKE_SYM: u64 = 1 << 12;
const LANDLOCK_ACCESS_FS_REFER: u64 = 1 << 13;
const LANDLOCK_ACCESS_FS_TRUNCATE: u64 = 1 << 14;
/// What the ruleset always handles, and grants outside the marked
/// filesystems.
const HANDLED: u64 = LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_MAKE_SOCK;

/// Operations a domain's policy allows on no type at all: refusing them
/// to the confined process is then exactly SELinux's answer (the daemon
/// says which, in the exec-context reply). Decided at the launch, under
/// the policy and booleans of that moment: a seccomp filter or Landlock
/// ruleset cannot be loosened later, so a boolean set afterwards to
/// grant one leaves it refused (coarser), and one set to take the last
/// grant away leaves it to what decides it otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Forbidden {
    /// `file { write }` on no type: no truncate (Landlock `TRUNCATE`,
    /// on the marked filesystems).
    Truncate,
    /// `dir { remove_name }` on no type: no unlink, no rename out of a
    /// directory (Landlock `REMOVE_FILE`, on the marked filesystems).
    Unlink,
    /// `file { setattr }` and `dir { setattr }` on no type: no chmod or
    /// chown (seccomp, everywhere).
    Setattr,
    /// `file { write }` not on every type: no `truncate(2)` by name
    /// (seccomp, everywhere). Which file a name reaches cannot be told
    /// without a race, and a truncate by name opens nothing, so the daemon
    /// never sees it; `ftruncate` after an open for writing (decided by
    /// the daemon) stays. Coarser than SELinux, never laxer.
    #[serde(rename = "truncate_by_name")]
    TruncateByName,
    /// Under an enforced AppArmor profile: no `link` and no `rename`
    /// (seccomp, everywhere). AppArmor decides by name, and a new name
    /// for a file (a hard link, a rename onto a name the profile allows)
    /// would change its answer; the kernel's AppArmor checks `l` and the
    /// rename's source and target, which fanotify never sees. Coarser
    /// than AppArmor, never laxer; dropped by a launcher whose calls the
    /// daemon supervises (crate::supervisor asks the profile exactly).
    #[serde(rename = "link_rename")]
    LinkRename,
    /// No permission of class `shm` on any type: no System V shared
    /// memory (seccomp, `EACCES`: crate::sysv_ipc).
    Shm,
    /// No permission of class `sem`: no System V semaphores.
    Sem,
    /// No permission of class `msgq`: no System V message queues.
    Msg,
    /// No permission of class `anon_inode`: no userfaultfd, no secret
    /// memory (seccomp, `EACCES`: crate::anon_inodes).
    #[serde(rename = "anon_inode")]
    AnonInode,
    /// No connect or datagram of the process's own to an abstract Unix
    /// name bound outside its sandbox (Landlock's
    /// `LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET`, ABI 6): rampartd makes
    /// every connect to an abstract name itself, after `connectto` or
    /// `sendto` on the holder (crate::unix_connects), and its threads are
    /// outside the sandbox; what is left to the kernel is a datagram sent
    /// to a name without a connect (`sendto`, `sendmsg`: the address is
    /// in memory the filter cannot read), refused. Coarser than SELinux,
    /// never laxer; set while the domain and the daemon enforce.
    #[serde(rename = "abstract_unix")]
    AbstractUnix,
}
const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;
const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
const LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
const LANDLOCK_SCOPE_SIGNAL: u64 = 1 << 1;
const LANDLOCK_ACCESS_NET_BIND_TCP: u64 = 1 << 0;
const LANDLOCK_ACCESS_NET_CONNECT_TCP: u64 = 1 << 1;

/// `struct landlock_ruleset_attr` (ABI 6 layout; the kernel accepts a
/// prefix of it from older callers, and this one gives the whole).
#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

/// `struct landlock_path_beneath_attr` (packed in the uapi header).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

fn check(rc: libc::c_long, what: &str) -> io::Result<libc::c_long> {
    if rc < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("{what}: {e}")));
    }
    Ok(rc)
}

/// The Landlock ABI version of this kernel (0: none).
pub fn landlock_abi() -> u32 {
    // SAFETY: with the VERSION flag the call takes no attribute (null,
    // size 0) and returns the ABI version or -1.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(rc).unwrap_or(0)
}

/// The directories to grant [`HANDLED`] beneath so that everything but
/// `excluded` (and what is below it) is covered: `dir` itself when no
/// excluded path is in it, else its subdirectories, recursively.
fn grants(dir: &Path, excluded: &[PathBuf], out: &mut Vec<PathBuf>) {
    if excluded.iter().any(|e| e == dir) {
        return;
    }
    if !excluded.iter().any(|e| e.starts_with(dir)) {
        out.push(dir.to_path_buf());
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        // Never through a symlink (its target is reached by its own path).
        if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            grants(&entry.path(), excluded, out);
        }
    }
}

/// A directory [`grants`] named, `O_PATH`, not through a link.
fn open_path(dir: &Path) -> io::Result<OwnedFd> {
    let c = CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, format!("{} holds a NUL byte", dir.display())))?;
    // SAFETY: `c` is NUL-terminated and outlives the call.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The launcher's Landlock ruleset (see the module docs), for this
/// process and its descendants: no moves of files between directories,
/// no renaming or removing directories, on the filesystems whose devices
/// are `marked` (`major:minor`); no writes on the cgroup v2 hierarchy; no
/// change at all beneath the daemon's `protected` directories (its policy
/// and file_contexts); what `forbid` says; signals scoped to the sandbox.
/// `opens_supervised`: the process's opens asking to write or truncate go
/// to rampartd (crate::supervised, "Opens"), whose workers carry the
/// `TRUNCATE` right of the daemon's own ruleset; this one then leaves
/// `TRUNCATE` unhandled, since while it is handled every open walks its
/// path to the root (about 0.6 µs an open here: docs/benchmarks.md).
/// `sockets_supervised`: the process's binds and connects go to rampartd,
/// which makes every TCP one itself; the ruleset then refuses the process
/// any TCP bind or connect of its own (see the module docs).
/// Sets `no_new_privs`, which Landlock requires of an unprivileged caller.
pub fn restrict_filesystem(
    marked: &[String],
    protected: &[PathBuf],
    forbid: &[Forbidden],
    (opens_supervised, sockets_supervised): (bool, bool),
) -> io::Result<()> {
    let net = if sockets_supervised { tcp_made_by_the_daemon() } else { 0 };
    enforce_ruleset(&ruleset_handling(marked, protected, forbid, opens_supervised, net)?)
}

/// The network rights a launched process's ruleset handles (and grants
/// nowhere): TCP binds and connects, which rampartd makes for it
/// (crate::sockets), where the kernel has Landlock ABI 4.
fn tcp_made_by_the_daemon() -> u64 {
    let abi = landlock_abi();
    if abi < 4 {
        eprintln!(
            "rampart: run: warning: Landlock ABI {abi} (< 4): a TCP bind or connect the confined process gets the \
             kernel to make without the calls rampartd makes for it is not refused"
        );
        return 0;
    }
    LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP
}

/// The filesystem part of the ruleset [`restrict_filesystem`] enforces,
/// built (from this process's mount table) and not yet enforced: the
/// daemon builds it once and enforces it on each thread that makes a
/// supervised call (crate::supervisor). No network rights: those threads
/// make the TCP binds and connects the launched process may not.
pub fn build_ruleset(
    marked: &[String],
    protected: &[PathBuf],
    forbid: &[Forbidden],
    opens_supervised: bool,
) -> io::Result<OwnedFd> {
    ruleset_handling(marked, protected, forbid, opens_supervised, 0)
}

/// [`build_ruleset`], handling the network rights `net` too.
fn ruleset_handling(
    marked: &[String],
    protected: &[PathBuf],
    forbid: &[Forbidden],
    opens_supervised: bool,
    net: u64,
) -> io::Result<OwnedFd> {
    if landlock_abi() < 2 {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this kernel has no Landlock ABI 2 (REFER), which keeps path labels from being moved by rename or link",
        ));
    }
    let mountinfo = fs::read_to_string("/proc/self/mountinfo")?;
    let abi = landlock_abi();
    let scoped = if abi < 6 {
        0
    } else if forbid.contains(&Forbidden::AbstractUnix) {
        LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
    } else {
        LANDLOCK_SCOPE_SIGNAL
    };
    if scoped == 0 {
        eprintln!(
            "rampart: run: warning: Landlock ABI {abi} (< 6): the confined process may still signal processes \
             outside its sandbox, rampartd included, and send datagrams to abstract Unix names bound outside it"
        );
    }
    let truncate = if abi >= 3 && !opens_supervised { LANDLOCK_ACCESS_FS_TRUNCATE } else { 0 };
    // Each group of rights is granted everywhere but beneath its
    // excluded trees (and directly in their ancestors: `grants`).
    let mut moves = HANDLED;
    let mut changes = LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_MAKE_DIR;
    for (forbidden, right) in [(Forbidden::Unlink, LANDLOCK_ACCESS_FS_REMOVE_FILE), (Forbidden::Truncate, truncate)] {
        if forbid.contains(&forbidden) {
            moves |= right;
        } else {
            changes |= right;
        }
    }
    let with = |trees: Vec<PathBuf>| -> Vec<PathBuf> { trees.into_iter().chain(protected.iter().cloned()).collect() };
    let groups = [
        (moves, with(crate::mountinfo::mounts_of_devices(&mountinfo, marked))),
        // A pid written to a `cgroup.procs` would move the process out of
        // its domain.
        (LANDLOCK_ACCESS_FS_WRITE_FILE, with(crate::mountinfo::cgroup2_mounts(&mountinfo))),
        (changes, protected.to_vec()),
    ];
    let handled = groups.iter().fold(0, |all, (rights, ..)| all | rights);
    let attr = RulesetAttr { handled_access_fs: handled, handled_access_net: net, scoped };
    // Before ABI 6 the structure ends after `handled_access_net`.
    let size = if abi >= 6 { std::mem::size_of::<RulesetAttr>() } else { 16 };
    // SAFETY: `attr` is a valid attribute structure of at least `size`
    // bytes, alive across the call.
    let rc = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, &attr as *const RulesetAttr, size, 0) };
    let raw = check(rc, "landlock_create_ruleset")?;
    // SAFETY: the kernel just returned this descriptor for us.
    let ruleset = unsafe { OwnedFd::from_raw_fd(raw as libc::c_int) };
    for (rights, excluded) in &groups {
        let mut dirs = Vec::new();
        grants(Path::new("/"), excluded, &mut dirs);
        for dir in dirs {
            let Ok(fd) = open_path(&dir) else { continue };
            let rule = PathBeneathAttr { allowed_access: *rights, parent_fd: fd.as_raw_fd() };
            // SAFETY: `rule` is a valid path-beneath attribute alive
            // across the call; both descriptors are open.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_landlock_add_rule,
                    ruleset.as_raw_fd(),
                    LANDLOCK_RULE_PATH_BENEATH,
                    &rule as *const PathBeneathAttr,
                    0,
                )
            };
            check(rc, &format!("landlock_add_rule {}", dir.display()))?;
        }
    }
    Ok(ruleset)
}

/// Enforces `ruleset` on the calling thread (and what it starts from
/// now on), with `no_new_privs`.
pub fn enforce_ruleset(ruleset: &OwnedFd) -> io::Result<()> {
    // SAFETY: prctl with integer arguments only.
    check(unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } as libc::c_long, "PR_SET_NO_NEW_PRIVS")?;
    // SAFETY: restricts the calling thread with an open ruleset; no memory.
    check(
        unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0) },
        "landlock_restrict_self",
    )?;
    Ok(())
}

/// Replaces each descriptor in `fds` by `/dev/null` (open for reading and
/// writing), as SELinux's `flush_unauthorized_files` does with the
/// descriptors a new domain may not use: the numbers stay taken, so the
/// program cannot mistake a later open for them.
pub fn revoke_descriptors(fds: &[i32]) -> io::Result<()> {
    if fds.is_empty() {
        return Ok(());
    }
    let null = fs::OpenOptions::new().read(true).write(true).open("/dev/null")?;
    for &fd in fds {
        // SAFETY: dup2 onto a number of our own table; `null` is open.
        if unsafe { libc::dup2(null.as_raw_fd(), fd) } < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(e.kind(), format!("replacing descriptor {fd} by /dev/null: {e}")));
        }
    }
    Ok(())
}

const DATA_ARG0_LOW: u32 = data_arg(0);
const DATA_ARG1_LOW: u32 = data_arg(1);
const CLONE_NEW_ANY: u32 = 0x0002_0000 // CLONE_NEWNS
    | 0x0200_0000 // CLONE_NEWCGROUP
    | 0x0400_0000 // CLONE_NEWUTS
    | 0x0800_0000 // CLONE_NEWIPC
    | 0x1000_0000 // CLONE_NEWUSER
    | 0x2000_0000 // CLONE_NEWPID
    | 0x4000_0000 // CLONE_NEWNET
    | 0x0000_0080; // CLONE_NEWTIME

/// The calls a confined process may not make, in one ABI's numbering:
/// refused outright, refused when their first argument has a `CLONE_NEW*`
/// flag, and answered `ENOSYS`.
struct Refused {
    arch: u32,
    always: &'static [u32],
    with_new_namespace: &'static [u32],
    unsupported: &'static [u32],
    /// chmod and chown calls (`setattr`), refused when the domain may
    /// `setattr` nothing.
    attributes: &'static [u32],
    /// `truncate` by name, refused when the domain may not write every
    /// type ([`Forbidden::TruncateByName`]).
    truncate_by_name: &'static [u32],
    /// `link` and `rename` calls ([`Forbidden::LinkRename`]).
    link_rename: &'static [u32],
    /// Extended attribute writes the daemon decides when it supervises
    /// the process (crate::supervised); refused otherwise.
    xattr_writes: &'static [u32],
    /// `seccomp`: refused with `SECCOMP_FILTER_FLAG_NEW_LISTENER` (a
    /// filter of the process's own installed later would take the
    /// supervised calls away from rampartd: crate::supervised).
    seccomp: u32,
    /// `ioctl`: refused with the commands of [`REFUSED_IOCTLS`].
    ioctl: u32,
}

/// The `ioctl` commands refused (`EPERM`), coarser than SELinux, never
/// laxer:
/// * those that set an inode's flags or version (`FS_IOC_SETFLAGS`,
///   `FS_IOC32_SETFLAGS`, `FS_IOC_SETVERSION`, `FS_IOC32_SETVERSION`,
///   `FS_IOC_FSSETXATTR`: `chattr`), which SELinux checks as `setattr`
///   and nothing here could see;
/// * those that put input into a terminal (`TIOCSTI`; `TIOCLINUX`, whose
///   selection paste does on a console): a confined process on the
///   terminal of the shell that started it would type commands that
///   shell runs, outside every domain (the sandbox escape bubblewrap and
///   flatpak refuse them for). SELinux would check the terminal's
///   `ioctl` permission.
const REFUSED_IOCTLS: [u32; 7] = [0x4008_6602, 0x4004_6602, 0x4008_7602, 0x4004_7602, 0x401c_5820, TIOCSTI, TIOCLINUX];
const TIOCSTI: u32 = 0x5412;
const TIOCLINUX: u32 = 0x541c;

/// x86-64 (and, for `int 0x80`, i386) numbers; the calls numbered from
/// 424 on are the same in both.
const X86_64: Refused = Refused {
    arch: AUDIT_ARCH_X86_64,
    // mount umount2 pivot_root setns open_tree move_mount fsopen fsconfig
    // fsmount fspick mount_setattr setxattrat removexattrat open_tree_attr
    // file_setattr (inode flags by path: see REFUSED_IOCTLS); ptrace
    // process_vm_readv process_vm_writev pidfd_getfd perf_event_open;
    // add_key request_key keyctl; bpf (a device program detached would
    // open the devices: crate::device_access)
    always: &[
        165, 166, 155, 308, 428, 429, 430, 431, 432, 433, 442, 463, 466, 467, 469, 101, 310, 311, 438, 298, 248, 249,
        250, 321,
    ],
    // unshare clone
    with_new_namespace: &[272, 56],
    // clone3
    unsupported: &[435],
    // chmod fchmod chown fchown lchown fchownat fchmodat fchmodat2
    attributes: &[90, 91, 92, 93, 94, 260, 268, 452],
    // truncate
    truncate_by_name: &[76],
    // link linkat rename renameat renameat2
    link_rename: &[86, 265, 82, 264, 316],
    // setxattr lsetxattr fsetxattr removexattr lremovexattr fremovexattr
    xattr_writes: &[188, 189, 190, 197, 198, 199],
    seccomp: 317,
    ioctl: 16,
};
const I386: Refused = Refused {
    arch: AUDIT_ARCH_I386,
    // setxattr lsetxattr fsetxattr removexattr lremovexattr fremovexattr
    // mount umount umount2 pivot_root setns, then as on x86-64; ptrace
    // process_vm_readv process_vm_writev (pidfd_getfd: as on x86-64)
    // perf_event_open; add_key request_key keyctl; bpf
    always: &[
        226, 227, 228, 235, 236, 237, 21, 22, 52, 217, 346, 428, 429, 430, 431, 432, 433, 442, 463, 466, 467, 469, 26,
        347, 348, 438, 336, 286, 287, 288, 357,
    ],
    // unshare clone
    with_new_namespace: &[310, 120],
    unsupported: &[435],
    // chmod lchown fchmod fchown chown lchown32 fchown32 chown32 fchownat
    // fchmodat fchmodat2
    attributes: &[15, 16, 94, 95, 182, 198, 207, 212, 298, 306, 452],
    // truncate truncate64
    truncate_by_name: &[92, 193],
    // link linkat rename renameat renameat2
    link_rename: &[9, 303, 38, 302, 353],
    // refused always (in `always`): only x86-64 calls are supervised
    xattr_writes: &[],
    seccomp: 354,
    ioctl: 54,
};

/// `__X32_SYSCALL_BIT`.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// The filter for `abis`, x32 refused; every other ABI is left alone
/// only where it is not x86 at all; see the module docs.
fn filter_program(abis: &[Refused], forbid: &[Forbidden], supervised: bool) -> Vec<libc::sock_filter> {
    let allow = bpf(BPF_RET_K, libc::SECCOMP_RET_ALLOW, 0, 0);
    let eperm = bpf(BPF_RET_K, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32, 0, 0);
    let enosys = bpf(BPF_RET_K, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32, 0, 0);
    // The x32 numbers (x86-64's arch, the x32 bit set) name the same
    // calls under other numbers: refused, every one (`ENOSYS`, as on a
    // kernel without x32).
    let mut prog = vec![
        bpf(BPF_LD_W_ABS, DATA_ARCH, 0, 0),
        bpf(BPF_JEQ_K, AUDIT_ARCH_X86_64, 0, 3),
        bpf(BPF_LD_W_ABS, DATA_NR, 0, 0),
        bpf(BPF_JGE_K, X32_SYSCALL_BIT, 0, 1),
        enosys,
    ];
    for abi in abis {
        // seccomp(SECCOMP_SET_MODE_FILTER, NEW_LISTENER, ...): refused.
        prog.extend([
            bpf(BPF_LD_W_ABS, DATA_ARCH, 0, 0),
            bpf(BPF_JEQ_K, abi.arch, 0, 5),
            bpf(BPF_LD_W_ABS, DATA_NR, 0, 0),
            bpf(BPF_JEQ_K, abi.seccomp, 0, 3),
            bpf(BPF_LD_W_ABS, DATA_ARG1_LOW, 0, 0),
            bpf(BPF_JSET_K, libc::SECCOMP_FILTER_FLAG_NEW_LISTENER as u32, 0, 1),
            eperm,
        ]);
    }
    for abi in abis {
        // ioctl(fd, FS_IOC_SETFLAGS, TIOCSTI and the like, ...): refused.
        let n = REFUSED_IOCTLS.len() as u8;
        prog.extend([
            bpf(BPF_LD_W_ABS, DATA_ARCH, 0, 0),
            bpf(BPF_JEQ_K, abi.arch, 0, n + 4),
            bpf(BPF_LD_W_ABS, DATA_NR, 0, 0),
            bpf(BPF_JEQ_K, abi.ioctl, 0, n + 2),
            bpf(BPF_LD_W_ABS, DATA_ARG1_LOW, 0, 0),
        ]);
        for (i, &cmd) in REFUSED_IOCTLS.iter().enumerate() {
            let left = n - i as u8 - 1;
            prog.push(bpf(BPF_JEQ_K, cmd, left, if left == 0 { 1 } else { 0 }));
        }
        prog.push(eperm);
    }
    // System V IPC of the forbidden classes: refused (`EACCES`).
    prog.extend(crate::sysv_ipc::fragment(forbid));
    prog.extend(crate::anon_inodes::fragment(forbid));
    for abi in abis {
        // One block per ABI: [arch check] [nr loads and tests] [returns].
        let mut block = vec![bpf(BPF_LD_W_ABS, DATA_NR, 0, 0)];
        let mut always = abi.always.to_vec();
        if forbid.contains(&Forbidden::Setattr) {
            always.extend_from_slice(abi.attributes);
        }
        if forbid.contains(&Forbidden::TruncateByName) {
            always.extend_from_slice(abi.truncate_by_name);
        }
        if forbid.contains(&Forbidden::LinkRename) {
            always.extend_from_slice(abi.link_rename);
        }
        if !supervised {
            always.extend_from_slice(abi.xattr_writes);
        }
        let tests = always.len() + abi.with_new_namespace.len() + abi.unsupported.len();
        // Instructions after each test, to the shared returns:
        // [allow][eperm][enosys][ld arg0][jset][allow][eperm]
        for (i, &nr) in always.iter().enumerate() {
            let left = (tests - i - 1) as u8;
            block.push(bpf(BPF_JEQ_K, nr, left + 1, 0));
        }
        for (i, &nr) in abi.unsupported.iter().enumerate() {
            let left = (tests - always.len() - i - 1) as u8;
            block.push(bpf(BPF_JEQ_K, nr, left + 2, 0));
        }
        for (i, &nr) in abi.with_new_namespace.iter().enumerate() {
            let left = (tests - always.len() - abi.unsupported.len() - i - 1) as u8;
            block.push(bpf(BPF_JEQ_K, nr, left + 3, 0));
        }
        block.push(allow);
        block.push(eperm);
        block.push(enosys);
        block.push(bpf(BPF_LD_W_ABS, DATA_ARG0_LOW, 0, 0));
        block.push(bpf(BPF_JSET_K, CLONE_NEW_ANY, 1, 0));
        block.push(allow);
        block.push(eperm);
        // Skip the block unless the arch matches.
        prog.push(bpf(BPF_LD_W_ABS, DATA_ARCH, 0, 0));
        prog.push(bpf(BPF_JEQ_K, abi.arch, 0, block.len() as u8));
        prog.extend(block);
    }
    prog.push(allow);
    prog
}

/// Installs the seccomp filter of the module docs on this process (and
/// everything it starts); with `forbid`'s `setattr`, chmod and chown too,
/// with its `truncate_by_name`, `truncate(2)`, and with its
/// `link_rename`, links and renames. Extended attribute writes are
/// refused unless `supervised` (the daemon decides them:
/// crate::supervised).
/// Needs `no_new_privs` (set with the Landlock ruleset) or CAP_SYS_ADMIN.
pub fn refuse_system_calls(forbid: &[Forbidden], supervised: bool) -> io::Result<()> {
    if !cfg!(target_arch = "x86_64") {
        return Err(io::Error::new(io::ErrorKind::Unsupported, "the system call filter knows x86-64 only"));
    }
    let prog = filter_program(&[X86_64, I386], forbid, supervised);
    let fprog = libc::sock_fprog { len: prog.len() as u16, filter: prog.as_ptr() as *mut libc::sock_filter };
    // SAFETY: `fprog` points at `prog`, alive across the call; the kernel
    // copies the program.
    check(
        unsafe {
            libc::syscall(libc::SYS_seccomp, libc::SECCOMP_SET_MODE_FILTER, 0, &fprog as *const libc::sock_fprog)
        },
        "seccomp",
    )?;
    Ok(())
}

/// Clears what a change of domain clears (see the module docs) from this
/// thread, whose exec keeps it.
pub fn clear_inherited_state() -> io::Result<()> {
    // SAFETY: personality takes a flags word; 0xffffffff only queries.
    let now = unsafe { libc::personality(0xffff_ffff) };
    if now < 0 {
        return Err(io::Error::last_os_error());
    }
    let cleared = now as u32 & !crate::entry::PER_CLEAR_ON_SETID;
    // SAFETY: as above, with the current flags less the cleared ones.
    if cleared != now as u32 && unsafe { libc::personality(libc::c_ulong::from(cleared)) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, 0, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The highest capability number this kernel knows.
fn last_capability() -> u32 {
    fs::read_to_string("/proc/sys/kernel/cap_last_cap").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(40)
}

/// Keeps only the capabilities in `allowed` (bit `i`: capability `i`) for
/// this process and everything it execs (see the module docs).
pub fn bound_capabilities(allowed: u64) -> io::Result<()> {
    let last = last_capability().min(63);
    // The bounding set first: dropping from it needs CAP_SETPCAP, which
    // may itself be about to go.
    for cap in 0..=last {
        if allowed & (1 << cap) == 0 {
            // SAFETY: prctl with integer arguments only.
            let rc = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) };
            // EINVAL: a capability this kernel does not have.
            if rc != 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("dropping capability {cap} from the bounding set: {}", io::Error::last_os_error()),
                ));
            }
        }
    }
    // SAFETY: prctl with integer arguments only.
    unsafe { libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong, 0, 0, 0) };
    let mut data = crate::thread_creds::capget()?;
    for (i, d) in data.iter_mut().enumerate() {
        let keep = (allowed >> (32 * i)) as u32;
        d.effective &= keep;
        d.permitted &= keep;
        d.inheritable &= keep;
    }
    crate::thread_creds::capset(&data)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the filter on one call with `arg0` as the low half of every
    /// argument.
    fn run(prog: &[libc::sock_filter], nr: u32, arch: u32, arg0: u32) -> u32 {
        crate::bpf::run(prog, nr, arch, [arg0; 6])
    }

    #[test]
    fn the_filter_refuses_exactly_its_calls() {
        let prog = filter_program(&[X86_64, I386], &[], false);
        let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
        let enosys = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
        for abi in [X86_64, I386] {
            for &nr in abi.always.iter().chain(abi.xattr_writes) {
                assert_eq!(run(&prog, nr, abi.arch, 0), eperm, "{nr} on {:#x}", abi.arch);
            }
            // Supervised: the x86-64 xattr writes go to the daemon.
            let supervised = filter_program(&[X86_64, I386], &[], true);
            for &nr in abi.xattr_writes {
                assert_eq!(run(&supervised, nr, abi.arch, 0), libc::SECCOMP_RET_ALLOW, "{nr}");
            }
            for &nr in abi.unsupported {
                assert_eq!(run(&prog, nr, abi.arch, 0), enosys);
            }
            // ioctl: the inode flags and terminal input no; a terminal's
            // settings, a file's size, yes.
            for cmd in REFUSED_IOCTLS {
                assert_eq!(run(&prog, abi.ioctl, abi.arch, cmd), eperm, "ioctl {cmd:#x} on {:#x}", abi.arch);
            }
            for cmd in [0x5401, 0x8008_6601, 0x4004_6601, 0x541b] {
                assert_eq!(run(&prog, abi.ioctl, abi.arch, cmd), libc::SECCOMP_RET_ALLOW, "ioctl {cmd:#x}");
            }
            // seccomp: a filter of its own, yes; a listener of its own, no.
            assert_eq!(run(&prog, abi.seccomp, abi.arch, 0), libc::SECCOMP_RET_ALLOW);
            assert_eq!(run(&prog, abi.seccomp, abi.arch, 1), libc::SECCOMP_RET_ALLOW, "TSYNC");
            assert_eq!(run(&prog, abi.seccomp, abi.arch, 8), eperm, "NEW_LISTENER");
            for &nr in abi.with_new_namespace {
                assert_eq!(run(&prog, nr, abi.arch, 0x0001_0000 | 0x11), libc::SECCOMP_RET_ALLOW, "plain clone");
                assert_eq!(run(&prog, nr, abi.arch, 0x1000_0000), eperm, "CLONE_NEWUSER");
                assert_eq!(run(&prog, nr, abi.arch, 0x0002_0000), eperm, "CLONE_NEWNS");
            }
        }
        // Ordinary calls pass: read, openat, execve; x86-64 setxattr's
        // number is an ordinary i386 call (and the other way round).
        for nr in [0, 257, 59, 2] {
            assert_eq!(run(&prog, nr, AUDIT_ARCH_X86_64, 0), libc::SECCOMP_RET_ALLOW, "{nr}");
        }
        assert_eq!(run(&prog, 188, AUDIT_ARCH_I386, 0), libc::SECCOMP_RET_ALLOW);
        assert_eq!(run(&prog, 226, AUDIT_ARCH_X86_64, 0), libc::SECCOMP_RET_ALLOW);
        assert_eq!(run(&prog, 188, 0xC000_00B7, 0), libc::SECCOMP_RET_ALLOW, "another arch");
        // x32: every number refused, mount and getpid alike.
        for nr in [165, 39, 0] {
            assert_eq!(run(&prog, X32_SYSCALL_BIT | nr, AUDIT_ARCH_X86_64, 0), enosys, "x32 {nr}");
        }
        // chmod and truncate pass unless forbidden; then they and their
        // relatives are refused on both ABIs, ftruncate and clone still
        // work.
        assert_eq!(run(&prog, 90, AUDIT_ARCH_X86_64, 0), libc::SECCOMP_RET_ALLOW);
        assert_eq!(run(&prog, 76, AUDIT_ARCH_X86_64, 0), libc::SECCOMP_RET_ALLOW);
        assert_eq!(run(&prog, 82, AUDIT_ARCH_X86_64, 0), libc::SECCOMP_RET_ALLOW, "rename");
        let strict = filter_program(
            &[X86_64, I386],
            &[Forbidden::Setattr, Forbidden::TruncateByName, Forbidden::LinkRename],
            false,
        );
        for abi in [X86_64, I386] {
            for &nr in abi.attributes.iter().chain(abi.truncate_by_name).chain(abi.link_rename) {
                assert_eq!(run(&strict, nr, abi.arch, 0), eperm, "{nr} on {:#x}", abi.arch);
            }
            for &nr in abi.with_new_namespace {
                assert_eq!(run(&strict, nr, abi.arch, 0x11), libc::SECCOMP_RET_ALLOW);
            }
        }
        assert_eq!(run(&strict, 0, AUDIT_ARCH_X86_64, 0), libc::SECCOMP_RET_ALLOW);
        // ftruncate: x86-64 77, i386 93 and 194 (ftruncate64).
        assert_eq!(run(&strict, 77, AUDIT_ARCH_X86_64, 0), libc::SECCOMP_RET_ALLOW);
        assert_eq!(run(&strict, 93, AUDIT_ARCH_I386, 0), libc::SECCOMP_RET_ALLOW);
        assert_eq!(run(&strict, 194, AUDIT_ARCH_I386, 0), libc::SECCOMP_RET_ALLOW);
    }

    #[test]
    fn grants_cover_everything_but_the_excluded_trees() {
        let base = std::env::temp_dir().join(format!("rampart-sandbox-test.{}", std::process::id()));
        for d in ["a/b/marked/x", "a/b/c", "a/d", "e"] {
            fs::create_dir_all(base.join(d)).unwrap();
        }
        let excluded = vec![base.join("a/b/marked")];
        let mut out = Vec::new();
        grants(&base, &excluded, &mut out);
        out.sort();
        assert_eq!(out, vec![base.join("a/b/c"), base.join("a/d"), base.join("e")]);
        let mut all = Vec::new();
        grants(&base, &[], &mut all);
        assert_eq!(all, vec![base.clone()]);
        fs::remove_dir_all(&base).unwrap();
    }
}
