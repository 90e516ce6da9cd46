//! What the enforcement benchmark talks about: who listens
//! ([`Listener`]), what is timed ([`Workload`]), and what a round and a
//! variant yield. Shared by the runner (the parent module), the
//! mixed-domain workloads and the report, so none of them depends on
//! another for its vocabulary.

use super::workloads::Sample;

/// Who answers the permission events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Listener {
    /// No fanotify listener at all.
    None,
    /// The allow-all responder of [`super::responder`].
    Trivial,
    /// fapolicyd 1.1.7, one allow-all rule, permissive.
    Fapolicyd,
    /// `rampart daemon`.
    Rampartd,
}

impl Listener {
    pub const ALL: [Listener; 4] = [Listener::None, Listener::Trivial, Listener::Fapolicyd, Listener::Rampartd];

    pub fn name(self) -> &'static str {
        match self {
            Listener::None => "none",
            Listener::Trivial => "trivial",
            Listener::Fapolicyd => "fapolicyd",
            Listener::Rampartd => "rampartd",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Listener::None => "no fanotify listener",
            Listener::Trivial => {
                "a process with one thread: poll, read, answer FAN_ALLOW at once, close the event's fd \
                 (FAN_CLASS_CONTENT, mount mark FAN_OPEN_PERM | FAN_OPEN_EXEC_PERM)"
            }
            Listener::Fapolicyd => {
                "fapolicyd 1.1.7 (Debian 12), `allow perm=any all : all`, permissive, watching only the tmpfs"
            }
            Listener::Rampartd => "`rampart daemon --mark` the tmpfs, Debian's policy.33",
        }
    }

    pub fn parse(s: &str) -> Option<Listener> {
        Listener::ALL.into_iter().find(|l| l.name() == s)
    }
}

/// The timed workloads; each round runs [`super::EnforceOptions::workloads`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Workload {
    /// open + close of one file after warm-up by N client threads (the
    /// steady state).
    Open(usize),
    /// open + close of fresh files by N client threads, each its own
    /// files (first touch; with N > 1, the event throughput).
    FirstTouch(usize),
    /// fork + exec + wait of a copy of /bin/true on the tmpfs.
    Exec,
    /// Opens of `httpd_t`'s content by the benchmark while an `httpd_t`
    /// process is alive ([`super::mixed`]).
    MixedUnconfined,
    /// The same content opened by a client in `httpd_t`.
    MixedConfined,
    /// The benchmark's opens again, a second after the `httpd_t` process
    /// exited.
    MixedAfter,
}

impl Workload {
    pub fn name(self) -> String {
        match self {
            Workload::Open(n) => format!("open_{n}t"),
            Workload::FirstTouch(n) => format!("first_touch_{n}t"),
            Workload::Exec => "exec".to_string(),
            Workload::MixedUnconfined => "mixed_unconfined_open".to_string(),
            Workload::MixedConfined => "mixed_confined_open".to_string(),
            Workload::MixedAfter => "mixed_after_exit_open".to_string(),
        }
    }
}

/// How a variant's run went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Ran,
    /// Not run at all, with the reason.
    Skipped(String),
    /// Stopped after an error; the rounds before it are kept.
    Failed(String),
}

/// One round of one variant.
#[derive(Clone, Debug, PartialEq)]
pub struct RoundResult {
    pub round: usize,
    /// Time from start until the listener was ready (listeners only).
    pub ready_ms: Option<f64>,
    /// Each workload's sample, in the order run.
    pub samples: Vec<(Workload, Sample)>,
}

impl RoundResult {
    pub fn sample(&self, w: Workload) -> Option<&Sample> {
        self.samples.iter().find(|(x, _)| *x == w).map(|(_, s)| s)
    }

    pub(super) fn per_op_ns(&self, w: Workload) -> f64 {
        self.sample(w).map_or(f64::NAN, Sample::per_op_ns)
    }
}

/// One variant's results.
#[derive(Clone, Debug, PartialEq)]
pub struct VariantResult {
    pub listener: Listener,
    pub status: Status,
    pub rounds: Vec<RoundResult>,
    /// Where the listener's marks were found (confinement check).
    pub marks: Option<String>,
}
