//! The profile the workload's threads run under: lighttpd's, as shipped
//! in Debian's apparmor-profiles, compiled by the ecosystem's own
//! compiler (`apparmor_parser`) at run time, or read from a binary it
//! compiled earlier (`--apparmor-policy FILE`, for a machine without the
//! parser or the profile).
//!
//! Why lighttpd: a web server opening many files under one profile is
//! the seed's workload (nginx); lighttpd's is the web server profile
//! Debian ships, enforcing, with the web-data abstraction.

use std::path::{Path, PathBuf};
use std::process::Command;

use rampart_apparmor::{Policy, Profile};

use crate::error::BenchError;

/// The profile the threads run under.
pub const PROFILE: &str = "/usr/sbin/lighttpd";
/// Its source, as Debian's apparmor-profiles installs it.
pub const SOURCE: &str = "/usr/share/apparmor/extra-profiles/usr.sbin.lighttpd";
/// Where its includes (tunables, abstractions) live.
const INCLUDES: [&str; 2] = ["/etc/apparmor.d", "/usr/share/apparmor/extra-profiles"];
/// Where the parser is looked for, then `PATH`.
const PARSERS: [&str; 3] = ["/usr/sbin/apparmor_parser", "/sbin/apparmor_parser", "apparmor_parser"];

/// The profile and where it came from.
pub struct Loaded {
    pub profile: Profile,
    /// For the report: the source and compiler, or the binary file.
    pub origin: String,
}

/// Reads `file` if given, else compiles [`SOURCE`]; returns [`PROFILE`].
pub fn load(file: Option<&Path>) -> Result<Loaded, BenchError> {
    let (bytes, origin) = match file {
        Some(f) => {
            let bytes =
                std::fs::read(f).map_err(BenchError::io(format!("cannot read --apparmor-policy {}", f.display())))?;
            let origin = format!("`{}` (precompiled, {} bytes)", f.display(), bytes.len());
            (bytes, origin)
        }
        None => compile()?,
    };
    let shown = file.map_or_else(|| SOURCE.to_owned(), |f| f.display().to_string());
    let mut policy = Policy::new();
    policy.load(&bytes).map_err(|e| BenchError::Workload(format!("`{shown}` is not a usable AppArmor binary: {e}")))?;
    let profile = policy.profile(PROFILE).cloned().ok_or_else(|| {
        BenchError::Workload(format!(
            "`{shown}` has no profile `{PROFILE}`; compile it with: {}",
            compile_command(&PathBuf::from("FILE"))
        ))
    })?;
    Ok(Loaded { profile, origin })
}

/// The command that writes the binary `--apparmor-policy` reads.
pub fn compile_command(out: &Path) -> String {
    let includes: Vec<String> = INCLUDES.iter().map(|i| format!("-I {i}")).collect();
    format!("apparmor_parser -Q -K --skip-cache {} -o {} {SOURCE}", includes.join(" "), out.display())
}

/// Compiles [`SOURCE`] to stdout (`-S`) with the first parser found.
fn compile() -> Result<(Vec<u8>, String), BenchError> {
    let missing = |why: String| {
        BenchError::Workload(format!(
            "{why}; install apparmor and apparmor-profiles (scripts/install-deps.sh), or pass --apparmor-policy FILE \
             compiled elsewhere with: {}",
            compile_command(&PathBuf::from("FILE"))
        ))
    };
    if !Path::new(SOURCE).is_file() {
        return Err(missing(format!("the profile source `{SOURCE}` is not here")));
    }
    for parser in PARSERS {
        let mut cmd = Command::new(parser);
        cmd.args(["-Q", "-K", "--skip-cache", "-S"]);
        for i in INCLUDES {
            cmd.args(["-I", i]);
        }
        let out = match cmd.arg(SOURCE).output() {
            Ok(o) => o,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(BenchError::Io { what: format!("cannot run {parser}"), source: e }),
        };
        if !out.status.success() || out.stdout.is_empty() {
            return Err(BenchError::Workload(format!(
                "{parser} could not compile {SOURCE}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let version = Command::new(parser)
            .arg("--version")
            .output()
            .ok()
            .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().next().map(str::to_owned))
            .unwrap_or_else(|| parser.to_owned());
        let origin = format!("`{SOURCE}` compiled at run time by {version}");
        return Ok((out.stdout, origin));
    }
    Err(missing("apparmor_parser is not installed".into()))
}
