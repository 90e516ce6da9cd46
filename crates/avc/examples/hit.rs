//! Microbenchmark of the AVC hit path: `Avc::has_perm_noaudit` against a
//! plain single-threaded `HashMap<u64, Perms, KeyHasher>` (FxHash, the
//! very hash of the AVC's keys) holding the same keys, as the AVC hit
//! workload of `rampart bench seeds` measures them (issue target: a hit
//! costs at most 1.5x the map lookup).
//!
//! ```sh
//! cargo run --release -p rampart-avc --example hit -- [ROUNDS] [CHECKS] [SIZES] [THREADS] [audit]
//! # defaults: 9 rounds, 10000000 checks per thread per run,
//! # sizes 16,256,1024,4096, threads 1,2; `audit`: time `has_perm`
//! # (with a sink that discards) instead of `has_perm_noaudit`
//! ```
//!
//! It reproduces the benchmark's setup: keys are drawn from the `allow`
//! rules of `/etc/selinux/default/policy/policy.33` exactly as the bench
//! draws them (same generator, same seed, so the same keys and streams),
//! each size's stream is 131,072 checks over the first N keys in shuffled
//! passes; each run spawns its threads, each warms its cache with every
//! key and one pass of the stream, then times its checks (thread CPU
//! time) walking the stream from its own offset. Rounds interleave the
//! variants in a rotated order; the report gives medians, and the median
//! of the per-round ratios rampart / hashmap.

use std::collections::{HashMap, HashSet};
use std::error::Error;
use std::hint::black_box;
use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use rampart_avc::{AuditInfo, Avc, AvcConfig, CacheKey, ClassIdx, KeyHasher, Mapping, NullSink, Perms, Sid};
use rampart_policy::{avtab_kind, ClassId, Policy, RuleCond, TypeId};

const POLICY: &str = "/etc/selinux/default/policy/policy.33";
/// The bench's seed (`rampart_bench::setup::SEED`).
const SEED: u64 = 0x5e1f_2026_0004;
const KEYS: usize = 4096;
const STREAM_LEN: usize = 1 << 17;

type KeyMap = HashMap<u64, Perms, KeyHasher>;

#[derive(Clone, Copy)]
struct Access {
    ssid: Sid,
    tsid: Sid,
    class: ClassIdx,
    perms: Perms,
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    let rounds: usize = arg(0).map_or(Ok(9), str::parse)?;
    let checks: usize = arg(1).map_or(Ok(10_000_000), str::parse)?;
    let list = |s: &str| s.split(',').map(str::parse).collect::<Result<Vec<usize>, _>>();
    let sizes = list(arg(2).unwrap_or("16,256,1024,4096"))?;
    let thread_counts = list(arg(3).unwrap_or("1,2"))?;
    let audit = arg(4) == Some("audit");

    if !Path::new(POLICY).exists() {
        eprintln!("{POLICY} is missing; nothing to measure");
        return Ok(());
    }
    let policy = Arc::new(Policy::from_file(Path::new(POLICY))?);
    let mapping = mapping_for(&policy)?;
    let mut rng = Rng(SEED);
    let mut contexts = Contexts::default();
    let raw = derive_keys(&policy, &mapping, &mut contexts, &mut rng, KEYS);

    let new_avc = || -> Result<Avc, Box<dyn Error>> {
        let avc = Avc::new(AvcConfig::new(Arc::clone(&policy), mapping.clone(), Arc::new(NullSink)))?;
        Ok(avc)
    };
    let reference = new_avc()?;
    let avc = new_avc()?;
    let mut sids = Vec::new();
    for c in &contexts.list {
        let sid = reference.intern(c)?;
        if avc.intern(c)? != sid {
            return Err("two AVCs gave different SIDs".into());
        }
        sids.push(sid);
    }
    let keys: Vec<Access> =
        raw.iter().map(|k| Access { ssid: sids[k.s], tsid: sids[k.t], class: k.class, perms: k.perms }).collect();
    let mut table = KeyMap::default();
    for a in &keys {
        let d = reference.has_perm_noaudit(a.ssid, a.tsid, a.class, Perms::ALL);
        let passing = if d.permissive { d.allowed | d.denied } else { d.allowed };
        table.insert(CacheKey::new(a.ssid, a.tsid, a.class).as_u64(), passing);
    }
    let streams: Vec<(usize, Vec<Access>)> = sizes
        .iter()
        .map(|&n| {
            let n = n.clamp(1, keys.len());
            (n, shuffled_stream(&keys[..n], STREAM_LEN, &mut Rng(SEED ^ n as u64)))
        })
        .collect();
    println!(
        "{} keys, {} contexts; {rounds} rounds of {checks} checks per thread per run; ns of thread CPU time per check; rampart: {}",
        keys.len(),
        contexts.list.len(),
        if audit { "has_perm" } else { "has_perm_noaudit" }
    );

    // samples[size][threads][variant]
    let mut samples = vec![vec![[Vec::new(), Vec::new()]; thread_counts.len()]; streams.len()];
    let started = Instant::now();
    for round in 0..rounds {
        for (si, (_, stream)) in streams.iter().enumerate() {
            for (ti, &threads) in thread_counts.iter().enumerate() {
                for v in [round % 2, (round + 1) % 2] {
                    let ns = if v == 0 {
                        run(&keys, stream, threads, checks, || Baseline { map: table.clone() })
                    } else {
                        run(&keys, stream, threads, checks, || Rampart { avc: &avc, audit })
                    };
                    samples[si][ti][v].push(ns);
                }
            }
        }
        eprintln!("round {}/{rounds} ({:.0} s)", round + 1, started.elapsed().as_secs_f64());
    }

    println!("| keys | threads | hashmap (ns) | rampart (ns) | rampart / hashmap (median of ratios) |");
    println!("|---|---|---|---|---|");
    for (si, (n, _)) in streams.iter().enumerate() {
        for (ti, threads) in thread_counts.iter().enumerate() {
            let [base, ours] = &samples[si][ti];
            let ratios: Vec<f64> = base.iter().zip(ours).map(|(b, o)| o / b).collect();
            println!(
                "| {n} | {threads} | {:.2} | {:.2} | {:.2}x |",
                median(base.clone()),
                median(ours.clone()),
                median(ratios)
            );
        }
    }
    let total = avc.stats().total();
    println!("rampart stats: {} lookups, {} misses", total.lookups, total.misses);
    Ok(())
}

trait Check {
    fn check(&mut self, a: &Access) -> bool;
}

struct Baseline {
    map: KeyMap,
}

impl Check for Baseline {
    #[inline]
    fn check(&mut self, a: &Access) -> bool {
        // Warmed with every key: a miss never happens when timed.
        self.map.get(&CacheKey::new(a.ssid, a.tsid, a.class).as_u64()).is_some_and(|p| p.contains(a.perms))
    }
}

struct Rampart<'a> {
    avc: &'a Avc,
    audit: bool,
}

impl Check for Rampart<'_> {
    #[inline]
    fn check(&mut self, a: &Access) -> bool {
        if self.audit {
            self.avc.has_perm(a.ssid, a.tsid, a.class, a.perms, &AuditInfo::default()).passes()
        } else {
            self.avc.has_perm_noaudit(a.ssid, a.tsid, a.class, a.perms).passes()
        }
    }
}

/// One run: ns per check per thread (thread CPU time), averaged over the
/// threads.
fn run<C: Check>(keys: &[Access], stream: &[Access], threads: usize, checks: usize, make: impl Fn() -> C + Sync) -> f64 {
    let barrier = Barrier::new(threads);
    let times: Vec<Duration> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|index| {
                let (barrier, make) = (&barrier, &make);
                scope.spawn(move || {
                    let mut c = make();
                    let mut allowed = 0u64;
                    for a in keys.iter().chain(stream) {
                        allowed += u64::from(c.check(a));
                    }
                    let offset = index * stream.len() / threads;
                    barrier.wait();
                    let start = thread_cpu_time();
                    allowed += walk(&mut c, stream, offset, checks);
                    let elapsed = thread_cpu_time().saturating_sub(start);
                    black_box(allowed);
                    elapsed
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_default()).collect()
    });
    times.iter().map(|t| t.as_secs_f64() * 1e9 / checks.max(1) as f64).sum::<f64>() / times.len().max(1) as f64
}

/// `checks` checks along `stream` from `offset`, wrapping around (the
/// bench's loop).
#[inline(never)]
fn walk<C: Check>(c: &mut C, stream: &[Access], offset: usize, checks: usize) -> u64 {
    let mut allowed = 0u64;
    let mut left = checks;
    let mut pos = offset % stream.len();
    while left > 0 {
        let n = left.min(stream.len() - pos);
        for a in &stream[pos..pos + n] {
            allowed += u64::from(c.check(a));
        }
        left -= n;
        pos = 0;
    }
    allowed
}

fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, exclusively borrowed timespec that lives
    // across the call; clock_gettime only writes into it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(u64::try_from(ts.tv_sec).unwrap_or(0), u32::try_from(ts.tv_nsec).unwrap_or(0))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

// ---- The bench's key derivation (crates/bench/src/setup.rs, rng.rs) ----

/// SplitMix64, as the bench's `Rng`.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next_u64() % n as u64) as usize
    }

    fn chance(&mut self, num: u64, den: u64) -> bool {
        den != 0 && self.next_u64() % den < num
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

fn shuffled_stream(keys: &[Access], len: usize, rng: &mut Rng) -> Vec<Access> {
    let mut stream = Vec::with_capacity(len);
    while stream.len() < len && !keys.is_empty() {
        let take = (len - stream.len()).min(keys.len());
        let mut pass = keys.to_vec();
        rng.shuffle(&mut pass);
        stream.extend_from_slice(&pass[..take]);
    }
    stream
}

fn mapping_for(policy: &Policy) -> Result<Mapping, Box<dyn Error>> {
    let classes: Vec<(String, Vec<String>)> = (0..policy.classes.len())
        .filter_map(|i| {
            let id = ClassId(u32::try_from(i + 1).ok()?);
            let name = policy.class_name(id).to_owned();
            let perms = policy.perm_names(id).into_iter().flatten().map(str::to_owned).collect();
            (!name.is_empty()).then_some((name, perms))
        })
        .collect();
    let perm_refs: Vec<Vec<&str>> = classes.iter().map(|(_, p)| p.iter().map(String::as_str).collect()).collect();
    let decl: Vec<(&str, &[&str])> =
        classes.iter().zip(&perm_refs).map(|((name, _), perms)| (name.as_str(), perms.as_slice())).collect();
    Ok(Mapping::new(&decl)?)
}

#[derive(Clone, Copy)]
struct RawKey {
    s: usize,
    t: usize,
    class: ClassIdx,
    perms: Perms,
}

#[derive(Default)]
struct Contexts {
    list: Vec<String>,
    index: HashMap<String, usize>,
    subject_of: HashMap<u32, Option<usize>>,
    object_of: HashMap<u32, Option<usize>>,
}

impl Contexts {
    fn add(&mut self, context: String) -> usize {
        if let Some(&i) = self.index.get(&context) {
            return i;
        }
        let i = self.list.len();
        self.index.insert(context.clone(), i);
        self.list.push(context);
        i
    }

    fn add_valid(&mut self, policy: &Policy, context: &str) -> Option<usize> {
        policy.parse_context(context).ok()?;
        Some(self.add(context.to_owned()))
    }

    fn subject(&mut self, policy: &Policy, t: TypeId) -> Option<usize> {
        if let Some(&c) = self.subject_of.get(&t.0) {
            return c;
        }
        let name = policy.type_name(t).to_owned();
        let level = level(policy);
        let mut roles: Vec<usize> = (0..policy.roles.len())
            .filter(|&r| policy.roles[r].name != "object_r" && policy.roles[r].types.contains(t.bit()))
            .collect();
        roles.sort_by_key(|&r| policy.roles[r].name != "system_r");
        let mut found = None;
        'roles: for r in roles.into_iter().take(4) {
            let mut users: Vec<usize> =
                (0..policy.users.len()).filter(|&u| policy.users[u].roles.contains(r as u32)).collect();
            users.sort_by_key(|&u| policy.users[u].name != "system_u");
            for u in users.into_iter().take(3) {
                let ctx = format!("{}:{}:{name}{level}", policy.users[u].name, policy.roles[r].name);
                if let Some(i) = self.add_valid(policy, &ctx) {
                    found = Some(i);
                    break 'roles;
                }
            }
        }
        let found = found.or_else(|| self.object(policy, t));
        self.subject_of.insert(t.0, found);
        found
    }

    fn object(&mut self, policy: &Policy, t: TypeId) -> Option<usize> {
        if let Some(&c) = self.object_of.get(&t.0) {
            return c;
        }
        let ctx = format!("system_u:object_r:{}{}", policy.type_name(t), level(policy));
        let found = self.add_valid(policy, &ctx);
        self.object_of.insert(t.0, found);
        found
    }
}

fn level(policy: &Policy) -> &'static str {
    if policy.mls {
        ":s0"
    } else {
        ""
    }
}

fn derive_keys(
    policy: &Policy,
    mapping: &Mapping,
    contexts: &mut Contexts,
    rng: &mut Rng,
    wanted: usize,
) -> Vec<RawKey> {
    let rules: Vec<_> =
        policy.avtab.iter().filter(|r| r.kind == avtab_kind::ALLOWED && r.cond == RuleCond::Always).collect();
    let mut members: HashMap<u32, Vec<TypeId>> = HashMap::new();
    let mut member = |t: TypeId, rng: &mut Rng| -> Option<TypeId> {
        let list = members.entry(t.0).or_insert_with(|| {
            let Some(set) = policy.attr_types.get(t.index()) else { return Vec::new() };
            set.iter()
                .map(|bit| TypeId(bit + 1))
                .filter(|m| policy.types.get(m.index()).is_some_and(|d| !d.attribute && !d.name.is_empty()))
                .collect()
        });
        list.get(rng.below(list.len())).copied()
    };
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(wanted);
    let attempts = wanted.saturating_mul(40).max(1000);
    for _ in 0..attempts {
        if out.len() >= wanted || rules.is_empty() {
            break;
        }
        let rule = rules[rng.below(rules.len())];
        let (Some(st), Some(tt)) = (member(rule.source, rng), member(rule.target, rng)) else { continue };
        let class_name = policy.class_name(rule.class);
        let Some(class) = mapping.class(class_name) else { continue };
        let names = policy.perm_names(rule.class);
        let granted: Vec<&str> =
            names.iter().enumerate().filter(|(bit, _)| rule.data & (1 << bit) != 0).filter_map(|(_, n)| *n).collect();
        let any: Vec<&str> = names.iter().filter_map(|n| *n).collect();
        let pool = if rng.chance(9, 10) && !granted.is_empty() { &granted } else { &any };
        let Some(&perm) = pool.get(rng.below(pool.len())) else { continue };
        let Some(perms) = mapping.perms(class, &[perm]) else { continue };
        let (Some(s), Some(t)) = (contexts.subject(policy, st), contexts.object(policy, tt)) else { continue };
        if seen.insert((s, t, class)) {
            out.push(RawKey { s, t, class, perms });
        }
    }
    out
}
