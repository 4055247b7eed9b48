//! The Tasks extension on the client (`io.modelcontextprotocol/tasks`,
//! <https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md>).
//!
//! A client built with [`ClientBuilder::tasks`](crate::ClientBuilder::tasks) declares the
//! extension on every request, so a server may answer `tools/call` with a task handle
//! instead of the result. [`Client::call_tool`] then follows the task to its end and returns
//! the result as if the call had been synchronous: it polls `tasks/get` (starting from the
//! server's `pollIntervalMs`, backing off up to [`TaskOptions::max_poll`]), wakes early on
//! `notifications/tasks` when [`TaskOptions::notifications`] is set, answers the task's
//! input requests with the user's handlers through `tasks/update` (each key once), and sends
//! `tasks/cancel` if the call is dropped before the task ends. A `failed` task is the JSON-RPC
//! error the call would have returned ([`Error::Protocol`]); a `cancelled` one is
//! [`Error::TaskCancelled`].
//!
//! [`Client::call_tool_or_task`] is the lower level: it returns the [`TaskHandle`] for the
//! caller to poll, answer, cancel or persist (a task id can be followed again later with
//! [`Client::task`]). A client that did not declare the extension treats `resultType:
//! "task"` as the error it is ([`Error::UnknownResultType`]).

use std::collections::HashSet;
use std::time::Duration;

use mcp_types::tasks::{
    CreateTaskResult, DetailedTask, GetTaskResult, Task, TaskAck, TaskIdParams, TaskStatus,
    UpdateTaskRequestParams, method as task_method,
};
use mcp_types::{CallToolResult, InputResponses, method};

use crate::client::{CallOptions, Client, Reply};
use crate::error::Error;
use crate::listen::ListenEvent;

/// How a client follows tasks.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TaskOptions {
    /// The shortest wait between two polls, whatever the server suggests (default 50 ms).
    pub min_poll: Duration,
    /// The longest wait between two polls: the backoff grows to it while nothing changes
    /// (default 5 s; never below the server's suggestion).
    pub max_poll: Duration,
    /// Whether to open a `subscriptions/listen` stream for the task while following it,
    /// and act on its `notifications/tasks` at once (default off: polling only).
    pub notifications: bool,
}

impl Default for TaskOptions {
    fn default() -> Self {
        TaskOptions {
            min_poll: Duration::from_millis(50),
            max_poll: Duration::from_secs(5),
            notifications: false,
        }
    }
}

impl TaskOptions {
    /// The defaults.
    pub fn new() -> Self {
        TaskOptions::default()
    }

    /// Sets the bounds of the wait between two polls.
    #[must_use]
    pub fn poll(mut self, min: Duration, max: Duration) -> Self {
        self.min_poll = min;
        self.max_poll = max.max(min);
        self
    }

    /// Listens for `notifications/tasks` while following a task.
    #[must_use]
    pub fn notifications(mut self, on: bool) -> Self {
        self.notifications = on;
        self
    }
}

/// What a `tools/call` produced: the result, or a task that will produce it.
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolCall {
    /// The server answered at once.
    Complete(CallToolResult),
    /// The server runs the call as a task.
    Task(TaskHandle),
}

/// A task the server runs for this client. Cheap to clone; dropping it does nothing (the
/// task goes on: [`cancel`](Self::cancel) stops it), but dropping the future of
/// [`wait`](Self::wait) before the task ends cancels it.
#[derive(Debug, Clone)]
pub struct TaskHandle {
    client: Client,
    task: Task,
}

/// Sends `tasks/cancel` for a task whose follower went away before it ended.
struct CancelOnDrop {
    client: Option<Client>,
    id: String,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(client) = self.client.take() else {
            return;
        };
        let id = std::mem::take(&mut self.id);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(e) = client.cancel_task(&id).await {
                    tracing::debug!(task = %id, error = %e, "cannot cancel an abandoned task");
                }
            });
        }
    }
}

impl TaskHandle {
    /// The task's id (persist it to follow the task again after a restart).
    pub fn id(&self) -> &str {
        &self.task.task_id
    }

    /// The task as the server described it when it created it.
    pub fn task(&self) -> &Task {
        &self.task
    }

    /// `tasks/get`: the task now.
    pub async fn get(&self) -> Result<DetailedTask, Error> {
        self.client.get_task(self.id()).await
    }

    /// `tasks/update`: answers to some of the task's input requests.
    pub async fn update(&self, responses: InputResponses) -> Result<(), Error> {
        self.client.update_task(self.id(), responses).await
    }

    /// `tasks/cancel`: asks the server to stop the task (cooperative: it may still finish).
    pub async fn cancel(&self) -> Result<(), Error> {
        self.client.cancel_task(self.id()).await
    }

    /// Follows the task to its end, answering its input requests with the client's
    /// handlers, and returns its result: what the call would have returned synchronously.
    ///
    /// Cancel safety: dropping the future before the task ends sends `tasks/cancel`.
    pub async fn wait(self) -> Result<CallToolResult, Error> {
        let mut guard = CancelOnDrop {
            client: Some(self.client.clone()),
            id: self.task.task_id.clone(),
        };
        let mut ended = false;
        let outcome = self.follow(&mut ended).await;
        if ended {
            // The task reached a terminal status: nothing to cancel. Otherwise (the
            // connection failed, a handler could not answer the task's question) the task is
            // abandoned, and cancelled rather than left waiting for its TTL.
            guard.client = None;
        }
        outcome
    }

    /// Follows the task; `ended` is set once a terminal status was seen.
    async fn follow(&self, ended: &mut bool) -> Result<CallToolResult, Error> {
        let options = self.client.task_options().cloned().unwrap_or_default();
        let mut subscription = if options.notifications && self.client.can_listen() {
            let filter = serde_json::json!({ "taskIds": [self.id()] });
            self.client.listen_to(filter).await.ok()
        } else {
            None
        };
        let mut answered: HashSet<String> = HashSet::new();
        let suggested = |task: &Task| {
            task.poll_interval_ms
                .map_or(options.min_poll, Duration::from_millis)
                .max(options.min_poll)
        };
        let mut wait = suggested(&self.task);
        let mut last = (self.task.status, self.task.last_updated_at.clone());
        let mut seen = self.get().await?;
        loop {
            *ended = seen.task.status.is_terminal();
            match seen.task.status {
                TaskStatus::Completed => {
                    let result = seen.result.unwrap_or_default();
                    return serde_json::from_value(serde_json::Value::Object(result)).map_err(
                        |source| Error::Decode {
                            method: task_method::TASKS_GET.to_owned(),
                            source,
                        },
                    );
                }
                TaskStatus::Failed => {
                    let error = seen.error.unwrap_or_else(|| {
                        mcp_types::Error::new(-32603, "the task failed without an error")
                    });
                    let mut object = mcp_jsonrpc::ErrorObject::new(
                        mcp_types::ErrorCode(i32::try_from(error.code).unwrap_or(-32603)),
                        error.message,
                    );
                    object.data = error.data;
                    return Err(Error::Protocol(object));
                }
                TaskStatus::Cancelled => {
                    return Err(Error::TaskCancelled {
                        id: self.id().to_owned(),
                    });
                }
                TaskStatus::InputRequired => {
                    let mut answers = InputResponses::new();
                    for (key, request) in seen.input_requests.take().into_iter().flatten() {
                        // Each request is put to the user once, however often it is polled.
                        if answered.insert(key.clone()) {
                            answers.insert(key, self.client.answer(request).await?);
                        }
                    }
                    if !answers.is_empty() {
                        self.update(answers).await?;
                        wait = suggested(&seen.task);
                        seen = self.get().await?;
                        continue;
                    }
                }
                _ => {}
            }
            // A change resets the backoff; otherwise it grows to the bound.
            let now = (seen.task.status, seen.task.last_updated_at.clone());
            if now != last {
                wait = suggested(&seen.task);
                last = now;
            }
            let notified = if let Some(events) = &mut subscription {
                tokio::select! {
                    () = tokio::time::sleep(wait) => None,
                    event = events.next() => match event {
                        Some(ListenEvent::Task(task)) if task.task.task_id == self.id() => Some(*task),
                        Some(_) => None,
                        None => { subscription = None; None }
                    },
                }
            } else {
                tokio::time::sleep(wait).await;
                None
            };
            wait = (wait.mul_f64(1.5)).min(options.max_poll.max(suggested(&seen.task)));
            seen = match notified {
                Some(task) => task,
                None => self.get().await?,
            };
        }
    }
}

impl Client {
    /// `tools/call`, handing over the task if the server runs the call as one (the client
    /// must declare the extension: [`ClientBuilder::tasks`](crate::ClientBuilder::tasks);
    /// otherwise a task is [`Error::UnknownResultType`]). Input rounds before the task is
    /// created are answered as usual.
    pub async fn call_tool_or_task(
        &self,
        name: &str,
        arguments: impl serde::Serialize,
        options: &CallOptions,
    ) -> Result<ToolCall, Error> {
        let arguments = crate::client::arguments_object(&arguments)?;
        let (raw, reply) = self
            .rounds(
                method::TOOLS_CALL,
                crate::client::tool_call_params(name, &arguments),
                options,
                self.task_options().is_some(),
            )
            .await?;
        if reply == Reply::Task {
            let created: CreateTaskResult = Self::decode(method::TOOLS_CALL, &raw)?;
            return Ok(ToolCall::Task(TaskHandle {
                client: self.clone(),
                task: created.task,
            }));
        }
        Self::decode(method::TOOLS_CALL, &raw).map(ToolCall::Complete)
    }

    /// A handle on the task `id` (for example one persisted before a restart). Its
    /// [`task`](TaskHandle::task) is what `tasks/get` returns now.
    pub async fn task(&self, id: &str) -> Result<TaskHandle, Error> {
        let task = self.get_task(id).await?.task;
        Ok(TaskHandle {
            client: self.clone(),
            task,
        })
    }

    /// `tasks/get`.
    pub async fn get_task(&self, id: &str) -> Result<DetailedTask, Error> {
        let result: GetTaskResult = self
            .task_request(task_method::TASKS_GET, |meta| TaskIdParams::new(meta, id))
            .await?;
        Ok(result.task)
    }

    /// `tasks/update`.
    pub async fn update_task(&self, id: &str, responses: InputResponses) -> Result<(), Error> {
        self.task_request::<_, TaskAck>(task_method::TASKS_UPDATE, |meta| {
            UpdateTaskRequestParams::new(meta, id, responses.clone())
        })
        .await
        .map(|_| ())
    }

    /// `tasks/cancel`.
    pub async fn cancel_task(&self, id: &str) -> Result<(), Error> {
        self.task_request::<_, TaskAck>(task_method::TASKS_CANCEL, |meta| {
            TaskIdParams::new(meta, id)
        })
        .await
        .map(|_| ())
    }

    /// Sends the Tasks request `method` with the params `build` makes of the `_meta`, and
    /// decodes its result.
    async fn task_request<P: serde::Serialize, T: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        build: impl Fn(mcp_types::RequestMetaObject) -> P,
    ) -> Result<T, Error> {
        let raw = self.send(method, build, &CallOptions::default()).await?;
        Self::decode(method, &raw)
    }
}
