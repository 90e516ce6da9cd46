//! A private mount namespace, and the mounts made in it: where `rampart
//! demo` and the enforcement benchmark run, so that no mount they make and
//! no fanotify mark they place can reach the rest of the machine.
//!
//! How: `unshare(CLONE_NEWNS)` gives the calling thread alone a copy of
//! the mount tree; `mount(NULL, "/", MS_REC | MS_PRIVATE)` then stops
//! propagation both ways. Threads and processes started from that thread
//! inherit the namespace; the rest of the process stays where it was
//! (called before any other thread exists, as `rampart demo` does, it
//! moves the whole process). When the thread and its children are gone,
//! the namespace and all its mounts go with it.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The mount namespace of the calling thread (`mnt:[inode]`).
pub fn own_namespace() -> io::Result<String> {
    namespace_of("/proc/thread-self/ns/mnt")
}

/// The mount namespace of process `pid`.
pub fn namespace_of_pid(pid: i32) -> io::Result<String> {
    namespace_of(&format!("/proc/{pid}/ns/mnt"))
}

fn namespace_of(link: &str) -> io::Result<String> {
    let target = std::fs::read_link(link).map_err(|e| context(e, format!("cannot read {link}")))?;
    Ok(target.to_string_lossy().into_owned())
}

/// `e` with what was being done.
fn context(e: io::Error, what: String) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

fn last_error(what: String) -> io::Error {
    context(io::Error::last_os_error(), what)
}

fn cpath(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, format!("path with a NUL byte: {}", p.display())))
}

/// Moves the calling thread into a new mount namespace with private
/// propagation (what it starts afterwards inherits it), and checks that
/// it did move.
pub fn enter_private_namespace() -> io::Result<()> {
    let before = own_namespace()?;
    // SAFETY: unshare takes no pointers; CLONE_NEWNS (with the CLONE_FS it
    // implies) only detaches this thread's mount namespace and fs state.
    if unsafe { libc::unshare(libc::CLONE_NEWNS) } != 0 {
        return Err(last_error("unshare(CLONE_NEWNS) failed (run as root)".into()));
    }
    let root = c"/";
    // SAFETY: the path is a valid NUL-terminated string; null source, type
    // and data are allowed for a propagation change.
    let rc = unsafe {
        libc::mount(
            std::ptr::null(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        return Err(last_error("cannot make the new mount namespace private".into()));
    }
    let after = own_namespace()?;
    if after == before {
        return Err(io::Error::other(format!("unshare(CLONE_NEWNS) left the thread in {before}")));
    }
    Ok(())
}

/// `mount(2)` of `source` on `target`, in the calling thread's namespace.
pub fn mount(
    source: &str,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> io::Result<()> {
    let invalid = |what: &str| io::Error::new(io::ErrorKind::InvalidInput, format!("{what} with a NUL byte"));
    let src = CString::new(source).map_err(|_| invalid("mount source"))?;
    let tgt = cpath(target)?;
    let ty = fstype.map(CString::new).transpose().map_err(|_| invalid("file system type"))?;
    let dat = data.map(CString::new).transpose().map_err(|_| invalid("mount data"))?;
    // SAFETY: every pointer is either null or a valid NUL-terminated string
    // that outlives the call.
    let rc = unsafe {
        libc::mount(
            src.as_ptr(),
            tgt.as_ptr(),
            ty.as_ref().map_or(std::ptr::null(), |t| t.as_ptr()),
            flags,
            dat.as_ref().map_or(std::ptr::null(), |d| d.as_ptr().cast()),
        )
    };
    if rc != 0 {
        return Err(last_error(format!("cannot mount {source} on {}", target.display())));
    }
    Ok(())
}

/// Mounts a tmpfs named `name` on `target` (nodev) with mount options
/// `data` (`size=64m`, ...). Not nosuid: the programs put there enter
/// domains, which SELinux refuses from a nosuid mount (crate::exec_mount).
pub fn mount_tmpfs(name: &str, target: &Path, data: &str) -> io::Result<()> {
    mount(name, target, Some("tmpfs"), libc::MS_NODEV, Some(data))
}

/// Unmounts `target` lazily (`MNT_DETACH`).
pub fn detach(target: &Path) -> io::Result<()> {
    let t = cpath(target)?;
    // SAFETY: `t` is a valid NUL-terminated path.
    if unsafe { libc::umount2(t.as_ptr(), libc::MNT_DETACH) } != 0 {
        return Err(last_error(format!("cannot detach {}", target.display())));
    }
    Ok(())
}
