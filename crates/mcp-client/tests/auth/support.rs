//! The scripted servers of the OAuth tests, on one loopback origin: the MCP endpoint
//! (`/mcp`) with its Protected Resource Metadata, an authorization server (`/token`,
//! `/register`, metadata) and an enterprise IdP (`/idp/token`). What they do is set in a
//! [`Log`], and what they saw is recorded there.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::RawQuery;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use mcp_client::Client;
use mcp_client::auth::{
    AuthorizationRequest, AuthorizationResponse, Interaction, InteractionFuture, OAuthClient,
    OAuthConfig,
};
use mcp_transport_http::HttpClientConfig;
use serde_json::{Value, json};
use sha2::Digest as _;

/// What the scripted servers do, and what they saw.
#[derive(Debug, Default)]
pub(crate) struct Log {
    /// The `Authorization` of every MCP request.
    pub(crate) mcp: Vec<Option<String>>,
    /// The form of every token request.
    pub(crate) token: Vec<Vec<(String, String)>>,
    /// The `Authorization` of every token request.
    pub(crate) token_auth: Vec<Option<String>>,
    /// Whether the server advertises PKCE S256.
    pub(crate) no_pkce: bool,
    /// How many access tokens have been issued (`a1`, `a2`, …).
    pub(crate) issued: u32,
    /// Whether `a1` was used: the MCP endpoint accepts it once (then it has "expired").
    pub(crate) used_a1: bool,
    /// `a1` does not expire after its first use.
    pub(crate) a1_lasts: bool,
    /// The `expires_in` of `a1` (default 60 s; 0: due for renewal at once); later tokens
    /// get 600 s.
    pub(crate) first_lifetime: Option<u64>,
    /// Whether the first grant comes without a refresh token.
    pub(crate) no_refresh: bool,
    /// DPoP (RFC 9449): the authorization server advertises ES256 and binds the tokens of
    /// requests with a valid proof (token type `DPoP`); the MCP endpoint wants such tokens
    /// with the `DPoP` scheme and a valid proof.
    pub(crate) dpop: bool,
    /// The authorization server issues `token_type: DPoP` even without a proof (broken).
    pub(crate) dpop_without_proof: bool,
    /// The nonce the authorization server wants in token request proofs.
    pub(crate) as_nonce: Option<String>,
    /// The nonce the MCP endpoint wants in proofs.
    pub(crate) rs_nonce: Option<String>,
    /// Both servers hand out a new nonce with every refusal (they never accept one).
    pub(crate) rotate_nonces: bool,
    /// Every DPoP proof received, with where (`token` or `mcp`) and its claims.
    pub(crate) proofs: Vec<(&'static str, Value)>,
    /// Why a proof or a presentation was wrong, if one was: the tests assert it is empty.
    pub(crate) violations: Vec<String>,
    /// The tokens issued as `DPoP`.
    pub(crate) bound: Vec<String>,
    /// The error the token endpoint answers a JWT bearer grant with.
    pub(crate) refuse_jwt_bearer: Option<&'static str>,
    /// The form of every request to the IdP's token endpoint.
    pub(crate) idp: Vec<Vec<(String, String)>>,
    /// What the path-based Protected Resource Metadata URL answers instead of the
    /// document (the root one always answers 404).
    pub(crate) prm_reply: Option<(StatusCode, &'static str)>,
    /// What the RFC 8414 metadata URL answers instead of the document.
    pub(crate) metadata_reply: Option<(StatusCode, String)>,
    /// The metadata names `<base>/oauth/authorize` as its authorization endpoint.
    pub(crate) moved_authorize: bool,
    /// The MCP endpoint's challenge is a bare `Bearer` (no `resource_metadata`, no
    /// scope), as a server of revision 2025-03-26 sends it.
    pub(crate) bare_challenge: bool,
    /// How many times the metadata URL and the registration endpoint were asked.
    pub(crate) metadata_hits: u32,
    pub(crate) registrations: u32,
}

pub(crate) type Shared = Arc<Mutex<Log>>;

/// The grant type of RFC 7523 §2.1.
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

pub(crate) fn form(bytes: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(bytes)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

pub(crate) fn field<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn json_response(status: StatusCode, value: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

/// `ath` (RFC 9449 §4.2) of `token`.
pub(crate) fn ath(token: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(token))
}

/// Verifies a DPoP proof as RFC 9449 §4.3 says (type, algorithm, public key, signature,
/// `htm`, `htu`, `iat`, `ath`), and returns its claims.
pub(crate) fn verify_proof(
    proof: Option<&str>,
    method: &str,
    url: &str,
    token: Option<&str>,
) -> Result<Value, String> {
    let proof = proof.ok_or("no DPoP header")?;
    let header = jsonwebtoken::decode_header(proof).map_err(|e| e.to_string())?;
    if header.typ.as_deref() != Some("dpop+jwt") || header.alg != jsonwebtoken::Algorithm::ES256 {
        return Err(format!("header {header:?}"));
    }
    let jwk = header.jwk.ok_or("no jwk")?;
    if serde_json::to_value(&jwk).unwrap().get("d").is_some() {
        return Err("a private key in the proof".to_owned());
    }
    let key = jsonwebtoken::DecodingKey::from_jwk(&jwk).map_err(|e| e.to_string())?;
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    let claims = jsonwebtoken::decode::<Value>(proof, &key, &validation)
        .map_err(|e| e.to_string())?
        .claims;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let checks = [
        (claims["htm"] == method, "htm"),
        (claims["htu"] == url, "htu"),
        (claims["jti"].as_str().is_some_and(|j| j.len() >= 16), "jti"),
        (
            claims["iat"].as_u64().is_some_and(|i| i.abs_diff(now) < 60),
            "iat",
        ),
        (
            match token {
                Some(token) => claims["ath"] == ath(token),
                None => claims.get("ath").is_none(),
            },
            "ath",
        ),
    ];
    for (ok, what) in checks {
        if !ok {
            return Err(format!("{what} is wrong in {claims}"));
        }
    }
    Ok(claims)
}

/// Whether a proof's nonce is the one the server wants; if not, the refusal's new nonce.
fn nonce_refused(log: &mut Log, claims: &Value, wanted: Option<String>) -> Option<String> {
    let wanted = wanted?;
    if claims["nonce"] == wanted.as_str() && !log.rotate_nonces {
        return None;
    }
    Some(if log.rotate_nonces {
        format!("{wanted}-{}", log.proofs.len())
    } else {
        wanted
    })
}

/// Starts the scripted servers; returns their base URL.
pub(crate) async fn start(log: Shared) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let prm = {
        let (base, log) = (base.clone(), Arc::clone(&log));
        move || {
            let body = json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]});
            let reply = match log.lock().unwrap().prm_reply {
                Some((status, text)) => (status, text.to_owned()).into_response(),
                None => json_response(StatusCode::OK, &body),
            };
            async move { reply }
        }
    };
    let metadata = {
        let (base, log) = (base.clone(), Arc::clone(&log));
        move || {
            let mut body = json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "registration_endpoint": format!("{base}/register"),
                "scopes_supported": ["mcp", "offline_access"],
                "code_challenge_methods_supported": ["S256"],
                "authorization_response_iss_parameter_supported": true,
            });
            let mut log = log.lock().unwrap();
            log.metadata_hits += 1;
            if log.moved_authorize {
                body["authorization_endpoint"] = json!(format!("{base}/oauth/authorize"));
            }
            if let Some((status, text)) = log.metadata_reply.clone() {
                let reply = (status, text).into_response();
                return std::future::ready(reply);
            }
            if log.no_pkce {
                body.as_object_mut()
                    .unwrap()
                    .remove("code_challenge_methods_supported");
            }
            if log.dpop {
                body["dpop_signing_alg_values_supported"] = json!(["ES256", "RS256"]);
            }
            std::future::ready(json_response(StatusCode::OK, &body))
        }
    };
    let register = {
        let log = Arc::clone(&log);
        move || {
            log.lock().unwrap().registrations += 1;
            std::future::ready(json_response(
                StatusCode::CREATED,
                &json!({"client_id": "registered", "redirect_uris": ["http://127.0.0.1:9/cb"]}),
            ))
        }
    };
    let token = {
        let (base, log) = (base.clone(), Arc::clone(&log));
        move |headers: HeaderMap, body: Bytes| {
            let (base, log) = (base.clone(), Arc::clone(&log));
            async move { token_endpoint(&base, &mut log.lock().unwrap(), &headers, &body) }
        }
    };
    let idp = {
        let log = Arc::clone(&log);
        move |body: Bytes| {
            let log = Arc::clone(&log);
            async move {
                log.lock().unwrap().idp.push(form(&body));
                json_response(
                    StatusCode::OK,
                    &json!({"access_token": "jag-1", "token_type": "N_A",
                        "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag"}),
                )
            }
        }
    };
    let mcp = {
        let (base, log) = (base.clone(), Arc::clone(&log));
        move |headers: HeaderMap, body: Bytes| {
            let (base, log) = (base.clone(), Arc::clone(&log));
            async move { mcp_endpoint(&base, &mut log.lock().unwrap(), &headers, &body) }
        }
    };
    let app = Router::new()
        .route("/.well-known/oauth-protected-resource/mcp", get(prm))
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/register", post(register))
        .route("/token", post(token))
        .route("/idp/token", post(idp))
        .route("/mcp", post(mcp))
        .route(
            "/authorize",
            get(|RawQuery(_): RawQuery| async { StatusCode::NOT_FOUND }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

fn token_endpoint(base: &str, log: &mut Log, headers: &HeaderMap, body: &[u8]) -> Response {
    let request = form(body);
    log.token.push(request.clone());
    log.token_auth.push(
        headers
            .get(header::AUTHORIZATION)
            .map(|v| v.to_str().unwrap().to_owned()),
    );
    let proof = headers.get("dpop").map(|v| v.to_str().unwrap().to_owned());
    let mut bind = log.dpop_without_proof;
    if log.dpop && proof.is_some() {
        match verify_proof(proof.as_deref(), "POST", &format!("{base}/token"), None) {
            Ok(claims) => {
                log.proofs.push(("token", claims.clone()));
                if let Some(nonce) = nonce_refused(log, &claims, log.as_nonce.clone()) {
                    let mut refusal =
                        json_response(StatusCode::BAD_REQUEST, &json!({"error": "use_dpop_nonce"}));
                    refusal
                        .headers_mut()
                        .insert("dpop-nonce", nonce.parse().unwrap());
                    return refusal;
                }
                bind = true;
            }
            Err(e) => log.violations.push(format!("token request: {e}")),
        }
    }
    if field(&request, "grant_type") == Some(JWT_BEARER)
        && let Some(error) = log.refuse_jwt_bearer
    {
        return json_response(StatusCode::BAD_REQUEST, &json!({"error": error}));
    }
    log.issued += 1;
    let access = format!("a{}", log.issued);
    let lifetime = if log.issued == 1 {
        log.first_lifetime.unwrap_or(60)
    } else {
        600
    };
    let token_type = if bind {
        log.bound.push(access.clone());
        "DPoP"
    } else {
        "Bearer"
    };
    let mut reply =
        json!({"access_token": access, "token_type": token_type, "expires_in": lifetime});
    // Only the first grant gets a refresh token: a refresh keeps the old one.
    if log.issued == 1 && !log.no_refresh {
        reply["refresh_token"] = json!("r1");
    }
    json_response(StatusCode::OK, &reply)
}

fn mcp_endpoint(base: &str, log: &mut Log, headers: &HeaderMap, body: &[u8]) -> Response {
    let auth = headers
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap().to_owned());
    log.mcp.push(auth.clone());
    let (scheme, token) = auth
        .as_deref()
        .and_then(|a| a.split_once(' '))
        .map_or(("", ""), |(s, t)| (s, t));
    let refuse = |extra: Option<(&'static str, String)>, challenge: String| {
        let mut response = (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, challenge)],
        )
            .into_response();
        if let Some((name, value)) = extra {
            response.headers_mut().insert(name, value.parse().unwrap());
        }
        response
    };
    let bearer = if log.bare_challenge {
        "Bearer".to_owned()
    } else {
        format!(
            r#"Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp", scope="mcp""#
        )
    };
    let bound = log.bound.iter().any(|b| b == token);
    if bound && scheme != "DPoP" {
        log.violations
            .push(format!("a DPoP-bound token sent as `{scheme}`"));
        return refuse(None, bearer);
    }
    if scheme == "DPoP" {
        let proof = headers.get("dpop").map(|v| v.to_str().unwrap());
        match verify_proof(proof, "POST", &format!("{base}/mcp"), Some(token)) {
            Ok(claims) => {
                log.proofs.push(("mcp", claims.clone()));
                if let Some(nonce) = nonce_refused(log, &claims, log.rs_nonce.clone()) {
                    return refuse(
                        Some(("dpop-nonce", nonce)),
                        r#"DPoP error="use_dpop_nonce", algs="ES256""#.to_owned(),
                    );
                }
            }
            Err(e) => {
                log.violations.push(format!("MCP request: {e}"));
                return refuse(None, bearer);
            }
        }
    }
    let accepted = match (scheme, token) {
        ("Bearer" | "DPoP", "a1") if !log.used_a1 || log.a1_lasts => {
            log.used_a1 = true;
            true
        }
        ("Bearer" | "DPoP", t) => t.starts_with('a') && t != "a1",
        _ => false,
    };
    if !accepted {
        return refuse(None, bearer);
    }
    let request: Value = serde_json::from_slice(body).unwrap();
    json_response(
        StatusCode::OK,
        &json!({"jsonrpc": "2.0", "id": request["id"], "result": {
            "resultType": "complete", "tools": [],
            "supportedVersions": ["2026-07-28"], "capabilities": {},
            "serverInfo": {"name": "scripted", "version": "1"}}}),
    )
}

/// A user who approves at once: the redirect carries a code, the state and the issuer.
#[derive(Debug, Default)]
pub(crate) struct Approve {
    pub(crate) requests: Mutex<Vec<String>>,
}

impl Interaction for Approve {
    fn redirect_uri(&self) -> String {
        "http://127.0.0.1:9/cb".to_owned()
    }

    fn authorize<'a>(&'a self, request: &'a AuthorizationRequest) -> InteractionFuture<'a> {
        Box::pin(async move {
            self.requests.lock().unwrap().push(request.url.clone());
            Ok(AuthorizationResponse::from_params([
                ("code".to_owned(), "c1".to_owned()),
                ("state".to_owned(), request.state.clone()),
                ("iss".to_owned(), request.issuer.clone()),
            ]))
        })
    }
}

/// An interaction that is never used.
#[derive(Debug)]
pub(crate) struct NoUser;

impl Interaction for NoUser {
    fn redirect_uri(&self) -> String {
        "http://127.0.0.1:1/callback".to_owned()
    }
    fn authorize<'a>(&'a self, _request: &'a AuthorizationRequest) -> InteractionFuture<'a> {
        Box::pin(async { Err("no user here".into()) })
    }
}

/// Asserts that a refused authorization got as far as neither the user nor the token
/// endpoint.
pub(crate) fn assert_untouched(approve: &Approve, log: &Shared) {
    assert!(
        approve.requests.lock().unwrap().is_empty(),
        "the user was asked"
    );
    assert!(
        log.lock().unwrap().token.is_empty(),
        "a token was asked for"
    );
}

/// A server whose log `set` adjusts before it starts: its log, its base URL and its MCP
/// endpoint.
pub(crate) async fn serve(set: impl FnOnce(&mut Log)) -> (Shared, String, String) {
    let log = Shared::default();
    set(&mut log.lock().unwrap());
    let base = start(Arc::clone(&log)).await;
    let url = format!("{base}/mcp");
    (log, base, url)
}

/// An authorization-code client of `url` in development mode (plain HTTP allowed), whose
/// user is `approve`.
pub(crate) fn code_client(url: &str, approve: &Arc<Approve>) -> OAuthClient {
    let interaction = Arc::clone(approve) as Arc<dyn Interaction>;
    let config = OAuthConfig::authorization_code(url, interaction)
        .network(mcp_client::auth::NetworkPolicy::development());
    OAuthClient::new(config).unwrap()
}

pub(crate) fn connect(url: &str, oauth: OAuthClient) -> Client {
    connect_shared(url, Arc::new(oauth))
}

/// The error a full tool listing of `url` ends with, through `oauth`.
pub(crate) async fn list_error(url: &str, oauth: OAuthClient) -> mcp_client::Error {
    connect(url, oauth).list_tools_all().await.unwrap_err()
}

/// Asserts that an error is `mcp_client::Error::Auth` of this kind (a pattern, with an
/// optional guard).
macro_rules! assert_auth_error {
    ($err:expr, $kind:pat $(if $guard:expr)?) => {{
        let err = &$err;
        assert!(
            matches!(err, mcp_client::Error::Auth($kind) $(if $guard)?),
            "{err:?}"
        );
    }};
}
pub(crate) use assert_auth_error;

pub(crate) fn connect_shared(url: &str, oauth: Arc<OAuthClient>) -> Client {
    Client::builder("auth-test", "1.0")
        .connect_http(url, HttpClientConfig::default().authorizer(oauth))
        .unwrap()
}
