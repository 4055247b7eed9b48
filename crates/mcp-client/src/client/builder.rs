//! [`ClientBuilder`] and the [`InputHandlers`] it gathers: the client's identity, its
//! capabilities and the handlers that answer a server's input requests.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_jsonrpc::Peer;
use mcp_types::{
    ClientCapabilities, ClientCapabilitiesElicitation, CreateMessageRequestParams,
    CreateMessageResult, ElicitRequestParams, ElicitResult, Implementation, InputRequest,
    InputResponse, JsonObject, ListRootsResult, LoggingLevel, method,
};
use serde_json::Value;

use super::{Client, Inner, Transport};
use crate::error::Error;
use crate::listen::Router;

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type ElicitFn =
    Arc<dyn Fn(ElicitRequestParams) -> BoxFuture<Result<ElicitResult, String>> + Send + Sync>;
type SampleFn = Arc<
    dyn Fn(CreateMessageRequestParams) -> BoxFuture<Result<CreateMessageResult, String>>
        + Send
        + Sync,
>;
type RootsFn = Arc<dyn Fn() -> BoxFuture<Result<ListRootsResult, String>> + Send + Sync>;

/// Builds a [`Client`].
pub struct ClientBuilder {
    info: Implementation,
    elicit: Option<ElicitFn>,
    sample: Option<SampleFn>,
    roots: Option<RootsFn>,
    logs: crate::logs::LogSink,
    sampling_tools: bool,
    log_level: Option<LoggingLevel>,
    max_rounds: usize,
    timeout: Option<Duration>,
    /// The `extensions` of the declared capabilities, by identifier.
    extensions: JsonObject,
    tasks: Option<crate::tasks::TaskOptions>,
}

mcp_types::debug_fields!(ClientBuilder { info });

impl Client {
    /// Starts building a client that introduces itself as `name` `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ClientBuilder {
        ClientBuilder {
            info: Implementation::new(name, version),
            elicit: None,
            sample: None,
            roots: None,
            logs: crate::logs::LogSink::default(),
            sampling_tools: false,
            log_level: None,
            max_rounds: 10,
            timeout: None,
            extensions: JsonObject::new(),
            tasks: None,
        }
    }
}

impl ClientBuilder {
    /// Answers the server's elicitation requests (form and URL modes). Registering it
    /// declares the `elicitation` capability on every request.
    #[must_use]
    pub fn on_elicit<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ElicitRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, String>> + Send + 'static,
    {
        self.elicit = Some(Arc::new(move |params| Box::pin(handler(params))));
        self
    }

    /// Answers the server's sampling requests (declares `sampling`).
    #[must_use]
    pub fn on_sample<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, String>> + Send + 'static,
    {
        self.sample = Some(Arc::new(move |params| Box::pin(handler(params))));
        self
    }

    /// Answers the server's roots requests (declares `roots`).
    #[must_use]
    pub fn on_roots<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ListRootsResult, String>> + Send + 'static,
    {
        self.roots = Some(Arc::new(move || Box::pin(handler())));
        self
    }

    /// Asks for log messages at `level` or above on every request
    /// (`_meta["io.modelcontextprotocol/logLevel"]`; `logging/setLevel` in the initialize
    /// era). Without it servers send none: register where they go with
    /// [`on_log`](Self::on_log) or [`log_channel`](Self::log_channel).
    #[must_use]
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Calls `handler` with each log message a server sends (`notifications/message`).
    /// It runs on the connection's reading task, so it must return quickly; a panic in it
    /// is caught and the message dropped. Servers send log messages only when asked: set
    /// [`log_level`](Self::log_level) too.
    #[must_use]
    pub fn on_log<F>(mut self, handler: F) -> Self
    where
        F: Fn(mcp_types::LoggingMessageNotificationParams) + Send + Sync + 'static,
    {
        self.logs.handler = Some(Arc::new(handler));
        self
    }

    /// Sends each log message a server sends to a bounded channel of `capacity` messages
    /// (0: [`DEFAULT_LOG_BUFFER`](crate::DEFAULT_LOG_BUFFER); clamped to
    /// [`MAX_LOG_BUFFER`](crate::MAX_LOG_BUFFER)), read from the returned
    /// [`LogReceiver`](crate::LogReceiver). When the consumer falls behind and the channel
    /// is full, the newest message is dropped and counted
    /// ([`LogReceiver::dropped`](crate::LogReceiver::dropped)). Set
    /// [`log_level`](Self::log_level) too.
    #[must_use]
    pub fn log_channel(mut self, capacity: usize) -> (Self, crate::LogReceiver) {
        let (channel, receiver) = crate::logs::channel(capacity);
        self.logs.channel = Some(channel);
        (self, receiver)
    }

    /// Declares that the sampling handler ([`on_sample`](Self::on_sample)) supports tool
    /// use: the capability `sampling.tools`
    /// (<https://modelcontextprotocol.io/specification/2025-11-25/client/sampling>, Tools in
    /// Sampling), so that servers may send sampling requests carrying `tools` and
    /// `toolChoice`. Without it such a request is refused (-32602 in the initialize era,
    /// [`Error::InvalidInputRequest`] in an MRTR round) and never reaches the handler.
    /// Declares nothing unless a sampling handler is registered.
    #[must_use]
    pub fn sampling_tools(mut self, supported: bool) -> Self {
        self.sampling_tools = supported;
        self
    }

    /// How many `input_required` rounds one request may take (default 10).
    #[must_use]
    pub fn max_rounds(mut self, rounds: usize) -> Self {
        self.max_rounds = rounds.max(1);
        self
    }

    /// Declares the Tasks extension (`io.modelcontextprotocol/tasks`) on every request:
    /// the server may then answer `tools/call` with a task, which
    /// [`Client::call_tool`] follows to its end (polling with backoff, answering the task's
    /// input requests with the registered handlers, cancelling it if the call is dropped),
    /// and [`Client::call_tool_or_task`] hands over as a [`TaskHandle`](crate::TaskHandle).
    #[must_use]
    pub fn tasks(mut self, options: crate::tasks::TaskOptions) -> Self {
        self.tasks = Some(options);
        self
    }

    /// The timeout of every request (default: the engine's).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Declares the extension `id` (such as `io.modelcontextprotocol/oauth-client-credentials`)
    /// with its `settings` in the `extensions` map of the capabilities every request
    /// declares (<https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning>, Extension Negotiation). Declaring
    /// the same identifier again replaces its settings. The identifier is sent as given:
    /// it must carry a prefix, as `_meta` keys do.
    #[must_use]
    pub fn extension(mut self, id: impl Into<String>, settings: JsonObject) -> Self {
        self.extensions.insert(id.into(), Value::Object(settings));
        self
    }

    /// Declares the extensions the configuration of `oauth` is defined by
    /// ([`OAuthConfig::extensions`](crate::auth::OAuthConfig::extensions)): the client
    /// credentials grant declares `io.modelcontextprotocol/oauth-client-credentials`
    /// (<https://modelcontextprotocol.io/extensions/auth/oauth-client-credentials>, Declare support), the
    /// enterprise-managed and workload identity grants theirs, DPoP its own; the
    /// authorization code grant is the core protocol's and declares nothing. Install the
    /// same client as the HTTP transport's authorizer.
    #[cfg(feature = "auth")]
    #[must_use]
    pub fn oauth(mut self, oauth: &crate::auth::OAuthClient) -> Self {
        for id in oauth.config().extensions() {
            self = self.extension(id, JsonObject::new());
        }
        self
    }

    /// Spawns `command` and connects to it over stdio. The returned connection stops the
    /// server (stdin close, then SIGTERM, then SIGKILL) when shut down.
    #[cfg(feature = "stdio")]
    pub fn connect_stdio(
        self,
        command: &mcp_transport_stdio::ServerCommand,
    ) -> Result<(Client, mcp_transport_stdio::ServerConnection), Error> {
        let router = Router::default();
        let (peer, connection) = mcp_transport_stdio::connect(
            command,
            router.clone(),
            mcp_transport_stdio::client_config(),
        )
        .map_err(Error::Spawn)?;
        Ok((self.assemble(peer, Some(router)), connection))
    }

    /// A client over any engine transport, with a notification router so that
    /// [`Client::listen`] works.
    pub fn connect<R: mcp_jsonrpc::FrameReader, W: mcp_jsonrpc::FrameWriter>(
        self,
        reader: R,
        writer: W,
        config: mcp_jsonrpc::PeerConfig,
    ) -> (Client, mcp_jsonrpc::Connection) {
        let router = Router::default();
        let (peer, connection) = Peer::connect(reader, writer, router.clone(), config);
        (self.assemble(peer, Some(router)), connection)
    }

    /// A client over an existing engine connection. Without a router of its own it cannot
    /// [`listen`](Client::listen); use [`connect`](Self::connect) for that.
    pub fn build(self, peer: Peer) -> Client {
        self.assemble(peer, None)
    }

    fn assemble(self, peer: Peer, router: Option<Router>) -> Client {
        self.assemble_with(Transport::Engine(peer), router)
    }

    /// A client over Streamable HTTP to `url` (a POST endpoint such as
    /// `http://127.0.0.1:8080/mcp`), with the given headers (for example
    /// `Authorization`) and limits.
    #[cfg(feature = "http")]
    pub fn connect_http(
        self,
        url: &str,
        config: mcp_transport_http::HttpClientConfig,
    ) -> Result<Client, Error> {
        let client = mcp_transport_http::HttpClient::new(url, config).map_err(Error::Http)?;
        let transport = Transport::Http(Arc::new(crate::http::HttpTransport::new(client)));
        Ok(self.assemble_with(transport, Some(Router::default())))
    }

    /// Spawns `command` and owns it: a server that crashes is started again under
    /// `policy`, and the request that saw the crash is re-sent only if it is retry-safe
    /// (otherwise it fails with [`Error::MayHaveRun`]). Stop it with [`Client::shutdown`].
    #[cfg(feature = "stdio")]
    pub fn spawn_stdio(
        self,
        command: mcp_transport_stdio::ServerCommand,
        policy: crate::restart::RestartPolicy,
    ) -> Result<Client, Error> {
        let router = Router::default();
        let supervisor = crate::restart::Supervisor::start(command, router.clone(), policy)?;
        Ok(self.assemble_with(Transport::Supervised(Arc::new(supervisor)), Some(router)))
    }

    /// The registered input handlers and the capabilities they declare, for a transport
    /// that must answer a server's requests itself (see [`CustomTransport`]).
    ///
    /// [`CustomTransport`]: crate::CustomTransport
    pub fn input_handlers(&self) -> InputHandlers {
        let mut capabilities = ClientCapabilities::new();
        if self.elicit.is_some() {
            let mut elicitation = ClientCapabilitiesElicitation::new();
            elicitation.form = Some(JsonObject::new());
            elicitation.url = Some(JsonObject::new());
            capabilities.elicitation = Some(elicitation);
        }
        if self.sample.is_some() {
            let mut sampling = mcp_types::ClientCapabilitiesSampling::new();
            if self.sampling_tools {
                sampling.tools = Some(JsonObject::new());
            }
            capabilities.sampling = Some(sampling);
        }
        if self.roots.is_some() {
            capabilities.roots = Some(JsonObject::new());
        }
        // The declared extensions, and the Tasks extension when tasks are followed.
        let mut extensions = self.extensions.clone();
        if self.tasks.is_some() {
            extensions
                .entry(mcp_types::tasks::EXTENSION_ID.to_owned())
                .or_insert_with(|| Value::Object(JsonObject::new()));
        }
        if !extensions.is_empty() {
            capabilities.extensions = Some(extensions);
        }
        InputHandlers {
            info: self.info.clone(),
            capabilities,
            elicit: self.elicit.clone(),
            sample: self.sample.clone(),
            roots: self.roots.clone(),
            logs: self.logs.clone(),
        }
    }

    /// A client whose requests and subscriptions are carried by `transport` (a seam for
    /// crates that adapt other transports or protocol revisions; see [`CustomTransport`]).
    /// The client still adds `_meta`, runs the MRTR loop, caches and follows cursors.
    ///
    /// [`CustomTransport`]: crate::CustomTransport
    pub fn connect_custom(self, transport: Arc<dyn crate::CustomTransport>) -> Client {
        self.assemble_with(Transport::Custom(transport), Some(Router::default()))
    }

    /// A client over an engine `peer` whose handler the caller owns: the caller's handler
    /// hands the connection's notifications to `router` (see [`ListenRouter`]), so that
    /// [`Client::listen`] works.
    ///
    /// [`ListenRouter`]: crate::ListenRouter
    pub fn connect_peer(self, peer: Peer, router: crate::ListenRouter) -> Client {
        self.assemble_with(Transport::Engine(peer), Some(router.0))
    }

    fn assemble_with(self, transport: Transport, router: Option<Router>) -> Client {
        // The router evicts what a subscription's notifications make stale.
        let cache = router.as_ref().map_or_else(Arc::default, Router::cache);
        let handlers = self.input_handlers();
        // The router hands the connection's log messages to the user's sink.
        if let Some(router) = &router {
            router.set_logs(handlers.logs.clone());
        }
        // Built with `--cfg mcp_without="call_writer"`, every request is written the typed
        // way: the build `cargo xtask bench` measures `wire.rs` against.
        let fixed_meta = if cfg!(mcp_without = "call_writer") {
            None
        } else {
            crate::wire::FixedMeta::new(&handlers.capabilities, &handlers.info, self.log_level)
        };
        Client {
            inner: Arc::new(Inner {
                safe_tools: Mutex::default(),
                #[cfg(feature = "schema-validation")]
                output_checks: crate::output::OutputChecks::default(),
                cache,
                auth_context: String::new(),
                router,
                transport,
                version: AtomicUsize::new(0),
                handlers,
                fixed_meta,
                log_level: self.log_level,
                max_rounds: self.max_rounds,
                timeout: self.timeout,
                progress_tokens: AtomicU64::new(1),
                tasks: self.tasks,
            }),
        }
    }
}

/// The input handlers a client's user registered ([`ClientBuilder::on_elicit`],
/// [`on_sample`](ClientBuilder::on_sample), [`on_roots`](ClientBuilder::on_roots)), the
/// capabilities they declare and the client's identity. The MRTR loop answers
/// `inputRequests` with them; a [`CustomTransport`](crate::CustomTransport) whose server
/// asks by other means answers with the same handlers through [`answer`](Self::answer).
/// Cheap to clone.
#[derive(Clone)]
pub struct InputHandlers {
    pub(super) info: Implementation,
    pub(super) capabilities: ClientCapabilities,
    elicit: Option<ElicitFn>,
    sample: Option<SampleFn>,
    roots: Option<RootsFn>,
    pub(crate) logs: crate::logs::LogSink,
}

mcp_types::debug_fields!(InputHandlers { info, capabilities });

impl InputHandlers {
    /// The client's identity (`clientInfo`).
    pub fn info(&self) -> &Implementation {
        &self.info
    }

    /// The capabilities the registered handlers declare.
    pub fn capabilities(&self) -> &ClientCapabilities {
        &self.capabilities
    }

    /// Hands a server's log message (the params of `notifications/message`, as JSON) to
    /// the registered log callback and channel ([`ClientBuilder::on_log`],
    /// [`ClientBuilder::log_channel`]), for a transport that receives notifications
    /// itself. `false` if nobody wants it, it does not parse, or the channel was full
    /// (the message was dropped).
    pub fn log(&self, params: &Value) -> bool {
        self.logs.deliver_json(params)
    }

    /// Whether the capabilities declare `sampling.tools`.
    fn sampling_tools(&self) -> bool {
        self.capabilities
            .sampling
            .as_ref()
            .is_some_and(|s| s.tools.is_some())
    }

    /// Runs the handler registered for `request`. A request with no handler is
    /// [`Error::NoHandler`]; a handler's failure is [`Error::Handler`].
    ///
    /// Cancel safety: dropping the future drops the handler's future.
    pub async fn answer(&self, request: InputRequest) -> Result<InputResponse, Error> {
        fn failed(method: &'static str) -> impl Fn(String) -> Error {
            move |message| Error::Handler {
                method: method.to_owned(),
                message,
            }
        }
        match request {
            InputRequest::Elicit(request) => {
                let handler = self.elicit.as_ref().ok_or_else(|| Error::NoHandler {
                    method: method::ELICITATION_CREATE.to_owned(),
                })?;
                handler(request.params)
                    .await
                    .map(InputResponse::Elicit)
                    .map_err(failed(method::ELICITATION_CREATE))
            }
            InputRequest::CreateMessage(request) => {
                // <https://modelcontextprotocol.io/specification/2025-11-25/client/sampling>:
                // tools are only for a client that declared `sampling.tools`; the schema
                // says the client MUST return an error otherwise.
                if !self.sampling_tools()
                    && (request.params.tools.is_some() || request.params.tool_choice.is_some())
                {
                    return Err(Error::InvalidInputRequest {
                        method: method::SAMPLING_CREATEMESSAGE.to_owned(),
                        reason: "`tools` or `toolChoice` without the sampling.tools capability"
                            .to_owned(),
                    });
                }
                let handler = self.sample.as_ref().ok_or_else(|| Error::NoHandler {
                    method: method::SAMPLING_CREATEMESSAGE.to_owned(),
                })?;
                handler(request.params)
                    .await
                    .map(InputResponse::CreateMessage)
                    .map_err(failed(method::SAMPLING_CREATEMESSAGE))
            }
            InputRequest::ListRoots(_) => {
                let handler = self.roots.as_ref().ok_or_else(|| Error::NoHandler {
                    method: method::ROOTS_LIST.to_owned(),
                })?;
                handler()
                    .await
                    .map(InputResponse::ListRoots)
                    .map_err(failed(method::ROOTS_LIST))
            }
            _ => Err(Error::NoHandler {
                method: "an unknown input request".to_owned(),
            }),
        }
    }
}
