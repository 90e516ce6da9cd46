//! Feeds arbitrary registers, as a confined process chooses them, to the
//! decoder of the calls the launcher's filter hands to rampartd
//! (`supervised::decode`): a system call number (every x86-64 number,
//! and some beyond) and six arguments. Besides never panicking (built
//! with overflow checks: a `which` of `i32::MIN` once overflowed): the
//! arguments the kernel reads as 32-bit descriptors and ids are their
//! low halves, and the same registers decode to the same call.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart_enforce::testing::{decode, FileArg, Inspected, Op};

fuzz_target!(|data: &[u8]| {
    let Some((nr, rest)) = data.split_first_chunk::<2>() else { return };
    let nr = u32::from(u16::from_le_bytes(*nr) % 512);
    let mut args = [0u64; 6];
    for (arg, chunk) in args.iter_mut().zip(rest.chunks(8)) {
        let mut bytes = [0u8; 8];
        bytes[..chunk.len()].copy_from_slice(chunk);
        *arg = u64::from_le_bytes(bytes);
    }
    let op = decode(nr, args);
    assert_eq!(op, decode(nr, args), "decoding is a function of the registers");
    let low = |i: usize| args[i] as u32 as i32;
    match op {
        Some(Op::Mmap { fd, prot, flags }) => {
            assert_eq!((fd, prot, flags), (low(4), args[2] as u32, args[3] as u32));
        }
        Some(Op::Ids { pid, .. } | Op::SetPgid { pid }) => assert_eq!(pid, low(0)),
        // setrlimit: the caller's own, as prlimit64 of pid 0.
        Some(Op::Prlimit { pid, resource, new, old }) if nr == 160 => {
            assert_eq!((pid, resource, new, old), (0, args[0] as u32, args[1], 0));
        }
        Some(Op::Prlimit { pid, resource, new, old }) => {
            assert_eq!((pid, resource, new, old), (low(0), args[1] as u32, args[2], args[3]));
            assert!(pid != 0 || new != 0, "reading its own limits passes");
        }
        // capset: whatever its arguments.
        Some(Op::Capset) => assert_eq!(nr, 126),
        Some(Op::MemfdCreate { name, flags }) => assert_eq!((name, flags), (args[0], args[1] as u32)),
        Some(Op::Inspect { of: Inspected::Pair(a, b) }) => assert_eq!((a, b), (low(0), low(1))),
        Some(Op::Inspect { of: Inspected::Thread(t) | Inspected::Pidfd(t) }) => assert_eq!(t, low(0)),
        Some(Op::Setattr { target: FileArg::Fd(fd), .. }) => assert_eq!(fd, low(0)),
        Some(Op::Socket { family, ty, protocol }) => assert_eq!((family, ty, protocol), (low(0), low(1), low(2))),
        Some(Op::Bind { fd, addr, len } | Op::Connect { fd, addr, len }) => {
            assert_eq!((fd, addr, len), (low(0), args[1], low(2)));
        }
        // inotify_add_watch: the instance, the path in the caller, the
        // mask; a final link followed unless IN_DONT_FOLLOW.
        Some(Op::Watch { fd, target, mask }) => {
            assert_eq!((fd, mask), (low(0), args[2] as u32));
            let follow = mask & 0x0200_0000 == 0;
            assert_eq!(target, FileArg::Path { dirfd: libc::AT_FDCWD, path: args[1], follow, empty_ok: false });
        }
        // fcntl(F_SETFL) only where the flags lack O_APPEND.
        Some(Op::SetFlags { fd, flags }) => {
            assert_eq!((nr, args[1] as u32, fd, flags), (72, libc::F_SETFL as u32, low(0), args[2] as u32));
            assert_eq!(flags & libc::O_APPEND as u32, 0);
        }
        Some(Op::Ftruncate { fd, length }) => assert_eq!((nr, fd, length), (77, low(0), args[1] as i64)),
        Some(Op::Fallocate { fd, mode, offset, len }) => {
            assert_eq!((nr, fd, mode, offset, len), (285, low(0), low(1), args[2] as i64, args[3] as i64));
            assert!(mode & !1 != 0, "allocating alone passes");
        }
        _ => {}
    }
});
