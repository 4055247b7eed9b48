//! The client half: one POST per JSON-RPC message, over a shared pool of connections.
//!
//! Revision 2026-07-28 makes HTTP request-scoped
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>, Sending Messages), so the client
//! is not a frame reader and writer but a call: [`HttpClient::request`] POSTs one encoded
//! request with the headers that mirror it and returns a [`ResponseStream`] of the messages
//! the server answers with; [`HttpClient::notify`] POSTs a notification and expects `202`.
//!
//! Policy:
//!
//! - Every POST carries `Accept: application/json, text/event-stream`,
//!   `Content-Type: application/json`, `MCP-Protocol-Version`, `Mcp-Method`, and `Mcp-Name`
//!   and `Mcp-Param-*` when given, their values encoded with the Base64 sentinel when they are
//!   not plain (see `headers::encode_sentinel`, the inverse of what the server half decodes).
//!   The caller extracts the values from the body; this module only writes them.
//! - Redirects are not followed: a 3xx is [`Error::Redirect`], so credentials never reach
//!   another origin.
//! - Authorization is an [`Authorizer`]'s (module `auth`): it supplies every request's
//!   `Authorization` header, and a `401` (or `403` with a challenge) is handed to it and the
//!   request re-sent if it obtained new credentials; otherwise the refusal is
//!   [`Error::Unauthorized`]. This module knows no OAuth.
//! - Connections are pooled (module `pool`): HTTP/1.1 with keep-alive, or HTTP/2 (one
//!   connection for every concurrent call) where an `https://` server offers `h2` by ALPN.
//!   Both are hyper's client connections, each a task spawned on the caller's runtime that
//!   ends with the connection. hyper-util provides only the connector (TCP, and TLS with
//!   `rustls`).
//! - Cancellation is dropping: dropping the future of a call, or its [`ResponseStream`],
//!   closes the connection (HTTP/1.1) or resets the stream (HTTP/2) mid-reply, which the
//!   spec defines as cancelling the request.

mod auth;
mod config;
mod connect;
// Built with `--cfg mcp_without="client_pool"`, the pool is hyper-util's (the same API),
// against which `cargo xtask bench` weighs ours (`docs/PERFORMANCE.md`, "Kept, and why").
#[cfg_attr(mcp_without = "client_pool", path = "pool_hyper_util.rs")]
mod pool;
mod raw;
pub(crate) mod sse;
mod stream;

use std::borrow::Borrow;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, LOCATION};
use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use hyper_util::client::legacy::connect::HttpConnector;

pub use auth::{AuthFuture, Authorizer, AuthorizerError, Challenge, MAX_CHALLENGES};
pub use config::HttpClientConfig;
pub use connect::{ConnectionIo, CustomConnector, ProxyConfig};
pub use raw::{EventStream, RawRequest, RawResponse};
pub use sse::SseEvent;
pub use stream::{Reply, ResponseStream};

use crate::error::Error;
use crate::headers;
use crate::headers::{METHOD, NAME, PROTOCOL_VERSION};

#[cfg(feature = "rustls")]
type Connector = hyper_rustls::HttpsConnector<connect::Dial>;
#[cfg(not(feature = "rustls"))]
type Connector = connect::Dial;

const ACCEPT_BOTH: HeaderValue = HeaderValue::from_static("application/json, text/event-stream");
const JSON: HeaderValue = HeaderValue::from_static("application/json");
/// How much of a `401`/`403` body is read (and dropped) so that its connection is reused.
const REFUSAL_BODY_LIMIT: usize = 64 << 10;

/// The headers that mirror one message's body
/// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>,
/// Request Metadata). The caller reads them from the body it encoded:
/// the method, `params.name` or `params.uri`, and the arguments a tool's `x-mcp-header`
/// annotations designate.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct RequestHeaders {
    /// `MCP-Protocol-Version`, such as `2026-07-28`.
    pub protocol_version: String,
    /// `Mcp-Method`, the JSON-RPC method.
    pub method: String,
    /// `Mcp-Name`: `params.name` of `tools/call` and `prompts/get`, `params.uri` of
    /// `resources/read`.
    pub name: Option<String>,
    /// `Mcp-Param-{name}` headers: the `x-mcp-header` name and the argument's value (a
    /// string, an integer or a boolean; a null omits the header).
    pub params: Vec<(String, serde_json::Value)>,
}

impl RequestHeaders {
    /// The headers of a message for `method` under `protocol_version`.
    pub fn new(protocol_version: impl Into<String>, method: impl Into<String>) -> Self {
        RequestHeaders {
            protocol_version: protocol_version.into(),
            method: method.into(),
            name: None,
            params: Vec::new(),
        }
    }

    /// Sets `Mcp-Name`.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Adds an `Mcp-Param-{name}` header with the argument's value.
    #[must_use]
    pub fn param(mut self, name: impl Into<String>, value: impl Into<serde_json::Value>) -> Self {
        self.params.push((name.into(), value.into()));
        self
    }
}

/// A Streamable HTTP client for one MCP endpoint. Cloning it is cheap and shares the
/// connection pool.
///
/// ```
/// use mcp_jsonrpc::{ErrorObject, Handler, Message, Request, RequestContext};
/// use mcp_transport_http::{HttpClient, HttpClientConfig, HttpServer, HttpServerConfig, RequestHeaders};
/// use serde_json::{json, value::RawValue};
///
/// /// Sends one log notification, then answers with its params.
/// struct Echo;
///
/// impl Handler for Echo {
///     async fn request(&self, request: Request, cx: RequestContext) -> Result<Box<RawValue>, ErrorObject> {
///         cx.notify("notifications/message", Some(&json!({"level": "info", "data": "hi"})))
///             .await
///             .map_err(|e| ErrorObject::internal(e.to_string()))?;
///         request.params.unwrap().into_raw_value().map_err(|e| e.to_error_object())
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let server = HttpServer::bind(HttpServer::DEFAULT_ADDR, Echo, HttpServerConfig::default())
///     .await
///     .unwrap();
/// let client = HttpClient::new(server.url(), HttpClientConfig::default()).unwrap();
///
/// let params = json!({"_meta": {
///     "io.modelcontextprotocol/protocolVersion": "2026-07-28",
///     "io.modelcontextprotocol/clientCapabilities": {}}});
/// let frame = mcp_jsonrpc::encode_request(&1.into(), "tools/list", Some(&params)).unwrap();
/// let mut stream = client
///     .request(frame, RequestHeaders::new("2026-07-28", "tools/list"))
///     .await
///     .unwrap();
///
/// // The notification arrives first (over SSE), then the response.
/// let Some(Ok(Message::Notification(log))) = stream.next().await else { panic!() };
/// assert_eq!(log.method, "notifications/message");
/// let Some(Ok(Message::Response(response))) = stream.next().await else { panic!() };
/// assert!(response.outcome.is_ok());
/// assert!(stream.next().await.is_none());
///
/// server.shutdown(std::time::Duration::from_secs(1)).await;
/// # });
/// ```
#[derive(Clone)]
pub struct HttpClient {
    pool: pool::Pool,
    url: Uri,
    headers: HeaderMap,
    limits: Limits,
    authorizer: Option<Arc<dyn Authorizer>>,
    /// The headers [`build`](Self::build) made last for a request without `Mcp-Param-*`
    /// headers, shared by the clones.
    last: Arc<Mutex<Option<LastHeaders>>>,
}

/// A request's header fields with the values they mirror: the next request with the same
/// values shares them instead of having them built (and their values checked) again. The
/// configured headers are the client's, the same for every request.
struct LastHeaders {
    protocol_version: String,
    method: String,
    name: Option<String>,
    fields: Arc<HeaderMap>,
}

/// The header fields of an MCP request made once ([`HttpClient::prepare`]): the
/// configured headers and those mirroring the message, checked, encoded and shared by
/// every request sent with them ([`HttpClient::request_prepared`]). Cloning is cheap.
#[derive(Debug, Clone)]
pub struct PreparedHeaders {
    fields: Arc<HeaderMap>,
}

/// A request ready to send, borrowed by the pool while it is sent (to a URI given beside
/// it: the endpoint's, not copied per request, or another of its origin's). Its header
/// fields are the shared `fields` (an MCP request's, [`PreparedHeaders`]) followed by its
/// own `headers` (empty for an MCP request).
#[derive(Debug)]
struct Outgoing {
    method: Method,
    headers: HeaderMap,
    fields: Option<Arc<HeaderMap>>,
    body: Bytes,
}

impl Outgoing {
    /// An MCP POST to the endpoint with the shared `fields`.
    fn post(body: Bytes, fields: Arc<HeaderMap>) -> Self {
        Outgoing {
            method: Method::POST,
            headers: HeaderMap::new(),
            fields: Some(fields),
            body,
        }
    }

    /// Every header field of the request, the shared ones first.
    fn all_headers(&self) -> HeaderMap {
        let mut map = self.headers.clone();
        if let Some(fields) = &self.fields {
            merge_fields(&mut map, fields);
        }
        map
    }
}

/// Puts the shared `fields` before the fields of `headers` (each kept).
fn merge_fields(headers: &mut HeaderMap, fields: &HeaderMap) {
    let own = std::mem::replace(headers, fields.clone());
    let mut name = None;
    for (next, value) in own {
        if next.is_some() {
            name = next;
        }
        if let Some(name) = &name {
            headers.append(name.clone(), value);
        }
    }
}

impl LastHeaders {
    fn mirrors(&self, mcp: &RequestHeaders) -> bool {
        self.protocol_version == mcp.protocol_version
            && self.method == mcp.method
            && self.name == mcp.name
    }
}

/// The bounds on what a reply may hold.
#[derive(Debug, Clone, Copy)]
struct Limits {
    body: usize,
    event: usize,
}

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Extra headers may hold credentials: only their names are shown.
        f.debug_struct("HttpClient")
            .field("url", &self.url)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("limits", &self.limits)
            .field("authorizer", &self.authorizer.is_some())
            .finish_non_exhaustive()
    }
}

impl HttpClient {
    /// A client for the MCP endpoint at `url` (`http://…`, or `https://…` with the `rustls`
    /// feature). No connection is opened until the first call; calls must run within a
    /// tokio runtime.
    pub fn new(url: &str, config: HttpClientConfig) -> Result<Self, Error> {
        let invalid = |reason| Error::Url {
            url: url.to_owned(),
            reason,
        };
        let uri: Uri = url.parse().map_err(|_| invalid("not a URL"))?;
        if uri.authority().is_none() {
            return Err(invalid("no host"));
        }
        match uri.scheme_str() {
            Some("http") => {}
            Some("https") if cfg!(feature = "rustls") => {}
            Some("https") => return Err(invalid("https needs the `rustls` feature")),
            _ => return Err(invalid("the scheme must be http or https")),
        }

        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        let timeout = Some(config.connect_timeout).filter(|t| !t.is_zero());
        http.set_connect_timeout(timeout);
        let route = config.proxy.route(&uri)?;
        let dial = connect::dial(&route, config.connector.as_ref(), http, timeout);
        #[cfg(feature = "rustls")]
        let connector = connector(dial, config.tls.as_deref())?;
        #[cfg(not(feature = "rustls"))]
        let connector = dial;
        // Through a forward proxy every request goes in absolute form, with the proxy's
        // credentials beside it.
        let forward = match route {
            connect::Route::Forward { auth, .. } => Some(pool::ForwardProxy { auth }),
            _ => None,
        };
        Ok(HttpClient {
            pool: pool::Pool::new(connector, config.pool_idle_timeout, &uri, forward),
            url: uri,
            headers: config.headers,
            limits: Limits {
                body: config.max_response_bytes,
                event: config.max_event_bytes,
            },
            authorizer: config.authorizer,
            last: Arc::default(),
        })
    }

    /// The endpoint's URL.
    pub fn url(&self) -> &Uri {
        &self.url
    }

    /// POSTs one encoded JSON-RPC request and returns once the reply's head has arrived.
    /// The [`ResponseStream`] then yields, in order, each message the server sends for it:
    /// notifications (progress, logs) as they arrive, then the response. A JSON-RPC error
    /// answered with an error status (`404` with -32601, `400` with -32020) is a response
    /// message like any other.
    ///
    /// `headers` is a [`RequestHeaders`] or anything that lends one (`&RequestHeaders`,
    /// `Arc<RequestHeaders>`); they are made into header fields (and checked) before the
    /// future is returned, so the future does not hold them. A caller that sends the same
    /// headers again and again can make them once with [`prepare`](Self::prepare).
    ///
    /// Cancel safety: dropping the future, or the stream, closes the connection (HTTP/1.1)
    /// or resets the stream (HTTP/2), which cancels the request on the server.
    pub fn request<H: Borrow<RequestHeaders>>(
        &self,
        frame: Bytes,
        headers: H,
    ) -> impl Future<Output = Result<ResponseStream, Error>> + Send + use<'_, H> {
        let prepared = self.prepare(headers.borrow());
        self.respond(prepared.map(|prepared| Outgoing::post(frame, prepared.fields)))
    }

    /// [`request`](Self::request) with header fields made once by
    /// [`prepare`](Self::prepare): nothing about the headers is looked up, checked or
    /// encoded per request.
    ///
    /// ```
    /// use mcp_jsonrpc::{ErrorObject, Handler, Message, Request, RequestContext};
    /// use mcp_transport_http::{HttpClient, HttpClientConfig, HttpServer, HttpServerConfig, RequestHeaders};
    /// use serde_json::{json, value::RawValue};
    ///
    /// /// Answers with the request's params.
    /// struct Echo;
    ///
    /// impl Handler for Echo {
    ///     async fn request(&self, request: Request, _: RequestContext) -> Result<Box<RawValue>, ErrorObject> {
    ///         request.params.unwrap().into_raw_value().map_err(|e| e.to_error_object())
    ///     }
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = HttpServer::bind(HttpServer::DEFAULT_ADDR, Echo, HttpServerConfig::default())
    ///     .await
    ///     .unwrap();
    /// let client = HttpClient::new(server.url(), HttpClientConfig::default()).unwrap();
    ///
    /// // The same tool called again and again: its headers are made once.
    /// let headers = client
    ///     .prepare(&RequestHeaders::new("2026-07-28", "tools/call").name("echo"))
    ///     .unwrap();
    /// for id in 1..=3 {
    ///     let params = json!({"name": "echo", "arguments": {"n": id}, "_meta": {
    ///         "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    ///         "io.modelcontextprotocol/clientCapabilities": {}}});
    ///     let frame = mcp_jsonrpc::encode_request(&id.into(), "tools/call", Some(&params)).unwrap();
    ///     let mut stream = client.request_prepared(frame, &headers).await.unwrap();
    ///     let Some(Ok(Message::Response(response))) = stream.next().await else { panic!() };
    ///     assert_eq!(response.outcome.unwrap().get(), params.to_string());
    /// }
    ///
    /// // A header value that cannot be sent is refused when the headers are made.
    /// assert!(client.prepare(&RequestHeaders::new("2026-07-28", "tools call")).is_err());
    /// server.shutdown(std::time::Duration::from_secs(1)).await;
    /// # });
    /// ```
    pub fn request_prepared(
        &self,
        frame: Bytes,
        headers: &PreparedHeaders,
    ) -> impl Future<Output = Result<ResponseStream, Error>> + Send + use<'_> {
        self.respond(Ok(Outgoing::post(frame, Arc::clone(&headers.fields))))
    }

    /// Makes the header fields of requests with `headers`: the configured headers, then
    /// `Accept`, `Content-Type`, `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and
    /// `Mcp-Param-*`, each value checked (and encoded with the Base64 sentinel where the
    /// spec says). A value that cannot be sent is [`Error::Header`].
    pub fn prepare(&self, headers: &RequestHeaders) -> Result<PreparedHeaders, Error> {
        // The common case: the same headers as the last request (a tool called again).
        let reusable = headers.params.is_empty();
        if reusable {
            let last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(last) = last.as_ref().filter(|last| last.mirrors(headers)) {
                return Ok(PreparedHeaders {
                    fields: Arc::clone(&last.fields),
                });
            }
        }
        let mut map = HeaderMap::new();
        self.build_headers(&mut map, headers)?;
        let fields = Arc::new(map);
        if reusable {
            *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Some(LastHeaders {
                protocol_version: headers.protocol_version.clone(),
                method: headers.method.clone(),
                name: headers.name.clone(),
                fields: Arc::clone(&fields),
            });
        }
        Ok(PreparedHeaders { fields })
    }

    /// Sends a request made by [`request`](Self::request) and turns its reply into a
    /// stream.
    async fn respond(&self, outgoing: Result<Outgoing, Error>) -> Result<ResponseStream, Error> {
        let outgoing = outgoing?;
        let answer = if self.authorizer.is_none() {
            // `execute`'s path without an authorizer, written here: a state of this future
            // rather than a future within it (the usual call).
            let uri = &self.url;
            let answer = self.pool.send(&outgoing, uri).await?;
            if let Some(challenge) =
                auth::Challenge::of(answer.status, &answer.headers, uri, None, &[])
            {
                return Err(Box::pin(refused(answer.body, challenge)).await);
            }
            answer
        } else {
            self.execute(&outgoing, &self.url).await?
        };
        let pool::Answer {
            status,
            headers: fields,
            body,
        } = answer;
        if status.is_redirection() {
            return Err(redirect(status, &fields));
        }
        let json = headers::is_json_content(&fields);
        if status.is_success() {
            if json {
                return Ok(ResponseStream::json(status, body, self.limits));
            }
            if headers::is_sse_content(&fields) {
                return Ok(ResponseStream::sse(body, self.limits));
            }
            return Err(Error::ContentType {
                content_type: headers::single(&fields, CONTENT_TYPE)
                    .ok()
                    .flatten()
                    .map(str::to_owned),
            });
        }
        if json {
            // The body should be a JSON-RPC error response; the stream yields it, or a
            // status error if it is not one.
            return Ok(ResponseStream::json(status, body, self.limits));
        }
        Err(Error::Status {
            status,
            error: None,
        })
    }

    /// POSTs one encoded JSON-RPC notification; the server must answer `202 Accepted`.
    /// Another status is [`Error::Status`], with the JSON-RPC error of the body if any.
    pub async fn notify(&self, frame: Bytes, headers: RequestHeaders) -> Result<(), Error> {
        let prepared = self.prepare(&headers)?;
        let answer = self
            .execute(&Outgoing::post(frame, prepared.fields), &self.url)
            .await?;
        let pool::Answer {
            status,
            headers: fields,
            body,
        } = answer;
        if status.is_redirection() {
            return Err(redirect(status, &fields));
        }
        let json = headers::is_json_content(&fields);
        let body = stream::read_body(body, self.limits.body).await;
        if status == StatusCode::ACCEPTED {
            return Ok(());
        }
        let error = match body {
            Ok(body) if json => stream::error_of(&body),
            _ => None,
        };
        Err(Error::Status { status, error })
    }

    /// Sends `outgoing` to `uri` with the authorizer's credential headers, answering the
    /// server's challenges through the authorizer (see the `auth` module): a refused
    /// request is sent again, unchanged but for new credential headers, while the
    /// authorizer says to retry and at most [`MAX_CHALLENGES`] times. A refusal that is not
    /// retried is [`Error::Unauthorized`].
    async fn execute(&self, outgoing: &Outgoing, uri: &Uri) -> Result<pool::Answer, Error> {
        let Some(authorizer) = &self.authorizer else {
            // Nobody to answer a challenge: a refusal is final, and the request is sent
            // once, as it is.
            let answer = self.pool.send(outgoing, uri).await?;
            return match auth::Challenge::of(answer.status, &answer.headers, uri, None, &[]) {
                None => Ok(answer),
                Some(challenge) => Err(Box::pin(refused(answer.body, challenge)).await),
            };
        };
        // Boxed: this path's future is large, and every call's future stays small without
        // it.
        Box::pin(self.authorized(authorizer.as_ref(), outgoing, uri)).await
    }

    /// [`execute`](Self::execute) with an authorizer.
    async fn authorized(
        &self,
        authorizer: &dyn Authorizer,
        outgoing: &Outgoing,
        uri: &Uri,
    ) -> Result<pool::Answer, Error> {
        // A token about to expire is renewed before the request rather than after a 401.
        if let Some(prepare) = authorizer.prepare() {
            prepare.await;
        }
        let own = outgoing.all_headers();
        // The `WWW-Authenticate` values of the challenges met so far.
        let mut earlier: Vec<Vec<String>> = Vec::new();
        loop {
            let mut headers = own.clone();
            // With an authorizer, `Authorization` is its alone: a configured one is
            // dropped, and a header it supplies replaces a configured one.
            let credentials = authorizer
                .headers(&outgoing.method, uri)
                .map_err(Error::Authorization)?;
            let sent = credentials.get(AUTHORIZATION).cloned();
            headers.remove(AUTHORIZATION);
            let mut name = None;
            for (next, value) in credentials {
                if let Some(next) = next {
                    headers.remove(&next);
                    name = Some(next);
                }
                if let Some(name) = &name {
                    headers.append(name.clone(), value);
                }
            }
            let sending = Outgoing {
                method: outgoing.method.clone(),
                headers,
                fields: None,
                body: outgoing.body.clone(),
            };
            let answer = self.pool.send(&sending, uri).await?;
            authorizer.responded(uri, answer.status, &answer.headers);
            let Some(challenge) =
                auth::Challenge::of(answer.status, &answer.headers, uri, sent, &earlier)
            else {
                return Ok(answer);
            };
            // Read the (small) refusal so that its connection can be reused.
            let _ = stream::read_body(answer.body, REFUSAL_BODY_LIMIT).await;
            let attempt = challenge.attempt;
            tracing::debug!(status = %challenge.status, challenge = ?challenge.www_authenticate, attempt, "authorization challenge");
            let retry = attempt + 1 < MAX_CHALLENGES
                && authorizer
                    .challenged(&challenge)
                    .await
                    .map_err(Error::Authorization)?;
            if !retry {
                return Err(Error::Unauthorized {
                    status: challenge.status,
                    www_authenticate: challenge.www_authenticate,
                });
            }
            earlier.push(challenge.www_authenticate);
        }
    }

    /// Fills the empty `map` with the configured headers and those of `mcp`.
    fn build_headers(&self, map: &mut HeaderMap, mcp: &RequestHeaders) -> Result<(), Error> {
        // Room for every header up front (the configured ones, the MCP ones, and `Host`,
        // which the pool adds), so that the map is not grown while it is filled.
        map.reserve(self.headers.len() + mcp.params.len() + 7);
        for (name, value) in &self.headers {
            map.append(name, value.clone());
        }
        map.insert(ACCEPT, ACCEPT_BOTH);
        map.insert(CONTENT_TYPE, JSON);
        let version = match known(&mcp.protocol_version) {
            Some(value) => value,
            None => plain("MCP-Protocol-Version", &mcp.protocol_version)?,
        };
        map.insert(PROTOCOL_VERSION, version);
        let method = match known(&mcp.method) {
            Some(value) => value,
            None => plain("Mcp-Method", &mcp.method)?,
        };
        map.insert(METHOD, method);
        if let Some(name) = &mcp.name {
            map.insert(NAME, encoded("Mcp-Name", name)?);
        }
        for (name, value) in &mcp.params {
            let header = headers::param_header_name(name).ok_or_else(|| Error::Header {
                name: format!("Mcp-Param-{name}"),
                reason: "the name is not an HTTP field-name token".to_owned(),
            })?;
            if let Some(text) = param_text(header.as_str(), value)? {
                let value = encoded(header.as_str(), &text)?;
                map.insert(header, value);
            }
        }
        Ok(())
    }
}

/// The error of a refusal nobody answers: [`Error::Unauthorized`], once the (small) body is
/// read so that its connection can be reused. Boxed by its callers, so that the read takes
/// no room in every call's future.
async fn refused(body: pool::Body, challenge: auth::Challenge) -> Error {
    let _ = stream::read_body(body, REFUSAL_BODY_LIMIT).await;
    Error::Unauthorized {
        status: challenge.status,
        www_authenticate: challenge.www_authenticate,
    }
}

/// The HTTPS connector: ALPN offers `h2` then `http/1.1`, and the pool speaks HTTP/2 on
/// a connection where the server chose it (one connection then carries every concurrent
/// call). Plain `http://` stays HTTP/1.1: no prior-knowledge HTTP/2.
#[cfg(feature = "rustls")]
fn connector(http: connect::Dial, tls: Option<&rustls::ClientConfig>) -> Result<Connector, Error> {
    let builder = hyper_rustls::HttpsConnectorBuilder::new();
    let builder = match tls {
        Some(config) => {
            let mut config = config.clone();
            // hyper-rustls sets ALPN from the enabled versions and refuses a preset list.
            config.alpn_protocols.clear();
            builder.with_tls_config(config)
        }
        None => builder
            .with_provider_and_webpki_roots(rustls::crypto::ring::default_provider())
            .map_err(|e| Error::Config(format!("TLS setup failed: {e}")))?,
    };
    Ok(builder
        .https_or_http()
        .enable_all_versions()
        .wrap_connector(http))
}

/// The value of a protocol version or a method a client sends, made at compile time, so
/// that the usual `MCP-Protocol-Version` and `Mcp-Method` are neither checked nor copied
/// per request; `None` for any other (which [`plain`] checks and copies). Each of these is
/// a visible ASCII token, which [`plain`] accepts as it is (tested below).
fn known(value: &str) -> Option<HeaderValue> {
    use mcp_types::{ProtocolVersion, method, tasks};
    macro_rules! known {
        ($($text:path),* $(,)?) => {
            match value {
                $($text => Some(const { HeaderValue::from_static($text) }),)*
                _ => None,
            }
        };
    }
    const V2026_07_28: &str = ProtocolVersion::V2026_07_28.as_str();
    const V2025_11_25: &str = ProtocolVersion::V2025_11_25.as_str();
    const V2025_06_18: &str = ProtocolVersion::V2025_06_18.as_str();
    const V2025_03_26: &str = ProtocolVersion::V2025_03_26.as_str();
    const V2024_11_05: &str = ProtocolVersion::V2024_11_05.as_str();
    known!(
        V2026_07_28,
        V2025_11_25,
        V2025_06_18,
        V2025_03_26,
        V2024_11_05,
        method::TOOLS_CALL,
        method::TOOLS_LIST,
        method::RESOURCES_READ,
        method::RESOURCES_LIST,
        method::RESOURCES_TEMPLATES_LIST,
        method::PROMPTS_GET,
        method::PROMPTS_LIST,
        method::COMPLETION_COMPLETE,
        method::SERVER_DISCOVER,
        method::SUBSCRIPTIONS_LISTEN,
        method::NOTIFICATIONS_CANCELLED,
        method::NOTIFICATIONS_PROGRESS,
        tasks::method::TASKS_GET,
        tasks::method::TASKS_UPDATE,
        tasks::method::TASKS_CANCEL,
    )
}

/// The values [`known`] makes, for the test that [`plain`] makes the same of each.
#[cfg(test)]
const KNOWN: [&str; 20] = [
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
    "tools/call",
    "tools/list",
    "resources/read",
    "resources/list",
    "resources/templates/list",
    "prompts/get",
    "prompts/list",
    "completion/complete",
    "server/discover",
    "subscriptions/listen",
    "notifications/cancelled",
    "notifications/progress",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
];

/// A header value that must be sent as it is (the protocol version and the method).
fn plain(name: &str, value: &str) -> Result<HeaderValue, Error> {
    let ok = !value.is_empty() && value.bytes().all(|b| b.is_ascii_graphic());
    ok.then(|| HeaderValue::from_str(value).ok())
        .flatten()
        .ok_or_else(|| Error::Header {
            name: name.to_owned(),
            reason: format!("{value:?} is not a visible ASCII token"),
        })
}

/// A header value encoded with the Base64 sentinel when it is not plain.
fn encoded(name: &str, value: &str) -> Result<HeaderValue, Error> {
    // The sentinel's output is always visible ASCII, so this cannot fail in practice.
    HeaderValue::from_str(&headers::encode_sentinel(value)).map_err(|e| Error::Header {
        name: name.to_owned(),
        reason: e.to_string(),
    })
}

/// An `Mcp-Param-*` value as text (Value Encoding, type conversion): strings as they are,
/// integers in decimal, booleans in lowercase; `None` for null, which omits the header.
fn param_text(name: &str, value: &serde_json::Value) -> Result<Option<String>, Error> {
    match value {
        serde_json::Value::Null => Ok(None),
        serde_json::Value::String(s) => Ok(Some(s.clone())),
        serde_json::Value::Bool(b) => Ok(Some(b.to_string())),
        serde_json::Value::Number(n) if n.is_i64() || n.is_u64() => Ok(Some(n.to_string())),
        other => Err(Error::Header {
            name: name.to_owned(),
            reason: format!("{other} is not a string, an integer or a boolean"),
        }),
    }
}

fn redirect(status: StatusCode, headers: &HeaderMap) -> Error {
    Error::Redirect {
        status,
        location: headers::single(headers, LOCATION)
            .ok()
            .flatten()
            .map(str::to_owned),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn client() -> HttpClient {
        HttpClient::new("http://127.0.0.1:1/mcp", HttpClientConfig::default()).unwrap()
    }

    #[test]
    fn shared_fields_come_before_the_request_s_own() {
        let mut fields = HeaderMap::new();
        fields.insert("accept", HeaderValue::from_static("application/json"));
        fields.append("x-two", HeaderValue::from_static("a"));
        fields.append("x-two", HeaderValue::from_static("b"));
        let mut own = HeaderMap::new();
        own.append("x-own", HeaderValue::from_static("1"));
        own.append("x-two", HeaderValue::from_static("c"));
        merge_fields(&mut own, &fields);
        let merged: Vec<(&str, &str)> = own
            .iter()
            .map(|(name, value)| (name.as_str(), value.to_str().unwrap()))
            .collect();
        assert_eq!(
            merged,
            [
                ("accept", "application/json"),
                ("x-two", "a"),
                ("x-two", "b"),
                ("x-two", "c"),
                ("x-own", "1"),
            ]
        );
    }

    #[test]
    fn urls() {
        for bad in ["", "not a url", "/mcp", "ftp://host/mcp", "127.0.0.1:80"] {
            let err = HttpClient::new(bad, HttpClientConfig::default()).unwrap_err();
            assert!(err.is_config(), "{bad}: {err}");
        }
        assert_eq!(
            HttpClient::new("https://example.com/mcp", HttpClientConfig::default()).is_ok(),
            cfg!(feature = "rustls")
        );
    }

    #[test]
    fn headers_are_built() {
        let config = HttpClientConfig::default()
            .header(
                http::header::AUTHORIZATION,
                HeaderValue::from_static("Bearer x"),
            )
            .header(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        let client = HttpClient::new("http://127.0.0.1:1/mcp", config.clone()).unwrap();
        let mcp = RequestHeaders::new("2026-07-28", "tools/call")
            .name("sql")
            .param("Region", "us-west1")
            .param("Greeting", "Hello, 世界")
            .param("Count", 42)
            .param("Flag", false)
            .param("Absent", serde_json::Value::Null);
        let fields = |mcp: &RequestHeaders| (*client.prepare(mcp).unwrap().fields).clone();
        let request = fields(&mcp);
        // Made again, or after other headers, the same (in the same order).
        for mcp in [
            &mcp,
            &RequestHeaders::new("2026-07-28", "tools/call").name("sql"),
        ] {
            let other = RequestHeaders::new("2025-11-25", "tools/call").name("sql");
            let first = fields(mcp);
            for between in [None, Some(&other), Some(mcp)] {
                if let Some(between) = between {
                    client.prepare(between).unwrap();
                }
                let again = fields(mcp);
                assert!(first.iter().eq(again.iter()), "{mcp:?}");
            }
        }
        for (a, b) in [
            (
                RequestHeaders::new("2026-07-28", "tools/call").name("sql"),
                RequestHeaders::new("2026-07-28", "tools/call").name("sqm"),
            ),
            (
                RequestHeaders::new("2026-07-28", "tools/call").name("sql"),
                RequestHeaders::new("2026-07-28", "tools/call"),
            ),
            (
                RequestHeaders::new("2026-07-28", "tools/call"),
                RequestHeaders::new("2026-07-28", "tools/list"),
            ),
            (
                RequestHeaders::new("2026-07-28", "tools/call"),
                RequestHeaders::new("2025-06-18", "tools/call"),
            ),
        ] {
            // After `a`, `b` is made as a new client makes it.
            let first = fields(&a);
            let second = fields(&b);
            assert!(!first.iter().eq(second.iter()), "{b:?}");
            let fresh = HttpClient::new("http://127.0.0.1:1/mcp", config.clone())
                .unwrap()
                .prepare(&b)
                .unwrap();
            assert!(fresh.fields.iter().eq(second.iter()), "{b:?}");
        }
        let got: Vec<(String, String)> = request
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_owned()))
            .collect();
        let expected = [
            ("authorization", "Bearer x"),
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "sql"),
            ("mcp-param-region", "us-west1"),
            ("mcp-param-greeting", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            ("mcp-param-count", "42"),
            ("mcp-param-flag", "false"),
        ];
        let mut got_sorted = got.clone();
        got_sorted.sort();
        let mut expected: Vec<(String, String)> = expected
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        expected.sort();
        assert_eq!(got_sorted, expected);
        // Without `Mcp-Param-*` headers the fields are made once and shared; with them,
        // each request's are its own.
        let plain = RequestHeaders::new("2026-07-28", "tools/call").name("sql");
        let (a, b) = (
            client.prepare(&plain).unwrap(),
            client.prepare(&plain).unwrap(),
        );
        assert!(Arc::ptr_eq(&a.fields, &b.fields));
        let (c, d) = (client.prepare(&mcp).unwrap(), client.prepare(&mcp).unwrap());
        assert!(!Arc::ptr_eq(&c.fields, &d.fields));
        // A request is POSTed to the endpoint with the fields, and none of its own.
        let outgoing = Outgoing::post(Bytes::from_static(b"{}"), Arc::clone(&a.fields));
        assert_eq!(outgoing.method, Method::POST);
        assert!(outgoing.headers.is_empty());
        assert!(outgoing.all_headers().iter().eq(a.fields.iter()));
    }

    #[test]
    fn known_values_are_the_checked_values() {
        for value in KNOWN {
            assert_eq!(known(value), Some(plain("x", value).unwrap()), "{value}");
        }
        for value in [
            "",
            "2026-07-29",
            "tools/cal",
            "tools/call ",
            "Tools/call",
            "x",
        ] {
            assert_eq!(known(value), None, "{value}");
        }
    }

    #[test]
    fn bad_headers_are_refused() {
        let cases = [
            RequestHeaders::new("", "tools/list"),
            RequestHeaders::new("2026-07-28", "tools list"),
            RequestHeaders::new("2026-07-28", "tools/call").param("bad name", "x"),
            RequestHeaders::new("2026-07-28", "tools/call").param("X", 1.5),
            RequestHeaders::new("2026-07-28", "tools/call").param("X", json!({"a": 1})),
        ];
        for mcp in cases {
            let err = client().prepare(&mcp).unwrap_err();
            assert!(matches!(err, Error::Header { .. }), "{mcp:?}: {err}");
        }
    }
}
