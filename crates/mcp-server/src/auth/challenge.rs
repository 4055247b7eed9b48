//! What the resource server sends: `WWW-Authenticate` challenges (RFC 6750 §3, RFC 9728
//! §5.1) on `401`, `403`, `400` and `503` responses, and the protected resource metadata
//! document (RFC 9728 §3).

use bytes::Bytes;
use http::header::{
    ACCESS_CONTROL_ALLOW_ORIGIN, ALLOW, CACHE_CONTROL, CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE,
};
use http::{HeaderValue, Response, StatusCode};

/// The path prefix of protected resource metadata (RFC 9728 §3.1).
pub(super) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// One `Bearer` challenge.
#[derive(Debug, Default)]
pub(super) struct Challenge<'a> {
    /// `invalid_request`, `invalid_token` or `insufficient_scope`; none when the request
    /// carried no credentials (RFC 6750 §3.1).
    pub(super) error: Option<&'static str>,
    /// Why, for people.
    pub(super) description: Option<&'a str>,
    /// The scopes the operation needs, when known.
    pub(super) scopes: &'a [String],
}

impl Challenge<'_> {
    /// The header value: `Bearer error="…", resource_metadata="…", scope="…",
    /// error_description="…"`, each part present only when known.
    pub(super) fn header(&self, metadata_url: &str) -> HeaderValue {
        let mut value = String::from("Bearer ");
        if let Some(error) = self.error {
            push_param(&mut value, "error", error);
        }
        push_param(&mut value, "resource_metadata", metadata_url);
        if !self.scopes.is_empty() {
            push_param(&mut value, "scope", &self.scopes.join(" "));
        }
        if let Some(description) = self.description {
            // RFC 6750 §3: printable ASCII without `"` and `\`.
            let clean: String = description
                .chars()
                .map(|c| {
                    if (' '..='~').contains(&c) && c != '"' && c != '\\' {
                        c
                    } else {
                        '?'
                    }
                })
                .collect();
            push_param(&mut value, "error_description", &clean);
        }
        // Every part is visible ASCII: the metadata URL is a parsed URI, scopes are
        // checked when configured, and the description was cleaned above.
        HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static("Bearer"))
    }

    /// The response: `status` with this challenge and an OAuth error body.
    pub(super) fn response(&self, status: StatusCode, metadata_url: &str) -> Response<Bytes> {
        let body = serde_json::json!({
            "error": self.error.unwrap_or("unauthorized"),
            "error_description": self.description.unwrap_or("an access token is required"),
        });
        let mut response = json(status, body.to_string());
        response
            .headers_mut()
            .insert(WWW_AUTHENTICATE, self.header(metadata_url));
        response
    }
}

/// Appends `name="value"` (quoted-string, RFC 9110 §5.6.4), comma-separated.
fn push_param(out: &mut String, name: &str, value: &str) {
    if !out.ends_with(' ') {
        out.push_str(", ");
    }
    out.push_str(name);
    out.push_str("=\"");
    for c in value.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

/// A JSON response.
pub(super) fn json(status: StatusCode, body: String) -> Response<Bytes> {
    let mut response = Response::new(Bytes::from(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// What a `503` says, whatever the reason: the client may retry, and needs to know nothing
/// more.
pub(super) const UNAVAILABLE: &str = "access tokens cannot be verified now; retry later";

/// `503`: tokens cannot be verified now. The body says only that: the reason may name hosts,
/// addresses or library errors, which are for the server's log (the caller logs it with
/// `tracing`), never for an unauthenticated client.
pub(super) fn unavailable() -> Response<Bytes> {
    let body = serde_json::json!({
        "error": "temporarily_unavailable",
        "error_description": UNAVAILABLE,
    });
    let mut response = json(StatusCode::SERVICE_UNAVAILABLE, body.to_string());
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("5"));
    response
}

/// The metadata document, `200` to GET, `405` to anything else. Public and readable from
/// any origin: it holds nothing secret and browser-based clients fetch it.
pub(super) fn metadata(method: &http::Method, document: &Bytes) -> Response<Bytes> {
    if method != http::Method::GET && method != http::Method::HEAD {
        let mut response = Response::new(Bytes::new());
        *response.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let mut response = Response::new(if method == http::Method::HEAD {
        Bytes::new()
    } else {
        document.clone()
    });
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("max-age=300"));
    response
}

#[cfg(test)]
mod tests {
    use super::{Challenge, UNAVAILABLE, unavailable};

    #[test]
    fn a_503_body_says_only_that_tokens_cannot_be_verified_now() {
        let response = unavailable();
        assert_eq!(response.status(), 503);
        assert_eq!(response.headers()["retry-after"], "5");
        assert!(!response.headers().contains_key("www-authenticate"));
        let body: serde_json::Value = serde_json::from_slice(response.body()).unwrap();
        assert_eq!(
            body,
            serde_json::json!({
                "error": "temporarily_unavailable",
                "error_description": UNAVAILABLE,
            })
        );
    }

    #[test]
    fn challenges() {
        let url = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";
        let none = Challenge::default();
        assert_eq!(
            none.header(url),
            format!("Bearer resource_metadata=\"{url}\"")
        );
        let scopes = ["a:read".to_owned(), "a:write".to_owned()];
        let forbidden = Challenge {
            error: Some("insufficient_scope"),
            description: Some("needs \"a:write\"\n"),
            scopes: &scopes,
        };
        assert_eq!(
            forbidden.header(url),
            format!(
                "Bearer error=\"insufficient_scope\", resource_metadata=\"{url}\", \
                 scope=\"a:read a:write\", error_description=\"needs ?a:write??\""
            )
        );
    }
}
