//! Calls through the gateway: tools (with approval, middleware, progress and questions
//! passed on), prompts and resource reads.

use std::sync::Arc;
use std::time::Instant;

use mcp_client::Client;
use mcp_server::{Context, ToolError};
use mcp_types::{
    CallToolResult, ElicitRequestParams, ElicitResultAction, EmbeddedResourceResource, OrderedMap,
};
use serde_json::{Value, json};

use super::publish::Shared;
use super::relay;
use super::upstream::Upstream;
use crate::middleware::{CallInfo, Verdict};

impl Shared {
    /// The upstream's client, or why there is none.
    pub(super) fn client(&self, index: usize) -> Result<(Arc<Upstream>, Client), ToolError> {
        let up = Arc::clone(&self.upstreams[index]);
        let client = up.client().ok_or_else(|| {
            ToolError::failed(format!(
                "the server {} is unavailable ({})",
                up.name,
                up.down_reason().unwrap_or_else(|| "not connected".into())
            ))
        })?;
        Ok((up, client))
    }

    pub(super) async fn get_prompt(
        &self,
        index: usize,
        name: &str,
        arguments: OrderedMap<String>,
    ) -> Result<mcp_types::GetPromptResult, ToolError> {
        let (up, client) = self.client(index)?;
        client
            .get_prompt(name, &arguments)
            .await
            .map_err(|e| ToolError::failed(format!("{}: {e}", up.name)))
    }

    /// Reads `target` on the upstream, its contents under the URI asked for.
    pub(super) async fn read(
        &self,
        index: usize,
        target: &str,
        asked: &str,
    ) -> Result<Vec<EmbeddedResourceResource>, ToolError> {
        let (up, client) = self.client(index)?;
        let result = client
            .read_resource(target)
            .await
            .map_err(|e| ToolError::failed(format!("{}: {e}", up.name)))?;
        let mut contents = result.contents;
        if target != asked {
            for content in &mut contents {
                let uri = match content {
                    EmbeddedResourceResource::TextResourceContents(c) => &mut c.uri,
                    EmbeddedResourceResource::BlobResourceContents(c) => &mut c.uri,
                    _ => continue,
                };
                if let Some(rest) = uri.strip_prefix(target) {
                    *uri = format!("{asked}{rest}");
                }
            }
        }
        Ok(contents)
    }

    /// One `tools/call`, or its next round.
    pub(super) async fn call_tool(
        &self,
        call: CallSpec,
        arguments: Value,
        cx: Context,
    ) -> Result<CallToolResult, ToolError> {
        let run = match relay::resume(&self.lot, &cx)? {
            Some(run) => run,
            None => match self.start(&call, arguments, &cx).await? {
                Ok(run) => run,
                Err(refused) => return Ok(refused),
            },
        };
        relay::drive(&self.lot, &cx, run).await
    }

    /// The first round of a call: approval, the middleware's `before`, and the upstream
    /// call started (`Err` is the result of a call that does not go upstream).
    pub(super) async fn start(
        &self,
        call: &CallSpec,
        arguments: Value,
        cx: &Context,
    ) -> Result<Result<relay::Run, CallToolResult>, ToolError> {
        let started = Instant::now();
        if call.approval && !approved(cx, call)? {
            return Ok(Err(CallToolResult::error(format!(
                "The call of {} was not approved.",
                call.name
            ))));
        }
        let (up, client) = self.client(call.index)?;
        let Value::Object(arguments) = arguments else {
            return Ok(Err(CallToolResult::error(
                "The arguments must be an object.",
            )));
        };
        let info = CallInfo {
            call_id: String::new(),
            name: call.name.clone(),
            server: up.name.clone(),
            tool: call.tool.clone(),
            arguments,
            annotations: call.annotations.clone(),
            requires_approval: call.approval,
        };
        for middleware in &self.middleware {
            if let Verdict::Reject(result) = middleware.before(&info).await {
                return Ok(Err(*result));
            }
        }
        let middleware = self.middleware.clone();
        Ok(Ok(relay::Run::start(
            &up.in_flight,
            move |hooks| async move {
                let progress = hooks.clone();
                let options =
                    mcp_client::CallOptions::default().progress(move |p| progress.progress(p));
                let server = &info.server;
                let result = match client
                    .call_tool_or_task(&info.tool, &info.arguments, &options)
                    .await
                {
                    Ok(mcp_client::ToolCall::Complete(result)) => Ok(result),
                    Ok(mcp_client::ToolCall::Task(task)) => {
                        hooks.task().await;
                        task.wait().await.map_err(|e| format!("{server}: {e}"))
                    }
                    Ok(_) => Err(format!("{server}: an answer of an unknown kind")),
                    Err(e) => Err(format!("{server}: {e}")),
                }
                .map(|mut result| {
                    // The gateway answers: the upstream's identity is not the server's.
                    if let Some(meta) = result.meta.as_mut() {
                        meta.server_info = None;
                    }
                    result
                });
                let shown = match &result {
                    Ok(result) => result.clone(),
                    Err(message) => CallToolResult::error(message.clone()),
                };
                for middleware in &middleware {
                    middleware.after(&info, &shown, started.elapsed()).await;
                }
                result
            },
        )))
    }
}

/// A republished tool: where its calls go.
pub(super) struct CallSpec {
    pub(super) index: usize,
    pub(super) tool: String,
    pub(super) name: String,
    pub(super) annotations: Option<mcp_types::ToolAnnotations>,
    pub(super) approval: bool,
}

/// The approval key of a call's elicitation.
pub(super) const APPROVAL_KEY: &str = "gateway-approval";

/// Whether the downstream user approved the call: asks on the first round (ending it),
/// reads the answer on the retry. A client that cannot be asked cannot approve.
pub(super) fn approved(cx: &Context, call: &CallSpec) -> Result<bool, ToolError> {
    if cx.client_capabilities().elicitation.is_none() {
        return Ok(false);
    }
    let form: mcp_types::ElicitRequestFormParams = serde_json::from_value(json!({
        "message": format!("Allow a call of the tool {}?", call.name),
        "requestedSchema": {
            "type": "object",
            "properties": {"approve": {"type": "boolean", "title": "Approve this call"}},
            "required": ["approve"]
        }
    }))
    .map_err(|e| ToolError::failed(e.to_string()))?;
    let answer = cx.elicit(APPROVAL_KEY, ElicitRequestParams::ElicitRequestForm(form))?;
    Ok(answer.action == ElicitResultAction::Accept
        && answer
            .content
            .as_ref()
            .and_then(|c| c.get("approve"))
            .is_some_and(|v| matches!(v, mcp_types::ElicitResultContentValue::Boolean(true))))
}
