//! Path aliases from `file_contexts.subs_dist` (the distribution's) and
//! `file_contexts.subs` (the administrator's), applied to a looked-up
//! path before matching, exactly as libselinux 3.4's `selabel_sub_key`:
//!
//! - each file is a list of `ALIAS ORIGINAL` lines; `#` starts a comment
//!   line, lines with fewer than two words are skipped, words after the
//!   second are ignored;
//! - an alias applies when it is a prefix of the path ending at a
//!   component boundary (the next byte is `/` or the end); the alias is
//!   replaced by the original (an original of `/` also eats the `/` after
//!   the alias);
//! - within one file the LAST matching line wins (libselinux prepends
//!   each line to a list and takes the first match);
//! - the local file is tried first; if it applied, the distribution file
//!   is then applied to the result; otherwise the distribution file is
//!   applied to the path. At most one substitution per file.

use std::path::Path;

use crate::error::LabelError;
use crate::spec::is_c_space;

/// One `ALIAS ORIGINAL` pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sub {
    /// The alias: the path prefix that is replaced.
    pub alias: Vec<u8>,
    /// What it is replaced by.
    pub original: Vec<u8>,
}

/// One substitution file, in lookup order (last line first).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubList(Vec<Sub>);

/// libselinux reads subs lines with `fgets(buf, 1023)`: longer lines
/// are read as several lines.
const FGETS_CHUNK: usize = 1022;

impl SubList {
    /// Parses the text of a substitution file.
    pub fn parse(text: &[u8]) -> SubList {
        let mut subs = Vec::new();
        for raw in split_fgets(text) {
            // A NUL ends the C string.
            let line = raw.split(|&b| b == 0).next().unwrap_or(&[]);
            let mut words = line.split(|&b| is_c_space(b)).filter(|w| !w.is_empty());
            let first_nonspace = line.iter().find(|&&b| !is_c_space(b));
            if first_nonspace == Some(&b'#') {
                continue;
            }
            let (Some(alias), Some(original)) = (words.next(), words.next()) else { continue };
            subs.push(Sub { alias: alias.to_vec(), original: original.to_vec() });
        }
        subs.reverse();
        SubList(subs)
    }

    /// Reads a substitution file; a missing file is an empty list (as in
    /// libselinux), any other error is reported.
    pub fn read(path: &Path) -> Result<SubList, LabelError> {
        match std::fs::read(path) {
            Ok(text) => Ok(SubList::parse(&text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(SubList::default()),
            Err(source) => Err(LabelError::Io { path: path.to_path_buf(), source }),
        }
    }

    /// The pairs, in lookup order (the file's last line first).
    pub fn entries(&self) -> &[Sub] {
        &self.0
    }

    /// libselinux `selabel_sub`: the first applicable pair rewrites the
    /// path.
    pub fn apply(&self, path: &[u8]) -> Option<Vec<u8>> {
        for s in &self.0 {
            let n = s.alias.len();
            if path.len() < n || path[..n] != s.alias[..] {
                continue;
            }
            let next = path.get(n).copied();
            if next != Some(b'/') && next.is_some() {
                continue;
            }
            let skip = if next == Some(b'/') && s.original == b"/" { n + 1 } else { n };
            let mut out = Vec::with_capacity(s.original.len() + path.len() - skip);
            out.extend_from_slice(&s.original);
            out.extend_from_slice(&path[skip..]);
            return Some(out);
        }
        None
    }
}

/// Splits text into the pieces successive `fgets` calls would return.
fn split_fgets(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let nl = rest.iter().position(|&b| b == b'\n').map(|n| n + 1).unwrap_or(rest.len());
        let take = nl.min(FGETS_CHUNK);
        let (line, tail) = rest.split_at(take);
        rest = tail;
        Some(line)
    })
}

/// Both substitution files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Substitutions {
    /// `file_contexts.subs_dist`.
    pub dist: SubList,
    /// `file_contexts.subs`.
    pub local: SubList,
}

impl Substitutions {
    /// libselinux `selabel_sub_key`: local first, then the distribution
    /// list on its result; or the distribution list alone.
    pub fn apply(&self, path: &[u8]) -> Option<Vec<u8>> {
        match self.local.apply(path) {
            Some(p) => Some(self.dist.apply(&p).unwrap_or(p)),
            None => self.dist.apply(path),
        }
    }

    /// Whether there are no substitutions at all.
    pub fn is_empty(&self) -> bool {
        self.dist.0.is_empty() && self.local.0.is_empty()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn applies_like_selabel_sub_key() {
        let subs = Substitutions {
            dist: SubList::parse(b"# c\n/m /a\n/m /x\n/d1 /a\n/r /\n  lonely\n/q /a/ extra\n"),
            local: SubList::parse(b"/l1 /d1\n"),
        };
        let a = |p: &str| subs.apply(p.as_bytes()).map(|v| String::from_utf8(v).unwrap());
        assert_eq!(a("/m/b").as_deref(), Some("/x/b"));
        assert_eq!(a("/l1/b").as_deref(), Some("/a/b"));
        assert_eq!(a("/l1").as_deref(), Some("/a"));
        assert_eq!(a("/r/a").as_deref(), Some("/a"));
        assert_eq!(a("/r").as_deref(), Some("/"));
        assert_eq!(a("/q/b").as_deref(), Some("/a//b"));
        assert_eq!(a("/mx"), None);
        assert_eq!(a("/lonely"), None);
    }
}
