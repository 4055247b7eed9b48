//! The responses the legacy side builds, and the checks of a legacy POST's head.

use std::convert::Infallible;

use bytes::Bytes;
use http::header::{ACCEPT, ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Response, StatusCode};
use http_body_util::{Empty, Full, StreamBody};
use mcp_jsonrpc::{ErrorObject, encode_error};
use mcp_types::ErrorCode;

use super::{DualEraBody, SESSION_NOT_FOUND, X_ACCEL_BUFFERING};

/// `404` for a session that does not exist (or is another principal's): the client
/// initializes again.
pub(super) fn encode_not_found() -> Response<DualEraBody> {
    json(
        StatusCode::NOT_FOUND,
        encode_error(
            None,
            &ErrorObject::new(SESSION_NOT_FOUND, "Session not found: initialize again"),
        ),
    )
}

pub(super) fn accepts(headers: &HeaderMap, media: &str) -> bool {
    headers.get_all(ACCEPT).iter().any(|v| {
        v.to_str().is_ok_and(|v| {
            v.split(',').any(|item| {
                let item = item.split(';').next().unwrap_or_default().trim();
                item.eq_ignore_ascii_case(media) || item == "*/*"
            })
        })
    })
}

/// The legacy POST rules: a JSON body ([`refuse_body_type`]), and an `Accept` listing JSON
/// and SSE.
pub(super) fn refuse_content(headers: &HeaderMap) -> Option<Response<DualEraBody>> {
    if let Some(refused) = refuse_body_type(headers) {
        return Some(refused);
    }
    let mut accept = headers.get_all(ACCEPT).into_iter();
    // What clients send, compared as bytes before anything is split and trimmed.
    let usual = matches!(
        (accept.next().map(HeaderValue::as_bytes), accept.next()),
        (
            Some(b"application/json, text/event-stream" | b"text/event-stream, application/json"),
            None
        )
    );
    if !usual && (!accepts(headers, "application/json") || !accepts(headers, "text/event-stream")) {
        return Some(refusal(
            StatusCode::NOT_ACCEPTABLE,
            "Accept must list application/json and text/event-stream",
        ));
    }
    None
}

/// A body that is not `Content-Type: application/json`, or that is compressed: `415`.
pub(super) fn refuse_body_type(headers: &HeaderMap) -> Option<Response<DualEraBody>> {
    let json_body = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json_body {
        return Some(refusal(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the body must be Content-Type: application/json",
        ));
    }
    // Bodies are read as they are: a compressed one is refused (RFC 9110 §15.5.16), as on
    // the modern endpoint.
    let encoded = headers.get_all(CONTENT_ENCODING).iter().any(|value| {
        value.to_str().map_or(true, |value| {
            value.split(',').any(|coding| {
                let coding = coding.trim();
                !coding.is_empty() && !coding.eq_ignore_ascii_case("identity")
            })
        })
    });
    if encoded {
        let mut response = refusal(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the body must not be compressed (Content-Encoding: identity only)",
        );
        response
            .headers_mut()
            .insert(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
        return Some(response);
    }
    None
}

pub(super) fn empty(status: StatusCode) -> Response<DualEraBody> {
    let mut response = Response::new(DualEraBody::legacy(Empty::new()));
    *response.status_mut() = status;
    response
}

pub(super) fn json(status: StatusCode, body: Bytes) -> Response<DualEraBody> {
    let mut response = Response::new(DualEraBody::legacy(Full::new(body)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

pub(super) fn sse<S>(events: S) -> Response<DualEraBody>
where
    S: futures_util::Stream<Item = Result<http_body::Frame<Bytes>, Infallible>> + Send + 'static,
{
    let mut response = Response::new(DualEraBody::legacy(StreamBody::new(events)));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(X_ACCEL_BUFFERING, HeaderValue::from_static("no"));
    response
}

pub(super) fn refusal(status: StatusCode, message: &str) -> Response<DualEraBody> {
    refusal_with(status, ErrorCode::INVALID_REQUEST, message)
}

pub(super) fn refusal_with(
    status: StatusCode,
    code: ErrorCode,
    message: &str,
) -> Response<DualEraBody> {
    json(status, encode_error(None, &ErrorObject::new(code, message)))
}

pub(super) fn too_large(limit: usize) -> Response<DualEraBody> {
    refusal(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("the request body exceeds the limit of {limit} bytes"),
    )
}
