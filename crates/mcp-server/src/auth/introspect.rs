//! Opaque (or any) access tokens verified by asking the authorization server: OAuth 2.0
//! Token Introspection (RFC 7662).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
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
/// A token is POSTed to the introspection endpoint, with the resource server's own client
/// authentication; the answer is accepted only when `active` is `true`, its `aud` names this
/// resource exactly, `exp` and `nbf` (when present) hold with a small leeway, `iss` (when
/// configured and present) is the expected issuer, and it is not a refresh token.
///
/// Tokens come from anyone, so the verifier bounds what they can make it send:
///
/// - Answers are cached, keyed by a SHA-256 of the resource and the token (the cache never
///   holds a token): an accepted token for [`cache_ttl`](IntrospectionVerifierBuilder::cache_ttl)
///   (60 s, never past its `exp`), a refused one for
///   [`negative_cache_ttl`](IntrospectionVerifierBuilder::negative_cache_ttl) (30 s), so the
///   same bad token asks once. Each of the two caches holds at most
///   [`max_cache_entries`](IntrospectionVerifierBuilder::max_cache_entries) (10,000) and,
///   when full, drops its least recently used answer; refused tokens never push accepted
///   ones out.
/// - Concurrent verifications of one token share one call.
/// - Calls are limited to [`introspection_rate`](IntrospectionVerifierBuilder::introspection_rate)
///   (100 a second, in bursts of up to 100). Past it, a token whose answer is not cached is
///   neither sent nor accepted: [`TokenError::Unavailable`] (`503`, "cannot verify now"),
///   and the client may retry. Cached tokens keep working.
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
/// .introspection_rate(20, Duration::from_secs(1))
/// .build()
/// .unwrap();
/// # let _ = verifier;
/// ```
#[derive(Debug, Clone)]
pub struct IntrospectionVerifier {
    inner: Arc<Inner>,
}

/// A SHA-256 of the resource and the token.
type Key = [u8; 32];

/// The answer of one introspection call, as every verification that waited for it sees it.
type Verdict = Result<TokenPrincipal, TokenError>;

#[derive(Debug)]
struct Inner {
    endpoint: Endpoint,
    auth: ClientAuth,
    issuer: Option<String>,
    audiences: Vec<String>,
    leeway: u64,
    ttl: Duration,
    negative_ttl: Duration,
    cache: Mutex<Caches>,
    flights: Mutex<HashMap<Key, Arc<Flight>>>,
    bucket: Mutex<Bucket>,
    /// The tests' clock: it stands at `epoch` until they move it forward by `skew`
    /// milliseconds, so that no test depends on how fast it runs.
    #[cfg(test)]
    epoch: Instant,
    #[cfg(test)]
    skew: std::sync::atomic::AtomicU64,
}

#[derive(Debug)]
struct Caches {
    accepted: Lru<Cached>,
    refused: Lru<Cached>,
}

#[derive(Debug, Clone)]
struct Cached {
    verdict: Verdict,
    until: Instant,
}

/// One outbound call in progress, shared by every verification of the same token.
#[derive(Debug, Default)]
struct Flight {
    verdict: tokio::sync::OnceCell<Verdict>,
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
    negative_ttl: Duration,
    max_entries: usize,
    rate: (u32, Duration),
    timeout: Duration,
}

impl IntrospectionVerifier {
    /// The default of [`IntrospectionVerifierBuilder::cache_ttl`].
    pub const DEFAULT_CACHE_TTL: Duration = Duration::from_mins(1);
    /// The default of [`IntrospectionVerifierBuilder::negative_cache_ttl`].
    pub const DEFAULT_NEGATIVE_CACHE_TTL: Duration = Duration::from_secs(30);
    /// The default of [`IntrospectionVerifierBuilder::max_cache_entries`].
    pub const DEFAULT_MAX_CACHE_ENTRIES: usize = 10_000;
    /// The default of [`IntrospectionVerifierBuilder::introspection_rate`]: 100 calls a
    /// second, in bursts of up to 100.
    pub const DEFAULT_INTROSPECTION_RATE: (u32, Duration) = (100, Duration::from_secs(1));

    /// Introspection at `endpoint` (`https`; plain `http` only to a loopback host),
    /// authenticated with `auth`.
    pub fn builder(endpoint: impl Into<String>, auth: ClientAuth) -> IntrospectionVerifierBuilder {
        IntrospectionVerifierBuilder {
            endpoint: endpoint.into(),
            auth,
            issuer: None,
            audiences: Vec::new(),
            leeway: Duration::from_secs(30),
            ttl: Self::DEFAULT_CACHE_TTL,
            negative_ttl: Self::DEFAULT_NEGATIVE_CACHE_TTL,
            max_entries: Self::DEFAULT_MAX_CACHE_ENTRIES,
            rate: Self::DEFAULT_INTROSPECTION_RATE,
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

    /// How long an accepted answer is reused (default 60 s, never past the token's `exp`;
    /// zero asks every time). A revoked token stays usable for at most this long.
    #[must_use]
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// How long a refused answer (inactive, or not valid here) is reused (default 30 s;
    /// zero asks every time), so that a bad token presented again costs no call. A token
    /// the authorization server refused and then activated is refused for at most this
    /// long.
    #[must_use]
    pub fn negative_cache_ttl(mut self, ttl: Duration) -> Self {
        self.negative_ttl = ttl;
        self
    }

    /// The most answers each cache holds, accepted and refused (default 10,000, at least
    /// 1); when one is full, its least recently used answer is dropped.
    #[must_use]
    pub fn max_cache_entries(mut self, entries: usize) -> Self {
        self.max_entries = entries;
        self
    }

    /// At most `calls` introspection calls every `per` (default 100 a second), in bursts
    /// of up to `calls`. Past it, a token whose answer is not cached is answered
    /// [`TokenError::Unavailable`] without a call: never accepted. `build` refuses zero
    /// calls or a zero period.
    #[must_use]
    pub fn introspection_rate(mut self, calls: u32, per: Duration) -> Self {
        self.rate = (calls, per);
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
        let (calls, per) = self.rate;
        if calls == 0 || per.is_zero() {
            return Err(config_error(
                "the introspection rate must allow at least one call in a non-zero period",
            ));
        }
        let max_entries = self.max_entries.max(1);
        let now = Instant::now();
        Ok(IntrospectionVerifier {
            inner: Arc::new(Inner {
                endpoint,
                auth: self.auth,
                issuer: self.issuer,
                audiences: self.audiences,
                leeway: self.leeway.as_secs(),
                ttl: self.ttl,
                negative_ttl: self.negative_ttl,
                cache: Mutex::new(Caches {
                    accepted: Lru::new(max_entries),
                    refused: Lru::new(max_entries),
                }),
                flights: Mutex::new(HashMap::new()),
                bucket: Mutex::new(Bucket::new(calls, per, now)),
                #[cfg(test)]
                epoch: now,
                #[cfg(test)]
                skew: std::sync::atomic::AtomicU64::new(0),
            }),
        })
    }
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str, resource: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.inner.verify(token, resource))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A seat at a [`Flight`]. Every clone of the flight's `Arc` is made, and dropped, with
/// the flight table locked, so the strong count there is exact: when a seat leaves, the
/// flight is taken off the table once its verdict is known (later verifications use the
/// cache) or when no one else waits (all of them cancelled), so the table never keeps
/// flights that no request will finish.
struct Seat<'a> {
    flights: &'a Mutex<HashMap<Key, Arc<Flight>>>,
    key: Key,
    flight: Option<Arc<Flight>>,
}

impl Seat<'_> {
    fn flight(&self) -> &Flight {
        self.flight
            .as_deref()
            .unwrap_or_else(|| unreachable!("a seat holds its flight until dropped"))
    }
}

impl Drop for Seat<'_> {
    fn drop(&mut self) {
        let mut flights = lock(self.flights);
        if let Some(flight) = self.flight.take() {
            let listed = flights
                .get(&self.key)
                .is_some_and(|f| Arc::ptr_eq(f, &flight));
            if listed && (flight.verdict.initialized() || Arc::strong_count(&flight) <= 2) {
                flights.remove(&self.key);
            }
            drop(flight);
        }
    }
}

impl Inner {
    /// The verifier's clock: `Instant::now()`, or the tests' own.
    #[cfg_attr(
        not(test),
        allow(clippy::unused_self, reason = "the tests' clock is a field")
    )]
    fn now(&self) -> Instant {
        #[cfg(test)]
        {
            let skew = self.skew.load(std::sync::atomic::Ordering::SeqCst);
            self.epoch + Duration::from_millis(skew)
        }
        #[cfg(not(test))]
        Instant::now()
    }

    fn cached(&self, key: &Key) -> Option<Verdict> {
        let now = self.now();
        let mut store = lock(&self.cache);
        let Caches { accepted, refused } = &mut *store;
        [accepted, refused].into_iter().find_map(|lru| {
            let hit = lru.get(key)?;
            if hit.until > now {
                Some(hit.verdict.clone())
            } else {
                lru.remove(key);
                None
            }
        })
    }

    async fn verify(&self, token: &str, resource: &str) -> Verdict {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(TokenError::invalid("the token is too long"));
        }
        // The resource is part of the key: one verifier may serve several resources.
        let key: Key = Sha256::new()
            .chain_update(resource.as_bytes())
            .chain_update([0])
            .chain_update(token.as_bytes())
            .finalize()
            .into();
        if let Some(verdict) = self.cached(&key) {
            return verdict;
        }
        let seat = {
            let mut flights = lock(&self.flights);
            let flight = Arc::clone(flights.entry(key).or_default());
            Seat {
                flights: &self.flights,
                key,
                flight: Some(flight),
            }
        };
        // One verification runs the call; the others wait for its verdict. If the one
        // running it is cancelled, a waiter runs it instead.
        seat.flight()
            .verdict
            .get_or_init(|| self.ask(token, resource, &key))
            .await
            .clone()
    }

    /// The call of a flight, unless the answer is cached by now (a flight that ended
    /// between this verification's look at the cache and its seat) or the rate is spent.
    async fn ask(&self, token: &str, resource: &str, key: &Key) -> Verdict {
        if let Some(verdict) = self.cached(key) {
            return verdict;
        }
        if !lock(&self.bucket).take(self.now()) {
            // Debug, not warn: the resource server already logs each refusal, and a flood
            // of tokens must not become a flood of log lines here too.
            tracing::debug!("the introspection rate is spent; a token cannot be verified now");
            return Err(TokenError::Unavailable(
                "the introspection rate is spent".to_owned(),
            ));
        }
        let answer = self.introspect(token).await?;
        let verdict = self.judge(answer, resource);
        let now = self.now();
        let (ttl, accepted) = match &verdict {
            Ok(_) => (self.ttl, true),
            Err(TokenError::Invalid(_)) => (self.negative_ttl, false),
            Err(_) => return verdict,
        };
        if ttl.is_zero() {
            return verdict;
        }
        let mut until = now.checked_add(ttl).unwrap_or(now);
        if let Ok(principal) = &verdict
            && let Some(exp) = principal.expires_at()
        {
            // `exp` is from the wire: an absurd one must not overflow the clock.
            let left = Duration::from_secs(exp.saturating_sub(unix_now()));
            if let Some(end) = now.checked_add(left) {
                until = until.min(end);
            }
        }
        let entry = Cached {
            verdict: verdict.clone(),
            until,
        };
        let mut store = lock(&self.cache);
        if accepted {
            store.accepted.insert(*key, entry);
        } else {
            store.refused.insert(*key, entry);
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

/// A map of at most `capacity` entries that drops its least recently used one to make
/// room. Each use stamps an entry with the next tick; `order` finds the oldest stamp, so
/// every operation is O(log n) with nothing but the standard library.
#[derive(Debug)]
struct Lru<V> {
    capacity: usize,
    tick: u64,
    entries: HashMap<Key, (u64, V)>,
    order: BTreeMap<u64, Key>,
}

impl<V> Lru<V> {
    fn new(capacity: usize) -> Self {
        Lru {
            capacity,
            tick: 0,
            entries: HashMap::new(),
            order: BTreeMap::new(),
        }
    }

    fn next_tick(&mut self) -> u64 {
        // One per use: 2^64 uses are out of reach.
        self.tick += 1;
        self.tick
    }

    /// The entry, now the most recently used.
    fn get(&mut self, key: &Key) -> Option<&V> {
        let tick = self.next_tick();
        let (stamp, value) = self.entries.get_mut(key)?;
        self.order.remove(stamp);
        *stamp = tick;
        self.order.insert(tick, *key);
        Some(value)
    }

    fn insert(&mut self, key: Key, value: V) {
        let tick = self.next_tick();
        if let Some((old, _)) = self.entries.insert(key, (tick, value)) {
            self.order.remove(&old);
        } else if self.entries.len() > self.capacity
            && let Some((_, oldest)) = self.order.pop_first()
        {
            self.entries.remove(&oldest);
        }
        self.order.insert(tick, key);
    }

    fn remove(&mut self, key: &Key) {
        if let Some((stamp, _)) = self.entries.remove(key) {
            self.order.remove(&stamp);
        }
    }

    #[cfg(test)]
    fn contains(&self, key: &Key) -> bool {
        self.entries.contains_key(key)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }
}

/// A token bucket: `capacity` calls at once, one more every `interval`.
#[derive(Debug)]
struct Bucket {
    capacity: u32,
    tokens: u32,
    interval: Duration,
    /// When the tokens were last counted; the time since, less than one interval unless
    /// the bucket is full, is not yet a token.
    counted: Instant,
}

impl Bucket {
    fn new(calls: u32, per: Duration, now: Instant) -> Self {
        Bucket {
            capacity: calls,
            tokens: calls,
            interval: (per / calls).max(Duration::from_nanos(1)),
            counted: now,
        }
    }

    /// Takes one call's token, if there is one.
    fn take(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.counted);
        let earned = elapsed.as_nanos() / self.interval.as_nanos();
        if earned > 0 {
            let earned = u32::try_from(earned).unwrap_or(u32::MAX);
            self.tokens = self.tokens.saturating_add(earned).min(self.capacity);
            self.counted = if self.tokens == self.capacity {
                now
            } else {
                // `earned` intervals fit in `elapsed`, so this neither overflows nor
                // passes `now`.
                self.counted + self.interval * earned
            };
        }
        if self.tokens == 0 {
            return false;
        }
        self.tokens -= 1;
        true
    }
}

#[cfg(test)]
mod tests;
