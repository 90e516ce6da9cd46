//! The DFA tables and matcher of the kernel's `match.c`.
//!
//! A DFA is a flex-style table set (magic `0x1B5E783D`, big-endian
//! tables): base/default/next/check for transitions, an optional
//! equivalence-class table, and one or two accept tables. Loading follows
//! `aa_dfa_unpack` with `DFA_FLAG_VERIFY_STATES` (the kernel's default
//! paranoid load): table headers first (`verify_table_headers`), then
//! every state and transition in bounds and every diff-encoded chain
//! acyclic (`verify_dfa`). After that, matching cannot index out of
//! bounds; it still goes through checked reads so a logic error becomes
//! a non-match, never a panic.

use crate::error::{LoadError, Result};

/// `DFA_NOMATCH`: the trap state.
pub const NOMATCH: u32 = 0;
/// `DFA_START`: the default start state.
pub const START: u32 = 1;

const YYTH_MAGIC: u32 = 0x1B5E_783D;
const YYTH_FLAG_DIFF_ENCODE: u16 = 1;
const YYTH_FLAG_OOB_TRANS: u16 = 2;
const YYTH_FLAGS: u16 = YYTH_FLAG_DIFF_ENCODE | YYTH_FLAG_OOB_TRANS;
/// `sizeof(struct table_set_header)` (three u32 and a u16, padded).
const TABLE_SET_HEADER: usize = 16;
/// `sizeof(struct table_header)`.
const TABLE_HEADER: usize = 12;

const ID_ACCEPT: usize = 0;
const ID_BASE: usize = 1;
const ID_CHK: usize = 2;
const ID_DEF: usize = 3;
const ID_EC: usize = 4;
const ID_ACCEPT2: usize = 6;
const ID_NXT: usize = 7;
const ID_MAX: u16 = 8;

const DATA8: u16 = 1;
const DATA16: u16 = 2;
const DATA32: u16 = 4;

const MATCH_FLAG_DIFF_ENCODE: u32 = 0x8000_0000;
const MATCH_FLAG_OOB_TRANSITION: u32 = 0x2000_0000;
const MATCH_FLAGS_MASK: u32 = 0xff00_0000;
const MATCH_FLAGS_VALID: u32 = MATCH_FLAG_DIFF_ENCODE | MATCH_FLAG_OOB_TRANSITION;
const MATCH_FLAGS_INVALID: u32 = MATCH_FLAGS_MASK & !MATCH_FLAGS_VALID;
/// `dfa->max_oob`: the kernel supports one out-of-band transition.
const MAX_OOB: u32 = 1;

/// Which accept tables a DFA must have (`TO_ACCEPT1_FLAG(YYTD_DATA32)`
/// and `TO_ACCEPT2_FLAG(YYTD_DATA32)` in the kernel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Accept {
    /// Accept table only (a separate permission table follows the DFA).
    One,
    /// Accept and accept2 (old-ABI permissions packed in both).
    Both,
}

/// One loaded, verified DFA.
#[derive(Clone, Debug)]
pub struct Dfa {
    flags: u16,
    base: Vec<u32>,
    def: Vec<u32>,
    next: Vec<u32>,
    check: Vec<u32>,
    ec: Option<Box<[u8; 256]>>,
    pub(crate) accept: Vec<u32>,
    pub(crate) accept2: Vec<u32>,
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    let s = b.get(at..at.checked_add(2)?)?;
    Some(u16::from_be_bytes([s[0], s[1]]))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

/// `table_size`: header plus data, aligned to 8 (`None` if it cannot
/// be represented, which no blob can then hold).
fn table_size(len: usize, el: usize) -> Option<usize> {
    Some(len.checked_mul(el)?.checked_add(TABLE_HEADER + 7)? & !7)
}

struct Table {
    id: usize,
    flags: u16,
    data: Vec<u32>,
}

impl Dfa {
    /// `aa_dfa_unpack` plus `verify_dfa`. `base` is the blob's offset in
    /// the file, for error messages.
    pub(crate) fn unpack(blob: &[u8], base: usize, accept: Accept) -> Result<Dfa> {
        let err = |at: usize, m: &str| LoadError::new(base + at, format!("DFA: {m}"));
        if blob.len() < TABLE_SET_HEADER {
            return Err(err(0, "shorter than the table set header"));
        }
        if be32(blob, 0) != Some(YYTH_MAGIC) {
            return Err(err(0, "bad magic (not 0x1B5E783D)"));
        }
        let hsize = be32(blob, 4).unwrap_or(u32::MAX) as usize;
        if blob.len() < hsize {
            return Err(err(4, "header size beyond the blob"));
        }
        let flags = be16(blob, 12).unwrap_or(u16::MAX);
        if flags & !YYTH_FLAGS != 0 {
            return Err(err(12, &format!("unknown header flags {flags:#x}")));
        }
        let mut tables: [Option<Table>; 9] = Default::default();
        let mut pos = hsize;
        while pos < blob.len() {
            let t = unpack_table(&blob[pos..]).map_err(|m| err(pos, m))?;
            let ok = match t.id {
                ID_ACCEPT => t.flags == DATA32,
                ID_ACCEPT2 => accept == Accept::Both && t.flags == DATA32,
                ID_BASE => t.flags == DATA32,
                ID_DEF | ID_NXT | ID_CHK => t.flags == DATA16 || t.flags == DATA32,
                ID_EC => t.flags == DATA8,
                _ => false,
            };
            if !ok {
                return Err(err(pos, &format!("table id {} with element size {} not allowed here", t.id + 1, t.flags)));
            }
            let Some(slot) = tables.get_mut(t.id) else {
                return Err(err(pos, "table id out of range"));
            };
            if slot.is_some() {
                return Err(err(pos, &format!("duplicate table id {}", t.id + 1)));
            }
            pos += table_size(t.data.len(), t.flags as usize).unwrap_or(blob.len());
            *slot = Some(t);
        }
        let mut take = |id: usize| tables[id].take().map(|t| t.data);
        let (accept1, accept2) = (take(ID_ACCEPT), take(ID_ACCEPT2));
        let (Some(basev), Some(def), Some(next), Some(check)) =
            (take(ID_BASE), take(ID_DEF), take(ID_NXT), take(ID_CHK))
        else {
            return Err(err(0, "missing one of the base, default, next and check tables"));
        };
        let ec = take(ID_EC);
        // verify_table_headers
        let states = basev.len();
        let Some(accept1) = accept1 else { return Err(err(0, "missing accept table")) };
        if accept1.len() != states {
            return Err(err(0, "accept table size differs from the state count"));
        }
        let accept2 = match (accept, accept2) {
            (Accept::Both, Some(a2)) if a2.len() == states => a2,
            (Accept::Both, Some(_)) => return Err(err(0, "accept2 table size differs from the state count")),
            (Accept::Both, None) => return Err(err(0, "missing accept2 table")),
            // the kernel (6.12) gives a perms-table DFA a zeroed accept2
            (Accept::One, _) => vec![0; states],
        };
        if def.len() != states {
            return Err(err(0, "default table size differs from the state count"));
        }
        if next.len() != check.len() {
            return Err(err(0, "next and check tables differ in size"));
        }
        let ec = match ec {
            None => None,
            Some(v) if v.len() == 256 => {
                let mut a = Box::new([0u8; 256]);
                for (d, s) in a.iter_mut().zip(&v) {
                    *d = *s as u8;
                }
                Some(a)
            }
            Some(_) => return Err(err(0, "equivalence class table is not 256 entries")),
        };
        let dfa = Dfa { flags, base: basev, def, next, check, ec, accept: accept1, accept2 };
        dfa.verify().map_err(|m| err(0, m))?;
        Ok(dfa)
    }

    /// `verify_dfa`.
    fn verify(&self) -> std::result::Result<(), &'static str> {
        let states = self.base.len();
        let trans = self.next.len();
        if states < 2 {
            return Err("fewer than two states");
        }
        for i in 0..states {
            let b = self.base[i];
            if self.def[i] as usize >= states {
                return Err("default state out of bounds");
            }
            if b & MATCH_FLAGS_INVALID != 0 {
                return Err("state with invalid match flags");
            }
            if b & MATCH_FLAG_DIFF_ENCODE != 0 && self.flags & YYTH_FLAG_DIFF_ENCODE == 0 {
                return Err("diff encoded transition state without header flag");
            }
            if b & MATCH_FLAG_OOB_TRANSITION != 0 {
                if base_idx(b) < MAX_OOB {
                    return Err("out of band transition out of range");
                }
                if self.flags & YYTH_FLAG_OOB_TRANS == 0 {
                    return Err("out of band transition state without header flag");
                }
            }
            if base_idx(b) as usize + 255 >= trans {
                return Err("next/check upper bounds error");
            }
        }
        for i in 0..trans {
            if self.next[i] as usize >= states || self.check[i] as usize >= states {
                return Err("next or check state out of bounds");
            }
        }
        // Diff-encoded chains must end (no loop) in a non-diff state.
        const MARK: u8 = 1;
        const VERIFIED: u8 = 2;
        let diff = |j: usize| self.base[j] & MATCH_FLAG_DIFF_ENCODE != 0;
        let mut mark = vec![0u8; states];
        for i in 0..states {
            let mut j = i;
            while diff(j) && mark[j] & VERIFIED == 0 {
                if mark[j] & MARK != 0 {
                    return Err("loop in diff encoded chain");
                }
                let k = self.def[j] as usize;
                if j == k {
                    return Err("diff encoded state defaults to itself");
                }
                mark[j] |= MARK;
                j = k;
            }
            let mut j = i;
            let mut steps = 0;
            while diff(j) {
                let k = self.def[j] as usize;
                if j < i {
                    break;
                }
                mark[j] = VERIFIED;
                j = k;
                steps += 1;
                if steps > states {
                    return Err("loop in diff encoded chain");
                }
            }
        }
        Ok(())
    }

    /// Number of states.
    pub fn states(&self) -> usize {
        self.base.len()
    }

    /// Whether the DFA uses diff encoding (ABI v7 and later compilers).
    pub fn diff_encoded(&self) -> bool {
        self.flags & YYTH_FLAG_DIFF_ENCODE != 0
    }

    /// `match_char`: one transition on an (equivalence-mapped) byte.
    #[inline]
    fn step(&self, mut state: u32, c: u32) -> u32 {
        loop {
            let Some(&b) = self.base.get(state as usize) else { return NOMATCH };
            let pos = (base_idx(b) + c) as usize;
            if self.check.get(pos) != Some(&state) {
                state = self.def.get(state as usize).copied().unwrap_or(NOMATCH);
                if b & MATCH_FLAG_DIFF_ENCODE != 0 {
                    continue;
                }
                return state;
            }
            return self.next.get(pos).copied().unwrap_or(NOMATCH);
        }
    }

    #[inline]
    fn class(&self, byte: u8) -> u32 {
        match &self.ec {
            Some(ec) => ec[byte as usize] as u32,
            None => byte as u32,
        }
    }

    /// `aa_dfa_next`.
    pub fn next(&self, state: u32, byte: u8) -> u32 {
        self.step(state, self.class(byte))
    }

    /// `aa_dfa_match_len` (and `aa_dfa_match` for a string without NUL):
    /// the state after consuming every byte. The trap state is sticky
    /// only at the start, as in the kernel.
    pub fn match_bytes(&self, start: u32, s: &[u8]) -> u32 {
        if start == NOMATCH {
            return NOMATCH;
        }
        let mut state = start;
        for &c in s {
            state = self.step(state, self.class(c));
        }
        state
    }

    /// `aa_dfa_match`: stops at the first NUL, as C strings do.
    pub fn match_str(&self, start: u32, s: &[u8]) -> u32 {
        let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
        self.match_bytes(start, &s[..end])
    }

    /// `aa_dfa_null_transition`: the separator of a pair (link, target).
    pub fn null_transition(&self, state: u32) -> u32 {
        self.next(state, 0)
    }

    /// `aa_dfa_leftmatch` (`leftmatch_fb`): the final state and the
    /// kernel's `count`, the length of the match up to the first state
    /// loop (the literal prefix that ranks attachments). Like the kernel
    /// it steps without following diff-encoded default chains.
    pub fn leftmatch(&self, start: u32, s: &[u8]) -> (u32, usize) {
        const WB: usize = 32;
        let mut history = [0u32; WB];
        let (mut wpos, mut wlen) = (0usize, 0usize);
        let mut count = 0usize;
        if start == NOMATCH {
            return (NOMATCH, 0);
        }
        let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
        let s = &s[..end];
        let mut state = start;
        for (i, &c) in s.iter().enumerate() {
            history[wpos] = state;
            state = self.raw_step(state, self.class(c));
            // is_loop
            let mut adjust = None;
            if history[wpos] >= state {
                let mut p = wpos;
                for k in 0..wlen {
                    if history[p] == state {
                        adjust = Some(k);
                        break;
                    }
                    p = (p + WB - 1) & (WB - 1);
                }
            }
            if let Some(a) = adjust {
                state = self.match_bytes(state, &s[i + 1..]);
                count = count.saturating_sub(a);
                if state == NOMATCH {
                    count = 0;
                }
                return (state, count);
            }
            wpos = (wpos + 1) & (WB - 1);
            wlen = (wlen + 1).min(WB);
            count += 1;
        }
        if state == NOMATCH {
            count = 0;
        }
        (state, count)
    }

    /// One transition without diff-encode chains (as `leftmatch_fb`).
    fn raw_step(&self, state: u32, c: u32) -> u32 {
        let Some(&b) = self.base.get(state as usize) else { return NOMATCH };
        let pos = (base_idx(b) + c) as usize;
        if self.check.get(pos) == Some(&state) {
            self.next.get(pos).copied().unwrap_or(NOMATCH)
        } else {
            self.def.get(state as usize).copied().unwrap_or(NOMATCH)
        }
    }
}

#[inline]
fn base_idx(b: u32) -> u32 {
    b & 0x00ff_ffff
}

/// `unpack_table`: one table, its data converted to u32.
fn unpack_table(b: &[u8]) -> std::result::Result<Table, &'static str> {
    if b.len() < TABLE_HEADER {
        return Err("table header truncated");
    }
    let raw_id = be16(b, 0).unwrap_or(0);
    let id = raw_id.wrapping_sub(1);
    if id > ID_MAX {
        return Err("table id out of range");
    }
    let flags = be16(b, 2).unwrap_or(0);
    let len = be32(b, 8).unwrap_or(0) as usize;
    if !(flags == DATA8 || flags == DATA16 || flags == DATA32) {
        return Err("table element size is not 1, 2 or 4");
    }
    if len == 0 {
        return Err("empty table");
    }
    let Some(tsize) = table_size(len, flags as usize) else { return Err("table size overflows") };
    if b.len() < tsize {
        return Err("table truncated");
    }
    let d = &b[TABLE_HEADER..TABLE_HEADER + len * flags as usize];
    let data = match flags {
        DATA8 => d.iter().map(|&x| x as u32).collect(),
        DATA16 => d.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]]) as u32).collect(),
        _ => d.chunks_exact(4).map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]])).collect(),
    };
    Ok(Table { id: id as usize, flags, data })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Serializes tables as apparmor_parser does (for hand-made DFAs).
    pub(crate) fn build(flags: u16, tables: &[(u16, u16, Vec<u32>)]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&YYTH_MAGIC.to_be_bytes());
        v.extend_from_slice(&16u32.to_be_bytes());
        v.extend_from_slice(&0u32.to_be_bytes());
        v.extend_from_slice(&flags.to_be_bytes());
        v.extend_from_slice(&[0, 0]);
        for (id, el, data) in tables {
            let start = v.len();
            v.extend_from_slice(&id.to_be_bytes());
            v.extend_from_slice(&el.to_be_bytes());
            v.extend_from_slice(&0u32.to_be_bytes());
            v.extend_from_slice(&(data.len() as u32).to_be_bytes());
            for &x in data {
                match el {
                    1 => v.push(x as u8),
                    2 => v.extend_from_slice(&(x as u16).to_be_bytes()),
                    _ => v.extend_from_slice(&x.to_be_bytes()),
                }
            }
            while !(v.len() - start).is_multiple_of(8) {
                v.push(0);
            }
        }
        v
    }

    /// A DFA over "a*" style: state 1 loops on 'a' to state 2, which
    /// loops on 'a'; accept of state 2 is 7.
    pub(crate) fn tiny(base2: u32, header_flags: u16) -> Vec<u8> {
        let mut next = vec![0u32; 256 + 3];
        let mut check = vec![0u32; 256 + 3];
        next[b'a' as usize] = 2;
        check[b'a' as usize] = 1;
        next[b'a' as usize + 1] = 2;
        check[b'a' as usize + 1] = 2;
        build(
            header_flags,
            &[
                (1, 4, vec![0, 0, 7]),
                (7, 4, vec![0, 0, 9]),
                (2, 4, vec![0, 0, base2]),
                (4, 2, vec![0, 0, 0]),
                (8, 2, next),
                (3, 2, check),
            ],
        )
    }

    #[test]
    fn tiny_matches() {
        let d = Dfa::unpack(&tiny(1, 0), 0, Accept::Both).unwrap();
        assert_eq!(d.match_str(START, b"aaa"), 2);
        assert_eq!(d.accept[2], 7);
        assert_eq!(d.accept2[2], 9);
        assert_eq!(d.match_str(START, b"ab"), NOMATCH);
        assert_eq!(d.match_str(START, b""), START);
        assert_eq!(d.match_str(START, b"a\0b"), 2);
    }

    #[test]
    fn rejects_out_of_bounds_and_bad_flags() {
        // base index so large that base+255 exceeds the next table
        assert!(Dfa::unpack(&tiny(10, 0), 0, Accept::Both).is_err());
        // invalid match flag bit
        assert!(Dfa::unpack(&tiny(0x0100_0001, 0), 0, Accept::Both).is_err());
        // diff encode without the header flag
        assert!(Dfa::unpack(&tiny(0x8000_0001, 0), 0, Accept::Both).is_err());
        // unknown header flag
        assert!(Dfa::unpack(&tiny(1, 4), 0, Accept::Both).is_err());
        // accept2 not allowed with a perms table
        assert!(Dfa::unpack(&tiny(1, 0), 0, Accept::One).is_err());
    }

    /// Three states; state 2 is diff-encoded against state 1: it has its
    /// own transition on 'b' (to 2) and inherits 'a' -> 2 from state 1.
    fn diff(def2: u32, def1: u32, base1_flags: u32) -> Vec<u8> {
        let mut next = vec![0u32; 256 + 3];
        let mut check = vec![0u32; 256 + 3];
        next[b'a' as usize] = 2;
        check[b'a' as usize] = 1;
        next[b'b' as usize + 2] = 2;
        check[b'b' as usize + 2] = 2;
        build(
            YYTH_FLAG_DIFF_ENCODE,
            &[
                (1, 4, vec![0, 0, 7]),
                (7, 4, vec![0, 0, 0]),
                (2, 4, vec![0, base1_flags, MATCH_FLAG_DIFF_ENCODE | 2]),
                (4, 4, vec![0, def1, def2]),
                (8, 4, next),
                (3, 4, check),
            ],
        )
    }

    #[test]
    fn diff_encoded_states_follow_their_default_chain() {
        let d = Dfa::unpack(&diff(1, 0, 0), 0, Accept::Both).unwrap();
        assert!(d.diff_encoded());
        assert_eq!(d.match_str(START, b"ab"), 2);
        // 'a' from state 2 is inherited from state 1
        assert_eq!(d.match_str(START, b"aba"), 2);
        assert_eq!(d.match_str(START, b"b"), NOMATCH);
        // a chain that loops (1 -> 2 -> 1, both diff-encoded) is refused
        let e = Dfa::unpack(&diff(1, 2, MATCH_FLAG_DIFF_ENCODE), 0, Accept::Both).unwrap_err();
        assert!(e.message().contains("loop"), "{e}");
        // a diff-encoded state defaulting to itself too
        let e = Dfa::unpack(&diff(2, 0, 0), 0, Accept::Both).unwrap_err();
        assert!(e.message().contains("itself"), "{e}");
    }

    #[test]
    fn every_truncation_is_an_error() {
        let b = tiny(1, 0);
        for n in 0..b.len() {
            let _ = Dfa::unpack(&b[..n], 0, Accept::Both);
        }
        for n in 0..b.len() {
            let mut c = b.clone();
            c[n] ^= 0xff;
            let _ = Dfa::unpack(&c, 0, Accept::Both);
        }
    }
}
