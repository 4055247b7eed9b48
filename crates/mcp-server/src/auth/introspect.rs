//! Opaque (or any) access tokens verified by asking the authorization server: OAuth 2.0
//! Token Introspection (RFC 7662).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use http::header::AUTHORIZATION;
use http::{HeaderMap, HeaderValue, StatusCode};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use super::fetch::{Endpoint, form_encode};
use super::{TokenError, TokenPrincipal, TokenVerifier, VerifyFuture, config_error, unix_now};

/// The largest introspection response read.
const MAX_RESPONSE_BYTES: usize = 64 << 10;
/// The largest token sent for introspection; longer ones are refused unsent.
const MAX_TOKEN_BYTES: usize = 16 << 10;

/// How the resource server authenticates itself to the introspection endpoint (RFC 7662
/// §2.1 requires some authorization).
#[derive(Clone)]
#[non_exhaustive]
pub enum ClientAuth {
    /// `client_secret_basic`: HTTP Basic with the form-encoded id and secret.
    Basic {
        /// The resource server's client id.
        client_id: String,
        /// Its secret.
        client_secret: String,
    },
    /// `client_secret_post`: the id and secret in the form.
    Post {
        /// The resource server's client id.
        client_id: String,
        /// Its secret.
        client_secret: String,
    },
    /// A bearer token of the resource server's own (issued for introspection).
    Bearer(String),
}

impl std::fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientAuth::Basic { client_id, .. } => write!(f, "Basic({client_id}, ..)"),
            ClientAuth::Post { client_id, .. } => write!(f, "Post({client_id}, ..)"),
            ClientAuth::Bearer(_) => f.write_str("Bearer(..)"),
        }
    }
}

impl ClientAuth {
    /// `client_secret_basic`.
    pub fn basic(client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        ClientAuth::Basic {
            client_id: client_id.into(),
            client_secret: client_secret.into(),
        }
    }

    /// `client_secret_post`.
    pub fn post(client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        ClientAuth::Post {
            client_id: client_id.into(),
            client_secret: client_secret.into(),
        }
    }
}

/// Verifies tokens by RFC 7662 introspection.
///
/// Each token is POSTed once to the introspection endpoint, with the resource server's own
/// client authentication; the answer is accepted only when `active` is `true`, its `aud`
/// names this resource exactly, `exp` and `nbf` (when present) hold with a small leeway,
/// `iss` (when configured and present) is the expected issuer, and it is not a refresh
/// token. Answers are cached, keyed by a SHA-256 of the token (the cache never holds a
/// token), for a short time and never past the token's `exp`; the cache is bounded.
///
/// ```
/// use std::time::Duration;
/// use mcp_server::auth::{ClientAuth, IntrospectionVerifier};
///
/// let verifier = IntrospectionVerifier::builder(
///     "https://auth.example.com/oauth/introspect",
///     ClientAuth::basic("mcp-server", "s3cret"),
/// )
/// .issuer("https://auth.example.com")
/// .cache_ttl(Duration::from_secs(30))
/// .build()
/// .unwrap();
/// # let _ = verifier;
/// ```
#[derive(Debug, Clone)]
pub struct IntrospectionVerifier {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    endpoint: Endpoint,
    auth: ClientAuth,
    issuer: Option<String>,
    audiences: Vec<String>,
    leeway: u64,
    ttl: Duration,
    max_entries: usize,
    cache: Mutex<HashMap<[u8; 32], Cached>>,
}

#[derive(Debug, Clone)]
struct Cached {
    verdict: Result<TokenPrincipal, TokenError>,
    until: Instant,
}

/// Builds an [`IntrospectionVerifier`].
#[derive(Debug)]
pub struct IntrospectionVerifierBuilder {
    endpoint: String,
    auth: ClientAuth,
    issuer: Option<String>,
    audiences: Vec<String>,
    leeway: Duration,
    ttl: Duration,
    max_entries: usize,
    timeout: Duration,
}

impl IntrospectionVerifier {
    /// Introspection at `endpoint` (`https`; plain `http` only to a loopback host),
    /// authenticated with `auth`.
    pub fn builder(endpoint: impl Into<String>, auth: ClientAuth) -> IntrospectionVerifierBuilder {
        IntrospectionVerifierBuilder {
            endpoint: endpoint.into(),
            auth,
            issuer: None,
            audiences: Vec::new(),
            leeway: Duration::from_secs(30),
            ttl: Duration::from_mins(1),
            max_entries: 10_000,
            timeout: Duration::from_secs(10),
        }
    }
}

impl IntrospectionVerifierBuilder {
    /// Refuses an answer whose `iss` is present and not `issuer`.
    #[must_use]
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Also accepts tokens whose audience is `audience`; the resource's canonical URI is
    /// always accepted.
    #[must_use]
    pub fn accept_audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// The clock skew allowed for `exp` and `nbf` (default 30 s).
    #[must_use]
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// How long an answer is reused (default 60 s, never past the token's `exp`; zero
    /// asks every time). A revoked token stays usable for at most this long.
    #[must_use]
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// The most answers cached (default 10,000); when full, expired ones are dropped, then
    /// all.
    #[must_use]
    pub fn max_cache_entries(mut self, entries: usize) -> Self {
        self.max_entries = entries;
        self
    }

    /// How long an introspection call may take (default 10 s).
    #[must_use]
    pub fn fetch_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The verifier, or why this configuration cannot work.
    pub fn build(self) -> Result<IntrospectionVerifier, crate::Error> {
        let endpoint = Endpoint::new(
            &self.endpoint,
            "the introspection endpoint",
            MAX_RESPONSE_BYTES,
            self.timeout,
        )?;
        if let ClientAuth::Bearer(token) = &self.auth
            && HeaderValue::from_str(&format!("Bearer {token}")).is_err()
        {
            return Err(config_error(
                "the introspection bearer token is not a header value",
            ));
        }
        Ok(IntrospectionVerifier {
            inner: Arc::new(Inner {
                endpoint,
                auth: self.auth,
                issuer: self.issuer,
                audiences: self.audiences,
                leeway: self.leeway.as_secs(),
                ttl: self.ttl,
                max_entries: self.max_entries.max(1),
                cache: Mutex::new(HashMap::new()),
            }),
        })
    }
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str, resource: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.inner.verify(token, resource))
    }
}

impl Inner {
    fn cache(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Cached>> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn verify(&self, token: &str, resource: &str) -> Result<TokenPrincipal, TokenError> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(TokenError::invalid("the token is too long"));
        }
        // The resource is part of the key: one verifier may serve several resources.
        let key: [u8; 32] = Sha256::new()
            .chain_update(resource.as_bytes())
            .chain_update([0])
            .chain_update(token.as_bytes())
            .finalize()
            .into();
        if let Some(cached) = self.cache().get(&key)
            && cached.until > Instant::now()
        {
            return cached.verdict.clone();
        }
        let answer = self.introspect(token).await?;
        let verdict = self.judge(answer, resource);
        if !self.ttl.is_zero() {
            let mut until = Instant::now() + self.ttl;
            if let Ok(principal) = &verdict
                && let Some(exp) = principal.expires_at()
            {
                let left = Duration::from_secs(exp.saturating_sub(unix_now()));
                until = until.min(Instant::now() + left);
            }
            let mut cache = self.cache();
            if cache.len() >= self.max_entries {
                let now = Instant::now();
                cache.retain(|_, c| c.until > now);
                if cache.len() >= self.max_entries {
                    cache.clear();
                }
            }
            cache.insert(
                key,
                Cached {
                    verdict: verdict.clone(),
                    until,
                },
            );
        }
        verdict
    }

    /// The introspection call; a failure to get an answer is `Unavailable`.
    async fn introspect(&self, token: &str) -> Result<serde_json::Map<String, Value>, TokenError> {
        let mut form = format!("token={}&token_type_hint=access_token", form_encode(token));
        let mut headers = HeaderMap::new();
        match &self.auth {
            ClientAuth::Basic {
                client_id,
                client_secret,
            } => {
                // RFC 6749 §2.3.1: the id and secret are form-encoded before Base64.
                let pair = format!("{}:{}", form_encode(client_id), form_encode(client_secret));
                let value = format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(pair)
                );
                if let Ok(value) = HeaderValue::from_str(&value) {
                    headers.insert(AUTHORIZATION, value);
                }
            }
            ClientAuth::Post {
                client_id,
                client_secret,
            } => {
                form.push_str("&client_id=");
                form.push_str(&form_encode(client_id));
                form.push_str("&client_secret=");
                form.push_str(&form_encode(client_secret));
            }
            ClientAuth::Bearer(own) => {
                if let Ok(value) = HeaderValue::from_str(&format!("Bearer {own}")) {
                    headers.insert(AUTHORIZATION, value);
                }
            }
        }
        let (status, body) = self
            .endpoint
            .post_form(form, headers)
            .await
            .map_err(|e| TokenError::Unavailable(format!("token introspection failed: {e}")))?;
        if status != StatusCode::OK {
            tracing::warn!(%status, "the introspection endpoint refused the resource server");
            return Err(TokenError::Unavailable(format!(
                "the introspection endpoint answered {status}"
            )));
        }
        match body {
            Value::Object(answer) => Ok(answer),
            _ => Err(TokenError::Unavailable(
                "the introspection answer is not a JSON object".to_owned(),
            )),
        }
    }

    /// The checks of the module docs, on one answer.
    fn judge(
        &self,
        answer: serde_json::Map<String, Value>,
        resource: &str,
    ) -> Result<TokenPrincipal, TokenError> {
        if answer.get("active") != Some(&Value::Bool(true)) {
            return Err(TokenError::invalid("the token is not active"));
        }
        let audiences: Vec<&str> = match answer.get("aud") {
            Some(Value::String(one)) => vec![one.as_str()],
            Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let ours = |aud: &&str| *aud == resource || self.audiences.iter().any(|a| a == aud);
        if !audiences.iter().any(ours) {
            return Err(TokenError::invalid(
                "the token was not issued for this resource",
            ));
        }
        let now = unix_now();
        if let Some(exp) = answer.get("exp").and_then(Value::as_u64)
            && exp.saturating_add(self.leeway) <= now
        {
            return Err(TokenError::invalid("the token has expired"));
        }
        if let Some(nbf) = answer.get("nbf").and_then(Value::as_u64)
            && nbf > now.saturating_add(self.leeway)
        {
            return Err(TokenError::invalid("the token is not valid yet"));
        }
        if let (Some(expected), Some(issuer)) =
            (&self.issuer, answer.get("iss").and_then(Value::as_str))
            && expected != issuer
        {
            return Err(TokenError::invalid(
                "the token was not issued by the expected authorization server",
            ));
        }
        if answer
            .get("token_type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.eq_ignore_ascii_case("refresh_token"))
        {
            return Err(TokenError::invalid(
                "a refresh token is not an access token",
            ));
        }
        TokenPrincipal::from_claims(answer)
    }
}
