//! DPoP, Demonstrating Proof of Possession (RFC 9449), as the MCP DPoP extension profiles
//! it (SEP-1932, <https://github.com/modelcontextprotocol/ext-auth/blob/main/specification/draft/dpop-extension.mdx>):
//! an ephemeral ES256 key pair per [`OAuthClient`](super::OAuthClient), a fresh proof JWT
//! for every request (token requests and MCP requests alike), and the nonces the servers
//! hand out (RFC 9449 §8 and §9).
//!
//! A proof (RFC 9449 §4.2) is a JWT of type `dpop+jwt`, signed with the private key, whose
//! header carries the public key (`jwk`) and whose claims are a unique `jti`, the request's
//! method (`htm`) and URL without query and fragment (`htu`), `iat`, the server's `nonce`
//! when it asked for one, and, for a request carrying an access token, `ath`, the
//! base64url SHA-256 of the token (§4.2, §7.1). A proof is made for one request and never
//! reused: every call of [`Dpop::proof`] signs a new one.
//!
//! The key lives in memory only and dies with the client: a DPoP-bound token cannot be
//! used by another process, so bound tokens found in a credential store are not used.

use std::sync::{Mutex, PoisonError};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::{HeaderMap, HeaderValue, Method, Uri};
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use sha2::{Digest as _, Sha256};

use super::fetch::origin;
use super::pkce::random_token;
use super::token::now;
use crate::AuthErrorKind;

/// The response header that carries a server's nonce (RFC 9449 §8.1, §9).
pub(crate) const DPOP_NONCE: &str = "dpop-nonce";
/// The request header that carries the proof (RFC 9449 §4.1).
pub(crate) const DPOP: &str = "dpop";
/// The one JWS algorithm this client signs proofs with.
pub(crate) const ALGORITHM: &str = "ES256";
/// The longest nonce kept; a longer one is ignored (RFC 9449 gives no bound; a nonce is an
/// opaque token the server chose, and a proof carrying a huge one would be refused anyway).
const MAX_NONCE: usize = 1024;
/// How many servers' nonces are kept (an authorization server and a resource server are
/// two; the oldest is forgotten beyond this).
const MAX_NONCES: usize = 16;

/// A DPoP key and the nonces the servers asked for: see the module docs.
pub(crate) struct Dpop {
    key: EncodingKey,
    jwk: Jwk,
    /// `(role, origin, nonce)`, oldest first.
    nonces: Mutex<Vec<(Role, Origin, String)>>,
}

type Origin = (String, String, u16);

/// Which server a nonce comes from: an authorization server's token endpoint (RFC 9449
/// §8) and a resource server (§9) keep their own, even on one origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Authorization,
    Resource,
}

impl std::fmt::Debug for Dpop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dpop")
            .field("algorithm", &ALGORITHM)
            .finish_non_exhaustive()
    }
}

impl Dpop {
    /// A new ephemeral P-256 key pair.
    pub(crate) fn generate() -> Result<Dpop, AuthErrorKind> {
        use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
        let rng = ring::rand::SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| AuthErrorKind::Dpop("cannot generate a P-256 key pair".to_owned()))?;
        let key = EncodingKey::from_ec_der(pkcs8.as_ref());
        let jwk = Jwk::from_encoding_key(&key, Algorithm::ES256).map_err(AuthErrorKind::jwt)?;
        Ok(Dpop {
            key,
            jwk,
            nonces: Mutex::new(Vec::new()),
        })
    }

    /// The public key, as it appears in every proof's header.
    #[cfg(test)]
    pub(crate) fn jwk(&self) -> &Jwk {
        &self.jwk
    }

    /// A fresh proof for `method` on `url`, with `ath` for `access_token` and the nonce
    /// last received from `url`'s server in that `role`, if any.
    pub(crate) fn proof(
        &self,
        role: Role,
        method: &Method,
        url: &Uri,
        access_token: Option<&str>,
    ) -> Result<HeaderValue, AuthErrorKind> {
        let htu = htu(url).ok_or_else(|| {
            AuthErrorKind::Dpop(format!("`{url}` is not an absolute URL to bind a proof to"))
        })?;
        let mut claims = serde_json::json!({
            "jti": random_token()?,
            "htm": method.as_str(),
            "htu": htu,
            "iat": now(),
        });
        if let Some(token) = access_token {
            claims["ath"] = access_token_hash(token).into();
        }
        if let Some(nonce) = self.nonce(role, url) {
            claims["nonce"] = nonce.into();
        }
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".to_owned());
        header.jwk = Some(self.jwk.clone());
        let jwt = jsonwebtoken::encode(&header, &claims, &self.key).map_err(AuthErrorKind::jwt)?;
        HeaderValue::from_str(&jwt).map_err(|e| AuthErrorKind::Dpop(e.to_string()))
    }

    /// The nonce last received from `url`'s server in `role`.
    pub(crate) fn nonce(&self, role: Role, url: &Uri) -> Option<String> {
        let origin = origin(url)?;
        self.nonces
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|(r, o, _)| *r == role && *o == origin)
            .map(|(_, _, n)| n.clone())
    }

    /// Keeps the `DPoP-Nonce` of a response from `url`'s server in `role`, if it carries a
    /// valid one (RFC 9449 §8.1: `1*NQCHAR`), for the proofs sent to that server from now
    /// on. Returns whether it did.
    pub(crate) fn remember_nonce(&self, role: Role, url: &Uri, headers: &HeaderMap) -> bool {
        let Some(nonce) = headers
            .get(DPOP_NONCE)
            .and_then(|v| v.to_str().ok())
            .filter(|n| valid_nonce(n))
        else {
            return false;
        };
        let Some(origin) = origin(url) else {
            return false;
        };
        let mut nonces = self.nonces.lock().unwrap_or_else(PoisonError::into_inner);
        nonces.retain(|(r, o, _)| !(*r == role && *o == origin));
        if nonces.len() >= MAX_NONCES {
            nonces.remove(0);
        }
        nonces.push((role, origin, nonce.to_owned()));
        true
    }
}

/// `1*NQCHAR` (RFC 9449 §8.1: `%x21 / %x23-5B / %x5D-7E`), at most [`MAX_NONCE`] bytes.
fn valid_nonce(nonce: &str) -> bool {
    !nonce.is_empty()
        && nonce.len() <= MAX_NONCE
        && nonce
            .bytes()
            .all(|b| matches!(b, 0x21 | 0x23..=0x5b | 0x5d..=0x7e))
}

/// The `htu` of a request to `url`: its scheme, authority and path, without query and
/// fragment (RFC 9449 §4.2).
pub(crate) fn htu(url: &Uri) -> Option<String> {
    Some(format!(
        "{}://{}{}",
        url.scheme_str()?,
        url.authority()?,
        url.path()
    ))
}

/// `ath`: the base64url SHA-256 of the access token's ASCII bytes (RFC 9449 §4.2).
pub(crate) fn access_token_hash(token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{DecodingKey, Validation};
    use serde_json::Value;

    fn decode(proof: &HeaderValue, jwk: &Jwk) -> (jsonwebtoken::Header, Value) {
        let text = proof.to_str().unwrap();
        let header = jsonwebtoken::decode_header(text).unwrap();
        let key = DecodingKey::from_jwk(jwk).unwrap();
        let mut validation = Validation::new(Algorithm::ES256);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        let claims = jsonwebtoken::decode::<Value>(text, &key, &validation)
            .unwrap()
            .claims;
        (header, claims)
    }

    #[test]
    fn a_proof_is_signed_by_the_key_in_its_header_and_bound_to_the_request() {
        let dpop = Dpop::generate().unwrap();
        let url: Uri = "https://mcp.example.com/mcp?x=1#f".parse().unwrap();
        let proof = dpop
            .proof(Role::Resource, &Method::POST, &url, Some("tok"))
            .unwrap();
        let (header, claims) = decode(&proof, dpop.jwk());
        assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
        let jwk = serde_json::to_value(header.jwk.unwrap()).unwrap();
        assert_eq!(jwk["kty"], "EC");
        assert_eq!(jwk["crv"], "P-256");
        assert!(
            jwk.get("d").is_none(),
            "no private key in the header: {jwk}"
        );
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://mcp.example.com/mcp");
        // RFC 9449 §7.1's example: ath of this token.
        assert_eq!(
            access_token_hash("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"),
            "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"
        );
        assert_eq!(claims["ath"], access_token_hash("tok"));
        assert!(claims.get("nonce").is_none());
        assert!(claims["iat"].as_u64().unwrap().abs_diff(now()) <= 1);

        let again = dpop
            .proof(Role::Resource, &Method::POST, &url, Some("tok"))
            .unwrap();
        assert_ne!(again, proof);
        assert_ne!(decode(&again, dpop.jwk()).1["jti"], claims["jti"]);
        let token_request = dpop
            .proof(
                Role::Authorization,
                &Method::POST,
                &"https://as.example/token".parse().unwrap(),
                None,
            )
            .unwrap();
        let (_, claims) = decode(&token_request, dpop.jwk());
        assert!(claims.get("ath").is_none());
        // Two clients, two keys.
        assert_ne!(
            serde_json::to_value(Dpop::generate().unwrap().jwk()).unwrap(),
            serde_json::to_value(dpop.jwk()).unwrap()
        );
    }

    #[test]
    fn nonces_are_kept_per_server_and_checked() {
        use Role::{Authorization, Resource};
        let dpop = Dpop::generate().unwrap();
        let rs: Uri = "https://mcp.example.com/mcp".parse().unwrap();
        let as_: Uri = "https://as.example.com/token".parse().unwrap();
        let with = |nonce: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(DPOP_NONCE, HeaderValue::from_str(nonce).unwrap());
            headers
        };
        assert!(dpop.remember_nonce(Resource, &rs, &with("n-1")));
        assert_eq!(dpop.nonce(Resource, &rs).as_deref(), Some("n-1"));
        assert_eq!(dpop.nonce(Resource, &as_), None);
        // The same origin as an authorization server is another server.
        assert_eq!(dpop.nonce(Authorization, &rs), None);
        let proof = dpop.proof(Resource, &Method::GET, &rs, None).unwrap();
        assert_eq!(decode(&proof, dpop.jwk()).1["nonce"], "n-1");
        let proof = dpop.proof(Authorization, &Method::GET, &rs, None).unwrap();
        assert!(decode(&proof, dpop.jwk()).1.get("nonce").is_none());
        // Another path on the same origin is the same server.
        let other: Uri = "https://mcp.example.com/other".parse().unwrap();
        assert_eq!(dpop.nonce(Resource, &other).as_deref(), Some("n-1"));
        assert!(dpop.remember_nonce(Resource, &rs, &with("n-2")));
        assert_eq!(dpop.nonce(Resource, &rs).as_deref(), Some("n-2"));
        // Not NQCHAR (a quote, a space), empty, or too long: ignored.
        for bad in ["a\"b", "a b", "", &"x".repeat(MAX_NONCE + 1)] {
            assert!(!dpop.remember_nonce(Resource, &rs, &with(bad)), "{bad:?}");
        }
        assert_eq!(dpop.nonce(Resource, &rs).as_deref(), Some("n-2"));
        assert!(!dpop.remember_nonce(Resource, &rs, &HeaderMap::new()));
        // Bounded: the oldest server is forgotten.
        for i in 0..MAX_NONCES {
            let url: Uri = format!("https://s{i}.example/").parse().unwrap();
            assert!(dpop.remember_nonce(Authorization, &url, &with("n")));
        }
        assert_eq!(dpop.nonce(Resource, &rs), None);
        assert_eq!(dpop.nonces.lock().unwrap().len(), MAX_NONCES);
    }
}
