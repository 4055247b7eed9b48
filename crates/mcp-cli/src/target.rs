//! Where a command goes: the bundled example server (the default), a URL, a stdio command
//! given after `--`, or a server named in an `mcpServers` config file; and connecting to it
//! with a client that answers elicitation on a terminal.
//!
//! The config file is the shape most MCP hosts read:
//!
//! ```json
//! {"mcpServers": {
//!     "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
//!               "env": {"DEBUG": "1"}, "cwd": "/tmp"},
//!     "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer …"}}
//! }}
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mcp_client::{Client, ClientBuilder};
use mcp_legacy::client::{Connector, EraChoice, Verdict};
use mcp_transport_http::HttpClientConfig;
use mcp_transport_stdio::{ServerCommand, ServerConnection, StderrMode};
use serde::Deserialize;

use crate::Error;

/// One server a command can reach.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// `mcp serve-example`, run as a child of this process.
    Example,
    /// A Streamable HTTP endpoint, with extra headers.
    Url {
        url: String,
        headers: BTreeMap<String, String>,
    },
    /// A stdio server.
    Command {
        program: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
}

/// An `mcpServers` config file.
#[derive(Debug, Deserialize)]
pub(crate) struct Config {
    #[serde(rename = "mcpServers")]
    pub(crate) servers: BTreeMap<String, ServerEntry>,
}

/// One entry of `mcpServers`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(crate) enum ServerEntry {
    Stdio {
        command: String,
        #[serde(default)]
        args: Vec<String>,
        #[serde(default)]
        env: BTreeMap<String, String>,
        #[serde(default)]
        cwd: Option<PathBuf>,
    },
    Http {
        url: String,
        #[serde(default)]
        headers: BTreeMap<String, String>,
    },
}

impl From<ServerEntry> for Target {
    fn from(entry: ServerEntry) -> Self {
        match entry {
            ServerEntry::Stdio {
                command,
                args,
                env,
                cwd,
            } => Target::Command {
                program: command,
                args,
                env,
                cwd,
            },
            ServerEntry::Http { url, headers } => Target::Url { url, headers },
        }
    }
}

impl Config {
    /// Reads `path`.
    pub(crate) fn load(path: &Path) -> Result<Config, Error> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::ConfigRead {
            path: path.to_owned(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| Error::ConfigParse {
            path: path.to_owned(),
            source,
        })
    }
}

/// The config file to use: `explicit`, else `$MCP_CONFIG`, else `./mcp.json` when it
/// exists.
pub(crate) fn config_path(explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = explicit {
        return Some(path.to_owned());
    }
    if let Some(path) = std::env::var_os("MCP_CONFIG") {
        return Some(PathBuf::from(path));
    }
    let local = Path::new("mcp.json");
    local.is_file().then(|| local.to_owned())
}

/// Resolves the target of a command: `-- COMMAND ARGS…` wins, then `--server` (a URL or a
/// config name), else the example server.
pub(crate) fn resolve(
    server: Option<&str>,
    command: &[String],
    config: Option<&Config>,
) -> Result<Target, Error> {
    if let Some((program, args)) = command.split_first() {
        return Ok(Target::Command {
            program: program.clone(),
            args: args.to_vec(),
            env: BTreeMap::new(),
            cwd: None,
        });
    }
    let Some(server) = server else {
        return Ok(Target::Example);
    };
    if server.starts_with("http://") || server.starts_with("https://") {
        return Ok(Target::Url {
            url: server.to_owned(),
            headers: BTreeMap::new(),
        });
    }
    match config.and_then(|c| c.servers.get(server)) {
        Some(entry) => Ok(entry.clone().into()),
        None => Err(Error::UnknownServer {
            name: server.to_owned(),
            known: config
                .map(|c| c.servers.keys().cloned().collect())
                .unwrap_or_default(),
        }),
    }
}

/// A connected client and what must be stopped with it.
pub(crate) struct Session {
    pub(crate) client: Client,
    /// The era and protocol version the connection settled on.
    pub(crate) verdict: Verdict,
    server: Option<ServerConnection>,
}

impl Session {
    /// Ends the session: a stdio server is asked to exit (stdin closed, then signals).
    pub(crate) async fn close(self) {
        self.client.shutdown(Duration::from_millis(500)).await;
        if let Some(server) = self.server {
            let _ = server.shutdown(Duration::from_secs(2)).await;
        }
    }
}

/// Spawns `command` and connects `builder` to it over stdio in `era`.
async fn connect_stdio(
    builder: ClientBuilder,
    era: EraChoice,
    command: &ServerCommand,
) -> Result<Session, Error> {
    let connected = Connector::new(builder)
        .era(era)
        .connect_stdio(command)
        .await?;
    Ok(Session {
        client: connected.client,
        verdict: connected.verdict,
        server: Some(connected.server),
    })
}

/// Connects `builder` to `target` in whichever era the server speaks (the dual-era
/// connector of `mcp-legacy`: a `server/discover` probe, then `initialize` for an
/// initialize-era server; over HTTP, then the 2024-11-05 HTTP+SSE transport), unless
/// `era` pins one. The bundled example server is known to be modern and is not probed.
pub(crate) async fn connect(
    target: &Target,
    mut builder: ClientBuilder,
    era: EraChoice,
    oauth: Option<&crate::oauth::OAuthArgs>,
) -> Result<Session, Error> {
    match target {
        Target::Example => {
            let exe = std::env::current_exe().map_err(Error::CurrentExe)?;
            let command = ServerCommand::new(exe)
                .arg("serve-example")
                .name("mcp serve-example");
            connect_stdio(builder, EraChoice::Modern, &command).await
        }
        Target::Command {
            program,
            args,
            env,
            cwd,
        } => {
            // Found on the user's PATH and run as the user, as MCP hosts start servers;
            // other variables only from the config's `env`.
            let mut command = ServerCommand::new(program)
                .args(args)
                .envs(env)
                .inherit_default_vars()
                .stderr(StderrMode::Inherit);
            if let Some(cwd) = cwd {
                command = command.current_dir(cwd);
            }
            connect_stdio(builder, era, &command).await
        }
        Target::Url { url, headers } => {
            let mut config = HttpClientConfig::default();
            for (name, value) in headers {
                let bad = || Error::BadHeader(name.clone());
                let name = http::HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
                let value = http::HeaderValue::from_str(value).map_err(|_| bad())?;
                config = config.header(name, value);
            }
            if let Some(args) = oauth
                && let Some(client) = args.client(url).await?
            {
                // The extensions the configuration uses (DPoP) are declared.
                builder = builder.oauth(&client);
                let client = std::sync::Arc::new(client);
                crate::oauth::sign_in_if_needed(url, &config, &client).await?;
                config = config.authorizer(client);
            }
            let connected = Connector::new(builder)
                .era(era)
                .connect_http(url, config)
                .await?;
            Ok(Session {
                client: connected.client,
                verdict: connected.verdict,
                server: None,
            })
        }
    }
}
