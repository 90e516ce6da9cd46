//! `rampart label PATH... [--type TYPE]`: `matchpathcon` (libselinux
//! 3.4's `utils/matchpathcon.c`) on Rampart's file_contexts lookup.
//!
//! Per path, exactly as matchpathcon: one trailing `/` is removed when
//! the path is longer than one byte; the mode is the path's `lstat`
//! mode (0, any type, when `lstat` fails, e.g. the path does not
//! exist), or the `--type` given; the path is looked up as written (no
//! `realpath`: 3.4's tool calls `selabel_lookup` directly), and
//! `PATH<TAB>CONTEXT` is printed, `<<none>>` when there is no label.
//! An empty path is the one lookup libselinux fails (`EINVAL`): a
//! message on stderr, nothing on stdout, and exit status 1 at the end,
//! as matchpathcon does.

use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rampart_label::{FileContexts, FileType};

/// Prints the label of every path; returns the exit status (0, or 1
/// when a lookup failed).
pub fn run(fc: &FileContexts, paths: &[PathBuf], file_type: Option<FileType>, out: impl Write) -> io::Result<u8> {
    let mut out = io::BufWriter::with_capacity(1 << 16, out);
    let mut status = 0;
    for path in paths {
        let bytes = trim_one_slash(path.as_os_str().as_bytes());
        if bytes.is_empty() {
            out.flush()?;
            let _ = writeln!(io::stderr(), "rampart: cannot look up ``: an empty path has no label (Invalid argument)");
            status = 1;
            continue;
        }
        let mode = match file_type {
            Some(t) => t.mode_bits(),
            None => std::fs::symlink_metadata(Path::new(std::ffi::OsStr::from_bytes(bytes))).map_or(0, |m| m.mode()),
        };
        out.write_all(bytes)?;
        out.write_all(b"\t")?;
        out.write_all(fc.lookup_mode(bytes, mode).as_str().as_bytes())?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(status)
}

/// matchpathcon's `if (len > 1 && path[len - 1] == '/') path[len - 1] = '\0'`.
fn trim_one_slash(p: &[u8]) -> &[u8] {
    match p {
        [rest @ .., b'/'] if !rest.is_empty() => rest,
        _ => p,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_trailing_slash_goes() {
        assert_eq!(trim_one_slash(b"/"), b"/");
        assert_eq!(trim_one_slash(b"//"), b"/");
        assert_eq!(trim_one_slash(b"/etc//"), b"/etc/");
        assert_eq!(trim_one_slash(b"/etc"), b"/etc");
        assert_eq!(trim_one_slash(b""), b"");
    }
}
