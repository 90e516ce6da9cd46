//! The `--json` object of `rampart bench enforce`, as types.
//!
//! Why types: the keys and the types of their values are a contract with
//! the scripts and tests that read the report, and a struct states that
//! contract in one place (a field is a key, in the order written), where
//! `json!` literals spread it over the builders. A figure that could not
//! be measured, or is not finite, is `null`.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{json, Value};

use super::EnforceReport;
use crate::enforce::model::{Listener, Status, VariantResult, Workload};
use crate::enforce::workloads::Sample;

impl EnforceReport {
    /// Everything, for `--json` (see [`EnforceJson`]).
    pub fn json(&self) -> EnforceJson<'_> {
        let variants = self.variants.iter().map(|v| self.variant_json(v)).collect();
        let targets = self
            .targets()
            .into_iter()
            .map(|t| TargetJson {
                holds: t.holds(),
                name: t.name,
                measured: t.measured,
                limit: t.limit,
                compare: if t.at_most { "at_most" } else { "at_least" },
                missing: t.missing,
            })
            .collect();
        EnforceJson {
            benchmark: "enforce",
            date: &self.date,
            size: if self.quick { "quick" } else { "full" },
            rounds: self.rounds,
            measure_ms: self.measure_ms,
            files_per_thread: self.files_per_thread,
            clients: self.clients(),
            pin_cpu: self.pin_cpu,
            cpus: self.cpus,
            kernel: &self.kernel,
            policy: self.policy.display().to_string(),
            rampart: self.rampart.display().to_string(),
            load_average: LoadAverage { start: self.load_start, end: self.load_end },
            detached_tmpfs_in_namespace: &self.detached_tmpfs,
            variants,
            targets,
            listener_cpu: self.listener_cpu,
            pinned: self.pinned.as_ref().map(|p| Box::new(p.json())),
            split: self.split.as_ref().map(|p| Box::new(p.json())),
        }
    }

    fn variant_json<'a>(&self, v: &'a VariantResult) -> VariantJson<'a> {
        let l = v.listener;
        let medians = self
            .workloads
            .iter()
            .map(|&w| {
                let m = Medians {
                    per_op_ns: self.per_op_ns(l, w),
                    ops_per_s: self.ops_per_s(l, w),
                    added_ns_over_none: self.added_ns(l, w),
                };
                (w.name(), m)
            })
            .collect();
        let rounds = v
            .rounds
            .iter()
            .map(|r| RoundJson {
                round: r.round,
                ready_ms: r.ready_ms,
                samples: r.samples.iter().map(|(w, x)| (w.name(), *x)).collect(),
            })
            .collect();
        let (status, reason) = match &v.status {
            Status::Ran => ("ran", None),
            Status::Skipped(why) => ("skipped", Some(why.as_str())),
            Status::Failed(why) => ("failed", Some(why.as_str())),
        };
        VariantJson {
            name: l.name(),
            description: l.describe(),
            status,
            reason,
            marks: v.marks.as_deref(),
            ready_ms: self.ready_ms(l),
            medians,
            scaling_2t_over_1t: ByWorkload {
                open: self.scaling(l, Workload::Open(2), Workload::Open(1)),
                first_touch: self.scaling(l, Workload::FirstTouch(2), Workload::FirstTouch(1)),
            },
            scaling_over_1_client: ByWorkload {
                open: self.scaling_by_clients(l, Workload::Open),
                first_touch: self.scaling_by_clients(l, Workload::FirstTouch),
            },
            rounds,
        }
    }

    /// [`EnforceReport::json`] as a value, to index into.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.json()).unwrap_or_else(|e| json!({ "error": e.to_string() }))
    }

    /// [`EnforceReport::json`], pretty-printed.
    pub fn json_text(&self) -> String {
        serde_json::to_string_pretty(&self.json()).unwrap_or_else(|e| json!({ "error": e.to_string() }).to_string())
    }

    /// For each client count N beyond 1, `workload(N)`'s throughput over
    /// `workload(1)`'s (medians of per-round ratios), by N.
    fn scaling_by_clients(&self, l: Listener, workload: fn(usize) -> Workload) -> BTreeMap<usize, Option<f64>> {
        self.clients().into_iter().filter(|&n| n > 1).map(|n| (n, self.scaling(l, workload(n), workload(1)))).collect()
    }
}

/// The JSON of `--json`: every field is a key, in this order. The keys
/// and their types are a contract with scripts that read the report;
/// `null` stands for a figure that could not be measured (and for a
/// non-finite one).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EnforceJson<'a> {
    /// Always `"enforce"`.
    pub benchmark: &'static str,
    pub date: &'a str,
    /// `"quick"` or `"full"`.
    pub size: &'static str,
    pub rounds: usize,
    pub measure_ms: u64,
    pub files_per_thread: usize,
    pub clients: Vec<usize>,
    pub pin_cpu: Option<usize>,
    pub cpus: usize,
    pub kernel: &'a str,
    pub policy: String,
    pub rampart: String,
    pub load_average: LoadAverage,
    pub detached_tmpfs_in_namespace: &'a [String],
    pub variants: Vec<VariantJson<'a>>,
    pub targets: Vec<TargetJson>,
    pub listener_cpu: Option<usize>,
    pub pinned: Option<Box<EnforceJson<'a>>>,
    pub split: Option<Box<EnforceJson<'a>>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LoadAverage {
    pub start: Option<f64>,
    pub end: Option<f64>,
}

/// One listener's results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VariantJson<'a> {
    pub name: &'static str,
    pub description: &'static str,
    /// `"ran"`, `"skipped"` or `"failed"`, with the `reason` of the last two.
    pub status: &'static str,
    pub reason: Option<&'a str>,
    pub marks: Option<&'a str>,
    pub ready_ms: Option<f64>,
    /// By workload name.
    pub medians: BTreeMap<String, Medians>,
    pub scaling_2t_over_1t: ByWorkload<Option<f64>>,
    /// By client count (beyond 1).
    pub scaling_over_1_client: ByWorkload<BTreeMap<usize, Option<f64>>>,
    pub rounds: Vec<RoundJson>,
}

/// A workload's medians over rounds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Medians {
    pub per_op_ns: Option<f64>,
    pub ops_per_s: Option<f64>,
    pub added_ns_over_none: Option<f64>,
}

/// A figure of the steady-state and of the first-touch opens.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ByWorkload<T> {
    pub open: T,
    pub first_touch: T,
}

/// One round: its number, the listener's start-up time, and one key per
/// workload (its name) with the raw sample.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RoundJson {
    pub round: usize,
    pub ready_ms: Option<f64>,
    #[serde(flatten)]
    pub samples: BTreeMap<String, Sample>,
}

/// A target of issues 5 and 8 (see [`crate::goal::Goal`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TargetJson {
    pub name: String,
    pub measured: Option<f64>,
    pub limit: f64,
    /// `"at_most"` or `"at_least"`.
    pub compare: &'static str,
    pub holds: Option<bool>,
    pub missing: Option<String>,
}
