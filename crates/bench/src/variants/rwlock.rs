//! `rwlock`: KaiGai's 2004 rwlock patch (seed 000): lookups take the lock
//! shared, so they no longer wait for each other, but taking a read lock
//! still writes the lock word: the cache line bounces just the same
//! (20-177 s where RCU took 11 s).

use std::sync::{PoisonError, RwLock};

use rampart_avc::{ClassIdx, Object, Perms, Sid, Subject};

use super::{key, Checker, KeyMap, PerCall, SecurityServer, ThreadCheck};
use crate::error::BenchError;

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

impl Checker for RwLockCache {
    type Thread<'a> = &'a RwLockCache;
    type Open<'a> = PerCall<&'a RwLockCache>;

    fn thread(&self, _index: usize) -> &RwLockCache {
        self
    }

    fn open<'a>(
        &'a self,
        index: usize,
        subject: &'a Subject,
        object: &'a Object,
        class: ClassIdx,
        perms: Perms,
    ) -> Result<Self::Open<'a>, BenchError> {
        Ok(PerCall::new(self.thread(index), subject, object, class, perms))
    }
}

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
