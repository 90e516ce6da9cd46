//! Security identifiers: context strings interned once as small integers.
//!
//! Why: the hot path compares and hashes labels; a `u32` does that in one
//! instruction, and being `Copy` it needs no reference count (seed 003:
//! the AppArmor label refcount was the bottleneck at 192 CPUs). A SID
//! names a context *string*, not a policy's numeric context, so it stays
//! valid across policy reloads; each snapshot resolves it lazily against
//! its own policy (see [`crate::selinux::ContextCache`]).
//!
//! SID -> string is a lock-free read of a [`SegmentedVec`]. String -> SID
//! (interning) takes a mutex: it happens when a label is first seen, not
//! per check. SIDs are never freed, as in the kernel's sidtab.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::AvcError;
use crate::segmented::SegmentedVec;

/// Number of SIDs the table hands out: a cache key (crate::key) names
/// source and target in 24 bits each.
pub const MAX_SIDS: usize = 1 << 24;

/// Longest context string accepted (the kernel's limit is one page).
pub const MAX_CONTEXT_LEN: usize = 4096;

/// An interned security context. Only a [`SidTable`] makes them; a SID
/// from another table names nothing here (or another context).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sid(u32);

impl Sid {
    pub fn as_u32(self) -> u32 {
        self.0
    }

    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }

    /// Rebuilds a SID from [`Sid::as_u32`] (for the atomics in [`crate::labeled`]).
    pub(crate) fn from_u32(value: u32) -> Sid {
        Sid(value)
    }
}

impl fmt::Display for Sid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sid {}", self.0)
    }
}

/// The interned contexts.
pub struct SidTable {
    /// SID -> context, read without locks.
    contexts: SegmentedVec<Arc<str>>,
    /// Context -> SID; also serialises interning, so SIDs are dense.
    by_context: Mutex<HashMap<Arc<str>, Sid>>,
}

impl SidTable {
    pub fn new() -> SidTable {
        SidTable { contexts: SegmentedVec::new(), by_context: Mutex::new(HashMap::new()) }
    }

    /// The SID of `context`, interning it if new. The string is not checked
    /// against any policy: a context the current policy rejects is still a
    /// label (of a file written under another policy, say) and resolves to
    /// the unlabeled context when a decision needs it.
    pub fn intern(&self, context: &str) -> Result<Sid, AvcError> {
        if context.is_empty() || context.len() > MAX_CONTEXT_LEN || context.contains('\0') {
            return Err(AvcError::InvalidContext { context: context.chars().take(80).collect() });
        }
        // A poisoned map is still consistent: every insertion below is a
        // single `insert` after the string was stored.
        let mut by_context = self.by_context.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(&sid) = by_context.get(context) {
            return Ok(sid);
        }
        let next = by_context.len();
        if next >= MAX_SIDS {
            return Err(AvcError::SidTableFull { max: MAX_SIDS });
        }
        let shared: Arc<str> = Arc::from(context);
        // INVARIANT (dense SIDs): SIDs are handed out in order under the
        // lock, so `next` was never initialised and the string we store is
        // the one we map.
        self.contexts.get_or_init(next, || Arc::clone(&shared));
        let sid = Sid(next as u32);
        by_context.insert(shared, sid);
        Ok(sid)
    }

    /// The context string of `sid`, without locks.
    pub fn context(&self, sid: Sid) -> Option<&str> {
        self.contexts.get(sid.index()).map(|s| &**s)
    }
}

impl Default for SidTable {
    fn default() -> Self {
        SidTable::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_idempotent_and_dense() {
        let t = SidTable::new();
        let a = t.intern("u:r:a_t:s0").unwrap();
        let b = t.intern("u:r:b_t:s0").unwrap();
        assert_eq!(t.intern("u:r:a_t:s0").unwrap(), a);
        assert_eq!((a.as_u32(), b.as_u32()), (0, 1));
        assert_eq!(t.context(b), Some("u:r:b_t:s0"));
        assert_eq!(t.context(Sid(7)), None);
        assert!(t.intern("").is_err());
        assert!(t.intern("a\0b").is_err());
    }
}
