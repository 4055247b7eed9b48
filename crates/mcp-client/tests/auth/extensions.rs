//! The authorization extensions end to end against the scripted servers: DPoP (RFC 9449)
//! with both servers' nonces, and the hostile cases (a nonce loop is one retry, a proof is
//! never reused, a bound token is never a bearer token), workload identity federation and
//! enterprise-managed authorization (the JWT bearer grant, RFC 7523, with a workload JWT or
//! an ID-JAG from a token exchange, RFC 8693).

use std::collections::HashSet;
use std::sync::Arc;

use base64::Engine as _;
use http::{Method, Uri};
use mcp_client::AuthErrorKind;
use mcp_client::auth::{
    Assertion, ClientCredentials, ClientSecret, DPOP_EXTENSION, DpopPolicy,
    ENTERPRISE_MANAGED_EXTENSION, EnterpriseIdp, EnterpriseManaged, FileStore, Interaction,
    NetworkPolicy, OAuthClient, OAuthConfig, WORKLOAD_IDENTITY_EXTENSION, WorkloadIdentity,
};
use mcp_transport_http::Authorizer;
use serde_json::{Value, json};

use super::support::{
    Approve, JWT_BEARER, Log, Shared, assert_auth_error, assert_untouched, ath, connect,
    connect_shared, field, list_error, serve, start, verify_proof,
};

/// A user-facing client of `url` that uses DPoP where the server supports it.
fn dpop_if_supported(url: &str) -> OAuthClient {
    dpop_client(url, DpopPolicy::IfSupported, &Arc::default())
}

/// A user-facing client of `url` with DPoP under `policy`.
fn dpop_client(url: &str, policy: DpopPolicy, approve: &Arc<Approve>) -> OAuthClient {
    OAuthClient::new(
        OAuthConfig::authorization_code(url, Arc::clone(approve) as Arc<dyn Interaction>)
            .network(NetworkPolicy::development())
            .dpop(policy),
    )
    .unwrap()
}

/// Every proof's `jti` is new.
fn assert_fresh(log: &super::support::Log) {
    let jtis: HashSet<&str> = log
        .proofs
        .iter()
        .map(|(_, c)| c["jti"].as_str().unwrap())
        .collect();
    assert_eq!(
        jtis.len(),
        log.proofs.len(),
        "a reused proof: {:?}",
        log.proofs
    );
}

#[tokio::test]
async fn dpop_binds_the_token_and_meets_both_servers_nonces() {
    let (log, _, url) = serve(|log| {
        log.dpop = true;
        log.as_nonce = Some("as-n".to_owned());
        log.rs_nonce = Some("rs-n".to_owned());
        log.first_lifetime = Some(600);
        log.a1_lasts = true;
    })
    .await;
    let approve = Arc::new(Approve::default());
    let client = connect(&url, dpop_client(&url, DpopPolicy::IfSupported, &approve));
    client.list_tools_all().await.unwrap();
    client.list_tools_all().await.unwrap();
    let log = log.lock().unwrap();
    assert!(log.violations.is_empty(), "{:?}", log.violations);
    assert_eq!(log.bound, ["a1"]);
    // The token request: refused for its nonce, then sent again with it (and a new proof).
    assert_eq!(log.token.len(), 2);
    let token_proofs: Vec<&Value> = log
        .proofs
        .iter()
        .filter(|(at, _)| *at == "token")
        .map(|(_, c)| c)
        .collect();
    assert_eq!(token_proofs.len(), 2);
    assert!(token_proofs[0].get("nonce").is_none());
    assert_eq!(token_proofs[1]["nonce"], "as-n");
    // The MCP requests: none without a token, then `DPoP a1` refused for the nonce, then
    // with it; the second call carries the nonce from the start.
    let dpop = Some("DPoP a1".to_owned());
    assert_eq!(log.mcp, [None, dpop.clone(), dpop.clone(), dpop]);
    let nonces: Vec<&Value> = log
        .proofs
        .iter()
        .filter(|(at, _)| *at == "mcp")
        .map(|(_, c)| &c["nonce"])
        .collect();
    assert_eq!(nonces, [&Value::Null, &json!("rs-n"), &json!("rs-n")]);
    assert_fresh(&log);
    assert_eq!(approve.requests.lock().unwrap().len(), 1);
}

/// Lists with a DPoP client against a DPoP server whose endpoints ask for a new nonce with
/// every refusal (`nonces` says which endpoints use nonces); the error the list ends with,
/// and the server's log.
async fn list_with_rotating_nonces(nonces: impl FnOnce(&mut Log)) -> (mcp_client::Error, Shared) {
    let (log, _, url) = serve(|log| {
        log.dpop = true;
        log.rotate_nonces = true;
        nonces(log);
    })
    .await;
    let client = connect(&url, dpop_if_supported(&url));
    (client.list_tools_all().await.unwrap_err(), log)
}

#[tokio::test]
async fn a_server_that_never_accepts_its_nonce_gets_one_retry() {
    // The MCP endpoint asks for a new nonce with every refusal.
    let (err, log) = list_with_rotating_nonces(|log| log.rs_nonce = Some("rs".to_owned())).await;
    assert!(
        matches!(
            &err,
            mcp_client::Error::Http(mcp_transport_http::Error::Unauthorized { status, www_authenticate })
                if status.as_u16() == 401 && www_authenticate[0].contains("use_dpop_nonce")
        ),
        "{err:?}"
    );
    {
        let log = log.lock().unwrap();
        // No token, then the token without a nonce, then one retry with the nonce.
        assert_eq!(log.mcp.len(), 3, "{:?}", log.mcp);
        assert_eq!(log.token.len(), 1, "no new authorization for a nonce");
        assert!(log.violations.is_empty(), "{:?}", log.violations);
    }

    // The token endpoint does the same: one retry, then its refusal is the error.
    let (err, log) = list_with_rotating_nonces(|log| log.as_nonce = Some("as".to_owned())).await;
    assert_auth_error!(err, AuthErrorKind::TokenEndpoint { error, .. } if error == "use_dpop_nonce");
    assert_eq!(log.lock().unwrap().token.len(), 2);
}

#[tokio::test]
async fn a_proof_is_made_for_one_request_and_never_reused() {
    let (log, base, url) = serve(|log| log.dpop = true).await;
    let oauth = Arc::new(dpop_client(&url, DpopPolicy::Required, &Arc::default()));
    connect_shared(&url, Arc::clone(&oauth))
        .list_tools_all()
        .await
        .unwrap();
    // The transport asks for the headers of each request: every answer is a new proof of
    // that method and URL (without its query), for the same token.
    let targets = [
        (Method::POST, format!("{base}/mcp")),
        (Method::GET, format!("{base}/mcp")),
        (Method::DELETE, format!("{base}/mcp")),
        (Method::POST, format!("{base}/other?x=1")),
        (Method::POST, format!("{base}/mcp")),
    ];
    let mut jtis = HashSet::new();
    for (method, target) in &targets {
        let headers = oauth
            .headers(method, &target.parse::<Uri>().unwrap())
            .unwrap();
        assert_eq!(headers["authorization"], "DPoP a1");
        let htu = target.split('?').next().unwrap();
        let claims = verify_proof(
            headers["dpop"].to_str().ok(),
            method.as_str(),
            htu,
            Some("a1"),
        )
        .unwrap();
        assert_eq!(claims["ath"], ath("a1"));
        assert!(jtis.insert(claims["jti"].as_str().unwrap().to_owned()));
    }
    let log = log.lock().unwrap();
    assert!(log.violations.is_empty(), "{:?}", log.violations);
    assert_fresh(&log);
}

#[tokio::test]
async fn a_dpop_bound_token_is_never_sent_as_a_bearer_token() {
    // A bound token stored by one client is of no use to the next one (its key is gone):
    // the next run signs in again rather than present it.
    let (log, _, url) = serve(|log| {
        log.dpop = true;
        log.first_lifetime = Some(600);
    })
    .await;
    let path = std::env::temp_dir().join(format!("mcp-auth-dpop-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let with_store = |policy| {
        OAuthClient::new(
            OAuthConfig::authorization_code(&url, Arc::new(Approve::default()))
                .network(NetworkPolicy::development())
                .store(Arc::new(FileStore::new(&path)))
                .dpop(policy),
        )
        .unwrap()
    };
    connect(&url, with_store(DpopPolicy::IfSupported))
        .list_tools_all()
        .await
        .unwrap();
    assert!(std::fs::read_to_string(&path).unwrap().contains("\"DPoP\""));
    for policy in [DpopPolicy::IfSupported, DpopPolicy::Off] {
        let next = with_store(policy);
        assert_eq!(next.authorization(), None, "{policy:?}");
        connect(&url, next).list_tools_all().await.unwrap();
    }
    {
        let log = log.lock().unwrap();
        assert!(log.violations.is_empty(), "{:?}", log.violations);
        // Each run started without a credential; a1 was only ever sent as DPoP.
        assert_eq!(log.mcp.iter().filter(|a| a.is_none()).count(), 3);
        assert!(
            log.mcp
                .iter()
                .flatten()
                .all(|a| a != "Bearer a1" && a != "Bearer a2"),
            "{:?}",
            log.mcp
        );
        // Without DPoP, the third run got a bearer token.
        assert_eq!(log.mcp.last().unwrap().as_deref(), Some("Bearer a3"));
    }
    let _ = std::fs::remove_file(&path);

    // A server that binds a token the client did not ask to bind: refused, never used.
    let (log, _, url) = serve(|log| log.dpop_without_proof = true).await;
    let err = list_error(&url, dpop_client(&url, DpopPolicy::Off, &Arc::default())).await;
    assert_auth_error!(err, AuthErrorKind::InvalidTokenResponse { .. });
    assert_eq!(log.lock().unwrap().mcp, [None]);

    // DPoP required from a server that does not offer it: refused before the user.
    let (log, _, url) = serve(|_| {}).await;
    let approve = Arc::new(Approve::default());
    let err = list_error(&url, dpop_client(&url, DpopPolicy::Required, &approve)).await;
    assert_auth_error!(err, AuthErrorKind::DpopUnsupported { .. });
    assert_untouched(&approve, &log);
}

/// An unsigned JWT with `aud` (the client never verifies it; the server would).
fn workload_jwt(aud: &str) -> String {
    let b64 = |v: Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(serde_json::to_vec(&v).unwrap())
    };
    format!(
        "{}.{}.c2ln",
        b64(json!({"alg": "ES256"})),
        b64(json!({"iss": "https://idp.example", "sub": "workload", "aud": aud}))
    )
}

#[tokio::test]
async fn a_workload_presents_its_jwt_with_the_jwt_bearer_grant() {
    let (log, base, url) = serve(|_| {}).await;
    // The JWT is read from its file at each grant (a platform rotates it).
    let path = std::env::temp_dir().join(format!("mcp-auth-wif-{}.jwt", std::process::id()));
    let jwt = workload_jwt(&format!("{base}/token"));
    std::fs::write(&path, format!("{jwt}\n")).unwrap();
    let config =
        OAuthConfig::workload_identity(&url, WorkloadIdentity::new(Assertion::File(path.clone())));
    assert_eq!(config.extensions(), [WORKLOAD_IDENTITY_EXTENSION]);
    let oauth = OAuthClient::new(config.network(NetworkPolicy::development())).unwrap();
    connect(&url, oauth).list_tools_all().await.unwrap();
    let _ = std::fs::remove_file(&path);
    let log = log.lock().unwrap();
    assert_eq!(log.token.len(), 1);
    let form = &log.token[0];
    assert_eq!(field(form, "grant_type"), Some(JWT_BEARER));
    assert_eq!(field(form, "assertion"), Some(jwt.as_str()));
    assert_eq!(field(form, "resource"), Some(url.as_str()));
    assert_eq!(field(form, "scope"), Some("mcp"));
    // No client id, no client authentication: the JWT is the credential.
    assert_eq!(field(form, "client_id"), None);
    assert_eq!(log.token_auth, [None]);
    assert_eq!(log.mcp.last().unwrap().as_deref(), Some("Bearer a1"));
}

#[tokio::test]
async fn a_refused_workload_jwt_is_reported_and_never_retried() {
    for error in ["invalid_grant", "invalid_scope", "unauthorized_client"] {
        let log = Shared::default();
        log.lock().unwrap().refuse_jwt_bearer = Some(error);
        let base = start(Arc::clone(&log)).await;
        let url = format!("{base}/mcp");
        let mut workload = WorkloadIdentity::new(Assertion::Jwt(workload_jwt(&base)));
        workload.client_id = Some("workload-1".to_owned());
        let oauth = OAuthClient::new(
            OAuthConfig::workload_identity(&url, workload).network(NetworkPolicy::development()),
        )
        .unwrap();
        let err = list_error(&url, oauth).await;
        assert_auth_error!(err, AuthErrorKind::TokenEndpoint { error: e, .. } if e == error);
        let log = log.lock().unwrap();
        assert_eq!(log.token.len(), 1, "{error}: retried");
        assert_eq!(field(&log.token[0], "client_id"), Some("workload-1"));
    }

    // A JWT addressed to another authorization server is never sent to this one.
    let (log, _, url) = serve(|_| {}).await;
    let oauth = OAuthClient::new(
        OAuthConfig::workload_identity(
            &url,
            WorkloadIdentity::new(Assertion::Jwt(workload_jwt("https://as.elsewhere.example"))),
        )
        .network(NetworkPolicy::development()),
    )
    .unwrap();
    let err = list_error(&url, oauth).await;
    assert_auth_error!(err, AuthErrorKind::AssertionAudience { .. });
    assert!(log.lock().unwrap().token.is_empty());
}

#[tokio::test]
async fn enterprise_managed_exchanges_the_id_token_for_an_id_jag_then_presents_it() {
    let (log, base, url) = serve(|_| {}).await;
    let mut idp = EnterpriseIdp::new("https://idp.example", "idp-client");
    idp.token_endpoint = Some(format!("{base}/idp/token"));
    let config = OAuthConfig::enterprise_managed(
        &url,
        EnterpriseManaged::new(
            idp,
            Assertion::Jwt("id-token-1".to_owned()),
            ClientCredentials::new("mcp-client", ClientSecret::Secret("s3cret".to_owned())),
        ),
    )
    .dpop(DpopPolicy::IfSupported);
    assert_eq!(
        config.extensions(),
        [ENTERPRISE_MANAGED_EXTENSION, DPOP_EXTENSION]
    );
    let oauth = OAuthClient::new(config.network(NetworkPolicy::development())).unwrap();
    connect(&url, oauth).list_tools_all().await.unwrap();
    let log = log.lock().unwrap();
    // The token exchange at the IdP (RFC 8693; the profile's §4).
    assert_eq!(log.idp.len(), 1);
    let exchange = &log.idp[0];
    for (name, value) in [
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:token-exchange",
        ),
        (
            "requested_token_type",
            "urn:ietf:params:oauth:token-type:id-jag",
        ),
        ("audience", base.as_str()),
        ("resource", url.as_str()),
        ("subject_token", "id-token-1"),
        (
            "subject_token_type",
            "urn:ietf:params:oauth:token-type:id_token",
        ),
        ("client_id", "idp-client"),
        ("scope", "mcp"),
    ] {
        assert_eq!(field(exchange, name), Some(value), "{name}");
    }
    // The JWT bearer grant at the MCP authorization server, as this client (§5). The
    // server offers no DPoP: a bearer token, and no proof.
    assert_eq!(log.token.len(), 1);
    let grant = &log.token[0];
    assert_eq!(field(grant, "grant_type"), Some(JWT_BEARER));
    assert_eq!(field(grant, "assertion"), Some("jag-1"));
    assert_eq!(field(grant, "resource"), Some(url.as_str()));
    let basic = base64::engine::general_purpose::STANDARD.encode("mcp-client:s3cret");
    assert_eq!(log.token_auth, [Some(format!("Basic {basic}"))]);
    assert!(log.proofs.is_empty());
    assert_eq!(log.mcp.last().unwrap().as_deref(), Some("Bearer a1"));
}
