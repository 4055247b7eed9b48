//! The grants an [`OAuthClient`] obtains tokens with, each a token request (or two) at the
//! authorization server the resource named, with the RFC 8707 `resource` and the chosen
//! scopes, and a DPoP proof when tokens are bound (`oauth.rs` decides which):
//!
//! - the authorization code grant with PKCE (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization>);
//! - the client credentials grant (<https://modelcontextprotocol.io/extensions/auth/oauth-client-credentials>);
//! - the JWT bearer grant (RFC 7523 §2.1) with a workload's JWT (Workload Identity
//!   Federation, SEP-1933);
//! - enterprise-managed authorization (<https://modelcontextprotocol.io/extensions/auth/enterprise-managed-authorization>):
//!   a token exchange (RFC 8693) at the enterprise IdP for an ID-JAG, then the JWT bearer
//!   grant with it;
//! - the refresh token grant (OAuth 2.1 §4.3).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::OAuthClient;
use super::config::{DpopPolicy, EnterpriseIdp, EnterpriseManaged, Grant, WorkloadIdentity};
use super::discovery::{
    AuthorizationServerMetadata, ResourceMetadata, discover_authorization_server,
};
use super::flow::{AuthorizationParams, authorization_url, validate_response};
use super::interaction::{AuthorizationRequest, Interaction};
use super::pkce::{Pkce, random_token};
use super::register::client_for;
use super::store::StoredTokens;
use super::token::{
    self, ClientIdentity, ID_JAG, ID_TOKEN, JWT_BEARER, TOKEN_EXCHANGE, TokenResponse, TokenType,
    now,
};
use crate::AuthErrorKind;

/// The longest workload JWT whose audience is read (a JWT is a few kilobytes at most).
const MAX_ASSERTION: usize = 64 << 10;

impl OAuthClient {
    /// New tokens from the configured grant for `scopes` (the user is involved only for the
    /// authorization code grant).
    pub(super) async fn grant(
        &self,
        metadata: &AuthorizationServerMetadata,
        resource: &ResourceMetadata,
        scopes: Vec<String>,
    ) -> Result<StoredTokens, AuthErrorKind> {
        match &self.config.grant {
            Grant::AuthorizationCode(interaction) => {
                self.authorization_code(metadata, resource, interaction.as_ref(), scopes)
                    .await
            }
            Grant::ClientCredentials(_) => {
                let mut form = vec![pair("grant_type", "client_credentials")];
                with_resource_and_scopes(&mut form, resource, &scopes);
                self.access_token(metadata, form, None, scopes).await
            }
            Grant::WorkloadIdentity(workload) => {
                self.workload_identity(metadata, resource, workload, scopes)
                    .await
            }
            Grant::EnterpriseManaged(grant) => {
                self.enterprise_managed(metadata, resource, grant, scopes)
                    .await
            }
        }
    }

    /// A token request for an access token at the server of `metadata`, with the
    /// configured client's authentication and a DPoP proof when tokens from that server
    /// are bound; the tokens to store.
    async fn access_token(
        &self,
        metadata: &AuthorizationServerMetadata,
        form: Vec<(String, String)>,
        redirect_uri: Option<&str>,
        scopes: Vec<String>,
    ) -> Result<StoredTokens, AuthErrorKind> {
        let client = client_for(&self.config, &self.fetcher, metadata, redirect_uri).await?;
        self.access_token_as(metadata, &client, form, None, scopes)
            .await
    }

    /// [`access_token`](Self::access_token) as `client`, keeping `old_refresh` when the
    /// server does not rotate refresh tokens.
    async fn access_token_as(
        &self,
        metadata: &AuthorizationServerMetadata,
        client: &ClientIdentity,
        form: Vec<(String, String)>,
        old_refresh: Option<&str>,
        scopes: Vec<String>,
    ) -> Result<StoredTokens, AuthErrorKind> {
        let dpop = self.dpop_for(metadata)?;
        let (response, kind) =
            token::access_token(&self.fetcher, metadata, client, form, dpop).await?;
        if dpop.is_some() && kind == TokenType::Bearer && self.config.dpop == DpopPolicy::Required {
            return Err(AuthErrorKind::DpopUnsupported {
                issuer: metadata.issuer.clone(),
                reason: "it answered a request with a proof with a bearer token".to_owned(),
            });
        }
        Ok(stored(metadata, response, kind, old_refresh, scopes))
    }

    async fn authorization_code(
        &self,
        metadata: &AuthorizationServerMetadata,
        resource: &ResourceMetadata,
        interaction: &dyn Interaction,
        scopes: Vec<String>,
    ) -> Result<StoredTokens, AuthErrorKind> {
        if !metadata.supports_s256() {
            return Err(AuthErrorKind::PkceUnsupported {
                issuer: metadata.issuer.clone(),
            });
        }
        // Refused before the user is involved, rather than after they signed in.
        self.dpop_for(metadata)?;
        let endpoint = metadata.authorization_endpoint.as_deref().ok_or_else(|| {
            AuthErrorKind::metadata(&metadata.issuer, "no authorization_endpoint")
        })?;
        self.fetcher.policy().check(endpoint)?;
        let redirect_uri = interaction.redirect_uri();
        let client = client_for(&self.config, &self.fetcher, metadata, Some(&redirect_uri)).await?;
        let pkce = Pkce::from_verifier(random_token()?);
        let state = random_token()?;
        let mut requested = scopes.clone();
        // A refresh token is asked for only where the server lists `offline_access`.
        if self.config.offline_access
            && metadata.lists_scope("offline_access")
            && !requested.iter().any(|s| s == "offline_access")
        {
            requested.push("offline_access".to_owned());
        }
        let url = authorization_url(
            endpoint,
            &AuthorizationParams {
                client_id: &client.client_id,
                redirect_uri: &redirect_uri,
                scopes: &requested,
                resource: &resource.resource,
                pkce: &pkce,
                state: &state,
            },
        );
        // The issuer is recorded with the verifier and the state before the user agent
        // leaves (Authorization Response Validation).
        let request = AuthorizationRequest {
            url,
            redirect_uri: redirect_uri.clone(),
            state: state.clone(),
            issuer: metadata.issuer.clone(),
        };
        let response = interaction
            .authorize(&request)
            .await
            .map_err(AuthErrorKind::Interaction)?;
        let code = validate_response(metadata, &state, &response)?;
        let form = vec![
            pair("grant_type", "authorization_code"),
            pair("code", &code),
            pair("redirect_uri", &redirect_uri),
            pair("code_verifier", pkce.verifier()),
            pair("resource", &resource.resource),
        ];
        self.access_token_as(metadata, &client, form, None, scopes)
            .await
    }

    /// The JWT bearer grant with the workload's JWT as the `assertion` (RFC 7523 §2.1),
    /// once the JWT is known to be addressed to this server. A refusal is reported as it
    /// is: never retried, and no other grant is tried.
    async fn workload_identity(
        &self,
        metadata: &AuthorizationServerMetadata,
        resource: &ResourceMetadata,
        workload: &WorkloadIdentity,
        scopes: Vec<String>,
    ) -> Result<StoredTokens, AuthErrorKind> {
        let jwt = workload
            .assertion
            .read()
            .map_err(AuthErrorKind::Assertion)?;
        check_audience(&jwt, metadata)?;
        self.jwt_bearer(metadata, resource, &jwt, scopes).await
    }

    /// The JWT bearer grant (RFC 7523 §2.1) with `assertion`, for `resource` and `scopes`.
    async fn jwt_bearer(
        &self,
        metadata: &AuthorizationServerMetadata,
        resource: &ResourceMetadata,
        assertion: &str,
        scopes: Vec<String>,
    ) -> Result<StoredTokens, AuthErrorKind> {
        let mut form = vec![pair("grant_type", JWT_BEARER), pair("assertion", assertion)];
        with_resource_and_scopes(&mut form, resource, &scopes);
        self.access_token(metadata, form, None, scopes).await
    }

    /// Enterprise-managed authorization: the ID token exchanged at the IdP for an ID-JAG
    /// whose audience is this authorization server and whose resource is this MCP server
    /// (§4), then the JWT bearer grant with it, as this client (§5).
    async fn enterprise_managed(
        &self,
        metadata: &AuthorizationServerMetadata,
        resource: &ResourceMetadata,
        grant: &EnterpriseManaged,
        scopes: Vec<String>,
    ) -> Result<StoredTokens, AuthErrorKind> {
        let idp = self.idp_metadata(&grant.idp).await?;
        let idp_client = ClientIdentity {
            client_id: grant.idp.client_id.clone(),
            secret: grant.idp.client_secret.clone(),
            private_key: None,
            registered_method: None,
        };
        let id_token = grant.id_token.read().map_err(AuthErrorKind::Assertion)?;
        let mut exchange = vec![
            pair("grant_type", TOKEN_EXCHANGE),
            pair("requested_token_type", ID_JAG),
            pair("audience", &metadata.issuer),
            pair("subject_token", &id_token),
            pair("subject_token_type", ID_TOKEN),
        ];
        with_resource_and_scopes(&mut exchange, resource, &scopes);
        let jag = token::id_jag(&self.fetcher, &idp, &idp_client, exchange).await?;
        self.jwt_bearer(metadata, resource, &jag, scopes).await
    }

    /// The IdP's token endpoint: as configured, or from its metadata.
    async fn idp_metadata(
        &self,
        idp: &EnterpriseIdp,
    ) -> Result<AuthorizationServerMetadata, AuthErrorKind> {
        match &idp.token_endpoint {
            Some(endpoint) => Ok(AuthorizationServerMetadata::token_endpoint_only(
                &idp.issuer,
                endpoint,
            )),
            None => discover_authorization_server(&self.fetcher, &idp.issuer).await,
        }
    }

    /// The refresh token grant (OAuth 2.1 §4.3), with the same `resource`.
    pub(super) async fn refresh(
        &self,
        metadata: &AuthorizationServerMetadata,
        resource: &ResourceMetadata,
        previous: &StoredTokens,
        refresh_token: &str,
    ) -> Result<StoredTokens, AuthErrorKind> {
        let redirect_uri = match &self.config.grant {
            Grant::AuthorizationCode(interaction) => Some(interaction.redirect_uri()),
            _ => None,
        };
        let client = client_for(
            &self.config,
            &self.fetcher,
            metadata,
            redirect_uri.as_deref(),
        )
        .await?;
        let form = vec![
            pair("grant_type", "refresh_token"),
            pair("refresh_token", refresh_token),
            pair("resource", &resource.resource),
        ];
        // A server that does not rotate refresh tokens keeps the old one valid.
        self.access_token_as(
            metadata,
            &client,
            form,
            Some(refresh_token),
            previous.scopes.clone(),
        )
        .await
    }
}

fn pair(name: &str, value: &str) -> (String, String) {
    (name.to_owned(), value.to_owned())
}

/// Adds `resource` (RFC 8707) and, when there are any, `scope`.
fn with_resource_and_scopes(
    form: &mut Vec<(String, String)>,
    resource: &ResourceMetadata,
    scopes: &[String],
) {
    form.push(pair("resource", &resource.resource));
    if !scopes.is_empty() {
        form.push(pair("scope", &scopes.join(" ")));
    }
}

/// Checks that a workload JWT is addressed to the server of `metadata`: one of its `aud`
/// values is the server's issuer or its token endpoint (a trailing slash aside). The JWT
/// is not verified (the client cannot, and need not: it only decides where to send it).
pub(crate) fn check_audience(
    jwt: &str,
    metadata: &AuthorizationServerMetadata,
) -> Result<(), AuthErrorKind> {
    let audience = audience(jwt);
    let trim = |s: &str| s.trim_end_matches('/').to_owned();
    let accepted = [trim(&metadata.issuer), trim(&metadata.token_endpoint)];
    if audience.iter().any(|a| accepted.contains(&trim(a))) {
        return Ok(());
    }
    Err(AuthErrorKind::AssertionAudience {
        issuer: metadata.issuer.clone(),
        audience,
    })
}

/// The `aud` of a JWT (a string or an array of strings), read without verification;
/// empty when it has none or is not a JWT.
fn audience(jwt: &str) -> Vec<String> {
    if jwt.len() > MAX_ASSERTION {
        return Vec::new();
    }
    let Some(payload) = jwt.split('.').nth(1) else {
        return Vec::new();
    };
    let Ok(bytes) = URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')) else {
        return Vec::new();
    };
    let Ok(claims) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return Vec::new();
    };
    match &claims["aud"] {
        serde_json::Value::String(aud) => vec![aud.clone()],
        serde_json::Value::Array(auds) => auds
            .iter()
            .filter_map(|a| a.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

fn stored(
    metadata: &AuthorizationServerMetadata,
    response: TokenResponse,
    kind: TokenType,
    old_refresh: Option<&str>,
    scopes: Vec<String>,
) -> StoredTokens {
    let mut tokens = StoredTokens::new(metadata.issuer.clone(), response.access_token);
    tokens.refresh_token = response
        .refresh_token
        .or_else(|| old_refresh.map(str::to_owned));
    tokens.expires_at = response.expires_in.map(|s| now().saturating_add(s));
    tokens.scopes = if scopes.is_empty() {
        response
            .scope
            .as_deref()
            .map(super::challenge::split_scopes)
            .unwrap_or_default()
    } else {
        scopes
    };
    if kind == TokenType::Dpop {
        "DPoP".clone_into(&mut tokens.token_type);
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: &serde_json::Value) -> String {
        format!(
            "e30.{}.sig",
            URL_SAFE_NO_PAD.encode(serde_json::to_vec(claims).unwrap())
        )
    }

    #[test]
    fn a_workload_jwt_goes_only_to_the_server_it_names() {
        let metadata = AuthorizationServerMetadata::token_endpoint_only(
            "https://as.example/tenant",
            "https://as.example/oauth/token",
        );
        for aud in [
            serde_json::json!("https://as.example/tenant"),
            serde_json::json!("https://as.example/tenant/"),
            serde_json::json!("https://as.example/oauth/token"),
            serde_json::json!(["https://other.example", "https://as.example/tenant"]),
        ] {
            assert!(
                check_audience(&jwt(&serde_json::json!({"aud": aud})), &metadata).is_ok(),
                "{aud}"
            );
        }
        for token in [
            jwt(&serde_json::json!({"aud": "https://evil.example"})),
            jwt(&serde_json::json!({"aud": "https://as.example"})),
            jwt(&serde_json::json!({"aud": 7})),
            jwt(&serde_json::json!({})),
            "not a jwt".to_owned(),
            "a.!!!.c".to_owned(),
        ] {
            assert!(
                matches!(
                    check_audience(&token, &metadata),
                    Err(AuthErrorKind::AssertionAudience { .. })
                ),
                "{token}"
            );
        }
    }
}
