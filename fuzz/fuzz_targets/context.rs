//! Feeds arbitrary text to the context parser of a real MLS policy (the
//! checkpolicy-compiled `full_mls.33` test policy). Parsing must never
//! panic, and a context that parses must print back to text that parses
//! to the same context (what `rampart run --context` and the audit lines
//! rely on).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rampart_policy::Policy;

const POLICY: &[u8] = include_bytes!("../../crates/policy/tests/data/full_mls.33");

fn policy() -> Option<&'static Policy> {
    static P: OnceLock<Option<Policy>> = OnceLock::new();
    P.get_or_init(|| Policy::from_bytes(POLICY).ok()).as_ref()
}

fuzz_target!(|data: &[u8]| {
    let Some(p) = policy() else { panic!("full_mls.33 no longer loads") };
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(context) = p.parse_context(text) else { return };
    let printed = p.context_to_string(&context);
    match p.parse_context(&printed) {
        Ok(again) => assert_eq!(again, context, "{text:?} printed as {printed:?} parses differently"),
        Err(e) => panic!("{text:?} parsed, but its printed form {printed:?} does not: {e}"),
    }
});
