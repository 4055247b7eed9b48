//! The crate's one error type.

/// What can go wrong in the host. Tool failures are not errors: they are results with
/// `isError` set, for the model to read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration is not valid (what is wrong is in the message).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A member of a server's entry in the configuration is not valid.
    #[error("invalid configuration: server `{server}`: `{field}` {reason}")]
    InvalidField {
        /// The server's name in the configuration.
        server: String,
        /// The member, with its key or index: `command`, `args[1]`, `env.TOKEN`,
        /// `headers.Authorization` (empty when the entry itself is not an object).
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A `${NAME}` in a server's entry names an environment variable that is not set, and
    /// gives no default (`${NAME:-default}`).
    #[error(
        "invalid configuration: server `{server}`: `{field}` uses the environment variable \
         `{variable}`, which is not set (write `${{{variable}:-default}}` to give a default)"
    )]
    UnsetVariable {
        /// The server's name in the configuration.
        server: String,
        /// The member that refers to it.
        field: String,
        /// The variable.
        variable: String,
    },
    /// The gateway could not be built or bound (feature `gateway`).
    #[error("gateway: {0}")]
    Gateway(String),
    /// The configuration file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The configuration is not JSON.
    #[error("configuration is not valid JSON: {0}")]
    Json(#[source] serde_json::Error),
    /// A server could not be connected to, or failed while listing its tools.
    #[error("server `{server}`: {source}")]
    Server {
        /// The server's name in the host.
        server: String,
        /// The client's error (boxed: it is large).
        #[source]
        source: Box<mcp_client::Error>,
    },
    /// A server could not be reached or its era could not be settled (the dual-era
    /// connection of `mcp-legacy`).
    #[error("server `{server}`: {source}")]
    Connect {
        /// The server's name in the host.
        server: String,
        /// Why (boxed: it is large).
        #[source]
        source: Box<mcp_legacy::Error>,
    },
    /// A server's OAuth settings cannot be used: no stored sign-in, one that expired with
    /// no refresh token, an unreadable credential file, or a build without the `auth`
    /// feature. The host never signs in interactively.
    #[error("server `{server}`: OAuth: {reason}")]
    OAuth {
        /// The server's name in the host.
        server: String,
        /// What is wrong, and what to do about it.
        reason: String,
    },
    /// No server of that name.
    #[error("no server named `{0}`")]
    UnknownServer(String),
    /// No prompt of any server has that host-visible name.
    #[error("no prompt named `{0}`")]
    UnknownPrompt(String),
    /// No resource of any server has that host-visible URI.
    #[error("no resource with the URI `{0}`")]
    UnknownResource(String),
    /// Not one of the vendor names (`openai`, `openai-responses`, `anthropic`, `gemini`).
    #[error("unknown vendor `{0}` (expected openai, openai-responses, anthropic or gemini)")]
    UnknownVendor(String),
    /// A vendor's tool call is missing its id or name (malformed arguments are not this:
    /// they become an error result for the model).
    #[error("malformed tool call: {0}")]
    MalformedCall(String),
    /// The model failed.
    #[error("model: {0}")]
    Model(String),
    /// The model did not answer within the round limit.
    #[error("no answer after {0} rounds")]
    RoundLimit(usize),
}

// The error is `Send + Sync + 'static`, checked as the crate compiles.
const _: () = {
    const fn check<T: Send + Sync + 'static + std::error::Error>() {}
    check::<Error>();
};
