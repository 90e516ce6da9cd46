//! Exec transitions and attachment as the kernel's domain.c:
//! `find_attach` (`__attach_match`), `x_table_lookup`, `x_to_label` and
//! `profile_transition`.
//!
//! Labels are rendered as names: a profile's hierarchical name,
//! `unconfined`, a stack `A//&B` (profiles sorted by name, as
//! `aa_label_merge` orders them) or a complain-mode learning profile
//! `PROFILE//null-PATH`.

use crate::file::{audit_file, Record};
use crate::model::{Mode, Profile, CLASS_FILE, CLASS_XMATCH};
use crate::perms::*;
use crate::policy::{Policy, Subject, ROOT_NS};

/// `CONFLICTING_ATTACH_STR` and its fallback variants.
pub const CONFLICT: &str = "conflicting profile attachments";
const CONFLICT_IX: &str = "conflicting profile attachments - ix fallback";
const CONFLICT_UX: &str = "conflicting profile attachments - ux fallback";

/// The outcome of `find_attach`: the profile that attaches, if any, and
/// the kernel's `info` (set on a conflict).
#[derive(Clone, Copy, Debug)]
pub struct Attach<'a> {
    pub profile: Option<&'a Profile>,
    pub info: Option<&'static str>,
}

/// `__attach_match` over `candidates` (a profile list in order).
pub fn find_attach<'a>(candidates: impl Iterator<Item = &'a Profile>, name: &[u8]) -> Attach<'a> {
    let mut best: Option<&Profile> = None;
    let mut best_len = 0usize;
    let mut conflict = false;
    for p in candidates {
        if let Some(x) = &p.xmatch {
            let (state, count) = x.dfa.leftmatch(x.start[CLASS_XMATCH], name);
            let index = x.dfa.accept.get(state as usize).copied().unwrap_or(0) as usize;
            let perm = x.perms.get(index).map_or(0, |q| q.allow);
            if perm & MAY_EXEC == 0 {
                continue;
            }
            // no xattrs here: an exec path alone cannot match them
            if !p.xattrs.is_empty() {
                continue;
            }
            if count < best_len {
                continue;
            }
            // equally specific (also a first match of length 0): conflict
            if count == best_len {
                conflict = true;
                continue;
            }
            best = Some(p);
            best_len = count.max(p.xmatch_len as usize);
            conflict = false;
        } else if p.base_name().as_bytes() == name {
            return Attach { profile: Some(p), info: None };
        }
    }
    if conflict || best.is_none() {
        return Attach { profile: None, info: conflict.then_some(CONFLICT) };
    }
    Attach { profile: best, info: None }
}

/// Every profile of namespace `ns`.
fn profiles_in<'a>(policy: &'a Policy, ns: &str) -> impl Iterator<Item = &'a Profile> + 'a {
    let ns = ns.to_owned();
    policy.namespaces().iter().filter(move |n| n.name == ns).flat_map(|n| n.profiles.iter())
}

/// The top-level profiles of namespace `ns`: the list attachment walks.
fn top_level<'a>(policy: &'a Policy, ns: &str) -> impl Iterator<Item = &'a Profile> + 'a {
    profiles_in(policy, ns).filter(|p| p.parent().is_none())
}

/// The children (hats and child profiles) of `parent` in namespace `ns`.
fn children<'a>(policy: &'a Policy, ns: &str, parent: &'a str) -> impl Iterator<Item = &'a Profile> + 'a {
    profiles_in(policy, ns).filter(move |p| p.parent() == Some(parent))
}

/// What an exec does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecDecision {
    /// Whether the exec proceeds.
    pub allowed: bool,
    /// The qualifier as the kernel sees it (`ix`, `Px`, `cx->name`...),
    /// `-` without exec permission.
    pub mode: String,
    /// The new label, `None` when the exec fails.
    pub label: Option<String>,
    pub info: Option<&'static str>,
    /// `secureexec`: the environment is scrubbed.
    pub scrub: bool,
    pub record: Option<Record>,
}

/// Renders the qualifier of an xindex.
pub fn mode_name(xindex: u32, trans: &[String]) -> String {
    let safe = xindex & AA_X_UNSAFE == 0;
    let up = |s: &str| if safe { s.to_uppercase() } else { s.to_owned() };
    let fallback = if xindex & AA_X_INHERIT != 0 {
        "i".to_owned()
    } else if xindex & AA_X_UNCONFINED != 0 {
        up("u")
    } else {
        String::new()
    };
    match xindex & AA_X_TYPE_MASK {
        AA_X_NAME | AA_X_TABLE => {
            let base = if xindex & AA_X_CHILD != 0 { up("c") } else { up("p") };
            let m = format!("{base}{fallback}x");
            if xindex & AA_X_TYPE_MASK == AA_X_TABLE {
                let name = trans.get((xindex & AA_X_INDEX_MASK) as usize).map_or("?", |s| s.as_str());
                format!("{m}->{name}")
            } else {
                m
            }
        }
        _ if xindex & AA_X_INHERIT != 0 => "ix".to_owned(),
        _ if xindex & AA_X_UNCONFINED != 0 => up("u") + "x",
        _ => "x".to_owned(),
    }
}

/// A label, as a sorted set of profile names.
fn stack(a: &str, b: &str) -> String {
    let mut v: Vec<&str> = a.split("//&").chain(b.split("//&")).collect();
    v.sort_unstable();
    v.dedup();
    v.join("//&")
}

/// `aa_label_parse` for an x-table entry: a profile name (hierarchical,
/// in the profile's namespace), `unconfined`, or `&name` stacked on the
/// current profile.
fn parse_label(policy: &Policy, ns: &str, current: &Profile, name: &str) -> Option<String> {
    let (stacked, name) = match name.strip_prefix('&') {
        Some(n) => (true, n),
        None => (false, name),
    };
    let resolved = if name == "unconfined" {
        "unconfined".to_owned()
    } else {
        let q = if ns == ROOT_NS { name.to_owned() } else { format!(":{ns}:{name}") };
        policy.profile(&q)?;
        name.to_owned()
    };
    Some(if stacked { stack(&current.name, &resolved) } else { resolved })
}

/// `x_to_label`: (label, lookup name, info).
fn x_to_label(
    policy: &Policy,
    ns: &str,
    p: &Profile,
    name: &[u8],
    xindex: u32,
) -> (Option<String>, Option<&'static str>) {
    let mut info: Option<&'static str> = None;
    let mut new: Option<String> = None;
    let mut stack_label: Option<String> = None;
    let trans = p.file.as_ref().map_or(&[][..], |f| &f.trans[..]);
    let mut by_name = xindex & AA_X_TYPE_MASK == AA_X_NAME;
    if xindex & AA_X_TYPE_MASK == AA_X_TABLE {
        if let Some(entry) = trans.get((xindex & AA_X_INDEX_MASK) as usize) {
            let found = if xindex & AA_X_CHILD != 0 {
                let child = format!("{}//{}", p.name, entry);
                let q = if ns == ROOT_NS { child.clone() } else { format!(":{ns}:{child}") };
                policy.profile(&q).map(|_| child)
            } else {
                parse_label(policy, ns, p, entry)
            };
            match found {
                Some(l) if entry.starts_with('&') => {
                    stack_label = Some(l);
                    by_name = true;
                }
                other => new = other,
            }
        }
    }
    if by_name {
        let a = if xindex & AA_X_CHILD != 0 {
            find_attach(children(policy, ns, &p.name), name)
        } else {
            find_attach(top_level(policy, ns), name)
        };
        info = a.info;
        new = a.profile.map(|q| q.name.clone());
    }
    if new.is_none() {
        if xindex & AA_X_INHERIT != 0 {
            info = Some(if info == Some(CONFLICT) { CONFLICT_IX } else { "ix fallback" });
            new = Some(p.name.clone());
        } else if xindex & AA_X_UNCONFINED != 0 {
            info = Some(if info == Some(CONFLICT) { CONFLICT_UX } else { "ux fallback" });
            new = Some("unconfined".to_owned());
        }
    }
    if let (Some(n), Some(s)) = (&new, &stack_label) {
        new = Some(stack(n, s));
    }
    (new, info)
}

/// `profile_transition`: the exec of `name` by `subject` (a profile in
/// namespace `ns`). `owner`: the task's fsuid owns the executable.
pub fn exec(policy: &Policy, ns: &str, subject: Subject<'_>, name: &[u8], owner: bool) -> ExecDecision {
    let p = match subject {
        Subject::Profile(p) if p.mode != Mode::Unconfined => p,
        _ => {
            let a = find_attach(top_level(policy, ns), name);
            let label = a.profile.map_or_else(|| "unconfined".to_owned(), |q| q.name.clone());
            return ExecDecision {
                allowed: true,
                mode: "-".to_owned(),
                label: Some(label),
                info: a.info,
                scrub: false,
                record: None,
            };
        }
    };
    let mut perms = match &p.file {
        Some(f) => f.lookup(f.dfa.match_str(f.start[CLASS_FILE], name), owner),
        None => Perms::default(),
    };
    let trans = p.file.as_ref().map_or(&[][..], |f| &f.trans[..]);
    let mut mode = "-".to_owned();
    let mut error = false;
    let mut info = None;
    let mut new = None;
    let mut scrub = false;
    let mut skip_secure = false;
    if perms.allow & MAY_EXEC != 0 {
        mode = mode_name(perms.xindex, trans);
        let (n, i) = x_to_label(policy, ns, p, name, perms.xindex);
        info = i;
        match n {
            Some(l) if l == p.name && info.is_some() => {
                new = Some(l);
                skip_secure = true;
            }
            Some(l) => new = Some(l),
            None => {
                error = true;
                info = Some("profile transition not found");
                perms.allow &= !MAY_EXEC;
            }
        }
    } else if p.mode == Mode::Complain {
        new = Some(format!("{}//null-{}", p.name, String::from_utf8_lossy(name)));
        error = true;
        perms.xindex |= AA_X_UNSAFE;
    } else {
        error = true;
    }
    if new.is_some() && !skip_secure && perms.xindex & AA_X_UNSAFE == 0 {
        scrub = true;
    }
    let (_, record) = audit_file(p, &perms, MAY_EXEC, error, info);
    ExecDecision { allowed: new.is_some(), mode, label: new, info, scrub, record }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualifier_names() {
        assert_eq!(mode_name(AA_X_INHERIT, &[]), "ix");
        assert_eq!(mode_name(AA_X_UNCONFINED | AA_X_UNSAFE, &[]), "ux");
        assert_eq!(mode_name(AA_X_UNCONFINED, &[]), "Ux");
        assert_eq!(mode_name(AA_X_NAME, &[]), "Px");
        assert_eq!(mode_name(AA_X_NAME | AA_X_UNSAFE | AA_X_INHERIT, &[]), "pix");
        assert_eq!(mode_name(AA_X_NAME | AA_X_UNCONFINED, &[]), "PUx");
        assert_eq!(mode_name(AA_X_NAME | AA_X_CHILD | AA_X_UNSAFE, &[]), "cx");
        assert_eq!(mode_name(AA_X_TABLE | AA_X_UNSAFE, &["t".to_owned()]), "px->t");
    }

    #[test]
    fn stacks_sort_and_dedup() {
        assert_eq!(stack("b", "a"), "a//&b");
        assert_eq!(stack("a//&b", "a"), "a//&b");
    }
}
