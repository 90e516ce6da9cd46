//! The audit interface: what the AVC reports and to whom, and the sinks
//! that write it.
//!
//! The AVC decides *when* to audit (as the kernel does: a denial the
//! policy does not `dontaudit`, or a grant it marks `auditallow`) and
//! calls an [`AuditSink`] after the check, outside any cache borrow. This
//! module decides *how* an event is written:
//!
//! * [`format`](mod@format): the kernel's AVC message byte for byte (`avc:  denied  {
//!   read } for  pid=... permissive=0`), bare or with the `type=AVC
//!   msg=audit(...)` (auditd) or `audit: type=1400 audit(...)` (dmesg)
//!   prefix, so `audit2allow`/`audit2why` and every log scraper written
//!   for SELinux read Rampart's denials unchanged;
//! * [`StderrSink`], [`FileSink`], [`JsonLinesSink`]: where lines go;
//! * [`AsyncSink`]: takes writing off the check path. A checking thread
//!   only copies the event into an owned record and `try_send`s it to a
//!   bounded queue drained by one writer thread; it never blocks, never
//!   waits for I/O. A full queue and a token-bucket rate limit (the
//!   kernel's `audit_rate_limit`) drop records instead, counted, and the
//!   writer reports them with a `rampart: N audit lines suppressed` line.
//!
//! Why: an audit path that can block turns a slow disk or a flood of
//! denials into latency (or a stall) for every checking thread, which is
//! what the kernel's backlog limit and rate limit exist to prevent.
//! Losing audit lines under overload is the kernel's choice too
//! (`audit_lost`), and here it is always counted and reported.

use std::sync::{Mutex, PoisonError};

mod async_sink;
pub mod format;
mod rate;
mod record;
mod sinks;

pub use async_sink::{AsyncConfig, AsyncSink, AuditCounters};
pub use format::{AuditStamp, LineFormat};
pub use rate::{RateLimit, RateLimiter};
pub use record::{event_json, AuditRecord, EventJson, NoticeJson, SuppressedNotice};
pub use sinks::{AuditWriter, FileSink, JsonLinesSink, StderrSink};

/// One audited check.
#[derive(Debug)]
pub struct AuditEvent<'a> {
    /// A denial (else an audited grant).
    pub denied: bool,
    /// The audited permissions, by declared name.
    pub perms: Vec<&'a str>,
    pub scontext: &'a str,
    pub tcontext: &'a str,
    pub tclass: &'a str,
    /// The denial was not enforced.
    pub permissive: bool,
    /// The module that denied (or asked for the grant to be audited).
    pub module: &'a str,
    pub info: &'a AuditInfo,
}

/// What the caller knows about the access, for the log.
#[derive(Default, Clone, Debug, PartialEq, Eq)]
pub struct AuditInfo {
    pub pid: Option<u32>,
    pub comm: Option<String>,
    pub path: Option<String>,
    pub extra: Vec<(String, String)>,
}

/// Where audit events go.
pub trait AuditSink: Send + Sync {
    fn audit(&self, event: &AuditEvent<'_>);
}

/// Discards every event.
#[derive(Debug, Default)]
pub struct NullSink;

impl AuditSink for NullSink {
    fn audit(&self, _event: &AuditEvent<'_>) {}
}

/// Keeps every event as a line of text (for tests). Its line is a
/// compact `key=value` summary, not the kernel format: use
/// [`format::avc_line`] for that.
#[derive(Debug, Default)]
pub struct MemorySink {
    lines: Mutex<Vec<String>>,
}

impl MemorySink {
    pub fn new() -> MemorySink {
        MemorySink::default()
    }

    /// The events so far, oldest first.
    pub fn events(&self) -> Vec<String> {
        self.lines.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

impl AuditSink for MemorySink {
    fn audit(&self, e: &AuditEvent<'_>) {
        let mut line = format!(
            "avc: {} {{ {} }} scontext={} tcontext={} tclass={} permissive={} module={}",
            if e.denied { "denied" } else { "granted" },
            e.perms.join(" "),
            e.scontext,
            e.tcontext,
            e.tclass,
            u8::from(e.permissive),
            e.module
        );
        if let Some(pid) = e.info.pid {
            line.push_str(&format!(" pid={pid}"));
        }
        if let Some(comm) = &e.info.comm {
            line.push_str(&format!(" comm={comm}"));
        }
        if let Some(path) = &e.info.path {
            line.push_str(&format!(" path={path}"));
        }
        for (k, v) in &e.info.extra {
            line.push_str(&format!(" {k}={v}"));
        }
        self.lines.lock().unwrap_or_else(PoisonError::into_inner).push(line);
    }
}
