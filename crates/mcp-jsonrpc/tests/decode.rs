//! The codec, as data: bytes in, the message kind or the exact error out.

use mcp_jsonrpc::{DecodeOptions, Decoded, Message, decode};
use mcp_types::{ErrorCode, RequestId};

#[derive(Debug, PartialEq)]
enum Expect {
    Request(RequestId, &'static str),
    Notification(&'static str),
    Result(RequestId),
    Error(Option<RequestId>, i32),
    Batch(usize),
    /// The decode error: its code and the id it could recover.
    Fails(ErrorCode, Option<RequestId>),
}

#[allow(
    clippy::unnecessary_wraps,
    reason = "the tables compare against `Option<RequestId>`"
)]
fn int(n: i64) -> Option<RequestId> {
    Some(RequestId::Integer(n))
}

fn check(input: &[u8], options: DecodeOptions, expected: &Expect) {
    let got = match decode(input, options) {
        Ok(Decoded::Single(Message::Request(r))) => {
            assert!(
                matches!(expected, Expect::Request(_, m) if *m == r.method),
                "{}",
                String::from_utf8_lossy(input)
            );
            Expect::Request(r.id, "")
        }
        Ok(Decoded::Single(Message::Notification(n))) => {
            assert!(
                matches!(expected, Expect::Notification(m) if *m == n.method),
                "{}",
                String::from_utf8_lossy(input)
            );
            Expect::Notification("")
        }
        Ok(Decoded::Single(Message::Response(r))) => match r.outcome {
            Ok(_) => Expect::Result(r.id.expect("a result has an id")),
            Err(e) => Expect::Error(r.id, e.code.0),
        },
        Ok(Decoded::Batch(items)) => Expect::Batch(items.len()),
        Ok(_) => panic!("unexpected decoding"),
        Err(e) => Expect::Fails(e.code, e.id),
    };
    let normalized = match expected {
        Expect::Request(id, _) => Expect::Request(id.clone(), ""),
        Expect::Notification(_) => Expect::Notification(""),
        Expect::Result(id) => Expect::Result(id.clone()),
        Expect::Error(id, code) => Expect::Error(id.clone(), *code),
        Expect::Batch(n) => Expect::Batch(*n),
        Expect::Fails(code, id) => Expect::Fails(*code, id.clone()),
    };
    assert_eq!(got, normalized, "input: {}", String::from_utf8_lossy(input));
}

const PARSE: ErrorCode = ErrorCode::PARSE_ERROR;
const INVALID: ErrorCode = ErrorCode::INVALID_REQUEST;

#[test]
fn single_messages() {
    let d = DecodeOptions::default();
    let cases: &[(&[u8], Expect)] = &[
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            Expect::Request(RequestId::Integer(1), "ping"),
        ),
        (
            br#"{"jsonrpc":"2.0","id":"a","method":"x","params":{}}"#,
            Expect::Request(RequestId::from("a"), "x"),
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#,
            Expect::Request(RequestId::Integer(1), "x"),
        ),
        (
            br#"{"method":"x","jsonrpc":"2.0","id":9007199254740993}"#,
            Expect::Request(RequestId::Integer(9_007_199_254_740_993), "x"),
        ),
        (
            br#" {"jsonrpc":"2.0","method":"notifications/initialized"} "#,
            Expect::Notification("notifications/initialized"),
        ),
        (
            br#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
            Expect::Result(RequestId::Integer(3)),
        ),
        (
            br#"{"jsonrpc":"2.0","id":3,"result":null}"#,
            Expect::Result(RequestId::Integer(3)),
        ),
        (
            br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope"}}"#,
            Expect::Error(int(3), -32601),
        ),
        (
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#,
            Expect::Error(None, -32700),
        ),
        (
            br#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"bad"}}"#,
            Expect::Error(None, -32700),
        ),
        // Unknown members are ignored, exactly-named members are not confused with them.
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"x","Method":"y","extra":[1,{"a":2}]}"#,
            Expect::Request(RequestId::Integer(1), "x"),
        ),
        // Escaped keys are the keys they spell.
        (
            br#"{"jsonrpc":"2.0","id":1,"\u006dethod":"x"}"#,
            Expect::Request(RequestId::Integer(1), "x"),
        ),
        // Plain values are read without a second parse; escaped ones and the edges of
        // i64 take the full path, with the same outcome.
        (
            br#"{"jsonrpc":"\u0032.0","id":"a\"b","method":"\u0078"}"#,
            Expect::Request(RequestId::from("a\"b"), "x"),
        ),
        (
            br#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"x"}"#,
            Expect::Request(RequestId::Integer(i64::MIN), "x"),
        ),
        (
            br#"{"jsonrpc":"2.0","id":-0,"method":"x"}"#,
            Expect::Request(RequestId::Integer(0), "x"),
        ),
        (
            br#"{"jsonrpc":"2.0","id":"","method":"x"}"#,
            Expect::Request(RequestId::from(""), "x"),
        ),
    ];
    for (input, expected) in cases {
        check(input, d, expected);
    }
}

#[test]
fn not_json_is_a_parse_error_with_a_null_id() {
    let d = DecodeOptions::default();
    let cases: &[&[u8]] = &[
        b"",
        b"   ",
        b"{",
        b"not json",
        br#"{"jsonrpc":"2.0","id":1,"method":"x"} trailing"#,
        br#"{"jsonrpc":"2.0","id":1,"method":"x",}"#,
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}",
        b"\xef\xbb\xbf{}",
    ];
    for input in cases {
        check(input, d, &Expect::Fails(PARSE, None));
    }
    // Deep nesting never overflows the stack. The envelope passes `params` on as raw text
    // (the frame is already bounded by the transport); whoever parses it meets serde_json's
    // limit of 128 levels, so an unbounded structure is never built.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let frame =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{deep},"ignored":{deep}}}"#);
    let Ok(Decoded::Single(Message::Request(request))) = decode(frame.as_bytes(), d) else {
        panic!("the envelope reads");
    };
    let params = request.params.expect("params");
    let parsed = serde_json::from_str::<serde_json::Value>(params.text());
    assert!(parsed.is_err_and(|e| e.to_string().contains("recursion limit")));
    let top_level_deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(decode(top_level_deep.as_bytes(), d).is_err());
}

#[test]
fn wrong_shapes_are_invalid_requests_and_keep_the_id_when_it_is_readable() {
    let d = DecodeOptions::default();
    let cases: &[(&[u8], Option<RequestId>)] = &[
        (b"5", None),
        (b"\"x\"", None),
        (b"null", None),
        (b"{}", None),
        (br#"{"id":1,"method":"x"}"#, int(1)),
        (br#"{"jsonrpc":"1.0","id":1,"method":"x"}"#, int(1)),
        (br#"{"jsonrpc":2.0,"id":1,"method":"x"}"#, int(1)),
        (br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#, None),
        (br#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#, None),
        (br#"{"jsonrpc":"2.0","id":1.0,"method":"x"}"#, None),
        (br#"{"jsonrpc":"2.0","id":1e3,"method":"x"}"#, None),
        (
            br#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"x"}"#,
            None,
        ),
        (br#"{"jsonrpc":"2.0\u0020","id":1,"method":"x"}"#, int(1)),
        (br#"{"jsonrpc":"2.0","id":true,"method":"x"}"#, None),
        (br#"{"jsonrpc":"2.0","id":{},"method":"x"}"#, None),
        (br#"{"jsonrpc":"2.0","id":[1],"method":"x"}"#, None),
        (
            br#"{"jsonrpc":"2.0","id":99999999999999999999,"method":"x"}"#,
            None,
        ),
        (br#"{"jsonrpc":"2.0","id":1,"method":5}"#, int(1)),
        // A lone surrogate escape is JSON syntax but no string: the method is unreadable.
        (br#"{"jsonrpc":"2.0","id":1,"method":"\ud800"}"#, int(1)),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"x","params":"s"}"#,
            int(1),
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"x","params":null}"#,
            int(1),
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"x","result":{}}"#,
            int(1),
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#,
            int(1),
        ),
        (br#"{"jsonrpc":"2.0","id":1}"#, int(1)),
        (br#"{"jsonrpc":"2.0","result":{}}"#, None),
        (
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#,
            int(1),
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"error":{"message":"m"}}"#,
            int(1),
        ),
        // Duplicate keys are ambiguous: refused, whichever member repeats, and the refusal
        // names the id whenever the id itself was given once (before or after the repeat).
        (br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#, None),
        (br#"{"jsonrpc":"2.0","id":1,"method":"x","id":1}"#, None),
        (
            br#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"x"}"#,
            int(1),
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"x","method":"y"}"#,
            int(1),
        ),
        (
            br#"{"jsonrpc":"2.0","method":"tools/list","method":"tools/call","id":32}"#,
            int(32),
        ),
        (
            br#"{"jsonrpc":"2.0","id":32,"method":"tools/list","method":"tools/call","params":{}}"#,
            int(32),
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{},"params":{}}"#,
            int(1),
        ),
        (
            br#"{"jsonrpc":"2.0","id":"a","result":{},"result":{}}"#,
            Some(RequestId::String("a".into())),
        ),
    ];
    for (input, id) in cases {
        check(input, d, &Expect::Fails(INVALID, id.clone()));
    }
}

#[test]
fn batches_are_refused_unless_enabled_and_then_capped() {
    let batch =
        br#"[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"},{"bad":1}]"#;
    check(
        batch,
        DecodeOptions::default(),
        &Expect::Fails(INVALID, None),
    );
    let mut allowed = DecodeOptions::default();
    allowed.max_batch = Some(3);
    check(batch, allowed, &Expect::Batch(3));
    let Ok(Decoded::Batch(items)) = decode(batch, allowed) else {
        panic!()
    };
    assert!(items[0].is_ok() && items[1].is_ok());
    assert_eq!(
        items[2].as_ref().unwrap_err().code,
        INVALID,
        "one bad element does not spoil the rest"
    );

    allowed.max_batch = Some(2);
    check(batch, allowed, &Expect::Fails(INVALID, None));
    check(b"[]", allowed, &Expect::Fails(INVALID, None));
    check(b"[1,", allowed, &Expect::Fails(PARSE, None));
}

#[test]
fn encoded_frames_are_one_line_and_decode_back() {
    let params = serde_json::json!({ "text": "line one\nline two\r\n\u{2028}", "n": 1 });
    let frame = mcp_jsonrpc::encode_request(&RequestId::from("id\n1"), "tools/call", Some(&params))
        .unwrap();
    assert!(!frame.contains(&b'\n') && !frame.contains(&b'\r'));
    let Ok(Decoded::Single(Message::Request(r))) = decode(&frame, DecodeOptions::default()) else {
        panic!()
    };
    assert_eq!(r.id, RequestId::from("id\n1"));
    let back: serde_json::Value = serde_json::from_str(r.params.unwrap().text()).unwrap();
    assert_eq!(back, params);

    let error = mcp_jsonrpc::ErrorObject::invalid_params("bad")
        .with_data(serde_json::json!({"field": "x"}));
    let frame = mcp_jsonrpc::encode_error(None, &error);
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&frame).unwrap(),
        serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32602, "message": "bad", "data": {"field": "x"}}})
    );
}

/// JSON text is UTF-8 (RFC 8259, 8.1): invalid bytes are a parse error wherever they are,
/// in a member the decoder reads or in one it skips (the `message` fuzz target found the
/// skipped member accepted).
#[test]
fn invalid_utf8_is_a_parse_error_even_in_a_skipped_member() {
    let skipped = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"extra\":\"\x98\x98\"}";
    let err = decode(skipped, DecodeOptions::default()).unwrap_err();
    assert_eq!(err.code, ErrorCode::PARSE_ERROR, "{err}");
    let read = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\":\"\x98\"}}";
    let err = decode(read, DecodeOptions::default()).unwrap_err();
    assert_eq!(err.code, ErrorCode::PARSE_ERROR, "{err}");
    // Valid UTF-8 beyond ASCII in a skipped member is fine.
    let fine = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"extra\":\"h\u{e9}\u{1f600}\"}";
    assert!(decode(fine.as_bytes(), DecodeOptions::default()).is_ok());
}

/// `params` nested `levels` deep: arrays around one number.
fn nested_params(levels: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{}1{}}}"#,
        "[".repeat(levels),
        "]".repeat(levels)
    )
}

#[test]
fn params_at_the_nesting_limit_parse_and_one_level_more_does_not() {
    // serde_json's recursion limit, which no crate of the workspace disables: a value of
    // 127 nested arrays parses, one of 128 does not (its `remaining_depth` starts at 128 and
    // must stay above 0). The envelope reads both: it keeps `params` raw.
    let d = DecodeOptions::default();
    let parse = |levels: usize| {
        let frame = nested_params(levels);
        let Ok(Decoded::Single(Message::Request(request))) = decode(frame.as_bytes(), d) else {
            panic!("the envelope reads {levels} levels of params");
        };
        serde_json::from_str::<serde_json::Value>(request.params.expect("params").text())
    };
    assert!(parse(127).is_ok(), "at the limit");
    assert!(
        parse(128).is_err_and(|e| e.to_string().contains("recursion limit")),
        "one level past it"
    );
}

#[test]
fn a_raw_result_in_three_parts_is_the_one_frame_and_its_result_is_not_copied() {
    use mcp_jsonrpc::{encode_raw_result, encode_raw_result_parts};
    use serde_json::value::RawValue;
    for id in [
        RequestId::Integer(0),
        RequestId::Integer(-9_007_199_254_740_991),
        RequestId::String("a \"quoted\" id\n".into()),
    ] {
        for text in ["{}", r#"{"content":[{"type":"text","text":"\u00e9"}]}"#] {
            let result = RawValue::from_string(text.to_owned()).unwrap();
            let one = encode_raw_result(&id, &result);
            let address = result.get().as_ptr();
            let [head, body, tail] = encode_raw_result_parts(&id, result);
            assert_eq!([&head[..], &body[..], &tail[..]].concat(), one.to_vec());
            assert_eq!(body.as_ptr(), address, "the result's own allocation");
            let decoded = decode(&one, DecodeOptions::default());
            assert!(
                matches!(decoded, Ok(Decoded::Single(Message::Response(_)))),
                "{decoded:?}"
            );
        }
    }
}

#[test]
fn a_batch_bomb_is_counted_not_kept_and_refused() {
    let mut capped = DecodeOptions::default();
    capped.max_batch = Some(32);
    // 200 000 tiny elements: refused with their count, where batches are allowed or not.
    let bomb = format!("[{}0]", "0,".repeat(199_999));
    let err = decode(bomb.as_bytes(), capped).unwrap_err();
    assert_eq!(err.code, INVALID);
    assert!(
        err.message
            .contains("batch of 200000 messages exceeds the limit of 32"),
        "{err}"
    );
    let err = decode(bomb.as_bytes(), DecodeOptions::default()).unwrap_err();
    assert_eq!(err.code, INVALID);
    // At the limit it is a batch; one more is refused.
    let request = r#"{"jsonrpc":"2.0","method":"n"}"#;
    let at = format!("[{}]", vec![request; 32].join(","));
    assert!(
        matches!(decode(at.as_bytes(), capped), Ok(Decoded::Batch(items)) if items.len() == 32)
    );
    let past = format!("[{}]", vec![request; 33].join(","));
    assert_eq!(decode(past.as_bytes(), capped).unwrap_err().code, INVALID);
    // Bytes that are not JSON, before or past the limit, are still a parse error.
    for broken in [
        format!("[{}0", "0,".repeat(40)),
        format!("[{}0]x", "0,".repeat(40)),
        "[0,]".to_owned(),
    ] {
        let err = decode(broken.as_bytes(), capped).unwrap_err();
        assert_eq!(err.code, ErrorCode::PARSE_ERROR, "{broken}");
    }
}
