//! The peer engine over an in-memory duplex: ids, timeouts, progress, cancellation both
//! ways, bounded concurrency, duplicate ids, stray responses, malformed input, shutdown.
//!
//! Time-dependent tests run on tokio's paused clock: nothing sleeps for real. The "raw"
//! side of a test is the bare other end of the duplex, so every frame the engine sends is
//! observed exactly.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_jsonrpc::{
    Error, ErrorObject, Handler, NoHandler, Overload, Peer, PeerConfig, Request, RequestContext,
    RequestOptions, encode_request,
};
use mcp_test_support::{MemoryWire, Recorder};
use mcp_types::{ErrorCode, RequestId};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::Notify;

/// The bare other end of a connection: every frame the engine sends is observed exactly.
type Raw = MemoryWire;

fn connect<H: Handler>(handler: H, config: PeerConfig) -> (Peer, mcp_jsonrpc::Connection, Raw) {
    // A frame is awaited 30 s of the paused clock at most.
    let (raw, (read, write)) = MemoryWire::pair(64, Duration::from_secs(30));
    let (peer, conn) = Peer::connect(read, write, handler, config);
    (peer, conn, raw)
}

/// The default configuration with this request timeout.
fn with_timeout(timeout: Duration) -> PeerConfig {
    let mut config = PeerConfig::default();
    config.request_timeout = timeout;
    config
}

/// A peer serving [`Server`] with `config`: what its handlers share with the test, and
/// the bare other end.
fn serve(config: PeerConfig) -> (Arc<Behaviours>, Peer, mcp_jsonrpc::Connection, Raw) {
    let behaviours = Arc::new(Behaviours::default());
    let (peer, conn, raw) = connect(Server(Arc::clone(&behaviours)), config);
    (behaviours, peer, conn, raw)
}

/// The request `method` with `params` (default options) from `peer`, on a task of its own.
fn spawn_request(
    peer: Peer,
    method: &'static str,
    params: Option<Value>,
) -> tokio::task::JoinHandle<Result<Box<RawValue>, Error>> {
    tokio::spawn(async move {
        peer.request(method, params.as_ref(), RequestOptions::default())
            .await
    })
}

/// The request `x` (no params, default options) from `peer`, on a task of its own.
fn spawn_x(peer: Peer) -> tokio::task::JoinHandle<Result<Box<RawValue>, Error>> {
    spawn_request(peer, "x", None)
}

fn raw(value: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).unwrap()
}

/// A handler whose behaviour is chosen by the method name.
#[derive(Default)]
struct Behaviours {
    running: AtomicUsize,
    peak: AtomicUsize,
    release: Notify,
    cancelled: AtomicUsize,
}

impl Behaviours {
    /// Lets the engine's tasks run until a handler is running.
    async fn started(&self) {
        self.until(|b| b.running.load(Ordering::SeqCst) != 0).await;
    }

    /// Lets the engine's tasks run until `holds` is true of the handlers' state.
    async fn until(&self, holds: impl Fn(&Behaviours) -> bool) {
        while !holds(self) {
            tokio::task::yield_now().await;
        }
    }
}

#[derive(Default)]
struct Server(Arc<Behaviours>);

impl Handler for Server {
    async fn request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let params: Value = request
            .params
            .as_ref()
            .map_or(Value::Null, |p| serde_json::from_str(p.text()).unwrap());
        match request.method.as_str() {
            "echo" => Ok(raw(&params)),
            "fail" => {
                Err(ErrorObject::invalid_params("bad input").with_data(json!({"why": "test"})))
            }
            // Runs until released or cancelled, counting concurrency.
            "hold" => {
                let now = self.0.running.fetch_add(1, Ordering::SeqCst) + 1;
                self.0.peak.fetch_max(now, Ordering::SeqCst);
                let outcome = tokio::select! {
                    () = self.0.release.notified() => Ok(raw(&json!("released"))),
                    () = cx.cancellation().cancelled() => {
                        self.0.cancelled.fetch_add(1, Ordering::SeqCst);
                        Ok(raw(&json!("cancelled")))
                    }
                };
                self.0.running.fetch_sub(1, Ordering::SeqCst);
                outcome
            }
            // Waits without looking at its cancellation, then asks whether it was
            // cancelled (its token is made only then).
            "late" => {
                self.0.running.fetch_add(1, Ordering::SeqCst);
                self.0.release.notified().await;
                self.0.running.fetch_sub(1, Ordering::SeqCst);
                if cx.is_cancelled() && cx.cancellation().is_cancelled() {
                    self.0.cancelled.fetch_add(1, Ordering::SeqCst);
                }
                Ok(raw(&json!("late")))
            }
            // Ignores cancellation entirely.
            "stubborn" => {
                std::future::pending::<()>().await;
                unreachable!()
            }
            "progress" => {
                let token: RequestId = serde_json::from_value(params["token"].clone()).unwrap();
                for step in 1..=3 {
                    cx.progress(token.clone(), f64::from(step), Some(3.0), None)
                        .await
                        .unwrap();
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                Ok(raw(&json!("done")))
            }
            // Panics at once, or after waiting (on a task of its own by then).
            "panic" => panic!("a handler bug"),
            "panic-later" => {
                tokio::time::sleep(Duration::from_millis(10)).await;
                panic!("a later handler bug")
            }
            other => Err(ErrorObject::method_not_found(other)),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn requests_get_their_own_responses_in_any_order() {
    let (peer, _conn, mut raw_side) = connect(NoHandler, PeerConfig::default());
    let first = spawn_request(peer.clone(), "a", Some(json!({"n": 1})));
    let second = spawn_request(peer.clone(), "b", None);
    let r1 = raw_side.recv().await;
    let r2 = raw_side.recv().await;
    assert_ne!(r1["id"], r2["id"], "every request gets a fresh id");
    assert_eq!(r1["jsonrpc"], "2.0");
    // Answer in reverse order; each caller still gets its own.
    for r in [&r2, &r1] {
        raw_side
            .send(json!({"jsonrpc": "2.0", "id": r["id"], "result": {"method": r["method"]}}))
            .await;
    }
    let a: Value = serde_json::from_str(first.await.unwrap().unwrap().get()).unwrap();
    let b: Value = serde_json::from_str(second.await.unwrap().unwrap().get()).unwrap();
    assert_eq!(
        (a["method"].as_str(), b["method"].as_str()),
        (Some("a"), Some("b"))
    );
}

#[tokio::test(start_paused = true)]
async fn a_frame_the_caller_writes_is_sent_with_its_id_and_answered() {
    let (peer, _conn, mut raw_side) = connect(NoHandler, PeerConfig::default());
    let call = tokio::spawn({
        let peer = peer.clone();
        async move {
            peer.request_encoded(
                "m",
                |id| {
                    let RequestId::Integer(n) = id else {
                        panic!("the engine's ids are integers")
                    };
                    Ok::<_, serde_json::Error>(
                        format!(r#"{{"jsonrpc":"2.0","id":{n},"method":"m","params":[7]}}"#)
                            .into_bytes(),
                    )
                },
                RequestOptions::default(),
            )
            .await
        }
    });
    let sent = raw_side.recv().await;
    assert_eq!(sent["method"], "m");
    assert_eq!(sent["params"], json!([7]));
    raw_side
        .send(json!({"jsonrpc": "2.0", "id": sent["id"], "result": {"ok": true}}))
        .await;
    let answer = call.await.unwrap().unwrap();
    let result: Value = serde_json::from_str(answer.text()).unwrap();
    assert_eq!(result, json!({"ok": true}));

    // A frame that cannot be written fails the request as an encoding error, and nothing
    // is sent.
    let failed = peer
        .request_encoded(
            "m",
            |_| Err::<Vec<u8>, _>(serde::ser::Error::custom("no")),
            RequestOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&failed, mcp_jsonrpc::Error::Encode { method, .. } if method == "m"),
        "{failed:?}"
    );
    raw_side.silent_for(Duration::from_secs(1)).await;
}

/// Sends a request through `request_encoded`, answers it with `reply` (given the id as
/// text), and returns what the caller got.
async fn answered_with(reply: impl Fn(&str) -> String) -> Result<mcp_jsonrpc::RawResult, Error> {
    let (peer, _conn, mut raw_side) = connect(NoHandler, PeerConfig::default());
    let call = tokio::spawn(async move {
        peer.request_encoded(
            "m",
            |id| encode_request(id, "m", None::<&Value>),
            RequestOptions::default(),
        )
        .await
    });
    let sent = raw_side.recv().await;
    raw_side
        .send_bytes(reply(&sent["id"].to_string()).into_bytes())
        .await;
    call.await.unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_response_reaches_the_caller_checked_whatever_its_layout() {
    for (reply, result) in [
        (
            r#"{"jsonrpc":"2.0","id":ID,"result":{"content":[],"n":1}}"#,
            r#"{"content":[],"n":1}"#,
        ),
        // The keys sorted (as a `serde_json::Value` writes them), or in any other order.
        (r#"{"id":ID,"jsonrpc":"2.0","result":[1]}"#, "[1]"),
        (r#"{"result":[1],"id":ID,"jsonrpc":"2.0"}"#, "[1]"),
        // A member after the result: the frame is still a response.
        (
            r#"{"jsonrpc":"2.0","id":ID,"result":{"a":1},"note":"x"}"#,
            r#"{"a":1}"#,
        ),
    ] {
        let answer = answered_with(|id| reply.replace("ID", id)).await.unwrap();
        assert!(answer.is_checked(), "{reply}");
        assert_eq!(answer.text(), result, "{reply}");
        assert_eq!(answer.into_raw_value().unwrap().get(), result, "{reply}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_malformed_response_is_dropped_and_the_request_waits() {
    // A result and an error both, or a frame that is not JSON: the decoder refuses it, so
    // it answers no request, and the request runs to its timeout.
    for reply in [
        r#"{"jsonrpc":"2.0","id":ID,"result":{},"error":{"code":1,"message":"m"}}"#,
        r#"{"jsonrpc":"2.0","id":ID,"result":{"a":}"#,
    ] {
        let err = answered_with(|id| reply.replace("ID", id))
            .await
            .unwrap_err();
        assert!(err.is_timeout(), "{reply}: {err:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn an_error_response_is_returned_as_data() {
    let (peer, _conn, mut raw_side) = connect(NoHandler, PeerConfig::default());
    let call = spawn_x(peer);
    let r = raw_side.recv().await;
    raw_side
        .send(json!({"jsonrpc": "2.0", "id": r["id"], "error": {"code": -32602, "message": "no", "data": [1]}}))
        .await;
    let err = call.await.unwrap().unwrap_err();
    let remote = err.remote().expect("a remote error");
    assert_eq!(
        (remote.code, remote.message.as_str(), remote.data.clone()),
        (ErrorCode::INVALID_PARAMS, "no", Some(json!([1])))
    );
}

#[tokio::test(start_paused = true)]
async fn a_timeout_withdraws_the_request_and_tells_the_peer() {
    let config = with_timeout(Duration::from_secs(5));
    let (peer, _conn, mut raw_side) = connect(NoHandler, config);
    let started = tokio::time::Instant::now();
    let call = tokio::spawn(async move {
        peer.request("slow", None::<&Value>, RequestOptions::default())
            .await
    });
    let request = raw_side.recv().await;
    let cancel = raw_side.recv().await;
    let err = call.await.unwrap().unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert_eq!(started.elapsed(), Duration::from_secs(5));
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], request["id"]);
    assert_eq!(cancel["params"]["reason"], "timeout");
    // A late answer to the withdrawn request is dropped without harm.
    raw_side
        .send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {}}))
        .await;
}

/// The connection's one timeout sweeper keeps every request's own timeout: a short one
/// made while a long one waits fires on time (it wakes the sweeper), the long one later,
/// and an answered request never times out.
#[tokio::test(start_paused = true)]
async fn timeouts_of_different_lengths_each_fire_on_time() {
    let config = with_timeout(Duration::from_secs(30));
    let (peer, _conn, mut raw_side) = connect(NoHandler, config);
    let started = tokio::time::Instant::now();
    let timed = |peer: Peer, method: &'static str, options: RequestOptions| {
        tokio::spawn(async move {
            let outcome = peer.request(method, None::<&Value>, options).await;
            (outcome, started.elapsed())
        })
    };
    let long = timed(peer.clone(), "long", RequestOptions::default());
    let long_request = raw_side.recv().await;
    let answered = timed(
        peer.clone(),
        "answered",
        RequestOptions::default().timeout(Duration::from_secs(2)),
    );
    let answered_request = raw_side.recv().await;
    let short = timed(
        peer.clone(),
        "short",
        RequestOptions::default().timeout(Duration::from_secs(5)),
    );
    let short_request = raw_side.recv().await;
    let endless = timed(
        peer.clone(),
        "endless",
        RequestOptions::default()
            .timeout(Duration::MAX)
            .max_timeout(Duration::MAX),
    );
    raw_side.recv().await;
    raw_side
        .send(json!({"jsonrpc": "2.0", "id": answered_request["id"], "result": {"ok": true}}))
        .await;
    let (outcome, _) = within(answered).await;
    assert_eq!(outcome.unwrap().get(), r#"{"ok":true}"#);

    let (outcome, elapsed) = within(short).await;
    let err = outcome.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(
        err.to_string().contains("short"),
        "the method is named: {err}"
    );
    assert_eq!(elapsed, Duration::from_secs(5));
    let cancel = raw_side.recv().await;
    assert_eq!(cancel["params"]["requestId"], short_request["id"]);
    assert_eq!(cancel["params"]["reason"], "timeout");

    let (outcome, elapsed) = within(long).await;
    assert!(outcome.unwrap_err().is_timeout());
    assert_eq!(elapsed, Duration::from_secs(30));
    let cancel = raw_side.recv().await;
    assert_eq!(cancel["params"]["requestId"], long_request["id"]);
    assert!(!endless.is_finished(), "no timeout is no timeout");
}

/// A spawned call's outcome, which must come within an hour of (paused) time: a sweeper
/// that never wakes fails the test instead of hanging it.
async fn within<T>(call: tokio::task::JoinHandle<T>) -> T {
    tokio::time::timeout(Duration::from_hours(1), call)
        .await
        .expect("the call ended within the hour")
        .unwrap()
}

/// Dropping the connection fails the requests still waiting at once (no answer can
/// come), rather than leaving them to their timeouts.
#[tokio::test(start_paused = true)]
async fn dropping_the_connection_fails_waiting_requests() {
    let (peer, conn, mut raw_side) = connect(NoHandler, PeerConfig::default());
    let started = tokio::time::Instant::now();
    let call = tokio::spawn(async move {
        let outcome = peer
            .request("x", None::<&Value>, RequestOptions::default())
            .await;
        (outcome, started.elapsed())
    });
    raw_side.recv().await;
    drop(conn);
    let (outcome, elapsed) = call.await.unwrap();
    let err = outcome.unwrap_err();
    assert!(matches!(err, mcp_jsonrpc::Error::Closed(_)), "{err}");
    assert_eq!(elapsed, Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn progress_resets_the_timeout_but_not_the_hard_maximum() {
    let mut config = with_timeout(Duration::from_secs(10));
    config.max_request_timeout = Duration::from_secs(25);
    let (peer, _conn, mut raw_side) = connect(NoHandler, config);
    let seen = Arc::new(AtomicUsize::new(0));
    let options = RequestOptions::default().progress(RequestId::from("tok"), {
        let seen = Arc::clone(&seen);
        move |p| {
            assert_eq!(p.progress_token, RequestId::from("tok"));
            seen.fetch_add(1, Ordering::SeqCst);
        }
    });
    let started = tokio::time::Instant::now();
    let call = tokio::spawn(async move {
        let outcome = peer.request("long", None::<&Value>, options).await;
        (outcome, started.elapsed())
    });
    let request = raw_side.recv().await;
    // Progress every 8 s keeps a 10 s timeout alive, until the 25 s hard limit.
    for step in 1..=5 {
        tokio::time::sleep(Duration::from_secs(8)).await;
        if call.is_finished() {
            break;
        }
        raw_side
            .send(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                         "params": {"progressToken": "tok", "progress": step}}))
            .await;
    }
    let (outcome, elapsed) = call.await.unwrap();
    assert!(outcome.unwrap_err().is_timeout());
    assert_eq!(
        elapsed,
        Duration::from_secs(25),
        "the hard maximum, not 8 s × 5 + 10 s"
    );
    assert_eq!(
        seen.load(Ordering::SeqCst),
        3,
        "progress at 8, 16 and 24 s reached the callback"
    );
    let cancel = raw_side.recv().await;
    assert_eq!(cancel["params"]["requestId"], request["id"]);
}

#[tokio::test(start_paused = true)]
async fn without_progress_the_timeout_is_not_extended() {
    let config = with_timeout(Duration::from_secs(10));
    let (peer, _conn, mut raw_side) = connect(NoHandler, config);
    let options = RequestOptions::default().progress(RequestId::from("mine"), |_| {});
    let started = tokio::time::Instant::now();
    let call = tokio::spawn(async move { peer.request("long", None::<&Value>, options).await });
    raw_side.recv().await;
    tokio::time::sleep(Duration::from_secs(6)).await;
    // Progress for somebody else's token does not count.
    raw_side
        .send(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "other", "progress": 1}}))
        .await;
    assert!(call.await.unwrap().unwrap_err().is_timeout());
    assert_eq!(started.elapsed(), Duration::from_secs(10));
}

#[tokio::test(start_paused = true)]
async fn dropping_a_request_future_cancels_it() {
    let (peer, _conn, mut raw_side) = connect(NoHandler, PeerConfig::default());
    let call = spawn_x(peer);
    let request = raw_side.recv().await;
    call.abort();
    let cancel = raw_side.recv().await;
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], request["id"]);
}

#[tokio::test(start_paused = true)]
async fn without_cancel_notifications_a_dropped_request_is_silent() {
    let mut config = PeerConfig::default();
    config.cancel_notifications = false;
    let (peer, _conn, mut raw_side) = connect(NoHandler, config);
    let call = spawn_x(peer);
    raw_side.recv().await;
    call.abort();
    raw_side.silent_for(Duration::from_secs(5)).await;
}

#[tokio::test(start_paused = true)]
async fn inbound_requests_are_answered_and_errors_are_sent_as_errors() {
    let (_peer, _conn, mut raw_side) = connect(Server::default(), PeerConfig::default());
    raw_side.request_with(1, "echo", json!({"x": [1, 2]})).await;
    assert_eq!(
        raw_side.recv().await,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"x": [1, 2]}})
    );
    raw_side.request_with("s", "fail", json!({})).await;
    assert_eq!(
        raw_side.recv().await,
        json!({"jsonrpc": "2.0", "id": "s", "error": {"code": -32602, "message": "bad input", "data": {"why": "test"}}})
    );
    raw_side.request(2, "nope").await;
    assert_eq!(raw_side.recv().await["error"]["code"], -32601);
}

#[tokio::test(start_paused = true)]
async fn a_panicking_handler_is_answered_and_the_connection_goes_on() {
    let (_peer, _conn, mut raw_side) = connect(Server::default(), PeerConfig::default());
    for (id, method) in [(1, "panic"), (2, "panic-later")] {
        raw_side
            .send(json!({"jsonrpc": "2.0", "id": id, "method": method}))
            .await;
        let reply = raw_side.recv().await;
        assert_eq!(reply["id"], id, "{reply}");
        assert_eq!(reply["error"]["code"], -32603, "{reply}");
    }
    // Both left the in-flight table: their ids can be used again, and echo still works.
    for id in [1, 2] {
        raw_side
            .send(json!({"jsonrpc": "2.0", "id": id, "method": "echo", "params": [id]}))
            .await;
        assert_eq!(raw_side.recv().await["result"], json!([id]));
    }
}

/// A peer serving [`Server`] whose request `id` of `method` has started, and which the
/// other end has then cancelled (with `reason`, if any).
async fn cancelled_while_running(
    id: i64,
    method: &str,
    reason: Option<&str>,
) -> (Arc<Behaviours>, Peer, mcp_jsonrpc::Connection, Raw) {
    let (behaviours, peer, conn, mut raw_side) = serve(PeerConfig::default());
    raw_side.request(id, method).await;
    behaviours.started().await;
    let mut params = json!({"requestId": id});
    if let Some(reason) = reason {
        params["reason"] = json!(reason);
    }
    raw_side
        .send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}))
        .await;
    (behaviours, peer, conn, raw_side)
}

#[tokio::test(start_paused = true)]
async fn the_peer_cancelling_fires_the_token_and_suppresses_the_response() {
    let (behaviours, _peer, _conn, mut raw_side) =
        cancelled_while_running(7, "hold", Some("user")).await;
    behaviours
        .until(|b| b.cancelled.load(Ordering::SeqCst) != 0)
        .await;
    raw_side.silent_for(Duration::from_secs(5)).await;
    // The id is free again, and the connection still works.
    raw_side.request_with(7, "echo", json!({})).await;
    assert_eq!(raw_side.recv().await["id"], 7);
}

/// A request's token is made when first needed: one cancelled before its handler ever
/// asked for the token is seen cancelled when it asks, and is not answered.
#[tokio::test(start_paused = true)]
async fn a_request_cancelled_before_it_asks_for_its_token_sees_it_cancelled() {
    let (behaviours, _peer, _conn, mut raw_side) = cancelled_while_running(9, "late", None).await;
    tokio::time::sleep(Duration::from_millis(10)).await;
    behaviours.release.notify_one();
    behaviours
        .until(|b| b.running.load(Ordering::SeqCst) == 0)
        .await;
    assert_eq!(behaviours.cancelled.load(Ordering::SeqCst), 1);
    raw_side.silent_for(Duration::from_secs(5)).await;
    // Not cancelled, the same handler answers.
    raw_side.request(10, "late").await;
    behaviours.started().await;
    behaviours.release.notify_one();
    assert_eq!(
        raw_side.recv().await,
        json!({"jsonrpc": "2.0", "id": 10, "result": "late"})
    );
    assert_eq!(behaviours.cancelled.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn a_duplicate_in_flight_id_is_refused_and_the_first_is_unaffected() {
    let (behaviours, _peer, _conn, mut raw_side) = serve(PeerConfig::default());
    raw_side.request(1, "hold").await;
    raw_side.request_with(1, "echo", json!({})).await;
    let refusal = raw_side.recv().await;
    assert_eq!(refusal["id"], 1);
    assert_eq!(refusal["error"]["code"], -32600);
    behaviours.release.notify_one();
    assert_eq!(
        raw_side.recv().await,
        json!({"jsonrpc": "2.0", "id": 1, "result": "released"})
    );
}

#[tokio::test(start_paused = true)]
async fn concurrency_is_bounded_and_excess_waits() {
    let mut config = PeerConfig::default();
    config.max_concurrency = 2;
    let (behaviours, _peer, _conn, mut raw_side) = serve(config);
    for id in 0..5 {
        raw_side.request(id, "hold").await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(behaviours.running.load(Ordering::SeqCst), 2);
    for _ in 0..5 {
        behaviours.release.notify_one();
        let r = raw_side.recv().await;
        assert_eq!(r["result"], "released");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        behaviours.peak.load(Ordering::SeqCst),
        2,
        "never more than the limit at once"
    );
}

#[tokio::test(start_paused = true)]
async fn concurrency_overload_can_be_refused() {
    let mut config = PeerConfig::default();
    config.max_concurrency = 1;
    config.overload = Overload::Reject;
    let (behaviours, _peer, _conn, mut raw_side) = serve(config);
    raw_side.request(1, "hold").await;
    raw_side.request(2, "hold").await;
    let refusal = raw_side.recv().await;
    assert_eq!(
        (refusal["id"].clone(), refusal["error"]["code"].clone()),
        (json!(2), json!(-32603))
    );
    behaviours.release.notify_one();
    assert_eq!(raw_side.recv().await["id"], 1);
}

#[tokio::test(start_paused = true)]
async fn responses_to_nothing_and_malformed_frames_do_not_break_the_connection() {
    let (_peer, _conn, mut raw_side) = connect(Server::default(), PeerConfig::default());
    raw_side
        .send(json!({"jsonrpc": "2.0", "id": 424_242, "result": {}}))
        .await;
    raw_side.send_bytes(b"this is not json".to_vec()).await;
    let parse = raw_side.recv().await;
    assert_eq!(parse["id"], Value::Null);
    assert_eq!(parse["error"]["code"], -32700);
    raw_side
        .send_bytes(br#"{"jsonrpc":"2.0","id":5,"id":6,"method":"echo"}"#.to_vec())
        .await;
    assert_eq!(raw_side.recv().await["error"]["code"], -32600);
    raw_side
        .send_bytes(br#"{"jsonrpc":"1.0","id":9,"method":"echo"}"#.to_vec())
        .await;
    let invalid = raw_side.recv().await;
    assert_eq!(
        (invalid["id"].clone(), invalid["error"]["code"].clone()),
        (json!(9), json!(-32600))
    );
    raw_side
        .send_bytes(br#"[{"jsonrpc":"2.0","id":1,"method":"echo"}]"#.to_vec())
        .await;
    assert_eq!(
        raw_side.recv().await["error"]["code"],
        -32600,
        "batches are refused by default"
    );
    // Still serving.
    raw_side.request_with(10, "echo", json!({"ok": true})).await;
    assert_eq!(raw_side.recv().await["result"], json!({"ok": true}));
}

#[tokio::test(start_paused = true)]
async fn a_client_facing_a_polluted_stream_only_logs() {
    // The warnings logged on this thread: a current-thread runtime runs the engine's tasks
    // on the test's thread, so their events land here.
    let warnings = Recorder::warnings();
    let _logging = tracing::subscriber::set_default(warnings.clone());
    let mut config = PeerConfig::default();
    config.reply_to_malformed = false;
    let (_peer, _conn, mut raw_side) = connect(NoHandler, config);
    raw_side.send_bytes(b"debug: starting up".to_vec()).await;
    // What it does instead of answering: it logs the line as a warning and reads on. Frames
    // are read in order, so the answer to the request sent after the line comes once the
    // line has been dealt with, and it is the first frame back.
    raw_side.request(1, "ping").await;
    let answer = raw_side.recv().await;
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(1), json!(-32601)),
        "{answer}"
    );
    let logged = warnings.taken();
    assert!(
        matches!(logged.as_slice(), [event]
            if event.message() == "received a malformed message" && !event.field("error").is_empty()),
        "{logged:?}"
    );
    raw_side.silent_for(Duration::from_secs(1)).await;
}

#[tokio::test(start_paused = true)]
async fn handlers_can_report_progress() {
    let (_peer, _conn, mut raw_side) = connect(Server::default(), PeerConfig::default());
    raw_side
        .request_with(1, "progress", json!({"token": "t"}))
        .await;
    for step in 1..=3 {
        let p = raw_side.recv().await;
        assert_eq!(p["method"], "notifications/progress");
        assert_eq!(p["params"]["progressToken"], "t");
        assert_eq!(p["params"]["progress"].as_f64(), Some(f64::from(step)));
        assert_eq!(p["params"]["total"].as_f64(), Some(3.0));
    }
    assert_eq!(raw_side.recv().await["result"], "done");
}

#[tokio::test(start_paused = true)]
async fn the_peer_hanging_up_fails_pending_requests_at_once() {
    let (peer, conn, raw_side) = connect(NoHandler, PeerConfig::default());
    let call = spawn_x(peer.clone());
    tokio::task::yield_now().await;
    let started = tokio::time::Instant::now();
    drop(raw_side);
    let err = call.await.unwrap().unwrap_err();
    assert!(err.is_closed(), "{err}");
    assert_eq!(
        started.elapsed(),
        Duration::ZERO,
        "no waiting for a timeout"
    );
    conn.closed().await;
    assert!(peer.is_closed());
    let after = peer
        .request("y", None::<&Value>, RequestOptions::default())
        .await
        .unwrap_err();
    assert!(after.is_closed());
}

#[tokio::test(start_paused = true)]
async fn shutdown_lets_work_finish_within_the_grace_then_cancels_and_aborts() {
    let (behaviours, _peer, conn, mut raw_side) = serve(PeerConfig::default());
    raw_side.request(1, "hold").await;
    raw_side.request(2, "stubborn").await;
    behaviours.started().await;
    let started = tokio::time::Instant::now();
    conn.shutdown(Duration::from_secs(3)).await;
    // The grace passed, the cooperative handler was cancelled, the stubborn one aborted.
    assert!(started.elapsed() >= Duration::from_secs(3));
    assert!(started.elapsed() < Duration::from_secs(4));
    assert_eq!(behaviours.cancelled.load(Ordering::SeqCst), 1);
    // Cancelled work sends no response; the writer closed the connection.
    assert!(raw_side.recv_or_end().await.is_none());
}

#[tokio::test(start_paused = true)]
async fn shutdown_waits_for_work_that_finishes_in_time() {
    let (behaviours, _peer, conn, mut raw_side) = serve(PeerConfig::default());
    raw_side.request(1, "hold").await;
    behaviours.started().await;
    let releaser = tokio::spawn({
        let behaviours = Arc::clone(&behaviours);
        async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            behaviours.release.notify_one();
        }
    });
    conn.shutdown(Duration::from_secs(10)).await;
    releaser.await.unwrap();
    assert_eq!(
        raw_side.recv().await,
        json!({"jsonrpc": "2.0", "id": 1, "result": "released"})
    );
    assert!(raw_side.recv_or_end().await.is_none());
}

#[tokio::test(start_paused = true)]
async fn typed_calls_use_the_method_traits() {
    let (peer, _conn, mut raw_side) = connect(NoHandler, PeerConfig::default());
    let params: mcp_types::PaginatedRequestParams = serde_json::from_value(json!({
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    }))
    .unwrap();
    let call = tokio::spawn(async move {
        peer.call::<mcp_types::ListToolsRequest>(&params, RequestOptions::default())
            .await
    });
    let r = raw_side.recv().await;
    assert_eq!(r["method"], "tools/list");
    raw_side
        .send(json!({"jsonrpc": "2.0", "id": r["id"], "result": {"resultType": "complete", "tools": [{"name": "t", "inputSchema": {"type": "object"}}]}}))
        .await;
    let result = call.await.unwrap().unwrap();
    assert_eq!(result.tools[0].name, "t");
}

#[tokio::test]
async fn a_context_can_send_its_notifications_to_a_channel() {
    // How a transport that answers one request per exchange (HTTP) serves a handler.
    let (tx, mut rx) = tokio::sync::mpsc::channel(4);
    let cancel = mcp_jsonrpc::CancellationToken::new();
    let cx = RequestContext::new(
        RequestId::Integer(3),
        cancel.clone(),
        mcp_jsonrpc::NotificationSink::channel(tx),
    );
    cx.progress(RequestId::from("p"), 0.5, None, Some("half".into()))
        .await
        .unwrap();
    cx.notify(
        "notifications/message",
        Some(&json!({"level": "info", "data": "x"})),
    )
    .await
    .unwrap();
    let progress: Value = serde_json::from_slice(&rx.recv().await.unwrap()).unwrap();
    assert_eq!(
        progress,
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
               "params": {"progressToken": "p", "progress": 0.5, "message": "half"}})
    );
    let log: Value = serde_json::from_slice(&rx.recv().await.unwrap()).unwrap();
    assert_eq!(log["method"], "notifications/message");
    drop(rx);
    assert!(
        cx.notify("x", None::<&Value>)
            .await
            .unwrap_err()
            .is_closed(),
        "a closed stream is reported"
    );
    assert!(!cx.is_cancelled());
    cancel.cancel();
    assert!(cx.is_cancelled());
}
