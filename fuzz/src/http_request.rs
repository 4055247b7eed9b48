//! `http_request`: one HTTP request, built from the input, through the Streamable HTTP
//! endpoint (`McpService::handle`) of the fixture server
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports>).
//!
//! The input chooses the method, each of the headers the spec gives rules for (Host,
//! Origin, Accept, Content-Type, `Mcp-Method`, `Mcp-Name`, `Mcp-Protocol-Version`,
//! `Mcp-Param-Region`, Content-Encoding, `Mcp-Session-Id`, arbitrary extras) and the body.
//! Checks: nothing panics or hangs; the status is one the transport documents; a JSON
//! response body is a JSON-RPC message; and afterwards nothing is left in flight and a
//! valid request still succeeds.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use libfuzzer_sys::arbitrary::{self, Arbitrary, Unstructured};
use mcp_server::Server;
use mcp_transport_http::McpService;
use serde_json::Value;

use crate::fixture::{self, ToolCall};

/// A header value: absent, one of a few meaningful values, or arbitrary bytes.
#[derive(Debug, Arbitrary)]
enum Pick {
    Absent,
    Known(u8),
    Raw(Vec<u8>),
}

/// The request the input describes.
#[derive(Debug, Arbitrary)]
struct Input {
    method: u8,
    path: u8,
    host: Pick,
    origin: Pick,
    accept: Pick,
    content_type: Pick,
    mcp_method: Pick,
    mcp_name: Pick,
    version: Pick,
    region: Pick,
    encoding: Pick,
    session: Pick,
    extra: Vec<(String, Vec<u8>)>,
    body: Body,
}

#[derive(Debug, Arbitrary)]
enum Body {
    Raw(Vec<u8>),
    /// A tools/call of one of the fixture's tools with arbitrary arguments text.
    Call(ToolCall),
    /// A request of a listed method with the right `_meta`.
    Method {
        method: u8,
        id: i64,
    },
}

const METHODS: [&str; 8] = [
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "prompts/list",
    "subscriptions/listen",
    "ping",
];
const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn known<'a>(pick: &'a Pick, options: &[&'a str]) -> Option<Vec<u8>> {
    match pick {
        Pick::Absent => None,
        Pick::Known(i) => Some(options[usize::from(*i) % options.len()].as_bytes().to_vec()),
        Pick::Raw(bytes) => Some(bytes.clone()),
    }
}

fn body(body: &Body) -> (Vec<u8>, Option<String>, Option<String>) {
    match body {
        Body::Raw(bytes) => (bytes.clone(), None, None),
        Body::Call(call) => (
            call.text(&format!(",{META}")).into_bytes(),
            Some("tools/call".to_owned()),
            Some(call.tool().to_owned()),
        ),
        Body::Method { method, id } => {
            let method = METHODS[usize::from(*method) % METHODS.len()];
            let text =
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{META}}}}}"#);
            (text.into_bytes(), Some(method.to_owned()), None)
        }
    }
}

fn build(input: &Input) -> Option<Request<Full<Bytes>>> {
    let method = [
        Method::POST,
        Method::GET,
        Method::DELETE,
        Method::PUT,
        Method::OPTIONS,
    ][usize::from(input.method) % 5]
        .clone();
    let path = ["/mcp", "/", "/mcp/", "/other", "/mcp?x=1"][usize::from(input.path) % 5];
    let (bytes, mcp_method, mcp_name) = body(&input.body);
    let mut request = Request::builder().method(method).uri(path);
    let headers: [(&str, Option<Vec<u8>>); 11] = [
        (
            "host",
            known(
                &input.host,
                &["127.0.0.1:8080", "localhost", "evil.example", "[::1]:1"],
            ),
        ),
        (
            "origin",
            known(
                &input.origin,
                &["http://localhost:3000", "https://evil.example", "null"],
            ),
        ),
        (
            "accept",
            known(
                &input.accept,
                &[
                    "application/json, text/event-stream",
                    "application/json",
                    "text/event-stream",
                    "*/*",
                ],
            ),
        ),
        (
            "content-type",
            known(
                &input.content_type,
                &[
                    "application/json",
                    "application/json; charset=utf-8",
                    "text/plain",
                ],
            ),
        ),
        (
            "mcp-method",
            known(
                &input.mcp_method,
                &[
                    mcp_method.as_deref().unwrap_or("ping"),
                    "tools/list",
                    "TOOLS/CALL",
                ],
            ),
        ),
        (
            "mcp-name",
            known(
                &input.mcp_name,
                &[mcp_name.as_deref().unwrap_or("echo"), " echo ", "add"],
            ),
        ),
        (
            "mcp-protocol-version",
            known(&input.version, &["2026-07-28", "2025-11-25", "1999-01-01"]),
        ),
        (
            "mcp-param-region",
            known(&input.region, &["eu", "=?base64?ZXU=?=", "=?base64?!!?="]),
        ),
        (
            "content-encoding",
            known(&input.encoding, &["gzip", "identity"]),
        ),
        ("mcp-session-id", known(&input.session, &["abc", ""])),
        ("content-length", None),
    ];
    for (name, value) in headers {
        if let Some(value) = value {
            request = request.header(name, HeaderValue::from_bytes(&value).ok()?);
        }
    }
    for (name, value) in input.extra.iter().take(8) {
        let name = HeaderName::from_bytes(name.as_bytes()).ok()?;
        if name == http::header::CONTENT_LENGTH {
            continue;
        }
        request = request.header(name, HeaderValue::from_bytes(value).ok()?);
    }
    request.body(Full::new(Bytes::from(bytes))).ok()
}

/// Sends `request` and reads the whole response; `None` for an event stream that is
/// still open after its first frames (a listen stream), which the caller drops.
async fn exchange(
    service: &McpService<Server>,
    request: Request<Full<Bytes>>,
) -> (StatusCode, Option<String>, Option<Bytes>) {
    let response = service.handle(request).await.expect("infallible");
    let status = response.status();
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = tokio::time::timeout(Duration::from_millis(20), response.into_body().collect())
        .await
        .ok()
        .map(|collected| {
            collected
                .map(http_body_util::Collected::to_bytes)
                .unwrap_or_default()
        });
    (status, content_type, body)
}

fn service() -> &'static McpService<Server> {
    static SERVICE: std::sync::OnceLock<McpService<Server>> = std::sync::OnceLock::new();
    SERVICE.get_or_init(|| {
        let server = fixture::server();
        let config = fixture::http_config(&server);
        McpService::new(server, config).expect("a valid configuration")
    })
}

/// The statuses the endpoint may answer with.
const STATUSES: [u16; 12] = [200, 202, 400, 403, 404, 405, 406, 413, 415, 422, 429, 500];

/// One input: see the module docs.
pub fn run(data: &[u8]) {
    let Ok(input) = Input::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let Some(request) = build(&input) else {
        return;
    };
    let service = service();
    fixture::runtime().block_on(async {
        let (status, content_type, body) = exchange(service, request).await;
        assert!(STATUSES.contains(&status.as_u16()), "status {status}");
        if let (Some(ct), Some(body)) = (&content_type, &body)
            && ct.starts_with("application/json")
            && !body.is_empty()
        {
            let value: Value = serde_json::from_slice(body).expect("a JSON body is JSON");
            assert_eq!(value["jsonrpc"], "2.0", "{value}");
        }
        // Let whatever the request started finish or be cancelled.
        for _ in 0..100 {
            if service.in_flight() == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(service.in_flight(), 0, "a request was left in flight");

        let valid = Request::post("/mcp")
            .header("host", "127.0.0.1")
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-method", "tools/list")
            .header("mcp-protocol-version", "2026-07-28")
            .body(Full::new(Bytes::from(format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}}}}}"#
            ))))
            .expect("a valid request");
        let (status, _, body) = exchange(service, valid).await;
        assert_eq!(
            status,
            StatusCode::OK,
            "a valid request after the input failed: {:?}",
            body.as_deref().map(String::from_utf8_lossy)
        );
        let body = body.expect("a complete response");
        assert!(
            std::str::from_utf8(&body).is_ok_and(|b| b.contains("\"echo\"")),
            "tools/list after the input"
        );
    });
}
