//! The enforcement benchmark's results: medians, ratios and targets, as a
//! text table, JSON ([`json`]), and a Markdown section for docs/benchmarks.md
//! (between `<!-- enforce:begin -->` and `<!-- enforce:end -->`, appended
//! with its heading the first time).

use std::path::{Path, PathBuf};

use super::model::{Listener, Status, VariantResult, Workload};
use super::workloads::Sample;
use crate::error::BenchError;
use crate::goal::{Goal, Unit};
use crate::markdown::group;
use crate::markdown::Table;
use crate::stats::median;

pub mod charts;
pub mod json;

pub const BEGIN: &str = "<!-- enforce:begin -->";
pub const END: &str = "<!-- enforce:end -->";
pub const HEADING: &str = "## Enforcement (fanotify)";

/// The command that reproduces the run (after `cargo build --release -p rampart --features bench`).
pub const COMMAND: &str = "target/release/rampart bench enforce --write-docs";

/// Everything one run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct EnforceReport {
    pub date: String,
    pub quick: bool,
    pub rounds: usize,
    pub measure_ms: u64,
    pub files_per_thread: usize,
    /// What each round ran ([`super::EnforceOptions::workloads`]).
    pub workloads: Vec<Workload>,
    /// Everything pinned to this CPU, if it was (with `listener_cpu`: the
    /// client threads only).
    pub pin_cpu: Option<usize>,
    /// The listeners pinned to this CPU, apart from the clients.
    pub listener_cpu: Option<usize>,
    pub cpus: usize,
    pub kernel: String,
    pub policy: PathBuf,
    pub rampart: PathBuf,
    pub load_start: Option<f64>,
    pub load_end: Option<f64>,
    /// Other tmpfs mounts detached inside the private namespace.
    pub detached_tmpfs: Vec<String>,
    pub variants: Vec<VariantResult>,
    /// The second pass with everything on one CPU, if it ran.
    pub pinned: Option<Box<EnforceReport>>,
    /// The third pass with clients and listeners on two different CPUs, if
    /// it ran.
    pub split: Option<Box<EnforceReport>>,
}

/// The title of the client sleeps tables.
const SLEEPS_TITLE: &str =
    "Sleeps per first touch (voluntary context switches of the client threads per open, medians over rounds)";

/// A row of the by-clients tables: its label, the variant, and the
/// workload at a client count.
type ClientsRow = (String, Listener, fn(usize) -> Workload);

impl EnforceReport {
    pub fn variant(&self, l: Listener) -> Option<&VariantResult> {
        self.variants.iter().find(|v| v.listener == l)
    }

    fn samples(&self, l: Listener, w: Workload) -> Vec<Sample> {
        self.variant(l).map(|v| v.rounds.iter().filter_map(|r| r.sample(w).copied()).collect()).unwrap_or_default()
    }

    /// Median wall time per operation per thread (ns).
    pub fn per_op_ns(&self, l: Listener, w: Workload) -> Option<f64> {
        median(&self.samples(l, w).iter().map(Sample::per_op_ns).collect::<Vec<_>>())
    }

    /// Median operations per second (all threads).
    pub fn ops_per_s(&self, l: Listener, w: Workload) -> Option<f64> {
        median(&self.samples(l, w).iter().map(Sample::ops_per_s).collect::<Vec<_>>())
    }

    /// Median sleeps of the client threads per operation.
    pub fn sleeps_per_op(&self, l: Listener, w: Workload) -> Option<f64> {
        median(&self.samples(l, w).iter().map(Sample::sleeps_per_op).collect::<Vec<_>>())
    }

    /// Median of per-round throughput ratios, `two` over `one` (same variant).
    pub fn scaling(&self, l: Listener, two: Workload, one: Workload) -> Option<f64> {
        let v = self.variant(l)?;
        let ratios: Vec<f64> =
            v.rounds.iter().filter_map(|r| Some(r.sample(two)?.ops_per_s() / r.sample(one)?.ops_per_s())).collect();
        median(&ratios)
    }

    /// The client thread counts run, ascending.
    pub fn clients(&self) -> Vec<usize> {
        self.workloads.iter().filter_map(|w| if let Workload::FirstTouch(n) = w { Some(*n) } else { None }).collect()
    }

    /// Median over the rounds both ran of `a`'s time per operation over
    /// `b`'s (same workload).
    pub fn ratio(&self, a: Listener, b: Listener, w: Workload) -> Option<f64> {
        self.paired(a, b, w, |x, y| x / y)
    }

    /// Median over paired rounds of `l`'s time per operation minus no
    /// listener's: what the listener adds (ns).
    pub fn added_ns(&self, l: Listener, w: Workload) -> Option<f64> {
        self.paired(l, Listener::None, w, |x, y| x - y)
    }

    fn paired(&self, a: Listener, b: Listener, w: Workload, f: impl Fn(f64, f64) -> f64) -> Option<f64> {
        let (va, vb) = (self.variant(a)?, self.variant(b)?);
        let values: Vec<f64> = va
            .rounds
            .iter()
            .filter_map(|ra| {
                let rb = vb.rounds.iter().find(|rb| rb.round == ra.round)?;
                Some(f(ra.sample(w)?.per_op_ns(), rb.sample(w)?.per_op_ns()))
            })
            .collect();
        median(&values)
    }

    fn ready_ms(&self, l: Listener) -> Option<f64> {
        let v = self.variant(l)?;
        median(&v.rounds.iter().filter_map(|r| r.ready_ms).collect::<Vec<_>>())
    }

    fn why_missing(&self, ls: &[Listener]) -> Option<String> {
        for &l in ls {
            match self.variant(l) {
                None => return Some(format!("{} not selected", l.name())),
                Some(v) if v.rounds.is_empty() => {
                    return Some(match &v.status {
                        Status::Skipped(_) | Status::Failed(_) => format!("{} not run, see Variants", l.name()),
                        Status::Ran => format!("{} has no rounds", l.name()),
                    })
                }
                Some(_) => {}
            }
        }
        None
    }

    /// The targets of issues 5 and 8.
    pub fn targets(&self) -> Vec<Goal> {
        use Listener::{Fapolicyd, None as NoListener, Rampartd, Trivial};
        let t = |name: &str, measured: Option<f64>, limit: f64, at_most: bool, needs: &[Listener]| Goal {
            name: name.to_string(),
            measured,
            limit,
            at_most,
            unit: Unit::Ratio,
            missing: if measured.is_some() { None } else { self.why_missing(needs) },
        };
        let mut targets = vec![
            t(
                "steady-state open: rampartd / no listener",
                self.ratio(Rampartd, NoListener, Workload::Open(1)),
                1.3,
                true,
                &[Rampartd, NoListener],
            ),
            t(
                "first-touch open: rampartd / trivial responder",
                self.ratio(Rampartd, Trivial, Workload::FirstTouch(1)),
                1.2,
                true,
                &[Rampartd, Trivial],
            ),
            t(
                "first-touch open: rampartd / fapolicyd",
                self.ratio(Rampartd, Fapolicyd, Workload::FirstTouch(1)),
                0.5,
                true,
                &[Rampartd, Fapolicyd],
            ),
            t(
                "event throughput, 2 threads / 1 thread: rampartd",
                self.scaling(Rampartd, Workload::FirstTouch(2), Workload::FirstTouch(1)),
                1.6,
                false,
                &[Rampartd],
            ),
            t(
                "event throughput, 2 threads / 1 thread: trivial responder",
                self.scaling(Trivial, Workload::FirstTouch(2), Workload::FirstTouch(1)),
                1.6,
                false,
                &[Trivial],
            ),
        ];
        // Issue 8: a confined domain alive costs others little, its own
        // read-only content little, and nothing once it is gone.
        if self.workloads.contains(&Workload::MixedConfined) {
            for (name, w, limit) in Self::MIXED {
                targets.push(t(
                    &format!("mixed domains: {name}, rampartd / no listener"),
                    self.ratio(Rampartd, NoListener, w),
                    limit,
                    true,
                    &[Rampartd, NoListener],
                ));
            }
        }
        // Issue 8: more clients never lower rampartd's throughput below
        // what the kernel lets a trivial responder do, and 8 or more
        // clients get at least 2.5 times one client's.
        for n in self.clients().into_iter().filter(|&n| n > 1) {
            let scaling = |l| self.scaling(l, Workload::FirstTouch(n), Workload::FirstTouch(1));
            let name = format!("event throughput, {n} clients / 1: rampartd, at least the trivial responder's");
            targets.push(match scaling(Trivial) {
                Some(limit) => t(&name, scaling(Rampartd), limit, false, &[Rampartd]),
                None => t(&name, None, f64::NAN, false, &[Trivial]),
            });
            if n >= 8 {
                targets.push(t(
                    &format!("event throughput, {n} clients / 1: rampartd"),
                    scaling(Rampartd),
                    2.5,
                    false,
                    &[Rampartd],
                ));
            }
        }
        targets
    }

    fn status_text(v: &VariantResult) -> String {
        match &v.status {
            Status::Ran => format!("ran {} round{}", v.rounds.len(), if v.rounds.len() == 1 { "" } else { "s" }),
            Status::Skipped(why) => format!("not run: {why}"),
            Status::Failed(why) => format!("failed after {} round(s): {why}", v.rounds.len()),
        }
    }

    fn size_text(&self) -> String {
        format!(
            "{} run: {} interleaved rounds, {} ms per measurement, up to {} fresh files per thread per first-touch run, {}",
            if self.quick { "quick" } else { "full" },
            self.rounds,
            self.measure_ms,
            group(self.files_per_thread as f64),
            match (self.pin_cpu, self.listener_cpu) {
                (Some(c), Some(l)) => format!("clients pinned to CPU {c}, listeners to CPU {l}"),
                (Some(c), None) => format!("everything pinned to CPU {c}"),
                _ => "unpinned".to_string(),
            }
        )
    }

    /// The plain-text table (stdout of the command).
    pub fn text(&self) -> String {
        let mut s = String::new();
        s.push_str(&format!(
            "Enforcement benchmark, {} ({}; kernel {}, {} CPUs; load average {} -> {})\n",
            self.date,
            self.size_text(),
            self.kernel,
            self.cpus,
            num(self.load_start, 2),
            num(self.load_end, 2)
        ));
        s.push_str("Medians over rounds; per-op times are wall time per operation per thread.\n\n");
        s.push_str(&self.table_text());
        s.push_str(&self.clients_text());
        let mixed = self.mixed_rows();
        if !mixed.is_empty() {
            s.push_str(
                "\nMixed domains (Debian's policy; the content is httpd_sys_content_t, read-only for httpd_t):\n",
            );
            s.push_str(&format!(
                "{:<54} {:>10} {:>12} {:>8}\n",
                "opens of the content", "none ns", "rampartd ns", "ratio"
            ));
            for [name, none, rampartd, ratio] in mixed {
                s.push_str(&format!("{name:<54} {none:>10} {rampartd:>12} {ratio:>8}\n"));
            }
        }
        s.push_str("\nTargets (issues 5 and 8):\n");
        for t in self.targets() {
            s.push_str(&format!(
                "  {:<76} {:>8} {:>9}  {}\n",
                t.name,
                times(t.measured),
                t.limit_text(),
                match (&t.missing, t.holds()) {
                    (Some(why), None) => format!("not measured ({why})"),
                    _ => t.verdict().to_string(),
                }
            ));
        }
        let notes: Vec<String> = self
            .variants
            .iter()
            .filter(|v| v.status != Status::Ran || v.marks.is_some())
            .map(|v| {
                let mut n = format!("  {}: {}", v.listener.name(), Self::status_text(v));
                if let Some(m) = &v.marks {
                    n.push_str(&format!("; marks: {m}"));
                }
                n
            })
            .collect();
        if !notes.is_empty() {
            s.push_str("\nVariants:\n");
            for n in notes {
                s.push_str(&n);
                s.push('\n');
            }
        }
        if let Some(p) = &self.pinned {
            let heading = format!(
                "The same rounds with everything on CPU {} (the listeners' own work, without the wake-up of the other CPU; \
                 2 threads share that CPU; load average {} -> {}):",
                p.pin_cpu.unwrap_or(0),
                num(p.load_start, 2),
                num(p.load_end, 2)
            );
            s.push_str(&p.pass_text(&heading, Vec::new()));
        }
        if let Some(p) = &self.split {
            let heading = format!(
                "The same rounds with the clients on CPU {} and the listeners on CPU {} (every event crosses CPUs; \
                 load average {} -> {}):",
                p.pin_cpu.unwrap_or(0),
                p.listener_cpu.unwrap_or(0),
                num(p.load_start, 2),
                num(p.load_end, 2)
            );
            s.push_str(&p.pass_text(&heading, self.crossing_costs()));
        }
        s
    }

    /// The mixed-domain workloads: what each measures, and issue 8's limit
    /// on rampartd over no listener.
    const MIXED: [(&'static str, Workload, f64); 3] = [
        ("unconfined opens while an httpd_t process is alive", Workload::MixedUnconfined, 1.3),
        ("httpd_t opening its own read-only content", Workload::MixedConfined, 1.5),
        ("unconfined opens a second after it exited", Workload::MixedAfter, 1.3),
    ];

    /// The mixed-domain rows: what, no listener's and rampartd's time per
    /// open, and their ratio.
    fn mixed_rows(&self) -> Vec<[String; 4]> {
        if !self.workloads.contains(&Workload::MixedConfined) {
            return Vec::new();
        }
        Self::MIXED
            .iter()
            .map(|&(name, w, _)| {
                [
                    name.to_string(),
                    num(self.per_op_ns(Listener::None, w), 0),
                    num(self.per_op_ns(Listener::Rampartd, w), 0),
                    times(self.ratio(Listener::Rampartd, Listener::None, w)),
                ]
            })
            .collect()
    }

    /// Throughput by client threads, each over one client's, as text.
    fn clients_text(&self) -> String {
        let clients = self.clients();
        let mut s = String::from("\nThroughput by client threads (ops/s, and over 1 client):\n");
        s.push_str(&format!("{:<22}", "variant, workload"));
        for n in &clients {
            s.push_str(&format!(" {:>20}", format!("{n} client{}", if *n == 1 { "" } else { "s" })));
        }
        s.push('\n');
        for (label, l, workload) in self.clients_rows() {
            s.push_str(&format!("{label:<22}"));
            for cell in self.clients_cells(l, workload) {
                s.push_str(&format!(" {cell:>20}"));
            }
            s.push('\n');
        }
        s.push_str(&format!("\n{SLEEPS_TITLE}:\n"));
        s.push_str(&format!("{:<22}", "variant"));
        for n in &clients {
            s.push_str(&format!(" {n:>10}"));
        }
        s.push('\n');
        for (label, cells) in self.sleeps_rows() {
            s.push_str(&format!("{label:<22}"));
            for cell in cells {
                s.push_str(&format!(" {cell:>10}"));
            }
            s.push('\n');
        }
        s
    }

    /// Sleeps per first touch of each variant that ran, by client count.
    fn sleeps_rows(&self) -> Vec<(String, Vec<String>)> {
        self.variants
            .iter()
            .filter(|v| !v.rounds.is_empty())
            .map(|v| {
                let cells = self
                    .clients()
                    .into_iter()
                    .map(|n| num(self.sleeps_per_op(v.listener, Workload::FirstTouch(n)), 2))
                    .collect();
                (v.listener.name().to_string(), cells)
            })
            .collect()
    }

    /// The rows of the by-clients tables: each variant that ran, steady
    /// opens and first touches.
    fn clients_rows(&self) -> Vec<ClientsRow> {
        let mut rows: Vec<ClientsRow> = Vec::new();
        for v in self.variants.iter().filter(|v| !v.rounds.is_empty()) {
            rows.push((format!("{} open", v.listener.name()), v.listener, Workload::Open));
            rows.push((format!("{} first touch", v.listener.name()), v.listener, Workload::FirstTouch));
        }
        rows
    }

    /// `workload(N)`'s throughput for each client count N, with its ratio
    /// over one client's.
    fn clients_cells(&self, l: Listener, workload: fn(usize) -> Workload) -> Vec<String> {
        self.clients()
            .into_iter()
            .map(|n| {
                let rate = num_group(self.ops_per_s(l, workload(n)));
                if n == 1 {
                    rate
                } else {
                    format!("{rate} ({})", times(self.scaling(l, workload(n), workload(1))))
                }
            })
            .collect()
    }

    /// This placement pass (pinned or split) as text: `heading`, the
    /// table, its ratios and `extra` ones.
    fn pass_text(&self, heading: &str, extra: Vec<(String, Option<f64>)>) -> String {
        let mut s = format!("\n{heading}\n\n");
        s.push_str(&self.table_text());
        s.push('\n');
        for (name, r) in self.placement_ratios().into_iter().chain(extra) {
            s.push_str(&format!("  {name:<58} {:>8}\n", times(r)));
        }
        s
    }

    fn table_text(&self) -> String {
        let mut s = String::new();
        s.push_str(&format!(
            "{:<10} {:>11} {:>12} {:>12} {:>6} {:>12} {:>10} {:>12} {:>12} {:>6} {:>9} {:>8}\n",
            "variant",
            "steady ns",
            "open/s 1T",
            "open/s 2T",
            "2T/1T",
            "1st-touch ns",
            "added ns",
            "events/s 1T",
            "events/s 2T",
            "2T/1T",
            "exec µs",
            "ready ms"
        ));
        for v in &self.variants {
            let l = v.listener;
            if v.rounds.is_empty() {
                s.push_str(&format!("{:<10} {}\n", l.name(), Self::status_text(v)));
                continue;
            }
            s.push_str(&format!(
                "{:<10} {:>11} {:>12} {:>12} {:>6} {:>12} {:>10} {:>12} {:>12} {:>6} {:>9} {:>8}\n",
                l.name(),
                num(self.per_op_ns(l, Workload::Open(1)), 0),
                num_group(self.ops_per_s(l, Workload::Open(1))),
                num_group(self.ops_per_s(l, Workload::Open(2))),
                times(self.scaling(l, Workload::Open(2), Workload::Open(1))),
                num(self.per_op_ns(l, Workload::FirstTouch(1)), 0),
                if l == Listener::None { "-".into() } else { num(self.added_ns(l, Workload::FirstTouch(1)), 0) },
                num_group(self.ops_per_s(l, Workload::FirstTouch(1))),
                num_group(self.ops_per_s(l, Workload::FirstTouch(2))),
                times(self.scaling(l, Workload::FirstTouch(2), Workload::FirstTouch(1))),
                num(self.per_op_ns(l, Workload::Exec).map(|n| n / 1000.0), 1),
                num(self.ready_ms(l), 0),
            ));
        }
        s
    }

    /// First-touch open on different CPUs over the same on one CPU, per
    /// listener: what crossing CPUs costs an event (information).
    fn crossing_costs(&self) -> Vec<(String, Option<f64>)> {
        let (Some(split), Some(pinned)) = (&self.split, &self.pinned) else {
            return Vec::new();
        };
        [Listener::Trivial, Listener::Fapolicyd, Listener::Rampartd]
            .into_iter()
            .map(|l| {
                let cross = split.per_op_ns(l, Workload::FirstTouch(1));
                let same = pinned.per_op_ns(l, Workload::FirstTouch(1));
                let ratio = cross.zip(same).filter(|(_, s)| *s > 0.0).map(|(c, s)| c / s);
                (format!("first-touch open, other CPU / same CPU: {}", l.name()), ratio)
            })
            .collect()
    }

    /// Ratios of the first-touch and steady-state opens between variants,
    /// for a pinned or split pass (information, not targets).
    fn placement_ratios(&self) -> Vec<(String, Option<f64>)> {
        use Listener::{Fapolicyd, None as NoListener, Rampartd, Trivial};
        vec![
            ("steady-state open: rampartd / no listener".into(), self.ratio(Rampartd, NoListener, Workload::Open(1))),
            (
                "first-touch open: rampartd / trivial responder".into(),
                self.ratio(Rampartd, Trivial, Workload::FirstTouch(1)),
            ),
            ("first-touch open: rampartd / fapolicyd".into(), self.ratio(Rampartd, Fapolicyd, Workload::FirstTouch(1))),
            (
                "first-touch open: fapolicyd / trivial responder".into(),
                self.ratio(Fapolicyd, Trivial, Workload::FirstTouch(1)),
            ),
        ]
    }

    /// The docs section (heading included, markers excluded); `img` the
    /// folder of [`Self::charts`]' files relative to the document (`None`:
    /// no charts).
    pub fn markdown(&self, command: &str, img: Option<&str>) -> String {
        let mut s = String::new();
        s.push_str(&format!("{HEADING}\n\n"));
        s.push_str("What a fanotify permission listener costs the processes it watches (issue 5). Reproduce (as root; builds `rampart` first so that rampartd is measured):\n\n");
        s.push_str(&format!("```sh\ncargo build --release -p rampart --features bench\n{command}\n```\n\n"));
        s.push_str("(`--quick` for a one-minute run, `--json` for everything measured.)\n\n");
        s.push_str(&format!(
            "Run of {} ({}) on a machine with {} CPUs, kernel {}, shared with other jobs (load average {} at the start, {} at the end). \
             Each round starts each listener in turn (order rotated per round), warms up, runs every workload once and stops it; \
             figures are medians over rounds, ratios medians of per-round ratios. Times are wall time per operation per thread.\n\n",
            self.date,
            self.size_text(),
            self.cpus,
            self.kernel,
            num(self.load_start, 2),
            num(self.load_end, 2)
        ));
        s.push_str("### Targets\n\n");
        let mut table = Table::new(&mut s, &["target", "measured", "limit", "holds"]);
        for t in self.targets() {
            let holds = match (t.holds(), &t.missing) {
                (Some(true), _) => "yes".to_string(),
                (Some(false), _) => "**no**".to_string(),
                (None, Some(why)) => format!("not measured: {why}"),
                (None, None) => "not measured".to_string(),
            };
            table.row(&[&t.name, &times(t.measured), &t.limit_text(), &holds]);
        }
        s.push_str(
            "\nFirst-touch ratios compare the whole open + close (about a microsecond of it is the system calls \
             themselves); the column \"added\" below is the listener's share alone. \
             Placement matters: unpinned, an event usually wakes the listener on the other CPU, and on a virtual machine \
             waking an idle CPU can cost more than the listener's own work, for every listener alike; \
             the second pass (everything on one CPU, below) shows the listeners' own work instead.\n\n",
        );

        s.push_str("### Latency\n\n");
        s.push_str(&self.latency_md());
        s.push_str("\n### Throughput, 1 and 2 threads\n\n");
        let mut table = Table::new(
            &mut s,
            &[
                "variant",
                "steady opens/s, 1 thread",
                "2 threads",
                "2T/1T",
                "first-touch events/s, 1 thread",
                "2 threads",
                "2T/1T",
            ],
        );
        for v in self.variants.iter().filter(|v| !v.rounds.is_empty()) {
            let l = v.listener;
            table.row(&[
                &format!("`{}`", l.name()),
                &num_group(self.ops_per_s(l, Workload::Open(1))),
                &num_group(self.ops_per_s(l, Workload::Open(2))),
                &times(self.scaling(l, Workload::Open(2), Workload::Open(1))),
                &num_group(self.ops_per_s(l, Workload::FirstTouch(1))),
                &num_group(self.ops_per_s(l, Workload::FirstTouch(2))),
                &times(self.scaling(l, Workload::FirstTouch(2), Workload::FirstTouch(1))),
            ]);
        }
        let clients = self.clients();
        s.push_str("\n### Throughput by client threads\n\nOperations per second of all client threads together, and in parentheses over one client's (medians of per-round ratios); `--clients` sets the counts.\n\n");
        let headers: Vec<String> = clients.iter().map(usize::to_string).collect();
        let columns: Vec<&str> =
            std::iter::once("variant, workload").chain(headers.iter().map(String::as_str)).collect();
        let mut table = Table::new(&mut s, &columns);
        for (label, l, workload) in self.clients_rows() {
            table.row_of(std::iter::once(label).chain(self.clients_cells(l, workload)));
        }
        s.push_str(&format!(
            "\n{SLEEPS_TITLE}: an open sleeps once if its answer is not there when it starts to wait \
             (none if it is); each sleep more is a wake-up for another opener's answer (the group's one wait queue) \
             or a wait for a lock.\n\n"
        ));
        let columns: Vec<&str> = std::iter::once("variant").chain(headers.iter().map(String::as_str)).collect();
        let mut table = Table::new(&mut s, &columns);
        for (label, cells) in self.sleeps_rows() {
            table.row_of(std::iter::once(label).chain(cells));
        }
        if let Some(dir) = img {
            s.push_str(&format!(
                "\n![first-touch events per second by client threads]({dir}/{})\n\n\
                 ![first-touch events per second over one client's, by client threads]({dir}/{})\n",
                charts::THROUGHPUT,
                charts::SCALING
            ));
        }
        let mixed = self.mixed_rows();
        if !mixed.is_empty() {
            s.push_str("\n### Mixed domains\n\nOpen + close of a file labeled `httpd_sys_content_t` (Debian's policy: `httpd_t` may read it, not write it), 1 client: by the benchmark while an `httpd_t` process (`rampart run --force --context httpd_t -- sleep`) is alive, by a client in `httpd_t` (`rampart run` of `bench enforce --open-loop`), and by the benchmark a second after the `httpd_t` process exited. Without a listener the same opens, the client started directly.\n\n");
            let mut table = Table::new(
                &mut s,
                &["opens of the content", "no listener, ns", "rampartd, ns", "rampartd / no listener"],
            );
            for row in mixed {
                table.row_of(row);
            }
        }
        if let Some(p) = &self.pinned {
            s.push_str(&format!(
                "\n### The same rounds, everything on CPU {}\n\n\
                 Client threads and listeners all on one CPU (load average {} at the start, {} at the end): an event is a switch to the listener and back \
                 on the same CPU, with no wake-up of an idle CPU, so this is the listeners' own work per event. \
                 Two threads cannot run at once here, so throughputs are not shown.\n\n",
                p.pin_cpu.unwrap_or(0),
                num(p.load_start, 2),
                num(p.load_end, 2)
            ));
            s.push_str(&p.latency_md());
            s.push('\n');
            let mut table = Table::new(&mut s, &["ratio (same CPU)", "measured"]);
            for (name, r) in p.placement_ratios() {
                table.row(&[&name, &times(r)]);
            }
        }
        if let Some(p) = &self.split {
            s.push_str(&format!(
                "\n### The same rounds, clients on CPU {} and listeners on CPU {}\n\n\
                 Every event crosses CPUs (load average {} at the start, {} at the end): the opener's CPU goes idle while it waits, \
                 and the answer must wake it from the other CPU. Beside the pass above (same work, one CPU) this prices that wake-up.\n\n",
                p.pin_cpu.unwrap_or(0),
                p.listener_cpu.unwrap_or(0),
                num(p.load_start, 2),
                num(p.load_end, 2)
            ));
            s.push_str(&p.latency_md());
            s.push('\n');
            let mut table = Table::new(&mut s, &["ratio", "measured"]);
            for (name, r) in p.placement_ratios().into_iter().chain(self.crossing_costs()) {
                table.row(&[&name, &times(r)]);
            }
        }
        s.push_str("\n### Workloads and variants\n\n");
        s.push_str(
            "All on one tmpfs the benchmark mounts in a private mount namespace (nothing outside it is mounted or marked); the client runs in that namespace too.\n\n\
             - steady-state open: open(O_RDONLY) + close of one 4 KiB file after warm-up; a listener that caches in the kernel (ignore marks) sees no events any more.\n\
             - first-touch open: open + close of files created with mknod (no open) just before, each opened once: every open is a permission event whatever the listener caches. With 2 threads (each its own files) it is the event throughput.\n\
             - exec: fork + execve + waitpid of a copy of /bin/true on the tmpfs (an exec and an open event; its libraries are on the unmarked root).\n\n",
        );
        let mut table = Table::new(&mut s, &["variant", "what", "status", "marks found (fdinfo)"]);
        for v in &self.variants {
            table.row(&[
                &format!("`{}`", v.listener.name()),
                &v.listener.describe(),
                &Self::status_text(v),
                &v.marks.clone().unwrap_or_else(|| "-".into()),
            ]);
        }
        s.push_str(&format!(
            "\nfapolicyd's confinement: it runs in the foreground (`--debug-deny`) in the namespace, with private directories bind-mounted over `/etc/fapolicyd`, `/var/lib/fapolicyd` and `/run` there; \
             configuration: `watch_fs = tmpfs`, `allow_filesystem_mark = 0` (mount marks only), `permissive = 1`, `uid = root`, `gid = root`, `trust = file` with one entry, `nice_val = 0`, rules `allow perm=any all : all`. \
             fapolicyd marks every mount of a watched type in its /proc/mounts, so the other tmpfs mounts of the namespace's copy of the tree were detached there first ({}); \
             after each start the marks of every listener were read from /proc/PID/fdinfo, and a listener with any mark off the benchmark tmpfs would have been stopped and not measured.\n",
            match self.detached_tmpfs.len() {
                0 => "there were none".to_string(),
                n => format!("{n}, such as `/dev/shm`; the list is in the JSON"),
            }
        ));
        s
    }

    fn latency_md(&self) -> String {
        let mut s = String::new();
        let mut table = Table::new(
            &mut s,
            &[
                "variant",
                "steady-state open (ns)",
                "first-touch open (ns)",
                "first touch, added over none (ns)",
                "exec (µs)",
                "exec, added over none (µs)",
                "ready after start (ms)",
            ],
        );
        for v in &self.variants {
            let l = v.listener;
            let name = format!("`{}`", l.name());
            if v.rounds.is_empty() {
                table.row(&[&name, &Self::status_text(v), &"", &"", &"", &"", &""]);
                continue;
            }
            let none = l == Listener::None;
            let or_dash = |x: String| if none { "-".to_string() } else { x };
            table.row(&[
                &name,
                &num_group(self.per_op_ns(l, Workload::Open(1))),
                &num_group(self.per_op_ns(l, Workload::FirstTouch(1))),
                &or_dash(num_group(self.added_ns(l, Workload::FirstTouch(1)))),
                &num(self.per_op_ns(l, Workload::Exec).map(|n| n / 1000.0), 1),
                &or_dash(num(self.added_ns(l, Workload::Exec).map(|n| n / 1000.0), 1)),
                &or_dash(num(self.ready_ms(l), 0)),
            ]);
        }
        s
    }

    /// Replaces the enforcement section of `out` (or appends it) and
    /// draws the charts into `img/` beside it; returns the files written.
    pub fn write_docs(&self, out: &Path, command: &str) -> Result<Vec<PathBuf>, BenchError> {
        let existing = match std::fs::read_to_string(out) {
            Ok(s) => s,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(BenchError::Io { what: format!("cannot read {}", out.display()), source: e }),
        };
        let dir = out.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let mut written = self.charts(&dir.join("img"))?;
        let text = replace_section(&existing, &self.markdown(command, Some("img")));
        std::fs::write(out, text).map_err(BenchError::io(format!("cannot write {}", out.display())))?;
        written.push(out.to_path_buf());
        Ok(written)
    }
}

/// `existing` with the enforcement section replaced by `section` (or
/// appended, markers included).
pub fn replace_section(existing: &str, section: &str) -> String {
    crate::docs::replace_between(existing, BEGIN, END, section)
}

fn num(v: Option<f64>, decimals: usize) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:.decimals$}"),
        _ => "n/a".into(),
    }
}

fn num_group(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() => group(x),
        _ => "n/a".into(),
    }
}

fn times(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:.2}x"),
        _ => "n/a".into(),
    }
}

#[cfg(test)]
mod report_tests {
    use super::*;
    use crate::enforce::RoundResult;
    use serde_json::{json, Value};

    fn sample(ns_per_op: u64, threads: usize) -> Sample {
        Sample { ops: 1000 * threads as u64, threads, wall_ns: ns_per_op * 1000, sleeps: Some(1000 * threads as u64) }
    }

    fn variant(l: Listener, open: u64, first: u64, first2: u64) -> VariantResult {
        let r = |round| RoundResult {
            round,
            ready_ms: Some(1.0),
            samples: vec![
                (Workload::Open(1), sample(open, 1)),
                (Workload::Open(2), sample(open, 2)),
                (Workload::FirstTouch(1), sample(first, 1)),
                (Workload::FirstTouch(2), sample(first2, 2)),
                (Workload::Exec, Sample { sleeps: None, ..sample(300_000, 1) }),
            ],
        };
        VariantResult { listener: l, status: Status::Ran, rounds: vec![r(0), r(1), r(2)], marks: None }
    }

    fn report() -> EnforceReport {
        EnforceReport {
            date: "2026-01-01".into(),
            quick: true,
            rounds: 3,
            measure_ms: 250,
            files_per_thread: 10,
            workloads: crate::enforce::EnforceOptions { clients: vec![1, 2], mixed: false, ..Default::default() }
                .workloads(),
            pin_cpu: None,
            listener_cpu: None,
            cpus: 2,
            kernel: "6.18".into(),
            policy: PathBuf::from("p"),
            rampart: PathBuf::from("r"),
            load_start: Some(1.0),
            load_end: Some(2.0),
            detached_tmpfs: vec![],
            pinned: None,
            split: None,
            variants: vec![
                variant(Listener::None, 1000, 1000, 1000),
                variant(Listener::Trivial, 5000, 5000, 6000),
                VariantResult {
                    listener: Listener::Fapolicyd,
                    status: Status::Skipped("no".into()),
                    rounds: vec![],
                    marks: None,
                },
                variant(Listener::Rampartd, 1100, 5500, 5000),
            ],
        }
    }

    #[test]
    fn ratios_and_targets() {
        let r = report();
        assert_eq!(r.ratio(Listener::Rampartd, Listener::None, Workload::Open(1)), Some(1.1));
        assert_eq!(r.added_ns(Listener::Trivial, Workload::FirstTouch(1)), Some(4000.0));
        // 2 threads at 6000 ns per op each: 2/6000 vs 1/5000 per ns.
        let s = r.scaling(Listener::Trivial, Workload::FirstTouch(2), Workload::FirstTouch(1)).unwrap();
        assert!((s - 5.0 / 3.0).abs() < 1e-9);
        let t = r.targets();
        assert_eq!(t[0].holds(), Some(true));
        assert_eq!(t[1].holds(), Some(true)); // 1.1x <= 1.2x
        assert_eq!(t[2].holds(), None);
        assert!(t[2].missing.as_deref().unwrap().contains("fapolicyd not run"), "{:?}", t[2].missing);
        assert_eq!(t[3].holds(), Some(true)); // 2 * 5500 / 5000 = 2.2
        assert_eq!(t[4].holds(), Some(true));
        // Issue 8 at 2 clients: rampartd's 2.2x against the trivial
        // responder's 5/3.
        assert!((t[5].limit - 5.0 / 3.0).abs() < 1e-9, "{}", t[5].limit);
        assert_eq!(t[5].holds(), Some(true));
        let text = r.text();
        assert!(text.contains("rampartd first touch"), "{text}");
        assert!(text.contains("fapolicyd  not run: no"));
        let md = r.markdown(COMMAND, None);
        assert!(md.starts_with(HEADING));
        assert!(md.contains(COMMAND));
        let j = r.to_json();
        assert_eq!(j["variants"][1]["name"], "trivial");
        assert_eq!(j["targets"].as_array().unwrap().len(), 6);
        assert_eq!(j["clients"], json!([1, 2]));
        // 1000 opens in 5.5 ms; 2 threads: 2000 in 5 ms.
        assert!(md.contains("| rampartd first touch | 181,818 | 400,000 (2.20x) |"), "{md}");
    }

    #[test]
    fn write_docs_draws_the_charts_it_links() {
        let r = report();
        let dir = std::env::temp_dir().join(format!("rampart-enforce-docs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("bench.md");
        std::fs::write(&out, "# B\n").unwrap();
        let written = r.write_docs(&out, COMMAND).unwrap();
        let md = std::fs::read_to_string(&out).unwrap();
        for file in [charts::THROUGHPUT, charts::SCALING] {
            let png = dir.join("img").join(file);
            assert!(written.contains(&png), "{written:?}");
            assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
            assert!(md.contains(&format!("(img/{file})")), "{md}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_split_pass_is_priced_against_the_pinned_one() {
        let mut r = report();
        assert!(r.crossing_costs().is_empty(), "nothing to compare without both passes");
        let mut pinned = report();
        pinned.pin_cpu = Some(0);
        let mut split = report();
        split.pin_cpu = Some(0);
        split.listener_cpu = Some(1);
        split.variants[1] = variant(Listener::Trivial, 5000, 12_500, 6000);
        r.pinned = Some(Box::new(pinned));
        r.split = Some(Box::new(split));
        let costs = r.crossing_costs();
        assert_eq!(costs[0], ("first-touch open, other CPU / same CPU: trivial".to_string(), Some(2.5)));
        assert_eq!(costs[1].1, None, "fapolicyd did not run");
        assert_eq!(costs[2].1, Some(1.0));
        assert!(r.text().contains("clients on CPU 0 and the listeners on CPU 1"));
        assert!(r.markdown(COMMAND, None).contains("| first-touch open, other CPU / same CPU: trivial | 2.50x |"));
        assert_eq!(r.to_json()["split"]["listener_cpu"], 1);
    }

    #[test]
    fn mixed_domains_are_priced_against_no_listener() {
        let mut r = report();
        r.workloads.extend([Workload::MixedUnconfined, Workload::MixedConfined, Workload::MixedAfter]);
        for (l, unconfined, confined) in [(0, 1000, 1000), (3, 1200, 2000)] {
            for round in &mut r.variants[l].rounds {
                round.samples.extend([
                    (Workload::MixedUnconfined, sample(unconfined, 1)),
                    (Workload::MixedConfined, sample(confined, 1)),
                    (Workload::MixedAfter, sample(1000, 1)),
                ]);
            }
        }
        let targets = r.targets();
        let mixed: Vec<&Goal> = targets.iter().filter(|t| t.name.starts_with("mixed")).collect();
        assert_eq!(mixed.len(), 3);
        // 1200 / 1000 <= 1.3; 2000 / 1000 > 1.5; 1000 / 1000 <= 1.3.
        assert_eq!(mixed.iter().map(|t| t.holds()).collect::<Vec<_>>(), [Some(true), Some(false), Some(true)]);
        assert!(r.text().contains("httpd_t opening its own read-only content"));
        assert!(r
            .markdown(COMMAND, None)
            .contains("| httpd_t opening its own read-only content | 1000 | 2000 | 2.00x |"));
    }

    #[test]
    fn json_keeps_its_keys_and_kinds() {
        let mut r = report();
        r.variants[2].status = Status::Failed("boom \"x\"".into());
        r.variants[1].marks = Some("1 mount mark".into());
        r.detached_tmpfs = vec!["/dev/shm".into()];
        r.load_end = None;
        let mut pinned = report();
        pinned.pin_cpu = Some(0);
        pinned.variants[1].status = Status::Skipped("nope".into());
        pinned.variants[1].rounds.clear();
        let mut split = report();
        split.pin_cpu = Some(0);
        split.listener_cpu = Some(1);
        split.workloads.extend([Workload::MixedUnconfined, Workload::MixedConfined, Workload::MixedAfter]);
        r.pinned = Some(Box::new(pinned));
        r.split = Some(Box::new(split));
        let json: Value = serde_json::from_str(&r.json_text()).unwrap();
        crate::report::json::contract::assert_shape(&json, true, "enforce_json_shape.txt");
    }

    #[test]
    fn section_markers() {
        let doc = format!("# B\n\n{BEGIN}\nold\n{END}\n\n## Other\n");
        assert_eq!(replace_section(&doc, "new\n"), format!("# B\n\n{BEGIN}\nnew\n{END}\n\n## Other\n"));
        assert_eq!(replace_section("# B\n", "s"), format!("# B\n\n{BEGIN}\ns\n{END}\n"));
    }
}
