//! The requests that run user handlers and may answer `input_required`: `tools/call`,
//! `prompts/get`, `resources/read` (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>), and
//! `completion/complete`.

use std::sync::Arc;
use std::task::Poll;

use mcp_jsonrpc::{ErrorObject, Params, Principal, RequestContext};
use mcp_types::{
    CallToolRequestParams, CompleteRequestParams, CompleteResult, GetPromptRequestParams,
    InputRequiredResult, InputResponses, OrderedMap, ReadResourceRequestParams, ReadResourceResult,
    RequestMetaObject, ResultType, method,
};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::{CacheKind, HasMeta, Member, Server, invalid, parse, read};
use crate::context::{Context, missing_capability};
use crate::error::ToolError;
use crate::state::Binding;
use crate::tasks::TaskSupport;

/// The principal that made the request, when its transport authenticated it: its id is
/// what the sealed `requestState` is bound to. A shared handle, since the request context
/// moves into the handler's [`Context`] while the binding is still needed.
pub(super) fn principal_id(rpc: &RequestContext) -> Option<Arc<dyn Principal>> {
    rpc.transport_info()?.principal.clone()
}

/// The core's authorization of a request's target: the principal's verdict
/// ([`Principal::permits`]) on the tool, prompt or resource read from the very params that
/// run, so that nothing a transport's earlier check read differently can reach a handler
/// its principal may not use. Without a principal (stdio, an unauthenticated endpoint)
/// there is nothing to ask.
fn permitted(
    principal: Option<&dyn Principal>,
    method: &str,
    target: &str,
) -> Result<(), ErrorObject> {
    match principal {
        Some(principal) if !principal.permits(method, target) => Err(ErrorObject::new(
            mcp_types::ErrorCode::INVALID_REQUEST,
            format!("forbidden: the caller may not use {target:?} ({method})"),
        )),
        _ => Ok(()),
    }
}

/// What `tools/call` runs once its params are read ([`Server::plan_call`]).
enum CallPlan<'a> {
    /// A task-augmented call, the Tasks extension's to run.
    Task(std::pin::Pin<Box<dyn Future<Output = Result<Box<RawValue>, ErrorObject>> + Send + 'a>>),
    /// A plain call.
    Plain(PlainCall),
}

/// A plain `tools/call`, ready to run.
struct PlainCall {
    tool: Arc<crate::tool::ToolDef>,
    cx: Context,
    name: String,
    arguments: Value,
    principal: Option<Arc<dyn Principal>>,
    /// An MCP App's tool answering a client that does not render apps.
    plain: bool,
}

/// `tools/call`'s params as [`CallToolRequestParams`] reads them, in the same one parse,
/// except that an explicit `"inputResponses": null` is told from an absent member: the
/// schema makes `inputResponses` an object, and serde reads `null` into `None`. (The other
/// methods scan their params for the key first, `check_input_responses`: two substring
/// searches over the whole text, 5 % of a 64 KiB call.) The container is named as the
/// generated type is, so a parse error reads the same.
///
/// `_meta` is `M`: taken as its text (`Option<&RawValue>`, [`WholeParams`]) and read by
/// [`super::request_meta`], which remembers the last one (a client sends the same `_meta`
/// with every call), or only noticed when the members after a remembered `_meta` are read
/// ([`CallRest`]). A missing `_meta` reads as `None`, and is then reported as
/// [`super::meta_only`] reports it.
#[derive(serde::Deserialize)]
#[serde(rename = "CallToolRequestParams")]
struct CallParams<M> {
    #[serde(rename = "_meta", default)]
    meta: M,
    #[serde(default)]
    arguments: Option<mcp_types::JsonObject>,
    #[serde(rename = "inputResponses", default)]
    input_responses: Member<InputResponses>,
    name: String,
    #[serde(rename = "requestState", default)]
    request_state: Option<String>,
}

/// The params read whole, `_meta` as its text.
type WholeParams<'a> = CallParams<Option<&'a RawValue>>;

/// The params after a `_meta` whose text is the one last read ([`remembered_call`]): a
/// second `_meta` among them is a duplicate member, which the whole read refuses.
type CallRest = CallParams<Member<serde::de::IgnoredAny>>;

impl<M> CallParams<M> {
    /// The same members, with `meta` for `_meta`.
    fn with_meta<N>(self, meta: N) -> CallParams<N> {
        CallParams {
            meta,
            arguments: self.arguments,
            input_responses: self.input_responses,
            name: self.name,
            request_state: self.request_state,
        }
    }
}

impl CallParams<()> {
    /// The generated params, for the Tasks extension. (A plain call keeps this shape: built
    /// into the generated type, with its 1 KB `_meta` moved twice, the params cost more than
    /// the scans they replace.)
    fn generated(self, meta: RequestMetaObject) -> CallToolRequestParams {
        let mut params = CallToolRequestParams::new(meta, self.name);
        params.arguments = self.arguments;
        params.input_responses = self.input_responses.into_option();
        params.request_state = self.request_state;
        params
    }
}

/// The longest text of members after a remembered `_meta` that [`remembered_call`] reads:
/// it copies them to read them, and past this a copy costs about what it saves.
const REST_COPIED: usize = 4 << 10;

/// `tools/call`'s params read without reading their `_meta`, when they start with the
/// `_meta` last read on this thread, as a client writes them (`{"_meta":…,` then the other
/// members, without whitespace): a JSON object's text ends where the object ends, so the
/// text that begins with a whole object's text holds that object there, and the rest is
/// read alone. Reading `_meta` only to find its end was 7 % of the stdio server's
/// instructions per small call. `None` when the params
/// are anything else, or do not read this way: they are then read whole, which gives the
/// same result or the same error (a duplicate `_meta` included).
fn remembered_call(raw_params: &str) -> Option<(Arc<RequestMetaObject>, CallParams<()>)> {
    let after = raw_params.strip_prefix(r#"{"_meta":"#)?;
    let (meta, rest) = super::remembered_meta_prefix(after)?;
    let rest = rest.strip_prefix(',')?;
    if rest.len() > REST_COPIED {
        return None;
    }
    let mut object = String::with_capacity(rest.len() + 1);
    object.push('{');
    object.push_str(rest);
    let read: CallRest = serde_json::from_str(&object).ok()?;
    matches!(read.meta, Member::Absent).then_some((meta, read.with_meta(())))
}

impl Server {
    /// Opens the `requestState` of a retry, if any: the handler's own state, and the
    /// answers of earlier rounds, merged with this round's (which win). A client answers
    /// only the questions of the last round, so the server carries the earlier answers in
    /// the sealed state; the handler then sees every answer it was ever given.
    pub(super) fn resume(
        &self,
        binding: &Binding<'_>,
        sealed: Option<&str>,
        fresh: Option<InputResponses>,
    ) -> Result<(Option<Value>, Option<InputResponses>), ErrorObject> {
        let Some(sealed) = sealed else {
            return Ok((None, fresh));
        };
        let carried = self
            .inner
            .state_keys
            .open(binding, sealed)
            .map_err(|e| invalid(e.message()))?;
        let handler_state = carried.get("h").cloned().filter(|v| !v.is_null());
        let mut answers: InputResponses = carried
            .get("a")
            .cloned()
            .and_then(|a| serde_json::from_value(a).ok())
            .unwrap_or_default();
        for (key, answer) in fresh.into_iter().flatten() {
            answers.insert(key, answer);
        }
        Ok((handler_state, (!answers.is_empty()).then_some(answers)))
    }

    /// Turns a handler's outcome into the response: a result, `input_required` with the
    /// questions it asked and a sealed state, or an error.
    pub(super) fn finish<T: Serialize + HasMeta>(
        &self,
        outcome: Result<T, ToolError>,
        cx: &Context,
        binding: &Binding<'_>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        match outcome {
            Ok(result) => self.complete(result),
            Err(ToolError::InputRequired) => {
                let asked = cx.take_asked();
                if let Some(ToolError::Protocol(error)) = missing_capability(&asked) {
                    return Err(error);
                }
                let mut result = InputRequiredResult::new();
                result.result_type = ResultType::InputRequired;
                if !asked.requests.is_empty() {
                    result.input_requests =
                        Some(asked.requests.into_iter().collect::<OrderedMap<_>>());
                }
                // The handler's state (kept from the last round unless it set a new one) and every
                // answer so far travel in the sealed state.
                let handler_state = asked
                    .state
                    .or_else(|| cx.state().cloned())
                    .unwrap_or(Value::Null);
                let answers = cx
                    .responses()
                    .map_or(Value::Null, |r| serde_json::to_value(r).unwrap_or_default());
                let state = serde_json::json!({ "h": handler_state, "a": answers });
                let sealed = self
                    .inner
                    .state_keys
                    .seal(binding, &state, self.inner.state_ttl)
                    .map_err(|error| {
                        tracing::error!(%error, "cannot seal requestState");
                        ErrorObject::internal("cannot seal requestState")
                    })?;
                result.request_state = Some(sealed);
                self.complete(result)
            }
            Err(ToolError::Protocol(error)) => Err(error),
            Err(ToolError::Failed(message)) => Err(ErrorObject::internal(message)),
        }
    }

    /// `tools/call`: the params are parsed once, `_meta` included. When they do not
    /// parse, `_meta` alone is read first, so a missing `_meta` or an unsupported version
    /// is reported as such rather than as some other field's error.
    pub(super) async fn call_tool(
        &self,
        params: &Params,
        rpc: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        // Read and checked by a plain function: the params and their `_meta` (1 KB) then
        // take no room in this future while the tool runs, and the engine copies a
        // request's whole future into its box.
        let raw_params = params.text();
        let plan = match self.plan_call(raw_params, rpc)? {
            CallPlan::Task(task) => return task.await,
            CallPlan::Plain(plan) => plan,
        };
        let (cx, name, principal) = (&plan.cx, &plan.name, &plan.principal);
        let call = plan.tool.call_boxed(plan.arguments, cx.clone());
        let mut outcome = match self.inner.limits.tool_timeout {
            None => call.await,
            Some(limit) => {
                // A call that finishes on its first poll (most do) never arms a timer:
                // the bound costs nothing on the fast path.
                let mut call = std::pin::pin!(call);
                match std::future::poll_fn(|task| Poll::Ready(call.as_mut().poll(task))).await {
                    Poll::Ready(outcome) => outcome,
                    Poll::Pending => tokio::time::timeout(limit, call).await.unwrap_or_else(|_| {
                        tracing::warn!(tool = %name, ?limit, "a tool call ran out of time");
                        Ok(Box::new(mcp_types::CallToolResult::error(format!(
                            "tool {name} did not finish within {} s",
                            limit.as_secs_f64()
                        ))))
                    }),
                }
            }
        };
        if plan.plain {
            outcome = outcome.map(|result| Box::new(crate::apps::plain_result(*result)));
        }
        let reread;
        let arguments = if matches!(outcome, Err(ToolError::InputRequired)) {
            reread = arguments_of(raw_params);
            Some(&reread)
        } else {
            None
        };
        let binding = Binding {
            method: method::TOOLS_CALL,
            name,
            arguments,
            principal: principal.as_deref().map(Principal::id),
        };
        self.finish(outcome, cx, &binding)
    }

    /// The part of `tools/call` before the tool runs: its params read and checked, the
    /// tool found, a resumed call's state unsealed, its [`Context`] made.
    fn plan_call<'a>(
        &'a self,
        raw_params: &str,
        rpc: RequestContext,
    ) -> Result<CallPlan<'a>, ErrorObject> {
        if let Some((meta, rest)) = remembered_call(raw_params) {
            return self.plan_read(meta, rest, rpc);
        }
        match serde_json::from_str::<WholeParams<'_>>(raw_params) {
            Ok(params) => self.plan_parsed(params, raw_params, rpc),
            Err(e) => {
                super::meta_only(raw_params)?;
                Err(invalid(format!("invalid params: {e}")))
            }
        }
    }

    /// [`plan_call`](Self::plan_call) once the params are read.
    fn plan_parsed<'a>(
        &'a self,
        params: WholeParams<'_>,
        raw_params: &str,
        rpc: RequestContext,
    ) -> Result<CallPlan<'a>, ErrorObject> {
        let Some(Ok(meta)) = params.meta.map(super::request_meta) else {
            // The same text read on its own fails the same way, and says where.
            super::meta_only(raw_params)?;
            return Err(invalid("invalid `_meta`"));
        };
        self.plan_read(meta, params.with_meta(()), rpc)
    }

    /// [`plan_parsed`](Self::plan_parsed) once `_meta` is read.
    fn plan_read(
        &self,
        meta: Arc<RequestMetaObject>,
        params: CallParams<()>,
        rpc: RequestContext,
    ) -> Result<CallPlan<'_>, ErrorObject> {
        if matches!(params.input_responses, Member::Null) {
            return Err(invalid("inputResponses must be an object"));
        }
        super::check_version(&meta)?;
        permitted(
            rpc.transport_info().and_then(|info| info.principal()),
            method::TOOLS_CALL,
            &params.name,
        )?;
        let tool = read(&self.inner.registry)
            .tools
            .iter()
            .find(|t| t.tool.name == params.name)
            .cloned()
            .ok_or_else(|| invalid(format!("unknown tool {:?}", params.name)))?;
        // An MCP App's tool: app-only ones do not exist for a client that does not render
        // apps (it never saw them listed), and the others answer it plainly.
        let plain = tool.ui.is_some() && !crate::apps::renders_apps(&meta);
        if plain && tool.app_only() {
            return Err(invalid(format!("unknown tool {:?}", params.name)));
        }
        // Recorded here, before the call runs either way (plainly, or as a task).
        crate::trace::record_tool(&params.name);
        crate::trace::record_version(&meta.protocol_version);
        if tool.task.0 != TaskSupport::Forbidden {
            // Boxed: a task-augmented call's state is 3.5 KB, and every `tools/call`
            // future would otherwise be that large.
            return Ok(CallPlan::Task(Box::pin(self.call_task_tool(
                tool,
                params.generated(Arc::unwrap_or_clone(meta)),
                rpc,
            ))));
        }
        let CallParams {
            meta: (),
            name,
            arguments,
            input_responses,
            request_state,
        } = params;
        let input_responses = input_responses.into_option();
        let arguments = Value::Object(arguments.unwrap_or_default());
        let principal = principal_id(&rpc);
        let binding = Binding {
            method: method::TOOLS_CALL,
            name: &name,
            arguments: Some(&arguments),
            principal: principal.as_deref().map(Principal::id),
        };
        let (state, responses) =
            self.resume(&binding, request_state.as_deref(), input_responses)?;
        let cx = Context::new(rpc, meta, responses, state);
        Ok(CallPlan::Plain(PlainCall {
            tool,
            cx,
            name,
            arguments,
            principal,
            plain,
        }))
    }

    pub(super) async fn get_prompt(
        &self,
        params: &str,
        rpc: RequestContext,
        meta: RequestMetaObject,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let params: GetPromptRequestParams = parse(params)?;
        let principal = principal_id(&rpc);
        crate::trace::record_prompt(&params.name);
        permitted(principal.as_deref(), method::PROMPTS_GET, &params.name)?;
        let prompt = read(&self.inner.registry)
            .prompts
            .iter()
            .find(|p| p.prompt.name == params.name)
            .cloned()
            .ok_or_else(|| invalid(format!("unknown prompt {:?}", params.name)))?;
        let arguments: OrderedMap<String> = params.arguments.clone().unwrap_or_default();
        for argument in prompt.prompt.arguments.iter().flatten() {
            if argument.required == Some(true) && !arguments.contains_key(&argument.name) {
                return Err(invalid(format!(
                    "missing required argument {:?}",
                    argument.name
                )));
            }
        }
        let args_value = serde_json::to_value(&arguments).unwrap_or_default();
        let binding = Binding {
            method: method::PROMPTS_GET,
            name: &params.name,
            arguments: Some(&args_value),
            principal: principal.as_deref().map(Principal::id),
        };
        let (state, responses) = self.resume(
            &binding,
            params.request_state.as_deref(),
            params.input_responses,
        )?;
        let cx = Context::new(rpc, meta, responses, state);
        let outcome = (prompt.get)(arguments, cx.clone()).await;
        self.finish(outcome, &cx, &binding)
    }

    pub(super) async fn read_resource(
        &self,
        params: &str,
        rpc: RequestContext,
        meta: RequestMetaObject,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let params: ReadResourceRequestParams = parse(params)?;
        let principal = principal_id(&rpc);
        crate::trace::record_resource(&params.uri);
        permitted(principal.as_deref(), method::RESOURCES_READ, &params.uri)?;
        let (read_fn, vars) = {
            let registry = read(&self.inner.registry);
            if let Some(resource) = registry
                .resources
                .iter()
                .find(|r| r.resource.uri == params.uri)
            {
                (Arc::clone(&resource.read), OrderedMap::new())
            } else if let Some((template, vars)) = registry
                .templates
                .iter()
                .find_map(|t| t.pattern.matches(&params.uri).map(|v| (t, v)))
            {
                // A resource a template serves is also named by its template, which may
                // carry scopes of its own.
                permitted(
                    principal.as_deref(),
                    method::RESOURCES_READ,
                    &template.template.uri_template,
                )?;
                (Arc::clone(&template.read), vars)
            } else {
                return Err(invalid(format!("unknown resource {:?}", params.uri))
                    .with_data(serde_json::json!({ "uri": params.uri })));
            }
        };
        let binding = Binding {
            method: method::RESOURCES_READ,
            name: &params.uri,
            arguments: None,
            principal: principal.as_deref().map(Principal::id),
        };
        let cache = self.cache_policy(CacheKind::Read, principal.is_some());
        let (state, responses) = self.resume(
            &binding,
            params.request_state.as_deref(),
            params.input_responses,
        )?;
        let cx = Context::new(rpc, meta, responses, state);
        let outcome = read_fn(params.uri.clone(), vars, cx.clone())
            .await
            .map(|contents| {
                let mut result = ReadResourceResult::new(contents);
                result.ttl_ms = Some(cache.ttl_ms);
                result.cache_scope = Some(cache.scope);
                result
            });
        self.finish(outcome, &cx, &binding)
    }

    pub(super) async fn complete_argument(
        &self,
        params: &str,
        cx: Context,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let params: CompleteRequestParams = parse(params)?;
        // Completing a prompt's or a template's arguments uses that prompt or template.
        let (target_method, target) = match &params.r#ref {
            mcp_types::CompleteRequestParamsRef::PromptReference(prompt) => {
                (method::PROMPTS_GET, prompt.name.as_str())
            }
            mcp_types::CompleteRequestParamsRef::ResourceTemplateReference(template) => {
                (method::RESOURCES_READ, template.uri.as_str())
            }
            _ => return Err(invalid("unknown completion reference")),
        };
        permitted(cx.principal(), target_method, target)?;
        let Some(complete) = &self.inner.completion else {
            return Err(ErrorObject::method_not_found(method::COMPLETION_COMPLETE));
        };
        match complete(params, cx).await {
            Ok(mut completion) => {
                completion.values.truncate(100);
                self.complete(CompleteResult::new(completion))
            }
            Err(ToolError::Protocol(error)) => Err(error),
            Err(other) => Err(ErrorObject::internal(other.to_string())),
        }
    }
}

/// The `arguments` of `tools/call` params that parsed before, as the tool received them.
fn arguments_of(params: &str) -> Value {
    #[derive(serde::Deserialize)]
    struct Arguments {
        #[serde(default)]
        arguments: Option<mcp_types::JsonObject>,
    }
    let arguments = serde_json::from_str::<Arguments>(params)
        .ok()
        .and_then(|a| a.arguments);
    Value::Object(arguments.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::{CallParams, Member, REST_COPIED, WholeParams, remembered_call};

    const META: &str = r#"{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#;

    /// What a whole read makes of the params, as the fast read's members, to compare.
    fn whole(text: &str) -> Option<CallParams<()>> {
        serde_json::from_str::<WholeParams<'_>>(text)
            .ok()
            .map(|params| params.with_meta(()))
    }

    fn same(a: &CallParams<()>, b: &CallParams<()>) -> bool {
        let state = |m: &Member<_>| match m {
            Member::Absent => 0,
            Member::Null => 1,
            Member::Given(v) => 2 + serde_json::to_string(v).unwrap().len(),
        };
        a.name == b.name
            && a.arguments == b.arguments
            && a.request_state == b.request_state
            && state(&a.input_responses) == state(&b.input_responses)
    }

    /// The fast read answers only params that start with the remembered `_meta`'s text,
    /// and then reads what a whole read reads; anything else is left to the whole read.
    #[test]
    fn params_after_the_remembered_meta_read_as_the_whole_params_do() {
        let raw = serde_json::value::RawValue::from_string(META.to_owned()).unwrap();
        super::super::request_meta(&raw).unwrap();
        let read = |rest: &str| remembered_call(&format!(r#"{{"_meta":{META}{rest}"#));

        let plain = format!(r#"{{"_meta":{META},"arguments":{{"text":"x"}},"name":"echo"}}"#);
        let (meta, fast) = remembered_call(&plain).expect("the usual layout is read fast");
        assert_eq!(meta.protocol_version, "2026-07-28");
        assert!(same(&fast, &whole(&plain).unwrap()));
        assert_eq!(fast.name, "echo");

        for rest in [
            r#","name":"e","requestState":"s","inputResponses":{"q":{"action":"decline"}}}"#,
            r#","name":"e","inputResponses":null}"#,
            r#","name":"e","unknown":[1,{"_meta":2}]} "#,
        ] {
            let text = format!(r#"{{"_meta":{META}{rest}"#);
            let (_, fast) = read(rest).unwrap_or_else(|| panic!("{rest}"));
            assert!(same(&fast, &whole(&text).unwrap()), "{rest}");
        }
        // Left to the whole read: no other member, a second `_meta` (a duplicate, which
        // the whole read refuses), bad JSON after the `_meta`, a missing name.
        for rest in [
            "}",
            r#","_meta":{},"name":"e"}"#,
            r#","name":"e",}"#,
            r#","name":"e"}x"#,
            r#","arguments":{}}"#,
        ] {
            assert!(read(rest).is_none(), "{rest}");
        }
        // Another `_meta`, or this one written otherwise, is not the remembered one.
        let other =
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"e"}"#;
        assert!(remembered_call(other).is_none());
        let spaced = format!(r#"{{ "_meta":{META},"name":"e"}}"#);
        assert!(remembered_call(&spaced).is_none());
        // A long rest (a large argument) is read whole rather than copied.
        let long = format!(
            r#","arguments":{{"text":"{}"}},"name":"e"}}"#,
            "x".repeat(REST_COPIED)
        );
        assert!(read(&long).is_none());
    }
}
