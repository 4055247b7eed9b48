//! The endpoint mounted in an axum router beside another route, called over a real socket.

mod support;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use mcp_transport_http::{HttpServerConfig, McpService};
use serde_json::{Value, json};

use support::{TestHandler, collect, request_body, standard_headers};

#[tokio::test]
async fn the_service_mounts_beside_other_routes() {
    let (handler, _log, _gate) = TestHandler::new();
    let mcp = McpService::new(handler, HttpServerConfig::default()).unwrap();
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .route_service("/mcp", mcp.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await
            .unwrap();
    });

    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let health = client
        .get(format!("http://{addr}/health").parse().unwrap())
        .await
        .unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    assert_eq!(&collect(health.into_body()).await[..], b"ok");

    let post = |method: &str| {
        let mut request = Request::post(format!("http://{addr}/mcp"));
        for (k, v) in standard_headers(method) {
            request = request.header(k, v);
        }
        request
            .body(Full::new(Bytes::from(request_body(
                3,
                method,
                json!({"x": 1}),
            ))))
            .unwrap()
    };
    let reply = client.request(post("tools/list")).await.unwrap();
    assert_eq!(reply.status(), StatusCode::OK);
    let body: Value = serde_json::from_slice(&collect(reply.into_body()).await).unwrap();
    assert_eq!(body["id"], 3);
    assert_eq!(body["result"]["x"], 1);

    // SSE replies stream through axum too.
    let reply = client.request(post("test/notify")).await.unwrap();
    assert_eq!(reply.headers()["content-type"], "text/event-stream");
    let events = support::sse_events(&collect(reply.into_body()).await);
    assert_eq!(events.len(), 3);

    // The service's own rules still apply behind the router.
    let mut wrong = post("tools/list");
    wrong
        .headers_mut()
        .insert("origin", "https://evil.example.com".parse().unwrap());
    assert_eq!(
        client.request(wrong).await.unwrap().status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(mcp.in_flight(), 0);

    let _ = stop.send(());
    server.await.unwrap();
}

/// `cancel_all` fires the token of a request that waits when it is called, and of every
/// request still to come (born cancelled), though no request token is a child of the
/// service's.
#[tokio::test]
async fn cancel_all_reaches_waiting_requests_and_later_ones() {
    let (handler, mut log, _gate) = TestHandler::new();
    let mcp = McpService::new(handler, HttpServerConfig::default()).unwrap();
    let post = || {
        let mut request = Request::post("http://127.0.0.1/mcp");
        for (k, v) in standard_headers("test/wait") {
            request = request.header(k, v);
        }
        request
            .body(Full::new(Bytes::from(request_body(
                1,
                "test/wait",
                json!({}),
            ))))
            .unwrap()
    };
    let waiting = tokio::spawn(mcp.handle(post()));
    assert_eq!(log.recv().await.unwrap(), "started test/wait");
    mcp.cancel_all();
    let answers = [
        tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
            .await
            .expect("the waiting request is cancelled")
            .unwrap()
            .unwrap(),
        tokio::time::timeout(std::time::Duration::from_secs(5), mcp.handle(post()))
            .await
            .expect("a request after cancel_all is cancelled at once")
            .unwrap(),
    ];
    for answer in answers {
        assert_eq!(answer.status(), StatusCode::OK);
        let bytes = http_body_util::BodyExt::collect(answer.into_body())
            .await
            .unwrap()
            .to_bytes();
        let body: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(body["result"]["cancelled"], true, "{body}");
    }
}
