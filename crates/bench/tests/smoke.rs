//! The benchmarks at their smallest size: every workload and variant
//! runs, the JSON carries every required key, the docs section and charts
//! are written where asked, and every variant answers exactly as Rampart
//! does (so the comparison is fair). No test here asserts a timing.
//!
//! Needs the system policy (`scripts/install-deps.sh` installs it): the
//! tests are `#[ignore]`d, and run without it they fail saying so.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::path::PathBuf;
use std::sync::Arc;

use rampart_avc::{Object, Subject};
use rampart_bench::variants::{Checker, OpenCheck, ThreadCheck, Visit};
use rampart_bench::{Access, Bench, Params, Size, VariantId};
use rampart_policy::Policy;
use serde_json::Value;

/// The system policy; fails the test if it is not installed.
fn system_policy() -> (PathBuf, Arc<Policy>) {
    let path = match rampart_policy::default_policy_path() {
        Ok(p) if p.exists() => p,
        Ok(p) => panic!(
            "missing prerequisite: the system policy at {} (selinux-policy-default); \
             install it with scripts/install-deps.sh",
            p.display()
        ),
        Err(e) => panic!("missing prerequisite: the system policy ({e}); install it with scripts/install-deps.sh"),
    };
    let policy = Policy::from_file(&path).unwrap();
    (path, Arc::new(policy))
}

/// Each variant's answers for a list of accesses, from two threads'
/// checkers, and for the system-call accesses through `open`.
struct Answers<'a> {
    accesses: &'a [Access],
    opens: &'a [Access],
}

impl Visit for Answers<'_> {
    type Out = (Vec<bool>, Vec<bool>, Vec<bool>);
    fn visit<C: Checker>(&mut self, _id: VariantId, checker: &C) -> Self::Out {
        let mut first = checker.thread(0);
        let a: Vec<bool> = self.accesses.iter().map(|x| first.check(x.ssid, x.tsid, x.class, x.perms)).collect();
        // Per-thread variants keep separate state per index: ask another.
        let mut second = checker.thread(1);
        let b: Vec<bool> = self.accesses.iter().map(|x| second.check(x.ssid, x.tsid, x.class, x.perms)).collect();
        let opened: Vec<bool> = self
            .opens
            .iter()
            .map(|x| {
                let subject = Subject::new(x.ssid);
                let object = Object::new(x.tsid);
                let mut open = checker.open(0, &subject, &object, x.class, x.perms).unwrap();
                open.permission() && open.permission()
            })
            .collect();
        (a, b, opened)
    }
}

#[test]
#[ignore = "needs the system policy"]
fn every_variant_answers_as_rampart_does() {
    let (path, policy) = system_policy();
    let bench = Bench::new(path, policy, 1500, 6000).unwrap();
    // The keys and the stream (which repeats them in another order, so
    // cached answers are compared too).
    let accesses: Vec<Access> = bench.keys.iter().chain(&bench.stream).copied().collect();
    let s = &bench.syscalls;
    let opens = [s.tmpfs_write, s.dev_read, s.dev_write, s.sock_send, s.sock_recv];
    let mut visit = Answers { accesses: &accesses, opens: &opens };
    let (expected, expected_b, expected_open) = bench.variants.visit(VariantId::Rampart, &mut visit);
    assert_eq!(expected, expected_b, "rampart answers differently in another thread");
    let denied = expected.iter().filter(|a| !**a).count();
    assert!(denied > 0 && denied < expected.len(), "the stream must hold both answers ({denied} denied)");
    assert!(expected_open.iter().all(|a| *a), "the system-call accesses must be granted");
    for id in VariantId::ALL {
        if id == VariantId::None {
            continue; // checks nothing by definition
        }
        let (a, b, opened) = bench.variants.visit(id, &mut visit);
        for (i, (got, want)) in a.iter().zip(&expected).enumerate() {
            assert_eq!(got, want, "{} disagrees with rampart on access {i}: {:?}", id.name(), accesses[i]);
        }
        assert_eq!(b, expected, "{} (second thread) disagrees with rampart", id.name());
        assert_eq!(opened, expected_open, "{} disagrees on the open objects", id.name());
    }
}

#[test]
#[ignore = "needs the system policy"]
fn keys_come_from_the_policy_and_are_distinct() {
    let (path, policy) = system_policy();
    let bench = Bench::new(path, policy, 400, 1000).unwrap();
    assert_eq!(bench.keys.len(), 400);
    let mut seen = std::collections::HashSet::new();
    for k in &bench.keys {
        assert!(seen.insert((k.ssid, k.tsid, k.class)), "duplicate key {k:?}");
        assert!(!k.perms.is_empty());
    }
    assert_eq!(bench.stream.len(), 1000);
    assert!(bench.distinct_contexts() > 50 && bench.distinct_classes() > 5);
    // Deterministic: the same keys in every run.
    let (path, policy) = system_policy();
    let again = Bench::new(path, policy, 400, 1000).unwrap();
    assert_eq!(again.keys, bench.keys);
    assert_eq!(again.stream, bench.stream);
}

fn smoke_json() -> (rampart_bench::Report, Value) {
    let (path, policy) = system_policy();
    let params = Params::for_size(Size::Smoke);
    let report = rampart_bench::run(path, policy, Size::Smoke, &params, &mut |_| {}).unwrap();
    let json = report.to_json();
    (report, json)
}

/// `obj[key]` as an object with a number under each of `fields`.
fn has_numbers(obj: &Value, key: &str, fields: &[&str]) {
    let v = &obj[key];
    for f in fields {
        assert!(v[f].is_number(), "{key}.{f} is not a number: {v}");
    }
}

#[test]
#[ignore = "needs the system policy"]
fn smoke_json_has_every_key_and_variant() {
    let (_, json) = smoke_json();
    for id in VariantId::ALL {
        let name = id.name();
        if id.in_hits() {
            has_numbers(&json["hit_ns"], name, &["1", "2"]);
            has_numbers(&json["hit_wall_ns"], name, &["1", "2"]);
        }
        if id.in_files() {
            has_numbers(&json["rcutest_s"], name, &["1", "2"]);
            has_numbers(&json["rw_overhead_pct"], name, &["read", "write"]);
            has_numbers(&json["rw_ns"], name, &["read", "write"]);
        }
        if id.in_chat() {
            assert!(json["chatroom_msgs_per_s"][name].is_number(), "chatroom_msgs_per_s.{name}");
        }
    }
    // The required variants are all there.
    for name in [
        "none",
        "global_mutex",
        "rwlock",
        "shared_counter",
        "kref",
        "percpu_ref",
        "module_refcount",
        "unsync_hashmap",
        "rampart",
    ] {
        assert!(json["hit_ns"][name].is_object(), "hit_ns.{name}");
        assert!(json["chatroom_msgs_per_s"][name].is_number(), "chatroom_msgs_per_s.{name}");
    }
    assert!(json["rcutest_s"]["full_revalidate"].is_object());
    assert!(json["rw_overhead_pct"]["full_revalidate"].is_object());
    let meta = &json["metadata"];
    assert!(meta["policy"].as_str().is_some_and(|p| !p.is_empty()));
    assert!(meta["date"].as_str().is_some_and(|d| d.len() == 10));
    assert!(meta["nproc"].as_u64().is_some_and(|n| n >= 1));
    assert_eq!(meta["quick"], Value::Bool(false));
    assert_eq!(meta["size"], "smoke");
    let mem = &json["memory"]["rampart"];
    let rows = mem["per_thread"].as_array().unwrap();
    assert!(!rows.is_empty());
    for r in rows {
        for f in ["bytes", "lookups", "hits", "misses"] {
            assert!(r[f].is_u64(), "memory row {f}: {r}");
        }
    }
    assert!(mem["total_bytes"].as_u64().is_some_and(|b| b > 0));
    let targets = json["targets"].as_array().unwrap();
    assert!(targets.len() >= 7);
    // The hit workload ran every check it was asked for (no thread gave up).
    let lookups: u64 = rows.iter().map(|r| r["lookups"].as_u64().unwrap()).sum();
    assert!(lookups >= Params::for_size(Size::Smoke).hit_checks as u64 * 3);
}

#[test]
#[ignore = "needs the system policy"]
fn docs_section_replaced_and_charts_written() {
    let (report, _) = smoke_json();
    let dir = std::env::temp_dir().join(format!("rampart-bench-docs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("benchmarks.md");
    let before = format!(
        "# Benchmarks\n\n## Policy engine\nkept text\n\n{}\nold figures\n{}\n\n## After\nalso kept\n\n{}\nold apparmor\n{}\n\n## Last\n",
        rampart_bench::docs::BEGIN,
        rampart_bench::docs::END,
        rampart_bench::docs::APPARMOR_BEGIN,
        rampart_bench::docs::APPARMOR_END
    );
    std::fs::write(&out, &before).unwrap();
    let written = rampart_bench::docs::write(&report, &out, "target/release/rampart bench seeds --smoke").unwrap();
    let after = std::fs::read_to_string(&out).unwrap();
    assert!(
        after.starts_with("# Benchmarks\n\n## Policy engine\nkept text\n\n<!-- seeds:begin -->\n## Seed experiments")
    );
    assert!(after.contains("<!-- seeds:end -->\n\n## After\nalso kept\n\n<!-- seeds-apparmor:begin -->\n## Seed 003"));
    assert!(after.ends_with("<!-- seeds-apparmor:end -->\n\n## Last\n"));
    assert!(!after.contains("old figures") && !after.contains("old apparmor"));
    assert!(after.contains("rampart bench seeds --smoke"));
    assert_eq!(after.matches(rampart_bench::docs::BEGIN).count(), 1);
    for png in ["seeds_hits.png", "seeds_rcutest.png", "seeds_rw.png", "seeds_chatroom.png"] {
        let path = dir.join("img").join(png);
        assert!(written.contains(&path), "{png} not reported as written");
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 5000, "{png} is not a drawn PNG");
        assert!(after.contains(&format!("(img/{png})")), "{png} not linked");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--workloads apparmor`: only that workload runs, and only its section
/// of the document is replaced (the other seeds' figures are kept), with
/// its chart and none of the other workloads'.
#[test]
#[ignore = "needs the system policy, apparmor_parser and apparmor-profiles"]
fn the_apparmor_workload_alone_writes_only_its_section() {
    let (path, policy) = system_policy();
    assert!(
        std::path::Path::new(rampart_bench::apparmor::profile::SOURCE).exists(),
        "needs apparmor-profiles: install it with scripts/install-deps.sh"
    );
    let params = Params::for_size(Size::Smoke).with_workloads(&[rampart_bench::Workload::Apparmor]);
    let report = rampart_bench::run(path, policy, Size::Smoke, &params, &mut |_| {}).unwrap();
    assert!(report.hits.is_empty() && report.rcutest.is_empty() && report.rw.is_empty() && report.chat.is_empty());
    assert!(!report.ran_seeds() && report.apparmor.is_some());
    assert_eq!(report.targets().len(), 3, "only the AppArmor targets");
    let dir = std::env::temp_dir().join(format!("rampart-bench-aa-docs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("benchmarks.md");
    let seeds = format!("{}\nseed figures\n{}", rampart_bench::docs::BEGIN, rampart_bench::docs::END);
    std::fs::write(&out, format!("# B\n\n{seeds}\n")).unwrap();
    let written = rampart_bench::docs::write(&report, &out, "rampart bench seeds --workloads apparmor").unwrap();
    let chart = dir.join("img").join(rampart_bench::apparmor::report::CHART);
    assert_eq!(written, vec![chart.clone(), out.clone()], "its own chart only, none of the seed workloads'");
    let after = std::fs::read_to_string(&out).unwrap();
    assert!(after.starts_with(&format!("# B\n\n{seeds}\n\n{}\n## Seed 003", rampart_bench::docs::APPARMOR_BEGIN)));
    assert!(after.contains(&format!("(img/{})", rampart_bench::apparmor::report::CHART)), "{after}");
    assert!(!report.text("x").contains("## Seed experiments"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--threads` beyond 2: every scaling workload runs at each count, and
/// the report gains its by-threads table (1 and 2 always run).
#[test]
#[ignore = "needs the system policy"]
fn smoke_at_three_thread_counts() {
    let (path, policy) = system_policy();
    let params = Params::for_size(Size::Smoke).with_threads(&[4]);
    assert_eq!(params.threads, [1, 2, 4]);
    let report = rampart_bench::run(path, policy, Size::Smoke, &params, &mut |_| {}).unwrap();
    let json = report.to_json();
    has_numbers(&json["hit_ns"], "rampart", &["1", "2", "4"]);
    has_numbers(&json["rcutest_s"], "rampart", &["1", "2", "4"]);
    let md = report.markdown("cmd", None);
    assert!(md.contains("### Scaling with threads"), "{md}");
    assert!(md.contains("| variant, workload | 1 thread | 2 threads | 4 threads |"), "{md}");
}
