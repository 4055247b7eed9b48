//! The authentication seam of the server half: an [`Authenticator`] the endpoint calls with
//! each request's head before it reads the body, and with each decoded request before it
//! runs the handler.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Method, Response, Uri};
use mcp_jsonrpc::{Principal, Request};

/// What [`Authenticator::authenticate`] returns: the principal, or the response to send
/// instead of serving the request.
pub type AuthenticateFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Arc<dyn Principal>, Response<Bytes>>> + Send + 'a>>;

/// Authenticates and authorizes the requests of an HTTP endpoint. Set it with
/// [`HttpServerConfig::authenticator`](crate::HttpServerConfig::authenticator);
/// `mcp-server`'s `auth` feature implements it for OAuth 2.1 bearer tokens.
///
/// The transport knows no OAuth, no token format and no scope. It asks the authenticator
/// three things and acts on the answers:
///
/// 1. [`respond`](Authenticator::respond): does the authenticator answer this request
///    itself (a metadata document at a well-known path)? Asked first, for every request.
/// 2. [`authenticate`](Authenticator::authenticate): who sent this request? The answer is
///    an opaque [`Principal`] that reaches the handler in
///    [`TransportInfo::principal`](mcp_jsonrpc::TransportInfo::principal), or a response
///    to send instead (a `401` or `403` challenge). Asked once the head passed the
///    endpoint's own checks and before the body is read.
/// 3. [`authorize`](Authenticator::authorize): may this principal make this request (a
///    tool that needs more)? Asked with the decoded request, after the header checks.
///
/// With an authenticator configured, the handler's `TransportInfo` leaves out the
/// `Authorization` header: credentials stop at the transport and are never passed on.
/// Without one, nothing of this runs: the endpoint's request path is unchanged.
///
/// ```
/// use std::sync::Arc;
/// use bytes::Bytes;
/// use http::{HeaderMap, Response, StatusCode};
/// use mcp_jsonrpc::Principal;
/// use mcp_transport_http::{AuthenticateFuture, Authenticator, HttpServerConfig};
///
/// #[derive(Debug)]
/// struct Key(String);
/// impl Principal for Key {
///     fn id(&self) -> &str {
///         &self.0
///     }
/// }
///
/// /// Accepts `X-Api-Key: let-me-in`, for a test.
/// struct ApiKey;
/// impl Authenticator for ApiKey {
///     fn authenticate<'a>(&'a self, headers: &'a HeaderMap) -> AuthenticateFuture<'a> {
///         let known = headers.get("x-api-key").is_some_and(|k| k == "let-me-in");
///         Box::pin(async move {
///             if known {
///                 Ok(Arc::new(Key("tester".into())) as Arc<dyn Principal>)
///             } else {
///                 let mut refusal = Response::new(Bytes::new());
///                 *refusal.status_mut() = StatusCode::UNAUTHORIZED;
///                 Err(refusal)
///             }
///         })
///     }
/// }
///
/// let config = HttpServerConfig::default().authenticator(ApiKey);
/// # let _ = config;
/// ```
pub trait Authenticator: Send + Sync + 'static {
    /// A response for a request the authenticator answers itself, whatever the endpoint's
    /// path (for example `GET /.well-known/oauth-protected-resource/mcp`); `None`, the
    /// default, passes it on. It is asked before any other check, so what it serves must
    /// be public.
    fn respond(&self, method: &Method, uri: &Uri) -> Option<Response<Bytes>> {
        let _ = (method, uri);
        None
    }

    /// Authenticates a request from its headers: the principal that sent it, or the
    /// response to send instead (`401` with a challenge for missing or bad credentials).
    ///
    /// Only the headers are given: credentials anywhere else (the query string) are never
    /// looked at.
    fn authenticate<'a>(&'a self, headers: &'a HeaderMap) -> AuthenticateFuture<'a>;

    /// Authorizes one decoded request of `principal` (the method and its params, for
    /// example the tool a `tools/call` names): `Err` is the response to send instead
    /// (`403` with a challenge). The default allows everything.
    #[allow(clippy::result_large_err)]
    fn authorize(
        &self,
        principal: &dyn Principal,
        request: &Request,
    ) -> Result<(), Response<Bytes>> {
        let _ = (principal, request);
        Ok(())
    }

    /// Authorizes the requests of one message at once (a JSON-RPC batch of revision
    /// 2025-03-26 holds several): `Err` refuses them all, so a batch with one request the
    /// principal may not make runs none. The default asks [`authorize`](Self::authorize)
    /// for each and answers the first refusal; an authenticator that can name everything
    /// the batch needs in one challenge overrides it.
    #[allow(clippy::result_large_err)]
    fn authorize_all(
        &self,
        principal: &dyn Principal,
        requests: &[Request],
    ) -> Result<(), Response<Bytes>> {
        requests
            .iter()
            .try_for_each(|request| self.authorize(principal, request))
    }
}

/// The text of an MCP header as its sender meant it: a `=?base64?…?=` value (how a client
/// sends a name that is not plain visible ASCII) decoded, any other value as it is; `None`
/// when it is neither visible text nor a well-formed encoding. The endpoint reads
/// `Mcp-Name` this way when it compares the header with the body, and an authenticator
/// that looks at the header before the body must read it the same way.
pub fn header_text(value: &http::HeaderValue) -> Option<std::borrow::Cow<'_, str>> {
    crate::headers::decode_sentinel(crate::headers::visible(value).ok()?).ok()
}

/// Removes the headers that carry credentials, which the handler of an authenticated
/// request does not see.
pub(crate) fn strip_credentials(headers: &mut HeaderMap) {
    headers.remove(http::header::AUTHORIZATION);
    headers.remove(http::header::PROXY_AUTHORIZATION);
}
