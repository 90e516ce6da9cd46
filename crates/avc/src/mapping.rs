//! The caller's classes and permissions, declared once by name.
//!
//! Why: a policy numbers classes and permissions in its own way, and a
//! reload may renumber them. Like libselinux's `selinux_set_mapping`, the
//! caller declares the classes and permissions it checks, gets stable
//! small numbers ([`ClassIdx`], [`Perms`] bits in declaration order), and
//! uses only those on the hot path. Each loaded policy resolves the
//! declaration once ([`crate::resolve`]); no name is looked up per check.

use std::collections::HashSet;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, Not};

use crate::error::AvcError;

/// Most classes a mapping may declare (a packed key has 16 class bits;
/// the kernel's own map has about 130 classes).
pub const MAX_CLASSES: usize = 4096;
/// Most permissions a class may declare (one access vector).
pub const MAX_PERMS: usize = 32;

/// A declared class: its index in the [`Mapping`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClassIdx(u16);

impl ClassIdx {
    pub fn as_u16(self) -> u16 {
        self.0
    }

    pub(crate) fn index(self) -> usize {
        usize::from(self.0)
    }

    /// Rebuilds a class index from [`ClassIdx::as_u16`] (for packed keys).
    pub(crate) fn from_u16(value: u16) -> ClassIdx {
        ClassIdx(value)
    }
}

/// A set of declared permissions of one class: bit `i` is the class's
/// `i`-th declared permission.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Perms(u32);

impl Perms {
    pub const NONE: Perms = Perms(0);
    pub const ALL: Perms = Perms(u32::MAX);

    pub const fn from_bits(bits: u32) -> Perms {
        Perms(bits)
    }

    pub const fn bits(self) -> u32 {
        self.0
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Every permission of `other` is in `self`.
    pub const fn contains(self, other: Perms) -> bool {
        self.0 & other.0 == other.0
    }

    /// The bit indices, lowest first.
    pub fn indices(self) -> impl Iterator<Item = usize> {
        (0..32).filter(move |i| self.0 & (1 << i) != 0)
    }
}

impl BitOr for Perms {
    type Output = Perms;
    fn bitor(self, rhs: Perms) -> Perms {
        Perms(self.0 | rhs.0)
    }
}

impl BitOrAssign for Perms {
    fn bitor_assign(&mut self, rhs: Perms) {
        self.0 |= rhs.0;
    }
}

impl BitAnd for Perms {
    type Output = Perms;
    fn bitand(self, rhs: Perms) -> Perms {
        Perms(self.0 & rhs.0)
    }
}

impl BitAndAssign for Perms {
    fn bitand_assign(&mut self, rhs: Perms) {
        self.0 &= rhs.0;
    }
}

impl Not for Perms {
    type Output = Perms;
    fn not(self) -> Perms {
        Perms(!self.0)
    }
}

/// One declared class.
#[derive(Clone, Debug)]
pub(crate) struct ClassDecl {
    pub(crate) name: String,
    pub(crate) perms: Vec<String>,
}

/// The classes and permissions a caller checks, by name.
#[derive(Clone, Debug)]
pub struct Mapping {
    classes: Vec<ClassDecl>,
}

impl Mapping {
    /// Declares classes and their permissions, e.g.
    /// `Mapping::new(&[("file", &["open", "read", "write"]), ("dir", &["search"])])`.
    /// Names need not exist in any policy: unknown ones follow each loaded
    /// policy's `handle_unknown` (deny: never allowed; allow: always
    /// allowed; reject: the AVC refuses to load that policy).
    pub fn new(classes: &[(&str, &[&str])]) -> Result<Mapping, AvcError> {
        if classes.len() > MAX_CLASSES {
            return Err(AvcError::InvalidMapping(format!("{} classes, at most {MAX_CLASSES}", classes.len())));
        }
        let mut seen = HashSet::new();
        let mut decls = Vec::with_capacity(classes.len());
        for &(name, perms) in classes {
            if name.is_empty() || !seen.insert(name) {
                return Err(AvcError::InvalidMapping(format!("class `{name}` is empty or declared twice")));
            }
            if perms.len() > MAX_PERMS {
                return Err(AvcError::InvalidMapping(format!(
                    "class `{name}` declares {} permissions, at most {MAX_PERMS}",
                    perms.len()
                )));
            }
            let mut seen_perms = HashSet::new();
            if let Some(p) = perms.iter().find(|p| p.is_empty() || !seen_perms.insert(**p)) {
                return Err(AvcError::InvalidMapping(format!(
                    "permission `{p}` of class `{name}` is empty or declared twice"
                )));
            }
            decls.push(ClassDecl { name: name.to_owned(), perms: perms.iter().map(|p| (*p).to_owned()).collect() });
        }
        Ok(Mapping { classes: decls })
    }

    pub fn class(&self, name: &str) -> Option<ClassIdx> {
        let i = self.classes.iter().position(|c| c.name == name)?;
        Some(ClassIdx(u16::try_from(i).ok()?))
    }

    /// The permissions `names` of `class`; `None` if one is not declared.
    pub fn perms(&self, class: ClassIdx, names: &[&str]) -> Option<Perms> {
        let decl = self.classes.get(class.index())?;
        names.iter().try_fold(Perms::NONE, |acc, name| {
            let i = decl.perms.iter().position(|p| p == name)?;
            Some(acc | Perms(1 << i))
        })
    }

    pub fn class_name(&self, class: ClassIdx) -> Option<&str> {
        Some(self.classes.get(class.index())?.name.as_str())
    }

    /// Names of the declared permissions in `perms`, lowest bit first;
    /// undeclared bits are left out.
    pub fn perm_names(&self, class: ClassIdx, perms: Perms) -> Vec<&str> {
        let Some(decl) = self.classes.get(class.index()) else { return Vec::new() };
        perms.indices().filter_map(|i| decl.perms.get(i).map(String::as_str)).collect()
    }

    pub(crate) fn decls(&self) -> &[ClassDecl] {
        &self.classes
    }

    pub(crate) fn decl(&self, class: ClassIdx) -> Option<&ClassDecl> {
        self.classes.get(class.index())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declares_and_looks_up() {
        let m = Mapping::new(&[("file", &["open", "read", "write"]), ("dir", &["search"])]).unwrap();
        let file = m.class("file").unwrap();
        assert_eq!(m.perms(file, &["read", "write"]), Some(Perms::from_bits(0b110)));
        assert_eq!(m.perms(file, &["search"]), None);
        assert_eq!(m.perm_names(file, Perms::from_bits(0b101)), vec!["open", "write"]);
        assert_eq!(m.class_name(m.class("dir").unwrap()), Some("dir"));
        assert!(Mapping::new(&[("file", &["a"]), ("file", &["b"])]).is_err());
        assert!(Mapping::new(&[("file", &["a", "a"])]).is_err());
    }
}
