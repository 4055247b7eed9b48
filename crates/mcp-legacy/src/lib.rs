//! The dual-era shim: serves and speaks the initialize-era MCP revisions
//! (2024-11-05 to 2025-11-25) over the modern server and client cores.
//!
//! This crate implements:
//!
//! - the backward-compatibility rules of <https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning>
//!   and the Backward Compatibility sections of
//!   <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio> and <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>;
//! - the 2025-11-25 lifecycle, transports and utilities:
//!   <https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle>, <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>
//!   and <https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/ping>, <https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation>,
//!   <https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/progress> and <https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks>;
//! - the transports of the older revisions: <https://modelcontextprotocol.io/specification/2025-06-18/basic/transports>,
//!   <https://modelcontextprotocol.io/specification/2025-03-26/basic/transports> (sessions, batches) and
//!   <https://modelcontextprotocol.io/specification/2024-11-05/basic/transports> (HTTP+SSE, behind a cargo feature).
//!
//! Server side, one server and the same handlers serve both eras. `initialize`
//! negotiates among the legacy revisions the server enables, and each legacy
//! request is translated into a modern one: the session's version and client
//! capabilities become the request's `_meta`. Each modern result is translated
//! back: `resultType`, `ttlMs` and `cacheScope` are removed, and codes such as
//! -32002 for an unknown resource are used where the revision expects them.
//! When a handler returns `input_required`, the shim sends the legacy client real
//! `elicitation/create`, `sampling/createMessage` or `roots/list` requests and
//! re-runs the handler with the answers, so one handler body serves both eras.
//! On stdio the first message chooses the era for the life of the process; on
//! HTTP a request is classified before modern validation. Sessions have
//! unguessable ids, a cap (503 past it) and an idle expiry; nothing is allocated
//! for a session before its `initialize` request is valid.
//!
//! Client side, one client API reaches any server ([`client::Connector`]). The era
//! is detected as the spec says (a `server/discover` probe on stdio; on HTTP a
//! modern request whose 400/404/405 body is not a modern error, then
//! `initialize`, then HTTP+SSE) and holds for the connection (one server process
//! or one HTTP session); a `VerdictCache` remembers HTTP verdicts per URL and
//! forgets one that fails, so the server is probed again; the user can pin an era
//! or a version instead. A legacy
//! session sits behind the same `mcp_client::Client` through the client core's
//! era-neutral seams (`CustomTransport`, `InputHandlers`, `ListenRouter`) and
//! `mcp-transport-http`'s raw exchanges (`HttpClient::send`).
//!
//! One error type, [`Error`], for both sides: binding and starting a dual-era server
//! (`Error::Bind`, `Error::Http`), and connecting to a server of either era (a server that
//! cannot be started, a failed probe or handshake, a version not accepted, a request
//! failing afterwards, with `mcp_client::Error` as the cause).
//!
//! Invariants: this is the only crate that knows a legacy revision exists, and a
//! search for `initialize` outside this crate and `mcp-types` finds only docs.
//! The user-facing server and client APIs are the same in both eras. A legacy
//! client is never answered with 2026-07-28 in `InitializeResult`, and a legacy
//! shape never leaks into a modern response.
//!
//! This crate must never copy handler logic or reimplement a modern feature:
//! it translates and delegates to `mcp-server` and `mcp-client` through their
//! seams. It never adds era branches to the crates below it.
//!
//! Built: [`server::DualEra`], the dual-era
//! server for one connection (stdio), and `http::DualEraHttp` (feature `http`), both
//! eras on one Streamable HTTP endpoint, with the 2024-11-05 HTTP+SSE transport beside
//! it (feature `http-sse`); and the dual-era client, [`client::Connector`], over stdio
//! (feature `stdio`) and HTTP (feature `http`: legacy Streamable HTTP and the
//! 2024-11-05 HTTP+SSE transport); `Connector::spawn_stdio` owns its server and
//! probes each new process after a crash. Features: the roles `server` (`DualEra`,
//! `DualEraHttp`) and `client` (`Connector`), the transports `stdio`, `http` and
//! `http-sse`, `rustls` (`https://` for the client) and `schema-validation` (passed to
//! `mcp-server`, for the demo binary), all on by default; the roles
//! combine with the transports, so that `default-features = false, features = ["server",
//! "stdio", "http", "http-sse"]` builds the dual-era server without `mcp-client`, an HTTP
//! client or TLS. Not yet on the client side: switching a live HTTP client to another era
//! (the verdict holds for its life; an expired session is re-initialized, and a session
//! that cannot be re-established makes the next connection probe
//! again), and 2025-11-25 tasks.

#![forbid(unsafe_code)]
// On docs.rs (`--cfg docsrs`, nightly rustdoc) every feature-gated item is labelled with
// the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The crate's README (its page on crates.io) is compiled and run as doc tests, so that its
// example keeps working.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

// The client needs a transport to be of any use.
#[cfg(all(feature = "client", any(feature = "stdio", feature = "http")))]
pub mod client;
mod error;
#[cfg(all(feature = "server", feature = "http"))]
pub mod http;
#[cfg(feature = "server")]
pub mod server;
#[cfg(feature = "server")]
mod session;

pub use error::Error;

/// The initialize-era revisions, newest first: what the server negotiates among and the
/// client offers. Also `server::LEGACY_VERSIONS`, where it was first.
pub const LEGACY_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
