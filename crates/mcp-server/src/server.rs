//! The server: a registry of tools, resources and prompts, and the dispatch of every
//! 2026-07-28 request to them (`docs/2026-07-28/server/*`, `basic/index.mdx`).

use std::future::Future;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_jsonrpc::{CancellationToken, ErrorObject, Handler, Request, RequestContext};
use mcp_types::{
    CacheScope, CallToolRequestParams, CompleteRequestParams, CompleteResult,
    CompleteResultCompletion, DiscoverResult, ErrorCode, GetPromptRequestParams, GetPromptResult,
    Implementation, InputRequiredResult, InputResponses, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, OrderedMap,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResult, RequestMetaObject,
    ResultMetaObject, ResultType, ServerCapabilities, SubscriptionFilter,
    SubscriptionsListenRequestParams, SubscriptionsListenResult,
    SubscriptionsListenResultMetaObject, method,
};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::broadcast;

use crate::context::{Context, missing_capability};
use crate::error::{Error, ToolError};
use crate::extension::Extension;
use crate::prompt::PromptDef;
use crate::resource::{ResourceDef, ResourceTemplateDef};
use crate::state::{Binding, StateKey};
use crate::tool::{BoxFuture, ParamHeader, ToolDef};

/// The protocol versions the core serves (the legacy ones are `mcp-legacy`'s).
pub const SUPPORTED_VERSIONS: &[&str] = &["2026-07-28"];

type CompletionFn = Arc<
    dyn Fn(CompleteRequestParams, Context) -> BoxFuture<Result<CompleteResultCompletion, ToolError>>
        + Send
        + Sync,
>;

/// How long clients may cache a list or read result, and for whom
/// (`docs/2026-07-28/server/utilities/caching.mdx`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CachePolicy {
    /// Freshness in milliseconds; 0 means stale at once.
    pub ttl_ms: u64,
    /// Whether the result may be shared across authorization contexts.
    pub scope: CacheScope,
}

impl CachePolicy {
    /// A policy.
    pub fn new(ttl_ms: u64, scope: CacheScope) -> Self {
        CachePolicy { ttl_ms, scope }
    }
}

impl Default for CachePolicy {
    /// Stale at once, shareable: the definitions may change at run time, and without
    /// authorization they are the same for everybody.
    fn default() -> Self {
        CachePolicy::new(0, CacheScope::Public)
    }
}

/// The results that carry cache hints, each with its own [`CachePolicy`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheKind {
    /// `server/discover`.
    Discover = 0,
    /// `tools/list`.
    Tools = 1,
    /// `prompts/list`.
    Prompts = 2,
    /// `resources/list`.
    Resources = 3,
    /// `resources/templates/list`.
    ResourceTemplates = 4,
    /// `resources/read`.
    Read = 5,
}

/// What changed in the server, for `subscriptions/listen` streams.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Change {
    Tools,
    Prompts,
    Resources,
    Updated(String),
}

#[derive(Default)]
struct Registry {
    tools: Vec<Arc<ToolDef>>,
    prompts: Vec<Arc<PromptDef>>,
    resources: Vec<Arc<ResourceDef>>,
    templates: Vec<Arc<ResourceTemplateDef>>,
}

struct Inner {
    extensions: Vec<Arc<dyn Extension>>,
    info: Implementation,
    instructions: Option<String>,
    capabilities: ServerCapabilities,
    registry: RwLock<Registry>,
    completion: Option<CompletionFn>,
    cache: [CachePolicy; 6],
    page_size: usize,
    state_key: StateKey,
    state_ttl: Duration,
    changes: broadcast::Sender<Change>,
    shutdown: CancellationToken,
}

/// An MCP server. Cheap to clone; serve it over stdio with
/// [`serve_stdio`](Server::serve_stdio), or over any transport as an
/// [`mcp_jsonrpc::Handler`].
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.inner.info)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Server`].
pub struct ServerBuilder {
    extensions: Vec<Arc<dyn Extension>>,
    info: Implementation,
    instructions: Option<String>,
    registry: Registry,
    completion: Option<CompletionFn>,
    cache: [CachePolicy; 6],
    page_size: usize,
    state_key: Option<[u8; 32]>,
    state_ttl: Duration,
    enable: (bool, bool, bool),
    error: Option<Error>,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

fn read(lock: &RwLock<Registry>) -> RwLockReadGuard<'_, Registry> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

impl ServerBuilder {
    /// Records the first registration error; `build` reports it.
    fn fail(&mut self, error: Error) {
        if self.error.is_none() {
            self.error = Some(error);
        }
    }

    /// Sets the instructions clients may show the model (`server/discover`).
    #[must_use]
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Adds a tool. A duplicate name or an invalid definition is an error at `build`; a tool
    /// whose `x-mcp-header` annotations are invalid is dropped with a warning, as clients
    /// would drop it.
    #[must_use]
    pub fn tool(mut self, tool: Result<ToolDef, Error>) -> Self {
        match tool {
            Ok(tool)
                if self
                    .registry
                    .tools
                    .iter()
                    .any(|t| t.tool.name == tool.tool.name) =>
            {
                let name = tool.tool.name.clone();
                self.fail(Error::Duplicate { kind: "tool", name });
            }
            Ok(tool) => self.registry.tools.push(Arc::new(tool)),
            Err(e @ Error::InvalidHeaderAnnotation { .. }) => {
                tracing::warn!(error = %e, "dropping the tool");
            }
            Err(e) => self.fail(e),
        }
        self
    }

    /// Adds a prompt.
    #[must_use]
    pub fn prompt(mut self, prompt: Result<PromptDef, Error>) -> Self {
        match prompt {
            Ok(p)
                if self
                    .registry
                    .prompts
                    .iter()
                    .any(|q| q.prompt.name == p.prompt.name) =>
            {
                let name = p.prompt.name.clone();
                self.fail(Error::Duplicate {
                    kind: "prompt",
                    name,
                });
            }
            Ok(p) => self.registry.prompts.push(Arc::new(p)),
            Err(e) => self.fail(e),
        }
        self
    }

    /// Adds a resource at a fixed URI.
    #[must_use]
    pub fn resource(mut self, resource: ResourceDef) -> Self {
        if self
            .registry
            .resources
            .iter()
            .any(|r| r.resource.uri == resource.resource.uri)
        {
            let name = resource.resource.uri.clone();
            self.fail(Error::Duplicate {
                kind: "resource",
                name,
            });
        } else {
            self.registry.resources.push(Arc::new(resource));
        }
        self
    }

    /// Adds a resource template.
    #[must_use]
    pub fn resource_template(mut self, template: Result<ResourceTemplateDef, Error>) -> Self {
        match template {
            Ok(t) => self.registry.templates.push(Arc::new(t)),
            Err(e) => self.fail(e),
        }
        self
    }

    /// Sets the handler of `completion/complete` (and declares the `completions`
    /// capability).
    #[must_use]
    pub fn completion<F, Fut>(mut self, complete: F) -> Self
    where
        F: Fn(CompleteRequestParams, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CompleteResultCompletion, ToolError>> + Send + 'static,
    {
        self.completion = Some(Arc::new(move |params, cx| Box::pin(complete(params, cx))));
        self
    }

    /// Adds an extension: advertised in `capabilities.extensions`, its methods served to
    /// requests that declare it.
    #[must_use]
    pub fn extension(mut self, extension: impl Extension) -> Self {
        self.extensions.push(Arc::new(extension));
        self
    }

    /// Declares the tools, prompts and resources capabilities even with nothing registered
    /// yet (for servers that add them at run time).
    #[must_use]
    pub fn enable(mut self, tools: bool, prompts: bool, resources: bool) -> Self {
        self.enable = (tools, prompts, resources);
        self
    }

    /// Sets the cache policy of every list, discover and read result.
    #[must_use]
    pub fn cache(mut self, policy: CachePolicy) -> Self {
        self.cache = [policy; 6];
        self
    }

    /// Sets the cache policy of one kind of result (for example a short TTL for
    /// `resources/read` and a long one for `tools/list`).
    #[must_use]
    pub fn cache_for(mut self, kind: CacheKind, policy: CachePolicy) -> Self {
        self.cache[kind as usize] = policy;
        self
    }

    /// Sets how many items a list page holds (default 100).
    #[must_use]
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = size.max(1);
        self
    }

    /// Sets the key that seals `requestState` (default: random per process). A fleet of
    /// servers behind a load balancer shares one key so any of them can take a retry.
    #[must_use]
    pub fn state_key(mut self, key: [u8; 32]) -> Self {
        self.state_key = Some(key);
        self
    }

    /// Builds the server, or reports the first invalid or duplicate definition.
    pub fn build(self) -> Result<Server, Error> {
        if let Some(error) = self.error {
            return Err(error);
        }
        let state_key = match self.state_key {
            Some(key) => StateKey::from_bytes(key),
            None => StateKey::random()?,
        };
        let mut capabilities = ServerCapabilities::new();
        let r = &self.registry;
        if !r.tools.is_empty() || self.enable.0 {
            let mut tools = mcp_types::ServerCapabilitiesTools::new();
            tools.list_changed = Some(true);
            capabilities.tools = Some(tools);
        }
        if !r.prompts.is_empty() || self.enable.1 {
            let mut prompts = mcp_types::ServerCapabilitiesPrompts::new();
            prompts.list_changed = Some(true);
            capabilities.prompts = Some(prompts);
        }
        if !r.resources.is_empty() || !r.templates.is_empty() || self.enable.2 {
            let mut resources = mcp_types::ServerCapabilitiesResources::new();
            resources.list_changed = Some(true);
            resources.subscribe = Some(true);
            capabilities.resources = Some(resources);
        }
        if self.completion.is_some() {
            capabilities.completions = Some(mcp_types::JsonObject::new());
        }
        capabilities.logging = Some(mcp_types::JsonObject::new());
        if !self.extensions.is_empty() {
            let mut extensions = mcp_types::JsonObject::new();
            for extension in &self.extensions {
                extensions.insert(
                    extension.id().to_owned(),
                    Value::Object(extension.settings()),
                );
            }
            capabilities.extensions = Some(extensions);
        }
        let (changes, _) = broadcast::channel(64);
        Ok(Server {
            inner: Arc::new(Inner {
                extensions: self.extensions,
                info: self.info,
                instructions: self.instructions,
                capabilities,
                registry: RwLock::new(self.registry),
                completion: self.completion,
                cache: self.cache,
                page_size: self.page_size,
                state_key,
                state_ttl: self.state_ttl,
                changes,
                shutdown: CancellationToken::new(),
            }),
        })
    }
}

/// Puts `item` in place of the entry with the same key, or at the end: a replacement keeps
/// its place, so list order stays stable.
fn upsert<T>(items: &mut Vec<Arc<T>>, item: T, key: impl Fn(&T) -> &String) -> bool {
    let item = Arc::new(item);
    match items.iter_mut().find(|t| key(t) == key(&item)) {
        Some(slot) => *slot = item,
        None => items.push(item),
    }
    true
}

/// Removes the entry keyed `name`; whether there was one.
fn remove<T>(items: &mut Vec<Arc<T>>, name: &str, key: impl Fn(&T) -> &String) -> bool {
    let before = items.len();
    items.retain(|t| key(t) != name);
    before != items.len()
}

/// A result type that carries `_meta`.
trait HasMeta {
    fn set_meta(&mut self, meta: ResultMetaObject);
}

macro_rules! has_meta {
    ($($t:ty),*) => {$(
        impl HasMeta for $t {
            fn set_meta(&mut self, meta: ResultMetaObject) {
                self.meta = Some(meta);
            }
        }
    )*};
}

has_meta!(
    DiscoverResult,
    ListToolsResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceResult,
    GetPromptResult,
    mcp_types::CallToolResult,
    CompleteResult,
    InputRequiredResult
);

fn invalid(message: impl Into<String>) -> ErrorObject {
    ErrorObject::invalid_params(message)
}

fn parse<T: serde::de::DeserializeOwned>(params: &str) -> Result<T, ErrorObject> {
    serde_json::from_str(params).map_err(|e| invalid(format!("invalid params: {e}")))
}

fn to_raw(value: &impl Serialize) -> Result<Box<RawValue>, ErrorObject> {
    serde_json::value::to_raw_value(value)
        .map_err(|e| ErrorObject::internal(format!("cannot encode the result: {e}")))
}

/// Whether `inputResponses` is present but `null`, which the schema does not allow (an
/// absent member reads as `None` as well, so it is checked apart).
#[derive(serde::Deserialize)]
struct NullCheck {
    #[serde(default, rename = "inputResponses", deserialize_with = "present")]
    input_responses: Option<Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    <Value as serde::Deserialize>::deserialize(d).map(Some)
}

fn check_input_responses(params: &str) -> Result<(), ErrorObject> {
    match serde_json::from_str::<NullCheck>(params) {
        Ok(NullCheck {
            input_responses: Some(Value::Null),
        }) => Err(invalid("inputResponses must be an object")),
        _ => Ok(()),
    }
}

/// The `_meta` every request must carry, read before anything else.
#[derive(serde::Deserialize)]
struct MetaOnly {
    #[serde(rename = "_meta")]
    meta: RequestMetaObject,
}

/// The range of one page of `len` items and the cursor of the next, from an opaque cursor
/// (`offset:N`, base64url); an invalid cursor is -32602.
fn page(
    len: usize,
    cursor: Option<&str>,
    size: usize,
) -> Result<(std::ops::Range<usize>, Option<String>), ErrorObject> {
    let start = match cursor {
        None => 0,
        Some(cursor) => URL_SAFE_NO_PAD
            .decode(cursor)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .and_then(|text| {
                text.strip_prefix("offset:")
                    .and_then(|n| n.parse::<usize>().ok())
            })
            .filter(|&n| n <= len)
            .ok_or_else(|| invalid("invalid cursor"))?,
    };
    let end = start.saturating_add(size).min(len);
    let next = (end < len).then(|| URL_SAFE_NO_PAD.encode(format!("offset:{end}")));
    Ok((start..end, next))
}

/// A list result: its items, its cursor and its cache hints.
trait Listing: Serialize + HasMeta {
    type Item;
    fn assemble(items: Vec<Self::Item>, next: Option<String>, cache: CachePolicy) -> Self;
}

macro_rules! listing {
    ($($t:ty => $item:ty),*) => {$(
        impl Listing for $t {
            type Item = $item;
            fn assemble(items: Vec<$item>, next: Option<String>, cache: CachePolicy) -> Self {
                let mut result = <$t>::new(items);
                result.next_cursor = next;
                result.ttl_ms = Some(cache.ttl_ms);
                result.cache_scope = Some(cache.scope);
                result
            }
        }
    )*};
}

listing!(
    ListToolsResult => mcp_types::Tool,
    ListPromptsResult => mcp_types::Prompt,
    ListResourcesResult => mcp_types::Resource,
    ListResourceTemplatesResult => mcp_types::ResourceTemplate
);

impl Server {
    /// Starts building a server that introduces itself as `name` `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            extensions: Vec::new(),
            info: Implementation::new(name, version),
            instructions: None,
            registry: Registry::default(),
            completion: None,
            cache: [CachePolicy::default(); 6],
            page_size: 100,
            state_key: None,
            state_ttl: Duration::from_mins(10),
            enable: (false, false, false),
            error: None,
        }
    }

    /// The server's identity.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The capabilities `server/discover` reports.
    pub fn capabilities(&self) -> &ServerCapabilities {
        &self.inner.capabilities
    }

    /// The `Mcp-Param-*` headers of a tool, for the HTTP transport's checks.
    pub fn param_headers(&self, tool: &str) -> Vec<ParamHeader> {
        read(&self.inner.registry)
            .tools
            .iter()
            .find(|t| t.tool.name == tool)
            .map(|t| t.headers.clone())
            .unwrap_or_default()
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Registry> {
        self.inner
            .registry
            .write()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Applies `edit` to the registry and, if it changed anything, tells listeners.
    fn edit(&self, change: Change, edit: impl FnOnce(&mut Registry) -> bool) -> bool {
        let changed = edit(&mut self.write());
        if changed {
            let _ = self.inner.changes.send(change);
        }
        changed
    }

    /// Adds (or replaces) a tool at run time; listeners hear `tools/list_changed`.
    pub fn add_tool(&self, tool: ToolDef) {
        self.edit(Change::Tools, |r| {
            upsert(&mut r.tools, tool, |t| &t.tool.name)
        });
    }

    /// The tool named `name`, for re-registering it unchanged (which notifies listeners).
    pub fn tool(&self, name: &str) -> Option<ToolDef> {
        read(&self.inner.registry)
            .tools
            .iter()
            .find(|t| t.tool.name == name)
            .map(|t| (**t).clone())
    }

    /// The prompt named `name`.
    pub fn prompt(&self, name: &str) -> Option<PromptDef> {
        read(&self.inner.registry)
            .prompts
            .iter()
            .find(|p| p.prompt.name == name)
            .map(|p| (**p).clone())
    }

    /// Removes a tool; listeners hear `tools/list_changed`. Returns whether it existed.
    pub fn remove_tool(&self, name: &str) -> bool {
        self.edit(Change::Tools, |r| {
            remove(&mut r.tools, name, |t| &t.tool.name)
        })
    }

    /// Adds (or replaces) a prompt at run time; listeners hear `prompts/list_changed`.
    pub fn add_prompt(&self, prompt: PromptDef) {
        self.edit(Change::Prompts, |r| {
            upsert(&mut r.prompts, prompt, |p| &p.prompt.name)
        });
    }

    /// Adds (or replaces) a resource at run time; listeners hear
    /// `resources/list_changed`.
    pub fn add_resource(&self, resource: ResourceDef) {
        self.edit(Change::Resources, |r| {
            upsert(&mut r.resources, resource, |x| &x.resource.uri)
        });
    }

    /// Removes a prompt; listeners hear `prompts/list_changed`. Returns whether it existed.
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.edit(Change::Prompts, |r| {
            remove(&mut r.prompts, name, |p| &p.prompt.name)
        })
    }

    /// Removes a resource; listeners hear `resources/list_changed`. Returns whether it
    /// existed.
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.edit(Change::Resources, |r| {
            remove(&mut r.resources, uri, |x| &x.resource.uri)
        })
    }

    /// Adds a resource template at run time; listeners hear `resources/list_changed`.
    pub fn add_resource_template(&self, template: ResourceTemplateDef) {
        self.edit(Change::Resources, |r| {
            r.templates.push(Arc::new(template));
            true
        });
    }

    /// Tells listeners subscribed to `uri` that the resource changed.
    pub fn resource_updated(&self, uri: impl Into<String>) {
        let _ = self.inner.changes.send(Change::Updated(uri.into()));
    }

    /// Ends every `subscriptions/listen` stream with its result. Call it before shutting a
    /// transport down, so that listeners receive the graceful-close result
    /// (`docs/2026-07-28/basic/patterns/subscriptions.mdx`) rather than a dropped stream.
    pub fn close_subscriptions(&self) {
        self.inner.shutdown.cancel();
    }

    /// Serves on stdin and stdout until the client closes stdin.
    #[cfg(feature = "stdio")]
    pub async fn serve_stdio(self) {
        let (_peer, connection) =
            mcp_transport_stdio::serve(self, mcp_jsonrpc::PeerConfig::default());
        connection.closed().await;
    }

    fn result_meta(&self) -> ResultMetaObject {
        let mut meta = ResultMetaObject::new();
        meta.server_info = Some(self.inner.info.clone());
        meta
    }

    fn complete<T: Serialize + HasMeta>(
        &self,
        mut result: T,
    ) -> Result<Box<RawValue>, ErrorObject> {
        result.set_meta(self.result_meta());
        to_raw(&result)
    }

    /// Serves one request (what the [`Handler`] implementation calls).
    pub async fn handle(
        &self,
        request: Request,
        rpc: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let method = request.method.as_str();
        let capabilities = &self.inner.capabilities;
        let allowed = match method {
            method::SERVER_DISCOVER | method::SUBSCRIPTIONS_LISTEN => true,
            method::TOOLS_LIST | method::TOOLS_CALL => capabilities.tools.is_some(),
            method::PROMPTS_LIST | method::PROMPTS_GET => capabilities.prompts.is_some(),
            method::RESOURCES_LIST | method::RESOURCES_TEMPLATES_LIST | method::RESOURCES_READ => {
                capabilities.resources.is_some()
            }
            method::COMPLETION_COMPLETE => capabilities.completions.is_some(),
            // Everything else is an extension's, or not a method of this revision (the
            // removed legacy methods included: `initialize`, `ping`, `logging/setLevel`,
            // `resources/subscribe`).
            _ => self.extension_for(method).is_some(),
        };
        if !allowed {
            return Err(ErrorObject::method_not_found(method));
        }
        let params = request.params.as_deref().map_or("", RawValue::get);
        if params.is_empty() {
            return Err(invalid("params with `_meta` are required"));
        }
        let meta = serde_json::from_str::<MetaOnly>(params)
            .map_err(|e| invalid(format!("missing or invalid `_meta`: {e}")))?
            .meta;
        if !SUPPORTED_VERSIONS.contains(&meta.protocol_version.as_str()) {
            return Err(ErrorObject::new(
                ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                format!("unsupported protocol version {:?}", meta.protocol_version),
            )
            .with_data(serde_json::json!({ "supported": SUPPORTED_VERSIONS, "requested": meta.protocol_version })));
        }
        match method {
            method::SERVER_DISCOVER => self.discover(),
            method::TOOLS_LIST => self.list_tools(params),
            method::PROMPTS_LIST => self.list_prompts(params),
            method::RESOURCES_LIST => self.list_resources(params),
            method::RESOURCES_TEMPLATES_LIST => self.list_templates(params),
            method::TOOLS_CALL => {
                check_input_responses(params)?;
                self.call_tool(params, rpc, meta).await
            }
            method::PROMPTS_GET => {
                check_input_responses(params)?;
                self.get_prompt(params, rpc, meta).await
            }
            method::RESOURCES_READ => {
                check_input_responses(params)?;
                self.read_resource(params, rpc, meta).await
            }
            method::COMPLETION_COMPLETE => {
                self.complete_argument(params, Context::new(rpc, meta, None, None))
                    .await
            }
            method::SUBSCRIPTIONS_LISTEN => self.listen(params, rpc).await,
            _ => match self.extension_for(method) {
                Some(extension) => {
                    let declared = meta
                        .client_capabilities
                        .extensions
                        .as_ref()
                        .is_some_and(|e| e.contains_key(extension.id()));
                    if !declared {
                        let mut required = mcp_types::ClientCapabilities::new();
                        let mut extensions = mcp_types::JsonObject::new();
                        extensions.insert(
                            extension.id().to_owned(),
                            Value::Object(mcp_types::JsonObject::new()),
                        );
                        required.extensions = Some(extensions);
                        return Err(match ToolError::missing_capability(&required) {
                            ToolError::Protocol(e) => e,
                            other => ErrorObject::internal(other.to_string()),
                        });
                    }
                    let params = request.params.unwrap_or_default();
                    extension
                        .handle(method, params, Context::new(rpc, meta, None, None))
                        .await
                }
                None => Err(ErrorObject::method_not_found(method)),
            },
        }
    }

    fn extension_for(&self, method: &str) -> Option<Arc<dyn Extension>> {
        self.inner
            .extensions
            .iter()
            .find(|e| e.methods().contains(&method))
            .cloned()
    }

    fn discover(&self) -> Result<Box<RawValue>, ErrorObject> {
        let mut result = DiscoverResult::new(
            self.inner.capabilities.clone(),
            SUPPORTED_VERSIONS.iter().map(|v| (*v).to_owned()).collect(),
        );
        result.instructions.clone_from(&self.inner.instructions);
        result.ttl_ms = Some(self.inner.cache[CacheKind::Discover as usize].ttl_ms);
        result.cache_scope = Some(self.inner.cache[CacheKind::Discover as usize].scope);
        self.complete(result)
    }

    fn cursor(params: &str) -> Result<Option<String>, ErrorObject> {
        Ok(parse::<PaginatedRequestParams>(params)?.cursor)
    }

    /// A page of one of the four lists, with its cursor and cache hints; only the page's
    /// items are cloned out of the registry.
    fn list<L: Listing>(
        &self,
        params: &str,
        kind: CacheKind,
        len: impl FnOnce(&Registry) -> usize,
        items: impl FnOnce(&Registry, std::ops::Range<usize>) -> Vec<L::Item>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let cursor = Self::cursor(params)?;
        let registry = read(&self.inner.registry);
        let (range, next) = page(len(&registry), cursor.as_deref(), self.inner.page_size)?;
        let page = items(&registry, range);
        drop(registry);
        self.complete(L::assemble(page, next, self.inner.cache[kind as usize]))
    }

    fn list_tools(&self, params: &str) -> Result<Box<RawValue>, ErrorObject> {
        self.list::<ListToolsResult>(
            params,
            CacheKind::Tools,
            |r| r.tools.len(),
            |r, range| r.tools[range].iter().map(|t| t.tool.clone()).collect(),
        )
    }

    fn list_prompts(&self, params: &str) -> Result<Box<RawValue>, ErrorObject> {
        self.list::<ListPromptsResult>(
            params,
            CacheKind::Prompts,
            |r| r.prompts.len(),
            |r, range| r.prompts[range].iter().map(|p| p.prompt.clone()).collect(),
        )
    }

    fn list_resources(&self, params: &str) -> Result<Box<RawValue>, ErrorObject> {
        self.list::<ListResourcesResult>(
            params,
            CacheKind::Resources,
            |r| r.resources.len(),
            |r, range| {
                r.resources[range]
                    .iter()
                    .map(|x| x.resource.clone())
                    .collect()
            },
        )
    }

    fn list_templates(&self, params: &str) -> Result<Box<RawValue>, ErrorObject> {
        self.list::<ListResourceTemplatesResult>(
            params,
            CacheKind::ResourceTemplates,
            |r| r.templates.len(),
            |r, range| {
                r.templates[range]
                    .iter()
                    .map(|t| t.template.clone())
                    .collect()
            },
        )
    }

    /// Opens the `requestState` of a retry, if any: the handler's own state, and the
    /// answers of earlier rounds, merged with this round's (which win). A client answers
    /// only the questions of the last round, so the server carries the earlier answers in
    /// the sealed state; the handler then sees every answer it was ever given.
    fn resume(
        &self,
        binding: &Binding<'_>,
        sealed: Option<&str>,
        fresh: Option<InputResponses>,
    ) -> Result<(Option<Value>, Option<InputResponses>), ErrorObject> {
        let Some(sealed) = sealed else {
            return Ok((None, fresh));
        };
        let carried = self
            .inner
            .state_key
            .open(binding, sealed)
            .map_err(|e| invalid(e.message()))?;
        let handler_state = carried.get("h").cloned().filter(|v| !v.is_null());
        let mut answers: InputResponses = carried
            .get("a")
            .cloned()
            .and_then(|a| serde_json::from_value(a).ok())
            .unwrap_or_default();
        for (key, answer) in fresh.into_iter().flatten() {
            answers.insert(key, answer);
        }
        Ok((handler_state, (!answers.is_empty()).then_some(answers)))
    }

    /// Turns a handler's outcome into the response: a result, `input_required` with the
    /// questions it asked and a sealed state, or an error.
    fn finish<T: Serialize + HasMeta>(
        &self,
        outcome: Result<T, ToolError>,
        cx: &Context,
        binding: &Binding<'_>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        match outcome {
            Ok(result) => self.complete(result),
            Err(ToolError::InputRequired) => {
                let asked = cx.take_asked();
                if let Some(ToolError::Protocol(error)) = missing_capability(&asked) {
                    return Err(error);
                }
                let mut result = InputRequiredResult::new();
                result.result_type = ResultType::InputRequired;
                if !asked.requests.is_empty() {
                    result.input_requests =
                        Some(asked.requests.into_iter().collect::<OrderedMap<_>>());
                }
                // The handler's state (kept from the last round unless it set a new one) and every
                // answer so far travel in the sealed state.
                let handler_state = asked
                    .state
                    .or_else(|| cx.state().cloned())
                    .unwrap_or(Value::Null);
                let answers = cx
                    .responses()
                    .map_or(Value::Null, |r| serde_json::to_value(r).unwrap_or_default());
                let state = serde_json::json!({ "h": handler_state, "a": answers });
                result.request_state = Some(self.inner.state_key.seal(
                    binding,
                    &state,
                    self.inner.state_ttl,
                ));
                self.complete(result)
            }
            Err(ToolError::Protocol(error)) => Err(error),
            Err(ToolError::Failed(message)) => Err(ErrorObject::internal(message)),
        }
    }

    async fn call_tool(
        &self,
        params: &str,
        rpc: RequestContext,
        meta: RequestMetaObject,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let params: CallToolRequestParams = parse(params)?;
        let tool = read(&self.inner.registry)
            .tools
            .iter()
            .find(|t| t.tool.name == params.name)
            .cloned()
            .ok_or_else(|| invalid(format!("unknown tool {:?}", params.name)))?;
        let arguments = Value::Object(params.arguments.unwrap_or_default());
        let binding = Binding {
            method: method::TOOLS_CALL,
            name: &params.name,
            arguments: Some(&arguments),
        };
        let (state, responses) = self.resume(
            &binding,
            params.request_state.as_deref(),
            params.input_responses,
        )?;
        let cx = Context::new(rpc, meta, responses, state);
        let outcome = tool.call(arguments.clone(), cx.clone()).await;
        self.finish(outcome, &cx, &binding)
    }

    async fn get_prompt(
        &self,
        params: &str,
        rpc: RequestContext,
        meta: RequestMetaObject,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let params: GetPromptRequestParams = parse(params)?;
        let prompt = read(&self.inner.registry)
            .prompts
            .iter()
            .find(|p| p.prompt.name == params.name)
            .cloned()
            .ok_or_else(|| invalid(format!("unknown prompt {:?}", params.name)))?;
        let arguments: OrderedMap<String> = params.arguments.clone().unwrap_or_default();
        for argument in prompt.prompt.arguments.iter().flatten() {
            if argument.required == Some(true) && !arguments.contains_key(&argument.name) {
                return Err(invalid(format!(
                    "missing required argument {:?}",
                    argument.name
                )));
            }
        }
        let args_value = serde_json::to_value(&arguments).unwrap_or_default();
        let binding = Binding {
            method: method::PROMPTS_GET,
            name: &params.name,
            arguments: Some(&args_value),
        };
        let (state, responses) = self.resume(
            &binding,
            params.request_state.as_deref(),
            params.input_responses,
        )?;
        let cx = Context::new(rpc, meta, responses, state);
        let outcome = (prompt.get)(arguments, cx.clone()).await;
        self.finish(outcome, &cx, &binding)
    }

    async fn read_resource(
        &self,
        params: &str,
        rpc: RequestContext,
        meta: RequestMetaObject,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let params: ReadResourceRequestParams = parse(params)?;
        let (read_fn, vars) = {
            let registry = read(&self.inner.registry);
            if let Some(resource) = registry
                .resources
                .iter()
                .find(|r| r.resource.uri == params.uri)
            {
                (Arc::clone(&resource.read), OrderedMap::new())
            } else if let Some((template, vars)) = registry
                .templates
                .iter()
                .find_map(|t| t.pattern.matches(&params.uri).map(|v| (t, v)))
            {
                (Arc::clone(&template.read), vars)
            } else {
                return Err(invalid(format!("unknown resource {:?}", params.uri))
                    .with_data(serde_json::json!({ "uri": params.uri })));
            }
        };
        let binding = Binding {
            method: method::RESOURCES_READ,
            name: &params.uri,
            arguments: None,
        };
        let (state, responses) = self.resume(
            &binding,
            params.request_state.as_deref(),
            params.input_responses,
        )?;
        let cx = Context::new(rpc, meta, responses, state);
        let outcome = read_fn(params.uri.clone(), vars, cx.clone())
            .await
            .map(|contents| {
                let mut result = ReadResourceResult::new(contents);
                result.ttl_ms = Some(self.inner.cache[CacheKind::Read as usize].ttl_ms);
                result.cache_scope = Some(self.inner.cache[CacheKind::Read as usize].scope);
                result
            });
        self.finish(outcome, &cx, &binding)
    }

    async fn complete_argument(
        &self,
        params: &str,
        cx: Context,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let params: CompleteRequestParams = parse(params)?;
        let Some(complete) = &self.inner.completion else {
            return Err(ErrorObject::method_not_found(method::COMPLETION_COMPLETE));
        };
        match complete(params, cx).await {
            Ok(mut completion) => {
                completion.values.truncate(100);
                self.complete(CompleteResult::new(completion))
            }
            Err(ToolError::Protocol(error)) => Err(error),
            Err(other) => Err(ErrorObject::internal(other.to_string())),
        }
    }

    /// `subscriptions/listen` (`docs/2026-07-28/basic/patterns/subscriptions.mdx`): the
    /// acknowledgement first, then the changes the client opted into, each tagged with the
    /// subscription id; the result only when the server closes the stream.
    async fn listen(
        &self,
        params: &str,
        rpc: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let params: SubscriptionsListenRequestParams = parse(params)?;
        let caps = &self.inner.capabilities;
        let asked = &params.notifications;
        let mut honoured = SubscriptionFilter::new();
        honoured.tools_list_changed = asked
            .tools_list_changed
            .filter(|&on| on && caps.tools.is_some());
        honoured.prompts_list_changed = asked
            .prompts_list_changed
            .filter(|&on| on && caps.prompts.is_some());
        honoured.resources_list_changed = asked
            .resources_list_changed
            .filter(|&on| on && caps.resources.is_some());
        honoured.resource_subscriptions = asked
            .resource_subscriptions
            .clone()
            .filter(|_| caps.resources.is_some());
        let id = rpc.id().clone();
        let tag = serde_json::json!({ "io.modelcontextprotocol/subscriptionId": id });
        let mut changes = self.inner.changes.subscribe();
        let ack = serde_json::json!({ "notifications": honoured, "_meta": tag });
        rpc.notify(method::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED, Some(&ack))
            .await
            .map_err(|e| ErrorObject::internal(e.to_string()))?;
        loop {
            let change = tokio::select! {
                () = rpc.cancellation().cancelled() => return Err(ErrorObject::internal("cancelled")),
                () = self.inner.shutdown.cancelled() => break,
                change = changes.recv() => change,
            };
            let wanted: Vec<(&str, Value)> = match change {
                Ok(Change::Tools) if honoured.tools_list_changed == Some(true) => {
                    vec![(
                        method::NOTIFICATIONS_TOOLS_LIST_CHANGED,
                        serde_json::json!({ "_meta": tag }),
                    )]
                }
                Ok(Change::Prompts) if honoured.prompts_list_changed == Some(true) => {
                    vec![(
                        method::NOTIFICATIONS_PROMPTS_LIST_CHANGED,
                        serde_json::json!({ "_meta": tag }),
                    )]
                }
                Ok(Change::Resources) if honoured.resources_list_changed == Some(true) => {
                    vec![(
                        method::NOTIFICATIONS_RESOURCES_LIST_CHANGED,
                        serde_json::json!({ "_meta": tag }),
                    )]
                }
                Ok(Change::Updated(uri))
                    if honoured
                        .resource_subscriptions
                        .as_ref()
                        .is_some_and(|subs| subs.iter().any(|s| uri.starts_with(s.as_str()))) =>
                {
                    vec![(
                        method::NOTIFICATIONS_RESOURCES_UPDATED,
                        serde_json::json!({ "uri": uri, "_meta": tag }),
                    )]
                }
                // A listener that fell behind lost changes: it hears every list it follows
                // changed, which is always safe to act on.
                Err(broadcast::error::RecvError::Lagged(_)) => [
                    (
                        honoured.tools_list_changed,
                        method::NOTIFICATIONS_TOOLS_LIST_CHANGED,
                    ),
                    (
                        honoured.prompts_list_changed,
                        method::NOTIFICATIONS_PROMPTS_LIST_CHANGED,
                    ),
                    (
                        honoured.resources_list_changed,
                        method::NOTIFICATIONS_RESOURCES_LIST_CHANGED,
                    ),
                ]
                .into_iter()
                .filter(|(on, _)| *on == Some(true))
                .map(|(_, m)| (m, serde_json::json!({ "_meta": tag })))
                .collect(),
                Err(broadcast::error::RecvError::Closed) => break,
                Ok(_) => Vec::new(),
            };
            for (method, params) in wanted {
                if rpc.notify(method, Some(&params)).await.is_err() {
                    return Err(ErrorObject::internal("the stream closed"));
                }
            }
        }
        let mut meta = SubscriptionsListenResultMetaObject::new(id);
        meta.server_info = Some(self.inner.info.clone());
        to_raw(&SubscriptionsListenResult::new(meta))
    }
}

impl Handler for Server {
    async fn request(
        &self,
        request: Request,
        rpc: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        self.handle(request, rpc).await
    }
}
