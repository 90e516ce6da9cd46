//! Compiling a profile file with `apparmor_parser`, through a cache.
//!
//! Why a cache: the parser needs about 0.1 s per profile (DFA
//! construction), a directory of profiles seconds; a reload that changes
//! one profile should pay for that one.
//!
//! The key is what decides the binary: the preprocessed text (`apparmor_parser
//! -p`, every include flattened, so a change to an abstraction or a
//! `local/` file changes it), the parser's version line, the feature set
//! it compiles for (the directory name `--print-cache-dir` derives from
//! it, as the parser's own cache does) and the mode (`-C`). The binary is
//! compiled from that very text (on stdin; byte for byte what compiling
//! the file gives), so a profile edited between the two steps cannot
//! leave a binary under a key it does not belong to. An entry stores its
//! key and is used only when the key matches exactly: the file name is a
//! 64-bit hash, and a collision costs a compilation, never a wrong
//! binary. Entries are written to a temporary file and renamed, so a
//! crash never leaves half of one.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::profile_dir::ProfileFile;

/// Where Debian installs the parser.
pub const DEFAULT_PARSER: &str = "/sbin/apparmor_parser";
/// The cache directory by default.
pub const DEFAULT_CACHE: &str = "/var/cache/rampart/apparmor";
/// The feature set compiled for by default: AppArmor 3.0's ABI (Debian's
/// apparmor package), what a kernel with AppArmor reports at least. This
/// kernel has no AppArmor, and the parser's fallback set has no policydb:
/// `signal` rules would compile to nothing, and every signal would pass.
pub const DEFAULT_FEATURES: &str = "/etc/apparmor.d/abi/3.0";

/// First line of every cache entry; bump when the entry layout changes.
const MAGIC: &[u8] = b"rampart apparmor cache 1\n";

/// The parser and the cache it fills.
#[derive(Clone, Debug)]
pub struct Compiler {
    parser: PathBuf,
    cache: PathBuf,
    /// The feature set it compiles for (`--features-file`).
    features: PathBuf,
    /// Version and feature set: what besides the text decides the binary.
    stamp: String,
}

/// A compiled profile file.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// What `apparmor_parser -o` wrote.
    pub blob: Vec<u8>,
    /// Taken from the cache, not compiled.
    pub cache_hit: bool,
}

impl Compiler {
    /// Asks the parser for its version and the name of the feature set
    /// in `features`, and creates the cache directory (mode 0700: root's
    /// compiled policy).
    pub fn new(parser: &Path, cache: &Path, features: &Path) -> Result<Compiler, String> {
        let version = run_parser(parser, &[OsStr::new("--version")])?;
        let version = version.lines().next().unwrap_or_default().trim().to_owned();
        let cache_dir = run_parser(
            parser,
            &[OsStr::new("--features-file"), features.as_os_str(), OsStr::new("--print-cache-dir")],
        )?;
        let feature_set = cache_dir.trim().rsplit('/').next().unwrap_or_default().to_owned();
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(cache)
            .map_err(|e| format!("cache directory {}: {e}", cache.display()))?;
        Ok(Compiler {
            parser: parser.to_owned(),
            cache: cache.to_owned(),
            features: features.to_owned(),
            stamp: format!("{version}\nfeatures {feature_set}\n"),
        })
    }

    /// The binary of `file` (includes searched in `base`), from the
    /// cache when its key matches; `Err` is the parser's message.
    pub fn compile(&self, base: &Path, file: &ProfileFile) -> Result<Compiled, String> {
        let mut pre = Command::new(&self.parser);
        pre.arg("-p").arg("-I").arg(base).arg("--base").arg(base).arg(&file.path);
        let text = output(pre, None)?;
        let mode = if file.force_complain { "-C" } else { "" };
        let mut key = Vec::with_capacity(MAGIC.len() + self.stamp.len() + text.len() + 8);
        key.extend_from_slice(MAGIC);
        key.extend_from_slice(self.stamp.as_bytes());
        key.extend_from_slice(format!("mode {mode}\n\n").as_bytes());
        key.extend_from_slice(&text);
        let entry = self.cache.join(format!("{:016x}", fnv1a(&key)));
        if let Some(blob) = read_entry(&entry, &key) {
            return Ok(Compiled { blob, cache_hit: true });
        }
        let mut cc = Command::new(&self.parser);
        cc.args(["-Q", "-K", "--skip-cache", "-o", "/dev/stdout", "--features-file"]).arg(&self.features);
        if file.force_complain {
            cc.arg("-C");
        }
        let blob = output(cc, Some(&text)).map_err(|e| format!("compiling the preprocessed profile: {e}"))?;
        // A cache that cannot be written costs time, not correctness.
        if let Err(e) = write_entry(&entry, &key, &blob) {
            eprintln!("rampart: apparmor cache {}: {e}", entry.display());
        }
        Ok(Compiled { blob, cache_hit: false })
    }
}

/// Runs the parser with `args`; its stdout as text.
fn run_parser(parser: &Path, args: &[&OsStr]) -> Result<String, String> {
    let mut c = Command::new(parser);
    c.args(args);
    let out = output(c, None)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Runs `cmd` (stdin: `input`, or nothing); its stdout, or its stderr
/// as the error when it fails.
fn output(mut cmd: Command, input: Option<&[u8]>) -> Result<Vec<u8>, String> {
    let shown = format!("{:?}", cmd.get_program());
    let mut child = cmd
        .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {shown}: {e} (install the apparmor package)"))?;
    // Written from a thread: the parser may write to stderr before it has
    // read all its input.
    let out = std::thread::scope(|s| {
        if let (Some(mut stdin), Some(text)) = (child.stdin.take(), input) {
            s.spawn(move || stdin.write_all(text));
        }
        child.wait_with_output()
    })
    .map_err(|e| format!("{shown}: {e}"))?;
    if out.status.success() {
        return Ok(out.stdout);
    }
    let message: Vec<&str> = std::str::from_utf8(&out.stderr)
        .unwrap_or("(not UTF-8)")
        .lines()
        // noise where the kernel has no AppArmor; we skip its cache anyway
        .filter(|l| !l.starts_with("Cache read/write disabled"))
        .collect();
    Err(format!("{} ({shown} {})", message.join("; "), out.status))
}

/// FNV-1a, 64 bits: names a cache entry (the entry's key is compared in
/// full, so this only has to spread).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// An entry: the key's length (8 bytes, little endian), the key, the binary.
fn read_entry(path: &Path, key: &[u8]) -> Option<Vec<u8>> {
    let mut f = std::fs::File::open(path).ok()?;
    let mut len = [0u8; 8];
    f.read_exact(&mut len).ok()?;
    if u64::from_le_bytes(len) != key.len() as u64 {
        return None;
    }
    let mut stored = vec![0u8; key.len()];
    f.read_exact(&mut stored).ok()?;
    if stored != key {
        return None;
    }
    let mut blob = Vec::new();
    f.read_to_end(&mut blob).ok()?;
    Some(blob)
}

fn write_entry(path: &Path, key: &[u8], blob: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.{:?}", std::process::id(), std::thread::current().id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&(key.len() as u64).to_le_bytes())?;
        f.write_all(key)?;
        f.write_all(blob)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
