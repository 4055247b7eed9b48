//! A request's `params` as the decoder read them: checked JSON text, which the handler
//! parses into its own type.
//!
//! Every frame is decoded whole, by serde_json: reading the params' span without parsing
//! it, for the layout most peers write, saved too little per call to be worth a second
//! reading path for malformed frames.

use std::borrow::Cow;

use bytes::Bytes;
use serde_json::value::RawValue;

use crate::message::{DecodeError, DecodeOptions, Decoded, Message, Request, decode};

/// The `params` of a request, as the peer sent them: a `RawValue` the decoder checked, or
/// one built in process.
///
/// Parse [`text`](Self::text) into the type the method expects; it is exactly one JSON
/// value (an object or an array when it came from a peer).
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
pub struct Params(Box<RawValue>);

impl From<Box<RawValue>> for Params {
    fn from(raw: Box<RawValue>) -> Self {
        Params(raw)
    }
}

impl Params {
    /// The params' JSON text: exactly one JSON value.
    pub fn text(&self) -> &str {
        self.0.get()
    }

    /// Whether [`text`](Self::text) is known to be exactly one JSON value: always `true`,
    /// since every frame is decoded whole (kept for the callers that asked).
    pub fn is_checked(&self) -> bool {
        true
    }

    /// The params, checked: always the value as it is, borrowed.
    ///
    /// # Errors
    ///
    /// None: the params were checked when the frame was decoded. The `Result` is kept for
    /// the callers written when params could arrive unchecked.
    pub fn checked(&self) -> Result<Cow<'_, RawValue>, DecodeError> {
        Ok(Cow::Borrowed(&self.0))
    }

    /// The params as an owned, checked `RawValue`.
    ///
    /// # Errors
    ///
    /// None, as for [`checked`](Self::checked).
    pub fn into_raw_value(self) -> Result<Box<RawValue>, DecodeError> {
        Ok(self.0)
    }
}

impl Request {
    /// The request a frame holds, decoded whole ([`decode`] with the default options);
    /// `None` for a frame that is not a single well-formed request.
    ///
    /// ```
    /// # use mcp_jsonrpc::Request;
    /// let frame = bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}"#);
    /// let request = Request::from_frame(&frame).unwrap();
    /// assert_eq!(request.method, "tools/list");
    /// let params = request.params.unwrap();
    /// assert!(params.is_checked());
    /// assert_eq!(params.text(), "{}");
    /// ```
    pub fn from_frame(frame: &Bytes) -> Option<Request> {
        match decode(frame, DecodeOptions::default()) {
            Ok(Decoded::Single(Message::Request(request))) => Some(request),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_is_a_request_when_the_decoder_says_so() {
        let request = |frame: &str| Request::from_frame(&Bytes::copy_from_slice(frame.as_bytes()));
        // Any layout, the keys in any order, with or without params.
        for (frame, params) in [
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"m","params":{"a":1}}"#,
                Some(r#"{"a":1}"#),
            ),
            (
                r#"{"params":[1],"method":"m","id":"x","jsonrpc":"2.0"}"#,
                Some("[1]"),
            ),
            (r#"{"jsonrpc":"2.0","id":7,"method":"m"}"#, None),
        ] {
            let r = request(frame).expect(frame);
            assert_eq!(r.params.as_ref().map(Params::text), params, "{frame}");
        }
        for frame in [
            r#"{"jsonrpc":"2.0","id":7,"method":"m","params":{"a":tru}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"m","params":{},"result":1}"#,
            r#"{"jsonrpc":"2.0","method":"m","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
        ] {
            assert!(request(frame).is_none(), "{frame}");
        }
    }
}
