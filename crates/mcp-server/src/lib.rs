//! The transport-neutral MCP server core for revision 2026-07-28.
//!
//! A server built with this crate registers tools, resources (fixed URIs and
//! RFC 6570 templates), prompts and a completion handler, and serves them over
//! any transport `mcp-jsonrpc` accepts. The stdio transport is behind the `stdio`
//! feature (on by default); Streamable HTTP is served by `mcp-transport-http`, which
//! takes any `mcp_jsonrpc::Handler`, this server included.
//! It implements:
//!
//! - <https://modelcontextprotocol.io/specification/2026-07-28/basic> (`_meta`, error codes, statelessness)
//!   and <https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning>;
//! - <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>, <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>,
//!   <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/progress> and <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation>;
//! - <https://modelcontextprotocol.io/specification/2026-07-28/server/discover>, <https://modelcontextprotocol.io/specification/2026-07-28/server/tools>, <https://modelcontextprotocol.io/specification/2026-07-28/server/resources>
//!   and <https://modelcontextprotocol.io/specification/2026-07-28/server/prompts>;
//! - <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/completion>, <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/pagination>,
//!   <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching> and <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/logging>;
//! - with the `auth` feature, <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization> for the Streamable
//!   HTTP transport: an OAuth 2.1 resource server (`auth::ResourceServer`, protected
//!   resource metadata, bearer challenges, JWT and introspection verifiers);
//! - the Tasks extension, <https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md> (module [`tasks`]);
//! - the MCP Apps extension, <https://modelcontextprotocol.io/extensions/apps/overview> (module [`apps`]): UI
//!   resources, tools linked to them, and the plain fallback for clients without it;
//! - with the `skills` feature, the Skills extension (SEP-2640,
//!   `io.modelcontextprotocol/skills`; module `skills`): skills served as resources,
//!   `skills/list`, `skills/get` and `resources/directory/read`.
//!
//! Invariants:
//!
//! - Every request is judged on its own `_meta`: a missing protocol version or
//!   client capabilities gets -32602, an unsupported version -32022, a handler
//!   needing an undeclared client capability -32021. Nothing is carried over
//!   from an earlier request on the same connection.
//! - Every result carries `resultType` and the server's identity in `_meta`.
//! - A tool failure, including invalid arguments, is a `CallToolResult` with
//!   `isError` set, never a JSON-RPC error; a handler panic is caught and never
//!   takes the server down. Arguments are validated against the tool's
//!   `inputSchema`, compiled once with a bounded cost: a raw schema at
//!   registration (a bad one is refused there), one derived from a Rust type at
//!   the tool's first call. That is the `schema-validation` feature, on by default (see
//!   below).
//! - The server never initiates a JSON-RPC request. What it needs from the
//!   client it asks for with an `input_required` result, and `requestState` is
//!   sealed and treated as attacker-controlled on the way back.
//! - What an authenticating transport tells of the principal
//!   ([`Context::principal`]) binds what must not cross principals: sealed
//!   `requestState` is refused when another principal presents it, and lists and reads
//!   default to the `private` cache scope.
//! - Nothing is sent that was not asked for: progress only with a
//!   `progressToken`, log messages only with a log level in `_meta`, change
//!   notifications only on a `subscriptions/listen` stream that opted in.
//! - A listener never misses a change in silence: one that may have (it fell behind, or
//!   the [change bus](bus) shared by a fleet lost Redis for a while) hears that every
//!   list it follows changed, and that every resource it watches was updated.
//!
//! # Features
//!
//! - `stdio` (default): [`Server::serve_stdio`].
//! - `schema-validation` (default): tool arguments and structured output checked against
//!   their JSON Schemas (see below for what happens without it).
//! - `skills`: the Skills extension (`ServerBuilder::skills`, module `skills`).
//! - `tasks-redis`: a Tasks extension store in Redis (`tasks::RedisStore`), shared by a
//!   fleet of servers.
//! - `change-bus-redis`: a change bus shared by a fleet through a Redis pub/sub channel
//!   (`bus::RedisChangeBus`), so that a listener on one instance hears the changes made on
//!   another.
//! - `auth`: the OAuth 2.1 resource server for the Streamable HTTP transport
//!   (`auth::ResourceServer`).
//! - `http`: the HTTP request a handler serves (`Context::http_parts`, `HttpParts`,
//!   `HttpExtension`).
//! - `opentelemetry`: each request's span gets the W3C trace context of its `_meta` as
//!   its parent (see [`trace`]).
//!
//! Without the `schema-validation` feature (`default-features = false`), the JSON Schema
//! validator (`jsonschema`, with its regex engines and meta-schemas) is not compiled in:
//! a typed tool's arguments are checked only by deserializing them into its type (a
//! failure is still an `isError` result saying `Invalid arguments`), a raw tool
//! ([`ToolDef::new`]) gets its arguments as they are, `structuredContent` is not checked
//! against `outputSchema`, and a schema is not checked against its meta-schema at
//! registration (only its root `"type": "object"`, its size and depth limits and its
//! `x-mcp-header` annotations are). A server built without it says so once in its log.
//!
//! This crate must never branch on a legacy revision: `initialize`, `ping`,
//! `logging/setLevel`, `resources/subscribe` and sessions get -32601 here, and
//! `mcp-legacy` serves them through the seams this crate exposes. It never
//! writes to stdout: on a stdio server only the transport writes there, and
//! only protocol messages. It never spells a method string; the method traits
//! of `mcp-types` do. It never depends on a transport crate except behind that
//! transport's cargo feature.

#![forbid(unsafe_code)]
// On docs.rs (`--cfg docsrs`, nightly rustdoc) every feature-gated item is labelled with
// the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The crate's README (its page on crates.io) is compiled and run as doc tests, so that its
// example keeps working.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// Builder methods of a definition, each setting an optional text member of the listing
/// entry it wraps (`self.$entry`): `pub fn $member(self, $member: impl Into<String>)`,
/// with the doc given.
macro_rules! text_setters {
    ($entry:ident { $($(#[$doc:meta])* $member:ident),+ $(,)? }) => {
        $(
            $(#[$doc])*
            #[must_use]
            pub fn $member(mut self, $member: impl Into<String>) -> Self {
                self.$entry.$member = Some($member.into());
                self
            }
        )+
    };
}

/// `icons(...)` on a definition whose `$entry` (a generated type) has `icons`; each icon is
/// checked when the definition is registered ([`ServerBuilder`]).
macro_rules! icons_setter {
    ($entry:ident) => {
        /// Sets the icons a client may show for it
        /// (<https://modelcontextprotocol.io/specification/2026-07-28/basic#icons>): each an
        /// `https:` or `data:` URI with an optional MIME type, sizes and theme. Any other
        /// scheme is refused when the definition is registered, since clients must reject
        /// it.
        #[must_use]
        pub fn icons(mut self, icons: impl IntoIterator<Item = mcp_types::Icon>) -> Self {
            let icons: Vec<mcp_types::Icon> = icons.into_iter().collect();
            self.$entry.icons = (!icons.is_empty()).then_some(icons);
            self
        }
    };
}

pub mod apps;
#[cfg(feature = "auth")]
pub mod auth;
pub mod bus;
mod context;
mod define;
mod error;
mod extension;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
#[cfg(feature = "http")]
mod http_request;
mod limits;
#[cfg(feature = "metrics")]
pub mod metrics;
mod prompt;
mod resource;
mod server;
#[cfg(feature = "skills")]
pub mod skills;
mod state;
#[cfg(feature = "state-keys-redis")]
mod state_redis;
pub mod tasks;
mod tool;
pub mod trace;
mod uri_template;

pub use context::Context;
pub use define::{
    __macros, Args, Caller, FromContext, IntoPromptDef, IntoPromptResult, IntoResourceContents,
    IntoResourceDef, IntoResourceTemplateDef, IntoToolDef, IntoToolResult, Json, ToolSet,
};
pub use error::{Error, InputRequired, ToolError};
pub use extension::Extension;
#[cfg(feature = "http")]
pub use http_request::{HttpExtension, HttpParts};
pub use limits::Limits;
pub use prompt::PromptDef;
pub use resource::{ResourceDef, ResourceTemplateDef};
pub use server::{CacheKind, CachePolicy, SUPPORTED_VERSIONS, Server, ServerBuilder};
pub use state::StateKeys;
#[cfg(feature = "state-keys-redis")]
pub use state_redis::{RedisStateKeys, RedisStateKeysBuilder};
pub use tool::{MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, ParamHeader, ToolDef};
pub use uri_template::{TemplateValue, UriTemplate};
