//! Connection threads (`HttpServerConfig::connection_threads`): connections spread over
//! threads with runtimes of their own, and the same shutdown as on the caller's runtime.

mod support;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use mcp_transport_http::{
    Error, HttpServer, HttpServerConfig, MAX_CONNECTION_THREADS, RunningServer,
};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use support::{
    ChannelBody, Log, TestHandler, collect, full_body, next_log, request_body, sse_events,
    standard_headers,
};

/// A connection of its own and a POST for `method` on it.
async fn open(
    addr: std::net::SocketAddr,
    method: &str,
) -> (SendRequest<ChannelBody>, Request<ChannelBody>) {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut request = Request::post("/mcp").header("host", addr.to_string());
    for (k, v) in standard_headers(method) {
        request = request.header(k, v);
    }
    let body = full_body(Bytes::from(request_body(1, method, json!({}))));
    (sender, request.body(body).unwrap())
}

/// A server of the test handler on `config`, with the handler's log and gate.
async fn serve(config: HttpServerConfig) -> (RunningServer, Log, Arc<Semaphore>) {
    support::serve(config).await
}

/// A `test/block` call on a connection of its own, sent once the handler has started it.
async fn blocked_call(
    addr: std::net::SocketAddr,
    log: &mut Log,
) -> JoinHandle<hyper::Result<Response<Incoming>>> {
    let (mut sender, request) = open(addr, "test/block").await;
    let call = tokio::spawn(async move { sender.send_request(request).await });
    assert_eq!(next_log(log).await, "started test/block");
    call
}

#[tokio::test]
async fn connections_are_spread_over_the_threads_and_a_shutdown_lets_them_finish() {
    let (server, mut log, gate) = serve(HttpServerConfig::default().connection_threads(2)).await;
    let addr = server.local_addr();
    assert_eq!(server.connection_runtimes().len(), 2);

    let mut calls = Vec::new();
    for _ in 0..4 {
        calls.push(blocked_call(addr, &mut log).await);
    }
    // Each connection went to the thread with fewer open: two on each, where their
    // tasks (a connection task each) are alive.
    for runtime in server.connection_runtimes() {
        assert!(runtime.metrics().num_alive_tasks() >= 2, "{runtime:?}");
    }

    let shutdown = tokio::spawn(server.shutdown(Duration::from_mins(1)));
    gate.add_permits(4);
    for call in calls {
        let response = call.await.unwrap().unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let body: Value = serde_json::from_slice(&collect(response.into_body()).await).unwrap();
        assert_eq!(body["result"]["released"], true);
    }
    tokio::time::timeout(Duration::from_secs(10), shutdown)
        .await
        .expect("the shutdown ends once the connections are done")
        .unwrap();
    assert!(TcpStream::connect(addr).await.is_err());
}

#[tokio::test]
async fn a_shutdown_cancels_what_outlasts_the_grace_period() {
    let (server, mut log, _gate) = serve(HttpServerConfig::default().connection_threads(2)).await;
    let (mut sender, request) = open(server.local_addr(), "test/listen").await;
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(next_log(&mut log).await, "started test/listen");

    let start = tokio::time::Instant::now();
    let shutdown = tokio::spawn(server.shutdown(Duration::from_millis(300)));
    // After the grace period the token fires; the handler ends its stream with a result,
    // which still reaches the client.
    let events = sse_events(&collect(response.into_body()).await);
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[1]["result"]["cancelled"], true);
    // (The handler's watcher task, which would log the cancellation too, runs on the
    // connection thread's runtime and may go with it before it runs: the result above
    // is what shows the token fired.)
    tokio::time::timeout(Duration::from_secs(10), shutdown)
        .await
        .expect("the shutdown ends")
        .unwrap();
    assert!(start.elapsed() >= Duration::from_millis(300));
}

#[tokio::test]
async fn a_request_that_ignores_its_token_is_dropped_after_the_cancel_grace() {
    let config = HttpServerConfig::default()
        .connection_threads(1)
        .cancel_grace(Duration::from_millis(200));
    let (server, mut log, _gate) = serve(config).await;
    let call = blocked_call(server.local_addr(), &mut log).await;
    tokio::time::timeout(
        Duration::from_secs(10),
        server.shutdown(Duration::from_millis(100)),
    )
    .await
    .expect("the shutdown ends, the blocked request dropped");
    // The connection went with it: the client sees it close without a response.
    let outcome = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .unwrap()
        .unwrap();
    assert!(outcome.is_err(), "{outcome:?}");
}

#[tokio::test]
async fn dropping_the_server_drops_the_connections_at_once() {
    let (server, mut log, _gate) = serve(HttpServerConfig::default().connection_threads(2)).await;
    let call = blocked_call(server.local_addr(), &mut log).await;
    drop(server);
    let outcome = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the connection closes")
        .unwrap();
    assert!(outcome.is_err(), "{outcome:?}");
}

#[tokio::test]
async fn too_many_connection_threads_are_refused() {
    let (handler, _log, _gate) = TestHandler::new();
    let config = HttpServerConfig::default().connection_threads(MAX_CONNECTION_THREADS + 1);
    let refused = HttpServer::bind(HttpServer::DEFAULT_ADDR, handler, config).await;
    assert!(matches!(refused, Err(Error::Config(_))), "{refused:?}");
}
