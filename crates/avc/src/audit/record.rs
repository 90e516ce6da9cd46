//! Owned audit records and suppression notices: what crosses from a
//! checking thread to the writer thread, and the JSON objects the JSON
//! sink writes for them ([`EventJson`], [`NoticeJson`]: typed, so a key
//! cannot be misspelled in one place and not another).
//!
//! Why owned: an [`AuditEvent`] borrows the AVC's SID table and the
//! caller's [`AuditInfo`] for the duration of one call. To write it later
//! on another thread, [`AsyncSink`](super::AsyncSink) copies the strings
//! once (no formatting) and leaves every formatting step to the writer.

use std::collections::BTreeMap;
use std::time::SystemTime;

use serde::Serialize;

use super::format::{self, AuditStamp, LineFormat};
use super::{AuditEvent, AuditInfo};

/// An [`AuditEvent`] that owns its data, with its stamp.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditRecord {
    pub denied: bool,
    pub perms: Vec<String>,
    pub scontext: String,
    pub tcontext: String,
    pub tclass: String,
    pub permissive: bool,
    pub module: String,
    pub info: AuditInfo,
    pub stamp: AuditStamp,
}

impl AuditRecord {
    /// Copies `event`.
    pub fn new(event: &AuditEvent<'_>, stamp: AuditStamp) -> AuditRecord {
        AuditRecord {
            denied: event.denied,
            perms: event.perms.iter().map(|p| (*p).to_owned()).collect(),
            scontext: event.scontext.to_owned(),
            tcontext: event.tcontext.to_owned(),
            tclass: event.tclass.to_owned(),
            permissive: event.permissive,
            module: event.module.to_owned(),
            info: event.info.clone(),
            stamp,
        }
    }

    /// The event again, borrowing this record.
    pub fn event(&self) -> AuditEvent<'_> {
        AuditEvent {
            denied: self.denied,
            perms: self.perms.iter().map(String::as_str).collect(),
            scontext: &self.scontext,
            tcontext: &self.tcontext,
            tclass: &self.tclass,
            permissive: self.permissive,
            module: &self.module,
            info: &self.info,
        }
    }

    /// The text line in `format` (see [`format`](mod@crate::audit::format)), no newline.
    pub fn line(&self, format: LineFormat) -> String {
        format::format_line(format, &self.event(), &self.stamp)
    }

    /// The JSON object (see [`event_json`]).
    pub fn json(&self) -> EventJson<'_> {
        event_json(&self.event(), &self.stamp)
    }
}

/// One JSON object per event, every field of the event plus its stamp,
/// in this order:
///
/// ```json
/// {"type":"avc","timestamp":1700000000.123,"serial":42,"denied":true,
///  "perms":["read"],"scontext":"system_u:system_r:httpd_t:s0",
///  "tcontext":"system_u:object_r:shadow_t:s0","tclass":"file",
///  "permissive":false,"module":"selinux","pid":1234,"comm":"cat",
///  "path":"/etc/shadow","extra":{"dev":"tmpfs","ino":"42"}}
/// ```
///
/// `timestamp` is seconds since the epoch with millisecond precision (the
/// same instant and serial as the text line's `audit(...)`); `pid`,
/// `comm` and `path` are `null` when unknown; strings are JSON-escaped,
/// never hex-encoded; `extra` is sorted by key and keeps the last value
/// of a repeated key. The keys are a contract with log readers: rename
/// none.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EventJson<'a> {
    /// Always `"avc"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub timestamp: f64,
    pub serial: u64,
    pub denied: bool,
    pub perms: Vec<&'a str>,
    pub scontext: &'a str,
    pub tcontext: &'a str,
    pub tclass: &'a str,
    pub permissive: bool,
    pub module: &'a str,
    pub pid: Option<u32>,
    pub comm: Option<&'a str>,
    pub path: Option<&'a str>,
    pub extra: BTreeMap<&'a str, &'a str>,
}

/// The JSON object of `e` stamped with `stamp` (see [`EventJson`]).
pub fn event_json<'a>(e: &AuditEvent<'a>, stamp: &AuditStamp) -> EventJson<'a> {
    let info: &'a AuditInfo = e.info;
    EventJson {
        kind: "avc",
        timestamp: stamp.seconds_f64(),
        serial: stamp.serial,
        denied: e.denied,
        perms: e.perms.clone(),
        scontext: e.scontext,
        tcontext: e.tcontext,
        tclass: e.tclass,
        permissive: e.permissive,
        module: e.module,
        pid: info.pid,
        comm: info.comm.as_deref(),
        path: info.path.as_deref(),
        // Collecting into a map keeps the last value of a repeated key.
        extra: info.extra.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect(),
    }
}

/// Audit lines lost since the previous notice, reported by the writer
/// thread (the kernel's `audit: audit_lost=N` / printk's "callbacks
/// suppressed").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SuppressedNotice {
    /// Dropped by the rate limit.
    pub rate_limited: u64,
    /// Dropped because the queue was full (or the writer had stopped).
    pub queue_full: u64,
    pub time: SystemTime,
}

impl SuppressedNotice {
    pub fn total(&self) -> u64 {
        self.rate_limited.saturating_add(self.queue_full)
    }

    /// `rampart: N audit lines suppressed (rate_limit=R queue_full=Q)`.
    ///
    /// Deliberately without an `avc:` word or a `type=` field: SELinux
    /// tools skip it as a line that is not theirs.
    pub fn line(&self) -> String {
        format!(
            "rampart: {} audit lines suppressed (rate_limit={} queue_full={})",
            self.total(),
            self.rate_limited,
            self.queue_full
        )
    }

    /// `{"type":"suppressed","timestamp":...,"count":N,"rate_limit":R,"queue_full":Q}`.
    pub fn json(&self) -> NoticeJson {
        NoticeJson {
            kind: "suppressed",
            timestamp: AuditStamp::at(self.time, 0).seconds_f64(),
            count: self.total(),
            rate_limit: self.rate_limited,
            queue_full: self.queue_full,
        }
    }
}

/// The JSON object of a [`SuppressedNotice`], keys in this order.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct NoticeJson {
    /// Always `"suppressed"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub timestamp: f64,
    /// `rate_limit + queue_full`.
    pub count: u64,
    pub rate_limit: u64,
    pub queue_full: u64,
}
