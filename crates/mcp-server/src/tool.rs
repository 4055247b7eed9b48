//! Tools: definitions checked at registration, argument validation, handlers.
//!
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/tools>: names of 1–128 characters from `A-Za-z0-9_.-`,
//! unique; `inputSchema` a JSON Schema object (2020-12 unless it says otherwise) with
//! `"type": "object"` at the root; arguments validated before the handler runs, and every
//! tool failure (invalid arguments included) reported as a result with `isError` so the
//! model can correct itself. `x-mcp-header` annotations follow
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http> (Schema Extension).

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use mcp_types::{CallToolResult, JsonObject, ToolAnnotations, ToolInputSchema, ToolOutputSchema};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::Context;
use crate::error::{Error, ToolError};
use crate::tasks::{TaskStart, TaskSupport};

/// A boxed handler future.
pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
/// A tool's handler. Its result comes boxed: a `CallToolResult` is 344 bytes, and on its
/// way to the frame (the panic guard, the checks, the engine's layers) it was moved about
/// seven times, 4 % of the stdio server's time per small call; boxed where the handler
/// returns it, it moves as a pointer.
type ToolFn =
    Arc<dyn Fn(Value, Context) -> BoxFuture<Result<Box<CallToolResult>, ToolError>> + Send + Sync>;

/// A mirrored argument: `Mcp-Param-{header}` carries the argument at `path`.
pub type ParamHeader = mcp_types::McpParamHeader;

/// A tool: its definition and its handler.
///
/// With the `schema-validation` feature (on by default) a call's arguments are validated
/// against the tool's `inputSchema` before the handler runs, `structuredContent` against
/// its `outputSchema`, and a schema given as JSON ([`new`](Self::new),
/// [`output_schema`](Self::output_schema)) against its meta-schema here. Without it,
/// [`typed`](Self::typed) and [`structured`](Self::structured) tools still refuse arguments
/// that do not deserialize into their type (an `isError` result, as a failed validation
/// gives), but [`new`](Self::new) hands the handler its arguments as they are, output is
/// not checked, and a schema is held only to a root `"type": "object"` and the size and
/// depth limits.
#[derive(Clone)]
pub struct ToolDef {
    pub(crate) tool: mcp_types::Tool,
    pub(crate) handler: ToolFn,
    // Only validation reads it; without the feature it is still built, for the schema's
    // limits check at registration.
    #[cfg_attr(not(feature = "schema-validation"), allow(dead_code))]
    pub(crate) input: Arc<Check>,
    pub(crate) output: Option<Arc<Check>>,
    pub(crate) headers: Vec<ParamHeader>,
    pub(crate) task: (TaskSupport, TaskStart),
    /// The definition as clients see it, serialized at its first listing: a registered
    /// tool never changes, so `tools/list` copies this text instead of cloning and
    /// serializing the definition (its schemas above all) for every request.
    pub(crate) json: std::sync::OnceLock<Box<serde_json::value::RawValue>>,
    /// The MCP Apps link (`_meta.ui`), shown only to clients that render apps
    /// ([`crate::apps`]); `tool` itself never carries it.
    pub(crate) ui: Option<Arc<mcp_types::apps::ToolUi>>,
    /// The definition with its link, serialized at its first listing to such a client.
    pub(crate) json_ui: std::sync::OnceLock<Box<serde_json::value::RawValue>>,
    /// Why the definition is unusable, kept until it is registered ([`ToolDef::check`]),
    /// so that the builder methods can chain. Shared, since a definition is `Clone` and
    /// the error is not.
    pub(crate) defect: Option<Arc<Error>>,
}

mcp_types::debug_fields!(ToolDef { tool });

/// Checks a tool, prompt or resource name: 1 to 128 characters from `A-Za-z0-9_.-`.
pub(crate) fn check_name(name: &str) -> Result<(), Error> {
    let reason = if name.is_empty() {
        "empty"
    } else if name.len() > 128 {
        "longer than 128 characters"
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    {
        "only A-Z, a-z, 0-9, '_', '-' and '.' are allowed"
    } else {
        return Ok(());
    };
    Err(Error::InvalidName {
        name: name.to_owned(),
        reason,
    })
}

/// The largest schema accepted, serialized.
pub const MAX_SCHEMA_BYTES: usize = 1 << 20;
/// The deepest nesting of objects and arrays accepted in a schema.
pub const MAX_SCHEMA_DEPTH: usize = 64;
/// How many backtracking steps one `pattern` may take on one value before it gives up.
#[cfg(feature = "schema-validation")]
const REGEX_BACKTRACK_LIMIT: usize = 100_000;

fn depth(value: &Value) -> usize {
    // Iterative, so a hostile schema cannot overflow the stack here either.
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((value, level)) = stack.pop() {
        deepest = deepest.max(level);
        match value {
            Value::Object(map) => stack.extend(map.values().map(|v| (v, level + 1))),
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, level + 1))),
            _ => {}
        }
    }
    deepest
}

/// Whether `value` serializes to more than `limit` bytes of JSON. The bytes are counted,
/// not kept, and the count stops at the first byte past the limit, so measuring a huge
/// schema costs no more than measuring one at the limit.
fn serialized_over(value: &Value, limit: usize) -> bool {
    struct Counter {
        left: usize,
    }
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.left = self
                .left
                .checked_sub(bytes.len())
                .ok_or_else(|| std::io::Error::other("over the limit"))?;
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    serde_json::to_writer(&mut Counter { left: limit }, value).is_err()
}

/// Refuses a schema over the size or depth limit.
fn check_limits(tool: &str, which: &'static str, schema: &Value) -> Result<(), Error> {
    let refuse = |reason: String| Error::InvalidSchema {
        tool: tool.to_owned(),
        which,
        reason,
    };
    if serialized_over(schema, MAX_SCHEMA_BYTES) {
        return Err(refuse(format!(
            "more than the limit of {MAX_SCHEMA_BYTES} bytes as JSON"
        )));
    }
    if depth(schema) > MAX_SCHEMA_DEPTH {
        return Err(refuse(format!(
            "nested deeper than {MAX_SCHEMA_DEPTH} levels"
        )));
    }
    Ok(())
}

/// Compiles a schema with a bounded cost: its size and depth are capped before the
/// validator sees it, remote `$ref`s are never fetched (no resolver is compiled in), and
/// `pattern` regexes have size and backtracking limits, so a hostile schema cannot make
/// registration or validation slow.
#[cfg(feature = "schema-validation")]
fn compile(
    tool: &str,
    which: &'static str,
    schema: &Value,
) -> Result<jsonschema::Validator, Error> {
    check_limits(tool, which, schema)?;
    let patterns = jsonschema::PatternOptions::fancy_regex()
        .backtrack_limit(REGEX_BACKTRACK_LIMIT)
        .size_limit(1 << 20)
        .dfa_size_limit(1 << 20);
    jsonschema::options()
        .with_pattern_options(patterns)
        .build(schema)
        .map_err(|e| Error::InvalidSchema {
            tool: tool.to_owned(),
            which,
            reason: e.to_string(),
        })
}

/// A schema's validator, compiled when the tool is registered or when it is first needed.
///
/// A raw schema ([`ToolDef::new`], [`ToolDef::output_schema`]) is compiled at
/// registration, so that a bad one is an error there. A schema that `schemars` derived from
/// a Rust type ([`ToolDef::typed`], [`ToolDef::structured`]) is compiled on the tool's
/// first call: it is well formed by construction, and a server's start-up then pays only
/// for what it uses (compiling one is a noticeable part of a cold start). Should such a
/// schema still not compile (a hand-written `JsonSchema` impl, a `#[schemars(regex)]` that
/// is no regex), every call of the tool fails with an internal error (-32603) that says
/// why, and the reason is logged.
///
/// Without the `schema-validation` feature nothing is compiled: a schema is only held to
/// the size and depth limits, and the check validates nothing.
pub(crate) struct Check {
    /// The schema accepts every JSON object ([`accepts_any_object`]): the arguments of a
    /// call, always an object, need no validator.
    pub(crate) any_object: bool,
    #[cfg(feature = "schema-validation")]
    compiled: Compiled,
}

#[cfg(feature = "schema-validation")]
enum Compiled {
    /// Compiled at registration.
    Ready(jsonschema::Validator),
    /// Compiled on first use, from the schema as the tool's definition holds it.
    Deferred(std::sync::OnceLock<Result<jsonschema::Validator, Error>>),
}

/// Whether `schema` is one that every JSON object satisfies: `"type": "object"` with at
/// most an empty `properties`, a `title` and a `description` (a tool without parameters).
/// Such a schema is valid as it stands, so nothing is lost by compiling it only if a value
/// that is no object ever has to be checked.
fn accepts_any_object(schema: &Value) -> bool {
    schema.as_object().is_some_and(|map| {
        map.get("type").is_some_and(|t| t == "object")
            && map.iter().all(|(key, value)| match key.as_str() {
                "type" => true,
                "properties" => value.as_object().is_some_and(serde_json::Map::is_empty),
                "title" | "description" => value.is_string(),
                _ => false,
            })
    })
}

impl Check {
    /// Compiles `schema` now, or on first use when every object satisfies it.
    fn now(tool: &str, which: &'static str, schema: &Value) -> Result<Self, Error> {
        #[cfg(not(feature = "schema-validation"))]
        {
            check_limits(tool, which, schema)?;
            Ok(Check::deferred(schema))
        }
        #[cfg(feature = "schema-validation")]
        if accepts_any_object(schema) {
            check_limits(tool, which, schema)?;
            return Ok(Check {
                any_object: true,
                compiled: Compiled::Deferred(std::sync::OnceLock::new()),
            });
        }
        #[cfg(feature = "schema-validation")]
        Ok(Check {
            any_object: false,
            compiled: Compiled::Ready(compile(tool, which, schema)?),
        })
    }

    /// Compiles `schema` when it is first used.
    fn deferred(schema: &Value) -> Self {
        Check {
            any_object: accepts_any_object(schema),
            #[cfg(feature = "schema-validation")]
            compiled: Compiled::Deferred(std::sync::OnceLock::new()),
        }
    }

    /// The validator, compiling it first if it was deferred (from `schema`: the definition's
    /// own, so that nothing is kept twice); a schema that does not compile is an internal
    /// error (-32603).
    #[cfg(feature = "schema-validation")]
    pub(crate) fn validator(
        &self,
        tool: &str,
        which: &'static str,
        schema: impl FnOnce() -> Result<Value, serde_json::Error>,
    ) -> Result<&jsonschema::Validator, ToolError> {
        let cell = match &self.compiled {
            Compiled::Ready(validator) => return Ok(validator),
            Compiled::Deferred(cell) => cell,
        };
        let compiled = cell.get_or_init(|| {
            let compiled = match schema() {
                Ok(schema) => compile(tool, which, &schema),
                Err(e) => Err(Error::InvalidSchema {
                    tool: tool.to_owned(),
                    which,
                    reason: e.to_string(),
                }),
            };
            if let Err(e) = &compiled {
                tracing::error!(error = %e, "a tool's derived schema does not compile");
            }
            compiled
        });
        compiled
            .as_ref()
            .map_err(|e| ToolError::Protocol(mcp_jsonrpc::ErrorObject::internal(e.to_string())))
    }
}

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        #[cfg(feature = "schema-validation")]
        let compiled = match self.compiled {
            Compiled::Ready(_) => "at registration",
            Compiled::Deferred(_) => "on first use",
        };
        #[cfg(not(feature = "schema-validation"))]
        let compiled = "never (no schema-validation)";
        f.debug_struct("Check")
            .field("any_object", &self.any_object)
            .field("compiled", &compiled)
            .finish()
    }
}

impl ToolDef {
    /// A tool with a raw JSON Schema for its arguments and a handler taking them as JSON.
    /// The schema is compiled here (one without parameters, which every object satisfies,
    /// only if a value that is not an object ever has to be checked); a bad one, or a bad
    /// name, makes the definition unusable, which registering it reports
    /// ([`check`](Self::check)).
    ///
    /// ```
    /// use mcp_server::ToolDef;
    /// use mcp_types::CallToolResult;
    ///
    /// let echo = ToolDef::new(
    ///     "echo",
    ///     serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    ///     |args, _cx| async move { Ok(CallToolResult::text(args["text"].as_str().unwrap_or_default())) },
    /// )
    /// .description("Echoes its text back");
    /// assert!(echo.check().is_ok());
    /// ```
    pub fn new<F, Fut>(name: impl Into<String>, input_schema: Value, handler: F) -> Self
    where
        F: Fn(Value, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, ToolError>> + Send + 'static,
    {
        let handler: ToolFn = Arc::new(move |args, cx| {
            let call = handler(args, cx);
            Box::pin(async move { call.await.map(Box::new) })
        });
        ToolDef::with_schema(name.into(), input_schema, handler, false)
    }

    /// A tool served exactly as `tool` describes it (title, description, annotations,
    /// schemas, `_meta`), for a proxy or gateway that republishes another server's tools:
    /// the arguments go to `handler` unvalidated and the result is not checked against the
    /// `outputSchema`, since the server that runs the tool does both. The name is checked
    /// as for [`new`](Self::new), and so are the `x-mcp-header` annotations, which this
    /// server then verifies against the `Mcp-Param-*` headers of each request.
    ///
    /// ```
    /// use mcp_server::ToolDef;
    /// use mcp_types::{CallToolResult, Tool};
    ///
    /// let upstream = Tool::from_schema("search", serde_json::json!({"type": "object"}).as_object().unwrap().clone())?;
    /// let relayed = ToolDef::from_tool(upstream, |_args, _cx| async { Ok(CallToolResult::text("from upstream")) });
    /// assert_eq!(relayed.check()?.tool().name, "search");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_tool<F, Fut>(tool: mcp_types::Tool, handler: F) -> Self
    where
        F: Fn(Value, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, ToolError>> + Send + 'static,
    {
        let handler: ToolFn = Arc::new(move |args, cx| {
            let call = handler(args, cx);
            Box::pin(async move { call.await.map(Box::new) })
        });
        let headers = match serde_json::to_value(&tool.input_schema) {
            Ok(Value::Object(schema)) => param_headers(&schema),
            _ => Err("the input schema is not a JSON object".to_owned()),
        };
        let defect = match (check_name(&tool.name), headers.as_ref()) {
            (Err(e), _) => Some(e),
            (Ok(()), Err(reason)) => Some(Error::InvalidHeaderAnnotation {
                tool: tool.name.clone(),
                reason: reason.clone(),
            }),
            (Ok(()), Ok(_)) => None,
        };
        ToolDef {
            tool,
            handler,
            // Every object passes: the upstream validates.
            input: Arc::new(Check::deferred(&serde_json::json!({"type": "object"}))),
            output: None,
            headers: headers.unwrap_or_default(),
            task: (TaskSupport::Forbidden, TaskStart::Immediately),
            json: std::sync::OnceLock::new(),
            ui: None,
            json_ui: std::sync::OnceLock::new(),
            defect: defect.map(Arc::new),
        }
    }

    /// The definition as it stands: `Err` with the first error of its construction
    /// (an invalid name, an unusable schema or `x-mcp-header` annotation), if any.
    /// [`ServerBuilder::tool`](crate::ServerBuilder::tool) and
    /// [`Server::add_tool`](crate::Server::add_tool) call it; call it yourself to see the
    /// error sooner.
    ///
    /// ```
    /// use mcp_server::{Error, ToolDef};
    ///
    /// let bad = ToolDef::new("no spaces allowed", serde_json::json!({"type": "object"}), |_, _| async {
    ///     Ok(mcp_types::CallToolResult::text("unreachable"))
    /// })
    /// .description("still chains");
    /// assert!(matches!(bad.check(), Err(Error::InvalidName { .. })));
    /// ```
    pub fn check(self) -> Result<Self, Error> {
        match self.defect {
            None => Ok(self),
            Some(defect) => Err(crate::error::unshared(defect)),
        }
    }

    /// A tool from its parts; `derived` defers compiling the schema to the first call
    /// ([`Check`]).
    fn with_schema(name: String, input_schema: Value, handler: ToolFn, derived: bool) -> Self {
        match ToolDef::try_with_schema(name.clone(), input_schema, handler, derived) {
            Ok(tool) => tool,
            Err(defect) => ToolDef::defective(name, defect),
        }
    }

    /// A definition that only carries `defect` (with the name it was given, for the
    /// setters to work on): registering it fails with that error.
    fn defective(name: String, defect: Error) -> Self {
        let handler: ToolFn = Arc::new(|_, _| {
            Box::pin(async { Err(ToolError::failed("this tool's definition is invalid")) })
        });
        let schema = serde_json::json!({"type": "object"});
        ToolDef {
            tool: mcp_types::Tool::new(ToolInputSchema::new(), name),
            handler,
            input: Arc::new(Check::deferred(&schema)),
            output: None,
            headers: Vec::new(),
            task: (TaskSupport::Forbidden, TaskStart::Immediately),
            json: std::sync::OnceLock::new(),
            ui: None,
            json_ui: std::sync::OnceLock::new(),
            defect: Some(Arc::new(defect)),
        }
    }

    fn try_with_schema(
        name: String,
        input_schema: Value,
        handler: ToolFn,
        derived: bool,
    ) -> Result<Self, Error> {
        check_name(&name)?;
        if input_schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(Error::InvalidSchema {
                tool: name,
                which: "inputSchema",
                reason: "the root must have \"type\": \"object\"".to_owned(),
            });
        }
        let input = if derived {
            Check::deferred(&input_schema)
        } else {
            Check::now(&name, "inputSchema", &input_schema)?
        };
        let Value::Object(schema_object) = input_schema else {
            unreachable!("checked to be an object above")
        };
        let headers =
            param_headers(&schema_object).map_err(|reason| Error::InvalidHeaderAnnotation {
                tool: name.clone(),
                reason,
            })?;
        let input_schema: ToolInputSchema = serde_json::from_value(Value::Object(schema_object))
            .map_err(|e| Error::InvalidSchema {
                tool: name.clone(),
                which: "inputSchema",
                reason: e.to_string(),
            })?;
        Ok(ToolDef {
            tool: mcp_types::Tool::new(input_schema, name),
            handler,
            input: Arc::new(input),
            output: None,
            headers,
            task: (TaskSupport::Forbidden, TaskStart::Immediately),
            json: std::sync::OnceLock::new(),
            ui: None,
            json_ui: std::sync::OnceLock::new(),
            defect: None,
        })
    }

    /// A tool whose arguments are a Rust type: its JSON Schema (2020-12) comes from
    /// `schemars`, and the handler receives the arguments already deserialized.
    ///
    /// The schema's validator is compiled at the tool's first call rather than here: a
    /// schema derived from a type is well formed, and a server's start-up then pays only
    /// for the tools it is asked to run. Should it not compile (a hand-written
    /// `JsonSchema` impl), each call fails with an internal error (-32603) that says why.
    ///
    /// ```
    /// use mcp_server::ToolDef;
    /// use mcp_types::CallToolResult;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Shout { text: String }
    ///
    /// let shout = ToolDef::typed("shout", |args: Shout, _cx| async move {
    ///     Ok(CallToolResult::text(args.text.to_uppercase()))
    /// })
    /// .description("Repeats its text, louder");
    /// # assert!(shout.check().is_ok());
    /// ```
    pub fn typed<A, F, Fut>(name: impl Into<String>, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, ToolError>> + Send + 'static,
    {
        let name: String = name.into();
        // Worded as a failed validation is, since without `schema-validation` this is the
        // only check the arguments get.
        let refusal: Arc<str> = format!("Invalid arguments for tool {name}").into();
        let handler = Arc::new(handler);
        let handler: ToolFn = Arc::new(move |args, cx| {
            let handler = Arc::clone(&handler);
            let refusal = Arc::clone(&refusal);
            Box::pin(async move {
                let args: A = serde_json::from_value(args)
                    .map_err(|e| ToolError::failed(format!("{refusal}: {e}")))?;
                handler(args, cx).await.map(Box::new)
            })
        });
        ToolDef::with_schema(name, schema_of::<A>(), handler, true)
    }

    /// A tool with typed arguments and a typed, structured result: the result's JSON
    /// Schema becomes `outputSchema`, the value becomes `structuredContent`, and its JSON
    /// text goes in `content` for clients that read only that.
    ///
    /// ```
    /// use mcp_server::ToolDef;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Add { a: i64, b: i64 }
    /// #[derive(serde::Serialize, schemars::JsonSchema)]
    /// struct Sum { sum: i64 }
    ///
    /// let add = ToolDef::structured("add", |args: Add, _cx| async move { Ok(Sum { sum: args.a + args.b }) });
    /// # assert!(add.check().is_ok());
    /// ```
    pub fn structured<A, O, F, Fut>(name: impl Into<String>, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + JsonSchema + 'static,
        F: Fn(A, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        let tool = ToolDef::typed(name, move |args: A, cx| {
            let handler = Arc::clone(&handler);
            async move {
                let output = handler(args, cx).await?;
                let value = serde_json::to_value(output)?;
                Ok(CallToolResult::structured(value))
            }
        });
        tool.with_output_schema(schema_of::<O>(), true)
    }

    /// A tool with typed arguments whose handler returns anything that
    /// [`IntoToolResult`](crate::IntoToolResult): text, a [`CallToolResult`], a
    /// [`Json`](crate::Json) value (whose type's schema becomes `outputSchema`), or a
    /// `Result` of one. The `#[tool]` macro builds its tools with it.
    ///
    /// ```
    /// use mcp_server::{Json, ToolDef, ToolError};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Div { a: f64, b: f64 }
    /// #[derive(serde::Serialize, schemars::JsonSchema)]
    /// struct Quotient { quotient: f64 }
    ///
    /// let div = ToolDef::returning("div", |args: Div, _cx| async move {
    ///     if args.b == 0.0 {
    ///         return Err(ToolError::failed("division by zero"));
    ///     }
    ///     Ok(Json(Quotient { quotient: args.a / args.b }))
    /// });
    /// assert!(div.tool().output_schema.is_some());
    /// ```
    pub fn returning<A, R, F, Fut>(name: impl Into<String>, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: crate::IntoToolResult + 'static,
        F: Fn(A, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
    {
        let handler = Arc::new(handler);
        let tool = ToolDef::typed(name, move |args: A, cx| {
            let handler = Arc::clone(&handler);
            async move { handler(args, cx).await.into_tool_result() }
        });
        match R::output_schema() {
            Some(schema) => tool.with_output_schema(schema, true),
            None => tool,
        }
    }

    text_setters!(tool {
        /// Sets the description the model reads.
        description,
        /// Sets the display title.
        title,
    });

    icons_setter!(tool);

    /// Sets the behaviour hints (read-only, destructive, idempotent, open world).
    #[must_use]
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.tool.annotations = Some(annotations);
        self
    }

    /// Lets the tool run as a task (Tasks extension; needs
    /// [`ServerBuilder::tasks`](crate::ServerBuilder::tasks), without which it runs on the
    /// request, or -32021 for [`TaskSupport::Required`]).
    #[must_use]
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.task.0 = support;
        self
    }

    /// When a task-capable tool becomes a task (default: before its handler runs).
    #[must_use]
    pub fn task_start(mut self, start: TaskStart) -> Self {
        self.task.1 = start;
        self
    }

    /// Sets `_meta` on the tool definition. An MCP Apps link belongs in
    /// [`ui`](Self::ui), which shows it only to clients that render apps.
    #[must_use]
    pub fn meta(mut self, meta: JsonObject) -> Self {
        self.tool.meta = Some(meta);
        self.json = std::sync::OnceLock::new();
        self.json_ui = std::sync::OnceLock::new();
        self
    }

    /// Declares an `outputSchema`; `structuredContent` is checked against it. The schema
    /// is compiled here; a bad one makes the definition unusable
    /// ([`check`](Self::check)).
    #[must_use]
    pub fn output_schema(self, schema: Value) -> Self {
        self.with_output_schema(schema, false)
    }

    /// Sets the `outputSchema`; `derived` defers compiling it to the first call
    /// ([`Check`]). An error is kept as the definition's defect, the first one winning.
    fn with_output_schema(mut self, schema: Value, derived: bool) -> Self {
        if self.defect.is_some() {
            return self;
        }
        if let Err(defect) = self.try_output_schema(schema, derived) {
            self.defect = Some(Arc::new(defect));
        }
        self
    }

    fn try_output_schema(&mut self, schema: Value, derived: bool) -> Result<(), Error> {
        let check = if derived {
            Check::deferred(&schema)
        } else {
            Check::now(&self.tool.name, "outputSchema", &schema)?
        };
        self.output = Some(Arc::new(check));
        let Value::Object(object) = schema else {
            return Err(Error::InvalidSchema {
                tool: self.tool.name.clone(),
                which: "outputSchema",
                reason: "must be a JSON object".to_owned(),
            });
        };
        self.tool.output_schema = Some(
            serde_json::from_value::<ToolOutputSchema>(Value::Object(object)).map_err(|e| {
                Error::InvalidSchema {
                    tool: self.tool.name.clone(),
                    which: "outputSchema",
                    reason: e.to_string(),
                }
            })?,
        );
        Ok(())
    }

    /// The definition clients see.
    pub fn tool(&self) -> &mcp_types::Tool {
        &self.tool
    }

    /// The definition as JSON text, serialized once; with its MCP Apps link (`_meta.ui`)
    /// when `apps` (a client that renders apps asked) and the tool has one.
    pub(crate) fn json(
        &self,
        apps: bool,
    ) -> Result<&serde_json::value::RawValue, serde_json::Error> {
        let (cell, ui) = match &self.ui {
            Some(ui) if apps => (&self.json_ui, Some(ui)),
            _ => (&self.json, None),
        };
        if let Some(json) = cell.get() {
            return Ok(json);
        }
        let json = match ui {
            Some(ui) => mcp_json::to_raw_value(&crate::apps::linked_tool(&self.tool, ui))?,
            None => mcp_json::to_raw_value(&self.tool)?,
        };
        Ok(cell.get_or_init(|| json))
    }

    /// The arguments mirrored into `Mcp-Param-*` headers.
    pub fn param_headers(&self) -> &[ParamHeader] {
        &self.headers
    }

    /// Validates `arguments` and runs the handler, catching panics; every failure becomes
    /// an `isError` result except protocol outcomes (input required, -32602, -32021).
    pub(crate) async fn call(
        &self,
        arguments: Value,
        cx: Context,
    ) -> Result<CallToolResult, ToolError> {
        self.call_boxed(arguments, cx).await.map(|result| *result)
    }

    /// [`call`](Self::call) with the result as the handler boxed it (see [`ToolFn`]).
    pub(crate) async fn call_boxed(
        &self,
        arguments: Value,
        cx: Context,
    ) -> Result<Box<CallToolResult>, ToolError> {
        // `is_valid` first: it stops at the first failure and tracks no error paths (no
        // allocation), so a valid call, the common case, pays for no more.
        // Arguments are an object: a schema that accepts any object needs no validator.
        #[cfg(feature = "schema-validation")]
        let trivially_valid = self.input.any_object && arguments.is_object();
        #[cfg(feature = "schema-validation")]
        if !trivially_valid
            && let input = self.input.validator(&self.tool.name, "inputSchema", || {
                serde_json::to_value(&self.tool.input_schema)
            })?
            && !input.is_valid(&arguments)
        {
            let problems: Vec<String> = input
                .iter_errors(&arguments)
                .take(10)
                .map(|e| {
                    let path = e.instance_path().to_string();
                    if path.is_empty() {
                        e.to_string()
                    } else {
                        format!("{path}: {e}")
                    }
                })
                .collect();
            return Ok(Box::new(CallToolResult::error(format!(
                "Invalid arguments for tool {}: {}",
                self.tool.name,
                problems.join("; ")
            ))));
        }
        let outcome = CatchUnwind {
            inner: (self.handler)(arguments, cx),
        }
        .await;
        let result = match outcome {
            Ok(Ok(result)) => result,
            Ok(Err(ToolError::Failed(message))) => {
                return Ok(Box::new(CallToolResult::error(message)));
            }
            Ok(Err(other)) => return Err(other),
            Err(()) => {
                tracing::error!(tool = %self.tool.name, "tool handler panicked");
                return Ok(Box::new(CallToolResult::error(format!(
                    "tool {} failed unexpectedly",
                    self.tool.name
                ))));
            }
        };
        #[cfg(feature = "schema-validation")]
        if let (Some(check), Some(structured)) = (&self.output, &result.structured_content)
            && result.is_error != Some(true)
            && let validator = check.validator(&self.tool.name, "outputSchema", || {
                serde_json::to_value(&self.tool.output_schema)
            })?
            && !validator.is_valid(structured)
            && let Some(error) = validator.iter_errors(structured).next()
        {
            return Err(ToolError::Protocol(mcp_jsonrpc::ErrorObject::internal(
                format!(
                    "tool {} produced structuredContent that does not match its outputSchema: {error}",
                    self.tool.name
                ),
            )));
        }
        Ok(result)
    }
}

pub(crate) fn schema_of<T: JsonSchema>() -> Value {
    schemars::schema_for!(T).to_value()
}

pin_project_lite::pin_project! {
    /// Resolves to `Err(())` if polling the inner future panics.
    struct CatchUnwind<F> {
        #[pin]
        inner: F,
    }
}

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, ()>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let inner = self.project().inner;
        // The handler's state is dropped with this future after a panic, never observed
        // again, so the broken invariants it may hold cannot leak.
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(_) => Poll::Ready(Err(())),
        }
    }
}

/// Finds and checks the `x-mcp-header` annotations of an input schema (the rules live in
/// `mcp-types`, shared with the client, which must drop the same tools).
fn param_headers(schema: &JsonObject) -> Result<Vec<ParamHeader>, String> {
    mcp_types::mcp_param_headers(schema)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{
        MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, ToolDef, accepts_any_object, check_name, depth,
        param_headers,
    };

    #[test]
    fn names() {
        for ok in ["a", "get_weather", "v1.search-items", &"x".repeat(128)] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "has space", "slash/", "ünïcode", &"x".repeat(129)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    #[cfg(feature = "schema-validation")]
    fn schemas_are_checked_at_registration() {
        let ok = |_: serde_json::Value, _| async { Ok(mcp_types::CallToolResult::text("")) };
        assert!(
            ToolDef::new("t", json!({"type": "object"}), ok)
                .check()
                .is_ok()
        );
        assert!(
            ToolDef::new("t", json!({"type": "string"}), ok)
                .check()
                .is_err(),
            "the root must be an object"
        );
        assert!(
            ToolDef::new(
                "t",
                json!({"type": "object", "properties": {"a": {"type": 5}}}),
                ok
            )
            .check()
            .is_err()
        );
        assert!(
            ToolDef::new("t", json!({"type": "object", "minProperties": "x"}), ok)
                .check()
                .is_err()
        );
    }

    #[test]
    fn schemas_at_the_size_and_depth_limits_are_accepted_and_one_more_is_not() {
        let ok = |_: serde_json::Value, _| async { Ok(mcp_types::CallToolResult::text("")) };
        // Depth: an object is one level, each member's value one more. `{"type": "string"}`
        // is 2 levels, each `{"type": "object", "properties": {"a": …}}` around it adds 2,
        // and an `enum` array adds 1.
        let nested = |mut schema: serde_json::Value| {
            for _ in 0..31 {
                schema = json!({"type": "object", "properties": {"a": schema}});
            }
            schema
        };
        let at = nested(json!({"type": "string"}));
        assert_eq!(depth(&at), MAX_SCHEMA_DEPTH);
        assert!(
            ToolDef::new("at", at, ok).check().is_ok(),
            "{MAX_SCHEMA_DEPTH} levels"
        );
        let past = nested(json!({"type": "string", "enum": ["x"]}));
        assert_eq!(depth(&past), MAX_SCHEMA_DEPTH + 1);
        assert!(
            ToolDef::new("past", past, ok).check().is_err(),
            "one level more"
        );

        // Size: the serialized schema, exactly the limit, then one byte more.
        let sized = |bytes: usize| {
            let base = serde_json::to_vec(&json!({"type": "object", "description": ""}))
                .unwrap()
                .len();
            let schema = json!({"type": "object", "description": "x".repeat(bytes - base)});
            assert_eq!(serde_json::to_vec(&schema).unwrap().len(), bytes);
            schema
        };
        assert!(
            ToolDef::new("at", sized(MAX_SCHEMA_BYTES), ok)
                .check()
                .is_ok()
        );
        assert!(
            ToolDef::new("past", sized(MAX_SCHEMA_BYTES + 1), ok)
                .check()
                .is_err()
        );
        // The count is exact at any limit (`{"a":"bc"}` is ten bytes).
        let ten = json!({"a": "bc"});
        assert!(!super::serialized_over(&ten, 10));
        assert!(super::serialized_over(&ten, 9));
        assert!(super::serialized_over(&ten, 0));
    }

    #[test]
    #[cfg(feature = "schema-validation")]
    fn hostile_schemas_have_a_bounded_cost() {
        let ok = |_: serde_json::Value, _| async { Ok(mcp_types::CallToolResult::text("")) };
        let mut deep = json!({"type": "string"});
        for _ in 0..200 {
            deep = json!({"type": "object", "properties": {"a": deep}});
        }
        assert!(
            ToolDef::new("deep", deep, ok).check().is_err(),
            "nesting is capped"
        );
        let big: serde_json::Map<String, serde_json::Value> = (0..40_000)
            .map(|i| (format!("property_{i}"), json!({"type": "string"})))
            .collect();
        assert!(
            ToolDef::new("big", json!({"type": "object", "properties": big}), ok)
                .check()
                .is_err(),
            "size is capped"
        );
        assert!(
            ToolDef::new("remote", json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}), ok).check().is_err(),
            "remote references are never fetched"
        );

        // Catastrophic backtracking is cut off: this returns (with a verdict either way)
        // instead of running for hours.
        let tool = ToolDef::new(
            "regex",
            json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a|aa)+(?=b)c$"}}}),
            ok,
        );
        let hostile = json!({"s": format!("{}!", "a".repeat(64))});
        let _ = tool
            .input
            .validator("regex", "inputSchema", || unreachable!())
            .unwrap()
            .is_valid(&hostile);
    }

    #[test]
    fn schemas_that_accept_any_object() {
        for yes in [
            json!({"type": "object"}),
            json!({"type": "object", "properties": {}}),
            json!({"title": "None", "description": "no parameters", "type": "object", "properties": {}}),
        ] {
            assert!(accepts_any_object(&yes), "{yes}");
        }
        for no in [
            json!({"type": "object", "additionalProperties": false}),
            json!({"type": "object", "properties": {"a": {"type": "string"}}}),
            json!({"type": "object", "required": ["a"]}),
            json!({"type": "object", "properties": {}, "minProperties": 1}),
            json!({"type": "object", "$schema": "http://json-schema.org/draft-07/schema#"}),
            json!({"type": "object", "title": 5}),
            json!({"type": "array"}),
            json!({"properties": {}}),
            json!(true),
        ] {
            assert!(!accepts_any_object(&no), "{no}");
        }
    }

    #[test]
    fn x_mcp_header_rules() {
        let schema = |v: serde_json::Value| v.as_object().unwrap().clone();
        let ok = param_headers(&schema(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "nested": {"type": "object", "properties": {"id": {"type": "integer", "x-mcp-header": "Item-Id"}}}
        }})))
        .unwrap();
        assert_eq!(ok.len(), 2);
        assert_eq!(ok[1].path, ["nested", "id"]);

        let bad = [
            json!({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "has space"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "Bad\r\nX"}}}),
            json!({"properties": {"a": {"type": "number", "x-mcp-header": "Num"}}}),
            json!({"properties": {"a": {"type": "object", "x-mcp-header": "Obj"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "Dup"}, "b": {"type": "string", "x-mcp-header": "dup"}}}),
            json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}}}}),
            json!({"anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": 5}}}),
        ];
        for case in bad {
            assert!(param_headers(&schema(case.clone())).is_err(), "{case}");
        }
    }
}
