//! The client over Streamable HTTP (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>).
//!
//! Each request is its own POST: the client allocates the id, sends the MCP headers
//! (`Mcp-Name`, and `Mcp-Param-*` for the arguments the tool's `x-mcp-header` annotations
//! name), and reads the reply (JSON, or an SSE stream whose notifications arrive while the
//! call runs). Dropping the call closes the stream, which is how HTTP cancels.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_jsonrpc::{Message, ProgressCallback, RawResult};
use mcp_transport_http::{HttpClient, PreparedHeaders, Reply, RequestHeaders};
use mcp_types::{
    JsonObject, McpParamHeader, ProgressNotificationParams, ProgressToken, RequestId, method,
};
use serde_json::Value;
use tokio::time::Instant;

use crate::error::Error;
use crate::wire::Plain;

/// How a request waits: its timeout (reset by progress), hard maximum and progress hook.
pub(crate) struct Wait {
    pub(crate) timeout: Duration,
    pub(crate) max: Duration,
    pub(crate) progress: Option<(ProgressToken, ProgressCallback)>,
}

/// The HTTP side of a client.
pub(crate) struct HttpTransport {
    client: HttpClient,
    next_id: AtomicI64,
    /// The `x-mcp-header` annotations of the tools listed so far, by tool name.
    headers: Mutex<HashMap<String, Vec<McpParamHeader>>>,
    /// The headers of the last `tools/call` of a tool without annotations, sent again by
    /// the next call of that tool under the same version (see `headers_routed`).
    last_routed: Mutex<Option<Arc<Routed>>>,
}

/// Headers sent again, with their fields made once.
struct Routed {
    headers: RequestHeaders,
    prepared: PreparedHeaders,
}

/// A request's headers: made for it, or the same as an earlier request's (their fields
/// made already).
enum Headers {
    Owned(RequestHeaders),
    Again(Arc<Routed>),
}

impl std::borrow::Borrow<RequestHeaders> for Headers {
    fn borrow(&self) -> &RequestHeaders {
        match self {
            Headers::Owned(headers) => headers,
            Headers::Again(routed) => &routed.headers,
        }
    }
}

impl Headers {
    /// The header fields, made by `client` unless they were made already.
    fn prepare(&self, client: &HttpClient) -> Result<PreparedHeaders, Error> {
        match self {
            Headers::Owned(headers) => client.prepare(headers).map_err(Error::from),
            Headers::Again(routed) => Ok(routed.prepared.clone()),
        }
    }
}

impl std::fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpTransport")
            .field("url", self.client.url())
            .finish_non_exhaustive()
    }
}

fn at_path<'v>(value: &'v Value, path: &[String]) -> Option<&'v Value> {
    path.iter().try_fold(value, |v, key| v.get(key))
}

/// [`at_path`] in an object (a tool's arguments as the caller gave them). The paths of
/// `x-mcp-header` annotations name at least one property, so an empty one finds nothing.
fn at_path_in<'v>(object: &'v JsonObject, path: &[String]) -> Option<&'v Value> {
    let (first, rest) = path.split_first()?;
    at_path(object.get(first)?, rest)
}

/// What the `Mcp-Name` and `Mcp-Param-*` headers of a `tools/call` are made of, when the
/// caller has them at hand: then the params are written straight into the frame, without
/// a `serde_json::Value` of them first.
#[derive(Clone, Copy)]
pub(crate) struct Routing<'a> {
    pub(crate) name: &'a str,
    pub(crate) arguments: Option<&'a JsonObject>,
}

impl HttpTransport {
    pub(crate) fn new(client: HttpClient) -> Self {
        HttpTransport {
            client,
            next_id: AtomicI64::new(1),
            headers: Mutex::new(HashMap::new()),
            last_routed: Mutex::new(None),
        }
    }

    /// Records the listed tools' annotations and keeps only the tools whose annotations
    /// are valid (the spec requires a client to drop the others).
    pub(crate) fn admit_tools(&self, tools: Vec<mcp_types::Tool>) -> Vec<mcp_types::Tool> {
        let mut headers = self.headers.lock().unwrap_or_else(PoisonError::into_inner);
        // A tool sent again with its last headers may now have annotations.
        *self
            .last_routed
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = None;
        tools
            .into_iter()
            .filter(|tool| {
                let schema = serde_json::to_value(&tool.input_schema).unwrap_or_default();
                let Some(object) = schema.as_object() else { return false };
                match mcp_types::mcp_param_headers(object) {
                    Ok(found) => {
                        headers.insert(tool.name.clone(), found);
                        true
                    }
                    Err(reason) => {
                        tracing::warn!(tool = %tool.name, %reason, "dropping a tool with an invalid x-mcp-header annotation");
                        false
                    }
                }
            })
            .collect()
    }

    /// The headers of a `tools/call` from its name and arguments (see [`Routing`]); the
    /// same as [`headers_for`](Self::headers_for) makes of the params. Without
    /// annotations for the tool they are `Mcp-Name` and the method's and version's alone,
    /// and the last such headers are sent again when they are the same.
    fn headers_routed(&self, version: &str, method: &str, routing: Routing<'_>) -> Headers {
        // The last headers first: they are a tool's without annotations (and forgotten when
        // tools are listed again), so the same call again needs no look-up by name.
        let same = |routed: &Routed| {
            let headers = &routed.headers;
            headers.protocol_version == version
                && headers.method == method
                && headers.name.as_deref() == Some(routing.name)
                && headers.params.is_empty()
        };
        if let Some(routed) = self
            .last_routed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .filter(|routed| same(routed))
        {
            return Headers::Again(Arc::clone(routed));
        }
        if method == method::TOOLS_CALL
            && let Some(arguments) = routing.arguments
        {
            let known = self.headers.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(annotated) = known.get(routing.name).filter(|found| !found.is_empty()) {
                let mut headers = RequestHeaders::new(version, method).name(routing.name);
                for header in annotated {
                    if let Some(value) =
                        at_path_in(arguments, &header.path).filter(|v| !v.is_null())
                    {
                        headers = headers.param(header.header.clone(), value.clone());
                    }
                }
                return Headers::Owned(headers);
            }
        }
        let headers = RequestHeaders::new(version, method).name(routing.name);
        // Headers that cannot be sent are not kept: the request fails on them.
        let Ok(prepared) = self.client.prepare(&headers) else {
            return Headers::Owned(headers);
        };
        let routed = Arc::new(Routed { headers, prepared });
        *self
            .last_routed
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&routed));
        Headers::Again(routed)
    }

    fn headers_for(&self, version: &str, method: &str, params: &Value) -> RequestHeaders {
        let mut headers = RequestHeaders::new(version, method);
        let name = match method {
            method::TOOLS_CALL | method::PROMPTS_GET => params.get("name"),
            method::RESOURCES_READ => params.get("uri"),
            // The Tasks extension's routing header: `Mcp-Name` is the task id.
            mcp_types::tasks::method::TASKS_GET
            | mcp_types::tasks::method::TASKS_UPDATE
            | mcp_types::tasks::method::TASKS_CANCEL => params.get(mcp_types::tasks::NAME_FIELD),
            _ => None,
        };
        if let Some(name) = name.and_then(Value::as_str) {
            headers = headers.name(name);
        }
        if method == method::TOOLS_CALL
            && let Some(tool) = name.and_then(Value::as_str)
            && let Some(arguments) = params.get("arguments")
        {
            let known = self.headers.lock().unwrap_or_else(PoisonError::into_inner);
            for header in known.get(tool).into_iter().flatten() {
                if let Some(value) = at_path(arguments, &header.path).filter(|v| !v.is_null()) {
                    headers = headers.param(header.header.clone(), value.clone());
                }
            }
        }
        headers
    }

    /// POSTs one request and reads its reply, handing notifications to `on_notification`.
    pub(crate) async fn request<P: crate::wire::WireParams>(
        &self,
        version: &str,
        method: &str,
        params: &P,
        routing: Option<Routing<'_>>,
        wait: Wait,
        mut on_notification: impl FnMut(mcp_jsonrpc::Notification),
    ) -> Result<RawResult, Error> {
        let failed = |source| Error::Decode {
            method: method.to_owned(),
            source,
        };
        let id = RequestId::Integer(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (mut frame, prepared) = if let Some(routing) = routing {
            (
                crate::wire::encode_request(&id, method, params).map_err(failed)?,
                self.headers_routed(version, method, routing)
                    .prepare(&self.client)?,
            )
        } else {
            let params = serde_json::to_value(params).map_err(failed)?;
            (
                crate::wire::encode_request(&id, method, &Plain(&params)).map_err(failed)?,
                Headers::Owned(self.headers_for(version, method, &params)).prepare(&self.client)?,
            )
        };
        tracing::trace!(target: "mcp_wire", direction = "sent", frame = %String::from_utf8_lossy(&frame));
        let started = Instant::now();
        let hard = started + wait.max;
        // One deadline for the whole call, moved on by progress: the reply's head and each
        // message after it are awaited against it.
        let mut deadline =
            std::pin::pin!(tokio::time::sleep_until((started + wait.timeout).min(hard)));
        let timed_out = || Error::Timeout {
            method: method.to_owned(),
            after: started.elapsed(),
        };
        // Its length as its capacity (in place: the allocator shrinks the block it is in),
        // so that `Bytes` takes the buffer over without allocating a count for it.
        frame.shrink_to_fit();
        let sending = std::pin::pin!(self.client.request_prepared(frame.into(), &prepared));
        let mut stream = before(&mut deadline, sending)
            .await
            .ok_or_else(timed_out)?
            .map_err(Error::from)?;
        loop {
            let next = before(&mut deadline, std::pin::pin!(stream.next_reply()))
                .await
                .ok_or_else(timed_out)?;
            if let Some(Ok(reply)) = &next {
                trace_received(reply);
            }
            let message = match next {
                // The usual answer: a successful response, its result for the caller's parse.
                Some(Ok(Reply::Result(answered, result))) => {
                    return if answered == id {
                        Ok(result)
                    } else {
                        Err(Error::UnexpectedResponse {
                            method: method.to_owned(),
                            id: Some(answered),
                        })
                    };
                }
                Some(Ok(Reply::Message(message))) => message,
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Err(Error::from(e)),
                None => {
                    return Err(Error::Transport(mcp_jsonrpc::Error::Closed(Some(
                        "the response stream ended without a response".to_owned(),
                    ))));
                }
            };
            match message {
                Message::Response(response) => {
                    return match response.id {
                        Some(answered) if answered == id => response
                            .outcome
                            .map(RawResult::from)
                            .map_err(Error::Protocol),
                        // An error the server could not tie to an id is this request's: the
                        // stream carries nothing else (JSON-RPC gives such errors a null id).
                        None if response.outcome.is_err() => response
                            .outcome
                            .map(RawResult::from)
                            .map_err(Error::Protocol),
                        // This stream is the request's alone, so a response to another id
                        // (or to the same number as a string) cannot be a late answer to
                        // something else, as it can on stdio: the server is broken.
                        answered => Err(Error::UnexpectedResponse {
                            method: method.to_owned(),
                            id: answered,
                        }),
                    };
                }
                Message::Notification(notification) => {
                    if notification.method == method::NOTIFICATIONS_PROGRESS
                        && let Some((token, callback)) = &wait.progress
                        && let Some(progress) = notification.params.as_deref().and_then(|p| {
                            serde_json::from_str::<ProgressNotificationParams>(p.get()).ok()
                        })
                        && progress.progress_token == *token
                    {
                        callback(&progress);
                        deadline
                            .as_mut()
                            .reset((Instant::now() + wait.timeout).min(hard));
                        continue;
                    }
                    on_notification(notification);
                }
                _ => {}
            }
        }
    }
}

/// `future`'s output, or `None` if `deadline` passes first (`future` is polled first, so
/// one ready at once is never late). The future is pinned by the caller, so that it is
/// kept in one place (an `async fn` taking it by value held it twice).
fn before<'a, F: std::future::Future>(
    deadline: &'a mut std::pin::Pin<&mut tokio::time::Sleep>,
    mut future: std::pin::Pin<&'a mut F>,
) -> impl std::future::Future<Output = Option<F::Output>> + 'a {
    std::future::poll_fn(move |cx| {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(cx) {
            return std::task::Poll::Ready(Some(output));
        }
        deadline.as_mut().poll(cx).map(|()| None)
    })
}

/// A received message as a `trace` event under `mcp_wire`, re-encoded only when that
/// level is on (the HTTP client hands over messages already decoded).
fn trace_received(reply: &Reply) {
    if !tracing::enabled!(target: "mcp_wire", tracing::Level::TRACE) {
        return;
    }
    let frame = match reply {
        Reply::Result(id, result) => {
            let id = serde_json::to_string(id).unwrap_or_default();
            let result = result.text();
            tracing::trace!(target: "mcp_wire", direction = "received", frame = %format_args!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#));
            return;
        }
        Reply::Message(Message::Response(response)) => match &response.outcome {
            Ok(result) => response
                .id
                .as_ref()
                .and_then(|id| mcp_jsonrpc::encode_result(id, result).ok()),
            Err(error) => Some(mcp_jsonrpc::encode_error(response.id.as_ref(), error)),
        },
        Reply::Message(Message::Notification(n)) => {
            mcp_jsonrpc::encode_notification(&n.method, n.params.as_deref()).ok()
        }
        _ => None,
    };
    if let Some(frame) = frame {
        tracing::trace!(target: "mcp_wire", direction = "received", frame = %String::from_utf8_lossy(&frame));
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Borrow as _;

    use super::*;

    /// A transport to an address nothing is asked of.
    fn transport() -> HttpTransport {
        let client = HttpClient::new(
            "http://127.0.0.1:1/mcp",
            mcp_transport_http::HttpClientConfig::default(),
        )
        .unwrap();
        HttpTransport::new(client)
    }

    #[test]
    fn routed_headers_are_made_or_sent_again_as_they_would_be_made() {
        let http = transport();
        http.headers.lock().unwrap().insert(
            "sql".to_owned(),
            vec![McpParamHeader {
                header: "Region".to_owned(),
                path: vec!["region".to_owned()],
            }],
        );
        http.headers
            .lock()
            .unwrap()
            .insert("plain".to_owned(), Vec::new());
        let mut arguments = JsonObject::new();
        arguments.insert("region".to_owned(), Value::from("eu"));
        let empty = JsonObject::new();
        let calls = [
            ("2026-07-28", method::TOOLS_CALL, "echo", Some(&arguments)),
            ("2026-07-28", method::TOOLS_CALL, "echo", Some(&arguments)),
            ("2026-07-28", method::TOOLS_CALL, "echo", None),
            ("2025-11-25", method::TOOLS_CALL, "echo", Some(&arguments)),
            ("2026-07-28", method::TOOLS_CALL, "sql", Some(&arguments)),
            ("2026-07-28", method::TOOLS_CALL, "sql", Some(&empty)),
            ("2026-07-28", method::TOOLS_CALL, "sql", Some(&arguments)),
            ("2026-07-28", method::TOOLS_CALL, "plain", Some(&arguments)),
            ("2026-07-28", method::TOOLS_CALL, "echo", Some(&arguments)),
            ("2026-07-28", method::PROMPTS_GET, "echo", None),
            ("2026-07-28", method::TOOLS_CALL, "echo", Some(&arguments)),
        ];
        for (version, method, name, arguments) in calls {
            let routing = Routing { name, arguments };
            let got = http.headers_routed(version, method, routing);
            // What the params' own headers are.
            let mut params = serde_json::json!({ "name": name });
            if let Some(arguments) = arguments {
                params["arguments"] = Value::Object(arguments.clone());
            }
            let expected = http.headers_for(version, method, &params);
            let got: &RequestHeaders = got.borrow();
            if method == method::TOOLS_CALL {
                assert_eq!(*got, expected, "{version} {name} {arguments:?}");
            } else {
                // `headers_for` names only the methods it knows; the routed name stays.
                assert_eq!(got.name.as_deref(), Some(name));
            }
        }
        // The region's header, from the annotation.
        assert_eq!(
            call_params(&http, "sql", &arguments),
            [("Region".to_owned(), Value::from("eu"))]
        );
    }

    /// The parameter headers of a 2026-07-28 `tools/call` of `name` with `arguments`.
    fn call_params(
        http: &HttpTransport,
        name: &str,
        arguments: &JsonObject,
    ) -> Vec<(String, Value)> {
        let headers = http.headers_routed(
            "2026-07-28",
            method::TOOLS_CALL,
            Routing {
                name,
                arguments: Some(arguments),
            },
        );
        let headers: &RequestHeaders = headers.borrow();
        headers.params.clone()
    }

    /// Headers sent again for a tool without annotations are forgotten when the tools are
    /// listed again: the tool may have annotations now.
    #[test]
    fn a_listing_forgets_the_headers_sent_again() {
        let http = transport();
        let mut arguments = JsonObject::new();
        arguments.insert("region".to_owned(), Value::from("eu"));
        let call = |http: &HttpTransport| call_params(http, "late", &arguments);
        assert!(call(&http).is_empty());
        assert!(
            call(&http).is_empty(),
            "sent again, still without annotations"
        );
        let schema: mcp_types::ToolInputSchema = serde_json::from_value(serde_json::json!({
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}
        }))
        .unwrap();
        let admitted = http.admit_tools(vec![mcp_types::Tool::new(schema, "late")]);
        assert_eq!(admitted.len(), 1);
        assert_eq!(call(&http), [("Region".to_owned(), Value::from("eu"))]);
    }

    #[test]
    fn arguments_are_found_by_their_property_path() {
        let args = serde_json::json!({"a": {"b": 3}, "c": null});
        assert_eq!(
            at_path(&args, &["a".into(), "b".into()]),
            Some(&serde_json::json!(3))
        );
        assert_eq!(at_path(&args, &["a".into(), "x".into()]), None);
        assert_eq!(
            at_path(&args, &["c".into()]),
            Some(&serde_json::Value::Null)
        );
        let object = args.as_object().unwrap();
        assert_eq!(
            at_path_in(object, &["a".into(), "b".into()]),
            Some(&serde_json::json!(3))
        );
        assert_eq!(at_path_in(object, &["a".into(), "x".into()]), None);
        assert_eq!(at_path_in(object, &[]), None);
    }
}
