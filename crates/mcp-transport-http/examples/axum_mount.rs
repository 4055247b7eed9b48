//! Mounts the MCP endpoint in an axum router beside an ordinary route.
//!
//! Run it with `cargo run -p mcp-transport-http --example axum_mount`, then:
//!
//! ```text
//! curl http://127.0.0.1:PORT/health
//! curl http://127.0.0.1:PORT/mcp -H 'content-type: application/json' \
//!   -H 'accept: application/json, text/event-stream' \
//!   -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: tools/list' \
//!   -d '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{
//!        "io.modelcontextprotocol/protocolVersion":"2026-07-28",
//!        "io.modelcontextprotocol/clientCapabilities":{}}}}'
//! ```
//!
//! The router routes by path, so the service is told to serve whatever path it is given
//! (`any_path`); everything else (Host and Origin checks, headers, limits, SSE) is the same
//! as with `HttpServer`.

use mcp_jsonrpc::{ErrorObject, Handler, Request, RequestContext};
use mcp_transport_http::{HttpServerConfig, McpService};
use serde_json::value::RawValue;

/// A stand-in for the server core: every request gets its params back.
struct Echo;

impl Handler for Echo {
    async fn request(
        &self,
        request: Request,
        _cx: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        match request.params {
            Some(params) => params.into_raw_value().map_err(|e| e.to_error_object()),
            None => {
                RawValue::from_string("{}".into()).map_err(|e| ErrorObject::internal(e.to_string()))
            }
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mcp = McpService::new(Echo, HttpServerConfig::default().any_path())?;
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .route_service("/mcp", mcp);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}
