//! Resolving a query's names (contexts, class, permissions) against the
//! policy, including what `handle_unknown` says about names the policy
//! does not define.

use rampart_policy::{AccessVector, ClassId, Context, HandleUnknown, Policy};

use crate::cli::QueryArgs;
use crate::error::CliError;

/// A query whose contexts are valid; the class may be undefined.
pub struct ResolvedQuery {
    pub s: Context,
    pub t: Context,
    /// `None` when the policy does not define the class.
    pub class: Option<ClassId>,
    pub class_name: String,
}

/// Permissions asked about, split into those the class defines and those
/// it does not.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct AskedPerms {
    /// Union of the defined permissions' bits.
    pub defined: AccessVector,
    /// Names the class does not define (all of them for an undefined
    /// class), in the order given, without repeats.
    pub undefined: Vec<String>,
}

/// Parses both contexts and looks up the class. An undefined class is an
/// error only when the policy rejects unknown classes.
pub fn resolve(policy: &Policy, q: &QueryArgs) -> Result<ResolvedQuery, CliError> {
    let s = context(policy, "source", &q.scontext)?;
    let t = context(policy, "target", &q.tcontext)?;
    let class = policy.class_by_name(&q.class);
    if class.is_none() && policy.handle_unknown == HandleUnknown::Reject {
        return Err(undefined_class(policy, &q.class));
    }
    Ok(ResolvedQuery { s, t, class, class_name: q.class.clone() })
}

pub fn context(policy: &Policy, which: &str, text: &str) -> Result<Context, CliError> {
    policy.parse_context(text).map_err(|e| CliError::input(format!("invalid {which} context `{text}`: {}", e.reason())))
}

/// The error for an undefined class, with a suggestion.
pub fn undefined_class(policy: &Policy, name: &str) -> CliError {
    let hint = crate::suggest::did_you_mean(name, policy.classes.iter().map(|c| c.name.as_str()));
    CliError::input(format!("class `{name}` is not defined in the policy{hint}; list the classes with `seinfo -c`"))
}

/// Looks up permission names. With `handle_unknown` reject an undefined
/// one is an error; otherwise it is returned in `undefined` and a warning
/// says what the kernel would do with it.
pub fn perms(policy: &Policy, q: &ResolvedQuery, names: &[String]) -> Result<AskedPerms, CliError> {
    let mut out = AskedPerms::default();
    for name in names {
        let bit = q.class.and_then(|c| policy.perm_bit(c, name));
        match bit {
            Some(b) => out.defined |= b,
            None if !out.undefined.contains(name) => out.undefined.push(name.clone()),
            None => {}
        }
    }
    if let (Some(c), Some(first)) = (q.class, out.undefined.first()) {
        let hint = crate::suggest::did_you_mean(first, policy.perm_names(c).into_iter().flatten());
        let what = format!("permission `{first}` is not defined for class `{}`{hint}", q.class_name);
        match policy.handle_unknown {
            HandleUnknown::Reject => {
                return Err(CliError::input(format!(
                    "{what}; the policy rejects unknown permissions (handle_unknown reject)"
                )))
            }
            HandleUnknown::Allow => crate::error::warn(&format!(
                "{what}; the policy allows unknown permissions (handle_unknown allow), so it is granted"
            )),
            HandleUnknown::Deny => {
                crate::error::warn(&format!("{what}; the policy denies unknown permissions (handle_unknown deny)"))
            }
        }
    }
    if q.class.is_none() {
        let verdict = match policy.handle_unknown {
            HandleUnknown::Allow => "allows unknown classes (handle_unknown allow): every permission is granted",
            _ => "denies unknown classes (handle_unknown deny): every permission is denied",
        };
        let hint = crate::suggest::did_you_mean(&q.class_name, policy.classes.iter().map(|c| c.name.as_str()));
        crate::error::warn(&format!("class `{}` is not defined in the policy{hint}, which {verdict}", q.class_name));
    }
    Ok(out)
}

/// Whether the policy grants what it does not define.
pub fn unknown_granted(policy: &Policy) -> bool {
    policy.handle_unknown == HandleUnknown::Allow
}

/// Bits of every permission class `c` defines (its own and its common's).
pub fn class_mask(policy: &Policy, c: ClassId) -> AccessVector {
    policy.perm_names(c).iter().enumerate().filter(|(_, n)| n.is_some()).fold(0, |m, (i, _)| m | (1u32 << i))
}
