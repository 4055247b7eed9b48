//! JSON-RPC 2.0 messages: strict decoding with precise errors, and allocation-light encoding.
//!
//! Decoding reads the envelope (`jsonrpc`, `id`, `method`, `params`, `result`, `error`)
//! borrowing from the input, checks it, and keeps `params` and `result` as raw JSON text for
//! the layer above to deserialize into its own types: the body is parsed once, by the code
//! that knows its shape. The rules (<https://modelcontextprotocol.io/specification/2026-07-28/basic>, JSON-RPC; JSON-RPC
//! 2.0 §4–5):
//!
//! - bytes that are not JSON (invalid UTF-8 included) → -32700, id null;
//! - JSON that is not a JSON-RPC 2.0 message → -32600: a wrong or missing `jsonrpc`, an id
//!   that is null (in a request), fractional, boolean, an object or an array, a duplicate
//!   key, `params` that is neither an object nor an array, a response with both or neither
//!   of `result` and `error`, a batch where batches are not allowed.

use std::borrow::Cow;
use std::fmt;

use bytes::Bytes;
use mcp_types::{ErrorCode, RequestId};
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::params::Params;

/// A decoded message.
#[derive(Debug)]
#[non_exhaustive]
pub enum Message {
    /// A request: it expects a response with the same id.
    Request(Request),
    /// A notification: no id, no response.
    Notification(Notification),
    /// A response to one of our requests.
    Response(Response),
}

/// An incoming request.
#[derive(Debug)]
#[non_exhaustive]
pub struct Request {
    /// The id the response must carry.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The params (an object or an array), if present, as checked JSON ([`Params`]).
    pub params: Option<Params>,
}

impl Request {
    /// A request built in process, for a layer that hands a handler a request of its own
    /// making (the dual-era shim re-runs a request with the answers it collected).
    pub fn new(id: RequestId, method: impl Into<String>, params: Option<Box<RawValue>>) -> Self {
        Request {
            id,
            method: method.into(),
            params: params.map(Params::from),
        }
    }
}

/// An incoming notification.
#[derive(Debug)]
#[non_exhaustive]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The params, as raw JSON (an object or an array), if present.
    pub params: Option<Box<RawValue>>,
}

/// An incoming response.
#[derive(Debug)]
#[non_exhaustive]
pub struct Response {
    /// The id of the request it answers; `None` when the peer could not read that id (an
    /// error response to a message it could not parse).
    pub id: Option<RequestId>,
    /// The result, as raw JSON, or the error.
    pub outcome: Result<Box<RawValue>, ErrorObject>,
}

impl Response {
    /// A response to `id` (`None` for an error whose request's id could not be read).
    pub fn new(id: Option<RequestId>, outcome: Result<Box<RawValue>, ErrorObject>) -> Self {
        Response { id, outcome }
    }
}

/// The `result` of a successful response, as the peer sent it
/// ([`Peer::request_encoded`](crate::Peer::request_encoded)): a `RawValue` the decoder
/// checked, which the caller parses into its own type.
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
pub struct RawResult(Box<RawValue>);

impl From<Box<RawValue>> for RawResult {
    fn from(raw: Box<RawValue>) -> Self {
        RawResult(raw)
    }
}

impl RawResult {
    /// The result's JSON text: exactly one JSON value.
    pub fn text(&self) -> &str {
        self.0.get()
    }

    /// [`text`](Self::text) as bytes.
    pub fn bytes(&self) -> &[u8] {
        self.0.get().as_bytes()
    }

    /// Whether [`text`](Self::text) is known to be exactly one JSON value: always `true`,
    /// since every frame is decoded whole (kept for the callers that asked).
    pub fn is_checked(&self) -> bool {
        true
    }

    /// The result as an owned `RawValue`.
    ///
    /// # Errors
    ///
    /// None: the result was checked when its frame was decoded. The `Result` is kept for
    /// the callers written when results could arrive unchecked.
    pub fn into_raw_value(self) -> Result<Box<RawValue>, crate::Error> {
        Ok(self.0)
    }

    /// The id and the result of a frame that is a successful response to a request with
    /// an id, decoded whole ([`decode`] with the default options); `None` for any other
    /// frame: an error response, another message, or one the decoder refuses.
    ///
    /// ```
    /// # use mcp_jsonrpc::RawResult;
    /// let frame = bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","id":3,"result":{"n":1}}"#);
    /// let (id, result) = RawResult::from_response_frame(&frame).unwrap();
    /// assert_eq!(id, mcp_types::RequestId::Integer(3));
    /// assert_eq!(result.text(), r#"{"n":1}"#);
    /// ```
    pub fn from_response_frame(frame: &Bytes) -> Option<(RequestId, RawResult)> {
        match decode(frame, DecodeOptions::default()) {
            Ok(Decoded::Single(Message::Response(Response {
                id: Some(id),
                outcome: Ok(result),
            }))) => Some((id, RawResult(result))),
            _ => None,
        }
    }
}

/// A JSON-RPC error object: `{code, message, data?}`.
///
/// Protocol errors are data: a handler returns one, a caller receives one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ErrorObject {
    /// The error code.
    pub code: ErrorCode,
    /// A short description, for people.
    pub message: String,
    /// Additional information defined by the sender.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}

impl ErrorObject {
    /// An error with a code and a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The same error with `data` attached.
    #[must_use]
    pub fn with_data(mut self, data: serde_json::Value) -> Self {
        self.data = Some(data);
        self
    }

    /// -32601: the method does not exist or is not offered.
    pub fn method_not_found(method: &str) -> Self {
        ErrorObject::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("method not found: {method}"),
        )
    }

    /// -32602: the params are invalid.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        ErrorObject::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// -32603: an internal error.
    pub fn internal(message: impl Into<String>) -> Self {
        ErrorObject::new(ErrorCode::INTERNAL_ERROR, message)
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ErrorObject {}

/// Why a frame is not a message, with the JSON-RPC error to answer it with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
#[non_exhaustive]
pub struct DecodeError {
    /// -32700 (not JSON) or -32600 (not a valid JSON-RPC message).
    pub code: ErrorCode,
    /// The id of the offending request, when it could be read; the answer carries it.
    pub id: Option<RequestId>,
    /// What was wrong.
    pub message: String,
}

impl DecodeError {
    fn parse(message: impl fmt::Display) -> Self {
        DecodeError {
            code: ErrorCode::PARSE_ERROR,
            id: None,
            message: format!("parse error: {message}"),
        }
    }

    pub(crate) fn invalid(id: Option<RequestId>, message: impl fmt::Display) -> Self {
        DecodeError {
            code: ErrorCode::INVALID_REQUEST,
            id,
            message: format!("invalid request: {message}"),
        }
    }

    /// The error object to send back.
    pub fn to_error_object(&self) -> ErrorObject {
        ErrorObject::new(self.code, self.message.clone())
    }
}

/// What one frame held: a message, or (where allowed) a batch of them.
#[derive(Debug)]
#[non_exhaustive]
pub enum Decoded {
    /// One message.
    Single(Message),
    /// A batch (2025-03-26 only, and only when the caller opted in): each element decoded
    /// on its own, so one bad element does not spoil the rest.
    Batch(Vec<Result<Message, DecodeError>>),
}

/// How strictly frames are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct DecodeOptions {
    /// The largest batch accepted; `None` refuses every batch (the default: batches exist
    /// only in revision 2025-03-26).
    pub max_batch: Option<usize>,
}

/// Decodes one frame.
///
/// ```
/// use mcp_jsonrpc::{decode, DecodeOptions, Decoded, Message};
///
/// let frame = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
/// let Ok(Decoded::Single(Message::Request(request))) = decode(frame, DecodeOptions::default()) else {
///     panic!("a request");
/// };
/// assert_eq!(request.method, "tools/list");
///
/// let err = decode(b"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"x\"}", DecodeOptions::default()).unwrap_err();
/// assert_eq!(err.code, mcp_types::ErrorCode::INVALID_REQUEST);
/// ```
pub fn decode(frame: &[u8], options: DecodeOptions) -> Result<Decoded, DecodeError> {
    let first = frame.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        return decode_batch(frame, options);
    }
    decode_message(frame).map(Decoded::Single)
}

fn decode_batch(frame: &[u8], options: DecodeOptions) -> Result<Decoded, DecodeError> {
    // A batch's elements are kept only up to the limit: past it they are read to check the
    // frame is JSON, and counted, but never stored. A 4 MiB frame of tiny elements would
    // otherwise take a reference per element (16 bytes for each two-byte `0,`) before its
    // size was even looked at.
    let max = options.max_batch.unwrap_or(0);
    let mut reader = serde_json::Deserializer::from_slice(frame);
    let (elements, count) = (&mut reader)
        .deserialize_seq(BatchVisitor { keep: max })
        // Bytes after the array make the frame something other than JSON.
        .and_then(|batch| reader.end().map(|()| batch))
        .map_err(|e| classify(&e))?;
    if options.max_batch.is_none() {
        return Err(DecodeError::invalid(None, "batches are not supported"));
    }
    if count == 0 {
        return Err(DecodeError::invalid(None, "empty batch"));
    }
    if count > max {
        return Err(DecodeError::invalid(
            None,
            format_args!("batch of {count} messages exceeds the limit of {max}"),
        ));
    }
    Ok(Decoded::Batch(
        elements
            .into_iter()
            .map(|raw| decode_message(raw.get().as_bytes()))
            .collect(),
    ))
}

/// Reads a batch's array: its first `keep` elements as raw text, the rest skipped and
/// counted.
struct BatchVisitor {
    keep: usize,
}

impl<'de> Visitor<'de> for BatchVisitor {
    type Value = (Vec<&'de RawValue>, usize);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC batch (an array of messages)")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut kept = Vec::with_capacity(self.keep.min(seq.size_hint().unwrap_or(0)));
        let mut count = 0usize;
        while count < self.keep {
            let Some(element) = seq.next_element::<&RawValue>()? else {
                return Ok((kept, count));
            };
            kept.push(element);
            count += 1;
        }
        while seq.next_element::<IgnoredAny>()?.is_some() {
            count = count.saturating_add(1);
        }
        Ok((kept, count))
    }
}

/// -32700 for bytes that are not JSON; -32600 for JSON of the wrong shape.
fn classify(e: &serde_json::Error) -> DecodeError {
    match e.classify() {
        serde_json::error::Category::Data => DecodeError::invalid(None, e),
        _ => DecodeError::parse(e),
    }
}

fn decode_message(frame: &[u8]) -> Result<Message, DecodeError> {
    let envelope: Envelope<'_> = serde_json::from_slice(frame).map_err(|e| classify(&e))?;
    // JSON text is UTF-8 (RFC 8259, 8.1): a skipped member is the one place where serde_json
    // did not check it (found by the `message` fuzz target).
    if envelope.skipped
        && let Err(e) = std::str::from_utf8(frame)
    {
        return Err(DecodeError::parse(format_args!("invalid UTF-8: {e}")));
    }

    // The id first, so that every later complaint can carry it; an id given twice is no id.
    if envelope.duplicate == Some("id") {
        return Err(DecodeError::invalid(None, "duplicate key `id`"));
    }
    let id = match envelope.id {
        None => None,
        Some(raw) if raw.get() == "null" => None,
        Some(raw) => Some(match plain_id(raw.get()) {
            Some(id) => id,
            None => serde_json::from_str::<RequestId>(raw.get())
                .map_err(|e| DecodeError::invalid(None, format_args!("bad id: {e}")))?,
        }),
    };
    let id_was_null = envelope.id.is_some_and(|raw| raw.get() == "null");
    if let Some(key) = envelope.duplicate {
        return Err(DecodeError::invalid(
            id,
            format_args!("duplicate key `{key}`"),
        ));
    }

    match envelope.jsonrpc.map(|raw| match raw.get() {
        "\"2.0\"" => Ok(Cow::Borrowed("2.0")),
        text => serde_json::from_str::<Cow<'_, str>>(text),
    }) {
        Some(Ok(v)) if v == "2.0" => {}
        Some(_) => return Err(DecodeError::invalid(id, "`jsonrpc` must be \"2.0\"")),
        None => return Err(DecodeError::invalid(id, "missing `jsonrpc`")),
    }

    if let Some(params) = envelope.params {
        let text = params.get();
        if !(text.starts_with('{') || text.starts_with('[')) {
            return Err(DecodeError::invalid(
                id,
                "`params` must be an object or an array",
            ));
        }
    }

    if let Some(method) = envelope.method {
        let method: String = match plain_string(method.get()) {
            Some(plain) => plain.to_owned(),
            None => serde_json::from_str(method.get())
                .map_err(|_| DecodeError::invalid(id.clone(), "`method` must be a string"))?,
        };
        if envelope.result.is_some() || envelope.error.is_some() {
            return Err(DecodeError::invalid(
                id,
                "a request cannot carry `result` or `error`",
            ));
        }
        let params = envelope.params.map(RawValue::to_owned);
        return match id {
            Some(id) => Ok(Message::Request(Request::new(id, method, params))),
            None if id_was_null => Err(DecodeError::invalid(None, "a request id cannot be null")),
            None => Ok(Message::Notification(Notification { method, params })),
        };
    }

    let outcome = match (envelope.result, envelope.error) {
        (Some(result), None) => Ok(result.to_owned()),
        (None, Some(error)) => Err(serde_json::from_str::<ErrorObject>(error.get()).map_err(
            |e| DecodeError::invalid(id.clone(), format_args!("bad error object: {e}")),
        )?),
        (Some(_), Some(_)) => {
            return Err(DecodeError::invalid(
                id,
                "a response cannot carry both `result` and `error`",
            ));
        }
        (None, None) => {
            return Err(DecodeError::invalid(id, "neither a request nor a response"));
        }
    };
    // An error response may lack its id (null or absent) when the peer could not read the
    // request's; a result always answers a known request.
    if id.is_none() && outcome.is_ok() {
        return Err(DecodeError::invalid(
            None,
            "a successful response needs a non-null `id`",
        ));
    }
    Ok(Message::Response(Response { id, outcome }))
}

/// The contents of `raw`, a JSON value already validated by the parser, when it is a string
/// without escapes: the common case, read without a second parse.
fn plain_string(raw: &str) -> Option<&str> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    (!inner.contains('\\')).then_some(inner)
}

/// A request id read without a second parse when it is a plain string or an integer that
/// fits `i64` (the parser has validated `raw` as JSON already, so digits with an optional
/// minus sign are an integer). Anything else goes through `RequestId`'s own rules.
fn plain_id(raw: &str) -> Option<RequestId> {
    if let Some(text) = plain_string(raw) {
        return Some(RequestId::String(text.to_owned()));
    }
    let digits = raw.strip_prefix('-').unwrap_or(raw);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    raw.parse::<i64>().ok().map(RequestId::Integer)
}

/// The envelope members, borrowed from the frame; everything else is skipped.
#[derive(Default)]
struct Envelope<'a> {
    jsonrpc: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    method: Option<&'a RawValue>,
    params: Option<&'a RawValue>,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
    /// A member other than these six was skipped. serde_json skips a value without
    /// checking that its strings are UTF-8 (the six members are checked: keys and raw
    /// values are `str`), so such a frame is checked whole before it is accepted.
    skipped: bool,
    /// The first of the six members given twice: the message is refused, but read to the
    /// end first, so that the refusal can name its id (unless the id is what was repeated).
    duplicate: Option<&'static str>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Envelope<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EnvelopeVisitor)
    }
}

struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Envelope<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope<'de>, A::Error> {
        let mut envelope = Envelope::default();
        while let Some(mcp_types::ObjectKey(key)) = map.next_key()? {
            let (name, slot) = match &*key {
                "jsonrpc" => ("jsonrpc", &mut envelope.jsonrpc),
                "id" => ("id", &mut envelope.id),
                "method" => ("method", &mut envelope.method),
                "params" => ("params", &mut envelope.params),
                "result" => ("result", &mut envelope.result),
                "error" => ("error", &mut envelope.error),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    envelope.skipped = true;
                    continue;
                }
            };
            if slot.is_some() {
                map.next_value::<IgnoredAny>()?;
                envelope.skipped = true;
                envelope.duplicate.get_or_insert(name);
                continue;
            }
            *slot = Some(map.next_value()?);
        }
        Ok(envelope)
    }
}

#[derive(Serialize)]
struct OutRequest<'a, P: ?Sized> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a P>,
}

#[derive(Serialize)]
struct OutNotification<'a, P: ?Sized> {
    jsonrpc: &'static str,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a P>,
}

#[derive(Serialize)]
struct OutResult<'a, R: ?Sized> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a R,
}

#[derive(Serialize)]
struct OutError<'a> {
    jsonrpc: &'static str,
    id: Option<&'a RequestId>,
    error: &'a ErrorObject,
}

fn to_frame(value: &impl Serialize) -> Result<Bytes, serde_json::Error> {
    Ok(Bytes::from(mcp_json::to_vec(value)?))
}

/// Encodes a request. The frame is one line: serde_json escapes every control character.
pub fn encode_request<P: Serialize + ?Sized>(
    id: &RequestId,
    method: &str,
    params: Option<&P>,
) -> Result<Bytes, serde_json::Error> {
    to_frame(&OutRequest {
        jsonrpc: "2.0",
        id,
        method,
        params,
    })
}

/// Encodes a notification.
pub fn encode_notification<P: Serialize + ?Sized>(
    method: &str,
    params: Option<&P>,
) -> Result<Bytes, serde_json::Error> {
    to_frame(&OutNotification {
        jsonrpc: "2.0",
        method,
        params,
    })
}

/// Encodes a successful response.
pub fn encode_result<R: Serialize + ?Sized>(
    id: &RequestId,
    result: &R,
) -> Result<Bytes, serde_json::Error> {
    to_frame(&OutResult {
        jsonrpc: "2.0",
        id,
        result,
    })
}

/// Encodes a successful response whose result is already JSON text (what a
/// [`Handler`](crate::Handler) returns). The frame is sized exactly and the result copied
/// once, where [`encode_result`] would serialize it again into a growing buffer.
pub fn encode_raw_result(id: &RequestId, result: &RawValue) -> Bytes {
    let result = result.get().as_bytes();
    let mut buf = result_head(id, result.len() + 1);
    buf.extend_from_slice(result);
    buf.push(b'}');
    Bytes::from(buf)
}

/// A successful response whose result is already JSON text, as three pieces to be sent
/// one after the other: the envelope up to the result, the result itself (its own
/// allocation, not copied), and the closing brace. Their concatenation is exactly
/// [`encode_raw_result`]'s frame.
///
/// For a transport that writes a message from several buffers (an HTTP body of several
/// frames, written with one `writev`): a large result then never passes through
/// `memcpy`, which [`encode_raw_result`] must do to make one frame (a 64 KiB `tools/call`
/// result over HTTP).
///
/// ```
/// use mcp_jsonrpc::{encode_raw_result, encode_raw_result_parts};
/// use mcp_types::RequestId;
/// use serde_json::value::RawValue;
///
/// let result = RawValue::from_string(r#"{"content":[]}"#.to_owned()).unwrap();
/// let id = RequestId::Integer(7);
/// let one = encode_raw_result(&id, &result);
/// let [head, body, tail] = encode_raw_result_parts(&id, result);
/// assert_eq!([&head[..], &body[..], &tail[..]].concat(), one.to_vec());
/// assert_eq!(&body[..], br#"{"content":[]}"#);
/// ```
pub fn encode_raw_result_parts(id: &RequestId, result: Box<RawValue>) -> [Bytes; 3] {
    let head = Bytes::from(result_head(id, 0));
    let result: Box<str> = result.into();
    [
        head,
        Bytes::from(result.into_string()),
        Bytes::from_static(b"}"),
    ]
}

/// From this size on (16 KiB), a result is best sent as [`encode_raw_result_parts`]' three
/// pieces rather than copied into one frame by [`encode_raw_result`]: the copy of a large
/// result (a `tools/list` page of hundreds of tools, a 64 KiB `tools/call` result) costs
/// more than writing two more buffers, which a transport does with one `writev`. Below
/// it, one frame is cheaper. The engine and the Streamable HTTP server both split here.
pub const SPLIT_RESULT_AT: usize = 16 << 10;

/// `{"jsonrpc":"2.0","id":ID,"result":` in a buffer with room for `more` bytes after it.
fn result_head(id: &RequestId, more: usize) -> Vec<u8> {
    const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
    const MIDDLE: &[u8] = br#","result":"#;
    // An id is an integer (at most 20 digits and a sign) or a string; a string's escaped
    // length is found by serializing it, so only the common case is sized up front.
    let mut buf = Vec::with_capacity(HEAD.len() + 24 + MIDDLE.len() + more);
    buf.extend_from_slice(HEAD);
    // A request id always serializes (an integer or a string).
    if serde_json::to_writer(&mut buf, id).is_err() {
        buf.extend_from_slice(b"null");
    }
    buf.extend_from_slice(MIDDLE);
    buf
}

/// Encodes an error response; `id` is `None` (serialized as `null`) when the request's id
/// could not be read.
pub fn encode_error(id: Option<&RequestId>, error: &ErrorObject) -> Bytes {
    // An error object of a code, a string and a JSON value always serializes.
    to_frame(&OutError {
        jsonrpc: "2.0",
        id,
        error,
    })
    .unwrap_or_else(|_| {
        Bytes::from_static(
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"unencodable error"}}"#,
        )
    })
}
