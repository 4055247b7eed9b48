//! Ways around a scope, tried as an attacker would: the target of a `tools/call`,
//! `prompts/get`, `resources/read` or `completion/complete` written so that a second reading
//! of the request could disagree with the one that runs. Each must be refused for a token
//! that lacks the target's scope, and must never reach the handler.

use std::sync::Arc;

use http::HeaderMap;
use mcp_jsonrpc::Principal;
use mcp_transport_http::{AuthenticateFuture, Authenticator, HttpServer, HttpServerConfig};
use serde_json::json;

use crate::support::{Call, Reply, claims, sign};

/// The base64 form of an `Mcp-Name` value, as a client may send any name.
fn base64_name(name: &str) -> String {
    use base64::Engine as _;
    format!(
        "=?base64?{}?=",
        base64::engine::general_purpose::STANDARD.encode(name)
    )
}

/// A refusal: `403` (the scope) or `400` (a target that cannot be read as one). Never the
/// handler's answer.
fn assert_refused(reply: &Reply, case: &str) {
    assert!(
        reply.status == 403 || reply.status == 400,
        "{case}: not refused: {reply:?}"
    );
    assert!(reply.body.get("result").is_none(), "{case}: ran: {reply:?}");
}

/// Every JSON type, for members the target's reading must not stumble on.
const EVERY_TYPE: [&str; 8] = [
    "0",
    "-1.5e300",
    "null",
    "true",
    r#""file:///notes""#,
    "[]",
    r#"[0,{"name":"whoami"}]"#,
    r#"{"name":"whoami","uri":"file:///notes"}"#,
];

/// The protected server of `setup`, a token with `files:read` and one with `files:write`
/// (and the authorization server, which must outlive them).
async fn protected() -> (
    mcp_transport_http::RunningServer,
    String,
    String,
    crate::support::AuthServer,
) {
    let (keys, auth, mcp) = super::setup().await;
    let token = |scope| sign(&keys.rsa1, Some("k1"), None, &claims("alice", scope));
    (mcp, token("files:read"), token("files:write"), auth)
}

#[tokio::test]
async fn extra_members_of_every_type_do_not_get_around_a_scope() {
    let (mcp, reader, writer, _auth) = protected().await;
    for extra in EVERY_TYPE {
        for (member, position) in [("uri", "after"), ("name", "after"), ("zz", "before")] {
            let cases = [
                ("tools/call", "name", "delete", r#""arguments":{}"#),
                ("prompts/get", "name", "draft", r#""arguments":{}"#),
                ("resources/read", "uri", "file:///payroll", ""),
            ];
            for (method, key, target, rest) in cases {
                if member == key {
                    continue;
                }
                let target_member = format!(r#""{key}":"{target}""#);
                let extra_member = format!(r#""{member}":{extra}"#);
                let members = match position {
                    "before" => [extra_member.as_str(), target_member.as_str(), rest],
                    _ => [target_member.as_str(), extra_member.as_str(), rest],
                };
                let params = format!(
                    "{{{}}}",
                    members
                        .iter()
                        .filter(|m| !m.is_empty())
                        .copied()
                        .collect::<Vec<_>>()
                        .join(",")
                );
                for header in [target.to_owned(), base64_name(target)] {
                    let case = format!("{method} {params} Mcp-Name {header}");
                    let reply = Call::raw(method, &params, Some(&header))
                        .send_as(&reader, &mcp)
                        .await;
                    reply.refuses_for_write(&case);
                }
                // The same request with the scope runs: the extra member is no error.
                let reply = Call::raw(method, &params, Some(target))
                    .send_as(&writer, &mcp)
                    .await;
                assert_eq!(reply.status, 200, "{method} {params}: {reply:?}");
                assert!(reply.body.get("result").is_some(), "{params}: {reply:?}");
            }
        }
    }
}

#[tokio::test]
async fn a_target_given_twice_or_not_as_text_is_refused() {
    let (mcp, reader, _, _auth) = protected().await;
    let cases = [
        (
            "tools/call",
            r#"{"name":"whoami","name":"delete","arguments":{}}"#,
            "whoami",
        ),
        (
            "tools/call",
            r#"{"name":"delete","name":"whoami","arguments":{}}"#,
            "whoami",
        ),
        (
            "tools/call",
            r#"{"name":"delete","n\u0061me":"whoami"}"#,
            "whoami",
        ),
        (
            "tools/call",
            r#"{"name":["delete"],"arguments":{}}"#,
            "delete",
        ),
        ("tools/call", r#"{"name":null,"arguments":{}}"#, "delete"),
        ("tools/call", r#"{"arguments":{"name":"delete"}}"#, "delete"),
        ("prompts/get", r#"{"name":"x","name":"draft"}"#, "x"),
        (
            "resources/read",
            r#"{"uri":"file:///notes","uri":"file:///payroll"}"#,
            "file:///notes",
        ),
        (
            "resources/read",
            r#"{"uri":{"href":"file:///payroll"}}"#,
            "file:///payroll",
        ),
    ];
    for (method, params, header) in cases {
        for header in [header.to_owned(), base64_name(header)] {
            let reply = Call::raw(method, params, Some(&header))
                .send_as(&reader, &mcp)
                .await;
            assert_refused(&reply, &format!("{method} {params} {header}"));
        }
    }
}

#[tokio::test]
async fn a_scoped_name_spelled_another_way_is_still_scoped() {
    let (mcp, reader, writer, _auth) = protected().await;
    // A JSON escape in the name, with the header in either form.
    for header in ["delete".to_owned(), base64_name("delete")] {
        let reply = Call::raw(
            "tools/call",
            r#"{"name":"del\u0065te","arguments":{}}"#,
            Some(&header),
        )
        .send_as(&reader, &mcp)
        .await;
        assert_eq!(reply.status, 403, "{header}: {reply:?}");
    }
    // A resource a scoped template serves, and other spellings of a scoped URI.
    for uri in [
        "file:///private/a",
        "file:///private/anything-at-all",
        "file:///private/%61",
        "FILE:///payroll",
        "file:///p%61yroll",
        "file:///%70ayroll",
    ] {
        let reply = Call::rpc("resources/read", json!({"uri": uri}))
            .send_as(&reader, &mcp)
            .await;
        reply.refuses_for_write(uri);
    }
    let private = Call::rpc("resources/read", json!({"uri": "file:///private/a"}))
        .send_as(&writer, &mcp)
        .await;
    assert_eq!(
        private.body["result"]["contents"][0]["text"], "private",
        "{private:?}"
    );
    // Completing a scoped prompt's arguments uses the prompt.
    let complete = Call::rpc(
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "draft"}, "argument": {"name": "a", "value": ""}}),
    )
    .send_as(&reader, &mcp)
    .await;
    assert_eq!(complete.status, 403, "{complete:?}");
}

/// A principal whose authenticator lets every request through the endpoint, but which
/// itself may not use `delete`: the server core asks it, on the name it dispatches.
#[derive(Debug)]
struct NoDelete;

impl Principal for NoDelete {
    fn id(&self) -> &'static str {
        "no-delete"
    }

    fn permits(&self, method: &str, target: &str) -> bool {
        !(method == "tools/call" && target == "delete")
    }
}

struct Everyone;

impl Authenticator for Everyone {
    fn authenticate<'a>(&'a self, _headers: &'a HeaderMap) -> AuthenticateFuture<'a> {
        Box::pin(async { Ok(Arc::new(NoDelete) as Arc<dyn Principal>) })
    }
}

#[tokio::test]
async fn the_core_asks_the_principal_about_the_target_it_dispatches() {
    let mcp = HttpServer::bind(
        HttpServer::DEFAULT_ADDR,
        crate::support::mcp_server(),
        HttpServerConfig::default().authenticator(Everyone),
    )
    .await
    .unwrap();
    let refused = Call::tool("delete").send(&mcp).await;
    assert_eq!(refused.status, 200, "{refused:?}");
    assert_eq!(refused.body["error"]["code"], -32600, "{refused:?}");
    assert!(refused.body.get("result").is_none());
    // An escaped spelling is the same name once read.
    let escaped = Call::raw(
        "tools/call",
        r#"{"name":"d\u0065lete","arguments":{}}"#,
        Some("delete"),
    )
    .send(&mcp)
    .await;
    assert_eq!(escaped.body["error"]["code"], -32600, "{escaped:?}");
    let allowed = Call::tool("whoami").send(&mcp).await;
    assert_eq!(allowed.status, 200);
    assert!(allowed.text().contains("no-delete"), "{allowed:?}");
}

/// The acknowledgement of a `subscriptions/listen` stream opened with `token`: the first
/// event's data.
async fn acknowledged(
    mcp: &mcp_transport_http::RunningServer,
    token: &str,
    uris: &[&str],
) -> serde_json::Value {
    use http_body_util::BodyExt as _;
    let call = Call::rpc(
        "subscriptions/listen",
        json!({"notifications": {"resourceSubscriptions": uris}}),
    )
    .bearer(token);
    let client: hyper_util::client::legacy::Client<_, http_body_util::Full<bytes::Bytes>> =
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build_http();
    let mut request = http::Request::post(format!("http://{}/mcp", mcp.local_addr()));
    for (name, value) in &call.headers {
        request = request.header(*name, value);
    }
    let body = bytes::Bytes::from(call.body.unwrap().to_string());
    let response = client
        .request(request.body(http_body_util::Full::new(body)).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut body = response.into_body();
    let mut text = String::new();
    loop {
        let frame = tokio::time::timeout(std::time::Duration::from_secs(10), body.frame())
            .await
            .expect("an event in time")
            .expect("the stream goes on")
            .unwrap();
        if let Ok(data) = frame.into_data() {
            text.push_str(std::str::from_utf8(&data).unwrap());
        }
        if let Some(event) = text.split("\n\n").find(|e| e.contains("acknowledged")) {
            let data = event
                .lines()
                .find_map(|line| line.strip_prefix("data: "))
                .expect("a data line");
            return serde_json::from_str(data).unwrap();
        }
    }
}

#[tokio::test]
async fn a_listen_stream_watches_no_resource_its_principal_may_not_read() {
    let (mcp, reader, writer, _auth) = protected().await;
    let uris = ["file:///notes", "file:///payroll", "file:///private/a"];
    let ack = acknowledged(&mcp, &reader, &uris).await;
    assert_eq!(
        ack["params"]["notifications"]["resourceSubscriptions"],
        json!(["file:///notes"]),
        "{ack}"
    );
    let ack = acknowledged(&mcp, &writer, &uris).await;
    assert_eq!(
        ack["params"]["notifications"]["resourceSubscriptions"],
        json!(uris),
        "{ack}"
    );
}
