//! Fuzzes the JSON-RPC decoder: any bytes, with and without batches.
//!
//! Properties: decoding never panics; a failure is always -32700 or -32600; a decoded
//! request or notification re-encodes into a frame that decodes to the same id and method.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_jsonrpc::{DecodeOptions, Decoded, Message, decode, encode_notification, encode_request};
use mcp_types::ErrorCode;

fn check_round_trip(message: &Message) {
    match message {
        Message::Request(r) => {
            let params = r.params.as_ref().map(|p| p.checked().expect("decoded params are checked"));
            let frame = encode_request(&r.id, &r.method, params.as_deref()).expect("encodes");
            assert!(!frame.contains(&b'\n'));
            let Ok(Decoded::Single(Message::Request(back))) = decode(&frame, DecodeOptions::default()) else {
                panic!("a re-encoded request decodes");
            };
            assert_eq!((&back.id, &back.method), (&r.id, &r.method));
        }
        Message::Notification(n) => {
            let frame = encode_notification(&n.method, n.params.as_deref()).expect("encodes");
            let Ok(Decoded::Single(Message::Notification(back))) = decode(&frame, DecodeOptions::default()) else {
                panic!("a re-encoded notification decodes");
            };
            assert_eq!(back.method, n.method);
        }
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let mut options = DecodeOptions::default();
    for max_batch in [None, Some(4)] {
        options.max_batch = max_batch;
        match decode(data, options) {
            Ok(Decoded::Single(message)) => check_round_trip(&message),
            Ok(Decoded::Batch(items)) => {
                assert!(items.len() <= 4);
                for item in items.iter().flatten() {
                    check_round_trip(item);
                }
            }
            Ok(_) => {}
            Err(e) => assert!(e.code == ErrorCode::PARSE_ERROR || e.code == ErrorCode::INVALID_REQUEST),
        }
    }
});
