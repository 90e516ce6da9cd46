//! `rampart check SCONTEXT TCONTEXT CLASS [PERM...]`: one decision, by
//! permission name.

use rampart_policy::{AvDecision, Policy};

use crate::cli::CheckArgs;
use crate::error::CliError;
use crate::query::{self, class_mask, AskedPerms, ResolvedQuery};
use crate::render::perms::{braced, names};

/// What `check` prints and its exit status (0 granted, 1 denied).
pub fn run(policy: &Policy, args: &CheckArgs) -> Result<(String, u8), CliError> {
    let bools = crate::load::booleans(policy, &args.bools)?;
    // Without --batch, clap requires the three names.
    let query = args.query().ok_or_else(|| CliError::usage("missing SCONTEXT TCONTEXT CLASS"))?;
    let q = query::resolve(policy, &query)?;
    let asked = query::perms(policy, &q, &args.perms)?;
    let d = match q.class {
        Some(c) => policy.compute_av(&bools, &q.s, &q.t, c),
        None => unknown_class_decision(policy),
    };
    Ok(report(policy, &q, &d, &asked, !args.perms.is_empty()))
}

/// What the kernel decides for a class the policy does not define.
fn unknown_class_decision(policy: &Policy) -> AvDecision {
    let allowed = if query::unknown_granted(policy) { u32::MAX } else { 0 };
    AvDecision { allowed, auditallow: 0, auditdeny: u32::MAX, permissive: false }
}

fn report(policy: &Policy, q: &ResolvedQuery, d: &AvDecision, asked: &AskedPerms, any_asked: bool) -> (String, u8) {
    let (allowed, auditallow, dontaudit) = match q.class {
        Some(c) => {
            let mask = class_mask(policy, c);
            (
                names(policy, c, d.allowed & mask),
                names(policy, c, d.auditallow & mask),
                names(policy, c, !d.auditdeny & mask),
            )
        }
        None => (Vec::new(), Vec::new(), Vec::new()),
    };
    let mut out = format!(
        "allowed: {}\nauditallow: {}\ndontaudit: {}\n",
        braced(&allowed),
        braced(&auditallow),
        braced(&dontaudit)
    );
    if policy.is_permissive(q.s.ty) {
        out.push_str("permissive: yes\n");
    }
    if !asked.undefined.is_empty() {
        out.push_str(&format!("undefined: {}\n", braced(&asked.undefined)));
    }
    let mut denied = match q.class {
        Some(c) => names(policy, c, asked.defined & !d.allowed),
        None => Vec::new(),
    };
    if !query::unknown_granted(policy) {
        denied.extend(asked.undefined.iter().cloned());
    }
    if !denied.is_empty() {
        out.push_str(&format!("denied: {}\n", braced(&denied)));
    }
    let code = u8::from(any_asked && !denied.is_empty());
    (out, code)
}
