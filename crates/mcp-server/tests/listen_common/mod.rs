//! What the change bus tests share: a `subscriptions/listen` stream opened straight
//! through the server's `Handler`, as a transport would, and its notifications read one by
//! one, each within a bounded wait.

#![allow(dead_code, unreachable_pub)]

use std::time::Duration;

use bytes::Bytes;
use mcp_jsonrpc::{
    CancellationToken, ErrorObject, Handler, NotificationSink, Request, RequestContext,
};
use mcp_server::Server;
use mcp_types::RequestId;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// The longest wait for one notification: a change crossing a real Redis, or a bus
/// reconnecting, arrives well within it.
const WAIT: Duration = Duration::from_secs(10);

/// A notification as the tests compare it: its method and, for `resources/updated`, its
/// URI.
pub type Note = (String, Option<String>);

pub fn note(method: &str) -> Note {
    (method.to_owned(), None)
}

pub fn updated(uri: &str) -> Note {
    (
        "notifications/resources/updated".to_owned(),
        Some(uri.to_owned()),
    )
}

/// An open `subscriptions/listen` stream: the notifications it sent, and its outcome.
pub struct Listener {
    events: mpsc::Receiver<Bytes>,
    _task: tokio::task::JoinHandle<Result<Box<RawValue>, ErrorObject>>,
    _cancel: CancellationToken,
}

impl Listener {
    /// Opens a stream on `server` with `notifications` and waits for its acknowledgement.
    pub async fn open(server: &Server, notifications: Value, buffer: usize) -> Listener {
        let (tx, events) = mpsc::channel(buffer);
        let cancel = CancellationToken::new();
        let cx = RequestContext::new(
            RequestId::Integer(1),
            cancel.clone(),
            NotificationSink::channel(tx),
        );
        let params = json!({
            "notifications": notifications,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        });
        let request = Request::new(
            RequestId::Integer(1),
            "subscriptions/listen",
            Some(RawValue::from_string(params.to_string()).unwrap()),
        );
        let server = server.clone();
        let mut listener = Listener {
            events,
            _task: tokio::spawn(async move { server.request(request, cx).await }),
            _cancel: cancel,
        };
        let ack = listener.next().await;
        assert_eq!(ack.0, "notifications/subscriptions/acknowledged");
        listener
    }

    /// The next notification (10 s at most).
    pub async fn next(&mut self) -> Note {
        let frame = tokio::time::timeout(WAIT, self.events.recv())
            .await
            .expect("a notification in time")
            .expect("a notification");
        let frame: Value = serde_json::from_slice(&frame).unwrap();
        assert_eq!(
            frame["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 1,
            "every notification is tagged: {frame}"
        );
        (
            frame["method"].as_str().unwrap().to_owned(),
            frame["params"]["uri"].as_str().map(str::to_owned),
        )
    }

    /// The next `n` notifications.
    pub async fn take(&mut self, n: usize) -> Vec<Note> {
        let mut taken = Vec::new();
        for _ in 0..n {
            taken.push(self.next().await);
        }
        taken
    }

    /// Reads notifications until `wanted`; those read before it.
    pub async fn until(&mut self, wanted: &Note) -> Vec<Note> {
        let mut before = Vec::new();
        loop {
            let next = self.next().await;
            if next == *wanted {
                return before;
            }
            before.push(next);
        }
    }
}
