//! The crate's one error type, and the kinds of its sub-areas (authorization, skills,
//! icons), said plainly.

mod auth;
mod icon;
mod skill;

use std::time::Duration;

use mcp_jsonrpc::ErrorObject;

pub use self::auth::AuthErrorKind;
pub use self::icon::IconErrorKind;
pub use self::skill::SkillErrorKind;

/// What can go wrong in this crate: why a request to the server did not produce its
/// result, why the OAuth client could not obtain a token, why a skill was refused, why an
/// icon may not be used.
///
/// A tool that ran and failed is not an error here: it is an `Ok` result with
/// `is_error` set, for the model to read (<https://modelcontextprotocol.io/specification/2026-07-28/server/tools>).
///
/// The sub-areas are kinds within it, not error types of their own:
/// [`Auth`](Self::Auth) carries an [`AuthErrorKind`], [`Skill`](Self::Skill) a
/// [`SkillErrorKind`], [`Icon`](Self::Icon) an [`IconErrorKind`]. Those variants exist
/// whatever features are on. `Http` and `Spawn` carry the
/// transport crate's own error, typed (`Error::Http(e) if e.is_unauthorized()`), so they
/// exist only with the feature (`http`, `stdio`) that brings that crate in.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with a JSON-RPC error (code, message, data).
    #[error("the server answered with error {0}")]
    Protocol(ErrorObject),
    /// No protocol version both sides support.
    #[error("no protocol version in common: this client speaks {ours:?}, the server {theirs:?}")]
    VersionMismatch {
        /// The versions this client speaks.
        ours: Vec<String>,
        /// The versions the server said it supports.
        theirs: Vec<String>,
    },
    /// The request timed out (the server was told to cancel it).
    #[error("no answer to `{method}` within {after:?}")]
    Timeout {
        /// The request's method.
        method: String,
        /// How long it waited.
        after: Duration,
    },
    /// The connection failed or closed before the answer (a crashed server included).
    #[error("transport failure")]
    Transport(#[source] mcp_jsonrpc::Error),
    /// The server asked for input this client has no handler for.
    #[error("the server asked for `{method}` input, but no handler is registered for it")]
    NoHandler {
        /// The input request's method (`elicitation/create`, `sampling/createMessage`,
        /// `roots/list`).
        method: String,
    },
    /// A user-registered input handler failed.
    #[error("the `{method}` handler failed: {message}")]
    Handler {
        /// The input request's method.
        method: String,
        /// What it reported.
        message: String,
    },
    /// A call's arguments are not what the method takes: not a JSON object (tools,
    /// prompts), a prompt argument that is not a string, or a value that does not
    /// serialize. Nothing was sent.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The server asked for input this client refuses to hand to its handler (such as a
    /// sampling request with `tools` when `sampling.tools` was not declared). A legacy
    /// transport answers the server's request with -32602 (Invalid params).
    #[error("the server's `{method}` input request is refused: {reason}")]
    InvalidInputRequest {
        /// The input request's method.
        method: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A `tools/call` result does not match the tool's declared `outputSchema`
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/server/tools>, Output
    /// Schema: clients SHOULD validate structured results against it): its
    /// `structuredContent` is missing or invalid. Only checked for tools the client has
    /// listed, and never for a result with `isError: true`.
    #[error("the result of tool `{tool}` does not match its outputSchema: {reason}")]
    StructuredContentInvalid {
        /// The tool's name.
        tool: String,
        /// What is wrong (the first validation errors).
        reason: String,
    },
    /// A [`blocking`](crate::blocking) client's method was called from within an async
    /// runtime, whose thread it would block (`reqwest::blocking` panics there; this
    /// refuses). Use the async [`Client`](crate::Client) there.
    #[error("a blocking client cannot be used from within an async runtime")]
    BlockingInAsync,
    /// The runtime of a [`blocking`](crate::blocking) client could not be started.
    #[error("cannot start the blocking client's runtime")]
    Runtime(#[source] std::io::Error),
    /// The server kept asking for input past the round limit.
    #[error("the server asked for input {0} times without completing the request")]
    TooManyRounds(usize),
    /// A `list_*_all` helper stopped following the server's cursors: they went on past
    /// [`MAX_PAGES`](crate::MAX_PAGES) pages or [`MAX_LISTED`](crate::MAX_LISTED) items
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/pagination>). A cursor the server repeats
    /// is not this error: it ends the listing.
    #[error(
        "`{method}` went on past {} pages or {} items",
        crate::MAX_PAGES,
        crate::MAX_LISTED
    )]
    ListTooLong {
        /// The list method.
        method: String,
    },
    /// The task the call became was cancelled before it finished (Tasks extension).
    #[error("task {id} was cancelled")]
    TaskCancelled {
        /// The task's id.
        id: String,
    },
    /// A UI resource of the MCP Apps extension cannot be rendered: a URI outside the
    /// `ui://` scheme, no content for the URI, a media type other than
    /// `text/html;profile=mcp-app`, or HTML that is not UTF-8 text.
    #[error("{uri:?} is not a usable MCP App UI resource: {reason}")]
    InvalidUiResource {
        /// The URI asked for.
        uri: String,
        /// What is wrong.
        reason: String,
    },
    /// Over HTTP, the server answered the request's POST with a response to another id (a
    /// different one, or the same number as a string) or a result without an id. The
    /// stream belongs to one request (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>,
    /// Sending Messages), so this is not a late answer to another request: the call fails.
    #[error("the server answered `{method}` with a response to {}", .id.as_ref().map_or_else(|| "no id".to_owned(), |id| format!("id {id}")))]
    UnexpectedResponse {
        /// The request's method.
        method: String,
        /// The id the response carried.
        id: Option<mcp_types::RequestId>,
    },
    /// [`Client::extension_request`](crate::Client::extension_request) named an extension
    /// this client did not declare.
    #[error("the extension {0:?} is not declared by this client")]
    ExtensionNotDeclared(String),
    /// The result had a `resultType` this client does not understand.
    #[error("unknown resultType {0:?}")]
    UnknownResultType(String),
    /// The result did not have the expected shape.
    #[error("the result of `{method}` does not have the expected shape")]
    Decode {
        /// The request's method.
        method: String,
        /// What serde_json reported.
        #[source]
        source: serde_json::Error,
    },
    /// This client was built over a bare engine connection, with no router for
    /// subscription notifications: build it with `ClientBuilder::connect` to listen.
    #[error("this client cannot listen: build it with ClientBuilder::connect or connect_stdio")]
    ListenUnavailable,
    /// The HTTP transport failed (connection, status, framing, size limits), or the
    /// server refused the request for want of authorization
    /// ([`mcp_transport_http::Error::Unauthorized`]).
    #[cfg(feature = "http")]
    #[error("HTTP transport failure")]
    Http(#[source] mcp_transport_http::Error),
    /// The OAuth client (module `auth`, feature `auth`) could not obtain a token the server
    /// accepts: discovery, registration, the user's sign-in or the token request failed,
    /// or a URL it was given breaks its rules. What failed is the kind, the source.
    #[error("authorization failed")]
    Auth(#[source] AuthErrorKind),
    /// The server crashed while handling a request that is not safe to run twice; it was
    /// restarted, but the request may or may not have taken effect.
    #[error("the server crashed during `{method}`; it may or may not have run")]
    MayHaveRun {
        /// The request's method.
        method: String,
    },
    /// The server crashed again after the allowed number of restarts.
    #[error("the server crashed and {0} restarts were already spent")]
    RestartsExhausted(u32),
    /// A skill entry, or a skill file read against it, failed the Skills extension's
    /// checks (module `skills`, feature `skills`); the content was dropped. What failed is
    /// the kind, the source.
    #[error("skill verification failed")]
    Skill(#[source] SkillErrorKind),
    /// An icon a server sent may not be used ([`icons::check_icon`](crate::icons::check_icon)).
    /// The kind is in the message, as it was when `check_icon` returned it alone; it has
    /// no cause of its own, so it is not also the source.
    #[error("the icon may not be used: {0}")]
    Icon(IconErrorKind),
    /// A server process could not be started.
    #[cfg(feature = "stdio")]
    #[error("cannot start the server")]
    Spawn(#[source] mcp_transport_stdio::ProcessError),
}

impl Error {
    /// The server's error object, if the server answered with one.
    pub fn protocol(&self) -> Option<&ErrorObject> {
        match self {
            Error::Protocol(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(feature = "http")]
impl From<mcp_transport_http::Error> for Error {
    /// [`Error::Http`], except that an OAuth failure reported through the transport's
    /// authorizer seam (the `auth` module's client boxes its [`AuthErrorKind`] there)
    /// becomes [`Error::Auth`].
    fn from(e: mcp_transport_http::Error) -> Self {
        if let mcp_transport_http::Error::Authorization(source) = e {
            return match source.downcast::<AuthErrorKind>() {
                Ok(auth) => Error::Auth(*auth),
                Err(other) => Error::Http(mcp_transport_http::Error::Authorization(other)),
            };
        }
        Error::Http(e)
    }
}

impl From<AuthErrorKind> for Error {
    fn from(kind: AuthErrorKind) -> Self {
        Error::Auth(kind)
    }
}

impl From<SkillErrorKind> for Error {
    fn from(kind: SkillErrorKind) -> Self {
        Error::Skill(kind)
    }
}

impl From<IconErrorKind> for Error {
    fn from(kind: IconErrorKind) -> Self {
        Error::Icon(kind)
    }
}

impl From<mcp_jsonrpc::Error> for Error {
    fn from(e: mcp_jsonrpc::Error) -> Self {
        match e {
            mcp_jsonrpc::Error::Remote(error) => Error::Protocol(error),
            mcp_jsonrpc::Error::Timeout { method, after } => Error::Timeout { method, after },
            other => Error::Transport(other),
        }
    }
}

// The errors are `Send + Sync + 'static`, checked as the crate compiles.
const _: () = {
    const fn check<T: Send + Sync + 'static + std::error::Error>() {}
    check::<Error>();
    // The kinds are sources (or messages) inside it, and travel with it.
    check::<AuthErrorKind>();
    check::<SkillErrorKind>();
    check::<IconErrorKind>();
};
