//! Reading one entry of `mcpServers`: the transport, `${VAR}` substitution and each
//! member's type, every error naming the server and the member.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};

use super::{
    HttpConfig, KNOWN_PROTOCOL_VERSIONS, MAX_TIMEOUT_MS, ServerConfig, ServerTransport,
    StdioConfig, check_header, invalid,
};
use crate::Error;
use crate::naming::{DEFAULT_MAX_NAME_LEN, is_model_name};
use crate::oauth::OAuth;
use crate::rules::Approval;

/// The transports `type` may name.
const STDIO_TYPES: [&str; 1] = ["stdio"];
const HTTP_TYPES: [&str; 4] = ["http", "streamable-http", "streamableHttp", "sse"];

/// One entry being read.
pub(super) struct Entry<'a> {
    pub(super) name: &'a str,
    pub(super) env: &'a dyn Fn(&str) -> Option<String>,
}

impl Entry<'_> {
    fn invalid(&self, field: &str, reason: &str) -> Error {
        invalid(self.name, field, reason)
    }

    /// `text` with its `${…}` references replaced.
    pub(super) fn expand(&self, field: &str, text: &str) -> Result<String, Error> {
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

    /// `rename`: an object of model-visible names by the server's tool names, not
    /// expanded. Each name must be valid for every vendor and given to one tool only.
    fn renames(&self, entry: &Map<String, Value>) -> Result<Vec<(String, String)>, Error> {
        let map = match entry.get("rename") {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::Object(map)) => map,
            Some(_) => return Err(self.invalid("rename", "must be an object of names")),
        };
        let mut renames: Vec<(String, String)> = Vec::with_capacity(map.len());
        for (tool, name) in map {
            let field = format!("rename.{tool}");
            let Value::String(name) = name else {
                return Err(self.invalid(&field, "must be a string"));
            };
            if tool.is_empty() {
                return Err(self.invalid("rename", "names a tool with an empty name"));
            }
            if !is_model_name(name, DEFAULT_MAX_NAME_LEN) || name.is_empty() {
                return Err(self.invalid(
                    &field,
                    "must be 1 to 64 letters, digits, `_` or `-`, starting with a letter or \
                     `_` (a name every vendor accepts)",
                ));
            }
            if let Some((other, _)) = renames.iter().find(|(_, n)| n == name) {
                return Err(self.invalid(
                    &field,
                    &format!("gives `{name}`, which `rename.{other}` already gives"),
                ));
            }
            renames.push((tool.clone(), name.clone()));
        }
        Ok(renames)
    }

    /// `approval`: `tools` (selectors, not expanded) and `destructive`. Any other member
    /// is refused: the object is this crate's own, so an unknown member is a mistake that
    /// would otherwise leave a tool unguarded.
    fn approval(&self, entry: &Map<String, Value>) -> Result<Approval, Error> {
        let map = match entry.get("approval") {
            None | Some(Value::Null) => return Ok(Approval::default()),
            Some(Value::Object(map)) => map,
            Some(_) => return Err(self.invalid("approval", "must be an object")),
        };
        let mut approval = Approval::default();
        for (key, value) in map {
            match (key.as_str(), value) {
                ("tools", _) => {
                    // Read as a member named `approval.tools`, so that errors name it so.
                    let field = "approval.tools";
                    let tools = Map::from_iter([(field.to_owned(), value.clone())]);
                    approval.tools = self.names(&tools, field)?.unwrap_or_default();
                }
                ("destructive", Value::Bool(destructive)) => approval.destructive = *destructive,
                ("destructive", _) => {
                    return Err(self.invalid("approval.destructive", "must be true or false"));
                }
                _ => {
                    return Err(self.invalid(
                        &format!("approval.{key}"),
                        "is not a member of `approval` (tools, destructive)",
                    ));
                }
            }
        }
        Ok(approval)
    }

    /// `oauth`: `grant` (`client_credentials` or `stored`), the grant's own members and
    /// `allowPrivate`. Strings are expanded (a secret comes from `${VAR}`). A member that
    /// is not the grant's, or unknown, is refused: the object is this crate's own.
    fn oauth(&self, entry: &Map<String, Value>) -> Result<Option<OAuth>, Error> {
        let map = match entry.get("oauth") {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Object(map)) => map,
            Some(_) => return Err(self.invalid("oauth", "must be an object")),
        };
        let string = |key: &str| self.string(map, key).map_err(|e| prefixed(e, "oauth"));
        let required = |key: &str| match string(key)? {
            Some(text) if !text.is_empty() => Ok(text),
            _ => Err(self.invalid(&format!("oauth.{key}"), "must be a non-empty string")),
        };
        let (mut oauth, members): (OAuth, &[&str]) = match string("grant")?.as_deref() {
            Some("client_credentials") => {
                let mut oauth =
                    OAuth::client_credentials(required("clientId")?, required("clientSecret")?);
                if let Some(issuer) = string("issuer")? {
                    oauth = oauth.issuer(issuer);
                }
                (oauth, &["clientId", "clientSecret", "issuer"])
            }
            Some("stored") => {
                let mut oauth = OAuth::stored();
                if let Some(store) = string("store")? {
                    oauth = oauth.store(store);
                }
                (oauth, &["store"])
            }
            _ => {
                return Err(self.invalid("oauth.grant", "must be `client_credentials` or `stored`"));
            }
        };
        match map.get("allowPrivate") {
            None | Some(Value::Null) => {}
            Some(Value::Bool(allow)) => oauth.allow_private = *allow,
            Some(_) => return Err(self.invalid("oauth.allowPrivate", "must be true or false")),
        }
        if let Some(key) = map.keys().find(|k| {
            !["grant", "allowPrivate"].contains(&k.as_str()) && !members.contains(&k.as_str())
        }) {
            return Err(self.invalid(
                &format!("oauth.{key}"),
                &format!(
                    "is not a member of `oauth` with this grant (grant, allowPrivate, {})",
                    members.join(", ")
                ),
            ));
        }
        Ok(Some(oauth))
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

    pub(super) fn read(&self, value: &Value) -> Result<ServerConfig, Error> {
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
            self.refuse(entry, &["url", "headers", "oauth"], "stdio")?;
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
            let oauth = self.oauth(entry)?;
            // Two sources of one header: the token would replace the configured value, or
            // the other way round. Neither is what a reader of the file expects.
            if oauth.is_some()
                && let Some((key, _)) = headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("authorization"))
            {
                return Err(self.invalid(
                    &format!("headers.{key}"),
                    "cannot be given with `oauth`, which sends its own",
                ));
            }
            ServerTransport::Http(HttpConfig {
                url: self.required(entry, "url")?,
                headers,
                sse: ty == Some("sse"),
                oauth,
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
            rename: self.renames(entry)?,
            approval: self.approval(entry)?,
        })
    }
}

/// `error` (about a member of an object in the entry) with the member named under
/// `parent`.
fn prefixed(error: Error, parent: &str) -> Error {
    match error {
        Error::InvalidField {
            server,
            field,
            reason,
        } => Error::InvalidField {
            server,
            field: format!("{parent}.{field}"),
            reason,
        },
        Error::UnsetVariable {
            server,
            field,
            variable,
        } => Error::UnsetVariable {
            server,
            field: format!("{parent}.{field}"),
            variable,
        },
        other => other,
    }
}

fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
