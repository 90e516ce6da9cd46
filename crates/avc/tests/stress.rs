//! Stress: two threads check millions of times on keys from the Debian
//! policy while a third reloads the policy, flips several booleans at
//! once, toggles enforcing and registers/unregisters a module. Every
//! decision is verified against the state its snapshot was published
//! with, computed independently with `Policy::compute_av`.
//!
//! Runs about 2 s, or at least 10 s with `RAMPART_FULL=1` (CI). Needs
//! `/etc/selinux/default/policy/policy.33`: `#[ignore]`d, and run without
//! it the test fails saying what to install.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rampart_avc::*;
use rampart_policy::{Booleans, CondExpr, Context, HandleUnknown, Policy, RuleCond, TypeId};

const POLICY: &str = "/etc/selinux/default/policy/policy.33";
const MAX_KEYS: usize = 96;
const MAX_BOOLS: usize = 8;
/// Per checker thread: the count bound (the time bound usually ends first).
const MAX_CHECKS: u64 = 500_000_000;

const CLASSES: &[(&str, &[&str])] = &[
    ("file", &["read", "write", "getattr", "open", "execute", "append", "ioctl", "lock", "create", "unlink"]),
    ("dir", &["search", "read", "write", "add_name", "remove_name", "getattr"]),
    ("process", &["transition", "signal", "sigkill", "ptrace", "getattr", "setexec"]),
    // Unknown to every real policy: exercises handle_unknown.
    ("rampart_widget", &["poke"]),
];

/// The custom module of the test: no `write`/`append` on one file type.
struct NoWrite {
    target_type: String,
}

impl Module for NoWrite {
    fn name(&self) -> &str {
        "nowrite"
    }

    fn check(&self, q: &Query<'_>) -> ModuleDecision {
        if q.class_name == "file" && q.target_type() == Some(self.target_type.as_str()) {
            ModuleDecision { allowed: !(q.perm("write") | q.perm("append")), ..ModuleDecision::ALLOW_ALL }
        } else {
            ModuleDecision::ALLOW_ALL
        }
    }
}

/// One key of the workload.
struct Key {
    source: String,
    target: String,
    class: ClassIdx,
    /// Declared permissions of the class.
    all: Perms,
}

/// The full vectors one state gives for one key, computed the reference
/// way (straight from `compute_av`, the kernel's `map_decision` rules and
/// the combination rules written out).
#[derive(Clone, Copy, Debug)]
struct Expected {
    allowed: Perms,
    auditallow: Perms,
    auditdeny: Perms,
    enforced: Perms,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct State {
    bools: usize,
    enforcing: bool,
    module: bool,
}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

fn duration() -> Duration {
    if std::env::var("RAMPART_FULL").is_ok_and(|v| v == "1") {
        Duration::from_secs(10)
    } else {
        Duration::from_secs(2)
    }
}

/// Keys from conditional allow rules (so boolean flips change decisions)
/// and the booleans they depend on.
fn pick_keys(policy: &Policy, mapping: &Mapping) -> (Vec<Key>, Vec<String>) {
    let member = |attr: TypeId, nth: usize| -> Option<TypeId> {
        let set = policy.attr_types.get(attr.index())?;
        let members: Vec<u32> = set.iter().collect();
        let chosen = *members.get(nth % members.len().max(1))?;
        Some(TypeId(chosen + 1))
    };
    let subject = |t: TypeId| -> Option<String> {
        let name = policy.type_name(t);
        ["system_u:system_r", "unconfined_u:unconfined_r", "staff_u:staff_r", "user_u:user_r"]
            .iter()
            .map(|ur| format!("{ur}:{name}:s0"))
            .find(|c| policy.parse_context(c).is_ok())
    };
    let object = |t: TypeId| -> Option<String> {
        let c = format!("system_u:object_r:{}:s0", policy.type_name(t));
        policy.parse_context(&c).is_ok().then_some(c)
    };
    let mut keys = Vec::new();
    let mut seen = BTreeSet::new();
    let mut bools = BTreeSet::new();
    for (i, rule) in policy.avtab.iter().enumerate() {
        if keys.len() >= MAX_KEYS {
            break;
        }
        let RuleCond::If { cond, .. } = rule.cond else { continue };
        if rule.kind != rampart_policy::avtab_kind::ALLOWED || i % 7 != 0 {
            continue;
        }
        let class_name = policy.class_name(rule.class);
        let Some(class) = mapping.class(class_name) else { continue };
        let (Some(s), Some(t)) = (member(rule.source, i), member(rule.target, i / 3)) else { continue };
        let source = subject(s);
        let target = if class_name == "process" { subject(t) } else { object(t) };
        let (Some(source), Some(target)) = (source, target) else { continue };
        if !seen.insert((source.clone(), target.clone(), class)) {
            continue;
        }
        for e in &policy.conds[cond as usize].expr {
            if let CondExpr::Bool(b) = e {
                if bools.len() < MAX_BOOLS {
                    bools.insert(policy.bools[b.index()].name.clone());
                }
            }
        }
        let n = CLASSES.iter().find(|(c, _)| *c == class_name).map_or(0, |(_, p)| p.len());
        keys.push(Key { source, target, class, all: Perms::from_bits((1u32 << n) - 1) });
    }
    // A few keys in the class no policy has.
    let widget = mapping.class("rampart_widget").unwrap();
    for k in keys.iter().take(4).map(|k| (k.source.clone(), k.target.clone())).collect::<Vec<_>>() {
        keys.push(Key { source: k.0, target: k.1, class: widget, all: Perms::from_bits(1) });
    }
    (keys, bools.into_iter().collect())
}

/// SELinux's answer through the mapping, written out from the kernel's
/// `map_decision` rules.
fn selinux_reference(
    policy: &Policy,
    bools: &Booleans,
    s: &Context,
    t: &Context,
    class_name: &str,
    perms: &[&str],
) -> ModuleDecision {
    let allow_unknown = policy.handle_unknown == HandleUnknown::Allow;
    let permissive = policy.is_permissive(s.ty);
    let Some(class) = policy.class_by_name(class_name) else {
        let allowed = if allow_unknown { Perms::ALL } else { Perms::NONE };
        return ModuleDecision { allowed, auditallow: Perms::NONE, auditdeny: Perms::ALL, permissive };
    };
    let av = policy.compute_av(bools, s, t, class);
    let mut d = ModuleDecision { allowed: Perms::NONE, auditallow: Perms::NONE, auditdeny: Perms::ALL, permissive };
    for (i, name) in perms.iter().enumerate() {
        let bit = Perms::from_bits(1 << i);
        match policy.perm_bit(class, name) {
            Some(b) => {
                if av.allowed & b != 0 {
                    d.allowed |= bit;
                }
                if av.auditallow & b != 0 {
                    d.auditallow |= bit;
                }
                if av.auditdeny & b == 0 {
                    d.auditdeny &= !bit;
                }
            }
            None if allow_unknown => {
                d.allowed |= bit;
                d.auditdeny &= !bit;
            }
            None => {}
        }
    }
    d
}

fn combine(selinux: ModuleDecision, module: Option<ModuleDecision>, enforcing: bool) -> Expected {
    let se_denied = !selinux.allowed;
    let mut e = Expected {
        allowed: selinux.allowed,
        auditallow: selinux.auditallow,
        auditdeny: se_denied & selinux.auditdeny,
        enforced: if enforcing && !selinux.permissive { se_denied } else { Perms::NONE },
    };
    if let Some(m) = module {
        let first = !m.allowed & selinux.allowed;
        e.allowed &= m.allowed;
        e.auditallow |= m.auditallow;
        e.auditdeny |= first & m.auditdeny;
        if enforcing && !m.permissive {
            e.enforced |= first;
        }
    }
    e
}

/// `actual` is what `expected` gives for `requested`, after some of its
/// non-enforced denials were already reported and granted.
fn verify(expected: &Expected, requested: Perms, actual: &Decision) -> Result<(), String> {
    let denied = requested & !expected.allowed;
    let granted_later = denied & !actual.denied;
    let ok = actual.denied == (actual.denied & denied)
        && (granted_later & expected.enforced).is_empty()
        && actual.allowed == requested & !actual.denied
        && actual.auditallow == actual.allowed & expected.auditallow
        && actual.auditdeny == actual.denied & expected.auditdeny
        && actual.permissive == (!actual.denied.is_empty() && (actual.denied & expected.enforced).is_empty());
    if ok {
        Ok(())
    } else {
        Err(format!("requested {requested:?}: expected {expected:?}, got {actual:?}"))
    }
}

/// What each sequence number was published with.
#[derive(Default)]
struct Log {
    /// (seqno, state) of every publish the writer made, in order.
    published: Vec<(u64, State)>,
    /// The state being published right now (not yet in `published`).
    pending: Option<State>,
}

impl Log {
    /// The states snapshot `seqno` may have: its own publish; or, for a
    /// number the writer did not publish (a reclaim copies the state
    /// current then), the state before it and the one being published.
    fn candidates(&self, seqno: u64) -> Vec<State> {
        if let Some((_, s)) = self.published.iter().find(|(n, _)| *n == seqno) {
            return vec![*s];
        }
        let mut out: Vec<State> =
            self.published.iter().rev().find(|(n, _)| *n < seqno).map(|(_, s)| *s).into_iter().collect();
        if self.published.last().map_or(true, |(n, _)| *n < seqno) {
            out.extend(self.pending);
        }
        out
    }
}

#[test]
#[ignore = "needs the system policy: keys and rules from it"]
fn checks_stay_exact_while_everything_changes() {
    let bytes = std::fs::read(POLICY).unwrap_or_else(|e| {
        panic!("missing prerequisite: {POLICY} ({e}; selinux-policy-default); install it with scripts/install-deps.sh")
    });
    let policies = [Arc::new(Policy::from_bytes(&bytes).unwrap()), Arc::new(Policy::from_bytes(&bytes).unwrap())];
    let policy = &policies[0];
    let mapping = Mapping::new(CLASSES).unwrap();
    let (keys, bool_names) = pick_keys(policy, &mapping);
    assert!(keys.len() >= 16 && !bool_names.is_empty(), "too few keys ({}) or booleans", keys.len());
    let nowrite_type = keys
        .iter()
        .find(|k| mapping.class_name(k.class) == Some("file"))
        .map(|k| k.target.split(':').nth(2).unwrap().to_owned())
        .unwrap();

    // Boolean rotation: defaults, all chosen on, all off, alternating.
    let ids: Vec<_> = bool_names.iter().map(|n| policy.names.bools[n.as_str()]).collect();
    let bool_states: Vec<Vec<(String, bool)>> = vec![
        bool_names.iter().map(|n| (n.clone(), policy.bools[policy.names.bools[n.as_str()].index()].default)).collect(),
        bool_names.iter().map(|n| (n.clone(), true)).collect(),
        bool_names.iter().map(|n| (n.clone(), false)).collect(),
        bool_names.iter().enumerate().map(|(i, n)| (n.clone(), i % 2 == 0)).collect(),
    ];
    let defaults = Booleans::defaults(policy);

    // Expected vectors for every (boolean state, enforcing, module) and key.
    let module = NoWrite { target_type: nowrite_type.clone() };
    let sids = SidTable::new();
    let mut expected: HashMap<(State, usize), Expected> = HashMap::new();
    let mut distinct = BTreeSet::new();
    for (b, state) in bool_states.iter().enumerate() {
        let changes: Vec<_> = state.iter().zip(&ids).map(|((_, v), id)| (*id, *v)).collect();
        let bools = defaults.with(policy, &changes);
        for (k, key) in keys.iter().enumerate() {
            let s = policy.parse_context(&key.source).unwrap();
            let t = policy.parse_context(&key.target).unwrap();
            let class_name = mapping.class_name(key.class).unwrap();
            let perms = CLASSES.iter().find(|(c, _)| *c == class_name).unwrap().1;
            let se = selinux_reference(policy, &bools, &s, &t, class_name, perms);
            let perm_names: Vec<String> = perms.iter().map(|p| (*p).to_owned()).collect();
            let query = Query {
                source: sids.intern(&key.source).unwrap(),
                target: sids.intern(&key.target).unwrap(),
                scontext: &key.source,
                tcontext: &key.target,
                class: key.class,
                class_name,
                perm_names: &perm_names,
            };
            let m = module.check(&query);
            for enforcing in [true, false] {
                for with_module in [false, true] {
                    let e = combine(se, with_module.then_some(m), enforcing);
                    distinct.insert((k, e.allowed.bits()));
                    expected.insert((State { bools: b, enforcing, module: with_module }, k), e);
                }
            }
        }
    }
    let varying = distinct.len() > keys.len();
    eprintln!(
        "stress: {} keys, {} booleans flipped together, {} distinct (key, allowed) pairs across states",
        keys.len(),
        bool_names.len(),
        distinct.len()
    );
    assert!(varying, "the rotation never changes a decision");

    let initial = State { bools: 0, enforcing: true, module: false };
    let sink: Arc<dyn AuditSink> = Arc::new(NullSink);
    let mut config = AvcConfig::new(policies[0].clone(), mapping, sink);
    // Above the hot set, below all keys: the occasional cold key fills the
    // table, so reclaims happen too.
    let hot = keys.len() * 2 / 3;
    config.l2_threshold = keys.len() * 3 / 4;
    let avc = Avc::new(config).unwrap();
    avc.set_booleans(&bool_states[0].iter().map(|(n, v)| (n.as_str(), *v)).collect::<Vec<_>>()).unwrap();
    let log = Mutex::new(Log { published: vec![(avc.seqno(), initial)], pending: None });
    let key_sids: Vec<(Sid, Sid)> =
        keys.iter().map(|k| (avc.intern(&k.source).unwrap(), avc.intern(&k.target).unwrap())).collect();

    let deadline = Instant::now() + duration();
    let stop = AtomicBool::new(false);
    let writer_actions = AtomicU64::new(0);
    let failures = Mutex::new(Vec::<String>::new());
    let started = Instant::now();
    let counts: Vec<(u64, u64)> = std::thread::scope(|scope| {
        let checkers: Vec<_> = (0..2u64)
            .map(|id| {
                let (avc, log, keys, key_sids, expected, stop, failures) =
                    (&avc, &log, &keys, &key_sids, &expected, &stop, &failures);
                scope.spawn(move || {
                    let mut rng = 0x9e37_79b9_7f4a_7c15u64 ^ (id + 1);
                    let (mut checks, mut verified) = (0u64, 0u64);
                    let mut cached: (u64, Vec<State>) = (0, Vec::new());
                    while checks < MAX_CHECKS {
                        if checks % 4096 == 0 && (stop.load(Ordering::Relaxed) || Instant::now() >= deadline) {
                            break;
                        }
                        let r = xorshift(&mut rng);
                        // Mostly a hot set that fits the L2; now and then any key,
                        // which slowly fills the table up to a reclaim.
                        let range = if r & 0x3ff == 0 { keys.len() } else { hot };
                        let k = ((r >> 10) % range as u64) as usize;
                        let key = &keys[k];
                        let requested = Perms::from_bits((r >> 32) as u32) & key.all;
                        let requested = if requested.is_empty() { key.all } else { requested };
                        let (s, t) = key_sids[k];
                        let d = avc.has_perm_noaudit(s, t, key.class, requested);
                        checks += 1;
                        if cached.0 != d.seqno {
                            cached = (d.seqno, log.lock().unwrap().candidates(d.seqno));
                        }
                        let results: Vec<_> =
                            cached.1.iter().map(|st| verify(&expected[&(*st, k)], requested, &d)).collect();
                        if results.iter().any(Result::is_ok) {
                            verified += 1;
                        } else {
                            let mut f = failures.lock().unwrap();
                            if f.len() < 10 {
                                f.push(format!("key {k} seqno {} states {:?}: {results:?}", d.seqno, cached.1));
                            }
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                    (checks, verified)
                })
            })
            .collect();

        // The writer: one change at a time, recorded with its seqno.
        let mut state = initial;
        let mut step = 0u64;
        let module: Arc<dyn Module> = Arc::new(NoWrite { target_type: nowrite_type.clone() });
        while Instant::now() < deadline && !stop.load(Ordering::Relaxed) {
            let mut next = state;
            match step % 4 {
                0 => {}
                1 => next.bools = (state.bools + 1) % bool_states.len(),
                2 => next.enforcing = !state.enforcing,
                _ => next.module = !state.module,
            }
            log.lock().unwrap().pending = Some(next);
            let seqno = match step % 4 {
                0 => avc.load_policy(policies[(step / 4 % 2) as usize].clone()).unwrap(),
                1 => {
                    let changes: Vec<_> = bool_states[next.bools].iter().map(|(n, v)| (n.as_str(), *v)).collect();
                    avc.set_booleans(&changes).unwrap()
                }
                2 => avc.set_enforcing(next.enforcing),
                _ if next.module => avc.register_module(module.clone()).unwrap(),
                _ => avc.unregister_module("nowrite").unwrap(),
            };
            {
                let mut log = log.lock().unwrap();
                log.published.push((seqno, next));
                log.pending = None;
            }
            state = next;
            step += 1;
            writer_actions.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(Duration::from_micros(500));
        }
        checkers.into_iter().map(|c| c.join().unwrap()).collect()
    });
    let elapsed = started.elapsed();
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{} wrong decisions, first: {:#?}", failures.len(), failures);

    let checks: u64 = counts.iter().map(|c| c.0).sum();
    let verified: u64 = counts.iter().map(|c| c.1).sum();
    let total = avc.stats().total();
    eprintln!(
        "stress: {:.1} s, {checks} checks ({:.1} M/s), {verified} decisions verified, {} writer publishes \
         (reloads, boolean flips, enforcing toggles, module changes), final seqno {} (the rest are reclaims)",
        elapsed.as_secs_f64(),
        checks as f64 / elapsed.as_secs_f64() / 1e6,
        writer_actions.load(Ordering::Relaxed),
        avc.seqno()
    );
    eprint!("{}", avc.stats());
    assert_eq!(checks, verified);
    assert!(checks >= 1_000_000, "only {checks} checks in {elapsed:?}");
    assert!(writer_actions.load(Ordering::Relaxed) >= 40);
    assert!(total.reclaims > 0 && total.hits > total.misses, "{total:?}");
}
