//! What every workload runs on: a realistic key stream derived from the
//! policy, the accesses of the system-call workloads, and one instance of
//! each variant.
//!
//! Why derive keys from the policy: a cache benchmark over made-up keys
//! measures made-up hit rates. Here each key comes from an `allow` rule
//! of the policy, with a concrete type drawn for each attribute and a
//! valid context built for each type, so the (source, target, class)
//! triples and their spread are those a system running the policy checks;
//! one request in ten asks for a permission the rule may not grant, so
//! both answers occur.
//!
//! Every AVC here (the reference behind the baselines, Rampart's, the
//! revalidating one) interns the same contexts in the same order, so a SID
//! means the same context in all of them (checked).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use rampart_avc::{Avc, AvcConfig, ClassIdx, Mapping, NullSink, Perms, Sid};
use rampart_policy::{avtab_kind, ClassId, Policy, RuleCond, TypeId};

use crate::error::BenchError;
use crate::rng::Rng;
use crate::variants::{self, key, KeyMap, SecurityServer, Variants};

/// Seed of the key stream: the same keys in every run.
pub const SEED: u64 = 0x5e1f_2026_0004;

/// One check: who, on what, which class, which permissions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    pub ssid: Sid,
    pub tsid: Sid,
    pub class: ClassIdx,
    pub perms: Perms,
}

/// The checks of the system-call workloads, with their names for the
/// report.
#[derive(Clone, Debug)]
pub struct Syscalls {
    /// rcutest: write(2) to a file on tmpfs.
    pub tmpfs_write: Access,
    /// lmbench: read(2) of /dev/zero.
    pub dev_read: Access,
    /// lmbench: write(2) to /dev/null.
    pub dev_write: Access,
    /// chat room: sending on a socket.
    pub sock_send: Access,
    /// chat room: receiving on it.
    pub sock_recv: Access,
}

/// Everything the workloads share.
pub struct Bench {
    pub policy_path: PathBuf,
    pub policy: Arc<Policy>,
    pub mapping: Mapping,
    /// Interned in this order in every AVC: SID `i` is `contexts[i]`.
    pub contexts: Vec<String>,
    /// Distinct (source, target, class) keys, each with the permissions
    /// its requests ask for.
    pub keys: Vec<Access>,
    /// The shuffled stream of the hit workload (each key about equally
    /// often).
    pub stream: Vec<Access>,
    pub syscalls: Syscalls,
    /// Human-readable form of each syscall access, for the report.
    pub syscall_labels: Vec<(&'static str, String)>,
    pub variants: Variants,
}

impl Bench {
    /// Derives `keys` distinct keys (fewer if the policy has fewer) and a
    /// stream of `stream_len` checks, and builds every variant.
    pub fn new(policy_path: PathBuf, policy: Arc<Policy>, keys: usize, stream_len: usize) -> Result<Bench, BenchError> {
        let mapping = mapping_for(&policy)?;
        let mut rng = Rng::new(SEED);
        let mut contexts = Contexts::default();
        let derived = derive_keys(&policy, &mapping, &mut contexts, &mut rng, keys.max(1));
        if derived.is_empty() {
            return Err(BenchError::Policy("no allow rule gave a valid (source, target, class) key".into()));
        }
        let wanted = preferred_syscalls(&policy, &mapping, &mut contexts);

        let reference = Arc::new(new_avc(&policy, &mapping, &contexts.list)?);
        let sids = intern_all(&reference, &contexts.list, None)?;
        let to_access = |k: &RawKey| Access { ssid: sids[k.s], tsid: sids[k.t], class: k.class, perms: k.perms };
        let keys: Vec<Access> = derived.iter().map(to_access).collect();

        let pick = |want: &Option<RawKey>, class: &str, perm: &str| -> Result<Access, BenchError> {
            if let Some(a) = want.as_ref().map(to_access) {
                if variants::passing(&reference, a.ssid, a.tsid, a.class).contains(a.perms) {
                    return Ok(a);
                }
            }
            fallback(&reference, &mapping, &keys, class, perm)
        };
        let syscalls = Syscalls {
            tmpfs_write: pick(&wanted.tmpfs_write, "file", "write")?,
            dev_read: pick(&wanted.dev_read, "chr_file", "read")?,
            dev_write: pick(&wanted.dev_write, "chr_file", "write")?,
            sock_send: pick(&wanted.sock_send, "tcp_socket", "write")?,
            sock_recv: pick(&wanted.sock_recv, "tcp_socket", "read")?,
        };
        let describe = |a: &Access| {
            let ctx = |s: Sid| contexts.list.get(s.as_u32() as usize).map_or("?", String::as_str);
            let class = mapping.class_name(a.class).unwrap_or("?");
            let perms = mapping.perm_names(a.class, a.perms).join(" ");
            format!("{} -> {} {class} {{ {perms} }}", ctx(a.ssid), ctx(a.tsid))
        };
        let syscall_labels = vec![
            ("rcutest write", describe(&syscalls.tmpfs_write)),
            ("read /dev/zero", describe(&syscalls.dev_read)),
            ("write /dev/null", describe(&syscalls.dev_write)),
            ("chat send", describe(&syscalls.sock_send)),
            ("chat receive", describe(&syscalls.sock_recv)),
        ];

        let stream = shuffled_stream(&keys, stream_len, &mut rng);

        // The decisions every prebuilt map starts from.
        let mut table = KeyMap::default();
        let all = keys.iter().chain([
            &syscalls.tmpfs_write,
            &syscalls.dev_read,
            &syscalls.dev_write,
            &syscalls.sock_send,
            &syscalls.sock_recv,
        ]);
        for a in all {
            table
                .entry(key(a.ssid, a.tsid, a.class))
                .or_insert_with(|| variants::passing(&reference, a.ssid, a.tsid, a.class));
        }

        let rampart = new_avc(&policy, &mapping, &contexts.list)?;
        intern_all(&rampart, &contexts.list, Some(&sids))?;
        let full = new_avc(&policy, &mapping, &contexts.list)?;
        intern_all(&full, &contexts.list, Some(&sids))?;
        let variants = Variants::new(SecurityServer::new(reference), table, rampart, full);

        Ok(Bench {
            policy_path,
            policy,
            mapping,
            contexts: contexts.list,
            keys,
            stream,
            syscalls,
            syscall_labels,
            variants,
        })
    }

    /// A stream of `len` checks over the first `n` keys only, each about
    /// equally often, shuffled (for the working-set sweep).
    pub fn stream_over(&self, n: usize, len: usize) -> Vec<Access> {
        let keys = &self.keys[..n.clamp(1, self.keys.len())];
        shuffled_stream(keys, len, &mut Rng::new(SEED ^ n as u64))
    }

    /// Distinct contexts in the keys.
    pub fn distinct_contexts(&self) -> usize {
        let mut seen = HashSet::new();
        for k in &self.keys {
            seen.insert(k.ssid);
            seen.insert(k.tsid);
        }
        seen.len()
    }

    /// Distinct classes in the keys.
    pub fn distinct_classes(&self) -> usize {
        self.keys.iter().map(|k| k.class).collect::<HashSet<_>>().len()
    }
}

/// `len` checks: `keys` in shuffled passes, so every key occurs about
/// equally often and in no fixed order.
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

/// An AVC over `policy` with the default configuration (enforcing,
/// default booleans, default cache sizes: what a user gets).
fn new_avc(policy: &Arc<Policy>, mapping: &Mapping, _contexts: &[String]) -> Result<Avc, BenchError> {
    Ok(Avc::new(AvcConfig::new(Arc::clone(policy), mapping.clone(), Arc::new(NullSink)))?)
}

/// Interns `contexts` in order; with `expect`, checks the SIDs are those.
fn intern_all(avc: &Avc, contexts: &[String], expect: Option<&[Sid]>) -> Result<Vec<Sid>, BenchError> {
    let sids = contexts.iter().map(|c| avc.intern(c)).collect::<Result<Vec<Sid>, _>>()?;
    if expect.is_some_and(|e| e != sids.as_slice()) {
        return Err(BenchError::Workload("two AVCs gave different SIDs to the same contexts".into()));
    }
    Ok(sids)
}

/// Every class of the policy, with its permissions in bit order: the
/// mapping a caller checking anything the policy knows would declare.
fn mapping_for(policy: &Policy) -> Result<Mapping, BenchError> {
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

/// A key by context index, before interning.
#[derive(Clone, Copy, Debug)]
struct RawKey {
    s: usize,
    t: usize,
    class: ClassIdx,
    perms: Perms,
}

/// Context strings in interning order.
#[derive(Default)]
struct Contexts {
    list: Vec<String>,
    index: HashMap<String, usize>,
    /// Per type value: its subject context, its object context.
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

    /// `context` if the policy accepts it.
    fn add_valid(&mut self, policy: &Policy, context: &str) -> Option<usize> {
        policy.parse_context(context).ok()?;
        Some(self.add(context.to_owned()))
    }

    /// A valid context for type `t` acting as a subject: a role that may
    /// have it and a user that may have that role (system ones first),
    /// else the object form.
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

    /// `system_u:object_r:TYPE[:s0]`, if valid.
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

/// Draws keys from the unconditional `allow` rules until `wanted` distinct
/// (source context, target context, class) triples are found or the
/// attempts run out.
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

/// The accesses the system-call workloads would check on a Debian
/// system: an unconfined shell writing a tmpfs file, reading /dev/zero,
/// writing /dev/null, talking over a TCP socket it created.
struct Wanted {
    tmpfs_write: Option<RawKey>,
    dev_read: Option<RawKey>,
    dev_write: Option<RawKey>,
    sock_send: Option<RawKey>,
    sock_recv: Option<RawKey>,
}

fn preferred_syscalls(policy: &Policy, mapping: &Mapping, contexts: &mut Contexts) -> Wanted {
    let level = if policy.mls { ":s0-s0:c0.c1023" } else { "" };
    let subject = contexts.add_valid(policy, &format!("unconfined_u:unconfined_r:unconfined_t{level}"));
    let mut raw = |object: Option<&str>, class: &str, perm: &str| -> Option<RawKey> {
        let s = subject?;
        let t = match object {
            Some(o) => contexts.add_valid(policy, &format!("system_u:object_r:{o}{}", self::level(policy)))?,
            None => s,
        };
        let class = mapping.class(class)?;
        Some(RawKey { s, t, class, perms: mapping.perms(class, &[perm])? })
    };
    Wanted {
        tmpfs_write: raw(Some("tmpfs_t"), "file", "write"),
        dev_read: raw(Some("zero_device_t"), "chr_file", "read"),
        dev_write: raw(Some("null_device_t"), "chr_file", "write"),
        sock_send: raw(None, "tcp_socket", "write"),
        sock_recv: raw(None, "tcp_socket", "read"),
    }
}

/// For a policy without the preferred labels: the first derived key of
/// `class` granting `perm`, else the first key granted at all (the
/// workload measures the cost of a check, not which label it names).
fn fallback(
    reference: &Avc,
    mapping: &Mapping,
    keys: &[Access],
    class: &str,
    perm: &str,
) -> Result<Access, BenchError> {
    let passes = |a: &Access| variants::passing(reference, a.ssid, a.tsid, a.class).contains(a.perms);
    if let Some(c) = mapping.class(class) {
        if let Some(p) = mapping.perms(c, &[perm]) {
            let found = keys.iter().map(|k| Access { perms: p, ..*k }).find(|a| a.class == c && passes(a));
            if let Some(a) = found {
                return Ok(a);
            }
        }
    }
    keys.iter()
        .find(|a| passes(a))
        .copied()
        .ok_or_else(|| BenchError::Policy("no derived key is granted; the workloads need one".into()))
}
