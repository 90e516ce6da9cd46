//! Feeds arbitrary bytes to the control socket's parsers (the daemon's
//! request parser, the client's reply parser and the line reader both
//! share). None may panic; whatever parses must survive a round trip
//! through its own wire form, and the line reader never returns a line
//! longer than its limit nor anything but the input's own lines.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart_enforce::testing::{parse_request, LineReader};
use rampart_enforce::Reply;

fn without_newline(mut line: Vec<u8>) -> Vec<u8> {
    assert_eq!(line.pop(), Some(b'\n'), "a wire line ends with a newline");
    line
}

fuzz_target!(|data: &[u8]| {
    if let Ok(request) = parse_request(data) {
        let line = request.to_line().map(without_newline);
        let again = line.as_deref().map(parse_request);
        assert!(matches!(again, Ok(Ok(ref r)) if *r == request), "{request:?} does not round-trip: {again:?}");
    }
    if let Ok(reply) = Reply::parse(data) {
        let line = without_newline(reply.to_line());
        let again = Reply::parse(&line);
        assert!(matches!(again, Ok(ref r) if *r == reply), "{reply:?} does not round-trip: {again:?}");
    }
    const LIMIT: usize = 64;
    let mut reader = LineReader::new(LIMIT);
    let mut input = data;
    let mut consumed = Vec::new();
    for _ in 0..data.len() + 1 {
        match reader.read_line(&mut input) {
            Ok(Some(line)) => {
                assert!(line.len() <= LIMIT, "a {}-byte line passed the {LIMIT}-byte limit", line.len());
                consumed.extend_from_slice(&line);
                consumed.push(b'\n');
            }
            Ok(None) | Err(_) => break,
        }
    }
    assert!(data.starts_with(&consumed), "the lines read are not the input's lines");
});
