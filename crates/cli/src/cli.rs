//! The command line, defined once.
//!
//! Every command, option and help text of `rampart` is in the types
//! below (clap's derive). Parsing, `--help`, `rampart help COMMAND`,
//! "did you mean" hints for misspelled commands and options, the shell
//! completions (`rampart completions SHELL`) and the man pages
//! (`rampart manpage`) are all generated from them, so none of those can
//! drift from what the parser accepts. The command modules take the
//! parsed structs; the daemon's flags are rampart-enforce's
//! [`FileConfig`], the same struct that reads its TOML file.
//!
//! Contracts kept from the hand-written parsers this replaced: usage
//! errors exit with status 2 and one line on stderr ([`usage_error`]);
//! file names and `run`'s command words are `PathBuf`/`OsString`, so
//! they need not be UTF-8; `--policy` is accepted before or after the
//! command; `relabel`'s short flags cluster (`-Rnv`); an option given
//! twice takes its last value (scripts add to a base command line).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{ArgAction, Args, CommandFactory, Parser, Subcommand};
use rampart_enforce::FileConfig;
use rampart_label::FileType;

/// Exit statuses, at the end of `rampart --help` and the man page.
const EXIT_STATUS: &str = "\
Exit status:
  0  success; for check and explain: every permission asked about is granted
  1  check and explain: a permission asked about is denied
  2  error: invalid usage, invalid context, undefined name, unreadable policy
  label, getlabel and relabel follow matchpathcon, ls and restorecon: see
  their help; run follows runcon";

#[derive(Debug, Parser)]
#[command(
    name = "rampart",
    version,
    about = "Mandatory access control from userspace: SELinux decisions from the kernel binary policy, \
             bit-exact with libsepol, enforced by a fanotify daemon; file labels; AppArmor decisions",
    after_help = EXIT_STATUS,
    disable_version_flag = true,
    args_override_self = true,
    subcommand_value_name = "COMMAND"
)]
pub struct Cli {
    /// The kernel binary policy (default: the system's)
    ///
    /// The kernel binary policy to read, before or after the command;
    /// default: the system policy (SELINUXTYPE in /etc/selinux/config,
    /// then the highest /etc/selinux/TYPE/policy/policy.N).
    #[arg(long, global = true, value_name = "PATH")]
    pub policy: Option<PathBuf>,

    /// Print the version
    #[arg(short = 'V', long)]
    pub version: bool,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Statistics of the policy, counted like `seinfo`
    #[command(subcommand, subcommand_value_name = "SUBCOMMAND")]
    Policy(PolicyCommand),
    /// The access decision for a source, a target and a class
    #[command(
        long_about = CHECK,
        override_usage = "rampart check [--bool NAME=on|off]... SCONTEXT TCONTEXT CLASS [PERM...]\n       \
                          rampart check --batch [--format hex] [--no-cache] [--bool NAME=on|off]..."
    )]
    Check(CheckArgs),
    /// Why one permission is granted or denied
    #[command(long_about = EXPLAIN)]
    Explain(ExplainArgs),
    /// The file_contexts label of files, like `matchpathcon`
    #[command(long_about = LABEL)]
    Label(LabelArgs),
    /// The security.selinux attribute of files, like `ls -Zd`
    #[command(long_about = GETLABEL)]
    Getlabel(GetLabelArgs),
    /// Set files' labels from file_contexts, like `restorecon`
    #[command(long_about = RELABEL)]
    Relabel(RelabelArgs),
    /// Run rampartd, the enforcing daemon, in the foreground
    #[command(long_about = DAEMON)]
    Daemon(Box<DaemonArgs>),
    /// Run a command in a security context (the runcon analog)
    #[command(long_about = RUN)]
    Run(RunArgs),
    /// The daemon's state and counters, like `sestatus`
    #[command(after_long_help = CONTROL)]
    Status(StatusArgs),
    /// Switch the daemon between enforcing and permissive
    #[command(after_long_help = CONTROL)]
    Setenforce(SetEnforceArgs),
    /// Make the daemon reload the policy and file_contexts
    #[command(after_long_help = CONTROL)]
    Reload(SocketArg),
    /// Set a boolean in the daemon's policy
    #[command(after_long_help = CONTROL)]
    Setbool(SetBoolArgs),
    /// Enforce the system policy on a web server, in a private namespace
    #[command(long_about = DEMO)]
    Demo,
    /// AppArmor decisions from apparmor_parser's binary policy
    #[command(subcommand, subcommand_value_name = "SUBCOMMAND")]
    Apparmor(AppArmorCommand),
    /// The benchmarks: the seed experiments, the enforcement costs
    #[cfg(feature = "bench")]
    #[command(subcommand, subcommand_value_name = "SUBCOMMAND")]
    Bench(BenchCommand),
    /// Not in this build: `cargo build --release -p rampart --features bench`
    #[cfg(not(feature = "bench"))]
    #[command(hide = true, disable_help_flag = true)]
    Bench {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        args: Vec<OsString>,
    },
    /// Print a shell completion script (installed by scripts/main.sh)
    #[command(hide = true)]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page rampart(1), in roff; with --dir, write it and
    /// one page per command there (rampart-check(1)...), as
    /// scripts/main.sh installs them
    #[command(hide = true)]
    Manpage {
        /// Write rampart.1 and every command's page into DIR
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

// ---------------------------------------------------------------------
// Policy queries.

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Statistics of the policy, counted like `seinfo`
    #[command(long_about = POLICY_INFO)]
    Info,
}

const POLICY_INFO: &str = "\
Prints statistics of the policy in the format of `seinfo` (setools), with
the same counting rules, followed by counts seinfo does not print:

  Statistics for policy file: PATH
  Policy Version:             33 (MLS enabled)
  Target Policy:              selinux
  Handle unknown classes:     allow
    Classes:             134    Permissions:         425
    ...

Rule counts are avtab entries (unconditional and conditional) of each
kind; Type_trans also counts name-based transitions, one per source type
(shown alone as Filename_trans). Permissions is the permissions of every
common plus every class's own. Types excludes attributes. MLS Constrain
counts constraints whose expression compares levels, Constraints the
others. Aliases counts type aliases.";

/// A `--bool NAME=on|off` setting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoolSetting {
    pub name: String,
    pub value: bool,
}

/// `NAME=on|off` (also `true|false`, `1|0`, as `setsebool` accepts).
fn bool_setting(s: &str) -> Result<BoolSetting, String> {
    let Some((name, value)) = s.split_once('=') else {
        return Err(format!("`--bool` expects NAME=on|off, got `{s}`"));
    };
    if name.is_empty() {
        return Err(format!("`--bool {s}` has no boolean name; write NAME=on|off"));
    }
    Ok(BoolSetting { name: name.to_owned(), value: on_off(value)? })
}

/// `on|off`, `1|0`, `true|false` (any case), as `setsebool` accepts.
fn on_off(word: &str) -> Result<bool, String> {
    match word.to_ascii_lowercase().as_str() {
        "on" | "1" | "true" => Ok(true),
        "off" | "0" | "false" => Ok(false),
        _ => Err(format!("`{word}` is neither on nor off (1 or 0)")),
    }
}

/// `setenforce`'s words: those of [`on_off`] and `Enforcing|Permissive`.
fn enforcing(word: &str) -> Result<bool, String> {
    match word.to_ascii_lowercase().as_str() {
        "enforcing" => Ok(true),
        "permissive" => Ok(false),
        _ => on_off(word).map_err(|_| format!("`{word}`: give 1 or 0 (Enforcing or Permissive)")),
    }
}

/// The three names every query needs.
#[derive(Clone, Debug, PartialEq, Eq, Args)]
pub struct QueryArgs {
    /// The source context, e.g. system_u:system_r:sshd_t:s0
    pub scontext: String,
    /// The target context
    pub tcontext: String,
    /// The object class, e.g. file
    pub class: String,
}

const CHECK: &str = "\
Computes the access decision for SCONTEXT acting on TCONTEXT for object
class CLASS, and prints the permissions by name:

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

With --batch, reads queries from stdin, one `SCONTEXT TCONTEXT CLASS` per
line (whitespace separated), and writes one line per query:
`0xALLOWED 0xAUDITALLOW 0xAUDITDENY` (8 hex digits each, permission value
v is bit v-1, as in libsepol's struct av_decision), or `error: MESSAGE`
for an invalid query (then carries on); exits 0 at EOF.

Exit status: 0 granted, 1 denied, 2 error (usage, invalid context,
undefined name with handle_unknown reject, unreadable policy). Invalid
contexts are errors, not denials: status 2, like grep's status for
trouble.";

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Evaluate with boolean NAME set (repeatable); the others keep the
    /// policy's defaults
    #[arg(long = "bool", value_name = "NAME=on|off", value_parser = bool_setting)]
    pub bools: Vec<BoolSetting>,
    /// Read queries from stdin, one per line; answer in hex (see --help)
    #[arg(long, conflicts_with_all = ["scontext", "tcontext", "class", "perms"])]
    pub batch: bool,
    /// The batch output format (the only one)
    #[arg(long, value_name = "FORMAT", value_parser = ["hex"], conflicts_with = "scontext")]
    pub format: Option<String>,
    /// With --batch: compute every query from scratch instead of
    /// memoizing contexts and decisions
    #[arg(long, conflicts_with = "scontext")]
    pub no_cache: bool,
    /// The source context, e.g. system_u:system_r:sshd_t:s0
    #[arg(required_unless_present = "batch")]
    pub scontext: Option<String>,
    /// The target context
    #[arg(required_unless_present = "batch")]
    pub tcontext: Option<String>,
    /// The object class, e.g. file
    #[arg(required_unless_present = "batch")]
    pub class: Option<String>,
    /// Permissions to ask about: exit 1 if any is denied
    #[arg(value_name = "PERM")]
    pub perms: Vec<String>,
}

impl CheckArgs {
    /// The query, unless this is `--batch`.
    pub fn query(&self) -> Option<QueryArgs> {
        Some(QueryArgs {
            scontext: self.scontext.clone()?,
            tcontext: self.tcontext.clone()?,
            class: self.class.clone()?,
        })
    }
}

const EXPLAIN: &str = "\
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

Exit status: 0 granted, 1 denied, 2 error.";

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Evaluate with boolean NAME set (repeatable)
    #[arg(long = "bool", value_name = "NAME=on|off", value_parser = bool_setting)]
    pub bools: Vec<BoolSetting>,
    #[command(flatten)]
    pub query: QueryArgs,
    /// The permission to explain
    pub perm: String,
}

// ---------------------------------------------------------------------
// File labels.

/// The `--type` words, in file_contexts order.
pub const TYPE_NAMES: &str = "file dir lnk_file chr_file blk_file sock_file fifo_file";

/// The file type named by a `--type` word (the policy's class names).
pub fn parse_type(word: &str) -> Option<FileType> {
    FileType::ALL.into_iter().find(|t| t.class_name() == word)
}

fn file_type(word: &str) -> Result<FileType, String> {
    parse_type(word).ok_or_else(|| format!("unknown file type; use one of {TYPE_NAMES}"))
}

/// File operands as given, the empty name included: clap's `PathBuf`
/// parser refuses it, while matchpathcon and ls answer it (an error for
/// that one file).
fn operand() -> impl clap::builder::TypedValueParser<Value = PathBuf> {
    clap::builder::TypedValueParser::map(clap::builder::OsStringValueParser::new(), PathBuf::from)
}

/// Which file_contexts to load.
#[derive(Debug, Default, PartialEq, Eq, Args)]
pub struct Source {
    /// The file_contexts to use: a directory holding `file_contexts`, or
    /// the file itself (with its .homedirs, .local, .subs_dist and .subs
    /// beside it, like matchpathcon -f); default: the system one,
    /// /etc/selinux/TYPE/contexts/files
    #[arg(long, value_name = "DIR_OR_FILE")]
    pub file_contexts: Option<PathBuf>,
}

const LABEL: &str = "\
Prints the context file_contexts gives each PATH, like matchpathcon
(libselinux 3.4), one line per PATH:

  /etc/passwd<TAB>system_u:object_r:etc_t:s0
  /proc/self<TAB><<none>>

<<none>> means no label (no matching line, or a line whose context is
<<none>>). As matchpathcon does: one trailing `/` is removed from PATH, the
file type is PATH's own (lstat: a symlink is looked up as a symlink, never
followed), or any type when PATH does not exist; PATH is not resolved
(no realpath). PATH is bytes; it need not be UTF-8. Every context is
checked against the policy (--policy).

With --batch, reads lines `PATH` or `PATH<TAB>TYPE` from stdin and prints
one line per input line: the context or <<none>>. Without TYPE the lookup
matches any type (mode 0, as selabel_lookup). A path that contains a tab
needs a TYPE, or a tab at the end of the line for any type. Lines with an
unknown TYPE or an empty path are answered `error: MESSAGE`. Output is
flushed whenever no more input is waiting, so a caller can write one line
and read its answer.

Exit status: 0 done; 1 a lookup failed (an empty PATH, as matchpathcon);
2 error (usage, unreadable or invalid file_contexts, unreadable policy).";

#[derive(Debug, Args)]
pub struct LabelArgs {
    #[command(flatten)]
    pub source: Source,
    /// Look PATH up as this type instead of its own: file dir lnk_file
    /// chr_file blk_file sock_file fifo_file
    #[arg(long = "type", value_name = "TYPE", value_parser = file_type, conflicts_with = "batch")]
    pub file_type: Option<FileType>,
    /// Read PATH or PATH<TAB>TYPE lines from stdin (see --help)
    #[arg(long, conflicts_with = "paths")]
    pub batch: bool,
    /// The files to look up
    #[arg(value_name = "PATH", required_unless_present = "batch", value_parser = operand())]
    pub paths: Vec<PathBuf>,
}

const GETLABEL: &str = "\
Prints each PATH's security.selinux extended attribute, like `ls -Zd`:

  system_u:object_r:etc_t:s0 /etc/passwd
  ? /tmp/new-file

`?` means the file has no label (or its filesystem has no extended
attributes). Symlinks are not followed: a link shows its own label. The
attribute is read directly, so this works with SELinux disabled. Lines
come in argument order, with PATH as given.

Exit status: 0 done; 1 a label could not be read (shown as `?`, the reason
on stderr); 2 a PATH cannot be accessed, or a usage error.";

#[derive(Debug, Args)]
pub struct GetLabelArgs {
    /// The files whose label to print
    #[arg(value_name = "PATH", required = true, value_parser = operand())]
    pub paths: Vec<PathBuf>,
}

const RELABEL: &str = "\
Sets each PATH's security.selinux attribute to its file_contexts label,
with restorecon's rules (libselinux 3.4): a file without a label in
file_contexts is skipped; a file without an attribute gets the whole
context; otherwise only the type is changed (user, role and range kept)
unless -F, and a file whose type is listed in customizable_types is left
alone unless -F. Symlinks are labeled themselves, never followed. Messages
are restorecon's; errors go to stderr and the run goes on. Short options
combine: -Rnv.

When stderr is a terminal and -v is off, a progress line (files,
relabeled, errors, files per second) is shown there and stays as a
summary at the end.

Exit status: 0 done; 255 any file could not be handled (restorecon's
status); 2 usage error, unreadable file_contexts or policy, bad --root.";

#[derive(Debug, Default, PartialEq, Eq, Args)]
pub struct RelabelArgs {
    /// Change nothing; with -v, print what would change
    #[arg(short = 'n')]
    pub dry_run: bool,
    /// Print every change: `Relabeled PATH from OLD to NEW`
    #[arg(short = 'v')]
    pub verbose: bool,
    /// Walk directories recursively
    #[arg(short = 'R')]
    pub recursive: bool,
    /// Force: set the whole context, ignore customizable_types
    #[arg(short = 'F')]
    pub force: bool,
    /// Stay on PATH's filesystem (always so: there is no seclabel check,
    /// so other mounts are never entered)
    #[arg(short = 'x')]
    pub one_filesystem: bool,
    /// PATHs are under DIR, a tree mounted or unpacked there:
    /// DIR/etc/passwd is labeled as /etc/passwd would be (like setfiles
    /// -r; DIR must end at a path component)
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    #[command(flatten)]
    pub source: Source,
    /// The files (with -R, the trees) to relabel
    #[arg(value_name = "PATH", required = true, value_parser = operand())]
    pub paths: Vec<PathBuf>,
}

// ---------------------------------------------------------------------
// Enforcement.

const DAEMON: &str = "\
Runs rampartd in the foreground: answers fanotify open, exec and read
permission events on the filesystems given (each PATH must be a mount
point; every mount of its filesystem, in every mount namespace, is
covered) with the policy's decisions (--policy, before or after
`daemon`). Processes not started under `rampart run` run in the default
context (unconfined_u:unconfined_r:unconfined_t:s0); confined processes
are kept in cgroups under the cgroup v2 hierarchy's NAME (rampart),
which outlive the daemon: a restarted daemon finds them in their
domains. Denials go to the audit log (auditd format; stderr in dmesg
format when no log is given). SIGHUP reloads the policy; SIGTERM stops,
and the kernel then allows whatever is still queued.

Every flag is also a key of the --config file (contrib/rampartd.toml):
`--mark` is `mark = [...]`, `--permissive-domain` is
`permissive-domains = [...]`, `--no-ignore-marks` is
`ignore-marks = false`, the others by their names. Flags win over the
file; --mark and --permissive-domain add to its lists.";

#[derive(Debug, Args)]
pub struct DaemonArgs {
    /// A TOML file with the same settings (flags win)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub flags: FileConfig,
}

/// The daemon's control socket, for the commands that talk to it.
#[derive(Debug, Args)]
pub struct SocketArg {
    /// The daemon's control socket
    #[arg(long, value_name = "PATH", default_value = rampart_enforce::DEFAULT_SOCKET)]
    pub socket: PathBuf,
}

const RUN: &str = "\
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
process then lacks those defences).

Everything after `--`, or from CMD on, is CMD's own command line.

Exit status 125 when rampart fails, 126 when CMD cannot run, 127 when it
is not found.";

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub socket: SocketArg,
    /// The context to run CMD in (default with --apparmor: the current
    /// domain)
    #[arg(short = 'c', long, value_name = "CTX", required_unless_present = "apparmor")]
    pub context: Option<String>,
    /// The AppArmor profile to run CMD under (the `aa-exec -p` analog;
    /// the daemon must run with --apparmor)
    #[arg(short = 'p', long, value_name = "PROFILE")]
    pub apparmor: Option<String>,
    /// Skip the daemon's checks (root in the default domain only)
    #[arg(long)]
    pub force: bool,
    /// Skip the launcher's sandbox (fanotify mediation alone)
    #[arg(long)]
    pub no_sandbox: bool,
    /// The command to run and its arguments
    #[arg(value_name = "CMD", required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<OsString>,
}

const CONTROL: &str = "\
Talks to rampartd over its control socket (root only; default
/run/rampart/rampartd.sock).";

#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub socket: SocketArg,
    /// Print one JSON object instead of text
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SetEnforceArgs {
    #[command(flatten)]
    pub socket: SocketArg,
    /// 1 or Enforcing: deny what the policy denies; 0 or Permissive: only
    /// log it
    #[arg(value_name = "1|0", value_parser = enforcing, action = ArgAction::Set, required = true)]
    pub enforcing: bool,
}

#[derive(Debug, Args)]
pub struct SetBoolArgs {
    #[command(flatten)]
    pub socket: SocketArg,
    /// The boolean's name
    pub name: String,
    /// Its new value
    #[arg(value_name = "on|off", value_parser = on_off, action = ArgAction::Set, required = true)]
    pub value: bool,
}

const DEMO: &str = "\
In a private mount namespace, on a tmpfs it labels, starts rampartd with
the system policy, runs a confined web server domain that reads its
content (allowed) and a shadow file (denied), prints the audit lines and
statistics, and cleans up. Needs root and the SELinux reference policy.";

// ---------------------------------------------------------------------
// AppArmor.

const APPARMOR: &str = "\
Loads binary policy files written by `apparmor_parser -Q -K -o FILE`, in
order (each like one write to .replace).";

#[derive(Debug, Subcommand)]
pub enum AppArmorCommand {
    /// Read PROFILE<TAB>PATH<TAB>MASK[<TAB>owner=1|owner=0][<TAB>link=TARGET]
    /// lines, print DECISION<TAB>ALLOWED<TAB>audit=A,quiet=Q,log=L<TAB>EXEC
    #[command(after_long_help = APPARMOR)]
    Check(AppArmorBatch),
    /// Read executable paths, print PROFILE<TAB>INFO
    #[command(after_long_help = APPARMOR)]
    Attach(AppArmorBatch),
    /// List the loaded profiles
    #[command(after_long_help = APPARMOR)]
    Info(AppArmorFiles),
    /// The profiles of a directory by mode, and the processes rampartd
    /// confines, like aa-status
    #[command(after_long_help = APPARMOR_SYSTEM)]
    Status(AppArmorStatusArgs),
    /// Put profiles in complain mode, like aa-complain, then reload rampartd
    #[command(after_long_help = APPARMOR_MODE)]
    Complain(AppArmorMode),
    /// Put profiles in enforce mode, like aa-enforce, then reload rampartd
    #[command(after_long_help = APPARMOR_MODE)]
    Enforce(AppArmorMode),
}

const APPARMOR_SYSTEM: &str = "\
Compiles the directory's profiles as the init scripts load them (top-level
files; disable/ and force-complain/ links; abstractions/, tunables/ and
local/ are includes) with apparmor_parser, through the cache, and counts
them as aa-status does (hats and children too). Files that fail to compile
are reported on stderr and skipped.";

const APPARMOR_MODE: &str = "\
PROFILE is a file of the profile directory (its name or path: every
profile in it), a profile's name, or a program's path (the profile that
attaches to it). The mode flags of the profile's header lines are
rewritten as aa-complain and aa-enforce rewrite them (hats follow), the
disable/ link is removed (and force-complain/ for enforce); then a running
rampartd is asked to reload (skipped when none is listening).";

#[derive(Debug, Args)]
pub struct AppArmorDir {
    /// The profile directory
    #[arg(long, value_name = "DIR", default_value = rampart_apparmor::profile_set::DEFAULT_DIR)]
    pub profiles: PathBuf,
    /// Where compiled profiles are kept
    #[arg(long, value_name = "DIR", default_value = rampart_apparmor::compile::DEFAULT_CACHE)]
    pub cache: PathBuf,
    /// The feature set the profiles are compiled for (as rampartd's
    /// --apparmor-features)
    #[arg(long, value_name = "FILE", default_value = rampart_apparmor::compile::DEFAULT_FEATURES)]
    pub features: PathBuf,
}

#[derive(Debug, Args)]
pub struct AppArmorStatusArgs {
    #[command(flatten)]
    pub dir: AppArmorDir,
    /// Where to ask rampartd for the processes under a profile
    #[command(flatten)]
    pub socket: SocketArg,
}

#[derive(Debug, Args)]
pub struct AppArmorMode {
    /// Profile files, profile names or program paths
    #[arg(value_name = "PROFILE", required = true)]
    pub targets: Vec<String>,
    #[command(flatten)]
    pub dir: AppArmorDir,
    #[command(flatten)]
    pub socket: SocketArg,
    /// Change the files only; do not ask rampartd to reload
    #[arg(long)]
    pub no_reload: bool,
}

#[derive(Debug, Args)]
pub struct AppArmorBatch {
    /// Lines on stdin, answers on stdout (the only mode; required)
    #[arg(long, required = true)]
    pub batch: bool,
    #[command(flatten)]
    pub files: AppArmorFiles,
}

#[derive(Debug, Args)]
pub struct AppArmorFiles {
    /// Binary policy files (apparmor_parser -o FILE)
    #[arg(value_name = "BINARY", required = true)]
    pub files: Vec<PathBuf>,
}

// ---------------------------------------------------------------------
// Benchmarks (`--features bench`).

#[cfg(feature = "bench")]
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Rerun the seed experiments: Rampart's AVC beside the designs the
    /// seeds measured (locks, shared counters)
    #[command(long_about = SEEDS)]
    Seeds(SeedsArgs),
    /// What a fanotify listener costs: none, a trivial responder,
    /// fapolicyd and rampartd side by side
    #[command(long_about = BENCH_ENFORCE)]
    Enforce(BenchEnforceArgs),
}

#[cfg(feature = "bench")]
const SEEDS: &str = "\
Reruns the experiments of the seed threads in one process: AVC hits with 1
and 2 threads, rcutest (1-byte writes to tmpfs), lmbench simple read/write
(/dev/zero, /dev/null) and a chat room over loopback TCP, each with a check
per call, through Rampart's AVC and beside the designs the seeds measured:
none, global_mutex, rwlock, shared_counter, kref, percpu_ref,
module_refcount, full_revalidate, unsync_hashmap, rampart. Keys come from
the policy's allow rules. Prints medians over interleaved rounds and the
issue 4 targets; progress goes to stderr.

The apparmor workload (seed 003): threads opening files under lighttpd's
AppArmor profile (decided by Rampart's AppArmor engine, and from cached
decisions), with the label kept alive by a shared refcount (kref), per-thread
counts (percpu_ref) or Rampart's published snapshot; per-thread throughput
and scaling efficiency at each --threads count, and the issue 11 targets.
It compiles the profile with apparmor_parser unless --apparmor-policy gives
a precompiled one. `--quick --workloads apparmor` runs it alone in under a
minute on 2 CPUs.

The full run takes 10 to 20 minutes and writes its section of
docs/benchmarks.md (between `<!-- seeds:begin -->` and `<!-- seeds:end -->`),
the AppArmor workload's (between `<!-- seeds-apparmor:begin -->` and
`<!-- seeds-apparmor:end -->`) and PNG charts in docs/img/; run it from the
repository root. Without apparmor_parser or apparmor-profiles the full run
skips the AppArmor workload and says why.

Exit status: 0 done, 2 error (usage, unreadable policy, a file or socket
the benchmarks need).";

#[cfg(feature = "bench")]
#[derive(Debug, Args)]
pub struct SeedsArgs {
    /// A shorter run (about 2 minutes, fewer calls and rounds); writes no
    /// file unless --out is given
    #[arg(long)]
    pub quick: bool,
    /// Seconds, for tests; writes no file unless --out is given
    #[arg(long, hide = true, conflicts_with = "quick")]
    pub smoke: bool,
    /// Print one JSON object instead of tables
    #[arg(long)]
    pub json: bool,
    /// The Markdown file to update (charts go to img/ beside it); default
    /// for the full run: docs/benchmarks.md
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Thread counts of the AVC hit, rcutest and AppArmor workloads, 1 to 256
    /// (default 1, 2 and the powers of two up to the CPUs available; 1
    /// and 2 always run: issue 4's targets are at 1 and 2 threads)
    #[arg(
        long,
        value_name = "N,N,...",
        value_delimiter = ',',
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=256)
    )]
    pub threads: Option<Vec<usize>>,
    /// Only these workloads (default all): hits, rcutest, rw, chat,
    /// apparmor. With only apparmor, only its section of the Markdown
    /// file is written
    #[arg(
        long,
        value_name = "W,W,...",
        value_delimiter = ',',
        value_parser = ["hits", "rcutest", "rw", "chat", "apparmor"]
    )]
    pub workloads: Option<Vec<String>>,
    /// The AppArmor workload's profile, precompiled (for a machine without
    /// apparmor_parser or Debian's apparmor-profiles): a binary holding
    /// /usr/sbin/lighttpd, from `apparmor_parser -Q -K --skip-cache -I
    /// /etc/apparmor.d -I /usr/share/apparmor/extra-profiles -o FILE
    /// /usr/share/apparmor/extra-profiles/usr.sbin.lighttpd`; default:
    /// compile that profile at run time
    #[arg(long, value_name = "FILE")]
    pub apparmor_policy: Option<PathBuf>,
    /// Rounds of every workload (default: quick 5 to 15, full 7 to 21),
    /// each as long as before: a shorter run on many CPUs
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000))]
    pub rounds: Option<usize>,
}

#[cfg(feature = "bench")]
const BENCH_ENFORCE: &str = "\
Measures open and exec latency and event throughput on a tmpfs mounted in
a private mount namespace, with no listener, a trivial responder,
fapolicyd (run in the namespace, watching only that tmpfs) and rampartd
(this binary's `daemon`, unless --rampart says otherwise, with --policy,
default /etc/selinux/default/policy/policy.33). Needs root. --quick takes
about a minute; the full run writes the enforcement section of
docs/benchmarks.md with --write-docs (or of --out PATH). After the
unpinned rounds come the same rounds with everything on one CPU
(--no-pinned skips them) and with the clients on one CPU and the
listeners on another (--no-split skips them). Extra daemon flags for
measuring alternatives: RAMPART_BENCH_DAEMON_ARGS=\"--spin-us 0\".

The mixed-domain workloads (no listener and rampartd: opens of httpd_t's
content while an httpd_t process is alive, by a client in httpd_t, and a
second after it exited) need Debian's policy; --no-mixed skips them.
(--open-loop FILE, hidden, is their client: it opens FILE for
--measure-ms and prints OPS WALL_NS SLEEPS.)";

#[cfg(feature = "bench")]
#[derive(Debug, Args)]
pub struct BenchEnforceArgs {
    /// About a minute instead of several: fewer and shorter rounds
    #[arg(long)]
    pub quick: bool,
    /// Print one JSON object instead of tables
    #[arg(long)]
    pub json: bool,
    /// Write the enforcement section of docs/benchmarks.md (or of --out)
    #[arg(long)]
    pub write_docs: bool,
    /// The Markdown file --write-docs writes
    #[arg(long, value_name = "PATH", requires = "write_docs")]
    pub out: Option<PathBuf>,
    /// Rounds (default 7, quick 3)
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=10_000))]
    pub rounds: Option<usize>,
    /// Milliseconds per measurement (default 750, quick 250)
    #[arg(long, value_name = "N")]
    pub measure_ms: Option<u64>,
    /// Client thread counts of the open and first-touch workloads, 1 to
    /// 256 (default 1, 2 and the powers of two up to the CPUs available;
    /// 1 is always run, ratios are over it)
    #[arg(
        long,
        value_name = "N,N,...",
        value_delimiter = ',',
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=256)
    )]
    pub clients: Option<Vec<usize>>,
    /// Skip the mixed-domain workloads (which need Debian's policy)
    #[arg(long)]
    pub no_mixed: bool,
    /// The variants to run, in this order in the first round
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_parser = clap::builder::PossibleValuesParser::new(["none", "trivial", "fapolicyd", "rampartd"])
    )]
    pub variants: Option<Vec<String>>,
    /// Run everything on this one CPU
    #[arg(long, value_name = "N", conflicts_with = "no_pinned")]
    pub pin_cpu: Option<usize>,
    /// Skip the rounds with everything on one CPU
    #[arg(long)]
    pub no_pinned: bool,
    /// Skip the rounds with clients and listeners on two CPUs
    #[arg(long)]
    pub no_split: bool,
    /// The rampart binary that runs rampartd (default: this one)
    #[arg(long, value_name = "PATH")]
    pub rampart: Option<PathBuf>,
    /// Only the mixed-domain workloads' client: open FILE in a loop
    #[arg(long, value_name = "FILE", hide = true)]
    pub open_loop: Option<PathBuf>,
}

// ---------------------------------------------------------------------
// Errors.

/// A clap error as one line in the project's style (the caller prefixes
/// `rampart: error: `): clap's message, the closest valid name when
/// clap has one, and which help to read. The multi-line form clap prints
/// itself would break the one-line contract of usage errors. `argv` is
/// the command line that failed (with the program name).
pub fn usage_error(e: &clap::Error, argv: &[OsString]) -> String {
    let command = command_path(argv);
    let mut message = match (e.kind(), e.get(ContextKind::InvalidArg)) {
        (ErrorKind::MissingRequiredArgument, Some(ContextValue::Strings(args))) => {
            format!("missing {}", args.join(" "))
        }
        (ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand, _) => {
            format!("`{command}` needs a subcommand")
        }
        (ErrorKind::InvalidUtf8, _) => "an argument is not valid UTF-8 (names in the policy are ASCII)".to_owned(),
        _ => {
            let rendered = e.render().to_string();
            let first = rendered.lines().next().unwrap_or_default();
            first.strip_prefix("error: ").unwrap_or(first).to_owned()
        }
    };
    for kind in [ContextKind::SuggestedSubcommand, ContextKind::SuggestedArg, ContextKind::SuggestedValue] {
        match e.get(kind) {
            Some(ContextValue::String(s)) => message.push_str(&format!(" (did you mean `{s}`?)")),
            Some(ContextValue::Strings(s)) if !s.is_empty() => {
                message.push_str(&format!(" (did you mean `{}`?)", s.join("` or `")))
            }
            _ => {}
        }
    }
    message.push_str(&format!("; run `{command} --help`"));
    message
}

/// The (sub)command `argv` names, e.g. `rampart bench enforce`: its
/// words that name a subcommand of the one before, up to `--`.
fn command_path(argv: &[OsString]) -> String {
    let mut command = Cli::command();
    let mut path = vec!["rampart".to_owned()];
    for word in argv.iter().skip(1).take_while(|w| *w != "--").filter_map(|w| w.to_str()) {
        if let Some(sub) = command.find_subcommand(word).cloned() {
            path.push(sub.get_name().to_owned());
            command = sub;
        }
    }
    path.join(" ")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use std::os::unix::ffi::OsStrExt;

    use super::*;

    fn p(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("rampart").chain(args.iter().copied()))
    }

    fn command(args: &[&str]) -> Command {
        match p(args) {
            Ok(Cli { command: Some(c), .. }) => c,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn the_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn policy_before_or_after_the_command() {
        for args in [&["--policy", "/x", "policy", "info"][..], &["policy", "info", "--policy=/x"]] {
            let cli = p(args).unwrap();
            assert_eq!(cli.policy, Some(PathBuf::from("/x")), "{args:?}");
            assert!(matches!(cli.command, Some(Command::Policy(PolicyCommand::Info))));
        }
    }

    #[test]
    fn the_last_value_wins() {
        let Some(Command::Daemon(d)) =
            p(&["--policy", "/a", "daemon", "--policy", "/b", "--threads", "2", "--threads=3"]).unwrap().command
        else {
            panic!()
        };
        assert_eq!(d.flags.threads, Some(3));
        assert_eq!(p(&["--policy", "/a", "policy", "info", "--policy", "/b"]).unwrap().policy, Some("/b".into()));
    }

    #[test]
    fn check_with_perms_and_bools_anywhere() {
        let Command::Check(c) =
            command(&["check", "s", "--bool", "a=on", "t", "file", "read", "--bool=b=off", "write"])
        else {
            panic!()
        };
        assert_eq!(c.query(), Some(QueryArgs { scontext: "s".into(), tcontext: "t".into(), class: "file".into() }));
        assert_eq!(c.perms, vec!["read", "write"]);
        let want = [BoolSetting { name: "a".into(), value: true }, BoolSetting { name: "b".into(), value: false }];
        assert_eq!(c.bools, want);
        let Command::Check(c) = command(&["check", "--", "-s", "t", "c"]) else { panic!() };
        assert_eq!(c.scontext.as_deref(), Some("-s"));
    }

    #[test]
    fn batch_options_go_with_batch_only() {
        let Command::Check(c) = command(&["check", "--batch", "--format", "hex", "--no-cache"]) else { panic!() };
        assert!(c.batch && c.no_cache && c.query().is_none());
        for args in [
            &["check", "--batch", "--format", "json"][..],
            &["check", "--batch", "s"],
            &["check", "--no-cache", "s", "t", "c"],
            &["explain", "--batch", "s", "t", "c", "p"],
        ] {
            assert_eq!(p(args).unwrap_err().exit_code(), 2, "{args:?}");
        }
    }

    #[test]
    fn relabel_flags_cluster_and_paths_are_bytes() {
        let Command::Relabel(r) =
            command(&["relabel", "-RvF", "-x", "--root", "/mnt", "--file-contexts=/fc", "/mnt/etc"])
        else {
            panic!()
        };
        assert!(r.recursive && r.verbose && r.force && r.one_filesystem && !r.dry_run);
        assert_eq!((r.root, r.source.file_contexts), (Some("/mnt".into()), Some("/fc".into())));
        let argv = [&b"rampart"[..], b"--policy", b"/p\xff", b"label", b"/a\xfe", b"--type=dir", b"--", b"-b"]
            .map(|a| std::ffi::OsStr::from_bytes(a).to_owned());
        let cli = Cli::try_parse_from(argv).unwrap();
        assert_eq!(cli.policy.unwrap().as_os_str().as_bytes(), b"/p\xff");
        let Some(Command::Label(l)) = cli.command else { panic!() };
        assert_eq!(l.paths[0].as_os_str().as_bytes(), b"/a\xfe");
        assert_eq!(l.paths[1], PathBuf::from("-b"));
        assert_eq!(l.file_type, Some(FileType::Directory));
    }

    #[test]
    fn daemon_marks_and_flags() {
        let Command::Daemon(d) =
            command(&["daemon", "--mark", "/a", "/b", "--permissive", "--threads=3", "--mark=/c", "--pollers", "2"])
        else {
            panic!()
        };
        let f = d.flags;
        assert_eq!(f.mark.unwrap(), vec![PathBuf::from("/a"), "/b".into(), "/c".into()]);
        assert_eq!((f.threads, f.pollers, f.permissive, f.ignore_marks), (Some(3), Some(2), Some(true), None));
        let Command::Daemon(d) =
            command(&["daemon", "--no-ignore-marks", "--permissive-domain", "a", "--permissive-domain=b"])
        else {
            panic!()
        };
        assert_eq!((d.flags.permissive, d.flags.ignore_marks), (None, Some(false)));
        assert_eq!(d.flags.permissive_domains, Some(vec!["a".into(), "b".into()]));
    }

    #[test]
    fn run_takes_the_rest() {
        assert!(matches!(
            command(&["setenforce", "Permissive"]),
            Command::Setenforce(SetEnforceArgs { enforcing: false, .. })
        ));
        assert!(matches!(command(&["setenforce", "1"]), Command::Setenforce(SetEnforceArgs { enforcing: true, .. })));
        assert!(matches!(command(&["setbool", "b", "on"]), Command::Setbool(SetBoolArgs { value: true, .. })));
        let Command::Run(r) = command(&["run", "--context", "a:b:c:s0", "--", "ls", "--all"]) else { panic!() };
        assert_eq!((r.context.as_deref(), r.command), (Some("a:b:c:s0"), vec![OsString::from("ls"), "--all".into()]));
        // --apparmor alone keeps the domain; neither is a usage error.
        let Command::Run(r) = command(&["run", "--apparmor", "/usr/bin/x", "--", "ls"]) else { panic!() };
        assert_eq!((r.context, r.apparmor.as_deref()), (None, Some("/usr/bin/x")));
        assert!(Cli::try_parse_from(["rampart", "run", "--", "ls"]).is_err());
        let Command::Run(r) = command(&["run", "--force", "-c", "x", "ls", "-l", "--policy", "p"]) else { panic!() };
        assert!(r.force && !r.no_sandbox);
        assert_eq!(r.command, ["ls", "-l", "--policy", "p"].map(OsString::from));
    }

    #[test]
    fn usage_errors_exit_2() {
        for args in [
            &[][..],
            &["chek"],
            &["check", "s", "t"],
            &["explain", "s", "t", "c"],
            &["explain", "s", "t", "c", "p", "q"],
            &["policy"],
            &["policy", "stats"],
            &["check", "--policy"],
            &["check", "--bool", "x"],
            &["check", "--bool", "x=maybe"],
            &["check", "--batch=yes"],
            &["run", "--", "ls"],
            &["run", "--context", "x"],
            &["setenforce", "maybe"],
            &["setbool", "x"],
            &["setenforce"],
            &["status", "extra"],
            &["daemon", "--threads", "many"],
            &["label", "--batch", "/x"],
            &["label", "-n", "/x"],
            &["getlabel", "--type", "dir", "/x"],
            &["relabel", "-Rq", "/x"],
            &["relabel", "-V", "/x"],
            &["apparmor", "check", "x"],
            &["apparmor", "info"],
        ] {
            match p(args) {
                Err(e) => assert_eq!(e.exit_code(), 2, "{args:?}"),
                Ok(Cli { command, .. }) => assert!(command.is_none(), "{args:?}"),
            }
        }
    }

    fn error(args: &[&str]) -> String {
        let argv: Vec<OsString> = std::iter::once("rampart").chain(args.iter().copied()).map(OsString::from).collect();
        usage_error(&Cli::try_parse_from(&argv).unwrap_err(), &argv)
    }

    #[test]
    fn errors_are_one_line_with_a_hint() {
        let e = error(&["chek"]);
        assert!(e.contains("(did you mean `check`?)") && e.ends_with("run `rampart --help`"), "{e}");
        let e = error(&["check", "a", "b"]);
        assert!(e.starts_with("missing <CLASS>") && e.ends_with("run `rampart check --help`"), "{e}");
        let e = error(&["policy", "info", "--bool", "a=on"]);
        assert!(e.contains("'--bool'") && e.ends_with("run `rampart policy info --help`"), "{e}");
        let e = error(&["--policy", "p", "daemon", "--threads", "x"]);
        assert!(e.contains("'x' for '--threads <N>'") && e.ends_with("run `rampart daemon --help`"), "{e}");
        assert_eq!(error(&["apparmor"]), "`rampart apparmor` needs a subcommand; run `rampart apparmor --help`");
    }
}
