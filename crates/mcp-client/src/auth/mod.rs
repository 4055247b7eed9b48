//! The OAuth 2.1 client of <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization> (feature `auth`).
//!
//! [`OAuthClient`] is an [`Authorizer`](mcp_transport_http::Authorizer) for the Streamable
//! HTTP transport: it supplies `Authorization: Bearer …` (or `DPoP …` with a proof) on every
//! request, and when the
//! server refuses one (`401`, or `403` with `insufficient_scope`) it runs the flow and the
//! transport re-sends the request. The same authorizer serves the 2026-07-28 client and
//! `mcp-legacy`'s sessions, since both go through the transport. The flow, with the spec
//! section each step follows (paths under <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization>):
//!
//! 1. **Protected Resource Metadata** (RFC 9728; <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/authorization-server-discovery>):
//!    from the challenge's `resource_metadata`, else the path-based then the root
//!    well-known URL. Its `resource` must name the server ([`resource_matches`]); it is
//!    then sent, exactly as published, as the RFC 8707 `resource` of every authorization
//!    and token request (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization>, Resource Parameter Implementation).
//!    A server with no such document at all (every well-known URL answers 404, and the
//!    challenge names none) is taken for a server of revision 2025-03-26: its origin is
//!    its authorization server, whose metadata is at
//!    `<origin>/.well-known/oauth-authorization-server` or, when that answers 404 too,
//!    made of the default endpoints `/authorize`, `/token` and `/register`
//!    (<https://modelcontextprotocol.io/specification/2025-03-26/basic/authorization>);
//!    the server's URL is the `resource`. Any other failure to read the metadata stays an
//!    error.
//! 2. **Authorization server metadata** (RFC 8414 and OpenID Connect Discovery, in the
//!    spec's order, [`authorization_server_metadata_urls`]); a document whose `issuer` is
//!    not identical to the one looked up is never used.
//! 3. **Scopes** (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization>, Scope Selection Strategy): the challenge's `scope`, else the
//!    metadata's `scopes_supported`, else none (the parameter is omitted); on re-authorization
//!    and step-up, the union with the scopes requested before. `offline_access` is added only
//!    when the authorization server lists it (Refresh Tokens). At most
//!    [`OAuthConfig::max_authorizations`] authorizations per request.
//! 4. **Refresh** (OAuth 2.1 §4.3): a token about to expire is renewed before the next
//!    request ([`OAuthConfig::refresh_ahead`]: with its refresh token, or a new client
//!    credentials grant); a `401` with a refresh token and nothing new to ask for
//!    refreshes first.
//! 5. **Registration** (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/client-registration>): pre-registered credentials for that
//!    issuer, a Client ID Metadata Document, a registration stored for that issuer, then
//!    dynamic registration with `application_type`. Credentials and tokens are bound to the
//!    issuer that issued them ([`CredentialStore`]).
//! 6. **The grant** ([`Grant`]): the authorization code with PKCE `S256` (refused when the
//!    server does not advertise it, <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/security-considerations>), `state`, and `iss`
//!    checked as RFC 9207 and <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization> (Authorization Response Validation) say, the
//!    user's part done by an [`Interaction`]; or one of the authorization extensions
//!    (<https://modelcontextprotocol.io/extensions/auth>), which a client using it declares
//!    ([`OAuthConfig::extensions`], with [`ClientBuilder::oauth`](crate::ClientBuilder::oauth)):
//!    - the client credentials grant of <https://modelcontextprotocol.io/extensions/auth/oauth-client-credentials>, with a secret or a
//!      JWT assertion ([`CLIENT_CREDENTIALS_EXTENSION`]);
//!    - enterprise-managed authorization (<https://modelcontextprotocol.io/extensions/auth/enterprise-managed-authorization>,
//!      [`EnterpriseManaged`]): the user's ID token exchanged at the enterprise IdP for an
//!      ID-JAG (RFC 8693), then the JWT bearer grant (RFC 7523) with it
//!      ([`ENTERPRISE_MANAGED_EXTENSION`]);
//!    - workload identity federation (SEP-1933, [`WorkloadIdentity`]): the JWT bearer
//!      grant with a platform-issued workload JWT, sent only to the authorization server
//!      its `aud` names; a refusal is reported, never retried with it or another grant
//!      ([`WORKLOAD_IDENTITY_EXTENSION`]).
//!
//!    The token endpoint authentication is `client_secret_basic`, `client_secret_post`,
//!    `none` or `private_key_jwt`, as the registration and the server's metadata say.
//! 7. **DPoP** (RFC 9449; SEP-1932, [`DpopPolicy`], [`DPOP_EXTENSION`]), when asked for and
//!    the authorization server advertises ES256 (`dpop_signing_alg_values_supported`):
//!    an ephemeral ES256 key per [`OAuthClient`]; every token request carries a proof
//!    (§5), and a token issued as `DPoP` is sent as `Authorization: DPoP <token>` with a
//!    fresh proof bound to each request's method and URL and to the token (`ath`, §7.1),
//!    never as a bearer token. A `use_dpop_nonce` refusal, from the token endpoint (`400`,
//!    §8) or the MCP server (`401`, §9), is answered once with the server's `DPoP-Nonce`,
//!    which later proofs to that server carry.
//!
//! Safety (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/security-considerations>): every URL the client fetches or hands to the user
//! must be `https` (plain `http` to a loopback host only in development mode), private and
//! link-local addresses are refused unless allowed ([`NetworkPolicy`]), redirects carry no
//! credential or custom header to another origin ([`redirect_headers`]), and the
//! authorization URL is given to the [`Interaction`], never to a shell.
//!
//! # Example
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use mcp_client::Client;
//! use mcp_client::auth::{
//!     AuthorizationRequest, AuthorizationResponse, FileStore, Interaction, InteractionFuture,
//!     OAuthClient, OAuthConfig,
//! };
//! use mcp_transport_http::HttpClientConfig;
//!
//! /// Prints the URL and reads the redirect URL the user pastes back.
//! #[derive(Debug)]
//! struct Terminal;
//!
//! impl Interaction for Terminal {
//!     fn redirect_uri(&self) -> String {
//!         "http://127.0.0.1:8976/callback".to_owned()
//!     }
//!     fn authorize<'a>(&'a self, request: &'a AuthorizationRequest) -> InteractionFuture<'a> {
//!         Box::pin(async move {
//!             eprintln!("Sign in at {}\nthen paste the address you land on:", request.url);
//!             let mut line = String::new();
//!             std::io::stdin().read_line(&mut line)?;
//!             Ok(AuthorizationResponse::from_redirect_url(line.trim()))
//!         })
//!     }
//! }
//!
//! let url = "https://mcp.example.com/mcp";
//! let oauth = OAuthClient::new(
//!     OAuthConfig::authorization_code(url, Arc::new(Terminal))
//!         .client_metadata_url("https://app.example.com/oauth/client.json")
//!         .store(Arc::new(FileStore::new("/home/me/.config/my-agent/credentials.json"))),
//! )?;
//! let client = Client::builder("my-agent", "1.0")
//!     .connect_http(url, HttpClientConfig::default().authorizer(Arc::new(oauth)))?;
//! let tools = client.list_tools_all().await?;
//! # let _ = tools;
//! # Ok(())
//! # }
//! ```

mod challenge;
mod config;
mod discovery;
mod dpop;
mod fetch;
mod flow;
mod grants;
mod interaction;
mod oauth;
mod pkce;
mod register;
mod store;
mod token;

pub use challenge::BearerChallenge;
pub use config::{
    Assertion, CLIENT_CREDENTIALS_EXTENSION, ClientCredentials, ClientSecret,
    DEFAULT_MAX_AUTHORIZATIONS, DEFAULT_REFRESH_AHEAD, DPOP_EXTENSION, DpopPolicy,
    ENTERPRISE_MANAGED_EXTENSION, EnterpriseIdp, EnterpriseManaged, Grant, OAuthConfig,
    PreRegistered, WORKLOAD_IDENTITY_EXTENSION, WorkloadIdentity,
};
pub use discovery::{
    AuthorizationServerMetadata, ResourceMetadata, authorization_server_metadata_urls,
    resource_matches, resource_metadata_urls,
};
pub use fetch::{
    MAX_BODY, MAX_REDIRECTS, NetworkPolicy, TIMEOUT, is_loopback_host, redirect_headers,
};
pub use interaction::{
    AuthorizationRequest, AuthorizationResponse, BoxError, Interaction, InteractionFuture,
};
pub use oauth::OAuthClient;
pub use pkce::Pkce;
pub use store::{CredentialStore, FileStore, MemoryStore, StoredClient, StoredTokens};
