//! Where audit lines go: stderr, a file (text), a file or any writer
//! (JSON lines).
//!
//! Each sink is two things:
//! * an [`AuditWriter`], the back end [`AsyncSink`](super::AsyncSink)'s
//!   writer thread drives: it owns the sink, so writing takes no lock,
//!   and it flushes buffered output whenever the queue runs empty;
//! * an [`AuditSink`] of its own, synchronous: the calling thread formats,
//!   takes the sink's lock, writes and flushes. Simple and ordered, but a
//!   slow disk stalls the checking thread: on the check path, wrap the
//!   sink in an `AsyncSink` instead.
//!
//! Sinks number their own records (`audit(SECONDS.MILLIS:SERIAL)`) when
//! used synchronously; behind an `AsyncSink` the stamp is taken by the
//! checking thread at the time of the check.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use super::format::{self, AuditStamp, LineFormat};
use super::record::{event_json, AuditRecord, SuppressedNotice};
use super::{AuditEvent, AuditSink};

/// The writing end of an [`AsyncSink`](super::AsyncSink): called on its
/// writer thread only, one call at a time.
pub trait AuditWriter: Send {
    /// Writes one record (one line, newline included).
    fn write_record(&mut self, record: &AuditRecord) -> io::Result<()>;

    /// Writes the report of records lost since the previous one.
    fn write_notice(&mut self, notice: &SuppressedNotice) -> io::Result<()>;

    /// Pushes buffered output down (called when the queue runs empty, on
    /// flush and on shutdown).
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<W: AuditWriter + ?Sized> AuditWriter for Box<W> {
    fn write_record(&mut self, record: &AuditRecord) -> io::Result<()> {
        (**self).write_record(record)
    }

    fn write_notice(&mut self, notice: &SuppressedNotice) -> io::Result<()> {
        (**self).write_notice(notice)
    }

    fn flush(&mut self) -> io::Result<()> {
        (**self).flush()
    }
}

/// How a sink encodes lines.
#[derive(Clone, Copy, Debug)]
enum Encoding {
    Text(LineFormat),
    Json,
}

impl Encoding {
    fn event(self, e: &AuditEvent<'_>, stamp: &AuditStamp) -> io::Result<String> {
        let mut line = match self {
            Encoding::Text(f) => format::format_line(f, e, stamp),
            Encoding::Json => serde_json::to_string(&event_json(e, stamp)).map_err(io::Error::other)?,
        };
        line.push('\n');
        Ok(line)
    }

    fn notice(self, n: &SuppressedNotice) -> io::Result<String> {
        let mut line = match self {
            Encoding::Text(_) => n.line(),
            Encoding::Json => serde_json::to_string(&n.json()).map_err(io::Error::other)?,
        };
        line.push('\n');
        Ok(line)
    }
}

/// What the three sinks share: an encoding, an output behind a lock (for
/// synchronous use), a serial counter and a failure count.
struct Core<W: Write + Send> {
    out: Mutex<W>,
    encoding: Encoding,
    serial: AtomicU64,
    failed: AtomicU64,
}

impl<W: Write + Send> Core<W> {
    fn new(out: W, encoding: Encoding) -> Core<W> {
        Core { out: Mutex::new(out), encoding, serial: AtomicU64::new(0), failed: AtomicU64::new(0) }
    }

    /// Synchronous path: one whole line per `write_all`, flushed at once.
    fn audit(&self, e: &AuditEvent<'_>) {
        // Relaxed: the serial only has to be unique, it orders nothing.
        let stamp = AuditStamp::now(self.serial.fetch_add(1, Ordering::Relaxed) + 1);
        let result = self.encoding.event(e, &stamp).and_then(|line| {
            let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
            out.write_all(line.as_bytes())?;
            out.flush()
        });
        if result.is_err() {
            // Relaxed: a statistic, read on its own.
            self.failed.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Writer-thread path: `&mut self`, so the lock is bypassed.
    fn out(&mut self) -> &mut W {
        self.out.get_mut().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_record(&mut self, record: &AuditRecord) -> io::Result<()> {
        let line = self.encoding.event(&record.event(), &record.stamp)?;
        self.out().write_all(line.as_bytes())
    }

    fn write_notice(&mut self, notice: &SuppressedNotice) -> io::Result<()> {
        let line = self.encoding.notice(notice)?;
        self.out().write_all(line.as_bytes())
    }

    fn failures(&self) -> u64 {
        // Relaxed: a statistic, read on its own.
        self.failed.load(Ordering::Relaxed)
    }
}

/// Delegates both faces of a sink to its `core`.
macro_rules! sink_impls {
    ($sink:ty) => {
        impl AuditSink for $sink {
            fn audit(&self, event: &AuditEvent<'_>) {
                self.core.audit(event);
            }
        }

        impl AuditWriter for $sink {
            fn write_record(&mut self, record: &AuditRecord) -> io::Result<()> {
                self.core.write_record(record)
            }

            fn write_notice(&mut self, notice: &SuppressedNotice) -> io::Result<()> {
                self.core.write_notice(notice)
            }

            fn flush(&mut self) -> io::Result<()> {
                self.core.out().flush()
            }
        }
    };
}

/// Writes text lines to standard error (unbuffered), [`LineFormat::Kernel`]
/// by default: what a daemon under systemd or a terminal shows.
pub struct StderrSink {
    core: Core<io::Stderr>,
}

impl StderrSink {
    pub fn new(format: LineFormat) -> StderrSink {
        StderrSink { core: Core::new(io::stderr(), Encoding::Text(format)) }
    }

    /// Synchronous writes that failed.
    pub fn failures(&self) -> u64 {
        self.core.failures()
    }
}

impl Default for StderrSink {
    fn default() -> StderrSink {
        StderrSink::new(LineFormat::Kernel)
    }
}

sink_impls!(StderrSink);

/// Appends text lines to a file (created if missing, opened `O_APPEND` so
/// concurrent writers never overwrite each other). Use
/// [`LineFormat::Auditd`] for a file `audit2allow -i` and `ausearch -if`
/// read.
pub struct FileSink {
    core: Core<BufWriter<File>>,
    path: PathBuf,
}

impl FileSink {
    pub fn open(path: impl AsRef<Path>, format: LineFormat) -> io::Result<FileSink> {
        let path = path.as_ref().to_owned();
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        Ok(FileSink { core: Core::new(BufWriter::with_capacity(64 * 1024, file), Encoding::Text(format)), path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Synchronous writes that failed.
    pub fn failures(&self) -> u64 {
        self.core.failures()
    }
}

sink_impls!(FileSink);

/// One JSON object per line (see [`event_json`]) to a file or any writer.
pub struct JsonLinesSink {
    core: Core<BufWriter<Box<dyn Write + Send>>>,
}

impl JsonLinesSink {
    /// Appends to the file at `path` (created if missing).
    pub fn open(path: impl AsRef<Path>) -> io::Result<JsonLinesSink> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(JsonLinesSink::new(file))
    }

    /// Writes to `out` (buffered here; flushed per line when used
    /// synchronously, when the queue runs empty behind an `AsyncSink`).
    pub fn new(out: impl Write + Send + 'static) -> JsonLinesSink {
        let out: Box<dyn Write + Send> = Box::new(out);
        JsonLinesSink { core: Core::new(BufWriter::with_capacity(64 * 1024, out), Encoding::Json) }
    }

    /// Synchronous writes that failed.
    pub fn failures(&self) -> u64 {
        self.core.failures()
    }
}

sink_impls!(JsonLinesSink);
