//! The client over Streamable HTTP (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>).
//!
//! Each request is its own POST: the client allocates the id, sends the MCP headers
//! (`Mcp-Name`, and `Mcp-Param-*` for the arguments the tool's `x-mcp-header` annotations
//! name), and reads the reply (JSON, or an SSE stream whose notifications arrive while the
//! call runs). Dropping the call closes the stream, which is how HTTP cancels.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use mcp_jsonrpc::{Message, ProgressCallback, RawResult};
use mcp_transport_http::{HttpClient, Reply, RequestHeaders};
use mcp_types::{McpParamHeader, ProgressNotificationParams, ProgressToken, RequestId, method};
use serde_json::Value;
use tokio::time::Instant;

use crate::error::Error;

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

impl HttpTransport {
    pub(crate) fn new(client: HttpClient) -> Self {
        HttpTransport {
            client,
            next_id: AtomicI64::new(1),
            headers: Mutex::new(HashMap::new()),
        }
    }

    /// Records the listed tools' annotations and keeps only the tools whose annotations
    /// are valid (the spec requires a client to drop the others).
    pub(crate) fn admit_tools(&self, tools: Vec<mcp_types::Tool>) -> Vec<mcp_types::Tool> {
        let mut headers = self.headers.lock().unwrap_or_else(PoisonError::into_inner);
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
    pub(crate) async fn request<P: serde::Serialize + ?Sized>(
        &self,
        version: &str,
        method: &str,
        params: &P,
        wait: Wait,
        mut on_notification: impl FnMut(mcp_jsonrpc::Notification),
    ) -> Result<RawResult, Error> {
        let failed = |source| Error::Decode {
            method: method.to_owned(),
            source,
        };
        let id = RequestId::Integer(self.next_id.fetch_add(1, Ordering::Relaxed));
        let params = serde_json::to_value(params).map_err(failed)?;
        let mut frame = crate::wire::encode_request(&id, method, &params).map_err(failed)?;
        let prepared = self
            .client
            .prepare(&self.headers_for(version, method, &params))
            .map_err(Error::from)?;
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

    /// A `tools/call` is named in `Mcp-Name`, and the arguments its tool's `x-mcp-header`
    /// annotations name (as listed) are sent in `Mcp-Param-*`.
    #[test]
    fn tool_calls_send_their_name_and_annotated_arguments() {
        let http = transport();
        let schema = |properties: Value| -> mcp_types::ToolInputSchema {
            serde_json::from_value(serde_json::json!({
                "type": "object",
                "properties": properties,
            }))
            .unwrap()
        };
        let annotated = schema(serde_json::json!({
            "region": {"type": "string", "x-mcp-header": "Region"}
        }));
        let plain = schema(serde_json::json!({"region": {"type": "string"}}));
        let admitted = http.admit_tools(vec![
            mcp_types::Tool::new(annotated, "sql"),
            mcp_types::Tool::new(plain, "plain"),
        ]);
        assert_eq!(admitted.len(), 2);
        let headers = |name: &str, arguments: Value| {
            let params = serde_json::json!({"name": name, "arguments": arguments});
            http.headers_for("2026-07-28", method::TOOLS_CALL, &params)
        };
        let sql = headers("sql", serde_json::json!({"region": "eu"}));
        assert_eq!(sql.name.as_deref(), Some("sql"));
        assert_eq!(sql.params, [("Region".to_owned(), Value::from("eu"))]);
        // An annotated argument that is absent or null is not sent.
        for arguments in [serde_json::json!({}), serde_json::json!({"region": null})] {
            let sql = headers("sql", arguments);
            assert_eq!(sql.name.as_deref(), Some("sql"));
            assert!(sql.params.is_empty());
        }
        // A tool without annotations, or not listed: its name alone.
        for name in ["plain", "echo"] {
            let call = headers(name, serde_json::json!({"region": "eu"}));
            assert_eq!(call.name.as_deref(), Some(name));
            assert!(call.params.is_empty(), "{name}");
        }
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
    }
}
