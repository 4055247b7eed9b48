//! MCP over Streamable HTTP on hyper 1: the server endpoint and the client
//! side of the 2026-07-28 binding.
//!
//! This crate implements `docs/2026-07-28/basic/transports/streamable-http.mdx`
//! and the message rules of `docs/2026-07-28/basic/transports/index.mdx`. The
//! authorization challenges of `docs/2026-07-28/basic/authorization/index.mdx`
//! (401 and 403 with `WWW-Authenticate`) are answered here once issue #9 adds
//! them. Spec paths are relative to the shared copy of the specification,
//! `../shared/spec/`. Each POST body is one message handed to `mcp-jsonrpc`.
//!
//! Invariants of the server half:
//!
//! - One endpoint (default `/mcp`), POST only: other methods get 405 with
//!   `Allow: POST`. A body without `Content-Type: application/json` gets 415,
//!   and `Accept` must name both JSON and SSE.
//! - `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` are
//!   checked against the body after decoding base64-sentinel values; a mismatch,
//!   a missing header or an invalid character gets 400 with -32020.
//! - `Origin` and `Host` are checked against an allow-list (403 on mismatch),
//!   and the default bind address is 127.0.0.1.
//! - The body size is limited while it is read (default 4 MiB, then 413), and
//!   so are the time to read headers, idle time and the number of concurrent
//!   requests (503 past the limit).
//! - A notification is answered 202. A request is answered with JSON when the
//!   handler emits nothing before its result, and with an SSE stream (no event
//!   ids) when it emits progress or log messages. A client closing the stream
//!   cancels the handler. `subscriptions/listen` is a long-lived SSE stream with
//!   keep-alive comments.
//! - The server is a service that mounts in an axum router beside other routes.
//!
//! Invariants of the client half: connections are reused; every required header
//! is sent, with base64-sentinel encoding when a value is not plain ASCII; JSON
//! and SSE replies are parsed incrementally; response size and SSE event size
//! are capped; credentials are never sent to another origin on a redirect. A
//! broken stream loses its request, and only `mcp-client` decides to re-issue it.
//!
//! This crate must never hold tool logic: it does not know what a tool is. The
//! `Mcp-Param-*` headers to send or to expect come from the core above, which
//! owns the tool definitions and their `x-mcp-header` annotations. It never
//! branches on legacy revisions: it mints no `Mcp-Session-Id`, writes no SSE
//! event ids and ignores `Last-Event-ID`. Legacy sessions, the GET stream,
//! batches and the 2024-11-05 HTTP+SSE transport belong to `mcp-legacy`, which
//! plugs in through a seam that classifies a request before modern validation.
//! It depends on `mcp-jsonrpc` only among the workspace crates.
//!
//! The server half is implemented by issue #4, the client half by issue #5,
//! authorization by issue #9; hardened by issue #11 and measured by issue #8.

#![forbid(unsafe_code)]
