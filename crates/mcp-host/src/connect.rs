//! The one place where a server configuration becomes a connected [`Client`]. Everything
//! else in the crate works on clients and never knows how they were made: the dual-era
//! connector of `mcp-legacy` detects each server's era (a `server/discover` probe, then
//! `initialize` for an initialize-era server), so a host reaches servers of every MCP
//! revision through the same `mcp_client::Client` API.

use mcp_client::{Client, ClientBuilder, RestartPolicy};
use mcp_legacy::client::Verdict;
use mcp_transport_stdio::ServerConnection;

use crate::Error;
use crate::config::{ServerConfig, ServerTransport};
use crate::handlers::Handlers;

/// The identity the host's clients introduce themselves with, the extensions they declare
/// for the embedding application, and how they answer servers' requests.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientInfo {
    /// The client's name (default `mcp-host`).
    pub name: String,
    /// The client's version (default this crate's version).
    pub version: String,
    /// Whether the clients declare the MCP Apps extension (`io.modelcontextprotocol/ui`,
    /// see `mcp_client::apps`): the embedding application renders apps (default no).
    pub apps: bool,
    /// How the clients answer servers' elicitation, sampling and roots requests (default
    /// none: the capabilities are not declared).
    pub handlers: Handlers,
}

impl Default for ClientInfo {
    fn default() -> Self {
        ClientInfo {
            name: "mcp-host".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            apps: false,
            handlers: Handlers::default(),
        }
    }
}

/// A connected server.
#[derive(Debug)]
#[non_exhaustive]
pub struct Connection {
    /// The client: the same API whichever era the server speaks.
    pub client: Client,
    /// The server's era and protocol version, as the connection settled them.
    pub verdict: Verdict,
    /// A server process the caller must stop after the client, if any. The host's own
    /// stdio servers are owned by their clients (restarted after a crash, stopped by
    /// `Client::shutdown`), so this is `None` for them.
    pub process: Option<ServerConnection>,
}

/// Connects to the server `name` as `config` says, in whichever era it speaks: spawns a
/// stdio server (probed with `server/discover`, then `initialize` if it is an
/// initialize-era server; restarted and probed again after a crash) or reaches a
/// Streamable HTTP endpoint (a modern request first, then a legacy session, then the
/// 2024-11-05 HTTP+SSE transport), with the configuration's headers, environment, working
/// directory, request timeout and protocol revisions ([`ServerConfig::connector`]). The
/// client answers servers' requests with `info`'s [`Handlers`].
///
/// Cancel safety: dropping the future before it completes drops the connection and stops
/// its server.
pub async fn connect(
    name: &str,
    config: &ServerConfig,
    info: &ClientInfo,
) -> Result<Connection, Error> {
    let mut builder = Client::builder(info.name.clone(), info.version.clone());
    if info.apps {
        builder = builder.apps();
    }
    builder = info.handlers.apply(builder);
    connect_with(name, config, builder).await
}

/// [`connect`] with a client builder of the caller's (its handlers, its extensions).
pub(crate) async fn connect_with(
    name: &str,
    config: &ServerConfig,
    #[cfg_attr(not(feature = "auth"), allow(unused_mut))] mut builder: ClientBuilder,
) -> Result<Connection, Error> {
    let server = |source| Error::Connect {
        server: name.to_owned(),
        source: Box::new(source),
    };
    // The OAuth client is made before connecting: the client declares the extensions of
    // its grant, and the transport presents its tokens.
    #[cfg(feature = "auth")]
    let oauth = match &config.transport {
        ServerTransport::Http(http) => oauth_client(name, http)?,
        ServerTransport::Stdio(_) => None,
    };
    #[cfg(feature = "auth")]
    if let Some((oauth, _)) = &oauth {
        builder = builder.oauth(oauth);
    }
    #[cfg(not(feature = "auth"))]
    if let ServerTransport::Http(http) = &config.transport {
        refuse_oauth(name, http)?;
    }
    // The request timeout and the protocol revisions of the configuration.
    let connector = config.connector(builder);
    match &config.transport {
        ServerTransport::Stdio(stdio) => {
            // The client owns the process: it is restarted (and probed again) after a
            // crash within the default budget, and stopped by `Client::shutdown`.
            let supervised = connector
                .spawn_stdio(stdio.to_command(name), RestartPolicy::default())
                .await
                .map_err(server)?;
            Ok(Connection {
                client: supervised.client,
                verdict: supervised.supervisor.verdict(),
                process: None,
            })
        }
        ServerTransport::Http(http) => {
            let mut client_config = http.to_client_config(name)?;
            // A `subscriptions/listen` stream lives as long as the host and its bytes count
            // against this bound: 64 MiB is about 300 000 change notifications.
            client_config.max_response_bytes = 64 << 20;
            #[cfg(feature = "auth")]
            if let Some((_, authorizer)) = oauth {
                client_config = client_config.authorizer(authorizer);
            }
            let connected = connector
                .connect_http(&http.url, client_config)
                .await
                .map_err(server)?;
            Ok(Connection {
                client: connected.client,
                verdict: connected.verdict,
                process: None,
            })
        }
    }
}

/// An OAuth client, and the authorizer its transport is given.
#[cfg(feature = "auth")]
type OAuthParts = (
    std::sync::Arc<mcp_client::auth::OAuthClient>,
    std::sync::Arc<dyn mcp_transport_http::Authorizer>,
);

/// The OAuth client of an HTTP server whose configuration has `oauth`, and the authorizer
/// its transport is given.
#[cfg(feature = "auth")]
fn oauth_client(name: &str, http: &crate::HttpConfig) -> Result<Option<OAuthParts>, Error> {
    http.oauth
        .as_ref()
        .map(|oauth| oauth.authorizer(name, &http.url))
        .transpose()
}

/// Without the `auth` feature, an HTTP server whose configuration has `oauth` is refused:
/// connecting without its tokens would only be refused by the server, less clearly.
#[cfg(not(feature = "auth"))]
fn refuse_oauth(name: &str, http: &crate::HttpConfig) -> Result<(), Error> {
    match http.oauth {
        Some(_) => Err(crate::oauth::refused(
            name,
            "this build of mcp-host has no OAuth client (its `auth` feature is off)",
        )),
        None => Ok(()),
    }
}
