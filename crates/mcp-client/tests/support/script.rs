//! A scripted server behind the real stdio line framing: the client reads through
//! `mcp_transport_stdio::LineReader` (with a chosen line limit) over an in-process pipe, or
//! through a child process's stdout relayed from a socket ([`Script::new`] over any byte
//! stream), and the test writes whatever bytes it likes on the server's end.

use std::ops::{Deref, DerefMut};
use std::time::Duration;

use mcp_client::{Client, ClientBuilder};
use mcp_test_support::JsonLines;
pub(crate) use mcp_test_support::response;
use mcp_transport_stdio::{LineReader, LineWriter};
use serde_json::Value;
use tokio::io::split;
use tokio::io::{AsyncRead, AsyncWrite};

/// The server's end of the pipe: the shared line-framed end, with what a scripted server
/// adds (requests, replies, the probe).
pub(crate) struct Script(JsonLines);

impl Deref for Script {
    type Target = JsonLines;

    fn deref(&self) -> &JsonLines {
        &self.0
    }
}

impl DerefMut for Script {
    fn deref_mut(&mut self) -> &mut JsonLines {
        &mut self.0
    }
}

/// A client built by `builder` over the line framing with `max_line`, configured as a
/// stdio client is (`mcp_transport_stdio::client_config`: malformed lines are logged, not
/// answered), and the server's end of its pipe.
pub(crate) fn connect_lines(
    builder: ClientBuilder,
    max_line: usize,
) -> (Client, Script, mcp_jsonrpc::Connection) {
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let (read, write) = split(client_end);
    let (client, connection) = builder.connect(
        LineReader::with_max_line(read, max_line),
        LineWriter::new(write),
        mcp_transport_stdio::client_config(),
    );
    let (read, write) = split(server_end);
    (client, Script::new(read, write), connection)
}

/// [`connect_lines`] with the default line limit.
pub(crate) fn connect(builder: ClientBuilder) -> (Client, Script, mcp_jsonrpc::Connection) {
    connect_lines(builder, mcp_transport_stdio::DEFAULT_MAX_LINE)
}

impl Script {
    /// The server's end over `read` (what the client writes) and `write` (what it reads).
    /// A line is awaited at most a minute (of tokio's clock): a safety net, not a test of
    /// time.
    pub(crate) fn new(
        read: impl AsyncRead + Send + Unpin + 'static,
        write: impl AsyncWrite + Send + Unpin + 'static,
    ) -> Self {
        Script(JsonLines::new(
            read,
            write,
            Duration::from_mins(1),
            "the client",
        ))
    }

    /// The next message the client sends (a request, or an answer to the server's own).
    pub(crate) async fn request(&mut self) -> Value {
        self.message().await
    }

    /// Answers `to` with the members of `body` (`result` or `error`).
    pub(crate) async fn reply(&mut self, to: &Value, body: Value) {
        self.send(&response(to, body)).await;
    }

    /// Answers `to` with `result`.
    pub(crate) async fn reply_result(&mut self, to: &Value, result: Value) {
        self.reply(to, serde_json::json!({ "result": result }))
            .await;
    }

    /// The probe after a hostile case: a `tools/list` on the same connection,
    /// answered with the line `valid` makes of it, succeeds with no tools, and is the very
    /// next thing the client sends. `name` names the case in a failure.
    pub(crate) async fn probe(
        &mut self,
        client: &Client,
        name: &str,
        valid: impl FnOnce(&Value) -> Vec<u8>,
    ) {
        let call = tokio::spawn({
            let client = client.clone();
            async move { client.list_tools(None).await }
        });
        let request = self.request().await;
        assert_eq!(
            request["method"], "tools/list",
            "{name}: the probe: {request}"
        );
        self.line(&valid(&request)).await;
        let listed = call.await.unwrap();
        assert!(
            listed.is_ok_and(|r| r.tools.is_empty()),
            "{name}: the probe after it must succeed"
        );
    }
}
