//! The PCRE2 pattern parser: the syntax of PCRE2 10.42 without options
//! other than `PCRE2_DOTALL`, in byte (non-UTF) mode.

use super::{emit, is_space, is_word, ByteSet, Node, PatternError};

type PResult<T> = Result<T, PatternError>;

struct Parser<'a> {
    p: &'a [u8],
    i: usize,
}

/// Nesting limit for groups: each level becomes at most two levels of
/// the emitted pattern, which must stay under the `regex` crate's 250.
const MAX_DEPTH: usize = 100;

/// PCRE2's limit on `{n,m}` values.
const MAX_REPEAT: u32 = 65535;

impl<'a> Parser<'a> {
    fn err<T>(&self, offset: usize, message: impl Into<String>) -> PResult<T> {
        Err(PatternError { offset, message: message.into() })
    }

    fn peek(&self) -> Option<u8> {
        self.p.get(self.i).copied()
    }

    fn parse_alt(&mut self, depth: usize) -> PResult<Node> {
        if depth > MAX_DEPTH {
            return self.err(self.i, format!("parentheses are nested more than {MAX_DEPTH} deep"));
        }
        let mut branches = vec![self.parse_concat(depth)?];
        while self.peek() == Some(b'|') {
            self.i += 1;
            branches.push(self.parse_concat(depth)?);
        }
        Ok(if branches.len() == 1 { branches.pop().unwrap_or(Node::Empty) } else { Node::Alt(branches) })
    }

    fn parse_concat(&mut self, depth: usize) -> PResult<Node> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == b'|' || c == b')' {
                break;
            }
            let Some(atom) = self.parse_atom(depth)? else { continue };
            let atom = self.parse_quantifiers(atom)?;
            items.push(atom);
        }
        Ok(match items.len() {
            0 => Node::Empty,
            1 => items.pop().unwrap_or(Node::Empty),
            _ => Node::Concat(items),
        })
    }

    /// `{n}`, `{n,}` or `{n,m}` at the cursor (PCRE2 10.42 syntax: no
    /// spaces, no `{,m}`); `None` when the `{` is a literal.
    fn brace_quantifier(&self) -> Option<(u32, Option<u32>, usize)> {
        let rest = &self.p[self.i..];
        if rest.first() != Some(&b'{') {
            return None;
        }
        let num = |s: &[u8]| -> Option<(u32, usize)> {
            let n = s.iter().take_while(|b| b.is_ascii_digit()).count();
            if n == 0 {
                return None;
            }
            let v = std::str::from_utf8(&s[..n]).ok()?.parse::<u64>().ok()?;
            Some((u32::try_from(v.min(u64::from(u32::MAX))).ok()?, n))
        };
        let (min, n1) = num(&rest[1..])?;
        let mut j = 1 + n1;
        match rest.get(j) {
            Some(b'}') => Some((min, Some(min), j + 1)),
            Some(b',') => {
                j += 1;
                if rest.get(j) == Some(&b'}') {
                    return Some((min, None, j + 1));
                }
                let (max, n2) = num(&rest[j..])?;
                j += n2;
                (rest.get(j) == Some(&b'}')).then_some((min, Some(max), j + 1))
            }
            _ => None,
        }
    }

    fn parse_quantifiers(&mut self, atom: Node) -> PResult<Node> {
        let q_start = self.i;
        let (min, max) = match self.peek() {
            Some(b'?') => {
                self.i += 1;
                (0, Some(1))
            }
            Some(b'*') => {
                self.i += 1;
                (0, None)
            }
            Some(b'+') => {
                self.i += 1;
                (1, None)
            }
            Some(b'{') => match self.brace_quantifier() {
                Some((min, max, len)) => {
                    if min > MAX_REPEAT || max.is_some_and(|m| m > MAX_REPEAT) {
                        return self.err(q_start, "number too big in {} quantifier");
                    }
                    if max.is_some_and(|m| m < min) {
                        return self.err(q_start, "numbers out of order in {} quantifier");
                    }
                    self.i += len;
                    (min, max)
                }
                None => return Ok(atom),
            },
            _ => return Ok(atom),
        };
        if matches!(atom, Node::Start | Node::End(_) | Node::EndAbsolute | Node::WordBoundary(_)) {
            return self.err(q_start, "a quantified assertion is not supported");
        }
        let mut greedy = true;
        match self.peek() {
            Some(b'?') => {
                self.i += 1;
                greedy = false;
            }
            Some(b'+') => return self.err(self.i, "possessive quantifiers are not supported"),
            _ => {}
        }
        if matches!(self.peek(), Some(b'?' | b'*' | b'+')) || self.brace_quantifier().is_some() {
            return self.err(self.i, "quantifier does not follow a repeatable item");
        }
        Ok(Node::Repeat { node: Box::new(atom), min, max, greedy })
    }

    /// One atom, or `None` for constructs that match nothing at all
    /// (`\E`, an empty `\Q\E`).
    fn parse_atom(&mut self, depth: usize) -> PResult<Option<Node>> {
        let start = self.i;
        let Some(c) = self.peek() else { return Ok(None) };
        self.i += 1;
        let node = match c {
            b'(' => {
                if self.peek() == Some(b'?') {
                    if self.p.get(self.i + 1) == Some(&b':') {
                        self.i += 2;
                    } else {
                        return self.err(start, "`(?` constructs other than `(?:` are not supported");
                    }
                } else if self.peek() == Some(b'*') {
                    return self.err(start, "backtracking verbs `(*...)` are not supported");
                }
                let inner = self.parse_alt(depth + 1)?;
                if self.peek() != Some(b')') {
                    return self.err(start, "missing closing parenthesis");
                }
                self.i += 1;
                Node::Group(Box::new(inner))
            }
            b')' => return self.err(start, "unmatched closing parenthesis"),
            b'[' => Node::Class(self.parse_class(start)?),
            b'.' => Node::Class(ByteSet::from_pred(|_| true)),
            b'^' => Node::Start,
            b'$' => Node::End(start),
            b'*' | b'+' | b'?' => return self.err(start, "quantifier does not follow a repeatable item"),
            b'{' => {
                self.i = start;
                if self.brace_quantifier().is_some() {
                    return self.err(start, "quantifier does not follow a repeatable item");
                }
                self.i = start + 1;
                Node::Literal(b'{')
            }
            b'\\' => return self.parse_escape(start),
            other => Node::Literal(other),
        };
        Ok(Some(node))
    }

    /// `\Q...\E`: the bytes up to `\E` (or the end) are literal.
    fn parse_quoted(&mut self) -> Node {
        let mut items = Vec::new();
        while self.i < self.p.len() {
            if self.p[self.i] == b'\\' && self.p.get(self.i + 1) == Some(&b'E') {
                self.i += 2;
                break;
            }
            items.push(Node::Literal(self.p[self.i]));
            self.i += 1;
        }
        match items.len() {
            0 => Node::Empty,
            1 => items.pop().unwrap_or(Node::Empty),
            _ => Node::Group(Box::new(Node::Concat(items))),
        }
    }

    fn parse_escape(&mut self, start: usize) -> PResult<Option<Node>> {
        let Some(e) = self.peek() else {
            return self.err(start, "\\ at end of pattern");
        };
        self.i += 1;
        let node = match e {
            b'A' => Node::Start,
            b'Z' => Node::End(start),
            b'z' => Node::EndAbsolute,
            b'b' => Node::WordBoundary(true),
            b'B' => Node::WordBoundary(false),
            b'Q' => {
                let q = self.parse_quoted();
                return Ok(match q {
                    Node::Empty => None,
                    other => Some(other),
                });
            }
            b'E' => return Ok(None),
            _ => match self.escape_value(start, e, false)? {
                Escaped::Byte(b) => Node::Literal(b),
                Escaped::Set(s) => Node::Class(s),
            },
        };
        Ok(Some(node))
    }

    /// The meaning of `\e` (cursor after `e`) as a byte or a byte set,
    /// for escapes valid both inside and outside classes.
    fn escape_value(&mut self, start: usize, e: u8, in_class: bool) -> PResult<Escaped> {
        let set = |f: fn(u8) -> bool, neg: bool| {
            let mut s = ByteSet::from_pred(f);
            if neg {
                s.negate();
            }
            Escaped::Set(s)
        };
        Ok(match e {
            b'd' | b'D' => set(|b| b.is_ascii_digit(), e == b'D'),
            b'w' | b'W' => set(is_word, e == b'W'),
            b's' | b'S' => set(is_space, e == b'S'),
            b'n' => Escaped::Byte(b'\n'),
            b't' => Escaped::Byte(b'\t'),
            b'r' => Escaped::Byte(b'\r'),
            b'f' => Escaped::Byte(0x0c),
            b'e' => Escaped::Byte(0x1b),
            b'a' => Escaped::Byte(0x07),
            b'b' if in_class => Escaped::Byte(0x08),
            b'x' => Escaped::Byte(self.hex_escape(start)?),
            b'0' => {
                // \0 followed by up to two more octal digits.
                let mut v: u32 = 0;
                for _ in 0..2 {
                    match self.peek() {
                        Some(d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            self.i += 1;
                        }
                        _ => break,
                    }
                }
                Escaped::Byte(u8::try_from(v).unwrap_or(0))
            }
            b'c' => {
                let Some(x) = self.peek().filter(|x| (0x20..0x7f).contains(x)) else {
                    return self.err(start, "\\c must be followed by a printable ASCII character");
                };
                self.i += 1;
                Escaped::Byte(x.to_ascii_uppercase() ^ 0x40)
            }
            b'1'..=b'9' => return self.err(start, "backreferences and octal escapes \\1-\\9 are not supported"),
            b'h' | b'H' | b'v' | b'V' | b'R' | b'N' | b'K' | b'X' | b'C' | b'p' | b'P' | b'G' | b'g' | b'k' | b'o'
            | b'u' | b'U' | b'L' | b'l' => {
                return self.err(start, format!("the escape \\{} is not supported", char::from(e)))
            }
            other if other.is_ascii_alphanumeric() => {
                return self.err(start, format!("unrecognized character follows \\ (`\\{}`)", char::from(other)))
            }
            // Any other character escapes itself.
            other => Escaped::Byte(other),
        })
    }

    /// `\xHH` (0 to 2 hex digits) or `\x{H...}` (cursor after `x`).
    fn hex_escape(&mut self, start: usize) -> PResult<u8> {
        if self.peek() == Some(b'{') {
            let close = self.p[self.i..].iter().position(|&b| b == b'}');
            let digits = close.map(|n| &self.p[self.i + 1..self.i + n]);
            match digits {
                Some(d) if !d.is_empty() && d.iter().all(u8::is_ascii_hexdigit) => {
                    let v = d.iter().fold(0u64, |acc, &h| (acc << 4) | u64::from(hex(h))).min(u64::from(u32::MAX));
                    self.i += d.len() + 2;
                    return u8::try_from(v)
                        .or_else(|_| self.err(start, "character code in \\x{} is too large (over 0xff)"));
                }
                // PCRE2: `\x{` not followed by hex digits and `}` is an error.
                _ => return self.err(start, "\\x{ must be followed by hex digits and }"),
            }
        }
        let mut v: u8 = 0;
        for _ in 0..2 {
            match self.peek() {
                Some(h) if h.is_ascii_hexdigit() => {
                    v = (v << 4) | hex(h);
                    self.i += 1;
                }
                _ => break,
            }
        }
        Ok(v)
    }

    /// A bracket class; the cursor is after `[`.
    fn parse_class(&mut self, start: usize) -> PResult<ByteSet> {
        let mut set = ByteSet::EMPTY;
        let negated = self.peek() == Some(b'^');
        if negated {
            self.i += 1;
        }
        let mut first = true;
        loop {
            let Some(c) = self.peek() else {
                return self.err(start, "missing terminating ] for character class");
            };
            if c == b']' && !first {
                self.i += 1;
                break;
            }
            first = false;
            let item_start = self.i;
            let lo = match self.class_item(start)? {
                None => continue,
                Some(Escaped::Set(s)) => {
                    set.union(&s);
                    continue;
                }
                Some(Escaped::Byte(b)) => b,
            };
            // A range `lo-hi`, unless the `-` is last.
            if self.peek() == Some(b'-') && self.p.get(self.i + 1).is_some_and(|&n| n != b']') {
                let save = self.i;
                self.i += 1;
                match self.class_item(start)? {
                    Some(Escaped::Byte(hi)) => {
                        if hi < lo {
                            return self.err(item_start, "range out of order in character class");
                        }
                        set.insert_range(lo, hi);
                        continue;
                    }
                    Some(Escaped::Set(_)) => {
                        return self.err(item_start, "invalid range in character class");
                    }
                    None => {
                        // `\E` or an empty `\Q\E` after `-`: PCRE treats
                        // the `-` as literal; so do we.
                        self.i = save;
                    }
                }
            }
            set.insert(lo);
        }
        if negated {
            set.negate();
        }
        Ok(set)
    }

    /// One element of a class: a byte, a set (`\d`, `[:alpha:]`), or
    /// nothing (`\E`).
    fn class_item(&mut self, class_start: usize) -> PResult<Option<Escaped>> {
        let start = self.i;
        let Some(c) = self.peek() else {
            return self.err(class_start, "missing terminating ] for character class");
        };
        self.i += 1;
        match c {
            b'[' => {
                if let Some(s) = self.posix_class(start)? {
                    return Ok(Some(Escaped::Set(s)));
                }
                Ok(Some(Escaped::Byte(b'[')))
            }
            b'\\' => {
                let Some(e) = self.peek() else {
                    return self.err(start, "\\ at end of pattern");
                };
                self.i += 1;
                match e {
                    b'E' => Ok(None),
                    b'Q' => self.err(start, "\\Q inside a character class is not supported"),
                    _ => Ok(Some(self.escape_value(start, e, true)?)),
                }
            }
            other => Ok(Some(Escaped::Byte(other))),
        }
    }

    /// `[:name:]` or `[:^name:]` (cursor after the `[`); `None` when the
    /// `[` is a literal.
    fn posix_class(&mut self, start: usize) -> PResult<Option<ByteSet>> {
        let rest = &self.p[self.i..];
        match rest.first() {
            Some(b'.') | Some(b'=') => {
                let d = rest[0];
                if rest[1..].windows(2).any(|w| w[0] == d && w[1] == b']') {
                    return self.err(start, "POSIX collating elements are not supported");
                }
                return Ok(None);
            }
            Some(b':') => {}
            _ => return Ok(None),
        }
        let Some(end) = rest[1..].windows(2).position(|w| w == b":]") else { return Ok(None) };
        let mut name = &rest[1..1 + end];
        let negated = name.first() == Some(&b'^');
        if negated {
            name = &name[1..];
        }
        let pred: fn(u8) -> bool = match name {
            b"alpha" => |b| b.is_ascii_alphabetic(),
            b"digit" => |b| b.is_ascii_digit(),
            b"alnum" => |b| b.is_ascii_alphanumeric(),
            b"upper" => |b| b.is_ascii_uppercase(),
            b"lower" => |b| b.is_ascii_lowercase(),
            b"space" => is_space,
            b"blank" => |b| b == b' ' || b == b'\t',
            b"cntrl" => |b| b < 0x20 || b == 0x7f,
            b"graph" => |b| (0x21..0x7f).contains(&b),
            b"print" => |b| (0x20..0x7f).contains(&b),
            b"punct" => |b| b.is_ascii_punctuation(),
            b"xdigit" => |b| b.is_ascii_hexdigit(),
            b"word" => is_word,
            b"ascii" => |b| b < 0x80,
            _ => return self.err(start, format!("unknown POSIX class name `{}`", String::from_utf8_lossy(name))),
        };
        self.i += 1 + end + 2;
        let mut s = ByteSet::from_pred(pred);
        if negated {
            s.negate();
        }
        Ok(Some(s))
    }
}

enum Escaped {
    Byte(u8),
    Set(ByteSet),
}

fn hex(h: u8) -> u8 {
    match h {
        b'0'..=b'9' => h - b'0',
        b'a'..=b'f' => h - b'a' + 10,
        _ => h - b'A' + 10,
    }
}

/// Parses a whole PCRE2 pattern.
pub(crate) fn parse(pattern: &[u8]) -> Result<Node, PatternError> {
    let mut p = Parser { p: pattern, i: 0 };
    let node = p.parse_alt(0)?;
    if p.i < pattern.len() {
        // Only a `)` without `(` stops the top level early.
        return p.err(p.i, "unmatched closing parenthesis");
    }
    emit::check_exact(&node)?;
    Ok(node)
}
