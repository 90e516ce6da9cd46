//! `rampart explain SCONTEXT TCONTEXT CLASS PERM`: the decision for one
//! permission and the rules and checks behind it.

use rampart_policy::{AvRule, Booleans, ClassId, Context, Policy, RuleCond};

use crate::cli::ExplainArgs;
use crate::error::CliError;
use crate::query::{self, ResolvedQuery};
use crate::render::{cond, constraint, rule};
use crate::why::{analyze, Analysis};

/// What `explain` prints and its exit status (0 granted, 1 denied).
pub fn run(policy: &Policy, args: &ExplainArgs) -> Result<(String, u8), CliError> {
    let bools = crate::load::booleans(policy, &args.bools)?;
    let q = query::resolve(policy, &args.query)?;
    let asked = query::perms(policy, &q, std::slice::from_ref(&args.perm))?;
    let mut out = header(policy, &q, &args.perm);
    let granted = match q.class {
        Some(class) if asked.undefined.is_empty() => {
            let a = analyze(policy, &bools, &q.s, &q.t, class, asked.defined);
            explain(&mut out, policy, &bools, &q, class, &args.perm, &a);
            a.granted
        }
        _ => {
            let granted = query::unknown_granted(policy);
            let what = match q.class {
                Some(_) => format!("permission `{}` is not defined for class `{}`", args.perm, q.class_name),
                None => format!("class `{}` is not defined", q.class_name),
            };
            let verdict = if granted { "grants" } else { "denies" };
            out.insert_str(0, if granted { "result: granted\n" } else { "result: denied\n" });
            out.push_str(&format!(
                "\nreason: {what} in the policy, and its handle_unknown `{}` {verdict} what it does not define\n",
                policy.handle_unknown.as_str()
            ));
            granted
        }
    };
    Ok((out, u8::from(!granted)))
}

fn header(policy: &Policy, q: &ResolvedQuery, perm: &str) -> String {
    format!(
        "source: {}\ntarget: {}\nclass: {}\npermission: {perm}\n",
        policy.context_to_string(&q.s),
        policy.context_to_string(&q.t),
        q.class_name
    )
}

fn explain(
    out: &mut String,
    policy: &Policy,
    bools: &Booleans,
    q: &ResolvedQuery,
    class: ClassId,
    perm: &str,
    a: &Analysis,
) {
    out.insert_str(0, if a.granted { "result: granted\n" } else { "result: denied\n" });
    out.push('\n');
    let (sname, tname) = (policy.type_name(q.s.ty), policy.type_name(q.t.ty));
    if a.te_granted() {
        if !a.granted {
            denial_steps(out, policy, &q.s, &q.t, class, perm, a);
        }
        let title =
            if a.granted { "allow rules that grant it:" } else { "allow rules that grant it before the checks above:" };
        rules(out, policy, bools, title, &a.allow_active);
        if !a.auditallow.is_empty() {
            rules(out, policy, bools, "auditallow rules that log it when granted:", &a.auditallow);
        }
    } else {
        out.push_str(&format!(
            "reason: no allow rule grants `{perm}` from `{sname}` to `{tname}` for class `{}`\n",
            q.class_name
        ));
        if a.allow_inactive.is_empty() {
            out.push_str("no conditional allow rule grants it with other boolean values either\n");
        } else {
            rules(
                out,
                policy,
                bools,
                "conditional allow rules that would grant it with other boolean values:",
                &a.allow_inactive,
            );
        }
    }
    if !a.granted {
        if a.dontaudit.is_empty() {
            out.push_str("the denial is logged (no dontaudit rule applies)\n");
        } else {
            rules(out, policy, bools, "the denial is not logged; dontaudit rules that silence it:", &a.dontaudit);
        }
        if a.decision.permissive {
            out.push_str(&format!(
                "note: type `{sname}` is permissive: the kernel logs this denial but does not enforce it\n"
            ));
        }
    }
    if !a.consistent() {
        out.push_str("note: these rules do not account for the decision; please report this as a rampart bug\n");
    }
}

/// The checks after the TE rules that removed the permission.
fn denial_steps(out: &mut String, policy: &Policy, s: &Context, t: &Context, class: ClassId, perm: &str, a: &Analysis) {
    for c in &a.failed_constraints {
        out.push_str(&format!(
            "reason: a constraint removes `{perm}`:\n  {}\n",
            constraint::statement(policy, class, c)
        ));
        out.push_str("  its comparisons for these contexts:\n");
        for (leaf, text) in constraint::leaves(policy, &c.expr) {
            let holds = policy.constraint_holds(std::slice::from_ref(leaf), s, t);
            let values = constraint::leaf_values(policy, leaf, s, t);
            out.push_str(&format!("    {:<5}  {text}  ({values})\n", if holds { "true" } else { "false" }));
        }
    }
    if a.role_change_denied {
        let (r1, r2) = (policy.role_name(s.role), policy.role_name(t.role));
        out.push_str(&format!(
            "reason: the transition changes role from `{r1}` to `{r2}`, and no `allow {r1} {r2};` rule permits it\n"
        ));
    }
    if let Some((bound, target_bound)) = a.bounded_by {
        let target = target_bound.unwrap_or(t.ty);
        out.push_str(&format!(
            "reason: type `{}` is bounded by `{}` (typebounds), and `{}` is not granted `{perm}` on `{}`\n",
            policy.type_name(s.ty),
            policy.type_name(bound),
            policy.type_name(bound),
            policy.type_name(target)
        ));
    }
}

fn rules(out: &mut String, policy: &Policy, bools: &Booleans, title: &str, list: &[&AvRule]) {
    out.push_str(title);
    out.push('\n');
    for r in list {
        out.push_str(&format!(
            "  {}{}{}\n",
            rule::av_rule(policy, r),
            rule::cond_suffix(policy, r),
            branch_state(policy, bools, r)
        ));
    }
}

/// ` (active: a=on b=off)` for a conditional rule, empty otherwise.
fn branch_state(policy: &Policy, bools: &Booleans, r: &AvRule) -> String {
    let RuleCond::If { cond: i, .. } = r.cond else { return String::new() };
    let state = if crate::rules::is_active(bools, r.cond) { "active" } else { "inactive" };
    let Some(node) = policy.conds.get(i as usize) else { return format!(" ({state})") };
    let values: Vec<String> = cond::bools_used(policy, &node.expr)
        .into_iter()
        .map(|b| format!("{}={}", cond::bool_name(policy, b), if bools.get(b) == Some(true) { "on" } else { "off" }))
        .collect();
    format!(" ({state}: {})", values.join(" "))
}
