//! Discovery: the Protected Resource Metadata (RFC 9728) of the MCP server, then the
//! metadata of its authorization server (RFC 8414 or OpenID Connect Discovery), in the
//! order and with the checks of
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/authorization-server-discovery>.
//!
//! The URL lists and the checks are pure functions ([`resource_metadata_urls`],
//! [`authorization_server_metadata_urls`], [`resource_matches`]); [`discover_resource`]
//! and [`discover_authorization_server`] fetch in that order.
//!
//! A server of revision 2025-03-26 has no Protected Resource Metadata: its authorization
//! server is at its own origin, with metadata at the RFC 8414 well-known URL or none at
//! all, in which case the default endpoints `/authorize`, `/token` and `/register` apply
//! (<https://modelcontextprotocol.io/specification/2025-03-26/basic/authorization>, Server
//! Metadata Discovery and Fallbacks for Servers without Metadata Discovery).
//! [`discover_resource`] says [`ResourceDiscovery::Absent`] only when every well-known
//! location answered 404 and no challenge named a document; [`discover_origin`] then does
//! that revision's discovery. Anything else (a network failure, a 5xx, a malformed or
//! mismatching document, a challenge whose `resource_metadata` is missing) stays an error:
//! the fallback is for a server that has no metadata, never for one whose metadata could
//! not be read.

use http::StatusCode;
use serde::Deserialize;
use serde_json::Value;

use super::fetch::{Fetcher, origin};
use crate::AuthErrorKind;

/// A Protected Resource Metadata document (RFC 9728 §2), the members this client uses.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct ResourceMetadata {
    /// The resource identifier, sent as the RFC 8707 `resource` parameter exactly as
    /// written here.
    pub resource: String,
    /// The issuers of the authorization servers that protect it.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// The scopes a client needs for basic functionality.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
}

/// Authorization server metadata (RFC 8414 §2; OpenID Provider Metadata), the members
/// this client uses.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct AuthorizationServerMetadata {
    /// The issuer identifier; identical to the one the document was looked up with.
    pub issuer: String,
    /// The authorization endpoint (required for the authorization code grant).
    #[serde(default)]
    pub authorization_endpoint: Option<String>,
    /// The token endpoint.
    pub token_endpoint: String,
    /// The dynamic client registration endpoint (RFC 7591), if any.
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    /// The scopes the server knows (`offline_access` among them, maybe).
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// Absent means the server does not support PKCE.
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Absent means `client_secret_basic` (RFC 8414 §2).
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Whether the authorization response carries `iss` (RFC 9207 §3).
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: Option<bool>,
    /// Whether Client ID Metadata Documents are accepted.
    #[serde(default)]
    pub client_id_metadata_document_supported: Option<bool>,
    /// The grant types the server supports.
    #[serde(default)]
    pub grant_types_supported: Option<Vec<String>>,
    /// The JWS algorithms the server accepts for DPoP proofs (RFC 9449 §5.1); absent when
    /// it does not support DPoP.
    #[serde(default)]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl AuthorizationServerMetadata {
    /// Whether PKCE with `S256` is advertised; the client must refuse to proceed otherwise
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/security-considerations>, Authorization Code Protection).
    pub fn supports_s256(&self) -> bool {
        self.code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|m| m == "S256"))
    }

    /// Whether `dpop_signing_alg_values_supported` lists `algorithm` (RFC 9449 §5.1).
    pub fn supports_dpop(&self, algorithm: &str) -> bool {
        self.dpop_signing_alg_values_supported
            .as_ref()
            .is_some_and(|a| a.iter().any(|a| a == algorithm))
    }

    /// The metadata of a server known only by its issuer and token endpoint (an
    /// enterprise IdP configured by hand).
    pub(crate) fn token_endpoint_only(issuer: &str, token_endpoint: &str) -> Self {
        AuthorizationServerMetadata {
            issuer: issuer.to_owned(),
            authorization_endpoint: None,
            token_endpoint: token_endpoint.to_owned(),
            registration_endpoint: None,
            scopes_supported: None,
            code_challenge_methods_supported: None,
            token_endpoint_auth_methods_supported: None,
            authorization_response_iss_parameter_supported: None,
            client_id_metadata_document_supported: None,
            grant_types_supported: None,
            dpop_signing_alg_values_supported: None,
        }
    }

    /// Whether `scopes_supported` lists `scope`.
    pub fn lists_scope(&self, scope: &str) -> bool {
        self.scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|s| s == scope))
    }
}

/// Splits an absolute URL into `scheme://authority` and its path (no query).
fn split(url: &str) -> Option<(String, String)> {
    let uri: http::Uri = url.parse().ok()?;
    let base = format!("{}://{}", uri.scheme_str()?, uri.authority()?);
    Some((base, uri.path().to_owned()))
}

/// Where to look for the server's Protected Resource Metadata, in order: the challenge's
/// `resource_metadata` when present; otherwise the path-based well-known URL (when the
/// endpoint has a path) and then the root one.
pub fn resource_metadata_urls(server: &str, from_challenge: Option<&str>) -> Vec<String> {
    if let Some(url) = from_challenge {
        return vec![url.to_owned()];
    }
    let Some((base, path)) = split(server) else {
        return Vec::new();
    };
    let path = path.trim_end_matches('/');
    let mut urls = Vec::new();
    if !path.is_empty() {
        urls.push(format!("{base}/.well-known/oauth-protected-resource{path}"));
    }
    urls.push(format!("{base}/.well-known/oauth-protected-resource"));
    urls
}

/// Where to look for an issuer's metadata, in the spec's order: for an issuer with a path,
/// RFC 8414 with path insertion, OpenID Connect with path insertion, OpenID Connect with
/// path appending; for one without, RFC 8414 then OpenID Connect.
pub fn authorization_server_metadata_urls(issuer: &str) -> Vec<String> {
    let Some((base, path)) = split(issuer) else {
        return Vec::new();
    };
    let path = path.trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{base}/.well-known/oauth-authorization-server"),
            format!("{base}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{base}/.well-known/oauth-authorization-server{path}"),
            format!("{base}/.well-known/openid-configuration{path}"),
            format!("{base}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// Whether the metadata's `resource` identifies the server at `server`: the same origin
/// (scheme and host compared case-insensitively, default ports filled in), and a path that
/// is the server's path or a parent of it on a segment boundary (a root `resource` covers
/// every endpoint of its origin; `https://a/mcp` does not cover `https://a/mcp-admin`).
/// A fragment is never part of a resource identifier.
pub fn resource_matches(resource: &str, server: &str) -> bool {
    if resource.contains('#') {
        return false;
    }
    let (Ok(resource), Ok(server)) = (resource.parse::<http::Uri>(), server.parse::<http::Uri>())
    else {
        return false;
    };
    if origin(&resource).is_none() || origin(&resource) != origin(&server) {
        return false;
    }
    let claimed = resource.path().trim_end_matches('/');
    let actual = server.path().trim_end_matches('/');
    claimed.is_empty()
        || actual == claimed
        || actual
            .strip_prefix(claimed)
            .is_some_and(|rest| rest.starts_with('/'))
}

fn parse_json<T: serde::de::DeserializeOwned>(url: &str, body: &[u8]) -> Result<T, AuthErrorKind> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| AuthErrorKind::metadata(url, format!("not JSON: {e}")))?;
    serde_json::from_value(value).map_err(|e| AuthErrorKind::metadata(url, e.to_string()))
}

/// What [`discover_resource`] found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ResourceDiscovery {
    /// The server's Protected Resource Metadata, checked.
    Found(ResourceMetadata),
    /// The server has none: every well-known location answered 404 and no challenge named
    /// a document. A server of revision 2025-03-26 (see [`discover_origin`]).
    Absent,
}

/// Fetches the server's Protected Resource Metadata from the first URL of
/// [`resource_metadata_urls`] that serves it, and checks it: its `resource` must match
/// `server` and it must name at least one authorization server. [`ResourceDiscovery::Absent`]
/// only when no challenge named a document and every well-known URL answered 404; any
/// other status without a document (5xx, 401, …) is [`AuthErrorKind::NoResourceMetadata`].
pub(crate) async fn discover_resource(
    fetcher: &Fetcher,
    server: &str,
    from_challenge: Option<&str>,
) -> Result<ResourceDiscovery, AuthErrorKind> {
    let urls = resource_metadata_urls(server, from_challenge);
    let mut all_not_found = from_challenge.is_none() && !urls.is_empty();
    for url in &urls {
        let reply = fetcher.get(url).await?;
        if !reply.status.is_success() {
            tracing::debug!(%url, status = %reply.status, "no protected resource metadata here");
            all_not_found &= reply.status == StatusCode::NOT_FOUND;
            continue;
        }
        let metadata: ResourceMetadata = parse_json(url, &reply.body)?;
        if !resource_matches(&metadata.resource, server) {
            return Err(AuthErrorKind::ResourceMismatch {
                resource: metadata.resource,
                server: server.to_owned(),
            });
        }
        if metadata.authorization_servers.is_empty() {
            return Err(AuthErrorKind::metadata(
                url,
                "authorization_servers is empty",
            ));
        }
        return Ok(ResourceDiscovery::Found(metadata));
    }
    if all_not_found {
        tracing::info!(
            server,
            "no protected resource metadata anywhere (404): discovery of revision 2025-03-26"
        );
        return Ok(ResourceDiscovery::Absent);
    }
    Err(AuthErrorKind::NoResourceMetadata { tried: urls })
}

/// The authorization server metadata of a server without Protected Resource Metadata, as
/// revision 2025-03-26 finds it
/// (<https://modelcontextprotocol.io/specification/2025-03-26/basic/authorization>): the
/// authorization server is the MCP server's origin (its URL with the path discarded), its
/// metadata at `<origin>/.well-known/oauth-authorization-server`. A 404 there means the
/// default endpoints `<origin>/authorize`, `<origin>/token` and `<origin>/register`,
/// with PKCE `S256`, which that revision requires of every client. A document that is not
/// valid metadata, or names another issuer than the origin (RFC 8414 §3.3), is an error,
/// and so is any other status: only a server that has no metadata gets the defaults.
///
/// Returns the resource as this client sees it (the server's URL, sent as the RFC 8707
/// `resource`; its authorization server the origin) and the metadata.
pub(crate) async fn discover_origin(
    fetcher: &Fetcher,
    server: &str,
) -> Result<(ResourceMetadata, AuthorizationServerMetadata), AuthErrorKind> {
    let (issuer, _) = split(server)
        .ok_or_else(|| AuthErrorKind::metadata(server, "the server URL has no origin"))?;
    fetcher.policy().check(&issuer)?;
    let url = format!("{issuer}/.well-known/oauth-authorization-server");
    let reply = fetcher.get(&url).await?;
    let metadata = if reply.status == StatusCode::NOT_FOUND {
        tracing::info!(%issuer, "no authorization server metadata: the default endpoints");
        default_endpoints(&issuer)
    } else if reply.status.is_success() {
        let metadata: AuthorizationServerMetadata = parse_json(&url, &reply.body)?;
        if metadata.issuer != issuer {
            return Err(AuthErrorKind::NoAuthorizationServerMetadata {
                issuer,
                tried: vec![url],
                issuer_mismatch: Some(metadata.issuer),
            });
        }
        metadata
    } else {
        tracing::debug!(%url, status = %reply.status, "authorization server metadata unavailable");
        return Err(AuthErrorKind::NoAuthorizationServerMetadata {
            issuer,
            tried: vec![url],
            issuer_mismatch: None,
        });
    };
    let resource = ResourceMetadata {
        resource: server.to_owned(),
        authorization_servers: vec![issuer],
        scopes_supported: None,
    };
    Ok((resource, metadata))
}

/// The metadata revision 2025-03-26 gives an authorization server at `issuer` (an origin)
/// that serves none: the default endpoints, PKCE `S256` (required of every client by that
/// revision), the rest unknown (so `client_secret_basic` by RFC 8414's default).
pub(crate) fn default_endpoints(issuer: &str) -> AuthorizationServerMetadata {
    let mut metadata =
        AuthorizationServerMetadata::token_endpoint_only(issuer, &format!("{issuer}/token"));
    metadata.authorization_endpoint = Some(format!("{issuer}/authorize"));
    metadata.registration_endpoint = Some(format!("{issuer}/register"));
    metadata.code_challenge_methods_supported = Some(vec!["S256".to_owned()]);
    metadata
}

/// Fetches `issuer`'s metadata from the URLs of [`authorization_server_metadata_urls`] in
/// order. A document whose `issuer` is not identical to `issuer` is never used (RFC 8414
/// §3.3); the next URL is tried, and if none serves a matching document the error says
/// what was found.
pub(crate) async fn discover_authorization_server(
    fetcher: &Fetcher,
    issuer: &str,
) -> Result<AuthorizationServerMetadata, AuthErrorKind> {
    fetcher.policy().check(issuer)?;
    let urls = authorization_server_metadata_urls(issuer);
    let mut issuer_mismatch = None;
    for url in &urls {
        let reply = fetcher.get(url).await?;
        if !reply.status.is_success() {
            tracing::debug!(%url, status = %reply.status, "no authorization server metadata here");
            continue;
        }
        let metadata: AuthorizationServerMetadata = match parse_json(url, &reply.body) {
            Ok(metadata) => metadata,
            Err(e) => {
                tracing::debug!(%url, error = %e, "unusable authorization server metadata");
                continue;
            }
        };
        if metadata.issuer != issuer {
            tracing::warn!(%url, expected = issuer, found = %metadata.issuer, "authorization server metadata for another issuer; not used");
            issuer_mismatch = Some(metadata.issuer);
            continue;
        }
        return Ok(metadata);
    }
    Err(AuthErrorKind::NoAuthorizationServerMetadata {
        issuer: issuer.to_owned(),
        tried: urls,
        issuer_mismatch,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_metadata_urls_in_the_spec_order() {
        assert_eq!(
            resource_metadata_urls("https://example.com/public/mcp", None),
            [
                "https://example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://example.com/.well-known/oauth-protected-resource",
            ]
        );
        assert_eq!(
            resource_metadata_urls("https://example.com", None),
            ["https://example.com/.well-known/oauth-protected-resource"]
        );
        assert_eq!(
            resource_metadata_urls("https://example.com/mcp", Some("https://x/prm")),
            ["https://x/prm"]
        );
    }

    #[test]
    fn authorization_server_urls_in_the_spec_order() {
        assert_eq!(
            authorization_server_metadata_urls("https://auth.example.com/tenant1"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        for issuer in ["https://auth.example.com", "https://auth.example.com/"] {
            assert_eq!(
                authorization_server_metadata_urls(issuer),
                [
                    "https://auth.example.com/.well-known/oauth-authorization-server",
                    "https://auth.example.com/.well-known/openid-configuration",
                ]
            );
        }
    }

    #[test]
    fn resources_match_their_server() {
        for (resource, server, ok) in [
            (
                "https://mcp.example.com/mcp",
                "https://mcp.example.com/mcp",
                true,
            ),
            (
                "https://mcp.example.com",
                "https://mcp.example.com/mcp",
                true,
            ),
            (
                "https://mcp.example.com/",
                "https://mcp.example.com/mcp",
                true,
            ),
            (
                "HTTPS://MCP.example.com:443/mcp",
                "https://mcp.example.com/mcp",
                true,
            ),
            (
                "https://mcp.example.com/server",
                "https://mcp.example.com/server/mcp",
                true,
            ),
            (
                "https://evil.example.com/mcp",
                "https://mcp.example.com/mcp",
                false,
            ),
            (
                "http://mcp.example.com/mcp",
                "https://mcp.example.com/mcp",
                false,
            ),
            (
                "https://mcp.example.com:8443/mcp",
                "https://mcp.example.com/mcp",
                false,
            ),
            (
                "https://mcp.example.com/mcp",
                "https://mcp.example.com/mcp-admin",
                false,
            ),
            (
                "https://mcp.example.com/other",
                "https://mcp.example.com/mcp",
                false,
            ),
            (
                "https://mcp.example.com/mcp#x",
                "https://mcp.example.com/mcp",
                false,
            ),
            ("mcp.example.com", "https://mcp.example.com/mcp", false),
        ] {
            assert_eq!(
                resource_matches(resource, server),
                ok,
                "{resource} for {server}"
            );
        }
    }

    #[test]
    fn the_default_endpoints_of_2025_03_26_are_at_the_origin() {
        let m = default_endpoints("https://mcp.example.com:8443");
        assert_eq!(m.issuer, "https://mcp.example.com:8443");
        assert_eq!(
            m.authorization_endpoint.as_deref(),
            Some("https://mcp.example.com:8443/authorize")
        );
        assert_eq!(m.token_endpoint, "https://mcp.example.com:8443/token");
        assert_eq!(
            m.registration_endpoint.as_deref(),
            Some("https://mcp.example.com:8443/register")
        );
        assert!(m.supports_s256());
        assert_eq!(m.token_endpoint_auth_methods_supported, None);
        assert_eq!(m.authorization_response_iss_parameter_supported, None);
    }

    #[test]
    fn metadata_reads() {
        let m: AuthorizationServerMetadata = serde_json::from_value(serde_json::json!({
            "issuer": "https://as", "token_endpoint": "https://as/token",
            "code_challenge_methods_supported": ["plain", "S256"],
            "scopes_supported": ["offline_access"], "unknown": 1
        }))
        .unwrap();
        assert!(m.supports_s256() && m.lists_scope("offline_access"));
        let m: AuthorizationServerMetadata = serde_json::from_value(serde_json::json!({
            "issuer": "https://as", "token_endpoint": "https://as/token",
            "code_challenge_methods_supported": ["plain"]
        }))
        .unwrap();
        assert!(!m.supports_s256());
    }
}
