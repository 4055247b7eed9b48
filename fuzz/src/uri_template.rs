//! `uri_template`: resource URI templates (`{name}`, `{+name}`) and matching URIs
//! against them.
//!
//! The input is `template \0 uri` (without a `\0`, the whole input is both). Checks:
//! nothing panics; a match's values are non-empty, a `{name}` value holds no `/`, and
//! expanding the template with the matched values gives back the URI exactly (a match
//! is never wrong).

use mcp_server::fuzzing::match_uri_template;

/// One input: see the module docs.
pub fn run(input: &[u8]) {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    let (template, uri) = text.split_once('\0').unwrap_or((text, text));
    let Some(vars) = match_uri_template(template, uri) else {
        return;
    };
    let mut expanded = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        expanded.push_str(&rest[..open]);
        let close = open
            + rest[open..]
                .find('}')
                .expect("a matched template is closed");
        let expression = &rest[open + 1..close];
        let (reserved, name) = match expression.strip_prefix('+') {
            Some(name) => (true, name),
            None => (false, expression),
        };
        let value = vars
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .expect("every variable of a match has a value");
        assert!(!value.is_empty(), "an empty value for {name}");
        assert!(reserved || !value.contains('/'), "a `/` in {{{name}}}");
        expanded.push_str(value);
        rest = &rest[close + 1..];
    }
    expanded.push_str(rest);
    assert_eq!(expanded, uri, "the match does not describe the URI");
}
