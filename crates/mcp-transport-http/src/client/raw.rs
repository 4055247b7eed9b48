//! Raw HTTP exchanges with the endpoint's origin: a seam for protocol layers that need more
//! than "one POST per request" (`mcp-legacy`'s sessions, GET streams, `Last-Event-ID`
//! resumption, DELETE and the 2024-11-05 HTTP+SSE transport). Era-neutral: this module
//! knows no MCP header and no revision; the caller sets every header it needs.
//!
//! The same policy as [`HttpClient::request`] holds: the configured headers are sent,
//! redirects are not followed ([`Error::Redirect`]), and only the endpoint's own origin can
//! be reached, so credentials never leave it. Bounds: [`RawResponse::bytes`] reads at most
//! `max_response_bytes`; an [`EventStream`] holds at most `max_event_bytes` per event and is
//! not bounded in total, since a long-lived stream (a GET stream) carries any number of
//! events.

use super::pool::Body;
use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use http_body_util::BodyExt as _;

use super::sse::{SseEvent, SseParser};
use super::{HttpClient, Limits, Outgoing, redirect};
use crate::error::Error;
use crate::headers;

/// One HTTP request to the endpoint or another URL of its origin.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RawRequest {
    /// The HTTP method.
    pub method: Method,
    /// The URL, if not the endpoint's own (it must have the endpoint's scheme and
    /// authority).
    pub url: Option<Uri>,
    /// Headers added after the configured ones (replacing any of the same name).
    pub headers: HeaderMap,
    /// The body (none for GET and DELETE).
    pub body: Option<Bytes>,
}

impl RawRequest {
    /// A request with `method` to the endpoint, with no extra header and no body.
    pub fn new(method: Method) -> Self {
        RawRequest {
            method,
            url: None,
            headers: HeaderMap::new(),
            body: None,
        }
    }

    /// Sets a header.
    #[must_use]
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.insert(name, value);
        self
    }

    /// Sets the body.
    #[must_use]
    pub fn body(mut self, body: Bytes) -> Self {
        self.body = Some(body);
        self
    }

    /// Sends the request to `url` instead of the endpoint (same origin only).
    #[must_use]
    pub fn url(mut self, url: Uri) -> Self {
        self.url = Some(url);
        self
    }
}

/// The reply to a [`RawRequest`]: its status and headers, with the body still to read.
/// Dropping it closes the connection if the body was not read to its end.
#[derive(Debug)]
pub struct RawResponse {
    status: StatusCode,
    headers: HeaderMap,
    body: Body,
    limits: Limits,
}

impl RawResponse {
    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The response headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// Whether the body is `application/json`.
    pub fn is_json(&self) -> bool {
        headers::is_json_content(&self.headers)
    }

    /// Whether the body is `text/event-stream`.
    pub fn is_event_stream(&self) -> bool {
        headers::is_sse_content(&self.headers)
    }

    /// Reads the whole body, at most `max_response_bytes` ([`Error::BodyTooLarge`]
    /// past it, counted while reading).
    pub async fn bytes(self) -> Result<Bytes, Error> {
        super::stream::read_body(self.body, self.limits.body).await
    }

    /// Reads the body as server-sent events.
    pub fn events(self) -> EventStream {
        EventStream {
            body: self.body,
            parser: Box::new(SseParser::raw(self.limits.event)),
            limit: self.limits.event,
            done: false,
        }
    }
}

/// The events of a `text/event-stream` body, each whole ([`SseEvent`]: name, data, last
/// event id, retry), read as they arrive.
#[derive(Debug)]
pub struct EventStream {
    body: Body,
    parser: Box<SseParser>,
    limit: usize,
    done: bool,
}

impl EventStream {
    /// The next event; `None` once the stream has ended. An error ends the stream
    /// ([`Error::EventTooLarge`] past `max_event_bytes`, [`Error::Body`] for a broken
    /// connection).
    ///
    /// Cancel safety: dropping the future loses no event; a partly read one stays
    /// buffered for the next call.
    pub async fn next(&mut self) -> Option<Result<SseEvent, Error>> {
        loop {
            if let Some(event) = self.parser.next_raw() {
                return Some(Ok(event));
            }
            if self.done {
                return None;
            }
            let Some(frame) = self.body.frame().await else {
                self.done = true;
                continue;
            };
            let data = match frame {
                Ok(frame) => match frame.into_data() {
                    Ok(data) => data,
                    Err(_) => continue, // Trailers.
                },
                Err(e) => {
                    self.done = true;
                    return Some(Err(Error::Body(e)));
                }
            };
            if self.parser.feed(&data).is_err() {
                self.done = true;
                return Some(Err(Error::EventTooLarge { limit: self.limit }));
            }
        }
    }
}

impl HttpClient {
    /// Sends one raw request (see the [`RawRequest`] policy) and returns once the reply's
    /// head has arrived. A redirect is [`Error::Redirect`], and an authorization challenge
    /// the [`Authorizer`](crate::Authorizer) could not answer is [`Error::Unauthorized`];
    /// every other status is the caller's to judge.
    ///
    /// Cancel safety: dropping the future, or the [`RawResponse`] before its body is read,
    /// closes the connection.
    pub async fn send(&self, request: RawRequest) -> Result<RawResponse, Error> {
        let uri = match request.url {
            Some(url) => {
                if url.scheme() != self.url.scheme() || url.authority() != self.url.authority() {
                    return Err(Error::Url {
                        url: url.to_string(),
                        reason: "not the endpoint's origin",
                    });
                }
                Some(url)
            }
            None => None,
        };
        let uri = uri.as_ref().unwrap_or(&self.url);
        let mut map = self.headers.clone();
        for (name, value) in &request.headers {
            map.insert(name.clone(), value.clone());
        }
        let response = self
            .execute(
                &Outgoing {
                    method: request.method,
                    headers: map,
                    fields: None,
                    body: request.body.unwrap_or_default(),
                },
                uri,
            )
            .await?;
        let super::pool::Answer {
            status,
            headers,
            body,
        } = response;
        if status.is_redirection() {
            return Err(redirect(status, &headers));
        }
        Ok(RawResponse {
            status,
            headers,
            body,
            limits: self.limits,
        })
    }
}

#[cfg(test)]
mod tests {
    use http::Method;

    use super::RawRequest;
    use crate::{Error, HttpClient, HttpClientConfig};

    #[tokio::test]
    async fn only_the_endpoints_origin_is_reached() {
        let client =
            HttpClient::new("http://127.0.0.1:1/mcp", HttpClientConfig::default()).unwrap();
        for elsewhere in [
            "http://127.0.0.2:1/mcp",
            "http://127.0.0.1:2/mcp",
            "https://127.0.0.1:1/mcp",
        ] {
            let request = RawRequest::new(Method::GET).url(elsewhere.parse().unwrap());
            let err = client.send(request).await.unwrap_err();
            assert!(matches!(err, Error::Url { .. }), "{elsewhere}: {err}");
        }
        // The same origin is tried (and fails to connect: nothing listens on port 1).
        let request = RawRequest::new(Method::GET).url("http://127.0.0.1:1/other".parse().unwrap());
        assert!(client.send(request).await.unwrap_err().is_connect());
    }
}
