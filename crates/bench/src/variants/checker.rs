//! The one interface every design implements ([`Checker`], per thread
//! [`ThreadCheck`], per open object [`OpenCheck`]) and what all of them
//! share: the packed key, the decision map, and the reference AVC that
//! fills a miss ([`SecurityServer`]). Apart from the designs themselves
//! (the sibling files) and the registry that picks one ([`super`]), so
//! that neither depends on the other.

use std::collections::HashMap;
use std::sync::Arc;

use rampart_avc::{Avc, CacheKey, ClassIdx, KeyHasher, Object, Perms, Sid, Subject};

use crate::error::BenchError;

/// A decision cache as the baselines keep it: packed key -> permissions
/// that pass, with Rampart's hash function.
pub type KeyMap = HashMap<u64, Perms, KeyHasher>;

/// Most threads a per-thread variant keeps separate state for; more
/// threads share slots (still correct, only no longer private).
pub const MAX_THREADS: usize = 64;

/// A design under test. Shared by every thread of a workload.
pub trait Checker: Sync {
    /// What one thread checks through: often just `&Self`; a copy of the
    /// cache or a private counter slot for per-thread designs.
    type Thread<'a>: ThreadCheck
    where
        Self: 'a;
    /// An open object (a file, a device) checked on every read or write.
    type Open<'a>: OpenCheck
    where
        Self: 'a;

    /// The checker of thread `index` (0-based within the workload).
    fn thread(&self, index: usize) -> Self::Thread<'_>;

    /// Opens `object` for `subject` with `perms` of `class`; later calls
    /// to [`OpenCheck::permission`] check those permissions again.
    fn open<'a>(
        &'a self,
        index: usize,
        subject: &'a Subject,
        object: &'a Object,
        class: ClassIdx,
        perms: Perms,
    ) -> Result<Self::Open<'a>, BenchError>;
}

/// One thread's checks.
pub trait ThreadCheck {
    /// Whether `perms` of `class` pass for `ssid` on `tsid`.
    fn check(&mut self, ssid: Sid, tsid: Sid, class: ClassIdx, perms: Perms) -> bool;
}

/// The check on each use of an open object.
pub trait OpenCheck {
    /// Whether the permissions asked at open still pass.
    fn permission(&mut self) -> bool;
}

/// The open-object check of a variant without a fast path: a full check
/// of the (subject, object) key through the variant's cache on every use,
/// as SELinux did on every read and write before 2007.
pub struct PerCall<T> {
    thread: T,
    ssid: Sid,
    tsid: Sid,
    class: ClassIdx,
    perms: Perms,
}

impl<T: ThreadCheck> PerCall<T> {
    pub fn new(thread: T, subject: &Subject, object: &Object, class: ClassIdx, perms: Perms) -> PerCall<T> {
        PerCall { thread, ssid: subject.sid(), tsid: object.sid(), class, perms }
    }
}

impl<T: ThreadCheck> OpenCheck for PerCall<T> {
    #[inline]
    fn permission(&mut self) -> bool {
        self.thread.check(self.ssid, self.tsid, self.class, self.perms)
    }
}

/// [`Checker`] for the common shape: every thread checks through `&$t`
/// (which implements [`ThreadCheck`]) and open objects check in full on
/// every use ([`PerCall`]).
macro_rules! shared_per_call_checker {
    ($t:ty) => {
        impl $crate::variants::checker::Checker for $t {
            type Thread<'a> = &'a $t;
            type Open<'a> = $crate::variants::checker::PerCall<&'a $t>;

            fn thread(&self, _index: usize) -> &$t {
                self
            }

            fn open<'a>(
                &'a self,
                index: usize,
                subject: &'a rampart_avc::Subject,
                object: &'a rampart_avc::Object,
                class: rampart_avc::ClassIdx,
                perms: rampart_avc::Perms,
            ) -> Result<Self::Open<'a>, $crate::error::BenchError> {
                Ok($crate::variants::checker::PerCall::new(self.thread(index), subject, object, class, perms))
            }
        }
    };
}
pub(crate) use shared_per_call_checker;

/// The packed key every cache here uses, as Rampart's cache packs it.
#[inline]
pub fn key(ssid: Sid, tsid: Sid, class: ClassIdx) -> u64 {
    CacheKey::new(ssid, tsid, class).as_u64()
}

/// The slow path of every baseline: a separate Rampart AVC asked for the
/// full vector, standing in for the policy engine behind a cache. Only
/// misses reach it, and every cache is warmed before it is timed.
#[derive(Clone)]
pub struct SecurityServer {
    avc: Arc<Avc>,
}

impl SecurityServer {
    pub fn new(avc: Arc<Avc>) -> SecurityServer {
        SecurityServer { avc }
    }

    /// The permissions of `class` that pass for `ssid` on `tsid`.
    #[cold]
    #[inline(never)]
    pub fn compute(&self, ssid: Sid, tsid: Sid, class: ClassIdx) -> Perms {
        passing(&self.avc, ssid, tsid, class)
    }
}

/// The permissions that pass: allowed ones, plus denied ones when the
/// denial is not enforced (permissive), matching [`rampart_avc::Decision::passes`].
pub fn passing(avc: &Avc, ssid: Sid, tsid: Sid, class: ClassIdx) -> Perms {
    let d = avc.has_perm_noaudit(ssid, tsid, class, Perms::ALL);
    if d.permissive {
        d.allowed | d.denied
    } else {
        d.allowed
    }
}
