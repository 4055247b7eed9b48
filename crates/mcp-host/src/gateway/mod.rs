//! The gateway: many MCP servers, of either era and any transport, served as one MCP
//! server that speaks both eras (feature `gateway`).
//!
//! Each upstream of the configuration is connected as the host connects it ([`connect`](crate::connect())),
//! with the gateway's own handlers for the questions servers ask. Its tools, prompts,
//! resources and resource templates are republished on one `mcp_server::Server`:
//!
//! - tools and prompts under namespaced names (`server__tool`, see [`NamingPolicy`]),
//!   filtered by the configuration's `allow`, `deny` and `groups` ([`Exposure`]) and a
//!   [`Policy`];
//! - resources and templates under their own URIs, except that a URI two upstreams both
//!   list is served as `mcp-host://server/uri` for every upstream but the first (as
//!   [`qualified_uri`](crate::qualified_uri) makes it); reads, contents and
//!   `resources/updated` are mapped both ways.
//!
//! When an upstream reports a list change (or restarts), its listing is read again and
//! the difference republished, which the server announces to its own listeners
//! (`subscriptions/listen`) and legacy sessions (`notifications/*/list_changed`). An
//! upstream that is down is named in the instructions and the logs, and tried again with
//! a growing delay; its tools are absent until it is back. An upstream that answers with
//! garbage fails the call that met it, with an error that names the upstream.
//!
//! A call that needs approval (its [`Policy`] says [`Decision::RequireApproval`]) is first
//! put to the downstream user as an elicitation form; questions an upstream asks during a
//! call reach the downstream client whatever the two eras (see `relay.rs`); progress flows
//! down and cancellation up. Every call goes through the [`Middleware`]s (an [`AuditLog`](crate::AuditLog)
//! records them).
//!
//! Limits, each failing closed:
//!
//! - An initialize-era upstream asks its questions outside the call they belong to; one
//!   that arrives while several calls to that upstream are in flight cannot be tied to one
//!   of them, and is declined rather than shown to the wrong user. A 2026-07-28 upstream's
//!   questions always come with their call.
//! - At most [`DEFAULT_MAX_PARKED`] calls wait for a downstream answer, each for at most
//!   [`DEFAULT_PARK_TTL`] ([`GatewayBuilder::waiting_calls`]).
//! - `resources/updated` is followed for at most 256 of an upstream's listed resources.
//! - `completion/complete` is not forwarded, and MCP Apps' app-only tools are not
//!   republished.

mod calls;
mod publish;
mod relay;
mod upstream;

use publish::{Published, Shared};
use upstream::{BuilderFn, Connected, UpState, Upstream, client_builder, follow};

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::Client;
use mcp_server::Server;
use tokio::task::JoinHandle;

use crate::Error;
use mcp_server::auth::ResourceServer;

use crate::catalog::CatalogBuilder;
use crate::config::{GatewayAuth, TokenCheck};
use crate::config::{HostConfig, ServerConfig};
use crate::middleware::Middleware;
use crate::naming::NamingPolicy;
use crate::rules::Policy;

pub use relay::{DEFAULT_MAX_PARKED, DEFAULT_PARK_TTL};

/// How long [`GatewayBuilder::connect`] waits for the upstreams before serving without
/// those not yet connected.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long [`GatewayBuilder::connect`] waits for an upstream to acknowledge its change
/// subscription before serving without it.
const LISTEN_ACK_TIMEOUT: Duration = Duration::from_secs(10);

/// Builds a [`Gateway`].
pub struct GatewayBuilder {
    name: String,
    version: String,
    upstreams: Vec<(String, ServerConfig)>,
    catalog: CatalogBuilder,
    /// The first error of the configuration, reported by `connect`.
    error: Option<Error>,
    auth: Option<GatewayAuth>,
    middleware: Vec<Arc<dyn Middleware>>,
    connect_timeout: Duration,
    max_parked: usize,
    park_ttl: Duration,
    server_setup: Option<ServerSetup>,
}

/// What [`GatewayBuilder::server_setup`] does to the served server's builder.
type ServerSetup =
    Box<dyn FnOnce(mcp_server::ServerBuilder) -> mcp_server::ServerBuilder + Send + Sync>;

impl std::fmt::Debug for GatewayBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayBuilder")
            .field("name", &self.name)
            .field(
                "upstreams",
                &self.upstreams.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Default for GatewayBuilder {
    fn default() -> Self {
        GatewayBuilder {
            name: "mcp-gateway".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            upstreams: Vec::new(),
            catalog: CatalogBuilder::default(),
            error: None,
            auth: None,
            middleware: Vec::new(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            max_parked: DEFAULT_MAX_PARKED,
            park_ttl: DEFAULT_PARK_TTL,
            server_setup: None,
        }
    }
}

impl GatewayBuilder {
    /// The name and version the gateway serves as (and introduces itself to upstreams
    /// with).
    #[must_use]
    pub fn info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// Adds every server of a configuration as an upstream (see
    /// [`upstream`](Self::upstream)), and takes its `naming`.
    #[must_use]
    pub fn config(mut self, config: HostConfig) -> Self {
        if let Some(naming) = config.naming {
            self.catalog = self.catalog.naming(naming);
        }
        if let Some(auth) = config.gateway.and_then(|g| g.auth) {
            self.auth = Some(auth);
        }
        for (name, server) in config.servers {
            self = self.upstream(name, server);
        }
        self
    }

    /// Adds an upstream; its `allow`, `deny`, `groups`, `rename` and `approval` join the
    /// gateway's rules, as they do a host's. An invalid rename is reported by
    /// [`connect`](Self::connect).
    #[must_use]
    pub fn upstream(mut self, name: impl Into<String>, config: impl Into<ServerConfig>) -> Self {
        let name = name.into();
        let config = config.into();
        if let Err(e) = self.catalog.add_server_config(&name, &config) {
            self.error.get_or_insert(e);
        }
        self.upstreams.push((name, config));
        self
    }

    /// How tool and prompt names are derived (default `server__tool`).
    #[must_use]
    pub fn naming(mut self, naming: NamingPolicy) -> Self {
        self.catalog = self.catalog.naming(naming);
        self
    }

    /// The policy: which tools are hidden and which need approval
    /// ([`require_approval_if_destructive`](crate::require_approval_if_destructive) asks
    /// before every call that may destroy something).
    #[must_use]
    pub fn policy(mut self, policy: impl Policy + 'static) -> Self {
        self.catalog = self.catalog.policy(policy);
        self
    }

    /// Adds a middleware, run around every call in the order added (an
    /// [`AuditLog`](crate::AuditLog) records them).
    #[must_use]
    pub fn middleware(mut self, middleware: impl Middleware + 'static) -> Self {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// Protects the gateway's HTTP endpoint ([`Gateway::bind_http`]) as an OAuth 2.1
    /// resource server: every request needs a bearer token `auth` accepts (the config's
    /// `gateway.auth`). Checked by [`connect`](Self::connect).
    #[must_use]
    pub fn auth(mut self, auth: GatewayAuth) -> Self {
        self.auth = Some(auth);
        self
    }

    /// How long [`connect`](Self::connect) waits for the upstreams (default 30 s); those
    /// not connected by then join when they are.
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How many upstream calls may wait for a downstream answer at once (default
    /// [`DEFAULT_MAX_PARKED`]), and for how long (default [`DEFAULT_PARK_TTL`]). Past the
    /// number a question fails the call; past the time the question is declined upstream.
    #[must_use]
    pub fn waiting_calls(mut self, max: usize, ttl: Duration) -> Self {
        self.max_parked = max;
        self.park_ttl = ttl;
        self
    }

    /// Adds to the served server what the gateway does not set itself: for a fleet of
    /// gateways, shared `requestState` keys
    /// ([`ServerBuilder::state_keys`](mcp_server::ServerBuilder::state_keys)), so that any
    /// gateway opens the state of an approval round another handed out. Tools, prompts,
    /// resources and the task store are the gateway's own: the tasks that stand for
    /// upstream tasks, and the upstream calls waiting for a downstream answer, live in the
    /// process that follows them.
    #[must_use]
    pub fn server_setup(
        mut self,
        setup: impl FnOnce(mcp_server::ServerBuilder) -> mcp_server::ServerBuilder
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.server_setup = Some(Box::new(setup));
        self
    }

    /// Connects every upstream concurrently (waiting up to the connect timeout), builds
    /// the server with their tools, prompts and resources, and follows their changes.
    /// Must be called within a tokio runtime.
    ///
    /// # Errors
    /// [`Error::Gateway`] when the server cannot be built.
    pub async fn connect(mut self) -> Result<Gateway, Error> {
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        let resource = self.auth.as_ref().map(resource_server).transpose()?;
        let upstreams: Vec<Arc<Upstream>> = self
            .upstreams
            .iter()
            .map(|(name, config)| {
                Arc::new(Upstream {
                    name: name.clone(),
                    config: config.clone(),
                    in_flight: Arc::default(),
                    state: Mutex::new(UpState::default()),
                })
            })
            .collect();
        // The first attempts, concurrently, before anything is served.
        let first = upstreams.iter().map(|up| {
            let builder = client_builder(&self.name, &self.version, up);
            let up = Arc::clone(up);
            let timeout = self.connect_timeout;
            async move {
                let outcome = tokio::time::timeout(timeout, up.connect(builder)).await;
                match outcome {
                    Ok(Ok(connected)) => Some(connected),
                    Ok(Err(e)) => {
                        up.set_down(e.to_string());
                        None
                    }
                    Err(_) => {
                        up.set_down("it did not answer in time".to_owned());
                        None
                    }
                }
            }
        });
        let connected: Vec<Option<Connected>> = futures_join_all(first)
            .await
            .into_iter()
            .map(Option::flatten)
            .collect();
        let mut builder = Server::builder(self.name.clone(), self.version.clone());
        if let Some(setup) = self.server_setup.take() {
            builder = setup(builder);
        }
        let server = builder
            .instructions(instructions(&upstreams))
            .enable(true, true, true)
            // The tasks that stand for upstream tasks, for clients of the extension.
            .tasks(mcp_server::tasks::Tasks::in_memory())
            .build()
            .map_err(|e| Error::Gateway(e.to_string()))?;
        let shared = Arc::new(Shared {
            server: server.clone(),
            catalog: self.catalog.clone(),
            middleware: self.middleware.clone(),
            upstreams: upstreams.clone(),
            published: Mutex::new(Published::default()),
            lot: relay::ParkingLot::new(self.max_parked, self.park_ttl),
        });
        shared.publish();
        let mut tasks = Vec::new();
        let mut acks = Vec::new();
        for (index, connected) in connected.into_iter().enumerate() {
            let (ack_tx, ack_rx) = tokio::sync::oneshot::channel();
            // Only a connected upstream has a subscription to wait for.
            if connected.is_some() {
                acks.push(ack_rx);
            }
            let (name, version) = (self.name.clone(), self.version.clone());
            let up = Arc::clone(&upstreams[index]);
            let builder: BuilderFn = Arc::new(move || client_builder(&name, &version, &up));
            tasks.push(tokio::spawn(follow(
                Arc::clone(&shared),
                index,
                connected,
                builder,
                ack_tx,
            )));
        }
        // Serving starts once every upstream's change subscription is in place (or
        // failed), so that no change made through the gateway goes unnoticed.
        for ack in acks {
            let _ = tokio::time::timeout(LISTEN_ACK_TIMEOUT, ack).await;
        }
        Ok(Gateway {
            server,
            shared,
            tasks,
            resource,
        })
    }
}

/// Awaits every future concurrently, keeping their order (a small `join_all`); `None`
/// for one that panicked.
async fn futures_join_all<F>(futures: impl IntoIterator<Item = F>) -> Vec<Option<F::Output>>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let mut set = tokio::task::JoinSet::new();
    let mut count = 0;
    for (index, future) in futures.into_iter().enumerate() {
        count += 1;
        set.spawn(async move { (index, future.await) });
    }
    let mut out: Vec<Option<F::Output>> = (0..count).map(|_| None).collect();
    while let Some(joined) = set.join_next().await {
        if let Ok((index, value)) = joined {
            out[index] = Some(value);
        }
    }
    out
}

/// Many MCP servers served as one.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use mcp_host::{Gateway, HostConfig};
///
/// let gateway = Gateway::builder()
///     .config(HostConfig::load("mcp.json")?)
///     .connect()
///     .await?;
/// gateway.serve_stdio().await;
/// # Ok(())
/// # }
/// ```
pub struct Gateway {
    server: Server,
    shared: Arc<Shared>,
    tasks: Vec<JoinHandle<()>>,
    /// The resource server that guards the HTTP endpoint, if configured.
    resource: Option<ResourceServer>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("upstreams", &self.status())
            .finish_non_exhaustive()
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Gateway {
    /// Starts building a gateway.
    pub fn builder() -> GatewayBuilder {
        GatewayBuilder::default()
    }

    /// The server the gateway serves (its tools and prompts are the upstreams'), to
    /// serve on a transport of the caller's.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// Each upstream and, if it is down, why.
    pub fn status(&self) -> Vec<(String, Option<String>)> {
        self.shared
            .upstreams
            .iter()
            .map(|up| (up.name.clone(), up.down_reason()))
            .collect()
    }

    /// How many upstream calls are waiting for a downstream answer.
    pub fn waiting_calls(&self) -> usize {
        self.shared.lot.len()
    }

    /// Serves the gateway on stdin and stdout, in both eras, until stdin closes; then
    /// stops the upstreams.
    pub async fn serve_stdio(self) {
        mcp_legacy::server::DualEra::new(self.server.clone())
            .serve_stdio()
            .await;
        self.shutdown().await;
    }

    /// Serves the gateway over Streamable HTTP on `addr` (both eras, and the 2024-11-05
    /// HTTP+SSE transport beside it), until the returned server is shut down. With
    /// [`GatewayBuilder::auth`] (or the config's `gateway.auth`), every request needs a
    /// bearer token it accepts, and the resource's host is allowed in `Host` beside
    /// loopback.
    ///
    /// # Errors
    /// [`Error::Gateway`] when the address cannot be bound.
    pub async fn bind_http(
        &self,
        addr: SocketAddr,
        config: mcp_transport_http::HttpServerConfig,
    ) -> Result<mcp_transport_http::RunningServer, Error> {
        self.bind_http_with(addr, config, mcp_legacy::http::LegacyHttpConfig::default())
            .await
    }

    /// [`bind_http`](Self::bind_http) with the settings of the initialize-era sessions:
    /// for a fleet of gateways, a shared session store
    /// ([`LegacyHttpConfig::session_store`](mcp_legacy::http::LegacyHttpConfig::session_store)).
    ///
    /// # Errors
    /// [`Error::Gateway`] when the address cannot be bound.
    pub async fn bind_http_with(
        &self,
        addr: SocketAddr,
        mut config: mcp_transport_http::HttpServerConfig,
        legacy: mcp_legacy::http::LegacyHttpConfig,
    ) -> Result<mcp_transport_http::RunningServer, Error> {
        if let Some(resource) = &self.resource {
            if let Some(host) = http::Uri::try_from(resource.resource())
                .ok()
                .and_then(|uri| uri.host().map(str::to_owned))
            {
                config = config.allowed_hosts(mcp_transport_http::AllowList::loopback().with(host));
            }
            config = config.authenticator(resource.clone());
        }
        mcp_legacy::http::DualEraHttp::bind(addr, self.server.clone(), config, legacy)
            .await
            .map_err(|e| Error::Gateway(e.to_string()))
    }

    /// Stops following the upstreams and shuts their clients down (stopping the stdio
    /// servers).
    pub async fn shutdown(self) {
        for task in &self.tasks {
            task.abort();
        }
        let clients: Vec<Client> = self
            .shared
            .upstreams
            .iter()
            .filter_map(|up| up.client())
            .collect();
        for client in clients {
            client.shutdown(Duration::from_secs(2)).await;
        }
    }
}

/// The resource server `auth` describes.
fn resource_server(auth: &GatewayAuth) -> Result<ResourceServer, Error> {
    use mcp_server::auth::{ClientAuth, IntrospectionVerifier, JwtVerifier};
    let failed = |e: mcp_server::Error| Error::Gateway(format!("gateway.auth: {e}"));
    let builder = ResourceServer::builder(auth.resource.clone())
        .authorization_server(auth.issuer.clone())
        .scopes_supported(auth.scopes.clone())
        .required_scopes(auth.scopes.clone());
    let builder = match &auth.tokens {
        TokenCheck::Jwks(jwks) => builder.verifier(
            JwtVerifier::builder(auth.issuer.clone(), jwks.clone())
                .build()
                .map_err(failed)?,
        ),
        TokenCheck::Introspection {
            url,
            client_id,
            client_secret,
        } => builder.verifier(
            IntrospectionVerifier::builder(
                url.clone(),
                ClientAuth::Basic {
                    client_id: client_id.clone(),
                    client_secret: client_secret.clone(),
                },
            )
            .issuer(auth.issuer.clone())
            .build()
            .map_err(failed)?,
        ),
    };
    builder.build().map_err(failed)
}

/// What the gateway tells clients about itself: what it is, and which upstreams are down.
fn instructions(upstreams: &[Arc<Upstream>]) -> String {
    let mut instructions = String::from(
        "This server is a gateway: it serves the tools, prompts and resources of several \
         MCP servers, each tool and prompt named after its server (server__name).",
    );
    for up in upstreams {
        if let Some(reason) = up.down_reason() {
            let _ = write!(
                instructions,
                "\nThe server {} is unavailable ({reason}); its tools are absent until it is \
                 back.",
                up.name
            );
        }
    }
    instructions
}
