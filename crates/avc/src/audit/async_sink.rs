//! [`AsyncSink`]: audit writing off the check path.
//!
//! Why: the AVC calls its sink on the checking thread. Formatting and
//! I/O there would make every audited check wait for the disk, and a
//! denial flood (a misconfigured daemon retrying in a loop) would stall
//! the very threads that are being denied, or worse, everything else.
//! The kernel answers with a backlog limit and a rate limit, dropping and
//! counting what exceeds them (`audit_lost`); so does this sink:
//!
//! ```text
//! audit(event)                                       (checking thread)
//!   rate limit (token bucket, one CAS) ── empty ──> suppressed += 1
//!   copy into an owned record + stamp (time, serial)
//!   try_send to the bounded queue ──────── full ──> dropped += 1
//! writer thread: format, write, flush when the queue runs empty;
//!   every `notice_interval` (and on flush/shutdown), if anything was
//!   lost since the last report: "rampart: N audit lines suppressed
//!   (rate_limit=R queue_full=Q)"
//! ```
//!
//! `audit()` never blocks: no lock, no wait, no I/O; its shared writes are
//! the token-bucket CAS and a few relaxed counter increments, paid only by
//! audited checks (denials, auditallow grants), never by plain checks.
//!
//! Accounting: every call to `audit()` ends in exactly one of `written`,
//! `suppressed` (rate limit), `dropped` (queue full or writer gone) or
//! `failed` (the writer returned an error), so after a successful
//! [`AsyncSink::flush`], `submitted == written + suppressed + dropped +
//! failed`.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime};

use super::format::AuditStamp;
use super::rate::{RateLimit, RateLimiter};
use super::record::{AuditRecord, SuppressedNotice};
use super::sinks::AuditWriter;
use super::{AuditEvent, AuditSink};

/// Most messages the writer handles between two looks at the clock, so a
/// queue that never empties still gets its notices and flushes.
const BATCH: usize = 256;

/// How long a blocked flush request waits between tries.
const RETRY: Duration = Duration::from_millis(1);

/// [`AsyncSink`] settings.
#[derive(Clone, Debug)]
pub struct AsyncConfig {
    /// Records the queue holds (at least 1). Default 4096.
    pub queue_capacity: usize,
    /// `None` for no limit. Default 1000 lines per second, burst 1000.
    pub rate_limit: Option<RateLimit>,
    /// How often the writer reports lost records. Default 1 s.
    pub notice_interval: Duration,
    /// How long [`AsyncSink::flush`] waits. Default 5 s.
    pub flush_timeout: Duration,
    /// How long dropping the sink waits for the writer to drain the
    /// queue before leaving the thread to finish alone. Default 5 s.
    pub shutdown_timeout: Duration,
}

impl Default for AsyncConfig {
    fn default() -> AsyncConfig {
        AsyncConfig {
            queue_capacity: 4096,
            rate_limit: Some(RateLimit::per_second(1000)),
            notice_interval: Duration::from_secs(1),
            flush_timeout: Duration::from_secs(5),
            shutdown_timeout: Duration::from_secs(5),
        }
    }
}

/// A snapshot of an [`AsyncSink`]'s counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AuditCounters {
    /// Calls to `audit()`.
    pub submitted: u64,
    /// Records written by the writer.
    pub written: u64,
    /// Dropped by the rate limit.
    pub suppressed: u64,
    /// Dropped because the queue was full (or the writer had stopped).
    pub dropped: u64,
    /// Records the writer failed to write.
    pub failed: u64,
    /// Suppression notices written.
    pub notices: u64,
}

impl AuditCounters {
    /// Records whose fate is known: written, suppressed, dropped or failed.
    pub fn accounted(&self) -> u64 {
        self.written + self.suppressed + self.dropped + self.failed
    }
}

/// The counters, shared by the sink and its writer thread.
///
/// Every access is Relaxed: each counter is an independent statistic that
/// publishes no other memory. A reader that needs them to add up calls
/// [`AsyncSink::flush`] first, whose round trip through the channels
/// orders the writer's increments before the reader's loads.
#[derive(Default)]
struct Counters {
    submitted: AtomicU64,
    written: AtomicU64,
    suppressed: AtomicU64,
    dropped: AtomicU64,
    failed: AtomicU64,
    notices: AtomicU64,
}

impl Counters {
    fn bump(counter: &AtomicU64) {
        // Relaxed: see the type's documentation.
        counter.fetch_add(1, Ordering::Relaxed);
    }

    fn get(counter: &AtomicU64) -> u64 {
        // Relaxed: see the type's documentation.
        counter.load(Ordering::Relaxed)
    }

    fn snapshot(&self) -> AuditCounters {
        AuditCounters {
            submitted: Counters::get(&self.submitted),
            written: Counters::get(&self.written),
            suppressed: Counters::get(&self.suppressed),
            dropped: Counters::get(&self.dropped),
            failed: Counters::get(&self.failed),
            notices: Counters::get(&self.notices),
        }
    }
}

enum Msg {
    /// Boxed so queue slots stay one pointer wide.
    Record(Box<AuditRecord>),
    /// Write everything queued before, report losses, flush, then answer.
    Flush(SyncSender<()>),
}

/// Wraps an [`AuditWriter`] with a writer thread, a bounded queue and a
/// rate limit; see the module documentation.
pub struct AsyncSink {
    /// `None` once shut down (dropping it is what stops the writer).
    tx: Option<SyncSender<Msg>>,
    limiter: Option<RateLimiter>,
    counters: Arc<Counters>,
    serial: AtomicU64,
    thread: Option<JoinHandle<()>>,
    config: AsyncConfig,
}

impl AsyncSink {
    /// Starts the writer thread (`rampart-audit`) owning `writer`.
    pub fn new(writer: impl AuditWriter + 'static, config: AsyncConfig) -> io::Result<AsyncSink> {
        let (tx, rx) = mpsc::sync_channel(config.queue_capacity.max(1));
        let counters = Arc::new(Counters::default());
        let shared = Arc::clone(&counters);
        let interval = config.notice_interval.max(Duration::from_millis(1));
        let thread = thread::Builder::new()
            .name("rampart-audit".to_owned())
            .spawn(move || Writer::new(writer, shared, interval).run(&rx))?;
        Ok(AsyncSink {
            tx: Some(tx),
            limiter: config.rate_limit.and_then(RateLimiter::new),
            counters,
            serial: AtomicU64::new(0),
            thread: Some(thread),
            config,
        })
    }

    /// The counters now. They add up (see [`AuditCounters::accounted`])
    /// once a [`AsyncSink::flush`] has returned true with no `audit()`
    /// running.
    pub fn counters(&self) -> AuditCounters {
        self.counters.snapshot()
    }

    pub fn config(&self) -> &AsyncConfig {
        &self.config
    }

    /// Waits until everything submitted before this call is written, any
    /// loss reported and the writer flushed, for at most
    /// `config.flush_timeout`. False on timeout or if the writer stopped.
    pub fn flush(&self) -> bool {
        self.flush_within(self.config.flush_timeout)
    }

    /// [`AsyncSink::flush`] with its own time limit.
    pub fn flush_within(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let Some(tx) = &self.tx else { return false };
        let (reply_tx, reply_rx) = mpsc::sync_channel(1);
        let mut msg = Msg::Flush(reply_tx);
        loop {
            match tx.try_send(msg) {
                Ok(()) => break,
                Err(TrySendError::Full(back)) => {
                    if Instant::now() >= deadline {
                        return false;
                    }
                    msg = back;
                    thread::sleep(RETRY);
                }
                Err(TrySendError::Disconnected(_)) => return false,
            }
        }
        reply_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())).is_ok()
    }

    /// Stops accepting records, lets the writer drain the queue and
    /// report, and joins it, waiting at most `config.shutdown_timeout`.
    /// True if the writer finished in time (else it is left to finish on
    /// its own). Dropping the sink does the same.
    pub fn shutdown(mut self) -> bool {
        self.stop()
    }

    fn stop(&mut self) -> bool {
        // Closing the channel: the writer still receives what is queued,
        // then sees the disconnection and exits.
        drop(self.tx.take());
        let Some(thread) = self.thread.take() else { return true };
        let deadline = Instant::now() + self.config.shutdown_timeout;
        while !thread.is_finished() {
            if Instant::now() >= deadline {
                return false;
            }
            thread::sleep(RETRY);
        }
        thread.join().is_ok()
    }
}

impl Drop for AsyncSink {
    fn drop(&mut self) {
        self.stop();
    }
}

impl AuditSink for AsyncSink {
    fn audit(&self, event: &AuditEvent<'_>) {
        Counters::bump(&self.counters.submitted);
        if let Some(limiter) = &self.limiter {
            if !limiter.admit() {
                Counters::bump(&self.counters.suppressed);
                return;
            }
        }
        let Some(tx) = &self.tx else {
            Counters::bump(&self.counters.dropped);
            return;
        };
        // Relaxed: the serial only has to be unique, it orders nothing.
        let serial = self.serial.fetch_add(1, Ordering::Relaxed) + 1;
        let record = Box::new(AuditRecord::new(event, AuditStamp::now(serial)));
        if tx.try_send(Msg::Record(record)).is_err() {
            Counters::bump(&self.counters.dropped);
        }
    }
}

/// The writer thread's state.
struct Writer<W: AuditWriter> {
    writer: W,
    counters: Arc<Counters>,
    interval: Duration,
    next_notice: Instant,
    /// Losses already reported: (suppressed, dropped).
    reported: (u64, u64),
}

impl<W: AuditWriter> Writer<W> {
    fn new(writer: W, counters: Arc<Counters>, interval: Duration) -> Writer<W> {
        Writer { writer, counters, interval, next_notice: Instant::now() + interval, reported: (0, 0) }
    }

    fn run(mut self, rx: &Receiver<Msg>) {
        loop {
            let wait = self.next_notice.saturating_duration_since(Instant::now());
            match rx.recv_timeout(wait) {
                Ok(msg) => {
                    self.handle(msg);
                    // Take what is already queued without waiting, then
                    // flush once for the whole batch.
                    for _ in 1..BATCH {
                        match rx.try_recv() {
                            Ok(msg) => self.handle(msg),
                            Err(_) => break,
                        }
                    }
                    let _ = self.writer.flush();
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if Instant::now() >= self.next_notice {
                self.notice();
                let _ = self.writer.flush();
                self.next_notice = Instant::now() + self.interval;
            }
        }
        self.notice();
        let _ = self.writer.flush();
    }

    fn handle(&mut self, msg: Msg) {
        match msg {
            Msg::Record(record) => match self.writer.write_record(&record) {
                Ok(()) => Counters::bump(&self.counters.written),
                Err(_) => Counters::bump(&self.counters.failed),
            },
            Msg::Flush(reply) => {
                self.notice();
                let _ = self.writer.flush();
                // The requester may have given up waiting; nothing to do then.
                let _ = reply.try_send(());
            }
        }
    }

    /// Reports losses since the last report, if any.
    fn notice(&mut self) {
        let now = (Counters::get(&self.counters.suppressed), Counters::get(&self.counters.dropped));
        if now == self.reported {
            return;
        }
        let notice = SuppressedNotice {
            rate_limited: now.0.saturating_sub(self.reported.0),
            queue_full: now.1.saturating_sub(self.reported.1),
            time: SystemTime::now(),
        };
        self.reported = now;
        if self.writer.write_notice(&notice).is_ok() {
            Counters::bump(&self.counters.notices);
        }
    }
}
