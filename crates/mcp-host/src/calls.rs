//! Tool calls from each vendor's shape, and `CallToolResult`s back into each vendor's
//! shape (<https://modelcontextprotocol.io/specification/2026-07-28/server/tools>, Tool Result).

use mcp_types::{CallToolResult, ContentBlock, EmbeddedResourceResource, JsonObject};
use serde_json::{Value, json};

use crate::{Error, Vendor};

/// A call the model made: its id, the model-visible name, and its arguments, or why they
/// could not be read (which becomes an error result for the model, not a failure).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCall {
    /// The vendor's call id, which the result must quote.
    pub id: String,
    /// The name the model called (a catalog name, or anything the model made up).
    pub name: String,
    /// The arguments object, or a message saying why it is unusable.
    pub arguments: Result<JsonObject, String>,
}

fn field<'a>(value: &'a Value, key: &str, what: &str) -> Result<&'a str, Error> {
    value
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| Error::MalformedCall(format!("{what} without a string `{key}`")))
}

/// Arguments sent as a JSON string (OpenAI): malformed JSON or a non-object is a message
/// for the model. An empty string means no arguments.
fn parse_arguments(text: &str) -> Result<JsonObject, String> {
    if text.trim().is_empty() {
        return Ok(JsonObject::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value) => object_arguments(value),
        Err(e) => Err(format!("the arguments are not valid JSON ({e})")),
    }
}

fn object_arguments(value: Value) -> Result<JsonObject, String> {
    match value {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(JsonObject::new()),
        _ => Err("the arguments must be a JSON object".to_owned()),
    }
}

impl ToolCall {
    /// A call with well-formed arguments.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: JsonObject) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: Ok(arguments),
        }
    }

    /// One entry of an OpenAI Chat Completions `tool_calls` array:
    /// `{id, type: "function", function: {name, arguments: "<JSON string>"}}`.
    ///
    /// ```
    /// use mcp_host::ToolCall;
    /// let call = ToolCall::from_openai(&serde_json::json!({
    ///     "id": "call_1", "type": "function",
    ///     "function": {"name": "fs__read", "arguments": "{\"path\": "}
    /// }))?;
    /// assert!(call.arguments.is_err()); // an error result for the model, not a crash
    /// # Ok::<(), mcp_host::Error>(())
    /// ```
    pub fn from_openai(call: &Value) -> Result<ToolCall, Error> {
        let id = field(call, "id", "a tool call")?;
        let function = call
            .get("function")
            .ok_or_else(|| Error::MalformedCall("a tool call without `function`".to_owned()))?;
        let name = field(function, "name", "a function call")?;
        Ok(ToolCall::openai(id, name, function))
    }

    /// An OpenAI call whose `arguments` member (of `holder`) is a JSON string, or the
    /// object itself as some OpenAI-compatible servers send it.
    fn openai(id: &str, name: &str, holder: &Value) -> ToolCall {
        let arguments = match holder.get("arguments") {
            Some(Value::String(text)) => parse_arguments(text),
            Some(other) => object_arguments(other.clone()),
            None => Ok(JsonObject::new()),
        };
        ToolCall {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments,
        }
    }

    /// Every call of an OpenAI assistant message (`message.tool_calls`; none if absent).
    pub fn from_openai_message(message: &Value) -> Result<Vec<ToolCall>, Error> {
        match message.get("tool_calls") {
            Some(Value::Array(calls)) => calls.iter().map(ToolCall::from_openai).collect(),
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(_) => Err(Error::MalformedCall(
                "`tool_calls` is not an array".to_owned(),
            )),
        }
    }

    /// An OpenAI Responses output item `{type: "function_call", call_id, name, arguments}`.
    pub fn from_openai_responses(item: &Value) -> Result<ToolCall, Error> {
        let id = field(item, "call_id", "a function_call item")?;
        let name = field(item, "name", "a function_call item")?;
        Ok(ToolCall::openai(id, name, item))
    }

    /// An Anthropic `{type: "tool_use", id, name, input}` block.
    ///
    /// ```
    /// use mcp_host::ToolCall;
    /// let call = ToolCall::from_anthropic(&serde_json::json!({
    ///     "type": "tool_use", "id": "toolu_1", "name": "fs__read", "input": {"path": "/"}
    /// }))?;
    /// assert_eq!(call.arguments.unwrap()["path"], "/");
    /// # Ok::<(), mcp_host::Error>(())
    /// ```
    pub fn from_anthropic(block: &Value) -> Result<ToolCall, Error> {
        let id = field(block, "id", "a tool_use block")?;
        let name = field(block, "name", "a tool_use block")?;
        let arguments = object_arguments(block.get("input").cloned().unwrap_or(Value::Null));
        Ok(ToolCall {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments,
        })
    }

    /// Every `tool_use` block of an Anthropic message's `content` array (other blocks are
    /// skipped).
    pub fn from_anthropic_content(content: &Value) -> Result<Vec<ToolCall>, Error> {
        let Some(blocks) = content.as_array() else {
            return Ok(Vec::new());
        };
        blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
            .map(ToolCall::from_anthropic)
            .collect()
    }

    /// A Gemini part `{functionCall: {name, args, id?}}`. Gemini ids are optional; without
    /// one the call is numbered by `index` (its position in the turn).
    pub fn from_gemini(part: &Value, index: usize) -> Result<ToolCall, Error> {
        let call = part
            .get("functionCall")
            .ok_or_else(|| Error::MalformedCall("a part without `functionCall`".to_owned()))?;
        let name = field(call, "name", "a functionCall")?;
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .map_or_else(|| format!("call_{index}"), str::to_owned);
        Ok(ToolCall {
            id,
            name: name.to_owned(),
            arguments: object_arguments(call.get("args").cloned().unwrap_or(Value::Null)),
        })
    }
}

/// A call's result, matched to the call by its id.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolOutcome {
    /// The id of the call this answers.
    pub call_id: String,
    /// The name the model called.
    pub name: String,
    /// The result (`is_error` set for every failure the model should see).
    pub result: CallToolResult,
    /// The UI that renders the result, when the tool is linked to one (MCP Apps): the
    /// embedding application reads it with [`Host::read_ui`](crate::Host::read_ui) and
    /// shows the result in it. The model still gets [`result`](Self::result) as usual.
    pub ui: Option<UiRef>,
}

/// Where a tool's UI lives: the server (its name in the host) and the `ui://` resource.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UiRef {
    /// The server's name in the host.
    pub server: String,
    /// The `ui://` resource to read and render.
    pub resource_uri: String,
}

impl UiRef {
    /// A reference to `resource_uri` on `server`.
    pub fn new(server: impl Into<String>, resource_uri: impl Into<String>) -> Self {
        UiRef {
            server: server.into(),
            resource_uri: resource_uri.into(),
        }
    }
}

/// One piece of a result, vendor-neutral.
enum Piece {
    Text(String),
    Image { mime: String, data: String },
}

/// The result as text and images: text blocks as they are, images as images, embedded
/// text resources as their text, everything else described in a line of text, and
/// `structuredContent` as JSON when no block is text.
fn pieces(result: &CallToolResult) -> Vec<Piece> {
    let mut out = Vec::new();
    for block in &result.content {
        out.push(match block {
            ContentBlock::TextContent(t) => Piece::Text(t.text.clone()),
            ContentBlock::ImageContent(i) => Piece::Image {
                mime: i.mime_type.clone(),
                data: i.data.clone(),
            },
            ContentBlock::AudioContent(a) => Piece::Text(format!(
                "[audio: {}, {} bytes of base64 not shown]",
                a.mime_type,
                a.data.len()
            )),
            ContentBlock::ResourceLink(link) => {
                Piece::Text(format!("[resource link: {} <{}>]", link.name, link.uri))
            }
            ContentBlock::EmbeddedResource(embedded) => match &embedded.resource {
                EmbeddedResourceResource::TextResourceContents(t) => Piece::Text(t.text.clone()),
                EmbeddedResourceResource::BlobResourceContents(b) => Piece::Text(format!(
                    "[binary resource <{}>{}, {} bytes of base64 not shown]",
                    b.uri,
                    b.mime_type
                        .as_deref()
                        .map(|m| format!(", {m}"))
                        .unwrap_or_default(),
                    b.blob.len()
                )),
                _ => Piece::Text("[resource of an unknown kind]".to_owned()),
            },
            _ => Piece::Text("[content of an unknown kind]".to_owned()),
        });
    }
    let has_text = result
        .content
        .iter()
        .any(|b| matches!(b, ContentBlock::TextContent(_)));
    if !has_text && let Some(structured) = &result.structured_content {
        out.push(Piece::Text(structured.to_string()));
    }
    out
}

/// All pieces as one string; images described.
fn flat_text(result: &CallToolResult) -> String {
    let text: Vec<String> = pieces(result)
        .into_iter()
        .map(|p| match p {
            Piece::Text(t) => t,
            Piece::Image { mime, data } => {
                format!("[image: {mime}, {} bytes of base64 not shown]", data.len())
            }
        })
        .collect();
    text.join("\n")
}

fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

impl ToolOutcome {
    /// An outcome.
    pub fn new(
        call_id: impl Into<String>,
        name: impl Into<String>,
        result: CallToolResult,
    ) -> Self {
        ToolOutcome {
            call_id: call_id.into(),
            name: name.into(),
            result,
            ui: None,
        }
    }

    /// The outcome with the UI that renders it.
    #[must_use]
    pub fn with_ui(mut self, ui: Option<UiRef>) -> Self {
        self.ui = ui;
        self
    }

    /// Whether the result is an error (`isError: true`).
    pub fn is_error(&self) -> bool {
        is_error(&self.result)
    }

    /// The OpenAI Chat Completions tool message `{role: "tool", tool_call_id, content}`.
    /// Chat tool messages carry text only, so images are described; OpenAI has no error
    /// flag, so an error's text starts with `Error: `.
    ///
    /// ```
    /// use mcp_host::ToolOutcome;
    /// use mcp_types::CallToolResult;
    /// let outcome = ToolOutcome::new("call_1", "fs__read", CallToolResult::error("no such file"));
    /// assert_eq!(outcome.to_openai_chat(), serde_json::json!({
    ///     "role": "tool", "tool_call_id": "call_1", "content": "Error: no such file"
    /// }));
    /// ```
    pub fn to_openai_chat(&self) -> Value {
        json!({"role": "tool", "tool_call_id": self.call_id, "content": self.error_prefixed()})
    }

    /// The OpenAI Responses input item `{type: "function_call_output", call_id, output}`.
    pub fn to_openai_responses(&self) -> Value {
        json!({"type": "function_call_output", "call_id": self.call_id, "output": self.error_prefixed()})
    }

    fn error_prefixed(&self) -> String {
        let text = flat_text(&self.result);
        if self.is_error() {
            format!("Error: {text}")
        } else {
            text
        }
    }

    /// The Anthropic block `{type: "tool_result", tool_use_id, content: [...], is_error}`,
    /// with images as `{type: "image", source: {type: "base64", media_type, data}}`.
    ///
    /// ```
    /// use mcp_host::ToolOutcome;
    /// use mcp_types::{CallToolResult, ContentBlock};
    /// let result = CallToolResult::new(vec![ContentBlock::image("AAAA", "image/png")]);
    /// let block = ToolOutcome::new("toolu_1", "cam__shot", result).to_anthropic();
    /// assert_eq!(block["content"][0]["source"]["media_type"], "image/png");
    /// assert_eq!(block["is_error"], false);
    /// ```
    pub fn to_anthropic(&self) -> Value {
        let content: Vec<Value> = pieces(&self.result)
            .into_iter()
            .map(|p| match p {
                Piece::Text(text) => json!({"type": "text", "text": text}),
                Piece::Image { mime, data } => json!({
                    "type": "image",
                    "source": {"type": "base64", "media_type": mime, "data": data}
                }),
            })
            .collect();
        json!({
            "type": "tool_result",
            "tool_use_id": self.call_id,
            "content": content,
            "is_error": self.is_error(),
        })
    }

    /// The Gemini part `{functionResponse: {id?, name, response}}`, with the text under
    /// `response.content`, or under `response.error` for an error.
    pub fn to_gemini(&self) -> Value {
        let key = if self.is_error() { "error" } else { "content" };
        let mut response = serde_json::Map::new();
        response.insert(key.to_owned(), Value::String(flat_text(&self.result)));
        if let Some(structured) = &self.result.structured_content {
            response.insert("structuredContent".to_owned(), structured.clone());
        }
        json!({"functionResponse": {"id": self.call_id, "name": self.name, "response": response}})
    }

    /// The result in `vendor`'s shape (the four methods above).
    pub fn to_vendor(&self, vendor: Vendor) -> Value {
        match vendor {
            Vendor::OpenAiChat => self.to_openai_chat(),
            Vendor::OpenAiResponses => self.to_openai_responses(),
            Vendor::Anthropic => self.to_anthropic(),
            Vendor::Gemini => self.to_gemini(),
        }
    }
}
