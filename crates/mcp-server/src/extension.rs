//! Extensions: identified capability sets that add methods and settings
//! (<https://modelcontextprotocol.io/extensions/overview>; capabilities carry `extensions` in 2026-07-28).
//!
//! A server advertises each extension under `capabilities.extensions[id]` with its
//! settings. Use is negotiated per request: a client declares the extensions it speaks in
//! the request's `clientCapabilities.extensions`, and an extension method called without
//! that declaration is refused with -32021 naming what was missing.

use mcp_jsonrpc::ErrorObject;
use mcp_types::JsonObject;
use serde_json::value::RawValue;

use crate::context::Context;
use crate::tool::BoxFuture;

/// An extension of the protocol served by this server.
///
/// ```
/// use mcp_server::{Context, Extension};
/// use serde_json::value::RawValue;
///
/// struct Clock;
///
/// impl Extension for Clock {
///     fn id(&self) -> &str { "com.example/clock" }
///     fn methods(&self) -> &[&'static str] { &["clock/now"] }
///     fn handle(&self, _method: &str, _params: Box<RawValue>, _cx: Context)
///         -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Box<RawValue>, mcp_jsonrpc::ErrorObject>> + Send>>
///     {
///         Box::pin(async { Ok(serde_json::value::to_raw_value(&serde_json::json!({"resultType": "complete", "now": 0})).unwrap()) })
///     }
/// }
/// ```
pub trait Extension: Send + Sync + 'static {
    /// The identifier, with a mandatory reverse-DNS prefix (`io.modelcontextprotocol/tasks`).
    fn id(&self) -> &str;

    /// The settings advertised under `capabilities.extensions[id]` (`{}` by default).
    fn settings(&self) -> JsonObject {
        JsonObject::new()
    }

    /// The methods the extension adds.
    fn methods(&self) -> &[&'static str] {
        &[]
    }

    /// Whether a request must declare the extension in its client capabilities to call the
    /// extension's methods (default `true`: others get -32021). An extension whose methods
    /// the server's own declaration commits it to, whatever the client declares (the Skills
    /// extension), answers `false`.
    fn requires_declaration(&self) -> bool {
        true
    }

    /// Serves one of [`methods`](Self::methods); only called when the request declared the
    /// extension (or the extension does not require it). `params` is the request's params
    /// (with `_meta`, already checked).
    fn handle(
        &self,
        method: &str,
        params: Box<RawValue>,
        cx: Context,
    ) -> BoxFuture<Result<Box<RawValue>, ErrorObject>>;
}
