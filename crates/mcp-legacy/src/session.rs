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

use std::borrow::Cow;
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
    /// The level `logging/setLevel` set, and the `_meta` every request of the session
    /// carries to the core, written once per change of the level.
    said: Mutex<Said>,
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
        Session::new(version, facts.capabilities, facts.client_info).ok()
    }

    pub(crate) fn log_level(&self) -> Option<Value> {
        lock(&self.said).level.clone()
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

/// What a session's client said after `initialize`: its log level, and so the `_meta`
/// its requests carry.
#[derive(Debug)]
struct Said {
    /// Kept for the shared session store, which records it.
    #[cfg_attr(not(feature = "session-redis"), allow(dead_code))]
    level: Option<Value>,
    meta: Arc<RawValue>,
}

impl Session {
    fn new(
        version: &'static str,
        capabilities: Value,
        client_info: Value,
    ) -> Result<Session, ErrorObject> {
        let meta = session_meta(&capabilities, &client_info, None)?;
        Ok(Session {
            version,
            capabilities,
            client_info,
            said: Mutex::new(Said { level: None, meta }),
            subscribed: Arc::default(),
            relay: Mutex::new(None),
        })
    }

    /// The `_meta` the session's requests carry to the core.
    fn meta(&self) -> Arc<RawValue> {
        Arc::clone(&lock(&self.said).meta)
    }

    /// Sets the log level the session's requests carry. A level that cannot be written
    /// (it always can: it came from JSON) leaves the old one in place.
    pub(crate) fn set_log_level(&self, level: Option<Value>) {
        let Ok(meta) = session_meta(&self.capabilities, &self.client_info, level.as_ref()) else {
            return;
        };
        *lock(&self.said) = Said { level, meta };
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
    let client_info = params.get("clientInfo").cloned().unwrap_or(Value::Null);
    let session = Session::new(version, capabilities, client_info)?;
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
            session.set_log_level(Some(level));
            return raw(&json!({}));
        }
        _ => {}
    }
    // One handler body serves both eras: an `input_required` answer becomes real
    // server-to-client requests, and the request is run again with the answers in
    // `inputResponses` and the handler's `requestState` echoed.
    let Request {
        id, method, params, ..
    } = request;
    let session_meta = session.meta();
    // The params as the core reads them, for the rounds after the first.
    let mut modern: Option<Map<String, Value>> = None;
    let first = match spliced(&session_meta, params.as_ref()) {
        Some(first) => first,
        None => raw(modern.insert(with_meta(session, params.as_ref())?))?,
    };
    let mut rounds = 0;
    let mut sent = first;
    loop {
        let retry = Request::new(id.clone(), method.clone(), Some(sent));
        // Pinned where it is made: by value, the handler's future would be copied twice.
        let request = std::pin::pin!(inner.request(retry, cx.clone()));
        let (answer, shaped) = mcp_server::trace::in_session_shaped(session.version, request).await;
        let answer = answer.map_err(|e| legacy_error(&method, params.as_ref(), e))?;
        // A page the core keeps written for the initialize era is sent as it is.
        if shaped {
            return Ok(answer);
        }
        if let Some(done) = completed(&answer) {
            return done;
        }
        let result: Value = parse(&answer)?;
        let Value::Object(mut result) = result else {
            return raw(&result);
        };
        match result.remove("resultType").as_ref().and_then(Value::as_str) {
            None | Some("complete") => return raw(&legacy_result(result)),
            Some("input_required") if rounds < MAX_ROUNDS => {
                rounds += 1;
                let answers = ask(&method, &result, link).await?;
                let modern = match &mut modern {
                    Some(modern) => modern,
                    None => modern.insert(with_meta(session, params.as_ref())?),
                };
                modern.insert("inputResponses".to_owned(), Value::Object(answers));
                match result.remove("requestState") {
                    Some(state) => modern.insert("requestState".to_owned(), state),
                    None => modern.remove("requestState"),
                };
                sent = raw(modern)?;
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
    }
}

/// The `_meta` of a session's requests: the modern revision, and what the client said in
/// `initialize` and after.
fn session_meta(
    capabilities: &Value,
    client_info: &Value,
    level: Option<&Value>,
) -> Result<Arc<RawValue>, ErrorObject> {
    let mut meta = Map::new();
    meta.insert(META_VERSION.to_owned(), json!(MODERN));
    meta.insert(META_CAPABILITIES.to_owned(), capabilities.clone());
    if !client_info.is_null() {
        meta.insert(META_INFO.to_owned(), client_info.clone());
    }
    if let Some(level) = level {
        meta.insert(META_LOG_LEVEL.to_owned(), level.clone());
    }
    Ok(Arc::from(raw(&meta)?))
}

/// A legacy request's params with the session's `_meta`, read into a map: the general
/// way, for what [`spliced`] does not take and for the rounds of `input_required`. The
/// session's members replace the client's own of the same names.
fn with_meta(
    session: &Session,
    params: Option<&Params>,
) -> Result<Map<String, Value>, ErrorObject> {
    let mut params = object(params)?;
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(meta) = meta else {
        return Err(ErrorObject::invalid_params("`_meta` must be an object"));
    };
    let Value::Object(ours) = parse(&session.meta())? else {
        return Err(ErrorObject::internal("a session's `_meta` is an object"));
    };
    meta.extend(ours);
    Ok(params)
}

/// A JSON object's members as they are written: each value's text, unread. Keys with
/// escapes do not borrow, and so do not read: the caller then takes the general way.
#[derive(Default)]
struct Members<'a>(Vec<(&'a str, &'a RawValue)>);

impl<'a> Members<'a> {
    fn read(text: &'a str) -> Option<Self> {
        serde_json::from_str(text).ok()
    }

    fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    fn without(mut self, keys: &[&str]) -> Self {
        self.0.retain(|(k, _)| !keys.contains(k));
        self
    }
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for Members<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(4));
                while let Some(member) = map.next_entry::<&'de str, &'de RawValue>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Visit(std::marker::PhantomData))
    }
}

impl serde::Serialize for Members<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// A legacy request's params with the session's `_meta` first, written from the
/// members' text without reading their values: the core reads a `_meta` it has seen
/// before without reading it again, and the rest of a call once. The client's own
/// `_meta` members (a progress token) stay beside the session's, which replace any of
/// the same names, as [`with_meta`] does. `None` for params this does not take (not an
/// object, keys with escapes): [`with_meta`] then reads them, or says what is wrong.
fn spliced(session_meta: &RawValue, params: Option<&Params>) -> Option<Box<RawValue>> {
    if let Some(prefixed) = prefixed(session_meta, params) {
        return Some(prefixed);
    }
    let members = match params {
        Some(params) => Members::read(params.text())?,
        None => Members::default(),
    };
    if members.0.iter().filter(|(k, _)| *k == "_meta").count() > 1 {
        return None;
    }
    let meta = match members.get("_meta") {
        None => Cow::Borrowed(session_meta),
        Some(theirs) => {
            let ours = Members::read(session_meta.get())?;
            let mut merged = Members::read(theirs.get())?;
            merged.0.retain(|(k, _)| ours.get(k).is_none());
            merged.0.extend(ours.0);
            Cow::Owned(mcp_json::to_raw_value(&merged).ok()?)
        }
    };
    let mut all = Members(Vec::with_capacity(members.0.len() + 1));
    all.0.push(("_meta", &meta));
    all.0.extend(members.without(&["_meta"]).0);
    mcp_json::to_raw_value(&all).ok()
}

/// [`spliced`] for what most clients send, params without a `_meta` of their own, written
/// without reading the params at all: the session's `_meta`, then the client's members as
/// they are. Taken only when `_meta` appears nowhere in the text and it has no `\u` escape
/// (with which a key could spell `_meta` without those letters), so no member the core
/// would read as a second `_meta` can be there; `None` otherwise.
fn prefixed(session_meta: &RawValue, params: Option<&Params>) -> Option<Box<RawValue>> {
    let no_members = || mcp_json::to_raw_object_led_by("_meta", session_meta, &Map::new()).ok();
    let Some(params) = params else {
        return no_members();
    };
    let text = params.text();
    let members = text.strip_prefix('{')?;
    if text.contains("_meta") || text.contains("\\u") {
        return None;
    }
    if members
        .trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with('}')
    {
        return no_members();
    }
    let params = params.checked().ok()?;
    mcp_json::to_raw_object_led_by("_meta", session_meta, &*params).ok()
}

/// What only modern clients know, taken from a complete result: its `resultType`, cache
/// hints, and the server's name in `_meta` (a legacy session got it from `initialize`).
const MODERN_ONLY: [&str; 3] = ["resultType", "ttlMs", "cacheScope"];

/// A complete result for a legacy client, written from the members' text without reading
/// their values: `None` when it is not plainly complete (`input_required`, another type,
/// a `resultType` not written as the core writes it) or does not read this way; the
/// caller then reads it whole.
fn completed(answer: &RawValue) -> Option<Result<Box<RawValue>, ErrorObject>> {
    let members = Members::read(answer.get())?;
    if let Some(kind) = members.get("resultType")
        && kind.get() != r#""complete""#
    {
        return None;
    }
    let meta = match members.get("_meta") {
        None => None,
        Some(meta) => {
            let meta = Members::read(meta.get())?.without(&[SERVER_INFO]);
            if meta.0.is_empty() {
                None
            } else {
                Some(mcp_json::to_raw_value(&meta).ok()?)
            }
        }
    };
    let mut out = members.without(&MODERN_ONLY).without(&["_meta"]);
    if let Some(meta) = &meta {
        out.0.push(("_meta", meta));
    }
    Some(raw(&out))
}

/// A complete result, read whole, for a legacy client (as [`completed`] does).
fn legacy_result(mut result: Map<String, Value>) -> Map<String, Value> {
    for key in MODERN_ONLY {
        result.remove(key);
    }
    if let Some(Value::Object(meta)) = result.get_mut("_meta") {
        meta.remove(SERVER_INFO);
        if meta.is_empty() {
            result.remove("_meta");
        }
    }
    result
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
fn legacy_error(method: &str, params: Option<&Params>, error: ErrorObject) -> ErrorObject {
    let unknown_resource = method == "resources/read"
        && error.code == ErrorCode::INVALID_PARAMS
        && error
            .data
            .as_ref()
            .and_then(|d| d.get("uri"))
            .is_some_and(|uri| object(params).is_ok_and(|p| p.get("uri") == Some(uri)));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn session(level: Option<Value>) -> Session {
        let session = Session::new(
            "2025-11-25",
            json!({"elicitation": {}}),
            json!({"name": "c", "version": "1"}),
        )
        .unwrap();
        session.set_log_level(level);
        session
    }

    fn params(text: &str) -> Params {
        Params::from(RawValue::from_string(text.to_owned()).unwrap())
    }

    /// The params both ways, read back: the same map, and `_meta` first in the written one.
    fn both(session: &Session, text: Option<&str>) -> (Option<Value>, Result<Value, String>) {
        let params = text.map(params);
        let fast = spliced(&session.meta(), params.as_ref()).map(|raw| {
            assert!(raw.get().starts_with(r#"{"_meta":{"#), "{}", raw.get());
            parse(&raw).unwrap()
        });
        let general = with_meta(session, params.as_ref())
            .map(Value::Object)
            .map_err(|e| e.message);
        (fast, general)
    }

    #[test]
    fn spliced_params_are_what_the_general_way_reads() {
        let session = session(Some(json!("debug")));
        for text in [
            None,
            Some("{}"),
            Some(r#"{"name":"echo","arguments":{"text":"hi"}}"#),
            Some(r#"{"_meta":{"progressToken":7},"name":"steps"}"#),
            // The client's own value for a member the session sets loses.
            Some(
                r#"{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01","k":[1,{"a":null}]}}"#,
            ),
            Some(r#"{"uri":"file:///a b","cursor":"c"}"#),
            Some(r#" { "name" : "spaced" , "arguments" : { } } "#),
            Some("{ \n}"),
            Some(r#"{ "name" : "spaced" , "arguments" : { } }"#),
            Some(r#"{"name":"x","arguments":{"_meta":{"a":1}}}"#),
            Some(r#"{"name":"\u0078","arguments":{"t":"\u005fmeta"}}"#),
        ] {
            let (fast, general) = both(&session, text);
            let fast = fast.unwrap_or_else(|| panic!("{text:?} was not spliced"));
            assert_eq!(Ok(fast), general, "{text:?}");
        }
    }

    #[test]
    fn params_without_meta_are_prefixed_as_they_are() {
        let meta = RawValue::from_string(r#"{"v":1}"#.to_owned()).unwrap();
        let prefixed = |text: Option<&str>| {
            prefixed(&meta, text.map(params).as_ref()).map(|raw| raw.get().to_owned())
        };
        assert_eq!(prefixed(None).as_deref(), Some(r#"{"_meta":{"v":1}}"#));
        assert_eq!(
            prefixed(Some("{ }")).as_deref(),
            Some(r#"{"_meta":{"v":1}}"#)
        );
        assert_eq!(
            prefixed(Some(r#"{ "name":"x", "n":[1]}"#)).as_deref(),
            Some(r#"{"_meta":{"v":1}, "name":"x", "n":[1]}"#)
        );
        // Where a second `_meta` could be, or the params are no object: the members are
        // read.
        for text in [
            r#"{"_meta":{"progressToken":1},"name":"x"}"#,
            r#"{"name":"x","arguments":{"_meta":1}}"#,
            r#"{"\u005fmeta":{},"name":"x"}"#,
            r#"{"name":"\u0078"}"#,
            "[1]",
        ] {
            assert_eq!(prefixed(Some(text)), None, "{text}");
        }
    }

    #[test]
    fn what_is_not_spliced_is_read_the_general_way() {
        let session = session(None);
        for (text, error) in [
            ("[1,2]", Some("params must be an object")),
            ("7", Some("params must be an object")),
            (r#"{"_meta":5}"#, Some("`_meta` must be an object")),
            (r#"{"_meta":[]}"#, Some("`_meta` must be an object")),
            // A key with an escape does not borrow; the general way reads it.
            (r#"{"na\u006de":"echo"}"#, None),
            (r#"{"_meta":{},"_meta":{"progressToken":1}}"#, None),
        ] {
            let (fast, general) = both(&session, Some(text));
            assert_eq!(fast, None, "{text}");
            assert_eq!(general.err().as_deref(), error, "{text}");
        }
        let (_, escaped) = both(&session, Some(r#"{"na\u006de":"echo"}"#));
        assert_eq!(escaped.unwrap()["name"], "echo");
    }

    #[test]
    fn the_session_meta_follows_the_log_level() {
        let session = session(None);
        let before = parse(&session.meta()).unwrap();
        assert_eq!(before[META_VERSION], MODERN);
        assert_eq!(before[META_CAPABILITIES], json!({"elicitation": {}}));
        assert_eq!(before[META_INFO]["name"], "c");
        assert!(before.get(META_LOG_LEVEL).is_none());
        session.set_log_level(Some(json!("error")));
        assert_eq!(parse(&session.meta()).unwrap()[META_LOG_LEVEL], "error");
        let anonymous = Session::new("2025-06-18", json!({}), Value::Null).unwrap();
        assert!(parse(&anonymous.meta()).unwrap().get(META_INFO).is_none());
    }

    #[test]
    fn complete_results_lose_what_only_modern_clients_know_either_way() {
        for text in [
            r#"{"content":[{"type":"text","text":"hi"}],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}"#,
            r#"{"tools":[],"ttlMs":5,"cacheScope":"shared","_meta":{"io.modelcontextprotocol/serverInfo":{},"trace":"t"},"nextCursor":"n"}"#,
            r#"{"content":[],"isError":true}"#,
            "{}",
            r#"{ "resultType" : "complete" , "content" : [ ] }"#,
        ] {
            let answer = RawValue::from_string(text.to_owned()).unwrap();
            let fast = parse(&completed(&answer).unwrap().unwrap()).unwrap();
            let Value::Object(whole) = parse(&answer).unwrap() else {
                unreachable!()
            };
            let mut general = legacy_result(whole);
            general.remove("resultType");
            assert_eq!(fast, Value::Object(general), "{text}");
            for key in MODERN_ONLY {
                assert!(fast.get(key).is_none(), "{text}");
            }
            assert!(fast["_meta"].get(SERVER_INFO).is_none(), "{text}");
        }
    }

    #[test]
    fn results_that_are_not_plainly_complete_are_read_whole() {
        for text in [
            r#"{"resultType":"input_required","inputRequests":{}}"#,
            r#"{"resultType":"somethingElse"}"#,
            r#"{"resultType":"compl\u0065te"}"#,
            r#"{"\u0072esultType":"input_required"}"#,
            r#"{"_meta":7}"#,
            "[]",
            r#""text""#,
        ] {
            let answer = RawValue::from_string(text.to_owned()).unwrap();
            assert!(completed(&answer).is_none(), "{text}");
        }
    }
}
