//! Policy versions 30 to 33 read the same.
//!
//! * Every tiny seed policy in `tests/data/` (compiled by checkpolicy from
//!   the `.conf` next to it, see `tests/data/README.md`) loads.
//! * The same tiny policy compiled for several versions loads to the same
//!   symbols, rules and decisions.
//! * With checkpolicy and the system policy (an `#[ignore]`d test), the
//!   system policy converted to versions 30, 31 and 32 (at test time, into
//!   a temporary directory: 2 MB each, never committed) agrees with the
//!   version 33 original on symbol and rule counts, filename transitions
//!   and `compute_av` for a few thousand (source, target, class) triples.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use rampart_policy::*;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// The compiled seed policies: files named `NAME.VERSION`, by name.
fn seed_files() -> BTreeMap<String, Vec<(u32, PathBuf)>> {
    let mut out: BTreeMap<String, Vec<(u32, PathBuf)>> = BTreeMap::new();
    for entry in std::fs::read_dir(data_dir()).unwrap() {
        let path = entry.unwrap().path();
        let (Some(stem), Some(ext)) = (path.file_stem(), path.extension()) else { continue };
        let Ok(version) = ext.to_str().unwrap().parse::<u32>() else { continue };
        out.entry(stem.to_str().unwrap().to_owned()).or_default().push((version, path));
    }
    for v in out.values_mut() {
        v.sort();
    }
    out
}

fn load(path: &Path) -> Policy {
    let bytes = std::fs::read(path).unwrap();
    Policy::from_bytes(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_seed_policy_loads() {
    let seeds = seed_files();
    let n: usize = seeds.values().map(Vec::len).sum();
    assert!(n >= 8, "expected the compiled seed policies in {}", data_dir().display());
    for (name, files) in &seeds {
        for (version, path) in files {
            let p = load(path);
            assert_eq!(p.version, *version, "{}", path.display());
            assert_eq!(p.mls, name.ends_with("_mls"), "{}", path.display());
            assert!(!p.avtab.is_empty() && !p.types.is_empty() && !p.users.is_empty(), "{}", path.display());
            assert!(!p.ocontexts.initial_sids.is_empty(), "{}", path.display());
        }
    }
}

/// The seeds use every feature they were written for (so the fuzzer
/// starts from inputs that reach every section of the reader).
#[test]
fn full_seed_has_every_section() {
    let p = load(&data_dir().join("full_mls.33"));
    assert!(p.mls && p.sens.len() >= 3 && p.cats.len() >= 4);
    assert!(p.names.sens.contains_key("secret") && p.names.cats.contains_key("blue"));
    assert!(p.types.iter().any(|t| t.attribute) && p.types.iter().any(|t| !t.aliases.is_empty()));
    assert!(p.types.iter().any(|t| t.bounds != 0));
    assert!(!p.permissive.is_empty() && !p.policycaps.is_empty());
    assert!(p.bools.len() == 2 && p.conds.len() == 2);
    assert!(p.avtab.iter().any(|r| r.kind & avtab_kind::XPERMS != 0));
    assert!(
        p.avtab.iter().any(|r| r.kind == avtab_kind::MEMBER) && p.avtab.iter().any(|r| r.kind == avtab_kind::CHANGE)
    );
    assert!(p.filename_trans.len() >= 3 && !p.role_trans.is_empty() && !p.role_allow.is_empty());
    assert!(p.range_trans.len() == 2);
    assert!(
        p.classes.iter().any(|c| !c.constraints.is_empty()) && p.classes.iter().any(|c| !c.validatetrans.is_empty())
    );
    let o = &p.ocontexts;
    assert!(
        !o.fs_use.is_empty()
            && !o.ports.is_empty()
            && !o.netifs.is_empty()
            && !o.nodes.is_empty()
            && !o.nodes6.is_empty()
    );
    assert!(p.genfs.len() == 2);
    let n = load(&data_dir().join("nonmls.33"));
    assert!(!n.mls && !n.ocontexts.ibpkeys.is_empty() && !n.ocontexts.ibendports.is_empty());
}

#[test]
fn seed_versions_agree() {
    for (name, files) in seed_files() {
        let Some((_, newest)) = files.last() else { continue };
        let reference = load(newest);
        let triples = all_triples(&reference);
        assert!(!triples.is_empty(), "{name}: no valid (source, target, class) triple");
        for (_, path) in &files[..files.len() - 1] {
            let older = load(path);
            assert_agree(&reference, &older, &triples, &path.display().to_string());
        }
    }
}

/// The system policy converted to older versions by checkpolicy.
#[test]
#[ignore = "needs the system policy and checkpolicy: converted to older versions"]
fn system_policy_converted_to_older_versions_agrees() {
    let path = default_policy_path().unwrap_or_else(|e| {
        panic!("missing prerequisite: the system policy ({e}); install it with scripts/install-deps.sh")
    });
    assert_eq!(
        path.file_name().and_then(|n| n.to_str()),
        Some("policy.33"),
        "the test converts a version 33 system policy (Debian 12's selinux-policy-default): {}",
        path.display()
    );
    if let Err(e) = Command::new("checkpolicy").arg("-V").output() {
        panic!("missing prerequisite: checkpolicy ({e}); install it with scripts/install-deps.sh");
    }
    let reference = load(&path);
    let triples = sampled_triples(&reference, 3000);
    assert!(triples.len() >= 2000, "only {} triples", triples.len());
    let dir = std::env::temp_dir().join(format!("rampart-versions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for version in [30, 31, 32] {
        let out = dir.join(format!("policy.{version}"));
        let status = Command::new("checkpolicy")
            .args(["-M", "-b"])
            .arg(&path)
            .args(["-c", &version.to_string(), "-o"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(status.status.success(), "checkpolicy -c {version}: {}", String::from_utf8_lossy(&status.stderr));
        let older = load(&out);
        assert_eq!(older.version, version);
        assert_agree(&reference, &older, &triples, &out.display().to_string());
        println!(
            "policy.{version}: agrees on {} avtab entries, {} filename transitions, {} compute_av triples",
            older.avtab.len(),
            filename_transitions(&older).len(),
            triples.len()
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// (scontext, tcontext, class) as strings, so they can be looked up in
/// another policy by name.
type Triple = (String, String, String);

fn assert_agree(a: &Policy, b: &Policy, triples: &[Triple], what: &str) {
    let counts = |p: &Policy| {
        let o = &p.ocontexts;
        [
            p.commons.len(),
            p.classes.len(),
            p.types.len(),
            p.roles.len(),
            p.users.len(),
            p.bools.len(),
            p.sens.len(),
            p.cats.len(),
            p.avtab.len(),
            p.conds.len(),
            p.role_trans.len(),
            p.role_allow.len(),
            p.range_trans.len(),
            p.genfs.len(),
            o.initial_sids.len(),
            o.fs.len(),
            o.ports.len(),
            o.netifs.len(),
            o.nodes.len(),
            o.fs_use.len(),
            o.nodes6.len(),
        ]
    };
    assert_eq!(counts(a), counts(b), "{what}: symbol or rule counts differ");
    if a.version >= 31 && b.version >= 31 {
        assert_eq!(a.ocontexts.ibpkeys.len(), b.ocontexts.ibpkeys.len(), "{what}");
        assert_eq!(a.ocontexts.ibendports.len(), b.ocontexts.ibendports.len(), "{what}");
    }
    assert_eq!(a.mls, b.mls, "{what}");
    assert_eq!(a.handle_unknown, b.handle_unknown, "{what}");
    let type_names = |p: &Policy| p.types.iter().map(|t| (t.name.clone(), t.attribute, t.bounds)).collect::<Vec<_>>();
    assert_eq!(type_names(a), type_names(b), "{what}: types differ");
    let class_names = |p: &Policy| p.classes.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
    assert_eq!(class_names(a), class_names(b), "{what}: classes differ");
    let fa = filename_transitions(a);
    assert_eq!(fa, filename_transitions(b), "{what}: filename transitions differ");
    assert!(a.filename_trans.is_empty() || !fa.is_empty());

    let bools_a = [Booleans::defaults(a), Booleans::all(a, true), Booleans::all(a, false)];
    let bools_b = [Booleans::defaults(b), Booleans::all(b, true), Booleans::all(b, false)];
    let mut allowed = 0;
    for (s, t, c) in triples {
        let ctx = |p: &Policy, text: &str| p.parse_context(text).unwrap_or_else(|e| panic!("{what}: {e}"));
        let (sa, ta, ca) = (ctx(a, s), ctx(a, t), a.class_by_name(c).unwrap());
        let (sb, tb, cb) = (ctx(b, s), ctx(b, t), b.class_by_name(c).unwrap());
        for (ba, bb) in bools_a.iter().zip(&bools_b) {
            let da = a.compute_av(ba, &sa, &ta, ca);
            assert_eq!(da, b.compute_av(bb, &sb, &tb, cb), "{what}: compute_av({s}, {t}, {c})");
            allowed += usize::from(da.allowed != 0);
        }
    }
    assert!(allowed > 0, "{what}: every decision empty");
}

/// Every filename transition as (source, target, class, name, new type)
/// names: version 33 groups the sources in a bitmap, older versions write
/// one rule per source.
fn filename_transitions(p: &Policy) -> BTreeSet<(String, String, String, String, String)> {
    let mut out = BTreeSet::new();
    for f in &p.filename_trans {
        for s in f.sources.iter() {
            let inserted = out.insert((
                p.types[s as usize].name.clone(),
                p.type_name(f.target).to_owned(),
                p.class_name(f.class).to_owned(),
                f.name.clone(),
                p.type_name(f.new_type).to_owned(),
            ));
            assert!(inserted, "filename transition listed twice");
        }
    }
    out
}

/// A valid context for type index `t`: with role object_r for a target,
/// else with a role that may have the type (system_r first), with the
/// first user that may have the role, at that user's low level.
fn context_for(p: &Policy, t: usize, object: bool) -> Option<String> {
    let ty = TypeId(t as u32 + 1);
    let mut roles: Vec<RoleId> = if object {
        vec![OBJECT_R]
    } else {
        (1..=p.roles.len() as u32)
            .map(RoleId)
            .filter(|r| *r != OBJECT_R && p.roles[r.index()].types.contains(ty.bit()))
            .collect()
    };
    roles.sort_by_key(|r| p.role_name(*r) != "system_r");
    let mut users: Vec<UserId> = (1..=p.users.len() as u32).map(UserId).collect();
    users.sort_by_key(|u| p.user_name(*u) != "system_u");
    for role in roles {
        for &user in &users {
            let u = &p.users[user.index()];
            if role != OBJECT_R && !u.roles.contains(role.bit()) {
                continue;
            }
            let low = u.range.low.clone();
            let c = Context { user, role, ty, range: Range { low: low.clone(), high: low } };
            if p.context_is_valid(&c) {
                return Some(p.context_to_string(&c));
            }
        }
    }
    None
}

/// Types (not attributes) a rule's source or target stands for: the type
/// itself, or the first and last members of an attribute.
fn members(p: &Policy, t: TypeId) -> Vec<usize> {
    let m: Vec<usize> = p.attr_types[t.index()].iter().map(|b| b as usize).filter(|&i| !p.types[i].attribute).collect();
    match (m.first(), m.last()) {
        (Some(&f), Some(&l)) if f != l => vec![f, l],
        (Some(&f), _) => vec![f],
        _ => Vec::new(),
    }
}

/// Up to `max` distinct triples from access rules spread evenly over the
/// avtab of `p`.
fn sampled_triples(p: &Policy, max: usize) -> Vec<Triple> {
    let rules: Vec<&AvRule> = p.avtab.iter().filter(|r| r.kind & avtab_kind::AV != 0).collect();
    let step = (rules.len() / max.max(1)).max(1);
    let mut cache: BTreeMap<(usize, bool), Option<String>> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for r in rules.iter().step_by(step) {
        for s in members(p, r.source) {
            for t in members(p, r.target) {
                let sc = cache.entry((s, false)).or_insert_with(|| context_for(p, s, false)).clone();
                let tc = cache.entry((t, true)).or_insert_with(|| context_for(p, t, true)).clone();
                if let (Some(sc), Some(tc)) = (sc, tc) {
                    out.insert((sc, tc, p.class_name(r.class).to_owned()));
                }
            }
        }
        if out.len() >= max {
            break;
        }
    }
    out.into_iter().collect()
}

/// Every (type, type, class) of a tiny policy, sources in a domain role,
/// targets in object_r, plus domains as targets in their own role.
fn all_triples(p: &Policy) -> Vec<Triple> {
    let types: Vec<usize> = (0..p.types.len()).filter(|&i| !p.types[i].attribute).collect();
    let mut out = Vec::new();
    for &s in &types {
        let Some(sc) = context_for(p, s, false) else { continue };
        for &t in &types {
            let targets = [context_for(p, t, true), context_for(p, t, false)];
            for tc in targets.into_iter().flatten() {
                for c in &p.classes {
                    out.push((sc.clone(), tc.clone(), c.name.clone()));
                }
            }
        }
    }
    out
}

/// `many_attrs.33`: type x_t has 70 attributes, each with a rule of class
/// file on both sides. The decision must be the OR of every matching rule
/// (the policy has no constraints, bounds or conditionals), as libsepol
/// computes it.
/// (An earlier `compute_av` kept at most 64 rule runs per side on the
/// stack and, when both sides had more, walked a truncated list.)
#[test]
fn decision_with_more_than_64_attributes() {
    let p = load(&data_dir().join("many_attrs.33"));
    let file = p.class_by_name("file").unwrap();
    let s = p.parse_context("system_u:system_r:x_t").unwrap();
    let t = p.parse_context("system_u:object_r:y_t").unwrap();
    let expected = p
        .avtab
        .iter()
        .filter(|r| r.kind == avtab_kind::ALLOWED && r.class == file)
        .filter(|r| {
            p.type_attrs[s.ty.index()].contains(r.source.bit()) && p.type_attrs[t.ty.index()].contains(r.target.bit())
        })
        .fold(0, |av, r| av | r.data);
    assert_eq!(p.av_to_names(file, expected), ["read", "write"]);
    let d = p.compute_av(&Booleans::defaults(&p), &s, &t, file);
    assert_eq!(p.av_to_names(file, d.allowed), ["read", "write"]);
}
