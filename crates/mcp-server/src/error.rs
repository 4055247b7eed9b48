//! The server's errors: what can go wrong when building it, and how a handler fails.

use mcp_jsonrpc::ErrorObject;
use mcp_types::{ClientCapabilities, ErrorCode};

/// A definition the server refused, or a transport it could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A tool, prompt or resource name is empty, too long, or uses characters outside
    /// `A-Za-z0-9_.-` (<https://modelcontextprotocol.io/specification/2026-07-28/server/tools>, Tool names).
    #[error("invalid name {name:?}: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Two definitions share a name (or a URI).
    #[error("{kind} {name:?} is defined twice")]
    Duplicate {
        /// `tool`, `prompt`, `resource` or `resource template`.
        kind: &'static str,
        /// The name or URI.
        name: String,
    },
    /// A tool's `inputSchema` or `outputSchema` is not a usable JSON Schema.
    #[error("tool {tool:?}: invalid {which}: {reason}")]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// `inputSchema` or `outputSchema`.
        which: &'static str,
        /// What the validator reported.
        reason: String,
    },
    /// A tool's `x-mcp-header` annotation breaks the spec's rules
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>, Schema Extension). Clients
    /// must drop such a tool, so [`ServerBuilder::tool`](crate::ServerBuilder::tool) drops it
    /// too, with a warning, instead of failing the whole server.
    #[error("tool {tool:?}: invalid x-mcp-header annotation: {reason}")]
    InvalidHeaderAnnotation {
        /// The tool.
        tool: String,
        /// What is wrong.
        reason: String,
    },
    /// An icon's `src` is neither an `https:` nor a `data:` URI, which clients must reject
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/basic#icons>).
    #[error("{owner}: icon {src:?} is neither an https: nor a data: URI")]
    InvalidIcon {
        /// Whose icon: `tool "x"`, `prompt "x"`, `resource "x"`, `resource template "x"`
        /// or `server`.
        owner: String,
        /// The icon's `src`.
        src: String,
    },
    /// A resource template is not a valid RFC 6570 template, or is one whose match against
    /// a URI would be ambiguous (see [`UriTemplate`](crate::UriTemplate)).
    #[error("invalid URI template {template:?}: {reason}")]
    InvalidTemplate {
        /// The template.
        template: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A URI template could not be expanded with the values given: a prefix modifier
    /// (`{x:3}`) on a list or map, which RFC 6570 does not define.
    #[error("cannot expand URI template {template:?}: {reason}")]
    TemplateExpansion {
        /// The template.
        template: String,
        /// What the expansion reported.
        reason: String,
    },
    /// A UI resource of the MCP Apps extension, or a tool's link to one, is unusable: a URI
    /// outside the `ui://` scheme, a link without a URI, or a link to a UI resource the
    /// server does not have (`crate::apps`).
    #[error("invalid MCP App UI resource {uri:?}: {reason}")]
    InvalidUiResource {
        /// The URI (empty when missing).
        uri: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// The operating system's random source failed (needed for the `requestState` key and
    /// task ids).
    #[error("cannot draw a random key")]
    Random,
    /// The keys that seal `requestState` cannot work: a key whose id another key in the
    /// ring has ([`StateKeys::rotate`](crate::StateKeys::rotate)), or an overlap shorter
    /// than the state's lifetime ([`ServerBuilder::build`](crate::ServerBuilder::build)).
    #[error("invalid requestState keys: {reason}")]
    InvalidStateKeys {
        /// What is wrong.
        reason: &'static str,
    },
    /// An authorization setting cannot work: a resource URI that is not canonical, no
    /// authorization server, an endpoint URL that is not `https`, an algorithm that is not
    /// allowed (built by the `auth` feature's `ResourceServer` and verifiers).
    #[error("invalid authorization configuration: {reason}")]
    InvalidAuthConfig {
        /// What is wrong.
        reason: String,
    },
    /// The task store is full (Tasks extension).
    #[error("too many tasks (the store holds at most {limit})")]
    TooManyTasks {
        /// The store's capacity.
        limit: usize,
    },
    /// The task store failed (Tasks extension): a backend error, or an id collision.
    #[error("the task store failed")]
    TaskStore(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A shared change bus could not start (`bus::RedisChangeBus` with the feature
    /// `change-bus-redis`): an invalid URL, or a first connection that failed.
    #[error("the change bus could not start")]
    ChangeBus(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The `requestState` key ring shared in Redis (`RedisStateKeys`, feature
    /// `state-keys-redis`) could not be read or written.
    #[error("the shared requestState key ring failed")]
    StateKeyStore(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A skill breaks a rule of the Skills extension or of the Agent Skills specification
    /// (its path or name, its `SKILL.md` frontmatter, a file path, the limits).
    #[error("skill {skill:?}: {reason}")]
    InvalidSkill {
        /// The skill's path.
        skill: String,
        /// What is wrong.
        reason: String,
    },
    /// A skill's directory could not be read.
    #[error("cannot read {path:?}")]
    SkillIo {
        /// The file or directory.
        path: std::path::PathBuf,
        /// What the operating system reported.
        #[source]
        source: std::io::Error,
    },
    /// The error of a definition that was cloned before it was registered: each copy
    /// reports the same error, shared.
    #[error("{0}")]
    Shared(std::sync::Arc<Error>),
}

/// The error a definition carries ([`ToolDef::check`](crate::ToolDef::check)), as the
/// error itself when this copy of the definition is the only one that holds it.
pub(crate) fn unshared(defect: std::sync::Arc<Error>) -> Error {
    std::sync::Arc::try_unwrap(defect).unwrap_or_else(Error::Shared)
}

/// Why a tool, prompt or resource handler did not produce its result.
///
/// For tools, [`ToolError::Failed`] becomes a `CallToolResult` with `isError: true` whose
/// text the model reads (<https://modelcontextprotocol.io/specification/2026-07-28/server/tools>, Error Handling); the other
/// variants are protocol outcomes.
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolError {
    /// The handler failed; the message is shown to the model (for tools) or returned as
    /// an internal error (for prompts and resources).
    Failed(String),
    /// The handler needs input from the client first: the server answers with an
    /// `input_required` result and runs the handler again on the retry.
    InputRequired,
    /// A JSON-RPC error to return as is (for example -32602 for an unknown resource).
    Protocol(ErrorObject),
}

impl ToolError {
    /// A failure with a message for the model.
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed(message.into())
    }

    /// -32602 with a message.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        ToolError::Protocol(ErrorObject::invalid_params(message))
    }

    /// -32021: the request needs client capabilities it did not declare.
    pub fn missing_capability(required: &ClientCapabilities) -> Self {
        let data = serde_json::json!({ "requiredCapabilities": required });
        ToolError::Protocol(
            ErrorObject::new(
                ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                "the request needs a client capability it did not declare",
            )
            .with_data(data),
        )
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolError::Failed(m) => f.write_str(m),
            ToolError::InputRequired => f.write_str("input required"),
            ToolError::Protocol(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ToolError {}

impl From<InputRequired> for ToolError {
    fn from(_: InputRequired) -> Self {
        ToolError::InputRequired
    }
}

impl From<String> for ToolError {
    /// A failure with this message for the model, so that a handler returning
    /// `Result<_, String>` reads as it should.
    fn from(message: String) -> Self {
        ToolError::Failed(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::Failed(message.to_owned())
    }
}

impl From<serde_json::Error> for ToolError {
    fn from(e: serde_json::Error) -> Self {
        ToolError::Failed(e.to_string())
    }
}

/// Returned by the context's input methods when the answer is not in this request yet;
/// propagate it with `?` and the server asks the client (MRTR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputRequired;

impl std::fmt::Display for InputRequired {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the client's input is required")
    }
}

impl std::error::Error for InputRequired {}
