//! A scripted server behind the real stdio line framing: the client reads through
//! `mcp_transport_stdio::LineReader` (with a chosen line limit) over an in-process pipe, or
//! through a child process's stdout relayed from a socket ([`Script::new`] over any byte
//! stream), and the test writes whatever bytes it likes on the server's end.

use std::time::Duration;

use mcp_client::{Client, ClientBuilder};
use mcp_transport_stdio::{LineReader, LineWriter};
use serde_json::{Value, json};
use tokio::io::split;
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};

/// The server's end of the pipe.
pub(crate) struct Script {
    lines: BufReader<Box<dyn AsyncRead + Send + Unpin>>,
    writer: Box<dyn AsyncWrite + Send + Unpin>,
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
    pub(crate) fn new(
        read: impl AsyncRead + Send + Unpin + 'static,
        write: impl AsyncWrite + Send + Unpin + 'static,
    ) -> Self {
        Script {
            lines: BufReader::new(Box::new(read)),
            writer: Box::new(write),
        }
    }

    /// The next message the client sends, as JSON; `None` once the client closed the pipe.
    /// Waits at most a minute (of tokio's clock): a safety net, not a test of time.
    pub(crate) async fn next(&mut self) -> Option<Value> {
        let mut line = String::new();
        let read = tokio::time::timeout(Duration::from_mins(1), self.lines.read_line(&mut line))
            .await
            .expect("the client must write in time")
            .unwrap();
        if read == 0 {
            return None;
        }
        assert!(line.ends_with('\n'), "every frame is one whole line");
        Some(serde_json::from_str(&line).expect("the client writes only JSON"))
    }

    /// The next message the client sends (a request, or an answer to the server's own).
    pub(crate) async fn request(&mut self) -> Value {
        self.next().await.expect("the client keeps the pipe open")
    }

    /// Writes `bytes` as they are.
    pub(crate) async fn write(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.unwrap();
        self.writer.flush().await.unwrap();
    }

    /// Ends the server's output (end of stream for the client): shuts the writer down and
    /// drops it.
    pub(crate) async fn close(&mut self) {
        self.writer.shutdown().await.unwrap();
        self.writer = Box::new(tokio::io::sink());
    }

    /// Writes `bytes` and a newline.
    pub(crate) async fn line(&mut self, bytes: &[u8]) {
        self.write(&[bytes, b"\n"].concat()).await;
    }

    /// Writes one message.
    pub(crate) async fn send(&mut self, message: &Value) {
        self.line(message.to_string().as_bytes()).await;
    }

    /// Answers `to` with the members of `body` (`result` or `error`).
    pub(crate) async fn reply(&mut self, to: &Value, body: Value) {
        self.send(&response(to, body)).await;
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

/// The response to `to` made of the members of `body` (`result` or `error`).
pub(crate) fn response(to: &Value, body: Value) -> Value {
    let mut message = json!({"jsonrpc": "2.0", "id": to["id"]});
    if let (Some(message), Value::Object(body)) = (message.as_object_mut(), body) {
        message.extend(body);
    }
    message
}
