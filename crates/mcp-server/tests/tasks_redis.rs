//! The Tasks extension over a real Redis (feature `tasks-redis`): the store's atomic steps,
//! and two servers sharing one store as a fleet behind a load balancer would.
//!
//! Each test starts its own `redis-server` (Debian's package) on a free loopback port and
//! stops it at the end (`redis_common`). Without the binary the tests say so and pass: CI
//! installs it (`.ci/run`). Waiting here is real time (a real server answers over a
//! socket), always bounded and polled, never a fixed sleep that hopes.

#![cfg(feature = "tasks-redis")]

mod redis_common;
mod tasks_common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_server::tasks::{RedisStore, TaskRecord, TaskStore, TaskSupport, Tasks};
use mcp_server::{Context, Server, ToolDef};
use mcp_types::{CallToolResult, ElicitRequestFormParams, ElicitRequestParams};
use redis_common::redis;
use serde_json::{Value, json};
use tasks_common::{ALICE, BOB, accept, call, call_tool, get, update};
use tokio::sync::Semaphore;

fn record(id: &str, revision: u64, expires_ms: u64) -> TaskRecord {
    serde_json::from_value(json!({
        "id": id, "owner": "o", "status": "working", "created_ms": 1, "updated_ms": 1,
        "expires_ms": expires_ms, "poll_interval_ms": 100, "revision": revision,
        "tool": "t", "arguments": {}, "meta": {}
    }))
    .unwrap()
}

fn now_ms() -> u64 {
    u64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_creates_once_compares_and_sets_and_expires() {
    let Some(redis) = redis().await else { return };
    let store = RedisStore::connect(&redis.url)
        .await
        .unwrap()
        .prefix("test:");
    let expires = now_ms() + 60_000;
    store.create(&record("a", 0, expires)).await.unwrap();
    assert!(
        store.create(&record("a", 0, expires)).await.is_err(),
        "an id is taken once"
    );
    assert_eq!(
        store.get("a").await.unwrap().unwrap(),
        record("a", 0, expires)
    );
    assert!(store.get("missing").await.unwrap().is_none());

    let mut next = record("a", 1, expires + 1000);
    next.status = mcp_types::tasks::TaskStatus::Completed;
    assert!(store.replace(0, &next).await.unwrap());
    assert!(
        !store.replace(0, &next).await.unwrap(),
        "a stale revision loses"
    );
    assert!(
        !store
            .replace(0, &record("missing", 1, expires))
            .await
            .unwrap()
    );
    assert_eq!(
        store.get("a").await.unwrap().unwrap().status,
        mcp_types::tasks::TaskStatus::Completed
    );

    // Redis itself drops the key at the record's expiry.
    let client = redis::Client::open(redis.url.as_str()).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let ttl: i64 = redis::cmd("PTTL")
        .arg("test:a")
        .query_async(&mut connection)
        .await
        .unwrap();
    assert!((59_000..=61_000).contains(&ttl), "PTTL {ttl}");
    store.create(&record("b", 0, now_ms() + 50)).await.unwrap();
    let mut gone = false;
    for _ in 0..100 {
        if store.get("b").await.unwrap().is_none() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(gone, "expired in Redis");
    let _ = redis.port;
}

fn form(field: &str) -> ElicitRequestParams {
    let params: ElicitRequestFormParams = serde_json::from_value(json!({
        "message": field, "requestedSchema": {"type": "object", "properties": {field: {"type": "string"}}}
    }))
    .unwrap();
    ElicitRequestParams::ElicitRequestForm(params)
}

/// One server of the fleet: its own process state, the shared Redis. `gate` waits for a
/// permit or its cancellation; `two_questions` asks twice.
async fn member(
    url: &str,
    gate: &Arc<Semaphore>,
    saw_cancel: &Arc<AtomicBool>,
    runs: &Arc<std::sync::Mutex<Vec<&'static str>>>,
    name: &'static str,
) -> Server {
    let store = RedisStore::connect(url).await.unwrap();
    let (g, seen) = (Arc::clone(gate), Arc::clone(saw_cancel));
    let runs = Arc::clone(runs);
    Server::builder(name, "1.0")
        .tool(ToolDef::new("gate", json!({"type": "object"}), move |_, cx: Context| {
            let (gate, seen) = (Arc::clone(&g), Arc::clone(&seen));
            async move {
                tokio::select! {
                    permit = gate.acquire() => { permit.unwrap().forget(); Ok(CallToolResult::text("opened")) }
                    () = cx.cancellation().cancelled() => { seen.store(true, Ordering::SeqCst); Ok(CallToolResult::text("stopped")) }
                }
            }
        }).task_support(TaskSupport::Required))
        .tool(ToolDef::new("two_questions", json!({"type": "object"}), move |_, cx: Context| {
            let runs = Arc::clone(&runs);
            async move {
                runs.lock().unwrap().push(name);
                let a = cx.elicit("a", form("a"));
                let b = cx.elicit("b", form("b"));
                let (a, b) = (a?, b?);
                let text = |r: &mcp_types::ElicitResult, k: &str| serde_json::to_value(&r.content).unwrap()[k].as_str().unwrap_or_default().to_owned();
                Ok(CallToolResult::text(format!("{} {}", text(&a, "a"), text(&b, "b"))))
            }
        }).task_support(TaskSupport::Required))
        .tasks(Tasks::new(store).poll_interval(Duration::from_millis(50)))
        .build()
        .unwrap()
}

/// Polls `tasks/get` on `server` until `done` accepts the task (5 s at most).
async fn until(server: &Server, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..250 {
        let task = get(server, ALICE, id).await.unwrap();
        if done(&task) {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!(
        "task {id} never got there: {}",
        get(server, ALICE, id).await.unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_sharing_redis_serve_one_task() {
    let Some(redis) = redis().await else { return };
    let gate = Arc::new(Semaphore::new(0));
    let saw_cancel = Arc::new(AtomicBool::new(false));
    let runs = Arc::new(std::sync::Mutex::new(Vec::new()));
    let a = member(&redis.url, &gate, &saw_cancel, &runs, "a").await;
    let b = member(&redis.url, &gate, &saw_cancel, &runs, "b").await;

    // Created on A, visible on B at once (durable creation), to its owner only.
    let created = call_tool(&a, ALICE, "gate").await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    assert_eq!(get(&b, ALICE, &id).await.unwrap()["status"], "working");
    assert_eq!(get(&b, BOB, &id).await.unwrap_err().code.0, -32602);
    assert_eq!(
        call(&b, BOB, "tasks/cancel", json!({"taskId": id}))
            .await
            .unwrap_err()
            .code
            .0,
        -32602
    );

    // Cancelled on B: recorded at once, and A's running handler is told.
    call(&b, ALICE, "tasks/cancel", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(get(&a, ALICE, &id).await.unwrap()["status"], "cancelled");
    for _ in 0..250 {
        if saw_cancel.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        saw_cancel.load(Ordering::SeqCst),
        "A noticed the cancellation recorded by B"
    );
    assert_eq!(get(&a, ALICE, &id).await.unwrap()["status"], "cancelled");

    // Asked on A, answered on B: B runs the tool again with every answer.
    let created = call_tool(&a, ALICE, "two_questions").await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    let asking = until(&b, &id, |t| t["status"] == "input_required").await;
    assert_eq!(asking["inputRequests"].as_object().unwrap().len(), 2);
    update(&b, ALICE, &id, json!({"a": accept(json!({"a": "x"}))})).await;
    let still = get(&a, ALICE, &id).await.unwrap();
    assert_eq!(still["status"], "input_required");
    assert_eq!(
        still["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["b"]
    );
    update(&b, ALICE, &id, json!({"b": accept(json!({"b": "y"}))})).await;
    let done = until(&a, &id, |t| t["status"] == "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "x y");
    assert_eq!(
        *runs.lock().unwrap(),
        ["a", "b"],
        "first run on A, the resumed one on B"
    );
}

/// A server whose runtime can be stopped, as its process would be killed: its runs and
/// their lease renewals stop with it.
struct Doomed {
    server: Server,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Doomed {
    fn kill(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// One member whose `work` tool blocks on `gate` (A) or answers at once with its name (B),
/// with a short lease.
async fn leased(url: &str, name: &'static str, gate: &Arc<Semaphore>) -> Server {
    let store = RedisStore::connect(url).await.unwrap();
    let gate = Arc::clone(gate);
    Server::builder(name, "1.0")
        .tool(
            ToolDef::new("work", json!({"type": "object"}), move |_, _cx: Context| {
                let gate = Arc::clone(&gate);
                async move {
                    if name == "a" {
                        gate.acquire().await.unwrap().forget();
                    }
                    Ok(CallToolResult::text(format!("done by {name}")))
                }
            })
            .task_support(TaskSupport::Required),
        )
        .tasks(
            Tasks::new(store)
                .poll_interval(Duration::from_millis(50))
                .lease(Duration::from_millis(300)),
        )
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_server_stopped_is_resumed_by_another_once_its_lease_lapses() {
    let Some(redis) = redis().await else { return };
    let gate = Arc::new(Semaphore::new(0));
    let b = leased(&redis.url, "b", &gate).await;

    // A runs on a runtime of its own, which is then stopped mid-run.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (url, opener) = (redis.url.clone(), Arc::clone(&gate));
    let server = runtime
        .spawn(async move { leased(&url, "a", &opener).await })
        .await
        .unwrap();
    let mut a = Doomed {
        server,
        runtime: Some(runtime),
    };
    let (s, rt) = (
        a.server.clone(),
        a.runtime.as_ref().unwrap().handle().clone(),
    );
    let created = rt
        .spawn(async move { call_tool(&s, ALICE, "work").await })
        .await
        .unwrap();
    let id = created["taskId"].as_str().unwrap().to_owned();

    // While A lives, its lease is renewed well past the lease's length: B does not resume.
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(get(&b, ALICE, &id).await.unwrap()["status"], "working");

    a.kill();
    // Once the lease lapses, the next tasks/get on B resumes the task there.
    let done = until(&b, &id, |t| t["status"] == "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "done by b");

    // A task resumed too many times fails instead of running forever.
    let gate = Arc::new(Semaphore::new(0));
    let c = leased(&redis.url, "a", &gate).await;
    let created = call_tool(&c, ALICE, "work").await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    let store = RedisStore::connect(&redis.url).await.unwrap();
    let mut record = store.get(&id).await.unwrap().unwrap();
    let expected = record.revision;
    record.revision += 1;
    record.resumes = Tasks::MAX_RESUMES;
    record.lease_holder = Some("a server that stopped".to_owned());
    record.lease_until_ms = now_ms() - 1;
    assert!(store.replace(expected, &record).await.unwrap());
    let failed = until(&b, &id, |t| t["status"] == "failed").await;
    assert!(
        failed["statusMessage"]
            .as_str()
            .unwrap()
            .contains("too many times"),
        "{failed}"
    );
    // C's own run, no longer the lease's holder, records nothing over it.
    gate.add_permits(1);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(get(&c, ALICE, &id).await.unwrap()["status"], "failed");
}
