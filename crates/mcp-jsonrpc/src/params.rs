//! A request's `params` as they arrived, read lazily when the frame's layout allows it.
//!
//! Decoding a request the ordinary way runs serde_json over its whole `params` to find
//! where they end (a `RawValue` is a scan and a copy), and then the handler parses the same
//! text again into its own type: for a small `tools/call` that first scan was a sixth of a
//! server's instructions per call, and for a 64 KiB argument a quarter.
//! Most requests, and every one our client and the Python SDK
//! write, are laid out `{"jsonrpc":"2.0","id":N,"method":"M","params":…}`, or with the
//! keys sorted, `{"id":N,"jsonrpc":"2.0","method":"M","params":…}`, as a
//! `serde_json::Value` writes them (the benchmark's driver among others): the params
//! are then everything between `"params":` and the frame's closing brace, found without
//! reading them. [`Params`] carries that span, unchecked, so the handler's own parse is
//! the only one; a handler that cannot use it asks [`Params::checked`], which reads the
//! span as one JSON value and, when it is not one, decodes the whole frame the ordinary
//! way, and so answers exactly as the decoder would have.

use std::borrow::Cow;

use bytes::Bytes;
use mcp_types::RequestId;
use serde_json::value::RawValue;

use crate::message::{DecodeError, DecodeOptions, Decoded, Message, Request, decode};
use crate::received::{Lazy, closing_brace, integer_id};

/// The `params` of a request, as the peer sent them.
///
/// Either already checked (a `RawValue` the decoder read, or one built in process) or, for
/// a request read by the engine ([`Peer`](crate::Peer)) from a frame laid out
/// `{"jsonrpc":"2.0","id":N,"method":"M","params":…}`, the span of that frame that holds
/// them, unchecked. [`text`](Self::text) is the text either way: parse it with
/// `serde_json::from_str` (which refuses trailing text), and a successful parse is the
/// params. When the parse of an unchecked span fails, ask [`checked`](Self::checked): the
/// frame was either laid out otherwise (another member after `params`), which gives the
/// real params, or malformed, which gives the error the decoder gives (-32700 or -32600).
/// Never pass [`text`](Self::text) on unparsed, to another peer or into a `RawValue`: use
/// [`checked`](Self::checked) or [`into_raw_value`](Self::into_raw_value) for that.
///
/// ```
/// # use mcp_jsonrpc::Params;
/// let raw = serde_json::value::RawValue::from_string("{\"name\":\"echo\"}".into()).unwrap();
/// let params = Params::from(raw);
/// assert!(params.is_checked());
/// assert_eq!(params.text(), "{\"name\":\"echo\"}");
/// assert_eq!(params.checked().unwrap().get(), "{\"name\":\"echo\"}");
/// ```
#[derive(Debug, Clone)]
pub struct Params(Lazy);

impl From<Box<RawValue>> for Params {
    fn from(raw: Box<RawValue>) -> Self {
        Params(Lazy::Checked(raw))
    }
}

impl Params {
    /// The params' JSON text: checked if [`is_checked`](Self::is_checked), otherwise what
    /// the frame's layout says the params are, which a parse confirms (see the type's
    /// documentation). A span that is not UTF-8 reads as the empty text, which no parse
    /// accepts.
    pub fn text(&self) -> &str {
        self.0.text()
    }

    /// Whether [`text`](Self::text) is known to be exactly one JSON value.
    pub fn is_checked(&self) -> bool {
        self.0.is_checked()
    }

    /// The params, checked: a checked value as it is; an unchecked span borrowed from its
    /// frame when it is exactly one JSON value (one scan, no copy); otherwise the params
    /// of the whole frame decoded the ordinary way, or the decoder's error for it (a
    /// frame that is not JSON, -32700, or not a request, -32600).
    ///
    /// # Errors
    ///
    /// The [`DecodeError`] of a frame that is not a well-formed request.
    pub fn checked(&self) -> Result<Cow<'_, RawValue>, DecodeError> {
        match &self.0 {
            Lazy::Checked(raw) => Ok(Cow::Borrowed(raw)),
            Lazy::Span { frame, .. } => match serde_json::from_str::<&RawValue>(self.text()) {
                Ok(raw) => Ok(Cow::Borrowed(raw)),
                Err(_) => decode_whole(frame).map(Cow::Owned),
            },
        }
    }

    /// The params as an owned, checked `RawValue` ([`checked`](Self::checked), copied
    /// when borrowed).
    ///
    /// # Errors
    ///
    /// As [`checked`](Self::checked).
    pub fn into_raw_value(self) -> Result<Box<RawValue>, DecodeError> {
        match self.0 {
            Lazy::Checked(raw) => Ok(raw),
            Lazy::Span { .. } => self.checked().map(Cow::into_owned),
        }
    }
}

impl Request {
    /// The request of a frame laid out `{"jsonrpc":"2.0","id":N,"method":"M","params":…}`,
    /// with its params unread, as the engine hands it to its handler; `None` for any other
    /// frame (which is decoded whole). See [`Params`] for how to read the params.
    ///
    /// ```
    /// # use mcp_jsonrpc::Request;
    /// let frame = bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}"#);
    /// let request = Request::from_frame(&frame).unwrap();
    /// assert_eq!(request.method, "tools/list");
    /// let params = request.params.unwrap();
    /// assert!(!params.is_checked());
    /// assert_eq!(params.text(), "{}");
    /// ```
    pub fn from_frame(frame: &Bytes) -> Option<Request> {
        request_span(frame)
    }
}

/// The params of `frame` decoded whole, which failed the span's reading: a request laid
/// out otherwise, or the decoder's error.
fn decode_whole(frame: &[u8]) -> Result<Box<RawValue>, DecodeError> {
    match decode(frame, DecodeOptions::default())? {
        Decoded::Single(Message::Request(Request {
            params: Some(params),
            ..
        })) => params.into_raw_value(),
        // The span's layout promised a request with params; decoding the frame whole
        // found another message (which its layout rules out) or none.
        _ => Err(DecodeError::invalid(None, "not a request with params")),
    }
}

/// A request read from a frame laid out `{"jsonrpc":"2.0","id":N,"method":"M","params":…}`
/// (or beginning `{"id":N,"jsonrpc":"2.0"`, see [`integer_id`])
/// with `N` a non-negative integer, `M` a string without escapes, the params starting with
/// `{` or `[`, and `}` the frame's last character but white space; `None` for any other
/// frame (which is then decoded whole). Nothing after `"params":` is read, so the params
/// are only a claim until parsed.
pub(crate) fn request_span(frame: &Bytes) -> Option<Request> {
    let (id, after_id) = integer_id(frame)?;
    request_after_id(frame, id, after_id)
}

/// [`request_span`] once [`integer_id`] has read the frame's head (`id`, up to `after_id`).
pub(crate) fn request_after_id(frame: &Bytes, id: i64, after_id: usize) -> Option<Request> {
    const METHOD: &[u8] = br#","method":""#;
    const PARAMS: &[u8] = br#"","params":"#;
    let rest = frame[after_id..].strip_prefix(METHOD)?;
    // The method ends at the first quote; one with an escape or a control character
    // goes through the decoder.
    let length = rest.iter().position(|&b| b == b'"')?;
    let method = &rest[..length];
    if method.iter().any(|&b| b == b'\\' || b < 0x20) {
        return None;
    }
    let method = std::str::from_utf8(method).ok()?;
    rest[length..].strip_prefix(PARAMS)?;
    let start = after_id + METHOD.len() + length + PARAMS.len();
    let end = closing_brace(frame, start)?;
    let first = frame[start..end]
        .iter()
        .find(|b| !b.is_ascii_whitespace())?;
    if !matches!(first, b'{' | b'[') {
        return None;
    }
    Some(Request::with_params(
        RequestId::Integer(id),
        method.to_owned(),
        Some(Params(Lazy::Span {
            frame: frame.clone(),
            start,
            end,
        })),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_types::ErrorCode;

    fn request(frame: &str) -> Option<Request> {
        request_span(&Bytes::copy_from_slice(frame.as_bytes()))
    }

    fn span(frame: &str) -> Option<(i64, String, String)> {
        request(frame).map(|r| {
            let RequestId::Integer(id) = r.id else {
                panic!("an integer id")
            };
            let params = r.params.expect("params");
            assert!(!params.is_checked());
            (id, r.method, params.text().to_owned())
        })
    }

    #[test]
    fn the_params_of_a_frame_in_the_usual_layout_are_found_without_reading_them() {
        assert_eq!(
            span(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}"#),
            Some((7, "tools/call".to_owned(), r#"{"name":"x"}"#.to_owned()))
        );
        assert_eq!(
            span("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"m\",\"params\": [1] }\r\n"),
            Some((0, "m".to_owned(), " [1] ".to_owned()))
        );
        // The keys sorted, as a `serde_json::Value` (or any map sorted by key) writes them.
        assert_eq!(
            span(r#"{"id":12,"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}"#),
            Some((12, "tools/call".to_owned(), r#"{"name":"x"}"#.to_owned()))
        );
    }

    #[test]
    fn any_other_layout_is_left_to_the_decoder() {
        for frame in [
            r#"{"id":7,"method":"m","params":{},"jsonrpc":"2.0"}"#,
            r#"{"id":7,"jsonrpc":"2.0","params":{},"method":"m"}"#,
            r#"{"id":7,"jsonrpc":"2.00","method":"m","params":{}}"#,
            r#"{"id":-7,"jsonrpc":"2.0","method":"m","params":{}}"#,
            r#"{"id":7 ,"jsonrpc":"2.0","method":"m","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":"7","method":"m","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":-7,"method":"m","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":07,"method":"m","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":7.5,"method":"m","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1234567890123456789,"method":"m","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"m\"x","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"m\u0041","params":{}}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"m\tx\",\"params\":{}}",
            r#"{"jsonrpc":"2.0","id":7,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"m","params":1}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"m","params":"x"}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"m","params":}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"m","params":"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
            r#" {"jsonrpc":"2.0","id":7,"method":"m","params":{}}"#,
        ] {
            assert!(request(frame).is_none(), "{frame}");
        }
    }

    #[test]
    fn a_span_that_is_one_value_is_checked_without_a_copy() {
        let r = request(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,2]}}"#)
            .expect("the layout matches");
        let params = r.params.expect("params");
        let checked = params.checked().expect("well formed");
        assert!(matches!(checked, Cow::Borrowed(_)));
        assert_eq!(checked.get(), r#"{"a":[1,2]}"#);
        assert_eq!(
            params.into_raw_value().expect("well formed").get(),
            r#"{"a":[1,2]}"#
        );
    }

    #[test]
    fn a_span_that_is_not_the_whole_params_is_decoded_with_its_frame() {
        // Another member after `params`: the frame is still a request, and these are its
        // params.
        let r = request(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1},"x":true}"#)
            .expect("the layout matches");
        let params = r.params.expect("params");
        assert!(serde_json::from_str::<&RawValue>(params.text()).is_err());
        assert_eq!(params.checked().expect("a request").get(), r#"{"a":1}"#);
        // Not JSON, or not a request: the decoder's error, as if decoded whole.
        for (frame, code) in [
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":tru}}"#,
                ErrorCode::PARSE_ERROR,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{}"#,
                ErrorCode::PARSE_ERROR,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{},"result":1}"#,
                ErrorCode::INVALID_REQUEST,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{},"id":2}"#,
                ErrorCode::INVALID_REQUEST,
            ),
        ] {
            let params = request(frame)
                .expect("the layout matches")
                .params
                .expect("params");
            let err = params.checked().expect_err(frame);
            assert_eq!(err.code, code, "{frame}: {err}");
        }
    }

    #[test]
    fn a_span_that_is_not_utf8_reads_as_nothing_and_decodes_as_malformed() {
        let mut frame = br#"{"jsonrpc":"2.0","id":7,"method":"m","params":[""#.to_vec();
        frame.extend_from_slice(&[0xff, b'"', b']', b'}']);
        let r = request_span(&Bytes::from(frame)).expect("the layout matches");
        let params = r.params.expect("params");
        assert_eq!(params.text(), "");
        assert_eq!(
            params.checked().expect_err("not UTF-8").code,
            ErrorCode::PARSE_ERROR
        );
    }
}
