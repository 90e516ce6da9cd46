//! Reads a kernel binary policy (versions 30 to 33) into a [`Policy`].
//!
//! The code follows the file: [`Reader::read_rest`] calls one reader per
//! section in file order, as the kernel's `policydb_read`
//! (security/selinux/ss/policydb.c) and libsepol's do, and the readers
//! appear below in that order. Order of validation:
//! 1. header ([`read_header`]): magic, "SE Linux", version, config, table
//!    sizes;
//! 2. the eight symbol tables ([`Reader::read_symtabs`], one reader per
//!    table as the kernel's `read_f`), each entry's lengths checked before
//!    use, bitmaps kept raw until every table size is known;
//! 3. values ([`index_symbols`], the kernel's `policydb_index`): every
//!    symbol value in range and used once, aliases pointing at real
//!    symbols, raw bitmaps checked against the table they index, all
//!    through one [`SymIndex`];
//! 4. the rule sections, one reader each: avtab, conditional list, role
//!    transitions, role allow rules, filename transitions, object
//!    contexts, genfs, range transitions, the type-attribute map; every
//!    value checked as it is read and every embedded context validated
//!    like `policydb_context_isvalid`;
//! 5. no trailing bytes.
//!
//! The reader never trusts a count: see [`crate::wire::Cursor::count`].

use rustc_hash::FxHashMap as HashMap;

use rustc_hash::FxHashSet as HashSet;

use crate::bitset::{BitSet, RawBitmap};
use crate::error::PolicyError;
use crate::model::*;
use crate::policy::{Names, Policy};
use crate::wire::{Cursor, Result};

const POLICYDB_MAGIC: u32 = 0xf97c_ff8c;
const POLICYDB_STRING: &str = "SE Linux";
const VERSION_MIN: u32 = 30;
const VERSION_MAX: u32 = 33;
const VERSION_INFINIBAND: u32 = 31;
const VERSION_COMP_FTRANS: u32 = 33;
const CONFIG_MLS: u32 = 1;
const SYM_NUM: u32 = 8;
const PERM_MAX: u32 = 32;
const CEXPR_MAXDEPTH: i32 = 5;
const COND_LAST: u32 = 7;
const AVTAB_ENABLED: u16 = 0x8000;

impl Policy {
    /// Reads and validates a policy image.
    pub fn from_bytes(bytes: &[u8]) -> std::result::Result<Policy, PolicyError> {
        read_policy(bytes)
    }
}

fn read_policy(bytes: &[u8]) -> std::result::Result<Policy, PolicyError> {
    let _budget = crate::bitset::expansion_budget::start(bytes.len());
    let mut c = Cursor::new(bytes);
    let header = read_header(&mut c)?;
    let mut r = Reader { c, version: header.version };
    r.read_rest(header)
}

struct Header {
    version: u32,
    mls: bool,
    handle_unknown: HandleUnknown,
    ocon_num: u32,
}

fn read_header(c: &mut Cursor<'_>) -> Result<Header> {
    c.section("header");
    let magic = c.u32()?;
    if magic != POLICYDB_MAGIC {
        return Err(c.err_at(0, format!("magic {magic:#010x} is not a kernel policy's ({POLICYDB_MAGIC:#010x})")));
    }
    let at = c.pos();
    let len = c.u32()? as usize;
    if len != POLICYDB_STRING.len() {
        return Err(c.err_at(at, format!("identifier length {len}, expected 8 (\"SE Linux\")")));
    }
    let ident = c.string(len, "policy identifier")?;
    if ident != POLICYDB_STRING {
        return Err(c.err_at(at + 4, format!("identifier `{ident}` is not \"SE Linux\"")));
    }
    let at = c.pos();
    let version = c.u32()?;
    if !(VERSION_MIN..=VERSION_MAX).contains(&version) {
        return Err(c.err_at(at, format!("policy version {version} not supported (30 to 33 are)")));
    }
    let config = c.u32()?;
    let handle_unknown = match config & 0x6 {
        0 => HandleUnknown::Deny,
        2 => HandleUnknown::Reject,
        4 => HandleUnknown::Allow,
        _ => return Err(c.err_at(at + 4, "config sets both reject and allow unknown")),
    };
    let at = c.pos();
    let sym_num = c.u32()?;
    let ocon_num = c.u32()?;
    let want_ocon = if version >= VERSION_INFINIBAND { 9 } else { 7 };
    if sym_num != SYM_NUM || ocon_num != want_ocon {
        return Err(c.err_at(
            at,
            format!("table sizes ({sym_num},{ocon_num}) do not match version {version} ({SYM_NUM},{want_ocon})"),
        ));
    }
    Ok(Header { version, mls: config & CONFIG_MLS != 0, handle_unknown, ocon_num })
}

/// The symbol tables as read, before values are cross-checked.
#[derive(Default)]
struct Symtabs {
    /// Each table's `nprim`: how many values it declares.
    nprim: [u32; 8],
    commons: Vec<RawCommon>,
    classes: Vec<RawClass>,
    roles: Vec<RawRole>,
    types: Vec<RawType>,
    users: Vec<RawUser>,
    bools: Vec<RawBool>,
    sens: Vec<RawSens>,
    cats: Vec<RawCat>,
}

/// The symbol tables, in file order (the kernel's `SYM_*` values).
const SYMTAB_NAMES: [&str; 8] =
    ["commons", "classes", "roles", "types", "users", "booleans", "sensitivities", "categories"];

/// Raw symbol data before values are cross-checked.
struct RawRange {
    sens: [u32; 2],
    cats: [RawBitmap; 2],
}

struct RawLevel {
    sens: u32,
    cats: RawBitmap,
}

struct RawCommon {
    name: String,
    value: u32,
    perms: HashMap<String, u32>,
    nprim: u32,
}

struct RawClass {
    name: String,
    value: u32,
    common: Option<String>,
    perms: HashMap<String, u32>,
    nprim: u32,
    constraints: Vec<RawConstraint>,
    validatetrans: Vec<RawConstraint>,
    defaults: [u32; 4],
}

struct RawConstraint {
    perms: u32,
    expr: Vec<RawCexpr>,
}

enum RawCexpr {
    Not,
    And,
    Or,
    Attr { attr: u32, op: u32 },
    Names { attr: u32, op: u32, names: RawBitmap, types: RawBitmap, negset: RawBitmap, flags: u32 },
}

struct RawRole {
    name: String,
    value: u32,
    bounds: u32,
    dominates: RawBitmap,
    types: RawBitmap,
}

struct RawType {
    name: String,
    value: u32,
    primary: bool,
    attribute: bool,
    bounds: u32,
}

struct RawUser {
    name: String,
    value: u32,
    bounds: u32,
    roles: RawBitmap,
    range: RawRange,
    dflt: RawLevel,
}

struct RawBool {
    name: String,
    value: u32,
    state: bool,
}

struct RawSens {
    name: String,
    alias: bool,
    level: RawLevel,
}

struct RawCat {
    name: String,
    value: u32,
    alias: bool,
}

struct Reader<'a> {
    c: Cursor<'a>,
    version: u32,
}

/// Minimum bytes of one entry of each symbol table, for count checks.
const MIN_SYM_BYTES: [usize; 8] =
    [16 + 1, 24 + 1, 12 + 1 + 24, 16 + 1, 12 + 1 + 12 + 16 + 16, 12 + 1, 8 + 1 + 16, 12 + 1];

impl<'a> Reader<'a> {
    /// Everything after the header, section by section in file order, as
    /// in the kernel's `policydb_read`.
    fn read_rest(&mut self, h: Header) -> Result<Policy> {
        self.c.section("policy capabilities");
        let policycaps = RawBitmap::read(&mut self.c)?.into_bitset(1024, "policy capability")?;
        self.c.section("permissive types");
        let permissive = RawBitmap::read(&mut self.c)?;
        let symtabs = self.read_symtabs()?;
        self.c.section("symbol values");
        let s = index_symbols(symtabs, self.c.pos())?;
        let limits = s.limits;
        // Indexed by type value (bit 0 unused), as the kernel does.
        let permissive = permissive.into_bitset(limits.types + 1, "permissive types")?;
        let mut policy = Policy::new_unindexed(
            h.version,
            h.mls,
            h.handle_unknown,
            policycaps,
            permissive,
            s.commons,
            s.classes,
            s.roles,
            s.types,
            s.users,
            s.bools,
            s.sens,
            s.cats,
            s.names,
        );
        let (mut avtab, mut xperms) = self.read_avtab(&limits)?;
        let conds = self.read_cond_list(&limits, &mut avtab, &mut xperms)?;
        let role_trans = self.read_role_trans(&limits)?;
        let role_allow = self.read_role_allow(&limits)?;
        let filename_trans = self.read_filename_trans(&limits)?;
        let ocontexts = self.read_ocontexts(&policy, h.ocon_num)?;
        let genfs = self.read_genfs(&policy, &limits)?;
        let range_trans = self.read_range_trans(&policy, &limits)?;
        let type_attrs = self.read_type_attr_map(&limits)?;
        if self.c.remaining() != 0 {
            return Err(self.c.err(format!("{} trailing bytes after the last section", self.c.remaining())));
        }
        policy.finish(
            avtab,
            xperms,
            conds,
            role_trans,
            role_allow,
            filename_trans,
            ocontexts,
            genfs,
            range_trans,
            type_attrs,
        )?;
        Ok(policy)
    }

    /// The eight symbol tables in the kernel's `SYM_*` order, each entry
    /// read by its table's reader (the kernel's `read_f`). Values and
    /// bitmaps are checked afterwards by [`index_symbols`], once every
    /// table's size is known.
    fn read_symtabs(&mut self) -> Result<Symtabs> {
        let mut s = Symtabs::default();
        for (i, name) in SYMTAB_NAMES.iter().enumerate() {
            self.c.section(name);
            let at = self.c.pos();
            let nprim = self.c.u32()?;
            let nel = self.c.u32()? as usize;
            self.c.check_count(at + 4, name, nel, MIN_SYM_BYTES[i])?;
            if nprim as usize > nel {
                return Err(self.c.err_at(at, format!("{nprim} {name} declared but only {nel} entries")));
            }
            s.nprim[i] = nprim;
            for _ in 0..nel {
                match i {
                    0 => s.commons.push(self.read_common()?),
                    1 => s.classes.push(self.read_class()?),
                    2 => s.roles.push(self.read_role()?),
                    3 => s.types.push(self.read_type()?),
                    4 => s.users.push(self.read_user()?),
                    5 => s.bools.push(self.read_bool()?),
                    6 => s.sens.push(self.read_sens()?),
                    _ => s.cats.push(self.read_cat()?),
                }
            }
        }
        Ok(s)
    }

    /// One entry of each symbol table (`common_read`, `class_read`,
    /// `role_read`, `type_read`, `user_read`, `cond_read_bool`,
    /// `sens_read`, `cat_read`), with the pieces they share.
    fn read_common(&mut self) -> Result<RawCommon> {
        let at = self.c.pos();
        let len = self.c.u32()? as usize;
        let value = self.c.u32()?;
        let nprim = self.c.u32()?;
        let nel = self.c.u32()? as usize;
        if nprim > PERM_MAX || nel > nprim as usize {
            return Err(self.c.err_at(at, format!("common with {nel} of {nprim} permissions (at most 32)")));
        }
        let name = self.c.string(len, "common name")?;
        let perms = self.read_perm_list(nel, nprim, &name)?;
        Ok(RawCommon { name, value, perms, nprim })
    }

    fn read_perm_list(&mut self, nel: usize, nprim: u32, owner: &str) -> Result<HashMap<String, u32>> {
        let mut perms = HashMap::with_capacity_and_hasher(nel, Default::default());
        let mut used = 0u64;
        for _ in 0..nel {
            let at = self.c.pos();
            let len = self.c.u32()? as usize;
            let value = self.c.u32()?;
            let name = self.c.string(len, "permission name")?;
            if value == 0 || value > nprim {
                return Err(self
                    .c
                    .err_at(at, format!("permission `{name}` of `{owner}` has value {value}, outside 1..={nprim}")));
            }
            if used & (1 << value) != 0 || perms.insert(name.clone(), value).is_some() {
                return Err(self.c.err_at(at, format!("duplicate permission `{name}` in `{owner}`")));
            }
            used |= 1 << value;
        }
        Ok(perms)
    }

    fn read_class(&mut self) -> Result<RawClass> {
        let at = self.c.pos();
        let len = self.c.u32()? as usize;
        let len2 = self.c.u32()? as usize;
        let value = self.c.u32()?;
        let nprim = self.c.u32()?;
        let nel = self.c.u32()? as usize;
        let ncons = self.c.u32()? as usize;
        if nprim > PERM_MAX || nel > nprim as usize {
            return Err(self.c.err_at(at, format!("class with {nel} of {nprim} permissions (at most 32)")));
        }
        let name = self.c.string(len, "class name")?;
        let common = if len2 > 0 { Some(self.c.string(len2, "common name")?) } else { None };
        let perms = self.read_perm_list(nel, nprim, &name)?;
        self.c.check_count(at + 20, "constraint", ncons, 8)?;
        let constraints = self.read_constraints(ncons, false)?;
        let nvt = self.c.count("validatetrans", 8)?;
        let validatetrans = self.read_constraints(nvt, true)?;
        let defaults = [self.c.u32()?, self.c.u32()?, self.c.u32()?, self.c.u32()?];
        if defaults[0] > 2 || defaults[1] > 2 || defaults[3] > 2 || defaults[2] > 7 {
            return Err(self.c.err(format!("class `{name}` has unknown default_* values {defaults:?}")));
        }
        Ok(RawClass { name, value, common, perms, nprim, constraints, validatetrans, defaults })
    }

    fn read_constraints(&mut self, n: usize, allow_xtarget: bool) -> Result<Vec<RawConstraint>> {
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let perms = self.c.u32()?;
            let nexpr = self.c.count("constraint expression", 12)?;
            let mut expr = Vec::with_capacity(nexpr);
            let mut depth: i32 = -1;
            for _ in 0..nexpr {
                let at = self.c.pos();
                let kind = self.c.u32()?;
                let attr = self.c.u32()?;
                let op = self.c.u32()?;
                let e = match kind {
                    1 => {
                        if depth < 0 {
                            return Err(self.c.err_at(at, "constraint `not` without operand"));
                        }
                        RawCexpr::Not
                    }
                    2 | 3 => {
                        if depth < 1 {
                            return Err(self.c.err_at(at, "constraint `and`/`or` without two operands"));
                        }
                        depth -= 1;
                        if kind == 2 {
                            RawCexpr::And
                        } else {
                            RawCexpr::Or
                        }
                    }
                    4 => {
                        if depth == CEXPR_MAXDEPTH - 1 {
                            return Err(self.c.err_at(at, "constraint expression too deep"));
                        }
                        depth += 1;
                        RawCexpr::Attr { attr, op }
                    }
                    5 => {
                        if !allow_xtarget && attr & cexpr::XTARGET != 0 {
                            return Err(self.c.err_at(at, "constraint names a third context outside validatetrans"));
                        }
                        if depth == CEXPR_MAXDEPTH - 1 {
                            return Err(self.c.err_at(at, "constraint expression too deep"));
                        }
                        depth += 1;
                        let names = RawBitmap::read(&mut self.c)?;
                        // The type set as written in the source (attributes
                        // unexpanded); only used to print the policy.
                        let types = RawBitmap::read(&mut self.c)?;
                        let negset = RawBitmap::read(&mut self.c)?;
                        let flags = self.c.u32()?;
                        RawCexpr::Names { attr, op, names, types, negset, flags }
                    }
                    _ => return Err(self.c.err_at(at, format!("constraint expression kind {kind} unknown"))),
                };
                expr.push(e);
            }
            if depth != 0 {
                return Err(self.c.err("constraint expression does not reduce to one value"));
            }
            out.push(RawConstraint { perms, expr });
        }
        Ok(out)
    }

    fn read_role(&mut self) -> Result<RawRole> {
        let len = self.c.u32()? as usize;
        let value = self.c.u32()?;
        let bounds = self.c.u32()?;
        let name = self.c.string(len, "role name")?;
        let dominates = RawBitmap::read(&mut self.c)?;
        let types = RawBitmap::read(&mut self.c)?;
        Ok(RawRole { name, value, bounds, dominates, types })
    }

    fn read_type(&mut self) -> Result<RawType> {
        let len = self.c.u32()? as usize;
        let value = self.c.u32()?;
        let properties = self.c.u32()?;
        let bounds = self.c.u32()?;
        let name = self.c.string(len, "type name")?;
        Ok(RawType { name, value, primary: properties & 1 != 0, attribute: properties & 2 != 0, bounds })
    }

    fn read_user(&mut self) -> Result<RawUser> {
        let len = self.c.u32()? as usize;
        let value = self.c.u32()?;
        let bounds = self.c.u32()?;
        let name = self.c.string(len, "user name")?;
        let roles = RawBitmap::read(&mut self.c)?;
        let range = self.read_raw_range()?;
        let dflt = self.read_raw_level()?;
        Ok(RawUser { name, value, bounds, roles, range, dflt })
    }

    fn read_raw_range(&mut self) -> Result<RawRange> {
        let at = self.c.pos();
        let items = self.c.u32()?;
        if items == 0 || items > 2 {
            return Err(self.c.err_at(at, format!("range with {items} levels (1 or 2 expected)")));
        }
        let low = self.c.u32()?;
        let high = if items > 1 { self.c.u32()? } else { low };
        let low_cats = RawBitmap::read(&mut self.c)?;
        let high_cats = if items > 1 { RawBitmap::read(&mut self.c)? } else { low_cats.clone() };
        Ok(RawRange { sens: [low, high], cats: [low_cats, high_cats] })
    }

    fn read_raw_level(&mut self) -> Result<RawLevel> {
        let sens = self.c.u32()?;
        let cats = RawBitmap::read(&mut self.c)?;
        Ok(RawLevel { sens, cats })
    }

    fn read_bool(&mut self) -> Result<RawBool> {
        let at = self.c.pos();
        let value = self.c.u32()?;
        let state = self.c.u32()?;
        let len = self.c.u32()? as usize;
        if state > 1 {
            return Err(self.c.err_at(at, format!("boolean state {state} is neither 0 nor 1")));
        }
        let name = self.c.string(len, "boolean name")?;
        Ok(RawBool { name, value, state: state == 1 })
    }

    fn read_sens(&mut self) -> Result<RawSens> {
        let len = self.c.u32()? as usize;
        let alias = self.c.u32()? != 0;
        let name = self.c.string(len, "sensitivity name")?;
        let level = self.read_raw_level()?;
        Ok(RawSens { name, alias, level })
    }

    fn read_cat(&mut self) -> Result<RawCat> {
        let len = self.c.u32()? as usize;
        let value = self.c.u32()?;
        let alias = self.c.u32()? != 0;
        let name = self.c.string(len, "category name")?;
        Ok(RawCat { name, value, alias })
    }

    /// The unconditional rules (`avtab_read`): access vectors, type rules
    /// and extended permissions. Returns the rules and the extended
    /// permission sets their `data` indexes.
    fn read_avtab(&mut self, l: &Limits) -> Result<(Vec<AvRule>, Vec<Xperms>)> {
        self.c.section("avtab");
        let mut avtab = Vec::new();
        let mut xperms = Vec::new();
        let at = self.c.pos();
        let nel = self.c.count("avtab entry", 12)?;
        if nel == 0 {
            return Err(self.c.err_at(at, "avtab is empty"));
        }
        avtab.reserve(nel);
        let mut type_rule_keys = HashSet::default();
        for _ in 0..nel {
            let rule = self.read_avtab_item(l, RuleCond::Always, &mut xperms)?;
            if rule.kind & avtab_kind::TYPE != 0
                && !type_rule_keys.insert((rule.source, rule.target, rule.class, rule.kind))
            {
                return Err(self.c.err("duplicate type rule in avtab"));
            }
            avtab.push(rule);
        }
        Ok((avtab, xperms))
    }

    /// One avtab entry (`avtab_read_item`): key, then a datum or an
    /// extended permission set.
    fn read_avtab_item(&mut self, l: &Limits, cond: RuleCond, xperms_out: &mut Vec<Xperms>) -> Result<AvRule> {
        let at = self.c.pos();
        let h = self.c.array::<8>()?;
        let source = u32::from(u16::from_le_bytes([h[0], h[1]]));
        let target = u32::from(u16::from_le_bytes([h[2], h[3]]));
        let class = u32::from(u16::from_le_bytes([h[4], h[5]]));
        let kind = u16::from_le_bytes([h[6], h[7]]) & !AVTAB_ENABLED;
        let known = avtab_kind::AV | avtab_kind::TYPE | avtab_kind::XPERMS;
        if kind & !known != 0 || kind.count_ones() != 1 {
            return Err(self.c.err_at(at, format!("avtab entry kind {kind:#06x} is not exactly one known rule kind")));
        }
        if !in_range(source, l.types) || !in_range(target, l.types) || !in_range(class, l.classes) {
            return Err(self.c.err_at(
                at,
                format!("avtab entry ({source}, {target}, class {class}) names an unknown type or class"),
            ));
        }
        let data = if kind & avtab_kind::XPERMS != 0 {
            let xkind = self.c.u8()?;
            let driver = self.c.u8()?;
            let mut perms = [0u32; 8];
            for p in &mut perms {
                *p = self.c.u32()?;
            }
            if xkind != 1 && xkind != 2 {
                return Err(self.c.err_at(at, format!("extended permission kind {xkind} unknown")));
            }
            xperms_out.push(Xperms { kind: xkind, driver, perms });
            (xperms_out.len() - 1) as u32
        } else {
            let data = self.c.u32()?;
            if kind & avtab_kind::TYPE != 0 && !in_range(data, l.types) {
                return Err(self.c.err_at(at, format!("type rule names unknown new type {data}")));
            }
            data
        };
        Ok(AvRule { source: TypeId(source), target: TypeId(target), class: ClassId(class), kind, data, cond })
    }

    /// The conditional rules (`cond_read_list`): each node's boolean
    /// expression, then its true and false lists. The rules join `avtab`,
    /// tagged with their node; the nodes are returned.
    fn read_cond_list(
        &mut self,
        l: &Limits,
        avtab: &mut Vec<AvRule>,
        xperms: &mut Vec<Xperms>,
    ) -> Result<Vec<CondNode>> {
        self.c.section("conditional rules");
        let ncond = self.c.count("conditional", 16)?;
        let mut conds = Vec::with_capacity(ncond);
        for ci in 0..ncond {
            let _cur_state = self.c.u32()?;
            let expr = self.read_cond_expr(l)?;
            conds.push(CondNode { expr });
            for when in [true, false] {
                let n = self.c.count("conditional rule", 12)?;
                for _ in 0..n {
                    let cond = RuleCond::If { cond: ci as u32, when };
                    avtab.push(self.read_avtab_item(l, cond, xperms)?);
                }
            }
        }
        Ok(conds)
    }

    /// One conditional node's expression, in postfix order (the first part
    /// of `cond_read_node`).
    fn read_cond_expr(&mut self, l: &Limits) -> Result<Vec<CondExpr>> {
        let nexpr = self.c.count("conditional expression", 8)?;
        let mut expr = Vec::with_capacity(nexpr);
        for _ in 0..nexpr {
            let at = self.c.pos();
            let kind = self.c.u32()?;
            let b = self.c.u32()?;
            expr.push(match kind {
                1 if b >= 1 && b <= l.bools => CondExpr::Bool(BoolId(b)),
                1 => return Err(self.c.err_at(at, format!("conditional names unknown boolean {b}"))),
                2 => CondExpr::Not,
                3 => CondExpr::Or,
                4 => CondExpr::And,
                5 => CondExpr::Xor,
                6 => CondExpr::Eq,
                7 => CondExpr::Neq,
                _ => return Err(self.c.err_at(at, format!("conditional operator {kind} unknown (1 to {COND_LAST})"))),
            });
        }
        Ok(expr)
    }

    /// `role_transition` rules (`role_trans_read`).
    fn read_role_trans(&mut self, l: &Limits) -> Result<Vec<RoleTrans>> {
        self.c.section("role transitions");
        let n = self.c.count("role transition", 16)?;
        let mut role_trans = Vec::with_capacity(n);
        for _ in 0..n {
            let at = self.c.pos();
            let role = self.c.u32()?;
            let ty = self.c.u32()?;
            let new_role = self.c.u32()?;
            let class = self.c.u32()?;
            if !in_range(role, l.roles)
                || !in_range(ty, l.types)
                || !in_range(new_role, l.roles)
                || !in_range(class, l.classes)
            {
                return Err(self.c.err_at(at, "role transition names an unknown role, type or class"));
            }
            role_trans.push(RoleTrans {
                role: RoleId(role),
                ty: TypeId(ty),
                class: ClassId(class),
                new_role: RoleId(new_role),
            });
        }
        Ok(role_trans)
    }

    /// Role `allow` rules (`role_allow_read`).
    fn read_role_allow(&mut self, l: &Limits) -> Result<Vec<RoleAllow>> {
        self.c.section("role allow rules");
        let n = self.c.count("role allow", 8)?;
        let mut role_allow = Vec::with_capacity(n);
        for _ in 0..n {
            let at = self.c.pos();
            let role = self.c.u32()?;
            let new_role = self.c.u32()?;
            if !in_range(role, l.roles) || !in_range(new_role, l.roles) {
                return Err(self.c.err_at(at, "role allow names an unknown role"));
            }
            role_allow.push(RoleAllow { role: RoleId(role), new_role: RoleId(new_role) });
        }
        Ok(role_allow)
    }

    /// Filename transitions (`filename_trans_read`): one entry per rule
    /// before version 33, one entry per (name, target, class) with its
    /// source sets since.
    fn read_filename_trans(&mut self, l: &Limits) -> Result<Vec<FilenameTrans>> {
        self.c.section("filename transitions");
        let n = self.c.count("filename transition", 20)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let at = self.c.pos();
            let name = self.c.string_u32("filename transition name")?;
            if self.version < VERSION_COMP_FTRANS {
                let stype = self.c.u32()?;
                let ttype = self.c.u32()?;
                let class = self.c.u32()?;
                let otype = self.c.u32()?;
                if !in_range(stype, l.types)
                    || !in_range(ttype, l.types)
                    || !in_range(class, l.classes)
                    || !in_range(otype, l.types)
                {
                    return Err(self.c.err_at(at, "filename transition names an unknown type or class"));
                }
                let sources: BitSet = std::iter::once(stype - 1).collect();
                out.push(FilenameTrans {
                    name,
                    target: TypeId(ttype),
                    class: ClassId(class),
                    sources,
                    new_type: TypeId(otype),
                });
            } else {
                let ttype = self.c.u32()?;
                let class = self.c.u32()?;
                let nd = self.c.count("filename transition datum", 16)?;
                if nd == 0 || !in_range(ttype, l.types) || !in_range(class, l.classes) {
                    return Err(self
                        .c
                        .err_at(at, "filename transition names an unknown type or class, or has no rule"));
                }
                let mut seen = BitSet::new();
                for _ in 0..nd {
                    let sources = RawBitmap::read(&mut self.c)?.into_bitset(l.types, "filename transition sources")?;
                    let otype = self.c.u32()?;
                    if !in_range(otype, l.types) {
                        return Err(self.c.err_at(at, format!("filename transition to unknown type {otype}")));
                    }
                    if seen.intersects(&sources) {
                        return Err(self.c.err_at(at, "filename transition gives one source two new types"));
                    }
                    seen.union_with(&sources);
                    out.push(FilenameTrans {
                        name: name.clone(),
                        target: TypeId(ttype),
                        class: ClassId(class),
                        sources,
                        new_type: TypeId(otype),
                    });
                }
            }
        }
        Ok(out)
    }

    /// Object contexts (`ocontext_read`): the `ocon_num` kinds of the
    /// header, in the kernel's `OCON_*` order.
    fn read_ocontexts(&mut self, p: &Policy, ocon_num: u32) -> Result<OContexts> {
        self.c.section("object contexts");
        let mut o = OContexts::default();
        for kind in 0..ocon_num {
            let n = self.c.count("object context", 8)?;
            for _ in 0..n {
                let at = self.c.pos();
                match kind {
                    0 => {
                        let sid = self.c.u32()?;
                        if sid == 0 || sid == u32::MAX {
                            return Err(self.c.err_at(at, format!("initial SID {sid} invalid")));
                        }
                        let ctx = self.read_context(p)?;
                        o.initial_sids.push((sid, ctx));
                    }
                    1 | 3 => {
                        let len = self.c.u32()? as usize;
                        if len > 63 {
                            return Err(self.c.err_at(at, format!("name of {len} bytes (at most 63)")));
                        }
                        let name = self.c.string(len, "filesystem or interface name")?;
                        let a = self.read_context(p)?;
                        let b = self.read_context(p)?;
                        if kind == 1 {
                            o.fs.push((name, a, b))
                        } else {
                            o.netifs.push((name, a, b))
                        }
                    }
                    2 => {
                        let protocol = self.c.u32()?;
                        let low = self.c.u32()?;
                        let high = self.c.u32()?;
                        let context = self.read_context(p)?;
                        o.ports.push(PortCon { protocol, low, high, context });
                    }
                    4 => {
                        let addr = self.c.array::<4>()?;
                        let mask = self.c.array::<4>()?;
                        let ctx = self.read_context(p)?;
                        o.nodes.push((addr, mask, ctx));
                    }
                    5 => {
                        let behavior = self.c.u32()?;
                        let name = self.c.string_u32("fs_use filesystem")?;
                        let ctx = self.read_context(p)?;
                        o.fs_use.push((behavior, name, ctx));
                    }
                    6 => {
                        let addr = self.c.array::<16>()?;
                        let mask = self.c.array::<16>()?;
                        let ctx = self.read_context(p)?;
                        o.nodes6.push((addr, mask, ctx));
                    }
                    7 => {
                        let prefix = self.c.array::<8>()?;
                        let lo = self.c.u32()?;
                        let hi = self.c.u32()?;
                        let (Ok(lo), Ok(hi)) = (u16::try_from(lo), u16::try_from(hi)) else {
                            return Err(self.c.err_at(at, "infiniband pkey above 65535"));
                        };
                        let ctx = self.read_context(p)?;
                        o.ibpkeys.push((prefix, lo, hi, ctx));
                    }
                    _ => {
                        let len = self.c.u32()? as usize;
                        let port = self.c.u32()?;
                        if len == 0 || len > 63 {
                            return Err(self.c.err_at(at, format!("infiniband device name of {len} bytes")));
                        }
                        let Ok(port) = u8::try_from(port) else {
                            return Err(self.c.err_at(at, format!("infiniband port {port} above 255")));
                        };
                        if port == 0 {
                            return Err(self.c.err_at(at, "infiniband port 0"));
                        }
                        let name = self.c.string(len, "infiniband device name")?;
                        let ctx = self.read_context(p)?;
                        o.ibendports.push((name, port, ctx));
                    }
                }
            }
        }
        Ok(o)
    }

    /// A context embedded in a section (`context_read_and_validate`).
    fn read_context(&mut self, p: &Policy) -> Result<Context> {
        let at = self.c.pos();
        let user = self.c.u32()?;
        let role = self.c.u32()?;
        let ty = self.c.u32()?;
        let raw = self.read_raw_range()?;
        let range = MlsLimits::of(p).range(raw, &p.sens)?;
        let ctx = Context { user: UserId(user), role: RoleId(role), ty: TypeId(ty), range };
        if !p.context_is_valid(&ctx) {
            return Err(self.c.err_at(at, "invalid security context"));
        }
        Ok(ctx)
    }

    /// `genfscon` entries (`genfs_read`), grouped by filesystem type.
    fn read_genfs(&mut self, p: &Policy, l: &Limits) -> Result<Vec<Genfs>> {
        self.c.section("genfs contexts");
        let n = self.c.count("genfs filesystem", 8)?;
        let mut out: Vec<Genfs> = Vec::with_capacity(n);
        // Duplicate checks by hash, not by scanning what was read: a
        // crafted file with many entries must not take quadratic time.
        let mut fstypes: HashSet<String> = HashSet::default();
        for _ in 0..n {
            let at = self.c.pos();
            let fstype = self.c.string_u32("genfs filesystem")?;
            if !fstypes.insert(fstype.clone()) {
                return Err(self.c.err_at(at, format!("duplicate genfs filesystem `{fstype}`")));
            }
            let m = self.c.count("genfs entry", 12)?;
            let mut entries: Vec<(String, u32, Context)> = Vec::with_capacity(m);
            // (path, class) pairs, and paths with any class / class 0 (all).
            let mut seen: HashSet<(String, u32)> = HashSet::default();
            let mut paths: HashSet<String> = HashSet::default();
            let mut any_class: HashSet<String> = HashSet::default();
            for _ in 0..m {
                let at = self.c.pos();
                let path = self.c.string_u32("genfs path")?;
                let class = self.c.u32()?;
                if class > l.classes {
                    return Err(self.c.err_at(at, format!("genfs entry names unknown class {class}")));
                }
                let ctx = self.read_context(p)?;
                if any_class.contains(&path)
                    || (class == 0 && paths.contains(&path))
                    || !seen.insert((path.clone(), class))
                {
                    return Err(self.c.err_at(at, format!("duplicate genfs entry ({fstype}, {path})")));
                }
                paths.insert(path.clone());
                if class == 0 {
                    any_class.insert(path.clone());
                }
                entries.push((path, class, ctx));
            }
            out.push(Genfs { fstype, entries });
        }
        Ok(out)
    }

    /// `range_transition` rules (`range_read`); each range is validated
    /// like the kernel's `mls_range_isvalid`.
    fn read_range_trans(&mut self, p: &Policy, l: &Limits) -> Result<Vec<RangeTrans>> {
        self.c.section("range transitions");
        let mls = MlsLimits::of(p);
        let n = self.c.count("range transition", 12 + 16)?;
        let mut range_trans = Vec::with_capacity(n);
        let mut seen = HashSet::default();
        for _ in 0..n {
            let at = self.c.pos();
            let source = self.c.u32()?;
            let target = self.c.u32()?;
            let class = self.c.u32()?;
            if !in_range(source, l.types) || !in_range(target, l.types) || !in_range(class, l.classes) {
                return Err(self.c.err_at(at, "range transition names an unknown type or class"));
            }
            let raw = self.read_raw_range()?;
            let range = mls.range(raw, &p.sens)?;
            if !p.range_is_valid(&range) {
                return Err(self.c.err_at(at, "range transition has an invalid range"));
            }
            if !seen.insert((source, target, class)) {
                return Err(self.c.err_at(at, "duplicate range transition"));
            }
            range_trans.push(RangeTrans {
                source: TypeId(source),
                target: TypeId(target),
                class: ClassId(class),
                range,
            });
        }
        Ok(range_trans)
    }

    /// The type-attribute map: for each type, the attributes it has (and
    /// itself, as the kernel adds).
    fn read_type_attr_map(&mut self, l: &Limits) -> Result<Vec<BitSet>> {
        self.c.section("type attribute map");
        let mut type_attrs: Vec<BitSet> = Vec::with_capacity(l.types as usize);
        for i in 0..l.types {
            let mut attrs = RawBitmap::read(&mut self.c)?.into_bitset(l.types, "type attribute map")?;
            attrs.insert(i);
            type_attrs.push(attrs);
        }
        Ok(type_attrs)
    }
}

/// The symbols with every value checked: what [`Policy::new_unindexed`]
/// takes, and the table sizes the rule sections are checked against.
struct Symbols {
    commons: Vec<Common>,
    classes: Vec<Class>,
    roles: Vec<Role>,
    types: Vec<TypeDatum>,
    users: Vec<User>,
    bools: Vec<Bool>,
    sens: Vec<Sensitivity>,
    cats: Vec<Category>,
    names: Names,
    limits: Limits,
}

/// Checks the symbol tables as the kernel's `policydb_index` and its
/// per-table `*_index` callbacks do: every value in range and used once,
/// every name once, aliases naming a real symbol, bounds and bitmaps
/// within the tables they index. Classes come last: their constraints
/// name users, roles and types. Every error is at `at`, the offset where
/// the symbol tables end.
fn index_symbols(s: Symtabs, at: usize) -> Result<Symbols> {
    let [n_commons, n_classes, n_roles, n_types, n_users, n_bools, n_sens, n_cats] = s.nprim;
    let limits = Limits { types: n_types, roles: n_roles, users: n_users, classes: n_classes, bools: n_bools };
    let (commons, common_names) = index_commons(s.commons, n_commons, at)?;
    let (cats, cat_names) = index_categories(s.cats, n_cats, at)?;
    let (sens, sens_names) = index_sensitivities(s.sens, n_sens, n_cats, at)?;
    let (types, type_names) = index_types(s.types, n_types, at)?;
    let (roles, role_names) = index_roles(s.roles, &limits, at)?;
    let mls = MlsLimits { n_sens, n_cats };
    let (users, user_names) = index_users(s.users, &limits, &mls, &sens, at)?;
    let (bools, bool_names) = index_bools(s.bools, n_bools, at)?;
    let (classes, class_names) = index_classes(s.classes, &commons, &common_names, &limits, at)?;
    let names = Names {
        classes: class_names,
        roles: role_names,
        types: type_names,
        users: user_names,
        bools: bool_names,
        sens: sens_names,
        cats: cat_names,
    };
    Ok(Symbols { commons, classes, roles, types, users, bools, sens, cats, names, limits })
}

/// One symbol table being indexed: a slot per value, each filled once,
/// and the names seen (aliases included), mapped to their `Id`.
struct SymIndex<T, Id> {
    what: &'static str,
    at: usize,
    slots: Vec<Option<T>>,
    names: HashMap<String, Id>,
}

impl<T, Id> SymIndex<T, Id> {
    /// A table of `nprim` values with `nel` entries (names).
    fn new(what: &'static str, nprim: u32, nel: usize, at: usize) -> Self {
        let slots = std::iter::repeat_with(|| None).take(nprim as usize).collect();
        Self { what, at, slots, names: HashMap::with_capacity_and_hasher(nel, Default::default()) }
    }

    #[cold]
    fn err(&self, message: String) -> PolicyError {
        PolicyError::new("symbol values", self.at, message)
    }

    /// The slot of `value` for the symbol `name`: refused outside
    /// `1..=nprim` or when another symbol already has it. Fill it with
    /// [`SymIndex::put`].
    fn slot(&self, value: u32, name: &str) -> Result<usize> {
        let (what, n) = (self.what, self.slots.len());
        let i = (value as usize).wrapping_sub(1);
        match self.slots.get(i) {
            Some(None) => Ok(i),
            Some(Some(_)) => Err(self.err(format!("{what} `{name}` reuses value {value}"))),
            None => Err(self.err(format!("{what} `{name}` has value {value}, outside 1..={n}"))),
        }
    }

    fn put(&mut self, slot: usize, datum: T) {
        if let Some(s) = self.slots.get_mut(slot) {
            *s = Some(datum);
        }
    }

    /// Records a name (of a symbol or an alias), refusing a duplicate.
    fn name(&mut self, name: &str, id: Id) -> Result<()> {
        if self.names.insert(name.to_owned(), id).is_some() {
            return Err(self.err(format!("duplicate {} `{name}`", self.what)));
        }
        Ok(())
    }

    /// The symbols by value, refused if a value has none.
    fn take_values(&mut self) -> Result<Vec<T>> {
        let n = self.slots.len();
        let mut out = Vec::with_capacity(n);
        for (i, s) in std::mem::take(&mut self.slots).into_iter().enumerate() {
            match s {
                Some(v) => out.push(v),
                None => return Err(self.err(format!("no {} has value {} of 1..={n}", self.what, i + 1))),
            }
        }
        Ok(out)
    }

    /// The symbols by value, values with no symbol filled by `unnamed`.
    fn take_values_or(&mut self, unnamed: impl Fn() -> T) -> Vec<T> {
        std::mem::take(&mut self.slots).into_iter().map(|s| s.unwrap_or_else(&unnamed)).collect()
    }

    /// Adds `name` as an alias of the named symbol of `value` in `values`.
    fn alias(&mut self, values: &mut [T], name: String, value: u32, id: Id) -> Result<()>
    where
        T: Aliased,
    {
        let Some(target) = values.get_mut((value as usize).wrapping_sub(1)).filter(|t| t.is_named()) else {
            return Err(self.err(format!("{} alias `{name}` names value {value}", self.what)));
        };
        target.aliases().push(name.clone());
        self.name(&name, id)
    }

    fn into_names(self) -> HashMap<String, Id> {
        self.names
    }
}

/// Symbols that may have aliases: types, sensitivities and categories.
trait Aliased {
    /// False for a value no symbol declared (see [`index_categories`]).
    fn is_named(&self) -> bool;
    fn aliases(&mut self) -> &mut Vec<String>;
}

impl Aliased for TypeDatum {
    fn is_named(&self) -> bool {
        !self.name.is_empty()
    }
    fn aliases(&mut self) -> &mut Vec<String> {
        &mut self.aliases
    }
}

impl Aliased for Sensitivity {
    fn is_named(&self) -> bool {
        !self.name.is_empty()
    }
    fn aliases(&mut self) -> &mut Vec<String> {
        &mut self.aliases
    }
}

impl Aliased for Category {
    fn is_named(&self) -> bool {
        !self.name.is_empty()
    }
    fn aliases(&mut self) -> &mut Vec<String> {
        &mut self.aliases
    }
}

fn index_commons(raw: Vec<RawCommon>, n: u32, at: usize) -> Result<(Vec<Common>, HashMap<String, u32>)> {
    let mut ix = SymIndex::new("common", n, raw.len(), at);
    for c in raw {
        let slot = ix.slot(c.value, &c.name)?;
        ix.name(&c.name, c.value)?;
        ix.put(slot, Common { name: c.name, perms: c.perms, nprim: c.nprim });
    }
    Ok((ix.take_values()?, ix.into_names()))
}

fn index_categories(raw: Vec<RawCat>, n: u32, at: usize) -> Result<(Vec<Category>, HashMap<String, u32>)> {
    let mut ix = SymIndex::new("category", n, raw.len(), at);
    let (aliases, primaries): (Vec<_>, Vec<_>) = raw.into_iter().partition(|c| c.alias);
    for c in primaries {
        let slot = ix.slot(c.value, &c.name)?;
        ix.name(&c.name, c.value)?;
        ix.put(slot, Category { name: c.name, aliases: Vec::new() });
    }
    // checkpolicy counts each alias in `nprim` although aliases share
    // their primary's value, so values with no primary are legal (the
    // kernel leaves their names NULL): keep them as unnamed slots.
    let mut cats = ix.take_values_or(|| Category { name: String::new(), aliases: Vec::new() });
    for a in aliases {
        ix.alias(&mut cats, a.name, a.value, a.value)?;
    }
    Ok((cats, ix.into_names()))
}

fn index_sensitivities(
    raw: Vec<RawSens>,
    n: u32,
    n_cats: u32,
    at: usize,
) -> Result<(Vec<Sensitivity>, HashMap<String, u32>)> {
    let mut ix = SymIndex::new("sensitivity", n, raw.len(), at);
    let (aliases, primaries): (Vec<_>, Vec<_>) = raw.into_iter().partition(|s| s.alias);
    for s in primaries {
        let value = s.level.sens;
        let slot = ix.slot(value, &s.name)?;
        ix.name(&s.name, value)?;
        let cats = s.level.cats.into_bitset(n_cats, "sensitivity category")?;
        ix.put(slot, Sensitivity { name: s.name, cats, aliases: Vec::new() });
    }
    // Unnamed values, as for categories; no valid level may use one.
    let mut sens = ix.take_values_or(|| Sensitivity { name: String::new(), cats: BitSet::new(), aliases: Vec::new() });
    for a in aliases {
        let v = a.level.sens;
        ix.alias(&mut sens, a.name, v, v)?;
    }
    Ok((sens, ix.into_names()))
}

fn index_types(raw: Vec<RawType>, n: u32, at: usize) -> Result<(Vec<TypeDatum>, HashMap<String, TypeId>)> {
    let mut ix = SymIndex::new("type", n, raw.len(), at);
    let (primaries, aliases): (Vec<_>, Vec<_>) = raw.into_iter().partition(|t| t.primary);
    for t in primaries {
        let slot = ix.slot(t.value, &t.name)?;
        ix.name(&t.name, TypeId(t.value))?;
        ix.put(slot, TypeDatum { name: t.name, attribute: t.attribute, bounds: t.bounds, aliases: Vec::new() });
    }
    let mut types = ix.take_values()?;
    for a in aliases {
        ix.alias(&mut types, a.name, a.value, TypeId(a.value))?;
    }
    for t in &types {
        if t.bounds > n {
            return Err(ix.err(format!("type `{}` bounded by unknown type {}", t.name, t.bounds)));
        }
    }
    // A bounds chain longer than the number of types has a cycle.
    for t in &types {
        let mut next = t.bounds;
        let mut steps = 0u32;
        while next != 0 {
            steps += 1;
            if steps > n {
                return Err(ix.err(format!("type `{}` is in a typebounds cycle", t.name)));
            }
            next = types[next as usize - 1].bounds;
        }
    }
    Ok((types, ix.into_names()))
}

/// Roles (object_r is value 1 and carries no data of its own).
fn index_roles(raw: Vec<RawRole>, l: &Limits, at: usize) -> Result<(Vec<Role>, HashMap<String, RoleId>)> {
    let mut ix = SymIndex::new("role", l.roles, raw.len(), at);
    for r in raw {
        let slot = ix.slot(r.value, &r.name)?;
        if r.name == "object_r" && r.value != OBJECT_R.0 {
            return Err(ix.err(format!("role object_r has value {}, expected 1", r.value)));
        }
        if r.bounds > l.roles {
            return Err(ix.err(format!("role `{}` bounded by unknown role {}", r.name, r.bounds)));
        }
        ix.name(&r.name, RoleId(r.value))?;
        let (dominates, types) = if r.name == "object_r" {
            (BitSet::new(), BitSet::new())
        } else {
            (r.dominates.into_bitset(l.roles, "role dominance")?, r.types.into_bitset(l.types, "role types")?)
        };
        ix.put(slot, Role { name: r.name, bounds: r.bounds, dominates, types });
    }
    let roles = ix.take_values()?;
    if roles.first().map(|r| r.name.as_str()) != Some("object_r") {
        return Err(ix.err("role value 1 is not object_r".into()));
    }
    Ok((roles, ix.into_names()))
}

fn index_users(
    raw: Vec<RawUser>,
    l: &Limits,
    mls: &MlsLimits,
    sens: &[Sensitivity],
    at: usize,
) -> Result<(Vec<User>, HashMap<String, UserId>)> {
    let mut ix = SymIndex::new("user", l.users, raw.len(), at);
    for u in raw {
        let slot = ix.slot(u.value, &u.name)?;
        if u.bounds > l.users {
            return Err(ix.err(format!("user `{}` bounded by unknown user {}", u.name, u.bounds)));
        }
        ix.name(&u.name, UserId(u.value))?;
        let range = mls.range(u.range, sens)?;
        let default_level = mls.level(u.dflt, sens)?;
        let roles = u.roles.into_bitset(l.roles, "user roles")?;
        ix.put(slot, User { name: u.name, bounds: u.bounds, roles, range, default_level });
    }
    Ok((ix.take_values()?, ix.into_names()))
}

fn index_bools(raw: Vec<RawBool>, n: u32, at: usize) -> Result<(Vec<Bool>, HashMap<String, BoolId>)> {
    let mut ix = SymIndex::new("boolean", n, raw.len(), at);
    for b in raw {
        let slot = ix.slot(b.value, &b.name)?;
        ix.name(&b.name, BoolId(b.value))?;
        ix.put(slot, Bool { name: b.name, default: b.state });
    }
    Ok((ix.take_values()?, ix.into_names()))
}

/// Classes, checked against their common (`class_index`) and with their
/// constraints' names checked against every other table.
fn index_classes(
    raw: Vec<RawClass>,
    commons: &[Common],
    common_names: &HashMap<String, u32>,
    l: &Limits,
    at: usize,
) -> Result<(Vec<Class>, HashMap<String, ClassId>)> {
    let mut ix = SymIndex::new("class", l.classes, raw.len(), at);
    for rc in raw {
        let common = match &rc.common {
            None => None,
            Some(name) => match common_names.get(name) {
                Some(&v) => Some(v as usize - 1),
                None => return Err(ix.err(format!("class `{}` uses unknown common `{name}`", rc.name))),
            },
        };
        if let Some(ci) = common {
            let com = &commons[ci];
            if com.nprim > rc.nprim {
                return Err(ix.err(format!("class `{}` has fewer permissions than its common", rc.name)));
            }
            if let Some(p) = rc.perms.keys().find(|p| com.perms.contains_key(*p)) {
                return Err(ix.err(format!("class `{}` redefines common permission `{p}`", rc.name)));
            }
        }
        for (p, &v) in &rc.perms {
            let clash = common.is_some_and(|ci| v <= commons[ci].nprim);
            if clash {
                return Err(ix.err(format!("class `{}` permission `{p}` reuses a common value", rc.name)));
            }
        }
        let slot = ix.slot(rc.value, &rc.name)?;
        ix.name(&rc.name, ClassId(rc.value))?;
        let constraints = rc.constraints.into_iter().map(|k| l.constraint(k)).collect::<Result<_>>()?;
        let validatetrans = rc.validatetrans.into_iter().map(|k| l.constraint(k)).collect::<Result<_>>()?;
        ix.put(
            slot,
            Class {
                name: rc.name,
                common,
                perms: rc.perms,
                nprim: rc.nprim,
                constraints,
                validatetrans,
                default_user: rc.defaults[0],
                default_role: rc.defaults[1],
                default_range: rc.defaults[2],
                default_type: rc.defaults[3],
            },
        );
    }
    Ok((ix.take_values()?, ix.into_names()))
}

struct Limits {
    types: u32,
    roles: u32,
    users: u32,
    classes: u32,
    bools: u32,
}

impl Limits {
    fn constraint(&self, k: RawConstraint) -> Result<Constraint> {
        let mut expr = Vec::with_capacity(k.expr.len());
        for e in k.expr {
            expr.push(match e {
                RawCexpr::Not => ConstraintExpr::Not,
                RawCexpr::And => ConstraintExpr::And,
                RawCexpr::Or => ConstraintExpr::Or,
                RawCexpr::Attr { attr, op } => ConstraintExpr::Attr { attr, op },
                RawCexpr::Names { attr, op, names, types, negset, flags } => {
                    let limit = if attr & cexpr::USER != 0 {
                        self.users
                    } else if attr & cexpr::ROLE != 0 {
                        self.roles
                    } else {
                        self.types
                    };
                    let names = names.into_bitset(limit, "constraint names")?;
                    let types = types.into_bitset(self.types, "constraint type set")?;
                    let negset = negset.into_bitset(self.types, "constraint type set")?;
                    let written = !(types.is_empty() && negset.is_empty() && flags == 0);
                    let type_set = written.then_some(TypeSet { types, negset, flags });
                    ConstraintExpr::Names { attr, op, names, type_set }
                }
            });
        }
        Ok(Constraint { perms: k.perms, expr })
    }
}

struct MlsLimits {
    n_sens: u32,
    n_cats: u32,
}

impl MlsLimits {
    fn of(p: &Policy) -> MlsLimits {
        MlsLimits { n_sens: p.sens.len() as u32, n_cats: p.cats.len() as u32 }
    }

    fn level(&self, l: RawLevel, sens: &[Sensitivity]) -> Result<Level> {
        let unnamed = sens.get((l.sens as usize).wrapping_sub(1)).is_some_and(|s| s.name.is_empty());
        if l.sens > self.n_sens || unnamed {
            let at = l.cats.offset().saturating_sub(4);
            return Err(PolicyError::new("levels", at, format!("level names unknown sensitivity {}", l.sens)));
        }
        Ok(Level { sens: l.sens, cats: l.cats.into_bitset(self.n_cats, "level categories")? })
    }

    fn range(&self, r: RawRange, sens: &[Sensitivity]) -> Result<Range> {
        let [lc, hc] = r.cats;
        let low = self.level(RawLevel { sens: r.sens[0], cats: lc }, sens)?;
        let high = self.level(RawLevel { sens: r.sens[1], cats: hc }, sens)?;
        Ok(Range { low, high })
    }
}

fn in_range(v: u32, n: u32) -> bool {
    v >= 1 && v <= n
}
