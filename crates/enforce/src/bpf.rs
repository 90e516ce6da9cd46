//! Classic BPF for the seccomp filters (crate::sandbox's, which refuses,
//! and crate::supervised's, which hands calls to the daemon): the
//! instructions they use and where `struct seccomp_data` keeps what they
//! read.

/// One classic BPF instruction (`struct sock_filter`).
pub const fn bpf(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

pub const BPF_LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
pub const BPF_JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
pub const BPF_JGE_K: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
pub const BPF_JSET_K: u16 = (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16;
pub const BPF_RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
pub const BPF_AND_K: u16 = (libc::BPF_ALU | libc::BPF_AND | libc::BPF_K) as u16;
pub const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
pub const AUDIT_ARCH_I386: u32 = 0x4000_0003;
/// Offsets in `struct seccomp_data`: the call's number, its arch.
pub const DATA_NR: u32 = 0;
pub const DATA_ARCH: u32 = 4;

/// The offset of argument `i`'s low word (little-endian).
pub const fn data_arg(i: u32) -> u32 {
    16 + 8 * i
}

/// Runs filter `prog` on one call (`args`: the arguments' low words), as
/// the kernel's classic BPF interpreter would: the filters' tests.
#[cfg(test)]
#[allow(clippy::panic)]
pub fn run(prog: &[libc::sock_filter], nr: u32, arch: u32, args: [u32; 6]) -> u32 {
    let load = |k: u32| match k {
        DATA_NR => nr,
        DATA_ARCH => arch,
        k => args[((k - 16) / 8) as usize],
    };
    let mut pc = 0;
    let mut acc = 0;
    loop {
        let i = prog[pc];
        let jump = |yes: bool| usize::from(if yes { i.jt } else { i.jf });
        match i.code {
            BPF_LD_W_ABS => acc = load(i.k),
            BPF_JEQ_K => pc += jump(acc == i.k),
            BPF_JGE_K => pc += jump(acc >= i.k),
            BPF_JSET_K => pc += jump(acc & i.k != 0),
            BPF_AND_K => acc &= i.k,
            BPF_RET_K => return i.k,
            other => panic!("unexpected instruction {other:#x}"),
        }
        pc += 1;
    }
}
