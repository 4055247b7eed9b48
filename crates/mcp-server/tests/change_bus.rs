//! The change bus seen from `subscriptions/listen` (`mcp_server::bus`): a resync, whether
//! the bus sends one or a listener falls behind, makes a stream send every list-changed
//! notification it subscribed to and a `resources/updated` for each resource it watches;
//! a bus installed with `ServerBuilder::change_bus` carries the server's changes. The
//! server is called as the engine's `Handler`, the way every transport calls it.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use mcp_jsonrpc::{
    CancellationToken, ErrorObject, Handler, NotificationSink, Request, RequestContext,
};
use mcp_server::bus::{BusEvent, Change, ChangeBus, InProcessBus, Subscription};
use mcp_server::{ResourceDef, Server, ToolDef};
use mcp_types::{CallToolResult, RequestId};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// An open `subscriptions/listen` stream: the notifications it sent, and its outcome.
struct Listener {
    events: mpsc::Receiver<Bytes>,
    _task: tokio::task::JoinHandle<Result<Box<RawValue>, ErrorObject>>,
    _cancel: CancellationToken,
}

impl Listener {
    /// Opens a stream on `server` with `notifications` and waits for its acknowledgement.
    async fn open(server: &Server, notifications: Value, buffer: usize) -> Listener {
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

    /// The next notification: its method and, for `resources/updated`, its URI.
    async fn next(&mut self) -> (String, Option<String>) {
        let frame = self.events.recv().await.expect("a notification");
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
    async fn take(&mut self, n: usize) -> Vec<(String, Option<String>)> {
        let mut taken = Vec::new();
        for _ in 0..n {
            taken.push(self.next().await);
        }
        taken
    }
}

fn note(method: &str) -> (String, Option<String>) {
    (method.to_owned(), None)
}

fn updated(uri: &str) -> (String, Option<String>) {
    (
        "notifications/resources/updated".to_owned(),
        Some(uri.to_owned()),
    )
}

fn server(bus: impl ChangeBus) -> Server {
    Server::builder("bus", "1.0")
        .enable(true, true, true)
        .tool(ToolDef::new("t", json!({"type": "object"}), |_, _| async {
            Ok(CallToolResult::text("t"))
        }))
        .change_bus(bus)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_resync_sends_what_each_listener_follows() {
    let bus = InProcessBus::new();
    let server = server(bus.clone());
    let mut everything = Listener::open(
        &server,
        json!({
            "toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true,
            "resourceSubscriptions": ["file:///a", "file:///b"]
        }),
        16,
    )
    .await;
    let mut tools_only = Listener::open(&server, json!({"toolsListChanged": true}), 16).await;

    bus.resync();
    assert_eq!(
        everything.take(5).await,
        [
            note("notifications/tools/list_changed"),
            note("notifications/prompts/list_changed"),
            note("notifications/resources/list_changed"),
            updated("file:///a"),
            updated("file:///b"),
        ]
    );
    assert_eq!(
        tools_only.next().await,
        note("notifications/tools/list_changed")
    );

    // Nothing else was sent: the next notification of each is the next change.
    server.resource_updated("file:///b");
    server.remove_tool("t");
    assert_eq!(everything.next().await, updated("file:///b"));
    assert_eq!(
        everything.next().await,
        note("notifications/tools/list_changed")
    );
    assert_eq!(
        tools_only.next().await,
        note("notifications/tools/list_changed")
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_listener_that_falls_behind_resyncs() {
    // A bus of capacity 2 and a listener whose client reads nothing yet: the listener
    // holds one notification in its sink and blocks on the next, while the bus moves on.
    let bus = InProcessBus::with_capacity(2);
    let server = server(bus.clone());
    let mut listener = Listener::open(
        &server,
        json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///watched"]}),
        1,
    )
    .await;
    for i in 0..6 {
        server.resource_updated(format!("file:///watched/{i}"));
        // Lets the listener run between changes, as it would on a busy server: it sends
        // the first, blocks on the second, and misses the third and fourth.
        tokio::task::yield_now().await;
    }
    // The clock is paused: the timeout passes only once every task is idle, that is once
    // the listener has sent all it will.
    let mut seen = Vec::new();
    while let Ok(next) =
        tokio::time::timeout(std::time::Duration::from_secs(1), listener.next()).await
    {
        seen.push(next);
    }
    assert_eq!(
        seen,
        [
            updated("file:///watched/0"),
            updated("file:///watched/1"),
            note("notifications/tools/list_changed"),
            updated("file:///watched"),
            updated("file:///watched/4"),
            updated("file:///watched/5"),
        ],
        "the third and fourth were lost, and said to be"
    );
}

/// A bus of one's own: an [`InProcessBus`] that records what the server publishes.
#[derive(Clone, Default)]
struct Recording {
    local: InProcessBus,
    published: Arc<Mutex<Vec<Change>>>,
}

impl ChangeBus for Recording {
    fn publish(&self, change: Change) {
        self.published.lock().unwrap().push(change.clone());
        self.local.publish(change);
    }

    fn subscribe(&self) -> Subscription {
        self.local.subscribe()
    }
}

#[tokio::test]
async fn an_installed_bus_carries_the_servers_changes_both_ways() {
    let bus = Recording::default();
    let server = server(bus.clone());
    let mut listener = Listener::open(
        &server,
        json!({"resourcesListChanged": true, "resourceSubscriptions": ["file:///x"]}),
        16,
    )
    .await;
    server.add_resource(ResourceDef::new("file:///x", "x", |_, _| async {
        Ok(Vec::new())
    }));
    server.resource_updated("file:///x");
    assert_eq!(
        *bus.published.lock().unwrap(),
        [
            Change::ResourcesListChanged,
            Change::ResourceUpdated {
                uri: "file:///x".into()
            }
        ]
    );
    assert_eq!(
        listener.take(2).await,
        [
            note("notifications/resources/list_changed"),
            updated("file:///x")
        ]
    );
    // What the bus brings from elsewhere reaches the listener the same way.
    bus.local.publish(Change::ResourceUpdated {
        uri: "file:///x/y".into(),
    });
    assert_eq!(listener.next().await, updated("file:///x/y"));
    let mut direct = bus.subscribe();
    bus.local.resync();
    assert_eq!(direct.recv().await, Some(BusEvent::Resync));
    assert_eq!(
        listener.take(2).await,
        [
            note("notifications/resources/list_changed"),
            updated("file:///x")
        ]
    );
}
