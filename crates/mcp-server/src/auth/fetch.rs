//! The verifiers' HTTP calls to the authorization server (a JWKS GET, an introspection
//! POST), through `mcp-transport-http`'s client: bounded bodies, a deadline, no redirects
//! followed, and only `https` (plain `http` to a loopback host, for development and tests).

use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use mcp_transport_http::{HttpClient, HttpClientConfig, RawRequest};
use serde_json::Value;

/// Refuses a URL that is not `https`, except `http` to a loopback host.
pub(super) fn check_url(url: &str, what: &str) -> Result<http::Uri, crate::Error> {
    let invalid = |reason: &str| super::config_error(format!("{what} {url:?}: {reason}"));
    let uri: http::Uri = url.parse().map_err(|_| invalid("not a URL"))?;
    let host = uri.host().ok_or_else(|| invalid("no host"))?;
    match uri.scheme_str() {
        Some("https") => Ok(uri),
        Some("http") if is_loopback(host) => Ok(uri),
        Some("http") => Err(invalid("must be https (http only to a loopback host)")),
        _ => Err(invalid("must be an https URL")),
    }
}

/// `localhost`, `127.0.0.0/8` or `[::1]`.
pub(super) fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// One endpoint of the authorization server.
#[derive(Debug, Clone)]
pub(super) struct Endpoint {
    client: HttpClient,
    timeout: Duration,
}

impl Endpoint {
    /// `url`, whose replies may hold at most `max_bytes`, each call done within `timeout`.
    pub(super) fn new(
        url: &str,
        what: &str,
        max_bytes: usize,
        timeout: Duration,
    ) -> Result<Self, crate::Error> {
        check_url(url, what)?;
        let config = HttpClientConfig::default()
            .max_response_bytes(max_bytes)
            .connect_timeout(timeout);
        let client = HttpClient::new(url, config)
            .map_err(|e| super::config_error(format!("{what} {url:?}: {e}")))?;
        Ok(Endpoint { client, timeout })
    }

    /// GETs the URL and reads a JSON body.
    pub(super) async fn get_json(&self) -> Result<Value, String> {
        let request = RawRequest::new(Method::GET)
            .header(ACCEPT, HeaderValue::from_static("application/json"));
        match self.call(request).await? {
            (StatusCode::OK, body) => Ok(body),
            (status, _) => Err(format!("the server answered {status}")),
        }
    }

    /// POSTs a form and reads a JSON body, whatever the status.
    pub(super) async fn post_form(
        &self,
        form: String,
        headers: HeaderMap,
    ) -> Result<(StatusCode, Value), String> {
        let mut request = RawRequest::new(Method::POST)
            .header(
                CONTENT_TYPE,
                HeaderValue::from_static("application/x-www-form-urlencoded"),
            )
            .header(ACCEPT, HeaderValue::from_static("application/json"))
            .body(Bytes::from(form));
        for (name, value) in &headers {
            request = request.header(name.clone(), value.clone());
        }
        self.call(request).await
    }

    async fn call(&self, request: RawRequest) -> Result<(StatusCode, Value), String> {
        let exchange = async {
            let response = self.client.send(request).await.map_err(|e| e.to_string())?;
            let status = response.status();
            let body = response.bytes().await.map_err(|e| e.to_string())?;
            Ok::<_, String>((status, body))
        };
        let (status, body) = tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| format!("no answer within {:?}", self.timeout))??;
        let value = serde_json::from_slice(&body)
            .map_err(|_| format!("the server answered {status} without a JSON body"))?;
        Ok((status, value))
    }
}

/// `application/x-www-form-urlencoded` encoding of one value (the WHATWG URL standard's
/// form encoding: unreserved bytes kept, space as `+`, the rest percent-encoded).
pub(super) fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for &byte in value.as_bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(char::from(byte));
            }
            b' ' => out.push('+'),
            _ => {
                use std::fmt::Write as _;
                let _ = write!(out, "%{byte:02X}");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{check_url, form_encode, is_loopback};

    #[test]
    fn urls_and_forms() {
        assert!(check_url("https://as.example/jwks", "JWKS").is_ok());
        assert!(check_url("http://127.0.0.1:8080/jwks", "JWKS").is_ok());
        assert!(check_url("http://[::1]/jwks", "JWKS").is_ok());
        assert!(check_url("http://as.example/jwks", "JWKS").is_err());
        assert!(check_url("ftp://as.example/jwks", "JWKS").is_err());
        assert!(check_url("/jwks", "JWKS").is_err());
        assert!(is_loopback("LOCALHOST") && is_loopback("127.8.0.1") && !is_loopback("10.0.0.1"));
        assert_eq!(form_encode("a b+c/é=&"), "a+b%2Bc%2F%C3%A9%3D%26");
    }
}
