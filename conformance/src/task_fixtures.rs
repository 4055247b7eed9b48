//! The fixtures of the Tasks extension scenarios (`SCENARIOS.md`, "The 13 scenarios that
//! run but are not scored"): `greet`, `slow_compute`, `failing_job`, `protocol_error_job`,
//! `confirm_delete`, `multi_input` and `test_tool_with_task`, and the extension itself.

use std::time::Duration;

use mcp_jsonrpc::ErrorObject;
use mcp_server::tasks::{TaskStart, TaskSupport, Tasks};
use mcp_server::{Context, ServerBuilder, ToolDef, ToolError};
use mcp_types::{CallToolResult, ElicitResultContentValue};
use serde_json::{Value, json};

use crate::fixtures::{field, form};

/// Sleeps `seconds`, or until the run is cancelled; whether it ran to the end.
async fn work(cx: &Context, seconds: f64) -> bool {
    let duration = Duration::from_secs_f64(seconds.clamp(0.0, 3600.0));
    tokio::select! {
        () = cx.cancellation().cancelled() => false,
        () = tokio::time::sleep(duration) => true,
    }
}

fn cancelled() -> ToolError {
    ToolError::Protocol(ErrorObject::internal("cancelled"))
}

/// Whether an elicitation answer accepted with `confirm: true`.
fn confirmed(answer: &mcp_types::ElicitResult) -> bool {
    matches!(answer.action, mcp_types::ElicitResultAction::Accept)
        && answer
            .content
            .as_ref()
            .and_then(|c| c.get("confirm"))
            .is_some_and(|v| matches!(v, ElicitResultContentValue::Boolean(true)))
}

/// Adds the Tasks extension and its fixtures to `builder`.
pub(crate) fn install(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            ToolDef::new(
                "greet",
                json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
                |args, _| async move {
                    let name = args["name"].as_str().unwrap_or_default();
                    Ok(CallToolResult::text(format!("Hello, {name}!")))
                },
            )
            .description("Greets someone (never a task)"),
        )
        .tool(
            ToolDef::new(
                "slow_compute",
                json!({"type": "object", "properties": {
                    "seconds": {"type": "number", "minimum": 0},
                    "label": {"type": "string"}
                }}),
                |args, cx: Context| async move {
                    let seconds = args["seconds"].as_f64().unwrap_or(1.0);
                    let label = args["label"].as_str().unwrap_or("compute").to_owned();
                    if !work(&cx, seconds).await {
                        return Err(cancelled());
                    }
                    Ok(CallToolResult::text(format!("Computed {label} in {seconds}s")))
                },
            )
            .description("Sleeps `seconds`, then answers (a task when the client allows)")
                    .task_support(TaskSupport::Optional),
        )
        .tool(
            ToolDef::new("failing_job", json!({"type": "object", "properties": {}}), |_, cx: Context| async move {
                if !work(&cx, 1.0).await {
                    return Err(cancelled());
                }
                Err(ToolError::failed("The job failed: the input could not be processed"))
            })
            .description("Fails with a tool error after about a second (only as a task)")
                    .task_support(TaskSupport::Required),
        )
        .tool(
            ToolDef::new(
                "protocol_error_job",
                json!({"type": "object", "properties": {}}),
                |_, cx: Context| async move {
                    if !work(&cx, 0.2).await {
                        return Err(cancelled());
                    }
                    Err(ToolError::Protocol(ErrorObject::internal("The job crashed")))
                },
            )
            .description("Fails with a JSON-RPC error (a task when the client allows)")
                    .task_support(TaskSupport::Optional),
        )
        .tool(
            ToolDef::new(
                "confirm_delete",
                json!({"type": "object", "properties": {"filename": {"type": "string"}}}),
                |args, cx: Context| async move {
                    let file = args["filename"].as_str().unwrap_or("the file").to_owned();
                    let schema = json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]});
                    let answer = cx.elicit("confirm", form_with(&format!("Delete {file}?"), &schema)?)?;
                    Ok(CallToolResult::text(if confirmed(&answer) {
                        format!("Deleted {file}")
                    } else {
                        format!("Kept {file}")
                    }))
                },
            )
            .description("Asks for confirmation, then deletes (a task when the client allows)")
                    .task_support(TaskSupport::Optional),
        )
        .tool(
            ToolDef::new("multi_input", json!({"type": "object", "properties": {}}), |_, cx: Context| async move {
                // Both questions are asked at once, so both are outstanding together.
                let name = cx.elicit("name", form("What is your name?", "name", "string")?);
                let schema = json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]});
                let confirm = cx.elicit("confirm", form_with("Proceed?", &schema)?);
                let (name, confirm) = (name?, confirm?);
                Ok(CallToolResult::text(format!(
                    "Hello, {}! Confirmed: {}",
                    field(&name, "name")?,
                    confirmed(&confirm)
                )))
            })
            .description("Asks two questions at once (a task when the client allows)")
                    .task_support(TaskSupport::Optional),
        )
        .tool(
            ToolDef::new("test_tool_with_task", json!({"type": "object", "properties": {}}), |_, cx: Context| async move {
                // The answer first, synchronously; then the work, as a task.
                let answer = cx.elicit("user_name", form("What is your name?", "name", "string")?)?;
                let name = field(&answer, "name")?;
                cx.escalate().await?;
                if !work(&cx, 0.2).await {
                    return Err(cancelled());
                }
                Ok(CallToolResult::text(format!("Hello, {name}! Your task is done.")))
            })
            .description("Asks for a name, then runs as a task (only as a task)")
                    .task_support(TaskSupport::Required)
                    .task_start(TaskStart::OnEscalate),
        )
        .tasks(Tasks::in_memory().poll_interval(Duration::from_millis(200)))
}

fn form_with(message: &str, schema: &Value) -> Result<mcp_types::ElicitRequestParams, ToolError> {
    let params: mcp_types::ElicitRequestFormParams =
        serde_json::from_value(json!({"message": message, "requestedSchema": schema}))?;
    Ok(mcp_types::ElicitRequestParams::ElicitRequestForm(params))
}
