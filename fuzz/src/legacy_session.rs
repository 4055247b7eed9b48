//! `legacy_session`: a sequence of requests against the dual-era HTTP endpoint
//! (`mcp_legacy::http::DualEraHttp`), where initialize-era sessions live
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>, "Session Management").
//!
//! The input is a list of operations: initialize a session (at one of several protocol
//! versions), POST a message (one of the methods, a response, a batch, or raw bytes) with
//! a session id that is absent, one of ours (possibly deleted) or arbitrary, open the GET
//! stream, DELETE a session. Checks: nothing panics or hangs; only an initialize answered
//! with a session id adds a session, so invalid requests never grow the table; the table
//! never exceeds its limit; a DELETE of a live session removes exactly it; every status
//! is one the transport documents.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use libfuzzer_sys::arbitrary::{self, Arbitrary, Unstructured};
use mcp_legacy::http::{DualEraHttp, LegacyHttpConfig};
use mcp_server::Server;

use crate::fixture::{self, ToolCall};

const MAX_SESSIONS: usize = 3;
const VERSIONS: [&str; 5] = [
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
    "1999-01-01",
];
const STATUSES: [u16; 13] = [
    200, 202, 204, 400, 403, 404, 405, 406, 409, 413, 415, 429, 503,
];

#[derive(Debug, Arbitrary)]
enum SessionPick {
    None,
    Ours(u8),
    Raw(String),
}

#[derive(Debug, Arbitrary)]
enum Op {
    Initialize {
        version: u8,
        id: i64,
    },
    Post {
        session: SessionPick,
        message: Message,
        version: Option<u8>,
    },
    Get {
        session: SessionPick,
    },
    Delete {
        session: SessionPick,
    },
}

#[derive(Debug, Arbitrary)]
enum Message {
    Call(ToolCall),
    Method { method: u8, id: Option<i64> },
    Response { id: i64 },
    Batch(Vec<Message>),
    Raw(Vec<u8>),
}

const METHODS: [&str; 9] = [
    "tools/list",
    "ping",
    "initialize",
    "notifications/initialized",
    "resources/list",
    "logging/setLevel",
    "notifications/cancelled",
    "prompts/list",
    "server/discover",
];

fn message_text(message: &Message, depth: usize) -> Vec<u8> {
    match message {
        Message::Call(call) => call.text("").into_bytes(),
        Message::Method { method, id } => {
            let method = METHODS[usize::from(*method) % METHODS.len()];
            let params = match method {
                "initialize" => {
                    r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}"#
                }
                "logging/setLevel" => r#"{"level":"debug"}"#,
                "notifications/cancelled" => r#"{"requestId":1}"#,
                _ => "{}",
            };
            match id {
                Some(id) => format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
                ),
                None => format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":{params}}}"#),
            }
            .into_bytes()
        }
        Message::Response { id } => {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#).into_bytes()
        }
        Message::Batch(items) if depth == 0 => {
            let parts: Vec<Vec<u8>> = items
                .iter()
                .take(6)
                .map(|m| message_text(m, depth + 1))
                .collect();
            let mut out = b"[".to_vec();
            out.extend(parts.join(&b","[..]));
            out.push(b']');
            out
        }
        Message::Batch(_) => b"[]".to_vec(),
        Message::Raw(bytes) => bytes.clone(),
    }
}

fn request(
    method: Method,
    session: Option<&str>,
    version: Option<&str>,
    body: Vec<u8>,
) -> Option<Request<Full<Bytes>>> {
    let mut builder = Request::builder()
        .method(method)
        .uri("/mcp")
        .header("host", "127.0.0.1")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    if let Some(session) = session {
        builder = builder.header("mcp-session-id", HeaderValue::from_str(session).ok()?);
    }
    if let Some(version) = version {
        builder = builder.header("mcp-protocol-version", version);
    }
    builder.body(Full::new(Bytes::from(body))).ok()
}

/// Sends `request`; reads the body for a short while (an open stream is dropped).
async fn send(
    http: &DualEraHttp<Server>,
    request: Request<Full<Bytes>>,
) -> (StatusCode, Option<String>) {
    let response = http.handle(request).await.expect("infallible");
    let status = response.status();
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let _ = tokio::time::timeout(Duration::from_millis(5), response.into_body().collect()).await;
    (status, session)
}

/// One input: see the module docs.
pub fn run(data: &[u8]) {
    let Ok(ops) = Vec::<Op>::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    fixture::runtime().block_on(async {
        let server = fixture::server();
        let config = fixture::http_config(&server);
        let http = DualEraHttp::new(server, config, LegacyHttpConfig::default().max_sessions(MAX_SESSIONS))
            .expect("a valid configuration");
        // Sessions we were given, with whether they are still live.
        let mut ours: Vec<(String, bool)> = Vec::new();
        for op in ops.iter().take(24) {
            let live = ours.iter().filter(|(_, live)| *live).count();
            assert_eq!(http.sessions(), live, "the table disagrees with what was created and deleted");
            let pick = |pick: &SessionPick| match pick {
                SessionPick::None => None,
                SessionPick::Ours(i) if !ours.is_empty() => Some(ours[usize::from(*i) % ours.len()].0.clone()),
                SessionPick::Ours(_) => None,
                SessionPick::Raw(text) => Some(text.clone()),
            };
            match op {
                Op::Initialize { version, id } => {
                    let version = VERSIONS[usize::from(*version) % VERSIONS.len()];
                    let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"fuzz","version":"1"}}}}}}"#);
                    let Some(req) = request(Method::POST, None, None, body.into_bytes()) else { continue };
                    let (status, session) = send(&http, req).await;
                    assert!(STATUSES.contains(&status.as_u16()), "initialize: {status}");
                    if let Some(session) = session {
                        assert_eq!(status, StatusCode::OK, "a session id on a refusal");
                        assert!(!ours.iter().any(|(s, _)| *s == session), "a session id was reused");
                        ours.push((session, true));
                    }
                }
                Op::Post { session, message, version } => {
                    let session = pick(session);
                    let version = version.map(|v| VERSIONS[usize::from(v) % VERSIONS.len()]);
                    let Some(req) = request(Method::POST, session.as_deref(), version, message_text(message, 0)) else { continue };
                    let (status, new) = send(&http, req).await;
                    assert!(STATUSES.contains(&status.as_u16()), "post: {status}");
                    if let Some(new) = new
                        && !ours.iter().any(|(s, _)| *s == new)
                    {
                        // A POST without a session whose body is an initialize (alone or
                        // in a batch) may open one.
                        assert_eq!(status, StatusCode::OK);
                        ours.push((new, true));
                    }
                }
                Op::Get { session } => {
                    let session = pick(session);
                    let Some(req) = request(Method::GET, session.as_deref(), None, Vec::new()) else { continue };
                    let (status, _) = send(&http, req).await;
                    assert!(STATUSES.contains(&status.as_u16()), "get: {status}");
                }
                Op::Delete { session } => {
                    let session = pick(session);
                    let Some(req) = request(Method::DELETE, session.as_deref(), None, Vec::new()) else { continue };
                    let (status, _) = send(&http, req).await;
                    assert!(STATUSES.contains(&status.as_u16()), "delete: {status}");
                    if status.is_success()
                        && let Some(entry) = ours.iter_mut().find(|(s, _)| Some(s) == session.as_ref())
                    {
                        entry.1 = false;
                    }
                }
            }
            assert!(http.sessions() <= MAX_SESSIONS, "the session table outgrew its limit");
        }
        let live = ours.iter().filter(|(_, live)| *live).count();
        assert_eq!(http.sessions(), live);
    });
}
