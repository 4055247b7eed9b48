//! The OAuth client end to end against a scripted resource and authorization server on
//! loopback (development mode, `support.rs`), for what the conformance suite does not
//! cover: refresh after a 401, stored tokens reused by the next run, a JWT client
//! assertion that verifies, refusing a server without PKCE S256, and refusing plain http
//! outside development mode; the authorization extensions and DPoP in `extensions.rs`; a
//! server of revision 2025-03-26, without Protected Resource Metadata, in `legacy.rs`.

mod extensions;
mod legacy;
mod support;

use std::sync::Arc;

use mcp_client::auth::{
    AuthorizationResponse, CLIENT_CREDENTIALS_EXTENSION, ClientCredentials, ClientSecret,
    FileStore, Interaction, NetworkPolicy, OAuthClient, OAuthConfig,
};
use mcp_client::{AuthErrorKind, Client};
use serde_json::{Value, json};
use support::{
    Approve, NoUser, Shared, assert_auth_error, assert_untouched, code_client, connect, field,
    list_error, serve, start,
};

/// The `Authorization` headers of MCP requests that began without one and went on with
/// these bearer tokens.
fn unauthorized_then<const N: usize>(tokens: [&str; N]) -> Vec<Option<String>> {
    std::iter::once(None)
        .chain(tokens.map(|t| Some(format!("Bearer {t}"))))
        .collect()
}

/// Asserts that the second token request refreshed `r1` for the resource `url`.
fn assert_refreshed_r1(log: &support::Log, url: &str) {
    assert_eq!(field(&log.token[1], "grant_type"), Some("refresh_token"));
    assert_eq!(field(&log.token[1], "refresh_token"), Some("r1"));
    assert_eq!(field(&log.token[1], "resource"), Some(url));
}

#[tokio::test]
async fn a_refused_token_is_refreshed_and_stored_tokens_are_reused() {
    let (log, base, url) = serve(|_| {}).await;
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
        assert_refreshed_r1(&log, &url);
        assert_eq!(field(&log.token[1], "client_id"), Some("registered"));
        assert_eq!(log.mcp, unauthorized_then(["a1", "a1", "a2"]));
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
    let (log, _, url) = serve(|log| log.no_pkce = true).await;
    let approve = Arc::new(Approve::default());
    let oauth = code_client(&url, &approve);
    let err = list_error(&url, oauth).await;
    assert_auth_error!(err, AuthErrorKind::PkceUnsupported { .. });
    assert_untouched(&approve, &log);
}

#[tokio::test]
async fn plain_http_is_refused_outside_development_mode() {
    let (log, _, url) = serve(|_| {}).await;
    let oauth = OAuthClient::new(OAuthConfig::authorization_code(
        &url,
        Arc::new(Approve::default()),
    ))
    .unwrap();
    let err = list_error(&url, oauth).await;
    assert_auth_error!(err, AuthErrorKind::InsecureUrl { url, .. } if url.contains("oauth-protected-resource"));
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
    let (log, base, url) = serve(|_| {}).await;
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
    // a1 expires as it is issued: it is due for renewal at once.
    let (log, _, url) = serve(|log| log.first_lifetime = Some(0)).await;
    let approve = Arc::new(Approve::default());
    let oauth = code_client(&url, &approve);
    let client = connect(&url, oauth);
    client.list_tools_all().await.unwrap();
    // Refreshed before the request: a2 is sent, and the server never refused anything.
    client.list_tools_all().await.unwrap();
    // a2 lives 600 s: the next request just uses it.
    client.list_tools_all().await.unwrap();
    let log = log.lock().unwrap();
    assert_eq!(log.mcp, unauthorized_then(["a1", "a2", "a2"]));
    assert_eq!(log.token.len(), 2);
    assert_refreshed_r1(&log, &url);
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
