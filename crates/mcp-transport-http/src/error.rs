//! The crate's one error type: why a server could not start, a setting was refused, or a
//! client call failed.
//!
//! On the server side, everything that goes wrong with a single HTTP request is answered on
//! the wire (a status and a JSON-RPC error body) and logged; it never becomes an [`Error`].
//! On the client side, a JSON-RPC error the server answers with is data (a
//! [`Message::Response`](mcp_jsonrpc::Message::Response) carrying it), not an [`Error`]; this
//! type reports what kept a call from producing messages at all.

use std::io;
use std::net::SocketAddr;

use http::StatusCode;
use mcp_jsonrpc::{DecodeError, ErrorObject};

/// A boxed error from the HTTP stack, kept opaque so hyper's types stay out of the API.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why the server could not start, a configuration value was refused, or a client call
/// failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The listening socket could not be bound.
    #[error("cannot bind {addr}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// What the operating system reported.
        #[source]
        source: io::Error,
    },
    /// The bound socket could not report its address.
    #[error("cannot read the listening socket's address")]
    LocalAddr(#[source] io::Error),
    /// A connection thread ([`HttpServerConfig::connection_threads`](crate::HttpServerConfig::connection_threads))
    /// or its runtime could not be started.
    #[error("cannot start a connection thread")]
    Thread(#[source] io::Error),
    /// A configuration value cannot work (an endpoint path that does not start with `/`).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// An `Mcp-Param-{Name}` name is not an HTTP field-name token (RFC 9110 §5.1).
    #[error("`{0}` is not a valid Mcp-Param header name")]
    ParamHeaderName(String),
    /// The client's URL is not an absolute `http` or `https` URL it can reach.
    #[error("invalid MCP endpoint URL `{url}`: {reason}")]
    Url {
        /// The URL given.
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A request header could not be built from the given value (a protocol version or
    /// method with characters a header cannot carry, or an `Mcp-Param-*` value that is
    /// neither a string, an integer nor a boolean).
    #[error("cannot send header {name}: {reason}")]
    Header {
        /// The header's name.
        name: String,
        /// Why its value cannot be sent.
        reason: String,
    },
    /// The request could not be sent, or the response head not read: the connection failed
    /// or timed out, or the server closed it.
    #[error("HTTP request failed{}", if *.connect { " to connect" } else { "" })]
    Send {
        /// Whether it failed while connecting (nothing reached the server).
        connect: bool,
        /// What the HTTP stack reported.
        #[source]
        source: BoxError,
    },
    /// The server answered with a redirect, which the client does not follow: following it
    /// could send credentials to another origin.
    #[error("the server redirected ({status}) to {}; redirects are not followed", .location.as_deref().unwrap_or("nowhere"))]
    Redirect {
        /// The 3xx status.
        status: StatusCode,
        /// The `Location` header, if it was readable.
        location: Option<String>,
    },
    /// The server answered with an error status and no JSON-RPC error response to go with
    /// it (or, for a notification, with one, carried in `error`).
    #[error("the server answered {status}{}", .error.as_ref().map(|e| format!(" ({e})")).unwrap_or_default())]
    Status {
        /// The HTTP status.
        status: StatusCode,
        /// The JSON-RPC error in the body, if there was one.
        error: Option<ErrorObject>,
    },
    /// A successful reply to a request was neither `application/json` nor
    /// `text/event-stream`.
    #[error("unexpected reply content type {}", .content_type.as_deref().unwrap_or("(none)"))]
    ContentType {
        /// The reply's `Content-Type`, if it had one that was readable.
        content_type: Option<String>,
    },
    /// The reply body grew past
    /// [`HttpClientConfig::max_response_bytes`](crate::HttpClientConfig::max_response_bytes);
    /// reading stopped.
    #[error("the reply body exceeds {limit} bytes")]
    BodyTooLarge {
        /// The limit.
        limit: usize,
    },
    /// One SSE event grew past
    /// [`HttpClientConfig::max_event_bytes`](crate::HttpClientConfig::max_event_bytes);
    /// reading stopped.
    #[error("an SSE event exceeds {limit} bytes")]
    EventTooLarge {
        /// The limit.
        limit: usize,
    },
    /// Reading the reply body failed (the connection broke mid-reply).
    #[error("reading the reply body failed")]
    Body(#[source] BoxError),
    /// A reply message is not a valid JSON-RPC message. In an SSE stream this concerns one
    /// event only: the stream goes on.
    #[error("the server sent an invalid message")]
    Decode(#[source] DecodeError),
    /// An SSE stream ended before the response to the request. The request is lost: re-issue
    /// it, with a new id, only if it is safe to retry.
    #[error("the reply stream ended before the response")]
    Incomplete,
    /// The server refused the request with `401 Unauthorized`, or `403 Forbidden` with a
    /// `WWW-Authenticate` challenge, and no [`Authorizer`](crate::Authorizer) obtained
    /// credentials it accepted (there is none, it gave up, or its retries ran out). The
    /// server did not run the request.
    #[error("the server refused the request ({status}){}", challenge_text(.www_authenticate))]
    Unauthorized {
        /// `401` or `403`.
        status: StatusCode,
        /// The `WWW-Authenticate` header values of the last refusal, in order.
        www_authenticate: Vec<String>,
    },
    /// The [`Authorizer`](crate::Authorizer) failed while answering the server's challenge
    /// (discovery, registration, the user's sign-in or the token request went wrong). The
    /// server did not run the request.
    #[error("authorization failed")]
    Authorization(#[source] BoxError),
}

fn challenge_text(values: &[String]) -> String {
    if values.is_empty() {
        String::new()
    } else {
        format!(": WWW-Authenticate: {}", values.join(", "))
    }
}

impl Error {
    /// Whether the listening socket could not be bound (the address is in use, or not local).
    pub fn is_bind(&self) -> bool {
        matches!(self, Error::Bind { .. })
    }

    /// Whether a configuration value was refused.
    pub fn is_config(&self) -> bool {
        matches!(
            self,
            Error::Config(_) | Error::ParamHeaderName(_) | Error::Url { .. }
        )
    }

    /// Whether the client could not connect to the server (nothing was sent).
    pub fn is_connect(&self) -> bool {
        matches!(self, Error::Send { connect: true, .. })
    }

    /// Whether a reply exceeded a size limit (the body, or one SSE event).
    pub fn is_too_large(&self) -> bool {
        matches!(
            self,
            Error::BodyTooLarge { .. } | Error::EventTooLarge { .. }
        )
    }

    /// Whether the server refused the request for want of (sufficient) authorization, or
    /// the authorizer failed to obtain it.
    pub fn is_unauthorized(&self) -> bool {
        matches!(self, Error::Unauthorized { .. } | Error::Authorization(_))
    }

    /// The HTTP status of a reply that was refused: an error status, a redirect or an
    /// authorization challenge.
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Error::Status { status, .. }
            | Error::Redirect { status, .. }
            | Error::Unauthorized { status, .. } => Some(*status),
            _ => None,
        }
    }
}

// The error is `Send + Sync + 'static`, checked as the crate compiles.
const _: () = {
    const fn assert_bounds<T: Send + Sync + 'static + std::error::Error>() {}
    assert_bounds::<Error>();
};
