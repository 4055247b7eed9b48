//! The configuration file as a whole: the servers under `mcpServers` or `servers`, and
//! the settings of the host (`naming`).

use std::path::Path;

use serde_json::{Map, Value};

use super::{ServerConfig, invalid, process_env};
use crate::Error;
use crate::catalog::CatalogBuilder;
use crate::naming::{DEFAULT_MAX_NAME_LEN, NamingPolicy, is_model_name};

/// The longest `naming.prefix`: a longer one would leave too little of the 64 characters
/// for the server and the tool.
const MAX_NAME_PREFIX_LEN: usize = 32;
/// The longest `naming.separator`.
const MAX_SEPARATOR_LEN: usize = 4;
/// The shortest `naming.maxLength` (room for a character, `_` and a 16-digit hash).
const MIN_MAX_LENGTH: u64 = 18;

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
    /// How model-visible names are derived, if the configuration says (its `naming`);
    /// otherwise the host's own setting stands.
    pub naming: Option<NamingPolicy>,
    /// How `mcp gateway` serves these servers (its `gateway` section).
    pub gateway: Option<super::GatewayConfig>,
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

    /// Sets how model-visible names are derived.
    #[must_use]
    pub fn naming(mut self, naming: NamingPolicy) -> Self {
        self.naming = Some(naming);
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
        let mut only = HostConfig::new().server(name, config.clone());
        only.naming.clone_from(&self.naming);
        only.gateway.clone_from(&self.gateway);
        Ok(only)
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
        config.naming = match top.get("naming") {
            None | Some(Value::Null) => None,
            Some(Value::Object(naming)) => Some(read_naming(naming)?),
            Some(_) => return Err(Error::Config("`naming` must be an object".to_owned())),
        };
        config.gateway = match top.get("gateway") {
            None | Some(Value::Null) => None,
            Some(Value::Object(gateway)) => Some(super::gateway::read_gateway(gateway, env)?),
            Some(_) => return Err(Error::Config("`gateway` must be an object".to_owned())),
        };
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
        // The renames, checked across servers as the host will check them: within the
        // naming's length limit, and each name for one tool.
        let mut check = CatalogBuilder::default().naming(config.naming.clone().unwrap_or_default());
        for (name, server) in &config.servers {
            check.add_server_config(name, server)?;
        }
        Ok(config)
    }
}

/// Reads `naming`: `prefix`, `separator`, `includeServer` and `maxLength`. Any other
/// member is refused: the object is this crate's own, so an unknown member is a mistake.
fn read_naming(naming: &Map<String, Value>) -> Result<NamingPolicy, Error> {
    let refuse = |member: &str, reason: &str| Error::Config(format!("`naming.{member}` {reason}"));
    let mut policy = NamingPolicy::default();
    for (key, value) in naming {
        match (key.as_str(), value) {
            ("prefix", Value::String(prefix)) => {
                if prefix.is_empty() || !is_model_name(prefix, MAX_NAME_PREFIX_LEN) {
                    return Err(refuse(
                        "prefix",
                        &format!(
                            "must be 1 to {MAX_NAME_PREFIX_LEN} letters, digits, `_` or `-`, \
                             starting with a letter or `_`"
                        ),
                    ));
                }
                policy = policy.prefix(prefix.clone());
            }
            ("separator", Value::String(separator)) => {
                let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
                if separator.is_empty()
                    || separator.len() > MAX_SEPARATOR_LEN
                    || !separator.chars().all(allowed)
                {
                    return Err(refuse(
                        "separator",
                        &format!("must be 1 to {MAX_SEPARATOR_LEN} letters, digits, `_` or `-`"),
                    ));
                }
                policy = policy.separator(separator.clone());
            }
            ("includeServer", Value::Bool(include)) => policy.prefix_server = *include,
            ("maxLength", value) if value.as_u64().is_some() => {
                let max = value.as_u64().unwrap_or_default();
                if !(MIN_MAX_LENGTH..=DEFAULT_MAX_NAME_LEN as u64).contains(&max) {
                    return Err(refuse(
                        "maxLength",
                        &format!("must be from {MIN_MAX_LENGTH} to {DEFAULT_MAX_NAME_LEN}"),
                    ));
                }
                policy = policy.max_len(usize::try_from(max).unwrap_or(DEFAULT_MAX_NAME_LEN));
            }
            ("prefix" | "separator", _) => return Err(refuse(key, "must be a string")),
            ("includeServer", _) => return Err(refuse(key, "must be true or false")),
            ("maxLength", _) => return Err(refuse(key, "must be a whole number")),
            _ => {
                return Err(refuse(
                    key,
                    "is not a member of `naming` (prefix, separator, includeServer, maxLength)",
                ));
            }
        }
    }
    Ok(policy)
}
