//! A server of revision 2025-03-26, which has no Protected Resource Metadata: the client
//! finds its authorization server at the server's origin, from the metadata there or, when
//! there is none, at the default endpoints
//! (<https://modelcontextprotocol.io/specification/2025-03-26/basic/authorization>). Only a
//! server without metadata gets that discovery: a document that exists but cannot be used,
//! or one that cannot be fetched, is an error as before.

use std::sync::Arc;

use axum::http::StatusCode;
use mcp_client::AuthErrorKind;
use mcp_client::auth::{
    AuthorizationResponse, ClientCredentials, ClientSecret, NetworkPolicy, OAuthClient, OAuthConfig,
};

use crate::support::{
    Approve, Log, assert_auth_error, assert_untouched, code_client, connect, field, list_error,
    serve,
};

/// A 2025-03-26 server: no Protected Resource Metadata anywhere, a bare challenge.
fn legacy(log: &mut Log) {
    log.prm_reply = Some((StatusCode::NOT_FOUND, "not found"));
    log.bare_challenge = true;
}

/// Signs in to a 2025-03-26 server set up by `set` and lists its tools; returns the
/// authorization request the user saw and the log.
async fn sign_in(set: impl FnOnce(&mut Log)) -> (String, String, crate::support::Shared) {
    let (log, base, url) = serve(|log| {
        legacy(log);
        set(log);
    })
    .await;
    let approve = Arc::new(Approve::default());
    let client = connect(&url, code_client(&url, &approve));
    client.list_tools_all().await.unwrap();
    let requests = approve.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 1, "one sign-in");
    {
        let log = log.lock().unwrap();
        assert_eq!(log.registrations, 1, "registered at the origin");
        assert_eq!(log.token.len(), 1);
        let form = &log.token[0];
        assert_eq!(field(form, "grant_type"), Some("authorization_code"));
        assert_eq!(field(form, "resource"), Some(url.as_str()));
        assert!(field(form, "code_verifier").is_some_and(|v| v.len() >= 43));
        assert_eq!(
            log.mcp.last().cloned().flatten().as_deref(),
            Some("Bearer a1")
        );
    }
    let request = requests[0].clone();
    let authorize = AuthorizationResponse::from_redirect_url(&request);
    assert_eq!(authorize.get("code_challenge_method"), Some("S256"));
    assert_eq!(authorize.get("resource"), Some(url.as_str()));
    (request, base, log)
}

#[tokio::test]
async fn the_authorization_server_metadata_at_the_servers_origin_is_used() {
    let (request, base, log) = sign_in(|log| log.moved_authorize = true).await;
    // The endpoint the metadata names, not the default one.
    assert!(
        request.starts_with(&format!("{base}/oauth/authorize?")),
        "{request}"
    );
    // The metadata lists offline_access, so it is asked for.
    let authorize = AuthorizationResponse::from_redirect_url(&request);
    assert_eq!(authorize.get("scope"), Some("offline_access"));
    assert_eq!(log.lock().unwrap().metadata_hits, 1);
}

#[tokio::test]
async fn without_any_metadata_the_default_endpoints_at_the_origin_are_used() {
    let (request, base, log) = sign_in(|log| {
        log.metadata_reply = Some((StatusCode::NOT_FOUND, "not found".to_owned()));
    })
    .await;
    assert!(
        request.starts_with(&format!("{base}/authorize?")),
        "{request}"
    );
    // No metadata, so no scope is known to ask for.
    let authorize = AuthorizationResponse::from_redirect_url(&request);
    assert_eq!(authorize.get("scope"), None);
    assert_eq!(log.lock().unwrap().metadata_hits, 1);
}

/// The error of a sign-in with a server set up by `set`; asserts that neither the user
/// nor the token endpoint was involved, nor the registration endpoint.
async fn refused(set: impl FnOnce(&mut Log)) -> mcp_client::Error {
    let (log, _, url) = serve(set).await;
    let approve = Arc::new(Approve::default());
    let err = list_error(&url, code_client(&url, &approve)).await;
    assert_untouched(&approve, &log);
    assert_eq!(log.lock().unwrap().registrations, 0);
    err
}

#[tokio::test]
async fn resource_metadata_that_fails_to_load_is_no_reason_to_fall_back() {
    // A server error, or a refusal, is not the absence of a document.
    for status in [
        StatusCode::INTERNAL_SERVER_ERROR,
        StatusCode::SERVICE_UNAVAILABLE,
        StatusCode::UNAUTHORIZED,
        StatusCode::FORBIDDEN,
    ] {
        let err = refused(|log| {
            legacy(log);
            log.prm_reply = Some((status, "no"));
        })
        .await;
        assert_auth_error!(err, AuthErrorKind::NoResourceMetadata { tried } if tried.len() == 2);
    }
    // A document that is there but broken.
    let err = refused(|log| {
        legacy(log);
        log.prm_reply = Some((StatusCode::OK, "{not json"));
    })
    .await;
    assert_auth_error!(err, AuthErrorKind::InvalidMetadata { url, .. } if url.contains("oauth-protected-resource"));
}

#[tokio::test]
async fn a_challenge_naming_resource_metadata_that_is_missing_is_an_error() {
    let err = refused(|log| {
        log.prm_reply = Some((StatusCode::NOT_FOUND, "not found"));
    })
    .await;
    assert_auth_error!(err, AuthErrorKind::NoResourceMetadata { tried } if tried.len() == 1);
}

#[tokio::test]
async fn origin_metadata_that_cannot_be_used_is_an_error() {
    // Unavailable: not the absence of metadata, so no default endpoints.
    let err = refused(|log| {
        legacy(log);
        log.metadata_reply = Some((StatusCode::BAD_GATEWAY, "down".to_owned()));
    })
    .await;
    assert_auth_error!(
        err,
        AuthErrorKind::NoAuthorizationServerMetadata { issuer_mismatch: None, tried, .. }
            if tried.len() == 1 && tried[0].ends_with("/.well-known/oauth-authorization-server")
    );
    // Not metadata.
    let err = refused(|log| {
        legacy(log);
        log.metadata_reply = Some((StatusCode::OK, "[1, 2]".to_owned()));
    })
    .await;
    assert_auth_error!(err, AuthErrorKind::InvalidMetadata { .. });
    // Metadata of another issuer than the origin (RFC 8414 §3.3).
    let err = refused(|log| {
        legacy(log);
        log.metadata_reply = Some((
            StatusCode::OK,
            r#"{"issuer": "https://elsewhere.example", "token_endpoint": "https://elsewhere.example/token"}"#
                .to_owned(),
        ));
    })
    .await;
    assert_auth_error!(
        err,
        AuthErrorKind::NoAuthorizationServerMetadata { issuer_mismatch: Some(found), .. }
            if found == "https://elsewhere.example"
    );
    // Metadata without PKCE S256 is refused as from any other server.
    let err = refused(|log| {
        legacy(log);
        log.no_pkce = true;
    })
    .await;
    assert_auth_error!(err, AuthErrorKind::PkceUnsupported { .. });
}

#[tokio::test]
async fn credentials_bound_to_another_issuer_are_not_sent_to_the_origin() {
    let (log, _, url) = serve(legacy).await;
    let mut credentials =
        ClientCredentials::new("machine", ClientSecret::Secret("s3cret".to_owned()));
    credentials.issuer = Some("https://as.example".to_owned());
    let oauth = OAuthClient::new(
        OAuthConfig::client_credentials(&url, credentials).network(NetworkPolicy::development()),
    )
    .unwrap();
    let err = list_error(&url, oauth).await;
    assert_auth_error!(err, AuthErrorKind::PreRegisteredElsewhere { .. });
    assert!(log.lock().unwrap().token.is_empty());
}
