//! The Tasks extension's messages (`io.modelcontextprotocol/tasks`, SEP-2663), written by hand
//! from <https://github.com/modelcontextprotocol/ext-tasks/blob/main/schema/draft/schema.ts> (the extension's schema is not one of the five
//! revisions `cargo xtask codegen` reads).
//!
//! A server that negotiated the extension may answer `tools/call` with a [`CreateTaskResult`]
//! (`resultType: "task"`) instead of a `CallToolResult`; the client then polls `tasks/get`
//! ([`GetTaskResult`], a [`DetailedTask`]), answers the task's input requests with
//! `tasks/update` and may stop it with `tasks/cancel`. `notifications/tasks` carries the same
//! [`DetailedTask`] on a `subscriptions/listen` stream whose filter named the task
//! (`taskIds`).
//!
//! Like the generated types these are passive data: every struct is `#[non_exhaustive]`
//! with a `new` constructor, optional members are skipped when `None`, and unknown members
//! are ignored on reading. `ttlMs` is required but nullable, so it is written as `null`
//! rather than skipped; like the generated results' `ttlMs`, a missing one is read leniently
//! (as unlimited).
//!
//! ```
//! use mcp_types::tasks::{CreateTaskResult, Task, TaskStatus};
//!
//! let wire = r#"{"resultType":"task","taskId":"t1","status":"working",
//!     "createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z",
//!     "ttlMs":60000,"pollIntervalMs":5000}"#;
//! let created: CreateTaskResult = serde_json::from_str(wire)?;
//! assert_eq!(created.task.task_id, "t1");
//! assert_eq!(created.task.status, TaskStatus::Working);
//! assert!(!created.task.status.is_terminal());
//! # Ok::<(), serde_json::Error>(())
//! ```

use serde::{Deserialize, Serialize};

use crate::tag::{TasksCancelMethod, TasksGetMethod, string_tag};
use crate::{
    Error, InputRequests, InputResponses, JsonObject, RequestId, RequestMetaObject,
    ResultMetaObject, ResultType, tag::JsonRpcVersion,
};

/// The extension's identifier, the key under `capabilities.extensions`.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/tasks";

/// The `resultType` of a [`CreateTaskResult`].
pub const RESULT_TYPE_TASK: &str = "task";

/// The extension's method names.
pub mod method {
    /// `tasks/get`
    pub const TASKS_GET: &str = "tasks/get";
    /// `tasks/update`
    pub const TASKS_UPDATE: &str = "tasks/update";
    /// `tasks/cancel`
    pub const TASKS_CANCEL: &str = "tasks/cancel";
    /// `notifications/tasks`
    pub const NOTIFICATIONS_TASKS: &str = "notifications/tasks";
}

string_tag!(TasksUpdateMethod, "tasks/update");
string_tag!(NotificationsTasksMethod, "notifications/tasks");

/// The body member a task method's `Mcp-Name` header mirrors on Streamable HTTP
/// (the extension's "Routing Headers").
pub const NAME_FIELD: &str = "taskId";

/// The methods whose `Mcp-Name` header carries `params.taskId`.
pub const ROUTED_METHODS: [&str; 3] = [
    method::TASKS_GET,
    method::TASKS_UPDATE,
    method::TASKS_CANCEL,
];

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskStatus {
    /// The request is being processed.
    Working,
    /// The task waits for the client's answers to its `inputRequests`.
    InputRequired,
    /// The request finished; `result` holds what it would have returned (a tool's
    /// `isError` result included).
    Completed,
    /// The request failed with a JSON-RPC error, in `error`.
    Failed,
    /// The task was cancelled.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task will never change again (`completed`, `failed`, `cancelled`).
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }

    /// The value as it appears on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

/// A task's metadata, common to every shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Task {
    /// The task identifier.
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// The current status.
    pub status: TaskStatus,
    /// A human-readable message about the current state.
    #[serde(
        rename = "statusMessage",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub status_message: Option<String>,
    /// ISO 8601 time of creation.
    #[serde(rename = "createdAt")]
    pub created_at: String,
    /// ISO 8601 time of the last change.
    #[serde(rename = "lastUpdatedAt")]
    pub last_updated_at: String,
    /// How long from creation the server keeps the task, in milliseconds; `None` (`null`
    /// on the wire) for unlimited. It may change over the task's life.
    #[serde(rename = "ttlMs")]
    pub ttl_ms: Option<u64>,
    /// The suggested polling interval in milliseconds.
    #[serde(
        rename = "pollIntervalMs",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub poll_interval_ms: Option<u64>,
}

impl Task {
    /// A task from its required members.
    pub fn new(
        task_id: impl Into<String>,
        status: TaskStatus,
        created_at: impl Into<String>,
        last_updated_at: impl Into<String>,
        ttl_ms: Option<u64>,
    ) -> Self {
        Task {
            task_id: task_id.into(),
            status,
            status_message: None,
            created_at: created_at.into(),
            last_updated_at: last_updated_at.into(),
            ttl_ms,
            poll_interval_ms: None,
        }
    }
}

/// A task with the members of its status inlined: `inputRequests` when `input_required`,
/// `result` when `completed`, `error` when `failed` (the schema's `DetailedTask` union,
/// flattened; [`DetailedTask::new`] and the setters keep the members consistent with the
/// status).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DetailedTask {
    /// The common metadata.
    #[serde(flatten)]
    pub task: Task,
    /// The outstanding requests to the client (status `input_required`).
    #[serde(
        rename = "inputRequests",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub input_requests: Option<InputRequests>,
    /// The final result (status `completed`): what the original request would have returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<JsonObject>,
    /// The JSON-RPC error the request failed with (status `failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Error>,
}

impl DetailedTask {
    /// A detailed task with no status-specific member.
    pub fn new(task: Task) -> Self {
        DetailedTask {
            task,
            input_requests: None,
            result: None,
            error: None,
        }
    }
}

/// The answer to a request the server chose to run as a task (`resultType: "task"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CreateTaskResult {
    /// Metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
    /// Always `"task"`.
    #[serde(rename = "resultType")]
    pub result_type: ResultType,
    /// The task's seed state.
    #[serde(flatten)]
    pub task: Task,
}

impl CreateTaskResult {
    /// A handle for `task`.
    pub fn new(task: Task) -> Self {
        CreateTaskResult {
            meta: None,
            result_type: ResultType::Other(RESULT_TYPE_TASK.to_owned()),
            task,
        }
    }
}

/// The answer to `tasks/get`: the task as it is now (`resultType: "complete"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GetTaskResult {
    /// Metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
    /// Always `"complete"`.
    #[serde(rename = "resultType", default)]
    pub result_type: ResultType,
    /// The task.
    #[serde(flatten)]
    pub task: DetailedTask,
}

impl GetTaskResult {
    /// The result for `task`.
    pub fn new(task: DetailedTask) -> Self {
        GetTaskResult {
            meta: None,
            result_type: ResultType::Complete,
            task,
        }
    }
}

/// The empty acknowledgement of `tasks/update` and `tasks/cancel` (`resultType: "complete"`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskAck {
    /// Metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
    /// Always `"complete"`.
    #[serde(rename = "resultType", default)]
    pub result_type: ResultType,
}

impl TaskAck {
    /// An acknowledgement.
    pub fn new() -> Self {
        TaskAck::default()
    }
}

/// The params of `tasks/get` and `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskIdParams {
    /// Metadata (`_meta`).
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// The task.
    #[serde(rename = "taskId")]
    pub task_id: String,
}

impl TaskIdParams {
    /// Params naming `task_id`.
    pub fn new(meta: RequestMetaObject, task_id: impl Into<String>) -> Self {
        TaskIdParams {
            meta,
            task_id: task_id.into(),
        }
    }
}

/// The params of `tasks/update`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UpdateTaskRequestParams {
    /// Metadata (`_meta`).
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// The task.
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// Answers to outstanding `inputRequests`, by key.
    #[serde(rename = "inputResponses")]
    pub input_responses: InputResponses,
}

impl UpdateTaskRequestParams {
    /// Params answering some of `task_id`'s input requests.
    pub fn new(
        meta: RequestMetaObject,
        task_id: impl Into<String>,
        input_responses: InputResponses,
    ) -> Self {
        UpdateTaskRequestParams {
            meta,
            task_id: task_id.into(),
            input_responses,
        }
    }
}

/// A request type of an extension: its struct, `new` and [`Request`](crate::Request) impl.
macro_rules! request {
    ($(#[$doc:meta])* $name:ident, $tag:ty, $params:ty, $result:ty, $method:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[non_exhaustive]
        pub struct $name {
            /// The `id` member.
            pub id: RequestId,
            /// The constant `jsonrpc` member.
            pub jsonrpc: JsonRpcVersion,
            /// The constant `method` member.
            pub method: $tag,
            /// The `params` member.
            pub params: $params,
        }

        impl $name {
            /// A request with `id`.
            pub fn new(id: RequestId, params: $params) -> Self {
                $name { id, jsonrpc: JsonRpcVersion, method: <$tag>::default(), params }
            }
        }

        impl crate::Request for $name {
            const METHOD: &'static str = $method;
            type Params = $params;
            type Result = $result;
        }
    };
}

pub(crate) use request;

request!(
    /// `tasks/get`: the task's current state.
    GetTaskRequest,
    TasksGetMethod,
    TaskIdParams,
    GetTaskResult,
    method::TASKS_GET
);
request!(
    /// `tasks/update`: answers to the task's input requests.
    UpdateTaskRequest,
    TasksUpdateMethod,
    UpdateTaskRequestParams,
    TaskAck,
    method::TASKS_UPDATE
);
request!(
    /// `tasks/cancel`: asks the server to stop the task (cooperative).
    CancelTaskRequest,
    TasksCancelMethod,
    TaskIdParams,
    TaskAck,
    method::TASKS_CANCEL
);

/// The params of `notifications/tasks`: the task as `tasks/get` would return it now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskStatusNotificationParams {
    /// Metadata (`_meta`), such as the subscription id of the `subscriptions/listen` stream.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The task.
    #[serde(flatten)]
    pub task: DetailedTask,
}

impl TaskStatusNotificationParams {
    /// A notification of `task`'s state.
    pub fn new(task: DetailedTask) -> Self {
        TaskStatusNotificationParams { meta: None, task }
    }
}

/// `notifications/tasks`: a task's status changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskStatusNotification {
    /// The constant `jsonrpc` member.
    pub jsonrpc: JsonRpcVersion,
    /// The constant `method` member.
    pub method: NotificationsTasksMethod,
    /// The `params` member.
    pub params: TaskStatusNotificationParams,
}

impl TaskStatusNotification {
    /// The notification.
    pub fn new(params: TaskStatusNotificationParams) -> Self {
        TaskStatusNotification {
            jsonrpc: JsonRpcVersion,
            method: NotificationsTasksMethod,
            params,
        }
    }
}

impl crate::Notification for TaskStatusNotification {
    const METHOD: &'static str = method::NOTIFICATIONS_TASKS;
    type Params = TaskStatusNotificationParams;
}

/// The extension's member of a `subscriptions/listen` filter and of its acknowledgement:
/// the tasks whose status notifications are wanted (or agreed to).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskSubscription {
    /// The task ids.
    #[serde(rename = "taskIds", default, skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
}

impl TaskSubscription {
    /// A filter naming `task_ids`.
    pub fn new(task_ids: Vec<String>) -> Self {
        TaskSubscription {
            task_ids: Some(task_ids),
        }
    }
}
