//! The configuration file as a whole: the servers under `mcpServers` or `servers`.

use std::path::Path;

use serde_json::Value;

use super::{ServerConfig, invalid, process_env};
use crate::Error;

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
