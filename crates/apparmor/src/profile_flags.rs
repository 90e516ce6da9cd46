//! Putting a profile in complain or enforce mode as `aa-complain` and
//! `aa-enforce` do (python3-apparmor's `set_complain`/`set_enforce`):
//! the mode flags in the profile file's header lines are rewritten,
//! and the `disable/` (and, for enforce, `force-complain/`) links to the
//! file are removed.
//!
//! Why follow the tool rather than edit freely: the profile files are the
//! administrator's and the packages', and both expect the result the
//! ecosystem's tools give (dpkg's conffile prompts show the difference).
//! The header regular expressions, the flag sorting and the way a header
//! line is written again are python3-apparmor's (`regex.py`:
//! `RE_PROFILE_START`, `RE_PROFILE_HAT_DEF`; `aa.py`:
//! `change_profile_flags`, `write_header`; `profile_storage.py`:
//! `add_or_remove_flag`), and its tests compare files byte for byte with
//! python3-apparmor's own.

use std::path::Path;
use std::sync::OnceLock;

use regex::Regex;

/// The mode to set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModeChange {
    Complain,
    Enforce,
}

const RE_EOL: &str = r"\s*(?P<comment>#.*?)?\s*$";
const RE_FLAGS: &str = r"(\s+(flags\s*=\s*)?\((?P<flags>[^)]+)\))?";

fn path_or_var(group: &str) -> String {
    format!(r#"(?P<{group}>(/\S*|"/[^"]*"|@\{{\S+\}}\S*|"@\{{\S+\}}[^"]*"))"#)
}

/// `RE_PROFILE_START`.
fn profile_start() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(&format!(
            r#"^(?P<leadingspace>\s*)({}|(profile\s+(?P<namedprofile>(\S+|"[^"]+"))(\s+{})?))(\s+xattrs\s*=\s*\((?P<xattrs>([^)=]+(=[^)=]+)?\s?)+)\)\s*)?{RE_FLAGS}\s*\{{{RE_EOL}"#,
            path_or_var("plainprofile"),
            path_or_var("attachment"),
        ))
        .ok()
    })
    .as_ref()
}

/// `RE_PROFILE_HAT_DEF`.
fn hat_def() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(&format!(
            r#"^(?P<leadingspace>\s*)(?P<hat_keyword>\^|hat\s+)(?P<hat>"??[^)]+?"??){RE_FLAGS}\s*\{{{RE_EOL}"#
        ))
        .ok()
    })
    .as_ref()
}

fn strip_quotes(s: &str) -> &str {
    if s.len() > 1 && s.starts_with('"') && s.ends_with('"') {
        &s[1..s.len() - 1]
    } else {
        s
    }
}

fn quote_if_needed(s: &str) -> String {
    if s.contains(' ') {
        format!("\"{s}\"")
    } else {
        s.to_owned()
    }
}

/// `add_or_remove_flag`: the flags split on commas and whitespace,
/// de-duplicated, changed, sorted; joined with `, `.
fn change_flags(old: Option<&str>, change: &[&str], set: bool) -> String {
    let mut flags: Vec<String> =
        old.unwrap_or_default().replace(',', " ").split_whitespace().map(str::to_owned).collect();
    flags.sort();
    flags.dedup();
    for f in change {
        match flags.iter().position(|x| x == f) {
            Some(i) if !set => {
                flags.remove(i);
            }
            None if set => flags.push((*f).to_owned()),
            _ => {}
        }
    }
    flags.sort();
    flags.join(", ")
}

/// One pass of `change_profile_flags` over the text; `Err` when no
/// profile header (for `program`) was found.
fn change_profile_flags(text: &str, program: Option<&str>, change: &[&str], set: bool) -> Result<String, ()> {
    let mut out = String::with_capacity(text.len() + 32);
    let mut found = false;
    for line in text.split_inclusive('\n') {
        if let Some(m) = profile_start().and_then(|r| r.captures(line)) {
            let group = |g: &str| m.name(g).map(|x| x.as_str());
            let space = group("leadingspace").unwrap_or_default();
            let (profile, keyword) = match group("plainprofile") {
                Some(p) => (strip_quotes(p), false),
                None => (group("namedprofile").map(strip_quotes).unwrap_or_default(), true),
            };
            let attachment = group("attachment").map(strip_quotes);
            // a name (Rampart resolves programs to profile names first)
            if program.is_some_and(|p| p != profile) {
                out.push_str(line);
                continue;
            }
            found = true;
            let flags = change_flags(group("flags"), change, set);
            // write_header(…, depth = len(space)/2, embedded_hat = False)
            let mut header = " ".repeat(space.chars().count());
            let name = quote_if_needed(profile);
            if !profile.is_empty() && !profile.starts_with('/') || attachment.is_some_and(|a| !a.is_empty()) || keyword
            {
                header.push_str("profile ");
                header.push_str(&name);
                if let Some(a) = attachment.filter(|a| !a.is_empty()) {
                    header.push(' ');
                    header.push_str(&quote_if_needed(a));
                }
            } else {
                header.push_str(&name);
            }
            if let Some(x) = group("xattrs") {
                header.push_str(&format!(" xattrs=({x})"));
            }
            if !flags.is_empty() {
                header.push_str(&format!(" flags=({flags})"));
            }
            header.push_str(" {");
            if let Some(c) = group("comment").filter(|c| !c.is_empty()) {
                header.push(' ');
                header.push_str(c);
            }
            out.push_str(&header);
            out.push('\n');
        } else if let Some(m) = hat_def().and_then(|r| r.captures(line)) {
            let group = |g: &str| m.name(g).map_or("", |x| x.as_str());
            let flags = change_flags(m.name("flags").map(|x| x.as_str()), change, set);
            let comment = match group("comment") {
                "" => String::new(),
                c => format!(" {c}"),
            };
            let flags = if flags.is_empty() { String::new() } else { format!(" flags=({flags})") };
            out.push_str(&format!(
                "{}{}{}{flags} {{{comment}\n",
                group("leadingspace"),
                group("hat_keyword"),
                group("hat")
            ));
        } else {
            out.push_str(line);
        }
    }
    if found {
        Ok(out)
    } else {
        Err(())
    }
}

/// The new text of a profile file: `set_complain` removes the other mode
/// flags and adds `complain`, `set_enforce` removes them all (each a pass
/// of its own, as the tools make them). `program`: only the profile of
/// that name (hats follow in any case, as in the tools).
pub fn set_mode(text: &str, program: Option<&str>, mode: ModeChange) -> Result<String, String> {
    let result = match mode {
        ModeChange::Complain => {
            change_profile_flags(text, program, &["enforce", "kill", "unconfined", "prompt"], false)
                .and_then(|t| change_profile_flags(&t, program, &["complain"], true))
        }
        ModeChange::Enforce => {
            change_profile_flags(text, program, &["complain", "kill", "unconfined", "prompt"], false)
        }
    };
    result.map_err(|()| match program {
        None => "the file holds no profile header (syntax error?)".to_owned(),
        Some(p) => format!("the file holds no header of profile `{p}` (syntax error?)"),
    })
}

/// Sets the mode in `file` of profile directory `dir`: removes its
/// `disable/` link (and `force-complain/` for enforce), rewrites it
/// through a temporary file with the same permissions, renamed over it.
pub fn set_mode_in_file(dir: &Path, file: &Path, program: Option<&str>, mode: ModeChange) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let shown = file.display();
    let text = std::fs::read(file).map_err(|e| format!("{shown}: {e}"))?;
    let text = String::from_utf8(text).map_err(|_| format!("{shown}: not UTF-8 text"))?;
    let new = set_mode(&text, program, mode).map_err(|e| format!("{shown}: {e}"))?;
    let links: &[&str] = match mode {
        ModeChange::Complain => &["disable"],
        ModeChange::Enforce => &["force-complain", "disable"],
    };
    if let Some(name) = file.file_name() {
        for sub in links {
            let link = dir.join(sub).join(name);
            if link.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
                std::fs::remove_file(&link).map_err(|e| format!("{}: {e}", link.display()))?;
            }
        }
    }
    let mode_bits = std::fs::metadata(file).map_err(|e| format!("{shown}: {e}"))?.permissions().mode();
    let tmp = file.with_file_name(format!(
        ".{}.rampart-{}~",
        file.file_name().map(|n| n.to_string_lossy()).unwrap_or_default(),
        std::process::id()
    ));
    let written = std::fs::write(&tmp, new)
        .and_then(|()| std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(mode_bits)))
        .and_then(|()| std::fs::rename(&tmp, file));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("{shown}: {e}"));
    }
    Ok(())
}
