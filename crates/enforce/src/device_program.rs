//! The kernel's cgroup device hook, programmed: an eBPF program
//! (`BPF_PROG_TYPE_CGROUP_DEVICE`) that allows a cgroup's processes the
//! devices of a list, each with the accesses the list gives it, and
//! nothing of any other device but terminals (crate::device_access says
//! why and what the list holds).
//!
//! The kernel runs the programs of a cgroup and of its ancestors at every
//! open and `mknod` of a device node (`devcgroup_check_permission`, from
//! `inode_permission`), by major and minor number, wherever the node
//! lies: a node made elsewhere names the same device. Nothing else pays:
//! regular files never reach the hook.
//!
//! The program is a chain of compares, one block per device (a few
//! hundred devices on a machine: well within the verifier's limits);
//! every program attached to a cgroup must allow an access, so a new one
//! is attached before the old ones are detached (stricter meanwhile,
//! never laxer).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

/// `bpf_cgroup_dev_ctx.access_type`: the accesses asked in the high 16
/// bits, the device type in the low ones.
pub const DEV_BLOCK: u32 = 1;
pub const DEV_CHAR: u32 = 2;
pub const ACCESS_READ: u32 = 2;
pub const ACCESS_WRITE: u32 = 4;

/// A device by type and number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Device {
    pub kind: u32,
    pub major: u32,
    pub minor: u32,
}

/// One eBPF instruction (`struct bpf_insn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Insn {
    code: u8,
    /// dst in the low four bits, src in the high four.
    regs: u8,
    off: i16,
    imm: i32,
}

const LDX_W: u8 = 0x61; // BPF_LDX | BPF_MEM | BPF_W
const MOV64_K: u8 = 0xb7;
const MOV64_X: u8 = 0xbf;
const AND64_K: u8 = 0x57;
const RSH64_K: u8 = 0x77;
const JA: u8 = 0x05;
const JEQ_K: u8 = 0x15;
const JNE_K: u8 = 0x55;
const JLT_K: u8 = 0xa5;
const JGT_K: u8 = 0x25;
const EXIT: u8 = 0x95;

const fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn { code, regs: dst | (src << 4), off, imm }
}

/// Registers: r1 the context; r2 the accesses asked (then those not yet
/// granted), r3 the type, r4 the major, r5 the minor.
const CTX: u8 = 1;
const ASKED: u8 = 2;
const KIND: u8 = 3;
const MAJOR: u8 = 4;
const MINOR: u8 = 5;

/// Most devices one program lists: jumps are 16-bit.
const MOST_DEVICES: usize = 5000;

/// The program allowing each device of `allowed` the accesses (bits of
/// `ACCESS_READ | ACCESS_WRITE`) it gives, terminals everything, and
/// `mknod` of any device (a node names a device it does not open: the
/// open is what is decided).
pub fn program(allowed: &[(Device, u32)]) -> Result<Vec<Insn>, String> {
    if allowed.len() > MOST_DEVICES {
        return Err(format!("{} devices: at most {MOST_DEVICES} fit one device program", allowed.len()));
    }
    let mut p = vec![
        insn(LDX_W, ASKED, CTX, 0, 0),
        insn(MOV64_X, KIND, ASKED, 0, 0),
        insn(AND64_K, KIND, 0, 0, 0xffff),
        insn(RSH64_K, ASKED, 0, 0, 16),
        insn(AND64_K, ASKED, 0, 0, (ACCESS_READ | ACCESS_WRITE) as i32),
        insn(LDX_W, MAJOR, CTX, 4, 0),
        insn(LDX_W, MINOR, CTX, 8, 0),
    ];
    // Jumps to the verdict, patched once it is placed.
    let mut to_allow = Vec::new();
    let mut to_verdict = Vec::new();
    let skip_terminals = p.len();
    p.push(insn(JNE_K, KIND, 0, 0, DEV_CHAR as i32));
    // Terminals are not decided here (crate::controlling_tty: a pty is
    // labeled when it is made, unseen).
    for (low, high) in crate::controlling_tty::TERMINAL_MAJORS {
        if low == high {
            to_allow.push(p.len());
            p.push(insn(JEQ_K, MAJOR, 0, 0, low as i32));
        } else {
            // Below `low` or above `high`: the next range.
            p.push(insn(JLT_K, MAJOR, 0, 2, low as i32));
            p.push(insn(JGT_K, MAJOR, 0, 1, high as i32));
            to_allow.push(p.len());
            p.push(insn(JA, 0, 0, 0, 0));
        }
    }
    let rules = p.len();
    p[skip_terminals].off = jump(skip_terminals, rules)?;
    for (device, access) in allowed {
        // Not this device: the next block, five instructions on.
        p.push(insn(JNE_K, KIND, 0, 4, device.kind as i32));
        p.push(insn(JNE_K, MAJOR, 0, 3, device.major as i32));
        p.push(insn(JNE_K, MINOR, 0, 2, device.minor as i32));
        p.push(insn(AND64_K, ASKED, 0, 0, !(*access as i32)));
        to_verdict.push(p.len());
        p.push(insn(JA, 0, 0, 0, 0));
    }
    // An unlisted device keeps every access it asked: refused.
    let verdict = p.len();
    p.push(insn(MOV64_K, 0, 0, 0, 0));
    p.push(insn(JNE_K, ASKED, 0, 1, 0));
    let allow = p.len();
    p.push(insn(MOV64_K, 0, 0, 0, 1));
    p.push(insn(EXIT, 0, 0, 0, 0));
    for at in to_allow {
        p[at].off = jump(at, allow)?;
    }
    for at in to_verdict {
        p[at].off = jump(at, verdict)?;
    }
    Ok(p)
}

/// The offset of a jump at `from` to `to`.
fn jump(from: usize, to: usize) -> Result<i16, String> {
    i16::try_from(to as i64 - from as i64 - 1).map_err(|_| "a device program's jump is out of range".to_string())
}

const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_PROG_ATTACH: libc::c_long = 8;
const BPF_PROG_DETACH: libc::c_long = 9;
const BPF_PROG_GET_FD_BY_ID: libc::c_long = 13;
const BPF_PROG_QUERY: libc::c_long = 16;
const BPF_PROG_TYPE_CGROUP_DEVICE: u32 = 15;
const BPF_CGROUP_DEVICE: u32 = 6;
const BPF_F_ALLOW_MULTI: u32 = 2;

/// `union bpf_attr`, as the commands here lay it out: 32-bit words and
/// 64-bit pointers at their offsets, the rest zero.
#[repr(C, align(8))]
#[derive(Default)]
struct Attr([u32; 32]);

impl Attr {
    fn set(&mut self, offset: usize, value: u32) {
        if let Some(w) = self.0.get_mut(offset / 4) {
            *w = value;
        }
    }
    fn set_pointer(&mut self, offset: usize, p: u64) {
        self.set(offset, p as u32);
        self.set(offset + 4, (p >> 32) as u32);
    }
    fn get(&self, offset: usize) -> u32 {
        self.0.get(offset / 4).copied().unwrap_or(0)
    }
}

fn bpf(cmd: libc::c_long, attr: &mut Attr) -> io::Result<libc::c_long> {
    // SAFETY: `attr` is a valid, zero-filled `union bpf_attr` prefix of
    // its size, alive across the call; the pointers it holds point to
    // buffers the caller keeps alive across it.
    let rc = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr as *mut Attr, std::mem::size_of::<Attr>()) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

fn owned(raw: libc::c_long) -> OwnedFd {
    // SAFETY: `bpf` just returned this descriptor to us.
    unsafe { OwnedFd::from_raw_fd(raw as libc::c_int) }
}

/// Loads `insns`; if the kernel refuses them, loads them again with the
/// verifier's log (whose end is in the error): a log that overflows its
/// buffer fails the load (`ENOSPC`), so none is asked for the first time.
fn load(insns: &[Insn]) -> io::Result<OwnedFd> {
    load_logged(insns, &mut []).map_err(|e| {
        let mut log = vec![0u8; 1 << 20];
        let _ = load_logged(insns, &mut log);
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        let text = String::from_utf8_lossy(log.get(end.saturating_sub(600)..end).unwrap_or_default()).into_owned();
        io::Error::new(e.kind(), format!("loading a device program: {e}; verifier: {}", text.trim()))
    })
}

fn load_logged(insns: &[Insn], log: &mut [u8]) -> io::Result<OwnedFd> {
    let license = c"GPL";
    let mut attr = Attr::default();
    attr.set(0, BPF_PROG_TYPE_CGROUP_DEVICE);
    attr.set(4, insns.len() as u32);
    attr.set_pointer(8, insns.as_ptr() as u64);
    attr.set_pointer(16, license.as_ptr() as u64);
    if !log.is_empty() {
        attr.set(24, 1);
        attr.set(28, log.len() as u32);
        attr.set_pointer(32, log.as_mut_ptr() as u64);
    }
    bpf(BPF_PROG_LOAD, &mut attr).map(owned)
}

/// The ids of the device programs attached to `cgroup` itself.
fn attached(cgroup: &OwnedFd) -> io::Result<Vec<u32>> {
    let mut ids = vec![0u32; 64];
    let mut attr = Attr::default();
    attr.set(0, cgroup.as_raw_fd() as u32);
    attr.set(4, BPF_CGROUP_DEVICE);
    attr.set_pointer(16, ids.as_mut_ptr() as u64);
    attr.set(24, ids.len() as u32);
    bpf(BPF_PROG_QUERY, &mut attr)?;
    ids.truncate(attr.get(24) as usize);
    Ok(ids)
}

/// Attaches `insns` (if any) to the cgroup `dir`, then detaches the
/// device programs attached there before (an earlier policy's).
pub fn install(dir: &Path, insns: Option<&[Insn]>) -> io::Result<()> {
    let cgroup: OwnedFd = std::fs::File::open(dir)?.into();
    let before = attached(&cgroup)?;
    if let Some(insns) = insns {
        let prog = load(insns)?;
        let mut attr = Attr::default();
        attr.set(0, cgroup.as_raw_fd() as u32);
        attr.set(4, prog.as_raw_fd() as u32);
        attr.set(8, BPF_CGROUP_DEVICE);
        attr.set(12, BPF_F_ALLOW_MULTI);
        bpf(BPF_PROG_ATTACH, &mut attr)?;
    }
    for id in before {
        let mut by_id = Attr::default();
        by_id.set(0, id);
        let old = owned(bpf(BPF_PROG_GET_FD_BY_ID, &mut by_id)?);
        let mut detach = Attr::default();
        detach.set(0, cgroup.as_raw_fd() as u32);
        detach.set(4, old.as_raw_fd() as u32);
        detach.set(8, BPF_CGROUP_DEVICE);
        bpf(BPF_PROG_DETACH, &mut detach)?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    const ACCESS_MKNOD: u32 = 1;

    /// Runs `p` as the kernel would on one context: the few instructions
    /// [`program`] emits, interpreted. It checks the jumps; the context's
    /// layout is the kernel's to check (`kernel_tests`: a program that
    /// read the type and the accesses swapped passed here).
    fn run(p: &[Insn], ctx: [u32; 3]) -> u64 {
        let mut r = [0u64; 11];
        let mut pc = 0usize;
        for _ in 0..100_000 {
            let i = p[pc];
            let (dst, src) = ((i.regs & 0xf) as usize, (i.regs >> 4) as usize);
            let imm = i.imm as i64 as u64;
            let target = (pc as i64 + 1 + i.off as i64) as usize;
            pc += 1;
            match i.code {
                LDX_W => r[dst] = ctx[i.off as usize / 4] as u64,
                MOV64_K => r[dst] = imm,
                MOV64_X => r[dst] = r[src],
                AND64_K => r[dst] &= imm,
                RSH64_K => r[dst] >>= imm,
                JA => pc = target,
                JEQ_K if r[dst] == imm => pc = target,
                JNE_K if r[dst] != imm => pc = target,
                JLT_K if r[dst] < imm => pc = target,
                JGT_K if r[dst] > imm => pc = target,
                JEQ_K | JNE_K | JLT_K | JGT_K => {}
                EXIT => return r[0],
                c => panic!("unexpected opcode {c:#x}"),
            }
        }
        panic!("no exit");
    }

    fn ask(kind: u32, access: u32, major: u32, minor: u32) -> [u32; 3] {
        [access << 16 | kind, major, minor]
    }

    #[test]
    fn a_listed_device_gets_its_accesses_and_nothing_else_is_opened() {
        let null = Device { kind: DEV_CHAR, major: 1, minor: 3 };
        let kmsg = Device { kind: DEV_CHAR, major: 1, minor: 11 };
        let loop0 = Device { kind: DEV_BLOCK, major: 7, minor: 0 };
        let p = program(&[(null, ACCESS_READ | ACCESS_WRITE), (kmsg, ACCESS_WRITE), (loop0, 0)]).unwrap();
        let rw = ACCESS_READ | ACCESS_WRITE;
        assert_eq!(run(&p, ask(DEV_CHAR, rw, 1, 3)), 1);
        assert_eq!(run(&p, ask(DEV_CHAR, ACCESS_WRITE, 1, 11)), 1);
        assert_eq!(run(&p, ask(DEV_CHAR, ACCESS_READ, 1, 11)), 0);
        assert_eq!(run(&p, ask(DEV_CHAR, rw, 1, 11)), 0);
        assert_eq!(run(&p, ask(DEV_BLOCK, ACCESS_READ, 7, 0)), 0);
        // The same numbers of the other type, an unlisted device: refused.
        assert_eq!(run(&p, ask(DEV_BLOCK, ACCESS_READ, 1, 3)), 0);
        assert_eq!(run(&p, ask(DEV_CHAR, ACCESS_READ, 7, 1)), 0);
        // mknod alone, and terminals, whatever is listed.
        assert_eq!(run(&p, ask(DEV_CHAR, ACCESS_MKNOD, 7, 1)), 1);
        assert_eq!(run(&p, ask(DEV_CHAR, rw, 136, 4)), 1);
        assert_eq!(run(&p, ask(DEV_CHAR, rw, 143, 0)), 1);
        assert_eq!(run(&p, ask(DEV_CHAR, rw, 5, 0)), 1);
        assert_eq!(run(&p, ask(DEV_CHAR, rw, 144, 0)), 0);
        assert_eq!(run(&p, ask(DEV_BLOCK, rw, 136, 0)), 0);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod kernel_tests {
    use super::*;

    /// Whether a child moved into the cgroup `cg` may open `path` with
    /// `flags`. The child only makes system calls (no allocation after a
    /// fork of a threaded process).
    fn child_opens(cg: &Path, path: &str, flags: i32) -> bool {
        let path = std::ffi::CString::new(path).unwrap();
        let procs = std::fs::OpenOptions::new().write(true).open(cg.join("cgroup.procs")).unwrap();
        // SAFETY: the child writes its pid, opens and exits, with buffers
        // made before the fork.
        match unsafe { libc::fork() } {
            0 => unsafe {
                let mut digits = [0u8; 12];
                let (mut pid, mut at) = (libc::getpid() as u32, digits.len());
                while pid > 0 || at == digits.len() {
                    at -= 1;
                    digits[at] = b'0' + (pid % 10) as u8;
                    pid /= 10;
                }
                let moved = libc::write(procs.as_raw_fd(), digits[at..].as_ptr().cast(), digits.len() - at) > 0;
                let opened = moved && libc::open(path.as_ptr(), flags) >= 0;
                libc::_exit(if opened { 0 } else { 1 })
            },
            pid => {
                let mut status = 0;
                // SAFETY: waits for the child just forked.
                unsafe { libc::waitpid(pid, &mut status, 0) };
                libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
            }
        }
    }

    #[test]
    #[ignore = "needs root and a cgroup v2 hierarchy"]
    fn the_kernel_runs_the_program_as_written() {
        let table = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let hierarchy = crate::mountinfo::cgroup2_mounts(&table).into_iter().next().unwrap();
        let cg = hierarchy.join(format!("rampart-device-test-{}", std::process::id()));
        std::fs::create_dir(&cg).unwrap();
        let null = Device { kind: DEV_CHAR, major: 1, minor: 3 };
        let zero = Device { kind: DEV_CHAR, major: 1, minor: 5 };
        install(&cg, Some(&program(&[(null, ACCESS_READ | ACCESS_WRITE), (zero, ACCESS_READ)]).unwrap())).unwrap();
        let results = [
            child_opens(&cg, "/dev/null", libc::O_RDONLY),
            child_opens(&cg, "/dev/null", libc::O_WRONLY),
            child_opens(&cg, "/dev/zero", libc::O_RDONLY),
            child_opens(&cg, "/dev/zero", libc::O_WRONLY),
            child_opens(&cg, "/dev/full", libc::O_RDONLY),
        ];
        let _ = std::fs::remove_dir(&cg);
        assert_eq!(results, [true, true, true, false, false]);
    }
}
