//! Parses the records a fanotify `read` returns: the one module that
//! turns those bytes into typed events. Every descriptor in a record is
//! owned as soon as it is seen, so it is closed whatever happens next.
//!
//! The parser itself ([`parse_with`]) is generic over how a descriptor
//! number is held, so it can be fuzzed on arbitrary bytes with numbers
//! kept as numbers (`fuzz/fuzz_targets/fanotify_records.rs`): owning
//! them there would close the fuzzer's own descriptors.

use std::fmt;
use std::os::fd::{FromRawFd, OwnedFd};

/// A record's header (`struct fanotify_event_metadata`): the whole record
/// for this daemon's groups, which ask for no info records.
pub const METADATA_LEN: usize = 24;
const INFO_HEADER_LEN: usize = 4;
const INFO_TYPE_PIDFD: u8 = 4;

/// One permission event, its descriptors held as `Fd` (owned by the
/// daemon; see the module docs).
#[derive(Debug, PartialEq, Eq)]
pub struct PermEvent<Fd = OwnedFd> {
    /// The event bits (`FAN_OPEN_PERM`, ...).
    pub mask: u64,
    /// The object, opened for us; its number is also the response key.
    pub fd: Fd,
    /// The thread that opened or read (`FAN_REPORT_TID`): a thread id,
    /// not the process's, so its flags and cgroup are the opener's own.
    pub pid: u32,
}

/// A record that breaks the fanotify format (never expected from the
/// kernel; reported, with the byte offset in the read buffer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordError {
    pub offset: usize,
    pub what: String,
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed fanotify record at byte {}: {} (the rest of this read is dropped)", self.offset, self.what)
    }
}

impl std::error::Error for RecordError {}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn i32_at(b: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Takes ownership of a descriptor number (`>= 0`) from a record.
fn own(fd: i32) -> OwnedFd {
    // SAFETY: the kernel installed `fd` in our table for this record and
    // nothing else refers to it; each record's numbers are owned once.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// Parses `buf` (the bytes one `read` returned). Events are pushed to
/// `out` as they parse; on a malformed record the error says where, and
/// the descriptors seen so far are already owned (closed on drop).
pub fn parse(buf: &[u8], out: &mut Vec<PermEvent>) -> Result<(), RecordError> {
    parse_with(buf, out, own)
}

/// `parse`, holding each descriptor number a record carries (a
/// negative one is none) as `take` makes it, as soon as it is read.
pub fn parse_with<Fd>(
    buf: &[u8],
    out: &mut Vec<PermEvent<Fd>>,
    mut take: impl FnMut(i32) -> Fd,
) -> Result<(), RecordError> {
    let mut take = |n: i32| (n >= 0).then(|| take(n));
    let mut at = 0;
    while at < buf.len() {
        let err = |what: String| RecordError { offset: at, what };
        let rec = &buf[at..];
        if rec.len() < METADATA_LEN {
            return Err(err(format!("{} bytes left, a record header needs {METADATA_LEN}", rec.len())));
        }
        let event_len = u32_at(rec, 0).unwrap_or(0) as usize;
        let vers = rec[4];
        let metadata_len = u16_at(rec, 6).unwrap_or(0) as usize;
        let mask = u64_at(rec, 8).unwrap_or(0);
        let fd = take(i32_at(rec, 16).unwrap_or(-1));
        let pid = i32_at(rec, 20).unwrap_or(-1);
        if vers != libc::FANOTIFY_METADATA_VERSION {
            return Err(err(format!("metadata version {vers}, expected {}", libc::FANOTIFY_METADATA_VERSION)));
        }
        if metadata_len < METADATA_LEN || event_len < metadata_len || event_len > rec.len() {
            return Err(err(format!(
                "lengths out of range (event {event_len}, metadata {metadata_len}, {} bytes left)",
                rec.len()
            )));
        }
        parse_info(&rec[metadata_len..event_len], &mut take)
            .map_err(|(off, what)| RecordError { offset: at + metadata_len + off, what })?;
        at += event_len;
        let (Some(fd), Ok(pid)) = (fd, u32::try_from(pid)) else {
            // A queue overflow notice or a record without an object:
            // nothing to answer.
            continue;
        };
        out.push(PermEvent { mask, fd, pid });
    }
    Ok(())
}

/// Checks the info records after the metadata. The daemon asks for none
/// (`FAN_REPORT_TID` excludes pidfds), but a pidfd record's descriptor
/// would be in our table: it is taken, and dropped (closed).
fn parse_info<Fd>(mut info: &[u8], take: &mut impl FnMut(i32) -> Option<Fd>) -> Result<(), (usize, String)> {
    let mut off = 0;
    while !info.is_empty() {
        let (Some(len), Some(&kind)) = (u16_at(info, 2), info.first()) else {
            return Err((off, format!("{} bytes left, an info header needs {INFO_HEADER_LEN}", info.len())));
        };
        let len = len as usize;
        if len < INFO_HEADER_LEN || len > info.len() {
            return Err((off, format!("info record length {len} out of range ({} bytes left)", info.len())));
        }
        if kind == INFO_TYPE_PIDFD {
            let fd = i32_at(info, INFO_HEADER_LEN).ok_or((off, "pidfd record too short".to_owned()))?;
            drop(take(fd));
        }
        info = &info[len..];
        off += len;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(mask: u64, fd: i32, pid: i32, pidfd: Option<i32>) -> Vec<u8> {
        let info_len = if pidfd.is_some() { 8 } else { 0 };
        let mut r = Vec::new();
        r.extend_from_slice(&((METADATA_LEN + info_len) as u32).to_ne_bytes());
        r.push(libc::FANOTIFY_METADATA_VERSION);
        r.push(0);
        r.extend_from_slice(&(METADATA_LEN as u16).to_ne_bytes());
        r.extend_from_slice(&mask.to_ne_bytes());
        r.extend_from_slice(&fd.to_ne_bytes());
        r.extend_from_slice(&pid.to_ne_bytes());
        if let Some(p) = pidfd {
            r.push(INFO_TYPE_PIDFD);
            r.push(0);
            r.extend_from_slice(&8u16.to_ne_bytes());
            r.extend_from_slice(&p.to_ne_bytes());
        }
        r
    }

    #[test]
    fn records_without_an_object_are_skipped() {
        // Negative descriptors: nothing real is owned (and closed) here.
        let mut buf = record(libc::FAN_OPEN_PERM, -1, 42, Some(-1));
        buf.extend(record(libc::FAN_OPEN_PERM, -1, 7, None));
        let mut out = Vec::new();
        parse(&buf, &mut out).unwrap();
        assert!(out.is_empty(), "records without an object are skipped");
    }

    #[test]
    fn owns_real_descriptors() {
        let file = std::fs::File::open("/proc/self/stat").unwrap();
        let raw = std::os::fd::IntoRawFd::into_raw_fd(file);
        let buf = record(libc::FAN_OPEN_PERM, raw, 42, Some(-2));
        let mut out = Vec::new();
        parse(&buf, &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].pid, 42);
        assert_eq!(out[0].mask, libc::FAN_OPEN_PERM);
    }

    #[test]
    fn numbers_are_taken_as_soon_as_read_even_from_a_record_that_then_fails() {
        let mut buf = record(libc::FAN_OPEN_PERM, 5, 42, Some(6));
        let mut bad = record(libc::FAN_OPEN_EXEC_PERM, 7, 43, Some(8));
        // The second record's info header claims more bytes than it has.
        bad[METADATA_LEN + 2..METADATA_LEN + 4].copy_from_slice(&64u16.to_ne_bytes());
        buf.extend(bad);
        let mut taken = Vec::new();
        let mut out = Vec::new();
        let e = parse_with(&buf, &mut out, |n| {
            taken.push(n);
            n
        })
        .unwrap_err();
        assert_eq!(out, vec![PermEvent { mask: libc::FAN_OPEN_PERM, fd: 5, pid: 42 }]);
        // 7 is held (to be closed) although its record is dropped; 8 is
        // behind the malformed header, never read.
        assert_eq!(taken, vec![5, 6, 7]);
        assert_eq!(e.offset, 2 * METADATA_LEN + 8);
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let full = record(libc::FAN_OPEN_PERM, -1, 42, Some(-1));
        for cut in 1..full.len() {
            let mut out = Vec::new();
            let e = parse(&full[..cut], &mut out).unwrap_err();
            assert_eq!(e.offset, 0, "cut at {cut}");
        }
    }

    #[test]
    fn bad_version_and_lengths_are_located() {
        let mut buf = record(libc::FAN_OPEN_PERM, -1, 1, None);
        let mut bad = record(libc::FAN_OPEN_PERM, -1, 1, None);
        bad[4] = 99;
        buf.extend(bad);
        let e = parse(&buf, &mut Vec::new()).unwrap_err();
        assert_eq!(e.offset, METADATA_LEN);
        assert!(e.to_string().contains("version 99"));
        let mut zero = record(libc::FAN_OPEN_PERM, -1, 1, Some(-1));
        zero[METADATA_LEN + 2..METADATA_LEN + 4].copy_from_slice(&0u16.to_ne_bytes());
        let e = parse(&zero, &mut Vec::new()).unwrap_err();
        assert_eq!(e.offset, METADATA_LEN);
    }
}
