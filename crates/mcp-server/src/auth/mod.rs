//! An OAuth 2.1 resource server for the Streamable HTTP transport (feature `auth`), as
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization>, <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/authorization-server-discovery>
//! and <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/security-considerations> ask of a protected MCP server.
//!
//! [`ResourceServer`] is an [`mcp_transport_http::Authenticator`]: set it on the
//! [`HttpServerConfig`](mcp_transport_http::HttpServerConfig) that serves the [`Server`](crate::Server)
//! (or `mcp-legacy`'s dual-era endpoint, which authenticates its legacy sessions the same
//! way). It
//!
//! - serves the protected resource metadata (RFC 9728) at
//!   `/.well-known/oauth-protected-resource<endpoint path>` and at
//!   `/.well-known/oauth-protected-resource` (an `McpService` mounted in a router must be
//!   routed those paths too: [`ResourceServer::metadata_paths`]);
//! - answers a request without a bearer token with `401` and
//!   `WWW-Authenticate: Bearer resource_metadata="…"` (with `scope` when scopes are
//!   required), and one with a bad token with `401` and `error="invalid_token"`;
//! - verifies tokens with a [`TokenVerifier`]: [`JwtVerifier`] (signatures against the
//!   authorization server's JWKS, issuer, an audience equal to this resource, expiry,
//!   not-before, an algorithm allow-list, no ID tokens) or [`IntrospectionVerifier`]
//!   (RFC 7662), or your own;
//! - answers a token without the scopes the endpoint, or the tool, prompt or resource a
//!   request names, requires with `403` and an `insufficient_scope` challenge naming every
//!   scope the operation needs ([`ResourceServerBuilder::tool_scopes`],
//!   [`prompt_scopes`](ResourceServerBuilder::prompt_scopes),
//!   [`resource_scopes`](ResourceServerBuilder::resource_scopes));
//! - hands the handler a [`TokenPrincipal`] (subject, client, scopes, claims; never the
//!   token) through [`Context::principal`](crate::Context::principal) and
//!   [`Context::token_principal`](crate::Context::token_principal).
//!
//! The server core binds to the principal what must not cross principals: sealed MRTR
//! `requestState` (refused with -32602 when another principal presents it) and the default
//! cache scope of lists and reads (`private`). Tokens in the query string are never looked
//! at, and the token itself stops at the transport: handlers see neither the token nor the
//! `Authorization` header, so they cannot pass it on to another service.
//!
//! ```
//! use mcp_server::Server;
//! use mcp_server::auth::{JwtVerifier, ResourceServer};
//! use mcp_transport_http::{HttpServer, HttpServerConfig};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let verifier = JwtVerifier::builder(
//!     "https://auth.example.com",
//!     "https://auth.example.com/.well-known/jwks.json",
//! )
//! .build()
//! .unwrap();
//! let resource = ResourceServer::builder("https://mcp.example.com/mcp")
//!     .authorization_server("https://auth.example.com")
//!     .scopes_supported(["files:read", "files:write"])
//!     .required_scopes(["files:read"])
//!     .tool_scopes("delete_file", ["files:write"])
//!     .verifier(verifier)
//!     .build()
//!     .unwrap();
//! assert_eq!(
//!     resource.metadata_url(),
//!     "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
//! );
//!
//! let server = Server::builder("files", "1.0.0").build().unwrap();
//! let config = HttpServerConfig::default()
//!     .allowed_hosts(mcp_transport_http::AllowList::loopback().with("mcp.example.com"))
//!     .authenticator(resource);
//! let running = HttpServer::bind(HttpServer::DEFAULT_ADDR, server, config).await.unwrap();
//!
//! // Without a token: 401 and the challenge that leads the client to the metadata.
//! let reply = raw_post(running.local_addr()).await;
//! assert!(reply.starts_with("HTTP/1.1 401"));
//! assert!(reply.contains(
//!     "www-authenticate: Bearer resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\", scope=\"files:read\""
//! ));
//! running.shutdown(std::time::Duration::from_secs(1)).await;
//!
//! # async fn raw_post(addr: std::net::SocketAddr) -> String {
//! #     use tokio::io::{AsyncReadExt, AsyncWriteExt};
//! #     let request = format!(
//! #         "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
//! #          Accept: application/json, text/event-stream\r\nContent-Length: 2\r\n\
//! #          Connection: close\r\n\r\n{{}}"
//! #     );
//! #     let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
//! #     stream.write_all(request.as_bytes()).await.unwrap();
//! #     let mut reply = String::new();
//! #     stream.read_to_string(&mut reply).await.unwrap();
//! #     reply
//! # }
//! # });
//! ```

mod challenge;
mod fetch;
mod introspect;
mod jwt;
mod principal;
mod resource;
mod scopes;

use std::future::Future;
use std::pin::Pin;

pub use introspect::{ClientAuth, IntrospectionVerifier, IntrospectionVerifierBuilder};
pub use jwt::{JwtVerifier, JwtVerifierBuilder};
pub use principal::TokenPrincipal;
pub use resource::{ResourceServer, ResourceServerBuilder};

/// What [`TokenVerifier::verify`] returns.
pub type VerifyFuture<'a> =
    Pin<Box<dyn Future<Output = Result<TokenPrincipal, TokenError>> + Send + 'a>>;

/// Verifies bearer tokens for a [`ResourceServer`]: [`JwtVerifier`] and
/// [`IntrospectionVerifier`] are built in; implement it for any other kind of token.
///
/// A verifier must check everything OAuth 2.1 §5.2 asks of a resource server: that the
/// token is genuine and unexpired, issued by the expected authorization server, and issued
/// for `resource` (RFC 8707: its audience names this server, exactly). Scopes are the
/// resource server's to check.
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token` for the resource whose canonical URI is `resource`: the principal it
    /// stands for, or why not.
    fn verify<'a>(&'a self, token: &'a str, resource: &'a str) -> VerifyFuture<'a>;
}

/// Why a token was not accepted: a verdict on the token, or a verifier that cannot decide
/// now.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The token is not valid here (`401` with `error="invalid_token"`); the reason is sent
    /// as the challenge's `error_description`, so it names no secret.
    #[error("invalid token: {0}")]
    Invalid(String),
    /// The token cannot be checked now (the JWKS or the introspection endpoint cannot be
    /// reached, or the introspection rate is spent): `503`, and the client may retry with
    /// the same token. The reason is for the server's log; the `503` body does not carry
    /// it.
    #[error("tokens cannot be verified now: {0}")]
    Unavailable(String),
}

impl TokenError {
    pub(crate) fn invalid(reason: impl Into<String>) -> Self {
        TokenError::Invalid(reason.into())
    }
}

/// The current time in seconds since the Unix epoch, for `exp` and `nbf`.
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn config_error(reason: impl Into<String>) -> crate::Error {
    crate::Error::InvalidAuthConfig {
        reason: reason.into(),
    }
}
