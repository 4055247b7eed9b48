//! Constructors for everyday values, in the argument order people think in.
//!
//! The generated `new` functions take required members in schema order (alphabetical);
//! these read the way a handler is written: `ContentBlock::text("hi")`,
//! `CallToolResult::error("no such city")`, `Tool::from_schema("add", schema)`.

use serde_json::Value;

use crate::{
    AudioContent, BlobResourceContents, CallToolResult, ContentBlock, EmbeddedResource,
    EmbeddedResourceResource, ImageContent, JsonObject, ResourceLink, TextContent,
    TextResourceContents, Tool, ToolInputSchema,
};

impl ContentBlock {
    /// Text content.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::TextContent(TextContent::new(text))
    }

    /// An image, base64-encoded, with its MIME type (such as `image/png`).
    pub fn image(base64_data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::ImageContent(ImageContent::new(base64_data, mime_type))
    }

    /// Audio, base64-encoded, with its MIME type (such as `audio/wav`).
    pub fn audio(base64_data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::AudioContent(AudioContent::new(base64_data, mime_type))
    }

    /// A link to a resource the client can read or subscribe to.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ContentBlock::ResourceLink(ResourceLink::new(name, uri))
    }

    /// A text resource embedded in full.
    pub fn embedded_text(
        uri: impl Into<String>,
        mime_type: Option<String>,
        text: impl Into<String>,
    ) -> Self {
        let mut contents = TextResourceContents::new(text, uri);
        contents.mime_type = mime_type;
        ContentBlock::EmbeddedResource(EmbeddedResource::new(
            EmbeddedResourceResource::TextResourceContents(contents),
        ))
    }

    /// A binary resource embedded in full, base64-encoded.
    pub fn embedded_blob(
        uri: impl Into<String>,
        mime_type: Option<String>,
        base64_blob: impl Into<String>,
    ) -> Self {
        let mut contents = BlobResourceContents::new(base64_blob, uri);
        contents.mime_type = mime_type;
        ContentBlock::EmbeddedResource(EmbeddedResource::new(
            EmbeddedResourceResource::BlobResourceContents(contents),
        ))
    }
}

impl CallToolResult {
    /// A successful result holding one text block.
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult::new(vec![ContentBlock::text(text)])
    }

    /// A tool error (`isError: true`) with a message the model can read and act on.
    ///
    /// Tool failures are results, not protocol errors, so that the model sees them
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/server/tools>, Error Handling).
    pub fn error(message: impl Into<String>) -> Self {
        let mut result = CallToolResult::text(message);
        result.is_error = Some(true);
        result
    }

    /// A structured result: `structuredContent` holds `value`, and a text block holds its
    /// JSON for clients that read only `content` (as the spec recommends).
    pub fn structured(value: Value) -> Self {
        let mut result = CallToolResult::text(value.to_string());
        result.structured_content = Some(value);
        result
    }
}

impl Tool {
    /// A tool from its name and its input schema, which must be a JSON Schema object with
    /// `"type": "object"` at the root.
    ///
    /// ```
    /// use mcp_types::Tool;
    ///
    /// let schema = serde_json::json!({
    ///     "type": "object",
    ///     "properties": { "a": { "type": "number" }, "b": { "type": "number" } },
    ///     "required": ["a", "b"]
    /// });
    /// let tool = Tool::from_schema("add", schema.as_object().unwrap().clone())?;
    /// assert_eq!(tool.name, "add");
    /// assert_eq!(tool.input_schema.extra["required"], serde_json::json!(["a", "b"]));
    /// assert!(Tool::from_schema("bad", serde_json::Map::new()).is_err());
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn from_schema(
        name: impl Into<String>,
        input_schema: JsonObject,
    ) -> Result<Self, serde_json::Error> {
        let input_schema: ToolInputSchema = serde_json::from_value(Value::Object(input_schema))?;
        Ok(Tool::new(input_schema, name))
    }

    /// A tool that takes no arguments (`{"type": "object"}`).
    pub fn without_arguments(name: impl Into<String>) -> Self {
        Tool::new(ToolInputSchema::new(), name)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::{CallToolResult, ContentBlock, Tool};

    #[test]
    fn constructors_produce_the_wire_shapes() {
        let cases = [
            (
                serde_json::to_value(ContentBlock::text("hi")).unwrap(),
                json!({"type": "text", "text": "hi"}),
            ),
            (
                serde_json::to_value(ContentBlock::image("AAAA", "image/png")).unwrap(),
                json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
            ),
            (
                serde_json::to_value(ContentBlock::audio("AAAA", "audio/wav")).unwrap(),
                json!({"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}),
            ),
            (
                serde_json::to_value(ContentBlock::resource_link("file:///a", "a")).unwrap(),
                json!({"type": "resource_link", "uri": "file:///a", "name": "a"}),
            ),
            (
                serde_json::to_value(ContentBlock::embedded_text(
                    "file:///a",
                    Some("text/plain".into()),
                    "x",
                ))
                .unwrap(),
                json!({"type": "resource", "resource": {"uri": "file:///a", "mimeType": "text/plain", "text": "x"}}),
            ),
            (
                serde_json::to_value(ContentBlock::embedded_blob("file:///b", None, "AAAA"))
                    .unwrap(),
                json!({"type": "resource", "resource": {"uri": "file:///b", "blob": "AAAA"}}),
            ),
            (
                serde_json::to_value(CallToolResult::error("boom")).unwrap(),
                json!({"resultType": "complete", "content": [{"type": "text", "text": "boom"}], "isError": true}),
            ),
            (
                serde_json::to_value(CallToolResult::structured(json!({"sum": 3}))).unwrap(),
                json!({"resultType": "complete", "content": [{"type": "text", "text": "{\"sum\":3}"}], "structuredContent": {"sum": 3}}),
            ),
            (
                serde_json::to_value(Tool::without_arguments("now")).unwrap(),
                json!({"name": "now", "inputSchema": {"type": "object"}}),
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn a_tool_schema_must_be_an_object_schema() {
        let not_object = json!({"type": "string"});
        let err = Tool::from_schema("t", not_object.as_object().unwrap().clone()).unwrap_err();
        assert!(err.to_string().contains("object"), "{err}");
    }
}
