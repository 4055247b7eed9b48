//! The response body and future of [`DualEraHttp`](super::DualEraHttp): the modern
//! endpoint's own, untouched, or a legacy reply.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::Response;
use http_body::Body;
use http_body_util::BodyExt;
use http_body_util::combinators::UnsyncBoxBody;
use mcp_transport_http::{McpBody, ResponseFuture};

/// The response body of [`DualEraHttp`](super::DualEraHttp): the modern endpoint's own body, untouched, or a
/// legacy reply.
pub struct DualEraBody(pub(super) BodyKind);

pub(super) enum BodyKind {
    Modern(McpBody),
    Legacy(UnsyncBoxBody<Bytes, Infallible>),
}

impl std::fmt::Debug for DualEraBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            BodyKind::Modern(_) => "DualEraBody::Modern",
            BodyKind::Legacy(_) => "DualEraBody::Legacy",
        })
    }
}

impl DualEraBody {
    pub(super) fn legacy<B>(body: B) -> Self
    where
        B: Body<Data = Bytes, Error = Infallible> + Send + 'static,
    {
        DualEraBody(BodyKind::Legacy(body.boxed_unsync()))
    }
}

impl Body for DualEraBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Infallible>>> {
        match &mut self.get_mut().0 {
            BodyKind::Modern(body) => Pin::new(body).poll_frame(cx),
            BodyKind::Legacy(body) => Pin::new(body).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.0 {
            BodyKind::Modern(body) => body.is_end_stream(),
            BodyKind::Legacy(body) => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> http_body::SizeHint {
        match &self.0 {
            BodyKind::Modern(body) => body.size_hint(),
            BodyKind::Legacy(body) => body.size_hint(),
        }
    }
}

/// The response future of [`DualEraHttp`](super::DualEraHttp): a modern request is the modern endpoint's own
/// future (no extra allocation); anything else is the legacy routing.
pub struct DualEraFuture(pub(super) FutureKind);

pub(super) enum FutureKind {
    Modern(ResponseFuture),
    Legacy(BoxFuture<'static, Response<DualEraBody>>),
}

mcp_types::debug_fields!(DualEraFuture {});

impl Future for DualEraFuture {
    type Output = Result<Response<DualEraBody>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.get_mut().0 {
            FutureKind::Modern(future) => Pin::new(future)
                .poll(cx)
                .map_ok(|response| response.map(|body| DualEraBody(BodyKind::Modern(body)))),
            FutureKind::Legacy(future) => future.as_mut().poll(cx).map(Ok),
        }
    }
}
