//! The host: many connected clients, their tools in one catalog (and their prompts and
//! resources beside it) refreshed between rounds when a server reports a change, and calls
//! routed back to the right client.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcp_client::Client;
use mcp_transport_stdio::ServerConnection;
use mcp_types::{CallToolResult, Prompt, Resource, ResourceTemplate, Tool};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

use crate::Error;
use crate::calls::{ToolCall, ToolOutcome, UiRef};
use crate::catalog::{Catalog, CatalogBuilder};
use crate::config::{HostConfig, ServerConfig};
use crate::connect::{ClientInfo, connect};
use crate::content::{Content, Listed};
use crate::handlers::Handlers;
use crate::middleware::{Approver, CallInfo, Middleware, Verdict};
use crate::naming::NamingPolicy;
use crate::rules::{Approval, Exposure, Policy};
use crate::schema::SchemaLimits;

/// How long [`HostBuilder::connect`] waits for a server to acknowledge its change
/// subscription before going on without it.
const LISTEN_ACK_TIMEOUT: Duration = Duration::from_secs(10);

mod changes;
mod content;

use changes::{Changes, Lists, listen};
use content::{Fetched, fetch, offered};

/// Where a client comes from.
enum Source {
    /// Boxed: a configuration is much larger than a client handle.
    Config(Box<ServerConfig>),
    Client(Client),
}

/// Builds a [`Host`]: servers (from configuration or already connected clients), naming,
/// exposure, policy, middleware and approval.
#[derive(Default)]
pub struct HostBuilder {
    info: ClientInfo,
    sources: Vec<(String, Source)>,
    catalog: CatalogBuilder,
    middleware: Vec<Arc<dyn Middleware>>,
    approver: Option<Arc<dyn Approver>>,
}

impl std::fmt::Debug for HostBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuilder")
            .field("info", &self.info)
            .field(
                "servers",
                &self.sources.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("catalog", &self.catalog)
            .finish_non_exhaustive()
    }
}

/// A server of the host.
struct Server {
    name: String,
    client: Client,
    /// The lists it offers (its tools always; prompts and resources as it declares).
    offers: Lists,
    tools: Vec<Tool>,
    prompts: Vec<Prompt>,
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
    /// The process the host spawned for it, stopped by [`Host::shutdown`].
    process: Option<ServerConnection>,
}

impl Server {
    /// Takes the lists that were read.
    fn apply(&mut self, fetched: Fetched) {
        if let Some(tools) = fetched.tools {
            self.tools = tools;
        }
        if let Some(prompts) = fetched.prompts {
            self.prompts = prompts;
        }
        if let Some((resources, templates)) = fetched.resources {
            self.resources = resources;
            self.templates = templates;
        }
    }
}

/// Many MCP servers as one set of tools.
///
/// ```no_run
/// # async fn run() -> Result<(), mcp_host::Error> {
/// use mcp_host::{Host, HostConfig, Vendor};
///
/// let host = Host::builder()
///     .config(HostConfig::load("mcp.json")?)
///     .connect()
///     .await?;
/// for (server, error) in host.failures() {
///     eprintln!("{server}: {error}");
/// }
/// let tools = host.catalog().declarations(Vendor::Anthropic);
/// # let _ = tools;
/// host.shutdown().await;
/// # Ok(())
/// # }
/// ```
pub struct Host {
    servers: Mutex<Vec<Server>>,
    catalog_builder: Mutex<CatalogBuilder>,
    catalog: Mutex<Arc<Catalog>>,
    content: Mutex<Arc<Content>>,
    changes: Arc<Changes>,
    changed_tx: Arc<watch::Sender<u64>>,
    failures: Vec<(String, Error)>,
    listeners: Vec<JoinHandle<()>>,
    middleware: Vec<Arc<dyn Middleware>>,
    approver: Option<Arc<dyn Approver>>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("servers", &self.server_names())
            .field("failures", &self.failures)
            .finish_non_exhaustive()
    }
}

impl HostBuilder {
    /// The name and version the host's clients introduce themselves with.
    #[must_use]
    pub fn client_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info.name = name.into();
        self.info.version = version.into();
        self
    }

    /// Declares the MCP Apps extension on the clients the host connects (not on clients
    /// given with [`client`](Self::client), whose builder decides): the embedding
    /// application renders apps, so servers show it their tools' UI links and app-only
    /// tools. See [`Host::read_ui`] and [`Host::call_from_app`].
    #[must_use]
    pub fn apps(mut self) -> Self {
        self.info.apps = true;
        self
    }

    /// Answers the elicitation requests of every server the host connects (not of clients
    /// given with [`client`](Self::client), whose builder decides), as
    /// `mcp_client::ClientBuilder::on_elicit` does. Without it the clients do not declare
    /// elicitation, and a tool that must ask the user fails.
    #[must_use]
    pub fn on_elicit<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(mcp_types::ElicitRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<mcp_types::ElicitResult, String>> + Send + 'static,
    {
        self.info.handlers = self.info.handlers.on_elicit(handler);
        self
    }

    /// Answers the sampling requests of every server the host connects (see
    /// [`on_elicit`](Self::on_elicit)), as `mcp_client::ClientBuilder::on_sample` does.
    #[must_use]
    pub fn on_sample<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(mcp_types::CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<mcp_types::CreateMessageResult, String>> + Send + 'static,
    {
        self.info.handlers = self.info.handlers.on_sample(handler);
        self
    }

    /// Answers the roots requests of every server the host connects (see
    /// [`on_elicit`](Self::on_elicit)), as `mcp_client::ClientBuilder::on_roots` does.
    #[must_use]
    pub fn on_roots<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<mcp_types::ListRootsResult, String>> + Send + 'static,
    {
        self.info.handlers = self.info.handlers.on_roots(handler);
        self
    }

    /// Sets every handler at once, replacing those set before.
    #[must_use]
    pub fn handlers(mut self, handlers: Handlers) -> Self {
        self.info.handlers = handlers;
        self
    }

    /// Adds a server to connect to. Its `allow`, `deny` and `groups` are added to the
    /// exposure rules, and its renames to the catalog's, when the host connects.
    #[must_use]
    pub fn server(mut self, name: impl Into<String>, config: impl Into<ServerConfig>) -> Self {
        self.sources
            .push((name.into(), Source::Config(Box::new(config.into()))));
        self
    }

    /// Adds every server of a configuration (see [`server`](Self::server)), and takes
    /// its settings: its `naming`, if it has one, replaces the naming set before.
    #[must_use]
    pub fn config(mut self, config: HostConfig) -> Self {
        if let Some(naming) = config.naming {
            self.catalog = self.catalog.naming(naming);
        }
        for (name, server) in config.servers {
            self.sources.push((name, Source::Config(Box::new(server))));
        }
        self
    }

    /// Adds a client connected some other way (an in-memory duplex, a custom transport).
    #[must_use]
    pub fn client(mut self, name: impl Into<String>, client: Client) -> Self {
        self.sources.push((name.into(), Source::Client(client)));
        self
    }

    /// Sets how model-visible names are derived.
    #[must_use]
    pub fn naming(mut self, naming: NamingPolicy) -> Self {
        self.catalog = self.catalog.naming(naming);
        self
    }

    /// Sets the allow, deny and group rules. The servers' own rules (their
    /// [`ServerConfig`]'s `allow`, `deny` and `groups`) are added to these when the host
    /// connects.
    #[must_use]
    pub fn exposure(mut self, exposure: Exposure) -> Self {
        self.catalog = self.catalog.exposure(exposure);
        self
    }

    /// Makes the tools `approval` names (of `server`) need approval before each call, on
    /// top of the policy (see [`approver`](Self::approver)). A configured server's own
    /// `approval` is added when the host connects.
    #[must_use]
    pub fn approval(mut self, server: impl Into<String>, approval: Approval) -> Self {
        self.catalog = self.catalog.approval(server, approval);
        self
    }

    /// Sets the policy hook.
    #[must_use]
    pub fn policy(mut self, policy: impl Policy + 'static) -> Self {
        self.catalog = self.catalog.policy(policy);
        self
    }

    /// Sets the limits for untrusted schemas and descriptions.
    #[must_use]
    pub fn limits(mut self, limits: SchemaLimits) -> Self {
        self.catalog = self.catalog.limits(limits);
        self
    }

    /// Adds a middleware (run in the order added).
    #[must_use]
    pub fn middleware(mut self, middleware: impl Middleware + 'static) -> Self {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// Sets who approves calls the policy marks as needing approval. Without one, such
    /// calls are refused with an error result.
    #[must_use]
    pub fn approver(mut self, approver: impl Approver + 'static) -> Self {
        self.approver = Some(Arc::new(approver));
        self
    }

    /// Connects every server concurrently, lists each one's tools (and the prompts,
    /// resources and resource templates it declares), and subscribes to changes of those
    /// lists. A server whose tools cannot be listed is left out and reported by
    /// [`Host::failures`]; this fails only on a configuration error (a bad header, a
    /// rename to an invalid name or to a name another tool was given).
    /// A server whose other lists cannot be read joins without them; the next
    /// [`Host::refresh`] tries again. Each configured server's `allow`, `deny` and
    /// `groups` join the exposure rules.
    /// Must be called within a tokio runtime. Waits up to 10 s per server for its change
    /// subscription to be acknowledged, so that no change made after this returns is
    /// missed; a server without subscriptions is simply never refreshed.
    pub async fn connect(mut self) -> Result<Host, Error> {
        for (name, source) in &self.sources {
            if let Source::Config(config) = source {
                self.catalog.add_server_config(name, config)?;
            }
        }
        let mut set = JoinSet::new();
        for (index, (name, source)) in self.sources.into_iter().enumerate() {
            let info = self.info.clone();
            set.spawn(async move {
                let (client, process) = match source {
                    Source::Client(client) => (client, None),
                    Source::Config(config) => match connect(&name, &config, &info).await {
                        Ok(connected) => (connected.client, connected.process),
                        Err(e) => return (index, name, Err(e)),
                    },
                };
                let offers = offered(&name, &client).await;
                let (fetched, error) = fetch(&name, &client, offers).await;
                // Without its tools a server is of no use; its other lists are read again
                // at the next refresh.
                if fetched.tools.is_none() {
                    let error = error.unwrap_or_else(|| Error::UnknownServer(name.clone()));
                    return (index, name, Err(error));
                }
                let mut server = Server {
                    name: name.clone(),
                    client,
                    offers,
                    tools: Vec::new(),
                    prompts: Vec::new(),
                    resources: Vec::new(),
                    templates: Vec::new(),
                    process,
                };
                let unread = offers.without(fetched.lists());
                server.apply(fetched);
                (index, name, Ok((server, unread)))
            });
        }
        let mut connected = Vec::new();
        let mut failures = Vec::new();
        while let Some(joined) = set.join_next().await {
            let Ok((index, name, outcome)) = joined else {
                continue;
            };
            match outcome {
                Ok(server) => connected.push((index, server)),
                Err(
                    e @ (Error::Config(_)
                    | Error::InvalidField { .. }
                    | Error::UnsetVariable { .. }),
                ) => return Err(e),
                Err(e) => failures.push((index, name, e)),
            }
        }
        connected.sort_by_key(|(i, _)| *i);
        failures.sort_by_key(|(i, _, _)| *i);
        let changes = Arc::new(Changes::default());
        let servers: Vec<Server> = connected
            .into_iter()
            .map(|(_, (server, unread))| {
                changes.mark(&server.name, unread);
                server
            })
            .collect();

        let (changed_tx, _) = watch::channel(0u64);
        let changed_tx = Arc::new(changed_tx);
        let mut listeners = Vec::new();
        let mut acks = Vec::new();
        for server in &servers {
            let (ack_tx, ack_rx) = tokio::sync::oneshot::channel();
            acks.push(ack_rx);
            listeners.push(tokio::spawn(listen(
                server.name.clone(),
                server.client.clone(),
                Arc::clone(&changes),
                Arc::clone(&changed_tx),
                ack_tx,
            )));
        }
        // Wait until each subscription is in place (or failed), so that no change made
        // after `connect` returns goes unnoticed.
        for ack in acks {
            let _ = tokio::time::timeout(LISTEN_ACK_TIMEOUT, ack).await;
        }
        let catalog = Arc::new(build_catalog(&self.catalog, &servers));
        let content = Arc::new(build_content(&self.catalog, &servers));
        Ok(Host {
            servers: Mutex::new(servers),
            catalog_builder: Mutex::new(self.catalog),
            catalog: Mutex::new(catalog),
            content: Mutex::new(content),
            changes,
            changed_tx,
            failures: failures.into_iter().map(|(_, n, e)| (n, e)).collect(),
            listeners,
            middleware: self.middleware,
            approver: self.approver,
        })
    }
}

fn build_catalog(builder: &CatalogBuilder, servers: &[Server]) -> Catalog {
    builder.build(
        servers
            .iter()
            .map(|s| (s.name.as_str(), s.tools.as_slice())),
    )
}

/// The prompts, resources and templates of `servers`, prompts named by `builder`'s
/// naming.
fn build_content(builder: &CatalogBuilder, servers: &[Server]) -> Content {
    Content::build(
        builder.naming_policy(),
        servers.iter().map(|s| Listed {
            server: &s.name,
            prompts: &s.prompts,
            resources: &s.resources,
            templates: &s.templates,
        }),
    )
}

impl Host {
    /// Starts building a host.
    pub fn builder() -> HostBuilder {
        HostBuilder::default()
    }

    /// The servers that are connected, in configuration order.
    pub fn server_names(&self) -> Vec<String> {
        self.servers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|s| s.name.clone())
            .collect()
    }

    /// The client of a connected server.
    pub fn client(&self, server: &str) -> Option<Client> {
        self.servers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|s| s.name == server)
            .map(|s| s.client.clone())
    }

    /// The servers that could not be connected or listed, with why.
    pub fn failures(&self) -> &[(String, Error)] {
        &self.failures
    }

    /// The current catalog: a snapshot, unchanged by later refreshes, so a round of the
    /// agent loop sees one consistent set of tools.
    pub fn catalog(&self) -> Arc<Catalog> {
        Arc::clone(&self.catalog.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// A receiver whose value goes up each time a server reports a tool-list change
    /// (before the next [`refresh`](Self::refresh) picks it up).
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changed_tx.subscribe()
    }

    /// Switches an exposure group on or off and rebuilds the catalog; false if there is
    /// no such group.
    pub fn set_group(&self, name: &str, enabled: bool) -> bool {
        let mut builder = self
            .catalog_builder
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if !builder.exposure_mut().set_group(name, enabled) {
            return false;
        }
        let snapshot = builder.clone();
        drop(builder);
        self.rebuild(&snapshot);
        true
    }

    fn rebuild(&self, builder: &CatalogBuilder) {
        let servers = self.servers.lock().unwrap_or_else(PoisonError::into_inner);
        let catalog = Arc::new(build_catalog(builder, &servers));
        let content = Arc::new(build_content(builder, &servers));
        drop(servers);
        *self.catalog.lock().unwrap_or_else(PoisonError::into_inner) = catalog;
        *self.content.lock().unwrap_or_else(PoisonError::into_inner) = content;
    }

    /// The current prompts and resources.
    fn content(&self) -> Arc<Content> {
        Arc::clone(&self.content.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Lists again what every server reported changed since the last refresh (its tools,
    /// prompts, or resources and templates), and rebuilds the catalog and the prompts and
    /// resources. Returns whether anything was refreshed. A list that cannot be read keeps
    /// its old contents and stays marked for the next refresh, as do the lists a server
    /// could not give when the host connected.
    ///
    /// Cancel-safe: a refresh dropped midway leaves the servers marked.
    pub async fn refresh(&self) -> bool {
        let pending = self.changes.pending();
        if pending.is_empty() {
            return false;
        }
        let mut set = JoinSet::new();
        for (name, lists) in pending {
            let found = self
                .servers
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .find(|s| s.name == name)
                .map(|s| (s.client.clone(), s.offers));
            let Some((client, offers)) = found else {
                continue;
            };
            // A list the server does not offer has nothing to read.
            self.changes.done(&name, lists.without(offers));
            let wanted = lists.and(offers);
            set.spawn(async move {
                let (fetched, _) = fetch(&name, &client, wanted).await;
                (name, fetched)
            });
        }
        let mut refreshed = false;
        while let Some(Ok((name, fetched))) = set.join_next().await {
            let read = fetched.lists();
            if read.is_empty() {
                continue;
            }
            self.changes.done(&name, read);
            let mut servers = self.servers.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(server) = servers.iter_mut().find(|s| s.name == name) {
                server.apply(fetched);
                refreshed = true;
            }
        }
        if refreshed {
            let builder = self
                .catalog_builder
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            self.rebuild(&builder);
        }
        refreshed
    }

    /// Runs the calls of one model turn concurrently against `catalog` (the snapshot the
    /// model saw) and returns one outcome per call, in the calls' order, each with its
    /// call's id. Every failure is an error result for the model: an unknown name,
    /// unusable arguments, a refused approval, a rejecting middleware, a transport or
    /// protocol error.
    ///
    /// Cancel-safe in the sense that dropping the future cancels the calls in flight.
    pub async fn call(&self, catalog: &Catalog, calls: Vec<ToolCall>) -> Vec<ToolOutcome> {
        let mut set = JoinSet::new();
        // Kept to answer a call whose task panicked (in a middleware, say).
        let asked: Vec<(String, String)> = calls
            .iter()
            .map(|c| (c.id.clone(), c.name.clone()))
            .collect();
        for (index, call) in calls.into_iter().enumerate() {
            let entry = catalog.resolve(&call.name).cloned();
            let client = entry.as_ref().and_then(|e| self.client(&e.server));
            let middleware = self.middleware.clone();
            let approver = self.approver.clone();
            set.spawn(async move {
                let ui = entry.as_ref().and_then(ui_ref);
                let result = run_call(&call, entry, client, &middleware, approver).await;
                (
                    index,
                    ToolOutcome::new(call.id, call.name, result).with_ui(ui),
                )
            });
        }
        let mut outcomes: Vec<Option<ToolOutcome>> = vec![None; asked.len()];
        while let Some(joined) = set.join_next().await {
            if let Ok((index, outcome)) = joined {
                outcomes[index] = Some(outcome);
            }
        }
        outcomes
            .into_iter()
            .zip(asked)
            .map(|(outcome, (id, name))| {
                outcome.unwrap_or_else(|| {
                    let result = CallToolResult::error("The call failed inside the host.");
                    ToolOutcome::new(id, name, result)
                })
            })
            .collect()
    }

    /// Reads and checks the UI that renders a tool's results (MCP Apps), for the
    /// embedding application to show in a sandboxed frame: `mcp_client::Client::read_ui_resource`
    /// on the server that `ui` names.
    pub async fn read_ui(&self, ui: &UiRef) -> Result<mcp_client::apps::UiView, Error> {
        let client = self
            .client(&ui.server)
            .ok_or_else(|| Error::UnknownServer(ui.server.clone()))?;
        client
            .read_ui_resource(&ui.resource_uri)
            .await
            .map_err(|source| Error::Server {
                server: ui.server.clone(),
                source: Box::new(source),
            })
    }

    /// Runs a call that an app rendered from `server` makes to one of that server's tools
    /// (`tool` is the server's own name for it), against `catalog`. Only tools whose
    /// visibility includes `app` may be called (app-only tools included, which the model
    /// never sees), and only on the app's own server: anything else is an error result,
    /// as the MCP Apps specification requires of hosts. Middleware and approval apply as
    /// to the model's calls.
    pub async fn call_from_app(
        &self,
        catalog: &Catalog,
        server: &str,
        tool: &str,
        arguments: mcp_types::JsonObject,
    ) -> CallToolResult {
        let Some(entry) = catalog.app_tool(server, tool).cloned() else {
            return CallToolResult::error(format!(
                "The app cannot call `{}` on server `{}`.",
                crate::schema::cap_text(tool, 128),
                crate::schema::cap_text(server, 128)
            ));
        };
        let client = self.client(&entry.server);
        let call = ToolCall::new("app", entry.name.clone(), arguments);
        run_call(
            &call,
            Some(entry),
            client,
            &self.middleware,
            self.approver.clone(),
        )
        .await
    }

    /// Stops the change subscriptions and the stdio servers the host spawned.
    pub async fn shutdown(self) {
        for listener in &self.listeners {
            listener.abort();
        }
        let servers: Vec<(Client, Option<ServerConnection>)> = self
            .servers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter_mut()
            .map(|s| (s.client.clone(), s.process.take()))
            .collect();
        for (client, process) in servers {
            client.shutdown(Duration::from_secs(2)).await;
            if let Some(process) = process {
                let _ = process.shutdown(Duration::from_secs(2)).await;
            }
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        for listener in &self.listeners {
            listener.abort();
        }
    }
}

/// Where the UI of `entry`'s tool lives, if it has one.
fn ui_ref(entry: &crate::catalog::Entry) -> Option<UiRef> {
    let link = entry.ui.as_ref()?;
    Some(UiRef::new(entry.server.clone(), link.resource_uri.clone()))
}

async fn run_call(
    call: &ToolCall,
    entry: Option<crate::catalog::Entry>,
    client: Option<Client>,
    middleware: &[Arc<dyn Middleware>],
    approver: Option<Arc<dyn Approver>>,
) -> CallToolResult {
    let (Some(entry), Some(client)) = (entry, client) else {
        return CallToolResult::error(format!(
            "There is no tool named `{}`. Call one of the tools you were given.",
            crate::schema::cap_text(&call.name, 128)
        ));
    };
    let arguments = match &call.arguments {
        Ok(arguments) => arguments.clone(),
        Err(why) => {
            return CallToolResult::error(format!(
                "The call to `{}` was not run: {why}. Send the arguments as a JSON object.",
                entry.name
            ));
        }
    };
    let info = CallInfo {
        call_id: call.id.clone(),
        name: entry.name.clone(),
        server: entry.server.clone(),
        tool: entry.tool.name.clone(),
        arguments,
        annotations: entry.tool.annotations.clone(),
        requires_approval: entry.requires_approval,
    };
    let started = Instant::now();
    let result = execute(&info, &client, middleware, approver).await;
    let elapsed = started.elapsed();
    for hook in middleware {
        hook.after(&info, &result, elapsed).await;
    }
    result
}

async fn execute(
    info: &CallInfo,
    client: &Client,
    middleware: &[Arc<dyn Middleware>],
    approver: Option<Arc<dyn Approver>>,
) -> CallToolResult {
    if info.requires_approval {
        let yes = match approver {
            Some(approver) => approver.approve(info.clone()).await,
            None => false,
        };
        if !yes {
            return CallToolResult::error(format!(
                "The call to `{}` was not approved, so it did not run.",
                info.name
            ));
        }
    }
    for hook in middleware {
        if let Verdict::Reject(result) = hook.before(info).await {
            return *result;
        }
    }
    match client.call_tool(&info.tool, info.arguments.clone()).await {
        Ok(result) => result,
        Err(e) => CallToolResult::error(format!("The call to `{}` failed: {e}", info.name)),
    }
}
