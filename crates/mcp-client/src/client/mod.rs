//! The client: `_meta` on every request, typed methods, cursor-following lists, MRTR, and
//! version negotiation (<https://modelcontextprotocol.io/specification/2026-07-28/basic>, <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>,
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning>).

use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_jsonrpc::{Peer, RequestOptions};
use mcp_types::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, CompleteRequestParams,
    CompleteResult, DiscoverResult, GetPromptRequestParams, GetPromptResult, Implementation,
    InputRequest, InputRequiredResult, InputResponse, InputResponses, JsonObject,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    LoggingLevel, OrderedMap, PaginatedRequestParams, ProgressToken, Prompt,
    ReadResourceRequestParams, ReadResourceResult, RequestMetaObject, Resource, ResourceTemplate,
    Tool, method,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::cache::Cache;
use crate::error::Error;
use crate::listen::{Router, Subscription};

/// The two methods of a cached listing: `$page` fetches one page of `$method` through the
/// cache, `$all` follows its cursors and gathers `$field` of every page.
macro_rules! cached_listing {
    (
        $(#[$page_doc:meta])*
        $page:ident -> $result:ty,
        $(#[$all_doc:meta])*
        $all:ident -> $item:ty,
        $method:expr,
        $field:ident $(,)?
    ) => {
        $(#[$page_doc])*
        pub async fn $page(&self, cursor: Option<&str>) -> Result<$result, Error> {
            self.cached($method, Some(cursor.unwrap_or("")), Self::page(cursor))
                .await
        }

        $(#[$all_doc])*
        pub async fn $all(&self) -> Result<Vec<$item>, Error> {
            follow($method, |cursor| async move {
                let page = self.$page(cursor.as_deref()).await?;
                Ok((page.$field, page.next_cursor))
            })
            .await
        }
    };
}

mod builder;
mod dispatch;

pub use builder::{ClientBuilder, InputHandlers};

/// The protocol versions this client speaks, newest first.
pub const SUPPORTED_VERSIONS: &[&str] = &["2026-07-28"];

struct Inner {
    /// Tools whose annotations say a call may be repeated (read-only or idempotent).
    safe_tools: Mutex<std::collections::HashSet<String>>,
    /// The `outputSchema` of each listed tool, and its validator.
    #[cfg(feature = "schema-validation")]
    output_checks: crate::output::OutputChecks,
    cache: Arc<Cache>,
    /// The authorization context private cache entries are keyed by (the credentials in
    /// use; one context over stdio).
    auth_context: String,
    router: Option<Router>,
    transport: Transport,
    /// One of [`SUPPORTED_VERSIONS`]: the newest until a server asks for another.
    /// (Its index there: read on every request, so an atomic rather than a lock.)
    version: AtomicUsize,
    handlers: InputHandlers,
    /// The capabilities and `clientInfo` of every request's `_meta`, serialized once
    /// (`None` if they could not be: then every request is written the typed way).
    fixed_meta: Option<Arc<crate::wire::FixedMeta>>,
    log_level: Option<LoggingLevel>,
    max_rounds: usize,
    timeout: Option<Duration>,
    progress_tokens: AtomicU64,
    /// Set when the client declares the Tasks extension.
    tasks: Option<crate::tasks::TaskOptions>,
}

/// How requests reach the server.
enum Transport {
    /// A duplex engine connection (stdio, in-process).
    Engine(Peer),
    /// Streamable HTTP: one POST per request.
    #[cfg(feature = "http")]
    Http(Arc<crate::http::HttpTransport>),
    /// A stdio server the client owns and restarts.
    #[cfg(feature = "stdio")]
    Supervised(Arc<crate::restart::Supervisor>),
    /// A caller-supplied transport.
    Custom(Arc<dyn crate::CustomTransport>),
}

/// Tokens that tell subscriptions apart in the router.
static SUBSCRIPTION_TOKENS: AtomicU64 = AtomicU64::new(1);

/// Where a subscription's listen request goes (and whether a crash can be survived).
enum ListenSource {
    Fixed(Peer),
    #[cfg(feature = "stdio")]
    Supervised(Arc<crate::restart::Supervisor>),
}

impl ListenSource {
    fn peer(&self) -> (u64, Peer) {
        match self {
            ListenSource::Fixed(peer) => (0, peer.clone()),
            #[cfg(feature = "stdio")]
            ListenSource::Supervised(supervisor) => supervisor.peer(),
        }
    }

    /// Restarts a supervised server; whether a new connection is there to use.
    // Without the `stdio` feature there is nothing to restart, and nothing to await.
    #[cfg_attr(not(feature = "stdio"), allow(clippy::unused_async))]
    async fn restart(&self, generation: u64) -> bool {
        match self {
            ListenSource::Fixed(_) => {
                let _ = generation;
                false
            }
            #[cfg(feature = "stdio")]
            ListenSource::Supervised(supervisor) => supervisor.restart(generation).await.is_ok(),
        }
    }
}

/// A connection to one MCP server. Cheap to clone.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("info", &self.inner.handlers.info)
            .finish_non_exhaustive()
    }
}

/// Per-call options.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct CallOptions {
    /// Overrides the client's timeout.
    pub timeout: Option<Duration>,
    /// Receives the server's progress updates for this call (a `progressToken` is added).
    pub on_progress: Option<mcp_jsonrpc::ProgressCallback>,
    /// W3C trace context to propagate in `_meta` (`traceparent`, `tracestate`), reserved
    /// keys of <https://modelcontextprotocol.io/specification/2026-07-28/basic>.
    pub trace: Option<(String, Option<String>)>,
}

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("trace", &self.trace)
            .field("on_progress", &self.on_progress.is_some())
            .finish()
    }
}

impl CallOptions {
    /// Options that report progress to `callback`.
    #[must_use]
    pub fn progress(
        mut self,
        callback: impl Fn(&mcp_types::ProgressNotificationParams) + Send + Sync + 'static,
    ) -> Self {
        self.on_progress = Some(Arc::new(callback));
        self
    }

    /// Options with a timeout.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Options that carry W3C trace context (`traceparent`, and `tracestate` if any).
    #[must_use]
    pub fn trace(mut self, traceparent: impl Into<String>, tracestate: Option<String>) -> Self {
        self.trace = Some((traceparent.into(), tracestate));
        self
    }
}

/// How a request's rounds ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reply {
    /// Complete at the first round (cacheable).
    FirstRound,
    /// Complete after input rounds.
    Complete,
    /// A task handle (Tasks extension).
    Task,
}

/// The parts of params that change between MRTR rounds.
#[derive(Default)]
pub(crate) struct Round {
    pub(crate) responses: Option<InputResponses>,
    pub(crate) state: Option<String>,
}

/// The arguments of a call as a JSON object: `arguments` serialized. `null` (from `()`
/// or `None`) is no arguments.
pub(crate) fn arguments_object<T: Serialize + ?Sized>(arguments: &T) -> Result<JsonObject, Error> {
    let refuse = |reason: String| Error::InvalidArguments(reason);
    match serde_json::to_value(arguments).map_err(|e| refuse(e.to_string()))? {
        Value::Object(object) => Ok(object),
        Value::Null => Ok(JsonObject::new()),
        other => Err(refuse(format!(
            "they serialize to {}, not to a JSON object",
            json_kind(&other)
        ))),
    }
}

/// A prompt's arguments: an object of strings.
fn prompt_arguments<T: Serialize + ?Sized>(arguments: &T) -> Result<OrderedMap<String>, Error> {
    let mut strings = OrderedMap::new();
    for (name, value) in &arguments_object(arguments)? {
        let Value::String(value) = value else {
            return Err(Error::InvalidArguments(format!(
                "prompt argument {name:?} is {}, not a string",
                json_kind(value)
            )));
        };
        strings.insert(name.clone(), value.clone());
    }
    Ok(strings)
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The typed `tools/call` params of each round: the tool's name and arguments, with the
/// round's input responses and request state.
pub(crate) fn tool_call_params<'a>(
    name: &'a str,
    arguments: &'a JsonObject,
) -> impl Fn(RequestMetaObject, &Round) -> CallToolRequestParams + 'a {
    move |meta, round| {
        let mut params = CallToolRequestParams::new(meta, name);
        params.arguments = Some(arguments.clone());
        params.input_responses.clone_from(&round.responses);
        params.request_state.clone_from(&round.state);
        params
    }
}

/// The most pages one `list_*_all` call fetches
/// (<https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/pagination>:
/// cursors are the server's, so a client bounds how far it follows them).
/// Past it the call fails with [`Error::ListTooLong`]; the paged methods (`list_tools` …)
/// read any number of pages one at a time.
pub const MAX_PAGES: usize = 1000;

/// The most items one `list_*_all` call gathers, across its pages. Past it the call fails
/// with [`Error::ListTooLong`].
pub const MAX_LISTED: usize = 100_000;

/// Fetches pages until the server gives no new cursor. A cursor seen before ends it too
/// (what the server listed is all there is), so a server whose cursors cycle cannot make
/// this loop forever; one that keeps inventing cursors is stopped at [`MAX_PAGES`] pages
/// or [`MAX_LISTED`] items with [`Error::ListTooLong`].
async fn follow<T, F, Fut>(method: &str, mut fetch: F) -> Result<Vec<T>, Error>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), Error>>,
{
    let mut all = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let (items, next) = fetch(cursor.take()).await?;
        all.extend(items);
        if all.len() > MAX_LISTED {
            break;
        }
        match next {
            Some(next) if seen.insert(next.clone()) => cursor = Some(next),
            _ => return Ok(all),
        }
    }
    Err(Error::ListTooLong {
        method: method.to_owned(),
    })
}

/// What a round's result calls for.
enum Next {
    Complete,
    Task,
    Again(Round),
}

/// Just enough of a result to know how to read it.
#[derive(serde::Deserialize)]
pub(crate) struct Kind {
    #[serde(rename = "resultType")]
    pub(crate) result_type: Option<String>,
}

/// A request's `_meta` the typed way: the client's capabilities, identity and log level,
/// the protocol version, the call's progress token, and its W3C trace context
/// (`traceparent`, `tracestate`) as extra members. What
/// [`FixedMeta`](crate::wire::FixedMeta) and [`WireMeta`](crate::wire::WireMeta) write
/// without building it.
pub(crate) fn request_meta(
    capabilities: &ClientCapabilities,
    info: &Implementation,
    log_level: Option<LoggingLevel>,
    version: &str,
    trace: Option<&(String, Option<String>)>,
    progress_token: Option<ProgressToken>,
) -> RequestMetaObject {
    let mut meta = RequestMetaObject::new(capabilities.clone(), version.to_owned());
    meta.client_info = Some(info.clone());
    meta.log_level = log_level;
    meta.progress_token = progress_token;
    if let Some((parent, state)) = trace {
        meta.extra
            .insert("traceparent".to_owned(), Value::from(parent.clone()));
        if let Some(state) = state {
            meta.extra
                .insert("tracestate".to_owned(), Value::from(state.clone()));
        }
    }
    meta
}

impl Client {
    /// How tasks are followed, if the client declares the Tasks extension.
    pub(crate) fn task_options(&self) -> Option<&crate::tasks::TaskOptions> {
        self.inner.tasks.as_ref()
    }

    /// Whether subscriptions can be opened on this client's transport.
    pub(crate) fn can_listen(&self) -> bool {
        self.inner.router.is_some()
    }

    /// The capabilities every request declares (derived from the registered handlers).
    pub fn capabilities(&self) -> &ClientCapabilities {
        &self.inner.handlers.capabilities
    }

    /// The protocol version requests carry (the newest both sides support, once known).
    pub fn protocol_version(&self) -> String {
        self.version().to_owned()
    }

    fn version(&self) -> &'static str {
        SUPPORTED_VERSIONS
            .get(self.inner.version.load(Ordering::Relaxed))
            .copied()
            .unwrap_or(SUPPORTED_VERSIONS[0])
    }

    fn meta(&self) -> RequestMetaObject {
        request_meta(
            &self.inner.handlers.capabilities,
            &self.inner.handlers.info,
            self.inner.log_level,
            self.version(),
            None,
            None,
        )
    }

    /// The server process's id, for a client that owns its server
    /// ([`ClientBuilder::spawn_stdio`]).
    pub fn server_pid(&self) -> Option<u32> {
        match &self.inner.transport {
            #[cfg(feature = "stdio")]
            Transport::Supervised(supervisor) => supervisor.pid(),
            _ => None,
        }
    }

    /// Stops a server the client owns (stdin close, then SIGTERM, then SIGKILL), or ends
    /// a [`CustomTransport`](crate::CustomTransport)'s connection; does nothing for other
    /// transports.
    pub async fn shutdown(&self, grace: Duration) {
        #[cfg(feature = "stdio")]
        if let Transport::Supervised(supervisor) = &self.inner.transport {
            supervisor.shutdown(grace).await;
        }
        if let Transport::Custom(custom) = &self.inner.transport {
            custom.shutdown(grace).await;
        }
    }

    pub(crate) fn decode<T: DeserializeOwned>(method: &str, raw: &RawValue) -> Result<T, Error> {
        serde_json::from_str(raw.get()).map_err(|source| Error::Decode {
            method: method.to_owned(),
            source,
        })
    }

    /// A request whose result is always complete (lists, discover, completion).
    async fn simple<P: Serialize, T: DeserializeOwned>(
        &self,
        method: &'static str,
        build: impl Fn(RequestMetaObject) -> P,
    ) -> Result<T, Error> {
        self.cached(method, None, build).await
    }

    /// [`simple`](Self::simple), served from and stored in the cache under `target`.
    pub(crate) async fn cached<P: Serialize, T: DeserializeOwned>(
        &self,
        method: &'static str,
        target: Option<&str>,
        build: impl Fn(RequestMetaObject) -> P,
    ) -> Result<T, Error> {
        let context = &self.inner.auth_context;
        if let Some(raw) = target.and_then(|t| self.inner.cache.get(method, t, context)) {
            return Self::decode(method, &raw);
        }
        let raw = self.send(method, build, &CallOptions::default()).await?;
        match Self::decode::<Kind>(method, &raw)?.result_type.as_deref() {
            // A result without `resultType` comes from an earlier-revision server: complete.
            None | Some("complete") => {
                let value = Self::decode(method, &raw)?;
                if let Some(target) = target {
                    self.inner.cache.put(method, target, context, &raw);
                }
                Ok(value)
            }
            Some(other) => Err(Error::UnknownResultType(other.to_owned())),
        }
    }

    /// A request that may answer `input_required`: runs the handlers and retries with the
    /// answers and the exact `requestState`, up to the round limit.
    async fn with_input<P: Serialize, T: DeserializeOwned>(
        &self,
        method: &'static str,
        build: impl Fn(RequestMetaObject, &Round) -> P,
        call: &CallOptions,
        cache_target: Option<&str>,
    ) -> Result<T, Error> {
        let context = &self.inner.auth_context;
        if let Some(raw) = cache_target.and_then(|t| self.inner.cache.get(method, t, context)) {
            return Self::decode(method, &raw);
        }
        let (raw, reply) = self.rounds(method, build, call, false).await?;
        let value = Self::decode(method, &raw)?;
        // Never cache the result of a retry: it answered this client's input.
        if reply == Reply::FirstRound
            && let Some(target) = cache_target
        {
            self.inner.cache.put(method, target, context, &raw);
        }
        Ok(value)
    }

    /// The MRTR rounds of one request, up to its final result: a complete result, or (when
    /// `task` allows it) a task handle (`resultType: "task"`, Tasks extension).
    pub(crate) async fn rounds<P: Serialize>(
        &self,
        method: &'static str,
        build: impl Fn(RequestMetaObject, &Round) -> P,
        call: &CallOptions,
        task: bool,
    ) -> Result<(Box<RawValue>, Reply), Error> {
        let mut round = Round::default();
        for n in 0..self.inner.max_rounds {
            let raw = self.send(method, |meta| build(meta, &round), call).await?;
            match self.next_round(method, &raw, task).await? {
                Next::Complete => {
                    let reply = if n == 0 {
                        Reply::FirstRound
                    } else {
                        Reply::Complete
                    };
                    return Ok((raw, reply));
                }
                Next::Task => return Ok((raw, Reply::Task)),
                Next::Again(next) => round = next,
            }
        }
        Err(Error::TooManyRounds(self.inner.max_rounds))
    }

    /// Reads one round's result: complete, a task (when `task` allows it), or input
    /// required, in which case the handlers answer and the next round is made.
    async fn next_round(&self, method: &str, raw: &RawValue, task: bool) -> Result<Next, Error> {
        match Self::decode::<Kind>(method, raw)?.result_type.as_deref() {
            // A result without `resultType` comes from an earlier-revision server: complete.
            None | Some("complete") => Ok(Next::Complete),
            Some("input_required") => {
                let asked: InputRequiredResult = Self::decode(method, raw)?;
                let mut answers = OrderedMap::new();
                for (key, request) in asked.input_requests.into_iter().flatten() {
                    answers.insert(key, self.answer(request).await?);
                }
                Ok(Next::Again(Round {
                    responses: (!answers.is_empty()).then_some(answers),
                    state: asked.request_state,
                }))
            }
            // Only a client that declared the extension accepts a task, and only for a
            // request the extension augments.
            Some(mcp_types::tasks::RESULT_TYPE_TASK) if task => Ok(Next::Task),
            Some(other) => Err(Error::UnknownResultType(other.to_owned())),
        }
    }

    pub(crate) async fn answer(&self, request: InputRequest) -> Result<InputResponse, Error> {
        self.inner.handlers.answer(request).await
    }

    /// `server/discover`: the server's versions, capabilities, identity and instructions.
    pub async fn discover(&self) -> Result<DiscoverResult, Error> {
        self.cached(
            method::SERVER_DISCOVER,
            Some(""),
            |meta| serde_json::json!({ "_meta": meta }),
        )
        .await
    }

    fn page(cursor: Option<&str>) -> impl Fn(RequestMetaObject) -> PaginatedRequestParams + '_ {
        move |meta| {
            let mut params = PaginatedRequestParams::new(meta);
            params.cursor = cursor.map(str::to_owned);
            params
        }
    }

    /// One page of `tools/list`.
    pub async fn list_tools(&self, cursor: Option<&str>) -> Result<ListToolsResult, Error> {
        #[allow(unused_mut, reason = "only the HTTP transport filters the tools")]
        let mut result: ListToolsResult = self
            .cached(
                method::TOOLS_LIST,
                Some(cursor.unwrap_or("")),
                Self::page(cursor),
            )
            .await?;
        #[cfg(feature = "http")]
        if let Transport::Http(http) = &self.inner.transport {
            result.tools = http.admit_tools(std::mem::take(&mut result.tools));
        }
        let mut safe = self
            .inner
            .safe_tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for tool in &result.tools {
            let hints = tool.annotations.as_ref();
            if hints
                .is_some_and(|a| a.read_only_hint == Some(true) || a.idempotent_hint == Some(true))
            {
                safe.insert(tool.name.clone());
            } else {
                safe.remove(&tool.name);
            }
        }
        drop(safe);
        #[cfg(feature = "schema-validation")]
        self.inner.output_checks.record(&result.tools);
        Ok(result)
    }

    /// Every tool, following cursors.
    pub async fn list_tools_all(&self) -> Result<Vec<Tool>, Error> {
        follow(method::TOOLS_LIST, |cursor| async move {
            let page = self.list_tools(cursor.as_deref()).await?;
            Ok((page.tools, page.next_cursor))
        })
        .await
    }

    cached_listing!(
        /// One page of `prompts/list`.
        list_prompts -> ListPromptsResult,
        /// Every prompt, following cursors.
        list_prompts_all -> Prompt,
        method::PROMPTS_LIST,
        prompts,
    );

    cached_listing!(
        /// One page of `resources/list`.
        list_resources -> ListResourcesResult,
        /// Every resource, following cursors.
        list_resources_all -> Resource,
        method::RESOURCES_LIST,
        resources,
    );

    cached_listing!(
        /// One page of `resources/templates/list`.
        list_resource_templates -> ListResourceTemplatesResult,
        /// Every resource template, following cursors.
        list_resource_templates_all -> ResourceTemplate,
        method::RESOURCES_TEMPLATES_LIST,
        resource_templates,
    );

    /// `tools/call`. A tool that failed is `Ok` with `is_error` set, for the model to read.
    ///
    /// `arguments` are anything that serializes to a JSON object (or to `null`, for
    /// none): a `JsonObject`, owned or lent, a `json!({...})` value, a struct of yours.
    /// Anything else is [`Error::InvalidArguments`], before a request is sent.
    ///
    /// ```no_run
    /// # async fn run(client: mcp_client::Client) -> Result<(), mcp_client::Error> {
    /// #[derive(serde::Serialize)]
    /// struct Add { a: i64, b: i64 }
    ///
    /// let sum = client.call_tool("add", Add { a: 2, b: 3 }).await?;
    /// let same = client.call_tool("add", serde_json::json!({"a": 2, "b": 3})).await?;
    /// let none = client.call_tool("now", ()).await?;
    /// # Ok(()) }
    /// ```
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, Error> {
        let arguments = arguments_object(&arguments)?;
        self.call_tool_lent(name, &arguments, &CallOptions::default())
            .await
    }

    /// `tools/call` with per-call options (timeout, progress); `arguments` as for
    /// [`call_tool`](Self::call_tool).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: &CallOptions,
    ) -> Result<CallToolResult, Error> {
        let arguments = arguments_object(&arguments)?;
        self.call_tool_lent(name, &arguments, options).await
    }

    /// [`call_tool_with`](Self::call_tool_with) with the arguments lent: one body for
    /// every caller's type. The result is checked against the tool's `outputSchema`
    /// (feature `schema-validation`).
    async fn call_tool_lent(
        &self,
        name: &str,
        arguments: &JsonObject,
        options: &CallOptions,
    ) -> Result<CallToolResult, Error> {
        let result = self.call_tool_unchecked(name, arguments, options).await?;
        #[cfg(feature = "schema-validation")]
        self.inner.output_checks.check(name, &result)?;
        Ok(result)
    }

    /// The call itself, its result unchecked.
    async fn call_tool_unchecked(
        &self,
        name: &str,
        arguments: &JsonObject,
        options: &CallOptions,
    ) -> Result<CallToolResult, Error> {
        // The paths besides the plain call are boxed: their states (about 6 KB each)
        // would otherwise size every call's future.
        if self.inner.tasks.is_some() {
            // The server may answer with a task: follow it to its end.
            let call = self.call_tool_or_task(name, arguments.clone(), options);
            return match Box::pin(call).await? {
                crate::tasks::ToolCall::Complete(result) => Ok(result),
                crate::tasks::ToolCall::Task(task) => Box::pin(task.wait()).await,
            };
        }
        if let Some(fixed) = self.inner.fixed_meta.as_ref() {
            // Without the Tasks extension: written by `send_wire` from the borrowed name and
            // arguments, the result read in one pass when complete. Here rather than in a
            // function of its own, so that the call is one future fewer.
            let method = method::TOOLS_CALL;
            let mut round = Round::default();
            for _ in 0..self.inner.max_rounds {
                let build = |meta| crate::wire::CallToolParams {
                    meta,
                    arguments: Some(arguments),
                    input_responses: round.responses.as_ref(),
                    name,
                    request_state: round.state.as_deref(),
                };
                let routing = crate::wire::Routing {
                    name,
                    arguments: Some(arguments),
                };
                let answer = self
                    .send_wire(fixed, method, build, routing, options)
                    .await?;
                // The common case in one pass: a complete result (`resultType` absent or
                // "complete" reads as `ResultType::Complete`). Anything else is read as
                // the typed path reads it, so the outcome and errors are the same.
                if let Some(result) = crate::wire::complete_result(fixed, &answer) {
                    return Ok(result);
                }
                let raw = answer.into_raw_value()?;
                // Boxed: answering the server's input requests (2.4 KB of state) is the
                // rare path, and would otherwise size every call's future.
                match Box::pin(self.next_round(method, &raw, false)).await? {
                    Next::Complete | Next::Task => return Self::decode(method, &raw),
                    Next::Again(next) => round = next,
                }
            }
            return Err(Error::TooManyRounds(self.inner.max_rounds));
        }
        Box::pin(self.with_input(
            method::TOOLS_CALL,
            tool_call_params(name, arguments),
            options,
            None,
        ))
        .await
    }

    /// `prompts/get`. `arguments` are anything that serializes to a JSON object whose
    /// values are strings, as prompt arguments are (an `OrderedMap<String>`, a
    /// `json!({...})` value, a struct of `String` fields), or to `null` for none; anything
    /// else is [`Error::InvalidArguments`].
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<GetPromptResult, Error> {
        let arguments = prompt_arguments(&arguments)?;
        self.with_input(
            method::PROMPTS_GET,
            |meta, round| {
                let mut params = GetPromptRequestParams::new(meta, name);
                params.arguments = Some(arguments.clone());
                params.input_responses.clone_from(&round.responses);
                params.request_state.clone_from(&round.state);
                params
            },
            &CallOptions::default(),
            None,
        )
        .await
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        self.with_input(
            method::RESOURCES_READ,
            |meta, round| {
                let mut params = ReadResourceRequestParams::new(meta, uri);
                params.input_responses.clone_from(&round.responses);
                params.request_state.clone_from(&round.state);
                params
            },
            &CallOptions::default(),
            Some(uri),
        )
        .await
    }

    /// Opens a `subscriptions/listen` stream for the changes `filter` opts into. The first
    /// event is the server's acknowledgement; dropping the [`Subscription`] ends it.
    pub async fn listen(
        &self,
        filter: mcp_types::SubscriptionFilter,
    ) -> Result<Subscription, Error> {
        self.listen_to(serde_json::to_value(filter).unwrap_or_default())
            .await
    }

    /// [`listen`](Self::listen) with the filter as JSON, so that extensions can add their
    /// members (the Tasks extension's `taskIds`).
    pub(crate) async fn listen_to(&self, filter: Value) -> Result<Subscription, Error> {
        let router = self.inner.router.clone().ok_or(Error::ListenUnavailable)?;
        let (tx, events) = tokio::sync::mpsc::channel(crate::listen::SUBSCRIPTION_BUFFER);
        let (id_tx, id_rx) = tokio::sync::oneshot::channel();
        let id_tx = Mutex::new(Some(id_tx));
        // The subscription's current id: a re-subscription after a restart gets a new one.
        let current: Arc<Mutex<Option<mcp_types::RequestId>>> = Arc::default();
        let token = SUBSCRIPTION_TOKENS.fetch_add(1, Ordering::Relaxed);
        let registering = router.clone();
        let tracking = Arc::clone(&current);
        let mut options = RequestOptions::default();
        // A subscription lives until either side ends it; the engine still wants a bound.
        options.timeout = Some(Duration::from_hours(365 * 24));
        options.max_timeout = options.timeout;
        options.on_id = Some(Arc::new(move |id: &mcp_types::RequestId| {
            registering.register(id.clone(), token, tx.clone());
            let previous = tracking
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .replace(id.clone());
            // A new connection numbers its requests afresh, so the new id may equal the
            // old one: only a different old id is removed.
            if let Some(previous) = previous.filter(|p| p != id) {
                registering.unregister_if(&previous, token);
            }
            if let Some(id_tx) = id_tx.lock().unwrap_or_else(PoisonError::into_inner).take() {
                let _ = id_tx.send(id.clone());
            }
        }));
        let params = serde_json::json!({ "_meta": self.meta(), "notifications": filter });
        let source = match &self.inner.transport {
            Transport::Engine(peer) => ListenSource::Fixed(peer.clone()),
            #[cfg(feature = "stdio")]
            Transport::Supervised(supervisor) => ListenSource::Supervised(Arc::clone(supervisor)),
            #[cfg(feature = "http")]
            Transport::Http(http) => return Ok(self.listen_http(http, params, router)),
            Transport::Custom(custom) => {
                let (tx, events) = tokio::sync::mpsc::channel(crate::listen::SUBSCRIPTION_BUFFER);
                let sink = crate::custom::EventSink {
                    tx,
                    cache: router.cache(),
                };
                let request = tokio::spawn(custom.listen(params, sink));
                return Ok(Subscription {
                    current: Arc::default(),
                    token: 0,
                    events,
                    request,
                    router,
                });
            }
        };
        let closing = router.clone();
        let ended = Arc::clone(&current);
        let request = tokio::spawn(async move {
            loop {
                let (generation, peer) = source.peer();
                let outcome = peer
                    .request(method::SUBSCRIPTIONS_LISTEN, Some(&params), options.clone())
                    .await;
                match outcome {
                    // The server crashed: once it is restarted, subscribe again (the consumer
                    // sees a new acknowledgement, its cue to refetch what it follows).
                    Err(e) if e.is_closed() && source.restart(generation).await => {}
                    Err(e) => {
                        tracing::debug!(error = %e, "subscription ended");
                        break;
                    }
                    Ok(_) => break,
                }
            }
            // Whatever ended it, the consumer sees the end of the stream.
            if let Some(id) = ended.lock().unwrap_or_else(PoisonError::into_inner).take() {
                closing.unregister_if(&id, token);
            }
        });
        id_rx
            .await
            .map_err(|_| Error::Transport(mcp_jsonrpc::Error::Closed(None)))?;
        Ok(Subscription {
            current,
            token,
            events,
            request,
            router,
        })
    }

    /// A subscription over HTTP: the listen POST's stream, held open, carries its events.
    #[cfg(feature = "http")]
    fn listen_http(
        &self,
        http: &Arc<crate::http::HttpTransport>,
        params: Value,
        router: Router,
    ) -> Subscription {
        let (tx, events) = tokio::sync::mpsc::channel(crate::listen::SUBSCRIPTION_BUFFER);
        let http = Arc::clone(http);
        let version = self.protocol_version();
        let cache = router.cache();
        let request = tokio::spawn(async move {
            let wait = crate::http::Wait {
                timeout: Duration::from_hours(365 * 24),
                max: Duration::from_hours(365 * 24),
                progress: None,
            };
            let outcome = http
                .request(
                    &version,
                    method::SUBSCRIPTIONS_LISTEN,
                    &params,
                    None,
                    wait,
                    |notification| {
                        if let Some(event) = crate::listen::event_of(&notification) {
                            cache.invalidate(&event);
                            let _ = tx.try_send(event);
                        }
                    },
                )
                .await;
            if let Err(e) = outcome {
                tracing::debug!(error = %e, "subscription ended");
            }
        });
        Subscription {
            current: Arc::default(),
            token: 0,
            events,
            request,
            router,
        }
    }

    /// `completion/complete`: `params` without `_meta`, which the client adds.
    pub async fn complete(&self, params: Value) -> Result<CompleteResult, Error> {
        self.simple(method::COMPLETION_COMPLETE, |meta| {
            let mut params = params.clone();
            if let Value::Object(map) = &mut params {
                map.insert(
                    "_meta".to_owned(),
                    serde_json::to_value(&meta).unwrap_or_default(),
                );
            }
            params
        })
        .await
    }

    /// `completion/complete` with typed params (their `_meta` is replaced).
    pub async fn complete_typed(
        &self,
        params: CompleteRequestParams,
    ) -> Result<CompleteResult, Error> {
        self.simple(method::COMPLETION_COMPLETE, |meta| {
            let mut params = params.clone();
            params.meta = meta;
            params
        })
        .await
    }
}
