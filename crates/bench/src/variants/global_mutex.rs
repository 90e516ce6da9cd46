//! `global_mutex`: the SELinux AVC of 2001 (seed 004): one lock around the
//! whole cache, taken by every lookup. On one CPU it costs an uncontended
//! lock and unlock; on several, every check writes the lock's cache line,
//! which bounces between CPUs (the AVC lock was contended 73% of the time
//! on 8 CPUs).

use std::sync::{Mutex, PoisonError};

use rampart_avc::{ClassIdx, Perms, Sid};

use super::checker::{key, shared_per_call_checker, KeyMap, SecurityServer, ThreadCheck};

pub struct GlobalMutex {
    cache: Mutex<KeyMap>,
    server: SecurityServer,
}

impl GlobalMutex {
    /// An empty cache; misses are filled from `server` under the lock.
    pub fn new(server: SecurityServer) -> GlobalMutex {
        GlobalMutex { cache: Mutex::new(KeyMap::default()), server }
    }
}

shared_per_call_checker!(GlobalMutex);

impl ThreadCheck for &GlobalMutex {
    #[inline]
    fn check(&mut self, ssid: Sid, tsid: Sid, class: ClassIdx, perms: Perms) -> bool {
        let k = key(ssid, tsid, class);
        // A poisoned map is still a valid cache: every update is one insert.
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(passing) = cache.get(&k) {
            return passing.contains(perms);
        }
        // The 2001 AVC computed and inserted with the lock held.
        let passing = self.server.compute(ssid, tsid, class);
        cache.insert(k, passing);
        passing.contains(perms)
    }
}
