//! `shared_counter`: lock-free reads from an immutable prebuilt map, but a
//! statistics counter shared by all threads and incremented on every
//! lookup (as the AVC's global `lookups` counter was). No lock at all, yet
//! every check writes one shared cache line: the cost seed 004 measured
//! for the lock, in its smallest form.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rampart_avc::protocol::CachePadded;
use rampart_avc::{ClassIdx, Perms, Sid};

use super::checker::{key, shared_per_call_checker, KeyMap, SecurityServer, ThreadCheck};

pub struct SharedCounter {
    map: Arc<KeyMap>,
    /// Alone on its line, so only the counter itself is shared.
    lookups: CachePadded<AtomicU64>,
    server: SecurityServer,
}

impl SharedCounter {
    pub fn new(map: Arc<KeyMap>, server: SecurityServer) -> SharedCounter {
        SharedCounter { map, lookups: CachePadded(AtomicU64::new(0)), server }
    }

    /// Lookups counted so far.
    pub fn lookups(&self) -> u64 {
        // Relaxed: a statistic, read after the threads were joined.
        self.lookups.load(Ordering::Relaxed)
    }
}

shared_per_call_checker!(SharedCounter);

impl ThreadCheck for &SharedCounter {
    #[inline]
    fn check(&mut self, ssid: Sid, tsid: Sid, class: ClassIdx, perms: Perms) -> bool {
        // Relaxed: a statistic; nothing is published through it. Still a
        // locked read-modify-write on a line every thread writes.
        self.lookups.fetch_add(1, Ordering::Relaxed);
        match self.map.get(&key(ssid, tsid, class)) {
            Some(passing) => passing.contains(perms),
            None => self.server.compute(ssid, tsid, class).contains(perms),
        }
    }
}
