//! The daemon's settings: command-line flags over a TOML file
//! (`--config`), over defaults. The file holds the same settings as the
//! flags, from the same struct ([`FileConfig`]):
//!
//! ```toml
//! mark = ["/srv"]                     # filesystems to enforce on (by a mount point)
//! policy = "/etc/selinux/default/policy/policy.33"
//! file-contexts = "/etc/selinux/default/contexts/files/file_contexts"
//! default-context = "unconfined_u:unconfined_r:unconfined_t:s0"
//! permissive = false
//! permissive-domains = ["httpd_t"]    # per-domain permissive
//! audit-log = "/var/log/rampart/audit.log"
//! socket = "/run/rampart/rampartd.sock"
//! cgroup = "rampart"                  # the tree of confined processes (cgroup v2)
//! threads = 2                         # responder threads (default: the CPUs available)
//! queue-bound = 4096                  # events read and not yet answered
//! overload-answer = "allow"           # or "deny", beyond the bound
//! ignore-marks = true                 # kernel-side cache
//! spin-us = 50                        # keep polling this long after an event
//! pollers = 1                         # responders waiting on fanotify (default: from threads)
//! read-batch = 4                      # events one read takes at most
//! spin-check = "epoll"                # or "read": how a spinning poller looks (default: from pollers)
//! apparmor = "/etc/apparmor.d"        # AppArmor profiles, beside SELinux
//! apparmor-cache = "/var/cache/rampart/apparmor"
//! apparmor-features = "/etc/apparmor.d/abi/3.0"   # the feature set profiles are compiled for
//! selinux = true                      # false (--no-selinux): AppArmor alone
//! supervised-opens = true             # launched processes open for writing through rampartd
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

pub const DEFAULT_CONTEXT: &str = "unconfined_u:unconfined_r:unconfined_t:s0";
/// The cgroup tree under the unified hierarchy ([`crate::cgroups`]).
pub const DEFAULT_CGROUP: &str = "rampart";
pub const DEFAULT_QUEUE_BOUND: usize = 4096;
/// See [`crate::responder`]: long enough to span the gap between two
/// events of a process opening files in a row.
pub const DEFAULT_SPIN_US: u64 = 50;
const MAX_SPIN_US: u64 = 10_000;
/// See [`crate::responder`]. Measured on 16 CPUs (first touch, 1 to 16
/// clients, docs/benchmarks.md): 4 kept 4 and 8 clients' throughput and
/// raised 16 clients' from 2.27x to 2.57x one client's, against 42 (a
/// 1024-byte buffer); 1 did best at 4 clients and worst at 16.
pub const DEFAULT_READ_BATCH: usize = 4;
const MAX_READ_BATCH: usize = 1024;

/// Responder threads by default: one per CPU this process may use
/// (`available_parallelism` counts the affinity mask and the cgroup's
/// `cpu.max` quota), at least two (a decision that blocks, an exec's,
/// must not hold every other event), at most [`MAX_DEFAULT_THREADS`].
pub fn default_threads(cpus: usize) -> usize {
    cpus.clamp(2, MAX_DEFAULT_THREADS)
}
const MAX_DEFAULT_THREADS: usize = 32;

/// Pollers by default, of `threads` responders: half of them, one to
/// four. fanotify wakes every responder waiting on a group for every
/// answer ([`crate::responder`]), so on 2 CPUs a second poller costs
/// more than it helps, while at 8 and 16 clients on 16 CPUs four pollers
/// did best (issue 8's measurements: 2.58x and 2.23x one client's
/// throughput, against 0.95x and 0.55x with one).
pub fn default_pollers(threads: usize) -> usize {
    (threads / 2).clamp(1, 4)
}

/// How a spinning poller looks by default, of `pollers`: a read with
/// one, `epoll_wait` with several. The read takes the group's queue lock
/// on every look, which only other spinners make contended; `epoll_wait`
/// avoids it at one more system call per event. Measured
/// (docs/benchmarks.md): one poller on 2 CPUs, read ahead at 2 clients
/// (1.45x one client's throughput against 1.32x); four pollers on 16
/// CPUs, epoll ahead at 4 and 8 clients (178k and 210k first touches/s
/// against 166k to 168k and 201k to 204k), alike at 1, 2 and 16.
pub fn default_spin_check(pollers: usize) -> SpinCheck {
    if pollers > 1 {
        SpinCheck::Epoll
    } else {
        SpinCheck::Read
    }
}

/// The CPUs this process may use (1 if unknown): its affinity mask and
/// its cgroup's CPU quota (`cpu.max`), as `available_parallelism` reads
/// them on Linux.
fn available_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// The daemon's settings as given: the TOML file (every key optional,
/// kebab-case) and `rampart daemon`'s flags, both from this one struct
/// (serde reads the file, clap parses the flags), so a setting cannot be
/// added to one and forgotten in the other. `None`: not given.
/// [`DaemonConfig::resolve`] lays the flags over the file.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq, clap::Args)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FileConfig {
    /// A filesystem to enforce on, by a mount point; several may follow
    /// one --mark (`mark = [...]`)
    #[arg(long, value_name = "PATH", num_args = 1.., action = clap::ArgAction::Append)]
    pub mark: Option<Vec<PathBuf>>,
    /// The policy; on the command line, rampart's global --policy
    #[arg(skip)]
    pub policy: Option<PathBuf>,
    /// The file_contexts (default: the system's)
    #[arg(long, value_name = "FILE")]
    pub file_contexts: Option<PathBuf>,
    /// The context of processes not started by `rampart run`
    #[arg(long, value_name = "CTX")]
    pub default_context: Option<String>,
    /// Log denials without denying
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub permissive: Option<bool>,
    /// A domain that is permissive alone (repeatable;
    /// `permissive-domains = [...]`)
    #[arg(long = "permissive-domain", value_name = "TYPE")]
    pub permissive_domains: Option<Vec<String>>,
    /// Where denials go, in auditd's format (default: stderr, as dmesg)
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,
    /// The control socket (default /run/rampart/rampartd.sock)
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// The cgroup v2 tree of confined processes (default rampart)
    #[arg(long, value_name = "NAME")]
    pub cgroup: Option<String>,
    /// Responder threads (default one per CPU available, 2 to 32)
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Events read and not yet answered before the overload answer (4096)
    #[arg(long, value_name = "N")]
    pub queue_bound: Option<usize>,
    /// The answer beyond --queue-bound (default allow)
    #[arg(long, value_name = "allow|deny", value_parser = ["allow", "deny"])]
    pub overload_answer: Option<String>,
    /// Place no ignore marks, the kernel-side cache (`ignore-marks =
    /// false`)
    #[arg(long = "no-ignore-marks", num_args = 0, default_missing_value = "false")]
    pub ignore_marks: Option<bool>,
    /// Microseconds a poller keeps polling after an event (50; 0 never)
    #[arg(long, value_name = "N")]
    pub spin_us: Option<u64>,
    /// Responders that wait on fanotify (default half the threads, 1 to
    /// 4; the others are woken when events queue up or an exec is decided)
    #[arg(long, value_name = "N")]
    pub pollers: Option<usize>,
    /// Events one read takes at most (4): fewer lets other pollers take
    /// the rest in parallel, at more reads per event
    #[arg(long, value_name = "N")]
    pub read_batch: Option<usize>,
    /// How a spinning poller looks for the next event: "read" (a read
    /// that takes the group's queue lock) or "epoll" (a lock-free look);
    /// default: read with one poller, epoll with several
    #[arg(long, value_name = "HOW")]
    pub spin_check: Option<String>,
    /// Load the AppArmor profiles of DIR (default /etc/apparmor.d),
    /// compiled with apparmor_parser; reloaded with the policy
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = rampart_apparmor::profile_set::DEFAULT_DIR)]
    pub apparmor: Option<PathBuf>,
    /// Where compiled AppArmor profiles are kept (default
    /// /var/cache/rampart/apparmor)
    #[arg(long, value_name = "DIR")]
    pub apparmor_cache: Option<PathBuf>,
    /// The AppArmor feature set profiles are compiled for
    /// (apparmor_parser --features-file; default /etc/apparmor.d/abi/3.0,
    /// which has signal and ptrace mediation)
    #[arg(long, value_name = "FILE")]
    pub apparmor_features: Option<PathBuf>,
    /// Run AppArmor alone, without SELinux (`selinux = false`; needs
    /// --apparmor; no policy, file_contexts or SELinux contexts)
    #[arg(long = "no-selinux", num_args = 0, default_missing_value = "false")]
    pub selinux: Option<bool>,
    /// Let processes `rampart run` starts open files for writing without
    /// rampartd making the open (`supervised-opens = false`): their write
    /// opens are cheaper, and a domain that may only read a file then
    /// keeps every open of it an event (docs/security.md)
    #[arg(long = "no-supervised-opens", num_args = 0, default_missing_value = "false")]
    pub supervised_opens: Option<bool>,
}

impl FileConfig {
    pub fn load(path: &Path) -> Result<FileConfig, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// The resolved settings.
#[derive(Clone, Debug, PartialEq)]
pub struct DaemonConfig {
    pub marks: Vec<PathBuf>,
    /// `None`: the system policy.
    pub policy: Option<PathBuf>,
    /// `None`: the system file_contexts.
    pub file_contexts: Option<PathBuf>,
    pub default_context: String,
    pub permissive: bool,
    pub permissive_domains: Vec<String>,
    /// `None`: audit lines go to stderr.
    pub audit_log: Option<PathBuf>,
    pub socket: PathBuf,
    /// The cgroup tree's name (`cgroups.rs`).
    pub cgroup: String,
    pub threads: usize,
    pub queue_bound: usize,
    pub overload_allow: bool,
    pub ignore_marks: bool,
    /// How long a responder keeps polling after an event before it sleeps.
    pub spin: std::time::Duration,
    /// How many responders wait on the fanotify groups (the rest help).
    pub pollers: usize,
    /// Events one read takes at most.
    pub read_batch: usize,
    /// How a spinning poller looks for the next event.
    pub spin_check: SpinCheck,
    /// The AppArmor profiles to load, if any.
    pub apparmor: Option<rampart_apparmor::Source>,
    /// SELinux decides (false: AppArmor alone, `--no-selinux`).
    pub selinux: bool,
    /// Launched processes open files for writing through the daemon
    /// (crate::supervised, "Opens").
    pub supervised_opens: bool,
}

/// How a spinning poller looks for the next event (crate::responder,
/// "Spinning").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpinCheck {
    /// A non-blocking read of the group: the event at once when there is
    /// one; every look takes the group's queue lock, which openers and
    /// answers take too.
    Read,
    /// `epoll_wait` without a timeout, then a read: no lock while the
    /// queue is empty, one more system call per event.
    Epoll,
}

/// `--no-selinux` without profiles to enforce.
pub const NO_SELINUX_NEEDS_APPARMOR: &str = "--no-selinux (selinux = false) runs AppArmor alone: give the \
     profiles with --apparmor [DIR] (apparmor = \"/etc/apparmor.d\")";

impl DaemonConfig {
    /// `file` under `flags` (flags win; `--mark` adds to the file's).
    pub fn resolve(file: FileConfig, flags: FileConfig) -> Result<DaemonConfig, String> {
        let mut marks = file.mark.unwrap_or_default();
        marks.extend(flags.mark.unwrap_or_default());
        if marks.is_empty() {
            return Err("no filesystem to enforce on: give --mark PATH (or `mark = [...]` in the config file)".into());
        }
        let threads = flags.threads.or(file.threads).unwrap_or_else(|| default_threads(available_cpus()));
        if !(1..=64).contains(&threads) {
            return Err(format!("threads = {threads}: give 1 to 64 responder threads"));
        }
        let queue_bound = flags.queue_bound.or(file.queue_bound).unwrap_or(DEFAULT_QUEUE_BOUND);
        if queue_bound == 0 {
            return Err("queue-bound = 0: give at least 1".into());
        }
        let spin_check = match flags.spin_check.or(file.spin_check).as_deref() {
            None => None,
            Some("read") => Some(SpinCheck::Read),
            Some("epoll") => Some(SpinCheck::Epoll),
            Some(other) => return Err(format!("spin-check = {other:?}: use \"read\" or \"epoll\"")),
        };
        let overload_allow = match flags.overload_answer.or(file.overload_answer).as_deref() {
            None | Some("allow") => true,
            Some("deny") => false,
            Some(other) => return Err(format!("overload-answer = {other:?}: use \"allow\" or \"deny\"")),
        };
        let spin_us = flags.spin_us.or(file.spin_us).unwrap_or(DEFAULT_SPIN_US);
        if spin_us > MAX_SPIN_US {
            return Err(format!("spin-us = {spin_us}: give 0 (never) to {MAX_SPIN_US} microseconds"));
        }
        let pollers = flags.pollers.or(file.pollers).unwrap_or_else(|| default_pollers(threads));
        if !(1..=threads).contains(&pollers) {
            return Err(format!("pollers = {pollers}: give 1 to {threads} (the responder threads)"));
        }
        let spin_check = spin_check.unwrap_or_else(|| default_spin_check(pollers));
        let read_batch = flags.read_batch.or(file.read_batch).unwrap_or(DEFAULT_READ_BATCH);
        if !(1..=MAX_READ_BATCH).contains(&read_batch) {
            return Err(format!("read-batch = {read_batch}: give 1 to {MAX_READ_BATCH} events"));
        }
        let selinux = flags.selinux.or(file.selinux).unwrap_or(true);
        let apparmor = flags.apparmor.or(file.apparmor).map(|dir| {
            let mut source = rampart_apparmor::Source::new(dir);
            if let Some(cache) = flags.apparmor_cache.or(file.apparmor_cache) {
                source.cache = cache;
            }
            if let Some(features) = flags.apparmor_features.or(file.apparmor_features) {
                source.features = features;
            }
            source
        });
        let mut permissive_domains = file.permissive_domains.unwrap_or_default();
        permissive_domains.extend(flags.permissive_domains.unwrap_or_default());
        let policy = flags.policy.or(file.policy);
        let file_contexts = flags.file_contexts.or(file.file_contexts);
        let default_context = flags.default_context.or(file.default_context);
        if !selinux {
            if apparmor.is_none() {
                return Err(NO_SELINUX_NEEDS_APPARMOR.into());
            }
            let selinux_only = [
                ("policy (--policy)", policy.is_some()),
                ("file-contexts", file_contexts.is_some()),
                ("default-context", default_context.is_some()),
                ("permissive-domains", !permissive_domains.is_empty()),
            ];
            if let Some((what, _)) = selinux_only.iter().find(|(_, given)| *given) {
                return Err(format!(
                    "{what} is an SELinux setting, and --no-selinux (selinux = false) runs AppArmor alone: \
                     drop one of them"
                ));
            }
        }
        Ok(DaemonConfig {
            marks,
            policy,
            file_contexts,
            default_context: default_context.unwrap_or_else(|| {
                if selinux { DEFAULT_CONTEXT } else { crate::daemon::APPARMOR_ALONE_CONTEXT }.into()
            }),
            permissive: flags.permissive.or(file.permissive).unwrap_or(false),
            permissive_domains,
            audit_log: flags.audit_log.or(file.audit_log),
            socket: flags.socket.or(file.socket).unwrap_or_else(|| crate::control::DEFAULT_SOCKET.into()),
            cgroup: flags.cgroup.or(file.cgroup).unwrap_or_else(|| DEFAULT_CGROUP.into()),
            threads,
            queue_bound,
            overload_allow,
            ignore_marks: flags.ignore_marks.or(file.ignore_marks).unwrap_or(true),
            spin: std::time::Duration::from_micros(spin_us),
            pollers,
            read_batch,
            spin_check,
            apparmor,
            selinux,
            supervised_opens: flags.supervised_opens.or(file.supervised_opens).unwrap_or(true),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spin_check_is_chosen_from_the_pollers_unless_asked() {
        let resolve = |pollers: usize, v: Option<&str>| {
            let flags = FileConfig {
                mark: Some(vec!["/a".into()]),
                threads: Some(4),
                pollers: Some(pollers),
                spin_check: v.map(str::to_owned),
                ..Default::default()
            };
            DaemonConfig::resolve(FileConfig::default(), flags).map(|c| c.spin_check)
        };
        assert_eq!(resolve(1, None), Ok(SpinCheck::Read));
        assert_eq!(resolve(2, None), Ok(SpinCheck::Epoll));
        assert_eq!(resolve(4, None), Ok(SpinCheck::Epoll));
        assert_eq!(resolve(4, Some("read")), Ok(SpinCheck::Read));
        assert_eq!(resolve(1, Some("epoll")), Ok(SpinCheck::Epoll));
        assert!(resolve(1, Some("poll")).is_err_and(|e| e.contains("spin-check")));
    }

    #[test]
    fn flags_override_the_file() {
        let file: FileConfig =
            toml::from_str("mark = [\"/a\"]\nthreads = 3\noverload-answer = \"deny\"\npermissive = true").unwrap();
        let flags = FileConfig { mark: Some(vec!["/b".into()]), threads: Some(4), ..FileConfig::default() };
        let c = DaemonConfig::resolve(file, flags).unwrap();
        assert_eq!(c.marks, vec![PathBuf::from("/a"), PathBuf::from("/b")]);
        assert_eq!(c.threads, 4);
        assert!(!c.overload_allow);
        assert!(c.permissive);
    }

    #[test]
    fn the_shipped_example_parses() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contrib/rampartd.toml");
        let c = DaemonConfig::resolve(FileConfig::load(&path).unwrap(), FileConfig::default()).unwrap();
        assert_eq!(c.marks, vec![PathBuf::from("/srv")]);
        assert_eq!(c.socket, PathBuf::from(crate::control::DEFAULT_SOCKET));
        assert!(c.ignore_marks && c.overload_allow && !c.permissive);
        // Every key it shows commented out is a key, with a valid value.
        let text = std::fs::read_to_string(&path).unwrap();
        let keys: String = text
            .lines()
            .filter_map(|l| l.strip_prefix("# ").filter(|k| k.split_once(" = ").is_some_and(|(k, _)| !k.contains(' '))))
            .map(|l| format!("{}\n", l.split_once("     #").map_or(l, |(k, _)| k)))
            .collect();
        assert!(keys.lines().count() >= 10, "{keys}");
        let commented: FileConfig = toml::from_str(&format!("{text}\n{keys}")).unwrap();
        DaemonConfig::resolve(commented, FileConfig::default()).unwrap();
    }

    #[test]
    fn bad_settings_say_what_to_do() {
        assert!(toml::from_str::<FileConfig>("bogus = 1").unwrap_err().to_string().contains("bogus"));
        let e = DaemonConfig::resolve(FileConfig::default(), FileConfig::default()).unwrap_err();
        assert!(e.contains("--mark"));
        let f =
            FileConfig { mark: Some(vec!["/a".into()]), overload_answer: Some("maybe".into()), ..Default::default() };
        assert!(DaemonConfig::resolve(f, FileConfig::default()).unwrap_err().contains("allow"));
        let f = FileConfig { mark: Some(vec!["/a".into()]), threads: Some(2), pollers: Some(3), ..Default::default() };
        assert!(DaemonConfig::resolve(f, FileConfig::default()).unwrap_err().contains("pollers = 3: give 1 to 2"));
        let f = FileConfig { mark: Some(vec!["/a".into()]), pollers: Some(0), ..Default::default() };
        assert!(DaemonConfig::resolve(f, FileConfig::default()).is_err());
    }

    #[test]
    fn apparmor_beside_selinux_or_alone() {
        let file: FileConfig =
            toml::from_str("mark = [\"/a\"]\napparmor = \"/etc/apparmor.d\"\napparmor-cache = \"/c\"").unwrap();
        let c = DaemonConfig::resolve(file.clone(), FileConfig::default()).unwrap();
        assert!(c.selinux);
        let source = c.apparmor.unwrap();
        assert_eq!((source.dir, source.cache), (PathBuf::from("/etc/apparmor.d"), PathBuf::from("/c")));
        assert_eq!(source.features, PathBuf::from(rampart_apparmor::compile::DEFAULT_FEATURES));
        let features = FileConfig { apparmor_features: Some("/f".into()), ..FileConfig::default() };
        let c = DaemonConfig::resolve(features, file.clone()).unwrap();
        assert_eq!(c.apparmor.unwrap().features, PathBuf::from("/f"));
        let alone = FileConfig { selinux: Some(false), ..FileConfig::default() };
        let c = DaemonConfig::resolve(file.clone(), alone.clone()).unwrap();
        assert!(!c.selinux);
        assert_eq!(c.default_context, crate::daemon::APPARMOR_ALONE_CONTEXT);
        // Without profiles there is nothing to enforce.
        let bare = FileConfig { mark: Some(vec!["/a".into()]), ..FileConfig::default() };
        assert_eq!(DaemonConfig::resolve(bare, alone.clone()).unwrap_err(), NO_SELINUX_NEEDS_APPARMOR);
        // SELinux settings beside --no-selinux say which to drop.
        let with_policy = FileConfig { policy: Some("/p".into()), ..alone };
        let e = DaemonConfig::resolve(file, with_policy).unwrap_err();
        assert!(e.contains("policy (--policy) is an SELinux setting"), "{e}");
    }

    #[test]
    fn defaults_follow_the_cpus() {
        // Two CPUs (this machine): today's two responders, one poller.
        assert_eq!((default_threads(2), default_pollers(default_threads(2))), (2, 1));
        assert_eq!((default_threads(1), default_pollers(default_threads(1))), (2, 1));
        // 8 and 16 CPUs: the configurations measured best in issue 8.
        assert_eq!((default_threads(8), default_pollers(default_threads(8))), (8, 4));
        assert_eq!((default_threads(16), default_pollers(default_threads(16))), (16, 4));
        assert_eq!(default_threads(192), 32);
    }
}
