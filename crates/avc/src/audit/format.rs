//! The kernel's AVC audit message, byte for byte.
//!
//! Why exact: `audit2allow`, `audit2why`, `ausearch`, setroubleshoot and
//! countless log scrapers parse these lines with fixed rules (split on
//! spaces, perms between a lone `{` and `}`, `key=value` fields, quoted
//! strings unquoted by stripping the first and last byte). Matching the
//! kernel exactly lets all of them read Rampart's denials.
//!
//! The message, as the kernel builds it (`security/selinux/avc.c`
//! `avc_audit_pre_callback`/`avc_audit_post_callback` around
//! `security/lsm_audit.c` `dump_common_audit_data`):
//!
//! ```text
//! avc:  denied  { read write } for  pid=1234 comm="cat" path="/etc/shadow" dev="tmpfs" ino=42 scontext=... tcontext=... tclass=file permissive=0
//! ```
//!
//! * `"avc:  %s "` with `denied` or `granted` (two spaces after `avc:`),
//!   then `" {"`, `" %s"` per permission, `" } for "`: hence the double
//!   spaces around the verdict and after `for`. No permission at all is
//!   written `" null"` and the kernel then skips `" } for "` too;
//! * the caller's data, each field with a leading space: `pid=`, `comm=`,
//!   then the object (`path=`, `dev=`, `ino=`, ... here [`AuditInfo::path`]
//!   and [`AuditInfo::extra`] in order);
//! * `" scontext=%s tcontext=%s tclass=%s"`, then `" permissive=%u"` for
//!   denials only (1 when the denial was not enforced). Grants carry no
//!   `permissive` field.
//!
//! Strings that came from outside (comm, path, dev, name) go through the
//! kernel's `audit_log_untrustedstring`: wrapped in double quotes, unless
//! a byte is a double quote, below 0x21 (space and control characters) or
//! above 0x7e (DEL and every non-ASCII byte), in which case the whole
//! string is written as upper-case hex of its bytes, unquoted
//! (`comm="my app"` becomes `comm=6D7920617070`).
//!
//! Rampart's extension: when the module that denied (or asked for the
//! grant to be audited) is not SELinux, ` module=NAME` is appended at the
//! very end. `audit2allow` and `audit2why` ignore fields they do not know
//! (checked by `tests/audit.rs` against the real tools), so the field is
//! kept in every variant, the auditd one included.
//!
//! Fields the kernel writes unquoted: [`AuditInfo::extra`] values that are
//! decimal or `0x` hexadecimal numbers (`ino=42`, `capability=21`), IP
//! addresses (`laddr=10.0.0.1`) and the hex `ioctlcmd`, are written as
//! they are; every other value is an untrusted string. Contexts, class,
//! permission and module names are written as they are when they hold only
//! bytes 0x21..=0x7e other than `"` (as every real one does), else as hex,
//! so no value can forge another field.
//!
//! [`AuditInfo::path`]: super::AuditInfo::path
//! [`AuditInfo::extra`]: super::AuditInfo::extra

use std::fmt::{self, Write as _};
use std::net::IpAddr;
use std::time::{SystemTime, UNIX_EPOCH};

use super::AuditEvent;
use crate::selinux::SELINUX_MODULE;

/// The prefix a text sink writes before the AVC message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LineFormat {
    /// The message alone: `avc:  denied  { read } for  ...`.
    #[default]
    Kernel,
    /// As the kernel prints it to dmesg/syslog when no audit daemon runs:
    /// `audit: type=1400 audit(1700000000.123:42): avc:  denied  ...`
    /// (1400 is `AUDIT_AVC`).
    Dmesg,
    /// As auditd writes `/var/log/audit/audit.log`, the format
    /// `audit2allow -i` and `ausearch` read:
    /// `type=AVC msg=audit(1700000000.123:42): avc:  denied  ...`.
    Auditd,
}

/// The audit record identity: time (seconds and milliseconds since the
/// epoch) and serial number, written `SECONDS.MILLIS:SERIAL` inside
/// `audit(...)`. Records with the same stamp belong to one event, so every
/// audited check gets its own serial.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AuditStamp {
    pub secs: u64,
    /// 0..=999.
    pub millis: u32,
    pub serial: u64,
}

impl AuditStamp {
    /// The current time with `serial`.
    pub fn now(serial: u64) -> AuditStamp {
        AuditStamp::at(SystemTime::now(), serial)
    }

    /// `time` (truncated to milliseconds, as the kernel does) with
    /// `serial`; a time before the epoch counts as the epoch.
    pub fn at(time: SystemTime, serial: u64) -> AuditStamp {
        let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
        AuditStamp { secs: since.as_secs(), millis: since.subsec_millis(), serial }
    }

    /// Seconds since the epoch with millisecond precision (for JSON).
    pub fn seconds_f64(&self) -> f64 {
        // Parsing the decimal text gives the f64 nearest to exactly
        // SECS.MILLIS, which adding two inexact floats may not.
        format!("{}.{:03}", self.secs, self.millis).parse().unwrap_or(self.secs as f64)
    }
}

/// `SECONDS.MILLIS:SERIAL`, as inside `audit(...)`.
impl fmt::Display for AuditStamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:03}:{}", self.secs, self.millis, self.serial)
    }
}

/// The AVC message of `event` (no prefix, no newline).
pub fn avc_line(event: &AuditEvent<'_>) -> String {
    let mut out = String::with_capacity(256);
    write_avc(&mut out, event);
    out
}

/// The line for `event` in `format`, stamped `stamp` (no newline).
pub fn format_line(format: LineFormat, event: &AuditEvent<'_>, stamp: &AuditStamp) -> String {
    let mut out = String::with_capacity(300);
    write_line(&mut out, format, event, stamp);
    out
}

/// Appends the line for `event` in `format` to `out` (no newline).
pub fn write_line(out: &mut String, format: LineFormat, event: &AuditEvent<'_>, stamp: &AuditStamp) {
    // Writing to a String cannot fail.
    let _ = match format {
        LineFormat::Kernel => Ok(()),
        LineFormat::Dmesg => write!(out, "audit: type=1400 audit({stamp}): "),
        LineFormat::Auditd => write!(out, "type=AVC msg=audit({stamp}): "),
    };
    write_avc(out, event);
}

/// Appends the AVC message of `event` to `out`.
pub fn write_avc(out: &mut String, e: &AuditEvent<'_>) {
    out.push_str(if e.denied { "avc:  denied  " } else { "avc:  granted  " });
    if e.perms.is_empty() {
        // The kernel's avc_audit_pre_callback returns right after " null".
        out.push_str("null");
    } else {
        out.push('{');
        for p in &e.perms {
            out.push(' ');
            write_word(out, p);
        }
        out.push_str(" } for ");
    }
    if let Some(pid) = e.info.pid {
        let _ = write!(out, " pid={pid}");
    }
    if let Some(comm) = &e.info.comm {
        out.push_str(" comm=");
        write_untrusted(out, comm);
    }
    if let Some(path) = &e.info.path {
        out.push_str(" path=");
        write_untrusted(out, path);
    }
    for (key, value) in &e.info.extra {
        out.push(' ');
        write_key(out, key);
        out.push('=');
        if is_raw_value(key, value) {
            out.push_str(value);
        } else {
            write_untrusted(out, value);
        }
    }
    out.push_str(" scontext=");
    write_word(out, e.scontext);
    out.push_str(" tcontext=");
    write_word(out, e.tcontext);
    out.push_str(" tclass=");
    write_word(out, e.tclass);
    if e.denied {
        out.push_str(if e.permissive { " permissive=1" } else { " permissive=0" });
    }
    if e.module != SELINUX_MODULE {
        out.push_str(" module=");
        write_word(out, e.module);
    }
}

/// The kernel's `audit_string_contains_control`: must `s` be written in
/// hex? True when a byte is `"`, below 0x21 or above 0x7e.
pub fn needs_hex(s: &str) -> bool {
    bytes_need_hex(s.as_bytes())
}

fn bytes_need_hex(s: &[u8]) -> bool {
    s.iter().any(|&b| b == b'"' || !(0x21..=0x7e).contains(&b))
}

/// The kernel's `audit_log_untrustedstring`: `"s"`, or upper-case hex of
/// its bytes when [`needs_hex`].
pub fn write_untrusted(out: &mut String, s: &str) {
    write_untrusted_bytes(out, s.as_bytes());
}

/// [`write_untrusted`] of bytes that need not be UTF-8 (a path): those
/// written as they are are printable ASCII.
pub fn write_untrusted_bytes(out: &mut String, s: &[u8]) {
    if bytes_need_hex(s) {
        write_hex(out, s);
    } else {
        out.push('"');
        out.extend(s.iter().map(|&b| char::from(b)));
        out.push('"');
    }
}

/// [`write_untrusted`] into a new string.
pub fn untrusted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 2 + 2);
    write_untrusted(&mut out, s);
    out
}

/// A field the kernel writes with `%s` (contexts, names): as it is, or in
/// hex if it holds a byte that would break the line's syntax.
fn write_word(out: &mut String, s: &str) {
    if needs_hex(s) || s.is_empty() {
        write_hex(out, s.as_bytes());
    } else {
        out.push_str(s);
    }
}

/// Upper-case hex of the bytes, as `audit_log_n_hex` (`hex_byte_pack_upper`).
fn write_hex(out: &mut String, s: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    for &b in s {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
}

/// Field names are chosen by callers; anything but `[A-Za-z0-9_-]` becomes
/// `_` so a key cannot carry `=` or a space into the line.
fn write_key(out: &mut String, key: &str) {
    if key.is_empty() {
        out.push('_');
    }
    out.extend(key.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }));
}

/// Values the kernel formats with `%d`, `%lu`, `%x` or `%pI4`/`%pI6`.
fn is_raw_value(key: &str, v: &str) -> bool {
    let decimal = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let hex = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit());
    decimal(v.strip_prefix('-').unwrap_or(v))
        || v.strip_prefix("0x").is_some_and(hex)
        || (key == "ioctlcmd" && hex(v))
        || v.parse::<IpAddr>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untrusted_matches_the_kernel() {
        assert_eq!(untrusted("cat"), "\"cat\"");
        assert_eq!(untrusted(""), "\"\"");
        assert_eq!(untrusted("a b"), "612062");
        assert_eq!(untrusted("a\"b"), "612262");
        assert_eq!(untrusted("é"), "C3A9");
        assert_eq!(untrusted("~"), "\"~\"");
        assert_eq!(untrusted("\u{7f}"), "7F");
    }

    #[test]
    fn raw_values() {
        assert!(is_raw_value("ino", "42"));
        assert!(is_raw_value("capability", "21"));
        assert!(is_raw_value("laddr", "10.0.0.1"));
        assert!(is_raw_value("faddr", "::1"));
        assert!(is_raw_value("ioctlcmd", "541b"));
        assert!(!is_raw_value("dev", "tmpfs"));
        assert!(!is_raw_value("name", "cafe"));
        assert!(!is_raw_value("ino", ""));
    }

    #[test]
    fn stamp() {
        let s = AuditStamp { secs: 1_700_000_000, millis: 7, serial: 42 };
        assert_eq!(s.to_string(), "1700000000.007:42");
        assert_eq!(s.seconds_f64(), 1_700_000_000.007);
    }
}
