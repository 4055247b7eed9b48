//! `message`: one frame of peer input through the engine's envelope decoder and every
//! typed union of `mcp-types`, modern and legacy.
//!
//! Checks: nothing panics; the decoder accepts only JSON (whatever it decodes, serde_json
//! parses too) and never accepts a batch unless allowed, and within the batch limit; a
//! decoded request or notification has a method; an error names -32700 or -32600; a
//! typed value re-serializes to JSON that parses back to the same JSON (serialization is
//! a fixed point after one round); `RawResult::from_response_frame` and
//! `Request::from_frame` read a frame exactly as the decoder reads it.

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

    check_frame_readers(frame, &strict);

    typed::<mcp_types::JSONRPCMessage>(frame);
    typed::<mcp_types::ClientRequest>(frame);
    typed::<mcp_types::ServerResult>(frame);
    typed::<mcp_types::ServerNotification>(frame);
    typed::<mcp_types::legacy::ClientRequest>(frame);
    typed::<mcp_types::legacy::ServerRequest>(frame);
    typed::<mcp_types::legacy::ClientResult>(frame);
    typed::<mcp_types::legacy::ServerResult>(frame);
}

/// `RawResult::from_response_frame` finds a result exactly when the decoder reads a
/// successful response with an id, and `Request::from_frame` a request exactly when the
/// decoder reads one: the same id, method, params and result.
fn check_frame_readers(frame: &[u8], strict: &Result<Decoded, DecodeError>) {
    let bytes = Bytes::copy_from_slice(frame);
    let response = match strict {
        Ok(Decoded::Single(Message::Response(r))) => match (&r.id, &r.outcome) {
            (Some(id), Ok(result)) => Some((id, result.get())),
            _ => None,
        },
        _ => None,
    };
    let read = RawResult::from_response_frame(&bytes);
    let read = read.as_ref().map(|(id, result)| (id, result.text()));
    assert_eq!(read, response, "from_response_frame reads as the decoder");

    let request = match strict {
        Ok(Decoded::Single(Message::Request(r))) => Some(r),
        _ => None,
    };
    let read = Request::from_frame(&bytes);
    let view = |r: &Request| {
        (
            r.id.clone(),
            r.method.clone(),
            r.params.as_ref().map(|p| p.text().to_owned()),
        )
    };
    assert_eq!(
        read.as_ref().map(view),
        request.map(view),
        "from_frame reads as the decoder"
    );
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
