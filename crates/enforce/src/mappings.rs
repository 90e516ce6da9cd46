//! The memory mappings of another process in an address range, as
//! `/proc/PID/maps` shows them (crate::exec_memory).
//!
//! Why: deciding an `mprotect` needs the mappings of its range, and the
//! text of `/proc/PID/maps` is slow to make (about 30 µs for a small
//! process here, the daemon's main cost per call). `PROCMAP_QUERY`
//! (Linux 6.11) asks the same file for the mapping at an address, one
//! `ioctl` each: the range's mappings alone, no text. On an older kernel
//! (`ENOTTY`) the text is read.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::AsRawFd;

/// One mapping: what `/proc/PID/maps` shows of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    pub executable: bool,
    /// `s`: mapped shared (`VM_MAYSHARE`).
    pub shared: bool,
    /// 0: no file (anonymous memory, the kernel's special mappings).
    pub inode: u64,
    /// The path, `[heap]`, `[stack]`, ...; empty for anonymous memory.
    pub name: String,
}

impl Mapping {
    /// No file: anonymous memory and the kernel's special mappings.
    pub fn anonymous(&self) -> bool {
        self.inode == 0
    }
    /// A file of the kernel's own (`S_PRIVATE`): shared anonymous memory
    /// (`/dev/zero (deleted)`) and System V segments (`/SYSV...`).
    pub fn kernel_private(&self) -> bool {
        self.shared && (self.name.starts_with("/dev/zero ") || self.name.starts_with("/SYSV"))
    }
}

/// The mappings of the process of thread `tid` that overlap
/// `[start, end)`, in address order.
pub fn in_range(tid: u32, start: u64, end: u64) -> io::Result<Vec<Mapping>> {
    let mut maps = File::open(format!("/proc/{tid}/maps"))?;
    match query_range(&maps, start, end) {
        Err(e) if e.raw_os_error() == Some(libc::ENOTTY) => {
            let mut text = String::new();
            maps.read_to_string(&mut text)?;
            Ok(text.lines().filter_map(parse_line).filter(|m| m.start < end && m.end > start).collect())
        }
        other => other,
    }
}

/// `struct procmap_query` (include/uapi/linux/fs.h).
#[repr(C)]
#[derive(Default)]
struct ProcmapQuery {
    size: u64,
    query_flags: u64,
    query_addr: u64,
    vma_start: u64,
    vma_end: u64,
    vma_flags: u64,
    vma_page_size: u64,
    vma_offset: u64,
    inode: u64,
    dev_major: u32,
    dev_minor: u32,
    vma_name_size: u32,
    build_id_size: u32,
    vma_name_addr: u64,
    build_id_addr: u64,
}

/// `_IOWR('f', 17, struct procmap_query)`.
const PROCMAP_QUERY: libc::c_ulong = 0xc000_0000 | ((size_of::<ProcmapQuery>() as libc::c_ulong) << 16) | 0x6611;
const COVERING_OR_NEXT_VMA: u64 = 0x10;
const VMA_EXECUTABLE: u64 = 0x04;
const VMA_SHARED: u64 = 0x08;
/// Room for a path (`PATH_MAX`) and ` (deleted)`.
const NAME_ROOM: usize = 4096 + 16;

fn query_range(maps: &File, start: u64, end: u64) -> io::Result<Vec<Mapping>> {
    let mut out = Vec::new();
    let mut name = vec![0u8; NAME_ROOM];
    let mut at = start;
    while at < end {
        let mut q = ProcmapQuery {
            size: size_of::<ProcmapQuery>() as u64,
            query_flags: COVERING_OR_NEXT_VMA,
            query_addr: at,
            vma_name_size: NAME_ROOM as u32,
            vma_name_addr: name.as_mut_ptr() as u64,
            ..ProcmapQuery::default()
        };
        // SAFETY: `q` is a procmap_query of the size it says, valid for
        // the call; its name buffer `name` has `vma_name_size` bytes.
        let rc = unsafe { libc::ioctl(maps.as_raw_fd(), PROCMAP_QUERY, &mut q as *mut ProcmapQuery) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            // No mapping at or after `at`.
            if e.raw_os_error() == Some(libc::ENOENT) {
                break;
            }
            return Err(e);
        }
        if q.vma_start >= end || q.vma_end <= at {
            break;
        }
        // The size counts the terminating NUL; 0 when the mapping has no name.
        let len = (q.vma_name_size as usize).saturating_sub(1).min(name.len());
        out.push(Mapping {
            start: q.vma_start,
            end: q.vma_end,
            executable: q.vma_flags & VMA_EXECUTABLE != 0,
            shared: q.vma_flags & VMA_SHARED != 0,
            inode: q.inode,
            name: String::from_utf8_lossy(&name[..len]).into_owned(),
        });
        at = q.vma_end;
    }
    Ok(out)
}

/// One line of `/proc/PID/maps` (or a mapping's first line in smaps).
pub fn parse_line(line: &str) -> Option<Mapping> {
    let mut f = line.splitn(6, ' ');
    let (start, end) = f.next()?.split_once('-')?;
    let perms = f.next()?.as_bytes();
    let _offset = f.next()?;
    let _dev = f.next()?;
    let inode = f.next()?.parse().ok()?;
    let name = f.next().unwrap_or("").trim_start().to_owned();
    Some(Mapping {
        start: u64::from_str_radix(start, 16).ok()?,
        end: u64::from_str_radix(end, 16).ok()?,
        executable: perms.get(2) == Some(&b'x'),
        shared: perms.get(3) == Some(&b's'),
        inode,
        name,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn maps_lines_read_as_the_kernel_writes_them() {
        let file = "7f12a0000000-7f12a0021000 r-xp 00002000 fe:00 326269                     /usr/lib/libc.so.6";
        let m = parse_line(file).unwrap();
        assert_eq!(
            (m.start, m.end, m.inode, m.name.as_str()),
            (0x7f12a0000000, 0x7f12a0021000, 326269, "/usr/lib/libc.so.6")
        );
        assert!(m.executable && !m.shared && !m.anonymous());
        let anon = parse_line("7ffd1000-7ffd2000 rw-p 00000000 00:00 0 ").unwrap();
        assert!(anon.anonymous() && !anon.executable && anon.name.is_empty());
        let zero = parse_line("7f0000000000-7f0000001000 rw-s 00000000 00:01 2049        /dev/zero (deleted)").unwrap();
        assert!(zero.kernel_private() && !zero.anonymous());
        assert_eq!(parse_line("Anonymous:  4 kB"), None);
    }

    /// The ioctl's answers are the text's, mapping for mapping, over this
    /// process's whole address space.
    #[test]
    fn the_query_gives_what_the_text_shows() {
        let tid = std::process::id();
        let maps = File::open(format!("/proc/{tid}/maps")).unwrap();
        let queried = query_range(&maps, 0, u64::MAX).unwrap();
        let text = std::fs::read_to_string(format!("/proc/{tid}/maps")).unwrap();
        let shown: Vec<Mapping> = text.lines().filter_map(parse_line).collect();
        // Other test threads may map or unmap between the two reads:
        // compare the mappings both saw at the same place.
        let common: Vec<&Mapping> = queried.iter().filter(|q| shown.iter().any(|s| s.start == q.start)).collect();
        assert!(common.len() * 2 > shown.len(), "{} of {}", common.len(), shown.len());
        for q in common {
            let s = shown.iter().find(|s| s.start == q.start).unwrap();
            if s.end == q.end {
                assert_eq!(q, s);
            }
        }
        // A range: the mappings overlapping it, the one around its start
        // included.
        let stack = shown.iter().find(|m| m.name == "[stack]").unwrap();
        let inside = in_range(tid, stack.start + 1, stack.start + 2).unwrap();
        assert_eq!(inside.len(), 1);
        assert_eq!(inside[0].name, "[stack]");
    }
}
