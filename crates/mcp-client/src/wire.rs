//! The request `_meta` of `docs/2026-07-28/basic/index.mdx` and the params of the hottest
//! request, `tools/call` (`docs/2026-07-28/server/tools.mdx`), written straight from what
//! the client holds, without building the typed params first (issue #8, the client side).
//!
//! The typed path builds a [`RequestMetaObject`](mcp_types::RequestMetaObject) per request
//! (cloning the client's capabilities and identity) and a
//! [`CallToolRequestParams`](mcp_types::CallToolRequestParams) (cloning the arguments), then
//! serializes both. Here the capabilities and `clientInfo` are serialized once per client
//! ([`FixedMeta`]) and copied into each request as they are, and the params borrow the
//! caller's arguments. The members come out in the order the typed path writes them, so the
//! frames are byte for byte the same (tested below).

use std::sync::Arc;

use mcp_types::{
    ClientCapabilities, Implementation, InputResponses, JsonObject, LoggingLevel, ProgressToken,
};
use serde::ser::{Serialize, SerializeMap, Serializer};
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

impl Serialize for WireMeta {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if let Some(plain) = &self.fixed.plain
            && self.progress_token.is_none()
            && self.trace.is_none()
            && self.protocol_version == FixedMeta::PLAIN_VERSION
        {
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
}
