//! `message`: one frame of peer input through the engine's envelope decoder and every
//! typed union of `mcp-types`, modern and legacy.
//!
//! Checks: nothing panics; the decoder accepts only JSON (whatever it decodes, serde_json
//! parses too) and never accepts a batch unless allowed, and within the batch limit; a
//! decoded request or notification has a method; an error names -32700 or -32600; a
//! typed value re-serializes to JSON that parses back to the same JSON (serialization is
//! a fixed point after one round); a frame the engine would hand over unread
//! (`RawResult::from_response_frame`) reads, through its span or its whole-frame decode,
//! exactly as the decoder reads it; likewise a request the engine would hand over with its
//! params unread (`Request::from_frame`).

use std::fmt::Debug;

use bytes::Bytes;
use mcp_jsonrpc::{DecodeError, DecodeOptions, Decoded, Message, RawResult, Request, decode};
use mcp_types::ErrorCode;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

/// The batch limit the second decode allows.
const MAX_BATCH: usize = 4;

/// One input: the frame itself.
pub fn run(frame: &[u8]) {
    let strict = decode(frame, DecodeOptions::default());
    let mut options = DecodeOptions::default();
    options.max_batch = Some(MAX_BATCH);
    let batching = decode(frame, options);
    let json: Option<Value> = serde_json::from_slice(frame).ok();

    match &strict {
        Ok(Decoded::Single(message)) => {
            assert!(json.is_some(), "decoded a frame serde_json refuses");
            check_message(message);
        }
        Ok(_) => panic!("a batch was accepted without being allowed"),
        Err(err) => assert!(
            err.code == ErrorCode::PARSE_ERROR || err.code == ErrorCode::INVALID_REQUEST,
            "decode error code {:?}",
            err.code
        ),
    }
    match &batching {
        Ok(Decoded::Batch(items)) => {
            assert!(json.as_ref().is_some_and(Value::is_array));
            assert!(!items.is_empty() && items.len() <= MAX_BATCH);
            for item in items.iter().flatten() {
                check_message(item);
            }
        }
        Ok(_) => assert!(strict.is_ok(), "batching changed a single message"),
        Err(_) => {}
    }

    check_span(frame, &strict);
    check_request_span(frame, &strict);

    typed::<mcp_types::JSONRPCMessage>(frame);
    typed::<mcp_types::ClientRequest>(frame);
    typed::<mcp_types::ServerResult>(frame);
    typed::<mcp_types::ServerNotification>(frame);
    typed::<mcp_types::legacy::ClientRequest>(frame);
    typed::<mcp_types::legacy::ServerRequest>(frame);
    typed::<mcp_types::legacy::ClientResult>(frame);
    typed::<mcp_types::legacy::ServerResult>(frame);
}

/// A frame in the usual response layout is handed to its request unread. When the span
/// parses as exactly one value, the frame decodes to a response to that id with that very
/// result; and `into_raw_value` gives what decoding the frame gives (the result, or
/// `Malformed` for a frame the decoder refuses).
fn check_span(frame: &[u8], strict: &Result<Decoded, DecodeError>) {
    let Some((id, result)) = RawResult::from_response_frame(&Bytes::copy_from_slice(frame)) else {
        return;
    };
    let decoded = match strict {
        Ok(Decoded::Single(Message::Response(response))) => Some(response),
        _ => None,
    };
    let decoded_result = decoded
        .and_then(|r| r.outcome.as_ref().ok())
        .map(|r| r.get());
    if let Ok(value) = serde_json::from_str::<&RawValue>(result.text()) {
        let response = decoded.expect("a span that parses is a whole response");
        assert_eq!(response.id.as_ref(), Some(&id));
        assert_eq!(decoded_result, Some(value.get()), "the span is the result");
    }
    match result.into_raw_value() {
        Ok(raw) => assert_eq!(Some(raw.get()), decoded_result),
        Err(mcp_jsonrpc::Error::Malformed(_)) => assert!(decoded.is_none()),
        Err(other) => panic!("a span's decode failed otherwise: {other}"),
    }
}

/// A frame in the usual request layout is handed to its handler with its params unread.
/// When the span parses as exactly one value, the frame decodes to a request with that id,
/// method and those very params; and `checked` gives what decoding the frame gives (the
/// params, or the decoder's own error).
fn check_request_span(frame: &[u8], strict: &Result<Decoded, DecodeError>) {
    let Some(request) = Request::from_frame(&Bytes::copy_from_slice(frame)) else {
        return;
    };
    let decoded = match strict {
        Ok(Decoded::Single(Message::Request(r))) => Some(r),
        _ => None,
    };
    if let Some(r) = decoded {
        assert_eq!((&r.id, &r.method), (&request.id, &request.method));
    }
    let decoded_params = decoded.and_then(|r| r.params.as_ref()).map(|p| p.text());
    let params = request.params.as_ref().expect("a request span has params");
    assert!(!params.is_checked());
    if let Ok(value) = serde_json::from_str::<&RawValue>(params.text()) {
        assert!(decoded.is_some(), "a span that parses is a whole request");
        assert_eq!(decoded_params, Some(value.get()), "the span is the params");
    }
    match params.checked() {
        Ok(raw) => assert_eq!(Some(raw.get()), decoded_params),
        Err(e) => {
            let refused = strict.as_ref().err().map(|e| e.code);
            assert_eq!(Some(e.code), refused, "the span's error is the decoder's");
        }
    }
}

/// Params, when present, are structured: an object or an array (JSON-RPC 2.0, 4.2).
fn check_message(message: &Message) {
    let params = match message {
        Message::Request(request) => request.params.as_ref().map(|p| p.text()),
        Message::Notification(notification) => notification.params.as_deref().map(RawValue::get),
        _ => None,
    };
    if let Some(params) = params {
        let text = params.trim_start();
        assert!(
            text.starts_with('{') || text.starts_with('['),
            "params that are not structured: {text}"
        );
    }
}

/// Parses `frame` as `T`; when it parses, one serialization round is a fixed point.
fn typed<T: Serialize + DeserializeOwned + Debug>(frame: &[u8]) {
    let Ok(value) = serde_json::from_slice::<T>(frame) else {
        return;
    };
    let once = serde_json::to_vec(&value).expect("a parsed value serializes");
    let again: T = serde_json::from_slice(&once).unwrap_or_else(|e| {
        panic!(
            "{} does not parse its own output: {e}\n{}",
            std::any::type_name::<T>(),
            String::from_utf8_lossy(&once)
        )
    });
    let twice = serde_json::to_vec(&again).expect("serializes");
    assert_eq!(
        serde_json::from_slice::<Value>(&once).ok(),
        serde_json::from_slice::<Value>(&twice).ok(),
        "{} round trip is not a fixed point",
        std::any::type_name::<T>()
    );
}
