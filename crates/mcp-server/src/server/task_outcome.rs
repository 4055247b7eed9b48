//! How a task's record changes: a `tasks/update`'s answers taken, and a run's outcome
//! written (<https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md>, Task Status and Error Handling).
//! Pure edits of a [`TaskRecord`]; `tasks.rs` applies them with compare-and-set.

use mcp_jsonrpc::ErrorObject;
use mcp_types::tasks::TaskStatus;
use mcp_types::{InputResponse, OrderedMap};
use serde_json::Value;

use super::tasks::Edit;
use super::{Server, invalid};
use crate::context::{Asked, missing_capability};
use crate::error::ToolError;
use crate::tasks::TaskRecord;

/// A `tasks/update` on `record`: answers to outstanding requests are taken (and checked),
/// the rest ignored; once nothing is outstanding the task is `working` again.
pub(super) fn answer(
    record: &mut TaskRecord,
    responses: &serde_json::Map<String, Value>,
) -> Result<Edit, ErrorObject> {
    if record.status != TaskStatus::InputRequired {
        return Ok(Edit::Keep);
    }
    let mut taken = false;
    for (key, value) in responses {
        if record.asked.get(key).is_none() {
            continue;
        }
        let response: InputResponse = serde_json::from_value(value.clone())
            .map_err(|e| invalid(format!("invalid input response {key:?}: {e}")))?;
        record.asked.remove(key);
        record.answers.insert(key.clone(), response);
        taken = true;
    }
    if !taken {
        return Ok(Edit::Keep);
    }
    if record.asked.is_empty() {
        record.status = TaskStatus::Working;
        record.status_message = None;
    }
    Ok(Edit::Write)
}

/// Writes a run's outcome into its (non-terminal) record.
pub(super) fn apply(
    record: &mut TaskRecord,
    outcome: Result<mcp_types::CallToolResult, ToolError>,
    asked: &Asked,
    state: Option<Value>,
    server: &Server,
) {
    let fail = |record: &mut TaskRecord, error: ErrorObject| {
        record.status = TaskStatus::Failed;
        record.status_message = Some(error.message.clone());
        record.asked = OrderedMap::new();
        let mut wire = mcp_types::Error::new(i64::from(error.code.0), error.message.clone());
        wire.data.clone_from(&error.data);
        record.error = Some(wire);
    };
    match outcome {
        Ok(mut result) => {
            result.meta = Some(server.result_meta());
            record.status = TaskStatus::Completed;
            record.status_message = None;
            record.asked = OrderedMap::new();
            record.result = Some(serde_json::to_value(&result).unwrap_or_default());
        }
        Err(ToolError::InputRequired) => {
            if let Some(ToolError::Protocol(error)) = missing_capability(asked) {
                return fail(record, error);
            }
            let fresh: Vec<_> = asked
                .requests
                .iter()
                .filter(|(key, _)| record.answers.get(key).is_none())
                .cloned()
                .collect();
            if fresh.is_empty() {
                return fail(
                    record,
                    ErrorObject::internal("the tool asked for input but named no new request"),
                );
            }
            record.status = TaskStatus::InputRequired;
            record.status_message = Some("Waiting for input".to_owned());
            record.asked = fresh.into_iter().collect();
            if state.is_some() {
                record.state = state;
            }
        }
        Err(ToolError::Protocol(error)) => fail(record, error),
        Err(ToolError::Failed(message)) => {
            let mut result = mcp_types::CallToolResult::error(message);
            result.meta = Some(server.result_meta());
            record.status = TaskStatus::Completed;
            record.asked = OrderedMap::new();
            record.result = Some(serde_json::to_value(&result).unwrap_or_default());
        }
    }
}
