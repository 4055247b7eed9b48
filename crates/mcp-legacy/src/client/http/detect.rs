//! Era detection over HTTP, and connecting in the era found.
//!
//! Detection (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>, Backward
//! Compatibility): a modern `server/discover` POST first. A `DiscoverResult`, or a
//! recognized modern JSON-RPC error in the body (whatever the status), means modern, and the
//! plain `mcp_client` HTTP client takes over. A 400, 404 or 405 without one, or a result
//! that is not a `DiscoverResult`, means legacy: `initialize` over the legacy Streamable
//! HTTP transport (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>); if that fails with 400, 404 or
//! 405, the 2024-11-05 HTTP+SSE transport (<https://modelcontextprotocol.io/specification/2024-11-05/basic/transports>): a GET
//! whose first event, `endpoint`, names the URL the client POSTs to, with every answer on
//! the GET stream. The endpoint must be on the SSE URL's origin (the spec does not say; an
//! endpoint elsewhere is refused before anything is sent, so messages and the configured
//! headers go only where the user pointed the client), and the session ends with the
//! stream: pending and later requests then fail at once.
//!

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderValue, Method, Uri};
use mcp_client::InputHandlers;
use mcp_jsonrpc::Message;
use mcp_transport_http::{EventStream, HttpClient, HttpClientConfig, RawRequest};
use mcp_types::{Era, RequestId, method};
use serde_json::{Value, json};

use super::super::session::{Handshake, Session, Shared, is_modern_error};
use super::super::{Connector, EraChoice, Error, Transport, Verdict, handshake};
use super::{
    ACCEPT_BOTH, ACCEPT_SSE, Cursor, HttpSession, HttpWire, JSON, MCP_METHOD, PROTOCOL_VERSION,
    closed, decode_messages, http_error, lock, status_error,
};

/// A client connected over HTTP, in whichever era the server speaks.
#[derive(Debug)]
#[non_exhaustive]
pub struct HttpConnection {
    /// The client: the same API in both eras. [`Client::shutdown`](mcp_client::Client::shutdown)
    /// ends a legacy session (DELETE).
    pub client: mcp_client::Client,
    /// Which era, version and transport the server speaks.
    pub verdict: Verdict,
}

/// What the modern probe found.
enum Probe {
    Modern,
    Legacy,
}

async fn probe(
    http: &HttpClient,
    handlers: &InputHandlers,
    timeout: Duration,
) -> Result<Probe, Error> {
    let params = json!({ "_meta": super::super::modern_meta(handlers) });
    let frame = mcp_jsonrpc::encode_request(
        &RequestId::Integer(0),
        method::SERVER_DISCOVER,
        Some(&params),
    )
    .map_err(Error::Malformed)?;
    tracing::trace!(target: "mcp_wire", direction = "sent", frame = %String::from_utf8_lossy(&frame));
    let request = RawRequest::new(Method::POST)
        .header(CONTENT_TYPE, JSON)
        .header(ACCEPT, ACCEPT_BOTH)
        .header(
            PROTOCOL_VERSION,
            HeaderValue::from_static(super::super::MODERN),
        )
        .header(
            MCP_METHOD,
            HeaderValue::from_static(method::SERVER_DISCOVER),
        )
        .body(frame);
    let judged = async {
        let response = http
            .send(request)
            .await
            .map_err(|e| Error::Handshake(http_error(e)))?;
        let status = response.status();
        let messages = if response.is_event_stream() {
            let mut events = response.events();
            let mut found = Vec::new();
            while let Some(Ok(event)) = events.next().await {
                let messages = decode_messages(event.data.as_bytes());
                if messages.iter().any(|m| matches!(m, Message::Response(_))) {
                    found = messages;
                    break;
                }
            }
            found
        } else {
            decode_messages(&response.bytes().await.unwrap_or_default())
        };
        let outcome = messages.into_iter().find_map(|m| match m {
            Message::Response(r) => Some(r.outcome),
            _ => None,
        });
        match outcome {
            Some(Ok(result)) if status.is_success() => {
                let result: Value = serde_json::from_str(result.get()).unwrap_or_default();
                Ok(
                    if result.get("supportedVersions").is_some_and(Value::is_array) {
                        Probe::Modern
                    } else {
                        Probe::Legacy
                    },
                )
            }
            Some(Err(error)) if is_modern_error(&error) => Ok(Probe::Modern),
            _ if status.is_success() || matches!(status.as_u16(), 400 | 404 | 405) => {
                Ok(Probe::Legacy)
            }
            _ => Err(Error::Handshake(status_error(status, None))),
        }
    };
    tokio::time::timeout(timeout, judged)
        .await
        .unwrap_or_else(|_| {
            Err(Error::Handshake(mcp_client::Error::Timeout {
                method: method::SERVER_DISCOVER.to_owned(),
                after: timeout,
            }))
        })
}

/// The 2024-11-05 HTTP+SSE transport: GET the endpoint; the first event, `endpoint`,
/// names the URL to POST to. Returns that URL and the stream, already past that event.
async fn open_sse_endpoint(
    http: &HttpClient,
    timeout: Duration,
) -> Result<(Uri, EventStream), Error> {
    let opened = async {
        let response = http
            .send(RawRequest::new(Method::GET).header(ACCEPT, ACCEPT_SSE))
            .await
            .map_err(|e| Error::Handshake(http_error(e)))?;
        if !response.status().is_success() || !response.is_event_stream() {
            return Err(Error::Handshake(status_error(response.status(), None)));
        }
        let mut events = response.events();
        while let Some(event) = events.next().await {
            let event = event.map_err(|e| Error::Handshake(http_error(e)))?;
            if event.event == "endpoint" {
                let url = resolve(http.url(), event.data.trim()).ok_or_else(|| {
                    Error::Handshake(closed("the endpoint event names no usable URL"))
                })?;
                // Messages (and the configured headers, credentials among them) go to the
                // origin the user named, never to one the server names.
                let base = http.url();
                if url.scheme() != base.scheme() || url.authority() != base.authority() {
                    return Err(Error::Handshake(http_error(
                        mcp_transport_http::Error::Url {
                            url: url.to_string(),
                            reason: "the endpoint event names another origin",
                        },
                    )));
                }
                return Ok((url, events));
            }
        }
        Err(Error::Handshake(closed(
            "the SSE stream ended before its endpoint event",
        )))
    };
    tokio::time::timeout(timeout, opened)
        .await
        .unwrap_or_else(|_| {
            Err(Error::Handshake(mcp_client::Error::Timeout {
                method: "GET (HTTP+SSE endpoint)".to_owned(),
                after: timeout,
            }))
        })
}

/// Resolves the `endpoint` event's URI reference against the SSE URL (an absolute URL
/// elsewhere is refused by [`open_sse_endpoint`]).
fn resolve(base: &Uri, reference: &str) -> Option<Uri> {
    if reference.contains("://") {
        return reference.parse().ok();
    }
    let mut parts = base.clone().into_parts();
    let path_and_query = if reference.starts_with('/') {
        reference.to_owned()
    } else {
        let base_path = base.path();
        let dir = base_path.rsplit_once('/').map_or("", |(dir, _)| dir);
        format!("{dir}/{reference}")
    };
    parts.path_and_query = Some(path_and_query.parse().ok()?);
    Uri::from_parts(parts).ok()
}

/// Opens a legacy session: Streamable HTTP, else (400/404/405) HTTP+SSE; then
/// `notifications/initialized`.
async fn open_legacy(
    http: &HttpClient,
    shared: &Arc<Shared>,
    connector: &Connector,
) -> Result<(Arc<HttpWire>, Transport, Handshake), Error> {
    let handlers = &shared.handlers;
    let wire = HttpWire::new(http.clone(), Arc::clone(shared), None, connector);
    let (wire, transport, found) = match handshake(
        &wire,
        handlers,
        &connector.legacy_offer,
        connector.probe_timeout,
    )
    .await
    {
        Ok(found) => (wire, Transport::StreamableHttp, found),
        Err(Error::Handshake(mcp_client::Error::Http(mcp_transport_http::Error::Status {
            status,
            ..
        }))) if matches!(status.as_u16(), 400 | 404 | 405) => {
            // The 2024-11-05 HTTP+SSE transport.
            let (post_url, events) = open_sse_endpoint(http, connector.probe_timeout).await?;
            let wire = HttpWire::new(http.clone(), Arc::clone(shared), Some(post_url), connector);
            let reader = Arc::clone(&wire);
            let task = tokio::spawn(async move {
                let mut events = events;
                let mut cursor = Cursor::default();
                let _ = reader.read_events(&mut events, None, &mut cursor).await;
                // The stream is the session: without it no answer can arrive.
                reader.closed.store(true, Ordering::SeqCst);
                reader.shared.ended.cancel();
                lock(&reader.pending).clear();
            });
            *lock(&wire.get_stream) = Some(task);
            let found = match handshake(
                &wire,
                handlers,
                &connector.legacy_offer,
                connector.probe_timeout,
            )
            .await
            {
                Ok(found) => found,
                Err(e) => {
                    // No session: the stream (and its reader) must not outlive the attempt.
                    wire.end();
                    return Err(e);
                }
            };
            (wire, Transport::HttpSse, found)
        }
        Err(e) => return Err(e),
    };
    if let Err(e) = wire.initialized(&found).await {
        wire.end();
        return Err(Error::Handshake(e));
    }
    Ok((wire, transport, found))
}

pub(in crate::client) async fn connect(
    connector: Connector,
    url: &str,
    config: HttpClientConfig,
) -> Result<HttpConnection, Error> {
    let handlers = connector.builder.input_handlers();
    let http = HttpClient::new(url, config.clone()).map_err(|e| Error::Handshake(http_error(e)))?;
    // A verdict remembered for this URL spares the probe; if it fails, it is forgotten
    // and the server probed again.
    let mut cached = match connector.choice {
        EraChoice::Detect => connector.verdicts.as_ref().and_then(|v| v.get(url)),
        _ => None,
    };
    let shared = Shared::new(handlers.clone());
    let (wire, transport, found) = loop {
        let era = match (connector.pinned_era(), cached) {
            (Some(era), _) | (None, Some(era)) => era,
            (None, None) => match probe(&http, &handlers, connector.probe_timeout).await? {
                Probe::Modern => Era::Modern,
                Probe::Legacy => Era::Legacy,
            },
        };
        if era != Era::Legacy {
            let client = connector
                .builder
                .connect_http(url, config)
                .map_err(Error::Handshake)?;
            if let Some(verdicts) = &connector.verdicts {
                verdicts.put(url, Era::Modern);
            }
            let version = client.protocol_version();
            return Ok(HttpConnection {
                client,
                verdict: Verdict {
                    era: Era::Modern,
                    version,
                    transport: Transport::StreamableHttp,
                },
            });
        }
        match open_legacy(&http, &shared, &connector).await {
            Ok(opened) => break opened,
            Err(e) if cached.is_some() => {
                tracing::debug!(error = %e, "a remembered legacy verdict failed; probing again");
                if let Some(verdicts) = &connector.verdicts {
                    verdicts.forget(url);
                }
                cached = None;
            }
            Err(e) => return Err(e),
        }
    };
    if let Some(verdicts) = &connector.verdicts {
        verdicts.put(url, Era::Legacy);
        *lock(&wire.forget_on_failure) = Some((verdicts.clone(), url.to_owned()));
    }
    let handshake = Arc::new(Mutex::new(found));
    *lock(&wire.handshake) = Some(Arc::clone(&handshake));
    let verdict = Verdict {
        era: Era::Legacy,
        version: lock(&handshake).version.clone(),
        transport,
    };
    let session = Session {
        wire: Arc::new(HttpSession(wire)),
        shared,
        handshake,
    };
    Ok(HttpConnection {
        client: connector.builder.connect_custom(Arc::new(session)),
        verdict,
    })
}

#[cfg(test)]
mod tests {
    use super::resolve;

    #[test]
    fn endpoint_references_resolve_against_the_sse_url() {
        let base: http::Uri = "http://127.0.0.1:8000/sse".parse().unwrap();
        let cases = [
            (
                "/messages/?session_id=1",
                "http://127.0.0.1:8000/messages/?session_id=1",
            ),
            ("messages?x=1", "http://127.0.0.1:8000/messages?x=1"),
            ("http://127.0.0.1:8000/m", "http://127.0.0.1:8000/m"),
        ];
        for (reference, expected) in cases {
            assert_eq!(resolve(&base, reference).unwrap().to_string(), expected);
        }
    }
}
