//! `unsync_hashmap`: the practical floor. A plain `std::collections::HashMap`
//! with exactly the hash function of Rampart's cache keys, no lock, no
//! atomic, no shared memory: each thread gets its own copy. Rampart's
//! target is to stay within 1.5x of it on hits.

use std::sync::Arc;

use rampart_avc::{ClassIdx, Object, Perms, Sid, Subject};

use super::checker::{key, Checker, KeyMap, PerCall, SecurityServer, ThreadCheck};
use crate::error::BenchError;

pub struct UnsyncHashmap {
    /// Copied into each thread.
    master: Arc<KeyMap>,
    server: SecurityServer,
}

impl UnsyncHashmap {
    pub fn new(master: Arc<KeyMap>, server: SecurityServer) -> UnsyncHashmap {
        UnsyncHashmap { master, server }
    }
}

/// One thread's private map.
pub struct UnsyncThread<'a> {
    map: KeyMap,
    server: &'a SecurityServer,
}

impl Checker for UnsyncHashmap {
    type Thread<'a> = UnsyncThread<'a>;
    type Open<'a> = PerCall<UnsyncThread<'a>>;

    fn thread(&self, _index: usize) -> UnsyncThread<'_> {
        UnsyncThread { map: (*self.master).clone(), server: &self.server }
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

impl ThreadCheck for UnsyncThread<'_> {
    #[inline]
    fn check(&mut self, ssid: Sid, tsid: Sid, class: ClassIdx, perms: Perms) -> bool {
        let k = key(ssid, tsid, class);
        if let Some(passing) = self.map.get(&k) {
            return passing.contains(perms);
        }
        let passing = self.server.compute(ssid, tsid, class);
        self.map.insert(k, passing);
        passing.contains(perms)
    }
}
