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

/// What `test/parts` says of the peer, for a POST sent raw over `stream` after `prefix`.
async fn peer_seen(addr: std::net::SocketAddr, prefix: &[u8], forwarded: Option<&str>) -> Value {
    use std::fmt::Write as _;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let body = request_body(1, "test/parts", json!({}));
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in standard_headers("test/parts") {
        let _ = write!(head, "{k}: {}\r\n", String::from_utf8_lossy(v.as_ref()));
    }
    if let Some(forwarded) = forwarded {
        let _ = write!(head, "X-Forwarded-For: {forwarded}\r\n");
    }
    head.push_str("\r\n");
    let mut bytes = prefix.to_vec();
    bytes.extend_from_slice(head.as_bytes());
    bytes.extend_from_slice(&body);
    stream.write_all(&bytes).await.unwrap();
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply).await;
    let Some((_, body)) = reply.split_once("\r\n\r\n") else {
        return Value::String(reply);
    };
    serde_json::from_str::<Value>(body)
        .map(|v| v["result"]["peer"].clone())
        .unwrap_or(Value::String(reply))
}

#[cfg(feature = "proxy-protocol")]
fn proxy_header(source: &str) -> Vec<u8> {
    use ppp::v2::{Addresses, Builder, Command, IPv4, Protocol, Version};
    let source: std::net::SocketAddrV4 = source.parse().unwrap();
    Builder::with_addresses(
        Version::Two | Command::Proxy,
        Protocol::Stream,
        Addresses::IPv4(IPv4::new(
            *source.ip(),
            std::net::Ipv4Addr::LOCALHOST,
            source.port(),
            8080,
        )),
    )
    .build()
    .unwrap()
}

#[tokio::test]
async fn behind_a_trusted_proxy_the_client_address_is_the_one_it_names() {
    let serve = |config: HttpServerConfig| async move {
        let (handler, _log, _gate) = TestHandler::new();
        HttpServer::bind_with_layer(
            HttpServer::DEFAULT_ADDR,
            handler,
            config,
            tower_layer::Identity::new(),
        )
        .await
        .unwrap()
    };
    let loopback = std::net::IpAddr::from([127, 0, 0, 1]);

    // X-Forwarded-For from a trusted proxy: believed.
    let server = serve(HttpServerConfig::default().trusted_proxies([loopback])).await;
    let addr = server.local_addr();
    assert_eq!(
        peer_seen(addr, b"", Some("203.0.113.7")).await,
        "203.0.113.7"
    );
    assert_eq!(peer_seen(addr, b"", None).await, "127.0.0.1");
    server.shutdown(Duration::from_secs(1)).await;

    // From a peer that is not trusted: ignored.
    let server =
        serve(HttpServerConfig::default().trusted_proxies([std::net::IpAddr::from([10, 0, 0, 2])]))
            .await;
    assert_eq!(
        peer_seen(server.local_addr(), b"", Some("203.0.113.7")).await,
        "127.0.0.1"
    );
    server.shutdown(Duration::from_secs(1)).await;

    #[cfg(feature = "proxy-protocol")]
    proxy_protocol(serve, loopback).await;
}

/// The PROXY protocol: the header's source, and a connection without one closed.
#[cfg(feature = "proxy-protocol")]
async fn proxy_protocol<F, Fut>(serve: F, loopback: std::net::IpAddr)
where
    F: Fn(HttpServerConfig) -> Fut,
    Fut: Future<Output = mcp_transport_http::RunningServer>,
{
    let server = serve(
        HttpServerConfig::default()
            .trusted_proxies([loopback])
            .proxy_protocol(true),
    )
    .await;
    let addr = server.local_addr();
    assert_eq!(
        peer_seen(addr, &proxy_header("198.51.100.9:4242"), None).await,
        "198.51.100.9"
    );
    assert_eq!(peer_seen(addr, b"", None).await, "");
    server.shutdown(Duration::from_secs(1)).await;

    // The PROXY protocol without anyone to trust it from is a configuration error.
    let (handler, _log, _gate) = TestHandler::new();
    assert!(
        HttpServer::bind(
            HttpServer::DEFAULT_ADDR,
            handler,
            HttpServerConfig::default().proxy_protocol(true)
        )
        .await
        .is_err()
    );
}
