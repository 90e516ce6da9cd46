//! AppArmor's audit records for file, signal, ptrace, socket and resource limit decisions, as the kernel writes
//! them (`aa_audit_msg` → `common_lsm_audit`: `audit_pre`, the common
//! `pid=`/`comm=`, then `file_audit_cb`), in auditd's line format:
//!
//! ```text
//! type=AVC msg=audit(1700000000.123:42): apparmor="DENIED" operation="open" profile="nscd" name="/etc/shadow" pid=1234 comm="nscd" requested_mask="r" denied_mask="r" fsuid=0 ouid=0
//! ```
//!
//! Why byte for byte: `aa-logprof` and `aa-notify` read these lines
//! (through libapparmor's `parse_record`), so records in this format turn
//! complain-mode runs into profile rules with the ecosystem's own tools.
//!
//! Names, comm and profile names are the kernel's untrusted strings
//! (`audit_log_untrustedstring`: quoted, or upper-case hex when they hold
//! a space, a quote or a byte outside printable ASCII). Recent kernels
//! also write `class="file"` after `operation`; libapparmor 3.0
//! (Debian 12's aa-logprof) rejects records with it, so it is left out.

use std::fmt::Write;

use rampart_avc::audit::format::write_untrusted_bytes;
use rampart_avc::audit::AuditStamp;

use crate::file::{Record, RecordKind};
use crate::perms::*;

/// One file decision to log: what the kernel has at `aa_audit_file`.
#[derive(Clone, Copy, Debug)]
pub struct FileAudit<'a> {
    /// `OP_OPEN` ("open"), "exec", "link", "mknod", "truncate", ...
    pub operation: &'a str,
    /// The profile's namespace, `None` for the root namespace.
    pub namespace: Option<&'a str>,
    /// The profile's hierarchical name.
    pub profile: &'a str,
    /// The path as the kernel built it.
    pub name: &'a [u8],
    /// The link target or the exec transition's target, if any.
    pub target: Option<&'a [u8]>,
    /// The thread group id.
    pub pid: u32,
    pub comm: &'a [u8],
    pub fsuid: u32,
    /// The file's owner.
    pub ouid: u32,
    pub record: &'a Record,
}

/// The kernel's `AA_AUDIT_FILE_MASK` (file.h): the bits that make
/// `file_audit_cb` write the masks and the uids.
const KERNEL_AUDIT_FILE_MASK: u32 = AA_AUDIT_FILE_MASK | AA_MAY_GETATTR | AA_MAY_SETATTR | AA_MAY_CHMOD | AA_MAY_CHOWN;

/// `PERMS_CHRS_MASK` (perms.h): the bits with a letter.
const PERMS_CHRS_MASK: u32 = MAY_READ
    | MAY_WRITE
    | AA_MAY_CREATE
    | AA_MAY_DELETE
    | AA_MAY_LINK
    | AA_MAY_LOCK
    | MAY_EXEC
    | AA_EXEC_MMAP
    | MAY_APPEND;

/// `aa_file_perm_chrs` (lib.c): the letter of bit `i`, space for none.
const FILE_PERM_CHRS: &[u8] = b"xwracd         km l     ";

/// `aa_audit_type`: the `apparmor=` value.
fn type_name(kind: RecordKind) -> &'static str {
    match kind {
        RecordKind::Audit => "AUDIT",
        RecordKind::Allowed => "ALLOWED",
        RecordKind::Denied => "DENIED",
        RecordKind::Kill => "KILLED",
    }
}

/// `map_mask_to_chr_mask` + `aa_perm_mask_to_str`: letters in bit order
/// (`wr` for read and write, as the kernel writes them).
fn mask_letters(mask: u32) -> String {
    let mut m = mask & PERMS_CHRS_MASK;
    if mask & AA_MAY_GETATTR != 0 {
        m |= MAY_READ;
    }
    if mask & (AA_MAY_SETATTR | AA_MAY_CHMOD | AA_MAY_CHOWN) != 0 {
        m |= MAY_WRITE;
    }
    FILE_PERM_CHRS.iter().enumerate().filter(|&(i, _)| m & (1 << i) != 0).map(|(_, &c)| char::from(c)).collect()
}

/// `audit_pre`: `apparmor="DENIED" operation="open"`, the `info=` of a
/// match that failed with its error (`-EACCES` for a denial, complain
/// mode too), then the profile (and its namespace outside the root).
fn write_pre(out: &mut String, r: &Record, operation: &str, namespace: Option<&str>, profile: &str) {
    let _ = write!(out, "apparmor=\"{}\" operation=\"{operation}\"", type_name(r.kind));
    if let Some(info) = r.info {
        let _ = write!(out, " info=\"{info}\"");
        if r.kind != RecordKind::Audit {
            let _ = write!(out, " error=-{EACCES}");
        }
    }
    if let Some(ns) = namespace {
        out.push_str(" namespace=");
        write_untrusted_bytes(out, ns.as_bytes());
    }
    out.push_str(" profile=");
    write_untrusted_bytes(out, profile.as_bytes());
}

/// The message (`apparmor="..." ... ouid=N`), without prefix or newline.
pub fn file_message(a: &FileAudit<'_>) -> String {
    let r = a.record;
    let mut out = String::with_capacity(256);
    // Writing to a String cannot fail.
    write_pre(&mut out, r, a.operation, a.namespace, a.profile);
    out.push_str(" name=");
    write_untrusted_bytes(&mut out, a.name);
    let _ = write!(out, " pid={} comm=", a.pid);
    write_untrusted_bytes(&mut out, a.comm);
    if r.request & KERNEL_AUDIT_FILE_MASK != 0 {
        let _ = write!(out, " requested_mask=\"{}\"", mask_letters(r.request));
    }
    if r.denied & KERNEL_AUDIT_FILE_MASK != 0 {
        let _ = write!(out, " denied_mask=\"{}\"", mask_letters(r.denied));
    }
    if r.request & KERNEL_AUDIT_FILE_MASK != 0 {
        let _ = write!(out, " fsuid={} ouid={}", a.fsuid, a.ouid);
    }
    if let Some(t) = a.target {
        out.push_str(" target=");
        write_untrusted_bytes(&mut out, t);
    }
    out
}

/// What a decision between two labels was about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerOperation {
    /// A signal (its Linux number): ipc.c's `audit_signal_cb`.
    Signal(i32),
    /// A ptrace access check: `audit_ptrace_cb`.
    Ptrace,
}

/// One decision between two labels to log: the profile checked, the
/// task that asks, the other end's label.
#[derive(Clone, Copy, Debug)]
pub struct PeerAudit<'a> {
    pub operation: PeerOperation,
    /// The profile's namespace, `None` for the root namespace.
    pub namespace: Option<&'a str>,
    pub profile: &'a str,
    /// The asking task's thread group id and command.
    pub pid: u32,
    pub comm: &'a [u8],
    /// The other end's label, as the kernel prints it.
    pub peer: &'a str,
    pub record: &'a Record,
}

/// The message of a signal or ptrace record:
/// `apparmor="DENIED" operation="signal" profile="p" pid=N comm="c"
/// requested_mask="send" denied_mask="send" signal=term peer="q"`, or
/// `operation="ptrace"` with `requested_mask="read"` and no `signal=`.
pub fn peer_message(a: &PeerAudit<'_>) -> String {
    let r = a.record;
    let (operation, masks, word): (_, _, fn(u32) -> &'static str) = match a.operation {
        PeerOperation::Signal(_) => {
            ("signal", crate::ipc::AA_MAY_SEND | crate::ipc::AA_MAY_RECEIVE, crate::ipc::mask_word)
        }
        PeerOperation::Ptrace => ("ptrace", crate::ipc::PTRACE_PERM_MASK, crate::ipc::ptrace_mask_word),
    };
    let mut out = String::with_capacity(192);
    write_pre(&mut out, r, operation, a.namespace, a.profile);
    let _ = write!(out, " pid={} comm=", a.pid);
    write_untrusted_bytes(&mut out, a.comm);
    if r.request & masks != 0 {
        let _ = write!(out, " requested_mask=\"{}\"", word(r.request));
        if r.denied & masks != 0 {
            let _ = write!(out, " denied_mask=\"{}\"", word(r.denied));
        }
    }
    if let PeerOperation::Signal(sig) = a.operation {
        let _ = write!(out, " signal={}", crate::ipc::signal_name(sig));
    }
    out.push_str(" peer=");
    write_untrusted_bytes(&mut out, a.peer.as_bytes());
    out
}

/// One `setrlimit` decision to log: the profile whose `set rlimit` rule
/// bounds the resource, the task that asks.
#[derive(Clone, Copy, Debug)]
pub struct RlimitAudit<'a> {
    /// The profile's namespace, `None` for the root namespace.
    pub namespace: Option<&'a str>,
    pub profile: &'a str,
    /// The asking task's thread group id and command.
    pub pid: u32,
    pub comm: &'a [u8],
    /// Denied, or let through by complain mode.
    pub kind: RecordKind,
    /// `cap_sys_resource`: the limits of another label's process, set
    /// without that capability.
    pub info: Option<&'static str>,
}

/// The message of a resource record (`audit_pre` and the common fields):
/// `apparmor="DENIED" operation="setrlimit" profile="p" pid=N comm="c"`.
/// The kernel then writes ` rlimit=nofile value=100` (resource.c's
/// `audit_cb`), which libapparmor 3.0 (Debian 12's aa-logprof) rejects,
/// taking the whole record for invalid: left out, as `class=` is
/// (the daemon's own log line names them).
pub fn rlimit_message(a: &RlimitAudit<'_>) -> String {
    let record = Record { kind: a.kind, request: 0, denied: 0, info: a.info };
    let mut out = String::with_capacity(128);
    write_pre(&mut out, &record, "setrlimit", a.namespace, a.profile);
    let _ = write!(out, " pid={} comm=", a.pid);
    write_untrusted_bytes(&mut out, a.comm);
    out
}

/// One socket decision to log: the profile checked, the task that asks,
/// the socket as the security hook saw it.
#[derive(Clone, Copy, Debug)]
pub struct NetAudit<'a> {
    /// `OP_CREATE` ("create").
    pub operation: &'a str,
    /// The profile's namespace, `None` for the root namespace.
    pub namespace: Option<&'a str>,
    pub profile: &'a str,
    /// The asking task's thread group id and command.
    pub pid: u32,
    pub comm: &'a [u8],
    pub family: i32,
    pub ty: i32,
    pub protocol: i32,
    pub record: &'a Record,
}

/// The message of a socket record (`audit_pre`, the common fields, then
/// net.c's `audit_net_cb`): `apparmor="DENIED" operation="create"
/// info="failed type match" error=-13 profile="p" pid=N comm="c"
/// family="inet" sock_type="dgram" protocol=0 requested_mask="create"
/// denied_mask="create"`. The kernel adds ` addr=none` to a Unix
/// socket's record; libapparmor 3.0 (Debian 12's aa-logprof) rejects a
/// record with it, so it is left out, as `class=` is.
pub fn net_message(a: &NetAudit<'_>) -> String {
    use crate::net::{family_name, mask_words, type_name as sock_type_name, NET_PERMS_MASK};
    let r = a.record;
    let mut out = String::with_capacity(224);
    write_pre(&mut out, r, a.operation, a.namespace, a.profile);
    let _ = write!(out, " pid={} comm=", a.pid);
    write_untrusted_bytes(&mut out, a.comm);
    let _ = match family_name(a.family) {
        Some(n) => write!(out, " family=\"{n}\""),
        None => write!(out, " family=\"unknown({})\"", a.family),
    };
    let _ = match sock_type_name(a.ty) {
        Some(n) => write!(out, " sock_type=\"{n}\""),
        None => write!(out, " sock_type=\"unknown({})\"", a.ty),
    };
    let _ = write!(out, " protocol={}", a.protocol);
    if r.request & NET_PERMS_MASK != 0 {
        let _ = write!(out, " requested_mask=\"{}\"", mask_words(r.request));
        if r.denied & NET_PERMS_MASK != 0 {
            let _ = write!(out, " denied_mask=\"{}\"", mask_words(r.denied));
        }
    }
    out
}

/// `EACCES`, the error of every file denial (Linux's number).
const EACCES: i32 = 13;

/// The line auditd writes: `type=AVC msg=audit(STAMP): MESSAGE`.
pub fn file_line(a: &FileAudit<'_>, stamp: &AuditStamp) -> String {
    format!("type=AVC msg=audit({stamp}): {}", file_message(a))
}
