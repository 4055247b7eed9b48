//! One legacy session, whatever carries it: the handshake, the translation of each legacy
//! request into a modern one for the wrapped core and of its result back, the rounds of
//! server-to-client requests an `input_required` answer becomes, and the relay of change
//! notifications. The stdio server ([`crate::server::DualEra`]) and the HTTP server
//! ([`crate::http`]) differ only in the [`Link`] that carries what the server sends on
//! its own.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle> (initialization, version negotiation),
//! <https://modelcontextprotocol.io/specification/2025-11-25/server/resources> (subscriptions, error -32002),
//! <https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/logging> (`logging/setLevel`) and
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr> (what `input_required` asks for).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use mcp_jsonrpc::{
    CancellationToken, ErrorObject, Handler, NotificationSink, Params, Peer, Request,
    RequestContext, RequestOptions,
};
use mcp_types::{ErrorCode, RequestId};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};

pub use crate::LEGACY_VERSIONS;

/// The revisions of [`LEGACY_VERSIONS`] that `versions` names, newest first (others are
/// ignored).
pub(crate) fn legacy_versions(versions: &[&str]) -> Vec<&'static str> {
    LEGACY_VERSIONS
        .iter()
        .copied()
        .filter(|v| versions.contains(v))
        .collect()
}

/// The revision the wrapped core speaks.
pub(crate) const MODERN: &str = "2026-07-28";
pub(crate) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_INFO: &str = "io.modelcontextprotocol/clientInfo";
const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// How many `input_required` rounds one legacy request may take.
const MAX_ROUNDS: usize = 10;
pub(crate) const ALREADY_INITIALIZED: &str = "initialize was already received for this session";
/// How many change notifications may wait for the relay.
const RELAY_BUFFER: usize = 64;
/// What a legacy server may ask its client.
const SERVER_REQUESTS: [&str; 3] = ["elicitation/create", "sampling/createMessage", "roots/list"];

/// A legacy session's facts, fixed by `initialize`, and its changing state.
#[derive(Debug)]
pub(crate) struct Session {
    /// The negotiated revision (HTTP's rules depend on it; stdio's do not).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) version: &'static str,
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

/// What a shared session store keeps of a [`Session`] to rebuild it on another instance:
/// the facts `initialize` fixed.
#[cfg(feature = "session-redis")]
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Facts {
    pub(crate) version: String,
    pub(crate) capabilities: Value,
    pub(crate) client_info: Value,
}

#[cfg(feature = "session-redis")]
impl Session {
    /// The facts to store.
    pub(crate) fn facts(&self) -> Facts {
        Facts {
            version: self.version.to_owned(),
            capabilities: self.capabilities.clone(),
            client_info: self.client_info.clone(),
        }
    }

    /// A session rebuilt from stored facts; `None` when the stored version is no legacy
    /// revision this crate knows (a record it cannot trust is not served).
    pub(crate) fn restore(facts: Facts) -> Option<Session> {
        let version = LEGACY_VERSIONS
            .iter()
            .copied()
            .find(|v| *v == facts.version)?;
        Some(Session {
            version,
            capabilities: facts.capabilities,
            client_info: facts.client_info,
            log_level: Mutex::new(None),
            subscribed: Arc::default(),
            relay: Mutex::new(None),
        })
    }

    pub(crate) fn log_level(&self) -> Option<Value> {
        lock(&self.log_level).clone()
    }

    pub(crate) fn set_log_level(&self, level: Option<Value>) {
        *lock(&self.log_level) = level;
    }

    pub(crate) fn subscriptions(&self) -> Vec<String> {
        lock(&self.subscribed).iter().cloned().collect()
    }

    /// Replaces the subscribed URIs; whether they changed (the relay must then listen
    /// again).
    pub(crate) fn set_subscriptions(&self, uris: Vec<String>) -> bool {
        let uris: BTreeSet<String> = uris.into_iter().collect();
        let mut subscribed = lock(&self.subscribed);
        if *subscribed == uris {
            return false;
        }
        *subscribed = uris;
        true
    }
}

/// What carries the messages a legacy server sends on its own: server-to-client requests
/// (the answers to `input_required`) and change notifications.
pub(crate) enum Link<'a> {
    /// A duplex connection (stdio): both go on it. `None` when the handler was not
    /// served through [`crate::server::DualEra::connect`].
    Peer(Option<&'a Peer>),
    /// An HTTP session: requests go on the stream of the request that asked, and change
    /// notifications on the session's GET stream.
    #[cfg(feature = "http")]
    Http(&'a crate::http::Outbound),
}

/// Where the relay sends change notifications; owned, for the relay's task.
pub(crate) enum Notifier {
    Peer(Peer),
    #[cfg(feature = "http")]
    Http(crate::http::Notifier),
}

impl Link<'_> {
    fn notifier(&self) -> Option<Notifier> {
        match self {
            Link::Peer(peer) => peer.map(|p| Notifier::Peer(p.clone())),
            #[cfg(feature = "http")]
            Link::Http(out) => Some(Notifier::Http(out.notifier())),
        }
    }

    async fn ask(&self, method: &str, params: Option<&Value>) -> Result<Value, ErrorObject> {
        match self {
            Link::Peer(None) => Err(ErrorObject::internal(
                "input_required needs a connection to ask the client on: serve with \
                 `DualEra::connect` or `DualEra::serve_stdio`",
            )),
            Link::Peer(Some(peer)) => {
                let answer = peer
                    .request(method, params, RequestOptions::default())
                    .await
                    .map_err(|e| ErrorObject::internal(format!("{method}: {e}")))?;
                parse(&answer)
            }
            #[cfg(feature = "http")]
            Link::Http(out) => out.ask(method, params).await,
        }
    }
}

impl Notifier {
    /// Sends one notification; `false` when nobody can receive it any more.
    async fn notify(&self, method: &str, params: Option<&Value>) -> bool {
        match self {
            Notifier::Peer(peer) => peer.notify(method, params).await.is_ok(),
            #[cfg(feature = "http")]
            Notifier::Http(out) => out.notify(method, params),
        }
    }
}

/// Answers `initialize`: negotiates the version among `versions` (newest first) and
/// describes the server from the core's own `server/discover`, so nothing is declared
/// twice. Returns the new session and the result to send.
pub(crate) async fn initialize<H: Handler>(
    inner: &H,
    versions: &[&'static str],
    mut request: Request,
    cx: RequestContext,
) -> Result<(Session, Box<RawValue>), ErrorObject> {
    let params = object(request.params.as_ref())?;
    let Some(&newest) = versions.first() else {
        return Err(ErrorObject::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            "this server speaks only the 2026-07-28 revision",
        )
        .with_data(json!({"supported": [MODERN]})));
    };
    let requested = params.get("protocolVersion").and_then(Value::as_str);
    let version = requested
        .and_then(|r| versions.iter().copied().find(|v| *v == r))
        .unwrap_or(newest);

    // The server's own description, asked of it the modern way.
    "server/discover".clone_into(&mut request.method);
    request.params = Some(Params::from(raw(&json!({"_meta": {
        META_VERSION: MODERN,
        META_CAPABILITIES: {},
    }}))?));
    let discovered: Value = parse(&inner.request(request, cx).await?)?;
    let mut capabilities = params.get("capabilities").cloned().unwrap_or(json!({}));
    // What the negotiated revision does not define, the client cannot be asked for:
    // elicitation arrived in 2025-06-18 (https://modelcontextprotocol.io/specification/2025-06-18/client/elicitation).
    if version < "2025-06-18"
        && let Value::Object(capabilities) = &mut capabilities
    {
        capabilities.remove("elicitation");
    }
    let session = Session {
        version,
        capabilities,
        client_info: params.get("clientInfo").cloned().unwrap_or(Value::Null),
        log_level: Mutex::new(None),
        subscribed: Arc::default(),
        relay: Mutex::new(None),
    };
    let mut result = json!({
        "protocolVersion": version,
        "capabilities": legacy_capabilities(&discovered["capabilities"]),
        // 2026-07-28 carries it in the result's `_meta`.
        "serverInfo": discovered["_meta"][SERVER_INFO],
    });
    if let Some(instructions) = discovered.get("instructions") {
        result["instructions"] = instructions.clone();
    }
    Ok((session, raw(&result)?))
}

/// Serves one request of an initialized legacy session with the core: the session's
/// facts become the request's `_meta`, `input_required` becomes real requests on `link`,
/// and the result loses what only modern clients know.
pub(crate) async fn serve<H: Handler>(
    inner: &Arc<H>,
    session: &Session,
    request: Request,
    cx: RequestContext,
    link: &Link<'_>,
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
            let params = object(request.params.as_ref())?;
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
            relisten(inner, session, link).await;
            return raw(&json!({}));
        }
        "logging/setLevel" => {
            let params = object(request.params.as_ref())?;
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
    let mut params = object(request.params.as_ref())?;
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
        let answer =
            mcp_server::trace::in_session(session.version, inner.request(retry, cx.clone())).await;
        let result: Value = parse(&answer.map_err(|e| legacy_error(&method, &params, e))?)?;
        let Value::Object(mut result) = result else {
            return raw(&result);
        };
        match result.remove("resultType").as_ref().and_then(Value::as_str) {
            None | Some("complete") => break result,
            Some("input_required") if rounds < MAX_ROUNDS => {
                rounds += 1;
                let answers = ask(&method, &result, link).await?;
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
    // The modern core names itself in every result's `_meta`; a legacy session got that
    // from `initialize`.
    if let Some(Value::Object(meta)) = result.get_mut("_meta") {
        meta.remove(SERVER_INFO);
        if meta.is_empty() {
            result.remove("_meta");
        }
    }
    raw(&result)
}

/// Sends the legacy client each of `result`'s `inputRequests` as a real request and
/// returns the answers by key. Only the three requests a legacy server may send are
/// allowed; a failed one fails the original request, naming it.
async fn ask(
    method: &str,
    result: &Map<String, Value>,
    link: &Link<'_>,
) -> Result<Map<String, Value>, ErrorObject> {
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
        let answer = link
            .ask(asked, request.get("params"))
            .await
            .map_err(|e| ErrorObject::internal(format!("{asked} for {method}: {}", e.message)))?;
        answers.insert(key.clone(), answer);
    }
    Ok(answers)
}

/// (Re)starts the relay of change notifications to the legacy client: one
/// `subscriptions/listen` on the core, for every list and the subscribed resources, whose
/// notifications go out on `link` the legacy way (untagged; a resource update only for a
/// URI the client subscribed to). Without a link there is no relay.
///
/// Returns once the new relay is acknowledged, so a change made after a
/// `resources/subscribe` is answered is never missed; the old relay stops only then (a
/// change in between may arrive twice, never not at all).
pub(crate) async fn relisten<H: Handler>(inner: &Arc<H>, session: &Session, link: &Link<'_>) {
    let Some(notifier) = link.notifier() else {
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
    let inner = Arc::clone(inner);
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
            if !notifier.notify(&method, params.as_ref()).await {
                break;
            }
        }
        token.cancel();
    });
    // A relay that ends before its acknowledgement (a server shutting down) has nothing
    // to wait for.
    let _ = ack.await;
    if let Some(old) = lock(&session.relay).replace(token) {
        old.cancel();
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

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A modern error in the code the legacy revisions expect: an unknown resource is -32602
/// with the URI as data in 2026-07-28 and -32002 in every earlier revision
/// (<https://modelcontextprotocol.io/specification/2025-11-25/server/resources>, Error Handling).
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

/// Whether `params` carries the modern per-request `_meta` (a protocol version).
pub(crate) fn has_modern_meta(params: Option<&Params>) -> bool {
    params
        .and_then(|p| p.checked().ok())
        .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
        .is_some_and(|p| p["_meta"].get(META_VERSION).is_some())
}

fn object(params: Option<&Params>) -> Result<Map<String, Value>, ErrorObject> {
    let Some(params) = params else {
        return Ok(Map::new());
    };
    let raw = params.checked().map_err(|e| e.to_error_object())?;
    match serde_json::from_str(raw.get()) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(ErrorObject::invalid_params("params must be an object")),
    }
}

pub(crate) fn parse(raw: &RawValue) -> Result<Value, ErrorObject> {
    serde_json::from_str(raw.get()).map_err(|e| ErrorObject::internal(e.to_string()))
}

pub(crate) fn raw<T: serde::Serialize + ?Sized>(value: &T) -> Result<Box<RawValue>, ErrorObject> {
    mcp_json::to_raw_value(value).map_err(|e| ErrorObject::internal(e.to_string()))
}
