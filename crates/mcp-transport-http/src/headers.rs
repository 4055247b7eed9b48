//! Reading and writing single headers: media types (`Content-Type`, `Accept`), whitespace
//! and character rules, `Mcp-Param-{Name}` names, and the Base64 sentinel of `Mcp-Name` and
//! `Mcp-Param-*` values (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>, Value
//! Encoding). The server half decodes with [`decode_sentinel`], the client half encodes with
//! [`encode_sentinel`], so the two cannot drift apart.
//!
//! Everything here is a pure function of header values, so it is tested without a server.

use std::borrow::Cow;

use base64::Engine as _;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue};

/// The media type of a JSON body.
pub(crate) const JSON: &str = "application/json";
/// The media type of an SSE stream.
pub(crate) const SSE: &str = "text/event-stream";
/// The headers that mirror the body, which the client half writes and the server half
/// checks.
pub(crate) const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
pub(crate) const METHOD: HeaderName = HeaderName::from_static("mcp-method");
pub(crate) const NAME: HeaderName = HeaderName::from_static("mcp-name");
const SENTINEL_PREFIX: &str = "=?base64?";
const SENTINEL_SUFFIX: &str = "?=";

/// Why a header value could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Malformed {
    /// The header appears more than once, so there is no single value to compare.
    Repeated,
    /// A byte outside visible ASCII, space and tab (RFC 9110 §5.5).
    InvalidCharacters,
    /// A Base64 sentinel whose payload is not canonical, padded Base64 of UTF-8.
    BadBase64,
}

impl Malformed {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Malformed::Repeated => "appears more than once",
            Malformed::InvalidCharacters => "contains invalid characters",
            Malformed::BadBase64 => "has an invalid Base64 value",
        }
    }
}

/// The single value of a header with surrounding whitespace removed (RFC 9110 §5.5 says a
/// parser excludes it before evaluating the value); `None` when absent.
pub(crate) fn single(
    headers: &HeaderMap,
    name: impl http::header::AsHeaderName,
) -> Result<Option<&str>, Malformed> {
    let mut values = headers.get_all(name).into_iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(Malformed::Repeated);
    }
    visible(value).map(Some)
}

/// A value as text, trimmed of optional whitespace, if every byte is visible ASCII, space or
/// tab.
pub(crate) fn visible(value: &HeaderValue) -> Result<&str, Malformed> {
    let text = value.to_str().map_err(|_| Malformed::InvalidCharacters)?;
    Ok(text.trim_matches([' ', '\t']))
}

/// Decodes `=?base64?{payload}?=` (the markers are case-sensitive); any other value is
/// literal. The payload must be canonical, padded standard Base64 of UTF-8 text.
pub(crate) fn decode_sentinel(value: &str) -> Result<Cow<'_, str>, Malformed> {
    let Some(payload) = value
        .strip_prefix(SENTINEL_PREFIX)
        .and_then(|rest| rest.strip_suffix(SENTINEL_SUFFIX))
    else {
        return Ok(Cow::Borrowed(value));
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(payload)
        .map_err(|_| Malformed::BadBase64)?;
    String::from_utf8(bytes)
        .map(Cow::Owned)
        .map_err(|_| Malformed::BadBase64)
}

/// A value ready to send as `Mcp-Name` or `Mcp-Param-*`: as it is when every byte is
/// visible ASCII or an inner space, and it neither has leading or trailing whitespace nor
/// looks like a sentinel; otherwise `=?base64?{standard, padded Base64 of UTF-8}?=`. Tabs and
/// other control characters are always encoded, although RFC 9110 allows tabs, because the
/// spec asks for plain values only.
pub(crate) fn encode_sentinel(value: &str) -> Cow<'_, str> {
    let printable = value.bytes().all(|b| (0x20..=0x7e).contains(&b));
    let padded = value.starts_with(' ') || value.ends_with(' ');
    let sentinel = value.starts_with(SENTINEL_PREFIX) && value.ends_with(SENTINEL_SUFFIX);
    if printable && !padded && !sentinel {
        return Cow::Borrowed(value);
    }
    let payload = base64::engine::general_purpose::STANDARD.encode(value);
    Cow::Owned(format!("{SENTINEL_PREFIX}{payload}{SENTINEL_SUFFIX}"))
}

/// The header `Mcp-Param-{name}` (lower-cased), if `name` is a non-empty HTTP field-name
/// token (RFC 9110 §5.1), as `x-mcp-header` values must be.
pub(crate) fn param_header_name(name: &str) -> Option<HeaderName> {
    let token = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !token {
        return None;
    }
    HeaderName::try_from(format!("mcp-param-{name}")).ok()
}

/// The `type/subtype` of a single `Content-Type`, without parameters, if there is one.
pub(crate) fn content_type(headers: &HeaderMap) -> Option<&str> {
    match single(headers, CONTENT_TYPE) {
        Ok(Some(value)) => Some(essence(value)),
        _ => None,
    }
}

/// Whether `Content-Type` is exactly one `application/json`, with any parameters.
pub(crate) fn is_json_content(headers: &HeaderMap) -> bool {
    // The usual value, exactly: one `application/json` alone.
    let mut values = headers.get_all(CONTENT_TYPE).iter();
    if let (Some(value), None) = (values.next(), values.next())
        && value.as_bytes() == JSON.as_bytes()
    {
        return true;
    }
    content_type(headers).is_some_and(|media| media.eq_ignore_ascii_case(JSON))
}

/// Whether the body is sent in a content coding (`Content-Encoding` other than
/// `identity`, or one that is not text). The server reads bodies as they are and decodes
/// none: a compressed body could otherwise expand past the size limit after it was
/// counted, or reach the parser as bytes it mistakes for JSON.
pub(crate) fn is_encoded(headers: &HeaderMap) -> bool {
    headers
        .get_all(http::header::CONTENT_ENCODING)
        .iter()
        .any(|value| {
            value.to_str().map_or(true, |value| {
                value.split(',').any(|coding| {
                    !coding.trim().is_empty() && !coding.trim().eq_ignore_ascii_case("identity")
                })
            })
        })
}

/// Whether `Content-Type` is exactly one `text/event-stream`, with any parameters.
pub(crate) fn is_sse_content(headers: &HeaderMap) -> bool {
    content_type(headers).is_some_and(|media| media.eq_ignore_ascii_case(SSE))
}

/// Whether `Accept` lists both `application/json` and `text/event-stream`, neither with
/// `q=0`. Wildcards do not count: the client MUST list both (Sending Messages, 2).
pub(crate) fn accepts_json_and_sse(headers: &HeaderMap) -> bool {
    let mut values = headers.get_all(ACCEPT).into_iter();
    // What clients send, compared as bytes before anything is split and trimmed.
    if let (Some(value), None) = (values.next(), values.next())
        && matches!(
            value.as_bytes(),
            b"application/json, text/event-stream" | b"text/event-stream, application/json"
        )
    {
        return true;
    }
    let (mut json, mut sse) = (false, false);
    for value in headers.get_all(ACCEPT) {
        let Ok(value) = value.to_str() else { continue };
        for range in value.split(',') {
            if refused(range) {
                continue;
            }
            let media = essence(range);
            json |= media.eq_ignore_ascii_case(JSON);
            sse |= media.eq_ignore_ascii_case(SSE);
        }
    }
    json && sse
}

/// The `type/subtype` of a media type, without parameters or whitespace.
fn essence(media: &str) -> &str {
    media
        .split_once(';')
        .map_or(media, |(essence, _)| essence)
        .trim_matches([' ', '\t'])
}

/// Whether a media range carries `q=0` (RFC 9110 §12.4.2: "not acceptable").
fn refused(range: &str) -> bool {
    range.split(';').skip(1).any(|param| {
        let Some((name, value)) = param.split_once('=') else {
            return false;
        };
        name.trim_matches([' ', '\t']).eq_ignore_ascii_case("q")
            && value
                .trim_matches([' ', '\t'])
                .strip_prefix('0')
                .is_some_and(|rest| {
                    rest.is_empty() || rest.trim_start_matches(['.', '0']).is_empty()
                })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &[u8])]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_bytes(value).unwrap(),
            );
        }
        map
    }

    #[test]
    fn sentinels() {
        let cases: &[(&str, Result<&str, Malformed>)] = &[
            ("us-west1", Ok("us-west1")),
            ("=?base64?SGVsbG8sIOS4lueVjA==?=", Ok("Hello, 世界")),
            ("=?base64?IHBhZGRlZCA=?=", Ok(" padded ")),
            ("=?base64?bGluZTEKbGluZTI=?=", Ok("line1\nline2")),
            (
                "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
                Ok("=?base64?literal?="),
            ),
            ("=?base64??=", Ok("")),
            // Missing padding, a character outside the alphabet, bytes that are not UTF-8.
            ("=?base64?SGVsbG8?=", Err(Malformed::BadBase64)),
            ("=?base64?SGVs!!!bG8=?=", Err(Malformed::BadBase64)),
            ("=?base64?/w==?=", Err(Malformed::BadBase64)),
            // Without both markers, or with other case, the value is literal.
            ("=?base64?SGVsbG8=", Ok("=?base64?SGVsbG8=")),
            ("SGVsbG8=?=", Ok("SGVsbG8=?=")),
            ("=?BASE64?SGVsbG8=?=", Ok("=?BASE64?SGVsbG8=?=")),
        ];
        for (input, expected) in cases {
            let got = decode_sentinel(input);
            assert_eq!(got.as_deref().map_err(|e| *e), *expected, "{input}");
        }
    }

    #[test]
    fn encoding_round_trips() {
        // The spec's table (Value Encoding), plus edge cases of the plain set.
        let cases = [
            ("us-west1", "us-west1"),
            ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
            ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
            ("inner space", "inner space"),
            ("tab\there", "=?base64?dGFiCWhlcmU=?="),
            ("trailing ", "=?base64?dHJhaWxpbmcg?="),
            ("", ""),
            ("=?base64?", "=?base64?"),
        ];
        for (value, encoded) in cases {
            assert_eq!(encode_sentinel(value), encoded, "{value:?}");
            assert_eq!(decode_sentinel(encoded).unwrap(), value, "{value:?}");
            assert!(HeaderValue::from_str(encoded).is_ok(), "{value:?}");
        }
    }

    #[test]
    fn param_names() {
        assert_eq!(param_header_name("Region").unwrap(), "mcp-param-region");
        assert_eq!(param_header_name("a.b~c").unwrap(), "mcp-param-a.b~c");
        for bad in ["", "a b", "a:b", "é", "a\r"] {
            assert!(param_header_name(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn single_values() {
        let map = headers(&[
            ("mcp-method", b"  tools/list\t"),
            ("mcp-name", b"a"),
            ("mcp-name", b"b"),
            ("mcp-param-x", b"caf\xc3\xa9"),
        ]);
        assert_eq!(single(&map, "mcp-method"), Ok(Some("tools/list")));
        assert_eq!(single(&map, "MCP-Method"), Ok(Some("tools/list")));
        assert_eq!(single(&map, "mcp-name"), Err(Malformed::Repeated));
        assert_eq!(
            single(&map, "mcp-param-x"),
            Err(Malformed::InvalidCharacters)
        );
        assert_eq!(single(&map, "absent"), Ok(None));
    }

    #[test]
    fn content_types() {
        let yes: &[&[u8]] = &[
            b"application/json",
            b"Application/JSON",
            b"application/json; charset=utf-8",
            b"application/json;charset=UTF-8",
        ];
        let no: &[&[u8]] = &[
            b"text/plain",
            b"application/jsonx",
            b"application/json-seq",
            b"",
        ];
        for (values, json) in [(yes, true), (no, false)] {
            for value in values {
                assert_eq!(
                    is_json_content(&headers(&[("content-type", value)])),
                    json,
                    "{value:?}"
                );
            }
        }
        assert!(!is_json_content(&HeaderMap::new()));
        assert!(!is_json_content(&headers(&[
            ("content-type", b"application/json"),
            ("content-type", b"application/json"),
        ])));
    }

    #[test]
    fn accept_lists() {
        let yes: &[&[&[u8]]] = &[
            &[b"application/json, text/event-stream"],
            &[b"text/event-stream, application/json"],
            &[
                b"application/json, text/event-stream",
                b"application/json, text/event-stream",
            ],
            &[b"text/event-stream;q=0.5 , application/json;q=1"],
            &[b"application/json", b"text/event-stream"],
            &[b"TEXT/EVENT-STREAM, APPLICATION/JSON, */*"],
        ];
        for values in yes {
            let pairs: Vec<_> = values.iter().map(|v| ("accept", *v)).collect();
            assert!(accepts_json_and_sse(&headers(&pairs)), "{values:?}");
        }
        let no: &[&[&[u8]]] = &[
            &[],
            &[b"application/json"],
            &[b"text/event-stream"],
            &[b"*/*"],
            &[b"application/*, text/*"],
            &[b"application/json, text/event-stream;q=0"],
            &[b"application/json;q=0.000, text/event-stream"],
            &[b"application/json, text/event-stream;q=0"],
            &[b"application/json,text/event-stream;q=0"],
            &[b"application/json, text/event-streams"],
        ];
        for values in no {
            let pairs: Vec<_> = values.iter().map(|v| ("accept", *v)).collect();
            assert!(!accepts_json_and_sse(&headers(&pairs)), "{values:?}");
        }
        assert!(!refused("application/json;q=0.5"));
        assert!(!refused("application/json;q=0.01"));
    }
}
