//! The authorization seam of the client: where the credential headers of a request come
//! from, and what happens when the server refuses a request with a challenge.
//!
//! The transport knows no OAuth. It lets an [`Authorizer`] renew a token about to expire
//! before each request ([`Authorizer::prepare`]), asks it for the credential headers of
//! every request attempt, given the request's method and URL ([`Authorizer::headers`]:
//! `Authorization`, and any header bound to that one request, such as a DPoP proof), on
//! POSTs, GET streams, DELETEs and the raw requests of
//! [`HttpClient::send`](crate::HttpClient::send), and tells it about every response's head
//! ([`Authorizer::responded`]: a server may hand out a value for the next requests, such as
//! a DPoP nonce). When the server answers `401 Unauthorized`, or `403 Forbidden` with a
//! `WWW-Authenticate` challenge (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization>, Error
//! Handling), it hands the [`Challenge`] to the authorizer. If the authorizer says to retry
//! (it obtained a new token, or learnt what the server wants), the same request is sent
//! again with new headers: the server refused it before running it, so re-sending it is
//! safe, whatever its method. If not, the caller gets
//! [`Error::Unauthorized`](crate::Error::Unauthorized) with the challenge's status and
//! `WWW-Authenticate` values.
//!
//! The OAuth 2.1 client that implements [`Authorizer`] is `mcp-client`'s `auth` module.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use http::header::AUTHORIZATION;
use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};

/// A boxed, sendable future, as [`Authorizer::challenged`] returns.
pub type AuthFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A boxed error from an [`Authorizer`], carried by
/// [`Error::Authorization`](crate::Error::Authorization).
pub type AuthorizerError = Box<dyn std::error::Error + Send + Sync>;

/// How many challenges one request may meet before the transport stops retrying, whatever
/// the authorizer says: a guard against an authorizer that never gives up.
pub const MAX_CHALLENGES: u32 = 8;

/// The source of every request's credential headers, and the handler of the server's
/// authorization challenges.
///
/// Every request attempt (POSTs, GET streams, DELETEs, the raw requests of
/// [`HttpClient::send`](crate::HttpClient::send)) carries the headers of
/// [`headers`](Self::headers), which by default is the [`authorization`](Self::authorization)
/// header alone. Every response's head is shown to [`responded`](Self::responded). A
/// `401`, or a `403` with a `WWW-Authenticate` challenge, is handed to
/// [`challenged`](Self::challenged); if it resolves to `true`, the same request is sent
/// again with new headers (the server refused it before running it, so this is safe
/// whatever the method), at most [`MAX_CHALLENGES`] times. The OAuth 2.1 client that
/// implements it is `mcp-client`'s `auth` module; this crate knows no OAuth, no token type
/// and no proof format.
///
/// Install one with [`HttpClientConfig::authorizer`](crate::HttpClientConfig::authorizer).
pub trait Authorizer: Send + Sync + fmt::Debug {
    /// The `Authorization` header of the current credential (`Bearer <token>`,
    /// `DPoP <token>`), or `None` when there is none. It must be cheap: it reads the
    /// current token, it does not fetch one. The transport uses it through the default
    /// [`headers`](Self::headers), and an authorizer uses it to recognise the credential a
    /// refused request carried ([`Challenge::sent`]).
    fn authorization(&self) -> Option<HeaderValue>;

    /// The credential headers of one request attempt of `method` on `url`: the
    /// `Authorization` header and any header bound to this very request (a DPoP proof,
    /// RFC 9449, is signed for one method and URL and is never reused). Called once per
    /// attempt, a retry included, so that each gets fresh values; it must be cheap and must
    /// not wait. A header it returns replaces one of the same name configured on the
    /// client; a configured `Authorization` is dropped whatever it returns. An error fails
    /// the request with [`Error::Authorization`](crate::Error::Authorization) (the
    /// credential cannot be presented; nothing is sent). The default is
    /// [`authorization`](Self::authorization) alone.
    fn headers(&self, method: &Method, url: &Uri) -> Result<HeaderMap, AuthorizerError> {
        let _ = (method, url);
        let mut headers = HeaderMap::new();
        if let Some(value) = self.authorization() {
            headers.insert(AUTHORIZATION, value);
        }
        Ok(headers)
    }

    /// The head of every response to a request that carried [`headers`](Self::headers),
    /// whatever its status, before the transport acts on it (a refusal then goes to
    /// [`challenged`](Self::challenged)). An authorizer keeps what the server hands out for
    /// later requests here (a DPoP nonce, RFC 9449 §9). It must be cheap and must not wait.
    /// The default does nothing.
    fn responded(&self, url: &Uri, status: StatusCode, headers: &HeaderMap) {
        let _ = (url, status, headers);
    }

    /// Work to do before a request is sent, if any: an authorizer whose token is about to
    /// expire renews it here (a refresh ahead of expiry), so that the request does not
    /// first meet a `401`. Called once per request, before its first
    /// [`authorization`](Self::authorization); the request waits for the future, then
    /// reads the header. The default does nothing, and an implementation must return
    /// `None` cheaply when there is nothing to do. A failure here is the authorizer's to
    /// log: the request is sent with whatever header it then holds, and a refusal goes
    /// through [`challenged`](Self::challenged) as usual.
    fn prepare(&self) -> Option<AuthFuture<'_, ()>> {
        None
    }

    /// The server refused a request: `401`, or `403` with a `WWW-Authenticate` challenge.
    /// Resolve to `Ok(true)` once new headers are ready and the request should be sent
    /// again, `Ok(false)` to give up (the caller gets
    /// [`Error::Unauthorized`](crate::Error::Unauthorized)), or an error to fail the
    /// request with [`Error::Authorization`](crate::Error::Authorization).
    ///
    /// The future may take as long as the authorization takes (a user signing in); the
    /// caller's own timeouts still apply to the whole request.
    fn challenged<'a>(
        &'a self,
        challenge: &'a Challenge,
    ) -> AuthFuture<'a, Result<bool, AuthorizerError>>;
}

/// A refusal by the server, as [`Authorizer::challenged`] sees it.
#[derive(Clone)]
#[non_exhaustive]
pub struct Challenge {
    /// `401 Unauthorized` or `403 Forbidden`.
    pub status: StatusCode,
    /// Every `WWW-Authenticate` header value of the response, in order (unparsed: the
    /// authorizer knows which schemes and parameters it understands).
    pub www_authenticate: Vec<String>,
    /// The URL of the refused request.
    pub url: Uri,
    /// The `Authorization` header the refused request carried, if any. An authorizer that
    /// already holds a different one (another request obtained it meanwhile) can retry at
    /// once.
    pub sent: Option<HeaderValue>,
    /// How many challenges this request met before this one (0 for the first).
    pub attempt: u32,
    /// The `WWW-Authenticate` values of the challenges this request met before this one,
    /// oldest first (`attempt` of them): an authorizer that retries a kind of refusal only
    /// once per request (a DPoP `use_dpop_nonce`) reads it here.
    pub earlier: Vec<Vec<String>>,
}

impl fmt::Debug for Challenge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The header that was sent is a credential: only whether there was one is shown.
        f.debug_struct("Challenge")
            .field("status", &self.status)
            .field("www_authenticate", &self.www_authenticate)
            .field("url", &self.url)
            .field("sent", &self.sent.is_some())
            .field("attempt", &self.attempt)
            .field("earlier", &self.earlier)
            .finish()
    }
}

impl Challenge {
    /// The challenge of a response, if it is one: `401`, or `403` carrying a
    /// `WWW-Authenticate` header (a `403` without one is an ordinary refusal, such as an
    /// `Origin` the server does not allow).
    pub(crate) fn of(
        status: StatusCode,
        headers: &HeaderMap,
        url: &Uri,
        sent: Option<HeaderValue>,
        earlier: &[Vec<String>],
    ) -> Option<Challenge> {
        // Every response is asked; only a 401 or a 403 can be a challenge, so nothing else
        // has its headers looked up.
        if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
            return None;
        }
        let www_authenticate: Vec<String> = headers
            .get_all(http::header::WWW_AUTHENTICATE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_owned)
            .collect();
        let challenged = status == StatusCode::UNAUTHORIZED
            || (status == StatusCode::FORBIDDEN && !www_authenticate.is_empty());
        challenged.then(|| Challenge {
            status,
            www_authenticate,
            url: url.clone(),
            sent,
            attempt: u32::try_from(earlier.len()).unwrap_or(u32::MAX),
            earlier: earlier.to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_responses_are_challenges() {
        let url: Uri = "http://127.0.0.1:1/mcp".parse().unwrap();
        let mut with = HeaderMap::new();
        with.append(
            http::header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer error=\"insufficient_scope\", scope=\"a b\""),
        );
        with.append(
            http::header::WWW_AUTHENTICATE,
            HeaderValue::from_static("DPoP algs=\"ES256\""),
        );
        let without = HeaderMap::new();
        let unauthorized = Challenge::of(StatusCode::UNAUTHORIZED, &without, &url, None, &[]);
        assert!(unauthorized.is_some_and(|c| c.www_authenticate.is_empty()));
        let earlier = [vec!["Bearer".to_owned()], Vec::new()];
        let forbidden = Challenge::of(StatusCode::FORBIDDEN, &with, &url, None, &earlier).unwrap();
        assert_eq!(forbidden.www_authenticate.len(), 2);
        assert_eq!(forbidden.attempt, 2);
        assert_eq!(forbidden.earlier, earlier);
        // A 403 without a challenge (an Origin refusal) and other statuses are not.
        assert!(Challenge::of(StatusCode::FORBIDDEN, &without, &url, None, &[]).is_none());
        assert!(Challenge::of(StatusCode::BAD_REQUEST, &with, &url, None, &[]).is_none());
    }

    #[test]
    fn debug_hides_the_credential() {
        let url: Uri = "http://127.0.0.1:1/mcp".parse().unwrap();
        let challenge = Challenge::of(
            StatusCode::UNAUTHORIZED,
            &HeaderMap::new(),
            &url,
            Some(HeaderValue::from_static("Bearer s3cr3t")),
            &[],
        )
        .unwrap();
        assert!(!format!("{challenge:?}").contains("s3cr3t"));
    }
}
