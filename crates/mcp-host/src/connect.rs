//! The one place where a server configuration becomes a connected [`Client`]. Everything
//! else in the crate works on clients and never knows how they were made, so that the
//! dual-era client of `mcp-legacy` (the same `mcp_client::Client`) can replace this alone.

use mcp_client::{Client, RestartPolicy};
use mcp_transport_http::HttpClientConfig;
use mcp_transport_stdio::ServerCommand;

use crate::Error;
use crate::config::ServerConfig;

/// The variables a stdio server inherits from this process (the TypeScript SDK's list);
/// everything else it gets only from its configuration.
const INHERITED: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// The identity the host's clients introduce themselves with.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientInfo {
    /// The client's name (default `mcp-host`).
    pub name: String,
    /// The client's version (default this crate's version).
    pub version: String,
}

impl Default for ClientInfo {
    fn default() -> Self {
        ClientInfo {
            name: "mcp-host".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}

/// Connects to the server `name` as `config` says: spawns a stdio server (the client owns
/// it, restarts it after a crash within the default budget, and stops it on
/// [`Client::shutdown`]) or opens a Streamable HTTP client.
///
/// Nothing is sent yet: 2026-07-28 has no handshake, so the first request (`tools/list`)
/// is the first contact. Not cancel-safe in a meaningful sense: dropping the future before
/// it completes drops the client and stops its server.
#[allow(
    clippy::unused_async,
    reason = "the dual-era client that replaces this needs to await its handshake"
)]
pub async fn connect(
    name: &str,
    config: &ServerConfig,
    info: &ClientInfo,
) -> Result<Client, Error> {
    let builder = Client::builder(info.name.clone(), info.version.clone());
    let server = |source| Error::Server {
        server: name.to_owned(),
        source: Box::new(source),
    };
    match config {
        ServerConfig::Stdio(stdio) => {
            let mut command = ServerCommand::new(&stdio.command)
                .args(&stdio.args)
                .envs(stdio.env.iter().map(|(k, v)| (k, v)))
                .name(name);
            for var in INHERITED {
                command = command.inherit_var(var);
            }
            if let Some(dir) = &stdio.cwd {
                command = command.current_dir(dir);
            }
            builder
                .spawn_stdio(command, RestartPolicy::default())
                .map_err(server)
        }
        ServerConfig::Http(http) => {
            let mut client_config = HttpClientConfig::default();
            // A `subscriptions/listen` stream lives as long as the host and its bytes count
            // against this bound: 64 MiB is about 300 000 change notifications.
            client_config.max_response_bytes = 64 << 20;
            for (key, value) in &http.headers {
                let header = http::HeaderName::from_bytes(key.as_bytes())
                    .map_err(|e| Error::Config(format!("server `{name}`: header `{key}`: {e}")))?;
                let value = http::HeaderValue::from_str(value)
                    .map_err(|e| Error::Config(format!("server `{name}`: header `{key}`: {e}")))?;
                client_config = client_config.header(header, value);
            }
            builder
                .connect_http(&http.url, client_config)
                .map_err(server)
        }
    }
}
