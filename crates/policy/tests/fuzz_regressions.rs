//! The reader never panics, hangs or trusts a count on bad input.
//!
//! * Every file of the fuzz corpus (`fuzz/corpus/policy_reader/`) and every
//!   input in `tests/data/fuzz_regressions/` (fuzzer finds and hand-made
//!   inputs for bugs found by review) reads without panicking, with the
//!   outcome recorded in `REGRESSIONS`.
//! * A deterministic mutation test over the smallest seed policy (and the
//!   seed with every section): every truncation is an error that says so
//!   and points inside the file; bit flips, extreme bytes and extreme
//!   32-bit fields never panic, and whatever loads survives the calls the
//!   fuzz target makes.
//! * Every error's `Display` names its section and byte offset.
//! * Duplicate names are refused, and duplicate checks are not quadratic.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use rampart_policy::*;

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn corpus_dir() -> PathBuf {
    manifest_dir().join("../../fuzz/corpus/policy_reader")
}

fn regressions_dir() -> PathBuf {
    manifest_dir().join("tests/data/fuzz_regressions")
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().and_then(|e| e.to_str()) != Some("md"))
        .collect();
    out.sort();
    out
}

/// What the fuzz target does: load, and on success use the policy.
/// Returns the load result; panics propagate to the caller.
fn read_and_use(bytes: &[u8]) -> Result<Policy, PolicyError> {
    let p = Policy::from_bytes(bytes)?;
    let bools = Booleans::defaults(&p);
    let user = p.users.first().map_or("u", |u| u.name.as_str());
    let ty = p.types.iter().find(|t| !t.attribute).map_or("t", |t| t.name.as_str());
    let level = if p.mls { p.sens.first().map_or(":s0".to_owned(), |s| format!(":{}", s.name)) } else { String::new() };
    let mut contexts: Vec<Context> = p.ocontexts.initial_sids.iter().map(|(_, c)| c.clone()).take(3).collect();
    contexts.extend(p.parse_context(&format!("{user}:object_r:{ty}{level}")).ok());
    let name = p.filename_trans.first().map(|f| f.name.as_str());
    for s in &contexts {
        assert!(p.context_is_valid(s), "a context the reader accepted is invalid");
        let text = p.context_to_string(s);
        // Contexts in the file may name an attribute (as in libsepol);
        // context strings may not. Without MLS, the file may still hold a
        // range (a corrupted MLS flag), which the string does not show.
        if !p.types[s.ty.index()].attribute {
            let back = p.parse_context(&text).unwrap_or_else(|e| panic!("`{text}` does not read back: {e}"));
            assert_eq!((back.user, back.role, back.ty), (s.user, s.role, s.ty), "`{text}` does not read back");
            assert!(!p.mls || back == *s, "`{text}` does not read back");
        }
        for t in &contexts {
            for class in 0..=p.classes.len().min(4) as u32 {
                let d = p.compute_av(&bools, s, t, ClassId(class));
                let _ = p.av_to_names(ClassId(class), d.allowed);
                for kind in [CreateKind::Transition, CreateKind::Member, CreateKind::Change] {
                    if let Ok(c) = p.compute_create(&bools, s, t, ClassId(class), kind, name) {
                        assert!(p.context_is_valid(&c));
                    }
                }
            }
        }
    }
    Ok(p)
}

/// Reads `bytes`, turning a panic into a test failure that names `what`.
fn no_panic(bytes: &[u8], what: &dyn Fn() -> String) -> Result<Policy, PolicyError> {
    match catch_unwind(AssertUnwindSafe(|| read_and_use(bytes))) {
        Ok(r) => r,
        Err(e) => {
            let msg = e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()));
            panic!("{}: the reader panicked: {}", what(), msg.unwrap_or_default())
        }
    }
}

/// An error's `Display` names its section and offset.
fn assert_error_located(e: &PolicyError, what: &dyn Fn() -> String) {
    let shown = e.to_string();
    assert!(!e.section().is_empty(), "{}: error without a section: {shown}", what());
    assert!(shown.contains(&format!("section `{}`", e.section())), "{}: {shown}", what());
    assert!(shown.contains(&format!("byte offset {}", e.offset())), "{}: {shown}", what());
    assert!(shown.contains(e.message()), "{}: {shown}", what());
}

#[test]
fn fuzz_corpus_reads_without_panic() {
    let files = files_in(&corpus_dir());
    assert!(!files.is_empty(), "no fuzz corpus in {}", corpus_dir().display());
    let mut seeds = 0;
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let what = || path.display().to_string();
        let r = no_panic(&bytes, &what);
        // The committed seeds are policies compiled by checkpolicy
        // (`NAME.VERSION`); anything else is what a local fuzz run added.
        let is_seed = path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.parse::<u32>().is_ok());
        match r {
            Ok(_) => {}
            Err(e) if is_seed => panic!("{}: a seed policy does not load: {e}", what()),
            Err(e) => assert_error_located(&e, &what),
        }
        seeds += usize::from(is_seed);
    }
    assert!(seeds >= 8, "expected the compiled seed policies in the fuzz corpus");
}

/// Expected outcome of each file in `tests/data/fuzz_regressions/`:
/// `None` for "loads", `Some(section)` for "refused, in that section".
const REGRESSIONS: &[(&str, Option<&str>)] = &[
    // minimal.33 with the avtab count set to 0xffffffff: refused before
    // any allocation sized by the count.
    ("avtab_count_4g.bin", Some("avtab")),
    // minimal.33 with the conditional count set to 0x7fffffff.
    ("cond_count_2g.bin", Some("conditional rules")),
    // full_mls.33 with type tmp_t renamed etc_t: two types of one name
    // (accepted before, while the kernel refuses it).
    ("duplicate_type_name.bin", Some("symbol values")),
];

#[test]
fn fuzz_regressions_read_as_expected() {
    for path in files_in(&regressions_dir()) {
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let Some(&(_, expected)) = REGRESSIONS.iter().find(|(n, _)| *n == name) else {
            panic!("{name}: add its expected outcome to REGRESSIONS in {}", file!());
        };
        let bytes = std::fs::read(&path).unwrap();
        let what = || name.clone();
        match (no_panic(&bytes, &what), expected) {
            (Ok(_), None) => {}
            (Err(e), Some(section)) => {
                assert_error_located(&e, &what);
                assert_eq!(e.section(), section, "{name}: {e}");
            }
            (Ok(_), Some(section)) => panic!("{name}: loaded, expected an error in section `{section}`"),
            (Err(e), None) => panic!("{name}: expected to load: {e}"),
        }
    }
    for (name, _) in REGRESSIONS {
        assert!(regressions_dir().join(name).is_file(), "{name} listed in REGRESSIONS but missing");
    }
}

/// The smallest committed seed policy.
fn smallest_seed() -> (PathBuf, Vec<u8>) {
    let path = files_in(&corpus_dir())
        .into_iter()
        .filter(|p| p.extension().and_then(|e| e.to_str()).is_some_and(|e| e.parse::<u32>().is_ok()))
        .min_by_key(|p| (std::fs::metadata(p).unwrap().len(), p.clone()))
        .unwrap();
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

fn seed(name: &str) -> (PathBuf, Vec<u8>) {
    let path = corpus_dir().join(name);
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

/// Every proper prefix of `bytes` is refused as truncated, at an offset
/// inside the prefix.
fn check_truncations(path: &Path, bytes: &[u8]) {
    assert!(Policy::from_bytes(bytes).is_ok(), "{}", path.display());
    for len in 0..bytes.len() {
        let what = || format!("{} truncated to {len} bytes", path.display());
        let e = match no_panic(&bytes[..len], &what) {
            Ok(_) => panic!("{}: loaded", what()),
            Err(e) => e,
        };
        assert_error_located(&e, &what);
        assert!(e.offset() <= len, "{}: error at offset {} beyond the end: {e}", what(), e.offset());
        assert!(e.message().contains("truncated"), "{}: {e}", what());
    }
}

#[test]
fn every_truncation_is_a_located_error() {
    let (path, bytes) = smallest_seed();
    check_truncations(&path, &bytes);
    let (path, bytes) = seed("full_mls.33");
    check_truncations(&path, &bytes);
}

/// Flips every bit, and sets every byte and every aligned 32-bit field to
/// extreme values: the reader never panics, and what it refuses it
/// locates. Returns how many mutants loaded and how many were refused.
fn check_corruptions(path: &Path, bytes: &[u8], bits: &[u32], values: &[u8]) -> (usize, usize) {
    let mut loaded = 0usize;
    let mut refused = 0usize;
    let mut buf = bytes.to_vec();
    let mut try_one = |buf: &[u8], what: &dyn Fn() -> String| match no_panic(buf, what) {
        Ok(_) => loaded += 1,
        Err(e) => {
            assert_error_located(&e, what);
            assert!(e.offset() <= buf.len(), "{}: {e}", what());
            refused += 1;
        }
    };
    for at in 0..bytes.len() {
        for &bit in bits {
            buf[at] ^= 1 << bit;
            try_one(&buf, &|| format!("{}: bit {bit} of byte {at} flipped", path.display()));
            buf[at] = bytes[at];
        }
        for &v in values {
            buf[at] = v;
            try_one(&buf, &|| format!("{}: byte {at} set to {v:#04x}", path.display()));
            buf[at] = bytes[at];
        }
        if at % 4 == 0 && at + 4 <= bytes.len() {
            for v in [u32::MAX, 0x7fff_ffff, 0x8000_0000, 0x0001_0000, 0] {
                buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
                try_one(&buf, &|| format!("{}: word at {at} set to {v:#x}", path.display()));
                buf[at..at + 4].copy_from_slice(&bytes[at..at + 4]);
            }
        }
    }
    (loaded, refused)
}

#[test]
fn corrupted_bytes_never_panic() {
    let (path, bytes) = smallest_seed();
    let (loaded, refused) = check_corruptions(&path, &bytes, &[0, 1, 2, 3, 4, 5, 6, 7], &[0xff, 0x00, 0x80, 0x7f]);
    assert!(refused > bytes.len() && loaded > 0, "{refused} corruptions refused, {loaded} loaded");
    // Appended bytes are trailing garbage.
    let mut long = bytes.clone();
    long.extend_from_slice(&[0, 0, 0, 0]);
    let e = no_panic(&long, &|| "4 bytes appended".into()).err().unwrap();
    assert!(e.message().contains("trailing"), "{e}");
}

/// The same over the seed that has every section, with fewer mutations
/// per byte to stay fast in debug builds.
#[test]
fn corrupted_full_policy_never_panics() {
    let (path, bytes) = seed("full_mls.33");
    let (loaded, refused) = check_corruptions(&path, &bytes, &[0, 1, 7], &[0xff]);
    assert!(refused > bytes.len() && loaded > 0, "{refused} corruptions refused, {loaded} loaded");
}

/// Two symbols of one kind with the same name are refused, as by the
/// kernel (its symbol tables are hash tables keyed by name).
#[test]
fn duplicate_names_are_refused() {
    let (_, bytes) = seed("full_mls.33");
    // Same-length renames only: lengths are stored before names.
    for (from, to, kind) in [("tmp_t", "etc_t", "type"), ("tcp_socket", "filesystem", "class")] {
        let mut b = bytes.clone();
        let at = find(&b, from.as_bytes());
        b[at..at + from.len()].copy_from_slice(to.as_bytes());
        let e = Policy::from_bytes(&b).unwrap_err();
        assert!(e.message().contains(&format!("duplicate {kind} `{to}`")), "{e}");
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> usize {
    haystack.windows(needle.len()).position(|w| w == needle).unwrap()
}

/// `minimal.33` with its (empty) genfs section replaced by `genfs`: the
/// section sits before the range transition count and the type attribute
/// map (two types, 24 bytes each).
fn minimal_with_genfs(genfs: &[u8]) -> Vec<u8> {
    let bytes = std::fs::read(manifest_dir().join("tests/data/minimal.33")).unwrap();
    let at = bytes.len() - 2 * 24 - 4 - 4;
    assert_eq!(bytes[at..at + 8], [0; 8], "minimal.33 changed: genfs count not found");
    let mut out = bytes[..at].to_vec();
    out.extend_from_slice(genfs);
    out.extend_from_slice(&bytes[at + 4..]);
    out
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len() as u32);
    out.extend_from_slice(s.as_bytes());
}

/// `system_u:object_r:file_t` without MLS, as stored.
fn put_context(out: &mut Vec<u8>) {
    for v in [1, 1, 2, 1, 0, 64, 0, 0] {
        put_u32(out, v);
    }
}

/// Duplicate checks over many genfs filesystems and entries are not
/// quadratic: a file of a few hundred KB reads in well under a second.
#[test]
fn many_genfs_entries_read_in_linear_time() {
    const N: u32 = 20_000;
    let mut genfs = Vec::new();
    put_u32(&mut genfs, N + 1);
    for i in 0..N {
        put_str(&mut genfs, &format!("fs{i}"));
        put_u32(&mut genfs, 0);
    }
    put_str(&mut genfs, "big");
    put_u32(&mut genfs, N);
    for i in 0..N {
        put_str(&mut genfs, &format!("/p{i}"));
        put_u32(&mut genfs, i % 3);
        put_context(&mut genfs);
    }
    let bytes = minimal_with_genfs(&genfs);
    let start = std::time::Instant::now();
    let p = Policy::from_bytes(&bytes).unwrap();
    assert_eq!(p.genfs.len() as u32, N + 1);
    assert_eq!(p.genfs[N as usize].entries.len() as u32, N);
    println!("{} genfs bytes read in {:?}", genfs.len(), start.elapsed());

    // Duplicates are still refused: same filesystem, or same path with
    // the same class or with class 0 (any) on either side.
    let dup = |entries: &[(&str, u32)]| {
        let mut g = Vec::new();
        put_u32(&mut g, 1);
        put_str(&mut g, "proc");
        put_u32(&mut g, entries.len() as u32);
        for (path, class) in entries {
            put_str(&mut g, path);
            put_u32(&mut g, *class);
            put_context(&mut g);
        }
        Policy::from_bytes(&minimal_with_genfs(&g))
    };
    assert!(dup(&[("/a", 1), ("/a", 2), ("/b", 0)]).is_ok());
    for bad in [&[("/a", 1), ("/a", 1)][..], &[("/a", 1), ("/a", 0)], &[("/a", 0), ("/a", 2)]] {
        let e = dup(bad).unwrap_err();
        assert!(e.message().contains("duplicate genfs entry") && e.section() == "genfs contexts", "{bad:?}: {e}");
    }
    let mut g = Vec::new();
    put_u32(&mut g, 2);
    for _ in 0..2 {
        put_str(&mut g, "proc");
        put_u32(&mut g, 0);
    }
    let e = Policy::from_bytes(&minimal_with_genfs(&g)).unwrap_err();
    assert!(e.message().contains("duplicate genfs filesystem"), "{e}");
}
