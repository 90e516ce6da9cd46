//! Keeping the old domain out of a new image's memory.
//!
//! Why: `/proc/PID/mem` (and `environ`, `maps`, `fd`) of a process is
//! open to every process of its user while it is dumpable, and SELinux
//! alone stands between them: `process ptrace` (or `file read` of the
//! process) from the opener's domain to the process's, checked at the
//! open. procfs takes no fanotify permission mark, and a read-only open
//! is not supervised, so rampartd sees no such open: a process that
//! entered another domain by an exec transition had its memory read by
//! the domain it left (a secret its new domain may read, read through
//! its stack).
//!
//! How: the kernel refuses a non-dumpable process's memory to every
//! process without `CAP_SYS_PTRACE`. An exec transition whose new label
//! some label may not read (SELinux: `ptrace` or `read`, enforced;
//! AppArmor: the `ptrace` rules of a profile; a label with a process in
//! the tree, or the default one) makes the new
//! image non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`, injected with the
//! other resets before its first instruction: crate::signal_state). The
//! exec resets dumpability as it commits, and a descriptor opened before
//! the call keeps reading the new image, so the processes of the tree in
//! those domains are kept from running meanwhile: before the exec is
//! answered their cgroups are frozen ([`Guards::open`]: a process
//! blocked on a permission event, in `vfork` or in a supervised call
//! counts as frozen), and
//! they are thawed once the call is made and the exec settled
//! ([`Guards::close`]). A descriptor opened before the freeze holds the
//! old image's memory, which is gone once the exec commits. Each later
//! exec of a launched process in such a domain makes its next image
//! dumpable again, so it is held the same way, in its own domain
//! (crate::enforcer's `guard_exec_in_domain`): about 1.5 ms per exec,
//! while a domain that may not read it is in the tree.
//!
//! The injected calls need the process running: the housekeeper moves
//! it into its new domain's cgroup and runs them there, that cgroup
//! pinned so that no guard freezes it meanwhile ([`Guards::pin`]: a
//! guard waits until the process is let go). Where a guard holds that
//! cgroup frozen already, the calls run in the exec's own cgroup,
//! thawed while the process stays stopped, and it moves (frozen there)
//! before it is let go; except where its pending signals must be
//! flushed, which happens as it runs in its new domain: then it waits
//! until no guard holds that domain. Two guards of such execs that hold
//! each other's new domain would each wait for the other, so they do
//! not open at once: the second waits for the first to close, at most
//! [`CONFLICT_WAIT`], in the responder that decides the exec.
//! (A stress of app_t and trusted_t, which may not read each
//! other, running execs in both and transitions between them, refused a
//! quarter of the transitions when every pair of guards waited so: the
//! waiting responders left the open guard's exec unanswered events.)
//!
//! The counts, pins, conflicts and wake-ups are model-checked
//! (`tests/loom.rs`), and stressed (contrib/repro/guard-stress.sh).
//!
//! Not kept out: processes outside the tree (the default domain, which
//! cannot be frozen; the image is still made non-dumpable, so only the
//! moments of the exec are open to them), processes of the new domain
//! itself, and root with `CAP_SYS_PTRACE` (docs/security.md).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::PoisonError;
use std::time::{Duration, Instant};

use rampart_avc::Sid;
use rustc_hash::FxHashMap;

use crate::sync::{Condvar, Mutex};

/// How long a guard waits for the cgroups it froze.
const FREEZE_WITHIN: Duration = Duration::from_secs(2);
/// How long a guard waits for a conflicting one to close.
const CONFLICT_WAIT: Duration = Duration::from_secs(2);
/// How long a freeze is waited for by yielding before sleeping.
const YIELD_FOR: Duration = Duration::from_micros(200);

/// The domains one guard keeps frozen, for the domain it protects.
#[derive(Debug)]
pub struct Guard {
    id: u64,
    /// The cgroups of the domains kept out.
    dirs: Vec<PathBuf>,
}

/// An open guard: the domain it protects, the domains it keeps out,
/// whether its exec waits for its new domain to thaw.
struct Open {
    id: u64,
    to: Sid,
    out: Vec<Sid>,
    waits: bool,
}

#[derive(Default)]
struct State {
    /// How many open guards hold each cgroup frozen.
    frozen: FxHashMap<PathBuf, usize>,
    /// Cgroups a process's injected calls run in ([`Guards::pin`]): no
    /// guard freezes them meanwhile.
    pinned: FxHashMap<PathBuf, usize>,
    open: Vec<Open>,
    next_id: u64,
}

/// The guards open now (see the module docs).
#[derive(Default)]
pub struct Guards {
    state: Mutex<State>,
    closed: Condvar,
}

impl State {
    /// Whether a guard for `to` keeping out `out`, whose exec `waits`
    /// for its new domain to thaw, would freeze the new domain of another
    /// open one that waits, or have its own frozen by one.
    fn conflicts(&self, to: Sid, out: &[Sid], waits: bool) -> bool {
        waits && self.open.iter().any(|o| o.waits && (out.contains(&o.to) || o.out.contains(&to)))
    }

    /// Records a guard holding `dirs` frozen; returns it and the cgroups
    /// it is the first to hold.
    fn add(&mut self, to: Sid, out: Vec<Sid>, waits: bool, dirs: Vec<PathBuf>) -> (Guard, Vec<PathBuf>) {
        let mut first = Vec::new();
        for dir in &dirs {
            let n = self.frozen.entry(dir.clone()).or_insert(0);
            *n += 1;
            if *n == 1 {
                first.push(dir.clone());
            }
        }
        let id = self.next_id;
        self.next_id += 1;
        self.open.push(Open { id, to, out, waits });
        (Guard { id, dirs }, first)
    }
}

impl Guards {
    /// Freezes the cgroups of `out` (domains that may not read `to`, with
    /// their cgroups) and waits until their processes are frozen. `waits`:
    /// the exec's process settles only once its new domain is thawed. On
    /// error nothing stays frozen for it and the exec must be refused.
    pub fn open(&self, to: Sid, out: Vec<(Sid, PathBuf)>, waits: bool) -> io::Result<Guard> {
        let (sids, dirs): (Vec<Sid>, Vec<PathBuf>) = out.into_iter().unzip();
        let deadline = Instant::now() + CONFLICT_WAIT;
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        while state.conflicts(to, &sids, waits) || dirs.iter().any(|d| state.pinned.contains_key(d)) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "another exec into a domain this one keeps out is still settling",
                ));
            }
            state = self.closed.wait_timeout(state, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        let (guard, first) = state.add(to, sids, waits, dirs);
        for dir in first {
            // A cgroup not made yet (or pruned) is frozen as it is made
            // ([`Guards::refreeze`]).
            let _ = fs::write(dir.join("cgroup.freeze"), "1");
        }
        drop(state);
        match wait_frozen(guard.dirs.iter().map(PathBuf::as_path)) {
            Ok(()) => Ok(guard),
            Err(e) => {
                self.close(guard);
                Err(e)
            }
        }
    }

    /// Thaws what `guard` alone held frozen.
    pub fn close(&self, guard: Guard) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        for dir in &guard.dirs {
            if let Some(n) = state.frozen.get_mut(dir) {
                *n -= 1;
                if *n == 0 {
                    state.frozen.remove(dir);
                    let _ = fs::write(dir.join("cgroup.freeze"), "0");
                }
            }
        }
        state.open.retain(|o| o.id != guard.id);
        drop(state);
        self.closed.notify_all();
    }

    /// Keeps guards from freezing the cgroup `dir` until the pin is
    /// dropped, unless one holds it frozen already (`None`): a process's
    /// injected calls are about to run there.
    pub fn pin(&self, dir: PathBuf) -> Option<Pin<'_>> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.frozen.contains_key(&dir) {
            return None;
        }
        *state.pinned.entry(dir.clone()).or_insert(0) += 1;
        Some(Pin { guards: self, dir })
    }

    /// Freezes `dir` if a guard holds it (a cgroup made while a guard is
    /// open, before a process moves in).
    pub fn refreeze(&self, dir: &Path) -> io::Result<()> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.frozen.contains_key(dir) {
            fs::write(dir.join("cgroup.freeze"), "1")?;
        }
        Ok(())
    }

    /// A guard for an exec into `to` that a restarted daemon finds in
    /// flight: the cgroups in `dirs`, frozen by the daemon before it,
    /// stay frozen until it settles.
    pub fn adopt(&self, to: Sid, dirs: Vec<PathBuf>) -> Guard {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        // Which domains they are is not known: they conflict with no
        // later guard.
        state.add(to, Vec::new(), false, dirs).0
    }
}

/// Where a thread may sleep and still count as kept out (`wchan`): the
/// freezer's trap (inlined in `get_signal`, as are signal stops); a
/// permission event, whose answer it waits for (`fanotify_handle_event`:
/// its call is an open, exec or read on a marked filesystem, never of
/// procfs, which takes no permission marks); the parent of a `vfork`
/// (`kernel_clone`), whose child may be the exec itself; a supervised
/// call (`seccomp_do_user_notification`), whose wait only a fatal signal
/// ends (`SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV`), so the freezer never
/// takes it there: the call is one rampartd decided, made by rampartd or
/// by the kernel, and none of those reads another process's memory (the
/// filter refuses `ptrace`, `process_vm_readv` and io_uring; rampartd
/// refuses opens of procfs). Each leaves only by returning to user
/// space, where the freezer takes it. The last three do not let a cgroup
/// read as frozen: a process blocked on the exec being decided would
/// hold its old domain's freeze forever; one blocked in a connect to a
/// host that does not answer, or in an open of a FIFO no process reads,
/// refused every exec that freezes its domain while it waited.
const KEPT_OUT_IN: &[&str] = &["get_signal", "fanotify_handle_event", "kernel_clone", "seccomp_do_user_notification"];

/// Whether a thread sleeping in `wchan` is kept out: [`KEPT_OUT_IN`], the
/// compiler's suffixes (`.isra.0`, `.constprop.0`) aside.
fn kept_out_in(wchan: &str) -> bool {
    let function = wchan.split_once('.').map_or(wchan, |(name, _)| name);
    KEPT_OUT_IN.contains(&function)
}

/// A cgroup no guard freezes while this lives ([`Guards::pin`]).
pub struct Pin<'a> {
    guards: &'a Guards,
    dir: PathBuf,
}

impl Drop for Pin<'_> {
    fn drop(&mut self) {
        let mut state = self.guards.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = state.pinned.get_mut(&self.dir) {
            *n -= 1;
            if *n == 0 {
                state.pinned.remove(&self.dir);
            }
        }
        drop(state);
        self.guards.closed.notify_all();
    }
}

/// Waits until every cgroup of `dirs` that still exists is frozen, or
/// each of its threads waits where it is kept out ([`KEPT_OUT_IN`]).
fn wait_frozen<'a>(dirs: impl Iterator<Item = &'a Path> + Clone) -> io::Result<()> {
    let start = Instant::now();
    loop {
        let pending = dirs.clone().find(|d| d.exists() && !crate::cgroups::is_frozen(d) && !all_kept_out(d));
        let Some(dir) = pending else { return Ok(()) };
        let waited = start.elapsed();
        if waited > FREEZE_WITHIN {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the processes of {} did not freeze within {FREEZE_WITHIN:?} (its threads, and where each \
                     waits: {})",
                    dir.display(),
                    wait_channels(dir).iter().map(|(t, w)| format!("{t} in {w}")).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        if waited < YIELD_FOR {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

/// Whether every thread of cgroup `dir` waits where it is kept out.
fn all_kept_out(dir: &Path) -> bool {
    wait_channels(dir).iter().all(|(_, w)| kept_out_in(w))
}

/// The threads of cgroup `dir` and where each sleeps (`wchan`: `0`
/// while it runs).
fn wait_channels(dir: &Path) -> Vec<(String, String)> {
    let threads = fs::read_to_string(dir.join("cgroup.threads")).unwrap_or_default();
    threads
        .lines()
        .map(|t| (t.to_owned(), fs::read_to_string(format!("/proc/{t}/wchan")).unwrap_or_default()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_out_where_the_kernel_names_the_wait_with_or_without_a_suffix() {
        for w in ["get_signal", "fanotify_handle_event", "seccomp_do_user_notification.isra.0", "kernel_clone"] {
            assert!(kept_out_in(w), "{w}");
        }
        for w in ["0", "", "do_sys_poll", "pipe_read", "seccomp_notify", "get_signal_x"] {
            assert!(!kept_out_in(w), "{w}");
        }
    }

    fn sids<const N: usize>() -> [Sid; N] {
        let policy = rampart_policy::Policy::from_bytes(crate::daemon::APPARMOR_ALONE_POLICY).unwrap();
        let config = rampart_avc::AvcConfig::new(
            std::sync::Arc::new(policy),
            crate::access::mapping().unwrap(),
            std::sync::Arc::new(rampart_avc::NullSink),
        );
        let avc = rampart_avc::Avc::new(config).unwrap();
        std::array::from_fn(|i| avc.intern(&format!("u:r:t{i}")).unwrap())
    }

    #[test]
    fn guards_that_would_freeze_each_others_domain_do_not_open_at_once() {
        let [a, b, c] = sids();
        let mut state = State::default();
        state.add(a, vec![c], true, Vec::new());
        // Entering b, keeping c out too: no conflict.
        assert!(!state.conflicts(b, &[c], true));
        // Keeping a out (a guard open for it): conflict.
        assert!(state.conflicts(b, &[a], true));
        // Entering c, which the open guard keeps frozen: conflict.
        assert!(state.conflicts(c, &[b], true));
        // An exec that does not wait for its new domain never conflicts,
        // nor with a guard whose exec does not wait.
        assert!(!state.conflicts(c, &[a], false));
        let mut state = State::default();
        state.add(a, vec![c], false, Vec::new());
        assert!(!state.conflicts(c, &[a], true));
    }

    #[test]
    fn a_cgroup_stays_held_until_its_last_guard_closes() {
        let [a, b, c] = sids();
        let guards = Guards::default();
        // A missing cgroup (pruned, or not made yet) is not waited for.
        let gone = std::env::temp_dir().join(format!("rampart-guard-{}-gone", std::process::id()));
        let one = guards.open(a, vec![(c, gone.clone())], false).unwrap();
        let two = guards.open(b, vec![(c, gone.clone())], false).unwrap();
        assert!(guards.pin(gone.clone()).is_none());
        guards.close(one);
        assert!(guards.pin(gone.clone()).is_none());
        guards.close(two);
        assert!(guards.pin(gone.clone()).is_some(), "no guard holds it");
    }

    #[test]
    fn a_pinned_cgroup_is_not_frozen_and_a_frozen_one_not_pinned() {
        let [a, c] = sids();
        let guards = Guards::default();
        let dir = std::env::temp_dir().join(format!("rampart-guard-{}-pinned", std::process::id()));
        let pin = guards.pin(dir.clone()).unwrap();
        let waiting = std::thread::scope(|s| {
            let opener = s.spawn(|| guards.open(a, vec![(c, dir.clone())], false));
            std::thread::sleep(Duration::from_millis(50));
            let waiting = !opener.is_finished();
            drop(pin);
            let guard = opener.join().unwrap().unwrap();
            assert!(guards.pin(dir.clone()).is_none(), "held frozen: no pin");
            guards.close(guard);
            waiting
        });
        assert!(waiting, "the guard waited for the pin");
    }
}
