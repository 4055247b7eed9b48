//! Many MCP servers as one set of model tools.
//!
//! A [`Host`] owns many [`mcp_client::Client`]s, configured in code or from an
//! `mcpServers` JSON file ([`HostConfig`]), connects them concurrently, and keeps each
//! server's tools (<https://modelcontextprotocol.io/specification/2026-07-28/server/tools>) in a [`Catalog`]: one list of tools
//! under model-visible names, filtered by [`Exposure`] rules and a [`Policy`], that renders
//! the declarations of OpenAI Chat Completions, OpenAI Responses, Anthropic and Gemini
//! ([`Vendor`]). The model's calls come back as [`ToolCall`]s (parsed from each vendor's
//! shape), run concurrently on the right client under their original names through
//! [`Middleware`], and go back to the model as each vendor's result shape
//! ([`ToolOutcome`]). [`Agent`] is a provider-neutral loop over a [`Model`].
//!
//! Beside the tools, the host gathers every server's prompts (named as tools are), resources
//! (under their own URIs, or [`qualified_uri`] when two servers list the same one) and
//! resource templates: [`Host::prompts`], [`Host::get_prompt`], [`Host::resources`],
//! [`Host::read_resource`], refreshed with the tools.
//!
//! The catalog is pure data: the `mcp` CLI builds one from `(server, tools)` pairs with no
//! connection, and only [`connect()`] knows how a configuration becomes a client.
//!
//! Invariants:
//!
//! - A model-visible name matches `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`, valid for every
//!   vendor, and maps back to exactly one (server, tool) ([`NamingPolicy`]).
//! - Tool descriptions, titles and annotations are untrusted server text: they go into
//!   tool declarations as data, cut to a length limit, and never into instructions to the
//!   host or the model ([`SchemaLimits`]).
//! - Schemas from servers are bounded when lowered (depth, `$ref` expansion, enum size,
//!   total size); no input panics.
//! - The catalog changes only between rounds of the agent loop ([`Host::refresh`]);
//!   a round runs against one snapshot.
//! - Every failure the model should see is a result with `isError` set: an unknown tool
//!   name, malformed arguments, a refused approval, a failed call.
//! - No lock is held across an await.
//!
//! # Example
//!
//! ```
//! use mcp_host::{Catalog, ToolCall, Vendor};
//! use mcp_types::Tool;
//!
//! let schema = serde_json::json!({"type": "object", "properties": {"q": {"type": "string"}}});
//! let tools = vec![Tool::from_schema("search", schema.as_object().unwrap().clone())?];
//! let catalog = Catalog::new([("web", tools.as_slice())]);
//! let anthropic = catalog.declarations(Vendor::Anthropic);
//! assert_eq!(anthropic[0]["name"], "web__search");
//!
//! let call = ToolCall::from_anthropic(&serde_json::json!({
//!     "type": "tool_use", "id": "toolu_1", "name": "web__search", "input": {"q": "mcp"}
//! }))?;
//! let entry = catalog.resolve(&call.name).unwrap();
//! assert_eq!((entry.server.as_str(), entry.tool.name.as_str()), ("web", "search"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! MCP Apps (<https://modelcontextprotocol.io/extensions/apps/overview>): with [`HostBuilder::apps`] the host's
//! clients declare the extension; each [`Entry`] keeps its tool's UI link, app-only tools
//! stay out of every vendor's declarations and of [`Catalog::resolve`], a call's
//! [`ToolOutcome::ui`] says which UI renders its result, [`Host::read_ui`] fetches it and
//! [`Host::call_from_app`] runs the calls the rendered app makes to its own server.
//!
//! Servers' own requests (elicitation, sampling, roots) are answered by the [`Handlers`]
//! installed with [`HostBuilder::on_elicit`], [`HostBuilder::on_sample`] and
//! [`HostBuilder::on_roots`], on every client the host connects.

#![forbid(unsafe_code)]
// On docs.rs (`--cfg docsrs`, nightly rustdoc) every feature-gated item is labelled with
// the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The crate's README (its page on crates.io) is compiled and run as doc tests, so that its
// example keeps working.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct CrateReadmeDoctests;

mod agent;
mod calls;
mod catalog;
mod config;
mod connect;
mod content;
mod error;
#[cfg(feature = "gateway")]
mod gateway;
mod handlers;
mod host;
mod middleware;
mod naming;
mod oauth;
mod render;
mod rules;
pub mod schema;

pub use agent::{Agent, Conversation, Message, Model, Reply};
pub use calls::{ToolCall, ToolOutcome, UiRef};
pub use catalog::{Catalog, CatalogBuilder, Entry, Vendor};
pub use config::{
    GatewayAuth, GatewayConfig, HostConfig, HttpConfig, KNOWN_PROTOCOL_VERSIONS, MAX_TIMEOUT_MS,
    ServerConfig, ServerTransport, StdioConfig, TokenCheck,
};
pub use connect::{ClientInfo, Connection, connect};
pub use content::{PromptEntry, ResourceEntry, TemplateEntry, qualified_uri};
pub use error::Error;
#[cfg(feature = "gateway")]
pub use gateway::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_PARKED, DEFAULT_PARK_TTL, Gateway, GatewayBuilder,
};
pub use handlers::Handlers;
pub use host::{Host, HostBuilder};
pub use middleware::{Approver, AuditEntry, AuditLog, BoxFuture, CallInfo, Middleware, Verdict};
pub use naming::{DEFAULT_MAX_NAME_LEN, NamingPolicy};
pub use oauth::{OAuth, OAuthGrant, default_credential_store};
pub use render::DEFAULT_MAX_MEDIA_LEN;
pub use rules::{Approval, Decision, Exposure, Policy, require_approval_if_destructive};
pub use schema::SchemaLimits;
