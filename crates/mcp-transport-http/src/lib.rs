//! MCP over Streamable HTTP on hyper 1: the server endpoint and the client of the 2026-07-28
//! binding.
//!
//! This crate implements <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http> and the
//! message rules of <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports>.
//! Each POST body is one JSON-RPC
//! message, decoded by `mcp-jsonrpc` and handed to a [`mcp_jsonrpc::Handler`], the trait the
//! server core implements. The transport knows headers and framing, never tools.
//!
//! - [`HttpServer::bind`] serves the endpoint on its own listener and returns a
//!   [`RunningServer`] with [`local_addr`](RunningServer::local_addr) and a graceful
//!   [`shutdown`](RunningServer::shutdown).
//! - [`McpService`] is the endpoint as a hyper and tower service, to mount in a router
//!   beside other routes (`examples/axum_mount.rs`).
//! - [`HttpClient`] is the client: [`request`](HttpClient::request) POSTs one encoded
//!   request with its [`RequestHeaders`] and returns a [`ResponseStream`] of the
//!   notifications and the response the server sends for it;
//!   [`notify`](HttpClient::notify) POSTs a notification. [`HttpClientConfig`] holds its
//!   limits, connect timeout, extra headers and TLS settings. `https://` needs the `rustls`
//!   feature (on by default); over it the client speaks HTTP/2 when the server offers it by
//!   ALPN, HTTP/1.1 otherwise.
//! - [`HttpClient::send`] is the era-neutral seam for protocol layers that need more than
//!   one POST per request (`mcp-legacy`'s legacy sessions): a [`RawRequest`] with any
//!   method and headers to the endpoint's own origin, a [`RawResponse`] with its status
//!   and headers, read whole (bounded) or as an [`EventStream`] of whole [`SseEvent`]s
//!   (name, data, last event id, `retry`). It knows no MCP header.
//! - [`HttpServerConfig`] holds every limit, timeout and allow-list, plus the two hooks the
//!   core supplies: [`ParamHeaders`] (the `Mcp-Param-*` headers of each tool, from its
//!   `x-mcp-header` annotations) and a [`NotificationHook`]; and the optional
//!   [`Authenticator`], the OAuth-free seam through which `mcp-server`'s `auth` feature
//!   (or any other scheme) authenticates each request and hands the handler a
//!   [`Principal`](mcp_jsonrpc::Principal).
//!
//! ```
//! use mcp_jsonrpc::{ErrorObject, Handler, Request, RequestContext};
//! use mcp_transport_http::{HttpServer, HttpServerConfig};
//! use serde_json::value::RawValue;
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//!
//! /// Answers every request with its own params.
//! struct Echo;
//!
//! impl Handler for Echo {
//!     async fn request(&self, request: Request, _cx: RequestContext) -> Result<Box<RawValue>, ErrorObject> {
//!         match request.params {
//!             Some(params) => params.into_raw_value().map_err(|e| e.to_error_object()),
//!             None => Ok(RawValue::from_string("{}".into()).unwrap()),
//!         }
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let server = HttpServer::bind(HttpServer::DEFAULT_ADDR, Echo, HttpServerConfig::default())
//!     .await
//!     .unwrap();
//!
//! let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{
//!     "io.modelcontextprotocol/protocolVersion":"2026-07-28",
//!     "io.modelcontextprotocol/clientCapabilities":{}}}}"#;
//! let request = format!(
//!     "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
//!      Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
//!      Mcp-Method: tools/list\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
//!     server.local_addr(),
//!     body.len(),
//! );
//! let mut stream = tokio::net::TcpStream::connect(server.local_addr()).await.unwrap();
//! stream.write_all(request.as_bytes()).await.unwrap();
//! let mut reply = String::new();
//! stream.read_to_string(&mut reply).await.unwrap();
//! assert!(reply.starts_with("HTTP/1.1 200 OK"));
//! assert!(reply.contains("content-type: application/json"));
//! assert!(reply.contains(r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"#));
//!
//! server.shutdown(std::time::Duration::from_secs(1)).await;
//! # });
//! ```
//!
//! Invariants of the server half:
//!
//! - One endpoint (default `/mcp`, other paths `404`), POST only: other methods get `405`
//!   with `Allow: POST`. A body without `Content-Type: application/json` gets `415`, and an
//!   `Accept` that does not list both `application/json` and `text/event-stream` gets `406`.
//! - `Host` and, when present, `Origin` are checked against allow-lists (default: loopback
//!   names, any port) and refused with `403`: the DNS-rebinding defence. The default bind
//!   address is `127.0.0.1`.
//! - `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` are checked against
//!   the body after decoding Base64-sentinel values; a missing header, a mismatch or an
//!   invalid character gets `400` with -32020. A request without the required `_meta`
//!   fields gets `400` with -32602.
//! - Peer input is bounded: the body is limited while it is read (default 4 MiB, then
//!   `413`; a larger `Content-Length` is refused before reading), and so are the time to
//!   send a head (which is also the keep-alive idle time) and a body (`408`), the head's
//!   size and field count (`431`), writes that make no progress, the notifications queued
//!   per request, the number of concurrent requests (`503` with `Retry-After`), and the
//!   number of open connections of an [`HttpServer`] (past it, new clients wait in the
//!   listen backlog until one closes).
//! - A notification is answered `202`. A request is answered with JSON when the handler
//!   finishes without emitting anything, and with an SSE stream (`event: message`, flushed
//!   per event, no event ids) as soon as it emits a notification. A client closing the
//!   connection fires the request's cancellation token, and nothing more is sent for it.
//!   Long-lived streams (`subscriptions/listen`) get `: keep-alive` comments.
//! - With an [`Authenticator`], a request is authenticated from its head before its body
//!   is read and authorized once decoded (its refusals are sent as they are), and the
//!   handler gets the principal and not the `Authorization` header. Without one none of
//!   this runs.
//! - Every spawned task is owned: connection tasks by the accept loop, the accept loop by
//!   [`RunningServer`]. A handler runs inside its connection's task, not on a task of its
//!   own. No lock is held across an `.await`.
//!
//! Invariants of the client half:
//!
//! - Every POST carries `Accept` (JSON and SSE), `Content-Type: application/json`,
//!   `MCP-Protocol-Version`, `Mcp-Method` and, when given, `Mcp-Name` and `Mcp-Param-*`,
//!   Base64-sentinel-encoded exactly as the server half decodes them.
//! - Peer input is bounded: the reply body (default 16 MiB) and each SSE event (default
//!   4 MiB) are counted while reading; past either the stream yields one error and ends.
//! - Redirects are never followed (a typed error), so credentials never cross origins;
//!   [`HttpClient::send`] reaches only the endpoint's own origin.
//! - Dropping a call or its [`ResponseStream`] closes its connection: the spec's
//!   cancellation. A stream read to its end returns its connection to the pool.
//!
//! Features, by role: `server` (the endpoint: [`HttpServer`], [`McpService`],
//! [`HttpServerConfig`], [`Authenticator`]; hyper's server half, HTTP/1.1 only), `client`
//! ([`HttpClient`], [`HttpClientConfig`], [`Authorizer`], the raw requests and event
//! streams; hyper's client half with HTTP/1.1 and HTTP/2, pooled, and hyper-util's
//! connector) and `rustls` (`https://` for the client; implies `client`). All three are on
//! by default; a server-only build (`default-features = false, features = ["server"]`)
//! compiles no HTTP client and no TLS. [`Error`] and the header rules are shared.
//!
//! This crate must never hold tool logic: the `Mcp-Param-*` headers to expect come from the
//! core above, which owns the tool definitions. It never branches on legacy revisions: it
//! mints no `Mcp-Session-Id`, writes no SSE event ids and ignores `Last-Event-ID`. Legacy
//! sessions, the GET stream, batches and the 2024-11-05 HTTP+SSE transport belong to
//! `mcp-legacy`. Among the workspace crates it depends on `mcp-jsonrpc`, and on `mcp-types`
//! for error codes, request ids and method names only.

#![forbid(unsafe_code)]
// On docs.rs (`--cfg docsrs`, nightly rustdoc) every feature-gated item is labelled with
// the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The crate's README (its page on crates.io) is compiled and run as doc tests, so that its
// example keeps working.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(feature = "server")]
mod auth;
#[cfg(feature = "server")]
mod body;
#[cfg(feature = "client")]
mod client;
#[cfg(feature = "server")]
mod config;
mod error;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
// Shared by both halves; with only one of them built, the other half's helpers go unused.
#[cfg_attr(not(all(feature = "server", feature = "client")), allow(dead_code))]
mod headers;
#[cfg(feature = "server")]
mod idle;
#[cfg(feature = "server")]
mod layer;
#[cfg(feature = "server")]
mod mirror;
#[cfg(feature = "server")]
mod proxied;
#[cfg(feature = "server")]
mod request_body;
#[cfg(feature = "server")]
mod response;
#[cfg(feature = "server")]
mod server;
#[cfg(feature = "server")]
mod service;
#[cfg(feature = "server")]
mod shards;
#[cfg(feature = "server")]
mod write_timeout;

#[cfg(feature = "server")]
pub use auth::{AuthenticateFuture, Authenticator, header_text};
#[cfg(feature = "client")]
pub use client::{
    AuthFuture, Authorizer, AuthorizerError, Challenge, ConnectionIo, CustomConnector, EventStream,
    HttpClient, HttpClientConfig, MAX_CHALLENGES, PreparedHeaders, ProxyConfig, RawRequest,
    RawResponse, Reply, RequestHeaders, ResponseStream, SseEvent,
};
#[cfg(feature = "server")]
pub use config::{
    AllowList, HttpServerConfig, MAX_CONNECTION_THREADS, MAX_IDLE_POLL, NotificationHook,
    ParamHeader, ParamHeaders, check_host_and_origin,
};
pub use error::Error;
#[cfg(feature = "server")]
pub use layer::PeerAddr;
#[cfg(feature = "server")]
pub use proxied::MAX_PROXY_HEADER;
#[cfg(feature = "server")]
pub use request_body::{RequestBody, RequestBodyError};
#[cfg(feature = "server")]
pub use response::McpBody;
#[cfg(feature = "server")]
pub use server::{Endpoint, HttpServer, RunningServer};
#[cfg(feature = "server")]
pub use service::{ConcurrencySlot, McpService, ResponseFuture, transport_info};
