//! One server, both eras, on stdio or Streamable HTTP: a legacy client that sends
//! `initialize` and a modern one that sends `_meta` are both served by the same handlers.
//!
//! ```text
//! cargo run -p mcp-legacy --bin mcp-dual-era-demo                        # stdio
//! cargo run -p mcp-legacy --bin mcp-dual-era-demo -- --http 127.0.0.1:0  # prints its URL
//! cargo run -p mcp-legacy --bin mcp-dual-era-demo -- --versions 2025-06-18
//! ```
//!
//! `--versions` serves only the listed legacy revisions (comma-separated), so a client
//! negotiates exactly that one. `--faults` adds two tools for the fault-injection tests
//! (`tests/faults_*.rs`): `die` ends the process with status 70 from inside its handler,
//! without answering (a crash mid-request), and `hang` reports progress once (when asked
//! for it), writes `hang started` to stderr and then waits until it is cancelled, when it
//! writes `hang cancelled` to stderr. The interop test `crates/mcp-legacy/tests/interop.rs`
//! drives it with the TypeScript SDK v1 client (legacy only) and the Python SDK client.

use mcp_legacy::http::{DualEraHttp, LegacyHttpConfig};
use mcp_legacy::server::{DualEra, LEGACY_VERSIONS};
use mcp_server::{PromptDef, ResourceDef, Server, ToolDef, ToolError};
use mcp_transport_http::HttpServerConfig;
use mcp_types::{
    CallToolResult, ContentBlock, CreateMessageRequestParams, ElicitRequestFormParams,
    ElicitRequestParams, EmbeddedResourceResource, GetPromptResult, LoggingLevel, PromptMessage,
    Role, TextResourceContents,
};
use serde_json::json;

fn server(faults: bool) -> Result<Server, mcp_server::Error> {
    let builder = Server::builder("dual-era-demo", "1.0.0")
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
            .description("Echoes the text back"),
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
            .description("Asks the user's name, then the client's model for a poem"),
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
            .argument("name", "Who to greet", true),
        );
    if !faults {
        return builder.build();
    }
    builder
        .tool(ToolDef::new(
            "die",
            json!({"type": "object"}),
            |_args, _cx| async move {
                // A crash while a request is in flight: no answer, no flush of anything queued.
                std::process::exit(70)
            },
        ))
        .tool(ToolDef::new(
            "hang",
            json!({"type": "object"}),
            |_args, cx| async move {
                cx.progress(0.0, None, Some("started")).await;
                eprintln!("hang started");
                cx.cancellation().cancelled().await;
                eprintln!("hang cancelled");
                Err(ToolError::failed("cancelled"))
            },
        ))
        .build()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut http = None;
    let mut faults = false;
    let mut versions: Vec<String> = LEGACY_VERSIONS.iter().map(|v| (*v).to_owned()).collect();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--faults" {
            faults = true;
            continue;
        }
        match (flag.as_str(), args.next()) {
            ("--http", Some(addr)) => http = Some(addr.parse::<std::net::SocketAddr>()?),
            ("--versions", Some(list)) => versions = list.split(',').map(str::to_owned).collect(),
            _ => {
                return Err(
                    "usage: mcp-dual-era-demo [--http IP:PORT] [--versions V1,V2] [--faults]"
                        .into(),
                );
            }
        }
    }
    let versions: Vec<&str> = versions.iter().map(String::as_str).collect();
    match http {
        None => {
            DualEra::new(server(faults)?)
                .with_legacy_versions(&versions)
                .serve_stdio()
                .await;
        }
        Some(addr) => {
            let legacy = LegacyHttpConfig::default().versions(&versions);
            let running =
                DualEraHttp::bind(addr, server(faults)?, HttpServerConfig::default(), legacy)
                    .await?;
            println!("{}", running.url());
            // Serve until stdin closes (the parent went away) or the process is killed.
            let mut sink = Vec::new();
            let _ = tokio::io::AsyncReadExt::read_to_end(&mut tokio::io::stdin(), &mut sink).await;
            running.shutdown(std::time::Duration::from_secs(1)).await;
        }
    }
    Ok(())
}
