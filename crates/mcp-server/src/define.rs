//! What a handler may return, and what a [`ServerBuilder`](crate::ServerBuilder) may
//! register: the traits behind the chaining builders and the `#[tool]`, `#[prompt]`,
//! `#[resource]` and `#[tools]` macros of the `mcp-macros` crate.

use mcp_types::{
    BlobResourceContents, CallToolResult, ContentBlock, EmbeddedResourceResource, GetPromptResult,
    PromptMessage, Role, TextResourceContents,
};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::context::Context;
use crate::error::{Error, ToolError};
use crate::{PromptDef, ResourceDef, ResourceTemplateDef, ToolDef};

/// A tool's typed, structured result: the value becomes `structuredContent` (with its
/// JSON text in `content`), and its type's JSON Schema becomes the tool's `outputSchema`.
///
/// ```
/// use mcp_server::{IntoToolResult, Json};
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Sum { sum: i64 }
///
/// let result = Json(Sum { sum: 5 }).into_tool_result().unwrap();
/// assert_eq!(result.structured_content.unwrap()["sum"], 5);
/// assert!(<Json<Sum> as IntoToolResult>::output_schema().is_some());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

/// A tool's whole argument object as one typed value: a `#[tool]` function's parameter
/// `Args(args): Args<T>` makes `T` (deriving `Deserialize` and `JsonSchema`) the
/// arguments, instead of one parameter an argument.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Args<T>(pub T);

/// What a tool handler returns: anything that becomes a [`CallToolResult`].
///
/// Text (`String`, `&'static str`) becomes one text block; `()` an empty result;
/// [`Json`] a structured result with an `outputSchema`; a `Result` whose error converts
/// into a [`ToolError`] fails the call as that error does (an `isError` result the model
/// reads, for [`ToolError::Failed`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool result",
    label = "a tool returns this",
    note = "return text (`String`, `&'static str`), a `CallToolResult`, content blocks, `Json<T>` of a type that is `Serialize` and `JsonSchema`, or a `Result` of one whose error converts into a `ToolError` (a `String` does)"
)]
pub trait IntoToolResult {
    /// The `outputSchema` the result's type implies, if any.
    fn output_schema() -> Option<Value> {
        None
    }

    /// The result.
    fn into_tool_result(self) -> Result<CallToolResult, ToolError>;
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::new(Vec::new()))
    }
}

impl IntoToolResult for ContentBlock {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::new(vec![self]))
    }
}

impl IntoToolResult for Vec<ContentBlock> {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::new(self))
    }
}

impl<T: Serialize + JsonSchema> IntoToolResult for Json<T> {
    fn output_schema() -> Option<Value> {
        Some(crate::tool::schema_of::<T>())
    }

    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::structured(serde_json::to_value(self.0)?))
    }
}

impl<T: IntoToolResult, E: Into<ToolError>> IntoToolResult for Result<T, E> {
    fn output_schema() -> Option<Value> {
        T::output_schema()
    }

    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        self.map_err(Into::into)?.into_tool_result()
    }
}

/// What a prompt handler returns: anything that becomes a [`GetPromptResult`]. Text
/// becomes one user message.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a prompt result",
    note = "return text (one user message), a `PromptMessage`, a `Vec<PromptMessage>`, a `GetPromptResult`, or a `Result` of one whose error converts into a `ToolError`"
)]
pub trait IntoPromptResult {
    /// The result.
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        Ok(GetPromptResult::new(self))
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        Ok(GetPromptResult::new(vec![self]))
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        PromptMessage::new(ContentBlock::text(self), Role::User).into_prompt_result()
    }
}

impl IntoPromptResult for &'static str {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        self.to_owned().into_prompt_result()
    }
}

impl<T: IntoPromptResult, E: Into<ToolError>> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        self.map_err(Into::into)?.into_prompt_result()
    }
}

/// What a resource handler returns: the contents of the resource at `uri`. Text becomes
/// one text entry and bytes one blob (base64), each with the resource's MIME type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a resource's contents",
    note = "return text, bytes (`Vec<u8>`), the contents (`Vec<EmbeddedResourceResource>`), or a `Result` of one whose error converts into a `ToolError`"
)]
pub trait IntoResourceContents {
    /// The contents of the resource at `uri`, whose MIME type is `mime_type`.
    fn into_contents(
        self,
        uri: String,
        mime_type: Option<&str>,
    ) -> Result<Vec<EmbeddedResourceResource>, ToolError>;
}

impl IntoResourceContents for Vec<EmbeddedResourceResource> {
    fn into_contents(
        self,
        _uri: String,
        _mime_type: Option<&str>,
    ) -> Result<Vec<EmbeddedResourceResource>, ToolError> {
        Ok(self)
    }
}

impl IntoResourceContents for String {
    fn into_contents(
        self,
        uri: String,
        mime_type: Option<&str>,
    ) -> Result<Vec<EmbeddedResourceResource>, ToolError> {
        let mut text = TextResourceContents::new(self, uri);
        text.mime_type = mime_type.map(str::to_owned);
        Ok(vec![EmbeddedResourceResource::TextResourceContents(text)])
    }
}

impl IntoResourceContents for &'static str {
    fn into_contents(
        self,
        uri: String,
        mime_type: Option<&str>,
    ) -> Result<Vec<EmbeddedResourceResource>, ToolError> {
        self.to_owned().into_contents(uri, mime_type)
    }
}

impl IntoResourceContents for Vec<u8> {
    fn into_contents(
        self,
        uri: String,
        mime_type: Option<&str>,
    ) -> Result<Vec<EmbeddedResourceResource>, ToolError> {
        use base64::Engine as _;
        let blob = base64::engine::general_purpose::STANDARD.encode(self);
        let mut blob = BlobResourceContents::new(blob, uri);
        blob.mime_type = mime_type.map(str::to_owned);
        Ok(vec![EmbeddedResourceResource::BlobResourceContents(blob)])
    }
}

impl<T: IntoResourceContents, E: Into<ToolError>> IntoResourceContents for Result<T, E> {
    fn into_contents(
        self,
        uri: String,
        mime_type: Option<&str>,
    ) -> Result<Vec<EmbeddedResourceResource>, ToolError> {
        self.map_err(Into::into)?.into_contents(uri, mime_type)
    }
}

/// A value a handler takes from its request's [`Context`] rather than from the
/// arguments: the context itself, or something read from it. A `#[tool]`, `#[prompt]` or
/// `#[resource]` function's parameter of type `Context`, or one marked `#[context]`, is
/// one of these.
pub trait FromContext: Sized {
    /// The value, or why the request cannot provide it (which fails the call).
    fn from_context(cx: &Context) -> Result<Self, ToolError>;
}

impl FromContext for Context {
    fn from_context(cx: &Context) -> Result<Self, ToolError> {
        Ok(cx.clone())
    }
}

/// Who made the request, as a handler's parameter: the principal the transport
/// authenticated (an HTTP server with an authenticator). As a parameter it fails the call
/// when the request is not authenticated; `Option<Caller>` is `None` then.
///
/// ```
/// use mcp_server::{Caller, FromContext, ToolDef};
/// use mcp_types::CallToolResult;
///
/// // `#[tool] async fn whoami(caller: Option<Caller>) -> String` with the macros.
/// let whoami = ToolDef::new("whoami", serde_json::json!({"type": "object"}), |_args, cx| async move {
///     let caller = Option::<Caller>::from_context(&cx)?;
///     Ok(CallToolResult::text(caller.map_or_else(|| "anonymous".to_owned(), |c| c.0.id().to_owned())))
/// });
/// # assert!(whoami.check().is_ok());
/// ```
#[derive(Debug, Clone)]
pub struct Caller(pub std::sync::Arc<dyn mcp_jsonrpc::Principal>);

impl FromContext for Caller {
    fn from_context(cx: &Context) -> Result<Self, ToolError> {
        Option::<Caller>::from_context(cx)?
            .ok_or_else(|| ToolError::failed("this tool needs an authenticated caller"))
    }
}

impl FromContext for Option<Caller> {
    fn from_context(cx: &Context) -> Result<Self, ToolError> {
        Ok(cx
            .transport()
            .and_then(|transport| transport.principal.clone())
            .map(Caller))
    }
}

/// Something [`ServerBuilder::tool`](crate::ServerBuilder::tool) registers as a tool: a
/// [`ToolDef`], a `Result` of one, or a function the `#[tool]` macro defined.
pub trait IntoToolDef {
    /// The definition, or the error that makes it unusable.
    fn into_tool_def(self) -> Result<ToolDef, Error>;
}

impl IntoToolDef for ToolDef {
    fn into_tool_def(self) -> Result<ToolDef, Error> {
        self.check()
    }
}

impl IntoToolDef for Result<ToolDef, Error> {
    fn into_tool_def(self) -> Result<ToolDef, Error> {
        self.and_then(ToolDef::check)
    }
}

/// Many tools registered in one call
/// ([`ServerBuilder::tools`](crate::ServerBuilder::tools)): what the `#[tools]` macro
/// makes of an impl block whose methods are marked `#[tool]`.
pub trait ToolSet {
    /// The tools, each of which may carry the error that makes it unusable.
    fn into_tool_defs(self) -> Vec<ToolDef>;
}

impl ToolSet for Vec<ToolDef> {
    fn into_tool_defs(self) -> Vec<ToolDef> {
        self
    }
}

/// Something [`ServerBuilder::prompt`](crate::ServerBuilder::prompt) registers as a
/// prompt: a [`PromptDef`], a `Result` of one, or a function the `#[prompt]` macro
/// defined.
pub trait IntoPromptDef {
    /// The definition, or the error that makes it unusable.
    fn into_prompt_def(self) -> Result<PromptDef, Error>;
}

impl IntoPromptDef for PromptDef {
    fn into_prompt_def(self) -> Result<PromptDef, Error> {
        self.check()
    }
}

impl IntoPromptDef for Result<PromptDef, Error> {
    fn into_prompt_def(self) -> Result<PromptDef, Error> {
        self.and_then(PromptDef::check)
    }
}

/// Something [`ServerBuilder::resource`](crate::ServerBuilder::resource) registers as a
/// resource: a [`ResourceDef`], or a function the `#[resource]` macro defined.
pub trait IntoResourceDef {
    /// The definition.
    fn into_resource_def(self) -> ResourceDef;
}

impl IntoResourceDef for ResourceDef {
    fn into_resource_def(self) -> ResourceDef {
        self
    }
}

/// Something [`ServerBuilder::resource_template`](crate::ServerBuilder::resource_template)
/// registers: a [`ResourceTemplateDef`], a `Result` of one, or a function the
/// `#[resource(template = ...)]` macro defined.
pub trait IntoResourceTemplateDef {
    /// The definition, or the error that makes it unusable.
    fn into_resource_template_def(self) -> Result<ResourceTemplateDef, Error>;
}

impl IntoResourceTemplateDef for ResourceTemplateDef {
    fn into_resource_template_def(self) -> Result<ResourceTemplateDef, Error> {
        Ok(self)
    }
}

impl IntoResourceTemplateDef for Result<ResourceTemplateDef, Error> {
    fn into_resource_template_def(self) -> Result<ResourceTemplateDef, Error> {
        self
    }
}

/// What the macros' expansions name, at one path they can rely on. Not a public API.
#[doc(hidden)]
pub mod __macros {
    pub use crate::{
        Args, Caller, Context, Error, FromContext, IntoPromptDef, IntoPromptResult,
        IntoResourceContents, IntoResourceDef, IntoResourceTemplateDef, IntoToolDef,
        IntoToolResult, PromptDef, ResourceDef, ResourceTemplateDef, ToolDef, ToolError, ToolSet,
    };
    pub use mcp_types::{OrderedMap, ToolAnnotations};
    pub use schemars;
    pub use serde;
    pub use serde_json;
    pub use std::sync::Arc;
    pub use std::{boxed::Box, option::Option, result::Result, string::String, vec::Vec};
}
