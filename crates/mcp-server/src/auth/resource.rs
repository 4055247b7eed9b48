//! The resource server: its configuration, its metadata document, and the
//! [`Authenticator`] the HTTP endpoint calls for every request.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use bytes::Bytes;
use http::header::AUTHORIZATION;
use http::{HeaderMap, Method, Response, StatusCode, Uri};
use mcp_jsonrpc::{Principal, Request};
use mcp_transport_http::{AuthenticateFuture, Authenticator};
use serde_json::Value;

use super::challenge::{self, Challenge, WELL_KNOWN};
use super::scopes::{Operation, Rules, Scoped, Target, normal_uri, read_target};
use super::{TokenError, TokenPrincipal, TokenVerifier, config_error};
use crate::UriTemplate;

/// `offline_access` asks for refresh tokens, not for access to a resource: servers should
/// not name it (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization>, Refresh Tokens).
const OFFLINE_ACCESS: &str = "offline_access";

/// An OAuth 2.1 resource server for one MCP endpoint; see the [module docs](super). Cheap
/// to clone.
#[derive(Clone)]
pub struct ResourceServer {
    inner: Arc<Inner>,
}

struct Inner {
    resource: String,
    metadata_url: String,
    /// The well-known paths the document is served at: path-based and root.
    metadata_paths: Vec<String>,
    document: Bytes,
    /// What requests need; every principal this server authenticates carries them, for the
    /// server core's own check.
    rules: Arc<Rules>,
    verifier: Arc<dyn TokenVerifier>,
}

impl std::fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServer")
            .field("resource", &self.inner.resource)
            .field("required", &self.inner.rules.required)
            .finish_non_exhaustive()
    }
}

/// Builds a [`ResourceServer`].
pub struct ResourceServerBuilder {
    resource: String,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<String>,
    required: Vec<String>,
    scoped: Scoped,
    implies: Vec<(String, Vec<String>)>,
    fields: serde_json::Map<String, Value>,
    verifier: Option<Arc<dyn TokenVerifier>>,
}

mcp_types::debug_fields!(ResourceServerBuilder { resource });

impl ResourceServer {
    /// A resource server for the MCP endpoint whose canonical URI is `resource` (RFC 8707
    /// §2: `https://mcp.example.com/mcp`; scheme and host are lower-cased, and plain
    /// `http` is allowed for a loopback host only). Tokens must name it as their audience,
    /// exactly.
    pub fn builder(resource: impl Into<String>) -> ResourceServerBuilder {
        ResourceServerBuilder {
            resource: resource.into(),
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            required: Vec::new(),
            scoped: Scoped::default(),
            implies: Vec::new(),
            fields: serde_json::Map::new(),
            verifier: None,
        }
    }

    /// The canonical URI of the resource, as tokens must name it.
    pub fn resource(&self) -> &str {
        &self.inner.resource
    }

    /// The URL of the protected resource metadata, as challenges name it.
    pub fn metadata_url(&self) -> &str {
        &self.inner.metadata_url
    }

    /// The paths the metadata document is served at (path-based first, then the root
    /// one when the endpoint has a path). An `McpService` mounted in a router answers them
    /// only if the router sends them to it.
    pub fn metadata_paths(&self) -> &[String] {
        &self.inner.metadata_paths
    }

    /// The scopes `tools/call` of `tool` needs, besides the endpoint's own.
    pub fn tool_scopes(&self, tool: &str) -> &[String] {
        self.inner.rules.scoped.get(Operation::Tool, tool)
    }

    /// The scopes `prompts/get` of `prompt` needs, besides the endpoint's own.
    pub fn prompt_scopes(&self, prompt: &str) -> &[String] {
        self.inner.rules.scoped.get(Operation::Prompt, prompt)
    }

    /// The scopes `resources/read` of `uri` needs, besides the endpoint's own: those set for
    /// the URI itself (compared in its normal form) and for every template that matches it.
    pub fn resource_scopes(&self, uri: &str) -> Vec<String> {
        let mut scoped = self.inner.rules.needed(Some((Operation::Resource, uri)));
        scoped.retain(|scope| !self.inner.rules.required.contains(scope));
        scoped
    }
}

fn scopes<S: Into<String>>(scopes: impl IntoIterator<Item = S>) -> Vec<String> {
    let mut scopes: Vec<String> = scopes.into_iter().map(Into::into).collect();
    if scopes.iter().any(|s| s == OFFLINE_ACCESS) {
        tracing::warn!("`offline_access` is not a resource scope; leaving it out");
        scopes.retain(|s| s != OFFLINE_ACCESS);
    }
    scopes
}

impl ResourceServerBuilder {
    /// Adds an authorization server (its issuer identifier) to the metadata's
    /// `authorization_servers`; at least one is required.
    #[must_use]
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// The metadata's `scopes_supported`: the scopes for basic use, which a client asks
    /// for when a challenge names none.
    #[must_use]
    pub fn scopes_supported<S: Into<String>>(
        mut self,
        supported: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scopes_supported = scopes(supported);
        self
    }

    /// The scopes every request to the endpoint needs (default none: any valid token).
    #[must_use]
    pub fn required_scopes<S: Into<String>>(
        mut self,
        required: impl IntoIterator<Item = S>,
    ) -> Self {
        self.required = scopes(required);
        self
    }

    /// The scopes calling `tool` needs besides the endpoint's (`403` with an
    /// `insufficient_scope` challenge naming all of them otherwise).
    #[must_use]
    pub fn tool_scopes<S: Into<String>>(
        mut self,
        tool: impl Into<String>,
        required: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scoped.tools.insert(tool.into(), scopes(required));
        self
    }

    /// The scopes getting `prompt` (`prompts/get`) needs besides the endpoint's, as
    /// [`tool_scopes`](Self::tool_scopes) for a tool.
    #[must_use]
    pub fn prompt_scopes<S: Into<String>>(
        mut self,
        prompt: impl Into<String>,
        required: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scoped.prompts.insert(prompt.into(), scopes(required));
        self
    }

    /// The scopes reading the resource `uri` (`resources/read`) needs besides the
    /// endpoint's, as [`tool_scopes`](Self::tool_scopes) for a tool. URIs are compared in
    /// their normal form (RFC 3986 §6.2.2: `FILE:///a%2Etxt` is `file:///a.txt`). A URI
    /// template (`file:///private/{name}`, as a template is registered) scopes every URI it
    /// matches, so the resources a template serves cannot be reached around its scopes.
    #[must_use]
    pub fn resource_scopes<S: Into<String>>(
        mut self,
        uri: impl Into<String>,
        required: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scoped.resources.insert(uri.into(), scopes(required));
        self
    }

    /// Declares that a token granted `broad` may do what `narrower` allow (scope
    /// hierarchies, which <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization> says servers must
    /// account for). Implications chain.
    #[must_use]
    pub fn scope_implies<S: Into<String>>(
        mut self,
        broad: impl Into<String>,
        narrower: impl IntoIterator<Item = S>,
    ) -> Self {
        self.implies
            .push((broad.into(), narrower.into_iter().map(Into::into).collect()));
        self
    }

    /// Adds a member to the metadata document (`resource_name`, `resource_documentation`,
    /// `resource_policy_uri`, …). The members this builder sets itself cannot be replaced.
    #[must_use]
    pub fn metadata_field(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.fields.insert(name.into(), value.into());
        self
    }

    /// How tokens are verified (required).
    #[must_use]
    pub fn verifier(mut self, verifier: impl TokenVerifier) -> Self {
        self.verifier = Some(Arc::new(verifier));
        self
    }

    /// The resource server, or why this configuration cannot work.
    pub fn build(self) -> Result<ResourceServer, crate::Error> {
        let (resource, origin, path) = canonical(&self.resource)?;
        if self.authorization_servers.is_empty() {
            return Err(config_error(
                "the metadata must name at least one authorization server",
            ));
        }
        for issuer in &self.authorization_servers {
            super::fetch::check_url(issuer, "the authorization server")?;
        }
        let verifier = self
            .verifier
            .ok_or_else(|| config_error("no token verifier is set"))?;
        let mut scoped = self.scoped;
        let mut resources = HashMap::new();
        for (uri, needed) in std::mem::take(&mut scoped.resources) {
            if uri.contains('{') {
                let template = UriTemplate::parse_matchable(&uri).map_err(|e| {
                    config_error(format!("the scoped resource template {uri:?}: {e}"))
                })?;
                scoped.templates.push((template, needed.clone()));
            }
            resources.insert(normal_uri(&uri).into_owned(), needed);
        }
        scoped.resources = resources;
        let every_scope = self
            .scopes_supported
            .iter()
            .chain(&self.required)
            .chain(scoped.all());
        for scope in every_scope {
            // RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
            let valid = !scope.is_empty()
                && scope
                    .bytes()
                    .all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E));
            if !valid {
                return Err(config_error(format!("{scope:?} is not a valid scope")));
            }
        }

        let well_known_path = format!("{WELL_KNOWN}{path}");
        let metadata_url = format!("{origin}{well_known_path}");
        let mut metadata_paths = vec![well_known_path];
        if !path.is_empty() {
            metadata_paths.push(WELL_KNOWN.to_owned());
        }
        let mut document = self.fields;
        document.insert("resource".into(), resource.clone().into());
        document.insert(
            "authorization_servers".into(),
            self.authorization_servers.into(),
        );
        if !self.scopes_supported.is_empty() {
            document.insert("scopes_supported".into(), self.scopes_supported.into());
        }
        document.insert("bearer_methods_supported".into(), vec!["header"].into());

        let mut implied: HashMap<String, BTreeSet<String>> = HashMap::new();
        for (broad, narrower) in &self.implies {
            implied
                .entry(broad.clone())
                .or_default()
                .extend(narrower.iter().cloned());
        }
        // Close the relation: what a narrower scope implies, the broad one implies too.
        loop {
            let mut grew = false;
            let snapshot = implied.clone();
            for set in implied.values_mut() {
                let more: Vec<String> = set
                    .iter()
                    .filter_map(|s| snapshot.get(s))
                    .flatten()
                    .cloned()
                    .collect();
                for scope in more {
                    grew |= set.insert(scope);
                }
            }
            if !grew {
                break;
            }
        }

        Ok(ResourceServer {
            inner: Arc::new(Inner {
                resource,
                metadata_url,
                metadata_paths,
                document: Bytes::from(Value::Object(document).to_string()),
                rules: Arc::new(Rules {
                    required: self.required,
                    scoped,
                    implied,
                }),
                verifier,
            }),
        })
    }
}

/// The canonical form of a resource URI (scheme and host lower-case, no trailing `/` on
/// an empty path), its origin, and its path (empty for the root).
fn canonical(resource: &str) -> Result<(String, String, String), crate::Error> {
    let invalid = |reason: &str| config_error(format!("the resource {resource:?}: {reason}"));
    if resource.contains('#') {
        return Err(invalid("a resource URI has no fragment"));
    }
    let uri: Uri = resource.parse().map_err(|_| invalid("not a URI"))?;
    if uri.query().is_some() {
        return Err(invalid("a resource URI has no query"));
    }
    let host = uri.host().ok_or_else(|| invalid("no host"))?;
    let scheme = uri.scheme_str().unwrap_or_default().to_ascii_lowercase();
    match scheme.as_str() {
        "https" => {}
        "http" if super::fetch::is_loopback(host) => {}
        _ => return Err(invalid("must be https (http only for a loopback host)")),
    }
    let authority = uri
        .authority()
        .map(|a| a.as_str().to_ascii_lowercase())
        .unwrap_or_default();
    if authority.contains('@') {
        return Err(invalid("a resource URI has no user information"));
    }
    let origin = format!("{scheme}://{authority}");
    let path = uri.path().trim_end_matches('/').to_owned();
    Ok((format!("{origin}{path}"), origin, path))
}

/// What the `Authorization` header holds.
enum Credentials<'a> {
    /// Nothing for this scheme: no header, or another scheme.
    None,
    /// A bearer token.
    Bearer(&'a str),
    /// A malformed request (two headers, bytes that are not text): `400`.
    Malformed(&'static str),
}

/// The bearer token of a request, from its one `Authorization` header (RFC 6750 §2.1).
/// Nothing else is looked at: a token in the query string or the body is never accepted.
fn credentials(headers: &HeaderMap) -> Credentials<'_> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return if headers.contains_key(AUTHORIZATION) {
            Credentials::Malformed("more than one Authorization header")
        } else {
            Credentials::None
        };
    };
    let Ok(value) = value.to_str() else {
        return Credentials::Malformed("the Authorization header is not text");
    };
    match value.trim().split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => {
            Credentials::Bearer(token.trim())
        }
        _ => Credentials::None,
    }
}

/// RFC 6750 §2.1: `b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
fn is_b64token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/')
        })
}

impl Inner {
    /// The tool, prompt or resource a request's head says it names (`Mcp-Method` and
    /// `Mcp-Name`), for the scopes a challenge names before the body is read. Only a hint:
    /// the body decides.
    /// The name is read as the endpoint reads it, a `=?base64?…?=` value decoded.
    fn hinted<'h>(&self, headers: &'h HeaderMap) -> Option<(Operation, Cow<'h, str>)> {
        let operation = Operation::of(headers.get("mcp-method")?.to_str().ok()?)?;
        if self.rules.scoped.is_empty(operation) {
            return None;
        }
        Some((
            operation,
            mcp_transport_http::header_text(headers.get("mcp-name")?)?,
        ))
    }

    fn refuse(&self, status: StatusCode, challenge: &Challenge<'_>) -> Response<Bytes> {
        tracing::debug!(
            %status,
            error = challenge.error,
            reason = challenge.description,
            "refused a request"
        );
        challenge.response(status, &self.metadata_url)
    }

    /// The scope check: `403` with every scope the operation needs when one is missing.
    #[allow(clippy::result_large_err)]
    fn check_scopes(
        &self,
        principal: &TokenPrincipal,
        target: Option<(Operation, &str)>,
    ) -> Result<(), Response<Bytes>> {
        let needed = self.rules.needed(target);
        if !self.rules.lacks_any(principal, &needed) {
            return Ok(());
        }
        Err(self.refuse(
            StatusCode::FORBIDDEN,
            &Challenge {
                error: Some("insufficient_scope"),
                description: Some("the token lacks a scope this operation needs"),
                scopes: &needed,
            },
        ))
    }

    async fn authenticate(
        &self,
        headers: &HeaderMap,
    ) -> Result<Arc<dyn Principal>, Response<Bytes>> {
        let hinted = self.hinted(headers);
        let hinted = hinted
            .as_ref()
            .map(|(operation, name)| (*operation, name.as_ref()));
        let token = match credentials(headers) {
            Credentials::Bearer(token) if is_b64token(token) => token,
            Credentials::Bearer(_) => {
                let needed = self.rules.needed(hinted);
                return Err(self.refuse(
                    StatusCode::UNAUTHORIZED,
                    &Challenge {
                        error: Some("invalid_token"),
                        description: Some("the bearer token is malformed"),
                        scopes: &needed,
                    },
                ));
            }
            Credentials::None => {
                let needed = self.rules.needed(hinted);
                return Err(self.refuse(
                    StatusCode::UNAUTHORIZED,
                    &Challenge {
                        scopes: &needed,
                        ..Challenge::default()
                    },
                ));
            }
            Credentials::Malformed(reason) => {
                return Err(self.refuse(
                    StatusCode::BAD_REQUEST,
                    &Challenge {
                        error: Some("invalid_request"),
                        description: Some(reason),
                        scopes: &[],
                    },
                ));
            }
        };
        let principal = match self.verifier.verify(token, &self.resource).await {
            Ok(principal) => principal,
            Err(TokenError::Invalid(reason)) => {
                let needed = self.rules.needed(hinted);
                return Err(self.refuse(
                    StatusCode::UNAUTHORIZED,
                    &Challenge {
                        error: Some("invalid_token"),
                        description: Some(&reason),
                        scopes: &needed,
                    },
                ));
            }
            Err(TokenError::Unavailable(reason)) => {
                tracing::warn!(%reason, "cannot verify a token");
                return Err(challenge::unavailable());
            }
        };
        self.check_scopes(&principal, hinted)?;
        Ok(Arc::new(principal.bound_to(Arc::clone(&self.rules))))
    }
}

impl Authenticator for ResourceServer {
    fn respond(&self, method: &Method, uri: &Uri) -> Option<Response<Bytes>> {
        let path = uri.path();
        if !path.starts_with(WELL_KNOWN) || !self.inner.metadata_paths.iter().any(|p| p == path) {
            return None;
        }
        Some(challenge::metadata(method, &self.inner.document))
    }

    fn authenticate<'a>(&'a self, headers: &'a HeaderMap) -> AuthenticateFuture<'a> {
        Box::pin(self.inner.authenticate(headers))
    }

    fn authorize(
        &self,
        principal: &dyn Principal,
        request: &Request,
    ) -> Result<(), Response<Bytes>> {
        self.authorize_all(principal, std::slice::from_ref(request))
    }

    /// Every request of a batch at once: one the principal may not make refuses the batch
    /// whole, with a challenge naming every scope the batch needs; one whose target cannot
    /// be read (a `name` given twice or not as a string) refuses it with `400`.
    fn authorize_all(
        &self,
        principal: &dyn Principal,
        requests: &[Request],
    ) -> Result<(), Response<Bytes>> {
        let rules = &self.inner.rules;
        let token = principal.downcast_ref::<TokenPrincipal>();
        let mut needed: Vec<String> = Vec::new();
        let mut refused = false;
        for request in requests {
            let params = request.params.as_ref();
            let text = params.map(mcp_jsonrpc::Params::text);
            let target = match read_target(&request.method, text) {
                Target::None => continue,
                Target::Named(operation, _) if rules.scoped.is_empty(operation) => continue,
                Target::Named(operation, target) => (operation, target),
                Target::Unreadable => {
                    return Err(self.inner.refuse(
                        StatusCode::BAD_REQUEST,
                        &Challenge {
                            error: Some("invalid_request"),
                            description: Some(
                                "the tool, prompt or resource the request names cannot be read",
                            ),
                            scopes: &[],
                        },
                    ));
                }
            };
            let wanted = rules.needed(Some((target.0, &target.1)));
            // Not a principal this resource server made: it grants nothing here.
            refused |= token.is_none_or(|token| rules.lacks_any(token, &wanted));
            for scope in wanted {
                if !needed.contains(&scope) {
                    needed.push(scope);
                }
            }
        }
        if !refused {
            return Ok(());
        }
        Err(self.inner.refuse(
            StatusCode::FORBIDDEN,
            &Challenge {
                error: Some("insufficient_scope"),
                description: Some("the token lacks a scope this operation needs"),
                scopes: &needed,
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::{canonical, is_b64token};

    #[test]
    fn canonical_resources() {
        let ok = |uri: &str| canonical(uri).unwrap();
        assert_eq!(
            ok("HTTPS://MCP.Example.com/mcp"),
            (
                "https://mcp.example.com/mcp".to_owned(),
                "https://mcp.example.com".to_owned(),
                "/mcp".to_owned()
            )
        );
        assert_eq!(ok("https://mcp.example.com/").0, "https://mcp.example.com");
        assert_eq!(ok("https://mcp.example.com:8443").2, "");
        assert_eq!(
            ok("http://127.0.0.1:3000/mcp").0,
            "http://127.0.0.1:3000/mcp"
        );
        for bad in [
            "mcp.example.com",
            "https://mcp.example.com#fragment",
            "https://mcp.example.com/mcp?x=1",
            "http://mcp.example.com/mcp",
            "https://user@mcp.example.com/mcp",
        ] {
            assert!(canonical(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn bearer_token_syntax() {
        assert!(is_b64token("eyJ.abc-_~+/=="));
        assert!(!is_b64token("a b"));
        assert!(!is_b64token("==="));
        assert!(!is_b64token("tok\"en"));
    }
}
