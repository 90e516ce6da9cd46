//! The supervised calls a daemon has received and not yet answered, kept
//! in a memory file in the service manager's store (crate::fd_store,
//! named [`NAME`]) beside the listeners, so that the next daemon serves
//! them.
//!
//! Why: a notification the kernel handed to a daemon (`NOTIF_RECV`) is
//! never handed out again. If that daemon dies before answering it while
//! the store keeps the listener open, the caller waits in its call until
//! it is killed: an open for writing, a chmod, a FIFO open waiting for its
//! reader. The next daemon cannot ask the kernel which calls are pending
//! (notification ids start at a random number per listener), so each
//! daemon writes down what it received, and its successor reads it back,
//! finds the listener each call is still pending on
//! (`SECCOMP_IOCTL_NOTIF_ID_VALID`, ids being 64-bit random-based, one
//! listener knows it) and serves it as if just received
//! (crate::supervisor). The caller is still blocked, so its registers,
//! memory and `/proc/TID` are as they were.
//!
//! How: one slot of [`SLOT`] bytes per call in flight, written with one
//! `pwrite` when the call is received and cleared with another when it is
//! answered ([`Entry`]'s drop). A `pwrite` is not torn by the writer's
//! death (SIGKILL takes effect on the way out of the call), and a slot
//! whose call was answered just before the death names an id that is no
//! longer valid, so it is skipped.
//!
//! What differs from one daemon serving the call: a call the dead daemon
//! made but did not answer is made again (a second unlink or rename of
//! the name answers `ENOENT`, an `O_EXCL` create `EEXIST`). Calls beyond
//! [`SLOTS`] in flight are served but not written down.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex, PoisonError};

/// The name the journal is stored under.
pub const NAME: &str = "rampart-calls";
/// Calls written down at most (the supervisor's queue and workers, and
/// FIFO opens waiting for a reader, with room to spare).
pub const SLOTS: u32 = 2048;
/// Bytes per slot: a marker and a `seccomp_notif`, rounded up.
const SLOT: u64 = 128;
/// A slot in use starts with this (a cleared one with zeroes).
const IN_USE: u64 = 0x7261_6d70_6172_7431; // "rampart1"
/// Bytes of one record: the marker and the notification's fields.
const RECORD: usize = 8 + 8 + 4 + 4 + 4 + 4 + 8 + 6 * 8;

/// The memory file, and its free slots.
pub struct Journal {
    file: File,
    free: Mutex<Vec<u32>>,
}

/// A call written down; cleared when dropped (after its answer).
pub struct Entry {
    journal: Arc<Journal>,
    slot: u32,
}

impl Drop for Entry {
    fn drop(&mut self) {
        // A failed clear leaves a record whose id is answered: skipped.
        let _ = self.journal.file.write_all_at(&[0u8; 8], u64::from(self.slot) * SLOT);
        self.journal.free.lock().unwrap_or_else(PoisonError::into_inner).push(self.slot);
    }
}

impl Journal {
    /// A new, empty journal.
    pub fn create() -> io::Result<Journal> {
        // SAFETY: the name is NUL-terminated; no other pointer.
        let raw = unsafe { libc::memfd_create(c"rampart-calls-in-flight".as_ptr(), libc::MFD_CLOEXEC) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: just created, ours alone.
        let file = File::from(unsafe { OwnedFd::from_raw_fd(raw) });
        file.set_len(u64::from(SLOTS) * SLOT)?;
        Ok(Journal::over(file))
    }

    fn over(file: File) -> Journal {
        // Slot 0 last: taken first.
        Journal { file, free: Mutex::new((0..SLOTS).rev().collect()) }
    }

    /// A previous daemon's journal: the calls it holds, cleared, and the
    /// journal to go on with.
    pub fn adopt(fd: OwnedFd) -> io::Result<(Journal, Vec<libc::seccomp_notif>)> {
        let file = File::from(fd);
        let len = file.metadata()?.len().min(u64::from(SLOTS) * SLOT);
        let mut calls = Vec::new();
        let mut buf = [0u8; RECORD];
        for slot in 0..len / SLOT {
            if file.read_exact_at(&mut buf, slot * SLOT).is_err() {
                break;
            }
            if let Some(notif) = decode(&buf) {
                calls.push(notif);
            }
        }
        file.set_len(0)?;
        file.set_len(u64::from(SLOTS) * SLOT)?;
        Ok((Journal::over(file), calls))
    }

    /// The memory file, for the store.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }

    /// Writes `notif` down; `None` when every slot is taken or the write
    /// failed (the call is served all the same).
    pub fn record(self: &Arc<Self>, notif: &libc::seccomp_notif) -> Option<Entry> {
        let slot = self.free.lock().unwrap_or_else(PoisonError::into_inner).pop()?;
        let entry = Entry { journal: Arc::clone(self), slot };
        self.file.write_all_at(&encode(notif), u64::from(slot) * SLOT).ok()?;
        Some(entry)
    }
}

fn encode(n: &libc::seccomp_notif) -> [u8; RECORD] {
    let mut out = [0u8; RECORD];
    let mut at = 0;
    let mut put = |bytes: &[u8]| {
        out[at..at + bytes.len()].copy_from_slice(bytes);
        at += bytes.len();
    };
    put(&IN_USE.to_ne_bytes());
    put(&n.id.to_ne_bytes());
    put(&n.pid.to_ne_bytes());
    put(&n.flags.to_ne_bytes());
    put(&n.data.nr.to_ne_bytes());
    put(&n.data.arch.to_ne_bytes());
    put(&n.data.instruction_pointer.to_ne_bytes());
    for a in n.data.args {
        put(&a.to_ne_bytes());
    }
    out
}

fn decode(buf: &[u8; RECORD]) -> Option<libc::seccomp_notif> {
    let mut at = 0;
    let mut take = |n: usize| {
        let s = &buf[at..at + n];
        at += n;
        s
    };
    let u64_of = |s: &[u8]| s.try_into().ok().map(u64::from_ne_bytes);
    let u32_of = |s: &[u8]| s.try_into().ok().map(u32::from_ne_bytes);
    if u64_of(take(8))? != IN_USE {
        return None;
    }
    // SAFETY: seccomp_notif is plain data; all zeroes is valid.
    let mut n: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    n.id = u64_of(take(8))?;
    n.pid = u32_of(take(4))?;
    n.flags = u32_of(take(4))?;
    n.data.nr = u32_of(take(4))? as i32;
    n.data.arch = u32_of(take(4))?;
    n.data.instruction_pointer = u64_of(take(8))?;
    for a in n.data.args.iter_mut() {
        *a = u64_of(take(8))?;
    }
    Some(n)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn notif(id: u64) -> libc::seccomp_notif {
        // SAFETY: plain data.
        let mut n: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        n.id = id;
        n.pid = 4242;
        n.data.nr = 257;
        n.data.arch = 0xc000_003e;
        n.data.instruction_pointer = 0x7f00_0000_1234;
        n.data.args = [1, 2, 3, 4, 5, u64::MAX];
        n
    }

    fn same(a: &libc::seccomp_notif, b: &libc::seccomp_notif) -> bool {
        (a.id, a.pid, a.flags, a.data.nr, a.data.arch, a.data.instruction_pointer, a.data.args)
            == (b.id, b.pid, b.flags, b.data.nr, b.data.arch, b.data.instruction_pointer, b.data.args)
    }

    #[test]
    fn a_successor_reads_the_calls_not_answered() {
        let journal = Arc::new(Journal::create().unwrap());
        let answered = journal.record(&notif(1)).unwrap();
        let pending = journal.record(&notif(2)).unwrap();
        drop(answered);
        let copy: OwnedFd = journal.fd().try_clone_to_owned().unwrap();
        // The daemon dies with the call in flight: its entry never drops.
        std::mem::forget(pending);
        let (next, calls) = Journal::adopt(copy).unwrap();
        assert_eq!(calls.len(), 1);
        assert!(same(&calls[0], &notif(2)));
        // Adopted: cleared, every slot free again.
        let next = Arc::new(next);
        let (_, again) = Journal::adopt(next.fd().try_clone_to_owned().unwrap()).unwrap();
        assert!(again.is_empty());
    }

    #[test]
    fn slots_run_out_and_come_back() {
        let journal = Arc::new(Journal::create().unwrap());
        let entries: Vec<Entry> = (0..SLOTS).map(|i| journal.record(&notif(u64::from(i))).unwrap()).collect();
        assert!(journal.record(&notif(9999)).is_none(), "every slot taken");
        drop(entries);
        assert!(journal.record(&notif(9999)).is_some());
    }

    #[test]
    fn garbage_is_no_call() {
        assert!(decode(&[0u8; RECORD]).is_none());
        let mut buf = encode(&notif(7));
        assert!(decode(&buf).is_some_and(|n| same(&n, &notif(7))));
        buf[0] ^= 1;
        assert!(decode(&buf).is_none());
    }
}
