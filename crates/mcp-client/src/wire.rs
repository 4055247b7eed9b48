//! The request `_meta` of <https://modelcontextprotocol.io/specification/2026-07-28/basic> and the params of the hottest
//! request, `tools/call` (<https://modelcontextprotocol.io/specification/2026-07-28/server/tools>), written straight from what
//! the client holds, without building the typed params first.
//!
//! The typed path builds a [`RequestMetaObject`](mcp_types::RequestMetaObject) per request
//! (cloning the client's capabilities and identity) and a
//! [`CallToolRequestParams`](mcp_types::CallToolRequestParams) (cloning the arguments), then
//! serializes both. Here the capabilities and `clientInfo` are serialized once per client
//! ([`FixedMeta`]) and copied into each request as they are, and the params borrow the
//! caller's arguments. The members come out in the order the typed path writes them, so the
//! frames are byte for byte the same (tested below).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mcp_json as json;
use mcp_jsonrpc::RawResult;
use mcp_types::{
    CallToolResult, ClientCapabilities, ContentBlock, Implementation, InputResponses, JsonObject,
    LoggingLevel, ProgressToken, RequestId, ResultMetaObject, ResultType, TextContent,
};
use serde::Deserialize as _;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// The parts of every request's `_meta` that stay the same for the client's lifetime,
/// serialized once: the capabilities and `clientInfo`, and the whole `_meta` of a call
/// that adds nothing (no progress token, no trace context) for the newest version.
#[derive(Debug)]
pub(crate) struct FixedMeta {
    capabilities: Box<RawValue>,
    client_info: Box<RawValue>,
    log_level: Option<LoggingLevel>,
    /// `_meta` for [`PLAIN_VERSION`](Self::PLAIN_VERSION) with nothing per call.
    plain: Option<Box<RawValue>>,
    /// The last result `_meta` read, with its text ([`FixedMeta::result_meta`]).
    last_result_meta: Mutex<Option<(Box<str>, ResultMetaObject)>>,
}

impl FixedMeta {
    /// The version [`plain`](Self::plain) is written for: the newest, which a client keeps
    /// unless a server asks for another.
    const PLAIN_VERSION: &'static str = crate::SUPPORTED_VERSIONS[0];

    /// Serializes the client's capabilities and identity; `None` if either cannot be
    /// serialized (then the client writes every request the typed way).
    pub(crate) fn new(
        capabilities: &ClientCapabilities,
        info: &Implementation,
        log_level: Option<LoggingLevel>,
    ) -> Option<Arc<Self>> {
        let mut fixed = Arc::new(FixedMeta {
            capabilities: serde_json::value::to_raw_value(capabilities).ok()?,
            client_info: serde_json::value::to_raw_value(info).ok()?,
            log_level,
            plain: None,
            last_result_meta: Mutex::new(None),
        });
        let plain = serde_json::value::to_raw_value(&WireMeta {
            fixed: Arc::clone(&fixed),
            protocol_version: Self::PLAIN_VERSION,
            progress_token: None,
            trace: None,
        })
        .ok()?;
        // The `WireMeta` above is gone: this is the only handle.
        Arc::get_mut(&mut fixed)?.plain = Some(plain);
        Some(fixed)
    }
}

/// One request's `_meta`: the fixed part, the protocol version, and what this call adds.
pub(crate) struct WireMeta {
    pub(crate) fixed: Arc<FixedMeta>,
    pub(crate) protocol_version: &'static str,
    pub(crate) progress_token: Option<ProgressToken>,
    /// W3C trace context (`traceparent`, `tracestate`).
    pub(crate) trace: Option<(String, Option<String>)>,
}

impl WireMeta {
    /// The `_meta` written once ([`FixedMeta`]), when this call adds nothing to it.
    fn plain(&self) -> Option<&RawValue> {
        self.fixed.plain.as_deref().filter(|_| {
            self.progress_token.is_none()
                && self.trace.is_none()
                && self.protocol_version == FixedMeta::PLAIN_VERSION
        })
    }
}

impl Serialize for WireMeta {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if let Some(plain) = self.plain() {
            return plain.serialize(serializer);
        }
        // The order of `RequestMetaObject`'s members, then its `extra` (trace context).
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry(
            "io.modelcontextprotocol/clientCapabilities",
            &*self.fixed.capabilities,
        )?;
        map.serialize_entry(
            "io.modelcontextprotocol/clientInfo",
            &*self.fixed.client_info,
        )?;
        if let Some(level) = &self.fixed.log_level {
            map.serialize_entry("io.modelcontextprotocol/logLevel", level)?;
        }
        map.serialize_entry(
            "io.modelcontextprotocol/protocolVersion",
            self.protocol_version,
        )?;
        if let Some(token) = &self.progress_token {
            map.serialize_entry("progressToken", token)?;
        }
        if let Some((parent, state)) = &self.trace {
            map.serialize_entry("traceparent", parent)?;
            if let Some(state) = state {
                map.serialize_entry("tracestate", state)?;
            }
        }
        map.end()
    }
}

/// What an HTTP request's `Mcp-Name` and `Mcp-Param-*` headers are made of; nothing for
/// the other transports.
#[cfg(feature = "http")]
pub(crate) use crate::http::Routing;

/// Without HTTP there are no headers to make.
#[cfg(not(feature = "http"))]
#[derive(Clone, Copy)]
#[allow(dead_code, reason = "read by the HTTP transport only")]
pub(crate) struct Routing<'a> {
    pub(crate) name: &'a str,
    pub(crate) arguments: Option<&'a JsonObject>,
}

/// The params of `tools/call`, borrowing the caller's name and arguments and the current
/// MRTR round's answers and state.
#[derive(serde::Serialize)]
pub(crate) struct CallToolParams<'a> {
    #[serde(rename = "_meta")]
    pub(crate) meta: WireMeta,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) arguments: Option<&'a JsonObject>,
    #[serde(rename = "inputResponses", skip_serializing_if = "Option::is_none")]
    pub(crate) input_responses: Option<&'a InputResponses>,
    pub(crate) name: &'a str,
    #[serde(rename = "requestState", skip_serializing_if = "Option::is_none")]
    pub(crate) request_state: Option<&'a str>,
}

/// Request params as [`encode_request`] writes them into a frame: the JSON text their
/// `Serialize` writes, which [`Plain`] writes with `serde_json`, and [`CallToolParams`]
/// with its member names as they are.
pub(crate) trait WireParams: Serialize {
    /// Appends the params' JSON text, exactly what `serde_json::to_writer` writes (written
    /// by `mcp_json`, which writes what `serde_json` does, with a faster string
    /// escape scan).
    fn write_params(&self, frame: &mut String) -> Result<(), serde_json::Error>;
}

/// Any params, written by `serde_json`.
pub(crate) struct Plain<'a, P: ?Sized>(pub(crate) &'a P);

impl<P: Serialize + ?Sized> Serialize for Plain<'_, P> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<P: Serialize + ?Sized> WireParams for Plain<'_, P> {
    fn write_params(&self, frame: &mut String) -> Result<(), serde_json::Error> {
        json::write(frame, self.0)
    }
}

impl WireParams for Value {
    fn write_params(&self, frame: &mut String) -> Result<(), serde_json::Error> {
        json::write(frame, self)
    }
}

impl WireParams for CallToolParams<'_> {
    /// The derived `Serialize`'s members, in its order, each name written as it is.
    fn write_params(&self, frame: &mut String) -> Result<(), serde_json::Error> {
        frame.push_str(r#"{"_meta":"#);
        match self.meta.plain() {
            // Its text as it is (what the `RawValue` writes, without the serializer).
            Some(plain) => frame.push_str(plain.get()),
            None => json::write(frame, &self.meta)?,
        }
        if let Some(arguments) = self.arguments {
            frame.push_str(r#","arguments":"#);
            json::write_object(frame, arguments)?;
        }
        if let Some(responses) = self.input_responses {
            frame.push_str(r#","inputResponses":"#);
            json::write(frame, responses)?;
        }
        frame.push_str(r#","name":"#);
        json::write(frame, self.name)?;
        if let Some(state) = self.request_state {
            frame.push_str(r#","requestState":"#);
            json::write(frame, state)?;
        }
        frame.push('}');
        Ok(())
    }
}

/// The length of the last request frame [`encode_request`] wrote: the next one's starting
/// capacity (capped at [`MAX_HINT`]), so that a frame is written into one allocation
/// instead of growing from 128 bytes twice or more.
static LAST_FRAME: AtomicUsize = AtomicUsize::new(0);

/// The largest starting capacity: one large request does not make every later small one
/// allocate as much.
const MAX_HINT: usize = 8 * 1024;

/// A request's frame, byte for byte what [`mcp_jsonrpc::encode_request`] writes for
/// `Some(params)` (tested below), with the envelope's member names written as they are
/// rather than escaped one by one, and the buffer sized from the last frame.
pub(crate) fn encode_request<P: WireParams + ?Sized>(
    id: &RequestId,
    method: &str,
    params: &P,
) -> Result<Vec<u8>, serde_json::Error> {
    // Room for a few more digits of the id than the last frame had.
    let hint = LAST_FRAME.load(Ordering::Relaxed).min(MAX_HINT) + 8;
    let mut frame = String::with_capacity(hint);
    frame.push_str(r#"{"jsonrpc":"2.0","id":"#);
    json::write(&mut frame, id)?;
    frame.push_str(r#","method":"#);
    json::write(&mut frame, method)?;
    frame.push_str(r#","params":"#);
    params.write_params(&mut frame)?;
    frame.push('}');
    LAST_FRAME.store(frame.len(), Ordering::Relaxed);
    Ok(frame.into_bytes())
}

/// `CallToolResult` as its derived `Deserialize` reads it (the same members, defaults and
/// unknown members ignored), with its content blocks read by [`WireBlock`] and its `_meta`
/// kept as text for [`FixedMeta::result_meta`]. Whatever it reads is what
/// `serde_json::from_str::<CallToolResult>` reads; where it fails, the caller reads the
/// result that way (for the same outcome and error).
#[derive(serde::Deserialize)]
struct WireCallToolResult<'a> {
    #[serde(rename = "_meta", default, borrow)]
    meta: Option<&'a RawValue>,
    #[serde(deserialize_with = "content_blocks")]
    content: Vec<ContentBlock>,
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
    #[serde(rename = "resultType", default)]
    result_type: ResultType,
    #[serde(rename = "structuredContent", default)]
    structured_content: Option<Value>,
}

/// A `tools/call` result read in one pass when it is complete (`resultType` absent or
/// `"complete"`); `None` for any other result, or one this read fails on, which the
/// caller then reads the typed way (for the same outcome and error).
pub(crate) fn complete_result(fixed: &FixedMeta, result: &RawResult) -> Option<CallToolResult> {
    if let Some(read) = text_result(fixed, result.bytes()) {
        return Some(read);
    }
    let wire: WireCallToolResult<'_> = serde_json::from_str(result.text()).ok()?;
    if wire.result_type != ResultType::Complete {
        return None;
    }
    wire.into_result(fixed)
}

/// The commonest complete result read without serde's machinery: an object of at most
/// `_meta` (the same text as the last one read, [`FixedMeta::cached_meta`]), `content` (text
/// blocks of exactly a `text` and `"type": "text"`) and `"resultType": "complete"`, each
/// once, in any order, without whitespace. It reads what the derived `Deserialize` reads
/// (tested below); anything else is `None`, and [`complete_result`] reads it that way.
/// The text is read as bytes: what is not a literal here is the cached `_meta`'s text
/// (UTF-8) or a string that [`json_string`] checks, so the whole is not checked first.
fn text_result(fixed: &FixedMeta, text: &[u8]) -> Option<CallToolResult> {
    let mut rest = text.strip_prefix(b"{")?;
    let mut meta = None;
    let mut content = None;
    let mut result_type = None;
    loop {
        // Each name as it is written without escapes, with its colon.
        rest = if let Some(value) = rest.strip_prefix(br#""_meta":"#)
            && meta.is_none()
        {
            let (cached, after) = fixed.cached_meta(value)?;
            meta = Some(cached);
            after
        } else if let Some(value) = rest.strip_prefix(br#""content":"#)
            && content.is_none()
        {
            let (blocks, after) = text_blocks(value)?;
            content = Some(blocks);
            after
        } else if let Some(value) = rest.strip_prefix(br#""resultType":"#)
            && result_type.is_none()
        {
            result_type = Some(ResultType::Complete);
            value.strip_prefix(br#""complete""#)?
        } else {
            return None;
        };
        match rest {
            [b',', after @ ..] => rest = after,
            [b'}'] => break,
            _ => return None,
        }
    }
    let mut result = CallToolResult::new(content?);
    result.meta = meta;
    result.result_type = result_type.unwrap_or_default();
    (result.result_type == ResultType::Complete).then_some(result)
}

/// How far [`json_string`] looks for the end of a string without escapes byte by byte.
const SHORT_STRING: usize = 64;

/// A JSON string at the start of `text`, and what follows it. One without escapes or
/// control characters is its bytes, checked as UTF-8; any other is read by `serde_json`
/// (so with its checks, escapes and errors).
fn json_string(text: &[u8]) -> Option<(String, &[u8])> {
    let inner = text.strip_prefix(b"\"")?;
    let head = &inner[..inner.len().min(SHORT_STRING)];
    if let Some(end) = head
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        && inner[end] == b'"'
    {
        let value = String::from_utf8(inner[..end].to_vec()).ok()?;
        return Some((value, &inner[end + 1..]));
    }
    // A long one: what follows the opening quote checked as UTF-8 at once (bytes that are
    // not fail the result's typed read too), its end found with `memchr`, and a
    // vectorized check for escapes and control characters before it.
    let rest = std::str::from_utf8(inner).ok()?;
    let end = rest.find('"')?;
    #[allow(
        clippy::needless_bitwise_bool,
        reason = "without an early exit the scan is vectorized"
    )]
    let odd = rest.as_bytes()[..end]
        .iter()
        .fold(false, |odd, &b| odd | (b == b'\\') | (b < 0x20));
    if !odd {
        return Some((rest[..end].to_owned(), &inner[end + 1..]));
    }
    let mut strings = serde_json::Deserializer::from_slice(text).into_iter::<String>();
    let value = strings.next()?.ok()?;
    Some((value, &text[strings.byte_offset()..]))
}

/// `[` text blocks `]` at the start of `text` (see [`text_result`]), and what follows.
fn text_blocks(text: &[u8]) -> Option<(Vec<ContentBlock>, &[u8])> {
    let mut rest = text.strip_prefix(b"[")?;
    let mut blocks = Vec::new();
    if let Some(after) = rest.strip_prefix(b"]") {
        return Some((blocks, after));
    }
    loop {
        rest = rest.strip_prefix(b"{")?;
        let mut text = None;
        let mut typed = false;
        loop {
            rest = if let Some(value) = rest.strip_prefix(br#""text":"#)
                && text.is_none()
            {
                let (value, after) = json_string(value)?;
                text = Some(value);
                after
            } else if let Some(value) = rest.strip_prefix(br#""type":"text""#)
                && !typed
            {
                typed = true;
                value
            } else {
                return None;
            };
            match rest {
                [b',', after @ ..] => rest = after,
                [b'}', ..] => break,
                _ => return None,
            }
        }
        if !typed {
            return None;
        }
        if blocks.is_empty() {
            blocks.reserve_exact(1);
        }
        blocks.push(ContentBlock::TextContent(TextContent::new(text?)));
        match rest {
            [b'}', b',', after @ ..] => rest = after,
            [b'}', b']', after @ ..] => return Some((blocks, after)),
            _ => return None,
        }
    }
}

impl WireCallToolResult<'_> {
    /// The typed result, its `_meta` read by `fixed`; `None` if the `_meta` does not read.
    fn into_result(self, fixed: &FixedMeta) -> Option<CallToolResult> {
        let mut result = CallToolResult::new(self.content);
        result.meta = match self.meta {
            Some(raw) => Some(fixed.result_meta(raw)?),
            None => None,
        };
        result.is_error = self.is_error;
        result.result_type = self.result_type;
        result.structured_content = self.structured_content;
        Some(result)
    }
}

impl FixedMeta {
    /// A result's `_meta`, as `ResultMetaObject`'s `Deserialize` reads it. A server sends
    /// the same one with every result (its `serverInfo`), so the last one read is kept with
    /// its text and cloned when the text is the same.
    fn result_meta(&self, raw: &RawValue) -> Option<ResultMetaObject> {
        let mut last = self.last_result_meta();
        if let Some((text, meta)) = &*last
            && **text == *raw.get()
        {
            return Some(meta.clone());
        }
        let meta: ResultMetaObject = serde_json::from_str(raw.get()).ok()?;
        *last = Some((raw.get().into(), meta.clone()));
        Some(meta)
    }

    /// The last result `_meta` read ([`FixedMeta::result_meta`]), if `text` starts with its
    /// text, and what follows it. A JSON value ends where it ends, so text that starts with
    /// a whole value's text holds that value there.
    fn cached_meta<'t>(&self, text: &'t [u8]) -> Option<(ResultMetaObject, &'t [u8])> {
        let last = self.last_result_meta();
        let (cached, meta) = last.as_ref()?;
        let rest = text.strip_prefix(cached.as_bytes())?;
        Some((meta.clone(), rest))
    }

    /// The last result `_meta` read, with its text (a poisoned lock is taken as it is:
    /// the cache holds whole values only).
    fn last_result_meta(&self) -> std::sync::MutexGuard<'_, Option<(Box<str>, ResultMetaObject)>> {
        self.last_result_meta
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// `Vec<ContentBlock>` read block by block with [`WireBlock`]. The first block gets room
/// for itself alone: most results carry one, and a `ContentBlock` is large enough that
/// the usual first allocation (four of them) costs several times more.
fn content_blocks<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<ContentBlock>, D::Error> {
    struct Blocks;
    impl<'de> serde::de::Visitor<'de> for Blocks {
        type Value = Vec<ContentBlock>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a sequence")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Vec<ContentBlock>, A::Error> {
            let mut blocks = Vec::new();
            if let Some(WireBlock(first)) = seq.next_element()? {
                blocks.reserve_exact(1);
                blocks.push(first);
                while let Some(WireBlock(block)) = seq.next_element()? {
                    blocks.push(block);
                }
            }
            Ok(blocks)
        }
    }
    deserializer.deserialize_seq(Blocks)
}

/// One [`ContentBlock`], read in one pass. `ContentBlock`'s own `Deserialize` reads the
/// block into a `Value` first (its tag may come last); here a block of exactly a string
/// `text` and `"type": "text"` (what a text result is) becomes its `TextContent` directly,
/// and any other block is put back together as the `Value` that `ContentBlock` would have
/// read, member by member in the same order, and handed to it. A `text` or `type` that is
/// not a string fails here, and the caller reads the result the typed way.
struct WireBlock(ContentBlock);

/// A content block's member name: the two the fast path knows, or another.
enum BlockKey {
    Text,
    Type,
    Other(String),
}

impl<'de> serde::Deserialize<'de> for BlockKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl serde::de::Visitor<'_> for KeyVisitor {
            type Value = BlockKey;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<BlockKey, E> {
                Ok(match key {
                    "text" => BlockKey::Text,
                    "type" => BlockKey::Type,
                    other => BlockKey::Other(other.to_owned()),
                })
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// A block's `type`: `"text"` is compared where it lies, without a copy.
enum BlockType {
    Text,
    Other(String),
}

impl<'de> serde::Deserialize<'de> for BlockType {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TypeVisitor;
        impl serde::de::Visitor<'_> for TypeVisitor {
            type Value = BlockType;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, kind: &str) -> Result<BlockType, E> {
                Ok(if kind == "text" {
                    BlockType::Text
                } else {
                    BlockType::Other(kind.to_owned())
                })
            }
        }
        deserializer.deserialize_str(TypeVisitor)
    }
}

impl From<BlockType> for Value {
    fn from(kind: BlockType) -> Value {
        match kind {
            BlockType::Text => Value::from("text"),
            BlockType::Other(kind) => Value::String(kind),
        }
    }
}

impl<'de> serde::Deserialize<'de> for WireBlock {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct BlockVisitor;
        impl<'de> serde::de::Visitor<'de> for BlockVisitor {
            type Value = WireBlock;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a content block")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<WireBlock, A::Error> {
                // Every member with its position; `text` and `type` kept apart while each
                // appears once.
                let mut text: Option<(usize, String)> = None;
                let mut kind: Option<(usize, BlockType)> = None;
                let mut others: Vec<(usize, String, Value)> = Vec::new();
                let mut n = 0;
                while let Some(key) = map.next_key::<BlockKey>()? {
                    match key {
                        BlockKey::Text => {
                            if let Some((at, old)) = text.replace((n, map.next_value()?)) {
                                others.push((at, "text".to_owned(), Value::String(old)));
                            }
                        }
                        BlockKey::Type => {
                            if let Some((at, old)) = kind.replace((n, map.next_value()?)) {
                                others.push((at, "type".to_owned(), old.into()));
                            }
                        }
                        BlockKey::Other(key) => others.push((n, key, map.next_value()?)),
                    }
                    n += 1;
                }
                if others.is_empty()
                    && let Some((_, BlockType::Text)) = kind
                    && let Some((_, text)) = text
                {
                    return Ok(WireBlock(ContentBlock::TextContent(TextContent::new(text))));
                }
                // The map `Value` would have read: every member inserted in order (a
                // repeated name keeps its first place and its last value).
                others.extend(text.map(|(at, v)| (at, "text".to_owned(), Value::String(v))));
                others.extend(kind.map(|(at, v)| (at, "type".to_owned(), v.into())));
                others.sort_unstable_by_key(|(at, _, _)| *at);
                let mut object = serde_json::Map::new();
                for (_, key, value) in others {
                    object.insert(key, value);
                }
                ContentBlock::deserialize(Value::Object(object))
                    .map(WireBlock)
                    .map_err(serde::de::Error::custom)
            }
        }
        // Anything but an object fails as `ContentBlock` would (the caller then reads the
        // result the typed way, with its error).
        deserializer.deserialize_map(BlockVisitor)
    }
}

#[cfg(test)]
mod tests {
    use mcp_types::{
        CallToolRequestParams, ClientCapabilitiesElicitation, InputResponse, OrderedMap,
        RequestMetaObject,
    };
    use serde_json::{Value, json};

    use super::*;

    fn typed_meta(
        capabilities: &ClientCapabilities,
        info: &Implementation,
        level: Option<LoggingLevel>,
        token: Option<ProgressToken>,
        trace: Option<(&str, Option<&str>)>,
        version: &str,
    ) -> RequestMetaObject {
        let mut meta = RequestMetaObject::new(capabilities.clone(), version.to_owned());
        meta.client_info = Some(info.clone());
        meta.log_level = level;
        meta.progress_token = token;
        if let Some((parent, state)) = trace {
            meta.extra
                .insert("traceparent".to_owned(), Value::from(parent));
            if let Some(state) = state {
                meta.extra
                    .insert("tracestate".to_owned(), Value::from(state));
            }
        }
        meta
    }

    #[test]
    fn call_params_are_the_typed_params_byte_for_byte() {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(ClientCapabilitiesElicitation::default());
        let mut info = Implementation::new("agent \"x\"", "1.0");
        info.title = Some("An agent\n".to_owned());
        let fixed = FixedMeta::new(&capabilities, &info, None).unwrap();
        assert!(fixed.plain.is_some());
        let fixed_debug = FixedMeta::new(&capabilities, &info, Some(LoggingLevel::Debug)).unwrap();
        let mut arguments = JsonObject::new();
        arguments.insert("text".to_owned(), json!("héllo \u{1}"));
        arguments.insert("n".to_owned(), json!([1, 2.5, {"z": null, "a": true}]));
        let mut answers: InputResponses = OrderedMap::new();
        answers.insert(
            "k".to_owned(),
            serde_json::from_value::<InputResponse>(json!({"action": "decline"})).unwrap(),
        );
        // The first two (and a level alone) take the `_meta` written once; the others
        // write it member by member.
        let cases = [
            (None, None, None, false, "2026-07-28"),
            (Some(LoggingLevel::Debug), None, None, false, "2026-07-28"),
            (None, None, None, true, "2025-11-25"),
            (
                None,
                Some(ProgressToken::String("progress-1".into())),
                Some(("00-ab-cd-01", Some("k=v"))),
                true,
                "2026-07-28",
            ),
            (
                Some(LoggingLevel::Debug),
                Some(ProgressToken::Integer(7)),
                Some(("tp", None)),
                true,
                "2026-07-28",
            ),
        ];
        for (level, token, trace, mrtr, version) in cases {
            let mut typed = CallToolRequestParams::new(
                typed_meta(&capabilities, &info, level, token.clone(), trace, version),
                "echo",
            );
            typed.arguments = Some(arguments.clone());
            if mrtr {
                typed.input_responses = Some(answers.clone());
                typed.request_state = Some("opaque\"state".to_owned());
            }
            let wire = CallToolParams {
                meta: WireMeta {
                    fixed: Arc::clone(if level.is_some() {
                        &fixed_debug
                    } else {
                        &fixed
                    }),
                    protocol_version: version,
                    progress_token: token,
                    trace: trace.map(|(p, s)| (p.to_owned(), s.map(str::to_owned))),
                },
                arguments: Some(&arguments),
                input_responses: mrtr.then_some(&answers),
                name: "echo",
                request_state: mrtr.then_some("opaque\"state"),
            };
            let typed_json = serde_json::to_string(&typed).unwrap();
            assert_eq!(serde_json::to_string(&wire).unwrap(), typed_json);
            // And as the frame writer writes them.
            let mut written = String::new();
            wire.write_params(&mut written).unwrap();
            assert_eq!(written, typed_json);
            // Through a `Value` too (what the HTTP and custom transports make of params).
            assert_eq!(
                serde_json::to_value(&wire).unwrap(),
                serde_json::to_value(&typed).unwrap()
            );
            // And the server reads it back as the typed params.
            let back: CallToolRequestParams = serde_json::from_str(&typed_json).unwrap();
            assert_eq!(back, typed);
        }
    }

    fn fixed() -> Arc<FixedMeta> {
        FixedMeta::new(
            &ClientCapabilities::default(),
            &Implementation::new("c", "1"),
            None,
        )
        .unwrap()
    }

    #[test]
    fn frames_are_the_engines_byte_for_byte() {
        let mut arguments = JsonObject::new();
        arguments.insert("text".to_owned(), json!("a \"quoted\" line\n"));
        let wire = CallToolParams {
            meta: WireMeta {
                fixed: fixed(),
                protocol_version: FixedMeta::PLAIN_VERSION,
                progress_token: None,
                trace: None,
            },
            arguments: Some(&arguments),
            input_responses: None,
            name: "echo",
            request_state: None,
        };
        let ids = [
            RequestId::Integer(1),
            RequestId::Integer(-7),
            RequestId::Integer(i64::MAX),
            RequestId::String("a\"b".into()),
        ];
        for id in &ids {
            for method in ["tools/call", "x/\"odd\"\u{1}"] {
                let ours = encode_request(id, method, &wire).unwrap();
                let engine = mcp_jsonrpc::encode_request(id, method, Some(&wire)).unwrap();
                assert_eq!(ours, engine.as_ref());
                let value = json!({"k": [1, null]});
                let ours = encode_request(id, method, &Plain(&value)).unwrap();
                let engine = mcp_jsonrpc::encode_request(id, method, Some(&value)).unwrap();
                assert_eq!(ours, engine.as_ref());
            }
        }
        // A large frame after small ones, and a small one after it, come out whole.
        let big = json!({"text": "x".repeat(20_000)});
        let ours = encode_request(&ids[0], "m", &Plain(&big)).unwrap();
        assert_eq!(
            ours,
            mcp_jsonrpc::encode_request(&ids[0], "m", Some(&big))
                .unwrap()
                .as_ref()
        );
        let small = encode_request(&ids[0], "m", &Plain(&json!({}))).unwrap();
        assert_eq!(
            small,
            br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{}}"#
        );
    }

    /// The result of a response frame whose result is `text`, as a transport hands it
    /// over; `None` when that frame is no response (the text is not one JSON value), which
    /// then answers nothing.
    fn raw_bytes(text: &[u8]) -> Option<RawResult> {
        let frame = [br#"{"jsonrpc":"2.0","id":1,"result":"#, text, b"}"].concat();
        RawResult::from_response_frame(&frame.into()).map(|(_, result)| result)
    }

    /// [`complete_result`] of the response whose result is `text`; `None` too when there
    /// is no such response.
    fn complete(fixed: &FixedMeta, text: &str) -> Option<CallToolResult> {
        complete_result(fixed, &raw_bytes(text.as_bytes())?)
    }

    #[test]
    fn results_that_are_not_utf8_are_not_read() {
        let fixed = fixed();
        let meta = r#"{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}"#;
        let good = format!(r#"{{"_meta":{meta},"content":[{{"text":"ok","type":"text"}}]}}"#);
        assert!(complete(&fixed, &good).is_some());
        for bad in [&b"\xff"[..], b"\xc3", b"a\xe2\x9c", b"\xed\xa0\x80"] {
            for long in [0, 100] {
                let text = [
                    format!(
                        r#"{{"_meta":{meta},"content":[{{"text":"{}"#,
                        "x".repeat(long)
                    )
                    .as_bytes(),
                    bad,
                    br#"","type":"text"}]}"#,
                ]
                .concat();
                assert_eq!(text_result(&fixed, &text), None, "{bad:?}");
                assert!(raw_bytes(&text).is_none(), "{bad:?}");
            }
        }
    }

    /// What the fast read gives (`None`: it fails, and the caller reads the typed way).
    fn fast(fixed: &FixedMeta, text: &str) -> Option<CallToolResult> {
        let wire: WireCallToolResult<'_> = serde_json::from_str(text).ok()?;
        wire.into_result(fixed)
    }

    #[test]
    fn results_read_as_the_typed_read_does() {
        let fixed = fixed();
        let results = [
            // What our server sends, twice (the second `_meta` comes from the cache).
            r#"{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"content":[{"text":"hi","type":"text"}],"resultType":"complete"}"#,
            r#"{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"content":[{"text":"hi","type":"text"}],"resultType":"complete"}"#,
            // Another `_meta`, with an extension's member; then none, then null.
            r#"{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"t","version":"2"},"x/y":[1]},"content":[{"type":"text","text":"a\u00e9\n"}]}"#,
            r#"{"content":[],"isError":true,"structuredContent":{"a":1}}"#,
            r#"{"_meta":null,"content":[{"type":"text","text":"x"},{"type":"text","text":"y"},{"type":"text","text":"z"},{"type":"text","text":"w"},{"type":"text","text":"v"}]}"#,
            // Blocks that are not a bare text: annotations, `_meta`, other types, a
            // repeated member, an escaped name, an unknown member.
            r#"{"content":[{"type":"text","text":"x","annotations":{"priority":0.5}}]}"#,
            r#"{"content":[{"_meta":{"k":1},"type":"text","text":"x"}]}"#,
            r#"{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}"#,
            r#"{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"t"}}]}"#,
            r#"{"content":[{"type":"resource_link","uri":"file:///a","name":"a"}]}"#,
            r#"{"content":[{"text":"a","type":"text","text":"b"}]}"#,
            r#"{"content":[{"type":"image","type":"text","text":"b"}]}"#,
            r#"{"content":[{"te\u0078t":"a","\u0074ype":"text"}]}"#,
            r#"{"content":[{"text":"a","type":"text","extra":true}]}"#,
            r#"{"content":[{"type":"audio","data":"AA","mimeType":"audio/wav","text":"x"}]}"#,
            // Unknown members of the result, and other result types.
            r#"{"content":[],"other":{"deep":[1,2]},"resultType":"input_required"}"#,
            r#"{"content":[{"text":"x","type":"text"}],"resultType":"task"}"#,
            // Failures: the typed read fails too.
            r#"{"content":[{"text":"x"}]}"#,
            r#"{"content":[{"type":"nope"}]}"#,
            r#"{"content":[{"type":"text"}]}"#,
            r#"{"content":["text"]}"#,
            r#"{"content":{}}"#,
            r#"{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":1}},"content":[]}"#,
            r#"{"_meta":[],"content":[]}"#,
            r#"{"content":[],"content":[]}"#,
            r"{}",
        ];
        for text in results {
            let typed = serde_json::from_str::<CallToolResult>(text);
            match (fast(&fixed, text), typed) {
                (Some(ours), Ok(typed)) => assert_eq!(ours, typed, "{text}"),
                // Where the fast read fails, the typed read decides; it may succeed.
                (None, _) => {}
                (Some(ours), Err(e)) => {
                    panic!("{text}: read {ours:?} where the typed read fails: {e}")
                }
            }
        }
        // The common shapes take the fast read.
        for text in &results[..6] {
            assert!(fast(&fixed, text).is_some(), "{text}");
        }
    }

    #[test]
    fn text_results_read_as_the_typed_read_does() {
        let fixed = fixed();
        let meta = r#"{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}"#;
        let results = [
            // What our server sends: the first one fills the cache, then the text read
            // takes it.
            r#"{"_meta":M,"content":[{"text":"hi","type":"text"}],"resultType":"complete"}"#,
            r#"{"_meta":M,"content":[{"text":"hi","type":"text"}],"resultType":"complete"}"#,
            r#"{"content":[{"type":"text","text":"a\u00e9\n\"q\"\\"}],"_meta":M}"#,
            r#"{"resultType":"complete","content":[]}"#,
            r#"{"content":[{"type":"text","text":"x"},{"text":"y","type":"text"},{"type":"text","text":""}]}"#,
            r#"{"content":[{"text":"é ✓","type":"text"}],"_meta":M}"#,
            // Not for the text read: another `_meta`, a `_meta` that only starts like it,
            // whitespace, other members and blocks, repeats, escapes in names, other
            // result types.
            r#"{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"t","version":"2"}},"content":[]}"#,
            r#"{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"},"x":1},"content":[]}"#,
            r#"{"_meta":null,"content":[]}"#,
            r#"{ "content":[]}"#,
            r#"{"content":[] }"#,
            r#"{"content":[]} "#,
            r#"{"content":[{"text":"x", "type":"text"}]}"#,
            r#"{"content":[{"text":"x","type":"text"} ]}"#,
            r#"{"content":[],"isError":true}"#,
            r#"{"content":[],"structuredContent":{}}"#,
            r#"{"content":[{"text":"x","type":"text","annotations":{}}]}"#,
            r#"{"content":[{"type":"image","data":"AA","mimeType":"image/png"}]}"#,
            r#"{"content":[{"text":"x","type":"texts"}]}"#,
            r#"{"content":[{"text":"x","type":"text","text":"y"}]}"#,
            r#"{"content":[{"text":"x","type":"text","type":"text"}]}"#,
            r#"{"content":[],"content":[]}"#,
            r#"{"_meta":M,"_meta":M,"content":[]}"#,
            r#"{"resultType":"complete","resultType":"complete","content":[]}"#,
            r#"{"con\u0074ent":[]}"#,
            r#"{"content":[{"te\u0078t":"x","type":"text"}]}"#,
            r#"{"content":[],"resultType":"input_required"}"#,
            r#"{"content":[],"resultType":"completed"}"#,
            r#"{"content":[],"resultType":"task"}"#,
            // Failures, for both reads.
            r#"{"content":[{"text":"x"}]}"#,
            r#"{"content":[{"type":"text"}]}"#,
            r#"{"content":[{"text":1,"type":"text"}]}"#,
            r#"{"content":[{"text":"bad \x escape","type":"text"}]}"#,
            "{\"content\":[{\"text\":\"a\u{1}b\",\"type\":\"text\"}]}",
            "{\"con\u{1}tent\":[]}",
            r#"{"content":[{"text":"x","type":"text"}"#,
            r#"{"content":[{"text":"x","type":"text"}]"#,
            r#"{"content":[{"text":"x","type":"text"}],}"#,
            r#"{"content":[{"text":"x","type":"text"},]}"#,
            r#"{"content":[{"text":"x","type":"text",}]}"#,
            r#"{"content":[{"text":"x","type":"text"}]}}"#,
            r#"{"content"}"#,
            r#"{"content":}"#,
            r#"{"_meta":M}"#,
            r"{}",
            r"{",
            "",
        ];
        let mut texts = 0;
        for template in results {
            let text = template.replace('M', meta);
            let typed = serde_json::from_str::<CallToolResult>(&text);
            let ours = text_result(&fixed, text.as_bytes());
            if ours.is_some() {
                texts += 1;
            }
            match (ours, complete(&fixed, &text), typed) {
                (Some(ours), Some(full), Ok(typed)) => {
                    assert_eq!(ours, typed, "{text}");
                    assert_eq!(full, typed, "{text}");
                }
                (None, Some(full), Ok(typed)) => assert_eq!(full, typed, "{text}"),
                (None, None, _) => {}
                (ours, full, typed) => panic!("{text}: {ours:?} / {full:?} / {typed:?}"),
            }
        }
        // Long texts, plain and with an escape or a control character at the end.
        let long = "x".repeat(70_000);
        for tail in ["", "\\n", "\\\"", "\u{1f}", "\\q"] {
            let text = format!(r#"{{"content":[{{"text":"{long}{tail}","type":"text"}}]}}"#);
            let typed = serde_json::from_str::<CallToolResult>(&text).ok();
            assert_eq!(text_result(&fixed, text.as_bytes()), typed, "{tail}");
            assert_eq!(complete(&fixed, &text), typed, "{tail}");
            assert_eq!(typed.is_some(), !matches!(tail, "\u{1f}" | "\\q"), "{tail}");
        }
        // All but the first of the first six take the text read, and so do they again
        // once that `_meta` is the last one read again.
        assert_eq!(texts, 5);
        complete(&fixed, &results[0].replace('M', meta)).unwrap();
        for template in &results[..6] {
            let text = template.replace('M', meta);
            assert!(text_result(&fixed, text.as_bytes()).is_some(), "{text}");
        }
    }
}
