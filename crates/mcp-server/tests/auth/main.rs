//! The resource server (feature `auth`) over real HTTP on 127.0.0.1, against a made-up
//! authorization server the tests start (`support.rs`): the challenges of
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization>, every way a token must be refused, the
//! principal handlers see, scopes, MRTR state bound to its principal, the metadata
//! document, JWKS refresh with its rate limit, and introspection.

mod support;
mod vectors;

use std::time::Duration;

use jsonwebtoken::{Algorithm, EncodingKey};
use mcp_server::auth::{ClientAuth, IntrospectionVerifier, JwtVerifier, ResourceServer};
use mcp_transport_http::RunningServer;
use serde_json::{Value, json};

use support::{
    AuthServer, Call, ISSUER, Keys, RESOURCE, RS_CLIENT, claims, jwk, keys, now, serve, sign,
    sign_with, whoami,
};

/// The metadata URL of [`RESOURCE`], as every challenge names it.
const METADATA: &str = "https://mcp.example.com/.well-known/oauth-protected-resource";

/// An authorization server publishing `rsa1` as `k1`, and the MCP server it protects:
/// every request needs `files:read`; the tool `delete`, the prompt `draft` and the resource
/// `file:///payroll` also `files:write`; `files:admin` implies both.
async fn setup() -> (Keys, AuthServer, RunningServer) {
    let keys = keys();
    let auth = AuthServer::start(vec![jwk(&keys.rsa1, "k1")]).await;
    let verifier = JwtVerifier::builder(ISSUER, auth.url("/jwks"))
        .build()
        .unwrap();
    let mcp = serve(resource_server(RESOURCE, verifier)).await;
    (keys, auth, mcp)
}

fn resource_server(
    resource: &str,
    verifier: impl mcp_server::auth::TokenVerifier,
) -> ResourceServer {
    ResourceServer::builder(resource)
        .authorization_server(ISSUER)
        .scopes_supported(["files:read", "files:write", "offline_access"])
        .required_scopes(["files:read"])
        .tool_scopes("delete", ["files:write"])
        .prompt_scopes("draft", ["files:write"])
        .resource_scopes("file:///payroll", ["files:write"])
        .resource_scopes("file:///private/{name}", ["files:write"])
        .scope_implies("files:admin", ["files:write"])
        .scope_implies("files:write", ["files:read"])
        .metadata_field("resource_name", "Protected files")
        .verifier(verifier)
        .build()
        .unwrap()
}

/// Calls `whoami` with `token` and asserts the `401` of [`assert_invalid`].
async fn assert_refused(mcp: &RunningServer, token: &str, description: &str, case: &str) {
    assert_invalid(&whoami(mcp, token).await, description, case);
}

/// Asserts a `401` with `error="invalid_token"` and the description.
fn assert_invalid(reply: &support::Reply, description: &str, case: &str) {
    assert_eq!(reply.status, 401, "{case}: {reply:?}");
    let challenge = reply.challenge();
    assert!(
        challenge.starts_with(&format!(
            "Bearer error=\"invalid_token\", resource_metadata=\"{METADATA}\", scope=\"files:read\""
        )),
        "{case}: {challenge}"
    );
    assert!(
        challenge.contains(&format!("error_description=\"{description}\"")),
        "{case}: {challenge}"
    );
    assert_eq!(reply.body["error"], "invalid_token", "{case}");
}

#[tokio::test]
async fn a_request_without_a_bearer_token_gets_the_challenge_to_discover_authorization() {
    let (_keys, _auth, mcp) = setup().await;
    let plain = format!("Bearer resource_metadata=\"{METADATA}\", scope=\"files:read\"");
    for (case, call) in [
        ("no Authorization", Call::tool("whoami")),
        (
            "another scheme",
            Call::tool("whoami").header("authorization", "Basic YTpi"),
        ),
        (
            "the scheme alone",
            Call::tool("whoami").header("authorization", "Bearer"),
        ),
        (
            "a notification",
            Call::rpc("notifications/cancelled", json!({})),
        ),
    ] {
        let reply = call.send(&mcp).await;
        assert_eq!(reply.status, 401, "{case}");
        assert_eq!(reply.challenge(), plain, "{case}");
    }
    // The head names a tool that needs more: the challenge asks for all of it at once.
    let reply = Call::tool("delete").send(&mcp).await;
    assert_eq!(reply.status, 401);
    assert_eq!(
        reply.challenge(),
        format!("Bearer resource_metadata=\"{METADATA}\", scope=\"files:read files:write\"")
    );
}

#[tokio::test]
async fn a_token_in_the_query_string_is_never_accepted() {
    let (keys, _auth, mcp) = setup().await;
    let token = sign(&keys.rsa1, Some("k1"), None, &claims("alice", "files:read"));
    // The same token works in the header...
    assert_eq!(whoami(&mcp, &token).await.status, 200);
    // ...and is ignored in the query string, as if there were none.
    for query in ["access_token", "token", "authorization"] {
        let reply = Call::tool("whoami")
            .path(&format!("/mcp?{query}={token}"))
            .send(&mcp)
            .await;
        assert_eq!(reply.status, 401, "{query}");
        assert!(!reply.challenge().contains("error="), "{query}");
    }
}

#[tokio::test]
async fn malformed_tokens_and_requests_are_refused() {
    let (_keys, _auth, mcp) = setup().await;
    for (case, token, description) in [
        (
            "not a JWT",
            "not-a-jwt",
            "the token is not a JWT signed with a known algorithm",
        ),
        (
            "three dots of garbage",
            "a.b.c",
            "the token is not a JWT signed with a known algorithm",
        ),
        ("not a b64token", "a\"b", "the bearer token is malformed"),
        ("spaces inside", "abc def", "the bearer token is malformed"),
    ] {
        assert_refused(&mcp, token, description, case).await;
    }
    let twice = Call::tool("whoami")
        .header("authorization", "Bearer abc")
        .header("authorization", "Bearer def")
        .send(&mcp)
        .await;
    assert_eq!(twice.status, 400);
    assert!(
        twice
            .challenge()
            .starts_with("Bearer error=\"invalid_request\""),
        "{}",
        twice.challenge()
    );
}

#[tokio::test]
async fn the_audience_must_equal_this_resource() {
    let (keys, _auth, mcp) = setup().await;
    for audience in [
        json!("https://mcp.example.com.evil"),
        json!("https://mcp.example.com/other"),
        json!("https://mcp.example.com/"),
        json!("https://MCP.example.com"),
        json!("mcp.example.com"),
        json!(["https://other.example.com", "https://mcp.example.com.evil"]),
        json!([]),
    ] {
        let mut claims = claims("alice", "files:read");
        claims["aud"] = audience.clone();
        let token = sign(&keys.rsa1, Some("k1"), None, &claims);
        assert_refused(
            &mcp,
            &token,
            "the token was not issued for this resource",
            &audience.to_string(),
        )
        .await;
    }
    let mut no_audience = claims("alice", "files:read");
    no_audience.as_object_mut().unwrap().remove("aud");
    let token = sign(&keys.rsa1, Some("k1"), None, &no_audience);
    assert_refused(
        &mcp,
        &token,
        "the token lacks a required claim (exp, iss, aud)",
        "no aud",
    )
    .await;

    // One of several audiences is enough.
    let mut several = claims("alice", "files:read");
    several["aud"] = json!(["https://other.example.com", RESOURCE]);
    let token = sign(&keys.rsa1, Some("k1"), None, &several);
    assert_eq!(whoami(&mcp, &token).await.status, 200);
}

#[tokio::test]
async fn expiry_not_before_and_issuer_are_checked_with_a_small_leeway() {
    let (keys, _auth, mcp) = setup().await;
    let now = now();
    let cases = [
        (
            "expired",
            json!({"exp": now - 3600}),
            Some("the token has expired"),
        ),
        (
            "expired past the leeway",
            json!({"exp": now - 40}),
            Some("the token has expired"),
        ),
        ("expired within the leeway", json!({"exp": now - 5}), None),
        (
            "not yet valid",
            json!({"nbf": now + 3600}),
            Some("the token is not valid yet"),
        ),
        ("valid within the leeway", json!({"nbf": now + 5}), None),
        (
            "another issuer",
            json!({"iss": "https://auth.example.com.evil"}),
            Some("the token was not issued by the expected authorization server"),
        ),
        (
            "no expiry",
            json!({"exp": null}),
            Some("the token lacks a required claim (exp, iss, aud)"),
        ),
    ];
    for (case, changes, refused) in cases {
        let mut claims = claims("alice", "files:read");
        for (key, value) in changes.as_object().unwrap() {
            if value.is_null() {
                claims.as_object_mut().unwrap().remove(key);
            } else {
                claims[key] = value.clone();
            }
        }
        let token = sign(&keys.rsa1, Some("k1"), None, &claims);
        let reply = whoami(&mcp, &token).await;
        match refused {
            Some(description) => assert_invalid(&reply, description, case),
            None => assert_eq!(reply.status, 200, "{case}: {reply:?}"),
        }
    }
}

#[tokio::test]
async fn alg_none_wrong_keys_and_algorithm_confusion_are_refused() {
    use base64::Engine as _;
    let (keys, _auth, mcp) = setup().await;
    let b64 = |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let payload = b64(&claims("alice", "files:read"));
    let unsigned = [
        format!("{}.{payload}.", b64(&json!({"alg": "none", "typ": "JWT"}))),
        format!("{}.{payload}.", b64(&json!({"alg": "none", "kid": "k1"}))),
        format!("{}.{payload}.", b64(&json!({"alg": "NONE"}))),
        format!("{}.{payload}", b64(&json!({"alg": "none"}))),
    ];
    for token in &unsigned {
        let reply = whoami(&mcp, token).await;
        assert_eq!(reply.status, 401, "{token}");
        assert!(reply.challenge().contains("error=\"invalid_token\""));
    }

    let alice = claims("alice", "files:read");
    // A tampered payload under a good signature.
    let good = sign(&keys.rsa1, Some("k1"), None, &alice);
    let parts: Vec<&str> = good.split('.').collect();
    let tampered = format!(
        "{}.{}.{}",
        parts[0],
        b64(&claims("mallory", "files:read files:write")),
        parts[2]
    );
    // HS256 with the RSA public key (as PEM) for the secret: the classic confusion.
    let secret = EncodingKey::from_secret(keys.rsa1_public_pem).unwrap();
    let confused = sign_with(&secret, Algorithm::HS256, Some("k1"), None, &alice);
    for (token, description, case) in [
        (
            confused,
            "the algorithm HS256 is not accepted",
            "HS256 with the public key",
        ),
        // Signed by another key under the published kid, and under a kid nobody published.
        (
            sign(&keys.rsa2, Some("k1"), None, &alice),
            "the token's signature does not verify",
            "wrong key",
        ),
        (
            sign(&keys.rsa2, Some("k9"), None, &alice),
            "no key of the authorization server fits the token",
            "unknown kid",
        ),
        (
            tampered,
            "the token's signature does not verify",
            "tampered",
        ),
    ] {
        assert_refused(&mcp, &token, description, case).await;
    }
}

#[tokio::test]
async fn an_id_token_is_not_an_access_token() {
    let (keys, _auth, mcp) = setup().await;
    let now = now();
    // What an OpenID provider issues to the client: its audience is the client.
    let id_token = json!({
        "iss": ISSUER, "sub": "alice", "aud": "desktop-app", "exp": now + 600, "iat": now,
        "nonce": "n-0S6_WzA2Mj", "at_hash": "77QmUPtjPfzWtF2AnpK9RQ", "auth_time": now,
    });
    let mut for_resource = id_token.clone();
    for_resource["aud"] = json!(RESOURCE);
    let alice = claims("alice", "files:read");
    for (token, description, case) in [
        (
            sign(&keys.rsa1, Some("k1"), None, &id_token),
            "the token was not issued for this resource",
            "client audience",
        ),
        // One whose audience happens to be the resource is still an ID token.
        (
            sign(&keys.rsa1, Some("k1"), None, &for_resource),
            "an ID token is not an access token",
            "resource audience",
        ),
        // So is a token typed as something other than an access token.
        (
            sign(&keys.rsa1, Some("k1"), Some("id_token+jwt"), &alice),
            "a token of type id_token+jwt is not an access token",
            "typ",
        ),
    ] {
        assert_refused(&mcp, &token, description, case).await;
    }
    // RFC 9068's type is accepted.
    let at = sign(&keys.rsa1, Some("k1"), Some("at+jwt"), &alice);
    assert_eq!(whoami(&mcp, &at).await.status, 200);
}

#[tokio::test]
async fn the_principal_reaches_the_handler_and_the_token_does_not() {
    let (keys, _auth, mcp) = setup().await;
    let token = sign(
        &keys.rsa1,
        Some("k1"),
        Some("at+jwt"),
        &claims("alice", "files:read files:write"),
    );
    let reply = whoami(&mcp, &token).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let seen: Value = serde_json::from_str(reply.text()).unwrap();
    assert_eq!(
        seen,
        json!({
            "id": format!("[\"{ISSUER}\",\"alice\",null]"),
            "subject": "alice",
            "client": "desktop-app",
            "scopes": ["files:read", "files:write"],
            "sees_authorization": false,
        })
    );
    // Lists and reads of an authenticated request are private to its authorization context.
    let list = Call::rpc("tools/list", json!({}))
        .send_as(&token, &mcp)
        .await;
    assert_eq!(list.body["result"]["cacheScope"], "private", "{list:?}");
    let read = Call::rpc("resources/read", json!({"uri": "file:///notes"}))
        .send_as(&token, &mcp)
        .await;
    assert_eq!(read.body["result"]["cacheScope"], "private");
    let discover = Call::rpc("server/discover", json!({}))
        .send_as(&token, &mcp)
        .await;
    assert_eq!(discover.body["result"]["cacheScope"], "public");
}

#[tokio::test]
async fn insufficient_scope_gets_403_naming_every_scope_the_operation_needs() {
    let (keys, _auth, mcp) = setup().await;
    let forbidden = |scopes: &str| {
        format!(
            "Bearer error=\"insufficient_scope\", resource_metadata=\"{METADATA}\", scope=\"{scopes}\", \
             error_description=\"the token lacks a scope this operation needs\""
        )
    };
    let reader = sign(&keys.rsa1, Some("k1"), None, &claims("alice", "files:read"));
    assert_eq!(whoami(&mcp, &reader).await.status, 200);
    let reply = Call::tool("delete").bearer(&reader).send(&mcp).await;
    assert_eq!(reply.status, 403, "{reply:?}");
    assert_eq!(reply.challenge(), forbidden("files:read files:write"));
    assert_eq!(reply.body["error"], "insufficient_scope");

    // A token without the endpoint's scope: 403 for anything.
    let nothing = sign(&keys.rsa1, Some("k1"), None, &claims("alice", "profile"));
    let reply = Call::rpc("tools/list", json!({}))
        .send_as(&nothing, &mcp)
        .await;
    assert_eq!(reply.status, 403);
    assert_eq!(reply.challenge(), forbidden("files:read"));

    // The tool is found from the body too: a lying Mcp-Name is the transport's 400, not a
    // way around the scope.
    let mut lying = Call::tool("delete");
    lying.headers.retain(|(name, _)| *name != "mcp-name");
    let lying = lying
        .header("mcp-name", "whoami")
        .send_as(&reader, &mcp)
        .await;
    assert_eq!(lying.status, 400, "{lying:?}");

    // Broader scopes imply narrower ones, through a chain.
    for scopes in ["files:read files:write", "files:write", "files:admin"] {
        let token = sign(&keys.rsa1, Some("k1"), None, &claims("alice", scopes));
        let reply = Call::tool("delete").bearer(&token).send(&mcp).await;
        assert_eq!(reply.status, 200, "{scopes}: {reply:?}");
        assert_eq!(reply.text(), "deleted");
    }
}

#[tokio::test]
async fn prompts_and_resources_have_scopes_of_their_own() {
    let (keys, _auth, mcp) = setup().await;
    let forbidden = "Bearer error=\"insufficient_scope\", resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource\", scope=\"files:read files:write\", \
                     error_description=\"the token lacks a scope this operation needs\"";
    let reader = sign(&keys.rsa1, Some("k1"), None, &claims("alice", "files:read"));
    let writer = sign(
        &keys.rsa1,
        Some("k1"),
        None,
        &claims("alice", "files:write"),
    );
    let draft = || Call::rpc("prompts/get", json!({"name": "draft"}));
    let payroll = || Call::rpc("resources/read", json!({"uri": "file:///payroll"}));

    for (case, call) in [("prompt", draft()), ("resource", payroll())] {
        let reply = call.bearer(&reader).send(&mcp).await;
        assert_eq!(reply.status, 403, "{case}: {reply:?}");
        assert_eq!(reply.challenge(), forbidden, "{case}");
    }
    // Without a token, the challenge already names what the head says is asked for.
    let reply = payroll().send(&mcp).await;
    assert_eq!(reply.status, 401);
    assert!(
        reply
            .challenge()
            .ends_with("scope=\"files:read files:write\""),
        "{reply:?}"
    );
    // Other prompts and resources need the endpoint's scope only.
    let notes = Call::rpc("resources/read", json!({"uri": "file:///notes"}))
        .send_as(&reader, &mcp)
        .await;
    assert_eq!(notes.status, 200, "{notes:?}");

    let prompt = draft().bearer(&writer).send(&mcp).await;
    assert_eq!(prompt.status, 200, "{prompt:?}");
    assert_eq!(
        prompt.body["result"]["messages"][0]["content"]["text"],
        "a draft"
    );
    let read = payroll().bearer(&writer).send(&mcp).await;
    assert_eq!(read.status, 200, "{read:?}");
    assert_eq!(read.body["result"]["contents"][0]["text"], "salaries");

    // The target is read from the body: a header naming another one is refused.
    let mut lying = payroll();
    lying.headers.retain(|(name, _)| *name != "mcp-name");
    let lying = lying
        .header("mcp-name", "file:///notes")
        .send_as(&reader, &mcp)
        .await;
    assert_eq!(lying.status, 400, "{lying:?}");
}

#[tokio::test]
async fn request_state_sealed_for_one_principal_is_refused_for_another() {
    let (keys, _auth, mcp) = setup().await;
    let alice = sign(&keys.rsa1, Some("k1"), None, &claims("alice", "files:read"));
    let bob = sign(&keys.rsa1, Some("k1"), None, &claims("bob", "files:read"));
    let first = Call::tool("confirm").bearer(&alice).send(&mcp).await;
    assert_eq!(
        first.body["result"]["resultType"], "input_required",
        "{first:?}"
    );
    let state = first.body["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let retry = || {
        Call::rpc(
            "tools/call",
            json!({
                "name": "confirm", "arguments": {},
                "inputResponses": {"sure": {"action": "accept", "content": {}}},
                "requestState": state,
            }),
        )
    };
    let stolen = retry().bearer(&bob).send(&mcp).await;
    assert_eq!(stolen.status, 200);
    assert_eq!(stolen.body["error"]["code"], -32602, "{stolen:?}");
    assert_eq!(
        stolen.body["error"]["message"],
        "requestState does not belong to this request"
    );
    // The same user with a new token (another client, another scope) is the same principal.
    let mut again = claims("alice", "files:read files:write");
    again["client_id"] = json!("web-app");
    let alice_again = sign(&keys.rsa1, Some("k1"), None, &again);
    let done = retry().bearer(&alice_again).send(&mcp).await;
    assert_eq!(done.text(), "alice: Accept");
}

#[tokio::test]
async fn protected_resource_metadata_at_the_path_based_and_root_well_known_urls() {
    let keys = keys();
    let auth = AuthServer::start(vec![jwk(&keys.rsa1, "k1")]).await;
    let verifier = JwtVerifier::builder(ISSUER, auth.url("/jwks"))
        .build()
        .unwrap();
    let resource = "https://mcp.example.com/public/mcp";
    let rs = resource_server(resource, verifier);
    assert_eq!(
        rs.metadata_paths(),
        [
            "/.well-known/oauth-protected-resource/public/mcp",
            "/.well-known/oauth-protected-resource"
        ]
    );
    let mcp = serve(rs).await;
    let expected = json!({
        "resource_name": "Protected files",
        "resource": resource,
        "authorization_servers": [ISSUER],
        "scopes_supported": ["files:read", "files:write"],
        "bearer_methods_supported": ["header"],
    });
    for path in [
        "/.well-known/oauth-protected-resource/public/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let reply = Call::get(path).send(&mcp).await;
        assert_eq!(reply.status, 200, "{path}");
        assert_eq!(reply.body, expected, "{path}");
        assert_eq!(reply.headers["content-type"], "application/json");
        assert_eq!(reply.headers["access-control-allow-origin"], "*");
        // Public: no token, no Host check, and `offline_access` left out.
    }
    let mut post = Call::get("/.well-known/oauth-protected-resource/public/mcp");
    post.method = http::Method::POST;
    assert_eq!(post.send(&mcp).await.status, 405);
    for path in [
        "/.well-known/oauth-protected-resource/other",
        "/.well-known/oauth-protected-resource/public",
    ] {
        assert_eq!(Call::get(path).send(&mcp).await.status, 404, "{path}");
    }
    // Challenges name the path-based document.
    let reply = Call::tool("whoami").send(&mcp).await;
    assert_eq!(
        reply.challenge(),
        "Bearer resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp\", scope=\"files:read\""
    );
    // And tokens must name this resource, not its origin.
    let token = sign(&keys.rsa1, Some("k1"), None, &claims("alice", "files:read"));
    assert_eq!(whoami(&mcp, &token).await.status, 401);
    let mut claims = claims("alice", "files:read");
    claims["aud"] = json!(resource);
    let token = sign(&keys.rsa1, Some("k1"), None, &claims);
    assert_eq!(whoami(&mcp, &token).await.status, 200);
}

#[tokio::test]
async fn an_unknown_kid_refreshes_the_jwks_at_most_once_per_interval() {
    let keys = keys();
    let token =
        |key: &EncodingKey, kid: &str| sign(key, Some(kid), None, &claims("alice", "files:read"));
    let call = |token: String| Call::tool("whoami").bearer(&token);

    // Without a rate limit: an unknown kid fetches the set again and finds the rotated key.
    let auth = AuthServer::start(vec![jwk(&keys.rsa1, "k1")]).await;
    let eager = JwtVerifier::builder(ISSUER, auth.url("/jwks"))
        .min_refresh_interval(Duration::ZERO)
        .build()
        .unwrap();
    let mcp = serve(resource_server(RESOURCE, eager)).await;
    assert_eq!(call(token(&keys.rsa1, "k1")).send(&mcp).await.status, 200);
    assert_eq!(call(token(&keys.rsa1, "k1")).send(&mcp).await.status, 200);
    assert_eq!(auth.fetches(), 1, "a known kid is served from the cache");
    auth.set_keys(&[jwk(&keys.rsa1, "k1"), jwk(&keys.rsa2, "k2")]);
    assert_eq!(call(token(&keys.rsa2, "k2")).send(&mcp).await.status, 200);
    assert_eq!(auth.fetches(), 2, "the unknown kid fetched the set once");
    assert_eq!(call(token(&keys.rsa2, "k2")).send(&mcp).await.status, 200);
    assert_eq!(auth.fetches(), 2);

    // With the default kind of limit: made-up kids cannot make the server hammer the JWKS.
    let auth = AuthServer::start(vec![jwk(&keys.rsa1, "k1")]).await;
    let limited = JwtVerifier::builder(ISSUER, auth.url("/jwks"))
        .min_refresh_interval(Duration::from_hours(1))
        .build()
        .unwrap();
    let mcp = serve(resource_server(RESOURCE, limited)).await;
    assert_eq!(call(token(&keys.rsa1, "k1")).send(&mcp).await.status, 200);
    assert_eq!(auth.fetches(), 1);
    auth.set_keys(&[jwk(&keys.rsa1, "k1"), jwk(&keys.rsa2, "k2")]);
    for kid in ["k2", "k3", "k4", "k5", "k2"] {
        let reply = call(token(&keys.rsa2, kid)).send(&mcp).await;
        assert_eq!(reply.status, 401, "{kid}");
    }
    assert_eq!(auth.fetches(), 1, "no fetch within the interval");
    assert_eq!(call(token(&keys.rsa1, "k1")).send(&mcp).await.status, 200);

    // An authorization server that cannot be reached: 503, not a verdict on the token.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/jwks", closed.local_addr().unwrap());
    drop(closed);
    let unreachable = JwtVerifier::builder(ISSUER, url)
        .fetch_timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let mcp = serve(resource_server(RESOURCE, unreachable)).await;
    let reply = call(token(&keys.rsa1, "k1")).send(&mcp).await;
    assert_eq!(reply.status, 503, "{reply:?}");
    assert_eq!(reply.headers["retry-after"], "5");
}

#[tokio::test]
async fn introspection_accepts_only_active_tokens_for_this_resource_and_caches_answers() {
    let auth = AuthServer::start(vec![]).await;
    let now = now();
    let good = json!({
        "active": true, "aud": RESOURCE, "iss": ISSUER, "sub": "carol", "client_id": "cli",
        "scope": "files:read", "exp": now + 600, "token_type": "Bearer",
    });
    {
        let mut table = auth.introspection.lock().unwrap();
        table.insert("opaque-good".into(), good.clone());
        table.insert(
            "opaque-inactive".into(),
            json!({"active": false, "aud": RESOURCE, "sub": "carol"}),
        );
        let mut other = good.clone();
        other["aud"] = json!("https://mcp.example.com.evil");
        table.insert("opaque-other-audience".into(), other);
        let mut expired = good.clone();
        expired["exp"] = json!(now - 3600);
        table.insert("opaque-expired".into(), expired);
        let mut refresh = good.clone();
        refresh["token_type"] = json!("refresh_token");
        table.insert("opaque-refresh".into(), refresh);
        let mut foreign = good.clone();
        foreign["iss"] = json!("https://auth.example.com.evil");
        table.insert("opaque-foreign".into(), foreign);
    }

    let verifier = IntrospectionVerifier::builder(
        auth.url("/introspect"),
        ClientAuth::basic(RS_CLIENT.0, RS_CLIENT.1),
    )
    .issuer(ISSUER)
    .build()
    .unwrap();
    let mcp = serve(resource_server(RESOURCE, verifier)).await;

    let reply = whoami(&mcp, "opaque-good").await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let seen: Value = serde_json::from_str(reply.text()).unwrap();
    assert_eq!(seen["subject"], "carol");
    assert_eq!(seen["scopes"], json!(["files:read"]));
    assert_eq!(
        auth.introspections
            .load(std::sync::atomic::Ordering::SeqCst),
        1
    );
    // The answer is cached: the next requests ask nobody.
    for _ in 0..3 {
        assert_eq!(
            Call::tool("whoami")
                .send_as("opaque-good", &mcp)
                .await
                .status,
            200
        );
    }
    assert_eq!(
        auth.introspections
            .load(std::sync::atomic::Ordering::SeqCst),
        1
    );

    for (token, description) in [
        ("opaque-inactive", "the token is not active"),
        ("opaque-unknown", "the token is not active"),
        (
            "opaque-other-audience",
            "the token was not issued for this resource",
        ),
        ("opaque-expired", "the token has expired"),
        ("opaque-refresh", "a refresh token is not an access token"),
        (
            "opaque-foreign",
            "the token was not issued by the expected authorization server",
        ),
    ] {
        assert_refused(&mcp, token, description, token).await;
    }

    // A resource server with the wrong credentials gets no verdict: 503.
    let wrong = IntrospectionVerifier::builder(
        auth.url("/introspect"),
        ClientAuth::basic(RS_CLIENT.0, "guess"),
    )
    .build()
    .unwrap();
    let mcp = serve(resource_server(RESOURCE, wrong)).await;
    assert_eq!(
        Call::tool("whoami")
            .send_as("opaque-good", &mcp)
            .await
            .status,
        503
    );
}

#[test]
fn configurations_that_cannot_work_are_refused() {
    let jwt = || {
        JwtVerifier::builder(ISSUER, "https://auth.example.com/jwks")
            .build()
            .unwrap()
    };
    let base = |resource: &str| {
        ResourceServer::builder(resource)
            .authorization_server(ISSUER)
            .verifier(jwt())
    };
    assert!(base(RESOURCE).build().is_ok());
    assert!(
        base("http://mcp.example.com").build().is_err(),
        "http off loopback"
    );
    assert!(
        base("https://mcp.example.com#x").build().is_err(),
        "fragment"
    );
    assert!(
        ResourceServer::builder(RESOURCE)
            .verifier(jwt())
            .build()
            .is_err(),
        "no authorization server"
    );
    assert!(
        ResourceServer::builder(RESOURCE)
            .authorization_server(ISSUER)
            .build()
            .is_err(),
        "no verifier"
    );
    assert!(
        base(RESOURCE).required_scopes(["a b"]).build().is_err(),
        "scope with a space"
    );
    assert!(
        JwtVerifier::builder(ISSUER, "http://auth.example.com/jwks")
            .build()
            .is_err()
    );
    for algorithms in [vec!["HS256"], vec!["none"], vec![]] {
        assert!(
            JwtVerifier::builder(ISSUER, "https://auth.example.com/jwks")
                .algorithms(algorithms.clone())
                .build()
                .is_err(),
            "{algorithms:?}"
        );
    }
}
