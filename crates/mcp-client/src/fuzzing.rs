//! Entry points for the fuzz targets of `fuzz/` (feature `fuzzing`). Not part of the API:
//! hidden from the docs, exempt from semver, and only what a target needs to reach the
//! private writer and reader of `wire.rs` next to the typed path they stand in for.
//!
//! Both sides are the production functions: [`call_frames`] writes a `tools/call` frame
//! with `wire::encode_request` over `wire::CallToolParams` (what `call_tool_lent`
//! sends), and the typed way: the `_meta` of `client::request_meta`
//! (what `send` builds), the params of
//! `client::tool_call_params`, encoded by
//! [`mcp_jsonrpc::encode_request`] and by `serde_json` alone. [`ResultReader`] reads a
//! result with `wire::complete_result` and the way the client reads it when that gives
//! nothing (`into_raw_value`, the `resultType` check of `next_round`, `decode`).

use std::sync::Arc;

use mcp_jsonrpc::RawResult;
use mcp_types::{
    CallToolResult, ClientCapabilities, Implementation, InputResponses, JsonObject, LoggingLevel,
    ProgressToken, RequestId, method,
};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::client::{Client, Kind, Round, request_meta, tool_call_params};
use crate::wire::{self, FixedMeta, WireParams as _};

/// One `tools/call` as the client would send it.
#[derive(Debug)]
pub struct Call<'a> {
    /// The request id.
    pub id: &'a RequestId,
    /// The tool's name.
    pub name: &'a str,
    /// The tool's arguments.
    pub arguments: &'a JsonObject,
    /// The client's capabilities.
    pub capabilities: &'a ClientCapabilities,
    /// The client's identity.
    pub info: &'a Implementation,
    /// The log level the client asks for.
    pub log_level: Option<LoggingLevel>,
    /// The protocol version, an index into [`SUPPORTED_VERSIONS`](crate::SUPPORTED_VERSIONS)
    /// (taken modulo its length).
    pub version: usize,
    /// The call's progress token.
    pub progress_token: Option<ProgressToken>,
    /// The call's trace context (`traceparent`, `tracestate`).
    pub trace: Option<(String, Option<String>)>,
    /// An MRTR round's answers.
    pub input_responses: Option<&'a InputResponses>,
    /// An MRTR round's request state.
    pub request_state: Option<&'a str>,
}

/// A `tools/call` frame written each way.
#[derive(Debug)]
pub struct CallFrames {
    /// `wire::encode_request` over `wire::CallToolParams`: what the client sends.
    pub wire: Vec<u8>,
    /// `mcp_jsonrpc::encode_request` over the typed params.
    pub typed: Vec<u8>,
    /// `wire::encode_request` over the typed params (`Plain`): what the client's typed
    /// path sends.
    pub typed_client: Vec<u8>,
    /// `serde_json::to_vec` of the request with the typed params: the reference.
    pub serde: Vec<u8>,
    /// The wire params' text as their `Serialize` writes it (`serde_json::to_string`).
    pub wire_params: String,
    /// The typed params' text (`serde_json::to_string`).
    pub typed_params: String,
    /// The wire params as a `Value` (what a custom transport is handed).
    pub wire_value: Value,
    /// The typed params as a `Value`.
    pub typed_value: Value,
}

/// The request as `serde_json` writes it, for [`CallFrames::serde`].
#[derive(serde::Serialize)]
struct Envelope<'a, P> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'static str,
    params: &'a P,
}

/// The frames of `call`; `None` when `FixedMeta::new` refuses the client's capabilities
/// or identity (the client then writes every request the typed way).
///
/// # Panics
///
/// If a writer fails on params that the other writes.
#[must_use]
pub fn call_frames(call: &Call<'_>) -> Option<CallFrames> {
    let fixed = FixedMeta::new(call.capabilities, call.info, call.log_level)?;
    let version = crate::SUPPORTED_VERSIONS[call.version % crate::SUPPORTED_VERSIONS.len()];
    let wire_params = wire::CallToolParams {
        meta: wire::WireMeta {
            fixed,
            protocol_version: version,
            progress_token: call.progress_token.clone(),
            trace: call.trace.clone(),
        },
        arguments: Some(call.arguments),
        input_responses: call.input_responses,
        name: call.name,
        request_state: call.request_state,
    };
    let meta = request_meta(
        call.capabilities,
        call.info,
        call.log_level,
        version,
        call.trace.as_ref(),
        call.progress_token.clone(),
    );
    let round = Round {
        responses: call.input_responses.cloned(),
        state: call.request_state.map(str::to_owned),
    };
    let typed_params = tool_call_params(call.name, call.arguments)(meta, &round);
    let method = method::TOOLS_CALL;
    let wire = wire::encode_request(call.id, method, &wire_params).expect("the wire frame");
    let typed = mcp_jsonrpc::encode_request(call.id, method, Some(&typed_params))
        .expect("the typed frame")
        .to_vec();
    let typed_client = wire::encode_request(call.id, method, &wire::Plain(&typed_params))
        .expect("the typed path's frame");
    let serde = serde_json::to_vec(&Envelope {
        jsonrpc: "2.0",
        id: call.id,
        method,
        params: &typed_params,
    })
    .expect("the serde_json frame");
    // The params written alone, by the frame writer and by their `Serialize`.
    let mut written = String::new();
    wire_params
        .write_params(&mut written)
        .expect("the wire params");
    let serialized = serde_json::to_string(&wire_params).expect("the wire params");
    assert_eq!(written, serialized, "write_params and Serialize differ");
    Some(CallFrames {
        wire,
        typed,
        typed_client,
        serde,
        wire_params: serialized,
        typed_params: serde_json::to_string(&typed_params).expect("the typed params"),
        wire_value: serde_json::to_value(&wire_params).expect("the wire params"),
        typed_value: serde_json::to_value(&typed_params).expect("the typed params"),
    })
}

/// A client's result reader: `wire::complete_result` with one `FixedMeta` (whose
/// cache of the last result `_meta` lives across reads, as a client's does).
#[derive(Debug)]
pub struct ResultReader {
    fixed: Arc<FixedMeta>,
}

impl Default for ResultReader {
    fn default() -> Self {
        Self::new()
    }
}

/// One result text read each way.
#[derive(Debug)]
pub struct ResultReads {
    /// `complete_result` of the text as the unread span of a response frame
    /// `{"jsonrpc":"2.0","id":1,"result":TEXT}`; `None` when that frame is not laid out
    /// for a lazy read (`RawResult::from_response_frame`).
    pub span: Option<Option<CallToolResult>>,
    /// What the typed path makes of that frame's result (when `span` is `Some`).
    pub span_typed: Option<Result<CallToolResult, String>>,
    /// `complete_result` of the text as a checked result (when it is one JSON value).
    pub checked: Option<Option<CallToolResult>>,
    /// What the typed path makes of the checked result (when `checked` is `Some`).
    pub checked_typed: Option<Result<CallToolResult, String>>,
}

impl ResultReader {
    /// A reader for a client of default capabilities.
    ///
    /// # Panics
    ///
    /// Never: default capabilities always serialize.
    #[must_use]
    pub fn new() -> Self {
        let info = Implementation::new("fuzz", "1");
        let fixed = FixedMeta::new(&ClientCapabilities::default(), &info, None)
            .expect("default capabilities serialize");
        ResultReader { fixed }
    }

    /// Reads `text` as a `tools/call` result each way.
    #[must_use]
    pub fn read(&self, text: &[u8]) -> ResultReads {
        let frame = [br#"{"jsonrpc":"2.0","id":1,"result":"#, text, b"}"].concat();
        let (span, span_typed) = match RawResult::from_response_frame(&frame.into()) {
            Some((_, result)) => (
                Some(wire::complete_result(&self.fixed, &result)),
                Some(typed_read(result)),
            ),
            None => (None, None),
        };
        let (checked, checked_typed) = match serde_json::from_slice::<Box<RawValue>>(text) {
            Ok(raw) => {
                let result = RawResult::from(raw);
                (
                    Some(wire::complete_result(&self.fixed, &result)),
                    Some(typed_read(result)),
                )
            }
            Err(_) => (None, None),
        };
        ResultReads {
            span,
            span_typed,
            checked,
            checked_typed,
        }
    }
}

/// What `call_tool_lent` makes of a result that `complete_result` does not read: the
/// checked result, its `resultType` as `next_round` reads it (absent or `"complete"`:
/// complete; anything else is another round or an error, here an error), then the typed
/// decode.
fn typed_read(result: RawResult) -> Result<CallToolResult, String> {
    let method = method::TOOLS_CALL;
    let raw = result.into_raw_value().map_err(|e| e.to_string())?;
    let kind: Kind = Client::decode(method, &raw).map_err(|e| e.to_string())?;
    match kind.result_type.as_deref() {
        None | Some("complete") => Client::decode(method, &raw).map_err(|e| e.to_string()),
        Some(other) => Err(format!("not complete: {other}")),
    }
}
