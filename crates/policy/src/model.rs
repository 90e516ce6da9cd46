//! The in-memory policy: what the binary file says, validated.
//!
//! Values are 1-based exactly as in the file and in libsepol (`TypeId(1)`
//! is the first type); vectors are indexed by `value - 1`. A `Policy` is
//! immutable once read: boolean values live outside it in
//! [`crate::Booleans`] so a new boolean state never copies the policy.

use rustc_hash::FxHashMap as HashMap;

use crate::bitset::BitSet;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);

        impl $name {
            /// Index into the policy's vector of these (value - 1).
            pub fn index(self) -> usize {
                (self.0 as usize).wrapping_sub(1)
            }
            /// Bit in a [`BitSet`] over these (value - 1).
            pub fn bit(self) -> u32 {
                self.0.wrapping_sub(1)
            }
        }
    };
}

id_type!(/// A class value (1-based).
    ClassId);
id_type!(/// A role value (1-based); `object_r` is 1.
    RoleId);
id_type!(/// A type or attribute value (1-based).
    TypeId);
id_type!(/// A user value (1-based).
    UserId);
id_type!(/// A boolean value (1-based).
    BoolId);

/// `object_r`, the role of every object, always value 1.
pub const OBJECT_R: RoleId = RoleId(1);

/// What the kernel does with classes and permissions the policy does not
/// define (`handle_unknown` in the policy header).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandleUnknown {
    Deny,
    Reject,
    Allow,
}

impl HandleUnknown {
    pub fn as_str(self) -> &'static str {
        match self {
            HandleUnknown::Deny => "deny",
            HandleUnknown::Reject => "reject",
            HandleUnknown::Allow => "allow",
        }
    }
}

/// A set of permissions, bit `v - 1` for permission value `v`.
pub type AccessVector = u32;

#[derive(Clone, Debug)]
pub struct Common {
    pub name: String,
    /// Permission name -> value (1-based).
    pub perms: HashMap<String, u32>,
    pub nprim: u32,
}

#[derive(Clone, Debug)]
pub struct Class {
    pub name: String,
    pub common: Option<usize>,
    /// The class's own permissions (values follow the common's).
    pub perms: HashMap<String, u32>,
    pub nprim: u32,
    pub constraints: Vec<Constraint>,
    pub validatetrans: Vec<Constraint>,
    pub default_user: u32,
    pub default_role: u32,
    pub default_type: u32,
    pub default_range: u32,
}

#[derive(Clone, Debug)]
pub struct Role {
    pub name: String,
    pub bounds: u32,
    pub dominates: BitSet,
    /// Types this role may be associated with.
    pub types: BitSet,
}

#[derive(Clone, Debug)]
pub struct TypeDatum {
    /// The primary name.
    pub name: String,
    pub attribute: bool,
    /// The bounding type's value, 0 if none.
    pub bounds: u32,
    pub aliases: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Level {
    /// Sensitivity value (1-based).
    pub sens: u32,
    /// Categories, bit `v - 1` for category value `v`.
    pub cats: BitSet,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Range {
    pub low: Level,
    pub high: Level,
}

#[derive(Clone, Debug)]
pub struct User {
    pub name: String,
    pub bounds: u32,
    pub roles: BitSet,
    pub range: Range,
    pub default_level: Level,
}

#[derive(Clone, Debug)]
pub struct Bool {
    pub name: String,
    pub default: bool,
}

#[derive(Clone, Debug)]
pub struct Sensitivity {
    pub name: String,
    /// The categories this sensitivity may be combined with.
    pub cats: BitSet,
    pub aliases: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct Category {
    pub name: String,
    pub aliases: Vec<String>,
}

/// A constraint: the permissions it guards and its expression in postfix
/// order, as stored in the file.
#[derive(Clone, Debug)]
pub struct Constraint {
    pub perms: AccessVector,
    pub expr: Vec<ConstraintExpr>,
}

#[derive(Clone, Debug)]
pub enum ConstraintExpr {
    Not,
    And,
    Or,
    /// Compares an attribute of the two contexts (`u1 == u2`, `l1 dom h2`).
    Attr {
        attr: u32,
        op: u32,
    },
    /// Tests an attribute of one context against a set of names.
    /// `type_set` is the type set as written in the source (attributes
    /// unexpanded), kept for printing; `names` is what is evaluated.
    Names {
        attr: u32,
        op: u32,
        names: BitSet,
        type_set: Option<TypeSet>,
    },
}

/// A type set as written in policy source: `{ a_t attr -b_t }`, `*`, `~{...}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeSet {
    pub types: BitSet,
    /// Types written with `-` (excluded).
    pub negset: BitSet,
    /// 1: `*` (all types); 2: `~` (complement).
    pub flags: u32,
}

/// Constraint attribute bits (`CEXPR_*` in libsepol's constraint.h).
pub mod cexpr {
    pub const USER: u32 = 1;
    pub const ROLE: u32 = 2;
    pub const TYPE: u32 = 4;
    pub const TARGET: u32 = 8;
    pub const XTARGET: u32 = 16;
    pub const L1L2: u32 = 32;
    pub const L1H2: u32 = 64;
    pub const H1L2: u32 = 128;
    pub const H1H2: u32 = 256;
    pub const L1H1: u32 = 512;
    pub const L2H2: u32 = 1024;
    pub const EQ: u32 = 1;
    pub const NEQ: u32 = 2;
    pub const DOM: u32 = 3;
    pub const DOMBY: u32 = 4;
    pub const INCOMP: u32 = 5;
}

/// avtab rule kinds (`AVTAB_*` in libsepol's avtab.h).
pub mod avtab_kind {
    pub const ALLOWED: u16 = 0x0001;
    pub const AUDITALLOW: u16 = 0x0002;
    pub const AUDITDENY: u16 = 0x0004;
    pub const TRANSITION: u16 = 0x0010;
    pub const MEMBER: u16 = 0x0020;
    pub const CHANGE: u16 = 0x0040;
    pub const XPERMS_ALLOWED: u16 = 0x0100;
    pub const XPERMS_AUDITALLOW: u16 = 0x0200;
    pub const XPERMS_DONTAUDIT: u16 = 0x0400;
    pub const AV: u16 = ALLOWED | AUDITALLOW | AUDITDENY;
    pub const TYPE: u16 = TRANSITION | MEMBER | CHANGE;
    pub const XPERMS: u16 = XPERMS_ALLOWED | XPERMS_AUDITALLOW | XPERMS_DONTAUDIT;
}

/// Extended permissions (ioctl) of an xperms rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Xperms {
    /// 1: ioctl function numbers within `driver`; 2: whole drivers.
    pub kind: u8,
    pub driver: u8,
    pub perms: [u32; 8],
}

/// Where a rule lives: always active, or in a branch of a conditional.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RuleCond {
    Always,
    /// Active when conditional `cond` (index into `Policy::conds`)
    /// evaluates to `when`.
    If {
        cond: u32,
        when: bool,
    },
}

/// One avtab entry as written in the file: source and target may be
/// attributes.
#[derive(Clone, Debug)]
pub struct AvRule {
    pub source: TypeId,
    pub target: TypeId,
    pub class: ClassId,
    /// One of the `avtab_kind` bits.
    pub kind: u16,
    /// Permissions (AV kinds), the new type's value (type kinds), or the
    /// index of the rule's [`Xperms`] in `Policy::xperms` (xperms kinds).
    pub data: u32,
    pub cond: RuleCond,
}

/// A boolean expression node of a conditional, postfix order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CondExpr {
    Bool(BoolId),
    Not,
    Or,
    And,
    Xor,
    Eq,
    Neq,
}

#[derive(Clone, Debug)]
pub struct CondNode {
    pub expr: Vec<CondExpr>,
}

#[derive(Clone, Debug)]
pub struct RoleTrans {
    pub role: RoleId,
    pub ty: TypeId,
    pub class: ClassId,
    pub new_role: RoleId,
}

#[derive(Clone, Debug)]
pub struct RoleAllow {
    pub role: RoleId,
    pub new_role: RoleId,
}

/// `type_transition S T:C "name" O;` with the source types grouped.
#[derive(Clone, Debug)]
pub struct FilenameTrans {
    pub name: String,
    pub target: TypeId,
    pub class: ClassId,
    pub sources: BitSet,
    pub new_type: TypeId,
}

#[derive(Clone, Debug)]
pub struct RangeTrans {
    pub source: TypeId,
    pub target: TypeId,
    pub class: ClassId,
    pub range: Range,
}

/// A context as stored in the policy (numeric).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Context {
    pub user: UserId,
    pub role: RoleId,
    pub ty: TypeId,
    pub range: Range,
}

/// Object contexts: initial SIDs, filesystems, ports, network nodes.
#[derive(Clone, Debug, Default)]
pub struct OContexts {
    pub initial_sids: Vec<(u32, Context)>,
    pub fs: Vec<(String, Context, Context)>,
    pub ports: Vec<PortCon>,
    pub netifs: Vec<(String, Context, Context)>,
    pub nodes: Vec<([u8; 4], [u8; 4], Context)>,
    pub fs_use: Vec<(u32, String, Context)>,
    pub nodes6: Vec<([u8; 16], [u8; 16], Context)>,
    pub ibpkeys: Vec<([u8; 8], u16, u16, Context)>,
    pub ibendports: Vec<(String, u8, Context)>,
}

#[derive(Clone, Debug)]
pub struct PortCon {
    pub protocol: u32,
    pub low: u32,
    pub high: u32,
    pub context: Context,
}

#[derive(Clone, Debug)]
pub struct Genfs {
    pub fstype: String,
    /// (path prefix, class value or 0 for all, context)
    pub entries: Vec<(String, u32, Context)>,
}
