//! What a handler sees of its request: metadata, cancellation, progress and log emitters,
//! and the MRTR input it asked for.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use mcp_jsonrpc::{CancellationToken, ErrorObject, RequestContext};
use mcp_types::{
    ClientCapabilities, ClientCapabilitiesElicitation, CreateMessageRequest,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequest, ElicitRequestParams,
    ElicitResult, InputRequest, InputResponse, InputResponses, ListRootsRequest, ListRootsResult,
    LoggingLevel, LoggingMessageNotificationParams, RequestMetaObject,
};
use serde_json::Value;

use crate::error::{InputRequired, ToolError};

/// The context a tool, prompt or resource handler runs with.
#[derive(Debug, Clone)]
pub struct Context {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    rpc: RequestContext,
    /// Shared: a client sends the same `_meta` with every request, and the server keeps
    /// the last one read (`server::request_meta`).
    meta: Arc<RequestMetaObject>,
    responses: Option<InputResponses>,
    state: Option<Value>,
    asked: Mutex<Asked>,
    task: Option<TaskLink>,
}

/// The reply to an escalation: the task's id, or why it could not be created.
pub(crate) type Escalated = tokio::sync::oneshot::Sender<Result<String, ErrorObject>>;

/// What ties a handler's run to the Tasks extension (absent on ordinary requests).
#[derive(Debug)]
pub(crate) struct TaskLink {
    /// The run's cancellation: a task outlives its request, so not the request's token.
    pub(crate) cancel: CancellationToken,
    /// The task's id, once the run is a task.
    pub(crate) id: OnceLock<String>,
    /// Asks the request to become a task (`TaskStart::OnEscalate`, until it did).
    pub(crate) escalate: Mutex<Option<tokio::sync::oneshot::Sender<Escalated>>>,
}

/// What the handler asked for during this run.
#[derive(Debug, Default)]
pub(crate) struct Asked {
    pub(crate) requests: Vec<(String, InputRequest)>,
    pub(crate) state: Option<Value>,
    /// Boxed: the capabilities are 720 bytes, and every call's context would carry and
    /// copy them while almost none asks for a capability the client lacks.
    pub(crate) missing: Option<Box<ClientCapabilities>>,
}

fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        _ => 7,
    }
}

impl Context {
    pub(crate) fn new(
        rpc: RequestContext,
        meta: impl Into<Arc<RequestMetaObject>>,
        responses: Option<InputResponses>,
        state: Option<Value>,
    ) -> Self {
        Context::build(rpc, meta, responses, state, None)
    }

    /// A context for a run tied to the Tasks extension.
    pub(crate) fn with_task(
        rpc: RequestContext,
        meta: impl Into<Arc<RequestMetaObject>>,
        responses: Option<InputResponses>,
        state: Option<Value>,
        task: TaskLink,
    ) -> Self {
        Context::build(rpc, meta, responses, state, Some(task))
    }

    #[inline]
    fn build(
        rpc: RequestContext,
        meta: impl Into<Arc<RequestMetaObject>>,
        responses: Option<InputResponses>,
        state: Option<Value>,
        task: Option<TaskLink>,
    ) -> Self {
        Context {
            inner: Arc::new(Inner {
                rpc,
                meta: meta.into(),
                responses,
                state,
                asked: Mutex::new(Asked::default()),
                task,
            }),
        }
    }

    /// The id of the task this run belongs to, if it runs as one (Tasks extension).
    pub fn task_id(&self) -> Option<&str> {
        self.inner.task.as_ref()?.id.get().map(String::as_str)
    }

    /// Turns the call into a task now, for a tool registered with
    /// [`TaskStart::OnEscalate`](crate::tasks::TaskStart::OnEscalate): the client gets the
    /// task handle, and the handler goes on running in the background. Call it once the
    /// answers that decide the work are in (the spec asks servers to finish synchronous
    /// input rounds before creating a task).
    ///
    /// Does nothing when the run is already a task, or cannot become one (the client did
    /// not declare the extension): the handler then simply goes on. Fails with -32603 if the
    /// task could not be stored.
    pub async fn escalate(&self) -> Result<(), ToolError> {
        let Some(link) = &self.inner.task else {
            return Ok(());
        };
        let ask = link
            .escalate
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let Some(ask) = ask else {
            return Ok(());
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        if ask.send(tx).is_err() {
            return Ok(());
        }
        match rx.await {
            Ok(Ok(id)) => {
                let _ = link.id.set(id);
                Ok(())
            }
            Ok(Err(error)) => Err(ToolError::Protocol(error)),
            Err(_) => Err(ToolError::Protocol(ErrorObject::internal(
                "the request ended before the task was created",
            ))),
        }
    }

    /// The state to carry on: what the handler set during this run, else what it came with.
    pub(crate) fn current_state(&self) -> Option<Value> {
        self.asked()
            .state
            .clone()
            .or_else(|| self.inner.state.clone())
    }

    /// The request's `_meta`: protocol version, client capabilities and info, log level,
    /// progress token, and any other keys.
    pub fn meta(&self) -> &RequestMetaObject {
        &self.inner.meta
    }

    /// The capabilities the client declared on this request (and only this request).
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.inner.meta.client_capabilities
    }

    /// The settings the client declared for extension `id` on this request, if it declared
    /// it (extensions are negotiated per request).
    pub fn extension(&self, id: &str) -> Option<&mcp_types::JsonObject> {
        self.client_capabilities()
            .extensions
            .as_ref()?
            .get(id)
            .and_then(serde_json::Value::as_object)
    }

    /// Whether the client renders MCP Apps: it declared `io.modelcontextprotocol/ui` with
    /// `mimeTypes` naming `text/html;profile=mcp-app` ([`crate::apps`]). A linked tool's
    /// handler may shape its result for such a client; the core already keeps the result
    /// plain for any other.
    pub fn renders_apps(&self) -> bool {
        crate::apps::renders_apps(&self.inner.meta)
    }

    /// What the transport knows about the request: for HTTP, its headers (without the
    /// credentials when the server authenticates requests) and the principal. `None` over
    /// stdio.
    pub fn transport(&self) -> Option<&mcp_jsonrpc::TransportInfo> {
        self.inner.rpc.transport_info()
    }

    /// Who made the request, when the transport authenticated it (an HTTP server with an
    /// authenticator); `None` otherwise. With the `auth` feature's resource server it is an
    /// `auth::TokenPrincipal` (see `token_principal`); any authenticator's own type comes
    /// back with `downcast_ref`.
    pub fn principal(&self) -> Option<&dyn mcp_jsonrpc::Principal> {
        self.inner.rpc.transport_info()?.principal()
    }

    /// The verified access token's principal (subject, client, scopes, claims), when the
    /// `auth` feature's [`ResourceServer`](crate::auth::ResourceServer) authenticated the
    /// request.
    #[cfg(feature = "auth")]
    pub fn token_principal(&self) -> Option<&crate::auth::TokenPrincipal> {
        self.principal()?.downcast_ref()
    }

    /// Fired when the client cancels the request or the server shuts down; in a task, when
    /// the client cancels the task (`tasks/cancel`).
    pub fn cancellation(&self) -> &CancellationToken {
        match &self.inner.task {
            Some(link) => &link.cancel,
            None => self.inner.rpc.cancellation(),
        }
    }

    /// Reports progress, if the request carried a `progressToken`; otherwise does nothing
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/progress>).
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(token) = &self.inner.meta.progress_token {
            let _ = self
                .inner
                .rpc
                .progress(token.clone(), progress, total, message.map(str::to_owned))
                .await;
        }
    }

    /// Sends a log message, if the request asked for logs at `level` or more severe
    /// (`_meta["io.modelcontextprotocol/logLevel"]`); otherwise does nothing
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/logging>).
    pub async fn log(&self, level: LoggingLevel, data: Value) {
        let Some(wanted) = self.inner.meta.log_level else {
            return;
        };
        if severity(level) < severity(wanted) {
            return;
        }
        let params = LoggingMessageNotificationParams::new(data, level);
        let _ = self
            .inner
            .rpc
            .notify(
                <mcp_types::LoggingMessageNotification as mcp_types::Notification>::METHOD,
                Some(&params),
            )
            .await;
    }

    /// The state carried from the previous round of this request (verified), if any.
    pub fn state(&self) -> Option<&Value> {
        self.inner.state.as_ref()
    }

    /// Sets the state to carry into the next round, sealed in `requestState`.
    pub fn set_state(&self, state: Value) {
        self.asked().state = Some(state);
    }

    fn asked(&self) -> std::sync::MutexGuard<'_, Asked> {
        self.inner
            .asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn take_asked(&self) -> Asked {
        std::mem::take(&mut *self.asked())
    }

    /// Every answer this run can see (this round's and the earlier rounds' carried in the
    /// sealed state).
    pub(crate) fn responses(&self) -> Option<&InputResponses> {
        self.inner.responses.as_ref()
    }

    fn response(&self, key: &str) -> Option<&InputResponse> {
        self.inner.responses.as_ref()?.get(key)
    }

    fn ask(
        &self,
        key: &str,
        request: InputRequest,
        needs: Option<ClientCapabilities>,
    ) -> InputRequired {
        let mut asked = self.asked();
        if let Some(needs) = needs {
            asked.missing = Some(Box::new(needs));
        } else if !asked.requests.iter().any(|(k, _)| k == key) {
            asked.requests.push((key.to_owned(), request));
        }
        InputRequired
    }

    /// Asks the user, through the client, to fill a form or visit a URL (elicitation).
    ///
    /// On the first run this records the question and returns `Err(InputRequired)`:
    /// propagate it with `?` and the server answers `input_required`. On the retry the
    /// client's answer is here and this returns it. `key` names the question within the
    /// request. If the client did not declare the elicitation mode, the request fails with
    /// -32021 instead.
    ///
    /// ```no_run
    /// # async fn handler(cx: mcp_server::Context) -> Result<mcp_types::CallToolResult, mcp_server::ToolError> {
    /// use mcp_types::{ElicitRequestParams, ElicitRequestFormParams};
    /// let form: ElicitRequestFormParams = serde_json::from_value(serde_json::json!({
    ///     "message": "Your name?",
    ///     "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
    /// }))?;
    /// let answer = cx.elicit("name", ElicitRequestParams::ElicitRequestForm(form))?;
    /// Ok(mcp_types::CallToolResult::text(format!("{:?}", answer.action)))
    /// # }
    /// ```
    pub fn elicit(
        &self,
        key: &str,
        params: ElicitRequestParams,
    ) -> Result<ElicitResult, InputRequired> {
        if let Some(InputResponse::Elicit(answer)) = self.response(key) {
            return Ok(answer.clone());
        }
        let url = matches!(params, ElicitRequestParams::ElicitRequestURL(_));
        let declared = self
            .client_capabilities()
            .elicitation
            .as_ref()
            .is_some_and(|e| {
                if url {
                    e.url.is_some()
                } else {
                    // `{}` means form support (https://modelcontextprotocol.io/specification/2026-07-28/client/elicitation).
                    e.form.is_some() || e.url.is_none()
                }
            });
        let needs = (!declared).then(|| {
            let mut elicitation = ClientCapabilitiesElicitation::new();
            if url {
                elicitation.url = Some(mcp_types::JsonObject::new());
            } else {
                elicitation.form = Some(mcp_types::JsonObject::new());
            }
            let mut caps = ClientCapabilities::new();
            caps.elicitation = Some(elicitation);
            caps
        });
        Err(self.ask(key, InputRequest::Elicit(ElicitRequest::new(params)), needs))
    }

    /// Asks the client's model for a completion (sampling; deprecated in 2026-07-28 but
    /// still served). Works like [`elicit`](Self::elicit).
    pub fn sample(
        &self,
        key: &str,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, InputRequired> {
        if let Some(InputResponse::CreateMessage(answer)) = self.response(key) {
            return Ok(answer.clone());
        }
        let needs = self.client_capabilities().sampling.is_none().then(|| {
            let mut caps = ClientCapabilities::new();
            caps.sampling = Some(mcp_types::ClientCapabilitiesSampling::new());
            caps
        });
        Err(self.ask(
            key,
            InputRequest::CreateMessage(CreateMessageRequest::new(params)),
            needs,
        ))
    }

    /// Asks the client for its roots (deprecated in 2026-07-28 but still served). Works
    /// like [`elicit`](Self::elicit).
    pub fn roots(&self, key: &str) -> Result<ListRootsResult, InputRequired> {
        if let Some(InputResponse::ListRoots(answer)) = self.response(key) {
            return Ok(answer.clone());
        }
        let needs = self.client_capabilities().roots.is_none().then(|| {
            let mut caps = ClientCapabilities::new();
            caps.roots = Some(mcp_types::JsonObject::new());
            caps
        });
        Err(self.ask(key, InputRequest::ListRoots(ListRootsRequest::new()), needs))
    }
}

/// Turns what a handler asked for into the protocol outcome.
pub(crate) fn missing_capability(asked: &Asked) -> Option<ToolError> {
    asked.missing.as_deref().map(ToolError::missing_capability)
}

#[cfg(test)]
mod tests {
    /// Every call allocates a context and zeroes and copies it into its `Arc`: it stays
    /// small because the rarely set parts are boxed (the missing capabilities alone are
    /// over 700 bytes).
    #[test]
    fn a_context_stays_small() {
        assert!(size_of::<mcp_types::ClientCapabilities>() > 512);
        assert!(
            size_of::<super::Inner>() <= 384,
            "{} bytes",
            size_of::<super::Inner>()
        );
    }
}
