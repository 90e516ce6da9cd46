//! What snapshots are built from (the source of truth of the AVC): the
//! loaded policy, the booleans, the mode, the permissive types and the
//! stacked modules. Only the publication API (crate::writer) changes it,
//! under the AVC's writer mutex.

use std::collections::BTreeSet;
use std::sync::Arc;

use rampart_policy::{BitSet, Booleans, Policy};

use crate::error::AvcError;
use crate::l2::L2Table;
use crate::mapping::Mapping;
use crate::module::Module;
use crate::selinux::LoadedPolicy;
use crate::snapshot::Snapshot;

/// What snapshots are built from (the "source of truth" of the AVC).
pub(crate) struct WriterState {
    pub(crate) loaded: Arc<LoadedPolicy>,
    pub(crate) bools: Arc<Booleans>,
    pub(crate) enforcing: bool,
    /// Runtime permissive types, by name, so they survive reloads (a name
    /// the new policy lacks is ignored until a policy defines it again).
    pub(crate) permissive_names: BTreeSet<String>,
    pub(crate) modules: Vec<Arc<dyn Module>>,
}

impl WriterState {
    pub(crate) fn new(
        policy: Arc<Policy>,
        bools: Booleans,
        mapping: &Mapping,
        enforcing: bool,
    ) -> Result<WriterState, AvcError> {
        Ok(WriterState {
            loaded: Arc::new(LoadedPolicy::new(policy, mapping)?),
            bools: Arc::new(bools),
            enforcing,
            permissive_names: BTreeSet::new(),
            modules: Vec::new(),
        })
    }

    /// A snapshot of this state, with an empty L2 table.
    pub(crate) fn snapshot(&self, seqno: u64, l2_threshold: usize) -> Snapshot {
        let policy = &self.loaded.policy;
        let permissive_types: BitSet =
            self.permissive_names.iter().filter_map(|name| policy.type_by_name(name)).map(|t| t.0).collect();
        Snapshot {
            seqno,
            loaded: Arc::clone(&self.loaded),
            bools: Arc::clone(&self.bools),
            enforcing: self.enforcing,
            permissive_types,
            modules: self.modules.clone(),
            l2: L2Table::new(seqno, l2_threshold),
        }
    }
}
