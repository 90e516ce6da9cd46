//! The line protocol of `rampart apparmor check --batch` and
//! `attach --batch`, kept here so it is tested with the engine.
//!
//! check input: `PROFILE<TAB>PATH<TAB>MASK[<TAB>owner=1|owner=0][<TAB>link=TARGET]`;
//! output: `DECISION<TAB>ALLOWED<TAB>audit=A,quiet=Q,log=L<TAB>EXEC`.
//! With `link=TARGET` the line is the hard-link pair check (the kernel
//! requests `l` there); MASK must still be letters of `rwaxmlk` but is
//! otherwise not used, and EXEC is `-`.
//! attach input: an executable path; output: `PROFILE|unconfined<TAB>INFO`.

use crate::domain::{exec, find_attach};
use crate::file::{link_perm, path_perm, render_record};
use crate::perms::{letters, parse_letters, MAY_EXEC};
use crate::policy::{Policy, ROOT_NS};

/// Answers one `check` line; a malformed line gets `error<TAB>REASON`.
pub fn check_line(policy: &Policy, line: &str) -> String {
    match check(policy, line) {
        Ok(s) => s,
        Err(e) => format!("error\t{e}"),
    }
}

fn check(policy: &Policy, line: &str) -> Result<String, String> {
    let mut fields = line.split('\t');
    let (Some(profile), Some(path), Some(mask)) = (fields.next(), fields.next(), fields.next()) else {
        return Err("expected PROFILE<TAB>PATH<TAB>MASK".to_owned());
    };
    let request = parse_letters(mask)
        .filter(|_| !mask.is_empty())
        .ok_or_else(|| format!("mask `{mask}` is not letters of rwaxmlk"))?;
    let mut owner = true;
    let mut link = None;
    for f in fields {
        match f {
            "owner=1" => owner = true,
            "owner=0" => owner = false,
            _ => match f.strip_prefix("link=") {
                Some(t) if !t.is_empty() => link = Some(t),
                _ => return Err(format!("unknown field `{f}`")),
            },
        }
    }
    if !path.starts_with('/') {
        return Err(format!("path `{path}` is not absolute"));
    }
    let subject = policy.resolve(profile).ok_or_else(|| format!("no profile `{profile}`"))?;
    let ns = match profile.strip_prefix(':').and_then(|r| r.split_once(':')) {
        Some((ns, _)) => ns,
        None => ROOT_NS,
    };
    let (allowed, granted, audit, quiet, mut log) = match link {
        Some(t) => {
            let d = link_perm(subject, path.as_bytes(), t.as_bytes(), owner);
            (d.allowed, d.perms.allow, d.perms.audit, d.perms.quiet, render_record(d.record.as_ref()))
        }
        None => {
            let rest = request & !MAY_EXEC;
            let d = path_perm(subject, path.as_bytes(), rest, owner);
            let log = if rest == 0 { "NONE".to_owned() } else { render_record(d.record.as_ref()) };
            (d.allowed || rest == 0, d.perms.allow, d.perms.audit, d.perms.quiet, log)
        }
    };
    let mut ok = allowed;
    let mut exec_field = "-".to_owned();
    if request & MAY_EXEC != 0 && link.is_none() {
        let e = exec(policy, ns, subject, path.as_bytes(), owner);
        ok &= e.allowed;
        log.push_str("|x:");
        log.push_str(&render_record(e.record.as_ref()));
        exec_field = format!(
            "{};target={};info={};scrub={}",
            e.mode,
            e.label.as_deref().unwrap_or("-"),
            e.info.unwrap_or("-"),
            u8::from(e.scrub)
        );
    }
    Ok(format!(
        "{}\t{}\taudit={},quiet={},log={}\t{}",
        if ok { "allow" } else { "deny" },
        letters(granted),
        letters(audit),
        letters(quiet),
        log,
        exec_field
    ))
}

/// Answers one `attach` line: the profile an unconfined task's exec of
/// the path attaches to.
pub fn attach_line(policy: &Policy, line: &str) -> String {
    let Some(ns) = policy.namespaces().iter().find(|n| n.name == ROOT_NS) else {
        return "unconfined\t-".to_owned();
    };
    let a = find_attach(ns.profiles.iter().filter(|p| p.parent().is_none()), line.as_bytes());
    format!("{}\t{}", a.profile.map_or("unconfined", |p| p.name.as_str()), a.info.unwrap_or("-"))
}

/// `info`: one line per profile: namespace, name, mode, attachment,
/// flags and sizes.
pub fn info(policy: &Policy) -> String {
    let mut out = String::new();
    let mut n = 0;
    for (ns, p) in policy.profiles() {
        n += 1;
        let kind = if p.hat {
            "hat"
        } else if p.parent().is_some() {
            "child"
        } else {
            "profile"
        };
        let attach = match (&p.attach, &p.xmatch) {
            (Some(a), _) => a.clone(),
            (None, Some(x)) => format!(
                "xmatch(states={},literal={}{})",
                x.dfa.states(),
                p.xmatch_len,
                if x.dfa.diff_encoded() { ",diff" } else { "" }
            ),
            // no xmatch: attaches to exactly its (base) name
            (None, None) if p.parent().is_none() && p.name.starts_with('/') => p.name.clone(),
            (None, None) => "-".to_owned(),
        };
        // rules: the file DFA's accepting states (one per distinct
        // merged permission set; the compiler keeps no rule list)
        let accepting = p.file.as_ref().map_or(0, |f| {
            (1..f.dfa.states() as u32).filter(|&s| f.lookup(s, true).allow & !crate::perms::AA_MAY_GETATTR != 0).count()
        });
        out.push_str(&format!(
            "{ns}\t{}\t{}\t{kind}\tattach={attach}\tabi=v{}\tfile_states={}\taccepting={accepting}\txtable={}{}{}{}\n",
            p.name,
            p.mode.as_str(),
            p.abi,
            p.file_states(),
            p.file.as_ref().map_or(0, |f| f.trans.len()),
            if p.file.as_ref().is_some_and(|f| f.dfa.diff_encoded()) { "\tdiff_encoded" } else { "" },
            if p.audit_all { "\taudit" } else { "" },
            if p.file_in_policydb { "\tfile_in_policydb" } else { "" },
        ));
    }
    format!("{n} profiles loaded\n{out}")
}
