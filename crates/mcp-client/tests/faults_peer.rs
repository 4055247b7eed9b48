//! Fault injection against the client: a scripted server on the other end of
//! the engine's in-memory duplex (as stdio carries it) that answers slowly, never, or
//! twice. The outcomes are those of <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation>
//! and the client's documented timeouts: a request past its timeout fails with
//! `Error::Timeout` and the server is sent `notifications/cancelled` naming it; an answer
//! that arrives after that, or a second answer to a request already answered, is dropped
//! (the engine logs it), and no later call ever receives another call's answer.
//!
//! Time is tokio's paused clock: the timeouts pass without waiting.

use std::time::Duration;

use mcp_client::{CallOptions, Client, Error};
use mcp_jsonrpc::memory::{self, MemoryReader, MemoryWriter};
use mcp_jsonrpc::{FrameReader as _, FrameWriter as _, PeerConfig};
use mcp_types::{CallToolResult, JsonObject};
use serde_json::{Value, json};

/// The server's end of the duplex, driven by hand.
struct Script {
    reader: MemoryReader,
    writer: MemoryWriter,
}

impl Script {
    /// The next frame the client sent.
    async fn next(&mut self) -> Value {
        let frame = self
            .reader
            .read_frame()
            .await
            .expect("the client is connected")
            .expect("a frame");
        serde_json::from_slice(&frame).expect("JSON")
    }

    /// The next request (skipping nothing: the client sends nothing unasked).
    async fn request(&mut self, method: &str) -> Value {
        let frame = self.next().await;
        assert_eq!(frame["method"], method, "{frame}");
        frame
    }

    async fn answer(&mut self, id: &Value, text: &str) {
        let reply = json!({"jsonrpc": "2.0", "id": id, "result": {
            "resultType": "complete",
            "content": [{"type": "text", "text": text}]
        }});
        self.writer
            .write_frame(reply.to_string().into())
            .await
            .expect("the client reads");
    }
}

fn connect(timeout: Duration) -> (Client, mcp_jsonrpc::Connection, Script) {
    let ((client_reader, client_writer), (reader, writer)) = memory::pair(64);
    let mut config = PeerConfig::default();
    config.cancel_notifications = true;
    let (client, connection) = Client::builder("faults", "1.0.0").timeout(timeout).connect(
        client_reader,
        client_writer,
        config,
    );
    (client, connection, Script { reader, writer })
}

fn text(result: &CallToolResult) -> String {
    serde_json::to_value(result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Calls the tool `name` (with `args(n)`) while the server answers the call with its
/// name; the text of the result.
async fn answered(client: &Client, server: &mut Script, name: &str, n: u32) -> String {
    let call = client.call_tool(name, args(n));
    let serve = async {
        let request = server.request("tools/call").await;
        server.answer(&request["id"], name).await;
    };
    let (outcome, ()) = tokio::join!(call, serve);
    text(&outcome.unwrap())
}

fn args(n: u32) -> JsonObject {
    json!({ "n": n }).as_object().cloned().unwrap()
}

/// A slow server (its answer comes after the timeout) and a server that never answers:
/// both calls fail with `Error::Timeout` once the timeout has passed, each is withdrawn
/// with `notifications/cancelled` naming its id, the late answer is dropped, and the next
/// call gets its own answer.
#[tokio::test(start_paused = true)]
async fn slow_and_silent_servers_time_out_and_are_told_to_cancel() {
    let timeout = Duration::from_secs(30);
    let (client, _connection, mut server) = connect(timeout);

    for late in [true, false] {
        let started = tokio::time::Instant::now();
        let call = client.call_tool("slow", args(1));
        let serve = async {
            let request = server.request("tools/call").await;
            let cancelled = server.request("notifications/cancelled").await;
            assert_eq!(cancelled["params"]["requestId"], request["id"]);
            assert_eq!(started.elapsed(), timeout, "withdrawn at the timeout");
            if late {
                // The answer crosses the cancellation: the client must drop it.
                server.answer(&request["id"], "too late").await;
            }
        };
        let (outcome, ()) = tokio::join!(call, serve);
        assert!(
            matches!(&outcome, Err(Error::Timeout { method, .. }) if method == "tools/call"),
            "{outcome:?}"
        );
    }

    // The next call is answered with its own result, not the late one.
    assert_eq!(answered(&client, &mut server, "next", 2).await, "next");
}

/// A server that answers twice: the first answer completes the call, the second (with
/// other content) is dropped, and a call running at the same time gets its own answer,
/// never the duplicate.
#[tokio::test(start_paused = true)]
async fn a_second_answer_is_dropped_and_never_reaches_another_call() {
    let (client, _connection, mut server) = connect(Duration::from_secs(30));
    let first = client.call_tool("a", args(1));
    let options = CallOptions::default();
    let second = client.call_tool_with("b", args(2), &options);
    let serve = async {
        let a = server.request("tools/call").await;
        let b = server.request("tools/call").await;
        assert_ne!(a["id"], b["id"]);
        assert_eq!(a["params"]["name"], "a");
        server.answer(&a["id"], "a").await;
        server.answer(&a["id"], "a again").await;
        server.answer(&b["id"], "b").await;
        server.answer(&b["id"], "b again").await;
    };
    let (a, b, ()) = tokio::join!(first, second, serve);
    assert_eq!(text(&a.unwrap()), "a");
    assert_eq!(text(&b.unwrap()), "b");

    // The connection goes on: a third call gets its answer, not a stale duplicate.
    assert_eq!(answered(&client, &mut server, "c", 3).await, "c");
}
