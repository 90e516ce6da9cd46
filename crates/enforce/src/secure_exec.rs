//! Secure-execution mode (AT_SECURE) for an exec that changes domain.
//!
//! Why: the kernel runs the new image of a domain transition with
//! AT_SECURE set in its auxiliary vector unless the policy grants
//! `process noatsecure` from the old domain to the new one (SELinux's
//! `selinux_bprm_creds_for_exec`; AppArmor for `Px`, `Cx` and `Ux`). The
//! dynamic loader then ignores `LD_PRELOAD`, `LD_LIBRARY_PATH` and the
//! like, and libc's `secure_getenv` hides the environment: otherwise the
//! old domain's code, named in its environment, runs in the new domain
//! (`an_exec_transition_runs_in_secure_execution_mode`). This kernel does
//! not know the daemon's domains, so the daemon sets it: the new image
//! is held frozen before its first instruction (crate::cgroups), and the
//! daemon writes 1 into the value of its `AT_SECURE` entry, on its stack,
//! through `/proc/PID/mem`.
//!
//! Where: the initial stack starts (`startstack` in `/proc/PID/stat`)
//! with `argc`, the `argv` pointers and a null, the `envp` pointers and a
//! null, then the auxiliary vector. The entries found there must be the
//! ones `/proc/PID/auxv` reports, byte for byte, or nothing is written.
//! 64-bit images only: a 32-bit one fails that check, and the caller ends
//! the process.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;

/// `AT_SECURE` (include/uapi/linux/auxvec.h).
const AT_SECURE: u64 = 23;
/// An entry of the auxiliary vector: type and value, 64-bit words.
const ENTRY: usize = 16;
/// Most `argv` and `envp` pointers read (the kernel bounds both by the
/// stack limit; this bounds the daemon's work).
const MAX_POINTERS: u64 = 1 << 22;

/// Sets AT_SECURE in the auxiliary vector of `pid`, which must not run
/// until this returns (see the module docs).
pub fn set_at_secure(pid: u32) -> io::Result<()> {
    let auxv = fs::read(format!("/proc/{pid}/auxv"))?;
    let index = secure_entry(&auxv)?;
    let start = start_stack(&fs::read_to_string(format!("/proc/{pid}/stat"))?)?;
    let mem = OpenOptions::new().read(true).write(true).open(format!("/proc/{pid}/mem"))?;
    let at = auxv_address(&mem, start)?;
    let mut here = vec![0u8; auxv.len()];
    mem.read_exact_at(&mut here, at)?;
    if here != auxv {
        return Err(invalid("the stack does not hold the auxiliary vector where a 64-bit image has it"));
    }
    let value_at = at + (index * ENTRY + 8) as u64;
    mem.write_all_at(&1u64.to_ne_bytes(), value_at)?;
    let mut check = [0u8; 8];
    mem.read_exact_at(&mut check, value_at)?;
    if u64::from_ne_bytes(check) != 1 {
        return Err(invalid("AT_SECURE did not take the value written"));
    }
    Ok(())
}

/// The index of the `AT_SECURE` entry in `auxv` (as `/proc/PID/auxv`
/// gives it).
fn secure_entry(auxv: &[u8]) -> io::Result<usize> {
    auxv.chunks_exact(ENTRY)
        .position(|e| e.get(..8).and_then(|t| t.try_into().ok()).map(u64::from_ne_bytes) == Some(AT_SECURE))
        .ok_or_else(|| invalid("no AT_SECURE entry in the auxiliary vector"))
}

/// `startstack` of a `/proc/PID/stat` line: field 28, counted after the
/// command name, which may hold spaces and parentheses.
fn start_stack(stat: &str) -> io::Result<u64> {
    let after_comm = stat.rsplit_once(')').map(|(_, rest)| rest).ok_or_else(|| invalid("no command name in stat"))?;
    // Fields 3 onwards; startstack is the 26th of them.
    let field = after_comm.split_whitespace().nth(25).ok_or_else(|| invalid("stat has no startstack field"))?;
    match field.parse::<u64>() {
        Ok(0) | Err(_) => Err(invalid("stat gives no start of stack")),
        Ok(v) => Ok(v),
    }
}

/// Where the auxiliary vector starts: after `argc`, the `argv` pointers
/// and their null, and the `envp` pointers and theirs.
fn auxv_address(mem: &File, start: u64) -> io::Result<u64> {
    let word = |at: u64| -> io::Result<u64> {
        let mut b = [0u8; 8];
        mem.read_exact_at(&mut b, at)?;
        Ok(u64::from_ne_bytes(b))
    };
    let argc = word(start)?;
    if argc >= MAX_POINTERS {
        return Err(invalid("argc is out of range"));
    }
    let argv_end = start + 8 + argc * 8;
    if word(argv_end)? != 0 {
        return Err(invalid("argv is not null-terminated where argc says"));
    }
    let mut at = argv_end + 8;
    for _ in 0..MAX_POINTERS {
        let p = word(at)?;
        at += 8;
        if p == 0 {
            return Ok(at);
        }
    }
    Err(invalid("envp has no end"))
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_stack_is_field_28_whatever_the_command_name() {
        let fields: Vec<String> =
            (3..=52).map(|i| if i == 28 { "140737488346112".into() } else { i.to_string() }).collect();
        let stat = format!("1234 (a (b) c) {}", fields.join(" "));
        assert_eq!(start_stack(&stat).unwrap(), 140737488346112);
        assert!(start_stack("1234 (x) S 1 2").is_err());
        assert!(start_stack("no name").is_err());
    }

    #[test]
    fn the_secure_entry_is_found_by_its_type() {
        let entry = |t: u64, v: u64| [t.to_ne_bytes(), v.to_ne_bytes()].concat();
        let auxv = [entry(6, 4096), entry(AT_SECURE, 0), entry(0, 0)].concat();
        assert_eq!(secure_entry(&auxv).unwrap(), 1);
        assert!(secure_entry(&entry(0, 0)).is_err());
    }

    /// This very process's stack, read as the daemon reads a new image's:
    /// the auxiliary vector is found where `/proc/self/auxv` says (the
    /// write itself is checked end to end by the adversarial test).
    #[test]
    fn the_auxiliary_vector_of_a_running_process_is_found() {
        let auxv = fs::read("/proc/self/auxv").unwrap();
        let start = start_stack(&fs::read_to_string("/proc/self/stat").unwrap()).unwrap();
        let mem = File::open("/proc/self/mem").unwrap();
        let at = auxv_address(&mem, start).unwrap();
        let mut here = vec![0u8; auxv.len()];
        mem.read_exact_at(&mut here, at).unwrap();
        assert_eq!(here, auxv);
    }
}
