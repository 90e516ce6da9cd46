//! Help texts, one per command.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Topic {
    Main,
    Policy,
    Check,
    Explain,
    Bench,
    Label,
    GetLabel,
    Relabel,
}

pub fn text(topic: Topic) -> &'static str {
    match topic {
        Topic::Main => MAIN,
        Topic::Policy => POLICY,
        Topic::Check => CHECK,
        Topic::Explain => EXPLAIN,
        Topic::Bench => BENCH,
        Topic::Label => crate::cmd::label::help::LABEL,
        Topic::GetLabel => crate::cmd::label::help::GETLABEL,
        Topic::Relabel => crate::cmd::label::help::RELABEL,
    }
}

const MAIN: &str = "\
rampart: SELinux access decisions from the kernel binary policy, bit-exact with libsepol

usage: rampart [--policy PATH] COMMAND [ARGS...]

commands:
  policy info       statistics of the policy, counted like `seinfo`
  check             the access decision for a source, a target and a class
  explain           why one permission is granted or denied
  bench seeds       rerun the seed experiments: Rampart's AVC beside the
                    designs the seeds measured (locks, shared counters)
  bench enforce     what a fanotify listener costs: none, a trivial
                    responder, fapolicyd and rampartd side by side
                    (both bench commands: built with `--features bench`)
  label PATH...     the file_contexts label of files, like `matchpathcon`
  getlabel PATH...  the security.selinux attribute of files, like `ls -Zd`
  relabel PATH...   set files' labels from file_contexts, like `restorecon`
  apparmor check|attach|info BINARY...
                    AppArmor decisions from apparmor_parser's binary policy
                    (`rampart apparmor --help`)
  help [COMMAND]    this help, or the help of one command

options (accepted before or after the command):
  --policy PATH     the kernel binary policy to read; default: the system
                    policy (SELINUXTYPE in /etc/selinux/config, then the
                    highest /etc/selinux/TYPE/policy/policy.N)
  -h, --help        show help
  -V, --version     show the version

exit status:
  0  success; for check and explain: every permission asked about is granted
  1  check and explain: a permission asked about is denied
  2  error: invalid usage, invalid context, undefined name, unreadable policy
  label, getlabel and relabel follow matchpathcon, ls and restorecon: see
  their help
";

const POLICY: &str = "\
usage: rampart [--policy PATH] policy info

Prints statistics of the policy in the format of `seinfo` (setools), with
the same counting rules, followed by counts seinfo does not print:

  Statistics for policy file: PATH
  Policy Version:             33 (MLS enabled)
  Target Policy:              selinux
  Handle unknown classes:     allow
    Classes:             134    Permissions:         425
    ...
    Commons:               7    Aliases:             268
    Filename_trans:      833    Sens. aliases:         0
    Cat. aliases:          0

Rule counts are avtab entries (unconditional and conditional) of each
kind; Type_trans also counts name-based transitions, one per source type
(shown alone as Filename_trans). Permissions is the permissions of every
common plus every class's own. Types excludes attributes. MLS Constrain
counts constraints whose expression compares levels, Constraints the
others. Aliases counts type aliases.
";

const CHECK: &str = "\
usage: rampart check [--bool NAME=on|off]... SCONTEXT TCONTEXT CLASS [PERM...]
       rampart check --batch [--format hex] [--no-cache] [--bool NAME=on|off]...

Computes the access decision for SCONTEXT acting on TCONTEXT (security
contexts, e.g. system_u:system_r:sshd_t:s0) for object class CLASS, and
prints the permissions by name:

  allowed: { getattr open read }
  auditallow: { }
  dontaudit: { write }
  permissive: yes          (only when the source type is permissive)
  undefined: { perm }      (only for PERMs the policy does not define)
  denied: { write }        (only with PERMs: those not granted)

dontaudit lists the class's permissions whose denial is not logged.

With PERMs, exits 0 if all are granted and 1 if any is denied (also when
the source type is permissive: the policy denies, the kernel only logs).
A class or permission the policy does not define follows the policy's
handle_unknown: `allow` grants it, `deny` denies it, `reject` is an error;
a warning names it on stderr.

options:
  --bool NAME=on|off   evaluate with boolean NAME set (repeatable);
                       other booleans keep the policy's defaults
  --batch              read queries from stdin, one `SCONTEXT TCONTEXT CLASS`
                       per line (whitespace separated); write one line per
                       query: `0xALLOWED 0xAUDITALLOW 0xAUDITDENY` (8 hex
                       digits each, permission value v is bit v-1, as in
                       libsepol's struct av_decision), or `error: MESSAGE`
                       for an invalid query (then carry on); exit 0 at EOF
  --format hex         the batch output format (the only one)
  --no-cache           in batch mode, parse and compute every query from
                       scratch instead of memoizing contexts and decisions

exit status: 0 granted, 1 denied, 2 error (usage, invalid context, undefined
name with handle_unknown reject, unreadable policy). Invalid contexts are
errors, not denials: status 2, like grep's status for trouble.
";

const EXPLAIN: &str = "\
usage: rampart explain [--bool NAME=on|off]... SCONTEXT TCONTEXT CLASS PERM

Explains the decision for one permission, like sesearch and audit2why:

  granted  the allow rules that grant it, written like sesearch
           (`allow SOURCE TARGET:CLASS { perms };`, with attributes as in
           the rule), conditional ones with their expression and whether
           their branch is active (`[ a && b ]:True (active: a=on b=on)`);
  denied   which step removes it:
           - no allow rule grants it: shows conditional rules that would
             grant it with other boolean values, and dontaudit rules that
             silence the denial;
           - a constraint: prints it like `seinfo --constrain` and the value
             of each comparison for these contexts;
           - a process transition to another role without `allow R1 R2;`;
           - typebounds: the bounding type is not granted the permission.

Type sets in constraints are printed as the attribute with exactly those
types when there is one (the binary policy keeps the expanded set).

options:
  --bool NAME=on|off   evaluate with boolean NAME set (repeatable)

exit status: 0 granted, 1 denied, 2 error.
";

const BENCH: &str = "\
usage: rampart [--policy PATH] bench seeds [--quick] [--json] [--out PATH]
       rampart bench enforce [OPTIONS]   (see `rampart bench enforce --help`)

Reruns the experiments of the seed threads in one process: AVC hits with 1
and 2 threads, rcutest (1-byte writes to tmpfs), lmbench simple read/write
(/dev/zero, /dev/null) and a chat room over loopback TCP, each with a check
per call, through Rampart's AVC and beside the designs the seeds measured:
none, global_mutex, rwlock, shared_counter, kref, percpu_ref,
module_refcount, full_revalidate, unsync_hashmap, rampart. Keys come from
the policy's allow rules. Prints medians over interleaved rounds and the
issue 4 targets; progress goes to stderr.

The full run takes 10 to 20 minutes and writes its section of
docs/benchmarks.md (between `<!-- seeds:begin -->` and `<!-- seeds:end -->`)
and PNG charts in docs/img/; run it from the repository root.

options:
  --quick        a shorter run (about 2 minutes, fewer calls and rounds);
                 writes no file unless --out is given
  --json         print one JSON object instead of tables
  --out PATH     the Markdown file to update (charts go to img/ beside it);
                 default for the full run: docs/benchmarks.md

exit status: 0 done, 2 error (usage, unreadable policy, a file or socket
the benchmarks need).
";
