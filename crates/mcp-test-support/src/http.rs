//! Raw HTTP for the tests of the HTTP endpoints: requests with exactly the headers a test
//! gives, bodies read whole, and the events of a `text/event-stream` body one at a time.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderName, Request, Response};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

/// Serves HTTP/1.1 on `listener`, a task per connection, answering each request with what
/// `answer` makes of it and a clone of `state`, until the returned task is aborted: the
/// stub endpoints a test stands up (an authorization server's, say).
pub fn serve_http1<S, F, Fut>(
    listener: tokio::net::TcpListener,
    state: S,
    answer: F,
) -> tokio::task::JoinHandle<()>
where
    S: Clone + Send + Sync + 'static,
    F: Fn(Request<Incoming>, S) -> Fut + Copy + Send + Sync + 'static,
    Fut: Future<Output = Response<Full<Bytes>>> + Send + 'static,
{
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let state = state.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    let state = state.clone();
                    async move { Ok::<_, std::convert::Infallible>(answer(request, state).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}

/// A plain HTTP/1.1 client.
pub type HttpClient = Client<HttpConnector, Full<Bytes>>;

/// A plain HTTP/1.1 client with hyper's defaults.
pub fn client() -> HttpClient {
    Client::builder(TokioExecutor::new()).build_http()
}

/// A client whose connections leave from `local` (127.0.0.x: on Linux the whole of
/// 127.0.0.0/8 is loopback).
pub fn client_from(local: [u8; 4]) -> HttpClient {
    let mut connector = HttpConnector::new();
    connector.set_local_address(Some(std::net::IpAddr::from(local)));
    Client::builder(TokioExecutor::new()).build(connector)
}

/// The `Mcp-Session-Id` a response names.
pub fn session_id(response: &Response<Incoming>) -> String {
    response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned()
}

/// The token of an `Authorization: Bearer` header, if there is one.
pub fn bearer(headers: &http::HeaderMap) -> Option<&str> {
    headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
}

/// Sends `method` to `url` with `body`, as an MCP client would: `Accept: application/json,
/// text/event-stream` and `Content-Type: application/json`, each replaced by a header of
/// its name in `headers`, then the others of `headers`. The answer's head must come within
/// 10 s.
pub async fn send(
    client: &HttpClient,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: impl Into<Bytes>,
) -> Response<Incoming> {
    let mut request = Request::builder()
        .method(method)
        .uri(url)
        .body(Full::new(body.into()))
        .unwrap();
    let fields = request.headers_mut();
    fields.insert(
        "accept",
        "application/json, text/event-stream".parse().unwrap(),
    );
    fields.insert("content-type", "application/json".parse().unwrap());
    let mut given: Vec<HeaderName> = Vec::new();
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.as_bytes()).unwrap();
        // The first of a name replaces the default; a second of the same name is added.
        if given.contains(&name) {
            fields.append(name, value.parse().unwrap());
        } else {
            fields.insert(name.clone(), value.parse().unwrap());
            given.push(name);
        }
    }
    tokio::time::timeout(Duration::from_secs(10), client.request(request))
        .await
        .expect("an answer in time")
        .unwrap()
}

/// The whole body.
pub async fn body_bytes(response: Response<Incoming>) -> Bytes {
    tokio::time::timeout(Duration::from_secs(10), response.into_body().collect())
        .await
        .expect("the whole body in time")
        .unwrap()
        .to_bytes()
}

/// The whole body, as JSON.
pub async fn json_body(response: Response<Incoming>) -> Value {
    let bytes = body_bytes(response).await;
    serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("a JSON body: {e}: {}", String::from_utf8_lossy(&bytes)))
}

/// The whole body, as text.
pub async fn text_body(response: Response<Incoming>) -> String {
    String::from_utf8(body_bytes(response).await.to_vec()).unwrap()
}

/// One event of a `text/event-stream` body.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// Its `id:`, if it has one.
    pub id: Option<String>,
    /// Its `event:` ("message" when it has none).
    pub name: String,
    /// Its `data:` lines, joined with newlines (`None` when it has none).
    pub data: Option<String>,
}

impl SseEvent {
    /// Its data, "" when it has none.
    pub fn data(&self) -> &str {
        self.data.as_deref().unwrap_or_default()
    }

    /// (its id, its data or "").
    pub fn into_parts(self) -> (Option<String>, String) {
        (self.id, self.data.unwrap_or_default())
    }
}

/// The events of an SSE body, one at a time.
pub struct SseEvents {
    body: Incoming,
    buf: String,
}

impl SseEvents {
    /// The events of `response`'s body (whatever its content type).
    pub fn new(response: Response<Incoming>) -> Self {
        SseEvents::from_body(response.into_body())
    }

    /// The events of the rest of `body`.
    pub fn from_body(body: Incoming) -> Self {
        SseEvents {
            body,
            buf: String::new(),
        }
    }

    /// The events of `response`, which must say it is `text/event-stream`.
    pub fn checked(response: Response<Incoming>) -> Self {
        assert_eq!(
            response.headers()["content-type"],
            "text/event-stream",
            "an SSE reply"
        );
        SseEvents::new(response)
    }

    /// The next event with an id or data (comments and empty events are skipped); `None`
    /// when the stream ends. Each read must come within 10 s.
    pub async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let text: String = self.buf.drain(..end + 2).collect();
                let mut event = SseEvent {
                    name: "message".to_owned(),
                    ..SseEvent::default()
                };
                let mut data: Vec<&str> = Vec::new();
                for line in text.lines() {
                    if let Some(v) = line.strip_prefix("id: ") {
                        event.id = Some(v.to_owned());
                    } else if let Some(v) = line.strip_prefix("event: ") {
                        v.clone_into(&mut event.name);
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data.push(v);
                    } else if line == "data:" {
                        data.push("");
                    }
                }
                if !data.is_empty() {
                    event.data = Some(data.join("\n"));
                }
                if event.id.is_none() && event.data.is_none() {
                    continue;
                }
                return Some(event);
            }
            let frame = tokio::time::timeout(Duration::from_secs(10), self.body.frame())
                .await
                .expect("an event in time")?
                .ok()?;
            if let Ok(data) = frame.into_data() {
                self.buf.push_str(std::str::from_utf8(&data).unwrap());
            }
        }
    }

    /// The `endpoint` event that opens an HTTP+SSE stream (the 2024-11-05 transport): the
    /// path to POST to.
    pub async fn endpoint(&mut self) -> String {
        let event = self.next().await.expect("an endpoint event");
        assert_eq!(event.name, "endpoint", "{event:?}");
        event.data.expect("an endpoint event names the path")
    }

    /// The next event whose data is not empty.
    pub async fn next_with_data(&mut self) -> Option<SseEvent> {
        loop {
            let event = self.next().await?;
            if !event.data().is_empty() {
                return Some(event);
            }
        }
    }

    /// The next event whose data is not empty, as (its id or "", its data as JSON); it
    /// must be a `message` event.
    pub async fn message(&mut self) -> (String, Value) {
        let event = self.next_with_data().await.expect("another event");
        assert_eq!(event.name, "message", "{event:?}");
        let message = serde_json::from_str(event.data()).unwrap();
        (event.id.unwrap_or_default(), message)
    }
}
