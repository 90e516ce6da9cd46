//! libselinux's file_contexts lookup as a reference for rampart-label
//! and the `rampart label` command: `selabel-oracle` (see
//! `selabel_oracle.c`) opens `selabel_open(SELABEL_CTX_FILE)` once and
//! answers `selabel_lookup_raw` for one query per line.
//!
//! This module speaks its protocol: paths are raw bytes, escaped on the
//! wire (`\\`, `\n`, `\t`, `\xHH`), each with its `st_mode` file-type
//! bits (0 = any type); the answer is the context, `<<none>>` (ENOENT)
//! or `error: MESSAGE`.

use std::ffi::OsStr;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One query: path bytes and `st_mode` file-type bits (0 = any type).
pub type LabelQuery = (Vec<u8>, u32);

/// Path of the `selabel-oracle` executable built by this crate's build
/// script.
pub fn selabel_oracle_path() -> &'static Path {
    Path::new(env!("SELABEL_ORACLE"))
}

/// Appends the oracle's escaping of `path` to `out`.
pub fn escape(path: &[u8], out: &mut Vec<u8>) {
    for &b in path {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x20..=0x7e => out.push(b),
            _ => out.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
        }
    }
}

/// The protocol lines for `queries`: `PATH` or `PATH<TAB>MODE` (octal).
/// Also the format of a `--time` path list.
pub fn encode(queries: &[LabelQuery]) -> Vec<u8> {
    let mut input = Vec::with_capacity(queries.len() * 48);
    for (p, mode) in queries {
        escape(p, &mut input);
        if *mode != 0 {
            input.extend_from_slice(format!("\t{mode:o}").as_bytes());
        }
        input.push(b'\n');
    }
    input
}

/// Runs one oracle process over `queries` and returns one answer line
/// per query. `args` are extra options: `--path FILE` (a file_contexts
/// other than the system one, like `SELABEL_OPT_PATH`), `--baseonly`.
pub fn lookup_batch<S: AsRef<OsStr>>(args: &[S], queries: &[LabelQuery]) -> io::Result<Vec<String>> {
    let mut child = Command::new(selabel_oracle_path())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or_else(|| io::Error::other("selabel-oracle: no stdin pipe"))?;
    let stdout = child.stdout.take().ok_or_else(|| io::Error::other("selabel-oracle: no stdout pipe"))?;
    let input = encode(queries);
    // Write on another thread so that large batches cannot deadlock on
    // full pipes.
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let mut out = Vec::with_capacity(queries.len());
    for line in BufReader::new(stdout).lines() {
        out.push(line?);
    }
    let written = writer.join().map_err(|_| io::Error::other("selabel-oracle writer thread panicked"))?;
    let status = child.wait()?;
    written?;
    if !status.success() {
        return Err(io::Error::other(format!("selabel-oracle failed ({status}); see its stderr")));
    }
    if out.len() != queries.len() {
        return Err(io::Error::other(format!("selabel-oracle answered {} of {} queries", out.len(), queries.len())));
    }
    Ok(out)
}

/// [`lookup_batch`] split over `jobs` oracle processes in parallel;
/// answers in query order.
pub fn lookup_parallel<S: AsRef<OsStr> + Sync>(
    args: &[S],
    queries: &[LabelQuery],
    jobs: usize,
) -> io::Result<Vec<String>> {
    let chunk = queries.len().div_ceil(jobs.max(1)).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = queries.chunks(chunk).map(|c| s.spawn(move || lookup_batch(args, c))).collect();
        let mut all = Vec::with_capacity(queries.len());
        for h in handles {
            all.extend(h.join().map_err(|_| io::Error::other("selabel-oracle thread panicked"))??);
        }
        Ok(all)
    })
}

/// Times `selabel_lookup_raw` over `queries` in the oracle (`--time`: 5
/// passes over the whole list, the median pass) and returns nanoseconds
/// per lookup. The list goes through a temporary file.
pub fn time_lookups<S: AsRef<OsStr>>(args: &[S], queries: &[LabelQuery]) -> io::Result<f64> {
    TimeList::new(queries)?.time(args)
}

/// A path list written once for repeated `--time` runs (e.g. single
/// passes, `--passes 1`, interleaved with the caller's own); the file is
/// removed on drop.
#[derive(Debug)]
pub struct TimeList {
    path: PathBuf,
}

impl TimeList {
    /// Writes `queries` to a temporary file.
    pub fn new(queries: &[LabelQuery]) -> io::Result<TimeList> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("rampart-selabel-oracle-{}-{n}.txt", std::process::id()));
        std::fs::write(&path, encode(queries))?;
        Ok(TimeList { path })
    }

    /// Runs `selabel-oracle ARGS --time LIST` (ARGS may hold `--passes
    /// N`, default 5) and returns the median pass in ns per lookup.
    pub fn time<S: AsRef<OsStr>>(&self, args: &[S]) -> io::Result<f64> {
        let out = Command::new(selabel_oracle_path()).args(args).arg("--time").arg(&self.path).output()?;
        if !out.status.success() {
            return Err(io::Error::other(format!(
                "selabel-oracle --time failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        text.split_whitespace()
            .next()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| io::Error::other(format!("selabel-oracle --time: unexpected output {text:?}")))
    }
}

impl Drop for TimeList {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_every_byte() {
        let mut out = Vec::new();
        escape(b"/a\\b\n\tc\xff ", &mut out);
        assert_eq!(out, b"/a\\\\b\\n\\tc\\xff ");
        assert_eq!(encode(&[(b"/x".to_vec(), 0), (b"/y".to_vec(), 0o40000)]), b"/x\n/y\t40000\n");
    }
}
