//! What the AppArmor workload found, its targets (issue 11), and its
//! renderings: a JSON object and the Markdown section of
//! docs/benchmarks.md between its own markers (crate::docs), so it can be
//! rerun alone (`--workloads apparmor`) without touching the other seeds'
//! figures.
//!
//! Efficiency is the seed's "scaling efficiency": throughput per thread
//! with N threads over throughput with one, i.e. the 1-thread cost per
//! open over the N-thread cost; taken per round (both runs of a round
//! are minutes apart at most, seconds usually) and the median reported.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::designs::DesignId;
use super::Decide;
use crate::chart::{LineChart, Series};
use crate::error::BenchError;
use crate::goal::{Goal, Unit};
use crate::markdown::Table;
use crate::stats::median;
use crate::stats::Samples;

/// The bound on Rampart's cost per open at the largest thread count over
/// one thread's (issue 11: within 5%).
pub const RAMPART_LIMIT: f64 = 1.05;
/// kref "collapsing": its cost per open at the largest thread count at
/// least this many times one thread's, i.e. an efficiency at most 1/this:
/// the seed's 68% (nginx with kref at 192 threads).
pub const KREF_COLLAPSE: f64 = 1.0 / 0.68;

/// The file of the chart against threads, beside the other seeds' charts.
pub const CHART: &str = "seeds_apparmor_threads.png";

/// The run's samples and what they were taken on.
#[derive(Clone, Debug)]
pub struct AppArmorRun {
    /// The profile's name and where its binary came from.
    pub profile: String,
    pub origin: String,
    /// Distinct paths, and how many of them the engine refuses.
    pub paths: usize,
    pub refused: usize,
    pub stream_len: usize,
    /// Opens per thread per run at most, by decision kind...
    pub opens: BTreeMap<Decide, usize>,
    /// ...and no more once a run has lasted this long.
    pub run_limit: std::time::Duration,
    pub rounds: usize,
    /// Thread counts, ascending, 1 first.
    pub threads: Vec<usize>,
    /// ns per open per thread (thread CPU time), one per round.
    pub ns: BTreeMap<(DesignId, Decide), Samples>,
    /// CPU time over wall time per run (mean over threads).
    pub on_cpu: BTreeMap<(DesignId, Decide), Samples>,
    pub clock: String,
}

impl AppArmorRun {
    /// Median ns per open per thread.
    pub fn ns(&self, d: DesignId, how: Decide, threads: usize) -> Option<f64> {
        median(self.ns.get(&(d, how))?.at(threads))
    }

    /// Median opens per second per thread.
    pub fn per_thread_rate(&self, d: DesignId, how: Decide, threads: usize) -> Option<f64> {
        self.ns(d, how, threads).filter(|ns| *ns > 0.0).map(|ns| 1e9 / ns)
    }

    /// Cost per open with `threads` threads over one thread's: median of
    /// the per-round ratios (1.0 is perfect scaling).
    pub fn cost_ratio(&self, d: DesignId, how: Decide, threads: usize) -> Option<f64> {
        let s = self.ns.get(&(d, how))?;
        let per_round: Vec<f64> =
            s.at(threads).iter().zip(s.at(1)).filter(|(_, one)| **one > 0.0).map(|(n, one)| n / one).collect();
        median(&per_round)
    }

    /// Scaling efficiency: one thread's cost over `threads` threads' cost.
    pub fn efficiency(&self, d: DesignId, how: Decide, threads: usize) -> Option<f64> {
        self.cost_ratio(d, how, threads).filter(|r| *r > 0.0).map(|r| 1.0 / r)
    }

    /// Median on-CPU share of the runs.
    pub fn on_cpu(&self, d: DesignId, how: Decide, threads: usize) -> Option<f64> {
        median(self.on_cpu.get(&(d, how))?.at(threads))
    }

    fn largest(&self) -> usize {
        self.threads.last().copied().unwrap_or(1)
    }

    /// Issue 11's target for this workload, at the largest thread count:
    /// Rampart within 5% of one thread (both decision kinds), kref shown
    /// collapsing in the same run (cached decisions, where the engine's
    /// walk does not hide the count).
    pub fn targets(&self) -> Vec<Goal> {
        let n = self.largest();
        let mut out = Vec::new();
        for how in Decide::ALL {
            out.push(Goal::at_most(
                format!("seed 003, AppArmor opens ({}): rampart cost per open, {n} threads / 1 thread", how.name()),
                self.cost_ratio(DesignId::Rampart, how, n),
                RAMPART_LIMIT,
                Unit::Ratio,
            ));
        }
        out.push(Goal {
            at_most: false,
            ..Goal::at_most(
                format!(
                    "seed 003, same run ({}): kref cost per open, {n} threads / 1 thread (efficiency at most the seed's 68%)",
                    Decide::Cached.name()
                ),
                self.cost_ratio(DesignId::Kref, Decide::Cached, n),
                KREF_COLLAPSE,
                Unit::Ratio,
            )
        });
        out
    }

    /// The `apparmor` object of `bench seeds --json` (see [`AppArmorJson`]).
    pub fn json(&self) -> AppArmorJson<'_> {
        let per = |f: &dyn Fn(DesignId, Decide, usize) -> Option<f64>| -> ByDesign {
            let by_threads = |d, how| self.threads.iter().map(|&t| (t, f(d, how, t))).collect();
            let kinds = |d| Decide::ALL.iter().map(|&how| (how.name(), by_threads(d, how))).collect();
            DesignId::ALL.iter().map(|&d| (d.name(), kinds(d))).collect()
        };
        AppArmorJson {
            profile: &self.profile,
            origin: &self.origin,
            paths: self.paths,
            paths_refused: self.refused,
            stream_len: self.stream_len,
            max_opens_per_thread: self.opens.iter().map(|(how, n)| (how.name(), *n)).collect(),
            run_limit_ms: self.run_limit.as_secs_f64() * 1e3,
            rounds: self.rounds,
            threads: &self.threads,
            clock: &self.clock,
            ns_per_open: per(&|d, h, t| self.ns(d, h, t)),
            opens_per_s_per_thread: per(&|d, h, t| self.per_thread_rate(d, h, t)),
            efficiency: per(&|d, h, t| self.efficiency(d, h, t)),
            on_cpu_share: per(&|d, h, t| self.on_cpu(d, h, t)),
            samples_ns: self
                .ns
                .iter()
                .map(|((d, how), s)| (format!("{}/{}", d.name(), how.name()), &s.per_threads))
                .collect(),
        }
    }

    /// The section of docs/benchmarks.md (without its markers).
    /// `img`: the folder of [`Self::chart`]'s file relative to the
    /// document (`None`: no chart).
    pub fn markdown(&self, command: &str, date: &str, nproc: usize, img: Option<&str>) -> String {
        let mut s = String::new();
        let n = self.largest();
        let _ = writeln!(s, "## Seed 003 (issue 11): AppArmor opens under one shared profile\n");
        let _ = writeln!(
            s,
            "Reproduce (the AppArmor workload alone; the full `bench seeds` run writes this section too):\n\n\
             ```sh\ncargo build --release -p rampart --features bench\n{command}\n```\n\n\
             `--threads 1,2,4,...` adds thread counts. On a machine without apparmor_parser or Debian's \
             apparmor-profiles, compile the profile where they are (`{}`) and pass `--apparmor-policy FILE`.\n",
            super::profile::compile_command(std::path::Path::new("FILE"))
        );
        let _ = writeln!(
            s,
            "Run of {date} on a machine with {nproc} CPUs, shared with other jobs. Profile `{}` from {}. \
             Each thread opens (decides `r` for) {} distinct paths a web server opens, {} of which the profile \
             refuses, walked as a shuffled stream of {} opens from its own offset, all threads under the same \
             label; {} rounds, every design at every thread count in each round. Two decision kinds: `engine`, the \
             DFA walk of rampart-apparmor on every open (as the kernel decides an open; at most {} opens per thread per \
             run), and `cached`, the engine's answer cached per (profile, path) in the label and looked up with \
             Rampart's cache hash, the shape of an AVC hit (at most {}): the walk costs far more than a reference \
             count, so the cached kind shows what the count itself costs. Each run stops after {:.0} ms (each thread \
             counts its own opens). Figures are {} per open.\n",
            self.profile,
            self.origin,
            self.paths,
            self.refused,
            crate::markdown::group(self.stream_len as f64),
            self.rounds,
            crate::markdown::group(self.opens.get(&Decide::Engine).copied().unwrap_or(0) as f64),
            crate::markdown::group(self.opens.get(&Decide::Cached).copied().unwrap_or(0) as f64),
            self.run_limit.as_secs_f64() * 1e3,
            self.clock
        );
        let _ = writeln!(s, "### Targets\n");
        let mut table = Table::new(&mut s, &["target", "measured", "limit", "holds"]);
        for t in self.targets() {
            let holds = match t.holds() {
                Some(true) => "yes",
                Some(false) => "**no**",
                None => "n/a",
            };
            table.row(&[&t.name, &t.measured_text(), &t.limit_text(), &holds]);
        }
        let _ = writeln!(s);
        if n > nproc {
            let _ = writeln!(
                s,
                "**More threads than CPUs:** at most {nproc} of the {n} threads run at once, so the figures beyond \
                 {nproc} threads show no more contention than {nproc} threads do.\n"
            );
        } else if let Some(on) =
            self.on_cpu(DesignId::Rampart, Decide::Engine, n).filter(|x| *x < crate::stats::BUSY_ON_CPU)
        {
            let _ = writeln!(
                s,
                "**The machine was busy:** in the {n}-thread runs each thread was running only {:.0}% of the time \
                 (median, `rampart`, engine); the {n}-thread figures understate contention.\n",
                on * 100.0
            );
        }
        self.findings(&mut s);
        let _ = writeln!(
            s,
            "### Throughput per thread and scaling efficiency\n\nOpens per second per thread (millions), and in \
             parentheses the efficiency against one thread (the seed's table: 85% with AppArmor off and 68% with \
             kref at 192 threads, 90% with per-CPU counts).\n"
        );
        self.table(&mut s, |d, how, t| {
            let rate = self.per_thread_rate(d, how, t).map_or("n/a".into(), |r| format!("{:.2}", r / 1e6));
            let eff = self.efficiency(d, how, t).map_or("n/a".into(), |e| format!("{:.0}%", e * 100.0));
            format!("{rate} ({eff})")
        });
        if let Some(dir) = img {
            let _ = writeln!(s, "\n![AppArmor opens, scaling efficiency by threads]({dir}/{CHART})");
        }
        let _ =
            writeln!(s, "\nNanoseconds per open per thread, and the threads' on-CPU share of the run's wall time:\n");
        self.table(&mut s, |d, how, t| {
            let ns = self.ns(d, how, t).map_or("n/a".into(), |v| format!("{v:.1}"));
            let on = self.on_cpu(d, how, t).map_or("n/a".into(), |v| format!("{:.0}%", v * 100.0));
            format!("{ns} ({on})")
        });
        let _ = writeln!(s, "\n### The designs\n");
        let mut table = Table::new(&mut s, &["design", "what a check does to keep the label alive"]);
        for d in DesignId::ALL {
            table.row(&[&format!("`{}`", d.name()), &d.describe()]);
        }
        let _ = writeln!(
            s,
            "\nEvery design gives the engine's answer for every path (`crates/bench/tests/apparmor.rs`); the engine's \
             answers are checked against apparmor_parser's and python3-apparmor's in `crates/apparmor/tests`."
        );
        s
    }

    /// Draws the scaling efficiency (throughput per thread over one
    /// thread's) against threads, a line per design and decision kind,
    /// into `dir`/[`CHART`]; returns its path. Per thread, not all threads
    /// together: the figures are thread CPU time, so beyond the CPUs a
    /// sum would show throughput no wall clock saw.
    pub fn chart(&self, dir: &Path) -> Result<PathBuf, BenchError> {
        std::fs::create_dir_all(dir).map_err(BenchError::io(format!("cannot create {}", dir.display())))?;
        let mut series = Vec::new();
        for how in Decide::ALL {
            for d in DesignId::ALL {
                series.push(Series {
                    label: format!("{}, {}", d.name(), how.name()),
                    values: self.threads.iter().map(|&t| self.efficiency(d, how, t).map(|e| e * 100.0)).collect(),
                    color: crate::chart::line_color(series.len()),
                });
            }
        }
        let path = dir.join(CHART);
        LineChart {
            title: "Seed 003: AppArmor opens under one shared profile, scaling efficiency",
            x_desc: "threads",
            y_desc: "opens per second per thread, % of one thread's",
            xs: self.threads.clone(),
            series,
            target: Some((100.0 / RAMPART_LIMIT, "issue 11: rampart within 5% of one thread".into())),
            format: |v| format!("{v:.0}%"),
        }
        .draw(&path)?;
        Ok(path)
    }

    /// What the tables say, in a few computed sentences.
    fn findings(&self, s: &mut String) {
        let n = self.largest();
        let mut lines = Vec::new();
        for how in Decide::ALL {
            let effs: Vec<String> = DesignId::ALL
                .iter()
                .filter_map(|&d| self.efficiency(d, how, n).map(|e| format!("`{}` {:.0}%", d.name(), e * 100.0)))
                .collect();
            if !effs.is_empty() {
                lines.push(format!(
                    "Scaling efficiency at {n} threads, {} decisions: {}.",
                    how.name(),
                    effs.join(", ")
                ));
            }
        }
        let cost = |d, how, t| self.ns(d, how, t);
        if let (Some(walk), Some(k1), Some(r1), Some(kn), Some(rn)) = (
            cost(DesignId::Rampart, Decide::Engine, 1),
            cost(DesignId::Kref, Decide::Cached, 1),
            cost(DesignId::Rampart, Decide::Cached, 1),
            cost(DesignId::Kref, Decide::Cached, n),
            cost(DesignId::Rampart, Decide::Cached, n),
        ) {
            lines.push(format!(
                "What the shared count costs: taking and dropping it adds {:.1} ns per open with one thread and \
                 {:.1} ns with {n} (`kref` over `rampart`, cached decisions), against {walk:.1} ns for the engine's \
                 walk of the path: with the engine deciding every open the count is {:.0}% of an open's cost at {n} \
                 threads, which is why the cached decisions are shown too.",
                k1 - r1,
                kn - rn,
                (kn - rn) / (walk + kn - rn) * 100.0
            ));
        }
        crate::markdown::findings(s, &lines);
    }

    /// One row per (design, decision kind), one column per thread count.
    fn table(&self, s: &mut String, cell: impl Fn(DesignId, Decide, usize) -> String) {
        let headers: Vec<String> =
            self.threads.iter().map(|t| format!("{t} thread{}", if *t == 1 { "" } else { "s" })).collect();
        let columns: Vec<&str> = ["design", "decision"].into_iter().chain(headers.iter().map(String::as_str)).collect();
        let mut table = Table::new(s, &columns);
        for how in Decide::ALL {
            for d in DesignId::ALL {
                let name =
                    if d == DesignId::Rampart { format!("**`{}`**", d.name()) } else { format!("`{}`", d.name()) };
                let cells = self.threads.iter().map(|&t| cell(d, how, t));
                table.row_of([name, how.name().to_owned()].into_iter().chain(cells));
            }
        }
    }
}

/// A figure by design, decision kind and thread count; `null` where it
/// could not be measured.
pub type ByDesign = BTreeMap<&'static str, BTreeMap<&'static str, BTreeMap<usize, Option<f64>>>>;

/// The AppArmor workload in `--json`: every field is a key, in this order
/// (a contract with scripts that read the report, like
/// [`crate::report::json::ReportJson`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AppArmorJson<'a> {
    pub profile: &'a str,
    pub origin: &'a str,
    pub paths: usize,
    pub paths_refused: usize,
    pub stream_len: usize,
    pub max_opens_per_thread: BTreeMap<&'static str, usize>,
    pub run_limit_ms: f64,
    pub rounds: usize,
    pub threads: &'a [usize],
    pub clock: &'a str,
    pub ns_per_open: ByDesign,
    pub opens_per_s_per_thread: ByDesign,
    pub efficiency: ByDesign,
    pub on_cpu_share: ByDesign,
    /// `design/decision` -> thread count -> one figure per round.
    pub samples_ns: BTreeMap<String, &'a BTreeMap<usize, Vec<f64>>>,
}
