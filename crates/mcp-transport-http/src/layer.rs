//! Tower layers around an [`Endpoint`] on this crate's own server
//! ([`HttpServer::serve_endpoint_with_layer`](crate::HttpServer::serve_endpoint_with_layer)):
//! a timeout, a rate limit, tracing, authentication, the same layers a router such as
//! axum would run in front of a mounted [`McpService`](crate::McpService).
//!
//! The layer wraps the endpoint itself, as a tower `Service`. The server clones the layered
//! service for each request, waits until it is ready and calls it (what
//! `tower::ServiceExt::oneshot` does), after putting the client's address in the request's
//! extensions as a [`PeerAddr`], which an endpoint that bounds something per client reads
//! back. A layer's error becomes `503 Service Unavailable` with a JSON-RPC error (-32603)
//! that says nothing of the cause, which is logged; a layer that wants another answer
//! handles its own errors. Only this path boxes the response future: the server without a
//! layer is unchanged.

use std::convert::Infallible;
use std::future::{Future, poll_fn};
use std::net::SocketAddr;
use std::pin::Pin;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::Either;
use mcp_types::ErrorCode;
use tower_service::Service;

use crate::request_body::RequestBody;
use crate::response::McpBody;
use crate::server::Endpoint;

/// The address of the client's end of the connection a request came on, which
/// [`HttpServer`](crate::HttpServer) puts in the extensions of each request it hands to a
/// tower layer (and which a server mounting an endpoint may insert itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddr(pub SocketAddr);

/// An error a layer's service may fail with.
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// An [`Endpoint`] behind a tower layer: `service` is the layer around a clone of
/// `endpoint`, which stays here to cancel everything at shutdown.
#[derive(Clone)]
pub(crate) struct Layered<S, E> {
    pub(crate) service: S,
    pub(crate) endpoint: E,
}

impl<S, E> Layered<S, E> {
    /// `layer` around `endpoint`.
    pub(crate) fn new<L: tower_layer::Layer<E, Service = S>>(endpoint: E, layer: &L) -> Self
    where
        E: Clone,
    {
        Layered {
            service: layer.layer(endpoint.clone()),
            endpoint,
        }
    }
}

/// The response future of a layered endpoint.
pub(crate) type LayeredFuture<B> =
    Pin<Box<dyn Future<Output = Result<Response<Either<B, McpBody>>, Infallible>> + Send>>;

impl<S, E, B> Endpoint for Layered<S, E>
where
    E: Endpoint,
    S: Service<Request<RequestBody>, Response = Response<B>> + Clone + Send + Sync + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Body = Either<B, McpBody>;
    type Future = LayeredFuture<B>;

    fn call(&self, request: Request<RequestBody>) -> Self::Future {
        let mut service = self.service.clone();
        Box::pin(async move {
            // The readiness error is converted before the call's await, so that the future
            // is `Send` whatever the error type.
            let ready = poll_fn(|cx| service.poll_ready(cx))
                .await
                .map_err(Into::into);
            let result = match ready {
                Ok(()) => service.call(request).await.map_err(Into::into),
                Err(error) => Err(error),
            };
            Ok(match result {
                Ok(response) => response.map(Either::Left),
                Err(error) => {
                    let error: BoxError = error;
                    tracing::debug!(%error, "a layer around the endpoint failed the request");
                    crate::service::refusal_with(
                        StatusCode::SERVICE_UNAVAILABLE,
                        ErrorCode::INTERNAL_ERROR,
                        "the server could not handle the request; retry later",
                    )
                    .map(Either::Right)
                }
            })
        })
    }

    fn call_from(&self, mut request: Request<RequestBody>, peer: SocketAddr) -> Self::Future {
        request.extensions_mut().insert(PeerAddr(peer));
        self.call(request)
    }

    fn cancel_all(&self) {
        self.endpoint.cancel_all();
    }
}

impl<S, E> std::fmt::Debug for Layered<S, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Layered").finish_non_exhaustive()
    }
}
