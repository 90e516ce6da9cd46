//! One published state of the AVC: everything a decision depends on, plus
//! the shared cache of decisions made from it.
//!
//! A snapshot never changes after it is published (only its L2 table
//! fills), so a check that holds one sees a consistent policy, boolean
//! state, enforcing mode, permissive set and module list: every decision
//! equals what exactly one snapshot gives, never a mix (issue 4,
//! requirement 4). A change publishes a new snapshot with an empty table.

use std::sync::Arc;

use rampart_policy::{BitSet, Booleans};

use crate::decision::CachedAv;
use crate::l2::L2Table;
use crate::mapping::{ClassIdx, Mapping};
use crate::module::{Combiner, Module, ModuleDecision, Query};
use crate::publish::Versioned;
use crate::selinux::{LoadedPolicy, SelinuxModule, SELINUX_MODULE};
use crate::sid::{Sid, SidTable};

pub(crate) struct Snapshot {
    pub(crate) seqno: u64,
    pub(crate) loaded: Arc<LoadedPolicy>,
    pub(crate) bools: Arc<Booleans>,
    pub(crate) enforcing: bool,
    /// Types permissive at run time, in addition to the policy's (by type
    /// value, like `Policy::permissive`).
    pub(crate) permissive_types: BitSet,
    /// Stacked modules after SELinux, in registration order.
    pub(crate) modules: Vec<Arc<dyn Module>>,
    pub(crate) l2: L2Table<CachedAv>,
}

impl Versioned for Snapshot {
    fn seqno(&self) -> u64 {
        self.seqno
    }
}

impl Snapshot {
    /// The combined decision of every module (the miss path).
    pub(crate) fn compute(
        &self,
        sids: &SidTable,
        mapping: &Mapping,
        ssid: Sid,
        tsid: Sid,
        class: ClassIdx,
    ) -> CachedAv {
        let mut combiner = Combiner::new(self.enforcing);
        self.for_each_verdict(sids, mapping, ssid, tsid, class, |_, d| combiner.add(d));
        combiner.finish()
    }

    /// Asks SELinux, then each stacked module, in order.
    pub(crate) fn for_each_verdict(
        &self,
        sids: &SidTable,
        mapping: &Mapping,
        ssid: Sid,
        tsid: Sid,
        class: ClassIdx,
        mut each: impl FnMut(&str, &ModuleDecision),
    ) {
        let Some(decl) = mapping.decl(class) else {
            // A class index from another mapping: nothing is allowed.
            each(SELINUX_MODULE, &ModuleDecision::DENY_ALL);
            return;
        };
        let query = Query {
            source: ssid,
            target: tsid,
            scontext: sids.context(ssid).unwrap_or(""),
            tcontext: sids.context(tsid).unwrap_or(""),
            class,
            class_name: &decl.name,
            perm_names: &decl.perms,
        };
        let selinux =
            SelinuxModule { loaded: &self.loaded, bools: &self.bools, permissive_types: &self.permissive_types };
        each(selinux.name(), &selinux.check(&query));
        for module in &self.modules {
            each(module.name(), &module.check(&query));
        }
    }
}
