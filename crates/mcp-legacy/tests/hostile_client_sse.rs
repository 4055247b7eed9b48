//! Hostile servers against the dual-era client's 2024-11-05 HTTP+SSE transport:
//! a raw HTTP/1.1 server on 127.0.0.1 (the client tests' `support::http`) refuses
//! the modern probe (400) and the Streamable HTTP `initialize` (405), so the client falls
//! back to the old transport: a GET whose first event, `endpoint`, names the URL it POSTs
//! to, with every answer on that GET stream. The server then misbehaves on the stream (no
//! endpoint, an endpoint elsewhere or malformed, oversize events, malformed SSE lines,
//! non-JSON data, answers to the wrong ids, the stream closing) or on the POSTs (error
//! statuses, silence). Each case asserts the exact outcome (a typed error, without a
//! hang); after a case that leaves the session standing, a valid request in the same
//! session must succeed, and after one that ends it, every later request fails at once
//! with a typed error. Nothing may panic.
//!
//! The rules: <https://modelcontextprotocol.io/specification/2024-11-05/basic/transports> (HTTP with SSE),
//! <https://modelcontextprotocol.io/specification/2024-11-05/basic/lifecycle>, and for detection
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http> (Backward Compatibility). The
//! spec does not say the `endpoint` URI must be on the SSE URL's origin; this client
//! requires it (`mcp_transport_http::RawRequest::url`), so that messages, and any
//! credentials in the configured headers, never go to a host the user did not name.

#![cfg(feature = "http")]

#[path = "hostile_client_common/mod.rs"]
mod hostile_client_common;
#[path = "../../mcp-client/tests/support/mod.rs"]
mod support;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_client::Error;
use mcp_legacy::Error as ConnectError;
use mcp_legacy::client::{Connector, HttpConnection, Transport};
use mcp_transport_http::{Error as HttpError, HttpClientConfig};
use serde_json::{Value, json};
use support::http::{Reply, Seen, reply, serve};
use support::{count_panics, panics};
use tokio::sync::mpsc;

use hostile_client_common::{Ask, ROOTS_MOST, builder, run};

/// The SSE event limit in this suite.
const MAX_EVENT: usize = 64 << 10;
/// The probe and handshake timeout (an endpoint that never comes ends here). Whole seconds:
/// every other case must finish its probe and handshake inside it on a loaded machine.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// The path the endpoint event names.
const ENDPOINT: &str = "/messages?session=1";
/// How long the client's roots handler takes: slow enough that a burst of server requests
/// meets the client's bound.
const ROOTS_DELAY: Duration = Duration::from_millis(50);

/// What the server does about one POSTed request.
enum Act {
    /// Pushes these bytes (SSE text) on the GET stream.
    Push(String),
    /// Closes the GET stream.
    End,
    /// Answers the POST with this reply instead of `202 Accepted`.
    Post(Reply),
}

/// A `message` event carrying `message`.
fn message(message: &Value) -> String {
    format!("event: message\ndata: {message}\n\n")
}

fn push(value: &Value) -> Act {
    Act::Push(message(value))
}

#[allow(
    clippy::needless_pass_by_value,
    reason = "the table builds each result in place"
)]
fn response(to: &Value, id: Option<Value>, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.unwrap_or_else(|| to["id"].clone()), "result": result})
}

/// A valid legacy result for `request`'s method.
fn valid_result(request: &Value) -> Value {
    match request["method"].as_str() {
        Some("tools/call") => json!({"content": []}),
        Some("initialize") => {
            json!({"protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                   "serverInfo": {"name": "hostile", "version": "1"}})
        }
        _ => json!({"tools": []}),
    }
}

fn valid(request: &Value) -> Act {
    push(&response(request, None, valid_result(request)))
}

/// The start of the GET stream: the endpoint event, by default.
fn endpoint(_: &str) -> String {
    format!("event: endpoint\ndata: {ENDPOINT}\n\n")
}

const SSE_HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\r\n";

/// The hostile server's script, and what a test needs to watch it.
struct Server {
    url: String,
    seen: mpsc::UnboundedReceiver<Seen>,
    /// Another origin (a second server on another port), which must see nothing.
    elsewhere: mpsc::UnboundedReceiver<Seen>,
    /// The GET stream's feed, while the server holds one open.
    stream: Arc<Mutex<Option<mpsc::UnboundedSender<Vec<u8>>>>>,
}

impl Server {
    /// Whether the client has let go of the GET stream within 10 s (its connection
    /// closed), or there was none.
    async fn stream_released(&self) -> bool {
        let Some(tx) = self.stream.lock().unwrap().clone() else {
            return true;
        };
        tokio::time::timeout(Duration::from_secs(10), tx.closed())
            .await
            .is_ok()
    }
}

/// Serves the HTTP+SSE transport: `start` writes the GET stream's first bytes (given the
/// other origin's base URL), `get` replaces the GET reply entirely when set, `answer`
/// acts on each POSTed request (except `initialize` and the probe, answered validly).
async fn server(
    start: fn(&str) -> String,
    get: Option<fn() -> Reply>,
    answer: fn(&Value) -> Vec<Act>,
) -> Server {
    let (other_url, elsewhere) = serve(|_| reply("500 Internal Server Error", &[], b"")).await;
    let other = other_url.trim_end_matches("/mcp").to_owned();
    let stream: Arc<Mutex<Option<mpsc::UnboundedSender<Vec<u8>>>>> = Arc::default();
    let feed = Arc::clone(&stream);
    let (url, seen) = serve(move |seen: &Seen| {
        let stream = &feed;
        let body = &seen.body;
        let method = body["method"].as_str();
        if seen.line.starts_with("GET") {
            if let Some(get) = get {
                return get();
            }
            let (tx, rx) = mpsc::unbounded_channel();
            *stream.lock().unwrap() = Some(tx);
            return Reply::Stream([SSE_HEAD, start(&other).as_bytes()].concat(), rx);
        }
        if seen.line.starts_with("POST /mcp ") {
            // The modern probe, then Streamable HTTP's initialize: refused.
            return match method {
                Some("server/discover") => reply("400 Bad Request", &[], b""),
                _ => reply("405 Method Not Allowed", &[("allow", "GET")], b""),
            };
        }
        let acts = match method {
            _ if body.get("id").is_none() || method.is_none() => Vec::new(),
            Some("initialize") => vec![valid(body)],
            _ if body["params"]["cursor"] == "probe" => vec![valid(body)],
            _ => answer(body),
        };
        let mut post = reply("202 Accepted", &[], b"");
        for act in acts {
            match act {
                Act::Push(text) => {
                    if let Some(tx) = stream.lock().unwrap().as_ref() {
                        let _ = tx.send(text.into_bytes());
                    }
                }
                Act::End => drop(stream.lock().unwrap().take()),
                Act::Post(reply) => post = reply,
            }
        }
        post
    })
    .await;
    Server {
        url,
        seen,
        elsewhere,
        stream,
    }
}

async fn connect(server: &Server) -> Result<HttpConnection, ConnectError> {
    let config = HttpClientConfig::default().max_event_bytes(MAX_EVENT);
    tokio::time::timeout(
        Duration::from_secs(10),
        Connector::new(builder(ROOTS_DELAY))
            .probe_timeout(PROBE_TIMEOUT)
            .connect_http(&server.url, config),
    )
    .await
    .expect("no hang while connecting")
}

fn http(e: &Error) -> Option<&HttpError> {
    match e {
        Error::Http(e) => Some(e),
        _ => None,
    }
}

fn closed(e: &Error) -> bool {
    matches!(e, Error::Transport(mcp_jsonrpc::Error::Closed(_)))
}

fn handshake(outcome: &Result<HttpConnection, ConnectError>) -> Option<&Error> {
    match outcome {
        Err(ConnectError::Handshake(e)) => Some(e),
        _ => None,
    }
}

/// A connection case: how the GET stream starts (or the whole GET reply), and the outcome.
type ConnectCase = (
    &'static str,
    fn(&str) -> String,
    Option<fn() -> Reply>,
    fn(&Result<HttpConnection, ConnectError>) -> bool,
);

#[allow(clippy::too_many_lines, reason = "one table")]
fn connect_cases() -> Vec<ConnectCase> {
    vec![
        (
            "no endpoint event, the stream held open",
            |_| ": waiting\n\n".to_owned(),
            None,
            |o| matches!(handshake(o), Some(Error::Timeout { method, .. }) if method.contains("endpoint")),
        ),
        (
            "the stream ends without an endpoint event",
            |_| String::new(),
            Some(|| {
                reply(
                    "200 OK",
                    &[("content-type", "text/event-stream")],
                    b"event: message\ndata: {}\n\n",
                )
            }),
            |o| handshake(o).is_some_and(closed),
        ),
        (
            "an endpoint on another origin",
            |other| format!("event: endpoint\ndata: {other}/messages?session=1\n\n"),
            None,
            |o| matches!(handshake(o).and_then(http), Some(HttpError::Url { .. })),
        ),
        (
            "an endpoint on another scheme of the same host",
            |other| {
                format!(
                    "event: endpoint\ndata: {}/messages\n\n",
                    other.replacen("http:", "https:", 1)
                )
            },
            None,
            |o| matches!(handshake(o).and_then(http), Some(HttpError::Url { .. })),
        ),
        (
            "an endpoint with credentials on another host",
            |_| "event: endpoint\ndata: http://user:pass@evil.example/messages\n\n".to_owned(),
            None,
            |o| matches!(handshake(o).and_then(http), Some(HttpError::Url { .. })),
        ),
        (
            "a malformed endpoint URL",
            |_| "event: endpoint\ndata: http://[::1/messages\n\n".to_owned(),
            None,
            |o| handshake(o).is_some_and(closed),
        ),
        (
            "an endpoint with a space and a newline",
            |_| "event: endpoint\ndata: /mess ages\ndata: /x\n\n".to_owned(),
            None,
            |o| handshake(o).is_some_and(closed),
        ),
        (
            "an event past the size limit before the endpoint",
            |_| {
                format!(
                    "event: message\ndata: {}\n\n{}",
                    "x".repeat(MAX_EVENT),
                    endpoint("")
                )
            },
            None,
            |o| {
                matches!(
                    handshake(o).and_then(http),
                    Some(HttpError::EventTooLarge { .. })
                )
            },
        ),
        (
            "the GET answered 500",
            |_| String::new(),
            Some(|| reply("500 Internal Server Error", &[], b"")),
            |o| matches!(handshake(o).and_then(http), Some(HttpError::Status { status, .. }) if status.as_u16() == 500),
        ),
        (
            "the GET answered with HTML",
            |_| String::new(),
            Some(|| reply("200 OK", &[("content-type", "text/html")], b"<html></html>")),
            |o| matches!(handshake(o).and_then(http), Some(HttpError::Status { status, .. }) if status.as_u16() == 200),
        ),
        (
            "malformed SSE lines and non-JSON data before the endpoint",
            |_| {
                format!(
                    ": a comment\nno colon at all\nretry: soon\nid: \nevent\ndata\n\n\
                     event: message\ndata: {{not json\n\n\u{feff}event: bogus\ndata: x\n\n{}",
                    endpoint("")
                )
            },
            None,
            |o| matches!(o, Ok(c) if c.verdict.transport == Transport::HttpSse),
        ),
        (
            "two endpoint events",
            |other| {
                format!(
                    "{}event: endpoint\ndata: {other}/elsewhere\n\n",
                    endpoint("")
                )
            },
            None,
            |o| matches!(o, Ok(c) if c.verdict.transport == Transport::HttpSse),
        ),
    ]
}

#[tokio::test]
async fn the_endpoint_table() {
    count_panics();
    for (name, start, get, expected) in connect_cases() {
        let mut server = server(start, get, |r| vec![valid(r)]).await;
        let started = Instant::now();
        let outcome = connect(&server).await;
        assert!(expected(&outcome), "{name}: {outcome:?}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{name}: took {:?}",
            started.elapsed()
        );
        if outcome.is_err() {
            // No session: the client must not hold on to the stream.
            assert!(
                server.stream_released().await,
                "{name}: the GET stream was kept open"
            );
        }
        if let Ok(connection) = outcome {
            let listed = connection.client.list_tools(Some("probe")).await;
            assert!(listed.is_ok(), "{name}: the request after it: {listed:?}");
            connection.client.shutdown(Duration::from_secs(1)).await;
            // Every POST went to the first endpoint.
            while let Ok(seen) = server.seen.try_recv() {
                if seen.line.starts_with("POST") && !seen.line.starts_with("POST /mcp ") {
                    assert!(
                        seen.line.starts_with(&format!("POST {ENDPOINT} ")),
                        "{name}: {}",
                        seen.line
                    );
                }
            }
        }
        assert!(
            server.elsewhere.try_recv().is_err(),
            "{name}: another origin was reached"
        );
    }
    assert_eq!(panics(), 0, "nothing may panic, even caught");
}

/// What a session case must end with.
enum Expect {
    Ok,
    Fails(&'static str, fn(&Error) -> bool),
    /// Never answered: `Error::Timeout`, then `notifications/cancelled` is POSTed.
    TimesOut,
    /// The session is over: this error at once, and the same for every later request.
    Ends(&'static str, fn(&Error) -> bool),
}

/// How the client answers the server's requests in a case: how many answers arrive, and
/// a check of each.
type Answers = (usize, fn(&Value) -> bool);

struct Case {
    name: &'static str,
    ask: Ask,
    answer: fn(&Value) -> Vec<Act>,
    answers: Option<Answers>,
    expect: Expect,
}

const fn case(
    name: &'static str,
    ask: Ask,
    answer: fn(&Value) -> Vec<Act>,
    expect: Expect,
) -> Case {
    Case {
        name,
        ask,
        answer,
        answers: None,
        expect,
    }
}

fn server_request(id: &str, method: &str, params: Value) -> Value {
    let mut request = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if !params.is_null() {
        request["params"] = params;
    }
    request
}

fn is_error(answer: &Value, code: i64) -> bool {
    answer["error"]["code"] == code
}

#[allow(clippy::too_many_lines, reason = "one table")]
fn cases() -> Vec<Case> {
    use Ask::{List, Short};
    vec![
        case(
            "non-JSON data, then the response",
            List,
            |r| {
                vec![
                    Act::Push("event: message\ndata: {not json\n\n".into()),
                    Act::Push("data: \u{0}\u{1}\n\n".into()),
                    valid(r),
                ]
            },
            Expect::Ok,
        ),
        case(
            "malformed SSE lines around the response",
            List,
            |r| {
                let response = response(r, None, valid_result(r));
                vec![
                    Act::Push(": comment\nno colon\nretry: -5\nid: x\u{0}y\n\n".into()),
                    Act::Push(format!("event: message\r\ndata: {response}\r\n\r\n")),
                ]
            },
            Expect::Ok,
        ),
        case(
            "the response in an event of another type",
            Short,
            |r| {
                vec![Act::Push(format!(
                    "event: notmessage\ndata: {}\n\n",
                    response(r, None, valid_result(r))
                ))]
            },
            Expect::TimesOut,
        ),
        case(
            "a second endpoint event, then the response",
            List,
            |r| {
                vec![
                    Act::Push("event: endpoint\ndata: http://evil.example/steal\n\n".into()),
                    valid(r),
                ]
            },
            Expect::Ok,
        ),
        case(
            "responses to ids never sent, then the response",
            List,
            |r| {
                vec![
                    push(&response(r, Some(json!(987_654)), valid_result(r))),
                    push(&response(
                        r,
                        Some(json!(r["id"].to_string())),
                        valid_result(r),
                    )),
                    push(&response(r, Some(json!(1.5)), valid_result(r))),
                    push(&response(r, Some(Value::Null), valid_result(r))),
                    valid(r),
                ]
            },
            Expect::Ok,
        ),
        case(
            "only a response to the id's string form",
            Short,
            |r| {
                vec![push(&response(
                    r,
                    Some(json!(r["id"].to_string())),
                    valid_result(r),
                ))]
            },
            Expect::TimesOut,
        ),
        case(
            "the response twice",
            List,
            |r| vec![valid(r), valid(r)],
            Expect::Ok,
        ),
        case(
            "case-variant keys, then the response",
            List,
            |r| {
                vec![
                    Act::Push(format!(
                        "data: {{\"jsonrpc\":\"2.0\",\"ID\":{},\"result\":{{}}}}\n\n",
                        r["id"]
                    )),
                    Act::Push(format!(
                        "data: {{\"jsonrpc\":\"2.0\",\"id\":{},\"Result\":{{}}}}\n\n",
                        r["id"]
                    )),
                    valid(r),
                ]
            },
            Expect::Ok,
        ),
        case(
            "a result without tools",
            List,
            |r| vec![push(&response(r, None, json!({})))],
            Expect::Fails(
                "Decode(tools/list)",
                |e| matches!(e, Error::Decode { method, .. } if method == "tools/list"),
            ),
        ),
        case(
            "an error response",
            List,
            |r| {
                vec![push(
                    &json!({"jsonrpc": "2.0", "id": r["id"], "error": {"code": -32603, "message": "boom"}}),
                )]
            },
            Expect::Fails("Protocol(-32603)", |e| {
                e.protocol().is_some_and(|p| p.code.0 == -32603)
            }),
        ),
        case(
            "the POST answered 500",
            List,
            |_| vec![Act::Post(reply("500 Internal Server Error", &[], b""))],
            Expect::Fails(
                "Status(500)",
                |e| matches!(http(e), Some(HttpError::Status { status, .. }) if status.as_u16() == 500),
            ),
        ),
        case(
            "the POST answered 404",
            List,
            |_| vec![Act::Post(reply("404 Not Found", &[], b""))],
            Expect::Fails(
                "Status(404)",
                |e| matches!(http(e), Some(HttpError::Status { status, .. }) if status.as_u16() == 404),
            ),
        ),
        case(
            "a server that never answers",
            Short,
            |_| Vec::new(),
            Expect::TimesOut,
        ),
        case(
            "notifications with garbage params, then the response",
            List,
            |r| {
                let mut acts: Vec<Act> = [
                    json!({"jsonrpc": "2.0", "method": "notifications/message", "params": "not an object"}),
                    json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": [1], "progress": "lots"}}),
                    json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": 5}}),
                    json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": r["id"]}}),
                ]
                .iter()
                .map(push)
                .collect();
                acts.push(valid(r));
                acts
            },
            Expect::Ok,
        ),
        Case {
            answers: Some((1, |a| is_error(a, -32601))),
            ..case(
                "a server request of an unknown method",
                List,
                |r| {
                    vec![
                        push(&server_request("s1", "shell/exec", json!({}))),
                        valid(r),
                    ]
                },
                Expect::Ok,
            )
        },
        Case {
            answers: Some((1, |a| is_error(a, -32601))),
            ..case(
                "sampling although the client did not declare it",
                List,
                |r| {
                    vec![
                        push(&server_request(
                            "s1",
                            "sampling/createMessage",
                            json!({"messages": [], "maxTokens": 1}),
                        )),
                        valid(r),
                    ]
                },
                Expect::Ok,
            )
        },
        Case {
            answers: Some((1, |a| is_error(a, -32602))),
            ..case(
                "roots/list with params that are not an object",
                List,
                |r| {
                    vec![
                        push(&server_request("s1", "roots/list", json!([1]))),
                        valid(r),
                    ]
                },
                Expect::Ok,
            )
        },
        // Pings up to the bound on server requests being answered, all answered.
        Case {
            answers: Some((mcp_legacy::client::MAX_SERVER_REQUESTS, |a| {
                a["result"] == json!({})
            })),
            ..case(
                "a ping storm at the client's bound (32)",
                List,
                |r| {
                    let mut acts: Vec<Act> = (0..mcp_legacy::client::MAX_SERVER_REQUESTS)
                        .map(|n| push(&server_request(&format!("s{n}"), "ping", Value::Null)))
                        .collect();
                    acts.push(valid(r));
                    acts
                },
                Expect::Ok,
            )
        },
        // One batch of 40 roots requests: the client answers at most MAX_SERVER_REQUESTS
        // at once and drops the rest (the server's own timeout ends them).
        Case {
            answers: Some((mcp_legacy::client::MAX_SERVER_REQUESTS, |a| {
                a["result"]["roots"].is_array()
            })),
            ..case(
                "40 roots requests at once, past the client's 32",
                List,
                |r| {
                    let batch: Vec<Value> = (0..40)
                        .map(|n| server_request(&format!("s{n}"), "roots/list", json!({})))
                        .collect();
                    vec![push(&Value::Array(batch)), valid(r)]
                },
                Expect::Ok,
            )
        },
        case(
            "the stream closes mid-call",
            List,
            |_| vec![Act::End],
            Expect::Ends("Transport(Closed)", closed),
        ),
        case(
            "a half event, then the stream closes",
            List,
            |r| {
                vec![
                    Act::Push(format!(
                        "event: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":{},\"res",
                        r["id"]
                    )),
                    Act::End,
                ]
            },
            Expect::Ends("Transport(Closed)", closed),
        ),
        case(
            "an event past the size limit",
            List,
            |r| {
                vec![
                    Act::Push(format!("data: {}\n\n", "x".repeat(MAX_EVENT))),
                    valid(r),
                ]
            },
            Expect::Ends("Transport(Closed)", closed),
        ),
    ]
}

/// The bodies POSTed to the endpoint from now on, until `enough` holds of them or 5 s
/// passed; then whatever else arrives within 100 ms.
async fn posted(
    seen: &mut mpsc::UnboundedReceiver<Seen>,
    enough: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let mut bodies = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !enough(&bodies) {
        match tokio::time::timeout_at(deadline, seen.recv()).await {
            Ok(Some(s)) => bodies.push(s.body),
            _ => break,
        }
    }
    while let Ok(Some(s)) = tokio::time::timeout(Duration::from_millis(100), seen.recv()).await {
        bodies.push(s.body);
    }
    bodies
}

#[tokio::test]
async fn the_session_table() {
    count_panics();
    for case in &cases() {
        let name = case.name;
        let mut server = server(endpoint, None, case.answer).await;
        let connection = connect(&server)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(connection.verdict.transport, Transport::HttpSse, "{name}");
        while server.seen.try_recv().is_ok() {}
        let client = &connection.client;
        ROOTS_MOST.store(0, Ordering::SeqCst);
        let started = Instant::now();
        let outcome = run(client, case.ask).await;
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{name}: took {:?}",
            started.elapsed()
        );
        match (&case.expect, &outcome) {
            (Expect::Ok, Ok(())) => {}
            (Expect::Fails(_, matches) | Expect::Ends(_, matches), Err(e)) if matches(e) => {}
            (Expect::TimesOut, Err(Error::Timeout { .. })) => {
                let bodies = posted(&mut server.seen, |b| {
                    b.iter().any(|b| b["method"] == "notifications/cancelled")
                })
                .await;
                let request = bodies
                    .iter()
                    .find(|b| b["method"] == "tools/call")
                    .expect("the call");
                let cancelled = bodies
                    .iter()
                    .find(|b| b["method"] == "notifications/cancelled");
                assert_eq!(
                    cancelled.map(|c| &c["params"]["requestId"]),
                    Some(&request["id"]),
                    "{name}: {bodies:?}"
                );
            }
            (Expect::Fails(expected, _) | Expect::Ends(expected, _), _) => {
                panic!("{name}: expected {expected}, got {outcome:?}")
            }
            (_, _) => panic!("{name}: got {outcome:?}"),
        }
        if let Some((count, check)) = case.answers {
            let bodies = posted(&mut server.seen, |b| {
                b.iter().filter(|b| b.get("method").is_none()).count() >= count
            })
            .await;
            let answers: Vec<&Value> = bodies
                .iter()
                .filter(|b| b.get("method").is_none())
                .collect();
            assert_eq!(answers.len(), count, "{name}: {answers:?}");
            assert!(
                answers
                    .iter()
                    .all(|a| a["id"].as_str().is_some_and(|id| id.starts_with('s')) && check(a)),
                "{name}: {answers:?}"
            );
        }
        let most = ROOTS_MOST.load(Ordering::SeqCst);
        assert!(
            most <= mcp_legacy::client::MAX_SERVER_REQUESTS,
            "{name}: {most} at once"
        );
        let started = Instant::now();
        let probe = client.list_tools(Some("probe")).await;
        if let Expect::Ends(expected, matches) = &case.expect {
            assert!(
                probe.as_ref().is_err_and(matches),
                "{name}: after the session ended, expected {expected}, got {probe:?}"
            );
            // Failed without waiting out the client's 20 s timeout (a margin of whole
            // seconds: the machine may be loaded).
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{name}: the next request waited {:?}",
                started.elapsed()
            );
        } else {
            assert!(probe.is_ok(), "{name}: the request after it: {probe:?}");
        }
        client.shutdown(Duration::from_secs(1)).await;
        assert!(
            server.elsewhere.try_recv().is_err(),
            "{name}: another origin was reached"
        );
    }
    assert_eq!(panics(), 0, "nothing may panic, even caught");
}
