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
//! - `type` is `stdio`, `http` (also spelled `streamable-http` or `streamableHttp`) or
//!   `sse`; without it, `command` means stdio and `url` means HTTP. An entry with
//!   `"disabled": true` is skipped without being checked further.
//! - `timeout` is the request timeout in milliseconds (a whole number from 1 to
//!   [`MAX_TIMEOUT_MS`]); `protocolVersions` lists the protocol revisions the client may
//!   use, in order of preference ([`KNOWN_PROTOCOL_VERSIONS`]; any other is refused);
//!   `allow` / `deny` list tool names (`*` matches any run of characters) and `groups`
//!   the exposure groups the server's tools belong to (see [`Exposure`](crate::Exposure)).
//! - Members this crate does not know are ignored: the files of other tools carry keys
//!   of their own. A known member of the wrong type, or one that does not apply to the
//!   entry's transport (`headers` on a stdio server, `args` on an HTTP one), is refused.
//! - In `command`, `args`, `env` values, `cwd`, `url` and `headers` values, `${NAME}` is
//!   replaced by the environment variable `NAME` and `${NAME:-default}` by `default` when
//!   `NAME` is unset or empty; an unset `${NAME}` without a default is an error
//!   ([`Error::UnsetVariable`]), never an empty string. `$$` is a literal `$`; a `$` not
//!   followed by `{` or `$` is kept as it is. Values from the environment are not
//!   expanded again.
//!
//! Every error names the server and the member ([`Error::InvalidField`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use mcp_client::ClientBuilder;
use mcp_legacy::client::{Connector, EraChoice};
use mcp_transport_http::HttpClientConfig;
use mcp_transport_stdio::ServerCommand;
use serde_json::{Map, Value};

use crate::Error;

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

fn check_header(
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
fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn invalid(server: &str, field: &str, reason: &str) -> Error {
    Error::InvalidField {
        server: server.to_owned(),
        field: field.to_owned(),
        reason: reason.to_owned(),
    }
}

/// The transports `type` may name.
const STDIO_TYPES: [&str; 1] = ["stdio"];
const HTTP_TYPES: [&str; 4] = ["http", "streamable-http", "streamableHttp", "sse"];

/// One entry being read.
struct Entry<'a> {
    name: &'a str,
    env: &'a dyn Fn(&str) -> Option<String>,
}

impl Entry<'_> {
    fn invalid(&self, field: &str, reason: &str) -> Error {
        invalid(self.name, field, reason)
    }

    /// `text` with its `${…}` references replaced.
    fn expand(&self, field: &str, text: &str) -> Result<String, Error> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            if let Some(tail) = after.strip_prefix('$') {
                out.push('$');
                rest = tail;
                continue;
            }
            let Some(body) = after.strip_prefix('{') else {
                out.push('$');
                rest = after;
                continue;
            };
            let Some(end) = body.find('}') else {
                return Err(self.invalid(field, "has a `${` without its closing `}`"));
            };
            let reference = &body[..end];
            let (variable, default) = match reference.split_once(":-") {
                Some((variable, default)) => (variable, Some(default)),
                None => (reference, None),
            };
            if !is_variable_name(variable) {
                return Err(self.invalid(
                    field,
                    "has a `${…}` that is neither `${NAME}` nor `${NAME:-default}` (NAME: \
                     letters, digits and `_`, not starting with a digit)",
                ));
            }
            match ((self.env)(variable), default) {
                (Some(value), None) => out.push_str(&value),
                (Some(value), Some(_)) if !value.is_empty() => out.push_str(&value),
                (_, Some(default)) => out.push_str(default),
                (None, None) => {
                    return Err(Error::UnsetVariable {
                        server: self.name.to_owned(),
                        field: field.to_owned(),
                        variable: variable.to_owned(),
                    });
                }
            }
            rest = &body[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// A string member, expanded; `None` when absent or null.
    fn string(&self, entry: &Map<String, Value>, key: &str) -> Result<Option<String>, Error> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => self.expand(key, text).map(Some),
            Some(_) => Err(self.invalid(key, "must be a string")),
        }
    }

    /// A non-empty string member, expanded.
    fn required(&self, entry: &Map<String, Value>, key: &str) -> Result<String, Error> {
        match self.string(entry, key)? {
            Some(text) if !text.is_empty() => Ok(text),
            _ => Err(self.invalid(key, "must be a non-empty string")),
        }
    }

    /// An array of strings, each expanded if `expand`; `None` when absent or null.
    fn strings(
        &self,
        entry: &Map<String, Value>,
        key: &str,
        expand: bool,
    ) -> Result<Option<Vec<String>>, Error> {
        let items = match entry.get(key) {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Array(items)) => items,
            Some(_) => return Err(self.invalid(key, "must be an array of strings")),
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let field = format!("{key}[{i}]");
                match item {
                    Value::String(text) if expand => self.expand(&field, text),
                    Value::String(text) => Ok(text.clone()),
                    _ => Err(self.invalid(&field, "must be a string")),
                }
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// An array of non-empty names (tools, groups), not expanded.
    fn names(&self, entry: &Map<String, Value>, key: &str) -> Result<Option<Vec<String>>, Error> {
        let names = self.strings(entry, key, false)?;
        if let Some(i) = names.iter().flatten().position(String::is_empty) {
            return Err(self.invalid(&format!("{key}[{i}]"), "must not be empty"));
        }
        Ok(names)
    }

    /// An object of strings, each value expanded.
    fn pairs(&self, entry: &Map<String, Value>, key: &str) -> Result<Vec<(String, String)>, Error> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(k, v)| {
                    let field = format!("{key}.{k}");
                    match v {
                        Value::String(text) => Ok((k.clone(), self.expand(&field, text)?)),
                        _ => Err(self.invalid(&field, "must be a string")),
                    }
                })
                .collect(),
            Some(_) => Err(self.invalid(key, "must be an object of strings")),
        }
    }

    /// Refuses the members that do not apply to the entry's transport.
    fn refuse(
        &self,
        entry: &Map<String, Value>,
        keys: &[&str],
        transport: &str,
    ) -> Result<(), Error> {
        match keys
            .iter()
            .find(|k| entry.get(**k).is_some_and(|v| !v.is_null()))
        {
            Some(key) => Err(self.invalid(key, &format!("does not apply to a {transport} server"))),
            None => Ok(()),
        }
    }

    fn read(&self, value: &Value) -> Result<ServerConfig, Error> {
        let Value::Object(entry) = value else {
            return Err(self.invalid("", "the entry must be an object"));
        };
        let ty = match entry.get("type") {
            None | Some(Value::Null) => None,
            Some(Value::String(ty)) => Some(ty.as_str()),
            Some(_) => return Err(self.invalid("type", "must be a string")),
        };
        let has = |key: &str| entry.get(key).is_some_and(|v| !v.is_null());
        let stdio = match ty {
            Some(ty) if STDIO_TYPES.contains(&ty) => true,
            Some(ty) if HTTP_TYPES.contains(&ty) => false,
            Some(_) => {
                return Err(self.invalid(
                    "type",
                    "must be `stdio`, `http` (or `streamable-http`, `streamableHttp`) or `sse`",
                ));
            }
            None if has("command") && has("url") => {
                return Err(self.invalid("url", "cannot be given with `command`"));
            }
            None if has("command") => true,
            None if has("url") => false,
            None => {
                return Err(self.invalid(
                    "command",
                    "is missing: a server needs `command` (stdio) or `url` (HTTP)",
                ));
            }
        };
        let transport = if stdio {
            self.refuse(entry, &["url", "headers"], "stdio")?;
            ServerTransport::Stdio(StdioConfig {
                command: self.required(entry, "command")?,
                args: self.strings(entry, "args", true)?.unwrap_or_default(),
                env: self.pairs(entry, "env")?,
                cwd: self.string(entry, "cwd")?.map(PathBuf::from),
            })
        } else {
            self.refuse(entry, &["command", "args", "env", "cwd"], "HTTP")?;
            let headers = self.pairs(entry, "headers")?;
            for (key, value) in &headers {
                check_header(self.name, key, value)?;
            }
            ServerTransport::Http(HttpConfig {
                url: self.required(entry, "url")?,
                headers,
                sse: ty == Some("sse"),
            })
        };
        let timeout = match entry.get("timeout") {
            None | Some(Value::Null) => None,
            Some(value) => match value.as_u64() {
                Some(ms) if (1..=MAX_TIMEOUT_MS).contains(&ms) => Some(Duration::from_millis(ms)),
                _ => {
                    return Err(self.invalid(
                        "timeout",
                        &format!(
                            "must be a whole number of milliseconds from 1 to {MAX_TIMEOUT_MS}"
                        ),
                    ));
                }
            },
        };
        let protocol_versions = self.strings(entry, "protocolVersions", false)?;
        if let Some(versions) = &protocol_versions {
            if versions.is_empty() {
                return Err(self.invalid("protocolVersions", "must list at least one revision"));
            }
            if let Some((i, _)) = versions
                .iter()
                .enumerate()
                .find(|(_, v)| !KNOWN_PROTOCOL_VERSIONS.contains(&v.as_str()))
            {
                return Err(self.invalid(
                    &format!("protocolVersions[{i}]"),
                    &format!(
                        "is not a known revision (known: {})",
                        KNOWN_PROTOCOL_VERSIONS.join(", ")
                    ),
                ));
            }
        }
        Ok(ServerConfig {
            transport,
            timeout,
            protocol_versions: protocol_versions.unwrap_or_default(),
            allow: self.names(entry, "allow")?,
            deny: self.names(entry, "deny")?.unwrap_or_default(),
            groups: self.names(entry, "groups")?.unwrap_or_default(),
        })
    }
}

fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Named servers, in the order the configuration lists them.
///
/// ```
/// use mcp_host::HostConfig;
///
/// let config = HostConfig::from_json(r#"{"mcpServers": {
///     "fs": {"command": "mcp-fs", "args": ["/tmp"]},
///     "web": {"url": "http://127.0.0.1:8080/mcp", "headers": {"Authorization": "Bearer t"}}
/// }}"#)?;
/// assert_eq!(config.servers.len(), 2);
/// let fs = config.get("fs").and_then(|s| s.stdio()).unwrap();
/// assert_eq!(fs.args, ["/tmp"]);
/// assert!(HostConfig::from_json(r#"{"mcpServers": {"x": {}}}"#).is_err());
/// # Ok::<(), mcp_host::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostConfig {
    /// The servers, by name.
    pub servers: Vec<(String, ServerConfig)>,
}

impl HostConfig {
    /// No servers.
    pub fn new() -> Self {
        HostConfig::default()
    }

    /// Adds a server.
    #[must_use]
    pub fn server(mut self, name: impl Into<String>, config: impl Into<ServerConfig>) -> Self {
        self.servers.push((name.into(), config.into()));
        self
    }

    /// The configuration of the server called `name`.
    pub fn get(&self, name: &str) -> Option<&ServerConfig> {
        self.servers.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }

    /// The configuration of one server alone (for commands that talk to one).
    pub fn only(&self, name: &str) -> Result<HostConfig, Error> {
        let config = self
            .get(name)
            .ok_or_else(|| Error::UnknownServer(name.to_owned()))?;
        Ok(HostConfig::new().server(name, config.clone()))
    }

    /// Reads a configuration from JSON text, substituting `${VAR}` from this process's
    /// environment.
    pub fn from_json(text: &str) -> Result<HostConfig, Error> {
        HostConfig::from_json_with_env(text, &process_env)
    }

    /// Reads a configuration from JSON text, substituting `${VAR}` with what `env`
    /// returns for `VAR` (`None`: unset).
    pub fn from_json_with_env(
        text: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<HostConfig, Error> {
        let value: Value = serde_json::from_str(text).map_err(Error::Json)?;
        HostConfig::from_value_with_env(&value, env)
    }

    /// Reads a configuration file.
    pub fn load(path: impl AsRef<Path>) -> Result<HostConfig, Error> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.to_owned(),
            source,
        })?;
        HostConfig::from_json(&text)
    }

    /// Reads a configuration from a JSON value with an `mcpServers` (or `servers`) object,
    /// substituting `${VAR}` from this process's environment.
    pub fn from_value(value: &Value) -> Result<HostConfig, Error> {
        HostConfig::from_value_with_env(value, &process_env)
    }

    /// Reads a configuration from a JSON value with an `mcpServers` (or `servers`)
    /// object, substituting `${VAR}` with what `env` returns for `VAR` (`None`: unset).
    pub fn from_value_with_env(
        value: &Value,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<HostConfig, Error> {
        let Value::Object(top) = value else {
            return Err(Error::Config(
                "expected a JSON object with an `mcpServers` (or `servers`) object".to_owned(),
            ));
        };
        let servers = match (top.get("mcpServers"), top.get("servers")) {
            (Some(_), Some(_)) => {
                return Err(Error::Config(
                    "both `mcpServers` and `servers` are present: keep one of them".to_owned(),
                ));
            }
            (Some(servers), None) | (None, Some(servers)) => servers,
            (None, None) => {
                return Err(Error::Config(
                    "expected an `mcpServers` (or `servers`) object".to_owned(),
                ));
            }
        };
        let Value::Object(servers) = servers else {
            return Err(Error::Config(
                "`mcpServers` (or `servers`) must be an object of servers by name".to_owned(),
            ));
        };
        let mut config = HostConfig::new();
        for (name, entry) in servers {
            if name.is_empty() {
                return Err(Error::Config("a server name is empty".to_owned()));
            }
            match entry.get("disabled") {
                None | Some(Value::Null | Value::Bool(false)) => {}
                Some(Value::Bool(true)) => continue,
                Some(_) => return Err(invalid(name, "disabled", "must be true or false")),
            }
            config.servers.push((
                name.clone(),
                ServerConfig::from_value_with_env(name, entry, env)?,
            ));
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/ada".to_owned()),
            "EMPTY" => Some(String::new()),
            "TRICKY" => Some("${HOME}$$".to_owned()),
            _ => None,
        }
    }

    fn read(input: &Value) -> Result<Vec<(String, ServerConfig)>, Error> {
        HostConfig::from_value_with_env(input, &env).map(|c| c.servers)
    }

    fn one(entry: &Value) -> Result<ServerConfig, Error> {
        ServerConfig::from_value_with_env("s", entry, &env)
    }

    fn error(entry: &Value) -> String {
        match one(entry) {
            Ok(config) => panic!("accepted: {config:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn both_shapes_and_every_member() {
        let servers = read(&json!({"mcpServers": {
            "a": {"command": "srv", "args": ["-v"], "env": {"K": "V"}, "cwd": "/tmp",
                  "extra": 1, "timeout": 1500, "protocolVersions": ["2025-06-18"],
                  "allow": ["read_*"], "deny": ["read_secret"], "groups": ["files"]},
            "b": {"type": "http", "url": "http://x/mcp", "headers": {"Authorization": "t"}},
            "c": {"command": "off", "disabled": true},
            "d": {"type": "sse", "url": "http://x/sse"}
        }}))
        .unwrap();
        let expected = vec![
            (
                "a".to_owned(),
                ServerConfig::new(
                    StdioConfig::new("srv")
                        .args(["-v"])
                        .env("K", "V")
                        .cwd("/tmp"),
                )
                .timeout(Duration::from_millis(1500))
                .protocol_versions(["2025-06-18"])
                .allow(["read_*"])
                .deny(["read_secret"])
                .groups(["files"]),
            ),
            (
                "b".to_owned(),
                HttpConfig::new("http://x/mcp")
                    .header("Authorization", "t")
                    .into(),
            ),
            (
                "d".to_owned(),
                HttpConfig {
                    sse: true,
                    ..HttpConfig::new("http://x/sse")
                }
                .into(),
            ),
        ];
        assert_eq!(servers, expected);
        // The VS Code shape reads the same.
        let vscode = read(
            &json!({"servers": {"b": {"type": "http", "url": "http://x/mcp",
            "headers": {"Authorization": "t"}}}}),
        )
        .unwrap();
        assert_eq!(vscode, expected[1..2]);
    }

    #[test]
    fn top_level_errors() {
        for (input, message) in [
            (json!({}), "expected an `mcpServers`"),
            (json!([]), "expected a JSON object"),
            (
                json!({"mcpServers": {}, "servers": {}}),
                "both `mcpServers` and `servers`",
            ),
            (json!({"mcpServers": []}), "must be an object of servers"),
            (
                json!({"mcpServers": {"": {"command": "x"}}}),
                "name is empty",
            ),
            (
                json!({"mcpServers": {"a": {"command": "x", "disabled": "yes"}}}),
                "server `a`: `disabled` must be true or false",
            ),
        ] {
            let e = read(&input).unwrap_err().to_string();
            assert!(e.contains(message), "{input}: {e}");
        }
    }

    #[test]
    fn entry_errors_name_the_server_and_the_member() {
        for (entry, message) in [
            (json!([]), "the entry must be an object"),
            (json!({}), "`command` is missing"),
            (json!({"command": 1}), "`command` must be a string"),
            (
                json!({"command": ""}),
                "`command` must be a non-empty string",
            ),
            (
                json!({"command": "x", "url": "y"}),
                "`url` cannot be given with `command`",
            ),
            (
                json!({"type": "sse", "command": "y"}),
                "`command` does not apply to a HTTP",
            ),
            (json!({"type": "ws", "url": "y"}), "`type` must be"),
            (json!({"type": 1, "url": "y"}), "`type` must be a string"),
            (
                json!({"type": "stdio", "url": "y"}),
                "`url` does not apply to a stdio",
            ),
            (
                json!({"type": "stdio"}),
                "`command` must be a non-empty string",
            ),
            (json!({"type": "http"}), "`url` must be a non-empty string"),
            (
                json!({"command": "x", "headers": {"a": "b"}}),
                "`headers` does not apply",
            ),
            (
                json!({"url": "http://x", "env": {"a": "b"}}),
                "`env` does not apply",
            ),
            (
                json!({"command": "x", "args": [1]}),
                "`args[0]` must be a string",
            ),
            (
                json!({"command": "x", "args": "a"}),
                "`args` must be an array",
            ),
            (
                json!({"command": "x", "env": {"K": 1}}),
                "`env.K` must be a string",
            ),
            (json!({"command": "x", "cwd": 1}), "`cwd` must be a string"),
            (
                json!({"url": "http://x", "headers": {"bad name": "v"}}),
                "`headers.bad name` is not a valid HTTP header name",
            ),
            (
                json!({"url": "http://x", "headers": {"a": "line\nbreak"}}),
                "`headers.a` is not a valid HTTP header value",
            ),
            (
                json!({"command": "x", "timeout": 0}),
                "`timeout` must be a whole number",
            ),
            (
                json!({"command": "x", "timeout": 1.5}),
                "`timeout` must be a whole number",
            ),
            (
                json!({"command": "x", "timeout": "30s"}),
                "`timeout` must be a whole number",
            ),
            (
                json!({"command": "x", "timeout": MAX_TIMEOUT_MS + 1}),
                "`timeout` must be",
            ),
            (
                json!({"command": "x", "protocolVersions": []}),
                "at least one",
            ),
            (
                json!({"command": "x", "protocolVersions": ["2026-07-28", "2024-01-01"]}),
                "`protocolVersions[1]` is not a known revision",
            ),
            (
                json!({"command": "x", "allow": ["a", ""]}),
                "`allow[1]` must not be empty",
            ),
            (
                json!({"command": "x", "deny": "a"}),
                "`deny` must be an array",
            ),
            (
                json!({"command": "x", "groups": [true]}),
                "`groups[0]` must be a string",
            ),
        ] {
            let e = error(&entry);
            assert!(e.contains("server `s`"), "{entry}: {e}");
            assert!(e.contains(message), "{entry}: {e}");
        }
        // The typed error carries the server and the member.
        match one(&json!({"command": "x", "env": {"K": 1}})) {
            Err(Error::InvalidField { server, field, .. }) => {
                assert_eq!((server.as_str(), field.as_str()), ("s", "env.K"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn variables_are_substituted_once() {
        let config = one(&json!({
            "command": "${HOME}/bin/srv",
            "args": ["--home=${HOME}", "${MISSING:-fallback}", "${EMPTY:-was empty}", "[${EMPTY}]",
                     "$$HOME", "cost: $5", "${TRICKY}", "a$"],
            "env": {"TOKEN": "${MISSING:-}"},
            "cwd": "${HOME}"
        }))
        .unwrap();
        let stdio = config.stdio().unwrap();
        assert_eq!(stdio.command, "/home/ada/bin/srv");
        assert_eq!(
            stdio.args,
            [
                "--home=/home/ada",
                "fallback",
                "was empty",
                "[]",
                "$HOME",
                "cost: $5",
                // A value from the environment is not expanded again.
                "${HOME}$$",
                "a$"
            ]
        );
        assert_eq!(stdio.env, [("TOKEN".to_owned(), String::new())]);
        assert_eq!(stdio.cwd.as_deref(), Some(Path::new("/home/ada")));
        let http = one(&json!({"url": "https://${MISSING:-example.com}/mcp",
                              "headers": {"X-Home": "${HOME}"}}))
        .unwrap();
        let http = http.http().unwrap();
        assert_eq!(http.url, "https://example.com/mcp");
        assert_eq!(
            http.headers,
            [("X-Home".to_owned(), "/home/ada".to_owned())]
        );
        // Names are not expanded.
        let named = one(&json!({"command": "x", "allow": ["${HOME}"]})).unwrap();
        assert_eq!(named.allow, Some(vec!["${HOME}".to_owned()]));
    }

    #[test]
    fn an_unset_variable_fails_closed() {
        match one(&json!({"command": "x", "args": ["a", "--token=${API_TOKEN}"]})) {
            Err(Error::UnsetVariable {
                server,
                field,
                variable,
            }) => {
                assert_eq!(
                    (server.as_str(), field.as_str(), variable.as_str()),
                    ("s", "args[1]", "API_TOKEN")
                );
            }
            other => panic!("{other:?}"),
        }
        let e =
            error(&json!({"url": "http://x", "headers": {"Authorization": "Bearer ${API_TOKEN}"}}));
        assert!(
            e.contains("API_TOKEN") && e.contains("headers.Authorization"),
            "{e}"
        );
        for (entry, message) in [
            (json!({"command": "${HOME"}), "without its closing"),
            (json!({"command": "${}"}), "neither"),
            (json!({"command": "${1X}"}), "neither"),
            (json!({"command": "${A B}"}), "neither"),
            (json!({"command": "${A-b}"}), "neither"),
        ] {
            let e = error(&entry);
            assert!(
                e.contains(message) && e.contains("`command`"),
                "{entry}: {e}"
            );
        }
        // A disabled entry is not read, so its variables need not be set.
        let servers = read(&json!({"mcpServers": {
            "off": {"command": "${API_TOKEN}", "disabled": true}
        }}))
        .unwrap();
        assert!(servers.is_empty());
    }

    #[test]
    fn protocol_versions_choose_the_era() {
        let stdio = || ServerConfig::new(StdioConfig::new("x"));
        let choice = |config: ServerConfig| {
            format!(
                "{:?}",
                config.connector(mcp_client::Client::builder("t", "1"))
            )
        };
        let default = choice(stdio());
        assert!(default.contains("choice: Detect"), "{default}");
        let modern = choice(stdio().protocol_versions(["2026-07-28"]));
        assert!(modern.contains("choice: Modern"), "{modern}");
        let legacy = choice(stdio().protocol_versions(["2025-06-18", "2024-11-05"]));
        assert!(
            legacy.contains("choice: Legacy")
                && legacy.contains(r#"legacy_offer: ["2025-06-18", "2024-11-05"]"#),
            "{legacy}"
        );
        let both = choice(stdio().protocol_versions(["2026-07-28", "2025-03-26"]));
        assert!(
            both.contains("choice: Detect") && both.contains(r#"legacy_offer: ["2025-03-26"]"#),
            "{both}"
        );
        let timed = choice(stdio().timeout(Duration::from_millis(250)));
        assert!(timed.contains("probe_timeout: 250ms"), "{timed}");
    }

    #[test]
    fn set_header_replaces_whatever_the_case() {
        let http = HttpConfig::new("http://x")
            .header("Authorization", "a")
            .header("X-Other", "b")
            .set_header("authorization", "c");
        assert_eq!(
            http.headers,
            [
                ("X-Other".to_owned(), "b".to_owned()),
                ("authorization".to_owned(), "c".to_owned())
            ]
        );
        assert!(http.to_client_config("s").is_ok());
        let bad = HttpConfig::new("http://x").header("a b", "c");
        assert!(matches!(
            bad.to_client_config("s"),
            Err(Error::InvalidField { field, .. }) if field == "headers.a b"
        ));
    }
}
