//! The user-interaction step of the authorization code flow: sending the user agent to
//! the authorization URL and receiving the redirect back
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization>, Authorization Flow Steps).
//!
//! The client builds and checks everything around it (PKCE, `state`, `iss`); an
//! [`Interaction`] only carries the URL out and the redirect's parameters back. It must
//! never hand the URL to a shell: print it, show it, or pass it as one argument to a
//! program that opens URLs.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

/// A boxed error from a caller-supplied part: what an [`Interaction`] fails with
/// (carried by [`AuthErrorKind::Interaction`](crate::AuthErrorKind::Interaction)).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A boxed, sendable future, as [`Interaction::authorize`] returns.
pub type InteractionFuture<'a> =
    Pin<Box<dyn Future<Output = Result<AuthorizationResponse, BoxError>> + Send + 'a>>;

/// Sends the user to the authorization server and brings the redirect back.
pub trait Interaction: Send + Sync + fmt::Debug {
    /// The redirect URI registered for this client and sent in every authorization request
    /// (a loopback `http://127.0.0.1:PORT/callback` for a native application).
    fn redirect_uri(&self) -> String;

    /// Lets the user authorize at `request.url` and resolves to the parameters of the
    /// redirect to [`redirect_uri`](Self::redirect_uri) (`code`, `state`, `iss`, or
    /// `error`). It need not check them: the client does.
    fn authorize<'a>(&'a self, request: &'a AuthorizationRequest) -> InteractionFuture<'a>;
}

/// One authorization request, as handed to an [`Interaction`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AuthorizationRequest {
    /// The full authorization URL (endpoint and query), already checked against the
    /// network policy.
    pub url: String,
    /// The redirect URI it names.
    pub redirect_uri: String,
    /// Its `state`, for an interaction that serves several flows at once.
    pub state: String,
    /// The issuer of the authorization server, to show the user where they sign in.
    pub issuer: String,
}

/// The parameters of the redirect back from the authorization server, decoded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthorizationResponse {
    params: Vec<(String, String)>,
}

impl AuthorizationResponse {
    /// The response from its decoded parameters.
    pub fn from_params(params: impl IntoIterator<Item = (String, String)>) -> Self {
        AuthorizationResponse {
            params: params.into_iter().collect(),
        }
    }

    /// The response carried by the query of a redirect URL (`http://…/callback?code=…`).
    /// A URL without a query has no parameters.
    pub fn from_redirect_url(url: &str) -> Self {
        let without_fragment = url.split('#').next().unwrap_or("");
        let query = without_fragment.split_once('?').map_or("", |(_, q)| q);
        Self::from_query(query)
    }

    /// The response carried by a query string (`code=…&state=…`).
    pub fn from_query(query: &str) -> Self {
        AuthorizationResponse {
            params: form_urlencoded::parse(query.as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        }
    }

    /// The first value of `name`, decoded (RFC 9207: the client compares the decoded
    /// `iss`, with no further normalization).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirects_are_decoded() {
        let response = AuthorizationResponse::from_redirect_url(
            "http://localhost:3000/callback?code=abc&state=x%2By&iss=http%3A%2F%2Flocalhost%3A9%2F#frag",
        );
        assert_eq!(response.get("code"), Some("abc"));
        assert_eq!(response.get("state"), Some("x+y"));
        assert_eq!(response.get("iss"), Some("http://localhost:9/"));
        assert_eq!(response.get("error"), None);
        assert_eq!(
            AuthorizationResponse::from_redirect_url("http://localhost/cb"),
            AuthorizationResponse::default()
        );
    }
}
