//! [`OAuthClient`]: the transport's [`Authorizer`], answering each challenge with the
//! flow of `docs/2026-07-28/basic/authorization/index.mdx`: discovery, the choice of
//! authorization server, scope selection and step-up, refresh, registration, the grant.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use http::{HeaderValue, StatusCode};
use mcp_transport_http::{AuthFuture, Authorizer, Challenge};

use super::challenge::{BearerChallenge, split_scopes};
use super::config::{Grant, OAuthConfig};
use super::discovery::{
    AuthorizationServerMetadata, ResourceMetadata, discover_authorization_server, discover_resource,
};
use super::error::AuthError;
use super::fetch::Fetcher;
use super::flow::{AuthorizationParams, authorization_url, validate_response};
use super::interaction::{AuthorizationRequest, Interaction};
use super::pkce::{Pkce, random_token};
use super::register::client_for;
use super::store::StoredTokens;
use super::token::{self, TokenResponse, now};

/// The OAuth 2.1 client of an MCP server: install it as the HTTP transport's
/// [`Authorizer`] (see the [module docs](super) for an example). Cheap to share behind an
/// `Arc`; concurrent challenges run one flow at a time, and a request refused while
/// another obtained a token is simply re-sent with it. A token about to expire is renewed
/// before the next request ([`OAuthConfig::refresh_ahead`]).
#[derive(Debug)]
pub struct OAuthClient {
    config: OAuthConfig,
    fetcher: Fetcher,
    /// The `Authorization` header of the current access token.
    header: Mutex<Option<HeaderValue>>,
    /// The current tokens; held across a flow so that flows do not overlap.
    tokens: tokio::sync::Mutex<Option<StoredTokens>>,
    /// When the current token is due for renewal ahead of its expiry, in seconds since the
    /// Unix epoch; 0 when it is not to be renewed ahead.
    renew_at: AtomicU64,
    /// What the last flow discovered, which a renewal ahead of expiry reuses.
    discovered: Mutex<Option<Arc<Discovered>>>,
}

/// The metadata of the resource and of the authorization server chosen for it.
#[derive(Debug)]
struct Discovered {
    resource: ResourceMetadata,
    metadata: AuthorizationServerMetadata,
}

/// When `tokens` are due for renewal ahead of expiry under `config` (0: never): with a
/// refresh token or the client credentials grant, and a known expiry, `refresh_ahead`
/// before it, but no earlier than half the remaining lifetime.
fn renew_at(config: &OAuthConfig, tokens: &StoredTokens) -> u64 {
    let renewable =
        tokens.refresh_token.is_some() || matches!(config.grant, Grant::ClientCredentials(_));
    let Some(expires_at) = tokens
        .expires_at
        .filter(|_| renewable && !config.refresh_ahead.is_zero())
    else {
        return 0;
    };
    let remaining = expires_at.saturating_sub(now());
    let ahead = config.refresh_ahead.as_secs().min(remaining / 2);
    expires_at.saturating_sub(ahead).max(1)
}

impl OAuthClient {
    /// A client with `config`. Tokens stored for the server by an earlier run are used
    /// from the first request on.
    pub fn new(config: OAuthConfig) -> Result<OAuthClient, AuthError> {
        let fetcher = Fetcher::new(config.network.clone(), config.tls.clone())?;
        let stored = config
            .store
            .tokens(&config.server_url)
            .map_err(AuthError::Store)?;
        let header = stored.as_ref().and_then(|t| bearer(&t.access_token));
        let due = stored.as_ref().map_or(0, |t| renew_at(&config, t));
        Ok(OAuthClient {
            config,
            fetcher,
            header: Mutex::new(header),
            tokens: tokio::sync::Mutex::new(stored),
            renew_at: AtomicU64::new(due),
            discovered: Mutex::new(None),
        })
    }

    /// The settings.
    pub fn config(&self) -> &OAuthConfig {
        &self.config
    }

    /// Forgets the tokens (in memory and in the store); the next request signs in again.
    pub async fn sign_out(&self) -> Result<(), AuthError> {
        let mut tokens = self.tokens.lock().await;
        *tokens = None;
        *self.header.lock().unwrap_or_else(PoisonError::into_inner) = None;
        self.renew_at.store(0, Ordering::Relaxed);
        self.config
            .store
            .remove_tokens(&self.config.server_url)
            .map_err(AuthError::Store)
    }

    fn current(&self) -> Option<HeaderValue> {
        self.header
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Answers one challenge; `Ok(true)` when a new token is in place.
    async fn answer(&self, challenge: &Challenge) -> Result<bool, AuthError> {
        let mut held = self.tokens.lock().await;
        // Another request obtained a token while this one waited: just use it.
        let current = self.current();
        if current.is_some() && current != challenge.sent {
            return Ok(true);
        }
        if challenge.attempt >= self.config.max_authorizations {
            tracing::warn!(
                attempts = challenge.attempt,
                "authorization retry limit reached"
            );
            return Ok(false);
        }
        let bearer = BearerChallenge::from_headers(&challenge.www_authenticate);
        let step_up = bearer.is_insufficient_scope();
        if challenge.status == StatusCode::FORBIDDEN && !step_up {
            return Ok(false);
        }
        let server = &self.config.server_url;
        let resource =
            discover_resource(&self.fetcher, server, bearer.resource_metadata.as_deref()).await?;
        let issuer = self.choose_issuer(&resource)?;
        let metadata = discover_authorization_server(&self.fetcher, &issuer).await?;
        *self
            .discovered
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(Discovered {
            resource: resource.clone(),
            metadata: metadata.clone(),
        }));
        // Tokens are bound to the server that issued them: never used with another.
        let previous = held
            .as_ref()
            .filter(|t| t.issuer == metadata.issuer)
            .cloned();
        let mut scopes = previous
            .as_ref()
            .map(|t| t.scopes.clone())
            .unwrap_or_default();
        let challenged = bearer.scopes();
        let wanted = if challenged.is_empty() {
            resource.scopes_supported.clone().unwrap_or_default()
        } else {
            challenged
        };
        let before = scopes.len();
        for scope in wanted {
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
        // An expired or revoked token with nothing new to ask for: refresh it.
        if !step_up
            && scopes.len() == before
            && let Some(previous) = &previous
            && let Some(refresh_token) = &previous.refresh_token
        {
            match self
                .refresh(&metadata, &resource, previous, refresh_token)
                .await
            {
                Ok(tokens) => return self.install(&mut held, tokens),
                Err(e) => tracing::info!(error = %e, "refresh failed; authorizing again"),
            }
        }
        let tokens = match &self.config.grant {
            Grant::AuthorizationCode(interaction) => {
                self.authorization_code(&metadata, &resource, interaction.as_ref(), scopes)
                    .await?
            }
            Grant::ClientCredentials(_) => {
                self.client_credentials(&metadata, &resource, scopes)
                    .await?
            }
        };
        self.install(&mut held, tokens)
    }

    /// The authorization server to use: the first one listed, or, with pre-registered or
    /// client credentials bound to an issuer, the listed one they belong to (an error if
    /// none is: credentials are never presented to another server).
    fn choose_issuer(&self, resource: &ResourceMetadata) -> Result<String, AuthError> {
        let bound: Vec<String> = match &self.config.grant {
            Grant::ClientCredentials(c) => c.issuer.iter().cloned().collect(),
            Grant::AuthorizationCode(_) => self
                .config
                .pre_registered
                .iter()
                .map(|p| p.issuer.clone())
                .collect(),
        };
        if bound.is_empty() {
            return Ok(resource.authorization_servers[0].clone());
        }
        resource
            .authorization_servers
            .iter()
            .find(|s| bound.contains(s))
            .cloned()
            .ok_or_else(|| AuthError::PreRegisteredElsewhere {
                issuer: resource.authorization_servers[0].clone(),
                configured: bound,
            })
    }

    fn install(
        &self,
        held: &mut Option<StoredTokens>,
        tokens: StoredTokens,
    ) -> Result<bool, AuthError> {
        let header =
            bearer(&tokens.access_token).ok_or_else(|| AuthError::InvalidTokenResponse {
                url: String::new(),
                reason: "the access token cannot be sent in a header".to_owned(),
            })?;
        self.config
            .store
            .save_tokens(&self.config.server_url, &tokens)
            .map_err(AuthError::Store)?;
        *self.header.lock().unwrap_or_else(PoisonError::into_inner) = Some(header);
        self.renew_at
            .store(renew_at(&self.config, &tokens), Ordering::Relaxed);
        *held = Some(tokens);
        Ok(true)
    }

    /// Whether the current token is due for renewal ahead of its expiry.
    fn due(&self) -> bool {
        let at = self.renew_at.load(Ordering::Relaxed);
        at != 0 && now() >= at
    }

    /// Renews the current token ahead of its expiry. A failure is logged and not retried
    /// for this token: it is used until the server refuses it, and the refusal starts the
    /// usual flow.
    async fn renew_ahead(&self) {
        let mut held = self.tokens.lock().await;
        // Another request renewed it (or a flow replaced it) while this one waited.
        if !self.due() {
            return;
        }
        let Some(current) = held.clone() else {
            return;
        };
        let result = match self.renew(&current).await {
            Ok(tokens) => self.install(&mut held, tokens).map(drop),
            Err(e) => Err(e),
        };
        match result {
            Ok(()) => tracing::debug!("renewed the access token ahead of its expiry"),
            Err(e) => {
                self.renew_at.store(0, Ordering::Relaxed);
                tracing::info!(error = %e, "renewing the access token ahead of its expiry failed");
            }
        }
    }

    /// New tokens for `current`, without the user: the refresh token grant, or the client
    /// credentials grant again.
    async fn renew(&self, current: &StoredTokens) -> Result<StoredTokens, AuthError> {
        let discovered = self.discovered().await?;
        let (resource, metadata) = (&discovered.resource, &discovered.metadata);
        if metadata.issuer != current.issuer {
            return Err(AuthError::metadata(
                &metadata.issuer,
                "the tokens were issued by another authorization server",
            ));
        }
        match (&current.refresh_token, &self.config.grant) {
            (Some(refresh_token), _) => {
                self.refresh(metadata, resource, current, refresh_token)
                    .await
            }
            (None, Grant::ClientCredentials(_)) => {
                self.client_credentials(metadata, resource, current.scopes.clone())
                    .await
            }
            (None, Grant::AuthorizationCode(_)) => Err(AuthError::metadata(
                &metadata.issuer,
                "no refresh token to renew the access token with",
            )),
        }
    }

    /// What the last flow discovered, or, for tokens from the store, discovery now (from
    /// the well-known URLs: there is no challenge to start from).
    async fn discovered(&self) -> Result<Arc<Discovered>, AuthError> {
        let cached = self
            .discovered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(discovered) = cached {
            return Ok(discovered);
        }
        let resource = discover_resource(&self.fetcher, &self.config.server_url, None).await?;
        let issuer = self.choose_issuer(&resource)?;
        let metadata = discover_authorization_server(&self.fetcher, &issuer).await?;
        let discovered = Arc::new(Discovered { resource, metadata });
        *self
            .discovered
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&discovered));
        Ok(discovered)
    }

    async fn authorization_code(
        &self,
        metadata: &AuthorizationServerMetadata,
        resource: &ResourceMetadata,
        interaction: &dyn Interaction,
        scopes: Vec<String>,
    ) -> Result<StoredTokens, AuthError> {
        if !metadata.supports_s256() {
            return Err(AuthError::PkceUnsupported {
                issuer: metadata.issuer.clone(),
            });
        }
        let endpoint = metadata
            .authorization_endpoint
            .as_deref()
            .ok_or_else(|| AuthError::metadata(&metadata.issuer, "no authorization_endpoint"))?;
        self.fetcher.policy().check_url(endpoint)?;
        let redirect_uri = interaction.redirect_uri();
        let client = client_for(&self.config, &self.fetcher, metadata, Some(&redirect_uri)).await?;
        let pkce = Pkce::generate();
        let state = random_token();
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
            .map_err(AuthError::Interaction)?;
        let code = validate_response(metadata, &state, &response)?;
        let form = vec![
            pair("grant_type", "authorization_code"),
            pair("code", &code),
            pair("redirect_uri", &redirect_uri),
            pair("code_verifier", pkce.verifier()),
            pair("resource", &resource.resource),
        ];
        let response = token::request(&self.fetcher, metadata, &client, form).await?;
        Ok(stored(metadata, response, None, scopes))
    }

    async fn client_credentials(
        &self,
        metadata: &AuthorizationServerMetadata,
        resource: &ResourceMetadata,
        scopes: Vec<String>,
    ) -> Result<StoredTokens, AuthError> {
        let client = client_for(&self.config, &self.fetcher, metadata, None).await?;
        let mut form = vec![
            pair("grant_type", "client_credentials"),
            pair("resource", &resource.resource),
        ];
        if !scopes.is_empty() {
            form.push(pair("scope", &scopes.join(" ")));
        }
        let response = token::request(&self.fetcher, metadata, &client, form).await?;
        Ok(stored(metadata, response, None, scopes))
    }

    /// The refresh token grant (OAuth 2.1 §4.3), with the same `resource`.
    async fn refresh(
        &self,
        metadata: &AuthorizationServerMetadata,
        resource: &ResourceMetadata,
        previous: &StoredTokens,
        refresh_token: &str,
    ) -> Result<StoredTokens, AuthError> {
        let redirect_uri = match &self.config.grant {
            Grant::AuthorizationCode(interaction) => Some(interaction.redirect_uri()),
            Grant::ClientCredentials(_) => None,
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
        let response = token::request(&self.fetcher, metadata, &client, form).await?;
        // A server that does not rotate refresh tokens keeps the old one valid.
        Ok(stored(
            metadata,
            response,
            Some(refresh_token),
            previous.scopes.clone(),
        ))
    }
}

fn pair(name: &str, value: &str) -> (String, String) {
    (name.to_owned(), value.to_owned())
}

fn bearer(token: &str) -> Option<HeaderValue> {
    let mut value = HeaderValue::from_str(&format!("Bearer {token}")).ok()?;
    value.set_sensitive(true);
    Some(value)
}

fn stored(
    metadata: &AuthorizationServerMetadata,
    response: TokenResponse,
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
            .map(split_scopes)
            .unwrap_or_default()
    } else {
        scopes
    };
    tokens
}

impl Authorizer for OAuthClient {
    fn authorization(&self) -> Option<HeaderValue> {
        self.current()
    }

    fn prepare(&self) -> Option<AuthFuture<'_, ()>> {
        self.due()
            .then(|| Box::pin(self.renew_ahead()) as AuthFuture<'_, ()>)
    }

    fn challenged<'a>(
        &'a self,
        challenge: &'a Challenge,
    ) -> AuthFuture<'a, Result<bool, mcp_transport_http::AuthorizerError>> {
        Box::pin(async move {
            self.answer(challenge)
                .await
                .map_err(|e| Box::new(e) as mcp_transport_http::AuthorizerError)
        })
    }
}
