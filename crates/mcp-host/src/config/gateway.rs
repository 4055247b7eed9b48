//! The `gateway` section: how `mcp gateway` protects its HTTP endpoint, as an OAuth 2.1
//! resource server (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization>).

use serde_json::{Map, Value};

use super::read::Entry;
use crate::Error;

/// The `gateway` section of a configuration.
///
/// ```
/// use mcp_host::{HostConfig, TokenCheck};
///
/// let config = HostConfig::from_json(r#"{
///     "mcpServers": {},
///     "gateway": {"auth": {
///         "resource": "https://gateway.example.com/mcp",
///         "issuer": "https://auth.example.com",
///         "jwks": "https://auth.example.com/jwks.json",
///         "scopes": ["mcp"]
///     }}
/// }"#)?;
/// let auth = config.gateway.unwrap().auth.unwrap();
/// assert_eq!(auth.tokens, TokenCheck::Jwks("https://auth.example.com/jwks.json".into()));
/// # Ok::<(), mcp_host::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GatewayConfig {
    /// Protects the gateway's HTTP endpoint: every request needs a bearer token this
    /// resource server accepts. Stdio is not protected (the user who starts the gateway
    /// owns both ends).
    pub auth: Option<GatewayAuth>,
}

/// The gateway as an OAuth 2.1 resource server (`gateway.auth`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GatewayAuth {
    /// The gateway's own URL as clients reach it: the audience tokens must carry, and
    /// where its protected resource metadata points.
    pub resource: String,
    /// The authorization server that issues the tokens.
    pub issuer: String,
    /// How a token is checked.
    pub tokens: TokenCheck,
    /// The scopes every request needs.
    pub scopes: Vec<String>,
}

/// How the gateway checks a bearer token.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenCheck {
    /// A JWT, verified against the authorization server's keys at this JWKS URL
    /// (`jwks`).
    Jwks(String),
    /// Token introspection (RFC 7662) at `url`, authenticated as this client
    /// (`introspection`: `url`, `clientId`, `clientSecret`).
    Introspection {
        /// The introspection endpoint.
        url: String,
        /// The gateway's client id at the authorization server.
        client_id: String,
        /// Its secret (`${VAR}` is substituted).
        client_secret: String,
    },
}

/// The members of `gateway`.
const MEMBERS: &str = "auth";

/// Reads `gateway`.
pub(super) fn read_gateway(
    gateway: &Map<String, Value>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<GatewayConfig, Error> {
    let mut config = GatewayConfig::default();
    for (key, value) in gateway {
        match (key.as_str(), value) {
            ("auth", Value::Object(auth)) => config.auth = Some(read_auth(auth, env)?),
            ("auth", Value::Null) => {}
            ("auth", _) => return Err(refuse("auth", "must be an object")),
            _ => {
                return Err(refuse(
                    key,
                    &format!("is not a member of `gateway` ({MEMBERS})"),
                ));
            }
        }
    }
    Ok(config)
}

fn refuse(member: &str, reason: &str) -> Error {
    Error::Config(format!("`gateway.{member}` {reason}"))
}

fn string<'a>(auth: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, Error> {
    match auth.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s)),
        Some(_) => Err(refuse(&format!("auth.{key}"), "must be a non-empty string")),
    }
}

fn read_auth(
    auth: &Map<String, Value>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<GatewayAuth, Error> {
    for key in auth.keys() {
        if !["resource", "issuer", "jwks", "introspection", "scopes"].contains(&key.as_str()) {
            return Err(refuse(
                &format!("auth.{key}"),
                "is not a member of `gateway.auth` (resource, issuer, jwks, introspection, scopes)",
            ));
        }
    }
    let required =
        |key: &str| string(auth, key)?.ok_or_else(|| refuse(&format!("auth.{key}"), "is required"));
    let resource = required("resource")?.to_owned();
    let issuer = required("issuer")?.to_owned();
    let tokens = match (string(auth, "jwks")?, auth.get("introspection")) {
        (Some(jwks), None | Some(Value::Null)) => TokenCheck::Jwks(jwks.to_owned()),
        (None, Some(Value::Object(introspection))) => {
            let member = |key: &str| {
                string(introspection, key)?
                    .ok_or_else(|| refuse(&format!("auth.introspection.{key}"), "is required"))
            };
            // `${VAR}` as in a server entry, for the secret above all.
            let entry = Entry {
                name: "gateway",
                env,
            };
            TokenCheck::Introspection {
                url: member("url")?.to_owned(),
                client_id: member("clientId")?.to_owned(),
                client_secret: entry.expand(
                    "gateway.auth.introspection.clientSecret",
                    member("clientSecret")?,
                )?,
            }
        }
        (Some(_), Some(_)) => {
            return Err(refuse("auth", "takes `jwks` or `introspection`, not both"));
        }
        _ => return Err(refuse("auth", "needs `jwks` or an `introspection` object")),
    };
    let scopes = match auth.get("scopes") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(scopes)) => scopes
            .iter()
            .map(|s| match s {
                Value::String(s) if !s.is_empty() && !s.contains(' ') => Ok(s.clone()),
                _ => Err(refuse(
                    "auth.scopes",
                    "must be an array of scopes (non-empty strings without spaces)",
                )),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(refuse("auth.scopes", "must be an array of strings")),
    };
    Ok(GatewayAuth {
        resource,
        issuer,
        tokens,
        scopes,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::{Error, HostConfig, TokenCheck};

    fn read(gateway: &serde_json::Value) -> Result<HostConfig, Error> {
        HostConfig::from_value_with_env(&json!({"mcpServers": {}, "gateway": gateway}), &|name| {
            (name == "SECRET").then(|| "s3cret".to_owned())
        })
    }

    fn auth(extra: &serde_json::Value) -> serde_json::Value {
        let mut auth =
            json!({"resource": "https://gw.example/mcp", "issuer": "https://as.example"});
        auth.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        json!({ "auth": auth })
    }

    #[test]
    fn introspection_takes_its_secret_from_the_environment() {
        let config = read(&auth(&json!({"introspection": {
            "url": "https://as.example/introspect", "clientId": "gw", "clientSecret": "${SECRET}"
        }})))
        .unwrap();
        let auth = config.gateway.unwrap().auth.unwrap();
        assert_eq!(
            auth.tokens,
            TokenCheck::Introspection {
                url: "https://as.example/introspect".into(),
                client_id: "gw".into(),
                client_secret: "s3cret".into(),
            }
        );
        assert!(auth.scopes.is_empty());
    }

    #[test]
    fn what_cannot_be_checked_is_refused() {
        for (gateway, says) in [
            (json!({"proxy": true}), "is not a member of `gateway`"),
            (json!({"auth": "yes"}), "must be an object"),
            (
                auth(&json!({})),
                "needs `jwks` or an `introspection` object",
            ),
            (
                auth(&json!({"jwks": "https://as.example/jwks", "introspection": {}})),
                "not both",
            ),
            (
                auth(&json!({"jwks": "https://as.example/jwks", "scope": ["x"]})),
                "is not a member",
            ),
            (
                auth(&json!({"jwks": "https://as.example/jwks", "scopes": ["a b"]})),
                "without spaces",
            ),
            (
                json!({"auth": {"issuer": "https://as.example", "jwks": "x"}}),
                "`gateway.auth.resource` is required",
            ),
            (
                auth(&json!({"introspection": {"url": "u", "clientId": "c"}})),
                "clientSecret` is required",
            ),
        ] {
            let error = read(&gateway).unwrap_err().to_string();
            assert!(error.contains(says), "{gateway}: {error}");
        }
        let unset = auth(
            &json!({"introspection": {"url": "u", "clientId": "c", "clientSecret": "${NOPE}"}}),
        );
        assert!(matches!(read(&unset), Err(Error::UnsetVariable { .. })));
    }
}
