//! A legacy session behind the modern client API: the translation both legacy transports
//! share.
//!
//! - Requests: the client core builds every request for 2026-07-28; here the modern
//!   `_meta` keys (`io.modelcontextprotocol/…`) are stripped and everything else (the
//!   progress token, the arguments) is kept. `server/discover` is answered from the
//!   `initialize` result; a `logLevel` becomes `logging/setLevel` when it changes.
//! - Results gain `resultType: "complete"` (replacing any a legacy server sends).
//! - Server requests (`elicitation/create`, `sampling/createMessage`, `roots/list`,
//!   `ping`) are answered with the user's handlers ([`InputHandlers`]), the same ones the
//!   modern MRTR loop uses.
//! - Log messages (`notifications/message`) reach the user's log callback and channel
//!   (`ClientBuilder::on_log`, `log_channel`).
//! - Change notifications reach every open `listen` whose filter asked for them; a
//!   filter's `resourceSubscriptions` become `resources/subscribe` (and
//!   `resources/unsubscribe` when the subscription ends).

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_client::{EventSink, InputHandlers, ListenEvent};
use mcp_jsonrpc::{ErrorObject, RequestOptions};
use mcp_types::{ErrorCode, InputRequest, SubscriptionFilter, legacy, method};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

/// How many `listen` subscriptions one legacy session carries at once.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 64;
/// The prefix of the modern `_meta` keys a legacy server must not see.
const MODERN_META: &str = "io.modelcontextprotocol/";
const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// What `initialize` fixed for the session.
#[derive(Debug, Clone)]
pub(crate) struct Handshake {
    /// The negotiated legacy revision.
    pub(crate) version: String,
    /// The server's `InitializeResult`, as sent.
    pub(crate) result: Value,
}

impl Handshake {
    fn capability(&self, pointer: &str) -> Option<&Value> {
        self.result
            .get("capabilities")
            .and_then(|c| c.pointer(pointer))
    }

    /// A `DiscoverResult` made of the `initialize` result.
    pub(crate) fn discover(&self) -> Value {
        let mut result = Map::new();
        result.insert("supportedVersions".into(), json!([self.version]));
        for key in ["capabilities", "instructions"] {
            if let Some(value) = self.result.get(key) {
                result.insert(key.into(), value.clone());
            }
        }
        // The modern place of the server's identity is the result's `_meta`.
        if let Some(info) = self.result.get("serverInfo") {
            result.insert("_meta".into(), json!({ SERVER_INFO: info }));
        }
        result.insert("resultType".into(), json!("complete"));
        Value::Object(result)
    }
}

/// The request side of one legacy wire (stdio or HTTP).
pub(crate) trait Wire: Send + Sync + 'static {
    /// Sends a legacy request and waits for its result.
    fn request(
        &self,
        method: &str,
        params: Value,
        options: RequestOptions,
    ) -> impl Future<Output = Result<Box<RawValue>, mcp_client::Error>> + Send;
    /// Ends the session.
    fn close(&self, grace: Duration) -> impl Future<Output = ()> + Send;
}

/// The session state both legacy wires share with their inbound side.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) handlers: InputHandlers,
    /// Cancelled when the session ends: every `listen` ends with it.
    pub(crate) ended: mcp_jsonrpc::CancellationToken,
    listeners: Mutex<Vec<ListenerSlot>>,
    log_level: Mutex<Option<Value>>,
}

#[derive(Debug)]
struct ListenerSlot(u64, SubscriptionFilter, EventSink);

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    pub(crate) fn new(handlers: InputHandlers) -> Arc<Self> {
        Arc::new(Shared {
            handlers,
            ended: mcp_jsonrpc::CancellationToken::new(),
            listeners: Mutex::new(Vec::new()),
            log_level: Mutex::new(None),
        })
    }

    /// Answers one server-to-client request with the user's handlers.
    pub(crate) async fn answer(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ErrorObject> {
        if method == legacy::method::PING {
            return Ok(json!({}));
        }
        if ![
            method::ELICITATION_CREATE,
            method::SAMPLING_CREATEMESSAGE,
            method::ROOTS_LIST,
        ]
        .contains(&method)
        {
            return Err(ErrorObject::method_not_found(method));
        }
        let mut request = Map::new();
        request.insert("method".into(), Value::from(method));
        if let Some(params) = params {
            request.insert("params".into(), params);
        } else if method == method::ROOTS_LIST {
            request.insert("params".into(), json!({}));
        }
        let request: InputRequest = serde_json::from_value(Value::Object(request))
            .map_err(|e| ErrorObject::invalid_params(e.to_string()))?;
        match self.handlers.answer(request).await {
            Ok(response) => {
                let mut value = serde_json::to_value(&response)
                    .map_err(|e| ErrorObject::internal(e.to_string()))?;
                if let Value::Object(map) = &mut value {
                    map.remove("resultType");
                }
                Ok(value)
            }
            Err(mcp_client::Error::NoHandler { method }) => {
                Err(ErrorObject::method_not_found(&method))
            }
            // Such as tools in a sampling request when `sampling.tools` was not declared.
            Err(mcp_client::Error::InvalidInputRequest { reason, .. }) => {
                Err(ErrorObject::invalid_params(reason))
            }
            Err(e) => Err(ErrorObject::internal(e.to_string())),
        }
    }

    /// Delivers a legacy change notification to the subscriptions that asked for it, and
    /// a log message (`notifications/message`) to the user's log callback and channel.
    pub(crate) fn notify(&self, method: &str, params: Option<&Value>) {
        let event = match method {
            method::NOTIFICATIONS_MESSAGE => {
                if let Some(params) = params {
                    self.handlers.log(params);
                }
                return;
            }
            method::NOTIFICATIONS_TOOLS_LIST_CHANGED => ListenEvent::ToolsListChanged,
            method::NOTIFICATIONS_PROMPTS_LIST_CHANGED => ListenEvent::PromptsListChanged,
            method::NOTIFICATIONS_RESOURCES_LIST_CHANGED => ListenEvent::ResourcesListChanged,
            method::NOTIFICATIONS_RESOURCES_UPDATED => {
                match params.and_then(|p| p.get("uri")).and_then(Value::as_str) {
                    Some(uri) => ListenEvent::ResourceUpdated(uri.to_owned()),
                    None => return,
                }
            }
            _ => return,
        };
        let mut listeners = lock(&self.listeners);
        listeners.retain(|ListenerSlot(_, _, sink)| !sink.is_closed());
        for ListenerSlot(_, filter, sink) in listeners.iter() {
            if wants(filter, &event) && !sink.send(event.clone()) {
                tracing::warn!(
                    "a subscription consumer is behind; a change notification was dropped"
                );
            }
        }
    }
}

fn wants(filter: &SubscriptionFilter, event: &ListenEvent) -> bool {
    match event {
        ListenEvent::ToolsListChanged => filter.tools_list_changed == Some(true),
        ListenEvent::PromptsListChanged => filter.prompts_list_changed == Some(true),
        ListenEvent::ResourcesListChanged => filter.resources_list_changed == Some(true),
        ListenEvent::ResourceUpdated(uri) => filter
            .resource_subscriptions
            .iter()
            .flatten()
            .any(|u| u == uri),
        _ => false,
    }
}

/// Strips the modern `_meta` keys from a request's params (and `_meta` itself when
/// nothing is left); returns the log level the request asked for, if any.
pub(crate) fn to_legacy(params: &mut Value) -> Option<Value> {
    let object = params.as_object_mut()?;
    let mut level = None;
    if let Some(Value::Object(meta)) = object.get_mut("_meta") {
        level = meta.get(LOG_LEVEL).cloned();
        meta.retain(|key, _| !key.starts_with(MODERN_META));
        if meta.is_empty() {
            object.remove("_meta");
        }
    }
    // Fields of the modern MRTR loop: a legacy server never asked for input this way.
    object.remove("inputResponses");
    object.remove("requestState");
    level
}

/// Sets `resultType: "complete"` on a legacy result. The legacy revisions have no
/// `resultType`, so one a legacy server sends anyway is replaced: an `input_required` (or
/// an extension's type) must not steer the modern client's input loop for a server that
/// asks for input with requests of its own.
///
/// Only the top level is parsed; each member stays the server's raw text, so the client
/// core's typed decoding judges it exactly as it judges a modern result: a duplicate
/// member (here or nested) is refused rather than silently resolved, and deep nesting in a
/// member nobody reads is skipped without recursion. A result that is not an object is
/// passed on as it is (the typed decoding refuses it).
pub(crate) fn to_modern(raw: &RawValue) -> Result<Box<RawValue>, serde_json::Error> {
    if !raw.get().trim_start().starts_with('{') {
        return Ok(raw.to_owned());
    }
    let Members(members) = serde_json::from_str(raw.get())?;
    let mut text = String::with_capacity(raw.get().len() + 26);
    text.push('{');
    for (key, value) in &members {
        if key == "resultType" {
            continue;
        }
        text.push_str(&serde_json::to_string(key)?);
        text.push(':');
        text.push_str(value.get());
        text.push(',');
    }
    text.push_str(r#""resultType":"complete"}"#);
    RawValue::from_string(text)
}

/// An object's members in order, each value as raw text; a repeated name is an error.
struct Members(Vec<(String, Box<RawValue>)>);

impl<'de> serde::Deserialize<'de> for Members {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Members;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Members, A::Error> {
                let mut members: Vec<(String, Box<RawValue>)> = Vec::new();
                while let Some(member) = map.next_entry::<String, Box<RawValue>>()? {
                    members.push(member);
                }
                // Sorted names, not a scan per member: a hostile result with many
                // members costs n log n here, never n².
                let mut names: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
                names.sort_unstable();
                if let Some([name, _]) = names.windows(2).find(|pair| pair[0] == pair[1]) {
                    return Err(serde::de::Error::custom(format_args!(
                        "duplicate member `{name}`"
                    )));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

fn decode_error(method: &str, source: serde_json::Error) -> mcp_client::Error {
    mcp_client::Error::Decode {
        method: method.to_owned(),
        source,
    }
}

/// A legacy session as the client core's [`mcp_client::CustomTransport`].
pub(crate) struct Session<W> {
    pub(crate) wire: Arc<W>,
    pub(crate) shared: Arc<Shared>,
    pub(crate) handshake: Arc<Mutex<Handshake>>,
}

mcp_types::debug_fields!(Session<W> {});

static NEXT_LISTENER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl<W: Wire> Session<W> {
    fn handshake(&self) -> Handshake {
        lock(&self.handshake).clone()
    }

    async fn send(
        wire: Arc<W>,
        shared: Arc<Shared>,
        handshake: Handshake,
        method: String,
        mut params: Value,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, mcp_client::Error> {
        if method == method::SERVER_DISCOVER {
            return serde_json::value::to_raw_value(&handshake.discover())
                .map_err(|e| decode_error(&method, e));
        }
        let level = to_legacy(&mut params);
        if let Some(level) = level
            && handshake.capability("/logging").is_some()
        {
            let changed = lock(&shared.log_level).as_ref() != Some(&level);
            if changed {
                wire.request(
                    legacy::method::LOGGING_SETLEVEL,
                    json!({ "level": level }),
                    RequestOptions::default(),
                )
                .await?;
                *lock(&shared.log_level) = Some(level);
            }
        }
        let raw = wire.request(&method, params, options).await?;
        to_modern(&raw).map_err(|e| decode_error(&method, e))
    }
}

impl<W: Wire> mcp_client::CustomTransport for Session<W> {
    fn request(
        &self,
        method: &str,
        params: Value,
        options: RequestOptions,
    ) -> mcp_client::BoxFuture<Result<Box<RawValue>, mcp_client::Error>> {
        Box::pin(Self::send(
            Arc::clone(&self.wire),
            Arc::clone(&self.shared),
            self.handshake(),
            method.to_owned(),
            params,
            options,
        ))
    }

    fn listen(&self, params: Value, events: EventSink) -> mcp_client::BoxFuture<()> {
        let wire = Arc::clone(&self.wire);
        let shared = Arc::clone(&self.shared);
        let handshake = self.handshake();
        Box::pin(async move {
            let asked: SubscriptionFilter = params
                .get("notifications")
                .and_then(|f| serde_json::from_value(f.clone()).ok())
                .unwrap_or_default();
            // Acknowledge what the server's capabilities can deliver.
            let mut granted = SubscriptionFilter::default();
            let offers = |pointer: &str| {
                handshake.capability(pointer).and_then(Value::as_bool) == Some(true)
            };
            granted.tools_list_changed = asked
                .tools_list_changed
                .filter(|on| *on && offers("/tools/listChanged"));
            granted.prompts_list_changed = asked
                .prompts_list_changed
                .filter(|on| *on && offers("/prompts/listChanged"));
            granted.resources_list_changed = asked
                .resources_list_changed
                .filter(|on| *on && offers("/resources/listChanged"));
            let mut subscribed = Vec::new();
            if offers("/resources/subscribe") {
                for uri in asked.resource_subscriptions.iter().flatten() {
                    let outcome = wire
                        .request(
                            legacy::method::RESOURCES_SUBSCRIBE,
                            json!({ "uri": uri }),
                            RequestOptions::default(),
                        )
                        .await;
                    match outcome {
                        Ok(_) => subscribed.push(uri.clone()),
                        Err(e) => tracing::debug!(%uri, error = %e, "resources/subscribe failed"),
                    }
                }
            }
            granted.resource_subscriptions = (!subscribed.is_empty()).then(|| subscribed.clone());
            let id = NEXT_LISTENER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            {
                let mut listeners = lock(&shared.listeners);
                listeners.retain(|ListenerSlot(_, _, sink)| !sink.is_closed());
                if listeners.len() >= MAX_SUBSCRIPTIONS {
                    tracing::warn!("too many subscriptions on one legacy session");
                    return;
                }
                listeners.push(ListenerSlot(id, granted.clone(), events.clone()));
            }
            // Unsubscribes (and forgets the listener) however this future ends.
            let _guard = Unsubscribe {
                wire: Arc::clone(&wire),
                shared: Arc::clone(&shared),
                id,
                uris: subscribed,
            };
            events.send(ListenEvent::Acknowledged(granted));
            tokio::select! {
                () = events.closed() => {}
                () = shared.ended.cancelled() => {}
            }
        })
    }

    fn shutdown(&self, grace: Duration) -> mcp_client::BoxFuture<()> {
        let wire = Arc::clone(&self.wire);
        Box::pin(async move { wire.close(grace).await })
    }
}

/// Ends one listener: forgets it, and unsubscribes its URIs that no other listener follows.
struct Unsubscribe<W: Wire> {
    wire: Arc<W>,
    shared: Arc<Shared>,
    id: u64,
    uris: Vec<String>,
}

impl<W: Wire> Drop for Unsubscribe<W> {
    fn drop(&mut self) {
        let mut listeners = lock(&self.shared.listeners);
        listeners.retain(|ListenerSlot(id, _, sink)| *id != self.id && !sink.is_closed());
        let still: Vec<String> = std::mem::take(&mut self.uris)
            .into_iter()
            .filter(|uri| {
                !listeners.iter().any(|ListenerSlot(_, filter, _)| {
                    filter
                        .resource_subscriptions
                        .iter()
                        .flatten()
                        .any(|u| u == uri)
                })
            })
            .collect();
        drop(listeners);
        if still.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let wire = Arc::clone(&self.wire);
        runtime.spawn(async move {
            for uri in still {
                let _ = wire
                    .request(
                        legacy::method::RESOURCES_UNSUBSCRIBE,
                        json!({ "uri": uri }),
                        RequestOptions::default().timeout(Duration::from_secs(10)),
                    )
                    .await;
            }
        });
    }
}

/// Whether an error from a probe is a recognized modern JSON-RPC error: the server is
/// modern (<https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning>, Backward Compatibility).
pub(crate) fn is_modern_error(error: &ErrorObject) -> bool {
    match error.code {
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => error
            .data
            .as_ref()
            .and_then(|d| d.get("supported"))
            .is_some_and(Value::is_array),
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY | ErrorCode::HEADER_MISMATCH => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use mcp_client::ListenEvent;
    use mcp_jsonrpc::ErrorObject;
    use mcp_types::{ErrorCode, SubscriptionFilter};
    use serde_json::value::RawValue;
    use serde_json::{Value, json};

    use super::{Handshake, Shared, is_modern_error, to_legacy, to_modern, wants};

    /// Shared state whose sampling handler counts its calls; `tools` declares
    /// `sampling.tools`.
    fn sampling(
        tools: bool,
    ) -> (
        std::sync::Arc<Shared>,
        std::sync::Arc<std::sync::atomic::AtomicU32>,
    ) {
        let calls = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let counted = std::sync::Arc::clone(&calls);
        let builder = mcp_client::Client::builder("c", "1")
            .on_sample(move |_| {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async {
                    Ok(serde_json::from_value(json!({
                        "role": "assistant",
                        "content": {"type": "text", "text": "ok"},
                        "model": "m"
                    }))
                    .unwrap())
                }
            })
            .sampling_tools(tools);
        (Shared::new(builder.input_handlers()), calls)
    }

    #[tokio::test]
    async fn a_tool_enabled_sampling_request_is_invalid_params_without_sampling_tools() {
        let with_tools = json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 10,
            "tools": [{"name": "t", "inputSchema": {"type": "object"}}]
        });
        let with_choice = json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 10,
            "toolChoice": {"mode": "none"}
        });
        let (shared, calls) = sampling(false);
        for params in [&with_tools, &with_choice] {
            let err = shared
                .answer("sampling/createMessage", Some(params.clone()))
                .await
                .unwrap_err();
            assert_eq!(err.code, ErrorCode::INVALID_PARAMS, "{err:?}");
        }
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 0);
        // A plain sampling request still reaches the handler.
        let mut plain = with_tools.clone();
        plain.as_object_mut().unwrap().remove("tools");
        shared
            .answer("sampling/createMessage", Some(plain))
            .await
            .unwrap();
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);

        let (shared, calls) = sampling(true);
        shared
            .answer("sampling/createMessage", Some(with_tools))
            .await
            .unwrap();
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn requests_lose_the_modern_meta_and_keep_the_rest() {
        let cases = [
            (
                json!({"name": "echo", "arguments": {"a": 1}, "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
                    "io.modelcontextprotocol/logLevel": "info",
                    "progressToken": "p-1"}}),
                json!({"name": "echo", "arguments": {"a": 1}, "_meta": {"progressToken": "p-1"}}),
                Some(json!("info")),
            ),
            (
                json!({"cursor": "c2", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
                       "inputResponses": {}, "requestState": "s"}),
                json!({"cursor": "c2"}),
                None,
            ),
            (json!({}), json!({}), None),
            (json!(null), json!(null), None),
        ];
        for (mut params, expected, level) in cases {
            assert_eq!(to_legacy(&mut params), level);
            assert_eq!(params, expected);
        }
    }

    #[test]
    fn results_gain_result_type_complete() {
        let raw = serde_json::value::to_raw_value(&json!({"tools": []})).unwrap();
        let modern: Value = serde_json::from_str(to_modern(&raw).unwrap().get()).unwrap();
        assert_eq!(modern, json!({"tools": [], "resultType": "complete"}));
        let cases = [
            ("{}", r#"{"resultType":"complete"}"#),
            (
                r#" { "resultType" : "input_required", "a\u0022" : [1, {"b": 2}] } "#,
                r#"{"a\"":[1, {"b": 2}],"resultType":"complete"}"#,
            ),
            // Nested members are left as they are, for the typed decoding to judge.
            (
                r#"{"t":{"x":1,"x":2}}"#,
                r#"{"t":{"x":1,"x":2},"resultType":"complete"}"#,
            ),
            ("5", "5"),
            ("null", "null"),
            (r#"[{"a":1}]"#, r#"[{"a":1}]"#),
        ];
        for (legacy, modern) in cases {
            let raw = RawValue::from_string(legacy.to_owned()).unwrap();
            assert_eq!(to_modern(&raw).unwrap().get(), modern, "{legacy}");
        }
    }

    #[test]
    fn a_duplicate_member_is_refused_and_deep_nesting_is_not_parsed() {
        let raw = RawValue::from_string(r#"{"tools":[],"tools":[]}"#.to_owned()).unwrap();
        let error = to_modern(&raw).unwrap_err();
        assert!(
            error.to_string().contains("duplicate member `tools`"),
            "{error}"
        );
        // 100 000 levels: far past serde_json's recursion limit, yet passed on verbatim.
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let raw = RawValue::from_string(format!(r#"{{"tools":[],"x":{deep}}}"#)).unwrap();
        let modern = to_modern(&raw).unwrap();
        assert!(modern.get().ends_with(r#"]],"resultType":"complete"}"#));
        assert_eq!(
            modern.get().len(),
            raw.get().len() + r#","resultType":"complete""#.len()
        );
    }

    #[test]
    fn only_recognized_modern_errors_mean_modern() {
        let error = |code, data: Option<Value>| {
            let mut e = ErrorObject::new(ErrorCode(code), "x");
            e.data = data;
            e
        };
        assert!(is_modern_error(&error(
            -32022,
            Some(json!({"supported": ["2026-07-28"]}))
        )));
        assert!(is_modern_error(&error(-32021, None)));
        assert!(!is_modern_error(&error(-32022, None)));
        assert!(!is_modern_error(&error(-32601, None)));
        assert!(!is_modern_error(&error(-32000, None)));
    }

    #[test]
    fn discover_is_made_of_the_initialize_result() {
        let handshake = Handshake {
            version: "2025-06-18".to_owned(),
            result: json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                           "serverInfo": {"name": "s", "version": "1"}, "instructions": "hi"}),
        };
        assert_eq!(
            handshake.discover(),
            json!({"supportedVersions": ["2025-06-18"], "capabilities": {"tools": {}},
                   "instructions": "hi", "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
                   "resultType": "complete"})
        );
        let discovered: mcp_types::DiscoverResult =
            serde_json::from_value(handshake.discover()).unwrap();
        assert_eq!(discovered.supported_versions, ["2025-06-18"]);
    }

    #[test]
    fn events_reach_the_filters_that_asked() {
        let mut filter = SubscriptionFilter::default();
        filter.tools_list_changed = Some(true);
        filter.resource_subscriptions = Some(vec!["a://1".to_owned()]);
        assert!(wants(&filter, &ListenEvent::ToolsListChanged));
        assert!(wants(
            &filter,
            &ListenEvent::ResourceUpdated("a://1".to_owned())
        ));
        assert!(!wants(
            &filter,
            &ListenEvent::ResourceUpdated("a://2".to_owned())
        ));
        assert!(!wants(&filter, &ListenEvent::PromptsListChanged));
    }
}
