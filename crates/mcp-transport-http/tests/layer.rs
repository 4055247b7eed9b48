//! Tower layers around the endpoint on this crate's own server
//! (`HttpServer::bind_with_layer`), over a real socket: a layer runs on every request, what
//! it inserts in the request's extensions reaches the handler with the rest of the head,
//! and a layer's error is an answer, not a dropped connection.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use mcp_transport_http::{HttpServer, HttpServerConfig, McpService};
use serde_json::{Value, json};
use tower_service::Service;

use support::{Tag, TestHandler, collect, request_body, standard_headers};

/// Counts the requests it passes on and tags each one's extensions.
#[derive(Clone)]
struct Counting<S> {
    inner: S,
    seen: Arc<AtomicUsize>,
}

impl<S: Service<Request<B>>, B> Service<Request<B>> for Counting<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> S::Future {
        self.seen.fetch_add(1, Ordering::SeqCst);
        request.extensions_mut().insert(Tag("counted"));
        self.inner.call(request)
    }
}

fn post(url: &str, id: i64, method: &str) -> Request<Full<Bytes>> {
    let mut request = Request::post(url);
    for (k, v) in standard_headers(method) {
        request = request.header(k, v);
    }
    request
        .body(Full::new(Bytes::from(request_body(id, method, json!({})))))
        .unwrap()
}

#[tokio::test]
async fn a_layer_runs_on_every_request_and_its_extensions_reach_the_handler() {
    let (handler, _log, _gate) = TestHandler::new();
    let seen = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&seen);
    let layer = tower_layer::layer_fn(move |inner: McpService<TestHandler>| Counting {
        inner,
        seen: Arc::clone(&counted),
    });
    let server = HttpServer::bind_with_layer(
        HttpServer::DEFAULT_ADDR,
        handler,
        HttpServerConfig::default(),
        layer,
    )
    .await
    .unwrap();
    let url = server.url().to_owned();
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();

    for id in 1..=3 {
        let reply = client.request(post(&url, id, "test/parts")).await.unwrap();
        assert_eq!(reply.status(), StatusCode::OK);
        let body: Value = serde_json::from_slice(&collect(reply.into_body()).await).unwrap();
        assert_eq!(body["id"], id);
        assert_eq!(
            body["result"],
            json!({"method": "POST", "path": "/mcp", "tag": "counted", "peer": "127.0.0.1"}),
        );
    }
    assert_eq!(seen.load(Ordering::SeqCst), 3);

    // The layer sees the transport's refusals too: it is in front of the whole endpoint.
    let get = Request::get(&url).body(Full::new(Bytes::new())).unwrap();
    let reply = client.request(get).await.unwrap();
    assert_eq!(reply.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(seen.load(Ordering::SeqCst), 4);
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn without_a_layer_the_head_still_reaches_the_handler() {
    let (server, _log, _gate) = support::serve(HttpServerConfig::default()).await;
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let reply = client
        .request(post(server.url(), 1, "test/parts"))
        .await
        .unwrap();
    let body: Value = serde_json::from_slice(&collect(reply.into_body()).await).unwrap();
    // No layer, so no tag and no peer: the default path inserts nothing.
    assert_eq!(
        body["result"],
        json!({"method": "POST", "path": "/mcp", "tag": null, "peer": null}),
    );
}

#[tokio::test]
async fn a_layers_error_is_a_503_with_a_json_rpc_error() {
    let (handler, mut log, gate) = TestHandler::new();
    let server = HttpServer::bind_with_layer(
        HttpServer::DEFAULT_ADDR,
        handler,
        HttpServerConfig::default(),
        tower::timeout::TimeoutLayer::new(Duration::from_millis(100)),
    )
    .await
    .unwrap();
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();

    // Under the timeout: answered as usual.
    let reply = client
        .request(post(server.url(), 1, "tools/list"))
        .await
        .unwrap();
    assert_eq!(reply.status(), StatusCode::OK);

    // `test/block` waits for the gate, which stays shut: the timeout fires.
    let reply = client
        .request(post(server.url(), 2, "test/block"))
        .await
        .unwrap();
    assert_eq!(support::next_log(&mut log).await, "started test/block");
    assert_eq!(reply.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: Value = serde_json::from_slice(&collect(reply.into_body()).await).unwrap();
    assert_eq!(body["error"]["code"], -32603);
    assert_eq!(body["id"], Value::Null);
    drop(gate);
    server.shutdown(Duration::from_secs(1)).await;
}
