//! The client following tasks of this workspace's server (Tasks extension), in one process
//! over the engine's in-memory duplex, and over Streamable HTTP for the routing header.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use mcp_client::{CallOptions, Client, ClientBuilder, Error, TaskHandle, TaskOptions, ToolCall};
use mcp_server::tasks::{TaskSupport, Tasks};
use mcp_server::{Context, Server, ToolDef, ToolError};
use mcp_test_support::client::connect_in_memory;
use mcp_types::JsonObject;
use mcp_types::{
    CallToolResult, ElicitRequestFormParams, ElicitRequestParams, ElicitResult, ElicitResultAction,
};
use serde_json::json;
use tokio::sync::{Notify, Semaphore};

struct Fixture {
    server: Server,
    gate: Arc<Semaphore>,
    started: Arc<Notify>,
    saw_cancel: Arc<AtomicBool>,
}

fn fixture() -> Fixture {
    let gate = Arc::new(Semaphore::new(0));
    let started = Arc::new(Notify::new());
    let saw_cancel = Arc::new(AtomicBool::new(false));
    let (g, s, c) = (
        Arc::clone(&gate),
        Arc::clone(&started),
        Arc::clone(&saw_cancel),
    );
    let server = Server::builder("tasks", "1")
        .tool(ToolDef::new("gate", json!({"type": "object"}), move |_, cx: Context| {
            let (gate, started, seen) = (Arc::clone(&g), Arc::clone(&s), Arc::clone(&c));
            async move {
                started.notify_one();
                tokio::select! {
                    permit = gate.acquire() => { permit.unwrap().forget(); Ok(CallToolResult::text("opened")) }
                    () = cx.cancellation().cancelled() => { seen.store(true, Ordering::SeqCst); Err(ToolError::failed("stopped")) }
                }
            }
        }).task_support(TaskSupport::Required))
        .tool(ToolDef::new("ask", json!({"type": "object"}), |_, cx: Context| async move {
            let form: ElicitRequestFormParams = serde_json::from_value(json!({
                "message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
            }))?;
            let answer = cx.elicit("name", ElicitRequestParams::ElicitRequestForm(form))?;
            let name = serde_json::to_value(&answer.content)?["name"].as_str().unwrap_or_default().to_owned();
            Ok(CallToolResult::text(format!("Hello, {name}!")))
        }).task_support(TaskSupport::Optional))
        .tool(ToolDef::new("broken", json!({"type": "object"}), |_, _| async {
            Err(ToolError::Protocol(mcp_jsonrpc::ErrorObject::internal("the backend is down")))
        }).task_support(TaskSupport::Required))
        .tasks(Tasks::in_memory().poll_interval(Duration::from_millis(10)))
        .build()
        .unwrap();
    Fixture {
        server,
        gate,
        started,
        saw_cancel,
    }
}

/// A client over the in-memory duplex; the connections must outlive the test's calls.
fn connect(
    server: &Server,
    builder: ClientBuilder,
) -> (Client, mcp_jsonrpc::Connection, mcp_jsonrpc::Connection) {
    connect_in_memory(server.clone(), builder, 64)
}

/// A client declaring the extension, answering elicitations with `Ada` and counting them.
fn builder(asked: &Arc<AtomicUsize>, options: TaskOptions) -> ClientBuilder {
    let asked = Arc::clone(asked);
    Client::builder("c", "1")
        .tasks(options)
        .on_elicit(move |_| {
            asked.fetch_add(1, Ordering::SeqCst);
            async move {
                let mut answer = ElicitResult::new(ElicitResultAction::Accept);
                answer.content = serde_json::from_value(json!({"name": "Ada"})).unwrap();
                Ok(answer)
            }
        })
}

/// Calls `tool` (no arguments), which must become a task: its handle.
async fn start_task(client: &Client, tool: &str) -> TaskHandle {
    let call = client
        .call_tool_or_task(tool, JsonObject::new(), &CallOptions::default())
        .await
        .unwrap();
    let ToolCall::Task(task) = call else {
        panic!("{tool}: a task");
    };
    task
}

fn fast() -> TaskOptions {
    TaskOptions::new().poll(Duration::from_millis(1), Duration::from_millis(20))
}

#[tokio::test]
async fn call_tool_follows_a_task_through_its_input_requests_to_the_result() {
    let f = fixture();
    let asked = Arc::new(AtomicUsize::new(0));
    let (client, _c, _s) = connect(&f.server, builder(&asked, fast()));
    let result = client.call_tool("ask", JsonObject::new()).await.unwrap();
    assert_eq!(
        result.content[0],
        mcp_types::ContentBlock::text("Hello, Ada!")
    );
    assert_eq!(
        asked.load(Ordering::SeqCst),
        1,
        "the input request was put to the user once"
    );
}

#[tokio::test]
async fn a_client_without_the_extension_gets_the_synchronous_result_or_the_capability_error() {
    let f = fixture();
    let asked = Arc::new(AtomicUsize::new(0));
    let plain = Client::builder("c", "1").on_elicit(|_| async {
        let mut answer = ElicitResult::new(ElicitResultAction::Accept);
        answer.content = serde_json::from_value(json!({"name": "Bo"})).unwrap();
        Ok(answer)
    });
    let (client, _c, _s) = connect(&f.server, plain);
    let direct = client.call_tool("ask", JsonObject::new()).await.unwrap();
    assert_eq!(
        direct.content[0],
        mcp_types::ContentBlock::text("Hello, Bo!")
    );
    let refused = client
        .call_tool("gate", JsonObject::new())
        .await
        .unwrap_err();
    assert_eq!(refused.protocol().unwrap().code.0, -32021);
    let _ = asked;
}

#[tokio::test]
async fn the_low_level_handle_polls_waits_and_cancels() {
    let f = fixture();
    let asked = Arc::new(AtomicUsize::new(0));
    let (client, _c, _s) = connect(&f.server, builder(&asked, fast()));
    let task = start_task(&client, "gate").await;
    assert_eq!(task.id().len(), 32);
    assert_eq!(
        task.get().await.unwrap().task.status,
        mcp_types::tasks::TaskStatus::Working
    );
    // A handle found again by id (as after a restart) follows the same task.
    let again = client.task(task.id()).await.unwrap();
    f.gate.add_permits(1);
    let result = again.wait().await.unwrap();
    assert_eq!(result.content[0], mcp_types::ContentBlock::text("opened"));

    let task = start_task(&client, "gate").await;
    task.cancel().await.unwrap();
    match task.wait().await {
        Err(Error::TaskCancelled { id }) => assert_eq!(id.len(), 32),
        other => panic!("{other:?}"),
    }

    let failed = client
        .call_tool("broken", JsonObject::new())
        .await
        .unwrap_err();
    let error = failed
        .protocol()
        .expect("the JSON-RPC error the call would have returned");
    assert_eq!(
        (error.code.0, error.message.as_str()),
        (-32603, "the backend is down")
    );
}

// In memory on the paused clock: the waits below cost no real time.
#[tokio::test(start_paused = true)]
async fn dropping_a_call_that_follows_a_task_cancels_the_task() {
    let f = fixture();
    let asked = Arc::new(AtomicUsize::new(0));
    let (client, _c, _s) = connect(&f.server, builder(&asked, fast()));
    let task = start_task(&client, "gate").await;
    // `wait` is what `call_tool` follows a task with; it is dropped while it polls.
    let follow = task.wait();
    tokio::select! {
        _ = follow => panic!("the gate is shut"),
        () = tokio::time::sleep(Duration::from_millis(30)) => {}
    }
    // The follower's future is gone: the task is cancelled on the server.
    for _ in 0..500 {
        if f.saw_cancel.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        f.saw_cancel.load(Ordering::SeqCst),
        "the server's handler saw the cancellation"
    );
}

// In memory on the paused clock: the waits below cost no real time.
#[tokio::test(start_paused = true)]
async fn status_notifications_wake_the_follower_before_its_next_poll() {
    let f = fixture();
    let asked = Arc::new(AtomicUsize::new(0));
    // Polls an hour apart: only a notification can end the call in time.
    let slow = TaskOptions::new()
        .poll(Duration::from_hours(1), Duration::from_hours(1))
        .notifications(true);
    let (client, _c, _s) = connect(&f.server, builder(&asked, slow));
    let gate = Arc::clone(&f.gate);
    let started = Arc::clone(&f.started);
    tokio::spawn(async move {
        started.notified().await;
        // Let the follower subscribe and poll once before the task ends.
        tokio::time::sleep(Duration::from_millis(200)).await;
        gate.add_permits(1);
    });
    let result = tokio::time::timeout(
        Duration::from_secs(10),
        client.call_tool("gate", JsonObject::new()),
    )
    .await
    .expect("woken by notifications/tasks")
    .unwrap();
    assert_eq!(result.content[0], mcp_types::ContentBlock::text("opened"));
}

#[tokio::test]
async fn over_http_task_requests_carry_the_task_id_in_mcp_name() {
    use mcp_transport_http::{HttpClientConfig, HttpServer, HttpServerConfig};
    let f = fixture();
    // The server's transport insists on the routing header for the task methods: a server
    // with tasks asks for it, with no wiring.
    let config = HttpServerConfig::default();
    let running = HttpServer::bind("127.0.0.1:0".parse().unwrap(), f.server.clone(), config)
        .await
        .unwrap();
    let asked = Arc::new(AtomicUsize::new(0));
    let client = builder(&asked, fast())
        .connect_http(running.url(), HttpClientConfig::default())
        .unwrap();
    let result = client.call_tool("ask", JsonObject::new()).await.unwrap();
    assert_eq!(
        result.content[0],
        mcp_types::ContentBlock::text("Hello, Ada!")
    );
    let task = start_task(&client, "gate").await;
    task.cancel().await.unwrap();
    assert!(matches!(
        task.wait().await,
        Err(Error::TaskCancelled { .. })
    ));
}

// In memory on the paused clock: the waits below cost no real time.
#[tokio::test(start_paused = true)]
async fn a_task_whose_question_the_client_cannot_answer_is_cancelled_not_abandoned() {
    let f = fixture();
    let refusing = Client::builder("c", "1")
        .tasks(fast())
        .on_elicit(|_| async { Err("the user closed the dialog".to_owned()) });
    let (client, _c, _s) = connect(&f.server, refusing);
    let task = start_task(&client, "ask").await;
    let id = task.id().to_owned();
    assert!(matches!(task.wait().await, Err(Error::Handler { .. })));
    let mut status = None;
    for _ in 0..500 {
        status = Some(client.get_task(&id).await.unwrap().task.status);
        if status == Some(mcp_types::tasks::TaskStatus::Cancelled) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(status, Some(mcp_types::tasks::TaskStatus::Cancelled));
}

#[test]
fn the_tasks_extension_is_declared_beside_the_others() {
    let declared = |builder: ClientBuilder| {
        serde_json::to_value(builder.input_handlers().capabilities()).unwrap()["extensions"].clone()
    };
    let ui = json!({"mimeTypes": ["text/html;profile=mcp-app"]});
    let both = Client::builder("a", "1")
        .extension(
            "io.modelcontextprotocol/ui",
            ui.as_object().unwrap().clone(),
        )
        .tasks(fast());
    assert_eq!(
        declared(both),
        json!({"io.modelcontextprotocol/ui": ui, "io.modelcontextprotocol/tasks": {}})
    );
    // Settings declared for the Tasks extension by hand are kept, not replaced.
    let custom = Client::builder("a", "1")
        .extension(
            "io.modelcontextprotocol/tasks",
            json!({"x": 1}).as_object().unwrap().clone(),
        )
        .tasks(fast());
    assert_eq!(
        declared(custom),
        json!({"io.modelcontextprotocol/tasks": {"x": 1}})
    );
    assert_eq!(
        declared(Client::builder("a", "1").tasks(fast())),
        json!({"io.modelcontextprotocol/tasks": {}})
    );
    assert_eq!(declared(Client::builder("a", "1")), serde_json::Value::Null);
}
