//! `rwlock`: KaiGai's 2004 rwlock patch (seed 000): lookups take the lock
//! shared, so they no longer wait for each other, but taking a read lock
//! still writes the lock word: the cache line bounces just the same
//! (20-177 s where RCU took 11 s).

use std::sync::{PoisonError, RwLock};

use rampart_avc::{ClassIdx, Perms, Sid};

use super::checker::{key, shared_per_call_checker, KeyMap, SecurityServer, ThreadCheck};

pub struct RwLockCache {
    cache: RwLock<KeyMap>,
    server: SecurityServer,
}

impl RwLockCache {
    /// An empty cache; a miss computes outside the lock and inserts under
    /// the write lock.
    pub fn new(server: SecurityServer) -> RwLockCache {
        RwLockCache { cache: RwLock::new(KeyMap::default()), server }
    }
}

shared_per_call_checker!(RwLockCache);

impl ThreadCheck for &RwLockCache {
    #[inline]
    fn check(&mut self, ssid: Sid, tsid: Sid, class: ClassIdx, perms: Perms) -> bool {
        let k = key(ssid, tsid, class);
        // A poisoned map is still a valid cache: every update is one insert.
        let found = self.cache.read().unwrap_or_else(PoisonError::into_inner).get(&k).copied();
        if let Some(passing) = found {
            return passing.contains(perms);
        }
        let passing = self.server.compute(ssid, tsid, class);
        self.cache.write().unwrap_or_else(PoisonError::into_inner).insert(k, passing);
        passing.contains(perms)
    }
}
