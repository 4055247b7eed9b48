//! Server configuration, in code or from the `mcpServers` JSON file most MCP hosts read
//! (the schema, with examples, is `docs/CONFIG.md` in the repository).
//!
//! ```json
//! {"mcpServers": {
//!   "fs":     {"command": "mcp-fs", "args": ["/tmp"], "env": {"LOG": "1"}, "cwd": "/",
//!              "deny": ["delete_*"], "groups": ["files"]},
//!   "remote": {"url": "https://example.com/mcp", "timeout": 30000,
//!              "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"}},
//!   "old":    {"type": "sse", "url": "http://127.0.0.1:8000/sse",
//!              "protocolVersions": ["2024-11-05"]}
//! }}
//! ```
//!
//! - The servers are under `mcpServers` (the Claude Desktop shape) or `servers` (the VS
//!   Code shape); a file with both is refused ([`Error::Config`]), so that no entry is
//!   silently shadowed.
//! - The top-level `naming` object (`prefix`, `separator`, `includeServer`, `maxLength`)
//!   sets how the host names tools for the model ([`NamingPolicy`](crate::NamingPolicy),
//!   [`HostConfig::naming`]); `{"prefix": "mcp"}` gives `mcp__server__tool`.
//! - `type` is `stdio`, `http` (also spelled `streamable-http` or `streamableHttp`) or
//!   `sse`; without it, `command` means stdio and `url` means HTTP. An entry with
//!   `"disabled": true` is skipped without being checked further.
//! - `timeout` is the request timeout in milliseconds (a whole number from 1 to
//!   [`MAX_TIMEOUT_MS`]); `protocolVersions` lists the protocol revisions the client may
//!   use, in order of preference ([`KNOWN_PROTOCOL_VERSIONS`]; any other is refused);
//!   `allow` / `deny` list tool names (`*` matches any run of characters) and `groups`
//!   the exposure groups the server's tools belong to (see [`Exposure`](crate::Exposure)).
//! - `rename` maps the server's tool names to the names the model sees, used exactly as
//!   given ([`ServerConfig::rename`]); a name given to two tools is refused.
//! - `approval` (`tools`, `destructive`) names the tools whose calls need approval
//!   ([`Approval`](crate::Approval)), on top of the host's policy.
//! - `oauth` on an HTTP entry (`grant`: `client_credentials` with `clientId`,
//!   `clientSecret` and `issuer`, or `stored` with `store`; and `allowPrivate`) says how
//!   the host obtains OAuth tokens ([`OAuth`](crate::OAuth), feature `auth`).
//! - Members this crate does not know are ignored: the files of other tools carry keys
//!   of their own. A known member of the wrong type, or one that does not apply to the
//!   entry's transport (`headers` on a stdio server, `args` on an HTTP one), is refused.
//! - In `command`, `args`, `env` values, `cwd`, `url`, `headers` values and the strings of
//!   `oauth`, `${NAME}` is
//!   replaced by the environment variable `NAME` and `${NAME:-default}` by `default` when
//!   `NAME` is unset or empty; an unset `${NAME}` without a default is an error
//!   ([`Error::UnsetVariable`]), never an empty string. `$$` is a literal `$`; a `$` not
//!   followed by `{` or `$` is kept as it is. Values from the environment are not
//!   expanded again.
//!
//! Every error in an entry names the server and the member ([`Error::InvalidField`]).

use std::path::PathBuf;
use std::time::Duration;

use mcp_client::ClientBuilder;
use mcp_legacy::client::{Connector, EraChoice};
use mcp_transport_http::HttpClientConfig;
use mcp_transport_stdio::ServerCommand;
use serde_json::Value;

use crate::Error;
use crate::oauth::OAuth;
use crate::rules::Approval;

mod file;
mod gateway;
mod read;
#[cfg(test)]
mod tests;

pub use file::HostConfig;
pub use gateway::{GatewayAuth, GatewayConfig, TokenCheck};
use read::Entry;

/// The largest `timeout` a configuration may give, in milliseconds: one day.
pub const MAX_TIMEOUT_MS: u64 = 86_400_000;

/// The protocol revisions a `protocolVersions` list may name: the one modern revision this
/// crate's client speaks
/// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning>) and the
/// initialize-era revisions of the dual-era connector.
pub const KNOWN_PROTOCOL_VERSIONS: [&str; 5] = [
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];

/// How to reach one server: the transport, and what the host makes of the server's
/// tools.
///
/// ```
/// use std::time::Duration;
/// use mcp_host::{ServerConfig, StdioConfig};
///
/// let server = ServerConfig::new(StdioConfig::new("mcp-fs").args(["/tmp"]))
///     .timeout(Duration::from_secs(30))
///     .deny(["delete_*"])
///     .groups(["files"]);
/// assert_eq!(server.deny, ["delete_*"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerConfig {
    /// How the server is reached.
    pub transport: ServerTransport,
    /// The timeout of every request to the server (default: the client's).
    pub timeout: Option<Duration>,
    /// The protocol revisions the client may use with the server, in order of
    /// preference; empty for every revision the client speaks. Each is one of
    /// [`KNOWN_PROTOCOL_VERSIONS`].
    pub protocol_versions: Vec<String>,
    /// The only tools of the server exposed, if set (tool names, `*` matching any run of
    /// characters).
    pub allow: Option<Vec<String>>,
    /// Tools of the server never exposed (names, `*` matching any run of characters).
    pub deny: Vec<String>,
    /// The exposure groups every tool of the server belongs to: the tools are exposed
    /// while at least one of them is on ([`Host::set_group`](crate::Host::set_group)).
    /// A group first named here starts on.
    pub groups: Vec<String>,
    /// Model-visible names for tools of the server, as (the server's name for the tool,
    /// the name the model sees). A name is used exactly as given, with no prefix or server
    /// name, and must be valid for every vendor (`^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`); a
    /// derived name that would equal it gets a hash suffix instead. Two tools given one
    /// name are refused when the host connects.
    pub rename: Vec<(String, String)>,
    /// The tools of the server whose every call needs approval (see
    /// [`HostBuilder::approver`](crate::HostBuilder::approver)), on top of the host's
    /// policy.
    pub approval: Approval,
}

/// The transport of a server.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerTransport {
    /// A command spawned and spoken to over stdio
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio>).
    Stdio(StdioConfig),
    /// A Streamable HTTP endpoint
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>),
    /// or the SSE URL of a 2024-11-05 HTTP+SSE server (`"type": "sse"`,
    /// <https://modelcontextprotocol.io/specification/2024-11-05/basic/transports>): the
    /// connection finds which.
    Http(HttpConfig),
}

/// A stdio server: `{command, args, env, cwd}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StdioConfig {
    /// The program (looked up in `PATH`; never run through a shell).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Environment variables set for it, on top of `HOME`, `LOGNAME`, `PATH`, `SHELL`,
    /// `TERM` and `USER` inherited from this process. A later value for the same name
    /// wins.
    pub env: Vec<(String, String)>,
    /// Its working directory (default: this process's).
    pub cwd: Option<PathBuf>,
}

impl StdioConfig {
    /// A command with no arguments.
    pub fn new(command: impl Into<String>) -> Self {
        StdioConfig {
            command: command.into(),
            ..StdioConfig::default()
        }
    }

    /// Adds arguments.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable.
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Sets the working directory.
    #[must_use]
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// The command that spawns the server `name`: its arguments, its `env` on top of
    /// the inherited defaults (`ServerCommand::inherit_default_vars`), its `cwd`.
    pub fn to_command(&self, name: &str) -> ServerCommand {
        let mut command = ServerCommand::new(&self.command)
            .args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .name(name)
            // Everything else the server gets only from its configuration.
            .inherit_default_vars();
        if let Some(dir) = &self.cwd {
            command = command.current_dir(dir);
        }
        command
    }
}

/// An HTTP server: `{url, headers}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpConfig {
    /// The MCP endpoint, such as `http://127.0.0.1:8080/mcp`, or the SSE URL of a
    /// 2024-11-05 HTTP+SSE server.
    pub url: String,
    /// Headers sent with every request (`Authorization`, for example).
    pub headers: Vec<(String, String)>,
    /// Whether the configuration said `"type": "sse"`: the URL is a 2024-11-05 SSE
    /// endpoint. The connection finds the transport either way (Streamable HTTP first).
    pub sse: bool,
    /// How the host obtains OAuth tokens for the server, if it needs them (see
    /// [`OAuth`]; used only with the `auth` feature, and refused when the host connects
    /// without it).
    pub oauth: Option<OAuth>,
}

impl HttpConfig {
    /// An endpoint with no extra headers.
    pub fn new(url: impl Into<String>) -> Self {
        HttpConfig {
            url: url.into(),
            ..HttpConfig::default()
        }
    }

    /// Adds a header.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets the OAuth settings.
    #[must_use]
    pub fn oauth(mut self, oauth: OAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// Sets a header, replacing every earlier value of that name (compared without
    /// regard to case, as HTTP does).
    #[must_use]
    pub fn set_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        let name = name.into();
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
        self.headers.push((name, value.into()));
        self
    }

    /// The transport configuration for the server `name`: these headers on every
    /// request, through the proxy the environment names (`HTTPS_PROXY`, `HTTP_PROXY`,
    /// `ALL_PROXY`, `NO_PROXY`, as curl reads them). Fails on a header name or value HTTP
    /// does not allow.
    pub fn to_client_config(&self, name: &str) -> Result<HttpClientConfig, Error> {
        let mut config =
            HttpClientConfig::default().proxy(mcp_transport_http::ProxyConfig::from_env());
        for (key, value) in &self.headers {
            let (header, value) = check_header(name, key, value)?;
            config = config.header(header, value);
        }
        Ok(config)
    }
}

impl From<StdioConfig> for ServerTransport {
    fn from(config: StdioConfig) -> Self {
        ServerTransport::Stdio(config)
    }
}

impl From<HttpConfig> for ServerTransport {
    fn from(config: HttpConfig) -> Self {
        ServerTransport::Http(config)
    }
}

impl<T: Into<ServerTransport>> From<T> for ServerConfig {
    fn from(transport: T) -> Self {
        ServerConfig::new(transport)
    }
}

pub(super) fn check_header(
    server: &str,
    key: &str,
    value: &str,
) -> Result<(http::HeaderName, http::HeaderValue), Error> {
    let field = || format!("headers.{key}");
    let header = http::HeaderName::from_bytes(key.as_bytes())
        .map_err(|_| invalid(server, &field(), "is not a valid HTTP header name"))?;
    let value = http::HeaderValue::from_str(value)
        .map_err(|_| invalid(server, &field(), "is not a valid HTTP header value"))?;
    Ok((header, value))
}

impl ServerConfig {
    /// A server reached over `transport`, with no other settings.
    pub fn new(transport: impl Into<ServerTransport>) -> Self {
        ServerConfig {
            transport: transport.into(),
            timeout: None,
            protocol_versions: Vec::new(),
            allow: None,
            deny: Vec::new(),
            groups: Vec::new(),
            rename: Vec::new(),
            approval: Approval::default(),
        }
    }

    /// Sets the request timeout.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets the protocol revisions the client may use, in order of preference
    /// ([`connector`](Self::connector) drops the ones it does not know).
    #[must_use]
    pub fn protocol_versions<I, S>(mut self, versions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.protocol_versions = versions.into_iter().map(Into::into).collect();
        self
    }

    /// Exposes only these tools (adds to an earlier allow list).
    #[must_use]
    pub fn allow<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allow
            .get_or_insert_with(Vec::new)
            .extend(tools.into_iter().map(Into::into));
        self
    }

    /// Hides these tools.
    #[must_use]
    pub fn deny<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.deny.extend(tools.into_iter().map(Into::into));
        self
    }

    /// Puts the server's tools in these exposure groups.
    #[must_use]
    pub fn groups<I, S>(mut self, groups: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.groups.extend(groups.into_iter().map(Into::into));
        self
    }

    /// Gives the server's tool `tool` the model-visible name `name` (see
    /// [`rename`](Self::rename)); a later rename of the same tool replaces it.
    #[must_use]
    pub fn rename(mut self, tool: impl Into<String>, name: impl Into<String>) -> Self {
        let tool = tool.into();
        self.rename.retain(|(t, _)| *t != tool);
        self.rename.push((tool, name.into()));
        self
    }

    /// Makes calls of these tools need approval (adds to earlier rules).
    #[must_use]
    pub fn approval(mut self, approval: Approval) -> Self {
        self.approval.merge(approval);
        self
    }

    /// The stdio transport, if that is the server's.
    pub fn stdio(&self) -> Option<&StdioConfig> {
        match &self.transport {
            ServerTransport::Stdio(stdio) => Some(stdio),
            ServerTransport::Http(_) => None,
        }
    }

    /// The HTTP transport, if that is the server's.
    pub fn http(&self) -> Option<&HttpConfig> {
        match &self.transport {
            ServerTransport::Http(http) => Some(http),
            ServerTransport::Stdio(_) => None,
        }
    }

    /// A dual-era connector for `builder` as this configuration says: the request
    /// timeout on the client (and on the era probe), and the protocol revisions. With
    /// only 2026-07-28 listed, the client speaks it without probing; with only
    /// initialize-era revisions, it sends `initialize` offering the first and accepting
    /// any of them; with both, it probes and uses the listed legacy revisions with a
    /// legacy server.
    pub fn connector(&self, mut builder: ClientBuilder) -> Connector {
        if let Some(timeout) = self.timeout {
            builder = builder.timeout(timeout);
        }
        let mut connector = Connector::new(builder);
        if let Some(timeout) = self.timeout {
            connector = connector.probe_timeout(timeout);
        }
        let known: Vec<&str> = self
            .protocol_versions
            .iter()
            .map(String::as_str)
            .filter(|v| KNOWN_PROTOCOL_VERSIONS.contains(v))
            .collect();
        if known.is_empty() {
            return connector;
        }
        let modern = known
            .iter()
            .any(|v| mcp_client::SUPPORTED_VERSIONS.contains(v));
        let legacy: Vec<&str> = known
            .iter()
            .copied()
            .filter(|v| mcp_legacy::LEGACY_VERSIONS.contains(v))
            .collect();
        match (modern, legacy.is_empty()) {
            (true, true) => connector.era(EraChoice::Modern),
            (true, false) => connector.legacy_versions(legacy),
            (false, _) => connector.era(EraChoice::Legacy).legacy_versions(legacy),
        }
    }

    /// Reads one entry of `mcpServers` named `name`, substituting `${VAR}` from this
    /// process's environment.
    pub fn from_value(name: &str, value: &Value) -> Result<ServerConfig, Error> {
        ServerConfig::from_value_with_env(name, value, &process_env)
    }

    /// Reads one entry of `mcpServers` named `name`, substituting `${VAR}` with what
    /// `env` returns for `VAR` (`None`: unset).
    pub fn from_value_with_env(
        name: &str,
        value: &Value,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ServerConfig, Error> {
        Entry { name, env }.read(value)
    }
}

/// This process's environment variable `name` (`None` if unset or not Unicode).
pub(super) fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

pub(super) fn invalid(server: &str, field: &str, reason: &str) -> Error {
    Error::InvalidField {
        server: server.to_owned(),
        field: field.to_owned(),
        reason: reason.to_owned(),
    }
}
