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

/// The offset of the high word of argument `i`.
pub const fn data_arg_high(i: u32) -> u32 {
    data_arg(i) + 4
}

/// A jump target in [`Asm`].
#[derive(Clone, Copy)]
pub struct Label(usize);

/// A filter fragment with forward jumps to labels, resolved by
/// [`Asm::finish`]: for fragments of a few dozen instructions, well
/// within classic BPF's 8-bit jumps (crate::sysv_ipc,
/// crate::anon_inodes).
#[derive(Default)]
pub struct Asm {
    code: Vec<(libc::sock_filter, Option<(Label, Label)>)>,
    /// Where each label was placed (an index into `code`).
    places: Vec<usize>,
}

impl Asm {
    pub fn label(&mut self) -> Label {
        self.places.push(usize::MAX);
        Label(self.places.len() - 1)
    }
    pub fn place(&mut self, l: Label) {
        self.places[l.0] = self.code.len();
    }
    pub fn op(&mut self, i: libc::sock_filter) {
        self.code.push((i, None));
    }
    pub fn load(&mut self, offset: u32) {
        self.op(bpf(BPF_LD_W_ABS, offset, 0, 0));
    }
    pub fn jeq(&mut self, k: u32, yes: Label, no: Label) {
        self.code.push((bpf(BPF_JEQ_K, k, 0, 0), Some((yes, no))));
    }
    /// Equal: `yes`; else the next instruction.
    pub fn jeq_or_next(&mut self, k: u32, yes: Label) {
        let next = self.label();
        self.jeq(k, yes, next);
        self.place(next);
    }
    /// Equal to one of `values`: `yes`; else the next instruction.
    pub fn jeq_any(&mut self, values: impl IntoIterator<Item = u32>, yes: Label) {
        for k in values {
            self.jeq_or_next(k, yes);
        }
    }
    pub fn goto(&mut self, to: Label) {
        self.jeq(0, to, to);
    }
    /// Ends the fragment: what falls through goes to `end`, `refuse`
    /// answers `errno`, and `end` is the instruction after the fragment.
    pub fn refusals_then_end(mut self, refuse: Label, end: Label, errno: i32) -> Vec<libc::sock_filter> {
        self.goto(end);
        self.place(refuse);
        self.op(bpf(BPF_RET_K, libc::SECCOMP_RET_ERRNO | errno as u32, 0, 0));
        self.place(end);
        self.finish()
    }
    pub fn finish(self) -> Vec<libc::sock_filter> {
        let places = self.places;
        let offset = |pc: usize, l: Label| u8::try_from(places[l.0] - pc - 1).unwrap_or(u8::MAX);
        self.code
            .into_iter()
            .enumerate()
            .map(|(pc, (mut i, jumps))| {
                if let Some((yes, no)) = jumps {
                    (i.jt, i.jf) = (offset(pc, yes), offset(pc, no));
                }
                i
            })
            .collect()
    }
}

/// Runs filter `prog` on one call (`args`: the arguments' low words), as
/// the kernel's classic BPF interpreter would: the filters' tests.
#[cfg(test)]
#[allow(clippy::panic)]
pub fn run(prog: &[libc::sock_filter], nr: u32, arch: u32, args: [u32; 6]) -> u32 {
    run64(prog, nr, arch, args.map(u64::from))
}

/// [`run`] with whole arguments, high words too.
#[cfg(test)]
#[allow(clippy::panic)]
pub fn run64(prog: &[libc::sock_filter], nr: u32, arch: u32, args: [u64; 6]) -> u32 {
    let load = |k: u32| match k {
        DATA_NR => nr,
        DATA_ARCH => arch,
        k => {
            let arg = args[((k - 16) / 8) as usize];
            (if (k - 16) % 8 == 4 { arg >> 32 } else { arg }) as u32
        }
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
