//! MCP over stdio: newline-delimited JSON framing, a server on its own
//! stdin and stdout, and a client that spawns server processes.
//!
//! This crate implements <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio> and the
//! custom-transport framing rule of <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports>
//! (byte-stream transports reuse the stdio framing). The framing is unchanged in
//! the legacy revisions (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>, section stdio),
//! so the same codec carries both eras.
//! It hands whole messages to
//! `mcp-jsonrpc` and takes whole messages from it.
//!
//! Invariants:
//!
//! - One JSON message per line. Every outgoing message is exactly one line with
//!   no embedded newline. Incoming CRLF endings and blank lines are tolerated.
//! - A line has a maximum length (default 4 MiB, configurable). An over-long
//!   line yields one error, and the reader discards input up to the next newline
//!   without buffering it. Invalid UTF-8 yields a parse error and reading goes
//!   on with the next line.
//! - On the server side, nothing but protocol messages ever reaches stdout.
//!   Logs go to stderr through `tracing`. End of file on stdin finishes or
//!   cancels in-flight work and the server exits cleanly.
//! - On the client side, a server is spawned from a program, arguments,
//!   environment and working directory, without a shell; the environment is
//!   explicit and nothing is inherited unless the caller asks. The child's
//!   stderr is forwarded through a bounded reader that can never block the
//!   stdout reader. Lines on the child's stdout that are not JSON are logged and
//!   skipped.
//! - When the child exits, every pending request fails at once with a typed
//!   transport error that is never mistaken for a server's JSON-RPC error.
//! - Shutdown follows the spec: close stdin, wait a grace period (2 s by
//!   default) for the child to exit, send SIGTERM, wait (3 s), send SIGKILL, all
//!   to the child's process group so no grandchild is orphaned. Until the child
//!   has exited its stdout is still read and discarded (never buffered), so a
//!   server that writes while it shuts down neither blocks nor dies of `EPIPE`. A child that stops reading its stdin causes backpressure or a
//!   write timeout, never an unbounded queue.
//! - The transport tells `mcp-jsonrpc` that cancellation travels as a message:
//!   a dropped outbound request becomes a `notifications/cancelled`, because
//!   stdio has no per-request stream to close.
//!
//! The client side (spawning and supervising a server process) is the `client` feature, on
//! by default; a server on its own stdin and stdout builds without it, and without tokio's
//! process support or nix.
//!
//! This crate must never hold tool, resource or prompt logic, never interpret a
//! method name, and never depend on `mcp-server`, `mcp-client` or `mcp-legacy`; it depends on
//! `mcp-jsonrpc` only. It never writes anything but protocol messages to the
//! stdout of a stdio server, and never reads the child's stderr as an error.

#![forbid(unsafe_code)]
// On docs.rs (`--cfg docsrs`, nightly rustdoc) every feature-gated item is labelled with
// the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The crate's README (its page on crates.io) is compiled and run as doc tests, so that its
// example keeps working.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(feature = "client")]
mod client;
#[cfg(feature = "client")]
mod exit_aware;
mod framing;
#[cfg(feature = "client")]
mod process;
mod server;
mod stdio;

#[cfg(feature = "client")]
pub use client::{ServerConnection, client_config, connect};
pub use framing::{DEFAULT_MAX_LINE, DEFAULT_WRITE_TIMEOUT, LineReader, LineWriter, stdio};
pub use server::serve;
pub use stdio::{StdinStream, StdoutStream};

#[cfg(feature = "client")]
pub use exit_aware::{ExitAwareReader, ExitAwareWriter};
#[cfg(feature = "client")]
pub use process::{
    DEFAULT_DRAIN_GRACE, DEFAULT_INHERITED_VARS, ProcessError, STDERR_LINE_LIMIT, ServerCommand,
    ServerProcess, SpawnedServer, StderrMode,
};
