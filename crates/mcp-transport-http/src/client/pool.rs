//! The connections of one [`HttpClient`](super::HttpClient) to its endpoint's origin.
//!
//! A client talks to one origin, so its pool needs no key: a stack of idle HTTP/1.1
//! connections, and at most one HTTP/2 connection that every call shares (`https://` only,
//! where the server picks `h2` by ALPN). hyper-util's general-purpose pool, which this
//! replaces, cost about a fifth of our client's instructions per call: a key hashed and
//! compared per request, a race between checkout and a new connection, and a spawned task
//! per response to notice its connection idle. Both protocols are hyper's client
//! connections (`hyper::client::conn`), each driven by a task of its own; the pool keeps
//! their request senders.
//!
//! Invariants:
//!
//! - An HTTP/1.1 connection goes back to the pool only when its response body has been
//!   read to the end ([`Body`]); a body dropped before its end takes its connection with
//!   it (hyper closes it), which is how a Streamable HTTP client cancels a request. A
//!   reply that does not let the connection stay (`Connection: close`, HTTP/1.0 without
//!   `keep-alive`, a body until the close, bytes past the reply) has hyper close it, and
//!   a closed connection is never taken again; a reply framed two ways is refused and its
//!   connection dropped.
//! - An idle connection is checked before it is used: one whose task has seen the server
//!   close it (or send anything on it) is dropped and another taken. A request that a
//!   reused connection refused before its first byte was sent (the server closed it
//!   meanwhile: hyper hands the request back) is sent again on another connection; any
//!   other failure is the caller's.
//! - The lock is held only to push or pop, never across an await.
//! - Idle connections are closed once idle longer than the configured timeout: a task
//!   sweeps them while any are idle, and a checkout skips them.

use std::borrow::Cow;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, HOST, TRANSFER_ENCODING};
use http::uri::{Authority, Scheme};
use http::{HeaderMap, HeaderValue, Request, StatusCode, Uri};
use http_body::{Frame, SizeHint};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper_util::client::legacy::connect::Connection as _;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use tokio::time::Instant;
use tower_service::Service as _;

use super::{Connector, Outgoing};
use crate::error::{BoxError, Error};

/// The largest HTTP/1.1 reply head read, status line and fields, in bytes (and the
/// largest trailer section): hyper's `max_header_size`. Without it hyper bounds a head
/// only by its read buffer, about 400 KiB; an MCP server's heads are a few hundred bytes.
const MAX_HEAD: usize = 64 * 1024;

type Http1 = http1::SendRequest<Full<Bytes>>;
type Http2 = http2::SendRequest<Full<Bytes>>;

/// A forward proxy every connection goes to, and its `Proxy-Authorization` if any.
pub(super) struct ForwardProxy {
    pub(super) auth: Option<HeaderValue>,
}

/// The pool; cloning it shares the connections.
#[derive(Clone)]
pub(super) struct Pool {
    shared: Arc<Shared>,
}

struct Shared {
    connector: Connector,
    /// The `Host` value of the endpoint's origin, made once ([`host_of`]).
    origin: Option<Origin>,
    /// How long a connection may sit idle; zero keeps none.
    idle_timeout: Duration,
    /// Whether every connection goes to a forward proxy: request targets are then in
    /// absolute form (RFC 9112, section 3.2.2).
    absolute_form: bool,
    /// The forward proxy's `Proxy-Authorization`, added to every request.
    proxy_auth: Option<HeaderValue>,
    idle: Mutex<Idle>,
}

#[derive(Default)]
struct Idle {
    /// HTTP/1.1 connections between requests, each with when it became idle; the most
    /// recently used last, and taken first.
    http1: Vec<(Http1, Instant)>,
    /// The HTTP/2 connection every call shares, with when a call last took it.
    http2: Option<(Http2, Instant)>,
    /// Whether a sweeping task runs.
    sweeping: bool,
}

/// What a send on one connection did.
enum Sent {
    /// The response, or the failure.
    Done(Result<Answer, Error>),
    /// Nothing was sent: the request is to be sent again.
    Unsent,
}

impl Sent {
    /// What a send comes to when its connection closed before the request could go: one
    /// that had been idle closed meanwhile, and the request is sent again on another; a
    /// new one that closed at once is a failure.
    fn closed_before_sending(was_idle: bool) -> Sent {
        if was_idle {
            return Sent::Unsent;
        }
        Sent::Done(Err(Error::Send {
            connect: true,
            source: "the new connection closed at once".into(),
        }))
    }
}

/// A connection taken for one request.
enum Taken {
    Http1(Http1),
    Http2(Http2),
}

impl Pool {
    /// A pool for the origin of `endpoint`. With `forward` (a forward proxy, and its
    /// credentials if any) request targets are in absolute form.
    pub(super) fn new(
        connector: Connector,
        idle_timeout: Duration,
        endpoint: &Uri,
        forward: Option<ForwardProxy>,
    ) -> Self {
        Pool {
            shared: Arc::new(Shared {
                connector,
                origin: Origin::of(endpoint),
                idle_timeout,
                absolute_form: forward.is_some(),
                proxy_auth: forward.and_then(|f| f.auth),
                idle: Mutex::new(Idle::default()),
            }),
        }
    }

    /// Sends `outgoing` to `uri` (absolute: the request's own or the endpoint's), with its
    /// shared fields before its own, on an idle connection or a new one, and returns the
    /// response once its head has arrived.
    pub(super) async fn send(&self, outgoing: &Outgoing, uri: &Uri) -> Result<Answer, Error> {
        let with_auth;
        let outgoing = match &self.shared.proxy_auth {
            Some(auth) => {
                let mut headers = outgoing.headers.clone();
                headers.insert(http::header::PROXY_AUTHORIZATION, auth.clone());
                with_auth = Outgoing {
                    method: outgoing.method.clone(),
                    headers,
                    fields: outgoing.fields.clone(),
                    body: outgoing.body.clone(),
                };
                &with_auth
            }
            None => outgoing,
        };
        loop {
            let (taken, was_idle) = match self.shared.checkout() {
                Some(taken) => (taken, true),
                // Boxed: opening a connection (TCP, TLS, the HTTP handshake) is a large
                // future, and the rare path; every call's future stays small without it.
                None => (Box::pin(self.connect(uri)).await?, false),
            };
            let sent = match taken {
                Taken::Http1(sender) => self.send_http1(sender, was_idle, outgoing, uri).await,
                // Boxed: the rarer path, whose future every HTTP/1.1 call's would
                // otherwise make room for.
                Taken::Http2(sender) => {
                    Box::pin(self.send_http2(sender, was_idle, outgoing, uri)).await
                }
            };
            match sent {
                Sent::Done(outcome) => return outcome,
                Sent::Unsent => {}
            }
        }
    }

    /// [`send`](Self::send) on an HTTP/1.1 connection: the target in origin form (absolute
    /// to a forward proxy) and `Host` beside it (RFC 9112 §3.2, §3.2.1). The response, or
    /// [`Sent::Unsent`] when nothing of the request was sent on a connection that had been
    /// idle (it had closed meanwhile), to be sent again on another.
    async fn send_http1(
        &self,
        mut sender: Http1,
        was_idle: bool,
        outgoing: &Outgoing,
        uri: &Uri,
    ) -> Sent {
        if sender.ready().await.is_err() {
            return Sent::closed_before_sending(was_idle);
        }
        let mut headers = outgoing.all_headers();
        match host_of(uri, &headers, self.shared.origin.as_ref()) {
            Ok(Some(host)) => {
                headers.insert(HOST, host.into_owned());
            }
            Ok(None) => {}
            Err(e) => return Sent::Done(Err(e)),
        }
        let mut request = Request::new(Full::new(outgoing.body.clone()));
        *request.method_mut() = outgoing.method.clone();
        *request.uri_mut() = match uri.path_and_query() {
            // hyper writes the URI as given: absolute for a forward proxy.
            _ if self.shared.absolute_form => uri.clone(),
            Some(target) => Uri::from(target.clone()),
            None => Uri::from_static("/"),
        };
        *request.headers_mut() = headers;
        match sender.try_send_request(request).await {
            Ok(response) => {
                let (parts, body) = response.into_parts();
                // RFC 9112 §6.1, §6.3: hyper reads such a reply by its chunks and keeps
                // the connection; a reply framed two ways is how a response is smuggled
                // past an intermediary that reads the other framing, so the reply and its
                // connection are dropped instead (hyper refuses HTTP/1.0 with
                // Transfer-Encoding itself).
                if parts.headers.contains_key(TRANSFER_ENCODING)
                    && parts.headers.contains_key(CONTENT_LENGTH)
                {
                    return Sent::Done(Err(Error::Send {
                        connect: false,
                        source: "a reply with both Transfer-Encoding and Content-Length".into(),
                    }));
                }
                Sent::Done(Ok(Answer {
                    status: parts.status,
                    headers: parts.headers,
                    body: Body::http1(body, sender, Arc::downgrade(&self.shared)),
                }))
            }
            Err(mut failure) => match failure.take_message() {
                // Nothing was sent: the connection had closed meanwhile.
                Some(_) if was_idle => Sent::Unsent,
                _ => Sent::Done(Err(Error::Send {
                    connect: false,
                    source: Box::new(failure.into_error()),
                })),
            },
        }
    }

    /// [`send`](Self::send) on the shared HTTP/2 connection, as
    /// [`send_http1`](Self::send_http1).
    async fn send_http2(
        &self,
        mut sender: Http2,
        was_idle: bool,
        outgoing: &Outgoing,
        uri: &Uri,
    ) -> Sent {
        if sender.ready().await.is_err() {
            if was_idle {
                self.shared.forget_http2();
            }
            return Sent::closed_before_sending(was_idle);
        }
        let mut request = Request::new(Full::new(outgoing.body.clone()));
        *request.method_mut() = outgoing.method.clone();
        *request.uri_mut() = uri.clone();
        *request.headers_mut() = outgoing.all_headers();
        match sender.try_send_request(request).await {
            Ok(response) => {
                let (parts, body) = response.into_parts();
                Sent::Done(Ok(Answer {
                    status: parts.status,
                    headers: parts.headers,
                    body: Body::http2(body),
                }))
            }
            Err(mut failure) => {
                // A stream the server reset leaves the connection to the others; one that
                // could not even be opened does not.
                if failure.message().is_some() || sender.is_closed() {
                    self.shared.forget_http2();
                }
                match failure.take_message() {
                    // Nothing was sent: the connection had closed meanwhile.
                    Some(_) if was_idle => Sent::Unsent,
                    _ => Sent::Done(Err(Error::Send {
                        connect: false,
                        source: Box::new(failure.into_error()),
                    })),
                }
            }
        }
    }

    /// Opens a connection to `uri`'s origin: HTTP/2 when TLS negotiated it (and then it is
    /// the one every call shares), HTTP/1.1 otherwise; its task runs until it closes.
    async fn connect(&self, uri: &Uri) -> Result<Taken, Error> {
        let mut connector = self.shared.connector.clone();
        std::future::poll_fn(|cx| connector.poll_ready(cx))
            .await
            .map_err(failed)?;
        let io = connector.call(uri.clone()).await.map_err(failed)?;
        if io.connected().is_negotiated_h2() {
            let (sender, connection) = http2::Builder::new(TokioExecutor::new())
                .timer(TokioTimer::new())
                .handshake(io)
                .await
                .map_err(failed)?;
            tokio::spawn(async move {
                if let Err(e) = connection.await {
                    tracing::debug!(error = %e, "HTTP/2 client connection ended");
                }
            });
            self.shared.lock().http2 = Some((sender.clone(), Instant::now()));
            Ok(Taken::Http2(sender))
        } else {
            let (sender, connection) = http1::Builder::new()
                .max_header_size(MAX_HEAD)
                .handshake(io)
                .await
                .map_err(failed)?;
            tokio::spawn(async move {
                if let Err(e) = connection.await {
                    tracing::debug!(error = %e, "HTTP/1.1 client connection ended");
                }
            });
            Ok(Taken::Http1(sender))
        }
    }
}

/// A failure to open a connection: nothing reached the server.
fn failed(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
    Error::Send {
        connect: true,
        source: source.into(),
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Idle> {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The shared HTTP/2 connection, or the most recently idle HTTP/1.1 one that is still
    /// open and within the idle timeout.
    fn checkout(&self) -> Option<Taken> {
        let now = Instant::now();
        let mut idle = self.lock();
        if let Some((sender, used)) = &mut idle.http2 {
            if !sender.is_closed() {
                *used = now;
                return Some(Taken::Http2(sender.clone()));
            }
            idle.http2 = None;
        }
        while let Some((sender, since)) = idle.http1.pop() {
            if now.duration_since(since) < self.idle_timeout && !sender.is_closed() {
                return Some(Taken::Http1(sender));
            }
        }
        None
    }

    /// Drops the shared HTTP/2 connection after a call found it unusable, so that the next
    /// call opens another. Unconditionally: a retry must never meet the same connection
    /// again (at worst a newer one another call just opened leaves the pool, and the calls
    /// on it go on).
    fn forget_http2(&self) {
        self.lock().http2 = None;
    }

    /// Takes back an HTTP/1.1 connection whose response has ended, if it is still open.
    fn put(self: &Arc<Self>, sender: Http1) {
        if self.idle_timeout.is_zero() || sender.is_closed() {
            return;
        }
        let mut idle = self.lock();
        idle.http1.push((sender, Instant::now()));
        self.sweep_from(idle);
    }

    /// Starts the sweeping task if none runs.
    fn sweep_from(self: &Arc<Self>, mut idle: MutexGuard<'_, Idle>) {
        if !idle.sweeping
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            idle.sweeping = true;
            runtime.spawn(sweep(Arc::downgrade(self), self.idle_timeout));
        }
    }
}

/// Closes connections idle past `timeout`, every `timeout`, while any connection is idle
/// and the pool exists.
async fn sweep(pool: Weak<Shared>, timeout: Duration) {
    loop {
        tokio::time::sleep(timeout).await;
        let Some(shared) = pool.upgrade() else { return };
        let mut idle = shared.lock();
        let now = Instant::now();
        idle.http1
            .retain(|(sender, since)| !sender.is_closed() && now.duration_since(*since) < timeout);
        if idle.http2.as_ref().is_some_and(|(sender, used)| {
            sender.is_closed() || now.duration_since(*used) >= timeout
        }) {
            idle.http2 = None;
        }
        if idle.http1.is_empty() && idle.http2.is_none() {
            idle.sweeping = false;
            return;
        }
    }
}

/// The `Host` value [`host_of`] makes for one origin, made once for the endpoint's.
struct Origin {
    https: bool,
    authority: Box<str>,
    host: HeaderValue,
}

impl Origin {
    /// The endpoint's origin, if its `Host` value can be made.
    fn of(endpoint: &Uri) -> Option<Origin> {
        let authority = endpoint.authority()?;
        Some(Origin {
            https: is_https(endpoint),
            authority: authority.as_str().into(),
            host: host(is_https(endpoint), authority).ok()?,
        })
    }
}

fn is_https(uri: &Uri) -> bool {
    uri.scheme() == Some(&Scheme::HTTPS)
}

/// The `Host` value of an authority: without the scheme's default port.
fn host(https: bool, authority: &Authority) -> Result<HeaderValue, Error> {
    let default_port = if https { 443 } else { 80 };
    match authority.port_u16() {
        Some(port) if port == default_port => HeaderValue::from_str(authority.host()),
        _ => HeaderValue::from_str(authority.as_str()),
    }
    .map_err(|e| Error::Header {
        name: "Host".to_owned(),
        reason: e.to_string(),
    })
}

/// The `Host` field an HTTP/1.1 request carries beside the origin form of its URI (RFC
/// 9112, sections 3.2 and 3.2.1: servers need not accept the absolute form from a client
/// that is not a proxy): made from the URI's authority, or `None` when the request has a
/// `Host` already or its URI no authority. `origin` is the value made once for the
/// endpoint's origin, lent when the request's scheme and authority are exactly its own.
fn host_of<'o>(
    uri: &Uri,
    headers: &http::HeaderMap,
    origin: Option<&'o Origin>,
) -> Result<Option<Cow<'o, HeaderValue>>, Error> {
    let Some(authority) = uri.authority() else {
        return Ok(None);
    };
    if !headers.is_empty() && headers.contains_key(HOST) {
        return Ok(None);
    }
    let https = is_https(uri);
    match origin {
        Some(origin) if origin.https == https && *origin.authority == *authority.as_str() => {
            Ok(Some(Cow::Borrowed(&origin.host)))
        }
        _ => host(https, authority).map(|host| Some(Cow::Owned(host))),
    }
}

/// A reply as the pool returns it once its head has arrived.
pub(super) struct Answer {
    pub(super) status: StatusCode,
    pub(super) headers: HeaderMap,
    pub(super) body: Body,
}

/// A response body. An HTTP/1.1 one that has ended returns its connection to the pool (if
/// the connection is still open); dropped before, or failed, it closes the connection.
pub(super) struct Body {
    inner: Inner,
}

enum Inner {
    Http1 {
        body: Incoming,
        /// `None` once the body ended or failed.
        sender: Option<Http1>,
        pool: Weak<Shared>,
    },
    Http2(Incoming),
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            Inner::Http1 { body, .. } | Inner::Http2(body) => {
                f.debug_tuple("Body").field(body).finish()
            }
        }
    }
}

impl Body {
    fn http1(body: Incoming, sender: Http1, pool: Weak<Shared>) -> Self {
        let mut body = Body {
            inner: Inner::Http1 {
                body,
                sender: Some(sender),
                pool,
            },
        };
        // An empty body (`202 Accepted`) has ended already: its connection is free now,
        // whether or not the body is ever read.
        body.release(false);
        body
    }

    fn http2(inner: Incoming) -> Self {
        Body {
            inner: Inner::Http2(inner),
        }
    }

    /// Returns an HTTP/1.1 connection to the pool once its body has ended: `ended` (it
    /// yielded its end), or known to have (a length, all read).
    fn release(&mut self, ended: bool) {
        if let Inner::Http1 { body, sender, pool } = &mut self.inner
            && (ended || http_body::Body::is_end_stream(body))
            && let Some(sender) = sender.take()
            && let Some(pool) = pool.upgrade()
        {
            pool.put(sender);
        }
    }
}

impl http_body::Body for Body {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let polled = match &mut self.inner {
            Inner::Http2(inner) => Pin::new(inner).poll_frame(cx),
            Inner::Http1 { body, sender, .. } => {
                let polled = Pin::new(body).poll_frame(cx);
                match &polled {
                    Poll::Ready(Some(Err(_))) => *sender = None,
                    // The last bytes of a body of known length: it has ended, whether or
                    // not it is polled again.
                    Poll::Ready(Some(Ok(_))) => self.release(false),
                    Poll::Ready(None) => self.release(true),
                    Poll::Pending => {}
                }
                polled
            }
        };
        polled.map_err(|e| Box::new(e) as BoxError)
    }

    fn is_end_stream(&self) -> bool {
        match &self.inner {
            Inner::Http1 { body: inner, .. } | Inner::Http2(inner) => inner.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.inner {
            Inner::Http1 { body: inner, .. } | Inner::Http2(inner) => inner.size_hint(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_is_the_authority_without_the_default_port() {
        for (uri, host) in [
            ("http://127.0.0.1:8080/mcp", "127.0.0.1:8080"),
            ("http://example.com:80/mcp?x=1", "example.com"),
            ("http://example.com", "example.com"),
            ("https://example.com:443/a", "example.com"),
            ("https://example.com:8443/a", "example.com:8443"),
            ("http://[::1]:9/m", "[::1]:9"),
        ] {
            let uri: Uri = uri.parse().unwrap();
            let headers = HeaderMap::new();
            let made = host_of(&uri, &headers, None).unwrap().unwrap();
            assert_eq!(*made, host, "{uri}");
            // The same with the value made once for the origin, whether it is this one or
            // another (only the request's own is taken).
            for endpoint in [
                &uri.to_string()[..],
                "http://other:81/x",
                "https://example.com:80/a",
            ] {
                let origin = Origin::of(&endpoint.parse().unwrap()).unwrap();
                let made = host_of(&uri, &headers, Some(&origin)).unwrap().unwrap();
                assert_eq!(*made, host, "{uri} beside {endpoint}");
            }
        }
        // A Host the caller set stays, and is the only one.
        let uri: Uri = "http://example.com/mcp".parse().unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(HOST, HeaderValue::from_static("other"));
        assert_eq!(host_of(&uri, &headers, None).unwrap(), None);
    }
}
