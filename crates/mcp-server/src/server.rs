//! The server: a registry of tools, resources and prompts, and the dispatch of every
//! 2026-07-28 request to them (<https://modelcontextprotocol.io/specification/2026-07-28/server>, <https://modelcontextprotocol.io/specification/2026-07-28/basic>).

use memchr::memmem::Finder;
use std::sync::{Arc, LazyLock, PoisonError, RwLock, RwLockReadGuard};
use std::time::Duration;

use crate::bus::{Bus, Change};
use crate::context::Context;
use crate::error::{Error, ToolError};
use crate::extension::Extension;
use crate::limits::{Limits, ListenStreams};
use crate::prompt::PromptDef;
use crate::resource::{ResourceDef, ResourceTemplateDef};
use crate::state::StateKeys;
use crate::tool::{BoxFuture, ParamHeader, ToolDef};
use mcp_jsonrpc::{CancellationToken, ErrorObject, Handler, Request, RequestContext};
use mcp_types::{
    CacheScope, CompleteRequestParams, CompleteResult, CompleteResultCompletion, DiscoverResult,
    ErrorCode, GetPromptResult, Implementation, InputRequiredResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, ReadResourceResult,
    RequestMetaObject, ResultMetaObject, ServerCapabilities, method,
};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

pub use builder::ServerBuilder;

mod apps;
mod builder;
mod calls;
mod listen;
mod lists;
#[cfg(feature = "skills")]
mod skills;
mod task_listen;
mod task_outcome;
mod tasks;

/// The protocol versions the core serves (the legacy ones are `mcp-legacy`'s).
pub const SUPPORTED_VERSIONS: &[&str] = &["2026-07-28"];

type CompletionFn = Arc<
    dyn Fn(CompleteRequestParams, Context) -> BoxFuture<Result<CompleteResultCompletion, ToolError>>
        + Send
        + Sync,
>;

/// How long clients may cache a list or read result, and for whom
/// (<https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching>).
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

#[derive(Default)]
struct Registry {
    tools: Vec<Arc<ToolDef>>,
    prompts: Vec<Arc<PromptDef>>,
    resources: Vec<Arc<ResourceDef>>,
    templates: Vec<Arc<ResourceTemplateDef>>,
    /// The pages of `tools/list` written so far, until the registry next changes.
    tool_pages: lists::Pages,
}

struct Inner {
    extensions: Vec<Arc<dyn Extension>>,
    tasks: Option<Arc<tasks::TaskEngine>>,
    #[cfg(feature = "skills")]
    skills: Option<Arc<skills::SkillsEngine>>,
    info: Implementation,
    /// `{"io.modelcontextprotocol/serverInfo": info}`, serialized once: the `_meta` of
    /// every result that has none of its own (`None` only if it could not be
    /// serialized, which a name, a version and JSON values never fail).
    meta_json: Option<Box<RawValue>>,
    /// Changed at run time by [`Server::set_instructions`].
    instructions: RwLock<Option<String>>,
    capabilities: ServerCapabilities,
    registry: RwLock<Registry>,
    completion: Option<CompletionFn>,
    cache: [Option<CachePolicy>; 6],
    page_size: usize,
    state_keys: StateKeys,
    state_ttl: Duration,
    /// Where changes are published and `subscriptions/listen` streams hear them.
    changes: Bus,
    shutdown: CancellationToken,
    limits: Limits,
    listen_streams: ListenStreams,
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

fn read(lock: &RwLock<Registry>) -> RwLockReadGuard<'_, Registry> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
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

/// A copy of the entry keyed `name`.
fn find<T: Clone>(items: &[Arc<T>], name: &str, key: impl Fn(&T) -> &String) -> Option<T> {
    items.iter().find(|t| key(t) == name).map(|t| T::clone(t))
}

/// Removes the entry keyed `name`; whether there was one.
fn remove<T>(items: &mut Vec<Arc<T>>, name: &str, key: impl Fn(&T) -> &String) -> bool {
    let before = items.len();
    items.retain(|t| key(t) != name);
    before != items.len()
}

/// A result type that carries `_meta`.
trait HasMeta {
    fn meta_mut(&mut self) -> &mut Option<ResultMetaObject>;

    /// The result written as the initialize era has it (without `resultType` and the
    /// server's `_meta`), for a result that can be; `None` leaves the shape to the caller
    /// (`mcp-legacy`, which reads it).
    fn legacy(&self) -> Option<Result<Box<RawValue>, serde_json::Error>> {
        None
    }
}

impl<T: HasMeta> HasMeta for Box<T> {
    fn meta_mut(&mut self) -> &mut Option<ResultMetaObject> {
        (**self).meta_mut()
    }

    fn legacy(&self) -> Option<Result<Box<RawValue>, serde_json::Error>> {
        (**self).legacy()
    }
}

macro_rules! has_meta {
    ($($t:ty),*) => {$(
        impl HasMeta for $t {
            fn meta_mut(&mut self) -> &mut Option<ResultMetaObject> {
                &mut self.meta
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
    CompleteResult,
    InputRequiredResult
);

impl HasMeta for mcp_types::CallToolResult {
    fn meta_mut(&mut self) -> &mut Option<ResultMetaObject> {
        &mut self.meta
    }

    /// A tool's result without a `_meta` of its own (most are), written with the members
    /// the initialize era defines: what a legacy session's client gets, written once.
    fn legacy(&self) -> Option<Result<Box<RawValue>, serde_json::Error>> {
        #[derive(Serialize)]
        struct LegacyCallToolResult<'a> {
            content: &'a [mcp_types::ContentBlock],
            #[serde(rename = "isError", skip_serializing_if = "Option::is_none")]
            is_error: Option<bool>,
            #[serde(rename = "structuredContent", skip_serializing_if = "Option::is_none")]
            structured_content: Option<&'a Value>,
        }
        if self.meta.is_some() {
            return None;
        }
        Some(mcp_json::to_raw_value(&LegacyCallToolResult {
            content: &self.content,
            is_error: self.is_error,
            structured_content: self.structured_content.as_ref(),
        }))
    }
}

/// -32021 naming the extension `id` as the missing client capability.
fn missing_extension(id: &str) -> ErrorObject {
    let mut required = mcp_types::ClientCapabilities::new();
    let mut extensions = mcp_types::JsonObject::new();
    extensions.insert(id.to_owned(), Value::Object(mcp_types::JsonObject::new()));
    required.extensions = Some(extensions);
    match ToolError::missing_capability(&required) {
        ToolError::Protocol(e) => e,
        other => ErrorObject::internal(other.to_string()),
    }
}

fn invalid(message: impl Into<String>) -> ErrorObject {
    ErrorObject::invalid_params(message)
}

fn parse<T: serde::de::DeserializeOwned>(params: &str) -> Result<T, ErrorObject> {
    serde_json::from_str(params).map_err(|e| invalid(format!("invalid params: {e}")))
}

fn to_raw(value: &impl Serialize) -> Result<Box<RawValue>, ErrorObject> {
    mcp_json::to_raw_value(value)
        .map_err(|e| ErrorObject::internal(format!("cannot encode the result: {e}")))
}

/// Whether `inputResponses` is present but `null`, which the schema does not allow (an
/// absent member reads as `None` as well, so it is checked apart).
#[derive(serde::Deserialize)]
struct NullCheck {
    #[serde(default, rename = "inputResponses")]
    input_responses: Member<serde::de::IgnoredAny>,
}

/// An optional member as written: absent, `null`, or a value (serde reads both of the
/// first two into `None`).
#[derive(Default)]
pub(super) enum Member<T> {
    #[default]
    Absent,
    Null,
    Given(T),
}

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Member<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Option::<T>::deserialize(d).map(|value| value.map_or(Member::Null, Member::Given))
    }
}

impl<T> Member<T> {
    pub(super) fn into_option(self) -> Option<T> {
        match self {
            Member::Given(value) => Some(value),
            Member::Absent | Member::Null => None,
        }
    }
}

fn check_input_responses(params: &str) -> Result<(), ErrorObject> {
    // Most requests carry no `inputResponses`: a scan for the key (and for a `\u` escape,
    // which could spell it otherwise) spares them a second parse of their params. The
    // scans are SIMD substring searches, cheap next to a parse even for large arguments.
    static KEY: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"inputResponses"));
    static ESCAPE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\\u"));
    let bytes = params.as_bytes();
    if KEY.find(bytes).is_none() && ESCAPE.find(bytes).is_none() {
        return Ok(());
    }
    match serde_json::from_str::<NullCheck>(params) {
        Ok(NullCheck {
            input_responses: Member::Null,
        }) => Err(invalid("inputResponses must be an object")),
        _ => Ok(()),
    }
}

/// A request's `_meta`, read on its own and checked: present, well formed, and of a
/// protocol version this server speaks.
pub(crate) fn meta_only(params: &str) -> Result<RequestMetaObject, ErrorObject> {
    let meta = serde_json::from_str::<MetaOnly>(params)
        .map_err(|e| invalid(format!("missing or invalid `_meta`: {e}")))?
        .meta;
    check_version(&meta)?;
    Ok(meta)
}

/// The longest `_meta` text [`request_meta`] remembers.
const REMEMBERED_META: usize = 4 << 10;

std::thread_local! {
    /// The last `_meta` read on this thread, with its text.
    static LAST_META: std::cell::RefCell<Option<(Box<str>, Arc<RequestMetaObject>)>> =
        const { std::cell::RefCell::new(None) };
}

/// A request's `_meta` from its text. A client sends the same `_meta` with every request,
/// so the last one read on this thread (up to [`REMEMBERED_META`] bytes) is kept with its
/// text and shared when the text is the same: comparing costs a fraction of the parse,
/// and sharing spares a copy of its 1 KB.
pub(crate) fn request_meta(raw: &RawValue) -> Result<Arc<RequestMetaObject>, serde_json::Error> {
    let text = raw.get();
    LAST_META.with_borrow_mut(|last| {
        if let Some((seen, meta)) = last
            && **seen == *text
        {
            return Ok(Arc::clone(meta));
        }
        let meta = Arc::new(serde_json::from_str::<RequestMetaObject>(text)?);
        if text.len() <= REMEMBERED_META {
            *last = Some((text.into(), Arc::clone(&meta)));
        }
        Ok(meta)
    })
}

/// The `_meta` last read on this thread ([`request_meta`]) if `text` begins with its text,
/// and the text after it. A JSON object's (or array's) text ends where the value ends, so
/// text that begins with the whole text of one holds that value there.
pub(crate) fn remembered_meta_prefix(text: &str) -> Option<(Arc<RequestMetaObject>, &str)> {
    LAST_META.with_borrow(|last| {
        let (seen, meta) = last.as_ref()?;
        let rest = text.strip_prefix(&**seen)?;
        Some((Arc::clone(meta), rest))
    })
}

/// Refuses a protocol version this server does not speak (-32022 with the supported ones).
pub(crate) fn check_version(meta: &RequestMetaObject) -> Result<(), ErrorObject> {
    if SUPPORTED_VERSIONS.contains(&meta.protocol_version.as_str()) {
        return Ok(());
    }
    Err(ErrorObject::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        format!("unsupported protocol version {:?}", meta.protocol_version),
    )
    .with_data(
        serde_json::json!({ "supported": SUPPORTED_VERSIONS, "requested": meta.protocol_version }),
    ))
}

/// The principal that made the request, when its transport authenticated it.
pub(crate) fn principal_of(rpc: &RequestContext) -> Option<&dyn mcp_jsonrpc::Principal> {
    rpc.transport_info()?.principal()
}

/// The `_meta` every request must carry, read before anything else.
#[derive(serde::Deserialize)]
struct MetaOnly {
    #[serde(rename = "_meta")]
    meta: RequestMetaObject,
}

impl Server {
    /// The server's identity.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The capabilities `server/discover` reports.
    pub fn capabilities(&self) -> &ServerCapabilities {
        &self.inner.capabilities
    }

    /// The key ring that seals this server's `requestState`: rotating it
    /// ([`StateKeys::rotate`]) takes effect on the running server.
    pub fn state_keys(&self) -> &StateKeys {
        &self.inner.state_keys
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

    /// The registry, to change; the pages written from it are forgotten.
    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Registry> {
        let mut registry = self
            .inner
            .registry
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        registry.tool_pages.clear();
        registry
    }

    /// Applies `edit` to the registry and, if it changed anything, tells listeners.
    fn edit(&self, change: Change, edit: impl FnOnce(&mut Registry) -> bool) -> bool {
        let changed = edit(&mut self.write());
        if changed {
            self.inner.changes.publish(change);
        }
        changed
    }

    /// Replaces the instructions `server/discover` reports (and an initialize-era
    /// session's `initialize` result, for sessions that start after this), for a server
    /// whose situation changes: a gateway whose upstream went down, say.
    pub fn set_instructions(&self, instructions: Option<String>) {
        *self
            .inner
            .instructions
            .write()
            .unwrap_or_else(PoisonError::into_inner) = instructions;
    }

    /// Adds (or replaces) a tool at run time; listeners hear `tools/list_changed`.
    ///
    /// # Errors
    /// The error that makes the definition unusable ([`ToolDef::check`]); nothing changes
    /// then.
    pub fn add_tool(&self, tool: impl crate::IntoToolDef) -> Result<(), Error> {
        let tool = tool.into_tool_def()?;
        self.edit(Change::ToolsListChanged, |r| {
            upsert(&mut r.tools, tool, |t| &t.tool.name)
        });
        Ok(())
    }

    /// The tool named `name`, for re-registering it unchanged (which notifies listeners).
    pub fn tool(&self, name: &str) -> Option<ToolDef> {
        find(&read(&self.inner.registry).tools, name, |t| &t.tool.name)
    }

    /// The prompt named `name`.
    pub fn prompt(&self, name: &str) -> Option<PromptDef> {
        find(&read(&self.inner.registry).prompts, name, |p| {
            &p.prompt.name
        })
    }

    /// Removes a tool; listeners hear `tools/list_changed`. Returns whether it existed.
    pub fn remove_tool(&self, name: &str) -> bool {
        self.edit(Change::ToolsListChanged, |r| {
            remove(&mut r.tools, name, |t| &t.tool.name)
        })
    }

    /// Adds (or replaces) a prompt at run time; listeners hear `prompts/list_changed`.
    ///
    /// # Errors
    /// The error that makes the definition unusable ([`PromptDef::check`]); nothing
    /// changes then.
    pub fn add_prompt(&self, prompt: impl crate::IntoPromptDef) -> Result<(), Error> {
        let prompt = prompt.into_prompt_def()?;
        self.edit(Change::PromptsListChanged, |r| {
            upsert(&mut r.prompts, prompt, |p| &p.prompt.name)
        });
        Ok(())
    }

    /// Adds (or replaces) a resource at run time; listeners hear
    /// `resources/list_changed`.
    pub fn add_resource(&self, resource: ResourceDef) {
        self.edit(Change::ResourcesListChanged, |r| {
            upsert(&mut r.resources, resource, |x| &x.resource.uri)
        });
    }

    /// Removes a prompt; listeners hear `prompts/list_changed`. Returns whether it existed.
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.edit(Change::PromptsListChanged, |r| {
            remove(&mut r.prompts, name, |p| &p.prompt.name)
        })
    }

    /// Removes a resource; listeners hear `resources/list_changed`. Returns whether it
    /// existed.
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.edit(Change::ResourcesListChanged, |r| {
            remove(&mut r.resources, uri, |x| &x.resource.uri)
        })
    }

    /// Adds (or replaces) an MCP App's UI resource at run time (see [`crate::apps`]);
    /// listeners hear `resources/list_changed`. The extension is declared only if the
    /// server was built with a UI resource or a linked tool.
    pub fn add_ui_resource(&self, resource: crate::apps::UiResource) {
        self.add_resource(resource.into_def());
    }

    /// Adds a resource template at run time; listeners hear `resources/list_changed`.
    pub fn add_resource_template(&self, template: ResourceTemplateDef) {
        self.edit(Change::ResourcesListChanged, |r| {
            r.templates.push(Arc::new(template));
            true
        });
    }

    /// Tells listeners subscribed to `uri` that the resource changed.
    pub fn resource_updated(&self, uri: impl Into<String>) {
        self.inner
            .changes
            .publish(Change::ResourceUpdated { uri: uri.into() });
    }

    /// Ends every `subscriptions/listen` stream with its result. Call it before shutting a
    /// transport down, so that listeners receive the graceful-close result
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>) rather than a dropped stream.
    pub fn close_subscriptions(&self) {
        self.inner.shutdown.cancel();
    }

    /// Serves on stdin and stdout until the client closes stdin, to 2026-07-28 clients
    /// only: an `initialize` handshake gets -32601. To serve the clients that still open
    /// with `initialize` too, serve the server with `mcp::serve_stdio` (the `mcp` crate) or
    /// `mcp_legacy::server::DualEra`.
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

    /// Serializes a result with the server's `serverInfo` in its `_meta`
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/basic>, `_meta`: servers SHOULD include it on every
    /// response). A `_meta` the handler set is kept, with `serverInfo` added when it has
    /// none; without one, the server's `_meta`, serialized once, is written in front of
    /// the result's members.
    fn complete<T: Serialize + HasMeta>(
        &self,
        mut result: T,
    ) -> Result<Box<RawValue>, ErrorObject> {
        if crate::trace::in_legacy_session()
            && let Some(written) = result.legacy()
        {
            crate::trace::mark_shaped();
            return written
                .map_err(|e| ErrorObject::internal(format!("cannot encode the result: {e}")));
        }
        match (result.meta_mut(), &self.inner.meta_json) {
            (None, Some(meta)) => mcp_json::to_raw_object_led_by("_meta", meta, &result)
                .map_err(|e| ErrorObject::internal(format!("cannot encode the result: {e}"))),
            (meta, _) => {
                let meta = meta.get_or_insert_with(ResultMetaObject::new);
                if meta.server_info.is_none() {
                    meta.server_info = Some(self.inner.info.clone());
                }
                to_raw(&result)
            }
        }
    }

    /// Serves one request (what the [`Handler`] implementation calls), in a `tracing`
    /// span of its own ([`crate::trace`]).
    pub async fn handle(
        &self,
        request: Request,
        rpc: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        use tracing::Instrument as _;
        let span = crate::trace::request_span(&request, &rpc);
        #[cfg(feature = "metrics")]
        let (method, started) = (
            crate::metrics::method_label(&request.method),
            std::time::Instant::now(),
        );
        let answer = self.handle_unspanned(request, rpc).instrument(span).await;
        #[cfg(feature = "metrics")]
        crate::metrics::request(method, started, answer.is_ok());
        answer
    }

    async fn handle_unspanned(
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
        let Some(params) = request.params else {
            return Err(invalid("params with `_meta` are required"));
        };
        // The hottest method parses its params once, `_meta` and a `null`
        // `inputResponses` included (`Params`). The other methods
        // are boxed: this future (which the engine copies into a box of its own per
        // request) is then only as large as a `tools/call`'s, and the function that polls
        // it holds a `tools/call`'s code, 15 KB rather than 32 KB with every method's.
        if method == method::TOOLS_CALL {
            return self.call_tool(&params, rpc).await;
        }
        Box::pin(self.handle_other(method, params, rpc)).await
    }

    /// [`handle`](Self::handle) for every method but `tools/call`.
    async fn handle_other(
        &self,
        method: &str,
        params: mcp_jsonrpc::Params,
        rpc: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let raw = params.into_raw_value().map_err(|e| e.to_error_object())?;
        let params = raw.get();
        let meta = meta_only(params)?;
        crate::trace::record_version(&meta.protocol_version);
        let authenticated = principal_of(&rpc).is_some();
        match method {
            method::SERVER_DISCOVER => self.discover(),
            method::TOOLS_LIST => {
                self.list_tools(params, authenticated, crate::apps::renders_apps(&meta))
            }
            method::PROMPTS_LIST => self.list_prompts(params, authenticated),
            method::RESOURCES_LIST => {
                self.list_resources(params, authenticated, crate::apps::renders_apps(&meta))
            }
            method::RESOURCES_TEMPLATES_LIST => self.list_templates(params, authenticated),
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
            method::SUBSCRIPTIONS_LISTEN => {
                // `meta` (1 KB) ends before the wait, so that it takes no room in this
                // future while the stream lasts (likewise below).
                let listening = self.listen(params, rpc);
                drop(meta);
                listening.await
            }
            _ => match self.extension_for(method) {
                Some(extension) => {
                    let handling = {
                        let meta = meta;
                        let declared = !extension.requires_declaration()
                            || meta
                                .client_capabilities
                                .extensions
                                .as_ref()
                                .is_some_and(|e| e.contains_key(extension.id()));
                        if !declared {
                            return Err(missing_extension(extension.id()));
                        }
                        extension.handle(method, raw, Context::new(rpc, meta, None, None))
                    };
                    handling.await
                }
                None => Err(ErrorObject::method_not_found(method)),
            },
        }
    }

    /// The cache policy of `kind`: the one set for it, or the default, `private` for the
    /// lists and reads of an `authenticated` request (`server/discover` describes the
    /// server, the same for everybody).
    fn cache_policy(&self, kind: CacheKind, authenticated: bool) -> CachePolicy {
        self.inner.cache[kind as usize].unwrap_or(
            if authenticated && !matches!(kind, CacheKind::Discover) {
                CachePolicy::new(0, CacheScope::Private)
            } else {
                CachePolicy::default()
            },
        )
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
        result.instructions.clone_from(
            &self
                .inner
                .instructions
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        );
        let cache = self.cache_policy(CacheKind::Discover, false);
        result.ttl_ms = Some(cache.ttl_ms);
        result.cache_scope = Some(cache.scope);
        self.complete(result)
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

    /// Every tool's `x-mcp-header` annotations, looked up at each call so that tools
    /// registered later count, and the Tasks extension's `Mcp-Name` fields when this server
    /// serves tasks: what a Streamable HTTP transport must check for it
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>).
    fn mirrored(&self) -> mcp_jsonrpc::Mirrored {
        let server = self.clone();
        let mirrored =
            mcp_jsonrpc::Mirrored::default().param_headers(move |tool| server.param_headers(tool));
        if self.inner.tasks.is_none() {
            return mirrored;
        }
        mcp_types::tasks::ROUTED_METHODS
            .into_iter()
            .fold(mirrored, |mirrored, method| {
                mirrored.name_field(method, mcp_types::tasks::NAME_FIELD)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::{Arc, check_input_responses, check_version, request_meta};
    use serde_json::value::RawValue;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    /// In an initialize-era session, a tool's result is written without what only modern
    /// clients know, and says so; one with a `_meta` of its own, or outside a session, is
    /// written the modern way.
    #[tokio::test]
    async fn tool_results_are_written_for_the_era_they_go_to() {
        use mcp_types::CallToolResult;
        let server = super::Server::builder("s", "1").build().unwrap();
        let text =
            |raw: Box<RawValue>| serde_json::from_str::<serde_json::Value>(raw.get()).unwrap();
        let mut result = CallToolResult::text("x");
        result.is_error = Some(true);
        result.structured_content = Some(serde_json::json!({"a": 1}));
        let (legacy, shaped) = crate::trace::in_session_shaped("2025-06-18", async {
            server.complete(result.clone()).unwrap()
        })
        .await;
        assert!(shaped);
        assert_eq!(
            text(legacy),
            serde_json::json!({"content": [{"type": "text", "text": "x"}], "isError": true, "structuredContent": {"a": 1}})
        );
        let modern = text(server.complete(result.clone()).unwrap());
        assert_eq!(modern["resultType"], "complete");
        assert_eq!(
            modern["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "s"
        );
        let mut own = result;
        own.meta = Some(mcp_types::ResultMetaObject::new());
        let (_, shaped) =
            crate::trace::in_session_shaped("2025-06-18", async { server.complete(own).unwrap() })
                .await;
        assert!(
            !shaped,
            "a result with a _meta of its own is left to the caller"
        );
    }

    /// The remembered `_meta` is the one of the same text only: another text, however
    /// alike, is read for itself, and a bad one fails as it would unremembered.
    #[test]
    fn a_remembered_meta_answers_only_its_own_text() {
        let v1 = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
        let v0 = r#"{"io.modelcontextprotocol/protocolVersion":"2025-06-18","io.modelcontextprotocol/clientCapabilities":{}}"#;
        for _ in 0..2 {
            let first = request_meta(&raw(v1)).unwrap();
            assert_eq!(first.protocol_version, "2026-07-28");
            assert!(check_version(&first).is_ok());
            let again = request_meta(&raw(v1)).unwrap();
            assert_eq!(
                serde_json::to_value(&*again).unwrap(),
                serde_json::to_value(&*first).unwrap()
            );
            assert!(
                Arc::ptr_eq(&again, &first),
                "the same text shares one `_meta`"
            );
            let old = request_meta(&raw(v0)).unwrap();
            assert_eq!(old.protocol_version, "2025-06-18");
            assert!(check_version(&old).is_err());
            assert!(
                request_meta(&raw(r#"{"io.modelcontextprotocol/protocolVersion":5}"#)).is_err()
            );
            // A `_meta` too long to remember is read every time, the same way.
            let long = format!(
                r#"{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"pad":"{}"}}"#,
                "p".repeat(super::REMEMBERED_META)
            );
            assert_eq!(
                request_meta(&raw(&long)).unwrap().protocol_version,
                "2026-07-28"
            );
            assert_eq!(
                request_meta(&raw(v0)).unwrap().protocol_version,
                "2025-06-18"
            );
        }
    }

    #[test]
    fn a_null_input_responses_is_refused_however_its_key_is_spelled() {
        assert!(check_input_responses(r#"{"name":"echo"}"#).is_ok());
        assert!(check_input_responses(r#"{"inputResponses":{}}"#).is_ok());
        assert!(check_input_responses(r#"{"inputResponses":null}"#).is_err());
        assert!(check_input_responses(r#"{"input\u0052esponses":null}"#).is_err());
        // An escape elsewhere takes the slow path and still passes.
        assert!(check_input_responses(r#"{"text":"\u00e9"}"#).is_ok());
    }
}
