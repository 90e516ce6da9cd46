//! The check path: per-thread L1, then the snapshot's shared L2, then the
//! modules.
//!
//! The hit path (`has_perm_noaudit` up to an L1 or L2 hit) takes no lock,
//! performs no atomic read-modify-write and stores only to memory its own
//! thread owns (its statistics row; on an L2 hit, its L1). Its shared
//! reads are the global sequence number (written once per publish) and,
//! on an L1 miss, the L2 slots (written once per insert). The miss path is
//! a separate `#[inline(never)]` function, as in the kernel's `avc.c`, so
//! the hit path stays small enough to inline into callers.

use std::sync::TryLockError;

use crate::avc::Avc;
use crate::decision::{CachedAv, Decision};
use crate::key::CacheKey;
use crate::l2::{Grant, Insert};
use crate::mapping::{ClassIdx, Perms};
use crate::sid::Sid;
use crate::snapshot::Snapshot;
use crate::thread::ThreadSlot;

/// What a cold path found: the vector to decide from and the sequence
/// number of the snapshot it belongs to (the decision is
/// `av.decide(requested, seqno)`).
#[derive(Clone, Copy)]
struct Resolved {
    av: CachedAv,
    seqno: u64,
}

/// One check's inputs, carried down the miss path: only the packed key
/// and the request, so the hit path keeps nothing else live for it (the
/// SIDs and class unpack losslessly, the hash is recomputed).
#[derive(Clone, Copy)]
struct Lookup {
    key: CacheKey,
    requested: Perms,
}

impl Lookup {
    fn key(self) -> u64 {
        self.key.as_u64()
    }

    fn hash(self) -> u64 {
        self.key.hash()
    }
}

impl Avc {
    /// Checks `requested` permissions of `ssid` on `tsid` in class
    /// `tclass`, without auditing (the kernel's `avc_has_perm_noaudit`).
    ///
    /// A permissive denial (see [`Decision::permissive`]) is returned once
    /// and then cached as granted, so the caller that audits it (see
    /// [`Avc::has_perm`]) reports it once, as the kernel does.
    ///
    /// Always inlined: everything cold is out of line, and inlining the
    /// rest saves a call and its register spills per check (about 5.2 ns
    /// to 3.9 ns per hit on the development VM).
    #[inline(always)]
    pub fn has_perm_noaudit(&self, ssid: Sid, tsid: Sid, tclass: ClassIdx, requested: Perms) -> Decision {
        match self.slots.cached() {
            Some(slot) => self.check_in(slot, ssid, tsid, tclass, requested),
            None => self.check_finding_slot(ssid, tsid, tclass, requested),
        }
    }

    /// The decision [`Avc::has_perm_noaudit`] would return, without its
    /// one side effect: a permissive denial is not turned into a grant.
    /// For questions asked on behalf of no access, such as "could any
    /// domain be denied this object?" (the enforcer's ignore marks), which
    /// must not use up the one report a permissive denial gets. A key in
    /// neither cache is computed and not inserted.
    pub fn peek(&self, ssid: Sid, tsid: Sid, tclass: ClassIdx, requested: Perms) -> Decision {
        self.slots.with(|slot| {
            if self.published.moved_past(slot.seqno.get()) {
                self.adopt(slot);
            }
            let key = CacheKey::new(ssid, tsid, tclass);
            let (k, hash) = (key.as_u64(), key.hash());
            if let Some(hit) = slot.l1.get(k, hash).or_else(|| slot.l1.get_secondary(k, hash)) {
                return hit.decide(requested, slot.seqno.get());
            }
            let snapshot = match slot.reader.try_borrow().ok().and_then(|r| r.held().cloned()) {
                Some(held) => held,
                None => self.published.load(),
            };
            let av = match snapshot.l2.lookup(k, hash) {
                Some(av) => av,
                None => snapshot.compute(&self.sids, &self.mapping, ssid, tsid, tclass),
            };
            av.decide(requested, snapshot.seqno)
        })
    }

    /// This thread used another AVC last (or none): find or claim its slot
    /// here, then check.
    #[cold]
    #[inline(never)]
    fn check_finding_slot(&self, ssid: Sid, tsid: Sid, tclass: ClassIdx, requested: Perms) -> Decision {
        self.slots.with(|slot| self.check_in(slot, ssid, tsid, tclass, requested))
    }

    /// The check in this thread's slot.
    #[inline(always)]
    fn check_in(&self, slot: &ThreadSlot, ssid: Sid, tsid: Sid, tclass: ClassIdx, requested: Perms) -> Decision {
        slot.stats.count_lookup();
        // One Acquire load of a line written only by publishes.
        if self.published.moved_past(slot.seqno.get()) {
            self.adopt(slot);
        }
        let key = CacheKey::new(ssid, tsid, tclass);
        let hash = key.hash();
        // Built only on the way to a cold path, so the hit path does not
        // spill it to the stack.
        let lookup = || Lookup { key, requested };
        // The cold paths return the vector and snapshot to decide from,
        // not a `Decision`: a 32-byte `Decision` returned through memory
        // made every hit store and reload its result via the stack.
        let resolved = match slot.l1.get(key.as_u64(), hash) {
            Some(hit) => {
                let decision = hit.decide(requested, slot.seqno.get());
                if !decision.permissive {
                    return decision;
                }
                self.grant_permissive(slot, lookup(), hit.av())
            }
            None => self.l1_miss(slot, lookup()),
        };
        resolved.av.decide(requested, resolved.seqno)
    }

    /// Takes the current snapshot, releasing the old one (once per publish
    /// per thread).
    #[cold]
    #[inline(never)]
    fn adopt(&self, slot: &ThreadSlot) {
        if let Some(released) = slot.adopt(&self.published) {
            self.retire(&slot.stats, released);
        }
    }

    /// Not in L1: look in the snapshot's L2 (still the hit path: loads only).
    #[inline(never)]
    fn l1_miss(&self, slot: &ThreadSlot, lookup: Lookup) -> Resolved {
        // A key whose primary L1 set was full sits in its secondary set.
        if let Some(hit) = slot.l1.get_secondary(lookup.key(), lookup.hash()) {
            let av = hit.av();
            if av.decide(lookup.requested, 0).permissive {
                return self.grant_permissive(slot, lookup, av);
            }
            return Resolved { av, seqno: slot.seqno.get() };
        }
        let Ok(reader) = slot.reader.try_borrow() else { return self.check_uncached(slot, lookup) };
        let Some(snapshot) = reader.held() else { return self.check_uncached(slot, lookup) };
        let (key, hash) = (lookup.key(), lookup.hash());
        match snapshot.l2.lookup(key, hash) {
            Some(av) => {
                slot.l1.set(key, hash, av);
                let decision = av.decide(lookup.requested, snapshot.seqno);
                if decision.permissive {
                    self.grant_in(slot, snapshot, lookup, av)
                } else {
                    Resolved { av, seqno: snapshot.seqno }
                }
            }
            None => self.l2_miss(slot, snapshot, lookup),
        }
    }

    /// In neither cache: ask the modules and insert the result.
    #[cold]
    #[inline(never)]
    fn l2_miss(&self, slot: &ThreadSlot, snapshot: &Snapshot, lookup: Lookup) -> Resolved {
        slot.stats.count_miss();
        let av =
            snapshot.compute(&self.sids, &self.mapping, lookup.key.source(), lookup.key.target(), lookup.key.class());
        let decision = av.decide(lookup.requested, snapshot.seqno);
        // A permissive denial is reported by this call, so the cache
        // holds it granted from the start.
        let cached = if decision.permissive { av.granting(decision.denied) } else { av };
        let (key, hash) = (lookup.key(), lookup.hash());
        let ours = Resolved { av, seqno: snapshot.seqno };
        match snapshot.l2.insert(key, hash, cached, snapshot.seqno, self.published.seqno_cell()) {
            Insert::Inserted { threshold_reached } => {
                slot.stats.count_allocation();
                slot.l1.set(key, hash, cached);
                if threshold_reached {
                    self.reclaim(slot, snapshot);
                }
                ours
            }
            Insert::Existing(theirs) => {
                // Another thread computed it first; its entry may already
                // carry the permissive grant (then it reported, not us).
                slot.l1.set(key, hash, theirs);
                if theirs.decide(lookup.requested, snapshot.seqno).permissive {
                    self.grant_in(slot, snapshot, lookup, theirs)
                } else {
                    Resolved { av: theirs, seqno: snapshot.seqno }
                }
            }
            Insert::Full => {
                slot.l1.set(key, hash, cached);
                self.reclaim(slot, snapshot);
                ours
            }
            Insert::Stale => {
                // A newer snapshot exists; this thread moves to it at its
                // next check. The decision is still that of its snapshot.
                slot.l1.set(key, hash, cached);
                ours
            }
        }
    }

    /// A permissive denial found in the L1: grant it in the L2.
    #[cold]
    #[inline(never)]
    fn grant_permissive(&self, slot: &ThreadSlot, lookup: Lookup, av: CachedAv) -> Resolved {
        let unchanged = Resolved { av, seqno: slot.seqno.get() };
        let Ok(reader) = slot.reader.try_borrow() else { return unchanged };
        let Some(snapshot) = reader.held() else { return unchanged };
        self.grant_in(slot, snapshot, lookup, av)
    }

    /// Grants a permissive denial of `av` (a vector of `snapshot`) in the
    /// L2 so it is reported once: the thread whose compare-exchange
    /// succeeds returns the denial (and reports it); a thread that finds
    /// it granted returns the grant.
    fn grant_in(&self, slot: &ThreadSlot, snapshot: &Snapshot, lookup: Lookup, av: CachedAv) -> Resolved {
        let denied = av.decide(lookup.requested, snapshot.seqno).denied;
        let (key, hash) = (lookup.key(), lookup.hash());
        let upgrade = |current: &CachedAv| (!current.allowed.contains(denied)).then(|| current.granting(denied));
        let seqno = snapshot.seqno;
        match snapshot.l2.grant(key, hash, upgrade) {
            Grant::Replaced(granted) => {
                slot.stats.count_allocation();
                slot.l1.set(key, hash, granted);
                Resolved { av, seqno }
            }
            Grant::Unchanged(current) => {
                slot.l1.set(key, hash, current);
                Resolved { av: current, seqno }
            }
            Grant::Absent => {
                // Not in the L2 (its insert was refused): only this
                // thread's L1 remembers the grant.
                slot.l1.set(key, hash, av.granting(denied));
                Resolved { av, seqno }
            }
        }
    }

    /// The L2 reached its threshold: publish the same state with an empty
    /// table, unless a writer is publishing anyway (never wait for one).
    #[cold]
    #[inline(never)]
    fn reclaim(&self, slot: &ThreadSlot, full: &Snapshot) {
        let state = match self.writer.try_lock() {
            Ok(state) => state,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => return,
        };
        // One writer: with the lock held the current snapshot cannot
        // change, so this tells whether `full` was already replaced.
        if self.published.seqno() != full.seqno {
            return;
        }
        slot.stats.count_reclaims(full.l2.entries());
        self.commit(state);
    }

    /// A check that cannot use this thread's snapshot (it is being swapped
    /// further up the stack): computed from the current snapshot, not
    /// cached, so a permissive denial is reported each time.
    #[cold]
    #[inline(never)]
    fn check_uncached(&self, slot: &ThreadSlot, lookup: Lookup) -> Resolved {
        slot.stats.count_miss();
        let snapshot = self.published.load();
        let av =
            snapshot.compute(&self.sids, &self.mapping, lookup.key.source(), lookup.key.target(), lookup.key.class());
        let seqno = snapshot.seqno;
        self.retire(&slot.stats, Some(snapshot));
        Resolved { av, seqno }
    }
}
