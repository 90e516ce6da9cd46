//! Permission bits and the compatibility remap of `policy_compat.c`.
//!
//! Policy compiled for ABI v5 to v8 (everything Debian 12's
//! apparmor_parser 3.0.8 writes) packs file permissions into the DFA's
//! two accept tables: accept holds the owner half in bits 0..14 and the
//! other half in bits 14..28 (each: 7 permission bits, then 7 exec
//! bits whose upper 4 are an x-table index), accept2 the audit and quiet
//! masks in the same layout. Since Linux 6.2 the kernel converts this at
//! load into a permission table (`compute_fperms`: two entries per
//! state, owner then other) and turns accept into an index
//! (`remap_dfa_accept`); we do the same, so the decision code reads one
//! layout whatever the ABI.

use crate::dfa::Dfa;

pub const MAY_EXEC: u32 = 0x1;
pub const MAY_WRITE: u32 = 0x2;
pub const MAY_READ: u32 = 0x4;
pub const MAY_APPEND: u32 = 0x8;
pub const AA_MAY_CREATE: u32 = 0x10;
pub const AA_MAY_DELETE: u32 = 0x20;
pub const AA_MAY_OPEN: u32 = 0x40;
pub const AA_MAY_SETATTR: u32 = 0x100;
pub const AA_MAY_GETATTR: u32 = 0x200;
pub const AA_MAY_CHMOD: u32 = 0x1000;
pub const AA_MAY_CHOWN: u32 = 0x2000;
pub const AA_MAY_LOCK: u32 = 0x8000;
pub const AA_EXEC_MMAP: u32 = 0x0001_0000;
pub const AA_MAY_LINK: u32 = 0x0004_0000;
/// Overlaid on `AA_MAY_LOCK` in the second entry of a link pair.
pub const AA_LINK_SUBSET: u32 = AA_MAY_LOCK;
pub const AA_MAY_ONEXEC: u32 = 0x4000_0000;
pub const AA_MAY_CHANGE_PROFILE: u32 = 0x8000_0000;

/// The file permission bits `audit_file_mask` can print.
pub const AA_AUDIT_FILE_MASK: u32 = MAY_READ
    | MAY_WRITE
    | MAY_EXEC
    | MAY_APPEND
    | AA_MAY_CREATE
    | AA_MAY_DELETE
    | AA_MAY_LOCK
    | AA_EXEC_MMAP
    | AA_MAY_LINK;

pub const AA_X_INDEX_MASK: u32 = 0x00ff_ffff;
pub const AA_X_TYPE_MASK: u32 = 0x0c00_0000;
pub const AA_X_NAME: u32 = 0x0400_0000;
pub const AA_X_TABLE: u32 = 0x0800_0000;
pub const AA_X_UNSAFE: u32 = 0x1000_0000;
pub const AA_X_CHILD: u32 = 0x2000_0000;
pub const AA_X_INHERIT: u32 = 0x4000_0000;
pub const AA_X_UNCONFINED: u32 = 0x8000_0000;

/// The letters of the query interface, in output order, and their bits.
pub const LETTERS: [(char, u32); 7] = [
    ('r', MAY_READ),
    ('w', MAY_WRITE),
    ('a', MAY_APPEND),
    ('x', MAY_EXEC),
    ('m', AA_EXEC_MMAP),
    ('l', AA_MAY_LINK),
    ('k', AA_MAY_LOCK),
];

/// `struct aa_perms`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Perms {
    pub allow: u32,
    pub deny: u32,
    pub subtree: u32,
    pub cond: u32,
    pub kill: u32,
    pub complain: u32,
    pub prompt: u32,
    pub audit: u32,
    pub quiet: u32,
    pub hide: u32,
    pub xindex: u32,
    pub tag: u32,
    pub label: u32,
}

/// `dfa_map_xindex`: old 14-bit exec field to the new xindex.
fn map_xindex(mask: u32) -> u32 {
    let old_index = (mask >> 10) & 0xf;
    let mut index = 0;
    if mask & 0x100 != 0 {
        index |= AA_X_UNSAFE;
    }
    if mask & 0x200 != 0 {
        index |= AA_X_INHERIT;
    }
    if mask & 0x80 != 0 {
        index |= AA_X_UNCONFINED;
    }
    match old_index {
        0 => {}
        1 => index |= AA_X_UNCONFINED,
        2 => index |= AA_X_NAME,
        3 => index |= AA_X_NAME | AA_X_CHILD,
        n => index |= AA_X_TABLE | (n - 4),
    }
    index
}

/// `map_old_perms`.
fn map_old_perms(old: u32) -> u32 {
    let mut new = old & 0xf;
    if old & MAY_READ != 0 {
        new |= AA_MAY_GETATTR | AA_MAY_OPEN;
    }
    if old & MAY_WRITE != 0 {
        new |= AA_MAY_SETATTR | AA_MAY_CREATE | AA_MAY_DELETE | AA_MAY_CHMOD | AA_MAY_CHOWN | AA_MAY_OPEN;
    }
    if old & 0x10 != 0 {
        new |= AA_MAY_LINK;
    }
    if old & 0x20 != 0 {
        new |= AA_MAY_LOCK | AA_LINK_SUBSET;
    }
    if old & 0x40 != 0 {
        new |= AA_EXEC_MMAP;
    }
    new
}

/// `compute_fperms_user` (`other == false`) and `compute_fperms_other`.
fn fperms(accept: u32, accept2: u32, other: bool) -> Perms {
    let shift = if other { 14 } else { 0 };
    let a = accept >> shift;
    let a2 = accept2 >> shift;
    let mut p = Perms {
        allow: map_old_perms((a & 0x7f) | (accept & 0x8000_0000)),
        audit: map_old_perms(a2 & 0x7f),
        quiet: map_old_perms((a2 >> 7) & 0x7f),
        xindex: map_xindex(a & 0x3fff),
        ..Perms::default()
    };
    // compute_fperms_allow
    p.allow |= AA_MAY_GETATTR;
    if accept & 0x8000_0000 != 0 {
        p.allow |= AA_MAY_CHANGE_PROFILE;
    }
    if accept & 0x4000_0000 != 0 {
        p.allow |= AA_MAY_ONEXEC;
    }
    p
}

/// `compute_fperms` + `remap_dfa_accept(dfa, 2)`: a file DFA's table,
/// owner entry at `2*state`, other at `2*state + 1`.
pub(crate) fn map_file(dfa: &mut Dfa) -> Vec<Perms> {
    let mut table = Vec::with_capacity(dfa.states() * 2);
    for s in 0..dfa.states() {
        let (a, a2) = (dfa.accept[s], dfa.accept2[s]);
        table.push(fperms(a, a2, false));
        table.push(fperms(a, a2, true));
    }
    remap_accept(dfa, 2);
    table
}

fn user_allow(a: u32) -> u32 {
    (a & 0x7f) | (a & 0x8000_0000)
}

/// `compute_xmatch_perms` + `remap_dfa_accept(dfa, 1)`.
pub(crate) fn map_xmatch(dfa: &mut Dfa) -> Vec<Perms> {
    let mut table = vec![Perms::default(); dfa.states()];
    for (s, p) in table.iter_mut().enumerate().skip(1) {
        p.allow = user_allow(dfa.accept[s]);
    }
    remap_accept(dfa, 1);
    table
}

fn map_other(x: u32) -> u32 {
    ((x & 0x3) << 8) | ((x & 0x1c) << 18) | ((x & 0x60) << 19)
}

fn map_xbits(x: u32) -> u32 {
    ((x & 0x1) << 7) | ((x & 0x7e) << 9)
}

/// `compute_perms` + `remap_dfa_accept(dfa, 1)` for the policydb.
pub(crate) fn map_policy(dfa: &mut Dfa, version: u32) -> Vec<Perms> {
    let v = version & crate::wire::K_ABI_MASK;
    let mut table = vec![Perms::default(); dfa.states()];
    for (s, p) in table.iter_mut().enumerate().skip(1) {
        let (a, a2) = (dfa.accept[s], dfa.accept2[s]);
        p.allow = user_allow(a);
        p.audit = a2 & 0x7f;
        p.quiet = (a2 >> 7) & 0x7f;
        p.allow |= map_other(((a >> 14) & 0x7f) | (a & 0x8000_0000));
        if v <= 8 {
            p.allow |= AA_MAY_LOCK;
        } else {
            p.allow |= map_xbits((a >> 7) & 0x7f);
        }
        p.audit |= map_other((a2 >> 14) & 0x7f);
        p.quiet |= map_other(((a2 >> 7) >> 14) & 0x7f);
        if v > 8 {
            p.quiet |= map_xbits(((a >> 7) >> 14) & 0x7f);
        }
    }
    remap_accept(dfa, 1);
    table
}

/// `remap_dfa_accept`: accept becomes an index; accept2 (6.12) marks
/// states whose entry is an owner/other pair.
fn remap_accept(dfa: &mut Dfa, factor: u32) {
    for (s, a) in dfa.accept.iter_mut().enumerate() {
        *a = s as u32 * factor;
    }
    for a in dfa.accept2.iter_mut() {
        *a = if factor > 1 { ACCEPT_FLAG_OWNER } else { 0 };
    }
}

/// `ACCEPT_FLAG_OWNER`: the state's entry is owner, the next is other.
pub(crate) const ACCEPT_FLAG_OWNER: u32 = 1;

/// Renders bits as letters of `rwaxmlk`, `-` for none.
pub fn letters(mask: u32) -> String {
    let s: String = LETTERS.iter().filter(|(_, b)| mask & b != 0).map(|(c, _)| *c).collect();
    if s.is_empty() {
        "-".to_owned()
    } else {
        s
    }
}

/// Parses letters of `rwaxmlk` into bits; `None` on any other letter.
pub fn parse_letters(s: &str) -> Option<u32> {
    let mut m = 0;
    for c in s.chars() {
        m |= LETTERS.iter().find(|(l, _)| *l == c)?.1;
    }
    Some(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_layout_owner_and_other() {
        // owner: r (0x4) w (0x2); other: r only
        let accept = 0x6 | (0x4 << 14);
        let u = fperms(accept, 0, false);
        let o = fperms(accept, 0, true);
        assert_eq!(letters(u.allow), "rw");
        assert_eq!(letters(o.allow), "r");
        assert!(u.allow & AA_MAY_GETATTR != 0 && o.allow & AA_MAY_GETATTR != 0);
    }

    #[test]
    fn xindex_mapping() {
        assert_eq!(map_xindex(0x200), AA_X_INHERIT);
        assert_eq!(map_xindex(1 << 10), AA_X_UNCONFINED);
        assert_eq!(map_xindex((2 << 10) | 0x100), AA_X_NAME | AA_X_UNSAFE);
        assert_eq!(map_xindex(3 << 10), AA_X_NAME | AA_X_CHILD);
        assert_eq!(map_xindex(5 << 10), AA_X_TABLE | 1);
    }

    #[test]
    fn letters_round_trip() {
        assert_eq!(parse_letters("kwr"), Some(MAY_READ | MAY_WRITE | AA_MAY_LOCK));
        assert_eq!(letters(parse_letters("rwaxmlk").unwrap()), "rwaxmlk");
        assert_eq!(parse_letters("q"), None);
        assert_eq!(letters(0), "-");
    }
}
