//! What a run found: raw samples per round, the medians and ratios
//! derived from them, the targets of issue 4, and their three renderings
//! (one JSON object: [`json`]; Markdown tables; and the charts in
//! [`crate::chart`]).
//!
//! Why keep every sample: the medians are what the tables show, but a
//! reader doubting one should be able to see the spread it came from (the
//! JSON carries the samples).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use rampart_avc::{
    Avc, StatsRow, DEFAULT_L1_ENTRIES, DEFAULT_L2_THRESHOLD, L1_ENTRY_BYTES, L2_ENTRY_BYTES, L2_SLOT_BYTES,
};

use crate::apparmor::report::AppArmorRun;
use crate::goal::{Goal, Unit};
use crate::markdown::group;
use crate::markdown::Table;
use crate::params::{Params, Size, Workload, TARGET_THREADS};
use crate::stats::{median, Samples, BUSY_ON_CPU};
use crate::variants::VariantId;
use crate::workloads::rw::ReadWrite;

pub mod json;

/// A thread's slot and statistics row, each alone on 128 bytes.
pub const THREAD_STATE_BYTES: usize = 256;

/// Rampart's memory after the run, from its statistics and configuration
/// (sizes per entry as documented in `rampart-avc`; allocator overhead
/// not included).
#[derive(Clone, Debug)]
pub struct Memory {
    /// One row per thread slot the AVC gave out.
    pub rows: Vec<StatsRow>,
    pub l1_entries: usize,
    pub l2_threshold: usize,
    /// Entries live in the shared table: allocations minus frees.
    pub l2_entries: u64,
    /// Interned context strings (bytes of text plus bookkeeping).
    pub sid_bytes: usize,
}

impl Memory {
    /// Reads `avc`'s statistics; the AVC was built with the default sizes.
    pub fn of(avc: &Avc, contexts: &[String]) -> Memory {
        let stats = avc.stats();
        let total = stats.total();
        Memory {
            rows: stats.rows,
            l1_entries: DEFAULT_L1_ENTRIES.max(1).next_power_of_two(),
            l2_threshold: DEFAULT_L2_THRESHOLD,
            l2_entries: total.allocations.saturating_sub(total.frees),
            // Each context: its text, an Arc header (16), a pointer in the
            // SID vector (16) and an entry of the reverse map (~32).
            sid_bytes: contexts.iter().map(|c| c.len() + 64).sum(),
        }
    }

    pub fn per_thread_bytes(&self) -> usize {
        self.l1_entries * L1_ENTRY_BYTES + THREAD_STATE_BYTES
    }

    pub fn l2_bytes(&self) -> usize {
        let slots = self.l2_threshold.max(1).saturating_mul(2).next_power_of_two();
        slots * L2_SLOT_BYTES + self.l2_entries as usize * L2_ENTRY_BYTES
    }

    pub fn total_bytes(&self) -> usize {
        self.rows.len() * self.per_thread_bytes() + self.l2_bytes() + self.sid_bytes
    }
}

/// Everything a run measured.
#[derive(Clone, Debug)]
pub struct Report {
    pub size: Size,
    pub params: Params,
    pub policy: String,
    pub date: String,
    pub nproc: usize,
    /// Distinct keys, contexts and classes of the hit workload.
    pub keys: usize,
    pub contexts: usize,
    pub classes: usize,
    /// Where rcutest wrote, and whether that is a tmpfs.
    pub tmp_dir: String,
    pub tmp_is_tmpfs: bool,
    /// The access each system-call workload checks.
    pub syscall_labels: Vec<(String, String)>,
    /// The clock of the per-check figures ("thread CPU time" or "wall time").
    pub clock: String,
    /// ns per check per thread, by [`Report::clock`].
    pub hits: BTreeMap<VariantId, Samples>,
    /// ns per check per thread, wall time.
    pub hits_wall: BTreeMap<VariantId, Samples>,
    /// CPU time over wall time per run (mean over threads).
    pub hits_on_cpu: BTreeMap<VariantId, Samples>,
    /// Working-set sweep, 1 thread: distinct keys -> variant -> ns samples.
    pub hits_by_keys: BTreeMap<usize, BTreeMap<VariantId, Vec<f64>>>,
    /// rcutest seconds of each variant's writes...
    pub rcutest: BTreeMap<VariantId, Samples>,
    /// ...and of `none`'s, in alternating blocks of the same runs.
    pub rcutest_base: BTreeMap<VariantId, Samples>,
    /// Read/write ns per call through each variant...
    pub rw: BTreeMap<VariantId, Vec<ReadWrite>>,
    /// ...and through `none` in the same runs (alternating blocks).
    pub rw_base: BTreeMap<VariantId, Vec<ReadWrite>>,
    pub chat: BTreeMap<VariantId, Vec<f64>>,
    /// Chat room CPU microseconds per message (NaN without a CPU clock).
    pub chat_cpu: BTreeMap<VariantId, Vec<f64>>,
    /// Every chat room thread ran pinned to its pair's CPU.
    pub chat_pinned: bool,
    pub memory: Memory,
    /// The AppArmor workload (seed 003), if it ran...
    pub apparmor: Option<AppArmorRun>,
    /// ...or why it was skipped.
    pub apparmor_skipped: Option<String>,
    pub elapsed_s: f64,
}

/// `(a / b - 1) * 100` per round, then the median.
fn paired_overhead(variant: &[f64], baseline: &[f64]) -> Option<f64> {
    let per_round: Vec<f64> =
        variant.iter().zip(baseline).filter(|(_, b)| **b > 0.0).map(|(a, b)| (a / b - 1.0) * 100.0).collect();
    median(&per_round)
}

impl Report {
    /// Median ns per check per thread with `threads` (1 or 2) threads.
    pub fn hit_ns(&self, v: VariantId, threads: usize) -> Option<f64> {
        median(self.hits.get(&v)?.at(threads))
    }

    /// Checks per second per thread with `threads` threads over one
    /// thread's: the 1-thread cost per check over the `threads`-thread
    /// cost (1.0 is perfect scaling).
    pub fn hit_efficiency(&self, v: VariantId, threads: usize) -> Option<f64> {
        ratio(self.hit_ns(v, 1), self.hit_ns(v, threads))
    }

    /// Median wall-time ns per check per thread.
    pub fn hit_wall_ns(&self, v: VariantId, threads: usize) -> Option<f64> {
        median(self.hits_wall.get(&v)?.at(threads))
    }

    /// Median on-CPU share of a hit run (CPU time / wall time).
    pub fn hit_on_cpu(&self, v: VariantId, threads: usize) -> Option<f64> {
        median(self.hits_on_cpu.get(&v)?.at(threads))
    }

    /// Median ns per check, 1 thread, over the first `keys` keys.
    pub fn hit_ns_by_keys(&self, keys: usize, v: VariantId) -> Option<f64> {
        median(self.hits_by_keys.get(&keys)?.get(&v)?)
    }

    /// Median seconds of rcutest with `threads` threads.
    pub fn rcutest_s(&self, v: VariantId, threads: usize) -> Option<f64> {
        median(self.rcutest.get(&v)?.at(threads))
    }

    /// rcutest time over that of `none` in the same run, in percent
    /// (median over rounds).
    pub fn rcutest_overhead_pct(&self, v: VariantId, threads: usize) -> Option<f64> {
        paired_overhead(self.rcutest.get(&v)?.at(threads), self.rcutest_base.get(&v)?.at(threads))
    }

    /// Median ns per checked read and write.
    pub fn rw_ns(&self, v: VariantId) -> Option<(f64, f64)> {
        let s = self.rw.get(&v)?;
        let reads: Vec<f64> = s.iter().map(|r| r.read_ns).collect();
        let writes: Vec<f64> = s.iter().map(|r| r.write_ns).collect();
        Some((median(&reads)?, median(&writes)?))
    }

    /// Read and write overhead over `none`, percent: per run, the
    /// variant's time over that of `none` measured in alternating blocks
    /// of the same run; the median over rounds.
    pub fn rw_overhead_pct(&self, v: VariantId) -> Option<(f64, f64)> {
        let s = self.rw.get(&v)?;
        let base = self.rw_base.get(&v)?;
        let pick = |f: fn(&ReadWrite) -> f64, rows: &[ReadWrite]| rows.iter().map(f).collect::<Vec<f64>>();
        let read = paired_overhead(&pick(|r| r.read_ns, s), &pick(|r| r.read_ns, base))?;
        let write = paired_overhead(&pick(|r| r.write_ns, s), &pick(|r| r.write_ns, base))?;
        Some((read, write))
    }

    /// Median messages per second.
    pub fn chat_msgs_per_s(&self, v: VariantId) -> Option<f64> {
        median(self.chat.get(&v)?)
    }

    /// Median CPU microseconds per chat room message.
    pub fn chat_cpu_us(&self, v: VariantId) -> Option<f64> {
        median(self.chat_cpu.get(&v)?)
    }

    /// Median on-CPU share of all 2-thread hit runs (every variant).
    pub fn hit_2t_on_cpu(&self) -> Option<f64> {
        let all: Vec<f64> = self.hits_on_cpu.values().flat_map(|s| s.at(2).iter().copied()).collect();
        median(&all)
    }

    /// A warning when the 2-thread runs did not really run in parallel
    /// (another job held a CPU), so their figures understate contention.
    pub fn busy_warning(&self) -> Option<String> {
        let share = self.hit_2t_on_cpu()?;
        (share < BUSY_ON_CPU).then(|| {
            format!(
                "**The machine was busy:** in the 2-thread hit runs each thread was running only {:.0}% of the time \
                 (median). Another job held a CPU, so the two threads mostly took turns on one core and the 2-thread \
                 figures understate contention. Rerun on a quiet machine for scaling figures.",
                share * 100.0
            )
        })
    }

    /// Whether any of the SELinux seed workloads ran (their section of
    /// docs/benchmarks.md is written only then).
    pub fn ran_seeds(&self) -> bool {
        self.params.workloads.iter().any(|&w| w != Workload::Apparmor)
    }

    /// The targets of the workloads that ran: issue 4's, then issue 11's
    /// for the AppArmor workload.
    pub fn targets(&self) -> Vec<Goal> {
        let mut out = self.seed_targets();
        out.extend(self.apparmor.iter().flat_map(AppArmorRun::targets));
        out
    }

    /// The targets of issue 4, for the workloads that ran.
    fn seed_targets(&self) -> Vec<Goal> {
        let r = VariantId::Rampart;
        let mut out = Vec::new();
        if self.params.runs(Workload::Hits) {
            self.hit_targets(&mut out);
        }
        if self.params.runs(Workload::Rcutest) {
            for t in TARGET_THREADS {
                let name = format!("rcutest, {t} thread{}: rampart over none", plural(t));
                out.push(Goal::at_most(name, self.rcutest_overhead_pct(r, t), 5.0, Unit::Percent));
            }
        }
        if self.params.runs(Workload::Rw) {
            let rw = self.rw_overhead_pct(r);
            out.push(Goal::at_most("simple read: rampart over none", rw.map(|x| x.0), 2.0, Unit::Percent));
            out.push(Goal::at_most("simple write: rampart over none", rw.map(|x| x.1), 2.0, Unit::Percent));
        }
        out
    }

    fn hit_targets(&self, out: &mut Vec<Goal>) {
        let r = VariantId::Rampart;
        let floor = VariantId::UnsyncHashmap;
        let ratio = |a: Option<f64>, b: Option<f64>| Some(a? / b?);
        for t in TARGET_THREADS {
            let name = format!("hit, {t} thread{}: rampart / unsync_hashmap", plural(t));
            out.push(Goal::at_most(name, ratio(self.hit_ns(r, t), self.hit_ns(floor, t)), 1.5, Unit::Ratio));
        }
        out.push(Goal::at_most(
            "hit: rampart cost per check, 2 threads / 1 thread",
            ratio(self.hit_ns(r, 2), self.hit_ns(r, 1)),
            1.05,
            Unit::Ratio,
        ));
    }

    /// The Markdown section for docs/benchmarks.md (without the markers).
    /// `command` is the command line that produced it; `img` the folder of
    /// the charts relative to the document (`None`: no charts).
    pub fn markdown(&self, command: &str, img: Option<&str>) -> String {
        let mut s = String::new();
        let p = &self.params;
        let _ = writeln!(s, "## Seed experiments (issue 4): Rampart beside the seeds' designs\n");
        let _ = writeln!(s, "Reproduce (one process, one run, about {}):\n", minutes(self.elapsed_s));
        let _ = writeln!(s, "```sh\ncargo build --release -p rampart --features bench\n{command}\n```\n");
        let _ = writeln!(
            s,
            "Run of {} ({} size) on a machine with {} CPUs, shared with other jobs. Policy: `{}`. \
             Every variant checks the same accesses; each cache was warmed with every key before timing. \
             Figures are medians over interleaved rounds (each round runs every variant once, in a rotated \
             order); overheads against `none` are medians of per-round ratios.\n",
            self.date,
            self.size.name(),
            self.nproc,
            self.policy
        );
        if self.size != Size::Full {
            let _ = writeln!(
                s,
                "**{} run: fewer calls and rounds than the seeds** (rcutest: {} writes per thread instead of 500,000).\n",
                self.size.name(),
                group(p.rcutest_writes as f64)
            );
        }
        self.targets_md(&mut s);
        self.findings_md(&mut s);
        if self.params.runs(Workload::Hits) {
            self.hits_md(&mut s, img);
        }
        if self.params.runs(Workload::Rcutest) {
            self.rcutest_md(&mut s, img);
        }
        self.threads_md(&mut s, img);
        if self.params.runs(Workload::Rw) {
            self.rw_md(&mut s, img);
        }
        if self.params.runs(Workload::Chat) {
            self.chat_md(&mut s, img);
        }
        self.memory_md(&mut s);
        self.variants_md(&mut s);
        if let Some(why) = &self.apparmor_skipped {
            let _ = writeln!(s, "\nThe AppArmor workload (seed 003) did not run: {why}");
        }
        s
    }

    /// The AppArmor workload's section of docs/benchmarks.md, if it ran.
    /// `img`: the folder of its chart relative to the document.
    pub fn apparmor_markdown(&self, command: &str, img: Option<&str>) -> Option<String> {
        Some(self.apparmor.as_ref()?.markdown(command, &self.date, self.nproc, img))
    }

    /// Beyond 2 threads (`--threads`): AVC hit cost and rcutest time at
    /// every thread count, with the throughput over one thread.
    fn threads_md(&self, s: &mut String, img: Option<&str>) {
        let threads = &self.params.threads;
        if threads.len() <= 2 {
            return;
        }
        let _ = writeln!(
            s,
            "### Scaling with threads\n\nAVC hits: ns per check per thread, and in parentheses the throughput of \
             all threads over one thread's (N x the 1-thread cost over the N-thread cost). rcutest: seconds of real \
             time for all threads, each doing the same writes.\n"
        );
        let headers: Vec<String> = threads.iter().map(|t| format!("{t} thread{}", plural(*t))).collect();
        let columns: Vec<&str> =
            std::iter::once("variant, workload").chain(headers.iter().map(String::as_str)).collect();
        let mut table = Table::new(s, &columns);
        for &v in self.hits.keys() {
            let label = format!("{} hits", name_md(v));
            let cells: Vec<String> = threads
                .iter()
                .map(|&t| {
                    format!(
                        "{} ({})",
                        num(self.hit_ns(v, t), 1),
                        times(self.hit_efficiency(v, t).map(|e| e * t as f64))
                    )
                })
                .collect();
            table.row_of(std::iter::once(label).chain(cells));
        }
        for &v in self.rcutest.keys() {
            let label = format!("{} rcutest", name_md(v));
            let cells: Vec<String> = threads.iter().map(|&t| num(self.rcutest_s(v, t), 2)).collect();
            table.row_of(std::iter::once(label).chain(cells));
        }
        if self.params.runs(Workload::Hits) {
            chart_line(s, img, crate::chart::THREADS_CHART, "AVC hits, scaling efficiency by threads");
        } else {
            let _ = writeln!(s);
        }
    }

    fn targets_md(&self, s: &mut String) {
        let _ = writeln!(s, "### Targets\n");
        let mut table = Table::new(s, &["target", "measured", "limit", "holds"]);
        for t in self.seed_targets() {
            let holds = match t.holds() {
                Some(true) => "yes",
                Some(false) => "**no**",
                None => "n/a",
            };
            table.row(&[&t.name, &t.measured_text(), &t.format(t.limit), &holds]);
        }
        let _ = writeln!(s);
        if let Some(w) = self.busy_warning() {
            let _ = writeln!(s, "{w}\n");
        }
    }

    /// What the tables below say, in a few computed sentences.
    fn findings_md(&self, s: &mut String) {
        let mut lines: Vec<String> = Vec::new();
        let cost = |v: VariantId| ratio(self.hit_ns(v, 2), self.hit_ns(v, 1));
        let shared = [
            VariantId::GlobalMutex,
            VariantId::Rwlock,
            VariantId::Kref,
            VariantId::ModuleRefcount,
            VariantId::SharedCounter,
        ];
        let private = [VariantId::Rampart, VariantId::PercpuRef, VariantId::UnsyncHashmap];
        let list = |ids: &[VariantId]| {
            ids.iter()
                .filter_map(|&v| cost(v).map(|c| format!("`{}` {c:.2}x", v.name())))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if cost(VariantId::Rampart).is_some() {
            lines.push(format!(
                "Scaling (AVC hits, cost per check with 2 threads over 1 thread): designs that write memory shared \
                 by all threads on every check: {}; designs that do not: {}.",
                list(&shared),
                list(&private)
            ));
        }
        let (r, u) = (VariantId::Rampart, VariantId::UnsyncHashmap);
        if let (Some(r1), Some(u1)) = (self.hit_ns(r, 1), self.hit_ns(u, 1)) {
            let mut line = format!(
                "Hit cost: a Rampart hit costs {r1:.1} ns against {u1:.1} ns for the plain `HashMap` ({:.2}x) over \
                 {} keys.",
                r1 / u1,
                self.keys
            );
            let smallest = self.hits_by_keys.keys().next().copied();
            if let Some(n) = smallest {
                if let (Some(a), Some(b)) = (self.hit_ns_by_keys(n, r), self.hit_ns_by_keys(n, u)) {
                    line.push_str(&format!(
                        " With {n} keys, all resident in its per-thread L1 of {} entries, it costs {a:.1} ns against \
                         {b:.1} ns ({:.2}x): the cost of the L1 hit path itself.",
                        self.memory.l1_entries,
                        a / b,
                    ));
                    if self.keys > self.memory.l1_entries {
                        line.push_str(&format!(
                            " {} keys are more than the L1 holds: checks that miss it are served by the shared L2 \
                             (see the working-set table).",
                            self.keys
                        ));
                    }
                }
            }
            lines.push(line);
        }
        let full = VariantId::FullRevalidate;
        if let (Some(a), Some(b), Some(rw), Some(frw)) = (
            self.rcutest_overhead_pct(r, 2),
            self.rcutest_overhead_pct(full, 2),
            self.rw_overhead_pct(r),
            self.rw_overhead_pct(full),
        ) {
            lines.push(format!(
                "Open files: the handle skips the lookup when nothing changed. rcutest with 2 threads: `rampart` \
                 {a:+.1}% over no check, `full_revalidate` (the same AVC, checked on every write) {b:+.1}%; simple \
                 read/write: {:+.1}%/{:+.1}% against {:+.1}%/{:+.1}%.",
                rw.0, rw.1, frw.0, frw.1
            ));
        }
        let cpus: Vec<f64> = self.chat_cpu.keys().filter_map(|&v| self.chat_cpu_us(v)).collect();
        if let (Some(lo), Some(hi), Some(none)) = (
            cpus.iter().copied().reduce(f64::min),
            cpus.iter().copied().reduce(f64::max),
            self.chat_cpu_us(VariantId::None),
        ) {
            let spread = if none > 0.0 { (hi - lo) / none * 100.0 } else { f64::NAN };
            lines.push(format!(
                "Chat room: a message costs about {none:.1} µs of CPU (all threads; mostly the kernel and the \
                 scheduler) with no check; the variants spent {lo:.2} to {hi:.2} µs per message, a spread of \
                 {spread:.1}% for a check cost of a few ns (tens under contention) per send and receive."
            ));
        }
        crate::markdown::findings(s, &lines);
    }

    fn hits_md(&self, s: &mut String, img: Option<&str>) {
        let p = &self.params;
        let _ = writeln!(
            s,
            "### 1. AVC hits (seeds 000, 004)\n\n{} distinct (source, target, class) keys drawn from the policy's \
             `allow` rules ({} contexts, {} classes; one request in ten asks for a permission the rule may not grant), \
             walked as a shuffled stream of {} checks; {} timed checks per thread per run, {} rounds. \
             Nanoseconds of {} per check per thread (lower is better); `none` is the cost of the loop itself. \
             \"2T on CPU\" is the share of the 2-thread runs' wall time the threads were running: near 100% \
             means both threads really ran at once (other jobs share this machine).\n",
            self.keys,
            self.contexts,
            self.classes,
            group(p.stream_len as f64),
            group(p.hit_checks as f64),
            p.hit_rounds,
            self.clock
        );
        let floor = VariantId::UnsyncHashmap;
        let mut table = Table::new(
            s,
            &[
                "variant",
                "1 thread (ns)",
                "2 threads (ns)",
                "cost 2T/1T",
                "throughput 2T/1T",
                "vs unsync_hashmap 1T",
                "vs unsync_hashmap 2T",
                "2T on CPU",
            ],
        );
        for &v in self.hits.keys() {
            let one = self.hit_ns(v, 1);
            let two = self.hit_ns(v, 2);
            let cost = ratio(two, one);
            table.row(&[
                &name_md(v),
                &num(one, 1),
                &num(two, 1),
                &times(cost),
                &times(cost.filter(|c| *c > 0.0).map(|c| 2.0 / c)),
                &times(ratio(one, self.hit_ns(floor, 1))),
                &times(ratio(two, self.hit_ns(floor, 2))),
                &self.hit_on_cpu(v, 2).map_or("n/a".into(), |x| format!("{:.0}%", x * 100.0)),
            ]);
        }
        chart_line(s, img, "seeds_hits.png", "AVC hits, ns per check per thread");
        if !self.hits_by_keys.is_empty() {
            let _ = writeln!(
                s,
                "Working set: the same measurement (1 thread) over the first N keys only. Rampart's per-thread \
                 L1 has {} entries ({}); a check that misses it is served by the shared L2.\n",
                self.memory.l1_entries,
                bytes(self.memory.l1_entries * L1_ENTRY_BYTES)
            );
            let mut table =
                Table::new(s, &["distinct keys", "unsync_hashmap (ns)", "rampart (ns)", "rampart / unsync_hashmap"]);
            for &n in self.hits_by_keys.keys() {
                let u = self.hit_ns_by_keys(n, VariantId::UnsyncHashmap);
                let r = self.hit_ns_by_keys(n, VariantId::Rampart);
                table.row(&[&n, &num(u, 1), &num(r, 1), &times(ratio(r, u))]);
            }
            let _ = writeln!(s);
        }
    }

    fn rcutest_md(&self, s: &mut String, img: Option<&str>) {
        let p = &self.params;
        let _ = writeln!(
            s,
            "### 2. rcutest (seed 000)\n\nEach thread: {} write(2) calls of 1 byte to its own file in `{}`{}, each \
             preceded by the check of the open file; real time of all threads, {} rounds (lower is better). Each run \
             alternates blocks of {} writes per thread through the variant and through `none`, all threads starting \
             each block together; the seconds are the variant's blocks, the overhead compares them with the `none` \
             blocks of the same run. \
             KaiGai's figures: 8.0 s with SELinux off, 11.0 s with RCU at 4 to 32 CPUs, 78 s (global lock) and \
             20 s (rwlock) at 4 CPUs.\n",
            group(p.rcutest_writes as f64),
            self.tmp_dir,
            if self.tmp_is_tmpfs { " (tmpfs)" } else { " (not a tmpfs: none was writable)" },
            p.rcutest_rounds,
            group(crate::workloads::rcutest::BLOCK as f64)
        );
        let mut table = Table::new(
            s,
            &["variant", "1 thread (s)", "2 threads (s)", "over none 1T", "over none 2T", "vs unsync_hashmap 2T"],
        );
        for &v in self.rcutest.keys() {
            table.row(&[
                &name_md(v),
                &num(self.rcutest_s(v, 1), 3),
                &num(self.rcutest_s(v, 2), 3),
                &pct(self.rcutest_overhead_pct(v, 1)),
                &pct(self.rcutest_overhead_pct(v, 2)),
                &times(ratio(self.rcutest_s(v, 2), self.rcutest_s(VariantId::UnsyncHashmap, 2))),
            ]);
        }
        chart_line(s, img, "seeds_rcutest.png", "rcutest, seconds");
    }

    fn rw_md(&self, s: &mut String, img: Option<&str>) {
        let p = &self.params;
        let _ = writeln!(
            s,
            "### 3. lmbench simple read/write (seed 002)\n\n1-byte read(2) of /dev/zero and write(2) to /dev/null, \
             {} of each per run, one thread, each preceded by the check of the open file (the open is not timed), \
             {} rounds; nanoseconds of {} per call. Each run alternates blocks of {} calls through the variant and \
             through `none`, so each overhead compares two measurements taken under the same machine conditions. The 2007 figures on x86: 12.3% (read) and 14.0% (write) over \
             no SELinux.\n",
            group(p.rw_ops as f64),
            p.rw_rounds,
            self.clock,
            group(crate::workloads::rw::BLOCK as f64)
        );
        let mut table = Table::new(s, &["variant", "read (ns)", "write (ns)", "read over none", "write over none"]);
        for &v in self.rw.keys() {
            let ns = self.rw_ns(v);
            let o = self.rw_overhead_pct(v);
            table.row(&[
                &name_md(v),
                &num(ns.map(|x| x.0), 1),
                &num(ns.map(|x| x.1), 1),
                &pct(o.map(|x| x.0)),
                &pct(o.map(|x| x.1)),
            ]);
        }
        chart_line(s, img, "seeds_rw.png", "simple read/write, overhead over none");
    }

    fn chat_md(&self, s: &mut String, img: Option<&str>) {
        let p = &self.params;
        let _ = writeln!(
            s,
            "### 4. Chat room (seed 004)\n\n{} pairs of threads ({} threads on {} CPUs) exchanging 100-byte messages \
             over loopback TCP in bursts of {}, up to {} messages per pair or {:.0} s per run, {} rounds; a send \
             check before each send and a receive check after each receive. {} Messages per second (higher is better); \
             with more threads than CPUs it swings with scheduling from run to run, so the CPU time of all threads \
             per message (lower is better) is shown too.\n",
            p.chat_pairs,
            2 * p.chat_pairs,
            self.nproc,
            crate::workloads::chatroom::BURST,
            group(p.chat_messages as f64),
            p.chat_limit.as_secs_f64(),
            p.chat_rounds,
            if self.chat_pinned {
                "Each pair is pinned to its own CPU (unpinned, the scheduler's placement of the pairs flipped the \
                 throughput between two levels 2x apart, whatever the variant)."
            } else {
                "The threads could not be pinned to CPUs: the throughput may flip between placements."
            }
        );
        let mut table = Table::new(
            s,
            &["variant", "messages/s", "vs none", "vs unsync_hashmap", "CPU µs per message", "CPU vs none"],
        );
        for &v in self.chat.keys() {
            let m = self.chat_msgs_per_s(v);
            let cpu = self.chat_cpu_us(v);
            table.row(&[
                &name_md(v),
                &m.map_or("n/a".into(), group),
                &times(ratio(m, self.chat_msgs_per_s(VariantId::None))),
                &times(ratio(m, self.chat_msgs_per_s(VariantId::UnsyncHashmap))),
                &num(cpu, 2),
                &times(ratio(cpu, self.chat_cpu_us(VariantId::None))),
            ]);
        }
        chart_line(s, img, "seeds_chatroom.png", "chat room, messages per second");
    }

    fn memory_md(&self, s: &mut String) {
        let m = &self.memory;
        let _ = writeln!(
            s,
            "### Rampart's memory after the run\n\nFrom the AVC's statistics and configuration (default sizes; bytes \
             per entry as documented in `rampart-avc`, allocator overhead excluded). Per thread: an L1 of {} entries \
             of {} bytes plus {} bytes of slot and statistics row = {}. Shared: the L2 table ({} slots of {} bytes, \
             {} live entries of {} bytes) = {}; the SID table = {}. Total for {} thread slots: **{}**.\n",
            m.l1_entries,
            L1_ENTRY_BYTES,
            THREAD_STATE_BYTES,
            bytes(m.per_thread_bytes()),
            m.l2_threshold.max(1).saturating_mul(2).next_power_of_two(),
            L2_SLOT_BYTES,
            m.l2_entries,
            L2_ENTRY_BYTES,
            bytes(m.l2_bytes()),
            bytes(m.sid_bytes),
            m.rows.len(),
            bytes(m.total_bytes())
        );
        let mut table =
            Table::new(s, &["thread slot", "lookups", "hits", "misses", "allocations", "reclaims", "frees"]);
        for (i, r) in m.rows.iter().enumerate() {
            table.row(&[&i, &r.lookups, &r.hits, &r.misses, &r.allocations, &r.reclaims, &r.frees]);
        }
        let _ = writeln!(s);
    }

    fn variants_md(&self, s: &mut String) {
        let _ = writeln!(s, "### What each variant is\n");
        let mut table = Table::new(s, &["variant", "design"]);
        for v in VariantId::ALL {
            table.row(&[&format!("`{}`", v.name()), &v.describe()]);
        }
        let _ = writeln!(s, "\nAccesses checked by the system-call workloads:\n");
        for (k, v) in &self.syscall_labels {
            let _ = writeln!(s, "- {k}: `{v}`");
        }
        let _ = writeln!(
            s,
            "\nAll caches key on Rampart's packed (source SID, target SID, class) with Rampart's hash function and \
             answer from the same decisions; `crates/bench/tests` checks that every variant gives Rampart's \
             allow/deny answer on every key."
        );
    }

    /// A plain-text summary for the terminal: the tables without charts.
    pub fn text(&self, command: &str) -> String {
        let seeds = self.ran_seeds().then(|| self.markdown(command, None));
        seeds.into_iter().chain(self.apparmor_markdown(command, None)).collect::<Vec<_>>().join("\n")
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

fn name_md(v: VariantId) -> String {
    if v == VariantId::Rampart {
        format!("**`{}`**", v.name())
    } else {
        format!("`{}`", v.name())
    }
}

fn num(v: Option<f64>, decimals: usize) -> String {
    v.map_or("n/a".into(), |x| format!("{x:.decimals$}"))
}

fn times(v: Option<f64>) -> String {
    v.map_or("n/a".into(), |x| format!("{x:.2}x"))
}

fn pct(v: Option<f64>) -> String {
    v.map_or("n/a".into(), |x| format!("{x:+.1}%"))
}

fn bytes(n: usize) -> String {
    if n >= 1 << 20 {
        format!("{:.2} MiB", n as f64 / f64::from(1 << 20))
    } else {
        format!("{:.1} KiB", n as f64 / 1024.0)
    }
}

fn minutes(secs: f64) -> String {
    if secs < 90.0 {
        format!("{secs:.0} s")
    } else {
        format!("{:.0} min", secs / 60.0)
    }
}

fn chart_line(s: &mut String, img: Option<&str>, file: &str, alt: &str) {
    match img {
        Some(dir) => {
            let _ = writeln!(s, "\n![{alt}]({dir}/{file})\n");
        }
        None => {
            let _ = writeln!(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting() {
        assert_eq!(group(1_234_567.8), "1,234,568");
        assert_eq!(group(999.0), "999");
        assert_eq!(paired_overhead(&[110.0, 90.0, 102.0], &[100.0, 100.0, 100.0]).map(|x| x.round()), Some(2.0));
    }
}
