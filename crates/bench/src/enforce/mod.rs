//! The enforcement benchmark (issue 5, "Performance"): what a fanotify
//! permission listener costs the processes it watches, for no listener,
//! a trivial allow-all responder, fapolicyd and rampartd, side by side on
//! the same tmpfs file.
//!
//! # Safety of the machine
//!
//! Everything that mounts or marks runs on one driver thread that first
//! moves into a private mount namespace ([`namespace`]), and on threads
//! and processes started from it. The only file systems mounted, and the
//! only mount ever marked, are a ramfs and a tmpfs the benchmark mounts
//! there itself; each external listener's marks are read back from
//! `/proc/<pid>/fdinfo` after it starts and again after each round, and
//! it is stopped at once if any is elsewhere. Listeners are ended by pid
//! (SIGTERM, then SIGKILL), on every exit path, and also die with the
//! driver thread (PR_SET_PDEATHSIG); a watchdog kills a listener whose
//! round overruns, which releases (allows) whatever it left pending. Every
//! loop is bounded in time.
//!
//! # Method
//!
//! Rounds are interleaved: each round starts each listener in turn (in an
//! order rotated per round), warms up, runs every workload
//! ([`workloads`]) once and stops the listener, so a slow period of the
//! shared machine spreads over all variants. Figures are medians over
//! rounds; ratios between variants, and 2-thread over 1-thread
//! throughputs, are medians of per-round ratios.
//!
//! Entry points: [`run`] with [`EnforceOptions`], then the renderings of
//! [`EnforceReport`] in [`report`] (`text`, `json`, `markdown`,
//! `write_docs`).

pub mod fapolicyd;
pub mod mixed;
mod model;
pub mod namespace;
pub mod process;
pub mod rampartd;
pub mod report;
pub mod responder;
pub mod workloads;

use std::path::PathBuf;
use std::time::Duration;

use crate::error::BenchError;
use namespace::Sandbox;
use process::{OwnedPid, Watchdog};
use responder::Responder;
use workloads::Sample;

pub use model::{Listener, RoundResult, Status, VariantResult, Workload};
pub use report::EnforceReport;

/// The default policy rampartd is started with.
pub const DEFAULT_POLICY: &str = "/etc/selinux/default/policy/policy.33";

/// What to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnforceOptions {
    /// About a minute instead of several: fewer and shorter rounds.
    pub quick: bool,
    /// Rounds (default 7, quick 3).
    pub rounds: Option<usize>,
    /// Time per measurement (default 750 ms, quick 250 ms).
    pub measure: Option<Duration>,
    /// The variants to run, in this order in the first round.
    pub listeners: Vec<Listener>,
    /// The `rampart` binary for rampartd.
    pub rampart: PathBuf,
    /// The policy rampartd loads.
    pub policy: PathBuf,
    /// Progress lines on stderr.
    pub progress: bool,
    /// Runs everything (client threads, listeners, their threads) on this
    /// one CPU. Unpinned (the default), an event usually wakes the
    /// listener on the other, idle CPU, and on a virtual machine that
    /// wake-up can cost more than the listener's own work; pinned, the
    /// listener's work shows, but two threads cannot run at once.
    pub pin_cpu: Option<usize>,
    /// After the unpinned rounds, the same rounds again with everything on
    /// the first allowed CPU (in [`EnforceReport::pinned`]): the
    /// listeners' own work per event, without the cross-CPU wake-up.
    /// Ignored when `pin_cpu` is set.
    pub pinned_pass: bool,
    /// Client thread counts of the open and first-touch workloads (1 is
    /// always run: ratios are over it).
    pub clients: Vec<usize>,
    /// The mixed-domain workloads ([`mixed`]), for no listener and
    /// rampartd.
    pub mixed: bool,
    /// Then the same rounds with the client threads on the first allowed
    /// CPU and the listeners on the second (in [`EnforceReport::split`]):
    /// every event crosses CPUs, so beside the pinned pass this prices the
    /// cross-CPU wake-up itself. Ignored when `pin_cpu` is set or fewer
    /// than two CPUs are allowed.
    pub split_pass: bool,
}

impl Default for EnforceOptions {
    fn default() -> Self {
        EnforceOptions {
            quick: false,
            rounds: None,
            measure: None,
            listeners: Listener::ALL.to_vec(),
            rampart: rampartd::default_binary(),
            policy: PathBuf::from(DEFAULT_POLICY),
            progress: true,
            pin_cpu: None,
            pinned_pass: true,
            split_pass: true,
            clients: crate::params::default_threads(),
            mixed: true,
        }
    }
}

impl EnforceOptions {
    /// Each round's workloads, in order: the opens, the first touches (1
    /// client, then each other count), the exec.
    pub fn workloads(&self) -> Vec<Workload> {
        let mut clients = self.clients.clone();
        clients.push(1);
        clients.sort_unstable();
        clients.dedup();
        let opens = clients.iter().map(|&n| Workload::Open(n));
        let firsts = clients.iter().map(|&n| Workload::FirstTouch(n));
        let mixed = [Workload::MixedUnconfined, Workload::MixedConfined, Workload::MixedAfter];
        let mixed = mixed.into_iter().filter(|_| self.mixed && self.listeners.contains(&Listener::Rampartd));
        opens.chain(firsts).chain([Workload::Exec]).chain(mixed).collect()
    }

    pub fn rounds(&self) -> usize {
        self.rounds.unwrap_or(if self.quick { 3 } else { 7 }).max(1)
    }

    pub fn measure(&self) -> Duration {
        self.measure.unwrap_or(Duration::from_millis(if self.quick { 250 } else { 750 }))
    }

    /// Fresh files per thread per first-touch run: enough for the
    /// measurement time at the fastest event rate expected.
    pub fn files_per_thread(&self) -> usize {
        if self.quick {
            40_000
        } else {
            100_000
        }
    }
}

/// Runs the benchmark. Needs root (mount namespace, fanotify); must not be
/// called while another run is going on in the same process.
pub fn run(options: &EnforceOptions) -> Result<EnforceReport, BenchError> {
    // SAFETY: geteuid takes no arguments and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Err(BenchError::Workload(
            "the enforcement benchmark needs root (a private mount namespace and fanotify)".into(),
        ));
    }
    let outside = namespace::own_namespace()?;
    let opts = options.clone();
    let driver = std::thread::Builder::new()
        .name("rampart-enforce".into())
        .spawn(move || run_in_namespace(&opts, &outside))
        .map_err(BenchError::io("cannot start the benchmark thread"))?;
    driver.join().unwrap_or_else(|_| Err(BenchError::Workload("the benchmark thread panicked".into())))
}

/// Pins the calling thread (and so everything it starts) to `cpu`.
fn pin_to(cpu: usize) -> Result<(), BenchError> {
    if cpu >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
        return Err(BenchError::Workload(format!("no CPU {cpu}")));
    }
    // SAFETY: cpu_set_t is a plain bitmask; all-zero bytes are a valid
    // (empty) value.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` is below the set's size in bits (checked above).
    unsafe { libc::CPU_SET(cpu, &mut set) };
    set_affinity(&set)
}

/// The calling thread's CPU affinity.
fn affinity() -> Result<libc::cpu_set_t, BenchError> {
    // SAFETY: all-zero bytes are a valid (empty) cpu_set_t.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed.
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
        return Err(BenchError::Io { what: "sched_getaffinity".into(), source: std::io::Error::last_os_error() });
    }
    Ok(set)
}

fn set_affinity(set: &libc::cpu_set_t) -> Result<(), BenchError> {
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is the
    // calling thread.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) } != 0 {
        return Err(BenchError::Io { what: "sched_setaffinity".into(), source: std::io::Error::last_os_error() });
    }
    Ok(())
}

/// Files every round uses.
struct Files {
    steady: PathBuf,
    exe: PathBuf,
    /// `httpd_t`'s content ([`mixed`]).
    content: PathBuf,
    /// The cgroup v2 hierarchy mounted for the mixed-domain workloads.
    cgroups: Option<PathBuf>,
}

fn load_avg() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}

/// The whole run, on the driver thread.
fn run_in_namespace(options: &EnforceOptions, outside: &str) -> Result<EnforceReport, BenchError> {
    namespace::enter_private_namespace()?;
    if let Some(cpu) = options.pin_cpu {
        pin_to(cpu)?;
    }
    let mut sandbox = Sandbox::create(outside)?;
    let detach_error = sandbox.detach_other_tmpfs().err().map(|e| e.to_string());

    let mut files = Files {
        steady: sandbox.fs.join("steady"),
        exe: sandbox.fs.join("true"),
        content: sandbox.fs.join("content"),
        cgroups: None,
    };
    // The mixed-domain workloads confine a process: rampartd needs a
    // cgroup v2 hierarchy, which detaching the tmpfs mounts took away.
    files.cgroups = if options.workloads().contains(&Workload::MixedConfined) {
        mixed::create_content(&files.content).map_err(BenchError::Workload)?;
        let dir = sandbox.state.join("cgroup");
        std::fs::create_dir(&dir).map_err(BenchError::io("cannot create the cgroup mount point"))?;
        namespace::mount_cgroup2(&dir)?;
        Some(dir)
    } else {
        None
    };
    std::fs::write(&files.steady, vec![b'x'; 4096]).map_err(BenchError::io("cannot write the steady file"))?;
    std::fs::copy("/bin/true", &files.exe).map_err(BenchError::io("cannot copy /bin/true to the tmpfs"))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&files.exe, std::fs::Permissions::from_mode(0o755))
            .map_err(BenchError::io("cannot chmod the tmpfs copy of /bin/true"))?;
    }

    let mut variants: Vec<VariantResult> = Vec::new();
    let mut fap_setup = None;
    for &l in &options.listeners {
        if variants.iter().any(|v| v.listener == l) {
            continue;
        }
        let skip = match l {
            Listener::None | Listener::Trivial => None,
            Listener::Fapolicyd => match (fapolicyd::unavailable(), &detach_error) {
                (Some(why), _) => Some(why),
                (None, Some(e)) => Some(format!("cannot confine fapolicyd to the tmpfs: {e}")),
                (None, None) => match fapolicyd::Setup::prepare(&sandbox, &files.exe) {
                    Ok(s) => {
                        fap_setup = Some(s);
                        None
                    }
                    Err(e) => Some(format!("cannot prepare fapolicyd's private configuration: {e}")),
                },
            },
            Listener::Rampartd => rampartd::unavailable(&options.rampart, &options.policy),
        };
        let status = match skip {
            Some(why) => Status::Skipped(why),
            None => Status::Ran,
        };
        variants.push(VariantResult { listener: l, status, rounds: Vec::new(), marks: None });
    }

    let rounds = options.rounds();
    let measure = options.measure();
    let skeleton = variants.clone();
    let env = Env { sandbox: &sandbox, files: &files, options, fap: fap_setup.as_ref(), measure, listener_cpu: None };
    let load_start = load_avg();
    run_rounds(&env, &mut variants, "");
    let load_end = load_avg();

    let allowed = crate::affinity::allowed_cpus();
    let pinned = match (options.pinned_pass, options.pin_cpu) {
        (true, None) => {
            let cpu = allowed.first().copied().unwrap_or(0);
            let saved = affinity()?;
            pin_to(cpu)?;
            let mut pv = skeleton.clone();
            let pl_start = load_avg();
            run_rounds(&env, &mut pv, &format!(" (CPU {cpu})"));
            let pl_end = load_avg();
            set_affinity(&saved)?;
            Some((cpu, pv, pl_start, pl_end))
        }
        _ => None,
    };
    let split = match (options.split_pass, options.pin_cpu, allowed.as_slice()) {
        (true, None, [clients, listeners, ..]) => {
            let saved = affinity()?;
            pin_to(*clients)?;
            let mut sv = skeleton;
            let split_env = Env { listener_cpu: Some(*listeners), ..env };
            let sl_start = load_avg();
            run_rounds(&split_env, &mut sv, &format!(" (clients CPU {clients}, listener CPU {listeners})"));
            let sl_end = load_avg();
            set_affinity(&saved)?;
            Some((*clients, *listeners, sv, sl_start, sl_end))
        }
        _ => None,
    };

    let meta = |pin_cpu, listener_cpu, variants, load_start, load_end, pinned, split| EnforceReport {
        date: crate::run::today(),
        quick: options.quick,
        rounds,
        measure_ms: u64::try_from(measure.as_millis()).unwrap_or(u64::MAX),
        files_per_thread: options.files_per_thread(),
        workloads: options.workloads(),
        pin_cpu,
        listener_cpu,
        cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_string(),
        policy: options.policy.clone(),
        rampart: options.rampart.clone(),
        load_start,
        load_end,
        detached_tmpfs: sandbox.detached.iter().map(|p| p.display().to_string()).collect(),
        variants,
        pinned,
        split,
    };
    let pinned = pinned.map(|(cpu, pv, a, b)| Box::new(meta(Some(cpu), None, pv, a, b, None, None)));
    let split = split.map(|(c, l, sv, a, b)| Box::new(meta(Some(c), Some(l), sv, a, b, None, None)));
    Ok(meta(options.pin_cpu, None, variants, load_start, load_end, pinned, split))
}

/// What every round of a run shares.
struct Env<'a> {
    sandbox: &'a Sandbox,
    files: &'a Files,
    options: &'a EnforceOptions,
    fap: Option<&'a fapolicyd::Setup>,
    measure: Duration,
    /// Listeners start pinned to this CPU (the split pass).
    listener_cpu: Option<usize>,
}

/// All rounds of one pass over `variants` (those with status `Ran`).
fn run_rounds(env: &Env<'_>, variants: &mut [VariantResult], label: &str) {
    let options = env.options;
    let rounds = options.rounds();
    for round in 0..rounds {
        let n = variants.len();
        for k in 0..n {
            let idx = (k + round) % n.max(1);
            let Some(v) = variants.get_mut(idx) else { continue };
            if v.status != Status::Ran {
                continue;
            }
            let ctx = RoundCtx {
                sandbox: env.sandbox,
                files: env.files,
                options,
                fap: env.fap,
                round,
                measure: env.measure,
                listener_cpu: env.listener_cpu,
            };
            match run_round(v.listener, &ctx) {
                Ok((result, marks)) => {
                    if options.progress {
                        eprintln!(
                            "round {}/{rounds}{label} {:<9}: steady open {:>7.0} ns, first touch {:>7.0} ns, exec {:>6.0} µs{}",
                            round + 1,
                            v.listener.name(),
                            result.per_op_ns(Workload::Open(1)),
                            result.per_op_ns(Workload::FirstTouch(1)),
                            result.per_op_ns(Workload::Exec) / 1000.0,
                            result.ready_ms.map(|r| format!(", ready in {r:.0} ms")).unwrap_or_default(),
                        );
                    }
                    if marks.is_some() {
                        v.marks = marks;
                    }
                    v.rounds.push(result);
                }
                Err(RoundError { started, message }) => {
                    if options.progress {
                        eprintln!("round {}/{rounds}{label} {:<9}: {message}", round + 1, v.listener.name());
                    }
                    // A listener that cannot start in the first round is
                    // not run; any other error fails it.
                    v.status = if v.rounds.is_empty() && !started {
                        Status::Skipped(message)
                    } else {
                        Status::Failed(message)
                    };
                }
            }
        }
    }
}

struct RoundCtx<'a> {
    sandbox: &'a Sandbox,
    files: &'a Files,
    options: &'a EnforceOptions,
    fap: Option<&'a fapolicyd::Setup>,
    round: usize,
    measure: Duration,
    listener_cpu: Option<usize>,
}

/// A started listener.
enum Running {
    None,
    Trivial(Responder),
    Process(OwnedPid),
}

impl Running {
    fn pid(&self) -> Option<libc::pid_t> {
        match self {
            Running::None => None,
            Running::Trivial(r) => Some(r.pid()),
            Running::Process(p) => Some(p.pid()),
        }
    }

    fn exited(&self) -> Option<String> {
        match self {
            Running::None => None,
            Running::Trivial(r) => r.exited(),
            Running::Process(p) => p.exited(),
        }
    }

    fn stop(&mut self) {
        match self {
            Running::None => {}
            Running::Trivial(r) => {
                r.stop();
            }
            Running::Process(p) => {
                p.terminate(Duration::from_secs(5));
            }
        }
    }
}

/// Starts `listener`, on `ctx.listener_cpu` if that is set (its threads
/// and processes inherit the affinity of the thread that starts them).
fn start(listener: Listener, ctx: &RoundCtx<'_>) -> Result<(Running, Option<Duration>), String> {
    let Some(cpu) = ctx.listener_cpu else {
        return start_here(listener, ctx);
    };
    let saved = affinity().map_err(|e| e.to_string())?;
    pin_to(cpu).map_err(|e| e.to_string())?;
    let started = start_here(listener, ctx);
    set_affinity(&saved).map_err(|e| e.to_string())?;
    started
}

fn start_here(listener: Listener, ctx: &RoundCtx<'_>) -> Result<(Running, Option<Duration>), String> {
    let max_life = ctx.measure * 20 + Duration::from_secs(120);
    match listener {
        Listener::None => Ok((Running::None, None)),
        Listener::Trivial => {
            let t0 = std::time::Instant::now();
            let r = Responder::start(&ctx.sandbox.fs, max_life)?;
            Ok((Running::Trivial(r), Some(t0.elapsed())))
        }
        Listener::Fapolicyd => {
            let setup = ctx.fap.ok_or("fapolicyd was not prepared")?;
            let (p, ready) = setup.start(ctx.sandbox, ctx.round)?;
            Ok((Running::Process(p), Some(ready)))
        }
        Listener::Rampartd => {
            let (p, ready) = rampartd::start(&ctx.options.rampart, &ctx.options.policy, ctx.sandbox, ctx.round)?;
            Ok((Running::Process(p), Some(ready)))
        }
    }
}

fn measure_all(listener: Listener, ctx: &RoundCtx<'_>) -> Result<Vec<(Workload, Sample)>, String> {
    let (fs, d, n) = (&ctx.sandbox.fs, ctx.measure, ctx.options.files_per_thread());
    let fresh = |threads: usize| fs.join(format!("fresh.{}.{}.{threads}", listener.name(), ctx.round));
    workloads::warm_up(&ctx.files.steady, &ctx.files.exe)?;
    let mut samples = Vec::new();
    for w in ctx.options.workloads() {
        let sample = match w {
            Workload::Open(threads) => workloads::open_loop(&ctx.files.steady, threads, d)?,
            Workload::FirstTouch(threads) => workloads::first_touch(&fresh(threads), threads, n, d)?,
            Workload::Exec => workloads::exec_loop(&ctx.files.exe, d)?,
            // All three at once, below.
            Workload::MixedUnconfined | Workload::MixedConfined | Workload::MixedAfter => continue,
        };
        samples.push((w, sample));
    }
    if ctx.options.workloads().contains(&Workload::MixedConfined)
        && matches!(listener, Listener::None | Listener::Rampartd)
    {
        let setup = mixed::Setup {
            rampart: &ctx.options.rampart,
            content: &ctx.files.content,
            socket: rampartd::socket_path(ctx.sandbox, ctx.round),
            log_dir: &ctx.sandbox.state,
            measure: d,
        };
        samples.extend(mixed::measure(listener, &setup)?);
    }
    Ok(samples)
}

/// Why a round gave no result: the listener did not start, or the round
/// failed after it did.
struct RoundError {
    started: bool,
    message: String,
}

/// One round of one variant: start, warm up, measure, check, stop.
fn run_round(listener: Listener, ctx: &RoundCtx<'_>) -> Result<(RoundResult, Option<String>), RoundError> {
    ctx.sandbox.check_namespace().map_err(|e| RoundError { started: false, message: e.to_string() })?;
    let (running, ready) = start(listener, ctx).map_err(|message| RoundError { started: false, message })?;
    measure_round(listener, ctx, running, ready).map_err(|message| RoundError { started: true, message })
}

fn measure_round(
    listener: Listener,
    ctx: &RoundCtx<'_>,
    mut running: Running,
    ready: Option<Duration>,
) -> Result<(RoundResult, Option<String>), String> {
    let limit = ctx.measure * 10 + Duration::from_secs(60);
    let watchdog = running.pid().map(|pid| Watchdog::arm(pid, limit));
    let measured = measure_all(listener, ctx);
    let fired = watchdog.map(Watchdog::disarm).unwrap_or(false);
    // A listener that died mid-round leaves the kernel allowing without
    // asking: the round would look fast and mean nothing.
    let died = running.exited();
    let marks = match running.pid() {
        Some(pid) if died.is_none() => Some(ctx.sandbox.check_marks(pid)),
        _ => None,
    };
    running.stop();
    // A daemon started on a tree with domains in it would take them for
    // confined processes of an earlier one (and run slower).
    if let Some(dir) = &ctx.files.cgroups {
        mixed::remove_cgroup_tree(dir);
    }
    if fired {
        return Err(format!("round {} overran {} s: the watchdog killed the listener", ctx.round + 1, limit.as_secs()));
    }
    if let Some(how) = died {
        return Err(format!("the listener {how} during round {}", ctx.round + 1));
    }
    let marks = match marks {
        Some(Ok(m)) => Some(format!(
            "{} mount mark{} and {} filesystem mark{} on the benchmark tmpfs, {} inode mark{} on it, none elsewhere",
            m.mount_marks,
            if m.mount_marks == 1 { "" } else { "s" },
            m.filesystem_marks,
            if m.filesystem_marks == 1 { "" } else { "s" },
            m.inode_marks,
            if m.inode_marks == 1 { "" } else { "s" }
        )),
        Some(Err(e)) => return Err(format!("marks outside the benchmark tmpfs during the round: {e}")),
        None => None,
    };
    let samples = measured?;
    Ok((RoundResult { round: ctx.round, ready_ms: ready.map(|d| d.as_secs_f64() * 1000.0), samples }, marks))
}

#[cfg(test)]
mod tests;
