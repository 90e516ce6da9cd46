//! Bad bytes: every truncation and many byte changes of real compiled
//! policies (ABI v5, and v7 with diff-encoded DFAs) must load or fail
//! with an error inside the blob, never panic; and specific damage gets
//! the kernel's answer. Needs apparmor_parser (scripts/install-deps.sh).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
mod common;

use rampart_apparmor::Policy;

fn compile(features_v7: bool, tag: &str) -> Vec<u8> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/semantics.profile");
    let dir = std::env::temp_dir().join(format!("rampart-aa-corrupt-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(if features_v7 { "v7.bin" } else { "v5.bin" });
    let features = dir.join("features");
    if features_v7 {
        let s = std::fs::read_to_string("/etc/apparmor.d/abi/3.0").unwrap();
        let s = s.replacen("policy {set_load {yes\n}\n", "policy {set_load {yes\n}\ndiff_encode {yes\n}\n", 1);
        std::fs::write(&features, s).unwrap();
        common::apparmor_parser(&src, &out, &["--features-file".as_ref(), features.as_os_str()]);
    } else {
        common::apparmor_parser(&src, &out, &[]);
    }
    std::fs::read(out).unwrap()
}

fn check(bytes: &[u8]) {
    if let Err(e) = Policy::new().load(bytes) {
        assert!(e.offset() <= bytes.len(), "offset {} beyond {} bytes: {e}", e.offset(), bytes.len());
        assert!(!e.message().is_empty());
    }
}

#[test]
#[ignore = "needs apparmor_parser: compiles the profiles"]
fn truncations_and_byte_changes_never_panic() {
    for v7 in [false, true] {
        let blob = compile(v7, "all");
        assert!(Policy::new().load(&blob).is_ok());
        for n in 0..blob.len() {
            check(&blob[..n]);
        }
        let mut rng: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 0..blob.len() {
            for delta in [1u8, 0x80] {
                let mut b = blob.clone();
                b[i] = b[i].wrapping_add(delta);
                check(&b);
            }
            // and a random second change somewhere
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let mut b = blob.clone();
            b[i] ^= 0x5a;
            let j = (rng % blob.len() as u64) as usize;
            b[j] = (rng >> 32) as u8;
            check(&b);
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).position(|w| w == needle).unwrap()
}

#[test]
#[ignore = "needs apparmor_parser: compiles the profiles"]
fn specific_damage_gets_the_kernels_answer() {
    let blob = compile(false, "specific");
    // the ABI version: 4 is older than the kernel accepts
    let mut b = blob.clone();
    let v = find(&b, b"version\0") + 9;
    b[v] = 4;
    let e = Policy::new().load(&b).unwrap_err();
    assert!(e.message().contains("unsupported interface version 4"), "{e}");
    // FORCE_COMPLAIN_FLAG in a header's version puts the profiles read
    // under it in complain mode, whatever their own flags
    let mut b = blob.clone();
    let mut at = 0;
    while let Some(i) = b[at..].windows(8).position(|w| w == b"version\0") {
        b[at + i + 10] |= 0x08;
        at += i + 8;
    }
    let p = {
        let mut p = Policy::new();
        p.load(&b).unwrap();
        p
    };
    assert!(p.profiles().all(|(_, q)| q.mode == rampart_apparmor::Mode::Complain));
    // a DFA magic
    let mut b = blob.clone();
    let m = find(&b, &[0x1b, 0x5e, 0x78, 0x3d]);
    b[m] = 0;
    let e = Policy::new().load(&b).unwrap_err();
    assert!(e.message().contains("bad magic") && e.offset() == m, "{e}");
    // trailing garbage is another (invalid) profile
    let mut b = blob.clone();
    b.push(7);
    assert!(Policy::new().load(&b).is_err());
    // an empty blob
    assert!(Policy::new().load(&[]).is_err());
}
