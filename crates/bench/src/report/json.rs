//! The `--json` object of `rampart bench seeds`, as types.
//!
//! Why types: the keys and the types of their values are a contract with
//! the scripts and tests that read the report, and a struct states that
//! contract in one place (a field is a key, in the order written), where
//! `json!` literals spread it over the builders. A figure that could not
//! be measured, or is not finite, is `null`.

use std::collections::BTreeMap;

use rampart_avc::L1_ENTRY_BYTES;
use serde::Serialize;
use serde_json::{json, Value};

use super::{ratio, Memory, Report};
use crate::apparmor::report::{AppArmorJson, AppArmorRun};
use crate::goal::Unit;
use crate::params::Size;
use crate::stats::Samples;
use crate::variants::VariantId;
use crate::workloads::rw::ReadWrite;

impl Memory {
    fn json(&self) -> MemoryJson {
        let per_thread = self
            .rows
            .iter()
            .enumerate()
            .map(|(thread, r)| ThreadMemory {
                thread,
                bytes: self.per_thread_bytes(),
                lookups: r.lookups,
                hits: r.hits,
                misses: r.misses,
                allocations: r.allocations,
                reclaims: r.reclaims,
                frees: r.frees,
            })
            .collect();
        MemoryJson {
            how: "estimated from the AVC's configuration and statistics; entry sizes as documented in rampart-avc, \
                  allocator overhead excluded",
            l1_entries_per_thread: self.l1_entries,
            l1_slot_bytes: L1_ENTRY_BYTES,
            per_thread_bytes: self.per_thread_bytes(),
            per_thread,
            threads: self.rows.len(),
            l2_threshold: self.l2_threshold,
            l2_entries: self.l2_entries,
            l2_bytes: self.l2_bytes(),
            sid_table_bytes: self.sid_bytes,
            total_bytes: self.total_bytes(),
        }
    }
}

impl Report {
    /// The JSON object of `--json` (see [`ReportJson`]).
    pub fn json(&self) -> ReportJson<'_> {
        let threads = &self.params.threads;
        let by_threads =
            |f: &dyn Fn(usize) -> Option<f64>| -> ByThreads { threads.iter().map(|&t| (t, f(t))).collect() };
        let hit_scaling = |v| {
            let cost = ratio(self.hit_ns(v, 2), self.hit_ns(v, 1));
            HitScaling { cost_2_over_1: cost, throughput_2_over_1: cost.filter(|c| *c > 0.0).map(|c| 2.0 / c) }
        };
        let by_keys = |(&n, variants): (&usize, &BTreeMap<VariantId, Vec<f64>>)| {
            let by_variant = variants.keys().map(|&v| (v.name(), self.hit_ns_by_keys(n, v))).collect();
            let over =
                ratio(self.hit_ns_by_keys(n, VariantId::Rampart), self.hit_ns_by_keys(n, VariantId::UnsyncHashmap));
            (n, KeysJson { by_variant, rampart_over_unsync_hashmap: over })
        };
        let rw = |f: Option<(f64, f64)>| ReadWriteJson { read: f.map(|x| x.0), write: f.map(|x| x.1) };
        let targets = self
            .targets()
            .into_iter()
            .map(|t| TargetJson {
                holds: t.holds(),
                unit: match t.unit {
                    Unit::Ratio => "x",
                    Unit::Percent => "%",
                },
                name: t.name,
                value: t.measured,
                limit: t.limit,
            })
            .collect();
        let hits = self.hits.keys();
        ReportJson {
            metadata: self.metadata_json(),
            hit_ns: hits.clone().map(|&v| (v.name(), by_threads(&|t| self.hit_ns(v, t)))).collect(),
            hit_scaling: hits.clone().map(|&v| (v.name(), hit_scaling(v))).collect(),
            hit_wall_ns: hits.clone().map(|&v| (v.name(), by_threads(&|t| self.hit_wall_ns(v, t)))).collect(),
            hit_on_cpu_share: hits.map(|&v| (v.name(), by_threads(&|t| self.hit_on_cpu(v, t)))).collect(),
            hit_ns_by_keys: self.hits_by_keys.iter().map(by_keys).collect(),
            rcutest_s: self.rcutest.keys().map(|&v| (v.name(), by_threads(&|t| self.rcutest_s(v, t)))).collect(),
            rcutest_overhead_pct: self
                .rcutest
                .keys()
                .map(|&v| (v.name(), by_threads(&|t| self.rcutest_overhead_pct(v, t))))
                .collect(),
            rw_ns: self.rw.keys().map(|&v| (v.name(), rw(self.rw_ns(v)))).collect(),
            rw_overhead_pct: self.rw.keys().map(|&v| (v.name(), rw(self.rw_overhead_pct(v)))).collect(),
            chatroom_msgs_per_s: self.chat.keys().map(|&v| (v.name(), self.chat_msgs_per_s(v))).collect(),
            chatroom_cpu_us_per_msg: self.chat.keys().map(|&v| (v.name(), self.chat_cpu_us(v))).collect(),
            memory: MemoryByImpl { rampart: self.memory.json() },
            targets,
            samples: self.samples_json(),
            apparmor: self.apparmor.as_ref().map(AppArmorRun::json),
            apparmor_skipped: self.apparmor_skipped.as_deref(),
        }
    }

    fn metadata_json(&self) -> Metadata<'_> {
        let p = &self.params;
        Metadata {
            policy: &self.policy,
            date: &self.date,
            nproc: self.nproc,
            quick: self.size == Size::Quick,
            size: self.size.name(),
            workloads: p.workloads.iter().map(|w| w.name()).collect(),
            keys: self.keys,
            contexts: self.contexts,
            classes: self.classes,
            stream_len: p.stream_len,
            hit_checks_per_thread: p.hit_checks,
            hit_rounds: p.hit_rounds,
            rcutest_writes_per_thread: p.rcutest_writes,
            rcutest_rounds: p.rcutest_rounds,
            rcutest_dir: &self.tmp_dir,
            rcutest_dir_is_tmpfs: self.tmp_is_tmpfs,
            rw_ops: p.rw_ops,
            rw_rounds: p.rw_rounds,
            chat_pairs: p.chat_pairs,
            chat_messages_per_pair: p.chat_messages,
            chat_limit_s: p.chat_limit.as_secs_f64(),
            chat_rounds: p.chat_rounds,
            chat_pairs_pinned_to_cpus: self.chat_pinned,
            hit_2t_on_cpu_median: self.hit_2t_on_cpu(),
            busy_warning: self.busy_warning(),
            // Collecting into a map keeps the last of a repeated name.
            syscall_accesses: self.syscall_labels.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect(),
            elapsed_s: self.elapsed_s,
            statistic: "median over interleaved rounds; overheads are medians of per-round ratios to none",
            hit_clock: &self.clock,
            rw_clock: &self.clock,
        }
    }

    fn samples_json(&self) -> SamplesJson<'_> {
        fn threads(m: &BTreeMap<VariantId, Samples>) -> BTreeMap<&'static str, &BTreeMap<usize, Vec<f64>>> {
            m.iter().map(|(v, s)| (v.name(), &s.per_threads)).collect()
        }
        let column = |rows: &[ReadWrite], f: fn(&ReadWrite) -> f64| rows.iter().map(f).collect::<Vec<f64>>();
        let rw = |(v, s): (&VariantId, &Vec<ReadWrite>)| {
            let base = self.rw_base.get(v).map_or(&[][..], Vec::as_slice);
            let samples = RwSamples {
                read: column(s, |r| r.read_ns),
                write: column(s, |r| r.write_ns),
                none_read: column(base, |r| r.read_ns),
                none_write: column(base, |r| r.write_ns),
            };
            (v.name(), samples)
        };
        SamplesJson {
            hit_ns: threads(&self.hits),
            rcutest_s: threads(&self.rcutest),
            rcutest_none_s_same_runs: threads(&self.rcutest_base),
            rw_ns: self.rw.iter().map(rw).collect(),
            chatroom_msgs_per_s: self.chat.iter().map(|(v, s)| (v.name(), s.as_slice())).collect(),
            chatroom_cpu_us_per_msg: self.chat_cpu.iter().map(|(v, s)| (v.name(), s.as_slice())).collect(),
        }
    }

    /// [`Report::json`] as a value, to index into.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.json()).unwrap_or_else(|e| json!({ "error": e.to_string() }))
    }

    /// [`Report::json`], pretty-printed.
    pub fn json_text(&self) -> String {
        serde_json::to_string_pretty(&self.json()).unwrap_or_else(|e| json!({ "error": e.to_string() }).to_string())
    }
}

/// A figure by thread count (`{"1": ..., "2": ...}`); `null` where it
/// could not be measured.
pub type ByThreads = BTreeMap<usize, Option<f64>>;

/// The JSON of `--json`: every field is a key, in this order. The keys
/// and their types are a contract with scripts that read the report;
/// maps by variant are keyed by [`VariantId::name`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReportJson<'a> {
    pub metadata: Metadata<'a>,
    pub hit_ns: BTreeMap<&'static str, ByThreads>,
    pub hit_scaling: BTreeMap<&'static str, HitScaling>,
    pub hit_wall_ns: BTreeMap<&'static str, ByThreads>,
    pub hit_on_cpu_share: BTreeMap<&'static str, ByThreads>,
    /// By number of distinct keys.
    pub hit_ns_by_keys: BTreeMap<usize, KeysJson>,
    pub rcutest_s: BTreeMap<&'static str, ByThreads>,
    pub rcutest_overhead_pct: BTreeMap<&'static str, ByThreads>,
    pub rw_ns: BTreeMap<&'static str, ReadWriteJson>,
    pub rw_overhead_pct: BTreeMap<&'static str, ReadWriteJson>,
    pub chatroom_msgs_per_s: BTreeMap<&'static str, Option<f64>>,
    pub chatroom_cpu_us_per_msg: BTreeMap<&'static str, Option<f64>>,
    pub memory: MemoryByImpl,
    pub targets: Vec<TargetJson>,
    pub samples: SamplesJson<'a>,
    /// The AppArmor workload (seed 003), if it ran...
    pub apparmor: Option<AppArmorJson<'a>>,
    /// ...or why it was skipped.
    pub apparmor_skipped: Option<&'a str>,
}

/// How the run was made (sizes, machine, clocks).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Metadata<'a> {
    pub policy: &'a str,
    pub date: &'a str,
    pub nproc: usize,
    pub quick: bool,
    pub size: &'static str,
    pub workloads: Vec<&'static str>,
    pub keys: usize,
    pub contexts: usize,
    pub classes: usize,
    pub stream_len: usize,
    pub hit_checks_per_thread: usize,
    pub hit_rounds: usize,
    pub rcutest_writes_per_thread: usize,
    pub rcutest_rounds: usize,
    pub rcutest_dir: &'a str,
    pub rcutest_dir_is_tmpfs: bool,
    pub rw_ops: usize,
    pub rw_rounds: usize,
    pub chat_pairs: usize,
    pub chat_messages_per_pair: usize,
    pub chat_limit_s: f64,
    pub chat_rounds: usize,
    pub chat_pairs_pinned_to_cpus: bool,
    pub hit_2t_on_cpu_median: Option<f64>,
    pub busy_warning: Option<String>,
    /// Workload name -> the access it checks.
    pub syscall_accesses: BTreeMap<&'a str, &'a str>,
    pub elapsed_s: f64,
    pub statistic: &'static str,
    pub hit_clock: &'a str,
    pub rw_clock: &'a str,
}

/// A variant's cost per check with 2 threads over 1, and the throughput
/// gain that means.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct HitScaling {
    pub cost_2_over_1: Option<f64>,
    pub throughput_2_over_1: Option<f64>,
}

/// One working-set size: each variant's ns per check, and Rampart's over
/// the unsynchronized hash map's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KeysJson {
    #[serde(flatten)]
    pub by_variant: BTreeMap<&'static str, Option<f64>>,
    pub rampart_over_unsync_hashmap: Option<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ReadWriteJson {
    pub read: Option<f64>,
    pub write: Option<f64>,
}

/// Memory by implementation (only Rampart's is estimated).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemoryByImpl {
    pub rampart: MemoryJson,
}

/// [`Memory`], with the sizes it implies.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemoryJson {
    pub how: &'static str,
    pub l1_entries_per_thread: usize,
    pub l1_slot_bytes: usize,
    pub per_thread_bytes: usize,
    pub per_thread: Vec<ThreadMemory>,
    pub threads: usize,
    pub l2_threshold: usize,
    pub l2_entries: u64,
    pub l2_bytes: usize,
    pub sid_table_bytes: usize,
    pub total_bytes: usize,
}

/// One thread slot's size and statistics row.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ThreadMemory {
    pub thread: usize,
    pub bytes: usize,
    pub lookups: u64,
    pub hits: u64,
    pub misses: u64,
    pub allocations: u64,
    pub reclaims: u64,
    pub frees: u64,
}

/// A target of issue 4 (see [`crate::goal::Goal`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TargetJson {
    pub name: String,
    pub value: Option<f64>,
    pub limit: f64,
    /// `"x"` (a ratio) or `"%"`.
    pub unit: &'static str,
    pub holds: Option<bool>,
}

/// Every sample the medians came from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SamplesJson<'a> {
    pub hit_ns: BTreeMap<&'static str, &'a BTreeMap<usize, Vec<f64>>>,
    pub rcutest_s: BTreeMap<&'static str, &'a BTreeMap<usize, Vec<f64>>>,
    pub rcutest_none_s_same_runs: BTreeMap<&'static str, &'a BTreeMap<usize, Vec<f64>>>,
    pub rw_ns: BTreeMap<&'static str, RwSamples>,
    pub chatroom_msgs_per_s: BTreeMap<&'static str, &'a [f64]>,
    pub chatroom_cpu_us_per_msg: BTreeMap<&'static str, &'a [f64]>,
}

/// Read and write ns per call, each run, through a variant and through
/// `none` in the same runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RwSamples {
    pub read: Vec<f64>,
    pub write: Vec<f64>,
    pub none_read: Vec<f64>,
    pub none_write: Vec<f64>,
}

/// The `--json` objects keep the keys (and, where the figures are fixed,
/// the kinds of value) that scripts read: a report's shape is compared
/// with the one its earlier implementation wrote (`json!` maps, before
/// the JSON came from types), recorded in tests/data.
#[cfg(test)]
pub(crate) mod contract {
    use std::collections::BTreeSet;
    use std::path::PathBuf;

    use serde_json::Value;

    /// Every node below the root as `.key.key` (`[]` for an array's
    /// elements), followed by its kind if `typed` (`int`, `float`, `string`,
    /// `bool`, `null`, `object`, `array`).
    fn shape(v: &Value, path: &str, typed: bool, out: &mut BTreeSet<String>) {
        let kind = match v {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Number(n) if n.is_f64() => "float",
            Value::Number(_) => "int",
            Value::String(_) => "string",
            Value::Array(items) => {
                items.iter().for_each(|x| shape(x, &format!("{path}[]"), typed, out));
                "array"
            }
            Value::Object(map) => {
                map.iter().for_each(|(k, x)| shape(x, &format!("{path}.{k}"), typed, out));
                "object"
            }
        };
        if !path.is_empty() {
            out.insert(if typed { format!("{path} {kind}") } else { path.to_string() });
        }
    }

    /// Compares `json`'s shape with the recorded one in tests/data/`file`.
    pub(crate) fn assert_shape(json: &Value, typed: bool, file: &str) {
        let mut got = BTreeSet::new();
        shape(json, "", typed, &mut got);
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let want: BTreeSet<String> = text.lines().filter(|l| !l.starts_with('#')).map(str::to_string).collect();
        let missing: Vec<_> = want.difference(&got).collect();
        let added: Vec<_> = got.difference(&want).collect();
        assert!(missing.is_empty() && added.is_empty(), "{file}: missing {missing:#?}\nnew {added:#?}");
    }

    #[test]
    #[ignore = "needs the system policy, apparmor_parser and apparmor-profiles (the .apparmor keys)"]
    fn seeds_json_keeps_its_keys() {
        let path = match rampart_policy::default_policy_path() {
            Ok(p) if p.exists() => p,
            other => {
                panic!("no system policy ({other:?}): install selinux-policy-default with scripts/install-deps.sh")
            }
        };
        let policy = std::sync::Arc::new(rampart_policy::Policy::from_file(&path).unwrap());
        let params = crate::Params::for_size(crate::Size::Smoke);
        let report = crate::run(path, policy, crate::Size::Smoke, &params, &mut |_| {}).unwrap();
        let json: Value = serde_json::from_str(&report.json_text()).unwrap();
        assert_shape(&json, false, "seeds_json_keys.txt");
    }
}
