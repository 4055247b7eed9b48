//! The dual-era MCP server mounted in an axum app, at `/mcp` beside `/health`, behind an
//! authentication middleware whose claims a tool reads.
//!
//! Run it with `cargo run -p mcp --features server,http --example axum`, then:
//!
//! ```text
//! curl http://127.0.0.1:3000/health
//! curl http://127.0.0.1:3000/mcp -H 'authorization: Bearer alice-token' \
//!   -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
//!   -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: tools/call' -H 'mcp-name: whoami' \
//!   -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami",
//!        "arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
//!        "io.modelcontextprotocol/clientCapabilities":{}}}}'
//! ```
//!
//! Clients of 2025-11-25 and earlier are served at the same URL (an `initialize`, then a
//! session). The middleware runs on every request of either era; each tool call sees the
//! claims of its own HTTP request.

use axum::extract::Request;
use axum::http::{StatusCode, header::AUTHORIZATION};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use mcp::legacy::http::{DualEraHttp, LegacyHttpConfig};
use mcp::prelude::*;

/// Who the middleware found the caller to be.
#[derive(Debug, Clone)]
pub struct Claims {
    /// The user the token names.
    pub sub: String,
}

/// A stand-in for real token verification: a bearer token naming a known user gets that
/// user's claims in the request's extensions; anything else is `401`.
async fn authenticate(mut request: Request, next: Next) -> Response {
    let token = request
        .headers()
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    let sub = match token {
        Some("alice-token") => "alice",
        Some("bob-token") => "bob",
        _ => return StatusCode::UNAUTHORIZED.into_response(),
    };
    request.extensions_mut().insert(Claims { sub: sub.into() });
    next.run(request).await
}

/// The MCP server: one tool that answers with the caller's `sub`.
pub fn server() -> Result<Server, mcp::Error> {
    Ok(Server::builder("axum-example", "1.0.0")
        .tool(ToolDef::new(
            "whoami",
            json!({"type": "object"}),
            |_args, cx| async move {
                let claims = cx
                    .http_extension::<Claims>()
                    .ok_or("no claims: the request did not pass the middleware")?;
                Ok(CallToolResult::text(&claims.sub))
            },
        ))
        .build()?)
}

/// The app: MCP (both eras) at `/mcp` behind the middleware, `/health` open.
pub fn app(server: Server) -> Result<axum::Router, mcp::Error> {
    let mcp = DualEraHttp::new(
        server,
        mcp::http::HttpServerConfig::default(),
        LegacyHttpConfig::default(),
    )?;
    Ok(axum::Router::new()
        .route_service("/mcp", mcp)
        // Only the routes above pass through the middleware.
        .route_layer(middleware::from_fn(authenticate))
        .route("/health", axum::routing::get(|| async { "ok" })))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    println!("MCP at http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, app(server()?)?).await?;
    Ok(())
}
