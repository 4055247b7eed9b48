//! The JSON-RPC 2.0 engine that every MCP connection runs on.
//!
//! This crate turns a transport's sink and stream of messages into a peer. It
//! parses incoming JSON into requests, notifications and responses; gives
//! outgoing requests their ids and matches responses to the callers waiting for
//! them; enforces per-request timeouts; dispatches incoming requests to a handler
//! with bounded concurrency; and shuts a connection down in order. It implements
//! the message and error-code rules of <https://modelcontextprotocol.io/specification/2026-07-28/basic>, the
//! cancellation and timeout rules of <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation>,
//! the progress rules of <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/progress> and the
//! message directions of <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports>.
//!
//! Invariants:
//!
//! - Peer input never panics the engine. Bytes that are not JSON, or not UTF-8,
//!   are answered with -32700 and a null id; JSON that is not a valid JSON-RPC
//!   2.0 message (a wrong or missing `jsonrpc`, a null, fractional or boolean id,
//!   a duplicate key) is answered with -32600. Batch arrays are refused unless
//!   the caller opts in, and an opted-in batch has a size cap.
//! - The pending-request table is plain data with no IO inside, so it is tested
//!   without a runtime. A response whose id is not pending is logged and dropped.
//! - A request whose id the peer already has in flight is refused with -32600,
//!   and the request already running under that id is not affected.
//! - Every outbound request has a timeout. A progress notification for the
//!   request resets it, but never beyond a hard maximum.
//! - Dropping the future of an outbound request cancels it. The transport
//!   decides how the peer hears of it: stdio sends `notifications/cancelled`,
//!   Streamable HTTP closes the response stream.
//! - Inbound requests run with bounded concurrency: excess requests wait or are
//!   refused, and are never queued without limit. Each handler gets a
//!   cancellation token, fired by the peer's `notifications/cancelled`.
//! - Every spawned task is owned by a handle that can join it or shut it down,
//!   and no lock is held across an `.await`.
//! - A JSON-RPC error from the peer is data: it reaches the caller as
//!   `Error::Remote` holding the peer's `ErrorObject` untouched, apart from
//!   this side's own failures (timeout, closed connection, encoding).
//! - Every frame is decoded whole before anything reads it: a request's params and
//!   a response's result reach the handler or the caller as checked JSON text
//!   ([`Params`], [`RawResult`]), and a malformed frame is dropped (or answered,
//!   see above), never handed to anyone.
//!
//! This crate must never know MCP method semantics beyond two notifications:
//! `notifications/cancelled` and `notifications/progress`. It does not read
//! `_meta` beyond the progress token, check protocol versions or capabilities,
//! frame bytes, open sockets or spawn processes: those belong to `mcp-server`,
//! `mcp-client` and the transport crates. Params and results pass through it as
//! opaque JSON.

#![forbid(unsafe_code)]
// On docs.rs (`--cfg docsrs`, nightly rustdoc) every feature-gated item is labelled with
// the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The crate's README (its page on crates.io) is compiled and run as doc tests, so that its
// example keeps working.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod error;
pub mod memory;
mod message;
mod params;
mod peer;
mod pending;
mod sink;
mod transport;

pub use error::Error;
pub use message::{
    DecodeError, DecodeOptions, Decoded, ErrorObject, Message, Notification, RawResult, Request,
    Response, SPLIT_RESULT_AT, decode, encode_error, encode_notification, encode_raw_result,
    encode_raw_result_parts, encode_request, encode_result,
};
pub use params::Params;
pub use peer::{
    Connection, Handler, Headers, IdCallback, Mirrored, NoHandler, Overload, ParamHeaderLookup,
    Peer, PeerConfig, Principal, ProgressCallback, RequestContext, RequestOptions, TransportInfo,
};
pub use sink::{LazyChannel, NotificationSink};
/// The cancellation token handlers receive (re-exported from `tokio-util`).
pub use tokio_util::sync::CancellationToken;
pub use transport::{FrameReader, FrameWriter, TransportError, WriteNow};
