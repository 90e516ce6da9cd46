//! Paths generated from the file_contexts patterns themselves, labeled
//! by rampart-label and by libselinux: must be 100% identical.
//!
//! For every spec of the system configuration, a small independent
//! sampler (below; it shares nothing with the library's regex
//! translator) expands the regex into matching strings: literals as
//! written, a random alternative for `|`, random repeat counts, random
//! bytes from classes and `.`. Each sample also yields near misses:
//! an extra component, trailing and doubled slashes, non-UTF-8 bytes,
//! newlines (final and inside), truncations, the parent directory,
//! changed letters, and aliased prefixes from `file_contexts.subs_dist`.
//! Every path is looked up under each of the 7 file types and with mode
//! 0. With `RAMPART_FULL=1` all paths (at least 100,000) are checked;
//! otherwise every 8th.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::HashSet;
use std::time::Instant;

use common::{every, full, oracle, LabelQuery};
use rampart_label::{FileContexts, FileType, SpecFiles};

/// xorshift64*: deterministic, seeded.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// The sampler's view of a regex.
#[derive(Debug, Clone)]
enum Re {
    Byte(u8),
    /// Allowed byte ranges (already negated if needed).
    Set(Vec<(u8, u8)>),
    Alt(Vec<Vec<Re>>),
    Repeat(Box<Re>, u32, Option<u32>),
}

fn set_of(pred: impl Fn(u8) -> bool) -> Vec<(u8, u8)> {
    (0..=255u8).filter(|&b| pred(b)).map(|b| (b, b)).collect()
}

fn negate(items: &[(u8, u8)]) -> Vec<(u8, u8)> {
    set_of(|b| !items.iter().any(|&(lo, hi)| lo <= b && b <= hi))
}

struct P<'a> {
    s: &'a [u8],
    i: usize,
}

impl P<'_> {
    fn alt(&mut self) -> Vec<Vec<Re>> {
        let mut alts = vec![self.seq()];
        while self.s.get(self.i) == Some(&b'|') {
            self.i += 1;
            alts.push(self.seq());
        }
        alts
    }

    fn seq(&mut self) -> Vec<Re> {
        let mut v = Vec::new();
        while let Some(&c) = self.s.get(self.i) {
            if c == b'|' || c == b')' {
                break;
            }
            let atom = self.atom();
            v.push(self.quant(atom));
        }
        v
    }

    fn quant(&mut self, atom: Re) -> Re {
        let (min, max) = match self.s.get(self.i) {
            Some(b'?') => (0, Some(1)),
            Some(b'*') => (0, None),
            Some(b'+') => (1, None),
            Some(b'{') => {
                let end = self.s[self.i..].iter().position(|&b| b == b'}').unwrap() + self.i;
                let body = std::str::from_utf8(&self.s[self.i + 1..end]).unwrap();
                self.i = end;
                match body.split_once(',') {
                    None => (body.parse().unwrap(), Some(body.parse().unwrap())),
                    Some((a, "")) => (a.parse().unwrap(), None),
                    Some((a, b)) => (a.parse().unwrap(), Some(b.parse().unwrap())),
                }
            }
            _ => return atom,
        };
        self.i += 1;
        Re::Repeat(Box::new(atom), min, max)
    }

    fn atom(&mut self) -> Re {
        let c = self.s[self.i];
        self.i += 1;
        match c {
            b'(' => {
                let alts = self.alt();
                assert_eq!(self.s.get(self.i), Some(&b')'));
                self.i += 1;
                Re::Alt(alts)
            }
            b'.' => Re::Set(vec![(0x01, 0xff)]),
            b'[' => self.class(),
            b'\\' => {
                let e = self.s[self.i];
                self.i += 1;
                match e {
                    b'd' => Re::Set(vec![(b'0', b'9')]),
                    b'w' => Re::Set(set_of(|b| b.is_ascii_alphanumeric() || b == b'_')),
                    b's' => Re::Set(vec![(b' ', b' '), (b'\t', b'\r')]),
                    _ => Re::Byte(e),
                }
            }
            b'^' | b'$' => Re::Alt(vec![vec![]]),
            _ => Re::Byte(c),
        }
    }

    fn class(&mut self) -> Re {
        let neg = self.s[self.i] == b'^';
        if neg {
            self.i += 1;
        }
        let mut items = Vec::new();
        let mut first = true;
        loop {
            let c = self.s[self.i];
            self.i += 1;
            if c == b']' && !first {
                break;
            }
            first = false;
            let lo = if c == b'\\' {
                let e = self.s[self.i];
                self.i += 1;
                e
            } else {
                c
            };
            if self.s[self.i] == b'-' && self.s[self.i + 1] != b']' {
                let hi = self.s[self.i + 1];
                self.i += 2;
                items.push((lo, hi));
            } else {
                items.push((lo, lo));
            }
        }
        Re::Set(if neg { negate(&items) } else { items })
    }
}

/// Bytes the sampler prefers: path-like, plus a few awkward ones.
const NICE: &[u8] = b"abcdefxyz0129._-/ABZ";

fn pick(set: &[(u8, u8)], rng: &mut Rng) -> u8 {
    let nice: Vec<u8> = NICE.iter().copied().filter(|&b| set.iter().any(|&(lo, hi)| lo <= b && b <= hi)).collect();
    if !nice.is_empty() && !rng.chance(10) {
        return nice[rng.below(nice.len())];
    }
    let (lo, hi) = set[rng.below(set.len())];
    let b = lo + (rng.below(usize::from(hi - lo) + 1) as u8);
    if b == 0 {
        b'a'
    } else {
        b
    }
}

fn generate(seq: &[Re], rng: &mut Rng, out: &mut Vec<u8>) {
    for r in seq {
        match r {
            Re::Byte(b) => out.push(*b),
            Re::Set(s) => out.push(pick(s, rng)),
            Re::Alt(alts) => generate(&alts[rng.below(alts.len())], rng, out),
            Re::Repeat(inner, min, max) => {
                let extra = match max {
                    Some(m) => m - min,
                    None => 3,
                };
                let n = min + rng.below(extra as usize + 1) as u32;
                for _ in 0..n {
                    generate(std::slice::from_ref(inner), rng, out);
                }
            }
        }
    }
}

/// Near misses and variants of one sample.
fn variants(s: &[u8], aliases: &[(Vec<u8>, Vec<u8>)], rng: &mut Rng, out: &mut Vec<Vec<u8>>) {
    out.push(s.to_vec());
    let mut v = s.to_vec();
    v.extend_from_slice(b"/extra");
    out.push(v);
    let mut v = s.to_vec();
    v.push(b'/');
    out.push(v);
    let slashes: Vec<usize> = s.iter().enumerate().filter(|(_, &b)| b == b'/').map(|(i, _)| i).collect();
    if !slashes.is_empty() {
        let at = slashes[rng.below(slashes.len())];
        let mut v = s.to_vec();
        v.insert(at, b'/');
        out.push(v);
        let cut = slashes[rng.below(slashes.len())];
        out.push(if cut == 0 { b"/".to_vec() } else { s[..cut].to_vec() });
    }
    if s.len() > 1 {
        let at = 1 + rng.below(s.len() - 1);
        let mut v = s.to_vec();
        v[at] = [0xff, b'\n', b'X', b'.', 0xc3][rng.below(5)];
        out.push(v);
        out.push(s[..at].to_vec());
        let mut v = s.to_vec();
        v.insert(at, [b'\n', 0xfe, b'/', b'a'][rng.below(4)]);
        out.push(v);
    }
    let mut v = s.to_vec();
    v.push(b'\n');
    out.push(v);
    let mut v = s.to_vec();
    v.extend_from_slice(b"x\xe9");
    out.push(v);
    for (alias, original) in aliases {
        if s.starts_with(original) && matches!(s.get(original.len()), None | Some(b'/')) {
            let mut v = alias.clone();
            v.extend_from_slice(&s[original.len()..]);
            out.push(v);
        }
    }
}

fn modes() -> impl Iterator<Item = u32> {
    std::iter::once(0).chain(FileType::ALL.into_iter().map(FileType::mode_bits))
}

#[test]
#[ignore = "needs the system policy: compared with libselinux"]
fn synthetic_paths_match_libselinux() {
    let policy = common::system_policy();
    let files = SpecFiles::system();
    let fc = FileContexts::load(&files, &policy).unwrap();
    let aliases: Vec<(Vec<u8>, Vec<u8>)> = fc
        .substitutions()
        .dist
        .entries()
        .iter()
        .chain(fc.substitutions().local.entries())
        .map(|s| (s.alias.clone(), s.original.clone()))
        .collect();
    let mut rng = Rng(0x5eed_1abe_1f11_e5ed);
    let mut seen = HashSet::new();
    let mut paths: Vec<Vec<u8>> = Vec::new();
    let mut round = 0;
    while paths.len() < 110_000 {
        round += 1;
        for spec in fc.specs() {
            let re = spec.regex.as_bytes();
            let mut p = P { s: re, i: 0 };
            let ast = p.alt();
            assert_eq!(p.i, re.len(), "sampler could not parse {}", spec.regex);
            let mut sample = Vec::new();
            generate(&[Re::Alt(ast)], &mut rng, &mut sample);
            let mut vs = Vec::new();
            variants(&sample, &aliases, &mut rng, &mut vs);
            for v in vs {
                if !v.is_empty() && !v.contains(&0) && seen.insert(v.clone()) {
                    paths.push(v);
                }
            }
        }
        assert!(round < 20, "generator stalls");
    }
    let sample = if full() { paths.clone() } else { every(&paths, 8) };
    let queries: Vec<LabelQuery> = sample.iter().flat_map(|p| modes().map(move |m| (p.clone(), m))).collect();
    let t = Instant::now();
    let want = oracle(&[], &queries, 2);
    let oracle_time = t.elapsed();
    let mut bad = 0usize;
    let mut labeled = 0usize;
    for ((path, mode), w) in queries.iter().zip(&want) {
        let got = fc.lookup_mode(path, *mode).as_str();
        if got != "<<none>>" {
            labeled += 1;
        }
        if got != w {
            bad += 1;
            if bad <= 20 {
                eprintln!("MISMATCH {:?} mode {mode:o}: libselinux {w}, rampart {got}", String::from_utf8_lossy(path));
            }
        }
    }
    println!(
        "synthetic: {} distinct paths generated from {} specs, {} checked{} x 8 (7 types + mode 0) = {} lookups \
         ({} labeled); {} differ (libselinux {:.1} s on 2 processes)",
        paths.len(),
        fc.specs().len(),
        sample.len(),
        if full() { " (RAMPART_FULL=1: all)" } else { " (every 8th; RAMPART_FULL=1 for all)" },
        queries.len(),
        labeled,
        bad,
        oracle_time.as_secs_f64()
    );
    assert_eq!(bad, 0, "{bad} of {} lookups differ from libselinux", queries.len());
}
