//! The `security.selinux` extended attribute: read and written directly
//! with `lgetxattr`/`lsetxattr`/`fgetxattr`, so it works on kernels
//! where SELinux is not active (the attribute is then plain data that
//! the filesystem stores for root).
//!
//! Like libselinux's `lgetfilecon_raw`/`lsetfilecon_raw`: symlinks are
//! never followed, a label is written with a trailing NUL, and a label
//! read back ends at its first NUL.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The attribute name.
pub const XATTR_NAME: &str = "security.selinux";

const XATTR_NAME_C: &std::ffi::CStr = c"security.selinux";

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("path `{}` contains a NUL byte", path.display()))
    })
}

/// Turns the raw attribute value into a context: up to the first NUL,
/// which must be ASCII/UTF-8.
fn to_label(mut value: Vec<u8>) -> io::Result<String> {
    if let Some(n) = value.iter().position(|&b| b == 0) {
        value.truncate(n);
    }
    String::from_utf8(value).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("label is not UTF-8: {e}")))
}

/// Calls a `getxattr`-style function (`buf`, `len` -> size or -1) with a
/// growing buffer. `Ok(None)` when the attribute does not exist.
fn read_with(mut call: impl FnMut(*mut libc::c_void, usize) -> libc::ssize_t) -> io::Result<Option<String>> {
    let mut buf = vec![0u8; 256];
    loop {
        let n = call(buf.as_mut_ptr().cast(), buf.len());
        if n >= 0 {
            let n = usize::try_from(n).unwrap_or(0).min(buf.len());
            buf.truncate(n);
            return to_label(buf).map(Some);
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::ENODATA) => return Ok(None),
            Some(libc::ERANGE) => {
                // Ask for the size, then retry with room for it.
                let size = call(std::ptr::null_mut(), 0);
                if size < 0 {
                    let e = io::Error::last_os_error();
                    return if e.raw_os_error() == Some(libc::ENODATA) { Ok(None) } else { Err(e) };
                }
                let size = usize::try_from(size).unwrap_or(0);
                buf = vec![0u8; size.max(buf.len() * 2)];
            }
            _ => return Err(err),
        }
    }
}

/// The `security.selinux` label of `path` itself (a symlink is not
/// followed). `Ok(None)` when the file has no label (`ENODATA`); other
/// failures, such as a filesystem without xattr support (`ENOTSUP`),
/// are errors.
pub fn get_label(path: &Path) -> io::Result<Option<String>> {
    let c = c_path(path)?;
    read_with(|buf, len| {
        // SAFETY: `c` and the attribute name are NUL-terminated strings
        // that outlive the call; `buf` is either null with `len` 0 (a
        // size query) or points to `len` writable bytes owned by
        // `read_with`'s buffer.
        unsafe { libc::lgetxattr(c.as_ptr(), XATTR_NAME_C.as_ptr(), buf, len) }
    })
}

/// The `security.selinux` label of an open file (also of an `O_PATH`
/// descriptor, which `fgetxattr` refuses: read through
/// `/proc/self/fd`).
pub fn fget_label(fd: BorrowedFd<'_>) -> io::Result<Option<String>> {
    let raw = fd.as_raw_fd();
    let direct = read_with(|buf, len| {
        // SAFETY: `raw` is a valid open descriptor for the duration of
        // the call (borrowed from `fd`); the name is NUL-terminated;
        // `buf`/`len` as in `get_label`.
        unsafe { libc::fgetxattr(raw, XATTR_NAME_C.as_ptr(), buf, len) }
    });
    match direct {
        Err(e) if e.raw_os_error() == Some(libc::EBADF) => {
            let c = c_path(Path::new(&format!("/proc/self/fd/{raw}")))?;
            read_with(|buf, len| {
                // SAFETY: as in `get_label`; the magic link leads to the
                // descriptor's own file (`raw` is open across the call).
                unsafe { libc::getxattr(c.as_ptr(), XATTR_NAME_C.as_ptr(), buf, len) }
            })
        }
        other => other,
    }
}

/// Sets the `security.selinux` label of `path` itself (a symlink is not
/// followed), written with a trailing NUL like libselinux's
/// `lsetfilecon`. Needs root (`CAP_SYS_ADMIN`) and a filesystem with
/// xattr support.
pub fn set_label(path: &Path, context: &str) -> io::Result<()> {
    let c = c_path(path)?;
    let mut value = Vec::with_capacity(context.len() + 1);
    value.extend_from_slice(context.as_bytes());
    value.push(0);
    // SAFETY: `c` and the name are NUL-terminated and outlive the call;
    // `value` points to `value.len()` readable bytes.
    let rc = unsafe { libc::lsetxattr(c.as_ptr(), XATTR_NAME_C.as_ptr(), value.as_ptr().cast(), value.len(), 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Removes the label of `path` itself. `Ok(false)` when it had none.
pub fn remove_label(path: &Path) -> io::Result<bool> {
    let c = c_path(path)?;
    // SAFETY: both strings are NUL-terminated and outlive the call.
    let rc = unsafe { libc::lremovexattr(c.as_ptr(), XATTR_NAME_C.as_ptr()) };
    if rc == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::ENODATA) {
        Ok(false)
    } else {
        Err(e)
    }
}
