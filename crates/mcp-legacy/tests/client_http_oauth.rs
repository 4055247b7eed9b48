//! The dual-era client over HTTP with the OAuth client as the transport's authorizer: an
//! authorization that fails is `mcp_client::Error::Auth` with its kind in a legacy session,
//! as it is in a modern one, and not the transport's boxed authorizer error.

#![cfg(feature = "http")]

#[path = "../../mcp-client/tests/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::Duration;

use mcp_client::auth::{
    AuthorizationRequest, Interaction, InteractionFuture, OAuthClient, OAuthConfig,
};
use mcp_client::{AuthErrorKind, Client};
use mcp_legacy::client::Connector;
use mcp_transport_http::HttpClientConfig;
use mcp_types::Era;
use serde_json::json;
use support::http::{Reply, Seen, reply, serve};

/// No user: the flow must fail before it would need one.
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

use support::http::session_json_reply as json_reply;

/// A 2025-11-25 server that opens a session without a token and then refuses every
/// request for want of one.
fn legacy_wanting_a_token(seen: &Seen) -> Reply {
    if seen.line.starts_with("GET") {
        return reply("405 Method Not Allowed", &[("allow", "POST")], b"");
    }
    match seen.body["method"].as_str() {
        Some("server/discover") => reply("400 Bad Request", &[], b""),
        Some("initialize") => json_reply(&json!({
            "jsonrpc": "2.0",
            "id": seen.body["id"],
            "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "wants-a-token", "version": "1"}
            }
        })),
        Some(m) if m.starts_with("notifications/") => reply("202 Accepted", &[], b""),
        _ => reply("401 Unauthorized", &[("www-authenticate", "Bearer")], b""),
    }
}

#[tokio::test]
async fn a_failed_authorization_in_a_legacy_session_is_error_auth() {
    let (url, _seen) = serve(legacy_wanting_a_token).await;
    // The server is on plain http: the metadata URLs derived from it are refused outside
    // development mode, before any user is involved.
    let oauth = OAuthClient::new(OAuthConfig::authorization_code(&url, Arc::new(NoUser))).unwrap();
    let connection = Connector::new(Client::builder("oauth", "1"))
        .probe_timeout(Duration::from_secs(5))
        .connect_http(
            &url,
            HttpClientConfig::default().authorizer(Arc::new(oauth)),
        )
        .await
        .unwrap();
    assert_eq!(connection.verdict.era, Era::Legacy);
    let err = connection.client.list_tools_all().await.unwrap_err();
    assert!(
        matches!(
            &err,
            mcp_client::Error::Auth(AuthErrorKind::InsecureUrl { url, .. })
                if url.contains("oauth-protected-resource")
        ),
        "{err:?}"
    );
}
