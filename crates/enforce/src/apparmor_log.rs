//! Where AppArmor's records go: the daemon's audit log (`--audit-log`,
//! auditd's `type=AVC msg=audit(...)` lines, as the kernel's AppArmor
//! records reach `audit.log`), or standard error in dmesg's format
//! (`audit: type=1400 audit(...)`), beside the SELinux records.
//!
//! Why a writer of its own: the SELinux sink carries SELinux events (an
//! `AuditEvent` of contexts and classes); an AppArmor record is a
//! message rampart_apparmor::audit formats whole. As the SELinux sink
//! does, a responder only enqueues (never blocks: a full queue drops the
//! record, counted and reported), and one thread writes. Both writers
//! append (`O_APPEND`) whole lines, so their lines never interleave
//! within a line. Serials start at 2^32, apart from the SELinux sink's,
//! so no two records share a stamp (ausearch groups by stamp).

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

use rampart_avc::audit::AuditStamp;

const QUEUE: usize = 4096;
const FIRST_SERIAL: u64 = 1 << 32;

/// The writer of AppArmor records (see the module docs).
pub struct AppArmorLog {
    tx: Option<SyncSender<String>>,
    serial: AtomicU64,
    dropped: AtomicU64,
    thread: Option<JoinHandle<()>>,
}

enum Out {
    File(BufWriter<File>),
    Stderr,
}

impl AppArmorLog {
    /// Appends to `path`, or writes to standard error without one.
    pub fn open(path: Option<&Path>) -> io::Result<AppArmorLog> {
        let mut out = match path {
            Some(p) => Out::File(BufWriter::new(OpenOptions::new().create(true).append(true).open(p)?)),
            None => Out::Stderr,
        };
        let (tx, rx) = mpsc::sync_channel(QUEUE);
        let thread =
            std::thread::Builder::new().name("apparmor-audit".into()).spawn(move || write_lines(&mut out, &rx))?;
        Ok(AppArmorLog {
            tx: Some(tx),
            serial: AtomicU64::new(FIRST_SERIAL),
            dropped: AtomicU64::new(0),
            thread: Some(thread),
        })
    }

    /// Queues one record: `message` is what follows the stamp.
    pub fn record(&self, message: String) {
        // Relaxed: the serial only has to be unique; it orders nothing.
        let stamp = AuditStamp::now(self.serial.fetch_add(1, Ordering::Relaxed));
        let sent = self.tx.as_ref().is_some_and(|tx| tx.try_send(format!("{stamp}): {message}")).is_ok());
        if !sent {
            // Relaxed: a statistic, reported on its own.
            let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            if n.is_power_of_two() {
                eprintln!("rampartd: {n} AppArmor audit records dropped (the writer falls behind)");
            }
        }
    }
}

fn write_lines(out: &mut Out, rx: &Receiver<String>) {
    let _registered = crate::own_threads::register_current();
    while let Ok(first) = rx.recv() {
        for line in std::iter::once(first).chain(rx.try_iter()) {
            let _ = match out {
                Out::File(f) => writeln!(f, "type=AVC msg=audit({line}"),
                Out::Stderr => writeln!(io::stderr(), "audit: type=1400 audit({line}"),
            };
        }
        if let Out::File(f) = out {
            let _ = f.flush();
        }
    }
}

impl Drop for AppArmorLog {
    fn drop(&mut self) {
        // Closing the queue ends the writer once it has written the rest.
        drop(self.tx.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
