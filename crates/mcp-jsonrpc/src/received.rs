//! A successful response's result as it arrived, read lazily when the frame's layout
//! allows it.
//!
//! Decoding a response the ordinary way runs serde_json over its whole `result` to find
//! where it ends (a `RawValue` is a scan and a copy), and then the caller parses the same
//! text again into its own type: for a small `tools/call` that first scan is a quarter of
//! a client's work per call. Most responses, and every
//! one our server writes, are laid out `{"jsonrpc":"2.0","id":N,"result":…}` (or with the
//! keys sorted, `{"id":N,"jsonrpc":"2.0","result":…}`): the result
//! is then everything between `"result":` and the frame's closing brace, found without
//! reading it. [`RawResult`] carries that span, unchecked, so the caller's own parse is the
//! only one; a caller that cannot use it asks [`RawResult::into_raw_value`], which decodes
//! the frame the ordinary way and so answers exactly as before.

use bytes::Bytes;
use mcp_types::RequestId;
use serde_json::value::RawValue;

use crate::error::Error;
use crate::message::{DecodeOptions, Decoded, Message, decode};

/// The `result` of a successful response, as the peer sent it
/// ([`Peer::request_encoded`](crate::Peer::request_encoded)).
///
/// Either already checked (a `RawValue` the decoder read) or the span of the frame that
/// holds the result when the frame is `{"jsonrpc":"2.0","id":N,"result":…}`. Read
/// [`text`](Self::text) as exactly one JSON value (`serde_json::from_str`, which refuses
/// trailing text): when that succeeds, that value is the result. When it fails, the frame
/// was not what its first bytes promised (another member after `result`, or not JSON at
/// all), and [`into_raw_value`](Self::into_raw_value) gives the checked result or the
/// error, as if the frame had been decoded whole. A frame in that layout is the request's
/// answer, so a malformed one fails the request ([`Error::Malformed`]); a malformed frame
/// in any other layout is dropped, and the request keeps waiting.
///
/// ```
/// # use mcp_jsonrpc::RawResult;
/// let raw = serde_json::value::RawValue::from_string("{\"ok\":true}".into()).unwrap();
/// let result = RawResult::from(raw);
/// assert!(result.is_checked());
/// assert_eq!(result.text(), "{\"ok\":true}");
/// assert_eq!(result.into_raw_value().unwrap().get(), "{\"ok\":true}");
/// ```
#[derive(Debug, Clone)]
pub struct RawResult(Lazy);

/// JSON text that is either checked or the unchecked span of the frame it came in: the
/// representation of [`RawResult`] and of [`Params`](crate::Params).
#[derive(Debug, Clone)]
pub(crate) enum Lazy {
    Checked(Box<RawValue>),
    /// `start..end` of `frame`, unchecked (UTF-8 included: [`Lazy::text`] checks it, the
    /// one pass that reads it).
    Span {
        frame: Bytes,
        start: usize,
        end: usize,
    },
}

impl Lazy {
    /// The text: checked, or the span's when it is UTF-8, or else the empty text, which no
    /// parse accepts.
    pub(crate) fn text(&self) -> &str {
        match self {
            Lazy::Checked(raw) => raw.get(),
            Lazy::Span { frame, start, end } => frame
                .get(*start..*end)
                .and_then(|span| std::str::from_utf8(span).ok())
                .unwrap_or_default(),
        }
    }

    /// The text's bytes, without the UTF-8 check of [`text`](Self::text).
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Lazy::Checked(raw) => raw.get().as_bytes(),
            Lazy::Span { frame, start, end } => frame.get(*start..*end).unwrap_or_default(),
        }
    }

    pub(crate) fn is_checked(&self) -> bool {
        matches!(self, Lazy::Checked(_))
    }
}

impl From<Box<RawValue>> for RawResult {
    fn from(raw: Box<RawValue>) -> Self {
        RawResult(Lazy::Checked(raw))
    }
}

impl RawResult {
    /// The result's JSON text: checked if [`is_checked`](Self::is_checked), otherwise
    /// what the frame's layout says the result is, which a parse confirms (see the type's
    /// documentation). A span that is not UTF-8 reads as the empty text, which no parse
    /// accepts.
    pub fn text(&self) -> &str {
        self.0.text()
    }

    /// [`text`](Self::text) as bytes, without checking that they are UTF-8: for a parser
    /// that checks what it reads itself (as `serde_json::from_slice` does). The span of a
    /// frame's bytes that is not UTF-8 is given as it is, where [`text`](Self::text) is
    /// empty.
    pub fn bytes(&self) -> &[u8] {
        self.0.bytes()
    }

    /// Whether [`text`](Self::text) is known to be exactly one JSON value.
    pub fn is_checked(&self) -> bool {
        self.0.is_checked()
    }

    /// The result, checked: an unchecked span is decoded with its whole frame, so this is
    /// the result, the peer's error, or [`Error::Malformed`] for a frame that is not a
    /// response after all.
    pub fn into_raw_value(self) -> Result<Box<RawValue>, Error> {
        let (frame, start) = match self.0 {
            Lazy::Checked(raw) => return Ok(raw),
            Lazy::Span { frame, start, .. } => (frame, start),
        };
        let malformed = |reason: String| Error::Malformed(reason);
        match decode(&frame, DecodeOptions::default()) {
            Ok(Decoded::Single(Message::Response(response))) => {
                response.outcome.map_err(Error::Remote)
            }
            Ok(_) => Err(malformed(format!(
                "the frame that began as a response (its result at byte {start}) is not one"
            ))),
            Err(e) => Err(malformed(e.to_string())),
        }
    }
}

impl RawResult {
    /// The id and the unread result of a frame laid out
    /// `{"jsonrpc":"2.0","id":N,"result":…}`, as the engine hands it to the request `N`
    /// waits on; `None` for any other frame (which is decoded whole). See the type's
    /// documentation for how to read it.
    ///
    /// ```
    /// # use mcp_jsonrpc::RawResult;
    /// let frame = bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","id":3,"result":{"n":1}}"#);
    /// let (id, result) = RawResult::from_response_frame(&frame).unwrap();
    /// assert_eq!(id, mcp_types::RequestId::Integer(3));
    /// assert_eq!(result.text(), r#"{"n":1}"#);
    /// ```
    pub fn from_response_frame(frame: &Bytes) -> Option<(RequestId, RawResult)> {
        response_span(frame).map(|(id, result)| (RequestId::Integer(id), result))
    }
}

/// The id and the result's span of a frame laid out `{"jsonrpc":"2.0","id":N,"result":…}`
/// (or beginning `{"id":N,"jsonrpc":"2.0"`, see [`integer_id`])
/// with `N` a non-negative integer and `}` its last character but white space; `None` for
/// any other frame (which is then decoded whole). Nothing after `"result":` is read, so a
/// span is only a claim until parsed (its UTF-8 included).
pub(crate) fn response_span(frame: &Bytes) -> Option<(i64, RawResult)> {
    let (id, after_id) = integer_id(frame)?;
    result_after_id(frame, after_id).map(|result| (id, result))
}

/// [`response_span`] once [`integer_id`] has read the frame's head, up to `after_id`.
pub(crate) fn result_after_id(frame: &Bytes, after_id: usize) -> Option<RawResult> {
    const RESULT: &[u8] = br#","result":"#;
    frame[after_id..].strip_prefix(RESULT)?;
    let start = after_id + RESULT.len();
    let end = closing_brace(frame, start)?;
    Some(RawResult(Lazy::Span {
        frame: frame.clone(),
        start,
        end,
    }))
}

/// The id of a frame that begins `{"jsonrpc":"2.0","id":N` (the order the specification's
/// examples, our encoder and the Python SDK write) or `{"id":N,"jsonrpc":"2.0"` (the
/// order of keys sorted, as a `serde_json::Value` or any map sorted by key writes them),
/// with `N` a non-negative integer of at most 18 digits (which fits an `i64`), and the
/// offset just after that head; `None` for any other frame.
pub(crate) fn integer_id(frame: &[u8]) -> Option<(i64, usize)> {
    const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
    const SORTED_HEAD: &[u8] = br#"{"id":"#;
    const SORTED_TAIL: &[u8] = br#","jsonrpc":"2.0""#;
    // The build `cargo xtask bench` measures the lazy reading against: every frame is
    // decoded whole, as `serde_json` decodes it.
    if cfg!(mcp_without = "lazy_frames") {
        return None;
    }
    // What follows the id: nothing more in the first order, `"jsonrpc"` in the sorted one.
    let (rest, tail): (&[u8], &[u8]) = match frame.strip_prefix(HEAD) {
        Some(rest) => (rest, b""),
        None => (frame.strip_prefix(SORTED_HEAD)?, SORTED_TAIL),
    };
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    // JSON numbers have no leading zeros; `0` alone is one.
    if digits == 0 || digits > 18 || (digits > 1 && rest.first() == Some(&b'0')) {
        return None;
    }
    rest[digits..].strip_prefix(tail)?;
    let after_id = frame.len() - rest.len() + digits + tail.len();
    Some((small_integer(&rest[..digits]), after_id))
}

/// The offset of the frame's closing brace, its last character but white space, when that
/// is `}` and comes after `start`.
pub(crate) fn closing_brace(frame: &[u8], start: usize) -> Option<usize> {
    let end = frame.iter().rposition(|b| !b.is_ascii_whitespace())?;
    (end > start && frame[end] == b'}').then_some(end)
}

/// The value of `digits`, one to eighteen ASCII digits (which fit an `i64`), read in place
/// (a UTF-8 check and `str::parse` cost more than the digits do).
pub(crate) fn small_integer(digits: &[u8]) -> i64 {
    digits
        .iter()
        .fold(0, |n, d| n * 10 + i64::from(d.wrapping_sub(b'0')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(frame: &str) -> Option<(i64, String)> {
        response_span(&Bytes::copy_from_slice(frame.as_bytes()))
            .map(|(id, result)| (id, result.text().to_owned()))
    }

    #[test]
    fn the_result_of_a_frame_in_the_usual_layout_is_found_without_reading_it() {
        assert_eq!(
            span(r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#),
            Some((7, r#"{"content":[]}"#.to_owned()))
        );
        assert_eq!(
            span("{\"jsonrpc\":\"2.0\",\"id\":0,\"result\": 12 }\r\n"),
            Some((0, " 12 ".to_owned()))
        );
        // The keys sorted, as a `serde_json::Value` writes them.
        assert_eq!(
            span(r#"{"id":42,"jsonrpc":"2.0","result":{"content":[]}}"#),
            Some((42, r#"{"content":[]}"#.to_owned()))
        );
    }

    #[test]
    fn any_other_layout_is_left_to_the_decoder() {
        for frame in [
            r#"{"id":7,"result":{},"jsonrpc":"2.0"}"#,
            r#"{"id":7,"jsonrpc":"2.0" ,"result":{}}"#,
            r#"{"id":7,"jsonrpc":"1.0","result":{}}"#,
            r#"{"id":07,"jsonrpc":"2.0","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":"7","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":-7,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":07,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7.5,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1234567890123456789,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":"#,
            r#" {"jsonrpc":"2.0","id":7,"result":{}}"#,
        ] {
            assert_eq!(span(frame), None, "{frame}");
        }
    }

    #[test]
    fn a_span_that_is_not_utf8_reads_as_nothing_and_decodes_as_malformed() {
        let mut frame = br#"{"jsonrpc":"2.0","id":7,"result":""#.to_vec();
        frame.extend_from_slice(&[0xff, b'"', b'}']);
        let (_, result) = response_span(&Bytes::from(frame)).expect("the layout matches");
        assert_eq!(result.text(), "");
        assert!(matches!(result.into_raw_value(), Err(Error::Malformed(_))));
    }

    #[test]
    fn a_span_that_is_not_the_whole_result_is_decoded_with_its_frame() {
        let check = |frame: &str| {
            let (_, result) = response_span(&Bytes::copy_from_slice(frame.as_bytes()))
                .expect("the layout matches");
            assert!(!result.is_checked());
            assert!(serde_json::from_str::<&RawValue>(result.text()).is_err());
            result.into_raw_value()
        };
        // Another member after `result`: the frame is still a response.
        let raw = check(r#"{"jsonrpc":"2.0","id":7,"result":{"a":1},"extra":true}"#).unwrap();
        assert_eq!(raw.get(), r#"{"a":1}"#);
        // Both a result and an error, or not JSON: the decoder's error.
        for frame in [
            r#"{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{]}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{}"#,
        ] {
            let err = check(frame).unwrap_err();
            assert!(matches!(err, Error::Malformed(_)), "{frame}: {err}");
        }
    }

    #[test]
    fn small_integers_read_as_str_parse_reads_them() {
        for text in ["0", "7", "42", "999999999999999999", "100000000000000000"] {
            assert_eq!(small_integer(text.as_bytes()), text.parse::<i64>().unwrap());
        }
    }

    #[test]
    fn a_checked_result_is_its_own_text() {
        let raw = RawValue::from_string("[1,2]".to_owned()).unwrap();
        let result = RawResult::from(raw);
        assert!(result.is_checked());
        assert_eq!(result.text(), "[1,2]");
    }
}
