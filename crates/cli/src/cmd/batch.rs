//! `rampart check --batch`: one `SCONTEXT TCONTEXT CLASS` query per input
//! line, one answer per output line, for differential tests of millions of
//! queries.
//!
//! Every input line gets exactly one output line, `0xALLOWED 0xAUDITALLOW
//! 0xAUDITDENY` or `error: MESSAGE`, so answers stay aligned with queries.
//! Output is buffered, and flushed whenever the input has no more data
//! buffered: a pipe of queries is answered in large writes, and a caller
//! that writes one query and waits for its answer gets it.

use std::io::{self, BufRead, BufReader, Read, Write};

use rampart_policy::{AvDecision, Booleans, Context, Policy};
use rustc_hash::FxHashMap as HashMap;

/// Entries kept before a cache is emptied (bounds memory on endless
/// streams of distinct queries).
const MAX_DECISIONS: usize = 1 << 16;
const MAX_CONTEXTS: usize = 1 << 14;

pub fn run<R: Read, W: Write>(policy: &Policy, bools: &Booleans, cache: bool, input: R, output: W) -> io::Result<()> {
    let mut reader = BufReader::with_capacity(1 << 16, input);
    let mut out = io::BufWriter::with_capacity(1 << 16, output);
    let mut answerer = Answerer { policy, bools, cache: cache.then(Cache::default) };
    let mut line = Vec::with_capacity(256);
    loop {
        if reader.buffer().is_empty() {
            out.flush()?;
        }
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        while matches!(line.last(), Some(b'\n' | b'\r')) {
            line.pop();
        }
        let answer = match std::str::from_utf8(&line) {
            Ok(text) => answerer.answer(text),
            Err(_) => Err("the line is not valid UTF-8".to_owned()),
        };
        match answer {
            Ok(d) => out.write_all(&hex_line(&d))?,
            Err(msg) => writeln!(out, "error: {msg}")?,
        }
    }
    out.flush()
}

/// `0x%08x 0x%08x 0x%08x\n` without the formatting machinery.
fn hex_line(d: &AvDecision) -> [u8; 33] {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut buf = [b' '; 33];
    for (i, v) in [d.allowed, d.auditallow, d.auditdeny].into_iter().enumerate() {
        let at = i * 11;
        buf[at] = b'0';
        buf[at + 1] = b'x';
        for k in 0..8 {
            buf[at + 2 + k] = DIGITS[((v >> (28 - 4 * k)) & 0xf) as usize];
        }
    }
    buf[32] = b'\n';
    buf
}

struct Answerer<'p> {
    policy: &'p Policy,
    bools: &'p Booleans,
    cache: Option<Cache>,
}

/// Parsed contexts by text, and decisions by `"S T C"` (fields never
/// contain ASCII whitespace, so the joined key is unambiguous).
#[derive(Default)]
struct Cache {
    contexts: HashMap<String, Context>,
    decisions: HashMap<String, AvDecision>,
    key: String,
}

impl Answerer<'_> {
    fn answer(&mut self, line: &str) -> Result<AvDecision, String> {
        let mut fields = line.split_ascii_whitespace();
        let (Some(s), Some(t), Some(c), None) = (fields.next(), fields.next(), fields.next(), fields.next()) else {
            let n = line.split_ascii_whitespace().count();
            return Err(format!("expected 3 fields `SCONTEXT TCONTEXT CLASS`, got {n}"));
        };
        let (policy, bools) = (self.policy, self.bools);
        let class = || policy.class_by_name(c).ok_or_else(|| format!("class `{c}` is not defined in the policy"));
        let Some(cache) = &mut self.cache else {
            let sc = parse(policy, "source", s)?;
            let tc = parse(policy, "target", t)?;
            return Ok(policy.compute_av(bools, &sc, &tc, class()?));
        };
        if cache.decisions.len() >= MAX_DECISIONS {
            cache.decisions.clear();
        }
        if cache.contexts.len() >= MAX_CONTEXTS {
            cache.contexts.clear();
        }
        cache.key.clear();
        for (i, f) in [s, t, c].into_iter().enumerate() {
            if i > 0 {
                cache.key.push(' ');
            }
            cache.key.push_str(f);
        }
        if let Some(d) = cache.decisions.get(cache.key.as_str()) {
            return Ok(*d);
        }
        for (which, text) in [("source", s), ("target", t)] {
            if !cache.contexts.contains_key(text) {
                cache.contexts.insert(text.to_owned(), parse(policy, which, text)?);
            }
        }
        let class = class()?;
        let (Some(sc), Some(tc)) = (cache.contexts.get(s), cache.contexts.get(t)) else {
            return Err("internal error: context cache lost an entry".to_owned());
        };
        let d = policy.compute_av(bools, sc, tc, class);
        cache.decisions.insert(cache.key.clone(), d);
        Ok(d)
    }
}

fn parse(policy: &Policy, which: &str, text: &str) -> Result<Context, String> {
    policy.parse_context(text).map_err(|e| format!("invalid {which} context `{text}`: {}", e.reason()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_layout() {
        let d = AvDecision { allowed: 0x40053, auditallow: 0, auditdeny: 0xffffffff, permissive: false };
        assert_eq!(&hex_line(&d)[..], b"0x00040053 0x00000000 0xffffffff\n");
    }
}
