//! The HTTP request a handler serves, when the server runs over HTTP (feature `http`): its
//! head (`http::request::Parts`) and the extensions that tower or axum middleware put in
//! it, such as the claims an authentication layer verified.
//!
//! The HTTP transport (`mcp-transport-http`, and `mcp-legacy`'s dual-era endpoint for
//! initialize-era sessions) moves each request's head into an `Arc` once and lends it to
//! the handler through [`mcp_jsonrpc::TransportInfo::request`]. Over stdio there is none.

use std::sync::Arc;

use http::request::Parts;

use crate::{Context, FromContext, ToolError};

impl Context {
    /// The HTTP request's head (method, URI, version, headers, extensions), when the
    /// request came over HTTP; `None` over stdio. An authenticating transport has removed
    /// the credentials (`Authorization`) from its headers.
    pub fn http_parts(&self) -> Option<&Parts> {
        self.transport()?
            .request::<Arc<Parts>>()
            .map(|parts| &**parts)
    }

    /// The value of type `T` that middleware inserted in the HTTP request's extensions
    /// (`request.extensions_mut().insert(..)`), if any. Not to be confused with
    /// [`Context::extension`], the settings of an MCP extension the client declared.
    pub fn http_extension<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.http_parts()?.extensions.get::<T>()
    }
}

/// The HTTP request's head, for a handler that takes it as a parameter
/// ([`FromContext`]); the call fails when the request did not come over HTTP.
#[derive(Debug, Clone)]
pub struct HttpParts(pub Arc<Parts>);

impl std::ops::Deref for HttpParts {
    type Target = Parts;

    fn deref(&self) -> &Parts {
        &self.0
    }
}

impl FromContext for HttpParts {
    fn from_context(cx: &Context) -> Result<Self, ToolError> {
        cx.transport()
            .and_then(|info| info.request::<Arc<Parts>>())
            .map(|parts| HttpParts(Arc::clone(parts)))
            .ok_or_else(|| ToolError::failed("this request did not come over HTTP"))
    }
}

/// A value that middleware inserted in the HTTP request's extensions, cloned, for a
/// handler that takes it as a parameter ([`FromContext`]), like axum's `Extension`. The
/// call fails when the request did not come over HTTP or carries no `T`.
#[derive(Debug, Clone)]
pub struct HttpExtension<T>(pub T);

impl<T: Clone + Send + Sync + 'static> FromContext for HttpExtension<T> {
    fn from_context(cx: &Context) -> Result<Self, ToolError> {
        cx.http_extension::<T>()
            .cloned()
            .map(HttpExtension)
            .ok_or_else(|| {
                ToolError::failed(format!(
                    "the HTTP request carries no {}",
                    std::any::type_name::<T>()
                ))
            })
    }
}
