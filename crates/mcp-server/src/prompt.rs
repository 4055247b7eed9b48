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
    /// Why the definition is unusable (an invalid name), reported at registration
    /// ([`PromptDef::check`]).
    pub(crate) defect: Option<Arc<Error>>,
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
    /// })
    /// .argument("name", "Who to greet", true);
    /// # assert!(greet.check().is_ok());
    /// ```
    ///
    /// An invalid name makes the definition unusable, which registering it reports
    /// ([`check`](Self::check)).
    pub fn new<F, Fut>(name: impl Into<String>, get: F) -> Self
    where
        F: Fn(OrderedMap<String>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, ToolError>> + Send + 'static,
    {
        let name = name.into();
        let defect = check_name(&name).err().map(Arc::new);
        PromptDef {
            prompt: Prompt::new(name),
            get: Arc::new(move |args, cx| Box::pin(get(args, cx))),
            defect,
        }
    }

    /// A prompt served exactly as `prompt` describes it (title, description, arguments,
    /// icons, `_meta`), rendered by `get`: for a proxy or gateway that republishes another
    /// server's prompts. The name is checked as for [`new`](Self::new).
    pub fn from_prompt<F, Fut>(prompt: Prompt, get: F) -> Self
    where
        F: Fn(OrderedMap<String>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, ToolError>> + Send + 'static,
    {
        let defect = check_name(&prompt.name).err().map(Arc::new);
        PromptDef {
            prompt,
            get: Arc::new(move |args, cx| Box::pin(get(args, cx))),
            defect,
        }
    }

    /// A prompt whose arguments are the fields of a Rust type: each becomes a declared
    /// argument (its doc comment the description; required unless it is an `Option` or
    /// has a default), and the handler receives them deserialized. Prompt arguments are
    /// strings on the wire, so the fields should be too; arguments that do not
    /// deserialize are refused with -32602. The handler returns anything that
    /// [`IntoPromptResult`](crate::IntoPromptResult), text being one user message.
    ///
    /// ```
    /// use mcp_server::PromptDef;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Review {
    ///     /// The code to review.
    ///     code: String,
    ///     /// What to focus on.
    ///     focus: Option<String>,
    /// }
    ///
    /// let review = PromptDef::typed("review", |args: Review, _cx| async move {
    ///     format!("Review this, focusing on {}:\n{}", args.focus.as_deref().unwrap_or("anything"), args.code)
    /// });
    /// let arguments = review.prompt().arguments.clone().unwrap();
    /// assert_eq!((arguments[0].name.as_str(), arguments[0].required), ("code", Some(true)));
    /// assert_eq!((arguments[1].name.as_str(), arguments[1].required), ("focus", Some(false)));
    /// ```
    pub fn typed<A, R, F, Fut>(name: impl Into<String>, get: F) -> Self
    where
        A: serde::de::DeserializeOwned + schemars::JsonSchema + Send + 'static,
        R: crate::IntoPromptResult + 'static,
        F: Fn(A, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
    {
        let get = Arc::new(get);
        let mut prompt = PromptDef::new(name, move |args, cx| {
            let get = Arc::clone(&get);
            async move {
                let object: serde_json::Map<String, serde_json::Value> = args
                    .iter()
                    .map(|(k, v)| (k.to_owned(), serde_json::Value::String(v.clone())))
                    .collect();
                let args: A = serde_json::from_value(serde_json::Value::Object(object))
                    .map_err(|e| ToolError::invalid_params(format!("invalid arguments: {e}")))?;
                get(args, cx).await.into_prompt_result()
            }
        });
        let schema = crate::tool::schema_of::<A>();
        let required: Vec<&str> = schema
            .get("required")
            .and_then(serde_json::Value::as_array)
            .map(|r| r.iter().filter_map(serde_json::Value::as_str).collect())
            .unwrap_or_default();
        if let Some(properties) = schema
            .get("properties")
            .and_then(serde_json::Value::as_object)
        {
            for (name, property) in properties {
                let mut argument = PromptArgument::new(name.clone());
                argument.description = property
                    .get("description")
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_owned);
                argument.required = Some(required.contains(&name.as_str()));
                prompt
                    .prompt
                    .arguments
                    .get_or_insert_with(Vec::new)
                    .push(argument);
            }
        }
        prompt
    }

    /// The definition clients see.
    pub fn prompt(&self) -> &Prompt {
        &self.prompt
    }

    /// The definition as it stands: `Err` with the error of its construction, if any.
    /// [`ServerBuilder::prompt`](crate::ServerBuilder::prompt) and
    /// [`Server::add_prompt`](crate::Server::add_prompt) call it.
    pub fn check(self) -> Result<Self, Error> {
        match self.defect {
            None => Ok(self),
            Some(defect) => Err(crate::error::unshared(defect)),
        }
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
