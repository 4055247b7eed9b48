//! The connections of one [`HttpClient`](super::HttpClient) through hyper-util's
//! general-purpose pool (`hyper_util::client::legacy::Client`), in place of the client's own
//! (`pool.rs`): the build with `--cfg mcp_without="client_pool"`, against which
//! `cargo xtask bench` weighs the client's pool (`docs/PERFORMANCE.md`, "Kept, and why").
//! Not a configuration: only the benchmark builds it.
//!
//! The same API as `pool.rs`, over the same connector (TCP or a custom connector, TLS with
//! ALPN, a proxy's tunnel), and the same requests on the wire: the shared fields before the
//! request's own, `Host` beside the origin form on HTTP/1.1 (hyper-util's, by the same
//! rule: the authority without the scheme's default port, a caller's own kept), the
//! absolute form and `Proxy-Authorization` to a forward proxy, HTTP/2 where ALPN picks it,
//! idle connections closed past the configured timeout (zero keeps none). A reply framed
//! both by `Transfer-Encoding` and by `Content-Length` is refused, and its connection
//! dropped with its body. What differs is hyper-util's: a key per request, a checkout raced
//! against a new connection, a task per response that returns its connection, and no
//! bound of its own on an HTTP/1.1 reply head (its builder cannot set hyper's
//! `max_header_size`: hyper's read buffer, about 400 KiB, bounds it instead of 64 KiB).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, PROXY_AUTHORIZATION, TRANSFER_ENCODING};
use http::{HeaderMap, HeaderValue, Request, StatusCode, Uri, Version};
use http_body::{Frame, SizeHint};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::{TokioExecutor, TokioTimer};
use tower_service::Service;

use super::{Connector, Outgoing};
use crate::error::{BoxError, Error};

/// A forward proxy every connection goes to, and its `Proxy-Authorization` if any.
pub(super) struct ForwardProxy {
    pub(super) auth: Option<HeaderValue>,
}

/// The pool; cloning it shares the connections.
#[derive(Clone)]
pub(super) struct Pool {
    client: Clients,
    /// The forward proxy's `Proxy-Authorization`, added to every request.
    proxy_auth: Option<HeaderValue>,
}

/// hyper-util's client over the connector, or, through a forward proxy, over the connector
/// whose connections say so ([`Proxied`]): hyper-util then writes targets in absolute form.
#[derive(Clone)]
enum Clients {
    Direct(Client<Connector, Full<Bytes>>),
    Forward(Client<Proxied, Full<Bytes>>),
}

impl Pool {
    /// A pool for the origin of `endpoint`. With `forward` (a forward proxy, and its
    /// credentials if any) request targets are in absolute form.
    pub(super) fn new(
        connector: Connector,
        idle_timeout: Duration,
        _endpoint: &Uri,
        forward: Option<ForwardProxy>,
    ) -> Self {
        let mut builder = Client::builder(TokioExecutor::new());
        builder
            .timer(TokioTimer::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(idle_timeout);
        if idle_timeout.is_zero() {
            builder.pool_max_idle_per_host(0);
        }
        match forward {
            None => Pool {
                client: Clients::Direct(builder.build(connector)),
                proxy_auth: None,
            },
            Some(forward) => Pool {
                client: Clients::Forward(builder.build(Proxied(connector))),
                proxy_auth: forward.auth,
            },
        }
    }

    /// Sends `outgoing` to `uri` (absolute: the request's own or the endpoint's), with its
    /// shared fields before its own, and returns the response once its head has arrived.
    pub(super) async fn send(&self, outgoing: &Outgoing, uri: &Uri) -> Result<Answer, Error> {
        let mut headers = outgoing.all_headers();
        if let Some(auth) = &self.proxy_auth {
            headers.insert(PROXY_AUTHORIZATION, auth.clone());
        }
        let mut request = Request::new(Full::new(outgoing.body.clone()));
        *request.method_mut() = outgoing.method.clone();
        // hyper-util writes the origin form (and `Host`) on HTTP/1.1, unless the
        // connection is a forward proxy's; HTTP/2 takes the URI as it is.
        *request.uri_mut() = uri.clone();
        *request.headers_mut() = headers;
        let responding = match &self.client {
            Clients::Direct(client) => client.request(request),
            Clients::Forward(client) => client.request(request),
        };
        let response = responding.await.map_err(|e| Error::Send {
            connect: e.is_connect(),
            source: Box::new(e),
        })?;
        let (parts, body) = response.into_parts();
        // RFC 9112 §6.1, §6.3, as `pool.rs`: the reply and its connection (closed by hyper
        // when the body is dropped before its end) are dropped.
        if parts.version != Version::HTTP_2
            && parts.headers.contains_key(TRANSFER_ENCODING)
            && parts.headers.contains_key(CONTENT_LENGTH)
        {
            return Err(Error::Send {
                connect: false,
                source: "a reply with both Transfer-Encoding and Content-Length".into(),
            });
        }
        Ok(Answer {
            status: parts.status,
            headers: parts.headers,
            body: Body(body),
        })
    }
}

/// The connector, its connections marked as a forward proxy's ([`Connected::proxy`]).
#[derive(Clone)]
struct Proxied(Connector);

type Io = <Connector as Service<Uri>>::Response;

impl Service<Uri> for Proxied {
    type Response = ProxiedIo;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<ProxiedIo, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connecting = self.0.call(uri);
        Box::pin(async move { connecting.await.map(ProxiedIo) })
    }
}

/// A connection to a forward proxy.
struct ProxiedIo(Io);

impl Connection for ProxiedIo {
    fn connected(&self) -> Connected {
        self.0.connected().proxy(true)
    }
}

impl Read for ProxiedIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl Write for ProxiedIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write_vectored(cx, bufs)
    }
}

/// A reply as the pool returns it once its head has arrived.
pub(super) struct Answer {
    pub(super) status: StatusCode,
    pub(super) headers: HeaderMap,
    pub(super) body: Body,
}

/// A response body; hyper-util returns its connection to the pool once it has ended.
#[derive(Debug)]
pub(super) struct Body(Incoming);

impl http_body::Body for Body {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        Pin::new(&mut self.0)
            .poll_frame(cx)
            .map_err(|e| Box::new(e) as BoxError)
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.0.size_hint()
    }
}
