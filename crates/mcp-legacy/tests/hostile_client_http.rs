//! Hostile legacy servers against the dual-era client over HTTP: a raw
//! HTTP/1.1 server on 127.0.0.1 (the client tests' `support::http`) that refuses the
//! modern probe, so the client opens a 2025-11-25 Streamable HTTP session, then answers
//! the handshake or one request of each case with hostile content. Each case asserts the
//! exact outcome; after a session case a valid request in the same session must succeed;
//! nothing may panic.
//!
//! The rules: <https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle>, <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>
//! and, for detection, <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http> (Backward
//! Compatibility).

#![cfg(feature = "http")]

#[path = "../../mcp-client/tests/support/mod.rs"]
mod support;

use std::time::Duration;

use mcp_client::{Client, Error};
use mcp_legacy::Error as ConnectError;
use mcp_legacy::client::Connector;
use mcp_transport_http::{Error as HttpError, HttpClientConfig};
use mcp_types::Era;
use serde_json::{Value, json};
use support::http::{Reply, Seen, reply, serve, sse};
use support::{count_panics, panics};

const MAX_BODY: usize = 64 << 10;

use support::hostile::{self, Case, Expect, call, list};

use support::http::session_json_reply as json_reply;

/// A valid legacy result for the request `seen` (no `resultType`).
fn legacy_result(seen: &Seen) -> Value {
    if seen.body["method"] == "tools/call" {
        json!({"content": []})
    } else {
        json!({"tools": []})
    }
}

#[allow(
    clippy::needless_pass_by_value,
    reason = "the table builds each result in place"
)]
fn response(seen: &Seen, id: Option<Value>, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.unwrap_or_else(|| seen.body["id"].clone()), "result": result})
}

fn initialize_result() -> Value {
    json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
           "serverInfo": {"name": "hostile", "version": "1"}})
}

/// A legacy server: the modern probe gets `400` without a modern error, `initialize` the
/// result `initialize` gives (or the handshake case's), notifications and posted answers
/// `202`, the GET stream `405`, the probe (`tools/list` for the cursor `probe`) a valid
/// result, and every other request `hostile`'s reply.
fn legacy(
    initialize: fn(&Seen) -> Reply,
    hostile: fn(&Seen) -> Reply,
) -> impl FnMut(&Seen) -> Reply + Send + 'static {
    move |seen| {
        if seen.line.starts_with("GET") {
            return reply("405 Method Not Allowed", &[("allow", "POST")], b"");
        }
        match seen.body["method"].as_str() {
            Some("server/discover") => reply("400 Bad Request", &[], b""),
            Some("initialize") => initialize(seen),
            Some(m) if m.starts_with("notifications/") => reply("202 Accepted", &[], b""),
            None => reply("202 Accepted", &[], b""),
            Some(_) if seen.body["params"]["cursor"] == "probe" => {
                json_reply(&response(seen, None, legacy_result(seen)))
            }
            Some(_) => hostile(seen),
        }
    }
}

fn good_initialize(seen: &Seen) -> Reply {
    json_reply(&response(seen, None, initialize_result()))
}

async fn connect(
    initialize: fn(&Seen) -> Reply,
    hostile: fn(&Seen) -> Reply,
) -> (
    Result<mcp_legacy::client::HttpConnection, ConnectError>,
    tokio::sync::mpsc::UnboundedReceiver<Seen>,
) {
    let (url, seen) = serve(legacy(initialize, hostile)).await;
    let config = HttpClientConfig::default().max_response_bytes(MAX_BODY);
    let connection = Connector::new(Client::builder("hostile", "1"))
        .probe_timeout(Duration::from_secs(5))
        .connect_http(&url, config)
        .await;
    (connection, seen)
}

fn http(e: &Error) -> Option<&HttpError> {
    match e {
        Error::Http(e) => Some(e),
        _ => None,
    }
}

fn status(e: &Error, code: u16) -> bool {
    matches!(http(e), Some(HttpError::Status { status, .. }) if status.as_u16() == code)
}

#[allow(clippy::too_many_lines, reason = "one table")]
fn cases() -> Vec<Case> {
    vec![
        list(
            "500 without a body",
            |_| reply("500 Internal Server Error", &[], b""),
            Expect::Fails("Status(500)", |e| status(e, 500)),
        ),
        list(
            "a 200 with an HTML body",
            |_| reply("200 OK", &[("content-type", "text/html")], b"<html></html>"),
            Expect::Fails("Status(200)", |e| status(e, 200)),
        ),
        list(
            "a body past the limit",
            |s| {
                let mut body = response(s, None, legacy_result(s));
                body["result"]["pad"] = json!("p".repeat(MAX_BODY));
                json_reply(&body)
            },
            Expect::Fails("BodyTooLarge", |e| {
                matches!(http(e), Some(HttpError::BodyTooLarge { .. }))
            }),
        ),
        list(
            "a JSON response to another id",
            |s| json_reply(&response(s, Some(json!(987_654)), legacy_result(s))),
            Expect::Fails("UnexpectedResponse(987654)", |e| {
                matches!(
                    e,
                    Error::UnexpectedResponse {
                        id: Some(mcp_types::RequestId::Integer(987_654)),
                        ..
                    }
                )
            }),
        ),
        list(
            "an SSE response to another id, then the right one",
            |s| {
                sse(
                    &[
                        response(
                            s,
                            Some(json!(987_654)),
                            json!({"tools": [{"name": "wrong"}]}),
                        )
                        .to_string(),
                        response(s, None, legacy_result(s)).to_string(),
                    ],
                    false,
                )
            },
            Expect::Ok,
        ),
        list(
            "an SSE event that is not JSON-RPC, then the response",
            |s| {
                sse(
                    &[
                        "{not json".to_owned(),
                        response(s, None, legacy_result(s)).to_string(),
                    ],
                    false,
                )
            },
            Expect::Ok,
        ),
        list(
            "an SSE stream that ends without a response or an event id",
            |_| sse(&[], false),
            Expect::Fails(
                "MayHaveRun(tools/list)",
                |e| matches!(e, Error::MayHaveRun { method } if method == "tools/list"),
            ),
        ),
        list(
            "40 server pings, then the response",
            |s| {
                let mut events: Vec<String> = (0..40)
                    .map(|n| {
                        json!({"jsonrpc": "2.0", "id": format!("s{n}"), "method": "ping"})
                            .to_string()
                    })
                    .collect();
                events.push(response(s, None, legacy_result(s)).to_string());
                sse(&events, false)
            },
            Expect::Ok,
        ),
        list(
            "a server request the client has no handler for",
            |s| {
                sse(&[
            json!({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}}).to_string(),
            response(s, None, legacy_result(s)).to_string()], false)
            },
            Expect::Ok,
        ),
        list(
            "a result without tools",
            |s| json_reply(&response(s, None, json!({}))),
            Expect::Fails(
                "Decode(tools/list)",
                |e| matches!(e, Error::Decode { method, .. } if method == "tools/list"),
            ),
        ),
        // Deep nesting: skipped without recursion in a member the client does not read
        // (as in the modern client), refused at serde_json's depth limit in one it reads.
        list(
            "30 000 levels in a member the client does not read",
            |s| {
                reply(
                    "200 OK",
                    &[("content-type", "application/json")],
                    format!(
                        r#"{{"jsonrpc":"2.0","id":{},"result":{{"tools":[],"x":{}}}}}"#,
                        s.body["id"],
                        "[".repeat(30_000) + &"]".repeat(30_000)
                    )
                    .as_bytes(),
                )
            },
            Expect::Ok,
        ),
        list(
            "30 000 levels as the tools",
            |s| {
                reply(
                    "200 OK",
                    &[("content-type", "application/json")],
                    format!(
                        r#"{{"jsonrpc":"2.0","id":{},"result":{{"tools":{}}}}}"#,
                        s.body["id"],
                        "[".repeat(30_000) + &"]".repeat(30_000)
                    )
                    .as_bytes(),
                )
            },
            Expect::Fails(
                "Decode(tools/list)",
                |e| matches!(e, Error::Decode { method, .. } if method == "tools/list"),
            ),
        ),
        list(
            "a duplicate member in the result",
            |s| {
                reply(
                    "200 OK",
                    &[("content-type", "application/json")],
                    format!(
                        r#"{{"jsonrpc":"2.0","id":{},"result":{{"tools":[],"tools":[{{"name":"x"}}]}}}}"#,
                        s.body["id"]
                    )
                    .as_bytes(),
                )
            },
            Expect::Fails(
                "Decode(tools/list)",
                |e| matches!(e, Error::Decode { method, .. } if method == "tools/list"),
            ),
        ),
        // A legacy result has no resultType: whatever one claims, it is complete, so a
        // legacy server cannot steer the modern input loop.
        call(
            "a legacy result claiming input_required",
            |s| {
                json_reply(&response(
                    s,
                    None,
                    json!({"content": [], "resultType": "input_required", "requestState": "x",
                   "inputRequests": {"k": {"method": "roots/list", "params": {}}}}),
                ))
            },
            Expect::Ok,
        ),
        list(
            "a legacy result claiming an unknown resultType",
            |s| {
                json_reply(&response(
                    s,
                    None,
                    json!({"tools": [], "resultType": "hologram"}),
                ))
            },
            Expect::Ok,
        ),
    ]
}

#[tokio::test]
async fn the_session_table() {
    count_panics();
    for case in &cases() {
        let name = case.name;
        let (connection, _seen) = connect(good_initialize, case.reply).await;
        let connection = connection.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(connection.verdict.era, Era::Legacy, "{name}");
        let client = &connection.client;
        hostile::check(client, case).await;
        client.shutdown(Duration::from_secs(1)).await;
    }
    assert_eq!(panics(), 0, "nothing may panic, even caught");
}

/// A handshake case: its name, `initialize`'s reply, and the connection's error.
type HandshakeCase = (&'static str, fn(&Seen) -> Reply, fn(&ConnectError) -> bool);

#[tokio::test]
async fn the_handshake_table() {
    count_panics();
    let cases: [HandshakeCase; 4] = [
        (
            "initialize answers an unsupported version",
            |s| {
                let mut result = initialize_result();
                result["protocolVersion"] = json!("1999-01-01");
                json_reply(&response(s, None, result))
            },
            |e| matches!(e, ConnectError::UnsupportedVersion { answered, .. } if answered == "1999-01-01"),
        ),
        (
            "initialize answers something else",
            |s| json_reply(&response(s, None, json!({"tools": []}))),
            |e| matches!(e, ConnectError::Malformed(_)),
        ),
        (
            "initialize answers 500",
            |_| reply("500 Internal Server Error", &[], b""),
            |e| matches!(e, ConnectError::Handshake(e) if status(e, 500)),
        ),
        (
            "initialize answers another id",
            |s| json_reply(&response(s, Some(json!(987_654)), initialize_result())),
            |e| matches!(e, ConnectError::Handshake(Error::UnexpectedResponse { .. })),
        ),
    ];
    for (name, initialize, expected) in cases {
        let (connection, _seen) =
            connect(initialize, |_| reply("500 Internal Server Error", &[], b"")).await;
        match connection {
            Err(e) if expected(&e) => {}
            other => panic!("{name}: {other:?}"),
        }
    }
    assert_eq!(panics(), 0);
}

#[tokio::test]
async fn a_session_id_that_changes_is_not_followed() {
    count_panics();
    let (connection, mut seen) = connect(good_initialize, |s| {
        reply(
            "200 OK",
            &[
                ("content-type", "application/json"),
                ("mcp-session-id", "s-evil"),
            ],
            response(s, None, legacy_result(s)).to_string().as_bytes(),
        )
    })
    .await;
    let connection = connection.unwrap();
    for _ in 0..2 {
        connection.client.list_tools(None).await.unwrap();
    }
    connection.client.list_tools(Some("probe")).await.unwrap();
    let mut sessions = Vec::new();
    while let Ok(request) = seen.try_recv() {
        if request.body["method"] == "tools/list" {
            sessions.push(request.header("mcp-session-id").map(str::to_owned));
        }
    }
    assert_eq!(
        sessions,
        vec![Some("s-1".to_owned()); 3],
        "the session of initialize is kept"
    );
    assert_eq!(panics(), 0);
}
