//! The dual-era server over one connection (stdio, or any transport the engine accepts):
//! [`DualEra`] wraps a modern handler (an `mcp_server::Server`) and lets the first message
//! choose the era, as `docs/2026-07-28/basic/transports/stdio.mdx` (Backward
//! Compatibility) and `docs/2026-07-28/basic/versioning.mdx` say.
//!
//! - `initialize` first: the connection is a legacy session for its whole life. The
//!   version is negotiated among the enabled legacy revisions
//!   (`docs/2025-11-25/basic/lifecycle.mdx`); capabilities, server info and instructions
//!   come from the wrapped server's own `server/discover`, so nothing is declared twice.
//!   Every later request is handed to the same handler with the session's facts as its
//!   `_meta` (protocol version 2026-07-28 for the core, the client's capabilities, its
//!   info and the level set by `logging/setLevel`); `resultType`, `ttlMs` and
//!   `cacheScope` are removed from results, and an unknown resource is -32002 again. `ping`
//!   is answered here.
//! - A request carrying modern `_meta` first: the connection is modern and every message
//!   passes through untouched.
//! - Anything else before `initialize` gets an error (-32600), never an exit.
//!
//! - A handler's `input_required` answer becomes real server-to-client requests
//!   (`elicitation/create`, `sampling/createMessage`, `roots/list`) on the connection
//!   (serve with [`DualEra::connect`] or [`DualEra::serve_stdio`]); the request is then
//!   run again with the answers as `inputResponses` and `requestState` echoed, up to ten
//!   rounds, so one handler body serves both eras.
//!
//! - Changes reach a legacy session the legacy way: `listChanged` and `subscribe` are
//!   offered, `resources/subscribe` and `unsubscribe` are answered here, and a relay of one
//!   `subscriptions/listen` on the core sends `notifications/*/list_changed` and, for the
//!   subscribed URIs only, `notifications/resources/updated`, untagged, on the connection.
//!
//! Not yet here (issue #6): the HTTP side (sessions, the GET stream, resumption).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use mcp_jsonrpc::{
    CancellationToken, Connection, ErrorObject, FrameReader, FrameWriter, Handler, Notification,
    NotificationSink, Peer, PeerConfig, Request, RequestContext, RequestOptions,
};
use mcp_types::ErrorCode;
use mcp_types::RequestId;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};

/// The initialize-era revisions, newest first.
pub const LEGACY_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The revision the wrapped core speaks.
const MODERN: &str = "2026-07-28";
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_INFO: &str = "io.modelcontextprotocol/clientInfo";
const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// How many `input_required` rounds one legacy request may take.
const MAX_ROUNDS: usize = 10;
/// What a legacy server may ask its client.
const ALREADY_INITIALIZED: &str = "initialize was already received on this connection";
/// How many change notifications may wait for the connection.
const RELAY_BUFFER: usize = 64;
const SERVER_REQUESTS: [&str; 3] = ["elicitation/create", "sampling/createMessage", "roots/list"];

/// What the first message decided.
#[derive(Debug)]
enum Era {
    Modern,
    Legacy(Box<Session>),
}

/// A legacy session's facts, fixed by `initialize`.
#[derive(Debug)]
struct Session {
    capabilities: Value,
    client_info: Value,
    log_level: Mutex<Option<Value>>,
    /// The URIs the client subscribed to with `resources/subscribe`.
    subscribed: Arc<Mutex<BTreeSet<String>>>,
    /// Stops the running relay of the core's `subscriptions/listen`.
    relay: Mutex<Option<CancellationToken>>,
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(relay) = lock(&self.relay).take() {
            relay.cancel();
        }
    }
}

/// A handler serving both eras on one connection; see the [module docs](self).
///
/// ```
/// use mcp_legacy::server::DualEra;
/// use mcp_server::Server;
///
/// let server = Server::builder("demo", "1.0.0").build().unwrap();
/// let handler = DualEra::new(server);
/// assert_eq!(handler.legacy_versions()[0], "2025-11-25");
/// ```
#[derive(Debug)]
pub struct DualEra<H> {
    inner: Arc<H>,
    era: OnceLock<Era>,
    versions: Vec<&'static str>,
    /// The connection's peer, for server-to-client requests; set by [`DualEra::connect`].
    peer: Arc<OnceLock<Peer>>,
}

impl<H: Handler> DualEra<H> {
    /// Wraps `inner`, enabling every legacy revision.
    pub fn new(inner: H) -> Self {
        DualEra {
            inner: Arc::new(inner),
            era: OnceLock::new(),
            versions: LEGACY_VERSIONS.to_vec(),
            peer: Arc::default(),
        }
    }

    /// Enables only `versions` (each one of [`LEGACY_VERSIONS`]; others are ignored).
    /// With none enabled, `initialize` is refused with the versions the server supports.
    #[must_use]
    pub fn with_legacy_versions(mut self, versions: &[&str]) -> Self {
        self.versions = LEGACY_VERSIONS
            .iter()
            .copied()
            .filter(|v| versions.contains(v))
            .collect();
        self
    }

    /// The enabled legacy revisions, newest first.
    pub fn legacy_versions(&self) -> &[&'static str] {
        &self.versions
    }

    /// Serves one connection over `reader` and `writer`, keeping its peer so that a
    /// legacy session can be sent server-to-client requests.
    pub fn connect<R: FrameReader, W: FrameWriter>(
        self,
        reader: R,
        writer: W,
        config: PeerConfig,
    ) -> (Peer, Connection) {
        let slot = Arc::clone(&self.peer);
        let (peer, connection) = Peer::connect(reader, writer, self, config);
        let _ = slot.set(peer.clone());
        (peer, connection)
    }

    /// Serves both eras on this process's stdin and stdout until the client closes stdin
    /// (`docs/2026-07-28/basic/transports/stdio.mdx`).
    #[cfg(feature = "stdio")]
    pub async fn serve_stdio(self) {
        let (reader, writer) = mcp_transport_stdio::stdio();
        let (_peer, connection) = self.connect(reader, writer, PeerConfig::default());
        connection.closed().await;
    }

    async fn initialize(
        &self,
        mut request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let params = object(request.params.as_deref())?;
        let Some(&newest) = self.versions.first() else {
            return Err(ErrorObject::new(
                ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                "this server speaks only the 2026-07-28 revision",
            )
            .with_data(json!({"supported": [MODERN]})));
        };
        let requested = params.get("protocolVersion").and_then(Value::as_str);
        let version = requested
            .and_then(|r| self.versions.iter().copied().find(|v| *v == r))
            .unwrap_or(newest);

        // The server's own description, asked of it the modern way.
        "server/discover".clone_into(&mut request.method);
        request.params = Some(raw(&json!({"_meta": {
            META_VERSION: MODERN,
            META_CAPABILITIES: {},
        }}))?);
        let discovered: Value = parse(&self.inner.request(request, cx).await?)?;
        let session = Session {
            capabilities: params.get("capabilities").cloned().unwrap_or(json!({})),
            client_info: params.get("clientInfo").cloned().unwrap_or(Value::Null),
            log_level: Mutex::new(None),
            subscribed: Arc::default(),
            relay: Mutex::new(None),
        };
        if self.era.set(Era::Legacy(Box::new(session))).is_err() {
            return Err(ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                ALREADY_INITIALIZED,
            ));
        }
        if let Some(Era::Legacy(session)) = self.era.get() {
            self.relisten(session).await;
        }
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": legacy_capabilities(&discovered["capabilities"]),
            // 2026-07-28 carries it in the result's `_meta`.
            "serverInfo": discovered["_meta"][SERVER_INFO],
        });
        if let Some(instructions) = discovered.get("instructions") {
            result["instructions"] = instructions.clone();
        }
        raw(&result)
    }

    async fn legacy(
        &self,
        session: &Session,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        match request.method.as_str() {
            "initialize" => {
                return Err(ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    ALREADY_INITIALIZED,
                ));
            }
            "ping" => return raw(&json!({})),
            "resources/subscribe" | "resources/unsubscribe" => {
                let params = object(request.params.as_deref())?;
                let uri = params
                    .get("uri")
                    .and_then(Value::as_str)
                    .ok_or_else(|| ErrorObject::invalid_params("`uri` must be a string"))?;
                {
                    let mut subscribed = lock(&session.subscribed);
                    if request.method == "resources/subscribe" {
                        subscribed.insert(uri.to_owned());
                    } else {
                        subscribed.remove(uri);
                    }
                }
                self.relisten(session).await;
                return raw(&json!({}));
            }
            "logging/setLevel" => {
                let params = object(request.params.as_deref())?;
                let level = params
                    .get("level")
                    .filter(|l| l.is_string())
                    .cloned()
                    .ok_or_else(|| ErrorObject::invalid_params("`level` must be a string"))?;
                *lock(&session.log_level) = Some(level);
                return raw(&json!({}));
            }
            _ => {}
        }
        let mut params = object(request.params.as_deref())?;
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(meta) = meta else {
            return Err(ErrorObject::invalid_params("`_meta` must be an object"));
        };
        meta.insert(META_VERSION.to_owned(), json!(MODERN));
        meta.insert(META_CAPABILITIES.to_owned(), session.capabilities.clone());
        if !session.client_info.is_null() {
            meta.insert(META_INFO.to_owned(), session.client_info.clone());
        }
        if let Some(level) = lock(&session.log_level).clone() {
            meta.insert(META_LOG_LEVEL.to_owned(), level);
        }
        // One handler body serves both eras: an `input_required` answer becomes real
        // server-to-client requests, and the request is run again with the answers in
        // `inputResponses` and the handler's `requestState` echoed.
        let Request { id, method, .. } = request;
        let mut rounds = 0;
        let mut result = loop {
            let retry = Request::new(id.clone(), method.clone(), Some(raw(&params)?));
            let answer = self.inner.request(retry, cx.clone()).await;
            let result: Value = parse(&answer.map_err(|e| legacy_error(&method, &params, e))?)?;
            let Value::Object(mut result) = result else {
                return raw(&result);
            };
            match result.remove("resultType").as_ref().and_then(Value::as_str) {
                None | Some("complete") => break result,
                Some("input_required") if rounds < MAX_ROUNDS => {
                    rounds += 1;
                    let answers = self.ask(&method, &result).await?;
                    params.insert("inputResponses".to_owned(), Value::Object(answers));
                    match result.remove("requestState") {
                        Some(state) => params.insert("requestState".to_owned(), state),
                        None => params.remove("requestState"),
                    };
                }
                Some("input_required") => {
                    return Err(ErrorObject::internal(format!(
                        "{method} still needed input after {MAX_ROUNDS} rounds"
                    )));
                }
                Some(other) => {
                    return Err(ErrorObject::internal(format!(
                        "{method} answered the unknown result type `{other}`"
                    )));
                }
            }
        };
        result.remove("ttlMs");
        result.remove("cacheScope");
        // The modern core names itself in every result's `_meta`; a legacy session got
        // that from `initialize`.
        if let Some(Value::Object(meta)) = result.get_mut("_meta") {
            meta.remove(SERVER_INFO);
            if meta.is_empty() {
                result.remove("_meta");
            }
        }
        raw(&result)
    }

    /// (Re)starts the relay of change notifications to the legacy client: one
    /// `subscriptions/listen` on the core, for every list and the subscribed resources,
    /// whose notifications go out on the connection the legacy way (untagged; a resource
    /// update only for a URI the client subscribed to). Without a peer there is no relay.
    ///
    /// Returns once the new relay is acknowledged, so a change made after a
    /// `resources/subscribe` is answered is never missed; the old relay stops only then
    /// (a change in between may arrive twice, never not at all).
    async fn relisten(&self, session: &Session) {
        let Some(peer) = self.peer.get().cloned() else {
            return;
        };
        let token = CancellationToken::new();
        let uris: Vec<String> = lock(&session.subscribed).iter().cloned().collect();
        let params = json!({
            "_meta": {META_VERSION: MODERN, META_CAPABILITIES: session.capabilities},
            "notifications": {
                "toolsListChanged": true,
                "promptsListChanged": true,
                "resourcesListChanged": true,
                "resourceSubscriptions": uris,
            }
        });
        let Ok(params) = raw(&params) else { return };
        let (tx, mut rx) = mpsc::channel(RELAY_BUFFER);
        let cx = RequestContext::new(
            RequestId::from("mcp-legacy/relay"),
            token.clone(),
            NotificationSink::channel(tx),
        );
        let listen = Request::new(cx.id().clone(), "subscriptions/listen", Some(params));
        let inner = Arc::clone(&self.inner);
        let subscribed = Arc::clone(&session.subscribed);
        let (acknowledged, ack) = oneshot::channel();
        let relay = token.clone();
        tokio::spawn(async move {
            let token = relay;
            let run = inner.request(listen, cx);
            let mut run = std::pin::pin!(run);
            let mut acknowledged = Some(acknowledged);
            loop {
                let frame = tokio::select! {
                    _ = &mut run => break,
                    () = token.cancelled() => break,
                    frame = rx.recv() => frame,
                };
                let Some(frame) = frame else { break };
                let Some((method, params)) = legacy_notification(&frame, &subscribed) else {
                    // The acknowledgement: the core now follows every change.
                    if let Some(acknowledged) = acknowledged.take() {
                        let _ = acknowledged.send(());
                    }
                    continue;
                };
                if peer.notify(&method, params.as_ref()).await.is_err() {
                    break;
                }
            }
            token.cancel();
        });
        // A relay that ends before its acknowledgement (a server shutting down) has
        // nothing to wait for.
        let _ = ack.await;
        if let Some(old) = lock(&session.relay).replace(token) {
            old.cancel();
        }
    }

    /// Sends the legacy client each of `result`'s `inputRequests` as a real request and
    /// returns the answers by key. Only the three requests a legacy server may send are
    /// allowed; a failed one fails the original request, naming it.
    async fn ask(
        &self,
        method: &str,
        result: &Map<String, Value>,
    ) -> Result<Map<String, Value>, ErrorObject> {
        let peer = self.peer.get().ok_or_else(|| {
            ErrorObject::internal(
                "input_required needs a connection to ask the client on: serve with \
                 `DualEra::connect` or `DualEra::serve_stdio`",
            )
        })?;
        let Some(Value::Object(requests)) = result.get("inputRequests") else {
            return Ok(Map::new());
        };
        let mut answers = Map::new();
        for (key, request) in requests {
            let asked = request["method"].as_str().unwrap_or_default();
            if !SERVER_REQUESTS.contains(&asked) {
                return Err(ErrorObject::internal(format!(
                    "{method} asked for `{asked}`, which a legacy client cannot be sent"
                )));
            }
            let answer = peer
                .request(asked, request.get("params"), RequestOptions::default())
                .await
                .map_err(|e| ErrorObject::internal(format!("{asked} for {method}: {e}")))?;
            answers.insert(key.clone(), parse(&answer)?);
        }
        Ok(answers)
    }
}

impl<H: Handler> Handler for DualEra<H> {
    async fn request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        match self.era.get() {
            Some(Era::Legacy(session)) => self.legacy(session, request, cx).await,
            Some(Era::Modern) => self.inner.request(request, cx).await,
            None if request.method == "initialize" => self.initialize(request, cx).await,
            None if has_modern_meta(request.params.as_deref()) => {
                // A lost race with a concurrent `initialize` leaves that era in place.
                let _ = self.era.set(Era::Modern);
                match self.era.get() {
                    Some(Era::Legacy(session)) => self.legacy(session, request, cx).await,
                    _ => self.inner.request(request, cx).await,
                }
            }
            None => Err(ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "{} before initialize: send initialize first, or use 2026-07-28 `_meta`",
                    request.method
                ),
            )),
        }
    }

    fn notification(&self, notification: Notification, peer: &Peer) {
        match (self.era.get(), notification.method.as_str()) {
            // The handshake's last step; nothing to do for a connection-scoped session.
            (Some(Era::Legacy(_)), "notifications/initialized") => {}
            _ => self.inner.notification(notification, peer),
        }
    }
}

/// A change notification of the core as a legacy client expects it: without the
/// subscription tag, and a resource update only for a URI it subscribed to. `None` for
/// what is not passed on (the acknowledgement).
fn legacy_notification(
    frame: &[u8],
    subscribed: &Mutex<BTreeSet<String>>,
) -> Option<(String, Option<Value>)> {
    let mut message: Value = serde_json::from_slice(frame).ok()?;
    let method = message.get("method")?.as_str()?.to_owned();
    if method == "notifications/subscriptions/acknowledged" {
        return None;
    }
    let mut params = message
        .get_mut("params")
        .map(Value::take)
        .unwrap_or(json!({}));
    if method == "notifications/resources/updated" {
        let uri = params.get("uri")?.as_str()?;
        if !lock(subscribed).contains(uri) {
            return None;
        }
    }
    if let Some(Value::Object(meta)) = params.get_mut("_meta") {
        meta.remove("io.modelcontextprotocol/subscriptionId");
        if meta.is_empty()
            && let Value::Object(params) = &mut params
        {
            params.remove("_meta");
        }
    }
    // A list change carries nothing else: no params at all.
    let empty = params.as_object().is_some_and(Map::is_empty);
    Some((method, (!empty).then_some(params)))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A modern error in the code the legacy revisions expect: an unknown resource is -32602
/// with the URI as data in 2026-07-28 and -32002 in every earlier revision
/// (`docs/2025-11-25/server/resources.mdx`, Error Handling).
fn legacy_error(method: &str, params: &Map<String, Value>, error: ErrorObject) -> ErrorObject {
    let unknown_resource = method == "resources/read"
        && error.code == ErrorCode::INVALID_PARAMS
        && error
            .data
            .as_ref()
            .and_then(|d| d.get("uri"))
            .is_some_and(|uri| Some(uri) == params.get("uri"));
    if unknown_resource {
        let data = error.data;
        let mut legacy = ErrorObject::new(ErrorCode::RESOURCE_NOT_FOUND, "Resource not found");
        legacy.data = data;
        return legacy;
    }
    error
}

/// The capabilities a legacy client understands, from the modern ones: the modern-only
/// `extensions` go, and list changes and resource subscriptions are offered for what the
/// server has (the relay of `subscriptions/listen` delivers them).
fn legacy_capabilities(modern: &Value) -> Value {
    let mut out = Map::new();
    for key in [
        "tools",
        "resources",
        "prompts",
        "logging",
        "completions",
        "experimental",
    ] {
        if let Some(Value::Object(entry)) = modern.get(key) {
            let mut entry = entry.clone();
            if matches!(key, "tools" | "prompts" | "resources") {
                entry.insert("listChanged".to_owned(), Value::Bool(true));
            }
            if key == "resources" {
                entry.insert("subscribe".to_owned(), Value::Bool(true));
            }
            out.insert(key.to_owned(), Value::Object(entry));
        }
    }
    Value::Object(out)
}

fn has_modern_meta(params: Option<&RawValue>) -> bool {
    params
        .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
        .is_some_and(|p| p["_meta"].get(META_VERSION).is_some())
}

fn object(params: Option<&RawValue>) -> Result<Map<String, Value>, ErrorObject> {
    match params {
        None => Ok(Map::new()),
        Some(raw) => match serde_json::from_str(raw.get()) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(ErrorObject::invalid_params("params must be an object")),
        },
    }
}

fn parse(raw: &RawValue) -> Result<Value, ErrorObject> {
    serde_json::from_str(raw.get()).map_err(|e| ErrorObject::internal(e.to_string()))
}

fn raw<T: serde::Serialize + ?Sized>(value: &T) -> Result<Box<RawValue>, ErrorObject> {
    serde_json::value::to_raw_value(value).map_err(|e| ErrorObject::internal(e.to_string()))
}
