//! `structuredContent` checked against the listed `outputSchema`, against this workspace's
//! server in process. The server checks its own output against the schema it holds, so a
//! thin wrapper around it advertises a stricter schema for one tool in `tools/list`: the
//! tool then returns (valid for the server) content the client must refuse.

#![cfg(feature = "schema-validation")]

use mcp_client::{Client, Error};
use mcp_jsonrpc::{ErrorObject, Handler, Request, RequestContext};
use mcp_server::{Server, ToolDef, ToolError};
use mcp_test_support::client::connect_in_memory;
use mcp_types::{CallToolResult, JsonObject};
use serde_json::value::RawValue;
use serde_json::{Value, json};

fn structured(value: Value) -> CallToolResult {
    let mut result = CallToolResult::text(value.to_string());
    result.structured_content = Some(value);
    result
}

fn server() -> Server {
    let sum =
        json!({"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]});
    Server::builder("structured", "1")
        .tool(
            ToolDef::new("good", json!({"type": "object"}), |_, _| async {
                Ok(structured(json!({"sum": 5})))
            })
            .output_schema(sum.clone()),
        )
        .tool(
            ToolDef::new("liar", json!({"type": "object"}), |_, _| async {
                Ok(structured(json!({"sum": 5})))
            })
            .output_schema(sum.clone()),
        )
        .tool(
            ToolDef::new("bare", json!({"type": "object"}), |_, _| async {
                Ok(CallToolResult::text("no structure"))
            })
            .output_schema(sum.clone()),
        )
        .tool(
            ToolDef::new("fails", json!({"type": "object"}), |_, _| async {
                Err(ToolError::failed("broken"))
            })
            .output_schema(sum),
        )
        .tool(ToolDef::new(
            "plain",
            json!({"type": "object"}),
            |_, _| async { Ok(CallToolResult::text("free text")) },
        ))
        .build()
        .unwrap()
}

/// The server, with the `liar` tool's listed `outputSchema` asking for a string `sum`.
struct Stricter(Server);

impl Handler for Stricter {
    async fn request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let listing = request.method == "tools/list";
        let raw = self.0.request(request, cx).await?;
        if !listing {
            return Ok(raw);
        }
        let mut value: Value = serde_json::from_str(raw.get()).unwrap();
        for tool in value["tools"].as_array_mut().unwrap() {
            if tool["name"] == "liar" {
                tool["outputSchema"]["properties"]["sum"] = json!({"type": "string"});
            }
        }
        Ok(RawValue::from_string(value.to_string()).unwrap())
    }
}

#[tokio::test]
async fn structured_results_are_checked_against_the_listed_output_schema() {
    let (client, _c, _s) = connect_in_memory(Stricter(server()), Client::builder("c", "1"), 64);

    // Before any listing nothing is known, so nothing is checked.
    client.call_tool("liar", JsonObject::new()).await.unwrap();
    client.call_tool("bare", JsonObject::new()).await.unwrap();

    client.list_tools_all().await.unwrap();
    let good = client.call_tool("good", JsonObject::new()).await.unwrap();
    assert_eq!(good.structured_content, Some(json!({"sum": 5})));

    let err = client
        .call_tool("liar", JsonObject::new())
        .await
        .unwrap_err();
    match &err {
        Error::StructuredContentInvalid { tool, reason } => {
            assert_eq!(tool, "liar");
            assert!(reason.contains("string"), "{reason}");
        }
        other => panic!("{other:?}"),
    }

    // A declared outputSchema without structuredContent is refused too.
    let err = client
        .call_tool("bare", JsonObject::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::StructuredContentInvalid { tool, reason } if tool == "bare" && reason.contains("no structuredContent")),
        "{err:?}"
    );

    // A tool failure is not checked; a tool without outputSchema is not either.
    let failed = client.call_tool("fails", JsonObject::new()).await.unwrap();
    assert_eq!(failed.is_error, Some(true));
    client.call_tool("plain", JsonObject::new()).await.unwrap();

    // Listing again (served from the cache here) keeps the checks.
    client.list_tools_all().await.unwrap();
    assert!(client.call_tool("liar", JsonObject::new()).await.is_err());
}

#[tokio::test]
async fn an_output_schema_that_cannot_be_compiled_fails_closed() {
    struct Unusable(Server);
    impl Handler for Unusable {
        async fn request(
            &self,
            request: Request,
            cx: RequestContext,
        ) -> Result<Box<RawValue>, ErrorObject> {
            let listing = request.method == "tools/list";
            let raw = self.0.request(request, cx).await?;
            if !listing {
                return Ok(raw);
            }
            let mut value: Value = serde_json::from_str(raw.get()).unwrap();
            for tool in value["tools"].as_array_mut().unwrap() {
                if tool["name"] == "good" {
                    // A remote reference: never fetched, so never usable.
                    tool["outputSchema"] =
                        json!({"type": "object", "$ref": "https://example.invalid/s.json"});
                }
            }
            Ok(RawValue::from_string(value.to_string()).unwrap())
        }
    }
    let (client, _c, _s) = connect_in_memory(Unusable(server()), Client::builder("c", "1"), 64);
    client.list_tools_all().await.unwrap();
    let err = client
        .call_tool("good", JsonObject::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::StructuredContentInvalid { reason, .. } if reason.contains("cannot be used")),
        "{err:?}"
    );
}
