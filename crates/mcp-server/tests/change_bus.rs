//! The change bus seen from `subscriptions/listen` (`mcp_server::bus`): a resync, whether
//! the bus sends one or a listener falls behind, makes a stream send every list-changed
//! notification it subscribed to and a `resources/updated` for each resource it watches;
//! a bus installed with `ServerBuilder::change_bus` carries the server's changes. The
//! server is called as the engine's `Handler`, the way every transport calls it.

mod listen_common;

use std::sync::{Arc, Mutex};

use listen_common::{Listener, note, updated};
use mcp_server::bus::{BusEvent, Change, ChangeBus, InProcessBus, Subscription};
use mcp_server::{ResourceDef, Server, ToolDef};
use mcp_types::CallToolResult;
use serde_json::json;

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
