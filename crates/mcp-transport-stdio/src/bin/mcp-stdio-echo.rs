//! A stdio server built on the engine, for this crate's tests and benchmarks.
//!
//! Methods: `echo` answers with its params; `log` writes to stderr (directly and through
//! `tracing`), sends a `notifications/message` to the client, then answers `{}`; `sleep`
//! waits `params.ms` milliseconds (or until cancelled) and answers whether it was cancelled;
//! `streams` answers whether stdin and stdout are driven as non-blocking pipes
//! (`{"stdinPipe": bool, "stdoutPipe": bool}`); anything else is -32601. It exits when stdin closes. Its stdout carries nothing but
//! protocol messages: the test that captures it proves the engine and transport keep it so.
//!
//! When stdin closes, requests still running get the engine's `eof_grace` (1 s) before they
//! are cancelled; `MCP_STDIO_ECHO_EOF_GRACE_MS` sets another, so that a test can tell a
//! request that was cancelled before from one that sat out the grace by whole seconds.

use std::time::Duration;

use mcp_jsonrpc::{ErrorObject, Handler, PeerConfig, Request, RequestContext};
use serde_json::value::RawValue;

struct Echo {
    /// Whether stdin and stdout are non-blocking pipes on the reactor.
    pipes: (bool, bool),
}

fn raw(value: &serde_json::Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).unwrap_or_default()
}

impl Handler for Echo {
    async fn request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        match request.method.as_str() {
            "echo" => match request.params {
                Some(params) => params.into_raw_value().map_err(|e| e.to_error_object()),
                None => Ok(raw(&serde_json::Value::Null)),
            },
            "log" => {
                eprintln!("log: writing to stderr, never stdout");
                tracing::warn!("a tracing event, which must not reach stdout either");
                let message = serde_json::json!({"level": "info", "data": "hello from the server"});
                cx.notify("notifications/message", Some(&message))
                    .await
                    .map_err(|e| ErrorObject::internal(e.to_string()))?;
                Ok(raw(&serde_json::json!({})))
            }
            "sleep" => {
                let ms = request
                    .params
                    .as_ref()
                    .and_then(|p| serde_json::from_str::<serde_json::Value>(p.text()).ok())
                    .and_then(|p| p["ms"].as_u64())
                    .unwrap_or(0);
                let cancelled = tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(ms)) => false,
                    () = cx.cancellation().cancelled() => true,
                };
                Ok(raw(&serde_json::json!({"cancelled": cancelled})))
            }
            "streams" => Ok(raw(&serde_json::json!({
                "stdinPipe": self.pipes.0,
                "stdoutPipe": self.pipes.1,
            }))),
            other => Err(ErrorObject::method_not_found(other)),
        }
    }
}

fn main() {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            std::process::exit(1);
        }
    };
    runtime.block_on(async {
        let mut config = PeerConfig::default();
        config.eof_grace = std::env::var("MCP_STDIO_ECHO_EOF_GRACE_MS")
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map_or(Duration::from_secs(1), Duration::from_millis);
        let (reader, writer) = mcp_transport_stdio::stdio();
        let pipes = (reader.get_ref().is_pipe(), writer.get_ref().is_pipe());
        let (_peer, connection) =
            mcp_jsonrpc::Peer::connect(reader, writer, Echo { pipes }, config);
        connection.closed().await;
    });
}
