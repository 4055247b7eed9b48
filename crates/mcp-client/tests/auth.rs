//! The OAuth client end to end against a scripted resource and authorization server on
//! loopback (development mode), for what the conformance suite does not cover: refresh
//! after a 401, stored tokens reused by the next run, a JWT client assertion that
//! verifies, refusing a server without PKCE S256, and refusing plain http outside
//! development mode.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::RawQuery;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use mcp_client::Client;
use mcp_client::auth::{
    AuthError, AuthorizationRequest, AuthorizationResponse, CLIENT_CREDENTIALS_EXTENSION,
    ClientCredentials, ClientSecret, FileStore, Interaction, InteractionFuture, NetworkPolicy,
    OAuthClient, OAuthConfig,
};
use mcp_transport_http::HttpClientConfig;
use serde_json::{Value, json};

/// What the scripted servers saw.
#[derive(Debug, Default)]
struct Log {
    /// The `Authorization` of every MCP request.
    mcp: Vec<Option<String>>,
    /// The form of every token request.
    token: Vec<Vec<(String, String)>>,
    /// Whether the server advertises PKCE S256.
    no_pkce: bool,
    /// How many access tokens have been issued (`a1`, `a2`, …).
    issued: u32,
    /// Whether `a1` was used: the MCP endpoint accepts it once (then it has "expired").
    used_a1: bool,
    /// The `expires_in` of `a1` (default 60 s; 0: due for renewal at once); later tokens
    /// get 600 s.
    first_lifetime: Option<u64>,
    /// Whether the first grant comes without a refresh token.
    no_refresh: bool,
}

type Shared = Arc<Mutex<Log>>;

fn form(bytes: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(bytes)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn json_response(status: StatusCode, value: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

async fn start(log: Shared) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let prm = {
        let base = base.clone();
        move || {
            let body = json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]});
            async move { json_response(StatusCode::OK, &body) }
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
            if log.lock().unwrap().no_pkce {
                body.as_object_mut()
                    .unwrap()
                    .remove("code_challenge_methods_supported");
            }
            async move { json_response(StatusCode::OK, &body) }
        }
    };
    let register = || async {
        json_response(
            StatusCode::CREATED,
            &json!({"client_id": "registered", "redirect_uris": ["http://127.0.0.1:9/cb"]}),
        )
    };
    let token = {
        let log = Arc::clone(&log);
        move |body: Bytes| {
            let log = Arc::clone(&log);
            async move {
                let mut log = log.lock().unwrap();
                log.token.push(form(&body));
                log.issued += 1;
                let access = format!("a{}", log.issued);
                let lifetime = if log.issued == 1 {
                    log.first_lifetime.unwrap_or(60)
                } else {
                    600
                };
                let mut reply =
                    json!({"access_token": access, "token_type": "Bearer", "expires_in": lifetime});
                // Only the first grant gets a refresh token: a refresh keeps the old one.
                if log.issued == 1 && !log.no_refresh {
                    reply["refresh_token"] = json!("r1");
                }
                json_response(StatusCode::OK, &reply)
            }
        }
    };
    let mcp = {
        let (base, log) = (base.clone(), Arc::clone(&log));
        move |headers: HeaderMap, body: Bytes| {
            let (base, log) = (base.clone(), Arc::clone(&log));
            async move {
                let auth = headers
                    .get(header::AUTHORIZATION)
                    .map(|v| v.to_str().unwrap().to_owned());
                let mut log = log.lock().unwrap();
                log.mcp.push(auth.clone());
                let accepted = match auth.as_deref() {
                    Some("Bearer a1") if !log.used_a1 => {
                        log.used_a1 = true;
                        true
                    }
                    Some(t) => t.starts_with("Bearer a") && t != "Bearer a1",
                    None => false,
                };
                if !accepted {
                    return (
                        StatusCode::UNAUTHORIZED,
                        [(
                            header::WWW_AUTHENTICATE,
                            format!(
                                r#"Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp", scope="mcp""#
                            ),
                        )],
                    )
                        .into_response();
                }
                let request: Value = serde_json::from_slice(&body).unwrap();
                json_response(
                    StatusCode::OK,
                    &json!({"jsonrpc": "2.0", "id": request["id"], "result": {
                        "resultType": "complete", "tools": [],
                        "supportedVersions": ["2026-07-28"], "capabilities": {},
                        "serverInfo": {"name": "scripted", "version": "1"}}}),
                )
            }
        }
    };
    let app = Router::new()
        .route("/.well-known/oauth-protected-resource/mcp", get(prm))
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/register", post(register))
        .route("/token", post(token))
        .route("/mcp", post(mcp))
        .route(
            "/authorize",
            get(|RawQuery(_): RawQuery| async { StatusCode::NOT_FOUND }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

/// A user who approves at once: the redirect carries a code, the state and the issuer.
#[derive(Debug, Default)]
struct Approve {
    requests: Mutex<Vec<String>>,
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

fn field<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn connect(url: &str, oauth: OAuthClient) -> Client {
    Client::builder("auth-test", "1.0")
        .connect_http(url, HttpClientConfig::default().authorizer(Arc::new(oauth)))
        .unwrap()
}

#[tokio::test]
async fn a_refused_token_is_refreshed_and_stored_tokens_are_reused() {
    let log = Shared::default();
    let base = start(Arc::clone(&log)).await;
    let url = format!("{base}/mcp");
    let path = std::env::temp_dir().join(format!("mcp-auth-refresh-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let approve = Arc::new(Approve::default());
    let oauth = OAuthClient::new(
        OAuthConfig::authorization_code(&url, Arc::clone(&approve) as Arc<dyn Interaction>)
            .network(NetworkPolicy::development())
            .store(Arc::new(FileStore::new(&path))),
    )
    .unwrap();
    let client = connect(&url, oauth);
    // 401 → sign in (a1); a1 accepted once; the second call's 401 → refresh (a2).
    client.list_tools_all().await.unwrap();
    client.list_tools_all().await.unwrap();
    {
        let log = log.lock().unwrap();
        assert_eq!(
            approve.requests.lock().unwrap().len(),
            1,
            "one sign-in only"
        );
        let authorize =
            AuthorizationResponse::from_redirect_url(&approve.requests.lock().unwrap()[0]);
        assert_eq!(authorize.get("scope"), Some("mcp offline_access"));
        assert_eq!(authorize.get("resource"), Some(url.as_str()));
        assert_eq!(log.token.len(), 2);
        assert_eq!(
            field(&log.token[0], "grant_type"),
            Some("authorization_code")
        );
        assert_eq!(field(&log.token[1], "grant_type"), Some("refresh_token"));
        assert_eq!(field(&log.token[1], "refresh_token"), Some("r1"));
        assert_eq!(field(&log.token[1], "resource"), Some(url.as_str()));
        assert_eq!(field(&log.token[1], "client_id"), Some("registered"));
        assert_eq!(
            log.mcp,
            [
                None,
                Some("Bearer a1".to_owned()),
                Some("Bearer a1".to_owned()),
                Some("Bearer a2".to_owned())
            ]
        );
    }

    // The next run reads the stored tokens: its first request carries a2.
    let oauth = OAuthClient::new(
        OAuthConfig::authorization_code(&url, Arc::new(Approve::default()))
            .network(NetworkPolicy::development())
            .store(Arc::new(FileStore::new(&path))),
    )
    .unwrap();
    let client = connect(&url, oauth);
    client.list_tools_all().await.unwrap();
    assert_eq!(
        log.lock().unwrap().mcp.last().unwrap().as_deref(),
        Some("Bearer a2")
    );
    let stored = std::fs::read_to_string(&path).unwrap();
    assert!(
        stored.contains(&format!("\"issuer\": \"{base}\"")),
        "{stored}"
    );
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn a_server_without_pkce_s256_is_refused_before_the_user_is_involved() {
    let log = Shared::default();
    log.lock().unwrap().no_pkce = true;
    let base = start(Arc::clone(&log)).await;
    let url = format!("{base}/mcp");
    let approve = Arc::new(Approve::default());
    let oauth = OAuthClient::new(
        OAuthConfig::authorization_code(&url, Arc::clone(&approve) as Arc<dyn Interaction>)
            .network(NetworkPolicy::development()),
    )
    .unwrap();
    let err = connect(&url, oauth).list_tools_all().await.unwrap_err();
    assert!(
        matches!(
            err,
            mcp_client::Error::Auth(AuthError::PkceUnsupported { .. })
        ),
        "{err:?}"
    );
    assert!(approve.requests.lock().unwrap().is_empty());
    assert!(log.lock().unwrap().token.is_empty());
}

#[tokio::test]
async fn plain_http_is_refused_outside_development_mode() {
    let log = Shared::default();
    let base = start(Arc::clone(&log)).await;
    let url = format!("{base}/mcp");
    let oauth = OAuthClient::new(OAuthConfig::authorization_code(
        &url,
        Arc::new(Approve::default()),
    ))
    .unwrap();
    let err = connect(&url, oauth).list_tools_all().await.unwrap_err();
    assert!(
        matches!(err, mcp_client::Error::Auth(AuthError::InsecureUrl { ref url, .. }) if url.contains("oauth-protected-resource")),
        "{err:?}"
    );
    assert!(log.lock().unwrap().token.is_empty());
}

/// A throwaway P-256 key (PKCS#8) and its public half, for the assertion test only.
const TEST_EC_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgYo0azYt1i0HSbqyV
5U+hqPGnfnZAPJbY2o9D9oBwEMqhRANCAAS6EuAUnrTn2T3gc9KXXAjVGFa8CXwM
oAMav3NHcreGft53XnQ5MLxSacJncJ8/9Tq9DiydPBLOTdzM0U7062CS
-----END PRIVATE KEY-----";
const TEST_EC_PUBLIC: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEuhLgFJ6059k94HPSl1wI1RhWvAl8
DKADGr9zR3K3hn7ed150OTC8UmnCZ3CfP/U6vQ4snTwSzk3czNFO9Otgkg==
-----END PUBLIC KEY-----";

#[tokio::test]
async fn client_credentials_with_a_jwt_assertion_that_verifies() {
    let log = Shared::default();
    let base = start(Arc::clone(&log)).await;
    let url = format!("{base}/mcp");
    let oauth = OAuthClient::new(
        OAuthConfig::client_credentials(
            &url,
            ClientCredentials::new(
                "machine",
                ClientSecret::PrivateKeyJwt {
                    pem: TEST_EC_KEY.to_owned(),
                    algorithm: "ES256".to_owned(),
                },
            ),
        )
        .network(NetworkPolicy::development()),
    )
    .unwrap();
    connect(&url, oauth).list_tools_all().await.unwrap();
    let log = log.lock().unwrap();
    let form = &log.token[0];
    assert_eq!(field(form, "grant_type"), Some("client_credentials"));
    assert_eq!(field(form, "scope"), Some("mcp"));
    assert_eq!(field(form, "resource"), Some(url.as_str()));
    assert_eq!(
        field(form, "client_assertion_type"),
        Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
    );
    let assertion = field(form, "client_assertion").unwrap();
    let key = jsonwebtoken::DecodingKey::from_ec_pem(TEST_EC_PUBLIC.as_bytes()).unwrap();
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    validation.set_audience(&[&base]);
    validation.set_issuer(&["machine"]);
    let claims = jsonwebtoken::decode::<Value>(assertion, &key, &validation)
        .unwrap()
        .claims;
    assert_eq!(claims["sub"], "machine");
    assert!(claims["jti"].as_str().is_some_and(|j| j.len() >= 32));
}

#[tokio::test]
async fn a_token_about_to_expire_is_refreshed_before_the_next_request() {
    let log = Shared::default();
    // a1 expires as it is issued: it is due for renewal at once.
    log.lock().unwrap().first_lifetime = Some(0);
    let base = start(Arc::clone(&log)).await;
    let url = format!("{base}/mcp");
    let approve = Arc::new(Approve::default());
    let oauth = OAuthClient::new(
        OAuthConfig::authorization_code(&url, Arc::clone(&approve) as Arc<dyn Interaction>)
            .network(NetworkPolicy::development()),
    )
    .unwrap();
    let client = connect(&url, oauth);
    client.list_tools_all().await.unwrap();
    // Refreshed before the request: a2 is sent, and the server never refused anything.
    client.list_tools_all().await.unwrap();
    // a2 lives 600 s: the next request just uses it.
    client.list_tools_all().await.unwrap();
    let log = log.lock().unwrap();
    assert_eq!(
        log.mcp,
        [
            None,
            Some("Bearer a1".to_owned()),
            Some("Bearer a2".to_owned()),
            Some("Bearer a2".to_owned())
        ]
    );
    assert_eq!(log.token.len(), 2);
    assert_eq!(field(&log.token[1], "grant_type"), Some("refresh_token"));
    assert_eq!(field(&log.token[1], "refresh_token"), Some("r1"));
    assert_eq!(field(&log.token[1], "resource"), Some(url.as_str()));
    assert_eq!(
        approve.requests.lock().unwrap().len(),
        1,
        "one sign-in only"
    );
}

#[tokio::test]
async fn without_a_refresh_token_only_a_client_credentials_token_is_renewed_ahead() {
    for machine in [true, false] {
        let log = Shared::default();
        {
            let mut log = log.lock().unwrap();
            log.first_lifetime = Some(0);
            log.no_refresh = true;
        }
        let base = start(Arc::clone(&log)).await;
        let url = format!("{base}/mcp");
        let config = if machine {
            OAuthConfig::client_credentials(
                &url,
                ClientCredentials::new("machine", ClientSecret::Secret("s".to_owned())),
            )
        } else {
            OAuthConfig::authorization_code(&url, Arc::new(Approve::default()))
        };
        let client = connect(
            &url,
            OAuthClient::new(config.network(NetworkPolicy::development())).unwrap(),
        );
        client.list_tools_all().await.unwrap();
        client.list_tools_all().await.unwrap();
        let log = log.lock().unwrap();
        let second = log.mcp[2].as_deref();
        if machine {
            // A new client credentials grant before the request.
            assert_eq!(second, Some("Bearer a2"));
            assert_eq!(log.token.len(), 2);
            assert_eq!(
                field(&log.token[1], "grant_type"),
                Some("client_credentials")
            );
        } else {
            // Nothing to renew a user's token with but the user: a1 is sent, and only the
            // server's refusal (a1 is accepted once) brings a new sign-in.
            assert_eq!(second, Some("Bearer a1"));
            assert_eq!(log.token.len(), 2);
            assert_eq!(
                field(&log.token[1], "grant_type"),
                Some("authorization_code")
            );
        }
    }
}

#[test]
fn the_client_credentials_grant_declares_its_extension() {
    let url = "https://mcp.example.com/mcp";
    let machine = OAuthClient::new(OAuthConfig::client_credentials(
        url,
        ClientCredentials::new("machine", ClientSecret::Secret("s".to_owned())),
    ))
    .unwrap();
    let user = OAuthClient::new(OAuthConfig::authorization_code(url, Arc::new(NoUser))).unwrap();
    let settings = json!({"mimeTypes": ["text/html;profile=mcp-app"]});
    let declared = |builder: mcp_client::ClientBuilder| {
        serde_json::to_value(builder.input_handlers().capabilities()).unwrap()["extensions"].clone()
    };

    let with_machine = Client::builder("a", "1")
        .extension(
            "io.modelcontextprotocol/ui",
            settings.as_object().unwrap().clone(),
        )
        .oauth(&machine);
    assert_eq!(
        declared(with_machine),
        json!({
            "io.modelcontextprotocol/ui": settings,
            CLIENT_CREDENTIALS_EXTENSION: {},
        })
    );
    // The authorization code grant is the core protocol's: nothing to declare, and no
    // empty `extensions` map either.
    assert_eq!(
        declared(Client::builder("a", "1").oauth(&user)),
        Value::Null
    );
}

/// An interaction that is never used.
#[derive(Debug)]
struct NoUser;

impl Interaction for NoUser {
    fn redirect_uri(&self) -> String {
        "http://127.0.0.1:1/callback".to_owned()
    }
    fn authorize<'a>(&'a self, _request: &'a AuthorizationRequest) -> InteractionFuture<'a> {
        Box::pin(async { Err("no user here".into()) })
    }
}
