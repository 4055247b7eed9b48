//! Prompts (<https://modelcontextprotocol.io/specification/2026-07-28/server/prompts>).

use std::future::Future;
use std::sync::Arc;

use mcp_types::{GetPromptResult, OrderedMap, Prompt, PromptArgument};

use crate::context::Context;
use crate::error::{Error, ToolError};
use crate::tool::{BoxFuture, check_name};

type PromptFn = Arc<
    dyn Fn(OrderedMap<String>, Context) -> BoxFuture<Result<GetPromptResult, ToolError>>
        + Send
        + Sync,
>;

/// A prompt: its definition and the handler that renders it.
#[derive(Clone)]
pub struct PromptDef {
    pub(crate) prompt: Prompt,
    pub(crate) get: PromptFn,
}

mcp_types::debug_fields!(PromptDef { prompt });

impl PromptDef {
    /// A prompt named `name`, rendered by `get` from its string arguments.
    ///
    /// ```
    /// use mcp_server::PromptDef;
    /// use mcp_types::{ContentBlock, GetPromptResult, PromptMessage, Role};
    ///
    /// let greet = PromptDef::new("greet", |args, _cx| async move {
    ///     let name = args.get("name").cloned().unwrap_or_default();
    ///     Ok(GetPromptResult::new(vec![PromptMessage::new(ContentBlock::text(format!("Greet {name}")), Role::User)]))
    /// })?
    /// .argument("name", "Who to greet", true);
    /// # Ok::<(), mcp_server::Error>(())
    /// ```
    pub fn new<F, Fut>(name: impl Into<String>, get: F) -> Result<Self, Error>
    where
        F: Fn(OrderedMap<String>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, ToolError>> + Send + 'static,
    {
        let name = name.into();
        check_name(&name)?;
        Ok(PromptDef {
            prompt: Prompt::new(name),
            get: Arc::new(move |args, cx| Box::pin(get(args, cx))),
        })
    }

    /// Declares an argument; a required one missing from `prompts/get` is refused with
    /// -32602 before the handler runs.
    #[must_use]
    pub fn argument(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
    ) -> Self {
        let mut argument = PromptArgument::new(name);
        argument.description = Some(description.into());
        argument.required = Some(required);
        self.prompt
            .arguments
            .get_or_insert_with(Vec::new)
            .push(argument);
        self
    }

    text_setters!(prompt {
        /// Sets the description.
        description,
        /// Sets the display title.
        title,
    });

    icons_setter!(prompt);
}
