//! Opens for writing by processes under the supervised-opens filter
//! (crate::supervised, "Opens"): decided and made by a supervisor worker
//! (crate::supervisor), the descriptor then installed in the caller
//! (`SECCOMP_IOCTL_NOTIF_ADDFD` with `SECCOMP_ADDFD_FLAG_SEND`, so the
//! descriptor's number is the call's return value).
//!
//! Why the daemon makes the open: a process whose opens for writing all
//! come here never opens for writing through the kernel's path, so an
//! ignore mark on a file its domain may only read stays sound for it
//! (crate::marks, "Scope"). Answering "continue" would let the kernel
//! re-read a path another thread may have changed, onto a file whose
//! ignore mark rests on reads alone.
//!
//! How, in the caller's root, with its file credentials and umask:
//! 1. The path is resolved to an `O_PATH` descriptor (magic links such as
//!    `/proc/self/fd/N` refused, `ELOOP`: in the daemon they would name
//!    the daemon's descriptors). The names of a descriptor of the caller's
//!    own (`/dev/stdin`, `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`,
//!    `/proc/self/fd/N`, `/proc/thread-self/fd/N`, `/proc/PID/fd/N` of
//!    the caller itself; the `/dev` ones only where they are the usual
//!    symbolic links in the caller's root) are taken as that descriptor's
//!    object ([`descriptor_alias`]), read by the receiving thread through
//!    the caller's `/proc/TID/fd/N`, as the kernel's reopen would. If nothing is there and `O_CREAT` was
//!    asked, the file is created in its directory, resolved first
//!    (`O_EXCL`, retried as an open if another process created it
//!    meanwhile), and checked after: the creation as `may_create` checks
//!    it (`search write add_name` on the directory, `create` on the file's
//!    label; refused, the file is removed again), then the open.
//! 2. Checks, as an open event would make them: SELinux `open` and the
//!    flags' `read`/`write`/`append` ([`crate::access::ClassPerms::for_flags`]),
//!    AppArmor's open; audited. Objects on procfs are refused (`EACCES`):
//!    `/proc/self` in the daemon is the daemon. Objects off the marked
//!    filesystems are not checked (as opens are not).
//! 3. The checked inode is reopened through the daemon's
//!    `/proc/self/fd/N` with the caller's flags (never the path again),
//!    `O_NOCTTY` always (a terminal must not become the daemon's) and
//!    `O_NONBLOCK` until the end (a FIFO without a reader gives `ENXIO`
//!    instead of holding the worker: it then waits elsewhere), then
//!    truncated if asked.
//!
//! What differs from the kernel's open: a FIFO opened for writing waits
//! for its reader in crate::fifo_opens (killable only, and up to 5 ms
//! after the reader came); a FIFO opened for reading with `O_CREAT` does
//! not wait for a writer; files under `/proc` fail; `/dev/tty` is
//! the caller's terminal's own node (crate::controlling_tty); a terminal
//! opened does not become the caller's controlling terminal; `search` on
//! the path's directories is not checked (as for the other supervised
//! calls); an `O_CREAT` open that finds an existing file is checked as
//! the kernel's `may_create_in_sticky` checks it
//! ([`may_open_existing_in_sticky`]); an open for writing or truncating of a file another process
//! holds a lease on (`F_SETLEASE`) answers `EWOULDBLOCK` at once, where
//! the kernel waits for the lease to break (up to `lease-break-time`, 45
//! s by default): waiting, it would hold the worker.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;

/// `struct open_how` (`linux/openat2.h`).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
const PROC_SUPER_MAGIC: i64 = 0x9fa0;
/// The flags `openat` knows; `openat2` refuses any other bit, which
/// `openat` ignores.
const KNOWN_FLAGS: i32 = libc::O_ACCMODE
    | libc::O_CREAT
    | libc::O_EXCL
    | libc::O_NOCTTY
    | libc::O_TRUNC
    | libc::O_APPEND
    | libc::O_NONBLOCK
    | libc::O_SYNC
    | libc::O_ASYNC
    | libc::O_DIRECT
    | libc::O_LARGEFILE
    | libc::O_DIRECTORY
    | libc::O_NOFOLLOW
    | libc::O_NOATIME
    | libc::O_CLOEXEC
    | libc::O_PATH
    | libc::O_TMPFILE;
/// Creating opens retried when another process creates or removes the
/// name in between.
const RETRIES: usize = 4;
/// Symbolic links one open follows at most (the kernel's `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;
const PATH_MAX: usize = 4096;

fn last_errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// `openat2(dir, path, how)`, magic links refused.
pub(crate) fn openat2(dir: RawFd, path: &OsStr, flags: i32, mode: u32) -> Result<OwnedFd, i32> {
    let c = CString::new(path.as_bytes()).map_err(|_| libc::EINVAL)?;
    let creates = flags & libc::O_CREAT != 0 || flags & libc::O_TMPFILE == libc::O_TMPFILE;
    let how = OpenHow {
        flags: (flags | libc::O_CLOEXEC) as u32 as u64,
        mode: if creates { u64::from(mode & 0o7777) } else { 0 },
        resolve: RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: `c` is NUL-terminated and `how` a valid open_how, both
    // alive across the call; the size is the struct's.
    let fd = unsafe { libc::syscall(libc::SYS_openat2, dir, c.as_ptr(), &how, std::mem::size_of::<OpenHow>()) };
    if fd < 0 {
        return Err(last_errno());
    }
    // SAFETY: just opened, ours alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// An `O_PATH` descriptor of `path` relative to `dir`, resolved as step 1
/// resolves (no magic links); `flags` among `O_NOFOLLOW`, `O_DIRECTORY`.
pub(crate) fn path_of(dir: BorrowedFd<'_>, path: &[u8], flags: i32) -> Result<OwnedFd, i32> {
    openat2(dir.as_raw_fd(), OsStr::from_bytes(path), libc::O_PATH | flags, 0)
}

/// The caller's descriptor number that `path` names, if it is one of the
/// names of the module docs (thread `tid`; its root read through
/// `/proc/TID/root`).
pub(crate) fn descriptor_alias(tid: u32, path: &[u8]) -> Option<u32> {
    let path = std::str::from_utf8(path).ok()?;
    let root = format!("/proc/{tid}/root");
    let link_is =
        |name: &str, target: &str| std::fs::read_link(format!("{root}{name}")).is_ok_and(|t| t.as_os_str() == target);
    let number = |s: &str| s.parse::<u32>().ok().filter(|_| !s.starts_with('+'));
    if let Some((i, name)) = ["/dev/stdin", "/dev/stdout", "/dev/stderr"].iter().enumerate().find(|(_, n)| **n == path)
    {
        return link_is(name, &format!("/proc/self/fd/{i}")).then_some(i as u32);
    }
    if let Some(n) = path.strip_prefix("/dev/fd/") {
        return number(n).filter(|_| link_is("/dev/fd", "/proc/self/fd"));
    }
    let rest = path.strip_prefix("/proc/")?;
    let (who, n) = rest.split_once("/fd/")?;
    let own = who == "self" || who == "thread-self" || who == tid.to_string() || Some(who) == tgid_of(tid).as_deref();
    // `O_PATH`, the last name not followed, a directory only: a caller
    // in a root of its own (chroot) may have put a FIFO there, which an
    // open would wait on, or a link, which would be followed from the
    // daemon's root (`/dev/watchdog`) and opened as root.
    let proc = OsStr::new(&format!("{root}/proc")).to_owned();
    let is_procfs = crate::supervisor::open_path(libc::AT_FDCWD, &proc, libc::O_NOFOLLOW | libc::O_DIRECTORY)
        .is_ok_and(|f| on_procfs(f.as_fd()));
    number(n).filter(|_| own && is_procfs)
}

/// Step 1 for a path [`descriptor_alias`] named: the object `fd` (the
/// caller's descriptor's, `O_PATH`), as the kernel's open of the magic
/// link would reach it.
pub(crate) fn alias_target(fd: OwnedFd, flags: i32) -> Result<Target, i32> {
    if flags & libc::O_NOFOLLOW != 0 {
        return Err(libc::ELOOP);
    }
    if flags & libc::O_CREAT != 0 && flags & libc::O_EXCL != 0 {
        return Err(libc::EEXIST);
    }
    if flags & libc::O_PATH != 0 {
        return Ok(Target::Path(fd));
    }
    let md = metadata(fd.as_fd())?;
    Ok(Target::Existing(fd, md))
}

/// What step 1 found.
pub(crate) enum Target {
    /// An existing object (`O_PATH`), to check and then reopen.
    Existing(OwnedFd, std::fs::Metadata),
    /// A file this open created (open already with the caller's flags),
    /// to check, and where (`None`: a path the kernel
    /// refused to split).
    Created(OwnedFd, std::fs::Metadata, Option<NewName>),
    /// An `O_PATH` open: nothing to decide, the descriptor itself.
    Path(OwnedFd),
}

/// Where a file was created: its directory (`O_PATH`) and its name there
/// (`None`: an unnamed `O_TMPFILE`).
pub(crate) struct NewName {
    pub parent: OwnedFd,
    pub name: Option<CString>,
}

/// `path` as its directory and last name, `None` for a path that ends
/// in `/` (the kernel's open refuses to create it) or whose last name is
/// `.` or `..`.
pub(crate) fn split_last(path: &[u8]) -> Option<(&[u8], &[u8])> {
    let (dir, last) = match path.iter().rposition(|&b| b == b'/') {
        Some(0) => (&b"/"[..], &path[1..]),
        Some(i) => (&path[..i], &path[i + 1..]),
        None => (&b"."[..], path),
    };
    (!last.is_empty() && last != b"." && last != b"..").then_some((dir, last))
}

/// Undoes a creation step 2 refused: the name goes if it still holds the
/// file created (`md`); another file put there meanwhile stays.
pub(crate) fn remove_created(n: &NewName, md: &std::fs::Metadata) {
    // Unnamed, it goes with its last descriptor.
    let Some(name) = &n.name else { return };
    // SAFETY: stat is plain data, filled by the kernel.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `n.parent` is open, `n.name` NUL-terminated, `st` writable.
    let rc = unsafe { libc::fstatat(n.parent.as_raw_fd(), name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
    if rc == 0 && (st.st_dev, st.st_ino) == (md.dev(), md.ino()) {
        // SAFETY: as above; a plain unlink of a name in that directory.
        unsafe { libc::unlinkat(n.parent.as_raw_fd(), name.as_ptr(), 0) };
    }
}

fn metadata(fd: BorrowedFd<'_>) -> Result<std::fs::Metadata, i32> {
    let owned = fd.try_clone_to_owned().map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
    std::fs::File::from(owned).metadata().map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))
}

/// Step 1, in the caller's root, with its credentials and umask: `dir`
/// and `path` as the call named them.
pub(crate) fn resolve(dir: BorrowedFd<'_>, path: &[u8], flags: i32, mode: u32) -> Result<Target, i32> {
    let flags = flags & KNOWN_FLAGS;
    let path = OsStr::from_bytes(path);
    if path.is_empty() {
        return Err(libc::ENOENT);
    }
    if flags & libc::O_PATH != 0 {
        let kept = flags & (libc::O_DIRECTORY | libc::O_NOFOLLOW);
        return openat2(dir.as_raw_fd(), path, libc::O_PATH | kept, 0).map(Target::Path);
    }
    let real = (flags & !libc::O_TRUNC) | libc::O_NOCTTY;
    if flags & libc::O_TMPFILE == libc::O_TMPFILE {
        // An unnamed file in the directory `path`: created, then checked
        // with that directory.
        let parent = openat2(dir.as_raw_fd(), path, libc::O_PATH | libc::O_DIRECTORY, 0)?;
        let fd = openat2(parent.as_raw_fd(), OsStr::new("."), real, mode)?;
        let md = metadata(fd.as_fd())?;
        return Ok(Target::Created(fd, md, Some(NewName { parent, name: None })));
    }
    let lookup = libc::O_PATH | (flags & (libc::O_NOFOLLOW | libc::O_DIRECTORY));
    let exclusive = flags & libc::O_CREAT != 0 && flags & libc::O_EXCL != 0;
    // Where a dangling symbolic link led: its directory and its target.
    let mut followed: Option<(OwnedFd, Vec<u8>)> = None;
    let (mut tries, mut links) = (0, 0);
    while tries < RETRIES {
        let (base, path) = match &followed {
            Some((at, target)) => (at.as_fd(), OsStr::from_bytes(target)),
            None => (dir, path),
        };
        if !exclusive {
            match openat2(base.as_raw_fd(), path, lookup, 0) {
                Ok(fd) => {
                    let md = metadata(fd.as_fd())?;
                    if md.file_type().is_symlink() {
                        // O_NOFOLLOW on a symbolic link: the kernel's answer.
                        return Err(libc::ELOOP);
                    }
                    return Ok(Target::Existing(fd, md));
                }
                Err(libc::ENOENT) if flags & libc::O_CREAT != 0 => {}
                Err(e) => return Err(e),
            }
        }
        match create(base, path, real, mode) {
            Ok((fd, name)) => {
                let md = metadata(fd.as_fd())?;
                return Ok(Target::Created(fd, md, name));
            }
            Err(libc::EEXIST) if !exclusive => {
                // A dangling link (the lookup found nothing, the name is
                // taken): the kernel creates its target.
                if flags & libc::O_NOFOLLOW == 0 {
                    if let Some(next) = dangling_link(base, path)? {
                        links += 1;
                        if links > MAX_LINKS {
                            return Err(libc::ELOOP);
                        }
                        followed = Some(next);
                        continue;
                    }
                }
                // Else created by someone else meanwhile: open it as
                // existing.
                tries += 1;
            }
            Err(e) => return Err(e),
        }
    }
    Err(libc::EAGAIN)
}

/// The kernel's `may_create_in_sticky` for an `O_CREAT` open that found
/// the existing object `fd` (metadata `md`), by a caller of file system
/// uid `fsuid`: in a sticky directory, a regular file or a FIFO that
/// neither the caller nor the directory's owner owns is refused
/// (`EACCES`) where the directory is world-writable, or group-writable
/// at level 2 (`fs.protected_regular`, `fs.protected_fifos`), so that a
/// file planted in `/tmp` is not opened for another user's writes. The
/// directory is the one the object's name lies in now, from the daemon's
/// name for the descriptor; a directory found answers `EISDIR`.
pub(crate) fn may_open_existing_in_sticky(fd: BorrowedFd<'_>, md: &std::fs::Metadata, fsuid: u32) -> Result<(), i32> {
    use std::os::unix::fs::FileTypeExt;
    if md.is_dir() {
        return Err(libc::EISDIR);
    }
    let sysctl = match (md.is_file(), md.file_type().is_fifo()) {
        (true, _) => "protected_regular",
        (_, true) => "protected_fifos",
        _ => return Ok(()),
    };
    let level: u32 =
        std::fs::read_to_string(format!("/proc/sys/fs/{sysctl}")).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(0);
    if level == 0 {
        return Ok(());
    }
    let name = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).map_err(|_| libc::ENOENT)?;
    let Some(dir) = name.parent().and_then(|p| std::fs::metadata(p).ok()) else { return Ok(()) };
    refused_in_sticky(dir.mode(), dir.uid(), md.uid(), fsuid, level).map_or(Ok(()), Err)
}

/// `may_create_in_sticky`'s answer for an object owned by `owner` in a
/// directory of mode `dir_mode` owned by `dir_owner`, opened by file
/// system uid `fsuid`, at protection `level`: `Some(EACCES)` if refused.
fn refused_in_sticky(dir_mode: u32, dir_owner: u32, owner: u32, fsuid: u32, level: u32) -> Option<i32> {
    let refused = dir_mode & libc::S_ISVTX != 0
        && owner != dir_owner
        && owner != fsuid
        && (dir_mode & 0o002 != 0 || (level >= 2 && dir_mode & 0o020 != 0));
    refused.then_some(libc::EACCES)
}

/// The directory and target of `path` if it names a symbolic link, read
/// from one descriptor of the link. Following it here is the kernel's
/// follow of a trailing link: the lookup before saw every link of the
/// chain allowed (`fs.protected_symlinks`), and this link is checked
/// again as if that protection were on (it is the default), since it may
/// have been replaced since: in a sticky world-writable directory a link
/// is followed only if the caller or the directory's owner owns it.
fn dangling_link(base: BorrowedFd<'_>, path: &OsStr) -> Result<Option<(OwnedFd, Vec<u8>)>, i32> {
    let Some((parent, last)) = split_last(path.as_bytes()) else { return Ok(None) };
    let parent = openat2(base.as_raw_fd(), OsStr::from_bytes(parent), libc::O_PATH | libc::O_DIRECTORY, 0)?;
    let link = match openat2(parent.as_raw_fd(), OsStr::from_bytes(last), libc::O_PATH | libc::O_NOFOLLOW, 0) {
        Ok(fd) => fd,
        Err(libc::ENOENT) => return Ok(None),
        Err(e) => return Err(e),
    };
    let md = metadata(link.as_fd())?;
    if !md.file_type().is_symlink() {
        return Ok(None);
    }
    let dir = metadata(parent.as_fd())?;
    let sticky_shared = libc::S_ISVTX | libc::S_IWOTH;
    // SAFETY: an invalid id changes nothing; the call returns the
    // thread's file system uid (raw: the C library's wrapper may act on
    // every thread).
    let fsuid = unsafe { libc::syscall(libc::SYS_setfsuid, -1) } as u32;
    if dir.mode() & sticky_shared == sticky_shared && md.uid() != fsuid && md.uid() != dir.uid() {
        return Err(libc::EACCES);
    }
    let mut target = vec![0u8; PATH_MAX];
    // SAFETY: `link` is open (O_PATH on the link itself: the empty path
    // reads it), `target` writable for its length.
    let n = unsafe { libc::readlinkat(link.as_raw_fd(), c"".as_ptr(), target.as_mut_ptr().cast(), target.len()) };
    if n < 0 {
        return Err(last_errno());
    }
    target.truncate(n as usize);
    if target.is_empty() {
        return Err(libc::ENOENT);
    }
    Ok(Some((parent, target)))
}

/// Creates `path` (`O_EXCL`) with `flags` and `mode`: in its directory,
/// resolved first, so that step 2 can check that directory too.
fn create(dir: BorrowedFd<'_>, path: &OsStr, flags: i32, mode: u32) -> Result<(OwnedFd, Option<NewName>), i32> {
    let new = flags | libc::O_CREAT | libc::O_EXCL;
    let Some((parent, last)) = split_last(path.as_bytes()) else {
        return openat2(dir.as_raw_fd(), path, new, mode).map(|fd| (fd, None));
    };
    let parent = openat2(dir.as_raw_fd(), OsStr::from_bytes(parent), libc::O_PATH | libc::O_DIRECTORY, 0)?;
    let fd = openat2(parent.as_raw_fd(), OsStr::from_bytes(last), new, mode)?;
    let name = CString::new(last).map_err(|_| libc::EINVAL)?;
    Ok((fd, Some(NewName { parent, name: Some(name) })))
}

/// The object is on procfs (refused: see the module docs).
pub(crate) fn on_procfs(fd: BorrowedFd<'_>) -> bool {
    // SAFETY: statfs is plain data, filled by the kernel.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open; `st` is writable for the call.
    let rc = unsafe { libc::fstatfs(fd.as_raw_fd(), &mut st) };
    rc != 0 || st.f_type as i64 == PROC_SUPER_MAGIC
}

/// Step 3, with the caller's credentials (in the daemon's root: its
/// `/proc/self` is the daemon): the checked object `o` opened with the
/// caller's `flags`.
pub(crate) fn reopen(o: BorrowedFd<'_>, flags: i32) -> Result<OwnedFd, i32> {
    let flags = flags & KNOWN_FLAGS;
    let me = format!("/proc/self/fd/{}", o.as_raw_fd());
    let real = (flags & !(libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC | libc::O_NOFOLLOW))
        | libc::O_NOCTTY
        | libc::O_NONBLOCK
        | libc::O_CLOEXEC;
    let c = CString::new(me).map_err(|_| libc::EINVAL)?;
    // SAFETY: `c` is NUL-terminated and outlives the call.
    let fd = unsafe { libc::open(c.as_ptr(), real) };
    if fd < 0 {
        return Err(last_errno());
    }
    // SAFETY: just opened, ours alone.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    finish(fd.as_fd(), flags)?;
    Ok(fd)
}

/// An open of `md` with `flags` that the kernel would hold until a
/// reader comes: a FIFO opened for writing only, without `O_NONBLOCK`
/// (crate::fifo_opens waits for it).
pub(crate) fn waits_for_reader(md: &std::fs::Metadata, flags: i32) -> bool {
    use std::os::unix::fs::FileTypeExt;
    md.file_type().is_fifo() && flags & libc::O_ACCMODE == libc::O_WRONLY && flags & libc::O_NONBLOCK == 0
}

/// A descriptor of `fd`'s file opened for writing, to truncate it (the
/// kernel checks write access). With `O_NONBLOCK`: a lease on the file
/// answers `EWOULDBLOCK` at once instead of holding the worker until it
/// breaks (up to `lease-break-time`, 45 s by default).
pub(crate) fn reopen_for_writing(fd: BorrowedFd<'_>) -> Result<OwnedFd, i32> {
    let c = CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd())).map_err(|_| libc::EINVAL)?;
    let flags = libc::O_WRONLY | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;
    // SAFETY: `c` is NUL-terminated and outlives the call.
    let w = unsafe { libc::open(c.as_ptr(), flags) };
    if w < 0 {
        return Err(last_errno());
    }
    // SAFETY: just opened, ours alone.
    Ok(unsafe { OwnedFd::from_raw_fd(w) })
}

/// After the open: the truncation asked, and `O_NONBLOCK` as asked.
pub(crate) fn finish(fd: BorrowedFd<'_>, flags: i32) -> Result<(), i32> {
    let md = metadata(fd)?;
    if flags & libc::O_TRUNC != 0 && md.is_file() && md.size() > 0 {
        // A read-only descriptor cannot truncate: a writable one of the
        // same inode does, its open checked by the kernel (write access).
        let writable = flags & libc::O_ACCMODE == libc::O_WRONLY || flags & libc::O_ACCMODE == libc::O_RDWR;
        let other;
        let target = if writable {
            fd
        } else {
            other = reopen_for_writing(fd)?;
            other.as_fd()
        };
        // SAFETY: an open descriptor, a length.
        if unsafe { libc::ftruncate(target.as_raw_fd(), 0) } < 0 {
            return Err(last_errno());
        }
    }
    if flags & libc::O_NONBLOCK == 0 {
        // SAFETY: F_GETFL/F_SETFL on an open descriptor.
        unsafe {
            let now = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
            if now >= 0 {
                libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, now & !libc::O_NONBLOCK);
            }
        }
    }
    Ok(())
}

/// Installs `fd` in the caller of notification `id` as the call's result
/// (`close-on-exec` if `cloexec`); the descriptor's number, or why not.
pub(crate) fn install(listener: BorrowedFd<'_>, id: u64, fd: BorrowedFd<'_>, cloexec: bool) -> Result<(), i32> {
    let addfd = libc::seccomp_notif_addfd {
        id,
        flags: libc::SECCOMP_ADDFD_FLAG_SEND as u32,
        srcfd: fd.as_raw_fd() as u32,
        newfd: 0,
        newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
    };
    // SAFETY: NOTIF_ADDFD reads one seccomp_notif_addfd, valid for the
    // call; with FLAG_SEND it also answers the notification.
    let rc = unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_ADDFD, &addfd) };
    if rc < 0 {
        return Err(last_errno());
    }
    Ok(())
}

/// The process of thread `tid` (the `Tgid:` line of its status), as text.
fn tgid_of(tid: u32) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("Tgid:")).map(|v| v.trim().to_owned())
}

/// The `Umask:` line of a `/proc/TID/status` text.
pub(crate) fn umask_in(status: &str) -> Result<u32, i32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        .ok_or(libc::ESRCH)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use std::ffi::CStr;
    use std::os::unix::fs::PermissionsExt;

    /// A fresh directory for one test, and a descriptor of it.
    struct Scratch(std::path::PathBuf);
    impl Scratch {
        fn new(name: &str) -> Scratch {
            let p = std::env::temp_dir().join(format!("rampart-open-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir(&p).unwrap();
            Scratch(p)
        }
        fn path(&self) -> &std::path::Path {
            &self.0
        }
    }
    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    fn dir(t: &Scratch) -> OwnedFd {
        dir_at(t.path())
    }

    /// Opens with `O_CREAT` of dangling symbolic links, each against the
    /// kernel's own open of a twin directory: the same answer, and the
    /// same files made (relative, absolute and chained targets, a loop,
    /// a missing directory, `O_EXCL`, `O_NOFOLLOW`); as root, a link
    /// another user owns in a sticky world-writable directory.
    #[test]
    fn dangling_links_are_followed_as_the_kernel_follows_them() {
        let t = Scratch::new("dangling");
        // SAFETY (test): geteuid has no arguments and cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        let protected = std::fs::read_to_string("/proc/sys/fs/protected_symlinks").is_ok_and(|v| v.trim() != "0");
        let build = |d: &std::path::Path| {
            std::fs::create_dir(d).unwrap();
            let link = |target: &str, name: &str| std::os::unix::fs::symlink(target, d.join(name)).unwrap();
            link("made-a", "a");
            link(d.join("made-b").to_str().unwrap(), "b");
            link("c2", "c");
            link("made-c", "c2");
            link("l2", "l1");
            link("l1", "l2");
            link("missing/made-s", "s");
        };
        let (kernel, ours) = (t.path().join("kernel"), t.path().join("ours"));
        build(&kernel);
        build(&ours);
        let listing = |d: &std::path::Path| {
            let mut v: Vec<String> = walk(d);
            v.sort();
            v
        };
        for name in ["a", "b", "c", "l1", "s"] {
            for flags in [libc::O_CREAT, libc::O_CREAT | libc::O_EXCL, libc::O_CREAT | libc::O_NOFOLLOW] {
                let flags = flags | libc::O_WRONLY;
                let c = CString::new(kernel.join(name).to_str().unwrap()).unwrap();
                // SAFETY (test): a plain open of a NUL-terminated path.
                let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, 0o644) };
                let expected = if fd < 0 { Err(last_errno()) } else { Ok(()) };
                if fd >= 0 {
                    // SAFETY (test): ours, just opened.
                    unsafe { libc::close(fd) };
                }
                let d = dir_at(&ours);
                let got = resolve(d.as_fd(), name.as_bytes(), flags, 0o644).map(|_| ());
                assert_eq!(got, expected, "{name} with flags {flags:#o}");
            }
        }
        assert_eq!(listing(&ours), listing(&kernel), "the same files made");
        if root {
            // A link another user owns in a sticky world-writable
            // directory is not followed: the kernel's answer with
            // fs.protected_symlinks (the default), stricter without it.
            let sticky = t.path().join("sticky");
            std::fs::create_dir(&sticky).unwrap();
            std::fs::set_permissions(&sticky, std::fs::Permissions::from_mode(0o1777)).unwrap();
            std::os::unix::fs::symlink("made-p", sticky.join("p")).unwrap();
            std::os::unix::fs::lchown(sticky.join("p"), Some(1234), Some(1234)).unwrap();
            let d = dir_at(&sticky);
            assert_eq!(resolve(d.as_fd(), b"p", libc::O_WRONLY | libc::O_CREAT, 0o644).map(|_| ()), Err(libc::EACCES));
            assert!(!sticky.join("made-p").exists());
            if protected {
                let c = CString::new(sticky.join("p").to_str().unwrap()).unwrap();
                // SAFETY (test): a plain open of a NUL-terminated path.
                let fd = unsafe { libc::open(c.as_ptr(), libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC, 0o644) };
                assert_eq!((fd, last_errno()), (-1, libc::EACCES), "the kernel refuses it too");
            }
        }
    }

    /// `fs.protected_regular` and `fs.protected_fifos` as
    /// `may_create_in_sticky` applies them (fs/namei.c), and, at this
    /// machine's levels, against the kernel's own `O_CREAT` opens by
    /// another user of files uid 65534 owns in directories root owns.
    #[test]
    fn an_existing_file_in_a_sticky_directory_is_opened_as_the_kernel_opens_it() {
        // World-writable sticky: refused at 1 and 2; group-writable
        // sticky: at 2 only; not sticky, or owned by the caller or the
        // directory's owner: never.
        for (dir_mode, owner, level, refused) in [
            (0o1777, 65534, 1, true),
            (0o1777, 65534, 2, true),
            (0o1770, 65534, 1, false),
            (0o1770, 65534, 2, true),
            (0o0777, 65534, 2, false),
            (0o1777, 1000, 2, false),
            (0o1777, 0, 2, false),
            (0o1777, 65534, 0, true),
        ] {
            let got = refused_in_sticky(dir_mode, 0, owner, 1000, level.max(1));
            assert_eq!(got.is_some(), refused, "mode {dir_mode:o}, owner {owner}, level {level}");
        }
        // SAFETY (test): geteuid has no arguments and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return;
        }
        let t = Scratch::new("sticky");
        for (i, mode) in [0o1777, 0o1770, 0o0777].into_iter().enumerate() {
            let d = t.path().join(format!("d{i}"));
            std::fs::create_dir(&d).unwrap();
            std::fs::set_permissions(&d, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap();
            let (file, fifo) = (d.join("f"), d.join("p"));
            std::fs::write(&file, b"x").unwrap();
            let c = CString::new(fifo.to_str().unwrap()).unwrap();
            // SAFETY (test): a NUL-terminated path, a mode.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o666) }, 0);
            for p in [&file, &fifo] {
                std::os::unix::fs::chown(p, Some(65534), Some(65534)).unwrap();
                std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
                let path = CString::new(p.to_str().unwrap()).unwrap();
                // The kernel's answer, by file system uid 1000, in a thread
                // of its own (the raw call changes that thread alone).
                let kernel = std::thread::spawn(move || {
                    // SAFETY (test): raw setfsuid, this thread only; then a
                    // non-blocking open of a NUL-terminated path.
                    unsafe {
                        libc::syscall(libc::SYS_setfsuid, 1000);
                        let flags = libc::O_CREAT | libc::O_WRONLY | libc::O_NONBLOCK | libc::O_CLOEXEC;
                        let fd = libc::open(path.as_ptr(), flags, 0o644);
                        let errno = last_errno();
                        if fd >= 0 {
                            libc::close(fd);
                        }
                        // A FIFO without a reader: ENXIO past the check.
                        if fd >= 0 || errno == libc::ENXIO {
                            Ok(())
                        } else {
                            Err(errno)
                        }
                    }
                })
                .join()
                .unwrap();
                let o = openat2(libc::AT_FDCWD, p.as_os_str(), libc::O_PATH, 0).unwrap();
                let md = metadata(o.as_fd()).unwrap();
                assert_eq!(may_open_existing_in_sticky(o.as_fd(), &md, 1000), kernel, "{p:?} in mode {mode:o}");
            }
        }
        let d = dir_at(t.path());
        let md = metadata(d.as_fd()).unwrap();
        assert_eq!(may_open_existing_in_sticky(d.as_fd(), &md, 0), Err(libc::EISDIR), "a directory");
    }

    fn dir_at(p: &std::path::Path) -> OwnedFd {
        std::fs::File::open(p).unwrap().into()
    }

    /// Every name below `d`, relative, regular files marked.
    fn walk(d: &std::path::Path) -> Vec<String> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(d).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().into_string().unwrap();
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                out.extend(walk(&e.path()).into_iter().map(|n| format!("{name}/{n}")));
            } else {
                out.push(if ft.is_file() { format!("{name} (file)") } else { name });
            }
        }
        out
    }

    #[test]
    fn resolution_names_what_the_kernel_would_and_refuses_magic_links() {
        let t = Scratch::new("resolve");
        std::fs::write(t.path().join("f"), b"data").unwrap();
        std::os::unix::fs::symlink("f", t.path().join("l")).unwrap();
        std::os::unix::fs::symlink("/proc/self/fd/0", t.path().join("magic")).unwrap();
        let d = dir(&t);
        assert!(matches!(resolve(d.as_fd(), b"f", libc::O_WRONLY, 0), Ok(Target::Existing(..))));
        assert!(matches!(resolve(d.as_fd(), b"l", libc::O_WRONLY, 0), Ok(Target::Existing(..))));
        assert_eq!(resolve(d.as_fd(), b"l", libc::O_WRONLY | libc::O_NOFOLLOW, 0).err(), Some(libc::ELOOP));
        assert_eq!(resolve(d.as_fd(), b"magic", libc::O_WRONLY, 0).err(), Some(libc::ELOOP));
        assert_eq!(resolve(d.as_fd(), b"none", libc::O_WRONLY, 0).err(), Some(libc::ENOENT));
        assert_eq!(
            resolve(d.as_fd(), b"f", libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL, 0o600).err(),
            Some(libc::EEXIST)
        );
        let Ok(Target::Created(fd, md, Some(name))) = resolve(d.as_fd(), b"new", libc::O_WRONLY | libc::O_CREAT, 0o640)
        else {
            panic!("not created");
        };
        assert!(md.is_file());
        assert_eq!(std::fs::metadata(t.path().join("new")).unwrap().permissions().mode() & 0o777, 0o640 & !umask_now());
        assert_eq!(name.name.as_deref().map(CStr::to_bytes), Some(&b"new"[..]));
        let parent = std::fs::File::from(name.parent.try_clone().unwrap()).metadata().unwrap();
        assert_eq!(parent.ino(), std::fs::metadata(t.path()).unwrap().ino(), "created in the directory it names");
        // A refused creation goes again; a name that holds another file
        // by then stays.
        remove_created(&name, &md);
        assert!(!t.path().join("new").exists());
        std::fs::write(t.path().join("new"), b"someone else's").unwrap();
        remove_created(&name, &md);
        assert!(t.path().join("new").exists());
        drop(fd);
        // An unnamed file: made in the directory the path names, which
        // comes with it to be checked; nothing to remove.
        std::fs::create_dir(t.path().join("sub")).unwrap();
        let Ok(Target::Created(_fd, md, Some(tmp))) = resolve(d.as_fd(), b"sub", libc::O_RDWR | libc::O_TMPFILE, 0o600)
        else {
            panic!("no O_TMPFILE");
        };
        assert!(md.is_file() && tmp.name.is_none());
        let parent = std::fs::File::from(tmp.parent.try_clone().unwrap()).metadata().unwrap();
        assert_eq!(parent.ino(), std::fs::metadata(t.path().join("sub")).unwrap().ino());
        remove_created(&tmp, &md);
        assert_eq!(std::fs::read_dir(t.path().join("sub")).unwrap().count(), 0);
    }

    #[test]
    fn a_path_splits_into_its_directory_and_last_name() {
        assert_eq!(split_last(b"a/b/c"), Some((&b"a/b"[..], &b"c"[..])));
        assert_eq!(split_last(b"/c"), Some((&b"/"[..], &b"c"[..])));
        assert_eq!(split_last(b"c"), Some((&b"."[..], &b"c"[..])));
        assert_eq!(split_last(b"a/"), None, "the kernel's error for a trailing slash");
        assert_eq!(split_last(b"a/.."), None);
        assert_eq!(split_last(b"."), None);
    }

    fn umask_now() -> u32 {
        umask_in(&std::fs::read_to_string("/proc/self/status").unwrap()).unwrap()
    }

    #[test]
    fn the_names_of_a_callers_own_descriptors_are_known() {
        // SAFETY: gettid cannot fail.
        let tid = unsafe { libc::gettid() } as u32;
        let pid = std::process::id();
        assert_eq!(descriptor_alias(tid, b"/proc/self/fd/5"), Some(5));
        assert_eq!(descriptor_alias(tid, b"/proc/thread-self/fd/7"), Some(7));
        assert_eq!(descriptor_alias(tid, format!("/proc/{pid}/fd/3").as_bytes()), Some(3));
        assert_eq!(descriptor_alias(tid, b"/proc/1/fd/3"), None, "another process's");
        assert_eq!(descriptor_alias(tid, b"/proc/self/fd/+3"), None);
        assert_eq!(descriptor_alias(tid, b"/proc/self/fdinfo/3"), None);
        assert_eq!(descriptor_alias(tid, b"/etc/passwd"), None);
        // The /dev names count only where they are the usual links.
        if std::fs::read_link("/dev/stderr").is_ok_and(|t| t.as_os_str() == "/proc/self/fd/2") {
            assert_eq!(descriptor_alias(tid, b"/dev/stderr"), Some(2));
        }
        if std::fs::read_link("/dev/fd").is_ok_and(|t| t.as_os_str() == "/proc/self/fd") {
            assert_eq!(descriptor_alias(tid, b"/dev/fd/9"), Some(9));
        }
    }

    #[test]
    fn reopening_truncates_and_keeps_the_asked_flags() {
        let t = Scratch::new("reopen");
        std::fs::write(t.path().join("f"), b"data").unwrap();
        let d = dir(&t);
        let Ok(Target::Existing(o, _)) = resolve(d.as_fd(), b"f", libc::O_RDONLY | libc::O_TRUNC, 0) else { panic!() };
        let fd = reopen(o.as_fd(), libc::O_RDONLY | libc::O_TRUNC).unwrap();
        assert_eq!(std::fs::metadata(t.path().join("f")).unwrap().len(), 0, "truncated");
        // SAFETY: F_GETFL on an open descriptor.
        let fl = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
        assert_eq!(fl & libc::O_ACCMODE, libc::O_RDONLY);
        assert_eq!(fl & libc::O_NONBLOCK, 0, "O_NONBLOCK only while opening");
        assert!(on_procfs(std::fs::File::open("/proc/self/status").unwrap().as_fd()));
        assert!(!on_procfs(fd.as_fd()));
    }
}
