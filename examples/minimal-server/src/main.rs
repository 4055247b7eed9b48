use mcp::prelude::*;
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    text: String,
}
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}
#[tokio::main]
async fn main() -> Result<(), mcp::Error> {
    let server = Server::builder("minimal-server", "0.2.0")
        .tool(ToolDef::typed("echo", |args: Echo, _cx| async move {
            Ok(CallToolResult::text(args.text))
        }))
        .tool(ToolDef::typed("add", |args: Add, _cx| async move {
            Ok(CallToolResult::text((args.a + args.b).to_string()))
        }))
        .build()?;
    match std::env::args().skip_while(|arg| arg != "--http").nth(1) {
        Some(addr) => mcp::serve_http(server, &addr).await,
        None => mcp::serve_stdio(server).await,
    }
}
