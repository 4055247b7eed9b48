//! Token endpoint requests (OAuth 2.1 §3.2): the client's authentication
//! (`client_secret_basic`, `client_secret_post`, `none`, and `private_key_jwt` with a JWT
//! assertion, RFC 7523 §2.2), the `resource` parameter on every request (RFC 8707), a DPoP
//! proof when tokens are bound (RFC 9449 §5) with one retry when the server asks for its
//! nonce (§8), and the response, success or error: an access token of type `Bearer` or
//! `DPoP`, or the ID-JAG of a token exchange (RFC 8693 §2.2).

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use http::header::AUTHORIZATION;
use http::{HeaderMap, HeaderValue, StatusCode, Uri};
use serde::{Deserialize, Serialize};

use super::discovery::AuthorizationServerMetadata;
use super::dpop::{DPOP, Dpop, Role};
use super::fetch::Fetcher;
use super::pkce::random_token;
use crate::AuthErrorKind;

/// The `grant_type` of the JWT bearer grant (RFC 7523 §2.1).
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// The `grant_type` of a token exchange (RFC 8693 §2.1).
pub(crate) const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The token type of an Identity Assertion JWT Authorization Grant
/// (draft-ietf-oauth-identity-assertion-authz-grant §4.3).
pub(crate) const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// The token type of an OpenID Connect ID token (RFC 8693 §3).
pub(crate) const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";

/// How long a JWT client assertion is valid.
const ASSERTION_LIFETIME_SECS: u64 = 300;

/// The client as the token endpoint knows it: its id and how it authenticates.
#[derive(Clone)]
pub(crate) struct ClientIdentity {
    pub(crate) client_id: String,
    pub(crate) secret: Option<String>,
    /// A PEM private key and its JWS algorithm name, for `private_key_jwt`.
    pub(crate) private_key: Option<(String, String)>,
    /// The method the registration settled on, if it said.
    pub(crate) registered_method: Option<String>,
}

mcp_types::debug_fields!(ClientIdentity {
    client_id,
    registered_method
});

/// The token endpoint authentication methods this client implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    None,
    Basic,
    Post,
    PrivateKeyJwt,
}

impl Method {
    fn parse(name: &str) -> Option<Method> {
        match name {
            "none" => Some(Method::None),
            "client_secret_basic" => Some(Method::Basic),
            "client_secret_post" => Some(Method::Post),
            "private_key_jwt" => Some(Method::PrivateKeyJwt),
            _ => None,
        }
    }
}

/// The method for `client` at the server of `metadata`: `private_key_jwt` with a key,
/// `none` without a secret, else the one the registration named, else the first of
/// `client_secret_basic` and `client_secret_post` the server lists (absent list:
/// `client_secret_basic`, RFC 8414 §2).
pub(crate) fn choose_method(
    client: &ClientIdentity,
    metadata: &AuthorizationServerMetadata,
) -> Method {
    if client.private_key.is_some() {
        return Method::PrivateKeyJwt;
    }
    if client.secret.is_none() {
        return Method::None;
    }
    if let Some(method) = client
        .registered_method
        .as_deref()
        .and_then(Method::parse)
        .filter(|m| *m != Method::PrivateKeyJwt)
    {
        return method;
    }
    let supported = metadata.token_endpoint_auth_methods_supported.as_deref();
    let lists = |name: &str| supported.is_none_or(|s| s.iter().any(|m| m == name));
    if lists("client_secret_basic") {
        Method::Basic
    } else if lists("client_secret_post") {
        Method::Post
    } else {
        Method::Basic
    }
}

/// A successful token response (OAuth 2.1 §3.2.3; RFC 8693 §2.2.1 for a token exchange).
#[derive(Clone, Deserialize, Serialize)]
pub(crate) struct TokenResponse {
    pub(crate) access_token: String,
    pub(crate) token_type: String,
    #[serde(default)]
    pub(crate) issued_token_type: Option<String>,
    #[serde(default)]
    pub(crate) expires_in: Option<u64>,
    #[serde(default)]
    pub(crate) refresh_token: Option<String>,
    #[serde(default)]
    pub(crate) scope: Option<String>,
}

#[derive(Deserialize)]
struct ErrorResponse {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

/// The current time in seconds since the Unix epoch.
pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Form-urlencodes a value the way `client_secret_basic` requires before Base64
/// (RFC 6749 §2.3.1).
fn form_encode(value: &str) -> String {
    form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// A signed JWT client assertion (RFC 7523 §3): `iss` and `sub` the client id, `aud` the
/// authorization server's issuer identifier, a short lifetime and a unique `jti`.
pub(crate) fn client_assertion(
    client_id: &str,
    audience: &str,
    pem: &str,
    algorithm: &str,
) -> Result<String, AuthErrorKind> {
    use jsonwebtoken::{Algorithm, EncodingKey, Header};
    let alg: Algorithm = algorithm.parse().map_err(AuthErrorKind::jwt)?;
    let key = match alg {
        Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem.as_bytes()),
        Algorithm::RS256
        | Algorithm::RS384
        | Algorithm::RS512
        | Algorithm::PS256
        | Algorithm::PS384
        | Algorithm::PS512 => EncodingKey::from_rsa_pem(pem.as_bytes()),
        Algorithm::EdDSA => EncodingKey::from_ed_pem(pem.as_bytes()),
        _ => {
            return Err(AuthErrorKind::jwt(
                jsonwebtoken::errors::ErrorKind::InvalidAlgorithm.into(),
            ));
        }
    }
    .map_err(AuthErrorKind::jwt)?;
    let iat = now();
    let claims = serde_json::json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": iat,
        "exp": iat + ASSERTION_LIFETIME_SECS,
        "jti": random_token()?,
    });
    jsonwebtoken::encode(&Header::new(alg), &claims, &key).map_err(AuthErrorKind::jwt)
}

/// Adds the client's authentication to a token request: a header for
/// `client_secret_basic`, form fields otherwise; nothing for a client with no id (a
/// workload presenting its JWT, which authenticates it).
fn authenticate(
    client: &ClientIdentity,
    metadata: &AuthorizationServerMetadata,
    form: &mut Vec<(String, String)>,
    headers: &mut HeaderMap,
) -> Result<(), AuthErrorKind> {
    let mut field = |k: &str, v: String| form.push((k.to_owned(), v));
    match choose_method(client, metadata) {
        Method::None if client.client_id.is_empty() => {}
        Method::None => field("client_id", client.client_id.clone()),
        Method::Basic => {
            let secret = client.secret.as_deref().unwrap_or_default();
            let pair = format!("{}:{}", form_encode(&client.client_id), form_encode(secret));
            let value = HeaderValue::from_str(&format!("Basic {}", STANDARD.encode(pair)))
                .map_err(|e| AuthErrorKind::Http {
                    url: metadata.token_endpoint.clone(),
                    reason: e.to_string(),
                })?;
            headers.insert(AUTHORIZATION, value);
        }
        Method::Post => {
            field("client_id", client.client_id.clone());
            field("client_secret", client.secret.clone().unwrap_or_default());
        }
        Method::PrivateKeyJwt => {
            let (pem, alg) = client
                .private_key
                .as_ref()
                .expect("checked by choose_method");
            let assertion = client_assertion(&client.client_id, &metadata.issuer, pem, alg)?;
            field("client_id", client.client_id.clone());
            field(
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
            );
            field("client_assertion", assertion);
        }
    }
    Ok(())
}

/// POSTs a token request with `form` (the grant's fields; `resource` among them) and the
/// client's authentication, with a DPoP proof when `dpop` is given, and reads the
/// response. A `400` with `use_dpop_nonce` (RFC 9449 §8) is retried once with the nonce
/// the server handed out, and a fresh proof and client assertion.
async fn request(
    fetcher: &Fetcher,
    metadata: &AuthorizationServerMetadata,
    client: &ClientIdentity,
    form: &[(String, String)],
    dpop: Option<&Dpop>,
) -> Result<TokenResponse, AuthErrorKind> {
    let url = &metadata.token_endpoint;
    let invalid = |reason: String| AuthErrorKind::InvalidTokenResponse {
        url: url.clone(),
        reason,
    };
    let target: Uri = fetcher.policy().check(url)?;
    let mut retried = false;
    let reply = loop {
        let mut form = form.to_vec();
        let mut headers = HeaderMap::new();
        authenticate(client, metadata, &mut form, &mut headers)?;
        if let Some(dpop) = dpop {
            headers.insert(
                DPOP,
                dpop.proof(Role::Authorization, &http::Method::POST, &target, None)?,
            );
        }
        let body: String = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form.iter())
            .finish();
        let reply = fetcher
            .post(
                url,
                "application/x-www-form-urlencoded",
                Bytes::from(body),
                headers,
            )
            .await?;
        let fresh_nonce =
            dpop.is_some_and(|d| d.remember_nonce(Role::Authorization, &target, &reply.headers));
        if reply.status == StatusCode::BAD_REQUEST
            && fresh_nonce
            && !retried
            && error_of(&reply.body).is_some_and(|e| e.error == "use_dpop_nonce")
        {
            retried = true;
            continue;
        }
        break reply;
    };
    if !reply.status.is_success() {
        let (error, description) = match error_of(&reply.body) {
            Some(e) => (e.error, e.error_description),
            None => ("(no OAuth error in the body)".to_owned(), None),
        };
        return Err(AuthErrorKind::TokenEndpoint {
            url: url.clone(),
            status: reply.status,
            error,
            description,
        });
    }
    let response: TokenResponse =
        serde_json::from_slice(&reply.body).map_err(|e| invalid(e.to_string()))?;
    if response.access_token.is_empty()
        || HeaderValue::from_str(&format!("Bearer {}", response.access_token)).is_err()
    {
        return Err(invalid("the token cannot be sent in a header".to_owned()));
    }
    Ok(response)
}

fn error_of(body: &[u8]) -> Option<ErrorResponse> {
    serde_json::from_slice(body).ok()
}

/// Whether an access token is bound to the client's DPoP key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenType {
    Bearer,
    Dpop,
}

/// A token request for an access token (see [`request`]): the token must be of type
/// `Bearer`, or `DPoP` when the request carried a proof (RFC 9449 §5: a server that does
/// not bind tokens may answer a request with a proof with a bearer token).
pub(crate) async fn access_token(
    fetcher: &Fetcher,
    metadata: &AuthorizationServerMetadata,
    client: &ClientIdentity,
    form: Vec<(String, String)>,
    dpop: Option<&Dpop>,
) -> Result<(TokenResponse, TokenType), AuthErrorKind> {
    let response = request(fetcher, metadata, client, &form, dpop).await?;
    let kind = if response.token_type.eq_ignore_ascii_case("bearer") {
        TokenType::Bearer
    } else if response.token_type.eq_ignore_ascii_case("dpop") && dpop.is_some() {
        TokenType::Dpop
    } else {
        return Err(AuthErrorKind::InvalidTokenResponse {
            url: metadata.token_endpoint.clone(),
            reason: format!(
                "token type `{}` is not {}",
                response.token_type,
                if dpop.is_some() {
                    "Bearer or DPoP"
                } else {
                    "Bearer"
                }
            ),
        });
    };
    Ok((response, kind))
}

/// A token exchange (RFC 8693 §2.1) for an ID-JAG: the response must say it issued one
/// (`issued_token_type`, §2.2.1); its `token_type` is `N_A` and not checked.
pub(crate) async fn id_jag(
    fetcher: &Fetcher,
    metadata: &AuthorizationServerMetadata,
    client: &ClientIdentity,
    form: Vec<(String, String)>,
) -> Result<String, AuthErrorKind> {
    let response = request(fetcher, metadata, client, &form, None).await?;
    if response.issued_token_type.as_deref() != Some(ID_JAG) {
        return Err(AuthErrorKind::InvalidTokenResponse {
            url: metadata.token_endpoint.clone(),
            reason: format!(
                "the token exchange issued {:?}, not an ID-JAG",
                response.issued_token_type
            ),
        });
    }
    Ok(response.access_token)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(methods: Option<&[&str]>) -> AuthorizationServerMetadata {
        let mut m = serde_json::json!({
            "issuer": "https://as.example", "token_endpoint": "https://as.example/token"
        });
        if let Some(methods) = methods {
            m["token_endpoint_auth_methods_supported"] = serde_json::json!(methods);
        }
        serde_json::from_value(m).unwrap()
    }

    fn client(secret: Option<&str>, registered: Option<&str>) -> ClientIdentity {
        ClientIdentity {
            client_id: "id:1".to_owned(),
            secret: secret.map(str::to_owned),
            private_key: None,
            registered_method: registered.map(str::to_owned),
        }
    }

    fn form_and_headers(
        c: &ClientIdentity,
        m: &AuthorizationServerMetadata,
    ) -> (Vec<(String, String)>, HeaderMap) {
        let (mut form, mut headers) = (Vec::new(), HeaderMap::new());
        authenticate(c, m, &mut form, &mut headers).unwrap();
        (form, headers)
    }

    #[test]
    fn methods_are_chosen_as_the_server_advertises() {
        let cases = [
            (None, None, None, Method::None),
            (Some("s"), None, None, Method::Basic),
            (
                Some("s"),
                None,
                Some(&["client_secret_post"][..]),
                Method::Post,
            ),
            (
                Some("s"),
                None,
                Some(&["client_secret_basic", "client_secret_post"][..]),
                Method::Basic,
            ),
            (Some("s"), Some("client_secret_post"), None, Method::Post),
            (None, Some("client_secret_basic"), None, Method::None),
        ];
        for (secret, registered, methods, expected) in cases {
            assert_eq!(
                choose_method(&client(secret, registered), &metadata(methods)),
                expected,
                "{secret:?} {registered:?} {methods:?}"
            );
        }
    }

    #[test]
    fn client_authentication_on_the_wire() {
        let m = metadata(None);
        let (form, headers) = form_and_headers(&client(Some("p@ss:word"), None), &m);
        assert!(form.is_empty());
        // RFC 6749 §2.3.1: each part form-encoded, then Base64 of `id:secret`.
        let expected = format!("Basic {}", STANDARD.encode("id%3A1:p%40ss%3Aword"));
        assert_eq!(headers[AUTHORIZATION], expected.as_str());

        let (form, headers) = form_and_headers(
            &client(Some("s"), None),
            &metadata(Some(&["client_secret_post"])),
        );
        assert!(headers.is_empty());
        assert_eq!(
            form,
            [
                ("client_id".to_owned(), "id:1".to_owned()),
                ("client_secret".to_owned(), "s".to_owned())
            ]
        );

        let (form, headers) = form_and_headers(&client(None, None), &m);
        assert!(headers.is_empty());
        assert_eq!(form, [("client_id".to_owned(), "id:1".to_owned())]);
    }

    #[test]
    fn assertions_refuse_bad_keys_and_algorithms() {
        assert!(matches!(
            client_assertion("c", "https://as", "not a pem", "ES256"),
            Err(AuthErrorKind::Jwt(_))
        ));
        assert!(matches!(
            client_assertion("c", "https://as", "", "none"),
            Err(AuthErrorKind::Jwt(_))
        ));
    }
}
