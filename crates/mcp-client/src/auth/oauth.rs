//! [`OAuthClient`]: the transport's [`Authorizer`], answering each challenge with the
//! flow of <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization>: discovery, the choice of
//! authorization server, scope selection and step-up, refresh, registration, the grant
//! (`grants.rs`), and presenting the token, as a bearer token or bound with DPoP
//! (RFC 9449, `dpop.rs`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use http::header::AUTHORIZATION;
use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use mcp_transport_http::{AuthFuture, Authorizer, Challenge};

use super::challenge::{BearerChallenge, wants_dpop_nonce};
use super::config::{DpopPolicy, Grant, OAuthConfig};
use super::discovery::{
    AuthorizationServerMetadata, ResourceDiscovery, ResourceMetadata,
    discover_authorization_server, discover_origin, discover_resource,
};
use super::dpop::{ALGORITHM, DPOP, Dpop, Role};
use super::fetch::Fetcher;
use super::store::StoredTokens;
use super::token::now;
use crate::{AuthErrorKind, Error};

/// The OAuth 2.1 client of an MCP server: install it as the HTTP transport's
/// [`Authorizer`] (see the [module docs](super) for an example). Cheap to share behind an
/// `Arc`; concurrent challenges run one flow at a time, and a request refused while
/// another obtained a token is simply re-sent with it. A token about to expire is renewed
/// before the next request ([`OAuthConfig::refresh_ahead`]).
///
/// With DPoP ([`OAuthConfig::dpop`]) the client holds an ephemeral ES256 key for its whole
/// life: a token issued as `DPoP` is presented as `Authorization: DPoP <token>` with a
/// fresh proof for each request's method and URL (never as a bearer token), and a server's
/// `use_dpop_nonce` refusal is retried once with the nonce it handed out.
#[derive(Debug)]
pub struct OAuthClient {
    pub(super) config: OAuthConfig,
    pub(super) fetcher: Fetcher,
    /// The current access token, as it is presented.
    presented: Mutex<Option<Arc<Presented>>>,
    /// The current tokens; held across a flow so that flows do not overlap.
    tokens: tokio::sync::Mutex<Option<StoredTokens>>,
    /// When the current token is due for renewal ahead of its expiry, in seconds since the
    /// Unix epoch; 0 when it is not to be renewed ahead.
    renew_at: AtomicU64,
    /// What the last flow discovered, which a renewal ahead of expiry reuses.
    discovered: Mutex<Option<Arc<Discovered>>>,
    /// The DPoP key and the servers' nonces, unless DPoP is off.
    pub(super) dpop: Option<Dpop>,
}

/// How the current access token is presented.
struct Presented {
    /// `Bearer <token>` or `DPoP <token>`.
    authorization: HeaderValue,
    /// The token, for the `ath` of a DPoP proof; `None` for a bearer token.
    dpop_bound: Option<String>,
}

impl std::fmt::Debug for Presented {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Presented")
            .field("dpop_bound", &self.dpop_bound.is_some())
            .finish_non_exhaustive()
    }
}

/// The metadata of the resource and of the authorization server chosen for it.
#[derive(Debug)]
pub(super) struct Discovered {
    pub(super) resource: ResourceMetadata,
    pub(super) metadata: AuthorizationServerMetadata,
}

/// When `tokens` are due for renewal ahead of expiry under `config` (0: never): with a
/// refresh token or an unattended grant, and a known expiry, `refresh_ahead` before it,
/// but no earlier than half the remaining lifetime.
fn renew_at(config: &OAuthConfig, tokens: &StoredTokens) -> u64 {
    let renewable = tokens.refresh_token.is_some() || config.grant.is_unattended();
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
    /// from the first request on, except DPoP-bound ones: they are bound to the key of the
    /// client that obtained them, and a new client has a new key.
    ///
    /// Fails with [`Error::Auth`]: the TLS setup failed (`AuthErrorKind::Http`), no DPoP
    /// key could be made, or the credential store could not be read.
    pub fn new(config: OAuthConfig) -> Result<OAuthClient, Error> {
        let fetcher = Fetcher::new(config.network.clone(), config.tls.clone())?;
        let dpop = match config.dpop {
            DpopPolicy::Off => None,
            DpopPolicy::IfSupported | DpopPolicy::Required => Some(Dpop::generate()?),
        };
        let stored = config
            .store
            .tokens(&config.server_url)
            .map_err(AuthErrorKind::Store)?
            .filter(|t| {
                let usable = !t.is_dpop_bound();
                if !usable {
                    tracing::info!("stored tokens are DPoP-bound to another client's key: unused");
                }
                usable
            });
        let presented = stored
            .as_ref()
            .and_then(|t| presentation(t, dpop.is_some()).ok());
        let due = stored.as_ref().map_or(0, |t| renew_at(&config, t));
        Ok(OAuthClient {
            config,
            fetcher,
            presented: Mutex::new(presented.map(Arc::new)),
            tokens: tokio::sync::Mutex::new(stored),
            renew_at: AtomicU64::new(due),
            discovered: Mutex::new(None),
            dpop,
        })
    }

    /// The settings.
    pub fn config(&self) -> &OAuthConfig {
        &self.config
    }

    /// Forgets the tokens (in memory and in the store); the next request signs in again.
    /// Fails with [`Error::Auth`] ([`AuthErrorKind::Store`]) when the store cannot forget
    /// them.
    pub async fn sign_out(&self) -> Result<(), Error> {
        let mut tokens = self.tokens.lock().await;
        *tokens = None;
        *self
            .presented
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = None;
        self.renew_at.store(0, Ordering::Relaxed);
        self.config
            .store
            .remove_tokens(&self.config.server_url)
            .map_err(|e| Error::Auth(AuthErrorKind::Store(e)))
    }

    fn current(&self) -> Option<Arc<Presented>> {
        self.presented
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The DPoP key to bind tokens from the server of `metadata` with, if any: under
    /// [`DpopPolicy::IfSupported`] when the server advertises ES256 for DPoP, always under
    /// [`DpopPolicy::Required`] (an error when it does not advertise it).
    pub(super) fn dpop_for(
        &self,
        metadata: &AuthorizationServerMetadata,
    ) -> Result<Option<&Dpop>, AuthErrorKind> {
        let Some(dpop) = &self.dpop else {
            return Ok(None);
        };
        if metadata.supports_dpop(ALGORITHM) {
            return Ok(Some(dpop));
        }
        if self.config.dpop == DpopPolicy::Required {
            return Err(AuthErrorKind::DpopUnsupported {
                issuer: metadata.issuer.clone(),
                reason: format!(
                    "dpop_signing_alg_values_supported is {:?}",
                    metadata.dpop_signing_alg_values_supported
                ),
            });
        }
        Ok(None)
    }

    /// Answers one challenge; `Ok(true)` when the request is to be sent again.
    async fn answer(&self, challenge: &Challenge) -> Result<bool, AuthErrorKind> {
        // The resource server wants its nonce in the proof (RFC 9449 §9): `responded` kept
        // it; send the request again, once. A second request for a nonce by the same
        // request is a server that never accepts one: give up.
        if wants_dpop_nonce(&challenge.www_authenticate) {
            let bound = self.current().is_some_and(|p| p.dpop_bound.is_some());
            let asked_before = challenge.earlier.iter().any(|c| wants_dpop_nonce(c));
            let known = self
                .dpop
                .as_ref()
                .is_some_and(|d| d.nonce(Role::Resource, &challenge.url).is_some());
            if bound && known && !asked_before {
                return Ok(true);
            }
            tracing::warn!(
                bound,
                known,
                asked_before,
                "the server's DPoP nonce request cannot be met"
            );
            return Ok(false);
        }
        let mut held = self.tokens.lock().await;
        // Another request obtained a token while this one waited: just use it.
        let current = self.current().map(|p| p.authorization.clone());
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
        let Discovered { resource, metadata } =
            self.discover(bearer.resource_metadata.as_deref()).await?;
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
        let tokens = self.grant(&metadata, &resource, scopes).await?;
        self.install(&mut held, tokens)
    }

    /// The resource's metadata and its authorization server's, from the challenge's
    /// `resource_metadata` or the well-known URLs; for a server without Protected Resource
    /// Metadata, the discovery of revision 2025-03-26 at its origin (`discover_origin`).
    /// Either way the authorization server must be one that bound credentials belong to
    /// ([`OAuthClient::choose_issuer`]).
    async fn discover(&self, from_challenge: Option<&str>) -> Result<Discovered, AuthErrorKind> {
        let server = &self.config.server_url;
        match discover_resource(&self.fetcher, server, from_challenge).await? {
            ResourceDiscovery::Found(resource) => {
                let issuer = self.choose_issuer(&resource)?;
                let metadata = discover_authorization_server(&self.fetcher, &issuer).await?;
                Ok(Discovered { resource, metadata })
            }
            ResourceDiscovery::Absent => {
                let (resource, metadata) = discover_origin(&self.fetcher, server).await?;
                self.choose_issuer(&resource)?;
                Ok(Discovered { resource, metadata })
            }
        }
    }

    /// The authorization server to use: the first one listed, or, with pre-registered,
    /// client or workload credentials bound to an issuer, the listed one they belong to (an
    /// error if none is: credentials are never presented to another server).
    fn choose_issuer(&self, resource: &ResourceMetadata) -> Result<String, AuthErrorKind> {
        let bound: Vec<String> = match &self.config.grant {
            Grant::ClientCredentials(c) => c.issuer.iter().cloned().collect(),
            Grant::WorkloadIdentity(w) => w.issuer.iter().cloned().collect(),
            Grant::EnterpriseManaged(e) => e.client.issuer.iter().cloned().collect(),
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
            .ok_or_else(|| AuthErrorKind::PreRegisteredElsewhere {
                issuer: resource.authorization_servers[0].clone(),
                configured: bound,
            })
    }

    fn install(
        &self,
        held: &mut Option<StoredTokens>,
        tokens: StoredTokens,
    ) -> Result<bool, AuthErrorKind> {
        let presented = presentation(&tokens, self.dpop.is_some())?;
        self.config
            .store
            .save_tokens(&self.config.server_url, &tokens)
            .map_err(AuthErrorKind::Store)?;
        *self
            .presented
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(presented));
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

    /// New tokens for `current`, without the user: the refresh token grant, or the
    /// unattended grant again.
    async fn renew(&self, current: &StoredTokens) -> Result<StoredTokens, AuthErrorKind> {
        let discovered = self.discovered().await?;
        let (resource, metadata) = (&discovered.resource, &discovered.metadata);
        if metadata.issuer != current.issuer {
            return Err(AuthErrorKind::metadata(
                &metadata.issuer,
                "the tokens were issued by another authorization server",
            ));
        }
        match &current.refresh_token {
            Some(refresh_token) => {
                self.refresh(metadata, resource, current, refresh_token)
                    .await
            }
            None if self.config.grant.is_unattended() => {
                self.grant(metadata, resource, current.scopes.clone()).await
            }
            None => Err(AuthErrorKind::metadata(
                &metadata.issuer,
                "no refresh token to renew the access token with",
            )),
        }
    }

    /// What the last flow discovered, or, for tokens from the store, discovery now (from
    /// the well-known URLs: there is no challenge to start from).
    async fn discovered(&self) -> Result<Arc<Discovered>, AuthErrorKind> {
        let cached = self
            .discovered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(discovered) = cached {
            return Ok(discovered);
        }
        let discovered = Arc::new(self.discover(None).await?);
        *self
            .discovered
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&discovered));
        Ok(discovered)
    }

    /// The credential headers of a request of `method` on `url`: see
    /// [`Authorizer::headers`].
    fn credentials(&self, method: &Method, url: &Uri) -> Result<HeaderMap, AuthErrorKind> {
        let mut headers = HeaderMap::new();
        let Some(presented) = self.current() else {
            return Ok(headers);
        };
        headers.insert(AUTHORIZATION, presented.authorization.clone());
        if let Some(token) = &presented.dpop_bound {
            // A bound token is only ever presented with a proof of the key.
            let dpop = self.dpop.as_ref().ok_or_else(|| {
                AuthErrorKind::Dpop("a DPoP-bound token but no DPoP key".to_owned())
            })?;
            headers.insert(DPOP, dpop.proof(Role::Resource, method, url, Some(token))?);
        }
        Ok(headers)
    }
}

/// How `tokens` are presented: `Bearer <token>`, or `DPoP <token>` (with a proof per
/// request) for a DPoP-bound token, which needs the client's DPoP key.
fn presentation(tokens: &StoredTokens, has_key: bool) -> Result<Presented, AuthErrorKind> {
    let bound = tokens.is_dpop_bound();
    if bound && !has_key {
        return Err(AuthErrorKind::Dpop(
            "a DPoP-bound token but no DPoP key".to_owned(),
        ));
    }
    let scheme = if bound { "DPoP" } else { "Bearer" };
    let mut authorization = HeaderValue::from_str(&format!("{scheme} {}", tokens.access_token))
        .map_err(|_| AuthErrorKind::InvalidTokenResponse {
            url: String::new(),
            reason: "the access token cannot be sent in a header".to_owned(),
        })?;
    authorization.set_sensitive(true);
    Ok(Presented {
        authorization,
        dpop_bound: bound.then(|| tokens.access_token.clone()),
    })
}

impl Authorizer for OAuthClient {
    fn authorization(&self) -> Option<HeaderValue> {
        self.current().map(|p| p.authorization.clone())
    }

    fn headers(
        &self,
        method: &Method,
        url: &Uri,
    ) -> Result<HeaderMap, mcp_transport_http::AuthorizerError> {
        self.credentials(method, url)
            .map_err(|e| Box::new(e) as mcp_transport_http::AuthorizerError)
    }

    fn responded(&self, url: &Uri, _status: StatusCode, headers: &HeaderMap) {
        if let Some(dpop) = &self.dpop {
            dpop.remember_nonce(Role::Resource, url, headers);
        }
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
