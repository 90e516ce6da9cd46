//! Feeds arbitrary bytes, as one fanotify `read` would return them, to
//! the daemon's record parser, with descriptor numbers kept as numbers
//! (owning them would close the fuzzer's own descriptors). Besides never
//! panicking: the numbers events hold were taken, in order; an error
//! points inside the buffer, after the records of the events it kept;
//! and the events parsed, written back in the kernel's record layout,
//! parse to the same events.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart_enforce::testing::{parse_with, PermEvent};

const METADATA_LEN: usize = 24;

/// `events` in the layout of `struct fanotify_event_metadata`
/// (include/uapi/linux/fanotify.h).
fn encode(events: &[PermEvent<i32>]) -> Vec<u8> {
    let mut out = Vec::new();
    for e in events {
        out.extend_from_slice(&(METADATA_LEN as u32).to_ne_bytes());
        out.extend_from_slice(&[libc::FANOTIFY_METADATA_VERSION, 0]);
        out.extend_from_slice(&(METADATA_LEN as u16).to_ne_bytes());
        out.extend_from_slice(&e.mask.to_ne_bytes());
        out.extend_from_slice(&e.fd.to_ne_bytes());
        out.extend_from_slice(&(e.pid as i32).to_ne_bytes());
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let mut taken = Vec::new();
    let mut events = Vec::new();
    let result = parse_with(data, &mut events, |n| {
        assert!(n >= 0, "took the negative number {n}");
        taken.push(n);
        n
    });
    for e in &events {
        assert!(e.fd >= 0 && i32::try_from(e.pid).is_ok(), "{e:?} has no object or no process");
    }
    if let Err(e) = &result {
        assert!(e.offset < data.len(), "error at {} of {} bytes: {e}", e.offset, data.len());
        assert!(e.offset >= events.len() * METADATA_LEN, "error at {} after {} events", e.offset, events.len());
    }
    // The numbers events hold were taken, in record order (dropped
    // records may have had theirs taken in between).
    let held = events.iter().map(|e| e.fd);
    let mut rest = taken.iter();
    for n in held {
        assert!(rest.any(|t| *t == n), "{n} is held but was not taken in order: {taken:?}");
    }
    let again_bytes = encode(&events);
    let mut again = Vec::new();
    parse_with(&again_bytes, &mut again, |n| n).expect("written-back records parse");
    assert_eq!(again, events, "events do not survive being written back");
});
