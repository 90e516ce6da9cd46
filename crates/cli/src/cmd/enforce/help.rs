//! Help texts of the enforcement commands.

pub const DAEMON: &str = "\
usage: rampart daemon --mark PATH... [--policy FILE] [--file-contexts FILE]
                      [--default-context CTX] [--permissive] [--audit-log FILE]
                      [--socket PATH] [--config FILE] [--threads N]
                      [--queue-bound N] [--overload-answer allow|deny]
                      [--permissive-domain TYPE] [--no-ignore-marks]
                      [--spin-us N] [--pollers N] [--cgroup NAME]

Runs rampartd in the foreground: answers fanotify open, exec and read
permission events on the filesystems given (each PATH must be a mount
point; every mount of its filesystem, in every mount namespace, is
covered) with the policy's decisions. Processes not started under
`rampart run` run in the default context
(unconfined_u:unconfined_r:unconfined_t:s0); confined processes are kept
in cgroups under the cgroup v2 hierarchy's NAME (rampart), which outlive
the daemon: a restarted daemon finds them in their domains.
Denials go to the audit log (auditd format; stderr in dmesg format when
no log is given). SIGHUP reloads the policy; SIGTERM stops, and the
kernel then allows whatever is still queued.

Tuning (also settable in the --config file, see contrib/rampartd.toml):
--threads responder threads (default one per CPU available, counting the
cgroup's CPU limit, 2 to 32), of which --pollers wait on fanotify
(default half of them, 1 to 4; the others are woken when events queue up
or an exec is decided);
--spin-us how long a poller keeps polling after an event (50, 0 never).
";

pub const RUN: &str = "\
usage: rampart run [--socket PATH] --context CTX [--force] [--no-sandbox] -- CMD [ARGS...]

Runs CMD in context CTX (the runcon analog): the daemon checks process
setexec, then at the exec process transition and file entrypoint, as
SELinux does. Root in the default domain may skip those checks with
--force. Before the exec, rampart confines itself for what the daemon
cannot see (docs/security.md): capabilities bounded to those the policy
grants CTX, descriptors CTX may not use replaced by /dev/null, no moves of
files between directories of the marked filesystems, no mounts, no new
namespaces, no xattr writes, no writes to the cgroup hierarchy, no
signals to processes outside. This is the only way into a confined
domain from outside rampartd's domains: the daemon refuses such exec
transitions, since it cannot sandbox their processes. --no-sandbox skips
the sandbox (fanotify mediation alone, for testing the daemon; the
process then lacks those defences). Exit status 125 when rampart fails,
126 when CMD cannot run, 127 when it is not found.
";

pub const CONTROL: &str = "\
usage: rampart status [--socket PATH] [--json]
       rampart setenforce 1|0
       rampart reload
       rampart setbool NAME on|off

Talk to rampartd over its control socket (root only; default
/run/rampart/rampartd.sock).
";

pub const DEMO: &str = "\
usage: rampart demo

In a private mount namespace, on a tmpfs it labels, starts rampartd with
the system policy, runs a confined web server domain that reads its
content (allowed) and a shadow file (denied), prints the audit lines and
statistics, and cleans up. Needs root and the SELinux reference policy.
";

pub fn text(command: &str) -> &'static str {
    match command {
        "daemon" => DAEMON,
        "run" => RUN,
        "demo" => DEMO,
        _ => CONTROL,
    }
}
