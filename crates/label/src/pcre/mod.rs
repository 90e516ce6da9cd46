//! The PCRE2 dialect of file_contexts regexes, parsed and re-emitted as
//! Rust `regex` syntax with the same meaning.
//!
//! Why a translator: libselinux 3.4 compiles `^` + REGEX + `$` with
//! PCRE2 (`PCRE2_DOTALL`, no UTF, default "C" character tables) and the
//! `regex` crate has a different syntax (`[` nests inside classes, `{`
//! is never literal, `\v` is a byte, ...). Parsing PCRE's syntax here and
//! printing an explicit Rust pattern (byte classes as `\xHH` ranges)
//! removes every syntactic difference; what cannot be reproduced exactly
//! is rejected with an error instead of silently matching differently:
//!
//! - `$` (and `\Z`) hold at the end or before a final newline. That is
//!   emitted as `\n?\z`, which is exact only when nothing but more `$`
//!   can follow; a `$` followed by anything else is an error.
//! - Backreferences, lookaround, `(?` groups other than `(?:`,
//!   possessive quantifiers, `\h \v \R \K \p \X \G` and friends are
//!   errors (none occur in real file_contexts files).
//!
//! The parse tree also gives the facts the lookup index needs: the
//! literal prefix every match starts with, and whether a pattern is one
//! literal string.

mod emit;
mod parse;
mod shape;

pub(crate) use emit::to_rust;
pub(crate) use parse::parse;
pub(crate) use shape::{shape, Shape};

/// A set of bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ByteSet([u64; 4]);

impl ByteSet {
    const EMPTY: ByteSet = ByteSet([0; 4]);

    fn insert(&mut self, b: u8) {
        self.0[usize::from(b >> 6)] |= 1u64 << (b & 63);
    }

    fn insert_range(&mut self, lo: u8, hi: u8) {
        for b in lo..=hi {
            self.insert(b);
        }
    }

    fn contains(&self, b: u8) -> bool {
        self.0[usize::from(b >> 6)] & (1u64 << (b & 63)) != 0
    }

    fn union(&mut self, other: &ByteSet) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a |= *b;
        }
    }

    fn negate(&mut self) {
        for a in self.0.iter_mut() {
            *a = !*a;
        }
    }

    fn from_pred(f: impl Fn(u8) -> bool) -> ByteSet {
        let mut s = ByteSet::EMPTY;
        for b in 0..=255u8 {
            if f(b) {
                s.insert(b);
            }
        }
        s
    }

    fn count(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    /// The only member, when there is exactly one.
    fn single(&self) -> Option<u8> {
        if self.count() != 1 {
            return None;
        }
        (0..=255u8).find(|&b| self.contains(b))
    }
}

/// PCRE2's `\d \s \w` and POSIX classes with its default ("C" locale)
/// tables: ASCII only.
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_space(b: u8) -> bool {
    // PCRE2 `\s`: HT, LF, VT, FF, CR and space.
    matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ')
}

/// One node of a parsed pattern.
#[derive(Clone, Debug)]
pub(crate) enum Node {
    Empty,
    Literal(u8),
    Class(ByteSet),
    /// `^` or `\A`: start of the subject.
    Start,
    /// `$` or `\Z` (at this byte offset): end, or before a newline that
    /// ends the subject.
    End(usize),
    /// `\z`: end of the subject.
    EndAbsolute,
    WordBoundary(bool),
    Group(Box<Node>),
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat {
        node: Box<Node>,
        min: u32,
        max: Option<u32>,
        greedy: bool,
    },
}

/// A parse failure: what and at which byte offset of the pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PatternError {
    pub offset: usize,
    pub message: String,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn rust(p: &str) -> String {
        to_rust(&parse(p.as_bytes()).unwrap())
    }

    fn re(p: &str) -> regex::bytes::Regex {
        regex::bytes::RegexBuilder::new(&rust(p)).unicode(false).build().unwrap()
    }

    #[test]
    fn translates_common_constructs() {
        let r = re("^/usr/lib(/.*)?$");
        assert!(r.is_match(b"/usr/lib"));
        assert!(r.is_match(b"/usr/lib/a\nb"));
        assert!(r.is_match(b"/usr/lib\n"));
        assert!(!r.is_match(b"/usr/lib\n\n"));
        assert!(!r.is_match(b"/usr/libx"));
        let r = re("^/home/[^/]+/\\.ssh(/.*)?$");
        assert!(r.is_match(b"/home/a\xff/.ssh"));
        assert!(!r.is_match(b"/home//.ssh"));
        let r = re("^/a{b}$");
        assert!(r.is_match(b"/a{b}"));
        let r = re("^/a{2}$");
        assert!(r.is_match(b"/aa"));
        let r = re("^[]a-]$");
        assert!(r.is_match(b"]") && r.is_match(b"-") && r.is_match(b"a"));
        let r = re("^[[:digit:][]+$");
        assert!(r.is_match(b"1[2"));
        let r = re("^/foo|/bar$");
        assert!(r.is_match(b"/foo/x") && r.is_match(b"/x/bar") && !r.is_match(b"/x/bar/y"));
        let r = re("^/x\\$");
        assert!(r.is_match(b"/x$") && !r.is_match(b"/x"));
        let r = re("^\\Q/a.b$\\E$");
        assert!(r.is_match(b"/a.b$") && !r.is_match(b"/axb$"));
    }

    #[test]
    fn rejects_what_cannot_be_exact() {
        for p in [
            "^(a{1000}){1000}$",
            "^a$b$",
            "^(a)\\1$",
            "^(?=a)$",
            "^a*+$",
            "^\\h$",
            "^(a$|b)c$",
            "^[b-a]$",
            "^a**$",
            "^*$",
            "^\\y$",
        ] {
            assert!(parse(p.as_bytes()).is_err(), "{p}");
        }
        assert!(parse(b"^a$$").is_ok());
        assert!(parse(b"^(a$|b)$").is_ok());
    }

    #[test]
    fn shapes() {
        let s = |p: &str| shape(&parse(p.as_bytes()).unwrap());
        assert_eq!(s("^/usr/lib(/.*)?$").prefix, b"/usr/lib");
        assert_eq!(s("^/usr/lib/foo\\.so$").literal.as_deref(), Some(&b"/usr/lib/foo.so"[..]));
        assert_eq!(s("^/usr/lib/fo?$").prefix, b"/usr/lib/f");
        assert_eq!(s("^/a|/b$").prefix, b"");
        assert_eq!(s("^/ab|^/ac$").prefix, b"/a");
        assert_eq!(s("^/x{3}y$").literal.as_deref(), Some(&b"/xxxy"[..]));
        assert_eq!(s("^/x\\d$").literal, None);
        assert_eq!(s("^/x\\d$").prefix, b"/x");
    }
}
