//! `mcp_json::scan` held to `serde_json`: on generated JSON and on mutations of it, a
//! text is accepted by `value_end` (followed by whitespace only) exactly when `serde_json`
//! reads it as an `IgnoredAny`, and the value's span is the one a `&RawValue` borrows.

use mcp_json::scan;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

/// A small deterministic generator (xorshift64*), so that a failure repeats.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap()
    }
}

const PIECES: &[&str] = &[
    "\"", "\\", "\\u", "\\u00e9", "\\ud800", "\\x", "0", "01", "-", "-0", "1.", ".5", "e", "E+",
    "1e5", "{", "}", "[", "]", ",", ":", " ", "\n", "\t", "\u{1}", "\u{1f}", "a", "é", "null",
    "nul", "true", "fals", "\"k\":", "\u{7f}", "\u{2028}", "\r",
];

/// A random JSON value, `depth` levels deep at most, with some whitespace in it.
fn value(rng: &mut Rng, depth: usize, out: &mut String) {
    let ws = |rng: &mut Rng, out: &mut String| {
        for _ in 0..rng.below(3) {
            out.push([' ', '\n', '\t', '\r'][rng.below(4)]);
        }
    };
    ws(rng, out);
    match rng.below(if depth == 0 { 5 } else { 7 }) {
        0 => out.push_str(["null", "true", "false"][rng.below(3)]),
        1 => {
            let number = ["0", "-0", "12", "-3.25", "1e9", "2E-3", "0.5e+7", "-19.0"];
            out.push_str(number[rng.below(number.len())]);
        }
        2 | 3 => {
            out.push('"');
            for _ in 0..rng.below(40) {
                let piece = [
                    "a",
                    "é",
                    "€",
                    "😀",
                    "\\n",
                    "\\\"",
                    "\\\\",
                    "\\/",
                    "\\u0041",
                    "\\uD83D\\uDE00",
                    "\\ud800",
                    "x y",
                    "0123456789abcdef",
                ][rng.below(13)];
                out.push_str(piece);
            }
            out.push('"');
        }
        4 => out.push_str(["7", "77", "1234567890"][rng.below(3)]),
        5 => {
            out.push('[');
            for i in 0..rng.below(4) {
                if i > 0 {
                    out.push(',');
                }
                value(rng, depth - 1, out);
            }
            ws(rng, out);
            out.push(']');
        }
        _ => {
            out.push('{');
            for i in 0..rng.below(4) {
                if i > 0 {
                    out.push(',');
                }
                ws(rng, out);
                out.push_str(["\"k\"", "\"_meta\"", "\"\\u005f\"", "\"\""][rng.below(4)]);
                ws(rng, out);
                out.push(':');
                value(rng, depth - 1, out);
            }
            ws(rng, out);
            out.push('}');
        }
    }
    ws(rng, out);
}

/// Checks one text against `serde_json`.
fn agree(text: &str) {
    let bytes = text.as_bytes();
    let ours =
        scan::value_end(bytes, 0).filter(|&end| scan::skip_whitespace(bytes, end) == bytes.len());
    let theirs = serde_json::from_str::<IgnoredAny>(text);
    assert_eq!(
        ours.is_some(),
        theirs.is_ok(),
        "{text:?}: scan {ours:?}, serde_json {theirs:?}"
    );
    if let Some(end) = ours {
        let raw: &RawValue = serde_json::from_str(text).unwrap();
        let start = scan::skip_whitespace(bytes, 0);
        assert_eq!(raw.get(), &text[start..end], "{text:?}");
    }
}

#[test]
fn generated_values_and_their_mutations_are_read_as_serde_json_reads_them() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut accepted = 0;
    for _ in 0..20_000 {
        let mut text = String::new();
        value(&mut rng, 4, &mut text);
        if text.is_empty() {
            continue;
        }
        agree(&text);
        accepted += usize::from(serde_json::from_str::<IgnoredAny>(&text).is_ok());
        // Mutations: a piece put in, a byte taken out, the text cut short.
        for _ in 0..4 {
            let mut mutated = text.clone();
            let at = (0..=rng.below(mutated.len() + 1))
                .rev()
                .find(|&i| mutated.is_char_boundary(i))
                .unwrap_or(0);
            match rng.below(3) {
                0 => mutated.insert_str(at, PIECES[rng.below(PIECES.len())]),
                1 => {
                    if let Some(c) = mutated[at..].chars().next() {
                        mutated.replace_range(at..at + c.len_utf8(), "");
                    }
                }
                _ => mutated.truncate(at),
            }
            agree(&mutated);
        }
    }
    // The generator makes mostly valid JSON: both sides were exercised.
    assert!(accepted > 10_000, "{accepted}");
}

#[test]
fn edge_cases_agree() {
    for text in [
        "",
        " ",
        "0",
        "-",
        "-0",
        "00",
        "01",
        "1.",
        "1.e3",
        "1e",
        "1e+",
        "1E-0",
        "-01",
        "0.0",
        "\"",
        "\"\\",
        "\"\\u12\"",
        "\"\\u12G4\"",
        "\"\\uD800\"",
        "\"\u{1}\"",
        "\"\u{7f}\"",
        "[]",
        "[",
        "[,]",
        "[1,]",
        "[1 2]",
        "{}",
        "{",
        "{,}",
        "{\"a\"}",
        "{\"a\":}",
        "{\"a\":1,}",
        "{1:2}",
        "{\"a\" : 1 , \"b\":[{}]}",
        "nul",
        "nulls",
        "true1",
        "[true]x",
        "[[[[[]]]]]",
        "{\"a\":{\"b\":{\"c\":[]}}}",
        "\"a\"\"b\"",
        " \t\n\r[ ] ",
    ] {
        agree(text);
    }
    // Nesting far past serde_json's recursion limit: skipped values have none.
    let deep = format!("{}{}", "[".repeat(5_000), "]".repeat(5_000));
    agree(&deep);
    // A long string, with an escape and a control character near its end.
    let long = "x".repeat(70_000);
    agree(&format!("\"{long}\""));
    agree(&format!("\"{long}\\t{long}\""));
    agree(&format!("\"{long}\u{1}\""));
}
