//! Who may enter a confined domain, and with what.
//!
//! rampartd decides opens and execs. What fanotify cannot see (signals,
//! ptrace, xattr writes, moves between directories, mounts, namespaces,
//! capabilities, descriptors already open) is held by the launcher's
//! sandbox (crate::sandbox), which `rampart run` sets on itself before
//! its exec and every descendant inherits across fork and exec. No
//! process can set it on another, so the daemon keeps one invariant
//! instead: **every process in a confined domain carries a launcher's
//! sandbox** (it is in the daemon's cgroup tree, crate::cgroups, because a
//! launcher or a confined ancestor put it there), and that sandbox is no
//! looser than its domain needs.
//!
//! * From outside the tree (the default domain) a domain is entered only
//!   through `rampart run` (an exec context asked on the control socket).
//!   An exec transition the policy allows from there is refused: SELinux
//!   would allow it, but rampartd could not confine the process it makes.
//! * Inside the tree an exec transition keeps the sandbox (the Landlock
//!   ruleset, seccomp filter, capability bounding set and no_new_privs
//!   survive exec), so it is allowed unless the process would hold
//!   capabilities the new domain lacks (the daemon cannot drop them),
//!   runs with personality flags a domain change clears (they shape the
//!   image as the exec loads it), or holds descriptors the new domain may
//!   not use (SELinux's `flush_unauthorized_files` replaces them; the
//!   daemon cannot, so the exec is refused, each descriptor's denial
//!   audited).
//!
//! * A traced process changes domain only if its tracer may `ptrace` the
//!   new domain (SELinux's exec hook checks it, audited), and only if the
//!   daemon need not reset its signal state, which it does with ptrace of
//!   its own (crate::signal_state): a process has one tracer.
//!
//! A refusal is not enforced while the daemon or the new domain is
//! permissive (logged only), as SELinux's denials are not.

use std::fs::{File, Metadata};
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::MetadataExt;

use rampart_avc::{AuditInfo, Sid};

use rampart_avc::Avc;

use crate::access::{Classes, CAPABILITY2_PERMS, CAPABILITY_PERMS};
use crate::objects::ObjectSids;
use crate::pidfd;

/// What the checks read: the decisions, the classes and permissions they
/// ask for, and the objects' labels (the enforcer's, lent).
pub struct Checks<'a> {
    pub avc: &'a Avc,
    pub classes: &'a Classes,
    pub objects: &'a ObjectSids,
    /// The domain of processes outside rampartd's domains.
    pub default_sid: Sid,
}

/// The exec being decided.
pub struct Exec<'a> {
    pub tid: u32,
    pub tgid: u32,
    pub file: &'a File,
    pub md: &'a Metadata,
    /// The process is in rampartd's cgroup tree (crate::enforcer::Subject).
    pub launched: bool,
}

/// Why `exec` into domain `new` must be refused, or `None` when it keeps
/// the invariant (module docs).
pub fn refusal(e: &Checks<'_>, exec: &Exec<'_>, new: Sid) -> Option<String> {
    let Exec { tgid, launched, .. } = *exec;
    let name = |sid: Sid| e.avc.context(sid).unwrap_or("?").to_owned();
    if !launched {
        if new == e.default_sid {
            return None;
        }
        return Some(format!(
            "entering {} from outside rampartd's domains needs `rampart run` (its sandbox holds what fanotify cannot see)",
            name(new)
        ));
    }
    held_beyond(exec, &name(new), capabilities_of(e, new), || unauthorized_descriptors(e, tgid, new))
}

/// Why a process entering `whom` (with the capabilities `allowed`) cannot
/// keep what it holds: the capabilities it would have after the exec
/// beyond `allowed`, or the descriptors `unusable` finds (computed only
/// if the capabilities pass).
fn held_beyond(exec: &Exec<'_>, whom: &str, allowed: u64, unusable: impl FnOnce() -> Vec<i32>) -> Option<String> {
    match personality(exec.tid) {
        Err(err) => return Some(format!("cannot read its personality: {err}")),
        Ok(flags) if flags & PER_CLEAR_ON_SETID != 0 => {
            return Some(format!(
                "it runs with personality flags a domain change clears ({}), and the daemon cannot clear them: run \
                 it without them (setarch without -R, -L, -Z or -X)",
                personality_names(flags & PER_CLEAR_ON_SETID).join(" ")
            ))
        }
        Ok(_) => {}
    }
    let held = match capabilities_after_exec(exec.tid, exec.file, exec.md) {
        Ok(caps) => caps,
        Err(err) => return Some(format!("cannot read its capabilities: {err}")),
    };
    let extra = held & !allowed;
    if extra != 0 {
        return Some(format!("it would hold capabilities {whom} does not have: {}", capability_names(extra).join(" ")));
    }
    let unusable = unusable();
    if !unusable.is_empty() {
        let list: Vec<String> = unusable.iter().map(i32::to_string).collect();
        return Some(format!("it holds descriptors {whom} may not use: {}", list.join(" ")));
    }
    None
}

/// The personality flags the kernel clears when an exec changes the
/// domain (`PER_CLEAR_ON_SETID`, which SELinux's and AppArmor's exec hooks
/// put in `bprm->per_clear`): each weakens the new image against the old
/// domain, which chose it (`setarch -R` runs it without address
/// randomization). They act while the exec loads the image, so the
/// daemon cannot clear them afterwards: an exec transition carrying them
/// is refused (`an_exec_transition_refuses_the_old_domains_personality`).
pub const PER_CLEAR_ON_SETID: u32 =
    (libc::ADDR_NO_RANDOMIZE | libc::ADDR_COMPAT_LAYOUT | libc::MMAP_PAGE_ZERO | libc::READ_IMPLIES_EXEC) as u32;

/// Thread `tid`'s personality (`/proc/TID/personality`, hexadecimal).
fn personality(tid: u32) -> io::Result<u32> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/personality"))?;
    u32::from_str_radix(text.trim(), 16).map_err(|_| {
        io::Error::new(io::ErrorKind::InvalidData, format!("/proc/{tid}/personality holds {:?}", text.trim()))
    })
}

/// The names of the flags of [`PER_CLEAR_ON_SETID`] in `flags`.
fn personality_names(flags: u32) -> Vec<&'static str> {
    [
        (libc::ADDR_NO_RANDOMIZE, "ADDR_NO_RANDOMIZE"),
        (libc::ADDR_COMPAT_LAYOUT, "ADDR_COMPAT_LAYOUT"),
        (libc::MMAP_PAGE_ZERO, "MMAP_PAGE_ZERO"),
        (libc::READ_IMPLIES_EXEC, "READ_IMPLIES_EXEC"),
    ]
    .into_iter()
    .filter(|(flag, _)| flags & *flag as u32 != 0)
    .map(|(_, name)| name)
    .collect()
}

/// The process tracing thread `tid` (`TracerPid` of its status), if any.
pub fn tracer(tid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    let pid: u32 = status.lines().find_map(|l| l.strip_prefix("TracerPid:"))?.trim().parse().ok()?;
    (pid != 0).then_some(pid)
}

/// Why an exec that moves a process (under a profile, so launched) to
/// the AppArmor profile `profile` must be refused: it would hold
/// capabilities beyond `profile_caps` (the new profile's), or
/// descriptors the new profile may not use (`unusable`: AppArmor's
/// `aa_inherit_files` replaces them; the daemon cannot). `None` for the
/// `unconfined` label (`profile` `None`).
pub fn apparmor_refusal(
    exec: &Exec<'_>,
    profile: Option<&str>,
    profile_caps: u64,
    unusable: impl FnOnce() -> Vec<i32>,
) -> Option<String> {
    let profile = profile?;
    held_beyond(exec, &format!("the AppArmor profile {profile}"), profile_caps, unusable)
}

/// The capabilities domain `sid` may use (bit `i`: capability `i`):
/// `capability` and `capability2` on itself, as the kernel's
/// `cred_has_capability` checks them; all of them while the daemon or
/// the domain is permissive (SELinux would only log).
pub fn capabilities_of(e: &Checks<'_>, sid: Sid) -> u64 {
    let mut caps = 0u64;
    for (class, names, first) in
        [(e.classes.capability, CAPABILITY_PERMS, 0), (e.classes.capability2, CAPABILITY2_PERMS, 32)]
    {
        for (i, name) in names.iter().enumerate() {
            let Some(perm) = e.avc.mapping().perms(class, &[name]) else { continue };
            // `passes`: allowed, or a denial not enforced (permissive).
            if e.avc.has_perm_noaudit(sid, sid, class, perm).passes() {
                caps |= 1 << (first + i);
            }
        }
    }
    caps
}

fn capability_names(caps: u64) -> Vec<&'static str> {
    let names = CAPABILITY_PERMS.iter().chain(std::iter::repeat(&"?").take(32 - CAPABILITY_PERMS.len()));
    names.chain(CAPABILITY2_PERMS).enumerate().filter(|(i, _)| caps & (1 << i) != 0).map(|(_, n)| *n).collect()
}

/// The most thread `tid` can hold once its exec of `file` completes, as
/// the kernel's `cap_bprm_creds_from_file` computes it: root (real or
/// effective, or a set-user-ID-root file) and files with capabilities may
/// get the bounding and inheritable sets, anyone else keeps the ambient
/// set (part of the inheritable one); under no_new_privs (set by the
/// launcher) nothing beyond the permitted set is gained and set-user-ID
/// bits are ignored.
fn capabilities_after_exec(tid: u32, file: &File, md: &Metadata) -> io::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status"))?;
    let line = |name: &str| -> io::Result<&str> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, format!("no {name} in /proc/{tid}/status")))
    };
    let invalid = |name: &str| io::Error::new(io::ErrorKind::InvalidData, format!("{name} in /proc/{tid}/status"));
    let caps = |name: &str| -> io::Result<u64> { u64::from_str_radix(line(name)?, 16).map_err(|_| invalid(name)) };
    let uids: Vec<u32> =
        line("Uid:")?.split_whitespace().map(str::parse).collect::<Result<_, _>>().map_err(|_| invalid("Uid:"))?;
    let nnp = line("NoNewPrivs:")? == "1";
    let (real, effective) = (uids.first().copied(), uids.get(1).copied());
    let setuid_root = !nnp && md.mode() & libc::S_ISUID != 0 && md.uid() == 0;
    let root = real == Some(0) || effective == Some(0) || setuid_root;
    let most = if root || has_file_capabilities(file) { caps("CapBnd:")? | caps("CapInh:")? } else { caps("CapAmb:")? };
    Ok(if nnp { most & caps("CapPrm:")? } else { most })
}

/// Whether `file` carries capabilities (`security.capability`); an
/// unreadable attribute counts as carrying them.
fn has_file_capabilities(file: &File) -> bool {
    let name = c"security.capability";
    // SAFETY: a size query (null buffer, size 0) of an attribute of an
    // open descriptor; the name is NUL-terminated.
    let n = unsafe { libc::fgetxattr(file.as_raw_fd(), name.as_ptr(), std::ptr::null_mut(), 0) };
    n >= 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ENODATA)
}

/// The descriptors of process `pid` that domain `sid` may not use, as
/// SELinux's `flush_unauthorized_files` finds them at a transition:
/// each open regular file or directory checked for what its open mode
/// uses (`read`, `write` or `append`), denials audited. The daemon
/// takes a copy of each (`pidfd_getfd`) to look at it. Pipes, sockets
/// and devices are not checked (docs/security.md).
pub fn unauthorized_descriptors(e: &Checks<'_>, pid: u32, sid: Sid) -> Vec<i32> {
    let mut revoke = Vec::new();
    for pidfd::HeldFile { n, file, md, flags } in pidfd::held_files(pid) {
        let Some(cp) = e.classes.of_mode(md.mode()) else { continue };
        let perms = cp.for_flags(flags as u64) & !cp.open;
        let tsid = e.objects.sid_of(e.avc, file.as_fd(), &md);
        let decision = e.avc.has_perm_noaudit(sid, tsid, cp.class, perms);
        if !decision.audited().is_empty() {
            let info = AuditInfo {
                pid: Some(pid),
                comm: pidfd::comm(pid),
                path: rampart_label::fd_link(file.as_fd()).map(|p| p.to_string_lossy().into_owned()),
                extra: Vec::new(),
            };
            e.avc.audit_decision(sid, tsid, cp.class, &decision, &info);
        }
        if !decision.passes() {
            revoke.push(n);
        }
    }
    revoke
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capability_names_follow_the_kernel_numbering() {
        // CAP_CHOWN is 0, CAP_KILL 5, CAP_SYS_ADMIN 21, CAP_MAC_OVERRIDE 32.
        assert_eq!(capability_names(1 | 1 << 5 | 1 << 21 | 1 << 32), ["chown", "kill", "sys_admin", "mac_override"]);
    }

    #[test]
    fn a_threads_personality_reads_back_as_the_kernel_keeps_it() {
        // personality(2) sets the calling thread's only.
        let (tid, flags) = std::thread::spawn(|| {
            // SAFETY: personality takes a flags word; 0xffffffff queries.
            let before = unsafe { libc::personality(0xffff_ffff) };
            // SAFETY: as above; this thread ends after the reads below.
            unsafe { libc::personality((before | libc::ADDR_NO_RANDOMIZE) as libc::c_ulong) };
            // SAFETY: gettid has no arguments.
            let tid = unsafe { libc::gettid() } as u32;
            (tid, personality(tid).unwrap())
        })
        .join()
        .unwrap();
        assert_eq!(personality_names(flags & PER_CLEAR_ON_SETID), ["ADDR_NO_RANDOMIZE"], "thread {tid}: {flags:#x}");
        // SAFETY: gettid has no arguments.
        let own = personality(unsafe { libc::gettid() } as u32).unwrap();
        assert_eq!(own & libc::ADDR_NO_RANDOMIZE as u32, 0, "another thread's flag is not this one's");
    }
}
