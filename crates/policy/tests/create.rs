//! `Policy::compute_create` against libsepol 3.4 (`sepol_transition_sid`,
//! `sepol_member_sid`, `sepol_change_sid`) through the `sepol-oracle`
//! binary, plus checks of the parts libsepol cannot answer: name-based
//! type transitions (libsepol 3.4 takes no name) and class
//! `default_user/role/type/range` (the system policy sets none, so they are
//! exercised on a copy of the policy with the defaults changed).
//!
//! The oracle is `rampart_oracle::Oracle` (libsepol linked statically).
//! The tests need the system policy: `#[ignore]`d, and run without it
//! they fail saying what to install.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use rampart_policy::*;

// ---------------------------------------------------------------- helpers

/// xorshift64* (same generator as the oracle's `bools-random`).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(if seed == 0 { 0x9E37_79B9_7F4A_7C15 } else { seed })
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

/// The system policy; fails the test if it is not installed.
fn load() -> (Policy, PathBuf) {
    let path = default_policy_path().unwrap_or_else(|e| {
        panic!("missing prerequisite: the system policy ({e}); install it with scripts/install-deps.sh")
    });
    (Policy::from_file(&path).unwrap(), path)
}

/// Runs `commands` (one response line each) through a fresh libsepol
/// oracle on the policy at `policy`.
fn run_oracle(policy: &Path, commands: Vec<String>) -> Vec<String> {
    let mut oracle = rampart_oracle::Oracle::spawn(policy)
        .unwrap_or_else(|e| panic!("cannot start sepol-oracle on {}: {e}", policy.display()));
    let out = oracle.command_batch(&commands).unwrap();
    assert_eq!(out.len(), commands.len(), "oracle answered {} lines for {} commands", out.len(), commands.len());
    out
}

/// libsepol 3.4's `mls_sid_to_context` for one level, quirk included: it
/// walks the bits of each ebitmap node (64-bit words with a set bit) and
/// jumps from the last bit of a node to the first of the next one, so a
/// run of categories ending on the last bit of a node is closed at the
/// first clear bit of the *next* node and printed as ending just before
/// it (`c638,c639,c729` prints as `c638,c703,c729`). The kernel and
/// `Policy::context_to_string` print the real categories.
fn sepol_level_string(p: &Policy, l: &Level) -> String {
    let mut out = p.sens[l.sens as usize - 1].name.clone();
    let name = |i: u32| p.cats[i as usize].name.as_str();
    let bits: Vec<u32> = l.cats.iter().collect();
    let mut nodes: Vec<(u32, u64)> = Vec::new();
    for b in bits {
        let start = b & !63;
        match nodes.last_mut() {
            Some((s, w)) if *s == start => *w |= 1 << (b - start),
            _ => nodes.push((start, 1 << (b - start))),
        }
    }
    let (mut range, mut wrote_sep, mut i) = (0u32, false, 0u32);
    for &(start, word) in &nodes {
        for b in 0..64 {
            i = start + b;
            if word >> b & 1 == 1 {
                if range > 0 {
                    range += 1;
                    continue;
                }
                out.push(if wrote_sep { ',' } else { ':' });
                wrote_sep = true;
                out.push_str(name(i));
                range += 1;
            } else {
                if range > 1 {
                    out.push(if range > 2 { '.' } else { ',' });
                    out.push_str(name(i - 1));
                }
                range = 0;
            }
        }
        i += 1;
    }
    if range > 1 {
        out.push(if range > 2 { '.' } else { ',' });
        out.push_str(name(i - 1));
    }
    out
}

/// libsepol 3.4's `context_to_string`.
fn sepol_context_string(p: &Policy, c: &Context) -> String {
    let mut s = format!("{}:{}:{}", p.user_name(c.user), p.role_name(c.role), p.type_name(c.ty));
    if p.mls {
        s.push(':');
        s.push_str(&sepol_level_string(p, &c.range.low));
        if c.range.low != c.range.high {
            s.push('-');
            s.push_str(&sepol_level_string(p, &c.range.high));
        }
    }
    s
}

#[test]
#[ignore = "needs the system policy: checked against libsepol"]
fn sepol_printing_quirk_emulation() {
    let (p, path) = load();
    let samples = [
        ("s0:c638,c639,c729", "s0:c638,c703,c729"),
        ("s0:c0.c63,c200", "s0:c0.c191,c200"),
        ("s0:c62,c63,c128,c129", "s0:c62.c129"),
        ("s0:c62.c65", "s0:c62.c65"),
        ("s0:c62,c63,c192", "s0:c62.c192"),
        ("s0:c0.c1023", "s0:c0.c1023"),
        ("s0:c1,c2,c5", "s0:c1,c2,c5"),
        ("s0:c62,c63", "s0:c62,c63"),
        ("s0", "s0"),
        ("s0:c63,c64-s0:c62.c64,c900", "s0:c63,c64-s0:c62.c64,c900"),
        ("s0:c1-s0:c1,c62,c63,c700,c701", "s0:c1-s0:c1,c62,c639,c700,c701"),
    ];
    for (ours, sepol) in samples {
        let c = p.parse_context(&format!("system_u:object_r:etc_t:{ours}")).unwrap();
        assert_eq!(p.range_to_string(&c.range), ours);
        assert_eq!(sepol_context_string(&p, &c), format!("system_u:object_r:etc_t:{sepol}"), "{ours}");
    }
    // Against libsepol itself: a process `change` with no rule echoes the
    // source context through libsepol's printer.
    let mut g = Gen::new(&p, 99);
    let etc = p.type_by_name("etc_t").unwrap();
    let mut ctxs: Vec<Context> =
        samples.iter().map(|(ours, _)| p.parse_context(&format!("system_u:object_r:etc_t:{ours}")).unwrap()).collect();
    for _ in 0..2000 {
        let all = g.all_range.clone();
        let range = random_range(&p, &mut g.rng, &all);
        ctxs.push(Context { user: UserId(1), role: OBJECT_R, ty: etc, range });
    }
    let cmds =
        ctxs.iter().map(|c| format!("change {} system_u:object_r:etc_t:s0 process", p.context_to_string(c))).collect();
    let out = run_oracle(&path, cmds);
    let mut quirky = 0;
    assert_eq!(out.len(), ctxs.len());
    for (c, got) in ctxs.iter().zip(&out) {
        assert_eq!(&sepol_context_string(&p, c), got);
        quirky += usize::from(p.context_to_string(c) != *got);
    }
    println!("libsepol printing: {} contexts checked, {quirky} printed differently from the kernel", ctxs.len());
}

/// What libsepol's oracle prints for our answer.
fn ours_as_oracle(p: &Policy, r: &Result<Context, CreateError>) -> String {
    match r {
        Ok(c) => sepol_context_string(p, c),
        Err(CreateError::InvalidContext { .. }) => "error: computed context is invalid".into(),
        Err(CreateError::NoCommonSensitivity { .. }) => "error: compute_sid failed (-22)".into(),
    }
}

fn same(ours: &str, oracle: &str) -> bool {
    if ours.starts_with("error: compute_sid failed") {
        oracle.starts_with(ours)
    } else {
        ours == oracle
    }
}

/// The (user, role) pairs a context of each type may have (object_r
/// excluded), by type index.
fn subjects(p: &Policy) -> Vec<Vec<(UserId, RoleId)>> {
    let mut out = vec![Vec::new(); p.types.len()];
    for (ri, role) in p.roles.iter().enumerate() {
        let r = RoleId(ri as u32 + 1);
        if r == OBJECT_R {
            continue;
        }
        let users: Vec<UserId> =
            (0..p.users.len()).filter(|&u| p.users[u].roles.contains(r.bit())).map(|u| UserId(u as u32 + 1)).collect();
        for t in role.types.iter() {
            if !p.types[t as usize].attribute {
                for &u in &users {
                    out[t as usize].push((u, r));
                }
            }
        }
    }
    out
}

/// A random valid range within `within`, on its sensitivities (low keeps
/// `within.low`'s sensitivity, categories are random subsets).
fn random_range(p: &Policy, rng: &mut Rng, within: &Range) -> Range {
    match rng.below(4) {
        0 => within.clone(),
        1 => Range { low: within.low.clone(), high: within.low.clone() },
        _ => {
            let high_cats: BitSet = within.high.cats.iter().filter(|_| rng.below(8) == 0).collect();
            let mut low_cats: BitSet = high_cats.iter().filter(|_| rng.below(3) == 0).collect();
            low_cats.union_with(&within.low.cats.intersection(&high_cats));
            let mut r = Range {
                low: Level { sens: within.low.sens, cats: low_cats },
                high: Level { sens: within.high.sens, cats: high_cats },
            };
            // Keep low within the user's low when categories do not allow.
            if !p.range_is_valid(&r) || !rampart_policy::mls::range_contains(within, &r) {
                r = within.clone();
            }
            r
        }
    }
}

struct Gen<'a> {
    p: &'a Policy,
    subj: Vec<Vec<(UserId, RoleId)>>,
    rng: Rng,
    /// Every valid range a user may have, for object targets.
    all_range: Range,
}

impl<'a> Gen<'a> {
    fn new(p: &'a Policy, seed: u64) -> Gen<'a> {
        let all_range = p.users.iter().map(|u| u.range.clone()).max_by_key(|r| r.high.cats.len()).unwrap();
        Gen { p, subj: subjects(p), rng: Rng::new(seed), all_range }
    }

    /// A valid subject context of type `t`: an authorized (user, role) if
    /// any, else `object_r` with a random user.
    fn subject(&mut self, t: TypeId) -> Context {
        let cands = &self.subj[t.index()];
        let (user, role) = if cands.is_empty() || self.rng.below(20) == 0 {
            (UserId(self.rng.below(self.p.users.len()) as u32 + 1), OBJECT_R)
        } else {
            *self.rng.pick(cands)
        };
        let within = if role == OBJECT_R { self.all_range.clone() } else { self.p.users[user.index()].range.clone() };
        let range = random_range(self.p, &mut self.rng, &within);
        let c = Context { user, role, ty: t, range };
        assert!(self.p.context_is_valid(&c), "{}", self.p.context_to_string(&c));
        c
    }

    /// An object context of type `t`, usually `system_u:object_r:t:s0`.
    fn object(&mut self, t: TypeId) -> Context {
        if self.rng.below(10) == 0 && !self.subj[t.index()].is_empty() {
            return self.subject(t);
        }
        let user = if self.rng.below(2) == 0 {
            self.p.user_by_name("system_u").unwrap_or(UserId(1))
        } else {
            UserId(self.rng.below(self.p.users.len()) as u32 + 1)
        };
        let range = if self.rng.below(2) == 0 {
            let s0 = self.all_range.low.clone();
            Range { low: s0.clone(), high: s0 }
        } else {
            let all = self.all_range.clone();
            random_range(self.p, &mut self.rng, &all)
        };
        Context { user, role: OBJECT_R, ty: t, range }
    }

    fn any_type(&mut self) -> TypeId {
        loop {
            let i = self.rng.below(self.p.types.len());
            if !self.p.types[i].attribute {
                return TypeId(i as u32 + 1);
            }
        }
    }
}

#[derive(Clone)]
struct Case {
    s: Context,
    t: Context,
    class: ClassId,
    kind: CreateKind,
    what: &'static str,
}

/// Boolean settings, each with the oracle command that selects it.
fn bool_settings(p: &Policy) -> Vec<(String, Booleans)> {
    let mut v = vec![
        ("bools-default".to_string(), Booleans::defaults(p)),
        ("bools-all 1".to_string(), Booleans::all(p, true)),
        ("bools-all 0".to_string(), Booleans::all(p, false)),
    ];
    for seed in [7u64, 12345] {
        let mut rng = Rng::new(seed);
        let values = (0..p.bools.len()).map(|_| rng.next() >> 63 == 1).collect();
        v.push((format!("bools-random {seed}"), Booleans::from_values(p, values)));
    }
    v
}

/// Compares every case under every boolean setting given for it; returns
/// (compared, mismatches) and prints a summary by category.
fn compare(p: &Policy, path: &Path, groups: &[(usize, Vec<Case>)]) -> (usize, Vec<String>) {
    let settings = bool_settings(p);
    let mut commands = Vec::new();
    let mut expected: Vec<Option<(String, &Case, usize)>> = Vec::new();
    let mut quirks = 0;
    for (si, cases) in groups {
        commands.push(settings[*si].0.clone());
        expected.push(None);
        for c in cases {
            let verb = match c.kind {
                CreateKind::Transition => "create",
                CreateKind::Member => "member",
                CreateKind::Change => "change",
            };
            commands.push(format!(
                "{verb} {} {} {}",
                p.context_to_string(&c.s),
                p.context_to_string(&c.t),
                p.class_name(c.class)
            ));
            let ours = p.compute_create(&settings[*si].1, &c.s, &c.t, c.class, c.kind, None);
            if let Ok(new) = &ours {
                quirks += usize::from(p.context_to_string(new) != sepol_context_string(p, new));
            }
            expected.push(Some((ours_as_oracle(p, &ours), c, *si)));
        }
    }
    let out = run_oracle(path, commands.clone());
    let mut stats: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    let mut bad = Vec::new();
    let mut n = 0;
    for ((cmd, exp), got) in commands.iter().zip(&expected).zip(&out) {
        let Some((ours, case, si)) = exp else {
            assert_eq!(got, "ok", "{cmd}");
            continue;
        };
        n += 1;
        let st = stats.entry(case.what).or_default();
        st[0] += 1;
        if got.starts_with("error") {
            st[2] += 1;
        } else {
            // Did a rule change the type from its default?
            let dflt = if Some(case.class) == p.process_class { case.s.ty } else { case.t.ty };
            if p.parse_context(got).is_ok_and(|c| c.ty != dflt) {
                st[1] += 1;
            }
        }
        if !same(ours, got) {
            st[3] += 1;
            if bad.len() < 50 {
                bad.push(format!("{cmd} [{}]: ours `{ours}`, libsepol `{got}`", settings[*si].0));
            }
        }
    }
    for (what, [total, ruled, errors, mism]) in &stats {
        println!("  {what:<28} {total:>6} compared, {ruled:>5} rule-typed, {errors:>4} errors, {mism} mismatches");
    }
    println!("  ({quirks} of our answers print differently under libsepol's category-run quirk; compared as libsepol prints them)");
    (n, bad)
}

// ---------------------------------------------------------------- tests

#[test]
#[ignore = "needs the system policy: checked against libsepol"]
fn differential_against_libsepol() {
    let (p, path) = load();
    let mut g = Gen::new(&p, 0x5eed);
    let process = p.process_class.unwrap();
    let nsettings = bool_settings(&p).len();

    // Type rules by kind and condition.
    let mut uncond: HashMap<u16, Vec<&AvRule>> = HashMap::new();
    let mut cond: Vec<&AvRule> = Vec::new();
    for r in &p.avtab {
        if r.kind & avtab_kind::TYPE != 0 {
            match r.cond {
                RuleCond::Always => uncond.entry(r.kind).or_default().push(r),
                RuleCond::If { .. } => cond.push(r),
            }
        }
    }
    let kind_of = |k: u16| match k {
        avtab_kind::TRANSITION => CreateKind::Transition,
        avtab_kind::MEMBER => CreateKind::Member,
        _ => CreateKind::Change,
    };

    let mut base: Vec<Case> = Vec::new();
    // ~3000 unconditional type_transition rules (every process one), all
    // member and change rules.
    let trans = uncond.get(&avtab_kind::TRANSITION).cloned().unwrap_or_default();
    let stride = (trans.len() / 3000).max(1);
    for (i, r) in trans.iter().enumerate() {
        if i % stride == 0 || r.class == process {
            let what = if r.class == process { "type_transition process" } else { "type_transition object" };
            let (s, t) = (g.subject(r.source), g.object(r.target));
            base.push(Case { s, t, class: r.class, kind: CreateKind::Transition, what });
        }
    }
    for k in [avtab_kind::MEMBER, avtab_kind::CHANGE] {
        for r in uncond.get(&k).cloned().unwrap_or_default() {
            let what = if k == avtab_kind::MEMBER { "type_member" } else { "type_change" };
            for _ in 0..3 {
                let (s, t) = (g.subject(r.source), g.object(r.target));
                base.push(Case { s, t, class: r.class, kind: kind_of(k), what });
                // The other kinds on the same key take no rule.
                let other = if k == avtab_kind::MEMBER { CreateKind::Change } else { CreateKind::Member };
                base.push(Case {
                    s: base[base.len() - 1].s.clone(),
                    t: base[base.len() - 1].t.clone(),
                    class: r.class,
                    kind: other,
                    what: "other kind on rule key",
                });
            }
        }
    }
    // Range transitions (all process here), under each kind, several ranges.
    for r in &p.range_trans {
        for _ in 0..6 {
            let (s, t) = (g.subject(r.source), g.object(r.target));
            for kind in [CreateKind::Transition, CreateKind::Member, CreateKind::Change] {
                base.push(Case { s: s.clone(), t: t.clone(), class: r.class, kind, what: "range_transition key" });
            }
        }
    }
    // Role transitions: source role from the rule, a type it may have.
    let role_types: Vec<Vec<TypeId>> = p
        .roles
        .iter()
        .map(|r| r.types.iter().filter(|&t| !p.types[t as usize].attribute).map(|t| TypeId(t + 1)).collect())
        .collect();
    let mut trans_sources: HashMap<(TypeId, ClassId), Vec<TypeId>> = HashMap::new();
    for r in &p.avtab {
        if r.kind == avtab_kind::TRANSITION {
            trans_sources.entry((r.target, r.class)).or_default().push(r.source);
        }
    }
    for r in &p.role_trans {
        let all_types = &role_types[r.role.index()];
        let with_rule: Vec<TypeId> = trans_sources
            .get(&(r.ty, r.class))
            .map(|v| v.iter().copied().filter(|t| p.roles[r.role.index()].types.contains(t.bit())).collect())
            .unwrap_or_default();
        let types = if with_rule.is_empty() { all_types } else { &with_rule };
        let users: Vec<UserId> = (0..p.users.len())
            .filter(|&u| p.users[u].roles.contains(r.role.bit()))
            .map(|u| UserId(u as u32 + 1))
            .collect();
        if types.is_empty() || users.is_empty() {
            continue;
        }
        for _ in 0..2 {
            let ty = *g.rng.pick(types);
            let user = *g.rng.pick(&users);
            let within = p.users[user.index()].range.clone();
            let range = random_range(&p, &mut g.rng, &within);
            let s = Context { user, role: r.role, ty, range };
            let t = g.object(r.ty);
            base.push(Case {
                s: s.clone(),
                t: t.clone(),
                class: r.class,
                kind: CreateKind::Transition,
                what: "role_transition",
            });
            base.push(Case { s, t, class: r.class, kind: CreateKind::Change, what: "role_transition key, change" });
        }
    }
    // Random triples: defaults (mostly no rule), every kind, every class.
    for _ in 0..3000 {
        let st = g.any_type();
        let tt = g.any_type();
        let (s, t) = (g.subject(st), g.object(tt));
        let class = ClassId(g.rng.below(p.classes.len()) as u32 + 1);
        let kind = *g.rng.pick(&[CreateKind::Transition, CreateKind::Member, CreateKind::Change]);
        base.push(Case { s, t, class, kind, what: "random triple" });
    }
    // Random process transitions from a domain to an exec type of a rule.
    let proc_rules: Vec<&AvRule> = trans.iter().copied().filter(|r| r.class == process).collect();
    for _ in 0..1000 {
        let r = *g.rng.pick(&proc_rules);
        let st = if g.rng.below(2) == 0 { r.source } else { g.any_type() };
        let (s, t) = (g.subject(st), g.object(r.target));
        let kind = *g.rng.pick(&[CreateKind::Transition, CreateKind::Member, CreateKind::Change]);
        base.push(Case { s, t, class: process, kind, what: "process exec, mixed source" });
    }

    // Conditional type rules under every boolean setting.
    let mut conds: Vec<Case> = Vec::new();
    for r in &cond {
        for _ in 0..2 {
            let (s, t) = (g.subject(r.source), g.object(r.target));
            conds.push(Case { s, t, class: r.class, kind: kind_of(r.kind), what: "conditional type rule" });
        }
    }

    let mut groups = vec![(0usize, base)];
    for si in 0..nsettings {
        groups.push((si, conds.clone()));
    }
    let (n, bad) = compare(&p, &path, &groups);
    println!("compute_create vs libsepol: {n} cases compared, {} mismatches", bad.len());
    for b in &bad {
        println!("MISMATCH {b}");
    }
    assert!(bad.is_empty(), "{} mismatches against libsepol", bad.len());
    assert!(n > 10_000, "too few cases: {n}");
}

/// Name-based type transitions: libsepol 3.4 has no name argument, so the
/// nameless answer comes from libsepol and the name only replaces the type
/// with the rule's (kernel `filename_compute_type`).
#[test]
#[ignore = "needs the system policy: checked against libsepol"]
fn filename_transitions() {
    let (p, path) = load();
    let bools = Booleans::defaults(&p);
    let mut g = Gen::new(&p, 42);
    let mut cases = Vec::new();
    for f in &p.filename_trans {
        let sources: Vec<u32> = f.sources.iter().collect();
        for _ in 0..3 {
            let st = TypeId(*g.rng.pick(&sources) + 1);
            cases.push((f, g.subject(st), g.object(f.target)));
        }
        // A source outside the rule's set takes no filename rule.
        let st = g.any_type();
        if !f.sources.contains(st.bit()) {
            cases.push((f, g.subject(st), g.object(f.target)));
        }
    }
    let cmds = cases
        .iter()
        .map(|(f, s, t)| {
            format!("create {} {} {}", p.context_to_string(s), p.context_to_string(t), p.class_name(f.class))
        })
        .collect();
    let answers = run_oracle(&path, cmds);
    let mut matched = 0;
    for (i, (f, s, t)) in cases.iter().enumerate() {
        let nameless = p.compute_create(&bools, s, t, f.class, CreateKind::Transition, None);
        assert!(
            same(&ours_as_oracle(&p, &nameless), &answers[i]),
            "nameless {}: ours {:?}, libsepol {}",
            f.name,
            nameless,
            answers[i]
        );
        let named = p.compute_create(&bools, s, t, f.class, CreateKind::Transition, Some(&f.name));
        let applies = p.filename_rule(s.ty, t.ty, f.class, &f.name);
        match (&nameless, applies) {
            (Ok(base), Some(new)) => {
                if f.sources.contains(s.ty.bit()) {
                    assert_eq!(new, f.new_type);
                }
                matched += 1;
                let want = Context { ty: new, ..base.clone() };
                // object classes: role object_r, so always valid.
                assert_eq!(named.as_ref().ok(), Some(&want), "{}", f.name);
            }
            (Ok(base), None) => assert_eq!(named.as_ref().ok(), Some(base)),
            (Err(_), _) => {}
        }
        // Another name, member and change: the name is ignored.
        let other = format!("{}~", f.name);
        if p.filename_rule(s.ty, t.ty, f.class, &other).is_none() {
            assert_eq!(p.compute_create(&bools, s, t, f.class, CreateKind::Transition, Some(&other)), nameless);
        }
        for kind in [CreateKind::Member, CreateKind::Change] {
            assert_eq!(
                p.compute_create(&bools, s, t, f.class, kind, Some(&f.name)),
                p.compute_create(&bools, s, t, f.class, kind, None)
            );
        }
    }
    println!(
        "filename transitions: {} cases ({} rules), {matched} took the named rule; nameless answers checked against libsepol",
        cases.len(),
        p.filename_trans.len()
    );
    assert!(matched >= p.filename_trans.len());
}

/// Class defaults (`default_user/role/type/range`), which the system
/// policy does not use: set on a copy and checked against libsepol's rules.
#[test]
#[ignore = "needs the system policy"]
fn class_defaults() {
    let (mut p, _) = load();
    let bools = Booleans::defaults(&p);
    let file = p.class_by_name("file").unwrap();
    let process = p.process_class.unwrap();
    let s = p.parse_context("staff_u:staff_r:staff_t:s0:c1,c2-s0:c0.c5").unwrap();
    let t = p.parse_context("system_u:object_r:user_home_dir_t:s0:c3-s0:c3,c4,c9").unwrap();
    let ts = p.parse_context("system_u:system_r:init_t:s0-s0:c0.c1023").unwrap();
    let c = |p: &Policy, s: &Context, t: &Context, class, kind| {
        p.compute_create(&bools, s, t, class, kind, None).map(|c| p.context_to_string(&c))
    };
    use CreateKind::*;
    // No defaults, object class: source user, object_r, rule type, source low.
    assert_eq!(c(&p, &s, &t, file, Transition).unwrap(), "staff_u:object_r:user_home_t:s0:c1,c2");
    assert_eq!(c(&p, &s, &t, file, Member).unwrap(), "system_u:object_r:user_home_dir_t:s0:c1,c2");
    assert_eq!(c(&p, &s, &t, file, Change).unwrap(), "staff_u:object_r:user_home_dir_t:s0:c1,c2");
    // Process class: source role and type, whole source range (change and
    // transition), low for member.
    assert_eq!(c(&p, &s, &ts, process, Change).unwrap(), "staff_u:staff_r:staff_t:s0:c1,c2-s0:c0.c5");
    // (member takes the target's user, which may not have staff_r)
    let err = p.compute_create(&bools, &s, &ts, process, Member, None).unwrap_err();
    assert!(err.to_string().contains("`system_u:staff_r:staff_t:s0:c1,c2`"), "{err}");
    assert!(err.to_string().contains("user `system_u` is not authorized for role `staff_r`"), "{err}");

    let fi = file.index();
    // default_user target: transition and change take the target's user;
    // member always does.
    p.classes[fi].default_user = DEFAULT_TARGET;
    assert_eq!(c(&p, &s, &t, file, Transition).unwrap(), "system_u:object_r:user_home_t:s0:c1,c2");
    assert_eq!(c(&p, &s, &t, file, Change).unwrap(), "system_u:object_r:user_home_dir_t:s0:c1,c2");
    p.classes[fi].default_user = DEFAULT_SOURCE;
    assert_eq!(c(&p, &s, &t, file, Member).unwrap(), "system_u:object_r:user_home_dir_t:s0:c1,c2");
    p.classes[fi].default_user = 0;

    // default_role source: the source role, which must then be authorized
    // for the new type: staff_r may not have user_home_t.
    p.classes[fi].default_role = DEFAULT_SOURCE;
    let err = p.compute_create(&bools, &s, &t, file, Transition, None).unwrap_err();
    assert!(matches!(err, CreateError::InvalidContext { .. }), "{err}");
    assert!(err.to_string().contains("staff_u:staff_r:user_home_t:s0:c1,c2"), "{err}");
    p.classes[fi].default_role = DEFAULT_TARGET;
    assert_eq!(c(&p, &s, &t, file, Transition).unwrap(), "staff_u:object_r:user_home_t:s0:c1,c2");
    p.classes[fi].default_role = 0;

    // default_type source/target: the rule still wins; without a rule the
    // default applies (staff_t as a file type is valid with object_r).
    p.classes[fi].default_type = DEFAULT_SOURCE;
    assert_eq!(c(&p, &s, &t, file, Transition).unwrap(), "staff_u:object_r:user_home_t:s0:c1,c2");
    assert_eq!(c(&p, &s, &t, file, Member).unwrap(), "system_u:object_r:staff_t:s0:c1,c2");
    p.classes[fi].default_type = 0;
    // On the process class, default_type target gives the target's type,
    // which staff_r may not have.
    p.classes[process.index()].default_type = DEFAULT_TARGET;
    let err = p.compute_create(&bools, &s, &ts, process, Change, None).unwrap_err();
    assert!(err.to_string().contains("`staff_u:staff_r:init_t:s0:c1,c2-s0:c0.c5`"), "{err}");
    p.classes[process.index()].default_type = 0;

    // default_range: transition only; member and change ignore it.
    let want = [
        (default_range::SOURCE_LOW, "s0:c1,c2"),
        (default_range::SOURCE_HIGH, "s0:c0.c5"),
        (default_range::SOURCE_LOW_HIGH, "s0:c1,c2-s0:c0.c5"),
        (default_range::TARGET_LOW, "s0:c3"),
        (default_range::TARGET_HIGH, "s0:c3,c4,c9"),
        (default_range::TARGET_LOW_HIGH, "s0:c3-s0:c3,c4,c9"),
        (default_range::GLBLUB, "s0-s0:c3,c4"),
    ];
    for (dr, range) in want {
        p.classes[fi].default_range = dr;
        assert_eq!(c(&p, &s, &t, file, Transition).unwrap(), format!("staff_u:object_r:user_home_t:{range}"), "{dr}");
        assert_eq!(c(&p, &s, &t, file, Change).unwrap(), "staff_u:object_r:user_home_dir_t:s0:c1,c2");
        assert_eq!(c(&p, &s, &t, file, Member).unwrap(), "system_u:object_r:user_home_dir_t:s0:c1,c2");
    }
    p.classes[fi].default_range = 0;

    // A range_transition beats default_range.
    let pi = process.index();
    p.classes[pi].default_range = default_range::TARGET_LOW;
    let rt = p.range_trans[0].clone();
    let src = Context { ty: rt.source, ..ts.clone() };
    let exec = Context { ty: rt.target, role: OBJECT_R, range: t.range.clone(), ..ts.clone() };
    let got = p.compute_create(&bools, &src, &exec, process, Transition, None);
    assert_eq!(got.map(|c| c.range), Ok(rt.range.clone()));
    // Without one, the class default applies to processes too.
    let other_exec = Context { ty: p.type_by_name("bin_t").unwrap(), ..exec.clone() };
    let got = p.compute_create(&bools, &src, &other_exec, process, Transition, None).unwrap();
    assert_eq!(p.range_to_string(&got.range), "s0:c3");
    p.classes[pi].default_range = 0;
    let got = p.compute_create(&bools, &src, &other_exec, process, Transition, None).unwrap();
    assert_eq!(got.range, src.range);
}

/// A socket's context (`compute_socket_create`), which libsepol 3.4
/// cannot answer: the kernel's `security_compute_sid` gives a socket
/// class the process class's defaults (source role, type and whole
/// range), so a daemon's socket is `system_r`, not `object_r`, and keeps
/// its categories. Expectations from the kernel's services.c and mls.c.
#[test]
#[ignore = "needs the system policy"]
fn sockets_take_their_creators_role_type_and_range() {
    let (mut p, _) = load();
    let bools = Booleans::defaults(&p);
    let s = p.parse_context("staff_u:staff_r:staff_t:s0:c1,c2-s0:c0.c5").unwrap();
    for name in ["tcp_socket", "udp_socket", "unix_stream_socket", "netlink_route_socket", "icmp_socket"] {
        let class = p.class_by_name(name).unwrap();
        let got = p.compute_socket_create(&bools, &s, class).unwrap();
        assert_eq!(p.context_to_string(&got), "staff_u:staff_r:staff_t:s0:c1,c2-s0:c0.c5", "{name}");
        // libsepol's object defaults, for contrast: object_r and the low level.
        let object = p.compute_create(&bools, &s, &s, class, CreateKind::Transition, None).unwrap();
        assert_eq!(p.context_to_string(&object), "staff_u:object_r:staff_t:s0:c1,c2", "{name}");
    }
    // Class defaults still come first: default_range source low.
    let tcp = p.class_by_name("tcp_socket").unwrap();
    p.classes[tcp.index()].default_range = default_range::SOURCE_LOW;
    let got = p.compute_socket_create(&bools, &s, tcp).unwrap();
    assert_eq!(p.context_to_string(&got), "staff_u:staff_r:staff_t:s0:c1,c2");
    // default_role target is the creator's too (target = source).
    p.classes[tcp.index()].default_role = DEFAULT_TARGET;
    let got = p.compute_socket_create(&bools, &s, tcp).unwrap();
    assert_eq!(p.context_to_string(&got), "staff_u:staff_r:staff_t:s0:c1,c2");
}

/// glblub of ranges with no common sensitivity fails like libsepol
/// (`-EINVAL`); needs a policy with two sensitivities, so it is synthetic.
#[test]
#[ignore = "needs the system policy"]
fn glblub_without_common_sensitivity_is_an_error() {
    let (mut p, _) = load();
    if p.sens.len() < 2 {
        // One sensitivity: build contexts with a second one directly; the
        // computation fails before validity is checked.
        let file = p.class_by_name("file").unwrap();
        p.classes[file.index()].default_range = default_range::GLBLUB;
        let mut s = p.parse_context("system_u:system_r:init_t:s0").unwrap();
        let t = p.parse_context("system_u:object_r:etc_t:s0").unwrap();
        s.range.low.sens = 2;
        s.range.high.sens = 2;
        let err = p.compute_create(&Booleans::defaults(&p), &s, &t, file, CreateKind::Transition, None).unwrap_err();
        assert!(matches!(err, CreateError::NoCommonSensitivity { .. }), "{err}");
    }
}
