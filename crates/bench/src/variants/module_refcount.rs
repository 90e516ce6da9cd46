//! `module_refcount`: the Stacker LSM's safe-unload scheme (seed 001):
//! each call into a security module is wrapped in an atomic increment and
//! decrement of the module's use count, on top of a lock-free (RCU-like)
//! lookup. Paul McKenney's point was that the read side needs nothing
//! more than the RCU read lock; the count is pure cost (dbench -8%, reaim
//! halved past 7 jobs).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rampart_avc::protocol::CachePadded;
use rampart_avc::{ClassIdx, Perms, Sid};

use super::checker::{key, shared_per_call_checker, KeyMap, SecurityServer, ThreadCheck};

pub struct ModuleRefcount {
    /// The module's decisions (the module is a lookup here).
    map: Arc<KeyMap>,
    /// `atomic_inc(&m->use)` / `atomic_dec`, shared by every caller.
    use_count: CachePadded<AtomicUsize>,
    server: SecurityServer,
}

impl ModuleRefcount {
    pub fn new(map: Arc<KeyMap>, server: SecurityServer) -> ModuleRefcount {
        ModuleRefcount { map, use_count: CachePadded(AtomicUsize::new(0)), server }
    }

    #[inline]
    fn hook(&self, ssid: Sid, tsid: Sid, class: ClassIdx, perms: Perms) -> bool {
        match self.map.get(&key(ssid, tsid, class)) {
            Some(passing) => passing.contains(perms),
            None => self.server.compute(ssid, tsid, class).contains(perms),
        }
    }
}

shared_per_call_checker!(ModuleRefcount);

impl ThreadCheck for &ModuleRefcount {
    #[inline]
    fn check(&mut self, ssid: Sid, tsid: Sid, class: ClassIdx, perms: Perms) -> bool {
        // Acquire: an unloader that saw the count at zero and freed the
        // module must not be overtaken by this call's reads (as
        // `try_module_get` orders them).
        self.use_count.fetch_add(1, Ordering::Acquire);
        let pass = self.hook(ssid, tsid, class, perms);
        // Release: the module's reads above happen before an unloader
        // that sees the count drop.
        self.use_count.fetch_sub(1, Ordering::Release);
        pass
    }
}
