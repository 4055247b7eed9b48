//! `json_writer`: the outgoing-message writer `mcp_json` against `serde_json`.
//!
//! The input is parsed as JSON (any value; the `message` target's corpus is all JSON);
//! when it parses, both writers must write the same bytes, and `json::to_raw_value` the
//! same text. Whatever the input, its UTF-8 text as one string must be escaped the same
//! way by both (the eight-bytes-at-a-time escape scan against `serde_json`'s table).

use mcp_json as json;

/// One input: see the module docs.
pub fn run(input: &[u8]) {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(input) {
        let ours = json::to_string(&value).expect("a value always serializes");
        let theirs = serde_json::to_string(&value).expect("a value always serializes");
        assert_eq!(ours, theirs, "the writers differ on a value");
        let raw = json::to_raw_value(&value).expect("a value always serializes");
        assert_eq!(raw.get(), theirs, "the raw value differs");
    }
    let text = String::from_utf8_lossy(input);
    let ours = json::to_string(&*text).expect("a string always serializes");
    let theirs = serde_json::to_string(&*text).expect("a string always serializes");
    assert_eq!(ours, theirs, "the writers escape a string differently");
}
