//! One server, both eras, on stdio: a legacy client that sends `initialize` and a modern
//! one that sends `_meta` are both served by the same handlers.
//!
//! ```text
//! cargo run -p mcp-legacy --bin mcp-dual-era-demo
//! ```
//!
//! The interop test `crates/mcp-legacy/tests/interop.rs` drives it with the TypeScript
//! SDK v1 client (legacy only).

use mcp_legacy::server::DualEra;
use mcp_server::{PromptDef, ResourceDef, Server, ToolDef, ToolError};
use mcp_types::{
    CallToolResult, ContentBlock, CreateMessageRequestParams, ElicitRequestFormParams,
    ElicitRequestParams, EmbeddedResourceResource, GetPromptResult, LoggingLevel, PromptMessage,
    Role, TextResourceContents,
};
use serde_json::json;

fn server() -> Result<Server, mcp_server::Error> {
    Server::builder("dual-era-demo", "1.0.0")
        .instructions("A demo server for both MCP eras.")
        .tool(
            ToolDef::new(
                "echo",
                json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
                |args, cx| async move {
                    cx.log(LoggingLevel::Info, json!("echoing")).await;
                    Ok(CallToolResult::text(args["text"].as_str().unwrap_or_default()))
                },
            )
            .map(|t| t.description("Echoes the text back")),
        )
        .tool(ToolDef::new("fails", json!({"type": "object"}), |_args, _cx| async move {
            Err(ToolError::failed("this tool always fails"))
        }))
        .tool(
            ToolDef::new("interview", json!({"type": "object"}), |_args, cx| async move {
                // Two rounds of input: a form for the user, then the client's model. A
                // legacy client gets `elicitation/create` and `sampling/createMessage`.
                let form: ElicitRequestFormParams = serde_json::from_value(json!({
                    "message": "What is your name?",
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
                }))?;
                let answer = cx.elicit("name", ElicitRequestParams::ElicitRequestForm(form))?;
                let name = answer
                    .content
                    .as_ref()
                    .and_then(|c| c.get("name"))
                    .and_then(|n| serde_json::to_value(n).ok())
                    .and_then(|n| n.as_str().map(str::to_owned))
                    .unwrap_or_default();
                let ask: CreateMessageRequestParams = serde_json::from_value(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": format!("A haiku for {name}")}}],
                    "maxTokens": 50
                }))?;
                let poem = cx.sample("poem", ask)?;
                let poem = serde_json::to_value(&poem.content)?;
                Ok(CallToolResult::text(format!("{name}: {}", poem["text"].as_str().unwrap_or_default())))
            })
            .map(|t| t.description("Asks the user's name, then the client's model for a poem")),
        )
        .resource(ResourceDef::new("demo://hello", "hello", |uri, _cx| async move {
            Ok(vec![EmbeddedResourceResource::TextResourceContents(
                TextResourceContents::new("Hello, world", uri),
            )])
        }))
        .prompt(
            PromptDef::new("greet", |args, _cx| async move {
                let name = args.get("name").cloned().unwrap_or_default();
                Ok(GetPromptResult::new(vec![PromptMessage::new(
                    ContentBlock::text(format!("Hello {name}")),
                    Role::User,
                )]))
            })
            .map(|p| p.argument("name", "Who to greet", true)),
        )
        .build()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    DualEra::new(server()?).serve_stdio().await;
    Ok(())
}
