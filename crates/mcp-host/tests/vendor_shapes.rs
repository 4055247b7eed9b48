//! Calls in and results out, for every vendor: JSON in, JSON out, through one `check`
//! function per direction.

use mcp_host::{ToolCall, ToolOutcome, Vendor};
use mcp_types::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

/// Parses `input` with `parse` and compares `(id, name, arguments or error)` with
/// `expected`; `expected` is `null` for a call that must be refused as malformed.
fn check_call(
    parse: fn(&Value) -> Result<ToolCall, mcp_host::Error>,
    input: &Value,
    expected: &Value,
) {
    let got = match parse(input) {
        Ok(call) => match call.arguments {
            Ok(arguments) => json!([call.id, call.name, arguments]),
            Err(_) => json!([call.id, call.name, "invalid"]),
        },
        Err(_) => Value::Null,
    };
    assert_eq!(&got, expected, "for {input}");
}

#[test]
fn calls_in() {
    let openai = ToolCall::from_openai;
    let cases = [
        (
            json!({"id": "1", "type": "function", "function": {"name": "s__t", "arguments": "{\"a\": 1}"}}),
            json!(["1", "s__t", {"a": 1}]),
        ),
        (
            json!({"id": "1", "function": {"name": "s__t", "arguments": ""}}),
            json!(["1", "s__t", {}]),
        ),
        (
            json!({"id": "1", "function": {"name": "s__t", "arguments": "null"}}),
            json!(["1", "s__t", {}]),
        ),
        (
            json!({"id": "1", "function": {"name": "s__t", "arguments": "{\"a\": "}}),
            json!(["1", "s__t", "invalid"]),
        ),
        (
            json!({"id": "1", "function": {"name": "s__t", "arguments": "[1, 2]"}}),
            json!(["1", "s__t", "invalid"]),
        ),
        (
            json!({"id": "1", "function": {"name": "s__t", "arguments": {"a": 1}}}),
            json!(["1", "s__t", {"a": 1}]),
        ),
        (
            json!({"function": {"name": "s__t", "arguments": "{}"}}),
            Value::Null,
        ),
        (json!({"id": "1"}), Value::Null),
        (json!("not a call"), Value::Null),
    ];
    for (input, expected) in &cases {
        check_call(openai, input, expected);
    }
    let anthropic = ToolCall::from_anthropic;
    check_call(
        anthropic,
        &json!({"type": "tool_use", "id": "t", "name": "n", "input": {"x": [1]}}),
        &json!(["t", "n", {"x": [1]}]),
    );
    check_call(
        anthropic,
        &json!({"type": "tool_use", "id": "t", "name": "n", "input": "x"}),
        &json!(["t", "n", "invalid"]),
    );
    check_call(
        anthropic,
        &json!({"type": "tool_use", "name": "n"}),
        &Value::Null,
    );
    let responses = ToolCall::from_openai_responses;
    check_call(
        responses,
        &json!({"type": "function_call", "call_id": "c", "name": "n", "arguments": "{\"q\": \"x\"}"}),
        &json!(["c", "n", {"q": "x"}]),
    );
    let gemini = |part: &Value| ToolCall::from_gemini(part, 3);
    check_call(
        gemini,
        &json!({"functionCall": {"name": "n", "args": {"q": 1}}}),
        &json!(["call_3", "n", {"q": 1}]),
    );
    check_call(
        gemini,
        &json!({"functionCall": {"id": "g", "name": "n"}}),
        &json!(["g", "n", {}]),
    );
    check_call(gemini, &json!({"text": "hi"}), &Value::Null);

    // Whole messages: only the tool calls are taken.
    let message = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "x", "arguments": "{}"}},
        {"id": "b", "type": "function", "function": {"name": "y", "arguments": "{}"}}
    ]});
    assert_eq!(ids(ToolCall::from_openai_message(&message)), ["a", "b"]);
    assert!(
        ToolCall::from_openai_message(&json!({"role": "assistant", "content": "hi"}))
            .unwrap()
            .is_empty()
    );
    let content = json!([
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "u1", "name": "x", "input": {}},
        {"type": "tool_use", "id": "u2", "name": "y", "input": {}}
    ]);
    assert_eq!(
        ids(ToolCall::from_anthropic_content(&content)),
        ["u1", "u2"]
    );
}

/// The ids of the tool calls read from a vendor's message, which must read.
fn ids<E: std::fmt::Debug>(calls: Result<Vec<ToolCall>, E>) -> Vec<String> {
    calls.unwrap().into_iter().map(|c| c.id).collect()
}

/// Renders `result` for `vendor` as the answer to call `id` and compares with `expected`.
fn check_result(vendor: Vendor, result: &CallToolResult, expected: &Value) {
    let got = ToolOutcome::new("id", "s__t", result.clone()).to_vendor(vendor);
    assert_eq!(&got, expected, "{vendor}");
}

#[test]
fn results_out() {
    let mixed = CallToolResult::new(vec![
        ContentBlock::text("hello"),
        ContentBlock::image("AAAA", "image/png"),
        ContentBlock::embedded_text("file:///a.txt", Some("text/plain".into()), "file text"),
        ContentBlock::embedded_blob("file:///b.bin", None, "AAAAAAAA"),
        ContentBlock::resource_link("file:///c", "c"),
        ContentBlock::audio("AAAA", "audio/wav"),
    ]);
    check_result(
        Vendor::Anthropic,
        &mixed,
        &json!({
            "type": "tool_result", "tool_use_id": "id", "is_error": false, "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
                {"type": "text", "text": "file text"},
                {"type": "text", "text": "[binary resource <file:///b.bin>, 8 bytes of base64 not shown]"},
                {"type": "text", "text": "[resource link: c <file:///c>]"},
                {"type": "text", "text": "[audio: audio/wav, 4 bytes of base64 not shown]"}
            ]
        }),
    );
    // A Chat tool message is text only: the image and the WAV clip go into the user
    // message that follows the turn's tool messages.
    let flat = "hello\n[image: image/png, in the user message after the tool results]\nfile text\n[binary resource <file:///b.bin>, 8 bytes of base64 not shown]\n[resource link: c <file:///c>]\n[audio: audio/wav, in the user message after the tool results]";
    check_result(
        Vendor::OpenAiChat,
        &mixed,
        &json!({"role": "tool", "tool_call_id": "id", "content": flat}),
    );
    assert_eq!(
        ToolOutcome::new("id", "s__t", mixed.clone()).to_openai_chat_follow_up(),
        Some(json!({"role": "user", "content": [
            {"type": "text", "text": "Attached to the result of tool call id (s__t):"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}
        ]}))
    );
    check_result(
        Vendor::OpenAiResponses,
        &mixed,
        &json!({"type": "function_call_output", "call_id": "id", "output": [
            {"type": "input_text", "text": "hello"},
            {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
            {"type": "input_text", "text": "file text"},
            {"type": "input_text", "text": "[binary resource <file:///b.bin>, 8 bytes of base64 not shown]"},
            {"type": "input_text", "text": "[resource link: c <file:///c>]"},
            {"type": "input_text", "text": "[audio: audio/wav, 4 bytes of base64 not shown]"}
        ]}),
    );
    // All text stays a string.
    check_result(
        Vendor::OpenAiResponses,
        &CallToolResult::text("plain"),
        &json!({"type": "function_call_output", "call_id": "id", "output": "plain"}),
    );

    // structuredContent stands in when there is no text.
    let mut structured = CallToolResult::new(vec![]);
    structured.structured_content = Some(json!({"temp": 21}));
    check_result(
        Vendor::Anthropic,
        &structured,
        &json!({
            "type": "tool_result", "tool_use_id": "id", "is_error": false,
            "content": [{"type": "text", "text": "{\"temp\":21}"}]
        }),
    );
    check_result(
        Vendor::Gemini,
        &structured,
        &json!({"functionResponse": {
            "id": "id", "name": "s__t", "response": {"content": "{\"temp\":21}", "structuredContent": {"temp": 21}}
        }}),
    );
    // Beside text it is added, unless a text block already holds the same JSON (as the
    // spec asks servers to send it).
    check_result(
        Vendor::OpenAiChat,
        &CallToolResult::structured(json!({"t": 1})),
        &json!({
            "role": "tool", "tool_call_id": "id", "content": "{\"t\":1}"
        }),
    );
    let mut beside = CallToolResult::text("{ \"t\": 1 }");
    beside.structured_content = Some(json!({"t": 1}));
    check_result(
        Vendor::OpenAiChat,
        &beside,
        &json!({"role": "tool", "tool_call_id": "id", "content": "{ \"t\": 1 }"}),
    );
    let mut summary = CallToolResult::text("It is 21 degrees.");
    summary.structured_content = Some(json!({"temp": 21}));
    check_result(
        Vendor::OpenAiChat,
        &summary,
        &json!({"role": "tool", "tool_call_id": "id", "content": "It is 21 degrees.\n{\"temp\":21}"}),
    );
    check_result(
        Vendor::OpenAiResponses,
        &summary,
        &json!({"type": "function_call_output", "call_id": "id", "output": "It is 21 degrees.\n{\"temp\":21}"}),
    );
    check_result(
        Vendor::Gemini,
        &summary,
        &json!({"functionResponse": {
            "id": "id", "name": "s__t", "response": {"content": "It is 21 degrees.", "structuredContent": {"temp": 21}}
        }}),
    );

    // isError maps to each vendor's error signal.
    let error = CallToolResult::error("boom");
    check_result(
        Vendor::Anthropic,
        &error,
        &json!({
            "type": "tool_result", "tool_use_id": "id", "is_error": true, "content": [{"type": "text", "text": "boom"}]
        }),
    );
    check_result(
        Vendor::OpenAiChat,
        &error,
        &json!({"role": "tool", "tool_call_id": "id", "content": "Error: boom"}),
    );
    check_result(
        Vendor::Gemini,
        &error,
        &json!({"functionResponse": {"id": "id", "name": "s__t", "response": {"error": "boom"}}}),
    );
}

#[test]
fn an_openai_chat_turn_is_its_tool_messages_then_one_user_message_with_the_media() {
    let shot = CallToolResult::new(vec![ContentBlock::image("AAAA", "image/png")]);
    let voice = CallToolResult::new(vec![
        ContentBlock::text("said it"),
        ContentBlock::audio("AAAA", "audio/mpeg"),
    ]);
    let outcomes = [
        ToolOutcome::new("a", "cam__shot", shot),
        ToolOutcome::new("b", "fs__read", CallToolResult::text("plain")),
        ToolOutcome::new("c", "voice__say", voice),
    ];
    let messages = ToolOutcome::openai_chat_messages(&outcomes);
    let roles: Vec<&Value> = messages.iter().map(|m| &m["role"]).collect();
    assert_eq!(roles, ["tool", "tool", "tool", "user"]);
    let ids: Vec<&Value> = messages[..3].iter().map(|m| &m["tool_call_id"]).collect();
    assert_eq!(ids, ["a", "b", "c"]);
    assert_eq!(
        messages[3]["content"],
        json!([
            {"type": "text", "text": "Attached to the result of tool call a (cam__shot):"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            {"type": "text", "text": "Attached to the result of tool call c (voice__say):"},
            {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "mp3"}}
        ])
    );
    // Without media, the tool messages alone.
    let text_only = ToolOutcome::openai_chat_messages(&outcomes[1..2]);
    assert_eq!(text_only, [outcomes[1].to_openai_chat()]);
    assert!(ToolOutcome::openai_chat_messages(&[]).is_empty());
}
