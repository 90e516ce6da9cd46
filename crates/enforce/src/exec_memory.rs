//! Executable memory: SELinux's `execmem`, `execheap`, `execstack` and
//! `execmod`, and `execute` of a mapped file (AppArmor's `m`), for the
//! processes `rampart run` started.
//!
//! Why: a policy keeps a domain from running code it writes itself (a
//! JIT, or an exploit's injected code) by not granting it `process
//! execmem` (Debian's `deny_execmem` and `*_execmem` booleans). SELinux
//! checks it whenever anonymous memory, or a private file mapping that
//! is also writable, becomes executable (`file_map_prot_check`, for
//! `mmap`, `shmat` and `mprotect`), and when `mprotect` makes executable
//! the heap (`execheap`), a stack (`execstack`) or a file mapping whose
//! pages were written since (`execmod` on the file: text relocations;
//! `selinux_file_mprotect`). A file mapped executable needs `read` and
//! `execute` on it (and `write` if shared and writable): without that
//! check `ld.so PROG` runs a program the domain may only read, since the
//! loader maps it and nothing execs it. A new mapping of a file needs
//! `map` on it first (`selinux_mmap_file`; not `mprotect`); the images
//! an exec maps are checked at the exec ([`mapped_by_exec`], [`image_perms`]).
//!
//! How: the launcher's filter hands over the calls that may need a
//! check (crate::supervised), told apart by registers the filter reads
//! itself: `mmap`, `mprotect` and `pkey_mprotect` with `PROT_EXEC`,
//! `shmat` with `SHM_EXEC` (a System V segment is kernel memory:
//! `execmem`). The daemon checks the caller's domain, audits, and lets
//! the kernel make the call. A shared mapping of a file is handed over
//! too: of a descriptor open for writing it needs `write` (SELinux asks
//! it of a shared writable mapping; here also of a read-only one, which
//! an `mprotect` that is not handed over could make writable, and of
//! `MAP_SHARED_VALIDATE`, which SELinux's hook does not count as
//! shared): a descriptor opened with `O_APPEND` had only `append`
//! checked, and its shared mapping wrote anywhere in the file
//! (crate::append_only). An `mmap`'s file is the caller's descriptor,
//! taken (`pidfd_getfd`) and labeled as an event's object; only files on
//! the marked filesystems are checked (outside them the policy decides
//! no open either: the libraries of an unmarked `/usr` map unchecked),
//! and memfds, which the daemon labeled as it made them (crate::memfds).
//! A process under an AppArmor profile is checked by it too, by the
//! file's name (`m`, and `r`, `w` as `common_mmap` asks), for files of
//! the marked filesystems.
//! For `mprotect` it reads the mappings of the range as
//! the kernel's hook would see them: `/proc/PID/maps` (`x`: the hook
//! asks `execheap`, `execstack` and `execmod` only of mappings not yet
//! executable; `[heap]` and `[stack]`),
//! the calling thread's stack pointer from `/proc/TID/syscall` (the
//! kernel counts the mapping it points into as a stack), whether a file
//! mapping has private pages from `/proc/PID/smaps`, and the file itself
//! through `/proc/PID/map_files`. One denied mapping refuses the call
//! (`EACCES`), where the kernel would have changed the mappings before
//! it: coarser. A handed-over call costs a round trip to the daemon
//! (about 18 µs here for a lone caller: docs/benchmarks.md), decided on the thread that
//! serves the calls of processes; a process start maps each library
//! once this way.
//!
//! What is left: the mappings of an `mprotect`'s range, and the file an
//! `mmap`'s descriptor names, are read before the kernel makes the call,
//! and another thread of the caller may replace them in between (the
//! kernel checks the file it maps, under the mapping lock); `fd { use }`
//! is not checked, nor `map` of a mapping that is not executable (not
//! handed over: docs/security.md, "Executable mappings").

use std::fs::{self, File};
use std::os::fd::AsFd;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};

use rampart_apparmor::perms::{AA_EXEC_MMAP, MAY_READ, MAY_WRITE};
use rampart_avc::Perms;

use crate::access::ClassPerms;
use crate::apparmor::{AppArmor, FileEvent};
use crate::enforcer::Enforcer;
use crate::mappings::{self, Mapping};
use crate::marked_fs::MarkedFilesystems;
use crate::supervised::{
    Op, MAP_ANONYMOUS, MAP_SHARED, MAP_SHARED_VALIDATE, MAP_TYPE, PROT_EXEC, PROT_READ, PROT_WRITE, SHM_EXEC,
};

/// The filesystems whose files a mapping is checked on.
pub(crate) struct Devices<'a> {
    /// The marked filesystems (the policy's reach): by SELinux, and by
    /// AppArmor for a process under a profile.
    pub marked: &'a MarkedFilesystems,
    /// The kernel's memfd filesystems: by SELinux, under the label the
    /// daemon gave the memfd (crate::memfds).
    pub memfds: &'a [u64],
}

impl Devices<'_> {
    /// The mapped file `file`, if it lies on one of these filesystems.
    fn mapped(&self, file: File, prot: u32, shared: bool, operation: Operation) -> Option<MappedFile> {
        let md = file.metadata().ok()?;
        let marked = self.marked.holds(file.as_fd(), &md);
        (marked || self.memfds.contains(&md.dev())).then_some(MappedFile { file, prot, shared, marked, operation })
    }
}

/// Decides `op` (mmap, shmat or mprotect) by thread `tid`: `Ok` lets
/// the kernel make the call, `Err` is its error. Mapped files are
/// checked on `devices`.
pub(crate) fn decide(e: &Enforcer, tid: u32, op: Op, devices: &Devices<'_>) -> Result<(), i32> {
    let caller = crate::signals::caller(e, tid, "an executable mapping")?;
    let c = &e.classes;
    let needs = match op {
        Op::Mmap { prot, flags, fd } => {
            let anonymous = flags & MAP_ANONYMOUS != 0;
            // SELinux's test (`selinux_mmap_file`): MAP_SHARED alone.
            let shared = flags & MAP_TYPE == MAP_SHARED;
            let shares_pages = !anonymous && (shared || flags & MAP_TYPE == MAP_SHARED_VALIDATE);
            let file =
                if anonymous || (prot & PROT_EXEC == 0 && !shares_pages) { None } else { Some(descriptor(tid, fd)?) };
            // A shared mapping of a descriptor open for writing can be
            // made writable later by an `mprotect` that is not handed
            // over: it needs `write` now (coarser than SELinux, which
            // asks it when the mapping is writable and MAP_SHARED). A
            // descriptor opened to append had only `append` checked.
            let writable = shares_pages && file.as_ref().is_some_and(open_for_writing);
            let (prot_checked, shared_checked) = if writable { (prot | PROT_WRITE, true) } else { (prot, shared) };
            let file = file
                .filter(|_| prot & PROT_EXEC != 0 || writable)
                .and_then(|f| devices.mapped(f, prot_checked, shared_checked, Operation::Mmap));
            vec![Need { execmem: map_needs_execmem(prot, anonymous, shared), file, ..Need::default() }]
        }
        Op::Shmat { flags, .. } => vec![Need { execmem: flags & SHM_EXEC != 0, ..Need::default() }],
        Op::Mprotect { addr, len, prot } => {
            // A thread's stack needs execstack and execmem, other
            // anonymous memory execmem: the same answer (audits aside)
            // when execstack is granted, so its stack pointer is read
            // only when it is not.
            let stacks_free = || e.avc.peek(caller.sid, caller.sid, c.process, c.execstack).denied.is_empty();
            mprotect_needs(tid, addr, len, prot, devices, stacks_free)?
        }
        _ => return Err(libc::ENOSYS),
    };
    let process = |perms: Perms| e.check_process(tid, caller.tgid, caller.sid, caller.sid, perms);
    let file =
        |f: &File, which: &dyn Fn(&ClassPerms) -> Perms| e.check_mapped_file(tid, caller.tgid, caller.sid, f, which);
    let profile = |m: &MappedFile| match &caller.apparmor {
        Some(label) if m.marked => apparmor_allows(e, tid, caller.tgid.unwrap_or(tid), label, m),
        _ => true,
    };
    for need in needs.into_iter().filter(|n| !n.is_empty()) {
        // In the hooks' order, each denial ending the call there.
        let selinux =
            need.file.as_ref().filter(|m| m.operation == Operation::Mmap).map_or(true, |m| file(&m.file, &|cp| cp.map))
                && (!need.execheap || process(c.execheap))
                && (!need.execstack || process(c.execstack))
                && need.execmod.as_ref().map_or(true, |f| file(f, &|cp| cp.execmod))
                && (!need.execmem || process(c.execmem))
                && need.file.as_ref().map_or(true, |m| file(&m.file, &|cp| m.perms(cp)));
        // Stacked: each module checks, and audits its own denial.
        let apparmor = need.file.as_ref().map_or(true, profile);
        if !(selinux && apparmor) {
            return Err(libc::EACCES);
        }
    }
    Ok(())
}

/// Whether an exec maps `file` (its program, or an interpreter it
/// opens): the kernel's ELF loader maps an ELF image after the new
/// credentials are committed (`elf_map`, an mmap: `map`, then `read
/// execute` of the domain entered, [`image_perms`]); a `#!` script is
/// read, not mapped. Read through the event's descriptor, which makes
/// no event.
pub(crate) fn mapped_by_exec(file: &File) -> bool {
    let mut magic = [0u8; 4];
    file.read_exact_at(&mut magic, 0).is_ok() && magic == *b"\x7fELF"
}

/// What mapping an exec's image asks of the domain that runs it, in the
/// hooks' order (`selinux_mmap_file`, then `file_map_prot_check` of its
/// code: `PROT_READ | PROT_EXEC`), each denial ending the exec there.
pub(crate) fn image_perms(cp: &ClassPerms) -> [Perms; 2] {
    [cp.map, cp.read | cp.execute]
}

/// AppArmor's check of a mapped file, by its name, for a process under
/// the profiles of `label` (`common_mmap`: `r` if readable, `w` if shared
/// and writable, `m` for `PROT_EXEC`).
fn apparmor_allows(e: &Enforcer, tid: u32, tgid: u32, label: &str, m: &MappedFile) -> bool {
    let Some(aa) = &e.apparmor else { return false };
    let Ok(md) = m.file.metadata() else { return false };
    let Some(name) = AppArmor::name_of(m.file.as_fd(), &md) else { return false };
    let mut request = 0;
    if m.prot & PROT_EXEC != 0 {
        request |= AA_EXEC_MMAP;
    }
    if m.prot & PROT_READ != 0 {
        request |= MAY_READ;
    }
    if m.shared && m.prot & PROT_WRITE != 0 {
        request |= MAY_WRITE;
    }
    let ev = FileEvent { tid, tgid, fd: m.file.as_fd(), md: &md };
    aa.path_call(label, &ev, &name, request, m.operation.name(), &|| e.avc.policy_state().2)
}

/// What making one mapping executable needs.
#[derive(Debug, Default)]
struct Need {
    execheap: bool,
    execstack: bool,
    /// The mapped file, whose pages were written: `execmod` on it.
    execmod: Option<File>,
    execmem: bool,
    /// The mapped file, on a checked filesystem.
    file: Option<MappedFile>,
}

impl Need {
    fn is_empty(&self) -> bool {
        !self.execheap && !self.execstack && self.execmod.is_none() && !self.execmem && self.file.is_none()
    }
}

/// A file mapped executable, or shared from a descriptor open for
/// writing: `file_map_prot_check` asks `read` of it, `execute` of an
/// executable mapping and `write` of a shared writable one.
#[derive(Debug)]
struct MappedFile {
    file: File,
    /// The mapping's protection asked for, and whether it is shared.
    prot: u32,
    shared: bool,
    /// On a marked filesystem (AppArmor checks those).
    marked: bool,
    operation: Operation,
}

/// The call that makes a mapping executable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Operation {
    /// A new mapping: `map` is asked first (`selinux_mmap_file`).
    Mmap,
    Mprotect,
}

impl Operation {
    /// As AppArmor's records name it.
    fn name(self) -> &'static str {
        match self {
            Operation::Mmap => "file_mmap",
            Operation::Mprotect => "file_mprotect",
        }
    }
}

impl MappedFile {
    fn perms(&self, cp: &ClassPerms) -> Perms {
        let write = self.shared && self.prot & PROT_WRITE != 0;
        let execute = self.prot & PROT_EXEC != 0;
        cp.read | if execute { cp.execute } else { Perms::NONE } | if write { cp.write } else { Perms::NONE }
    }
}

/// Whether descriptor `file` was opened for writing (a shared mapping of
/// it may then be written).
fn open_for_writing(file: &File) -> bool {
    // SAFETY: F_GETFL takes no argument and reads the descriptor's flags.
    let flags = unsafe { libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(file), libc::F_GETFL) };
    flags >= 0 && flags & libc::O_ACCMODE != libc::O_RDONLY
}

/// A copy of descriptor `fd` of thread `tid` (`pidfd_getfd`), as the
/// kernel is about to map it: `Err` the call's error (`EBADF`: none
/// open). Another thread of the caller may replace it before the
/// kernel's call (docs/security.md, "Executable mappings").
fn descriptor(tid: u32, fd: i32) -> Result<File, i32> {
    let pidfd = crate::pidfd::thread_pidfd(tid).map_err(|_| libc::ESRCH)?;
    let copy = crate::pidfd::take_descriptor(pidfd.as_fd(), fd).map_err(|e| e.raw_os_error().unwrap_or(libc::EBADF))?;
    Ok(File::from(copy))
}

/// `file_map_prot_check`'s `execmem` condition: executable, and
/// anonymous (or a kernel-private file: System V segments, shared
/// anonymous memory), or a private mapping that is also writable.
fn map_needs_execmem(prot: u32, anonymous: bool, shared: bool) -> bool {
    prot & PROT_EXEC != 0 && (anonymous || (!shared && prot & PROT_WRITE != 0))
}

/// The stack pointer of a thread blocked in a call (`/proc/TID/syscall`:
/// the number, six arguments, then the stack and instruction pointers).
fn parse_stack_pointer(syscall: &str) -> Option<u64> {
    let sp = syscall.split_whitespace().nth(7)?;
    u64::from_str_radix(sp.strip_prefix("0x")?, 16).ok()
}

/// Whether the mapping at `start` has private (written) pages: its
/// `Anonymous:` line in `/proc/PID/smaps`.
fn has_private_pages(smaps: &str, start: u64) -> bool {
    let mut in_it = false;
    for line in smaps.lines() {
        if let Some(m) = mappings::parse_line(line) {
            in_it = m.start == start;
        } else if in_it {
            if let Some(kb) = line.strip_prefix("Anonymous:") {
                return kb.trim().trim_end_matches("kB").trim().parse::<u64>().map_or(true, |kb| kb > 0);
            }
        }
    }
    false
}

/// What `mprotect(addr, len, prot)` by thread `tid` needs for each
/// mapping of its range. `/proc/PID/maps`
/// names the kernel's heap and initial stack: `[heap]` a mapping that
/// overlaps the heap, where the hook asks for one within it (so
/// `execheap` is asked of a few more, never of fewer), `[stack]` exactly
/// the hook's initial stack. `stacks_free`: whether `execstack` would be
/// granted anyway (then the thread's stack is not looked for). A mapped
/// file on `devices` needs `read` and `execute`, as every `mprotect`
/// with `PROT_EXEC` asks of its file.
fn mprotect_needs(
    tid: u32,
    addr: u64,
    len: u64,
    prot: u32,
    devices: &Devices<'_>,
    stacks_free: impl FnOnce() -> bool,
) -> Result<Vec<Need>, i32> {
    // The kernel does nothing with an empty range.
    if prot & PROT_EXEC == 0 || len == 0 {
        return Ok(Vec::new());
    }
    let read = |what: &str| fs::read_to_string(format!("/proc/{tid}/{what}")).map_err(|_| libc::ESRCH);
    let touched: Vec<Mapping> = mappings::in_range(tid, addr, addr.saturating_add(len)).map_err(|_| libc::ESRCH)?;
    let other_anonymous =
        touched.iter().any(|m| !m.executable && m.anonymous() && m.name != "[heap]" && m.name != "[stack]");
    let sp = if other_anonymous && !stacks_free() {
        Some(parse_stack_pointer(&read("syscall")?).ok_or(libc::EPERM)?)
    } else {
        None
    };
    let mut smaps = None;
    let mut needs = Vec::new();
    for m in touched {
        let mut need = Need::default();
        // The hook asks these only of a mapping not yet executable, and
        // `execmem` of every one.
        let stack = |m: &Mapping| m.name == "[stack]" || sp.is_some_and(|sp| m.start <= sp && m.end >= sp);
        // A mapping's file, looked at, not opened (`O_PATH`): a device is
        // not opened again.
        let file = if m.anonymous() {
            None
        } else {
            let path = format!("/proc/{tid}/map_files/{:x}-{:x}", m.start, m.end);
            Some(fs::OpenOptions::new().read(true).custom_flags(libc::O_PATH).open(path).map_err(|_| libc::EACCES)?)
        };
        if m.executable {
            // Nothing but `execmem`.
        } else if m.name == "[heap]" {
            need.execheap = true;
        } else if m.anonymous() && stack(&m) {
            need.execstack = true;
        } else if let Some(file) = file.as_ref().filter(|_| !m.shared) {
            let smaps = match &smaps {
                Some(s) => s,
                None => smaps.insert(read("smaps")?),
            };
            if has_private_pages(smaps, m.start) {
                need.execmod = Some(file.try_clone().map_err(|_| libc::EACCES)?);
            }
        }
        // The kernel's own files (`S_PRIVATE`) are not checked.
        if let Some(file) = file.filter(|_| !m.kernel_private()) {
            need.file = devices.mapped(file, prot, m.shared, Operation::Mprotect);
        }
        need.execmem = map_needs_execmem(prot, m.anonymous() || m.kernel_private(), m.shared);
        needs.push(need);
    }
    Ok(needs)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// The loader maps ELF images; a script, or a file too short to
    /// hold the magic, is not mapped by its exec.
    #[test]
    fn an_exec_maps_elf_images_only() {
        let dir = std::env::temp_dir().join(format!("rampart-elf-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, bytes: &[u8]| {
            let path = dir.join(name);
            fs::write(&path, bytes).unwrap();
            File::open(path).unwrap()
        };
        assert!(mapped_by_exec(&File::open("/proc/self/exe").unwrap()), "this test binary");
        assert!(mapped_by_exec(&write("elf", b"\x7fELF\x02\x01\x01")), "an ELF header");
        assert!(!mapped_by_exec(&write("script", b"#!/bin/sh\necho\n")), "a script");
        assert!(!mapped_by_exec(&write("short", b"\x7fEL")), "three bytes");
        assert!(!mapped_by_exec(&write("empty", b"")), "empty");
        fs::remove_dir_all(&dir).unwrap();
    }

    /// file_map_prot_check's condition, case by case.
    #[test]
    fn execmem_is_for_anonymous_or_private_writable_code() {
        let (r, w, x) = (libc::PROT_READ as u32, PROT_WRITE, PROT_EXEC);
        assert!(map_needs_execmem(r | x, true, false), "anonymous code");
        assert!(map_needs_execmem(r | x, true, true), "shared anonymous code");
        assert!(map_needs_execmem(r | w | x, false, false), "a private writable file mapping");
        assert!(!map_needs_execmem(r | x, false, false), "a file's code");
        assert!(!map_needs_execmem(r | w | x, false, true), "a shared writable file mapping");
        assert!(!map_needs_execmem(r | w, true, false), "anonymous data");
    }

    /// The needs of this process's own mappings: anonymous memory (made
    /// executable before or not) `execmem`, the heap `execheap` first, a
    /// file's code nothing unless asked to be writable too.
    #[test]
    fn each_mapping_needs_what_the_hook_asks() {
        let me = std::process::id();
        let (r, w, x) = (libc::PROT_READ as u32, PROT_WRITE, PROT_EXEC);
        let wants = |addr: u64, prot: u32| -> Vec<(bool, bool, bool, bool)> {
            let none = Devices { marked: &MarkedFilesystems::default(), memfds: &[] };
            let needs = mprotect_needs(me, addr, 4096, prot, &none, || true).unwrap();
            needs.iter().map(|n| (n.execheap, n.execstack, n.execmod.is_some(), n.execmem)).collect()
        };
        for prot in [r, r | x] {
            // SAFETY: a fresh anonymous page, unmapped below.
            let p = unsafe {
                libc::mmap(std::ptr::null_mut(), 4096, prot as i32, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
            };
            assert_ne!(p, libc::MAP_FAILED);
            assert_eq!(wants(p as u64, r | x), [(false, false, false, true)], "anonymous, prot {prot:#x}");
            assert_eq!(wants(p as u64, r), [], "not asked to execute");
            // SAFETY: unmapping what was mapped above.
            unsafe { libc::munmap(p, 4096) };
        }
        let maps = fs::read_to_string("/proc/self/maps").unwrap();
        let code = maps.lines().filter_map(mappings::parse_line).find(|m| m.executable && !m.anonymous()).unwrap();
        assert_eq!(wants(code.start, r | x), [(false, false, false, false)], "{code:?}");
        assert_eq!(wants(code.start, r | w | x), [(false, false, false, true)], "{code:?}");
        // The file of a mapping: looked at where its filesystem is
        // marked, then `read` and `execute` (not `write`: private).
        let dev = fs::metadata(&code.name).unwrap().dev();
        for (marked, memfds, checked) in [([dev], [0], true), ([0], [dev], true), ([dev ^ 1], [0], false)] {
            let marked_fs = MarkedFilesystems::from_devices(marked.to_vec());
            let devices = Devices { marked: &marked_fs, memfds: &memfds };
            let needs = mprotect_needs(me, code.start, 4096, r | w | x, &devices, || true).unwrap();
            let file = needs[0].file.as_ref();
            assert_eq!(file.is_some(), checked, "{code:?} on {marked:?} {memfds:?}");
            if let Some(file) = file {
                let (want, got) = (fs::metadata(&code.name).unwrap(), file.file.metadata().unwrap());
                assert_eq!((got.dev(), got.ino(), file.marked), (want.dev(), want.ino(), marked == [dev]));
                assert_eq!(file.operation, Operation::Mprotect);
            }
        }
        let heap = maps.lines().filter_map(mappings::parse_line).find(|m| m.name == "[heap]");
        if let Some(heap) = heap {
            assert_eq!(wants(heap.start, r | w | x), [(true, false, false, true)], "{heap:?}");
        }
    }

    /// The descriptor an mmap names is the caller's file; one not open
    /// is the kernel's `EBADF`.
    #[test]
    fn the_mapped_descriptor_is_the_callers_file() {
        // SAFETY: gettid has no arguments.
        let me = unsafe { libc::gettid() } as u32;
        let exe = File::open("/proc/self/exe").unwrap();
        use std::os::fd::AsRawFd;
        let copy = descriptor(me, exe.as_raw_fd()).unwrap();
        let (a, b) = (exe.metadata().unwrap(), copy.metadata().unwrap());
        assert_eq!((a.dev(), a.ino()), (b.dev(), b.ino()));
        assert_eq!(descriptor(me, 1 << 20).unwrap_err(), libc::EBADF);
    }

    #[test]
    fn the_stack_pointer_is_read_after_the_arguments() {
        assert_eq!(parse_stack_pointer("10 0x1000 0x2000 0x7 0x0 0x0 0x0 0x7ffd1234 0x4011aa"), Some(0x7ffd1234));
        assert_eq!(parse_stack_pointer("running"), None);
    }

    /// This process's own files, read by the parsers above: its heap and
    /// stack are where libc says, and a file mapping written privately
    /// counts its pages.
    #[test]
    fn this_process_reads_back_its_own_layout() {
        // A heap of this process's own, whatever the allocator did.
        // SAFETY: sbrk moves the break; nothing below uses the pages.
        assert_ne!(unsafe { libc::sbrk(8192) }, usize::MAX as *mut libc::c_void);
        // SAFETY: sbrk(0) only reads the break.
        let brk = || unsafe { libc::sbrk(0) } as u64;
        // Read again if another test thread's allocation moved the break.
        let (maps, at) = (0..100)
            .find_map(|_| {
                let before = brk();
                let maps = fs::read_to_string("/proc/self/maps").unwrap();
                (brk() == before).then_some((maps, before))
            })
            .unwrap();
        let heap = maps.lines().filter_map(mappings::parse_line).find(|m| m.name == "[heap]").unwrap();
        assert!(heap.start < at && at <= heap.end && heap.end - at < 4096, "{heap:?} {at:#x}");
        let local = 0u8;
        let here = std::ptr::addr_of!(local) as u64;
        let stack = maps.lines().filter_map(mappings::parse_line).find(|m| m.start <= here && here < m.end).unwrap();
        assert!(stack.anonymous() && !stack.executable, "{stack:?}");
        // A private file mapping, written: its page becomes anonymous.
        let path = std::env::temp_dir().join(format!("rampart-exec-memory-{}", std::process::id()));
        fs::write(&path, [0u8; 4096]).unwrap();
        let f = File::open(&path).unwrap();
        use std::os::fd::AsRawFd;
        // SAFETY: a fresh private mapping of one page of `f`, unmapped below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE,
                f.as_raw_fd(),
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        let start = p as u64;
        assert!(!has_private_pages(&fs::read_to_string("/proc/self/smaps").unwrap(), start));
        // SAFETY: `p` is a writable page of this mapping.
        unsafe { p.cast::<u8>().write_volatile(1) };
        assert!(has_private_pages(&fs::read_to_string("/proc/self/smaps").unwrap(), start));
        // SAFETY: unmapping what was mapped above.
        unsafe { libc::munmap(p, 4096) };
        fs::remove_file(&path).unwrap();
    }
}
