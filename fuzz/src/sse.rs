//! `sse`: the client's `text/event-stream` parser, fed arbitrary bytes in arbitrary
//! chunks.
//!
//! The input's first byte picks the mode (raw or message) and how many of the next bytes
//! are chunk sizes (0 to 15, each 1 to 256, used in turn); the rest is the body. Checks:
//! nothing panics; the events, and whether the stream was abandoned for an oversized
//! event, do not depend on how the body was split (one chunk is the reference); no
//! event's data exceeds the bound; after an oversized event nothing more is parsed.

use mcp_transport_http::fuzzing::{Sse, TooLarge};

/// The bound on one event: small, so that oversized events are common.
const MAX_EVENT: usize = 256;

type Events = Vec<(String, Vec<u8>, Option<String>)>;

fn parse(body: &[u8], sizes: &[usize], raw: bool) -> (Events, Result<(), TooLarge>) {
    let mut parser = Sse::new(MAX_EVENT, raw);
    let mut events = Vec::new();
    let mut rest = body;
    let mut turn = 0;
    while !rest.is_empty() {
        let size = sizes
            .get(turn % sizes.len().max(1))
            .copied()
            .unwrap_or(rest.len());
        turn += 1;
        let (chunk, tail) = rest.split_at(size.min(rest.len()));
        rest = tail;
        let fed = parser.feed(chunk);
        events.extend(parser.take());
        if fed.is_err() {
            return (events, fed);
        }
    }
    (events, Ok(()))
}

/// One input: see the module docs.
pub fn run(input: &[u8]) {
    let Some((&first, rest)) = input.split_first() else {
        return;
    };
    let raw = first & 0x80 != 0;
    let (sizes, body) = rest.split_at(usize::from(first & 0x0f).min(rest.len()));
    let sizes: Vec<usize> = sizes.iter().map(|&s| usize::from(s) + 1).collect();

    let (whole, whole_end) = parse(body, &[], raw);
    let (split, split_end) = parse(body, &sizes, raw);
    // The bound is on the bytes read. Raw mode decodes an event's data as UTF-8 with
    // replacement, as the WHATWG parsing rules say, and a replaced byte takes up to three
    // (U+FFFD), so what it delivers may be up to three times the bound.
    let delivered = if raw { 3 * MAX_EVENT } else { MAX_EVENT };
    for (_, data, _) in &whole {
        assert!(
            data.len() <= delivered,
            "an event beyond the bound was delivered"
        );
    }
    assert_eq!(whole_end, split_end, "abandoning depends on chunking");
    assert_eq!(whole, split, "events depend on chunking");
}
