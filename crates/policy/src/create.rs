//! New labels: the context of a new object, of a process after `exec`, of
//! a member of a polyinstantiated object, or of a relabeled object.
//!
//! Why this module exists: access decisions are only half of what the
//! kernel asks the policy; the other half is "what label does this new
//! thing get". A userspace implementation that disagrees with the kernel
//! here labels files and processes differently from the running system,
//! so the computation must be bit-exact. It follows libsepol 3.4's
//! `sepol_compute_sid` (services.c) and `mls_compute_sid` (mls.c) step by
//! step, in the same order, with the same defaults; the one addition is
//! the kernel's `filename_compute_type` (name-based `type_transition`),
//! applied where the kernel applies it, since libsepol 3.4 takes no name.
//!
//! The steps, for source context `s`, target context `t`, class `c`:
//!
//! 1. **User.** Transition and change: `t`'s user when `c` says
//!    `default_user target`, else `s`'s (also for `default_user source`
//!    and unset). Member: always `t`'s user.
//! 2. **Role.** `default_role source` → `s`'s role; `default_role target`
//!    → `t`'s role; otherwise `s`'s role for the process class and
//!    `object_r` for every other class.
//! 3. **Type.** `default_type source` → `s`'s type; `default_type target`
//!    → `t`'s type; otherwise `s`'s type for the process class, `t`'s for
//!    every other class. Then the type rule keyed exactly by
//!    (`s` type, `t` type, `c`, kind) replaces it: the unconditional rule
//!    if there is one, else the rule of an enabled conditional branch.
//! 4. **Filename** (transition with a name only, kernel semantics): a
//!    `type_transition S T:C "name" N` rule whose source set contains `s`'s
//!    type replaces the type from step 3.
//! 5. **Role transition** (transition only, any class): the first
//!    `role_transition` for (`s` role, `t` type, `c`) replaces the role.
//! 6. **Range** (MLS policies only), see `Policy::create_range`.
//! 7. The result must be a valid context (`policydb_context_isvalid`);
//!    libsepol in enforcing mode then fails with `-EACCES`, we return
//!    [`CreateError::InvalidContext`].

use std::fmt;

use crate::bitset::BitSet;
use crate::booleans::{Booleans, CondState};
use crate::model::{avtab_kind, Class, ClassId, Context, Level, Range, RoleId, RuleCond, TypeId, UserId, OBJECT_R};
use crate::policy::Policy;

/// `default_user`/`default_role`/`default_type source` (libsepol
/// `DEFAULT_SOURCE`).
pub const DEFAULT_SOURCE: u32 = 1;
/// `default_user`/`default_role`/`default_type target` (libsepol
/// `DEFAULT_TARGET`).
pub const DEFAULT_TARGET: u32 = 2;

/// `default_range` values of a class (libsepol policydb.h).
pub mod default_range {
    /// `default_range source low`.
    pub const SOURCE_LOW: u32 = 1;
    /// `default_range source high`.
    pub const SOURCE_HIGH: u32 = 2;
    /// `default_range source low-high`.
    pub const SOURCE_LOW_HIGH: u32 = 3;
    /// `default_range target low`.
    pub const TARGET_LOW: u32 = 4;
    /// `default_range target high`.
    pub const TARGET_HIGH: u32 = 5;
    /// `default_range target low-high`.
    pub const TARGET_LOW_HIGH: u32 = 6;
    /// `default_range glblub`: the intersection of the two ranges.
    pub const GLBLUB: u32 = 7;
}

/// Which label computation: the three avtab type-rule kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CreateKind {
    /// `type_transition`: a new object, or a process after `exec`
    /// (`security_transition_sid`).
    Transition,
    /// `type_member`: the member of a polyinstantiated object
    /// (`security_member_sid`).
    Member,
    /// `type_change`: relabeling an object, e.g. a terminal at login
    /// (`security_change_sid`).
    Change,
}

impl CreateKind {
    /// The avtab rule kind this computation looks up (`AVTAB_TRANSITION`,
    /// `AVTAB_MEMBER` or `AVTAB_CHANGE`).
    pub fn avtab_kind(self) -> u16 {
        match self {
            CreateKind::Transition => avtab_kind::TRANSITION,
            CreateKind::Member => avtab_kind::MEMBER,
            CreateKind::Change => avtab_kind::CHANGE,
        }
    }

    /// The policy-language keyword of the rule kind (`type_transition`,
    /// ...).
    pub fn rule_keyword(self) -> &'static str {
        match self {
            CreateKind::Transition => "type_transition",
            CreateKind::Member => "type_member",
            CreateKind::Change => "type_change",
        }
    }
}

impl fmt::Display for CreateKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CreateKind::Transition => "transition",
            CreateKind::Member => "member",
            CreateKind::Change => "change",
        })
    }
}

/// Why no label could be computed. libsepol (enforcing) fails the same
/// queries: `-EACCES` for [`CreateError::InvalidContext`], `-EINVAL` for
/// [`CreateError::NoCommonSensitivity`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CreateError {
    /// The computed context is not valid under the policy.
    #[error(
        "computed {kind} context `{context}` is invalid ({reason}) for {query}; \
         the policy needs a rule giving a valid label here (role_transition, range_transition, or authorizing the role/user)"
    )]
    InvalidContext {
        /// The invalid result, printed.
        context: String,
        /// What makes it invalid.
        reason: String,
        /// The query: `scontext=... tcontext=... tclass=...`.
        query: String,
        /// Which computation.
        kind: CreateKind,
    },
    /// `default_range glblub` with two ranges that share no sensitivity.
    #[error("default_range glblub: the ranges share no sensitivity, for {query}")]
    NoCommonSensitivity {
        /// The query: `scontext=... tcontext=... tclass=...`.
        query: String,
    },
}

/// The `AVTAB_CHANGE` case of `mls_compute_sid` (also where a transition
/// without rule or default falls through to): a process (or, in the
/// kernel, a socket) takes `s`'s whole range, every other object its low
/// level.
fn change_range(s: &Context, like_process: bool) -> Range {
    if like_process {
        s.range.clone()
    } else {
        single(&s.range.low)
    }
}

/// Both levels set to `l` (libsepol `mls_context_cpy_low`/`_high`).
fn single(l: &Level) -> Range {
    Range { low: l.clone(), high: l.clone() }
}

/// libsepol `mls_range_glblub`: greatest low, least high, categories
/// intersected level by level; `None` when no sensitivity is common.
fn glblub(r1: &Range, r2: &Range) -> Option<Range> {
    if r1.high.sens < r2.low.sens || r2.high.sens < r1.low.sens {
        return None;
    }
    Some(Range {
        low: Level { sens: r1.low.sens.max(r2.low.sens), cats: r1.low.cats.intersection(&r2.low.cats) },
        high: Level { sens: r1.high.sens.min(r2.high.sens), cats: r1.high.cats.intersection(&r2.high.cats) },
    })
}

impl Policy {
    /// New context for an object of class `class` created by `s` in or
    /// under `t` (or, with the process class, for process `s` executing a
    /// file labeled `t`), exactly as libsepol's `sepol_compute_sid`.
    ///
    /// `name` (the last path component) enables name-based
    /// `type_transition` rules; it is used only for
    /// [`CreateKind::Transition`], as in the kernel. `bools` selects the
    /// active conditional rules. An unknown `class` behaves as in
    /// libsepol: no class defaults and no rules apply.
    pub fn compute_create(
        &self,
        bools: &Booleans,
        s: &Context,
        t: &Context,
        class: ClassId,
        kind: CreateKind,
        name: Option<&str>,
    ) -> Result<Context, CreateError> {
        self.compute(bools, s, t, class, kind, name, self.is_process_class(class))
    }

    /// The context of a socket of class `class` that process `s` makes
    /// (the kernel's `socket_sockcreate_sid` without a `sockcreate`
    /// attribute: `security_transition_sid(s, s, class)`). The kernel's
    /// `security_compute_sid` treats socket classes as it treats the
    /// process class (`sock`): without a class default, the socket takes
    /// `s`'s role, type and whole range, where another object takes
    /// `object_r` and the low level. libsepol 3.4 has no such case.
    pub fn compute_socket_create(&self, bools: &Booleans, s: &Context, class: ClassId) -> Result<Context, CreateError> {
        self.compute(bools, s, s, class, CreateKind::Transition, None, true)
    }

    /// [`Policy::compute_create`], with `like_process`: whether the class
    /// takes the source's role, type and range by default (the process
    /// class; a socket class in the kernel).
    #[allow(clippy::too_many_arguments)]
    fn compute(
        &self,
        bools: &Booleans,
        s: &Context,
        t: &Context,
        class: ClassId,
        kind: CreateKind,
        name: Option<&str>,
        like_process: bool,
    ) -> Result<Context, CreateError> {
        let cladatum = self.class(class);
        let user = self.create_user(cladatum, s, t, kind);
        let mut role = create_default_role(cladatum, s, t, like_process);
        let mut ty = create_default_type(cladatum, s, t, like_process);
        if let Some(new) = self.type_rule(bools, s.ty, t.ty, class, kind) {
            ty = new;
        }
        if kind == CreateKind::Transition {
            if let Some(new) = name.and_then(|n| self.filename_rule(s.ty, t.ty, class, n)) {
                ty = new;
            }
            if let Some(new) = self.role_transition(s.role, t.ty, class) {
                role = new;
            }
        }
        let range = self.create_range(s, t, class, kind, like_process)?;
        let c = Context { user, role, ty, range };
        if !self.context_is_valid(&c) {
            return Err(CreateError::InvalidContext {
                context: self.context_to_string(&c),
                reason: self.create_invalid_reason(&c),
                query: self.create_query(s, t, class),
                kind,
            });
        }
        Ok(c)
    }

    /// The MLS range of a new context (libsepol `mls_compute_sid`). For a
    /// policy without MLS, the empty range every context has.
    ///
    /// - Transition: a `range_transition` for (`s` type, `t` type, class)
    ///   gives the range; else the class's `default_range` (source or
    ///   target low, high, low-high, or glblub); else as change.
    /// - Change: the process class (and a socket's) takes `s`'s whole
    ///   range; every other class takes `s`'s low level as both low and
    ///   high.
    /// - Member: `s`'s low level as both low and high, for every class.
    fn create_range(
        &self,
        s: &Context,
        t: &Context,
        class: ClassId,
        kind: CreateKind,
        like_process: bool,
    ) -> Result<Range, CreateError> {
        if !self.mls {
            let none = Level { sens: 0, cats: BitSet::new() };
            return Ok(Range { low: none.clone(), high: none });
        }
        match kind {
            CreateKind::Transition => {
                if let Some(r) =
                    self.range_trans.iter().find(|r| r.source == s.ty && r.target == t.ty && r.class == class)
                {
                    return Ok(r.range.clone());
                }
                let dflt = self.class(class).map_or(0, |c| c.default_range);
                match dflt {
                    default_range::SOURCE_LOW => return Ok(single(&s.range.low)),
                    default_range::SOURCE_HIGH => return Ok(single(&s.range.high)),
                    default_range::SOURCE_LOW_HIGH => return Ok(s.range.clone()),
                    default_range::TARGET_LOW => return Ok(single(&t.range.low)),
                    default_range::TARGET_HIGH => return Ok(single(&t.range.high)),
                    default_range::TARGET_LOW_HIGH => return Ok(t.range.clone()),
                    default_range::GLBLUB => {
                        return glblub(&s.range, &t.range)
                            .ok_or_else(|| CreateError::NoCommonSensitivity { query: self.create_query(s, t, class) });
                    }
                    _ => {}
                }
                Ok(change_range(s, like_process))
            }
            CreateKind::Change => Ok(change_range(s, like_process)),
            CreateKind::Member => Ok(single(&s.range.low)),
        }
    }

    /// The new type of the type rule keyed exactly by (`source`, `target`,
    /// `class`, `kind`): unconditional first (libsepol searches
    /// `te_avtab`), else the first rule of an enabled conditional branch
    /// (`te_cond_avtab` nodes with `AVTAB_ENABLED`).
    pub fn type_rule(
        &self,
        bools: &Booleans,
        source: TypeId,
        target: TypeId,
        class: ClassId,
        kind: CreateKind,
    ) -> Option<TypeId> {
        let rules = self.index.type_rules.get(&(source.0, target.0, class.0, kind.avtab_kind()))?;
        let always = rules.iter().find(|(_, c)| *c == RuleCond::Always);
        let chosen = always.or_else(|| {
            rules.iter().find(|(_, c)| match *c {
                RuleCond::Always => false,
                RuleCond::If { cond, when } => {
                    bools.cond_state(cond) == if when { CondState::True } else { CondState::False }
                }
            })
        });
        chosen.map(|&(new, _)| TypeId(new))
    }

    /// The new type of a name-based `type_transition` (kernel
    /// `filename_compute_type`): the first rule for (`target`, `class`,
    /// `name`) whose source set contains `source`.
    pub fn filename_rule(&self, source: TypeId, target: TypeId, class: ClassId, name: &str) -> Option<TypeId> {
        self.filename_trans
            .iter()
            .find(|f| f.target == target && f.class == class && f.name == name && f.sources.contains(source.bit()))
            .map(|f| f.new_type)
    }

    /// The new role of the first `role_transition` for (`role`, `ty`,
    /// `class`), in file order as libsepol walks its list.
    pub fn role_transition(&self, role: RoleId, ty: TypeId, class: ClassId) -> Option<RoleId> {
        self.role_trans.iter().find(|r| r.role == role && r.ty == ty && r.class == class).map(|r| r.new_role)
    }

    /// libsepol compares the class value with `policydb->process_class`
    /// (0 when the policy has no `process` class).
    fn is_process_class(&self, class: ClassId) -> bool {
        self.process_class.map_or(0, |c| c.0) == class.0
    }

    fn create_user(&self, cladatum: Option<&Class>, s: &Context, t: &Context, kind: CreateKind) -> UserId {
        match kind {
            CreateKind::Transition | CreateKind::Change => {
                if cladatum.is_some_and(|c| c.default_user == DEFAULT_TARGET) {
                    t.user
                } else {
                    s.user
                }
            }
            CreateKind::Member => t.user,
        }
    }

    /// `scontext=S tcontext=T tclass=C`, as libsepol words it.
    fn create_query(&self, s: &Context, t: &Context, class: ClassId) -> String {
        format!(
            "scontext={} tcontext={} tclass={}",
            self.context_to_string(s),
            self.context_to_string(t),
            self.class_name(class)
        )
    }

    /// Why [`Policy::context_is_valid`] rejects `c`, in words.
    fn create_invalid_reason(&self, c: &Context) -> String {
        let (u, r, t) = (self.user_name(c.user), self.role_name(c.role), self.type_name(c.ty));
        let (Some(user), Some(role)) = (self.users.get(c.user.index()), self.roles.get(c.role.index())) else {
            return "undefined user or role".into();
        };
        let Some(tdatum) = self.types.get(c.ty.index()) else {
            return "undefined type".into();
        };
        if c.role != OBJECT_R {
            if !role.types.contains(c.ty.bit()) {
                let what = if tdatum.attribute { "attribute" } else { "type" };
                return format!("role `{r}` is not authorized for {what} `{t}`");
            }
            if !user.roles.contains(c.role.bit()) {
                return format!("user `{u}` is not authorized for role `{r}`");
            }
        }
        if self.mls && !self.range_is_valid(&c.range) {
            return "the range is invalid".into();
        }
        format!("the range is outside the range of user `{u}`")
    }
}

fn create_default_role(cladatum: Option<&Class>, s: &Context, t: &Context, like_process: bool) -> RoleId {
    match cladatum.map(|c| c.default_role) {
        Some(DEFAULT_SOURCE) => s.role,
        Some(DEFAULT_TARGET) => t.role,
        _ if like_process => s.role,
        _ => OBJECT_R,
    }
}

fn create_default_type(cladatum: Option<&Class>, s: &Context, t: &Context, like_process: bool) -> TypeId {
    match cladatum.map(|c| c.default_type) {
        Some(DEFAULT_SOURCE) => s.ty,
        Some(DEFAULT_TARGET) => t.ty,
        _ if like_process => s.ty,
        _ => t.ty,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lvl(sens: u32, cats: &[u32]) -> Level {
        Level { sens, cats: cats.iter().copied().collect() }
    }

    #[test]
    fn glblub_intersects() {
        let r1 = Range { low: lvl(1, &[0, 1]), high: lvl(3, &[0, 1, 2, 3]) };
        let r2 = Range { low: lvl(2, &[1, 2]), high: lvl(4, &[1, 2, 3, 9]) };
        let r = glblub(&r1, &r2);
        assert_eq!(r, Some(Range { low: lvl(2, &[1]), high: lvl(3, &[1, 2, 3]) }));
        let disjoint = Range { low: lvl(5, &[]), high: lvl(6, &[]) };
        assert_eq!(glblub(&r1, &disjoint), None);
        assert_eq!(glblub(&disjoint, &r1), None);
        // Touching ranges share one sensitivity.
        let touch = Range { low: lvl(3, &[]), high: lvl(6, &[]) };
        assert_eq!(glblub(&r1, &touch), Some(Range { low: lvl(3, &[]), high: lvl(3, &[]) }));
    }
}
