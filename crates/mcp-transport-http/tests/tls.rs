//! The HTTPS client end to end: this crate's server behind a TLS listener on 127.0.0.1 with
//! a self-signed certificate made for the test. HTTP/2 is used where the server offers it
//! by ALPN (every concurrent call on one connection), HTTP/1.1 otherwise; JSON and SSE
//! replies, and cancellation by dropping the stream, work over both; a certificate the
//! client does not trust is refused.

#![cfg(feature = "rustls")]

mod support;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use http::Version;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use mcp_jsonrpc::Message;
use mcp_transport_http::{
    Error, HttpClient, HttpClientConfig, HttpServerConfig, McpService, RequestHeaders,
    ResponseStream,
};
use mcp_types::RequestId;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use support::{Log, TestHandler, VERSION, meta, next_log};

/// A TLS server offering `alpn` and what it saw: the HTTP version of each request and how
/// many connections it accepted.
struct TlsServer {
    url: String,
    certificate: CertificateDer<'static>,
    versions: Arc<Mutex<Vec<Version>>>,
    connections: Arc<AtomicUsize>,
    log: Log,
    task: JoinHandle<()>,
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

async fn tls_server(alpn: &[&[u8]]) -> TlsServer {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let certificate = made.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(made.signing_key.serialize_der()));
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![certificate.clone()], key)
        .unwrap();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));

    let (handler, log, _gate) = TestHandler::new();
    let service = McpService::new(handler, HttpServerConfig::default()).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let versions = Arc::new(Mutex::new(Vec::new()));
    let connections = Arc::new(AtomicUsize::new(0));
    let (seen, accepted) = (Arc::clone(&versions), Arc::clone(&connections));
    let task = tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            accepted.fetch_add(1, Ordering::SeqCst);
            let (acceptor, service, seen) = (acceptor.clone(), service.clone(), seen.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let recording = hyper::service::service_fn(move |request: http::Request<_>| {
                    seen.lock().unwrap().push(request.version());
                    service.handle(request)
                });
                let _ = auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tls), recording)
                    .await;
            });
        }
    });
    TlsServer {
        url: format!("https://localhost:{}/mcp", addr.port()),
        certificate,
        versions,
        connections,
        log,
        task,
    }
}

/// A client trusting only the server's own certificate.
fn trusting(server: &TlsServer) -> HttpClient {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(server.certificate.clone()).unwrap();
    let tls = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    HttpClient::new(&server.url, HttpClientConfig::default().tls(Arc::new(tls))).unwrap()
}

async fn call(client: &HttpClient, id: i64, method: &str) -> Vec<Value> {
    let mut params = json!({"id": id});
    params["_meta"] = meta();
    let frame = mcp_jsonrpc::encode_request(&RequestId::from(id), method, Some(&params)).unwrap();
    let mut stream = client
        .request(frame, RequestHeaders::new(VERSION, method))
        .await
        .unwrap();
    let mut messages = Vec::new();
    while let Some(message) = stream.next().await {
        messages.push(match message.unwrap() {
            Message::Notification(n) => json!({"method": n.method}),
            Message::Response(r) => {
                let result: Value = serde_json::from_str(r.outcome.unwrap().get()).unwrap();
                json!({"id": r.id, "result": result})
            }
            other => panic!("unexpected message {other:?}"),
        });
    }
    messages
}

/// A JSON reply and an SSE reply over one connection.
async fn both_reply_shapes(client: &HttpClient) {
    let echoed = call(client, 1, "echo").await;
    assert_eq!(echoed.len(), 1);
    assert_eq!(echoed[0]["result"]["id"], 1);
    let streamed = call(client, 2, "test/notify").await;
    let methods: Vec<_> = streamed.iter().map(|m| m["method"].clone()).collect();
    assert_eq!(
        methods,
        [
            json!("notifications/message"),
            json!("notifications/message"),
            Value::Null
        ]
    );
    assert_eq!(streamed[2]["result"], json!({"done": true}));
}

#[tokio::test]
async fn http2_when_the_server_offers_it() {
    let server = tls_server(&[b"h2", b"http/1.1"]).await;
    let client = trusting(&server);
    both_reply_shapes(&client).await;

    // Concurrent calls share the one HTTP/2 connection.
    let calls = (10..18).map(|id| {
        let client = client.clone();
        tokio::spawn(async move { call(&client, id, "echo").await })
    });
    for (id, call) in (10..18).zip(calls) {
        assert_eq!(call.await.unwrap()[0]["result"]["id"], id);
    }
    let versions = server.versions.lock().unwrap().clone();
    assert_eq!(versions.len(), 10);
    assert!(
        versions.iter().all(|v| *v == Version::HTTP_2),
        "{versions:?}"
    );
    assert_eq!(server.connections.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn http1_when_the_server_offers_only_it() {
    let server = tls_server(&[b"http/1.1"]).await;
    let client = trusting(&server);
    both_reply_shapes(&client).await;
    let versions = server.versions.lock().unwrap().clone();
    assert_eq!(versions, [Version::HTTP_11, Version::HTTP_11]);
}

#[tokio::test]
async fn dropping_the_stream_cancels_the_request_over_http2() {
    let mut server = tls_server(&[b"h2"]).await;
    let client = trusting(&server);
    let mut params = json!({});
    params["_meta"] = meta();
    let frame =
        mcp_jsonrpc::encode_request(&RequestId::from(1), "test/listen", Some(&params)).unwrap();
    let mut stream: ResponseStream = client
        .request(frame, RequestHeaders::new(VERSION, "test/listen"))
        .await
        .unwrap();
    assert!(matches!(
        stream.next().await,
        Some(Ok(Message::Notification(_)))
    ));
    assert_eq!(next_log(&mut server.log).await, "started test/listen");
    drop(stream);
    assert_eq!(next_log(&mut server.log).await, "cancelled test/listen");
    // The connection outlives the cancelled stream: the next call reuses it.
    assert_eq!(call(&client, 2, "echo").await[0]["result"]["id"], 2);
    assert_eq!(server.connections.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_untrusted_certificate_is_refused() {
    let server = tls_server(&[b"h2", b"http/1.1"]).await;
    // The default roots (webpki-roots) do not include the test's self-signed certificate.
    let client = HttpClient::new(&server.url, HttpClientConfig::default()).unwrap();
    let mut params = json!({});
    params["_meta"] = meta();
    let frame = mcp_jsonrpc::encode_request(&RequestId::from(1), "echo", Some(&params)).unwrap();
    let err = client
        .request(frame, RequestHeaders::new(VERSION, "echo"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Send { connect: true, .. }), "{err:?}");
    assert!(server.versions.lock().unwrap().is_empty());
}

/// What a loopback HTTP proxy saw: one line per connection, `CONNECT host:port` or the
/// request line of a forwarded request, and the `Proxy-Authorization` it carried.
#[derive(Default)]
struct ProxySeen {
    lines: Vec<String>,
    auth: Vec<Option<String>>,
}

/// A tiny HTTP proxy on 127.0.0.1: `CONNECT` opens a tunnel to the named authority;
/// any other request (in absolute form) is forwarded as it is, with the rest of its
/// connection, to the authority of its target. Each connection's first line is recorded.
async fn proxy() -> (String, Arc<Mutex<ProxySeen>>, JoinHandle<()>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(ProxySeen::default()));
    let record = Arc::clone(&seen);
    let task = tokio::spawn(async move {
        loop {
            let Ok((mut client, _)) = listener.accept().await else {
                return;
            };
            let record = Arc::clone(&record);
            tokio::spawn(async move {
                // The head, byte by byte up to its blank line (small, and test-only).
                let mut head = Vec::new();
                while !head.ends_with(b"\r\n\r\n") {
                    let mut byte = [0u8; 1];
                    if client.read(&mut byte).await.unwrap_or(0) == 0 || head.len() > 64 << 10 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let text = String::from_utf8_lossy(&head).into_owned();
                let line = text.lines().next().unwrap_or_default().to_owned();
                let auth = text
                    .lines()
                    .find_map(|l| {
                        l.strip_prefix("proxy-authorization: ")
                            .or_else(|| l.strip_prefix("Proxy-Authorization: "))
                    })
                    .map(str::to_owned);
                {
                    let mut seen = record.lock().unwrap();
                    seen.lines.push(line.clone());
                    seen.auth.push(auth);
                }
                let mut parts = line.split(' ');
                let (method, target) = (
                    parts.next().unwrap_or_default(),
                    parts.next().unwrap_or_default(),
                );
                if method == "CONNECT" {
                    let Ok(mut server) =
                        tokio::net::TcpStream::connect(target.replace("localhost", "127.0.0.1"))
                            .await
                    else {
                        let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n").await;
                        return;
                    };
                    client
                        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                        .await
                        .unwrap();
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                } else {
                    let uri: http::Uri = target.parse().unwrap();
                    let mut server =
                        tokio::net::TcpStream::connect(uri.authority().unwrap().as_str())
                            .await
                            .unwrap();
                    server.write_all(&head).await.unwrap();
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
        }
    });
    (url, seen, task)
}

/// A client of `server` trusting its certificate, with `config`'s other settings.
fn trusting_with(server: &TlsServer, config: HttpClientConfig) -> HttpClient {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(server.certificate.clone()).unwrap();
    let tls = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    HttpClient::new(&server.url, config.tls(Arc::new(tls))).unwrap()
}

#[tokio::test]
async fn https_goes_through_a_connect_tunnel_unless_no_proxy_says_otherwise() {
    let server = tls_server(&[b"h2", b"http/1.1"]).await;
    let (proxy_url, seen, task) = proxy().await;
    let proxy_url = proxy_url.replace("http://", "http://user:pass@");

    let client = trusting_with(
        &server,
        HttpClientConfig::default().proxy(mcp_transport_http::ProxyConfig::new(&proxy_url, "")),
    );
    both_reply_shapes(&client).await;
    {
        let seen = seen.lock().unwrap();
        let port = server
            .url
            .split(':')
            .nth(2)
            .unwrap()
            .split('/')
            .next()
            .unwrap();
        // One tunnel, to the endpoint, with the proxy's credentials; TLS (and HTTP/2)
        // end to end inside it.
        assert_eq!(seen.lines, [format!("CONNECT localhost:{port} HTTP/1.1")]);
        assert_eq!(seen.auth, [Some("Basic dXNlcjpwYXNz".to_owned())]);
    }
    assert!(
        server
            .versions
            .lock()
            .unwrap()
            .iter()
            .all(|v| *v == Version::HTTP_2)
    );

    // NO_PROXY naming the host: straight to the server, the proxy sees nothing more.
    let direct = trusting_with(
        &server,
        HttpClientConfig::default().proxy(mcp_transport_http::ProxyConfig::new(
            &proxy_url,
            "example.org, localhost",
        )),
    );
    both_reply_shapes(&direct).await;
    assert_eq!(seen.lock().unwrap().lines.len(), 1);
    task.abort();
}

#[tokio::test]
async fn http_goes_to_the_proxy_in_absolute_form() {
    let (running, _log, _gate) = support::serve(HttpServerConfig::default()).await;
    let (proxy_url, seen, task) = proxy().await;
    let config = HttpClientConfig::default().proxy(mcp_transport_http::ProxyConfig::per_scheme(
        Some(&proxy_url),
        None,
        "",
    ));
    let client = HttpClient::new(running.url(), config).unwrap();
    for id in 1..=3 {
        assert_eq!(call(&client, id, "echo").await[0]["result"]["id"], id);
    }
    let lines = seen.lock().unwrap().lines.clone();
    // One kept-alive connection to the proxy; the request in absolute form.
    assert_eq!(lines, [format!("POST {} HTTP/1.1", running.url())]);

    // A proxy for https only leaves http direct; so does NO_PROXY with `*`.
    for config in [
        mcp_transport_http::ProxyConfig::per_scheme(None, Some(&proxy_url), ""),
        mcp_transport_http::ProxyConfig::new(&proxy_url, "*"),
    ] {
        seen.lock().unwrap().lines.clear();
        let client =
            HttpClient::new(running.url(), HttpClientConfig::default().proxy(config)).unwrap();
        assert_eq!(call(&client, 9, "echo").await[0]["result"]["id"], 9);
        assert!(seen.lock().unwrap().lines.is_empty());
    }
    task.abort();
    running.shutdown(std::time::Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_custom_connector_opens_the_connections() {
    use hyper_util::client::legacy::connect::HttpConnector;
    let (running, _log, _gate) = support::serve(HttpServerConfig::default()).await;
    let opened = Arc::new(AtomicUsize::new(0));
    let counting = Arc::clone(&opened);
    // Any `Service<Uri>`: hyper-util's connector, counting the connections it opens.
    let connector = tower_service_fn(move |uri: http::Uri| {
        counting.fetch_add(1, Ordering::SeqCst);
        let mut inner = HttpConnector::new();
        async move { tower_service::Service::call(&mut inner, uri).await }
    });
    let config =
        HttpClientConfig::default().connector(mcp_transport_http::CustomConnector::new(connector));
    let client = HttpClient::new(running.url(), config).unwrap();
    for id in 1..=3 {
        assert_eq!(call(&client, id, "echo").await[0]["result"]["id"], id);
    }
    assert_eq!(
        opened.load(Ordering::SeqCst),
        1,
        "one connection, kept alive"
    );

    // A connector that fails: the call fails as a connect error, nothing panics.
    let failing = tower_service_fn(|_uri: http::Uri| async {
        Err::<hyper_util::rt::TokioIo<tokio::net::TcpStream>, _>(std::io::Error::other("no route"))
    });
    let client = HttpClient::new(
        running.url(),
        HttpClientConfig::default().connector(mcp_transport_http::CustomConnector::new(failing)),
    )
    .unwrap();
    let frame =
        mcp_jsonrpc::encode_request(&RequestId::from(1), "echo", Some(&json!({"_meta": meta()})))
            .unwrap();
    let err = client
        .request(frame, RequestHeaders::new(VERSION, "echo"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Send { connect: true, .. }), "{err:?}");
    running.shutdown(std::time::Duration::from_secs(1)).await;
}

/// A `tower_service::Service` from a closure (tower's `service_fn`, without tower).
fn tower_service_fn<F, Fut, T, E>(f: F) -> ServiceFn<F>
where
    F: Fn(http::Uri) -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    ServiceFn(f)
}

#[derive(Clone)]
struct ServiceFn<F>(F);

impl<F, Fut, T, E> tower_service::Service<http::Uri> for ServiceFn<F>
where
    F: Fn(http::Uri) -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    type Response = T;
    type Error = E;
    type Future = Fut;
    fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), E>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn call(&mut self, uri: http::Uri) -> Fut {
        (self.0)(uri)
    }
}
