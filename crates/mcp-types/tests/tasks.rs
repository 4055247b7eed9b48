//! Golden messages of the Tasks extension (<https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md>):
//! each reads into its type and writes back to the same JSON.

mod golden;

use golden::{check, meta_with};

use mcp_types::tasks::{
    CancelTaskRequest, CreateTaskResult, GetTaskRequest, GetTaskResult, TaskAck, TaskStatus,
    TaskStatusNotification, UpdateTaskRequest,
};
use mcp_types::{InputRequest, InputResponse};
use serde_json::{Value, json};

fn meta() -> Value {
    meta_with(&json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}))
}

#[test]
fn create_task_result() {
    let created: CreateTaskResult = check(&json!({
        "resultType": "task",
        "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840",
        "status": "working",
        "statusMessage": "The operation is now in progress.",
        "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": "2025-11-25T10:40:00Z",
        "ttlMs": 60000,
        "pollIntervalMs": 5000
    }));
    assert_eq!(created.result_type.as_str(), "task");
    assert_eq!(created.task.ttl_ms, Some(60000));
    assert_eq!(created.task.poll_interval_ms, Some(5000));
}

#[test]
fn an_unlimited_ttl_is_written_as_null_not_skipped() {
    let created: CreateTaskResult = check(&json!({
        "resultType": "task", "taskId": "t", "status": "working",
        "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:30:00Z",
        "ttlMs": null
    }));
    assert_eq!(created.task.ttl_ms, None);
    // Like the generated results' `ttlMs`, a missing member is read leniently (as
    // unlimited); it is always written.
    let lenient: CreateTaskResult = serde_json::from_value(json!({
        "resultType": "task", "taskId": "t", "status": "working",
        "createdAt": "x", "lastUpdatedAt": "x"
    }))
    .expect("reads");
    assert_eq!(
        serde_json::to_value(&lenient).expect("writes")["ttlMs"],
        Value::Null
    );
}

#[test]
fn get_task_results_of_every_status() {
    let working: GetTaskResult = check(&json!({
        "resultType": "complete", "taskId": "t", "status": "working",
        "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:50:00Z",
        "ttlMs": 3_600_000, "pollIntervalMs": 5000
    }));
    assert_eq!(working.task.task.status, TaskStatus::Working);

    let asking: GetTaskResult = check(&json!({
        "resultType": "complete", "taskId": "t", "status": "input_required",
        "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:50:00Z",
        "ttlMs": 3_600_000, "pollIntervalMs": 5000,
        "inputRequests": {"name": {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Please enter your name.",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        }}}
    }));
    let requests = asking.task.input_requests.expect("inputRequests");
    assert!(matches!(
        requests.get("name"),
        Some(InputRequest::Elicit(_))
    ));

    let done: GetTaskResult = check(&json!({
        "resultType": "complete", "taskId": "t", "status": "completed",
        "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:50:00Z",
        "ttlMs": 3_600_000, "pollIntervalMs": 5000,
        "result": {"content": [{"type": "text", "text": "Hello, Luca!"}], "isError": false}
    }));
    assert!(done.task.task.status.is_terminal());
    assert!(done.task.result.is_some());

    let failed: GetTaskResult = check(&json!({
        "resultType": "complete", "taskId": "t", "status": "failed",
        "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:40:00Z",
        "ttlMs": 3_600_000, "statusMessage": "Tool execution failed: API rate limit exceeded",
        "error": {"code": -32603, "message": "API rate limit exceeded"}
    }));
    assert_eq!(failed.task.error.expect("error").code, -32603);

    let cancelled: GetTaskResult = check(&json!({
        "resultType": "complete", "taskId": "t", "status": "cancelled",
        "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:40:00Z",
        "ttlMs": null
    }));
    assert_eq!(cancelled.task.task.status, TaskStatus::Cancelled);
}

#[test]
fn requests() {
    let get: GetTaskRequest = check(&json!({
        "jsonrpc": "2.0", "id": 3, "method": "tasks/get",
        "params": {"_meta": meta(), "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840"}
    }));
    assert_eq!(get.params.task_id, "786512e2-9e0d-44bd-8f29-789f320fe840");

    let update: UpdateTaskRequest = check(&json!({
        "jsonrpc": "2.0", "id": 6, "method": "tasks/update",
        "params": {"_meta": meta(), "taskId": "t",
            "inputResponses": {"name": {"action": "accept", "content": {"input": "Luca"}}}}
    }));
    assert!(matches!(
        update.params.input_responses.get("name"),
        Some(InputResponse::Elicit(_))
    ));

    let _: CancelTaskRequest = check(&json!({
        "jsonrpc": "2.0", "id": 9, "method": "tasks/cancel",
        "params": {"_meta": meta(), "taskId": "t"}
    }));
    assert!(
        serde_json::from_value::<CancelTaskRequest>(json!({
            "jsonrpc": "2.0", "id": 9, "method": "tasks/get",
            "params": {"_meta": meta(), "taskId": "t"}
        }))
        .is_err(),
        "the method tag is checked"
    );
    let _: TaskAck = check(&json!({"resultType": "complete"}));
}

#[test]
fn status_notification() {
    let note: TaskStatusNotification = check(&json!({
        "jsonrpc": "2.0", "method": "notifications/tasks",
        "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": 4},
            "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840", "status": "completed",
            "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:50:00Z",
            "ttlMs": 60000, "pollIntervalMs": 5000,
            "result": {"content": [{"type": "text", "text": "Operation completed successfully."}], "isError": false}
        }
    }));
    assert_eq!(note.params.task.task.status, TaskStatus::Completed);
}
