//! The Tasks extension on the server: JSON requests in through `Server::handle`, JSON out.

mod tasks_common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_server::tasks::{Clock, MemoryStore, TaskStart, TaskSupport, Tasks};
use mcp_server::{Context, Server, ToolDef, ToolError};
use mcp_types::{CallToolResult, ElicitRequestFormParams, ElicitRequestParams};
use serde_json::{Value, json};
use tasks_common::{ALICE, BOB, PLAIN, accept, call, call_tool, call_tool_err, get, settled};
use tokio::sync::Semaphore;

fn form(message: &str, field: &str) -> ElicitRequestParams {
    let params: ElicitRequestFormParams = serde_json::from_value(json!({
        "message": message,
        "requestedSchema": {"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}
    }))
    .unwrap();
    ElicitRequestParams::ElicitRequestForm(params)
}

fn text(answer: &mcp_types::ElicitResult, field: &str) -> String {
    serde_json::to_value(&answer.content).unwrap()[field]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A server whose `gate` tool waits for a permit from `gate` (or its cancellation), and
/// whose other tools ask questions.
struct Fixture {
    server: Server,
    gate: Arc<Semaphore>,
    saw_cancel: Arc<AtomicBool>,
}

fn fixture(tasks: Tasks) -> Fixture {
    let gate = Arc::new(Semaphore::new(0));
    let saw_cancel = Arc::new(AtomicBool::new(false));
    let (g, seen) = (Arc::clone(&gate), Arc::clone(&saw_cancel));
    let server = Server::builder("tasks-test", "1.0")
        .tool(ToolDef::new("gate", json!({"type": "object"}), move |_, cx: Context| {
            let (gate, seen) = (Arc::clone(&g), Arc::clone(&seen));
            async move {
                tokio::select! {
                    permit = gate.acquire() => { permit.unwrap().forget(); Ok(CallToolResult::text("opened")) }
                    () = cx.cancellation().cancelled() => {
                        seen.store(true, Ordering::SeqCst);
                        Ok(CallToolResult::text("noticed the cancellation"))
                    }
                }
            }
        }).task_support(TaskSupport::Optional))
        .tool(ToolDef::new("only_task", json!({"type": "object"}), |_, _| async {
            Ok(CallToolResult::text("done"))
        }).task_support(TaskSupport::Required))
        .tool(ToolDef::new("two_questions", json!({"type": "object"}), |_, cx: Context| async move {
            let first = cx.elicit("first", form("First?", "a"));
            let second = cx.elicit("second", form("Second?", "b"));
            let (first, second) = (first?, second?);
            Ok(CallToolResult::text(format!("{} and {}", text(&first, "a"), text(&second, "b"))))
        }).task_support(TaskSupport::Optional))
        .tool(ToolDef::new("ask_then_task", json!({"type": "object"}), |_, cx: Context| async move {
            let answer = cx.elicit("name", form("Name?", "name"))?;
            cx.escalate().await?;
            Ok(CallToolResult::text(format!("Hello, {}! (task {})", text(&answer, "name"), cx.task_id().unwrap_or("none"))))
        }).task_support(TaskSupport::Required).task_start(TaskStart::OnEscalate))
        .tool(ToolDef::new("remembers", json!({"type": "object"}), |_, cx: Context| async move {
            // The first run notes where it got to; the run after the answer reads it back.
            let step = cx.state().and_then(|s| s["step"].as_str()).unwrap_or("none").to_owned();
            if step == "none" {
                cx.set_state(json!({"step": "asked"}));
            }
            let answer = cx.elicit("name", form("Name?", "name"))?;
            Ok(CallToolResult::text(format!("{} after {step}", text(&answer, "name"))))
        }).task_support(TaskSupport::Required))
        .tool(ToolDef::new("broken", json!({"type": "object"}), |_, _| async {
            Err(ToolError::Protocol(mcp_jsonrpc::ErrorObject::internal("the backend is down")))
        }).task_support(TaskSupport::Optional))
        .tasks(tasks)
        .build()
        .unwrap();
    Fixture {
        server,
        gate,
        saw_cancel,
    }
}

async fn start(server: &Server, caller: tasks_common::Caller, tool: &str) -> String {
    let created = call(
        server,
        caller,
        "tools/call",
        json!({"name": tool, "arguments": {}}),
    )
    .await
    .unwrap();
    assert_eq!(created["resultType"], "task", "{created}");
    created["taskId"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_task_is_created_polled_and_completed() {
    let f = fixture(Tasks::in_memory());
    let created = call_tool(&f.server, ALICE, "gate").await;
    assert_eq!(created["resultType"], "task");
    assert_eq!(created["status"], "working");
    for absent in [
        "result",
        "error",
        "inputRequests",
        "requestState",
        "task",
        "content",
    ] {
        assert!(created.get(absent).is_none(), "{absent} in {created}");
    }
    let id = created["taskId"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 32, "128 bits, hex");
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
    assert!(created["createdAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(created["ttlMs"], 3_600_000);
    assert_eq!(created["pollIntervalMs"], 1000);

    // Durable at once, and still working while the gate is shut.
    let working = get(&f.server, ALICE, &id).await.unwrap();
    assert_eq!(working["resultType"], "complete");
    assert_eq!(working["status"], "working");
    assert!(working.get("result").is_none());

    f.gate.add_permits(1);
    let done = settled(&f.server, ALICE, &id).await;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["content"][0]["text"], "opened");
    assert_eq!(done["result"]["resultType"], "complete");

    let other = start(&f.server, ALICE, "gate").await;
    assert_ne!(other, id, "every task has its own id");
}

#[tokio::test]
async fn without_the_extension_optional_tools_answer_directly_and_required_ones_refuse() {
    let f = fixture(Tasks::in_memory());
    f.gate.add_permits(1);
    let direct = call_tool(&f.server, PLAIN, "gate").await;
    assert_eq!(direct["resultType"], "complete");
    assert_eq!(direct["content"][0]["text"], "opened");
    assert!(direct.get("taskId").is_none());

    let refused = call_tool_err(&f.server, PLAIN, "only_task").await;
    assert_eq!(refused.code.0, -32021);
    assert_eq!(
        refused.data.unwrap()["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    for method in ["tasks/get", "tasks/cancel"] {
        let refused = call(&f.server, PLAIN, method, json!({"taskId": "x"}))
            .await
            .unwrap_err();
        assert_eq!(refused.code.0, -32021, "{method}");
    }
    // With the extension, an unknown id is -32602.
    assert_eq!(
        get(&f.server, ALICE, "0123").await.unwrap_err().code.0,
        -32602
    );
}

#[tokio::test]
async fn another_owner_can_neither_see_nor_touch_a_task() {
    let f = fixture(Tasks::in_memory());
    let id = start(&f.server, ALICE, "gate").await;
    let unknown = get(&f.server, BOB, "no-such-task").await.unwrap_err();
    for (method, params) in [
        ("tasks/get", json!({"taskId": id})),
        ("tasks/cancel", json!({"taskId": id})),
        ("tasks/update", json!({"taskId": id, "inputResponses": {}})),
    ] {
        let refused = call(&f.server, BOB, method, params).await.unwrap_err();
        assert_eq!(refused.code.0, -32602, "{method}");
        assert_eq!(
            refused.message, unknown.message,
            "indistinguishable from an unknown id"
        );
    }
    // Bob's cancel did nothing: Alice's task still runs, and finishes.
    assert_eq!(
        get(&f.server, ALICE, &id).await.unwrap()["status"],
        "working"
    );
    assert!(!f.saw_cancel.load(Ordering::SeqCst));
    f.gate.add_permits(1);
    assert_eq!(settled(&f.server, ALICE, &id).await["status"], "completed");
}

#[tokio::test]
async fn an_authenticated_principal_owns_its_tasks_whatever_its_credential() {
    let f = fixture(Tasks::in_memory());
    let ada = tasks_common::Caller {
        credential: Some("Bearer one"),
        declares: true,
        principal: Some("ada"),
    };
    let ada_refreshed = tasks_common::Caller {
        credential: Some("Bearer two"),
        ..ada
    };
    let eve = tasks_common::Caller {
        principal: Some("eve"),
        ..ada
    };
    let id = start(&f.server, ada, "gate").await;
    assert_eq!(
        get(&f.server, ada_refreshed, &id).await.unwrap()["status"],
        "working"
    );
    assert_eq!(get(&f.server, eve, &id).await.unwrap_err().code.0, -32602);
    assert_eq!(get(&f.server, ALICE, &id).await.unwrap_err().code.0, -32602);
}

#[tokio::test]
async fn a_custom_owner_binds_tasks_to_it() {
    // The seam an authenticated principal plugs into: here, the client's declared name.
    let tasks = Tasks::in_memory().owner(|cx| {
        cx.meta()
            .client_info
            .as_ref()
            .map(|i| i.name.clone())
            .unwrap_or_default()
    });
    let f = fixture(tasks);
    let id = start(&f.server, ALICE, "gate").await;
    // Same owner (no client info): Bob's different credential does not matter any more.
    assert_eq!(get(&f.server, BOB, &id).await.unwrap()["status"], "working");
}

#[tokio::test]
async fn cancel_acknowledges_fires_the_token_and_settles_cancelled() {
    let f = fixture(Tasks::in_memory());
    let id = start(&f.server, ALICE, "gate").await;
    let ack = call(&f.server, ALICE, "tasks/cancel", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(ack["resultType"], "complete");
    for absent in ["taskId", "status", "result", "error", "inputRequests"] {
        assert!(ack.get(absent).is_none(), "{absent} in the ack");
    }
    let cancelled = get(&f.server, ALICE, &id).await.unwrap();
    assert_eq!(cancelled["status"], "cancelled");
    // The handler saw its token fire and returned a result; the task stays cancelled.
    for _ in 0..1000 {
        if f.saw_cancel.load(Ordering::SeqCst) {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(f.saw_cancel.load(Ordering::SeqCst));
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
    let after = get(&f.server, ALICE, &id).await.unwrap();
    assert_eq!(after["status"], "cancelled");
    assert!(after.get("result").is_none());
    // Cancelling a terminal task is the same empty acknowledgement.
    let again = call(&f.server, ALICE, "tasks/cancel", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(again["resultType"], "complete");
}

/// Starts `tool` as Alice on a fresh in-memory fixture and waits for its task to settle,
/// which must be in `status`: the fixture, the task's id and its state.
async fn settled_task(tool: &str, status: &str) -> (Fixture, String, Value) {
    let f = fixture(Tasks::in_memory());
    let id = start(&f.server, ALICE, tool).await;
    let task = settled(&f.server, ALICE, &id).await;
    assert_eq!(task["status"], status);
    (f, id, task)
}

/// The keys of a task's outstanding `inputRequests`, in order.
fn input_keys(task: &Value) -> Vec<&String> {
    task["inputRequests"].as_object().unwrap().keys().collect()
}

#[tokio::test]
async fn input_inside_a_task_is_asked_answered_in_parts_and_resumed() {
    let (f, id, asking) = settled_task("two_questions", "input_required").await;
    assert_eq!(input_keys(&asking), ["first", "second"]);
    assert_eq!(
        asking["inputRequests"]["first"]["method"],
        "elicitation/create"
    );

    // An answer to an outstanding key must be a valid response.
    let bad = call(
        &f.server,
        ALICE,
        "tasks/update",
        json!({"taskId": id, "inputResponses": {"first": 12345}}),
    )
    .await;
    assert_eq!(bad.unwrap_err().code.0, -32602);

    // A partial answer (plus a key that was never asked, ignored) keeps it waiting for the rest.
    let ack = call(&f.server, ALICE, "tasks/update", json!({"taskId": id,
        "inputResponses": {"first": accept(json!({"a": "tea"})), "never-asked": {"whatever": true}}})).await.unwrap();
    assert_eq!(ack["resultType"], "complete");
    let waiting = get(&f.server, ALICE, &id).await.unwrap();
    assert_eq!(waiting["status"], "input_required");
    assert_eq!(input_keys(&waiting), ["second"]);

    call(
        &f.server,
        ALICE,
        "tasks/update",
        json!({"taskId": id,
        "inputResponses": {"second": accept(json!({"b": "cake"}))}}),
    )
    .await
    .unwrap();
    let done = settled(&f.server, ALICE, &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "tea and cake");
    assert!(done.get("inputRequests").is_none());
}

#[tokio::test]
async fn the_state_a_task_run_sets_reaches_the_run_after_the_answer() {
    let (f, id, asking) = settled_task("remembers", "input_required").await;
    assert_eq!(input_keys(&asking), ["name"]);
    call(
        &f.server,
        ALICE,
        "tasks/update",
        json!({"taskId": id, "inputResponses": {"name": accept(json!({"name": "Ada"}))}}),
    )
    .await
    .unwrap();
    let done = settled(&f.server, ALICE, &id).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Ada after asked",
        "{done}"
    );
}

#[tokio::test]
async fn input_rounds_before_escalation_are_synchronous_then_the_task_finishes_the_work() {
    let f = fixture(Tasks::in_memory());
    let first = call_tool(&f.server, ALICE, "ask_then_task").await;
    assert_eq!(first["resultType"], "input_required");
    assert!(first.get("taskId").is_none());
    let state = first["requestState"].clone();
    let second = call(
        &f.server,
        ALICE,
        "tools/call",
        json!({"name": "ask_then_task", "arguments": {},
        "inputResponses": {"name": accept(json!({"name": "Alice"}))}, "requestState": state}),
    )
    .await
    .unwrap();
    assert_eq!(second["resultType"], "task", "{second}");
    assert!(second.get("requestState").is_none());
    let id = second["taskId"].as_str().unwrap().to_owned();
    let done = settled(&f.server, ALICE, &id).await;
    assert_eq!(
        done["result"]["content"][0]["text"],
        format!("Hello, Alice! (task {id})")
    );
}

#[tokio::test]
async fn a_json_rpc_error_fails_the_task_and_a_tool_error_completes_it() {
    let (_f, _, failed) = settled_task("broken", "failed").await;
    assert_eq!(failed["error"]["code"], -32603);
    assert_eq!(failed["error"]["message"], "the backend is down");
    assert!(failed.get("result").is_none());
}

#[tokio::test(start_paused = true)]
async fn tasks_expire_a_ttl_after_they_finish_and_running_ones_are_kept_alive() {
    let clock = Clock::manual(1_000_000);
    let store = MemoryStore::new(16).with_clock(clock.clone());
    let f = fixture(
        Tasks::new(store)
            .clock(clock.clone())
            .ttl(Duration::from_secs(10)),
    );
    let id = start(&f.server, ALICE, "gate").await;
    assert_eq!(get(&f.server, ALICE, &id).await.unwrap()["ttlMs"], 10_000);
    // A run longer than the TTL is kept alive every half TTL (the wall clock moves 4 s per
    // keep-alive period, so whichever runs first, the task never lapses between two).
    for _ in 0..5 {
        clock.advance(4_000);
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    let working = get(&f.server, ALICE, &id).await.unwrap();
    assert_eq!(working["status"], "working");
    assert_eq!(
        working["lastUpdatedAt"], working["createdAt"],
        "a keep-alive is no change"
    );
    f.gate.add_permits(1);
    let done = settled(&f.server, ALICE, &id).await;
    assert_eq!(done["status"], "completed");
    assert_eq!(
        done["ttlMs"], 30_000,
        "kept 10 s after it finished, 20 s after creation"
    );
    clock.advance(9_999);
    assert_eq!(
        get(&f.server, ALICE, &id).await.unwrap()["status"],
        "completed"
    );
    clock.advance(1);
    let gone = get(&f.server, ALICE, &id).await.unwrap_err();
    assert_eq!(gone.code.0, -32602);

    // A task waiting for input nobody gives is dropped a TTL after its last change.
    let waiting = start(&f.server, ALICE, "two_questions").await;
    assert_eq!(
        settled(&f.server, ALICE, &waiting).await["status"],
        "input_required"
    );
    clock.advance(10_000);
    assert_eq!(
        get(&f.server, ALICE, &waiting).await.unwrap_err().code.0,
        -32602
    );
}

#[tokio::test]
async fn a_full_store_refuses_new_tasks() {
    let f = fixture(Tasks::new(MemoryStore::new(1)));
    start(&f.server, ALICE, "gate").await;
    let refused = call_tool_err(&f.server, ALICE, "gate").await;
    assert_eq!(refused.code.0, -32603);
}

#[tokio::test]
async fn discover_advertises_the_extension() {
    let f = fixture(Tasks::in_memory());
    let discovered = call(&f.server, PLAIN, "server/discover", json!({}))
        .await
        .unwrap();
    assert_eq!(
        discovered["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    assert!(discovered["capabilities"].get("tasks").is_none());
    let _: Value = discovered;
}

/// Opens `subscriptions/listen` for `ids` as `caller`; the notifications arrive on the
/// returned channel as encoded frames.
fn listen(
    server: &Server,
    caller: tasks_common::Caller,
    ids: &[&str],
) -> (
    tokio::task::JoinHandle<Result<Box<serde_json::value::RawValue>, mcp_jsonrpc::ErrorObject>>,
    tokio::sync::mpsc::Receiver<bytes::Bytes>,
) {
    use mcp_jsonrpc::{
        CancellationToken, NotificationSink, Request, RequestContext, TransportInfo,
    };
    let params = json!({"_meta": tasks_common::meta(caller), "notifications": {"taskIds": ids}});
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    let headers = vec![(
        "authorization".to_owned(),
        caller.credential.unwrap().to_owned(),
    )];
    let rpc = RequestContext::new(
        mcp_types::RequestId::Integer(9),
        CancellationToken::new(),
        NotificationSink::channel(tx),
    )
    .with_transport_info(Arc::new(TransportInfo::with_headers(headers)));
    let request = Request::new(
        mcp_types::RequestId::Integer(9),
        "subscriptions/listen",
        Some(serde_json::value::to_raw_value(&params).unwrap()),
    );
    let server = server.clone();
    (
        tokio::spawn(async move { server.handle(request, rpc).await }),
        rx,
    )
}

async fn next(rx: &mut tokio::sync::mpsc::Receiver<bytes::Bytes>) -> Value {
    let frame = rx.recv().await.expect("a notification");
    serde_json::from_slice(frame.trim_ascii()).unwrap()
}

#[tokio::test]
async fn listeners_hear_the_changes_of_their_own_tasks() {
    let f = fixture(Tasks::in_memory());
    let mine = start(&f.server, ALICE, "gate").await;
    let theirs = start(&f.server, BOB, "gate").await;
    let (stream, mut rx) = listen(&f.server, ALICE, &[&mine, &theirs, "no-such-task"]);
    let ack = next(&mut rx).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        json!([mine]),
        "only the listener's own tasks"
    );

    f.gate.add_permits(2);
    let note = next(&mut rx).await;
    assert_eq!(note["method"], "notifications/tasks");
    assert_eq!(note["params"]["taskId"], mine.as_str());
    assert_eq!(note["params"]["status"], "completed");
    assert_eq!(note["params"]["result"]["content"][0]["text"], "opened");
    assert_eq!(
        note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        9
    );
    assert_eq!(
        settled(&f.server, BOB, &theirs).await["status"],
        "completed"
    );
    // Nothing about Bob's task, and nothing more about a terminal one.
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
    assert!(rx.try_recv().is_err());
    stream.abort();

    // Naming tasks without declaring the extension is refused.
    let params = json!({"notifications": {"taskIds": [mine]}});
    let refused = call(&f.server, PLAIN, "subscriptions/listen", params)
        .await
        .unwrap_err();
    assert_eq!(refused.code.0, -32021);
}

#[tokio::test]
async fn one_listen_stream_watches_at_most_256_task_ids() {
    let f = fixture(Tasks::in_memory());
    let mut ids = Vec::new();
    for _ in 0..257 {
        ids.push(start(&f.server, ALICE, "gate").await);
    }
    let named: Vec<&str> = ids.iter().map(String::as_str).collect();
    let (stream, mut rx) = listen(&f.server, ALICE, &named);
    let ack = next(&mut rx).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    // At the limit: the first 256 are acknowledged; past it: the 257th is not.
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        json!(named[..256]),
    );
    stream.abort();
}
