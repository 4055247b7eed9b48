//! A small MCP server over stdio: `echo` and `add` tools, a resource, a prompt.
//!
//! It uses this crate alone, so it serves 2026-07-28 clients only: an `initialize`
//! handshake gets -32601. Clients that still open with `initialize` (2025-11-25 and older,
//! most clients in use) need the server served by `mcp::serve_stdio` of the `mcp` crate
//! (or `mcp_legacy::server::DualEra`), as `examples/minimal-server` at the repository's
//! root does. Run it under a 2026-07-28 client that launches stdio servers, or by hand:
//!
//! ```sh
//! cargo run -p mcp-server --example demo
//! {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"add","arguments":{"a":2,"b":3}}}
//! ```

use mcp_server::{PromptDef, ResourceDef, Server, ToolDef};
use mcp_types::{
    CallToolResult, ContentBlock, EmbeddedResourceResource, GetPromptResult, PromptMessage, Role,
    TextResourceContents,
};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    /// The text to send back.
    text: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder("demo", env!("CARGO_PKG_VERSION"))
        .instructions("A demonstration server: echo text, add numbers.")
        .tool(
            ToolDef::typed("echo", |args: Echo, _cx| async move {
                Ok(CallToolResult::text(args.text))
            })
            .description("Echoes the text back"),
        )
        .tool(
            ToolDef::structured("add", |args: Add, _cx| async move {
                Ok(Sum {
                    sum: args.a + args.b,
                })
            })
            .description("Adds two integers"),
        )
        .resource(
            ResourceDef::new("demo://readme", "readme", |uri, _cx| async move {
                Ok(vec![EmbeddedResourceResource::TextResourceContents(
                    TextResourceContents::new("This server echoes and adds.", uri),
                )])
            })
            .mime_type("text/plain"),
        )
        .prompt(
            PromptDef::new("greet", |args, _cx| async move {
                let name = args.get("name").cloned().unwrap_or_default();
                Ok(GetPromptResult::new(vec![PromptMessage::new(
                    ContentBlock::text(format!("Say hello to {name}.")),
                    Role::User,
                )]))
            })
            .argument("name", "Who to greet", true),
        )
        .build()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(server.serve_stdio());
    Ok(())
}
