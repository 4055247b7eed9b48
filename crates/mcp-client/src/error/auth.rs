//! Why an authorization did not produce a token, said plainly: which document, URL or
//! check failed, and what the spec requires there.

use std::io;

use http::StatusCode;

/// A boxed error (from a caller-supplied part, or a library the kind does not name).
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why the OAuth client (module `auth`, feature `auth`) could not obtain (or refresh) an
/// access token: what [`Error::Auth`](crate::Error::Auth) carries, as its source.
///
/// It exists without the `auth` feature, so that code matching on `Error::Auth` compiles
/// whatever features are on. Spec paths are relative to the shared copy of the
/// specification; see the `auth` module's docs.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthErrorKind {
    /// A metadata or endpoint URL breaks the communication-security rules
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/security-considerations>, Communication
    /// Security): it is not `https` (plain `http` is allowed only to a loopback host, and
    /// only when the caller opted into development mode), or it is not a URL at all.
    #[error("refusing URL `{url}`: {reason}")]
    InsecureUrl {
        /// The URL.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A host resolved to (or is) an address the network policy refuses: loopback, private,
    /// link-local or unspecified, unless the caller allowed it.
    #[error("refusing to connect to {host}: {reason}")]
    AddressRefused {
        /// The host name or address.
        host: String,
        /// Which kind of address it is.
        reason: String,
    },
    /// An OAuth HTTP request failed (connection, TLS, a broken body, a size limit).
    #[error("request to {url} failed: {reason}")]
    Http {
        /// The URL.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// No Protected Resource Metadata document was found (RFC 9728;
    /// <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/authorization-server-discovery>)
    /// where the challenge named one, or where a well-known URL answered with another
    /// failure than 404. (A 404 from every well-known URL, with no document named, is a
    /// server of revision 2025-03-26, which has none: the client then looks for its
    /// authorization server at the server's origin,
    /// <https://modelcontextprotocol.io/specification/2025-03-26/basic/authorization>.)
    #[error("no protected resource metadata found (tried {})", .tried.join(", "))]
    NoResourceMetadata {
        /// The URLs tried, in order.
        tried: Vec<String>,
    },
    /// The Protected Resource Metadata names another resource than the server the client
    /// talks to: its tokens would be for someone else (RFC 9728 §3.3, RFC 8707).
    #[error("the protected resource metadata is for `{resource}`, not for the server `{server}`")]
    ResourceMismatch {
        /// The metadata's `resource`.
        resource: String,
        /// The server's URL.
        server: String,
    },
    /// A metadata document is not what the spec requires (not JSON, a required member
    /// missing or of the wrong type).
    #[error("invalid metadata at {url}: {reason}")]
    InvalidMetadata {
        /// Where it came from.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No authorization server metadata could be used: none found at the well-known URLs
    /// (RFC 8414 and OpenID Connect Discovery, in the spec's order), or the ones found had
    /// another `issuer` (`issuer_mismatch`), which the client must not use.
    #[error(
        "no usable authorization server metadata for issuer `{issuer}` (tried {}){}",
        .tried.join(", "),
        .issuer_mismatch.as_ref().map(|found| format!("; a document claimed issuer `{found}`")).unwrap_or_default()
    )]
    NoAuthorizationServerMetadata {
        /// The issuer from the protected resource metadata.
        issuer: String,
        /// The URLs tried, in order.
        tried: Vec<String>,
        /// The `issuer` of a document that did not match, if one was found.
        issuer_mismatch: Option<String>,
    },
    /// The authorization server does not advertise PKCE with `S256`
    /// (`code_challenge_methods_supported`), so the client must refuse to proceed
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/security-considerations>, Authorization Code Protection).
    #[error(
        "the authorization server `{issuer}` does not advertise PKCE S256; refusing to proceed"
    )]
    PkceUnsupported {
        /// The issuer.
        issuer: String,
    },
    /// Pre-registered credentials exist, but for other authorization servers than the one
    /// the resource names (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/client-registration>, Authorization Server Binding).
    #[error("pre-registered credentials are for {configured:?}, but the server uses `{issuer}`")]
    PreRegisteredElsewhere {
        /// The issuer the resource names.
        issuer: String,
        /// The issuers the credentials are for.
        configured: Vec<String>,
    },
    /// No way to obtain a client id: no pre-registration, no Client ID Metadata Document
    /// support and no registration endpoint (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/client-registration>).
    #[error("cannot register with `{issuer}`: {reason}")]
    Registration {
        /// The issuer.
        issuer: String,
        /// Why.
        reason: String,
    },
    /// The user-interaction step (opening the authorization URL, receiving the redirect)
    /// failed: the `Interaction`'s own error is the source.
    #[error("the authorization step failed")]
    Interaction(#[source] BoxError),
    /// The authorization response's `state` is missing or not the one sent: it is
    /// discarded (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/security-considerations>, Open Redirection).
    #[error("the authorization response's state does not match the request's")]
    StateMismatch,
    /// The authorization response's `iss` fails RFC 9207 validation: absent although the
    /// server advertises it, or not identical to the recorded issuer
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization>, Authorization Response Validation). Nothing else in the response is
    /// acted on or shown.
    #[error("the authorization response's iss {found:?} does not match the issuer `{expected}`")]
    IssuerMismatch {
        /// The recorded issuer.
        expected: String,
        /// The `iss` received, if any.
        found: Option<String>,
    },
    /// The authorization server refused the authorization request (the user declined, or
    /// the request was invalid).
    #[error("the authorization server refused: {error}{}", .description.as_ref().map(|d| format!(" ({d})")).unwrap_or_default())]
    AuthorizationDenied {
        /// The `error` code.
        error: String,
        /// The `error_description`, if any.
        description: Option<String>,
    },
    /// The authorization response has no `code`.
    #[error("the authorization response carries no code")]
    MissingCode,
    /// The token endpoint refused the request (RFC 6749 §5.2). A refusal of the JWT bearer
    /// grant of workload identity federation or enterprise-managed authorization
    /// (`invalid_grant`, `invalid_scope`, `unauthorized_client`) is reported here and not
    /// retried, with this or any other grant.
    #[error("the token endpoint {url} answered {status}: {error}{}", .description.as_ref().map(|d| format!(" ({d})")).unwrap_or_default())]
    TokenEndpoint {
        /// The token endpoint (the authorization server's, or the enterprise IdP's for a
        /// token exchange).
        url: String,
        /// The HTTP status.
        status: StatusCode,
        /// The `error` code (or a summary when the body had none).
        error: String,
        /// The `error_description`, if any.
        description: Option<String>,
    },
    /// A token response is not usable: not JSON, no `access_token`, a token type other
    /// than `Bearer` (or `DPoP` for a request that carried a DPoP proof), or, for a token
    /// exchange, no ID-JAG.
    #[error("invalid token response from {url}: {reason}")]
    InvalidTokenResponse {
        /// The token endpoint.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// A JWT (a client assertion, a DPoP proof's key) could not be made: a bad key or
    /// algorithm. The source is the `jsonwebtoken` crate's error, boxed so that this kind
    /// does not depend on that crate.
    #[error("cannot sign the client assertion")]
    Jwt(#[source] BoxError),
    /// The credential store failed.
    #[error("the credential store failed")]
    Store(#[source] io::Error),
    /// A DPoP proof could not be made (RFC 9449 §4): no key could be generated, or the
    /// request's URL cannot be bound into a proof.
    #[error("cannot make a DPoP proof: {0}")]
    Dpop(String),
    /// The operating system's random source failed, so no unguessable value (a PKCE
    /// verifier, a `state`, a proof's `jti`) could be made: the flow stops rather than use
    /// a predictable one.
    #[error("the operating system's random source failed")]
    Random,
    /// DPoP is `Required` (`auth::DpopPolicy`) but the authorization server does
    /// not advertise ES256 in `dpop_signing_alg_values_supported` (RFC 9449 §5.1), or
    /// answered a request carrying a proof with a bearer token.
    #[error(
        "the authorization server `{issuer}` does not issue DPoP-bound tokens with ES256: {reason}"
    )]
    DpopUnsupported {
        /// The issuer.
        issuer: String,
        /// What it did instead.
        reason: String,
    },
    /// The JWT to present (a workload identity or an ID token) could not be read from its
    /// file.
    #[error("cannot read the assertion")]
    Assertion(#[source] io::Error),
    /// The workload JWT is not addressed to the authorization server the resource names:
    /// its `aud` is neither that server's issuer nor its token endpoint, so it is not
    /// presented there (RFC 7523 §3: the audience identifies the authorization server;
    /// presenting it elsewhere would hand a usable credential to another party).
    #[error("the workload JWT is for {audience:?}, not for the authorization server `{issuer}`")]
    AssertionAudience {
        /// The authorization server's issuer.
        issuer: String,
        /// The JWT's `aud` values (empty when it has none or cannot be read).
        audience: Vec<String>,
    },
}

#[cfg(feature = "auth")]
impl AuthErrorKind {
    pub(crate) fn insecure(url: &str, reason: impl Into<String>) -> Self {
        AuthErrorKind::InsecureUrl {
            url: url.to_owned(),
            reason: reason.into(),
        }
    }

    pub(crate) fn metadata(url: &str, reason: impl Into<String>) -> Self {
        AuthErrorKind::InvalidMetadata {
            url: url.to_owned(),
            reason: reason.into(),
        }
    }

    pub(crate) fn jwt(e: jsonwebtoken::errors::Error) -> Self {
        AuthErrorKind::Jwt(Box::new(e))
    }
}
