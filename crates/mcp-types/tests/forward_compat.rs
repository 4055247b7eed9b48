//! Forward compatibility and exactness: unknown members never fail a message, open objects
//! keep them, ids stay exact, and a union names the variant it could not find.

use mcp_types::{
    CallToolRequest, CallToolResult, ClientCapabilities, ContentBlock, JSONRPCMessage,
    ListToolsResult, RequestId, ServerResult,
};
use serde_json::{Value, json};

fn round_trip<T: serde::de::DeserializeOwned + serde::Serialize>(value: &Value) -> Value {
    let typed: T = serde_json::from_value(value.clone()).expect("deserializes");
    serde_json::to_value(typed).unwrap()
}

#[test]
fn unknown_members_are_tolerated_everywhere_and_kept_where_the_schema_is_open() {
    let request = json!({
        "jsonrpc": "2.0",
        "id": 9_007_199_254_740_993_i64,
        "method": "tools/call",
        "futureTopLevel": true,
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {
                    "roots": {},
                    "extensions": { "com.example/ext": { "setting": 1 } },
                    "com.example/futureCapability": { "x": [1, 2] }
                },
                "com.example/trace": "abc"
            },
            "name": "get_weather",
            "futureParam": "dropped",
            "arguments": { "location": "New York", "nested": { "deep": [1, { "k": null }] } }
        }
    });
    let back = round_trip::<CallToolRequest>(&request);

    // The closed objects drop what they do not know, without failing.
    assert_eq!(back.get("futureTopLevel"), None);
    assert_eq!(back["params"].get("futureParam"), None);
    // The open ones keep it: `_meta`, capabilities, extensions, arguments.
    let mut expected = request.clone();
    expected.as_object_mut().unwrap().remove("futureTopLevel");
    expected["params"]
        .as_object_mut()
        .unwrap()
        .remove("futureParam");
    assert_eq!(back, expected);
    // The id survived exactly (a float would have made it ...992).
    assert_eq!(back["id"].as_i64(), Some(9_007_199_254_740_993));
    let typed: CallToolRequest = serde_json::from_value(request).unwrap();
    assert_eq!(typed.id, RequestId::Integer(9_007_199_254_740_993));
    assert_eq!(
        typed.params.meta.client_capabilities.extra["com.example/futureCapability"],
        json!({ "x": [1, 2] })
    );
}

#[test]
fn schemas_and_structured_content_survive_in_order() {
    let result = json!({
        "resultType": "complete",
        "ttlMs": 0,
        "cacheScope": "public",
        "tools": [{
            "name": "search",
            "inputSchema": {
                "type": "object",
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "properties": {
                    "zeta": { "type": "string", "x-mcp-header": "Zeta" },
                    "alpha": { "type": "integer", "minimum": 1 }
                },
                "required": ["zeta"],
                "additionalProperties": false
            },
            "outputSchema": { "type": "object", "properties": { "hits": { "type": "array" } } }
        }]
    });
    let back = round_trip::<ListToolsResult>(&result);
    assert_eq!(back, result);
    // Key order inside the schema is the author's order, not alphabetical.
    let keys: Vec<&String> = back["tools"][0]["inputSchema"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["zeta", "alpha"]);

    let call = json!({
        "resultType": "complete",
        "content": [],
        "structuredContent": [3, "any", { "json": null }]
    });
    assert_eq!(round_trip::<CallToolResult>(&call), call);
}

#[test]
fn elicitation_form_properties_keep_their_order() {
    let request = json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Who are you?",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "name": { "type": "string" },
                    "age": { "type": "integer", "minimum": 0 },
                    "email": { "type": "string", "format": "email" }
                },
                "required": ["name"]
            }
        }
    });
    let back = serde_json::to_string(
        &serde_json::from_value::<mcp_types::ElicitRequest>(request).unwrap(),
    )
    .unwrap();
    let name = back.find("\"name\"").unwrap();
    let age = back.find("\"age\"").unwrap();
    let email = back.find("\"email\"").unwrap();
    assert!(name < age && age < email, "{back}");
}

#[test]
fn capabilities_keep_unknown_members() {
    let caps = json!({ "sampling": { "tools": {} }, "experimental": { "x": { "y": 1 } }, "future": { "z": true } });
    assert_eq!(round_trip::<ClientCapabilities>(&caps), caps);
}

#[test]
fn tagged_unions_name_what_they_could_not_find() {
    let unknown = block_error(json!({ "type": "hologram", "data": "" }));
    assert!(
        unknown.contains("text"),
        "lists what it expected: {unknown}"
    );
    for (value, expected) in [
        (
            json!({ "type": "hologram", "data": "" }),
            "unknown variant `hologram`",
        ),
        (json!({ "text": "hi" }), "missing field `type`"),
        (json!({ "type": 7 }), "must be a string"),
        (json!("text"), "expected a JSON object"),
        // A variant's own error surfaces too: a text block without its text.
        (json!({ "type": "text" }), "missing field `text`"),
    ] {
        let error = block_error(value.clone());
        assert!(error.contains(expected), "{value}: {error}");
    }
}

/// Why `value` is not a content block.
fn block_error(value: Value) -> String {
    serde_json::from_value::<ContentBlock>(value)
        .unwrap_err()
        .to_string()
}

#[test]
fn a_tag_member_accepts_only_its_value() {
    let wrong_version = json!({ "jsonrpc": "1.0", "id": 1, "method": "tools/call", "params": {} });
    let err = serde_json::from_value::<CallToolRequest>(wrong_version)
        .unwrap_err()
        .to_string();
    assert!(err.contains("2.0"), "{err}");

    let wrong_method = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list",
        "params": { "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                               "io.modelcontextprotocol/clientCapabilities": {} }, "name": "x" } });
    let err = serde_json::from_value::<CallToolRequest>(wrong_method)
        .unwrap_err()
        .to_string();
    assert!(err.contains("tools/call"), "{err}");
}

#[test]
fn untagged_unions_choose_the_variant_that_fits_exactly() {
    // An input-required result is not mistaken for any other result, and a complete result
    // is never read as input-required.
    let input_required = json!({ "resultType": "input_required", "requestState": "abc" });
    let typed: ServerResult = serde_json::from_value(input_required.clone()).unwrap();
    assert!(
        matches!(typed, ServerResult::InputRequiredResult(_)),
        "{typed:?}"
    );
    assert_eq!(serde_json::to_value(typed).unwrap(), input_required);

    let call = json!({ "resultType": "complete", "content": [{ "type": "text", "text": "hi" }] });
    let typed: ServerResult = serde_json::from_value(call.clone()).unwrap();
    assert!(
        matches!(typed, ServerResult::CallToolResult(_)),
        "{typed:?}"
    );

    let message = json!({ "jsonrpc": "2.0", "method": "notifications/progress",
        "params": { "progressToken": "t", "progress": 0.5 } });
    let typed: JSONRPCMessage = serde_json::from_value(message.clone()).unwrap();
    assert!(
        matches!(typed, JSONRPCMessage::JSONRPCNotification(_)),
        "{typed:?}"
    );
    assert_eq!(serde_json::to_value(typed).unwrap(), message);

    let request = json!({ "jsonrpc": "2.0", "id": "a", "method": "x" });
    let typed: JSONRPCMessage = serde_json::from_value(request).unwrap();
    assert!(
        matches!(typed, JSONRPCMessage::JSONRPCRequest(_)),
        "{typed:?}"
    );
}

#[test]
fn legacy_messages_read_into_legacy_types() {
    let initialize = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": { "protocolVersion": "2024-11-05", "capabilities": { "roots": { "listChanged": true } },
                    "clientInfo": { "name": "old-client", "version": "0.1" } }
    });
    assert_eq!(
        round_trip::<mcp_types::legacy::InitializeRequest>(&initialize),
        initialize
    );
}
