//! Tool calls from each vendor's shape, and `CallToolResult`s back into each vendor's
//! shape (<https://modelcontextprotocol.io/specification/2026-07-28/server/tools>, Tool Result).

use mcp_types::{CallToolResult, JsonObject};
use serde_json::{Value, json};

use crate::render::{self, DEFAULT_MAX_MEDIA_LEN};
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
    /// The longest image, audio clip or binary resource, in bytes of base64, that the
    /// result passes to the model as data; a longer one is described in a line of text
    /// ([`DEFAULT_MAX_MEDIA_LEN`](crate::DEFAULT_MAX_MEDIA_LEN) unless set).
    pub max_media_len: usize,
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
            max_media_len: DEFAULT_MAX_MEDIA_LEN,
        }
    }

    /// The outcome with the UI that renders it.
    #[must_use]
    pub fn with_ui(mut self, ui: Option<UiRef>) -> Self {
        self.ui = ui;
        self
    }

    /// The outcome with another limit on the media it passes to the model
    /// ([`max_media_len`](Self::max_media_len)).
    #[must_use]
    pub fn with_max_media_len(mut self, max_media_len: usize) -> Self {
        self.max_media_len = max_media_len;
        self
    }

    /// Whether the result is an error (`isError: true`).
    pub fn is_error(&self) -> bool {
        is_error(&self.result)
    }

    /// The OpenAI Chat Completions tool message `{role: "tool", tool_call_id, content}`.
    /// OpenAI has no error flag, so an error's text starts with `Error: `.
    ///
    /// A tool message carries text only: images, WAV and MP3 audio and PDFs go into the
    /// user message of [`to_openai_chat_follow_up`](Self::to_openai_chat_follow_up), sent
    /// after the turn's tool messages, and the tool message says so in their place.
    /// [`openai_chat_messages`](Self::openai_chat_messages) does both for a turn. Other
    /// media are described, and `structuredContent` is added as JSON text unless a text
    /// block already holds it.
    ///
    /// ```
    /// use mcp_host::ToolOutcome;
    /// use mcp_types::CallToolResult;
    /// let outcome = ToolOutcome::new("call_1", "fs__read", CallToolResult::error("no such file"));
    /// assert_eq!(outcome.to_openai_chat(), serde_json::json!({
    ///     "role": "tool", "tool_call_id": "call_1", "content": "Error: no such file"
    /// }));
    /// assert_eq!(outcome.to_openai_chat_follow_up(), None);
    /// ```
    pub fn to_openai_chat(&self) -> Value {
        let (content, _) = render::openai_chat(&self.result, self.max_media_len, self.is_error());
        json!({"role": "tool", "tool_call_id": self.call_id, "content": content})
    }

    /// The media of the result that an OpenAI Chat tool message cannot carry, as a user
    /// message `{role: "user", content: [...]}` to send after the turn's tool messages:
    /// a text part naming the call, then `image_url` parts (data URLs), `input_audio`
    /// parts (WAV and MP3) and `file` parts (PDFs). `None` when there are none.
    pub fn to_openai_chat_follow_up(&self) -> Option<Value> {
        let parts = self.openai_chat_parts();
        (!parts.is_empty()).then(|| json!({"role": "user", "content": parts}))
    }

    /// The follow-up parts with the text part that names the call, or none.
    fn openai_chat_parts(&self) -> Vec<Value> {
        let (_, media) = render::openai_chat(&self.result, self.max_media_len, self.is_error());
        if media.is_empty() {
            return media;
        }
        let intro = format!(
            "Attached to the result of tool call {} ({}):",
            self.call_id, self.name
        );
        let mut parts = Vec::with_capacity(media.len() + 1);
        parts.push(json!({"type": "text", "text": intro}));
        parts.extend(media);
        parts
    }

    /// The OpenAI Chat Completions messages that answer one assistant turn: every
    /// outcome's tool message in order, then, if any result has media a tool message
    /// cannot carry, one user message with all of them, each result's introduced by the
    /// call it answers. OpenAI wants the tool messages right after the assistant message
    /// that made the calls, so the user message comes last.
    ///
    /// ```
    /// use mcp_host::ToolOutcome;
    /// use mcp_types::{CallToolResult, ContentBlock};
    /// let shot = CallToolResult::new(vec![ContentBlock::image("iVBORw0K", "image/png")]);
    /// let outcomes = [
    ///     ToolOutcome::new("call_1", "cam__shot", shot),
    ///     ToolOutcome::new("call_2", "fs__read", CallToolResult::text("hello")),
    /// ];
    /// let messages = ToolOutcome::openai_chat_messages(&outcomes);
    /// assert_eq!(messages.len(), 3);
    /// assert_eq!(messages[1]["content"], "hello");
    /// assert_eq!(messages[2]["role"], "user");
    /// assert_eq!(messages[2]["content"][1]["image_url"]["url"], "data:image/png;base64,iVBORw0K");
    /// ```
    pub fn openai_chat_messages(outcomes: &[ToolOutcome]) -> Vec<Value> {
        let mut messages: Vec<Value> = outcomes.iter().map(ToolOutcome::to_openai_chat).collect();
        let parts: Vec<Value> = outcomes
            .iter()
            .flat_map(ToolOutcome::openai_chat_parts)
            .collect();
        if !parts.is_empty() {
            messages.push(json!({"role": "user", "content": parts}));
        }
        messages
    }

    /// The OpenAI Responses input item `{type: "function_call_output", call_id, output}`.
    /// The output is a string when the result is all text; with images or PDFs it is an
    /// array of `input_text`, `input_image` and `input_file` items (data URLs). Audio and
    /// other types are described; errors and `structuredContent` as for
    /// [`to_openai_chat`](Self::to_openai_chat).
    pub fn to_openai_responses(&self) -> Value {
        let output = render::openai_responses(&self.result, self.max_media_len, self.is_error());
        json!({"type": "function_call_output", "call_id": self.call_id, "output": output})
    }

    /// The Anthropic block `{type: "tool_result", tool_use_id, content: [...], is_error}`,
    /// with images as `{type: "image", source: {type: "base64", media_type, data}}`, PDFs
    /// as `document` blocks of the same shape, other media described, and
    /// `structuredContent` added as JSON text unless a text block already holds it.
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
        json!({
            "type": "tool_result",
            "tool_use_id": self.call_id,
            "content": render::anthropic(&self.result, self.max_media_len),
            "is_error": self.is_error(),
        })
    }

    /// The Gemini part `{functionResponse: {id, name, response, parts?}}`, with the text
    /// under `response.content`, or under `response.error` for an error,
    /// `structuredContent` beside it, and every image, audio clip and binary resource as
    /// an `{inlineData: {mimeType, data}}` entry of `parts` (the multimodal function
    /// responses of Gemini 3), which the text mentions in its place.
    pub fn to_gemini(&self) -> Value {
        let (text, parts) = render::gemini(&self.result, self.max_media_len);
        let key = if self.is_error() { "error" } else { "content" };
        let mut response = serde_json::Map::new();
        response.insert(key.to_owned(), Value::String(text));
        if let Some(structured) = &self.result.structured_content {
            response.insert("structuredContent".to_owned(), structured.clone());
        }
        let mut function_response =
            json!({"id": self.call_id, "name": self.name, "response": response});
        if !parts.is_empty() {
            function_response["parts"] = Value::Array(parts);
        }
        json!({"functionResponse": function_response})
    }

    /// The result in `vendor`'s shape (the four methods above). For OpenAI Chat this is
    /// the tool message alone; use [`openai_chat_messages`](Self::openai_chat_messages)
    /// so that images and audio reach the model too.
    pub fn to_vendor(&self, vendor: Vendor) -> Value {
        match vendor {
            Vendor::OpenAiChat => self.to_openai_chat(),
            Vendor::OpenAiResponses => self.to_openai_responses(),
            Vendor::Anthropic => self.to_anthropic(),
            Vendor::Gemini => self.to_gemini(),
        }
    }
}
