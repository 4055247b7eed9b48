//! The principal a verified access token stands for: what handlers see of it.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::TokenError;
use super::scopes::Rules;

/// Who a verified access token stands for: its issuer, subject, client and scopes, and all
/// its claims (a JWT's payload or an introspection response). It never holds the token.
///
/// Its [`id`](mcp_jsonrpc::Principal::id), which sealed `requestState` and legacy sessions
/// are bound to, is the issuer and the subject (or, for a token with no subject, such as a
/// client-credentials token of some servers, the client): the same user through two
/// clients is one principal.
///
/// ```
/// use mcp_jsonrpc::Principal;
/// use mcp_server::auth::TokenPrincipal;
///
/// let claims = serde_json::json!({
///     "iss": "https://auth.example.com",
///     "sub": "alice",
///     "client_id": "desktop-app",
///     "scope": "files:read files:write",
/// });
/// let principal = TokenPrincipal::from_claims(claims.as_object().unwrap().clone()).unwrap();
/// assert_eq!(principal.subject(), Some("alice"));
/// assert!(principal.has_scope("files:write"));
/// assert_eq!(principal.id(), r#"["https://auth.example.com","alice",null]"#);
/// ```
#[derive(Clone)]
pub struct TokenPrincipal {
    id: String,
    scopes: Vec<String>,
    claims: Map<String, Value>,
    /// The rules of the resource server that authenticated it, which the server core
    /// applies to the target it dispatches ([`mcp_jsonrpc::Principal::permits`]); none for a
    /// principal made otherwise, which no rule limits.
    rules: Option<Arc<Rules>>,
}

impl std::fmt::Debug for TokenPrincipal {
    /// Claim values may be personal data (an email): only their names are shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenPrincipal")
            .field("id", &self.id)
            .field("scopes", &self.scopes)
            .field("claims", &self.claims.keys().collect::<Vec<_>>())
            .field("bound", &self.rules.is_some())
            .finish()
    }
}

impl TokenPrincipal {
    /// The principal of a verified token's claims, with the standard names of RFC 9068 and
    /// RFC 7662: `iss`, `sub`, `client_id`, `exp`, and the scopes in `scope` (a
    /// space-separated string) or `scp` (an array or a string). A token that names neither
    /// a subject nor a client is refused: nothing could identify who holds it.
    pub fn from_claims(claims: Map<String, Value>) -> Result<Self, TokenError> {
        let text = |name: &str| claims.get(name).and_then(Value::as_str);
        let subject = text("sub").filter(|s| !s.is_empty());
        let client = text("client_id").filter(|s| !s.is_empty());
        if subject.is_none() && client.is_none() {
            return Err(TokenError::invalid(
                "the token names neither a subject nor a client",
            ));
        }
        // The client only identifies a principal that has no subject.
        let id = serde_json::to_string(&(
            text("iss"),
            subject,
            if subject.is_none() { client } else { None },
        ))
        .unwrap_or_default();
        let mut scopes: Vec<String> = Vec::new();
        for name in ["scope", "scp"] {
            match claims.get(name) {
                Some(Value::String(list)) => {
                    scopes.extend(list.split_ascii_whitespace().map(str::to_owned));
                }
                Some(Value::Array(items)) => {
                    scopes.extend(items.iter().filter_map(Value::as_str).map(str::to_owned));
                }
                _ => {}
            }
        }
        scopes.sort();
        scopes.dedup();
        Ok(TokenPrincipal {
            id,
            scopes,
            claims,
            rules: None,
        })
    }

    /// The same principal, held to a resource server's rules.
    pub(super) fn bound_to(mut self, rules: Arc<Rules>) -> Self {
        self.rules = Some(rules);
        self
    }

    fn text(&self, name: &str) -> Option<&str> {
        self.claims.get(name).and_then(Value::as_str)
    }

    /// The authorization server that issued the token (`iss`).
    pub fn issuer(&self) -> Option<&str> {
        self.text("iss")
    }

    /// The resource owner (`sub`); for a client-credentials token, often the client.
    pub fn subject(&self) -> Option<&str> {
        self.text("sub")
    }

    /// The client the token was issued to (`client_id`).
    pub fn client_id(&self) -> Option<&str> {
        self.text("client_id")
    }

    /// The scopes granted, sorted, without duplicates.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// Whether `scope` was granted as such (the resource server also applies its scope
    /// hierarchy when it checks the scopes an operation needs).
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes
            .binary_search_by(|s| s.as_str().cmp(scope))
            .is_ok()
    }

    /// When the token expires (`exp`, seconds since the Unix epoch).
    pub fn expires_at(&self) -> Option<u64> {
        self.claims.get("exp").and_then(Value::as_u64)
    }

    /// Every claim of the token (or member of the introspection response).
    pub fn claims(&self) -> &Map<String, Value> {
        &self.claims
    }
}

impl mcp_jsonrpc::Principal for TokenPrincipal {
    fn id(&self) -> &str {
        &self.id
    }

    /// The resource server's scope rules for the target the core is about to run: the
    /// endpoint's scopes and those of the tool, prompt or resource (or of a template that
    /// matches the resource's URI).
    fn permits(&self, method: &str, target: &str) -> bool {
        self.rules
            .as_ref()
            .is_none_or(|rules| rules.permits(self, method, target))
    }
}

#[cfg(test)]
mod tests {
    use mcp_jsonrpc::Principal as _;
    use serde_json::json;

    use super::TokenPrincipal;

    fn principal(claims: serde_json::Value) -> Result<TokenPrincipal, super::TokenError> {
        let serde_json::Value::Object(claims) = claims else {
            panic!("claims are an object")
        };
        TokenPrincipal::from_claims(claims)
    }

    #[test]
    fn ids_and_scopes() {
        let user = principal(json!({"iss": "a", "sub": "u", "client_id": "c", "scp": ["x", "y"]}))
            .unwrap();
        let same_user = principal(json!({"iss": "a", "sub": "u", "client_id": "d"})).unwrap();
        let client = principal(json!({"iss": "a", "client_id": "u"})).unwrap();
        let other_issuer = principal(json!({"iss": "b", "sub": "u"})).unwrap();
        assert_eq!(user.id(), same_user.id());
        assert_ne!(user.id(), client.id());
        assert_ne!(user.id(), other_issuer.id());
        assert_eq!(user.scopes(), ["x", "y"]);
        assert!(user.has_scope("y") && !user.has_scope("z"));
        let spaced = principal(json!({"sub": "u", "scope": " b  a b "})).unwrap();
        assert_eq!(spaced.scopes(), ["a", "b"]);
        assert!(principal(json!({"iss": "a"})).is_err());
        assert!(principal(json!({"iss": "a", "sub": ""})).is_err());
    }
}
