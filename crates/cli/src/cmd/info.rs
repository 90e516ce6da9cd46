//! `rampart policy info`: policy statistics in `seinfo`'s format and with
//! its counting rules (setools 4 `SELinuxPolicy.*_count`):
//!
//! * rule counts are avtab entries of each kind, unconditional plus
//!   conditional (the kernel policy keeps no neverallow rules);
//!   Type_trans adds the name-based transitions, one per source type;
//! * Permissions: the permissions of every common plus every class's own
//!   (a name used by several classes counts once per class);
//! * Types excludes attributes; aliases are not counted as types, nor
//!   are they as sensitivities or categories (checkpolicy reserves a value
//!   for each alias, which the reader keeps as an unnamed slot);
//! * MLS Constrain: constraints with a leaf comparing levels
//!   (attribute `>= CEXPR_L1L2`), Constraints: the others;
//! * Genfscon: one per (filesystem, path, class) entry; Nodecon: IPv4 and
//!   IPv6.
//!
//! Counts seinfo does not print follow in the same layout.

use std::path::Path;

use rampart_policy::{avtab_kind, Constraint, Policy};

use crate::render::constraint::is_mls;

/// `(label, value)` pairs in seinfo's order, two per line.
pub fn seinfo_counts(p: &Policy) -> Vec<(&'static str, usize)> {
    let kind = |k: u16| p.avtab.iter().filter(|r| r.kind == k).count();
    let all_constraints = || p.classes.iter().flat_map(|c| c.constraints.iter());
    let all_validatetrans = || p.classes.iter().flat_map(|c| c.validatetrans.iter());
    let (mls, plain) = split_mls(all_constraints());
    let (mls_vt, plain_vt) = split_mls(all_validatetrans());
    let types = p.types.iter().filter(|t| !t.attribute && !t.name.is_empty());
    let defaults = p
        .classes
        .iter()
        .map(|c| [c.default_user, c.default_role, c.default_type, c.default_range].iter().filter(|&&d| d != 0).count())
        .sum();
    let oc = &p.ocontexts;
    vec![
        ("Classes", p.classes.len()),
        (
            "Permissions",
            p.commons.iter().map(|c| c.perms.len()).sum::<usize>()
                + p.classes.iter().map(|c| c.perms.len()).sum::<usize>(),
        ),
        ("Sensitivities", p.sens.iter().filter(|s| !s.name.is_empty()).count()),
        ("Categories", p.cats.iter().filter(|c| !c.name.is_empty()).count()),
        ("Types", types.clone().count()),
        ("Attributes", p.types.iter().filter(|t| t.attribute).count()),
        ("Users", p.users.len()),
        ("Roles", p.roles.len()),
        ("Booleans", p.bools.len()),
        ("Cond. Expr.", p.conds.len()),
        ("Allow", kind(avtab_kind::ALLOWED)),
        ("Neverallow", 0),
        ("Auditallow", kind(avtab_kind::AUDITALLOW)),
        ("Dontaudit", kind(avtab_kind::AUDITDENY)),
        ("Type_trans", kind(avtab_kind::TRANSITION) + filename_trans(p)),
        ("Type_change", kind(avtab_kind::CHANGE)),
        ("Type_member", kind(avtab_kind::MEMBER)),
        ("Range_trans", p.range_trans.len()),
        ("Role allow", p.role_allow.len()),
        ("Role_trans", p.role_trans.len()),
        ("Constraints", plain),
        ("Validatetrans", plain_vt),
        ("MLS Constrain", mls),
        ("MLS Val. Tran", mls_vt),
        ("Permissives", p.permissive.len()),
        ("Polcap", p.policycaps.len()),
        ("Defaults", defaults),
        ("Typebounds", types.filter(|t| t.bounds != 0).count()),
        ("Allowxperm", kind(avtab_kind::XPERMS_ALLOWED)),
        ("Neverallowxperm", 0),
        ("Auditallowxperm", kind(avtab_kind::XPERMS_AUDITALLOW)),
        ("Dontauditxperm", kind(avtab_kind::XPERMS_DONTAUDIT)),
        ("Ibendportcon", oc.ibendports.len()),
        ("Ibpkeycon", oc.ibpkeys.len()),
        ("Initial SIDs", oc.initial_sids.len()),
        ("Fs_use", oc.fs_use.len()),
        ("Genfscon", p.genfs.iter().map(|g| g.entries.len()).sum()),
        ("Portcon", oc.ports.len()),
        ("Netifcon", oc.netifs.len()),
        ("Nodecon", oc.nodes.len() + oc.nodes6.len()),
    ]
}

/// Counts seinfo's statistics leave out.
pub fn extra_counts(p: &Policy) -> Vec<(&'static str, usize)> {
    vec![
        ("Commons", p.commons.len()),
        ("Aliases", p.types.iter().filter(|t| !t.attribute).map(|t| t.aliases.len()).sum()),
        ("Filename_trans", filename_trans(p)),
        ("Sens. aliases", p.sens.iter().map(|s| s.aliases.len()).sum()),
        ("Cat. aliases", p.cats.iter().map(|c| c.aliases.len()).sum()),
    ]
}

/// Name-based type transitions, one per source type (setools counts them
/// among the type_transition rules).
fn filename_trans(p: &Policy) -> usize {
    p.filename_trans.iter().map(|f| f.sources.len()).sum()
}

/// (MLS, other) counts.
fn split_mls<'a>(cs: impl Iterator<Item = &'a Constraint>) -> (usize, usize) {
    cs.fold((0, 0), |(m, o), c| if is_mls(c) { (m + 1, o) } else { (m, o + 1) })
}

pub fn run(path: &Path, p: &Policy) -> String {
    let mut out = String::new();
    let mls = if p.mls { "enabled" } else { "disabled" };
    out.push_str(&format!("Statistics for policy file: {}\n", path.display()));
    out.push_str(&format!("Policy Version:             {} (MLS {mls})\n", p.version));
    out.push_str("Target Policy:              selinux\n");
    out.push_str(&format!("Handle unknown classes:     {}\n", p.handle_unknown.as_str()));
    push_rows(&mut out, &seinfo_counts(p));
    push_rows(&mut out, &extra_counts(p));
    out
}

/// seinfo's layout: `  Label:         {n:7}    Label:         {n:7}`.
fn push_rows(out: &mut String, pairs: &[(&str, usize)]) {
    for row in pairs.chunks(2) {
        let cells: Vec<String> = row.iter().map(|(l, n)| format!("{:<17}{n:7}", format!("{l}:"))).collect();
        out.push_str("  ");
        out.push_str(&cells.join("    "));
        out.push('\n');
    }
}
