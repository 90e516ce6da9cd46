//! The publication API: every change builds a whole new snapshot from the
//! writer's state and publishes it (copy and replace, as with RCU in seed
//! 000). Writers are serialised by the AVC's writer mutex; checks never
//! take it (a reclaim on the miss path only tries it), so a reload never
//! blocks a check, and every decision comes from either the old or the new
//! snapshot, never from a mix.
//!
//! Each method returns the sequence number of the snapshot it published.

use std::sync::{Arc, MutexGuard, PoisonError};

use rampart_policy::{BoolId, Booleans, Policy};

use crate::avc::Avc;
use crate::error::AvcError;
use crate::module::Module;
use crate::selinux::{LoadedPolicy, SELINUX_MODULE};
use crate::sid::Sid;
use crate::sync;
use crate::writer_state::WriterState;

impl Avc {
    /// Replaces the policy. Boolean values carry over by name (as the
    /// kernel's policy load preserves them); booleans new to this policy
    /// take their defaults. SIDs stay valid: contexts the new policy
    /// rejects resolve to its unlabeled context. Fails, changing nothing,
    /// if the policy says `handle_unknown reject` and lacks a declared
    /// class or permission.
    pub fn load_policy(&self, policy: Arc<Policy>) -> Result<u64, AvcError> {
        let loaded = LoadedPolicy::new(policy, &self.mapping)?;
        let mut state = self.lock_writer();
        let bools = carry_over_booleans(&state.loaded.policy, &state.bools, &loaded.policy);
        state.loaded = Arc::new(loaded);
        state.bools = Arc::new(bools);
        Ok(self.commit(state))
    }

    /// Sets several booleans at once: one snapshot, so no check sees some
    /// of the changes without the others. Fails, changing nothing, if a
    /// name is not a boolean of the loaded policy.
    pub fn set_booleans(&self, changes: &[(&str, bool)]) -> Result<u64, AvcError> {
        let mut state = self.lock_writer();
        let policy = Arc::clone(&state.loaded.policy);
        let ids = changes
            .iter()
            .map(|&(name, value)| match policy.names.bools.get(name) {
                Some(&id) => Ok((id, value)),
                None => Err(AvcError::UnknownBoolean(name.to_owned())),
            })
            .collect::<Result<Vec<(BoolId, bool)>, AvcError>>()?;
        state.bools = Arc::new(state.bools.with(&policy, &ids));
        Ok(self.commit(state))
    }

    /// The loaded policy and boolean values (cold: takes the writer
    /// lock), for callers that compute more than access vectors, such as
    /// an exec's domain transition.
    pub fn policy_state(&self) -> (Arc<Policy>, Arc<Booleans>, bool) {
        let state = self.lock_writer();
        (Arc::clone(&state.loaded.policy), Arc::clone(&state.bools), state.enforcing)
    }

    /// Whether SELinux's denials for subject `sid` are enforced: global
    /// enforcing mode, and its type permissive neither in the policy nor
    /// at run time (cold: takes the writer lock).
    pub fn enforced_for(&self, sid: Sid) -> bool {
        let state = self.lock_writer();
        let policy = &state.loaded.policy;
        let Some(ctx) = self.context(sid).and_then(|c| policy.parse_context(c).ok()) else { return state.enforcing };
        let runtime = state.permissive_names.iter().any(|n| policy.type_by_name(n) == Some(ctx.ty));
        state.enforcing && !policy.is_permissive(ctx.ty) && !runtime
    }

    /// Global enforcing (true) or permissive (false) mode.
    pub fn set_enforcing(&self, enforcing: bool) -> u64 {
        let mut state = self.lock_writer();
        state.enforcing = enforcing;
        self.commit(state)
    }

    /// Makes a domain permissive at run time (or no longer), in addition
    /// to the policy's `permissive` types. Fails if the loaded policy has
    /// no such type.
    pub fn set_permissive_domain(&self, type_name: &str, permissive: bool) -> Result<u64, AvcError> {
        let mut state = self.lock_writer();
        let is_type = state
            .loaded
            .policy
            .type_by_name(type_name)
            .and_then(|t| state.loaded.policy.types.get(t.index()))
            .is_some_and(|t| !t.attribute);
        if !is_type {
            return Err(AvcError::UnknownType(type_name.to_owned()));
        }
        if permissive {
            state.permissive_names.insert(type_name.to_owned());
        } else {
            state.permissive_names.remove(type_name);
        }
        Ok(self.commit(state))
    }

    /// Stacks a module after SELinux and the modules registered before it.
    pub fn register_module(&self, module: Arc<dyn Module>) -> Result<u64, AvcError> {
        let mut state = self.lock_writer();
        let name = module.name();
        if name == SELINUX_MODULE || state.modules.iter().any(|m| m.name() == name) {
            return Err(AvcError::DuplicateModule(name.to_owned()));
        }
        state.modules.push(module);
        Ok(self.commit(state))
    }

    /// Removes a module. It is freed once no snapshot holds it, that is
    /// when every thread that held an older snapshot has refreshed or
    /// quiesced: then no check can still be running in it.
    pub fn unregister_module(&self, name: &str) -> Result<u64, AvcError> {
        let mut state = self.lock_writer();
        let Some(i) = state.modules.iter().position(|m| m.name() == name) else {
            return Err(AvcError::UnknownModule(name.to_owned()));
        };
        state.modules.remove(i);
        Ok(self.commit(state))
    }

    /// Republishes the same state with empty caches: call it when a
    /// module's own state changed, so no cached decision outlives it.
    pub fn invalidate(&self) -> u64 {
        self.commit(self.lock_writer())
    }

    fn lock_writer(&self) -> MutexGuard<'_, WriterState> {
        // A poisoned state is still whole: every field is replaced in one
        // assignment, and nothing was published from a half-done change.
        self.writer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Publishes a snapshot of `state`, unlocks, then drops the previous
    /// snapshot's reference: freeing a snapshot can run a module's `Drop`,
    /// which must not run under the writer lock. The caller holds the lock
    /// (one writer), so the next sequence number is ours alone.
    pub(crate) fn commit(&self, state: MutexGuard<'_, WriterState>) -> u64 {
        let seqno = self.published.seqno() + 1;
        let released = self.published.publish(sync::Arc::new(state.snapshot(seqno, self.l2_threshold)));
        drop(state);
        self.slots.with(|slot| self.retire(&slot.stats, Some(released)));
        seqno
    }
}

/// The new policy's booleans, taking the old values of same-named ones.
fn carry_over_booleans(old: &Policy, old_bools: &Booleans, new: &Policy) -> Booleans {
    let values = new
        .bools
        .iter()
        .map(|b| old.names.bools.get(&b.name).and_then(|&id| old_bools.get(id)).unwrap_or(b.default))
        .collect();
    Booleans::from_values(new, values)
}
