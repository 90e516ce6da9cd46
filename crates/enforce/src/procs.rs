//! Exec contexts asked for with `rampart run` (`/proc/PID/attr/exec` in
//! SELinux): recorded per process until its next exec event consumes
//! them. Which domain a process runs in is not kept here but by the
//! kernel, in cgroups ([`crate::cgroups`]).
//!
//! Identity: a request records the process's pidfs id, so a process that
//! reuses a dead requester's pid never inherits its request.

use std::fs::File;
use std::sync::{Arc, Mutex, PoisonError};

use rampart_avc::Sid;
use rustc_hash::FxHashMap;

use crate::marks::{InScope, ProfileInScope};

/// An exec context asked for with `rampart run`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecRequest {
    pub sid: Sid,
    /// Skip the transition and entrypoint checks (root asked `--force`).
    pub force: bool,
    /// The AppArmor profile to enter (`rampart run --apparmor`).
    pub apparmor: Option<Arc<str>>,
    /// The process carries the supervised-opens filter (crate::marks,
    /// "Scope"), and so will everything it starts.
    pub opens_supervised: bool,
}

/// A recorded request, with the file it named when that file is on a
/// filesystem the daemon does not mark (an exec-only inode mark makes its
/// exec an event: [`crate::groups::Groups::watch_exec`]).
#[derive(Debug)]
pub struct Held {
    pub request: ExecRequest,
    id: Option<u64>,
    pub watched: Option<File>,
}

/// pid -> request. Requests and execs are rare next to opens, so one
/// mutex is enough; no open or read looks here.
#[derive(Debug, Default)]
pub struct ExecRequests {
    map: Mutex<FxHashMap<u32, Held>>,
}

impl ExecRequests {
    /// Records `request` for `pid` (whose pidfs id is `id`), replacing an
    /// earlier one, which is returned (its watched file to be unwatched).
    pub fn insert(&self, pid: u32, id: Option<u64>, request: ExecRequest, watched: Option<File>) -> Option<Held> {
        self.lock().insert(pid, Held { request, id, watched })
    }

    /// Takes the request of `pid` if it is the process whose pidfs id is
    /// `id` (a stale one, of a reused pid, is dropped and returned too, to
    /// be unwatched, but not applied).
    pub fn take(&self, pid: u32, id: Option<u64>) -> (Option<ExecRequest>, Option<Held>) {
        let Some(held) = self.lock().remove(&pid) else { return (None, None) };
        let same = match (held.id, id) {
            (Some(known), Some(now)) => known == now,
            _ => true,
        };
        (same.then(|| held.request.clone()), Some(held))
    }

    /// Removes the requests of processes for which `alive(pid, id)` is
    /// false, returning them (to be unwatched).
    pub fn prune(&self, alive: impl Fn(u32, Option<u64>) -> bool) -> Vec<Held> {
        let mut map = self.lock();
        let dead: Vec<u32> = map.iter().filter(|(pid, h)| !alive(**pid, h.id)).map(|(pid, _)| *pid).collect();
        dead.into_iter().filter_map(|pid| map.remove(&pid)).collect()
    }

    /// The AppArmor profiles requested (crate::marks: in scope from the
    /// request on).
    pub fn profiles(&self) -> Vec<ProfileInScope> {
        self.in_scope(|r| r.apparmor.clone())
    }

    /// The domains requested (in scope before their exec).
    pub fn domains(&self) -> Vec<InScope> {
        self.in_scope(|r| Some(r.sid))
    }

    /// What `who` says of each request, merged.
    fn in_scope<K: PartialEq>(&self, who: impl Fn(&ExecRequest) -> Option<K>) -> Vec<InScope<K>> {
        let mut out = Vec::new();
        for h in self.lock().values() {
            if let Some(k) = who(&h.request) {
                InScope::merge_into(&mut out, InScope { who: k, direct_writes: !h.request.opens_supervised });
            }
        }
        out
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FxHashMap<u32, Held>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_taken_once_and_only_by_its_process() {
        let r = ExecRequests::default();
        let sid = rampart_avc::SidTable::new().intern("u:r:t:s0").unwrap();
        let req = ExecRequest { sid, force: false, apparmor: None, opens_supervised: false };
        assert!(r.insert(10, Some(7), req.clone(), None).is_none());
        assert_eq!(r.domains(), vec![InScope { who: req.sid, direct_writes: true }]);
        // Another process with the same pid: dropped, not applied.
        let (applied, held) = r.take(10, Some(8));
        assert_eq!(applied, None);
        assert!(held.is_some());
        assert!(r.take(10, Some(7)).0.is_none(), "gone with the stale take");
        r.insert(10, Some(7), req.clone(), None);
        assert_eq!(r.take(10, Some(7)).0, Some(req.clone()));
        assert_eq!(r.take(10, Some(7)).0, None, "consumed");
        r.insert(11, Some(1), req.clone(), None);
        r.insert(12, Some(2), ExecRequest { apparmor: Some("p".into()), ..req.clone() }, None);
        assert_eq!(r.profiles(), vec![ProfileInScope { who: Arc::from("p"), direct_writes: true }]);
        let gone = r.prune(|pid, _| pid == 12);
        assert_eq!(gone.len(), 1);
        assert!(r.take(12, Some(2)).0.is_some());
        // A domain asked with supervised opens and without: one of its
        // processes opens for writing directly.
        r.insert(13, Some(3), ExecRequest { opens_supervised: true, ..req.clone() }, None);
        assert_eq!(r.domains(), vec![InScope { who: req.sid, direct_writes: false }]);
        r.insert(14, Some(4), req.clone(), None);
        assert_eq!(r.domains(), vec![InScope { who: req.sid, direct_writes: true }]);
        r.take(14, Some(4));
        assert_eq!(r.domains(), vec![InScope { who: req.sid, direct_writes: false }]);
    }
}
