//! System V IPC (shared memory segments, semaphore sets, message queues)
//! for the domains whose policy grants no permission of that class on
//! any type: the launcher's filter refuses the class's calls.
//!
//! Why: SELinux labels each IPC object with its creator's domain and
//! checks every use against that label (`shm { associate read write }`
//! at `shmget` and `shmat`, `sem { read write }` at `semop`, `msgq {
//! write }` and `msg { send }` at `msgsnd`, `msgq { read }` at `msgrcv`,
//! and the like at each `*ctl`). Without it only the mode bits stand in
//! the way: a confined process under the victim's uid attaches another
//! domain's shared memory, reads its messages, takes its semaphores, by
//! key or by id (ids are small numbers anyone can list in
//! `/proc/sysvipc`). Where the answer is the same for every object no
//! label is needed: a domain granted no permission of a class on any type
//! (in Debian's policy 552 of the 674 domains have no `shm` permission,
//! 586 no `sem`, 607 no `msgq`) is refused that class's calls with
//! `EACCES`, as SELinux answers them (without an AVC line: the kernel
//! answers). The daemon says which in the exec-context reply
//! (crate::sandbox::Forbidden); the filter is [`fragment`].
//!
//! What still passes: `shmdt` (no check in SELinux) and the `*ctl`
//! commands that read the system's limits (`IPC_INFO`, `SHM_INFO`,
//! `SEM_INFO`, `MSG_INFO`: SELinux's `system { ipc_info }`, not checked
//! here) on x86-64; on i386 every `*ctl` is refused (coarser). A domain
//! granted some permission of a class has its objects of that class
//! decided one by one (crate::ipc_objects, where rampartd makes every
//! `*get` and so knows each object's maker).

use crate::bpf::{bpf, data_arg, Asm, AUDIT_ARCH_I386, AUDIT_ARCH_X86_64, BPF_AND_K, DATA_ARCH, DATA_NR};
use crate::sandbox::Forbidden;

/// One class's calls, in both numberings.
struct Calls {
    forbidden: Forbidden,
    /// x86-64 calls refused outright.
    x86_64: &'static [u32],
    /// The x86-64 `*ctl` call, the argument holding its command
    /// (`semctl(id, num, cmd, ...)`: the third), and the commands it may
    /// still make.
    ctl: (u32, u32, [u32; 2]),
    /// i386 calls refused outright (its `*ctl` among them).
    i386: &'static [u32],
    /// The i386 `ipc` multiplexer's calls (its first argument's low 16
    /// bits).
    ipc: &'static [u32],
}

/// `IPC_INFO`, and the class's own info command.
const IPC_INFO: u32 = 3;
/// i386's `ipc(call, ...)`.
const I386_IPC: u32 = 117;

const CALLS: [Calls; 3] = [
    // shmget shmat; shmctl (SHM_INFO); i386 shmget shmctl shmat; ipc's
    // SHMAT SHMGET SHMCTL.
    Calls {
        forbidden: Forbidden::Shm,
        x86_64: &[29, 30],
        ctl: (31, 1, [IPC_INFO, 14]),
        i386: &[395, 396, 397],
        ipc: &[21, 23, 24],
    },
    // semget semop semtimedop; semctl (SEM_INFO); i386 semget semctl
    // semtimedop_time64; ipc's SEMOP SEMGET SEMCTL SEMTIMEDOP.
    Calls {
        forbidden: Forbidden::Sem,
        x86_64: &[64, 65, 220],
        ctl: (66, 2, [IPC_INFO, 19]),
        i386: &[393, 394, 420],
        ipc: &[1, 2, 3, 4],
    },
    // msgget msgsnd msgrcv; msgctl (MSG_INFO); i386 msgget msgsnd msgrcv
    // msgctl; ipc's MSGSND MSGRCV MSGGET MSGCTL.
    Calls {
        forbidden: Forbidden::Msg,
        x86_64: &[68, 69, 70],
        ctl: (71, 1, [IPC_INFO, 12]),
        i386: &[399, 400, 401, 402],
        ipc: &[11, 12, 13, 14],
    },
];

/// The filter's part for `forbid`'s IPC classes: refuses their calls
/// (`EACCES`) and falls through to the instruction after it for every
/// other call. Empty when no class is forbidden.
pub(crate) fn fragment(forbid: &[Forbidden]) -> Vec<libc::sock_filter> {
    let classes: Vec<&Calls> = CALLS.iter().filter(|c| forbid.contains(&c.forbidden)).collect();
    if classes.is_empty() {
        return Vec::new();
    }
    let mut a = Asm::default();
    let (x86_64, not_x86_64, i386, ipc, refuse, end) =
        (a.label(), a.label(), a.label(), a.label(), a.label(), a.label());
    a.load(DATA_ARCH);
    a.jeq(AUDIT_ARCH_X86_64, x86_64, not_x86_64);
    a.place(x86_64);
    a.load(DATA_NR);
    a.jeq_any(classes.iter().flat_map(|c| c.x86_64.iter().copied()), refuse);
    let ctls: Vec<_> = classes.iter().map(|c| (a.label(), c.ctl.1, c.ctl.2)).collect();
    for (c, (label, ..)) in classes.iter().zip(&ctls) {
        a.jeq_or_next(c.ctl.0, *label);
    }
    a.goto(end);
    for (label, arg, commands) in ctls {
        a.place(label);
        a.load(data_arg(arg));
        a.jeq_any(commands, end);
        a.goto(refuse);
    }
    a.place(not_x86_64);
    a.jeq(AUDIT_ARCH_I386, i386, end);
    a.place(i386);
    a.load(DATA_NR);
    a.jeq_any(classes.iter().flat_map(|c| c.i386.iter().copied()), refuse);
    a.jeq(I386_IPC, ipc, end);
    a.place(ipc);
    a.load(data_arg(0));
    a.op(bpf(BPF_AND_K, 0xffff, 0, 0));
    a.jeq_any(classes.iter().flat_map(|c| c.ipc.iter().copied()), refuse);
    a.refusals_then_end(refuse, end, libc::EACCES)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::bpf::{run, BPF_RET_K};

    const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
    const EACCES: u32 = libc::SECCOMP_RET_ERRNO | libc::EACCES as u32;

    /// The fragment, then "allow": what the sandbox's filter does after it.
    fn program(forbid: &[Forbidden]) -> Vec<libc::sock_filter> {
        let mut prog = fragment(forbid);
        assert!(prog.len() < 200, "8-bit jumps");
        prog.push(bpf(BPF_RET_K, ALLOW, 0, 0));
        prog
    }

    #[test]
    fn a_forbidden_class_is_refused_and_nothing_else() {
        assert!(fragment(&[Forbidden::Setattr]).is_empty());
        let all = [Forbidden::Shm, Forbidden::Sem, Forbidden::Msg];
        for (i, c) in CALLS.iter().enumerate() {
            let only = program(&all[i..=i]);
            let every = program(&all);
            for prog in [&only, &every] {
                for &nr in c.x86_64 {
                    assert_eq!(run(prog, nr, AUDIT_ARCH_X86_64, [0; 6]), EACCES, "{nr}");
                }
                for &nr in c.i386 {
                    assert_eq!(run(prog, nr, AUDIT_ARCH_I386, [0; 6]), EACCES, "i386 {nr}");
                }
                for &call in c.ipc {
                    // The version in the upper half is ignored, as the kernel does.
                    let args = [0x0001_0000 | call, 0, 0, 0, 0, 0];
                    assert_eq!(run(prog, I386_IPC, AUDIT_ARCH_I386, args), EACCES, "ipc {call}");
                }
                // IPC_STAT and IPC_RMID no; the limits yes; the command
                // where the call has it (semctl's third argument), whatever
                // the other arguments hold.
                let ctl = |cmd: u32, other: u32| {
                    let mut args = [5, other, other, 0, 0, 0];
                    args[c.ctl.1 as usize] = cmd;
                    run(prog, c.ctl.0, AUDIT_ARCH_X86_64, args)
                };
                for other in [0, 3, 19] {
                    for cmd in [0, 2] {
                        assert_eq!(ctl(cmd, other), EACCES, "ctl {cmd} beside {other}");
                    }
                    for cmd in c.ctl.2 {
                        assert_eq!(ctl(cmd, other), ALLOW, "ctl {cmd} beside {other}");
                    }
                }
            }
            // The other classes pass where only this one is forbidden.
            for other in CALLS.iter().filter(|o| o.forbidden != c.forbidden) {
                for &nr in other.x86_64.iter().chain([&other.ctl.0]) {
                    assert_eq!(run(&only, nr, AUDIT_ARCH_X86_64, [0; 6]), ALLOW, "{nr}");
                }
                for &nr in other.i386 {
                    assert_eq!(run(&only, nr, AUDIT_ARCH_I386, [0; 6]), ALLOW, "i386 {nr}");
                }
                for &call in other.ipc {
                    assert_eq!(run(&only, I386_IPC, AUDIT_ARCH_I386, [call, 0, 0, 0, 0, 0]), ALLOW, "ipc {call}");
                }
            }
        }
        // shmdt (x86-64 67, i386 398, ipc's SHMDT 22), ordinary calls and
        // another arch pass.
        let every = program(&all);
        assert_eq!(run(&every, 67, AUDIT_ARCH_X86_64, [0; 6]), ALLOW);
        assert_eq!(run(&every, 398, AUDIT_ARCH_I386, [0; 6]), ALLOW);
        assert_eq!(run(&every, I386_IPC, AUDIT_ARCH_I386, [22, 0, 0, 0, 0, 0]), ALLOW);
        for nr in [0, 1, 59, 257] {
            assert_eq!(run(&every, nr, AUDIT_ARCH_X86_64, [0; 6]), ALLOW, "{nr}");
        }
        assert_eq!(run(&every, 29, 0xC000_00B7, [0; 6]), ALLOW, "aarch64");
    }
}
