//! PKCE (RFC 7636) with the `S256` method, and the random values of a flow (`state`,
//! `jti`): <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/security-considerations>,
//! Authorization Code Protection.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest as _, Sha256};

use crate::{AuthErrorKind, Error};

/// A PKCE code verifier and its `S256` challenge.
#[derive(Clone)]
pub struct Pkce {
    verifier: String,
    challenge: String,
}

// The verifier is a secret until the token request.
mcp_types::debug_fields!(Pkce { challenge });

impl Pkce {
    /// A fresh verifier: 32 random bytes, base64url without padding (43 characters of the
    /// unreserved set, as RFC 7636 §4.1 recommends); [`Error::Auth`] with
    /// [`AuthErrorKind::Random`] when the operating system's random source fails.
    pub fn generate() -> Result<Pkce, Error> {
        Ok(Pkce::from_verifier(random_token()?))
    }

    /// The pair for a given verifier (the test vector of RFC 7636 appendix B, say).
    pub fn from_verifier(verifier: impl Into<String>) -> Pkce {
        let verifier = verifier.into();
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        Pkce {
            verifier,
            challenge,
        }
    }

    /// The `code_verifier`, sent in the token request.
    pub fn verifier(&self) -> &str {
        &self.verifier
    }

    /// The `code_challenge` (`BASE64URL(SHA256(verifier))`), sent in the authorization
    /// request with `code_challenge_method=S256`.
    pub fn challenge(&self) -> &str {
        &self.challenge
    }
}

/// 32 bytes from the operating system's generator, base64url without padding; an error,
/// never a weaker value, when the generator fails.
pub(crate) fn random_token() -> Result<String, AuthErrorKind> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|_| AuthErrorKind::Random)?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_7636_appendix_b() {
        let pkce = Pkce::from_verifier("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
        assert_eq!(
            pkce.challenge(),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        assert_eq!(
            pkce.verifier(),
            "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        );
    }

    #[test]
    fn generated_verifiers_are_fresh_and_well_formed() {
        let (a, b) = (Pkce::generate().unwrap(), Pkce::generate().unwrap());
        assert_ne!(a.verifier(), b.verifier());
        for pkce in [&a, &b] {
            // RFC 7636 §4.1: 43 to 128 characters of [A-Za-z0-9-._~].
            assert_eq!(pkce.verifier().len(), 43);
            assert!(
                pkce.verifier()
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || b"-._~".contains(&c))
            );
            assert_eq!(
                pkce.challenge(),
                Pkce::from_verifier(pkce.verifier()).challenge()
            );
        }
        assert!(!format!("{a:?}").contains(a.verifier()));
    }
}
