//! `json_scan`: `mcp_json::scan` (where a JSON value ends, which HTTP's header check
//! reads the params with) against `serde_json`.
//!
//! For UTF-8 input: the scan accepts the text as one value followed by whitespace exactly
//! when `serde_json` reads it as an `IgnoredAny`, and then the value's span is the one a
//! `&RawValue` borrows. For any input and any starting position: no panic, and an end
//! within the input.

use mcp_json::scan;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

/// One input: see the module docs.
pub fn run(input: &[u8]) {
    for at in [0, input.len() / 2, input.len()] {
        if let Some(end) = scan::value_end(input, at) {
            assert!(end <= input.len() && end > at, "an end outside the input");
        }
    }
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    let ours =
        scan::value_end(input, 0).filter(|&end| scan::skip_whitespace(input, end) == input.len());
    let theirs = serde_json::from_str::<IgnoredAny>(text);
    assert_eq!(
        ours.is_some(),
        theirs.is_ok(),
        "scan {ours:?}, serde_json {theirs:?}"
    );
    if let Some(end) = ours {
        let raw: &RawValue = serde_json::from_str(text).expect("serde_json read it");
        assert_eq!(
            raw.get(),
            &text[scan::skip_whitespace(input, 0)..end],
            "the span differs"
        );
    }
}
