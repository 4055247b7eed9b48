//! The Tasks extension inside the server (<https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md>):
//! a `tools/call` that becomes a task, the runs of its tool, and `tasks/get`,
//! `tasks/update` and `tasks/cancel`. The settings and the store are in [`crate::tasks`].
//!
//! A task's life is a chain of runs of one tool handler, each with every answer given so
//! far, like the retries of a multi round-trip request: a run that asks for input leaves the
//! task `input_required` with what it asked; the `tasks/update` that answers the last
//! outstanding request marks it `working` again and starts the next run on whichever server
//! took the update. Every change is a compare-and-set on the stored record, so two servers
//! sharing a store never lose each other's changes, and nothing overwrites a terminal
//! status: a `cancelled` task stays cancelled even if its handler finishes afterwards.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use mcp_jsonrpc::{CancellationToken, ErrorObject, NotificationSink, RequestContext};
use mcp_types::tasks::{
    CreateTaskResult, DetailedTask, EXTENSION_ID, GetTaskResult, ROUTED_METHODS, Task, TaskAck,
    TaskStatus, method as task_method,
};
use mcp_types::{OrderedMap, RequestId, RequestMetaObject, method};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::{broadcast, oneshot};

use super::task_outcome::{answer, apply};
use super::{Inner, Server, invalid, missing_extension, parse, to_raw};
use crate::context::{Context, TaskLink};
use crate::error::ToolError;
use crate::extension::Extension;
use crate::state::Binding;
use crate::tasks::{TaskRecord, TaskStart, TaskSupport, Tasks, iso8601, new_id};
use crate::tool::{BoxFuture, ToolDef};

/// How many times a change is retried when another writer got there first.
const CAS_ATTEMPTS: usize = 32;

/// The Tasks extension's state in one server: its settings, the tokens of the runs going on
/// in this process, and a feed of changed task ids for listeners.
pub(crate) struct TaskEngine {
    pub(super) config: Tasks,
    server: OnceLock<Weak<Inner>>,
    running: Mutex<HashMap<String, CancellationToken>>,
    pub(super) changes: broadcast::Sender<String>,
    /// This engine's id as a lease holder: tells the runs of this server from those of the
    /// other servers sharing the store.
    instance: String,
}

impl TaskEngine {
    pub(crate) fn new(config: Tasks) -> Self {
        TaskEngine {
            config,
            server: OnceLock::new(),
            running: Mutex::new(HashMap::new()),
            changes: broadcast::channel(256).0,
            instance: instance_id(),
        }
    }

    /// Ties the engine to the server it serves (the server owns the engine, so the link
    /// back is weak).
    pub(crate) fn attach(&self, inner: &Arc<Inner>) {
        let _ = self.server.set(Arc::downgrade(inner));
    }

    fn server(&self) -> Option<Server> {
        let inner = self.server.get()?.upgrade()?;
        Some(Server { inner })
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn now(&self) -> u64 {
        self.config.clock.now_ms()
    }

    fn ttl_ms(&self) -> u64 {
        u64::try_from(self.config.ttl.as_millis()).unwrap_or(u64::MAX)
    }

    /// Makes this server the holder of `record`'s lease, from now.
    fn hold(&self, record: &mut TaskRecord) {
        let lease = u64::try_from(self.config.lease.as_millis()).unwrap_or(u64::MAX);
        record.lease_holder = Some(self.instance.clone());
        record.lease_until_ms = self.now().saturating_add(lease);
    }

    /// Whether `record`'s run is another server's, whose lease still holds.
    fn held_elsewhere(&self, record: &TaskRecord) -> bool {
        record
            .lease_holder
            .as_deref()
            .is_some_and(|holder| holder != self.instance)
    }

    /// Whether `record` is `working` with no run behind it: its lease lapsed (the server
    /// of its run stopped) and this server is not running it either.
    fn orphaned(&self, record: &TaskRecord) -> bool {
        record.status == TaskStatus::Working
            && record.lease_until_ms != 0
            && record.lease_until_ms <= self.now()
            && !self.running().contains_key(&record.id)
    }
}

/// A lease holder id: 64 random bits, or, should the random source fail, the process id
/// and the time, which still tell the servers of a fleet apart.
fn instance_id() -> String {
    let mut bytes = [0u8; 8];
    match getrandom::fill(&mut bytes) {
        Ok(()) => format!("{:016x}", u64::from_be_bytes(bytes)),
        Err(_) => format!(
            "{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ),
    }
}

impl Extension for TaskEngine {
    fn id(&self) -> &str {
        EXTENSION_ID
    }

    fn methods(&self) -> &[&'static str] {
        &ROUTED_METHODS
    }

    fn handle(
        &self,
        method: &str,
        params: Box<RawValue>,
        cx: Context,
    ) -> BoxFuture<Result<Box<RawValue>, ErrorObject>> {
        let Some(server) = self.server() else {
            return Box::pin(std::future::ready(Err(ErrorObject::internal(
                "the server is gone",
            ))));
        };
        let method = method.to_owned();
        Box::pin(async move { server.task_method(&method, params.get(), &cx).await })
    }
}

/// The params of `tasks/get` and `tasks/cancel`, as this server reads them.
#[derive(serde::Deserialize)]
struct IdParams {
    #[serde(rename = "taskId")]
    task_id: String,
}

/// The params of `tasks/update`: answers are read one by one, so that answers to keys that
/// are not outstanding are ignored whatever their shape.
#[derive(serde::Deserialize)]
struct UpdateParams {
    #[serde(rename = "taskId")]
    task_id: String,
    #[serde(rename = "inputResponses")]
    input_responses: serde_json::Map<String, Value>,
}

/// What a change to a record decided.
pub(super) enum Edit {
    /// Store the edited record.
    Write,
    /// Leave the record as it is.
    Keep,
    /// Only push the expiry back (a running task's keep-alive): no change anyone sees.
    Touch,
}

/// A spawned handler that is aborted if the request awaiting it goes away first.
struct AbortOnDrop(Option<tokio::task::JoinHandle<Result<mcp_types::CallToolResult, ToolError>>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(handle) = &self.0 {
            handle.abort();
        }
    }
}

fn not_found() -> ErrorObject {
    invalid("Failed to retrieve task: Task not found")
}

fn declared(meta: &RequestMetaObject) -> bool {
    meta.client_capabilities
        .extensions
        .as_ref()
        .is_some_and(|e| e.contains_key(EXTENSION_ID))
}

/// A request context for a run with no request: notifications go nowhere (a task sends
/// neither progress nor log messages), cancellation is the task's.
fn detached(id: &str, cancel: CancellationToken) -> RequestContext {
    let (tx, _) = tokio::sync::mpsc::channel(1);
    RequestContext::new(
        RequestId::String(id.to_owned()),
        cancel,
        NotificationSink::channel(tx),
    )
}

impl Server {
    fn engine(&self) -> Result<&Arc<TaskEngine>, ErrorObject> {
        self.inner
            .tasks
            .as_ref()
            .ok_or_else(|| ErrorObject::internal("the Tasks extension is not installed"))
    }

    /// `tools/call` of a tool that may run as a task (`tool.task.0` is not `Forbidden`).
    pub(super) async fn call_task_tool(
        &self,
        tool: Arc<ToolDef>,
        params: mcp_types::CallToolRequestParams,
        rpc: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let mcp_types::CallToolRequestParams {
            meta,
            name,
            arguments,
            input_responses,
            request_state,
            ..
        } = params;
        let arguments = Value::Object(arguments.unwrap_or_default());
        let principal = super::calls::principal_id(&rpc);
        let binding = Binding {
            method: method::TOOLS_CALL,
            name: &name,
            arguments: Some(&arguments),
            principal: principal.as_deref().map(mcp_jsonrpc::Principal::id),
        };
        let engine = self.inner.tasks.clone();
        let as_task = engine.is_some() && declared(&meta);
        if !as_task && tool.task.0 == TaskSupport::Required && engine.is_some() {
            return Err(missing_extension(EXTENSION_ID));
        }
        let (state, responses) =
            self.resume(&binding, request_state.as_deref(), input_responses)?;
        let Some(engine) = engine.filter(|_| as_task) else {
            let cx = Context::new(rpc, meta, responses, state);
            let outcome = tool.call(arguments.clone(), cx.clone()).await;
            return self.finish(outcome, &cx, &binding);
        };
        let deferred = tool.task.1 == TaskStart::OnEscalate;
        let (ask_tx, mut ask_rx) = oneshot::channel();
        let link = TaskLink {
            cancel: CancellationToken::new(),
            id: OnceLock::new(),
            escalate: Mutex::new(deferred.then_some(ask_tx)),
        };
        let request_cancel = rpc.cancellation().clone();
        let cx = Context::with_task(rpc, meta, responses, state, link);
        let owner = (engine.config.owner)(&cx);
        if !deferred {
            let record = Self::new_record(&engine, owner, &name, arguments.clone(), &cx)?;
            self.create(&engine, &record).await?;
            self.start_run(&engine, record.clone(), &tool);
            return self.task_handle_of(&record);
        }
        // The handler runs on its own task, so that it can go on after the request answers
        // with the task handle; until then, dropping the request aborts it.
        let run = {
            let (tool, cx, arguments) = (Arc::clone(&tool), cx.clone(), arguments.clone());
            tokio::spawn(async move { tool.call(arguments, cx).await })
        };
        let mut run = AbortOnDrop(Some(run));
        let (mut asking, mut relayed) = (true, false);
        loop {
            let handle = run.0.as_mut().expect("held until the handler is detached");
            tokio::select! {
                joined = handle => {
                    run.0 = None;
                    let outcome = joined.unwrap_or_else(|_| {
                        Err(ToolError::Protocol(ErrorObject::internal("the tool's run was lost")))
                    });
                    return self.finish(outcome, &cx, &binding);
                }
                asked = &mut ask_rx, if asking => {
                    asking = false;
                    let Ok(reply) = asked else { continue };
                    let record =
                        match Self::new_record(&engine, owner.clone(), &name, arguments.clone(), &cx) {
                            Ok(record) => record,
                            Err(e) => {
                                let _ = reply.send(Err(e));
                                continue;
                            }
                        };
                    if let Err(e) = self.create(&engine, &record).await {
                        let _ = reply.send(Err(e));
                        continue;
                    }
                    let _ = reply.send(Ok(record.id.clone()));
                    let handle = run.0.take().expect("held until now");
                    self.follow_run(&engine, record.id.clone(), cx.clone(), async move {
                        handle.await.unwrap_or_else(|_| {
                            Err(ToolError::Protocol(ErrorObject::internal("the tool's run was lost")))
                        })
                    });
                    return self.task_handle_of(&record);
                }
                () = request_cancel.cancelled(), if !relayed => {
                    relayed = true;
                    cx.cancellation().cancel();
                }
            }
        }
    }

    /// A new record for a run of `tool` with what `cx` holds (the answers and state so far).
    fn new_record(
        engine: &TaskEngine,
        owner: String,
        tool: &str,
        arguments: Value,
        cx: &Context,
    ) -> Result<TaskRecord, ErrorObject> {
        let now = engine.now();
        let id = new_id().map_err(|e| ErrorObject::internal(e.to_string()))?;
        let mut meta = cx.meta().clone();
        // A task sends neither progress nor log messages.
        meta.progress_token = None;
        meta.log_level = None;
        Ok(TaskRecord {
            id,
            owner,
            status: TaskStatus::Working,
            status_message: None,
            created_ms: now,
            updated_ms: now,
            expires_ms: now.saturating_add(engine.ttl_ms()),
            poll_interval_ms: u64::try_from(engine.config.poll_interval.as_millis())
                .unwrap_or(u64::MAX),
            revision: 0,
            tool: tool.to_owned(),
            arguments,
            meta: serde_json::to_value(&meta).unwrap_or_default(),
            state: cx.current_state(),
            answers: cx.responses().cloned().unwrap_or_default(),
            asked: OrderedMap::new(),
            result: None,
            error: None,
            lease_holder: None,
            lease_until_ms: 0,
            resumes: 0,
        })
        .map(|mut record| {
            engine.hold(&mut record);
            record
        })
    }

    async fn create(&self, engine: &TaskEngine, record: &TaskRecord) -> Result<(), ErrorObject> {
        engine.config.store.create(record).await.map_err(|e| {
            tracing::warn!(error = %e, "cannot store a task");
            ErrorObject::internal(format!("cannot create the task: {e}"))
        })?;
        let _ = engine.changes.send(record.id.clone());
        Ok(())
    }

    /// The wire form of a task's common members.
    fn task_of(record: &TaskRecord) -> Task {
        let mut task = Task::new(
            record.id.clone(),
            record.status,
            iso8601(record.created_ms),
            iso8601(record.updated_ms),
            Some(record.expires_ms.saturating_sub(record.created_ms)),
        );
        task.status_message.clone_from(&record.status_message);
        task.poll_interval_ms = Some(record.poll_interval_ms);
        task
    }

    /// The task as `tasks/get` and `notifications/tasks` show it.
    pub(super) fn detailed(record: &TaskRecord) -> DetailedTask {
        let mut task = DetailedTask::new(Self::task_of(record));
        match record.status {
            TaskStatus::InputRequired => task.input_requests = Some(record.asked.clone()),
            TaskStatus::Completed => {
                task.result = record.result.as_ref().and_then(Value::as_object).cloned();
            }
            TaskStatus::Failed => task.error.clone_from(&record.error),
            _ => {}
        }
        task
    }

    fn task_handle_of(&self, record: &TaskRecord) -> Result<Box<RawValue>, ErrorObject> {
        let mut result = CreateTaskResult::new(Self::task_of(record));
        result.meta = Some(self.result_meta());
        to_raw(&result)
    }

    /// The record of `id` if `owner` may see it; otherwise the same error as for an id that
    /// never existed, so that ids cannot be probed.
    pub(super) async fn load(
        &self,
        engine: &TaskEngine,
        id: &str,
        owner: &str,
    ) -> Result<TaskRecord, ErrorObject> {
        let record = engine.config.store.get(id).await.map_err(|e| {
            ErrorObject::internal(format!("Failed to retrieve task: the store failed: {e}"))
        })?;
        match record {
            Some(r) if r.owner == owner && r.expires_ms > engine.now() => Ok(r),
            _ => Err(not_found()),
        }
    }

    /// Applies `edit` to the record of `id` with compare-and-set, retrying when another
    /// writer got there first. Returns the record as it stands afterwards (`None` if gone),
    /// and whether this call changed it.
    async fn modify(
        &self,
        engine: &TaskEngine,
        id: &str,
        mut edit: impl FnMut(&mut TaskRecord) -> Result<Edit, ErrorObject>,
    ) -> Result<(Option<TaskRecord>, bool), ErrorObject> {
        let store = &engine.config.store;
        for _ in 0..CAS_ATTEMPTS {
            let Some(current) = store
                .get(id)
                .await
                .map_err(|e| ErrorObject::internal(e.to_string()))?
            else {
                return Ok((None, false));
            };
            let mut next = current.clone();
            let edit = edit(&mut next)?;
            if let Edit::Keep = edit {
                return Ok((Some(current), false));
            }
            let now = engine.now();
            next.revision = current.revision.wrapping_add(1);
            if let Edit::Write = edit {
                next.updated_ms = now.max(current.updated_ms);
            }
            next.expires_ms = current.expires_ms.max(now.saturating_add(engine.ttl_ms()));
            if store
                .replace(current.revision, &next)
                .await
                .map_err(|e| ErrorObject::internal(e.to_string()))?
            {
                if let Edit::Write = edit {
                    let _ = engine.changes.send(next.id.clone());
                }
                return Ok((Some(next), true));
            }
        }
        Err(ErrorObject::internal(
            "the task kept changing; try again later",
        ))
    }

    /// Starts a run of `record`'s tool in the background, with every answer so far.
    fn start_run(&self, engine: &Arc<TaskEngine>, record: TaskRecord, tool: &Arc<ToolDef>) {
        let meta: RequestMetaObject = match serde_json::from_value(record.meta.clone()) {
            Ok(meta) => meta,
            Err(e) => {
                let error = ErrorObject::internal(format!("the task's request is unreadable: {e}"));
                let server = self.clone();
                tokio::spawn(async move {
                    server
                        .settle(&record.id, Err(ToolError::Protocol(error)), None)
                        .await;
                });
                return;
            }
        };
        let cancel = CancellationToken::new();
        let id = OnceLock::new();
        let _ = id.set(record.id.clone());
        let link = TaskLink {
            cancel: cancel.clone(),
            id,
            escalate: Mutex::new(None),
        };
        let responses = (!record.answers.is_empty()).then(|| record.answers.clone());
        let cx = Context::with_task(
            detached(&record.id, cancel),
            meta,
            responses,
            record.state.clone(),
            link,
        );
        let (tool, run_cx, arguments) = (Arc::clone(tool), cx.clone(), record.arguments.clone());
        self.follow_run(engine, record.id, cx, async move {
            tool.call(arguments, run_cx).await
        });
    }

    /// Watches a run to its end and records its outcome. While it runs, its cancellation
    /// token is reachable by `tasks/cancel` on this server, and, with a shared store, a
    /// cancellation recorded by another server fires it too.
    fn follow_run(
        &self,
        engine: &Arc<TaskEngine>,
        id: String,
        cx: Context,
        run: impl std::future::Future<Output = Result<mcp_types::CallToolResult, ToolError>>
        + Send
        + 'static,
    ) {
        let token = cx.cancellation().clone();
        engine.running().insert(id.clone(), token.clone());
        let server = self.clone();
        let engine = Arc::clone(engine);
        tokio::spawn(async move {
            #[cfg(feature = "metrics")]
            let _running = crate::metrics::Open::new(crate::metrics::TASKS_RUNNING);
            let mut run = std::pin::pin!(run);
            let outcome = {
                // While the run goes on, the task is kept alive; with a shared store, a
                // cancellation recorded by another server is looked for too.
                let watch = server.watch(&engine, &id, &token);
                tokio::select! {
                    outcome = &mut run => outcome,
                    () = watch => run.await,
                }
            };
            server.settle(&id, outcome, Some(&cx)).await;
            engine.running().remove(&id);
        });
    }

    /// Watches a running task: every half TTL pushes its expiry back (so a run longer than
    /// the TTL is not dropped under it, while the task of a server that died still expires),
    /// and with a shared store, renews the run's lease every third of it and every poll
    /// interval looks for a cancellation recorded by another server. Returns once the task
    /// is cancelled, gone, or resumed by another server (its lease lapsed), after firing the
    /// run's token.
    async fn watch(&self, engine: &TaskEngine, id: &str, token: &CancellationToken) {
        let shared = engine.config.store.is_shared();
        let keep_alive = if shared {
            (engine.config.ttl / 2).min(engine.config.lease / 3)
        } else {
            engine.config.ttl / 2
        };
        let look = if shared {
            engine.config.poll_interval.min(keep_alive)
        } else {
            keep_alive
        };
        let mut since_touch = std::time::Duration::ZERO;
        loop {
            tokio::select! {
                () = token.cancelled() => return,
                () = tokio::time::sleep(look) => {}
            }
            since_touch += look;
            let seen = if since_touch >= keep_alive {
                since_touch = std::time::Duration::ZERO;
                self.modify(engine, id, |r| {
                    Ok(if r.status.is_terminal() || engine.held_elsewhere(r) {
                        Edit::Keep
                    } else {
                        engine.hold(r);
                        Edit::Touch
                    })
                })
                .await
                .map(|(record, _)| record)
            } else {
                engine
                    .config
                    .store
                    .get(id)
                    .await
                    .map_err(|e| ErrorObject::internal(e.to_string()))
            };
            match seen {
                Ok(Some(r)) if r.status != TaskStatus::Cancelled && !engine.held_elsewhere(&r) => {}
                Ok(_) => {
                    token.cancel();
                    return;
                }
                Err(e) => tracing::debug!(error = %e.message, "cannot read a task's status"),
            }
        }
    }

    /// Resumes `record` on this server if its run has no server any more (its lease
    /// lapsed): the tool runs again from the last recorded round, as after `tasks/update`;
    /// past [`Tasks::MAX_RESUMES`] the task fails instead. Whichever server's
    /// compare-and-set wins resumes it, once.
    async fn resume_orphan(&self, engine: &Arc<TaskEngine>, record: TaskRecord) -> TaskRecord {
        if !engine.orphaned(&record) {
            return record;
        }
        let result = self
            .modify(engine, &record.id, |r| {
                if !engine.orphaned(r) {
                    return Ok(Edit::Keep);
                }
                if r.resumes >= Tasks::MAX_RESUMES {
                    let error = mcp_types::Error::new(
                        i64::from(mcp_types::ErrorCode::INTERNAL_ERROR.0),
                        "the task's server stopped while running it, too many times",
                    );
                    r.status = TaskStatus::Failed;
                    r.status_message = Some(error.message.clone());
                    r.error = Some(error);
                    r.lease_holder = None;
                } else {
                    r.resumes += 1;
                    engine.hold(r);
                }
                Ok(Edit::Write)
            })
            .await;
        match result {
            Ok((Some(next), true)) => {
                if next.status == TaskStatus::Working {
                    tracing::info!(task = %next.id, resumes = next.resumes, "resuming a task whose server stopped");
                    self.run_again(engine, next.clone()).await;
                }
                next
            }
            Ok((Some(current), false)) => current,
            Ok((None, _)) => record,
            Err(e) => {
                tracing::warn!(task = %record.id, error = %e.message, "cannot resume a task");
                record
            }
        }
    }

    /// Starts the next run of `record`'s tool on this server, or fails the task if the
    /// tool is no longer registered.
    async fn run_again(&self, engine: &Arc<TaskEngine>, record: TaskRecord) {
        let tool = super::read(&self.inner.registry)
            .tools
            .iter()
            .find(|t| t.tool.name == record.tool)
            .cloned();
        if let Some(tool) = tool {
            self.start_run(engine, record, &tool);
        } else {
            let error = invalid(format!("unknown tool {:?}", record.tool));
            self.settle(&record.id, Err(ToolError::Protocol(error)), None)
                .await;
        }
    }

    /// Records how a run ended: its result (`completed`, a tool's `isError` result
    /// included), what it asked for (`input_required`), or its JSON-RPC error (`failed`).
    /// A task already terminal (cancelled meanwhile) keeps its status.
    async fn settle(
        &self,
        id: &str,
        outcome: Result<mcp_types::CallToolResult, ToolError>,
        cx: Option<&Context>,
    ) {
        let Ok(engine) = self.engine() else { return };
        let engine = Arc::clone(engine);
        // The state first: taking what the run asked for takes the state it set too.
        let state = cx.and_then(Context::current_state);
        let asked = cx.map(Context::take_asked).unwrap_or_default();
        let mut outcome = Some(outcome);
        let result = self
            .modify(&engine, id, |record| {
                // A run whose task another server resumed meanwhile records nothing.
                if record.status.is_terminal() || engine.held_elsewhere(record) {
                    return Ok(Edit::Keep);
                }
                record.lease_holder = None;
                record.lease_until_ms = 0;
                let outcome = outcome
                    .take()
                    .unwrap_or_else(|| Err(ToolError::InputRequired));
                apply(record, outcome, &asked, state.clone(), self);
                Ok(Edit::Write)
            })
            .await;
        if let Err(e) = result {
            tracing::warn!(task = %id, error = %e.message, "cannot record a task's outcome");
        }
    }

    /// `tasks/get`, `tasks/update` and `tasks/cancel` (the request declared the extension:
    /// the core checked).
    pub(super) async fn task_method(
        &self,
        method: &str,
        params: &str,
        cx: &Context,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let engine = Arc::clone(self.engine()?);
        let owner = (engine.config.owner)(cx);
        match method {
            task_method::TASKS_GET => {
                let IdParams { task_id } = parse(params)?;
                let record = self.load(&engine, &task_id, &owner).await?;
                let record = self.resume_orphan(&engine, record).await;
                let mut result = GetTaskResult::new(Self::detailed(&record));
                result.meta = Some(self.result_meta());
                to_raw(&result)
            }
            task_method::TASKS_CANCEL => {
                let IdParams { task_id } = parse(params)?;
                self.load(&engine, &task_id, &owner).await?;
                self.modify(&engine, &task_id, |record| {
                    if record.status.is_terminal() {
                        return Ok(Edit::Keep);
                    }
                    record.status = TaskStatus::Cancelled;
                    record.status_message = Some("Cancelled by the client".to_owned());
                    record.asked = OrderedMap::new();
                    Ok(Edit::Write)
                })
                .await?;
                if let Some(token) = engine.running().get(&task_id) {
                    token.cancel();
                }
                self.ack()
            }
            task_method::TASKS_UPDATE => {
                let UpdateParams {
                    task_id,
                    input_responses,
                } = parse(params)?;
                self.load(&engine, &task_id, &owner).await?;
                let (record, changed) = self
                    .modify(&engine, &task_id, |record| {
                        let edit = answer(record, &input_responses)?;
                        if record.status == TaskStatus::Working {
                            engine.hold(record);
                        }
                        Ok(edit)
                    })
                    .await?;
                if let Some(record) = record.filter(|r| changed && r.status == TaskStatus::Working)
                {
                    self.run_again(&engine, record).await;
                }
                self.ack()
            }
            other => Err(ErrorObject::method_not_found(other)),
        }
    }

    fn ack(&self) -> Result<Box<RawValue>, ErrorObject> {
        let mut ack = TaskAck::new();
        ack.meta = Some(self.result_meta());
        to_raw(&ack)
    }
}
