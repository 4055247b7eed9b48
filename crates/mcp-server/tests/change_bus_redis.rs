//! The change bus over a real Redis (feature `change-bus-redis`): two servers, each with a
//! `RedisChangeBus`, as a fleet behind a load balancer would run; a listener on one hears
//! the other's changes, a Redis that dies, comes back or freezes costs no change in
//! silence, and whatever else is published on the channel is dropped.
//!
//! Each test starts its own `redis-server` (`redis_common`). Without the binary the tests
//! say so and pass, except in CI, which installs it (`.ci/run`). Waiting here is real time
//! (a real server answers over a socket), always bounded and polled, never a fixed sleep
//! that hopes.

#![cfg(feature = "change-bus-redis")]

mod listen_common;
mod redis_common;

use std::time::Duration;

use listen_common::{Listener, Note, note, updated};
use mcp_server::bus::{RedisChangeBus, RedisChangeBusBuilder};
use mcp_server::{Server, ToolDef};
use mcp_types::CallToolResult;
use redis_common::redis;
use serde_json::json;

const CHANNEL: &str = "test:changes";

fn tools_changed() -> Note {
    note("notifications/tools/list_changed")
}

/// A bus on `url` that notices and recovers fast enough for a test.
fn bus(url: &str) -> RedisChangeBusBuilder {
    RedisChangeBus::builder(url)
        .channel(CHANNEL)
        .reconnect_backoff(Duration::from_millis(20), Duration::from_millis(200))
        .timeout(Duration::from_millis(500))
}

fn tool(name: &str) -> ToolDef {
    ToolDef::new(name, json!({"type": "object"}), |_, _| async {
        Ok(CallToolResult::text("ok"))
    })
}

fn server(name: &str, bus: RedisChangeBus) -> Server {
    Server::builder(name, "1.0")
        .enable(true, true, true)
        .tool(tool("first"))
        .change_bus(bus)
        .build()
        .unwrap()
}

/// A listener to tool changes and to the resources under `file:///shared`.
async fn listener(server: &Server) -> Listener {
    Listener::open(
        server,
        json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///shared"]}),
        64,
    )
    .await
}

/// What a resync sends [`listener`].
fn resync() -> Vec<Note> {
    vec![tools_changed(), updated("file:///shared")]
}

/// Polls `done` (5 s at most).
async fn until(what: &str, done: impl Fn() -> bool) {
    for _ in 0..250 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("never {what}");
}

/// A message on the channel, written as another instance (or anybody) would.
async fn publish_raw(url: &str, message: impl redis::ToRedisArgs + Send + Sync) {
    let client = redis::Client::open(url).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let _: i64 = redis::cmd("PUBLISH")
        .arg(CHANNEL)
        .arg(message)
        .query_async(&mut connection)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_hears_the_other_servers_changes_once() {
    let Some(redis) = redis().await else { return };
    let (bus_a, bus_b) = (
        bus(&redis.url).connect().await.unwrap(),
        bus(&redis.url).connect().await.unwrap(),
    );
    assert_ne!(bus_a.instance_id(), bus_b.instance_id());
    assert_eq!(bus_a.channel(), CHANNEL);
    assert!(bus_a.is_connected());
    let (a, b) = (server("a", bus_a), server("b", bus_b));
    let (mut on_a, mut on_b) = (listener(&a).await, listener(&b).await);

    // A tool added on B: A's listener hears it through Redis, B's own at once.
    b.add_tool(tool("second")).unwrap();
    assert_eq!(on_a.next().await, tools_changed());
    assert_eq!(on_b.next().await, tools_changed());

    // A resource updated on A, under the watched URI: both hear it once, and B's own tool
    // change, which came back to B from Redis before this, was not heard twice.
    a.resource_updated("file:///shared/notes.txt");
    assert_eq!(on_b.next().await, updated("file:///shared/notes.txt"));
    assert_eq!(on_a.next().await, updated("file:///shared/notes.txt"));

    // An update of a resource nobody watches reaches nobody; the next change does.
    b.resource_updated("file:///elsewhere");
    b.remove_tool("second");
    assert_eq!(on_a.next().await, tools_changed());
    assert_eq!(on_b.next().await, tools_changed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whatever_else_is_published_on_the_channel_is_dropped() {
    let Some(redis) = redis().await else { return };
    let bus = bus(&redis.url)
        .max_message_bytes(1024)
        .connect()
        .await
        .unwrap();
    let own = bus.instance_id().to_owned();
    let a = server("a", bus);
    let mut on_a = listener(&a).await;

    let other = "0123456789abcdef0123456789abcdef";
    let message = |kind: &str, uri: Option<&str>| {
        let mut m = json!({"v": 1, "from": other, "kind": kind});
        if let Some(uri) = uri {
            m["uri"] = json!(uri);
        }
        m.to_string()
    };
    let framing = message("resourceUpdated", Some("")).len();
    let at_limit = format!("file:///shared/{}", "a".repeat(1024 - framing - 15));
    let past_limit = format!("{at_limit}a");
    assert_eq!(message("resourceUpdated", Some(&at_limit)).len(), 1024);
    let garbage: Vec<Vec<u8>> = vec![
        b"not json".to_vec(),
        vec![0xff; 64],
        Vec::new(),
        b"[1, \"0123456789abcdef0123456789abcdef\", \"resync\"]".to_vec(),
        json!({"v": 2, "from": other, "kind": "toolsListChanged"})
            .to_string()
            .into_bytes(),
        json!({"v": 1, "from": "me", "kind": "toolsListChanged"})
            .to_string()
            .into_bytes(),
        json!({"v": 1, "from": other, "kind": "toolsListChanged", "extra": true})
            .to_string()
            .into_bytes(),
        message("dropEverything", None).into_bytes(),
        message("resync", Some("file:///shared")).into_bytes(),
        message("resourceUpdated", None).into_bytes(),
        message("resourceUpdated", Some(&past_limit)).into_bytes(),
        vec![b' '; 1 << 20],
        // This instance's own message, as Redis would echo it.
        json!({"v": 1, "from": own, "kind": "toolsListChanged"})
            .to_string()
            .into_bytes(),
    ];
    for message in garbage {
        publish_raw(&redis.url, message).await;
    }
    // Then a message at the size limit, from another instance: the first thing heard.
    publish_raw(&redis.url, message("resourceUpdated", Some(&at_limit))).await;
    assert_eq!(on_a.next().await, updated(&at_limit));
    publish_raw(&redis.url, message("resync", None)).await;
    assert_eq!(on_a.take(2).await, resync());

    // A change of this instance too long to publish reaches its own listeners, and the
    // others are told to resync instead.
    let bus_b = self::bus(&redis.url)
        .max_message_bytes(1024)
        .connect()
        .await
        .unwrap();
    let b = server("b", bus_b);
    let mut on_b = listener(&b).await;
    a.resource_updated(past_limit.clone());
    assert_eq!(on_a.next().await, updated(&past_limit));
    assert_eq!(on_b.take(2).await, resync());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_redis_resyncs_listeners_and_local_changes_go_on_meanwhile() {
    let Some(mut redis) = redis().await else {
        return;
    };
    let (bus_a, bus_b) = (
        bus(&redis.url).connect().await.unwrap(),
        bus(&redis.url).connect().await.unwrap(),
    );
    let (watch_a, watch_b) = (bus_a.clone(), bus_b.clone());
    let (a, b) = (server("a", bus_a), server("b", bus_b));
    let (mut on_a, mut on_b) = (listener(&a).await, listener(&b).await);

    redis.kill();
    until("saw Redis go", || {
        !watch_a.is_connected() && !watch_b.is_connected()
    })
    .await;
    // Degraded: A's change reaches A's listener, and only it.
    a.add_tool(tool("while-down")).unwrap();
    assert_eq!(on_a.next().await, tools_changed());

    redis.restart().await;
    until("came back", || {
        watch_a.is_connected() && watch_b.is_connected()
    })
    .await;
    // Each listener resyncs: what it follows is said to have changed.
    assert_eq!(on_a.take(2).await, resync());
    assert_eq!(on_b.take(2).await, resync());
    // A's publisher may not be back yet: what A changes until it is goes out as one
    // resync in its place (A's word that it could not publish), never not at all. Then
    // the fleet is whole again: B hears A's changes one by one.
    let after = updated("file:///shared/after");
    let mut published = 0;
    'whole: loop {
        assert!(published < 50, "B never heard A's changes one by one again");
        a.resource_updated("file:///shared/after");
        published += 1;
        for stands_in in resync() {
            let note = on_b.next().await;
            if note == after {
                break 'whole;
            }
            assert_eq!(
                note, stands_in,
                "B hears the update, or a resync in its place"
            );
        }
    }
    b.add_tool(tool("after")).unwrap();
    // A hears its own changes at once, each of them, and then B's.
    assert_eq!(on_a.until(&tools_changed()).await, vec![after; published]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_redis_is_found_by_the_health_check() {
    let Some(redis) = redis().await else { return };
    let bus = bus(&redis.url)
        .health_check(Duration::from_millis(100))
        .timeout(Duration::from_millis(300))
        .connect()
        .await
        .unwrap();
    let watch = bus.clone();
    let a = server("a", bus);
    let mut on_a = listener(&a).await;

    // Stopped, Redis keeps its connections open and answers nothing, as a partition would.
    redis.signal("STOP");
    until("noticed the silence", || !watch.is_connected()).await;
    redis.signal("CONT");
    until("came back", || watch.is_connected()).await;
    assert_eq!(on_a.take(2).await, resync());
}

#[tokio::test]
async fn a_first_connection_that_fails_is_an_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // Nothing listens there now.
    let error = bus(&format!("redis://127.0.0.1:{port}/"))
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(error, mcp_server::Error::ChangeBus(_)), "{error}");
    let error = RedisChangeBus::connect("http://not-redis/")
        .await
        .unwrap_err();
    assert!(matches!(error, mcp_server::Error::ChangeBus(_)), "{error}");
}

/// The `metrics` feature: each message from another instance records its lag, from the
/// time it carries to its arrival.
#[cfg(feature = "metrics")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bus_lag_is_measured_from_the_time_a_message_carries() {
    let Some(redis) = redis().await else { return };
    let handle = metrics_exporter_prometheus::PrometheusBuilder::new()
        .install_recorder()
        .unwrap();
    let a = server("a", bus(&redis.url).connect().await.unwrap());
    let mut on_a = listener(&a).await;
    let sent = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        - 1500;
    let message = json!({"v": 1, "from": "0123456789abcdef0123456789abcdef",
        "kind": "toolsListChanged", "at": u64::try_from(sent).unwrap()});
    publish_raw(&redis.url, message.to_string()).await;
    assert_eq!(on_a.next().await, tools_changed());
    let text = handle.render();
    let value = |series: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.trim().parse::<f64>().ok())
    };
    assert_eq!(
        value("mcp_server_bus_lag_seconds_count"),
        Some(1.0),
        "{text}"
    );
    let lag = value("mcp_server_bus_lag_seconds_sum").unwrap();
    assert!((1.5..60.0).contains(&lag), "a lag of 1.5 s at least: {lag}");
}
