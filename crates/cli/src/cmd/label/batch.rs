//! `rampart label --batch`: one file_contexts lookup per input line,
//! one answer per output line, for scripts and differential tests.
//!
//! Input lines are `PATH` or `PATH<TAB>TYPE`, bytes (not necessarily
//! UTF-8), ended by `\n` only (a `\r` is part of the path). The last tab
//! separates TYPE, one of `file dir lnk_file chr_file blk_file sock_file
//! fifo_file`; no tab, or an empty TYPE after the last tab (the way to
//! send a path that itself contains a tab), means no type:
//! `selabel_lookup` with mode 0. The path is looked up as given: no
//! lstat, no trailing-slash trimming beyond libselinux's own cleaning.
//!
//! Output lines are the context, or `<<none>>` when there is no label.
//! A line that is not a query (an unknown TYPE, an empty path, which
//! libselinux rejects with `EINVAL`) is answered `error: MESSAGE`, so
//! answers stay aligned with queries. Output is buffered and flushed
//! whenever no more input is waiting, like `rampart check --batch`.

use std::io::{self, BufRead, BufReader, Read, Write};

use rampart_label::FileContexts;

use crate::cli::{parse_type, TYPE_NAMES};

/// Answers every line of `input` on `output` until EOF.
pub fn run<R: Read, W: Write>(fc: &FileContexts, input: R, output: W) -> io::Result<()> {
    let mut reader = BufReader::with_capacity(1 << 16, input);
    let mut out = io::BufWriter::with_capacity(1 << 16, output);
    let mut line = Vec::with_capacity(256);
    loop {
        if reader.buffer().is_empty() {
            out.flush()?;
        }
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        match query(&line) {
            Ok((path, mode)) => out.write_all(fc.lookup_mode(path, mode).as_str().as_bytes())?,
            Err(msg) => write!(out, "error: {msg}")?,
        }
        out.write_all(b"\n")?;
    }
    out.flush()
}

/// Splits a line into the path and the `S_IF*` bits (0: any type).
fn query(line: &[u8]) -> Result<(&[u8], u32), String> {
    let (path, mode) = match line.iter().rposition(|&b| b == b'\t') {
        None => (line, 0),
        Some(i) if i + 1 == line.len() => (&line[..i], 0),
        Some(i) => {
            let word = &line[i + 1..];
            let t = std::str::from_utf8(word).ok().and_then(parse_type).ok_or_else(|| {
                format!(
                    "unknown file type `{}` after the last tab; use one of {}, or end the line with a tab for any type",
                    String::from_utf8_lossy(word),
                    TYPE_NAMES
                )
            })?;
            (&line[..i], t.mode_bits())
        }
    };
    if path.is_empty() {
        return Err("empty path: libselinux has no label for it (Invalid argument)".to_owned());
    }
    Ok((path, mode))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use rampart_label::FileType;

    fn bits(t: FileType) -> u32 {
        t.mode_bits()
    }

    #[test]
    fn lines_split_at_the_last_tab() {
        assert_eq!(query(b"/etc/passwd").unwrap(), (&b"/etc/passwd"[..], 0));
        assert_eq!(query(b"/etc\tdir").unwrap(), (&b"/etc"[..], bits(FileType::Directory)));
        assert_eq!(query(b"/a\tb\tlnk_file").unwrap(), (&b"/a\tb"[..], bits(FileType::Symlink)));
        assert_eq!(query(b"/a\tb\t").unwrap(), (&b"/a\tb"[..], 0));
        assert_eq!(query(b"/\xff\xfe\tfile").unwrap(), (&b"/\xff\xfe"[..], bits(FileType::Regular)));
        assert!(query(b"/etc\tdirectory").unwrap_err().contains("unknown file type `directory`"));
        assert!(query(b"/etc\t\xff").is_err());
        assert!(query(b"").is_err());
        assert!(query(b"\tfile").is_err());
    }
}
