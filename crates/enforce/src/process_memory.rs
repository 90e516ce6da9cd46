//! A caller's memory, read and written as the kernel's own copies do.
//!
//! Why: a call the daemon makes for a process reads its arguments from,
//! and writes its results into, that process's memory. Writes through
//! `/proc/PID/mem` go through any protection (`FOLL_FORCE`), where the
//! kernel's `copy_to_user` faults: a result written there could land in
//! the caller's read-only code, a change of an executable mapping that
//! SELinux's `execmod` guards. `process_vm_readv` and
//! `process_vm_writev` honor the protections, as the kernel's copies
//! do: a page the caller may not write answers `EFAULT`.

/// Reads `buf.len()` bytes at `addr` of thread `tid`'s memory.
pub(crate) fn read(tid: u32, addr: u64, buf: &mut [u8]) -> Result<(), i32> {
    let local = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: buf.len() };
    // SAFETY: `local` covers `buf`, writable for the call; `remote` is
    // only an address in the other process, which the kernel checks.
    let n = unsafe { libc::process_vm_readv(tid as libc::pid_t, &local, 1, &remote, 1, 0) };
    whole(n, buf.len())
}

/// Writes `bytes` at `addr` of thread `tid`'s memory.
pub(crate) fn write(tid: u32, addr: u64, bytes: &[u8]) -> Result<(), i32> {
    let local = libc::iovec { iov_base: bytes.as_ptr().cast_mut().cast(), iov_len: bytes.len() };
    let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: bytes.len() };
    // SAFETY: `local` covers `bytes`, which the call only reads; `remote`
    // is only an address in the other process, which the kernel checks.
    let n = unsafe { libc::process_vm_writev(tid as libc::pid_t, &local, 1, &remote, 1, 0) };
    whole(n, bytes.len())
}

/// A transfer of `n` bytes of `len`: all of them, or `EFAULT` (a part),
/// or the call's error.
fn whole(n: isize, len: usize) -> Result<(), i32> {
    if n < 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EFAULT));
    }
    if n as usize == len {
        Ok(())
    } else {
        Err(libc::EFAULT)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn a_read_only_page_is_read_and_not_written() {
        let tid = std::process::id();
        let value = 0x1122_3344_5566_7788u64.to_ne_bytes();
        let mut got = [0u8; 8];
        read(tid, value.as_ptr() as u64, &mut got).unwrap();
        assert_eq!(got, value);
        // SAFETY: a fresh anonymous page, unmapped below.
        let page = unsafe {
            libc::mmap(std::ptr::null_mut(), 4096, libc::PROT_READ, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
        };
        assert_ne!(page, libc::MAP_FAILED);
        assert_eq!(write(tid, page as u64, &value), Err(libc::EFAULT), "as copy_to_user faults");
        let mut after = [0xffu8; 8];
        read(tid, page as u64, &mut after).unwrap();
        assert_eq!(after, [0u8; 8], "the page is unchanged");
        let mut writable = [0u8; 8];
        write(tid, writable.as_mut_ptr() as u64, &value).unwrap();
        assert_eq!(std::hint::black_box(writable), value);
        assert_eq!(read(tid, 8, &mut got), Err(libc::EFAULT), "nothing mapped there");
        // SAFETY: the page mapped above.
        unsafe { libc::munmap(page, 4096) };
    }
}
