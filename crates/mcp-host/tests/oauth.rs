//! OAuth from the configuration against a scripted resource and authorization server on
//! loopback (mcp-client's `tests/auth/support.rs`, reused as it is): the client
//! credentials grant with a secret from the environment, and the tokens `mcp` stored in
//! its credential file, used, refreshed, or, when there are none or they cannot be
//! renewed, refused with a clear error before anything is sent.

// Only some of its helpers are used here.
#[allow(dead_code, unused_imports, unused_macros)]
#[path = "../../mcp-client/tests/auth/support.rs"]
mod support;

use std::path::PathBuf;

use mcp_client::auth::{CredentialStore, FileStore, StoredClient, StoredTokens};
use mcp_host::{Error, Host, HostConfig};
use serde_json::json;
use support::{Shared, field, serve};

/// A host of the one server `entry` describes (variables from `env`).
async fn connect(entry: &serde_json::Value, env: &dyn Fn(&str) -> Option<String>) -> Host {
    let config =
        HostConfig::from_json_with_env(&json!({"mcpServers": {"s": entry}}).to_string(), env)
            .unwrap();
    Host::builder().config(config).connect().await.unwrap()
}

/// The `Authorization` headers the MCP endpoint saw.
fn seen(log: &Shared) -> Vec<Option<String>> {
    log.lock().unwrap().mcp.clone()
}

/// A credential file of this test, removed first.
fn credential_file(name: &str) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("mcp-host-oauth-{name}-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Writes what `mcp` would have stored after signing in to `url` with the scripted
/// authorization server at `base`: its registration and `tokens`.
fn sign_in_as_mcp_would(path: &PathBuf, base: &str, url: &str, tokens: &StoredTokens) {
    let store = FileStore::new(path);
    let mut client = StoredClient::new("registered");
    client.redirect_uris = vec!["http://127.0.0.1:9/cb".to_owned()];
    store.save_client(base, &client).unwrap();
    store.save_tokens(url, tokens).unwrap();
}

#[tokio::test]
async fn client_credentials_from_the_config() {
    let (log, _, url) = serve(|log| log.a1_lasts = true).await;
    let env = |name: &str| (name == "SECRET").then(|| "s3cret".to_owned());
    let host = connect(
        &json!({"url": url, "oauth": {
            "grant": "client_credentials", "clientId": "machine", "clientSecret": "${SECRET}"
        }}),
        &env,
    )
    .await;
    assert!(host.failures().is_empty(), "{:?}", host.failures());
    {
        let log = log.lock().unwrap();
        let form = &log.token[0];
        assert_eq!(field(form, "grant_type"), Some("client_credentials"));
        assert_eq!(field(form, "resource"), Some(url.as_str()));
        // The secret, from the environment, went to the token endpoint only.
        let basic = log.token_auth[0].as_deref().unwrap();
        let decoded = base64::Engine::decode(
            &base64::engine::general_purpose::STANDARD,
            basic.trim_start_matches("Basic "),
        )
        .unwrap();
        assert_eq!(String::from_utf8(decoded).unwrap(), "machine:s3cret");
        assert!(
            log.mcp
                .iter()
                .flatten()
                .all(|a| a == "Bearer a1" && !a.contains("s3cret"))
        );
    }
    assert!(seen(&log).contains(&Some("Bearer a1".to_owned())));
    host.shutdown().await;
}

#[tokio::test]
async fn stored_tokens_are_used_and_refreshed() {
    let (log, base, url) = serve(|log| log.a1_lasts = true).await;
    let path = credential_file("stored");
    // A token that is still valid: sent as it is, nothing asked of the authorization
    // server.
    let mut valid = StoredTokens::new(&base, "a-stored");
    valid.expires_at = Some(now() + 3600);
    sign_in_as_mcp_would(&path, &base, &url, &valid);
    let entry = json!({"url": url, "oauth": {"grant": "stored", "store": path}});
    let host = connect(&entry, &|_| None).await;
    assert!(host.failures().is_empty(), "{:?}", host.failures());
    assert!(
        seen(&log)
            .iter()
            .all(|a| a.as_deref() == Some("Bearer a-stored"))
    );
    assert!(log.lock().unwrap().token.is_empty());
    host.shutdown().await;

    // An expired token with a refresh token: refreshed with the stored registration, and
    // the new token stored for the next run.
    let mut expired = StoredTokens::new(&base, "a-old");
    expired.expires_at = Some(now() - 10);
    expired.refresh_token = Some("r1".to_owned());
    expired.scopes = vec!["mcp".to_owned(), "offline_access".to_owned()];
    sign_in_as_mcp_would(&path, &base, &url, &expired);
    let host = connect(&entry, &|_| None).await;
    assert!(host.failures().is_empty(), "{:?}", host.failures());
    {
        let log = log.lock().unwrap();
        assert_eq!(log.token.len(), 1);
        assert_eq!(field(&log.token[0], "grant_type"), Some("refresh_token"));
        assert_eq!(field(&log.token[0], "refresh_token"), Some("r1"));
        assert_eq!(field(&log.token[0], "client_id"), Some("registered"));
        assert_eq!(log.mcp.last().unwrap().as_deref(), Some("Bearer a1"));
    }
    let stored = FileStore::new(&path).tokens(&url).unwrap().unwrap();
    assert_eq!(stored.access_token, "a1");
    host.shutdown().await;
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn without_a_usable_stored_token_the_server_is_refused_and_nothing_is_sent() {
    let (log, base, url) = serve(|_| {}).await;
    let path = credential_file("missing");
    let entry = json!({"url": url, "oauth": {"grant": "stored", "store": path}});
    let failure = |host: &Host| match host.failures() {
        [
            (
                server,
                Error::OAuth {
                    server: named,
                    reason,
                },
            ),
        ] => {
            assert_eq!((server.as_str(), named.as_str()), ("s", "s"));
            reason.clone()
        }
        other => panic!("{other:?}"),
    };

    // No credential file at all.
    let host = connect(&entry, &|_| None).await;
    let reason = failure(&host);
    assert!(
        reason.contains("no stored sign-in") && reason.contains("mcp tools -s"),
        "{reason}"
    );

    // Expired, and nothing to renew it with.
    let mut expired = StoredTokens::new(&base, "a-old");
    expired.expires_at = Some(now() - 10);
    sign_in_as_mcp_would(&path, &base, &url, &expired);
    let host = connect(&entry, &|_| None).await;
    let reason = failure(&host);
    assert!(
        reason.contains("expired") && reason.contains("no refresh token"),
        "{reason}"
    );

    // An unreadable credential file is a refusal too.
    std::fs::write(&path, "not json").unwrap();
    let host = connect(&entry, &|_| None).await;
    let reason = failure(&host);
    assert!(
        reason.contains("cannot read the credential file"),
        "{reason}"
    );

    assert!(seen(&log).is_empty(), "a request was sent");
    assert!(log.lock().unwrap().token.is_empty());
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn a_stored_token_the_server_refuses_is_not_replaced_by_a_sign_in() {
    // The server refuses every token but those it issued; there is no refresh token.
    let (log, base, url) = serve(|_| {}).await;
    let path = credential_file("refused");
    sign_in_as_mcp_would(&path, &base, &url, &StoredTokens::new(&base, "revoked"));
    let entry = json!({"url": url, "oauth": {"grant": "stored", "store": path}});
    let host = connect(&entry, &|_| None).await;
    assert_eq!(host.failures().len(), 1, "{:?}", host.failures());
    // The error and its sources, as a reader would follow them.
    let mut error = Vec::new();
    let mut next: Option<&dyn std::error::Error> = Some(&host.failures()[0].1);
    while let Some(e) = next {
        error.push(e.to_string());
        next = e.source();
    }
    let error = error.join(": ");
    assert!(error.contains("does not sign in"), "{error}");
    // No token was asked for and no client registered.
    let log = log.lock().unwrap();
    assert!(log.token.is_empty());
    assert_eq!(log.registrations, 0);
    let _ = std::fs::remove_file(&path);
}
