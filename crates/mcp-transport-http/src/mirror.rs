//! Server validation of the headers that mirror body fields: `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*`
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>, Request Metadata and Server
//! Validation), plus the one `_meta` rule with an HTTP status of its own: a request without
//! its required `_meta` fields gets `400` and -32602 (<https://modelcontextprotocol.io/specification/2026-07-28/basic>,
//! `_meta`).
//!
//! The body is the source of truth: the envelope has been decoded by `mcp-jsonrpc`, and only
//! the few params members these rules need are read here, borrowed from the body. A
//! rejection is `400` with -32020 (HeaderMismatch) for every header rule.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::ops::Range;

use http::{HeaderMap, StatusCode};
use mcp_jsonrpc::ErrorObject;
use mcp_types::{ErrorCode, Request as _};
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::config::{HttpServerConfig, ParamHeader};
use crate::headers::{self, METHOD, Malformed, NAME, PROTOCOL_VERSION};

/// How much of a mismatched value an error message quotes.
const QUOTE_LIMIT: usize = 120;

/// A request refused before it reaches the handler: the status and the JSON-RPC error.
#[derive(Debug)]
pub(crate) struct Rejection {
    pub(crate) status: StatusCode,
    pub(crate) error: ErrorObject,
}

impl Rejection {
    fn mismatch(message: impl Into<String>) -> Self {
        Rejection {
            status: StatusCode::BAD_REQUEST,
            error: ErrorObject::new(ErrorCode::HEADER_MISMATCH, message),
        }
    }

    fn missing(header: &str) -> Self {
        Rejection::mismatch(format!("Header mismatch: the {header} header is required"))
    }

    fn malformed(header: &str, why: Malformed) -> Self {
        Rejection::mismatch(format!(
            "Header mismatch: the {header} header {}",
            why.describe()
        ))
    }

    fn differs(header: &str, header_value: &str, body_value: impl fmt::Display) -> Self {
        Rejection::mismatch(format!(
            "Header mismatch: {header} header value '{}' does not match body value '{}'",
            Clip(header_value),
            Clip(&body_value.to_string()),
        ))
    }

    fn invalid_params(message: impl Into<String>) -> Self {
        Rejection {
            status: StatusCode::BAD_REQUEST,
            error: ErrorObject::invalid_params(message),
        }
    }
}

/// Checks a request's mirrored headers against its body.
///
/// `params` is the params' text (checked JSON, `mcp_jsonrpc::Params::text`), which this
/// reads whole.
pub(crate) fn check_request(
    headers: &HeaderMap,
    method: &str,
    params: Option<&str>,
    config: &HttpServerConfig,
) -> Result<(), Rejection> {
    let version_header = headers::single(headers, &PROTOCOL_VERSION)
        .map_err(|why| Rejection::malformed("MCP-Protocol-Version", why))?
        .ok_or_else(|| Rejection::missing("MCP-Protocol-Version"))?;

    let name_field = config.name_field_of(method);
    let is_tool_call = method == mcp_types::CallToolRequest::METHOD;
    let peeked = Peek::read(params, name_field, is_tool_call)?;

    // Required `_meta` members: their absence is -32602 with 400, before any comparison.
    let meta = peeked.meta()?;
    let (Some(version), Some(_)) = (meta.protocol_version, meta.client_capabilities) else {
        let mut missing = Vec::with_capacity(2);
        if meta.protocol_version.is_none() {
            missing.push("io.modelcontextprotocol/protocolVersion");
        }
        if meta.client_capabilities.is_none() {
            missing.push("io.modelcontextprotocol/clientCapabilities");
        }
        return Err(Rejection::invalid_params(format!(
            "invalid params: `_meta` lacks the required {}",
            missing.join(" and ")
        )));
    };
    match json_str(version.get()) {
        Some(body) if body == version_header => {}
        Some(body) => {
            return Err(Rejection::differs(
                "MCP-Protocol-Version",
                version_header,
                body,
            ));
        }
        None => {
            return Err(Rejection::differs(
                "MCP-Protocol-Version",
                version_header,
                version,
            ));
        }
    }

    let method_header = headers::single(headers, &METHOD)
        .map_err(|why| Rejection::malformed("Mcp-Method", why))?
        .ok_or_else(|| Rejection::missing("Mcp-Method"))?;
    if method_header != method {
        return Err(Rejection::differs("Mcp-Method", method_header, method));
    }

    if let Some(field) = name_field {
        let raw = headers::single(headers, &NAME)
            .map_err(|why| Rejection::malformed("Mcp-Name", why))?
            .ok_or_else(|| Rejection::missing("Mcp-Name"))?;
        let name =
            headers::decode_sentinel(raw).map_err(|why| Rejection::malformed("Mcp-Name", why))?;
        match peeked.mirrored.and_then(json_str) {
            Some(body) if body == name => {}
            Some(body) => return Err(Rejection::differs("Mcp-Name", &name, body)),
            None => {
                return Err(Rejection::differs(
                    "Mcp-Name",
                    &name,
                    format_args!("(params.{field} is absent or not a string)"),
                ));
            }
        }
    }

    if is_tool_call
        && let Some(lookup) = &config.param_headers
        && let Some(tool) = peeked.tool.and_then(json_str)
        && let Some(declared) = lookup.param_headers(&tool)
        && !declared.is_empty()
    {
        check_params(headers, &declared, peeked.arguments)?;
    }
    Ok(())
}

/// Checks a notification's headers. Revision 2026-07-28 defines no header requirements for
/// notification POSTs, so only headers that are present are compared with the body.
pub(crate) fn check_notification(
    headers: &HeaderMap,
    method: &str,
    params: Option<&RawValue>,
) -> Result<(), Rejection> {
    if let Some(method_header) =
        headers::single(headers, &METHOD).map_err(|why| Rejection::malformed("Mcp-Method", why))?
        && method_header != method
    {
        return Err(Rejection::differs("Mcp-Method", method_header, method));
    }
    if let Some(version_header) = headers::single(headers, &PROTOCOL_VERSION)
        .map_err(|why| Rejection::malformed("MCP-Protocol-Version", why))?
        && let Ok(peeked) = Peek::read(params.map(RawValue::get), None, false)
        && let Ok(meta) = peeked.meta()
        && let Some(version) = meta.protocol_version.and_then(|v| json_str(v.get()))
        && version != version_header
    {
        return Err(Rejection::differs(
            "MCP-Protocol-Version",
            version_header,
            version,
        ));
    }
    Ok(())
}

/// Every declared `Mcp-Param-*` header against the argument it mirrors: present exactly when
/// the argument has a non-null value, and equal to it after decoding.
fn check_params(
    headers: &HeaderMap,
    declared: &[ParamHeader],
    arguments: Option<&str>,
) -> Result<(), Rejection> {
    let arguments: serde_json::Value = match arguments {
        Some(raw) => serde_json::from_str(raw).unwrap_or(serde_json::Value::Null),
        None => serde_json::Value::Null,
    };
    for param in declared {
        let display = param.header_name().as_str();
        let header = headers::single(headers, param.header_name())
            .map_err(|why| Rejection::malformed(display, why))?;
        let body = param
            .path()
            .iter()
            .try_fold(&arguments, |value, key| value.get(&**key))
            .filter(|value| !value.is_null());
        match (header, body) {
            (None, None) => {}
            (Some(header), None) => {
                return Err(Rejection::differs(display, header, "(absent)"));
            }
            (None, Some(_)) => return Err(Rejection::missing(display)),
            (Some(header), Some(body)) => {
                let header = headers::decode_sentinel(header)
                    .map_err(|why| Rejection::malformed(display, why))?;
                if !value_matches(&header, body) {
                    return Err(Rejection::differs(display, &header, body));
                }
            }
        }
    }
    Ok(())
}

/// Whether a decoded header value stands for a body value: strings as they are, integers
/// compared numerically (`42.0` equals `42`), booleans as `true` or `false`.
// An exact float comparison is the point: both sides must name the same integer.
#[allow(clippy::float_cmp)]
fn value_matches(header: &str, body: &serde_json::Value) -> bool {
    match body {
        serde_json::Value::String(s) => s == header,
        serde_json::Value::Bool(b) => header == if *b { "true" } else { "false" },
        serde_json::Value::Number(n) => {
            if let (Ok(h), Some(b)) = (header.parse::<i64>(), n.as_i64()) {
                return h == b;
            }
            match (header.parse::<f64>(), n.as_f64()) {
                (Ok(h), Some(b)) => h.is_finite() && h == b,
                _ => false,
            }
        }
        _ => false,
    }
}

/// A JSON string's text, borrowed when it has no escapes; `None` for any other JSON value.
fn json_str(raw: &str) -> Option<Cow<'_, str>> {
    if let Ok(s) = serde_json::from_str::<&str>(raw) {
        return Some(Cow::Borrowed(s));
    }
    serde_json::from_str::<String>(raw).ok().map(Cow::Owned)
}

/// Quotes at most [`QUOTE_LIMIT`] characters of a value in an error message.
struct Clip<'a>(&'a str);

impl fmt::Display for Clip<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.char_indices().nth(QUOTE_LIMIT) {
            Some((end, _)) => write!(f, "{}…", &self.0[..end]),
            None => f.write_str(self.0),
        }
    }
}

/// The params members the header rules read, borrowed from the body.
#[derive(Default)]
struct Peek<'a> {
    /// Each member's JSON text, known to be one value.
    meta: Option<&'a str>,
    /// The member mirrored into `Mcp-Name` for this method.
    mirrored: Option<&'a str>,
    /// `name` and `arguments` of a `tools/call`, for the `Mcp-Param-*` rules.
    tool: Option<&'a str>,
    arguments: Option<&'a str>,
}

#[derive(Default, Deserialize)]
struct Meta<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default)]
    protocol_version: Option<&'a RawValue>,
    /// Only whether it is there (and not `null`) matters here; its value is skipped.
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default)]
    client_capabilities: Option<IgnoredAny>,
}

impl<'a> Peek<'a> {
    fn read(
        params: Option<&'a str>,
        mirrored: Option<&str>,
        tool_call: bool,
    ) -> Result<Self, Rejection> {
        // Params that are absent or an array have none of the members (the `_meta` rule
        // then refuses the request).
        let Some(params) = params.filter(|p| p.trim_start().starts_with('{')) else {
            return Ok(Peek::default());
        };
        if let Some(peek) = Peek::after_remembered_meta(params, mirrored, tool_call) {
            return Ok(peek);
        }
        Peek::serde_read(params, mirrored, tool_call)
            .map_err(|e| Rejection::invalid_params(format!("invalid params: {e}")))
    }

    /// [`read`](Self::read) for params led by the `_meta` this thread read last, as a
    /// client writes every request: that `_meta` is compared, not parsed (it was read
    /// whole, and found an object, when it was remembered), and only the members after
    /// it are read, from a copy that starts them as an object of their own. `None` for
    /// anything else, or a second `_meta` among the rest: the params are then read whole,
    /// which gives the same result or the same error.
    fn after_remembered_meta(
        params: &'a str,
        mirrored: Option<&str>,
        tool_call: bool,
    ) -> Option<Self> {
        let after = params.strip_prefix(r#"{"_meta":"#)?;
        let meta_len = LAST_META.with_borrow(|last| {
            last.as_ref()
                .filter(|spans| after.starts_with(&*spans.text))
                .map(|spans| spans.text.len())
        })?;
        let (meta, rest) = after.split_at(meta_len);
        if rest
            .strip_prefix('}')
            .is_some_and(|end| end.trim_matches(JSON_WHITESPACE).is_empty())
        {
            return Some(Peek {
                meta: Some(meta),
                ..Peek::default()
            });
        }
        // Whitespace between `_meta` and the next member is not taken.
        let rest = rest.strip_prefix(',')?;
        if rest.len() > REST_COPIED {
            return None;
        }
        REST_SCRATCH.with_borrow_mut(|scratch| {
            scratch.clear();
            scratch.push('{');
            scratch.push_str(rest);
            let peek = Peek::serde_read(scratch, mirrored, tool_call).ok()?;
            if peek.meta.is_some() {
                return None;
            }
            // The copy's text at `i` is the params' at `i - 1` of `rest`.
            let origin = scratch.as_ptr() as usize + 1;
            let in_params = |copied: Option<&str>| {
                copied.and_then(|text| {
                    let start = (text.as_ptr() as usize).checked_sub(origin)?;
                    rest.get(start..start.checked_add(text.len())?)
                })
            };
            Some(Peek {
                meta: Some(meta),
                mirrored: in_params(peek.mirrored),
                tool: in_params(peek.tool),
                arguments: in_params(peek.arguments),
            })
        })
    }

    /// [`read`](Self::read) by `serde_json`: the whole text, to its end (a caller may hold
    /// params not yet known to be one value, and takes a success here as proof that they
    /// are).
    fn serde_read(
        params: &'a str,
        mirrored: Option<&str>,
        tool_call: bool,
    ) -> Result<Self, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(params);
        PeekSeed {
            mirrored,
            tool_call,
        }
        .deserialize(&mut de)
        .and_then(|peek| de.end().map(|()| peek))
    }

    fn meta(&self) -> Result<Meta<'a>, Rejection> {
        match self.meta {
            Some(raw) if raw.starts_with('{') => Meta::read(raw),
            _ => Ok(Meta::default()),
        }
    }
}

/// The longest `_meta` text whose reading is remembered (see [`Meta::read`]).
const REMEMBERED_META: usize = 4 << 10;

/// A remembered `_meta` text: where its protocol version lies in it, and whether it has
/// client capabilities.
struct MetaSpans {
    text: Box<str>,
    protocol_version: Option<Range<usize>>,
    client_capabilities: bool,
}

/// The longest text of members after a remembered `_meta` that
/// [`Peek::after_remembered_meta`] reads: it copies them to read them, and past this a
/// copy costs about what it saves.
const REST_COPIED: usize = 4 << 10;

/// What JSON reads as whitespace between tokens.
const JSON_WHITESPACE: [char; 4] = [' ', '\t', '\n', '\r'];

std::thread_local! {
    /// Where [`Peek::after_remembered_meta`] copies the members it reads.
    static REST_SCRATCH: RefCell<String> = const { RefCell::new(String::new()) };
    /// The last `_meta` read on this thread (up to [`REMEMBERED_META`] bytes), with where
    /// its members lie.
    static LAST_META: RefCell<Option<MetaSpans>> = const { RefCell::new(None) };
}

impl<'a> Meta<'a> {
    /// The members of a `_meta` object's text. A client sends the same `_meta` with every
    /// request, so the last one read on this thread is remembered: the same text again is
    /// compared, not parsed (a parse skips the whole `clientCapabilities` value), and the
    /// protocol version is borrowed from the new text at the place the parse found it.
    fn read(text: &'a str) -> Result<Self, Rejection> {
        let remembered = LAST_META.with_borrow(|last| {
            last.as_ref()
                .filter(|spans| *spans.text == *text)
                .map(|spans| (spans.protocol_version.clone(), spans.client_capabilities))
        });
        if let Some((version, capabilities)) = remembered {
            return Ok(Meta {
                protocol_version: version.and_then(|span| raw_at(text, span)),
                client_capabilities: capabilities.then_some(IgnoredAny),
            });
        }
        let meta: Meta<'a> = serde_json::from_str(text)
            .map_err(|e| Rejection::invalid_params(format!("invalid `_meta`: {e}")))?;
        if text.len() <= REMEMBERED_META {
            let span = |raw: &RawValue| {
                let start = raw.get().as_ptr() as usize - text.as_ptr() as usize;
                start..start + raw.get().len()
            };
            let spans = MetaSpans {
                text: text.into(),
                protocol_version: meta.protocol_version.map(span),
                client_capabilities: meta.client_capabilities.is_some(),
            };
            LAST_META.with_borrow_mut(|last| *last = Some(spans));
        }
        Ok(meta)
    }
}

/// The JSON value at `span` of `text`, a span a parse of the same text found.
fn raw_at(text: &str, span: Range<usize>) -> Option<&RawValue> {
    text.get(span)
        .and_then(|value| serde_json::from_str::<&RawValue>(value).ok())
}

struct PeekSeed<'f> {
    mirrored: Option<&'f str>,
    tool_call: bool,
}

impl<'de> DeserializeSeed<'de> for PeekSeed<'_> {
    type Value = Peek<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Peek<'de>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for PeekSeed<'_> {
    type Value = Peek<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a params object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Peek<'de>, A::Error> {
        let mut peek = Peek::default();
        while let Some(mcp_types::ObjectKey(key)) = map.next_key()? {
            let slot = if key == "_meta" {
                &mut peek.meta
            } else if self.mirrored == Some(&*key) {
                &mut peek.mirrored
            } else if self.tool_call && key == "name" {
                &mut peek.tool
            } else if self.tool_call && key == "arguments" {
                &mut peek.arguments
            } else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            // A repeated member would let the header rules and the handler read different
            // values.
            if slot.is_some() {
                return Err(de::Error::custom(format_args!("duplicate member `{key}`")));
            }
            *slot = map.next_value::<Option<&RawValue>>()?.map(RawValue::get);
        }
        // `name` is both the mirrored member and the tool of a `tools/call`.
        if peek.tool.is_none() && self.tool_call && self.mirrored == Some("name") {
            peek.tool = peek.mirrored;
        }
        Ok(peek)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use http::{HeaderName, HeaderValue};
    use serde_json::json;

    use super::*;

    const V: &str = "2026-07-28";

    fn params(value: &serde_json::Value) -> Box<RawValue> {
        RawValue::from_string(value.to_string()).unwrap()
    }

    fn meta() -> serde_json::Value {
        json!({
            "io.modelcontextprotocol/protocolVersion": V,
            "io.modelcontextprotocol/clientCapabilities": {}
        })
    }

    fn config() -> HttpServerConfig {
        let declared: Arc<[ParamHeader]> = Arc::new([
            ParamHeader::new("Region", ["region"]).unwrap(),
            ParamHeader::new("Count", ["opts", "count"]).unwrap(),
            ParamHeader::new("Flag", ["flag"]).unwrap(),
        ]);
        HttpServerConfig::default()
            .param_headers(move |tool: &str| (tool == "sql").then(|| Arc::clone(&declared)))
    }

    /// Runs one case: the headers (beyond the standard ones unless `bare`), the method and
    /// params, and the expected error code (`None` for success).
    fn check(
        name: &str,
        method: &str,
        params_value: &serde_json::Value,
        extra: &[(&str, &[u8])],
        bare: bool,
        expected: Option<i32>,
    ) {
        let mut headers = HeaderMap::new();
        if !bare {
            headers.insert(PROTOCOL_VERSION, HeaderValue::from_static(V));
            headers.insert(METHOD, HeaderValue::from_str(method).unwrap());
        }
        for (k, v) in extra {
            let k = HeaderName::from_bytes(k.as_bytes()).unwrap();
            if v.is_empty() {
                headers.remove(&k);
            } else {
                headers.append(k, HeaderValue::from_bytes(v).unwrap());
            }
        }
        let raw = params(params_value);
        let got = check_request(&headers, method, Some(raw.get()), &config());
        assert_eq!(
            got.as_ref().err().map(|r| r.error.code.0),
            expected,
            "{name}: {got:?}"
        );
        if let Err(rejection) = got {
            assert_eq!(rejection.status, StatusCode::BAD_REQUEST, "{name}");
        }
    }

    #[test]
    fn standard_headers() {
        let list = json!({"_meta": meta()});
        let call = |name: &str| json!({"_meta": meta(), "name": name, "arguments": {}});
        let read = json!({"_meta": meta(), "uri": "file:///a b/ü"});
        let mm = Some(-32020);
        check("ok", "tools/list", &list, &[], false, None);
        check(
            "no version header",
            "tools/list",
            &list,
            &[("mcp-protocol-version", b"")],
            false,
            mm,
        );
        check(
            "other version",
            "tools/list",
            &list,
            &[
                ("mcp-protocol-version", b""),
                ("mcp-protocol-version", b"2025-11-25"),
            ],
            false,
            mm,
        );
        check(
            "no method header",
            "tools/list",
            &list,
            &[("mcp-method", b"")],
            false,
            mm,
        );
        check(
            "method differs",
            "tools/list",
            &list,
            &[("mcp-method", b""), ("mcp-method", b"prompts/list")],
            false,
            mm,
        );
        check(
            "method case",
            "tools/list",
            &list,
            &[("mcp-method", b""), ("mcp-method", b"TOOLS/LIST")],
            false,
            mm,
        );
        check(
            "method repeated",
            "tools/list",
            &list,
            &[("mcp-method", b"tools/list")],
            false,
            mm,
        );
        check(
            "name ok",
            "tools/call",
            &call("t"),
            &[("mcp-name", b"t")],
            false,
            None,
        );
        check("name missing", "tools/call", &call("t"), &[], false, mm);
        check(
            "name differs",
            "tools/call",
            &call("t"),
            &[("mcp-name", b"u")],
            false,
            mm,
        );
        check(
            "name absent in body",
            "prompts/get",
            &json!({"_meta": meta()}),
            &[("mcp-name", b"u")],
            false,
            mm,
        );
        check(
            "name base64",
            "resources/read",
            &read,
            &[("mcp-name", b"=?base64?ZmlsZTovLy9hIGIvw7w=?=")],
            false,
            None,
        );
        check(
            "name bad base64",
            "resources/read",
            &read,
            &[("mcp-name", b"=?base64?ZmlsZTovLy9hIGIvw7w?=")],
            false,
            mm,
        );
        check(
            "name obs-text",
            "tools/call",
            &call("t"),
            &[("mcp-name", b"t\xff")],
            false,
            mm,
        );
    }

    #[test]
    fn required_meta() {
        let ip = Some(-32602);
        check("no params", "tools/list", &json!({}), &[], false, ip);
        check(
            "no version",
            "tools/list",
            &json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
            &[],
            false,
            ip,
        );
        check(
            "no capabilities",
            "tools/list",
            &json!({"_meta": {"io.modelcontextprotocol/protocolVersion": V}}),
            &[],
            false,
            ip,
        );
        check(
            "meta not an object",
            "tools/list",
            &json!({"_meta": 1}),
            &[],
            false,
            ip,
        );
        check("params array", "tools/list", &json!([1]), &[], false, ip);
        // A missing header is reported before the body is read.
        check(
            "no header, no meta",
            "tools/list",
            &json!({}),
            &[],
            true,
            Some(-32020),
        );
        let escaped = r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-\u0032\u0038","io.modelcontextprotocol/clientCapabilities":{}}}"#;
        check(
            "escaped version",
            "tools/list",
            &serde_json::from_str(escaped).unwrap(),
            &[],
            false,
            None,
        );
    }

    /// A `tools/call` case: its name, arguments, extra headers and expected error code.
    type ParamCase<'a> = (
        &'a str,
        serde_json::Value,
        &'a [(&'a str, &'a [u8])],
        Option<i32>,
    );

    #[test]
    fn param_headers() {
        let call =
            |args: serde_json::Value| json!({"_meta": meta(), "name": "sql", "arguments": args});
        let name: (&str, &[u8]) = ("mcp-name", b"sql");
        let mm = Some(-32020);
        let cases: &[ParamCase<'_>] = &[
            (
                "all present",
                json!({"region": "us-west1", "opts": {"count": 42}, "flag": true}),
                &[
                    ("mcp-param-region", b"us-west1"),
                    ("mcp-param-count", b"42"),
                    ("mcp-param-flag", b"true"),
                ],
                None,
            ),
            (
                "header names ignore case",
                json!({"region": "x"}),
                &[("MCP-PARAM-REGION", b"x")],
                None,
            ),
            ("none present", json!({}), &[], None),
            ("null omitted", json!({"region": null}), &[], None),
            (
                "numeric compare",
                json!({"opts": {"count": 42}}),
                &[("mcp-param-count", b"42.0")],
                None,
            ),
            (
                "number differs",
                json!({"opts": {"count": 42}}),
                &[("mcp-param-count", b"43")],
                mm,
            ),
            (
                "bool differs",
                json!({"flag": false}),
                &[("mcp-param-flag", b"False")],
                mm,
            ),
            (
                "base64",
                json!({"region": "Hello, 世界"}),
                &[("mcp-param-region", b"=?base64?SGVsbG8sIOS4lueVjA==?=")],
                None,
            ),
            (
                "literal look-alike",
                json!({"region": "=?base64?SGVsbG8="}),
                &[("mcp-param-region", b"=?base64?SGVsbG8=")],
                None,
            ),
            (
                "bad padding",
                json!({"region": "Hello"}),
                &[("mcp-param-region", b"=?base64?SGVsbG8?=")],
                mm,
            ),
            (
                "bad alphabet",
                json!({"region": "Hello"}),
                &[("mcp-param-region", b"=?base64?SGVs!!!bG8=?=")],
                mm,
            ),
            ("header missing", json!({"region": "x"}), &[], mm),
            (
                "header without value",
                json!({}),
                &[("mcp-param-region", b"x")],
                mm,
            ),
            (
                "value differs",
                json!({"region": "x"}),
                &[("mcp-param-region", b"y")],
                mm,
            ),
            (
                "unknown param header ignored",
                json!({}),
                &[("mcp-param-other", b"y")],
                None,
            ),
            (
                "object value",
                json!({"region": {"a": 1}}),
                &[("mcp-param-region", b"x")],
                mm,
            ),
        ];
        for (case, args, extra, expected) in cases {
            let mut headers = vec![name];
            headers.extend_from_slice(extra);
            check(
                case,
                "tools/call",
                &call(args.clone()),
                &headers,
                false,
                *expected,
            );
        }
        // Another tool declares nothing; the lookup is not consulted for other methods.
        check(
            "other tool",
            "tools/call",
            &json!({"_meta": meta(), "name": "t", "arguments": {"region": "x"}}),
            &[("mcp-name", b"t")],
            false,
            None,
        );
    }

    /// A `_meta` text read again (remembered) gives what a fresh parse gives, whatever was
    /// read in between, and borrows from the text it was given.
    #[test]
    fn a_remembered_meta_reads_as_a_fresh_one() {
        let texts = [
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"x":[1,{"y":"z"}]}}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}"#,
            r#"{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2025-11-25"}"#,
            r#"{"io.modelcontextprotocol/clientCapabilities":{}}"#,
            r#"{"a": 1,  "io.modelcontextprotocol/protocolVersion" : "2026-07-28\u0021" }"#,
        ];
        let summary = |meta: &Meta<'_>| {
            (
                meta.protocol_version.map(|v| v.get().to_owned()),
                meta.client_capabilities.is_some(),
            )
        };
        for round in 0..3 {
            for (i, text) in texts.iter().enumerate() {
                for _ in 0..2 {
                    // A copy, so a remembered text is never the same allocation.
                    let owned = (*text).to_owned();
                    let read = Meta::read(&owned).unwrap();
                    let fresh: Meta<'_> = serde_json::from_str(&owned).unwrap();
                    assert_eq!(summary(&read), summary(&fresh), "round {round}, text {i}");
                    if let Some(version) = read.protocol_version {
                        let at = version.get().as_ptr() as usize;
                        let start = owned.as_ptr() as usize;
                        assert!(at >= start && at < start + owned.len(), "text {i}");
                    }
                }
            }
        }
        assert!(Meta::read("{").is_err());
        assert!(Meta::read(r#"{"io.modelcontextprotocol/protocolVersion":"#).is_err());
    }

    #[test]
    fn params_after_a_remembered_meta_read_as_a_whole() {
        type Fields<'a> = [Option<&'a str>; 4];
        fn fields<'a>(peek: &Peek<'a>) -> Fields<'a> {
            [peek.meta, peek.mirrored, peek.tool, peek.arguments]
        }
        let meta = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
        for rest in [
            "}",
            "} \n",
            r#","name":"echo","arguments":{"text":"hi"}}"#,
            r#", "arguments" : {"a":[1,2]} , "name":"e\u0063ho" }"#,
            r#","uri":"file:///x","name":null}"#,
            // A second `_meta`, a duplicate, a broken rest: read whole, as before.
            r#","_meta":{},"name":"x"}"#,
            r#","name":"a","name":"b"}"#,
            r#","name":"a""#,
        ] {
            let params = format!(r#"{{"_meta":{meta}{rest}"#);
            for (mirrored, tool_call) in [(Some("name"), true), (Some("uri"), false), (None, false)]
            {
                Meta::read(meta).unwrap();
                let lane = Peek::after_remembered_meta(&params, mirrored, tool_call);
                let whole = Peek::serde_read(&params, mirrored, tool_call);
                match (&lane, &whole) {
                    (Some(lane), Ok(whole)) => {
                        assert_eq!(fields(lane), fields(whole), "{params}");
                        // Borrowed from the params, not from the copy.
                        let span =
                            params.as_ptr() as usize..params.as_ptr() as usize + params.len();
                        for text in fields(lane).into_iter().flatten() {
                            assert!(span.contains(&(text.as_ptr() as usize)), "{params}");
                        }
                    }
                    (None, _) => assert!(
                        rest.contains("_meta") || whole.is_err(),
                        "{params} was not taken"
                    ),
                    (Some(_), Err(e)) => panic!("{params}: taken, but reads whole as {e}"),
                }
            }
        }
        // Params led by another `_meta` are read whole.
        Meta::read(meta).unwrap();
        assert!(Peek::after_remembered_meta(r#"{"_meta":{},"name":"x"}"#, None, false).is_none());
    }

    #[test]
    fn duplicate_members_are_refused() {
        let raw = RawValue::from_string(format!(r#"{{"_meta":{},"name":"a","name":"b"}}"#, meta()))
            .unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(PROTOCOL_VERSION, HeaderValue::from_static(V));
        headers.insert(METHOD, HeaderValue::from_static("tools/call"));
        headers.insert(NAME, HeaderValue::from_static("a"));
        let got = check_request(&headers, "tools/call", Some(raw.get()), &config()).unwrap_err();
        assert_eq!(got.error.code, ErrorCode::INVALID_PARAMS);
    }

    #[test]
    fn notifications_compare_only_present_headers() {
        let raw = params(&json!({"_meta": meta()}));
        let empty = HeaderMap::new();
        assert!(check_notification(&empty, "notifications/x", Some(&raw)).is_ok());
        assert!(check_notification(&empty, "notifications/x", None).is_ok());
        let mut headers = HeaderMap::new();
        headers.insert(METHOD, HeaderValue::from_static("notifications/y"));
        assert!(check_notification(&headers, "notifications/x", Some(&raw)).is_err());
        let mut headers = HeaderMap::new();
        headers.insert(PROTOCOL_VERSION, HeaderValue::from_static("2025-11-25"));
        assert!(check_notification(&headers, "notifications/x", Some(&raw)).is_err());
    }

    #[test]
    fn clipped_quotes() {
        let long = "x".repeat(500);
        assert_eq!(Clip(&long).to_string().chars().count(), QUOTE_LIMIT + 1);
        assert_eq!(Clip("short").to_string(), "short");
    }
}
