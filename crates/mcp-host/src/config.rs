//! Server configuration in code or from the widely used `mcpServers` JSON shape.
//!
//! ```json
//! {"mcpServers": {
//!   "fs":     {"command": "mcp-fs", "args": ["/tmp"], "env": {"LOG": "1"}, "cwd": "/"},
//!   "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}}
//! }}
//! ```
//!
//! `type` (`stdio`, `http`, `streamable-http`) is accepted and checked against the other
//! members; an entry with `"disabled": true` is skipped; other members are ignored. A
//! top-level `servers` object (the VS Code shape) is read like `mcpServers`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::Error;

/// How to reach one server.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerConfig {
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
    /// `TERM` and `USER` inherited from this process.
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
}

/// An HTTP server: `{url, headers}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpConfig {
    /// The MCP endpoint, such as `http://127.0.0.1:8080/mcp`.
    pub url: String,
    /// Headers sent with every request (`Authorization`, for example).
    pub headers: Vec<(String, String)>,
}

impl HttpConfig {
    /// An endpoint with no extra headers.
    pub fn new(url: impl Into<String>) -> Self {
        HttpConfig {
            url: url.into(),
            headers: Vec::new(),
        }
    }

    /// Adds a header.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// Named servers, in the order the configuration lists them.
///
/// ```
/// use mcp_host::{HostConfig, ServerConfig};
///
/// let config = HostConfig::from_json(r#"{"mcpServers": {
///     "fs": {"command": "mcp-fs", "args": ["/tmp"]},
///     "web": {"url": "http://127.0.0.1:8080/mcp", "headers": {"Authorization": "Bearer t"}}
/// }}"#)?;
/// assert_eq!(config.servers.len(), 2);
/// assert!(matches!(config.get("fs"), Some(ServerConfig::Stdio(s)) if s.args == ["/tmp"]));
/// assert!(HostConfig::from_json(r#"{"mcpServers": {"x": {}}}"#).is_err());
/// # Ok::<(), mcp_host::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostConfig {
    /// The servers, by name.
    pub servers: Vec<(String, ServerConfig)>,
}

fn bad(name: &str, what: &str) -> Error {
    Error::Config(format!("server `{name}`: {what}"))
}

fn strings(name: &str, key: &str, value: Option<&Value>) -> Result<Vec<String>, Error> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| bad(name, &format!("`{key}` must hold strings")))
            })
            .collect(),
        Some(_) => Err(bad(name, &format!("`{key}` must be an array of strings"))),
    }
}

fn pairs(name: &str, key: &str, value: Option<&Value>) -> Result<Vec<(String, String)>, Error> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| {
                v.as_str()
                    .map(|v| (k.clone(), v.to_owned()))
                    .ok_or_else(|| bad(name, &format!("`{key}.{k}` must be a string")))
            })
            .collect(),
        Some(_) => Err(bad(name, &format!("`{key}` must be an object of strings"))),
    }
}

impl ServerConfig {
    /// Reads one entry of `mcpServers`.
    pub fn from_value(name: &str, value: &Value) -> Result<ServerConfig, Error> {
        let Value::Object(entry) = value else {
            return Err(bad(name, "must be an object"));
        };
        let ty = entry.get("type").and_then(Value::as_str);
        let command = entry.get("command");
        let url = entry.get("url");
        match (command, url, ty) {
            (Some(_), Some(_), _) => Err(bad(name, "has both `command` and `url`")),
            (Some(command), None, None | Some("stdio")) => {
                let command = command
                    .as_str()
                    .filter(|c| !c.is_empty())
                    .ok_or_else(|| bad(name, "`command` must be a non-empty string"))?;
                let cwd = match entry.get("cwd") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(dir)) => Some(PathBuf::from(dir)),
                    Some(_) => return Err(bad(name, "`cwd` must be a string")),
                };
                Ok(ServerConfig::Stdio(StdioConfig {
                    command: command.to_owned(),
                    args: strings(name, "args", entry.get("args"))?,
                    env: pairs(name, "env", entry.get("env"))?,
                    cwd,
                }))
            }
            // `sse` is the 2024-11-05 HTTP+SSE transport, `url` its SSE URL: the connector
            // finds it there as it finds either era's Streamable HTTP.
            (
                None,
                Some(url),
                None | Some("http" | "streamable-http" | "streamableHttp" | "sse"),
            ) => {
                let url = url
                    .as_str()
                    .filter(|u| !u.is_empty())
                    .ok_or_else(|| bad(name, "`url` must be a non-empty string"))?;
                Ok(ServerConfig::Http(HttpConfig {
                    url: url.to_owned(),
                    headers: pairs(name, "headers", entry.get("headers"))?,
                }))
            }
            (_, _, Some(other))
                if !matches!(
                    other,
                    "stdio" | "http" | "streamable-http" | "streamableHttp" | "sse"
                ) =>
            {
                Err(bad(name, &format!("unknown `type` `{other}`")))
            }
            (None, None, _) => Err(bad(name, "needs `command` (stdio) or `url` (HTTP)")),
            _ => Err(bad(name, "`type` does not match `command`/`url`")),
        }
    }
}

impl HostConfig {
    /// No servers.
    pub fn new() -> Self {
        HostConfig::default()
    }

    /// Adds a server.
    #[must_use]
    pub fn server(mut self, name: impl Into<String>, config: ServerConfig) -> Self {
        self.servers.push((name.into(), config));
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

    /// Reads a configuration from JSON text.
    pub fn from_json(text: &str) -> Result<HostConfig, Error> {
        let value: Value = serde_json::from_str(text).map_err(Error::Json)?;
        HostConfig::from_value(&value)
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

    /// Reads a configuration from a JSON value with an `mcpServers` (or `servers`) object.
    pub fn from_value(value: &Value) -> Result<HostConfig, Error> {
        let servers: &Map<String, Value> = value
            .get("mcpServers")
            .or_else(|| value.get("servers"))
            .and_then(Value::as_object)
            .ok_or_else(|| Error::Config("expected an `mcpServers` object".to_owned()))?;
        let mut config = HostConfig::new();
        for (name, entry) in servers {
            if name.is_empty() {
                return Err(Error::Config("a server name is empty".to_owned()));
            }
            if entry.get("disabled").and_then(Value::as_bool) == Some(true) {
                continue;
            }
            config
                .servers
                .push((name.clone(), ServerConfig::from_value(name, entry)?));
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(input: &Value, expected: Result<Vec<(&str, ServerConfig)>, &str>) {
        let got = HostConfig::from_value(input);
        match (got, expected) {
            (Ok(got), Ok(expected)) => {
                let expected: Vec<(String, ServerConfig)> = expected
                    .into_iter()
                    .map(|(n, c)| (n.to_owned(), c))
                    .collect();
                assert_eq!(got.servers, expected);
            }
            (Err(e), Err(message)) => assert!(e.to_string().contains(message), "{e}"),
            (got, expected) => panic!("{got:?} vs {expected:?}"),
        }
    }

    #[test]
    fn configurations() {
        let stdio = StdioConfig {
            command: "srv".into(),
            args: vec!["-v".into()],
            env: vec![("K".into(), "V".into())],
            cwd: Some("/tmp".into()),
        };
        check(
            &json!({"mcpServers": {
                "a": {"command": "srv", "args": ["-v"], "env": {"K": "V"}, "cwd": "/tmp", "extra": 1},
                "b": {"type": "http", "url": "http://x/mcp", "headers": {"Authorization": "t"}},
                "c": {"command": "off", "disabled": true}
            }}),
            Ok(vec![
                ("a", ServerConfig::Stdio(stdio)),
                (
                    "b",
                    ServerConfig::Http(
                        HttpConfig::new("http://x/mcp").header("Authorization", "t"),
                    ),
                ),
            ]),
        );
        check(&json!({"servers": {}}), Ok(vec![]));
        for (config, error) in [
            (json!({}), "expected an `mcpServers` object"),
            (
                json!({"mcpServers": {"a": {"command": 1}}}),
                "`command` must be",
            ),
            (
                json!({"mcpServers": {"a": {"command": "x", "url": "y"}}}),
                "both",
            ),
            (
                json!({"mcpServers": {"a": {"type": "sse", "command": "y"}}}),
                "does not match",
            ),
            (
                json!({"mcpServers": {"a": {"type": "ws", "url": "y"}}}),
                "unknown `type`",
            ),
            (
                json!({"mcpServers": {"a": {"type": "stdio", "url": "y"}}}),
                "does not match",
            ),
            (
                json!({"mcpServers": {"a": {"command": "x", "args": [1]}}}),
                "strings",
            ),
            (
                json!({"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}}),
                "env.K",
            ),
            (json!({"mcpServers": {"a": []}}), "must be an object"),
        ] {
            check(&config, Err(error));
        }
    }
}
