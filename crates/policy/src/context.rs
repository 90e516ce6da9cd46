//! Security context strings: parsing and validation exactly like
//! libsepol's `sepol_context_to_sid`, and printing like
//! `sepol_sid_to_context`.
//!
//! `user:role:type[:mls]`, split at the first three colons; the MLS part
//! is `sens[:cats][-sens[:cats]]` with categories `c1,c3` or ranges
//! `c0.c1023`. Names may be aliases; a type must not be an attribute; the
//! result must pass [`Policy::context_is_valid`].

use crate::bitset::BitSet;
use crate::error::ContextError;
use crate::model::{Context, Level, Range, RoleId, TypeId, UserId};
use crate::policy::Policy;

impl Policy {
    /// Parses and validates a context string.
    pub fn parse_context(&self, s: &str) -> Result<Context, ContextError> {
        let err = |why: String| ContextError::new(s, why);
        if s.is_empty() {
            return Err(err("empty context".into()));
        }
        let mut parts = s.splitn(4, ':');
        let (Some(user), Some(role), Some(ty)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(err("malformed: expected user:role:type[:level]".into()));
        };
        let mls = parts.next();
        let user = *self.names.users.get(user).ok_or_else(|| err(format!("user `{user}` is not defined")))?;
        let role = *self.names.roles.get(role).ok_or_else(|| err(format!("role `{role}` is not defined")))?;
        let ty_id = *self.names.types.get(ty).ok_or_else(|| err(format!("type `{ty}` is not defined")))?;
        if self.types.get(ty_id.index()).is_some_and(|t| t.attribute) {
            return Err(err(format!("`{ty}` is an attribute, not a type")));
        }
        let range = match (mls, self.mls) {
            (Some(m), true) => self.parse_mls(m).ok_or_else(|| err(format!("invalid MLS range `{m}`")))?,
            (None, true) => return Err(err("MLS is enabled, but the context has no level".into())),
            (Some(m), false) => return Err(err(format!("MLS is disabled, but the context has level `{m}`"))),
            (None, false) => {
                Range { low: Level { sens: 0, cats: BitSet::new() }, high: Level { sens: 0, cats: BitSet::new() } }
            }
        };
        let c = Context { user, role, ty: ty_id, range };
        if !self.context_is_valid(&c) {
            return Err(err(self.why_invalid(&c)));
        }
        Ok(c)
    }

    /// libsepol `mls_context_to_sid`, without the validity check.
    fn parse_mls(&self, m: &str) -> Option<Range> {
        let b = m.as_bytes();
        let mut p = 0usize;
        // Next token up to one of `stops` (or the end); returns it and the
        // delimiter (0 at the end).
        let token = |p: &mut usize, stops: &[u8]| -> (&str, u8) {
            let start = *p;
            while *p < b.len() && !stops.contains(&b[*p]) {
                *p += 1;
            }
            let delim = if *p < b.len() { b[*p] } else { 0 };
            let tok = &m[start..*p];
            if delim != 0 {
                *p += 1;
            }
            (tok, delim)
        };
        let (mut sens_name, mut delim) = token(&mut p, b":-");
        let mut levels: Vec<Level> = Vec::with_capacity(2);
        for l in 0..2 {
            let sens = *self.names.sens.get(sens_name)?;
            let mut cats = BitSet::new();
            if delim == b':' {
                loop {
                    let (tok, d) = token(&mut p, b",-");
                    delim = d;
                    let (first, last) = match tok.split_once('.') {
                        Some((a, z)) => (a, Some(z)),
                        None => (tok, None),
                    };
                    let lo = *self.names.cats.get(first)?;
                    cats.insert(lo - 1);
                    if let Some(z) = last {
                        let hi = *self.names.cats.get(z)?;
                        if lo >= hi {
                            return None;
                        }
                        for v in lo..hi {
                            cats.insert(v);
                        }
                    }
                    if delim != b',' {
                        break;
                    }
                }
            }
            levels.push(Level { sens, cats });
            if delim == b'-' && l == 0 {
                let (s, d) = token(&mut p, b":");
                sens_name = s;
                delim = d;
            } else {
                break;
            }
        }
        let low = levels.first()?.clone();
        let high = levels.get(1).cloned().unwrap_or_else(|| low.clone());
        Some(Range { low, high })
    }

    /// A human explanation of why a structurally parsed context is invalid.
    fn why_invalid(&self, c: &Context) -> String {
        let (u, r, t) = (self.user_name(c.user), self.role_name(c.role), self.type_name(c.ty));
        if c.role != crate::model::OBJECT_R {
            if !self.roles[c.role.index()].types.contains(c.ty.bit()) {
                return format!("role `{r}` is not authorized for type `{t}`");
            }
            if !self.users[c.user.index()].roles.contains(c.role.bit()) {
                return format!("user `{u}` is not authorized for role `{r}`");
            }
        }
        if self.mls && !self.range_is_valid(&c.range) {
            return "the level is invalid (unknown category for its sensitivity, or high does not dominate low)".into();
        }
        format!("the range is outside the range of user `{u}`")
    }

    /// Prints a context like libsepol (`user:role:type:s0-s0:c0.c1023`).
    pub fn context_to_string(&self, c: &Context) -> String {
        let mut s = format!("{}:{}:{}", self.user_name(c.user), self.role_name(c.role), self.type_name(c.ty));
        if self.mls {
            s.push(':');
            s.push_str(&self.range_to_string(&c.range));
        }
        s
    }

    pub fn range_to_string(&self, r: &Range) -> String {
        let mut s = self.level_to_string(&r.low);
        if r.low != r.high {
            s.push('-');
            s.push_str(&self.level_to_string(&r.high));
        }
        s
    }

    /// `s0:c0,c2.c5`: runs of three or more as `a.b`, of two as `a,b`.
    pub fn level_to_string(&self, l: &Level) -> String {
        let mut s = self.sens.get(l.sens.wrapping_sub(1) as usize).map_or_else(|| "?".into(), |x| x.name.clone());
        let name = |v: u32| self.cats.get(v as usize).map_or("?", |c| c.name.as_str());
        let bits: Vec<u32> = l.cats.iter().collect();
        let mut i = 0;
        let mut first = true;
        while i < bits.len() {
            let mut j = i;
            while j + 1 < bits.len() && bits[j + 1] == bits[j] + 1 {
                j += 1;
            }
            s.push(if first { ':' } else { ',' });
            first = false;
            s.push_str(name(bits[i]));
            match j - i {
                0 => {}
                1 => {
                    s.push(',');
                    s.push_str(name(bits[j]));
                }
                _ => {
                    s.push('.');
                    s.push_str(name(bits[j]));
                }
            }
            i = j + 1;
        }
        s
    }

    pub fn user_by_name(&self, n: &str) -> Option<UserId> {
        self.names.users.get(n).copied()
    }

    pub fn role_by_name(&self, n: &str) -> Option<RoleId> {
        self.names.roles.get(n).copied()
    }

    pub fn type_by_name(&self, n: &str) -> Option<TypeId> {
        self.names.types.get(n).copied()
    }
}
