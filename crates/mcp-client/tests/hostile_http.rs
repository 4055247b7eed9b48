//! Hostile servers against the modern client over Streamable HTTP: a raw
//! HTTP/1.1 server on 127.0.0.1 answers one request of each case with a wrong status,
//! content type or header block, a redirect, an oversize or lying body, an SSE stream
//! that breaks, floods or never ends, responses to the wrong id, malformed results. Each
//! case asserts the exact typed error (or the result), then a valid call with the same
//! client must succeed, and nothing may have panicked.
//!
//! The rules: <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http> (one POST per
//! request, its reply JSON or SSE, statuses) and <https://modelcontextprotocol.io/specification/2026-07-28/basic>.

mod support;

use std::time::Duration;

use mcp_client::{Client, Error};
use mcp_transport_http::{Error as HttpError, HttpClientConfig};
use serde_json::{Value, json};
use support::http::{Reply, Seen, json, reply, serve, sse};
use support::{count_panics, panics};

/// The client's body limit in this suite.
const MAX_BODY: usize = 64 << 10;
/// The client's SSE event limit in this suite.
const MAX_EVENT: usize = 16 << 10;
/// How long the client waits for a reply in this suite (only the stream that never ends
/// waits it out).
const TIMEOUT: Duration = Duration::from_millis(500);

use support::hostile::{self, Case, Expect, call, list};

/// A valid result for the request `seen`.
fn valid_result(seen: &Seen) -> Value {
    if seen.body["method"] == "tools/call" {
        json!({"resultType": "complete", "content": []})
    } else {
        json!({"resultType": "complete", "tools": []})
    }
}

/// The valid response to `seen`, with its id replaced by `id` when given.
fn response(seen: &Seen, id: Option<Value>) -> Value {
    json!({"jsonrpc": "2.0", "id": id.unwrap_or_else(|| seen.body["id"].clone()), "result": valid_result(seen)})
}

fn result(seen: &Seen, result: &Value) -> Reply {
    json(&json!({"jsonrpc": "2.0", "id": seen.body["id"], "result": result}))
}

fn error_body(seen: &Seen, code: i32) -> String {
    json!({"jsonrpc": "2.0", "id": seen.body["id"], "error": {"code": code, "message": "no"}})
        .to_string()
}

fn http(e: &Error) -> Option<&HttpError> {
    match e {
        Error::Http(e) => Some(e),
        _ => None,
    }
}

fn status(e: &Error, code: u16) -> bool {
    matches!(http(e), Some(HttpError::Status { status, error: None }) if status.as_u16() == code)
}

fn protocol(e: &Error, code: i32) -> bool {
    e.protocol().is_some_and(|p| p.code.0 == code)
}

fn unexpected(e: &Error, id: &Value) -> bool {
    matches!(e, Error::UnexpectedResponse { id: got, .. } if serde_json::to_value(got).ok().as_ref() == Some(id))
}

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

/// An SSE reply whose one event's `data` is exactly `len` bytes: a `tools/list` response
/// padded with a member the client ignores.
fn event_of(seen: &Seen, len: usize) -> Reply {
    let mut message = response(seen, None);
    message["result"]["pad"] = json!("");
    let bare = message.to_string().len();
    message["result"]["pad"] = json!("p".repeat(len - bare));
    sse(&[message.to_string()], false)
}

/// A JSON reply whose body is exactly `len` bytes.
fn body_of(seen: &Seen, len: usize) -> Reply {
    let mut message = response(seen, None);
    message["result"]["pad"] = json!("");
    let bare = message.to_string().len();
    message["result"]["pad"] = json!("p".repeat(len - bare));
    json(&message)
}

#[allow(clippy::too_many_lines, reason = "one table")]
fn cases() -> Vec<Case> {
    vec![
        // Statuses, with and without bodies.
        list(
            "500 without a body",
            |_| reply("500 Internal Server Error", &[], b""),
            Expect::Fails("Status(500)", |e| status(e, 500)),
        ),
        list(
            "500 with an HTML body",
            |_| {
                reply(
                    "500 Internal Server Error",
                    &[("content-type", "text/html")],
                    b"<h1>oops</h1>",
                )
            },
            Expect::Fails("Status(500)", |e| status(e, 500)),
        ),
        list(
            "500 with a JSON-RPC error",
            |s| {
                reply(
                    "500 Internal Server Error",
                    &[("content-type", "application/json")],
                    error_body(s, -32603).as_bytes(),
                )
            },
            Expect::Fails("Protocol(-32603)", |e| protocol(e, -32603)),
        ),
        list(
            "404 with -32601",
            |s| {
                reply(
                    "404 Not Found",
                    &[("content-type", "application/json")],
                    error_body(s, -32601).as_bytes(),
                )
            },
            Expect::Fails("Protocol(-32601)", |e| protocol(e, -32601)),
        ),
        list(
            "400 with a result instead of an error",
            |s| {
                reply(
                    "400 Bad Request",
                    &[("content-type", "application/json")],
                    response(s, None).to_string().as_bytes(),
                )
            },
            Expect::Fails("Status(400)", |e| status(e, 400)),
        ),
        list(
            "429 with Retry-After",
            |_| reply("429 Too Many Requests", &[("retry-after", "1")], b""),
            Expect::Fails("Status(429)", |e| status(e, 429)),
        ),
        list(
            "503 with a plain-text body",
            |_| {
                reply(
                    "503 Service Unavailable",
                    &[("content-type", "text/plain")],
                    b"busy",
                )
            },
            Expect::Fails("Status(503)", |e| status(e, 503)),
        ),
        list(
            "401 without an authorizer",
            |_| {
                reply(
                    "401 Unauthorized",
                    &[("www-authenticate", r#"Bearer realm="x""#)],
                    b"",
                )
            },
            Expect::Fails(
                "Unauthorized(401)",
                |e| matches!(http(e), Some(HttpError::Unauthorized { status, .. }) if status.as_u16() == 401),
            ),
        ),
        list(
            "a redirect to another origin",
            |_| {
                reply(
                    "302 Found",
                    &[("location", "https://evil.example/mcp")],
                    b"",
                )
            },
            Expect::Fails(
                "Redirect(302, evil)",
                |e| matches!(http(e), Some(HttpError::Redirect { status, location: Some(l) }) if status.as_u16() == 302 && l == "https://evil.example/mcp"),
            ),
        ),
        list(
            "a redirect without a Location",
            |_| reply("307 Temporary Redirect", &[], b""),
            Expect::Fails(
                "Redirect(307, none)",
                |e| matches!(http(e), Some(HttpError::Redirect { status, location: None }) if status.as_u16() == 307),
            ),
        ),
        list(
            "204 No Content",
            |_| Reply::Close(b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n".to_vec()),
            Expect::Fails("ContentType(none)", |e| {
                matches!(http(e), Some(HttpError::ContentType { content_type: None }))
            }),
        ),
        // Content types and heads.
        list(
            "a 200 with an HTML body",
            |_| reply("200 OK", &[("content-type", "text/html")], b"<html></html>"),
            Expect::Fails(
                "ContentType(text/html)",
                |e| matches!(http(e), Some(HttpError::ContentType { content_type: Some(t) }) if t == "text/html"),
            ),
        ),
        list(
            "a 200 without a Content-Type",
            |s| reply("200 OK", &[], response(s, None).to_string().as_bytes()),
            Expect::Fails("ContentType(none)", |e| {
                matches!(http(e), Some(HttpError::ContentType { content_type: None }))
            }),
        ),
        list(
            "a header of 1 MiB",
            |s| {
                reply(
                    "200 OK",
                    &[
                        ("content-type", "application/json"),
                        ("x-huge", &"h".repeat(1 << 20)),
                    ],
                    response(s, None).to_string().as_bytes(),
                )
            },
            Expect::Fails("Send", |e| {
                matches!(http(e), Some(HttpError::Send { connect: false, .. }))
            }),
        ),
        list(
            "200 header fields",
            |s| {
                let fields: Vec<(String, String)> = (0..200)
                    .map(|n| (format!("x-h{n}"), "v".to_owned()))
                    .collect();
                let mut fields: Vec<(&str, &str)> = fields
                    .iter()
                    .map(|(n, v)| (n.as_str(), v.as_str()))
                    .collect();
                fields.push(("content-type", "application/json"));
                reply("200 OK", &fields, response(s, None).to_string().as_bytes())
            },
            Expect::Fails("Send", |e| {
                matches!(http(e), Some(HttpError::Send { connect: false, .. }))
            }),
        ),
        list(
            "a status line that is not HTTP",
            |_| Reply::Close(b"SSH-2.0-OpenSSH_9.6\r\n\r\n".to_vec()),
            Expect::Fails("Send", |e| {
                matches!(http(e), Some(HttpError::Send { connect: false, .. }))
            }),
        ),
        // Bodies: garbage, limits, lies.
        list(
            "a JSON body that is not JSON",
            |_| {
                reply(
                    "200 OK",
                    &[("content-type", "application/json")],
                    b"{not json",
                )
            },
            Expect::Fails("Decode", |e| matches!(http(e), Some(HttpError::Decode(_)))),
        ),
        list(
            "an empty JSON body",
            |_| reply("200 OK", &[("content-type", "application/json")], b""),
            Expect::Fails("Decode", |e| matches!(http(e), Some(HttpError::Decode(_)))),
        ),
        list(
            "the response in a batch",
            |s| {
                reply(
                    "200 OK",
                    &[("content-type", "application/json")],
                    format!("[{}]", response(s, None)).as_bytes(),
                )
            },
            Expect::Fails("Decode", |e| matches!(http(e), Some(HttpError::Decode(_)))),
        ),
        list("a body at the limit", |s| body_of(s, MAX_BODY), Expect::Ok),
        list(
            "a body one byte past the limit",
            |s| body_of(s, MAX_BODY + 1),
            Expect::Fails("BodyTooLarge", |e| {
                matches!(http(e), Some(HttpError::BodyTooLarge { limit: MAX_BODY }))
            }),
        ),
        list(
            "a chunked body past the limit",
            |_| {
                let chunk = format!("{:x}\r\n{}\r\n", 8192, "x".repeat(8192));
                let body = chunk.repeat(MAX_BODY / 8192 + 2);
                Reply::Close(format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n{body}0\r\n\r\n").into_bytes())
            },
            Expect::Fails("BodyTooLarge", |e| {
                matches!(http(e), Some(HttpError::BodyTooLarge { limit: MAX_BODY }))
            }),
        ),
        list(
            "a Content-Length that lies (shorter body)",
            |s| {
                let body = response(s, None).to_string();
                Reply::Close(format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len() + 100).into_bytes())
            },
            Expect::Fails("Body", |e| matches!(http(e), Some(HttpError::Body(_)))),
        ),
        list(
            "a broken chunk size",
            |_| {
                Reply::Close(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n".to_vec())
            },
            Expect::Fails("Body", |e| matches!(http(e), Some(HttpError::Body(_)))),
        ),
        // SSE streams.
        // The limit counts the event's field lines as sent: `data: ` and the message.
        list(
            "an SSE event at the limit",
            |s| event_of(s, MAX_EVENT - "data: ".len()),
            Expect::Ok,
        ),
        list(
            "an SSE event one byte past the limit",
            |s| event_of(s, MAX_EVENT - "data: ".len() + 1),
            Expect::Fails("EventTooLarge", |e| {
                matches!(http(e), Some(HttpError::EventTooLarge { limit: MAX_EVENT }))
            }),
        ),
        list(
            "an SSE stream that ends without a response",
            |_| sse(&[], false),
            Expect::Fails("Incomplete", |e| {
                matches!(http(e), Some(HttpError::Incomplete))
            }),
        ),
        call(
            "an SSE stream that ends without a response (a tool call)",
            |_| sse(&[], false),
            Expect::Fails(
                "MayHaveRun(tools/call)",
                |e| matches!(e, Error::MayHaveRun { method } if method == "tools/call"),
            ),
        ),
        list(
            "an SSE stream that never ends",
            |_| {
                let Reply::Close(head) = sse(&[], false) else {
                    unreachable!()
                };
                Reply::Hold([head, b": keep-alive\n\n".repeat(100)].concat())
            },
            Expect::Fails(
                "Timeout(tools/list)",
                |e| matches!(e, Error::Timeout { method, .. } if method == "tools/list"),
            ),
        ),
        list(
            "500 notifications, then the response",
            |s| {
                let mut events: Vec<String> = (0..500).map(|n| json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": n}}).to_string()).collect();
                events.push(response(s, None).to_string());
                sse(&events, false)
            },
            Expect::Ok,
        ),
        list(
            "notifications past the body limit",
            |_| {
                let event = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x".repeat(1000)}}).to_string();
                sse(&vec![event; MAX_BODY / 1000 + 1], true)
            },
            Expect::Fails("BodyTooLarge", |e| {
                matches!(http(e), Some(HttpError::BodyTooLarge { limit: MAX_BODY }))
            }),
        ),
        list(
            "server requests on the stream (modern era)",
            |s| {
                let ask = json!({"jsonrpc": "2.0", "id": "s1", "method": "elicitation/create", "params": {"mode": "form", "message": "?", "requestedSchema": {"type": "object", "properties": {}}}});
                sse(
                    &[
                        ask.to_string(),
                        json!({"jsonrpc": "2.0", "id": "s2", "method": "ping"}).to_string(),
                        response(s, None).to_string(),
                    ],
                    false,
                )
            },
            Expect::Ok,
        ),
        list(
            "an event that is not JSON-RPC",
            |s| {
                sse(
                    &["{not json".to_owned(), response(s, None).to_string()],
                    false,
                )
            },
            Expect::Fails("Decode", |e| matches!(http(e), Some(HttpError::Decode(_)))),
        ),
        // Responses to other ids: the stream is this request's alone.
        list(
            "a JSON response to another id",
            |s| json(&response(s, Some(json!(987_654)))),
            Expect::Fails("UnexpectedResponse(987654)", |e| {
                unexpected(e, &json!(987_654))
            }),
        ),
        list(
            "a JSON response to the id's string form",
            |s| json(&response(s, Some(json!(s.body["id"].to_string())))),
            Expect::Fails("UnexpectedResponse(\"n\")", |e| {
                matches!(
                    e,
                    Error::UnexpectedResponse {
                        id: Some(mcp_types::RequestId::String(_)),
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
                        response(s, Some(json!(987_654))).to_string(),
                        response(s, None).to_string(),
                    ],
                    false,
                )
            },
            Expect::Fails("UnexpectedResponse(987654)", |e| {
                unexpected(e, &json!(987_654))
            }),
        ),
        // A body that holds a result and an error is no response: the decoder refuses it,
        // as it refuses any other malformed body.
        list(
            "result and error together",
            |s| {
                json(
                    &json!({"jsonrpc": "2.0", "id": s.body["id"], "result": {"tools": []}, "error": {"code": 1, "message": "x"}}),
                )
            },
            Expect::Fails("Decode", |e| matches!(http(e), Some(HttpError::Decode(_)))),
        ),
        call(
            "a call's result and error together",
            |s| {
                json(
                    &json!({"jsonrpc": "2.0", "id": s.body["id"], "result": {"content": [], "resultType": "complete"}, "error": {"code": 1, "message": "x"}}),
                )
            },
            Expect::Fails("Decode", |e| matches!(http(e), Some(HttpError::Decode(_)))),
        ),
        list(
            "an error without an id",
            |_| {
                reply("200 OK", &[("content-type", "application/json")], br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#)
            },
            Expect::Fails("Protocol(-32700)", |e| protocol(e, -32700)),
        ),
        // Results.
        list(
            "a result without tools",
            |s| result(s, &json!({"resultType": "complete"})),
            Expect::Fails(
                "Decode(tools/list)",
                |e| matches!(e, Error::Decode { method, .. } if method == "tools/list"),
            ),
        ),
        list(
            "an unknown resultType",
            |s| result(s, &json!({"resultType": "hologram", "tools": []})),
            Expect::Fails(
                "UnknownResultType(hologram)",
                |e| matches!(e, Error::UnknownResultType(t) if t == "hologram"),
            ),
        ),
        list(
            "30 000 levels in the result",
            |s| {
                reply(
                    "200 OK",
                    &[("content-type", "application/json")],
                    format!(
                        r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#,
                        s.body["id"],
                        nested(30_000)
                    )
                    .as_bytes(),
                )
            },
            Expect::Fails(
                "Decode(tools/list)",
                |e| matches!(e, Error::Decode { method, .. } if method == "tools/list"),
            ),
        ),
    ]
}

/// A client of the server at `url`, with the suite's limits.
fn client(url: &str) -> Client {
    let config = HttpClientConfig::default()
        .max_response_bytes(MAX_BODY)
        .max_event_bytes(MAX_EVENT);
    Client::builder("hostile", "1")
        .timeout(TIMEOUT)
        .connect_http(url, config)
        .unwrap()
}

/// Whether `seen` is the probe: a `tools/list` for the cursor `probe`.
fn is_probe(seen: &Seen) -> bool {
    seen.body["params"]["cursor"] == "probe"
}

async fn check(case: &Case) {
    let hostile = case.reply;
    let (url, _seen) = serve(move |seen| {
        if is_probe(seen) {
            json(&response(seen, None))
        } else {
            hostile(seen)
        }
    })
    .await;
    hostile::check(&client(&url), case).await;
}

#[tokio::test]
async fn the_table() {
    count_panics();
    for case in &cases() {
        check(case).await;
    }
    assert_eq!(panics(), 0, "nothing may panic, even caught");
}

#[tokio::test]
async fn a_session_id_is_never_echoed_however_often_it_changes() {
    count_panics();
    let mut n = 0;
    let (url, mut seen) = serve(move |seen| {
        n += 1;
        let session = format!("s-{n}");
        reply(
            "200 OK",
            &[
                ("content-type", "application/json"),
                ("mcp-session-id", &session),
            ],
            response(seen, None).to_string().as_bytes(),
        )
    })
    .await;
    let client = client(&url);
    for _ in 0..3 {
        client.list_tools(None).await.unwrap();
        let request = seen.recv().await.unwrap();
        assert_eq!(
            request.header("mcp-session-id"),
            None,
            "2026-07-28 has no sessions: {:?}",
            request.headers
        );
    }
    assert_eq!(panics(), 0);
}

#[tokio::test]
async fn hostile_names_and_uris_never_become_header_lines() {
    count_panics();
    let (url, mut seen) = serve(|seen| {
        let result = match seen.body["method"].as_str() {
            Some("resources/read") => json!({"resultType": "complete", "contents": []}),
            _ => valid_result(seen),
        };
        json(&json!({"jsonrpc": "2.0", "id": seen.body["id"], "result": result}))
    })
    .await;
    let client = client(&url);
    let evil = "x\r\nx-injected: 1\r\n\r\n";
    client
        .call_tool(evil, mcp_types::JsonObject::new())
        .await
        .unwrap();
    client
        .read_resource(&format!("file:///../../etc/passwd{evil}"))
        .await
        .unwrap();
    for _ in 0..2 {
        let request = seen.recv().await.unwrap();
        assert_eq!(request.header("x-injected"), None, "{:?}", request.headers);
        let name = request.header("mcp-name").unwrap();
        assert!(
            name.starts_with("=?base64?"),
            "a value with control characters travels Base64-encoded: {name}"
        );
    }
    assert_eq!(panics(), 0);
}
