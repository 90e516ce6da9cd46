//! An exec transition whose new image is the one its process already
//! runs: did it commit?
//!
//! Why: crate::cgroups settles an exec transition by the process's
//! executable: the decided file, or the interpreter its `#!` line names,
//! once the process runs it, proves the exec committed. A shell running
//! a `#!/bin/sh` entrypoint (`sh -c 'exec script'`, a forked shell child)
//! runs that interpreter already, so its executable proves nothing; such
//! an exec settled in the old domain, and a script that a transition
//! moves into a restricted domain ran in the domain it was to leave.
//!
//! How: an exec that commits gives its process a new memory map
//! (`exec_mmap`, its point of no return: past it the new image runs or
//! the process dies), with a new code area, stack, and argument and
//! environment areas; a failed exec keeps the old map. The kernel shows
//! where those lie (`/proc/PID/stat`, fields 26 to 28 and 45 to 51), and
//! nothing but an exec or `prctl(PR_SET_MM)` on one's own map changes
//! them. Before the exec is answered the daemon writes them down
//! ([`OldMemory::of`]), with the 16 random bytes the kernel gave the old
//! image (`AT_RANDOM`; every exec gets new ones), when nothing else can
//! change that map during the exec: the exec's thread is its process's
//! only one (crate::enforcer), and no other process shares the map (else
//! the exec is refused). Any sharer could rewrite the layout itself
//! (`prctl(PR_SET_MM_MAP)` needs no privilege): a vfork parent was let
//! share it, released by another child of its own once the exec was
//! answered, and made a failed exec look committed
//! (`a_process_sharing_the_map_does_not_make_a_failed_exec_committed`).
//! So dash, which runs a command in a vfork child, cannot run such a
//! script from one (`exec` and a forked child can). Judged once the
//! process is frozen ([`OldMemory::outcome`]):
//! * another layout: committed (with address space randomization every
//!   exec moves the stack);
//! * the same layout and random bytes: failed (a committed exec has new
//!   bytes but with probability 2^-128);
//! * the same layout, other bytes: an exec that committed without
//!   randomization (`ADDR_NO_RANDOMIZE`, `randomize_va_space=0`), or old
//!   code that rewrote its own bytes. Not known: crate::cgroups ends the
//!   process, as the kernel ends an exec that fails past its point of no
//!   return.

use std::fs;

/// `kcmp`'s `KCMP_VM`: the two tasks share one memory map.
const KCMP_VM: libc::c_int = 1;
/// `AT_RANDOM` in the auxiliary vector: the address of 16 random bytes.
const AT_RANDOM: u64 = 25;

/// Where a memory map's areas lie: `/proc/PID/stat`'s startcode,
/// endcode, startstack, start_data, end_data, start_brk, arg_start,
/// arg_end, env_start, env_end.
type Layout = [u64; 10];
/// Those fields' numbers in `/proc/PID/stat` (from 1).
const LAYOUT_FIELDS: Layout = [26, 27, 28, 45, 46, 47, 48, 49, 50, 51];

/// A process's memory map before its exec (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OldMemory {
    pub layout: Layout,
    pub random: [u8; 16],
}

/// What became of an exec, by its process's memory map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Committed,
    Failed,
    /// The same layout with other random bytes, or unreadable.
    Unknown,
}

impl OldMemory {
    /// Process `tgid`'s map, whose only thread is in an exec that has
    /// not reached its point of no return; `Err`: why it cannot be
    /// written down so that the exec's outcome can be told.
    pub fn of(tgid: u32) -> Result<OldMemory, String> {
        if let Some(sharer) = sharer_of(tgid) {
            return Err(format!("pid {sharer} shares its memory"));
        }
        let layout = layout_of(tgid).ok_or("its memory layout cannot be read")?;
        let random = random_bytes_of(tgid).ok_or("its AT_RANDOM bytes cannot be read")?;
        Ok(OldMemory { layout, random })
    }

    /// What became of process `tgid`'s exec (see the module docs).
    pub fn outcome(&self, tgid: u32) -> Outcome {
        match layout_of(tgid) {
            None => Outcome::Unknown,
            Some(now) if now != self.layout => Outcome::Committed,
            Some(_) if random_bytes_of(tgid) == Some(self.random) => Outcome::Failed,
            Some(_) => Outcome::Unknown,
        }
    }
}

/// The layout fields of a `/proc/PID/stat` (0: a field the reader may
/// not see, or a process without a map).
fn layout_in(stat: &str) -> Option<Layout> {
    // The name, in parentheses, may hold anything: fields follow the last.
    let fields: Vec<&str> = stat.get(stat.rfind(')')? + 1..)?.split_whitespace().collect();
    let mut layout = [0; 10];
    for (slot, field) in layout.iter_mut().zip(LAYOUT_FIELDS) {
        // After the name comes field 3.
        *slot = fields.get(field as usize - 3)?.parse().ok()?;
    }
    Some(layout)
}

fn layout_of(pid: u32) -> Option<Layout> {
    let layout = layout_in(&fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)?;
    // A process without a map (exiting), or hidden from the daemon.
    (layout != [0; 10]).then_some(layout)
}

/// The 16 bytes `AT_RANDOM` points at in process `pid`'s memory.
fn random_bytes_of(pid: u32) -> Option<[u8; 16]> {
    let auxv = fs::read(format!("/proc/{pid}/auxv")).ok()?;
    let word = |b: &[u8]| b.try_into().ok().map(u64::from_ne_bytes);
    let addr = auxv.chunks_exact(16).find_map(|e| (word(&e[..8])? == AT_RANDOM).then(|| word(&e[8..])).flatten())?;
    let mut bytes = [0; 16];
    crate::process_memory::read(pid, addr, &mut bytes).ok()?;
    Some(bytes)
}

/// A process other than `tgid` whose threads share its memory map.
fn sharer_of(tgid: u32) -> Option<u32> {
    let pids = fs::read_dir("/proc").ok()?.flatten().filter_map(|d| d.file_name().to_str()?.parse::<u32>().ok());
    for pid in pids.filter(|&p| p != tgid) {
        let tasks = fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten();
        let mut tids = tasks.filter_map(|d| d.file_name().to_str()?.parse::<u32>().ok());
        if tids.any(|tid| shares_map(tgid, tid)) {
            return Some(pid);
        }
    }
    None
}

/// Whether tasks `a` and `b` share one memory map (`false` if either is
/// gone).
fn shares_map(a: u32, b: u32) -> bool {
    // SAFETY: kcmp takes integer arguments only.
    unsafe { libc::syscall(libc::SYS_kcmp, a as libc::pid_t, b as libc::pid_t, KCMP_VM, 0usize, 0usize) == 0 }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_is_read_after_the_name() {
        let own = fs::read_to_string("/proc/self/stat").unwrap();
        let layout = layout_in(&own).unwrap();
        // startstack lies above the code; arg_start below env_start.
        assert!(layout[2] > layout[1] && layout[6] < layout[8], "{layout:?}");
        let tail = own.get(own.rfind(')').unwrap()..).unwrap();
        assert_eq!(layout_in(&format!("1 (a) b) c{tail}")), Some(layout), "a name with ') ' in it");
        assert_eq!(layout_in("1 (sh) S 0 0"), None, "too short");
    }

    #[test]
    fn the_random_bytes_are_the_kernels() {
        // SAFETY: getauxval reads the process's own auxiliary vector.
        let addr = unsafe { libc::getauxval(AT_RANDOM) };
        // SAFETY: AT_RANDOM points at 16 bytes the kernel wrote.
        let want = unsafe { std::ptr::read_unaligned(addr as *const [u8; 16]) };
        assert_eq!(random_bytes_of(std::process::id()), Some(want));
    }

    #[test]
    fn the_outcome_is_read_from_the_map() {
        let me = std::process::id();
        let now = OldMemory::of(me).unwrap();
        assert_eq!(now.outcome(me), Outcome::Failed, "the map unchanged: no exec");
        let mut moved = now.clone();
        moved.layout[2] ^= 0x1000;
        assert_eq!(moved.outcome(me), Outcome::Committed, "another stack: a new map");
        let mut rewritten = now.clone();
        rewritten.random[0] ^= 1;
        assert_eq!(rewritten.outcome(me), Outcome::Unknown, "the same layout, other bytes");
        assert_eq!(now.outcome(u32::MAX), Outcome::Unknown, "no such process");
    }

    /// A forked child shares no map; a vfork child (here a `clone` with
    /// `CLONE_VM | CLONE_VFORK`) shares its parent's, waiting or not; a
    /// thread's process is no other process.
    #[test]
    fn a_process_sharing_the_map_is_a_sharer() {
        let me = std::process::id();
        assert_eq!(sharer_of(me), None, "threads of this process are not another's");
        extern "C" fn sleep_then_end(_: *mut libc::c_void) -> libc::c_int {
            let two = libc::timespec { tv_sec: 2, tv_nsec: 0 };
            // SAFETY: async-signal-safe calls, on the stack given below.
            unsafe {
                libc::nanosleep(&two, std::ptr::null_mut());
                libc::_exit(0)
            }
        }
        let mut stack = vec![0u8; 64 << 10];
        // SAFETY: fork in a test: the child (one thread) makes only
        // async-signal-safe calls: a vfork whose child sleeps 2 s and ends,
        // then its own end.
        let child = unsafe { libc::fork() };
        if child == 0 {
            // SAFETY: as above; `stack` (copied by the fork) outlives the
            // vfork child, which the parent waits for.
            unsafe {
                let top = stack.as_mut_ptr().add(stack.len()).cast();
                let flags = libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD;
                libc::clone(sleep_then_end, top, flags, std::ptr::null_mut());
                libc::_exit(0);
            }
        }
        let child = child as u32;
        let started = std::time::Instant::now();
        let mut vforked = None;
        while vforked.is_none() && started.elapsed() < std::time::Duration::from_secs(1) {
            vforked = children_of(child).first().copied();
        }
        let vforked = vforked.expect("the vfork child");
        assert!(!shares_map(me, child), "a forked child has a map of its own");
        assert!(shares_map(child, vforked));
        assert_eq!(sharer_of(vforked), Some(child), "its parent, waiting in its vfork, shares it");
        assert_eq!(sharer_of(child), Some(vforked));
        // SAFETY: ending the processes this test made.
        unsafe {
            libc::kill(vforked as libc::pid_t, libc::SIGKILL);
            libc::waitpid(child as libc::pid_t, std::ptr::null_mut(), 0);
        }
    }

    fn children_of(pid: u32) -> Vec<u32> {
        let text = fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
        text.split_whitespace().filter_map(|p| p.parse().ok()).collect()
    }
}
