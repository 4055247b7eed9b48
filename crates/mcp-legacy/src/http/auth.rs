//! Authorization on the legacy side of [`DualEraHttp`](super::DualEraHttp): legacy
//! requests are authenticated and authorized by the same
//! [`Authenticator`](mcp_transport_http::Authenticator) as modern ones (the one in the
//! `HttpServerConfig`), and a session belongs to the principal that created it.
//!
//! A session id is not a credential (the security best practices the 2025-11-25
//! transport links for Session Hijacking, <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>: servers
//! that implement authorization verify every inbound request, never use sessions for
//! authentication, and bind session ids to the user). Every request of a session carries
//! its own token; a session used by another principal is answered as if it did not exist
//! (`404`), so its id confirms nothing to someone else.
//! Without an authenticator nothing here runs and sessions have no owner.

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Response};
use http_body_util::Full;
use mcp_jsonrpc::{Handler, Principal, Request, TransportInfo};

use super::{DualEraBody, HttpSession, Shared};

/// A principal as the legacy side needs it: shared, for the requests it runs.
pub(super) type Caller = Option<Arc<dyn Principal>>;

fn legacy_body(response: Response<Bytes>) -> Response<DualEraBody> {
    response.map(|body| DualEraBody::legacy(Full::new(body)))
}

impl<H: Handler> Shared<H> {
    /// Who sent a legacy request: `Ok(None)` without an authenticator, the principal, or
    /// the authenticator's refusal (`401`, `403`) to send as it is.
    pub(super) async fn authenticate(
        &self,
        headers: &HeaderMap,
    ) -> Result<Caller, Response<DualEraBody>> {
        match &self.authenticator {
            None => Ok(None),
            Some(auth) => auth
                .authenticate(headers)
                .await
                .map(Some)
                .map_err(legacy_body),
        }
    }

    /// The authenticator's verdict on one decoded legacy request (a tool that needs more
    /// scopes): an HTTP+SSE POST carries one.
    #[allow(clippy::result_large_err)]
    #[cfg(feature = "http-sse")]
    pub(super) fn authorize(
        &self,
        caller: &Caller,
        request: &Request,
    ) -> Result<(), Response<DualEraBody>> {
        self.authorize_all(caller, std::slice::from_ref(request))
    }

    /// The authenticator's verdict on the requests of one message (a 2025-03-26 batch):
    /// one request the principal may not make refuses them all.
    #[allow(clippy::result_large_err)]
    pub(super) fn authorize_all(
        &self,
        caller: &Caller,
        requests: &[Request],
    ) -> Result<(), Response<DualEraBody>> {
        match (&self.authenticator, caller) {
            (Some(auth), Some(principal)) => auth
                .authorize_all(&**principal, requests)
                .map_err(legacy_body),
            _ => Ok(()),
        }
    }
}

impl HttpSession {
    /// Binds a new session to the principal that creates it.
    pub(super) fn owned_by(mut self, caller: &Caller) -> Self {
        self.owner = caller.as_ref().map(|p| Box::from(p.id()));
        self
    }

    /// Whether `caller` may use this session: the principal that created it, or anybody
    /// when there is no authentication.
    pub(super) fn belongs_to(&self, caller: &Caller) -> bool {
        self.owner.as_deref() == caller.as_ref().map(|p| p.id())
    }
}

/// The request's head for the handler, as the modern endpoint gives it (headers, and the
/// extensions middleware inserted): without the credentials, and with the principal, when
/// the request was authenticated. The head is moved, not copied.
pub(super) fn transport_info(head: http::request::Parts, caller: &Caller) -> Arc<TransportInfo> {
    mcp_transport_http::transport_info(head, caller.clone())
}
