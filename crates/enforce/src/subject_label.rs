//! Who a process of the cgroup tree is: its SELinux domain and, when
//! `rampart run --apparmor` put it under one, its AppArmor profile. Both
//! modules run stacked, as Linux's LSM stacking runs them: each keeps its
//! own label on the task, and the cgroup carries the pair so children
//! inherit both and a restarted daemon finds both.
//!
//! The cgroup's directory name carries the pair reversibly:
//! `<context>` alone, or `<context>@aa.<hex>` where `<hex>` is the
//! profile name's bytes in lower-case hex. Profile names may hold `/`
//! (`/usr/bin/foo`, `parent//child`), which no directory name may;
//! contexts never hold `@` (refused here), so the split is unambiguous.
//! A label whose processes carry the launcher's filter that hands their
//! opens for writing to the daemon ([`Label::opens_supervised`]) ends in
//! `@so` (after the hex, which holds no `@`).

use std::sync::Arc;

use rampart_avc::Sid;

/// The prefix of the tree's exec-in-flight cgroups (crate::cgroups), which
/// no label's name may take.
pub const EXEC_PREFIX: &str = "exec.";
/// The separator between a context and its AppArmor profile.
const AA_SEPARATOR: &str = "@aa.";
/// The suffix of a label whose opens for writing are supervised.
const SUPERVISED_OPENS: &str = "@so";
/// The longest name a cgroup directory (any file name) may have.
const NAME_MAX: usize = 255;

/// A process's label in both modules.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Label {
    /// The SELinux domain.
    pub sid: Sid,
    /// The AppArmor profile, `None` for AppArmor's unconfined.
    pub apparmor: Option<Arc<str>>,
    /// Every process of the label opens files for writing only through
    /// the daemon (crate::supervised, "Opens"): the kernel sees its own
    /// opens for reading only, which lets ignore marks rest on reads
    /// alone for it (crate::marks, "Scope").
    pub opens_supervised: bool,
}

impl Label {
    /// Whether this is the default label (processes outside the tree).
    pub fn is_default(&self, default_sid: Sid) -> bool {
        self.sid == default_sid && self.apparmor.is_none() && !self.opens_supervised
    }
}

/// The cgroup directory name of `context` with `profile` (and the
/// supervised-opens suffix if `opens_supervised`), or why there is none: a context must not be empty, hold `/`, NUL, a newline or `@`,
/// start with `.`, or take the `exec.` and `cgroup.` prefixes of the
/// tree's other entries; the name must fit a directory entry.
pub fn dir_name(context: &str, profile: Option<&str>, opens_supervised: bool) -> Result<String, String> {
    let ok = !context.is_empty()
        && !context.contains(['/', '\0', '\n', '@'])
        && !context.starts_with('.')
        && !context.starts_with(EXEC_PREFIX)
        && !context.starts_with("cgroup.");
    if !ok {
        return Err(format!("the context {context:?} cannot name a cgroup"));
    }
    let mut name = match profile {
        None => context.to_owned(),
        Some("") => return Err("an empty AppArmor profile name".into()),
        Some(p) => format!("{context}{AA_SEPARATOR}{}", hex(p.as_bytes())),
    };
    if opens_supervised {
        name.push_str(SUPERVISED_OPENS);
    }
    if name.len() > NAME_MAX {
        return Err(format!(
            "the context {context:?} with the AppArmor profile {:?} is too long to name a cgroup \
             ({} bytes, at most {NAME_MAX}); use a shorter profile name",
            profile.unwrap_or(""),
            name.len()
        ));
    }
    Ok(name)
}

/// What a directory name of [`dir_name`] stands for (`None`: not such a
/// name).
#[derive(Debug, PartialEq, Eq)]
pub struct DirName<'a> {
    pub context: &'a str,
    pub profile: Option<String>,
    pub opens_supervised: bool,
}

/// The context, profile and supervision a directory name of [`dir_name`]
/// stands for (`None`: not such a name).
pub fn parse_dir_name(name: &str) -> Option<DirName<'_>> {
    let (name, opens_supervised) = match name.strip_suffix(SUPERVISED_OPENS) {
        Some(rest) => (rest, true),
        None => (name, false),
    };
    let (context, profile) = match name.split_once(AA_SEPARATOR) {
        None => (name, None),
        Some((c, h)) => (c, Some(String::from_utf8(unhex(h)?).ok()?)),
    };
    dir_name(context, profile.as_deref(), opens_supervised).ok()?;
    Some(DirName { context, profile, opens_supervised })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let ctx = "system_u:system_r:httpd_t:s0";
        assert_eq!(dir_name(ctx, None, false).unwrap(), ctx);
        for opens_supervised in [false, true] {
            for profile in ["/usr/bin/foo", "parent//child", "with space", "a@aa.b", "caf\u{e9}", "x@so"] {
                let name = dir_name(ctx, Some(profile), opens_supervised).unwrap();
                assert!(!name.contains('/'), "{name}");
                let parsed = DirName { context: ctx, profile: Some(profile.to_owned()), opens_supervised };
                assert_eq!(parse_dir_name(&name), Some(parsed), "{profile}");
            }
            let name = dir_name(ctx, None, opens_supervised).unwrap();
            assert_eq!(parse_dir_name(&name), Some(DirName { context: ctx, profile: None, opens_supervised }));
        }
        assert_eq!(dir_name(ctx, None, true).unwrap(), format!("{ctx}@so"));
    }

    #[test]
    fn names_that_cannot_be_a_directory_are_refused() {
        for bad in ["", "a/b", ".hidden", "exec.3", "cgroup.procs", "a\nb", "a@b"] {
            assert!(dir_name(bad, None, false).is_err(), "{bad:?}");
        }
        assert!(dir_name("u:r:t:s0", Some(""), false).is_err());
        assert!(dir_name("u:r:t:s0", Some(&"p".repeat(200)), false).is_err(), "too long");
        for bad in
            ["u:r:t:s0@aa.7", "u:r:t:s0@aa.zz", "u:r:t:s0@aa.", "u:r:t:s0@aa.ff", "exec.1", "u:r:t:s0@so@so", "@so"]
        {
            assert_eq!(parse_dir_name(bad), None, "{bad:?}");
        }
    }
}
