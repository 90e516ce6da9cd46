//! Unpacks a binary policy blob as the kernel's `policy_unpack.c`
//! (`aa_unpack`, `unpack_profile`, `unpack_pdb`, `verify_profile`) does.
//!
//! A blob is a sequence of profiles, each preceded by an optional header
//! (the ABI `version`, required before the first profile, and a
//! `namespace`). Hats and child profiles are flattened by the compiler
//! into entries of their own named `parent//child`. Every check the
//! kernel makes is made here, in the same order, and a failure names the
//! kernel's `info` string and the offset where unpacking stopped.

use crate::dfa::{Accept, Dfa};
use crate::error::{LoadError, Result};
use crate::model::{Mode, PolicyDb, Profile, CLASS_FILE, CLASS_LAST};
use crate::perms::{self, Perms, AA_X_INDEX_MASK, AA_X_TABLE, AA_X_TYPE_MASK};
use crate::wire::{Code, Ext, K_ABI_MASK};

/// `FORCE_COMPLAIN_FLAG`: load every profile of the blob in complain mode.
pub(crate) const FORCE_COMPLAIN_FLAG: u32 = 0x800;
const V5: u32 = 5;
const V9: u32 = 9;

const PACKED_FLAG_HAT: u32 = 1;
const PACKED_MODE_ENFORCE: u32 = 0;
const PACKED_MODE_COMPLAIN: u32 = 1;
const PACKED_MODE_KILL: u32 = 2;
const PACKED_MODE_UNCONFINED: u32 = 3;
const PACKED_MODE_USER: u32 = 4;
/// `MAXMAPPED_SIG`: the highest signal a `kill` mode may name.
const MAXMAPPED_SIG: u32 = 35;
/// `RLIM_NLIMITS` on Linux.
const RLIM_NLIMITS: u16 = 16;

/// One profile as unpacked, with the header values it was read under.
#[derive(Debug)]
pub(crate) struct Unpacked {
    pub profile: Profile,
    /// The namespace named by `:ns:` in the profile name, if any.
    pub ns_name: Option<String>,
}

/// `aa_unpack`: every profile in the blob, in order, plus the namespace
/// named by the (first) header.
pub(crate) fn unpack(bytes: &[u8]) -> Result<(Vec<Unpacked>, Option<String>)> {
    let mut e = Ext::new(bytes);
    let mut version = 0u32;
    let mut ns: Option<String> = None;
    let mut out = Vec::new();
    if bytes.is_empty() {
        return Err(e.err("empty policy"));
    }
    while !e.at_end() {
        verify_header(&mut e, out.is_empty(), &mut version, &mut ns)?;
        let start = e.pos();
        let mut u = unpack_profile(&mut e, version)?;
        verify_profile(&u.profile).map_err(|m| LoadError::new(start, m).in_profile(&u.profile.name))?;
        u.profile.abi = version & K_ABI_MASK;
        out.push(u);
    }
    Ok((out, ns))
}

/// `verify_header`.
fn verify_header(e: &mut Ext<'_>, required: bool, version: &mut u32, ns: &mut Option<String>) -> Result<()> {
    match e.opt_u32(Some("version")) {
        Some(v) => *version = v,
        None if required => return Err(e.err("invalid profile format: no `version` header")),
        None => {}
    }
    let v = *version & K_ABI_MASK;
    if !(V5..=V9).contains(&v) {
        return Err(e.err(format!("unsupported interface version {v} (the kernel takes 5 to 9)")));
    }
    // Each header starts over (`*ns = NULL` in verify_header): the
    // namespace of the load is the one named by the last header.
    *ns = None;
    let at = e.pos();
    if let Some(name) = e.opt_str(Some("namespace"))? {
        if name.is_empty() {
            return Err(LoadError::new(at, "invalid namespace name (empty)"));
        }
        *ns = Some(name);
    }
    Ok(())
}

/// `aa_splitn_fqname` for the `:ns:name` form: (ns, name).
fn split_fqname(name: &str) -> (Option<String>, String) {
    if let Some(rest) = name.strip_prefix(':') {
        if let Some((ns, n)) = rest.split_once(':') {
            let n = n.trim_start_matches("//");
            return (Some(ns.to_owned()), n.to_owned());
        }
        return (Some(rest.to_owned()), String::new());
    }
    (None, name.to_owned())
}

fn unpack_profile(e: &mut Ext<'_>, version: u32) -> Result<Unpacked> {
    e.need_x(Code::Struct, Some("profile"), "struct `profile`")?;
    let at = e.pos();
    let raw = e.opt_str(None)?.ok_or_else(|| e.err("expected the profile name"))?;
    if raw.is_empty() {
        return Err(LoadError::new(at, "empty profile name"));
    }
    let (ns_name, name) = split_fqname(&raw);
    if name.is_empty() {
        return Err(LoadError::new(at, format!("profile name `{raw}` names only a namespace")));
    }
    let ctx = |err: LoadError| err.in_profile(&name);
    let mut p = Profile::new(name.clone());
    p.rename = e.opt_str(Some("rename")).map_err(ctx)?;
    p.attach = e.opt_str(Some("attach")).map_err(ctx)?;
    // xmatch is optional
    p.xmatch = unpack_pdb(e, false, false).map_err(|x| ctx(x.prefix("bad xmatch")))?;
    if let Some(x) = p.xmatch.as_mut() {
        p.xmatch_len = e.req_u32(None, "the xmatch length").map_err(ctx)?;
        x.start[crate::model::CLASS_XMATCH] = crate::dfa::START;
        if x.perms.is_empty() {
            x.perms = perms::map_xmatch(&mut x.dfa);
        }
    }
    p.disconnected = e.opt_str(Some("disconnected")).map_err(ctx)?;
    let at = e.pos();
    if let Some(sig) = e.opt_u32(Some("kill")) {
        if !(1..=MAXMAPPED_SIG).contains(&sig) {
            return Err(ctx(LoadError::new(at, format!("kill signal {sig} out of range"))));
        }
        p.kill_signal = Some(sig);
    }
    if !e.name_x(Code::Struct, Some("flags")) {
        return Err(ctx(e.err("profile missing flags")));
    }
    let flags = e.req_u32(None, "profile flags").map_err(ctx)?;
    p.hat = flags & PACKED_FLAG_HAT != 0;
    p.raw_flags = flags;
    let at = e.pos();
    let mode = e.req_u32(None, "profile mode").map_err(ctx)?;
    p.mode = if mode == PACKED_MODE_COMPLAIN || version & FORCE_COMPLAIN_FLAG != 0 {
        Mode::Complain
    } else {
        match mode {
            PACKED_MODE_ENFORCE => Mode::Enforce,
            PACKED_MODE_KILL => Mode::Kill,
            PACKED_MODE_UNCONFINED => Mode::Unconfined,
            PACKED_MODE_USER => Mode::User,
            m => return Err(ctx(LoadError::new(at, format!("failed to unpack profile flags: unknown mode {m}")))),
        }
    };
    p.audit_all = e.req_u32(None, "profile audit flag").map_err(ctx)? != 0;
    e.need_x(Code::StructEnd, None, "end of profile flags").map_err(ctx)?;
    p.path_flags = e.opt_u32(Some("path_flags"));
    // capabilities: allow, audit, quiet, deprecated; optional upper half
    for i in 0..4 {
        let v = e.req_u32(None, "profile capabilities").map_err(ctx)?;
        p.caps[i] = v as u64;
    }
    if e.name_x(Code::Struct, Some("caps64")) {
        for i in 0..4 {
            let v = e.req_u32(None, "upper profile capabilities").map_err(ctx)?;
            p.caps[i] |= (v as u64) << 32;
        }
        e.need_x(Code::StructEnd, None, "end of caps64").map_err(ctx)?;
    }
    if e.name_x(Code::Struct, Some("capsx")) {
        for _ in 0..2 {
            e.req_u32(None, "extended profile capabilities").map_err(ctx)?;
        }
        e.need_x(Code::StructEnd, None, "end of capsx").map_err(ctx)?;
    }
    unpack_xattrs(e, &mut p).map_err(ctx)?;
    unpack_rlimits(e, &mut p).map_err(ctx)?;
    unpack_secmark(e, &mut p).map_err(ctx)?;
    if e.name_x(Code::Struct, Some("policydb")) {
        let Some(mut pdb) = unpack_pdb(e, true, false).map_err(|x| ctx(x.prefix("failed to unpack policydb")))? else {
            return Err(ctx(e.err("failed to unpack policydb: missing required dfa")));
        };
        // Fixup of the kernel: the file class may be reached from start[0]
        let s = pdb.dfa.next(pdb.start[0], CLASS_FILE as u8);
        if s != 0 {
            pdb.start[CLASS_FILE] = s;
        }
        e.need_x(Code::StructEnd, None, "end of policydb").map_err(ctx)?;
        if pdb.perms.is_empty() {
            pdb.perms = perms::map_policy(&mut pdb.dfa, version);
        }
        p.policy = Some(pdb);
    }
    // file rules
    match unpack_pdb(e, false, true).map_err(ctx)? {
        Some(mut f) => {
            if f.perms.is_empty() {
                f.perms = perms::map_file(&mut f.dfa);
            }
            p.file = Some(f);
            p.file_in_policydb = false;
        }
        None => match &p.policy {
            Some(pol) if pol.start[CLASS_FILE] != 0 => {
                p.file = Some(pol.clone());
                p.file_in_policydb = true;
            }
            _ => p.file = None,
        },
    }
    if e.name_x(Code::Struct, Some("data")) {
        loop {
            let at = e.pos();
            let Some(key) = e.opt_str_bytes(None) else { break };
            let key = String::from_utf8_lossy(key).into_owned();
            let val = e.opt_blob(None).map(|(_, b)| b.to_vec()).unwrap_or_default();
            if p.data.iter().any(|(k, _)| *k == key) {
                return Err(ctx(LoadError::new(at, format!("failed to insert data to table: duplicate key `{key}`"))));
            }
            p.data.push((key, val));
        }
        e.need_x(Code::StructEnd, None, "end of key, value data table").map_err(ctx)?;
    }
    e.need_x(Code::StructEnd, None, "end of profile").map_err(ctx)?;
    Ok(Unpacked { profile: p, ns_name })
}

fn unpack_xattrs(e: &mut Ext<'_>, p: &mut Profile) -> Result<()> {
    if !e.name_x(Code::Struct, Some("xattrs")) {
        return Ok(());
    }
    let n = e.req_array(None, "xattrs array")?;
    for _ in 0..n {
        let s = e.opt_str(None)?.ok_or_else(|| e.err("failed to unpack profile xattrs"))?;
        p.xattrs.push(s);
    }
    e.need_x(Code::ArrayEnd, None, "end of xattrs array")?;
    e.need_x(Code::StructEnd, None, "end of xattrs")
}

fn unpack_rlimits(e: &mut Ext<'_>, p: &mut Profile) -> Result<()> {
    if !e.name_x(Code::Struct, Some("rlimits")) {
        return Ok(());
    }
    let mask = e.req_u32(None, "rlimits mask")?;
    let at = e.pos();
    let n = e.req_array(None, "rlimits array")?;
    if n > RLIM_NLIMITS {
        return Err(LoadError::new(
            at,
            format!("failed to unpack profile rlimits: {n} limits, at most {RLIM_NLIMITS}"),
        ));
    }
    for _ in 0..n {
        let v = e.req_u64(None, "rlimit value")?;
        p.rlimits.push(v);
    }
    p.rlimit_mask = mask;
    e.need_x(Code::ArrayEnd, None, "end of rlimits array")?;
    e.need_x(Code::StructEnd, None, "end of rlimits")
}

fn unpack_secmark(e: &mut Ext<'_>, p: &mut Profile) -> Result<()> {
    if !e.name_x(Code::Struct, Some("secmark")) {
        return Ok(());
    }
    let n = e.req_array(None, "secmark array")?;
    for _ in 0..n {
        e.req_u8(None, "secmark audit")?;
        e.req_u8(None, "secmark deny")?;
        e.opt_str(None)?.ok_or_else(|| e.err("failed to unpack profile secmark rules"))?;
        p.secmarks += 1;
    }
    e.need_x(Code::ArrayEnd, None, "end of secmark array")?;
    e.need_x(Code::StructEnd, None, "end of secmark")
}

/// `unpack_perms_table`: the explicit permission table of ABI v9
/// (parser 4.x); absent in what parser 3.x writes.
fn unpack_perms_table(e: &mut Ext<'_>) -> Result<Option<Vec<Perms>>> {
    if !e.name_x(Code::Struct, Some("perms")) {
        return Ok(None);
    }
    let at = e.pos();
    let version = e.req_u32(Some("version"), "perms version")?;
    if version != 1 {
        return Err(LoadError::new(at, format!("failed to unpack - perms: version {version}, only 1 is known")));
    }
    let n = e.req_array(None, "perms array")?;
    let mut table = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let mut f = [0u32; 14];
        for v in f.iter_mut() {
            *v = e.req_u32(None, "a perms entry")?;
        }
        // unpack_perm reads `allow` twice (the first is the reserved field)
        table.push(Perms {
            allow: f[1],
            deny: f[2],
            subtree: f[3],
            cond: f[4],
            kill: f[5],
            complain: f[6],
            prompt: f[7],
            audit: f[8],
            quiet: f[9],
            hide: f[10],
            xindex: f[11],
            tag: f[12],
            label: f[13],
        });
    }
    e.need_x(Code::ArrayEnd, None, "end of perms array")?;
    e.need_x(Code::StructEnd, None, "end of perms")?;
    Ok(Some(table))
}

/// `unpack_pdb`: an optional DFA, its start states and x-table.
fn unpack_pdb(e: &mut Ext<'_>, required_dfa: bool, required_trans: bool) -> Result<Option<PolicyDb>> {
    let perms = unpack_perms_table(e)?;
    let accept = if perms.is_some() { Accept::One } else { Accept::Both };
    let Some((blob_at, blob)) = e.opt_blob(Some("aadfa")) else {
        if required_dfa {
            return Err(e.err("missing required dfa"));
        }
        return Ok(None);
    };
    // The DFA is 8-byte aligned relative to the stream start (unpack_dfa).
    let end = e.pos();
    let sz = blob_at.wrapping_sub(end & 7);
    let pad = ((sz.wrapping_add(7)) & !7).wrapping_sub(sz);
    if pad > blob.len() {
        return Err(LoadError::new(blob_at, "failed to unpack - dfa: shorter than its alignment"));
    }
    let dfa = Dfa::unpack(&blob[pad..], blob_at + pad, accept)?;
    let mut start = [0u32; CLASS_LAST + 1];
    start[0] = e.opt_u32(Some("start")).unwrap_or(crate::dfa::START);
    start[CLASS_FILE] = e.opt_u32(Some("dfa_start")).unwrap_or(crate::dfa::START);
    let s0 = start[0];
    for (i, s) in start.iter_mut().enumerate().skip(CLASS_FILE + 1) {
        *s = dfa.next(s0, i as u8);
    }
    let at = e.pos();
    let trans = match unpack_trans_table(e) {
        Ok(t) => t,
        Err(m) if required_trans => {
            return Err(LoadError::new(at, format!("failed to unpack profile transition table: {m}")))
        }
        Err(_) => Vec::new(),
    };
    Ok(Some(PolicyDb { dfa, perms: perms.unwrap_or_default(), start, trans }))
}

/// `unpack_trans_table`: the x-table of named exec targets. On failure
/// the position is restored, as in the kernel.
fn unpack_trans_table(e: &mut Ext<'_>) -> std::result::Result<Vec<String>, String> {
    let saved = e.clone();
    let r = (|| {
        if !e.name_x(Code::Struct, Some("xtable")) {
            return Ok(Vec::new());
        }
        let n = e.opt_array(None).ok_or("no array")?;
        let mut table = Vec::with_capacity(n as usize);
        for i in 0..n {
            // (an empty entry passes, as in the kernel: its size counts the NUL)
            let s = e.opt_str_bytes(None).ok_or_else(|| format!("entry {i} is not a string"))?;
            if s.first().is_some_and(|c| c.is_ascii_whitespace()) {
                return Err(format!("entry {i} starts with a space"));
            }
            let nuls: Vec<usize> = s.iter().enumerate().filter(|(_, &c)| c == 0).map(|(j, _)| j).collect();
            let mut s = s.to_vec();
            if s.first() == Some(&b':') {
                if s.get(1).is_none_or(|&c| c == 0) {
                    return Err(format!("entry {i}: nothing after `:`"));
                }
                match nuls.len() {
                    0 => {}
                    1 => s[nuls[0]] = b':',
                    _ => return Err(format!("entry {i}: more than one embedded NUL")),
                }
            } else if !nuls.is_empty() {
                return Err(format!("entry {i}: embedded NUL"));
            }
            table.push(String::from_utf8(s).map_err(|_| format!("entry {i} is not valid text"))?);
        }
        if !e.name_x(Code::ArrayEnd, None) || !e.name_x(Code::StructEnd, None) {
            return Err("no end of array or struct".to_owned());
        }
        Ok(table)
    })();
    if r.is_err() {
        *e = saved;
    }
    r
}

/// `verify_profile`: every accept entry indexes the permission table
/// (`verify_dfa_accept_index`), permission entries are consistent and
/// their x-table indexes in range (`verify_perms`).
fn verify_profile(p: &Profile) -> std::result::Result<(), String> {
    for (what, db) in [("file", p.file.as_ref()), ("policy", p.policy.as_ref())] {
        let Some(db) = db else { continue };
        if db.dfa.accept.iter().any(|&a| a as usize >= db.perms.len()) {
            return Err(format!("Unpack: {what} Invalid named transition (accept index beyond the permission table)"));
        }
    }
    for db in [p.file.as_ref(), p.policy.as_ref(), p.xmatch.as_ref()].into_iter().flatten() {
        for q in &db.perms {
            let ok = q.allow & q.deny == 0
                && q.subtree & !q.allow == 0
                && q.cond & (q.allow | q.deny) == 0
                && q.kill & q.allow == 0
                && q.complain & (q.allow | q.deny) == 0
                && q.prompt & (q.allow | q.deny) == 0
                && q.complain & q.prompt == 0
                && q.hide & q.allow == 0;
            if !ok {
                return Err("Unpack: Invalid perm entry".to_owned());
            }
            if q.xindex & AA_X_TYPE_MASK == AA_X_TABLE && (q.xindex & AA_X_INDEX_MASK) as usize >= db.trans.len() {
                return Err("Unpack: Invalid perm index (x-table)".to_owned());
            }
            if (q.tag != 0 && q.tag as usize >= db.trans.len()) || (q.label != 0 && q.label as usize >= db.trans.len())
            {
                return Err("Unpack: Invalid perm index".to_owned());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dfa::tests::tiny;
    use crate::perms::{letters, MAY_READ};

    /// Writes the tagged stream by hand, as apparmor_parser does.
    #[derive(Default)]
    struct W(Vec<u8>);

    impl W {
        fn name(&mut self, n: &str) -> &mut Self {
            self.0.push(Code::Name as u8);
            self.0.extend_from_slice(&((n.len() + 1) as u16).to_le_bytes());
            self.0.extend_from_slice(n.as_bytes());
            self.0.push(0);
            self
        }
        fn u32(&mut self, v: u32) -> &mut Self {
            self.0.push(Code::U32 as u8);
            self.0.extend_from_slice(&v.to_le_bytes());
            self
        }
        fn string(&mut self, s: &str) -> &mut Self {
            self.0.push(Code::String as u8);
            self.0.extend_from_slice(&((s.len() + 1) as u16).to_le_bytes());
            self.0.extend_from_slice(s.as_bytes());
            self.0.push(0);
            self
        }
        fn code(&mut self, c: Code) -> &mut Self {
            self.0.push(c as u8);
            self
        }
        /// A DFA blob, padded so the kernel's alignment rule finds it.
        fn dfa(&mut self, dfa: &[u8]) -> &mut Self {
            self.name("aadfa");
            self.0.push(Code::Blob as u8);
            let blob_at = self.0.len() + 4;
            let pad = (0..8)
                .find(|&p| {
                    let end = blob_at + p + dfa.len();
                    let sz = blob_at - (end & 7);
                    ((sz + 7) & !7) - sz == p
                })
                .unwrap();
            self.0.extend_from_slice(&((pad + dfa.len()) as u32).to_le_bytes());
            self.0.extend(std::iter::repeat_n(0, pad));
            self.0.extend_from_slice(dfa);
            self
        }
    }

    fn profile(mode: u32) -> Vec<u8> {
        let mut w = W::default();
        w.name("version").u32(5);
        w.name("profile").code(Code::Struct).string("p");
        w.name("flags").code(Code::Struct).u32(0).u32(mode).u32(0).code(Code::StructEnd);
        w.u32(0).u32(0).u32(0).u32(0);
        w.dfa(&tiny(1, 0));
        w.code(Code::StructEnd);
        w.0
    }

    #[test]
    fn a_hand_written_blob_loads_and_decides() {
        let (ps, ns) = unpack(&profile(0)).unwrap();
        assert_eq!(ns, None);
        assert_eq!(ps.len(), 1);
        let p = &ps[0].profile;
        assert_eq!((p.name.as_str(), p.mode, p.abi), ("p", Mode::Enforce, 5));
        let f = p.file.as_ref().unwrap();
        // accept 7 in the owner half: r, w and x; nothing for others
        let s = f.dfa.match_str(f.start[CLASS_FILE], b"aaa");
        assert_eq!(letters(f.lookup(s, true).allow), "rwx");
        assert_eq!(letters(f.lookup(s, false).allow), "-");
        // accept2 9: audit x (0x1) and a (0x8)
        assert_eq!(letters(f.lookup(s, true).audit), "ax");
        assert!(f.lookup(0, true).allow & MAY_READ == 0);
    }

    #[test]
    fn errors_say_what_and_where() {
        let mut b = profile(7);
        let e = unpack(&b).unwrap_err();
        assert!(e.message().contains("unknown mode 7"), "{e}");
        assert_eq!(&b[e.offset()..e.offset() + 5], &[Code::U32 as u8, 7, 0, 0, 0]);
        b = profile(0);
        let v = b.iter().position(|&c| c == 5).unwrap();
        b[v] = 10;
        let e = unpack(&b).unwrap_err();
        assert!(e.message().contains("unsupported interface version 10"), "{e}");
        // every truncation is an error, inside the blob
        let b = profile(0);
        for n in 0..b.len() {
            let e = unpack(&b[..n]).unwrap_err();
            assert!(e.offset() <= n, "{n}: {e}");
        }
    }

    #[test]
    fn fqnames_split_namespaces() {
        assert_eq!(split_fqname(":ns:name"), (Some("ns".to_owned()), "name".to_owned()));
        assert_eq!(split_fqname(":ns://name"), (Some("ns".to_owned()), "name".to_owned()));
        assert_eq!(split_fqname("plain"), (None, "plain".to_owned()));
        assert_eq!(split_fqname(":ns"), (Some("ns".to_owned()), String::new()));
    }
}
