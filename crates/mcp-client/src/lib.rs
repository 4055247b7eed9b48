//! The transport-neutral MCP client core for revision 2026-07-28.
//!
//! A client built with this crate connects to a server over stdio (by spawning
//! a command), over Streamable HTTP (a URL) or over any transport `mcp-jsonrpc`
//! accepts, and offers a typed method for every client request, cursor-following
//! list helpers, a result cache, multi round-trip requests and subscriptions.
//! The transports are optional, behind cargo features (`stdio`, `http`, and `rustls` for
//! `https://` URLs; all three on by default), and pull in only the client halves of the
//! transport crates.
//! It implements the
//! client side of:
//!
//! - <https://modelcontextprotocol.io/specification/2026-07-28/basic> and <https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning>;
//! - <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>, <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>,
//!   <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/progress> and <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation>;
//! - <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching> and <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/pagination>;
//! - the input requests of <https://modelcontextprotocol.io/specification/2026-07-28/client/elicitation>,
//!   <https://modelcontextprotocol.io/specification/2026-07-28/client/sampling> and <https://modelcontextprotocol.io/specification/2026-07-28/client/roots>.
//!
//! Invariants:
//!
//! - Every request carries `_meta` with the protocol version, the client
//!   capabilities derived from the handlers the user registered, and the client
//!   identity. On -32022 the client picks the newest version both sides support
//!   and retries once.
//! - An `input_required` result runs the user's elicitation, sampling or roots
//!   handlers, then retries with a new id, the answers in `inputResponses` and
//!   `requestState` echoed byte for byte and never parsed. Rounds are bounded
//!   (default 10).
//! - An unknown `resultType` is an error; a missing one from an older server
//!   counts as `complete`.
//! - The cache honours `ttlMs` and `cacheScope`, keys private entries by the
//!   credentials in use, and never stores `input_required` results or retries.
//! - A stdio server the client owns (`ClientBuilder::spawn_stdio`) is restarted
//!   when it crashes, within a restart budget; the request that saw the crash is
//!   re-sent only if it is retry-safe (discover, lists, reads, prompts,
//!   completion, tool calls annotated read-only or idempotent), and any other
//!   fails with `Error::MayHaveRun`. An HTTP reply stream that breaks before the
//!   response is handled the same way: re-issued with a new id only when
//!   retry-safe. Open `listen` subscriptions are re-subscribed after a restart,
//!   so change notifications keep arriving.
//! - Errors say what happened: a protocol error (code, message, data), a
//!   transport failure, a timeout, a cancellation or a version mismatch. A tool
//!   failure is not an error: it is an `Ok` result with `isError` set, for the
//!   model to read.
//! - One error type, [`Error`], for everything the crate's functions return. The
//!   sub-areas' failures are kinds within it: [`Error::Auth`] carries an
//!   [`AuthErrorKind`] (the OAuth client), [`Error::Skill`] a [`SkillErrorKind`] (a
//!   skill refused), [`Error::Icon`] an [`IconErrorKind`] (an icon refused). Those
//!   exist whatever features are on; only `Error::Http` and `Error::Spawn`, which carry
//!   the transport crates' own errors, need the `http` and `stdio` features.
//!
//! This crate must never send a JSON-RPC response or expect a request from the
//! server: in 2026-07-28 servers do not send requests. It never branches on a
//! legacy revision: era detection, `initialize`, sessions and answering server
//! requests belong to `mcp-legacy`, which plugs in through the seams this crate
//! exposes. It never depends on a transport crate except behind that
//! transport's cargo feature.
//!
//! Seams, era-neutral and small (module `custom`): [`CustomTransport`] carries requests
//! and subscriptions for a client built with [`ClientBuilder::connect_custom`];
//! [`InputHandlers`] ([`ClientBuilder::input_handlers`]) runs the user's elicitation,
//! sampling and roots handlers for a transport whose server asks by other means; and
//! [`ListenRouter`] with [`ClientBuilder::connect_peer`] lets a caller that owns an engine
//! connection's handler feed the client's subscriptions. `mcp-legacy` builds its
//! dual-era client on them.
//!
//! # Example
//!
//! ```no_run
//! # async fn run() -> Result<(), mcp_client::Error> {
//! use mcp_client::Client;
//! use mcp_transport_stdio::ServerCommand;
//!
//! let (client, server) = Client::builder("my-agent", "1.0")
//!     .connect_stdio(&ServerCommand::new("my-mcp-server"))?;
//! let tools = client.list_tools_all().await?;
//! let args = serde_json::json!({"a": 2, "b": 3});
//! let result = client.call_tool(&tools[0].name, args.as_object().cloned().unwrap_or_default()).await?;
//! if result.is_error == Some(true) {
//!     // A tool failure: show it to the model.
//! }
//! let _ = server.shutdown(std::time::Duration::from_secs(1)).await;
//! # Ok(())
//! # }
//! ```
//!
//! The Tasks extension (module docs in `tasks.rs`): [`ClientBuilder::tasks`] declares it,
//! [`Client::call_tool`] then follows a task the server creates to its end, and
//! [`Client::call_tool_or_task`] returns the [`TaskHandle`] instead. A `resultType` of an
//! extension the client did not declare stays an error.
//!
//! The MCP Apps extension (module [`apps`]): [`ClientBuilder::apps`] declares it,
//! [`apps::UiLink::of`] reads a tool's link to its UI, and [`Client::read_ui_resource`]
//! fetches the linked HTML with its sandbox metadata, checked.
//!
//! The Skills extension (feature `skills`, module `skills`): [`Client::list_skills_all`] and
//! [`Client::get_skill`] return skill entries without fetching any file;
//! [`Client::load_skill`] fetches a skill's `SKILL.md` and [`Client::read_skill_file`] a
//! supporting file only when asked, each verified against the entry (size, then SHA-256
//! digest, then for `SKILL.md` the frontmatter field by field) and refused with
//! [`Error::Skill`] on any mismatch, its [`SkillErrorKind`] saying which.
//!
//! Log messages (`notifications/message`): [`ClientBuilder::on_log`] and
//! [`ClientBuilder::log_channel`] (bounded, the newest dropped and counted when full)
//! receive what servers send when [`ClientBuilder::log_level`] asks for it.
//!
//! Structured results (feature `schema-validation`, default): a `tools/call` result of a
//! listed tool that declares an `outputSchema` must carry `structuredContent` the schema
//! accepts, or the call fails with [`Error::StructuredContentInvalid`].
//!
//! Tool use in sampling: [`ClientBuilder::sampling_tools`] declares `sampling.tools`;
//! without it a sampling request carrying `tools` or `toolChoice` is refused
//! ([`Error::InvalidInputRequest`]) before it reaches the handler.
//!
//! A synchronous client (feature `blocking`, module `blocking`): `blocking::Client` owns a
//! runtime and blocks; called from within an async runtime it fails with
//! [`Error::BlockingInAsync`] instead of panicking.
//!
//! Icons (module [`icons`]): [`icons::check_icon`] and [`icons::safe_icons`] apply the
//! spec's rules to the icons servers attach to tools, prompts, resources and themselves
//! (`https` on the server's origin or `data:` images only), for whoever shows them; a
//! refused icon is [`Error::Icon`], its [`IconErrorKind`] saying why.
//!
//! Authorization (feature `auth`, module `auth`): an OAuth 2.1 client that the HTTP
//! transport consults on every request and on every `401`/`403` challenge, as
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization> specifies, with the authorization extensions of
//! <https://modelcontextprotocol.io/extensions/auth> (client credentials, enterprise-managed authorization, workload
//! identity federation) and DPoP-bound tokens (RFC 9449). A failed flow is
//! [`Error::Auth`] with an [`AuthErrorKind`], from the request that needed the token.

#![forbid(unsafe_code)]
// On docs.rs (`--cfg docsrs`, nightly rustdoc) every feature-gated item is labelled with
// the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The crate's README (its page on crates.io) is compiled and run as doc tests, so that its
// example keeps working.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub mod apps;
#[cfg(feature = "auth")]
pub mod auth;
// Without a transport there is nothing to connect to, so no blocking client.
#[cfg(all(feature = "blocking", any(feature = "stdio", feature = "http")))]
pub mod blocking;
mod cache;
mod client;
mod custom;
mod error;
mod extension;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
#[cfg(feature = "http")]
mod http;
pub mod icons;
mod listen;
mod logs;
#[cfg(feature = "schema-validation")]
mod output;
#[cfg(feature = "stdio")]
mod restart;
#[cfg(feature = "skills")]
pub mod skills;
mod tasks;
pub mod trace;
mod wire;

pub use client::{
    CallOptions, Client, ClientBuilder, InputHandlers, MAX_LISTED, MAX_PAGES, SUPPORTED_VERSIONS,
};
pub use custom::{BoxFuture, CustomTransport, EventSink, ListenRouter};
pub use error::{AuthErrorKind, Error, IconErrorKind, SkillErrorKind};
pub use extension::ExtensionResult;
pub use listen::{ListenEvent, Subscription};
pub use logs::{DEFAULT_LOG_BUFFER, LogReceiver, MAX_LOG_BUFFER};
#[cfg(feature = "schema-validation")]
pub use output::{MAX_OUTPUT_SCHEMA_BYTES, MAX_OUTPUT_SCHEMA_DEPTH};
#[cfg(feature = "stdio")]
pub use restart::RestartPolicy;
pub use tasks::{TaskHandle, TaskOptions, ToolCall};
