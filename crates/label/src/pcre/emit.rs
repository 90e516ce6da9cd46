//! Printing a parsed pattern as `regex` crate syntax, and rejecting the
//! patterns whose printed form would not mean the same (a `$` that
//! something may follow).

use std::fmt::Write as _;

use super::{ByteSet, Node, PatternError};

/// Whether `node` can only match the empty string and contains nothing
/// but `$` assertions.
fn only_ends(node: &Node) -> bool {
    match node {
        Node::Empty | Node::End(_) => true,
        Node::Group(n) => only_ends(n),
        Node::Repeat { node, .. } => only_ends(node),
        Node::Concat(v) | Node::Alt(v) => v.iter().all(only_ends),
        _ => false,
    }
}

/// Rejects the patterns [`to_rust`] cannot print exactly, and those
/// too large to compile (see [`MAX_SIZE`]).
pub(super) fn check_exact(node: &Node) -> Result<(), PatternError> {
    check_ends(node, false)?;
    let size = size(node);
    if size > MAX_SIZE {
        return Err(PatternError {
            offset: 0,
            message: format!(
                "the regex is too large (about {size} matching steps after expanding repeats; the limit is {MAX_SIZE})"
            ),
        });
    }
    Ok(())
}

/// A bound on the number of NFA states of a printed pattern. Patterns
/// within it always compile (the `regex` crate's default size limit is
/// 10 MB, far above this many states), so regexes can be compiled
/// lazily at first use without any risk of failing then. PCRE2 also
/// refuses patterns whose expanded repeats are too large.
const MAX_SIZE: u64 = 100_000;

/// Roughly the NFA states `node` compiles to (repeats expanded).
fn size(node: &Node) -> u64 {
    match node {
        Node::Group(n) => size(n),
        Node::Concat(v) | Node::Alt(v) => v.iter().map(size).fold(1, u64::saturating_add),
        Node::Repeat { node, min, max, .. } => {
            let copies = u64::from(max.unwrap_or(*min).max(*min)).max(1) + 1;
            size(node).saturating_mul(copies)
        }
        _ => 1,
    }
}

/// Rejects a `$` that something other than `$` may follow (see the
/// module docs): `followed` says whether that is the case for `node`.
fn check_ends(node: &Node, followed: bool) -> Result<(), PatternError> {
    match node {
        Node::End(offset) if followed => Err(PatternError {
            offset: *offset,
            message: "`$` (or `\\Z`) followed by more pattern is not supported (PCRE's `$` also matches before a final newline, which the regex engine cannot express there)".into(),
        }),
        Node::Group(n) => check_ends(n, followed),
        Node::Alt(v) => v.iter().try_for_each(|n| check_ends(n, followed)),
        Node::Concat(v) => {
            for (k, n) in v.iter().enumerate() {
                let f = followed || !v[k + 1..].iter().all(only_ends);
                check_ends(n, f)?;
            }
            Ok(())
        }
        Node::Repeat { node, max, .. } => {
            let again = *max != Some(1) && !only_ends(node);
            check_ends(node, followed || again)
        }
        _ => Ok(()),
    }
}

/// Prints `node` in `regex` crate syntax (to be compiled with Unicode
/// off).
pub(crate) fn to_rust(node: &Node) -> String {
    let mut out = String::new();
    emit(node, &mut out);
    out
}

fn emit_byte(b: u8, out: &mut String) {
    if b.is_ascii_alphanumeric() || b == b'/' || b == b'_' {
        out.push(char::from(b));
    } else {
        let _ = write!(out, "\\x{b:02X}");
    }
}

fn emit(node: &Node, out: &mut String) {
    match node {
        Node::Empty => out.push_str("(?:)"),
        Node::Literal(b) => emit_byte(*b, out),
        Node::Class(set) => emit_class(set, out),
        Node::Start => out.push_str("\\A"),
        Node::End(_) => out.push_str("(?:\\n?\\z)"),
        Node::EndAbsolute => out.push_str("\\z"),
        Node::WordBoundary(true) => out.push_str("(?-u:\\b)"),
        Node::WordBoundary(false) => out.push_str("(?-u:\\B)"),
        Node::Group(n) => {
            out.push_str("(?:");
            emit(n, out);
            out.push(')');
        }
        Node::Concat(v) => v.iter().for_each(|n| emit(n, out)),
        Node::Alt(v) => {
            out.push_str("(?:");
            for (k, n) in v.iter().enumerate() {
                if k > 0 {
                    out.push('|');
                }
                emit(n, out);
            }
            out.push(')');
        }
        Node::Repeat { node, min, max, greedy } => {
            out.push_str("(?:");
            emit(node, out);
            out.push(')');
            match max {
                Some(m) => {
                    let _ = write!(out, "{{{min},{m}}}");
                }
                None => {
                    let _ = write!(out, "{{{min},}}");
                }
            }
            if !greedy {
                out.push('?');
            }
        }
    }
}

fn emit_class(set: &ByteSet, out: &mut String) {
    match set.count() {
        0 => {
            // Matches nothing.
            out.push_str("[^\\x00-\\xFF]");
            return;
        }
        256 => {
            out.push_str("(?s-u:.)");
            return;
        }
        _ => {}
    }
    out.push('[');
    let mut b: u16 = 0;
    while b < 256 {
        let lo = u8::try_from(b).unwrap_or(255);
        if !set.contains(lo) {
            b += 1;
            continue;
        }
        let mut hi = b;
        while hi < 255 && set.contains(u8::try_from(hi + 1).unwrap_or(255)) {
            hi += 1;
        }
        let _ = write!(out, "\\x{lo:02X}");
        if hi > b {
            let _ = write!(out, "-\\x{:02X}", hi);
        }
        b = hi + 1;
    }
    out.push(']');
}
