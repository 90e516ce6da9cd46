//! Feeds arbitrary bytes to the file_contexts loader as a whole file
//! (line syntax, file types, the PCRE-to-`regex` translation, the lookup
//! index) and looks paths up in what loads. Nothing may panic, every
//! spec that loads must compile (loading promises it; lookups compile
//! lazily), and the index must never lose a spec: a path written literally in a spec
//! (letters, digits, `/`, `_` and `-` only, so the regex matches exactly
//! that path) always finds a spec, as in libselinux where the last
//! matching spec wins and that one matches.
#![no_main]

use std::path::PathBuf;

use libfuzzer_sys::fuzz_target;
use rampart_label::{normalize, FileContexts, FileType, SpecFiles};

fn scratch_file() -> PathBuf {
    std::env::temp_dir().join(format!("rampart-fuzz-file_contexts.{}", std::process::id()))
}

fn is_literal_path(regex: &str) -> bool {
    regex.starts_with('/') && regex.bytes().all(|b| b.is_ascii_alphanumeric() || b"/_-".contains(&b))
}

fuzz_target!(|data: &[u8]| {
    let path = scratch_file();
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let loaded = FileContexts::load_unvalidated(&SpecFiles::from_base(&path).base_only());
    let Ok(fc) = loaded else { return };
    if let Some((spec, why)) = fc.uncompilable().first() {
        panic!("{:?} loaded but its translation does not compile: {why}", spec.regex);
    }
    for spec in fc.specs() {
        let key = spec.regex.as_bytes();
        let found = fc.lookup(key, spec.file_type);
        if is_literal_path(&spec.regex) && normalize(key).as_ref() == key {
            assert!(found.spec().is_some(), "{:?} ({:?}) matches no spec: {:?}", spec.regex, spec.file_type, found);
        }
        let _ = fc.lookup(key, None);
    }
    for file_type in [FileType::Regular, FileType::Directory, FileType::Symlink] {
        let _ = fc.contexts_for(file_type).count();
        let _ = fc.lookup(b"/", Some(file_type));
        let _ = fc.lookup(b"/usr/bin/true", Some(file_type));
    }
});
