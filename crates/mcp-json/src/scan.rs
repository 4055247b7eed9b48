//! Where a JSON value ends, found without building it: the check `serde_json` makes of a
//! value it skips (an `IgnoredAny`, a `&RawValue`), made sixteen bytes a round inside
//! strings.
//!
//! A large argument is mostly one long string, and `serde_json` skips a string eight
//! bytes a round: reading a 64 KiB argument only to find where it ends was a quarter of
//! the call's work over HTTP. These functions take the string scan of the crate's
//! writer (one branch per sixteen bytes) and accept exactly what `serde_json` accepts when
//! it skips a value: the JSON grammar (RFC 8259) with no limit on nesting (`serde_json`
//! skips iteratively too), a string's `\u` escapes checked for four hex digits but not
//! for surrogate pairs, numbers checked for their grammar but not their range. A test
//! holds them to `serde_json` on generated and mutated inputs.
//!
//! Each function takes the text as bytes and a position, and returns the position just
//! past what it read, or `None` where `serde_json` reports an error; they never panic.
//!
//! ```
//! use mcp_json::scan;
//!
//! let text = br#"{"a": [1, "two\n", {"b": null}], "c": -0.5e3} tail"#;
//! assert_eq!(scan::value_end(text, 0), Some(text.len() - 5));
//! assert_eq!(scan::value_end(br#"{"a": [1, }"#, 0), None);
//! ```

use crate::writer::next_escape;

/// The position of the first byte at or after `at` that is not JSON whitespace (space, tab,
/// line feed, carriage return), or `text.len()`.
#[inline]
pub fn skip_whitespace(text: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = text.get(at) {
        at += 1;
    }
    at
}

/// The end of the string whose opening quote is at `at`: the position past its closing
/// quote.
pub fn string_end(text: &[u8], at: usize) -> Option<usize> {
    if text.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    loop {
        i = next_escape(text, i);
        match *text.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => match *text.get(i + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                b'u' => {
                    let hex = text.get(i + 2..i + 6)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return None;
                    }
                    i += 6;
                }
                _ => return None,
            },
            // A control character, which a string must escape.
            _ => return None,
        }
    }
}

/// The end of the value that starts at `at` (after any whitespace): the position past
/// its last byte.
pub fn value_end(text: &[u8], at: usize) -> Option<usize> {
    // The containers open around the current value; `true` for an object.
    let mut open: Vec<bool> = Vec::new();
    let mut at = at;
    loop {
        at = skip_whitespace(text, at);
        match *text.get(at)? {
            b'"' => at = string_end(text, at)?,
            c @ (b'{' | b'[') => {
                let object = c == b'{';
                at = skip_whitespace(text, at + 1);
                if text.get(at) == Some(if object { &b'}' } else { &b']' }) {
                    at += 1;
                } else {
                    open.push(object);
                    if object {
                        at = after_key(text, at)?;
                    }
                    continue;
                }
            }
            b't' => at = literal(text, at, b"true")?,
            b'f' => at = literal(text, at, b"false")?,
            b'n' => at = literal(text, at, b"null")?,
            b'-' | b'0'..=b'9' => at = number_end(text, at)?,
            _ => return None,
        }
        // A value ended: close what it ends, or go on to the next member.
        loop {
            let Some(&object) = open.last() else {
                return Some(at);
            };
            at = skip_whitespace(text, at);
            match *text.get(at)? {
                b',' => {
                    at += 1;
                    if object {
                        at = after_key(text, skip_whitespace(text, at))?;
                    }
                    break;
                }
                b'}' if object => {
                    at += 1;
                    open.pop();
                }
                b']' if !object => {
                    at += 1;
                    open.pop();
                }
                _ => return None,
            }
        }
    }
}

/// A member's key at `at` and its colon: the position past the colon.
fn after_key(text: &[u8], at: usize) -> Option<usize> {
    let at = skip_whitespace(text, string_end(text, at)?);
    (text.get(at) == Some(&b':')).then_some(at + 1)
}

fn literal(text: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    let end = at + word.len();
    (text.get(at..end) == Some(word)).then_some(end)
}

/// The end of the number at `at`: `-`? (`0` | a nonzero digit and digits), then an
/// optional fraction and exponent, each with at least one digit.
fn number_end(text: &[u8], at: usize) -> Option<usize> {
    let digits = |mut i: usize| {
        while let Some(b'0'..=b'9') = text.get(i) {
            i += 1;
        }
        i
    };
    let mut i = at + usize::from(text.get(at) == Some(&b'-'));
    match text.get(i)? {
        b'0' => {
            i += 1;
            if let Some(b'0'..=b'9') = text.get(i) {
                return None;
            }
        }
        b'1'..=b'9' => i = digits(i + 1),
        _ => return None,
    }
    if text.get(i) == Some(&b'.') {
        let start = i + 1;
        i = digits(start);
        if i == start {
            return None;
        }
    }
    if let Some(b'e' | b'E') = text.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = text.get(i) {
            i += 1;
        }
        let start = i;
        i = digits(start);
        if i == start {
            return None;
        }
    }
    Some(i)
}
