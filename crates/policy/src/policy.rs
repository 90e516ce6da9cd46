//! [`Policy`]: the validated policy database and its name lookups.

use rustc_hash::FxHashMap as HashMap;
use std::path::Path;

use crate::bitset::BitSet;
use crate::error::PolicyError;
use crate::index::AvIndex;
use crate::model::*;

/// Name -> value tables. Types, sensitivities and categories include their
/// aliases.
#[derive(Clone, Debug, Default)]
pub struct Names {
    pub classes: HashMap<String, ClassId>,
    pub roles: HashMap<String, RoleId>,
    pub types: HashMap<String, TypeId>,
    pub users: HashMap<String, UserId>,
    pub bools: HashMap<String, BoolId>,
    pub sens: HashMap<String, u32>,
    pub cats: HashMap<String, u32>,
}

/// A kernel binary policy, read and validated. Immutable.
#[derive(Debug)]
pub struct Policy {
    pub version: u32,
    pub mls: bool,
    pub handle_unknown: HandleUnknown,
    pub policycaps: BitSet,
    /// Types declared `permissive`. Unlike every other type bitmap, the
    /// kernel indexes this one by type value, not value - 1.
    pub permissive: BitSet,
    pub commons: Vec<Common>,
    pub classes: Vec<Class>,
    pub roles: Vec<Role>,
    pub types: Vec<TypeDatum>,
    pub users: Vec<User>,
    pub bools: Vec<Bool>,
    pub sens: Vec<Sensitivity>,
    pub cats: Vec<Category>,
    pub names: Names,
    /// Every avtab entry, unconditional first, then each conditional's
    /// true and false lists, in file order.
    pub avtab: Vec<AvRule>,
    /// Extended permissions of the xperms rules, by `AvRule::data`.
    pub xperms: Vec<Xperms>,
    pub conds: Vec<CondNode>,
    pub role_trans: Vec<RoleTrans>,
    pub role_allow: Vec<RoleAllow>,
    pub filename_trans: Vec<FilenameTrans>,
    pub ocontexts: OContexts,
    pub genfs: Vec<Genfs>,
    pub range_trans: Vec<RangeTrans>,
    /// For each type: the attributes it has, and itself.
    pub type_attrs: Vec<BitSet>,
    /// For each attribute: its member types; for a type: itself.
    pub attr_types: Vec<BitSet>,
    pub(crate) index: AvIndex,
    /// The `process` class, if the policy defines it.
    pub process_class: Option<ClassId>,
    /// `transition | dyntransition` of class process.
    pub process_trans_dyntrans: AccessVector,
}

impl Policy {
    // `Policy::from_bytes` is in read.rs, with the reader it runs.

    /// Reads a policy file.
    pub fn from_file(path: &Path) -> Result<Policy, crate::LoadError> {
        let bytes = std::fs::read(path).map_err(|e| crate::LoadError::Io { path: path.to_owned(), source: e })?;
        Policy::from_bytes(&bytes).map_err(|e| crate::LoadError::Policy { path: path.to_owned(), source: e })
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new_unindexed(
        version: u32,
        mls: bool,
        handle_unknown: HandleUnknown,
        policycaps: BitSet,
        permissive: BitSet,
        commons: Vec<Common>,
        classes: Vec<Class>,
        roles: Vec<Role>,
        types: Vec<TypeDatum>,
        users: Vec<User>,
        bools: Vec<Bool>,
        sens: Vec<Sensitivity>,
        cats: Vec<Category>,
        names: Names,
    ) -> Policy {
        let mut p = Policy {
            version,
            mls,
            handle_unknown,
            policycaps,
            permissive,
            commons,
            classes,
            roles,
            types,
            users,
            bools,
            sens,
            cats,
            names,
            avtab: Vec::new(),
            xperms: Vec::new(),
            conds: Vec::new(),
            role_trans: Vec::new(),
            role_allow: Vec::new(),
            filename_trans: Vec::new(),
            ocontexts: OContexts::default(),
            genfs: Vec::new(),
            range_trans: Vec::new(),
            type_attrs: Vec::new(),
            attr_types: Vec::new(),
            index: AvIndex::default(),
            process_class: None,
            process_trans_dyntrans: 0,
        };
        p.process_class = p.names.classes.get("process").copied();
        if let Some(pc) = p.process_class {
            p.process_trans_dyntrans =
                p.perm_bit(pc, "transition").unwrap_or(0) | p.perm_bit(pc, "dyntransition").unwrap_or(0);
        }
        p
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn finish(
        &mut self,
        avtab: Vec<AvRule>,
        xperms: Vec<Xperms>,
        conds: Vec<CondNode>,
        role_trans: Vec<RoleTrans>,
        role_allow: Vec<RoleAllow>,
        filename_trans: Vec<FilenameTrans>,
        ocontexts: OContexts,
        genfs: Vec<Genfs>,
        range_trans: Vec<RangeTrans>,
        type_attrs: Vec<BitSet>,
    ) -> Result<(), PolicyError> {
        let n = self.types.len();
        // attr_types is the transpose of type_attrs: charge its dense words
        // to the same budget before allocating them.
        let mut highest_member = vec![0usize; n];
        for (t, attrs) in type_attrs.iter().enumerate() {
            for a in attrs.iter() {
                highest_member[a as usize] = highest_member[a as usize].max(t);
            }
        }
        let words: usize = highest_member.iter().map(|&h| h / 64 + 1).sum();
        if !crate::bitset::expansion_budget::take(words) {
            return Err(PolicyError::new(
                "type attribute map",
                0,
                "attribute membership expands to far more memory than the file's size justifies",
            ));
        }
        let mut attr_types = vec![BitSet::new(); n];
        for (t, attrs) in type_attrs.iter().enumerate() {
            for a in attrs.iter() {
                if a as usize != t {
                    attr_types[a as usize].insert(t as u32);
                }
            }
            if !self.types[t].attribute {
                attr_types[t].insert(t as u32);
            }
        }
        self.index = AvIndex::build(&avtab, &type_attrs, n, self.classes.len());
        self.avtab = avtab;
        self.xperms = xperms;
        self.conds = conds;
        self.role_trans = role_trans;
        self.role_allow = role_allow;
        self.filename_trans = filename_trans;
        self.ocontexts = ocontexts;
        self.genfs = genfs;
        self.range_trans = range_trans;
        self.type_attrs = type_attrs;
        self.attr_types = attr_types;
        Ok(())
    }

    pub fn class(&self, c: ClassId) -> Option<&Class> {
        self.classes.get(c.index())
    }

    pub fn class_by_name(&self, name: &str) -> Option<ClassId> {
        self.names.classes.get(name).copied()
    }

    pub fn type_name(&self, t: TypeId) -> &str {
        self.types.get(t.index()).map_or("?", |t| t.name.as_str())
    }

    pub fn role_name(&self, r: RoleId) -> &str {
        self.roles.get(r.index()).map_or("?", |r| r.name.as_str())
    }

    pub fn user_name(&self, u: UserId) -> &str {
        self.users.get(u.index()).map_or("?", |u| u.name.as_str())
    }

    pub fn class_name(&self, c: ClassId) -> &str {
        self.class(c).map_or("?", |c| c.name.as_str())
    }

    /// The access vector bit of permission `perm` in class `c` (own
    /// permissions first, then the common's, as libsepol looks them up).
    pub fn perm_bit(&self, c: ClassId, perm: &str) -> Option<AccessVector> {
        let class = self.class(c)?;
        let v = class
            .perms
            .get(perm)
            .or_else(|| class.common.and_then(|ci| self.commons.get(ci)).and_then(|com| com.perms.get(perm)))?;
        Some(1u32 << (v - 1))
    }

    /// Permission names of class `c` by bit (index = value - 1).
    pub fn perm_names(&self, c: ClassId) -> Vec<Option<&str>> {
        let mut out = vec![None; 32];
        if let Some(class) = self.class(c) {
            let common = class.common.and_then(|ci| self.commons.get(ci));
            for (name, &v) in class.perms.iter().chain(common.iter().flat_map(|com| com.perms.iter())) {
                out[(v - 1) as usize] = Some(name.as_str());
            }
        }
        out
    }

    /// Names of the permissions in `av`, in bit order; unnamed bits as hex.
    pub fn av_to_names(&self, c: ClassId, av: AccessVector) -> Vec<String> {
        let names = self.perm_names(c);
        (0..32)
            .filter(|b| av & (1 << b) != 0)
            .map(|b| names[b].map_or_else(|| format!("{:#x}", 1u32 << b), str::to_owned))
            .collect()
    }

    /// A level is valid when its sensitivity exists and every category may
    /// be used with it (libsepol `mls_level_isvalid`).
    pub fn level_is_valid(&self, l: &Level) -> bool {
        match self.sens.get((l.sens as usize).wrapping_sub(1)) {
            Some(s) => s.cats.is_superset(&l.cats),
            None => false,
        }
    }

    /// Both levels valid and high dominates low (`mls_range_isvalid`).
    pub fn range_is_valid(&self, r: &Range) -> bool {
        self.level_is_valid(&r.low) && self.level_is_valid(&r.high) && crate::mls::dominates(&r.high, &r.low)
    }

    /// libsepol `policydb_context_isvalid`: values in range; unless the
    /// role is object_r, the role may have the type and the user the role;
    /// with MLS, the range is valid and, unless object_r, within the
    /// user's range.
    pub fn context_is_valid(&self, c: &Context) -> bool {
        let (Some(user), Some(role)) = (self.users.get(c.user.index()), self.roles.get(c.role.index())) else {
            return false;
        };
        if self.types.get(c.ty.index()).is_none() {
            return false;
        }
        if c.role != OBJECT_R && (!role.types.contains(c.ty.bit()) || !user.roles.contains(c.role.bit())) {
            return false;
        }
        if !self.mls {
            return true;
        }
        if !self.range_is_valid(&c.range) {
            return false;
        }
        c.role == OBJECT_R || crate::mls::range_contains(&user.range, &c.range)
    }

    /// Whether `t` is declared permissive.
    pub fn is_permissive(&self, t: TypeId) -> bool {
        self.permissive.contains(t.0)
    }

    /// Whether the policy declares capability `cap` (`policycap`; one of
    /// the `POLICYCAP_` numbers).
    pub fn has_policycap(&self, cap: u32) -> bool {
        self.policycaps.contains(cap)
    }

    /// Whether a process of type `old` may change to `new` where only a
    /// domain with a subset of its permissions may be entered: `new` is
    /// `old`, or `old` is on `new`'s typebounds chain (the kernel's
    /// `security_bounded_transition`).
    pub fn bounded_transition(&self, old: TypeId, new: TypeId) -> bool {
        if old == new {
            return true;
        }
        let mut at = new;
        // The reader refused bounds cycles; the count bounds the walk anyway.
        for _ in 0..self.types.len() {
            match self.types.get(at.index()).map(|t| t.bounds) {
                None | Some(0) => return false,
                Some(b) if b == old.0 => return true,
                Some(b) => at = TypeId(b),
            }
        }
        false
    }
}

/// `POLICYDB_CAP_EXTENDED_SOCKET_CLASS`: sockets of the address families
/// and protocols that once shared `socket` and `rawip_socket` get classes
/// of their own (`sctp_socket`, `icmp_socket`, `bluetooth_socket`...).
pub const POLICYCAP_EXTENDED_SOCKET_CLASS: u32 = 2;

/// `POLICYDB_CAP_NNP_NOSUID_TRANSITION`: a domain transition under
/// no_new_privs or from a nosuid mount is allowed by `process2`
/// permissions, not only into a bounded domain.
pub const POLICYCAP_NNP_NOSUID_TRANSITION: u32 = 5;
