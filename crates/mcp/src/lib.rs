//! The Model Context Protocol in Rust: one crate to depend on, with features by role.
//!
//! MCP is the JSON-RPC protocol between AI applications and the servers that give them
//! tools, resources and prompts
//! (<https://modelcontextprotocol.io/specification/2026-07-28>). This crate re-exports the
//! layered crates under one name and adds the two calls that serve a server to every
//! client in use today: [`serve_stdio`] and [`serve_http`] answer clients of revision
//! 2026-07-28 and clients of the initialize-era revisions (2025-11-25 back to 2024-11-05)
//! on the same transport. It holds no protocol logic of its own; each layer stays usable
//! alone.
//!
//! | feature | what it adds |
//! |---|---|
//! | `server` | [`server`]: tools, resources, prompts; [`serve_stdio`], [`serve_http`], [`bind_http`], [`bind_http_with_layer`] ([`http_config`]) |
//! | `client` | [`client`]: the 2026-07-28 client, and with `legacy` a client for servers of any era |
//! | `host` | [`host`]: many servers as one set of model tools (OpenAI, Anthropic, Gemini) |
//! | `gateway` | `host::Gateway`: many servers served as one MCP server, in both eras |
//! | `metrics` | requests, errors, latency, listens, tasks and sessions through the `metrics` facade |
//! | `stdio`, `http` | the transports, for the roles chosen |
//! | `legacy` (default) | the initialize-era revisions beside 2026-07-28 |
//! | `validation` (default) | tool arguments and structured output checked against their JSON Schemas |
//! | `rustls` (default) | `https://` for the client; only a build with `client` and `http` compiles TLS |
//! | `auth`, `skills`, `tasks-redis` | OAuth 2.1, the Skills extension, the Tasks store in Redis |
//! | `change-bus-redis`, `state-keys-redis`, `session-redis` | for a fleet: change notifications, the `requestState` key ring and the 2025-era sessions shared through Redis (`docs/DEPLOYMENT.md`) |
//!
//! A server on stdio and Streamable HTTP, for both eras:
//!
//! ```toml
//! [dependencies]
//! mcp = { version = "0.2", features = ["server", "stdio", "http"] }
//! ```
//!
//! ```no_run
//! use mcp::prelude::*;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Add { a: i64, b: i64 }
//!
//! # async fn run() -> Result<(), mcp::Error> {
//! let server = Server::builder("calculator", "1.0.0")
//!     .tool(ToolDef::typed("add", |args: Add, _cx| async move {
//!         Ok(CallToolResult::text((args.a + args.b).to_string()))
//!     }))
//!     .build()?;
//! mcp::serve_stdio(server).await?;
//! # Ok(())
//! # }
//! ```
//!
//! Modern-only serving is an explicit choice: [`serve_stdio_modern`],
//! [`bind_http_modern`] and [`bind_http_modern_with_layer`], the only ones in a build
//! without the `legacy` feature.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

// This crate's README example is a doc test too.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

// The repository README's examples are doc tests of this crate, the one that sees every
// layer. Outside the repository (a packaged crate) the file is not there, and
// `cfg(doctest)` keeps it from being read.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct RepositoryReadmeDoctests;

#[cfg(feature = "client")]
pub use mcp_client as client;
#[cfg(feature = "host")]
pub use mcp_host as host;
pub use mcp_jsonrpc as jsonrpc;
#[cfg(feature = "legacy")]
pub use mcp_legacy as legacy;
#[cfg(feature = "server")]
pub use mcp_server as server;
#[cfg(feature = "http")]
pub use mcp_transport_http as http;
#[cfg(feature = "stdio")]
pub use mcp_transport_stdio as stdio;
pub use mcp_types as types;
/// The JSON values tools take and return.
pub use serde_json;

/// The attribute macros that define a server's tools, prompts and resources from
/// functions: `#[tool]`, `#[tools]` (an impl block of tools), `#[prompt]` and
/// `#[resource]`.
#[cfg(feature = "server")]
pub use mcp_macros::{prompt, resource, tool, tools};

/// The names most programs use.
pub mod prelude {
    #[cfg(feature = "client")]
    pub use mcp_client::Client;
    #[cfg(feature = "server")]
    pub use mcp_macros::{prompt, resource, tool, tools};
    #[cfg(feature = "server")]
    pub use mcp_server::{
        Args, Caller, Context, Json, PromptDef, ResourceDef, ResourceTemplateDef, Server,
        ServerBuilder, ToolDef, ToolError,
    };
    pub use mcp_types::{CallToolResult, ContentBlock, GetPromptResult, JsonObject};
    pub use serde_json::{Value, json};
}

/// What can go wrong through this crate: the error of the layer that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Building or running a server.
    #[cfg(feature = "server")]
    #[error(transparent)]
    Server(#[from] mcp_server::Error),
    /// A client call.
    #[cfg(feature = "client")]
    #[error(transparent)]
    Client(#[from] mcp_client::Error),
    /// The host.
    #[cfg(feature = "host")]
    #[error(transparent)]
    Host(#[from] mcp_host::Error),
    /// The dual-era layer: serving both eras, or connecting to a server of either.
    #[cfg(feature = "legacy")]
    #[error(transparent)]
    Legacy(#[from] mcp_legacy::Error),
    /// The Streamable HTTP transport.
    #[cfg(feature = "http")]
    #[error(transparent)]
    Http(#[from] mcp_transport_http::Error),
    /// An address to listen on that is not `IP:PORT`.
    #[error("{addr:?} is not an address to listen on (IP:PORT): {source}")]
    Address {
        /// The text given.
        addr: String,
        /// Why it did not parse.
        source: std::net::AddrParseError,
    },
}

// The serving functions below are generic (`impl Into<Server>`, `impl AsRef<str>`), so
// that they are compiled in the caller's crate with the rest of its server. Compiled here,
// the generic code they reach was instantiated a second time, and a stripped two-tool
// server grew by a third (1.5 MB).

/// The HTTP settings [`serve_http`], [`bind_http`] and the other `bind_http` calls serve
/// with: [`HttpServerConfig::default`](mcp_transport_http::HttpServerConfig::default),
/// with one [connection thread](mcp_transport_http::HttpServerConfig::connection_threads)
/// per core. Start from it to bind [`mcp_legacy::http::DualEraHttp`] or
/// [`mcp_transport_http::HttpServer`] yourself with other limits.
///
/// On connection threads, each connection is served start to end on one thread with a
/// single-threaded runtime of its own, which the benchmark measured at a tenth more calls
/// per second than a work-stealing runtime with 16 calls in flight, and two fifths more
/// with one. The process's own runtime only accepts. What follows for handlers: a task a
/// handler spawns runs on its connection's thread, and a handler that blocks that thread
/// holds up the other connections on it, so blocking work goes to
/// `tokio::task::spawn_blocking` (`block_in_place` is not available on these runtimes).
/// Set `connection_threads` to 0 to serve the connections on the caller's runtime
/// instead.
///
/// ```
/// let config = mcp::http_config();
/// assert!(config.connection_threads >= 1);
/// ```
#[cfg(all(feature = "server", feature = "http"))]
pub fn http_config() -> mcp_transport_http::HttpServerConfig {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    mcp_transport_http::HttpServerConfig::default()
        .connection_threads(cores.min(mcp_transport_http::MAX_CONNECTION_THREADS))
}

#[cfg(all(feature = "server", feature = "http"))]
fn listen_addr(addr: &str) -> Result<std::net::SocketAddr, Error> {
    addr.parse().map_err(|source| Error::Address {
        addr: addr.to_owned(),
        source,
    })
}

/// Serves `server` on stdin and stdout until stdin closes, to clients of every revision:
/// 2026-07-28 requests go to the server as they are, and an `initialize` handshake opens
/// an initialize-era session served by the same handlers
/// ([`mcp_legacy::server::DualEra`]).
///
/// It returns when stdin closes; the `Result` leaves room for failures a later version
/// reports, so that callers need not change.
#[cfg(all(feature = "server", feature = "stdio", feature = "legacy"))]
pub async fn serve_stdio(server: impl Into<mcp_server::Server>) -> Result<(), Error> {
    mcp_legacy::server::DualEra::new(server.into())
        .serve_stdio()
        .await;
    Ok(())
}

/// Serves `server` on Streamable HTTP at `addr` (`IP:PORT`) until the process ends, to
/// clients of every revision: [`bind_http`], then waits. Returns only if it cannot listen
/// there.
#[cfg(all(feature = "server", feature = "http", feature = "legacy"))]
pub async fn serve_http(
    server: impl Into<mcp_server::Server>,
    addr: impl AsRef<str>,
) -> Result<(), Error> {
    let running = bind_http(server, addr).await?;
    tracing::info!(url = %running.url(), "serving both eras on Streamable HTTP");
    std::future::pending::<()>().await;
    drop(running);
    Ok(())
}

/// Serves `server` on Streamable HTTP at `addr` (`IP:PORT`; port 0 picks a free one),
/// endpoint `/mcp`, to clients of every revision, with the 2024-11-05 HTTP+SSE transport
/// beside it ([`mcp_legacy::http::DualEraHttp`] with [`http_config`] and the default
/// limits; bind that directly to change them). The server runs until the returned handle is shut down or
/// dropped.
#[cfg(all(feature = "server", feature = "http", feature = "legacy"))]
pub async fn bind_http(
    server: impl Into<mcp_server::Server>,
    addr: impl AsRef<str>,
) -> Result<mcp_transport_http::RunningServer, Error> {
    Ok(mcp_legacy::http::DualEraHttp::bind(
        listen_addr(addr.as_ref())?,
        server.into(),
        http_config(),
        mcp_legacy::http::LegacyHttpConfig::default(),
    )
    .await?)
}

/// [`bind_http`] behind a tower `layer` (a timeout, a rate limit, tracing, authentication
/// that inserts claims in the request's extensions, which tools read with
/// `Context::http_extension`): see
/// [`HttpServer::serve_endpoint_with_layer`](mcp_transport_http::HttpServer::serve_endpoint_with_layer).
/// The layer wraps the dual-era endpoint ([`mcp_legacy::http::DualEraHttp`]), so it runs
/// on every request of either era.
#[cfg(all(feature = "server", feature = "http", feature = "legacy"))]
pub async fn bind_http_with_layer<S, L, B>(
    server: S,
    addr: impl AsRef<str>,
    layer: L,
) -> Result<mcp_transport_http::RunningServer, Error>
where
    S: Into<mcp_server::Server>,
    L: tower_layer::Layer<mcp_legacy::http::DualEraHttp<mcp_server::Server>>,
    L::Service: tower_service::Service<
            ::http::Request<mcp_transport_http::RequestBody>,
            Response = ::http::Response<B>,
            Error: Into<Box<dyn std::error::Error + Send + Sync>>,
            Future: Send + 'static,
        > + Clone
        + Send
        + Sync
        + 'static,
    B: http_body::Body<Data = bytes::Bytes, Error: Into<Box<dyn std::error::Error + Send + Sync>>>
        + Send
        + 'static,
{
    Ok(mcp_legacy::http::DualEraHttp::bind_with_layer(
        listen_addr(addr.as_ref())?,
        server.into(),
        http_config(),
        mcp_legacy::http::LegacyHttpConfig::default(),
        layer,
    )
    .await?)
}

/// Serves `server` on stdin and stdout to 2026-07-28 clients only: an `initialize`
/// handshake gets -32601.
#[cfg(all(feature = "server", feature = "stdio"))]
pub async fn serve_stdio_modern(server: impl Into<mcp_server::Server>) -> Result<(), Error> {
    server.into().serve_stdio().await;
    Ok(())
}

/// Serves `server` on Streamable HTTP at `addr` to 2026-07-28 clients only, with
/// [`http_config`], until the returned handle is shut down or dropped.
#[cfg(all(feature = "server", feature = "http"))]
pub async fn bind_http_modern(
    server: impl Into<mcp_server::Server>,
    addr: impl AsRef<str>,
) -> Result<mcp_transport_http::RunningServer, Error> {
    Ok(mcp_transport_http::HttpServer::bind(
        listen_addr(addr.as_ref())?,
        server.into(),
        http_config(),
    )
    .await?)
}

/// [`bind_http_modern`] behind a tower `layer`, as [`bind_http_with_layer`] does for both
/// eras.
#[cfg(all(feature = "server", feature = "http"))]
pub async fn bind_http_modern_with_layer<S, L, B>(
    server: S,
    addr: impl AsRef<str>,
    layer: L,
) -> Result<mcp_transport_http::RunningServer, Error>
where
    S: Into<mcp_server::Server>,
    L: tower_layer::Layer<mcp_transport_http::McpService<mcp_server::Server>>,
    L::Service: tower_service::Service<
            ::http::Request<mcp_transport_http::RequestBody>,
            Response = ::http::Response<B>,
            Error: Into<Box<dyn std::error::Error + Send + Sync>>,
            Future: Send + 'static,
        > + Clone
        + Send
        + Sync
        + 'static,
    B: http_body::Body<Data = bytes::Bytes, Error: Into<Box<dyn std::error::Error + Send + Sync>>>
        + Send
        + 'static,
{
    Ok(mcp_transport_http::HttpServer::bind_with_layer(
        listen_addr(addr.as_ref())?,
        server.into(),
        http_config(),
        layer,
    )
    .await?)
}
