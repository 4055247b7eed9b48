//! Hostile input on Streamable HTTP: the dual-era endpoint
//! (`DualEraHttp` on 127.0.0.1), fed the table of `hostile_common` as POST bodies in the
//! modern era and in a 2025-11-25 session, then the header rules of
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http> (Security & Endpoint, Sending
//! Messages) for both eras. After every case a new valid request must succeed (in the same
//! session for the legacy era), and nothing may have panicked.
//!
//! The modern endpoint's own table (`mcp-transport-http/tests/http.rs`) covers the mirrored
//! headers one by one; this suite checks that the same answers hold behind the dual-era
//! classification, and adds what an attacker tries first.

mod hostile_common;

use std::io::Write as _;
use std::time::Duration;

use bytes::Bytes;
use hostile_common::{
    Case, Era, Expect, LEGACY, MODERN, cases, check_probe, count_panics, in_both_eras, panics,
    probe, server, subset,
};
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use mcp_legacy::http::{DualEraHttp, LegacyHttpConfig};
use mcp_transport_http::{HttpServer, HttpServerConfig, RunningServer};
use serde_json::{Value, json};

struct Endpoint {
    running: RunningServer,
    client: Client<HttpConnector, Full<Bytes>>,
    /// The legacy session, once initialized.
    session: Option<String>,
}

/// What came back: the status, the headers and the JSON-RPC message (the last message of
/// an SSE body), if any.
struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    message: Option<Value>,
}

impl Endpoint {
    async fn start(era: Era) -> Endpoint {
        let running = DualEraHttp::bind(
            HttpServer::DEFAULT_ADDR,
            server(),
            HttpServerConfig::default(),
            LegacyHttpConfig::default(),
        )
        .await
        .unwrap();
        let mut endpoint = Endpoint {
            running,
            client: Client::builder(TokioExecutor::new()).build_http(),
            session: None,
        };
        if era == Era::Legacy {
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": LEGACY, "capabilities": {},
                "clientInfo": {"name": "hostile", "version": "1"}}});
            let reply = endpoint
                .send(Method::POST, era, &[], init.to_string().into_bytes())
                .await;
            assert_eq!(reply.status, StatusCode::OK);
            endpoint.session = Some(reply.headers["mcp-session-id"].to_str().unwrap().to_owned());
            let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
            let reply = endpoint
                .send(Method::POST, era, &[], initialized.to_vec())
                .await;
            assert_eq!(reply.status, StatusCode::ACCEPTED);
        }
        endpoint
    }

    /// The headers a well-behaved client of `era` sends with `body`: for the modern era,
    /// the mirrored `Mcp-Method` and `Mcp-Name`, read from the body as far as it reads.
    fn headers(&self, era: Era, body: &[u8]) -> Vec<(String, String)> {
        let mut headers = vec![
            ("content-type".into(), "application/json".into()),
            (
                "accept".into(),
                "application/json, text/event-stream".into(),
            ),
        ];
        match (era, &self.session) {
            (Era::Legacy, Some(session)) => {
                headers.push(("mcp-session-id".into(), session.clone()));
                headers.push(("mcp-protocol-version".into(), LEGACY.into()));
            }
            (Era::Legacy, None) => {}
            (Era::Modern, _) => {
                // A body too deep for `Value` still has an envelope the engine reads, and a
                // client would still have named its tool.
                let parsed: Value = serde_json::from_slice(body).unwrap_or_else(|_| {
                    let text = String::from_utf8_lossy(body);
                    let method =
                        match mcp_jsonrpc::decode(body, mcp_jsonrpc::DecodeOptions::default()) {
                            Ok(mcp_jsonrpc::Decoded::Single(mcp_jsonrpc::Message::Request(r))) => {
                                r.method
                            }
                            _ => String::new(),
                        };
                    let name = text
                        .split_once(r#""name":""#)
                        .and_then(|(_, rest)| rest.split_once('"'))
                        .map(|(name, _)| name.to_owned());
                    json!({"method": method, "params": {"name": name}})
                });
                let visible = |v: &str| v.bytes().all(|b| b == b' ' || b.is_ascii_graphic());
                if let Some(method) = parsed["method"].as_str().filter(|m| visible(m)) {
                    headers.push(("mcp-method".into(), method.into()));
                }
                let params = &parsed["params"];
                let version = params["_meta"]["io.modelcontextprotocol/protocolVersion"]
                    .as_str()
                    .unwrap_or(MODERN);
                headers.push(("mcp-protocol-version".into(), version.into()));
                if let Some(name) = params["name"].as_str().or(params["uri"].as_str())
                    && visible(name)
                {
                    headers.push(("mcp-name".into(), name.into()));
                }
            }
        }
        headers
    }

    /// Sends a request with the well-behaved headers of `era`, then `changes` (a header
    /// with an empty value is removed; others replace the header).
    async fn send(
        &self,
        method: Method,
        era: Era,
        changes: &[(&str, String)],
        body: Vec<u8>,
    ) -> Reply {
        let mut headers = self.headers(era, &body);
        for (name, value) in changes {
            headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
            if !value.is_empty() {
                headers.push(((*name).to_owned(), value.clone()));
            }
        }
        let mut request = Request::builder().method(method).uri(self.running.url());
        for (name, value) in &headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let request = request.body(Full::new(Bytes::from(body))).unwrap();
        let response = tokio::time::timeout(Duration::from_secs(10), self.client.request(request))
            .await
            .expect("an answer in time (the server must not hang)")
            .unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let body = tokio::time::timeout(Duration::from_secs(10), response.into_body().collect())
            .await
            .expect("the whole body in time")
            .unwrap()
            .to_bytes();
        let sse = headers
            .get("content-type")
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        let message =
            if body.is_empty() {
                None
            } else if sse {
                String::from_utf8_lossy(&body)
                    .split("\n\n")
                    .filter_map(|event| {
                        let data: Vec<&str> = event
                            .lines()
                            .filter_map(|l| l.strip_prefix("data:"))
                            .map(str::trim_start)
                            .collect();
                        serde_json::from_str::<Value>(&data.join("\n")).ok()
                    })
                    .filter(|m| m.get("id").is_some())
                    .last()
            } else {
                Some(serde_json::from_slice(&body).unwrap_or_else(|e| {
                    panic!("a JSON body: {e}: {}", String::from_utf8_lossy(&body))
                }))
            };
        Reply {
            status,
            headers,
            message,
        }
    }

    async fn probe(&self, case: &str, era: Era, id: i64) {
        let reply = self
            .send(
                Method::POST,
                era,
                &[],
                probe(era, id).to_string().into_bytes(),
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{era:?} {case}: the probe");
        check_probe(case, id, reply.message.as_ref().expect("a message"));
    }
}

/// Checks one reply against what the case expects.
fn judge(era: Era, name: &str, expect: &Expect, reply: &Reply) {
    let message = reply.message.clone().unwrap_or_default();
    match expect {
        Expect::Error { id, code, status } => {
            assert_eq!(
                reply.status.as_u16(),
                *status,
                "{era:?} {name}: status; {message}"
            );
            assert_eq!(
                message["error"]["code"],
                json!(code),
                "{era:?} {name}: {message}"
            );
            assert_eq!(&message["id"], id, "{era:?} {name}: the id of {message}");
        }
        Expect::Result { id, members } => {
            assert_eq!(reply.status, StatusCode::OK, "{era:?} {name}: {message}");
            assert_eq!(&message["id"], id, "{era:?} {name}: the id of {message}");
            assert!(
                subset(members, &message["result"]),
                "{era:?} {name}: {message} lacks {members}"
            );
        }
        Expect::Silent { status, code } => {
            assert_eq!(
                reply.status.as_u16(),
                *status,
                "{era:?} {name}: status; {message}"
            );
            match code {
                Some(code) => {
                    assert_eq!(message["error"]["code"], json!(code), "{era:?} {name}");
                    assert_eq!(message["id"], Value::Null, "{era:?} {name}: {message}");
                }
                None => assert!(reply.message.is_none(), "{era:?} {name}: {message}"),
            }
        }
    }
}

async fn run_table(era: Era) {
    count_panics();
    let endpoint = Endpoint::start(era).await;
    endpoint.probe("opening", era, 1).await;
    for (n, case) in cases(era).into_iter().enumerate() {
        let Case {
            name,
            body,
            expect,
            on_http,
        } = case;
        let reply = endpoint.send(Method::POST, era, &[], body).await;
        judge(era, name, on_http.as_ref().unwrap_or(&expect), &reply);
        endpoint
            .probe(name, era, 1000 + i64::try_from(n).unwrap())
            .await;
    }
    assert_eq!(panics(), 0, "{era:?}: nothing may panic, even caught");
    endpoint.running.shutdown(Duration::from_secs(5)).await;
}

in_both_eras!(run_table: the_table_in_the_modern_era, the_table_in_a_legacy_session);

/// A header rule: a change to a well-behaved request of the era and the refusal it must
/// get (`None`: it must be served).
struct HeaderCase {
    name: &'static str,
    method: Method,
    changes: Vec<(&'static str, String)>,
    /// The body instead of the probe, if any.
    body: Option<Vec<u8>>,
    status: u16,
}

fn header(name: &'static str, changes: &[(&'static str, &str)], status: u16) -> HeaderCase {
    HeaderCase {
        name,
        method: Method::POST,
        changes: changes.iter().map(|(k, v)| (*k, (*v).to_owned())).collect(),
        body: None,
        status,
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    // A gzip member holding one stored deflate block (its trailer left zero): the server
    // must refuse the coding before it would ever read the bytes.
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 1];
    let len = u16::try_from(bytes.len()).unwrap();
    out.write_all(&len.to_le_bytes()).unwrap();
    out.write_all(&(!len).to_le_bytes()).unwrap();
    out.write_all(bytes).unwrap();
    out.write_all(&[0; 8]).unwrap();
    out
}

/// Header rules as rows: the era they apply to (`None`: both), the case, the header and
/// the value it is changed to (empty: removed), and the status the change must get. A
/// request that states 2026-07-28 is modern whatever session header it carries: a stale
/// one is ignored, as a modern server ignores it (2026-07-28 streamable-http, Earlier
/// Streamable HTTP Revisions).
#[rustfmt::skip]
fn header_rows(filler: &str) -> Vec<(Option<Era>, &'static str, &'static str, &str, u16)> {
    let modern = Some(Era::Modern);
    let legacy = Some(Era::Legacy);
    vec![
        (None, "a foreign Origin", "origin", "https://evil.example", 403),
        (None, "an opaque Origin", "origin", "null", 403),
        (None, "a look-alike Origin", "origin", "http://localhost.evil.example", 403),
        (None, "a loopback Origin", "origin", "http://127.0.0.1:9", 200),
        (None, "a foreign Host", "host", "evil.example", 403),
        (None, "a rebinding Host", "host", "attacker.example:80", 403),
        (None, "a text/plain body", "content-type", "text/plain", 415),
        (None, "a form body", "content-type", "application/x-www-form-urlencoded", 415),
        (None, "no Content-Type", "content-type", "", 415),
        (None, "Accept without SSE", "accept", "application/json", 406),
        (None, "Accept without JSON", "accept", "text/event-stream", 406),
        (None, "no Accept", "accept", "", 406),
        (None, "an unknown content coding", "content-encoding", "br", 415),
        (None, "the identity coding", "content-encoding", "identity", 200),
        (None, "a head over the limit", "x-filler", filler, 431),
        (modern, "no version header", "mcp-protocol-version", "", 400),
        (modern, "no method header", "mcp-method", "", 400),
        (modern, "a method header in capitals", "mcp-method", "TOOLS/CALL", 400),
        (modern, "no name header", "mcp-name", "", 400),
        (modern, "a mismatched name", "mcp-name", "evil", 400),
        (modern, "a base64 name", "mcp-name", "=?base64?ZWNobw==?=", 200),
        (modern, "a base64 name that lies", "mcp-name", "=?base64?ZXZpbA==?=", 400),
        (modern, "broken base64 in the name", "mcp-name", "=?base64?ZWNob?=", 400),
        (modern, "a sentinel without base64", "mcp-name", "=?base64?echo", 400),
        (modern, "a stale session id", "mcp-session-id", "0123", 200),
        (legacy, "a modern version in a session", "mcp-protocol-version", MODERN, 400),
        (legacy, "an unknown version in a session", "mcp-protocol-version", "2099-01-01", 400),
        (legacy, "an unknown session", "mcp-session-id", "abcdef", 404),
        (legacy, "an empty session id", "mcp-session-id", " ", 404),
    ]
}

fn header_cases(era: Era) -> Vec<HeaderCase> {
    let filler = "f".repeat(70 << 10);
    let mut cases: Vec<HeaderCase> = header_rows(&filler)
        .into_iter()
        .filter(|(only, ..)| only.is_none_or(|only| only == era))
        .map(|(_, name, header_name, value, status)| header(name, &[(header_name, value)], status))
        .collect();
    cases.push(HeaderCase {
        body: Some(gzip(probe(era, 5).to_string().as_bytes())),
        ..header("a gzip body", &[("content-encoding", "gzip")], 415)
    });
    let mut methods = vec![("PUT", Method::PUT), ("PATCH", Method::PATCH)];
    if era == Era::Modern {
        methods.extend([("GET", Method::GET), ("DELETE", Method::DELETE)]);
    }
    // Methods the endpoint does not serve (GET and DELETE belong to a legacy session).
    for (name, method) in methods {
        cases.push(HeaderCase {
            method,
            ..header(name, &[], 405)
        });
    }
    cases
}

async fn run_headers(era: Era) {
    count_panics();
    let endpoint = Endpoint::start(era).await;
    for (n, case) in header_cases(era).into_iter().enumerate() {
        let id = 2000 + i64::try_from(n).unwrap();
        let body = case
            .body
            .unwrap_or_else(|| probe(era, id).to_string().into_bytes());
        let reply = endpoint
            .send(case.method.clone(), era, &case.changes, body)
            .await;
        assert_eq!(
            reply.status.as_u16(),
            case.status,
            "{era:?} {}: {:?}",
            case.name,
            reply.message
        );
        if case.status == 200 {
            check_probe(case.name, id, reply.message.as_ref().unwrap());
        } else if case.status == 405 {
            assert!(reply.headers.contains_key("allow"), "{}", case.name);
        }
        endpoint.probe(case.name, era, id + 500).await;
    }
    if let Some(session) = &endpoint.session {
        // Session ids are compared exactly: the same id in capitals is another session.
        let upper = session.to_ascii_uppercase();
        assert_ne!(&upper, session);
        let reply = endpoint
            .send(
                Method::POST,
                era,
                &[("mcp-session-id", upper)],
                probe(era, 3).to_string().into_bytes(),
            )
            .await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND);
        endpoint.probe("a case-variant session id", era, 4).await;
    }
    assert_eq!(panics(), 0, "{era:?}: nothing may panic, even caught");
    endpoint.running.shutdown(Duration::from_secs(5)).await;
}

in_both_eras!(run_headers: header_rules_in_the_modern_era, header_rules_in_a_legacy_session);
