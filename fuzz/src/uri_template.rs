//! `uri_template`: resource URI templates (RFC 6570, every operator and modifier) and
//! matching URIs against them.
//!
//! The input is `template \0 uri` (without a `\0`, the whole input is both). Checks:
//! nothing panics, in parsing, matching or expansion; and a match is never wrong:
//! expanding the template with the matched values gives a URI that matches again with
//! the same values, unless one holds a `%` (the URI itself may differ in how it was
//! percent-encoded).

use mcp_server::fuzzing::{expand_uri_template, match_uri_template};

/// One input: see the module docs.
pub fn run(input: &[u8]) {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    let (template, uri) = text.split_once('\0').unwrap_or((text, text));
    // Expansion of any template, with values taken from the URI, must not panic.
    let _ = expand_uri_template(
        template,
        &[("a".to_owned(), mcp_server::TemplateValue::from(uri))],
    );
    let Some(vars) = match_uri_template(template, uri) else {
        return;
    };
    let expanded =
        expand_uri_template(template, &vars).expect("a matched template expands its values");
    // `{+x}` and `{#x}` pass a value's `%XX` through unencoded (RFC 6570 section 3.2.3),
    // so a decoded value holding one reads back decoded once more, or not at all.
    if vars.iter().any(|(_, value)| value.to_joined().contains('%')) {
        return;
    }
    let again = match_uri_template(template, &expanded);
    assert_eq!(
        again.as_ref(),
        Some(&vars),
        "{uri:?} matched, but its values expand to {expanded:?}, which does not match alike"
    );
}
