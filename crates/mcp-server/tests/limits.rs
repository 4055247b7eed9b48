//! The server core's limits (`mcp_server::Limits`), each at the limit and one
//! past it: open `subscriptions/listen` streams per principal, and the time a synchronous
//! tool call may run. The server is called as the engine's `Handler`, the way every
//! transport calls it, with the principal an authenticating transport would attach.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use mcp_jsonrpc::{
    CancellationToken, ErrorObject, Handler, NotificationSink, Principal, Request, RequestContext,
    TransportInfo,
};
use mcp_server::{Limits, Server, ToolDef};
use mcp_types::{CallToolResult, RequestId};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::mpsc;

#[derive(Debug)]
struct User(&'static str);

impl Principal for User {
    fn id(&self) -> &str {
        self.0
    }
}

fn params(mut params: Value) -> Box<RawValue> {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    RawValue::from_string(params.to_string()).unwrap()
}

/// One request in flight: its outcome, the notifications it sent, and its token.
struct Call {
    task: tokio::task::JoinHandle<Result<Box<RawValue>, ErrorObject>>,
    events: mpsc::Receiver<Bytes>,
    cancel: CancellationToken,
}

fn start(server: &Server, id: i64, method: &str, p: Value, who: Option<&'static str>) -> Call {
    let (tx, events) = mpsc::channel(16);
    let cancel = CancellationToken::new();
    let mut cx = RequestContext::new(
        RequestId::Integer(id),
        cancel.clone(),
        NotificationSink::channel(tx),
    );
    if let Some(who) = who {
        cx = cx.with_transport_info(Arc::new(
            TransportInfo::default().with_principal(Arc::new(User(who))),
        ));
    }
    let server = server.clone();
    let request = Request::new(RequestId::Integer(id), method, Some(params(p)));
    Call {
        task: tokio::spawn(async move { server.request(request, cx).await }),
        events,
        cancel,
    }
}

fn listen(server: &Server, id: i64, who: Option<&'static str>) -> Call {
    start(
        server,
        id,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
        who,
    )
}

impl Call {
    /// Waits for the stream's acknowledgement: the stream is open.
    async fn acknowledged(&mut self) {
        let event = self.events.recv().await.expect("an acknowledgement");
        let event: Value = serde_json::from_slice(&event).unwrap();
        assert_eq!(event["method"], "notifications/subscriptions/acknowledged");
    }

    /// The refusal a request got at once.
    async fn refused(self) -> ErrorObject {
        self.task.await.unwrap().expect_err("refused")
    }
}

fn tool_server(limits: Limits) -> Server {
    Server::builder("limits", "1.0.0")
        .limits(limits)
        .tool(ToolDef::new(
            "sleep",
            json!({"type": "object", "properties": {"ms": {"type": "integer"}}}),
            |args, _cx| async move {
                let ms = args["ms"].as_u64().unwrap_or(u64::MAX / 2);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok(CallToolResult::text("woke"))
            },
        ))
        .build()
        .unwrap()
}

#[tokio::test]
async fn listen_streams_are_bounded_per_principal() {
    let server = tool_server(
        Limits::default()
            .listen_streams(2)
            .anonymous_listen_streams(1),
    );
    // At the limit: two streams for alice.
    let mut first = listen(&server, 1, Some("alice"));
    first.acknowledged().await;
    let mut second = listen(&server, 2, Some("alice"));
    second.acknowledged().await;
    // Past it: the third is refused at once with -32603.
    let third = listen(&server, 3, Some("alice")).refused().await;
    assert_eq!(third.code.0, -32603, "{third}");
    assert!(third.message.contains("limit 2"), "{third}");
    // Another principal, and the anonymous ones, have counts of their own.
    let mut bob = listen(&server, 4, Some("bob"));
    bob.acknowledged().await;
    let mut anonymous = listen(&server, 5, None);
    anonymous.acknowledged().await;
    // Requests without a principal share their own bound, here 1.
    let crowded = listen(&server, 7, None).refused().await;
    assert!(crowded.message.contains("limit 1"), "{crowded}");
    // A stream that ends gives its place back.
    first.cancel.cancel();
    assert!(first.task.await.unwrap().is_err(), "a cancelled stream");
    let mut again = listen(&server, 6, Some("alice"));
    again.acknowledged().await;
    // Closing every stream ends them with their results.
    server.close_subscriptions();
    for call in [second, bob, anonymous, again] {
        assert!(call.task.await.unwrap().is_ok());
    }
}

#[tokio::test(start_paused = true)]
async fn a_tool_call_past_its_time_is_an_error_result() {
    let limit = Duration::from_secs(5);
    let server = tool_server(Limits::default().tool_timeout(Some(limit)));
    let call = |id, args: Value| {
        start(
            &server,
            id,
            "tools/call",
            json!({"name": "sleep", "arguments": args}),
            None,
        )
    };
    // Just inside the limit: the tool's own result.
    let begun = tokio::time::Instant::now();
    let inside = call(1, json!({"ms": 4999})).task.await.unwrap().unwrap();
    let inside: Value = serde_json::from_str(inside.get()).unwrap();
    assert_eq!(inside["content"][0]["text"], "woke", "{inside}");
    assert!(inside.get("isError").is_none(), "{inside}");
    // Past it: the handler is dropped at the limit and the model reads why.
    let begun_past = tokio::time::Instant::now();
    let past = call(2, json!({})).task.await.unwrap().unwrap();
    assert_eq!(begun_past.elapsed(), limit);
    let past: Value = serde_json::from_str(past.get()).unwrap();
    assert_eq!(past["isError"], true, "{past}");
    assert!(
        past["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("did not finish within 5 s"),
        "{past}"
    );
    assert!(begun.elapsed() < limit * 2);
}

#[tokio::test(start_paused = true)]
async fn without_a_tool_timeout_a_call_runs_as_long_as_it_takes() {
    let server = tool_server(Limits::default().tool_timeout(None));
    let hour = 3_600_000;
    let call = start(
        &server,
        1,
        "tools/call",
        json!({"name": "sleep", "arguments": {"ms": hour}}),
        None,
    );
    let done = call.task.await.unwrap().unwrap();
    assert!(done.get().contains("woke"));
}

#[test]
fn the_defaults_are_bounded() {
    let limits = Limits::default();
    assert_eq!(limits.listen_streams_per_principal, 16);
    assert_eq!(limits.anonymous_listen_streams, 256);
    assert_eq!(limits.tool_timeout, Some(Duration::from_mins(10)));
    assert_eq!(
        Limits::default()
            .listen_streams(0)
            .listen_streams_per_principal,
        1
    );
}
