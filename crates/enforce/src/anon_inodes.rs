//! The kernel objects SELinux labels as anonymous inodes (`userfaultfd`,
//! `memfd_secret`) for the domains whose policy grants no `anon_inode`
//! permission on any type: the launcher's filter refuses the calls that
//! make them.
//!
//! Why: SELinux checks `anon_inode { create }` when a userfaultfd (by
//! its call, or `USERFAULTFD_IOC_NEW` on `/dev/userfaultfd`) or a secret
//! memory area is made (`selinux_inode_init_security_anon`), so a domain
//! granted none gets neither. A userfaultfd lets a process stall the
//! kernel in the middle of a copy from its memory until it answers the
//! fault, the race window kernel exploits widen; nothing here labels
//! the inode or sees the call, so without this a confined process
//! makes one where SELinux refuses it. In Debian's policy 649 of the
//! 674 domains have no `anon_inode` permission. Refused with `EACCES`
//! (as SELinux answers; no AVC line), from the exec-context reply's
//! `forbid` (crate::sandbox::Forbidden::AnonInode); io_uring, whose
//! instances are anonymous inodes too, is refused to every launched
//! process (crate::supervised).
//!
//! Not covered: a domain granted `anon_inode` on some type is not
//! mediated (the labels of the objects, from `type_transition` rules
//! on their names, are not computed here).

use crate::bpf::{data_arg, Asm, AUDIT_ARCH_I386, AUDIT_ARCH_X86_64, DATA_ARCH, DATA_NR};
use crate::sandbox::Forbidden;

/// `userfaultfd`, `memfd_secret`, then `ioctl`, in each numbering.
const X86_64: ([u32; 2], u32) = ([323, 447], 16);
const I386: ([u32; 2], u32) = ([374, 447], 54);
/// `USERFAULTFD_IOC_NEW` (`_IO(0xAA, 0x00)`), on `/dev/userfaultfd`.
const USERFAULTFD_IOC_NEW: u32 = 0xAA00;

/// The filter's part for [`Forbidden::AnonInode`]: refuses those calls
/// (`EACCES`) and falls through for every other. Empty when the domain
/// is not refused them.
pub(crate) fn fragment(forbid: &[Forbidden]) -> Vec<libc::sock_filter> {
    if !forbid.contains(&Forbidden::AnonInode) {
        return Vec::new();
    }
    let mut a = Asm::default();
    let (refuse, end) = (a.label(), a.label());
    for (arch, (calls, ioctl)) in [(AUDIT_ARCH_X86_64, X86_64), (AUDIT_ARCH_I386, I386)] {
        let (this, next, command) = (a.label(), a.label(), a.label());
        a.load(DATA_ARCH);
        a.jeq(arch, this, next);
        a.place(this);
        a.load(DATA_NR);
        a.jeq_any(calls, refuse);
        a.jeq(ioctl, command, end);
        a.place(command);
        a.load(data_arg(1));
        a.jeq(USERFAULTFD_IOC_NEW, refuse, end);
        a.place(next);
    }
    a.refusals_then_end(refuse, end, libc::EACCES)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::bpf::{bpf, run, BPF_RET_K};

    const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
    const EACCES: u32 = libc::SECCOMP_RET_ERRNO | libc::EACCES as u32;

    #[test]
    fn the_calls_that_make_anonymous_inodes_are_refused_and_nothing_else() {
        assert!(fragment(&[Forbidden::Shm]).is_empty());
        let mut prog = fragment(&[Forbidden::AnonInode]);
        prog.push(bpf(BPF_RET_K, ALLOW, 0, 0));
        for (arch, (calls, ioctl)) in [(AUDIT_ARCH_X86_64, X86_64), (AUDIT_ARCH_I386, I386)] {
            for nr in calls {
                assert_eq!(run(&prog, nr, arch, [0; 6]), EACCES, "{nr} on {arch:#x}");
            }
            assert_eq!(run(&prog, ioctl, arch, [3, USERFAULTFD_IOC_NEW, 0, 0, 0, 0]), EACCES, "USERFAULTFD_IOC_NEW");
            // Other commands: a terminal's size, FIONBIO.
            for cmd in [0x5413, 0x5421] {
                assert_eq!(run(&prog, ioctl, arch, [3, cmd, 0, 0, 0, 0]), ALLOW, "ioctl {cmd:#x}");
            }
        }
        // Ordinary calls pass: read, openat, memfd_create; the i386
        // userfaultfd number is an ordinary x86-64 call, and another arch.
        for nr in [0, 257, 319, 374] {
            assert_eq!(run(&prog, nr, AUDIT_ARCH_X86_64, [0; 6]), ALLOW, "{nr}");
        }
        assert_eq!(run(&prog, 323, 0xC000_00B7, [0; 6]), ALLOW, "aarch64");
    }
}
