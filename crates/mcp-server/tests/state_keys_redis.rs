//! The `requestState` key ring shared through a real Redis (feature `state-keys-redis`):
//! servers of a fleet seal and open with the same keys, and a rotation reaches all of them
//! without a restart, in the middle of a multi round-trip call.
//!
//! Each test starts its own `redis-server` on a free loopback port (`redis_common`);
//! without the binary the tests say so and pass (CI installs it). Waits are bounded polls.

#![cfg(feature = "state-keys-redis")]

mod redis_common;
mod tasks_common;

use std::time::Duration;

use mcp_server::{Context, RedisStateKeys, Server, ToolDef};
use mcp_types::{CallToolResult, ElicitRequestFormParams, ElicitRequestParams};
use redis_common::redis;
use serde_json::{Value, json};
use tasks_common::{PLAIN, call};

fn form(field: &str) -> ElicitRequestParams {
    let params: ElicitRequestFormParams = serde_json::from_value(json!({
        "message": field, "requestedSchema": {"type": "object", "properties": {field: {"type": "string"}}}
    }))
    .unwrap();
    ElicitRequestParams::ElicitRequestForm(params)
}

/// A server whose `two_rounds` tool asks for `a`, then for `b`, then answers both.
fn member(keys: &RedisStateKeys) -> Server {
    Server::builder("fleet", "1.0")
        .tool(ToolDef::new(
            "two_rounds",
            json!({"type": "object"}),
            |_, cx: Context| async move {
                let text = |r: &mcp_types::ElicitResult, k: &str| {
                    serde_json::to_value(&r.content).unwrap()[k]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned()
                };
                let a = cx.elicit("a", form("a"))?;
                let b = cx.elicit("b", form("b"))?;
                Ok(CallToolResult::text(format!(
                    "{} {}",
                    text(&a, "a"),
                    text(&b, "b")
                )))
            },
        ))
        .state_keys(keys.keys())
        .build()
        .unwrap()
}

async fn round(server: &Server, answers: Value, state: Option<&Value>) -> Value {
    let mut params = json!({"name": "two_rounds", "arguments": {}, "inputResponses": answers});
    if let Some(state) = state {
        params["requestState"] = state.clone();
    }
    call(server, PLAIN, "tools/call", params).await.unwrap()
}

fn accept(field: &str, value: &str) -> Value {
    json!({"action": "accept", "content": {field: value}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotation_reaches_every_server_during_a_multi_round_call() {
    let Some(redis) = redis().await else { return };
    let connect = || {
        RedisStateKeys::builder(redis.url.clone())
            .interval(Duration::from_millis(50))
            .connect()
    };
    let (ring_a, ring_b) = (connect().await.unwrap(), connect().await.unwrap());
    let (a, b) = (member(&ring_a), member(&ring_b));
    let first_key = ring_a.keys().current_id();
    assert_eq!(
        ring_b.keys().current_id(),
        first_key,
        "one key for the fleet"
    );

    // Round one on A, sealed under the first key.
    let first = round(&a, json!({}), None).await;
    assert_eq!(first["resultType"], "input_required", "{first}");

    // The fleet rotates (started from B); A follows without a restart.
    assert!(ring_b.rotate().await.unwrap());
    assert!(!ring_a.rotate().await.unwrap(), "one rotation at a time");
    for _ in 0..200 {
        if ring_a.keys().current_id() != first_key && ring_b.keys().current_id() != first_key {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let second_key = ring_a.keys().current_id();
    assert_ne!(second_key, first_key, "A rotated");
    assert_eq!(
        ring_b.keys().current_id(),
        second_key,
        "to the same key as B"
    );

    // Round two on B opens A's state (old key, within the overlap) and seals under the new.
    let second = round(
        &b,
        json!({"a": accept("a", "x")}),
        first.get("requestState"),
    )
    .await;
    assert_eq!(second["resultType"], "input_required", "{second}");
    assert!(second["inputRequests"].get("b").is_some(), "{second}");
    // Round three on A opens B's state under the new key, and the call completes.
    let third = round(
        &a,
        json!({"b": accept("b", "y")}),
        second.get("requestState"),
    )
    .await;
    assert_eq!(third["content"][0]["text"], "x y", "{third}");

    // A server that joins later takes the fleet's current key.
    let ring_c = connect().await.unwrap();
    assert_eq!(ring_c.keys().current_id(), second_key);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ring_that_is_not_keys_is_refused_and_an_unreachable_redis_fails_the_start() {
    let Some(mut redis) = redis().await else {
        return;
    };
    let set = std::process::Command::new("redis-cli")
        .args([
            "-p",
            &redis.port.to_string(),
            "HSET",
            "bad:ring",
            "current",
            "not a key",
        ])
        .status()
        .expect("redis-cli comes with redis-server");
    assert!(set.success());
    let refused = RedisStateKeys::builder(redis.url.clone())
        .prefix("bad:ring")
        .connect()
        .await;
    assert!(
        matches!(refused, Err(mcp_server::Error::InvalidStateKeys { .. })),
        "{refused:?}"
    );

    redis.kill();
    let down = RedisStateKeys::builder(redis.url.clone()).connect().await;
    assert!(
        matches!(down, Err(mcp_server::Error::StateKeyStore(_))),
        "{down:?}"
    );
}
