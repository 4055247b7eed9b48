//! JWT access tokens (RFC 9068) verified against the authorization server's JWKS, with the
//! `jsonwebtoken` crate doing the JOSE parsing and the signature checks.

use std::str::FromStr as _;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, Validation};
use serde_json::{Map, Value};

use super::fetch::Endpoint;
use super::{TokenError, TokenPrincipal, TokenVerifier, VerifyFuture, config_error};

/// The largest token looked at; longer ones are refused unread.
const MAX_TOKEN_BYTES: usize = 16 << 10;
/// The largest JWKS document read.
const MAX_JWKS_BYTES: usize = 512 << 10;
/// The most keys kept from one JWKS document.
const MAX_KEYS: usize = 64;

/// The algorithms accepted unless the builder narrows them.
const DEFAULT_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Verifies JWT access tokens with the keys the authorization server publishes.
///
/// The checks, in order: the token's size; a readable header whose `alg` is on the
/// allow-list (asymmetric algorithms only, so `none` and HMAC never verify, and a token
/// signed with HS256 "with the RSA public key as the secret" is refused before any key is
/// looked at); the `typ` (RFC 9068 §4, RFC 8725 §3.11); a key of the JWKS with that `kid`
/// whose type, curve and `alg` fit the algorithm; the signature; `exp` (required) and
/// `nbf` with a small leeway; `iss` equal to the configured issuer; an `aud` equal to this
/// resource's canonical URI (string equality: `https://mcp.example.com.evil` and
/// `https://mcp.example.com/other` are other resources); and not an ID token.
///
/// The key set is fetched on first use and cached. A token whose `kid` the cache does not
/// know (the authorization server rotated its keys), or a cache older than
/// [`max_key_age`](JwtVerifierBuilder::max_key_age), fetches it again, at most once per
/// [`min_refresh_interval`](JwtVerifierBuilder::min_refresh_interval) whatever the tokens
/// ask: a client presenting made-up key ids cannot make the server hammer the JWKS.
/// Concurrent misses share one fetch.
///
/// ```
/// use std::time::Duration;
/// use mcp_server::auth::JwtVerifier;
///
/// let verifier = JwtVerifier::builder("https://auth.example.com", "https://auth.example.com/jwks")
///     .algorithms(["RS256", "ES256"])
///     .leeway(Duration::from_secs(30))
///     .require_access_token_type(true)
///     .build()
///     .unwrap();
/// # let _ = verifier;
/// assert!(JwtVerifier::builder("https://auth.example.com", "https://auth.example.com/jwks")
///     .algorithms(["HS256"])
///     .build()
///     .is_err());
/// ```
#[derive(Debug, Clone)]
pub struct JwtVerifier {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    issuer: String,
    audiences: Vec<String>,
    algorithms: Vec<Algorithm>,
    leeway: u64,
    require_typ: bool,
    jwks: Jwks,
}

/// Builds a [`JwtVerifier`].
#[derive(Debug)]
pub struct JwtVerifierBuilder {
    issuer: String,
    jwks_uri: String,
    audiences: Vec<String>,
    algorithms: Option<Vec<String>>,
    leeway: Duration,
    require_typ: bool,
    min_refresh: Duration,
    max_age: Duration,
    timeout: Duration,
}

impl JwtVerifier {
    /// Tokens issued by `issuer` (compared exactly with `iss`), signed with keys from
    /// `jwks_uri` (`https`; plain `http` only to a loopback host).
    pub fn builder(issuer: impl Into<String>, jwks_uri: impl Into<String>) -> JwtVerifierBuilder {
        JwtVerifierBuilder {
            issuer: issuer.into(),
            jwks_uri: jwks_uri.into(),
            audiences: Vec::new(),
            algorithms: None,
            leeway: Duration::from_secs(30),
            require_typ: false,
            min_refresh: Duration::from_secs(30),
            max_age: Duration::from_hours(1),
            timeout: Duration::from_secs(10),
        }
    }
}

impl JwtVerifierBuilder {
    /// The signature algorithms accepted (default: RS256, RS384, RS512, PS256, PS384,
    /// PS512, ES256, ES384, EdDSA). Symmetric (`HS*`) algorithms and `none` cannot be
    /// chosen: a resource server verifies with public keys only.
    #[must_use]
    pub fn algorithms<S: Into<String>>(mut self, algorithms: impl IntoIterator<Item = S>) -> Self {
        self.algorithms = Some(algorithms.into_iter().map(Into::into).collect());
        self
    }

    /// The clock skew allowed for `exp` and `nbf` (default 30 s).
    #[must_use]
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Accepts a token only with `typ: at+jwt` (RFC 9068 §2.1) instead of also `JWT` or no
    /// `typ` (default off: many authorization servers still type access tokens `JWT`).
    /// Any other `typ` is always refused.
    #[must_use]
    pub fn require_access_token_type(mut self, require: bool) -> Self {
        self.require_typ = require;
        self
    }

    /// Also accepts tokens whose audience is `audience` (for an authorization server that
    /// names resources by another identifier). The resource's canonical URI is always
    /// accepted.
    #[must_use]
    pub fn accept_audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// The least time between two fetches of the JWKS (default 30 s), however many tokens
    /// name unknown keys.
    #[must_use]
    pub fn min_refresh_interval(mut self, interval: Duration) -> Self {
        self.min_refresh = interval;
        self
    }

    /// How long a fetched key set is used before it is fetched again (default 1 h).
    #[must_use]
    pub fn max_key_age(mut self, age: Duration) -> Self {
        self.max_age = age;
        self
    }

    /// How long a JWKS fetch may take (default 10 s).
    #[must_use]
    pub fn fetch_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The verifier, or why this configuration cannot work.
    pub fn build(self) -> Result<JwtVerifier, crate::Error> {
        install_crypto_provider();
        if self.issuer.is_empty() {
            return Err(config_error("the JWT issuer is empty"));
        }
        let algorithms = match self.algorithms {
            None => DEFAULT_ALGORITHMS.to_vec(),
            Some(names) => {
                let mut algorithms = Vec::new();
                for name in names {
                    let algorithm = Algorithm::from_str(&name)
                        .map_err(|_| config_error(format!("unknown JWT algorithm {name:?}")))?;
                    if algorithm.family() == AlgorithmFamily::Hmac {
                        return Err(config_error(format!(
                            "{name} is symmetric: a resource server verifies with the \
                             authorization server's public keys only"
                        )));
                    }
                    algorithms.push(algorithm);
                }
                if algorithms.is_empty() {
                    return Err(config_error("no JWT algorithm is allowed"));
                }
                algorithms
            }
        };
        let endpoint = Endpoint::new(&self.jwks_uri, "the JWKS URI", MAX_JWKS_BYTES, self.timeout)?;
        Ok(JwtVerifier {
            inner: Arc::new(Inner {
                issuer: self.issuer,
                audiences: self.audiences,
                algorithms,
                leeway: self.leeway.as_secs(),
                require_typ: self.require_typ,
                jwks: Jwks {
                    endpoint,
                    state: Mutex::new(KeyState::default()),
                    refresh: tokio::sync::Mutex::new(()),
                    min_refresh: self.min_refresh,
                    max_age: self.max_age,
                },
            }),
        })
    }
}

/// `jsonwebtoken` picks its cryptography from its features; when another crate of the
/// build turned on its other backend too, none is the default, so ours is installed.
fn install_crypto_provider() {
    if jsonwebtoken::crypto::CryptoProvider::try_get_default().is_none() {
        let _ = jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER.install_default();
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str, resource: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.inner.verify(token, resource))
    }
}

impl Inner {
    async fn verify(&self, token: &str, resource: &str) -> Result<TokenPrincipal, TokenError> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(TokenError::invalid("the token is too long"));
        }
        // `none` is not an algorithm `jsonwebtoken` can name, so a header with it fails
        // here.
        let header = jsonwebtoken::decode_header(token).map_err(|_| {
            TokenError::invalid("the token is not a JWT signed with a known algorithm")
        })?;
        if !self.algorithms.contains(&header.alg) {
            return Err(TokenError::invalid(format!(
                "the algorithm {:?} is not accepted",
                header.alg
            )));
        }
        self.check_type(header.typ.as_deref())?;
        let key = self.jwks.key(header.kid.as_deref(), header.alg).await?;

        let mut validation = Validation::new(header.alg);
        validation.leeway = self.leeway;
        validation.validate_exp = true;
        validation.validate_nbf = true;
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.set_issuer(&[&self.issuer]);
        let mut audiences = vec![resource];
        audiences.extend(self.audiences.iter().map(String::as_str));
        validation.set_audience(&audiences);
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation)
            .map_err(|e| TokenError::Invalid(describe(e.kind()).to_owned()))?;
        refuse_id_token(&data.claims)?;
        TokenPrincipal::from_claims(data.claims)
    }

    /// RFC 9068 §4: `at+jwt`; `JWT` and no `typ` are tolerated unless required; anything
    /// else (an ID token's or a logout token's type) is refused.
    fn check_type(&self, typ: Option<&str>) -> Result<(), TokenError> {
        let typ = typ.map(str::to_ascii_lowercase);
        match typ.as_deref() {
            Some("at+jwt" | "application/at+jwt") => Ok(()),
            None | Some("jwt" | "application/jwt") if !self.require_typ => Ok(()),
            Some(other) => Err(TokenError::invalid(format!(
                "a token of type {other} is not an access token"
            ))),
            None => Err(TokenError::invalid("the token has no access token type")),
        }
    }
}

/// An OpenID Connect ID token proves a login to a client; it is not an access token
/// (RFC 9068 §4, <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/security-considerations>). Its
/// audience is the client, so the audience check refuses most; this refuses one that an
/// authorization server issued for the resource: it has the ID-token-only claims `nonce`,
/// `at_hash` or `c_hash` and no scope, or says so in `token_use`.
fn refuse_id_token(claims: &Map<String, Value>) -> Result<(), TokenError> {
    let id_only = ["nonce", "at_hash", "c_hash"]
        .iter()
        .any(|c| claims.contains_key(*c));
    let scoped = claims.contains_key("scope") || claims.contains_key("scp");
    let says_id = claims.get("token_use").and_then(Value::as_str) == Some("id");
    if (id_only && !scoped) || says_id {
        return Err(TokenError::invalid("an ID token is not an access token"));
    }
    Ok(())
}

/// Why `jsonwebtoken` refused a token, for the challenge's `error_description`.
fn describe(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::ExpiredSignature => "the token has expired",
        ErrorKind::ImmatureSignature => "the token is not valid yet",
        ErrorKind::InvalidAudience => "the token was not issued for this resource",
        ErrorKind::InvalidIssuer => "the token was not issued by the expected authorization server",
        ErrorKind::InvalidSignature => "the token's signature does not verify",
        ErrorKind::InvalidAlgorithm => "the token's algorithm does not fit its key",
        ErrorKind::MissingRequiredClaim(_) => "the token lacks a required claim (exp, iss, aud)",
        _ => "the token is malformed",
    }
}

/// The authorization server's key set, cached.
#[derive(Debug)]
struct Jwks {
    endpoint: Endpoint,
    state: Mutex<KeyState>,
    /// Held while fetching, so concurrent misses share one fetch.
    refresh: tokio::sync::Mutex<()>,
    min_refresh: Duration,
    max_age: Duration,
}

#[derive(Debug, Default)]
struct KeyState {
    keys: Arc<[Key]>,
    fetched: Option<Instant>,
    attempted: Option<Instant>,
    failure: Option<String>,
}

/// One verification key of the set.
#[derive(Debug)]
struct Key {
    kid: Option<String>,
    alg: Option<Algorithm>,
    family: AlgorithmFamily,
    curve: Option<EllipticCurve>,
    decoding: DecodingKey,
}

impl Key {
    /// Whether this key may verify a signature made with `alg`: same family, the curve
    /// the algorithm names, and the key's own `alg` if it states one.
    fn fits(&self, alg: Algorithm) -> bool {
        let curve = match alg {
            Algorithm::ES256 => Some(EllipticCurve::P256),
            Algorithm::ES384 => Some(EllipticCurve::P384),
            Algorithm::EdDSA => Some(EllipticCurve::Ed25519),
            _ => None,
        };
        self.family == alg.family()
            && self.alg.is_none_or(|own| own == alg)
            && (curve.is_none() || self.curve == curve)
    }

    /// A key of a JWKS document, if it is a public signature key this verifier can use.
    fn from_jwk(jwk: &Jwk) -> Option<Key> {
        if matches!(&jwk.common.public_key_use, Some(u) if *u != PublicKeyUse::Signature) {
            return None;
        }
        let (family, curve) = match &jwk.algorithm {
            AlgorithmParameters::RSA(_) => (AlgorithmFamily::Rsa, None),
            AlgorithmParameters::EllipticCurve(ec) => (AlgorithmFamily::Ec, Some(ec.curve.clone())),
            AlgorithmParameters::OctetKeyPair(okp) => {
                (AlgorithmFamily::Ed, Some(okp.curve.clone()))
            }
            // A symmetric key published in a key set is never a verification key.
            _ => return None,
        };
        let alg = match jwk.common.key_algorithm {
            None => None,
            Some(named) => {
                let name = serde_json::to_value(named).ok()?;
                Some(Algorithm::from_str(name.as_str()?).ok()?)
            }
        };
        Some(Key {
            kid: jwk.common.key_id.clone(),
            alg,
            family,
            curve,
            decoding: DecodingKey::from_jwk(jwk).ok()?,
        })
    }
}

/// The key for `kid` and `alg`: the one with that `kid`, or without a `kid`, the only key
/// that fits.
fn find(keys: &[Key], kid: Option<&str>, alg: Algorithm) -> Option<DecodingKey> {
    let mut fitting = keys.iter().filter(|k| k.fits(alg));
    let key = if let Some(kid) = kid {
        fitting.find(|k| k.kid.as_deref() == Some(kid))?
    } else {
        let first = fitting.next()?;
        if fitting.next().is_some() {
            return None;
        }
        first
    };
    Some(key.decoding.clone())
}

fn lock(state: &Mutex<KeyState>) -> std::sync::MutexGuard<'_, KeyState> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Jwks {
    fn snapshot(&self) -> (Arc<[Key]>, bool) {
        let current = lock(&self.state);
        let stale = current.fetched.is_none_or(|t| t.elapsed() > self.max_age);
        (Arc::clone(&current.keys), stale)
    }

    async fn key(&self, kid: Option<&str>, alg: Algorithm) -> Result<DecodingKey, TokenError> {
        let (keys, stale) = self.snapshot();
        if !stale && let Some(key) = find(&keys, kid, alg) {
            return Ok(key);
        }
        if let Err(reason) = self.refresh().await {
            if keys.is_empty() {
                return Err(TokenError::Unavailable(reason));
            }
            tracing::warn!(%reason, "cannot refresh the JWKS; using the keys fetched before");
        }
        let (keys, _) = self.snapshot();
        find(&keys, kid, alg)
            .ok_or_else(|| TokenError::invalid("no key of the authorization server fits the token"))
    }

    /// Fetches the key set, unless it was tried less than `min_refresh` ago (then the
    /// outcome of that try stands).
    async fn refresh(&self) -> Result<(), String> {
        let _one_at_a_time = self.refresh.lock().await;
        {
            let mut state = lock(&self.state);
            if let Some(at) = state.attempted
                && at.elapsed() < self.min_refresh
            {
                return match &state.failure {
                    Some(failure) => Err(failure.clone()),
                    None => Ok(()),
                };
            }
            state.attempted = Some(Instant::now());
        }
        let fetched = self
            .endpoint
            .get_json()
            .await
            .and_then(|document| parse_keys(&document));
        let mut state = lock(&self.state);
        match fetched {
            Ok(keys) => {
                tracing::debug!(keys = keys.len(), "fetched the JWKS");
                state.keys = keys.into();
                state.fetched = Some(Instant::now());
                state.failure = None;
                Ok(())
            }
            Err(reason) => {
                let reason = format!("cannot fetch the JWKS: {reason}");
                state.failure = Some(reason.clone());
                Err(reason)
            }
        }
    }
}

/// The usable keys of a JWKS document (RFC 7517 §5); keys of other types or uses are
/// skipped, not fatal.
fn parse_keys(document: &Value) -> Result<Vec<Key>, String> {
    let keys = document
        .get("keys")
        .and_then(Value::as_array)
        .ok_or("the JWKS has no `keys` array")?;
    Ok(keys
        .iter()
        .filter_map(|key| serde_json::from_value::<Jwk>(key.clone()).ok())
        .filter_map(|jwk| Key::from_jwk(&jwk))
        .take(MAX_KEYS)
        .collect())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Algorithm, find, parse_keys, refuse_id_token};

    #[test]
    fn keys_fit_their_algorithms() {
        let document = json!({"keys": [
            {"kty": "RSA", "kid": "r1", "use": "sig", "alg": "RS256", "n": "sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw", "e": "AQAB"},
            {"kty": "RSA", "kid": "enc", "use": "enc", "n": "sXch", "e": "AQAB"},
            {"kty": "oct", "kid": "secret", "k": "c2VjcmV0"},
            {"kty": "EC", "kid": "e1", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
            {"kty": "weird"}
        ]});
        let keys = parse_keys(&document).unwrap();
        let kids: Vec<_> = keys.iter().map(|k| k.kid.clone().unwrap()).collect();
        assert_eq!(kids, ["r1", "e1"]);
        assert!(find(&keys, Some("r1"), Algorithm::RS256).is_some());
        // The key says RS256: not for PS256, and an RSA key is never an HMAC secret.
        assert!(find(&keys, Some("r1"), Algorithm::PS256).is_none());
        assert!(find(&keys, Some("r1"), Algorithm::HS256).is_none());
        assert!(find(&keys, Some("e1"), Algorithm::ES256).is_some());
        assert!(find(&keys, Some("e1"), Algorithm::ES384).is_none());
        assert!(find(&keys, Some("secret"), Algorithm::HS256).is_none());
        // Without a kid, only a single fitting key is used.
        assert!(find(&keys, None, Algorithm::ES256).is_some());
        assert!(find(&keys, Some("nope"), Algorithm::ES256).is_none());
        assert!(parse_keys(&json!({"nokeys": []})).is_err());
    }

    #[test]
    fn id_tokens() {
        let object = |v: serde_json::Value| v.as_object().unwrap().clone();
        assert!(refuse_id_token(&object(json!({"nonce": "n", "sub": "u"}))).is_err());
        assert!(refuse_id_token(&object(json!({"at_hash": "h", "sub": "u"}))).is_err());
        assert!(refuse_id_token(&object(json!({"token_use": "id", "scope": "a"}))).is_err());
        assert!(refuse_id_token(&object(json!({"nonce": "n", "scope": "a"}))).is_ok());
        assert!(refuse_id_token(&object(json!({"sub": "u", "scope": "a"}))).is_ok());
    }
}
