//! The process table: which domain each process runs in.
//!
//! Only processes whose domain differs from the default, or that have an
//! exec pending, have an entry; every other process runs in the default
//! domain. Entries are created by `rampart run` (an exec context), by a
//! domain transition at exec, and by fork (the child inherits its
//! parent's entry); they are removed at exit. Those events come from the
//! proc connector, in kernel order ([`crate::proc_connector`]).
//!
//! Identity: an entry records the process's pidfs id (the inode of a
//! pidfd, unique for the boot). When an event's pidfd names another
//! process than the entry for its pid, the pid was reused and the entry
//! is stale: it is dropped, and the newcomer gets the default domain.
//!
//! Sharded read-write locks keep the lookup every event does off a
//! single global lock (seed 004); writes (fork, exec, exit) are rare
//! next to lookups.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use rampart_avc::Sid;
use rustc_hash::FxHashMap;

const SHARDS: usize = 64;

/// How long a decided transition waits for its exec: an exec opens its
/// interpreters (ELF `ld.so`, `#!` scripts) within that time, and those
/// opens must not be mistaken for a new exec.
pub const PENDING_EXEC_WINDOW: Duration = Duration::from_secs(2);

/// An exec context asked for with `rampart run` (`/proc/PID/attr/exec`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecRequest {
    pub sid: Sid,
    /// Skip the transition and entrypoint checks (root asked `--force`).
    pub force: bool,
}

/// A transition decided at the exec permission event, applied when the
/// exec completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingExec {
    pub sid: Sid,
    pub since: Instant,
}

#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub sid: Sid,
    /// pidfs id, when known.
    pub id: Option<u64>,
    pub request: Option<ExecRequest>,
    pub pending: Option<PendingExec>,
}

/// pid -> entry, sharded by pid.
#[derive(Debug)]
pub struct Processes {
    shards: Vec<RwLock<FxHashMap<u32, Entry>>>,
    /// Entries in all shards, changed under the shard's write lock.
    count: AtomicUsize,
}

impl Default for Processes {
    fn default() -> Self {
        Processes {
            shards: (0..SHARDS).map(|_| RwLock::new(FxHashMap::default())).collect(),
            count: AtomicUsize::new(0),
        }
    }
}

impl Processes {
    fn shard(&self, pid: u32) -> &RwLock<FxHashMap<u32, Entry>> {
        &self.shards[pid as usize % SHARDS]
    }

    fn read(&self, pid: u32) -> RwLockReadGuard<'_, FxHashMap<u32, Entry>> {
        self.shard(pid).read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self, pid: u32) -> RwLockWriteGuard<'_, FxHashMap<u32, Entry>> {
        self.shard(pid).write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The entry of `pid`, if any.
    pub fn get(&self, pid: u32) -> Option<Entry> {
        self.read(pid).get(&pid).copied()
    }

    /// The entry of `pid` if it is the process whose pidfs id is `id`;
    /// a stale entry (pid reused) is removed.
    pub fn get_checked(&self, pid: u32, id: Option<u64>) -> Option<Entry> {
        let entry = self.get(pid)?;
        match (entry.id, id) {
            (Some(known), Some(now)) if known != now => {
                self.remove_if(pid, known);
                None
            }
            _ => Some(entry),
        }
    }

    fn remove_if(&self, pid: u32, id: u64) {
        let mut shard = self.write(pid);
        if shard.get(&pid).is_some_and(|e| e.id == Some(id)) {
            shard.remove(&pid);
            self.counted(-1);
        }
    }

    /// Updates (or creates, from `default`) the entry of `pid`.
    pub fn update(&self, pid: u32, default: Entry, f: impl FnOnce(&mut Entry)) {
        let mut shard = self.write(pid);
        let entry = shard.entry(pid).or_insert_with(|| {
            self.counted(1);
            default
        });
        f(entry);
    }

    /// Adjusts the entry count. Relaxed: the count is a hint for
    /// [`Processes::is_empty`], whose callers synchronise through the
    /// connector lock, and for statistics.
    fn counted(&self, delta: isize) {
        if delta >= 0 {
            self.count.fetch_add(delta as usize, Ordering::Relaxed);
        } else {
            self.count.fetch_sub(delta.unsigned_abs(), Ordering::Relaxed);
        }
    }

    /// Fork: the child inherits the parent's domain (not its pending or
    /// requested exec, which belong to the parent's own exec).
    pub fn fork(&self, parent: u32, child: u32, child_id: Option<u64>) {
        let Some(p) = self.get(parent) else { return };
        let entry = Entry { sid: p.sid, id: child_id, request: None, pending: None };
        if self.write(child).insert(child, entry).is_none() {
            self.counted(1);
        }
    }

    /// Exec completed: a pending transition takes effect; else an exec
    /// request (checked when it was made: the file was on a mount the
    /// daemon does not watch, so no exec event came) does; either way the
    /// request is consumed. Returns the entry after the exec.
    pub fn exec(&self, pid: u32) -> Option<Entry> {
        let mut shard = self.write(pid);
        let entry = shard.get_mut(&pid)?;
        if let Some(p) = entry.pending.take() {
            entry.sid = p.sid;
        } else if let Some(r) = entry.request {
            entry.sid = r.sid;
        }
        entry.request = None;
        Some(*entry)
    }

    pub fn exit(&self, pid: u32) {
        if self.write(pid).remove(&pid).is_some() {
            self.counted(-1);
        }
    }

    /// Drops entries whose domain is `default` and that wait for nothing.
    pub fn prune_default(&self, default: Sid) {
        for shard in &self.shards {
            let mut s = shard.write().unwrap_or_else(PoisonError::into_inner);
            let before = s.len();
            s.retain(|_, e| e.sid != default || e.request.is_some() || e.pending.is_some());
            self.counted(-((before - s.len()) as isize));
        }
    }

    /// Drops entries for which `alive(pid, id)` is false (resync after
    /// lost connector messages, and periodic reaping).
    pub fn retain_alive(&self, alive: impl Fn(u32, Option<u64>) -> bool) -> usize {
        let mut removed = 0;
        for shard in &self.shards {
            let mut s = shard.write().unwrap_or_else(PoisonError::into_inner);
            let before = s.len();
            s.retain(|&pid, e| alive(pid, e.id));
            removed += before - s.len();
            self.counted(-((before - s.len()) as isize));
        }
        removed
    }

    pub fn len(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The distinct domains of all entries, including the domains they
    /// are about to run in (a decided transition, a `rampart run`
    /// request): a flush must not drop a domain from the scope just
    /// before its exec.
    pub fn domains(&self) -> Vec<Sid> {
        let mut out: Vec<Sid> = Vec::new();
        for shard in &self.shards {
            for e in shard.read().unwrap_or_else(PoisonError::into_inner).values() {
                for sid in [Some(e.sid), e.pending.map(|p| p.sid), e.request.map(|r| r.sid)].into_iter().flatten() {
                    if !out.contains(&sid) {
                        out.push(sid);
                    }
                }
            }
        }
        out
    }
}
